"""Compiled steps of Ada.OLMR (Jung & Tewari 2018, Algorithm 1 with the details of Algorithm 3).

Notation follows the paper: ``H[i]`` is weak prediction ``h^i_t``, ``alpha[i]`` the learner weight
``alpha^i_t``, ``s^i = sum_{j <= i} alpha[j] H[j]`` the prediction of expert ``i``, ``cost`` the
cost vector ``c^i_t`` (eq. 8), and ``log_v[i] = log v^i_t`` the Hedge weight of expert ``i``
(:mod:`olboost.boosters._adaptive_kernels`).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from olboost.boosters._adaptive_kernels import hedge_draw, hedge_renormalise, ogd_step
from olboost.boosters._label_groups import grouped_columns, relevant_weights
from olboost.losses.logistic import counted_logistic_cost, grouped_logistic_cost
from olboost.losses.pairwise import counted_rank_loss, rank_loss_mask

__all__ = [
    "COMPACT_FROM_LABELS",
    "State",
    "expert_scores",
    "ada_olmr_score",
    "ada_olmr_step",
    "ada_olmr_step_grouped",
    "ada_olmr_update",
    "grouped_update",
]

#: From this many labels on, a round works on the groups of labels that no weak learner tells
#: apart (:mod:`olboost.boosters._label_groups`): its cost follows the labels that occur, and
#: its results equal the label-by-label ones up to rounding (see :func:`grouped_update`).
#: Below, every result is the label-by-label one, bit for bit.
COMPACT_FROM_LABELS = 256

#: What the compiled step of Ada.OLMR reads and updates (``olboost.boosters._driver``).
State = namedtuple(
    "State",
    [
        "alpha",  # (N,) learner weights
        "log_v",  # (N,) Hedge log-weights
        "edge_num",  # (N,) sums behind the empirical edges of eq. 10
        "edge_den",  # (N,)
        "hedge_key",  # uint64 key of Hedge's draws
        "sampled",  # draw the expert (the paper) or take the heaviest one
        "step_scale",
        "alpha_bound",
        "hedge_rate",
    ],
)


@numba.njit(cache=True)
def expert_scores(H: np.ndarray, alpha: np.ndarray, expert: int, out: np.ndarray) -> None:
    """Prediction of expert ``expert`` (0-based): ``s = sum_{j <= expert} alpha_j h_j``
    (Algorithm 1, line 5)."""
    k = H.shape[1]
    for c in range(k):
        out[c] = 0.0
    for j in range(expert + 1):
        a = alpha[j]
        if a != 0.0:
            for c in range(k):
                out[c] += a * H[j, c]


@numba.njit(cache=True)
def ada_olmr_score(H: np.ndarray, t: int, state: State, out: np.ndarray) -> None:
    """Scores of round ``t``: those of the expert Hedge draws for it (Algorithm 3, line 6;
    Algorithm 1, lines 5 and 7)."""
    expert = hedge_draw(state.log_v, state.hedge_key, t, state.sampled)
    expert_scores(H, state.alpha, expert, out)


@numba.njit(cache=True)
def ada_olmr_step(
    H: np.ndarray,
    y: np.ndarray,
    t: int,
    state: State,
    weights_out: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of Ada.OLMR for the driver: the scores (if asked), then the update of
    :func:`ada_olmr_update` for the relevant-label mask ``y`` (fewer than
    :data:`COMPACT_FROM_LABELS` labels; :func:`ada_olmr_step_grouped` from there on). Two
    kernels, chosen by the booster, rather than one with both branches: a kernel compiles every
    function it may call, and the grouped round added 4 s to the cold start of every model."""
    if return_scores:
        ada_olmr_score(H, t, state, scores)
    ada_olmr_update(
        H, y, state.alpha, state.log_v, t, state.step_scale, state.alpha_bound,
        state.hedge_rate, weights_out, state.edge_num, state.edge_den,
    )  # fmt: skip
    return 0


