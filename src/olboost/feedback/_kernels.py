"""Compiled kernels of top-k feedback (Raman, Zhang, Jung & Tewari 2020, Sec. 2.2 and App. B.1).

Rankings are int64 arrays of label indices, best first. ``scheme`` is :data:`UNIFORM` or
:data:`SINGLE_SWAP`; the random numbers of one draw are ``counter_uniform(key, j)``, ``j = 0, 1,
...`` (:func:`olboost._random.draw_key` gives ``key`` from the model's seed, the round and a caller
key), so a draw is a pure function of them. No input is validated here: :mod:`.exploration` and
the boosters do that.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost._random import counter_uniform

__all__ = [
    "UNIFORM",
    "SINGLE_SWAP",
    "TOPK_RANK",
    "TOPK_HINGE",
    "TOPK_LOGISTIC",
    "deterministic_ranking",
    "randomise_ranking",
    "pair_probability",
    "shown_pair_probabilities",
    "topk_pair_loss",
    "estimate_pairwise",
]

UNIFORM = 0
SINGLE_SWAP = 1

#: Pair-function codes of the unbiased estimator, ``f`` of ``x = s[b] - s[a]`` (``a`` relevant,
#: ``b`` irrelevant), as Raman et al. define them (Sec. 2.2, 3.3): the unweighted rank loss
#: ``1(s[a] <= s[b])`` (a tie is an error), the hinge ``(1 + x)_+`` and the logistic
#: ``log(1 + e^x)``.
TOPK_RANK = 0
TOPK_HINGE = 1
TOPK_LOGISTIC = 2


@numba.njit(cache=True)
def deterministic_ranking(s: np.ndarray, out: np.ndarray) -> None:
    """``sigma(s)`` (Sec. 2): labels by decreasing score, a tie going to the smaller label."""
    order = np.argsort(-s, kind="mergesort")
    for i in range(s.shape[0]):
        out[i] = order[i]


@numba.njit(cache=True)
def _uniform_below(u: float, n: int) -> int:
    # floor(u n) for u in [0, 1), kept below n against rounding up
    j = int(u * n)
    return j if j < n else n - 1


@numba.njit(cache=True)
def randomise_ranking(
    ranking: np.ndarray, k: int, scheme: int, rho: float, key: np.uint64, first: int
) -> bool:
    """Randomise ``ranking`` in place from the uniforms ``counter_uniform(key, first + j)``;
    returns whether it explored.

    With probability ``1 - rho`` (``u_0 >= rho``) the ranking stays. Otherwise

    * ``UNIFORM`` (Sec. 2.2): a uniformly random permutation (Fisher-Yates);
    * ``SINGLE_SWAP`` (App. B.1): a label drawn uniformly from the top ``k`` swaps places with
      one drawn uniformly from below rank ``k``, twice in succession (no change when ``k = m``).
    """
    m = ranking.shape[0]
    if counter_uniform(key, first) >= rho:
        return False
    if scheme == UNIFORM:
        for i in range(m - 1, 0, -1):
            j = _uniform_below(counter_uniform(key, first + m - i), i + 1)
            ranking[i], ranking[j] = ranking[j], ranking[i]
        return True
    if m > k:
        for swap in range(2):
            a = _uniform_below(counter_uniform(key, first + 1 + 2 * swap), k)
            b = k + _uniform_below(counter_uniform(key, first + 2 + 2 * swap), m - k)
            ranking[a], ranking[b] = ranking[b], ranking[a]
    return True


@numba.njit(cache=True)
def pair_probability(
    scheme: int, rho: float, m: int, k: int, a_on_top: bool, b_on_top: bool
) -> float:
    """``Pr[a, b in T^k(r~)]`` for two distinct labels, given whether each is in the top ``k`` of
    the deterministic ranking ``r`` (set ``V``); exact.

    Uniform (Sec. 2.2): ``(1 - rho) 1(a, b in V) + rho k (k - 1) / (m (m - 1))``.

    Single swap (App. B.1), with ``K = k``, ``M = m - k`` and the swaps ``(a_1 in V, b_1 notin
    V)`` then ``(a_2 in V^, b_2 notin V^)``, each pair uniform: when exploring, two labels of
    ``V`` both stay on top if neither is swapped out (``((K - 2) / K)^2``) or if one is swapped
    out and straight back in while the other stays (``2 (K - 1) / (K^2 M)``); a label of ``V``
    and one below end on top together through three disjoint histories, ``(K - 1) (1 + (K - 2) M
    + (K - 1)(M - 1)) / (K^2 M^2)``; two labels below both come up only if each swap brings up
    one of them and the second swap does not send the first back, ``2 (K - 1) / (K M^2)`` (the
    value of Lemma 10's proof). Without exploring the top set is ``V``.
    """
    both = a_on_top and b_on_top
    base = (1.0 - rho) if both else 0.0
    if k >= m:
        return 1.0
    if scheme == UNIFORM:
        return base + rho * (k * (k - 1.0)) / (m * (m - 1.0))
    K = float(k)
    M = float(m - k)
    if both:
        explored = ((K - 2.0) / K) ** 2 + 2.0 * (K - 1.0) / (K * K * M)
    elif a_on_top or b_on_top:
        explored = (K - 1.0) * (1.0 + (K - 2.0) * M + (K - 1.0) * (M - 1.0)) / (K * K * M * M)
    else:
        explored = 2.0 * (K - 1.0) / (K * M * M)
    return base + rho * explored


@numba.njit(cache=True)
def shown_pair_probabilities(
    deterministic: np.ndarray,
    shown: np.ndarray,
    scheme: int,
    rho: float,
    out: np.ndarray,
) -> None:
    """``out[i, j] = Pr[shown[i], shown[j] in T^k(r~)]`` for the ``k`` shown labels (the logged
    propensities of an impression), from the deterministic ranking the draw started from; the
    diagonal is 1 (unused)."""
    m = deterministic.shape[0]
    k = shown.shape[0]
    on_top = np.zeros(m, dtype=np.bool_)
    for i in range(k):
        on_top[deterministic[i]] = True
    for i in range(k):
        out[i, i] = 1.0
        for j in range(i + 1, k):
            p = pair_probability(scheme, rho, m, k, on_top[shown[i]], on_top[shown[j]])
            out[i, j] = p
            out[j, i] = p


@numba.njit(cache=True)
def topk_pair_loss(x: float, code: int) -> float:
    """``f`` of one pair at ``x = s[b] - s[a]`` (see the codes above)."""
    if code == TOPK_RANK:
        return 1.0 if x >= 0.0 else 0.0
    if code == TOPK_HINGE:
        return max(0.0, 1.0 + x)
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@numba.njit(cache=True)
def estimate_pairwise(
    s_shown: np.ndarray, relevant: np.ndarray, probs: np.ndarray, code: int
) -> float:
    """The unbiased estimate of eq. 1 from the shown labels only: ``sum_{a, b} f(s[a], s[b]) /
    Pr[a, b in T^k]`` over the shown relevant ``a`` and shown irrelevant ``b`` (``s_shown``,
    ``relevant`` and ``probs`` indexed by display position)."""
    k = s_shown.shape[0]
    total = 0.0
    for i in range(k):
        if relevant[i]:
            for j in range(k):
                if not relevant[j]:
                    total += topk_pair_loss(s_shown[j] - s_shown[i], code) / probs[i, j]
    return total
