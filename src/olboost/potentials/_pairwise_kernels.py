"""Compiled kernels of the pairwise potentials (:mod:`olboost.potentials.pairwise`).

Every kernel is a module-level ``@numba.njit(cache=True)`` function, so that boosters can call them
from their own compiled loops. None of them validates its input: the public functions of
:mod:`olboost.potentials` do that.

Pairwise potentials (Jung & Tewari 2018, eq. 1; Raman et al. 2020, eq. 2-3)
-----------------------------------------------------------------------------
For a pair (relevant ``l``, irrelevant ``r``) only ``D = X_r - X_l`` matters, a sum of ``n`` i.i.d.
steps: ``+1`` w.p. ``p_plus``, ``-1`` w.p. ``p_minus``, ``0`` otherwise. Its law is kept as a *law
table* ``table`` of shape ``(3, L + 1)`` with support ``d = d_min + j`` for ``j < L``:

* ``table[0, j] = P(D = d_min + j)`` (``table[0, L] = 0``),
* ``table[1, j] = P(D >= d_min + j)`` (suffix sums; ``table[1, L] = 0``),
* ``table[2, j] = E[D 1(D >= d_min + j)]`` (``table[2, L] = 0``),

so that ``E f(z + D)`` is one lookup for any real ``z`` (:func:`expected_pair_loss`), ``f`` the
pair loss of :func:`olboost.losses.pairwise.pair_loss`.

Signatures (``s`` float64[:], ``y_mask`` bool[:], ``out`` float64[:] of length ``k``):

* ``difference_law_probs(n, p_plus, p_minus) -> probs`` (``d_min = -n``), O(n^2);
* ``law_table(probs, d_min) -> table``;
* ``law_table_stack(n_max, p_plus, p_minus) -> tables`` of shape ``(n_max + 1, 3, 2 n_max + 2)``,
  ``tables[n]`` the table of ``n`` steps, all with ``d_min = -n_max``, in one O(n_max^2) pass;
* ``expected_pair_loss(z, table, d_min, loss_code) -> E f(z + D)``;
* ``bmr_potential(s, y_mask, table, d_min, loss_code) -> phi^n(s)`` (weight ``1/(|Y||Y^c|)``);
* ``bmr_costs(s, y_mask, table, d_min, loss_code, out) -> phi^n(s)``, fills
  ``out[l] = phi^n(s + e_l)`` (eq. 2) in O(|Y||Y^c|);
* ``normalize_costs_kernel(c, out) -> weight`` (eq. 3).

``loss_code``: ``RANK`` (0), ``HINGE`` (1), ``HINGE_NO_MARGIN`` (2), ``RANK_TIES`` (3) of
:mod:`olboost.losses`. The top-k surrogate kernels (:mod:`olboost.potentials._topk_kernels`)
reuse :func:`_pairwise_core`.
"""

from __future__ import annotations

import numba
import numpy as np

from olboost.losses.pairwise import (
    GROUP_FROM_LABELS,
    HINGE,
    HINGE_NO_MARGIN,
    RANK,
    RANK_TIES,
    irrelevant_groups,
    pair_count,
)

__all__ = [
    "difference_law_probs",
    "law_table",
    "law_table_stack",
    "expected_pair_loss",
    "bmr_potential",
    "bmr_costs",
    "normalize_costs_kernel",
]


# --------------------------------------------------------------------------------------------------
# Law of D = X_r - X_l
# --------------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def difference_law_probs(n: int, p_plus: float, p_minus: float) -> np.ndarray:
    """``P(D = d)`` for ``d = -n..n`` (index ``d + n``): ``n`` steps of +1 / -1 / 0 by convolution.

    Every term is a sum of non-negative products, so relative errors stay O(n * eps).
    """
    p_zero = 1.0 - p_plus - p_minus
    if p_zero < 0.0:
        p_zero = 0.0
    width = 2 * n + 1
    cur = np.zeros(width, dtype=np.float64)
    nxt = np.zeros(width, dtype=np.float64)
    cur[n] = 1.0
    for step in range(n):
        _step(cur, nxt, n - step, n + step, p_zero, p_plus, p_minus)
    return cur


