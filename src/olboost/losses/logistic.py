"""Pairwise logistic surrogate for multi-label ranking (Jung & Tewari 2018, Sec. 3.2).

``L_log^Y(s) = w_Y sum_{l in Y} sum_{r not in Y} log(1 + exp(s[r] - s[l]))`` with
``w_Y = 1 / (|Y| |Y^c|)``. It is proper and convex; Ada.OLMR uses its gradient as cost vector
(eq. 8). When ``Y`` is empty or holds every label there is no pair: the loss and its gradient are
zero, the convention of the paper's rank loss.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.losses.pairwise import GROUP_FROM_LABELS, irrelevant_groups, pair_count

__all__ = ["logistic_loss", "logistic_cost", "grouped_logistic_cost", "counted_logistic_cost"]


@numba.njit(cache=True, inline="always")
def _log1pexp(z: float) -> float:
    # log(1 + e^z) without overflow for large z and without losing precision for very negative z
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@numba.njit(cache=True, inline="always")
def _sigmoid(z: float) -> float:
    # 1 / (1 + e^-z) for z >= 0, e^z / (1 + e^z) below, both from e = e^-|z| (never overflows):
    # one branch-free form, as the sign of z is a coin flip in the cost vector's loops
    e = math.exp(-abs(z))
    return (1.0 if z >= 0.0 else e) / (1.0 + e)


@numba.njit(cache=True)
def logistic_loss(s: np.ndarray, y: np.ndarray) -> float:
    """Pairwise logistic loss ``L_log^Y(s)`` of scores ``s`` for the relevant-label mask ``y``."""
    k = s.shape[0]
    n_pairs = pair_count(y)
    if n_pairs == 0:
        return 0.0
    total = 0.0
    for l in range(k):
        if y[l]:
            for r in range(k):
                if not y[r]:
                    total += _log1pexp(s[r] - s[l])
    return total / n_pairs


@numba.njit(cache=True)
def logistic_cost(s: np.ndarray, y: np.ndarray, out: np.ndarray) -> float:
    """Cost vector of Ada.OLMR, eq. 8: ``c = grad L_log^Y(s)``, written into ``out``.

    ``c[l] = -w_Y sum_{r not in Y} sigma(s[r] - s[l])`` for relevant ``l`` and
    ``c[r] = w_Y sum_{l in Y} sigma(s[r] - s[l])`` for irrelevant ``r``, with ``sigma`` the logistic
    function. Returns the weight ``w[t] = ||c||_1 / 2`` of eq. 9.
    """
    return grouped_logistic_cost(s, y, out, True)[0]


@numba.njit(cache=True)
def grouped_logistic_cost(
    s: np.ndarray, y: np.ndarray, out: np.ndarray, try_groups: bool
) -> tuple[float, bool]:
    """:func:`logistic_cost`, and whether grouping the irrelevant labels by score paid (see
    below; tried only with ``try_groups``): a caller computing the cost vectors of a sequence
    of scores that only grow more distinct (Ada.OLMR's experts) stops trying once it did not.
    The same bits either way."""
    k = s.shape[0]
    n_rel = 0
    for j in range(k):
        out[j] = 0.0
        if y[j]:
            n_rel += 1
    n_pairs = n_rel * (k - n_rel)
    if n_pairs == 0:
        return 0.0, try_groups
    w_y = 1.0 / n_pairs
    half_l1 = 0.0
    if try_groups and k >= GROUP_FROM_LABELS:
        # one sigmoid per (relevant label, distinct irrelevant score), the pairs then added in
        # their usual order: the same sums bit for bit (see irrelevant_groups); not worth it when
        # most scores differ
        irrelevant, group, values = irrelevant_groups(s, y)
        if 2 * values.shape[0] <= irrelevant.shape[0]:
            g_of = np.empty(values.shape[0])
            for l in range(k):
                if y[l]:
                    s_l = s[l]
                    for d in range(values.shape[0]):
                        g_of[d] = w_y * _sigmoid(values[d] - s_l)
                    own = 0.0
                    for q in range(irrelevant.shape[0]):
                        g = g_of[group[q]]
                        own -= g
                        out[irrelevant[q]] += g
                        half_l1 += g
                    out[l] = own
            return half_l1, True
    for l in range(k):
        if y[l]:
            # out[l] is only written here: summed in a register, in the same order
            own = 0.0
            s_l = s[l]
            for r in range(k):
                if not y[r]:
                    g = w_y * _sigmoid(s[r] - s_l)
                    own -= g
                    out[r] += g
                    half_l1 += g
            out[l] = own
    return half_l1, False


@numba.njit(cache=True)
def counted_logistic_cost(
    s: np.ndarray, y: np.ndarray, count: np.ndarray, n_pairs: int, out: np.ndarray
) -> float:
    """:func:`logistic_cost` of labels in groups of equal score: group ``g`` stands for
    ``count[g]`` labels of score ``s[g]``, all relevant or all irrelevant (``y[g]``), and the
    labels make ``n_pairs = |Y| |Y^c|`` pairs. ``out[g]`` receives the cost of each label of
    group ``g``; returns ``w[t] = ||c||_1 / 2`` over the labels.

    An irrelevant label's cost is the one :func:`logistic_cost` gives it, bit for bit (the same
    terms added in the same order); a relevant label's cost and ``w[t]`` take each group's
    terms once, times its size, instead of one by one: equal up to rounding (a relative
    difference of a few units of ``2^-53`` per group, see :mod:`olboost.boosters._label_groups`).
    """
    n = s.shape[0]
    for j in range(n):
        out[j] = 0.0
    if n_pairs == 0:
        return 0.0
    w_y = 1.0 / n_pairs
    half_l1 = 0.0
    for l in range(n):
        if y[l]:
            own = 0.0
            s_l = s[l]
            for r in range(n):
                if not y[r]:
                    g = w_y * _sigmoid(s[r] - s_l)
                    m = count[r] * g
                    own -= m
                    out[r] += g
                    half_l1 += m
            out[l] = own
    return half_l1
