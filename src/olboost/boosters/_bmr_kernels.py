"""Compiled learning step of OnlineBMR (Jung & Tewari 2018, Algorithm 1 with Algorithm 2).

``H[i]`` is weak prediction ``h^i_t``; with ``alpha = 1`` the expert predictions are
``s^i = h^1 + ... + h^i``; ``tables[n]`` is the law table of ``D = X_r - X_l`` after ``n`` draws
from the baseline ``u_gamma^Y`` (:func:`olboost.potentials._kernels.law_table_stack`).
"""

from __future__ import annotations

import numba
import numpy as np

from olboost.potentials._kernels import bmr_costs

__all__ = ["online_bmr_update"]


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
    """One learning round of OnlineBMR after ``Y_t`` (mask ``y``) is revealed.

    For ``i = 1..N`` (0-based ``i`` below): the cost vector ``c^i[l] = phi^{N-i}(s^{i-1} + e_l)``
    (eq. 2), exact; the weak learner's label weights ``max_l c^i[l] - c^i[l]`` on the relevant
    labels (the importance weights of the paper's experiments, Sec. 4; up to the factor
    ``1 / w^{i*}`` they are the normalised costs of eq. 3 times the weight ``w^i[t]``); then
    ``s^i = s^{i-1} + h^i``. ``w_max[i]`` keeps the largest ``w^i[t] = max c^i - min c^i`` seen,
    the running estimate of ``w^{i*}``.
    """
    n, k = H.shape
    s = np.zeros(k)
    cost = np.empty(k)
    for i in range(n):
        bmr_costs(s, y, tables[n - 1 - i], d_min, loss_code, cost)
        c_max = cost.max()
        c_min = cost.min()
        if c_max - c_min > w_max[i]:
            w_max[i] = c_max - c_min
        for c in range(k):
            weights_out[i, c] = (c_max - cost[c]) if y[c] else 0.0
        for c in range(k):
            s[c] += H[i, c]
