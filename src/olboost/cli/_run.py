"""``olboost run``: the data options checked and the data loaded, the checkpoints, the evaluation
of one algorithm on one data set (:func:`run_one`, also a sweep task's) and the command's parser."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olboost.cli._algorithms import (
    ALGORITHMS,
    COMMITTEES,
    DEFAULT_FEATURES,
    Algorithm,
    _add_committee_options,
    _add_multiclass_options,
    _add_ranking_options,
    _add_topk_options,
)
from olboost.cli._shared import (
    HelpFormatter,
    _environment,
    add_output_options,
    cell_key,
    check_output,
    refuse_overwriting,
    show_progress,
    write_record,
)

#: Examples between two checkpoints when ``--checkpoint-every`` is not given.
DEFAULT_CHECKPOINT_EVERY = 1000


def _check_data_options(args: argparse.Namespace) -> None:
    """``--dataset``, ``--labels`` and ``--test`` checked before anything is read, with errors
    that name the options."""
    from olboost.datasets.mulan import BUNDLED, _bundled_name
    from olboost.datasets.uci import BUNDLED_UCI
    from olboost.datasets.uci import _bundled_name as _uci_name

    multiclass = ALGORITHMS[args.algorithm].task == "multiclass"
    given = [f"--{name}" for name in ("labels", "test") if getattr(args, name, None) is not None]
    # a bundled set of the other task was "neither a bundled data set nor an existing file"
    other = _bundled_name if multiclass else _uci_name
    if other(args.dataset) is not None and not Path(args.dataset).exists():
        kind, takes = ("multi-label", BUNDLED_UCI) if multiclass else ("multiclass", BUNDLED)
        tasks = [n for n, a in ALGORITHMS.items() if (a.task == "multiclass") != multiclass]
        raise ValueError(
            f"--dataset {args.dataset}: a bundled {kind} data set, for {', '.join(tasks)}; "
            f"{args.algorithm} takes {', '.join(takes)} or a data file"
        )
    if multiclass:
        if given:
            raise ValueError(
                f"{' and '.join(given)}: for multi-label data; {args.algorithm} takes one UCI "
                "data set (--dataset)"
            )
        return

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
            enron = ""
            if args.algorithm == "label-ranker":  # which also reads Enron foldering data
                from olboost.datasets.enron import ENRON_USERS

                enron = (
                    f", an Enron user ({', '.join(ENRON_USERS)}), a directory of "
                    "<user>.mbox.tar.xz archives"
                )
            raise ValueError(
                f"--dataset {args.dataset}: neither a bundled data set ({', '.join(BUNDLED)})"
                f"{enron} nor an existing file"
            )
        raise FileNotFoundError(2, "no such data file", f"--dataset {dataset}")
    if dataset.is_dir():
        what = "is a directory, not a data file"
        if args.algorithm == "label-ranker":
            what += " (nor a directory holding <user>.mbox.tar.xz archives)"
        raise IsADirectoryError(21, what, f"--dataset {dataset}")
    if args.labels is None:
        raise ValueError(
            f"--dataset {dataset} is a data file: pass --labels with its MULAN XML label file"
        )
    for option in ("labels", "test"):
        value = getattr(args, option)
        # not is_file(): a named pipe or a shell's process substitution is read too
        if value is not None and (Path(value).is_dir() or not Path(value).exists()):
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
    lock: Any  # the ProcessLock on PATH.lock, held for the run
    _said_moved: bool = False

    def start(
        self, n_features: int | None = None, model: Any = None, algorithm: str | None = None
    ) -> dict[str, Any] | None:
        """The saved state to continue from (``--resume`` and a checkpoint exists), or None;
        ``n_features`` those of the run's data, which an unset ``--features`` resolves on;
        ``model`` the one ``--algorithm`` (``algorithm``) builds, whose class the saved one must
        have."""
        from olboost.checkpoint import load_run

        if not self.resume:
            return None
        if not self.path.exists():
            print(f"olboost: no checkpoint at {self.path} yet: starting from the beginning",
                  file=sys.stderr)  # fmt: skip
            return None

        def check_header(saved: dict[str, Any]) -> None:
            # the options first, from the header: a model of hundreds of megabytes was
            # unpickled (seconds, and code run) before a run with other options was refused
            if _canonical(_effective(saved, n_features)) != _canonical(
                _effective(self.key, n_features)
            ):
                self._same_options(saved, n_features)

        state = load_run(self.path, check_header)
        saved = state.get("run")
        if not isinstance(saved, dict) or "algorithm" not in saved or "progress" not in state:
            raise ValueError(
                f"--checkpoint {self.path}: not a checkpoint of olboost run (a run file written "
                "by another program, or by olboost.checkpoint.save_run)"
            )
        self._same_options(saved, n_features)
        if model is not None and type(state.get("model")) is not type(model):
            # the options in the file are this run's, its model is not what they build (a file
            # written by olboost.checkpoint.save_run around another model)
            raise ValueError(
                f"--checkpoint {self.path} holds a {type(state.get('model')).__name__}, not "
                f"the {type(model).__name__} of --algorithm {algorithm}"
            )
        progress = state["progress"]
        print(
            f"olboost: resuming from {self.path}: {progress.done} of {progress.total} examples "
            "done",
            file=sys.stderr,
        )
        return state

    def _same_options(self, saved: dict[str, Any], n_features: int | None) -> None:
        """Raise unless the saved run's options ``saved`` are this run's."""
        saved, key = _effective(saved, n_features), _effective(self.key, n_features)
        names = [n for n in sorted(set(saved) | set(key)) if saved.get(n) != key.get(n)]
        # an input file moved or renamed, its bytes the same (its digest): the same run (a
        # checkpoint taken to another machine could not be resumed)
        moved = [n for n in names if _same_digest(saved, key, n)]
        if moved and not self._said_moved:  # (compared from the header, then the payload)
            self._said_moved = True
            print(f"olboost: {', '.join('--' + n for n in moved)} moved since the checkpoint "
                  "(the same bytes): resuming", file=sys.stderr)  # fmt: skip
        names = [n for n in names if n not in moved]
        if names == ["olboost"]:  # no option of the command line changes that
            raise ValueError(
                f"--checkpoint {self.path} holds a run of another olboost version "
                f"({saved.get('olboost')!r} there, {key.get('olboost')!r} here): resume it with "
                "that version, or give another --checkpoint path"
            )
        if names:
            changed = [f"{n} {saved.get(n)!r} there, {key.get(n)!r} here" for n in names]
            raise ValueError(
                f"--checkpoint {self.path} holds a run with other options ({'; '.join(changed)}): "
                "resume it with the same options, or give another --checkpoint path"
            )

    def save(self, model: Any, progress: Any) -> None:
        from olboost.checkpoint import save_run

        save_run({"model": model, "progress": progress, "run": self.key}, self.path)


def _same_digest(saved: dict[str, Any], key: dict[str, Any], name: str) -> bool:
    """Whether the input file ``name`` of two runs' options has the same digest in both."""
    digest = saved.get(f"{name}_sha256")
    return digest is not None and digest == key.get(f"{name}_sha256")


