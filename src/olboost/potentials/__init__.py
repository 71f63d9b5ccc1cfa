"""Exact potential functions of the boost-by-majority boosters, with Monte Carlo twins.

A potential ``phi^n(s)`` estimates the booster's final loss when ``n`` weak learners remain and the
current cumulative vote is ``s``, if every remaining learner drew its prediction from the baseline
``u`` (a distribution over labels with an edge ``gamma`` on the right labels): ``phi^n(s) =
E L(s + X)``, ``X`` the label counts of ``n`` i.i.d. draws from ``u``.

* **OnlineBMR** (Jung & Tewari 2018, eq. 1-3): pairwise multi-label ranking losses ``L^Y(s) = w_Y
  sum_{l in Y, r notin Y} f(s[r] - s[l])`` (``"rank"``, ``"hinge"``, ``"hinge_no_margin"``) under
  ``u_gamma^Y`` (``a + gamma`` on ``Y``, ``a = (1 - gamma |Y|) / k`` everywhere else). Each pair
  depends on ``X`` through ``D = X_r - X_l`` only, a sum of ``n`` steps whose law is computed once
  per ``(n, |Y|, k, gamma)`` (:func:`difference_law`, cached) and looked up in O(1) per pair, for
  real scores.
* **OnlineMBBM** (Jung, Goetz & Tewari 2017, eq. 2-5 and 16): the multiclass 0-1 potential under
  ``u_gamma^r``, computed exactly by dynamic programming (memoised on the sorted differences), its
  cost row, normalisation, weight and weight bounds (Lemma 10).
* **Top-k BBM** (Raman et al. 2020, Sec. 3.2.2, eq. 2-3): the surrogate potential ``Phi^n = sum_{a
  in R, b notin R} Lambda^{a,b,n}``, each pair under its own baseline ``u_a^gamma``.

Every potential and cost function takes ``method="exact"`` or ``method="monte_carlo"`` (``draws``
samples of ``X``, as the authors did with ``M = 100``, and a ``seed``). The compiled kernels that
boosters call from their own loops live in :mod:`olboost.potentials._kernels`.

Examples
--------
>>> import numpy as np
>>> from olboost.potentials import pairwise_potential, pairwise_costs, normalize_costs
>>> s = np.zeros(4)
>>> round(pairwise_potential(s, [0], n=0, gamma=0.1, loss="rank"), 6)   # all tied: 1/2
0.5
>>> round(pairwise_potential(s, [0], n=1, gamma=0.1, loss="rank"), 6)   # 1/2 - gamma/2
0.45
>>> c = pairwise_costs(s, [0], n=3, gamma=0.1, loss="hinge")
>>> bool(c[0] < c[1] == c[2] == c[3])                                    # proper
True
>>> d, w = normalize_costs(c)
>>> d.round(6).tolist(), round(w, 6)
([0.0, 1.0, 1.0, 1.0], 0.828703)
>>> from olboost.potentials import multiclass_potential
>>> round(multiclass_potential([0, 0, 0], 0, n=1, gamma=0.4), 6)        # 1 - u_r
0.4
"""

from __future__ import annotations

import math
from collections.abc import Collection
from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from olboost.metrics._rank import _as_mask_1d
from olboost.potentials import _kernels as K

__all__ = [
    "LOSSES",
    "difference_law",
    "difference_law_table",
    "difference_law_stack",
    "pairwise_potential",
    "pairwise_costs",
    "normalize_costs",
    "bmr_weight_bound",
    "multiclass_potential",
    "multiclass_costs",
    "normalize_multiclass_costs",
    "multiclass_weight",
    "mbbm_weight_bound",
    "topk_potential",
    "topk_costs",
]

LOSSES = ("rank", "hinge", "hinge_no_margin")
_LOSS_CODES = {"rank": K.RANK, "hinge": K.HINGE, "hinge_no_margin": K.HINGE_NO_MARGIN}
_METHODS = ("exact", "monte_carlo")

