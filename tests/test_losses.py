"""The loss kernels of :mod:`olboost.losses`: one home, the formulas written out in NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from olboost.losses import (
    EXPONENTIAL,
    HINGE,
    HINGE_NO_MARGIN,
    LOGISTIC,
    RANK,
    SQUARE_HINGE,
    dphi,
    olm_cost_matrix,
    olm_loss,
    pair_loss,
    pair_losses,
    phi,
    rank_loss_mask,
)


def _pair_loss_np(x: np.ndarray, code: int) -> np.ndarray:
    if code == RANK:
        return (x > 0).astype(np.float64) + 0.5 * (x == 0)
    if code == HINGE:
        x = x + 1.0
    return np.maximum(x, 0.0)


@pytest.mark.parametrize("code", [RANK, HINGE, HINGE_NO_MARGIN])
@pytest.mark.parametrize("order", ["C", "F"])
def test_pair_losses_is_the_numpy_formula_with_its_layout(code, order):
    rng = np.random.default_rng(3)
    x = np.asarray(rng.integers(-3, 4, size=(7, 5)) + rng.choice([0.0, 0.5], (7, 5)), order=order)
    got = pair_losses(x, code)
    want = _pair_loss_np(x, code)
    assert got.tobytes() == want.tobytes()
    assert got.strides == want.strides  # a matrix product on it sums in the same order
    w = rng.random(5)
    assert (got @ w).tobytes() == (want @ w).tobytes()
    assert [pair_loss(v, code) for v in x.ravel()] == want.ravel().tolist()


def test_rank_loss_mask_counts_ties_half():
    s = np.array([0.5, 0.2, 0.2, 0.1])
    assert rank_loss_mask(s, np.array([True, False, True, False])) == 0.125
    assert rank_loss_mask(s, np.zeros(4, dtype=np.bool_)) == 0.0


@pytest.mark.parametrize(
    ("code", "f", "df"),
    [
        (LOGISTIC, lambda z: np.log1p(np.exp(z)), lambda z: 1.0 / (1.0 + np.exp(-z))),
        (EXPONENTIAL, np.exp, np.exp),
        (SQUARE_HINGE, lambda z: 0.5 * max(z + 1.0, 0.0) ** 2, lambda z: max(z + 1.0, 0.0)),
    ],
)
def test_multiclass_surrogates_and_their_cost_matrix(code, f, df):
    s = np.array([0.3, -1.2, 0.0, 2.5])
    for z in (-3.0, -1.0, -0.2, 0.0, 1.7):
        assert phi(z, code) == pytest.approx(f(z), rel=1e-12)
        assert dphi(z, code) == pytest.approx(df(z), rel=1e-12)
    C = np.empty((4, 4))
    olm_cost_matrix(s, code, C)
    for r in range(4):
        assert olm_loss(s, r, code) == pytest.approx(
            sum(f(s[l] - s[r]) for l in range(4) if l != r)
        )
        assert C[r].sum() == pytest.approx(0.0, abs=1e-12)
        assert C[r, r] <= 0.0


def _scores_with_ties(rng, k):
    """Many labels sharing a few scores (as labels that reach no leaf do), a few distinct ones,
    and a -0.0 beside 0.0 (equal values, different bits)."""
    s = rng.choice([0.0, 0.25, -1.5], size=k)
    s[rng.choice(k, size=k // 5, replace=False)] = rng.normal(size=k // 5)
    s[0], s[1] = 0.0, -0.0
    return s


@pytest.mark.parametrize("k", [70, 300])
def test_logistic_cost_grouped_by_score_is_the_pairwise_sum_bit_for_bit(k):
    """From GROUP_FROM_LABELS labels on, the cost vector takes one sigmoid per (relevant label,
    distinct score) and adds the pairs in their usual order: equal, with ``==``, to the pairs
    written out in Python (the same libm ``exp``, the same operations in the same order)."""
    import math

    from olboost.losses import logistic_cost
    from olboost.losses.pairwise import GROUP_FROM_LABELS

    assert k >= GROUP_FROM_LABELS
    rng = np.random.default_rng(k)
    for _ in range(20):
        s = _scores_with_ties(rng, k)
        y = np.zeros(k, dtype=bool)
        y[rng.choice(k, size=int(rng.integers(1, 6)), replace=False)] = True
        n_rel = int(y.sum())
        w_y = 1.0 / (n_rel * (k - n_rel))
        want = [0.0] * k
        half = 0.0
        for l in range(k):
            if y[l]:
                own = 0.0
                for r in range(k):
                    if not y[r]:
                        z = float(s[r]) - float(s[l])
                        e = math.exp(-abs(z))
                        g = w_y * ((1.0 if z >= 0.0 else e) / (1.0 + e))
                        own -= g
                        want[r] += g
                        half += g
                want[l] = own
        out = np.empty(k)
        assert logistic_cost(s, y, out) == half
        assert out.tolist() == want


def test_the_logistic_cost_is_compiled_for_no_literal_flag():
    """Ada.OLMR's update and ``logistic_cost`` hand ``grouped_logistic_cost`` a flag of type
    ``bool``: a literal ``True`` made Numba compile it a second time on a cold start, for
    ``Literal[bool]`` (0.8 s of the Ada.OLMR path)."""
    from olboost import AdaOLMR, VFDTCommittee
    from olboost.losses import logistic_cost
    from olboost.losses.logistic import grouped_logistic_cost

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    Y = rng.random((30, 5)) < 0.4
    Y[:, 0] = True
    AdaOLMR(VFDTCommittee(n_features=2), learners=3, seed=1, labels=5).score_then_learn(X, Y)
    logistic_cost(rng.normal(size=5), Y[0], np.empty(5))
    # compiled here, or (a warm cache: the callers loaded, nothing typed in this process) by
    # whichever process saved the callers: the cache's index lists both
    saved = grouped_logistic_cost._cache._cache_file._load_index()
    signatures = [str(sig) for sig in grouped_logistic_cost.signatures]
    signatures += [str(key[0]) for key in saved]
    assert signatures and not any("Literal" in sig for sig in signatures), signatures


def test_kernels_refuse_codes_and_lengths_that_would_take_them_outside_their_arrays():
    # olm_cost_row(s, 5, ...) with k = 3 wrote out[5], past the array it was given; unknown
    # codes were taken as the last loss of the list (phi(0.1, 99) was the square hinge)
    from olboost.losses import logistic_cost, logistic_loss, olm_cost_row
    from olboost.losses.logistic import counted_logistic_cost

    s = np.array([0.3, -0.2, 0.1])
    buf = np.zeros(6)
    with pytest.raises(ValueError, match=r"r must be a class of s"):
        olm_cost_row(s, 5, LOGISTIC, buf[:3])
    assert not buf.any()
    for bad in (-1, 3):
        with pytest.raises(ValueError, match=r"r must be a class of s"):
            olm_loss(s, bad, LOGISTIC)
    with pytest.raises(ValueError, match=r"len\(out\) == len\(s\)"):
        olm_cost_row(s, 0, LOGISTIC, buf[:2])
    with pytest.raises(ValueError, match="k x k"):
        olm_cost_matrix(s, LOGISTIC, np.zeros((2, 3)))
    for f in (phi, dphi):
        with pytest.raises(ValueError, match="loss must be LOGISTIC"):
            f(0.1, 99)
        assert f(0.1, SQUARE_HINGE) == pytest.approx(1.1 if f is dphi else 0.605)
    with pytest.raises(ValueError, match="loss_code must be RANK"):
        pair_loss(0.1, 99)
    assert pair_loss(0.1, HINGE_NO_MARGIN) == 0.1
    y = np.array([True, False])
    with pytest.raises(ValueError, match=r"len\(y\) == len\(s\)"):
        rank_loss_mask(s, y)
    with pytest.raises(ValueError, match=r"len\(y\) == len\(s\)"):
        logistic_loss(s, y)
    y3 = np.array([True, False, False])
    with pytest.raises(ValueError, match=r"len\(out\) == len\(s\)"):
        logistic_cost(s, y3, buf[:2])
    with pytest.raises(ValueError, match=r"len\(count\) == len\(s\)"):
        counted_logistic_cost(s, y3, np.ones(2, dtype=np.int64), 2, np.zeros(3))
    assert not buf.any()


def test_the_exponential_saturates_where_a_weight_multiplier_times_it_stays_finite():
    # the saturation was only checked to keep results finite, not where it is: at e^700, one
    # weight multiplier of 1e100 made the weight a learner is taught with inf
    import math

    from olboost.weak.base import MAX_WEIGHT_MULTIPLIER

    top = olm_loss(np.array([0.0, 600.0]), 0, EXPONENTIAL)
    assert top == math.exp(460.0) and math.isfinite(top * MAX_WEIGHT_MULTIPLIER)
    assert olm_loss(np.array([0.0, 459.0]), 0, EXPONENTIAL) == math.exp(459.0)  # below: as is


@pytest.mark.parametrize("length", [2, 4])
def test_a_cost_row_of_another_length_than_the_scores_is_refused(length):
    # one longer than the scores was filled in part without a word
    from olboost.losses import olm_cost_row

    out = np.full(length, 7.0)
    with pytest.raises(ValueError, match=r"len\(out\) == len\(s\)"):
        olm_cost_row(np.array([1.0, 0.0, 0.0]), 0, LOGISTIC, out)
    assert out.tolist() == [7.0] * length


@pytest.mark.parametrize("spread", [3.0, 500.0, 2000.0])
def test_counted_logistic_cost_equals_the_label_by_label_cost(spread):
    # Scores within _RATIO_SPREAD of each other take their sigmoids as ratios of one exp per
    # group, farther apart an exp per pair: either way the costs of logistic_cost, each label
    # of a group its own entry, up to rounding (terms at most 1, sums of at most 40 of them)
    from olboost.losses import logistic_cost
    from olboost.losses.logistic import _RATIO_SPREAD, counted_logistic_cost

    rng = np.random.default_rng(int(spread))
    groups = 40
    s = rng.uniform(-spread / 2, spread / 2, groups)
    s[:4] = rng.choice(s[4:], 4)  # relevant labels tied with irrelevant groups too
    y = np.zeros(groups, dtype=bool)
    y[:4] = True
    count = rng.integers(1, 5, groups)
    count[y] = 1
    labels = np.repeat(np.arange(groups), count)
    want = np.zeros(labels.shape[0])
    w_want = logistic_cost(s[labels], y[labels], want)
    n_rel = int(y.sum())
    got = np.zeros(groups)
    w_got = counted_logistic_cost(s, y, count, n_rel * (labels.shape[0] - n_rel), got)
    assert (np.ptp(s) <= _RATIO_SPREAD) == (spread < 1000.0)
    np.testing.assert_allclose(got[labels], want, rtol=1e-12, atol=1e-15)
    assert w_got == pytest.approx(w_want, rel=1e-12)
