"""The online-learner layer serves any estimator, committee booster or not."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from olboost import AdaBoostOLM, AdaOLMR, VFDTCommittee
from olboost.base import Interval
from olboost.checks import synthetic_multilabel
from olboost.feedback import Feedback
from olboost.online import RankingLearner


class FrequencyRanker(RankingLearner):
    """Ranks labels by how often they were relevant so far: a learner with no committee."""

    _param_constraints = {
        **RankingLearner._param_constraints,
        "prior": Interval(0, None),
    }

    def __init__(self, labels=None, seed=None, prior=0.0):
        self.labels = labels
        self.seed = seed
        self.prior = prior
        self._validate_params()

    def _init_state(self):
        self.counts_ = np.full(len(self._outputs()), float(self.prior))

    def _raw_scores(self, xv):
        return self.counts_.copy()

    def _learn_row(self, xv, target):
        self.t_ += 1
        self.counts_ += target.relevant


def test_a_learner_without_committee_gets_the_whole_api():
    X, Y = synthetic_multilabel(n=50, k=4, seed=3)
    one, many = FrequencyRanker(labels=4), FrequencyRanker()
    for x, y in zip(X, Y, strict=True):
        one.learn_one(x, set(np.flatnonzero(y).tolist()))
    scores = many.score_then_learn(X, Y)
    np.testing.assert_array_equal(one.counts_, Y.sum(axis=0))
    np.testing.assert_array_equal(many.counts_, Y.sum(axis=0))
    np.testing.assert_array_equal(scores[-1], Y[:-1].sum(axis=0))  # scored before learning
    assert one.rank_one(X[0])[0] == int(np.argmax(Y.sum(axis=0)))
    assert pickle.loads(pickle.dumps(one)).score_one(X[0]) == one.score_one(X[0])


def test_tied_scores_keep_label_order_in_rankings_and_predictions():
    # NumPy's default sort keeps ties in order only for short arrays (up to 16) and all-equal
    # ones: 40 labels with three score levels find an argsort that is not stable
    rng = np.random.default_rng(0)
    model = FrequencyRanker(labels=[f"l{j}" for j in range(40)])
    for _ in range(2):
        model.learn_one([0.0], {f"l{j}" for j in rng.choice(40, size=12, replace=False)})
    counts = model.counts_
    assert len(set(counts)) > 1 and len(set(counts)) < 40
    expected = sorted(range(40), key=lambda j: -counts[j])  # sorted() is stable
    assert model.rank_one([0.0]) == [f"l{j}" for j in expected]
    top = {f"l{j}" for j in expected[: model._n_predicted(40)]}
    assert {label for label, v in model.predict_one([0.0]).items() if v} == top


def test_bad_input_leaves_a_plain_learner_unchanged():
    X, Y = synthetic_multilabel(n=10, k=4, seed=3)
    model = FrequencyRanker(labels=4)
    model.learn_one(X[0], {1})
    before = pickle.dumps(model)
    for x, y, error in [
        (X[1][:3], {1}, ValueError),  # wrong length
        (np.array([np.nan] * 6), {1}, ValueError),
        (X[1], {7}, ValueError),  # unknown label
        (X[1], [1], TypeError),  # not a set
        (X[1], Feedback(), TypeError),  # a feedback this learner does not take
    ]:
        with pytest.raises(error):
            model.learn_one(x, y)
        assert pickle.dumps(model) == before


def test_a_start_that_fails_leaves_the_model_unstarted():
    # the committee names a nominal column the data does not have: the start fails, and the
    # booster is not left half started (the same clear error again, not an AttributeError)
    model = AdaOLMR(VFDTCommittee(nominal_attributes={9: 3}), learners=3, seed=1, labels=3)
    for _ in range(2):
        with pytest.raises(ValueError, match="nominal_attributes names column"):
            model.learn_one(np.zeros(4), {1})
        assert not model._started
        assert not any(name.endswith("_") for name in vars(model))


@pytest.mark.parametrize(
    "y", [np.array([0.0, 1.0, np.nan, 0.0, 1.0, 1.0]), [0, 1, float("nan"), float("nan"), 1, 0]]
)
def test_a_nan_class_is_rejected_naming_its_row(y):
    # NaN equals nothing, itself included: as a class it was a KeyError (from an array) or one
    # class per NaN object (from a list), changing k
    from olboost import AdaBoostOLM

    X = np.random.default_rng(0).normal(size=(6, 2))
    model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=0)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="NaN class at row 2"):
        model.learn(X, y)
    assert pickle.dumps(model) == before


def test_classes_of_mixed_numbers_are_sorted_by_value_from_a_list_or_an_array():
    from olboost import AdaBoostOLM

    X = np.random.default_rng(0).normal(size=(6, 2))
    y = [0, 1, 2.5, 0, 1, 2.5]
    a = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=0).learn(X, y)
    b = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=0).learn(X, np.array(y))
    assert a.classes_ == b.classes_ == [0, 1, 2.5]
    np.testing.assert_array_equal(a.votes(X), b.votes(X))


def test_classes_that_are_sets_get_one_order_whatever_the_hash_seed(tmp_path):
    # "<" on frozensets is inclusion, not an order: sorted() kept the set's iteration order,
    # which follows the process's hash seed, and the classes (and results) changed with it
    import subprocess
    import sys

    script = tmp_path / "classes.py"
    script.write_text(
        "import numpy as np\n"
        "from olboost.online.labels import classes_and_codes\n"
        "y = np.empty(8, dtype=object)\n"
        "for i, c in enumerate([frozenset(), {'rock'}, {'jazz'}, {'rock', 'jazz'}] * 2):\n"
        "    y[i] = frozenset(c)\n"
        "print([sorted(c) for c in classes_and_codes(y, 'test')[0]])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, check=True,
            env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }  # fmt: skip
    assert len(outputs) == 1, outputs


def test_feature_keys_that_are_sets_get_one_order_whatever_the_hash_seed():
    # the first dict's keys were sorted by str(key): a frozenset's str follows its members'
    # hash order, so the feature order (each learner's subset, every score) changed with the
    # process's hash seed; other keys keep their order (str)
    import subprocess
    import sys

    from olboost.online.inputs import check_vector

    script = (
        "from olboost.online.inputs import check_vector\n"
        "keys = [frozenset({'alpha', 'beta'}), frozenset({'alpha', 'gamma'}), ('x', {'b', 'a'}),"
        " frozenset({'delta', 'beta'}), frozenset({'gamma', 'delta'}), 'plain', 10, 2]\n"
        "keys[2] = ('x', frozenset({'b', 'a'}))\n"
        # two tuples holding sets of four members: their str orders differ by hash seed
        "keys += [('f', frozenset({'alpha', 'beta', 'gamma', 'delta'})),"
        " ('f', frozenset({'alpha', 'beta', 'gamma', 'zeta'}))]\n"
        "_, names = check_vector(dict.fromkeys(keys, 1.0), 't', False, None, None)\n"
        "print([keys.index(k) for k in names])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True,
            env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }  # fmt: skip
    assert len(outputs) == 1, outputs
    _, names = check_vector({10: 1.0, 2: 1.0, "b": 1.0, ("a", 1): 1.0}, "t", False, None, None)
    assert names == [("a", 1), 10, 2, "b"]  # str order, as before


@pytest.mark.parametrize(
    "make_y",
    [
        lambda y: __import__("pandas").Series(y).astype("Int64").mask(np.arange(len(y)) == 2),
        lambda y: [__import__("pandas").NA if i == 2 else int(v) for i, v in enumerate(y)],
    ],
    ids=["nullable Series", "list"],
)
def test_a_pandas_na_class_is_rejected_naming_its_row(make_y):
    # pandas' NA refuses a truth value: its "boolean value of NA is ambiguous" named neither the
    # model, nor y, nor the row
    pytest.importorskip("pandas")
    from olboost import AdaBoostOLM

    X = np.random.default_rng(0).normal(size=(6, 2))
    model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=0)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=r"AdaBoostOLM: y has a missing class \(<NA>\) at row 2"):
        model.learn(X, make_y([0, 1, 0, 1, 0, 1]))
    assert pickle.dumps(model) == before


def test_a_pandas_na_relevance_is_rejected_naming_its_cell():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    Y = pd.DataFrame(rng.random((6, 3)) < 0.5).astype("boolean")
    Y.iloc[4, 1] = pd.NA
    model = AdaOLMR(VFDTCommittee(n_features=2), learners=2, seed=0)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=r"AdaOLMR: Y must hold only 0/1 .* row 4, label column 1"):
        model.learn(X, Y)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(("value", "shown"), [(np.nan, "nan"), (2, r"2\.0"), (0.5, r"0\.5")])
def test_a_relevance_that_is_no_truth_value_is_shown_as_the_number_it_is(value, shown):
    # NumPy's repr of its scalars: "holds np.float64(nan)"
    X = np.arange(8.0).reshape(4, 2)
    Y = np.eye(4, 3)
    Y[2, 1] = value
    model = AdaOLMR(VFDTCommittee(n_features=2), learners=2, seed=0)
    with pytest.raises(ValueError, match=rf"row 2, label column 1 holds {shown}$"):
        model.learn(X, Y)


@pytest.mark.parametrize("call", ["learn", "score_then_learn", "score"])
def test_a_frame_naming_a_column_twice_is_refused(call):
    # its features are read by name: two columns of one name could not be told apart (a dict
    # gave the first one's value to both, a reordered frame failed in pandas)
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(8, 3)), rng.random((8, 3)) < 0.5
    model = AdaOLMR(VFDTCommittee(n_features=3), learners=2, seed=0)
    if call == "score":
        model.learn(pd.DataFrame(X, columns=["a", "b", "c"]), Y)
    before = pickle.dumps(model)
    twice = pd.DataFrame(X, columns=["a", "a", "b"])
    args = (twice,) if call == "score" else (twice, Y)
    with pytest.raises(ValueError, match=r"AdaOLMR: X names a column twice \('a'\)"):
        getattr(model, call)(*args)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(
    ("dtype", "form"),
    # scipy makes no float16 COO matrix
    [(d, f) for d in (np.int8, np.bool_, np.float16) for f in ("csr", "coo", "csc")
     if (d, f) != (np.float16, "coo")],
)  # fmt: skip
def test_sparse_entries_stored_twice_add_up_as_float64(dtype, form):
    # scipy sums duplicates in the stored dtype (int8 100 + 100 wraps to -56, bool True + True
    # stays True); every value is learned as float64, and scikit-learn's check_array widens
    # before the adapters sum: the same matrix must give the same model either way
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(0)
    n = 40
    value = {np.int8: 100, np.bool_: True, np.float16: 0.1}[dtype]
    data = np.full(2 * n, value, dtype=dtype)
    X = sp.csr_matrix((data, np.zeros(2 * n, dtype=np.int32), np.arange(0, 2 * n + 1, 2)), (n, 3))
    Y = rng.random((n, 3)) < 0.4
    widened = X.astype(np.float64)
    widened.sum_duplicates()
    if form == "coo":  # its conversion to CSR summed in the stored dtype, before the widening
        rows = np.repeat(np.arange(n), 2)
        X = sp.coo_matrix((data, (rows, np.zeros(2 * n, dtype=np.int32))), shape=(n, 3))
    elif form == "csc":
        X = X.tocsc()
    a = AdaOLMR(VFDTCommittee(n_features=3), learners=2, seed=0)
    b = AdaOLMR(VFDTCommittee(n_features=3), learners=2, seed=0)
    a.learn(X, Y)
    b.learn(widened.toarray(), Y)
    assert pickle.dumps(a.committee_) == pickle.dumps(b.committee_)
    assert form == "csc" or not X.has_canonical_format  # the caller's matrix left as it was


def test_only_nan_nat_and_pandas_na_are_missing_classes():
    # any TypeError of value != value was read as pandas' NA
    pd = pytest.importorskip("pandas")
    from olboost.online.labels import _is_missing

    class Refuses:
        def __ne__(self, other):
            raise TypeError("no !=")

    assert _is_missing(pd.NA) and _is_missing(float("nan"))
    assert _is_missing(np.datetime64("NaT", "s"))  # a unit: a unitless NaT is deprecated
    assert not _is_missing(Refuses()) and not _is_missing(None) and not _is_missing("a")


@pytest.mark.parametrize("unit", ["D", "ns", "m"])
def test_a_nat_in_a_datetime_array_of_classes_is_refused(unit):
    # tolist made the NaT None (or, at nanoseconds, an integer), a class like the others
    X = np.arange(12.0).reshape(6, 2)
    kind = "timedelta64" if unit == "m" else "datetime64"
    days = [1, 2, "NaT", 1, 2, 1] if unit == "m" else ["2020-01-01", "2020-01-02", "NaT"] * 2
    y = np.array(days, dtype=f"{kind}[{unit}]")
    model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1)
    with pytest.raises(ValueError, match=r"AdaBoostOLM: y has a missing class \(NaT\) at row 2"):
        model.learn(X, y)
    assert not model._started
    model.learn(X[[0, 1, 3, 4]], y[[0, 1, 3, 4]])
    assert model.classes_ == sorted(set(y[[0, 1]].tolist()))


def test_predict_gives_an_array_of_the_classes_dtype():
    # an array of objects for int classes: np.bincount of a prediction failed
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    kinds = [([0, 1, 2], np.int64), ([0.5, 1.5], np.float64), (["a", "b"], "<U1")]
    # NumPy's own scalars too, as list(np.unique(y)) gives them
    numpys = [(list(np.unique(np.array([3, 1], dtype=np.uint8))), np.uint8)]
    for classes, dtype in [*kinds, ([False, True], np.bool_), *numpys]:
        y = np.array(classes, dtype=object)[np.arange(30) % len(classes)]
        model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=classes)
        predicted = model.learn(X, y).predict(X)
        assert predicted.dtype == dtype and set(predicted.tolist()) <= set(classes)
    # NumPy would change them: an int beyond int64 into a float, a trailing NUL dropped
    for classes in ([-1, 2**63 + 1], ["a", "a\x00"]):
        y = np.array(classes, dtype=object)[np.arange(30) % 2]
        model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=classes)
        predicted = model.learn(X, y).predict(X)
        assert predicted.dtype == object
        assert predicted.tolist() == [model.predict_one(x) for x in X]
    mixed = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=[1, "b"])
    assert (
        mixed.learn(X, np.array([1, "b"], dtype=object)[np.arange(30) % 2]).predict(X).dtype
        == object
    )


def test_a_named_frame_given_to_a_model_started_without_names_warns_as_scikit_learn():
    # read by position, silently: the same frame with its columns in another order scored
    # otherwise (a model started on a frame reads later ones by name)
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = AdaOLMR(VFDTCommittee(n_features=2), learners=2, seed=1, labels=3)
    model.learn(X, rng.random((30, 3)) < 0.5)
    with pytest.warns(
        UserWarning, match="AdaOLMR: X has feature names, but the model started"
    ) as seen:
        model.score(frame)
    assert seen[0].filename == __file__  # the user's line, not olboost's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.score(X)
        model.score(pd.DataFrame(X))  # pandas' default columns name nothing


def test_names_keep_their_identity_across_parameters_arrays_and_metrics():
    # A names probe (session 31): names were matched by Python equality, for which True is 1,
    # or by NumPy, which takes equally long tuples apart.
    from olboost.datasets import MulticlassDataset
    from olboost.evaluate import prequential
    from olboost.metrics import rank_loss

    x = [0.0, 1.0]
    # set_params / clone on a started model: [False, True] are other classes than [0, 1] (the
    # parameter said one thing and classes_ another), and (0, 1) the same ones as [0, 1]
    model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=[0, 1])
    model.learn_one(x, 1)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="classes cannot change once the model has started"):
        model.set_params(classes=[False, True])
    assert pickle.dumps(model) == before
    model.set_params(classes=(0, 1))
    ranker = AdaOLMR(VFDTCommittee(n_features=2), learners=2, seed=1, labels=[0, 1, 2])
    ranker.learn_one(x, {1})
    with pytest.raises(ValueError, match="labels cannot change once the model has started"):
        ranker.clone({"labels": [False, True, 2]}, include_attributes=True)

    # tuple classes on every multiclass array path, as learn_one takes them
    classes = [(0, 1), (1, 0)]
    X = np.random.default_rng(0).normal(size=(8, 2))
    y = [classes[i % 2] for i in range(8)]
    one = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=classes)
    for row, c in zip(X, y, strict=True):
        one.learn_one(row, c)
    many = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=classes)
    many.learn(X, y)
    assert pickle.dumps(one) == pickle.dumps(many)
    predicted = many.predict(X)
    assert predicted.shape == (8,) and list(predicted) == [many.predict_one(r) for r in X]
    data = MulticlassDataset("tuples", X, np.arange(8) % 2, ["a", "b"], classes)
    fresh = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=classes)
    assert prequential(fresh, data).n_test == 8

    # a NumPy bool beside integer classes is refused, as Python's is (it was taken for 1)
    with pytest.raises(ValueError, match="y mixes bool and other classes"):
        AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1).learn(
            X[:3], np.array([np.True_, 1, 0], dtype=object)
        )

    # rank_loss over scores by label: True is not the label 1, as for the learners
    with pytest.raises(ValueError, match="relevant names the label True, which has no score"):
        rank_loss({0: 0.1, 1: 0.9, 2: 0.5}, {True})
    with pytest.raises(ValueError, match="relevant names the label 1, which has no score"):
        rank_loss({False: 0.1, True: 0.9}, {1})
    assert rank_loss({0: 0.1, 1: 0.9, 2: 0.5}, {1}) == 0.0


def test_predict_many_returns_the_models_own_class_objects():
    # as predict_one does: NumPy scalars (np.int64, np.str_) in the Series, which json.dumps
    # refuses (a names probe, session 31)
    import json

    import pandas as pd

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(6, 2)), columns=["a", "b"])
    for classes in ([3, 7], ["no", "yes"]):
        model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=2, seed=1, classes=classes)
        model.learn_many(X, pd.Series([classes[i % 2] for i in range(6)]))
        predicted = model.predict_many(X)
        assert [type(c) for c in predicted] == [type(classes[0])] * 6
        assert list(predicted) == [model.predict_one(dict(row)) for _, row in X.iterrows()]
        json.dumps(list(predicted))


def test_keys_that_print_alike_take_one_column_order_whatever_the_first_dict_order():
    # 1 and "1" (and True, 1.5 and "1.5") sort by their text alike: their type breaks the tie,
    # or the first example's insertion order chose which column each weak learner reads
    from olboost.online.inputs import key_order

    keys = [1, "1", "1.5", 1.5, "a", True, "True"]
    orders = {tuple(map(repr, key_order(keys[i:] + keys[:i]))) for i in range(len(keys))}
    orders |= {tuple(map(repr, key_order(list(reversed(keys)))))}
    assert len(orders) == 1, orders
    rows = [{1: 0.1 * i, "1": 1.0 - 0.1 * i, "b": float(i % 3)} for i in range(30)]
    models = []
    for flip in (False, True):
        model = AdaOLMR(VFDTCommittee(n_features=2), learners=4, seed=3, labels=3)
        for i, row in enumerate(rows):
            x = dict(reversed(row.items())) if flip else row
            model.learn_one(x, {i % 3})
        models.append(model)
    assert models[0].feature_names_in_ == models[1].feature_names_in_
    assert models[0].score_one(rows[5]) == models[1].score_one(rows[5])


def test_dict_values_of_plain_numbers_convert_as_each_value_alone():
    # plain floats and ints are converted in one call (a fast path), the rest value by value:
    # both give float(value) in the order of the keys, the rounding of ints past 2**53 included
    from olboost.online.inputs import dict_values

    keys = ["c", 0, "a", 7, "big", "neg"]
    plain = {"a": 0.1, 0: -0.0, "c": 3, 7: np.float64(2.5), "big": 2**70 + 1, "neg": -(10**20)}
    mixed = {**plain, "a": np.float32(0.1), 7: True}
    for x in (plain, mixed):
        got = dict_values(x, keys, False, "w")
        want = np.array([float(x[key]) for key in keys])
        assert got.dtype == np.float64 and got.flags.c_contiguous and got.flags.writeable
        assert got.tobytes() == want.tobytes(), x  # -0.0 stays -0.0
    assert np.isnan(dict_values({"a": 1.0}, ["a", "b"], True, "w")[1])  # absent: missing
    assert np.isnan(dict_values({"a": 1.0, "b": None}, ["a", "b"], True, "w")[1])


def test_a_first_frame_orders_the_features_as_it_stands_on_the_array_path_sorted_in_learn_many():
    # the documented split (olboost.online): the array paths follow scikit-learn's
    # feature_names_in_, learn_many River's unordered dicts; the trees draw their feature
    # subsets by that order, so only sorted columns make the two starts one model
    pd = pytest.importorskip("pandas")
    X, Y = synthetic_multilabel(n=40, k=3)
    y = Y.argmax(axis=1)
    model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=3, seed=1, classes=[0, 1, 2])
    unsorted = pd.DataFrame(X, columns=[f"f{j}" for j in reversed(range(X.shape[1]))])
    by_array, by_batch = model.clone(), model.clone()
    by_array.learn(unsorted, y)
    by_batch.learn_many(unsorted, pd.Series(y))
    assert by_array.feature_names_in_ == list(unsorted.columns)
    assert by_batch.feature_names_in_ == sorted(unsorted.columns)
    in_order = unsorted[sorted(unsorted.columns)]
    by_array, by_batch = model.clone(), model.clone()
    by_array.learn(in_order, y)
    by_batch.learn_many(in_order, pd.Series(y))
    assert pickle.dumps(by_array) == pickle.dumps(by_batch)
