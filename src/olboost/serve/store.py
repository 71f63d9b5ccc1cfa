"""The service's durable state: an SQLite log of impressions and feedback, and model checkpoints.

A store is a directory::

    STORE/log.sqlite       every impression and every feedback (but those pruned), in WAL mode
    STORE/initial.olb      the model as created, before any feedback (never rewritten)
    STORE/checkpoint.olb   the model after the feedback of log sequence <= ``seq`` (atomic)
    STORE/token            the bearer token, when the service generated one (mode 0600)
    STORE/lock             locked by the service that serves the store (:class:`StoreLock`)

**The log.** ``impressions`` holds what was shown (the feature vector as float64 bytes, the shown
label indices and the logged pair probabilities, so that a feedback can be learned from the log
alone, without the model that showed it); ``feedback`` holds each accepted feedback, its ``seq``
(an ``INTEGER PRIMARY KEY``, increasing) being the order in which feedback was acknowledged and is
learned. ``feedback_id`` and ``impression`` are ``UNIQUE``: a feedback id is stored once, an
impression answered once. The service commits a row before it answers the request, so every
acknowledged impression or feedback is in the log, after a crash or a kill of the process (and
after a power loss too with ``synchronous="full"``, the default).

**Recovery.** The model after a crash is :func:`Store.recover`'s: the checkpoint, then every
feedback of the log after its ``seq``, in ``seq`` order. :func:`replay` learns the whole log from
``initial.olb``; both give, bit for bit, the model of a service that learned every acknowledged
feedback in acknowledgement order (``tests/test_serve_crash.py``).

A checkpoint ahead of its log (it has learned a ``seq`` the log does not hold: the log lost its
last commits, or an older log was restored) is refused: recovering from it would give the lost
``seq`` numbers to new feedback and then skip that feedback as learned. Restore the matching log,
or remove ``checkpoint.olb``: a store with its configuration and ``initial.olb`` but no checkpoint
is rebuilt from ``initial.olb`` by replaying the whole log (:meth:`Store.rebuild_checkpoint`).

**Pruning.** A service run with ``prune_log`` deletes, after each checkpoint (and every
:data:`PRUNE_EVERY` seconds), the impressions past their deadline that nothing needs any more,
and their feedback (:meth:`Store.prune`):
SQLite reuses the freed pages, and the log's size follows the traffic of the last checkpoint
interval and impression TTL instead of the whole history. The counts of what was deleted stay
in ``meta`` for the service's counters; a pruned log can no longer rebuild a model from
``initial.olb``, which is refused (so is a checkpoint older than the pruning).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from olboost._lock import ProcessLock
from olboost.checkpoint import (
    atomic_write,
    load,
    load_run,
    remove_stale_temporaries,
    save,
    save_run,
)

__all__ = [
    "ImpressionRecord",
    "backup",
    "LoggedFeedback",
    "Store",
    "feedback_of",
    "refuse_a_lost_log",
    "StoreLock",
    "replay",
    "write_checkpoint",
]


#: The files of a store (the module docstring), with SQLite's write-ahead log and shared memory:
#: what no other output of a service may be written over.
STORE_FILES = (
    "log.sqlite", "log.sqlite-wal", "log.sqlite-shm", "initial.olb", "checkpoint.olb", "token",
    "lock",
)  # fmt: skip


class StoreLock(ProcessLock):
    """The lock of the store at ``path`` for one service, held until :meth:`release` or the end
    of the process (a kill included): a :class:`~olboost._lock.ProcessLock` on ``STORE/lock``.

    Two services on one store each learned only their own feedback from one log, so that either
    one's recovery skipped the other's (their impression numbers collided first).

    Raises
    ------
    ValueError
        If another service holds the lock, naming its process id."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(Path(path) / "lock", lambda pid: _in_use(path, pid))


def refuse_a_lost_log(path: Path) -> None:
    """Raise if ``path`` holds a store's model files but its log is gone (or empty): opening it
    would start a new, empty log, and the checkpoint was then refused as "another store's"."""
    log = path / "log.sqlite"
    if log.exists() and log.stat().st_size > 0:
        return
    models = [name for name in ("checkpoint.olb", "initial.olb") if (path / name).exists()]
    if models:
        state = "empty" if log.exists() else "missing"
        raise ValueError(
            f"{log}: {state}, but {path} holds {' and '.join(models)} of a store whose log it "
            "was: restore log.sqlite (with log.sqlite-wal if there was one), or serve a new "
            "store in another directory"
        )


def refuse_a_foreign_model(path: Path) -> None:
    """Raise before the model file ``path`` of a store is loaded if a user other than this
    process's (or root) could have written it: if it is owned by another user, is writable by
    every user, or lies in a directory every user can write to without the sticky bit (anyone
    could then put another file in its place). Loading a model unpickles it, which can run any
    code; the README's advice to keep a store where only its service's user can write was not
    checked. Group-writable files pass: under a umask of 002 every file is, the group being the
    user's own on most systems. POSIX only (Windows has neither the modes nor the ids)."""
    if not hasattr(os, "geteuid"):
        return
    me = os.geteuid()
    info = path.stat()
    if info.st_uid not in (me, 0):
        raise ValueError(
            f"{path}: owned by user {info.st_uid}, not by this process's user {me}; loading a "
            "model runs code (it is unpickled): serve only a store its own user wrote (chown "
            "the file if it is yours)"
        )
    if info.st_mode & stat.S_IWOTH:
        raise ValueError(
            f"{path}: writable by every user (mode {stat.S_IMODE(info.st_mode):#o}); loading a "
            "model runs code (it is unpickled): take the permission away (chmod o-w) if the file "
            "is yours (a file system without POSIX permissions, such as FAT, exFAT or WSL's "
            "/mnt/c, shows every file so: keep the store on another)"
        )
    # the directories of the name as given (a symbolic link can be replaced in its own) and
    # of the file it names
    directories = dict.fromkeys([*Path(os.path.abspath(path)).parents, *path.resolve().parents])
    for directory in directories:
        mode = directory.stat().st_mode
        if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            raise ValueError(
                f"{path}: in {directory}, which every user can write to (mode "
                f"{stat.S_IMODE(mode):#o}, no sticky bit), so that anyone could have put it "
                "there; loading a model runs code (it is unpickled): take the permission away "
                f"(chmod o-w {directory})"
            )


