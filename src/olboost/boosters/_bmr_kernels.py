"""Compiled learning step of OnlineBMR (Jung & Tewari 2018, Algorithm 1 with Algorithm 2).

``H[i]`` is weak prediction ``h^i_t``; with ``alpha = 1`` the expert predictions are
``s^i = h^1 + ... + h^i``; ``tables[n]`` is the law table of ``D = X_r - X_l`` after ``n`` draws
from the baseline ``u_gamma^Y`` (:func:`olboost.potentials._pairwise_kernels.law_table_stack`).
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from olboost.boosters._label_groups import grouped_columns, relevant_weights
from olboost.potentials._pairwise_kernels import (
    _bmr_scale,
    _pairwise_core_inlined,
    counted_pairwise_costs,
    law_table_stack,
)

__all__ = [
    "COMPACT_FROM_LABELS",
    "State",
    "bmr_score",
    "bmr_step",
    "bmr_step_grouped",
    "new_stacks",
    "online_bmr_update",
    "grouped_update",
]

#: From this many labels on, a round works on the groups of labels that no weak learner tells
#: apart (:mod:`olboost.boosters._label_groups`), as Ada.OLMR's does
#: (:data:`olboost.boosters._ada_olmr_kernels.COMPACT_FROM_LABELS`; see :func:`grouped_update`);
#: below, every result is the label-by-label one, bit for bit.
COMPACT_FROM_LABELS = 256


@numba.njit(cache=True)
def online_bmr_update(
    H: np.ndarray,
    y: np.ndarray,
    tables: np.ndarray,
    d_min: int,
    loss_code: int,
    weights_out: np.ndarray,
    w_max: np.ndarray,
) -> None:
    """One learning round of OnlineBMR after ``Y_t`` (mask ``y``) is revealed, label by label
    (below :data:`COMPACT_FROM_LABELS` labels; :func:`grouped_update` from there on).

    For ``i = 1..N`` (0-based ``i`` below): the cost vector ``c^i[l] = phi^{N-i}(s^{i-1} + e_l)``
    (eq. 2), exact (:func:`olboost.potentials._pairwise_kernels.bmr_costs`); the weak learner's
    label weights ``max_l c^i[l] - c^i[l]`` on the relevant labels (the importance weights of
    the paper's experiments, Sec. 4; they are ``w^i[t] (1 - d^i_t[l])``, ``d`` the normalised
    costs of eq. 3); then ``s^i = s^{i-1} + h^i``. ``w_max[i]``
    keeps the largest ``w^i[t] = max c^i - min c^i`` seen, the running estimate of ``w^{i*}``.
    """
    n, k = H.shape
    s = np.zeros(k)
    cost = np.empty(k)
    # bmr_costs, written out with what does not depend on the learner taken out of the loop
    no_pair_weights = np.empty((0, 0), dtype=np.float64)
    scale = _bmr_scale(y)
    for i in range(n):
        if scale == 0.0:
            cost[:] = 0.0
        else:
            _pairwise_core_inlined(
                s, y, tables[n - 1 - i], d_min, loss_code, no_pair_weights, False, scale, True,
                cost,
            )  # fmt: skip
        c_max = cost.max()
        c_min = cost.min()
        if c_max - c_min > w_max[i]:
            w_max[i] = c_max - c_min
        for c in range(k):
            weights_out[i, c] = (c_max - cost[c]) if y[c] else 0.0
        for c in range(k):
            s[c] += H[i, c]


@numba.njit(cache=True)
def grouped_update(
    H: np.ndarray,
    y: np.ndarray,
    tables: np.ndarray,
    d_min: int,
    loss_code: int,
    weights_out: np.ndarray,
    w_max: np.ndarray,
) -> None:
    """The round of :func:`online_bmr_update` on one column per group of labels whose weak
    predictions are identical (:func:`olboost.boosters._label_groups.grouped_columns`), each
    group's pairs taken once and multiplied by its size; :func:`online_bmr_update` itself when
    the groups' hashes collided. The scores keep their bits, the costs (hence the weights)
    differ from the label-by-label ones by rounding only (tested against
    :func:`online_bmr_update`), in one round: over a stream the trees, learning those weights,
    can drift apart. The booster's round from :data:`COMPACT_FROM_LABELS` labels on (a
    function of ``k`` alone, so a seeded run is reproduced to the bit)."""
    first, count, Hc, yc = grouped_columns(H, y)
    if first.shape[0] == 0:
        online_bmr_update(H, y, tables, d_min, loss_code, weights_out, w_max)
        return
    _compact_update(H.shape[1], first, count, Hc, yc, tables, d_min, loss_code, weights_out, w_max)


@numba.njit(cache=True)
def _compact_update(k, first, count, Hc, yc, tables, d_min, loss_code, weights_out, w_max):
    """:func:`online_bmr_update` over ``k`` labels, on the groups of :func:`grouped_columns`."""
    n, n_groups = Hc.shape
    s = np.zeros(n_groups)
    cost = np.empty(n_groups)
    n_rel = 0
    for g in range(n_groups):
        if yc[g]:
            n_rel += 1
    n_pairs = n_rel * (k - n_rel)  # _bmr_scale's, from the groups
    scale = 0.0 if n_pairs == 0 else 1.0 / n_pairs
    for i in range(n):
        if scale == 0.0:
            cost[:] = 0.0
        else:
            counted_pairwise_costs(s, yc, count, tables[n - 1 - i], d_min, loss_code, scale, cost)
        c_max = cost.max()
        c_min = cost.min()
        if c_max - c_min > w_max[i]:
            w_max[i] = c_max - c_min
        relevant_weights(weights_out[i], first, yc, cost, c_max)
        for g in range(n_groups):
            s[g] += Hc[i, g]


#: What the compiled step of OnlineBMR reads and updates (``olboost.boosters._driver``).
State = namedtuple(
    "State",
    [
        "weight_max",  # (N,) largest w^i[t] seen
        "n_capped",  # (1,) int64: examples whose edge was capped
        "stacks",  # typed dict |Y| -> law tables of D for N - 1 draws (filled on first need)
        "gamma",
        "gamma_cap",
        "loss_code",
    ],
)


@numba.njit(cache=True)
def bmr_score(H: np.ndarray, t: int, state: State, out: np.ndarray) -> None:
    """The last expert's scores ``s^N = h^1 + ... + h^N`` (Algorithm 2: ``alpha = 1``, lines 1
    and 9; ``i_t = N``, line 6), summed learner by learner as NumPy's ``H.sum(axis=0)``."""
    n, k = H.shape
    for c in range(k):
        out[c] = H[0, c]
    for i in range(1, n):
        for c in range(k):
            out[c] += H[i, c]


