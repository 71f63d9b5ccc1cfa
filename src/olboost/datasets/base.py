"""The in-memory multi-label data set returned by the loaders."""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from olboost.feedback import bool_apart, is_bool
from olboost.online.inputs import columns_in_order, frame_columns

__all__ = ["MulticlassDataset", "MultiLabelDataset", "check_path", "shared_candidates"]


def check_path(value: object, name: str) -> None:
    """Raise a ``TypeError`` naming the parameter ``name`` unless ``value`` is a path (a string
    or an ``os.PathLike``): ``Path(3)`` says only "expected str, bytes or os.PathLike object"."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(
            f"{name} must be a path (str or os.PathLike), got {type(value).__name__}: {value!r}"
        )


def shared_candidates(relative: Path) -> list[Path]:
    """Where the development data ``relative`` (e.g. ``../shared/datasets/enron_foldering``)
    may be: beside the clone of the repository when this package runs from its source tree,
    then beside the working directory. An installed package has no clone: its place in
    ``site-packages`` names no data directory worth searching or showing in a message."""
    package = Path(__file__).resolve().parents[1]
    root = package.parents[1]
    beside = []
    if package.parent.name == "src" and (root / "pyproject.toml").is_file():
        beside.append((root / relative).resolve())
    return list(dict.fromkeys([*beside, (Path.cwd() / relative).resolve()]))


class _Table:
    """Row and column counts of a data set's feature matrix ``X`` (dense or sparse), and its
    missing values (NaN)."""

    X: np.ndarray | sp.csr_array
    feature_names: list[str]
    name: str

    def missing_counts(self) -> dict[str, int]:
        """Number of missing values (NaN) of each feature column that has any.

        Returns
        -------
        dict of str to int
            Feature name -> count, in column order; empty when nothing is missing.
        """
        if sp.issparse(self.X):
            nan = np.isnan(self.X.data)
            counts = np.bincount(self.X.indices[nan], minlength=self.X.shape[1])
        else:
            counts = np.isnan(self.X).sum(axis=0)
        return {self.feature_names[j]: int(counts[j]) for j in np.flatnonzero(counts).tolist()}

    @property
    def n_missing(self) -> int:
        """Total number of missing values (NaN) in ``X``."""
        data = self.X.data if sp.issparse(self.X) else self.X
        return int(np.isnan(data).sum())

    def missing_summary(self, limit: int = 10) -> str:
        """One line saying how many values are missing, and where.

        Parameters
        ----------
        limit : int
            Most columns listed by name (those with the most missing values first).

        Returns
        -------
        str
            ``"no missing values"``, or e.g. ``"7 missing values (NaN) in 2 of 5 feature
            columns: f1: 5, f3: 2"``.
        """
        counts = self.missing_counts()
        if not counts:
            return "no missing values"
        total = sum(counts.values())
        top = sorted(counts.items(), key=lambda item: -item[1])[:limit]
        more = f", ... ({len(counts) - limit} more columns)" if len(counts) > limit else ""
        return (
            f"{total} missing value{'' if total == 1 else 's'} (NaN) in {len(counts)} of "
            f"{self.X.shape[1]} feature column{'' if self.X.shape[1] == 1 else 's'}: "
            + ", ".join(f"{name}: {n}" for name, n in top)
            + more
        )

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])


def _check_unique(names: list[str], what: str) -> None:
    """Names address columns, labels and classes by name: a repeated one would merge two."""
    if isinstance(names, str | bytes):
        # a string is a sequence of its characters: "xy" was taken for two classes
        raise TypeError(f"{what} must be a list of names, got the string {names!r}")
    seen: set[str] = set()
    for name in names:
        try:
            repeated = name in seen
        except TypeError:
            raise TypeError(
                f"{what} must hold hashable names, got {type(name).__name__}: {name!r}"
            ) from None
        if repeated:
            raise ValueError(f"{what} must not repeat a name, got {name!r} twice")
        seen.add(name)


def _in_named_order(M: object, names: list, what: str, role: str) -> object:
    """``M``, or the columns of a pandas DataFrame ``M`` in the order of ``names`` where its
    columns are those names (the models read a frame by column name, so a data set must too).
    A frame whose columns are integers other than the names (pandas' ``0 .. n - 1`` of a file
    read without a header, or a slice of it), like any other matrix, is taken by position;
    columns naming anything else are a ``ValueError``."""
    columns = frame_columns(M)
    if columns is None:
        return M
    _check_unique(names, what)
    keys, named = [bool_apart(c) for c in columns], [bool_apart(n) for n in names]
    if keys == named:
        return M
    if len(keys) == len(named) and set(keys) == set(named):
        return columns_in_order(M, names)
    if all(_whole_number(c) for c in columns):
        return M
    raise ValueError(
        f"{role} is a DataFrame whose columns {columns[:5]}... are not the {what} "
        f"{list(names)[:5]}...: name them alike (in any order), or pass an array"
    )


def _whole_number(value: object) -> bool:
    """Whether a column name is a number with no fraction (not a bool), as pandas numbers the
    columns of a file read without a header (``0``, ``1``, ... or ``0.0``, ``1.0``, ...)."""
    return isinstance(value, numbers.Real) and not is_bool(value) and float(value).is_integer()


def _check_count(n: object, what: str) -> None:
    """A count of rows: an integer (not a bool) >= 0."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{what} must be an integer, got {type(n).__name__}: {n!r}")
    if n < 0:
        raise ValueError(f"{what} must be >= 0, got {n}")


