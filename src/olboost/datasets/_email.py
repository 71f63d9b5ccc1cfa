"""One message of an Enron mbox read as :mod:`olboost.datasets.enron` says: its header block and
the fields asked for (never those that give the folder away), its date, and the decoded text of
those fields and of its body, then its words."""

from __future__ import annotations

import binascii
import codecs
import email
import email.header
import email.utils
import html
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from olboost.datasets._words import _word_line

#: Header fields removed from every message because they give the label away (lower case).
LEAKING_FIELDS: frozenset[str] = frozenset({"x-folder", "x-filename", "x-origin", "message-id"})

#: Every header field of the Enron corpus's messages but :data:`LEAKING_FIELDS`, in the order a
#: message has them (the 20,558 messages of the seven users' archives have these 13 and the 4
#: leaking ones, no other). Bekkerman et al.'s preprocessed data, which Shalev-Shwartz & Singer's
#: Table 1 uses, kept the headers and removed only ``X-Folder``: "We also remove X-folder field
#: from message headers that actually contains the class label. We do not entirely remove message
#: headers" (http://www.cs.umass.edu/~ronb/enron_dataset.html). ``fields=HEADER_FIELDS`` gives
#: that bag of words, less the other fields that name the folder's file or depend on it. Some of
#: the export still shows through what is kept: in mail exported from a ``.pst`` file ``X-From``,
#: ``X-To`` and ``X-cc`` hold Exchange addresses (``</O=ENRON/OU=NA/CN=RECIPIENTS/CN=...>``),
#: whose words (``recipients``) tell most such folders from those of a ``.nsf`` file, as
#: ``X-FileName`` would in part; Bekkerman et al. kept them, and so does Table 1's run.
HEADER_FIELDS: tuple[str, ...] = (
    "Date",
    "From",
    "To",
    "Subject",
    "Cc",
    "Bcc",
    "Mime-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "X-From",
    "X-To",
    "X-cc",
    "X-bcc",
)

# Header field lines (a name of printable ASCII but ':', as email.feedparser, then ':') with their
# continuation lines, from the start of a message: the longest run is its header block.
_FIELD_LINE = rb"[\x21-\x39\x3b-\x7e]+:[^\n]*(?:\n[ \t][^\n]*)*"
_HEADER_BLOCK = re.compile(_FIELD_LINE + rb"(?:\n" + _FIELD_LINE + rb")*")
_FIELD_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+")
_FIELD_PATTERNS: dict[tuple[str, ...], re.Pattern[bytes]] = {}
# The usual RFC 5322 date, "Thu, 24 Feb 2000 02:59:00 -0800 (PST)"; others go to email.utils.
_RFC_DATE = re.compile(
    r"\s*(?:[A-Za-z]{3},\s*)?(\d{1,2})\s+([A-Za-z]{3})\s+(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?"
    r"\s+([+-])(\d{2})(\d{2})\s*(?:\([^()]*\)\s*)?$"
)
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
_HTML_OPEN = re.compile(r"(?i)<(script|style)\b")
_HTML_CLOSE = {name: re.compile(rf"(?i)</{name}\s*>") for name in ("script", "style")}
_ASCII_CHARSETS = frozenset({"us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us"})
# The fields every message is read for (besides those of fields=).
_MIME_FIELDS = ("date", "content-type", "content-transfer-encoding", "content-disposition")
_SIMPLE_ENCODINGS = frozenset({"", "7bit", "8bit", "binary", "quoted-printable", "base64"})


#: Codecs that Python counts as text encodings but no mail is written in, whose decoders take
#: time quadratic in their input: a message declaring one is read as if it declared none
#: (300 KB of a body in "punycode" took 13 s).
_NO_MAIL_CHARSETS = frozenset({"punycode", "idna"})


def _mail_charset(charset: str | None) -> str | None:
    """``charset`` unless it names a codec of :data:`_NO_MAIL_CHARSETS`."""
    if not charset:
        return None
    try:
        name = codecs.lookup(charset).name
    except (LookupError, ValueError):
        return charset  # the decoding refuses it as before: read as if none were declared
    return None if name in _NO_MAIL_CHARSETS else charset


