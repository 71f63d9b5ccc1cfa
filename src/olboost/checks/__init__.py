"""The estimator check suite every olboost estimator passes, in the spirit of River's ``checks``.

:func:`yield_checks` gives the checks that apply to an estimator (boosters and committees have
different contracts); :func:`all_estimators` discovers every public estimator class of the package,
and each class's ``_unit_test_params`` gives the constructor arguments to check it with. The test
suite runs every check on every discovered estimator, so a new estimator is checked as soon as it is
exported.

Checks cover: purity (inputs, dicts and arrays, and, for scoring, the model itself are left
untouched, by one row or a matrix, fresh or after learning, and by a top-k booster's
``estimated_costs``; a prediction kept for the next example is of that example; a committee's
``predict`` and ``learn`` too, at several stages of growth), pickling (a pickled model resumes
and ends identical to an uninterrupted one, on vectors and on dicts, every learned attribute
and prediction included), seeding (same seed, same results bit for bit; another seed, other
results, and for a top-k booster other draws), bad input (rejected before any state changes:
wrong lengths, types, labels, a dict to a model of unnamed features, a huge feature value, a
missing value where the model takes none, the feedback on another model's impression; a
committee's ``predict`` and ``learn``), bad parameters (every parameter declares a constraint,
and each rejects values outside it, naming the parameter, at construction and when changed
before the first example), clone (the parameters copied, never shared; a committee's clone with
attributes goes on as the original, apart from it), the array path (it scores and learns as the
one-example path does, and ``learn`` ends where scoring and learning does), the input forms
(dict key order does not matter; a pandas Series row learns as its dict, or on pandas' default
index as its vector), and the predictions (their shape, and ``predict_one`` as the cut of the
ranking), and names (:mod:`._names`: class
and label names of every kind, bools apart from 0 and 1, tuples, NumPy scalars, keep their
identity on every path, the array paths and the protocols over a data set ending where the
one-example path does); for the exploration schemes, their
draws (permutations, pure functions of the seed, round and key, a pickled copy drawing alike,
the ranking untouched), their exact pair probabilities (symmetric, the diagonal summing to
``k``) and bad input. Each check runs on a deep copy of the model it is given.
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import inspect
import io
import math
import pickle
import pkgutil
import warnings
from collections.abc import Callable, Iterator

import numpy as np

from olboost.base import Estimator, InstanceOf, Interval, OneOf, Range

__all__ = ["all_estimators", "yield_checks", "synthetic_multilabel"]


def synthetic_multilabel(
    n: int = 80, d: int = 6, k: int = 4, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A small seeded multi-label stream: label ``j`` is relevant when a fixed linear score is
    positive. Some rows have no relevant label, as real data can."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, k))
    Y = (X @ W + 0.3 * rng.normal(size=(n, k))) > 0.5
    return X, Y


def all_estimators() -> list[type[Estimator]]:
    """Every concrete public estimator class defined in the olboost package."""
    import olboost

    found: dict[str, type[Estimator]] = {}
    for info in pkgutil.walk_packages(olboost.__path__, "olboost."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        if info.name.startswith("olboost.checks") or info.name.endswith(".cli"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, Estimator)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
                and _is_concrete(obj)
            ):
                found[f"{obj.__module__}.{name}"] = obj
    return [found[key] for key in sorted(found)]


def _is_concrete(cls: type) -> bool:
    from olboost.boosters.base import Booster, MulticlassBooster, RankingBooster
    from olboost.feedback.exploration import Exploration
    from olboost.weak.base import Committee

    if cls in (Estimator, Booster, RankingBooster, MulticlassBooster, Committee):
        return False
    if cls.__init__ is object.__init__:  # a base class, e.g. TopkBooster
        return False
    if issubclass(cls, Exploration):
        return "_scheme" in vars(cls)
    if issubclass(cls, Booster):
        return bool({"_update", "_step_kernels"} & _defined(cls))
    if issubclass(cls, Committee):
        return "learn" in _defined(cls)
    from olboost.online import OnlineLearner

    if issubclass(cls, OnlineLearner):  # a learner that is no booster, e.g. LabelRanker
        return cls.__module__ != "olboost.online.learner"
    return False


def _defined(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("olboost.") and klass.__name__ not in (
            "Booster",
            "RankingBooster",
            "MulticlassBooster",
            "Committee",
            "Estimator",
        ):
            names.update(vars(klass))
    return names


def _on_a_copy(check: Callable[[Estimator], None]) -> Callable[[Estimator], None]:
    """``check`` run on a deep copy of the model it is given, as River's ``check_estimator``
    runs each check: the checks learn, and set bad parameters, on the model they get, and the
    next check on the same object then failed for what the one before had left."""

    @functools.wraps(check)
    def run(model: Estimator) -> None:
        check(copy.deepcopy(model))

    return run


def yield_checks(model: Estimator) -> Iterator[Callable[[Estimator], None]]:
    """The checks that apply to ``model``, each of which runs on a deep copy of the model it is
    given (the model itself is left as it was)."""
    for check in _checks(model):
        yield _on_a_copy(check)


def _checks(model: Estimator) -> Iterator[Callable[[Estimator], None]]:
    from olboost.boosters.base import Booster
    from olboost.feedback.exploration import Exploration
    from olboost.online import RankingLearner
    from olboost.weak.base import Committee

    yield check_clone_params
    yield check_repr
    yield check_bad_params
    yield check_unknown_params
    if isinstance(model, Booster | RankingLearner):  # boosters and other ranking learners
        yield check_booster_scores
        yield check_booster_purity
        yield check_booster_pickling
        if isinstance(model, Booster) or model._is_stochastic:
            yield check_booster_seeding
        yield check_booster_bad_input
        yield check_booster_feature_order
        yield check_booster_clone_learns_alike
        yield check_booster_set_params_goes_on_as_pickle
        yield check_booster_array_path
        from olboost.checks import _names

        yield _names.check_booster_bools_apart
        if importlib.util.find_spec("pandas") is not None:  # they build DataFrames
            yield _names.check_booster_tuple_names
            yield _names.check_booster_own_objects
            yield _names.check_booster_names_array_path
            yield _names.check_booster_names_frames_and_arrays
            yield check_booster_series_rows
    elif isinstance(model, Committee):
        yield check_committee_predictions
        yield check_committee_purity
        yield check_committee_pickling
        yield check_committee_clone_with_attributes
        yield check_committee_seeding
        yield check_committee_bad_input
    elif isinstance(model, Exploration):
        yield check_exploration_draws
        yield check_exploration_probabilities
        yield check_exploration_bad_input


# ------------------------------------------------------------------------------ all estimators


def check_clone_params(model: Estimator) -> None:
    """A clone has the same parameters, no learned state, and no parameter object of the
    original's (a shared committee would take a ``set_params`` on the clone into the original)."""
    clone = model.clone()
    assert type(clone) is type(model)
    assert repr(clone) == repr(model), "clone must keep every parameter"
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(clone)), (
        "a clone must hold no learned state"
    )
    for name, value in model._get_params().items():
        if isinstance(value, Estimator | list | dict | set | np.ndarray):
            assert getattr(clone, name) is not value, f"a clone must copy the parameter {name}"


