"""The service's counters (:class:`Stats`): what ``/metrics``, ``/health`` and the status page
report, and the estimate of the rank loss of the model's rankings that they follow."""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from olboost.serve.store import ImpressionRecord, Store

#: Seconds between two points of the status page's series, and points kept (one hour).
SERIES_STEP = 1.0
SERIES_POINTS = 3600

#: Upper bounds (seconds) of the feedback lag histogram of ``/metrics``.
LAG_BUCKETS = (0.01, 0.1, 1.0, 10.0, 60.0, 600.0, 3600.0)

#: The counters and gauges of ``/metrics``: per metric, its name, type, help text and values
#: (each with its labels).
MetricsTable = list[tuple[str, str, str, list[tuple[str, float]]]]


#: The reason label of a refused feedback (``feedback_rejected_total``), by HTTP status.
REJECT_REASONS = {
    400: "malformed",
    404: "unknown",
    409: "conflict",
    410: "expired",
    413: "too_large",
    415: "media_type",
    422: "invalid",
    503: "unavailable",
}


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
    pruned: int = 0  # impressions deleted from the log (--prune-log)
    clicks: int = 0
    shown: int = 0
    applied: int = 0
    loss_sum: float = 0.0  # sum of the estimated misordered pairs (inverse-propensity weighted)
    pairs_sum: float = 0.0  # sum of the estimated relevant/irrelevant pairs, the same way
    lag_sum: float = 0.0
    lag_count: int = 0
    lag_buckets: list[int] = field(default_factory=lambda: [0] * len(LAG_BUCKETS))
    checkpoints: int = 0
    checkpoint_failures: int = 0
    #: Why the last checkpoint failed, until one is written again (``None``: it was written).
    checkpoint_error: str | None = None
    #: Log writes (transactions) that failed for a lock another program held or a full disk,
    #: and why the last one failed, until one succeeds (``None``: it did).
    log_write_failures: int = 0
    log_error: str | None = None
    series: deque = field(default_factory=lambda: deque(maxlen=SERIES_POINTS))

    def checkpointed(self, error: str | None = None) -> None:
        """Count a checkpoint written, or one that failed for ``error`` (shown by /health until
        one is written again: a failing disk was seen only in the log, the replay a restart
        needs growing unseen)."""
        with self.lock:
            if error is None:
                self.checkpoints += 1
            else:
                self.checkpoint_failures += 1
            self.checkpoint_error = error

    def request(self, endpoint: str, status: int) -> None:
        with self.lock:
            key = (endpoint, status)
            self.requests[key] = self.requests.get(key, 0) + 1

    def reject(self, status: int) -> None:
        """Count one feedback refused with HTTP ``status`` (its reason: :data:`REJECT_REASONS`)."""
        reason = REJECT_REASONS.get(status, "invalid")
        with self.lock:
            self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def count_log(self, store: Store, since: tuple[int, dict[str, Any]] | None = None) -> None:
        """Counters that describe the log rather than this process: from the log itself, or
        from ``since``, ``(seq, counts)``, the :meth:`log_counts` a checkpoint kept of the
        feedback up to ``seq``, and the feedback after it. Added in ``seq`` order either way,
        so the sums are the same bits; from a checkpoint, a restart reads the feedback it
        replays only (every feedback of the log took 22 us each, a day of log minutes)."""
        s = self
        pruned = store.pruned()  # what --prune-log deleted, counted in the log
        s.impressions = store.count("impressions") + pruned["impressions"]
        s.feedback = store.count("feedback") + pruned["feedback"]
        s.pruned = pruned["impressions"]
        s.applied = s.feedback
        seq = 0
        if since is not None:
            seq, counts = since
            s.clicks, s.shown = int(counts["clicks"]), int(counts["shown"])
            s.loss_sum, s.pairs_sum = float(counts["loss_sum"]), float(counts["pairs_sum"])
        for fb in store.feedback_after(seq):
            s.clicks += shown_clicks(fb.impression, fb.clicked)
            s.shown += fb.impression.shown.shape[0]
            misordered, pairs = estimated_loss(fb.impression, fb.clicked)
            s.loss_sum += misordered
            s.pairs_sum += pairs

    def log_counts(self) -> dict[str, Any]:
        """The counters of the feedback learned so far that :meth:`count_log` takes back from a
        checkpoint written now."""
        with self.lock:
            return {
                "clicks": self.clicks, "shown": self.shown, "loss_sum": self.loss_sum,
                "pairs_sum": self.pairs_sum,
            }  # fmt: skip

    def learned(self, record: ImpressionRecord, clicked: np.ndarray, lag: float) -> None:
        """Count one feedback learned: its clicks, shown labels, estimated loss and lag (seconds
        from its impression)."""
        misordered, pairs = estimated_loss(record, clicked)
        s = self
        with s.lock:
            s.applied += 1
            s.feedback += 1
            s.clicks += shown_clicks(record, clicked)
            s.shown += record.shown.shape[0]
            s.loss_sum += misordered
            s.pairs_sum += pairs
            s.lag_sum += lag
            s.lag_count += 1
            for b, bound in enumerate(LAG_BUCKETS):
                if lag <= bound:
                    s.lag_buckets[b] += 1

    def point(self, now: float) -> None:
        """Add a point at time ``now`` to the status page's series."""
        s = self
        with s.lock:
            s.series.append((now, s.applied, s.loss_sum, s.pairs_sum, s.clicks, s.shown))

    def status_series(self, clock: Callable[[], float]) -> dict[str, Any]:
        """The status page's data: per point, the time, feedback learned, the running estimate
        of the rank loss of the model's rankings (:func:`estimated_loss`) and the click-through
        rate since the previous point; the last point is now (``clock()``)."""
        s = self
        with s.lock:
            points = list(s.series)
            points.append((clock(), s.applied, s.loss_sum, s.pairs_sum, s.clicks, s.shown))
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


