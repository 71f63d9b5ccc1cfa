"""Compiled steps of the top-k feedback boosters (Raman, Zhang, Jung & Tewari 2020).

Notation follows the paper: ``H[i]`` is weak prediction ``h^i_t`` over the ``m`` labels, ``s^i``
expert ``i``'s scores, ``k`` the number of labels shown. A round shows the top ``k`` of a
randomised ranking (:mod:`olboost.feedback._kernels`) and learns from the revealed relevance of
those ``k`` labels only: every update below takes ``shown`` (their indices, display order),
``rel`` (their relevance) and ``probs`` (their pair inclusion probabilities), never the relevant
set itself. The driver's step (:mod:`olboost.boosters._driver`) simulates a user from a full
relevant-label mask ``y`` and reads ``y`` at the shown labels only (:func:`_reveal`).

The draws of round ``t`` under a caller key ``extra`` use the uniforms ``counter_uniform(
draw_key(key, t, extra), j)``: ``j = 0`` draws Hedge's expert (Top-k Adaptive), ``j >= 1`` the
exploration.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from olboost._random import counter_uniform, draw_key
from olboost.boosters._ada_olmr_kernels import expert_scores
from olboost.boosters._adaptive_kernels import choose_expert, hedge_renormalise, ogd_step
from olboost.boosters._bmr_kernels import bmr_score
from olboost.feedback._kernels import (
    deterministic_ranking,
    randomise_ranking,
    shown_pair_probabilities,
)
from olboost.potentials._pairwise_kernels import _pairwise_core

__all__ = [
    "BBMState",
    "AdaptiveState",
    "topk_bbm_show",
    "topk_bbm_score",
    "topk_bbm_step",
    "topk_bbm_update",
    "topk_adaptive_show",
    "topk_adaptive_score",
    "topk_adaptive_step",
    "topk_adaptive_update",
]

#: What the compiled step of Top-k BBM reads and updates.
BBMState = namedtuple(
    "BBMState",
    [
        "tables",  # (N, 3, 2N) law tables of D = X_b - X_a under u_a^gamma, n = 0..N-1 draws
        "weight_max",  # (N,) largest max c^ - min c^ seen
        "key",  # uint64 key of the exploration draws
        "scheme",
        "rho",
        "k",
        "loss_code",
        "clip_probability",  # > 0: pair probabilities clipped to [p, 1 - p] (App. C.2); 0: off
    ],
)

#: What the compiled step of Top-k Adaptive reads and updates.
AdaptiveState = namedtuple(
    "AdaptiveState",
    [
        "alpha",  # (N,) learner weights
        "log_v",  # (N,) Hedge log-weights
        "edge_num",  # (N,) sums behind the empirical edges of eq. 5
        "edge_den",
        "key",  # uint64 key of the draws (Hedge's expert and the exploration)
        "sampled",
        "scheme",
        "rho",
        "k",
        "step_scale",
        "alpha_bound",
        "hedge_rate",
        "clip_gradient",  # > 0: |alpha gradient| clipped to it (App. C.2); 0: off
        "clip_probability",  # > 0: sigmoids and pair probabilities clipped to [p, 1 - p]
    ],
)


# ------------------------------------------------------------------------------ showing


@numba.njit(cache=True)
def _show(s, k, scheme, rho, key, ranking, probs) -> bool:
    """Randomise ``sigma(s)`` into ``ranking`` (uniforms ``j >= 1`` of ``key``) and write the
    shown labels' pair probabilities into ``probs``; returns whether it explored."""
    m = s.shape[0]
    det = np.empty(m, dtype=np.int64)
    deterministic_ranking(s, det)
    ranking[:] = det
    explored = randomise_ranking(ranking, k, scheme, rho, key, 1)
    shown_pair_probabilities(det, ranking[:k], scheme, rho, probs)
    return explored


@numba.njit(cache=True)
def _display_scores(ranking, out) -> None:
    """Scores whose order is the shown ranking: ``m - p`` at display position ``p``."""
    m = ranking.shape[0]
    for p in range(m):
        out[ranking[p]] = float(m - p)


@numba.njit(cache=True)
def _reveal(y, shown):
    """The simulated user's clicks: the relevance of the shown labels, and nothing else."""
    k = shown.shape[0]
    rel = np.empty(k, dtype=np.bool_)
    for j in range(k):
        rel[j] = y[shown[j]]
    return rel