def check_repr(model: Estimator) -> None:
    text = repr(model)
    assert text.startswith(type(model).__name__ + "(")
    for name in model._param_names():
        assert f"{name}=" in text


def _bad_values(constraint: Interval, finite: bool) -> list[object]:
    """Values an ``Interval`` constraint must reject: just outside each end, NaN, a string and,
    if ``finite``, the infinities."""
    out: list[object] = ["1"]
    step = 1 if constraint.integer else 1.0
    # a step of 1 is lost on an end such as 1e100: the next float beyond it then
    if constraint.lo is not None and math.isfinite(constraint.lo):
        lo = constraint.lo
        if constraint.closed in ("both", "left"):
            lo = lo - step if lo - step != lo else math.nextafter(lo, -math.inf)
        out.append(lo)
    if constraint.hi is not None and math.isfinite(constraint.hi):
        hi = constraint.hi
        if constraint.closed in ("both", "right"):
            hi = hi + step if hi + step != hi else math.nextafter(hi, math.inf)
        out.append(hi)
    if not constraint.integer:
        out.append(math.nan)
        if finite:
            out += [math.inf, -math.inf]
    return out


class _NoParameter:
    """A value no parameter takes: of no type a constraint names, in no set of options."""

    def __repr__(self) -> str:
        return "_NoParameter()"


def _bad_values_of(constraint: object, current: object, finite: bool) -> list[object]:
    """Values ``constraint`` must reject (``current`` is the parameter's valid value): those of
    :func:`_bad_values` for an interval, for a ``(low, high)`` range those at either end, a
    reversed pair and no pair, and for options or types a value of none of them."""
    if isinstance(constraint, Interval):
        return _bad_values(constraint, finite)
    if isinstance(constraint, Range):
        out: list[object] = ["1", (1.0,), (1.0, 1.0, 1.0)]
        for bad in _bad_values(constraint.bounds, finite):
            if not isinstance(bad, str):
                out += [(bad, bad)]
        if isinstance(current, tuple | list) and len(current) == 2 and current[0] < current[1]:
            out.append((current[1], current[0]))
        return out
    if isinstance(constraint, OneOf | InstanceOf):
        return [_NoParameter(), "no such option"] + ([None] if current is not None else [])
    return [_NoParameter()]  # a constraint of its own kind: at least a value of no kind


def check_unknown_params(model: Estimator) -> None:
    """A constructor call that fits no signature (a misspelt keyword, one positional argument
    too many) raises a ``TypeError`` that names the estimator's class, not the class it took its
    ``__init__`` from, and for a misspelt keyword the parameter meant."""
    cls = type(model)
    for name in model._param_names():
        try:
            cls(**{name + "x": getattr(model, name)})
        except TypeError as err:
            message = str(err)
            assert message.startswith(f"{cls.__name__}() "), message
            assert f"did you mean {name!r}?" in message, message
        else:
            raise AssertionError(f"{cls.__name__}({name}x=...) must raise")
    try:
        cls(*[None] * (len(model._param_names()) + 1))
    except TypeError as err:
        assert str(err).startswith(f"{cls.__name__}() too many positional"), str(err)
    else:
        raise AssertionError(f"{cls.__name__} must refuse more positional arguments than it has")


