"""A committee of arbitrary River classifiers: the general (and slow) weak-learner path.

River is an optional dependency (``pip install olboost[river]``); it is imported only when a
:class:`RiverCommittee` is started.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from olboost.base import InstanceOf, OneOf
from olboost.weak.base import Committee

__all__ = ["RiverCommittee"]

#: The committee's per-learner hyperparameters, by their olboost names.
_HYPERPARAMETERS = ("grace_period", "split_confidence", "tie_threshold")

#: Their names in River's Hoeffding-tree family (HoeffdingTreeClassifier,
#: HoeffdingAdaptiveTreeClassifier, ExtremelyFastDecisionTreeClassifier).
_HOEFFDING_NAMES = {
    "grace_period": "grace_period",
    "split_confidence": "delta",
    "tie_threshold": "tau",
}


def _import_river() -> Any:
    try:
        import river.base
        import river.compose
        import river.tree
    except ImportError as exc:
        raise ImportError(
            "RiverCommittee needs River, an optional dependency of olboost: "
            "pip install olboost[river]"
        ) from exc
    return river


def _names_problem(value: Mapping) -> str | None:
    unknown = set(value) - set(_HYPERPARAMETERS)
    if unknown:
        return f"has unknown key(s) {sorted(unknown)}; valid keys are {list(_HYPERPARAMETERS)}"
    bad = [k for k, v in value.items() if not isinstance(v, str)]
    if bad:
        return f"must map to parameter names (str), got non-str value(s) for {sorted(bad)}"
    if len(set(value.values())) < len(value):
        return f"must map to distinct parameter names, got {dict(value)}"
    return None


def _gives_probabilities(model: Any) -> bool:
    """Whether ``model`` implements ``predict_proba_one`` (a pipeline: its final step), which
    River's ``base.Classifier`` leaves unimplemented (``OneVsOneClassifier``,
    ``OutputCodeClassifier``)."""
    river = _import_river()
    if isinstance(model, river.compose.Pipeline):
        return _gives_probabilities(list(model.steps.values())[-1])
    return type(model).predict_proba_one is not river.base.Classifier.predict_proba_one


def _accepts_weight(model: Any) -> bool:
    """Whether ``model.learn_one`` takes an importance weight ``w`` and hands it to what learns:
    a parameter ``w``; a pipeline's final step's (River routes an extra argument only to the
    steps that declare it: a final step without ``w`` silently learned unweighted); a model
    that takes ``**kwargs`` and passes them on (its ``learn_one``'s source says so), the River
    models it wraps (e.g. ``OneVsRestClassifier``'s classifier), or, wrapping none, its word
    for it."""
    river = _import_river()
    if isinstance(model, river.compose.Pipeline):
        return _accepts_weight(list(model.steps.values())[-1])
    params = inspect.signature(model.learn_one).parameters.values()
    if any(p.name == "w" for p in params):
        return True
    keywords = [p.name for p in params if p.kind == p.VAR_KEYWORD]
    if not keywords:
        return False
    try:
        source = inspect.getsource(type(model).learn_one)
    except (OSError, TypeError):  # no source to read: its word for it, as before
        source = None
    if source is not None and source.count(f"**{keywords[0]}") < 2:
        # takes keyword arguments and passes none on: ARFClassifier and SRPClassifier draw
        # their own Poisson weights and dropped `w` without a word (the committee's learners
        # learned every example alike, whatever the booster's weights)
        return False
    names = inspect.signature(type(model).__init__).parameters
    inner = [getattr(model, name, None) for name in names if name != "self"]
    return all(_accepts_weight(m) for m in inner if isinstance(m, river.base.Estimator))


class _RiverClassifier:
    """The constraint of :attr:`RiverCommittee.model`: a River classifier, or ``None`` (River's
    Hoeffding tree), checked at construction as every other parameter."""

    def check(self, name: str, value: Any) -> None:
        if value is None:
            return
        river = _import_river()
        if not isinstance(value, river.base.Classifier):
            raise TypeError(
                f"{name} must be a River classifier (river.base.Classifier), got "
                f"{type(value).__name__}"
            )


class RiverCommittee(Committee):
    """Committee of ``N`` River classifiers, each reading only its own feature subset.

    Any River classifier that learns from weighted examples (``learn_one(x, y, *, w)``) can serve
    as a weak learner. Learner ``i`` is ``model.clone(params_i)``, where ``params_i`` sets the
    grace period, split confidence and tie threshold drawn for it (see
    :func:`olboost.weak.base.draw_learner_setup`) under the model's own parameter names. It reads
    the columns ``setup_.features[i]`` of each example, as a dict keyed by column index, and learns
    label ``l`` with weight ``weights[i, l] * setup_.weight_multiplier[i]``.

    This is the general, interpreted path; :class:`olboost.weak.vfdt.VFDTCommittee` is the compiled
    Hoeffding-tree committee with the same parameters, and this class is its speed reference.

    Parameters
    ----------
    model
        A River classifier used as prototype, never trained itself. ``None`` means
        ``river.tree.HoeffdingTreeClassifier(leaf_prediction="mc")``, built when the committee
        starts.
    n_features
        Number of attributes each learner sees, drawn at random without replacement; ``None``
        (or at least the number of attributes) gives every learner all attributes.
    grace_period
        ``(low, high)`` range of the per-learner grace period, drawn uniformly (a float: River's
        trees compare it with a sum of weights).
    split_confidence
        ``(low, high)`` range of the per-learner split confidence (River's ``delta``), log-uniform.
    tie_threshold
        ``(low, high)`` range of the per-learner tie threshold (River's ``tau``), log-uniform.
    weight_multiplier
        ``(low, high)`` range of the per-learner factor applied to every importance weight.
    hyperparameter_names
        Where the drawn hyperparameters go: a mapping from ``"grace_period"``,
        ``"split_confidence"``, ``"tie_threshold"`` to parameter names of ``model``; keys left out
        are not set, and every name given must be a parameter of ``model``. ``None`` means
        ``{"grace_period": "grace_period", "split_confidence": "delta", "tie_threshold": "tau"}``
        (the Hoeffding-tree family), restricted to the names the model actually has: a model
        without those parameters (e.g. ``river.linear_model.LogisticRegression``) is cloned
        unchanged and only the feature subsets and weight multipliers differ between learners.
    missing
        ``"learn"``: a missing attribute value (NaN) is left out of the dict the learner sees,
        River's way of marking it missing (its trees then skip the attribute's observers and send
        the example down the most common branch). ``"error"``: NaN is rejected with a
        ``ValueError`` before anything changes.

    Attributes
    ----------
    setup_
        The :class:`olboost.weak.base.LearnerSetup` drawn at :meth:`start`.
    learners_
        The ``N`` River classifiers.

    Notes
    -----
    If ``model`` has a ``seed`` parameter and the committee is started with a seed, learner ``i``
    gets its own seed derived from it, so that the committee is reproducible and its learners are
    not randomised identically. (Reproducible in what it predicts and learns: its pickles differ
    from run to run, as River's Gaussian estimators hold unseeded random generators, which only
    their ``sample`` uses.)

    Learner ``i`` learns an example once per label it weighs (``learn_one(x, label, w=...)``
    for each), as the trees of :class:`VFDTCommittee` do: a River pipeline given as ``model``
    (``StandardScaler() | HoeffdingTreeClassifier()``) therefore updates its unsupervised steps
    that many times per example, unweighted, where River alone would once.

    Raises ``TypeError`` at :meth:`start` if ``model.learn_one`` takes no ``w``: olboost drives its
    weak learners with importance weights and never falls back on resampling. Raises
    ``ValueError`` at :meth:`start` for more than two labels if ``model`` is binary by River's
    convention (its ``_multiclass`` is false, e.g. ``river.linear_model.LogisticRegression``,
    which would read every label above 0 as ``True``); for two labels, its ``{False: p, True: q}``
    answers are labels 0 and 1.

    Examples
    --------
    Three Hoeffding trees seeing one attribute each, on a problem where only attribute 0 matters
    (label ``floor(3 * x[0])``): learner 0 drew the noise attribute 1 and cannot tell the labels
    apart, learners 1 and 2 drew attribute 0 and rank the right label first.

    >>> import numpy as np
    >>> from olboost.weak.river import RiverCommittee
    >>> committee = RiverCommittee(n_features=1)
    >>> committee.start(n_learners=3, n_labels=3, n_attributes=2, seed=1)
    >>> committee.setup_.features.ravel()
    array([1, 0, 0])
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(200):
    ...     x = rng.uniform(size=2)
    ...     y = int(3 * x[0])
    ...     committee.learn(x, np.eye(3)[[y, y, y]])   # every learner learns label y, weight 1
    >>> committee.predict(np.array([0.9, 0.5])).round(2)
    array([[0.  , 0.42, 0.58],
           [0.  , 0.  , 1.  ],
           [0.  , 0.  , 1.  ]])
    >>> committee.predict(np.array([0.1, 0.5])).round(2)
    array([[0.  , 0.42, 0.58],
           [1.  , 0.  , 0.  ],
           [1.  , 0.  , 0.  ]])
    """

    _param_constraints = {
        **Committee._param_constraints,
        "model": _RiverClassifier(),
        "hyperparameter_names": InstanceOf(Mapping, allow_none=True, predicate=_names_problem),
        "missing": OneOf("learn", "error"),
    }

    def __init__(
        self,
        model: Any = None,
        n_features: int | None = 20,
        grace_period: tuple[float, float] = (5.0, 20.0),
        split_confidence: tuple[float, float] = (0.01, 0.9),
        tie_threshold: tuple[float, float] = (0.01, 0.9),
        weight_multiplier: tuple[float, float] = (3.0, 10.0),
        hyperparameter_names: Mapping[str, str] | None = None,
        missing: str = "learn",
    ):
        self.model = model
        self.n_features = n_features
        self.grace_period = grace_period
        self.split_confidence = split_confidence
        self.tie_threshold = tie_threshold
        self.weight_multiplier = weight_multiplier
        self.hyperparameter_names = hyperparameter_names
        self.missing = missing
        self._validate_params()

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
        yield {"n_features": None, "grace_period": (2.0, 4.0)}

    # ----------------------------------------------------------------------------------------------

    def _prototype(self) -> Any:
        river = _import_river()
        if self.model is None:
            return river.tree.HoeffdingTreeClassifier(leaf_prediction="mc")
        # again here: a model assigned as an attribute after construction skipped the check
        self._param_constraints["model"].check(f"{type(self).__name__}.model", self.model)
        return self.model

    def _target_names(self, prototype: Any) -> dict[str, str]:
        """olboost hyperparameter name -> the prototype's parameter name, for those to set."""
        params = prototype._get_params()
        if self.hyperparameter_names is None:
            return {k: v for k, v in _HOEFFDING_NAMES.items() if v in params}
        missing = sorted(v for v in self.hyperparameter_names.values() if v not in params)
        if missing:
            raise ValueError(
                f"{type(self).__name__}.hyperparameter_names maps to {missing}, which "
                f"{type(prototype).__name__} does not have as parameter(s)"
            )
        return dict(self.hyperparameter_names)

    def _check_start(self, n_labels: int) -> None:
        prototype = self._prototype()
        if not _accepts_weight(prototype):
            raise TypeError(
                f"{type(prototype).__name__}.learn_one takes no importance weight `w` (or does "
                "not pass it on to its final step or wrapped model): olboost "
                "trains weak learners with weighted examples and needs a weighted River model "
                "(learn_one(x, y, *, w=1.0)), e.g. river.tree.HoeffdingTreeClassifier"
            )
        if not _gives_probabilities(prototype):
            # predict failed with a bare NotImplementedError, after the booster had started
            raise TypeError(
                f"{type(prototype).__name__} has no predict_proba_one (River's Classifier leaves "
                "it unimplemented): the committee reads each learner's class probabilities; use "
                "a model that gives them, e.g. river.tree.HoeffdingTreeClassifier"
            )
        if n_labels > 2 and not prototype._multiclass:
            raise ValueError(
                f"{type(prototype).__name__} is a binary River classifier and this committee has "
                f"{n_labels} labels: use a multiclass model (e.g. "
                "river.tree.HoeffdingTreeClassifier), or wrap it in "
                "river.multiclass.OneVsRestClassifier"
            )
        self._target_names(prototype)

    def _allocate(self, seed: int | None) -> None:
        prototype = self._prototype()
        targets = self._target_names(prototype)
        seeds: list[int | None] = [None] * self.n_learners_
        if seed is not None and "seed" in prototype._get_params():
            seeds = [
                int(child.generate_state(1)[0])
                for child in np.random.SeedSequence(seed).spawn(self.n_learners_)
            ]
        setup = self.setup_
        learners = []
        for i in range(self.n_learners_):
            params: dict[str, Any] = {
                target: float(getattr(setup, name)[i]) for name, target in targets.items()
            }
            if seeds[i] is not None:
                params["seed"] = seeds[i]
            learners.append(prototype.clone(params))
        self.learners_ = learners
        self._columns_ = [row.tolist() for row in setup.features]
        self._multipliers_ = setup.weight_multiplier.tolist()

    def _check_x(self, x: np.ndarray) -> list[float]:
        self._require_started()
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n_attributes_,):
            raise ValueError(
                f"x must be a vector of {self.n_attributes_} attributes, got shape {x.shape}"
            )
        self._check_values(x)
        return x.tolist()

    def _inputs(self, xs: list[float], i: int) -> dict[int, float]:
        # A missing attribute is left out of the dict, River's way of saying it is missing.
        return {j: xs[j] for j in self._columns_[i] if xs[j] == xs[j]}

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Weak predictions for one example: a new ``(N, k)`` float64 array of distributions.

        Row ``i`` is learner ``i``'s ``predict_proba_one`` over labels ``0..k-1`` (labels it does
        not mention get 0, labels outside ``0..k-1`` are left out), normalised; an empty or
        all-zero answer gives the uniform distribution. An answer that is no dict, or holds a
        probability that is not a finite non-negative number, is a ``TypeError`` or
        ``ValueError`` naming the learner (NaN or a negative number was taken for an opinion,
        silently).
        """
        xs = self._check_x(x)
        k = self.n_labels_
        out = np.zeros((self.n_learners_, k), dtype=np.float64)
        for i, learner in enumerate(self.learners_):
            row = out[i]
            answer = learner.predict_proba_one(self._inputs(xs, i))
            if not isinstance(answer, Mapping):
                raise TypeError(
                    f"{type(self).__name__}: learner {i} ({type(learner).__name__}) answered "
                    f"predict_proba_one with {type(answer).__name__}, not a dict of label "
                    "probabilities"
                )
            for label, p in answer.items():
                # A binary River model answers {False: ., True: .} for labels 0 and 1; a bool
                # used as an index would be a NumPy mask and fill the whole row.
                real = isinstance(p, numbers.Real) and not isinstance(p, bool)
                if not (real and math.isfinite(p) and p >= 0):
                    raise ValueError(
                        f"{type(self).__name__}: learner {i} ({type(learner).__name__}) "
                        f"answered predict_proba_one with {label!r}: {p!r}; probabilities must "
                        "be finite and non-negative"
                    )
                if isinstance(label, numbers.Integral) and 0 <= label < k and p > 0:
                    row[int(label)] = p
            total = row.sum()
            if total > 0 and np.isfinite(total):
                row /= total
            else:
                row[:] = 1.0 / k
        return out

    def learn(self, x: np.ndarray, weights: np.ndarray) -> None:
        """Train learner ``i`` on label ``l`` with weight ``weights[i, l] * multiplier_i``.

        Labels are visited in increasing order and zero weights are skipped. ``weights`` must be an
        ``(N, k)`` array of finite non-negative numbers; invalid input raises ``ValueError``
        before any learner changes. A learner whose ``learn_one`` raises is a ``RuntimeError``
        naming it (its error as the cause): the learners before it have learned the example.
        """
        xs = self._check_x(x)
        w = np.asarray(weights, dtype=np.float64)
        shape = (self.n_learners_, self.n_labels_)
        if w.shape != shape:
            raise ValueError(f"weights must have shape {shape}, got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if np.any(w < 0):
            raise ValueError("weights must be non-negative")
        for i, learner in enumerate(self.learners_):
            labels = np.flatnonzero(w[i] > 0).tolist()  # increasing
            if not labels:
                continue
            x_i = self._inputs(xs, i)
            multiplier = self._multipliers_[i]
            try:
                for label in labels:
                    learner.learn_one(x_i, label, w=float(w[i, label]) * multiplier)
            except Exception as err:
                # River's learners change in place, and copying every learner before each
                # example would cost more than learning it: say that the state is torn
                raise RuntimeError(
                    f"{type(self).__name__}: learner {i} ({type(learner).__name__}) failed to "
                    f"learn ({type(err).__name__}: {err}); the learners before it had learned "
                    "this example and it may have in part, so the committee no longer matches "
                    "the model that drives it: load the model from its last checkpoint or pickle"
                ) from err
