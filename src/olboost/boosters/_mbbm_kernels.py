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
Potentials are memoised in a ``numba.typed.Dict[int64, float64]`` (:func:`new_memo`) keyed by an
exact integer code of ``(n, canonical state)``: with ``K = k - 1`` and ``a_j = d_j + n`` in
``[0, 2n + 1]`` (sorted), the rank of the multiset ``{a_j}`` in the combinatorial number system,
``sum_j C(a_j + j, j + 1) < C(2n + 1 + K, K)``, plus ``offsets[n]``, the number of states of all
smaller ``n``. :func:`memo_layout` builds ``offsets`` and the table ``comb`` of binomial
coefficients, or returns ``None`` when the codes of ``n <= n_max`` would not fit in 63 bits (then
the kernels evaluate every potential directly, unmemoised, if given empty ``offsets``). The memo is
a pure cache: it is emptied when it holds ``max_entries`` values, which changes no result.

Signatures (``tab = binomial_table(n_max, k - 1)`` of :mod:`olboost.potentials._multiclass_kernels`,
``offsets`` and ``comb`` from :func:`memo_layout`, ``memo`` from :func:`new_memo`):

* ``mbbm_potential_memo(d, n, k, gamma, tab, offsets, comb, memo, max_entries) -> phi^r_n`` for a
  canonical state ``d`` (int64[:], clipped and sorted);
* ``mbbm_cost_row_memo(s, r, n, gamma, tab, offsets, comb, memo, max_entries, d, out)`` fills
  ``out[l] = phi^r_n(s + e_l)``, the row ``r`` of the cost matrix of eq. 4;
* ``mbbm_update(votes, y, gamma, tab, offsets, comb, memo, max_entries, w_star, weights_out,
  weight_max)``: the learning step (Algorithm 1, lines 10-13) of one example;
* ``mbbm_expected_cost_votes(H, gamma, tab, offsets, comb, memo, max_entries, votes_out,
  tie_key, tie_counter)``: the
  votes ``argmin_l sum_r H[i, r] C^i(r, l)`` of the authors' code.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from olboost._random import counter_uniform
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
    "canonical_state",
    "state_code",
    "mbbm_potential_memo",
    "mbbm_cost_row_memo",
    "mbbm_update",
    "mbbm_expected_cost_votes",
    "pick_min",
]

#: Largest number of memoised potentials in one memo before it is emptied. With the dictionary's
#: spare room an entry takes about 50 bytes (the process grew by 122 MB when the dictionary
#: doubled past 2.8 million entries), so a full memo holds about 200 MB. The 27 reorderings of the
#: paper's mice experiment (8 classes, 100 learners, one memo) visit 4.4 million states; at 2**21
#: the memo was emptied twice on the way, and each refill costs about as much as a first run's
#: potentials.
MEMO_SIZE = 1 << 22

_INT63 = (1 << 63) - 1