#: Berry-Esseen constant for i.i.d. sums (Shevtsova 2011), used in Lemma 10 of Jung et al. 2017.
BERRY_ESSEEN_C = 0.4748
#: Size of the memo of exact multiclass potentials (entries, least recently used dropped first).
MULTICLASS_MEMO_SIZE = 1 << 16
#: Size of the cache of difference laws.
LAW_CACHE_SIZE = 1024


# --------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------


def _check_n(n: object, name: str = "n") -> int:
    if isinstance(n, bool | np.bool_) or not isinstance(n, Integral):
        raise TypeError(f"{name} must be an integer, got {n!r}")
    n = int(n)
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


def _check_gamma(gamma: object) -> float:
    if isinstance(gamma, bool | np.bool_) or not isinstance(gamma, Real):
        raise TypeError(f"gamma must be a real number, got {gamma!r}")
    g = float(gamma)
    if not 0.0 < g < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {g}")
    return g


def _check_k(k: object) -> int:
    k = _check_n(k, "k")
    if k < 2:
        raise ValueError(f"k must be >= 2, got {k}")
    return k


def _check_baseline(gamma: float, n_relevant: int, k: int) -> None:
    """``u_gamma^Y`` is a distribution with positive ``a`` only if ``gamma |Y| < 1``."""
    if 0 < n_relevant < k and gamma * n_relevant >= 1.0:
        raise ValueError(
            f"gamma * |Y| must be < 1 for the baseline u_gamma^Y to be a distribution, got "
            f"gamma={gamma} with |Y|={n_relevant} (a = (1 - gamma |Y|) / k = "
            f"{(1.0 - gamma * n_relevant) / k:.6g})"
        )