@numba.njit(cache=True)
def _buffers(m, k):
    """Scores, ranking and pair probabilities of one show."""
    return np.empty(m), np.empty(m, dtype=np.int64), np.empty((k, k))


@numba.njit(cache=True)
def _simulated_clicks(ranking, y, k, scores, return_scores):
    """A simulated user's answer to a shown ranking (its display scores to ``scores`` if asked):
    the shown labels and their relevance, read from ``y``."""
    if return_scores:
        _display_scores(ranking, scores)
    shown = ranking[:k]
    return shown, _reveal(y, shown)


@numba.njit(cache=True)
def _has_pair(rel) -> bool:
    n_rel = 0
    for j in range(rel.shape[0]):
        if rel[j]:
            n_rel += 1
    return 0 < n_rel < rel.shape[0]


@numba.njit(cache=True)
def _clipped(p: float, clip: float) -> float:
    """App. C.2's clipping of a computed probability to ``[clip, 1 - clip]`` (none: ``clip``
    0)."""
    return min(1.0 - clip, max(clip, p)) if clip > 0.0 else p


@numba.njit(cache=True)
def _inverse(probs, clip):
    """Pair weights ``1 / Pr[a, b in T^k]`` (eq. 1) of the shown pairs, each probability first
    clipped to ``[clip, 1 - clip]`` when ``clip > 0`` (App. C.2: "all computed probabilities";
    the weights are then at most ``1 / clip``, and the estimates no longer unbiased)."""
    k = probs.shape[0]
    w = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            w[i, j] = 1.0 / _clipped(probs[i, j], clip)
    return w


# The helpers called once or twice per weak learner of a round (this one,
# estimated_logistic_cost and estimated_rank_loss) allocate nothing and are compiled without
# Numba's runtime: with it, a function counts a reference to each array it is given, in and out
# (an atomic operation each), at every call (perf, TopAda on yeast: the boosters' updates made
# about a third of the run's reference counting).
@numba.njit(cache=True, _nrt=False)
def _label_weights(cost, rel, shown, unshown_cost, has_unshown, weights, costs, i) -> float:
    """Each revealed relevant label ``l`` gets ``max_r c^[r] - c^[l]`` in ``weights[i]`` (App.
    C.2; the labels not shown all cost ``unshown_cost``); returns ``max c^ - min c^``. When
    ``costs`` has rows, the whole cost vector goes to ``costs[i]``."""
    c_max = unshown_cost if has_unshown else cost[0]
    c_min = c_max
    for j in range(cost.shape[0]):
        c_max = max(c_max, cost[j])
        c_min = min(c_min, cost[j])
    for label in range(weights.shape[1]):
        weights[i, label] = 0.0
    for j in range(cost.shape[0]):
        if rel[j]:
            weights[i, shown[j]] = c_max - cost[j]
    if costs.shape[0] > 0:
        for label in range(costs.shape[1]):
            costs[i, label] = unshown_cost
        for j in range(cost.shape[0]):
            costs[i, shown[j]] = cost[j]
    return c_max - c_min


# ------------------------------------------------------------------------------ Top-k BBM


@numba.njit(cache=True, nogil=True)
def topk_bbm_score(H: np.ndarray, t: int, state: BBMState, out: np.ndarray) -> None:
    """The last expert's scores ``s^N = h^1 + ... + h^N`` (Algorithm 2: ``alpha = 1``, ``i_t =
    N``)."""
    bmr_score(H, t, state, out)


@numba.njit(cache=True, nogil=True)
def topk_bbm_show(H, t, state, extra, scores, ranking, probs) -> bool:
    """Scores ``s^N`` and the randomised ranking of round ``t`` under caller key ``extra``
    (Algorithm 1, line 8), with the shown pairs' probabilities."""
    topk_bbm_score(H, t, state, scores)
    key = draw_key(state.key, t, extra)
    return _show(scores, state.k, state.scheme, state.rho, key, ranking, probs)


