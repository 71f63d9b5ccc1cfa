"""Property-based fuzzing of every public loader (issue 14, item 7), with hypothesis.

The ARFF reader (:func:`olboost.datasets.read_arff`), the MULAN loaders (:func:`load_mulan`,
:func:`load` with files, :func:`read_mulan_labels`), the UCI loader (:func:`load_uci`, for each
file layout it recognises) and the Enron foldering loader (:func:`load_enron_foldering`,
:func:`message_text`, :func:`tokenize`) read generated files: valid ones, whose content they
must return exactly (the matrix, the labels, the names, the categories, the stream order), and
the same files truncated, with bytes flipped, inserted or deleted, with a line replaced by
garbage, gzip- or xz-compressed and cut, or random bytes; and bad arguments.

**What is documented** (each loader's ``Raises`` section, and :mod:`olboost.datasets.arff`):
a missing file raises ``FileNotFoundError``; anything else a loader cannot read raises
``ValueError`` whose message names the file it could not read (and, for a syntax error in an
ARFF file, its 1-based line: "Every error names the file and the 1-based line number"); a
bad argument raises ``ValueError``. Anything else fails: another exception, a message naming no
file, a valid file read wrong, or a file read "successfully" into values a loader promises never
to return (an infinity, a ragged matrix).

A hypothesis example draws ``(first case, seed, variant)`` and runs each case of its loader
(case ``j`` on a NumPy generator seeded by ``(seed, j)`` for the content, with its own variant:
the kind of file and of damage), as in ``tests/test_fuzz_estimators.py``: at least
``EXAMPLES`` (2,000) cases per loader, derandomized, with no example database. The files are
written in memory (``/dev/shm``) where the system has it.
"""

from __future__ import annotations

import gzip
import io
import lzma
import math
import os
import re
import tarfile
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note, settings
from hypothesis import strategies as st

from fuzzing import EXAMPLES, FUZZ
from olboost.datasets import (
    load,
    load_enron_foldering,
    load_mulan,
    load_uci,
    read_arff,
    read_mulan_labels,
)
from olboost.datasets.enron import LEAKING_FIELDS, message_text, tokenize, write_foldering_archive

VARIANTS = 32


def pick(rng: np.random.Generator, items: list | tuple) -> Any:
    return items[int(rng.integers(0, len(items)))]


def fuzz(cases: list[Callable[[np.random.Generator, int, Path], None]], folder: Path) -> int:
    """Run at least :data:`EXAMPLES` cases, each ``case(rng, variant, folder)``, every case of
    ``cases`` per hypothesis example (as in ``tests/test_fuzz_estimators.py``); return how
    many ran."""
    ran = [0]

    @settings(FUZZ, max_examples=-(-EXAMPLES // len(cases)))
    @given(
        st.integers(0, len(cases) - 1),
        st.integers(0, 2**32 - 1),
        st.integers(0, VARIANTS - 1),
    )
    def run(k: int, seed: int, variant: int) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # UCI: a known defect of a file
            for j in range(len(cases)):
                v = (variant + 7 * j) % VARIANTS
                case = cases[(k + j) % len(cases)]
                note(f"case {j}: {case.__name__}, generator seeded with ({seed}, {j}), variant {v}")
                ran[0] += 1
                case(np.random.default_rng((seed, j)), v, folder)

    run()
    return ran[0]


def rejects(call: Callable[[], Any], *paths: Path, line: bool = False) -> Any:
    """``call()``'s result, or its documented ``ValueError`` (returned) naming one of
    ``paths`` (and a line, if ``line``); any other exception propagates and fails."""
    try:
        return call()
    except ValueError as err:
        message = str(err)
        assert any(str(p) in message for p in paths), f"the error names no file: {message!r}"
        if line and "gzip" not in message:
            assert re.search(r", line \d+: ", message), f"the error names no line: {message!r}"
        return err


# ------------------------------------------------------------------------------ damage


def damaged(rng: np.random.Generator, variant: int, raw: bytes) -> bytes:
    """``raw`` cut, with bytes flipped, inserted or deleted, a line replaced, or random."""
    way = variant % 8
    if way == 0 or not raw:
        return rng.bytes(int(rng.integers(0, 200)))
    if way == 1:
        return raw[: int(rng.integers(0, len(raw)))]
    if way in (2, 3, 4):
        out = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(out) + 1))
            if way == 2 and at < len(out):
                out[at] = int(rng.integers(0, 256))
            elif way == 3:
                out[at:at] = pick(rng, [b"{", b"}", b",", b"'", b'"', b"%", b"\n", b"@data\n",
                                        b"?", b"\x00", b"\xff", b" ", b"\\", b"e309"])  # fmt: skip
            else:
                del out[at : at + int(rng.integers(1, 4))]
        return bytes(out)
    lines = raw.split(b"\n")
    at = int(rng.integers(0, len(lines)))
    lines[at] = pick(rng, [b"", b"garbage", b"@attribute", b"@data", b"{0 1,", b"1,2,3,4,5,6,7",
                           b"@attribute x {}", b"@attribute y string", rng.bytes(12)])  # fmt: skip
    return b"\n".join(lines)


