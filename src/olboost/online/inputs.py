"""Input checks of the online-learner layer: feature vectors and matrices, checked completely
before any state changes, and row access to dense or sparse streams.

Every feature value must be a number of magnitude at most :data:`MAX_ABS_FEATURE`; a missing
value (NaN, or ``None`` in a dict) is accepted only by learners that handle missing values (see
``OnlineLearner._missing_allowed``), and infinities never are. Errors name the offending feature:
its key for dict input, its column index otherwise.
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from olboost.feedback import FullFeedback, bool_apart, is_positions

# moved to olboost.online.labels; importable from here as before
from olboost.online.labels import check_outputs as check_outputs
from olboost.online.labels import relevant_in_mapping as relevant_in_mapping

__all__ = [
    "MAX_ABS_FEATURE",
    "Rows",
    "FeedbackRows",
    "as_floats",
    "check_outputs",
    "check_values",
    "check_vector",
    "check_width",
    "dict_values",
    "entry_position",
    "frame_columns",
    "key_order",
    "named_columns",
    "shown_names",
    "sparse_dict_vector",
    "writable",
]

#: Largest feature magnitude accepted. The trees keep Gaussian statistics of every attribute
#: (running means and sums of squared deviations): a deviation of 1e160 squares to inf and a
#: single such value would leave inf/NaN in those statistics for good. 1e100 squared is 1e200,
#: far from float64's 1.8e308 even summed over billions of examples at weights up to 1e100. The
#: sums are weighted, though: a weight of 1e200 (a committee's multiplier, at most 1e100, times
#: a top-k weight of 1e100 from a pair probability of 1e-100 left unclipped) can take one to
#: inf. That attribute's variance is then infinite and its thresholds uninformative, but no NaN
#: follows (each increment ``w (v - mean_old) (v - mean)`` is non-negative).
MAX_ABS_FEATURE = 1e100


def as_floats(values: Any, what: str, columns: list[Hashable] | None = None) -> np.ndarray:
    """``values`` as a float64 array; a ``TypeError`` naming ``what`` if they are not real
    numbers (strings and complex numbers included), a ``ValueError`` if one is an integer too
    large for a float64 (beyond :data:`MAX_ABS_FEATURE` anyway). A matrix's ``columns``, when
    given, name the column of a refused cell."""
    _refuse_non_real(values, what, columns)
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError:
        raise ValueError(
            f"{what} must lie within +/-{MAX_ABS_FEATURE:g} (MAX_ABS_FEATURE): the number at "
            f"{_overflowing(values)} is too large for a float64"
        ) from None
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must be numbers ({err})") from None


#: NumPy kinds that are not real features: complex, strings, and dates and durations (which
#: NumPy converts to counts of their unit, so that the same instant gave 18,262 as a day and
#: 1,577,836,800 as a second).
_NON_REAL_KINDS = ("c", "U", "S", "M", "m")


def _non_real(value: Any) -> bool:
    """Whether ``value`` is a string, a complex number, a date or a duration (a scalar, or an
    array of them)."""
    if isinstance(value, str | bytes | complex | np.complexfloating):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    return kind in _NON_REAL_KINDS


def _refuse_non_real(values: Any, what: str, columns: list[Hashable] | None = None) -> None:
    """A ``TypeError`` naming ``what`` and the position if ``values`` holds a string, a
    complex number, a date or a duration. NumPy's float64 conversion would take ``"1"`` and
    ``"nan"`` as numbers, drop an imaginary part with a mere warning, and count a
    ``datetime64`` in its unit, where a dict's values are refused."""
    cells = values if isinstance(values, np.ndarray) else None
    if cells is None:
        try:
            cells = np.asarray(values)
        except (TypeError, ValueError, OverflowError):
            return  # ragged or otherwise not an array: the float64 conversion says why
    kind = cells.dtype.kind
    if kind == "O":
        flat = cells.ravel()
        bad = next((i for i, v in enumerate(flat) if _non_real(v)), None)
        if bad is None:
            return
        index = np.unravel_index(bad, cells.shape)
        value = flat[bad]
    elif kind in _NON_REAL_KINDS and cells.size:
        # refused whatever the values (a complex array with zero imaginary parts too): such an
        # array is not real features
        imaginary = np.flatnonzero(cells.imag) if kind == "c" else ()
        index = np.unravel_index(imaginary[0] if len(imaginary) else 0, cells.shape)
        value = cells[index]
    else:
        return
    where = (
        f"feature {index[0]}"
        if len(index) == 1
        else f"row {index[0]}, "
        + (f"column {columns[index[1]]!r}" if columns else f"feature {index[1]}")
        if len(index) == 2
        else "x"
    )
    shown = value.item() if isinstance(value, np.generic) else value
    container = f", in an array of dtype {cells.dtype}" if kind != "O" else ""
    raise TypeError(
        f"{what} must be real numbers: {where} is {shown!r} (a {type(shown).__name__}{container})"
    )


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


