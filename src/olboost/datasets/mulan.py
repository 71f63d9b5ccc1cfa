"""MULAN multi-label data: an ARFF file plus an XML file naming the label attributes.

MULAN (Tsoumakas et al., JMLR 12:2411-2414, 2011) stores labels as binary nominal ``{0,1}``
attributes of the ARFF file and lists their names in ``<label name="..."/>`` elements of an XML
file in the namespace ``http://mulan.sourceforge.net/labels``. Labels are found by name, never by
position, so they may sit anywhere among the attributes.
"""

from __future__ import annotations

import os
import xml.parsers.expat
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from olboost.datasets._text import WINDOWS_1252, _error, memory_for, read_bytes
from olboost.datasets.arff import ArffFile, read_arff
from olboost.datasets.base import MultiLabelDataset, check_path
from olboost.online.inputs import MAX_ABS_FEATURE, entry_position

__all__ = ["BUNDLED", "load", "load_mulan", "read_mulan_labels"]

MULAN_NAMESPACE = "http://mulan.sourceforge.net/labels"

#: Data sets shipped in ``olboost/datasets/data`` (see ``data/CITATION.md``).
BUNDLED: tuple[str, ...] = ("emotions", "scene", "yeast", "mediamill-reduced")

# name -> (train ARFF, test ARFF, XML) inside the package data folder, all gzip-compressed.
_BUNDLED_FILES = {
    "emotions": ("emotions-train.arff.gz", "emotions-test.arff.gz", "emotions.xml.gz"),
    "scene": ("scene-train.arff.gz", "scene-test.arff.gz", "scene.xml.gz"),
    "yeast": ("yeast-train.arff.gz", "yeast-test.arff.gz", "yeast.xml.gz"),
    "mediamill-reduced": (
        "mediamill-reduced-train.arff.gz",
        "mediamill-reduced-test.arff.gz",
        "mediamill.xml.gz",
    ),
}
_ALIASES = {"m-reduced": "mediamill-reduced", "mediamill_reduced": "mediamill-reduced"}


def read_mulan_labels(xml_path: str | os.PathLike[str]) -> list[tuple[str, int]]:
    """Read the label names of a MULAN XML file (optionally gzip-compressed).

    Parameters
    ----------
    xml_path : str or path-like
        The XML file.

    Returns
    -------
    list of (str, int)
        Each label name (entities decoded) with the 1-based line of its ``<label>`` element, in
        document order. Nested (hierarchical) labels are included.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the XML is malformed, a label has no name, a name repeats, or there is no label.
    """
    path = str(xml_path)
    with memory_for(xml_path):
        raw = read_bytes(xml_path)
    labels: list[tuple[str, int]] = []
    seen: set[str] = set()
    root_line: list[int] = []  # line of the root element, where labels were expected
    # expat rather than ElementTree: it is namespace-aware and reports line numbers.
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")

    def start(tag: str, attrs: dict[str, str]) -> None:
        if not root_line:
            root_line.append(parser.CurrentLineNumber)
        namespace, _, local = tag.rpartition(" ")
        if local != "label" or namespace not in ("", MULAN_NAMESPACE):
            return
        line = parser.CurrentLineNumber
        name = attrs.get("name")
        if name is None:
            raise _error(path, line, "<label> element without a name attribute")
        # C1 control characters read as Windows-1252's, as a data file that is not UTF-8 is
        # read: an XML declared ISO-8859-1 beside a Windows "ANSI" ARFF named a label
        # 'news \x96 sport' that the ARFF, read so, called 'news – sport'
        name = name.translate(WINDOWS_1252)
        if name in seen:
            raise _error(path, line, f"duplicate label name {name!r}")
        seen.add(name)
        labels.append((name, line))

    parser.StartElementHandler = start
    try:
        with memory_for(xml_path):
            parser.Parse(raw, True)
    except xml.parsers.expat.ExpatError as exc:
        raise _error(path, exc.lineno, f"malformed XML: {exc}") from None
    except LookupError as exc:  # expat's error for an unknown encoding in the XML declaration
        raise _error(path, 1, f"malformed XML: {exc}") from None
    if not labels:
        raise _error(path, root_line[0], f"no <label> elements in the namespace {MULAN_NAMESPACE}")
    return labels


