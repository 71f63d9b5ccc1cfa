"""Tests for olboost.metrics: the rank-loss kernels against an O(k^2) brute force, conventions,
validation, RunningMean and RankLoss, and the documented difference from sklearn."""

from __future__ import annotations

import math
import pickle

import numba
import numpy as np
import pytest

from olboost.metrics import RankLoss, RunningMean, rank_loss, rank_loss_mask
from olboost.metrics._rank import _rank_loss_batch, _rank_loss_one

# --------------------------------------------------------------------------------------------------
# Obviously-correct reference
# --------------------------------------------------------------------------------------------------


def brute_rank_loss(s, y, weighted=True, empty="paper"):
    """Jung & Tewari (2018) Sec. 3.1, pair by pair."""
    k = len(s)
    rel = [i for i in range(k) if y[i]]
    irr = [r for r in range(k) if not y[r]]
    if not rel or not irr:
        return 0.0 if empty == "paper" else math.nan
    total = 0.0
    for i in rel:
        for r in irr:
            if s[i] < s[r]:
                total += 1.0
            elif s[i] == s[r]:
                total += 0.5
    return total / (len(rel) * len(irr)) if weighted else total


def random_case(rng, k, kind):
    """Scores of a given kind and a relevant mask (sometimes empty or full)."""
    if kind == "float":
        s = rng.normal(size=k)
    elif kind == "ties":
        s = rng.choice(rng.normal(size=max(1, k // 3)), size=k)
    elif kind == "int":
        s = rng.integers(-3, 4, size=k)
    else:  # constant
        s = np.full(k, 1.5)
    u = rng.random()
    if u < 0.1:
        y = np.zeros(k, dtype=bool)
    elif u < 0.2:
        y = np.ones(k, dtype=bool)
    else:
        y = rng.random(k) < rng.uniform(0.1, 0.9)
    return s, y


@pytest.mark.parametrize("kind", ["float", "ties", "int", "constant"])
@pytest.mark.parametrize("k", [1, 2, 3, 7, 20])
def test_matches_brute_force(k, kind):
    rng = np.random.default_rng(1000 * k + len(kind))
    for _ in range(200):
        s, y = random_case(rng, k, kind)
        for weighted in (True, False):
            for empty in ("paper", "skip"):
                expected = brute_rank_loss(s, y, weighted, empty)
                got = rank_loss(s, y, weighted=weighted, empty=empty)
                assert isinstance(got, float)
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(
            rank_loss_mask(s.astype(np.float64), y), brute_rank_loss(s, y), rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("empty", ["paper", "skip"])
def test_batch_matches_rows(seed, empty):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 12))
    rows = [random_case(rng, k, kind) for kind in ("float", "ties", "int", "constant") * 5]
    S = np.array([s for s, _ in rows], dtype=np.float64)
    Y = np.array([y for _, y in rows])
    for weighted in (True, False):
        got = rank_loss(S, Y, weighted=weighted, empty=empty)
        assert got.shape == (len(rows),) and got.dtype == np.float64
        expected = [brute_rank_loss(s, y, weighted, empty) for s, y in rows]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, equal_nan=True)


def test_large_k_exact():
    rng = np.random.default_rng(123)
    s = rng.integers(0, 50, size=3000).astype(np.float64)
    y = rng.random(3000) < 0.3
    assert rank_loss(s, y, weighted=False) == brute_rank_loss(s, y, weighted=False)


def test_known_values_and_conventions():
    s = [0.5, 0.2, 0.2, 0.1]
    assert rank_loss(s, [0, 2]) == 0.125
    assert rank_loss(s, [0, 2], weighted=False) == 0.5
    assert rank_loss(s, [1, 3]) == 0.875
    assert rank_loss(s, 0) == 0.0  # single index: multiclass
    assert rank_loss(s, 3) == 1.0
    assert rank_loss([1.0, 1.0, 1.0], [1]) == 0.5  # all tied: one half
    for y in ([], [0, 1, 2, 3], np.zeros(4, bool), np.ones(4, bool)):
        assert rank_loss(s, y) == 0.0
        assert rank_loss(s, y, weighted=False) == 0.0
        assert math.isnan(rank_loss(s, y, empty="skip"))
    assert rank_loss([2.0], [0]) == 0.0  # k = 1 never has pairs
    assert math.isnan(rank_loss([2.0], [0], empty="skip"))


def test_relevant_forms_agree():
    s = np.array([0.3, 0.9, 0.1, 0.5, 0.5])
    mask = np.array([True, False, False, True, False])
    forms = [
        mask,
        mask.tolist(),
        [0, 3],
        (3, 0),
        {0, 3},
        frozenset({0, 3}),
        np.array([3, 0]),
        np.array([0, 3, 3], dtype=np.uint8),
        [0, 0, 3],
    ]
    expected = brute_rank_loss(s, mask)
    for form in forms:
        assert rank_loss(s, form) == expected, form
    assert rank_loss(s, range(2)) == brute_rank_loss(s, [True, True, False, False, False])


def test_inputs_not_modified():
    s = np.array([3, 1, 2])
    y = np.array([False, True, False])
    s0, y0 = s.copy(), y.copy()
    rank_loss(s, y)
    rank_loss(s[None, :], y[None, :])
    np.testing.assert_array_equal(s, s0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize(
    ("scores", "relevant", "kwargs", "error"),
    [
        ([0.1, np.nan], [0], {}, ValueError),
        ([0.1, np.inf], [0], {}, ValueError),
        ([], [], {}, ValueError),
        (np.zeros((2, 2, 2)), np.zeros((2, 2, 2), bool), {}, ValueError),
        (["a", "b"], [0], {}, TypeError),
        ([0.1, 0.2], [2], {}, ValueError),
        ([0.1, 0.2], [-1], {}, ValueError),
        ([0.1, 0.2], [True, False, True], {}, ValueError),
        ([0.1, 0.2], [0.0], {}, TypeError),
        ([0.1, 0.2], True, {}, TypeError),
        ([0.1, 0.2], [[0], [1]], {}, ValueError),
        ([0.1, 0.2], [0], {"empty": "zero"}, ValueError),
        ([0.1, 0.2], [0], {"weighted": "yes"}, TypeError),
        (np.zeros((2, 3)), np.zeros((2, 3), dtype=int), {}, TypeError),
        (np.zeros((2, 3)), np.zeros((3, 2), dtype=bool), {}, ValueError),
        (np.zeros((2, 3)), [0, 1], {}, TypeError),
    ],
)
def test_validation(scores, relevant, kwargs, error):
    with pytest.raises(error):
        rank_loss(scores, relevant, **kwargs)


def test_kernel_callable_from_numba():
    @numba.njit
    def booster_like(scores, masks):
        total = 0.0
        for t in range(scores.shape[0]):
            total += rank_loss_mask(scores[t], masks[t])
        return total

    rng = np.random.default_rng(7)
    S = rng.integers(0, 3, size=(30, 6)).astype(np.float64)
    Y = rng.random((30, 6)) < 0.4
    expected = sum(brute_rank_loss(s, y) for s, y in zip(S, Y, strict=True))
    assert booster_like(S, Y) == pytest.approx(expected, abs=1e-12)


def test_kernels_nan_scores_do_not_hang():
    s = np.array([np.nan, 0.2, np.nan])
    y = np.array([True, False, False])
    assert math.isnan(rank_loss_mask(s, y))
    assert math.isnan(_rank_loss_one(s, y, False, False))
    assert math.isnan(_rank_loss_batch(s[None, :], y[None, :], True, False)[0])


# --------------------------------------------------------------------------------------------------
# sklearn: documented differences
# --------------------------------------------------------------------------------------------------


def test_sklearn_differences():
    metrics = pytest.importorskip("sklearn.metrics")
    # No ties, every sample has pairs: identical.
    rng = np.random.default_rng(0)
    S = rng.normal(size=(50, 6))
    Y = rng.random((50, 6)) < 0.4
    Y[:, 0] = True
    Y[:, 1] = False
    assert rank_loss(S, Y).mean() == pytest.approx(metrics.label_ranking_loss(Y, S), abs=1e-12)

    # Ties: sklearn counts a tied pair as a full error, we count 1/2.
    s = np.array([[0.5, 0.5, 0.1]])
    y = np.array([[True, False, False]])
    assert metrics.label_ranking_loss(y, s) == pytest.approx(0.5)  # (1 tie) / 2 pairs
    assert rank_loss(s, y)[0] == pytest.approx(0.25)  # (1/2 tie) / 2 pairs
    const = np.ones((1, 4))
    mask = np.array([[True, False, True, False]])
    assert metrics.label_ranking_loss(mask, const) == pytest.approx(1.0)
    assert rank_loss(const, mask)[0] == pytest.approx(0.5)

    # No pairs: sklearn scores 0 and averages it in, i.e. empty="paper"; "skip" leaves it out.
    S2 = np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1], [0.3, 0.2, 0.1]])
    Y2 = np.array([[True, False, False], [False, False, False], [True, True, True]])
    assert metrics.label_ranking_loss(Y2, S2) == pytest.approx(rank_loss(S2, Y2).mean())
    assert metrics.label_ranking_loss(Y2, S2) == pytest.approx(1.0 / 3.0)
    assert np.nanmean(rank_loss(S2, Y2, empty="skip")) == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------------