def _decode_bytes(raw: bytes, charset: str | None) -> str:
    """Bytes to text: ASCII as is; else the charset if it is a known non-ASCII text encoding;
    else UTF-8, failing that Latin-1 (which decodes any byte)."""
    if raw.isascii():
        return raw.decode("ascii")
    charset = _mail_charset(charset)
    if charset and charset.lower() not in _ASCII_CHARSETS:
        try:
            return raw.decode(charset, errors="replace")
        except (LookupError, ValueError):
            # Read as if no charset were declared: an unknown name, a codec that is no text
            # encoding ("base64", "rot13"), one that refuses errors="replace" ("idna",
            # "undefined"), a NUL in the name. A message must not stop the stream.
            pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _header_text(value: str) -> str:
    """A header value with RFC 2047 encoded words decoded (left as is if they are broken)."""
    if "=?" not in value:
        return value
    try:
        parts = email.header.decode_header(value)
        # an encoded word in punycode or idna (quadratic decoders): left as it is written
        if any(charset and _mail_charset(charset) is None for _, charset in parts):
            return value
        return str(email.header.make_header(parts))
    except Exception:  # the email package raises many kinds of error on bad encoded words
        return value


def _drop_scripts(text: str) -> str:
    """``text`` with each ``<script ...>...</script>`` and ``<style ...>...</style>`` element
    (names in any case, the first closing tag after the opening one) replaced by a space.

    A scan, not one regular expression (``<(script|style)\\b.*?</\\1\\s*>``, which means the
    same): for an opening tag that is never closed, that expression reads to the end of the text
    at every later opening tag, quadratic time on a long message. Here an element name that was
    found unclosed is not looked for again, since no later tag of that name can be closed either.
    """
    names = {"script", "style"}
    pieces: list[str] = []
    pos = search = 0
    while names:
        opening = _HTML_OPEN.search(text, search)
        if opening is None:
            break
        name = opening.group(1).lower()
        search = opening.end()
        if name not in names:
            continue
        closing = _HTML_CLOSE[name].search(text, search)
        if closing is None:
            names.discard(name)
            continue
        pieces += (text[pos : opening.start()], " ")
        pos = search = closing.end()
    pieces.append(text[pos:])
    return "".join(pieces)


def _drop_tags(text: str) -> str:
    """``text`` with each tag, ``<`` to the next ``>``, replaced by a space; a ``<`` with no
    ``>`` after it is text. As ``re.sub(r"<[^>]*>", " ", text)``, in linear time (that
    expression rereads the rest of the text at every ``<`` that no ``>`` follows)."""
    pieces: list[str] = []
    pos = 0
    while (start := text.find("<", pos)) >= 0:
        end = text.find(">", start)
        if end < 0:
            break
        pieces += (text[pos:start], " ")
        pos = end + 1
    pieces.append(text[pos:])
    return "".join(pieces)


def _strip_html(text: str) -> str:
    return html.unescape(_drop_tags(_drop_scripts(text)))


def _unescape_from(body: bytes) -> bytes:
    """Undo the mbox writer's escaping of body lines starting with ``From ``."""
    if b">From " not in body:
        return body
    body = body.replace(b"\n>From ", b"\nFrom ")
    return body[1:] if body.startswith(b">From ") else body


class _Message(NamedTuple):
    """What the loader keeps of a message: its date (UTC seconds, or None), its words, and
    which of the wanted header fields it has."""

    timestamp: int | None
    words: bytes
    fields: tuple[str, ...]


def _split_header(raw: bytes) -> tuple[bytes, bytes] | str:
    """The header block and the raw body of a message, or why it has none.

    The block runs to the first empty line. A line in it that is neither a field nor a
    continuation is an error (``email.feedparser`` would start the body there, which would put
    any field after it, ``X-Folder`` included, among the words).
    """
    end = raw.find(b"\n\n")
    # a message of header lines only (no empty line, no body) may end with its line break
    head, body = (raw.rstrip(b"\n"), b"") if end < 0 else (raw[:end], raw[end + 2 :])
    # a lone carriage return ends a header line, as for the email package: a field after it
    # (X-Folder, say) is a field of its own, never part of the value before it
    head = head.replace(b"\r", b"\n")
    match = _HEADER_BLOCK.match(head)
    if match is None:
        return "no header field (not an e-mail message, or a piece of one cut at a 'From ' line)"
    if match.end() < len(head):
        line = head.count(b"\n", 0, match.end()) + 2
        return f"header line {line} is neither a field nor a continuation"
    return head, body


