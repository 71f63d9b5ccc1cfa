"""Split evaluation of the compiled Hoeffding trees: the entropy criterion and the best numeric
(Gaussian, River's ``GaussianSplitter``) and nominal (multiway and binary, River's
``NominalSplitterClassif``) split candidates of a leaf."""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.weak._prefetch import prefetch_record
from olboost.weak._vfdt_layout import (
    _SQRT2,
    G_MAX,
    G_MEAN,
    G_MIN,
    G_SSD,
    G_WEIGHT,
    NOMINAL_EQ,
    NOMINAL_MULTIWAY,
    W_HI,
    W_LO,
    W_MU,
    W_N,
    W_NLOGN,
    W_NLOGN_F,
    W_SIGMA,
)

# ------------------------------------------------------------------------------ split criterion


@numba.njit(cache=True, inline="always")
def _row_sum(a, r, present):
    """``np.sum(a[r])`` (same additions in the same order, the entries outside ``present`` being
    zero) without making a view of the row."""
    total = 0.0
    for c in present:
        total += a[r, c]
    return total


@numba.njit(cache=True, inline="always")
def _row_entropy(a, r, present):
    """Entropy (bits) of the weight vector ``a[r]`` (zero outside ``present``), computed as
    River's ``InfoGainSplitCriterion`` does."""
    return _entropy_of(a[r], present)


@numba.njit(cache=True, inline="always")
def _entropy_of(row, present):
    """:func:`_row_entropy` of a vector."""
    # no logarithm to reuse (the flag is a constant: the test folds away)
    return _entropy_with(row, present, row, row, False)


@numba.njit(cache=True, inline="always")
def _entropy_with(row, present, n_log_n, observed, reuse=True):
    """:func:`_entropy_of` taking ``d log2 d`` from ``n_log_n[c]`` (``observed[c] log2
    observed[c]``) for each class whose ``row[c]`` is ``observed[c]``: the same bits, a
    logarithm fewer per such class (none taken with ``reuse`` False)."""
    entropy = 0.0
    total = 0.0
    for c in present:
        d = row[c]
        if d > 0.0:
            entropy -= n_log_n[c] if reuse and d == observed[c] else d * math.log2(d)
            total += d
    if total > 0.0:
        return (entropy + total * math.log2(total)) / total
    return 0.0


# ------------------------------------------------------------------------------ split candidates
#
# A leaf's attribute observers for class c live in block ``blocks[c]`` (-1 if the leaf has not
# seen class c since its observers were last reset): ``gauss[block, j]`` holds the Gaussian of
# numeric feature j and ``nominal[block, offset_j + v]`` the weight of category v of nominal
# feature j. ``observed[c]`` is the weight of class c seen by the observers. Every loop over classes
# runs over ``present``, the leaf's classes in increasing order: the other classes' weights are zero
# and add nothing to any sum (so the sums are the dense ones bit for bit), and their entries of the
# ``work`` rows are never written nor read. A split costs the classes that reached the leaf, not k.


@numba.njit(cache=True, inline="always")
def _deviation(ssd, n):
    """A class's standard deviation from its sum of squared deviations ``ssd`` over weight
    ``n`` (``ddof=1``, 0 below two units of weight, as River's ``proba.Gaussian``), and the
    inverse scale ``1 / (sigma sqrt(2))`` that :func:`_approximate_cdf` takes: -1 marks a zero
    deviation, and an infinite one (``ssd`` overflowed) gives 0. Every bound on a merit reads
    the deviation from here, so that the marker means the same everywhere."""
    # Welford's update can round a sum of squared deviations a little below 0 (very uneven
    # weights): a zero deviation, as the NaN its root would be was already taken everywhere
    sigma = math.sqrt(max(ssd, 0.0) / (n - 1.0)) if n > 1.0 else 0.0
    return sigma, 1.0 / (sigma * _SQRT2) if sigma > 0.0 else -1.0


