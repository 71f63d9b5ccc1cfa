"""Compiled steps of Adaboost.OLM (Jung, Goetz & Tewari 2017, Algorithm 2 and Appendix D).

Notation follows the paper: ``H[i]`` is the committee's distribution for weak learner ``i`` at
round ``t``, ``h^i`` the weak prediction the booster takes from it (the one-hot ``e_{l^i}`` of
Algorithm 2, or the distribution itself), ``alpha[i]`` the learner weight ``alpha^i_t``,
``s^i = s^{i-1} + alpha^i h^i`` the cumulative votes of expert ``i``, ``C^i`` the cost matrix at
``s^{i-1}`` (row = true label, column = prediction) and ``log_v[i] = log v^i_t`` the Hedge weight of
expert ``i`` (kept in log space so that it does not underflow).

Each surrogate loss has the form ``L^r(s) = sum_{l != r} phi(s(l) - s(r))``:

* ``LOGISTIC`` (eq. 8): ``phi(z) = log(1 + e^z)``;
* ``EXPONENTIAL`` (eq. 36): ``phi(z) = e^z``;
* ``SQUARE_HINGE`` (eq. 39): ``phi(z) = (z + 1)_+^2 / 2``;

and its cost matrix is the gradient, row by row: ``C(r, l) = phi'(s(l) - s(r))`` for ``l != r``
and ``C(r, r) = -sum_{l != r} C(r, l)`` (eq. 9, 37, 40).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from olboost.boosters._adaptive_kernels import hedge_draw, hedge_renormalise, ogd_step
from olboost.boosters._mbbm_kernels import expected_costs, pick_min
from olboost.losses.multiclass import (
    EXPONENTIAL,
    LOGISTIC,
    SQUARE_HINGE,
    olm_cost_matrix,
    olm_cost_row,
    olm_loss,
)
from olboost.losses.multiclass import dphi as _dphi

__all__ = [
    "State",
    "olm_score",
    "olm_step",
    "ova_score",
    "ova_step",
    "ada_ova_score",
    "ada_ova_step",
    "LOGISTIC",
    "EXPONENTIAL",
    "SQUARE_HINGE",
    "VOTE_ARGMAX",
    "VOTE_PROBA",
    "VOTE_EXPECTED_COST",
    "olm_loss",
    "olm_cost_row",
    "olm_cost_matrix",
    "olm_weak_vote",
    "olm_scores",
    "olm_update",
]

#: Codes of the ways a committee row becomes the weak prediction ``h^i``.
VOTE_ARGMAX, VOTE_PROBA, VOTE_EXPECTED_COST = 0, 1, 2


@numba.njit(cache=True, inline="always")
def _weak_label(p: np.ndarray, s_prev: np.ndarray, vote: int, loss: int, work: np.ndarray) -> int:
    """The label ``l`` of a one-hot weak prediction ``h^i = e_l`` (``VOTE_ARGMAX`` or
    ``VOTE_EXPECTED_COST``, see :func:`olm_weak_vote`)."""
    k = p.shape[0]
    best = 0
    if vote == VOTE_ARGMAX:
        for c in range(1, k):
            if p[c] > p[best]:
                best = c
        return best
    C = work[:k]
    expected = work[k]
    olm_cost_matrix(s_prev, loss, C)
    return pick_min(expected, -1.0, expected_costs(p, C, expected))


@numba.njit(cache=True, inline="always")
def olm_weak_vote(
    p: np.ndarray, s_prev: np.ndarray, vote: int, loss: int, out: np.ndarray, work: np.ndarray
) -> None:
    """The weak prediction ``h^i`` from the committee's distribution ``p`` for learner ``i``.

    ``VOTE_ARGMAX``: ``e_l`` with ``l`` the most probable label; ``VOTE_PROBA``: ``p`` itself;
    ``VOTE_EXPECTED_COST``: ``e_l`` with ``l = argmin_l sum_r p[r] C^i(r, l)``, the label of least
    expected cost under ``p`` with ``C^i`` the cost matrix at ``s_prev = s^{i-1}``. Ties go to the
    lowest label, costs within rounding of each other being tied
    (:func:`~olboost.boosters._mbbm_kernels.expected_costs`). ``work`` is ``(k + 1, k)`` scratch
    space (used by ``VOTE_EXPECTED_COST`` only).
    """
    k = p.shape[0]
    if vote == VOTE_PROBA:
        for c in range(k):
            out[c] = p[c]
        return
    best = _weak_label(p, s_prev, vote, loss, work)
    for c in range(k):
        out[c] = 0.0
    out[best] = 1.0


@numba.njit(cache=True, inline="always")
def _argmax(s: np.ndarray) -> int:
    best = 0
    for c in range(1, s.shape[0]):
        if s[c] > s[best]:
            best = c
    return best


@numba.njit(cache=True)
def olm_scores(
    H: np.ndarray, alpha: np.ndarray, expert: int, vote: int, loss: int, out: np.ndarray
) -> None:
    """Votes of expert ``expert`` (0-based): ``s^expert = sum_{j <= expert} alpha^j h^j``
    (Algorithm 2, line 7), written into ``out``."""
    k = H.shape[1]
    h = np.empty(k)
    work = np.empty((k + 1, k))
    for c in range(k):
        out[c] = 0.0
    for j in range(expert + 1):
        a = alpha[j]
        # with an argmax or proba vote a zero weight adds nothing; an expected-cost vote depends
        # on s^{j-1} only, which a zero weight leaves unchanged as well
        if a != 0.0:
            olm_weak_vote(H[j], out, vote, loss, h, work)
            for c in range(k):
                out[c] += a * h[c]


@numba.njit(cache=True)
def olm_update(
    H: np.ndarray,
    y: int,
    alpha: np.ndarray,
    log_v: np.ndarray,
    t: int,
    vote: int,
    loss: int,
    step: float,
    bound: float,
    hedge_rate: float,
    weights_out: np.ndarray,
    edge_num: np.ndarray,
    edge_den: np.ndarray,
    expert: int = -1,
    scores_out: np.ndarray | None = None,
) -> None:
    """One learning round of Adaboost.OLM once the true class ``y`` is revealed; in place.

    For ``i = 1..N`` (0-based ``i`` below), with ``s^0 = 0``:

    * ``C^i(y, .) = grad L^y(s^{i-1})`` (eq. 9 / 37 / 40) and the weak prediction ``h^i``;
    * weak learner ``i`` learns the true class with weight ``-C^i(y, y) / (k - 1)`` (Sec. 4.2),
      written to ``weights_out[i, y]`` (every other entry of row ``i`` is 0);
    * ``s^i = s^{i-1} + alpha^i_t h^i`` (line 7) with the weight used to predict;
    * projected online gradient descent (line 13):
      ``alpha^i_{t+1} = Pi(alpha^i_t - eta f'(alpha^i_t))`` with
      ``f'(alpha) = grad L^y(s^{i-1} + alpha h^i) . h^i`` (eq. 10 / 38 / 41 for one-hot ``h^i``),
      ``eta = step / sqrt(t)``, times ``e^{-(i+1)}`` for the exponential loss (App. D.1), ``Pi``
      the projection on ``[-bound, bound]``;
    * Hedge (line 15): ``v^i <- v^i exp(-hedge_rate 1[y != argmax s^i])`` (ties: lowest class);
    * the sums of the empirical edge ``gamma_i = sum_t C^i(y, .) . h^i / sum_t C^i(y, y)``
      (Sec. 4.2): ``edge_num[i] += C^i(y, .) . h^i`` and ``edge_den[i] += C^i(y, y)``.

    With ``scores_out``, the votes ``s^expert`` of expert ``expert`` before the update are also
    written there: the round builds ``s^i`` from this round's ``alpha^j`` before changing them,
    adding the same terms in the same order as :func:`olm_scores`, so they are bit for bit its
    result, without a second pass.
    """
    n, k = H.shape
    s = np.zeros(k)
    cost = np.empty(k)
    h = np.empty(k)
    work = np.empty((k + 1, k))
    olm_cost_row(s, y, loss, cost)
    eta = step / math.sqrt(t)
    one_hot = vote != VOTE_PROBA
    l = 0
    for i in range(n):
        if one_hot:
            # h^i = e_l: a dot product with h^i is one entry of the other vector (its other terms
            # are exact zeros for finite costs), and s^i differs from s^{i-1} in s(l) only.
            l = _weak_label(H[i], s, vote, loss, work)
            own = cost[l]
        else:
            olm_weak_vote(H[i], s, vote, loss, h, work)
            own = 0.0
            for c in range(k):
                own += cost[c] * h[c]
        for c in range(k):
            weights_out[i, c] = 0.0
        edge_num[i] += own
        edge_den[i] += cost[y]
        weights_out[i, y] = -cost[y] / (k - 1)
        a = alpha[i]
        if a != 0.0:
            # C^{i+1}(y, .) = grad L^y(s^i), also f''s gradient. A one-hot vote for l != y moves
            # s(l) only: only C(y, l) and the diagonal change (the others would be recomputed
            # from the same inputs, so skipping them changes no bit).
            if one_hot:
                s[l] += a
            else:
                for c in range(k):
                    s[c] += a * h[c]
            if one_hot and l != y:
                cost[l] = _dphi(s[l] - s[y], loss)
                diag = 0.0
                for c in range(k):
                    if c != y:
                        diag += cost[c]
                cost[y] = -diag
            else:
                olm_cost_row(s, y, loss, cost)
        if one_hot:
            grad = cost[l]
        else:
            grad = 0.0
            for c in range(k):
                grad += cost[c] * h[c]
        eta_i = eta * math.exp(-(i + 1.0)) if loss == EXPONENTIAL else eta
        alpha[i] = ogd_step(a, eta_i, grad, bound)
        if scores_out is not None:
            if i == expert:
                for c in range(k):
                    scores_out[c] = s[c]
        if _argmax(s) != y:
            log_v[i] -= hedge_rate
    hedge_renormalise(log_v)


# --------------------------------------------------------------------------------------------------
# Compiled steps for the driver (olboost.boosters._driver): Adaboost.OLM and its one-vs-all designs
# --------------------------------------------------------------------------------------------------

#: What the compiled steps of Adaboost.OLM read and update. One booster has ``(N,)`` arrays; the
#: one-vs-all design (:class:`~olboost.boosters.baselines.OvaAdaBoostOL`) runs ``B`` of them,
#: ``(B, N)``, booster ``b`` drawing its experts with ``hedge_keys[b]``.
State = namedtuple(
    "State",
    [
        "alpha",
        "log_v",
        "edge_num",
        "edge_den",
        "hedge_keys",  # (B,) uint64
        "sampled",
        "vote",
        "loss",
        "step_scale",
        "alpha_bound",
        "hedge_rate",
    ],
)


@numba.njit(cache=True)
def olm_score(H: np.ndarray, t: int, state: State, out: np.ndarray) -> None:
    """Votes of round ``t``: those of the expert Hedge draws (Algorithm 2, lines 7-11)."""
    expert = hedge_draw(state.log_v, state.hedge_keys[0], t, state.sampled)
    olm_scores(H, state.alpha, expert, state.vote, state.loss, out)


@numba.njit(cache=True)
def _olm_round(H, y, t, alpha, log_v, edge_num, edge_den, key, state, weights, scores, want):
    # every argument passed (expert -1 writes no scores), so olm_update compiles once
    expert = hedge_draw(log_v, key, t, state.sampled) if want else -1
    olm_update(
        H, y, alpha, log_v, t, state.vote, state.loss, state.step_scale, state.alpha_bound,
        state.hedge_rate, weights, edge_num, edge_den, expert, scores,
    )  # fmt: skip


@numba.njit(cache=True)
def olm_step(
    H: np.ndarray,
    y: int,
    t: int,
    state: State,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of Adaboost.OLM for true class ``y``: the votes of the drawn expert (if
    asked; computed in the update's pass, see :func:`olm_update`), then the update."""
    _olm_round(
        H, y, t, state.alpha, state.log_v, state.edge_num, state.edge_den, state.hedge_keys[0],
        state, weights, scores, return_scores,
    )  # fmt: skip
    return 0


@numba.njit(cache=True)
def ova_score(H: np.ndarray, t: int, state: State, out: np.ndarray) -> None:
    """One-vs-all votes: booster ``c`` (rows ``c N .. (c + 1) N - 1`` of ``H``, binary) gives the
    margin ``s_c(1) - s_c(0)`` of its expert of round ``t``."""
    n = state.alpha.shape[1]
    s = np.empty(2)
    for c in range(out.shape[0]):
        expert = hedge_draw(state.log_v[c], state.hedge_keys[c], t, state.sampled)
        olm_scores(H[c * n : (c + 1) * n], state.alpha[c], expert, state.vote, state.loss, s)
        out[c] = s[1] - s[0]


@numba.njit(cache=True)
def ova_step(
    H: np.ndarray,
    y: int,
    t: int,
    state: State,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of the ``B`` binary boosters, booster ``c`` learning label ``1[c == y]``."""
    n = state.alpha.shape[1]
    s = np.empty(2)
    for c in range(state.alpha.shape[0]):
        block = slice(c * n, (c + 1) * n)
        _olm_round(
            H[block], 1 if c == y else 0, t, state.alpha[c], state.log_v[c], state.edge_num[c],
            state.edge_den[c], state.hedge_keys[c], state, weights[block], s, return_scores,
        )  # fmt: skip
        if return_scores:
            scores[c] = s[1] - s[0]
    return 0


@numba.njit(cache=True)
def numpy_sum(a: np.ndarray) -> float:
    """``a.sum()`` of a contiguous float64 vector with NumPy's own summation order (pairwise, 8
    partial sums per block of at most 128), so that compiled code matches NumPy to the bit."""
    n = a.shape[0]
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        r = np.empty(8)
        for j in range(8):
            r[j] = a[j]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return numpy_sum(a[:n2]) + numpy_sum(a[n2:])


@numba.njit(cache=True)
def ova_groups(H: np.ndarray, k: int) -> np.ndarray:
    """``(N, k)`` class distributions of AdaOVA's weak learners: group ``i`` (rows ``i k .. i k +
    k - 1`` of the binary ``H``) gives its learners' probabilities of label 1, normalised
    (uniform when they are all 0)."""
    n = H.shape[0] // k
    P = np.empty((n, k))
    for i in range(n):
        for c in range(k):
            P[i, c] = H[i * k + c, 1]
        total = numpy_sum(P[i])
        for c in range(k):
            P[i, c] = P[i, c] / total if total > 0.0 else 1.0 / k
    return P


@numba.njit(cache=True)
def ada_ova_score(H: np.ndarray, t: int, state: State, out: np.ndarray) -> None:
    """AdaOVA's votes: Adaboost.OLM's over the groups' distributions (:func:`ova_groups`)."""
    olm_score(ova_groups(H, out.shape[0]), t, state, out)


@numba.njit(cache=True)
def ada_ova_step(
    H: np.ndarray,
    y: int,
    t: int,
    state: State,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of AdaOVA: Adaboost.OLM on the groups; when it gives weak learner ``i``
    weight ``w`` on ``y``, each binary learner ``(i, c)`` learns label ``1[c == y]`` with
    weight ``w``."""
    k = scores.shape[0]
    P = ova_groups(H, k)
    group_weights = np.empty_like(P)
    olm_step(P, y, t, state, group_weights, scores, return_scores)
    for i in range(P.shape[0]):
        w = group_weights[i, y]
        for c in range(k):
            weights[i * k + c, 0] = 0.0 if c == y else w
            weights[i * k + c, 1] = w if c == y else 0.0
    return 0
