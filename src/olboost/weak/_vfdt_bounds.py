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
from numba import types
from numba.extending import overload

from olboost.weak._prefetch import prefetch_record
from olboost.weak._vfdt_layout import G_MAX, G_MEAN, G_MIN, G_SSD, G_WEIGHT, N_GAUSS_FIELDS
from olboost.weak._vfdt_split import (
    _APPROXIMATE_CDF_ERROR,
    _CHORD_ERROR,
    _LN2,
    _PRUNE_SLACK,
    _approximate_cdf,
    _binary_entropy,
    _chord,
    _deviation,
    _scratch_columns,
)

#: What the approximate CDF's error can move ``h`` by: ``h(d)`` (about 2e-5 bits).
_CDF_ENTROPY = float(_binary_entropy(np.array([_APPROXIMATE_CDF_ERROR]))[0])
#: Rounding of the merits as computed, and of the sums here (the slack of the exact pruning).
_BOUND_SLACK = _PRUNE_SLACK
#: Rounding of the left share ``q~`` (a ratio of sums of up to thousands of terms).
_SHARE_ROUNDING = 1e-12


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


@numba.njit(cache=True, inline="always")
def _class_span(acc, n_thresholds, lo, per_step, n, c_lo, c_hi, sign):
    """The thresholds ``start`` to ``stop`` (excluded) that split a class of weight ``n`` and range
    ``[c_lo, c_hi]``, after adding (``sign`` 1) or taking back (``sign`` -1) its weight to row 1 of
    ``acc`` at ``stop``, the first threshold at or above its maximum (see
    :func:`_threshold_sums`). Taking back computes the same terms from the same record."""
    start = _first_at_or_above(acc, n_thresholds, c_lo, int((c_lo - lo) * per_step) - 1)
    stop = _first_at_or_above(acc, n_thresholds, c_hi, int((c_hi - lo) * per_step) - 1)
    acc[1, stop] += sign * n
    return start, stop


# The terms of the classes a pass adds, or a catch-up takes back or adds (see _catch_up), as rows
# of their scratch ``items``: per (class, threshold that splits it) the threshold's index and
# value, the class's mean, inverse scale, weight and sign, then the approximate share and its
# chord term.
_I_T, _I_THRESHOLD, _I_MU, _I_SCALE, _I_N, _I_SIGN, _I_P, _I_CHORD = 0, 1, 2, 3, 4, 5, 6, 7
#: Rows of the scratch of a pass or a catch-up, and its columns (``item_columns``): terms are
#: computed in batches of up to this many, or the number of split points if more.
ITEM_ROWS = 8
ITEM_COLUMNS = 256


@numba.njit(cache=True, inline="always")
def item_columns(n_split_points):
    """Columns of the scratch of a pass or a catch-up: room for at least one class's terms."""
    return max(ITEM_COLUMNS, n_split_points)


@numba.njit(cache=True, inline="always")
def _class_items(acc, n_thresholds, lo, per_step, n, c_lo, c_hi, mu, ssd, sign, items, count):
    """Add (``sign`` 1) or take back (``sign`` -1) the terms of one class of weight ``n``, range
    ``[c_lo, c_hi]``, mean ``mu`` and squared deviations ``ssd`` to the rows 1-4 of ``acc`` (see
    :func:`_threshold_sums`): row 1's at once, those of rows 2-4 queued in ``items`` (from column
    ``count``; returns the new count) for :func:`_add_items`. The batch queued so far is added
    first when this class's terms might not fit."""
    if count + n_thresholds > items.shape[1]:
        _add_items(acc, items, count)
        count = 0
    start, stop = _class_span(acc, n_thresholds, lo, per_step, n, c_lo, c_hi, sign)
    if start == stop:
        return count
    inverse_scale = _deviation(ssd, n)[1]
    for t in range(start, stop):
        items[_I_T, count] = t
        items[_I_THRESHOLD, count] = acc[0, t]
        items[_I_MU, count] = mu
        items[_I_SCALE, count] = inverse_scale
        items[_I_N, count] = n
        items[_I_SIGN, count] = sign
        count += 1
    return count


