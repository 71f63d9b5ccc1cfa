"""Surrogate potential of Top-k BBM (Raman et al. 2020, Sec. 3.2.2, eq. 2-3).

``Phi^n = sum_{a in R, b notin R} Lambda^{a,b,n}``, each pair under its own baseline
``u_a^gamma``, optionally weighted pair by pair (the importance weights of the top-k feedback).
The compiled kernels are in :mod:`olboost.potentials._topk_kernels`.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from numpy.typing import ArrayLike

from olboost.losses.pairwise import TOPK_LOSS_CODES
from olboost.potentials import _topk_kernels as K
from olboost.potentials._checks import _check_pairwise_args
from olboost.potentials.pairwise import _law_cached, _pairwise_samples

__all__ = ["topk_potential", "topk_costs"]

# without pair weights the kernels read none: O(|R| |R^c|), no k x k matrix of ones
_NO_WEIGHTS = np.ones((1, 1))


def _topk_setup(s, relevant, n, gamma, loss, method, draws, pair_weights, seed):
    s, k, y, n, gamma, code, draws = _check_pairwise_args(
        s, relevant, n, gamma, loss, method, draws, seed, TOPK_LOSS_CODES
    )
    if pair_weights is None:
        pw = None  # every pair of weight 1, without a k x k matrix
    else:
        pw = np.ascontiguousarray(pair_weights, dtype=np.float64)
        if pw.shape != (k, k):
            raise ValueError(f"pair_weights must have shape ({k}, {k}), got {pw.shape}")
        if not np.all(np.isfinite(pw)):
            raise ValueError("pair_weights must be finite")
        if np.any(pw < 0.0):
            # importance weights (Sec. 3.2.2): a negative one made a negative potential
            raise ValueError("pair_weights must be non-negative (importance weights)")
    return s, k, y, n, gamma, code, draws, pw


def _topk_mc(s, y, n, gamma, code, pw, draws, seed):
    k = s.shape[0]
    base = np.full((k, k), (1.0 - gamma) / k)
    base[np.arange(k), np.arange(k)] += gamma  # row a: u_a^gamma
    base /= base.sum(axis=1, keepdims=True)
    return _pairwise_samples(s, y, n, base, code, pw, draws, seed)


def topk_potential(
    s: ArrayLike,
    relevant: ArrayLike | Collection[int],
    n: int,
    gamma: float,
    loss: str = "hinge",
    pair_weights: ArrayLike | None = None,
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> float:
    """Surrogate potential of Top-k BBM (Raman et al. 2020, Sec. 3.2.2, below eq. 2).

    ``Phi^n(s) = sum_{a in R} sum_{b notin R} Lambda^{a,b,n}(s)`` with ``Lambda^{a,b,n}(s) = E
    f(s[b] + X_b - s[a] - X_a)``, ``X`` the counts of ``n`` draws from ``u_a^gamma =
    u_{{a}}^gamma``: ``(1 - gamma)/k + gamma`` on ``a`` and ``(1 - gamma)/k`` elsewhere (one
    relevant label, so each pair uses :func:`difference_law` ``(n, 1, k, gamma)``). The sum is
    *unweighted* (the paper's losses are the unweighted rank and hinge losses; Corollary 3 uses the
    hinge). It upper-bounds the ground-truth potential ``Upsilon`` of eq. 2 (Proposition 1).
    ``loss="rank"`` is the paper's ``f = I(s[a] <= s[b])`` (Sec. 2.2): a tie is a whole error,
    not the half of the full-information potentials (Jung & Tewari 2018).

    Parameters
    ----------
    pair_weights
        Optional ``(k, k)`` weights ``w[a, b]`` of ``Lambda^{a,b,n}``; ``I(a, b in T^k) / Pr[a, b
        in T^k]`` gives the unbiased estimate ``hat Phi`` of Sec. 3.2.2 (pairs outside the observed
        top-k get weight 0, so unobserved labels may be marked irrelevant). Default: all ones.
    s, relevant, n, gamma, loss, method, draws, seed
        As in :func:`pairwise_potential` (``k`` here is the paper's ``m``).

    Examples
    --------
    >>> round(topk_potential([0.0, 0.0, 0.0], [0], 0, 0.2, loss="hinge"), 6)   # two pairs
    2.0
    >>> topk_potential([0.0, 0.0, 0.0], [0], 0, 0.2, loss="rank")   # two tied pairs
    2.0
    """
    s, k, y, n, gamma, code, draws, pw = _topk_setup(
        s, relevant, n, gamma, loss, method, draws, pair_weights, seed
    )
    if not y.any() or y.all():
        return 0.0
    if method == "monte_carlo":
        pw = np.ones((k, k)) if pw is None else pw
        return float(_topk_mc(s, y, n, gamma, code, pw, draws, seed)[0].mean())
    table = _law_cached(n, 1, k, gamma)[1]
    weighted = pw is not None
    pw = pw if weighted else _NO_WEIGHTS
    return float(K.topk_potential_kernel(s, y, table, -n, code, pw, weighted))


def topk_costs(
    s: ArrayLike,
    relevant: ArrayLike | Collection[int],
    n: int,
    gamma: float,
    loss: str = "hinge",
    pair_weights: ArrayLike | None = None,
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """Top-k BBM cost vector ``c[l] = Phi^n(s + e_l)`` (Raman et al. 2020, eq. 3).

    With ``pair_weights`` the importance weights of Sec. 3.2.2 this is the unbiased estimate
    ``hat c`` of eq. 3. O(|R| |R^c|) like :func:`pairwise_costs`; parameters as in
    :func:`topk_potential`.

    Examples
    --------
    >>> topk_costs([0.0, 0.0, 0.0], [0], 0, 0.2, loss="hinge").tolist()
    [0.0, 3.0, 3.0]
    """
    s, k, y, n, gamma, code, draws, pw = _topk_setup(
        s, relevant, n, gamma, loss, method, draws, pair_weights, seed
    )
    if not y.any() or y.all():
        return np.zeros(k)
    if method == "monte_carlo":
        pw = np.ones((k, k)) if pw is None else pw
        return _topk_mc(s, y, n, gamma, code, pw, draws, seed)[1].mean(axis=0)
    table = _law_cached(n, 1, k, gamma)[1]
    out = np.empty(k)
    weighted = pw is not None
    K.topk_costs(s, y, table, -n, code, pw if weighted else _NO_WEIGHTS, weighted, out)
    return out
