"""``olboost sweep SPEC.toml``: the command and its parser."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from olboost.sweep._client import _require_dask, run_sweep
from olboost.sweep._spec import load_spec
from olboost.sweep._summary import format_summary, summarize, write_summary_csv


def cmd_sweep(args: argparse.Namespace) -> int:
    """``olboost sweep SPEC.toml``."""
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    tasks = load_spec(args.spec)
    results = Path(args.results or f"{Path(args.spec).stem}-results")
    if results.exists() and not results.is_dir():
        raise ValueError(f"--results {results}: not a directory")
    _require_dask()
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    t0 = time.perf_counter()
    outcome = run_sweep(
        tasks, results, workers=args.workers, scheduler=args.scheduler, progress=progress
    )
    rows = summarize(tasks, outcome.records)
    print()
    for line in format_summary(rows):
        print(line)
    summary = results / "summary.csv"
    write_summary_csv(rows, summary)
    if outcome.ran or outcome.failures:
        print(
            f"\n{outcome.ran} tasks run in {outcome.seconds:.1f} s on {outcome.workers} "
            f"worker{'' if outcome.workers == 1 else 's'} "
            f"({time.perf_counter() - t0:.1f} s in all with the cluster's start and the "
            f"warm-ups), {outcome.skipped} finished before; summary: {summary}"
        )
    else:
        print(f"\nsummary: {summary}")
    for task_id, error in outcome.failures.items():
        print(f"olboost sweep: task {task_id} failed: {error}", file=sys.stderr)
    return 1 if outcome.failures else 0


def add_parsers(sub: Any) -> None:
    """Add ``sweep`` to the ``olboost`` subcommands."""
    from olboost.cli import HelpFormatter

    p = sub.add_parser(
        "sweep",
        help="run a grid of olboost run tasks (algorithms x data sets x options x seeds) on Dask",
        description="Run every task of a TOML spec (algorithms x data sets x parameters x seeds; "
        "see examples/sweep.toml) on a Dask cluster, each record to the results directory as "
        "it finishes (a rerun skips the finished ones), then print and write the summary (mean "
        "± sd over the seeds per cell). Needs pip install 'olboost[dask]'.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("spec", help="TOML spec of the grid")
    p.add_argument(
        "--results", help="results directory (default: <spec name>-results in this directory)"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        help="processes of the local cluster, one thread each (default: one per core)",
    )
    where.add_argument(
        "--scheduler", help="address of an existing Dask scheduler, e.g. tcp://host:8786"
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar of the tasks on stderr (default: when stderr is a terminal)",
    )
    p.set_defaults(func=cmd_sweep)
