"""``olboost simulate``: users of a running ``olboost serve``, played from a multi-label data set.

Each example of the stream (the train split ``loops`` times, then the test split, as
:func:`olboost.evaluate.train_test` streams them; a data set without a split once) is one user:
``POST /rank`` with its features, then ``POST /feedback`` clicking exactly its relevant labels
among those shown (a top-k booster's service), or all of them (a full-feedback one: Ada.OLMR,
OnlineBMR), possibly after a delay or never (``drop``). ``concurrency`` users are served at
once, each on its own keep-alive connection. The report gives the throughput (rank + feedback
pairs per second of the whole run, which with a ``delay`` includes the wait for the last
answers: a measure of the service's speed only without one), the latency percentiles of both
endpoints and the rank loss of each user's ranking, the number
:func:`olboost.evaluate.train_test` records for it (the randomised ranking shown by a top-k
booster, the model's scores of a full-feedback one, ties counting half): its running average
over the stream (the learning curve) and its mean over the test split.

With ``concurrency=1``, ``key=0`` and ``wait=True`` (each feedback answered once it is learned),
the service learns exactly what :func:`~olboost.evaluate.train_test` learns in process, draw for
draw: the same test rank loss, bit for bit. With more users the draws and the order of learning
differ (the service's keys, feedback still in flight), and so does the loss, by noise.

The HTTP client is a minimal HTTP/1.1 keep-alive client on asyncio streams: on a 2-core machine
the client shares the cores with the server, and a general-purpose client spends several times
the CPU per request.
"""

from __future__ import annotations

import asyncio
import json
import math
import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from olboost._random import MAX_KEY

__all__ = ["SETTINGS", "HTTPError", "SimulationReport", "check_settings", "simulate"]

#: Seconds to wait for one answer before counting the request as failed.
TIMEOUT = 30.0


