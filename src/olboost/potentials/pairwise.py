"""Pairwise potentials of OnlineBMR (Jung & Tewari 2018, eq. 1-3) and the law behind them.

``phi^n(s) = E L^Y(s + X)`` with ``L^Y(s) = w_Y sum_{l in Y, r notin Y} f(s[r] - s[l])``, ``f`` a
pair loss of :mod:`olboost.losses.pairwise` (``"rank"``, ``"hinge"``, ``"hinge_no_margin"``) and
``X`` the label counts of ``n`` draws from ``u_gamma^Y`` (``a + gamma`` on ``Y``, ``a = (1 - gamma
|Y|) / k`` everywhere else). Each pair depends on ``X`` through ``D = X_r - X_l`` only, a sum of
``n`` steps whose law is computed once per ``(n, |Y|, k, gamma)`` (:func:`difference_law`, cached)
and looked up in O(1) per pair, for real scores. The compiled kernels are in
:mod:`olboost.potentials._pairwise_kernels`; the Monte Carlo sampler here serves the top-k
surrogate (:mod:`olboost.potentials.topk`) too.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from olboost.losses.pairwise import RANK, pair_losses
from olboost.potentials import _pairwise_kernels as K
from olboost.potentials._checks import (
    _check_baseline,
    _check_gamma,
    _check_k,
    _check_n,
    _check_pairwise_args,
    _loss_code,
)

__all__ = [
    "difference_law",
    "difference_law_table",
    "difference_law_stack",
    "pairwise_potential",
    "pairwise_costs",
    "normalize_costs",
    "bmr_weight_bound",
]

#: Size of the cache of difference laws.
LAW_CACHE_SIZE = 1024


# --------------------------------------------------------------------------------------------------
# Law of D = X_r - X_l
# --------------------------------------------------------------------------------------------------


def _step_probs(n_relevant: int, k: int, gamma: float) -> tuple[float, float]:
    """``(P(+1), P(-1))`` of one step of ``D = X_r - X_l`` under ``u_gamma^Y``."""
    a = (1.0 - gamma * n_relevant) / k
    return a, a + gamma


# The cached laws stay writable, and are handed out as read-only views (_read_only): a kernel
# compiles once per argument type, and a read-only array is a type of its own, so the public
# functions would otherwise compile the kernels a second time beside the boosters' (which hold
# writable copies). Nothing writes to them.
@lru_cache(maxsize=LAW_CACHE_SIZE)
def _law_cached(n: int, n_relevant: int, k: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    p_plus, p_minus = _step_probs(n_relevant, k, gamma)
    probs = K.difference_law_probs(n, p_plus, p_minus)
    return probs, K.law_table(probs, -n)


@lru_cache(maxsize=64)
def _stack_cached(n_max: int, n_relevant: int, k: int, gamma: float) -> np.ndarray:
    p_plus, p_minus = _step_probs(n_relevant, k, gamma)
    return K.law_table_stack(n_max, p_plus, p_minus)


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of a cached array, so that a caller cannot change the cache."""
    view = a.view()
    view.flags.writeable = False
    return view


def _check_law_args(n: object, n_relevant: object, k: object, gamma: object) -> tuple:
    n = _check_n(n)
    k = _check_k(k)
    n_relevant = _check_n(n_relevant, "n_relevant")
    if n_relevant > k:
        raise ValueError(f"n_relevant must be <= k={k}, got {n_relevant}")
    if n_relevant in (0, k):
        raise ValueError(
            f"n_relevant must be in [1, k - 1] for a relevant/irrelevant pair to exist, got "
            f"{n_relevant} with k={k}"
        )
    gamma = _check_gamma(gamma)
    _check_baseline(gamma, n_relevant, k)
    return n, n_relevant, k, gamma


