"""Update III: the primal-dual interior point method of Shalev-Shwartz & Singer (2007), Sec. 4.

Update III (eq. 10) maximises the dual over every variable of the current example; Appendix B
reduces it to ``k`` variables ``alpha_y`` (eq. 11):

    max  gamma sum_{y in Y} alpha_y - sum_y h_y(alpha_y)
    s.t. sum_y alpha_y = 0,  sum_{y in Y} alpha_y <= C,  alpha_y >= 0 (y in Y),  alpha_y <= 0 (else)

with ``h_y(a) = G(theta_y + a x) - G(theta_y)`` (:mod:`olboost.rankers._dual`). It is cast as the
paper's eq. 12, ``min sum_r f_r(alpha_r)`` s.t. ``A alpha = b``, ``p_r alpha_r <= q_r``, over
``d = k + 1`` variables, the last a slack ``alpha_{k+1} >= 0`` that turns the budget into an
equality: ``f_y(a) = h_y(a) - gamma a [y in Y]``, ``f_{k+1} = 0``; ``A``'s rows are
``(1, ..., 1, 0)`` and the indicator of ``Y`` plus the slack, ``b = (0, C)``; ``p_r = -1`` for
``r`` in ``Y`` and the slack, ``+1`` otherwise; ``q = 0``. The distance of ``alpha_r`` to its bound
is ``g_r = q_r - p_r alpha_r = |alpha_r| > 0``.

Each iteration (eq. 17-20) keeps the iterates strictly feasible, aims the surrogate gap
``eta = sum_r lambda_r g_r`` (eq. 15) at ``0.1 eta`` (eq. 17) and linearises the stationarity
conditions (eq. 18). Eliminating ``Delta lambda`` (eq. 19) leaves
``z_r Delta alpha_r = u_r - A_{1,r} Delta nu_1 - A_{2,r} Delta nu_2`` (eq. 20) with
``z_r = f''_r + lambda_r / g_r`` and
``u_r = -f'_r - p_r 0.1 eta / (d g_r) - nu_1 A_{1,r} - nu_2 A_{2,r}``; ``A Delta alpha = 0`` is
then a 2 x 2 system in ``Delta nu`` (the matrix ``A Z^{-1} A^T``), so an iteration costs
``O(k)``: no dense ``(2d + 2)``-square solve. (As printed, eq. 19-20 drop a factor ``p_r`` in
``u_r`` and write ``lambda_r p_r`` for ``lambda_r p_r^2`` in ``z_r``, and take ``Delta nu`` with
the opposite sign; with ``p_r = +-1`` the derivation of eq. 17-18 gives the terms above.)

The start is strictly feasible: half the budget the optimum can use (:func:`_budget_used`)
spread evenly over the relevant labels and (negated) over the irrelevant ones, the slack holding
the rest; ``lambda_r g_r`` equal for
every ``r`` (:data:`INITIAL_GAP`) and ``nu`` the least-squares fit of the dual residual.

The step follows Boyd & Vandenberghe (2004), Sec. 11.7.3, the reference the paper cites (pp.
612-613): the largest step in ``(0, 1]`` keeping ``lambda > 0`` and ``alpha`` strictly feasible
(the constraints being linear, that bound is exact, where the book halves the step until the
iterate is feasible), times :data:`FRACTION_TO_BOUNDARY`, then halved until the norm of the
residual (dual residual and centrality) falls by a factor ``1 - 0.01 s``. The method
stops when ``eta`` and the largest dual residual are below :data:`TOL` times the problem's scale.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.rankers._dual import entropy_change

__all__ = ["MAX_ITER", "TOL", "pdip"]

#: eq. 17: each iteration aims the surrogate duality gap at this fraction of its value.
CONTRACTION = 0.1
#: Boyd & Vandenberghe 11.7.3: the step is this fraction of the largest one keeping lambda > 0.
FRACTION_TO_BOUNDARY = 0.99
#: Backtracking: the step is multiplied by this until the iterate is acceptable.
STEP_BACK = 0.5
#: Backtracking: the residual must fall by a factor ``1 - SUFFICIENT * step``.
SUFFICIENT = 0.01
#: The start's surrogate gap ``eta`` is this fraction of ``B scale`` (``lambda_r g_r`` equal for
#: every ``r``). On beck-s (k = 101) 0.1 took the fewest iterations (mean 11-12 over three
#: settings of C and the margin, at most 18), where 1 took 13-14 (at most 19) and 0.01 15-17;
#: over the seven Enron users (squared C = 1, margin 1; entropy C = 5, margin 0.1) the mean is
#: 10.4 and 2 of 27,823 runs took more than 15 (16).
INITIAL_GAP = 0.1
#: Stop when ``eta <= TOL B scale`` and ``max |dual residual| <= TOL scale``, ``scale`` the
#: largest of ``gamma`` and ``|f'_y(0)|`` and ``B`` the bound of :func:`_budget_used` on the
#: budget the optimum uses (``C`` under the entropy): the dual change is then within about
#: ``TOL B scale`` of its maximum.
TOL = 1e-8
#: Iteration limit (the paper never needed more than 15); iteration counts are recorded.
MAX_ITER = 100
_MAX_BACKTRACK = 60


@numba.njit(cache=True)
def _slopes(
    entropy: bool,
    gamma: float,
    y: np.ndarray,
    x: np.ndarray,
    s: np.ndarray,
    norm2: float,
    Q: np.ndarray,
    R: np.ndarray,
    vals: np.ndarray,
    m: int,
    lg: np.ndarray,
    ebuf: np.ndarray,
    f1: np.ndarray,
    f2: np.ndarray,
) -> None:
    """``f1[r], f2[r] = f_r'(x_r), f_r''(x_r)`` for every label ``r``, with
    ``f_r(a) = h_r(a) - gamma a [r in Y]`` (:mod:`olboost.rankers._dual`).

    Under the entropy with a single non-zero value ``c`` (binary ``x``: ``c = 1``),
    ``h_r'(a) = c / (1 + e^t)`` and ``h_r''(a) = c^2 e^t / (1 + e^t)^2`` with
    ``t = lg[r] - c a``, ``lg[r] = log(R_r / Q_r)``: one exponential, written so that it
    neither overflows nor cancels. (One loop per case: a call per label would cost more than
    the arithmetic.)"""
    k = y.shape[0]
    if not entropy:
        for r in range(k):
            f1[r] = s[r] + x[r] * norm2 - (gamma if y[r] else 0.0)
            f2[r] = norm2
    elif m == 1:
        c = vals[0]
        for r in range(k):
            t = lg[r] - c * x[r]
            # e = e^-|t|: the same exponential either way, chosen without a branch (the sign of
            # t follows no pattern a branch predictor could learn)
            e = math.exp(-abs(t))
            inv = 1.0 / (1.0 + e)
            h1 = (c * e if t > 0.0 else c) * inv
            f1[r] = h1 - (gamma if y[r] else 0.0)
            f2[r] = c * c * e * inv * inv
    else:
        for r in range(k):
            _, h1, h2 = entropy_change(x[r], Q, r, R[r], vals, m, ebuf, False)
            f1[r] = h1 - (gamma if y[r] else 0.0)
            f2[r] = h2


@numba.njit(cache=True, inline="always")
def _budget_used(entropy, gamma, C, y, s, norm2, n_rel):
    """An upper bound on ``sum_{y in Y} alpha_y`` at the optimum of eq. 11: ``C``, or under the
    squared norm the smaller ``n_rel (max s - min s + gamma) / ||x||^2``. (At the optimum every
    moved irrelevant label ends at a common score ``L`` no higher than the highest score, and
    every moved relevant label ``r`` at most ``gamma`` above ``L``, having moved by
    ``alpha_r ||x||^2``.) The start and the stopping tolerance scale with it, not with ``C``:
    with a budget far beyond what the example can use, a tolerance of ``TOL C`` would exceed the
    whole gain of the update."""
    if entropy or not norm2 > 0.0:
        return C
    lo = np.inf
    hi = -np.inf
    for r in range(y.shape[0]):
        lo = min(lo, s[r])
        hi = max(hi, s[r])
    return min(C, n_rel * (hi - lo + gamma) / norm2)


# error_model="numpy": a division by zero gives an infinity or NaN, as in NumPy, instead of
# raising; on a problem of extreme scale (a feature near MAX_ABS_FEATURE, a margin or budget
# near the float limits) the method's arithmetic can break down, and the caller
# (:func:`olboost.rankers._kernels._update_three`) then sees a non-finite solution and falls
# back to Update II. Finite arithmetic is unchanged.
@numba.njit(cache=True, error_model="numpy")
def pdip(
    y: np.ndarray,
    gamma: float,
    C: float,
    entropy: bool,
    s: np.ndarray,
    norm2: float,
    Q: np.ndarray,
    R: np.ndarray,
    vals: np.ndarray,
    m: int,
    lg: np.ndarray,
    ebuf: np.ndarray,
    alpha: np.ndarray,
    work: np.ndarray,
) -> int:
    """Solve eq. 11 for one example by the PDIP of eq. 12-20; ``alpha[:k]`` receives the
    solution (``alpha[k]``: the slack; not finite if the arithmetic broke down). Returns the
    number of iterations.

    ``y``: relevant-label mask (neither empty nor full); ``s``: the scores ``<w_y, x>`` and
    ``norm2 = ||x||^2`` (squared norm), or ``Q``, ``R``, ``vals``, ``m`` the entropy masses
    (:func:`olboost.rankers._dual.entropy_change`) and, when ``m == 1``,
    ``lg = log(R / Q[0])``; ``work``: scratch, ``(12, k + 1)``.
    """
    k = y.shape[0]
    n = k + 1
    lam, f1, f2, da, dl, gi = work[0], work[1], work[2], work[3], work[4], work[5]
    a_new, l_new, f1_new, f2_new = work[6], work[7], work[8], work[9]
    P, A2 = work[10], work[11]  # p_r, and A's second row (A's first row is 1 but for the slack)
    n_rel = 0
    for r in range(k):
        if y[r]:
            n_rel += 1
            P[r] = -1.0
            A2[r] = 1.0
        else:
            P[r] = 1.0
            A2[r] = 0.0
    P[k] = -1.0
    A2[k] = 1.0
    x = alpha  # the iterate; alpha and a_new swap roles between iterations
    x[:] = 0.0
    _slopes(entropy, gamma, y, x, s, norm2, Q, R, vals, m, lg, ebuf, f1, f2)
    scale = gamma
    for r in range(k):
        scale = max(scale, abs(f1[r]))
    budget = _budget_used(entropy, gamma, C, y, s, norm2, n_rel)
    # a strictly feasible start: half the budget spread evenly, the slack holding the rest
    half = 0.5 * budget
    for r in range(k):
        x[r] = half / n_rel if y[r] else -half / (k - n_rel)
    x[k] = C - half
    _slopes(entropy, gamma, y, x, s, norm2, Q, R, vals, m, lg, ebuf, f1, f2)
    f1[k] = 0.0  # the slack's objective is 0
    f2[k] = 0.0
    f1_new[k] = 0.0
    f2_new[k] = 0.0
    mu0 = INITIAL_GAP * budget * scale / n
    for r in range(n):
        lam[r] = mu0 / (-P[r] * x[r])
    eta = mu0 * n
    # nu: least squares of the dual residual, (A A^T) nu = -A (f' + p lambda)
    c1 = 0.0
    c2 = 0.0
    for r in range(n):
        v = f1[r] + P[r] * lam[r]
        if r < k:
            c1 += v
        c2 += A2[r] * v
    m11, m12, m22 = float(k), float(n_rel), float(n_rel + 1)
    det = m11 * m22 - m12 * m12
    nu1 = -(c1 * m22 - c2 * m12) / det
    nu2 = -(m11 * c2 - m12 * c1) / det
    tol_gap = TOL * budget * scale
    tol_dual = TOL * scale
    its = MAX_ITER
    for it in range(MAX_ITER):
        mu = CONTRACTION * eta / n  # eq. 17
        # the residual (dual residual of eq. 16, centrality lambda_r g_r - mu), and eq. 19-20:
        # u_r (in da), 1 / z_r (in dl), 1 / g_r (in gi); then the 2 x 2 system
        # A Z^-1 A^T dnu = A Z^-1 u (A's first row is 1 on the labels, 0 on the slack)
        r0 = 0.0
        worst = 0.0
        s11 = s12 = s22 = b1 = b2 = 0.0
        # the labels (A's first row is 1 there), then the slack (0): no test of r in the loop;
        # first every label's terms (no sum: a loop the compiler can run on vector registers),
        # then the sums in label order. a_new and l_new are free until the line search.
        rds, rcs = a_new, l_new
        for r in range(k):
            p = P[r]
            g = -p * x[r]
            ig = 1.0 / g
            rd = f1[r] + p * lam[r] + nu1 + nu2 * A2[r]
            rds[r] = rd
            rcs[r] = lam[r] * g - mu
            da[r] = p * (lam[r] - mu * ig) - rd
            dl[r] = 1.0 / (f2[r] + lam[r] * ig)
            gi[r] = ig
        for r in range(k):
            rd = rds[r]
            rc = rcs[r]
            r0 += rd * rd + rc * rc
            worst = max(worst, abs(rd))
            a2 = A2[r]
            iz = dl[r]
            uz = da[r] * iz
            s11 += iz
            s12 += a2 * iz
            s22 += a2 * iz
            b1 += uz
            b2 += a2 * uz
        # the slack: its terms in A's first row stay products with 0, as in the loop before it
        # was split, so that the sums (and a non-finite value, should one arise) are the same
        p = P[k]
        g = -p * x[k]
        ig = 1.0 / g
        rd = f1[k] + p * lam[k] + nu1 * 0.0 + nu2 * A2[k]
        rc = lam[k] * g - mu
        r0 += rd * rd + rc * rc
        worst = max(worst, abs(rd))
        u = p * (lam[k] - mu * ig) - rd
        iz = 1.0 / (f2[k] + lam[k] * ig)
        da[k] = u
        dl[k] = iz
        gi[k] = ig
        s11 += 0.0 * iz
        s12 += 0.0 * A2[k] * iz
        s22 += A2[k] * iz
        b1 += 0.0 * (u * iz)
        b2 += A2[k] * (u * iz)
        if eta <= tol_gap and worst <= tol_dual:
            its = it
            break
        r0 = math.sqrt(r0)
        det = s11 * s22 - s12 * s12
        dn1 = (b1 * s22 - b2 * s12) / det
        dn2 = (s11 * b2 - s12 * b1) / det
        # the direction, and the largest step keeping lambda > 0 and alpha strictly feasible
        # (the bounds are linear: g_r(alpha + step da) = g_r - step p_r da_r)
        step = 1.0
        for r in range(n):
            p = P[r]
            a1 = 1.0 if r < k else 0.0
            d_alpha = (da[r] - a1 * dn1 - A2[r] * dn2) * dl[r]
            d_lam = (lam[r] * p * d_alpha + mu) * gi[r] - lam[r]  # eq. 19
            da[r] = d_alpha
            dl[r] = d_lam
            if d_lam < 0.0 and step * d_lam < -lam[r]:
                step = -lam[r] / d_lam
            shrink = p * d_alpha * gi[r]  # the fraction of g_r a unit step uses up
            if shrink * step > 1.0:
                step = 1.0 / shrink
        step *= FRACTION_TO_BOUNDARY
        # backtracking on the norm of the residual
        bound = (1.0 - SUFFICIENT * step) * r0
        for _ in range(_MAX_BACKTRACK):
            nn1 = nu1 + step * dn1
            nn2 = nu2 + step * dn2
            for r in range(n):
                a_new[r] = x[r] + step * da[r]
                l_new[r] = lam[r] + step * dl[r]
            _slopes(entropy, gamma, y, a_new, s, norm2, Q, R, vals, m, lg, ebuf, f1_new, f2_new)
            r1 = 0.0
            eta = 0.0
            for r in range(n):
                xr = a_new[r]
                lr = l_new[r]
                p = P[r]
                rd = f1_new[r] + p * lr + nn1 * (1.0 if r < k else 0.0) + nn2 * A2[r]
                c = lr * (-p * xr)
                eta += c
                c -= mu
                r1 += rd * rd + c * c
            if r1 <= bound * bound:
                break
            step *= STEP_BACK
            bound = (1.0 - SUFFICIENT * step) * r0
        x, a_new = a_new, x
        lam, l_new = l_new, lam
        f1, f1_new = f1_new, f1
        f2, f2_new = f2_new, f2
        nu1 = nn1
        nu2 = nn2
    if x is not alpha:
        alpha[:] = x
    return its