# RunningMean and RankLoss
# --------------------------------------------------------------------------------------------------


def test_running_mean():
    m = RunningMean()
    assert m.n == 0 and math.isnan(m.get())
    values = [0.5, math.nan, 1.0, 0.0, math.nan, 0.25]
    weights = [1.0, 3.0, 2.0, 0.5, 1.0, 4.0]
    for v, w in zip(values, weights, strict=True):
        m.update(v, w)
    kept = [(v, w) for v, w in zip(values, weights, strict=True) if not math.isnan(v)]
    expected = sum(v * w for v, w in kept) / sum(w for _, w in kept)
    assert m.get() == pytest.approx(expected)
    assert m.n == 4 and m.weight == pytest.approx(7.5)
    assert repr(m) == f"RunningMean: {expected:.4f}"
    before = pickle.dumps(m)
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            m.update(0.3, bad)
    with pytest.raises(ValueError):
        m.update(math.inf)
    assert pickle.dumps(m) == before


def test_rank_loss_metric_both_conventions():
    rng = np.random.default_rng(3)
    metric = RankLoss()
    assert math.isnan(metric.get())
    paper, skip = [], []
    for _ in range(200):
        s, y = random_case(rng, 5, "ties")
        metric.update(y, s)
        v = brute_rank_loss(s, y, empty="skip")
        paper.append(0.0 if math.isnan(v) else v)
        if not math.isnan(v):
            skip.append(v)
    assert metric.n_paper == 200 and metric.n_skip == len(skip) < 200
    assert metric.get() == metric.paper == pytest.approx(np.mean(paper))
    assert metric.skip == pytest.approx(np.mean(skip))
    assert repr(metric) == f"RankLoss: {np.mean(paper):.4f}"