def check_bad_params(model: Estimator) -> None:
    """Every parameter rejects values outside its range (intervals, and a learner's float
    parameters the infinities; ``(low, high)`` ranges; options; types) at construction, naming
    it; a learner also rejects a parameter changed to a bad value after construction (a
    negative seed) at its first example, unchanged."""
    from olboost.online import OnlineLearner

    learner = isinstance(model, OnlineLearner)
    params = set(model._param_names())
    # a parameter without a constraint is checked by nothing here, nor at construction
    undeclared = sorted(params - set(model._param_constraints))
    assert not undeclared, f"{type(model).__name__} declares no constraint for {undeclared}"
    for name, constraint in model._param_constraints.items():
        if name not in params:
            continue
        current = getattr(model, name)
        for value in _bad_values_of(constraint, current, finite=learner):
            if isinstance(constraint, InstanceOf) and constraint.allow_none and value is None:
                continue
            if isinstance(constraint, OneOf) and value in constraint.options:
                continue
            if isinstance(constraint, InstanceOf) and isinstance(value, constraint.types):
                continue
            try:
                model.clone({name: value})
            except (ValueError, TypeError) as err:
                assert f".{name}" in str(err), f"the error for {name}={value!r} must name it"
            else:
                raise AssertionError(f"{type(model).__name__}({name}={value!r}) must raise")
    if not (learner and "seed" in params):
        return
    model = _with_labels(model)
    X, ys = _stream(model, 2)
    model.seed = -1
    before = pickle.dumps(model)
    for _ in range(2):  # the same clear error again: nothing half started
        try:
            model.learn_one(X[0], ys[0])
        except ValueError as err:
            assert ".seed" in str(err), "a negative seed must be reported naming it"
        else:
            raise AssertionError("learn_one must reject a negative seed set after construction")
        assert pickle.dumps(model) == before, "a rejected start changed the model"


# ------------------------------------------------------------------------------ boosters


def _is_ranker(model: Estimator) -> bool:
    from olboost.online import RankingLearner

    return isinstance(model, RankingLearner)


def _stream(model: Estimator, n: int = 60) -> tuple[np.ndarray, list]:
    """A seeded stream of targets the booster understands: label sets for a ranker, classes
    (the most relevant synthetic label of each row) for a multiclass booster."""
    X, Y = synthetic_multilabel(n=n, k=_n_outputs(model))
    if hasattr(model, "_unit_test_features"):  # a learner that takes only some feature values
        X = model._unit_test_features(X)
    outputs = model._outputs()
    if _is_ranker(model):
        return X, [{outputs[j] for j in np.flatnonzero(row)} for row in Y]
    rng = np.random.default_rng(1)
    W = rng.normal(size=(X.shape[1], len(outputs)))
    return X, [outputs[j] for j in np.argmax(X @ W, axis=1)]


def _n_outputs(model: Estimator) -> int:
    value = getattr(model, model._outputs_param)
    if value is None:
        return 4
    return value if isinstance(value, int) else len(value)


def _with_labels(model: Estimator) -> Estimator:
    param = model._outputs_param
    return model if getattr(model, param) is not None else model.clone({param: 4})


def _predict_vector(model: Estimator, x: object) -> list[float]:
    if _is_ranker(model):
        return list(model.score_one(x).values())
    return list(model.predict_proba_one(x).values())


def _scores_after(model: Estimator, X: np.ndarray, ys: list) -> np.ndarray:
    out = []
    for x, y in zip(X, ys, strict=True):
        out.append(_predict_vector(model, x))
        model.learn_one(x, y)
    return np.asarray(out)


def check_booster_scores(model: Estimator) -> None:
    model = _with_labels(model)
    X, ys = _stream(model)
    scores = _scores_after(model, X, ys)
    assert np.isfinite(scores).all()
    if _is_ranker(model):
        assert not np.all(scores == 0), "a booster that learned 60 examples must produce scores"
        ranking = model.rank_one(X[0])
        s = model.score_one(X[0])
        assert sorted(ranking, key=str) == sorted(s, key=str)
        if hasattr(model, "show_one"):
            # a top-k booster ranks by its scores unless the round's draw explores
            impression = model.show_one(X[0])
            assert list(impression.ranking) == ranking
            assert list(impression.labels) == ranking[: model.k]
            if impression.explored:
                return
        assert all(s[a] >= s[b] for a, b in zip(ranking, ranking[1:], strict=False))
        # predict_one cuts the ranking by the scores: as many labels as the rank cut (the top-k
        # boosters: k), none scored below one left out
        predicted = model.predict_one(X[0])
        assert set(predicted) == set(s) and all(isinstance(v, bool) for v in predicted.values())
        chosen = [label for label, v in predicted.items() if v]
        assert len(chosen) == model._n_predicted(len(s)), "predict_one must cut at the rank cut"
        others = [s[label] for label, v in predicted.items() if not v]
        assert not others or min(s[label] for label in chosen) >= max(others), (
            "predict_one must give the top-scored labels"
        )
    else:
        assert (scores >= 0).all() and np.allclose(scores.sum(axis=1), 1.0), (
            "predict_proba_one must give a distribution over the classes"
        )
        proba = model.predict_proba_one(X[0])
        assert model.predict_one(X[0]) == max(proba, key=proba.get)


