"""The log writer of :class:`~olboost.serve.service.Service`: the one thread that writes the
SQLite log, checking each feedback against it and committing whole batches (see the service's
module docstring)."""

from __future__ import annotations

import concurrent.futures
import heapq
import logging
import queue
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from olboost.serve.config import ServiceConfig
from olboost.serve.requests import RequestError, error_text
from olboost.serve.stats import SERIES_STEP, Stats
from olboost.serve.store import (
    PRUNE_EVERY,
    SQLITE_IOERR_SHMSIZE,
    ImpressionRecord,
    Store,
    prune_limit,
)

log = logging.getLogger(__name__)

#: Requests the log writer commits in one transaction at most.
_BATCH = 512
#: The answer to a request the service took as it closed.
_NOT_RUNNING = "the service is not running"
#: SQLite's primary result codes of a log write that can succeed later, with no restart: the
#: log's lock held by another program past SQLite's 5 s wait (SQLITE_BUSY, SQLITE_LOCKED) and a
#: full disk (SQLITE_FULL). SQLite takes back a transaction they fail whole, so the log and the
#: memory (:class:`_Batch`) stay as before it. Any other error stops the log writer: an I/O
#: error or a damaged page says nothing of what the next write will do.
_TRANSIENT = (5, 6, 13)
#: Seconds before a prune that failed for one of them is tried again.
_PRUNE_RETRY = 5.0


def _said(err: BaseException) -> str:
    """``err`` for a client. SQLite's "disk I/O error" of its shared-memory index
    (SQLITE_IOERR_SHMSIZE) is said as what it is, usually a full disk, and as a write whose
    fate is unknown: SQLite had written the transaction's frames to the WAL when the index
    could not grow, and though this connection takes it back, a restart before the next write
    recovers it from them. A feedback sent again with its id is answered once either way."""
    if getattr(err, "sqlite_errorcode", None) == SQLITE_IOERR_SHMSIZE:
        return (
            f"the WAL index could not grow, usually a full disk ({err}); it may be logged "
            "still: send it again with the same feedback_id"
        )
    return str(err)


def _transient(err: BaseException) -> bool:
    """Whether ``err`` is a log write failure of :data:`_TRANSIENT`, or the failure of the
    WAL's shared-memory index to grow (SQLITE_IOERR_SHMSIZE, usually a full disk met when a
    reader's transaction lets the WAL grow past some 4,000 pages; see :func:`_said`)."""
    code = getattr(err, "sqlite_errorcode", None) if isinstance(err, sqlite3.Error) else None
    return code is not None and (code & 0xFF in _TRANSIENT or code == SQLITE_IOERR_SHMSIZE)


def _locked(err: BaseException) -> bool:
    """Whether ``err`` is the log's lock held past SQLite's 5 s wait (SQLITE_BUSY, LOCKED):
    every write waits as long, so the requests queued meanwhile are refused with it."""
    code = getattr(err, "sqlite_errorcode", None) if isinstance(err, sqlite3.Error) else None
    return code is not None and code & 0xFF in (5, 6)


class _Batch:
    """Undo records of one log transaction, so that a failed commit leaves the memory as the
    log: nothing of the batch."""

    def __init__(self) -> None:
        self.undo: list[Callable[[], None]] = []
        self.learn: list[tuple[int, ImpressionRecord, np.ndarray, float]] = []
        self.results: list[tuple[concurrent.futures.Future, Any]] = []
        # refusals and counts, given once the batch is committed: a 409 or a duplicate may
        # rest on a row of the batch itself, which a failed commit takes back
        self.refused: list[tuple[concurrent.futures.Future, RequestError]] = []
        self.counts: list[str] = []
        self.wrote = False


