"""The ranking service's core, without the web framework: the model, its log and its threads.

:class:`Service` owns one model and one :class:`~olboost.serve.store.Store`, and three kinds of
work:

* **Ranking** (:meth:`Service.rank`, on the caller's thread: the server's event loop, or a worker
  thread when the learner holds the model) shows the model's ranking under the model lock and
  hands the impression to the log writer.
* **The log writer** (one thread, the only writer of the SQLite log) takes impressions and
  feedback from a queue, checks each feedback against the log (idempotency, an impression answered
  once, expiry, clicked labels shown), commits a whole batch in one transaction (group commit: one
  ``fsync`` for every request that arrived meanwhile), and only then resolves the callers'
  futures: nothing is acknowledged before it is on disk. A request it rejects writes nothing.
* **The learner** (one thread, the only thread that changes the model) learns the committed
  feedback in ``seq`` order, the order of acknowledgement, and writes a checkpoint every
  ``checkpoint_every`` feedbacks.

**Concurrency.** The model lock is held by the learner for one ``learn_one`` at a time and by a
ranking for one ``show_one``, so a ranking never waits for more than one example to be learned.
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
most a temporary file, removed at the next start. The last checkpoint (at close) and
``/admin/checkpoint`` are written in the server, after any child has finished.

**Errors.** Every rejection is a :class:`RequestError` (an HTTP status and a message) raised
before anything is written or learned.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import math
import os
import pickle
import queue
import secrets
import select
import signal
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from olboost.online.inputs import MAX_ABS_FEATURE
from olboost.serve._fused import fused_learner
from olboost.serve.store import ImpressionRecord, Store, feedback_of, write_checkpoint

__all__ = ["ALGORITHMS", "RequestError", "Service", "ServiceConfig", "build_model"]

#: Boosters a service can run: top-k feedback (``topk-*``) or full feedback.
ALGORITHMS = ("topk-adaptive", "topk-bbm", "ada-olmr", "online-bmr")

#: Largest draw key of a ranking (the boosters' keys are 64-bit).
_MAX_KEY = 2**64 - 1

#: Longest feedback or impression id accepted.
_MAX_ID = 128

#: Requests the log writer commits in one transaction at most.
_BATCH = 512

#: Seconds between two points of the status page's series, and points kept (one hour).
SERIES_STEP = 1.0
SERIES_POINTS = 3600

#: Upper bounds (seconds) of the feedback lag histogram of ``/metrics``.
LAG_BUCKETS = (0.01, 0.1, 1.0, 10.0, 60.0, 600.0, 3600.0)

#: Whether the periodic checkpoints are written by a forked child (see the module docstring).
FORK_CHECKPOINTS = hasattr(os, "fork")

#: Seconds the learner waits for a new feedback while a checkpoint child runs, between two looks
#: at whether it has finished.
_CHILD_POLL = 0.05


class RequestError(Exception):
    """A rejected request: ``status`` (an HTTP status code) and a message for the client."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ServiceConfig:
    """What defines a service's model: fixed when its store is created.

    Attributes
    ----------
    algorithm
        One of :data:`ALGORITHMS`.
    labels
        The label set (strings), in the model's order.
    n_features
        Width of a feature vector.
    feature_names
        Names for features given as a JSON object (``None``: lists only).
    learners, seed, k, exploration, rho, gamma, features
        The booster's parameters (``features``: random features per tree); ``k`` is also the
        number of labels shown by a full-feedback model.
    """

    algorithm: str
    labels: tuple[str, ...]
    n_features: int
    feature_names: tuple[str, ...] | None = None
    learners: int = 100
    seed: int = 1
    k: int = 3
    exploration: str = "uniform"
    rho: float = 0.02
    gamma: float = 0.1
    features: int = 20

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}"
            )
        labels = tuple(self.labels)
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise ValueError("labels: at least 2 distinct labels are needed")
        if not all(isinstance(label, str) and label for label in labels):
            raise ValueError("labels must be non-empty strings")
        object.__setattr__(self, "labels", labels)
        if (
            isinstance(self.n_features, bool)
            or not isinstance(self.n_features, int)
            or self.n_features < 1
        ):
            raise ValueError(f"n_features must be an integer >= 1, got {self.n_features!r}")
        if self.feature_names is not None:
            names = tuple(self.feature_names)
            if len(names) != self.n_features or len(set(names)) != len(names):
                raise ValueError(f"feature_names: {self.n_features} distinct names are needed")
            object.__setattr__(self, "feature_names", names)
        if not 1 <= self.k <= len(labels):
            raise ValueError(f"k={self.k} must be in [1, {len(labels)}] labels")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["labels"] = list(self.labels)
        out["feature_names"] = None if self.feature_names is None else list(self.feature_names)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServiceConfig:
        return cls(**data)

    @property
    def topk(self) -> bool:
        """Whether the model learns from top-k feedback (clicks on the shown labels only)."""
        return self.algorithm.startswith("topk-")