@numba.njit(cache=True)
def ada_olmr_step_grouped(
    H: np.ndarray,
    y: np.ndarray,
    t: int,
    state: State,
    weights_out: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """:func:`ada_olmr_step` with the update of :func:`grouped_update` (from
    :data:`COMPACT_FROM_LABELS` labels on)."""
    if return_scores:
        ada_olmr_score(H, t, state, scores)
    grouped_update(
        H, y, state.alpha, state.log_v, t, state.step_scale, state.alpha_bound,
        state.hedge_rate, weights_out, state.edge_num, state.edge_den,
    )  # fmt: skip
    return 0


@numba.njit(cache=True)
def ada_olmr_update(
    H: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    log_v: np.ndarray,
    t: int,
    step_scale: float,
    alpha_bound: float,
    hedge_rate: float,
    weights_out: np.ndarray,
    edge_num: np.ndarray,
    edge_den: np.ndarray,
) -> None:
    """One learning round of Ada.OLMR after ``Y_t`` (mask ``y``) is revealed, label by label;
    updates in place (below :data:`COMPACT_FROM_LABELS` labels; :func:`grouped_update` from
    there on).

    For ``i = 1..N`` (0-based ``i`` below):

    * cost vector ``c^i = grad L_log^Y(s^{i-1})`` (eq. 8), and the weak learner's label weights
      ``max_l c^i[l] - c^i[l]`` on the relevant labels (the importance weights of the paper's
      experiments, Sec. 4), written to ``weights_out[i]``;
    * ``s^i = s^{i-1} + alpha^i_t h^i`` with the weight used for the prediction;
    * projected online gradient descent on ``f(alpha) = L_log(s^{i-1} + alpha h^i)`` with
      ``f'(alpha^i_t) = c^{i+1} . h^i`` and step ``step_scale / sqrt(t)``, projected on
      ``[-alpha_bound, alpha_bound]`` (Algorithm 3, line 9; the paper uses 1/sqrt(t) and [-2, 2]);
    * Hedge: ``v^i <- v^i exp(-hedge_rate L_rnk^Y(s^i))`` (Algorithm 3, line 13; the paper uses 1);
    * the sums behind the empirical edge of eq. 10: ``edge_num[i] += -c^i . h^i`` and
      ``edge_den[i] += w^i[t] = ||c^i||_1 / 2`` (eq. 9).
    """
    n, k = H.shape
    s = np.zeros(k)
    cost = np.empty(k)
    # whether grouping equal scores still pays: once it did not, the experts' scores, each
    # adding a weak prediction, only differ more (the same bits either way); np.bool_(True), not
    # the literal True, for which Numba would compile the cost a second time (its literal type)
    w_cur, groups = grouped_logistic_cost(s, y, cost, np.bool_(True))
    eta = step_scale / math.sqrt(t)
    for i in range(n):
        own = 0.0
        for c in range(k):
            own += cost[c] * H[i, c]
        edge_num[i] -= own
        edge_den[i] += w_cur
        c_max = cost[0]
        for c in range(1, k):
            if cost[c] > c_max:
                c_max = cost[c]
        for c in range(k):
            weights_out[i, c] = (c_max - cost[c]) if y[c] else 0.0
        a = alpha[i]
        for c in range(k):
            s[c] += a * H[i, c]
        w_cur, groups = grouped_logistic_cost(s, y, cost, groups)
        grad = 0.0
        for c in range(k):
            grad += cost[c] * H[i, c]
        alpha[i] = ogd_step(a, eta, grad, alpha_bound)
        log_v[i] -= hedge_rate * rank_loss_mask(s, y)
    hedge_renormalise(log_v)


@numba.njit(cache=True)
def grouped_update(
    H: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    log_v: np.ndarray,
    t: int,
    step_scale: float,
    alpha_bound: float,
    hedge_rate: float,
    weights_out: np.ndarray,
    edge_num: np.ndarray,
    edge_den: np.ndarray,
) -> None:
    """The round of :func:`ada_olmr_update` on one column per group of labels whose weak
    predictions are identical (:func:`olboost.boosters._label_groups.grouped_columns`), each
    group's terms taken once and multiplied by its size, the sigmoids from an exp in vector code
    (:func:`olboost.losses.logistic.counted_logistic_cost`); :func:`ada_olmr_update` itself
    when the groups' hashes collided. The scores and the rank losses keep their bits, while the
    costs, the weights ``w[t]`` and the dot products ``c . h^i`` (hence ``alpha``) differ from
    the label-by-label ones by rounding only, about ``k 2^-53`` times the sum of their terms'
    sizes (tested against :func:`ada_olmr_update`), in one round: over a stream the two can
    drift apart, a last-bit difference of ``alpha`` deciding a tie of two scores (half an error
    in the rank loss, hence Hedge's weights) otherwise. The booster's round from
    :data:`COMPACT_FROM_LABELS` labels on (the path a booster takes is a function of ``k``
    alone, so a seeded run is reproduced to the bit)."""
    first, count, Hc, yc = grouped_columns(H, y)
    if first.shape[0] == 0:
        ada_olmr_update(
            H, y, alpha, log_v, t, step_scale, alpha_bound, hedge_rate, weights_out, edge_num,
            edge_den,
        )  # fmt: skip
        return
    _compact_update(
        H.shape[1], first, count, Hc, yc, alpha, log_v, t, step_scale, alpha_bound, hedge_rate,
        weights_out, edge_num, edge_den,
    )  # fmt: skip


@numba.njit(cache=True)
def _compact_update(
    k, first, count, Hc, yc, alpha, log_v, t, step_scale, alpha_bound, hedge_rate, weights_out,
    edge_num, edge_den,
):  # fmt: skip
    """:func:`ada_olmr_update` over ``k`` labels, on the groups of :func:`grouped_columns`."""
    n, n_groups = Hc.shape
    n_rel = 0
    for g in range(n_groups):
        if yc[g]:
            n_rel += 1
    n_pairs = n_rel * (k - n_rel)
    s = np.zeros(n_groups)
    cost = np.empty(n_groups)
    w_cur = counted_logistic_cost(s, yc, count, n_pairs, cost)
    eta = step_scale / math.sqrt(t)
    for i in range(n):
        own = 0.0
        for g in range(n_groups):
            own += count[g] * cost[g] * Hc[i, g]
        edge_num[i] -= own
        edge_den[i] += w_cur
        c_max = cost[0]
        for g in range(1, n_groups):
            if cost[g] > c_max:
                c_max = cost[g]
        relevant_weights(weights_out[i], first, yc, cost, c_max)
        a = alpha[i]
        for g in range(n_groups):
            s[g] += a * Hc[i, g]
        w_cur = counted_logistic_cost(s, yc, count, n_pairs, cost)
        grad = 0.0
        for g in range(n_groups):
            grad += count[g] * cost[g] * Hc[i, g]
        alpha[i] = ogd_step(a, eta, grad, alpha_bound)
        log_v[i] -= hedge_rate * counted_rank_loss(s, yc, count, n_pairs)
    hedge_renormalise(log_v)
