"""``olboost serve`` and ``olboost simulate``: their parsers and commands.

Building the parsers imports nothing of the ``serve`` extra (Starlette, uvicorn), so that
``olboost --help`` works without it; running either command without the extra is one line,
``olboost: error: ... pip install 'olboost[serve]'``.
"""

from __future__ import annotations

import argparse
import math
import os
import unicodedata
from pathlib import Path
from typing import Any

from olboost.serve._algorithms import ALGORITHMS, SETTINGS_OF

__all__ = ["add_parsers"]

_MISSING_EXTRA = "olboost serve needs the serve extra: pip install 'olboost[serve]' ({})"


def _load_dataset(args: argparse.Namespace) -> Any:
    """``--dataset``: a bundled name, or an ARFF file with its MULAN XML ``--dataset-labels``."""
    from olboost.datasets import BUNDLED, BUNDLED_UCI, load
    from olboost.datasets.mulan import _bundled_name

    bundled = _bundled_name(args.dataset) is not None
    if args.dataset_labels is None and not bundled and args.dataset in BUNDLED_UCI:
        # "not a bundled data set" of balance, which is bundled: a multiclass one
        raise ValueError(
            f"--dataset {args.dataset}: a bundled multiclass data set; the service ranks "
            f"labels, from a multi-label one ({', '.join(BUNDLED)}) or a MULAN file"
        )
    if args.dataset_labels is None and not bundled:
        raise ValueError(
            f"--dataset {args.dataset}: not a bundled data set; for a data file, pass "
            "--dataset-labels with its MULAN XML label file"
        )
    if args.dataset_labels is not None and bundled:
        raise ValueError(
            f"--dataset-labels: for a data file; {args.dataset} is bundled with its labels"
        )
    return load(args.dataset, args.dataset_labels)


_EVERY = ALGORITHMS
#: ``olboost serve``'s options of the model -> the algorithms that take them.
_MODEL_OPTIONS = {
    "algorithm": _EVERY, "learners": _EVERY, "features": _EVERY, "seed": _EVERY, "k": _EVERY,
    "max_depth": _EVERY, **SETTINGS_OF,
}  # fmt: skip


def _labels_from_file(path: str) -> list[str]:
    """The labels of ``--labels-file``: one per line (``\n`` or ``\r\n``), without the
    whitespace around it, in UTF-8, UTF-16 or UTF-32 (:func:`olboost.serve.config.decode_text`:
    a byte-order mark is no part of the first name); an empty line, a name with a control
    character (a lone ``\r`` included) or given twice, or a file of no label, is refused naming
    its line."""
    from olboost.serve.config import NotText, decode_text

    try:
        text = decode_text(Path(path).read_bytes())
    except OSError as err:
        raise ValueError(f"--labels-file {path}: {err.strerror or err}") from None
    except NotText as err:
        raise ValueError(err.named(f"--labels-file {path}")) from None
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    labels = [line.strip() for line in lines]
    if not labels:
        raise ValueError(f"--labels-file {path}: no label in it (one label per line)")
    first: dict[str, int] = {}
    for number, label in enumerate(labels, 1):
        where = f"--labels-file {path}, line {number}"
        if not label:
            raise ValueError(f"{where}: an empty label name (one label per line)")
        control = next((c for c in label if unicodedata.category(c) == "Cc"), None)
        if control is not None:
            # a file of lone carriage returns (old Mac text) was one label, then "at least 2
            # labels are needed, got 1"; a NUL or a tab made a name no client could type
            raise ValueError(
                f"{where}: a control character (U+{ord(control):04X}) in a label name (one "
                "label per line, ended by \\n or \\r\\n)"
            )
        if label in first:
            raise ValueError(f"{where}: label {label!r} given before, on line {first[label]}")
        first[label] = number
    return labels


