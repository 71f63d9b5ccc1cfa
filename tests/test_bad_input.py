"""Bad input of every kind gets a clear error naming the parameter, key or column, raised before
any state changes (issue 11): each rejection below pickles the model before and after and
compares the bytes."""

from __future__ import annotations

import math
import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp

from olboost import AdaOLMR, VFDTCommittee
from olboost.boosters import (
    AdaBoostOLM,
    AdaOVA,
    BestTree,
    OnlineBMR,
    OnlineMBBM,
    OvaAdaBoostOL,
    OzaBoost,
)
from olboost.cli import main
from olboost.online import MulticlassLearner, RankingLearner
from olboost.online.inputs import MAX_ABS_FEATURE

BOOSTERS = [AdaOLMR, OnlineBMR, AdaBoostOLM, OnlineMBBM, BestTree, OzaBoost, OvaAdaBoostOL, AdaOVA]


def small(cls, **params):
    outputs = "labels" if issubclass(cls, RankingLearner) else "classes"
    return cls(VFDTCommittee(n_features=2), learners=2, seed=1, **{outputs: 3}, **params)


def target(model, j=1):
    return {j} if isinstance(model, RankingLearner) else j


def Y_of(model, n):
    if isinstance(model, RankingLearner):
        return np.eye(3, dtype=bool)[np.arange(n) % 3]
    return np.arange(n) % 3


def rejects(model, call, error, match):
    """``call()`` raises ``error`` matching ``match`` and leaves ``model`` byte-identical."""
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        call()
    assert pickle.dumps(model) == before, "a rejected call changed the model"


# ------------------------------------------------------------------------------ parameters


@pytest.mark.parametrize("cls", BOOSTERS)
def test_a_negative_seed_is_rejected_naming_it(cls):
    with pytest.raises(ValueError, match=r"seed must be in \[0, inf\], got -1"):
        small(cls).clone({"seed": -1})


@pytest.mark.parametrize("cls", BOOSTERS)
def test_a_seed_changed_after_construction_is_caught_at_start(cls):
    # the issue: NumPy's "expected non-negative integer" at the first example, naming nothing;
    # now the start checks the parameters first, every time, and the model stays unstarted
    model = small(cls)
    model.seed = -1
    X = np.ones((4, 3))
    for _ in range(2):
        rejects(model, lambda: model.learn_one(X[0], target(model)), ValueError, r"\.seed must")
        rejects(model, lambda: model.learn(X, Y_of(model, 4)), ValueError, r"\.seed must")
    assert not model._started


def test_a_committee_parameter_changed_after_construction_is_caught_at_start():
    # the booster starts the committee: it checks the committee's parameters before its own start
    model = small(AdaOLMR)
    model.committee.grace_period = (-1.0, 5.0)
    for _ in range(2):
        rejects(
            model,
            lambda: model.learn_one(np.ones(3), {1}),
            ValueError,
            r"VFDTCommittee\.grace_period\[0\] must be",
        )


FLOAT_PARAMS = [
    (AdaOLMR, "hedge_rate"),
    (AdaOLMR, "step_scale"),
    (AdaOLMR, "alpha_bound"),
    (AdaBoostOLM, "hedge_rate"),
    (AdaBoostOLM, "step_scale"),
    (AdaBoostOLM, "alpha_bound"),
    (OnlineBMR, "gamma"),
    (OnlineBMR, "gamma_cap"),
    (OnlineMBBM, "gamma"),
]


@pytest.mark.parametrize(("cls", "name"), FLOAT_PARAMS)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_float_parameters_must_be_finite(cls, name, value):
    with pytest.raises(ValueError, match=rf"{cls.__name__}\.{name} must"):
        small(cls, **{name: value})


def test_an_infinite_hedge_rate_no_longer_gives_nan_weights():
    # the issue: hedge_rate=inf was accepted and after 50 rows the log-weights were NaN
    with pytest.raises(ValueError, match=r"AdaOLMR\.hedge_rate must be in \[0, 1e\+100\], got inf"):
        AdaOLMR(hedge_rate=float("inf"))
    model = small(AdaOLMR)
    model.hedge_rate = float("inf")
    rejects(model, lambda: model.learn_one(np.ones(3), {1}), ValueError, "hedge_rate")


@pytest.mark.parametrize("cls", [AdaOLMR, AdaBoostOLM])
def test_a_hedge_rate_of_zero_is_uniform_weights_and_learns(cls):
    # the low end of [0, 1e100] is taken (only the message's bracket told a mutant that
    # opened it from the right one): Hedge with rate 0 keeps every expert's weight equal
    model = small(cls, hedge_rate=0.0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.normal(size=3)
        model.learn_one(x, {1} if cls is AdaOLMR else 1)
    assert model.t_ == 20 and np.ptp(model.expert_weights) == 0.0


@pytest.mark.parametrize("cls", [AdaOLMR, AdaBoostOLM])
def test_hedge_keeps_every_expert_finite_at_the_largest_rate(cls):
    # hedge_rate=1.7e308 was accepted: within a few rounds the lagging experts' log-weights fell
    # to -inf for good, and Hedge followed an expert 60 losses behind the leader
    from olboost.boosters.base import MAX_HEDGE_RATE

    with pytest.raises(ValueError, match=rf"{cls.__name__}\.hedge_rate must be in"):
        cls(hedge_rate=1.7e308)
    outputs = "labels" if cls is AdaOLMR else "classes"
    model = cls(VFDTCommittee(n_features=2), learners=4, seed=1, hedge_rate=MAX_HEDGE_RATE)
    model.set_params(**{outputs: 3})
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    if cls is AdaOLMR:
        model.learn(X, np.c_[X[:, 0] > 0, X[:, 1] > 0, X[:, 0] + X[:, 1] > 0])
    else:
        model.learn(X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0))
    assert np.isfinite(model.log_v_).all() and model.log_v_.max() == 0.0
    # the three behind the leader, by some rounds' losses times the rate: far, still finite
    assert (model.log_v_ < 0).sum() == 3 and model.log_v_.min() < -1e100


@pytest.mark.parametrize(
    ("cls", "params", "name"),
    [
        (AdaOLMR, {"learners": 0}, "learners"),
        (AdaOLMR, {"learners": 2.5}, "learners"),
        (OnlineBMR, {"draws": 0}, "draws"),
        (OnlineMBBM, {"draws": 0}, "draws"),
        (AdaOLMR, {"step_scale": 0.0}, "step_scale"),
        (AdaOLMR, {"alpha_bound": -1.0}, "alpha_bound"),
        (OnlineBMR, {"gamma": 1.0}, "gamma"),
        (AdaOLMR, {"hedge_rate": "1"}, "hedge_rate"),
    ],
)
def test_other_bad_parameters_name_the_parameter(cls, params, name):
    with pytest.raises((ValueError, TypeError), match=rf"\.{name}"):
        small(cls).clone(params)


def test_the_cli_reports_a_bad_seed_without_a_traceback(capsys):
    args = ["run", "--dataset", "emotions", "--seed", "-1", "--learners", "2", "--no-progress"]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2
    assert "AdaOLMR.seed must be in [0, inf], got -1" in err and "Traceback" not in err


# ------------------------------------------------------------------------------ feature values


class _Recording:
    """Records the vectors a test-only learner learns; takes missing values through the hook the
    committee boosters override (with what their committee handles)."""

    allow_missing = True

    def _missing_allowed(self):
        return self.allow_missing

    def _init_state(self):
        self.seen_ = []

    def _raw_scores(self, xv):
        return np.zeros(len(self._outputs()))

    def _learn_row(self, xv, target):
        self.t_ += 1
        self.seen_.append(xv.copy())


class RecordingRanker(_Recording, RankingLearner):
    """A test-only ranking learner that records the vectors it learns."""

    def __init__(self, labels=None, seed=None):
        self.labels = labels
        self.seed = seed
        self._validate_params()


