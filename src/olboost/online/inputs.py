"""Input checks of the online-learner layer: feature vectors and matrices, checked completely
before any state changes, and row access to dense or sparse streams."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from olboost.feedback import FullFeedback

__all__ = ["Rows", "FeedbackRows", "as_floats", "check_outputs"]


def check_outputs(value: Any) -> str | None:
    """Why ``value`` is not a valid ``labels``/``classes`` parameter (``None`` if it is)."""
    if isinstance(value, bool):
        return "must be None, an int >= 2 or a sequence of at least 2 distinct values"
    if isinstance(value, numbers.Integral):
        return None if value >= 2 else f"must be >= 2 when an int, got {value}"
    if isinstance(value, str) or not isinstance(value, Sequence):
        return f"must be None, an int >= 2 or a sequence, got {value!r}"
    if len(value) < 2:
        return "must hold at least 2 values"
    try:
        distinct = len(set(value)) == len(value)
    except TypeError:
        return "must hold hashable values"
    return None if distinct else "must not repeat a value"


def as_floats(values: Any, what: str) -> np.ndarray:
    """``values`` as a float64 array; a ``TypeError`` naming ``what`` if they are not numbers."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must be numbers ({err})") from None


class Rows:
    """Row access to a validated dense or CSR matrix, densifying one sparse row at a time."""

    def __init__(self, X: Any, n: int, d: int, sparse: bool):
        self.X, self.n, self.d, self.sparse = X, n, d, sparse

    @classmethod
    def of(cls, X: Any, name: str) -> Rows:
        if hasattr(X, "tocsr") and hasattr(X, "nnz"):
            X = X.tocsr()
            data = np.asarray(X.data, dtype=np.float64)
            if not np.isfinite(data).all():
                raise ValueError(f"{name}: X has non-finite values")
            return cls((data, X.indices, X.indptr), X.shape[0], X.shape[1], True)
        X = as_floats(X, f"{name}: X")
        if X.ndim != 2:
            raise ValueError(f"{name}: X must be 2-D, got shape {X.shape}")
        if X.shape[1] == 0:
            raise ValueError(f"{name}: X has no features")
        if not np.isfinite(X).all():
            i, j = np.argwhere(~np.isfinite(X))[0]
            raise ValueError(f"{name}: X has a non-finite value at row {i}, feature {j}")
        return cls(X, X.shape[0], X.shape[1], False)

    def block(self, start: int, size: int) -> np.ndarray:
        """Rows ``start .. start + size - 1`` (fewer at the end) as a C-contiguous float64
        matrix."""
        stop = min(start + size, self.n)
        if not self.sparse:
            return np.ascontiguousarray(self.X[start:stop])
        data, indices, indptr = self.X
        out = np.zeros((stop - start, self.d))
        for r in range(start, stop):
            lo, hi = indptr[r], indptr[r + 1]
            out[r - start, indices[lo:hi]] = data[lo:hi]
        return out

    def row(self, i: int) -> np.ndarray:
        if not self.sparse:
            return self.X[i]
        data, indices, indptr = self.X
        buf = np.zeros(self.d)
        lo, hi = indptr[i], indptr[i + 1]
        buf[indices[lo:hi]] = data[lo:hi]
        return buf


class FeedbackRows(Sequence):
    """Full feedback for each row of a relevant-label matrix, made only when a row is read."""

    def __init__(self, Y: np.ndarray):
        self.Y = Y

    def __len__(self) -> int:
        return self.Y.shape[0]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return FeedbackRows(self.Y[i])
        return FullFeedback(self.Y[i])