def _canonical(key: dict[str, Any]) -> str:
    """``key`` as the header of a run checkpoint holds it (JSON: a tuple is a list there)."""
    return json.dumps(key, sort_keys=True, default=repr)


def _effective(key: dict[str, Any], n_features: int | None = None) -> dict[str, Any]:
    """A run's options as they act (as :func:`run_configuration` resolves them): no
    ``--features`` is :data:`DEFAULT_FEATURES` of them, or all ``n_features`` of a data set
    with fewer; no ``--C`` or ``--margin`` of a label ranker is its complexity's default, no
    ``--scale`` is ``minmax`` (and a checkpoint from before ``--scale`` ran unscaled); and no
    ``--vote`` (as checkpoints before 712fe11 recorded it) is its default, ``argmax``."""
    if key.get("features", 0) is None:
        key = {**key, "features": _features_acting(None, n_features)}
    if "vote" in key and key["vote"] is None:
        key = {**key, "vote": "argmax"}
    if key.get("algorithm") == "label-ranker":
        from olboost.ranking_experiments import HYPERPARAMETERS, ranker_options

        if key.get("complexity") in HYPERPARAMETERS:
            given = argparse.Namespace(
                complexity=key["complexity"], C=key.get("C"), margin=key.get("margin")
            )
            C, margin = ranker_options(given)
            key = {**key, "C": C, "margin": margin}
        from olboost.ranking_experiments import ranker_scale

        key = {**key, "scale": ranker_scale(key["scale"]) if "scale" in key else "none"}
    return key