#: SQLite's primary result codes of a log that could not be used for a reason other than its
#: content: a full disk, an I/O error, no permission, read-only, busy (sqlite3's
#: ``sqlite_errorcode`` & 0xff).
_NOT_DAMAGE = {3: "no permission", 5: "another program holds its lock",
               6: "another program holds its lock", 8: "read-only", 10: "an I/O error",
               13: "the disk is full", 14: "it cannot be opened"}  # fmt: skip


#: SQLite's primary result codes of a damaged file, or not an olboost log: SQLITE_ERROR (a
#: query that does not fit the file's tables), SQLITE_CORRUPT, SQLITE_NOTADB (and 0, no code:
#: the damage quick_check found).
_DAMAGE = (0, 1, 11, 26)


#: SQLITE_IOERR_SHMSIZE: the log's shared-memory index (``log.sqlite-shm``) could not grow,
#: usually on a full disk (an I/O error of that file too); SQLite says "disk I/O error".
SQLITE_IOERR_SHMSIZE = 4874


def log_error(log: Path, err: sqlite3.DatabaseError) -> ValueError:
    """The error of a log SQLite refused to open: damaged, or (a full disk, say) not, which
    an operator must not take for damage and restore or remove an intact log for."""
    extended = getattr(err, "sqlite_errorcode", None) or 0
    code = extended & 0xFF
    reason = _NOT_DAMAGE.get(code)
    if extended == SQLITE_IOERR_SHMSIZE:
        reason = "its WAL index could not grow, usually a full disk"
    if reason is None and code not in _DAMAGE:
        return ValueError(f"{log}: cannot be used now ({err})")
    if reason is None:
        return ValueError(
            f"{log}: not a readable olboost log ({err}); restore a backup made by olboost "
            "backup (a copy of a serving store's files can pair the log with a "
            "log.sqlite-wal of another moment)"
        )
    return ValueError(
        f"{log}: cannot be used now: {reason} ({err}); the log itself is not known to be "
        "damaged: fix that and start again"
    )


def _in_use(path: str | os.PathLike[str], pid: str) -> str:
    if pid == str(os.getpid()):  # a Service of this process, never closed (a notebook's)
        return (
            f"{path}: the store is served by another Service of this process, not closed: "
            "close() it (or use it: with Service(...) as service), or serve another store"
        )
    return (
        f"{path}: the store is served by another service (process {pid}); stop it first, or "
        "give another --store"
    )


#: Bytes SQLite truncates the log's WAL file to after each of its checkpoints (64 MiB).
WAL_SIZE_LIMIT = 64 << 20

#: Values of :class:`Store`'s ``synchronous``.
SYNCHRONOUS = ("full", "normal")