def maybe_gzip(rng: np.random.Generator, raw: bytes) -> tuple[bytes, bool]:
    """``raw``, or gzip of it (sometimes cut short: truncated gzip must be an error)."""
    roll = rng.random()
    if roll < 0.7:
        return raw, False
    packed = gzip.compress(raw, compresslevel=1)
    if roll < 0.85:
        return packed, False
    return packed[: int(rng.integers(2, len(packed)))], True


# ------------------------------------------------------------------------------ ARFF

NAME_CHARS = list("abcxyz019") + [" ", ",", "'", '"', "%", "{", "}", "-", "ü", "\\", "\t"]
KEYWORDS = {"relation": ["@relation", "@RELATION", "@Relation"],
            "attribute": ["@attribute", "@ATTRIBUTE", "@Attribute"],
            "data": ["@data", "@DATA", "@Data"]}  # fmt: skip


def token(name: str) -> str:
    """An ARFF token: bare when it can be, else quoted with backslash escapes."""
    if re.fullmatch(r"[A-Za-z0-9_.\-+]+", name) and name != "?":
        return name
    quote = "'" if '"' in name or "'" not in name else '"'
    return quote + name.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


def random_name(rng: np.random.Generator, taken: set[str]) -> str:
    while True:
        size = int(rng.integers(1, 6))
        name = "".join(pick(rng, NAME_CHARS) for _ in range(size)).strip()
        if name and name not in taken and name != "?" and not name.startswith("%"):
            taken.add(name)
            return name


def arff_spec(rng: np.random.Generator) -> dict[str, Any]:
    """A random data set an ARFF file can hold: attributes and rows (codes, values, NaN)."""
    taken: set[str] = set()
    attributes = []
    for _ in range(int(rng.integers(1, 6))):
        if rng.random() < 0.5:
            cats_taken: set[str] = set()
            cats = [random_name(rng, cats_taken) for _ in range(int(rng.integers(1, 5)))]
            attributes.append((random_name(rng, taken), cats))
        else:
            attributes.append((random_name(rng, taken), None))
    n = int(rng.integers(0, 7))
    values = np.empty((n, len(attributes)))
    for j, (_, cats) in enumerate(attributes):
        if cats is None:
            col = rng.normal(size=n) * 10.0 ** rng.integers(-5, 6, size=n)
            col[rng.random(n) < 0.2] = 0.0
        else:
            col = rng.integers(0, len(cats), size=n).astype(np.float64)
        col[rng.random(n) < 0.15] = np.nan
        values[:, j] = col
    return {"attributes": attributes, "values": values, "relation": random_name(rng, set())}


