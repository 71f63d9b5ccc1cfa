"""Sweeps: a grid of ``olboost run`` tasks on a Dask cluster (the ``dask`` extra).

``olboost sweep SPEC.toml`` runs every combination of algorithms x data sets x parameters x seeds
that the spec names as an independent task on ``dask.distributed``: on a local cluster of
``--workers N`` processes (one thread each; default: one per core), or on an existing cluster
whose scheduler is given by ``--scheduler ADDRESS`` (e.g. ``tcp://10.0.0.5:8786``; the workers
need olboost installed and the data sets at the paths the spec names).

A spec (see ``examples/sweep.toml``)::

    algorithms = ["ada-olmr", "online-bmr"]
    datasets = ["emotions", "yeast"]      # or {name = "a.arff", labels = "a.xml", test = "b.arff"}
    seeds = 4                             # seeds 1..4, or a list: [1, 5, 9]
    curve = false                         # true: records keep their learning curves (olboost plot)

    [params]                              # options of `olboost run`, for every task
    learners = [20, 100]                  # a list is an axis of the grid; a scalar a fixed value

    [algorithm-params.online-bmr]         # options of one algorithm only (over [params])
    gamma = [0.1, 0.01]

An option is named as on the command line without its dashes (``predict-with`` or
``predict_with``); ``true`` stands for a flag, and an option taking several values is given a list
per grid point (``fields = [["Subject", "From"]]``). Every task is checked by ``olboost run``'s own
parser before anything runs.

**Same numbers as ``olboost run``.** A task is the argument list of an ``olboost run`` command,
parsed by its parser and run by :func:`olboost.cli.run_one`, the function ``olboost run`` calls: a
task's record is the JSON record of that command, bit for bit apart from timings, plus the task
(``sweep_task``: its id, options and command line).

**Results.** Each finished task's record is written as soon as it arrives, atomically (temporary
file, fsync, rename), to ``RESULTS/<algorithm>_<data set>_seed<seed>_<id>.json``, where ``id`` is a
hash of the task's parameters; a rerun skips every task whose file is there. At the end a summary
(mean +- standard deviation over the seeds of each cell: test rank loss, or accuracy for
multiclass algorithms) is printed and written to ``RESULTS/summary.csv``.

**Workers.** Before the tasks, each worker in turn runs every kind of task on a few rows, which
compiles the kernels or loads them from Numba's on-disk cache: one at a time, because two processes
compiling one kernel at once could corrupt the cache (see ``conftest.py``); the time is reported
apart. A worker that dies (a crash, a kill) loses only the task it was running: Dask runs it again
elsewhere, and a local cluster restarts the worker, which loads the kernels the warm-ups cached.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import hashlib
import io
import itertools
import json
import math
import os
import re
import sys
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "TIMING_KEYS",
    "SweepOutcome",
    "Task",
    "add_parsers",
    "load_spec",
    "local_cluster",
    "numbers",
    "parse_run_args",
    "run_sweep",
    "run_task",
    "summarize",
    "tasks_from_spec",
]

#: Top-level keys of a spec.
SPEC_KEYS = ("algorithms", "datasets", "seeds", "curve", "params", "algorithm-params")

#: ``olboost run`` options a spec sets by its own keys (or the sweep itself), not in ``params``.
RESERVED = ("algorithm", "dataset", "seed", "curve", "output", "no_progress")

#: ``olboost run`` options about its own files and output, which a sweep task does not take
#: (its record goes to the results directory).
NOT_FOR_TASKS = ("json", "checkpoint", "checkpoint_every", "resume", "save_model")

#: Record fields that measure time: the only ones that differ between two runs of one task.
TIMING_KEYS = ("seconds", "seconds_train", "seconds_test", "compile_seconds")

#: Rows of each split a worker's warm-up runs per kind of task.
WARM_UP_ROWS = 40


# ---------------------------------------------------------------------------------- the tasks


@dataclass(frozen=True)
class Task:
    """One ``olboost run``: an algorithm on a data set with a seed and options.

    ``params`` holds the options the spec sets (name with underscores, value), sorted by name;
    ``curve`` asks for the learning curve in the record.

    Examples
    --------
    >>> task = Task("ada-olmr", "emotions", 2, (("learners", 10),))
    >>> task.argv
    ['--algorithm', 'ada-olmr', '--dataset', 'emotions', '--seed', '2', '--learners', '10', '--no-progress']
    >>> task.id == Task("ada-olmr", "emotions", 2, (("learners", 10),)).id, len(task.id)
    (True, 16)
    >>> task.filename == f"ada-olmr_emotions_seed2_{task.id}.json"
    True
    """  # noqa: E501

    algorithm: str
    dataset: str
    seed: int
    params: tuple[tuple[str, Any], ...] = ()
    curve: bool = False

    @property
    def identity(self) -> dict[str, Any]:
        """What the task is, JSON-ready (its :attr:`id` hashes this)."""
        return {
            "algorithm": self.algorithm,
            "dataset": self.dataset,
            "seed": self.seed,
            "params": {k: _jsonable(v) for k, v in self.params},
            "curve": self.curve,
        }

    @functools.cached_property
    def id(self) -> str:
        """16 hex digits of the SHA-256 of :attr:`identity` (canonical JSON): stable across
        processes, machines and Python versions."""
        text = json.dumps(self.identity, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def argv(self) -> list[str]:
        """The task as ``olboost run`` arguments."""
        out = ["--algorithm", self.algorithm, "--dataset", self.dataset, "--seed", str(self.seed)]
        for name, value in self.params:
            flag = "--" + name.replace("_", "-")
            if value is True:
                out.append(flag)
            elif value is False:
                continue
            elif isinstance(value, tuple):
                out += [flag, *map(str, value)]
            else:
                out += [flag, str(value)]
        out.append("--no-progress")
        if self.curve:
            out.append("--curve")
        return out

    @property
    def filename(self) -> str:
        """Its result file's name: readable parts, then the id."""
        stem = Path(self.dataset).name
        for suffix in (".arff", ".csv", ".gz", ".data"):
            stem = stem.removesuffix(suffix)
        stem = re.sub(r"[^A-Za-z0-9.-]+", "-", stem) or "data"
        return f"{self.algorithm}_{stem}_seed{self.seed}_{self.id}.json"

    @property
    def cell(self) -> tuple[str, str, tuple[tuple[str, Any], ...]]:
        """The summary cell: the task but its seed."""
        return (self.algorithm, self.dataset, self.params)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _option_name(key: str, where: str) -> str:
    name = key.replace("-", "_")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise ValueError(f"{where}: {key!r} is not an option name")
    if name in RESERVED:
        raise ValueError(
            f"{where}: {key!r} is set by the sweep (algorithms, datasets, seeds and curve are "
            "top-level keys of the spec; results go to the results directory)"
        )
    if name in NOT_FOR_TASKS:
        raise ValueError(
            f"{where}: {key!r} is not for sweep tasks, which write their records to the results "
            "directory (a rerun skips the finished ones)"
        )
    return name