def test_rank_loss_metric_batch_weights_and_validation():
    rng = np.random.default_rng(4)
    S = rng.integers(0, 3, size=(40, 4))
    Y = rng.random((40, 4)) < 0.5
    batch, single = RankLoss(weighted=False), RankLoss(weighted=False)
    batch.update(Y, S)
    for s, y in zip(S, Y, strict=True):
        single.update(y, s)
    assert batch.paper == pytest.approx(single.paper)
    assert batch.skip == pytest.approx(single.skip)
    assert (batch.n_paper, batch.n_skip) == (single.n_paper, single.n_skip)

    weighted = RankLoss()
    weighted.update([0], [0.1, 0.9], w=3.0)  # loss 1
    weighted.update([0], [0.9, 0.1], w=1.0)  # loss 0
    assert weighted.get() == pytest.approx(0.75)

    before = pickle.dumps(weighted)
    with pytest.raises(ValueError):
        weighted.update([5], [0.1, 0.9])
    with pytest.raises(ValueError):
        weighted.update([0], [0.1, 0.9], w=-1.0)
    assert pickle.dumps(weighted) == before
    fresh = weighted.clone()
    assert fresh.weighted is True and fresh.n_paper == 0


def test_running_mean_refuses_a_weight_whose_total_overflows():
    # the total weight overflowed to inf, so each later value had share weight / inf = 0:
    # 1.0 then 3.0, both of weight 1e308, gave a mean of 1.0
    m = RunningMean()
    m.update(1.0, 1e308)
    before = pickle.dumps(m)
    with pytest.raises(
        ValueError,
        match=r"weight=1e\+308 would make the total weight overflow to infinity \(1e\+308 "
        r"counted so far\)",
    ):
        m.update(3.0, 1e308)
    assert pickle.dumps(m) == before
    m.update(math.nan, 1e308)  # skipped: counts no weight, so it cannot overflow
    assert pickle.dumps(m) == before
    m.update(3.0, 7e307)  # the total stays finite
    assert m.get() == pytest.approx((1.0 * 10 + 3.0 * 7) / 17)
    # subnormal weights, and values whose difference overflows, still give the right mean
    m = RunningMean()
    m.update(1.0, 5e-324)
    m.update(3.0, 5e-324)
    assert m.get() == 2.0 and m.weight == 1e-323
    m = RunningMean()
    m.update(1.0, 5e-324)
    m.update(4.0, 1e-323)
    assert m.get() == pytest.approx(3.0)
    m = RunningMean()
    m.update(1.7e308)
    m.update(-1.7e308)
    assert m.get() == 0.0


