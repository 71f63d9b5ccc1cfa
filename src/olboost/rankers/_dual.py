"""Compiled pieces of the dual (Shalev-Shwartz & Singer 2007, eq. 5-6) for one example.

Every update of :class:`olboost.rankers.LabelRanker` moves the weight vector of label ``y`` by a
multiple of the example: ``theta_y <- theta_y + a_y x`` (eq. 6, with ``a_y = alpha_{t,y}`` of
eq. 11). What an update needs of the complexity ``F`` is therefore, per label, the change of its
conjugate ``G`` (eq. 4) along ``x``,

    ``h_y(a) = G(theta_y + a x) - G(theta_y)``,

with its first two derivatives in ``a``. This module gives them for the two complexities of the
paper (Sec. 4 and 5):

* **squared norm**, ``F(w) = ||w||^2 / 2``, ``G = F``, ``w = theta``:
  ``h_y(a) = a <w_y, x> + a^2 ||x||^2 / 2``;
* **entropy**, ``F(w) = sum_j w_j log(n w_j)`` on the simplex, ``G(theta) = log sum_j
  exp(theta_j) - log n``, ``w = softmax(theta)``: with ``Q_{y,v}`` the weight ``w_y`` puts on the
  features whose value is ``v`` (``v`` among the distinct non-zero values of ``x``) and
  ``R_y = 1 - sum_v Q_{y,v}`` the weight on the features that are zero (summed over them
  where that difference would lose its digits, :func:`mass_off`),
  ``h_y(a) = log(R_y + sum_v Q_{y,v} e^{a v})`` (the paper's ``q_r`` is ``Q_{r,1}`` for a binary
  ``x``). Its derivative is the score ``<w_y(a), x>`` of the moved weights, its second
  derivative their variance of ``x``, so Lemma 1's ``<x, H x> <= 1/2`` holds whenever the
  feature values lie in [0, 1] (the variance is then at most 1/4).

Grouping the features by value makes an entropy evaluation cost ``O(m)``, ``m`` the number of
distinct non-zero values: ``O(1)`` for the paper's binary bag of words. ``h_y`` is also the change
of the label's log-normaliser ``log Z_y``, which is how the learner keeps ``log Z`` up to date
without touching the zero features.

Update II's one-dimensional problem (eq. 9) is solved here too: in closed form for the squared
norm and, for the entropy, by the paper's quadratic in ``beta = e^{c tau}`` when every non-zero
feature has the same value ``c`` (``c = 1``: the paper's binary case, Sec. 4), and otherwise by a
safeguarded Newton iteration on the concave dual.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "entropy_change",
    "group_values",
    "label_masses",
    "log_norm_exact",
    "mass_off",
    "update_two_entropy",
    "update_two_squared",
]

#: Beyond this exponent ``a v`` the entropy change is computed with the largest exponent factored
#: out (``log1p`` of ``expm1`` terms would overflow); below it ``log1p`` keeps full relative
#: precision for small steps.
_SHIFT_ABOVE = 1.0

#: ``log1p`` is used for steps that change the normaliser by a factor above ``1 + this`` (below,
#: the rounding of ``sum Q`` could take its argument below -1).
_LOG1P_ABOVE = -0.5

#: Newton's iteration for Update II stops when a step moves ``tau`` by less than this many units in
#: the last place, or after :data:`_NEWTON_MAX` iterations (bisection safeguards every step, so
#: the bracket halves at least every other iteration).
_NEWTON_ULPS = 4.0
_NEWTON_MAX = 200
_EPS = 2.220446049250313e-16

#: Below this, a label's weight off the example ``R_y`` is summed over the zero features rather
#: than taken as ``1 - sum Q`` (:func:`mass_off`): at ``2**-10`` the difference keeps about 9
#: digits, beyond what any step needs, and the sum over the zero features, ``O(d)``, is paid
#: only where a label's weight sits almost all on the example (large ``C``).
_REST_EXACT_BELOW = 2.0**-10


@numba.njit(cache=True)
def group_values(val: np.ndarray, grp: np.ndarray, vals: np.ndarray) -> int:
    """Group the non-zero values ``val`` of an example: the ``m`` distinct values, ascending, in
    ``vals[:m]`` and the group of entry ``p`` in ``grp[p]``; returns ``m`` (0 for ``x = 0``)."""
    nnz = val.shape[0]
    if nnz == 0:
        return 0
    first = val[0]
    same = True
    for p in range(1, nnz):
        if val[p] != first:
            same = False
            break
    if same:  # the paper's binary bag of words (and any x with one non-zero value)
        vals[0] = first
        for p in range(nnz):
            grp[p] = 0
        return 1
    order = np.argsort(val, kind="mergesort")
    m = 0
    for i in range(nnz):
        p = order[i]
        if m == 0 or val[p] != vals[m - 1]:
            vals[m] = val[p]
            m += 1
        grp[p] = m - 1
    return m


@numba.njit(cache=True)
def label_masses(
    theta: np.ndarray,
    log_norm: np.ndarray,
    idx: np.ndarray,
    grp: np.ndarray,
    m: int,
    y: int,
    Q: np.ndarray,
    R: np.ndarray,
) -> None:
    """Entropy weights of label ``y`` on each value group of the example, ``Q[:m, y]``, and on
    the zero features, ``R[y]`` (:func:`mass_off`; ``w_y = exp(theta_y - log Z_y)``)."""
    for g in range(m):
        Q[g, y] = 0.0
    for p in range(idx.shape[0]):
        Q[grp[p], y] += math.exp(theta[idx[p], y] - log_norm[y])
    R[y] = mass_off(theta, log_norm, idx, y, Q[:m, y])


@numba.njit(cache=True)
def mass_off(
    theta: np.ndarray, log_norm: np.ndarray, idx: np.ndarray, y: int, on: np.ndarray
) -> float:
    """The weight ``w_y`` puts on the features that are zero in the example (``idx``: its
    non-zero features), ``R_y``, given its weights ``on`` on the example's value groups.

    ``1 - sum(on)`` costs nothing, but is a difference of numbers near 1 when the label's
    weight sits on the example: each term carries the rounding of ``theta - log Z``, up to about
    ``1e-12`` (log Z's own error bound, ``2**-40``, and ``theta`` up to 3,000 or so), so a true
    ``R_y`` of ``e^-40`` came out as 0, one of ``e^-600`` as ``1e-16``, and Update II's step (and
    Update III's, and the change of ``log Z``) went wherever that rounding sent it. Below
    :data:`_REST_EXACT_BELOW` the weight is summed over the zero features themselves, ``O(d)``,
    which keeps its relative precision whatever its size."""
    rest = 1.0
    for g in range(on.shape[0]):
        rest -= on[g]
    if rest >= _REST_EXACT_BELOW:
        return rest
    inside = np.zeros(theta.shape[0], dtype=np.bool_)
    for p in range(idx.shape[0]):
        inside[idx[p]] = True
    total = 0.0
    for j in range(theta.shape[0]):
        if not inside[j]:
            total += math.exp(theta[j, y] - log_norm[y])
    return total


@numba.njit(cache=True)
def entropy_change(
    a: float,
    Q: np.ndarray,
    y: int,
    R: float,
    vals: np.ndarray,
    m: int,
    ebuf: np.ndarray,
    want_h: bool,
) -> tuple[float, float, float]:
    """``(h_y(a), h_y'(a), h_y''(a))`` under the entropy (module docstring), ``h`` only when
    ``want_h`` (else 0). ``Q[:m, y]``, ``R``: the label's masses; ``vals[:m] > 0`` ascending;
    ``ebuf``: scratch of length ``m``."""
    top = a * vals[m - 1] if a > 0.0 else 0.0  # the largest exponent, 0 being R's
    rest = R * math.exp(-top) if top > 0.0 else R
    total = rest
    first = 0.0
    for i in range(m):
        e = Q[i, y] * math.exp(a * vals[i] - top)
        ebuf[i] = e
        total += e
        first += e * vals[i]
    if total <= 0.0:  # every weight underflowed (the caller recomputes the normaliser)
        return -math.inf, 0.0, 0.0
    h1 = first / total
    # the variance as a sum of squares (no cancellation): weight on 0, then on each value
    second = rest * h1 * h1
    for i in range(m):
        dv = vals[i] - h1
        second += ebuf[i] * dv * dv
    h2 = second / total
    h = 0.0
    if want_h:
        h = top + math.log(total)
        if top <= _SHIFT_ABOVE:
            # log(R + sum Q e^{av}) = log1p(sum Q (e^{av} - 1)), as R = 1 - sum Q: exact for
            # small steps, where the log of a sum near 1 would lose the step's digits
            acc = 0.0
            for i in range(m):
                acc += Q[i, y] * math.expm1(a * vals[i])
            if acc > _LOG1P_ABOVE:
                h = math.log1p(acc)
    return h, h1, h2


@numba.njit(cache=True)
def update_two_squared(loss: float, norm2: float, C: float) -> float:
    """Update II under the squared norm (Sec. 4): ``tau = min(C, loss / (2 ||x||^2))``, the
    maximiser of ``gamma tau - tau <w_r - w_s, x> - tau^2 ||x||^2`` on ``[0, C]`` (``loss``: the
    pair's hinge loss ``gamma - <w_r - w_s, x> > 0``; ``tau = C`` when ``x = 0``)."""
    if norm2 <= 0.0:
        return C
    return min(C, loss / (2.0 * norm2))


@numba.njit(cache=True)
def _pair_slope(
    tau: float,
    gamma: float,
    r: int,
    s: int,
    Q: np.ndarray,
    R: np.ndarray,
    vals: np.ndarray,
    m: int,
    ebuf: np.ndarray,
) -> tuple[float, float]:
    """First and second derivatives of Update II's dual change
    ``phi(tau) = gamma tau - h_r(tau) - h_s(-tau)`` under the entropy."""
    _, r1, r2 = entropy_change(tau, Q, r, R[r], vals, m, ebuf, False)
    _, s1, s2 = entropy_change(-tau, Q, s, R[s], vals, m, ebuf, False)
    return gamma - r1 + s1, -r2 - s2


@numba.njit(cache=True)
def update_two_entropy(
    gamma: float,
    C: float,
    r: int,
    s: int,
    Q: np.ndarray,
    R: np.ndarray,
    vals: np.ndarray,
    m: int,
    ebuf: np.ndarray,
) -> float:
    """Update II under the entropy (Sec. 4): the ``tau`` in ``[0, C]`` maximising
    ``phi(tau) = gamma tau - h_r(tau) - h_s(-tau)`` for the pair ``(r, s)`` (eq. 9), called when
    ``phi'(0) > 0`` (the pair's hinge loss is positive).

    When every non-zero feature equals ``c`` (``m == 1``; the paper's binary ``x`` has ``c = 1``),
    ``phi'(tau) = 0`` is the paper's quadratic in ``beta = e^{c tau}``,
    ``beta^2 q_r (1 - q_s)(1 - g) - beta g (q_r q_s + (1 - q_r)(1 - q_s)) - q_s (1 - q_r)(1 + g)
    = 0`` with ``g = gamma / c``: its positive root (the product of the roots is negative when
    ``g < 1``), or ``tau = C`` when it has none (``g >= 1``: ``phi`` increases on all of
    ``[0, C]``), clipped to ``[0, C]``. Otherwise a Newton iteration on ``phi' = 0`` (``phi`` is
    concave), kept inside the bracket where ``phi'`` changes sign by bisection.
    """
    if m == 1:
        c = vals[0]
        g = gamma / c
        qr = Q[0, r] / (Q[0, r] + R[r])
        qs = Q[0, s] / (Q[0, s] + R[s])
        # 1 - q as R / (Q + R): 1 - q_s is 0 for a label whose weight is all but e^-40 on x
        ur = R[r] / (Q[0, r] + R[r])
        us = R[s] / (Q[0, s] + R[s])
        qa = qr * us * (1.0 - g)
        qb = -g * (qr * qs + ur * us)
        qc = -qs * ur * (1.0 + g)
        if qa <= 0.0:
            # g >= 1, q_r = 0 or q_s = 1: the scores' gap p_r - p_s stays below g, phi' > 0
            return C
        # qb <= 0, so -qb + sqrt(...) adds two non-negative numbers: no cancellation
        beta = (-qb + math.sqrt(qb * qb - 4.0 * qa * qc)) / (2.0 * qa)
        if beta > 0.0:
            return min(C, max(0.0, math.log(beta) / c))
        # beta = 0 only for weights that underflowed: Newton below
    d1, _ = _pair_slope(C, gamma, r, s, Q, R, vals, m, ebuf)
    if d1 >= 0.0:
        return C
    lo, hi = 0.0, C
    tau = 0.0
    for _ in range(_NEWTON_MAX):
        d1, d2 = _pair_slope(tau, gamma, r, s, Q, R, vals, m, ebuf)
        if d1 == 0.0:
            return tau
        if d1 > 0.0:
            lo = tau
        else:
            hi = tau
        nxt = tau - d1 / d2 if d2 < 0.0 else 0.5 * (lo + hi)
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        if abs(nxt - tau) <= _NEWTON_ULPS * _EPS * max(abs(tau), abs(nxt)):
            return nxt
        tau = nxt
        if hi - lo <= _NEWTON_ULPS * _EPS * hi:
            break
    return tau


@numba.njit(cache=True)
def log_norm_exact(theta: np.ndarray, y: int) -> float:
    """``log sum_j exp(theta[j, y])``, computed over every feature (``O(d)``)."""
    top = -math.inf
    for j in range(theta.shape[0]):
        if theta[j, y] > top:
            top = theta[j, y]
    total = 0.0
    for j in range(theta.shape[0]):
        total += math.exp(theta[j, y] - top)
    return top + math.log(total)