def _option_value(value: Any, where: str) -> Any:
    if isinstance(value, bool | int | float | str):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{where}: {value} is not a finite number")
        return value
    if isinstance(value, list) and all(isinstance(v, int | float | str) for v in value):
        return tuple(value)  # one grid point of an option that takes several values
    raise ValueError(f"{where}: {value!r} is not an option value (a number, string or boolean)")


def _axes(table: Mapping[str, Any], where: str) -> dict[str, list[Any]]:
    """Option name -> its values in the grid (a scalar: one value)."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table of options")
    out = {}
    for key, value in table.items():
        name = _option_name(key, where)
        values = value if isinstance(value, list) else [value]
        if not values:
            raise ValueError(f"{where}.{key}: an empty list leaves nothing to run")
        if isinstance(value, list) and all(isinstance(v, list) for v in value):
            pass  # an axis of multi-valued points
        elif isinstance(value, list) and any(isinstance(v, list) for v in value):
            raise ValueError(f"{where}.{key}: mixes values and lists")
        out[name] = [_option_value(v, f"{where}.{key}") for v in values]
    return out


def _dataset_entries(value: Any, where: str) -> list[tuple[str, dict[str, list[Any]]]]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: 'datasets' must be a non-empty list")
    out = []
    for entry in value:
        if isinstance(entry, str):
            out.append((entry, {}))
        elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            rest = {k: v for k, v in entry.items() if k != "name"}
            out.append((entry["name"], _axes(rest, f"{where}: datasets.{entry['name']}")))
        else:
            raise ValueError(
                f"{where}: a data set is a name or path, or a table with 'name' (and e.g. "
                f"'labels', 'test'), got {entry!r}"
            )
    return out


def _seeds(value: Any, where: str) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"{where}: seeds = {value}: at least 1")
        return list(range(1, value + 1))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
    ):
        return list(value)
    raise ValueError(f"{where}: seeds must be a count N (seeds 1..N) or a list of seeds >= 0")


def tasks_from_spec(spec: Mapping[str, Any], where: str = "spec") -> list[Task]:
    """The tasks of a spec (a parsed TOML document): algorithms x data sets x parameter grid x
    seeds, in that order; every task checked by ``olboost run``'s parser.

    Raises
    ------
    ValueError
        For an unknown key, a malformed value, an option ``olboost run`` does not take or
        rejects, or a task named twice.

    Examples
    --------
    >>> spec = {"algorithms": ["ada-olmr", "online-bmr"], "datasets": ["emotions"], "seeds": 2,
    ...         "params": {"learners": 10},
    ...         "algorithm-params": {"online-bmr": {"gamma": [0.1, 0.01]}}}
    >>> [(t.algorithm, t.seed, dict(t.params)) for t in tasks_from_spec(spec)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('ada-olmr', 1, {'learners': 10}), ('ada-olmr', 2, {'learners': 10}),
     ('online-bmr', 1, {'gamma': 0.1, 'learners': 10}),
     ('online-bmr', 2, {'gamma': 0.1, 'learners': 10}),
     ('online-bmr', 1, {'gamma': 0.01, 'learners': 10}),
     ('online-bmr', 2, {'gamma': 0.01, 'learners': 10})]
    >>> tasks_from_spec({**spec, "params": {"learners": "many"}})
    Traceback (most recent call last):
    ...
    ValueError: spec: ada-olmr on emotions: olboost run: error: argument --learners: invalid int value: 'many'
    """  # noqa: E501
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; a spec has {list(SPEC_KEYS)}")
    algorithms = spec.get("algorithms")
    if not isinstance(algorithms, list) or not algorithms:
        raise ValueError(f"{where}: 'algorithms' must be a non-empty list of names")
    if not all(isinstance(a, str) for a in algorithms):
        raise ValueError(f"{where}: 'algorithms' must be names, got {algorithms!r}")
    datasets = _dataset_entries(spec.get("datasets"), where)
    seeds = _seeds(spec.get("seeds", 1), where)
    curve = spec.get("curve", False)
    if not isinstance(curve, bool):
        raise ValueError(f"{where}: curve must be true or false, got {curve!r}")
    common = _axes(spec.get("params", {}), f"{where}: params")
    by_algorithm = spec.get("algorithm-params", {})
    if not isinstance(by_algorithm, Mapping):
        raise ValueError(f"{where}: 'algorithm-params' must hold a table per algorithm")
    stray = sorted(set(by_algorithm) - set(algorithms))
    if stray:
        raise ValueError(f"{where}: algorithm-params for {stray}, which are not in algorithms")

    tasks: list[Task] = []
    for algorithm in algorithms:
        own = _axes(by_algorithm.get(algorithm, {}), f"{where}: algorithm-params.{algorithm}")
        for dataset, extra in datasets:
            axes = {**common, **own, **extra}
            names = sorted(axes)
            for point in itertools.product(*(axes[n] for n in names)):
                params = tuple(zip(names, point, strict=True))
                first = Task(algorithm, dataset, seeds[0], params, curve)
                _check(first, f"{where}: {algorithm} on {dataset}")
                tasks += [replace(first, seed=s) for s in seeds]
    seen: dict[str, Task] = {}
    for task in tasks:
        if task.id in seen:
            raise ValueError(f"{where}: the task {task.argv} is named twice")
        seen[task.id] = task
    return tasks


def _run_options() -> set[str]:
    """The option strings of ``olboost run``."""
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices["run"]._option_string_actions)
    raise AssertionError("olboost has no run command")  # pragma: no cover


def _check(task: Task, where: str) -> None:
    options = _run_options()
    for name, _ in task.params:
        flag = "--" + name.replace("_", "-")
        if flag not in options:  # argparse would take an abbreviation: the hash would not
            raise ValueError(f"{where}: olboost run has no option {flag}")
    args = parse_run_args(task.argv, where)
    if task.algorithm == "label-ranker":
        from olboost import ranking_experiments

        if ranking_experiments.foldering_source(args.dataset) is not None:
            raise ValueError(
                f"{where}: a sweep runs MULAN and UCI data; Enron foldering data run with "
                "olboost run or olboost reproduce label-ranking"
            )


def load_spec(path: str | os.PathLike) -> list[Task]:
    """The tasks of the TOML spec at ``path`` (see the module docstring)."""
    path = Path(path)
    with open(path, "rb") as f:
        try:
            spec = tomllib.load(f)
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"{path}: {err}") from None
    return tasks_from_spec(spec, str(path))


@functools.lru_cache(maxsize=1)
def _parser() -> argparse.ArgumentParser:
    from olboost.cli import build_parser

    return build_parser()


def parse_run_args(argv: Sequence[str], where: str = "olboost run") -> argparse.Namespace:
    """``argv`` parsed as ``olboost run ARGV`` is; a ``ValueError`` carrying argparse's message
    (not an exit) when it is rejected."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return _parser().parse_args(["run", *argv])
    except SystemExit:
        lines = err.getvalue().strip().splitlines()
        raise ValueError(f"{where}: {lines[-1] if lines else ' '.join(argv)}") from None