def _read_fields(head: bytes, names: tuple[str, ...]) -> dict[str, list[str]]:
    """Every value (unfolded, decoded) of the fields ``names`` (lower case; matched
    case-insensitively) in a header block, in one pass; other fields are not read.

    Raw 8-bit bytes in a value (which RFC 5322 does not allow, but mailers write) are decoded
    with the charset of the message's ``Content-Type`` when it declares one and they decode in
    it, so that a word of the subject and the same word of the body are one word."""
    pattern = _FIELD_PATTERNS.get(names)
    if pattern is None:
        alternatives = b"|".join(re.escape(n.encode("ascii")) for n in names)
        pattern = re.compile(rb"(?im)^(" + alternatives + rb"):[ \t]*([^\n]*(?:\n[ \t][^\n]*)*)")
        _FIELD_PATTERNS[names] = pattern
    raw: list[tuple[str, bytes]] = [
        (name.decode("ascii").lower(), value.replace(b"\n", b" "))
        for name, value in pattern.findall(head)
    ]
    charset = None
    if any(not value.isascii() for _, value in raw):
        ctype = next((v for n, v in raw if n == "content-type"), b"")
        declared = _CHARSET.search(_decode_bytes(ctype, None))
        charset = declared.group(1) if declared else None
    fields: dict[str, list[str]] = {}
    for name, value in raw:
        fields.setdefault(name, []).append(_header_bytes(value, charset).strip())
    return fields


def _header_bytes(raw: bytes, charset: str | None) -> str:
    """A raw header value as text: in ``charset`` if it decodes there without error (a header
    written in another charset than its body's falls back), else as :func:`_decode_bytes`
    reads bytes of no declared charset."""
    charset = _mail_charset(charset)
    if charset and not raw.isascii():
        try:
            return raw.decode(charset)
        except (LookupError, ValueError):
            pass
    return _decode_bytes(raw, None)


def _parse_date(value: str | None) -> int | None:
    """UTC seconds of a ``Date`` value as :func:`email.utils.parsedate_to_datetime` reads it (a
    value without a zone taken as UTC); None if it cannot be read. The usual RFC 5322 form is
    read here, anything else by the email package."""
    if not value:
        return None
    match = _RFC_DATE.match(value)
    if match is not None:
        day, month, year, hour, minute, second, sign, zh, zm = match.groups()
        mon = _MONTHS.get(month.lower())
        if mon is not None:
            yy = int(year)
            if yy < 100:  # email.utils's two-digit years, which also catch the corpus's "0001"
                yy += 1900 if yy > 68 else 2000
            try:
                clock = (int(hour), int(minute), int(second or 0))
                when = datetime(yy, mon, int(day), *clock, tzinfo=UTC)
            except ValueError:
                return None
            offset = (int(zh) * 3600 + int(zm) * 60) * (1 if sign == "+" else -1)
            if abs(offset) >= 86400:  # no zone is a day off: email.utils refuses it too
                return None
            return int(when.timestamp()) - offset
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return int(when.timestamp())
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def _body_fast(fields: dict[str, list[str]], body: bytes) -> str | None:
    """The body of a single-part text/plain message, or None if the email package must read it."""
    ctype = fields.get("content-type", [""])[0]
    if ctype.split(";", 1)[0].strip().lower() not in ("", "text/plain"):
        return None
    # the email package's path leaves an attachment out, a single part's as any other
    disposition = fields.get("content-disposition", [""])[0]
    if disposition.split(";", 1)[0].strip().lower() == "attachment":
        return None
    encoding = fields.get("content-transfer-encoding", [""])[0].strip().lower()
    if encoding not in _SIMPLE_ENCODINGS:
        return None
    body = _unescape_from(body)
    if encoding == "quoted-printable":
        body = binascii.a2b_qp(body)
    elif encoding == "base64":
        try:
            body = binascii.a2b_base64(b"".join(body.split()))
        except binascii.Error:
            return None
    charset = _CHARSET.search(ctype)
    return _decode_bytes(body, charset.group(1) if charset else None)