def build_model(config: ServiceConfig) -> Any:
    """A fresh, unstarted booster of ``config`` on compiled Hoeffding trees."""
    from olboost import AdaOLMR, OnlineBMR, TopkAdaptive, TopkBBM, VFDTCommittee

    committee = VFDTCommittee(n_features=min(config.features, config.n_features))
    common = {"learners": config.learners, "seed": config.seed, "labels": list(config.labels)}
    topk = {"k": config.k, "exploration": config.exploration, "rho": config.rho}
    if config.algorithm == "topk-adaptive":
        return TopkAdaptive(committee, **common, **topk)
    if config.algorithm == "topk-bbm":
        return TopkBBM(committee, **common, **topk, gamma=config.gamma)
    if config.algorithm == "ada-olmr":
        return AdaOLMR(committee, **common)
    return OnlineBMR(committee, **common, gamma=config.gamma)


def start_model(model: Any, config: ServiceConfig) -> None:
    """Start ``model`` (fix its features, labels and seed) before any request, so that the
    model a store begins with, its id included, is in ``initial.olb``."""
    model._start(config.n_features, None)


# ---------------------------------------------------------------------------------- parsing


def _fail(message: str, status: int = 422) -> RequestError:
    return RequestError(status, message)


def _check_fields(body: Any, allowed: set[str], required: set[str], what: str) -> None:
    if not isinstance(body, dict):
        raise _fail(f"{what}: the body must be a JSON object, got {type(body).__name__}", 400)
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise _fail(f"{what}: unknown field(s) {unknown}; allowed: {sorted(allowed)}")
    missing = sorted(required - set(body))
    if missing:
        raise _fail(f"{what}: missing field(s) {missing}")


