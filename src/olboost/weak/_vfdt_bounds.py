"""Bounds on the best merit of a numeric feature at a split attempt, without ``erf`` nor a
logarithm per class, so that an attempt can settle the Hoeffding test while evaluating exactly
only the features that can still change it (:func:`olboost.weak._vfdt_attempt._attempt_split`).

A threshold's merit (:func:`olboost.weak._vfdt_split._best_numeric`) is the information gain
``pre_entropy - H(C | S)``. With ``n_c`` the weight of class ``c`` seen by the feature's observer,
``N`` their sum, ``w_c = n_c / N``, ``p_c`` the share of class ``c`` on the left of the
threshold (0 or 1 for a class wholly on one side, its Gaussian CDF otherwise) and ``q = sum_c
w_c p_c``, it is (in bits, ``h`` the binary entropy)

    ``pre_entropy - H(C) + h(q) - sum_c w_c h(p_c)``,

``H(C)`` being the entropy of the ``n_c``: the identity ``l log l + r log r = n log n - n h(p)``
for ``l = p n``, ``r = n - l``, applied to each class and to the two sides. A class wholly on one
side adds nothing to the sum. For the others, :func:`_bounds_of_merits` takes ``p~_c`` from the
approximate CDF (within ``d = _APPROXIMATE_CDF_ERROR`` of ``p_c``) and ``h(p~_c)`` from the chord
of a table of ``h`` (``h`` being concave, the chord is below it, by at most ``_CHORD_ERROR``).
Since ``|h(x) - h(y)| <= h(|x - y|)`` for ``|x - y| <= 1/2``, each ``h(p_c)`` lies in
``[chord(p~_c) - h(d), chord(p~_c) + _CHORD_ERROR + h(d)]``, and ``q`` within ``d`` times the
share of such classes of ``q~``; ``h`` is bounded over that interval of ``q`` exactly
(concave: its maximum at the point nearest 1/2, its minimum at an end). The minimum branch
fraction rule is applied to the interval: a threshold counts towards the upper bound if it can be
valid, towards the lower bound if it must be. Both bounds carry ``_BOUND_SLACK`` for the
rounding of the merits as computed and of these sums.

The bounds are within about ``_CHORD_ERROR + 3 h(d)`` (6e-4 bits) of each other, far inside the
Hoeffding bounds at which attempts are decided, and cost two passes over the classes per feature
with a few multiplications per (class, threshold that splits the class) instead of ``erf`` and two
logarithms: on a stream with 1,000 labels, where hundreds of classes reach a leaf, split attempts
were 96% of the trees' time.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.weak._prefetch import prefetch_record
from olboost.weak._vfdt_layout import G_MAX, G_MEAN, G_MIN, G_SSD, G_WEIGHT
from olboost.weak._vfdt_split import (
    _APPROXIMATE_CDF_ERROR,
    _PRUNE_SLACK,
    _approximate_cdf,
    _deviation,
)

#: Cells of the table of the binary entropy whose chords stand for it.
_CELLS = 1024


def _binary_entropy(p: np.ndarray) -> np.ndarray:
    """``h(p)`` in bits, 0 at 0 and 1."""
    p = np.asarray(p, dtype=float)
    out = np.zeros_like(p)
    inner = (p > 0.0) & (p < 1.0)
    x = p[inner]
    out[inner] = -x * np.log2(x) - (1.0 - x) * np.log2(1.0 - x)
    return out


def _chord_gap() -> float:
    """The largest gap between ``h`` and its chords over the cells of the table: on a cell of
    slope ``s`` the gap, a concave function, peaks where ``h'(x) = log2((1 - x) / x) = s``."""
    slopes = np.diff(_ENTROPY_TABLE) * _CELLS
    x = 1.0 / (1.0 + np.exp2(slopes))
    cell = np.arange(_CELLS)
    chord = _ENTROPY_TABLE[:-1] + slopes * (x - cell / _CELLS)
    return float(np.max(_binary_entropy(x) - chord))


_ENTROPY_TABLE = _binary_entropy(np.arange(_CELLS + 1) / _CELLS)
#: Largest amount by which a chord of the table falls below ``h``, plus rounding (about 5e-4).
_CHORD_ERROR = _chord_gap() + 1e-12
#: What the approximate CDF's error can move ``h`` by: ``h(d)`` (about 2e-5 bits).
_CDF_ENTROPY = float(_binary_entropy(np.array([_APPROXIMATE_CDF_ERROR]))[0])
#: Rounding of the merits as computed, and of the sums here (the slack of the exact pruning).
_BOUND_SLACK = _PRUNE_SLACK
#: Rounding of the left share ``q~`` (a ratio of sums of up to thousands of terms).
_SHARE_ROUNDING = 1e-12


@numba.njit(cache=True, inline="always")
def _chord(p):
    """The chord of ``h`` over the table cell holding ``p`` (in [0, 1]), at ``p``: at most
    ``h(p)``, by at most ``_CHORD_ERROR``."""
    x = p * _CELLS
    cell = min(int(x), _CELLS - 1)
    low = _ENTROPY_TABLE[cell]
    return low + (_ENTROPY_TABLE[cell + 1] - low) * (x - cell)