def entry_position(
    k: int, d: int, indptr: np.ndarray | None = None, indices: np.ndarray | None = None
) -> tuple[int, int]:
    """Row and column of the ``k``-th stored value: of a CSR matrix's ``data`` (``indptr``,
    ``indices``), or of a dense row-major matrix of ``d`` columns (``indptr`` None)."""
    if indptr is None:
        i, j = divmod(k, d)
        return int(i), int(j)
    return int(np.searchsorted(indptr, k, side="right")) - 1, int(indices[k])


#: Types of the values :func:`dict_values` converts in one call (no other check applies to them).
_PLAIN_NUMBERS = frozenset({float, int, np.float64})


def dict_values(x: Mapping, keys: Sequence[Hashable], allow_missing: bool, who: str) -> np.ndarray:
    """The values of ``x`` under ``keys`` as a float64 vector.

    A key absent from ``x`` or holding ``None`` or pandas' ``NA`` (what River's
    ``stream.iter_frame`` yields for a gap in a nullable column) is a missing value: NaN when
    ``allow_missing``, else a ``ValueError`` naming the key. A value that is not a number is a
    ``TypeError`` naming the key; an integer too large for a float64 a ``ValueError`` naming it.
    """
    values = list(map(x.get, keys))
    if _PLAIN_NUMBERS.issuperset(map(type, values)):
        # the common case, converted at once (8 instead of 90 us for 100 keys): the same
        # float64 conversion of each value as the loop's
        try:
            return np.array(values, dtype=np.float64)
        except OverflowError:
            pass  # the loop names the key
    out = np.empty(len(keys))
    for j, key in enumerate(keys):
        value = values[j]
        if value is None or _is_pandas_na(value):
            if not allow_missing:
                what = "absent" if key not in x else "None" if value is None else "pandas NA"
                raise ValueError(
                    f"{who}: x has a missing value ({what}) under key {key!r}, and this model "
                    "does not accept missing values"
                )
            out[j] = np.nan
            continue
        if _non_real(value):
            raise TypeError(
                f"{who}: the value under key {key!r} must be a real number, got {value!r}"
            )
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


def _is_pandas_na(value: Any) -> bool:
    """Whether ``value`` is pandas' ``NA`` scalar (told by its type, without importing pandas)."""
    kind = type(value)
    return kind.__name__ == "NAType" and kind.__module__.startswith("pandas")


#: Values :func:`_first_bad` checks at a time: its scratch is this many floats and flags, not a
#: copy of the whole input (a 100 MB matrix took 113 MB more to check; probe).
_CHECK_CHUNK = 1 << 15


def _first_bad(values: np.ndarray, allow_missing: bool) -> int | None:
    """Flat index of the first value that is not accepted (see :func:`check_values`) of the 1-D
    ``values``."""
    n = values.shape[0]
    if n <= _CHECK_CHUNK:  # one example's vector, at the fewest calls
        ok = np.abs(values) <= MAX_ABS_FEATURE
        if allow_missing:
            ok |= np.isnan(values)
        return None if ok.all() else int(np.argmin(ok))
    size = _CHECK_CHUNK
    magnitude = np.empty(size)
    ok = np.empty(size, dtype=np.bool_)
    for lo in range(0, n, size):
        part = values[lo : lo + size]
        m, o = magnitude[: part.shape[0]], ok[: part.shape[0]]
        # one pass: False for NaN, infinities and values beyond the limit alike
        np.less_equal(np.abs(part, out=m), MAX_ABS_FEATURE, out=o)
        if allow_missing:
            o |= np.isnan(part)
        if not o.all():
            return lo + int(np.argmin(o))
    return None