# _add_items, _threshold_sums, _merit_bounds and _catch_up are compiled once each, not inlined
# into their callers by Numba (inline="always" copies and types a callee's IR at every call
# site): inlined, _kept_bounds_of_merits alone took 13 s of Numba's front end on a cold cache, and
# the trees' whole learn 55 s; compiled apart, 1 s and 43 s (scratch, compile events, one
# process). LLVM still sees their code when it optimises the callers; the 23 seeded fingerprints
# (benchmarks/fingerprints.py) and the run times of benchmarks/large_k.py and benchmarks/topk.py
# (paired with the inlined build) did not change. Compiled as their callers are: without Numba's
# runtime, under the numpy error model (see _kept_bounds_of_merits).
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _add_items(acc, items, count):
    """Add the terms queued by :func:`_class_items` to rows 2-4 of ``acc``, in the order they were
    queued: the sums of adding one class at a time, to the bit. The shares and chords are
    computed first over the whole batch, in two vector loops (one class at a time, a class's few
    thresholds made a scalar loop of the approximate CDF, the most of a catch-up's time)."""
    for q in range(count):
        items[_I_P, q] = _approximate_cdf(
            items[_I_THRESHOLD, q], items[_I_MU, q], items[_I_SCALE, q]
        )
    for q in range(count):
        items[_I_CHORD, q] = items[_I_N, q] * _chord(items[_I_P, q])
    for q in range(count):
        t = int(items[_I_T, q])
        sign = items[_I_SIGN, q]
        n = items[_I_N, q]
        acc[2, t] += sign * (n * items[_I_P, q])
        acc[3, t] += sign * n
        acc[4, t] += sign * items[_I_CHORD, q]


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _threshold_sums(
    observed, blocks, gauss, j, n_split_points, n_log_n, present, acc, ahead, items
):  # fmt: skip
    """The sums behind :func:`_bounds_of_merits`: ``(lo, hi, weight, sum_n_log_n)``, the range of
    feature ``j`` over the classes, their weight and the sum of ``n log2 n``, and, when ``lo <
    hi``, in ``acc`` the thresholds (row 0, ``inf`` after the last); per threshold, the weight of
    the classes wholly left that it is the first at or above the maximum of (row 1); and over
    the classes the threshold splits, the sum of ``n_c p~_c``, their weight and the sum of ``n_c
    chord(p~_c)`` (rows 2-4). ``items`` is the scratch of :func:`_add_items`."""
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
        return lo, hi, weight, sum_n_log_n  # no threshold strictly inside the range (or no class)
    n_thresholds = n_split_points
    step = (hi - lo) / (n_thresholds + 1.0)
    per_step = 1.0 / step
    for t in range(n_thresholds + 1):
        acc[0, t] = lo + step * (t + 1) if t < n_thresholds else np.inf
        acc[1, t] = 0.0
        acc[2, t] = 0.0
        acc[3, t] = 0.0
        acc[4, t] = 0.0
    count = np.int64(0)  # not a literal 0 (see _catch_up)
    for i in range(present.shape[0]):
        c = present[i]
        if not observed[c] > 0.0:
            continue
        b = blocks[c]
        n = gauss[b, j, G_WEIGHT]
        if not n > 0.0:
            continue
        count = _class_items(
            acc, n_thresholds, lo, per_step, n, gauss[b, j, G_MIN], gauss[b, j, G_MAX],
            gauss[b, j, G_MEAN], gauss[b, j, G_SSD], 1.0, items, count,
        )  # fmt: skip
    _add_items(acc, items, count)
    return lo, hi, weight, sum_n_log_n


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _merit_bounds(
    acc, n_thresholds, lo, hi, weight, sum_n_log_n, pre_entropy, fraction, drift, drift_n_log_n
):  # fmt: skip
    """``(lower, upper)`` from the sums of :func:`_threshold_sums` (``lo < hi``), beyond a fresh
    pass's rounding the sums of rows 1-4 and the weight being within ``drift`` times the weight
    of their values, and the sum of n log2 n within ``drift_n_log_n``."""
    base = pre_entropy - (weight * math.log2(weight) - sum_n_log_n) / weight
    # base = pre_entropy - log2(weight) + sum_n_log_n / weight: the weight's drift moves the
    # logarithm by at most drift / ln 2 and the ratio by drift times its size; the entropies
    # (row 4 over the weight, at most 1) by 2 drift
    slack = (
        _BOUND_SLACK
        + drift_n_log_n / weight
        + drift * (1.0 / _LN2 + abs(sum_n_log_n) / weight + 2.0)
    )
    lower = -np.inf
    upper = -np.inf
    wholly_left = 0.0
    for t in range(n_thresholds):
        wholly_left += acc[1, t]
        if not (lo < acc[0, t] < hi):
            continue
        share = acc[3, t] / weight
        q = (wholly_left + acc[2, t]) / weight
        # q: two drifting numerators over a drifting weight
        width = _APPROXIMATE_CDF_ERROR * share + _SHARE_ROUNDING + 3.0 * drift
        a = max(0.0, q - width)
        b = min(1.0, q + width)
        entropies = acc[4, t] / weight
        if b > fraction - _SHARE_ROUNDING and 1.0 - a > fraction - _SHARE_ROUNDING:
            h_max = 1.0 if a <= 0.5 <= b else max(_entropy(a), _entropy(b))
            upper = max(upper, base + h_max - entropies + _CDF_ENTROPY * share)
        if a > fraction + _SHARE_ROUNDING and 1.0 - b > fraction + _SHARE_ROUNDING:
            h_min = min(_entropy(a), _entropy(b))
            lower = max(lower, base + h_min - entropies - (_CHORD_ERROR + _CDF_ENTROPY) * share)
    return lower - slack, upper + slack