def memo_layout(n_max: int, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(offsets, comb)`` of the exact state codes for ``n = 0..n_max`` and ``k`` classes.

    ``offsets[n]`` (int64, length ``n_max + 2``) is the number of canonical states of all
    ``m < n``, ``C(2m + 1 + K, K)`` each with ``K = k - 1``; ``comb[b, t] = C(b, t)`` for
    ``b <= 2 n_max + K``, ``t <= K`` (entries above ``2**63 - 1`` are clipped: no code uses them).
    ``None`` when ``offsets[n_max + 1]`` exceeds ``2**63 - 1``.

    Examples
    --------
    >>> offsets, comb = memo_layout(99, 8)
    >>> int(offsets[-1]) < 2**63
    True
    >>> memo_layout(99, 14) is None
    True
    """
    K = k - 1
    offsets = [0]
    for m in range(n_max + 1):
        offsets.append(offsets[-1] + math.comb(2 * m + 1 + K, K))
        if offsets[-1] > _INT63:
            return None
    n_b = 2 * n_max + K + 1
    comb = np.zeros((n_b, K + 1), dtype=np.int64)
    for b in range(n_b):
        for t in range(min(b, K) + 1):
            comb[b, t] = min(math.comb(b, t), _INT63)
    return np.array(offsets, dtype=np.int64), comb


def new_memo() -> Dict:
    """An empty memo of potentials: ``numba.typed.Dict[int64, float64]``."""
    return Dict.empty(key_type=types.int64, value_type=types.float64)


@numba.njit(cache=True)
def canonical_state(s: np.ndarray, r: int, l: int, n: int, d: np.ndarray) -> None:
    """``d`` (length ``k - 1``) = the sorted ``t[r] - t[j]``, ``j != r``, clipped to
    ``[-n, n + 1]``, of ``t = s + e_l`` (``t = s`` when ``l < 0``)."""
    k = s.shape[0]
    sr = s[r] + 1 if l == r else s[r]
    m = 0
    for j in range(k):
        if j == r:
            continue
        v = sr - (s[j] + 1 if j == l else s[j])
        if v < -n:
            v = -n
        elif v > n + 1:
            v = n + 1
        # insertion sort
        p = m
        while p > 0 and d[p - 1] > v:
            d[p] = d[p - 1]
            p -= 1
        d[p] = v
        m += 1


@numba.njit(cache=True)
def state_code(d: np.ndarray, n: int, offsets: np.ndarray, comb: np.ndarray) -> int:
    """Exact code of ``(n, d)``, ``d`` a canonical state: ``offsets[n]`` plus the
    combinatorial-number-system rank of the multiset ``{d_j + n}``."""
    code = offsets[n]
    for j in range(d.shape[0]):
        code += comb[d[j] + n + j, j + 1]
    return code


@numba.njit(cache=True)
def mbbm_potential_memo(
    d: np.ndarray,
    n: int,
    k: int,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: Dict,
    max_entries: int,
) -> float:
    """``phi^r_n`` at the canonical state ``d``, memoised (directly evaluated when ``offsets`` is
    empty). ``tab`` is any ``binomial_table(n', k - 1)`` with ``n' >= n``, or an empty one."""
    if offsets.shape[0] == 0:
        return mbbm_potential_table(d, n, k, gamma, tab)
    code = state_code(d, n, offsets, comb)
    v = memo.get(code, -1.0)
    if v >= 0.0:
        return v
    v = mbbm_potential_table(d, n, k, gamma, tab)
    if len(memo) >= max_entries:
        memo.clear()
    memo[code] = v
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
    memo: Dict,
    max_entries: int,
    d: np.ndarray,
    out: np.ndarray,
) -> None:
    """Row ``r`` of the cost matrix of eq. 4: ``out[l] = phi^r_n(s + e_l)`` (integer ``s``);
    labels ``l != r`` with equal scores share one evaluation. ``d`` is scratch of length
    ``k - 1``."""
    k = s.shape[0]
    for l in range(k):
        shared = -1
        if l != r:
            for j in range(l):
                if j != r and s[j] == s[l]:
                    shared = j
                    break
        if shared >= 0:
            out[l] = out[shared]
            continue
        canonical_state(s, r, l, n, d)
        out[l] = mbbm_potential_memo(d, n, k, gamma, tab, offsets, comb, memo, max_entries)


@numba.njit(cache=True)
def mbbm_update(
    votes: np.ndarray,
    y: int,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: Dict,
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
    s = np.zeros(k, dtype=np.int64)
    d = np.empty(k - 1, dtype=np.int64)
    c = np.empty(k, dtype=np.float64)
    for i in range(N):
        mbbm_cost_row_memo(s, y, N - 1 - i, gamma, tab, offsets, comb, memo, max_entries, d, c)
        w = 0.0
        for l in range(k):
            v = c[l] - c[y]
            if v < 0.0:
                v = 0.0
            w += v
        if w > weight_max[i]:
            weight_max[i] = w
        for l in range(k):
            weights_out[i, l] = 0.0
        weights_out[i, y] = w / w_star[i]
        s[votes[i]] += 1


@numba.njit(cache=True)
def mbbm_expected_cost_votes(
    H: np.ndarray,
    gamma: float,
    tab: np.ndarray,
    offsets: np.ndarray,
    comb: np.ndarray,
    memo: Dict,
    max_entries: int,
    votes_out: np.ndarray,
    tie_key: np.uint64,
    tie_counter: int,
) -> None:
    """Expected-cost votes: learner ``i`` votes ``argmin_l sum_r H[i, r] C^i(r, l)`` (the sum
    taken over ``r = 0..k-1`` in order), ``C^i(r, l) = phi^r_{N-i}(s^{i-1} + e_l)`` the full cost
    matrix of eq. 4 at the votes ``s^{i-1}`` of the learners before it. Ties go to the lowest
    ``l`` when ``tie_counter < 0``, else to a tied ``l`` drawn by :func:`pick_min` with the
    uniform ``counter_uniform(tie_key, tie_counter + i)``."""
    N, k = H.shape
    s = np.zeros(k, dtype=np.int64)
    d = np.empty(k - 1, dtype=np.int64)
    C = np.empty((k, k), dtype=np.float64)
    e = np.empty(k, dtype=np.float64)
    for i in range(N):
        n = N - 1 - i
        for r in range(k):
            mbbm_cost_row_memo(s, r, n, gamma, tab, offsets, comb, memo, max_entries, d, C[r])
        for l in range(k):
            acc = 0.0
            for r in range(k):
                acc += H[i, r] * C[r, l]
            e[l] = acc
        u = counter_uniform(tie_key, tie_counter + i) if tie_counter >= 0 else -1.0
        best = pick_min(e, u)
        votes_out[i] = best
        s[best] += 1


@numba.njit(cache=True)
def pick_min(values: np.ndarray, u: float) -> int:
    """Index of the minimum of ``values``: the lowest one if ``u < 0``; otherwise, among the
    ``m`` indices of exactly equal minimal value, the ``floor(u m)``-th (``u`` uniform on
    [0, 1)), a uniform draw as the authors' ``np.random.choice`` over the ties."""
    best = 0
    for l in range(1, values.shape[0]):
        if values[l] < values[best]:
            best = l
    if u < 0.0:
        return best
    m = 0
    for l in range(values.shape[0]):
        if values[l] == values[best]:
            m += 1
    j = int(u * m)
    for l in range(values.shape[0]):
        if values[l] == values[best]:
            if j == 0:
                return l
            j -= 1
    return best


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
def mbbm_votes(H: np.ndarray, t: int, state: State, votes: np.ndarray) -> None:
    """Each learner's vote in round ``t``: the argmax of its distribution (ties to the lowest
    label, or drawn with ``counter_uniform(tie_key, (t - 1) N + i)``), or the expected-cost vote
    of :func:`mbbm_expected_cost_votes`."""
    n = H.shape[0]
    before = t - 1  # rounds learned before this one
    if state.expected_cost:
        counter = before * n if state.tie_random else -1
        mbbm_expected_cost_votes(
            H, state.gamma, state.tab, state.offsets, state.comb, state.memo,
            state.max_entries, votes, state.tie_key, counter,
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
    """Round ``t``'s votes per class (Algorithm 1, line 6: the unweighted majority)."""
    votes = np.empty(H.shape[0], dtype=np.int64)
    mbbm_votes(H, t, state, votes)
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
    then Algorithm 1, lines 10-13 (:func:`mbbm_update`), each weight on ``y`` floored at
    ``floor``."""
    votes = np.empty(H.shape[0], dtype=np.int64)
    mbbm_votes(H, t, state, votes)
    if return_scores:
        scores[:] = 0.0
        for i in range(votes.shape[0]):
            scores[votes[i]] += 1.0
    mbbm_update(
        votes, y, state.gamma, state.tab, state.offsets, state.comb, state.memo,
        state.max_entries, state.w_star, weights, state.weight_max,
    )  # fmt: skip
    if state.floor > 0.0:
        for i in range(weights.shape[0]):
            weights[i, y] = max(weights[i, y], state.floor)
    return 0
