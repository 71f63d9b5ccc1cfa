"""Compiled test-then-train loops: a booster and its committee over a whole stream, one call.

``Booster._stream`` runs predict, score, update and learn in Python for each row; with a
``VFDTCommittee`` the kernels behind those four steps take a few microseconds each, so the Python
glue between them (argument unboxing, small allocations, checks) costs as much again. The loops
here chain the same kernels, in the same order and on the same arrays, so the results are
bit-identical to the row-by-row path; the booster falls back to that path for anything a loop
does not cover.

A loop stops early, returning the row ``i`` it stopped at, when the committee needs more storage
to learn row ``i``: the booster has then already learned from row ``i`` (its update is done and
the committee's weights are in ``weights``), and the caller lets the committee learn them in
Python, which grows storage, before resuming at ``i + 1``.
"""

from __future__ import annotations

import numba
import numpy as np

from olboost._random import counter_uniform
from olboost.boosters._ada_olm_kernels import olm_update
from olboost.boosters._ada_olmr_kernels import choose_expert
from olboost.weak import _vfdt_kernels as K

__all__ = ["olm_vfdt_stream"]


@numba.njit(cache=True)
def olm_vfdt_stream(
    X: np.ndarray,
    y: np.ndarray,
    start: int,
    stop: int,
    t: int,
    scores_out: np.ndarray,
    return_scores: bool,
    committee: tuple,
    demand: np.ndarray,
    H: np.ndarray,
    weights: np.ndarray,
    alpha: np.ndarray,
    log_v: np.ndarray,
    hedge_key: np.uint64,
    sampled: bool,
    vote: int,
    loss: int,
    step: float,
    bound: float,
    hedge_rate: float,
    edge_num: np.ndarray,
    edge_den: np.ndarray,
) -> int:
    """Adaboost.OLM (Algorithm 2) over rows ``start .. stop - 1`` of ``X`` with a
    ``VFDTCommittee`` whose kernel arguments are ``committee`` (``VFDTCommittee._kernel_args``),
    ``t`` rows having been learned before ``start``.

    Per row: the committee's predictions ``H`` (:func:`K.predict`); if ``return_scores``, the
    votes of the expert drawn with ``counter_uniform(hedge_key, t + 1)`` into ``scores_out[i]``
    (as ``AdaBoostOLM._scores``), computed in the update's pass (:func:`olm_update`);
    the booster's update (:func:`olm_update`) and the committee's learning (:func:`K.learn`).
    Returns ``stop``, or the first row whose learning needs more storage (see the module
    docstring)."""
    learners, leaf_prediction, leaf_prior, nb_threshold = committee[:4]
    options, nodes, leaves, pools, work = committee[4:]
    for i in range(start, stop):
        x = X[i]
        K.predict(x, learners, leaf_prediction, leaf_prior, nb_threshold, nodes, leaves, H)
        t += 1
        if return_scores:
            expert = choose_expert(log_v, counter_uniform(hedge_key, t), sampled)
            olm_update(
                H, y[i], alpha, log_v, t, vote, loss, step, bound, hedge_rate, weights,
                edge_num, edge_den, expert, scores_out[i],
            )  # fmt: skip
        else:
            olm_update(
                H, y[i], alpha, log_v, t, vote, loss, step, bound, hedge_rate, weights,
                edge_num, edge_den,
            )  # fmt: skip
        status = K.learn(x, weights, learners, options, nodes, leaves, pools, work, demand)
        if status != K.LEARN_OK:
            return i
    return stop