@numba.njit(cache=True, inline="always")
def _step(cur, nxt, lo, hi, p_zero, p_plus, p_minus):
    """One more step of the walk: ``cur`` (non-zero on ``lo..hi``) convolved with the step law,
    in place; ``nxt`` is scratch of the same length."""
    for j in range(lo - 1, hi + 2):
        nxt[j] = 0.0
    for j in range(lo, hi + 1):
        v = cur[j]
        if v != 0.0:
            nxt[j] += p_zero * v
            nxt[j + 1] += p_plus * v
            nxt[j - 1] += p_minus * v
    for j in range(lo - 1, hi + 2):
        cur[j] = nxt[j]


@numba.njit(cache=True)
def law_table(probs: np.ndarray, d_min: int) -> np.ndarray:
    """Law table ``(3, L + 1)`` of ``probs`` (length ``L``) on ``d_min .. d_min + L - 1``."""
    table = np.zeros((3, probs.shape[0] + 1), dtype=np.float64)
    _fill_law_table(probs, d_min, table)
    return table


@numba.njit(cache=True, inline="always")
def _fill_law_table(probs, d_min, table):
    """Rows of :func:`law_table` written into ``table`` (its last column left as it is):
    ``P(D = d)``, ``P(D >= d)`` and ``E[D; D >= d]``."""
    t0 = 0.0
    t1 = 0.0
    for j in range(probs.shape[0] - 1, -1, -1):
        p = probs[j]
        table[0, j] = p
        t0 += p
        t1 += (d_min + j) * p
        table[1, j] = t0
        table[2, j] = t1


@numba.njit(cache=True)
def law_table_stack(n_max: int, p_plus: float, p_minus: float) -> np.ndarray:
    """Law tables of ``n = 0..n_max`` steps, all on the support ``-n_max..n_max``.

    ``out[n]`` is the table of ``n`` steps with ``d_min = -n_max``; computed in one O(n_max^2)
    convolution pass, for boosters that need every ``phi^{N - i}``.
    """
    width = 2 * n_max + 1
    out = np.zeros((n_max + 1, 3, width + 1), dtype=np.float64)
    p_zero = 1.0 - p_plus - p_minus
    if p_zero < 0.0:
        p_zero = 0.0
    cur = np.zeros(width, dtype=np.float64)
    nxt = np.zeros(width, dtype=np.float64)
    cur[n_max] = 1.0
    for n in range(n_max + 1):
        _fill_law_table(cur, -n_max, out[n])
        if n == n_max:
            break
        _step(cur, nxt, n_max - n, n_max + n, p_zero, p_plus, p_minus)
    return out


# --------------------------------------------------------------------------------------------------
# Expected pair losses and the pairwise potential
# --------------------------------------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def expected_pair_loss(z: float, table: np.ndarray, d_min: int, loss_code: int) -> float:
    """``E f(z + D)`` for real ``z``, exact given the law table of ``D``; O(1).

    With ``t`` the smallest integer such that ``z + t > 0``: rank gives ``P(D >= t)`` plus half of
    ``P(D = -z)`` when ``-z`` is an integer (all of it for ``RANK_TIES``, a tie being an error);
    ``x_+`` gives ``z P(D >= t) + E[D 1(D >= t)]``; the hinge ``(1 + x)_+`` is ``x_+`` at
    ``z + 1``.
    """
    return _shifted_pair_loss(z, 0.0, table, d_min, loss_code)


