"""Potentials of the boost-by-majority boosters against brute-force enumeration of every draw."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from olboost.losses.pairwise import HINGE, HINGE_NO_MARGIN, RANK, RANK_TIES
from olboost.potentials import _multiclass_kernels as MCK
from olboost.potentials import _pairwise_kernels as PK
from olboost.potentials import (
    bmr_weight_bound,
    difference_law,
    difference_law_stack,
    difference_law_table,
    mbbm_weight_bound,
    multiclass_costs,
    multiclass_potential,
    multiclass_weight,
    normalize_costs,
    normalize_multiclass_costs,
    pairwise_costs,
    pairwise_potential,
    topk_costs,
    topk_potential,
)
from olboost.potentials.multiclass import _mbbm_mc_samples
from olboost.potentials.pairwise import _bmr_mc
from olboost.potentials.topk import _topk_mc

LOSSES = ["rank", "hinge", "hinge_no_margin"]
TOL = 1e-12


# --------------------------------------------------------------------------------------------------
# Brute force: every multinomial outcome with its exact probability
# --------------------------------------------------------------------------------------------------


def compositions(n: int, k: int):
    """Every ``x`` in N^k with ``sum x = n``."""
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        prev = -1
        x = []
        for b in bars:
            x.append(b - prev - 1)
            prev = b
        x.append(n + k - 1 - prev - 1)
        yield np.array(x)


def multinomial_pmf(x: np.ndarray, u: np.ndarray) -> float:
    n = int(x.sum())
    coef = math.factorial(n)
    for xi in x:
        coef //= math.factorial(int(xi))
    return coef * float(np.prod(u**x))


def f_pair(x: float, loss: str, tie: float = 0.5) -> float:
    if loss == "rank":
        return 1.0 if x > 0 else (tie if x == 0 else 0.0)
    if loss == "hinge":
        return max(1.0 + x, 0.0)
    return max(x, 0.0)


def bmr_loss(s, y, loss):
    rel = [l for l in range(len(s)) if y[l]]
    irr = [r for r in range(len(s)) if not y[r]]
    if not rel or not irr:
        return 0.0
    return sum(f_pair(s[r] - s[l], loss) for l in rel for r in irr) / (len(rel) * len(irr))


def brute_bmr(s, y, n, gamma, loss):
    k = len(s)
    n_rel = int(np.sum(y))
    a = (1.0 - gamma * n_rel) / k
    u = np.where(y, a + gamma, a)
    return sum(
        multinomial_pmf(x, u) * bmr_loss(np.asarray(s, float) + x, y, loss)
        for x in compositions(n, k)
    )


def brute_topk(s, y, n, gamma, loss, pw=None):
    k = len(s)
    pw = np.ones((k, k)) if pw is None else pw
    total = 0.0
    for a in range(k):
        if not y[a]:
            continue
        u = np.full(k, (1.0 - gamma) / k)
        u[a] += gamma
        for x in compositions(n, k):
            p = multinomial_pmf(x, u)
            v = np.asarray(s, float) + x
            # Raman et al. 2020, Sec. 2.1: the rank loss I(s[a] <= s[b]) counts a tie whole
            total += p * sum(
                pw[a, b] * f_pair(v[b] - v[a], loss, tie=1.0) for b in range(k) if not y[b]
            )
    return total


def brute_mbbm(s, r, n, gamma):
    k = len(s)
    u = np.full(k, (1.0 - gamma) / k)
    u[r] += gamma
    total = 0.0
    for x in compositions(n, k):
        v = np.asarray(s) + x
        if max(v[l] for l in range(k) if l != r) >= v[r]:
            total += multinomial_pmf(x, u)
    return total


def unit(k, l):
    e = np.zeros(k)
    e[l] = 1.0
    return e


def masks(k):
    """Relevant sets of several sizes, empty and full included."""
    out = [np.zeros(k, bool), np.ones(k, bool)]
    for size in (1, 2, k - 1):
        m = np.zeros(k, bool)
        m[list(range(0, 2 * size, 2))[:size] if 2 * size <= k else list(range(size))] = True
        out.append(m)
    return out


# --------------------------------------------------------------------------------------------------
# Difference law
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_difference_law_matches_enumeration(n):
    k, n_rel, gamma = 4, 2, 0.15
    d_min, probs = difference_law(n, n_rel, k, gamma)
    a = (1 - gamma * n_rel) / k
    law = {}
    for steps in itertools.product((1, -1, 0), repeat=n):
        p = math.prod(a if t == 1 else (a + gamma if t == -1 else 1 - 2 * a - gamma) for t in steps)
        law[sum(steps)] = law.get(sum(steps), 0.0) + p
    assert d_min == -n
    for j, p in enumerate(probs):
        assert p == pytest.approx(law.get(d_min + j, 0.0), abs=TOL)
    assert probs.sum() == pytest.approx(1.0, abs=TOL)
    assert not probs.flags.writeable


def test_cached_laws_are_read_only_to_callers_and_writable_to_the_kernels():
    args = (3, 1, 5, 0.15)
    for law in (difference_law(*args)[1], difference_law_table(*args)[1]):
        with pytest.raises(ValueError, match="read-only"):
            law[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        difference_law_stack(*args)[1][0, 0, 0] = 1.0
    assert difference_law(*args)[1][0] != 1.0  # the cache is unchanged
    pairwise_potential([0.1, 0.0, 0.3, 0.2, 0.4], [0], 3, 0.15)
    pairwise_costs([0.1, 0.0, 0.3, 0.2, 0.4], [0], 3, 0.15)
    # the public functions hand the kernels the boosters' kind of table (writable, as the
    # boosters copy theirs), so that a kernel is compiled once for both, not once more for a
    # read-only table
    for kernel in (PK.bmr_potential, PK.bmr_costs):
        assert kernel.signatures and all(sig[2].mutable for sig in kernel.signatures)


def test_the_multiclass_potentials_hand_the_kernel_the_boosters_kind_of_table():
    # a read-only binomial table (as _binomial_table's cache was until 2026-12-07) is a type of
    # its own: the kernel was compiled for it beside the boosters' writable tables
    multiclass_potential([2, 0, 1], 0, 4, 0.1)
    multiclass_costs([1, 0, 3], 0, 5, 0.1)
    signatures = MCK.mbbm_potential_table.signatures
    assert signatures and all(sig[4].mutable for sig in signatures)


def test_law_stack_matches_single_tables():
    n_max = 7
    d_min, stack = difference_law_stack(n_max, 2, 5, 0.1)
    assert d_min == -n_max
    s = np.array([0.3, -1.25, 2.0, 0.0, 0.5])
    y = np.array([True, False, True, False, False])
    # the kernel takes writable copies, as the boosters hold them: the public tables are
    # read-only views, for which Numba would compile the kernel's chain once more (22 s of
    # _group_expectations alone, in a cold test run), and which the test of the public
    # functions above would find among the kernel's signatures if it ran later in this process
    stack = np.array(stack)
    for n in range(n_max + 1):
        dn, table = difference_law_table(n, 2, 5, 0.1)
        table = np.array(table)
        for code in (RANK, HINGE, HINGE_NO_MARGIN):
            out1 = np.empty(5)
            out2 = np.empty(5)
            PK.bmr_costs(s, y, table, dn, code, out1)
            PK.bmr_costs(s, y, stack[n], d_min, code, out2)
            np.testing.assert_allclose(out1, out2, atol=TOL)


@pytest.mark.parametrize("loss", [*LOSSES, "rank_ties"])
def test_expected_pair_loss_for_real_shifts(loss):
    code = {
        "rank": RANK,
        "hinge": HINGE,
        "hinge_no_margin": HINGE_NO_MARGIN,
        "rank_ties": RANK_TIES,
    }[loss]
    tie = 1.0 if loss == "rank_ties" else 0.5
    loss = "rank" if loss == "rank_ties" else loss
    n = 6
    d_min, probs = difference_law(n, 1, 3, 0.2)
    table = np.array(difference_law_table(n, 1, 3, 0.2)[1])  # writable, as above
    for z in [-100.0, -7.0, -6.0, -3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 5.0, 6.0, 6.75, 1e9]:
        expect = sum(p * f_pair(z + d_min + j, loss, tie) for j, p in enumerate(probs))
        assert PK.expected_pair_loss(z, table, d_min, code) == pytest.approx(
            expect, abs=TOL, rel=TOL
        )


# --------------------------------------------------------------------------------------------------
# OnlineBMR potentials and costs
# --------------------------------------------------------------------------------------------------


SCORES = {
    "zero": np.zeros(4),
    "int": np.array([2.0, -1.0, 0.0, 1.0]),
    "dyadic": np.array([0.5, -0.25, 1.75, 0.5]),  # real, with exact ties after shifts
    "real": np.array([0.31, -0.77, 1.13, 0.05]),
}


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", list(SCORES))
@pytest.mark.parametrize("n", [0, 1, 3])
def test_pairwise_potential_and_costs_match_brute_force(loss, name, n):
    s = SCORES[name]
    k = s.shape[0]
    gamma = 0.2
    for y in masks(k):
        if 0 < y.sum() < k and gamma * y.sum() > 1:
            continue
        expect = brute_bmr(s, y, n, gamma, loss)
        assert pairwise_potential(s, y, n, gamma, loss) == pytest.approx(expect, abs=TOL)
        c = pairwise_costs(s, y, n, gamma, loss)
        for l in range(k):
            assert c[l] == pytest.approx(brute_bmr(s + unit(k, l), y, n, gamma, loss), abs=TOL)


def test_pairwise_costs_equal_k_full_evaluations():
    rng = np.random.default_rng(0)
    k = 9
    for _ in range(5):
        s = rng.normal(size=k) * 3
        y = rng.random(k) < 0.4
        for loss in LOSSES:
            c = pairwise_costs(s, y, 12, 0.05, loss)
            full = [pairwise_potential(s + unit(k, l), y, 12, 0.05, loss) for l in range(k)]
            np.testing.assert_allclose(c, full, atol=TOL)


@pytest.mark.parametrize("loss", LOSSES)
def test_pairwise_recursion_eq1(loss):
    """``phi^{n+1}(s) = E_{l ~ u} phi^n(s + e_l) = u . c`` (eq. 1)."""
    s = np.array([0.4, -1.0, 2.5, 0.0, 1.0, -0.5])
    y = np.array([True, False, False, True, False, False])
    gamma = 0.1
    a = (1 - gamma * 2) / 6
    u = np.where(y, a + gamma, a)
    for n in range(6):
        c = pairwise_costs(s, y, n, gamma, loss)
        assert u @ c == pytest.approx(pairwise_potential(s, y, n + 1, gamma, loss), abs=TOL)


def test_relevant_label_formats_agree():
    s = np.array([0.5, 0.1, -0.2, 0.0])
    ref = pairwise_costs(s, np.array([True, False, True, False]), 4, 0.1)
    np.testing.assert_allclose(pairwise_costs(s, [0, 2], 4, 0.1), ref)
    np.testing.assert_allclose(pairwise_costs(s, {0, 2}, 4, 0.1), ref)
    np.testing.assert_allclose(pairwise_costs(s, np.array([2, 0]), 4, 0.1), ref)


def test_empty_and_full_relevant_sets_give_zero():
    s = np.array([1.0, 0.0, 2.0])
    for y in ([], [0, 1, 2]):
        assert pairwise_potential(s, y, 5, 0.3) == 0.0
        np.testing.assert_array_equal(pairwise_costs(s, y, 5, 0.3), 0.0)
        assert topk_potential(s, y, 5, 0.3) == 0.0
        np.testing.assert_array_equal(topk_costs(s, y, 5, 0.3), 0.0)
    # full Y: the baseline is uniform whatever gamma, so a large gamma is fine
    assert pairwise_potential(s, [0, 1, 2], 5, 0.9) == 0.0


# --------------------------------------------------------------------------------------------------
# Bounds of Jung & Tewari (2018): Table 1, Lemmas 6, 8, 9
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,n_rel", [(6, 2), (14, 4), (5, 1)])
@pytest.mark.parametrize("gamma", [0.05, 0.15])
def test_lemma6_and_lemma8_bounds(k, n_rel, gamma):
    if gamma * n_rel >= 1:
        pytest.skip("baseline not a distribution")
    y = np.zeros(k, bool)
    y[:n_rel] = True
    s = np.zeros(k)
    for N in [1, 5, 20, 60, 150]:
        bound = math.exp(-(gamma**2) * N / 2)
        assert pairwise_potential(s, y, N, gamma, "rank") <= bound + TOL
        assert pairwise_potential(s, y, N, gamma, "hinge") <= (N + 1) * bound + TOL


def test_lemma9_hinge_weights_at_most_two_and_properness():
    rng = np.random.default_rng(1)
    k, N, gamma = 7, 15, 0.1
    for _ in range(20):
        y = rng.random(k) < 0.4
        if not 0 < y.sum() < k or gamma * y.sum() >= 1:
            continue
        # a state reachable by the booster: N - n weak distributions summed
        n = int(rng.integers(0, N))
        s = rng.dirichlet(np.ones(k), size=N - n).sum(axis=0)
        for loss in LOSSES:
            c = pairwise_costs(s, y, n, gamma, loss)
            _, w = normalize_costs(c)
            if loss != "rank":
                assert w <= 2.0 + TOL
            assert c[y].max() <= c[~y].min() + TOL  # proper: relevant never cost more


@pytest.mark.parametrize("loss", LOSSES)
def test_potential_monotone_in_scores(loss):
    """Proper: decreasing in relevant scores, increasing in irrelevant ones (both paper)."""
    s = np.array([0.2, 1.0, -0.5, 0.0, 0.7])
    y = np.array([True, False, True, False, False])
    for n in (0, 3, 8):
        base = pairwise_potential(s, y, n, 0.1, loss)
        base_tk = topk_potential(s, y, n, 0.1, loss)
        for l in range(5):
            step = unit(5, l) * 0.3
            up = pairwise_potential(s + step, y, n, 0.1, loss)
            up_tk = topk_potential(s + step, y, n, 0.1, loss)
            if y[l]:
                assert up <= base + TOL and up_tk <= base_tk + TOL
            else:
                assert up >= base - TOL and up_tk >= base_tk - TOL


def test_rank_potential_at_zero_decreases_with_n():
    """Lemma 6: phi^N(0) decays like exp(-gamma^2 N / 2); on these cases it is monotone."""
    for k, n_rel, gamma in [(6, 2, 0.1), (14, 4, 0.05), (3, 1, 0.3)]:
        y = np.zeros(k, bool)
        y[:n_rel] = True
        vals = [pairwise_potential(np.zeros(k), y, N, gamma, "rank") for N in range(60)]
        assert np.all(np.diff(vals) <= TOL)


# --------------------------------------------------------------------------------------------------
# Top-k BBM (Raman et al. 2020)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n", [0, 2, 3])
def test_topk_matches_brute_force(loss, n):
    s = np.array([0.5, -0.25, 1.0, 0.5])
    rng = np.random.default_rng(2)
    pw = rng.random((4, 4))
    for y in masks(4):
        for weights in (None, pw):
            expect = brute_topk(s, y, n, 0.3, loss, weights)
            assert topk_potential(s, y, n, 0.3, loss, weights) == pytest.approx(expect, abs=TOL)
            c = topk_costs(s, y, n, 0.3, loss, weights)
            for l in range(4):
                assert c[l] == pytest.approx(
                    brute_topk(s + unit(4, l), y, n, 0.3, loss, weights), abs=TOL
                )


def test_topk_upper_bounds_ground_truth_potential():
    """Proposition 1: Upsilon <= Phi (Upsilon is the unweighted pairwise potential)."""
    s = np.array([0.0, 1.0, -1.0, 0.5, 0.0])
    y = np.array([True, True, False, False, False])
    for n in (0, 2, 6, 12):
        upsilon = 6 * pairwise_potential(s, y, n, 0.1, "hinge")  # w_Y = 1/6
        assert upsilon <= topk_potential(s, y, n, 0.1, "hinge") + TOL


# --------------------------------------------------------------------------------------------------
# OnlineMBBM (Jung, Goetz & Tewari 2017)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [0, 1, 2, 4, 6])
def test_multiclass_matches_brute_force(k, n):
    rng = np.random.default_rng(k * 10 + n)
    states = [np.zeros(k, int)] + [rng.integers(-2, 3, size=k) for _ in range(3)]
    for s in states:
        for r in range(k):
            for gamma in (0.1, 0.45):
                expect = brute_mbbm(s, r, n, gamma)
                assert multiclass_potential(s, r, n, gamma) == pytest.approx(expect, abs=TOL)
                c = multiclass_costs(s, r, n, gamma)
                for l in range(k):
                    assert c[l] == pytest.approx(brute_mbbm(s + unit(k, l), r, n, gamma), abs=TOL)


def test_multiclass_kernel_row_matches_memoised_row():
    from olboost.boosters import _mbbm_kernels as MK

    s = np.array([3, 1, 1, 0, 2], dtype=np.int64)
    out = np.empty(5)
    d = np.empty(4, dtype=np.int64)
    tab = MCK.binomial_table(9, 4)
    empty = np.empty(0, dtype=np.int64)
    for r in range(5):
        # empty offsets: every potential evaluated directly, unmemoised
        MK.mbbm_cost_row_memo(
            s, r, 9, 0.2, tab, empty, empty.reshape(0, 0), MK.new_memo(), 0, d, out
        )
        np.testing.assert_allclose(out, multiclass_costs(s, r, 9, 0.2), atol=TOL)


def test_multiclass_recursion_eq3():
    s = np.array([1, 0, 2, 0])
    gamma = 0.2
    u = np.full(4, 0.8 / 4)
    u[2] += gamma
    for n in range(8):
        c = multiclass_costs(s, 2, n, gamma)
        assert u @ c == pytest.approx(multiclass_potential(s, 2, n + 1, gamma), abs=TOL)


def test_lemma9_multiclass_bound():
    for k in (2, 3, 5, 8):
        for gamma in (0.1, 0.3):
            for N in (1, 10, 40, 100):
                phi = multiclass_potential(np.zeros(k, int), 0, N, gamma)
                assert phi <= (k - 1) * math.exp(-(gamma**2) * N / 2) + TOL


def test_multiclass_potential_keeps_its_relative_accuracy_when_tiny():
    """The loss is summed as positive terms (the mass the caps cut off), not as ``1 - P(win)``:
    against the brute force (which also sums only losing draws), potentials from 1e-3 down to
    1e-9 agree to 1e-12 relative (each side within a few ulps per term; ``1 - P(win)`` was off by
    up to 7e-10 relative on these states), and at ``n = 1500``, where the laws come from
    ``lgamma``, Lemma 9's bound (9.7e-30 for k = 3, gamma = 0.3) holds with no absolute slack
    (``1 - P(win)`` gave 6.5e-13; the exact value, 5.63040963125500e-43, summed in integers
    over ``X_r`` and one other label's share: ``C(n, x) 16^x 7^(n - x) C(n - x, x_1) / 30^n``)."""
    rng = np.random.default_rng(5)
    for k in (2, 3, 4):
        for n in (10, 25, 40):
            for _ in range(6):
                s = rng.integers(0, n, size=k)
                r = int(np.argmax(s))
                expect = brute_mbbm(s, r, n, 0.3)
                assert multiclass_potential(s, r, n, 0.3) == pytest.approx(expect, rel=1e-12)
    for n, gamma in ((400, 0.3), (1500, 0.3), (1200, 0.1)):
        phi = multiclass_potential(np.zeros(3, int), 0, n, gamma)
        assert 0.0 < phi <= 2 * math.exp(-(gamma**2) * n / 2)
    assert multiclass_potential(np.zeros(3, int), 0, 1500, 0.3) == pytest.approx(
        5.6304096312550e-43, rel=1e-9
    )


def test_multiclass_properness_and_weight_bounds():
    """The true label never costs more; w^i(t) obeys the trivial bound, Lemma 10 and eq. 21-22."""
    rng = np.random.default_rng(3)
    for k in (3, 4, 6):
        N, gamma = 12, 0.2
        for _ in range(8):
            i = int(rng.integers(1, N + 1))
            s = np.bincount(rng.integers(0, k, size=i - 1), minlength=k)  # i - 1 votes so far
            r = int(rng.integers(0, k))
            c = multiclass_costs(s, r, N - i, gamma)
            assert np.all(c >= c[r] - TOL)
            w = multiclass_weight(s, r, N - i, gamma)
            assert w == pytest.approx(np.sum(c - c[r]), abs=TOL)
            assert w <= mbbm_weight_bound(i, N, k, gamma, form="trivial") + TOL
            assert w <= mbbm_weight_bound(i, N, k, gamma) + TOL
            assert w <= mbbm_weight_bound(i, N, k, gamma, form="exact_law") + TOL


def test_normalized_rows_are_in_c1_eor():
    c = multiclass_costs([2, 0, 1, 1], 1, 5, 0.2)
    d, w = normalize_multiclass_costs(c, 1)
    assert d[1] == 0.0 and np.all(d >= 0) and d.sum() == pytest.approx(1.0)
    assert w > 0
    d0, w0 = normalize_multiclass_costs(np.full(3, 0.7), 0)
    assert w0 == 0.0 and np.all(d0 == 0)
    d, w = normalize_costs(np.array([0.2, 0.9, 0.5]))
    assert d.min() == 0.0 and d.max() == 1.0 and w == pytest.approx(0.7)
    # a row whose true label is not its cheapest (a Monte Carlo estimate's noise): the
    # differences below the true label's cost are clipped to 0, not taught as negative weights
    d, w = normalize_multiclass_costs(np.array([0.5, 0.2, 0.9]), 0)
    assert d.tolist() == [0.0, 0.0, 1.0] and w == pytest.approx(0.4)


def test_mbbm_weight_bound_values():
    assert mbbm_weight_bound(5, 5, 4, 0.1) == 4.0  # no draws left: trivial bound
    c = 2 * (1 / math.sqrt(2 * math.pi) + 4 * 0.4748)
    assert mbbm_weight_bound(1, 10001, 3, 0.1) == pytest.approx(c * 3**2.5 / 100)
    assert mbbm_weight_bound(1, 101, 3, 0.1, constant=1.0) == pytest.approx(3**2.5 / 10)
    assert mbbm_weight_bound(1, 50, 3, 0.6) == 3.0  # Lemma 10 needs gamma < 1/2
    assert mbbm_weight_bound(1, 10001, 3, 0.5) == 3.0  # strictly
    assert mbbm_weight_bound(1, 400, 3, 0.1, form="exact_law") < 1.0
    # OnlineMBBM's docstring: eq. 20 falls below k only where N - i exceeds about 21 k^3
    for k, first_below in ((2, 171), (3, 572), (4, 1354)):
        assert mbbm_weight_bound(1, first_below - 1, k, 0.1) == k
        assert mbbm_weight_bound(1, first_below, k, 0.1) < k


# --------------------------------------------------------------------------------------------------
# Monte Carlo twins: within 4 empirical standard errors, reproducible with a seed
# --------------------------------------------------------------------------------------------------


def _within(samples, exact):
    mean = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / math.sqrt(samples.shape[0])
    assert np.all(np.abs(mean - exact) <= 4 * se + 1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_pairwise_monte_carlo(loss):
    s = np.array([0.3, -0.5, 1.2, 0.0, 0.8, -1.0])
    y = np.array([True, False, False, True, False, False])
    n, gamma, M = 10, 0.1, 2000
    pot, cost = _bmr_mc(s, y, n, gamma, {"rank": 0, "hinge": 1, "hinge_no_margin": 2}[loss], M, 7)
    _within(pot[:, None], pairwise_potential(s, y, n, gamma, loss))
    _within(cost, pairwise_costs(s, y, n, gamma, loss))
    mc = pairwise_costs(s, y, n, gamma, loss, method="monte_carlo", draws=M, seed=7)
    np.testing.assert_allclose(mc, cost.mean(axis=0))
    assert pairwise_potential(s, y, n, gamma, loss, "monte_carlo", M, 7) == pytest.approx(
        pot.mean()
    )


@pytest.mark.parametrize(("loss", "code"), [("hinge", HINGE), ("rank", RANK_TIES)])
def test_topk_monte_carlo(loss, code):
    s = np.array([0.3, -0.5, 1.2, 0.0, 0.8])
    y = np.array([True, False, True, False, False])
    pw = np.random.default_rng(4).random((5, 5))
    pot, cost = _topk_mc(s, y, 8, 0.2, code, pw, 2000, 11)
    _within(pot[:, None], topk_potential(s, y, 8, 0.2, loss, pw))
    _within(cost, topk_costs(s, y, 8, 0.2, loss, pw))
    mc = topk_costs(s, y, 8, 0.2, loss, pw, method="monte_carlo", draws=2000, seed=11)
    np.testing.assert_allclose(mc, cost.mean(axis=0))


@pytest.mark.parametrize("loss", ["rank", "hinge"])
@pytest.mark.parametrize("level", [0.7, 1 / 6, -2.3])
def test_monte_carlo_reads_tied_scores_as_ties(loss, level):
    # Only score differences matter, so tied scores at any level draw exactly the samples of
    # tied scores at 0. Summed as (s_r + X_r) - (s_l + X_l), ties at 0.7 differed by 2.2e-16
    # and the rank loss scored a tie 0 or 1 instead of 1/2 (a uniform leaf gives 1/6).
    y = np.array([True, True, False, False, False, False])
    code = {"rank": RANK, "hinge": HINGE}[loss]
    tied = np.full(6, level)
    for shifted, zero in [
        (_bmr_mc(tied, y, 5, 0.1, code, 500, 3), _bmr_mc(0 * tied, y, 5, 0.1, code, 500, 3)),
        (
            _topk_mc(tied, y, 5, 0.1, code, np.ones((6, 6)), 500, 3),
            _topk_mc(0 * tied, y, 5, 0.1, code, np.ones((6, 6)), 500, 3),
        ),
    ]:
        np.testing.assert_array_equal(shifted[0], zero[0])
        np.testing.assert_array_equal(shifted[1], zero[1])
    pot, cost = _bmr_mc(tied, y, 5, 0.1, code, 4000, 5)
    _within(pot[:, None], pairwise_potential(tied, y, 5, 0.1, loss))
    _within(cost, pairwise_costs(tied, y, 5, 0.1, loss))


def test_topk_rank_loss_counts_a_tie_whole():
    # Raman et al. 2020, Sec. 2.1, against the half-counted tie of the full-information rank
    # loss (Jung & Tewari 2018): at n = 0 the potential is the loss itself
    assert topk_potential([0.0, 0.0, 0.0], [0], 0, 0.2, "rank") == 2.0
    assert pairwise_potential([0.0, 0.0, 0.0], [0], 0, 0.2, "rank") == 0.5
    np.testing.assert_array_equal(topk_costs([0.0, 0.0, 0.0], [0], 0, 0.2, "rank"), [0, 2, 2])


def test_multiclass_monte_carlo():
    s = np.array([1, 0, 2, 1], dtype=np.int64)
    samples = _mbbm_mc_samples(s, 0, 10, 0.2, 4000, 5)
    _within(samples, multiclass_costs(s, 0, 10, 0.2))
    mc = multiclass_costs(s, 0, 10, 0.2, method="monte_carlo", draws=4000, seed=5)
    np.testing.assert_allclose(mc, samples.mean(axis=0))
    p = multiclass_potential(s, 0, 10, 0.2, method="monte_carlo", draws=4000, seed=5)
    assert abs(p - multiclass_potential(s, 0, 10, 0.2)) < 4 * 0.5 / math.sqrt(4000)


def test_monte_carlo_seed_reproducible():
    s = np.array([0.0, 1.0, 0.5])
    a = pairwise_costs(s, [0], 20, 0.1, method="monte_carlo", seed=3)
    b = pairwise_costs(s, [0], 20, 0.1, method="monte_carlo", seed=3)
    np.testing.assert_array_equal(a, b)
    c = multiclass_costs([0, 1, 0], 1, 20, 0.1, method="monte_carlo", seed=np.random.default_rng(3))
    assert c.shape == (3,)


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"gamma": 0.0}, ValueError, "gamma"),
        ({"gamma": 1.0}, ValueError, "gamma"),
        ({"gamma": -0.1}, ValueError, "gamma"),
        ({"gamma": "0.1"}, TypeError, "gamma"),
        ({"gamma": 0.6}, ValueError, "gamma \\* \\|Y\\|"),  # |Y| = 2
        ({"n": -1}, ValueError, "n must be >= 0"),
        ({"n": 2.5}, TypeError, "n must be an integer"),
        ({"n": True}, TypeError, "n must be an integer"),
        ({"s": [0.0, np.nan, 1.0, 0.0]}, ValueError, "finite"),
        ({"s": [0.0, np.inf, 1.0, 0.0]}, ValueError, "finite"),
        ({"s": [[0.0, 1.0]]}, ValueError, "1-D"),
        ({"s": ["a", "b"]}, TypeError, "s must"),
        ({"relevant": [0, 4]}, ValueError, "relevant labels"),
        ({"relevant": [-1]}, ValueError, "relevant labels"),
        ({"relevant": np.array([True, False])}, ValueError, "length of s"),
        ({"relevant": [0.5]}, TypeError, "relevant"),
        ({"loss": "square"}, ValueError, "loss"),
        ({"method": "mc"}, ValueError, "method"),
        ({"method": "monte_carlo", "draws": 0}, ValueError, "draws"),
    ],
)
def test_pairwise_bad_input(kwargs, exc, match):
    args = {"s": np.zeros(4), "relevant": [0, 1], "n": 3, "gamma": 0.1} | kwargs
    with pytest.raises(exc, match=match):
        pairwise_potential(**args)
    with pytest.raises(exc, match=match):
        pairwise_costs(**args)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"s": [0.0, 0.5, 1.0]}, ValueError, "integer scores"),
        ({"s": [0, 1, np.nan]}, ValueError, "finite"),
        ({"true_label": 3}, ValueError, "true_label"),
        ({"true_label": -1}, ValueError, "true_label"),
        ({"true_label": 1.0}, TypeError, "true_label"),
        ({"n": -2}, ValueError, "n must be >= 0"),
        ({"n": 1.5}, TypeError, "n must be an integer"),
        ({"gamma": 1.5}, ValueError, "gamma"),
        ({"method": "sampling"}, ValueError, "method"),
    ],
)
def test_multiclass_bad_input(kwargs, exc, match):
    args = {"s": [0, 1, 0], "true_label": 0, "n": 3, "gamma": 0.1} | kwargs
    for fn in (multiclass_potential, multiclass_costs, multiclass_weight):
        with pytest.raises(exc, match=match):
            fn(**args)