def _check_nominal(X: np.ndarray | sp.csr_array, nominal: dict[int, list[str]]) -> None:
    """Each nominal column exists and holds integer codes of its categories (or NaN, missing);
    all columns at once (a sparse matrix by its stored values: an implicit zero is code 0)."""
    if not nominal:
        return
    d = X.shape[1]
    for col in nominal:
        if isinstance(col, bool) or not isinstance(col, numbers.Integral):
            raise TypeError(
                f"nominal must map column indices (integers) to category names, got the key {col!r}"
            )
        if not 0 <= col < d:
            raise ValueError(f"nominal column {col} outside [0, {d})")
    cardinality = np.full(d, -1, dtype=np.int64)
    for col, cats in nominal.items():
        cardinality[col] = len(cats)
    if sp.issparse(X):
        csr = sp.csr_array(X)
        columns, values = csr.indices, csr.data
    else:
        picked = np.asarray(sorted(nominal), dtype=np.int64)
        block = X[:, picked]
        columns, values = np.broadcast_to(picked, block.shape).ravel(), block.ravel()
    limit = cardinality[columns]
    nominal_entry = limit >= 0
    bad = nominal_entry & ~np.isnan(values) & ((values < 0) | (values >= limit))
    if bad.any():
        col = int(columns[np.flatnonzero(bad)[0]])
        raise ValueError(f"codes of nominal column {col} outside [0, {cardinality[col]})")
    bad = nominal_entry & ~np.isnan(values) & (values != np.floor(values))
    if bad.any():
        first = np.flatnonzero(bad)[0]
        raise ValueError(
            f"codes of nominal column {int(columns[first])} must be integers, got {values[first]:g}"
        )