@numba.njit(cache=True, inline="always")
def _shifted_pair_loss(z, shift, table, d_min, loss_code):
    """:func:`expected_pair_loss` at ``z + shift`` for an integer ``shift`` (a float: -1, 0 or
    1), the rank losses' threshold and tie taken from ``z`` and ``shift`` apart: ``z + shift``
    rounded, a gap of 5.6e-17 (0.1 + 0.2 against 0.3) minus 1 was -1 exactly, a tie, where the
    Monte Carlo estimate, adding the gap to integers, saw none."""
    L = table.shape[1] - 1
    if loss_code == HINGE:
        z = z + shift + 1.0
        shift = 0.0
    elif loss_code != RANK and loss_code != RANK_TIES:
        z = z + shift
        shift = 0.0
    neg = -z
    # np.floor, a float: Numba's math.floor gives an int64, which wrapped to -2^63 from a gap
    # of 2^63 on (a perfectly ranked pair then had loss 1)
    fl = np.floor(neg)
    # index of t = floor(-z) + 1 - shift (the least integer with z + shift + t > 0), clamped to
    # [0, L] before any integer conversion; written as selects, with no branch, so that a loop
    # of these runs on vector registers
    tf = fl + 1.0 - shift - d_min
    tf = 0.0 if tf <= 0.0 else tf
    j = int(L if tf >= L else tf)
    if loss_code == RANK or loss_code == RANK_TIES:
        idx_f = neg - shift - d_min
        tie = fl == neg and 0.0 <= idx_f < L
        half = (0.5 if loss_code == RANK else 1.0) * table[0, int(idx_f) if tie else 0]
        # adding an exact 0.0 where there is no tie leaves the probability's bits as they are
        return table[1, j] + (half if tie else 0.0)
    p = table[1, j]
    # z P(D >= t) is 0 where that probability is: an infinite z (a score gap beyond the float
    # range) gave inf * 0, NaN
    return (0.0 if p == 0.0 else z * p) + table[2, j]


@numba.njit(cache=True, inline="always")
def _pair_expectations(z, table, d_min, loss_code, want_costs):
    """``E f(z + D)`` and, if ``want_costs``, the same at ``z - 1`` (``s + e_l`` lowers a pair's
    ``z`` by one) and ``z + 1`` (``s + e_r`` raises it), else zeros."""
    g0 = expected_pair_loss(z, table, d_min, loss_code)
    if not want_costs:
        return g0, 0.0, 0.0
    g_minus = _shifted_pair_loss(z, -1.0, table, d_min, loss_code)
    return g0, g_minus, _shifted_pair_loss(z, 1.0, table, d_min, loss_code)


# The two loops below are _pairwise_core's inner ones, compiled without Numba's runtime (they
# allocate nothing): inlined there, each expectation bound ``table`` to fresh variables, and each
# binding counted a reference to it in and out, atomically; at k = 1,000 those counts were 42% of
# OnlineBMR's run (perf), for the same arithmetic, which these do in the same order.
@numba.njit(cache=True, _nrt=False)
def _group_expectations(values, s_l, table, d_min, loss_code, e0, e_minus, e_plus):
    """:func:`_pair_expectations` at ``values[d] - s_l`` for every group ``d``, with the
    changes, into ``e0``, ``e_minus`` and ``e_plus``."""
    # One loop per loss, its code a constant: the loss's branches fold away at compile time
    # (the same arithmetic; at k = 1,000, OnlineBMR's expectations took 6 instead of 15 to 21
    # ns per group, and were 45% of its run). Each loop takes the changes too, wanted or not
    # (the expectation at z is the same bits either way): four copies of the code, not eight.
    n = values.shape[0]
    if loss_code == HINGE:
        for d in range(n):
            e0[d], e_minus[d], e_plus[d] = _pair_expectations(
                values[d] - s_l, table, d_min, HINGE, True
            )
    elif loss_code == RANK:
        for d in range(n):
            e0[d], e_minus[d], e_plus[d] = _pair_expectations(
                values[d] - s_l, table, d_min, RANK, True
            )
    elif loss_code == HINGE_NO_MARGIN:
        for d in range(n):
            e0[d], e_minus[d], e_plus[d] = _pair_expectations(
                values[d] - s_l, table, d_min, HINGE_NO_MARGIN, True
            )
    else:
        for d in range(n):
            e0[d], e_minus[d], e_plus[d] = _pair_expectations(
                values[d] - s_l, table, d_min, RANK_TIES, True
            )