def _check_scores(s: object) -> np.ndarray:
    arr = np.asarray(s)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"s must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"s must be 1-D (one score per label), got shape {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"s must have at least 2 labels, got length {arr.shape[0]}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("s must be finite (no NaN or infinity)")
    return arr


def _check_int_scores(s: object) -> np.ndarray:
    arr = _check_scores(s)
    if not np.all(arr == np.round(arr)):
        raise ValueError(
            "s must hold integer scores (unweighted votes of single-label learners) for the "
            f"multiclass 0-1 potential, got {arr.tolist()}"
        )
    if np.max(np.abs(arr)) > 2.0**52:
        raise ValueError("s must hold integer scores of magnitude below 2**52")
    return arr.astype(np.int64)


def _check_label(label: object, k: int, name: str = "true_label") -> int:
    if isinstance(label, bool | np.bool_) or not isinstance(label, Integral):
        raise TypeError(f"{name} must be an integer label, got {label!r}")
    label = int(label)
    if not 0 <= label < k:
        raise ValueError(f"{name} must be in [0, {k - 1}], got {label}")
    return label


def _check_method(method: object, draws: object) -> int:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {list(_METHODS)}, got {method!r}")
    draws = _check_n(draws, "draws")
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    return draws


def _loss_code(loss: object) -> int:
    if loss not in _LOSS_CODES:
        raise ValueError(f"loss must be one of {list(LOSSES)}, got {loss!r}")
    return _LOSS_CODES[loss]


# --------------------------------------------------------------------------------------------------
# Law of D = X_r - X_l
# --------------------------------------------------------------------------------------------------


def _step_probs(n_relevant: int, k: int, gamma: float) -> tuple[float, float]:
    """``(P(+1), P(-1))`` of one step of ``D = X_r - X_l`` under ``u_gamma^Y``."""
    a = (1.0 - gamma * n_relevant) / k
    return a, a + gamma


@lru_cache(maxsize=LAW_CACHE_SIZE)
def _law_cached(n: int, n_relevant: int, k: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    p_plus, p_minus = _step_probs(n_relevant, k, gamma)
    probs = K.difference_law_probs(n, p_plus, p_minus)
    table = K.law_table(probs, -n)
    probs.flags.writeable = False
    table.flags.writeable = False
    return probs, table


@lru_cache(maxsize=64)
def _stack_cached(n_max: int, n_relevant: int, k: int, gamma: float) -> np.ndarray:
    p_plus, p_minus = _step_probs(n_relevant, k, gamma)
    tables = K.law_table_stack(n_max, p_plus, p_minus)
    tables.flags.writeable = False
    return tables


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
        Edge, in ``(0, 1)`` with ``gamma |Y| < 1``.

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
    return -n, _law_cached(n, n_relevant, k, gamma)[0]


def difference_law_table(n: int, n_relevant: int, k: int, gamma: float) -> tuple[int, np.ndarray]:
    """``(d_min, table)``: the law of :func:`difference_law` as the ``(3, 2n + 2)`` lookup table
    the kernels :func:`~olboost.potentials._kernels.bmr_costs` and
    :func:`~olboost.potentials._kernels.expected_pair_loss` take (cached, read-only)."""
    n, n_relevant, k, gamma = _check_law_args(n, n_relevant, k, gamma)
    return -n, _law_cached(n, n_relevant, k, gamma)[1]


def difference_law_stack(
    n_max: int, n_relevant: int, k: int, gamma: float
) -> tuple[int, np.ndarray]:
    """``(d_min, tables)`` with ``tables[n]`` the law table of ``n`` draws, ``n = 0..n_max``, all
    on the support ``d_min = -n_max .. n_max``: what an OnlineBMR booster with ``N = n_max + 1``
    learners passes to :func:`~olboost.potentials._kernels.bmr_costs` as ``tables[N - i]``.
    One O(n_max^2) pass; ``3 (n_max + 1) (2 n_max + 2)`` floats (cached, read-only)."""
    n_max, n_relevant, k, gamma = _check_law_args(n_max, n_relevant, k, gamma)
    return -n_max, _stack_cached(n_max, n_relevant, k, gamma)


# --------------------------------------------------------------------------------------------------
# Monte Carlo helpers
# --------------------------------------------------------------------------------------------------


def _f_np(x: np.ndarray, code: int) -> np.ndarray:
    if code == K.RANK:
        return (x > 0).astype(np.float64) + 0.5 * (x == 0)
    if code == K.HINGE:
        x = x + 1.0
    return np.maximum(x, 0.0)


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
        z = (s[irr] + Xl[:, irr]) - (s[l] + Xl[:, [l]])  # (draws, |Y^c|)
        w = pair_w[l, irr]
        g0 = _f_np(z, code)
        pot += g0 @ w
        delta[:, l] += (_f_np(z - 1.0, code) - g0) @ w
        delta[:, irr] += (_f_np(z + 1.0, code) - g0) * w
    return pot, delta + pot[:, None]


# --------------------------------------------------------------------------------------------------
# OnlineBMR: pairwise potentials (Jung & Tewari 2018)
# --------------------------------------------------------------------------------------------------


def _pairwise_setup(s, relevant, n, gamma, loss, method, draws):
    s = _check_scores(s)
    k = s.shape[0]
    y = _as_mask_1d(relevant, k)
    n = _check_n(n)
    gamma = _check_gamma(gamma)
    code = _loss_code(loss)
    draws = _check_method(method, draws)
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
        Edge in ``(0, 1)``; ``gamma |Y| < 1`` is required for ``u_gamma^Y`` to be a distribution.
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
        s, relevant, n, gamma, loss, method, draws
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
        s, relevant, n, gamma, loss, method, draws
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
    return out, float(w)


def bmr_weight_bound(n: int, n_relevant: int, k: int, gamma: float, loss: str = "hinge") -> float:
    """A bound on the OnlineBMR weight ``w^i[t] = max c - min c`` with ``n = N - i`` draws left.

    Hinge losses: 2 (Jung & Tewari 2018, Lemma 9; ``f`` is 1-Lipschitz and ``s + e_l`` and ``s +
    e_r`` move each pair by at most 2). Rank loss: ``min(1, 3 max_d P(D = d))``, the exact form of
    Lemma 7 before its Berry-Esseen step, computed from :func:`difference_law`.
    """
    code = _loss_code(loss)
    n, n_relevant, k, gamma = _check_law_args(n, n_relevant, k, gamma)
    if code != K.RANK:
        return 2.0
    probs = _law_cached(n, n_relevant, k, gamma)[0]
    return float(min(1.0, 3.0 * probs.max()))


# --------------------------------------------------------------------------------------------------
# OnlineMBBM: multiclass 0-1 potential (Jung, Goetz & Tewari 2017)
# --------------------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _binomial_table(n: int, k: int) -> np.ndarray:
    tab = K.binomial_table(n, k - 1)
    tab.flags.writeable = False
    return tab


@lru_cache(maxsize=MULTICLASS_MEMO_SIZE)
def _mbbm_memo(key: tuple[int, ...], n: int, k: int, gamma: float) -> float:
    d = np.array(key, dtype=np.int64)
    return float(K.mbbm_potential_table(d, n, k, gamma, _binomial_table(n, k)))


def _mbbm_exact(s: np.ndarray, r: int, n: int, gamma: float) -> float:
    """Memoised on the canonical state: the sorted ``s[r] - s[l]``, clipped to ``[-n, n + 1]``
    (beyond, a label surely beats ``r`` or surely cannot)."""
    d = np.delete(s[r] - s, r)
    key = tuple(np.sort(np.clip(d, -n, n + 1)).tolist())
    return _mbbm_memo(key, n, s.shape[0], gamma)


def _mbbm_setup(s, true_label, n, gamma, method, draws):
    s = _check_int_scores(s)
    k = s.shape[0]
    r = _check_label(true_label, k)
    n = _check_n(n)
    gamma = _check_gamma(gamma)
    draws = _check_method(method, draws)
    return s, k, r, n, gamma, draws


def _mbbm_mc_samples(s, r, n, gamma, draws, seed) -> np.ndarray:
    """``(draws, k)`` samples of ``L^r(s + e_l + X)``."""
    k = s.shape[0]
    u = np.full(k, (1.0 - gamma) / k)
    u[r] += gamma
    u = u / u.sum()
    X = np.random.default_rng(seed).multinomial(n, u, size=draws).astype(np.int64)
    out = np.empty((draws, k))
    K.mbbm_draw_losses(s, r, X, out)
    return out


def multiclass_potential(
    s: ArrayLike,
    true_label: int,
    n: int,
    gamma: float,
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> float:
    """OnlineMBBM 0-1 potential ``phi^r_n(s)`` (Jung, Goetz & Tewari 2017, eq. 2, 3 and 16).

    ``phi^r_n(s) = P(max_{l != r} (s + X)[l] >= (s + X)[r])`` with ``X ~ Multinomial(n,
    u_gamma^r)``, ``u_gamma^r = (1 - gamma)/k + gamma`` on ``r`` and ``(1 - gamma)/k`` elsewhere; a
    tie counts as an error (eq. 2). Exact: condition on ``X_r``, the other draws fall uniformly on
    ``k - 1`` labels with per-label caps, summed by dynamic programming in O(k n^3) and memoised on
    the sorted differences ``s[r] - s[l]``.

    Parameters
    ----------
    s
        Integer votes ``(k,)`` (floats with integer values are accepted).
    true_label
        ``r`` in ``[0, k)``.
    n
        Number of draws (``N - i`` learners left), ``n >= 0``.
    gamma
        Edge in ``(0, 1)``.
    method, draws, seed
        As in :func:`pairwise_potential`.

    Examples
    --------
    >>> round(multiclass_potential([0, 0], 0, 2, 0.2), 6)   # r must win both draws: 1 - 0.6^2
    0.64
    """
    s, k, r, n, gamma, draws = _mbbm_setup(s, true_label, n, gamma, method, draws)
    if method == "monte_carlo":
        # the column of label r is the loss at s + e_r + X; rebuild the one at s + X
        s0 = s.copy()
        s0[r] -= 1
        return float(_mbbm_mc_samples(s0, r, n, gamma, draws, seed)[:, r].mean())
    return _mbbm_exact(s, r, n, gamma)


def multiclass_costs(
    s: ArrayLike,
    true_label: int,
    n: int,
    gamma: float,
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """OnlineMBBM cost row ``C(r, l) = phi^r_n(s + e_l)`` (Jung, Goetz & Tewari 2017, eq. 4).

    Labels ``l != r`` with equal scores share one evaluation, and every evaluation goes through the
    memo. Normalise with :func:`normalize_multiclass_costs` (eq. 5). Parameters as in
    :func:`multiclass_potential`.

    Examples
    --------
    >>> multiclass_costs([0, 0, 0], 0, 1, 0.4).round(6).tolist()   # a tie is an error
    [0.4, 1.0, 1.0]
    """
    s, k, r, n, gamma, draws = _mbbm_setup(s, true_label, n, gamma, method, draws)
    if method == "monte_carlo":
        return _mbbm_mc_samples(s, r, n, gamma, draws, seed).mean(axis=0)
    out = np.empty(k)
    done: dict[int, float] = {}
    for l in range(k):
        if l != r and int(s[l]) in done:
            out[l] = done[int(s[l])]
            continue
        t = s.copy()
        t[l] += 1
        out[l] = _mbbm_exact(t, r, n, gamma)
        if l != r:
            done[int(s[l])] = out[l]
    return out


def normalize_multiclass_costs(c: ArrayLike, true_label: int) -> tuple[np.ndarray, float]:
    """Normalised cost row and weight of OnlineMBBM (Jung, Goetz & Tewari 2017, eq. 5).

    ``D(r, l) = (c[l] - c[r]) / w`` with ``w = sum_l (c[l] - c[r])``, the weight ``w^i(t)`` of
    Algorithm 1, line 11; a zero row stays zero (``w = 0``). Differences below zero, which only
    rounding can produce, are clipped to 0.

    Examples
    --------
    >>> d, w = normalize_multiclass_costs([0.2, 0.6, 0.4], 0)
    >>> d.round(6).tolist(), round(w, 6)
    ([0.0, 0.666667, 0.333333], 0.6)
    """
    arr = np.ascontiguousarray(c, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(f"c must be a 1-D cost row with at least 2 labels, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("c must be finite")
    r = _check_label(true_label, arr.shape[0])
    out = np.empty_like(arr)
    w = K.mbbm_normalize(arr, r, out)
    return out, float(w)


def multiclass_weight(
    s: ArrayLike,
    true_label: int,
    n: int,
    gamma: float,
    method: str = "exact",
    draws: int = 100,
    seed: int | np.random.Generator | None = None,
) -> float:
    """Weight ``w^i(t) = sum_l [phi^r_n(s + e_l) - phi^r_n(s + e_r)]`` of OnlineMBBM
    (Jung, Goetz & Tewari 2017, Algorithm 1, line 11), with ``n = N - i``.

    Examples
    --------
    >>> round(multiclass_weight([0, 0, 0], 0, 1, 0.4), 6)
    1.2
    """
    c = multiclass_costs(s, true_label, n, gamma, method, draws, seed)
    return normalize_multiclass_costs(c, true_label)[1]


def mbbm_weight_bound(
    i: int,
    N: int,
    k: int,
    gamma: float,
    form: str = "berry_esseen",
    constant: float | None = None,
) -> float:
    """Estimate ``w^{i*}`` of ``||w^i||_inf`` for OnlineMBBM (Jung, Goetz & Tewari 2017, App. B.2).

    Always capped by the trivial bound ``k`` (remark before Lemma 10: potentials lie in [0, 1]).
    With ``m = N - i`` draws left (``m = 0`` gives ``k``):

    * ``form="berry_esseen"``: Lemma 10, eq. 20, ``c k^{5/2} / sqrt(m)``; by default ``c = 2 C'``
      with ``C' = 1/sqrt(2 pi) + 4 C`` (eq. 25) and ``C`` = :data:`BERRY_ESSEEN_C`. Lemma 10 needs
      ``gamma < 1/2``; for larger ``gamma`` only the trivial bound ``k`` is returned.
    * ``form="exact_law"``: eq. 21-22 before the Berry-Esseen step, ``(k - 1) min(1, 2 (k - 1)
      max_d P(D = d))`` with the exact law of ``D = X_l - X_r`` (:func:`difference_law` with one
      relevant label), valid for every ``gamma`` and much tighter.
    * ``form="trivial"``: ``k``.

    Examples
    --------
    >>> mbbm_weight_bound(1, 10, 3, 0.1, form="trivial")
    3.0
    >>> mbbm_weight_bound(1, 10, 3, 0.1)               # eq. 20 exceeds k here
    3.0
    >>> round(mbbm_weight_bound(1, 1000, 3, 0.1), 4)
    2.2669
    >>> round(mbbm_weight_bound(1, 1000, 3, 0.1, form="exact_law"), 4)
    0.1215
    """
    i = _check_n(i, "i")
    N = _check_n(N, "N")
    if not 1 <= i <= N:
        raise ValueError(f"i must be in [1, N] with N={N}, got {i}")
    k = _check_k(k)
    gamma = _check_gamma(gamma)
    m = N - i
    trivial = float(k)
    if form == "trivial" or m == 0:
        if form not in ("trivial", "berry_esseen", "exact_law"):
            raise ValueError(f"form must be 'berry_esseen', 'exact_law' or 'trivial', got {form!r}")
        return trivial
    if form == "berry_esseen":
        if gamma >= 0.5:
            return trivial
        c = 2.0 * (1.0 / math.sqrt(2.0 * math.pi) + 4.0 * BERRY_ESSEEN_C)
        if constant is not None:
            c = float(constant)
        return float(min(trivial, c * k**2.5 / math.sqrt(m)))
    if form == "exact_law":
        pmax = float(_law_cached(m, 1, k, gamma)[0].max())
        return float(min(trivial, (k - 1) * min(1.0, 2.0 * (k - 1) * pmax)))
    raise ValueError(f"form must be 'berry_esseen', 'exact_law' or 'trivial', got {form!r}")


# --------------------------------------------------------------------------------------------------
# Top-k BBM surrogate potential (Raman et al. 2020)
# --------------------------------------------------------------------------------------------------


def _topk_setup(s, relevant, n, gamma, loss, method, draws, pair_weights):
    s = _check_scores(s)
    k = s.shape[0]
    y = _as_mask_1d(relevant, k)
    n = _check_n(n)
    gamma = _check_gamma(gamma)
    code = _loss_code(loss)
    draws = _check_method(method, draws)
    if pair_weights is None:
        pw = np.ones((k, k))
    else:
        pw = np.ascontiguousarray(pair_weights, dtype=np.float64)
        if pw.shape != (k, k):
            raise ValueError(f"pair_weights must have shape ({k}, {k}), got {pw.shape}")
        if not np.all(np.isfinite(pw)):
            raise ValueError("pair_weights must be finite")
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
    """
    s, k, y, n, gamma, code, draws, pw = _topk_setup(
        s, relevant, n, gamma, loss, method, draws, pair_weights
    )
    if not y.any() or y.all():
        return 0.0
    if method == "monte_carlo":
        return float(_topk_mc(s, y, n, gamma, code, pw, draws, seed)[0].mean())
    table = _law_cached(n, 1, k, gamma)[1]
    return float(K.topk_potential_kernel(s, y, table, -n, code, pw))


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
        s, relevant, n, gamma, loss, method, draws, pair_weights
    )
    if not y.any() or y.all():
        return np.zeros(k)
    if method == "monte_carlo":
        return _topk_mc(s, y, n, gamma, code, pw, draws, seed)[1].mean(axis=0)
    table = _law_cached(n, 1, k, gamma)[1]
    out = np.empty(k)
    K.topk_costs(s, y, table, -n, code, pw, out)
    return out