def _text_email(raw: bytes) -> list[str]:
    """The body texts of a message read with the email package (any MIME structure). Its
    header fields are read as for every other message (:func:`_read_fields`): the package keeps
    raw 8-bit header bytes as replacement characters, which would split words."""
    end = raw.find(b"\n\n")
    if end >= 0:
        raw = raw[: end + 2] + _unescape_from(raw[end + 2 :])
    msg = email.message_from_bytes(raw)
    texts: list[str] = []
    plain: list[str] = []
    markup: list[str] = []
    for part in msg.walk():
        if part.is_multipart() or part.get_content_disposition() == "attachment":
            continue
        ctype = part.get_content_type()
        if ctype not in ("text/plain", "text/html"):
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            continue
        text = _decode_bytes(payload, part.get_content_charset())
        (plain if ctype == "text/plain" else markup).append(text)
    texts.extend(plain if plain else [_strip_html(t) for t in markup])
    return texts


def _message_text(
    raw: bytes, wanted: Sequence[str]
) -> tuple[str, int | None, tuple[str, ...]] | str:
    """``(text, timestamp, found)`` of a raw message (``found``: the fields of ``wanted`` it
    has), or the reason to skip it."""
    if not raw.strip():
        return "empty message"
    parsed = _split_header(raw)
    if isinstance(parsed, str):
        return parsed
    head, body = parsed
    fields = _read_fields(head, (*_MIME_FIELDS, *wanted))
    timestamp = _parse_date(fields.get("date", [None])[0])
    # Only the wanted fields are read from the header block, and they never include LEAKING_FIELDS.
    heads = [_header_text(v) for f in wanted for v in fields.get(f, [])]
    found = tuple(f for f in wanted if f in fields)
    text = _body_fast(fields, body)
    if text is None:
        try:
            return "\n".join([*heads, *_text_email(raw)]), timestamp, found
        except Exception as exc:  # a broken MIME structure must not stop the stream
            return f"unreadable MIME structure ({type(exc).__name__}: {exc})"
    return "\n".join([*heads, text]), timestamp, found


def _check_fields(fields: Sequence[str]) -> tuple[str, ...]:
    """The lower-case, de-duplicated field names of ``fields=``, checked."""
    if isinstance(fields, str | bytes):
        raise ValueError(f"fields must be a sequence of field names, got the string {fields!r}")
    try:
        # once: an iterator read twice would lose its names on the second pass
        fields = tuple(fields)
    except TypeError:
        raise TypeError(
            f"fields must be a sequence of field names, got {type(fields).__name__}"
        ) from None
    others = [f for f in fields if not isinstance(f, str)]
    if others:
        raise TypeError(f"fields must be field names as strings, got {others[0]!r}")
    wanted = tuple(dict.fromkeys(f.lower() for f in fields))
    bad = [f for f in wanted if not _FIELD_NAME.fullmatch(f)]
    if bad:
        raise ValueError(f"fields must be header field names (printable ASCII, no ':'): {bad}")
    leaking = sorted(set(wanted) & LEAKING_FIELDS)
    if leaking:
        raise ValueError(f"fields {leaking} give the folder away and are removed from messages")
    return wanted


def message_text(raw: str | bytes, fields: Sequence[str] = ("Subject",)) -> str:
    """The text :func:`load_enron_foldering` tokenises for one message.

    The values of ``fields`` (in that order, every occurrence, encoded words decoded), then the
    decoded body (``>From `` unescaped), one per line; :mod:`olboost.datasets.enron` gives the
    details.

    Parameters
    ----------
    raw : str or bytes
        One message as in an mbox, without its ``From `` line (``str`` is taken as UTF-8).
    fields : sequence of str
        Header fields whose text joins the body; :data:`LEAKING_FIELDS` are refused.

    Returns
    -------
    str
        The text; :func:`tokenize` gives its words.

    Raises
    ------
    ValueError
        If a field is refused, or the loader would skip the message (the reason is given).

    Examples
    --------
    >>> print(message_text("Subject: Lunch\\nX-Folder: \\\\ann\\\\golf\\n\\n>From noon on.\\n"))
    Lunch
    From noon on.
    <BLANKLINE>
    """
    wanted = _check_fields(fields)
    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    result = _message_text(data.replace(b"\r\n", b"\n"), wanted)
    if isinstance(result, str):
        raise ValueError(f"message skipped: {result}")
    return result[0]


def _read_message(raw: bytes, wanted: Sequence[str]) -> _Message | str:
    result = _message_text(raw, wanted)
    if isinstance(result, str):
        return result
    text, timestamp, found = result
    return _Message(timestamp, _word_line(text), found)
