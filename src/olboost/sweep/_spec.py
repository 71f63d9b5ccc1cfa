"""A sweep's spec and its tasks: the TOML spec read and checked, its grid expanded into
:class:`Task` objects (each an ``olboost run`` argument list), and a task's arguments parsed by
``olboost run``'s own parser."""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import itertools
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

#: Top-level keys of a spec.
SPEC_KEYS = ("algorithms", "datasets", "seeds", "curve", "params", "algorithm-params")

#: Most tasks a sweep runs: each is checked as ``olboost run`` checks it before any runs (about
#: a millisecond each), and its record is a file of the results directory.
MAX_TASKS = 100_000

#: ``olboost run`` options a spec sets by its own keys (or the sweep itself), not in ``params``.
RESERVED = ("algorithm", "dataset", "seed", "curve", "output", "no_progress")

#: ``olboost run`` options about its own files and output, which a sweep task does not take
#: (its record goes to the results directory).
NOT_FOR_TASKS = ("json", "checkpoint", "checkpoint_every", "resume", "save_model")

# Characters of a data set's name kept in its tasks' record names: with the algorithm, the seed
# and the id, a name well under the 255 bytes file systems take.
_STEM_CHARACTERS = 100


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
        # cut: a data set's file may have a name of 255 bytes, and so may the record's; the id
        # keeps names that agree in their first characters apart
        stem = re.sub(r"[^A-Za-z0-9.-]+", "-", stem)[:_STEM_CHARACTERS] or "data"
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
    # bool is an int: true in a list would reach olboost run as the word "True"
    if isinstance(value, list) and all(
        isinstance(v, int | float | str) and not isinstance(v, bool) for v in value
    ):
        return tuple(value)  # one grid point of an option that takes several values
    raise ValueError(f"{where}: {value!r} is not an option value (a number, string or boolean)")


