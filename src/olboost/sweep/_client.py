"""A sweep on the client: the results directory read and written (each record atomically as it
arrives), and the tasks not finished run on a Dask cluster, local or given (:func:`run_sweep`)."""

from __future__ import annotations

import contextlib
import json
import logging
import numbers
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

from olboost._interrupt import blocked_interrupt, held_interrupt
from olboost.sweep._spec import Task
from olboost.sweep._summary import _metric
from olboost.sweep._workers import run_task, warm_worker


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
    """Write the record ``obj`` as ``olboost run --output`` writes it (atomically, NaN as
    null)."""
    from olboost._atomic import atomic_write
    from olboost.cli._shared import record_json

    atomic_write(path, record_json(obj).encode())


def _finished(path: Path, task: Task) -> dict[str, Any] | None:
    """The record at ``path`` if it is the finished ``task``'s, written by this olboost version
    and code (as a reproduce suite's cells are), unchanged since (its digest), with the numbers
    a summary reads; else ``None`` (run again)."""
    from olboost._version import __version__, source_digest

    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    task_of = record.get("sweep_task")
    if not isinstance(task_of, dict) or task_of.get("id") != task.id:
        return None
    if record.get("olboost_version") != __version__:
        return None  # another version's numbers: this one may give others
    if "files_sha256" in task_of and task_of["files_sha256"] != _files_digest(task):
        return None  # a file it read changed since (records from before the digest: trusted)
    # (records from before these two digests: trusted as well)
    if "source_sha256" in task_of and task_of["source_sha256"] != source_digest():
        return None  # olboost's code changed since, its version did not
    if "record_sha256" in task_of and task_of["record_sha256"] != _record_digest(record):
        return None  # edited since it was written: a hand-made number went into the summary
    if any(option not in record for option in _recorded_options(record)):
        # written before the algorithm had an option (label-ranker's --scale): the task ran
        # at the option's value then, which need not be its default now
        return None
    for name in (_metric(record), "seconds"):
        value = record.get(name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None  # damaged: the summary failed on it with a bare KeyError
    return record


def _record_digest(record: dict[str, Any]) -> str:
    """SHA-256 of a record as its file holds it (JSON, keys sorted), its own digest aside."""
    from olboost.checkpoint import _digest

    task_of = {k: v for k, v in record["sweep_task"].items() if k != "record_sha256"}
    return _digest({**record, "sweep_task": task_of})


def _recorded_options(record: dict[str, Any]) -> tuple[str, ...]:
    """The options an ``olboost run`` record of this version holds for its algorithm (all of
    them, :func:`olboost.cli._run.run_configuration`; ``fields``, of Enron data, aside)."""
    from olboost.cli._algorithms import ALGORITHMS

    name = record.get("algorithm")
    algorithm = ALGORITHMS.get(name) if isinstance(name, str) else None
    options = algorithm.options if algorithm is not None else ()
    return tuple(option for option in options if option != "fields")


def _files_digest(task: Task) -> str | None:
    """SHA-256 of the files a task reads (its data set, ``--labels`` and ``--test`` where they
    are files; ``None`` for a bundled data set), which its record keeps: a file changed in
    place, with as many rows, would otherwise be reused by a rerun."""
    from olboost.cli._shared import files_digest

    given = [task.dataset, *(v for k, v in task.params if k in ("labels", "test"))]
    paths = [Path(p) for p in given if isinstance(p, str) and Path(p).is_file()]
    return files_digest(paths) if paths else None


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


class _QuietTeardown:
    """An exit callback of a sweep's local cluster: after a Ctrl-C, Dask logs nothing (from
    this process's scheduler and nannies: a warning per worker removed with results, a comm
    closed while writing) until :meth:`restore`, once the cluster is closed; the sweep says
    "olboost: interrupted" and the finished tasks' records are kept. Other exits log as ever."""

    LOGGERS = ("distributed", "distributed.client", "tornado", "tornado.application")

    def __init__(self) -> None:
        self.levels: dict[str, int] | None = None

    def __call__(self, exc_type: Any, exc: Any, traceback: Any) -> bool:
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt) and not self.levels:
            self.levels = {name: logging.getLogger(name).level for name in self.LOGGERS}
            for name in self.LOGGERS:
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        return False

    def restore(self) -> None:
        for name, level in (self.levels or {}).items():
            logging.getLogger(name).setLevel(level)
        self.levels = None


def local_cluster(workers: int) -> Any:
    """A ``dask.distributed.LocalCluster`` of ``workers`` processes with one thread each (the
    kernels run on one thread), no dashboard (the scheduler's HTTP server on a free loopback
    port), and each worker handed one task at a time
    (``worker-saturation`` 1.0), so that none holds a task back while another is idle. The
    workers start with SIGINT blocked and leave the terminal's process group
    (:mod:`olboost.sweep._worker_setup`): a Ctrl-C is the sweep's to handle."""
    _require_dask()
    import dask
    from dask.distributed import LocalCluster

    # SIGINT blocked: the threads Dask starts here, and the worker processes they spawn, keep
    # it so (olboost._interrupt.blocked_interrupt). Multiprocessing's resource tracker, started
    # by the first process or queue of a thread, unblocks SIGINT in that thread after starting
    # its own process: started first, out here, it leaves the threads as they are.
    if os.name == "posix":
        resource_tracker.ensure_running()
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}), blocked_interrupt():
        return LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
            preload=["olboost.sweep._worker_setup"],
            # The scheduler serves HTTP (health, metrics) without a dashboard too, on port
            # 8787 by default: with another Dask cluster or sweep running it took another port
            # and warned ("Port 8787 is already in use"), a line on a sweep's output (and in a
            # test that wanted one line only, a flake when two sweeps overlapped). Any free
            # port of the loopback interface instead.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        )  # fmt: skip


