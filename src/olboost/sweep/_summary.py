"""A sweep's summary: the records of each cell (a task but its seed) reduced to the mean and
standard deviation over the seeds, as text lines and as CSV."""

from __future__ import annotations

import csv
import io
import math
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from olboost.metrics import sample_sd
from olboost.sweep._spec import Task, _jsonable

#: Record fields that measure time: the only ones that differ between two runs of one task.
TIMING_KEYS = ("seconds", "seconds_train", "seconds_test", "compile_seconds")


def numbers(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record without its timings and its task: what two runs of one task must agree on."""
    return {k: v for k, v in record.items() if k not in TIMING_KEYS and k != "sweep_task"}


def _metric(record: Mapping[str, Any]) -> str:
    return "rank_loss" if "rank_loss" in record else "accuracy"


def summarize(
    tasks: Sequence[Task], records: Sequence[Mapping[str, Any] | None]
) -> list[dict[str, Any]]:
    """One row per cell (the tasks but their seeds), in the tasks' order: the test rank loss
    (or accuracy) over the seeds that finished, mean and sample standard deviation (empty with
    one seed), and the mean seconds per run.

    >>> t = [Task("ada-olmr", "emotions", s, (("learners", 10),)) for s in (1, 2)]
    >>> rows = summarize(t, [{"rank_loss": 0.25, "seconds": 1.0}, {"rank_loss": 0.5, "seconds": 3.0}])
    >>> rows[0]["mean"], round(rows[0]["sd"], 4), rows[0]["seeds"], rows[0]["learners"]
    (0.375, 0.1768, '1 2', 10)
    """  # noqa: E501
    cells: dict[tuple[Any, ...], list[tuple[Task, Mapping[str, Any]]]] = {}
    for task, record in zip(tasks, records, strict=True):
        cells.setdefault(task.cell, [])
        if record is not None:
            cells[task.cell].append((task, record))
    rows = []
    for (algorithm, dataset, params), done in cells.items():
        row: dict[str, Any] = {"algorithm": algorithm, "dataset": dataset}
        row.update({k: _jsonable(v) for k, v in params})
        values = [r[_metric(r)] for _, r in done]
        row.update(
            metric=_metric(done[0][1]) if done else "",
            mean=sum(values) / len(values) if values else math.nan,
            sd=sample_sd(values),
            n=len(values),
            seeds=" ".join(str(t.seed) for t, _ in done),
            seconds_mean=(sum(r["seconds"] for _, r in done) / len(done)) if done else math.nan,
        )
        rows.append(row)
    return rows


def _params_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    fixed = {"algorithm", "dataset", "metric", "mean", "sd", "n", "seeds", "seconds_mean"}
    return sorted({k for row in rows for k in row} - fixed)


def format_summary(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The summary as text lines: a column per cell key, ``mean ± sd``, seeds and s/run."""
    params = _params_of(rows)

    def fields(row: Mapping[str, Any]) -> list[str]:
        mean = "-" if not row["n"] else f"{row['mean']:.4f}"
        sd = "" if row["sd"] is None else f" ± {row['sd']:.4f}"
        seconds = "-" if not row["n"] else f"{row['seconds_mean']:.2f}"
        return [
            row["algorithm"], row["dataset"], *(_fmt(row.get(p)) for p in params),
            row["metric"], mean + sd, str(row["n"]), seconds,
        ]  # fmt: skip

    head = ["algorithm", "dataset", *params, "metric", "mean ± sd", "seeds", "s/run"]
    table = [head, *map(fields, rows)]
    widths = [max(_columns(r[c]) for r in table) for c in range(len(head))]
    return [
        "  ".join(v + " " * (w - _columns(v)) for v, w in zip(r, widths, strict=True)).rstrip()
        for r in table
    ]


def _columns(text: str) -> int:
    """The terminal columns ``text`` takes: two for a wide East Asian character, none for a
    combining mark (``len`` misaligned every column after a data set named in Chinese)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def write_summary_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> None:
    """The summary as CSV: algorithm, dataset, one column per option, metric, mean, sd, n, seeds,
    seconds_mean (empty where a cell has no value)."""
    columns = ["algorithm", "dataset", *_params_of(rows), "metric", "mean", "sd", "n", "seeds",
               "seconds_mean"]  # fmt: skip
    from olboost._atomic import atomic_write

    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _fmt_csv(row.get(c)) for c in columns})
    atomic_write(path, text.getvalue().encode())  # as every other output: whole, or not at all


def _fmt_csv(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return " ".join(map(str, value)) if isinstance(value, list) else value
