"""Sweeps: a grid of ``olboost run`` tasks on a Dask cluster (the ``dask`` extra).

``olboost sweep SPEC.toml`` runs every combination of algorithms x data sets x parameters x seeds
that the spec names as an independent task on ``dask.distributed``: on a local cluster of
``--workers N`` processes (one thread each; default: one per core), or on an existing cluster
whose scheduler is given by ``--scheduler ADDRESS`` (e.g. ``tcp://10.0.0.5:8786``; the workers
need olboost installed and the data sets at the paths the spec names; a relative path is taken
from the directory the sweep runs in).

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
hash of the task's parameters; a rerun skips every task whose file is there, written by the same
olboost version and code (a digest of its files) from the same data files, and unchanged since
(the record keeps a digest of itself): any other runs again. At the end a summary
(mean +- standard deviation over the seeds of each cell: test rank loss, or accuracy for
multiclass algorithms) is printed and written to ``RESULTS/summary.csv``.

**Workers.** Before the tasks, each worker in turn runs every kind of task on a few rows, which
compiles the kernels or loads them from Numba's on-disk cache: one at a time, the first compiling
what the others then load (processes that need one kernel at once would wait for each other's
compile anyway: :mod:`olboost._numba_cache`); the time is reported apart. A worker that dies (a
crash, a kill) loses only the task it was running: Dask runs it again elsewhere, and a local
cluster restarts the worker, which loads the kernels the warm-ups cached.
"""

from __future__ import annotations

# ``X as X``: names of the module olboost.sweep was before it became this package, still
# importable from here.
from olboost.sweep._client import SweepOutcome, local_cluster, run_sweep
from olboost.sweep._command import add_parsers
from olboost.sweep._command import cmd_sweep as cmd_sweep
from olboost.sweep._spec import NOT_FOR_TASKS as NOT_FOR_TASKS
from olboost.sweep._spec import RESERVED as RESERVED
from olboost.sweep._spec import SPEC_KEYS as SPEC_KEYS
from olboost.sweep._spec import Task, load_spec, parse_run_args, tasks_from_spec
from olboost.sweep._summary import TIMING_KEYS, numbers, summarize
from olboost.sweep._summary import format_summary as format_summary
from olboost.sweep._summary import write_summary_csv as write_summary_csv
from olboost.sweep._workers import WARM_UP_ROWS as WARM_UP_ROWS
from olboost.sweep._workers import run_task
from olboost.sweep._workers import warm_worker as warm_worker

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
