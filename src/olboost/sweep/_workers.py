"""What a sweep runs on the Dask workers: one task (:func:`run_task`) and the warm-up that compiles
the kernels, or loads them from Numba's cache, before the tasks (:func:`warm_worker`)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from olboost.sweep._spec import parse_run_args

#: Rows of each split a worker's warm-up runs per kind of task.
WARM_UP_ROWS = 40

_DATA: dict[tuple[Any, ...], Any] = {}


def _data(args: argparse.Namespace) -> Any:
    """The data set of a task, as ``olboost run`` loads it (kept per worker process)."""
    from olboost.cli._algorithms import ALGORITHMS
    from olboost.cli._run import _load

    key = (ALGORITHMS[args.algorithm].task, args.dataset, args.labels, args.test)
    if key not in _DATA:
        _DATA[key] = _load(args)
    return _DATA[key]


def run_task(argv: Sequence[str]) -> dict[str, Any]:
    """Run one task (``olboost run ARGV``, through :func:`olboost.cli.run_one`) and return its
    record, as ``olboost run --output`` writes it. Runs on a worker."""
    from olboost.cli._run import add_missing_values, run_one

    args = parse_run_args(argv)
    data = _data(args)
    record = run_one(args, data)
    add_missing_values(record, data)
    return record


def _head(data: Any, rows: int = WARM_UP_ROWS) -> Any:
    """A few rows of ``data``, of the same kind, types and split (train rows, then test rows)."""
    if hasattr(data, "class_names"):  # multiclass
        return data.head(2 * rows)
    if data.n_train is None:
        return replace(data, X=data.X[: 2 * rows], Y=data.Y[: 2 * rows])
    lo, hi = max(0, data.n_train - rows), min(data.n_samples, data.n_train + rows)
    X = data.X[lo:hi, :] if data.is_sparse else data.X[lo:hi]
    return replace(data, X=X, Y=data.Y[lo:hi], n_train=data.n_train - lo)


def warm_worker(argvs: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Run each task of ``argvs`` on a few rows of its data (compiling its kernels, or loading them
    from Numba's cache); return the seconds it took, how many functions Numba compiled (0: all
    loaded from its cache) and each task's size (examples learned, outputs), by which the tasks
    are ordered. Runs on a worker."""
    from numba.core import event

    from olboost.cli._run import run_one

    class Count(event.Listener):
        compiled = 0

        def on_start(self, _: Any) -> None:
            self.compiled += 1

        def on_end(self, _: Any) -> None:
            pass

    t0 = time.perf_counter()
    count = Count()
    with event.install_listener("numba:compile", count):
        sizes, failures = _warm(argvs, run_one)
    return {
        "seconds": time.perf_counter() - t0,
        "compiled": count.compiled,
        "sizes": sizes,
        "failures": failures,
    }


def _warm(
    argvs: Sequence[Sequence[str]], run_one: Callable[..., Any]
) -> tuple[list[tuple[int, int]], dict[int, str]]:
    """Each task's size, and the error of each task (by position) whose warm-up failed: its
    data gone since the spec was checked, or missing on this worker (a remote cluster)."""
    sizes: list[tuple[int, int]] = []
    failures: dict[int, str] = {}
    for i, argv in enumerate(argvs):
        try:
            args = parse_run_args(argv)
            data = _data(args)
            run_one(args, _head(data))
        except Exception as err:  # that task fails; the others still run
            failures[i] = f"{type(err).__name__}: {err}"
            sizes.append((0, 0))
            continue
        if hasattr(data, "class_names"):  # multiclass: one prequential pass
            sizes.append((data.n_samples, len(data.class_names)))
        else:  # the train split loops times, then the test split
            learned = data.n_samples + (args.loops - 1) * (data.n_train or 0)
            sizes.append((learned, data.n_labels))
    return sizes, failures
