"""Pairwise multi-label ranking losses (Jung & Tewari 2018, Sec. 3.1; Raman et al. 2020, Sec. 2.2).

For scores ``s`` over ``k`` labels and a set ``Y`` of relevant labels, each loss sums a function
``f`` of ``x = s[r] - s[l]`` over the relevant/irrelevant pairs ``(l in Y, r notin Y)``:

    L^Y(s) = w_Y sum_{l in Y} sum_{r notin Y} f(s[r] - s[l]),

with ``w_Y = 1 / (|Y| |Y^c|)`` (weighted) or ``w_Y = 1`` (unweighted). :func:`pair_loss` is ``f``,
chosen by a code:

* ``RANK`` (0): the rank loss ``1(x > 0) + 1/2 1(x = 0)`` (Jung & Tewari 2018, Sec. 3.1);
* ``HINGE`` (1): the hinge ``(1 + x)_+`` (Sec. 3.1);
* ``HINGE_NO_MARGIN`` (2): ``x_+``, used by the authors' code;
* ``RANK_TIES`` (3): the unweighted rank loss of Raman et al. 2020 (Sec. 2.2), ``1(x >= 0)``:
  a tie counts as a whole error (``loss="rank"`` of the top-k potentials and Top-k BBM,
  :data:`TOPK_LOSS_CODES`).

:func:`rank_loss_mask` is the weighted rank loss of a whole score vector, computed without going
through the pairs: the scores are sorted once and the tie groups swept from the highest score down,
keeping the number of irrelevant labels seen so far (all scoring strictly higher than the current
group). A relevant label in a group of ``g_irr`` irrelevant labels and below ``irr_above``
irrelevant labels is mis-ordered against ``irr_above`` of them and tied with ``g_irr``: O(k log k)
in total.

The pairwise logistic loss lives in :mod:`olboost.losses.logistic`. Every function here is a
module-level ``@numba.njit(cache=True)`` kernel, so that boosters, potentials and metrics call it
from their own compiled code. They raise a ``ValueError`` on a loss code they do not know or on
lengths that would take them outside an array, and check nothing else
(:func:`olboost.metrics.rank_loss` validates its input fully).

Examples
--------
>>> import numpy as np
>>> from olboost.losses import HINGE, RANK, pair_loss, rank_loss_mask
>>> pair_loss(0.0, RANK), pair_loss(-0.5, HINGE)
(0.5, 0.5)
>>> rank_loss_mask(np.array([0.5, 0.2, 0.2, 0.1]), np.array([True, False, True, False]))
0.125
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "RANK",
    "HINGE",
    "HINGE_NO_MARGIN",
    "RANK_TIES",
    "LOSS_CODES",
    "TOPK_LOSS_CODES",
    "pair_loss",
    "pair_losses",
    "pair_count",
    "rank_loss_mask",
    "counted_rank_loss",
]

#: Pair-loss codes (the ``loss_code`` argument of the kernels).
RANK = 0
HINGE = 1
HINGE_NO_MARGIN = 2
RANK_TIES = 3

#: The codes by name (the full-information boosters' and potentials' ``loss`` parameter).
LOSS_CODES = {"rank": RANK, "hinge": HINGE, "hinge_no_margin": HINGE_NO_MARGIN}
#: The same names under top-k feedback, whose paper counts a tied pair as an error: its
#: unweighted rank loss is ``sum I(s[a] <= s[b])`` (Raman et al. 2020, Sec. 2.2).
TOPK_LOSS_CODES = {**LOSS_CODES, "rank": RANK_TIES}


@numba.njit(cache=True)
def pair_loss(x: float, loss_code: int) -> float:
    """``f(x)`` of one pair, ``x = s[r] - s[l]``: rank, hinge ``(1 + x)_+``, ``x_+`` or the
    top-k rank loss ``1(x >= 0)``."""
    if loss_code == RANK_TIES:
        return 1.0 if x >= 0.0 else 0.0
    if loss_code == RANK:
        if x > 0.0:
            return 1.0
        if x == 0.0:
            return 0.5
        return 0.0
    if loss_code == HINGE:
        x = x + 1.0
    elif loss_code != HINGE_NO_MARGIN:
        raise ValueError(
            "loss_code must be RANK (0), HINGE (1), HINGE_NO_MARGIN (2) or RANK_TIES (3)"
        )
    return x if x > 0.0 else 0.0


@numba.njit(cache=True)
def pair_losses(x: np.ndarray, loss_code: int) -> np.ndarray:
    """:func:`pair_loss` of every entry of float64 ``x`` (any shape), as a new array.

    The result keeps the memory layout of a C- or F-contiguous ``x``, as a NumPy ufunc would: a
    matrix product taken on it afterwards sums in the same order, to the bit.
    """
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        out[idx] = pair_loss(x[idx], loss_code)
    return out


@numba.njit(cache=True, inline="always")
def pair_count(y: np.ndarray) -> int:
    """``|Y| |Y^c|``, the number of relevant/irrelevant pairs of the mask ``y`` (the ``1 / w_Y`` of
    the weighted losses)."""
    k = y.shape[0]
    n_rel = 0
    for j in range(k):
        if y[j]:
            n_rel += 1
    return n_rel * (k - n_rel)


#: From this many labels on, the cost vectors group the irrelevant labels by score (see
#: :func:`irrelevant_groups`); below, the grouping would cost more than the evaluations it saves.
GROUP_FROM_LABELS = 64


@numba.njit(cache=True)
def irrelevant_groups(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The irrelevant labels (increasing), their group (same score bits, same group) and one
    score per group: ``(irrelevant, group, values)`` with ``s[irrelevant[q]] ==
    values[group[q]]``.

    With many labels, most of them reach no tree's leaf and share one score, so a cost vector
    evaluates its pair function once per (relevant label, group) instead of once per pair, and
    then adds the pairs in their usual order: the same values summed the same way, bit for bit.
    Groups are found by hashing the scores' bits (open addressing, Fibonacci hashing)."""
    k = s.shape[0]
    n = 0
    for j in range(k):
        if not y[j]:
            n += 1
    irrelevant = np.empty(n, dtype=np.int64)
    group = np.empty(n, dtype=np.int64)
    values = np.empty(n, dtype=np.float64)
    bits = np.ascontiguousarray(s).view(np.int64)
    log_size = 1
    while (1 << log_size) < 2 * n:
        log_size += 1
    size = 1 << log_size
    table_key = np.empty(size, dtype=np.int64)
    table_group = np.full(size, -1, dtype=np.int64)
    shift = np.uint64(64 - log_size)
    n_groups = 0
    q = 0
    for j in range(k):
        if y[j]:
            continue
        irrelevant[q] = j
        key = bits[j]
        h = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
        while table_group[h] >= 0 and table_key[h] != key:
            h = (h + 1) & (size - 1)
        if table_group[h] < 0:
            table_key[h] = key
            table_group[h] = n_groups
            values[n_groups] = s[j]
            n_groups += 1
        group[q] = table_group[h]
        q += 1
    return irrelevant, group, values[:n_groups]