def _features_acting(given: int | None, n_features: int | None) -> int:
    """``--features`` as it acts: :data:`DEFAULT_FEATURES` when not ``given``, and at most the
    data set's ``n_features`` (when known): a learner sees all the features of a set with
    fewer."""
    features = DEFAULT_FEATURES if given is None else given
    return features if n_features is None else min(features, n_features)


def run_one(args: argparse.Namespace, data: Any = None) -> dict[str, Any]:
    """Evaluate ``args.algorithm`` on ``args.dataset``; return the JSON-ready record."""
    return _evaluate(args, data)[0]


def prepare_run(args: argparse.Namespace, data: Any = None) -> tuple[Any, Any]:
    """What :func:`run_one` checks before it evaluates anything: the data (read unless given),
    ``--loops`` and ``--features`` against it, and the model the options build (bad options
    raise here). Returns ``(data, model)``; nothing is learned."""
    algorithm = ALGORITHMS[args.algorithm]
    algorithm.check_options(args.algorithm, args)
    if "fields" in getattr(args, "given_options", ()):
        # label-ranker takes it, but only Enron foldering data (run apart) have header fields
        raise ValueError(f"--fields: for Enron foldering data; {args.dataset} has no header fields")
    loops = getattr(args, "loops", 1)
    if data is None:
        data = _load(args)
    from olboost.evaluate._loops import require_outputs

    # before the model is built and warmed up: the CLI's models take the data set's classes or
    # labels, so one class or label is bad data, said in one line like the loaders' errors
    try:
        require_outputs(data)
    except ValueError as err:
        raise ValueError(f"--dataset {args.dataset}: {err}") from None
    if loops < 1:
        raise ValueError(f"--loops must be >= 1, got {loops}")
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
    return data, algorithm.build(committee, args)


def run_streams(args: argparse.Namespace, data: Any) -> tuple[tuple[Any, ...], str]:
    """The streams ``olboost run`` evaluates on (one, prequential; or train and test) and the
    name of its protocol."""
    if ALGORITHMS[args.algorithm].task == "multiclass":
        return (data.shuffled(args.seed),), "prequential, stream reordered with the seed"
    if data.n_train is None:
        return (data,), "prequential"
    return (data.train, data.test), "train_test"


def check_run_data(args: argparse.Namespace, data: Any, model: Any) -> None:
    """What the evaluation checks of the data before the model learns anything (the rows the
    model would refuse, outputs that do not fit its parameters), for a caller that checks a run
    without running it (a sweep's spec)."""
    from olboost.evaluate._loops import check_splits

    streams, _ = run_streams(args, data)
    roles = ("stream",) if len(streams) == 1 else ("train split", "test split")
    check_splits(model, list(zip(roles, streams, strict=True)))


def run_configuration(args: argparse.Namespace, data: Any, model: Any) -> dict[str, Any]:
    """The options a run's record says it ran with, as they act (defaults resolved against
    ``data`` and the ``model`` that :func:`prepare_run` built): the whole configuration, by
    which plots group runs and a sweep finds one run named twice."""
    algorithm = ALGORITHMS[args.algorithm]
    extra: dict[str, Any] = {}
    if algorithm.committee:
        features = _features_acting(getattr(args, "features", None), data.n_features)
        extra.update(
            learners=args.learners, committee=args.committee, features_per_learner=features
        )
    else:  # a linear label ranker
        extra.update(
            update=model.update,
            complexity=model.complexity,
            C=model.C,
            margin=model.margin,
            scale=model.scale,
        )
    if hasattr(model, "show_one"):  # a top-k feedback booster
        extra.update(k=model.k, exploration=args.exploration, rho=model.explorer_.rho)
    # every option of the algorithm, so that the record says the whole configuration (a
    # sweep's record and olboost run's of one configuration are alike)
    for dest in algorithm.options:
        if dest != "fields":  # header fields of Enron foldering data, which run apart
            extra.setdefault(dest, getattr(args, dest))
    return extra