def difference_law(n: int, n_relevant: int, k: int, gamma: float) -> tuple[int, np.ndarray]:
    """Exact law of ``D = X_r - X_l`` for one relevant ``l`` and one irrelevant ``r``.

    ``X`` counts ``n`` i.i.d. draws from ``u_gamma^Y`` (Jung & Tewari 2018, Sec. 3.1 and the random
    walk of Appendix A): each draw moves ``D`` by ``+1`` w.p. ``a = (1 - gamma |Y|) / k``, by
    ``-1`` w.p. ``a + gamma`` and leaves it otherwise. The law is the same for every pair, computed
    once per argument tuple in O(n^2) and cached.

    Parameters
    ----------
    n
        Number of draws (weak learners left), ``n >= 0``.
    n_relevant
        ``|Y|``, in ``[1, k - 1]``.
    k
        Number of labels, ``k >= 2``.
    gamma
        Edge, in ``(0, 1)`` with ``gamma |Y| <= 1``.

    Returns
    -------
    d_min : int
        ``-n``, the smallest value of the support.
    probs : numpy.ndarray
        ``probs[j] = P(D = d_min + j)``, ``j = 0..2n`` (read-only).

    Examples
    --------
    >>> d_min, p = difference_law(1, 1, 4, 0.2)
    >>> d_min, p.round(3).tolist()   # a = 0.2, a + gamma = 0.4
    (-1, [0.4, 0.4, 0.2])
    """
    n, n_relevant, k, gamma = _check_law_args(n, n_relevant, k, gamma)
    return -n, _read_only(_law_cached(n, n_relevant, k, gamma)[0])


def difference_law_table(n: int, n_relevant: int, k: int, gamma: float) -> tuple[int, np.ndarray]:
    """``(d_min, table)``: the law of :func:`difference_law` as the ``(3, 2n + 2)`` lookup table
    the kernels :func:`~olboost.potentials._pairwise_kernels.bmr_costs` and
    :func:`~olboost.potentials._pairwise_kernels.expected_pair_loss` take (cached, read-only)."""
    n, n_relevant, k, gamma = _check_law_args(n, n_relevant, k, gamma)
    return -n, _read_only(_law_cached(n, n_relevant, k, gamma)[1])


def difference_law_stack(
    n_max: int, n_relevant: int, k: int, gamma: float
) -> tuple[int, np.ndarray]:
    """``(d_min, tables)`` with ``tables[n]`` the law table of ``n`` draws, ``n = 0..n_max``, all
    on the support ``d_min = -n_max .. n_max``: what an OnlineBMR booster with ``N = n_max + 1``
    learners passes to :func:`~olboost.potentials._pairwise_kernels.bmr_costs` as ``tables[N - i]``.
    One O(n_max^2) pass; ``3 (n_max + 1) (2 n_max + 2)`` floats (cached, read-only)."""
    n_max, n_relevant, k, gamma = _check_law_args(n_max, n_relevant, k, gamma)
    return -n_max, _read_only(_stack_cached(n_max, n_relevant, k, gamma))


# --------------------------------------------------------------------------------------------------
# Monte Carlo helper
# --------------------------------------------------------------------------------------------------


