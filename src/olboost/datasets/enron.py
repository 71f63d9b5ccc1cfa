"""Enron e-mail foldering: each user's messages, labelled by folder, as a chronological stream.

Shalev-Shwartz & Singer (AISTATS 2007, Sec. 5, Table 1) classify the e-mail of seven Enron users
into their folders online, after Bekkerman, McCallum & Huang (2004): every message is a binary
bag of words, the stream runs in time order, and the folders with fewer than 3 messages are left
out. :func:`load_enron_foldering` reads one user's archive of a directory laid out as
``<user>.mbox.tar.xz`` files, each tar holding one mbox per folder, ``<user>/<folder>.mbox``
(nested folders flattened with ``.``). The data are not part of the package; in the development
tree they are in ``../shared/datasets/enron_foldering`` (their provenance is in
``../shared/datasets/PROVENANCE.md``). Cite Klimt & Yang (2004) for the corpus and Bekkerman et
al. (2004) for the benchmark.

Reading a message
-----------------
* **Messages.** An mbox is split at every line that starts with ``From `` (what Python's
  :mod:`mailbox` writes and reads); the ``From `` line itself is dropped. Inside a body, lines
  that the mbox writer escaped as ``>From `` are unescaped to ``From `` (one ``>`` removed,
  mboxo style, so a body line that really began with ``>From `` loses its ``>`` too).
* **Headers.** Header fields are read as RFC 5322 says (folded lines joined); the header block
  ends at the first empty line (a message whose block holds a line that is neither a field nor a
  continuation is skipped: the :mod:`email` package would start the body there, and any field
  below it would join the words). The fields that give the label away are never read
  (:data:`LEAKING_FIELDS`; the reader picks only the fields it needs, and the :mod:`email`
  package path deletes them first): ``X-Folder`` (the folder path),
  ``X-FileName`` (the ``.nsf``/``.pst`` file the folder was exported from: several users' folders
  come from different files), ``X-Origin`` (the user as the exported file spelt it, ``LOKAY-M``
  or ``Lokay-M``: an artefact of the export like ``X-FileName``, though once lower-cased it
  gives every message of a user the same words) and ``Message-ID`` (its long number was assigned
  at export time and runs in blocks per folder). None of them is ever tokenised, and asking for
  one in ``fields=`` is an error. The same message filed in two folders appears twice, with the
  same date and words (214 such pairs in kitchen-l, 108 in beck-s): both are kept, as the
  published counts include them, the copy from the folder earlier in the archive first.
* **Text.** A single-part ``text/plain`` message (every message of the Enron archives) is
  decoded here: ``quoted-printable`` and ``base64`` bodies with :mod:`binascii` (what the
  :mod:`email` package uses), then bytes to text with the declared charset, or when there is
  none, it is unknown or no text encoding Python can decode with replacement (``base64``,
  ``idna``), or an ASCII charset meets non-ASCII bytes, as UTF-8 and failing that
  Latin-1. Anything else (multipart, HTML, other encodings) goes through the :mod:`email`
  package: the ``text/plain`` parts that are not attachments, or the ``text/html`` parts with tags
  and ``<script>``/``<style>`` contents removed and entities decoded when there is no plain part.
  A single part marked ``Content-Disposition: attachment`` is an attachment too: the message
  is then its header fields alone. Encoded words (``=?utf-8?q?...?=``) in header fields are
  decoded (some Enron subjects have them); raw 8-bit bytes in a header field are decoded with
  the charset its ``Content-Type`` declares if they decode there without error, else as UTF-8,
  failing that Latin-1. ``tests/test_enron_foldering.py``
  checks the words of every message of a real user against Python's :mod:`mailbox` and
  :mod:`email` packages.
* **Tokens.** The text of the ``fields`` (by default ``Subject`` only; :data:`HEADER_FIELDS`, the
  headers as Bekkerman et al.'s preprocessed data kept them, is what Table 1 is run on) and of
  the body is put in Unicode's NFKC form (composed accents; full-width letters and ligatures as
  plain letters; superscripts, fractions and circled numbers as digits), lower-cased and cut into
  maximal runs of letters (the regular expression ``[^\\W\\d_]``: word characters but digits
  and ``_``; for ASCII text, ``a-z``), with the combining marks that follow a letter inside
  its word (Indic vowel signs; the dot that lower-casing leaves on the ``i`` of ``İ``),
  keeping runs of at least 2 characters.
  Digits, punctuation and single letters separate words and are dropped. The paper gives "a
  coordinate for each word"; numbers in mail are mostly dates, times, prices, phone and deal
  numbers (in kaminski-v they would add 3,579 columns to 25,468, half of them seen in a single
  message, and dates would tie a column to a moment of the stream); single letters are initials
  and debris such as the ``s`` of ``FAQ's``. Words are not stemmed and no stop words are
  removed (a linear model weighs them itself). E-mail addresses and the quoted headers of
  forwarded mail in a body are ordinary text (``mark.taylor@enron.com`` gives ``mark``,
  ``taylor``, ``enron``, ``com``). A message is the *set* of its words: binary features, as the
  paper's ``x in {0, 1}^n``.
* **Dates.** The ``Date`` field as :func:`email.utils.parsedate_to_datetime` reads it, compared
  in UTC (a date without a zone is taken as UTC). The usual form is parsed here, the same way;
  so two-digit years become 19xx/20xx, and the corpus's few years ``0001`` and ``0002`` (four in
  lokay-m) read as 2001 and 2002.

The stream
----------
Messages run in increasing ``Date``; messages with equal dates keep their **position in the
archive**: the order of the mbox members in the tar file, then the order of the messages inside
the mbox. Messages whose ``Date`` is missing or cannot be parsed come after all dated messages,
in archive order (``undated`` counts them; the Enron archives have none). Bekkerman et al.'s
non-topical folders (:data:`NON_TOPICAL_FOLDERS`: ``inbox``, ``sent_items``, ``deleted_items``
...) and their subfolders are left out, as they left them out, and named in ``notes``; the
shared snapshot holds none of them (``PROVENANCE.md``), a user's own archive of raw folders may
(``exclude_folders=()`` keeps them). A folder is kept when it has at least
``min_folder_size`` messages that could be read; the others are listed in
``dropped_folders``. Labels are the kept folder names, **sorted** (so class codes do not depend
on dates; ``labels`` is known before the first message, as a booster needs it).

The vocabulary **grows as the stream goes**: a word gets the next column index when it first
appears, in stream order and, within a message, in the order of its text (fields, then body).
Column ``j``'s first nonzero row is therefore non-decreasing in ``j``, no word seen only in the
future is indexed before it appears, and ``n_features_at(t)`` is the width an online learner
has seen after ``t`` messages. ``X`` is stored at its final width.

Malformed input
---------------
A broken file is an error naming it: a missing archive (:class:`FileNotFoundError`), a file that
is not xz, truncated or corrupt xz data, a broken or truncated tar inside (one that stops before
its end-of-archive marker, even at a member boundary, where :mod:`tarfile` itself stops without
an error), or a tar with no ``<user>/<folder>.mbox`` member (:class:`ValueError`). Member names
may start with ``./``; a hard or symbolic link member reads as the member it names; members
that are no folder's mbox (other paths, ``<user>/.mbox``, a link to a missing member) are left
out and listed in ``notes``. A broken *message* never stops the stream:
it is skipped and recorded in ``skipped`` (file, message number, reason): an empty message, a
message with no header field (garbage, text before the mbox's first ``From `` line, or the
rest of a message cut by an unescaped ``From `` line), a broken header block, or a message whose
MIME structure the :mod:`email` package cannot read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from olboost.datasets._email import (
    HEADER_FIELDS,
    LEAKING_FIELDS,
    _check_fields,
    _read_message,
    message_text,
)
from olboost.datasets._mbox import _read_archive, _split_mbox, write_foldering_archive
from olboost.datasets._words import _bags_of_words, tokenize
from olboost.datasets.base import MultiLabelDataset, shared_candidates

__all__ = [
    "ENRON_USERS",
    "HEADER_FIELDS",
    "LEAKING_FIELDS",
    "NON_TOPICAL_FOLDERS",
    "PUBLISHED_COUNTS",
    "SNAPSHOT_COUNTS",
    "FolderingStream",
    "SkippedMessage",
    "load_enron_foldering",
    "message_text",
    "tokenize",
    "write_foldering_archive",
]

#: The seven users of Bekkerman et al. (2004) and Shalev-Shwartz & Singer (2007), Table 1.
ENRON_USERS: tuple[str, ...] = (
    "beck-s",
    "farmer-d",
    "kaminski-v",
    "kitchen-l",
    "lokay-m",
    "sanders-r",
    "williams-w3",
)

#: ``user -> (messages, folders)`` of Table 1 of Shalev-Shwartz & Singer (2007) (``m`` and
#: ``|Y|``), which are Bekkerman et al.'s counts; for lokay-m (2489 there) the corpus holds 2493
#: messages in the same folders.
PUBLISHED_COUNTS: dict[str, tuple[int, int]] = {
    "beck-s": (1971, 101),
    "farmer-d": (3672, 25),
    "kaminski-v": (4477, 41),
    "kitchen-l": (4015, 47),
    "lokay-m": (2489, 11),
    "sanders-r": (1188, 30),
    "williams-w3": (2769, 18),
}

#: ``user -> (messages, folders)`` that :func:`load_enron_foldering` gives with
#: ``min_folder_size=3`` on the shared snapshot (``PROVENANCE.md``). kitchen-l lacks the folder
#: ``_americas.sec_media`` (84 messages), which the snapshot could not hold: 46 of 47 folders,
#: 3931 of 4015 messages.
SNAPSHOT_COUNTS: dict[str, tuple[int, int]] = {
    "beck-s": (1971, 101),
    "farmer-d": (3672, 25),
    "kaminski-v": (4477, 41),
    "kitchen-l": (3931, 46),
    "lokay-m": (2493, 11),
    "sanders-r": (1188, 30),
    "williams-w3": (2769, 18),
}

#: The folders Bekkerman, McCallum & Huang (2004) left out as non-topical (with their
#: subfolders, ``<name>.<sub>`` once flattened): they hold mail by its state, not its topic.
NON_TOPICAL_FOLDERS: tuple[str, ...] = (
    "all_documents",
    "calendar",
    "contacts",
    "deleted_items",
    "discussion_threads",
    "inbox",
    "notes_inbox",
    "sent",
    "sent_items",
    "_sent_mail",
)

#: Where the shared benchmark data sit relative to a clone of the repository.
_SHARED = Path("..") / "shared" / "datasets" / "enron_foldering"
_ARCHIVE_SUFFIX = ".mbox.tar.xz"


def archive_path(directory: str | os.PathLike[str], user: str) -> Path:
    """The archive of ``user``'s mail in ``directory``: ``<directory>/<user>.mbox.tar.xz``."""
    return Path(directory) / f"{user}{_ARCHIVE_SUFFIX}"