@numba.njit(cache=True, _nrt=False)
def _pairs_of_label(
    l, s, y_mask, table, d_min, loss_code, pair_w, use_pair_w, scale, want_costs, out, base
):  # fmt: skip
    """The pairs ``(l, r)`` of relevant label ``l``, one by one: ``(base, own)``, ``base`` with
    their weighted expectations added in the order of ``r``, ``own`` their changes at
    ``s + e_l``; ``out[r]`` gets theirs at ``s + e_r`` if ``want_costs``."""
    s_l = s[l]
    own = 0.0
    for r in range(s.shape[0]):
        if y_mask[r]:
            continue
        w = scale * pair_w[l, r] if use_pair_w else scale
        if w == 0.0:
            continue
        g0, g_minus, g_plus = _pair_expectations(s[r] - s_l, table, d_min, loss_code, want_costs)
        base += w * g0
        if want_costs:
            own += w * (g_minus - g0)
            out[r] += w * (g_plus - g0)
    return base, own


@numba.njit(cache=True)
def _pairwise_core(
    s: np.ndarray,
    y_mask: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    pair_w: np.ndarray,
    use_pair_w: bool,
    scale: float,
    want_costs: bool,
    out: np.ndarray,
) -> float:
    """Shared loop: ``scale * sum_{l in Y, r notin Y} w_lr E f(s[r] - s[l] + D)`` and, if asked,
    ``out[j] = potential at s + e_j`` from the change of the pairs involving ``j`` only."""
    k = s.shape[0]
    base = 0.0
    if want_costs:
        for j in range(k):
            out[j] = 0.0
    if k >= GROUP_FROM_LABELS:
        # Irrelevant labels grouped by score: the expectations are taken once per (relevant
        # label, group), then the pairs are added in their usual order, the same sums bit for bit
        # (see irrelevant_groups).
        irrelevant, group, values = irrelevant_groups(s, y_mask)
        n_groups = values.shape[0]
        e0 = np.empty(n_groups)
        e_minus = np.empty(n_groups)
        e_plus = np.empty(n_groups)
    for l in range(k):
        if not y_mask[l]:
            continue
        s_l = s[l]
        # out[l] is only written in this iteration: summed in a register, in the same order
        own = 0.0
        if k >= GROUP_FROM_LABELS:
            _group_expectations(values, s_l, table, d_min, loss_code, e0, e_minus, e_plus)
            for q in range(irrelevant.shape[0]):
                r = irrelevant[q]
                w = scale * pair_w[l, r] if use_pair_w else scale
                if w == 0.0:
                    continue
                d = group[q]
                base += w * e0[d]
                if want_costs:
                    own += w * (e_minus[d] - e0[d])
                    out[r] += w * (e_plus[d] - e0[d])
        else:
            base, own = _pairs_of_label(
                l, s, y_mask, table, d_min, loss_code, pair_w, use_pair_w, scale, want_costs, out,
                base,
            )  # fmt: skip
        if want_costs:
            out[l] = own
    if want_costs:
        for j in range(k):
            out[j] += base
    return base


# _pairwise_core as its caller's own code (Numba IR inlining of the same function), for the loop of
# OnlineBMR's update, which calls it once per learner: the call itself (ten arguments and the
# reference counts of their arrays) took more than half of that loop's time (emotions, 100
# learners, 41 against 19 us per example, the same bits). Only inlined: no cache of its own.
_pairwise_core_inlined = numba.njit(inline="always")(_pairwise_core.py_func)