class RecordingClassifier(_Recording, MulticlassLearner):
    """The multiclass twin of :class:`RecordingRanker`."""

    def __init__(self, classes=None, seed=None):
        self.classes = classes
        self.seed = seed
        self._validate_params()


class StrictRanker(RecordingRanker):
    """A learner that does not take missing values (the default of the hook)."""

    allow_missing = False


def started(cls=AdaOLMR, dicts=False):
    model = small(cls)
    for i in range(3):
        x = np.array([i, 1.0 - i, 0.5])
        model.learn_one(dict(zip("abc", x, strict=True)) if dicts else x, target(model, i))
    return model


@pytest.mark.parametrize("value", [1e101, -1e160, 1.7e308])
def test_a_huge_finite_feature_is_rejected_naming_column_and_limit(value):
    model = started()
    x = np.array([0.0, value, 1.0])
    limit = r"within \+/-1e\+100 \(MAX_ABS_FEATURE\), a bound every model shares"
    rejects(model, lambda: model.learn_one(x, {1}), ValueError, rf"at feature 1: .*{limit}")
    rejects(model, lambda: model.score_one(x), ValueError, "at feature 1")
    X = np.zeros((4, 3))
    X[2, 1] = value
    rejects(model, lambda: model.learn(X, Y_of(model, 4)), ValueError, "row 2, feature 1:.*1e")
    rejects(model, lambda: model.score(X), ValueError, "row 2, feature 1")
    rejects(model, lambda: model.learn(sp.csr_array(X), Y_of(model, 4)), ValueError, "row 2, f")
    assert MAX_ABS_FEATURE == 1e100
    model.learn_one(np.array([0.0, MAX_ABS_FEATURE, -MAX_ABS_FEATURE]), {1})  # the limit itself


def test_a_huge_feature_in_a_dict_is_named_by_its_key():
    model = started(dicts=True)
    x = {"a": 0.0, "b": 1e160, "c": 1.0}
    rejects(model, lambda: model.learn_one(x, {1}), ValueError, "at key 'b': .*1e\\+100")
    fresh = small(AdaOLMR)
    rejects(fresh, lambda: fresh.learn_one(x, {1}), ValueError, "at key 'b'")


def test_a_multiclass_booster_rejects_huge_values_on_every_path():
    model = started(AdaBoostOLM)
    x = np.array([1e200, 0.0, 0.0])
    rejects(model, lambda: model.learn_one(x, 1), ValueError, "at feature 0")
    rejects(model, lambda: model.predict_one(x), ValueError, "at feature 0")
    rejects(model, lambda: model.predict_proba_one(x), ValueError, "at feature 0")
    X = np.zeros((3, 3))
    X[1, 2] = -1e200
    rejects(model, lambda: model.predict_then_learn(X, [0, 1, 2]), ValueError, "row 1, feature 2")
    rejects(model, lambda: model.predict(X), ValueError, "row 1, feature 2")


def test_a_nan_under_a_known_key_is_named_by_the_key():
    # the issue: "at feature 0" (the internal sorted position) instead of the key
    model = StrictRanker(labels=3)
    for i in range(3):
        model.learn_one({"c": 0.5, "b": 1.0 - i, "a": float(i)}, {i})
    for x, match in [
        ({"a": np.nan, "b": 1.0, "c": 0.0}, r"missing value \(NaN\) at key 'a'"),
        ({"a": 1.0, "b": 1.0, "c": float("inf")}, r"infinite value \(inf\) at key 'c'"),
        ({"a": 1.0, "b": None, "c": 0.0}, r"missing value \(None\) under key 'b'"),
        ({"a": 1.0, "c": 0.0}, r"missing \['b'\]"),
        ({"a": 1.0, "b": 1.0, "c": 0.0, "d": 1.0}, r"unexpected \['d'\]"),
    ]:
        rejects(model, lambda x=x: model.learn_one(x, {1}), ValueError, match)
        rejects(model, lambda x=x: model.score_one(x), ValueError, match)
    rejects(model, lambda: model.learn_one({"a": 1, "b": "x", "c": 0}, {1}), TypeError, "key 'b'")


def test_a_none_in_a_list_is_named_none_as_in_a_dict():
    # NumPy reads None as NaN: a list's None was reported as a NaN the user never wrote
    model = StrictRanker(labels=3)
    model.learn_one([0.5, 1.0, 0.0], {0})
    for x, match in [
        ([0.5, None, 0.0], r"missing value \(None\) at feature 1"),
        ((0.5, None, 0.0), r"missing value \(None\) at feature 1"),
        ([0.5, float("nan"), 0.0], r"missing value \(NaN\) at feature 1"),
    ]:
        rejects(model, lambda x=x: model.learn_one(x, {1}), ValueError, match)


@pytest.mark.parametrize("cls", [AdaOLMR, AdaBoostOLM])
@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "started"])
def test_strings_and_complex_numbers_are_not_features_on_any_path(cls, fresh):
    # NumPy's float64 conversion reads "1" and "nan" as numbers and drops an imaginary part with
    # a warning; the dict path refused strings already. Every path refuses both, by position.
    model = small(cls) if fresh else started(cls)
    y = target(model)
    for x, where in [
        (["1", "0.5", "nan"], "feature 0 is '1'"),
        ([b"1", b"2", b"3"], "feature 0"),
        (np.array([0.0, 1 + 5j, 0.0]), r"feature 1 is .*1\+5j"),
        (np.array([1.0, 2.0, 3.0], dtype=np.complex64), "feature 0"),
        ([0.0, 1.0, 2j], r"feature 2 is .*2j"),
        (np.array([0.0, "a", 1.0], dtype=object), "feature 1 is 'a'"),
    ]:
        rejects(model, lambda x=x: model.learn_one(x, y), TypeError, "real numbers: " + where)
        if not fresh:
            rejects(model, lambda x=x: model.predict_one(x), TypeError, "real numbers")
    X = np.ones((3, 3), dtype=np.complex128)
    X[2, 1] = 4j
    for bad, where in [
        (X, "row 2, feature 1"),
        (sp.csr_array(X), "row 2, feature 1"),
        (X.real.astype(str), "row 0, feature 0"),
    ]:
        rejects(model, lambda b=bad: model.learn(b, Y_of(model, 3)), TypeError, where)
    dicts = small(cls) if fresh else started(cls, dicts=True)
    for value in (np.complex128(1 + 9j), np.complex64(1), np.array(2j), "1", b"1"):
        x = {"a": 0.0, "b": value, "c": 1.0}
        rejects(dicts, lambda x=x: dicts.learn_one(x, y), TypeError, "key 'b' must be a real")


@pytest.mark.parametrize("cls", [AdaOLMR, AdaBoostOLM])
@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "started"])
def test_dates_and_durations_are_not_features_on_any_path(cls, fresh):
    # NumPy converts datetime64 and timedelta64 to counts of their unit: the same instant was
    # 18,262 as a day and 1,577,836,800 as a second, learned silently as a number
    model = small(cls) if fresh else started(cls)
    y = target(model)
    day = np.datetime64("2020-01-01")
    for x, where in [
        (np.array([day, day, day]), "feature 0 is datetime.date"),
        ([0.0, day, 1.0], "feature 1 is datetime.date"),
        (np.array([1, 2, 3], dtype="timedelta64[s]"), "feature 0 is datetime.timedelta"),
        ([0.0, 1.0, np.timedelta64(3, "s")], "feature 2 is datetime.timedelta"),
    ]:
        rejects(model, lambda x=x: model.learn_one(x, y), TypeError, "real numbers: " + where)
        if not fresh:
            rejects(model, lambda x=x: model.predict_one(x), TypeError, "real numbers")
    X = np.zeros((3, 3), dtype="datetime64[s]")
    rejects(model, lambda: model.learn(X, Y_of(model, 3)), TypeError, "row 0, feature 0")
    dicts = small(cls) if fresh else started(cls, dicts=True)
    for value in (day, np.timedelta64(3, "s")):
        x = {"a": 0.0, "b": value, "c": 1.0}
        rejects(dicts, lambda x=x: dicts.learn_one(x, y), TypeError, "key 'b' must be a real")


