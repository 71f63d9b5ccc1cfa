"""The ranking service's core, without the web framework: the model, its log and its threads.

:class:`Service` owns one model and one :class:`~olboost.serve.store.Store`, and three kinds of
work:

* **Ranking** (:meth:`Service.rank`, on the caller's thread: the server's event loop, or a worker
  thread when the learner holds the model) shows the model's ranking under the model lock and
  hands the impression to the log writer.
* **The log writer** (one thread, the only writer of the SQLite log) takes impressions and
  feedback from a queue, checks each feedback against the log (idempotency, an impression answered
  once, expiry, clicked labels shown by a top-k booster), commits a whole batch in one
  transaction (group commit: one ``fsync`` for every request that arrived meanwhile), and only
  then resolves the callers' futures: nothing is acknowledged before it is on disk. A request
  it rejects writes nothing.
* **The learner** (one thread, the only thread that changes the model) learns the committed
  feedback in ``seq`` order, the order of acknowledgement, and writes a checkpoint every
  ``checkpoint_every`` feedbacks.

**Concurrency.** The model lock is held by the learner for one ``learn_one`` at a time and by a
ranking for one ``show_one``, so a ranking usually waits for at most the one example being
learned. (``threading.Lock`` is not fair: the learner, releasing and taking it again between two
learns, can win it over a waiting ranking, so now and then a ranking waits through several.)
The trees' and the top-k boosters' compiled kernels release the GIL (``nogil``), so a learn on
the learner's thread runs beside the event loop's parsing and answering on the other core; the
model lock, not the GIL, is what keeps a ranking from reading trees being changed.
The service is safe under any number of concurrent clients: every state change goes through one
of the two threads, in one order.

**Checkpoints.** Pickling a trained model of 100 trees takes some 40 MB and 70 ms of the GIL,
and writing it competes with the log's ``fsync``: done in the server, every checkpoint would
stall every request for that long. Where the system has ``fork`` (:data:`FORK_CHECKPOINTS`), the
learner forks a child between two learns instead, and the child pickles its copy-on-write image
of the model and writes the checkpoint atomically while the server goes on (the server's stall
is the fork itself, some 15 ms). The learner is the only thread that changes the model and the
child is forked between two of its learns, so the child's image is the model after exactly the
feedback learned so far (a ranking running meanwhile only reads the trees, and the prediction
cache it sets is not pickled). One child at a time; the learner records its ``seq`` as the
checkpoint's once the child reports success on a pipe. A child killed with its server leaves at
most a temporary file, removed at the next start; one that runs past
:data:`~olboost.serve._learner.CHILD_DEADLINE` (10 minutes; deadlocked, say, on a lock another
thread held at the fork) is killed, its checkpoint counted as failed. The last checkpoint (at
close) and ``/admin/checkpoint`` are written in the server, after any child has finished or
been killed.

**Errors.** Every rejection is a :class:`RequestError` (an HTTP status and a message) raised
before anything is written or learned.

**Modules.** :class:`Service` is here with the ranking; the log writer's and the learner's
methods are its bases :class:`~olboost.serve._log_writer.LogWriter` and
:class:`~olboost.serve._learner.Learner`; the configuration and the model are in
:mod:`olboost.serve.config`, the request checks in :mod:`olboost.serve.requests` and the
counters in :mod:`olboost.serve.stats`.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import logging
import math
import os
import queue
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from olboost.evaluate._compiling import _CompileNotice
from olboost.serve._clock import SteadyClock
from olboost.serve._fused import fused_learner
from olboost.serve._learner import _NOT_LEARNED, FORK_CHECKPOINTS, Learner
from olboost.serve._log_writer import _NOT_RUNNING, LogWriter, PendingImpressions, _fail
from olboost.serve.config import (
    ALGORITHMS,
    ServiceConfig,
    build_model,
    resolve_config,
    start_model,
    warm_up_model,
)
from olboost.serve.requests import RequestError, parse_feedback, parse_rank
from olboost.serve.requests import parse_features as parse_features
from olboost.serve.stats import LAG_BUCKETS as LAG_BUCKETS
from olboost.serve.stats import SERIES_POINTS as SERIES_POINTS
from olboost.serve.stats import SERIES_STEP as SERIES_STEP
from olboost.serve.stats import Stats, exposition, metrics_table
from olboost.serve.store import SYNCHRONOUS, ImpressionRecord, Store, StoreLock, log_error

log = logging.getLogger(__name__)

# The names imported "as" themselves are not used here: they stay importable from this module,
# where they were defined before it was split by concept.
__all__ = [
    "ALGORITHMS", "WAITING_CLIENTS", "RequestError", "Service", "ServiceConfig", "build_model",
]  # fmt: skip

#: Feedback not learned yet, beyond ``max_learn_lag``, past which a new feedback is refused
#: (503, ``Retry-After``): the bound on the backlog that clients which do not wait for their
#: answers would otherwise grow without end. Clients that wait for theirs, each with one
#: feedback at a time, are held to the model's pace (``max_learn_lag`` behind, plus one each):
#: as many as this at once are never refused.
WAITING_CLIENTS = 1024


def _last_name(match: re.Match) -> str:
    """An absolute path said by its last name, ``.../name``, if its first directory exists
    here: not a label such as Open Images' ``/m/01g317``."""
    path = match.group(0)
    return ".../" + path.rsplit("/", 1)[-1] if os.path.isdir("/" + path.split("/")[1]) else path


