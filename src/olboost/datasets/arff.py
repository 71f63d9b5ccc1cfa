"""A small, fast reader for Weka ARFF files (dense and sparse), with no third-party ARFF dependency.

Only what multi-label benchmarks need is supported: ``numeric``/``real``/``integer`` and nominal
``{a,b,...}`` attributes. ``string``, ``date`` and ``relational`` attributes raise ``ValueError``,
as do Weka's instance weights (``{w}`` after a row). Words are separated as Weka's tokenizer
separates them, by the characters 0x00-0x20 only: a no-break space is part of a word.

Every value ends up in one float64 matrix: numeric attributes as their value, nominal attributes as
the code (0..m-1) of their category, missing values (``?``, also ``nan``) as NaN; infinite values
(``inf``, or a number beyond float64's range such as ``1e999``) are an error. Files whose rows are
written in sparse form (``{i v, j w}``) give a ``scipy.sparse.csr_array``; an omitted entry is 0,
which for a nominal attribute is its first category, as in Weka.

Speed comes from splitting rows with ``str.split`` in one pass and converting all values at once
with numpy; rows containing quotes or ``%`` go through a slower character tokenizer. Every error
names the file and the 1-based line number.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from olboost.datasets._text import (
    SPACE,
    Quoted,
    _at_comment_or_end,
    _decode,
    _error,
    _skip_space,
    _slow_row,
    _split_values,
    _take_token,
    clipped,
    first_python_only_number,
    instance_weight_error,
    memory_for,
    python_only_number,
    read_bytes,
    shown,
)
from olboost.datasets.base import check_path

__all__ = ["ArffAttribute", "ArffFile", "read_arff", "read_bytes"]

_NUMERIC_TYPES = frozenset({"numeric", "real", "integer"})
_UNSUPPORTED_TYPES = frozenset({"string", "date", "relational"})


@dataclass(frozen=True)
class ArffAttribute:
    """One ``@attribute`` declaration.

    Attributes
    ----------
    name : str
        The attribute name, unquoted and unescaped.
    kind : str
        ``"numeric"`` or ``"nominal"``.
    categories : tuple of str or None
        The nominal categories in declaration order (their codes are 0..m-1); None if numeric.
    line : int
        1-based line number of the declaration, for error messages.
    """

    name: str
    kind: str
    categories: tuple[str, ...] | None
    line: int

    @property
    def is_nominal(self) -> bool:
        """Whether the attribute is nominal."""
        return self.kind == "nominal"


@dataclass
class ArffFile:
    """The parsed content of an ARFF file.

    Attributes
    ----------
    path : str
        The file that was read (used in error messages).
    relation : str
        The ``@relation`` name ('' if absent).
    attributes : list of ArffAttribute
        Declared attributes, in file order.
    data : numpy.ndarray or scipy.sparse.csr_array
        float64 matrix, one row per instance and one column per attribute: nominal values as
        category codes, missing values as NaN. Sparse iff any data row is written in sparse form.
    row_lines : numpy.ndarray
        1-based line number of each data row (int64), so later checks can point at the line.
    data_line : int
        1-based line number of the ``@data`` keyword.
    """

    path: str
    relation: str
    attributes: list[ArffAttribute]
    data: np.ndarray | sp.csr_array
    row_lines: np.ndarray
    data_line: int

    @property
    def names(self) -> list[str]:
        """Attribute names in file order."""
        return [a.name for a in self.attributes]

    @property
    def is_sparse(self) -> bool:
        """Whether :attr:`data` is a sparse matrix."""
        return sp.issparse(self.data)

    def error(self, line: int, message: str) -> ValueError:
        """Build a ``ValueError`` that names this file and ``line``."""
        return _error(self.path, line, message)


# --------------------------------------------------------------------------------------------------
# Header


def _parse_type(rest: str, pos: int, path: str, line: int) -> tuple[str, tuple[str, ...] | None]:
    pos = _skip_space(rest, pos)
    if pos < len(rest) and rest[pos] == "{":
        cats, pos = _split_values(rest, pos + 1, "}", path, line)
        if not cats:
            raise _error(path, line, "nominal attribute with no categories")
        if any(c == "" for c in cats):
            raise _error(path, line, "empty nominal category")
        if len(set(cats)) != len(cats):
            raise _error(path, line, f"duplicate nominal category in {{{','.join(cats)}}}")
        if not _at_comment_or_end(rest, pos):
            raise _error(path, line, "unexpected text after nominal categories")
        return "nominal", tuple(cats)
    word, pos, _ = _take_token(rest, pos, "%", path, line)
    kind = word.lower()
    if kind in _UNSUPPORTED_TYPES:
        raise _error(path, line, f"unsupported attribute type {word!r} (only numeric and nominal)")
    if kind not in _NUMERIC_TYPES:
        raise _error(path, line, f"unknown attribute type {word!r}")
    if not _at_comment_or_end(rest, pos):
        raise _error(path, line, f"unexpected text after attribute type {word!r}")
    return "numeric", None


def _parse_header(lines: list[str], path: str) -> tuple[str, list[ArffAttribute], int]:
    """Parse up to ``@data``; return ``(relation, attributes, index of the @data line)``."""
    relation: str | None = None
    attributes: list[ArffAttribute] = []
    seen: set[str] = set()
    for i, raw in enumerate(lines):
        line = i + 1
        s = raw.strip(SPACE)
        if not s or s[0] == "%":
            continue
        if s[0] != "@":
            raise _error(path, line, f"expected @relation, @attribute or @data, got {s[:40]!r}")
        space = _SPACE_CHAR.search(s)
        keyword, rest = (s[: space.start()], s[space.start() :]) if space else (s, "")
        keyword = keyword.lower()
        if keyword == "@relation":
            if relation is not None or attributes:
                # Weka refuses it too; the last name won, with no word
                raise _error(path, line, "@relation must come once, before any @attribute")
            relation, pos, _ = _take_token(rest, 0, "%", path, line)
            if not _at_comment_or_end(rest, pos):
                raise _error(path, line, f"unexpected text after the relation name {relation!r}")
        elif keyword == "@attribute":
            name, pos, quoted = _take_token(rest, 0, "{%", path, line)
            if not name and not quoted:
                raise _error(path, line, "@attribute without a name")
            if name in seen:
                raise _error(path, line, f"duplicate attribute name {name!r}")
            seen.add(name)
            kind, cats = _parse_type(rest, pos, path, line)
            attributes.append(ArffAttribute(name, kind, cats, line))
        elif keyword == "@data":
            if not attributes:
                raise _error(path, line, "@data before any @attribute")
            if not _at_comment_or_end(rest, 0):
                # Weka reads such text as the first row; skipping it would drop a row silently.
                raise _error(
                    path, line, "unexpected text after @data (start the rows on the next line)"
                )
            return relation or "", attributes, i
        else:
            raise _error(path, line, f"unknown keyword {keyword!r}")
    # text.split("\n") yields a last, empty item when the file ends with a newline.
    last_line = max(len(lines) - (lines[-1] == ""), 1)
    raise _error(path, last_line, "missing @data section (file truncated?)")


# --------------------------------------------------------------------------------------------------
# Body


def _entry_line(entry: int, row_ptr: np.ndarray, row_lines: np.ndarray) -> int:
    """The line number of the row that holds flat entry ``entry``."""
    row = int(np.searchsorted(row_ptr, entry, side="right")) - 1
    return int(row_lines[row])


def _to_float(token: str | Quoted) -> float:
    if isinstance(token, Quoted):
        token = token.text  # a number in quotes is still one, but '?' in quotes is no number
    elif token.strip(SPACE) == "?":
        return np.nan
    if python_only_number(token):
        raise ValueError(token)
    return float(token)


def _convert_numeric(
    tokens: list[str], where: np.ndarray, row_ptr: np.ndarray, row_lines: np.ndarray, path: str
) -> np.ndarray:
    """float64 values of numeric tokens; ``where`` maps them back to flat entries. A token that
    is not a number, or is one only to Python's ``float()`` (``1_000``), is a ``ValueError``
    naming the file and line."""
    # Python's float() on a list is faster than numpy's string-array cast; it rejects '?', so
    # files with missing values take the slower per-token route below.
    try:
        out = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except (ValueError, TypeError):  # TypeError: a quoted token (Quoted)
        pass
    else:
        k = first_python_only_number(tokens)
        if k is None:
            return out
        line = _entry_line(int(where[k]), row_ptr, row_lines)
        raise _error(path, line, f"bad number {shown(tokens[k])!r}")
    out = np.empty(len(tokens), dtype=np.float64)
    for k, tok in enumerate(tokens):
        try:
            out[k] = _to_float(tok)
        except ValueError:
            line = _entry_line(int(where[k]), row_ptr, row_lines)
            raise _error(path, line, f"bad number {shown(tok)!r}") from None
    return out


# Above this many (column, distinct token) cells, look codes up through np.unique instead of a
# dense table, so a wide file with many distinct values cannot allocate a huge table.
_MAX_NOMINAL_TABLE = 1 << 22


def _convert_nominal(
    tokens: list[str],
    cols: np.ndarray,
    where: np.ndarray,
    attributes: list[ArffAttribute],
    row_ptr: np.ndarray,
    row_lines: np.ndarray,
    path: str,
) -> np.ndarray:
    """Category codes (float64, NaN for '?') of nominal tokens in columns ``cols``."""
    # Map each distinct (column, token) pair once instead of every entry: there are few of them.
    distinct = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    n_tok = len(distinct)
    ids = np.fromiter(map(distinct.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    key = cols.astype(np.int64) * n_tok + ids
    size = len(attributes) * n_tok
    if size <= _MAX_NOMINAL_TABLE:
        present = np.flatnonzero(np.bincount(key, minlength=size))
        inverse = None
    else:
        present, inverse = np.unique(key, return_inverse=True)
    names = list(distinct)
    table = np.empty(len(present), dtype=np.float64)
    # each attribute's codes by category, once (tuple.index per value made an attribute of
    # thousands of categories quadratic); the first of repeated categories, as index did
    codes: dict[int, dict[str, int]] = {}
    for j, k in enumerate(present.tolist()):
        col, t = divmod(k, n_tok)
        if isinstance(names[t], Quoted):
            token = names[t].text  # exactly as written between the quotes, never missing
        else:
            token = names[t].strip(SPACE)
            if token == "?":
                table[j] = np.nan
                continue
        cats = attributes[col].categories or ()
        if col not in codes:
            codes[col] = {}
            for code, category in enumerate(cats):
                codes[col].setdefault(category, code)
        try:
            table[j] = codes[col][token]
        except KeyError:
            first = int(np.flatnonzero(key == k)[0])
            line = _entry_line(int(where[first]), row_ptr, row_lines)
            raise _error(
                path,
                line,
                f"unknown value {clipped(token)!r} for nominal attribute "
                f"{attributes[col].name!r} {{{clipped(','.join(cats), 200)}}}",
            ) from None
    if inverse is None:
        lookup = np.empty(size, dtype=np.float64)
        lookup[present] = table
        return lookup[key]
    return table[inverse.ravel()]


# A character that ends a header keyword (see olboost.datasets._text.SPACE).
_SPACE_CHAR = re.compile(r"[\x00-\x20]")

# A Weka instance weight after a row: "1,a, {5}" or "{0 1}, {5}".
_WEIGHT = re.compile(r"[\x00-\x20]*\{[^{}]*\}[\x00-\x20]*")
_SPARSE_WEIGHT = re.compile(r"\}[\x00-\x20]*,[\x00-\x20]*\{[^{}]*\}$")

# One sparse row body: "i v, j w, ..." (tokens contain neither whitespace nor commas). Checking
# the shape first lets the fast path split on commas and whitespace in one go.
_SPARSE_BODY = re.compile(r"\s*[^\s,]+\s+[^\s,]+\s*(?:,\s*[^\s,]+\s+[^\s,]+\s*)*")


# A dense row's token with whitespace inside ("a b,1"): two values to the tokenizer, not one.
_SPLIT_TOKEN = re.compile(r"(?:^|,)\s*([^\s,]+)\s+[^\s,]")


def _parse_body(
    lines: list[str], start: int, attributes: list[ArffAttribute], path: str
) -> tuple[np.ndarray | sp.csr_array, np.ndarray]:
    n_attr = len(attributes)
    idx_tokens: list[str] = []  # column index tokens of sparse rows (and of dense rows, if mixed)
    val_tokens: list[str] = []
    row_nnz: list[int] = []
    row_lines: list[int] = []
    any_sparse = False
    dense_idx = [str(j) for j in range(n_attr)]
    sparse_body = _SPARSE_BODY.fullmatch
    split_token = _SPLIT_TOKEN.search

    for i in range(start, len(lines)):
        s = lines[i].strip(SPACE)
        if not s or s[0] == "%":
            continue
        line = i + 1
        # a row of other than ASCII goes to the tokenizer, which splits words as Weka does: the
        # fast paths' str.split and \s also split at a no-break space. (Of ASCII characters,
        # only the controls 0x00-0x08 and 0x0e-0x1b, which no number or category holds, are
        # word separators to Weka and not to them.)
        if "'" in s or '"' in s or "%" in s or not s.isascii():
            idx, vals = _slow_row(s, path, line)
        elif s[0] == "{":
            if s[-1] != "}":
                raise _error(path, line, "sparse row without closing '}' (file truncated?)")
            inner = s[1:-1]
            if sparse_body(inner):
                kv = inner.replace(",", " ").split()
                idx, vals = kv[0::2], kv[1::2]
            elif not inner.strip():
                idx, vals = [], []
            elif _SPARSE_WEIGHT.search(s):
                raise instance_weight_error(path, line, s)
            else:
                raise _error(
                    path, line, f"bad sparse row {s[:60]!r}: expected {{index value, ...}}"
                )
        else:
            idx, vals = None, s.split(",")
            inner_space = (" " in s or "\t" in s) and split_token(s)
            if inner_space:
                # as the tokenizer of the other rows reads it (and Weka): 'a b' is two values
                raise _error(
                    path, line, f"expected ',' after {inner_space.group(1)!r} in {s[:60]!r}"
                )

        if idx is None:
            if len(vals) != n_attr:
                last = vals[-1]
                if len(vals) == n_attr + 1 and isinstance(last, str) and _WEIGHT.fullmatch(last):
                    raise instance_weight_error(path, line, s)
                raise _error(path, line, f"expected {n_attr} values, got {len(vals)}")
            if any_sparse:
                idx_tokens.extend(dense_idx)
        else:
            if not any_sparse:
                # First sparse row after dense ones: give the earlier dense rows explicit indices.
                any_sparse = True
                idx_tokens = dense_idx * len(row_nnz)
            idx_tokens.extend(idx)
        val_tokens.extend(vals)
        row_nnz.append(len(vals))
        row_lines.append(line)

    n_rows = len(row_nnz)
    lines_arr = np.asarray(row_lines, dtype=np.int64)
    row_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=row_ptr[1:])
    n_entries = int(row_ptr[-1])

    if any_sparse:
        cols = _parse_indices(idx_tokens, row_ptr, lines_arr, n_attr, path)
    else:
        cols = np.tile(np.arange(n_attr, dtype=np.int64), n_rows)

    # An object array lets numpy gather the numeric and nominal tokens without copying strings.
    tokens = np.empty(n_entries, dtype=object)
    tokens[:] = val_tokens
    values = np.empty(n_entries, dtype=np.float64)
    nominal_col = np.array([a.is_nominal for a in attributes], dtype=bool)
    is_nom = nominal_col[cols]
    num_where = np.flatnonzero(~is_nom)
    if len(num_where):
        values[num_where] = _convert_numeric(
            tokens[num_where].tolist(), num_where, row_ptr, lines_arr, path
        )
        infinite = np.flatnonzero(np.isinf(values[num_where]))
        if len(infinite):
            # "inf" and overflowing numbers ("1e999") parse as infinities, which no model takes;
            # a missing value is "?" (or "nan")
            k = int(num_where[infinite[0]])
            col = int(cols[k])
            raise _error(
                path,
                _entry_line(k, row_ptr, lines_arr),
                f"attribute {attributes[col].name!r} (column {col + 1}): {shown(tokens[k])!r} "
                "is infinite or overflows float64; write a missing value as '?'",
            )
    nom_where = np.flatnonzero(is_nom)
    if len(nom_where):
        values[nom_where] = _convert_nominal(
            tokens[nom_where].tolist(),
            cols[nom_where],
            nom_where,
            attributes,
            row_ptr,
            lines_arr,
            path,
        )

    if not any_sparse:
        return values.reshape(n_rows, n_attr), lines_arr
    data = sp.csr_array((values, cols, row_ptr), shape=(n_rows, n_attr))
    # Explicit zeros ("{3 0}") mean the same as omitted entries; drop them for a canonical matrix.
    data.eliminate_zeros()
    return data, lines_arr


def _parse_indices(
    idx_tokens: list[str], row_ptr: np.ndarray, row_lines: np.ndarray, n_attr: int, path: str
) -> np.ndarray:
    try:
        cols = np.fromiter(map(int, idx_tokens), dtype=np.int64, count=len(idx_tokens))
    except (ValueError, OverflowError):
        cols = None
    # int() also accepts "+1" and "1_0", which are not ARFF indices.
    joined = "".join(idx_tokens)
    if cols is None or not (joined.isascii() and joined.isdigit()) and idx_tokens:
        for k, tok in enumerate(idx_tokens):
            if not (tok.isascii() and tok.isdigit()):
                raise _error(path, _entry_line(k, row_ptr, row_lines), f"bad sparse index {tok!r}")
            digits = tok.lstrip("0")  # more than 18 of them: beyond int64, and any width
            if len(digits) > 18 or int(digits or "0") >= n_attr:
                raise _error(
                    path,
                    _entry_line(k, row_ptr, row_lines),
                    f"sparse index {tok[:20]}{'...' if len(tok) > 20 else ''} out of range for "
                    f"{n_attr} attributes",
                )
        raise AssertionError("unreachable")  # pragma: no cover
    bad = np.flatnonzero(cols >= n_attr)
    if len(bad):
        k = int(bad[0])
        raise _error(
            path,
            _entry_line(k, row_ptr, row_lines),
            f"sparse index {int(cols[k])} out of range for {n_attr} attributes",
        )
    # Weka requires strictly increasing indices in a row; a repeat would be silently summed by CSR.
    if len(cols) > 1:
        step_ok = np.diff(cols) > 0
        # row boundaries: the step into each row's first entry (not into entry 0, where rows
        # before it were empty: index -1 would mark the file's last step instead)
        starts = row_ptr[1:-1]
        step_ok[starts[(starts > 0) & (starts < len(cols))] - 1] = True
        bad = np.flatnonzero(~step_ok)
        if len(bad):
            k = int(bad[0]) + 1
            raise _error(
                path,
                _entry_line(k, row_ptr, row_lines),
                f"sparse indices not strictly increasing at index {int(cols[k])}",
            )
    return cols


def read_arff(path: str | os.PathLike[str]) -> ArffFile:
    """Read an ARFF file (optionally gzip-compressed).

    Parameters
    ----------
    path : str or path-like
        The ARFF file; gzip content is detected from its first bytes, whatever the name.

    Returns
    -------
    ArffFile
        Relation name, attributes, and a float64 data matrix (dense ndarray, or
        ``scipy.sparse.csr_array`` when rows are written in sparse form). Nominal values are
        category codes 0..m-1; missing values are NaN.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For any syntax error or unsupported attribute type; the message names the file and the
        1-based line number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tiny.arff"
    >>> _ = p.write_text("@relation t\\n@attribute x numeric\\n@attribute c {a,b}\\n"
    ...                  "@data\\n1.5,b\\n?,a\\n")
    >>> f = read_arff(p)
    >>> f.names, f.data.tolist()
    (['x', 'c'], [[1.5, 1.0], [nan, 0.0]])
    """
    check_path(path, "path")
    spath = str(path)
    with memory_for(path):
        text = _decode(read_bytes(path), spath)
        if "\r" in text:
            # a line ends with "\n", "\r\n" or, in old Mac files, "\r" alone (Weka reads all
            # three)
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        relation, attributes, data_index = _parse_header(lines, spath)
        data, row_lines = _parse_body(lines, data_index + 1, attributes, spath)
    return ArffFile(spath, relation, attributes, data, row_lines, data_index + 1)