@pytest.mark.parametrize("param", ["classes", "labels"])
def test_outputs_holding_nan_or_given_as_an_array_are_refused_naming_the_parameter(param):
    # NaN as a class matched only the very object given (float("nan") is not np.nan), and two
    # NaNs made two labels; an array was refused with no hint of the list it should be
    cls = AdaBoostOLM if param == "classes" else AdaOLMR
    for outputs in ([0.0, float("nan")], ["a", np.nan, "b"], [np.nan, float("nan")]):
        with pytest.raises(ValueError, match=rf"{cls.__name__}\.{param} must not hold NaN"):
            cls(learners=2, **{param: outputs})
    with pytest.raises(ValueError, match=rf"{param} must be .* a list, got an array: pass"):
        cls(learners=2, **{param: np.array([0, 1, 2])})
    model = cls(learners=2, **{param: [0, 1, 2]})
    with pytest.raises(ValueError, match="must not hold NaN"):
        model.set_params(**{param: [0, np.nan]})
    assert getattr(model, param) == [0, 1, 2]


def test_more_learners_than_memory_is_an_error_naming_them(capsys):
    # NumPy's "Maximum allowed dimension exceeded" named no parameter, from Python or the CLI
    with pytest.raises(
        ValueError, match=r"AdaOLMR\.learners must be in \[1, 9223372036854775807\]"
    ):
        AdaOLMR(learners=10**20)
    model = AdaOLMR(learners=10**15, seed=1, labels=3)
    rejects(
        model, lambda: model.learn_one(np.zeros(3), {0}), MemoryError,
        r"AdaOLMR: no room for the arrays of 1000000000000000 learners over 3 .*lower learners",
    )  # fmt: skip
    assert not model._started
    argv = ["run", "--dataset", "emotions", "--learners", str(10**15), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("olboost: error: AdaOLMR: no room") and len(err.splitlines()) == 1


def test_none_in_the_first_dict_is_reported_as_missing():
    model = StrictRanker(labels=3)
    rejects(model, lambda: model.learn_one({"a": 1.0, "b": None}, {1}), ValueError, r"\(None\)")


def test_a_sparse_matrix_without_columns_starts_nothing():
    for model in (small(AdaOLMR), small(AdaBoostOLM)):
        empty = sp.csr_array((4, 0))
        rejects(model, lambda m=model, e=empty: m.learn(e, Y_of(m, 4)), ValueError, "X has no f")
        rejects(model, lambda m=model: m.learn(np.zeros((4, 0)), Y_of(m, 4)), ValueError, "no f")
        assert not model._started


def test_a_failed_start_on_arrays_leaves_no_outputs_behind():
    # the outputs of a model built without them are fixed inside the start's rollback
    for cls in (AdaOLMR, AdaBoostOLM):
        outputs = "labels" if issubclass(cls, RankingLearner) else "classes"
        model = cls(VFDTCommittee(nominal_attributes={9: 3}), learners=2, seed=1, **{outputs: None})
        before = pickle.dumps(model)
        with pytest.raises(ValueError, match="nominal_attributes"):
            model.learn(np.zeros((4, 3)), Y_of(model, 4))
        assert pickle.dumps(model) == before


@pytest.mark.parametrize("cls", BOOSTERS)
@pytest.mark.parametrize("started", [False, True], ids=["fresh", "started"])
def test_an_array_call_with_a_row_the_committee_rejects_learns_no_row(cls, started):
    outputs = "labels" if issubclass(cls, RankingLearner) else "classes"
    model = cls(
        VFDTCommittee(nominal_attributes={0: 3}), learners=2, seed=1, **{outputs: 3}
    )  # fmt: skip
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(3, size=40), rng.normal(size=40)]).astype(float)
    if started:
        model.learn(X, Y_of(model, 40))
    bad = X.copy()
    # the first code beyond the attribute's 3 categories (a mutation campaign, session 51: a
    # check taking code 3 as valid, which writes into the next attribute's cells, passed)
    bad[25, 0] = 3.0
    paths = [model.learn, model.score_then_learn] if outputs == "labels" else [model.learn]
    if outputs == "classes":
        paths.append(model.predict_then_learn)
    for path in paths:
        rejects(
            model,
            lambda p=path: p(bad, Y_of(model, 40)),
            ValueError,
            "X row 25: nominal.*attribute 0 has 3 categories, got 3",
        )
        rejects(model, lambda p=path: p(sp.csr_array(bad), Y_of(model, 40)), ValueError, "row 25")
    y = {0} if outputs == "labels" else 0
    rejects(model, lambda: model.learn_one(bad[25], y), ValueError, "3 categories, got 3")
    assert model._started == started


def test_a_rejected_row_beyond_the_first_block_is_named_by_its_row_in_x():
    # the rows are checked in blocks of at most 4,096: a mutant naming the row by its place in
    # its block (404 for 4,500) survived the suite (mutation round 8)
    model = AdaOLMR(VFDTCommittee(nominal_attributes={0: 3}), learners=2, seed=1, labels=3)
    X = np.zeros((5000, 2))
    X[4500, 0] = 5.0
    Y = np.zeros((5000, 3), dtype=bool)
    Y[:, 0] = True
    rejects(model, lambda: model.learn(X, Y), ValueError, r"X row 4500: nominal")


def test_a_nominal_code_off_an_integer_is_shown_as_given_naming_the_model():
    # formatted with :g, 2.0000001 read "got 2", a valid code
    model = AdaOLMR(VFDTCommittee(nominal_attributes={0: 3}), learners=2, seed=1, labels=3)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(3, size=20), rng.normal(size=20)]).astype(float)
    X[4, 0] = 2.0000001
    rejects(
        model,
        lambda: model.learn(X, Y_of(model, 20)),
        ValueError,
        r"AdaOLMR: X row 4: .*attribute 0 has 3 categories, got 2\.0000001",
    )


def test_a_linear_committee_under_the_entropy_rejects_an_array_call_whole():
    from olboost import LinearCommittee

    model = AdaOLMR(
        LinearCommittee(complexity="entropy", scale="none", margin=(0.1, 0.5)),
        learners=2,
        seed=1,
        labels=3,
    )
    X = np.random.default_rng(0).uniform(size=(30, 4))
    model.learn(X, Y_of(model, 30))
    bad = X.copy()
    bad[17, 2] = 1.5
    rejects(model, lambda: model.learn(bad, Y_of(model, 30)), ValueError, "X row 17: .*1.5")


# ------------------------------------------------------------------------------ missing values


def test_the_missing_hook_lets_nan_none_and_absent_keys_through_as_nan():
    model = RecordingRanker(labels=3)
    model.learn_one({"b": 2.0, "a": None}, {1})  # features fixed: ['a', 'b']
    model.learn_one({"a": np.nan, "b": 1.0}, {1})
    model.learn_one({"b": 3.0}, {0})  # 'a' absent
    model.learn_one({"a": 4.0, "b": 5.0, "z": 9.0}, {2})  # 'z' unseen at start: ignored
    assert model.feature_names_in_ == ["a", "b"] and model.n_features_in_ == 2
    np.testing.assert_array_equal(
        np.array(model.seen_), [[np.nan, 2.0], [np.nan, 1.0], [np.nan, 3.0], [4.0, 5.0]]
    )
    assert model.score_one({"b": None}) == {0: 0.0, 1: 0.0, 2: 0.0}
    # infinities and huge values are still rejected, naming the key
    rejects(model, lambda: model.learn_one({"a": np.inf}, {1}), ValueError, "key 'a'.*not an inf")
    rejects(model, lambda: model.learn_one({"b": -1e200}, {1}), ValueError, "too large.*key 'b'")
    rejects(model, lambda: model.score_one({"a": -np.inf}), ValueError, "key 'a'")