#: An absolute POSIX path of two names or more in an error text, quoted (spaces included, as
#: ``OSError`` quotes its file) or not, for :meth:`Service._public`.
_ABSOLUTE_PATH = re.compile(
    r"(?<=')(?:/[^'/\n]+){2,}(?=')|(?<=\")(?:/[^\"/\n]+){2,}(?=\")"
    r"|(?<![\w.'\"])(?:/[^\s'\"()/:,;]+){2,}"
)


class Service(LogWriter, Learner):
    """A live ranking model with its log, its learner and its checkpoints.

    Parameters
    ----------
    store
        The store directory (created if missing).
    config
        The model's definition; required for a new store, and must equal the stored one for an
        existing store (``None``: the stored one).
    checkpoint_every
        Feedbacks learned between two checkpoints: a restart replays about that many, more
        by what was learned while the last checkpoint was being written (one at a time, by a
        forked child, while learning goes on: the larger the model, the longer) and by what was
        acknowledged but not learned yet (``max_learn_lag``). Each
        checkpoint stalls the server for a fork (some 10-30 ms with 100 trees); at 300 feedbacks
        a second, every 1000 made those stalls the p99 of ``/rank`` (46 ms instead of 25 ms in
        ``benchmarks/serve.py``).
    impression_ttl
        Seconds after which an impression's feedback is refused (410) and the impression is
        counted as expired.
    max_learn_lag
        Most feedback acknowledged but not learned yet that a new feedback's answer may leave
        behind it: past that, ``/feedback`` answers once the learner is within this many of it
        (backpressure: clients that send faster than the model learns are slowed to its pace
        instead of the backlog growing without bound), and past it plus
        :data:`WAITING_CLIENTS` (clients that do not wait for their answers) a feedback is
        refused with 503 and ``Retry-After: 1``. ``None``: no limit.
    synchronous
        The log's durability, ``"full"`` or ``"normal"`` (:class:`~olboost.serve.store.Store`).
    fork_checkpoints
        Write the periodic checkpoints from a forked child (see the module docstring); ``None``
        where the system can (:data:`FORK_CHECKPOINTS`).
    clock
        The time source, in seconds since the epoch; ``None`` (the default): a
        :class:`~olboost.serve._clock.SteadyClock` made at :meth:`start`, which a step of the
        system's clock while the service runs does not move.
    prune_log
        After each checkpoint (and every minute), delete from the log the impressions past
        their deadline that nothing needs any more, with their feedback
        (:meth:`~olboost.serve.store.Store.prune`), so that the log's size follows the traffic
        of a checkpoint interval and an impression TTL rather than of the whole history. The
        log then no longer rebuilds the model from ``initial.olb`` (nor does
        :func:`~olboost.serve.store.replay`): keep backups of the store
        (:func:`~olboost.serve.store.backup`), checkpoint included. ``False`` (the default):
        the log keeps everything.

    Examples
    --------
    >>> import tempfile
    >>> from olboost.serve.service import Service, ServiceConfig
    >>> config = ServiceConfig("topk-adaptive", ("a", "b", "c", "d"), 2, learners=3, k=2)
    >>> service = Service(tempfile.mkdtemp(), config)
    >>> service.start()
    >>> shown, logged = service.rank({"features": [0.5, 1.0]})
    >>> logged.result()["impression"] == shown["impression"], len(shown["labels"])
    (True, 2)
    >>> answer = service.feedback({"impression": shown["impression"], "clicked": [], "wait": True})
    >>> answer.result()["seq"], service.wait_learned(1)
    (1, True)
    >>> service.model.t_
    1
    >>> service.close()
    """

    def __init__(
        self,
        store: str | Path,
        config: ServiceConfig | None = None,
        *,
        checkpoint_every: int = 10000,
        impression_ttl: float = 3600.0,
        max_learn_lag: int | None = 256,
        synchronous: str = "full",
        fork_checkpoints: bool | None = None,
        clock: Callable[[], float] | None = None,
        prune_log: bool = False,
    ):
        if (
            isinstance(checkpoint_every, bool)
            or not isinstance(checkpoint_every, int)
            or checkpoint_every < 1
        ):
            raise ValueError(f"checkpoint_every must be an integer >= 1, got {checkpoint_every!r}")
        if isinstance(impression_ttl, bool) or not (
            isinstance(impression_ttl, int | float) and 0 < impression_ttl < math.inf
        ):
            raise ValueError(
                f"impression_ttl must be a positive number of seconds, got {impression_ttl!r}"
            )
        if not isinstance(prune_log, bool):
            raise TypeError(f"prune_log must be True or False, got {prune_log!r}")
        if fork_checkpoints is not None and not isinstance(fork_checkpoints, bool):
            raise TypeError(
                f"fork_checkpoints must be True, False or None, got {fork_checkpoints!r}"
            )
        if clock is not None and not callable(clock):
            raise TypeError(f"clock must be a callable or None, got {clock!r}")
        if synchronous not in SYNCHRONOUS:
            # the log writer's thread refused it, after the learner had started: close hung
            raise ValueError(f"synchronous must be one of {SYNCHRONOUS}, got {synchronous!r}")
        self.path = Path(store)
        self.prune_log = prune_log
        self.checkpoint_every = checkpoint_every
        self.impression_ttl = float(impression_ttl)
        lag = max_learn_lag
        if lag is not None and (isinstance(lag, bool) or not isinstance(lag, int) or lag < 1):
            raise ValueError(f"max_learn_lag must be an integer >= 1 or None, got {lag!r}")
        self.max_learn_lag = lag
        self._given_clock = clock
        self.clock: Callable[[], float] = time.time if clock is None else clock
        self.synchronous = synchronous
        if fork_checkpoints and not FORK_CHECKPOINTS:
            raise ValueError("fork_checkpoints: this system has no fork")
        self.fork_checkpoints = FORK_CHECKPOINTS if fork_checkpoints is None else fork_checkpoints
        config = resolve_config(self.path, config)
        self.config = config
        self._index = {label: i for i, label in enumerate(config.labels)}
        self.stats = Stats()
        self.lock = threading.Lock()  # the model lock: one show or one learn at a time
        self.model: Any = None
        self._log_q: queue.SimpleQueue = queue.SimpleQueue()
        self._learn_q: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._started = False
        self._closed = False
        self._learned = threading.Condition()
        self._waiters: dict[int, list[concurrent.futures.Future]] = {}
        self.store_id: str | None = None
        self.applied_seq = 0
        self.applied_impression: str | None = None
        self._feedback_sent = self._feedback_handled = 0  # feedback given to the log writer
        self.committed_seq = 0
        self.checkpoint_seq = 0
        self._pending = PendingImpressions()
        self._log_done = self._learn_done = False  # set by each thread as it ends
        self._pruned_for = 0  # the checkpoint seq up to which the log writer has pruned
        self._next_prune = -math.inf  # when it prunes again without a new checkpoint
        self._prune_blocked = False  # the last prune failed for a lock held or a full disk
        self._uncounted_seq = 0  # the seq of a recovered checkpoint without counters
        self._fused: Any = None  # the learner's one-call learn (olboost.serve._fused), if any
        # (pid, pipe, seq, time.monotonic() at the fork) of a checkpoint child
        self._child: tuple[int, int, int, float] | None = None
        self._error: BaseException | None = None
        self._error_text: str | None = None  # what stopped, for /health and the status page
        self._store_lock: StoreLock | None = None  # held while started

    # ------------------------------------------------------------------ life cycle

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has run (and :meth:`close` not yet)."""
        return self._started and not self._closed

    def start(self) -> None:
        """Create or recover the model (the last checkpoint, then the log after it), warm up
        its compiled kernels and start the log writer and the learner."""
        if self._closed:
            raise RuntimeError("the service is closed: serve the store with a new Service")
        if self._started:
            raise RuntimeError("the service is started already")
        store = Store(self.path)
        try:
            self._store_lock = StoreLock(self.path)
        except BaseException:
            store.close()
            raise
        try:
            if store.can_rebuild():
                store.rebuild_checkpoint()
            elif not store.created():
                model = build_model(self.config)
                start_model(model, self.config)
                store.create(model, self.config.to_json())
            self.store_id = store.store_id
            model, applied_seq = store.recover()
            self.model, self.applied_seq = model, applied_seq
            self.applied_impression = store.impression_at(applied_seq)
            self._fused = fused_learner(self.model)
            self.checkpoint_seq, counts = store.recovered_from
            self._uncounted_seq = self.checkpoint_seq if counts is None else 0
            last_impression, last_seq = store.last_ids()
            self.committed_seq = last_seq
            self._next_impression = last_impression + 1
            self._nonce = secrets.token_hex(6)
            self.stats.count_log(store, None if counts is None else (self.checkpoint_seq, counts))
            if self._given_clock is None:
                self.clock = SteadyClock()
            now = self.clock()
            self._pending = PendingImpressions()
            self.stats.expired += store.count_expired(now) + store.pruned()["expired"]
            for id_, expires in store.unanswered(now):
                self._pending.add(id_, expires, recovered=True)
        except sqlite3.DatabaseError as err:
            # a page the opening check passed but a later read did not (a page damaged since)
            store.close()
            self._unlock()
            raise log_error(Path(self.path) / "log.sqlite", err) from None
        except BaseException:
            store.close()
            self._unlock()
            raise
        store.close()  # the log writer opens its own connection, in its thread
        try:  # compiling, on a first run: an interrupt here left the store locked
            # said in the service's log (on stderr from `olboost serve`), as the CLI's runs say it
            with _CompileNotice(True, say=log.info, closing="before the service started"):
                warm_up_model(self.model, self.config)
        except BaseException:
            self._unlock()
            raise
        self._started = True
        ready = threading.Event()
        self._threads = [
            threading.Thread(target=self._log_loop, args=(ready,), name="olboost-log", daemon=True),
            threading.Thread(target=self._learn_loop, name="olboost-learn", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        ready.wait()
        if self._error is not None:  # the log could not be opened: both threads end
            self.close()
            raise self._error

    def close(self) -> None:
        """Stop taking requests, learn every committed feedback, write a last checkpoint.

        Called again after an interrupt (``KeyboardInterrupt`` while it waited), it waits for
        the threads again, then releases the store."""
        if not self._started:
            return
        if not self._closed:
            self._closed = True
            self._log_q.put(None)
        for thread in self._threads:
            thread.join()
        self._unlock()

    def __enter__(self) -> Service:
        """``with Service(...) as service:`` starts it (unless started) and closes it."""
        if not self._started:
            self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _unlock(self) -> None:
        """Release the store's lock (:class:`~olboost.serve.store.StoreLock`)."""
        lock, self._store_lock = self._store_lock, None
        if lock is not None:
            lock.release()

    # ------------------------------------------------------------------ requests

    def _check_open(self) -> None:
        if self._closed or not self._started:
            raise RequestError(503, _NOT_RUNNING)
        if self._error is not None:
            raise self._stopped()

    def rank(
        self, body: Any, *, block: bool = True
    ) -> tuple[dict[str, Any], concurrent.futures.Future] | None:
        """Show the model's ranking for a ``/rank`` body.

        Returns the response and a future that resolves (to the response) once the impression
        is committed to the log: answer only then. The future's callbacks run on the log
        writer's thread: one that blocks (on another request's future, say) stops the service;
        wait with ``result()`` or ``asyncio.wrap_future`` instead. Raises
        :class:`RequestError` before any change on a bad body. With ``block=False``, returns
        ``None``, having changed nothing, when the model lock is taken (the learner is learning
        an example): the event loop then ranks on another thread rather than wait
        (:mod:`olboost.serve.app`).
        """
        self._check_open()
        x, key, want_ranking, want_scores = parse_rank(body, self.config)
        if not self.lock.acquire(blocking=block):
            return None
        # Everything to the queue under the lock: two threads may rank (app.py), and the log
        # then receives the impressions in the order of their numbers, the order of creation
        # that expiry relies on. Nothing else: the learner waits for this lock, and Python run
        # while holding it waits for the GIL too.
        try:
            seq = self._next_impression
            self._next_impression += 1
            key = seq if key is None else key
            scored = None  # the model's scores, where the ranking was made from them
            if self._fused is not None:  # show_one in one call
                ranking, probs, _ = self._fused.show(x, key)
                shown, round_ = ranking[: self.config.k].copy(), self.model.t_ + 1
                own = self._fused.scores[shown]
            elif self.config.topk:
                impression = self.model.show_one(x, key)
                ranking = impression.ranking
                shown, probs, round_ = impression.shown, impression.probs, impression.round
                own = impression.scores
            else:
                scored = self.model.score_one(x)
                s = np.fromiter(scored.values(), float, len(self._index))
                ranking = np.argsort(-s, kind="stable")
                shown, probs, round_ = ranking[: self.config.k].copy(), None, self.model.t_ + 1
                own = s[shown]
            if want_scores and scored is None:
                scored = self.model.score_one(x)
            scores = scored if want_scores else None
            now = self.clock()
            # the process's nonce tells apart two impressions of one number, the second shown
            # after a crash lost the first before it was acknowledged
            public_id = f"{seq}-{self._nonce}"
            record = ImpressionRecord(
                id=seq, public_id=public_id, created=now, expires=now + self.impression_ttl,
                round=round_, key=key, x=x, shown=np.asarray(shown, dtype=np.int64), probs=probs,
                own=own,
            )  # fmt: skip
            # filled below: the future, the writer's answer, is not seen before this returns
            response: dict[str, Any] = {}
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._queue_request(("impression", record, future, response))
        finally:
            self.lock.release()
        labels = self.config.labels
        response["impression"] = public_id
        response["labels"] = [labels[i] for i in record.shown.tolist()]
        response["round"] = round_
        response["expires"] = record.expires
        if want_ranking:  # show_one's ranking is of labels already; the others of indices
            if isinstance(ranking, tuple):
                response["ranking"] = list(ranking)
            else:
                response["ranking"] = [labels[i] for i in ranking.tolist()]
        if scores is not None:
            response["scores"] = {str(label): value for label, value in scores.items()}
        return response, future

    def feedback(self, body: Any) -> concurrent.futures.Future:
        """Log a ``/feedback`` body; the future resolves to the response once it is committed
        and the answer is due (:meth:`answer_future`): with ``"wait": true`` once learned, and
        otherwise once the learner is within ``max_learn_lag`` of it; or fails with a
        :class:`RequestError`. Its callbacks run on the log writer's thread or the learner's."""
        self._check_open()
        payload = parse_feedback(body, self.config, self._index)
        lag = self.max_learn_lag
        # the feedback queued for the log writer too: a burst outruns its commits
        queued = self._feedback_sent - self._feedback_handled
        behind = self.committed_seq - self.applied_seq + queued
        if lag is not None and behind >= lag + WAITING_CLIENTS:
            # the answer's wait holds back clients that read it; one that sends and hangs up
            # (a fire-and-forget click logger) grew the backlog without bound (thousands)
            raise RequestError(
                503,
                f"the model is {behind} feedbacks behind, max_learn_lag {lag} + "
                f"{WAITING_CLIENTS} or more: retry in a moment (clients that wait for their "
                "answers are held to the model's pace instead)",
                retry_after=1,
            )
        logged: concurrent.futures.Future = concurrent.futures.Future()
        self._feedback_sent += 1  # (this thread alone counts them; the log writer the handled)
        self._queue_request(("feedback", payload, logged, None))
        # Answered when due, not when committed: an embedding application that asked to wait
        # had ranked on a model that had not learned the feedback yet (only the HTTP handler
        # waited), and one that did not ask got no backpressure.
        answered: concurrent.futures.Future = concurrent.futures.Future()

        def settle(due: concurrent.futures.Future, result: dict[str, Any]) -> None:
            error = due.exception()
            if error is not None:
                answered.set_exception(error)
            else:
                answered.set_result(result)

        def on_logged(done: concurrent.futures.Future) -> None:
            error = done.exception()
            if error is not None:
                answered.set_exception(error)
                return
            result = dict(done.result())
            wait = result.pop("wait")
            try:
                due = self.answer_future(result["seq"], wait)
            except BaseException as err:  # a callback's error would leave the future waiting
                answered.set_exception(err)
                return
            due.add_done_callback(lambda due: settle(due, result))

        logged.add_done_callback(on_logged)
        return answered

    def wait_learned(self, seq: int, timeout: float | None = None) -> bool:
        """Block until the feedback of log sequence ``seq`` is learned; whether it was:
        ``False`` on timeout, or at once when the service has stopped or closed before it."""
        with self._learned:
            self._learned.wait_for(
                lambda: self.applied_seq >= seq or self._error is not None or self._learn_done,
                timeout,
            )
            return self.applied_seq >= seq

    def learned_future(self, seq: int) -> concurrent.futures.Future:
        """A future resolved once the feedback of log sequence ``seq`` is learned."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._learned:
            if self.applied_seq >= seq:
                future.set_result(seq)
            elif self._error is not None:
                said = self._public(self._error_text or str(self._error))
                future.set_exception(RequestError(503, said))
            elif self._learn_done:
                future.set_exception(RequestError(503, _NOT_LEARNED.format(seq=seq)))
            else:
                self._waiters.setdefault(seq, []).append(future)
        return future

    def answer_future(self, seq: int, wait: bool) -> concurrent.futures.Future:
        """When to answer the feedback of log sequence ``seq`` (committed): once it is learned
        with ``wait``; otherwise once the learner is within ``max_learn_lag`` of it (at once
        when it is already)."""
        if wait:
            return self.learned_future(seq)
        if self.max_learn_lag is not None and seq - self.applied_seq > self.max_learn_lag:
            return self.learned_future(seq - self.max_learn_lag)
        done: concurrent.futures.Future = concurrent.futures.Future()
        done.set_result(seq)
        return done

    def drain(self, timeout: float | None = None) -> bool:
        """Block until every committed feedback is learned."""
        return self.wait_learned(self.committed_seq, timeout)

    def model_digest(self) -> dict[str, Any]:
        """The SHA-256 of the model's canonical pickle (:func:`olboost.checkpoint.dumps`) after
        every committed feedback is learned, with its round count and the last ``seq``."""
        from olboost.checkpoint import dumps

        if not self._started:
            raise RuntimeError("the service is not started: start() it first")
        self.drain()
        with self.lock:
            data = dumps(self.model)
            return {
                "sha256": hashlib.sha256(data).hexdigest(),
                "rounds": int(self.model.t_),
                "seq": self.applied_seq,
            }

    def checkpoint_now(self) -> concurrent.futures.Future:
        """Ask the learner to write a checkpoint after the feedback committed so far; resolves
        to its ``seq``."""
        self._check_open()
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._learn_q.put(("checkpoint", future))
        if self._learn_done:  # after the learner's last look at its queue (a close meanwhile)
            _fail(future, RequestError(503, _NOT_RUNNING))
        return future

    @property
    def pending(self) -> int:
        """Impressions waiting for feedback (not expired yet)."""
        return len(self._pending)

    def series(self) -> dict[str, Any]:
        """The status page's data: per point, the time, feedback learned, the running estimate
        of the rank loss of the model's rankings (:func:`~olboost.serve.stats.estimated_loss`) and
        the click-through rate since the previous point."""
        return self.stats.status_series(self.clock)

    def schema(self) -> dict[str, Any]:
        """The ``/schema`` answer: what a client needs to write ``/rank`` and ``/feedback``
        bodies, the store's settings, which never change while it serves: the algorithm, ``k``,
        the labels (in the model's order, that of ``"scores": true``) and the features' width and
        names (``None``: given by position only)."""
        c = self.config
        return {
            "algorithm": c.algorithm,
            "k": c.k,
            "labels": list(c.labels),
            "n_features": c.n_features,
            "feature_names": None if c.feature_names is None else list(c.feature_names),
        }

    def health(self) -> dict[str, Any]:
        """The ``/health`` answer, of a size that does not grow with the labels (probes and the
        status page read it every few seconds; :meth:`schema` has the names). Its error texts,
        which anyone who reaches the service reads (``/health`` and the status page need no
        token), name files by their place in the store (``STORE/checkpoint.olb``) and others by
        their name alone (``.../name``): the service's log has them whole."""
        s = self.stats
        c = self.config
        with s.lock:
            error = None if self._error is None else self._error_text or repr(self._error)
            return {
                "status": "error"
                if self._error is not None
                else ("closed" if self._closed else "ok"),
                "error": self._public(error),
                "algorithm": c.algorithm,
                "k": c.k,
                "n_labels": len(c.labels),
                "n_features": c.n_features,
                "rounds": int(self.model.t_) if self.model is not None else 0,
                "impressions": s.impressions,
                "feedback": s.feedback,
                "committed_seq": self.committed_seq,
                "applied_seq": self.applied_seq,
                "checkpoint_seq": self.checkpoint_seq,
                "checkpoint_error": self._public(s.checkpoint_error),
                # (the stop's error says what is wrong now)
                "log_error": self._public(s.log_error) if self._error is None else None,
                "pending": len(self._pending) if self._started else 0,
                "expired": s.expired,
                "pruned": s.pruned,
                "impression_ttl": self.impression_ttl,
            }

    def _public(self, text: str | None) -> str | None:
        """``text`` with the store's absolute path said ``STORE``, and any other absolute
        path by its last name (``.../name``): what ``/health`` shows to anyone."""
        if text is None:
            return None
        # the store's path whole (/srv/rank, not the start of /srv/ranker-venv/...), as given
        # (a relative one too) and resolved, the longest first
        given = str(self.path)
        roots = {os.path.abspath(given), os.path.realpath(given), given}
        for root in sorted(roots, key=len, reverse=True):
            text = re.sub(
                rf"(?<![\w./-]){re.escape(root)}(?=[/'\"\s),;:!]|\.(?:\s|$)|$)", "STORE", text
            )
        return _ABSOLUTE_PATH.sub(_last_name, text)

    def metrics(self) -> str:
        """``/metrics`` in Prometheus's text exposition format (version 0.0.4)."""
        s = self.stats
        with s.lock:
            rounds = int(self.model.t_) if self.model is not None else 0
            learn_queue = self.committed_seq - self.applied_seq
            pending = len(self._pending) if self._started else 0
            table, lag = metrics_table(
                s, rounds, learn_queue, self.checkpoint_seq, pending, self._error is not None
            )
        return exposition(table, lag)