def _config(args: argparse.Namespace) -> Any:
    """The service configuration of the options, or ``None`` to use the store's."""
    from olboost.serve.config import ServiceConfig
    from olboost.serve.store import Store, refuse_a_file

    try:  # it said "File exists"
        refuse_a_file(args.store)
    except NotADirectoryError as err:
        raise ValueError(f"--store {args.store}: {err.strerror}") from None
    given = [name for name in _MODEL_OPTIONS if getattr(args, name) is not None]
    if args.labels is not None and args.labels_file is not None:
        raise ValueError("--labels and --labels-file: give one")
    listed = "--labels" if args.labels_file is None else "--labels-file"
    if args.dataset is None and args.labels is None and args.labels_file is None:
        if given and not Store.exists(Path(args.store)):
            # it said "an existing store keeps the settings ..." of a store that did not exist
            raise ValueError(
                f"{args.store}: a new store needs a configuration (--dataset, or --labels and "
                f"--n-features); --{given[0].replace('_', '-')} alone makes none"
            )
        if given:
            raise ValueError(
                f"--{given[0].replace('_', '-')}: an existing store keeps the settings it was "
                "created with; settings are given with --dataset or --labels (a new store, or "
                "checked against the store's)"
            )
        return None
    algorithm = args.algorithm or "topk-adaptive"
    for name in given:
        if algorithm not in _MODEL_OPTIONS[name]:
            takers = ", ".join(_MODEL_OPTIONS[name])
            raise ValueError(f"--{name}: not an option of {algorithm} (only of {takers})")
    options = {name: getattr(args, name) for name in given if name != "algorithm"}
    if args.dataset is not None and (args.labels, args.labels_file) != (None, None):
        raise ValueError(f"--dataset and {listed}: give one (the schema of a data set, or labels)")
    if args.dataset is not None:
        data = _load_dataset(args)
        labels, n_features = list(data.label_names), data.X.shape[1]
        names = list(data.feature_names)
    else:
        if args.labels_file is not None:
            labels = _labels_from_file(args.labels_file)
        else:
            labels = [label.strip() for label in args.labels.split(",")]
        if "" in labels:
            # "" was one label named "" ("at least 2 labels are needed, got 1")
            raise ValueError(
                f"--labels {args.labels!r}: an empty label name; give the names separated by "
                "commas, e.g. --labels news,sport,weather"
            )
        if args.n_features is None:
            raise ValueError(f"{listed} needs --n-features")
        n_features, names = args.n_features, None
    return ServiceConfig(
        algorithm=algorithm, labels=tuple(labels), n_features=n_features,
        feature_names=None if names is None else tuple(names), **options,
    )  # fmt: skip


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        from olboost.serve.app import (
            TOKEN_ENV,
            check_host_name,
            check_token,
            listen,
            read_token_file,
            run,
        )
    except ImportError as err:
        raise ImportError(_MISSING_EXTRA.format(err)) from None
    from olboost.serve.service import Service

    if args.max_body < 1:
        raise ValueError(f"--max-body must be >= 1, got {args.max_body}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in [0, 65535], got {args.port}")
    # the service's own checks name its parameters (max_learn_lag=None where the option says 0)
    if args.checkpoint_every < 1:
        raise ValueError(f"--checkpoint-every must be >= 1, got {args.checkpoint_every}")
    if not 0 < args.impression_ttl < math.inf:
        raise ValueError(
            f"--impression-ttl must be a positive number of seconds, got {args.impression_ttl}"
        )
    if args.max_learn_lag < 0:
        raise ValueError(f"--max-learn-lag must be >= 0 (0: no limit), got {args.max_learn_lag}")
    config = _config(args)
    # Every option is checked before Service() opens (creates) the store: a rejected command
    # leaves nothing on disk. Without --token-file, run() reads the environment's token or the
    # store's (generating it) once the service has started.
    _check_ready_file(args)
    for name in args.allowed_host:
        check_host_name(name, "--allowed-host")
    token = None if args.token_file is None else read_token_file(args.token_file)
    if token is None and os.environ.get(TOKEN_ENV, "").strip():
        check_token(os.environ[TOKEN_ENV].strip(), TOKEN_ENV)  # read again by run()
    sock = listen(args.host, args.port)
    try:
        service = Service(
            args.store, config, checkpoint_every=args.checkpoint_every,
            impression_ttl=args.impression_ttl, synchronous=args.sync, prune_log=args.prune_log,
            max_learn_lag=args.max_learn_lag or None,
        )  # fmt: skip
    except BaseException:
        sock.close()
        raise
    run(
        service, token=token, host=args.host, port=args.port, max_body=args.max_body,
        protect_rank=args.protect_rank, ready_file=args.ready_file, sock=sock,
        extra_hosts=args.allowed_host,
    )  # fmt: skip
    return 0