def test_other_bad_input():
    with pytest.raises(ValueError, match="n_relevant"):
        difference_law(3, 0, 4, 0.1)
    with pytest.raises(ValueError, match="k must be >= 2"):
        difference_law(3, 1, 1, 0.1)
    with pytest.raises(ValueError, match="gamma \\* \\|Y\\|"):
        difference_law(3, 3, 5, 0.4)
    with pytest.raises(ValueError, match="i must be in"):
        mbbm_weight_bound(0, 5, 3, 0.1)
    with pytest.raises(ValueError, match="form"):
        mbbm_weight_bound(1, 5, 3, 0.1, form="tight")
    with pytest.raises(ValueError, match="pair_weights"):
        topk_costs(np.zeros(3), [0], 2, 0.1, pair_weights=np.ones((2, 2)))
    # a negative importance weight or Berry-Esseen constant gave a negative potential or bound
    with pytest.raises(ValueError, match="pair_weights must be non-negative"):
        topk_potential(np.arange(3.0), [0], 3, 0.1, "rank", pair_weights=-np.ones((3, 3)))
    for constant in (-1.0, 0.0, math.nan, math.inf, True):
        with pytest.raises(ValueError, match="constant must be a positive finite number"):
            mbbm_weight_bound(1, 100, 3, 0.1, constant=constant)
    with pytest.raises(ValueError, match="constant is the Berry-Esseen form's"):
        mbbm_weight_bound(1, 100, 3, 0.1, form="exact_law", constant=2.0)
    assert mbbm_weight_bound(1, 100, 3, 0.1, constant=0.5) == pytest.approx(0.5 * 3**2.5 / 99**0.5)
    with pytest.raises(ValueError, match="c must"):
        normalize_costs(np.array([]))
    with pytest.raises(ValueError, match="true_label"):
        normalize_multiclass_costs([0.1, 0.2], 2)


