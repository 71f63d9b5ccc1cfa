"""UCI multiclass data sets of the online multiclass boosting experiments.

Jung, Goetz & Tewari, "Online Multiclass Boosting", NIPS 2017, Sec. 5 and Appendix E (Table 2)
run their boosters on Balance, Mice, Cars, Mushroom, Nursery, ISOLET and Movement (the PUC-Rio
wearable HAR data). ``load_uci(name)`` reads the five small sets from files bundled in
``olboost/datasets/data/uci`` (byte-for-byte copies, gzip-compressed); ``load_uci(path)`` reads
the same UCI files, and the HAR file, which is too large to bundle, from disk. ISOLET is not
provided. Sources and citations are in ``olboost/datasets/data/CITATION.md``.

Conventions of every loader here:

* ``class_names`` and the categories of every nominal feature are listed **in order of first
  appearance in the file** (a stable order: the same file always gives the same codes).
  Categories that never occur in the file (``veil-type=u`` of mushroom) are not listed.
* Category names and class names are the raw strings of the file (``"vhigh"``, ``"5more"``, not
  the spellings of the ``.names`` files).
* ``missing="paper"`` handles missing values as the paper did; ``missing="nan"`` keeps them as
  NaN. What happened is recorded in the data set's ``missing`` and ``notes`` fields.
"""

from __future__ import annotations

import csv
import os
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from olboost.datasets._text import (
    _decode,
    _error,
    clipped,
    first_python_only_number,
    memory_for,
    python_only_number,
    read_bytes,
)
from olboost.datasets.base import MulticlassDataset, check_path
from olboost.online.inputs import MAX_ABS_FEATURE

__all__ = ["BUNDLED_UCI", "MISSING_MODES", "MulticlassDataset", "load_uci"]

#: Data sets shipped in ``olboost/datasets/data/uci`` (see ``data/CITATION.md``).
BUNDLED_UCI: tuple[str, ...] = ("balance", "car", "mushroom", "nursery", "mice")

#: Accepted values of ``load_uci(..., missing=...)``.
MISSING_MODES: tuple[str, ...] = ("paper", "nan")

# Field values that mean "missing" in the UCI files: "?" (mushroom) and an empty field (mice).
# A numeric "nan" (which NumPy parses) is missing too, as in the loaders of MULAN files.
_MISSING_TOKENS = frozenset({"", "?"})


# --------------------------------------------------------------------------------------------------
# File formats


@dataclass(frozen=True)
class _Format:
    """How to read one UCI file: its layout, which columns to drop, and its known defects."""

    name: str
    delimiter: str
    header: bool
    # Column names of a headerless file (class column included).
    columns: tuple[str, ...] = ()
    class_column: str = "class"
    drop: tuple[str, ...] = ()
    nominal: bool = False
    decimal_comma: bool = False
    # (column, exact raw value) pairs known to be malformed in the published file: such a value
    # is reported with a warning and its row dropped ("paper") or the value set NaN ("nan").
    # Any other unparseable value is an error.
    known_defects: tuple[tuple[str, str], ...] = ()
    paper_note: str = ""


_MUSHROOM_ATTRIBUTES = (
    "cap-shape", "cap-surface", "cap-color", "bruises?", "odor", "gill-attachment",
    "gill-spacing", "gill-size", "gill-color", "stalk-shape", "stalk-root",
    "stalk-surface-above-ring", "stalk-surface-below-ring", "stalk-color-above-ring",
    "stalk-color-below-ring", "veil-type", "veil-color", "ring-number", "ring-type",
    "spore-print-color", "population", "habitat",
)  # fmt: skip

