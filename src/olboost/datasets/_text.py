"""Reading and tokenizing the text of data files: gzip detection, decoding, errors that name the
file and line, and the character tokenizer of ARFF rows (quotes, escapes, comments) that
:mod:`olboost.datasets.arff` falls back on for rows its fast path cannot split."""

from __future__ import annotations

import codecs
import contextlib
import gzip
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

# Weka's escapes inside quoted tokens; any other escaped character stands for itself.
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_QUOTES = "'\""
_GZIP_MAGIC = b"\x1f\x8b"
#: The magic bytes of the compressed and archive formats a data file is not read from.
_OTHER_COMPRESSION = (
    (b"\xfd7zXZ\x00", "xz"),
    # "BZh", a block size and a block's (or the end's) magic: a text may begin with "BZh"
    *(
        (b"BZh%d%s" % (level, block), "bzip2")
        for level in range(1, 10)
        for block in (b"1AY&SY", b"\x17rE8P\x90")
    ),
    (b"PK\x03\x04", "a zip archive's"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    # zstd's skippable frames (pzstd's output begins with one)
    *((bytes([first]) + b"\x2a\x4d\x18", "zstd") for first in range(0x50, 0x60)),
)
# Weka's tokenizer separates words by the characters 0x00-0x20 and nothing else: a no-break
# space (U+00A0, common in Latin-1 files) or an ideographic space is part of a word, and Weka
# writes such words unquoted. Python's str.isspace, str.strip and a regex's \s take those for
# spaces, which refused the files or silently read a value 'b\xa0' as 'b'.
SPACE = "".join(map(chr, range(0x21)))


class Quoted:
    """A data value that was written in quotes: its exact text, which is never a missing value
    (Weka reads ``'?'`` as the word ``?``) and keeps its spaces (``' a'`` is not ``a``). Equal
    only to another quoted value of the same text, so that a table of distinct tokens keeps
    ``'?'`` apart from ``?``."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quoted) and other.text == self.text

    def __hash__(self) -> int:
        return hash((Quoted, self.text))

    def __repr__(self) -> str:
        return repr(self.text)


#: Characters of a data token or a row an error message quotes at most.
SHOWN_CHARACTERS = 60


def clipped(text: str, limit: int = SHOWN_CHARACTERS) -> str:
    """``text`` cut to ``limit`` characters, ``...`` marking a cut: an error message quotes a
    token or a row, which a broken file can make as long as the file."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(token: str | Quoted) -> str:
    """A data token as an error message quotes it (:func:`clipped`)."""
    return clipped(token.text if isinstance(token, Quoted) else token.strip(SPACE))


def _error(path: str, line: int, message: str) -> ValueError:
    return ValueError(f"{path}, line {line}: {message}")


def instance_weight_error(path: str, line: int, row: str) -> ValueError:
    """The error for a row followed by a Weka instance weight (``1,a, {5}``, ``{0 1}, {5}``)."""
    return _error(
        path,
        line,
        f"instance weights are not supported (the row {row.strip(SPACE)[:60]!r} ends with one, "
        "in braces after a comma): every example is learned with weight 1, so remove them",
    )


def python_only_number(token: str) -> bool:
    """Whether ``token`` holds what ``float()`` reads but no ARFF or CSV number is written
    with: an underscore between digits (``1_000``) or a non-ASCII character (the digits of
    other scripts, Unicode spaces)."""
    return "_" in token or not token.isascii()


def first_python_only_number(tokens: list[str]) -> int | None:
    """The index of the first of ``tokens`` that :func:`python_only_number` flags, or ``None``."""
    # one pass in C over the joined text clears the usual file, where no token has either
    joined = "".join(tokens)
    if "_" not in joined and joined.isascii():
        return None
    return next(i for i, token in enumerate(tokens) if python_only_number(token))


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a file, decompressing it if it is gzip (recognised by its magic bytes, so a gzip file
    may have any name; a name ending with ``.gz`` must hold gzip data).

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    bytes
        The (decompressed) content.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist (``IsADirectoryError`` if it is a directory).
    ValueError
        If the gzip stream is truncated or corrupt, or the name ends with ``.gz`` but the
        content is not gzip.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(21, "Is a directory, not a data file", str(p))
    # not is_file(): a named pipe or a shell's process substitution (/dev/fd/63) is read too
    if not p.exists():
        raise FileNotFoundError(2, "No such file", str(p))
    raw = p.read_bytes()
    other = next((name for magic, name in _OTHER_COMPRESSION if raw.startswith(magic)), None)
    if other is not None:
        # read as text, it was "byte 0xfd is not UTF-8 ... mixed encodings"
        raise ValueError(
            f"{p}: {other} data (by its first bytes); a data file is read as text or gzip: "
            "decompress it first"
        )
    if raw[:2] != _GZIP_MAGIC:
        if p.name.lower().endswith(".gz"):
            # parsing binary garbage would report a syntax error that hides the real problem
            raise ValueError(
                f"{p}: not a gzip file (the name ends with .gz, but the content does not start "
                "with gzip's magic bytes 1f 8b)"
            )
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as exc:
        # A cut-off download must not parse as a shorter, valid-looking data set.
        raise ValueError(f"{p}: corrupt or truncated gzip data ({exc})") from exc


@contextlib.contextmanager
def memory_for(path: str | os.PathLike[str]) -> Iterator[None]:
    """Name the data file ``path`` in a ``MemoryError`` raised while it is read and parsed: a
    file is read whole, gzip decompressed whole, and a file too large for the machine (a
    gzip bomb among them: a megabyte that decompresses to gigabytes) ended the command with a
    bare ``MemoryError``, naming nothing."""
    try:
        yield
    except MemoryError:
        try:
            size = f"{os.path.getsize(path):,} bytes"
        except OSError:
            size = "its size unknown"
        raise MemoryError(
            f"{path}: not enough memory to load it ({size} on disk; a data file is read, and "
            "gzip data decompressed, whole into memory before it is parsed)"
        ) from None


# Windows-1252's characters for the bytes 0x80-0x9f, where Latin-1 has C1 control characters
# that no text file means (an en dash, 0x96, read as U+0096: a name that prints as the one a
# user typed, and is not). The five bytes it leaves undefined stay Latin-1's.
WINDOWS_1252 = {
    byte: bytes([byte]).decode("cp1252")
    for byte in range(0x80, 0xA0)
    if byte not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)
}
# the same as a decoding table of every byte (codecs.charmap_decode, in C: a translate of the
# decoded text ran in Python, a second per 13 MB)
_WINDOWS_1252_TABLE = "".join(WINDOWS_1252.get(byte, chr(byte)) for byte in range(256))