def check_booster_purity(model: Estimator) -> None:
    model = _with_labels(model)
    X, ys = _stream(model, 20)
    x = {f"f{j}": float(v) for j, v in enumerate(X[0])}
    x_copy, y_copy = dict(x), copy.deepcopy(ys[0])
    vectors = model.clone()  # a model started on dicts takes dicts only: the vector path apart
    model.learn_one(x, ys[0])
    assert x == x_copy and ys[0] == y_copy, "learn_one must not modify its inputs"
    xv = X[0].copy()
    vectors.learn_one(xv, ys[0])
    assert np.array_equal(xv, X[0]), "learn_one must not modify a NumPy x"
    for m, xq in ((model, x), (vectors, xv)):
        before = pickle.dumps(m)
        _predict_vector(m, xq)
        if _is_ranker(m):
            m.rank_one(xq)
        m.predict_one(xq)
        assert pickle.dumps(m) == before, "predicting must not change the model"
    assert x == x_copy and np.array_equal(xv, X[0]), "predicting must not modify x"
    # a model that has learned more, predicting for other rows: a prediction kept for the next
    # learn_one must be of the x it learns (scoring one row, then learning another, learns as
    # learning that row alone), and predicting a matrix changes nothing and agrees row by row
    for x_row, y_row in zip(X[1:12], ys[1:12], strict=True):
        vectors.learn_one(x_row, y_row)
    alone = copy.deepcopy(vectors)
    for i in range(12, 16):
        _predict_vector(vectors, X[i])
        vectors.learn_one(X[i + 4], ys[i + 4])
        alone.learn_one(X[i + 4], ys[i + 4])
    assert pickle.dumps(vectors) == pickle.dumps(alone), (
        "predicting for one x, then learning another, must learn as learning it alone"
    )
    if hasattr(vectors, "estimated_costs"):
        # what the weak learners would get from a feedback, without learning it
        impression = vectors.show_one(X[16])
        feedback = impression.feedback(set(impression.labels[:1]))
        before = pickle.dumps(vectors)
        vectors.estimated_costs(X[16], feedback)
        assert pickle.dumps(vectors) == before, "estimated_costs must not change the model"
    before = pickle.dumps(vectors)
    rows = vectors.score(X) if _is_ranker(vectors) else vectors.votes(X)
    assert pickle.dumps(vectors) == before, "predicting a matrix must not change the model"
    one = [
        list(vectors.score_one(x_row).values())
        if _is_ranker(vectors)
        else vectors.votes(x_row[None, :])[0]
        for x_row in X
    ]
    assert np.array_equal(rows, np.asarray(one)), "a matrix must be predicted row by row alike"


def _state_bytes(model: Estimator) -> bytes:
    """``model`` pickled without pickle's memo: equal states give equal bytes however their
    objects are shared (an unpickled model shares a string or an array where the model it was
    pickled from had two equal ones, and ``pickle.dumps`` writes a reference for the second)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(model)
    return out.getvalue()


def _learned(model: Estimator) -> dict:
    """The learned attributes of ``model`` (public names ending in ``_``; caches are private)."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


def check_booster_pickling(model: Estimator) -> None:
    """A model pickled mid-stream resumes and ends as the uninterrupted one: the same scores
    on the way, the same state and the same predictions at the end (what scores leave out
    included: label counts and the rank cut, the names of a model started on dicts)."""
    model = _with_labels(model)
    if "seed" in model._param_names() and model.seed is None:
        model = model.clone({"seed": 5})  # an unseeded model draws its seed when it starts
    X, ys = _stream(model)
    names = [f"f{j}" for j in range(X.shape[1])]
    for rows in (list(X), [dict(zip(names, x.tolist(), strict=True)) for x in X]):
        start = model.clone()
        straight = copy.deepcopy(start)
        full = _scores_after(straight, rows, ys)
        first = _scores_after(start, rows[:30], ys[:30])
        resumed = pickle.loads(pickle.dumps(start))
        rest = _scores_after(resumed, rows[30:], ys[30:])
        assert np.array_equal(np.vstack([first, rest]), full), "a pickled model must resume"
        assert _state_bytes(resumed) == _state_bytes(straight), "a resumed model must end alike"
        # the learned attributes themselves, past what __getstate__ writes: one it dropped
        # restarts from nothing in the resumed model
        assert _state_bytes(_learned(resumed)) == _state_bytes(_learned(straight)), (
            "a resumed model must keep every learned attribute"
        )
        for x in rows[:5]:
            assert resumed.predict_one(x) == straight.predict_one(x), (
                "a resumed model must predict as the uninterrupted one"
            )
            if _is_ranker(model):
                assert resumed.rank_one(x) == straight.rank_one(x)


def check_booster_seeding(model: Estimator) -> None:
    model = _with_labels(model)
    X, ys = _stream(model)
    a = _scores_after(model.clone({"seed": 11}), X, ys)
    b = _scores_after(model.clone({"seed": 11}), X, ys)
    assert np.array_equal(a, b), "same seed, same data must give identical scores"
    c = _scores_after(model.clone({"seed": 12}), X, ys)
    assert not np.array_equal(a, c), "the seed must matter for a stochastic model"
    if hasattr(model, "show_one"):
        # the draws themselves, not only the committee the seed also drew: which of 200 shows
        # explore, a function of the seed, the round and the key alone (at rho = 0.2 each show
        # explores with probability rho, the scores aside: two seeds' patterns are equal by
        # chance with a probability of (1 - 2 rho (1 - rho))^200, below 1e-33)
        from olboost.feedback.exploration import Exploration

        explore = model.exploration
        scheme = explore.clone({"rho": 0.2}) if isinstance(explore, Exploration) else explore
        rho = None if isinstance(explore, Exploration) else 0.2
        patterns = []
        for seed in (11, 12):
            fitted = model.clone({"seed": seed, "exploration": scheme, "rho": rho})
            _scores_after(fitted, X[:20], ys[:20])
            patterns.append([fitted.show_one(X[0], key=key).explored for key in range(200)])
        assert patterns[0] != patterns[1], "another seed must draw other rankings"


