"""Compiled kernels of the Top-k BBM surrogate potential (:mod:`olboost.potentials.topk`).

Raman et al. 2020, Sec. 3.2.2 and eq. 3 (``s`` float64[:], ``y_mask`` bool[:], ``pair_w``
float64[:, :], ``out`` float64[:] of length ``k``):

* ``topk_potential_kernel(s, y_mask, table, d_min, loss_code, pair_w, weighted) -> Phi^n(s)`` and
* ``topk_costs(s, y_mask, table, d_min, loss_code, pair_w, weighted, out) -> Phi^n(s)``: the
  unweighted sum of ``pair_w[a, b] * Lambda^{a,b,n}`` over ``a in Y``, ``b notin Y``, or with
  ``weighted`` false of every ``Lambda^{a,b,n}`` (``pair_w`` unread: no ``k x k`` matrix of
  ones, and the same sums).

``table`` is a law table of :mod:`olboost.potentials._pairwise_kernels`; no input is validated.
"""

from __future__ import annotations

import numba
import numpy as np

from olboost.potentials._pairwise_kernels import _pairwise_core

__all__ = ["topk_potential_kernel", "topk_costs"]


@numba.njit(cache=True)
def topk_potential_kernel(
    s: np.ndarray,
    y_mask: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    pair_w: np.ndarray,
    weighted: bool,
) -> float:
    """Surrogate potential of Top-k BBM (Raman et al. 2020, Sec. 3.2.2), pair-weighted:
    ``sum_{a in Y, b notin Y} pair_w[a, b] Lambda^{a,b,n}(s)`` (``pair_w`` all ones unless
    ``weighted``); ``table`` is the law for ``u_a^gamma`` (one relevant label)."""
    return _pairwise_core(s, y_mask, table, d_min, loss_code, pair_w, weighted, 1.0, False, s)


@numba.njit(cache=True)
def topk_costs(
    s: np.ndarray,
    y_mask: np.ndarray,
    table: np.ndarray,
    d_min: int,
    loss_code: int,
    pair_w: np.ndarray,
    weighted: bool,
    out: np.ndarray,
) -> float:
    """Top-k BBM cost vector (Raman et al. 2020, eq. 3) with pair weights ``pair_w``:
    ``out[l] = Phi^n(s + e_l)``; returns ``Phi^n(s)``. With ``pair_w[a, b] = I(a, b in T^k) /
    Pr[a, b in T^k]`` this is the unbiased estimate ``hat c`` of eq. 3 (``pair_w`` all ones
    unless ``weighted``)."""
    return _pairwise_core(s, y_mask, table, d_min, loss_code, pair_w, weighted, 1.0, True, out)