@dataclass(eq=False, repr=False)
class MultiLabelDataset(_Table):
    """A multi-label data set: a feature matrix, a boolean label matrix and their names.

    Rows are instances in stream order. When the data come with a train/test split, the first
    ``n_train`` rows are the train split and the remaining rows the test split.

    Parameters
    ----------
    name : str
        Short name of the data set.
    X : numpy.ndarray or scipy.sparse.csr_array
        float64 features, shape (n, d). Nominal features hold category codes 0..m-1 (see
        ``nominal``); missing values are NaN. Repeated entries of a sparse matrix are summed;
        a pandas DataFrame whose columns are the ``feature_names`` (in any order) is read by
        name, one whose columns are integers (a file read without a header) by position.
    Y : numpy.ndarray
        bool label matrix, shape (n, k); ``Y[i, j]`` says whether label ``j`` is relevant to
        row ``i``. A DataFrame is read by the ``label_names``, as ``X``.
    feature_names : list of str
        The d feature names.
    label_names : list of str
        The k label names, in the order of the MULAN XML file.
    nominal : dict of int to list of str
        Feature column -> category names of the nominal features (code ``c`` is ``categories[c]``).
    n_train : int or None
        Number of train rows at the start; None when the rows are a single stream with no split.

    Examples
    --------
    >>> import numpy as np
    >>> ds = MultiLabelDataset("toy", np.array([[0.5], [1.5]]), np.array([[True, False],
    ...                        [True, True]]), ["x"], ["a", "b"])
    >>> [(x.tolist(), sorted(y)) for x, y in ds]
    [([0.5], ['a']), ([1.5], ['a', 'b'])]
    >>> ds.stats()["mean_labels"]
    1.5
    >>> ds.missing_counts(), ds.missing_summary()
    ({}, 'no missing values')
    """

    name: str
    X: np.ndarray | sp.csr_array
    Y: np.ndarray
    feature_names: list[str]
    label_names: list[str]
    nominal: dict[int, list[str]] = field(default_factory=dict)
    n_train: int | None = None

    def __post_init__(self) -> None:
        # Check shapes once here so every consumer can rely on them. Rows are read through a
        # CSR matrix's row pointers (a CSC matrix's would give its columns) and as float64.
        self.Y = np.asarray(_in_named_order(self.Y, self.label_names, "label_names", "Y"))
        if sp.issparse(self.X):
            if self.X.dtype != np.float64:
                # widened before any conversion sums repeated entries: int8's 100 + 100 was -56
                self.X = self.X.astype(np.float64)
            if not isinstance(self.X, sp.csr_array):  # a csr_matrix too: the array API
                self.X = sp.csr_array(self.X)
            if not self.X.has_canonical_format:
                # repeated entries mean their sum in float64 (SciPy's rule, and the models'
                # array path): summed once here, so that iterating the rows gives that sum too,
                # not the last entry
                self.X = self.X.copy()
                self.X.sum_duplicates()
        else:
            self.X = np.asarray(
                _in_named_order(self.X, self.feature_names, "feature_names", "X"),
                dtype=np.float64,
            )
        if self.X.ndim != 2 or self.Y.ndim != 2:
            raise ValueError("X and Y must be 2-D")
        if self.Y.dtype != np.bool_:
            raise ValueError(f"Y must be a bool array, got {self.Y.dtype}")
        if self.X.shape[0] != self.Y.shape[0]:
            raise ValueError(f"X has {self.X.shape[0]} rows but Y has {self.Y.shape[0]}")
        if len(self.feature_names) != self.X.shape[1]:
            raise ValueError(
                f"{len(self.feature_names)} feature names for {self.X.shape[1]} columns"
            )
        if len(self.label_names) != self.Y.shape[1]:
            raise ValueError(f"{len(self.label_names)} label names for {self.Y.shape[1]} labels")
        _check_unique(self.feature_names, "feature_names")
        _check_unique(self.label_names, "label_names")
        if self.n_train is not None:
            if isinstance(self.n_train, bool) or not isinstance(self.n_train, numbers.Integral):
                raise TypeError(f"n_train must be an integer or None, got {self.n_train!r}")
            if not 0 <= self.n_train <= self.X.shape[0]:
                raise ValueError(f"n_train={self.n_train} outside [0, {self.X.shape[0]}]")
        _check_nominal(self.X, self.nominal)

    def __repr__(self) -> str:
        return (
            f"MultiLabelDataset(name={self.name!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, n_labels={self.n_labels}, "
            f"sparse={self.is_sparse}, n_train={self.n_train})"
        )

    @property
    def n_labels(self) -> int:
        """Number of labels k."""
        return int(self.Y.shape[1])

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a sparse matrix."""
        return sp.issparse(self.X)

    @property
    def nominal_cardinalities(self) -> dict[int, int]:
        """Feature column -> number of categories, for the nominal features."""
        return {col: len(cats) for col, cats in self.nominal.items()}

    def __len__(self) -> int:
        return self.n_samples

    def __iter__(self) -> Iterator[tuple[np.ndarray, frozenset[str]]]:
        """Yield ``(x, y)`` per row: a dense float64 feature vector and the relevant label names."""
        names = self.label_names
        Y = self.Y
        if self.is_sparse:
            X = self.X
            indptr, indices, data = X.indptr, X.indices, X.data
            d = self.n_features
            for i in range(self.n_samples):
                x = np.zeros(d, dtype=np.float64)
                lo, hi = indptr[i], indptr[i + 1]
                x[indices[lo:hi]] = data[lo:hi]
                yield x, frozenset(names[j] for j in np.flatnonzero(Y[i]))
        else:
            for i in range(self.n_samples):
                # A copy, so a consumer that mutates x cannot corrupt the data set.
                yield self.X[i].copy(), frozenset(names[j] for j in np.flatnonzero(Y[i]))

    def _rows(self, start: int, stop: int, name: str) -> MultiLabelDataset:
        X = self.X[start:stop, :] if self.is_sparse else self.X[start:stop]
        return MultiLabelDataset(
            name=name,
            X=X,
            Y=self.Y[start:stop],
            # the names are the split's own (X and Y are views, as a split of a large set
            # must not copy them)
            feature_names=list(self.feature_names),
            label_names=list(self.label_names),
            nominal={col: list(cats) for col, cats in self.nominal.items()},
            n_train=None,
        )

    def _require_split(self) -> int:
        if self.n_train is None:
            raise ValueError(f"data set {self.name!r} has no train/test split (n_train is None)")
        return self.n_train

    @property
    def train(self) -> MultiLabelDataset:
        """The train split (rows ``[0, n_train)``) as a data set without a split."""
        return self._rows(0, self._require_split(), f"{self.name}-train")

    @property
    def test(self) -> MultiLabelDataset:
        """The test split (rows ``[n_train, n)``) as a data set without a split."""
        return self._rows(self._require_split(), self.n_samples, f"{self.name}-test")

    def stats(self) -> dict[str, int | float]:
        """Summary counts.

        Returns
        -------
        dict
            ``rows``, ``features``, ``labels``, and ``min_labels``, ``mean_labels``,
            ``max_labels``: the minimum, mean and maximum number of relevant labels per row
            (0 for an empty data set).
        """
        per_row = self.Y.sum(axis=1)
        empty = len(per_row) == 0
        return {
            "rows": self.n_samples,
            "features": self.n_features,
            "labels": self.n_labels,
            "min_labels": 0 if empty else int(per_row.min()),
            "mean_labels": 0.0 if empty else float(per_row.mean()),
            "max_labels": 0 if empty else int(per_row.max()),
        }


@dataclass(eq=False, repr=False)
class MulticlassDataset(_Table):
    """A multiclass data set: a feature matrix, integer class codes and their names.

    Rows are instances in stream order.

    Parameters
    ----------
    name : str
        Short name of the data set.
    X : numpy.ndarray
        float64 features, shape (n, d). Nominal features hold category codes 0..m-1 (see
        ``nominal``); missing values, if kept, are NaN. A pandas DataFrame whose columns are the
        ``feature_names`` (in any order) is read by name; one whose columns are integers (a
        file read without a header), by position.
    y : numpy.ndarray
        int64 class codes 0..k-1, shape (n,); code ``c`` is ``class_names[c]`` (codes, not
        names: a ``y`` of strings is refused).
    feature_names : list of str
        The d feature names.
    class_names : list of str
        The k class names. The loaders list them in order of first appearance in the file.
    nominal : dict of int to list of str
        Feature column -> category names of the nominal features (code ``c`` is
        ``categories[c]``); the loaders list categories in order of first appearance.
    missing : str
        How missing values were handled (``"none"`` when the data have none).
    notes : list of str
        Anything else a user should know about how the file was read (a dropped row, a
        reordering).

    Examples
    --------
    >>> import numpy as np
    >>> ds = MulticlassDataset("toy", np.array([[0.0, 1.5], [1.0, 2.5], [0.0, 0.5]]),
    ...                        np.array([1, 0, 1]), ["colour", "size"], ["big", "small"],
    ...                        nominal={0: ["red", "blue"]})
    >>> [(x.tolist(), y) for x, y in ds]
    [([0.0, 1.5], 'small'), ([1.0, 2.5], 'big'), ([0.0, 0.5], 'small')]
    >>> ds.class_counts()
    {'big': 1, 'small': 2}
    >>> ds.shuffled(0).y.tolist()
    [1, 1, 0]
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    class_names: list[str]
    nominal: dict[int, list[str]] = field(default_factory=dict)
    missing: str = "none"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Check once here so every consumer can rely on shapes and codes.
        if sp.issparse(self.X):
            raise TypeError(
                "a MulticlassDataset's X is a dense array (a sparse matrix's rows are read by "
                "MultiLabelDataset); pass X.toarray()"
            )
        self.X = np.asarray(
            _in_named_order(self.X, self.feature_names, "feature_names", "X"), dtype=np.float64
        )
        y = np.asarray(self.y)
        if y.dtype.kind in "USO" and y.size:
            # class names read from a file ("1", "0") are not codes: int("1") took the name
            # "1" for code 1, which class_names may give to another class; numbers are taken
            # as in an array of numbers (floats off an integer refused below)
            for v in y.ravel():
                if not isinstance(v, numbers.Real | np.bool_):
                    raise TypeError(
                        f"y holds class codes 0..k-1 (code c is class_names[c]), got "
                        f"{type(v).__name__}: {v!r}; map names to codes first"
                    )
            y = y.astype(np.float64)
        if y.dtype.kind == "f" and y.size and not np.array_equal(y, np.floor(y)):
            # the int64 cast truncated them: 0.4 and 1.9 became classes 0 and 1
            bad = y.ravel()[np.flatnonzero(y.ravel() != np.floor(y.ravel()))[0]]
            raise ValueError(f"class codes must be integers, got {float(bad)!r}")
        self.y = y.astype(np.int64)
        if self.X.ndim != 2 or self.y.ndim != 1:
            raise ValueError(f"X must be 2-D and y 1-D, got {self.X.ndim}-D and {self.y.ndim}-D")
        if self.X.shape[0] != self.y.shape[0]:
            raise ValueError(f"X has {self.X.shape[0]} rows but y has {self.y.shape[0]}")
        if len(self.feature_names) != self.X.shape[1]:
            raise ValueError(
                f"{len(self.feature_names)} feature names for {self.X.shape[1]} columns"
            )
        _check_unique(self.feature_names, "feature_names")
        _check_unique(self.class_names, "class_names")
        if len(self.y) and (self.y.min() < 0 or self.y.max() >= len(self.class_names)):
            raise ValueError(f"class codes must lie in [0, {len(self.class_names)})")
        _check_nominal(self.X, self.nominal)

    def __repr__(self) -> str:
        return (
            f"MulticlassDataset(name={self.name!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, n_classes={self.n_classes}, "
            f"n_nominal={len(self.nominal)})"
        )

    @property
    def n_classes(self) -> int:
        """Number of classes k (including classes with no row)."""
        return len(self.class_names)

    @property
    def nominal_cardinalities(self) -> dict[int, int]:
        """Feature column -> number of categories, for the nominal features."""
        return {col: len(cats) for col, cats in self.nominal.items()}

    def class_counts(self) -> dict[str, int]:
        """Number of rows of each class, in the order of ``class_names``."""
        counts = np.bincount(self.y, minlength=self.n_classes)
        return {name: int(c) for name, c in zip(self.class_names, counts, strict=True)}

    def __len__(self) -> int:
        return self.n_samples

    def __iter__(self) -> Iterator[tuple[np.ndarray, str]]:
        """Yield ``(x, label)`` per row: a float64 feature vector (a copy) and the class name."""
        names = self.class_names
        for i in range(self.n_samples):
            # A copy, so a consumer that mutates x cannot corrupt the data set.
            yield self.X[i].copy(), names[self.y[i]]

    def _take(self, rows: np.ndarray | slice, note: str | None) -> MulticlassDataset:
        return MulticlassDataset(
            name=self.name,
            X=self.X[rows].copy(),
            y=self.y[rows].copy(),
            feature_names=list(self.feature_names),
            class_names=list(self.class_names),
            nominal={col: list(cats) for col, cats in self.nominal.items()},
            missing=self.missing,
            notes=[*self.notes, note] if note else list(self.notes),
        )

    def shuffled(self, seed: int) -> MulticlassDataset:
        """The rows in a seeded random order (the paper averages over 27 such reorderings).

        Parameters
        ----------
        seed : int
            Seed of ``numpy.random.default_rng``; the same seed always gives the same order.

        Returns
        -------
        MulticlassDataset
            A copy with rows permuted; names, codes and ``class_names`` are unchanged.
        """
        order = np.random.default_rng(seed).permutation(self.n_samples)
        return self._take(order, f"rows shuffled with numpy.random.default_rng({seed})")

    def head(self, n: int) -> MulticlassDataset:
        """A copy holding the first ``n`` rows (all rows if ``n`` exceeds ``n_samples``)."""
        _check_count(n, "n")
        return self._take(slice(0, n), None)

    def merge_classes(self, mapping: dict[str, str]) -> MulticlassDataset:
        """A copy in which each class ``old`` of ``mapping`` is relabelled ``mapping[old]``.

        The merged-away classes are removed from ``class_names`` and the codes renumbered, other
        classes keeping their relative order. The paper's Nursery has 4 classes: use
        ``merge_classes({"recommend": "very_recom"})`` (2 rows) to match it.

        Parameters
        ----------
        mapping : dict of str to str
            Old class name -> existing class name to merge it into.

        Returns
        -------
        MulticlassDataset
            The relabelled copy.

        Raises
        ------
        ValueError
            If a name of ``mapping`` is not a class or a target is itself merged away.
        """
        for old, new in mapping.items():
            for cls in (old, new):
                if cls not in self.class_names:
                    raise ValueError(f"{cls!r} is not a class of {self.name!r}: {self.class_names}")
            if new in mapping:
                raise ValueError(f"cannot merge {old!r} into {new!r}, which is merged away too")
        kept = [c for c in self.class_names if c not in mapping]
        code = {c: kept.index(mapping.get(c, c)) for c in self.class_names}
        table = np.array([code[c] for c in self.class_names], dtype=np.int64)
        merged = self._take(slice(None), f"classes merged: {mapping}")
        merged.y = table[self.y]
        merged.class_names = kept
        return merged
