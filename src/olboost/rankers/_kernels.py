"""Compiled trials of the label rankers of Shalev-Shwartz & Singer (2007).

One trial (Sec. 1, 3): score every label, ``rho_y = <w_y, x>``; count a mistake when some
relevant label is not strictly above every irrelevant one; then ascend the dual (eq. 5) with
Update I (eq. 7-8), II (eq. 9) or III (eq. 10-11) by moving ``theta_y <- theta_y + alpha_y x``
(eq. 6). Examples come as CSR rows (sorted column indices ``idx``, non-zero values ``val``), so
that a trial costs ``O(nnz k)``: only the rows of ``theta`` of the example's non-zero features
are read or written.

Layout: ``theta`` is ``(d, k)``, C-ordered, so the ``k`` labels of one feature are contiguous.
Under the squared norm ``w = theta``. Under the entropy ``w_y = softmax(theta_y)`` is never
stored: ``log_norm[y] = log sum_j exp(theta[j, y])`` is kept up to date from the change
``h_y`` of :mod:`olboost.rankers._dual` (``O(m)`` per moved label), and ``w[j, y] =
exp(theta[j, y] - log_norm[y])`` is formed for the non-zero features only.

A running normaliser carries the absolute rounding error of every past step, so when a step
shrinks ``Z_y`` by a factor ``S`` (weight taken off the example's features) its relative error
grows by ``1 / S`` (the weight left on the zero features, ``1 - sum_nz w``, is a difference of
nearly equal numbers). ``norm_error[y]`` bounds that relative error: each step adds 4 units in
the last place and multiplies it by ``1 / S`` when ``S < 1``; once it exceeds
:data:`NORM_ERROR_MAX`, ``log Z_y`` is recomputed exactly over all ``d`` features (``O(d)``) and
the bound reset. So ``log_norm`` is within about ``1e-12`` of its exact value while ``theta`` and
``log Z`` stay of moderate size, and the exact recomputations are as rare as large cumulative
losses of a label's weight. (The bound counts each step's rounding at unit scale; adding to
``theta`` or ``log Z`` entries in the hundreds or thousands rounds at their own scale, which it
does not count: after 400 Update I steps at ``C = 600``, ``|theta|`` near 5,000, the normaliser
was 3e-11 off with a bound of 9e-13, scores off by about 1e-12.)
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from olboost._random import counter_uniform, draw_key
from olboost.rankers._dual import (
    entropy_change,
    group_values,
    label_masses,
    log_norm_exact,
    mass_off,
    update_two_entropy,
    update_two_squared,
)
from olboost.rankers._pdip import pdip
from olboost.rankers._scaling import Scaling, learn_scaling, scale_into

__all__ = [
    "NORM_ERROR_MAX",
    "Scratch",
    "State",
    "add_unlearned",
    "learn_rows",
    "learn_scaled_rows",
    "score_scaled_rows",
    "score_rows",
    "is_canonical",
]

#: Largest relative error of a running normaliser ``Z_y`` before it is recomputed exactly
#: (module docstring): 2^-40, about 1e-12.
NORM_ERROR_MAX = 2.0**-40
_ULP = 2.0**-52

#: What the compiled trials read and update (the arrays are the model's own).
State = namedtuple(
    "State",
    [
        "theta",  # (d, k) dual-derived parameters (eq. 6); the weights under the squared norm
        "log_norm",  # (k,) log sum_j exp(theta[j, y]) (entropy; unused under the squared norm)
        "norm_error",  # (k,) bound on the relative error of exp(log_norm) (entropy)
        "entropy",  # complexity: entropy (True) or squared norm
        "update",  # 1, 2 or 3
        "C",
        "margin",  # gamma of eq. 1
        "tie_key",  # uint64 key of the tie-breaking draws (Updates I and II)
        "pdip_hist",  # (MAX_ITER + 1,) int64: PDIP runs by number of iterations
    ],
)


#: Buffers of one trial, allocated once per stream (:func:`scratch`).
Scratch = namedtuple(
    "Scratch",
    [
        "s",  # (k,) scores
        "Q",  # (widest, k) entropy masses on each value group
        "R",  # (k,) entropy masses on the zero features
        "grp",  # (widest,) value group of each non-zero feature
        "vals",  # (widest,) distinct non-zero values
        "ebuf",  # (widest,)
        "alpha",  # (k + 1,) Update III's solution (and slack)
        "work",  # (_PDIP_ROWS * (k + 1),) the solver's scratch
        "act",  # (k,) labels entering the solver
        "ysub",  # (k,) their relevance
        "ssub",  # (k,) their scores
        "Qsub",  # (widest * k,) their masses
        "Rsub",  # (k,)
        "lg",  # (k,) log(R / Q) for single-valued x
        "changes",  # (k,) h_y(alpha_y)
    ],
)

#: Rows of the interior point method's scratch (:func:`olboost.rankers._pdip.pdip`).
_PDIP_ROWS = 12


#: Largest violation of eq. 11's constraints (``sum_y alpha_y = 0``, ``sum_{y in Y} alpha_y <=
#: C``) an Update III answer may have, relative to ``C``: the interior point method's iterates
#: drift by about 1e-9 C at most where it converges; beyond this the answer is refused and the
#: example gets Update II's step (:func:`trial`).
FEASIBILITY_TOL = 1e-7


@numba.njit(cache=True)
def score_row(
    theta: np.ndarray,
    log_norm: np.ndarray,
    entropy: bool,
    idx: np.ndarray,
    val: np.ndarray,
    s: np.ndarray,
) -> None:
    """The scores ``s[y] = <w_y, x>`` of one CSR row."""
    k = s.shape[0]
    for y in range(k):
        s[y] = 0.0
    for p in range(idx.shape[0]):
        x = val[p]
        row = theta[idx[p]]
        if entropy:
            for y in range(k):
                s[y] += x * np.exp(row[y] - log_norm[y])
        else:
            for y in range(k):
                s[y] += x * row[y]


@numba.njit(cache=True)
def add_unlearned(val: np.ndarray, log_norm: np.ndarray, entropy: bool, s: np.ndarray) -> None:
    """Go on with :func:`score_row`'s sums ``s`` over features the ranker has not learned yet,
    values ``val``: their rows of ``theta`` are 0, so each adds what :func:`score_row` adds for
    a row of zeros (the same operations, so the same bits as the ranker grown by them scores,
    ``log_norm`` being the grown normalisers), after every learned feature, as their indices
    follow the learned ones."""
    k = s.shape[0]
    for p in range(val.shape[0]):
        x = val[p]
        if entropy:
            for y in range(k):
                s[y] += x * np.exp(0.0 - log_norm[y])
        else:
            for y in range(k):
                s[y] += x * 0.0


@numba.njit(cache=True)
def _score_with_masses(
    theta: np.ndarray,
    log_norm: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    grp: np.ndarray,
    m: int,
    s: np.ndarray,
    Q: np.ndarray,
    R: np.ndarray,
) -> None:
    """Entropy scores, as :func:`score_row` (the same sums in the same order), and every
    label's masses on the value groups ``Q[:m]`` and on the zero features ``R`` (Update III)."""
    k = s.shape[0]
    for y in range(k):
        s[y] = 0.0
    for g in range(m):
        for y in range(k):
            Q[g, y] = 0.0
    for p in range(idx.shape[0]):
        x = val[p]
        row = theta[idx[p]]
        q = Q[grp[p]]
        for y in range(k):
            w = np.exp(row[y] - log_norm[y])
            s[y] += x * w
            q[y] += w
    for y in range(k):
        R[y] = mass_off(theta, log_norm, idx, y, Q[:m, y])