# Compiled as _kept_bounds_of_merits is (see there).
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _bounds_of_merits(
    observed, blocks, gauss, j, pre_entropy, n_split_points, min_branch_fraction, n_log_n, present,
    acc, ahead, items,
):  # fmt: skip
    """``(lower, upper)`` bounds on the best merit of numeric feature ``j`` that
    :func:`olboost.weak._vfdt_split._best_numeric` computes (the maximum over its thresholds),
    ``-inf`` where no threshold can be (lower: must be) valid; see the module docstring.
    ``n_log_n[c]`` is ``observed[c] log2 observed[c]``; ``acc`` is scratch of 5 rows and at least
    ``n_split_points + 1`` columns; ``ahead`` is a feature whose Gaussian records are prefetched
    meanwhile (-1: none); ``items`` is the scratch of :func:`_add_items` (:func:`item_columns`).
    Rows of ``acc`` are indexed, never taken as views: a view counts a reference to the array,
    in and out, by atomic operations, and this runs per class."""
    lo, hi, weight, sum_n_log_n = _threshold_sums(
        observed, blocks, gauss, j, n_split_points, n_log_n, present, acc, ahead, items
    )
    if not lo < hi:
        return -np.inf, -np.inf
    return _merit_bounds(
        acc, n_split_points, lo, hi, weight, sum_n_log_n, pre_entropy, min_branch_fraction, 0.0,
        0.0,
    )  # fmt: skip


# ------------------------------------------------------------------ sums kept between attempts
#
# At a leaf that hundreds of classes reached, attempts are frequent and each narrows most
# features, while between two attempts the leaf updates the records of a few classes only (on
# the 1,000-label stream of benchmarks/large_k.py, a median of 17 updates of a leaf between two
# of its attempts, at leaves of hundreds of classes).
# Each tree therefore keeps, for its KEPT_LEAVES most recently attempted leaves, each feature's
# sums of _threshold_sums, and logs the records its classes had before each update of those
# leaves (the learn loop of _vfdt_kernels calls _log_update): narrowing a feature again takes
# back the terms of each class updated since from its record before the first of those updates,
# and adds those of its record now, instead of summing over every class. The thresholds stay
# those of a fresh pass as long as no updated class leaves the range [lo, hi] (a range only
# grows); otherwise, or when the log no longer reaches back to the feature's last narrowing, or
# after MAX_AGE updates, the sums are made afresh. The additions differ from a fresh pass's, so
# the sums do in their last bits: every partial sum of rows 1-4 and of the weight is at most the
# leaf's weight now (each term is a class's weight times a share or chord in [0, 1], a class's
# weight only grows, and each update takes back before it adds), so each of the two extra
# roundings per update moves it by at most 2^-53 times that weight; the sum of n log2 n, whose
# terms can have either sign, is tracked: each rounding by at most 2^-53 times the sum it gives
# (row 5, column 4, adds them up). _merit_bounds widens the bounds by what these can move them
# (for the rows and the weight, at most 2 MAX_AGE 2^-53, 1.5e-11, of the weight; the bounds'
# width is about 6e-4 bits): they hold as fresh ones do, so the attempts' outcomes are the same.

