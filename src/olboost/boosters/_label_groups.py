"""Labels that no weak learner tells apart, grouped, so that a booster's round costs what the
labels that occur cost, not ``k`` (issue #11).

With thousands of labels and a handful relevant per example, most labels never reached any
tree's leaf: every learner predicts the same value for all of them (its leaf's prior), so their
columns of the ``(N, k)`` weak predictions ``H`` are identical, and so are their scores in every
expert ``s^i = sum_{j <= i} alpha_j h^j`` and their costs. A booster can then run its round on
one column per group of identical columns, each carrying the number of labels it stands for,
and write the per-label results back. :func:`column_groups` finds the groups of one example, by
hashing each column's bits and then checking every label against its group's first label, bit
for bit: labels are grouped only when their columns are identical, whatever the committee.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["column_groups", "grouped_columns", "relevant_weights"]

_MIX = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True)
def _column_keys(bits: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each column of ``bits`` (an ``(n, k)`` int64 view of ``H``)."""
    n, k = bits.shape
    key = np.full(k, np.uint64(0x243F6A8885A308D3))
    for i in range(n):
        for c in range(k):
            key[c] = (key[c] ^ np.uint64(bits[i, c])) * _MIX
    return key


@numba.njit(cache=True)
def column_groups(H: np.ndarray, y: np.ndarray, group_of: np.ndarray, first: np.ndarray,
                  count: np.ndarray) -> int:  # fmt: skip
    """Group the irrelevant labels whose columns of ``H`` are identical bit for bit; each
    relevant label (``y[c]`` True) is a group of its own.

    Groups are numbered in the order of their first label: ``group_of[c]`` is label ``c``'s
    group, ``first[g]`` the first (smallest) label of group ``g`` and ``count[g]`` its number of
    labels (``group_of``, ``first`` and ``count`` have ``k`` entries; only the first ``G`` of
    ``first`` and ``count`` are written). Returns ``G``, or ``-1`` when two different columns
    share a hash (then nothing written is meaningful, and the caller takes its label-by-label
    path): every group it returns holds identical columns only.
    """
    n, k = H.shape
    bits = H.view(np.int64)
    key = _column_keys(bits)
    log_size = 1
    while (1 << log_size) < 2 * k:
        log_size += 1
    size = 1 << log_size
    # int32 and no copy of the keys (a group's key is its first label's): a smaller table
    # stays on the heap, where a large one would be mapped afresh, page by page, every call
    table = np.full(size, -1, dtype=np.int32)
    shift = np.uint64(64 - log_size)
    n_groups = 0
    for c in range(k):
        if y[c]:
            g = n_groups
            n_groups += 1
            first[g] = c
            count[g] = 0
        else:
            h = np.int64((key[c] * _MIX) >> shift)
            while table[h] >= 0 and key[first[table[h]]] != key[c]:
                h = (h + 1) & (size - 1)
            if table[h] < 0:
                table[h] = n_groups
                first[n_groups] = c
                count[n_groups] = 0
                n_groups += 1
            g = table[h]
        group_of[c] = g
        count[g] += 1
    # A hash says nothing for sure: every label is checked against its group's first label.
    # The largest group (at thousands of labels, most of them: those no learner tells apart)
    # against its first label's value in each row, with a mask and no gather (the gathers of
    # a label-by-label check took two thirds of this function at k = 5,000); the other labels
    # each against theirs, bar the first labels themselves (most groups are single labels).
    if n_groups == 0:
        return 0
    largest = 0
    for g in range(1, n_groups):
        if count[g] > count[largest]:
            largest = g
    mask = np.empty(k, dtype=np.int64)
    others = np.empty(k, dtype=np.int64)
    n_others = 0
    for c in range(k):
        g = group_of[c]
        mask[c] = -np.int64(g == largest)  # all ones in the largest group
        others[n_others] = c
        n_others += (g != largest) & (first[g] != c)
    rep = np.empty(n_others, dtype=np.int64)
    for q in range(n_others):
        rep[q] = first[group_of[others[q]]]
    ref = first[largest]
    for i in range(n):
        row = bits[i]
        value = row[ref]
        differ = np.int64(0)
        for c in range(k):
            differ |= (row[c] ^ value) & mask[c]
        for q in range(n_others):
            differ |= row[others[q]] ^ row[rep[q]]
        if differ != 0:
            return -1
    return n_groups


@numba.njit(cache=True)
def grouped_columns(
    H: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The groups of :func:`column_groups` and their columns: ``(first, count, Hg, yg)``,
    ``Hg[:, g]`` the column of group ``g`` (that of its first label) and ``yg[g]`` whether it is
    relevant. Empty arrays (no group) when the hashes collided."""
    n, k = H.shape
    group_of = np.empty(k, dtype=np.int64)
    first = np.empty(k, dtype=np.int64)
    count = np.empty(k, dtype=np.int64)
    n_groups = max(column_groups(H, y, group_of, first, count), 0)
    Hg = np.empty((n, n_groups))
    yg = np.empty(n_groups, dtype=np.bool_)
    for g in range(n_groups):
        yg[g] = y[first[g]]
    for i in range(n):
        for g in range(n_groups):
            Hg[i, g] = H[i, first[g]]
    return first[:n_groups], count[:n_groups], Hg, yg


@numba.njit(cache=True, inline="always")
def relevant_weights(row: np.ndarray, first: np.ndarray, yg: np.ndarray, cost: np.ndarray,
                     c_max: float) -> None:  # fmt: skip
    """A learner's label weights from a grouped round: ``c_max - cost[g]`` for the label of each
    relevant group ``g`` (a group of its own), 0 for every other label of ``row``."""
    row[:] = 0.0
    for g in range(first.shape[0]):
        if yg[g]:
            row[first[g]] = c_max - cost[g]