def _evaluate(
    args: argparse.Namespace, data: Any = None, checkpoint: _RunCheckpoint | None = None
) -> tuple[dict[str, Any], Any]:
    """:func:`run_one`'s record and the trained model; with ``checkpoint``, saving the run as it
    goes and continuing a saved one."""
    from olboost.evaluate import prequential, resumable, train_test

    loops = getattr(args, "loops", 1)
    data, model = prepare_run(args, data)  # bad options fail here, before anything is learned
    saved = None
    if checkpoint is not None:
        saved = checkpoint.start(data.n_features, model, args.algorithm)
    if saved is not None:
        model = saved["model"]
    progress = show_progress(args)
    extra = run_configuration(args, data, model)
    # warm_up: every kernel is compiled (or loaded from Numba's cache) on a clone of the model
    # before the clock starts; that time is reported as compile_seconds, apart from seconds.
    streams, protocol = run_streams(args, data)
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


def add_missing_values(record: dict[str, Any], data: Any) -> None:
    """Add to a run's ``record``, as ``olboost run`` and a sweep task record them:
    ``missing_values`` (their total) and ``missing_by_column`` when ``data`` has missing values
    (NaN), and ``missing_handling`` when its loader replaced them (``load_uci``'s ``missing``,
    e.g. mice's empty cells replaced by 0 as in the paper), so that none are left to count."""
    counts = data.missing_counts()
    if counts:
        record["missing_values"] = sum(counts.values())
        record["missing_by_column"] = counts
    handled = getattr(data, "missing", "none")
    if handled != "none":
        record["missing_handling"] = handled


def _run_checkpoint(args: argparse.Namespace) -> _RunCheckpoint | None:
    """``--checkpoint``, ``--checkpoint-every`` and ``--resume`` checked before the run."""
    from olboost._atomic import followed, short_name
    from olboost._lock import ProcessLock
    from olboost.checkpoint import file_kind, remove_stale_temporaries

    every = args.checkpoint_every
    if args.checkpoint is None:
        for option, value in (("--checkpoint-every", every), ("--resume", args.resume or None)):
            if value is not None:
                raise ValueError(f"{option}: needs --checkpoint PATH")
        return None
    if every is not None and every < 1:
        raise ValueError(f"--checkpoint-every must be >= 1, got {every}")
    from olboost._atomic import special_file

    for option in ("dataset", "labels", "test"):
        value = getattr(args, option, None)
        if value is not None and special_file(value):
            # a pipe is read once, and a checkpoint knows its inputs by their bytes' digest
            raise ValueError(
                f"--checkpoint: --{option} {value} is not a regular file (a pipe?); a "
                "checkpointed run reads its input files again when it resumes"
            )
    if special_file(args.checkpoint):
        raise ValueError(
            f"--checkpoint {args.checkpoint}: not a regular file (a device or a pipe); a "
            "checkpoint is a file the run reads back when it resumes"
        )
    path = check_output(args.checkpoint, "--checkpoint")
    assert path is not None
    # before the first checkpoint is written, a second run on the file saw none, started too,
    # and the two overwrote each other's checkpoints; the lock file goes with the run
    # beside the file written, a symbolic link's target: two runs through two names of one
    # file took two locks. A long name's lock is cut, as its temporaries' names are.
    written = followed(path)
    lock = ProcessLock(
        written.with_name(short_name(written.name) + ".lock"),
        lambda pid: (
            f"--checkpoint {path}: in use by another olboost run (process {pid}); wait "
            "for it to end, or give another file"
        ),
        remove=True,
    )
    try:
        if path.exists() and not args.resume:
            # --resume was advised for any file, then failed on a saved model: "an olboost
            # model file, not a run checkpoint"
            kind = file_kind(path)
            raise FileExistsError(
                17,
                "exists: pass --resume to continue the run it holds, or remove it to start over"
                if kind == "run"
                else "exists and holds no run to resume ("
                + ("a saved model" if kind == "model" else "not an olboost run checkpoint")
                + "): give --checkpoint another file, or remove it",
                f"--checkpoint {path}",
            )
        remove_stale_temporaries(path)
        every = DEFAULT_CHECKPOINT_EVERY if every is None else every
        return _RunCheckpoint(path, every, args.resume, cell_key(args, **_input_files(args)), lock)
    except BaseException:
        lock.release()
        raise