@numba.njit(cache=True)
def _pick(s: np.ndarray, y: np.ndarray, relevant: bool, u: float) -> tuple[int, float]:
    """The relevant label of lowest score (``relevant``) or the irrelevant one of highest score,
    ties broken by the uniform ``u``; returns the label and its score (eq. 7)."""
    best = 0.0
    count = 0
    for c in range(s.shape[0]):
        if y[c] != relevant:
            continue
        v = s[c] if relevant else -s[c]
        if count == 0 or v < best:
            best = v
            count = 1
        elif v == best:
            count += 1
    pick = min(int(u * count), count - 1)
    for c in range(s.shape[0]):
        if y[c] == relevant and (s[c] if relevant else -s[c]) == best:
            if pick == 0:
                return c, s[c]
            pick -= 1
    return -1, 0.0  # unreachable: the mask is neither empty nor full


@numba.njit(cache=True)
def _advance_norm(st: State, label: int, h: float) -> None:
    """``log Z_label += h`` after ``theta_label`` moved, or its exact recomputation when the
    error bound ``norm_error[label]`` would pass :data:`NORM_ERROR_MAX` (module docstring)."""
    err = st.norm_error[label] + 4.0 * _ULP
    if h < 0.0:
        err *= np.exp(-h)
    if not err <= NORM_ERROR_MAX:  # or NaN
        st.log_norm[label] = log_norm_exact(st.theta, label)
        st.norm_error[label] = 0.0
    else:
        st.log_norm[label] += h
        st.norm_error[label] = err


