"""Compiled kernels for the boost-by-majority potentials of :mod:`olboost.potentials`.

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

so that ``E f(z + D)`` is one lookup for any real ``z`` (:func:`expected_pair_loss`).

Signatures (``s`` float64[:], ``y_mask`` bool[:], ``out`` float64[:] of length ``k``):

* ``difference_law_probs(n, p_plus, p_minus) -> probs`` (``d_min = -n``), O(n^2);
* ``law_table(probs, d_min) -> table``;
* ``law_table_stack(n_max, p_plus, p_minus) -> tables`` of shape ``(n_max + 1, 3, 2 n_max + 2)``,
  ``tables[n]`` the table of ``n`` steps, all with ``d_min = -n_max``, in one O(n_max^2) pass;
* ``expected_pair_loss(z, table, d_min, loss_code) -> E f(z + D)``;
* ``bmr_potential(s, y_mask, table, d_min, loss_code) -> phi^n(s)`` (weight ``1/(|Y||Y^c|)``);
* ``bmr_costs(s, y_mask, table, d_min, loss_code, out) -> phi^n(s)``, fills
  ``out[l] = phi^n(s + e_l)`` (eq. 2) in O(|Y||Y^c|);
* ``topk_potential_kernel(s, y_mask, table, d_min, loss_code, pair_w) -> Phi^n(s)`` and
  ``topk_costs(s, y_mask, table, d_min, loss_code, pair_w, out) -> Phi^n(s)``: the unweighted sum
  of ``pair_w[a, b] * Lambda^{a,b,n}`` over ``a in Y``, ``b notin Y`` (``pair_w`` float64[:, :]);
* ``normalize_costs_kernel(c, out) -> weight`` (eq. 3).

``loss_code``: ``RANK`` (0), ``HINGE`` (1), ``HINGE_NO_MARGIN`` (2).

Multiclass 0-1 potential (Jung, Goetz & Tewari 2017, eq. 2, 3, 16)
-------------------------------------------------------------------
* ``mbbm_potential_table(d, n, k, gamma, tab) -> phi^r_n`` where ``d[j] = s[r] - s[l_j]`` over
  the ``k - 1`` labels ``l_j != r`` (int64[:], any order) and ``tab = binomial_table(n, k - 1)``
  (shared by every evaluation of one ``(n, k)``); cost rows of eq. 4 are built from it by
  :func:`olboost.boosters._mbbm_kernels.mbbm_cost_row_memo`;
* ``mbbm_normalize(c, r, out) -> weight``: eq. 5 and the weight of Algorithm 1, line 11.
"""

from __future__ import annotations

import math

import numba
import numpy as np

RANK = 0
HINGE = 1
HINGE_NO_MARGIN = 2