def _input_files(args: argparse.Namespace) -> dict[str, str]:
    """The input files of a run as its checkpoint knows them: each by its absolute path (the
    same file spelled ``./d.arff`` or in full was another run), and by a digest of its bytes
    (``<option>_sha256``): a file changed in place, with as many rows, was resumed, and the
    run then mixed the old data with the new. A bundled data set is known by its name."""
    files: dict[str, str] = {}
    for option, path in _input_paths(args):
        files[option] = str(path)
        with path.open("rb") as f:
            files[f"{option}_sha256"] = hashlib.file_digest(f, "sha256").hexdigest()
    return files


def _input_paths(args: argparse.Namespace) -> Iterator[tuple[str, Path]]:
    """``(option, absolute path)`` of each of ``--dataset``, ``--labels`` and ``--test`` that
    names a file (not a bundled data set's name, nor a directory of Enron archives)."""
    for option in ("dataset", "labels", "test"):
        value = getattr(args, option, None)
        if value is not None and Path(value).is_file():
            yield option, Path(value).resolve()


def _check_distinct_files(args: argparse.Namespace) -> None:
    """Refuse a run whose ``--test`` file is its ``--dataset`` file, or whose outputs
    (``--output``, ``--save-model``, ``--checkpoint``) name the same file, or one of its input
    files (``--dataset``, ``--labels``, ``--test``, and the archives of Enron foldering data
    that ``--dataset`` names as a directory or a user): the last write would replace the
    others (a checkpoint the same command could no longer resume, a model replaced by the JSON
    record, a data file by either)."""
    inputs = dict(_input_paths(args))
    if "test" in inputs and "dataset" in inputs and inputs["test"].samefile(inputs["dataset"]):
        # the train/test protocol then scores the model on the rows it learned: an optimistic
        # loss that nothing marked
        raise ValueError(
            f"--test {args.test}: the same file as --dataset; a test split must hold other "
            "examples than the training data (without --test, a single stream is evaluated "
            "prequentially)"
        )
    reads: list[tuple[str, Any]] = [(f"--{option}", path) for option, path in inputs.items()]
    if args.algorithm == "label-ranker":
        from olboost import ranking_experiments as rx
        from olboost.datasets.enron import archive_path

        source = rx.foldering_source(args.dataset)
        if source is not None:
            directory, users = source
            if directory is None:
                directory = rx.data_directory(None, users, "--dataset")
            reads += [("--dataset", archive_path(directory, user)) for user in users]
    outputs = [
        (f"--{option.replace('_', '-')}", getattr(args, option, None))
        for option in ("output", "save_model", "checkpoint")
    ]
    refuse_overwriting(outputs, reads)


def _is_foldering(dataset: str) -> bool:
    """Whether ``--dataset`` names Enron foldering data (label-ranker's online mistakes)."""
    from olboost import ranking_experiments

    return ranking_experiments.foldering_source(dataset) is not None


def _check_enron_options(args: argparse.Namespace) -> None:
    """The options of an Enron foldering run, which need no data: those it refuses (it does not
    go through prepare_run, which refuses these for MULAN data), then the ranker's and the
    fields (:func:`olboost.ranking_experiments.check_run_options`)."""
    from olboost import ranking_experiments

    if args.features is not None:
        raise ValueError(
            "--features: for the boosters' weak learners; label-ranker sees every feature"
        )
    if args.loops != 1:
        raise ValueError(
            f"--loops {args.loops}: Enron foldering data are one pass over each user's "
            "chronological stream"
        )
    if args.curve:
        raise ValueError("--curve: not recorded on Enron foldering data (MULAN data only)")
    # (--checkpoint-every, --resume, --labels and --test were ignored, even naming
    # files that do not exist)
    for option in ("checkpoint", "save_model", "checkpoint_every", "resume"):
        if getattr(args, option) not in (None, False):
            raise ValueError(
                f"--{option.replace('_', '-')}: not for Enron foldering data, whose "
                "runs (one pass per user, seconds each) are not checkpointed"
            )
    for option in ("labels", "test"):
        if getattr(args, option) is not None:
            raise ValueError(
                f"--{option}: for an ARFF data file; {args.dataset} is Enron foldering "
                "data, one chronological stream per user"
            )
    ranking_experiments.check_run_options(args)