def test_the_missing_hook_covers_vectors_and_dense_and_sparse_arrays():
    model = RecordingRanker()
    X = np.array([[1.0, np.nan], [np.nan, 2.0], [3.0, 4.0]])
    Y = np.eye(3, dtype=bool)
    model.score_then_learn(X, Y)
    model.learn(sp.csr_array(X), Y)
    model.learn_one(np.array([np.nan, np.nan]), {0})
    assert model.score(X).shape == (3, 3)
    seen = np.array(model.seen_)
    np.testing.assert_array_equal(seen[:6], np.vstack([X, X]))
    assert np.isnan(seen[6]).all()
    bad = X.copy()
    bad[2, 1] = np.inf
    rejects(model, lambda: model.learn(bad, Y), ValueError, "row 2, feature 1")
    rejects(model, lambda: model.learn(sp.csr_array(bad), Y), ValueError, "row 2, feature 1")
    rejects(model, lambda: model.score(bad), ValueError, "row 2, feature 1")
    rejects(model, lambda: model.learn_one(bad[2], {0}), ValueError, "feature 1")

    clf = RecordingClassifier()
    clf.predict_then_learn(X, ["u", "v", "u"])
    clf.learn_one([np.nan, 1.0], "v")
    assert clf.predict_one([np.nan, np.nan]) == "u"
    assert clf.predict(X).shape == (3,)
    assert len(clf.seen_) == 4 and np.isnan(clf.seen_[3][0])
    rejects(clf, lambda: clf.predict_then_learn(bad, ["u", "v", "u"]), ValueError, "row 2")


def test_without_the_hook_missing_values_are_rejected_everywhere():
    model = StrictRanker(labels=3)
    model.learn_one(np.ones(3), {1})
    X = np.zeros((3, 3))
    X[1, 0] = np.nan
    match = r"missing value \(NaN\) at .*does not accept missing values"
    rejects(model, lambda: model.learn_one(X[1], {1}), ValueError, match)
    rejects(model, lambda: model.score_one(X[1]), ValueError, match)
    rejects(model, lambda: model.learn(X, Y_of(model, 3)), ValueError, "row 1, feature 0")
    rejects(model, lambda: model.score(X), ValueError, "row 1, feature 0")
    rejects(model, lambda: model.learn(sp.csr_array(X), Y_of(model, 3)), ValueError, "row 1, f")


@pytest.mark.parametrize(
    "params",
    [
        {"grace_period": (1.0, math.inf)},
        {"weight_multiplier": (math.inf, math.inf)},
        {"tie_threshold": (0.1, math.inf)},
        {"leaf_prior": math.inf},  # (w + inf) / (W + k inf) is NaN; an infinite nb_threshold
        # is allowed: naive Bayes never predicts
    ],
)
def test_committee_ranges_and_priors_must_be_finite(params):
    name = next(iter(params))
    with pytest.raises(ValueError, match=name):
        VFDTCommittee(**params)