_FORMATS = {
    "balance": _Format(
        "balance",
        ",",
        header=False,
        columns=("class", "left-weight", "left-distance", "right-weight", "right-distance"),
    ),
    "car": _Format(
        "car",
        ",",
        header=False,
        columns=("buying", "maint", "doors", "persons", "lug_boot", "safety", "class"),
        nominal=True,
    ),
    "mushroom": _Format(
        "mushroom", ",", header=False, columns=("class", *_MUSHROOM_ATTRIBUTES), nominal=True
    ),
    "nursery": _Format(
        "nursery",
        ",",
        header=False,
        columns=(
            "parents",
            "has_nurs",
            "form",
            "children",
            "housing",
            "finance",
            "social",
            "health",
            "class",
        ),
        nominal=True,
    ),
    "mice": _Format(
        "mice",
        ",",
        header=True,
        # Genotype, Treatment and Behavior together determine the class; MouseID names the mouse.
        drop=("MouseID", "Genotype", "Treatment", "Behavior"),
        paper_note="as in Jung, Goetz & Tewari (2017), Table 2",
    ),
    "har": _Format(
        "har",
        ";",
        header=True,
        # "User information was removed, leaving only sensor position predictors" (Table 2).
        drop=("user", "gender", "age", "how_tall_in_meters", "weight", "body_mass_index"),
        decimal_comma=True,
        known_defects=(("z4", "-14420-11-2011 04:50:23.713"),),
        paper_note=(
            "the paper's Table 2: 'Single data point with missing value removed' (it reports "
            "165631 rows; the file has 165633, so 165632 remain)"
        ),
    ),
}

# File name (without .gz) -> format name. Paths are recognised by their file name.
_FILE_NAMES = {
    "balance-scale.data": "balance",
    "car.data": "car",
    "agaricus-lepiota.data": "mushroom",
    "nursery.data": "nursery",
    "Data_Cortex_Nuclear.derived.csv": "mice",
    "dataset-har-PUC-Rio-ugulino.csv": "har",
}
_BUNDLED_FILES = {fmt: f"{file}.gz" for file, fmt in _FILE_NAMES.items() if fmt in BUNDLED_UCI}
_ALIASES = {"balance-scale": "balance", "cars": "car", "nurse": "nursery", "mice-protein": "mice"}