class PendingImpressions:
    """The impressions waiting for feedback, as their log ids and deadlines, forgotten as they
    expire.

    Only what expiry needs is kept: a feedback reads its impression from the log, which holds
    every impression from its commit on. Kept whole, an impression's features made the memory of
    a service grow with its traffic times ``impression_ttl`` (some 2 KB per impression with 103
    features, and 3,600 s of impressions whose clicks never come).

    The impressions a service shows expire ``impression_ttl`` after they are shown, so in the
    order they are logged: kept in that order, they expire from the front, each in O(1). The
    others (recovered at start, perhaps shown under another ``--impression-ttl``; put back by a
    failed commit; shown after the clock stepped back) would stop that front at a later
    deadline than the ones behind it: they go in a heap keyed by deadline instead, few of them.
    """

    def __init__(self) -> None:
        self._ordered: OrderedDict[int, float] = OrderedDict()
        self._others: dict[int, float] = {}
        # (expires, id) of _others; an entry whose impression was answered stays until it is
        # popped or the heap is compacted
        self._deadlines: list[tuple[float, int]] = []

    def __len__(self) -> int:
        return len(self._ordered) + len(self._others)

    def __contains__(self, id_: int) -> bool:
        return id_ in self._ordered or id_ in self._others

    def add(self, id_: int, expires: float, *, recovered: bool = False) -> None:
        """Wait for the feedback of impression ``id_`` (its log id) until ``expires``."""
        last = next(reversed(self._ordered.values()), None)
        if not recovered and (last is None or expires >= last):
            self._ordered[id_] = expires
            return
        self._others[id_] = expires
        heapq.heappush(self._deadlines, (expires, id_))

    def pop(self, id_: int) -> bool:
        """Stop waiting for impression ``id_``; returns whether it was waited for."""
        if self._ordered.pop(id_, None) is not None:
            return True
        found = self._others.pop(id_, None) is not None
        if len(self._deadlines) > 2 * len(self._others) + 64:  # answered ones: keep it O(live)
            self._deadlines = [d for d in self._deadlines if d[1] in self._others]
            heapq.heapify(self._deadlines)
        return found

    def expire(self, now: float) -> int:
        """Forget the impressions whose deadline is ``now`` or earlier; returns how many."""
        n = 0
        while self._ordered:
            id_, expires = next(iter(self._ordered.items()))
            if expires > now:
                break
            del self._ordered[id_]
            n += 1
        while self._deadlines and self._deadlines[0][0] <= now:
            n += self._others.pop(heapq.heappop(self._deadlines)[1], None) is not None
        return n


def _fail(future: concurrent.futures.Future, error: BaseException) -> None:
    """Fail ``future`` with ``error`` unless it has its answer already."""
    try:
        future.set_exception(error)
    except concurrent.futures.InvalidStateError:
        pass


def _refuse(stats: Stats, ops: list, failure: RequestError) -> None:
    """Fail the futures of ``ops`` not answered yet with ``failure``, the feedback among them
    counted as refused, as the refusals after a stop are (``Service._check_open``)."""
    refused = sum(1 for op in ops if op[0] != "impression" and not op[2].done())
    for _ in range(refused):
        stats.reject(503)
    for op in ops:
        _fail(op[2], failure)