def _check_ready_file(args: argparse.Namespace) -> None:
    """Refuse, before the store is made and the port bound, a ``--ready-file`` that cannot be
    written (it was written once the server listened: a traceback then) or that names one of the
    store's own files (:data:`~olboost.serve.store.STORE_FILES`, present or not: the log's WAL
    exists only while a service runs) or the token file. Elsewhere in the store directory it is
    the service's to write, the store made first if it is new."""
    from olboost.cli import check_output
    from olboost.serve.store import STORE_FILES

    if args.ready_file is None:
        return
    target = Path(args.ready_file).resolve()
    if target.parent == Path(args.store).resolve():
        if target.name in STORE_FILES:
            raise ValueError(
                f"--ready-file {args.ready_file}: the store's {target.name} (--store "
                f"{args.store}); give the ready file a name of its own"
            )
        if not target.parent.exists():
            return  # made by the service, before the ready file is written
    check_output(args.ready_file, "--ready-file", reads=[("--token-file", args.token_file)])


def _loss(value: float | None) -> str:
    """A rank loss for the summary line: none yet when the run stopped before the test split
    (printed as ``nan`` before; the JSON record has ``null``)."""
    return (
        "none (stopped before the test split)"
        if value is None or value != value
        else (f"{value:.4f}")
    )


def _cmd_simulate(args: argparse.Namespace) -> int:
    import json

    from olboost.serve.simulate import SETTINGS, check_settings

    # first: before the token file, the data set or the service are read
    check_settings({name: getattr(args, name) for name in SETTINGS}, prefix="--")
    from olboost.serve.simulate import service_address

    try:
        service_address(args.url)
    except ValueError as err:
        raise ValueError(f"--url: {err}") from None
    from olboost.cli import check_output, write_record
    from olboost.datasets.mulan import _bundled_name
    from olboost.serve.app import TOKEN_ENV, read_token_file
    from olboost.serve.simulate import HTTPError, simulate

    check_output(
        args.output,
        reads=[
            # a bundled name is read from the package, not from a file of that name
            ("--dataset", None if _bundled_name(args.dataset) else args.dataset),
            ("--dataset-labels", args.dataset_labels),
            ("--token-file", args.token_file),
        ],
    )
    if args.token_file is not None:
        token = read_token_file(args.token_file)
    else:  # stripped as the service strips it
        token = os.environ.get(TOKEN_ENV, "").strip() or None
    data = _load_dataset(args)
    if token is None:
        # the service answers every /feedback without the token with 401: the run sent its
        # /rank requests (logged by the service) and then reported nothing but those errors
        raise ValueError(
            f"no token for {args.url}'s /feedback: pass --token-file (the service's "
            f"STORE/token, or the file given to serve --token-file) or set {TOKEN_ENV}"
        )
    try:
        report = simulate(
            args.url, data, token=token, k=args.k, loops=args.loops,
            concurrency=args.concurrency, delay=args.delay, drop=args.drop, seed=args.seed,
            key=args.key, wait=args.wait, limit=args.limit, duration=args.duration,
        )  # fmt: skip
    except HTTPError as err:  # the service unreachable, or refusing the run: one line
        if err.status == 0:
            raise ConnectionError(f"--url {args.url}: {err}") from None
        raise ValueError(f"--url {args.url}: {err}") from None
    record = {"url": args.url, "dataset": args.dataset, "loops": args.loops, **report.record()}
    r, f = record["rank_latency_ms"], record["feedback_latency_ms"]

    def ms(value: float | None) -> str:
        # no answered request: no latency ("0.0 ms" said they were instant)
        return "-" if value is None else f"{value:.1f} ms"

    print(
        f"{record['examples']} users, {record['pairs']} rank+feedback pairs in "
        f"{record['seconds']:.1f} s: {record['pairs_per_second']:.0f} pairs/s; /rank p50 "
        f"{ms(r['p50'])} p99 {ms(r['p99'])}; /feedback p50 {ms(f['p50'])} "
        f"p99 {ms(f['p99'])}; test rank loss {_loss(record['test_rank_loss'])}"
        + (f"; errors {json.dumps(record['errors'])}" if record["errors"] else "")
    )
    write_record(args, record)
    return 1 if record["errors"] else 0