def _unmade_on_error(directory: Path) -> Callable[..., bool]:
    """An exit callback (``ExitStack.push``) that removes ``directory`` on an error if it is
    still empty; the error goes on."""

    def on_exit(kind: Any, value: Any, traceback: Any) -> bool:
        if kind is not None and not any(directory.iterdir()):
            directory.rmdir()
        return False

    return on_exit


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
        ``LocalCluster`` of ``workers`` processes or connected to ``scheduler``, and closed at
        the end. At most one of ``client``, ``workers`` and ``scheduler`` is given.
    workers
        Processes of the local cluster, one thread each, at least 1 (default: one per core).
    scheduler
        Address of an existing Dask scheduler (e.g. ``"tcp://10.0.0.5:8786"``) whose workers
        run the tasks.
    progress
        A progress bar of the tasks on stderr.
    log
        Where the lines saying what happens go (``None``: nowhere).

    Returns
    -------
    SweepOutcome
        The records (read back from ``results`` for the tasks skipped), failures and timings.
    """
    given = [name for name, v in (("client", client), ("workers", workers),
                                  ("scheduler", scheduler)) if v is not None]  # fmt: skip
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)}: give at most one (where the tasks run)")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1
    ):
        # 0 was taken for the default (one worker per core)
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address (str), got {type(scheduler).__name__}")
    say = log or (lambda line: None)
    out_dir = Path(results)
    made = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    from olboost._atomic import remove_stale_temporaries_in
    from olboost._version import source_digest
    from olboost.cli._shared import record_json

    remove_stale_temporaries_in(out_dir)  # of records whose writer was killed
    records: list[dict[str, Any] | None] = [None] * len(tasks)
    todo = []
    # a record found by its task's id where its name is another: the names of records of data
    # sets of long names are cut at 100 characters, where earlier versions wrote them whole
    by_id = {path.name[-21:-5]: path for path in out_dir.glob("*_" + "?" * 16 + ".json")}
    for i, task in enumerate(tasks):
        records[i] = _finished(out_dir / task.filename, task)
        if records[i] is None and task.id in by_id:
            records[i] = _finished(by_id[task.id], task)
        if records[i] is None:
            todo.append(i)
    outcome = SweepOutcome(records, skipped=len(tasks) - len(todo), ran=0)
    if not todo:
        say(f"{len(tasks)} tasks, all finished before in {out_dir}: nothing to run")
        return outcome
    with contextlib.ExitStack() as stack:
        if made:
            # a sweep that fails before any record is written (no Dask, a scheduler it cannot
            # reach) leaves no empty results directory of its own making; run last, once the
            # cluster is closed
            stack.push(_unmade_on_error(out_dir))
        _require_dask()
        from dask.distributed import Client, as_completed

        t0 = time.perf_counter()
        if client is None:
            if scheduler is not None:
                client = stack.enter_context(Client(scheduler))
                where = f"the cluster of scheduler {scheduler}"
            else:
                n = int(workers) if workers is not None else os.cpu_count() or 1
                # a Ctrl-C while the cluster starts left it half made, which Dask's exit hook
                # then failed on (a traceback after "olboost: interrupted"): it comes once the
                # cluster is in the exit stack, which then stops it. (The workers never see
                # one: local_cluster.)
                with held_interrupt():
                    quiet = _QuietTeardown()
                    stack.callback(quiet.restore)  # once the cluster is closed
                    cluster = stack.enter_context(local_cluster(n))
                    client = stack.enter_context(Client(cluster))
                    stack.push(quiet)  # before the client and the cluster close
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
        warm_failures: dict[tuple[Any, ...], str] = {}
        for address in addresses:
            # a task (not client.run, which would block the worker's event loop for as long as
            # compiling takes); it may go elsewhere if this worker dies meanwhile
            got = client.submit(
                warm_worker, argvs, workers=[address], allow_other_workers=True, pure=False
            ).result()
            outcome.warm_up_seconds[address] = got["seconds"]
            outcome.compiled[address] = got["compiled"]
            sizes = dict(zip(cells, map(tuple, got["sizes"]), strict=True))
            for i, message in got["failures"].items():
                warm_failures.setdefault(cells[i], message)
        say(
            "warm-ups (compiling the kernels or loading them from Numba's cache), per worker: "
            + ", ".join(
                f"{outcome.warm_up_seconds[a]:.1f} s ({outcome.compiled[a]} compiled)"
                for a in addresses
            )
        )
        for i in todo:
            message = warm_failures.get(tasks[i].cell)
            if message is not None:  # its warm-up failed on a worker: so would the task
                outcome.failures[tasks[i].id] = message
                say(f"task {tasks[i].filename} failed in the warm-up: {message}")
        todo = [i for i in todo if tasks[i].cell not in warm_failures]
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
                # a Ctrl-C inside Dask's wait for a result (even a finished one) left Dask's
                # cancel callback failing on a name it had not set yet (distributed 2026.8:
                # a traceback after "olboost: interrupted"); held, it comes once the task's
                # record is written, so a finished task is never lost to it
                with held_interrupt():
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
                            "files_sha256": _files_digest(task),
                            "source_sha256": source_digest(),
                        }
                        # the digest of the record as a rerun reads it (NaN as null)
                        as_read = json.loads(record_json(record))
                        record["sweep_task"]["record_sha256"] = _record_digest(as_read)
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