#: Leaves per tree whose sums are kept.
KEPT_LEAVES = 4
#: Updates of kept leaves logged per tree (a power of two): a feature's sums are brought up to
#: date only if the tree logged at most this many updates since the feature was narrowed.
LOG_LENGTH = 128
#: Classes from which a leaf's sums are kept: below, a fresh pass costs little more than
#: bringing kept sums up to date, and logging the updates costs more than it saves.
KEEP_MIN_CLASSES = 64
#: Updates a feature's sums take in before they are made afresh (see above).
MAX_AGE = 1 << 16
#: The largest relative rounding of one addition, 2^-53.
_UNIT_ROUNDING = 2.0**-53

# A tree's kept state is three arrays (each array a kernel is given costs two atomic reference
# counts per call, and the trees' records go to every split attempt): a row of integers
# ``kept[i]``, laid out as below (``m`` features, ``k`` labels); the logged records
# ``log[i, r, j]`` (the Gaussian record of feature j); and per kept leaf and feature the sums
# ``acc[i, e, j]``: rows 0-4 those of _threshold_sums, row 5 ``(lo, hi, weight, sum of n log2
# n, bound on the extra rounding of that sum)``.
_SLOT = 0  # the leaf of each kept entry, -1: none
_USED = KEPT_LEAVES  # when each entry was last used (the tree's update count, plus one)
_SEQ = 2 * KEPT_LEAVES  # updates of kept leaves logged
_LOG_SLOT = _SEQ + 1  # leaf of each logged update (LOG_LENGTH of them)
_LOG_CLASS = _LOG_SLOT + LOG_LENGTH  # class entry (its position in the leaf) of each update
_SYNCED = _LOG_CLASS + LOG_LENGTH  # per (entry, feature): update count at its last narrowing
# then per (entry, feature) the updates taken into its sums since made afresh, and k flags