@numba.njit(cache=True, inline="always")
def _law_tables(H, y, state, weights):
    """What :func:`bmr_step` needs before its update: ``(True, tables)``, the law tables of
    the example's edge, or ``(False, ...)`` with every weight set to 0 when ``Y`` is empty or
    full (no pair, every potential 0)."""
    n, k = H.shape
    n_rel = 0
    for c in range(k):
        if y[c]:
            n_rel += 1
    if n_rel == 0 or n_rel == k:
        weights[:, :] = 0.0
        return False, np.empty((0, 0, 0))
    gamma = state.gamma
    if gamma * n_rel > 1.0:
        gamma = state.gamma_cap / n_rel
    if gamma != state.gamma:
        state.n_capped[0] += 1
    if n_rel not in state.stacks:
        p_plus = (1.0 - gamma * n_rel) / k
        state.stacks[n_rel] = law_table_stack(n - 1, p_plus, p_plus + gamma)
    return True, state.stacks[n_rel]


@numba.njit(cache=True)
def bmr_step(
    H: np.ndarray,
    y: np.ndarray,
    t: int,
    state: State,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of OnlineBMR with exact potentials: the scores (if asked), then, unless ``Y``
    is empty or full (no pair, every potential 0), :func:`online_bmr_update` with the law tables
    of the example's edge ``gamma`` (``gamma_cap / |Y|`` when ``gamma |Y| > 1``) and
    ``u_gamma^Y``'s steps ``P(+1) = (1 - gamma |Y|) / k``, ``P(-1) = P(+1) + gamma``. Below
    :data:`COMPACT_FROM_LABELS` labels; :func:`bmr_step_grouped` from there on (two kernels,
    so that neither compiles the other's round: see
    :func:`olboost.boosters._ada_olmr_kernels.ada_olmr_step`)."""
    if return_scores:
        bmr_score(H, t, state, scores)
    ok, tables = _law_tables(H, y, state, weights)
    if ok:
        online_bmr_update(
            H, y, tables, -(H.shape[0] - 1), state.loss_code, weights, state.weight_max
        )
    return 0


@numba.njit(cache=True)
def bmr_step_grouped(
    H: np.ndarray,
    y: np.ndarray,
    t: int,
    state: State,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """:func:`bmr_step` with the update of :func:`grouped_update`."""
    if return_scores:
        bmr_score(H, t, state, scores)
    ok, tables = _law_tables(H, y, state, weights)
    if ok:
        grouped_update(H, y, tables, -(H.shape[0] - 1), state.loss_code, weights, state.weight_max)
    return 0


def new_stacks() -> Dict:
    """An empty ``|Y| -> law tables`` dict for :class:`State`."""
    return Dict.empty(key_type=types.int64, value_type=types.float64[:, :, ::1])