@numba.njit(cache=True)
def _misordered_twice(s: np.ndarray, y: np.ndarray) -> tuple[int, int, int]:
    """``(2 * mis-ordered pairs, |Y|, |Y^c|)`` for one score vector; exact in integers.

    Sweeps the sorted scores (O(k log k)), or, when there are few relevant labels (``|Y|`` at most
    ``sqrt(k)``, or ``log2 k`` for small ``k``: the usual case with many labels), compares each
    relevant score with every irrelevant one (O(|Y| k), at most O(k^1.5), a simple loop that
    beats the sort's overhead on the label counts of the papers): the same integer count either
    way. Assumes no NaN in ``s`` (each NaN would form its own tie group, silently).
    """
    k = s.shape[0]
    n_rel = 0
    for j in range(k):
        if y[j]:
            n_rel += 1
    # the shift only for n_rel < 62: a 64-bit shift by 64 or more wraps (1 << 64 is 1), which
    # sent |Y| = 50,000 of k = 100,000 to the pair loop, 2 s instead of 12 ms
    if n_rel * n_rel <= k or (n_rel < 62 and (1 << n_rel) <= k):
        twice = 0
        for l in range(k):
            if y[l]:
                for r in range(k):
                    if not y[r]:
                        twice += 2 if s[r] > s[l] else (1 if s[r] == s[l] else 0)
        return twice, n_rel, k - n_rel
    order = np.argsort(s, kind="mergesort")
    twice = 0  # twice the loss count, so that the half-counted ties stay integers
    irr_above = 0
    n_rel = 0
    i = k - 1
    while i >= 0:
        v = s[order[i]]
        g_rel = 0
        g_irr = 0
        j = i
        while True:  # one tie group, at least one element (so NaN cannot stall the sweep)
            if y[order[j]]:
                g_rel += 1
            else:
                g_irr += 1
            j -= 1
            if j < 0 or s[order[j]] != v:
                break
        twice += 2 * g_rel * irr_above + g_rel * g_irr
        irr_above += g_irr
        n_rel += g_rel
        i = j
    return twice, n_rel, irr_above