def check_booster_bad_input(model: Estimator) -> None:
    model = _with_labels(model)
    X, ys = _stream(model, 10)
    for x, y in zip(X, ys, strict=True):
        model.learn_one(x, y)
    outputs = model._outputs()
    before = pickle.dumps(model)
    nan, huge, inf = X[0].copy(), X[0].copy(), X[0].copy()
    nan[1] = np.nan
    huge[1] = 1e160  # finite, but its square overflows the trees' Gaussian statistics
    inf[1] = -np.inf
    bad_cases = [
        (X[0][:-1], ys[0], ValueError),  # wrong length
        (np.append(X[0], 1.0), ys[0], ValueError),
        # a matrix as one example, as many rows as the model has features: not 1-D
        (np.tile(X[0], (len(X[0]), 1)), ys[0], ValueError),
        (huge, ys[0], ValueError),
        (inf, ys[0], ValueError),
        ("abc", ys[0], TypeError),
        # NumPy's float64 conversion would read these as numbers (the imaginary part dropped
        # with a warning): features are real numbers, whatever the container
        (X[0].astype(str), ys[0], TypeError),
        (X[0] + 1j, ys[0], TypeError),
        (X[0].astype(np.complex128), ys[0], TypeError),
        ([*X[0][:-1].tolist(), "1.0"], ys[0], TypeError),
        # and would count dates and durations in their unit
        (np.zeros(len(X[0]), dtype="datetime64[D]"), ys[0], TypeError),
        ([*X[0][:-1].tolist(), np.timedelta64(1, "s")], ys[0], TypeError),
    ]
    if not model._missing_allowed():
        bad_cases.append((nan, ys[0], ValueError))
    # a dict to a model started on vectors: its features have no names to read the keys by
    bad_cases.append(({f"f{j}": float(v) for j, v in enumerate(X[0])}, ys[0], TypeError))
    if hasattr(model, "show_one"):
        # the feedback on what a model of other labels showed: refused, as from another model
        other = model.clone({model._outputs_param: len(outputs) + 1})
        other.learn_one(X[0], set())
        bad_cases.append((X[1], other.show_one(X[1]).feedback(set()), ValueError))
    if _is_ranker(model):
        bad_cases += [
            (X[0], {"no such label"}, ValueError),
            (X[0], list(ys[0]), TypeError),  # y must be a set
            (X[0], outputs[0], TypeError),
        ]
        from olboost.feedback import Feedback, FullFeedback

        if not issubclass(Feedback, model._feedback_types):
            # a feedback kind the booster does not learn from (e.g. partial feedback given to a
            # full-feedback booster), rejected before t_ moves or anything starts
            class _OtherFeedback(Feedback):
                pass

            bad_cases.append((X[0], _OtherFeedback(), TypeError))
        if FullFeedback in model._feedback_types:
            wrong = FullFeedback(np.zeros(len(outputs) + 1, dtype=np.bool_))
            bad_cases.append((X[0], wrong, ValueError))  # over another number of labels
    else:
        bad_cases += [(X[0], "no such class", ValueError), (X[0], [outputs[0]], ValueError)]
    for x, y, err in bad_cases:
        try:
            model.learn_one(x, y)
        except err:
            pass
        else:
            raise AssertionError(f"learn_one({x!r}, {y!r}) must raise {err.__name__}")
        assert pickle.dumps(model) == before, f"a rejected example ({x!r}, {y!r}) changed the model"
    X_huge = X[:3].copy()
    X_huge[1, 0] = -1e160
    try:
        if _is_ranker(model):
            model.learn(X_huge, np.zeros((3, len(outputs)), dtype=bool))
        else:
            model.learn(X_huge, [outputs[0]] * 3)
    except ValueError as err:
        assert "row 1, feature 0" in str(err), "a huge value must be reported by row and column"
    else:
        raise AssertionError("learn must reject a huge feature value")
    assert pickle.dumps(model) == before, "a rejected matrix changed the model"
    # nor does a row of a matrix start a model (of one feature per row of it)
    fresh = model.clone()
    unstarted = pickle.dumps(fresh)
    try:
        fresh.learn_one(X[:1], ys[0])
    except ValueError:
        pass
    else:
        raise AssertionError("learn_one must reject a 2-D x as the first example")
    assert pickle.dumps(fresh) == unstarted, "a rejected first example started the model"
    from scipy import sparse

    Y3 = np.zeros((3, len(outputs)), dtype=bool) if _is_ranker(model) else [outputs[0]] * 3
    for X_bad in (X[:3] + 1j, sparse.csr_matrix(X[:3] + 0j), X[:3].astype(str)):
        try:
            model.learn(X_bad, Y3)
        except TypeError as err:
            assert "real numbers" in str(err), f"unclear error for a non-real matrix: {err}"
        else:
            raise AssertionError(f"learn must reject a matrix of dtype {X_bad.dtype}")
        assert pickle.dumps(model) == before, "a rejected matrix changed the model"
    if "learners" not in model._param_names():
        return
    try:
        model.clone({"learners": 0})
    except ValueError:
        pass
    else:
        raise AssertionError("learners=0 must raise ValueError")
    # the started committee and per-learner state keep their size: a new number is refused
    try:
        model.set_params(learners=model.learners + 1)
    except ValueError:
        pass
    else:
        raise AssertionError("set_params(learners=...) on a started model must raise ValueError")
    assert pickle.dumps(model) == before, "a refused set_params changed the model"
    model.set_params(learners=model.learners)  # the same number is no change


