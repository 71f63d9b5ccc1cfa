"""Input checks of the online-learner layer: feature vectors and matrices, checked completely
before any state changes, and row access to dense or sparse streams.

Every feature value must be a number of magnitude at most :data:`MAX_ABS_FEATURE`; a missing
value (NaN, or ``None`` in a dict) is accepted only by learners that handle missing values (see
``OnlineLearner._missing_allowed``), and infinities never are. Errors name the offending feature:
its key for dict input, its column index otherwise.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from olboost.feedback import FullFeedback

__all__ = [
    "MAX_ABS_FEATURE",
    "Rows",
    "FeedbackRows",
    "as_floats",
    "check_outputs",
    "check_values",
    "dict_values",
]

#: Largest feature magnitude accepted. The trees keep Gaussian statistics of every attribute
#: (running means and sums of squared deviations): a deviation of 1e160 squares to inf and a
#: single such value would leave inf/NaN in those statistics for good. 1e100 squared is 1e200,
#: far from float64's 1.8e308 even summed over billions of examples.
MAX_ABS_FEATURE = 1e100


def check_outputs(value: Any) -> str | None:
    """Why ``value`` is not a valid ``labels``/``classes`` parameter (``None`` if it is)."""
    if isinstance(value, bool):
        return "must be None, an int >= 2 or a sequence of at least 2 distinct values"
    if isinstance(value, numbers.Integral):
        if value > sys.maxsize:  # no list, array or range holds that many
            return f"must be at most {sys.maxsize} when an int, got {value}"
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
    """``values`` as a float64 array; a ``TypeError`` naming ``what`` if they are not numbers, a
    ``ValueError`` if one is an integer too large for a float64 (beyond
    :data:`MAX_ABS_FEATURE` anyway)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError:
        raise ValueError(
            f"{what} must lie within +/-{MAX_ABS_FEATURE:g} (MAX_ABS_FEATURE): the number at "
            f"{_overflowing(values)} is too large for a float64"
        ) from None
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must be numbers ({err})") from None


def _overflowing(values: Any) -> str:
    """Where the first number too large for a float64 is in ``values`` (a vector or a matrix,
    as nested sequences): ``feature j`` or ``row i, feature j``."""
    try:
        cells = np.asarray(values, dtype=object)
    except (TypeError, ValueError):
        return "some position"
    for index in np.ndindex(cells.shape):
        try:
            float(cells[index])
        except OverflowError:
            if len(index) == 1:
                return f"feature {index[0]}"
            if len(index) == 2:
                return f"row {index[0]}, feature {index[1]}"
            return f"index {index}"
        except (TypeError, ValueError):
            continue
    return "some position"


def dict_values(x: Mapping, keys: Sequence[Hashable], allow_missing: bool, who: str) -> np.ndarray:
    """The values of ``x`` under ``keys`` as a float64 vector.

    A key absent from ``x`` or holding ``None`` is a missing value: NaN when ``allow_missing``,
    else a ``ValueError`` naming the key. A value that is not a number is a ``TypeError`` naming
    the key; an integer too large for a float64 a ``ValueError`` naming it.
    """
    out = np.empty(len(keys))
    for j, key in enumerate(keys):
        value = x.get(key)
        if value is None:
            if not allow_missing:
                what = "None" if key in x else "absent"
                raise ValueError(
                    f"{who}: x has a missing value ({what}) under key {key!r}, and this model "
                    "does not accept missing values"
                )
            out[j] = np.nan
            continue
        if isinstance(value, str | bytes):
            raise TypeError(f"{who}: the value under key {key!r} must be a number, got {value!r}")
        try:
            out[j] = value
        except OverflowError:
            raise ValueError(
                f"{who}: x has a value too large in magnitude for a float64 at key {key!r}: "
                f"feature values must lie within +/-{MAX_ABS_FEATURE:g} (MAX_ABS_FEATURE)"
            ) from None
        except (TypeError, ValueError):
            raise TypeError(
                f"{who}: the value under key {key!r} must be a number, got {value!r}"
            ) from None
    return out


