"""Compiled learning and voting steps of OnlineMBBM (Jung, Goetz & Tewari 2017, Algorithm 1).

The exact 0-1 potential ``phi^r_n(s)`` of eq. 16 depends on the vote ``s`` only through ``n`` and
the *canonical state*: the differences ``s[r] - s[l]`` over the ``k - 1`` labels ``l != r``,
clipped to ``[-n, n + 1]`` (beyond, a label surely beats ``r`` or surely cannot) and sorted. This
is the key of :func:`olboost.potentials.multiclass._mbbm_exact`, and every value here is computed
from the same key by the same kernel
(:func:`olboost.potentials._multiclass_kernels.mbbm_potential_table`), so the compiled path
reproduces the public functions bit for bit.

Memo
----
The potentials are memoised in :mod:`olboost.boosters._mbbm_memo` (the table and its codes).

Signatures (``tab = binomial_table(n_max, k - 1)`` of :mod:`olboost.potentials._multiclass_kernels`,
``offsets`` and ``comb`` from :func:`memo_layout`, ``memo`` from :func:`new_memo`):

* ``mbbm_potential_memo(d, n, k, gamma, tab, offsets, comb, memo, max_entries) -> phi^r_n`` for a
  canonical state ``d`` (int64[:], clipped and sorted);
* ``mbbm_cost_row_memo(s, r, n, gamma, tab, offsets, comb, memo, max_entries, d, out)`` fills
  ``out[l] = phi^r_n(s + e_l)``, the row ``r`` of the cost matrix of eq. 4;
* ``mbbm_update(votes, y, gamma, tab, offsets, comb, memo, max_entries, w_star, weights_out,
  weight_max)``: the learning step (Algorithm 1, lines 10-13) of one example;
* ``mbbm_expected_cost_votes(H, gamma, tab, offsets, comb, memo, max_entries, votes_out,
  tie_key, tie_counter, costs_out)``: the votes ``argmin_l sum_r H[i, r] C^i(r, l)`` of the
  authors' code, leaving their cost matrices for :func:`mbbm_update_from_costs`.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from numba.typed import List

from olboost._random import counter_uniform
from olboost.boosters._mbbm_memo import (
    MEMO_SIZE,
    _as_float,
    _slot,
    canonical_state,
    memo_layout,
    memo_len,
    memo_lookup,
    memo_room,
    memo_store,
    new_memo,
    state_code,
)
from olboost.potentials._multiclass_kernels import mbbm_potential_table

__all__ = [
    "State",
    "argmax_votes",
    "mbbm_votes",
    "mbbm_score",
    "mbbm_step",
    "MEMO_SIZE",
    "memo_layout",
    "new_memo",
    "memo_len",
    "memo_lookup",
    "memo_store",
    "memo_room",
    "canonical_state",
    "state_code",
    "mbbm_potential_memo",
    "mbbm_cost_row_memo",
    "mbbm_update",
    "mbbm_update_from_costs",
    "mbbm_expected_cost_votes",
    "expected_costs",
    "pick_min",
    "TIE_RTOL",
]


@numba.njit(cache=True)
def mbbm_potential_memo(
    d: np.ndarray,
    n: int,
    k: int,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: List,
    max_entries: int,
) -> float:
    """``phi^r_n`` at the canonical state ``d``, memoised (directly evaluated when ``offsets`` is
    empty). ``tab`` is any ``binomial_table(n', k - 1)`` with ``n' >= n``, or an empty one."""
    table, count = memo_room(memo, 1, max_entries)
    if offsets.shape[0] == 0:
        return mbbm_potential_table(d, n, k, gamma, tab)
    code = state_code(d, n, offsets, comb)
    v = memo_lookup(table, code)
    if v >= 0.0:
        return v
    v = mbbm_potential_table(d, n, k, gamma, tab)
    memo_store(table, count, code, v, max_entries)
    return v


@numba.njit(cache=True)
def mbbm_cost_row_memo(
    s: np.ndarray,
    r: int,
    n: int,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: List,
    max_entries: int,
    d: np.ndarray,
    out: np.ndarray,
) -> None:
    """Row ``r`` of the cost matrix of eq. 4: ``out[l] = phi^r_n(s + e_l)`` (integer ``s``).
    ``d`` is scratch of length ``k - 1``."""
    k = s.shape[0]
    table, count = memo_room(memo, k, max_entries)
    scratch = _new_scratch(k)
    _cost_rows(s, r, r + 1, n, gamma, tab, offsets, comb, table, count, max_entries, scratch)
    out[:] = scratch.C[r]


_Scratch = namedtuple("_Scratch", ["d", "b", "codes", "keys", "C"])


@numba.njit(cache=True)
def _new_scratch(k: int) -> _Scratch:
    """Scratch of :func:`_cost_rows` for ``k`` classes; ``C`` receives the rows."""
    return _Scratch(
        np.empty(k - 1, dtype=np.int64),
        np.empty(k - 1, dtype=np.int64),
        np.empty(k * k, dtype=np.int64),
        np.empty(k * k, dtype=np.int64),
        np.empty((k, k), dtype=np.float64),
    )


@numba.njit(cache=True, inline="always")
def _cost_rows(
    s: np.ndarray,
    r_lo: int,
    r_hi: int,
    n: int,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    table: np.ndarray,
    count: np.ndarray,
    max_entries: int,
    scratch: _Scratch,
) -> None:
    """Rows ``r_lo .. r_hi - 1`` of the cost matrix of eq. 4, ``scratch.C[r, l] = phi^r_n(s +
    e_l)``, from the memo's ``(table, count)`` (evaluated directly if ``offsets`` is empty).

    The codes of row ``r``'s ``k`` states come from one sort: with ``b`` the sorted differences
    ``s[r] - s[j]``, ``j != r``, the state of ``s + e_l`` (``l != r``) is ``b`` with its first
    ``s[r] - s[l]`` lowered by one (still sorted, as the entries before it are smaller
    integers), so its code differs from the code of ``b`` in that one term; the state of
    ``s + e_r`` is ``b + 1``. All the rows' codes are computed, then all their first slots read,
    then the values: the reads of a large memo miss the CPU's caches, and independent reads
    wait for memory together. A state is built in full (:func:`canonical_state`) only to
    evaluate a potential missing from the memo."""
    k = s.shape[0]
    d, b, codes, keys, C = scratch
    if offsets.shape[0] == 0:
        for r in range(r_lo, r_hi):
            for l in range(k):
                canonical_state(s, r, l, n, d)
                C[r, l] = mbbm_potential_table(d, n, k, gamma, tab)
        return
    K = k - 1
    lo = -n
    hi = n + 1
    for r in range(r_lo, r_hi):
        m = 0
        for j in range(k):
            if j == r:
                continue
            v = s[r] - s[j]
            p = m
            while p > 0 and b[p - 1] > v:
                b[p] = b[p - 1]
                p -= 1
            b[p] = v
            m += 1
        base = offsets[n]
        up = offsets[n]
        for j in range(K):
            base += comb[min(max(b[j], lo), hi) + n + j, j + 1]
            up += comb[min(max(b[j] + 1, lo), hi) + n + j, j + 1]
        for l in range(k):
            if l == r:
                code = up
            else:
                v = s[r] - s[l]
                p = 0
                while b[p] != v:
                    p += 1
                old = min(max(v, lo), hi)
                new = min(max(v - 1, lo), hi)
                code = base - comb[old + n + p, p + 1] + comb[new + n + p, p + 1]
            codes[r * k + l] = code
    mask = (table.shape[0] >> 1) - 1
    for j in range(r_lo * k, r_hi * k):
        keys[j] = table[2 * _slot(codes[j], mask)]
    for r in range(r_lo, r_hi):
        for l in range(k):
            code = codes[r * k + l]
            if keys[r * k + l] == code + 1:
                value = _as_float(table[2 * _slot(code, mask) + 1])
            else:
                value = memo_lookup(table, code)
                if value < 0.0:
                    canonical_state(s, r, l, n, d)
                    value = mbbm_potential_table(d, n, k, gamma, tab)
                    memo_store(table, count, code, value, max_entries)
            C[r, l] = value


@numba.njit(cache=True)
def mbbm_update(
    votes: np.ndarray,
    y: int,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: List,
    max_entries: int,
    w_star: np.ndarray,
    weights_out: np.ndarray,
    weight_max: np.ndarray,
) -> None:
    """Algorithm 1, lines 10-13, for one example of true class ``y``.

    For every learner ``i`` (0-based; ``N - i - 1`` learners left after it) with ``s`` the votes of
    the learners before it: the cost row ``c[l] = phi^y(s + e_l)`` (eq. 4), the weight
    ``w = sum_l max(c[l] - c[y], 0)`` (line 11, as :func:`~olboost.potentials._multiclass_kernels.
    mbbm_normalize`), ``weight_max[i] = max(weight_max[i], w)`` and ``weights_out[i, y] = w /
    w_star[i]`` (line 12; every other entry 0); then ``s[votes[i]] += 1``.
    """
    N, k = weights_out.shape
    table, count = memo_room(memo, N * k, max_entries)
    s = np.zeros(k, dtype=np.int64)
    scratch = _new_scratch(k)
    for i in range(N):
        _cost_rows(s, y, y + 1, N - 1 - i, gamma, tab, offsets, comb, table, count, max_entries,
                   scratch)  # fmt: skip
        _learner_weight(scratch.C[y], y, i, w_star, weights_out, weight_max)
        s[votes[i]] += 1


@numba.njit(cache=True)
def mbbm_update_from_costs(
    costs: np.ndarray,
    y: int,
    w_star: np.ndarray,
    weights_out: np.ndarray,
    weight_max: np.ndarray,
) -> None:
    """:func:`mbbm_update` from the cost matrices ``costs[i] = C^i`` of eq. 4 at the votes of the
    learners before ``i`` (as :func:`mbbm_expected_cost_votes` leaves them): its cost rows are
    the rows ``costs[i, y]``, the same values."""
    for i in range(weights_out.shape[0]):
        _learner_weight(costs[i, y], y, i, w_star, weights_out, weight_max)


@numba.njit(cache=True)
def _learner_weight(
    c: np.ndarray,
    y: int,
    i: int,
    w_star: np.ndarray,
    weights_out: np.ndarray,
    weight_max: np.ndarray,
) -> None:
    """Algorithm 1, lines 11-12, for learner ``i`` whose cost row (eq. 4) is ``c``."""
    w = 0.0
    for l in range(c.shape[0]):
        v = c[l] - c[y]
        if v < 0.0:
            v = 0.0
        w += v
    if w > weight_max[i]:
        weight_max[i] = w
    for l in range(c.shape[0]):
        weights_out[i, l] = 0.0
    weights_out[i, y] = w / w_star[i]


@numba.njit(cache=True)
def mbbm_expected_cost_votes(
    H: np.ndarray,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: List,
    max_entries: int,
    votes_out: np.ndarray,
    tie_key: np.uint64,
    tie_counter: int,
    costs_out: np.ndarray,
) -> None:
    """Expected-cost votes: learner ``i`` votes ``argmin_l sum_r H[i, r] C^i(r, l)``,
    ``C^i(r, l) = phi^r_{N-i}(s^{i-1} + e_l)`` the full cost matrix of eq. 4 at the votes
    ``s^{i-1}`` of the learners before it. Ties (:func:`expected_costs`: within rounding) go to
    the lowest ``l`` when ``tie_counter < 0``, else to a tied ``l`` drawn by :func:`pick_min`
    with the uniform ``counter_uniform(tie_key, tie_counter + i)``. ``C^i`` is left in
    ``costs_out[i]`` when ``costs_out`` has ``N`` rows."""
    N, k = H.shape
    table, count = memo_room(memo, N * k * k, max_entries)
    s = np.zeros(k, dtype=np.int64)
    scratch = _new_scratch(k)
    C = scratch.C
    e = np.empty(k, dtype=np.float64)
    keep = costs_out.shape[0] == N
    for i in range(N):
        n = N - 1 - i
        _cost_rows(s, 0, k, n, gamma, tab, offsets, comb, table, count, max_entries, scratch)
        if keep:
            # element by element: Numba's array assignment checks for overlap at some cost
            for r in range(k):
                for l in range(k):
                    costs_out[i, r, l] = C[r, l]
        tol = expected_costs(H[i], C, e)
        u = counter_uniform(tie_key, tie_counter + i) if tie_counter >= 0 else -1.0
        best = pick_min(e, u, tol)
        votes_out[i] = best
        s[best] += 1


#: Relative width of a tie between expected costs: their sums over ``r`` round differently for
#: each label (the terms come in another order), by a few ulps of the terms' magnitudes, so
#: labels tied in exact arithmetic (every label, at the symmetric states of the first examples)
#: came out apart and the tie rule never saw them: one label won every "random" draw.
TIE_RTOL = 1e-12


@numba.njit(cache=True, inline="always")
def expected_costs(p: np.ndarray, C: np.ndarray, out: np.ndarray) -> float:
    """``out[l] = sum_r p[r] C[r, l]``; returns the width within which two of them are tied:
    :data:`TIE_RTOL` times the largest ``sum_r |p[r] C[r, l]|`` (0 when every term is 0)."""
    k = p.shape[0]
    scale = 0.0
    for l in range(k):
        acc = 0.0
        size = 0.0
        for r in range(k):
            term = p[r] * C[r, l]
            acc += term
            size += abs(term)
        out[l] = acc
        scale = max(scale, size)
    return TIE_RTOL * scale


@numba.njit(cache=True)
def pick_min(values: np.ndarray, u: float, tol: float = 0.0) -> int:
    """Index of the minimum of ``values``, counting as tied the indices within ``tol`` of it:
    the lowest of them if ``u < 0``; otherwise, of the ``m`` tied indices, the
    ``floor(u m)``-th (``u`` uniform on [0, 1)), a uniform draw as the authors'
    ``np.random.choice`` over the ties."""
    lo = values[0]
    for l in range(1, values.shape[0]):
        lo = min(lo, values[l])
    m = 0
    for l in range(values.shape[0]):
        if values[l] <= lo + tol:
            m += 1
    j = 0 if u < 0.0 else int(u * m)
    for l in range(values.shape[0]):
        if values[l] <= lo + tol:
            if j == 0:
                return l
            j -= 1
    return 0


#: What the compiled step of OnlineMBBM (exact potentials) reads and updates.
State = namedtuple(
    "State",
    [
        "w_star",  # (N,) the weight bounds w^{i*} of Algorithm 1, line 12
        "weight_max",  # (N,) largest w^i[t] seen
        "gamma",
        "tab",  # binomial table of the exact potentials
        "offsets",  # state-code layout of the memo
        "comb",
        "memo",  # memo of exact potentials (a pure cache)
        "max_entries",
        "tie_key",  # uint64 key of the tie-breaking draws
        "tie_random",  # break ties between tied votes at random (else: lowest label)
        "expected_cost",  # expected-cost votes (else: argmax votes)
        "floor",  # smallest weight on the true class (0: none)
    ],
)


@numba.njit(cache=True)
def mbbm_votes(
    H: np.ndarray, t: int, state: State, votes: np.ndarray, costs_out: np.ndarray
) -> None:
    """Each learner's vote in round ``t``: the argmax of its distribution (ties to the lowest
    label, or drawn with ``counter_uniform(tie_key, (t - 1) N + i)``), or the expected-cost vote
    of :func:`mbbm_expected_cost_votes` (which leaves its cost matrices in ``costs_out`` if it has
    ``N`` rows)."""
    n = H.shape[0]
    before = t - 1  # rounds learned before this one
    if state.expected_cost:
        counter = before * n if state.tie_random else -1
        mbbm_expected_cost_votes(
            H, state.gamma, state.tab, state.offsets, state.comb, state.memo,
            state.max_entries, votes, state.tie_key, counter, costs_out,
        )  # fmt: skip
        return
    argmax_votes(H, before, state.tie_key, state.tie_random, votes)


@numba.njit(cache=True)
def argmax_votes(
    H: np.ndarray, before: int, tie_key: np.uint64, tie_random: bool, votes: np.ndarray
) -> None:
    """Learner ``i`` votes the argmax of ``H[i]``; ties go to the lowest label, or with
    ``tie_random`` to a tied label drawn by :func:`pick_min` with
    ``counter_uniform(tie_key, before N + i)``, ``before`` rounds having been learned."""
    n = H.shape[0]
    neg = np.empty(H.shape[1])
    for i in range(n):
        u = counter_uniform(tie_key, before * n + i) if tie_random else -1.0
        for c in range(H.shape[1]):
            neg[c] = -H[i, c]
        votes[i] = pick_min(neg, u)


@numba.njit(cache=True)
def mbbm_score(H: np.ndarray, t: int, state: State, out: np.ndarray) -> None:
    """Round ``t``'s votes per class (Algorithm 1, lines 7 and 9: the unweighted majority)."""
    votes = np.empty(H.shape[0], dtype=np.int64)
    mbbm_votes(H, t, state, votes, np.empty((0, 0, 0)))
    out[:] = 0.0
    for i in range(votes.shape[0]):
        out[votes[i]] += 1.0


@numba.njit(cache=True)
def mbbm_step(
    H: np.ndarray,
    y: int,
    t: int,
    state: State,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of OnlineMBBM for true class ``y``: the votes (and their counts, if asked),
    then Algorithm 1, lines 10-13 (:func:`mbbm_update`, or with expected-cost votes
    :func:`mbbm_update_from_costs` on the cost matrices the votes used), each weight on ``y``
    floored at ``floor``."""
    N, k = H.shape
    votes = np.empty(N, dtype=np.int64)
    costs = np.empty((N if state.expected_cost else 0, k, k))
    mbbm_votes(H, t, state, votes, costs)
    if return_scores:
        scores[:] = 0.0
        for i in range(votes.shape[0]):
            scores[votes[i]] += 1.0
    if state.expected_cost:
        mbbm_update_from_costs(costs, y, state.w_star, weights, state.weight_max)
    else:
        mbbm_update(
            votes, y, state.gamma, state.tab, state.offsets, state.comb, state.memo,
            state.max_entries, state.w_star, weights, state.weight_max,
        )  # fmt: skip
    if state.floor > 0.0:
        for i in range(weights.shape[0]):
            weights[i, y] = max(weights[i, y], state.floor)
    return 0