_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _wide_encoding(raw: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` if ``raw`` is text in one of them (by its byte order mark,
    or, with none, by NUL bytes in every other or every fourth position of its first bytes,
    which no text of one byte per character has), else ``None``."""
    for bom, name in _WIDE_BOMS:
        if raw.startswith(bom):
            return name
    head = raw[:4096]
    if len(head) < 8 or head.count(0) * 4 < len(head):
        return None
    # ASCII in UTF-16 has a NUL in every other byte, in UTF-32 three in every four
    for step, name in ((4, "UTF-32"), (2, "UTF-16")):
        for phase in range(step):
            if head[phase::step].count(0) == 0 and head.count(0) * step >= len(head) * (step - 1):
                return name
    return None


def _decode(raw: bytes, path: str) -> str:
    """The text of a file: UTF-8 (a BOM dropped), else Windows-1252 (Latin-1 with printable
    characters where it has C1 controls; the bytes Windows-1252 leaves undefined as Latin-1's).
    Old Weka files are often Latin-1 or Windows' "ANSI", and every byte string decodes so; but
    a file whose other non-ASCII text is UTF-8 holds mixed encodings, which would turn into
    mojibake (``'cafÃ©'``) with no error, so that is refused naming the line of the first byte
    that is not UTF-8."""
    wide = _wide_encoding(raw)
    if wide is not None:
        # Windows-1252 decodes them too: as text with a NUL between the letters, whose values
        # came out as new categories or as a syntax error at the first '@'
        raise _error(path, 1, f"the file is {wide} text (save it as UTF-8)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if not raw.decode("utf-8", errors="ignore").isascii():
            line = raw.count(b"\n", 0, exc.start) + 1
            raise _error(
                path,
                line,
                f"byte 0x{raw[exc.start]:02x} is not UTF-8, but the file's other non-ASCII text "
                "is: mixed encodings (save the file as UTF-8)",
            ) from None
        return codecs.charmap_decode(raw, "strict", _WINDOWS_1252_TABLE)[0]


# --------------------------------------------------------------------------------------------------
# Tokenizing


def _take_token(s: str, pos: int, stops: str, path: str, line: int) -> tuple[str, int, bool]:
    """Read one token of ``s`` starting at ``pos`` (leading whitespace skipped).

    A token is either quoted (single or double quotes, backslash escapes) or runs up to whitespace
    or one of ``stops``. Returns ``(token, position after it, was_quoted)``.
    """
    n = len(s)
    while pos < n and s[pos] <= " ":
        pos += 1
    if pos < n and s[pos] in _QUOTES:
        quote = s[pos]
        pos += 1
        out: list[str] = []
        while pos < n:
            c = s[pos]
            if c == "\\" and pos + 1 < n:
                out.append(_ESCAPES.get(s[pos + 1], s[pos + 1]))
                pos += 2
            elif c == quote:
                return "".join(out), pos + 1, True
            else:
                out.append(c)
                pos += 1
        raise _error(path, line, f"unterminated quote {quote} in {s.strip()[:60]!r}")
    start = pos
    while pos < n and s[pos] > " " and s[pos] not in stops:
        pos += 1
    return s[start:pos], pos, False


def _skip_space(s: str, pos: int) -> int:
    while pos < len(s) and s[pos] <= " ":
        pos += 1
    return pos


def _at_comment_or_end(s: str, pos: int) -> bool:
    pos = _skip_space(s, pos)
    return pos >= len(s) or s[pos] == "%"


def _split_values(
    s: str, pos: int, end_char: str, path: str, line: int, mark_quoted: bool = False
) -> tuple[list, int]:
    """Split a comma-separated list of possibly quoted tokens, from ``pos`` to ``end_char``.

    ``end_char`` is ``"}"`` inside braces or ``""`` for a list that runs to the end of the line
    (or a ``%`` comment). Returns the tokens (stripped) and the position after the list; with
    ``mark_quoted`` (data rows) a quoted token comes as a :class:`Quoted`.
    """
    values: list = []
    n = len(s)
    stops = ",%" + end_char
    while True:
        pos = _skip_space(s, pos)
        if end_char and pos < n and s[pos] == end_char and not values:
            return values, pos + 1  # empty list "{}"
        token, pos, quoted = _take_token(s, pos, stops, path, line)
        values.append(Quoted(token) if quoted and mark_quoted else token)
        pos = _skip_space(s, pos)
        if pos < n and s[pos] == ",":
            pos += 1
            continue
        if end_char:
            if pos < n and s[pos] == end_char:
                return values, pos + 1
            raise _error(path, line, f"expected ',' or {end_char!r} in {s.strip()[:60]!r}")
        if pos >= n or s[pos] == "%":
            return values, pos
        raise _error(path, line, f"expected ',' after {token!r} in {s.strip()[:60]!r}")


def _slow_row(s: str, path: str, line: int) -> tuple[list[str] | None, list]:
    """Tokenize a data row that contains quotes or ``%``: ``(sparse indices or None, values)``,
    a quoted value as a :class:`Quoted`."""
    pos = _skip_space(s, 0)
    if pos < len(s) and s[pos] == "{":
        # Sparse pieces are "index value"; split them with the quote-aware tokenizer.
        idx: list[str] = []
        vals: list = []
        pos += 1
        while True:
            pos = _skip_space(s, pos)
            if pos < len(s) and s[pos] == "}" and not idx:
                pos += 1
                break
            i, pos, _ = _take_token(s, pos, ",}%", path, line)
            v, pos, quoted = _take_token(s, pos, ",}%", path, line)
            if not i or not (v or quoted):
                raise _error(path, line, f"bad sparse entry in {s.strip()[:60]!r}")
            idx.append(i)
            vals.append(Quoted(v) if quoted else v)
            pos = _skip_space(s, pos)
            if pos < len(s) and s[pos] == ",":
                pos += 1
            elif pos < len(s) and s[pos] == "}":
                pos += 1
                break
            else:
                raise _error(path, line, f"expected ',' or '}}' in sparse row {s.strip()[:60]!r}")
        if not _at_comment_or_end(s, pos):
            if s[_skip_space(s, pos) :].startswith(","):
                raise instance_weight_error(path, line, s)
            raise _error(path, line, "unexpected text after '}' in sparse row")
        return idx, vals
    vals, _ = _split_values(s, pos, "", path, line, mark_quoted=True)
    return None, vals