def test_a_committee_started_with_a_negative_seed_stays_unstarted():
    committee = VFDTCommittee()
    before = pickle.dumps(committee)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        committee.start(3, 2, 2, seed=-1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        committee.start(3, 2, 2, seed=1.5)
    assert pickle.dumps(committee) == before
    committee.start(3, 2, 2, seed=1)  # and it can still start
    assert committee.predict(np.zeros(2)).shape == (3, 2)


def test_a_refused_start_leaves_the_committee_as_it_was():
    # a nominal column beyond n_attributes was refused after n_attributes_ was set: the
    # committee counted as started with no trees (AttributeError on nominal_columns_), and a
    # restarted one kept its old nominal columns with the new width (read past the row)
    committee = VFDTCommittee(nominal_attributes={5: 3})
    before = pickle.dumps(committee)
    with pytest.raises(ValueError, match=r"names column\(s\) \[5\] but there are only 3"):
        committee.start(2, 2, 3, seed=1)
    assert pickle.dumps(committee) == before
    with pytest.raises(RuntimeError, match="is not started: call start"):
        committee.predict(np.zeros(3))
    committee.start(2, 2, 10, seed=1)
    committee.learn(np.zeros(10), np.ones((2, 2)))
    before = pickle.dumps(committee)
    with pytest.raises(ValueError, match="but there are only 3"):
        committee.start(2, 2, 3, seed=1)
    assert pickle.dumps(committee) == before
    assert committee.predict(np.zeros(10)).shape == (2, 2)
    # counts sized into int64 arrays at start: 2**63 was an OverflowError there
    with pytest.raises(ValueError, match="category counts must be at most 2147483647"):
        VFDTCommittee(nominal_attributes={0: 2**63})


# ------------------------------------------------- weights a learner would refuse too late


def test_a_weight_multiplier_beyond_its_bound_is_refused_before_anything_starts():
    from olboost.weak.base import MAX_WEIGHT_MULTIPLIER

    # 1.7e308 was accepted, and every learn call then failed in the trees after t_ had moved
    with pytest.raises(ValueError, match=r"weight_multiplier\[1\] must be in \(0, 1e\+100\]"):
        VFDTCommittee(n_features=2, weight_multiplier=(1.0, 1.7e308))
    for cls in (OnlineBMR, AdaOLMR, OzaBoost):
        outputs = "labels" if issubclass(cls, RankingLearner) else "classes"
        committee = VFDTCommittee(n_features=2)
        model = cls(committee, learners=3, seed=1, **{outputs: 3})
        committee.weight_multiplier = (1.0, 1.7e308)  # set after construction: caught at start
        y = target(model)
        rejects(model, lambda m=model, y=y: m.learn_one([0.1, 0.2], y), ValueError, "1e\\+100")
        assert not model._started
    top = VFDTCommittee(weight_multiplier=(MAX_WEIGHT_MULTIPLIER, MAX_WEIGHT_MULTIPLIER))
    model = OnlineBMR(top, learners=3, seed=1, labels=3)
    rng = np.random.default_rng(0)
    for i in range(30):  # the largest multiplier learns: the weights stay finite
        model.learn_one(rng.normal(size=2), {i % 3})
    assert np.isfinite(list(model.score_one([0.1, 0.2]).values())).all()


def test_a_topk_feedback_with_a_pair_probability_below_the_floor_is_refused():
    from olboost import TopkAdaptive, TopkBBM
    from olboost.feedback import MIN_PAIR_PROBABILITY, TopkFeedback

    shown, relevant = np.array([0, 1, 2]), np.array([True, False, True])
    for p in (1e-310, 1e-200, MIN_PAIR_PROBABILITY / 2):
        with pytest.raises(ValueError, match="at least 1e-100 .MIN_PAIR_PROBABILITY."):
            TopkFeedback(shown, relevant, np.full((3, 3), p))
    # At the floor, with nothing clipped and the largest multiplier, no weight overflows: the
    # learners take every example the booster learned (before, 1e-310 made them refuse one
    # after the booster had moved on, and 1e-300 passed them weights near 1e300).
    rng = np.random.default_rng(0)
    for cls, clips in [
        (TopkBBM, {"clip_probability": None}),
        (TopkAdaptive, {"clip_probability": None, "clip_gradient": None}),
    ]:
        committee = VFDTCommittee(n_features=3, weight_multiplier=(1e100, 1e100))
        model = cls(committee, learners=4, seed=1, labels=list("abcde"), k=3, **clips)
        for i in range(10):
            model.learn_one(rng.normal(size=4), {"a", "c"} if i % 2 else {"b"})
        for i in range(20):
            floor = np.full((3, 3), MIN_PAIR_PROBABILITY)
            model.learn_one(rng.normal(size=4), TopkFeedback(shown, relevant ^ (i % 2 == 0), floor))
        assert model.t_ == 30
        assert np.isfinite(list(model.score_one(rng.normal(size=4)).values())).all()


# ------------------------------------------------ parameters that made a started state


def test_a_started_committee_refuses_new_parameters_before_anything_changes():
    # A started LinearCommittee took set_params(bias=True) and its kernels then wrote outside
    # theta_ (a segfault, or heap corruption), and average=True read a (N, 0, 0) array
    # (predictions changing from run to run); the trees ignored new values silently.
    from olboost import LinearCommittee, MixedCommittee

    rng = np.random.default_rng(0)
    for committee, params in [
        (LinearCommittee(n_features=3, bias=False), {"bias": True}),
        (LinearCommittee(n_features=3, average=False), {"average": True}),
        (LinearCommittee(n_features=3), {"C": (0.5, 2.0)}),
        (VFDTCommittee(n_features=3), {"grace_period": (1.0, 2.0)}),
        (MixedCommittee([VFDTCommittee(), LinearCommittee()]), {"shares": [2.0, 1.0]}),
    ]:
        committee.start(n_learners=3, n_labels=3, n_attributes=4, seed=2)
        for _ in range(20):
            z = rng.uniform(size=4)
            committee.learn(z, np.eye(3)[[np.argmax(z[:3])] * 3])
        before = pickle.dumps(committee)
        name = next(iter(params)).partition("__")[0]
        with pytest.raises(ValueError, match=rf"{name}.* cannot change once the committee has"):
            committee.set_params(**params)
        assert pickle.dumps(committee) == before
        same = {name: getattr(committee, name)}
        committee.set_params(**same)  # the same value is no change
        fresh = committee.clone(params)  # what the message says to do
        fresh.start(n_learners=3, n_labels=3, n_attributes=4, seed=2)
        assert np.isfinite(fresh.predict(rng.uniform(size=4))).all()


def test_a_committee_refuses_attributes_beyond_max_abs_feature():
    # a LinearCommittee learned x = [1e300, 0]: its running second moment became inf for good
    # and attribute 0 read as 0 from then on; the learner layer refused it, the committee not
    from olboost import LinearCommittee, MixedCommittee
    from olboost.online.inputs import MAX_ABS_FEATURE

    for committee in (
        VFDTCommittee(),
        LinearCommittee(),
        MixedCommittee([VFDTCommittee(), LinearCommittee()]),
    ):
        committee.start(n_learners=2, n_labels=2, n_attributes=2, seed=0)
        committee.learn(np.array([0.5, -0.5]), np.ones((2, 2)))
        before = pickle.dumps(committee)
        for big in (1e300, -1e101):
            x = np.array([big, 0.0])
            with pytest.raises(ValueError, match=r"attribute 0 beyond \+/-1e\+100"):
                committee.learn(x, np.ones((2, 2)))
            with pytest.raises(ValueError, match="MAX_ABS_FEATURE"):
                committee.predict(x)
        assert pickle.dumps(committee) == before
        committee.learn(np.array([MAX_ABS_FEATURE, 0.0]), np.ones((2, 2)))  # the bound itself
        assert np.isfinite(committee.predict(np.array([1.0, 0.0]))).all()


def test_a_committee_used_before_start_says_so():
    # every method gave an AttributeError on an internal name (n_attributes_, setup_, parts_)
    from olboost import LinearCommittee, MixedCommittee

    for committee in (
        VFDTCommittee(),
        LinearCommittee(),
        MixedCommittee([VFDTCommittee(), LinearCommittee()]),
    ):
        before = pickle.dumps(committee)
        for call in (
            lambda c=committee: c.predict(np.zeros(3)),
            lambda c=committee: c.learn(np.zeros(3), np.ones((2, 2))),
            lambda c=committee: c.compiled(),
        ):
            with pytest.raises(RuntimeError, match="is not started: call start"):
                call()
        assert pickle.dumps(committee) == before


def test_a_committee_checks_rows_before_start_from_its_parameters():
    # an evaluation checks every split before its model starts (the committee is cloned at
    # start): the row conditions follow from the parameters, and checking changes nothing
    from olboost import LinearCommittee, MixedCommittee

    X = np.full((4, 3), 0.5)
    X[:, 0] = [1.0, 0.0, 7.0, 2.0]  # codes of column 0 (2 is one for VFDT, not in [0, 1])
    nominal = VFDTCommittee(nominal_attributes={0: 3, 9: 2})  # column 9: the start refuses it
    entropy = LinearCommittee(complexity="entropy", scale="none", margin=(0.1, 0.5))
    for committee, bad, problem in [
        (nominal, 2, "attribute 0 has 3 categories, got 7"),
        (entropy, 2, "x has the value 7 at attribute 0"),
        (MixedCommittee([LinearCommittee(), nominal]), 2, "attribute 0 has 3 categories"),
        (MixedCommittee([entropy, nominal]), 2, "x has the value 7 at attribute 0"),
        (VFDTCommittee(), 4, None),
        (LinearCommittee(complexity="entropy", scale="minmax", margin=(0.1, 0.5)), 4, None),
    ]:
        before = pickle.dumps(committee)
        assert committee.rejects_rows() == (problem is not None)
        assert committee.check_rows(X) == bad
        assert (
            committee.row_problem(X[2]) is None
            if problem is None
            else problem in (committee.row_problem(X[2]))
        )
        assert committee.row_problem(X[0]) is None
        assert pickle.dumps(committee) == before


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((3, 1, 4), "n_labels must be at least 2, got 1"),
        ((3, 0, 4), "n_labels must be at least 2, got 0"),
        ((0, 3, 4), "n_learners must be at least 1, got 0"),
        ((3, 3, 0), "n_attributes must be at least 1, got 0"),
        ((3.0, 3, 4), "n_learners must be an integer"),
    ],
)
def test_a_committee_start_checks_its_sizes_before_it_starts(args, match):
    from olboost import LinearCommittee

    for committee in (VFDTCommittee(n_features=3), LinearCommittee(n_features=3)):
        before = pickle.dumps(committee)
        with pytest.raises((ValueError, TypeError), match=match):
            committee.start(*args, seed=1)
        assert pickle.dumps(committee) == before


def test_a_started_model_refuses_new_outputs_or_committee():
    # accepted before: get_params and repr showed classes ['a', 'b', 'c'] or a linear committee
    # while the model went on predicting 0..2 with its trees (and refused learn_one(x, "a"))
    from olboost import AdaBoostOLM, LabelRanker, LinearCommittee

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 4)), rng.integers(0, 3, 50)
    booster = AdaBoostOLM(VFDTCommittee(), learners=3, seed=1, classes=3).learn(X, y)
    ranker = LabelRanker(labels=3, seed=1).learn(X, np.eye(3, dtype=bool)[y])
    for model, params, name in [
        (booster, {"classes": ["a", "b", "c"]}, "classes"),
        (booster, {"committee": LinearCommittee()}, "committee"),
        (booster, {"committee__n_features": 2}, "committee"),
        (ranker, {"labels": ["x", "y", "z"]}, "labels"),
    ]:
        rejects(
            model,
            lambda m=model, p=params: m.set_params(**p),
            ValueError,
            f"{name} cannot change once the (model|ranker) has started",
        )
    booster.set_params(classes=3, hedge_rate=0.5)  # the same outputs, and a rate, may be set
    ranker.set_params(labels=3)
    assert booster.predict_one(X[0]) in (0, 1, 2) and set(ranker.predict_one(X[0])) <= {0, 1, 2}


def test_a_started_model_cloned_with_its_state_refuses_fixed_parameters():
    # clone(new, include_attributes=True) copied the learned state under the new parameters:
    # an OnlineMBBM cloned from 30 learners to 2 built its tables for 2 and indexed them with
    # the committee's 30 (out of bounds), an OzaBoost failed after t_ moved, and a clone with
    # other classes or seed showed them while predicting with the old ones
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 3, 40)
    for cls in (AdaBoostOLM, OnlineMBBM, OzaBoost):
        model = cls(VFDTCommittee(), learners=5, seed=1, classes=3).learn(X, y)
        for params in ({"learners": 2}, {"classes": ["a", "b", "c"]}, {"seed": 9},
                       {"committee": (VFDTCommittee, {"n_features": 2})}):  # fmt: skip
            name = next(iter(params))
            rejects(
                model,
                lambda m=model, p=params: m.clone(p, include_attributes=True),
                ValueError,
                f"{name} cannot change once the model has started",
            )
        twin = model.clone({"learners": 5, "seed": 1}, include_attributes=True)  # the same values
        assert pickle.dumps(twin) == pickle.dumps(model)
        assert model.clone({"learners": 2}).learners == 2  # a fresh model may take anything