# Sort key of a message without a usable Date: after every dated message.
_UNDATED = np.iinfo(np.int64).max


class SkippedMessage(NamedTuple):
    """A message that could not be read and was left out of the stream."""

    file: str
    """The mbox member of the archive (``<user>/<folder>.mbox``)."""
    index: int
    """0-based number of the message in that mbox (-1: text before its first ``From `` line)."""
    reason: str
    """Why it was skipped."""


def _default_directory() -> Path:
    """``enron_foldering`` in ``../shared/datasets`` beside the repository clone holding this
    module, or beside the working directory (:func:`~olboost.datasets.base.shared_candidates`)."""
    candidates = shared_candidates(_SHARED)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    searched = " and ".join(map(str, candidates))
    raise FileNotFoundError(
        "the Enron foldering data are not part of the package and were not found in "
        f"{searched}; pass path= (a directory holding <user>{_ARCHIVE_SUFFIX} files)"
    )


# --------------------------------------------------------------------------------------------------
# The stream


@dataclass(eq=False, repr=False)
class FolderingStream:
    """One user's messages in chronological order, as binary bags of words labelled by folder.

    Returned by :func:`load_enron_foldering`; the module docstring says how messages are read,
    ordered and tokenised.

    Parameters
    ----------
    user : str
        The user (``"beck-s"``).
    X : scipy.sparse.csr_array
        Binary float64 bags of words, shape (n, V), rows in stream order, columns in order of
        first appearance (``vocabulary``); column indices sorted within each row.
    y : numpy.ndarray
        int64 folder codes, shape (n,): row ``t`` is in folder ``labels[y[t]]``.
    labels : list of str
        The kept folder names, sorted.
    vocabulary : list of str
        The word of each column.
    dates : numpy.ndarray
        ``datetime64[s]`` (UTC) of each row; ``NaT`` for a message without a usable ``Date``.
    archive_index : numpy.ndarray
        int64 position of each row's message in the archive (0-based over the messages read, in
        tar member order then mbox order): the tie-break of equal dates.
    vocabulary_sizes : numpy.ndarray
        int64, shape (n + 1,): entry ``t`` is the number of words seen in the first ``t`` rows.
    skipped : list of SkippedMessage
        Messages that could not be read.
    dropped_folders : dict of str to int
        Folders with fewer than ``min_folder_size`` readable messages, and their counts.
    notes : list of str
        Anything else worth knowing (ignored archive members, undated messages, wanted header
        fields that no message has).
    path : str
        The archive read.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> mail = "Date: {}\\nSubject: {}\\nX-Folder: \\\\secret\\n\\n{}\\n"
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = write_foldering_archive(Path(tmp) / "ann-x.mbox.tar.xz", "ann-x", {
    ...         "budget": [mail.format("2 Jan 2001 10:00 +0000", "Q1 budget", "Numbers.")] * 3,
    ...         "golf": [mail.format("1 Jan 2001 09:00 -0100", "Tee time", "Sunday golf?"),
    ...                  mail.format("1 Jan 2001 11:00 +0000", "Golf", "Sunday!"),
    ...                  mail.format("3 Jan 2001 11:00 +0000", "Golf", "Rain")],
    ...         "misc": [mail.format("1 Jan 2001 10:00 +0000", "Hi", "Hello")],
    ...     })
    ...     stream = load_enron_foldering("ann-x", tmp)
    >>> stream
    FolderingStream(user='ann-x', n_samples=6, n_features=7, n_labels=2, skipped=0)
    >>> stream.labels, stream.dropped_folders
    (['budget', 'golf'], {'misc': 1})
    >>> [sorted(y) for x, y in stream]
    [['golf'], ['golf'], ['budget'], ['budget'], ['budget'], ['golf']]
    >>> x, y = next(iter(stream))
    >>> x
    {'tee': 1.0, 'time': 1.0, 'sunday': 1.0, 'golf': 1.0}
    >>> stream.vocabulary
    ['tee', 'time', 'sunday', 'golf', 'budget', 'numbers', 'rain']
    >>> [stream.n_features_at(t) for t in range(7)]
    [0, 4, 4, 6, 6, 6, 7]
    """

    user: str
    X: sp.csr_array
    y: np.ndarray
    labels: list[str]
    vocabulary: list[str]
    dates: np.ndarray
    archive_index: np.ndarray
    vocabulary_sizes: np.ndarray
    skipped: list[SkippedMessage] = field(default_factory=list)
    dropped_folders: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    path: str = ""

    def __post_init__(self) -> None:
        n = self.X.shape[0]
        if not (len(self.y) == len(self.dates) == len(self.archive_index) == n):
            raise ValueError("X, y, dates and archive_index must have one entry per message")
        if len(self.vocabulary) != self.X.shape[1] or len(self.vocabulary_sizes) != n + 1:
            raise ValueError("vocabulary must name the columns; vocabulary_sizes has n + 1 items")

    def __repr__(self) -> str:
        return (
            f"FolderingStream(user={self.user!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, n_labels={self.n_labels}, "
            f"skipped={len(self.skipped)})"
        )

    @property
    def n_samples(self) -> int:
        """Number of messages n."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Final vocabulary size V."""
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Number of folders k."""
        return len(self.labels)

    @property
    def undated(self) -> int:
        """Number of messages without a usable ``Date`` (at the end of the stream)."""
        return int(np.isnat(self.dates).sum())

    @cached_property
    def Y(self) -> np.ndarray:
        """bool one-hot label matrix, shape (n, k), for the array API of the rankers."""
        Y = np.zeros((self.n_samples, self.n_labels), dtype=np.bool_)
        Y[np.arange(self.n_samples), self.y] = True
        return Y

    def folder_counts(self) -> dict[str, int]:
        """Number of messages of each kept folder, in the order of ``labels``."""
        counts = np.bincount(self.y, minlength=self.n_labels)
        return {name: int(c) for name, c in zip(self.labels, counts, strict=True)}

    def n_features_at(self, t: int) -> int:
        """Vocabulary size after the first ``t`` messages (0 <= t <= n): the columns an online
        learner has seen before predicting message ``t`` (0-based)."""
        if not 0 <= t <= self.n_samples:
            raise ValueError(f"t must lie in [0, {self.n_samples}], got {t}")
        return int(self.vocabulary_sizes[t])

    def __len__(self) -> int:
        return self.n_samples

    def __iter__(self) -> Iterator[tuple[dict[str, float], frozenset[str]]]:
        """Yield ``(x, y)`` per message: ``{word: 1.0}`` for its words (in column order) and the
        one-element set of its folder."""
        vocab, labels = self.vocabulary, self.labels
        indptr, indices = self.X.indptr, self.X.indices.tolist()
        for t, code in enumerate(self.y.tolist()):
            row = indices[indptr[t] : indptr[t + 1]]
            yield dict.fromkeys([vocab[j] for j in row], 1.0), frozenset((labels[code],))

    def as_dataset(self) -> MultiLabelDataset:
        """The stream as a :class:`MultiLabelDataset` (no train/test split), for the evaluation
        functions that take one."""
        return MultiLabelDataset(
            name=f"enron-{self.user}",
            X=self.X,
            Y=self.Y,
            feature_names=list(self.vocabulary),
            label_names=list(self.labels),
        )


def _check_exclude_folders(exclude_folders: object) -> tuple[str, ...]:
    """``exclude_folders`` lower-cased, after its checks (a string is one folder's name, not
    a collection of its characters)."""
    if isinstance(exclude_folders, str | bytes) or not isinstance(exclude_folders, Iterable):
        raise TypeError(
            "exclude_folders must be a collection of folder names (() for none), got "
            f"{type(exclude_folders).__name__} {exclude_folders!r}"
        )
    names = []
    for name in exclude_folders:
        if not isinstance(name, str) or not name:
            raise TypeError(f"exclude_folders must hold non-empty folder names, got {name!r}")
        names.append(name.lower())
    return tuple(names)


def _is_excluded(folder: str, excluded: tuple[str, ...]) -> bool:
    """Whether ``folder`` is one of ``excluded`` or a subfolder of one (flattened with ``.``)."""
    name = folder.lower()
    return any(name == x or name.startswith(x + ".") for x in excluded)


def load_enron_foldering(
    user: str,
    path: str | os.PathLike[str] | None = None,
    *,
    min_folder_size: int = 3,
    fields: Sequence[str] = ("Subject",),
    exclude_folders: Iterable[str] = NON_TOPICAL_FOLDERS,
) -> FolderingStream:
    """Read one user's e-mail as a chronological stream of bags of words labelled by folder.

    The module docstring says exactly how messages are split, decoded, ordered and tokenised,
    and which header fields are removed. Nothing is cached; reading all seven users takes a few
    seconds.

    Parameters
    ----------
    user : str
        The user, e.g. ``"beck-s"`` (:data:`ENRON_USERS`): the file ``<user>.mbox.tar.xz``.
    path : str or path-like or None
        The directory holding the archives. None: ``../shared/datasets/enron_foldering`` beside
        the repository clone (or beside the working directory) when it exists; the data are not
        bundled with the package.
    min_folder_size : int
        Keep the folders with at least this many readable messages (Bekkerman et al.: 3).
    fields : sequence of str
        Header fields whose text joins the body in the bag of words (case-insensitive; all
        occurrences of each). The fields of :data:`LEAKING_FIELDS` are refused.
    exclude_folders : iterable of str
        Folders left out with their subfolders (``name`` and ``name.*``, case-insensitive)
        before the folder sizes are counted: Bekkerman et al.'s non-topical ones by default;
        ``()`` keeps every folder.

    Returns
    -------
    FolderingStream
        The messages of the kept folders in stream order.

    Raises
    ------
    FileNotFoundError
        If the archive does not exist, or ``path`` is None and the shared data are absent.
    ValueError
        If the archive is not xz, is truncated or corrupt, holds no valid tar or no
        ``<user>/<folder>.mbox`` member, if no folder has ``min_folder_size`` messages, or if a
        parameter is invalid.
    """
    if not isinstance(user, str) or not user or "/" in user or "\\" in user:
        raise ValueError(f"user must be a user name such as 'beck-s', got {user!r}")
    if isinstance(min_folder_size, bool) or not isinstance(min_folder_size, int | np.integer):
        raise ValueError(f"min_folder_size must be an int, got {min_folder_size!r}")
    if min_folder_size < 1:
        raise ValueError(f"min_folder_size must be >= 1, got {min_folder_size}")
    wanted = _check_fields(fields)
    excluded = _check_exclude_folders(exclude_folders)
    directory = _default_directory() if path is None else Path(path)
    archive = archive_path(directory, user)
    if not archive.is_file():
        found = sorted(
            p.name[: -len(_ARCHIVE_SUFFIX)]
            for p in directory.glob(f"*{_ARCHIVE_SUFFIX}")
            if p.is_file()
        )
        raise FileNotFoundError(
            2, f"No such file (users in {directory}: {', '.join(found) or 'none'})", str(archive)
        )
    members, notes = _read_archive(archive, user)

    folders: list[str] = []
    timestamps: list[int] = []
    word_lines: list[bytes] = []
    folder_of: list[int] = []
    skipped: list[SkippedMessage] = []
    having = dict.fromkeys(wanted, 0)  # messages with each wanted field
    left_out: dict[str, int] = {}
    for member, folder, data in members:
        if _is_excluded(folder, excluded):
            left_out[folder] = left_out.get(folder, 0) + len(_split_mbox(data)[1])
            continue
        code = len(folders)
        folders.append(folder)
        preamble, raws = _split_mbox(data)
        if preamble.strip():
            skipped.append(SkippedMessage(member, -1, "text before the first 'From ' line"))
        for i, raw in enumerate(raws):
            message = _read_message(raw, wanted)
            if isinstance(message, str):
                skipped.append(SkippedMessage(member, i, message))
                continue
            for name in message.fields:
                having[name] += 1
            timestamps.append(_UNDATED if message.timestamp is None else message.timestamp)
            word_lines.append(message.words)
            folder_of.append(code)

    if left_out:
        notes.append(
            f"left out {len(left_out)} non-topical folder{'s' if len(left_out) > 1 else ''} "
            f"(exclude_folders=) with {sum(left_out.values())} messages: "
            + ", ".join(f"{name} ({n})" for name, n in sorted(left_out.items()))
        )
    if not folders:
        raise ValueError(
            f"{archive}: every folder is excluded (exclude_folders=): {', '.join(sorted(left_out))}"
        )
    codes = np.asarray(folder_of, dtype=np.int64)
    counts = np.bincount(codes, minlength=len(folders))
    sizes: dict[str, int] = {}
    for name, count in zip(folders, counts.tolist(), strict=True):
        sizes[name] = sizes.get(name, 0) + count  # a folder's mbox repeated in the tar adds up
    kept = sorted(name for name, count in sizes.items() if count >= min_folder_size)
    dropped = {name: count for name, count in sizes.items() if count < min_folder_size}
    if not kept:
        raise ValueError(
            f"{archive}: no folder has at least min_folder_size={min_folder_size} readable "
            f"messages ({len(word_lines)} messages in {len(sizes)} folders)"
        )
    label_of_folder = np.array([kept.index(f) if f in kept else -1 for f in folders], np.int64)
    y_all = label_of_folder[codes]
    keep = np.flatnonzero(y_all >= 0)
    stamps = np.asarray(timestamps, dtype=np.int64)[keep]
    order = keep[np.lexsort((keep, stamps))]  # by date, then by position in the archive

    X, vocabulary, vocabulary_sizes = _bags_of_words([word_lines[i] for i in order.tolist()])
    ordered_stamps = np.asarray(timestamps, dtype=np.int64)[order]
    dates = ordered_stamps.astype("datetime64[s]")
    dates[ordered_stamps == _UNDATED] = np.datetime64("NaT", "s")
    n_undated = int((ordered_stamps == _UNDATED).sum())
    if n_undated:
        notes.append(f"{n_undated} messages without a usable Date are at the end of the stream")
    if skipped:
        notes.append(f"{len(skipped)} malformed messages skipped (see skipped)")
    # a misspelt field (fields=["Subjcet"]) added nothing to any bag of words, and said nothing
    absent = [name for name, n in having.items() if n == 0]
    if absent:
        notes.append(
            f"no message has the header field{'s' if len(absent) > 1 else ''} "
            f"{', '.join(absent)} (fields=): {'they add' if len(absent) > 1 else 'it adds'} "
            "no words"
        )
    return FolderingStream(
        user=user,
        X=X,
        y=y_all[order],
        labels=kept,
        vocabulary=vocabulary,
        dates=dates,
        archive_index=order.astype(np.int64),
        vocabulary_sizes=vocabulary_sizes,
        skipped=skipped,
        dropped_folders=dropped,
        notes=notes,
        path=str(archive),
    )