@numba.njit(cache=True, inline="always")
def _gaussian_params(observed, blocks, gauss, j, work, present):
    """Per-class weight, mean, standard deviation (``ddof=1``, 0 below two units of weight, as
    River's ``proba.Gaussian``), min and max of feature ``j`` into ``work[W_N]``, ``work[W_MU]``
    .. ``work[W_HI]``, and ``n log2 n`` of the weight into ``work[W_NLOGN_F]``.

    The weight is the one feature ``j``'s observer saw (``G_WEIGHT``): a class's weight less its
    examples whose value of ``j`` was missing. Without missing values it equals ``observed[c]``
    bit for bit (the same additions), and the ``n log2 n`` computed once per split attempt
    (``work[W_NLOGN]``) is reused. ``work[1]``, a branch row that is free while candidates are
    evaluated, gets ``1 / (sigma sqrt(2))`` (-1 for a zero deviation; 0 for an infinite one,
    whose sum of squared deviations overflowed) for :func:`_approximate_cdf`."""
    # work[ROW, c] and a range loop: no view nor iterator, each a new array reference counted
    # in and out atomically (see _best_numeric)
    for i in range(present.shape[0]):
        c = present[i]
        n = gauss[blocks[c], j, G_WEIGHT] if observed[c] > 0.0 else 0.0
        work[W_N, c] = n
        if n > 0.0:
            b = blocks[c]
            work[W_MU, c] = gauss[b, j, G_MEAN]
            sigma, inverse_scale = _deviation(gauss[b, j, G_SSD], n)
            work[W_SIGMA, c] = sigma
            work[W_LO, c] = gauss[b, j, G_MIN]
            work[W_HI, c] = gauss[b, j, G_MAX]
            work[1, c] = inverse_scale
            work[W_NLOGN_F, c] = work[W_NLOGN, c] if n == observed[c] else n * math.log2(n)
        else:
            work[W_NLOGN_F, c] = 0.0


@numba.njit(cache=True, inline="always")
def _cdf(threshold, mu, sigma):
    if sigma > 0.0:
        return 0.5 * (1.0 + math.erf(((threshold - mu) / sigma) / _SQRT2))
    return 0.0  # River catches the ZeroDivisionError of a zero deviation and returns 0


@numba.njit(cache=True, inline="always")
def _numeric_partition(threshold, work, post, present):
    """Estimated class weights left (``x <= threshold``) and right of a threshold, from each
    class's Gaussian (:func:`_gaussian_params`), as River's
    ``GaussianSplitter._class_dists_from_binary_split``."""
    observed, mu, sigma, lo, hi = work[W_N], work[W_MU], work[W_SIGMA], work[W_LO], work[W_HI]
    for c in present:
        n = observed[c]
        post[0, c] = 0.0
        post[1, c] = 0.0
        if n <= 0.0:
            continue
        if threshold < lo[c]:
            post[1, c] = n
        elif threshold >= hi[c]:
            post[0, c] = n
        else:
            post[0, c] = _cdf(threshold, mu[c], sigma[c]) * n
            post[1, c] = n - post[0, c]


_LN2 = math.log(2.0)

# Abramowitz & Stegun 7.1.28: erf(x) = 1 - (1 + a1 x + ... + a6 x^6)^-16 + e(x), |e(x)| <= 3e-7
# for x >= 0. _approximate_cdf is thus within 1.5e-7 of _cdf; the bound allows 1e-6.
_AS_COEFFICIENTS = (
    0.0705230784, 0.0422820123, 0.0092705272, 0.0001520143, 0.0002765672, 0.0000430638,
)  # fmt: skip
_APPROXIMATE_CDF_ERROR = 1e-6


@numba.njit(cache=True, inline="always")
def _approximate_cdf(threshold, mu, inverse_scale):
    """:func:`_cdf` within ``_APPROXIMATE_CDF_ERROR``, without ``erf`` nor division (a rational
    function, Abramowitz & Stegun 7.1.28), ``inverse_scale`` being ``1 / (sigma sqrt(2))``, or -1
    for a zero deviation: cheap enough to bound a merit before computing it. (Multiplying by
    the inverse moves ``z`` by a few units in the last place, and the CDF by far less than the
    allowance.) An infinite deviation (a sum of squared deviations that overflowed) has inverse
    scale 0, hence ``z = 0`` and 1/2, as :func:`_cdf` gives it; so the zero deviation, for which
    :func:`_cdf` gives 0, needs a marker of its own."""
    if inverse_scale < 0.0:
        return 0.0
    z = (threshold - mu) * inverse_scale
    x = abs(z)
    a1, a2, a3, a4, a5, a6 = _AS_COEFFICIENTS
    p = 1.0 + x * (a1 + x * (a2 + x * (a3 + x * (a4 + x * (a5 + x * a6)))))
    p2 = p * p
    p4 = p2 * p2
    p8 = p4 * p4
    tail = 1.0 / (p8 * p8)
    return 0.5 * tail if z < 0.0 else 1.0 - 0.5 * tail