def _problem(
    value: float, where: str, allow_missing: bool, subject: str = "x", missing: str = "NaN"
) -> str:
    """What is wrong with the rejected ``value`` found at ``where`` of ``subject``; a NaN is
    the missing value ``missing`` as the caller wrote it."""
    if np.isnan(value):
        return (
            f"{subject} has a missing value ({missing}) at {where}, and this model does not "
            "accept missing values"
        )
    if np.isinf(value):
        why = " (a missing value is NaN, not an infinity)" if allow_missing else ""
        return f"{subject} has an infinite value ({value}) at {where}{why}"
    return (
        f"{subject} has a value too large in magnitude ({value:g}) at {where}: feature values "
        f"must lie within +/-{MAX_ABS_FEATURE:g} (MAX_ABS_FEATURE), a bound every model "
        "shares so that squares and products of feature values stay finite (the trees' "
        "Gaussian statistics, the linear learners' scores and norms)"
    )


def check_values(
    xv: np.ndarray,
    keys: Sequence[Hashable] | None,
    allow_missing: bool,
    who: str,
    given: Any = None,
) -> None:
    """Raise a ``ValueError`` naming the first unacceptable value of the vector ``xv`` (NaN
    unless ``allow_missing``, an infinity, or a magnitude above :data:`MAX_ABS_FEATURE`): by its
    key when ``keys`` is given, else by its index; a NaN that was ``None`` in ``given`` (the
    list ``xv`` was made from) is said to be ``None``."""
    j = _first_bad(xv, allow_missing)
    if j is not None:
        where = f"key {keys[j]!r}" if keys is not None else f"feature {j}"
        missing = "None" if isinstance(given, list | tuple) and given[j] is None else "NaN"
        raise ValueError(f"{who}: {_problem(float(xv[j]), where, allow_missing, missing=missing)}")


def check_vector(
    x: Any,
    who: str,
    allow_missing: bool,
    feature_names: list[Hashable] | None,
    n_features: int | None,
) -> tuple[np.ndarray, list[Hashable] | None]:
    """Validate one feature vector ``x`` of the learner ``who`` (a dict, a 1-D vector or a pandas
    Series; the rules are in the docstring of :mod:`olboost.online`); returns it as float64 and,
    for the first dict, the key order (sorted) that fixes the features.

    ``feature_names`` are the keys fixed by the first example if it was a dict (else ``None``),
    ``n_features`` the number of features of a started learner (``None``: not started).
    """
    names: list[Hashable] | None = None
    if _is_series(x):
        x = _series_row(x, who, feature_names, n_features)
    if isinstance(x, Mapping):
        if n_features is not None and feature_names is None:
            raise TypeError(f"{who}: x must be a vector, as in the first example, not a dict")
        if feature_names is None:
            names = key_order(x)
            keys = names
        else:
            keys = feature_names
            if not allow_missing and (
                len(x) != len(feature_names) or any(key not in x for key in feature_names)
            ):
                missing = [key for key in feature_names if key not in x]
                names = set(feature_names)
                extra = [key for key in x if key not in names]
                raise ValueError(
                    f"{who}: x has different features than the first example "
                    f"(missing {missing[:5]}, unexpected {extra[:5]}), and this model does "
                    "not accept missing values"
                )
        xv = dict_values(x, keys, allow_missing, who)
    else:
        if feature_names is not None:
            raise TypeError(
                f"{who}: x must be a dict: the model's features are named "
                f"({shown_names(feature_names)}), by its first dict or DataFrame"
            )
        if isinstance(x, str | bytes) or not isinstance(x, Sequence | np.ndarray):
            raise TypeError(
                f"{who}: x must be a dict, a 1-D vector or a pandas Series, got {type(x).__name__}"
            )
        keys = None
        xv = as_floats(x, f"{who}: feature values")
        if xv.ndim != 1:
            raise ValueError(f"{who}: x must be 1-D, got shape {xv.shape}")
    check_width("x", xv.shape[0], n_features, who)
    if xv.shape[0] == 0:
        if isinstance(x, Mapping) and feature_names is None:
            raise ValueError(
                f"{who}: x is an empty dict: a first example's keys fix the model's features, "
                "and it has none"
            )
        raise ValueError(f"{who}: x has no features")
    check_values(xv, keys, allow_missing, who, given=x)
    return xv, names


