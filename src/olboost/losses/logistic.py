"""Pairwise logistic surrogate for multi-label ranking (Jung & Tewari 2018, Sec. 3.2).

``L_log^Y(s) = w_Y sum_{l in Y} sum_{r not in Y} log(1 + exp(s[r] - s[l]))`` with
``w_Y = 1 / (|Y| |Y^c|)``. It is proper and convex; Ada.OLMR uses its gradient as cost vector
(eq. 8). When ``Y`` is empty or holds every label there is no pair: the loss and its gradient are
zero, the convention of the paper's rank loss.

The functions are compiled kernels the boosters call from their own compiled code: each raises a
``ValueError`` on arrays of other lengths than the scores (which it would read or write past
their ends), and checks nothing else.
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
def _check_lengths(s, y, out):
    # the kernels index y and out by the labels of s: a shorter one was read or written past
    # its end (no bounds checks in compiled code)
    if y.shape[0] != s.shape[0]:
        raise ValueError("y must hold one flag per score: len(y) == len(s)")
    if out.shape[0] != s.shape[0]:
        raise ValueError("out must hold one cost per score: len(out) == len(s)")


@numba.njit(cache=True, inline="always")
def _sigmoid(z: float) -> float:
    # 1 / (1 + e^-z) for z >= 0, e^z / (1 + e^z) below, both from e = e^-|z| (never overflows):
    # one branch-free form, as the sign of z is a coin flip in the cost vector's loops
    e = math.exp(-abs(z))
    return (1.0 if z >= 0.0 else e) / (1.0 + e)


@numba.njit(cache=True)
def logistic_loss(s: np.ndarray, y: np.ndarray) -> float:
    """Pairwise logistic loss ``L_log^Y(s)`` (Jung & Tewari 2018, Sec. 3.2) of scores ``s`` for
    the relevant-label mask ``y``."""
    _check_lengths(s, y, y)
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
    # np.bool_(True), not the literal True, for which Numba would compile a specialisation of
    # its own: one machine code for this caller and Ada.OLMR's update
    return grouped_logistic_cost(s, y, out, np.bool_(True))[0]


@numba.njit(cache=True)
def grouped_logistic_cost(
    s: np.ndarray, y: np.ndarray, out: np.ndarray, try_groups: bool
) -> tuple[float, bool]:
    """:func:`logistic_cost`, and whether grouping the irrelevant labels by score paid (see
    below; tried only with ``try_groups``): a caller computing the cost vectors of a sequence
    of scores that only grow more distinct (Ada.OLMR's experts) stops trying once it did not.
    The same bits either way."""
    _check_lengths(s, y, out)
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


# exp(a) for a <= 0 in plain arithmetic, whose loop compiles to vector code (the C library's exp
# is a call per value): Cody-Waite reduction
# a = m ln2 + x, |x| <= ln2 / 2, with ln2 split in two (fdlibm's constants), e^x by its Taylor
# polynomial of degree 13 (remainder below 2^-60), and 2^m written into the exponent bits. The
# terms it gives are within 3 units in the last place of those the C library's exp gives
# (tests/test_label_groups.py, over 25,000 values); below -708 it returns 2^-1021
# times a polynomial instead of a subnormal number, a term far below the rounding of any sum
# it enters.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# 2^52 + the exponent bias, and the bits of 2^52: an integer j in [0, 2^52) added to 2^52 is
# the float64 whose bits are those of 2^52 plus j
_EXPONENT_MAGIC = 4503599627370496.0 + 1023.0
_MAGIC_BITS = 0x4330000000000000


@numba.njit(cache=True, inline="always")
def _reduced_exp(a, m):
    """``e^x`` for the reduced argument ``x = a - m ln2`` (``|x| <= ln2 / 2``): the factor of
    ``e^a = 2^m e^x`` the exps below compute by a polynomial."""
    x = (a - m * _LN2_HI) - m * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * x + 1.0 / 479001600.0
    p = p * x + 1.0 / 39916800.0
    p = p * x + 1.0 / 3628800.0
    p = p * x + 1.0 / 362880.0
    p = p * x + 1.0 / 40320.0
    p = p * x + 1.0 / 5040.0
    p = p * x + 1.0 / 720.0
    p = p * x + 1.0 / 120.0
    p = p * x + 1.0 / 24.0
    p = p * x + 1.0 / 6.0
    p = p * x + 0.5
    p = p * x + 1.0
    return p * x + 1.0


@numba.njit(cache=True, inline="always")
def _exp_parts(a, r, mantissa, biased):
    """The two factors of ``e^a = 2^m e^x`` (``a`` in ``[-708, 0]``) into entry ``r`` of the
    exps' scratch: ``e^x`` into ``mantissa`` and ``m`` + :data:`_EXPONENT_MAGIC` into
    ``biased``, the float view of the int64 ``exponent`` that :func:`_scales` turns into
    ``2^m``."""
    m = np.floor(a * _LOG2E + 0.5)
    mantissa[r] = _reduced_exp(a, m)
    biased[r] = m + _EXPONENT_MAGIC


@numba.njit(cache=True, inline="always")
def _scales(exponent):
    """``2^m`` of each entry of :func:`_exp_parts`' ``exponent`` scratch, in place (as float64)."""
    for r in range(exponent.shape[0]):
        exponent[r] = (exponent[r] - _MAGIC_BITS) << 52
    return exponent.view(np.float64)


# error_model="numpy": the division by 1 + e (never zero) has no test of its divisor, which
# kept the division loop scalar (a branch to Python's ZeroDivisionError per value); the same bits.
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _vector_sigmoids(s, s_l, w_y, g, mantissa, exponent):
    """``g[r] = w_y * sigmoid(s[r] - s_l)`` for every ``r``, by the exp above (``mantissa`` and
    ``exponent``, float64 and int64, are scratch of ``s``'s length)."""
    n = s.shape[0]
    # m and 2^m with no conversion between float64 and int64, which x86 has no vector
    # instruction for below AVX-512 (the loop was scalar there: 4.9 ns per value on a Zen 3,
    # 3.0 now, the same bits): m by np.floor, a float (math.floor's is an int), and 2^m's
    # exponent bits from those of the float m + 1023 + 2^52 (m + 1023 in [2, 1023], exact)
    biased = exponent.view(np.float64)
    for r in range(n):
        _exp_parts(max(-abs(s[r] - s_l), -708.0), r, mantissa, biased)
    scale = _scales(exponent)
    for r in range(n):
        e = mantissa[r] * scale[r]
        g[r] = w_y * ((1.0 if s[r] - s_l >= 0.0 else e) / (1.0 + e))


# The spread of scores up to which counted_logistic_cost takes its sigmoids as ratios of exps
# from the top score: e^(s - top) stays above 2^-866 (no subnormal, no zero), and a ratio's
# rounding, from that of s - top (at most |s - top| 2^-53 relative), stays below 1e-13.
_RATIO_SPREAD = 600.0


@numba.njit(cache=True, _nrt=False)
def _vector_exps(s, top, e, mantissa, exponent):
    """``e[r] = exp(s[r] - top)`` for every ``r`` (``s[r] <= top``), by the exp of
    :func:`_vector_sigmoids` (``mantissa`` and ``exponent`` are scratch of its kind)."""
    n = s.shape[0]
    biased = exponent.view(np.float64)
    for r in range(n):
        _exp_parts(max(s[r] - top, -708.0), r, mantissa, biased)
    scale = _scales(exponent)
    for r in range(n):
        e[r] = mantissa[r] * scale[r]


# error_model="numpy" as _vector_sigmoids': the divisor e[r] + e_l is never zero
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _ratio_sigmoids(e, e_l, w_y, g):
    """``g[r] = w_y * sigmoid(s[r] - s_l) = w_y e[r] / (e[r] + e_l)`` for every ``r``, from the
    exps of :func:`_vector_exps` (``e_l`` that of ``s_l``): one division per pair instead of
    an exp."""
    for r in range(e.shape[0]):
        g[r] = w_y * (e[r] / (e[r] + e_l))


@numba.njit(cache=True)
def counted_logistic_cost(
    s: np.ndarray, y: np.ndarray, count: np.ndarray, n_pairs: int, out: np.ndarray
) -> float:
    """:func:`logistic_cost` of labels in groups of equal score: group ``g`` stands for
    ``count[g]`` labels of score ``s[g]``, all irrelevant, or one relevant label (``y[g]``;
    ``count[g]`` is read for irrelevant groups only: the boosters' groups keep each relevant
    label apart), and the labels make ``n_pairs = |Y| |Y^c|`` pairs. ``out[g]`` receives the
    cost of each label of group ``g``; returns ``w[t] = ||c||_1 / 2`` over the labels.

    The same terms as :func:`logistic_cost`, each group's once, times its size, and its sigmoids
    from an exp in vector code (above) rather than the C library's: equal up to rounding (see
    :mod:`olboost.boosters._label_groups`). Where the scores lie within ``_RATIO_SPREAD`` of
    each other, a sigmoid is a ratio of two exps of the scores (one per group), else an exp
    per pair.
    """
    _check_lengths(s, y, out)
    if count.shape[0] != s.shape[0]:
        raise ValueError("count must hold one size per group: len(count) == len(s)")
    n = s.shape[0]
    for j in range(n):
        out[j] = 0.0
    if n_pairs == 0:
        return 0.0
    w_y = 1.0 / n_pairs
    g = np.empty(n)
    mantissa = np.empty(n)
    exponent = np.empty(n, dtype=np.int64)
    top = s[0]
    bottom = s[0]
    for j in range(1, n):
        top = max(top, s[j])
        bottom = min(bottom, s[j])
    half_l1 = 0.0
    if top - bottom <= _RATIO_SPREAD:  # False for a NaN or an infinite score
        # sigmoid(s_r - s_l) = e^(s_r - top) / (e^(s_r - top) + e^(s_l - top)): an exp per
        # group, not per pair (the pairs' exps were 16% of Ada.OLMR's time at 1,000 labels,
        # benchmarks/large_k.py's case, perf; with these ratios it took 0.60-0.76 ms per
        # example against 0.72-0.80, three interleaved runs each)
        e = np.empty(n)
        _vector_exps(s, top, e, mantissa, exponent)
        for l in range(n):
            if y[l]:
                _ratio_sigmoids(e, e[l], w_y, g)
                half_l1 += _counted_pairs(l, y, count, g, out)
        return half_l1
    for l in range(n):
        if y[l]:
            _vector_sigmoids(s, s[l], w_y, g, mantissa, exponent)
            half_l1 += _counted_pairs(l, y, count, g, out)
    return half_l1


@numba.njit(cache=True, _nrt=False)
def _counted_pairs(l, y, count, g, out):
    """The pairs of relevant group ``l`` in :func:`counted_logistic_cost`: ``out[l]`` and the
    irrelevant groups' ``out[r]`` get their terms; returns their share of ``w[t]``."""
    own = 0.0
    half_l1 = 0.0
    for r in range(y.shape[0]):
        if not y[r]:
            m = count[r] * g[r]
            own -= m
            out[r] += g[r]
            half_l1 += m
    out[l] = own
    return half_l1