class HTTPError(Exception):
    """An answer other than 2xx, or a broken connection."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status = status
        self.message = message


class _Connection:
    """One keep-alive HTTP/1.1 connection, one request at a time (JSON in, JSON out)."""

    def __init__(self, host: str, port: int, token: str | None):
        self.host, self.port = host, port
        # an IPv6 address in brackets (RFC 3986): the service read ::1:8000 as no host name
        self.authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.authority}\r\n{self.auth}"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode()
        for attempt in (0, 1):
            fresh = self.writer is None
            try:
                if fresh:
                    await self._open()
                self.writer.write(head + data)
                return await asyncio.wait_for(self._response(), TIMEOUT)
            except (ConnectionError, asyncio.IncompleteReadError) as err:
                self.close()
                # a kept-alive connection the server closed meanwhile: once more on a new one
                if fresh or attempt:
                    raise HTTPError(0, f"connection failed: {err!r}") from None
        raise AssertionError("unreachable")

    async def _response(self) -> Any:
        status_line = await self.reader.readuntil(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        length, close = 0, False
        while True:
            line = await self.reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            name, _, value = line.decode("latin-1").partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.strip().lower() == "close":
                close = True
        payload = await self.reader.readexactly(length)
        if close:
            self.close()
        answer = json.loads(payload) if payload else None
        if not 200 <= status < 300:
            message = answer.get("error", payload.decode()) if isinstance(answer, dict) else payload
            raise HTTPError(status, str(message))
        return answer


@dataclass
class SimulationReport:
    """What :func:`simulate` measured (see :meth:`record` for the JSON form)."""

    n_examples: int
    n_train_examples: int
    seconds: float
    pairs: int
    rank_latencies: list[float]
    feedback_latencies: list[float]
    losses: np.ndarray
    dropped: int
    errors: dict[str, int] = field(default_factory=dict)
    concurrency: int = 1

    @property
    def throughput(self) -> float:
        """Rank + feedback pairs answered per second of :attr:`seconds`, the whole run: with a
        ``delay``, the last users' answers come up to ``2 delay`` after their rankings, and the
        run waits for them (the service's speed is measured without a delay, as
        ``benchmarks/serve.py`` does)."""
        return self.pairs / self.seconds if self.seconds > 0 else math.nan

    @property
    def test_rank_loss(self) -> float:
        """Mean rank loss over the test split (the whole stream without a split) of the
        rankings shown by a top-k booster, of the scores of a full-feedback model (as
        train_test records them), examples without a relevant/irrelevant pair counting 0 (the
        papers')."""
        test = self.losses[self.n_train_examples :]
        test = test[~np.isnan(test)]  # examples not reached (duration) or failed
        return float(test.mean()) if test.size else math.nan

    def running_losses(self) -> np.ndarray:
        """Running average of those rank losses, in stream order (a failed rank left out)."""
        ok = ~np.isnan(self.losses)
        sums = np.cumsum(np.where(ok, self.losses, 0.0))
        counts = np.cumsum(ok)
        return np.divide(sums, counts, out=np.full(sums.shape, np.nan), where=counts > 0)

    def record(self, points: int = 50) -> dict[str, Any]:
        """A JSON-ready summary: throughput, latency percentiles (ms), rank losses and the
        running-average curve at ``points`` positions of the stream."""

        def pct(values: list[float]) -> dict[str, float | None]:
            if not values:
                return {"p50": None, "p90": None, "p99": None, "max": None}
            a = np.asarray(values) * 1e3
            return {
                "p50": float(np.percentile(a, 50)),
                "p90": float(np.percentile(a, 90)),
                "p99": float(np.percentile(a, 99)),
                "max": float(a.max()),
            }

        curve = self.running_losses()
        at = np.unique(np.linspace(1, len(curve), min(points, len(curve))).round().astype(int))
        return {
            "examples": self.n_examples,
            "train_examples": self.n_train_examples,
            "concurrency": self.concurrency,
            "seconds": self.seconds,
            "pairs": self.pairs,
            "pairs_per_second": self.throughput,
            "rank_latency_ms": pct(self.rank_latencies),
            "feedback_latency_ms": pct(self.feedback_latencies),
            "dropped": self.dropped,
            "errors": dict(self.errors),
            "test_rank_loss": self.test_rank_loss,
            "curve": {
                "example": at.tolist(),
                "running_rank_loss": [None if math.isnan(v) else float(v) for v in curve[at - 1]],
            },
        }


def _stream(data: Any, loops: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Rows of the stream (train ``loops`` times, then test) and the number of train rows."""
    X, Y = np.asarray(data.X, dtype=np.float64), np.asarray(data.Y, dtype=bool)
    n_train = data.n_train
    if n_train is None:
        if loops != 1:
            raise ValueError(f"loops={loops} needs a data set with a train/test split")
        return X, Y, 0
    order = np.concatenate([np.tile(np.arange(n_train), loops), np.arange(n_train, len(X))])
    return X[order], Y[order], n_train * loops


def _uniform(seed: int, index: int, stream: int) -> float:
    """A uniform number of (seed, example, purpose): drops and delays do not depend on timing."""
    return float(np.random.default_rng([seed, index, stream]).random())


def _answer_after(seed: int, index: int, drop: float, delay: float) -> float | None:
    """When user ``index`` answers, in seconds after the ranking (uniform on ``[0, 2 delay]``),
    or ``None`` if the user never answers (probability ``drop``): two streams of the seed, so
    that a kept user's delay does not depend on the draw that kept it."""
    if drop > 0 and _uniform(seed, index, 0) < drop:
        return None
    return delay * 2.0 * _uniform(seed, index, 1) if delay > 0 else 0.0


async def _run(
    url: str,
    X: np.ndarray,
    Y: np.ndarray,
    labels: Sequence[str],
    *,
    topk: bool,
    token: str | None,
    concurrency: int,
    delay: float,
    drop: float,
    seed: int,
    key: int | None,
    wait: bool,
    duration: float | None = None,
) -> tuple[float, list[float], list[float], np.ndarray, int, dict[str, int]]:
    host, port = service_address(url)
    n, m = X.shape[0], len(labels)
    losses = np.full(n, np.nan)
    rank_lat: list[float] = []
    fb_lat: list[float] = []
    errors: dict[str, int] = {}
    dropped = 0
    next_row = 0
    pool: asyncio.Queue[_Connection] = asyncio.Queue()
    for _ in range(2 * concurrency):
        pool.put_nowait(_Connection(host, port, token))
    pending: set[asyncio.Task] = set()
    from olboost.metrics import rank_loss

    def failed(where: str, err: HTTPError) -> None:
        name = f"{where} {err.status or 'connection'}"
        errors[name] = errors.get(name, 0) + 1

    async def call(method: str, path: str, body: Any, latencies: list[float]) -> Any:
        conn = await pool.get()
        try:
            t0 = time.perf_counter()
            answer = await conn.request(method, path, body)
            latencies.append(time.perf_counter() - t0)
            return answer
        finally:
            pool.put_nowait(conn)

    async def send_feedback(i: int, impression: str, clicked: list[str], after: float) -> None:
        if after > 0:
            await asyncio.sleep(after)
        body = {"impression": impression, "clicked": clicked}
        if wait:
            body["wait"] = True
        try:
            await call("POST", "/feedback", body, fb_lat)
        except HTTPError as err:
            failed("feedback", err)

    async def user() -> None:
        nonlocal next_row, dropped
        while next_row < n and (deadline is None or time.perf_counter() < deadline):
            i = next_row
            next_row += 1
            # a full-feedback model is judged by its scores, as train_test judges it
            body: dict[str, Any] = {"features": X[i].tolist(), "ranking": topk, "scores": not topk}
            if key is not None:
                body["key"] = key
            try:
                shown = await call("POST", "/rank", body, rank_lat)
            except HTTPError as err:
                failed("rank", err)
                continue
            if topk:
                position = {label: p for p, label in enumerate(shown["ranking"])}
                s = np.array([m - position[label] for label in labels], dtype=float)
            else:
                s = np.array([shown["scores"][label] for label in labels], dtype=float)
            losses[i] = rank_loss(s, Y[i], empty="paper")
            relevant = [labels[j] for j in np.flatnonzero(Y[i]).tolist()]
            # a full-feedback service learns the clicks as the whole relevant set
            clicked = relevant
            if topk:
                clicked = [label for label in shown["labels"] if label in relevant]
            after = _answer_after(seed, i, drop, delay)
            if after is None:
                dropped += 1
                continue
            if after > 0:  # the user answers later; this slot serves the next user meanwhile
                task = asyncio.create_task(send_feedback(i, shown["impression"], clicked, after))
                pending.add(task)
                task.add_done_callback(pending.discard)
            else:
                await send_feedback(i, shown["impression"], clicked, 0.0)

    t0 = time.perf_counter()
    deadline = None if duration is None else t0 + duration
    await asyncio.gather(*(user() for _ in range(concurrency)))
    if pending:
        await asyncio.gather(*pending)
    seconds = time.perf_counter() - t0
    while not pool.empty():
        pool.get_nowait().close()
    return seconds, rank_lat, fb_lat, losses, dropped, errors


def service_address(url: str) -> tuple[str, int]:
    """``(host, port)`` of a service URL ``http://HOST[:PORT]`` (port 80 by default); a
    ``ValueError`` for anything else. ``localhost:8000`` read as a URL has no host, and its
    port went unread: the requests went to port 80 of this machine."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (
        parts.scheme != "http" or not parts.hostname or port == -1
        or parts.path not in ("", "/") or parts.query or parts.fragment
    ):  # fmt: skip
        raise ValueError(
            f"the service's URL must be http://HOST:PORT, got {url!r} (plain HTTP, no path)"
        )
    return parts.hostname, 80 if port is None else port


async def _get(url: str, path: str, token: str | None = None) -> Any:
    conn = _Connection(*service_address(url), token)
    try:
        return await conn.request("GET", path)
    finally:
        conn.close()


#: The numeric settings of :func:`simulate` (and options of ``olboost simulate``) that
#: :func:`check_settings` checks; ``None`` (unset) is allowed for those that default to it.
SETTINGS = ("loops", "concurrency", "delay", "drop", "seed", "key", "limit", "duration")
_OPTIONAL = ("key", "limit", "duration")


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


# Why each bound: out of range, a run did not fail but reported something else. A negative
# limit cut the stream from its end (X[:-3]) and the test loss was that of fewer examples; a limit
# or duration of 0 (or a negative or NaN duration) sent nobody and reported a loss of NaN with
# exit 0; a key outside the service's [0, 2^64) made every /rank a 422; a negative seed failed
# inside the users' tasks, after the first users had been sent.
_RULES: dict[str, tuple[Any, str]] = {
    "loops": (lambda v: _is_integer(v) and v >= 1, "an integer >= 1"),
    "concurrency": (lambda v: _is_integer(v) and v >= 1, "an integer >= 1"),
    "delay": (lambda v: _is_number(v) and 0 <= v < math.inf, "a number of seconds >= 0"),
    "drop": (lambda v: _is_number(v) and 0 <= v <= 1, "a probability in [0, 1]"),
    "seed": (lambda v: _is_integer(v) and v >= 0, "an integer >= 0"),
    "key": (lambda v: _is_integer(v) and 0 <= v <= MAX_KEY, "an integer in [0, 2^64)"),
    "limit": (lambda v: _is_integer(v) and v >= 1, "an integer >= 1 (users)"),
    "duration": (lambda v: _is_number(v) and v > 0, "a number of seconds > 0"),
}


def check_settings(settings: Mapping[str, Any], prefix: str = "") -> None:
    """Raise a ``ValueError`` naming the first of ``settings`` (:data:`SETTINGS`, by name) out
    of range, as ``prefix + name`` (``"--"``: the command's option); changes and sends nothing.
    """
    for name, value in settings.items():
        if value is None and name in _OPTIONAL:
            continue
        valid, what = _RULES[name]
        if not valid(value):
            raise ValueError(f"{prefix}{name} must be {what}, got {value!r}")


def simulate(
    url: str,
    data: Any,
    *,
    token: str | None = None,
    k: int | None = None,
    loops: int = 1,
    concurrency: int = 8,
    delay: float = 0.0,
    drop: float = 0.0,
    seed: int = 1,
    key: int | None = None,
    wait: bool = False,
    limit: int | None = None,
    duration: float | None = None,
) -> SimulationReport:
    """Play the users of ``data`` (a :class:`~olboost.datasets.MultiLabelDataset`) against the
    service at ``url``.

    Parameters
    ----------
    url
        The service, ``http://HOST:PORT``.
    data
        The data set; its labels and width must be the service's, and its feature names too
        where the service names its features (the rows are sent in the service's order).
    token
        The bearer token of ``/feedback``.
    k
        If given, must equal the number of labels the service shows.
    loops
        Passes over the train split before the test split.
    concurrency
        Users served at once.
    delay
        Mean seconds a user takes to answer (uniform on ``[0, 2 delay]``); 0 answers at once.
    drop
        Probability that a user never answers.
    seed
        Seed of the drops and delays (per example, so they do not depend on timing).
    key
        Draw key sent with every ranking, in ``[0, 2^64)`` (``None``: the service's, its
        impression number).
    wait
        Ask for each feedback to be answered once learned.
    limit
        Stop after this many examples of the stream, at least 1 (``None``: all).
    duration
        Send no new user after this many seconds, more than 0 (``None``: no limit); the losses
        of the examples not reached are NaN.

    Raises
    ------
    ValueError
        For a setting out of range (:func:`check_settings`, before the service is contacted),
        or data that do not fit the service.
    """
    check_settings(
        {"loops": loops, "concurrency": concurrency, "delay": delay, "drop": drop, "seed": seed,
         "key": key, "limit": limit, "duration": duration}
    )  # fmt: skip
    service_address(url)
    # NumPy integers pass the checks; the request bodies are JSON, which takes Python's only
    loops, concurrency, seed = int(loops), int(concurrency), int(seed)
    key = None if key is None else int(key)
    limit = None if limit is None else int(limit)
    schema = asyncio.run(_get(url, "/schema", token))  # behind it with --protect-rank
    labels = list(schema["labels"])
    if set(labels) != set(data.label_names):
        raise ValueError(
            f"the service ranks labels {labels[:5]}..., the data set has "
            f"{list(data.label_names)[:5]}..."
        )
    if schema["n_features"] != data.X.shape[1]:
        raise ValueError(
            f"the service takes {schema['n_features']} features, the data set has {data.X.shape[1]}"
        )
    served = schema.get("feature_names")
    own = list(data.feature_names)
    if served is not None and set(served) != set(own):
        raise ValueError(
            f"the service's features are {list(served)[:5]}..., the data set's are {own[:5]}..."
        )
    if k is not None and k != schema["k"]:
        raise ValueError(f"--k {k}: the service shows k={schema['k']} labels")
    X, Y, n_train = _stream(data, loops)
    if limit is not None:
        X, Y = X[:limit], Y[:limit]
        n_train = min(n_train, limit)
    column = {label: j for j, label in enumerate(data.label_names)}
    Y = Y[:, [column[label] for label in labels]]
    if served is not None and list(served) != own:
        # the rows go as arrays, read by position: in the service's order of its named features
        column = {name: j for j, name in enumerate(own)}
        X = X[:, [column[name] for name in served]]
    seconds, rank_lat, fb_lat, losses, dropped, errors = asyncio.run(
        _run(
            url, X, Y, labels, topk=str(schema["algorithm"]).startswith("topk-"), token=token,
            concurrency=concurrency, delay=delay, drop=drop, seed=seed, key=key, wait=wait,
            duration=duration,
        )
    )  # fmt: skip
    return SimulationReport(
        n_examples=int(np.count_nonzero(~np.isnan(losses))),
        n_train_examples=n_train,
        seconds=seconds,
        pairs=len(fb_lat),
        rank_latencies=rank_lat,
        feedback_latencies=fb_lat,
        losses=losses,
        dropped=dropped,
        errors=errors,
        concurrency=concurrency,
    )