@numba.njit(cache=True)
def _move(st: State, idx: np.ndarray, val: np.ndarray, label: int, a: float, h: float) -> None:
    """``theta_label <- theta_label + a x`` (eq. 6) and, under the entropy, its normaliser."""
    theta = st.theta
    for p in range(idx.shape[0]):
        theta[idx[p], label] += a * val[p]
    if st.entropy:
        _advance_norm(st, label, h)


@numba.njit(cache=True)
def _change(
    st: State,
    label: int,
    a: float,
    s: np.ndarray,
    norm2: float,
    Q: np.ndarray,
    R: np.ndarray,
    vals: np.ndarray,
    m: int,
    ebuf: np.ndarray,
) -> float:
    """``h_label(a) = G(theta_label + a x) - G(theta_label)`` (:mod:`olboost.rankers._dual`)."""
    if not st.entropy:
        return a * s[label] + 0.5 * a * a * norm2
    h, _, _ = entropy_change(a, Q, label, R[label], vals, m, ebuf, True)
    return h


@numba.njit(cache=True, inline="always")
def _log_ratio(a: float, b: float) -> float:
    """``log(a / b)`` for ``a, b >= 0``, infinite when one of them is 0."""
    if a <= 0.0:
        return -np.inf
    if b <= 0.0:
        return np.inf
    return np.log(a) - np.log(b)


@numba.njit(cache=True)
def _update_three(
    st: State,
    idx: np.ndarray,
    val: np.ndarray,
    y: np.ndarray,
    norm2: float,
    m: int,
    sr: float,
    sq: float,
    sc: Scratch,
) -> tuple[bool, float, float, int]:
    """Update III's step (eq. 10-11) once the scores ``sc.s`` (and, under the entropy, the
    masses ``sc.Q``, ``sc.R``) are known; ``sr``, ``sq``: the lowest relevant and highest
    irrelevant scores. Returns whether the interior point method gave a feasible, finite
    solution (if not, an example or parameters of extreme scale broke its arithmetic down, see
    :func:`trial`), its dual increase, ``sum_{y in Y} alpha_y`` and the number ``n`` of labels
    it moves: ``sc.act[:n]``, by ``sc.alpha[:n]``, their ``h`` in ``sc.changes[:n]``
    (:func:`_apply_three` applies it).

    Only the labels in a pair that violates the margin enter the solver: a relevant label
    scoring at least ``sq + gamma`` or an irrelevant one at most ``sr - gamma`` has
    ``alpha_y = 0`` at the optimum of eq. 11. (At the optimum every moved irrelevant label
    ends at a common score ``L`` below its own and every moved relevant label at
    ``L + gamma - zeta``, ``zeta >= 0`` the budget's multiplier, above its own: an irrelevant
    label below ``sr - gamma`` could only move if ``L + gamma - zeta < sr``, when no relevant
    label, hence none at all, would move; symmetrically for relevant labels. This screening is
    exact and leaves the problem of eq. 11 on fewer variables.)"""
    k = y.shape[0]
    gamma = st.margin
    n = 0
    for c in range(k):
        if (sc.s[c] < sq + gamma) if y[c] else (sc.s[c] > sr - gamma):
            sc.act[n] = c
            n += 1
    ysub, ssub, Rsub, lg = sc.ysub[:n], sc.ssub[:n], sc.Rsub[:n], sc.lg[:n]
    Qsub = sc.Qsub[: max(m, 1) * n].reshape((max(m, 1), n))
    for i in range(n):
        c = sc.act[i]
        ysub[i] = y[c]
        ssub[i] = sc.s[c]
        Rsub[i] = sc.R[c]
        for g in range(m):
            Qsub[g, i] = sc.Q[g, c]
        if st.entropy and m == 1:
            lg[i] = _log_ratio(sc.R[c], sc.Q[0, c])
    alpha = sc.alpha[: n + 1]
    work = sc.work[: _PDIP_ROWS * (n + 1)].reshape((_PDIP_ROWS, n + 1))
    its = pdip(
        ysub, gamma, st.C, st.entropy, ssub, norm2, Qsub, Rsub, sc.vals, m, lg, sc.ebuf, alpha,
        work,
    )  # fmt: skip
    st.pdip_hist[its] += 1
    for i in range(n):
        if not math.isfinite(alpha[i]):
            return False, 0.0, 0.0, n
    # eq. 11's equalities hold along the iterates in exact arithmetic (A Delta alpha = 0); in
    # floating point they drifted under the entropy with real-valued features and a large C
    # (1.5-3% of the updates at C = 300-600): sum alpha = 1.1 at C = 46.8, the budget exceeded,
    # a point outside the dual domain applied. Such an answer is refused as a breakdown.
    total = 0.0
    budget = 0.0
    for i in range(n):
        total += alpha[i]
        if ysub[i]:
            budget += alpha[i]
    slack = FEASIBILITY_TOL * st.C
    if not (abs(total) <= slack and budget <= st.C + slack):
        return False, 0.0, 0.0, n
    changes = sc.changes
    if st.entropy:
        for i in range(n):
            changes[i] = _change(st, i, alpha[i], ssub, norm2, Qsub, Rsub, sc.vals, m, sc.ebuf)
    else:
        for i in range(n):
            changes[i] = alpha[i] * ssub[i] + 0.5 * alpha[i] * alpha[i] * norm2
    gain = 0.0
    mass = 0.0
    for i in range(n):
        if ysub[i]:
            gain += gamma * alpha[i]
            mass += alpha[i]
        gain -= changes[i]
    if not math.isfinite(gain):
        return False, 0.0, 0.0, n
    return True, gain, mass, n


