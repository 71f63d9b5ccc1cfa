"""The memo of OnlineMBBM's exact potentials (:mod:`olboost.boosters._mbbm_kernels`): a hash
table of ``phi^r_n`` keyed by an exact code of ``(n, canonical state)``.

Potentials are memoised in an open-addressing hash table (:func:`new_memo`) keyed by an exact
integer code of ``(n, canonical state)``: with ``K = k - 1`` and ``a_j = d_j + n`` in
``[0, 2n + 1]`` (sorted), the rank of the multiset ``{a_j}`` in the combinatorial number system,
``sum_j C(a_j + j, j + 1) < C(2n + 1 + K, K)``, plus ``offsets[n]``, the number of states of all
smaller ``n``. :func:`memo_layout` builds ``offsets`` and the table ``comb`` of binomial
coefficients, or returns ``None`` when the codes of ``n <= n_max`` would not fit in 63 bits (then
the kernels evaluate every potential directly, unmemoised, if given empty ``offsets``). The memo is
a pure cache: it is emptied when it would hold more than ``max_entries`` values, which changes no
result.

The table is written here rather than taken from ``numba.typed.Dict`` for speed: a potential is
read about 2,500 times per example (5 classes, 100 learners, expected-cost votes), and the
``Dict``'s out-of-line lookup (a call, an indirection through its index array, a ``memcmp`` of
the key) took most of the learning time; the table's slot holds the key and the value side by
side, and the kernels read all the slots of a cost matrix before using any, so that the reads
that miss the CPU's caches wait for memory together.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
from numba.typed import List

#: Largest number of memoised potentials in one memo before it is emptied. The hash table is kept
#: at most half full, 16 bytes a slot, so a full memo takes 128 MB. The 27 reorderings of the
#: paper's mice experiment (8 classes, 100 learners, one memo) visit 4.4 million states; at 2**21
#: the memo was emptied twice on the way, and each refill costs about as much as a first run's
#: potentials.
MEMO_SIZE = 1 << 22

#: Slots of a new memo's hash table.
MEMO_START = 1 << 12

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


def new_memo(capacity: int = MEMO_START) -> List:
    """An empty memo of potentials: an open-addressing hash table of ``capacity`` slots (a power
    of 2; it grows by doubling as it fills, up to the least power of 2 holding twice
    ``max_entries`` values) in a ``numba.typed.List`` of two int64 arrays, the table (slot ``h``:
    ``code + 1`` at ``2h``, 0 when empty, the potential's bits at ``2h + 1``) and ``[count]``."""
    memo = List.empty_list(types.int64[::1])
    memo.append(np.zeros(2 * capacity, dtype=np.int64))
    memo.append(np.zeros(1, dtype=np.int64))
    return memo


def memo_len(memo: List) -> int:
    """Number of potentials held by ``memo``."""
    return int(memo[1][0])


@intrinsic
def _as_float(typingctx, bits):
    """The float64 whose bits are the int64 ``bits``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _as_bits(typingctx, value):
    """The int64 holding the bits of the float64 ``value``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@numba.njit(cache=True, inline="always")
def _slot(code: int, mask: int) -> int:
    # Fibonacci hashing: codes of nearby states are nearby integers, which this spreads
    return np.int64((np.uint64(code) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask


@numba.njit(cache=True, inline="always")
def memo_lookup(table: np.ndarray, code: int) -> float:
    """The potential of state code ``code`` in the memo's ``table``, -1 when absent."""
    mask = (table.shape[0] >> 1) - 1
    h = _slot(code, mask)
    while True:
        key = table[2 * h]
        if key == code + 1:
            return _as_float(table[2 * h + 1])
        if key == 0:
            return -1.0
        h = (h + 1) & mask


@numba.njit(cache=True)
def memo_store(table: np.ndarray, count: np.ndarray, code: int, value: float, max_entries: int):
    """Put ``code -> value`` (``code`` absent) in ``table``, unless it holds ``max_entries`` values
    or is half full (:func:`memo_room` makes room before each kernel's lookups)."""
    cap = table.shape[0] >> 1
    if count[0] >= max_entries or 2 * (count[0] + 1) > cap:
        return
    mask = cap - 1
    h = _slot(code, mask)
    while table[2 * h] != 0:
        h = (h + 1) & mask
    table[2 * h] = code + 1
    table[2 * h + 1] = _as_bits(value)
    count[0] += 1


@numba.njit(cache=True)
def memo_room(memo: List, room: int, max_entries: int) -> tuple[np.ndarray, np.ndarray]:
    """``(table, count)`` of ``memo`` with room for ``room`` more values: emptied first if they
    would take it past ``max_entries``, then grown (by doubling, rehashed) until at most half
    full with them."""
    table = memo[0]
    count = memo[1]
    if count[0] + room > max_entries:
        table[:] = 0
        count[0] = 0
    need = 2 * min(count[0] + room, max_entries)
    cap = table.shape[0] >> 1
    if need <= cap:
        return table, count
    while need > cap:
        cap *= 2
    grown = np.zeros(2 * cap, dtype=np.int64)
    mask = cap - 1
    for j in range(table.shape[0] >> 1):
        key = table[2 * j]
        if key != 0:
            h = _slot(key - 1, mask)
            while grown[2 * h] != 0:
                h = (h + 1) & mask
            grown[2 * h] = key
            grown[2 * h + 1] = table[2 * j + 1]
    memo[0] = grown
    return grown, count


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
