"""Compiled steps of the baselines of the multiclass experiments (Jung, Goetz & Tewari 2017,
Sec. 5): the best single learner and Oza's online boosting with importance weights."""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from olboost.boosters._ada_olm_kernels import _argmax

__all__ = [
    "BestState",
    "OzaState",
    "best_score",
    "best_step",
    "oza_lambda_step",
    "oza_score",
    "oza_step",
]

#: The best single learner's state: prequential correct counts per learner.
BestState = namedtuple("BestState", ["correct"])
#: Oza's boosting: the weight of the examples each learner got right and wrong.
OzaState = namedtuple("OzaState", ["lambda_sc", "lambda_sw"])


@numba.njit(cache=True)
def best_score(H: np.ndarray, t: int, state: BestState, out: np.ndarray) -> None:
    """The distribution of the learner with the most correct predictions so far (lowest index on
    ties): follow the leader."""
    leader = _argmax(state.correct)
    for c in range(H.shape[1]):
        out[c] = H[leader, c]


@numba.njit(cache=True)
def best_step(
    H: np.ndarray,
    y: int,
    t: int,
    state: BestState,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t``: the leader's distribution (if asked), then every learner is judged on its
    prediction and learns ``y`` with weight 1."""
    if return_scores:
        best_score(H, t, state, scores)
    for i in range(H.shape[0]):
        if _argmax(H[i]) == y:
            state.correct[i] += 1
        for c in range(H.shape[1]):
            weights[i, c] = 0.0
        weights[i, y] = 1.0
    return 0


@numba.njit(cache=True)
def oza_lambda_step(
    lam: float, correct: bool, i: int, lambda_sc: np.ndarray, lambda_sw: np.ndarray
) -> float:
    """One step of Oza's weight update (Oza 2005, Fig. 2; River's ``AdaBoostClassifier``).

    If learner ``i`` classifies the example correctly, ``lambda_sc[i] += lam`` and the weight for
    the next learner is ``lam (sc + sw) / (2 sc)``, i.e. ``lam / (2 (1 - eps_i))``; otherwise
    ``lambda_sw[i] += lam`` and it is ``lam (sc + sw) / (2 sw)``, i.e. ``lam / (2 eps_i)``, with
    ``eps_i = sw / (sc + sw)`` taken after the increment. Updates ``lambda_sc``/``lambda_sw`` in
    place and returns the next ``lam``.
    """
    if correct:
        lambda_sc[i] += lam
        return lam * (lambda_sc[i] + lambda_sw[i]) / (2.0 * lambda_sc[i])
    lambda_sw[i] += lam
    return lam * (lambda_sc[i] + lambda_sw[i]) / (2.0 * lambda_sw[i])


@numba.njit(cache=True)
def oza_vote_weights(state: OzaState, out: np.ndarray) -> None:
    """The weight of each learner's vote, ``log((1 - eps_i) / eps_i)`` for ``eps_i < 1/2``, 0
    otherwise or before learner ``i`` is judged; when some learners were never wrong, one vote
    each for them alone (the limit as ``eps_i -> 0``)."""
    sc, sw = state.lambda_sc, state.lambda_sw
    n = sc.shape[0]
    perfect = False
    for i in range(n):
        if sw[i] == 0.0 and sc[i] > 0.0:
            perfect = True
    for i in range(n):
        total = sc[i] + sw[i]
        if perfect:
            out[i] = 1.0 if (sw[i] == 0.0 and sc[i] > 0.0) else 0.0
        elif total > 0.0 and sw[i] / total < 0.5:
            eps = sw[i] / total
            out[i] = math.log((1.0 - eps) / eps)
        else:
            out[i] = 0.0


@numba.njit(cache=True)
def oza_score(H: np.ndarray, t: int, state: OzaState, out: np.ndarray) -> None:
    """Oza's weighted hard vote: learner ``i`` gives its vote weight to its argmax class."""
    w = np.empty(H.shape[0])
    oza_vote_weights(state, w)
    for c in range(H.shape[1]):
        out[c] = 0.0
    for i in range(H.shape[0]):
        out[_argmax(H[i])] += w[i]


@numba.njit(cache=True)
def oza_step(
    H: np.ndarray,
    y: int,
    t: int,
    state: OzaState,
    weights: np.ndarray,
    scores: np.ndarray,
    return_scores: bool,
) -> int:
    """Round ``t`` of Oza's boosting judged before learning (``judge="before"``): ``lam = 1``;
    learner ``i`` learns ``y`` with weight ``lam``, then ``lam`` follows :func:`oza_lambda_step`
    on learner ``i``'s prediction made before learning."""
    if return_scores:
        oza_score(H, t, state, scores)
    lam = 1.0
    for i in range(H.shape[0]):
        for c in range(H.shape[1]):
            weights[i, c] = 0.0
        weights[i, y] = lam
        lam = oza_lambda_step(lam, _argmax(H[i]) == y, i, state.lambda_sc, state.lambda_sw)
    return 0