def test_bmr_weight_bound_rank_and_hinge():
    """Lemma 7 (exact form before Berry-Esseen) for the rank loss, Lemma 9 for the hinge."""
    rng = np.random.default_rng(6)
    k, N, gamma = 6, 20, 0.1
    for _ in range(15):
        y = rng.random(k) < 0.5
        if not 0 < y.sum() < k:
            continue
        n = int(rng.integers(0, N))
        s = np.bincount(rng.integers(0, k, size=N - n), minlength=k).astype(float)
        _, w = normalize_costs(pairwise_costs(s, y, n, gamma, "rank"))
        assert w <= bmr_weight_bound(n, int(y.sum()), k, gamma, "rank") + TOL
    assert bmr_weight_bound(5, 2, 6, 0.1, "hinge") == 2.0
    assert bmr_weight_bound(400, 2, 6, 0.1, "rank") < 0.2
    # min(1, 3 max P): rank-loss costs lie in [0, 1], whatever the law (mutation round 8)
    bounds = [bmr_weight_bound(n, 1, 3, 0.1, "rank") for n in range(3)]
    assert bounds[:2] == [1.0, 1.0] and 0.9 < bounds[2] < 1.0  # 3 max P above 1, then below


def test_an_edge_of_one_over_the_relevant_labels_is_the_papers_baseline_with_no_mass_left():
    # gamma |Y| = 1: u_gamma^Y puts a = 0 on every label and gamma on each relevant one, still a
    # distribution (Jung & Tewari 2018, Sec. 3.1), so the potentials take it and match the
    # enumeration of its draws; above it (a < 0) they refuse. Before, the boundary was refused
    # too (OnlineBMR then capped such an example's edge, which the paper does not).
    k = 6
    y = np.array([1, 1, 1, 1, 0, 0], bool)
    s = np.array([0.0, 1.0, -1.0, 2.0, 0.5, 1.0])
    assert 0.25 * 4 == 1.0
    # D = X_irrelevant - X_relevant never moves up: minus a binomial(3, 1/4)
    d_min, probs = difference_law(3, 4, k, 0.25)
    assert d_min == -3
    np.testing.assert_allclose(probs, [1 / 64, 9 / 64, 27 / 64, 27 / 64, 0, 0, 0], atol=1e-15)
    for loss in LOSSES:
        for n in (0, 1, 3):
            expect = brute_bmr(s, y, n, 0.25, loss)
            assert pairwise_potential(s, y, n, 0.25, loss) == pytest.approx(expect, abs=TOL)
            c = pairwise_costs(s, y, n, 0.25, loss)
            for l in range(k):
                assert c[l] == pytest.approx(brute_bmr(s + unit(k, l), y, n, 0.25, loss), abs=TOL)
    above = math.nextafter(0.25, 1.0)
    for call in (
        lambda: difference_law(3, 4, k, above),
        lambda: pairwise_potential(np.zeros(k), y, 3, above),
    ):
        with pytest.raises(ValueError, match=r"gamma \* \|Y\| must be <= 1"):
            call()


