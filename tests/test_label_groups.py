"""Rounds on groups of labels that no weak learner tells apart (issue #11): the groups, and
Ada.OLMR's and OnlineBMR's rounds on them against their label-by-label rounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from olboost.boosters import _ada_olmr_kernels as ada
from olboost.boosters import _bmr_kernels as bmr
from olboost.boosters import _label_groups
from olboost.boosters._label_groups import column_groups
from olboost.potentials._pairwise_kernels import law_table_stack

K = 300  # >= COMPACT_FROM_LABELS of both boosters (checked with the steps they take)


def _predictions(rng, n, k, active, quantum=None):
    """Weak predictions as trees make them at many labels: every label the learners never
    told apart gets its learner's prior, ``active`` labels get values of their own."""
    H = np.repeat(rng.random((n, 1)), k, axis=1)
    H[:, active] = rng.random((n, active.size))
    if quantum is not None:
        H = np.round(H / quantum) * quantum
    return H


def _groups(H, y):
    k = H.shape[1]
    group_of, first, count = (np.empty(k, dtype=np.int64) for _ in range(3))
    n_groups = column_groups(H, y, group_of, first, count)
    return n_groups, group_of, first[: max(n_groups, 0)], count[: max(n_groups, 0)]


def test_groups_hold_identical_columns_and_relevant_labels_alone():
    rng = np.random.default_rng(0)
    n, k = 6, 200
    active = rng.choice(k, 40, replace=False)
    H = _predictions(rng, n, k, active)
    H[:, active[:4]] = H[:, [active[4]]]  # five active labels that nobody tells apart
    H[3, active[5]] = np.nextafter(H[3, active[6]], 2.0)  # one bit away from a neighbour
    H[:, active[6]] = H[:, active[5]]
    H[3, active[6]] = np.nextafter(H[3, active[6]], -2.0)
    y = np.zeros(k, dtype=bool)
    y[[active[0], 3, 150]] = True
    n_groups, group_of, first, count = _groups(H, y)
    assert n_groups > 0
    assert count.sum() == k
    assert (np.diff(first) > 0).all()
    np.testing.assert_array_equal(group_of[first], np.arange(n_groups))
    bits = H.view(np.int64)
    for c in range(k):
        # a member's column is its group's first label's, bit for bit
        np.testing.assert_array_equal(bits[:, c], bits[:, first[group_of[c]]])
    for c in np.flatnonzero(y):
        assert count[group_of[c]] == 1
    # labels whose columns differ somewhere are never grouped
    assert group_of[active[5]] != group_of[active[6]]
    distinct = {tuple(bits[:, c]) for c in np.flatnonzero(~y)}
    assert n_groups == len(distinct) + y.sum()
    # the untouched labels make one group, active[1..4] another (active[0] is relevant)
    assert count.max() == k - active.size - (y & ~np.isin(np.arange(k), active)).sum()
    assert count[group_of[active[1]]] == 4


def test_a_hash_collision_is_caught_and_reported(monkeypatch):
    # every key the same: the check against each group's first label must find the difference
    monkeypatch.setattr(_label_groups, "_MIX", np.uint64(0))
    # (the compiled hash froze the real multiplier)
    monkeypatch.setattr(_label_groups, "_column_keys", _label_groups._column_keys.py_func)
    rng = np.random.default_rng(1)
    n, k = 3, 20
    H = _predictions(rng, n, k, np.arange(5))
    y = np.zeros(k, dtype=bool)
    y[10] = True
    args = (np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64))
    assert column_groups.py_func(H, y, *args) == -1
    H[:, :5] = H[:, [5]]  # now every irrelevant column is the same: one group, no collision
    assert column_groups.py_func(H, y, *args) == 2


@pytest.mark.parametrize("twin", ["small group", "largest group"])
def test_a_collision_outside_or_inside_the_largest_group_is_caught(monkeypatch, twin):
    # The largest group is checked against its first label's value in each row, the others
    # label by label: a label whose key collides with a different column's is caught either way.
    rng = np.random.default_rng(2)
    n, k = 4, 40
    H = _predictions(rng, n, k, np.arange(6))
    y = np.zeros(k, dtype=bool)
    keys = _label_groups._column_keys(H.view(np.int64))
    twins = (0, 3) if twin == "small group" else (10, 4)  # label 10 holds the learners' prior
    forged = keys.copy()
    forged[twins[1]] = keys[twins[0]]
    args = (np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64))
    # the Python function hashes with NumPy's uint64 scalars, whose product wraps as the compiled
    # kernel's does, but NumPy warns of the overflow
    with np.errstate(over="ignore"):
        assert column_groups.py_func(H, y, *args) == 7  # six active labels and the prior's group
        monkeypatch.setattr(_label_groups, "_column_keys", lambda bits: forged)
        assert column_groups.py_func(H, y, *args) == -1
        H[:, twins[1]] = H[:, twins[0]]  # the same column: no longer a collision
        assert column_groups.py_func(H, y, *args) == 6
        # columns that differ in one learner's row only, the last one's too (a check that
        # stopped a row short passed the collisions above, which differ in every row)
        for row in range(n):
            apart = H.copy()
            apart[row, twins[1]] += 0.5
            assert column_groups.py_func(apart, y, *args) == -1, row