@numba.njit(cache=True, nogil=True)
def topk_bbm_update(H, shown, rel, probs, tables, loss_code, clip, weights, w_max, costs) -> None:
    """Learn from top-k feedback (Algorithm 2): for ``i = 1..N``, the estimated cost vector
    ``c^i[l] = Phi^^{N-i}(s^{i-1} + e_l)`` of eq. 3, the sum over the shown relevant ``a`` and
    shown irrelevant ``b`` of ``Lambda^{a,b,N-i}(s^{i-1} + e_l) / Pr[a, b in T^k]`` (a label not
    shown only moves pairs it is not in: its cost is ``Phi^^{N-i}(s^{i-1})``); the label weights
    of the revealed relevant labels; then ``s^i = s^{i-1} + h^i``. O(N k^2). The cost vectors
    go to ``costs`` (``(N, m)``) when it has rows. ``clip > 0``: the pair probabilities are
    clipped to ``[clip, 1 - clip]`` first (:func:`_inverse`)."""
    n, m = H.shape
    k = shown.shape[0]
    weights[:, :] = 0.0
    if costs.shape[0] > 0:
        costs[:, :] = 0.0
    if not _has_pair(rel):
        return  # no shown pair: every estimate is 0
    pair_w = _inverse(probs, clip)
    d_min = -(n - 1)
    s = np.zeros(k)
    cost = np.empty(k)
    for i in range(n):
        base = _pairwise_core(
            s, rel, tables[n - 1 - i], d_min, loss_code, pair_w, True, 1.0, True, cost
        )
        w = _label_weights(cost, rel, shown, base, m > k, weights, costs, i)
        if w > w_max[i]:
            w_max[i] = w
        for j in range(k):
            s[j] += H[i, shown[j]]


@numba.njit(cache=True, nogil=True)
def topk_bbm_step(H, y, t, state, weights, scores, return_scores) -> int:
    """Round ``t`` for the driver: show (the display scores if asked), reveal the shown labels'
    relevance from ``y``, learn."""
    s, ranking, probs = _buffers(H.shape[1], state.k)
    topk_bbm_show(H, t, state, np.uint64(0), s, ranking, probs)
    shown, rel = _simulated_clicks(ranking, y, state.k, scores, return_scores)
    topk_bbm_update(
        H, shown, rel, probs, state.tables, state.loss_code, state.clip_probability, weights,
        state.weight_max, np.empty((0, 0)),
    )  # fmt: skip
    return 0


# ------------------------------------------------------------------------------ Top-k Adaptive


@numba.njit(cache=True)
def _sigmoid(z: float, clip: float) -> float:
    e = math.exp(-abs(z))
    return _clipped((1.0 if z >= 0.0 else e) / (1.0 + e), clip)


@numba.njit(cache=True, _nrt=False)
def estimated_logistic_cost(s, rel, pair_w, clip, out) -> float:
    """Eq. 4: ``c^ = grad L^_log(s)`` over the shown labels (``s``, ``rel``, ``pair_w`` by display
    position), unnormalised: ``c^[a] = -sum_b w_ab sigma(s[b] - s[a])`` for a shown relevant ``a``,
    ``c^[b] = sum_a w_ab sigma(s[b] - s[a])`` for a shown irrelevant ``b`` (``sigma`` clipped to
    ``[clip, 1 - clip]`` when ``clip > 0``, App. C.2); returns the weight ``w^i[t]`` of eq. 5,
    estimated the same way (``sum w_ab sigma(s[b] - s[a])``)."""
    k = s.shape[0]
    out[:] = 0.0
    total = 0.0
    for a in range(k):
        if rel[a]:
            own = 0.0
            for b in range(k):
                if not rel[b]:
                    g = pair_w[a, b] * _sigmoid(s[b] - s[a], clip)
                    own -= g
                    out[b] += g
                    total += g
            out[a] = own
    return total


@numba.njit(cache=True, _nrt=False)
def estimated_rank_loss(s, rel, pair_w) -> float:
    """``L^_rnk(s)`` of Algorithm 3, line 14: ``sum w_ab 1(s[b] >= s[a])`` over the shown pairs."""
    k = s.shape[0]
    total = 0.0
    for a in range(k):
        if rel[a]:
            for b in range(k):
                if not rel[b] and s[b] >= s[a]:
                    total += pair_w[a, b]
    return total