def _first_bad(values: np.ndarray, allow_missing: bool) -> int | None:
    """Flat index of the first value that is not accepted (see :func:`check_values`)."""
    # one pass: False for NaN, infinities and values beyond the limit alike
    ok = np.abs(values) <= MAX_ABS_FEATURE
    if allow_missing:
        ok |= np.isnan(values)
    if ok.all():
        return None
    return int(np.argmin(ok))


def _problem(value: float, where: str, allow_missing: bool, subject: str = "x") -> str:
    """What is wrong with the rejected ``value`` found at ``where`` of ``subject``."""
    if np.isnan(value):
        return (
            f"{subject} has a missing value (NaN) at {where}, and this model does not accept "
            "missing values"
        )
    if np.isinf(value):
        why = " (a missing value is NaN, not an infinity)" if allow_missing else ""
        return f"{subject} has an infinite value ({value}) at {where}{why}"
    return (
        f"{subject} has a value too large in magnitude ({value:g}) at {where}: feature values "
        f"must lie within +/-{MAX_ABS_FEATURE:g} (MAX_ABS_FEATURE), as the trees' Gaussian "
        "statistics square deviations from the mean, which would overflow"
    )


def check_values(
    xv: np.ndarray, keys: Sequence[Hashable] | None, allow_missing: bool, who: str
) -> None:
    """Raise a ``ValueError`` naming the first unacceptable value of the vector ``xv`` (NaN
    unless ``allow_missing``, an infinity, or a magnitude above :data:`MAX_ABS_FEATURE`): by its
    key when ``keys`` is given, else by its index."""
    j = _first_bad(xv, allow_missing)
    if j is not None:
        where = f"key {keys[j]!r}" if keys is not None else f"feature {j}"
        raise ValueError(f"{who}: {_problem(float(xv[j]), where, allow_missing)}")


class Rows:
    """Row access to a validated dense or CSR matrix, densifying one sparse row at a time."""

    def __init__(self, X: Any, n: int, d: int, sparse: bool):
        self.X, self.n, self.d, self.sparse = X, n, d, sparse

    @classmethod
    def of(cls, X: Any, name: str, allow_missing: bool = False) -> Rows:
        """Check ``X`` (dense or scipy sparse, 2-D, at least one feature, values as for
        :func:`check_values`) and wrap it; errors name ``name``, the row and the column."""
        if hasattr(X, "tocsr") and hasattr(X, "nnz"):
            X = X.tocsr()
            if len(X.shape) != 2:
                raise ValueError(f"{name}: X must be 2-D, got shape {X.shape}")
            if X.shape[1] == 0:
                raise ValueError(f"{name}: X has no features")
            if not X.has_canonical_format:
                # entries stored twice add up, as scipy reads them (X.toarray()); rows are read
                # by assignment, which would keep the last one only. A copy: X is the caller's.
                X = X.copy()
                X.sum_duplicates()
            data = as_floats(X.data, f"{name}: X")
            k = _first_bad(data, allow_missing)
            if k is not None:
                i = int(np.searchsorted(X.indptr, k, side="right")) - 1
                where = f"row {i}, feature {int(X.indices[k])}"
                raise ValueError(f"{name}: {_problem(float(data[k]), where, allow_missing, 'X')}")
            return cls((data, X.indices, X.indptr), X.shape[0], X.shape[1], True)
        X = as_floats(X, f"{name}: X")
        if X.ndim != 2:
            raise ValueError(f"{name}: X must be 2-D, got shape {X.shape}")
        if X.shape[1] == 0:
            raise ValueError(f"{name}: X has no features")
        k = _first_bad(X.ravel(), allow_missing)
        if k is not None:
            i, j = divmod(k, X.shape[1])
            where = f"row {i}, feature {j}"
            raise ValueError(f"{name}: {_problem(float(X.flat[k]), where, allow_missing, 'X')}")
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


def relevant_in_mapping(y: Mapping, what: str) -> list[Hashable]:
    """The labels River's multi-label target ``y`` (``{label: bool}``) maps to True, in its order;
    ``TypeError`` naming ``what[label]`` for a value that is not a bool (``1`` is not True)."""
    for label, value in y.items():
        if not isinstance(value, bool | np.bool_):
            raise TypeError(
                f"{what}[{label!r}] must be a bool (True: relevant), got "
                f"{type(value).__name__} {value!r}"
            )
    return [label for label, value in y.items() if value]