def test_parameters_set_on_a_started_model_are_the_ones_it_uses():
    # set_params(alpha_bound=0.5) showed 0.5 while Adaboost.OLM went on projecting onto [-2, 2]
    # (alpha_bound_ and step_scale_ are made from the parameters at start), and OnlineMBBM's
    # weight bounds stayed those of the old weight_bound and gamma
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 4)), rng.integers(0, 3, 60)
    for cls in (AdaBoostOLM, OvaAdaBoostOL, AdaOVA):
        for params in ({"alpha_bound": 0.5, "step_scale": 0.01}, {"loss": "square_hinge"}):
            started = cls(VFDTCommittee(), learners=4, seed=1, classes=3).learn(X[:30], y[:30])
            started.set_params(**params)
            fresh = cls(VFDTCommittee(), learners=4, seed=1, classes=3, **params)
            fresh.learn(X[:1], y[:1])
            assert (started.alpha_bound_, started.step_scale_) == (
                fresh.alpha_bound_,
                fresh.step_scale_,
            )
            cloned = cls(VFDTCommittee(), learners=4, seed=1, classes=3).learn(X[:30], y[:30])
            cloned = cloned.clone(params, include_attributes=True)
            assert cloned.alpha_bound_ == fresh.alpha_bound_
            started.learn(X[30:], y[30:])
            assert np.abs(started.alpha_).max() <= started.alpha_bound_
    for params in ({"weight_bound": "authors"}, {"gamma": 0.3}, {"weight_bound": "trivial"}):
        started = OnlineMBBM(VFDTCommittee(), learners=4, seed=1, classes=3).learn(X, y)
        fresh = OnlineMBBM(VFDTCommittee(), learners=4, seed=1, classes=3, **params)
        fresh.learn(X[:1], y[:1])
        np.testing.assert_array_equal(started.set_params(**params).w_star_, fresh.w_star_)


def test_a_bool_is_not_taken_for_an_integer_class():
    # True == 1 as a dict key: learn_one(x, True) learned class 1 of classes [0, 1, 2], 1 was
    # learned as True of [False, True], and y = [True, 2, 0, False, 1] gave classes [0, True, 2]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    ints = AdaBoostOLM(VFDTCommittee(), learners=2, seed=1, classes=[0, 1, 2])
    bools = AdaBoostOLM(VFDTCommittee(), learners=2, seed=1, classes=[False, True])
    for model, y in [(ints, True), (ints, np.bool_(False)), (bools, 1), (bools, np.int64(0))]:
        rejects(model, lambda m=model, v=y: m.learn_one(X[0], v), ValueError, "unknown class")
        rejects(model, lambda m=model, v=y: m.learn(X[:1], [v]), ValueError, "unknown class")
    # a class met first as itself, then as a bool (and the other way round) in one array:
    # looked up once per distinct value, the two must not share a lookup
    for model, y in [(ints, [1, True]), (ints, [True, 1]), (bools, [True, 1]), (bools, [1, True])]:
        rejects(model, lambda m=model, v=y: m.learn(X[:2], v), ValueError, "unknown class")
    ints.learn_one(X[0], np.int64(2))  # what equals a class and is no bool still is one
    bools.learn_one(X[0], np.bool_(True))
    fresh = AdaBoostOLM(VFDTCommittee(), learners=2, seed=1)
    rejects(
        fresh,
        lambda: fresh.learn(X[:5], [True, 2, 0, False, 1]),
        ValueError,
        r"y mixes bool and other classes \(True at row 0, 2 at row 1\)",
    )
    assert fresh.learn(X[:2], [True, False]).classes_ == [False, True]


def test_a_bool_is_not_taken_for_the_label_0_or_1():
    # set(np.array([False, False, True, True])) is {False, True}: labels 0 and 1 were learned
    # as relevant instead of an error; a click on True clicked the shown label 1
    from olboost import TopkAdaptive

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 3))
    model = AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=[0, 1, 2, 3])
    model.learn_one(X[0], {2, 3})
    for y in (set(np.array([False, False, True, True])), {True: True, 3: False}, {np.True_}):
        rejects(model, lambda m=model, v=y: m.learn_one(X[1], v), ValueError, "unknown label")
    named = AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=[False, True, "x"])
    rejects(named, lambda: named.learn_one(X[1], {1}), ValueError, "unknown label 1")
    named.learn_one(X[1], {True, "x"})
    topk = TopkAdaptive(VFDTCommittee(), learners=2, seed=1, labels=[0, 1, 2, 3], k=3)
    impression = topk.show_one(X[2])
    with pytest.raises(ValueError, match="clicked label True was not shown"):
        impression.feedback([True])
    assert impression.feedback([impression.labels[0]]).relevant.sum() == 1


def test_a_label_frame_is_read_by_column_name():
    # Y's columns were read by position: a frame with columns c, b, a learned every label from
    # another one's column, and columns x, y, z of no label were taken; a sparse Y failed with
    # "got shape ()"
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = rng.random((30, 3)) < 0.5
    Y[:, 0] = True

    def model():
        return AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=["a", "b", "c"])

    by_array = pickle.dumps(model().learn(X, Y))
    reordered = pd.DataFrame(Y[:, ::-1], columns=["c", "b", "a"])
    assert pickle.dumps(model().learn(X, reordered)) == by_array
    assert pickle.dumps(model().learn(X, pd.DataFrame(Y))) == by_array  # unnamed: by position
    assert pickle.dumps(model().learn(X, sp.csr_array(Y))) == by_array
    started = model().learn(X[:5], Y[:5])
    for frame, said in [
        (pd.DataFrame(Y, columns=["x", "y", "z"]), "missing 'a', 'b', 'c', unexpected 'x'"),
        (pd.DataFrame(Y[:, :2], columns=["a", "b"]), "missing 'c', unexpected none"),
    ]:
        rejects(started, lambda F=frame: started.learn(X, F), ValueError, re.escape(said))


def test_a_label_frame_whose_columns_are_the_int_labels_is_read_by_name():
    # columns 0, 1, 2 in order were taken for pandas' default and read by position, also where
    # they name the model's labels in another order (labels=[2, 1, 0]: labels 0 and 2 swapped)
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = rng.random((30, 3)) < 0.5
    frame = pd.DataFrame(Y, columns=[0, 1, 2])

    def model(labels=(2, 1, 0)):
        return AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=list(labels))

    by_array = pickle.dumps(model().learn(X, Y[:, ::-1]))
    assert pickle.dumps(model().learn(X, frame)) == by_array
    assert pickle.dumps(model().learn(X, frame[[2, 1, 0]])) == by_array
    # labels taken from a first frame, and a later one in pandas' order
    started = AdaOLMR(VFDTCommittee(), learners=2, seed=1).learn(X[:10], frame[[2, 1, 0]][:10])
    assert started.labels_ == [2, 1, 0]
    started.learn(X[10:], frame[10:])
    np.testing.assert_array_equal(started.score(X), model().learn(X, frame).score(X))
    # columns 0..k-1 that are no labels of the model's: pandas' default, by position
    assert pickle.dumps(model("cba").learn(X, frame)) == pickle.dumps(model("cba").learn(X, Y))


