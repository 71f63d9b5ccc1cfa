"""Command-line interface: ``olboost run`` and ``olboost reproduce``.

``olboost run --algorithm ada-olmr --dataset emotions --learners 100 --seed 1 --output r.json``
evaluates one algorithm on one data set.

* Multi-label ranking algorithms (``ada-olmr``, ``online-bmr``) take a bundled MULAN name or an ARFF
  path with ``--labels`` (its MULAN XML) and optionally ``--test`` (a separate test split, evaluated
  with the paper's train/test protocol; a single file alone is evaluated prequentially). They
  report rank losses. ``--loops L`` streams the train split ``L`` times first.
* Top-k feedback algorithms (``topk-bbm``, ``topk-adaptive``; Raman et al. 2020) take the same data
  and ``--k``, ``--exploration``, ``--rho`` (and ``--gamma`` for ``topk-bbm``): they show a
  randomised ranking, are scored on it (weighted rank loss of the ranking shown) and learn the
  relevance of its top ``k`` labels only.
* Multiclass algorithms (``online-mbbm``, ``adaboost-olm``, ``best-tree``, ``oza-boost``,
  ``ova-adaboost-ol``, ``ada-ova``) take a bundled UCI name or a path to a UCI file
  (e.g. the PUC-Rio HAR CSV). The stream is reordered with ``--seed`` (the papers' reorderings) and
  evaluated prequentially; they report ``accuracy`` and ``accuracy_last20``.

* The linear label ranker (``label-ranker``: :class:`olboost.rankers.LabelRanker`, ``--update``,
  ``--complexity``, ``--C``, ``--margin``; Table 1's hyperparameters by default) takes the same
  MULAN data, or Enron foldering data (an Enron user such as ``sanders-r``, an archive
  ``<dir>/<user>.mbox.tar.xz`` or a directory of them), on which it reports the percentage of
  online mistakes over each user's chronological stream (:mod:`olboost.ranking_experiments`).

A data set with missing feature values (``?`` in an ARFF file) is run as it is, the missing values
as NaN for the trees to handle; ``olboost run`` first prints how many are missing in which
columns, and adds ``missing_values`` and ``missing_by_column`` to the JSON record.

**Checkpoints.** ``olboost run --checkpoint PATH --checkpoint-every N`` writes the model and the
evaluation's progress to ``PATH`` atomically every ``N`` examples and at the end
(:mod:`olboost.checkpoint`); ``--resume`` continues from it, and the run ends with the model and
the record of an uninterrupted run (timings aside). ``--save-model PATH`` saves the trained model
(:func:`olboost.save`).

**Output.** ``--output PATH`` writes the JSON record atomically; the path is checked before the
run starts, so a bad one fails at once. ``--json`` prints the record to stdout (everything else
then goes to stderr). Progress bars are drawn only when stderr is a terminal. An error is one line
on stderr (``olboost: error: ...``) and exit status 2: a bad option, a missing or unreadable file
(any ``OSError``), bad data.

``olboost reproduce mlr --seeds 10`` runs Ada.OLMR and OnlineBMR (best edge per data set, as the
paper did) on the four bundled MULAN sets and prints the mean test rank loss beside the numbers
published by Jung & Tewari (2018, Table 3). ``olboost reproduce topk --seeds 10`` and ``olboost
reproduce topk-curves`` re-run Tables 1, 2, 4 and Fig. 1 of Raman et al. (2020)
(:mod:`olboost.topk_experiments`); ``olboost reproduce label-ranking`` Table 1 of Shalev-Shwartz &
Singer (2007) (:mod:`olboost.ranking_experiments`). Each ``reproduce`` suite keeps every finished
cell (one run of the table) in a directory beside its output (``<output stem>.cells``, or
``--cells DIR``): a rerun reads the cells done instead of running them again, and says so.

**Adding a command.** :data:`COMMANDS` and :data:`REPRODUCE_SUITES` name the functions that add
each subcommand's parser (``add(subparsers)``, the parser's ``func`` default running it); a new
command is one line there. :class:`HelpFormatter`, :func:`add_output_options`,
:func:`check_output`, :func:`write_record` and :func:`cell_cache` give it the shared behaviour.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from olboost._version import __version__

if TYPE_CHECKING:
    from olboost.checkpoint import CellCache

__all__ = [
    "ALGORITHMS",
    "COMMANDS",
    "COMMITTEES",
    "PUBLISHED_MLR",
    "REPRODUCE_SUITES",
    "HelpFormatter",
    "add_output_options",
    "bmr_gammas",
    "build_parser",
    "cell_cache",
    "check_output",
    "main",
    "plain_text",
    "write_record",
]

#: Mean test rank loss published in Jung & Tewari (2018), Table 3: (Ada.OLMR, best BMR).
PUBLISHED_MLR = {
    "emotions": (0.1600, 0.1654),
    "scene": (0.0881, 0.0743),
    "yeast": (0.1874, 0.1836),
    "mediamill-reduced": (0.0632, 0.0630),
}

#: Random features per weak learner when ``--features`` is not given (Jung & Tewari 2018), or all
#: of them on a data set with fewer.
DEFAULT_FEATURES = 20

#: Examples between two checkpoints when ``--checkpoint-every`` is not given.
DEFAULT_CHECKPOINT_EVERY = 1000

#: Options that do not change a run's numbers: left out of the key that a checkpoint or a
#: finished cell is matched on.
_NOT_RESULTS = frozenset(
    {
        "func", "command", "suite", "record", "output", "json", "no_progress", "checkpoint",
        "checkpoint_every", "resume", "save_model", "cells", "no_cells", "seeds", "datasets",
        "no_bmr",
    }
)  # fmt: skip


def bmr_gammas(n_labels: int) -> tuple[float, ...]:
    """Edges tried for "best BMR" (Jung & Tewari 2018, Table 3, footnote 4)."""
    return (0.05, 0.01, 0.005, 0.001) if n_labels > 14 else (0.2, 0.1, 0.01, 0.001)


@dataclass(frozen=True)
class Algorithm:
    """A CLI algorithm: its task (``"ranking"`` or ``"multiclass"``), how to build it, and
    whether it is a booster over a committee of weak learners."""

    task: str
    build: Callable[[Any, argparse.Namespace], Any]
    committee: bool = True


def _booster(name: str, **options: str) -> Callable[[Any, argparse.Namespace], Any]:
    """Factory of the booster ``olboost.boosters.<name>``: each ``options`` item maps one of its
    parameters to the CLI option holding the value (options left unset keep the default)."""

    def build(committee: Any, args: argparse.Namespace) -> Any:
        import olboost.boosters as boosters

        extra = {
            key: getattr(args, attr)
            for key, attr in options.items()
            if getattr(args, attr) is not None
        }
        return getattr(boosters, name)(committee, learners=args.learners, seed=args.seed, **extra)

    return build


def _label_ranker(committee: Any, args: argparse.Namespace) -> Any:
    """A linear label ranker (no committee; see :mod:`olboost.ranking_experiments`)."""
    from olboost import ranking_experiments

    return ranking_experiments.build_ranker(committee, args)


#: CLI algorithm name -> what it solves and how to build it from a committee and the options.
ALGORITHMS: dict[str, Algorithm] = {
    "ada-olmr": Algorithm("ranking", _booster("AdaOLMR", predict_with="predict_with")),
    "online-bmr": Algorithm(
        "ranking", _booster("OnlineBMR", gamma="gamma", loss="bmr_loss", method="method")
    ),
    "online-mbbm": Algorithm(
        "multiclass", _booster("OnlineMBBM", gamma="gamma", method="method", vote="vote")
    ),
    "adaboost-olm": Algorithm("multiclass", _booster("AdaBoostOLM", loss="olm_loss", vote="vote")),
    "best-tree": Algorithm("multiclass", _booster("BestTree")),
    "oza-boost": Algorithm("multiclass", _booster("OzaBoost")),
    "ova-adaboost-ol": Algorithm("multiclass", _booster("OvaAdaBoostOL", loss="olm_loss")),
    "ada-ova": Algorithm("multiclass", _booster("AdaOVA", loss="olm_loss")),
    "topk-bbm": Algorithm(
        "ranking", _booster("TopkBBM", k="k", exploration="exploration", rho="rho", gamma="gamma")
    ),
    "topk-adaptive": Algorithm(
        "ranking", _booster("TopkAdaptive", k="k", exploration="exploration", rho="rho")
    ),
    "label-ranker": Algorithm("ranking", _label_ranker, committee=False),
}


def _features(args: argparse.Namespace) -> int | None:
    """Features per weak learner: ``--features``, or :data:`DEFAULT_FEATURES` when not given
    (``reproduce multiclass``: ``None``, all of them)."""
    features = getattr(args, "features", None)
    return DEFAULT_FEATURES if features is None else features


def _vfdt(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee(n_features=_features(args), nominal_attributes=nominal or None)


def _river(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.river import RiverCommittee

    return RiverCommittee(n_features=_features(args))


#: CLI committee name -> factory(args, nominal cardinalities).
COMMITTEES: dict[str, Callable[[argparse.Namespace, dict[int, int]], Any]] = {
    "vfdt": _vfdt,
    "river": _river,
}


def _environment() -> dict[str, Any]:
    import numba

    return {
        "olboost_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "machine": platform.machine(),
        "platform": platform.platform(),
    }


# ------------------------------------------------------------------------------------ output


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


def show_progress(args: argparse.Namespace) -> bool:
    """Whether to draw a progress bar: not ``--no-progress``, and stderr is a terminal (a bar
    redirected into a file is noise)."""
    return not getattr(args, "no_progress", False) and _stderr_is_terminal()


#: File names suggested when a path option names a directory.
_EXAMPLE_NAMES = {"--checkpoint": "run.olb", "--save-model": "model.olb"}


def check_output(path: str | os.PathLike[str] | None, option: str = "--output") -> Path | None:
    """Check, before a run, that ``path`` can be written: not a directory, in a directory that
    exists and is writable. Raises the ``OSError`` the write would have raised at the end, naming
    ``option``; returns the path (``None`` for ``None``)."""
    if path is None:
        return None
    target = Path(path)
    where = f"{option} {target}"
    if target.is_dir():
        example = target / _EXAMPLE_NAMES.get(option, "results.json")
        raise IsADirectoryError(
            21, f"is a directory; give a file path, e.g. {option} {example}", where
        )
    parent = target.parent
    if not parent.exists():
        raise FileNotFoundError(2, f"no such directory {parent}", where)
    if not parent.is_dir():
        raise NotADirectoryError(20, f"{parent} is not a directory", where)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(13, f"cannot create files in {parent}", where)
    if target.exists() and not os.access(target, os.W_OK):
        raise PermissionError(13, "the file is not writable", where)
    return target


def write_record(
    args: argparse.Namespace, record: dict[str, Any], path: str | os.PathLike[str] | None = None
) -> None:
    """Write a command's JSON record to ``path`` (default: ``--output``) atomically, and keep it
    for ``--json``, which prints it to stdout when the command is done."""
    target = getattr(args, "output", None) if path is None else path
    if target:
        from olboost.checkpoint import atomic_write

        atomic_write(target, (json.dumps(record, indent=2) + "\n").encode())
    args.record = record


def cell_cache(
    args: argparse.Namespace, output: str | os.PathLike[str] | None, suite: str
) -> CellCache:
    """The :class:`~olboost.checkpoint.CellCache` of a ``reproduce`` suite: ``--cells DIR``, or
    ``<output stem>.cells`` beside ``output``; none with ``--no-cells`` or without an output."""
    from olboost.checkpoint import CellCache

    if getattr(args, "no_cells", False):
        return CellCache(None, suite)
    directory = getattr(args, "cells", None)
    if directory is None and output is not None:
        directory = Path(output).with_suffix(".cells")
    return CellCache(directory, suite)


def cell_key(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """What a run's numbers depend on: the options of ``args`` (those of :data:`_NOT_RESULTS`
    aside), ``extra`` and the olboost version."""
    key = {
        name: value
        for name, value in sorted(vars(args).items())
        if name not in _NOT_RESULTS and not callable(value)
    }
    return {**key, **extra, "olboost": __version__}


def add_output_options(
    p: argparse.ArgumentParser,
    *,
    output: str = "write the results as JSON to this file (checked before the run)",
    progress: bool = True,
    cells: bool = False,
) -> None:
    """``--output``, ``--json``, ``--no-progress`` and, for a ``reproduce`` suite, ``--cells``
    and ``--no-cells``."""
    p.add_argument("--output", metavar="PATH", help=output)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the JSON record to stdout (the other messages go to stderr)",
    )
    if progress:
        p.add_argument(
            "--no-progress",
            action="store_true",
            help="no progress bar (one is drawn only when stderr is a terminal)",
        )
    if cells:
        p.add_argument(
            "--cells",
            metavar="DIR",
            help="directory keeping each finished cell, so that a rerun skips it (default: "
            "beside the output, <output stem>.cells; none without an output)",
        )
        p.add_argument(
            "--no-cells", action="store_true", help="neither read nor write finished cells"
        )


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default in its help, except where there is none to show (``None``, a
    flag's ``False``) or the help says it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default:" in text
            or not action.option_strings
            or default is None
            or default is False
            or default is argparse.SUPPRESS
        ):
            return text
        if isinstance(default, list | tuple):
            shown = " ".join(str(v) for v in default).replace("%", "%%")
            return f"{text} (default: {shown})"
        return f"{text} (default: %(default)s)"


_ROLE = re.compile(r":[a-z]+:`(~?)([^`<]+?)(?:\s*<[^`]*>)?`")


def plain_text(text: str) -> str:
    """reStructuredText inline markup removed, for help texts written as docstrings:
    ``:class:`~a.B``` -> ``B``, ``:func:`a.f``` -> ``a.f``, double back-quotes, ``**bold**``
    and ``*emphasis*`` -> their text.

    >>> plain_text("Top-k BBM (:class:`olboost.TopkBBM`), ``k = 3``, the *shown* ranking")
    'Top-k BBM (olboost.TopkBBM), k = 3, the shown ranking'
    """
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    text = re.sub(r"``(.+?)``", r"\1", text, flags=re.S)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text, flags=re.S)
    return re.sub(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", r"\1", text, flags=re.S)


def error_line(err: BaseException) -> str:
    """An exception as one line: ``<file>: <reason>`` for an ``OSError`` with a file name."""
    if isinstance(err, OSError) and err.strerror:
        text = err.strerror if err.filename is None else f"{err.filename}: {err.strerror}"
        if err.filename2 is not None:
            text += f" (and {err.filename2})"
    else:
        text = str(err) or type(err).__name__
    return " ".join(text.split())


# ------------------------------------------------------------------------------- olboost run


def _check_data_options(args: argparse.Namespace) -> None:
    """``--dataset``, ``--labels`` and ``--test`` checked before anything is read, with errors
    that name the options."""
    multiclass = ALGORITHMS[args.algorithm].task == "multiclass"
    given = [f"--{name}" for name in ("labels", "test") if getattr(args, name, None) is not None]
    if multiclass:
        if given:
            raise ValueError(
                f"{' and '.join(given)}: for multi-label data; {args.algorithm} takes one UCI "
                "data set (--dataset)"
            )
        return
    from olboost.datasets.mulan import BUNDLED, _bundled_name

    if _bundled_name(args.dataset) is not None:
        if given:
            raise ValueError(
                f"{' and '.join(given)}: for data files; {args.dataset} is bundled with its "
                "labels and test split"
            )
        return
    dataset = Path(args.dataset)
    if not dataset.exists():
        if not given:
            raise ValueError(
                f"--dataset {args.dataset}: neither a bundled data set ({', '.join(BUNDLED)}) "
                "nor an existing file"
            )
        raise FileNotFoundError(2, "no such data file", f"--dataset {dataset}")
    if dataset.is_dir():
        raise IsADirectoryError(21, "is a directory, not a data file", f"--dataset {dataset}")
    if args.labels is None:
        raise ValueError(
            f"--dataset {dataset} is a data file: pass --labels with its MULAN XML label file"
        )
    for option in ("labels", "test"):
        value = getattr(args, option)
        if value is not None and not Path(value).is_file():
            what = "MULAN XML label file" if option == "labels" else "test split"
            if Path(value).is_dir():
                raise IsADirectoryError(
                    21, f"is a directory, not the {what}", f"--{option} {value}"
                )
            raise FileNotFoundError(2, f"no such file (the {what})", f"--{option} {value}")


def _load(args: argparse.Namespace) -> Any:
    _check_data_options(args)
    if ALGORITHMS[args.algorithm].task == "multiclass":
        from olboost.datasets import load_uci

        return load_uci(args.dataset)
    from olboost.datasets import load

    return load(args.dataset, args.labels, test=args.test)


def _check_features(args: argparse.Namespace, data: Any, algorithm: Algorithm) -> None:
    features = getattr(args, "features", None)
    if features is None:
        return
    if not algorithm.committee:
        raise ValueError(
            f"--features: for the boosters' weak learners; {args.algorithm} sees every feature"
        )
    if features < 1:
        raise ValueError(f"--features must be >= 1, got {features}")
    if features > data.n_features:
        raise ValueError(
            f"--features {features}: {data.name} has {data.n_features} features, so a weak "
            f"learner sees at most {data.n_features}"
        )


@dataclass
class _RunCheckpoint:
    """``olboost run --checkpoint``: where the run is saved, how often, and the options it must
    be resumed with."""

    path: Path
    every: int
    resume: bool
    key: dict[str, Any]

    def start(self) -> dict[str, Any] | None:
        """The saved state to continue from (``--resume`` and a checkpoint exists), or None."""
        from olboost.checkpoint import load_run

        if not self.resume:
            return None
        if not self.path.exists():
            print(f"olboost: no checkpoint at {self.path} yet: starting from the beginning",
                  file=sys.stderr)  # fmt: skip
            return None
        state = load_run(self.path)
        saved = state.get("run", {})
        if saved != self.key:
            changed = [
                f"{name} {saved.get(name)!r} there, {self.key.get(name)!r} here"
                for name in sorted(set(saved) | set(self.key))
                if saved.get(name) != self.key.get(name)
            ]
            raise ValueError(
                f"--checkpoint {self.path} holds a run with other options ({'; '.join(changed)}): "
                "resume it with the same options, or give another --checkpoint path"
            )
        progress = state["progress"]
        print(
            f"olboost: resuming from {self.path}: {progress.done} of {progress.total} examples "
            "done",
            file=sys.stderr,
        )
        return state

    def save(self, model: Any, progress: Any) -> None:
        from olboost.checkpoint import save_run

        save_run({"model": model, "progress": progress, "run": self.key}, self.path)


def run_one(args: argparse.Namespace, data: Any = None) -> dict[str, Any]:
    """Evaluate ``args.algorithm`` on ``args.dataset``; return the JSON-ready record."""
    return _evaluate(args, data)[0]


def _evaluate(
    args: argparse.Namespace, data: Any = None, checkpoint: _RunCheckpoint | None = None
) -> tuple[dict[str, Any], Any]:
    """:func:`run_one`'s record and the trained model; with ``checkpoint``, saving the run as it
    goes and continuing a saved one."""
    from olboost.evaluate import prequential, resumable, train_test

    algorithm = ALGORITHMS[args.algorithm]
    loops = getattr(args, "loops", 1)
    if data is None:
        data = _load(args)
    if loops != 1 and (algorithm.task == "multiclass" or data.n_train is None):
        raise ValueError(
            f"--loops {loops}: loops stream a train split before the test split; "
            f"{args.algorithm} on {data.name} is evaluated prequentially over one stream "
            "(multi-label data with a train/test split only)"
        )
    _check_features(args, data, algorithm)
    committee = (
        COMMITTEES[args.committee](args, data.nominal_cardinalities)
        if algorithm.committee
        else None
    )
    model = algorithm.build(committee, args)  # bad options fail here, before anything is read
    saved = checkpoint.start() if checkpoint is not None else None
    if saved is not None:
        model = saved["model"]
    progress = show_progress(args)
    extra: dict[str, Any] = {}
    if algorithm.committee:
        extra.update(
            learners=args.learners, committee=args.committee, features_per_learner=_features(args)
        )
    else:  # a linear label ranker
        extra.update(
            update=model.update, complexity=model.complexity, C=model.C, margin=model.margin
        )
    if hasattr(model, "show_one"):  # a top-k feedback booster
        extra.update(k=model.k, exploration=args.exploration, rho=model.explorer_.rho)
    # warm_up: every kernel is compiled (or loaded from Numba's cache) on a clone of the model
    # before the clock starts; that time is reported as compile_seconds, apart from seconds.
    if algorithm.task == "multiclass":
        streams: tuple[Any, ...] = (data.shuffled(args.seed),)
        protocol = "prequential, stream reordered with the seed"
    elif data.n_train is None:
        streams, protocol = (data,), "prequential"
    else:
        streams, protocol = (data.train, data.test), "train_test"
    if checkpoint is not None:
        result = resumable(
            model, *streams, loops=loops, every=checkpoint.every,
            on_checkpoint=lambda state: checkpoint.save(model, state),
            start=None if saved is None else saved["progress"], progress=progress, warm_up=True,
        )  # fmt: skip
    elif len(streams) == 1:
        result = prequential(model, streams[0], progress=progress, warm_up=True)
    else:
        result = train_test(model, *streams, loops=loops, progress=progress, warm_up=True)
    for name in ("gamma", "n_gamma_capped_"):
        if hasattr(model, name):
            extra[name.rstrip("_")] = getattr(model, name)
    if hasattr(model, "best_accuracy_in_hindsight_"):
        # the paper's best single tree is chosen after seeing the whole stream: an oracle
        extra["best_accuracy_in_hindsight"] = model.best_accuracy_in_hindsight_
        extra["oracle"] = True
    record = {
        "algorithm": args.algorithm,
        "dataset": data.name,
        "seed": args.seed,
        "protocol": protocol,
        **extra,
        **result.summary(),
        **_environment(),
    }
    if getattr(args, "curve", False):  # per-example values, last (olboost.plots draws them)
        from olboost.plots import curve_fields

        record.update(curve_fields(result))
    return record, model


def _run_checkpoint(args: argparse.Namespace) -> _RunCheckpoint | None:
    """``--checkpoint``, ``--checkpoint-every`` and ``--resume`` checked before the run."""
    from olboost.checkpoint import remove_stale_temporaries

    every = args.checkpoint_every
    if args.checkpoint is None:
        for option, value in (("--checkpoint-every", every), ("--resume", args.resume or None)):
            if value is not None:
                raise ValueError(f"{option}: needs --checkpoint PATH")
        return None
    if every is not None and every < 1:
        raise ValueError(f"--checkpoint-every must be >= 1, got {every}")
    path = check_output(args.checkpoint, "--checkpoint")
    assert path is not None
    if path.exists() and not args.resume:
        raise FileExistsError(
            17, "exists: pass --resume to continue the run it holds, or remove it to start over",
            f"--checkpoint {path}",
        )  # fmt: skip
    remove_stale_temporaries(path)
    every = DEFAULT_CHECKPOINT_EVERY if every is None else every
    return _RunCheckpoint(path, every, args.resume, cell_key(args))


def _cmd_run(args: argparse.Namespace) -> int:
    from olboost.checkpoint import remove_stale_temporaries

    for option in ("output", "save_model"):
        target = check_output(getattr(args, option), f"--{option.replace('_', '-')}")
        if target is not None:
            remove_stale_temporaries(target)
    if args.algorithm == "label-ranker":
        from olboost import ranking_experiments

        if ranking_experiments.foldering_source(args.dataset) is not None:
            if args.curve:
                raise ValueError("--curve: not recorded on Enron foldering data (MULAN data only)")
            for option in ("checkpoint", "save_model"):
                if getattr(args, option) is not None:
                    raise ValueError(
                        f"--{option.replace('_', '-')}: not for Enron foldering data, whose "
                        "runs (one pass per user, seconds each) are not checkpointed"
                    )
            return ranking_experiments.cmd_run(args)  # Enron foldering: online mistakes
    checkpoint = _run_checkpoint(args)
    data = _load(args)
    counts = data.missing_counts()
    if counts:
        # said before the run, so that a model that cannot take them fails with the reason known
        print(f"{data.name}: {data.missing_summary()}", flush=True)
    record, model = _evaluate(args, data, checkpoint)
    if counts:
        record["missing_values"] = sum(counts.values())
        record["missing_by_column"] = counts
    if args.save_model:
        from olboost.checkpoint import save

        save(model, args.save_model)
    write_record(args, record)
    if "learners" in record:
        head = (
            f"{record['algorithm']} on {record['dataset']} (seed {record['seed']}, "
            f"{record['learners']} learners, {record['committee']}): "
        )
    else:
        head = (
            f"{record['algorithm']} on {record['dataset']} (Update {record['update']}, "
            f"{record['complexity']}, C={record['C']:g}, margin={record['margin']:g}): "
        )
    if "accuracy" in record:
        body = (
            f"accuracy {record['accuracy']:.4f}, final 20% {record['accuracy_last20']:.4f} over "
            f"{record['n_test']} examples"
        )
    else:
        passes = record.get("loops", 1)
        shown = " of the shown rankings" if record.get("feedback") == "topk" else ""
        body = (
            f"rank loss{shown} {record['rank_loss']:.4f} (skip convention "
            f"{record['rank_loss_skip']:.4f}) over {record['n_test']} test examples after "
            f"{record['n_train']} training examples" + (f" x {passes} loops" if passes != 1 else "")
        )
        if "k" in record:
            head += (
                f"top-{record['k']} feedback, {record['exploration']} exploration "
                f"rho={record['rho']:g}: "
            )
    timing = f", {record['seconds']:.2f} s (+ {record['compile_seconds']:.2f} s compile before)"
    print(head + body + timing)
    return 0


# ------------------------------------------------------------------- olboost reproduce mlr


def _mean_over_seeds(
    args: argparse.Namespace, data: Any, cache: Any, **override: Any
) -> dict[str, Any]:
    losses, seconds, compile_s, capped = [], [], 0.0, 0
    for seed in range(1, args.seeds + 1):
        ns = argparse.Namespace(**{**vars(args), **override, "seed": seed})
        record = cache.run(cell_key(ns, suite="mlr"), lambda ns=ns: run_one(ns, data))
        losses.append(record["rank_loss"])
        seconds.append(record["seconds"])
        compile_s += record["compile_seconds"]
        capped += record.get("n_gamma_capped", 0)
    return {
        "rank_loss_mean": float(np.mean(losses)),
        "rank_loss_std": float(np.std(losses, ddof=1)) if len(losses) > 1 else 0.0,
        "rank_loss_per_seed": losses,
        "seconds_mean": float(np.mean(seconds)),
        "compile_seconds": compile_s,
        "n_gamma_capped": capped,
    }


def _check_positive(args: argparse.Namespace, *names: str) -> None:
    for name in names:
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {value}")


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from olboost.datasets import load

    check_output(args.output)
    _check_positive(args, "seeds", "learners", "features")
    cache = cell_cache(args, args.output, "mlr")
    print(
        f"{args.learners} learners, {args.committee} committee, {_features(args)} features each; "
        f"mean test rank loss over seeds 1..{args.seeds} (published: Jung & Tewari 2018, Table 3)"
    )
    print(
        f"{'data':<18}{'Ada.OLMR':>9}{'± sd':>8}{'published':>10}{'s/run':>7}"
        f"{'best BMR':>10}{'± sd':>8}{'gamma':>7}{'published':>10}{'s/run':>7}"
    )
    rows = []
    for name in args.datasets:
        data = load(name)
        ada = _mean_over_seeds(args, data, cache, algorithm="ada-olmr", dataset=name)
        bmr: dict[float, dict[str, Any]] = {}
        if not args.no_bmr:
            for gamma in bmr_gammas(data.n_labels):
                bmr[gamma] = _mean_over_seeds(
                    args, data, cache, algorithm="online-bmr", dataset=name, gamma=gamma
                )
        best = min(bmr, key=lambda g: bmr[g]["rank_loss_mean"]) if bmr else None
        pub_ada, pub_bmr = PUBLISHED_MLR.get(name, (None, None))
        rows.append(
            {
                "dataset": name,
                "seeds": args.seeds,
                "ada_olmr": ada,
                "published_ada_olmr": pub_ada,
                "online_bmr_by_gamma": {str(g): r for g, r in bmr.items()},
                "best_bmr_gamma": best,
                "published_best_bmr": pub_bmr,
            }
        )
        line = (
            f"{name:<18}{ada['rank_loss_mean']:>9.4f}{ada['rank_loss_std']:>8.4f}"
            f"{_fmt(pub_ada):>10}{ada['seconds_mean']:>7.2f}"
        )
        if best is not None:
            b = bmr[best]
            line += (
                f"{b['rank_loss_mean']:>10.4f}{b['rank_loss_std']:>8.4f}{best:>7g}"
                f"{_fmt(pub_bmr):>10}{b['seconds_mean']:>7.2f}"
            )
        print(line, flush=True)
    compile_s = sum(
        r["ada_olmr"]["compile_seconds"]
        + sum(b["compile_seconds"] for b in r["online_bmr_by_gamma"].values())
        for r in rows
    )
    print(f"s/run excludes compiling: {compile_s:.2f} s in all, before the clocks started")
    if cache.summary():
        print(cache.summary())
    write_record(
        args, {"suite": "mlr", "rows": rows, "compile_seconds": compile_s, **_environment()}
    )
    return 0


# ------------------------------------------------------------ olboost reproduce multiclass


def _cmd_reproduce_multiclass(args: argparse.Namespace) -> int:
    from olboost import experiments as ex

    check_output(args.output)
    _check_positive(args, "reorderings", "learners", "features")
    columns = args.columns or list(ex.COLUMNS)
    unknown = [c for c in columns if c not in ex.COLUMNS]
    if unknown:
        raise ValueError(f"unknown columns {unknown}; choose from {list(ex.COLUMNS)}")
    unknown = [d for d in args.datasets if d not in ex.PUBLISHED["full"]]
    if unknown:
        raise ValueError(f"unknown data sets {unknown}; choose from {list(ex.PUBLISHED['full'])}")
    cache = cell_cache(args, args.output, "multiclass")
    bar = None
    if show_progress(args):
        from tqdm.auto import tqdm

        bar = tqdm(desc="runs", file=sys.stderr, unit="run", leave=False)
    results: dict[str, dict[str, Any]] = {}
    for name in args.datasets:
        data = ex.load_experiment_data(name, args.har)
        if data is None:
            why = "not available here" if name == "isolet" else "pass --har PATH to include it"
            results[name] = {"missing": why}
            print(f"{name}: skipped ({why})", flush=True)
            continue
        if args.features is not None and args.features > data.n_features:
            raise ValueError(
                f"--features {args.features}: {name} has {data.n_features} features, so a weak "
                f"learner sees at most {data.n_features}"
            )
        n_reorder = min(args.reorderings, ex.PAPER_REORDERINGS.get(name, args.reorderings))
        results[name] = {}
        for column in columns:
            runs = []
            for r in range(1, n_reorder + 1):
                key = {
                    "suite": "multiclass", "dataset": name, "rows": data.n_samples,
                    "har": args.har if name == "movement" else None, "column": column,
                    "reordering": r, "learners": args.learners, "features": args.features,
                    "olboost": __version__,
                }  # fmt: skip
                cell = cache.run(
                    key,
                    lambda c=column, r=r, d=data: asdict(
                        ex.run_column(c, d, r, learners=args.learners, n_features=args.features)
                    ),
                )
                runs.append(ex.MulticlassRun(**cell))
                if bar is not None:
                    bar.update(1)
            results[name][column] = ex.summarize(runs)
            got = results[name][column]
            print(
                f"{name:<9} {column:<8} final 20% {got['accuracy_last20']:.3f} "
                f"(paper {ex.PUBLISHED['final20'][name][column]:.3f})  full "
                f"{got['accuracy']:.3f} (paper {ex.PUBLISHED['full'][name][column]:.3f})  "
                f"{got['seconds']:.2f} s (paper {ex.PUBLISHED['seconds'][name][column]:g} s, "
                f"+ {got['compile_seconds']:.2f} s compile)  [{n_reorder} reorderings]",
                flush=True,
            )
    if bar is not None:
        bar.close()
    for table, key_name, title in [
        ("final20", "accuracy_last20", "Table 3: accuracy on the final 20% (ours / paper)"),
        ("full", "accuracy", "Table 4: accuracy on the whole stream (ours / paper)"),
        ("seconds", "seconds", "Table 5: run time in seconds, compiling excluded (ours / paper)"),
    ]:
        print(f"\n{title}")
        print(f"{'data':<10}" + "".join(f"{c:>15}" for c in columns))
        for name in args.datasets:
            got = results[name]
            cells = []
            for c in columns:
                pub = ex.PUBLISHED[table][name][c]
                mine = (
                    "n/a"
                    if "missing" in got
                    else (
                        f"{got[c][key_name]:.2f}"
                        if table == "seconds"
                        else f"{got[c][key_name]:.3f}"
                    )
                )
                cells.append(
                    f"{mine + ' / ' + (f'{pub:g}' if table == 'seconds' else f'{pub:.3f}'):>15}"
                )
            print(f"{name:<10}" + "".join(cells))
    if cache.summary():
        print(cache.summary())
    write_record(
        args,
        {
            "suite": "multiclass",
            "results": results,
            "compile_seconds": sum(
                cell["compile_seconds"]
                for got in results.values()
                for cell in got.values()
                if isinstance(cell, dict)
            ),
            "published": ex.PUBLISHED,
            **_environment(),
        },
    )
    return 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


# ---------------------------------------------------------------------------------- parsers


def _add_committee_options(p: argparse.ArgumentParser, committee: bool = True) -> None:
    p.add_argument("--learners", type=int, default=100, help="number N of weak learners")
    if committee:
        p.add_argument(
            "--committee",
            choices=sorted(COMMITTEES),
            default="vfdt",
            help="vfdt: compiled Hoeffding trees (fast); river: River HoeffdingTreeClassifier",
        )
    p.add_argument(
        "--features",
        type=int,
        help=f"random features per weak learner (default: {DEFAULT_FEATURES}, or all of a data "
        "set with fewer; more than the data set has is an error)",
    )


def _add_ranking_options(p: argparse.ArgumentParser, gamma: bool = True) -> None:
    p.add_argument(
        "--predict-with",
        choices=["sampled", "best"],
        default="sampled",
        help="Ada.OLMR: expert chosen by a Hedge draw (paper) or the best Hedge weight",
    )
    if gamma:
        p.add_argument(
            "--gamma", type=float, default=0.1, help="edge of online-bmr/online-mbbm/topk-bbm"
        )
    p.add_argument(
        "--bmr-loss",
        choices=["hinge", "rank", "hinge_no_margin"],
        default="hinge",
        help="loss behind OnlineBMR's potentials",
    )
    p.add_argument(
        "--method",
        choices=["exact", "monte_carlo"],
        default="exact",
        help="potentials of online-bmr/online-mbbm: exact or Monte Carlo (100 draws)",
    )


def _add_multiclass_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--olm-loss",
        choices=["logistic", "exponential", "square_hinge"],
        default="logistic",
        help="surrogate loss of adaboost-olm and the one-vs-all boosters (App. D)",
    )
    p.add_argument(
        "--vote",
        choices=["argmax", "expected_cost", "proba"],
        help="weak predictions of online-mbbm/adaboost-olm: argmax of the learner's distribution "
        "(default), class of least expected cost (the authors' code), or the distribution "
        "(adaboost-olm only)",
    )


def _add_topk_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--k",
        type=int,
        default=3,
        help="topk-bbm/topk-adaptive: labels shown, whose relevance is revealed (2 <= k <= m; "
        "3 with single-swap) (default: %(default)s)",
    )
    p.add_argument(
        "--exploration",
        choices=["uniform", "single-swap"],
        default="uniform",
        help="topk-bbm/topk-adaptive: randomisation of the shown ranking, uniform (Sec. 2.2) or "
        "single-swap (App. B.1) (default: %(default)s)",
    )
    p.add_argument(
        "--rho",
        type=float,
        default=0.02,
        help="topk-bbm/topk-adaptive: exploration rate in (0, 1); < 0.25 with single-swap "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--loops",
        type=int,
        default=1,
        help="passes over the train split before the test split (data with a train/test split; "
        "Raman et al. 2020 use up to 20 for the top-k algorithms) (default: %(default)s)",
    )


def _add_checkpoint_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="save the model and the evaluation's progress to this file, atomically, every "
        "--checkpoint-every examples and at the end (an existing file needs --resume)",
    )
    p.add_argument(
        "--checkpoint-every",
        type=int,
        metavar="N",
        help=f"examples between two checkpoints (default: {DEFAULT_CHECKPOINT_EVERY})",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue from --checkpoint (from the beginning if it does not exist yet); the "
        "options must be those of the saved run",
    )
    p.add_argument(
        "--save-model",
        metavar="PATH",
        help="save the trained model to this file (olboost.save; olboost.load reads it)",
    )


_RUN_DESCRIPTION = """\
Evaluate one algorithm on one data set: rank loss (multi-label ranking, top-k feedback), accuracy
(multiclass) or online mistakes (label-ranker on Enron foldering data). Multi-label data with a
train/test split are evaluated with the papers' train/test protocol, a single stream
prequentially."""


def _add_run(sub: Any) -> None:
    from olboost import ranking_experiments

    run = sub.add_parser(
        "run",
        help="evaluate one algorithm on one data set",
        description=_RUN_DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    run.add_argument(
        "--algorithm", choices=sorted(ALGORITHMS), default="ada-olmr", help="what to evaluate"
    )
    run.add_argument(
        "--dataset",
        required=True,
        help="bundled name or path to a data file; for label-ranker also an Enron user "
        "(e.g. sanders-r), <dir>/<user>.mbox.tar.xz or a directory of such archives",
    )
    run.add_argument("--labels", help="MULAN XML label file (required with an ARFF path)")
    run.add_argument("--test", help="ARFF file of a separate test split (paper protocol)")
    run.add_argument("--seed", type=int, default=1, help="seed of the model (and reordering)")
    _add_committee_options(run)
    _add_ranking_options(run)
    _add_multiclass_options(run)
    _add_topk_options(run)
    ranking_experiments.add_run_options(run)
    _add_checkpoint_options(run)
    run.add_argument(
        "--curve",
        action="store_true",
        help="add the loss (or correctness) of every example, in stream order, to the JSON record "
        "(olboost plot draws it)",
    )
    add_output_options(run)
    run.set_defaults(func=_cmd_run)


def _add_mlr(sub: Any) -> None:
    mlr = sub.add_parser(
        "mlr",
        help="Jung & Tewari 2018, Table 3 (MULAN sets)",
        description="Jung & Tewari (2018), Table 3: Ada.OLMR and OnlineBMR (the best of four "
        "edges per data set, as the paper chose) on the bundled MULAN sets, with the train/test "
        "protocol; the mean test rank loss over seeds beside the published numbers.",
        formatter_class=HelpFormatter,
    )
    mlr.add_argument("--seeds", type=int, default=10, help="seeds 1..N per data set")
    mlr.add_argument(
        "--datasets", nargs="+", default=list(PUBLISHED_MLR), help="bundled data sets to run"
    )
    mlr.add_argument("--no-bmr", action="store_true", help="skip the best-BMR column")
    _add_committee_options(mlr)
    _add_ranking_options(mlr, gamma=False)
    add_output_options(mlr, cells=True)
    mlr.set_defaults(func=_cmd_reproduce, algorithm="ada-olmr", labels=None, test=None)


def _add_multiclass(sub: Any) -> None:
    mc = sub.add_parser(
        "multiclass",
        help="Jung, Goetz & Tewari 2017, Tables 3-5 (UCI sets)",
        description="Jung, Goetz & Tewari (2017), Tables 3, 4 and 5: every column's booster "
        "with VFDT weak learners seeing every attribute, prequentially on reorderings of each "
        "UCI stream; accuracy on the final 20% and on the whole stream, and seconds, beside the "
        "published numbers.",
        formatter_class=HelpFormatter,
    )
    mc.add_argument("--reorderings", type=int, default=27, help="reorderings per data set")
    mc.add_argument(
        "--datasets",
        nargs="+",
        default=["balance", "mice", "car", "mushroom", "nursery", "isolet", "movement"],
        help="data sets (table rows)",
    )
    mc.add_argument("--columns", nargs="+", help="table columns to run (default: all)")
    mc.add_argument("--har", help="path to dataset-har-PUC-Rio-ugulino.csv(.gz) (Movement)")
    mc.add_argument("--learners", type=int, default=100, help="number N of weak learners")
    # the multiclass paper's trees see every attribute (see olboost.experiments.run_column)
    mc.add_argument("--features", type=int, help="random features per weak learner (default: all)")
    add_output_options(mc, cells=True)
    mc.set_defaults(func=_cmd_reproduce_multiclass)


#: ``olboost reproduce`` suites: ``"module:function"`` adding the suite's parser(s) to the
#: ``reproduce`` subparsers, in help order.
REPRODUCE_SUITES: tuple[str, ...] = (
    "olboost.cli:_add_mlr",
    "olboost.cli:_add_multiclass",
    "olboost.topk_experiments:add_parsers",  # topk and topk-curves
    "olboost.ranking_experiments:add_parser",  # label-ranking
)


def _add_reproduce(sub: Any) -> None:
    rep = sub.add_parser(
        "reproduce",
        help="re-run a table of the papers",
        description="Re-run the tables of the papers beside their published numbers. Each "
        "finished cell is kept beside the output, so that a rerun skips it.",
        formatter_class=HelpFormatter,
    )
    rep_sub = rep.add_subparsers(dest="suite", required=True, metavar="SUITE")
    for name in REPRODUCE_SUITES:
        _resolve(name)(rep_sub)


#: Top-level commands: ``"module:function"`` adding the command's parser to ``olboost``'s
#: subparsers, in help order. A new command is one more line (its module is imported when the
#: parser is built).
COMMANDS: tuple[str, ...] = (
    "olboost.cli:_add_run",
    "olboost.cli:_add_reproduce",
    "olboost.plots:add_parsers",  # plot
    "olboost.sweep:add_parsers",  # sweep
    "olboost.serve.commands:add_parsers",  # serve and simulate
)


def _resolve(name: str) -> Callable[[Any], None]:
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


_DESCRIPTION = """\
olboost: online boosting for multiclass classification and multi-label ranking. Run
'olboost COMMAND --help' for the options of a command."""


def build_parser() -> argparse.ArgumentParser:
    """The ``olboost`` parser, with every command of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="olboost", description=_DESCRIPTION, formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"olboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        _resolve(name)(sub)
    return parser


def _drop_stdout() -> None:
    """Point the process's stdout at the null device, so that flushing it at exit does not fail
    again on a closed pipe (only for the real stdout)."""
    if sys.stdout is sys.__stdout__ and sys.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``olboost`` command; returns the exit status (2 on an error, said in
    one line on stderr)."""
    args = build_parser().parse_args(argv)
    try:
        if not getattr(args, "json", False):
            return args.func(args)
        with contextlib.redirect_stdout(sys.stderr):
            code = args.func(args)
        if code == 0 and getattr(args, "record", None) is not None:
            print(json.dumps(args.record, indent=2), flush=True)
        return code
    except KeyboardInterrupt:
        print("olboost: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout closed early (olboost ... --json | head): nothing to say
        _drop_stdout()
        return 141
    except (OSError, ValueError, TypeError, ImportError) as err:
        print(f"olboost: error: {error_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