def shown_clicks(record: ImpressionRecord, clicked: np.ndarray) -> int:
    """The clicks of one feedback on the labels its impression showed: a full-feedback mask
    covers every label (a click-through rate of clicks on any label per shown label went above
    1), a top-k one the shown labels only."""
    return int(clicked[record.shown].sum() if record.probs is None else clicked.sum())


def estimated_loss(record: ImpressionRecord, clicked: np.ndarray) -> tuple[float, float]:
    """``(misordered, pairs)`` of one feedback: the relevant/irrelevant pairs among the
    labels shown, and those the model's own scores put in the wrong order (the irrelevant
    label above; a tie counts one half), each weighted by the inverse of the probability that
    the draw showed both (eq. 1 of Raman et al. 2020; 1 with full feedback). Summed over
    feedback, their ratio estimates the pair-weighted rank loss of the model's rankings, in
    [0, 1]: of the whole ranking under top-k feedback (its pairs are drawn across it), but
    within the ``k`` labels shown under full feedback, where only the shown labels' scores are
    logged, so that a relevant label ranked below ``k`` counts no pair (a service's log keeps
    ``k`` scores per impression, not one per label).

    The order compared is the model's (``record.own``), not the display's: a pair is seen with
    a probability that depends on the model's ranking, and when the draw explored its display
    order is random, so weighting display orders estimates nothing (a model burying every
    relevant label gave 0.5 instead of 1). An impression logged without the model's scores
    (a log of schema version 1) counts no pair."""
    if record.own is None:
        return 0.0, 0.0
    k = record.shown.shape[0]
    if record.probs is None:
        rel, probs = clicked[record.shown], np.ones((k, k))
    else:
        rel, probs = clicked, record.probs
    own = record.own
    misordered = pairs = 0.0
    for i in np.flatnonzero(rel).tolist():
        for j in np.flatnonzero(~rel).tolist():
            weight = 1.0 / float(probs[i, j])
            pairs += weight
            if own[j] > own[i]:
                misordered += weight
            elif own[j] == own[i]:
                misordered += 0.5 * weight
    return misordered, pairs