def _cmd_backup(args: argparse.Namespace) -> int:
    """``olboost backup``."""
    from olboost.serve.store import backup

    counts = backup(args.store, args.to)
    pruned = f", {counts['pruned']} impressions pruned from the log" if counts["pruned"] else ""
    print(
        f"backed up {args.store} to {args.to}: {counts['impressions']} impressions, "
        f"{counts['feedback']} feedback{pruned} (serve the copy with olboost serve --store "
        f"{args.to})"
    )
    return 0


def add_parsers(sub: Any) -> None:
    """Add ``serve``, ``simulate`` and ``backup`` to the ``olboost`` subcommands."""
    from olboost.cli import HelpFormatter, add_output_options

    serve = sub.add_parser(
        "serve",
        help="serve a learning top-k ranker over HTTP (needs the serve extra)",
        description="Serve a ranking booster over HTTP: POST /rank shows the top k labels of "
        "an impression, POST /feedback (bearer token) learns from its clicks, GET /schema "
        "(labels and features), /health, /metrics (Prometheus) and / (status page). Every "
        "impression and feedback is in STORE/log.sqlite before it is acknowledged; the model "
        "is checkpointed every --checkpoint-every feedbacks, and a restart recovers it "
        "exactly. A new store needs --dataset (its labels and features) or --labels and "
        "--n-features; an existing one keeps its settings.",
        formatter_class=HelpFormatter,
    )
    serve.add_argument("--store", required=True, help="directory of the log and checkpoints")
    serve.add_argument(
        "--host", default="127.0.0.1",
        help="address to bind (on a loopback one, requests must name this machine: Host "
        "localhost, 127.0.0.1 or ::1; beyond it, give --protect-rank and a reverse proxy)",
    )  # fmt: skip
    serve.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    serve.add_argument(
        "--dataset", help="take labels and features from this data set (bundled name or ARFF)"
    )
    serve.add_argument("--dataset-labels", help="MULAN XML label file of an ARFF --dataset")
    serve.add_argument("--labels", help="comma-separated labels (instead of --dataset)")
    serve.add_argument(
        "--labels-file",
        metavar="PATH",
        help="labels, one per line of a UTF-8 (or UTF-16) text file (instead of --labels: for "
        "more labels than a command line holds, or names with commas)",
    )
    serve.add_argument("--n-features", type=int, help="feature vector width (with --labels)")
    # The model's options default to None, so that one given where it means nothing (an
    # existing store's model, an option of another booster) is refused rather than ignored.
    serve.add_argument(
        "--algorithm",
        choices=list(ALGORITHMS),
        help="the booster (top-k feedback, or full feedback: clicks name every relevant label) "
        "(default: topk-adaptive)",
    )
    serve.add_argument("--learners", type=int, help="number N of weak learners (default: 100)")
    serve.add_argument("--features", type=int, help="random features per tree (default: 20)")
    serve.add_argument("--seed", type=int, help="seed of the model (default: 1)")
    serve.add_argument(
        "--max-depth", type=int, metavar="D",
        help="depth at which the trees stop growing, which bounds the model's memory on an "
        "endless stream (default: none)",
    )  # fmt: skip
    serve.add_argument("--k", type=int, help="labels shown per impression (default: 3)")
    serve.add_argument("--exploration", choices=["uniform", "single-swap"],
                       help="randomisation of the shown ranking (top-k boosters) "
                       "(default: uniform)")  # fmt: skip
    serve.add_argument("--rho", type=float, help="exploration rate (top-k) (default: 0.02)")
    serve.add_argument("--gamma", type=float, help="edge (topk-bbm, online-bmr) (default: 0.1)")
    serve.add_argument(
        "--checkpoint-every", type=int, default=10000, metavar="N",
        help="feedbacks learned between two checkpoints (a restart replays about N: more by "
        "what is learned while a checkpoint is written, and by the --max-learn-lag)",
    )  # fmt: skip
    serve.add_argument(
        "--impression-ttl", type=float, default=3600.0, metavar="SECONDS",
        help="seconds after which an impression's feedback is refused (410) and it is counted "
        "as expired",
    )  # fmt: skip
    serve.add_argument(
        "--max-learn-lag", type=int, default=256, metavar="N",
        help="answer a feedback once at most N acknowledged feedbacks before it are not learned "
        "yet (backpressure on clients faster than the model learns; 0: no limit)",
    )  # fmt: skip
    serve.add_argument(
        "--sync", choices=["full", "normal"], default="full",
        help="log durability: full (an acknowledged row survives a power loss) or normal "
        "(it survives a crash or kill of the service; cheaper commits)",
    )  # fmt: skip
    serve.add_argument(
        "--token-file",
        help="file holding the bearer token of the write endpoints (default: the "
        "OLBOOST_SERVE_TOKEN environment variable, else STORE/token, generated if missing)",
    )
    serve.add_argument(
        "--prune-log", action="store_true",
        help="after each checkpoint and every minute, delete the log's expired impressions and "
        "the feedback a checkpoint has learned (the log then stops growing with the history, "
        "and can no longer rebuild the model from initial.olb: back up the store, checkpoint "
        "included)",
    )  # fmt: skip
    serve.add_argument("--max-body", type=int, default=256 * 1024, help="largest body, bytes")
    serve.add_argument(
        "--protect-rank", action="store_true", help="/rank and /schema need the token too"
    )
    serve.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME",
        help="a Host name requests may give besides this machine's (repeatable): the public "
        "name a reverse proxy passes on; beyond loopback, only these are then accepted",
    )  # fmt: skip
    serve.add_argument(
        "--ready-file", help="write the URL here once the service is ready (removed when it stops)"
    )
    serve.set_defaults(func=_cmd_serve)

    back = sub.add_parser(
        "backup",
        help="copy a service's store, consistently, while it serves or not",
        description="Copy the store of olboost serve to a new directory: its model files, then "
        "its log by SQLite's online backup, so that the copy is the store as of one moment even "
        "while the service writes (a copy with cp -r or tar can pair the log with a WAL file "
        "of another moment: a damaged log). Serve the copy with olboost serve --store DIR.",
        formatter_class=HelpFormatter,
    )
    back.add_argument("--store", required=True, help="the store directory to copy")
    back.add_argument("--to", required=True, metavar="DIR", help="a new (or empty) directory")
    back.set_defaults(func=_cmd_backup)

    sim = sub.add_parser(
        "simulate",
        help="play users of a data set against olboost serve (demo and load test)",
        description="Stream a multi-label data set (the train split --loops times, then the "
        "test split) as users of a running olboost serve: each asks /rank, then clicks exactly "
        "its relevant labels among those shown, or all of them for a full-feedback service "
        "(after --delay, unless dropped). Reports throughput, latency percentiles and the rank "
        "loss train_test records: of the rankings shown by a top-k booster, of a full-feedback "
        "model's scores.",
        formatter_class=HelpFormatter,
    )
    sim.add_argument("--url", required=True, help="the service, http://HOST:PORT")
    sim.add_argument("--dataset", required=True, help="bundled data set name or ARFF path")
    sim.add_argument("--dataset-labels", help="MULAN XML label file of an ARFF --dataset")
    sim.add_argument("--k", type=int, help="check that the service shows k labels")
    sim.add_argument("--loops", type=int, default=1, help="passes over the train split")
    sim.add_argument("--concurrency", type=int, default=8, help="users served at once")
    sim.add_argument("--delay", type=float, default=0.0, help="mean seconds before a click")
    sim.add_argument("--drop", type=float, default=0.0, help="probability of never answering")
    sim.add_argument("--seed", type=int, default=1, help="seed of drops and delays (>= 0)")
    sim.add_argument("--key", type=int, help="draw key sent with each ranking, in [0, 2^64)")
    sim.add_argument("--wait", action="store_true", help="feedback answered once learned")
    sim.add_argument("--limit", type=int, help="stop after this many users")
    sim.add_argument("--duration", type=float, help="send no new user after this many seconds")
    sim.add_argument("--token-file", help="bearer token file (default: OLBOOST_SERVE_TOKEN)")
    add_output_options(sim, progress=False)
    sim.set_defaults(func=_cmd_simulate)