def new_kept_sums(
    n_trees: int, n_features: int, n_labels: int, n_split_points: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept state of ``n_trees`` trees, none kept yet: ``(kept, log, acc)``."""
    e, m = KEPT_LEAVES, n_features
    kept = np.zeros((n_trees, _SYNCED + 2 * e * m + n_labels), dtype=np.int64)
    kept[:, _SLOT : _SLOT + e] = -1
    kept[:, _LOG_SLOT : _LOG_SLOT + LOG_LENGTH] = -1
    kept[:, _SYNCED : _SYNCED + e * m] = -1
    log = np.zeros((n_trees, LOG_LENGTH, m, N_GAUSS_FIELDS))
    acc = np.zeros((n_trees, e, m, 6, _scratch_columns.py_func(n_split_points)))
    return kept, log, acc


def no_kept_sums() -> tuple[None, None, None]:
    """The kept state of trees that keep no sums (too few labels): ``None``, so that the kernels
    compiled for them leave out the code of kept sums (it would add seconds to a cold start that
    uses none of it): a split attempt tests ``kept is None``, a branch Numba prunes by the
    argument's type, and the two functions below are typed by it."""
    return None, None, None


def _log_update(i, slot, block, label, gauss, kept, log):
    """Before leaf ``slot`` of tree ``i`` updates the records (block ``block``) of its class
    entry ``label`` (a position in the leaf's entries, stable while the leaf lives),
    log them if the tree keeps the leaf's sums (compiled code only)."""
    raise NotImplementedError


def _forget_kept(i, slot, kept):
    """Tree ``i`` stops keeping the sums of leaf ``slot`` (compiled code only)."""
    raise NotImplementedError


def _keeps(kept) -> bool:
    return isinstance(kept, types.Array)


# Without Numba's runtime: called at every (tree, label) a tree learns, it counted a reference to
# each of its arrays in and out (perf, TopAda on mediamill-reduced), and it allocates nothing.
@overload(_log_update, jit_options={"_nrt": False})
def _log_update_typed(i, slot, block, label, gauss, kept, log):
    if _keeps(kept):
        return lambda i, slot, block, label, gauss, kept, log: _log_kept_update(
            i, slot, block, label, gauss, kept, log
        )
    return lambda i, slot, block, label, gauss, kept, log: None


@overload(_forget_kept)
def _forget_kept_typed(i, slot, kept):
    if _keeps(kept):
        return lambda i, slot, kept: _forget_kept_leaf(i, slot, kept)
    return lambda i, slot, kept: None


@numba.njit(cache=True, inline="always")
def _log_kept_update(i, slot, block, label, gauss, kept, log):
    """:func:`_log_update` for trees that keep sums."""
    for e in range(KEPT_LEAVES):
        if kept[i, _SLOT + e] == slot:
            r = kept[i, _SEQ] & (LOG_LENGTH - 1)
            kept[i, _LOG_SLOT + r] = slot
            kept[i, _LOG_CLASS + r] = label
            for j in range(gauss.shape[1]):
                for g in range(gauss.shape[2]):
                    log[i, r, j, g] = gauss[block, j, g]
            kept[i, _SEQ] += 1
            return


@numba.njit(cache=True, inline="always")
def _forget_kept_leaf(i, slot, kept):
    """:func:`_forget_kept` for trees that keep sums."""
    for e in range(KEPT_LEAVES):
        if kept[i, _SLOT + e] == slot:
            kept[i, _SLOT + e] = -1


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _catch_up(i, slot, j, since, seq, observed, blocks, gauss, n_split_points, n_log_n, kept,
              log, age, mark, acc, items):  # fmt: skip
    """Bring the sums ``acc`` of feature ``j`` at leaf ``slot`` of tree ``i`` from the tree's
    update ``since`` to ``seq`` (see above); ``False``, changing nothing, if they must be made
    afresh. ``age`` and ``mark`` are the columns of the feature's age and of the flags in
    ``kept[i]``; the flags are clear, and left clear. ``n_log_n[c]`` is ``observed[c] log2
    observed[c]``; ``items`` is scratch of ``ITEM_ROWS`` rows and at least ``n_split_points``
    columns (:func:`item_columns`; see :func:`_add_items`)."""
    lo = acc[5, 0]
    hi = acc[5, 1]
    if not lo < hi:
        return False
    mask = LOG_LENGTH - 1
    for e in range(since, seq):
        r = e & mask
        if kept[i, _LOG_SLOT + r] != slot:
            continue
        c = kept[i, _LOG_CLASS + r]
        b = blocks[c]
        if b < 0:
            return False
        if gauss[b, j, G_WEIGHT] > 0.0 and observed[c] > 0.0:
            if gauss[b, j, G_MIN] < lo or gauss[b, j, G_MAX] > hi:
                return False
    n_thresholds = n_split_points
    per_step = 1.0 / ((hi - lo) / (n_thresholds + 1.0))
    weight = acc[5, 2]
    sum_n_log_n = acc[5, 3]
    drift_n_log_n = acc[5, 4]
    count = np.int64(0)  # not a literal 0: Numba would compile _add_items again for it
    for e in range(since, seq):
        r = e & mask
        if kept[i, _LOG_SLOT + r] != slot:
            continue
        c = kept[i, _LOG_CLASS + r]
        if kept[i, mark + c] != 0:
            continue  # the terms were those of its record before its first update since
        kept[i, mark + c] = 1
        # its old terms taken back, then its new ones added (one call site: compile time)
        for side in range(2):
            record = log[i, r] if side == 0 else gauss[blocks[c]]
            sign = -1.0 if side == 0 else 1.0
            n = record[j, G_WEIGHT]
            if n > 0.0 and (side == 0 or observed[c] > 0.0):
                count = _class_items(
                    acc, n_thresholds, lo, per_step, n, record[j, G_MIN], record[j, G_MAX],
                    record[j, G_MEAN], record[j, G_SSD], sign, items, count,
                )  # fmt: skip
                weight += sign * n
                # a class's n log2 n now as the attempt computed it (n_log_n, the same bits)
                current = side == 1 and n == observed[c]
                sum_n_log_n += sign * (n_log_n[c] if current else n * math.log2(n))
                drift_n_log_n += _UNIT_ROUNDING * abs(sum_n_log_n)
        kept[i, age] += 1
    _add_items(acc, items, count)
    for e in range(since, seq):
        r = e & mask
        if kept[i, _LOG_SLOT + r] == slot:
            kept[i, mark + kept[i, _LOG_CLASS + r]] = 0
    acc[5, 2] = weight
    acc[5, 3] = sum_n_log_n
    acc[5, 4] = drift_n_log_n
    return True


@numba.njit(cache=True, inline="always")
def _kept_entry(i, slot, kept, m):
    """The entry of tree ``i``'s kept sums for leaf ``slot``: its own, or the least recently
    used one, then cleared for it."""
    for e in range(KEPT_LEAVES):
        if kept[i, _SLOT + e] == slot:
            kept[i, _USED + e] = kept[i, _SEQ] + 1
            return e
    entry = 0
    for e in range(1, KEPT_LEAVES):
        if kept[i, _USED + e] < kept[i, _USED + entry]:
            entry = e
    kept[i, _SLOT + entry] = slot
    kept[i, _USED + entry] = kept[i, _SEQ] + 1
    for f in range(m):
        kept[i, _SYNCED + entry * m + f] = -1
    return entry


# Without Numba's runtime: see _vfdt_attempt._attempt_split. Under the numpy error model: no
# divisor here is ever zero, and the test for one that the Python model puts before each
# division keeps a loop from being vectorised (_add_items).
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _kept_bounds_of_merits(
    i, slot, j, observed, blocks, gauss, pre_entropy, n_split_points, min_branch_fraction,
    n_log_n, present, scratch, items, kept, kept_log, kept_acc,
):  # fmt: skip
    """:func:`_bounds_of_merits` of feature ``j`` at leaf ``slot`` of tree ``i``, from the sums
    the tree keeps for the leaf (see above), brought up to date or made afresh; at a leaf of
    fewer than KEEP_MIN_CLASSES classes, afresh in ``scratch`` (see there). ``items`` is the
    scratch of :func:`_add_items` (:func:`item_columns`)."""
    keep = present.shape[0] >= KEEP_MIN_CLASSES
    brought_up = False
    acc = scratch
    drift = 0.0
    if keep:
        m = kept_log.shape[2]
        e = _kept_entry(i, slot, kept, m)
        now = kept[i, _SEQ]
        synced = _SYNCED + e * m + j
        age = _SYNCED + (KEPT_LEAVES + e) * m + j
        mark = _SYNCED + 2 * KEPT_LEAVES * m
        since = kept[i, synced]
        acc = kept_acc[i, e, j]
        brought_up = (
            since >= 0
            and now - since <= LOG_LENGTH
            and kept[i, age] < MAX_AGE
            and _catch_up(
                i, slot, j, since, now, observed, blocks, gauss, n_split_points, n_log_n, kept,
                kept_log, age, mark, acc, items,
            )
        )  # fmt: skip
        if not brought_up:
            kept[i, age] = 0
        kept[i, synced] = now
        # each update taken in since the last fresh pass added two roundings (see above)
        drift = 2.0 * kept[i, age] * _UNIT_ROUNDING
    if brought_up:
        lo, hi, weight, sum_n_log_n = acc[5, 0], acc[5, 1], acc[5, 2], acc[5, 3]
    else:
        none = np.int64(-1)  # not a literal -1: Numba would compile _threshold_sums again for it
        lo, hi, weight, sum_n_log_n = _threshold_sums(
            observed, blocks, gauss, j, n_split_points, n_log_n, present, acc, none, items
        )
        if keep:
            acc[5, 0] = lo
            acc[5, 1] = hi
            acc[5, 2] = weight
            acc[5, 3] = sum_n_log_n
            acc[5, 4] = 0.0
    if not lo < hi:
        return -np.inf, -np.inf
    return _merit_bounds(
        acc, n_split_points, lo, hi, weight, sum_n_log_n, pre_entropy, min_branch_fraction, drift,
        acc[5, 4] if keep else 0.0,
    )  # fmt: skip


def kept_ages(kept: np.ndarray, n_features: int) -> np.ndarray:
    """``(trees, KEPT_LEAVES, m)``: the updates each kept feature's sums took in since they were
    made afresh (for tests and diagnostics)."""
    e, m = KEPT_LEAVES, n_features
    start = _SYNCED + e * m
    return kept[:, start : start + e * m].reshape(-1, e, m)