def check_booster_feature_order(model: Estimator) -> None:
    model = _with_labels(model)
    X, ys = _stream(model, 30)
    names = [f"f{j}" for j in range(X.shape[1])]
    a, b = model.clone(), model.clone()
    rng = np.random.default_rng(0)
    for x, y in zip(X, ys, strict=True):
        a.learn_one(dict(zip(names, x, strict=True)), y)
        order = rng.permutation(len(names))
        b.learn_one({names[j]: x[j] for j in order}, y)
    xq = dict(zip(names, X[0], strict=True))
    shuffled = {k: xq[k] for k in reversed(names)}
    assert _predict_vector(a, xq) == _predict_vector(b, shuffled), "dict key order must not matter"


def check_booster_series_rows(model) -> None:
    """A pandas Series row (``df.iloc[i]``): one whose index names the features learns and
    predicts as the dict of its items (in any order), one on pandas' default index ``0..d-1``
    as the vector of its values; a Series naming a feature twice, or on a model of named
    features none of them, is refused before anything changes, and one of named features read
    by position (the model started on vectors) warns as scikit-learn does."""
    import pandas as pd

    from olboost.checks._names import _same_bytes

    model = _with_labels(model).clone({"seed": 5})  # seed None draws one per clone
    X, ys = _stream(model, 12)
    names = [f"f{j}" for j in range(X.shape[1])]
    named = pd.DataFrame(X[:, ::-1], columns=names[::-1])
    as_dicts, as_series = model.clone(), model.clone()
    as_vectors, as_positions = model.clone(), model.clone()
    for i, y in enumerate(ys):
        assert _predict_vector(as_series, named.iloc[i]) == _predict_vector(
            as_dicts, dict(zip(names, X[i], strict=True))
        ), "a named Series must predict as the dict of its items"
        as_dicts.learn_one(dict(zip(names, X[i], strict=True)), y)
        as_series.learn_one(named.iloc[i], y)
        as_vectors.learn_one(X[i], y)
        as_positions.learn_one(pd.Series(X[i]), y)
    _same_bytes(as_dicts, as_series, "learn_one of named Series vs of dicts")
    _same_bytes(as_vectors, as_positions, "learn_one of Series on 0..d-1 vs of vectors")
    assert _predict_vector(as_positions, pd.Series(X[0])) == _predict_vector(as_vectors, X[0])
    before = pickle.dumps(as_series)
    twice = pd.Series(X[0], index=[names[0]] + names[:-1])
    try:
        as_series.learn_one(twice, ys[0])
    except ValueError as error:
        assert "twice" in str(error) and repr(names[0]) in str(error), error
    else:
        raise AssertionError("a Series naming a feature twice must be refused")
    assert pickle.dumps(as_series) == before, "a refused Series changed the model"
    try:
        as_series.learn_one(pd.Series(X[0]), ys[0])  # by position, to a model of names
    except TypeError as error:
        assert "names none of the model's features" in str(error), error
    else:
        raise AssertionError("a Series of none of the model's features must be refused")
    assert pickle.dumps(as_series) == before, "a refused Series changed the model"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        as_positions.learn_one(named.iloc[0], ys[0])
    assert any("read by position" in str(w.message) for w in caught), "no warning"


def check_booster_clone_learns_alike(model: Estimator) -> None:
    model = _with_labels(model).clone({"seed": 5})
    X, ys = _stream(model, 30)
    a = _scores_after(model, X, ys)
    b = _scores_after(model.clone(), X, ys)
    assert np.array_equal(a, b), "a clone of a seeded model must learn identically"
    # River's clone(include_attributes=True) (its pipelines pass it): a copy of the learned
    # state, which goes on as the original would and leaves the original as it was
    half = len(X) // 2
    fitted = model.clone()
    _scores_after(fitted, X[:half], ys[:half])
    before = pickle.dumps(fitted)
    copied = fitted.clone(include_attributes=True)
    rest = _scores_after(copied, X[half:], ys[half:])
    assert pickle.dumps(fitted) == before, "learning in a copy must not change the original"
    assert np.array_equal(rest, a[half:]), "a copy with attributes must go on as the original"


def check_booster_set_params_goes_on_as_pickle(model: Estimator) -> None:
    """``set_params`` of a real-valued parameter on a model that has learned: the model must go
    on as its pickle does (no cache built from the old value, such as an edge's potential
    tables, may outlive the change), and the learned values that are functions of the
    parameters alone (``_derive_from_params``) must be the new value's."""
    from olboost.base import Interval

    model = _with_labels(model).clone({"seed": 5})
    X, ys = _stream(model, 30)
    for name, constraint in model._param_constraints.items():
        value = getattr(model, name)
        if not isinstance(constraint, Interval) or constraint.integer:
            continue
        if isinstance(value, float):
            others: tuple[float, ...] = (value * 0.5, value * 0.9, value * 1.1, value * 2.0)
        elif value is None:  # a value derived when unset (Adaboost.OLM's paper step size)
            others = (0.5, 0.9, 1.1, 2.0)
        else:
            continue
        live = model.clone()
        _scores_after(live, X[:20], ys[:20])
        for other in others:
            try:
                live.set_params(**{name: other})
            except (TypeError, ValueError):
                continue
            break
        else:
            continue
        # the state derived from the parameters is the new value's: derived once more, nothing
        # changes (a pickle carries a stale one alike, so the comparison below cannot see it)
        derived = pickle.dumps(live)
        live._derive_from_params()
        assert pickle.dumps(live) == derived, (
            f"after set_params({name}=...), the state derived from the parameters is the old "
            "value's"
        )
        copied = pickle.loads(pickle.dumps(live))
        a = _scores_after(live, X[20:], ys[20:])
        b = _scores_after(copied, X[20:], ys[20:])
        assert np.array_equal(a, b), f"after set_params({name}=...), a model and its pickle differ"