@numba.njit(cache=True)
def _apply_three(st: State, idx: np.ndarray, val: np.ndarray, n: int, sc: Scratch) -> None:
    """Apply the step :func:`_update_three` left in ``sc`` (eq. 6)."""
    act, alpha = sc.act, sc.alpha
    # feature by feature (the labels of a feature are contiguous in theta)
    for p in range(idx.shape[0]):
        row = st.theta[idx[p]]
        v = val[p]
        for i in range(n):
            row[act[i]] += alpha[i] * v
    if st.entropy:
        for i in range(n):
            _advance_norm(st, act[i], sc.changes[i])


@numba.njit(cache=True)
def _gain_two(st: State, r: int, q: int, loss: float, norm2: float, m: int, sc: Scratch) -> float:
    """The dual increase of Update II's step on the pair ``(r, q)`` (eq. 9), from the masses
    Update III's scores left in ``sc`` under the entropy."""
    if st.entropy:
        tau = update_two_entropy(st.margin, st.C, r, q, sc.Q, sc.R, sc.vals, m, sc.ebuf)
    else:
        tau = update_two_squared(loss, norm2, st.C)
    if not tau > 0.0:
        return 0.0
    s, Q, R = sc.s, sc.Q, sc.R
    return (
        st.margin * tau
        - _change(st, r, tau, s, norm2, Q, R, sc.vals, m, sc.ebuf)
        - _change(st, q, -tau, s, norm2, Q, R, sc.vals, m, sc.ebuf)
    )