# ------------------------------------------------------------------------ on the workers

_DATA: dict[tuple[Any, ...], Any] = {}


def _data(args: argparse.Namespace) -> Any:
    """The data set of a task, as ``olboost run`` loads it (kept per worker process)."""
    from olboost import cli

    key = (cli.ALGORITHMS[args.algorithm].task, args.dataset, args.labels, args.test)
    if key not in _DATA:
        _DATA[key] = cli._load(args)
    return _DATA[key]


def run_task(argv: Sequence[str]) -> dict[str, Any]:
    """Run one task (``olboost run ARGV``, through :func:`olboost.cli.run_one`) and return its
    record, as ``olboost run --output`` writes it. Runs on a worker."""
    from olboost.cli import run_one

    args = parse_run_args(argv)
    data = _data(args)
    record = run_one(args, data)
    counts = data.missing_counts()
    if counts:  # as olboost run adds them
        record["missing_values"] = sum(counts.values())
        record["missing_by_column"] = counts
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

    from olboost.cli import run_one

    class Count(event.Listener):
        compiled = 0

        def on_start(self, _: Any) -> None:
            self.compiled += 1

        def on_end(self, _: Any) -> None:
            pass

    t0 = time.perf_counter()
    count = Count()
    with event.install_listener("numba:compile", count):
        sizes = _warm(argvs, run_one)
    return {"seconds": time.perf_counter() - t0, "compiled": count.compiled, "sizes": sizes}