def _flag(body: dict, name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise _fail(f"{name} must be true or false, got {json.dumps(value)}")
    return value


def _number(value: Any, where: str) -> float:
    # bool is an int in Python but not a feature value in JSON terms
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(f"features: {where} must be a number, got {json.dumps(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise _fail(f"features: {where} is not finite ({value})")
    if abs(v) > MAX_ABS_FEATURE:
        raise _fail(f"features: {where} = {value} exceeds the limit of +-{MAX_ABS_FEATURE:g}")
    return v


def _vector(values: list[Any], where: Callable[[int], str]) -> np.ndarray:
    """``values`` as float64, every one a finite JSON number within the input limit."""
    # the usual case in one pass of C; the slow loop below only finds the culprit to name
    if all(type(v) is float or type(v) is int for v in values):
        x = np.array(values, dtype=np.float64)
        if np.all(np.abs(x) <= MAX_ABS_FEATURE):  # False for NaN and infinities too
            return x
    for i, v in enumerate(values):
        _number(v, where(i))
    raise AssertionError("unreachable: a value was rejected above")


def parse_features(value: Any, config: ServiceConfig) -> np.ndarray:
    """A feature vector from JSON: a list of ``n_features`` numbers or an object with exactly
    the schema's feature names. Raises :class:`RequestError` (422) naming the problem."""
    n = config.n_features
    if isinstance(value, list):
        if len(value) != n:
            raise _fail(f"features: expected {n} values, got {len(value)}")
        return _vector(value, lambda i: f"value {i}")
    if isinstance(value, dict):
        names = config.feature_names
        if names is None:
            raise _fail("features: this service has no feature names; send a list of numbers")
        unknown = sorted(set(value) - set(names))
        missing = [name for name in names if name not in value]
        if unknown or missing:
            raise _fail(
                f"features: unknown names {unknown[:5]}, missing names {missing[:5]} "
                f"({len(unknown)} unknown, {len(missing)} missing of {n})"
            )
        return _vector([value[name] for name in names], lambda i: repr(names[i]))
    raise _fail(
        f"features must be a list of {n} numbers or an object of named values, got "
        f"{type(value).__name__}"
    )


def _parse_id(value: Any, name: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= _MAX_ID or not value.isprintable():
        raise _fail(f"{name} must be a printable string of 1 to {_MAX_ID} characters")
    return value


# ---------------------------------------------------------------------------------- metrics


@dataclass
class Stats:
    """Counters of the service (``/metrics``), guarded by :attr:`lock`."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: dict[tuple[str, int], int] = field(default_factory=dict)
    impressions: int = 0
    feedback: int = 0
    duplicates: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    expired: int = 0
    expired_feedback: int = 0
    clicks: int = 0
    shown: int = 0
    applied: int = 0
    loss_sum: float = 0.0  # sum of the estimated misordered pairs (inverse-propensity weighted)
    pairs_sum: float = 0.0  # sum of the estimated relevant/irrelevant pairs, the same way
    lag_sum: float = 0.0
    lag_count: int = 0
    lag_buckets: list[int] = field(default_factory=lambda: [0] * len(LAG_BUCKETS))
    checkpoints: int = 0
    series: deque = field(default_factory=lambda: deque(maxlen=SERIES_POINTS))

    def request(self, endpoint: str, status: int) -> None:
        with self.lock:
            key = (endpoint, status)
            self.requests[key] = self.requests.get(key, 0) + 1

    def reject(self, reason: str) -> None:
        with self.lock:
            self.rejected[reason] = self.rejected.get(reason, 0) + 1


#: The reason label of a rejected feedback, by status.
_REASONS = {404: "unknown", 409: "conflict", 410: "expired", 422: "invalid"}


class _Batch:
    """Undo records of one log transaction, so that a failed commit leaves the memory as the
    log: nothing of the batch."""

    def __init__(self) -> None:
        self.undo: list[Callable[[], None]] = []
        self.learn: list[tuple[int, ImpressionRecord, np.ndarray, float]] = []
        self.results: list[tuple[concurrent.futures.Future, Any]] = []


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


class Service:
    """A live ranking model with its log, its learner and its checkpoints.

    Parameters
    ----------
    store
        The store directory (created if missing).
    config
        The model's definition; required for a new store, and must equal the stored one for an
        existing store (``None``: the stored one).
    checkpoint_every
        Feedbacks learned between two checkpoints: a restart replays at most that many. Each
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
        instead of the backlog growing without bound). ``None``: no limit.
    synchronous
        The log's durability, ``"full"`` or ``"normal"`` (:class:`~olboost.serve.store.Store`).
    fork_checkpoints
        Write the periodic checkpoints from a forked child (see the module docstring); ``None``
        where the system can (:data:`FORK_CHECKPOINTS`).
    clock
        The time source (seconds, :func:`time.time` by default).

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
        clock: Callable[[], float] = time.time,
    ):
        if (
            isinstance(checkpoint_every, bool)
            or not isinstance(checkpoint_every, int)
            or checkpoint_every < 1
        ):
            raise ValueError(f"checkpoint_every must be an integer >= 1, got {checkpoint_every!r}")
        if not (isinstance(impression_ttl, int | float) and 0 < impression_ttl < math.inf):
            raise ValueError(
                f"impression_ttl must be a positive number of seconds, got {impression_ttl!r}"
            )
        self.path = Path(store)
        self.checkpoint_every = checkpoint_every
        self.impression_ttl = float(impression_ttl)
        lag = max_learn_lag
        if lag is not None and (isinstance(lag, bool) or not isinstance(lag, int) or lag < 1):
            raise ValueError(f"max_learn_lag must be an integer >= 1 or None, got {lag!r}")
        self.max_learn_lag = lag
        self.clock = clock
        self.synchronous = synchronous
        if fork_checkpoints and not FORK_CHECKPOINTS:
            raise ValueError("fork_checkpoints: this system has no fork")
        self.fork_checkpoints = FORK_CHECKPOINTS if fork_checkpoints is None else fork_checkpoints
        # each thread opens its own connection (sqlite3 objects stay in their thread)
        store = Store(self.path)
        try:
            stored = store.config()
        finally:
            store.close()
        if stored is not None:
            stored_config = ServiceConfig.from_json(stored)
            if config is not None and config != stored_config:
                diff = {
                    name: (value, getattr(config, name))
                    for name, value in asdict(stored_config).items()
                    if getattr(config, name) != value
                }
                raise ValueError(
                    f"{self.path}: the store was created with other settings "
                    f"(stored, given): {diff}"
                )
            config = stored_config
        elif config is None:
            raise ValueError(f"{self.path}: a new store needs a configuration")
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
        self.applied_seq = 0
        self.committed_seq = 0
        self.checkpoint_seq = 0
        self._fused: Any = None  # the learner's one-call learn (olboost.serve._fused), if any
        self._child: tuple[int, int, int] | None = None  # (pid, pipe, seq) of a checkpoint child
        self._error: BaseException | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Create or recover the model (the last checkpoint, then the log after it), warm up
        its compiled kernels and start the log writer and the learner."""
        if self._started:
            raise RuntimeError("the service is started already")
        store = Store(self.path)
        if not store.created():
            model = build_model(self.config)
            start_model(model, self.config)
            store.create(model, self.config.to_json())
        self.model, self.applied_seq = store.recover()
        self._fused = fused_learner(self.model)
        self.checkpoint_seq = store.read_checkpoint()[1]
        last_impression, last_seq = store.last_ids()
        self.committed_seq = last_seq
        self._next_impression = last_impression + 1
        self._nonce = secrets.token_hex(6)
        self._count_log(store)
        now = self.clock()
        self._pending: OrderedDict[str, ImpressionRecord] = OrderedDict()
        for record in store.unanswered():
            if record.expires <= now:
                self.stats.expired += 1
            else:
                self._pending[record.public_id] = record
        store.close()  # the log writer opens its own connection, in its thread
        self._warm_up()
        self._started = True
        ready = threading.Event()
        self._threads = [
            threading.Thread(target=self._log_loop, args=(ready,), name="olboost-log", daemon=True),
            threading.Thread(target=self._learn_loop, name="olboost-learn", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        ready.wait()
        if self._error is not None:
            raise self._error

    def _count_log(self, store: Store) -> None:
        """Counters that describe the log rather than this process: from the log itself."""
        s = self.stats
        s.impressions = store.count("impressions")
        s.feedback = store.count("feedback")
        s.applied = s.feedback
        for fb in store.feedback_after(0):
            clicked = int(fb.clicked.sum())
            s.clicks += clicked
            s.shown += fb.impression.shown.shape[0]
            misordered, pairs = self._estimated_loss(fb.impression, fb.clicked)
            s.loss_sum += misordered
            s.pairs_sum += pairs

    def _warm_up(self) -> None:
        """Run a copy of the model through a show and a learn, so that the kernels are
        compiled (or loaded from Numba's cache) before the first request is timed."""
        from olboost.checkpoint import dumps

        clone = pickle.loads(dumps(self.model))
        x = np.zeros(self.config.n_features)
        if self.config.topk:
            impression = clone.show_one(x, key=0)
            feedback = impression.feedback([impression.labels[0]])
            fused = fused_learner(clone)
            if fused is not None:
                fused.show(x, 0)  # the rankings' one call, before the learn that waits
                fused.learn(x, feedback)
            else:
                clone.learn_one(x, feedback)
        else:
            clone.rank_one(x)
            clone.learn_one(x, {self.config.labels[0]})
        clone.score_one(x)

    def close(self) -> None:
        """Stop taking requests, learn every committed feedback, write a last checkpoint."""
        if not self._started or self._closed:
            return
        self._closed = True
        self._log_q.put(None)
        for thread in self._threads:
            thread.join()

    # ------------------------------------------------------------------ requests

    def _check_open(self) -> None:
        if self._closed or not self._started:
            raise RequestError(503, "the service is not running")
        if self._error is not None:
            raise RequestError(503, f"the service stopped on an error: {self._error}")

    def rank(
        self, body: Any, *, block: bool = True
    ) -> tuple[dict[str, Any], concurrent.futures.Future] | None:
        """Show the model's ranking for a ``/rank`` body.

        Returns the response and a future that resolves (to the response) once the impression
        is committed to the log: answer only then. Raises :class:`RequestError` before any
        change on a bad body. With ``block=False``, returns ``None``, having changed nothing,
        when the model lock is taken (the learner is learning an example): the event loop then
        ranks on another thread rather than wait (:mod:`olboost.serve.app`).
        """
        self._check_open()
        _check_fields(body, {"features", "key", "ranking", "scores"}, {"features"}, "rank")
        x = parse_features(body["features"], self.config)
        key = body.get("key")
        if key is not None and (
            isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= _MAX_KEY
        ):
            raise _fail(f"key must be an integer in [0, 2^64), got {json.dumps(key)}")
        want_ranking = _flag(body, "ranking")
        want_scores = _flag(body, "scores")
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
            if self._fused is not None:  # show_one in one call
                ranking, probs, _ = self._fused.show(x, key)
                shown, round_ = ranking[: self.config.k].copy(), self.model.t_ + 1
            elif self.config.topk:
                impression = self.model.show_one(x, key)
                ranking = impression.ranking
                shown, probs, round_ = impression.shown, impression.probs, impression.round
            else:
                s = np.fromiter(self.model.score_one(x).values(), float, len(self._index))
                ranking = np.argsort(-s, kind="stable")
                shown, probs, round_ = ranking[: self.config.k].copy(), None, self.model.t_ + 1
            scores = self.model.score_one(x) if want_scores else None
            now = self.clock()
            # the process's nonce tells apart two impressions of one number, the second shown
            # after a crash lost the first before it was acknowledged
            public_id = f"{seq}-{self._nonce}"
            record = ImpressionRecord(
                id=seq, public_id=public_id, created=now, expires=now + self.impression_ttl,
                round=round_, key=key, x=x, shown=np.asarray(shown, dtype=np.int64), probs=probs,
            )  # fmt: skip
            # filled below: the future, the writer's answer, is not seen before this returns
            response: dict[str, Any] = {}
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._log_q.put(("impression", record, future, response))
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
        (and, with ``"wait": true``, learned), or fails with a :class:`RequestError`."""
        self._check_open()
        _check_fields(
            body, {"impression", "clicked", "feedback_id", "wait"}, {"impression", "clicked"},
            "feedback",
        )  # fmt: skip
        impression = _parse_id(body["impression"], "impression")
        feedback_id = _parse_id(body.get("feedback_id", impression), "feedback_id")
        clicked = body["clicked"]
        if not isinstance(clicked, list):
            raise _fail(f"clicked must be a list of labels, got {type(clicked).__name__}")
        indices = []
        for label in clicked:
            if not isinstance(label, str) or label not in self._index:
                known = list(self.config.labels)
                raise _fail(f"clicked: unknown label {json.dumps(label)}; labels: {known}")
            indices.append(self._index[label])
        if len(set(indices)) != len(indices):
            raise _fail(f"clicked: a label is repeated: {clicked}")
        wait = _flag(body, "wait")
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._log_q.put(("feedback", (feedback_id, impression, indices, wait), future, None))
        return future

    def wait_learned(self, seq: int, timeout: float | None = None) -> bool:
        """Block until the feedback of log sequence ``seq`` is learned (``False`` on timeout)."""
        with self._learned:
            return self._learned.wait_for(
                lambda: self.applied_seq >= seq or self._error is not None, timeout
            )

    def learned_future(self, seq: int) -> concurrent.futures.Future:
        """A future resolved once the feedback of log sequence ``seq`` is learned."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._learned:
            if self.applied_seq >= seq:
                future.set_result(seq)
            elif self._error is not None:
                future.set_exception(RequestError(503, f"the learner stopped: {self._error}"))
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
        return future

    # ------------------------------------------------------------------ log writer

    def _log_loop(self, ready: threading.Event) -> None:
        try:
            store = Store(self.path, synchronous=self.synchronous)
        except BaseException as err:  # reported by start()
            self._error = err
            ready.set()
            return
        ready.set()
        stop = False
        try:
            while not stop:
                try:
                    op = self._log_q.get(timeout=SERIES_STEP)
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
        except BaseException as err:  # a broken log: refuse every request from now on
            self._error = err
            print(f"olboost serve: the log writer stopped: {err!r}", file=sys.stderr)
            raise
        finally:
            store.close()
            self._learn_q.put(None)

    def _commit(self, store: Store, ops: list) -> None:
        batch = _Batch()
        store.db.execute("BEGIN IMMEDIATE")
        try:
            for kind, payload, future, response in ops:
                try:
                    if kind == "impression":
                        store.insert_impression(payload)
                        batch.results.append((future, response))
                        self._pending[payload.public_id] = payload
                        batch.undo.append(lambda p=payload.public_id: self._pending.pop(p, None))
                    else:
                        batch.results.append((future, self._log_feedback(store, payload, batch)))
                except RequestError as err:
                    self.stats.reject(_REASONS.get(err.status, "invalid"))
                    future.set_exception(err)
            store.db.execute("COMMIT")
        except BaseException as err:
            store.db.execute("ROLLBACK") if store.db.in_transaction else None
            for undo in reversed(batch.undo):
                undo()
            failure = RequestError(503, f"the log could not be written: {err}")
            for future, _ in batch.results:
                future.set_exception(failure)
            raise
        n_impressions = sum(1 for op in ops if op[0] == "impression")
        with self.stats.lock:
            self.stats.impressions += n_impressions
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
            if answered != public_id or not np.array_equal(mask, self._mask(record, indices, True)):
                raise RequestError(
                    409,
                    f"feedback id {feedback_id!r} was already used, for impression {answered!r} "
                    "with other clicks; a feedback id names one answer",
                )
            with self.stats.lock:
                self.stats.duplicates += 1
            return {"feedback_id": feedback_id, "seq": seq, "duplicate": True, "wait": wait}
        record = self._pending.get(public_id)
        if record is None:
            found = store.impression(public_id)
            if found is None:
                raise RequestError(404, f"unknown impression {public_id!r}")
            record, answered_by = found
            if answered_by is not None:
                raise RequestError(
                    409, f"impression {public_id!r} was already answered by feedback id "
                    f"{answered_by!r}"
                )  # fmt: skip
        if now >= record.expires:
            counted = self._pending.pop(public_id, None) is not None
            with self.stats.lock:
                self.stats.expired += counted
                self.stats.expired_feedback += 1
            raise RequestError(
                410, f"impression {public_id!r} expired {now - record.expires:.3f} s ago "
                f"(impressions expire {self.impression_ttl:g} s after they are shown)"
            )  # fmt: skip
        mask = self._mask(record, indices, False)
        seq = store.insert_feedback(feedback_id, record.id, mask, now)
        self._pending.pop(public_id, None)
        batch.undo.append(lambda: self._pending.__setitem__(public_id, record))
        batch.learn.append((seq, record, mask, now - record.created))
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

    def _expire(self) -> None:
        """Count and forget the pending impressions whose time is up (oldest first: they were
        logged in order of creation)."""
        now = self.clock()
        while self._pending:
            public_id, record = next(iter(self._pending.items()))
            if record.expires > now:
                break
            del self._pending[public_id]
            with self.stats.lock:
                self.stats.expired += 1

    @property
    def pending(self) -> int:
        """Impressions waiting for feedback (not expired yet)."""
        return len(self._pending)

    # ------------------------------------------------------------------ learner

    def _estimated_loss(self, record: ImpressionRecord, clicked: np.ndarray) -> tuple[float, float]:
        """``(misordered, pairs)`` of one feedback: the relevant/irrelevant pairs among the
        labels shown, and those shown in the wrong order (the irrelevant label above), each
        weighted by the inverse of the probability that the draw showed both (eq. 1 of Raman et
        al. 2020; 1 with full feedback). Summed over feedback, their ratio estimates the rank
        loss of the rankings shown, pair-weighted, in [0, 1]."""
        k = record.shown.shape[0]
        if record.probs is None:
            rel, probs = clicked[record.shown], np.ones((k, k))
        else:
            rel, probs = clicked, record.probs
        misordered = pairs = 0.0
        for i in np.flatnonzero(rel).tolist():
            for j in np.flatnonzero(~rel).tolist():
                pairs += 1.0 / probs[i, j]
                if j < i:  # the irrelevant label was shown above the relevant one
                    misordered += 1.0 / probs[i, j]
        return misordered, pairs

    def _learn_loop(self) -> None:
        since = 0
        last_point = 0.0
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
                    self._checkpoint()
                    since = 0
                    item[1].set_result(self.checkpoint_seq)
                    continue
                seq, record, clicked, lag = item
                if self._fused is not None:  # learn_one in one call without the GIL
                    with self.lock:
                        self._fused.learn_shown(record.x, record.shown, clicked, record.probs)
                else:
                    feedback = feedback_of(self.model, record, clicked)
                    with self.lock:
                        self.model.learn_one(record.x, feedback)
                misordered, pairs = self._estimated_loss(record, clicked)
                s = self.stats
                with s.lock:
                    s.applied += 1
                    s.feedback += 1
                    s.clicks += int(clicked.sum())
                    s.shown += record.shown.shape[0]
                    s.loss_sum += misordered
                    s.pairs_sum += pairs
                    s.lag_sum += lag
                    s.lag_count += 1
                    for b, bound in enumerate(LAG_BUCKETS):
                        if lag <= bound:
                            s.lag_buckets[b] += 1
                with self._learned:
                    self.applied_seq = seq
                    self._learned.notify_all()
                    done = [q for q in self._waiters if q <= seq]
                    futures = [f for q in done for f in self._waiters.pop(q)]
                for future in futures:
                    future.set_result(seq)
                since += 1
                # one child at a time: while one writes, the next checkpoint waits for it
                if since >= self.checkpoint_every and self._child is None:
                    if self.fork_checkpoints:
                        self._fork_checkpoint()
                    else:
                        self._checkpoint()
                    since = 0
                now = self.clock()
                if now - last_point >= SERIES_STEP:
                    self._point(now)
                    last_point = now
            self._reap_child(block=True)
            self._checkpoint()
        except BaseException as err:
            self._error = err
            print(f"olboost serve: the learner stopped: {err!r}", file=sys.stderr)
            with self._learned:
                self._learned.notify_all()
                waiting = [f for futures in self._waiters.values() for f in futures]
                self._waiters.clear()
            # answers waiting for learning (wait, backpressure) would wait for ever
            for future in waiting:
                future.set_exception(RequestError(503, f"the learner stopped: {err}"))
            raise

    def _checkpoint(self) -> None:
        if self.applied_seq == self.checkpoint_seq:
            return
        # no lock: this thread alone changes the model, and a show changes nothing pickled
        write_checkpoint(self.path, self.model, self.applied_seq)
        self.checkpoint_seq = self.applied_seq
        with self.stats.lock:
            self.stats.checkpoints += 1

    def _fork_checkpoint(self) -> None:
        """Fork a child that writes the checkpoint of the model as it is now (the feedback up to
        ``applied_seq`` learned) and reports ``ok`` on a pipe; :meth:`_reap_child` collects it.
        Called by the learner between two learns (see the module docstring)."""
        if self.applied_seq == self.checkpoint_seq:
            return
        seq = self.applied_seq
        parent = os.getpid()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: only this thread exists here; it must never return
            code = 1
            try:
                os.close(read_end)
                _die_with_parent(parent)
                write_checkpoint(self.path, self.model, seq)
                os.write(write_end, b"ok")
                code = 0
            except BaseException as err:  # the parent reports the failure (no "ok")
                # os.write, not print: another thread may have held sys.stderr's lock at the fork
                with contextlib.suppress(BaseException):
                    os.write(2, f"olboost serve: checkpoint child: {err!r}\n".encode())
            finally:
                # no atexit handlers, no flushing of the server's buffers, no thread joins
                os._exit(code)
        os.close(write_end)
        self._child = (pid, read_end, seq)

    def _reap_child(self, block: bool) -> None:
        """Collect the checkpoint child once it has finished (at once if ``block``, else only if
        it has): its ``seq`` becomes the checkpoint's if it reported success."""
        if self._child is None:
            return
        pid, pipe, seq = self._child
        if not block and not select.select([pipe], [], [], 0)[0]:
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
            with self.stats.lock:
                self.stats.checkpoints += 1
        else:
            print(
                f"olboost serve: the checkpoint of seq {seq} failed; the next one retries",
                file=sys.stderr,
            )

    def _point(self, now: float) -> None:
        s = self.stats
        with s.lock:
            s.series.append((now, s.applied, s.loss_sum, s.pairs_sum, s.clicks, s.shown))

    def series(self) -> dict[str, Any]:
        """The status page's data: per point, the time, feedback learned, the running estimate
        of the rank loss of the rankings shown (:meth:`_estimated_loss`) and the click-through
        rate since the previous point."""
        s = self.stats
        with s.lock:
            points = list(s.series)
            points.append((self.clock(), s.applied, s.loss_sum, s.pairs_sum, s.clicks, s.shown))
        out: dict[str, list] = {"t": [], "feedback": [], "loss": [], "ctr": []}
        prev = None
        for t, n, loss, pairs, clicks, shown in points:
            out["t"].append(t)
            out["feedback"].append(n)
            out["loss"].append(loss / pairs if pairs else None)
            if prev is None:
                out["ctr"].append(clicks / shown if shown else None)
            else:
                new = shown - prev[1]
                out["ctr"].append((clicks - prev[0]) / new if new else None)
            prev = (clicks, shown)
        return out

    def health(self) -> dict[str, Any]:
        """The ``/health`` answer."""
        s = self.stats
        c = self.config
        with s.lock:
            return {
                "status": "error" if self._error is not None else "ok",
                "algorithm": c.algorithm,
                "labels": list(c.labels),
                "k": c.k,
                "n_features": c.n_features,
                "feature_names": None if c.feature_names is None else list(c.feature_names),
                "rounds": int(self.model.t_) if self.model is not None else 0,
                "impressions": s.impressions,
                "feedback": s.feedback,
                "committed_seq": self.committed_seq,
                "applied_seq": self.applied_seq,
                "checkpoint_seq": self.checkpoint_seq,
                "pending": len(self._pending) if self._started else 0,
                "expired": s.expired,
                "impression_ttl": self.impression_ttl,
            }

    def metrics(self) -> str:
        """``/metrics`` in Prometheus's text exposition format (version 0.0.4)."""
        s = self.stats
        with s.lock:
            rounds = int(self.model.t_) if self.model is not None else 0
            table: list[tuple[str, str, str, list[tuple[str, float]]]] = [
                ("requests_total", "counter", "HTTP requests by endpoint and status.",
                 [(f'{{endpoint="{e}",status="{c}"}}', n)
                  for (e, c), n in sorted(s.requests.items())]),
                ("impressions_total", "counter", "Impressions logged.", [("", s.impressions)]),
                ("feedback_total", "counter", "Feedback logged (acknowledged).",
                 [("", s.feedback)]),
                ("feedback_duplicates_total", "counter",
                 "Feedback ids answered again (applied once).", [("", s.duplicates)]),
                ("feedback_rejected_total", "counter", "Feedback refused, by reason.",
                 [(f'{{reason="{r}"}}', n) for r, n in sorted(s.rejected.items())]),
                ("impressions_expired_total", "counter",
                 "Impressions whose time to answer ran out without feedback.",
                 [("", s.expired)]),
                ("clicks_total", "counter", "Clicked labels in the feedback learned.",
                 [("", s.clicks)]),
                ("shown_labels_total", "counter", "Labels shown in the feedback learned.",
                 [("", s.shown)]),
                ("click_through_rate", "gauge", "Clicks per shown label, feedback learned.",
                 [("", s.clicks / s.shown if s.shown else 0.0)]),
                ("estimated_rank_loss", "gauge",
                 "Estimated rank loss of the rankings shown (inverse-propensity ratio, running).",
                 [("", s.loss_sum / s.pairs_sum if s.pairs_sum else 0.0)]),
                ("learn_queue", "gauge", "Feedback committed, not learned yet.",
                 [("", self.committed_seq - self.applied_seq)]),
                ("model_rounds", "gauge", "Examples the model has learned.", [("", rounds)]),
                ("checkpoint_seq", "gauge", "Log sequence of the last checkpoint.",
                 [("", self.checkpoint_seq)]),
                ("checkpoints_total", "counter", "Checkpoints written by this process.",
                 [("", s.checkpoints)]),
                ("pending_impressions", "gauge", "Impressions waiting for feedback.",
                 [("", len(self._pending) if self._started else 0)]),
            ]  # fmt: skip
            lag = [
                *(
                    (f'_bucket{{le="{bound:g}"}}', count)
                    for bound, count in zip(LAG_BUCKETS, s.lag_buckets, strict=True)
                ),
                ('_bucket{le="+Inf"}', s.lag_count),
                ("_sum", s.lag_sum),
                ("_count", s.lag_count),
            ]
        lines: list[str] = []
        for name, kind, text, values in table:
            lines += [f"# HELP olboost_{name} {text}", f"# TYPE olboost_{name} {kind}"]
            lines += [f"olboost_{name}{labels} {value!r}" for labels, value in values]
        lines += [
            "# HELP olboost_feedback_lag_seconds Time from an impression to its feedback.",
            "# TYPE olboost_feedback_lag_seconds histogram",
        ]
        lines += [f"olboost_feedback_lag_seconds{suffix} {value!r}" for suffix, value in lag]
        return "\n".join(lines) + "\n"