def check_booster_array_path(model: Estimator) -> None:
    """The array path (``score_then_learn`` of a ranker, ``predict_then_learn`` of a
    classifier, compiled for the boosters) scores every row as ``score_one`` / ``votes`` does
    before ``learn_one`` learns it, and ends in a model that scores alike, bit for bit. From the
    second row on: before any example the one-example path scores an unstarted model (zeros),
    where the array path has started it on the first row. Not the top-k boosters, whose array
    path plays the user that clicks (they learn from the shown labels only)."""
    if hasattr(model, "show_one"):
        return
    model = _with_labels(model).clone({"seed": 5})
    X, ys = _stream(model, 40)
    outputs = model._outputs()
    arrays, ones = model.clone(), model.clone()
    one_rows = []
    if _is_ranker(model):
        Y = np.array([[o in y for o in outputs] for y in ys])
        array_rows = arrays.score_then_learn(X, Y)
        for x, y in zip(X, ys, strict=True):
            one_rows.append([ones.score_one(x)[o] for o in outputs])
            ones.learn_one(x, y)
        after = arrays.score(X), ones.score(X)
    else:
        array_rows = arrays.predict_then_learn(X, ys)
        for x, y in zip(X, ys, strict=True):
            one_rows.append(ones.votes(x[None, :])[0])
            ones.learn_one(x, y)
        after = arrays.votes(X), ones.votes(X)
    assert np.array_equal(array_rows[1:], np.asarray(one_rows)[1:]), (
        "the array path must score each row as the one-example path does"
    )
    assert np.array_equal(*after), "the array path must learn as learn_one does"
    learned = model.clone()
    learned.learn(X, Y if _is_ranker(model) else ys)
    assert pickle.dumps(learned) == pickle.dumps(arrays), (
        "learn must end where scoring and learning the same rows ends"
    )


# ------------------------------------------------------------------------------ committees


def _started(model: Estimator, seed: int = 1, n: int = 5, k: int = 4, d: int = 6) -> Estimator:
    c = model.clone()
    c.start(n, k, d, seed)
    return c


def _committee_rounds(committee: Estimator, rows: slice = slice(0, 40)) -> np.ndarray:
    """Predict then learn rows ``rows`` of one fixed synthetic stream; the weights vary by
    learner so that every learner sees a different importance."""
    X, Y = synthetic_multilabel(n=40, d=committee.n_attributes_, k=committee.n_labels_)
    scale = np.linspace(0.5, 1.5, committee.n_learners_)[:, None]
    out = []
    for x, y in zip(X[rows], Y[rows], strict=True):
        out.append(committee.predict(x))
        committee.learn(x, np.where(y, 1.0, 0.0)[None, :] * scale)
    return np.asarray(out)


def check_committee_predictions(model: Estimator) -> None:
    c = _started(model)
    H = _committee_rounds(c)
    assert H.shape[1:] == (5, 4)
    assert (H >= 0).all() and np.allclose(H.sum(axis=2), 1.0), "rows must be distributions"
    assert np.allclose(H[0], 0.25), "a committee that has seen nothing predicts uniformly"


def check_committee_purity(model: Estimator) -> None:
    """``predict`` changes neither the committee nor ``x``; ``learn`` changes neither ``x`` nor
    the weights it is given."""
    c = _started(model)
    X, _ = synthetic_multilabel(n=2, d=c.n_attributes_, k=c.n_labels_, seed=1)
    x = X[0].copy()
    # at several stages: a committee that has grown (split trees, more state) predicts by
    # other code than a fresh one
    for rows in (slice(0, 0), slice(0, 10), slice(10, 40)):
        _committee_rounds(c, rows)
        before = pickle.dumps(c)
        c.predict(x)
        assert pickle.dumps(c) == before, "predict must not change the committee"
        assert np.array_equal(x, X[0]), "predict must not modify x"
    weights = np.linspace(0.5, 1.5, c.n_learners_ * c.n_labels_).reshape(c.n_learners_, -1)
    kept = weights.copy()
    c.learn(x, weights)
    assert np.array_equal(x, X[0]) and np.array_equal(weights, kept), (
        "learn must not modify x or the weights"
    )


def check_committee_pickling(model: Estimator) -> None:
    full = _committee_rounds(_started(model))
    b = _started(model)
    first = _committee_rounds(b, slice(0, 20))
    rest = _committee_rounds(pickle.loads(pickle.dumps(b)), slice(20, 40))
    assert np.array_equal(np.concatenate([first, rest]), full), "a pickled committee must resume"


def check_committee_clone_with_attributes(model: Estimator) -> None:
    """River's ``clone(include_attributes=True)`` of a committee that has learned: a copy that
    goes on as the original would, and whose learning leaves the original as it was."""
    full = _committee_rounds(_started(model))
    c = _started(model)
    _committee_rounds(c, slice(0, 20))
    before = pickle.dumps(c)
    copied = c.clone(include_attributes=True)
    rest = _committee_rounds(copied, slice(20, 40))
    assert pickle.dumps(c) == before, "learning in a copy must not change the original"
    assert np.array_equal(rest, full[20:]), "a copy with attributes must go on as the original"