def sparse_dict_vector(
    x: Any,
    who: str,
    feature_names: list[Hashable],
    position: Mapping[Hashable, int],
    prepare: Callable[[np.ndarray, list[Hashable]], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, list[Hashable]]:
    """A dict (or a pandas Series indexed by names) as a sparse example of a model whose features
    grow: ``(idx, val, new)``, the positions (increasing) and values of its non-zero features,
    a key the model has not seen taking the next free position, and those unseen keys, in
    :func:`key_order`. ``feature_names`` are the model's features, ``position`` maps each to its
    index. An absent key is 0, and an unseen key of value 0 is as absent: it adds no feature.
    Values are checked as :func:`check_vector` checks them, naming the key (``None`` and pandas'
    ``NA`` are missing values, refused: a missing value is not a 0), then by ``prepare(values,
    keys)`` if given, which raises naming a key or returns the values the model reads (a value
    it reads as 0 is then absent). Costs ``O(len(x))``, whatever the number of features."""
    if _is_series(x):
        x = _series_items(x, who, feature_names, position)
    if not isinstance(x, Mapping):
        raise TypeError(
            f"{who}: x must be a dict: the model's features are named "
            f"({shown_names(feature_names)}), by its first dict or DataFrame"
        )
    keys = list(x)
    values = dict_values(x, keys, False, who)
    check_values(values, keys, False, who, given=None)
    if prepare is not None:
        values = prepare(values, keys)
    present = values != 0.0
    new = key_order(
        [key for key, v in zip(keys, present, strict=True) if v and key not in position]
    )
    d = len(feature_names)
    added = {key: d + i for i, key in enumerate(new)}
    idx = np.array(
        [position[key] if key in position else added.get(key, -1) for key in keys], dtype=np.int64
    )
    idx, val = idx[present], values[present]  # an unseen key of value 0 (-1) goes here
    order = np.argsort(idx, kind="stable")
    return idx[order], val[order], new


def _series_items(
    x: Any, who: str, feature_names: list[Hashable], position: Mapping[Hashable, int]
) -> dict[Hashable, Any]:
    """A Series as the dict of its items, for :func:`sparse_dict_vector`: refused if it names a
    feature twice, or if its index is pandas' default ``0..n-1`` and names none of the features
    (the values of a row by position, which would be read as new features ``0..n-1``)."""
    index, values = _series_parts(x, who)
    positional = type(x.index).__name__ == "RangeIndex"
    if index and positional and not any(key in position for key in index):
        raise TypeError(
            f"{who}: x is a Series indexed by position (0..{len(index) - 1}) that names none of "
            f"the model's features ({shown_names(feature_names)}): index it by them"
        )
    return dict(zip(index, values, strict=True))


def _series_parts(x: Any, who: str) -> tuple[list[Hashable], list[Any]]:
    """A Series' labels and values, pandas' ``NA`` as ``None`` (missing); refused if it names a
    feature twice."""
    index = list(x.index)
    if len(set(index)) != len(index):
        twice = [label for label, n in Counter(index).items() if n > 1]
        raise ValueError(f"{who}: x names a feature twice ({shown_names(twice)})")
    # tolist, not to_numpy: a categorical of ints has no NaN to give for its gaps
    return index, [None if _is_pandas_na(value) else value for value in x.tolist()]


def shown_names(names: list[Hashable], limit: int = 5) -> str:
    """The first ``limit`` of ``names`` as a message shows them (``", ..."`` for the rest)."""
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (", ..." if len(names) > limit else "")


def _is_series(x: Any) -> bool:
    """Whether ``x`` is a pandas Series (pandas is not imported for it: a Series exists only
    where pandas was)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(x, pandas.Series)


def _series_row(
    x: Any, who: str, feature_names: list[Hashable] | None, n_features: int | None
) -> dict[Hashable, Any] | list[Any]:
    """A pandas Series (a DataFrame's row, ``df.iloc[i]``) as the example it stands for: the
    dict of its items, read as a dict is (a first one fixes the features, sorted), where the
    model's features are named or, for a model not started, where every label of its index is
    a string (scikit-learn's rule for a frame's feature names); else the list of its values,
    by position, with scikit-learn's warning where its labels are strings. pandas' ``NA`` is
    read as ``None`` (missing). A Series naming a feature twice, or (on a model of named
    features) none of them, is refused."""
    index, values = _series_parts(x, who)
    strings = all(isinstance(label, str) for label in index)
    if feature_names is not None:
        known = set(feature_names)
        if index and not any(label in known for label in index):
            # as a dict it would be an example of missing values only, learned without a word
            raise TypeError(
                f"{who}: x is a Series that names none of the model's features "
                f"({shown_names(feature_names)}): index it by them"
            )
        return dict(zip(index, values, strict=True))
    if n_features is None and strings:
        return dict(zip(index, values, strict=True))
    if strings and index:
        from olboost.online.learner import _caller_level

        warnings.warn(
            f"{who}: x has feature names, but the model started without them: its values are "
            "read by position",
            UserWarning,
            stacklevel=_caller_level(),
        )
    return values


def key_order(keys: Iterable[Hashable]) -> list[Hashable]:
    """The order in which a model started on a dict (or a River mini-batch) with these keys
    stores its features: sorted by their text, so that the key order of the first example does
    not decide which columns each weak learner sees."""
    return sorted(keys, key=lambda key: (_key_text(key), type(key).__name__))


def _key_text(key: Any) -> str:
    """The text a feature key sorts by: ``str(key)``, except that sets (alone or in tuples)
    list their members sorted; ``str`` of a set follows its members' hash order, which
    ``PYTHONHASHSEED`` changes, and the order of the features decides each learner's subset."""
    if isinstance(key, set | frozenset):
        members = sorted(_member_text(member) for member in key)
        return f"{type(key).__name__}({{{', '.join(members)}}})"
    if isinstance(key, tuple) and _holds_a_set(key):
        members = [_member_text(member) for member in key]
        return f"({', '.join(members)}{',' if len(members) == 1 else ''})"
    return str(key)


def _member_text(member: Any) -> str:
    return _key_text(member) if isinstance(member, set | frozenset | tuple) else repr(member)


def _holds_a_set(key: tuple) -> bool:
    return any(
        isinstance(m, set | frozenset) or (isinstance(m, tuple) and _holds_a_set(m)) for m in key
    )


def check_width(what: str, d: int, n_features: int | None, who: str) -> None:
    """Raise a ``ValueError`` if ``what`` (``x`` or ``X``) has ``d`` features and the learner
    ``who`` was started with another number ``n_features`` (``None``: not started)."""
    if n_features is not None and d != n_features:
        raise ValueError(f"{who}: {what} has {d} features, the model was started with {n_features}")


def columns_in_order(frame: Any, names: Sequence[Hashable]) -> Any:
    """The columns of the DataFrame ``frame`` named ``names``, in that order, each found with
    bools apart from 0 and 1 and taken by position (``frame[[True, False]]`` is a mask of rows
    to pandas). The columns must be distinct and hold every name."""
    where = {bool_apart(c): j for j, c in enumerate(frame.columns)}
    return frame.iloc[:, [where[bool_apart(name)] for name in names]]


def frame_columns(X: Any) -> list[Hashable] | None:
    """The column names of a pandas DataFrame (``None`` for any other matrix)."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "to_numpy"):
        return None
    return list(columns)


def named_columns(columns: list[Hashable] | None) -> bool:
    """Whether a frame's ``columns`` name what they hold: not pandas' default ``0..n-1`` (bools
    are names: ``[False, True]`` is not ``[0, 1]``)."""
    return columns is not None and not is_positions(columns)


def _sums_narrow(dtype: np.dtype) -> bool:
    """Whether numbers of ``dtype`` add up otherwise than as float64 (integers wrap, booleans
    stay True, narrower floats round or overflow)."""
    return dtype.kind in "biu" or (dtype.kind == "f" and dtype.itemsize < 8)


class Rows:
    """Row access to a validated dense or CSR matrix, densifying one sparse row at a time."""

    def __init__(self, X: Any, n: int, d: int, sparse: bool):
        self.X, self.n, self.d, self.sparse = X, n, d, sparse

    @classmethod
    def of(cls, X: Any, name: str, allow_missing: bool = False) -> Rows:
        """Check ``X`` (dense or scipy sparse, 2-D, at least one feature, values as for
        :func:`check_values`) and wrap it; errors name ``name``, the row and the column."""
        if hasattr(X, "tocsr") and hasattr(X, "nnz"):
            if getattr(X, "format", "csr") != "csr" and _sums_narrow(X.dtype):
                # a conversion to CSR sums the entries stored twice (COO's) in their own dtype:
                # widened first, as below
                X = X.astype(np.float64)
            X = X.tocsr()
            if len(X.shape) != 2:
                raise ValueError(f"{name}: X must be 2-D, got shape {X.shape}")
            if X.shape[1] == 0:
                raise ValueError(f"{name}: X has no features")
            if not X.has_canonical_format:
                # entries stored twice add up, as scipy reads them (X.toarray()); rows are read
                # by assignment, which would keep the last one only. A copy: X is the caller's.
                # Integers and narrower floats are summed as float64, as every value is learned
                # and as scikit-learn's check_array gives them to the adapters: int8 100 + 100
                # would wrap to -56, and bool True + True stay True.
                X = X.astype(np.float64) if _sums_narrow(X.data.dtype) else X.copy()
                X.sum_duplicates()
            if X.data.dtype.kind == "c" and X.nnz:
                # as_floats would name the position in X.data, not the row and the column
                imaginary = np.flatnonzero(X.data.imag)
                k = int(imaginary[0]) if imaginary.size else 0
                i, j = entry_position(k, X.shape[1], X.indptr, X.indices)
                raise TypeError(
                    f"{name}: X must be real numbers: row {i}, feature {j} is "
                    f"{X.data[k].item()!r} (in a sparse matrix of dtype {X.data.dtype})"
                )
            data = as_floats(X.data, f"{name}: X")
            k = _first_bad(data, allow_missing)
            if k is not None:
                i, j = entry_position(k, X.shape[1], X.indptr, X.indices)
                where = f"row {i}, feature {j}"
                raise ValueError(f"{name}: {_problem(float(data[k]), where, allow_missing, 'X')}")
            parts = (writable(data), writable(X.indices), writable(X.indptr))
            return cls(parts, X.shape[0], X.shape[1], True)
        columns = frame_columns(X)
        if columns is not None:
            # a DataFrame's pd.NA (a gap in a nullable column) is a missing value, as in a dict
            # (NumPy refused the NAType); float columns come out as they are
            X = X.to_numpy(na_value=np.nan)
            if not named_columns(columns):
                columns = None  # pandas' default names: the positions
        X = as_floats(X, f"{name}: X", columns)
        if X.ndim != 2:
            raise ValueError(f"{name}: X must be 2-D, got shape {X.shape}")
        if X.shape[1] == 0:
            raise ValueError(f"{name}: X has no features")
        k = _first_bad(X.ravel(), allow_missing)
        if k is not None:
            i, j = entry_position(k, X.shape[1])
            # a frame's column by its name, as a dict's value by its key
            where = f"row {i}, " + (f"column {columns[j]!r}" if columns else f"feature {j}")
            raise ValueError(f"{name}: {_problem(float(X.flat[k]), where, allow_missing, 'X')}")
        return cls(X, X.shape[0], X.shape[1], False)

    def block_rows(self, most: int) -> int:
        """Rows per :meth:`block` for a caller that takes at most ``most`` at a time: fewer for a
        wide sparse matrix, whose blocks are dense, at most :data:`DENSE_BLOCK_FLOATS` floats
        (rows of 47,236 features, 4,096 at a time, took 1.7 GB, where the non-zeros took 3.5
        MB)."""
        if not self.sparse:
            return most
        return max(1, min(most, DENSE_BLOCK_FLOATS // max(self.d, 1)))

    def block(self, start: int, size: int) -> np.ndarray:
        """Rows ``start .. start + size - 1`` (fewer at the end) as a C-contiguous float64
        matrix."""
        stop = min(start + size, self.n)
        if not self.sparse:
            return writable(self.X[start:stop])
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


#: Floats of a dense block of a sparse matrix at the most (16 MB; :meth:`Rows.block_rows`).
DENSE_BLOCK_FLOATS = 1 << 21


def writable(a: np.ndarray) -> np.ndarray:
    """``a`` as the kernels take it: C-contiguous, aligned and writable, copied only if it is
    not. A read-only array (``np.load(..., mmap_mode="r")``, ``np.frombuffer``) is another type
    to Numba: the driver's kernels, compiled for writable ones, refused it with a
    "mismatch of argument types", and the label rankers' were compiled again for it."""
    return np.require(a, requirements=("C", "A", "W"))


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