@numba.njit(cache=True)
def _rank_loss_one(s: np.ndarray, y: np.ndarray, weighted: bool, skip_empty: bool) -> float:
    """Rank loss of one score vector; no pairs gives 0 (paper) or NaN (``skip_empty``).

    Weighted (``w_Y = 1 / (|Y| |Y^c|)``) or not (the number of mis-ordered pairs, a tie counting
    one half). Any NaN score gives NaN.
    """
    for v in s:
        if np.isnan(v):
            return np.nan
    twice, n_rel, n_irr = _misordered_twice(s, y)
    if n_rel == 0 or n_irr == 0:
        return np.nan if skip_empty else 0.0
    if weighted:
        return 0.5 * twice / (n_rel * n_irr)
    return 0.5 * twice


@numba.njit(cache=True)
def counted_rank_loss(s: np.ndarray, y: np.ndarray, count: np.ndarray, n_pairs: int) -> float:
    """:func:`rank_loss_mask` of labels in groups of equal score (group ``g``: ``count[g]``
    labels of score ``s[g]``, all irrelevant, or one relevant label (``count[g]`` is read for
    irrelevant groups only: the boosters' groups keep each relevant label apart), ``y[g]``;
    ``n_pairs = |Y| |Y^c|`` over the labels): the same integer count of mis-ordered pairs, so
    the same bits.
    O(|Y| G) for ``G`` groups."""
    for v in s:
        if np.isnan(v):
            return np.nan
    if n_pairs == 0:
        return 0.0
    n = s.shape[0]
    twice = 0
    for l in range(n):
        if y[l]:
            s_l = s[l]
            for r in range(n):
                if not y[r]:
                    twice += count[r] * (2 if s[r] > s_l else (1 if s[r] == s_l else 0))
    return 0.5 * twice / n_pairs


@numba.njit(cache=True)
def rank_loss_mask(s: np.ndarray, y: np.ndarray) -> float:
    """Weighted rank loss ``L_rnk^Y(s)`` (Jung & Tewari 2018, Sec. 3.1; Hedge's loss in
    Algorithm 3, line 13) of scores ``s`` (float64[:]) for the relevant mask ``y`` (bool[:]).

    The booster-facing kernel: no validation but of the lengths, paper convention (0.0 when ``y``
    is empty or full), NaN if any score is NaN. Ties count one half. O(k log k).
    """
    if y.shape[0] != s.shape[0]:
        raise ValueError("y must hold one flag per score: len(y) == len(s)")
    # flags that are not literals: the metrics' call (bool, bool) and this one share one compile
    return _rank_loss_one(s, y, np.bool_(True), np.bool_(False))