def test_a_label_frame_tells_bool_labels_from_int_columns():
    # True == 1: pandas' default columns 0, 1 were taken for the labels [True, False], and
    # Y[[True, False]] read as a mask of rows ("Item wrong length"); columns True, False for
    # the labels 0, 1 gave pandas' bare KeyError
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 3))
    Y = rng.random((3, 2)) < 0.5

    def model(labels):
        return AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=labels)

    by_array = pickle.dumps(model([True, False]).learn(X, Y))
    assert pickle.dumps(model([True, False]).learn(X, pd.DataFrame(Y))) == by_array
    named = pd.DataFrame(Y[:, ::-1], columns=[False, True])
    assert pickle.dumps(model([True, False]).learn(X, named)) == by_array
    ints = model([0, 1])
    with pytest.raises(ValueError, match=r"Y's columns are not the model's labels \(missing 0, 1"):
        ints.learn(X, pd.DataFrame(Y, columns=[True, False]))
    with pytest.raises(ValueError, match="Y names a label twice"):
        model(["a", "b"]).learn(X, pd.DataFrame(np.c_[Y, Y[:, :1]], columns=["a", "b", "a"]))


def test_a_label_frame_names_the_labels_of_a_model_without_them():
    # with labels=None the frame's names were dropped (labels 0..k-1, read by position), and
    # the next chunk of the same frame was refused ("missing 0, 1, 2, unexpected 'sport'")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = pd.DataFrame(rng.random((40, 3)) < 0.5, columns=["sport", "music", "news"])
    model = AdaOLMR(VFDTCommittee(), learners=2, seed=1).learn(X[:20], Y[:20])
    assert model.labels_ == ["sport", "music", "news"]
    model.learn(X[20:], Y[20:][["news", "sport", "music"]])
    named = AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=["sport", "music", "news"])
    np.testing.assert_array_equal(model.score(X), named.learn(X, Y).score(X))
    unnamed = AdaOLMR(VFDTCommittee(), learners=2, seed=1).learn(X, pd.DataFrame(Y.to_numpy()))
    assert unnamed.labels_ == [0, 1, 2]  # pandas' default columns name nothing


@pytest.mark.parametrize("cls", [AdaOLMR, AdaBoostOLM])
def test_a_model_started_on_a_frame_reads_later_frames_by_column_name(cls):
    # the frame's names were not kept: a frame with its columns in another order was read by
    # position (other scores, silently), and a dict of the same row was refused
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    ranking = cls is AdaOLMR
    outputs = {"labels": ["x", "y", "z"]} if ranking else {"classes": 3}
    targets = X.to_numpy() > 0 if ranking else (X["a"] > 0).to_numpy().astype(int)

    def started(frame):
        model = cls(VFDTCommittee(n_features=2), learners=3, seed=1, **outputs)
        return model.learn(frame[:30], targets[:30])

    model = started(X)
    assert model.feature_names_in_ == ["a", "b", "c"]
    scores = model.score if ranking else model.votes
    reordered = X[["c", "a", "b"]]
    np.testing.assert_array_equal(scores(reordered[30:]), scores(X[30:]))
    assert pickle.dumps(started(reordered)) != pickle.dumps(model)  # the frame's order counts
    row = X.iloc[30].to_dict()
    first = model.score_one(row) if ranking else model.predict_proba_one(row)
    again = model.score_one if ranking else model.predict_proba_one
    assert first == again(dict(reversed(row.items())))
    rejects(model, lambda: scores(X.to_numpy()[30:]), ValueError, "without column names")
    # pandas' default columns 0..d-1 name nothing: the frame is read by position
    by_position = cls(VFDTCommittee(n_features=2), learners=3, seed=1, **outputs)
    by_position.learn(pd.DataFrame(X.to_numpy()), targets)
    assert by_position.feature_names_in_ is None
    by_position.learn(X.to_numpy(), targets)


def test_pandas_na_in_a_frame_is_a_missing_value_as_in_a_dict():
    # a nullable column's gap (pd.NA) was a missing value in a dict but a TypeError ("not
    # 'NAType'") through score and learn; on a model without missing values it is refused as one
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    Y = rng.random((12, 2)) < 0.5
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).astype("Float64")
    frame.iloc[0, 1] = pd.NA
    with_nan = frame.astype(float)
    assert np.isnan(with_nan.iloc[0, 1])

    def model(**committee):
        return AdaOLMR(VFDTCommittee(n_features=2, **committee), learners=3, seed=1, labels=2)

    np.testing.assert_array_equal(
        model().score_then_learn(frame, Y), model().score_then_learn(with_nan, Y)
    )
    strict = model(missing="error")
    rejects(strict, lambda: strict.learn(frame, Y), ValueError, "row 0, column .b.")


def test_a_started_label_ranker_refuses_another_complexity():
    from olboost import LabelRanker

    rng = np.random.default_rng(0)
    X = (rng.random((50, 8)) < 0.4).astype(float)
    Y = rng.random((50, 3)) < 0.4
    model = LabelRanker(update="III", complexity="squared", C=1.0, margin=0.5, seed=0)
    model.learn(X, Y)
    # it scored the squared norm's weights as entropic ones (scores near 3, where the entropy's
    # are averages of features in [0, 1])
    rejects(
        model,
        lambda: model.set_params(complexity="entropy", margin=0.1),
        ValueError,
        "complexity cannot change once the ranker has started",
    )
    model.set_params(C=0.5, margin=0.2, update="II")  # these may change: the same dual
    model.learn(X, Y)
    assert np.isfinite(model.score(X[:2])).all()


@pytest.mark.parametrize("cls_name", ["TopkBBM", "TopkAdaptive"])
def test_a_started_topk_booster_refuses_another_k_and_keeps_its_impressions(cls_name):
    # k was accepted on a started model: its impressions then showed the new k, and the feedback
    # of every impression shown before was refused ("the feedback shows 3 labels, the model shows
    # k=4"), though the model id it was shown under had not changed
    import olboost

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 4))
    model = getattr(olboost, cls_name)(VFDTCommittee(n_features=2), learners=2, seed=1,
                                       labels=6, k=3)  # fmt: skip
    model.learn(X[:10], rng.random((10, 6)) < 0.4)
    impression = model.show_one(X[10])
    rejects(model, lambda: model.set_params(k=4), ValueError,
            "k cannot change once the model has started")  # fmt: skip
    model.set_params(k=3, rho=0.2)  # the same k, and another exploration rate, may be set
    model.learn_one(X[10], impression.feedback(list(impression.labels[:1])))
    assert model.t_ == 11
    fresh = model.clone({"k": 4})  # a fresh model with another k
    assert fresh.k == 4 and not fresh._started


# ------------------------------------------------------------- NumPy scalars as parameters


@pytest.mark.parametrize("cls", [*BOOSTERS, "TopkBBM", "TopkAdaptive"])
@pytest.mark.parametrize("kind", [np.uint8, np.int16, np.uint64])
def test_a_numpy_learners_count_learns_as_the_int(cls, kind):
    """``learners=np.uint8(20)`` passes the check (an integer >= 1); it then wrapped around in
    the trees' storage sizes (20 x 16 slots is 64 in uint8: a 'negative dimensions' error or
    short arrays) and in OnlineMBBM's tie-draw counter (an overflow, here an error)."""
    import olboost

    cls = getattr(olboost, cls) if isinstance(cls, str) else cls
    extra = {"tie_break": "random"} if cls is OnlineMBBM else {}
    X = np.random.default_rng(0).normal(size=(40, 3))

    def run(learners):
        outputs = "labels" if issubclass(cls, RankingLearner) else "classes"
        model = cls(VFDTCommittee(n_features=2), learners=learners, seed=1, **{outputs: 3}, **extra)
        with np.errstate(all="raise"):
            if isinstance(model, RankingLearner):
                return model.score_then_learn(X, X[:, :3] > 0)
            return model.predict_then_learn(X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0))

    np.testing.assert_array_equal(run(kind(20)), run(20))