def _split_rows(text: str, fmt: _Format, path: str) -> tuple[list[str], list[list[str]], list[int]]:
    """Split the text into the column names, the columns of raw fields, and each row's file line.

    Line endings may be LF, CRLF or, in old Mac files, CR alone (as the ARFF reader and
    Python's universal newlines take them); blank lines (nursery.data ends with one) carry no
    row. Fields may be quoted as in CSV (``"a,b"`` one field, ``""`` a quote in it; a field
    may not span lines): a file saved again by a spreadsheet quotes them (``"vhigh"``), which
    a split at the delimiters kept as other categories than the unquoted ones.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    delimiter = fmt.delimiter
    # CSV's rules only where a quote is (the UCI files have none, and a split is several
    # times as fast)
    quoted = '"' in text

    def split(i: int) -> list[str]:
        if not quoted:
            return lines[i].split(delimiter)
        try:
            return next(csv.reader([lines[i]], delimiter=delimiter, strict=True))
        except csv.Error as exc:
            raise _error(path, i + 1, f"malformed quoted field ({exc})") from None

    if fmt.header:
        if not lines[0].strip():
            raise _error(path, 1, "missing header line")
        columns = [c.strip() for c in split(0)]
        first = 1
    else:
        columns = list(fmt.columns)
        first = 0
    for col in (*fmt.drop, fmt.class_column):
        if col not in columns:
            raise _error(path, 1, f"no column {col!r}; the columns are {columns}")
    width = len(columns)
    data = [i for i in range(first, len(lines)) if lines[i] and not lines[i].isspace()]
    if not data:
        raise _error(path, len(lines), "no data rows")
    row_lines = [i + 1 for i in data]
    if quoted:
        rows = [split(i) for i in data]
        for i, row in zip(data, rows, strict=True):
            if len(row) != width:
                raise _error(path, i + 1, f"{len(row)} fields, expected {width}")
        return columns, [[row[j] for row in rows] for j in range(width)], row_lines
    # Count delimiters per line (cheap), then split all rows in one call and slice columns out.
    for i in data:
        if lines[i].count(delimiter) != width - 1:
            n = lines[i].count(delimiter) + 1
            raise _error(path, i + 1, f"{n} fields, expected {width}")
    fields = delimiter.join([lines[i] for i in data]).split(delimiter)
    return columns, [fields[j::width] for j in range(width)], row_lines


def _codes(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """Integer codes of ``values`` and the distinct values in order of first appearance, with
    surrounding whitespace stripped (as numbers, missing markers and header names are), so
    ``"unacc "`` is not a class of its own."""
    values = [v.strip() for v in values]
    index: dict[str, int] = {}
    for v in values:
        if v not in index:
            index[v] = len(index)
    return np.fromiter((index[v] for v in values), np.int64, len(values)), list(index)


def _numeric(
    values: list[str], column: str, fmt: _Format, path: str, row_lines: list[int]
) -> tuple[np.ndarray, list[int]]:
    """Parse one numeric column; missing tokens become NaN.

    Returns the float64 column and the row indices whose value is a known defect of the file
    (those are NaN too).
    """
    if fmt.decimal_comma:
        joined = "\n".join(values)  # one replace over the column beats one per value
        if "," in joined:
            values = joined.replace(",", ".").split("\n")
    try:
        # numpy parses the strings itself, which is much faster than float() per value.
        out, defects = np.array(values, dtype=np.float64), []
        # numpy reads what float() reads, "1_0" and other scripts' digits too: the per-value
        # route below refuses those, in file order with any other bad value
        if first_python_only_number(values) is not None:
            raise ValueError("not a CSV number")
    except ValueError:
        out = np.empty(len(values), dtype=np.float64)
        defects = []
        known = {value for col, value in fmt.known_defects if col == column}
        for i, v in enumerate(values):
            if v.strip() in _MISSING_TOKENS:
                out[i] = np.nan
                continue
            try:
                if python_only_number(v):
                    raise ValueError(v)
                out[i] = float(v)
            except ValueError:
                if v not in known:
                    message = f"{column}: {clipped(v)!r} is not a number"
                    raise _error(path, row_lines[i], message) from None
                out[i] = np.nan
                defects.append(i)
    # one scan for both refusals (infinities are beyond the bound too; NaN, missing, is not)
    bad = np.flatnonzero(np.abs(out) > MAX_ABS_FEATURE)
    if len(bad):
        infinite = bad[np.isinf(out[bad])]
        i = int(infinite[0] if len(infinite) else bad[0])  # an infinity first, as named before
        if np.isinf(out[i]):
            # "inf" and overflowing numbers ("1e999") parse as infinities, which no model takes
            problem = (
                f"{clipped(values[i].strip())!r} is infinite or overflows float64 (a missing "
                "value is an empty field, '?' or 'nan')"
            )
        else:
            # every model refuses it, naming only a row of the shuffled stream: name the line
            problem = (
                f"{values[i].strip()} lies beyond +/-{MAX_ABS_FEATURE:g}, the bound every olboost "
                "model takes (MAX_ABS_FEATURE); rescale the feature"
            )
        raise _error(path, row_lines[i], f"{column}: {problem}")
    return out, defects


def _read(raw: bytes, fmt: _Format, path: str, missing: str) -> MulticlassDataset:
    columns, fields, row_lines = _split_rows(_decode(raw, path), fmt, path)
    by_column = dict(zip(columns, fields, strict=True))
    if len(by_column) != len(columns):
        raise _error(path, 1, f"repeated column names in {columns}")
    n_rows = len(row_lines)

    labels = by_column[fmt.class_column]
    y, class_names = _codes(labels)
    for token in _MISSING_TOKENS.intersection(name.strip() for name in class_names):
        i = next(i for i, label in enumerate(labels) if label.strip() == token)
        raise _error(path, row_lines[i], f"missing class value {clipped(labels[i])!r}")

    feature_names = [c for c in columns if c != fmt.class_column and c not in fmt.drop]
    X = np.empty((n_rows, len(feature_names)), dtype=np.float64)
    nominal: dict[int, list[str]] = {}
    defects: list[tuple[int, str]] = []  # (row index, column)
    n_missing: dict[str, int] = {}
    markers: set[str] = set()  # missing markers of nominal columns kept as categories
    for j, col in enumerate(feature_names):
        values = by_column[col]
        if fmt.nominal:
            codes, cats = _codes(values)
            absent = [c for c, cat in enumerate(cats) if cat.strip() in _MISSING_TOKENS]
            is_missing = np.isin(codes, absent)
            if absent:
                n_missing[col] = int(np.count_nonzero(is_missing))
                markers.update(cats[c] for c in absent)
            if absent and missing == "nan":
                # Drop the missing markers from the categories and renumber the other codes.
                kept = [c for c in range(len(cats)) if c not in absent]
                table = np.full(len(cats), np.nan)
                table[kept] = np.arange(len(kept))
                X[:, j] = table[codes]
                cats = [cats[c] for c in kept]
            else:
                X[:, j] = codes
            nominal[j] = cats
        else:
            X[:, j], bad = _numeric(values, col, fmt, path, row_lines)
            defects.extend((i, col) for i in bad)
            n = int(np.count_nonzero(np.isnan(X[:, j]))) - len(bad)
            if n:
                n_missing[col] = n

    notes: list[str] = []
    described: list[str] = []
    total = sum(n_missing.values())
    if total:
        where = ", ".join(f"{c}: {n}" for c, n in n_missing.items())
        if missing == "nan":
            described.append(
                f"{total} missing value{'' if total == 1 else 's'} kept as NaN ({where})"
            )
        elif fmt.nominal:
            described.append(
                f"{total} missing value{'' if total == 1 else 's'} kept as a category of their "
                "own, named "
                f"{', '.join(repr(m) for m in sorted(markers))} ({where}); a nominal multiway "
                "split thus gives missing values their own branch"
            )
        else:
            X[np.isnan(X)] = 0.0
            described.append(
                f"{total} missing value{'' if total == 1 else 's'} replaced by 0 ({where})"
                + (f", {fmt.paper_note}" if fmt.paper_note else "")
            )

    if defects:
        keep = np.ones(n_rows, dtype=bool)
        for i, col in defects:
            value = by_column[col][i]
            line = row_lines[i]
            if missing == "paper":
                keep[i] = False
                action = "row dropped"
                if fmt.paper_note:
                    action += f", as in {fmt.paper_note}"
            else:
                action = "value set to NaN"
            message = (
                f"{path}, line {line} (data row {i + 1}): malformed {col} value "
                f"{clipped(value)!r}; {action}"
            )
            warnings.warn(message, UserWarning, stacklevel=3)
            notes.append(message)
            described.append(f"malformed {col} value at line {line}: {action}")
        X, y = X[keep], y[keep]

    return MulticlassDataset(
        name=fmt.name,
        X=X,
        y=y,
        feature_names=feature_names,
        class_names=class_names,
        nominal=nominal,
        missing="; ".join(described) if described else "none",
        notes=notes,
    )


def _bundled_name(name: str) -> str | None:
    key = name.lower()
    key = _ALIASES.get(key, key)
    return key if key in BUNDLED_UCI else None


def _format_of(path: Path) -> _Format | None:
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    fmt = _FILE_NAMES.get(name)
    return None if fmt is None else _FORMATS[fmt]


def load_uci(name_or_path: str | os.PathLike[str], *, missing: str = "paper") -> MulticlassDataset:
    """Load a bundled UCI multiclass data set, or one of the known UCI files from disk.

    Parameters
    ----------
    name_or_path : str or path-like
        A bundled name (see ``BUNDLED_UCI``; aliases ``"balance-scale"``, ``"cars"``,
        ``"mice-protein"``), read offline from the package, or the path of one of these files,
        plain or gzip-compressed (gzip is recognised by its content), recognised by its file
        name:

        ========================================  ==========  ==============================
        file                                      data set    layout
        ========================================  ==========  ==============================
        ``balance-scale.data``                    balance     class first, 4 numeric
        ``car.data``                              car         6 nominal, class last
        ``agaricus-lepiota.data``                 mushroom    class first, 22 nominal
        ``nursery.data``                          nursery     8 nominal, class last
        ``Data_Cortex_Nuclear.derived.csv``       mice        header; 77 numeric, class last
        ``dataset-har-PUC-Rio-ugulino.csv[.gz]``  har         ``;``, decimal comma, header
        ========================================  ==========  ==============================

        Mice drops ``MouseID`` and the ``Genotype``, ``Treatment`` and ``Behavior`` columns,
        which together determine the class. HAR (PUC-Rio wearable body postures, the paper's
        "Movement", not bundled) drops the user columns (user, gender, age,
        how_tall_in_meters, weight, body_mass_index), keeping the 12 accelerometer readings
        ``x1``..``z4``, as the paper did.
    missing : {"paper", "nan"}
        ``"paper"`` (default): as in Jung, Goetz & Tewari (2017): empty numeric cells (mice,
        1396) become 0, as do a numeric ``?`` or ``nan``; a ``?`` of a nominal feature
        (mushroom stalk-root, 2480) stays a category of its own, named ``"?"``, so a multiway
        split gives missing values their own branch; the row of a known malformed value (HAR,
        line 122078) is dropped, with a warning.
        ``"nan"``: missing values and the known malformed value are NaN (nominal ``?`` is not a
        category); no row is dropped.

    Returns
    -------
    MulticlassDataset
        Rows in file order. ``class_names`` and nominal categories are in order of first
        appearance in the file; ``missing`` and ``notes`` say how missing values and malformed
        values were handled.

    Raises
    ------
    ValueError
        For an unknown name that is not an existing file (the message lists the bundled names),
        a file name that is not one of the known UCI files, an unknown ``missing``, or a
        malformed file (wrong number of fields, an unparseable number, a missing class): the
        message names the file and line.
    FileNotFoundError
        If a recognised path does not exist.

    Warns
    -----
    UserWarning
        For each known malformed value of the published file (HAR z4 at line 122078), naming the
        file and line.

    Examples
    --------
    >>> ds = load_uci("car")
    >>> ds.X.shape, ds.class_names
    ((1728, 6), ['unacc', 'acc', 'vgood', 'good'])
    >>> ds.nominal[0], ds.class_counts()["good"]
    (['vhigh', 'high', 'med', 'low'], 69)
    >>> x, label = next(iter(ds))
    >>> [ds.nominal[j][int(v)] for j, v in enumerate(x)], label
    (['vhigh', 'vhigh', '2', '2', 'small', 'low'], 'unacc')
    >>> mice = load_uci("mice", missing="nan")
    >>> mice.n_features, int(np.isnan(mice.X).sum()), mice.missing.split(" (")[0]
    (77, 1396, '1396 missing values kept as NaN')
    """
    check_path(name_or_path, "name_or_path")
    if missing not in MISSING_MODES:
        raise ValueError(f"missing must be one of {MISSING_MODES}, got {missing!r}")
    bundled = _bundled_name(name_or_path) if isinstance(name_or_path, str) else None
    if bundled is not None:
        resource = resources.files("olboost.datasets") / "data" / "uci" / _BUNDLED_FILES[bundled]
        with resources.as_file(resource) as path:
            with memory_for(path):
                return _read(read_bytes(path), _FORMATS[bundled], str(path), missing)

    path = Path(name_or_path)
    fmt = _format_of(path)
    if fmt is None:
        if not path.exists():
            from olboost.datasets.mulan import _bundled_name as _mulan_name

            if isinstance(name_or_path, str) and _mulan_name(name_or_path) is not None:
                raise ValueError(
                    f"{name_or_path!r} is a bundled multi-label data set, for the ranking "
                    f"learners: load it with load (multiclass ones: {', '.join(BUNDLED_UCI)})"
                )
            raise ValueError(
                f"{str(name_or_path)!r} is neither a bundled UCI data set "
                f"({', '.join(BUNDLED_UCI)}) nor an existing file"
            )
        raise ValueError(
            f"{str(path)!r} is not a known UCI file; the loader recognises "
            f"{', '.join(_FILE_NAMES)} (optionally .gz); bundled names: {', '.join(BUNDLED_UCI)}"
        )
    with memory_for(path):
        return _read(read_bytes(path), fmt, str(path), missing)