def test_rank_loss_metric_refuses_a_weight_whose_total_overflows():
    metric = RankLoss()
    metric.update([0], [0.1, 0.9], w=1e308)  # loss 1
    before = pickle.dumps(metric)
    with pytest.raises(ValueError, match=r"w=1e\+308 would make the total weight overflow"):
        metric.update([0], [0.9, 0.1], w=1e308)
    # a batch is refused whole when a later row would overflow, even if the first would not
    S, Y = np.array([[0.9, 0.1], [0.9, 0.1]]), np.array([[True, False], [True, False]])
    with pytest.raises(ValueError, match=r"w=4e\+307 would make the total weight overflow"):
        metric.update(Y, S, w=4e307)
    assert pickle.dumps(metric) == before
    metric.update([0], [0.9, 0.1], w=5e307)  # loss 0
    assert metric.get() == pytest.approx(1e308 / 1.5e308)
    tiny = RankLoss()
    tiny.update([0], [0.1, 0.9], w=5e-324)
    tiny.update([0], [0.9, 0.1], w=5e-324)
    assert tiny.get() == 0.5


def test_rank_loss_weighted_must_be_a_bool_at_construction():
    # "no" was accepted, cloned, and refused only at the first update
    from olboost.metrics import RankLoss

    for bad in ("no", 1, None):
        with pytest.raises(TypeError, match="RankLoss.weighted must be a bool"):
            RankLoss(weighted=bad)
    assert RankLoss(weighted=np.bool_(False)).clone().weighted == np.False_


def test_an_integer_indicator_row_is_refused_not_read_as_indices():
    # rank_loss([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1]) read labels {0, 1} and gave 0.5 where the
    # indicator row's loss is 0.0; RankLoss.update did the same (the 2-D path refused it)
    from olboost.metrics import RankLoss

    s = [0.9, 0.1, 0.5, 0.8]
    with pytest.raises(ValueError, match=r"indicator row\? Pass it as a bool array"):
        rank_loss(s, [1, 0, 0, 1])
    metric = RankLoss()
    with pytest.raises(ValueError, match="indicator row"):
        metric.update(np.array([1, 0, 0, 1]), s)
    assert np.isnan(metric.get()) and rank_loss(s, np.array([1, 0, 0, 1], dtype=bool)) == 0.0
    assert rank_loss(s, [0, 3]) == 0.0 and rank_loss(s, [3, 0]) == 0.0  # indices, any order


def test_a_dict_target_marks_relevant_only_the_labels_mapped_to_true():
    # River's {label: bool}: a label mapped to False was counted relevant
    scores = {"a": 0.9, "b": 0.1, "c": 0.5}
    assert rank_loss(scores, {"a": False, "b": True, "c": False}) == 1.0
    assert rank_loss(scores, {"b": True}) == 1.0
    assert rank_loss(scores, {"a": True, "b": False, "c": False}) == 0.0


def test_two_label_indices_zero_and_one_are_indices_not_an_indicator_row():
    # with k = 2 labels, [0, 1] can only name both labels: no relevant/irrelevant pair
    assert rank_loss([0.5, 0.2], [0, 1]) == 0.0
    assert rank_loss([0.5, 0.2], [1]) == 1.0


def test_boolean_scores_are_refused_as_a_prediction_without_order():
    # River's pattern metric.update(y, model.predict_one(x)) handed the rank loss a
    # {label: bool} prediction, read as scores 1 and 0: a plausible loss of a ranking of ties
    from olboost.metrics import RankLoss

    metric = RankLoss()
    with pytest.raises(TypeError, match=r"got booleans: a prediction .* pass the scores"):
        metric.update({"a"}, {"a": True, "b": False})
    with pytest.raises(TypeError, match="got booleans"):
        rank_loss(np.array([True, False]), [0])
    assert metric.n_paper == 0