def _axes(table: Mapping[str, Any], where: str) -> dict[str, list[Any]]:
    """Option name -> its values in the grid (a scalar: one value)."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table of options")
    out = {}
    spelled: dict[str, str] = {}
    for key, value in table.items():
        name = _option_name(key, where)
        if name in spelled:
            raise ValueError(f"{where}: {spelled[name]!r} and {key!r} name one option")
        spelled[name] = key
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
        if not 1 <= value <= MAX_TASKS:
            # a count of 10^12 was a bare MemoryError, one of 3 million a sweep at 2 GB
            raise ValueError(f"{where}: seeds = {value}: at least 1, at most {MAX_TASKS:,}")
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
    seeds, in that order; every task checked as ``olboost run`` checks it before running: its
    options, its data (each data set is read once) and the model its options build.

    Raises
    ------
    ValueError
        For an unknown key, a malformed value, an option ``olboost run`` does not take or
        rejects (for the data or the model too), or a task named twice.

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

    owns = {a: _axes(by_algorithm.get(a, {}), f"{where}: algorithm-params.{a}") for a in algorithms}
    size = len(seeds) * sum(
        math.prod(len(values) for values in {**common, **owns[a], **extra}.values())
        for a in algorithms
        for _, extra in datasets
    )
    if size > MAX_TASKS:
        raise ValueError(
            f"{where}: the grid has {size:,} tasks; a sweep runs at most {MAX_TASKS:,}"
        )
    tasks: list[Task] = []
    runs: dict[str, list[str]] = {}
    data: dict[tuple[Any, ...], Any] = {}
    for algorithm in algorithms:
        for dataset, extra in datasets:
            axes = {**common, **owns[algorithm], **extra}
            names = sorted(axes)
            for point in itertools.product(*(axes[n] for n in names)):
                params = tuple(zip(names, point, strict=True))
                first = Task(algorithm, dataset, seeds[0], params, curve)
                run = _check(first, f"{where}: {algorithm} on {dataset}", data)
                if run in runs:
                    raise ValueError(
                        f"{where}: the task {first.argv} is named twice (as {runs[run]})"
                    )
                runs[run] = first.argv
                tasks += [replace(first, seed=s) for s in seeds]
    if len({task.id for task in tasks}) < len(tasks):
        raise ValueError(f"{where}: a seed is named twice in {seeds}")
    return tasks


def _as_run(args: argparse.Namespace, configuration: dict[str, Any]) -> str:
    """What a task runs, as a key: its parsed options, with each file it reads by its resolved
    path, and those a run resolves (``--features`` unset or at its default, ``--C`` unset or
    at the complexity's default, ...) as its record says they acted (``configuration``,
    :func:`olboost.cli._run.run_configuration`). As olboost run reads them, 4 and "4", 1 and
    1.0, data/a.arff and ./data/a.arff, no --features and --features 20 are one run."""
    run = {k: v for k, v in vars(args).items() if k != "given_options"}
    for option in ("dataset", "labels", "test"):
        value = run.get(option)
        if isinstance(value, str) and Path(value).is_file():
            run[option] = str(Path(value).resolve())
    if "features_per_learner" in configuration:
        del run["features"]
    return repr(sorted({**run, **configuration}.items()))


def _run_options() -> dict[str, argparse.Action]:
    """The option strings of ``olboost run`` and their actions."""
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices["run"]._option_string_actions)
    raise AssertionError("olboost has no run command")  # pragma: no cover


def _check(task: Task, where: str, data: dict[tuple[Any, ...], Any]) -> str:
    """``task`` as ``olboost run`` would check it before running: its options, its data (read
    once per data set into ``data``, a cache for one spec) and the model its options build;
    what it runs as a key (:func:`_as_run`)."""
    options = _run_options()
    for name, value in task.params:
        flag = "--" + name.replace("_", "-")
        if flag not in options:  # argparse would take an abbreviation: the hash would not
            raise ValueError(f"{where}: olboost run has no option {flag}")
        if isinstance(options[flag], argparse._HelpAction | argparse._VersionAction):
            raise ValueError(f"{where}: {flag} prints and exits; it is no option of a run")
        # Task.argv leaves an option set to false out, which is right for a flag only: for an
        # option taking a value the task would run with its default, labelled with false
        if isinstance(value, bool) and options[flag].nargs != 0:
            raise ValueError(
                f"{where}: {flag} takes a value, not {str(value).lower()} (true and false are "
                "for flags, options without a value)"
            )
    args = parse_run_args(task.argv, where)
    if task.algorithm == "label-ranker":
        from olboost import ranking_experiments

        if ranking_experiments.foldering_source(args.dataset) is not None:
            raise ValueError(
                f"{where}: a sweep runs MULAN and UCI data; Enron foldering data run with "
                "olboost run or olboost reproduce label-ranking"
            )
    # what olboost run checks before it evaluates (its data, and the model its options build),
    # here, so that a bad grid point stops the spec before a cluster starts, naming the task
    from olboost.cli import error_line
    from olboost.cli._algorithms import ALGORITHMS
    from olboost.cli._run import _load, check_run_data, prepare_run, run_configuration

    key = (
        ALGORITHMS[args.algorithm].task, args.dataset, getattr(args, "labels", None),
        getattr(args, "test", None),
    )  # fmt: skip
    try:
        if key not in data:
            data.clear()  # one data set held at a time
            data[key] = _load(args)
        _, model = prepare_run(args, data[key])
        check_run_data(args, data[key], model)
    except (ValueError, TypeError, OSError) as err:
        raise ValueError(f"{where}: {error_line(err)}") from None
    return _as_run(args, run_configuration(args, data[key], model))


def load_spec(path: str | os.PathLike) -> list[Task]:
    """The tasks of the TOML spec at ``path`` (see the module docstring)."""
    path = Path(path)
    data = path.read_bytes()
    try:
        # a UTF-8 BOM, as Windows' editors write, is read past: TOML forbids it, and tomllib
        # said "Invalid statement (at line 1, column 1)" of a file that looks right
        spec = tomllib.loads(data.decode("utf-8-sig"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: {err}") from None
    except RecursionError:
        # tomllib recurses once per level of nested arrays or inline tables
        raise ValueError(f"{path}: arrays or tables nested too deeply") from None
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