#: Version of the log's tables; a store of another version is refused.
SCHEMA_VERSION = 2
#: Version of a log that :meth:`Store.prune` has pruned: the tables of version 2, with what was
#: deleted counted in ``meta``. An olboost of before pruning, which reads version 2 only, would
#: count it short and rebuild a model from it as from a whole log, without a word: it refuses it.
PRUNED_SCHEMA_VERSION = 3
#: Impressions :meth:`Store.prune` deletes in one transaction at most: the log writer's commits
#: wait for it (3-9 ms for 500 impressions of 103 features and their feedback, with
#: ``synchronous="full"``, measured on our 2-core machine; 2,000 took 13-40 ms, a p99 of its own).
PRUNE_ROWS = 500
#: Bytes of features :meth:`Store.prune` deletes in one transaction, about (at least 16
#: impressions), which bounds its rows for wide feature vectors (:func:`prune_limit`): 500
#: impressions of 4,000 features took some 95 ms.
PRUNE_BYTES = 1 << 20
#: Seconds between two prunes while no checkpoint is written: the impressions never answered
#: need none to be pruned once past their deadline (a service whose clients send clicks only).
PRUNE_EVERY = 60.0
#: The counters of :meth:`Store.pruned`, kept in ``meta`` as ``pruned_<name>``.
_PRUNED = ("impressions", "feedback", "expired", "seq", "id", "prefix")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS impressions (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    round INTEGER NOT NULL,
    draw_key TEXT NOT NULL,
    x BLOB NOT NULL,
    shown BLOB NOT NULL,
    probs BLOB,
    own BLOB
);
CREATE TABLE IF NOT EXISTS feedback (
    seq INTEGER PRIMARY KEY,
    feedback_id TEXT NOT NULL UNIQUE,
    impression INTEGER NOT NULL UNIQUE REFERENCES impressions(id),
    clicked BLOB NOT NULL,
    received REAL NOT NULL
);
"""


@dataclass(frozen=True, eq=False)
class ImpressionRecord:
    """One logged impression.

    Attributes
    ----------
    id
        Its sequence number in the log.
    public_id
        The id given to the client.
    created, expires
        Unix times: when it was shown and after which its feedback is refused.
    round, key
        The round and the draw key of the ranking shown.
    x
        The feature vector (float64).
    shown
        The shown label indices, in display order (int64).
    probs
        The logged pair probabilities ``(k, k)`` of a top-k booster; ``None`` for a
        full-feedback model.
    own
        The model's scores of the shown labels (display order): its own order of them, which
        the draw may have changed (``None`` in a log of schema version 1).
    """

    id: int
    public_id: str
    created: float
    expires: float
    round: int
    key: int
    x: np.ndarray
    shown: np.ndarray
    probs: np.ndarray | None
    own: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class LoggedFeedback:
    """One logged feedback: its ``seq`` (acknowledgement order), id, the impression it answers
    and the clicked mask (over the shown labels for a top-k booster, over every label for a
    full-feedback model)."""

    seq: int
    feedback_id: str
    impression: ImpressionRecord
    clicked: np.ndarray


def feedback_of(model: Any, record: ImpressionRecord, clicked: np.ndarray) -> Any:
    """What ``model`` learns from a feedback: a :class:`~olboost.feedback.TopkFeedback` built
    from the logged propensities (top-k booster) or the relevant set (full feedback)."""
    from olboost.feedback import TopkFeedback

    labels = model._outputs()
    if record.probs is not None:
        return TopkFeedback(record.shown, clicked, record.probs, model.__dict__.get("model_id_"))
    return {labels[i] for i in np.flatnonzero(clicked).tolist()}


def _row_impression(row: tuple) -> ImpressionRecord:
    id_, public_id, created, expires, round_, key, x, shown, probs, own = row
    shown_a = np.frombuffer(shown, dtype="<i8").astype(np.int64)
    k = shown_a.shape[0]
    return ImpressionRecord(
        id=id_,
        public_id=public_id,
        created=created,
        expires=expires,
        round=round_,
        key=int(key),
        x=np.frombuffer(x, dtype="<f8").astype(np.float64),
        shown=shown_a,
        probs=None if probs is None else np.frombuffer(probs, dtype="<f8").reshape(k, k).copy(),
        own=None if own is None else np.frombuffer(own, dtype="<f8").astype(np.float64),
    )


_IMPRESSION_COLUMNS = "i.id, i.public_id, i.created, i.expires, i.round, i.draw_key, i.x, " \
    "i.shown, i.probs, i.own"  # fmt: skip


def prune_limit(n_features: int) -> int:
    """Impressions of ``n_features`` features :meth:`Store.prune` deletes in one transaction:
    :data:`PRUNE_ROWS`, fewer where they would hold more than :data:`PRUNE_BYTES` of features,
    and at least 16."""
    return max(16, min(PRUNE_ROWS, PRUNE_BYTES // (8 * max(n_features, 1) + 256)))


def sqlite_uri(path: PurePath) -> str:
    """The ``file:`` URI SQLite opens the absolute ``path`` by: a Windows share's
    (``\\\\server\\share\\...``) with the host in the path, as SQLite takes no host."""
    uri = path.as_uri()
    if uri.startswith("file://") and not uri.startswith("file:///"):
        uri = "file:////" + uri.removeprefix("file://")
    return uri


def make_directory(path: Path) -> None:
    """Make the directory ``path`` and its missing parents, none writable by every user
    whatever the umask (``mkdir(parents=True)`` gives its mode to the last one only), and
    ``path`` itself, a store, entered by its user only (0700): its log holds every impression's
    features and every click, which the usual umask (022) left readable by every user. A
    directory that exists keeps its mode."""
    for directory in reversed(path.parents):
        if not directory.exists():
            directory.mkdir(mode=0o775, exist_ok=True)
    if not path.exists():
        path.mkdir(mode=0o700, exist_ok=True)


def refuse_a_file(path: str | os.PathLike[str], what: str = "a store") -> None:
    """A ``NotADirectoryError`` naming ``path`` if it is a file: a store (or ``what`` else) is a
    directory (making it said only "File exists")."""
    if Path(path).exists() and not Path(path).is_dir():
        raise NotADirectoryError(20, f"a file, not {what} (a directory)", str(path))


class Store:
    """A service's directory: the log and the checkpoints (see the module docstring).

    Parameters
    ----------
    path
        The store directory; created if missing.
    synchronous
        SQLite's ``synchronous`` setting: ``"full"`` (a commit is on disk when it returns:
        acknowledged rows survive a power loss) or ``"normal"`` (a commit is in the operating
        system's hands when it returns: acknowledged rows survive a crash or a kill of the
        service, not a power loss; several times cheaper per commit).
    verify
        Read every page of the log when opening it (SQLite's ``quick_check``), so that a
        damaged one is refused here, naming the file, rather than failing a later query, and
        check that it can be written (SQLite opens a log it cannot write read-only, without a
        word: the service started, then stopped at its first request). Off only for a second
        connection of a service that opened (and verified) the log itself.
    read_only
        Open an existing store's log for reading only (:func:`replay`, :func:`backup`): no
        directory or log is created, nothing is written, and a path without a log is refused.
    """

    @staticmethod
    def exists(path: str | os.PathLike[str]) -> bool:
        """Whether a store was opened at ``path`` before (its log exists), without opening it
        (which creates the directory and the log)."""
        return (Path(path) / "log.sqlite").exists()

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "full",
        verify: bool = True,
        read_only: bool = False,
    ):
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {SYNCHRONOUS}, got {synchronous!r}")
        refuse_a_file(path)
        self.path = Path(path)
        #: (checkpoint seq, its counters or None) of the last :meth:`recover`
        self.recovered_from: tuple[int, dict[str, Any] | None] | None = None
        log = self.path / "log.sqlite"
        if read_only:
            self._open_read_only(log, verify)
            return
        # never writable by every user, whatever the umask: its models are code when loaded
        # (refuse_a_foreign_model)
        make_directory(self.path)
        refuse_a_lost_log(self.path)
        # (a directory in the log's place fails here: "unable to open database file")
        self._connect(log, log, isolation_level=None)
        with self._closed_if_refused(log):
            # WAL: readers (recovery, tests) never block the writer, and a commit appends to
            # the WAL file before it returns
            self.db.execute("PRAGMA journal_mode=WAL")
            # a WAL that grew while a reader held it back (a backup of a large log) keeps its
            # size for as long as the service runs, unless truncated after its checkpoints
            self.db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            self.db.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(_SCHEMA)
            version = self.meta("schema_version")
            if version == "1":
                # version 2 logs the model's own scores of the shown labels (the estimated
                # rank loss compares clicks with them); version 1's impressions have none
                self.db.execute("ALTER TABLE impressions ADD COLUMN own BLOB")
                self.set_meta("schema_version", "2")
                version = "2"
            if verify:
                self._check_pages()
                # a write, taken back (read-only: SQLITE_READONLY, said by log_error;
                # BEGIN IMMEDIATE alone takes the lock of a read-only log)
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    self.db.execute("INSERT OR REPLACE INTO meta VALUES ('write_probe', '')")
                finally:
                    self.db.execute("ROLLBACK")
            if version is None:
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            else:
                self._check_version(version)

    def _open_read_only(self, log: Path, verify: bool) -> None:
        if not log.is_file():
            raise ValueError(f"{self.path}: no store here (no log.sqlite)")
        shm = log.with_name(log.name + "-shm")
        if hasattr(os, "geteuid") and not shm.exists() and log.stat().st_uid != os.geteuid():
            # a reader of a log in WAL mode makes its -wal and -shm files, which it cannot
            # remove: of another user, the service's own could then not open its log
            raise ValueError(
                f"{log}: owned by user {log.stat().st_uid}: read a stopped store as its own "
                f"user, or while its service runs (else SQLite leaves beside it a {shm.name} "
                "and a log.sqlite-wal of this user, which the service cannot open)"
            )
        self._connect(log, f"{sqlite_uri(log.absolute())}?mode=ro", uri=True)
        with self._closed_if_refused(log):
            version = self.meta("schema_version")
            self._check_version(version, " (a service started on it upgrades it)")
            if verify:
                self._check_pages()

    def _connect(self, log: Path, *args: Any, **kwargs: Any) -> None:
        """Open the log ``log`` (``sqlite3.connect(*args, **kwargs)``), or say why it cannot be."""
        try:
            self.db = sqlite3.connect(*args, **kwargs)
        except sqlite3.DatabaseError as err:
            raise log_error(log, err) from None

    @contextlib.contextmanager
    def _closed_if_refused(self, log: Path) -> Iterator[None]:
        """Close the log if the opening is refused (it stayed open, its files too, for as long
        as the error was kept), an SQLite error said by :func:`log_error`."""
        try:
            yield
        except BaseException as err:
            self.db.close()
            if isinstance(err, sqlite3.DatabaseError):
                raise log_error(log, err) from None
            raise

    def _check_pages(self) -> None:
        """A damaged page of the tables or of an index opened without a word and failed later
        (at recovery with a traceback, or at the first feedback with 503s for good): checked
        once at opening, by a pass over every page (O(log size), SQLite's ``quick_check``)."""
        problem = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            raise sqlite3.DatabaseError(f"damaged: {problem}")

    def _check_version(self, version: str | None, hint: str = "") -> None:
        if version not in (str(SCHEMA_VERSION), str(PRUNED_SCHEMA_VERSION)):
            raise ValueError(
                f"{self.path}: a log of schema version {version}; this olboost reads "
                f"versions {SCHEMA_VERSION} and {PRUNED_SCHEMA_VERSION} (pruned){hint}"
            )

    # ------------------------------------------------------------------ files

    @property
    def checkpoint_path(self) -> Path:
        return self.path / "checkpoint.olb"

    @property
    def initial_path(self) -> Path:
        return self.path / "initial.olb"

    def created(self) -> bool:
        """Whether the store holds a model (its first checkpoint was written)."""
        return self.checkpoint_path.exists()

    def create(self, model: Any, config: dict[str, Any]) -> None:
        """Record a new service: its configuration, the initial model and the first checkpoint
        (written last: the store counts as created once it exists)."""
        if self.created():
            raise ValueError(f"{self.path}: the store already holds a model")
        if self.count("impressions") or self.count("feedback"):
            raise ValueError(f"{self.path}: a log without a checkpoint; remove it or restore one")
        self.set_meta("config", json.dumps(config, sort_keys=True))
        # names the store in its checkpoints, so that one restored into another store (a backup
        # put back in the wrong place) is refused rather than replayed under a foreign log
        self.set_meta("store_id", uuid.uuid4().hex)
        save(model, self.initial_path)
        digest = hashlib.sha256(self.initial_path.read_bytes()).hexdigest()
        self.set_meta("initial_sha256", digest)
        self.write_checkpoint(model, 0)

    def can_rebuild(self) -> bool:
        """Whether the store was created but has lost its checkpoint (removed by an operator,
        see :meth:`recover`), so that :meth:`rebuild_checkpoint` applies."""
        return not self.created() and self.config() is not None and self.initial_path.exists()

    def rebuild_checkpoint(self) -> None:
        """Write ``initial.olb`` as the checkpoint of ``seq`` 0, so that :meth:`recover` replays
        the whole log: the model of :func:`replay`. Refused for a log :meth:`prune` has pruned
        of feedback, which no longer holds the whole history."""
        if not self.can_rebuild():
            raise ValueError(f"{self.path}: no initial.olb to rebuild the checkpoint from")
        self.refuse_if_pruned(
            f"{self.checkpoint_path.name} is missing and ",
            "the model cannot be rebuilt from initial.olb; restore the store's checkpoint.olb, "
            "or a whole backup of the store (olboost backup: its checkpoint.olb with its "
            "log.sqlite)",
        )
        self.write_checkpoint(self.initial_model(), 0)

    def refuse_a_modelless_log(self) -> None:
        """Raise if the log belongs to no model yet: a store whose service was made but never
        started (``replay`` failed with a bare ``FileNotFoundError`` for ``initial.olb``)."""
        if self.config() is None or not self.initial_path.exists():
            raise ValueError(
                f"{self.path}: no store here yet (a log without a model: its service was never "
                "started)"
            )

    def _rebuild_advice(self) -> str:
        """The way out of a refused checkpoint after "restore ..., or": rebuilding from
        ``initial.olb``, or a whole backup where the log was pruned and cannot rebuild."""
        if self.pruned()["seq"]:
            return (
                "restore a whole backup of the store (olboost backup: its checkpoint.olb with "
                "its log.sqlite; the log was pruned, --prune-log, and cannot rebuild the model "
                "from initial.olb)"
            )
        return "move checkpoint.olb away to rebuild the model from initial.olb and the log"

    def refuse_if_pruned(self, what: str, consequence: str) -> None:
        """Raise if :meth:`prune` deleted feedback from the log: the model of the whole log can
        then be had only from a checkpoint that learned it. The message is ``what`` (ending
        with a space, or empty), the pruning, then ``consequence`` (what to do)."""
        seq = self.pruned()["seq"]
        if seq:
            raise ValueError(
                f"{self.path}: {what}the log was pruned (--prune-log) of feedback up to seq "
                f"{seq}, learned by the checkpoints since: {consequence}"
            )

    def config(self) -> dict[str, Any] | None:
        """The stored configuration (``None`` before :meth:`create`)."""
        text = self.meta("config")
        return None if text is None else json.loads(text)

    @property
    def store_id(self) -> str | None:
        """The store's id, written in each of its checkpoints (``None`` for a store created
        before stores had one)."""
        return self.meta("store_id")

    def write_checkpoint(self, model: Any, seq: int) -> None:
        """Save ``model``, which has learned every feedback up to ``seq``, atomically."""
        write_checkpoint(self.path, model, seq, self.store_id)

    def read_checkpoint(self) -> tuple[Any, int]:
        """The last checkpoint: the model and the ``seq`` it has learned up to; a
        ``ValueError`` for a checkpoint another store wrote."""
        state = self._checkpoint_state()
        return state["model"], int(state["seq"])

    def _checkpoint_state(self) -> dict[str, Any]:
        remove_stale_temporaries(self.checkpoint_path)
        refuse_a_foreign_model(self.checkpoint_path)
        state = load_run(self.checkpoint_path)
        if state.get("store_id") != self.store_id:
            if self.store_id is None and self.config() is None:
                raise ValueError(
                    f"{self.path / 'log.sqlite'}: holds no store, but {self.checkpoint_path} is "
                    f"the checkpoint of store {state.get('store_id')!r}: the log was lost or "
                    "replaced; restore log.sqlite (with log.sqlite-wal if there was one)"
                )
            raise ValueError(
                f"{self.checkpoint_path}: the checkpoint of another store (store id "
                f"{state.get('store_id')!r}, this store {self.store_id!r}): restore this "
                f"store's own checkpoint, or {self._rebuild_advice()}"
            )
        return state

    def initial_model(self) -> Any:
        """The model as created (:meth:`create`); a ``ValueError`` for an ``initial.olb`` that
        is not the one the store was created with (another store's, restored in its place: a
        store was then rebuilt on another model than its configuration's)."""
        refuse_a_foreign_model(self.initial_path)
        recorded = self.meta("initial_sha256")
        data = self.initial_path.read_bytes()
        if recorded is not None and hashlib.sha256(data).hexdigest() != recorded:
            raise ValueError(
                f"{self.initial_path}: not this store's initial model (its SHA-256 differs from "
                "the one the log recorded when the store was created): restore this store's own "
                "initial.olb"
            )
        return load(self.initial_path)

    # ------------------------------------------------------------------ log

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def count(self, table: str) -> int:
        if table not in ("impressions", "feedback"):
            raise ValueError(f"no table {table!r}")
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    def impression_at(self, seq: int) -> str | None:
        """The public id of the impression the feedback of ``seq`` answers (``None``: none)."""
        row = self.db.execute(
            "SELECT i.public_id FROM feedback f JOIN impressions i ON i.id = f.impression "
            "WHERE f.seq = ?",
            (seq,),
        ).fetchone()
        return None if row is None else row[0]

    def last_ids(self) -> tuple[int, int]:
        """The largest impression id and feedback ``seq`` in the log (0 when none)."""
        i = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM impressions").fetchone()[0]
        f = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM feedback").fetchone()[0]
        return i, f

    def insert_impression(self, r: ImpressionRecord) -> None:
        self.db.execute(
            "INSERT INTO impressions (id, public_id, created, expires, round, draw_key, x, "
            "shown, probs, own) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                r.id, r.public_id, r.created, r.expires, r.round, str(r.key),
                r.x.astype("<f8").tobytes(), r.shown.astype("<i8").tobytes(),
                None if r.probs is None else r.probs.astype("<f8").tobytes(),
                None if r.own is None else r.own.astype("<f8").tobytes(),
            ),
        )  # fmt: skip

    def insert_feedback(
        self, feedback_id: str, impression: int, clicked: np.ndarray, received: float
    ) -> int:
        """Append a feedback; returns its ``seq``."""
        cur = self.db.execute(
            "INSERT INTO feedback (feedback_id, impression, clicked, received) VALUES (?, ?, ?, ?)",
            (feedback_id, impression, clicked.astype(np.uint8).tobytes(), received),
        )
        return int(cur.lastrowid)

    def impression(self, public_id: str) -> tuple[ImpressionRecord, str | None] | None:
        """The impression of ``public_id`` and the id of the feedback that answered it (or
        ``None``); ``None`` if there is no such impression."""
        row = self.db.execute(
            f"SELECT {_IMPRESSION_COLUMNS}, f.feedback_id FROM impressions i "
            "LEFT JOIN feedback f ON f.impression = i.id WHERE i.public_id = ?",
            (public_id,),
        ).fetchone()
        if row is None:
            return None
        return _row_impression(row[:-1]), row[-1]

    def feedback_by_id(self, feedback_id: str) -> tuple[int, str, np.ndarray] | None:
        """``(seq, impression public id, clicked mask)`` of a stored feedback id, or ``None``."""
        row = self.db.execute(
            "SELECT f.seq, i.public_id, f.clicked FROM feedback f "
            "JOIN impressions i ON i.id = f.impression WHERE f.feedback_id = ?",
            (feedback_id,),
        ).fetchone()
        if row is None:
            return None
        return row[0], row[1], np.frombuffer(row[2], dtype=np.uint8).astype(np.bool_)

    def feedback_after(self, seq: int) -> Iterator[LoggedFeedback]:
        """Every feedback with ``seq`` greater than ``seq``, in ``seq`` order."""
        rows = self.db.execute(
            f"SELECT f.seq, f.feedback_id, f.clicked, {_IMPRESSION_COLUMNS} FROM feedback f "
            "JOIN impressions i ON i.id = f.impression WHERE f.seq > ? ORDER BY f.seq",
            (seq,),
        )
        for row in rows:
            yield LoggedFeedback(
                seq=row[0],
                feedback_id=row[1],
                impression=_row_impression(row[3:]),
                clicked=np.frombuffer(row[2], dtype=np.uint8).astype(np.bool_),
            )

    def unanswered(self, now: float) -> Iterator[tuple[int, float]]:
        """``(id, expires)`` of each impression without feedback still open at ``now``
        (expiring after it), oldest first: what a restarted service waits for (the rest is read
        when the feedback comes)."""
        rows = self.db.execute(
            "SELECT i.id, i.expires FROM impressions i LEFT JOIN feedback f "
            "ON f.impression = i.id WHERE f.seq IS NULL AND i.expires > ? ORDER BY i.id",
            (now,),
        )
        for id_, expires in rows:
            yield int(id_), float(expires)

    def pruned(self) -> dict[str, int]:
        """What :meth:`prune` has deleted from the log (all 0 for a log never pruned): the rows
        of ``impressions`` and of ``feedback``, the impressions among them never answered
        (``expired``), the largest ``seq`` of a deleted feedback, the largest ``id`` of a
        deleted impression (an impression shown, so logged, up to it and not in the log was
        pruned), and the ``prefix`` of ids up to which every impression is deleted."""
        rows = dict(self.db.execute("SELECT key, value FROM meta WHERE key LIKE 'pruned%'"))
        return {name: int(rows.get(f"pruned_{name}", 0)) for name in _PRUNED}

    def prune(self, seq: int, now: float, limit: int = PRUNE_ROWS) -> bool:
        """Delete from the log, oldest first, the impressions that nothing needs any more, with
        their feedback, in one transaction: those expired at ``now`` (a feedback for them would
        be refused anyway; until then a retried feedback is answered as the duplicate it is)
        and either never answered or answered by a feedback of ``seq`` below ``seq``, the
        ``seq`` of a checkpoint written to disk, which has learned it (the feedback of ``seq``
        itself is kept: recovery checks the checkpoint against it). At most ``limit`` of them;
        returns whether ``limit`` were deleted (there may be more).

        The last impression and the last feedback are always kept, since SQLite numbers a new
        row after the largest one left. The counts of what was deleted are added in ``meta``
        (:meth:`pruned`) in the same transaction, for the service's counters, with the public
        id of the impression the largest pruned ``seq`` answered (the history check of a
        checkpoint of that ``seq``), and the log is marked :data:`PRUNED_SCHEMA_VERSION`.

        The impressions are read in ``id`` order from the first one left (``pruned()["prefix"]``
        is the largest ``id`` up to which every one is gone) to where they stop having expired,
        found by bisection: their deadlines follow their ids, but for impressions shown under
        another TTL or clock, which a later prune finds. Those kept there (answered by feedback
        the checkpoint has not learned) are read again by the next prune: about a checkpoint
        interval of them."""
        done = self.pruned()
        (last,) = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM impressions").fetchone()
        (last_seq,) = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM feedback").fetchone()
        seq = min(seq, last_seq)  # a checkpoint's seq is never beyond the last feedback
        low, end = done["prefix"], last
        while low + 1 < end:
            middle = (low + end) // 2
            row = self.db.execute(
                "SELECT expires FROM impressions WHERE id >= ? AND id < ? ORDER BY id LIMIT 1",
                (middle, end),
            ).fetchone()
            low, end = (middle, end) if row is not None and row[0] <= now else (low, middle)
        # (only this connection writes the log: what is read here stays so until the delete)
        rows = self.db.execute(
            "SELECT i.id, f.seq, i.public_id FROM impressions i LEFT JOIN feedback f "
            "ON f.impression = i.id WHERE i.id > ? AND i.id < ? AND i.expires <= ? "
            "AND (f.seq IS NULL OR f.seq < ?) ORDER BY i.id LIMIT ?",
            (done["prefix"], end, now, seq, limit),
        ).fetchall()
        if not rows:
            return False
        ids = [row[0] for row in rows]
        answered = [(row[1], row[2]) for row in rows if row[1] is not None]
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("DELETE FROM feedback WHERE seq = ?", [(q,) for q, _ in answered])
            self.db.executemany("DELETE FROM impressions WHERE id = ?", [(i,) for i in ids])
            (first,) = self.db.execute(
                "SELECT MIN(id) FROM impressions WHERE id > ?", (done["prefix"],)
            ).fetchone()
            counts = {
                "impressions": done["impressions"] + len(ids),
                "feedback": done["feedback"] + len(answered),
                "expired": done["expired"] + len(ids) - len(answered),
                "seq": max([done["seq"], *(q for q, _ in answered)]),
                "id": max(done["id"], ids[-1]),
                "prefix": first - 1,
            }
            for name, value in counts.items():
                self.set_meta(f"pruned_{name}", str(value))
            if counts["seq"] > done["seq"]:
                self.set_meta("pruned_impression", max(answered)[1])
            self.set_meta("schema_version", str(PRUNED_SCHEMA_VERSION))
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        return len(ids) == limit

    def count_expired(self, now: float) -> int:
        """The impressions without feedback expired at ``now``: counted, not read (a restart
        decoded every impression ever left unanswered, some 10 us each, to count them)."""
        (n,) = self.db.execute(
            "SELECT COUNT(*) FROM impressions i LEFT JOIN feedback f ON f.impression = i.id "
            "WHERE f.seq IS NULL AND i.expires <= ?",
            (now,),
        ).fetchone()
        return int(n)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ recovery

    def recover(self) -> tuple[Any, int]:
        """The last checkpoint with every later feedback of the log learned, in ``seq`` order:
        ``(model, last seq learned)``. The checkpoint's own ``seq`` and the counters it kept
        (:meth:`olboost.serve.stats.Stats.log_counts`, ``None`` if it kept none) are left in
        :attr:`recovered_from`."""
        state = self._checkpoint_state()
        model, seq = state["model"], int(state["seq"])
        self.recovered_from = (seq, state.get("counts"))
        pruned = self.pruned()["seq"]
        if seq < pruned:
            # the feedback between them is gone from the log: this checkpoint's recovery
            # would skip it, a model unequal to the service's
            raise ValueError(
                f"{self.checkpoint_path}: the checkpoint has learned the feedback up to seq "
                f"{seq}, but the log was pruned (--prune-log) of feedback up to seq {pruned}, "
                "which a later checkpoint had learned: restore the store's latest "
                "checkpoint.olb, or a whole backup of the store (olboost backup: its "
                "checkpoint.olb with its log.sqlite)"
            )
        last = self.last_ids()[1]
        if seq > last:
            # The log lost commits the checkpoint had learned (``synchronous="normal"`` and a
            # power loss, or an older log.sqlite restored). Serving on would hand out the lost
            # seqs again to new feedback, which recovery then skips as learned: acknowledged
            # clicks lost for good, and a model unequal to the log's replay.
            raise ValueError(
                f"{self.checkpoint_path}: the checkpoint has learned the feedback up to seq "
                f"{seq} but the log {self.path / 'log.sqlite'} ends at seq {last}: restore the "
                f"log saved with this checkpoint, or {self._rebuild_advice()} (the feedback "
                f"after seq {last} is lost)"
            )
        answered, logged = state.get("impression"), self.impression_at(seq)
        if logged is None and 0 < seq == pruned:  # its feedback pruned: its record instead
            logged = self.meta("pruned_impression")
        if answered is not None and answered != logged:
            # a checkpoint and a log of one store but of two histories (a backup restored, the
            # service run on, and the other's checkpoint put back): the model was not the
            # log's replay, and the log's feedback up to seq was skipped as learned
            raise ValueError(
                f"{self.checkpoint_path}: the checkpoint has learned the feedback of seq {seq} "
                f"as the answer to impression {answered!r}, but the log's feedback of seq {seq} "
                f"answers {logged!r}: the two come from different histories "
                "of the store (a backup of one restored beside the other); restore the log "
                f"saved with this checkpoint, or {self._rebuild_advice()}"
            )
        for fb in self.feedback_after(seq):
            self.learn_logged(model, fb)
            seq = fb.seq
        return model, seq

    def learn_logged(self, model: Any, fb: LoggedFeedback) -> None:
        """Let ``model`` learn the logged feedback ``fb``; an error names it (a restart learns it
        again first, and failed again with a bare traceback that named no feedback)."""
        try:
            model.learn_one(fb.impression.x, feedback_of(model, fb.impression, fb.clicked))
        except Exception as err:
            raise ValueError(
                f"{self.path / 'log.sqlite'}: the feedback of seq {fb.seq} (id "
                f"{fb.feedback_id!r}, impression {fb.impression.public_id!r}) cannot be learned: "
                f"{type(err).__name__}: {err}"
            ) from err


def write_checkpoint(
    path: str | os.PathLike[str],
    model: Any,
    seq: int,
    store_id: str | None,
    counts: dict[str, Any] | None = None,
    impression: str | None = None,
) -> None:
    """Save ``model``, which has learned every feedback of the log up to ``seq``, as the
    checkpoint of the store at ``path`` whose id is ``store_id`` (:attr:`Store.store_id`), with
    the service's ``counts`` of that feedback (:meth:`olboost.serve.stats.Stats.log_counts`)
    and the public id of the ``impression`` the feedback of ``seq`` answered (checked against
    the log at recovery), atomically (no database connection needed). The log's files are
    synced first: under ``synchronous="normal"`` a commit is written to the WAL but not yet on
    disk, and a power loss after the checkpoint reached the disk would leave it ahead of its log
    (refused at
    :meth:`Store.recover`)."""
    for name in ("log.sqlite-wal", "log.sqlite"):
        try:
            # Windows' fsync (FlushFileBuffers) refuses a file opened for reading only
            # (EBADF): every store's creation and checkpoint failed there
            fd = os.open(Path(path) / name, os.O_RDWR if sys.platform == "win32" else os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    state = {"model": model, "seq": int(seq), "store_id": store_id}
    if counts is not None:
        state["counts"] = counts
    if impression is not None:
        state["impression"] = impression
    save_run(state, Path(path) / "checkpoint.olb")


#: Copies :func:`backup` makes of a store whose log its service prunes meanwhile, at most.
_BACKUP_TRIES = 5


def backup(path: str | os.PathLike[str], target: str | os.PathLike[str]) -> dict[str, Any]:
    """Copy the store at ``path`` to the new directory ``target``, consistently, whether a
    service serves it or not: the model files first, then the log by SQLite's online backup
    (a copy of the pages as of one moment, which a writer does not disturb). A checkpoint is
    written after the feedback it has learned was committed, so the copied one has learned no
    feedback beyond the copied log, and a service started on ``target`` recovers the model of
    the log's feedback up to that moment, exactly (:func:`replay`).

    A copy of a running service's directory file by file (``cp -r``, ``tar``) can pair the log
    with a ``log.sqlite-wal`` of another moment, which SQLite then reads as a damaged log; and
    ``log.sqlite`` without its ``-wal`` file lacks the feedback committed since SQLite last
    moved the WAL into it.

    Returns the counts ``{"impressions", "feedback", "pruned"}`` of the copy: impressions and
    feedback ever logged (as ``/health`` counts them), and the impressions pruned from the log.
    ``ValueError`` if ``path`` holds no store or ``target`` exists and is not an empty directory."""
    source, target = Path(path), Path(target)
    refuse_a_file(target, "a backup's directory")
    if target.exists() and any(target.iterdir()):
        raise ValueError(f"{target}: not empty; a backup goes to a new directory")
    store = Store(source, read_only=True)
    try:
        store.refuse_a_modelless_log()
    except BaseException:
        store.close()
        raise
    made = not target.exists()
    written: list[Path] = []
    try:
        for name in ("initial.olb", "checkpoint.olb"):  # copied as a start would load them
            if (source / name).exists():
                refuse_a_foreign_model(source / name)
        make_directory(target)
        for attempt in range(_BACKUP_TRIES):
            # A service pruning its log (--prune-log) between the copies of the checkpoint and
            # of the log deletes feedback up to its newer checkpoint, which the copied one has
            # not learned: the copy's recovery refuses it. Then copy both again.
            pruned = store.pruned()["seq"]
            for name in ("initial.olb", "checkpoint.olb", "token"):
                try:
                    data = (source / name).read_bytes()
                except FileNotFoundError:
                    continue
                if target / name not in written:
                    written.append(target / name)
                if name == "token":  # its owner's only, as the service wrote it
                    if attempt == 0:
                        fd = os.open(target / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                        with os.fdopen(fd, "wb") as f:
                            f.write(data)
                    continue
                atomic_write(target / name, data)
            if target / "log.sqlite" not in written:
                written.append(target / "log.sqlite")
            copy = sqlite3.connect(target / "log.sqlite")
            try:
                store.db.backup(copy)
                (copied,) = copy.execute(
                    "SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta "
                    "WHERE key = 'pruned_seq'"
                ).fetchone()
            except sqlite3.DatabaseError as err:  # a full disk, say: named, not a traceback
                code = getattr(err, "sqlite_errorcode", None) or 0
                said = (  # SQLite's "disk I/O error", of a full disk as a rule
                    f"the WAL index could not grow, usually a full disk: {err}"
                    if code == SQLITE_IOERR_SHMSIZE
                    else str(err)
                )
                raise ValueError(f"{target / 'log.sqlite'}: the backup failed ({said})") from None
            finally:
                copy.close()
            # pruned on under the copied checkpoint (a prune runs in chunks, and as rows
            # expire) is no harm: the copy is whole if its checkpoint has learned what went
            checkpoint = target / "checkpoint.olb"
            if copied == pruned or (
                checkpoint.exists() and copied <= int(load_run(checkpoint)["seq"])
            ):
                break
        else:
            raise ValueError(
                f"{source}: its service pruned the log during each of {_BACKUP_TRIES} copies "
                "(--prune-log): try again"
            )
    except BaseException:
        # nothing half-made left to refuse the retry ("not empty"): SQLite's files beside the
        # copied log neither (a copy that failed on a full disk left its -wal and -shm)
        sqlite_files = [target / f"log.sqlite{end}" for end in ("-wal", "-shm", "-journal")]
        for file in [*written, *(sqlite_files if target / "log.sqlite" in written else [])]:
            with contextlib.suppress(OSError):
                file.unlink()
        if made:
            with contextlib.suppress(OSError):
                target.rmdir()
        raise
    finally:
        store.close()
    copied = Store(target)  # checked as a service's start checks it
    try:
        done = copied.pruned()  # counted as /health counts them
        return {
            "impressions": copied.count("impressions") + done["impressions"],
            "feedback": copied.count("feedback") + done["feedback"],
            "pruned": done["impressions"],
        }
    finally:
        copied.close()


def replay(path: str | os.PathLike[str]) -> tuple[Any, int]:
    """The initial model of the store at ``path`` with every feedback of its log learned, in
    ``seq`` order: ``(model, feedback learned)``. Reads only; the reference a service's model is
    compared with. Refused for a log pruned of feedback (:meth:`Store.prune`)."""
    store = Store(path, read_only=True)
    try:
        store.refuse_a_modelless_log()
        store.refuse_if_pruned(
            "",
            "no replay from initial.olb gives its model (replay a backup made before the "
            "pruning; the store's checkpoint with the log after it is the model a service "
            "started on the store recovers)",
        )
        model = store.initial_model()
        n = 0
        for fb in store.feedback_after(0):
            store.learn_logged(model, fb)
            n += 1
        return model, n
    finally:
        store.close()