def _ada_round(update, H, y, alpha, t):
    n, k = H.shape
    alpha = alpha.copy()
    log_v = np.linspace(-1.0, 0.0, n)
    weights = np.full((n, k), 7.0)  # garbage: every entry must be written
    edge_num, edge_den = np.zeros(n), np.zeros(n)
    update(H, y, alpha, log_v, t, 1.0, 2.0, 1.0, weights, edge_num, edge_den)
    return alpha, log_v, weights, edge_num, edge_den


@pytest.mark.parametrize("relevant", [0, 1, 5, 40])
def test_ada_olmr_round_on_groups_equals_the_label_by_label_round(relevant):
    rng = np.random.default_rng(relevant)
    n = 12
    for t in (1, 7, 100):
        active = rng.choice(K, 90, replace=False)
        H = _predictions(rng, n, K, active)
        y = np.zeros(K, dtype=bool)
        y[rng.choice(active, relevant, replace=False)] = True
        alpha = rng.uniform(-2.0, 2.0, n)
        assert _groups(H, y)[0] < K // 2  # the round does run on groups
        alpha_g, log_v_g, w_g, num_g, den_g = _ada_round(ada.grouped_update, H, y, alpha, t)
        alpha_d, log_v_d, w_d, num_d, den_d = _ada_round(ada.ada_olmr_update, H, y, alpha, t)
        # the scores are the same bits, so are the rank losses and Hedge's weights
        np.testing.assert_array_equal(log_v_g, log_v_d)
        np.testing.assert_array_equal(w_g[:, ~y], 0.0)
        # the rest are sums of at most K terms of size at most 1 (a cost entry is at most 1 in
        # size, a weak prediction in [0, 1]) taken in another order: they differ by at most
        # about K * 2^-53 = 3e-14
        for got, want in ((alpha_g, alpha_d), (w_g, w_d), (num_g, num_d), (den_g, den_d)):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


@pytest.mark.parametrize("relevant", [0, 1, 5])
def test_online_bmr_round_on_groups_equals_the_label_by_label_round(relevant):
    rng = np.random.default_rng(10 + relevant)
    n, gamma = 10, 0.05
    for quantum in (None, 0.25):  # 0.25: many ties and integer differences (the laws' atoms)
        active = rng.choice(K, 90, replace=False)
        H = _predictions(rng, n, K, active, quantum)
        y = np.zeros(K, dtype=bool)
        y[rng.choice(active, relevant, replace=False)] = True
        p_plus = (1.0 - gamma * max(relevant, 1)) / K
        tables = law_table_stack(n - 1, p_plus, p_plus + gamma)
        got, want = [], []
        for update, out in ((bmr.grouped_update, got), (bmr.online_bmr_update, want)):
            weights, w_max = np.full((n, K), 7.0), np.zeros(n)
            update(H, y, tables, -(n - 1), 0, weights, w_max)
            out += [weights, w_max]
        np.testing.assert_array_equal(got[0][:, ~y], 0.0)
        # costs are potentials (sums of K^2 pair terms, each at most 1, over K^2 pairs) summed
        # in another order: they differ by rounding only, far below 1e-13
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def test_vector_sigmoids_are_within_three_units_in_the_last_place_of_the_c_library():
    from olboost.losses.logistic import _sigmoid, _vector_sigmoids

    rng = np.random.default_rng(7)
    s = np.concatenate(
        [rng.normal(0.0, 3.0, 20_000), rng.uniform(-40.0, 40.0, 5_000), [0.0, -0.0, 1e-300]]
    )
    s_l, w_y = 0.3, 1.0 / 7.0
    got = np.empty_like(s)
    _vector_sigmoids(s, s_l, w_y, got, np.empty_like(s), np.empty(s.shape, dtype=np.int64))
    want = np.array([w_y * _sigmoid(v - s_l) for v in s])
    # the exp itself is within one unit; the sigmoid's division and the scaling round again
    assert (np.abs(got - want) <= 3 * np.spacing(want)).all()
    # far out, e^-|z| underflows: the terms are w_y or (about) 0 either way
    far = np.array([-800.0, -708.5, 708.5, 800.0])
    got = np.empty_like(far)
    _vector_sigmoids(far, 0.0, w_y, got, np.empty_like(far), np.empty(4, dtype=np.int64))
    np.testing.assert_allclose(got, [0.0, 0.0, w_y, w_y], rtol=1e-15, atol=1e-300)