def _warm(argvs: Sequence[Sequence[str]], run_one: Callable[..., Any]) -> list[tuple[int, int]]:
    sizes = []
    for argv in argvs:
        args = parse_run_args(argv)
        data = _data(args)
        run_one(args, _head(data))
        if hasattr(data, "class_names"):  # multiclass: one prequential pass
            sizes.append((data.n_samples, len(data.class_names)))
        else:  # the train split loops times, then the test split
            learned = data.n_samples + (args.loops - 1) * (data.n_train or 0)
            sizes.append((learned, data.n_labels))
    return sizes


# ------------------------------------------------------------------------ on the client


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did.

    Attributes
    ----------
    records
        Each task's record, in the order of the tasks (``None`` for a failed task).
    skipped, ran
        Tasks found finished in the results directory, and tasks run now.
    failures
        Task id -> the error, for the tasks that failed.
    seconds
        Wall-clock time from the first task submitted to the last result written (warm-ups and
        starting a cluster excluded).
    warm_up_seconds
        Worker address -> seconds of its warm-up (compiling, or loading Numba's cache).
    compiled
        Worker address -> functions Numba compiled in its warm-up (0: all from the cache).
    setup_seconds
        Starting the local cluster (or connecting to the scheduler).
    workers
        Workers at the start.
    """

    records: list[dict[str, Any] | None]
    skipped: int
    ran: int
    failures: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    warm_up_seconds: dict[str, float] = field(default_factory=dict)
    compiled: dict[str, int] = field(default_factory=dict)
    setup_seconds: float = 0.0
    workers: int = 0


def _write_json_atomic(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` so that ``path`` is always either absent or whole:
    a temporary file beside it, flushed to disk, renamed over it, the directory synced."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _finished(path: Path, task: Task) -> dict[str, Any] | None:
    """The record at ``path`` if it is the finished ``task``'s, else ``None``."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    task_of = record.get("sweep_task") if isinstance(record, dict) else None
    return record if isinstance(task_of, dict) and task_of.get("id") == task.id else None


def _require_dask() -> None:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise ImportError(
            "olboost sweep runs on dask.distributed, which is not installed: "
            "pip install 'olboost[dask]'"
        ) from None


def _order(tasks: Sequence[Task], sizes: Mapping[tuple[Any, ...], tuple[int, int]]) -> list[int]:
    """Indices of ``tasks``, longest first (cost ~ learners x examples learned x outputs), so
    that no long task is left running alone at the end."""

    def cost(i: int) -> float:
        task = tasks[i]
        learned, outputs = sizes.get(task.cell, (1, 1))
        return float(dict(task.params).get("learners", 100)) * learned * outputs

    return sorted(range(len(tasks)), key=lambda i: -cost(i))


def local_cluster(workers: int) -> Any:
    """A ``dask.distributed.LocalCluster`` of ``workers`` processes with one thread each (the
    kernels run on one thread), no dashboard, and each worker handed one task at a time
    (``worker-saturation`` 1.0), so that none holds a task back while another is idle."""
    _require_dask()
    import dask
    from dask.distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
        return LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )


def run_sweep(
    tasks: Sequence[Task],
    results: str | os.PathLike,
    *,
    client: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = print,
) -> SweepOutcome:
    """Run the tasks not yet finished in ``results`` on Dask; write each record there as it
    arrives.

    Parameters
    ----------
    tasks
        From :func:`load_spec` or :func:`tasks_from_spec`.
    results
        The results directory (made if absent); its finished tasks are skipped.
    client
        A ``dask.distributed.Client`` to run on (left open). Otherwise one is made, on a
        ``LocalCluster`` of ``workers`` processes with one thread each (default: one per core),
        or connected to ``scheduler``; both are closed at the end.
    progress
        A progress bar of the tasks on stderr.
    log
        Where the lines saying what happens go (``None``: nowhere).

    Returns
    -------
    SweepOutcome
        The records (read back from ``results`` for the tasks skipped), failures and timings.
    """
    say = log or (lambda line: None)
    out_dir = Path(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any] | None] = [None] * len(tasks)
    todo = []
    for i, task in enumerate(tasks):
        records[i] = _finished(out_dir / task.filename, task)
        if records[i] is None:
            todo.append(i)
    outcome = SweepOutcome(records, skipped=len(tasks) - len(todo), ran=0)
    if not todo:
        say(f"{len(tasks)} tasks, all finished before in {out_dir}: nothing to run")
        return outcome
    _require_dask()
    from dask.distributed import Client, as_completed

    with contextlib.ExitStack() as stack:
        t0 = time.perf_counter()
        if client is None:
            if scheduler is not None:
                client = stack.enter_context(Client(scheduler))
                where = f"the cluster of scheduler {scheduler}"
            else:
                n = workers or os.cpu_count() or 1
                if n < 1:
                    raise ValueError(f"--workers must be >= 1, got {n}")
                cluster = stack.enter_context(local_cluster(n))
                client = stack.enter_context(Client(cluster))
                where = f"a local cluster of {n} worker process{'es' if n > 1 else ''}"
        else:
            where = f"the cluster of {client.scheduler.address}"
        outcome.setup_seconds = time.perf_counter() - t0
        addresses = sorted(client.scheduler_info()["workers"])
        outcome.workers = len(addresses)
        if not where.startswith("a local"):
            where += f" ({len(addresses)} worker{'s' if len(addresses) != 1 else ''})"
        say(
            f"{len(tasks)} tasks: {outcome.skipped} finished before, {len(todo)} to run on "
            f"{where}; results in {out_dir}"
        )
        if not addresses:
            raise ValueError(f"{where} has no workers")
        # warm-ups: one worker at a time (concurrent compiles could corrupt Numba's cache)
        cells = list(dict.fromkeys(tasks[i].cell for i in todo))
        first = {tasks[i].cell: tasks[i] for i in reversed(todo)}
        argvs = [first[c].argv for c in cells]
        sizes: dict[tuple[Any, ...], tuple[int, int]] = {}
        for address in addresses:
            # a task (not client.run, which would block the worker's event loop for as long as
            # compiling takes); it may go elsewhere if this worker dies meanwhile
            got = client.submit(
                warm_worker, argvs, workers=[address], allow_other_workers=True, pure=False
            ).result()
            outcome.warm_up_seconds[address] = got["seconds"]
            outcome.compiled[address] = got["compiled"]
            sizes = dict(zip(cells, map(tuple, got["sizes"]), strict=True))
        say(
            "warm-ups (compiling the kernels or loading them from Numba's cache), per worker: "
            + ", ".join(
                f"{outcome.warm_up_seconds[a]:.1f} s ({outcome.compiled[a]} compiled)"
                for a in addresses
            )
        )
        order = _order([tasks[i] for i in todo], sizes)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(
                total=len(tasks), initial=outcome.skipped, desc="tasks", unit="task",
                file=sys.stderr,
            )  # fmt: skip
        t0 = time.perf_counter()
        futures = {}
        for rank, j in enumerate(order):
            task = tasks[todo[j]]
            future = client.submit(
                run_task, task.argv, key=f"olboost-sweep-{task.id}", priority=len(order) - rank
            )
            futures[future] = todo[j]
        try:
            for future in as_completed(futures):
                i = futures[future]
                task = tasks[i]
                try:
                    record = future.result()
                except Exception as err:  # a task's own error, or a worker lost too often
                    outcome.failures[task.id] = f"{type(err).__name__}: {err}"
                    say(f"task {task.filename} failed: {type(err).__name__}: {err}")
                else:
                    record["sweep_task"] = {
                        "id": task.id,
                        **task.identity,
                        "argv": ["olboost", "run", *task.argv],
                    }
                    _write_json_atomic(out_dir / task.filename, record)
                    records[i] = record
                    outcome.ran += 1
                future.release()
                if bar is not None:
                    bar.update(1)
        except BaseException:
            client.cancel(list(futures))
            raise
        finally:
            if bar is not None:
                bar.close()
        outcome.seconds = time.perf_counter() - t0
    return outcome


# ---------------------------------------------------------------------------- the summary


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
            sd=_sd(values),
            n=len(values),
            seeds=" ".join(str(t.seed) for t, _ in done),
            seconds_mean=(sum(r["seconds"] for _, r in done) / len(done)) if done else math.nan,
        )
        rows.append(row)
    return rows


def _sd(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


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
    widths = [max(len(r[c]) for r in table) for c in range(len(head))]
    return ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in table]


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
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _fmt_csv(row.get(c)) for c in columns})


def _fmt_csv(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return " ".join(map(str, value)) if isinstance(value, list) else value


# ---------------------------------------------------------------------------------- command


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
            f"\n{outcome.ran} tasks run in {outcome.seconds:.1f} s on {outcome.workers} workers "
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
    p = sub.add_parser(
        "sweep",
        help="run a grid of olboost run tasks (algorithms x data sets x options x seeds) on Dask",
        description="Run every task of a TOML spec (algorithms x data sets x parameters x seeds; "
        "see examples/sweep.toml) on a Dask cluster, each record to the results directory as "
        "it finishes (a rerun skips the finished ones), then print and write the summary (mean "
        "± sd over the seeds per cell). Needs pip install 'olboost[dask]'.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
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