def _pairwise_samples(
    s: np.ndarray,
    y: np.ndarray,
    n: int,
    baselines: np.ndarray,
    code: int,
    pair_w: np.ndarray,
    draws: int,
    seed: object,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-draw ``(potential, costs)`` samples of a pair-weighted pairwise potential.

    ``baselines[l]`` is the distribution of the draws for the pairs of relevant label ``l`` (one
    shared row for OnlineBMR, ``u_l^gamma`` for Top-k BBM); pairs ``(l, r)`` weigh
    ``pair_w[l, r]``. Returns ``pot (draws,)`` and ``cost (draws, k)`` with ``cost[m, j]`` the loss
    at ``s + e_j + X_m``.
    """
    rng = np.random.default_rng(seed)
    k = s.shape[0]
    rel = np.flatnonzero(y)
    irr = np.flatnonzero(~y)
    pot = np.zeros(draws)
    delta = np.zeros((draws, k))
    shared = baselines.shape[0] == 1
    X = rng.multinomial(n, baselines[0], size=draws) if shared else None
    for l in rel:
        Xl = X if shared else rng.multinomial(n, baselines[l], size=draws)
        # The score difference first, then the integer walk, as the exact kernels: summed the
        # other way, two tied scores of 0.7 differ by 2.2e-16 and the rank loss's tie (1/2)
        # came out as 0 or 1.
        gap = s[irr] - s[l]
        D = Xl[:, irr] - Xl[:, [l]]  # (draws, |Y^c|), integers
        w = pair_w[l, irr]
        g0 = pair_losses(gap + D, code)
        # Products then NumPy's row sums, not ``@``: BLAS picks its kernel (and its order of
        # summation) by CPU, and the same seed gave other estimates on another machine.
        pot += (g0 * w).sum(axis=1)
        delta[:, l] += ((pair_losses(gap + (D - 1), code) - g0) * w).sum(axis=1)
        delta[:, irr] += (pair_losses(gap + (D + 1), code) - g0) * w
    return pot, delta + pot[:, None]


# --------------------------------------------------------------------------------------------------
# OnlineBMR: pairwise potentials (Jung & Tewari 2018)
# --------------------------------------------------------------------------------------------------


def _pairwise_setup(s, relevant, n, gamma, loss, method, draws, seed):
    s, k, y, n, gamma, code, draws = _check_pairwise_args(
        s, relevant, n, gamma, loss, method, draws, seed
    )
    n_rel = int(y.sum())
    _check_baseline(gamma, n_rel, k)
    return s, k, y, n, gamma, code, draws, n_rel


def _bmr_mc(s, y, n, gamma, code, draws, seed):
    k = s.shape[0]
    n_rel = int(y.sum())
    a = (1.0 - gamma * n_rel) / k
    u = np.where(y, a + gamma, a)
    u = u / u.sum()
    pair_w = np.full((k, k), 1.0 / (n_rel * (k - n_rel)))
    return _pairwise_samples(s, y, n, u[None, :], code, pair_w, draws, seed)


def pairwise_potential(
    s: ArrayLike,
    relevant: ArrayLike | Collection[int],
    n: int,
    gamma: float,
    loss: str = "hinge",
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> float:
    """OnlineBMR potential ``phi^n(s) = E L^Y(s + X)`` (Jung & Tewari 2018, eq. 1).

    ``X`` counts ``n`` i.i.d. draws from ``u_gamma^Y`` and ``L^Y(s) = w_Y sum_{l in Y, r notin Y}
    f(s[r] - s[l])`` with ``w_Y = 1 / (|Y| |Y^c|)`` and ``f`` the rank loss ``1(x > 0) + 1/2
    1(x = 0)`` (``"rank"``), the hinge ``(1 + x)_+`` (``"hinge"``, Sec. 3.1) or ``x_+``
    (``"hinge_no_margin"``, used by the authors' code).

    Parameters
    ----------
    s
        Current scores, ``(k,)`` finite reals.
    relevant
        ``Y``: a boolean mask of length ``k`` or a collection of label indices.
    n
        Number of draws (``N - i`` weak learners left), ``n >= 0``.
    gamma
        Edge in ``(0, 1)``; ``gamma |Y| <= 1`` is required for ``u_gamma^Y`` to be a distribution.
    loss
        One of :data:`LOSSES`.
    method
        ``"exact"`` (difference law, O(n^2) once then O(|Y||Y^c|)) or ``"monte_carlo"``.
    draws, seed
        Number of samples of ``X`` and random seed of the Monte Carlo estimate.

    Returns
    -------
    float
        ``phi^n(s)``; 0.0 when ``Y`` is empty or full (no pairs).

    Examples
    --------
    >>> round(pairwise_potential([0.0, 0.0, 0.0], [0], 2, 0.2, loss="hinge"), 6)
    0.817778
    """
    s, k, y, n, gamma, code, draws, n_rel = _pairwise_setup(
        s, relevant, n, gamma, loss, method, draws, seed
    )
    if n_rel in (0, k):
        return 0.0
    if method == "monte_carlo":
        return float(_bmr_mc(s, y, n, gamma, code, draws, seed)[0].mean())
    table = _law_cached(n, n_rel, k, gamma)[1]
    return float(K.bmr_potential(s, y, table, -n, code))


def pairwise_costs(
    s: ArrayLike,
    relevant: ArrayLike | Collection[int],
    n: int,
    gamma: float,
    loss: str = "hinge",
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """OnlineBMR cost vector ``c[l] = phi^n(s + e_l)`` (Jung & Tewari 2018, eq. 2).

    With ``s = s^{i-1}`` and ``n = N - i`` this is the cost of learner ``i``. The exact path
    computes ``phi^n(s)`` once and adds the change of the pairs that involve ``l``: O(|Y| |Y^c|)
    for the whole vector. The Monte Carlo path uses the same draws for every ``l``. Parameters as
    in :func:`pairwise_potential`; normalise with :func:`normalize_costs` (eq. 3).

    Returns
    -------
    numpy.ndarray
        ``(k,)`` costs; zeros when ``Y`` is empty or full.

    Examples
    --------
    >>> pairwise_costs([0.0, 0.0, 0.0], [0], 1, 0.2, loss="hinge").round(6).tolist()
    [0.266667, 1.3, 1.3]
    """
    s, k, y, n, gamma, code, draws, n_rel = _pairwise_setup(
        s, relevant, n, gamma, loss, method, draws, seed
    )
    if n_rel in (0, k):
        return np.zeros(k)
    if method == "monte_carlo":
        return _bmr_mc(s, y, n, gamma, code, draws, seed)[1].mean(axis=0)
    table = _law_cached(n, n_rel, k, gamma)[1]
    out = np.empty(k)
    K.bmr_costs(s, y, table, -n, code, out)
    return out


def normalize_costs(c: ArrayLike) -> tuple[np.ndarray, float]:
    """Normalised cost vector and weight of OnlineBMR (Jung & Tewari 2018, eq. 3).

    ``d = (c - min c) / w`` with ``w = max c - min c``, so that ``d`` lies in ``C_0^eor`` (min 0,
    max 1) and ``w`` is the weight ``w^i[t]``. A constant ``c`` gives ``d = 0`` and ``w = 0``.

    Examples
    --------
    >>> d, w = normalize_costs([0.5, 1.5, 1.0])
    >>> d.tolist(), w
    ([0.0, 1.0, 0.5], 1.0)
    """
    arr = np.ascontiguousarray(c, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"c must be a non-empty 1-D cost vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("c must be finite")
    out = np.empty_like(arr)
    w = K.normalize_costs_kernel(arr, out)
    if not np.isfinite(w):
        # finite costs whose differences overflow: d came out NaN (no potential gives such)
        raise ValueError("c's differences overflow float64 (the weight w is not finite)")
    return out, float(w)


def bmr_weight_bound(n: int, n_relevant: int, k: int, gamma: float, loss: str = "hinge") -> float:
    """A bound on the OnlineBMR weight ``w^i[t] = max c - min c`` with ``n = N - i`` draws left.

    Hinge losses: 2 (Jung & Tewari 2018, Lemma 9; ``f`` is 1-Lipschitz and ``s + e_l`` and ``s +
    e_r`` move each pair by at most 2). Rank loss: ``min(1, 3 max_d P(D = d))``, the exact form of
    Lemma 7 before its Berry-Esseen step, computed from :func:`difference_law`.

    The bounds hold in exact arithmetic: a weight computed in floating point may exceed them
    by rounding, a few units in the last place (``2.000000000000001`` for the hinge loss).
    """
    code = _loss_code(loss)
    n, n_relevant, k, gamma = _check_law_args(n, n_relevant, k, gamma)
    if code != RANK:
        return 2.0
    probs = _law_cached(n, n_relevant, k, gamma)[0]
    return float(min(1.0, 3.0 * probs.max()))
