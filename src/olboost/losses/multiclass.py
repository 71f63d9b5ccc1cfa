"""Multiclass surrogate losses of Adaboost.OLM (Jung, Goetz & Tewari 2017, Sec. 4 and Appendix D).

Each surrogate loss has the form ``L^r(s) = sum_{l != r} phi(s(l) - s(r))`` for votes ``s`` and
true class ``r``:

* ``LOGISTIC`` (eq. 8): ``phi(z) = log(1 + e^z)``;
* ``EXPONENTIAL`` (eq. 36): ``phi(z) = e^z``, saturated at ``z =`` :data:`EXP_SATURATION`;
* ``SQUARE_HINGE`` (eq. 39): ``phi(z) = (z + 1)_+^2 / 2``;

and its cost matrix is the gradient, row by row: ``C(r, l) = phi'(s(l) - s(r))`` for ``l != r``
and ``C(r, r) = -sum_{l != r} C(r, l)`` (eq. 9, 37, 40). ``C`` has row = true label, column =
prediction. Every function is a compiled ``@numba.njit(cache=True)`` kernel taking the loss code,
called by the boosters from their own compiled code. Each raises a ``ValueError`` on a loss code,
a true class or an output length that would read or write outside its arrays; the types are
Numba's to check (a list for ``s`` is its ``TypingError``).

Examples
--------
>>> import numpy as np
>>> from olboost.losses import EXPONENTIAL, olm_cost_row, olm_loss
>>> s = np.array([1.0, 0.0, 0.0])
>>> round(olm_loss(s, 0, EXPONENTIAL), 6)      # 2 e^{-1}
0.735759
>>> c = np.empty(3)
>>> olm_cost_row(s, 0, EXPONENTIAL, c)
>>> c.round(6).tolist()
[-0.735759, 0.367879, 0.367879]
"""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.losses.logistic import _log1pexp, _sigmoid

__all__ = [
    "LOGISTIC",
    "EXPONENTIAL",
    "SQUARE_HINGE",
    "EXP_SATURATION",
    "phi",
    "dphi",
    "olm_loss",
    "olm_cost_row",
    "olm_cost_matrix",
]

#: Surrogate-loss codes (the ``loss`` argument of the kernels).
LOGISTIC, EXPONENTIAL, SQUARE_HINGE = 0, 1, 2

#: The exponential loss's ``phi(z) = phi'(z) = e^z`` is taken at ``min(z, EXP_SATURATION)``.
#: Vote gaps ``z`` grow to ``(N - 1) alpha_bound`` (e.g. 630 after 14 rows with 100 learners
#: and alpha_bound 10), where ``e^z`` overflows float64 and the weight a learner is taught with
#: (``-C(y, y) / (k - 1)``) became inf: learning stopped mid-stream. ``e^460`` is about 1e200,
#: which stays finite times a committee's largest weight multiplier (1e100,
#: ``olboost.weak.base.MAX_WEIGHT_MULTIPLIER``); below the saturation nothing changes.
EXP_SATURATION = 460.0

_UNKNOWN_LOSS = "loss must be LOGISTIC (0), EXPONENTIAL (1) or SQUARE_HINGE (2)"


@numba.njit(cache=True, inline="always")
def phi(z: float, loss: int) -> float:
    """``phi(z)`` of the surrogate ``loss`` (eq. 8, 36, 39)."""
    if loss == LOGISTIC:
        return _log1pexp(z)
    if loss == EXPONENTIAL:
        return math.exp(min(z, EXP_SATURATION))
    if loss == SQUARE_HINGE:
        m = z + 1.0
        return 0.5 * m * m if m > 0.0 else 0.0
    raise ValueError(_UNKNOWN_LOSS)


@numba.njit(cache=True, inline="always")
def dphi(z: float, loss: int) -> float:
    """``phi'(z)`` of the surrogate ``loss``, the entries of the cost matrix (eq. 9, 37, 40)."""
    if loss == LOGISTIC:
        return _sigmoid(z)
    if loss == EXPONENTIAL:
        return math.exp(min(z, EXP_SATURATION))
    if loss == SQUARE_HINGE:
        m = z + 1.0
        return m if m > 0.0 else 0.0
    raise ValueError(_UNKNOWN_LOSS)


@numba.njit(cache=True)
def olm_loss(s: np.ndarray, r: int, loss: int) -> float:
    """Surrogate loss ``L^r(s)`` of votes ``s`` for true class ``r`` (eq. 8, 36, 39)."""
    if not 0 <= r < s.shape[0]:
        raise ValueError("r must be a class of s: an index in [0, len(s))")
    total = 0.0
    for l in range(s.shape[0]):
        if l != r:
            total += phi(s[l] - s[r], loss)
    return total


@numba.njit(cache=True, inline="always")
def olm_cost_row(s: np.ndarray, r: int, loss: int, out: np.ndarray) -> None:
    """Row ``r`` of the cost matrix at ``s``, ``C(r, .) = grad L^r(s)`` (eq. 9, 37, 40)."""
    if not 0 <= r < s.shape[0]:
        raise ValueError("r must be a class of s: an index in [0, len(s))")
    if out.shape[0] != s.shape[0]:
        raise ValueError("out must hold one cost per class: len(out) == len(s)")
    diag = 0.0
    for l in range(s.shape[0]):
        if l != r:
            c = dphi(s[l] - s[r], loss)
            out[l] = c
            diag += c
    out[r] = -diag


@numba.njit(cache=True, inline="always")
def olm_cost_matrix(s: np.ndarray, loss: int, out: np.ndarray) -> None:
    """The full ``k x k`` cost matrix at ``s``; row ``r`` is :func:`olm_cost_row` for ``r``."""
    if out.shape[0] != s.shape[0]:
        raise ValueError("out must be k x k for the k classes of s")
    for r in range(s.shape[0]):
        olm_cost_row(s, r, loss, out[r])