def _cmd_run(args: argparse.Namespace) -> int:
    from olboost.checkpoint import remove_stale_temporaries

    # before anything is touched, and for the Enron runs too, which skip prepare_run
    ALGORITHMS[args.algorithm].check_options(args.algorithm, args)
    if args.curve and not (args.output or args.json):
        raise ValueError(
            "--curve: the curve is part of the JSON record; give --output PATH or --json"
        )
    enron = args.algorithm == "label-ranker" and _is_foldering(args.dataset)
    if enron:
        # before anything looks for files: a wrong option is wrong wherever the data are (the
        # data directory was searched first, and a clone without the shared data said
        # "not found" instead)
        _check_enron_options(args)
    for option in ("output", "save_model"):
        target = check_output(getattr(args, option), f"--{option.replace('_', '-')}")
        if target is not None:
            remove_stale_temporaries(target)
    _check_distinct_files(args)
    if enron:
        from olboost import ranking_experiments

        return ranking_experiments.cmd_run(args)  # Enron foldering: online mistakes
    checkpoint = _run_checkpoint(args)
    try:
        return _run_with(args, checkpoint)
    finally:
        if checkpoint is not None:
            checkpoint.lock.release()


def _run_with(args: argparse.Namespace, checkpoint: _RunCheckpoint | None) -> int:
    """The run of ``olboost run`` on an ARFF or bundled data set, after its checks."""
    data = _load(args)
    counts = data.missing_counts()
    if counts:
        # said before the run, so that a model that cannot take them fails with the reason known
        print(f"{data.name}: {data.missing_summary()}", flush=True)
    if getattr(data, "missing", "none") != "none":
        # load_uci replaced them as the paper did, so none are left to count: say how
        print(f"{data.name}: {data.missing}", flush=True)
    record, model = _evaluate(args, data, checkpoint)
    add_missing_values(record, data)
    write_record(args, record)
    if "learners" in record:
        head = (
            f"{record['algorithm']} on {record['dataset']} (seed {record['seed']}, "
            f"{record['learners']} learners, {record['committee']}): "
        )
    else:
        head = (
            f"{record['algorithm']} on {record['dataset']} (Update {record['update']}, "
            f"{record['complexity']}, C={record['C']:g}, margin={record['margin']:g}"
            + f", scale {record.get('scale', 'none')}): "
        )
    if "accuracy" in record:
        body = (
            f"accuracy {record['accuracy']:.4f}, final 20% {record['accuracy_last20']:.4f} over "
            f"{record['n_test']} examples"
        )
    else:
        passes = record.get("loops", 1)
        shown = " of the shown rankings" if record.get("feedback") == "topk" else ""
        over = (
            f"over {record['n_test']} examples, test-then-train"
            if record["protocol"].startswith("prequential")
            else f"over {record['n_test']} test examples after {record['n_train']} training "
            "examples" + (f" x {passes} loops" if passes != 1 else "")
        )
        body = (
            f"rank loss{shown} {record['rank_loss']:.4f} (skip convention "
            f"{record['rank_loss_skip']:.4f}) {over}"
        )
        if "k" in record:
            head += (
                f"top-{record['k']} feedback, {record['exploration']} exploration "
                f"rho={record['rho']:g}: "
            )
    timing = f", {record['seconds']:.2f} s (+ {record['compile_seconds']:.2f} s compile before)"
    print(head + body + timing, flush=True)
    if args.save_model:
        # last: the model was saved first, and a full disk then lost the record and the line
        # above with it (the whole run to do again)
        from olboost.checkpoint import save

        save(model, args.save_model)
    return 0


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
