"""Compiled kernels of the multiclass 0-1 potential (:mod:`olboost.potentials.multiclass`).

Jung, Goetz & Tewari 2017, eq. 2, 3, 5 and 16. Module-level ``@numba.njit(cache=True)`` functions
that boosters call from their own compiled loops; none validates its input.

* ``binomial_pmf(m, p, out)`` and ``binomial_table(n, n_labels) -> tab``, the binomial laws (and
  their upper tails) shared by every evaluation of one ``(n, k)``;
* ``mbbm_potential_table(d, n, k, gamma, tab) -> phi^r_n`` where ``d[j] = s[r] - s[l_j]`` over
  the ``k - 1`` labels ``l_j != r`` (int64[:], any order) and ``tab = binomial_table(n, k - 1)``;
  cost rows of eq. 4 are built from it by
  :func:`olboost.boosters._mbbm_kernels.mbbm_cost_row_memo`;
* ``mbbm_normalize(c, r, out) -> weight``: eq. 5 and the weight of Algorithm 1, line 11;
* ``mbbm_draw_losses(s, r, X, out)``: Monte Carlo samples of the 0-1 loss of eq. 2.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "MAX_BINOMIAL_TABLE",
    "binomial_pmf",
    "binomial_table",
    "mbbm_potential_table",
    "mbbm_normalize",
    "mbbm_draw_losses",
]

#: Largest binomial table (floats) built for the multiclass kernels: 2 k (n + 1)^2 <= this.
MAX_BINOMIAL_TABLE = 1 << 22


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


@numba.njit(cache=True)
def binomial_table(n: int, n_labels: int) -> np.ndarray:
    """``tab[0, kr, m, v] = P(Binomial(m, 1 / kr) = v)`` and ``tab[1, kr, m, v] = P(Binomial(m,
    1 / kr) > v)`` for ``kr = 2..n_labels``, ``m, v <= n``.

    The shares of a label among ``kr`` remaining ones, and their upper tails, summed from the
    top (``P(> v) = P(> v + 1) + P(= v + 1)``, positive terms only, so a tail keeps its relative
    accuracy however small it is); shared by every evaluation of one ``(n, k)``. Shape ``(2,
    n_labels + 1, n + 1, n + 1)`` (rows ``kr < 2`` unused); returns an empty ``(0, 0, 0, 0)``
    table when that exceeds :data:`MAX_BINOMIAL_TABLE` floats (the kernels then compute each
    row on the fly).
    """
    if 2 * (n_labels + 1) * (n + 1) * (n + 1) > MAX_BINOMIAL_TABLE:
        return np.zeros((0, 0, 0, 0), dtype=np.float64)
    tab = np.zeros((2, n_labels + 1, n + 1, n + 1), dtype=np.float64)
    for kr in range(2, n_labels + 1):
        for m in range(n + 1):
            binomial_pmf(m, 1.0 / kr, tab[0, kr, m])
            _upper_tails(tab[0, kr, m], m, tab[1, kr, m])
    return tab


@numba.njit(cache=True, inline="always")
def _upper_tails(pmf: np.ndarray, m: int, out: np.ndarray) -> None:
    """``out[v] = sum_{w > v} pmf[w]`` for ``v = 0..m``, summed from ``w = m`` down."""
    tail = 0.0
    out[m] = 0.0
    for v in range(m - 1, -1, -1):
        tail += pmf[v + 1]
        out[v] = tail


@numba.njit(cache=True)
def mbbm_potential_table(d: np.ndarray, n: int, k: int, gamma: float, tab: np.ndarray) -> float:
    """``phi^r_n(s) = P(max_{l != r} (s + X)[l] >= (s + X)[r])`` from ``d[j] = s[r] - s[l_j]``.

    ``X ~ Multinomial(n, u_gamma^r)``, ``u_gamma^r = (1 - gamma)/k + gamma`` on ``r`` and
    ``(1 - gamma)/k`` elsewhere (Jung, Goetz & Tewari 2017, eq. 2, 3 and 16). Conditioning on
    ``X_r = x`` the other ``n - x`` draws are uniform over the ``k - 1`` labels, each capped at
    ``d[j] + x - 1``: ``sum_x P(X_r = x) P(some cap fails)``. O(k n^3) in the worst case.

    The probability of losing is summed directly, as the mass each label's cap cuts off (a
    binomial upper tail of ``tab[1]``), never as ``1 - P(win)``: every term is positive, so the
    potential keeps its relative accuracy however small it is (``1 - P(win)`` is rounding noise
    below about ``1e-16``, and below ``1e-12`` from ``n`` of about 900 on, where the laws come
    from ``lgamma``). Eq. 5 normalises the cost rows these potentials make, so their directions
    depend on that relative accuracy.

    ``tab`` is ``binomial_table(n', k - 1)`` for any ``n' >= n``, shared by every evaluation of
    one ``(n, k)``, or an empty one; ``d`` may be in any order.
    """
    if k == 1:
        return 0.0
    d_sorted = np.sort(d)
    K = d_sorted.shape[0]
    use_tab = tab.shape[0] > 0
    u_r = (1.0 - gamma) / k + gamma
    px = np.empty(n + 1, dtype=np.float64)
    binomial_pmf(n, u_r, px)
    # The allocation's law before and after each label, rows cur and 1 - cur, nonzero at most on
    # 0 .. hi: the new law is written to the other row, not copied back, and every loop stops at
    # hi, not m. The entries past hi are zeros: skipping them adds and multiplies nothing.
    laws = np.empty((2, n + 1), dtype=np.float64)
    pmf = np.empty(n + 1, dtype=np.float64)
    loss = 0.0
    for x in range(n + 1):
        if px[x] == 0.0:
            continue
        # P(X_j > d_sorted[j] + x - 1 for some j) when the other m = n - x draws fall uniformly
        # on the K labels: allocate labels one at a time (label j takes a Binomial(remaining,
        # 1 / (K - j)) share), binding caps first, and add up the mass each cap cuts off. Written
        # out, not a helper: a call (or an inlined helper) counts a reference to each of its
        # arrays, in and out, per x.
        m = n - x
        if d_sorted[0] + x - 1 < 0:
            loss += px[x]  # some label surely beats r
            continue
        cur = 0
        hi = 0
        laws[cur, 0] = 1.0
        cut = 0.0
        for j in range(K):
            cap = d_sorted[j] + x - 1
            if cap >= m:
                break  # this label and every later one (larger caps) can absorb anything left
            if K - j == 1:
                # the last label takes every remaining draw: over its cap below m - cap
                for u in range(min(m - cap, hi + 1)):
                    cut += laws[cur, u]
                break
            k_rem = K - j
            new = 1 - cur
            new_hi = hi + cap if hi + cap < m else m
            for u in range(new_hi + 1):
                laws[new, u] = 0.0
            for u in range(hi + 1):
                pu = laws[cur, u]
                if pu == 0.0:
                    continue
                rem = m - u
                top = cap if cap < rem else rem
                if use_tab:
                    for v in range(top + 1):
                        laws[new, u + v] += pu * tab[0, k_rem, rem, v]  # indexed: a view counts
                    cut += pu * tab[1, k_rem, rem, top]
                else:
                    binomial_pmf(rem, 1.0 / k_rem, pmf)
                    for v in range(top + 1):
                        laws[new, u + v] += pu * pmf[v]
                    tail = 0.0  # as _upper_tails sums tab[1]: from the top down, to top + 1
                    for v in range(rem, top, -1):
                        tail += pmf[v]
                    cut += pu * tail
            cur = new
            hi = new_hi
        loss += px[x] * cut
    return loss if loss < 1.0 else 1.0


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