@numba.njit(cache=True)
def counted_pairwise_costs(
    s: np.ndarray,
    y: np.ndarray,
    count: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    scale: float,
    out: np.ndarray,
) -> float:
    """:func:`_pairwise_core`'s cost vector (``want_costs``, no pair weights) for labels in
    groups of equal score: group ``g`` stands for ``count[g]`` labels of score ``s[g]``, all
    irrelevant, or one relevant label (``y[g]``; ``count[g]`` is read for irrelevant groups
    only: the boosters' groups keep each relevant label apart). ``out[g]`` receives the
    potential at ``s + e_l`` for each label ``l`` of group ``g``; returns the potential at
    ``s``.

    Each group's pairs are taken once, times its size, instead of one by one: the same terms,
    summed in another order, so equal to the label-by-label costs up to rounding (see
    :mod:`olboost.boosters._label_groups`).
    """
    n = s.shape[0]
    e0 = np.empty(n)
    e_minus = np.empty(n)
    e_plus = np.empty(n)
    for j in range(n):
        out[j] = 0.0
    base = 0.0
    for l in range(n):
        if y[l]:
            _group_expectations(s, s[l], table, d_min, loss_code, e0, e_minus, e_plus)
            base = _counted_pairs(l, y, count, scale, e0, e_minus, e_plus, out, base)
    for j in range(n):
        out[j] += base
    return base


@numba.njit(cache=True, _nrt=False)
def _counted_pairs(l, y, count, scale, e0, e_minus, e_plus, out, base):
    """The pairs of relevant group ``l`` in :func:`counted_pairwise_costs`, from the
    expectations of every group against it; returns ``base`` with theirs added."""
    own = 0.0
    for r in range(y.shape[0]):
        if not y[r]:
            m = count[r] * scale
            base += m * e0[r]
            own += m * (e_minus[r] - e0[r])
            out[r] += scale * (e_plus[r] - e0[r])
    out[l] = own
    return base


@numba.njit(cache=True)
def _bmr_scale(y_mask: np.ndarray) -> float:
    n_pairs = pair_count(y_mask)
    return 0.0 if n_pairs == 0 else 1.0 / n_pairs


@numba.njit(cache=True)
def bmr_potential(
    s: np.ndarray, y_mask: np.ndarray, table: np.ndarray, d_min: int, loss_code: int
) -> float:
    """``phi^n(s) = w_Y sum_{l in Y, r notin Y} E f(s[r] - s[l] + D)`` (Jung & Tewari 2018, eq. 1).

    ``table`` is the law table of ``D`` for ``n`` steps and the baseline ``u_gamma^Y``; 0.0 when
    ``Y`` is empty or full.
    """
    dummy = np.empty((0, 0), dtype=np.float64)
    scale = _bmr_scale(y_mask)
    if scale == 0.0:
        return 0.0
    return _pairwise_core(s, y_mask, table, d_min, loss_code, dummy, False, scale, False, s)


@numba.njit(cache=True)
def bmr_costs(
    s: np.ndarray,
    y_mask: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    out: np.ndarray,
) -> float:
    """OnlineBMR cost vector, eq. 2: ``out[l] = phi^n(s + e_l)``; returns ``phi^n(s)``.

    O(|Y| |Y^c|): the base potential plus the change of the pairs that involve ``l``.
    """
    dummy = np.empty((0, 0), dtype=np.float64)
    scale = _bmr_scale(y_mask)
    if scale == 0.0:
        for j in range(out.shape[0]):
            out[j] = 0.0
        return 0.0
    return _pairwise_core(s, y_mask, table, d_min, loss_code, dummy, False, scale, True, out)


@numba.njit(cache=True)
def normalize_costs_kernel(c: np.ndarray, out: np.ndarray) -> float:
    """Eq. 3 of Jung & Tewari (2018): ``out = (c - min c) / w`` with ``w = max c - min c``.

    Returns ``w``; a constant ``c`` gives ``w = 0`` and ``out = 0``.
    """
    lo = c[0]
    hi = c[0]
    for j in range(1, c.shape[0]):
        if c[j] < lo:
            lo = c[j]
        if c[j] > hi:
            hi = c[j]
    w = hi - lo
    for j in range(c.shape[0]):
        out[j] = (c[j] - lo) / w if w > 0.0 else 0.0
    return w
