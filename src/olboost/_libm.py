"""``exp``, ``log`` and the softmax of votes, with the same bits on every x86-64 machine.

NumPy dispatches its float64 ``exp`` (and, through SVML, other transcendental functions) to
AVX-512 code where the CPU has it, and that code rounds differently from the C library's in
about one value in twenty: the same seed then gave other probabilities and other trees on an
AVX-512 machine than on an AVX2 one, and the recorded results (``tests/pinned_scores.json``,
``benchmarks/results``) only held on the machine that wrote them. Seeded results go through
these instead: a compiled loop over ``math.exp``, which Numba lowers to the C library's
function, as Python's ``math`` module calls it, whatever the CPU.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

__all__ = ["exp", "log", "softmax"]


@numba.njit(cache=True)
def _exp(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        out[i] = math.exp(x[i])


@numba.njit(cache=True)
def _log(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        out[i] = math.log(x[i]) if x[i] > 0.0 else (-math.inf if x[i] == 0.0 else math.nan)


def _map(kernel: Any, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    kernel(x.reshape(-1), out.reshape(-1))
    return out


def exp(x: np.ndarray) -> np.ndarray:
    """``math.exp`` of every entry of ``x`` (any shape, cast to float64), as a new array."""
    return _map(_exp, x)


def log(x: np.ndarray) -> np.ndarray:
    """The C library's ``log`` of every entry of ``x`` (any shape, cast to float64), as a new
    array: ``-inf`` at 0 and NaN below, as NumPy's (``math.log`` itself raises there)."""
    return _map(_log, x)


def softmax(votes: np.ndarray) -> np.ndarray:
    """Class probabilities from votes, over the last axis: ``exp(v - max v)``, normalised (a
    booster's ``predict_proba_one`` and the scikit-learn adapter's ``predict_proba``)."""
    p = exp(votes - votes.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return p