@numba.njit(cache=True)
def trial(
    idx: np.ndarray,
    val: np.ndarray,
    y: np.ndarray,
    t: int,
    st: State,
    sc: Scratch,
) -> tuple[bool, bool, float]:
    """Trial ``t`` on the CSR row ``(idx, val)`` with relevant-label mask ``y``: the scores in
    ``sc.s``, then the update. Returns ``(mistake, updated, mass)``, ``mass`` being
    ``sum_{y in Y} alpha_{t,y}`` (the example's dual variables' total, ``sum tau_{t,r,s}``).

    An empty or full ``y`` has no pair: no mistake, no update.
    """
    s = sc.s
    k = s.shape[0]
    entropy = st.entropy
    update = st.update
    m = group_values(val, sc.grp, sc.vals) if entropy else 0
    if entropy and update == 3 and m > 0:
        _score_with_masses(st.theta, st.log_norm, idx, val, sc.grp, m, s, sc.Q, sc.R)
    else:
        score_row(st.theta, st.log_norm, entropy, idx, val, s)
    n_rel = 0
    for c in range(k):
        if y[c]:
            n_rel += 1
    if n_rel == 0 or n_rel == k:
        return False, False, 0.0
    # the most violated pair (eq. 7); ties between labels broken at random, pure in (seed, t)
    key = draw_key(st.tie_key, t, np.uint64(0))
    r, sr = _pick(s, y, True, counter_uniform(key, 0))
    q, sq = _pick(s, y, False, counter_uniform(key, 1))
    mistake = sr <= sq  # Sec. 1: a relevant label not strictly above an irrelevant one
    loss = st.margin - (sr - sq)  # eq. 1: the hinge loss, attained at the pair (r, q)
    C = st.C
    if update == 1:
        if not mistake:
            return False, False, 0.0
    elif loss <= 0.0:
        # Updates II and III: alpha = 0 is optimal when every pair meets the margin
        return mistake, False, 0.0
    if idx.shape[0] == 0:
        # x = 0: the weights cannot move; the dual still gains gamma C at tau = C
        return mistake, False, C
    norm2 = 0.0
    if not entropy:
        for p in range(val.shape[0]):
            norm2 += val[p] * val[p]
    if update == 3:
        solved, gain, mass, n = _update_three(st, idx, val, y, norm2, m, sr, sq, sc)
        # Update II's step on the most violated pair is a feasible point of eq. 11, so the
        # optimum gains at least as much (by the construction of eq. 10; Sec. 3 states it
        # against Update I's step, eq. 8, which the mistake bound rests on); the
        # solver's answer is within its tolerance of the optimum, which under the entropy with
        # a margin small against C exceeded the whole gain: III then never moved, mistake after
        # mistake. Where its answer gains less than II's step, or broke down in floating point
        # (a feature near MAX_ABS_FEATURE squares beyond the float range in its residuals, or
        # the answer left eq. 11's constraints by more than FEASIBILITY_TOL C), the example
        # gets II's step instead.
        if solved and gain > 0.0 and gain >= _gain_two(st, r, q, loss, norm2, m, sc):
            _apply_three(st, idx, val, n, sc)
            return mistake, True, mass
    Q, R = sc.Q, sc.R
    if entropy:
        label_masses(st.theta, st.log_norm, idx, sc.grp, m, r, Q, R)
        label_masses(st.theta, st.log_norm, idx, sc.grp, m, q, Q, R)
    if update == 1:
        tau = C  # eq. 8
    elif entropy:
        tau = update_two_entropy(st.margin, C, r, q, Q, R, sc.vals, m, sc.ebuf)
    else:
        tau = update_two_squared(loss, norm2, C)
    if tau <= 0.0:
        return mistake, False, 0.0
    _move(st, idx, val, r, tau, _change(st, r, tau, s, norm2, Q, R, sc.vals, m, sc.ebuf))
    _move(st, idx, val, q, -tau, _change(st, q, -tau, s, norm2, Q, R, sc.vals, m, sc.ebuf))
    return mistake, True, tau


@numba.njit(cache=True)
def scratch(k: int, widest: int) -> Scratch:
    """Buffers for trials with ``k`` labels and at most ``widest`` non-zero features."""
    return Scratch(
        np.empty(k),
        np.empty((widest, k)),
        np.empty(k),
        np.empty(widest, dtype=np.int64),
        np.empty(widest),
        np.empty(widest),
        np.empty(k + 1),
        np.empty(_PDIP_ROWS * (k + 1)),
        np.empty(k, dtype=np.int64),
        np.empty(k, dtype=np.bool_),
        np.empty(k),
        np.empty(widest * k),
        np.empty(k),
        np.empty(k),
        np.empty(k),
    )