def arff_text(rng: np.random.Generator, spec: dict[str, Any]) -> tuple[str, bool]:
    """The spec written as ARFF (keyword case, comments, blank lines, dense or sparse rows,
    numbers in several spellings); whether any row is sparse."""
    lines = ["% generated", ""]
    lines.append(f"{pick(rng, KEYWORDS['relation'])} {token(spec['relation'])}")
    for name, cats in spec["attributes"]:
        kind = pick(rng, ["numeric", "REAL", "integer", "Numeric"]) if cats is None else (
            "{" + ", ".join(token(c) for c in cats) + "}")  # fmt: skip
        lines.append(f"{pick(rng, KEYWORDS['attribute'])}\t{token(name)} {kind}")
        if rng.random() < 0.2:
            lines.append("% a comment")
    lines.append(pick(rng, KEYWORDS["data"]))
    sparse = False
    for row in spec["values"]:
        cells = []
        for j, v in enumerate(row):
            cats = spec["attributes"][j][1]
            if math.isnan(v):
                cells.append(
                    pick(rng, ["?", " ?"]) if cats is not None else pick(rng, ["?", "nan"])
                )
            elif cats is not None:
                cells.append(token(cats[int(v)]))
            else:
                cells.append(pick(rng, [repr(float(v)), f"{v:.17e}", f"{v:.17g}"]))
        if rng.random() < 0.3:
            sparse = True
            kept = [f"{j} {c}" for j, (c, v) in enumerate(zip(cells, row, strict=True)) if v != 0]
            lines.append("{" + ", ".join(kept) + "}")
        else:
            lines.append(",".join(cells))
        if rng.random() < 0.1:
            lines.append("")
    text = "\n".join(lines) + pick(rng, ["\n", "", "\n\n"])
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    return text, sparse


def dense(data: Any) -> np.ndarray:
    return data.toarray() if sp.issparse(data) else np.asarray(data)


def check_arff(parsed: Any, spec: dict[str, Any], sparse: bool) -> None:
    assert parsed.names == [name for name, _ in spec["attributes"]]
    assert [a.categories and list(a.categories) for a in parsed.attributes] == [
        cats for _, cats in spec["attributes"]
    ]
    assert parsed.is_sparse == (sparse and len(spec["values"]) > 0)
    values = dense(parsed.data)
    assert values.shape == spec["values"].shape
    np.testing.assert_array_equal(values, spec["values"])  # NaN where NaN