def _reference_sigmoid(v: float, s_l: float, w_y: float) -> float:
    """The vector sigmoid's term written out in Python floats (the same operations, in the same
    order; Python, like Numba without fastmath, fuses no multiply-add): m by math.floor, 2^m by
    math.ldexp (exact)."""
    from olboost.losses import logistic as L

    a = max(-abs(v - s_l), -708.0)
    m = math.floor(a * L._LOG2E + 0.5)
    x = (a - m * L._LN2_HI) - m * L._LN2_LO
    p = 1.0 / 6227020800.0
    for c in (479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0,
              24.0, 6.0):  # fmt: skip
        p = p * x + 1.0 / c
    p = p * x + 0.5
    p = p * x + 1.0
    e = (p * x + 1.0) * math.ldexp(1.0, m)
    return w_y * ((1.0 if v - s_l >= 0.0 else e) / (1.0 + e))


def test_vector_sigmoids_equal_their_arithmetic_written_out_bit_for_bit():
    # m is a float and 2^m's exponent bits come from float arithmetic (no float-int conversion,
    # which kept the loop scalar): the same values as math.floor's integer m and its shift
    from olboost.losses.logistic import _vector_sigmoids

    rng = np.random.default_rng(11)
    s = np.concatenate([
        rng.normal(0.0, 3.0, 5_000), rng.uniform(-800.0, 800.0, 2_000),
        rng.normal(0.0, 1e-6, 500), [0.0, -0.0, 1e-300, -708.0, 708.0, -707.9, 1e3, -1e3],
    ])  # fmt: skip
    for s_l, w_y in [(0.3, 1.0 / 7.0), (-12.5, 0.01), (0.0, 1.0)]:
        got = np.empty_like(s)
        _vector_sigmoids(s, s_l, w_y, got, np.empty_like(s), np.empty(s.shape, dtype=np.int64))
        want = np.array([_reference_sigmoid(v, s_l, w_y) for v in s.tolist()])
        assert np.array_equal(got.view(np.int64), want.view(np.int64)), s_l


@pytest.mark.parametrize("booster", ["AdaOLMR", "OnlineBMR"])
def test_boosters_take_the_grouped_step_from_the_compact_count_and_it_tracks_the_dense_one(
    booster,
):
    import olboost
    from olboost.boosters.base import BoosterKernels
    from olboost.datasets import make_label_stream

    if booster == "AdaOLMR":
        grouped, dense = ada.ada_olmr_step_grouped, ada.ada_olmr_step
    else:
        grouped, dense = bmr.bmr_step_grouped, bmr.bmr_step
    X, Y = make_label_stream(200, K, relevant=5, features=10, seed=3)

    def model():
        return getattr(olboost, booster)(
            olboost.VFDTCommittee(n_features=5), learners=6, seed=2, labels=K
        )

    # the grouped step from COMPACT_FROM_LABELS labels on, the label-by-label one below
    assert ada.COMPACT_FROM_LABELS == bmr.COMPACT_FROM_LABELS <= K
    for k, step in ((ada.COMPACT_FROM_LABELS - 1, dense), (ada.COMPACT_FROM_LABELS, grouped)):
        edge = getattr(olboost, booster)(olboost.VFDTCommittee(n_features=5), learners=6, labels=k)
        edge.learn_one({"a": 1.0}, {0})
        assert edge._step_kernels().step is step
    whole = model()
    scores = whole.score_then_learn(X, Y)
    assert whole._step_kernels().step is grouped
    # the same kernel, one block or many: the same bits
    chunked = model()
    parts = [chunked.score_then_learn(X[lo : lo + 37], Y[lo : lo + 37]) for lo in range(0, 200, 37)]
    np.testing.assert_array_equal(np.concatenate(parts), scores)
    # the label-by-label step on the same stream gives the same scores up to rounding, until a
    # decision falls on the other side of a rounding and the runs part (README, "Many labels"):
    # here OnlineBMR's never does in 200 rows and Ada.OLMR's at row 137 (Hedge's rank loss of
    # nearly tied scores, or a split); the first 100 rows are compared
    reference = model()
    score = whole._step_kernels().score
    reference._step_kernels = lambda: BoosterKernels(score, dense)
    rows = 100 if booster == "AdaOLMR" else 200
    np.testing.assert_allclose(
        reference.score_then_learn(X, Y)[:rows], scores[:rows], rtol=0, atol=1e-12
    )