def test_rank_loss_reverts_for_a_rolling_window():
    # River's utils.Rolling needs update and revert ("does not satisfy the necessary
    # protocol"); the rolling mean is the mean of the window's last examples
    utils = pytest.importorskip("river.utils")

    from olboost.metrics import RankLoss

    rng = np.random.default_rng(4)
    rows = [(rng.random(5), rng.random(5) < 0.4) for _ in range(30)]
    rolling = utils.Rolling(RankLoss, window_size=4)
    for i, (s, y) in enumerate(rows):
        rolling.update(y, s)
        window = [rank_loss(s2, y2) for s2, y2 in rows[max(0, i - 3) : i + 1]]
        assert rolling.get() == pytest.approx(np.mean(window), abs=1e-12)
        assert rolling.n_paper == len(window)
    metric = RankLoss()
    with pytest.raises(ValueError, match="nothing to revert"):
        metric.revert([0], [0.5, 0.2])
    assert not RankLoss().works_with(object())  # River's evaluation passes predict_one's sets
    better, worse = RankLoss(), RankLoss()
    better.update([0], [0.9, 0.1])
    worse.update([0], [0.1, 0.9])
    assert better.is_better_than(worse) and not worse.is_better_than(better)


# The tests below come from a mutation campaign of the metrics (session 51): each kills one or
# more one-token changes that every other test let through.


def test_running_mean_takes_zero_weights():
    # "finite, non-negative": a zero weight counts the value but not its weight; refusing it,
    # dividing 0 / 0, a get() of 0.0 instead of NaN at zero weight, or reverting to a rest of
    # zero weight by division each passed every other test
    mean = RunningMean()
    mean.update(3.0, weight=0.0)
    assert mean.n == 1 and mean.weight == 0.0 and math.isnan(mean.get())
    mean.update(2.0, weight=1.0)
    assert mean.get() == 2.0
    mean.revert(2.0, weight=1.0)
    assert mean.n == 1 and mean.weight == 0.0 and math.isnan(mean.get())


def test_running_mean_reverts_a_weight_its_total_rounded_below():
    # 0.1 + 0.7 - 0.7 is 0.09999999999999987 < 0.1: the weight as added exceeds the total left
    # by its rounding, which revert must allow (a strict comparison refused it)
    mean = RunningMean()
    mean.update(1.0, weight=0.1)
    mean.update(2.0, weight=0.7)
    mean.revert(2.0, weight=0.7)
    assert mean.weight < 0.1
    mean.revert(1.0, weight=0.1)
    assert mean.n == 0 and math.isnan(mean.get())


def test_rank_loss_is_better_than_is_strict():
    # a tie is not better (a metric compared with itself chose it over the incumbent)
    a, b = RankLoss(), RankLoss()
    a.update([0], [0.7, 0.2, 0.1])
    b.update([0], [0.7, 0.2, 0.1])
    assert not a.is_better_than(b) and not b.is_better_than(a)
    b.update([2], [0.7, 0.2, 0.1])
    assert a.is_better_than(b) and not b.is_better_than(a)


def test_rank_loss_revert_of_more_examples_than_counted_changes_nothing():
    # at weight 0 the paper's mean has no weight to compare with: the count is what refuses
    metric = RankLoss()
    metric.update([0], [0.1, 0.2, 0.7], w=0.0)
    Y = np.array([[True, False, False]] * 2)
    S = np.array([[0.1, 0.2, 0.7]] * 2)
    with pytest.raises(ValueError, match="nothing to revert"):
        metric.revert(Y, S, w=0.0)
    assert metric.n_paper == 1 and metric.n_skip == 1


def test_rank_loss_refuses_empty_two_dimensional_indices():
    # an empty 1-D array is an empty relevant set; an empty 2-D one is no relevant set at all
    with pytest.raises(ValueError, match="1-D"):
        rank_loss([0.5, 0.2, 0.1], np.empty((1, 0), dtype=np.int64))
    assert math.isnan(rank_loss([0.5, 0.2, 0.1], np.empty(0, dtype=np.int64), empty="skip"))
