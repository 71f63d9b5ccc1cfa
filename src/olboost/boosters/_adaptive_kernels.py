"""Compiled pieces shared by the adaptive boosters (Ada.OLMR, Adaboost.OLM and its one-vs-all
designs): Hedge over the ``N`` experts and projected online gradient descent on the learner
weights ``alpha``.

Both adaptive algorithms (Jung, Goetz & Tewari 2017, Algorithm 2; Jung & Tewari 2018,
Algorithm 3) keep one Hedge weight ``v^i`` per expert ``s^i = sum_{j <= i} alpha^j h^j``, predict
with an expert drawn from Hedge's distribution, multiply ``v^i`` by ``exp(-rate loss^i)`` once the
truth is revealed, and move ``alpha^i`` by a projected gradient step. Hedge weights are kept in
log space (``log_v``): ``v`` shrinks by up to ``e^{-1}`` per round and would underflow within a few
thousand rounds.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost._random import counter_uniform

__all__ = ["choose_expert", "hedge_draw", "hedge_renormalise", "ogd_step"]


@numba.njit(cache=True)
def choose_expert(log_v: np.ndarray, u: float, sampled: bool) -> int:
    """Draw ``i`` with ``P(i) ∝ v_i`` by inversion of ``u`` in [0, 1) (Algorithm 3, line 6 of
    Jung & Tewari 2018; Algorithm 2, line 10 of Jung, Goetz & Tewari 2017).

    With ``sampled=False`` the expert of largest Hedge weight (lowest index on ties) is returned,
    a deterministic variant the papers do not analyse.
    """
    n = log_v.shape[0]
    best = 0
    for i in range(1, n):
        if log_v[i] > log_v[best]:
            best = i
    if not sampled:
        return best
    m = log_v[best]
    v = np.empty(n)
    total = 0.0
    for i in range(n):
        v[i] = math.exp(log_v[i] - m)
        total += v[i]
    target = u * total
    acc = 0.0
    for i in range(n):
        acc += v[i]
        if target < acc:
            return i
    return n - 1


@numba.njit(cache=True)
def hedge_draw(log_v: np.ndarray, key: np.uint64, t: int, sampled: bool) -> int:
    """The expert of round ``t``, drawn with the uniform ``counter_uniform(key, t)``: a pure
    function of the seed and the round, so scoring never changes the model."""
    return choose_expert(log_v, counter_uniform(key, t), sampled)


@numba.njit(cache=True, inline="always")
def ogd_step(alpha: float, eta: float, grad: float, bound: float) -> float:
    """Projected online gradient descent on one learner weight:
    ``Pi(alpha - eta grad)``, ``Pi`` the projection on ``[-bound, bound]`` (Jung, Goetz &
    Tewari 2017, Algorithm 2, line 13; Jung & Tewari 2018, Algorithm 3, line 9)."""
    return min(bound, max(-bound, alpha - eta * grad))


@numba.njit(cache=True)
def hedge_renormalise(log_v: np.ndarray) -> None:
    """Shift the log-weights so the largest is 0: the distribution is unchanged and the values
    stay bounded."""
    m = log_v.max()
    for i in range(log_v.shape[0]):
        log_v[i] -= m