@numba.njit(cache=True)
def learn_rows(
    data: np.ndarray,
    indices: np.ndarray,
    indptr: np.ndarray,
    Y: np.ndarray,
    t0: int,
    st: State,
    out: np.ndarray,
    return_scores: bool,
    mass: float,
) -> tuple[int, int, float]:
    """Trials ``t0 + 1, t0 + 2, ...`` on the rows of a canonical CSR matrix (sorted indices, no
    duplicates, no stored zeros) with relevant-label masks ``Y``; the scores made before each
    row is learned go to ``out`` if ``return_scores``. Returns the number of mistakes and of
    updates, and ``mass`` plus every trial's ``sum_{y in Y} alpha_{t,y}``, added in order."""
    n = indptr.shape[0] - 1
    k = Y.shape[1]
    widest = 1
    for i in range(n):
        widest = max(widest, indptr[i + 1] - indptr[i])
    sc = scratch(k, widest)
    mistakes = 0
    updates = 0
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        mistake, updated, m = trial(indices[lo:hi], data[lo:hi], Y[i], t0 + i + 1, st, sc)
        mistakes += mistake
        updates += updated
        mass += m
        if return_scores:
            for c in range(k):
                out[i, c] = sc.s[c]
    return mistakes, updates, mass


@numba.njit(cache=True)
def score_rows(
    data: np.ndarray,
    indices: np.ndarray,
    indptr: np.ndarray,
    theta: np.ndarray,
    log_norm: np.ndarray,
    entropy: bool,
    out: np.ndarray,
) -> None:
    """The scores of every row of a canonical CSR matrix, without learning."""
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        score_row(theta, log_norm, entropy, indices[lo:hi], data[lo:hi], out[i])


@numba.njit(cache=True)
def is_canonical(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray) -> bool:
    """Whether every row's indices are strictly increasing and no stored value is zero."""
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            if data[p] == 0.0:
                return False
            if p > indptr[i] and indices[p] <= indices[p - 1]:
                return False
    return True


@numba.njit(cache=True)
def _nonzeros(xs: np.ndarray, idx: np.ndarray, val: np.ndarray) -> int:
    """The non-zero entries of ``xs`` into ``idx``, ``val`` (a CSR row); returns their number."""
    m = 0
    for j in range(xs.shape[0]):
        if xs[j] != 0.0:
            idx[m] = j
            val[m] = xs[j]
            m += 1
    return m


@numba.njit(cache=True)
def _scale(x: np.ndarray, sg: Scaling, entropy: bool, xs: np.ndarray) -> None:
    scale_into(x, sg.scale, entropy, sg.lo, sg.hi, sg.count, sg.mean, sg.m2, xs)


@numba.njit(cache=True)
def learn_scaled_rows(
    X: np.ndarray,
    Y: np.ndarray,
    t0: int,
    st: State,
    sg: Scaling,
    out: np.ndarray,
    return_scores: bool,
    mass: float,
) -> tuple[int, int, float]:
    """:func:`learn_rows` on dense rows ``X`` under the running scaling ``sg``
    (:mod:`olboost.rankers._scaling`): each row's scores (to ``out`` if ``return_scores``) from
    the row scaled by the statistics so far, as :func:`score_scaled_rows` gives them; then the
    statistics move by the row, and its trial is on the row scaled by them."""
    n, d = X.shape
    k = Y.shape[1]
    xs = np.empty(d)
    idx = np.empty(d, dtype=np.int64)
    val = np.empty(d)
    sc = scratch(k, max(d, 1))
    mistakes = 0
    updates = 0
    for i in range(n):
        x = X[i]
        if return_scores:
            _scale(x, sg, st.entropy, xs)
            m = _nonzeros(xs, idx, val)
            score_row(st.theta, st.log_norm, st.entropy, idx[:m], val[:m], out[i])
        learn_scaling(x, sg.scale, sg.lo, sg.hi, sg.count, sg.mean, sg.m2)
        _scale(x, sg, st.entropy, xs)
        m = _nonzeros(xs, idx, val)
        mistake, updated, a = trial(idx[:m], val[:m], Y[i], t0 + i + 1, st, sc)
        mistakes += mistake
        updates += updated
        mass += a
    return mistakes, updates, mass


@numba.njit(cache=True)
def score_scaled_rows(
    X: np.ndarray,
    theta: np.ndarray,
    log_norm: np.ndarray,
    entropy: bool,
    sg: Scaling,
    out: np.ndarray,
) -> None:
    """The scores of the dense rows ``X``, each scaled by the statistics of ``sg`` (unchanged),
    without learning."""
    d = X.shape[1]
    xs = np.empty(d)
    idx = np.empty(d, dtype=np.int64)
    val = np.empty(d)
    for i in range(X.shape[0]):
        _scale(X[i], sg, entropy, xs)
        m = _nonzeros(xs, idx, val)
        score_row(theta, log_norm, entropy, idx[:m], val[:m], out[i])