# Below this lower bound on q (1 - q) (q: the share of the weight on the left) the chi-square
# bound of _chi_square_ceilings is not used: its rounding error grows as 1 / (q (1 - q)) and could
# then exceed _PRUNE_SLACK.
_PRUNE_MIN_SHARE = 1e-3
# Absorbs the rounding of a merit and of its bound (each within about 1e-12 of its exact value
# for any feasible class count and weight), so that a threshold is skipped only when its merit,
# as computed, is below the floor (the same slack as _vfdt_attempt._CEILING_SLACK).
_PRUNE_SLACK = 1e-9

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


@numba.njit(cache=True, inline="always")
def _chord(p):
    """The chord of ``h`` over the table cell holding ``p`` (in [0, 1]), at ``p``: at most
    ``h(p)``, by at most ``_CHORD_ERROR``."""
    x = p * _CELLS
    cell = min(int(x), _CELLS - 1)
    low = _ENTROPY_TABLE[cell]
    return low + (_ENTROPY_TABLE[cell + 1] - low) * (x - cell)


@numba.njit(cache=True, inline="always")
def _chord_clamped(p):
    """:func:`_chord` for ``p`` in [0, 1], and a value of the table for any other ``p``, NaN
    included (the index stays in the table): for loops of selects, which evaluate it on lanes
    whose result they discard."""
    p = p if p >= 0.0 else 0.0
    return _chord(p if p <= 1.0 else 1.0)


# Covers the rounding of _tighter_bound's recovery of x from a linear bound (about 1e-15).
_TIGHTER_SLACK = 1e-12


@numba.njit(cache=True, inline="always")
def _tighter_bound(linear, base):
    """The bound ``base + log2(1 + x)`` on a threshold's merit from its linear chi-square bound
    ``linear = base + x / ln 2`` (:func:`_chi_square_ceilings`), ``base`` being ``pre_entropy -
    H(C) + _PRUNE_SLACK``: tighter (``log2(1 + x) <= x / ln 2``), and still above the merit since
    ``I(C; S)``, the KL divergence of the joint law of class and side from the product of its
    marginals, is at most the logarithm of one plus their chi-square divergence (Jensen), and
    that divergence is ``x = sum_c w_c (p_c - q)^2 / (q (1 - q))`` (its upper bound from the
    approximate shares; the form is increasing in it). For a finite ``linear`` only."""
    return base + math.log1p((linear - base) * _LN2) / _LN2 + _TIGHTER_SLACK


# Far beyond the rounding of _tighter_bound and of the bracket below (values of a few bits,
# each within about 1e-14 of its exact value).
_BRACKET_MARGIN = 1e-11


@numba.njit(cache=True, inline="always")
def _tighter_bracket(linear, base):
    """Lower and upper bounds on :func:`_tighter_bound` without its logarithm, from ``2 u / (2
    + u) <= log(1 + u) <= u (6 + u) / (6 + 4 u)`` for ``u >= 0`` (Topsoe), less and plus
    ``_BRACKET_MARGIN``; ``(-inf, inf)`` if ``u < 0``. A comparison they settle is the one the
    bound gives as computed; the others need it."""
    u = (linear - base) * _LN2
    if not u >= 0.0:
        return -np.inf, np.inf
    low = base + (2.0 * u / (2.0 + u)) / _LN2 + _TIGHTER_SLACK - _BRACKET_MARGIN
    high = base + (u * (6.0 + u) / (6.0 + 4.0 * u)) / _LN2 + _TIGHTER_SLACK + _BRACKET_MARGIN
    return low, high


@numba.njit(cache=True, inline="always")
def _tighter_bound_below(linear, base, target):
    """Whether ``_tighter_bound(linear, base) < target``, its logarithm taken only when
    :func:`_tighter_bracket` leaves it open."""
    low, high = _tighter_bracket(linear, base)
    if low >= target:
        return False
    if high < target:
        return True
    return _tighter_bound(linear, base) < target