@pytest.mark.parametrize("kind", [np.float32, np.float16])
def test_a_numpy_float_rho_learns_as_the_float(kind):
    """TopkAdaptive's default step ``8 rho sqrt(2) / m^2`` was computed in the type of ``rho``:
    float32 gave other scores than the same value as a float, and float16 reached no kernel (a
    NotImplementedError after the model had started)."""
    from olboost import TopkAdaptive

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 5)), rng.random((30, 4)) < 0.4

    def run(rho):
        committee = VFDTCommittee(n_features=3)
        model = TopkAdaptive(committee, learners=3, seed=1, labels=4, k=2, rho=rho)
        P = model.explorer_.pair_probabilities([3, 1, 0, 2], 2)  # the diagonal is Python's
        return model.score_then_learn(X, Y), model.step_scale_, P

    rho = kind(0.1)
    (s, step, P), (s_ref, step_ref, P_ref) = run(rho), run(float(rho))
    assert type(step) is float and step == step_ref
    np.testing.assert_array_equal(s, s_ref)
    np.testing.assert_array_equal(P, P_ref)


@pytest.mark.parametrize("committee", ["VFDTCommittee", "LinearCommittee"])
def test_a_committee_refuses_complex_and_overflowing_weights_as_the_boosters_do(committee):
    # an integer beyond float64 in the weights was a bare OverflowError; complex weights and x
    # were taken with a mere ComplexWarning, their imaginary parts dropped
    import warnings

    import olboost

    model = getattr(olboost, committee)(**({"n_features": 3} if "VFDT" in committee else {}))
    model.start(3, 4, 5, 1)
    x, W = np.full(5, 0.5), np.ones((3, 4))
    model.learn(x, W)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rejects(model, lambda: model.learn(x, np.full((3, 4), 2**1100, dtype=object)),
                ValueError, "weights holds an integer too large")  # fmt: skip
        rejects(model, lambda: model.learn(x, W * (1 + 5j)), TypeError, "weights must hold real")
        rejects(model, lambda: model.learn(x + 3j, W), TypeError, "real")
        rejects(model, lambda: model.predict(x + 3j), TypeError, "real")


def test_classes_that_do_not_sort_are_refused_naming_y():
    # NumPy's bare "'<' not supported between instances of 'complex' and 'complex'"
    model = AdaBoostOLM(VFDTCommittee(n_features=3), learners=3, seed=1)
    y = [1 + 1j, 2 + 2j, 1 + 1j, 2 + 2j]
    rejects(model, lambda: model.learn(np.zeros((4, 5)), y), TypeError, r"AdaBoostOLM: the class")
    AdaBoostOLM(VFDTCommittee(n_features=3), learners=3, seed=1, classes=y[:2]).learn(
        np.zeros((4, 5)), y
    )


@pytest.mark.parametrize("width", [2, 4])
def test_rows_narrower_or_wider_than_the_model_are_refused_by_their_width(width):
    # a narrower row must fail on its width too, not on what reading past its end does later
    model = small(AdaOLMR)
    model.learn_one(np.ones(3), {1})
    message = f"has {width} features, the model was started with 3"
    rejects(model, lambda: model.learn_one(np.ones(width), {1}), ValueError, message)
    rejects(model, lambda: model.learn(np.ones((2, width)), Y_of(model, 2)), ValueError, message)
    with pytest.raises(ValueError, match=message):
        model.score_one(np.ones(width))


def test_an_unknown_name_that_differs_from_a_known_one_in_normalisation_only_says_so():
    # 'café' composed (NFC) and 'cafe' + a combining accent (NFD) print alike: the message said
    # "unknown label 'café'; known labels are ['café', 'b']"
    import pickle

    from olboost import AdaBoostOLM, AdaOLMR

    composed, decomposed = "caf\u00e9", "cafe\u0301"
    note = (
        r" \('cafe\\u0301' and the known 'caf\\xe9' differ in their Unicode normalisation only: "
        r"names are compared as written\)$"
    )
    ranker = AdaOLMR(learners=2, seed=1, labels=[composed, "b"])
    classifier = AdaBoostOLM(learners=2, seed=1, classes=[composed, "b"])
    for model, call in (
        (ranker, lambda: ranker.learn_one(np.zeros(2), {decomposed})),
        (classifier, lambda: classifier.learn_one(np.zeros(2), decomposed)),
    ):
        before = pickle.dumps(model)
        with pytest.raises(ValueError, match=r"unknown (label|class) 'cafe\u0301'.*" + note):
            call()
        assert pickle.dumps(model) == before
    with pytest.raises(ValueError) as err:  # no note where no known name is a twin
        ranker.learn_one(np.zeros(2), {"cafe"})
    assert "normalisation" not in str(err.value)


@pytest.mark.parametrize("how", ["learn_one", "arrays"])
@pytest.mark.parametrize("cls", [OnlineMBBM, OnlineBMR])
def test_a_first_example_that_fails_to_learn_leaves_the_model_unstarted(cls, how):
    # draws=10**30 passed the parameter checks, the start succeeded, and the first row then
    # failed in NumPy ("Maximum allowed dimension exceeded"): the model was left started on
    # no example, with the features of the refused call (a later plain matrix was refused as
    # "the model's features are named")
    outputs = "labels" if issubclass(cls, RankingLearner) else "classes"
    model = cls(
        VFDTCommittee(n_features=2), learners=2, seed=1, method="monte_carlo", draws=10**30,
        **{outputs: 3},
    )  # fmt: skip
    before = pickle.dumps(model)
    x = {"a": 0.5, "b": -1.0}
    y = {0, 2} if outputs == "labels" else 1
    with pytest.raises((ValueError, MemoryError, OverflowError)):
        if how == "learn_one":
            model.learn_one(x, y)
        elif outputs == "labels":
            model.learn(np.array([[0.5, -1.0], [1.0, 2.0]]), np.array([[1, 0, 1], [0, 1, 0]]))
        else:
            model.learn(np.array([[0.5, -1.0], [1.0, 2.0]]), np.array([1, 2]))
    assert pickle.dumps(model) == before


def test_numpy_scalars_as_parameters_are_checked_without_a_warning():
    # a float32 met the bound 1e100 cast to float32: "overflow encountered in cast", at every
    # construction with a value that was fine
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AdaOLMR(hedge_rate=np.float32(0.5), alpha_bound=np.float32(2.0))
        VFDTCommittee(leaf_prior=np.float32(2.0), n_split_points=np.int32(7))
    # named as NumPy writes it: np.float32(inf), or inf before NumPy 2
    shown = re.escape(repr(np.float32(np.inf)))
    with pytest.raises(ValueError, match=rf"leaf_prior must be in .*, got {shown}$"):
        VFDTCommittee(leaf_prior=np.float32(np.inf))
    # other real numbers keep their exact comparison (float() of this one overflows)
    from fractions import Fraction

    with pytest.raises(ValueError, match="leaf_prior must be in"):
        VFDTCommittee(leaf_prior=Fraction(10**400))


@pytest.mark.parametrize("allow_missing", [False, True])
def test_the_value_check_finds_the_first_bad_value_chunk_by_chunk(allow_missing):
    # the check goes over the values a chunk at a time (it took a copy of the whole input):
    # the first bad value is found wherever it falls, at and across the chunks' edges
    from olboost.online.inputs import _CHECK_CHUNK, MAX_ABS_FEATURE, _first_bad

    n = 3 * _CHECK_CHUNK + 17
    for at in [0, 1, _CHECK_CHUNK - 1, _CHECK_CHUNK, 2 * _CHECK_CHUNK + 3, n - 1]:
        for bad in [np.inf, -np.inf, 2 * MAX_ABS_FEATURE, np.nan]:
            values = np.zeros(n)
            values[at] = bad
            values[at + 5 :][:1] = np.inf  # a later one is not the first
            ok = (np.abs(values) <= MAX_ABS_FEATURE) | (allow_missing & np.isnan(values))
            want = int(np.flatnonzero(~ok)[0]) if not ok.all() else None
            assert want in (at, at + 5, None)
            assert _first_bad(values, allow_missing) == want, (at, bad)
    assert _first_bad(np.full(n, MAX_ABS_FEATURE), allow_missing) is None
    assert _first_bad(np.zeros(0), allow_missing) is None