class LogWriter:
    """The log writer's part of :class:`~olboost.serve.service.Service` (a mixin: the state is the
    service's, set in its ``__init__`` and ``start``)."""

    path: Path
    synchronous: str
    config: ServiceConfig
    stats: Stats
    clock: Callable[[], float]
    impression_ttl: float
    committed_seq: int
    checkpoint_seq: int
    prune_log: bool
    _pruned_for: int
    _next_prune: float
    _prune_blocked: bool
    _log_done: bool
    _uncounted_seq: int
    _pending: PendingImpressions
    _log_q: queue.SimpleQueue
    _learn_q: queue.SimpleQueue
    _error: BaseException | None
    _error_text: str | None
    _feedback_handled: int  # feedback requests committed or refused (the backlog bound's)
    _public: Callable[[str | None], str | None]  # Service._public: what anyone may read

    def _log_loop(self, ready: threading.Event) -> None:
        try:
            # the service's start has just verified the log (Store's quick_check)
            store = Store(self.path, synchronous=self.synchronous, verify=False)
        except BaseException as err:  # reported by start()
            self._error_text = f"the log could not be opened: {str(err) or repr(err)}"
            self._error = err
            self._log_done = True
            self._learn_q.put(None)  # the learner ends too (it waited for ever: close hung)
            ready.set()
            return
        ready.set()
        stop = False
        try:
            while not stop:
                try:
                    # a prune unfinished goes on at once when no request waits
                    op = self._log_q.get(block=not self._prune_due(), timeout=SERIES_STEP)
                except queue.Empty:
                    op = ()
                batch = [] if op == () else [op]
                while len(batch) < _BATCH:
                    try:
                        batch.append(self._log_q.get_nowait())
                    except queue.Empty:
                        break
                if None in batch:
                    stop = True
                    batch = [op for op in batch if op is not None]
                if batch:
                    self._commit(store, batch)
                self._expire()
                if self._prune_due():
                    self._prune(store)
        except BaseException as err:  # a broken log: refuse every request from now on
            self._error_text = f"the log writer stopped: {error_text(err)}"
            self._error = err
            log.error("%s (%s)", self._error_text, Path(self.path) / "log.sqlite", exc_info=err)
        finally:
            # Requests queued behind a failure, or that passed the open check as close() queued
            # its stop, had no one left to answer them: they waited for ever. One queued after
            # this drain sees _error or _log_done (_queue_request).
            self._log_done = True
            refusal = (
                self._stopped() if self._error is not None else RequestError(503, _NOT_RUNNING)
            )
            while True:
                try:
                    op = self._log_q.get_nowait()
                except queue.Empty:
                    break
                if op is not None:
                    _fail(op[2], refusal)
            store.close()
            self._learn_q.put(None)

    def _queue_request(self, op: tuple) -> None:
        """Hand ``op`` (whose third item is its future) to the log writer, or fail its future
        if the writer has stopped on an error, since the writer drained its queue."""
        self._log_q.put(op)
        if self._error is not None:
            _fail(op[2], self._stopped())
        elif self._log_done:
            _fail(op[2], RequestError(503, _NOT_RUNNING))

    def _stopped(self) -> RequestError:
        """The answer to every request once the log writer (or the learner) stopped on an
        error (:attr:`_error`)."""
        return RequestError(
            503, f"the service stopped on an error: {self._public(self._error_text)}"
        )

    def _commit(self, store: Store, ops: list) -> None:
        try:
            self._commit_batch(store, ops)
        except BaseException as err:
            # the batch's requests are refused (503, Retry-After) and the writer goes on: a
            # lock held for a while or a full disk stopped the service until it was restarted,
            # its store intact
            if not _transient(err):
                raise
        finally:
            self._feedback_handled += sum(1 for op in ops if op[0] == "feedback")

    def _take_queued(self) -> list:
        """Every request queued now, taken off the queue (close()'s stop put back, for the
        writer's loop to see)."""
        ops = []
        stop = False
        while True:
            try:
                op = self._log_q.get_nowait()
            except queue.Empty:
                break
            if op is None:
                stop = True
            else:
                ops.append(op)
        if stop:
            self._log_q.put(None)
        return ops

    def _write_failed(self, err: BaseException | None) -> None:
        """Count a log write that failed for ``err``, one of :data:`_TRANSIENT`, said by
        ``/health`` until a write succeeds (``None``: one did)."""
        said = None if err is None else f"{type(err).__name__}: {_said(err)}"
        text = None if err is None else f"the log could not be written: {said}"
        before = self.stats.log_error  # (this thread alone sets it)
        if text is None and before is None:
            return
        with self.stats.lock:
            self.stats.log_error = text
            self.stats.log_write_failures += text is not None
        if text == before:  # once per cause, not once per batch refused
            return
        if text is None:
            log.warning("the log is written again (%s)", Path(self.path) / "log.sqlite")
        else:
            log.warning("%s (%s); requests are refused until it can be", text,
                        Path(self.path) / "log.sqlite")  # fmt: skip

    def _commit_batch(self, store: Store, ops: list) -> None:
        """Log ``ops`` in one transaction and answer them."""
        batch = _Batch()
        try:
            store.db.execute("BEGIN IMMEDIATE")  # inside: a busy log fails the batch's requests
            for kind, payload, future, response in ops:
                try:
                    if kind == "impression":
                        store.insert_impression(payload)
                        batch.wrote = True
                        batch.results.append((future, response))
                        self._pending.add(payload.id, payload.expires)
                        batch.undo.append(lambda i=payload.id: self._pending.pop(i))
                    else:
                        batch.results.append((future, self._log_feedback(store, payload, batch)))
                except RequestError as err:
                    batch.refused.append((future, err))
            store.db.execute("COMMIT")
        except BaseException as err:
            store.db.execute("ROLLBACK") if store.db.in_transaction else None
            for undo in reversed(batch.undo):
                undo()
            failure = RequestError(
                503, f"the log could not be written: {_said(err)}", 1 if _transient(err) else None
            )
            # every request of the batch: those logged before the failure, the one that
            # raised it and those after it, none of which would get an answer otherwise
            queued = []
            if _transient(err):
                self._write_failed(err)  # said before any answer, as what follows
            if _locked(err):
                # and those queued behind it, which would wait as long: a lock held past
                # SQLite's 5 s wait let the writer refuse 512 requests per 5 s, a queue
                # growing without end under load. Taken before any answer: a request sent
                # once a client has its 503 is tried on the log. (A full disk fails at once,
                # and a smaller batch may fit: those are tried.)
                queued = self._take_queued()
                self._feedback_handled += sum(1 for op in queued if op[0] == "feedback")
            _refuse(self.stats, [*ops, *queued], failure)
            raise
        if batch.wrote:  # (one that wrote nothing, all refusals, tells nothing of the log)
            self._write_failed(None)
        n_impressions = sum(1 for op in ops if op[0] == "impression")
        with self.stats.lock:
            self.stats.impressions += n_impressions
            for name in batch.counts:
                setattr(self.stats, name, getattr(self.stats, name) + 1)
        for future, err in batch.refused:
            self.stats.reject(err.status)
            future.set_exception(err)
        for item in batch.learn:
            self.committed_seq = item[0]
            self._learn_q.put(item)
        for future, result in batch.results:
            if not future.done():
                future.set_result(result)

    def _log_feedback(self, store: Store, payload: tuple, batch: _Batch) -> dict[str, Any]:
        feedback_id, public_id, indices, wait = payload
        now = self.clock()
        existing = store.feedback_by_id(feedback_id)
        if existing is not None:
            seq, answered, mask = existing
            record = store.impression(answered)[0]
            if answered != public_id:
                raise RequestError(
                    409,
                    f"feedback id {feedback_id!r} was already used, for impression {answered!r}; "
                    "a feedback id names one answer",
                )
            if not np.array_equal(mask, self._mask(record, indices, True)):
                raise RequestError(
                    409,
                    f"feedback id {feedback_id!r} was already used, for this impression with "
                    "other clicks; a feedback id names one answer",
                )
            batch.counts.append("duplicates")
            return {"feedback_id": feedback_id, "seq": seq, "duplicate": True, "wait": wait}
        found = store.impression(public_id)
        if found is None:
            number = public_id.partition("-")[0]
            if number.isdecimal() and 0 < int(number) <= store.pruned()["id"]:
                batch.counts.append("expired_feedback")
                # (the number alone is checked: an id this service never showed, of a number
                # it pruned, is told so too)
                raise RequestError(
                    410, f"impression {public_id!r} expired and was pruned from the log "
                    "(--prune-log), or was never shown"
                )  # fmt: skip
            raise RequestError(404, f"unknown impression {public_id!r}")
        record, answered_by = found
        if answered_by is not None:
            raise RequestError(
                409, f"impression {public_id!r} was already answered by feedback id "
                f"{answered_by!r}"
            )  # fmt: skip
        if now >= record.expires:
            counted = self._pending.pop(record.id)  # expired: so whatever the commit's fate
            with self.stats.lock:
                self.stats.expired += counted
            batch.counts.append("expired_feedback")
            raise RequestError(
                410, f"impression {public_id!r} expired {now - record.expires:.3f} s ago "
                f"(it was shown to be answered within {record.expires - record.created:.6g} s)"
            )  # fmt: skip
        mask = self._mask(record, indices, False)
        seq = store.insert_feedback(feedback_id, record.id, mask, now)
        batch.wrote = True
        waited = self._pending.pop(record.id)
        if waited:
            batch.undo.append(lambda: self._pending.add(record.id, record.expires))
        # not below 0 under a clock given to the service that went back (its own cannot)
        batch.learn.append((seq, record, mask, max(now - record.created, 0.0)))
        return {"feedback_id": feedback_id, "seq": seq, "duplicate": False, "wait": wait}

    def _mask(self, record: ImpressionRecord, indices: list[int], stored: bool) -> np.ndarray:
        """The clicked mask of a feedback: over the shown labels (top-k) or every label."""
        if not self.config.topk:
            mask = np.zeros(len(self.config.labels), dtype=np.bool_)
            mask[indices] = True
            return mask
        position = {int(label): p for p, label in enumerate(record.shown.tolist())}
        mask = np.zeros(record.shown.shape[0], dtype=np.bool_)
        for i in indices:
            if i not in position:
                if stored:  # another answer than the stored one: a conflict, said by the caller
                    return np.zeros(0, dtype=np.bool_)
                shown = [self.config.labels[j] for j in record.shown.tolist()]
                raise RequestError(
                    422, f"clicked label {self.config.labels[i]!r} was not shown; shown: {shown}"
                )
            mask[position[i]] = True
        return mask

    def _prune_due(self) -> bool:
        """Whether the log is to be pruned: after a checkpoint it has not been pruned after, or
        :data:`~olboost.serve.store.PRUNE_EVERY` seconds after the last prune (impressions
        expired since). Not under a checkpoint that kept no counters (written before
        checkpoints kept them): the counts of the feedback it pruned would be lost at the next
        restart (the store's first checkpoint, of seq 0, kept none: it prunes no feedback)."""
        uncounted = self._uncounted_seq
        if not self.prune_log or (uncounted and self.checkpoint_seq <= uncounted):
            return False
        if self._prune_blocked:  # by a failure of _TRANSIENT: a while later, not at once
            return self.clock() >= self._next_prune
        return self.checkpoint_seq > self._pruned_for or self.clock() >= self._next_prune

    def _prune(self, store: Store) -> None:
        """Prune the log after the last checkpoint, a transaction of at most
        :func:`~olboost.serve.store.prune_limit` impressions between two batches of requests,
        so that the requests wait for one at most."""
        seq = self.checkpoint_seq  # set by the learner, read once
        now = self.clock()
        try:
            more = store.prune(seq, now, prune_limit(self.config.n_features))
        except BaseException as err:
            if not _transient(err):
                raise
            # deleting takes room in the WAL too: taken back whole, tried again a while later
            # (after the failure, which a held lock makes 5 s long)
            self._next_prune = self.clock() + _PRUNE_RETRY
            if not self._prune_blocked:  # once, not every 5 s
                log.warning("pruning the log failed, tried again every %g s: %s (%s)",
                            _PRUNE_RETRY, error_text(err),
                            Path(self.path) / "log.sqlite")  # fmt: skip
            self._prune_blocked = True
            self._write_failed(err)
            if _locked(err):
                # the requests queued meanwhile would wait 5 s more for the lock (on a full
                # disk, they may fit where 500 rows of deletions did not: tried)
                queued = self._take_queued()
                self._feedback_handled += sum(1 for op in queued if op[0] == "feedback")
                _refuse(
                    self.stats,
                    queued,
                    RequestError(503, f"the log could not be written: {_said(err)}", 1),
                )
            return
        self._prune_blocked = False
        done = store.pruned()["impressions"]
        if done != self.stats.pruned:  # it deleted rows: the log is written again
            self._write_failed(None)
        with self.stats.lock:
            self.stats.pruned = done
        if not more:
            self._pruned_for = seq
            self._next_prune = now + PRUNE_EVERY

    def _expire(self) -> None:
        """Count and forget the pending impressions whose time is up."""
        n = self._pending.expire(self.clock())
        if n:
            with self.stats.lock:
                self.stats.expired += n
