"""Command-line interface: ``olboost run`` and ``olboost reproduce``.

``olboost run --algorithm ada-olmr --dataset emotions --learners 100 --seed 1 --output r.json``
evaluates one algorithm on one data set: a bundled name or an ARFF path with ``--labels`` (its MULAN
XML) and optionally ``--test`` (a separate test split, evaluated with the paper's train/test
protocol; a single file alone is evaluated prequentially).

``olboost reproduce mlr --seeds 10`` runs Ada.OLMR on the four bundled MULAN sets and prints the
mean test rank loss beside the numbers published by Jung & Tewari (2018, Table 3).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from olboost._version import __version__

__all__ = ["main", "ALGORITHMS", "COMMITTEES", "PUBLISHED_MLR"]

#: Mean test rank loss of Ada.OLMR published in Jung & Tewari (2018), Table 3.
PUBLISHED_MLR = {"emotions": 0.1600, "scene": 0.0881, "yeast": 0.1874, "mediamill-reduced": 0.0632}


def _ada_olmr(committee: Any, args: argparse.Namespace) -> Any:
    from olboost.boosters.ada_olmr import AdaOLMR

    return AdaOLMR(
        committee, learners=args.learners, seed=args.seed, predict_with=args.predict_with
    )


def _vfdt(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee(n_features=args.features, nominal_attributes=nominal or None)


def _river(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.river import RiverCommittee

    return RiverCommittee(n_features=args.features)


#: CLI algorithm name -> factory(committee, args).
ALGORITHMS: dict[str, Callable[[Any, argparse.Namespace], Any]] = {"ada-olmr": _ada_olmr}
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


def run_one(args: argparse.Namespace, data: Any = None) -> dict[str, Any]:
    """Evaluate ``args.algorithm`` on ``args.dataset``; return the JSON-ready record."""
    from olboost.datasets import load
    from olboost.evaluate import prequential, train_test

    if data is None:
        data = load(args.dataset, args.labels, test=args.test)
    committee = COMMITTEES[args.committee](args, data.nominal_cardinalities)
    model = ALGORITHMS[args.algorithm](committee, args)
    progress = not args.no_progress
    if data.n_train is None:
        result, protocol = prequential(model, data, progress=progress), "prequential"
    else:
        result = train_test(model, data.train, data.test, progress=progress)
        protocol = "train_test"
    record = {
        "algorithm": args.algorithm,
        "dataset": data.name,
        "seed": args.seed,
        "learners": args.learners,
        "committee": args.committee,
        "features_per_learner": args.features,
        "protocol": protocol,
        **result.summary(),
        **_environment(),
    }
    return record


def _cmd_run(args: argparse.Namespace) -> int:
    record = run_one(args)
    if args.output:
        with open(args.output, "w") as f:
            json.dump(record, f, indent=2)
    print(
        f"{record['algorithm']} on {record['dataset']} (seed {record['seed']}, "
        f"{record['learners']} learners, {record['committee']}): rank loss "
        f"{record['rank_loss']:.4f} (skip convention {record['rank_loss_skip']:.4f}) over "
        f"{record['n_test']} test examples after {record['n_train']} training examples, "
        f"{record['seconds']:.2f} s"
    )
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from olboost.datasets import load

    if args.suite != "mlr":
        raise SystemExit(f"unknown suite {args.suite!r}")
    print(
        f"Ada.OLMR, {args.learners} learners, {args.committee} committee, "
        f"{args.features} features each; mean test rank loss over seeds 1..{args.seeds} "
        "(published: Jung & Tewari 2018, Table 3)"
    )
    print(f"{'data':<18}{'seeds':>6}{'Ada.OLMR':>10}{'± sd':>8}{'published':>11}{'s/run':>8}")
    rows = []
    for name in args.datasets:
        data = load(name)
        losses, seconds = [], []
        for seed in range(1, args.seeds + 1):
            ns = argparse.Namespace(**{**vars(args), "seed": seed, "dataset": name})
            record = run_one(ns, data)
            losses.append(record["rank_loss"])
            seconds.append(record["seconds"])
        r = {
            "dataset": name,
            "seeds": args.seeds,
            "rank_loss_mean": float(np.mean(losses)),
            "rank_loss_std": float(np.std(losses, ddof=1)) if len(losses) > 1 else 0.0,
            "rank_loss_per_seed": losses,
            "published": PUBLISHED_MLR.get(name),
            "seconds_mean": float(np.mean(seconds)),
        }
        rows.append(r)
        pub = f"{r['published']:.4f}" if r["published"] is not None else "-"
        print(
            f"{name:<18}{args.seeds:>6}{r['rank_loss_mean']:>10.4f}"
            f"{r['rank_loss_std']:>8.4f}{pub:>11}{r['seconds_mean']:>8.2f}",
            flush=True,
        )
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"suite": "mlr", "rows": rows, **_environment()}, f, indent=2)
    return 0


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--learners", type=int, default=100, help="number N of weak learners")
    p.add_argument(
        "--committee",
        choices=sorted(COMMITTEES),
        default="vfdt",
        help="vfdt: compiled Hoeffding trees (fast); river: River HoeffdingTreeClassifier",
    )
    p.add_argument("--features", type=int, default=20, help="random features per weak learner")
    p.add_argument(
        "--predict-with",
        choices=["sampled", "best"],
        default="sampled",
        help="expert chosen by a Hedge draw (paper) or the best Hedge weight",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--output", help="write the results as JSON to this path")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="olboost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"olboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate one algorithm on one data set")
    run.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="ada-olmr")
    run.add_argument("--dataset", required=True, help="bundled name or path to an ARFF file")
    run.add_argument("--labels", help="MULAN XML label file (required with an ARFF path)")
    run.add_argument("--test", help="ARFF file of a separate test split (paper protocol)")
    run.add_argument("--seed", type=int, default=1)
    _add_model_options(run)
    run.set_defaults(func=_cmd_run)

    rep = sub.add_parser("reproduce", help="re-run a table of the papers")
    rep.add_argument("suite", choices=["mlr"], help="mlr: Jung & Tewari 2018, Table 3")
    rep.add_argument("--seeds", type=int, default=10, help="seeds 1..N per data set")
    rep.add_argument(
        "--datasets", nargs="+", default=list(PUBLISHED_MLR), help="bundled data sets to run"
    )
    _add_model_options(rep)
    rep.set_defaults(func=_cmd_reproduce, algorithm="ada-olmr", labels=None, test=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``olboost`` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
        print(f"olboost: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