@numba.njit(cache=True, inline="always")
def _entropy(p):
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -p * math.log2(p) - (1.0 - p) * math.log2(1.0 - p)


@numba.njit(cache=True, inline="always")
def _first_at_or_above(acc, n, value, guess):
    """The number of the thresholds ``acc[0, :n]`` (non-decreasing) below ``value``, searched
    from ``guess``."""
    t = min(max(guess, 0), n)
    while t > 0 and acc[0, t - 1] >= value:
        t -= 1
    while t < n and acc[0, t] < value:
        t += 1
    return t


@numba.njit(cache=True)
def _bounds_of_merits(
    observed, blocks, gauss, j, pre_entropy, n_split_points, min_branch_fraction, n_log_n, present,
    acc, ahead,
):  # fmt: skip
    """``(lower, upper)`` bounds on the best merit of numeric feature ``j`` that
    :func:`olboost.weak._vfdt_split._best_numeric` computes (the maximum over its thresholds),
    ``-inf`` where no threshold can be (lower: must be) valid; see the module docstring.
    ``n_log_n[c]`` is ``observed[c] log2 observed[c]``; ``acc`` is scratch of 5 rows and at least
    ``n_split_points + 1`` columns; ``ahead`` is a feature whose Gaussian records are prefetched
    meanwhile (-1: none). Rows of ``acc`` are indexed, never taken as views: a view counts a
    reference to the array, in and out, by atomic operations, and this runs per class."""
    # The range, weight and n log2 n sum as _gaussian_params and _best_numeric compute them
    # (same additions, in class order), so that the thresholds, and which side of each a class
    # is on, are the same to the bit.
    lo = np.inf
    hi = -np.inf
    weight = 0.0
    sum_n_log_n = 0.0
    for i in range(present.shape[0]):
        c = present[i]
        b = blocks[c]
        if ahead >= 0 and b >= 0:
            prefetch_record(gauss, b, ahead)
        if not observed[c] > 0.0:
            continue
        n = gauss[b, j, G_WEIGHT]
        if n > 0.0:
            lo = min(lo, gauss[b, j, G_MIN])
            hi = max(hi, gauss[b, j, G_MAX])
            weight += n
            sum_n_log_n += n_log_n[c] if n == observed[c] else n * math.log2(n)
    if not lo < hi:
        return -np.inf, -np.inf  # no threshold strictly inside the range (or no class)
    n_thresholds = n_split_points
    step = (hi - lo) / (n_thresholds + 1.0)
    per_step = 1.0 / step
    # Rows: the thresholds; the weight of the classes wholly left, added at the first threshold
    # at or above their maximum and summed forward; and over the classes a threshold splits,
    # the sum of n_c p~_c, their weight and the sum of n_c chord(p~_c).
    for t in range(n_thresholds + 1):
        acc[0, t] = lo + step * (t + 1) if t < n_thresholds else np.inf
        acc[1, t] = 0.0
        acc[2, t] = 0.0
        acc[3, t] = 0.0
        acc[4, t] = 0.0
    for i in range(present.shape[0]):
        c = present[i]
        if not observed[c] > 0.0:
            continue
        b = blocks[c]
        n = gauss[b, j, G_WEIGHT]
        if not n > 0.0:
            continue
        c_lo = gauss[b, j, G_MIN]
        c_hi = gauss[b, j, G_MAX]
        start = _first_at_or_above(acc, n_thresholds, c_lo, int((c_lo - lo) * per_step) - 1)
        stop = _first_at_or_above(acc, n_thresholds, c_hi, int((c_hi - lo) * per_step) - 1)
        acc[1, stop] += n
        if start == stop:
            continue
        mu = gauss[b, j, G_MEAN]
        inverse_scale = _deviation(gauss[b, j, G_SSD], n)[1]
        for t in range(start, stop):
            p = _approximate_cdf(acc[0, t], mu, inverse_scale)
            acc[2, t] += n * p
            acc[3, t] += n
            acc[4, t] += n * _chord(p)
    base = pre_entropy - (weight * math.log2(weight) - sum_n_log_n) / weight
    lower = -np.inf
    upper = -np.inf
    fraction = min_branch_fraction
    wholly_left = 0.0
    for t in range(n_thresholds):
        wholly_left += acc[1, t]
        if not (lo < acc[0, t] < hi):
            continue
        share = acc[3, t] / weight
        q = (wholly_left + acc[2, t]) / weight
        width = _APPROXIMATE_CDF_ERROR * share + _SHARE_ROUNDING
        a = max(0.0, q - width)
        b = min(1.0, q + width)
        entropies = acc[4, t] / weight
        if b > fraction - _SHARE_ROUNDING and 1.0 - a > fraction - _SHARE_ROUNDING:
            h_max = 1.0 if a <= 0.5 <= b else max(_entropy(a), _entropy(b))
            upper = max(upper, base + h_max - entropies + _CDF_ENTROPY * share)
        if a > fraction + _SHARE_ROUNDING and 1.0 - b > fraction + _SHARE_ROUNDING:
            h_min = min(_entropy(a), _entropy(b))
            lower = max(lower, base + h_min - entropies - (_CHORD_ERROR + _CDF_ENTROPY) * share)
    return lower - _BOUND_SLACK, upper + _BOUND_SLACK