@numba.njit(cache=True, nogil=True)
def topk_adaptive_score(H: np.ndarray, t: int, state: AdaptiveState, out: np.ndarray) -> None:
    """Scores of round ``t`` (no caller key): those of the expert Hedge draws (Algorithm 3, line
    7)."""
    _adaptive_scores(H, draw_key(state.key, t, np.uint64(0)), state, out)


@numba.njit(cache=True)
def _adaptive_scores(H, key, state, out) -> None:
    expert = choose_expert(state.log_v, counter_uniform(key, 0), state.sampled)
    expert_scores(H, state.alpha, expert, out)


@numba.njit(cache=True, nogil=True)
def topk_adaptive_show(H, t, state, extra, scores, ranking, probs) -> bool:
    """Hedge's expert and the randomised ranking of round ``t`` under caller key ``extra``."""
    key = draw_key(state.key, t, extra)
    _adaptive_scores(H, key, state, scores)
    return _show(scores, state.k, state.scheme, state.rho, key, ranking, probs)


@numba.njit(cache=True, nogil=True)
def topk_adaptive_update(H, shown, rel, probs, t, state, weights, costs) -> None:
    """Learn from top-k feedback (Algorithm 3), for ``i = 1..N``:

    * ``c^i = grad L^_log(s^{i-1})`` (eq. 4; zero on labels not shown), and the label weights
      ``max_r c^i[r] - c^i[l]`` of the revealed relevant labels;
    * the sums of the empirical edge (eq. 5): ``-c^i . h^i`` and ``w^i[t]``;
    * ``s^i = s^{i-1} + alpha^i h^i``; ``alpha^i <- Pi(alpha^i - eta_t g)`` with ``g = c^{i+1} .
      h^i`` the derivative of ``L^_log(s^{i-1} + alpha h^i)`` (clipped to ``[-clip_gradient,
      clip_gradient]`` when set, App. C.2), ``eta_t = step_scale / sqrt(t)`` (line 13);
    * Hedge: ``log v^i -= hedge_rate L^_rnk(s^i)`` (line 14).

    The cost vectors go to ``costs`` (``(N, m)``) when it has rows.
    """
    n, m = H.shape
    k = shown.shape[0]
    weights[:, :] = 0.0
    if costs.shape[0] > 0:
        costs[:, :] = 0.0
    if not _has_pair(rel):
        return  # no shown pair: every estimate, cost and gradient is 0
    clip_p = state.clip_probability
    pair_w = _inverse(probs, clip_p)
    s = np.zeros(k)
    cost = np.empty(k)
    w_cur = estimated_logistic_cost(s, rel, pair_w, clip_p, cost)
    eta = state.step_scale / math.sqrt(t)
    # the state's arrays taken out once: in the loop, each access counts a reference
    edge_num, edge_den, alpha, log_v = state.edge_num, state.edge_den, state.alpha, state.log_v
    for i in range(n):
        own = 0.0
        for j in range(k):
            own += cost[j] * H[i, shown[j]]
        edge_num[i] -= own
        edge_den[i] += w_cur
        _label_weights(cost, rel, shown, 0.0, m > k, weights, costs, i)
        a = alpha[i]
        for j in range(k):
            s[j] += a * H[i, shown[j]]
        w_cur = estimated_logistic_cost(s, rel, pair_w, clip_p, cost)
        grad = 0.0
        for j in range(k):
            grad += cost[j] * H[i, shown[j]]
        if state.clip_gradient > 0.0:
            grad = min(state.clip_gradient, max(-state.clip_gradient, grad))
        alpha[i] = ogd_step(a, eta, grad, state.alpha_bound)
        log_v[i] -= state.hedge_rate * estimated_rank_loss(s, rel, pair_w)
    hedge_renormalise(log_v)


@numba.njit(cache=True, nogil=True)
def topk_adaptive_step(H, y, t, state, weights, scores, return_scores) -> int:
    """Round ``t`` for the driver: show, reveal the shown labels' relevance from ``y``, learn."""
    s, ranking, probs = _buffers(H.shape[1], state.k)
    topk_adaptive_show(H, t, state, np.uint64(0), s, ranking, probs)
    shown, rel = _simulated_clicks(ranking, y, state.k, scores, return_scores)
    topk_adaptive_update(H, shown, rel, probs, t, state, weights, np.empty((0, 0)))
    return 0