def case_arff(rng: np.random.Generator, variant: int, folder: Path) -> None:
    spec = arff_spec(rng)
    text, sparse = arff_text(rng, spec)
    encoding = pick(rng, ["utf-8", "utf-8", "utf-8-sig", "latin-1"])
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:
        raw, encoding = text.encode("utf-8"), "utf-8"
    bad = variant % 3 == 0
    if bad:
        raw = damaged(rng, variant // 3, raw)
    raw, cut = maybe_gzip(rng, raw)
    path = folder / pick(rng, ["data.arff", "data.arff.gz" if raw[:2] == b"\x1f\x8b" else "d.txt"])
    path.write_bytes(raw)
    out = rejects(lambda: read_arff(path), path, line=True)
    if isinstance(out, Exception):
        assert bad or cut, f"a valid ARFF file was rejected: {out}"
        return
    assert not cut, "a truncated gzip file was read"
    values = dense(out.data)
    assert values.ndim == 2 and values.shape[1] == len(out.attributes)
    assert not np.isinf(values).any(), "an infinite value was read"
    assert len(out.row_lines) == values.shape[0] and np.all(np.diff(out.row_lines) > 0)
    if not bad:
        check_arff(out, spec, sparse)


def case_arff_missing(rng: np.random.Generator, variant: int, folder: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_arff(folder / f"missing-{variant}.arff")


# ------------------------------------------------------------------------------ MULAN

NAMESPACE = "http://mulan.sourceforge.net/labels"


def xml_escape(name: str) -> str:
    """``name`` as an XML attribute value (a tab as a character reference: XML normalises
    whitespace in attribute values to spaces)."""
    return (name.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
            .replace("'", "&apos;").replace("\t", "&#9;"))  # fmt: skip


def mulan_spec(rng: np.random.Generator) -> dict[str, Any]:
    """A MULAN data set: features and ``k >= 1`` binary label attributes, anywhere."""
    spec = arff_spec(rng)
    taken = {name for name, _ in spec["attributes"]}
    n = spec["values"].shape[0]
    labels = []
    for _ in range(int(rng.integers(1, 4))):
        name = random_name(rng, taken)
        cats = ["0", "1"] if rng.random() < 0.8 else ["1", "0"]
        col = (rng.random(n) < 0.5).astype(np.float64)
        at = int(rng.integers(0, len(spec["attributes"]) + 1))
        spec["attributes"].insert(at, (name, cats))
        spec["values"] = np.insert(spec["values"], at, col, axis=1)
        labels.append(name)
    spec["labels"] = labels
    return spec


def mulan_xml(rng: np.random.Generator, labels: list[str]) -> str:
    items = [f'<label name="{xml_escape(name)}"></label>' for name in labels]
    if len(items) > 1 and rng.random() < 0.3:  # hierarchical: a label inside another
        items = [items[0].replace("></label>", ">" + items[1] + "</label>"), *items[2:]]
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="{NAMESPACE}">\n'
            + "\n".join(items) + "\n</labels>\n")  # fmt: skip


def expected_mulan(spec: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    names = [name for name, _ in spec["attributes"]]
    cols = [names.index(label) for label in spec["labels"]]
    values = spec["values"]
    Y = np.column_stack(
        [values[:, c] == spec["attributes"][c][1].index("1") for c in cols]
    ) if values.shape[0] else np.zeros((0, len(cols)), dtype=bool)  # fmt: skip
    X = np.delete(values, cols, axis=1)
    return X, Y


def case_mulan(rng: np.random.Generator, variant: int, folder: Path) -> None:
    spec = mulan_spec(rng)
    labels_have_nan = any(
        np.isnan(spec["values"][:, [n for n, _ in spec["attributes"]].index(label)]).any()
        for label in spec["labels"]
    )  # a missing label is an error
    text, _ = arff_text(rng, spec)
    xml = mulan_xml(rng, spec["labels"])
    flaw = variant % 6
    arff_raw, xml_raw = text.encode("utf-8"), xml.encode("utf-8")
    if flaw == 1:
        arff_raw = damaged(rng, variant // 6, arff_raw)
    elif flaw == 2:
        xml_raw = damaged(rng, variant // 6, xml_raw)
    elif flaw == 3:
        xml_raw = pick(rng, [
            xml.replace(NAMESPACE, "http://example.org").encode(),
            xml.replace('name="', 'nom="', 1).encode(),
            xml.replace("</labels>", '<label name="no such attribute"/></labels>').encode(),
            f'<labels xmlns="{NAMESPACE}"></labels>'.encode(),
            (xml.replace("</labels>", "") + xml).encode(),
        ])  # fmt: skip
    arff_path, xml_path = folder / "set.arff", folder / pick(rng, ["set.xml", "set.xml.gz"])
    arff_path.write_bytes(arff_raw)
    xml_path.write_bytes(gzip.compress(xml_raw) if xml_path.suffix == ".gz" else xml_raw)
    with_test = flaw in (4, 5)
    if with_test:
        test_spec = dict(spec, values=spec["values"][::-1].copy())
        test_text, _ = arff_text(rng, test_spec)
        if flaw == 5:  # another header
            lines = test_text.split("\n")
            attr = next(i for i, line in enumerate(lines) if line.lower().startswith("@attr"))
            lines[attr] = (
                lines[attr] + "_other" if "{" not in lines[attr] else "@attribute q numeric"
            )
            test_text = "\n".join(lines)
        test_path = folder / "set-test.arff"
        test_path.write_text(test_text, encoding="utf-8")
        call = lambda: load(arff_path, labels=xml_path, test=test_path)  # noqa: E731
        paths = (arff_path, xml_path, test_path)
    else:
        call = lambda: load_mulan(arff_path, xml_path)  # noqa: E731
        paths = (arff_path, xml_path)
    if rng.random() < 0.2:
        out = rejects(lambda: read_mulan_labels(xml_path), xml_path)
        if flaw in (0, 1, 4, 5):
            assert [name for name, _ in out] == spec["labels"]
        return
    out = rejects(call, *paths)
    valid = flaw == 0 or flaw == 4
    n = spec["values"].shape[0]
    expect_fail = labels_have_nan or n == 0
    if isinstance(out, Exception):
        assert not valid or expect_fail, f"a valid MULAN set was rejected: {out}"
        return
    assert not (valid and expect_fail), "a missing label or an empty file was accepted"
    assert out.Y.dtype == np.bool_ and dense(out.X).shape[0] == out.Y.shape[0]
    if valid:
        X, Y = expected_mulan(spec)
        if with_test:
            X = np.vstack([X, X[::-1]])
            Y = np.vstack([Y, Y[::-1]])
            assert out.n_train == n
        assert out.label_names == spec["labels"]
        np.testing.assert_array_equal(dense(out.X), X)
        np.testing.assert_array_equal(out.Y, Y)


# ------------------------------------------------------------------------------ UCI

UCI_FILES = {
    "balance": ("balance-scale.data", ",", False),
    "car": ("car.data", ",", False),
    "mushroom": ("agaricus-lepiota.data", ",", False),
    "nursery": ("nursery.data", ",", False),
    "mice": ("Data_Cortex_Nuclear.derived.csv", ",", True),
    "har": ("dataset-har-PUC-Rio-ugulino.csv", ";", True),
}
UCI_WIDTH = {"balance": 5, "car": 7, "mushroom": 23, "nursery": 9}
TOKENS = ["a", "b", "vhigh", "low", "x y", "?", "2", "more"]


def uci_content(rng: np.random.Generator, name: str) -> tuple[str, int, int]:
    """A valid file of the layout ``name``: its text, rows and feature count."""
    _, sep, header = UCI_FILES[name]
    n = int(rng.integers(1, 8))
    classes = ["c1", "c2", "c3"][: int(rng.integers(1, 4))]
    rows = []
    if name == "balance":
        for _ in range(n):
            rows.append(
                ",".join([pick(rng, classes), *[str(int(v)) for v in rng.integers(1, 6, 4)]])
            )
        return "\n".join(rows) + "\n", n, 4
    if name in ("car", "mushroom", "nursery"):
        width = UCI_WIDTH[name]
        class_first = name == "mushroom"
        for _ in range(n):
            cells = [pick(rng, [t for t in TOKENS if t != "?"] if name != "mushroom" else TOKENS)
                     for _ in range(width - 1)]  # fmt: skip
            cells.insert(0 if class_first else width - 1, pick(rng, classes))
            rows.append(",".join(cells))
        return "\n".join(rows) + pick(rng, ["\n", "\n\n", ""]), n, width - 1
    if name == "mice":
        features = [f"p{j}_N" for j in range(int(rng.integers(1, 5)))]
        head = ["MouseID", *features, "Genotype", "Treatment", "Behavior", "class"]
        rows.append(",".join(head))
        for i in range(n):
            vals = [
                "" if rng.random() < 0.2 else repr(float(v)) for v in rng.normal(size=len(features))
            ]
            rows.append(",".join([f"m{i}", *vals, "Control", "Saline", "C/S", pick(rng, classes)]))
        return "\r\n".join(rows) + "\r\n", n, len(features)
    head = ["user", "gender", "age", "how_tall_in_meters", "weight", "body_mass_index",
            "x1", "y1", "z1", "class"]  # fmt: skip
    rows.append(";".join(head))
    for _ in range(n):
        vals = [f"{v:.3f}".replace(".", ",") for v in rng.normal(size=3) * 100]
        rows.append(
            ";".join(["debora", "Woman", "46", "1,62", "75", "28,6", *vals, pick(rng, classes)])
        )
    return "\n".join(rows) + "\n", n, 3


def case_uci(rng: np.random.Generator, variant: int, folder: Path) -> None:
    name = pick(rng, list(UCI_FILES))
    filename = UCI_FILES[name][0]
    text, n, d = uci_content(rng, name)
    raw = text.encode("utf-8")
    bad = variant % 3 == 0
    if bad:
        raw = damaged(rng, variant // 3, raw)
    raw, cut = maybe_gzip(rng, raw)
    path = folder / (filename + (".gz" if raw[:2] == b"\x1f\x8b" and rng.random() < 0.5 else ""))
    path.write_bytes(raw)
    missing = pick(rng, ["paper", "nan"])
    out = rejects(lambda: load_uci(path, missing=missing), path)
    if isinstance(out, Exception):
        assert bad or cut, f"a valid {name} file was rejected: {out}"
        return
    assert not cut, "a truncated gzip file was read"
    assert out.X.shape[0] == out.y.shape[0] and not np.isinf(out.X).any()
    if not bad:
        assert out.X.shape == (n, d), (out.X.shape, n, d)
        assert out.class_names == list(dict.fromkeys(line_classes(text, name)))


def line_classes(text: str, name: str) -> list[str]:
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    sep = UCI_FILES[name][1]
    if UCI_FILES[name][2]:
        lines = lines[1:]
    position = 0 if name in ("balance", "mushroom") else -1
    return [line.split(sep)[position] for line in lines]


def case_uci_arguments(rng: np.random.Generator, variant: int, folder: Path) -> None:
    """Names that are no data set, known file names that do not exist, bad ``missing``."""
    how = variant % 4
    if how == 0:
        name = pick(rng, ["no-such-set", "", "car.csv", str(folder / "x.data"), "CAR.DATA"])
        with pytest.raises(ValueError, match="neither a bundled|not a known UCI file"):
            load_uci(name)
    elif how == 1:
        with pytest.raises(FileNotFoundError):
            load_uci(folder / "nowhere" / pick(rng, [f for f, _, _ in UCI_FILES.values()]))
    elif how == 2:
        with pytest.raises(ValueError, match="missing must be one of"):
            load_uci("car", missing=pick(rng, ["zero", None, "", 0]))
    else:
        with pytest.raises(ValueError, match="neither a bundled"):
            load(pick(rng, ["no-such-set", "emotionz"]))


# ------------------------------------------------------------------------------ Enron

USER = "fuzz-u"
DATES = ["Mon, 14 May 2001 16:39:00 -0700 (PDT)", "Tue, 1 Jan 2002 00:00:00 +0000",
         "14 May 2001 16:39:00 -0700", "Thu, 31 Feb 2001 10:00:00 +0000", "garbage",
         "Wed, 5 Sep 0001 09:30:00 -0500", ""]  # fmt: skip
SUBJECTS = ["Lunch plans", "=?utf-8?q?Caf=C3=A9_menu?=", "=?bogus?x?zz?=", "RE: FW: deal 42",
            "naïve résumé", ""]  # fmt: skip


def random_message(rng: np.random.Generator, secret: str) -> bytes:
    """A raw message: header fields (a date, a subject, the leaking fields holding
    ``secret``), and a body, plain or encoded, sometimes MIME, sometimes broken."""
    fields = []
    if rng.random() < 0.9:
        fields.append(f"Date: {pick(rng, DATES)}")
    fields.append(f"Subject: {pick(rng, SUBJECTS)}")
    fields.append(f"X-Folder: \\{secret}\\folder")
    fields.append(f"X-FileName: {secret}.nsf")
    fields.append(f"Message-ID: <{secret}.123@enron>")
    words = " ".join(pick(rng, ["gas", "power", "From the desk", "meeting", "price", "Zürich"])
                     for _ in range(int(rng.integers(0, 8))))  # fmt: skip
    kind = int(rng.integers(0, 6))
    if kind == 1:
        fields.append("Content-Transfer-Encoding: quoted-printable")
        body = words.replace("ü", "=C3=BC").encode("ascii", "replace")
        return ("\n".join(fields) + "\n\n").encode() + body
    if kind == 2:
        import base64

        fields.append("Content-Transfer-Encoding: base64")
        body = base64.encodebytes(words.encode("utf-8"))
    elif kind == 3:
        fields.append('Content-Type: multipart/alternative; boundary="b1"')
        body = (f"--b1\nContent-Type: text/html\n\n<p>{words}</p><script>{secret}</script>\n"
                "--b1--\n").encode()  # fmt: skip
    elif kind == 4:
        return rng.bytes(int(rng.integers(0, 80)))  # garbage: skipped, never fatal
    else:
        body = words.encode(pick(rng, ["utf-8", "latin-1"]), "replace")
    if rng.random() < 0.1:
        fields.insert(1, "this line is no field")
    return ("\n".join(fields) + "\n\n").encode() + body + b"\n"


def fast_archive(path: Path, user: str, folders: dict[str, list[bytes]]) -> None:
    """:func:`write_foldering_archive`'s layout with the fastest xz preset."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tar:
        for folder, messages in folders.items():
            mbox = bytearray()
            for raw in messages:
                raw = raw.replace(b"\r\n", b"\n")
                end = raw.find(b"\n\n")
                if end >= 0:
                    body = (b"\n" + raw[end + 2 :]).replace(b"\nFrom ", b"\n>From ")
                    raw = raw[: end + 2] + body[1:]
                mbox += b"From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n" + raw
                mbox += b"\n" if raw.endswith(b"\n") else b"\n\n"
            info = tarfile.TarInfo(f"{user}/{folder}.mbox")
            info.size = len(mbox)
            tar.addfile(info, io.BytesIO(bytes(mbox)))
    path.write_bytes(lzma.compress(out.getvalue(), format=lzma.FORMAT_XZ, preset=0))


def case_enron(rng: np.random.Generator, variant: int, folder: Path) -> None:
    secret = "zqx" + "".join(pick(rng, list("abcdefgh")) for _ in range(6))
    folders = {f"f{j}": [random_message(rng, secret) for _ in range(int(rng.integers(0, 5)))]
               for j in range(int(rng.integers(1, 4)))}  # fmt: skip
    path = folder / f"{USER}.mbox.tar.xz"
    if variant == 0:
        write_foldering_archive(path, USER, folders)  # the package's own writer, now and then
    else:
        fast_archive(path, USER, folders)
    flaw = variant % 5
    if flaw == 1:
        path.write_bytes(damaged(rng, variant // 5, path.read_bytes()))
    elif flaw == 2:
        path.write_bytes(lzma.compress(rng.bytes(int(rng.integers(0, 600))), preset=0))
    elif flaw == 3:
        fast_archive(path, "someone-else", folders)
    size = int(rng.integers(1, 4))
    out = rejects(lambda: load_enron_foldering(USER, folder, min_folder_size=size), path)
    if isinstance(out, Exception):
        return  # a broken archive, or no folder with `size` readable messages
    assert flaw in (0, 1, 4), "a broken archive was read"
    assert out.labels == sorted(out.labels) and out.X.shape[0] == len(out.y) == out.n_samples
    assert out.X.shape[1] == len(out.vocabulary) and np.all(out.X.data == 1.0)
    assert not any(secret in word for word in out.vocabulary), "a leaking field was read"
    counts = out.folder_counts()
    assert all(c >= size for c in counts.values())
    if out.n_samples:  # the vocabulary grows with the stream: columns in first-use order
        rows = np.repeat(np.arange(out.n_samples), np.diff(out.X.indptr))
        first = np.full(out.X.shape[1], out.n_samples)
        np.minimum.at(first, out.X.indices, rows)
        assert np.all(np.diff(first) >= 0) and np.all(first < out.n_samples)
        assert out.n_features_at(out.n_samples) == out.X.shape[1]


def case_enron_arguments(rng: np.random.Generator, variant: int, folder: Path) -> None:
    """Bad arguments, a missing archive, and single messages."""
    how = variant % 4
    if how == 0:
        bad = pick(rng, [
            {"user": ""}, {"user": "a/b"}, {"user": 3}, {"min_folder_size": 0},
            {"min_folder_size": 1.5}, {"min_folder_size": True}, {"fields": "Subject"},
            {"fields": ["X-Folder"]}, {"fields": ["Bad:Field"]}, {"fields": ["Message-ID"]},
        ])  # fmt: skip
        args = {"user": USER, "min_folder_size": 1, "fields": ("Subject",), **bad}
        with pytest.raises(ValueError):
            load_enron_foldering(args.pop("user"), folder, **args)
    elif how == 1:
        with pytest.raises(FileNotFoundError):
            load_enron_foldering("nobody-here", folder / "nowhere")
    elif how == 2:
        raw = random_message(rng, "zqxsecret") if rng.random() < 0.7 else rng.bytes(40)
        try:
            text = message_text(raw)
        except ValueError as err:
            assert str(err).startswith("message skipped:")
        else:  # the fields that give the folder away, and scripts, are never read
            assert "zqxsecret" not in text
    else:
        text = rng.bytes(int(rng.integers(0, 60))).decode("latin-1")
        words = tokenize(text + pick(rng, ["", " Café", " naïve ÉCOLE"]))
        assert all(len(w) > 1 and w == w.lower() for w in words)
        assert set(LEAKING_FIELDS)  # the refused fields are listed


# ------------------------------------------------------------------------------ the tests

LOADERS = {
    "arff": [case_arff, case_arff, case_arff, case_arff_missing],
    "mulan": [case_mulan, case_mulan, case_mulan, case_mulan],
    "uci": [case_uci, case_uci, case_uci, case_uci_arguments],
    "enron": [case_enron, case_enron, case_enron, case_enron_arguments],
}


@pytest.fixture
def scratch(tmp_path):
    """A folder for the generated files: in memory (``/dev/shm``) where there is one, as each
    case writes and reads a few small files; else pytest's ``tmp_path``."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm, prefix="olboost-fuzz-") as folder:
            yield Path(folder)
    else:
        yield tmp_path


@pytest.mark.parametrize("loader", list(LOADERS))
def test_fuzz_loader(loader, scratch):
    assert fuzz(LOADERS[loader], scratch) >= EXAMPLES