#: Floats of a dense block of label columns (32 MB): the labels are taken a block of columns
#: at a time, where one CSR column slice per label passed over all the data once per label
#: (4,000 labels of 960,000 stored values took 5.2 s).
_LABEL_BLOCK_FLOATS = 1 << 22


def _label_blocks(arff: ArffFile, cols: list[int]) -> Iterator[tuple[int, np.ndarray]]:
    """``(first, block)``: dense float64 columns ``cols[first : first + block.shape[1]]`` of
    the parsed ARFF data, in order."""
    step = max(1, _LABEL_BLOCK_FLOATS // max(arff.data.shape[0], 1))
    for first in range(0, len(cols), step):
        block = arff.data[:, cols[first : first + step]]
        yield first, block.toarray() if sp.issparse(block) else block


def _split(
    arff: ArffFile, labels: list[tuple[str, int]], xml_path: str
) -> tuple[np.ndarray | sp.csr_array, np.ndarray, list[str], dict[int, list[str]]]:
    """Split parsed ARFF data into features X, labels Y, feature names and nominal categories."""
    position = {a.name: j for j, a in enumerate(arff.attributes)}
    label_cols: list[int] = []
    for name, line in labels:
        col = position.get(name)
        if col is None:
            raise _error(xml_path, line, f"label {name!r} is not an attribute of {arff.path}")
        label_cols.append(col)

    n = arff.data.shape[0]
    Y = np.zeros((n, len(label_cols)), dtype=bool)
    for first, block in _label_blocks(arff, label_cols):
        for q in range(block.shape[1]):
            j = first + q
            attr = arff.attributes[label_cols[j]]
            cats = attr.categories or ()
            if not attr.is_nominal or sorted(cats) != ["0", "1"]:
                kind = "{" + ",".join(cats) + "}" if attr.is_nominal else attr.kind
                raise arff.error(attr.line, f"label attribute {attr.name!r} is {kind}, not {{0,1}}")
            codes = block[:, q]
            missing = np.flatnonzero(np.isnan(codes))
            if len(missing):
                # A bool label matrix cannot say "unknown"; refuse rather than guess.
                row = int(missing[0])
                raise arff.error(int(arff.row_lines[row]), f"missing value for label {attr.name!r}")
            # Compare with the code of "1", which is 0 if the file declares {1,0}.
            Y[:, j] = codes == cats.index("1")

    is_label = np.zeros(len(arff.attributes), dtype=bool)
    is_label[label_cols] = True
    feature_cols = np.flatnonzero(~is_label)
    if sp.issparse(arff.data):
        X = sp.csr_array(arff.data[:, feature_cols])
        X.sort_indices()
    else:
        X = np.ascontiguousarray(arff.data[:, feature_cols])
    _check_magnitudes(arff, X, feature_cols)
    feature_names = [arff.attributes[c].name for c in feature_cols]
    nominal = {
        j: list(arff.attributes[c].categories or ())
        for j, c in enumerate(feature_cols.tolist())
        if arff.attributes[c].is_nominal
    }
    return X, Y, feature_names, nominal


def _check_magnitudes(arff: ArffFile, X: np.ndarray | sp.csr_array, columns: np.ndarray) -> None:
    """Refuse, naming the file and line, a feature value beyond :data:`MAX_ABS_FEATURE`, which
    every olboost model refuses (as the reader refuses infinities): the models' own error named
    only a row of the stream."""
    values = X.data if sp.issparse(X) else X.ravel()
    big = np.flatnonzero(np.abs(values) > MAX_ABS_FEATURE)  # NaN (missing) compares False
    if not len(big):
        return
    first = int(big[0])
    csr = (X.indptr, X.indices) if sp.issparse(X) else ()
    row, j = entry_position(first, X.shape[1], *csr)
    col = int(columns[j])
    raise arff.error(
        int(arff.row_lines[row]),
        f"attribute {arff.attributes[col].name!r} (column {col + 1}): {values[first]:g} lies "
        f"beyond +/-{MAX_ABS_FEATURE:g}, the bound every olboost model takes "
        "(MAX_ABS_FEATURE); rescale the feature",
    )


def _check_same_header(train: ArffFile, test: ArffFile) -> None:
    for a, b in zip(train.attributes, test.attributes, strict=False):
        if (a.name, a.kind, a.categories) != (b.name, b.kind, b.categories):
            raise test.error(
                b.line,
                f"attribute {b.name!r} does not match {a.name!r} declared at line {a.line} of "
                f"{train.path}",
            )
    if len(train.attributes) != len(test.attributes):
        raise test.error(
            test.data_line,
            f"{len(test.attributes)} attributes, but {train.path} has {len(train.attributes)}",
        )


def _stack(a: np.ndarray | sp.csr_array, b: np.ndarray | sp.csr_array) -> np.ndarray | sp.csr_array:
    if sp.issparse(a) or sp.issparse(b):
        return sp.csr_array(sp.vstack([sp.csr_array(a), sp.csr_array(b)], format="csr"))
    return np.vstack([a, b])


def _require_rows(arff: ArffFile, role: str) -> None:
    """A file that is evaluated must hold examples: a header-only one would give a loss over
    zero examples (NaN), not an error."""
    if arff.data.shape[0] == 0:
        raise arff.error(
            arff.data_line, f"no examples after @data (header only): the {role} needs at least one"
        )


def _load_pair(
    arff_path: str | os.PathLike[str],
    xml_path: str | os.PathLike[str],
    test_path: str | os.PathLike[str] | None,
    name: str,
) -> MultiLabelDataset:
    labels = read_mulan_labels(xml_path)
    train = read_arff(arff_path)
    X, Y, feature_names, nominal = _split(train, labels, str(xml_path))
    n_train = None
    if test_path is None:
        _require_rows(train, "stream")
    else:
        test = read_arff(test_path)
        _check_same_header(train, test)
        _require_rows(test, "test split")
        n_train = train.data.shape[0]
        # Each file split on its own, so that an error names the file it is in (the columns
        # are the same: the headers match); then the test rows follow the train rows.
        X_test, Y_test, _, _ = _split(test, labels, str(xml_path))
        X, Y = _stack(X, X_test), np.vstack([Y, Y_test])
    return MultiLabelDataset(
        name=name,
        X=X,
        Y=Y,
        feature_names=feature_names,
        label_names=[n for n, _ in labels],
        nominal=nominal,
        n_train=n_train,
    )


def _stem(path: str | os.PathLike[str], drop: tuple[str, ...] = ("sparse",)) -> str:
    """The data set's name from its file name: without ``.gz``/``.arff`` and without the
    trailing words of ``drop`` (``-sparse``, ``_train``, ..., in any order), which describe the
    file, not the data ("Corel5k-train-sparse.arff" -> "Corel5k")."""
    name = Path(path).name
    for suffix in (".gz", ".arff"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    suffixes = [sep + word for word in drop for sep in "-_"]
    while True:
        cut = next((x for x in suffixes if name.lower().endswith(x) and len(name) > len(x)), None)
        if cut is None:
            return name
        name = name[: -len(cut)]


def load_mulan(
    arff_path: str | os.PathLike[str],
    xml_path: str | os.PathLike[str],
    name: str | None = None,
) -> MultiLabelDataset:
    """Load one MULAN ARFF file as a single stream (no train/test split).

    Parameters
    ----------
    arff_path : str or path-like
        The ARFF file (plain or gzip).
    xml_path : str or path-like
        The MULAN XML file naming the labels (plain or gzip).
    name : str, optional
        Name of the data set; defaults to the ARFF file name without ``.arff``/``.gz`` and
        without a trailing ``-sparse``.

    Returns
    -------
    MultiLabelDataset
        Features as float64 (dense ndarray, or ``csr_array`` for a sparse ARFF file), labels as a
        bool matrix in the XML order, ``n_train=None``.

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    ValueError
        If a file is malformed or holds no example, a label of the XML file is not an
        attribute, or a label attribute is not binary ``{0,1}``; the message names the file and
        line.
    """
    check_path(arff_path, "arff_path")
    check_path(xml_path, "xml_path")
    return _load_pair(arff_path, xml_path, None, name or _stem(arff_path))


def _bundled_name(name: str) -> str | None:
    key = name.lower()
    key = _ALIASES.get(key, key)
    return key if key in _BUNDLED_FILES else None


def load(
    name_or_path: str | os.PathLike[str],
    labels: str | os.PathLike[str] | None = None,
    *,
    test: str | os.PathLike[str] | None = None,
) -> MultiLabelDataset:
    """Load a bundled multi-label data set, or any MULAN data set from files.

    Parameters
    ----------
    name_or_path : str or path-like
        Either a bundled name (see ``BUNDLED``; ``"m-reduced"`` and ``"mediamill_reduced"`` are
        aliases of ``"mediamill-reduced"``), loaded offline with its train and test splits
        concatenated, or the path of an ARFF file (plain or gzip). A bundled name wins over a
        file of the same name in the working directory; write ``./emotions`` for the file.
    labels : str or path-like, optional
        Path of the MULAN XML label file; required with an ARFF path, not allowed with a bundled
        name.
    test : str or path-like, optional
        Path of a test ARFF file with the same header, appended after the rows of
        ``name_or_path``; sets ``n_train``. Not allowed with a bundled name.

    Returns
    -------
    MultiLabelDataset
        Train rows first, then test rows; ``n_train`` is the number of train rows (None for a
        single file without ``test``). Missing feature values (``?``) are NaN; their count per
        column is ``missing_counts()`` (a missing label is an error). A feature value beyond
        :data:`~olboost.online.inputs.MAX_ABS_FEATURE` (1e100), which no model takes, is an
        error naming its file and line.

    Raises
    ------
    ValueError
        For an unknown name that is not an existing file (the message lists the bundled names), a
        missing ``labels``, a test file whose header differs, a malformed file, or a header-only
        test file (or single file, without ``test``).
    FileNotFoundError
        If ``labels`` or ``test`` does not exist, or the ARFF path does not exist while
        ``labels`` is given.

    Examples
    --------
    >>> ds = load("emotions")
    >>> ds.n_samples, ds.n_features, ds.n_labels
    (593, 72, 6)
    >>> ds.train.n_samples, ds.test.n_samples
    (391, 202)
    >>> ds.label_names[:2]
    ['amazed-suprised', 'happy-pleased']
    >>> x, y = next(iter(ds))
    >>> x.shape, sorted(y)
    ((72,), ['happy-pleased', 'relaxing-calm'])
    """
    check_path(name_or_path, "name_or_path")
    if labels is not None:
        check_path(labels, "labels")
    bundled = _bundled_name(name_or_path) if isinstance(name_or_path, str) else None
    if bundled is not None:
        if labels is not None or test is not None:
            raise ValueError(
                f"{name_or_path!r} is a bundled data set; labels= and test= are only for files"
            )
        train_file, test_file, xml_file = _BUNDLED_FILES[bundled]
        folder = resources.files("olboost.datasets") / "data"
        with (
            resources.as_file(folder / train_file) as train_path,
            resources.as_file(folder / test_file) as test_path,
            resources.as_file(folder / xml_file) as xml_path,
        ):
            return _load_pair(train_path, xml_path, test_path, bundled)

    path = Path(name_or_path)
    if not path.exists() and labels is None:
        from olboost.datasets.uci import _bundled_name as _uci_name

        if isinstance(name_or_path, str) and _uci_name(name_or_path) is not None:
            raise ValueError(
                f"{name_or_path!r} is a bundled multiclass data set, for the multiclass "
                f"boosters: load it with load_uci (multi-label ones: {', '.join(BUNDLED)})"
            )
        raise ValueError(
            f"{str(name_or_path)!r} is neither a bundled data set ({', '.join(BUNDLED)}) nor an "
            "existing file"
        )
    if labels is None:
        raise ValueError(
            f"labels= is required to load {path}: the path of its MULAN XML label file"
        )
    # "tmc2007-500-train" + test file -> "tmc2007-500": the result holds both splits.
    name = _stem(path, ("sparse", "train") if test is not None else ("sparse",))
    return _load_pair(path, labels, test, name)
