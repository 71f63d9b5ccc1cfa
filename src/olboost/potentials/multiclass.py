"""Multiclass 0-1 potential of OnlineMBBM (Jung, Goetz & Tewari 2017, eq. 2-5 and 16).

The potential under ``u_gamma^r``, computed exactly by dynamic programming (memoised on the sorted
differences), its cost row, normalisation, weight and weight bounds (Lemma 10), with Monte Carlo
twins. The compiled kernels are in :mod:`olboost.potentials._multiclass_kernels`.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from olboost.potentials import _multiclass_kernels as K
from olboost.potentials._checks import (
    _check_gamma,
    _check_int_scores,
    _check_k,
    _check_label,
    _check_method,
    _check_n,
)
from olboost.potentials.pairwise import _law_cached

__all__ = [
    "multiclass_potential",
    "multiclass_costs",
    "normalize_multiclass_costs",
    "multiclass_weight",
    "mbbm_weight_bound",
]

#: Berry-Esseen constant for i.i.d. sums (Shevtsova 2011), used in Lemma 10 of Jung et al. 2017.
BERRY_ESSEEN_C = 0.4748
#: Size of the memo of exact multiclass potentials (entries, least recently used dropped first).
MULTICLASS_MEMO_SIZE = 1 << 16


# Writable, as the boosters' tables are (nothing writes to it, and it is never handed out): a
# read-only array is a Numba type of its own, for which mbbm_potential_table would be compiled a
# second time beside the boosters' (as potentials.pairwise keeps its cached laws).
@lru_cache(maxsize=16)
def _binomial_table(n: int, k: int) -> np.ndarray:
    return K.binomial_table(n, k - 1)


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


def _mbbm_setup(s, true_label, n, gamma, method, draws, seed):
    s = _check_int_scores(s)
    k = s.shape[0]
    r = _check_label(true_label, k)
    n = _check_n(n)
    gamma = _check_gamma(gamma)
    draws = _check_method(method, draws, seed)
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
    s, k, r, n, gamma, draws = _mbbm_setup(s, true_label, n, gamma, method, draws, seed)
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
    s, k, r, n, gamma, draws = _mbbm_setup(s, true_label, n, gamma, method, draws, seed)
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
    Algorithm 1, line 11; a zero row stays zero (``w = 0``). Differences below zero are clipped
    to 0: the exact potential's rows are proper (``c[r]`` their least), and only rounding, or
    the sampling noise of Monte Carlo costs, makes one negative. A row given here is not
    checked for it.

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
    if not np.isfinite(w):
        # finite costs whose differences overflow: d came out NaN (no potential gives such)
        raise ValueError("c's differences overflow float64 (the weight w is not finite)")
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

    Always capped by the trivial bound ``k`` (App. B.2, before Lemma 10: potentials lie in [0, 1]).
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
    if constant is not None and (
        isinstance(constant, bool)
        or not isinstance(constant, numbers.Real)
        or not 0.0 < constant < math.inf
    ):
        # the constant of a bound on a weight: a negative one made a negative bound
        raise ValueError(f"constant must be a positive finite number or None, got {constant!r}")
    if constant is not None and form != "berry_esseen":
        raise ValueError(f"constant is the Berry-Esseen form's; form={form!r} takes none")
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