def test_multiclass_kernel_without_binomial_table():
    """The on-the-fly path (used when the binomial table would be too large) agrees."""
    d = np.array([0, 1, -1, 2], dtype=np.int64)
    for n in (0, 3, 9):
        with_tab = MCK.mbbm_potential_table(d, n, 5, 0.2, MCK.binomial_table(n, 4))
        without = MCK.mbbm_potential_table(d, n, 5, 0.2, np.zeros((0, 0, 0, 0)))
        # the same laws and tails, summed in the same order: the same bits
        assert with_tab == without


@pytest.mark.parametrize("m,p", [(10, 0.3), (2000, 0.5), (300, 1.0), (5, 0.0)])
def test_binomial_pmf(m, p):
    from scipy.stats import binom

    out = np.empty(m + 1)
    MCK.binomial_pmf(m, p, out)
    np.testing.assert_allclose(out, binom.pmf(np.arange(m + 1), m, p), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("code", [RANK, HINGE, HINGE_NO_MARGIN])
def test_bmr_costs_grouped_by_score_are_the_pairwise_sums_bit_for_bit(code):
    """From GROUP_FROM_LABELS labels on, OnlineBMR's cost vector takes the expectations once per
    (relevant label, distinct score): equal, with ``==``, to the pairs written out one by one."""
    from olboost.losses.pairwise import GROUP_FROM_LABELS

    k = 2 * GROUP_FROM_LABELS
    rng = np.random.default_rng(code)
    stack = PK.law_table_stack(6, 0.004, 0.104)
    table, d_min = stack[4], -6
    for _ in range(10):
        s = rng.choice([0.0, 1.0, -2.0, 0.5], size=k)
        s[rng.choice(k, size=10, replace=False)] = rng.normal(size=10).round(1)
        y = np.zeros(k, dtype=bool)
        y[rng.choice(k, size=int(rng.integers(1, 5)), replace=False)] = True
        scale = 1.0 / (int(y.sum()) * (k - int(y.sum())))
        want = [0.0] * k
        base = 0.0
        for l in range(k):
            if y[l]:
                own = 0.0
                for r in range(k):
                    if not y[r]:
                        z = s[r] - s[l]
                        g0 = PK.expected_pair_loss(z, table, d_min, code)
                        base += scale * g0
                        own += scale * (PK.expected_pair_loss(z - 1.0, table, d_min, code) - g0)
                        want[r] += scale * (PK.expected_pair_loss(z + 1.0, table, d_min, code) - g0)
                want[l] = own
        want = [v + base for v in want]
        out = np.empty(k)
        assert PK.bmr_costs(s, y, table, d_min, code, out) == base
        assert out.tolist() == want


def test_topk_costs_without_pair_weights_need_no_k_by_k_matrix():
    # O(|R| |R^c|) as documented: a k x k matrix of ones was built (74.5 GiB at k = 100,000)
    k = 100_000
    c = topk_costs(np.zeros(k), [0, 1], 3, 0.1)
    assert c.shape == (k,) and np.isfinite(c).all()
    assert c[2] == c[k - 1] and c[0] == c[1]
    assert topk_potential(np.zeros(k), [0, 1], 3, 0.1) > 0.0


@pytest.mark.parametrize("loss", ["rank", "hinge", "hinge_no_margin"])
@pytest.mark.parametrize("gap", [2.0**62, 2.0**63, 1e19, 1e300])
def test_a_pair_ranked_far_apart_has_the_exact_potential_at_any_gap(loss, gap):
    # |D| <= n: a relevant label more than n above the irrelevant one loses nothing, and so do
    # its costs; from a gap of 2^63 Numba's integer floor wrapped and the rank potential was 1
    # (the hinge costs -1e19)
    s = [gap, 0.0]
    assert pairwise_potential(s, [0], 3, 0.1, loss) == 0.0
    assert topk_potential(s, [0], 3, 0.1, loss) == 0.0
    np.testing.assert_array_equal(pairwise_costs(s, [0], 3, 0.1, loss), [0.0, 0.0])
    # and the other way round, as far as the float range goes
    below = pairwise_potential([-gap, 0.0], [0], 3, 0.1, loss)
    assert below == (1.0 if loss == "rank" else pytest.approx(gap, rel=1e-12))


def test_a_score_gap_beyond_the_float_range_is_no_nan():
    # (1 + z + D)_+ with z = -inf: inf * P(D >= t) where that probability is 0 gave NaN
    assert pairwise_potential([1e308, -1e308], [0], 3, 0.1, "hinge") == 0.0
    np.testing.assert_array_equal(pairwise_costs([1e308, -1e308], [0], 3, 0.1, "hinge"), [0, 0])


def test_normalising_costs_whose_range_overflows_is_refused():
    # finite costs gave d = [0, nan, 0] and w = inf, outside C_0^eor
    with pytest.raises(ValueError, match="overflow float64"):
        normalize_costs([-1e308, 1e308, 0.0])
    with pytest.raises(ValueError, match="overflow float64"):
        normalize_multiclass_costs([-1e308, 1e308, 1e308], 0)
    assert normalize_costs([-1e307, 1e307])[1] == 2e307


def test_every_potential_names_a_bad_seed_or_draws_whatever_the_method():
    # NumPy's messages ("SeedSequence expects int or sequence of ints", "expected non-negative
    # integer") named no parameter, and the exact method took seed="a"; draws=-1 said ">= 0"
    from olboost.potentials import (
        multiclass_costs,
        multiclass_potential,
        pairwise_costs,
        pairwise_potential,
        topk_costs,
        topk_potential,
    )

    calls = {
        "multiclass_potential": lambda **kw: multiclass_potential([0, 1, 0], 0, 3, 0.2, **kw),
        "multiclass_costs": lambda **kw: multiclass_costs([0, 1, 0], 0, 3, 0.2, **kw),
        "pairwise_potential": lambda **kw: pairwise_potential([0.0, 1.0, 0.0], [0], 3, 0.2, **kw),
        "pairwise_costs": lambda **kw: pairwise_costs([0.0, 1.0, 0.0], [0], 3, 0.2, **kw),
        "topk_potential": lambda **kw: topk_potential([0.0, 1.0, 0.0], [0], 3, 0.2, **kw),
        "topk_costs": lambda **kw: topk_costs([0.0, 1.0, 0.0], [0], 3, 0.2, **kw),
    }
    for name, call in calls.items():
        for method in ("exact", "monte_carlo"):
            for seed, error, said in (
                ("a", TypeError, "seed must be None, an integer or a numpy Generator"),
                (1.5, TypeError, "seed must be None, an integer"),
                (True, TypeError, "seed must be None, an integer"),
                (-1, ValueError, "seed must be >= 0, got -1"),
            ):
                with pytest.raises(error, match=said):
                    call(method=method, seed=seed, draws=10)
            with pytest.raises(ValueError, match="draws must be >= 1, got -1"):
                call(method=method, draws=-1)
        # the seeds it takes still work, and a Generator is one
        a = call(method="monte_carlo", draws=50, seed=np.int64(3))
        b = call(method="monte_carlo", draws=50, seed=np.random.default_rng(3))
        np.testing.assert_array_equal(a, b, err_msg=name)


def _exact_rank_potential(s, y, n, gamma, bumped=None, topk=False):
    """The rank-loss potential by enumeration with exact score gaps (fractions: the float
    brute force above rounds a sub-ulp gap plus an integer), at ``s`` plus one on label
    ``bumped`` if given."""
    from fractions import Fraction

    k = len(s)
    exact = [Fraction(float(v)) for v in s]
    if bumped is not None:
        exact[bumped] += 1
    rel = [l for l in range(k) if y[l]]
    irr = [r for r in range(k) if not y[r]]
    tie = 1.0 if topk else 0.5

    def loss(x, a, b):
        gap = exact[b] - exact[a] + int(x[b]) - int(x[a])
        return 1.0 if gap > 0 else (tie if gap == 0 else 0.0)

    if topk:
        total = 0.0
        for a in rel:
            u = np.full(k, (1.0 - gamma) / k)
            u[a] += gamma
            for x in compositions(n, k):
                total += multinomial_pmf(x, u) * sum(loss(x, a, b) for b in irr)
        return total
    a0 = (1.0 - gamma * len(rel)) / k
    u = np.where(y, a0 + gamma, a0)
    return sum(
        multinomial_pmf(x, u) * sum(loss(x, a, b) for a in rel for b in irr)
        for x in compositions(n, k)
    ) / (len(rel) * len(irr))


@pytest.mark.parametrize(
    "s",
    [[0.1 + 0.2, 0.3, 0.0], [5e-324, 0.0, -0.0], [1.0, 1.0 - 2**-53, 0.5], [0.3, 0.1 + 0.2, 2.0]],
)
def test_rank_costs_keep_score_gaps_below_the_rounding_of_one(s):
    # A cost is the potential at s + e_l: a pair's gap moves by exactly 1. The exact kernels
    # took it as (gap - 1.0) + D, and a gap of 5.6e-17 (0.1 + 0.2 against 0.3) minus 1 was -1,
    # a tie: 0.1144 against the Monte Carlo estimate's 0.0945, which adds the gap to integers
    s = np.array(s)
    y = np.array([True, False, False])
    for n in (1, 3):
        bmr = pairwise_costs(s, y, n, 0.2, "rank")
        top = topk_costs(s, y, n, 0.2, "rank")
        for l in range(3):
            assert bmr[l] == pytest.approx(_exact_rank_potential(s, y, n, 0.2, l), abs=TOL)
            assert top[l] == pytest.approx(
                _exact_rank_potential(s, y, n, 0.2, l, topk=True), abs=TOL
            )
        assert pairwise_potential(s, y, n, 0.2, "rank") == pytest.approx(
            _exact_rank_potential(s, y, n, 0.2), abs=TOL
        )
    pot, cost = _bmr_mc(s, y, 3, 0.2, RANK, 20_000, 7)
    _within(cost, pairwise_costs(s, y, 3, 0.2, "rank"))