@numba.njit(cache=True, inline="always")
def _scratch_columns(n_split_points):
    """Columns of the scratch ``acc`` of :func:`_chi_square_ceilings` and of
    :func:`olboost.weak._vfdt_bounds._bounds_of_merits` (at least ``n_split_points + 1``): a whole
    number of 8-wide vectors, at least two, since :func:`_chi_square_ceilings` runs over every
    column and LLVM takes its vector loop for 16 iterations or more. The ``table`` of the
    threshold bounds has twice as many and two more (see :func:`_chi_square_ceilings`)."""
    return max(16, (n_split_points + 8) // 8 * 8)


@numba.njit(cache=True, inline="always")
def _observed_range(work, present):
    """After :func:`_gaussian_params`: the range ``(lo, hi)`` of the feature over its classes,
    their total weight, and the entropy (bits) of their weights, ``H(C)`` (``lo`` is ``inf``
    when no class has weight)."""
    lo = np.inf
    hi = -np.inf
    weight = 0.0
    sum_n_log_n = 0.0
    for i in range(present.shape[0]):
        c = present[i]
        n = work[W_N, c]
        if n > 0.0:
            lo = min(lo, work[W_LO, c])
            hi = max(hi, work[W_HI, c])
            weight += n
            sum_n_log_n += work[W_NLOGN_F, c]
    h_classes = (weight * math.log2(weight) - sum_n_log_n) / weight if weight > 0.0 else 0.0
    return lo, hi, weight, h_classes


@numba.njit(cache=True, inline="always")
def _dense_gaussians(observed, blocks, gauss, j, work, present, last_weight, last_log):
    """:func:`_gaussian_params` then :func:`_observed_range` for :func:`_chi_square_ceilings`,
    the same values to the bit, but by position in ``present`` (``work[ROW, i]`` for its ``i``-th
    class, not ``work[ROW, c]``) and without the deviation row: the records are read in one
    loop, and the deviations and inverse scales (a square root and two divisions per class, a
    fifth of the pass as one scalar loop, perf on TopAda, yeast) computed in another, a vector
    loop of selects over contiguous rows. ``work[W_SIGMA]`` holds the sums of squared
    deviations; classes of no weight get 0 weight and -1 inverse scale. Only in a function of
    the numpy error model (a division by zero on a discarded lane gives inf, not an error).

    Also returns ``weight log2 weight``, taken as ``last_log`` when the weight is
    ``last_weight`` (the previous feature's, in a pass: without missing values every feature
    of a leaf has its classes' weights, added in the same order, so one logarithm per pass
    instead of one per feature; NaN for none)."""
    lo = np.inf
    hi = -np.inf
    weight = 0.0
    sum_n_log_n = 0.0
    n_classes = present.shape[0]
    for i in range(n_classes):
        c = present[i]
        n = gauss[blocks[c], j, G_WEIGHT] if observed[c] > 0.0 else 0.0
        work[W_N, i] = n
        work[W_SIGMA, i] = 0.0
        if n > 0.0:
            b = blocks[c]
            work[W_MU, i] = gauss[b, j, G_MEAN]
            work[W_SIGMA, i] = gauss[b, j, G_SSD]
            work[W_LO, i] = gauss[b, j, G_MIN]
            work[W_HI, i] = gauss[b, j, G_MAX]
            lo = min(lo, work[W_LO, i])
            hi = max(hi, work[W_HI, i])
            weight += n
            sum_n_log_n += work[W_NLOGN, c] if n == observed[c] else n * math.log2(n)
    for i in range(n_classes):
        n = work[W_N, i]
        sigma = math.sqrt(max(work[W_SIGMA, i], 0.0) / (n - 1.0))  # as _deviation
        sigma = sigma if n > 1.0 else 0.0
        inverse_scale = 1.0 / (sigma * _SQRT2)
        work[1, i] = inverse_scale if sigma > 0.0 else -1.0
    weight_log = last_log if weight == last_weight else weight * math.log2(weight)
    h_classes = (weight_log - sum_n_log_n) / weight if weight > 0.0 else 0.0
    return lo, hi, weight, h_classes, weight_log


# error_model="numpy": a division is IEEE's, with no test for a zero divisor (none is zero
# here), so that LLVM vectorises the loop over thresholds; Python's error model branches on
# every division. Not inlined, so that the model stays this function's; one call for all the
# features of an attempt, since a call costs about a third of a feature's pass.
@numba.njit(cache=True, error_model="numpy", _nrt=False)
def _chi_square_ceilings(
    first, stop, observed, blocks, gauss, kinds, pre_entropy, n_split_points,
    min_branch_fraction, work, present, acc, table,
):  # fmt: skip
    """For each numeric feature ``j`` from ``first`` to ``stop`` (``kinds[j] == 0``), upper bounds
    on the merits of its thresholds and upper and lower bounds on its best merit (``-inf`` if
    none). ``acc`` is scratch of 4 rows of ``w = _scratch_columns(n_split_points)`` columns,
    ``table`` has ``2 w + 2``: ``table[j, t]`` holds threshold ``t``'s chi-square bound (``t <
    n_split_points``, the thresholds of :func:`_best_numeric`; the columns from
    ``n_split_points`` to ``w`` are computed too and mean nothing: whole vectors), ``table[j,
    w + 1 + t]`` its cap by the entropy of the side, and ``table[j, w]`` the feature's ceiling,
    the least of the tighter form (:func:`_tighter_bound`) of the largest chi-square bound and
    the largest of the thresholds' lesser bounds, and ``table[j, 2 w + 1]`` the floor, a lower
    bound on its best merit: ``pre_entropy - H(C)`` (the least merit of any valid threshold)
    if a threshold's approximate share makes it valid for certain, more from a valid threshold
    that no class straddles (its share exact), and ``-inf`` if neither. Overwrites the
    ``work`` rows of :func:`_gaussian_params`, by position in ``present``
    (:func:`_dense_gaussians`).

    The bound is the chi-square one of :func:`_best_numeric`'s docstring, taken from the shares
    ``p~_c`` of :func:`_approximate_cdf`, plus ``_PRUNE_SLACK``; it is ``-inf`` for a threshold
    whose merit is ``-inf`` for certain (outside ``(lo, hi)``, or an approximate left share
    ``q~`` at or below the minimum branch fraction on either side by more than twice the CDF
    allowance ``d``: the share ``q`` is within ``d`` of ``q~``), and ``inf`` where the bound does
    not apply (``q (1 - q)`` may be under ``_PRUNE_MIN_SHARE``, or a NaN).

    The classes are the outer loop and the thresholds the inner one, with no branch: the loop
    runs on vector registers, several times as fast as one (class, threshold) at a time."""
    threshold = acc[0]
    share = acc[1]
    square = acc[2]
    straddling = acc[3]
    width = acc.shape[1]
    d = _APPROXIMATE_CDF_ERROR
    last_weight = np.nan
    weight_log = np.nan
    for j in range(first, stop):
        if kinds[j] > 0:
            continue
        bounds = table[j]
        if j + 1 < stop:
            for i in range(present.shape[0]):
                if blocks[present[i]] >= 0:
                    prefetch_record(gauss, blocks[present[i]], j + 1)
        lo, hi, weight, h_classes, weight_log = _dense_gaussians(
            observed, blocks, gauss, j, work, present, last_weight, weight_log
        )
        last_weight = weight
        ceiling = -np.inf
        if lo == np.inf:
            bounds[width] = ceiling
            bounds[2 * width + 1] = ceiling
            continue
        step = (hi - lo) / (n_split_points + 1.0)
        for t in range(width):
            threshold[t] = lo + step * (t + 1)
            share[t] = 0.0
            square[t] = 0.0
            straddling[t] = 0.0
        for i in range(present.shape[0]):
            n = work[W_N, i]
            if n <= 0.0:
                continue
            mu = work[W_MU, i]
            inverse_scale = work[1, i]
            below = work[W_LO, i]
            above = work[W_HI, i]
            for t in range(width):
                p = _approximate_cdf(threshold[t], mu, inverse_scale)
                p = 1.0 if threshold[t] >= above else p
                p = 0.0 if threshold[t] < below else p
                share[t] += n * p
                square[t] += n * p * p
                straddling[t] += 1.0 if below <= threshold[t] < above else 0.0
        base = pre_entropy - h_classes + _PRUNE_SLACK
        for t in range(width):
            q = share[t] / weight
            spread = q * (1.0 - q) - d
            variance = square[t] / weight - q * q + 2.0 * d * (2.0 + d)
            bound = base + variance / (spread * _LN2)
            # as selects, for the vector loop: -inf where invalid for certain, inf where the
            # bound does not apply (a NaN included)
            bound = np.inf if not (spread >= _PRUNE_MIN_SHARE and bound < np.inf) else bound
            side = min(q, 1.0 - q)
            bound = -np.inf if side < min_branch_fraction - 2.0 * d else bound
            bound = -np.inf if not (lo < threshold[t] < hi) else bound
            bounds[t] = bound
        # Each threshold's cap, and whether it gives a floor (below), as selects: a second
        # vector loop. (Written as a loop of branches over the split points it took about a
        # third of this function's time, perf on TopAda, yeast.)
        n_exact = 0
        n_valid = 0
        for t in range(width):
            q = share[t] / weight
            # Valid for certain: inside the range, and the share q, within d of q~, leaves more
            # than the minimum branch fraction on either side. Then the feature's best merit
            # is at least pre - H(C) (taken below): the branches' class weights add up to the
            # observer's (the left one from the CDF, the right one the rest), so their
            # weighted entropy H(C | S) is at most H(C) (entropy is concave), I(C; S) >= 0.
            inside = (lo < threshold[t]) & (threshold[t] < hi)
            side = min(q, 1.0 - q)
            valid = inside & (t < n_split_points) & (side > min_branch_fraction + 2.0 * d + 1e-12)
            n_valid += 1 if valid else 0
            # No class straddles the threshold: the shares are 0 or 1, q is exact, and the
            # merit is pre - H(C) + h(q) exactly (the grouping rule of entropy), at least the
            # chord of h there; a lower bound on the feature's best merit when the threshold
            # is valid (q's rounding, about 1e-16, is far inside the margin). Flagged here
            # (the row of straddling counts becomes the flags) and taken below.
            exact = (straddling[t] == 0.0) & inside & (side > min_branch_fraction + 1e-12)
            straddling[t] = 1.0 if exact else 0.0
            n_exact += 1 if exact else 0
            # I(C; S) = H(S) - H(S | C) = h(q) - sum_c w_c h(p_c) bits. h(q) is at most h at
            # the share nearest 1/2 within d of q~ (h is concave), at most the chord of the
            # entropy table there plus its error; h(p) >= 4 p (1 - p), whose sum over the
            # classes, sum_c w_c p_c (1 - p_c), is (share - square) / weight, within d of its
            # value from the approximate shares (p - p^2 moves by at most |p - p~|). Tight where
            # the classes fall wholly on either side, where the chi-square bound is loosest;
            # and it holds where that bound does not apply.
            r = min(max(0.5, q - d), q + d)
            spread_within = max((share[t] - square[t]) / weight - d, 0.0)
            cap = base + _chord_clamped(r) + _CHORD_ERROR - 4.0 * spread_within
            cap = cap if 0.0 <= r <= 1.0 else np.inf
            bounds[width + 1 + t] = cap if bounds[t] > -np.inf else -np.inf
        capped = -np.inf
        for t in range(n_split_points):
            ceiling = max(ceiling, bounds[t])
            capped = max(capped, min(bounds[t], bounds[width + 1 + t]))
        # The floors of the thresholds no class straddles only where one is (on
        # mediamill-reduced, TopAda, 93% of the features of a pass had none), one threshold at
        # a time: two reads of the entropy table each, vector gathers in the loop above. A
        # flagged share is in (0, 1). (A valid threshold's floor alone let 70% more of that
        # run's split attempts end with no exact evaluation: 67,718 of 309,779 instead of
        # 39,833, and 694k exact evaluations instead of 747k; scratch counters.)
        floor_base = pre_entropy - h_classes - _PRUNE_SLACK
        floor = floor_base if n_valid > 0 else -np.inf
        if n_exact > 0:
            for t in range(n_split_points):
                if straddling[t] > 0.0:
                    floor = max(floor, floor_base + _chord(share[t] / weight))
        if -np.inf < ceiling < np.inf and capped > _tighter_bracket(ceiling, base)[0]:
            # one logarithm per feature, not per threshold (the form is increasing): the
            # ceiling is what decides which features an attempt evaluates exactly; none when
            # the caps are below it for certain (the least is theirs then)
            ceiling = _tighter_bound(ceiling, base)
        bounds[width] = min(ceiling, capped)
        bounds[2 * width + 1] = floor


# Not inlined: a function of its own, compiled once, keeps _attempt_split small enough for
# LLVM (inlined, it made the trees' learn take 8 s more to compile); one call per feature.
@numba.njit(cache=True, _nrt=False)
def _best_numeric(
    observed, blocks, gauss, j, pre_entropy, n_split_points, min_branch_fraction, work, present,
    table, floor,
):  # fmt: skip
    """Best threshold of numeric feature ``j``: ``(merit, threshold)``, merit ``-inf`` if none;
    ``table[j]`` holds the bounds on its thresholds' merits of :func:`_chi_square_ceilings`.

    Thresholds are spread evenly strictly inside the range observed over all classes; the first
    best one wins ties (MOA's ``GaussianNumericAttributeClassObserver``).

    ``floor`` (the second best merit of the features evaluated before this one in a split
    attempt, or ``-inf``) lets the thresholds whose merit is provably below both it and this
    feature's best so far be skipped: neither can change the feature's best, nor, when the
    feature's best is below ``floor``, the attempt's two best merits. So the result is exact
    whenever it reaches ``floor``, and otherwise below ``floor`` (possibly ``-inf``).

    A threshold's merit is the information gain of the partition of :func:`_numeric_partition`,
    fused into one pass: bit-identical to partition-then-merit (same operations in the same
    order), but it reuses each class's ``n log2 n`` (``work[W_NLOGN_F]``) when the class falls
    wholly on one side. It is ``pre_entropy - H(C | S) = pre_entropy - H(C) + I(C; S)``, ``H(C)``
    (``h_classes``) being the entropy of the class weights ``n_c`` of this feature's observers
    and ``S`` the side. With ``p_c`` the share of class ``c`` on the left and ``q`` that of all
    classes, ``I(C; S) = sum_c n_c / N KL(p_c || q)`` (``N`` being ``weight``), and a Bernoulli
    KL divergence is at most the chi-square one, ``(p_c - q)^2 / (q (1 - q))`` nats; so the merit
    is at most ``pre_entropy - H(C) + (sum_c w_c p_c^2 - q^2) / (q (1 - q) ln 2)`` with ``w_c =
    n_c / N``. Before any ``erf`` or logarithm, that bound is taken for every threshold
    (:func:`_chi_square_ceilings`) from shares ``p~_c`` within ``d = _APPROXIMATE_CDF_ERROR`` of
    the ``p_c`` (:func:`_approximate_cdf`, no ``erf``), widened by what that error can change
    (the numerator by at most ``2 d (2 + d)``, ``q (1 - q)`` by at most ``d``). A threshold whose
    bound, which carries ``_PRUNE_SLACK``, its cap from ``I(C; S) = H(S) - H(S | C)`` (see
    :func:`_chi_square_ceilings`) or its tighter form of :func:`_tighter_bound` is below both
    the floor and the feature's best so far, or is ``-inf``, is skipped (its merit
    taken as ``-inf``, which compares with the floor as the merit would). Otherwise the merit is
    computed exactly, in one pass."""
    # Written as one function, with work[ROW, c] rather than views of its rows and range loops
    # rather than iterators over present: a helper per threshold, a view or an iterator each
    # count a reference to an array in and out (atomic operations), and this runs for every
    # threshold of every feature of a split attempt (a per-threshold helper given work and
    # present took a quarter of Ada.OLMR's time on emotions).
    _gaussian_params(observed, blocks, gauss, j, work, present)
    n_present = present.shape[0]
    lo, hi, _, h_classes = _observed_range(work, present)
    best = -np.inf
    best_threshold = 0.0
    if lo == np.inf:
        return best, best_threshold
    base = pre_entropy - h_classes + _PRUNE_SLACK  # as _chi_square_ceilings has it
    side_caps = _scratch_columns(n_split_points) + 1  # the column of threshold 0's cap by h(q)
    step = (hi - lo) / (n_split_points + 1.0)
    for t in range(n_split_points):
        if table[j, t] < max(floor, best) or table[j, t] == -np.inf:
            continue
        if table[j, side_caps + t] < max(floor, best):
            continue
        # the tighter form of the bound, taken only where the linear one does not skip the
        # threshold: a logarithm that may spare an erf and two logarithms per class
        if table[j, t] < np.inf and _tighter_bound_below(table[j, t], base, max(floor, best)):
            continue
        threshold = lo + step * (t + 1)
        left = 0.0
        right = 0.0
        h_left = 0.0
        h_right = 0.0
        for i in range(n_present):
            c = present[i]
            n = work[W_N, c]
            if n <= 0.0:
                continue
            if threshold < work[W_LO, c]:
                right += n
                h_right -= work[W_NLOGN_F, c]
            elif threshold >= work[W_HI, c]:
                left += n
                h_left -= work[W_NLOGN_F, c]
            else:
                lw = _cdf(threshold, work[W_MU, c], work[W_SIGMA, c]) * n
                rw = n - lw
                left += lw
                right += rw
                if lw > 0.0:
                    h_left -= lw * math.log2(lw)
                if rw > 0.0:
                    h_right -= rw * math.log2(rw)
        total = left + right
        if total > 0.0 and (
            (left / total > min_branch_fraction) + (right / total > min_branch_fraction) >= 2
        ):
            e_left = (h_left + left * math.log2(left)) / left if left > 0.0 else 0.0
            e_right = (h_right + right * math.log2(right)) / right if right > 0.0 else 0.0
            merit = pre_entropy - (left * e_left + right * e_right) / total
            if merit > best:
                best = merit
                best_threshold = threshold
    return best, best_threshold


@numba.njit(cache=True, inline="always")
def _category_weights(blocks, nominal, cell, out, r, present):
    """Class weights of one category (``nominal`` column ``cell``) into row ``r`` of ``out``
    (the ``present`` classes' entries)."""
    for c in present:
        out[r, c] = nominal[blocks[c], cell] if blocks[c] >= 0 else 0.0


@numba.njit(cache=True, inline="always")
def _nominal_binary(blocks, nominal, offset, n_categories, value, post, present):
    """Class weights of ``x == value`` (branch 0) and ``x != value`` (branch 1), for the
    ``present`` classes."""
    for c in present:
        post[0, c] = 0.0
        post[1, c] = 0.0
    for v in range(n_categories):
        b = 0 if v == value else 1
        for c in present:
            if blocks[c] >= 0:
                post[b, c] += nominal[blocks[c], offset + v]


@numba.njit(cache=True, inline="always")
def _best_nominal(
    blocks, nominal, offset, n_categories, pre_entropy, min_branch_fraction, binary, work, present
):
    """Best split of a nominal feature: ``(merit, kind, value)``. The multiway split is the
    default (even at merit ``-inf``, as in River); if ``binary``, a binary ``x == v`` split
    replaces it only if strictly better, the first best ``v`` winning ties (River); otherwise the
    multiway split is the only candidate (MOA's and Weka's ``binarySplits=false``).

    Merit is information gain, ``-inf`` unless two branches hold more than
    ``min_branch_fraction`` of the weight (MOA's rule). Category ``v``'s class weights go to
    ``work[v]``; a category is observed when its weight is positive. A binary split's ``x == v``
    branch is category ``v``'s multiway branch, so its weight and entropy are computed once for
    both; every sum is taken in the order of River's computation (the ``x != v`` branch adds the
    other categories in increasing order; unobserved ones add exact zeros, as they add nothing to
    the multiway sums), so the merits are River's bit for bit."""
    for v in range(n_categories):
        _category_weights(blocks, nominal, offset + v, work, v, present)
    rest = work.shape[0] + W_MU
    total = 0.0
    post_entropy = 0.0
    best_binary = -np.inf
    best_value = 0.0
    for v in range(n_categories):
        weight = _row_sum(work, v, present)
        if not weight > 0.0:
            continue
        entropy = _row_entropy(work, v, present)
        total += weight
        post_entropy += weight * entropy
        if not binary:
            continue
        for c in present:
            others = 0.0
            for u in range(n_categories):
                if u != v:
                    others += work[u, c]
            work[rest, c] = others
        rest_weight = _row_sum(work, rest, present)
        both = 0.0 + weight + rest_weight
        if (weight / both > min_branch_fraction) + (rest_weight / both > min_branch_fraction) < 2:
            continue
        split_entropy = 0.0 + weight * entropy + rest_weight * _row_entropy(work, rest, present)
        merit = pre_entropy - split_entropy / both
        if merit > best_binary:
            best_binary = merit
            best_value = float(v)
    best = -np.inf
    if total > 0.0:
        big = 0
        for v in range(n_categories):
            big += _row_sum(work, v, present) / total > min_branch_fraction
        if big >= 2:
            best = pre_entropy - post_entropy / total
    if best_binary > best:
        return best_binary, NOMINAL_EQ, best_value
    return best, NOMINAL_MULTIWAY, 0.0