def check_committee_seeding(model: Estimator) -> None:
    """Same seed, same committee bit for bit; another seed, another committee (its learners'
    features and hyperparameters are drawn from the seed given to ``start``)."""
    a = _committee_rounds(_started(model, seed=3))
    b = _committee_rounds(_started(model, seed=3))
    assert np.array_equal(a, b), "same seed must give identical committees"
    c = _committee_rounds(_started(model, seed=4))
    assert not np.array_equal(a, c), "the seed must matter: another seed, another committee"


def check_committee_bad_input(model: Estimator) -> None:
    c = _started(model)
    _committee_rounds(c, slice(0, 10))
    before = pickle.dumps(c)
    x = np.zeros(6)
    good = np.ones((5, 4))
    for bad_x, w in [
        (x, good[:, :3]),
        (x, -good),
        (x, good * np.nan),
        (np.zeros(5), good),
    ]:
        try:
            c.learn(bad_x, w)
        except ValueError:
            pass
        else:
            raise AssertionError("a bad learn call must raise ValueError")
        assert pickle.dumps(c) == before, "a rejected learn call changed the committee"
    for bad_x in (np.zeros(5), np.zeros(7), np.full(6, np.inf)):
        try:
            c.predict(bad_x)
        except ValueError:
            pass
        else:
            raise AssertionError(f"predict must reject x of shape {bad_x.shape}: {bad_x}")
        assert pickle.dumps(c) == before, "a rejected predict call changed the committee"


# ------------------------------------------------------------------------------ exploration


def _exploration_case(model: Estimator) -> tuple[np.ndarray, int]:
    """A deterministic ranking of 7 labels and a ``k`` the scheme takes."""
    ranking = np.random.default_rng(0).permutation(7)
    return ranking, model.min_k + 1


def check_exploration_draws(model: Estimator) -> None:
    """A draw is a permutation, a pure function of ``(seed, round, key)``: the same again, from
    a pickled copy too, the scheme and the ranking left untouched; it explores (at a rate large
    enough to see it in 300 rounds), and another seed or key draws otherwise."""
    model = model.clone({"rho": 0.2})  # within every scheme's range (single swap: < 0.25)
    ranking, k = _exploration_case(model)
    given, before = ranking.copy(), pickle.dumps(model)
    copied = pickle.loads(before)
    draws = []
    for t in range(300):
        r = model.draw(ranking, k, seed=3, round=t, key=t % 5)
        assert sorted(r.tolist()) == list(range(7)), "a draw must be a permutation"
        np.testing.assert_array_equal(r, model.draw(ranking, k, seed=3, round=t, key=t % 5))
        np.testing.assert_array_equal(r, copied.draw(ranking, k, seed=3, round=t, key=t % 5))
        draws.append(r)
    np.testing.assert_array_equal(ranking, given)
    assert pickle.dumps(model) == before, "draw must not change the scheme"
    assert any(not np.array_equal(r, ranking) for r in draws), "rho = 0.2 must explore"
    for other in ({"seed": 4}, {"seed": 3, "key": 7}):
        again = [model.draw(ranking, k, round=t, **{"key": t % 5, **other}) for t in range(300)]
        assert any(not np.array_equal(a, b) for a, b in zip(again, draws, strict=True)), (
            f"{other} must draw otherwise"
        )


def check_exploration_probabilities(model: Estimator) -> None:
    """The exact pair inclusion probabilities are a symmetric matrix in [0, 1] whose diagonal
    (each label shown) sums to ``k``, each row's pairs to ``k - 1`` times its diagonal, with
    every label's chance positive (an estimate divides by them); the ranking is untouched."""
    ranking, k = _exploration_case(model)
    given = ranking.copy()
    P = model.pair_probabilities(ranking, k)
    np.testing.assert_array_equal(ranking, given)
    assert P.shape == (7, 7) and np.array_equal(P, P.T)
    assert np.all((P >= 0.0) & (P <= 1.0)) and np.all(np.diag(P) > 0.0)
    assert math.isclose(float(np.trace(P)), k, rel_tol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1) - np.diag(P), (k - 1) * np.diag(P), rtol=1e-12)


def check_exploration_bad_input(model: Estimator) -> None:
    """A ranking that is no permutation, a ``k`` out of range, a negative seed or round: a
    clear ``ValueError`` or ``TypeError``, the scheme unchanged."""
    ranking, k = _exploration_case(model)
    before = pickle.dumps(model)
    calls = [
        lambda: model.draw(np.array([0, 1, 1, 3, 4, 5, 6]), k, 1, 0),
        lambda: model.draw(ranking.astype(float), k, 1, 0),
        lambda: model.draw(ranking, 8, 1, 0),
        lambda: model.draw(ranking, model.min_k - 1, 1, 0),
        lambda: model.draw(ranking, k, -1, 0),
        lambda: model.draw(ranking, k, 1, -1),
        lambda: model.draw(ranking, k, 1.5, 0),
        lambda: model.pair_probabilities(ranking[:-1] + 0, k + 10),
        lambda: model.pair_probabilities([3, 1], k),
    ]
    for call in calls:
        try:
            call()
        except (ValueError, TypeError) as err:
            assert str(err), "the error must say what is wrong"
        else:
            raise AssertionError("bad input to an exploration scheme must raise")
        assert pickle.dumps(model) == before, "a refused call must leave the scheme unchanged"