def metrics_table(
    s: Stats,
    rounds: int,
    learn_queue: int,
    checkpoint_seq: int,
    pending: int,
    stopped: bool = False,
) -> tuple[MetricsTable, list[tuple[str, float]]]:
    """The values of ``/metrics`` (see :func:`exposition`): the table of counters and gauges,
    the service's own given (model rounds, feedback committed and not learned, the last
    checkpoint's ``seq``, pending impressions, whether it has stopped on an error), and the lag
    histogram. Call it holding ``s.lock``.

    The counters of the log (impressions, feedback, clicks, shown labels, expired and pruned
    impressions)
    are counted from the log at a start, and so go on across restarts; those of requests
    (requests, duplicates, refusals, checkpoints, the lag histogram) count this process's
    only, and start at 0 with it. Each one's help text says which."""
    table: MetricsTable = [
        ("requests_total", "counter",
         "HTTP requests by endpoint and status, served by this process.",
         [(f'{{endpoint="{e}",status="{c}"}}', n)
          for (e, c), n in sorted(s.requests.items())]),
        ("impressions_total", "counter", "Impressions logged (the log's, across restarts).",
         [("", s.impressions)]),
        ("feedback_total", "counter",
         "Feedback learned (an acknowledged one counts once the learner has applied it; the "
         "log's, across restarts).",
         [("", s.feedback)]),
        ("feedback_duplicates_total", "counter",
         "Feedback ids answered again (applied once), by this process.", [("", s.duplicates)]),
        ("feedback_rejected_total", "counter", "Feedback refused by this process, by reason.",
         [(f'{{reason="{r}"}}', n) for r, n in sorted(s.rejected.items())]),
        ("impressions_expired_total", "counter",
         "Impressions whose time to answer ran out without feedback (the log's, across "
         "restarts).",
         [("", s.expired)]),
        ("log_pruned_impressions_total", "counter",
         "Impressions deleted from the log with their feedback, once past their deadline and "
         "learned by a checkpoint (--prune-log; the log's, across restarts).",
         [("", s.pruned)]),
        ("clicks_total", "counter",
         "Clicked labels among those shown, feedback learned (the log's, across restarts).",
         [("", s.clicks)]),
        ("shown_labels_total", "counter",
         "Labels shown in the feedback learned (the log's, across restarts).",
         [("", s.shown)]),
        ("click_through_rate", "gauge", "Clicks per shown label, feedback learned.",
         # NaN until a label is shown, as the status page's null: 0.0 read as "nobody clicks"
         [("", s.clicks / s.shown if s.shown else float("nan"))]),
        ("estimated_rank_loss", "gauge",
         "Estimated rank loss of the model's rankings (inverse-propensity ratio, running; "
         "with full feedback, among the labels shown).",
         # NaN until a pair is counted, as the status page's null: 0.0 read as a perfect model
         [("", s.loss_sum / s.pairs_sum if s.pairs_sum else float("nan"))]),
        ("learn_queue", "gauge", "Feedback committed, not learned yet.",
         [("", learn_queue)]),
        ("model_rounds", "gauge", "Examples the model has learned.", [("", rounds)]),
        ("checkpoint_seq", "gauge", "Log sequence of the last checkpoint.",
         [("", checkpoint_seq)]),
        ("checkpoints_total", "counter", "Checkpoints written by this process.",
         [("", s.checkpoints)]),
        ("checkpoint_failures_total", "counter",
         "Checkpoints that failed in this process (each retried at the next; /health says why "
         "the last one failed until one is written).",
         [("", s.checkpoint_failures)]),
        ("log_write_failures_total", "counter",
         "Log writes that failed in this process for a lock another program held or a full "
         "disk (their requests refused with 503 and Retry-After; the service goes on, and "
         "/health says why until a write succeeds).",
         [("", s.log_write_failures)]),
        ("pending_impressions", "gauge", "Impressions waiting for feedback.",
         [("", pending)]),
        ("stopped", "gauge",
         "1 once the log writer or the learner has stopped on an error (/health says which): "
         "the service refuses every request until it is restarted; else 0.",
         [("", int(stopped))]),
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
    return table, lag


def exposition(table: MetricsTable, lag: list[tuple[str, float]]) -> str:
    """``/metrics`` in Prometheus's text exposition format (version 0.0.4), of the values of
    :func:`metrics_table`."""
    lines: list[str] = []
    for name, kind, text, values in table:
        lines += [f"# HELP olboost_{name} {text}", f"# TYPE olboost_{name} {kind}"]
        lines += [f"olboost_{name}{labels} {_number(value)}" for labels, value in values]
    lines += [
        "# HELP olboost_feedback_lag_seconds Time from an impression to its feedback, of the "
        "feedback this process acknowledged.",
        "# TYPE olboost_feedback_lag_seconds histogram",
    ]
    lines += [f"olboost_feedback_lag_seconds{suffix} {_number(value)}" for suffix, value in lag]
    return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    """A sample value as the exposition format writes it (Go's float syntax): an integer
    as one, a float by its shortest repr, infinities and NaN by name. Not ``repr``: a NumPy
    scalar's is ``np.float64(0.5)``, which a scraper refuses with the whole page."""
    if isinstance(value, int | np.integer):
        return str(int(value))
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)
