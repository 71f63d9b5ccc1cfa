"""The learner of :class:`~olboost.serve.service.Service`: the one thread that changes the
model, learning the committed feedback in ``seq`` order, and its checkpoints, written in the
server or by a forked child (see the service's module docstring)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import queue
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from olboost.serve._log_writer import _NOT_RUNNING, _fail
from olboost.serve.requests import RequestError, error_text
from olboost.serve.stats import SERIES_STEP, Stats
from olboost.serve.store import feedback_of, write_checkpoint

log = logging.getLogger(__name__)

#: The answer to a wait for a feedback the service closed before learning (it never came).
_NOT_LEARNED = "the service closed before learning the feedback of seq {seq}"

#: Bytes of a failed checkpoint child's reason sent to its parent (one pipe write, atomic).
_REASON = 512

#: Whether the periodic checkpoints are written by a forked child (see
#: :mod:`olboost.serve.service`).
FORK_CHECKPOINTS = hasattr(os, "fork")

#: Seconds the learner waits for a new feedback while a checkpoint child runs, between two looks
#: at whether it has finished.
_CHILD_POLL = 0.05

#: Seconds a checkpoint child may run before the learner kills it and counts its checkpoint as
#: failed (the next one retries). One that never reports (stopped by a signal, or deadlocked on
#: a lock that another thread of the server held at the fork: Python 3.12 warns of any fork
#: beside threads) held back every later checkpoint, and the service's close, which waits for
#: it, for ever. Far above a checkpoint's time: a trained model of 100 trees pickles to some
#: 40 MB in 70 ms (see :mod:`olboost.serve.service`), so 600 s leaves room for models many
#: times larger on slow disks.
CHILD_DEADLINE = 600.0


def _set_kernel_threads(model: Any) -> None:
    """Give the calling thread (the learner) the number of Numba threads its committee learns
    on, once. A compiled committee sets the count around every ``learn`` unless the thread
    already has it, two calls into Numba's threading layer that cost a tenth of a learn; the
    count is per thread in Numba, so this changes nothing for any other thread, and the trees
    learn the same bits on any number of threads."""
    n_threads = getattr(getattr(model, "committee_", None), "n_threads", None)
    if isinstance(n_threads, int) and n_threads >= 1:
        import numba

        numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))


def _die_with_parent(parent: int) -> None:
    """In a checkpoint child: be killed with the server (Linux's ``PR_SET_PDEATHSIG``), so that
    a server killed mid-checkpoint leaves no orphan writing an older checkpoint beside the
    restarted one (that would still be a valid checkpoint, only an older one)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the server died before the request took effect
        os._exit(1)


class Learner:
    """The learner's part of :class:`~olboost.serve.service.Service` (a mixin: the state is the
    service's, set in its ``__init__`` and ``start``)."""

    path: Path
    store_id: str | None
    model: Any
    lock: threading.Lock
    stats: Stats
    clock: Callable[[], float]
    checkpoint_every: int
    fork_checkpoints: bool
    applied_seq: int
    applied_impression: str | None  # the public id of the impression feedback applied_seq answers
    checkpoint_seq: int
    _learn_q: queue.SimpleQueue
    _learned: threading.Condition
    _waiters: dict[int, list[concurrent.futures.Future]]
    _fused: Any
    _child: tuple[int, int, int, float] | None  # (pid, pipe, seq, time.monotonic() at the fork)
    _error: BaseException | None
    _error_text: str | None
    _public: Callable[[str | None], str | None]  # Service._public: what anyone may read
    _learn_done: bool

    def _learn_loop(self) -> None:
        since = 0
        last_point = 0.0
        learning: tuple[int, str] | None = None  # (seq, impression) of the feedback learned
        _set_kernel_threads(self.model)
        try:
            while True:
                if self._child is not None:
                    self._reap_child(block=False)
                try:
                    # while a child writes a checkpoint, look at it now and then even if idle
                    item = self._learn_q.get(timeout=None if self._child is None else _CHILD_POLL)
                except queue.Empty:
                    continue
                if item is None:
                    break
                if item[0] == "checkpoint":
                    self._reap_child(block=True)
                    try:
                        self._checkpoint()
                    except Exception as err:
                        # A full or failing disk is the operator's to fix: the log holds every
                        # acknowledged feedback, so the service goes on and a later checkpoint
                        # retries; the request that asked is told.
                        self._checkpoint_failed(err)
                        item[1].set_exception(
                            RequestError(500, f"the checkpoint could not be written: {err}")
                        )
                        continue
                    since = 0
                    item[1].set_result(self.checkpoint_seq)
                    continue
                seq, record, clicked, lag = item
                learning = (seq, record.public_id)
                if self._fused is not None:  # learn_one in one call without the GIL
                    with self.lock:
                        self._fused.learn_shown(record.x, record.shown, clicked, record.probs)
                else:
                    feedback = feedback_of(self.model, record, clicked)
                    with self.lock:
                        self.model.learn_one(record.x, feedback)
                learning = None
                self.stats.learned(record, clicked, lag)
                with self._learned:
                    self.applied_seq, self.applied_impression = seq, record.public_id
                    self._learned.notify_all()
                    done = [q for q in self._waiters if q <= seq]
                    futures = [f for q in done for f in self._waiters.pop(q)]
                for future in futures:
                    future.set_result(seq)
                since += 1
                # one child at a time: while one writes, the next checkpoint waits for it
                if since >= self.checkpoint_every and self._child is None:
                    try:
                        if self.fork_checkpoints:
                            # a pipe or a fork refused (no descriptor left, no memory) stopped
                            # the learner for good
                            self._fork_checkpoint()
                        else:
                            self._checkpoint()
                    except Exception as err:  # as a failed child's: the next one retries
                        self._checkpoint_failed(err)
                    since = 0
                now = self.clock()
                if now - last_point >= SERIES_STEP:
                    self.stats.point(now)
                    last_point = now
            self._reap_child(block=True)
            self._checkpoint()
        except BaseException as err:
            # the feedback it failed on, which a restart learns again first (it is logged):
            # an operator had no way to find it
            where = "" if learning is None else (
                f" on the feedback of seq {learning[0]} (impression {learning[1]!r})"
            )  # fmt: skip
            text = f"the learner stopped{where}: {error_text(err)}"
            # a record, not a print and an exception out of the thread (threading's hook
            # printed it again): the error is kept for /health and every answer from now on,
            # unless the log writer stopped first: the learner's last checkpoint, which its
            # stop asks for, then failed on the same full disk, and /health blamed the learner
            log.error("%s", text, exc_info=err)
            if self._error is None:
                self._error_text, self._error = text, err
        finally:
            self._end_learning()

    def _end_learning(self) -> None:
        """Answer what waits for learning that will not come now that the learner ends, with
        the error that stopped the service if one did: the answers waiting for learning (wait,
        backpressure; a feedback never committed) and the checkpoints asked for meanwhile
        (``/admin/checkpoint``, or as the service closed), which all waited for ever. A wait or
        a checkpoint asked for later sees ``_learn_done``."""
        error = self._public(self._error_text) if self._error is not None else None
        with self._learned:
            self._learn_done = True
            self._learned.notify_all()
            waiting = [(q, f) for q, futures in self._waiters.items() for f in futures]
            self._waiters.clear()
        for seq, future in waiting:
            _fail(future, RequestError(503, error or _NOT_LEARNED.format(seq=seq)))
        while True:
            try:
                item = self._learn_q.get_nowait()
            except queue.Empty:
                break
            if item is not None and item[0] == "checkpoint":
                _fail(item[1], RequestError(503, error or _NOT_RUNNING))

    def _checkpoint(self) -> None:
        if self.applied_seq == self.checkpoint_seq:
            return
        # no lock: this thread alone changes the model, and a show changes nothing pickled
        counts = self.stats.log_counts()  # this thread alone counts what it learns, too
        write_checkpoint(
            self.path, self.model, self.applied_seq, self.store_id, counts,
            self.applied_impression,
        )  # fmt: skip
        self.checkpoint_seq = self.applied_seq
        self.stats.checkpointed()

    def _checkpoint_failed(self, err: Exception | str, seq: int | None = None) -> None:
        """Log a checkpoint's failure (of ``seq``, else the learner's last) and count it."""
        reason = error_text(err) if isinstance(err, BaseException) else err
        seq = self.applied_seq if seq is None else seq
        log.warning("the checkpoint of seq %d failed (%s); the next one retries", seq, reason)
        self.stats.checkpointed(f"the checkpoint of seq {seq} failed: {reason}")

    def _fork_checkpoint(self) -> None:
        """Fork a child that writes the checkpoint of the model as it is now (the feedback up to
        ``applied_seq`` learned) and reports ``ok`` on a pipe; :meth:`_reap_child` collects it.
        Called by the learner between two learns (see :mod:`olboost.serve.service`)."""
        if self.applied_seq == self.checkpoint_seq:
            return
        seq, impression = self.applied_seq, self.applied_impression
        counts = self.stats.log_counts()
        parent = os.getpid()
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except BaseException:
            os.close(read_end)
            os.close(write_end)
            raise
        if pid == 0:  # the child: only this thread exists here; it must never return
            code = 1
            try:
                os.close(read_end)
                _die_with_parent(parent)
                write_checkpoint(self.path, self.model, seq, self.store_id, counts, impression)
                os.write(write_end, b"ok")
                code = 0
            except BaseException as err:  # the parent logs the failure, with this reason
                # on the pipe, not printed: another thread may have held sys.stderr's lock at
                # the fork, and the reason belongs in the parent's log record
                with contextlib.suppress(BaseException):
                    os.write(write_end, error_text(err).encode("utf-8", "replace")[:_REASON])
            finally:
                # no atexit handlers, no flushing of the server's buffers, no thread joins
                os._exit(code)
        os.close(write_end)
        self._child = (pid, read_end, seq, time.monotonic())

    def _reap_child(self, block: bool) -> None:
        """Collect the checkpoint child once it has finished (waiting for it if ``block``, else
        only if it has): its ``seq`` becomes the checkpoint's if it reported success. A child
        past :data:`CHILD_DEADLINE` is killed instead, its checkpoint counted as failed."""
        if self._child is None:
            return
        pid, pipe, seq, started = self._child
        left = max(started + CHILD_DEADLINE - time.monotonic(), 0.0)
        if not select.select([pipe], [], [], left if block else 0.0)[0]:
            if not block and left > 0.0:
                return
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.close(pipe)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)  # dead: no older checkpoint lands after a newer one
            self._child = None
            self._checkpoint_failed(
                f"the checkpoint child (pid {pid}) did not finish within {CHILD_DEADLINE:g} s "
                "and was killed", seq,
            )  # fmt: skip
            return
        report = b""
        while chunk := os.read(pipe, 16):  # until end of file: the child has exited
            report += chunk
        os.close(pipe)
        # a server forked from a parent that ignores SIGCHLD has its children reaped for it
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        self._child = None
        if report == b"ok":
            self.checkpoint_seq = max(self.checkpoint_seq, seq)
            self.stats.checkpointed()
        else:
            reason = report.decode("utf-8", "replace") or "the child ended without a word"
            self._checkpoint_failed(reason, seq)