__all__ = [
    "RANK",
    "HINGE",
    "HINGE_NO_MARGIN",
    "difference_law_probs",
    "law_table",
    "law_table_stack",
    "expected_pair_loss",
    "pair_loss",
    "bmr_potential",
    "bmr_costs",
    "topk_potential_kernel",
    "topk_costs",
    "normalize_costs_kernel",
    "binomial_pmf",
    "binomial_table",
    "mbbm_potential_table",
    "mbbm_normalize",
    "mbbm_draw_losses",
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
# Pairwise losses and their expectations
# --------------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def pair_loss(x: float, loss_code: int) -> float:
    """``f(x)`` of one pair, ``x = s[r] - s[l]``: rank, hinge ``(1 + x)_+`` or ``x_+``."""
    if loss_code == RANK:
        if x > 0.0:
            return 1.0
        if x == 0.0:
            return 0.5
        return 0.0
    if loss_code == HINGE:
        x = x + 1.0
    return x if x > 0.0 else 0.0


@numba.njit(cache=True)
def expected_pair_loss(z: float, table: np.ndarray, d_min: int, loss_code: int) -> float:
    """``E f(z + D)`` for real ``z``, exact given the law table of ``D``; O(1).

    With ``t`` the smallest integer such that ``z + t > 0``: rank gives ``P(D >= t)`` plus half of
    ``P(D = -z)`` when ``-z`` is an integer; ``x_+`` gives ``z P(D >= t) + E[D 1(D >= t)]``; the
    hinge ``(1 + x)_+`` is ``x_+`` at ``z + 1``.
    """
    L = table.shape[1] - 1
    if loss_code == HINGE:
        z = z + 1.0
    neg = -z
    fl = math.floor(neg)
    # index of t = floor(-z) + 1, clamped to [0, L] before any integer conversion
    tf = fl + 1.0 - d_min
    if tf <= 0.0:
        j = 0
    elif tf >= L:
        j = L
    else:
        j = int(tf)
    if loss_code == RANK:
        res = table[1, j]
        if fl == neg:
            idx_f = neg - d_min
            if 0.0 <= idx_f < L:
                res += 0.5 * table[0, int(idx_f)]
        return res
    return z * table[1, j] + table[2, j]


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
    for l in range(k):
        if not y_mask[l]:
            continue
        for r in range(k):
            if y_mask[r]:
                continue
            w = scale * pair_w[l, r] if use_pair_w else scale
            if w == 0.0:
                continue
            z = s[r] - s[l]
            g0 = expected_pair_loss(z, table, d_min, loss_code)
            base += w * g0
            if want_costs:
                # s + e_l lowers z by one; s + e_r raises it by one
                out[l] += w * (expected_pair_loss(z - 1.0, table, d_min, loss_code) - g0)
                out[r] += w * (expected_pair_loss(z + 1.0, table, d_min, loss_code) - g0)
    if want_costs:
        for j in range(k):
            out[j] += base
    return base


@numba.njit(cache=True)
def _bmr_scale(y_mask: np.ndarray) -> float:
    k = y_mask.shape[0]
    n_rel = 0
    for j in range(k):
        if y_mask[j]:
            n_rel += 1
    n_pairs = n_rel * (k - n_rel)
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
def topk_potential_kernel(
    s: np.ndarray,
    y_mask: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    pair_w: np.ndarray,
) -> float:
    """Surrogate potential of Top-k BBM (Raman et al. 2020, Sec. 3.2.2), pair-weighted:
    ``sum_{a in Y, b notin Y} pair_w[a, b] Lambda^{a,b,n}(s)``; ``table`` is the law for
    ``u_a^gamma`` (one relevant label)."""
    return _pairwise_core(s, y_mask, table, d_min, loss_code, pair_w, True, 1.0, False, s)


@numba.njit(cache=True)
def topk_costs(
    s: np.ndarray,
    y_mask: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    pair_w: np.ndarray,
    out: np.ndarray,
) -> float:
    """Top-k BBM cost vector (Raman et al. 2020, eq. 3) with pair weights ``pair_w``:
    ``out[l] = Phi^n(s + e_l)``; returns ``Phi^n(s)``. With ``pair_w[a, b] = I(a, b in T^k) /
    Pr[a, b in T^k]`` this is the unbiased estimate ``hat c`` of eq. 3."""
    return _pairwise_core(s, y_mask, table, d_min, loss_code, pair_w, True, 1.0, True, out)


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


# --------------------------------------------------------------------------------------------------
# Multiclass 0-1 potential
# --------------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def binomial_pmf(m: int, p: float, out: np.ndarray) -> None:
    """``out[v] = P(Binomial(m, p) = v)`` for ``v = 0..m`` (``out`` has length >= m + 1)."""
    if p >= 1.0:
        for v in range(m + 1):
            out[v] = 0.0
        out[m] = 1.0
        return
    if p <= 0.0:
        for v in range(m + 1):
            out[v] = 0.0
        out[0] = 1.0
        return
    lq = math.log1p(-p)
    start = math.exp(m * lq)
    if start > 1e-280:
        ratio = p / (1.0 - p)
        out[0] = start
        for v in range(1, m + 1):
            out[v] = out[v - 1] * ratio * (m - v + 1) / v
        return
    lp = math.log(p)
    lgm = math.lgamma(m + 1.0)
    for v in range(m + 1):
        out[v] = math.exp(
            lgm - math.lgamma(v + 1.0) - math.lgamma(m - v + 1.0) + v * lp + (m - v) * lq
        )


#: Largest binomial table (floats) built for the multiclass kernels: (k - 1) (n + 1)^2 <= this.
MAX_BINOMIAL_TABLE = 1 << 22


@numba.njit(cache=True)
def binomial_table(n: int, n_labels: int) -> np.ndarray:
    """``tab[kr, m, v] = P(Binomial(m, 1 / kr) = v)`` for ``kr = 2..n_labels``, ``m, v <= n``.

    The shares of a label among ``kr`` remaining ones; shared by every evaluation of one
    ``(n, k)``. Shape ``(n_labels + 1, n + 1, n + 1)`` (rows ``kr < 2`` unused); returns an empty
    ``(0, 0, 0)`` table when that exceeds :data:`MAX_BINOMIAL_TABLE` floats (the kernels then
    compute each row on the fly).
    """
    if (n_labels + 1) * (n + 1) * (n + 1) > MAX_BINOMIAL_TABLE:
        return np.zeros((0, 0, 0), dtype=np.float64)
    tab = np.zeros((n_labels + 1, n + 1, n + 1), dtype=np.float64)
    for kr in range(2, n_labels + 1):
        for m in range(n + 1):
            binomial_pmf(m, 1.0 / kr, tab[kr, m])
    return tab


@numba.njit(cache=True)
def _all_below(
    d_sorted: np.ndarray,
    x: int,
    m: int,
    tab: np.ndarray,
    prob: np.ndarray,
    nxt: np.ndarray,
    pmf: np.ndarray,
) -> float:
    """``P(X_j <= d_sorted[j] + x - 1 for all j)`` when ``m`` draws fall uniformly on the
    ``K = len(d_sorted)`` labels: allocate labels one at a time (label ``j`` takes a
    Binomial(remaining, 1 / (K - j)) share), binding caps first."""
    K = d_sorted.shape[0]
    if d_sorted[0] + x - 1 < 0:
        return 0.0
    use_tab = tab.shape[0] > 0
    for u in range(m + 1):
        prob[u] = 0.0
    prob[0] = 1.0
    for j in range(K):
        cap = d_sorted[j] + x - 1
        if cap >= m:
            # this label and every later one (larger caps) can absorb anything left
            total = 0.0
            for u in range(m + 1):
                total += prob[u]
            return total
        k_rem = K - j
        if k_rem == 1:
            # the last label takes every remaining draw
            total = 0.0
            for u in range(m - cap, m + 1):
                total += prob[u]
            return total
        for u in range(m + 1):
            nxt[u] = 0.0
        for u in range(m + 1):
            pu = prob[u]
            if pu == 0.0:
                continue
            rem = m - u
            top = cap if cap < rem else rem
            if use_tab:
                row = tab[k_rem, rem]
                for v in range(top + 1):
                    nxt[u + v] += pu * row[v]
            else:
                binomial_pmf(rem, 1.0 / k_rem, pmf)
                for v in range(top + 1):
                    nxt[u + v] += pu * pmf[v]
        for u in range(m + 1):
            prob[u] = nxt[u]
    total = 0.0
    for u in range(m + 1):
        total += prob[u]
    return total


@numba.njit(cache=True)
def mbbm_potential_table(d: np.ndarray, n: int, k: int, gamma: float, tab: np.ndarray) -> float:
    """``phi^r_n(s) = P(max_{l != r} (s + X)[l] >= (s + X)[r])`` from ``d[j] = s[r] - s[l_j]``.

    ``X ~ Multinomial(n, u_gamma^r)``, ``u_gamma^r = (1 - gamma)/k + gamma`` on ``r`` and
    ``(1 - gamma)/k`` elsewhere (Jung, Goetz & Tewari 2017, eq. 2, 3 and 16). Conditioning on
    ``X_r = x`` the other ``n - x`` draws are uniform over the ``k - 1`` labels, each capped at
    ``d[j] + x - 1``: ``1 - sum_x P(X_r = x) P(all caps hold)``. O(k n^3) in the worst case.

    ``tab`` is ``binomial_table(n', k - 1)`` for any ``n' >= n``, shared by every evaluation of
    one ``(n, k)``; ``d`` may be in any order.
    """
    if k == 1:
        return 0.0
    d_sorted = np.sort(d)
    u_r = (1.0 - gamma) / k + gamma
    px = np.empty(n + 1, dtype=np.float64)
    binomial_pmf(n, u_r, px)
    prob = np.empty(n + 1, dtype=np.float64)
    nxt = np.empty(n + 1, dtype=np.float64)
    pmf = np.empty(n + 1, dtype=np.float64)
    win = 0.0
    for x in range(n + 1):
        if px[x] == 0.0:
            continue
        win += px[x] * _all_below(d_sorted, x, n - x, tab, prob, nxt, pmf)
    loss = 1.0 - win
    return loss if loss > 0.0 else 0.0


@numba.njit(cache=True)
def mbbm_normalize(c: np.ndarray, r: int, out: np.ndarray) -> float:
    """Eq. 5: ``out[l] = (c[l] - c[r]) / w`` with the weight of Algorithm 1, line 11,
    ``w = sum_l (c[l] - c[r])``; a zero row stays zero (``w = 0``). Rounding below zero is
    clipped (the exact differences are non-negative: the potential is proper)."""
    k = c.shape[0]
    w = 0.0
    for l in range(k):
        v = c[l] - c[r]
        if v < 0.0:
            v = 0.0
        out[l] = v
        w += v
    for l in range(k):
        out[l] = out[l] / w if w > 0.0 else 0.0
    return w


@numba.njit(cache=True)
def mbbm_draw_losses(s: np.ndarray, r: int, X: np.ndarray, out: np.ndarray) -> None:
    """Monte Carlo samples: ``out[m, l] = L^r(s + e_l + X[m])`` with the 0-1 loss of eq. 2."""
    M, k = X.shape
    for m in range(M):
        best_other = -np.inf
        arg_other = -1
        for j in range(k):
            if j == r:
                continue
            v = s[j] + X[m, j]
            if v > best_other:
                best_other = v
                arg_other = j
        vr = s[r] + X[m, r]
        for l in range(k):
            if l == r:
                out[m, l] = 1.0 if best_other >= vr + 1 else 0.0
            else:
                top = best_other
                if l == arg_other:
                    top = best_other + 1
                elif s[l] + X[m, l] + 1 > top:
                    top = s[l] + X[m, l] + 1
                out[m, l] = 1.0 if top >= vr else 0.0
