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

``olboost reproduce mlr --seeds 10`` runs Ada.OLMR and OnlineBMR (best edge per data set, as the
paper did) on the four bundled MULAN sets and prints the mean test rank loss beside the numbers
published by Jung & Tewari (2018, Table 3). ``olboost reproduce topk --seeds 10`` and ``olboost
reproduce topk-curves`` re-run Tables 1, 2, 4 and Fig. 1 of Raman et al. (2020)
(:mod:`olboost.topk_experiments`); ``olboost reproduce label-ranking`` Table 1 of Shalev-Shwartz &
Singer (2007) (:mod:`olboost.ranking_experiments`).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olboost._version import __version__

__all__ = ["main", "ALGORITHMS", "COMMITTEES", "PUBLISHED_MLR", "bmr_gammas"]

#: Mean test rank loss published in Jung & Tewari (2018), Table 3: (Ada.OLMR, best BMR).
PUBLISHED_MLR = {
    "emotions": (0.1600, 0.1654),
    "scene": (0.0881, 0.0743),
    "yeast": (0.1874, 0.1836),
    "mediamill-reduced": (0.0632, 0.0630),
}


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


def _vfdt(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee(n_features=args.features, nominal_attributes=nominal or None)


def _river(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.river import RiverCommittee

    return RiverCommittee(n_features=args.features)


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


def _load(args: argparse.Namespace) -> Any:
    if ALGORITHMS[args.algorithm].task == "multiclass":
        from olboost.datasets import load_uci

        return load_uci(args.dataset)
    from olboost.datasets import load

    return load(args.dataset, args.labels, test=args.test)


def run_one(args: argparse.Namespace, data: Any = None) -> dict[str, Any]:
    """Evaluate ``args.algorithm`` on ``args.dataset``; return the JSON-ready record."""
    from olboost.evaluate import prequential, train_test

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
    committee = (
        COMMITTEES[args.committee](args, data.nominal_cardinalities)
        if algorithm.committee
        else None
    )
    model = algorithm.build(committee, args)
    progress = not args.no_progress
    extra: dict[str, Any] = {}
    if algorithm.committee:
        extra.update(
            learners=args.learners, committee=args.committee, features_per_learner=args.features
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
        result, protocol = (
            prequential(model, data.shuffled(args.seed), progress=progress, warm_up=True),
            ("prequential, stream reordered with the seed"),
        )
    elif data.n_train is None:
        result = prequential(model, data, progress=progress, warm_up=True)
        protocol = "prequential"
    else:
        result = train_test(
            model, data.train, data.test, loops=loops, progress=progress, warm_up=True
        )
        protocol = "train_test"
    for name in ("gamma", "n_gamma_capped_"):
        if hasattr(model, name):
            extra[name.rstrip("_")] = getattr(model, name)
    if hasattr(model, "best_accuracy_in_hindsight_"):
        # the paper's best single tree is chosen after seeing the whole stream: an oracle
        extra["best_accuracy_in_hindsight"] = model.best_accuracy_in_hindsight_
        extra["oracle"] = True
    curve: dict[str, Any] = {}
    if getattr(args, "curve", False):  # per-example values, last (olboost.plots draws them)
        from olboost.plots import curve_fields

        curve = curve_fields(result)
    return {
        "algorithm": args.algorithm,
        "dataset": data.name,
        "seed": args.seed,
        "protocol": protocol,
        **extra,
        **result.summary(),
        **_environment(),
        **curve,
    }


def _cmd_run(args: argparse.Namespace) -> int:
    if args.algorithm == "label-ranker":
        from olboost import ranking_experiments

        if ranking_experiments.foldering_source(args.dataset) is not None:
            if args.curve:
                raise ValueError("--curve: not recorded on Enron foldering data (MULAN data only)")
            return ranking_experiments.cmd_run(args)  # Enron foldering: online mistakes
    data = _load(args)
    counts = data.missing_counts()
    if counts:
        # said before the run, so that a model that cannot take them fails with the reason known
        print(f"{data.name}: {data.missing_summary()}", flush=True)
    record = run_one(args, data)
    if counts:
        record["missing_values"] = sum(counts.values())
        record["missing_by_column"] = counts
    if args.output:
        with open(args.output, "w") as f:
            json.dump(record, f, indent=2)
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


def _mean_over_seeds(args: argparse.Namespace, data: Any, **override: Any) -> dict[str, Any]:
    losses, seconds, compile_s, capped = [], [], 0.0, 0
    for seed in range(1, args.seeds + 1):
        ns = argparse.Namespace(**{**vars(args), **override, "seed": seed})
        record = run_one(ns, data)
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


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from olboost.datasets import load

    print(
        f"{args.learners} learners, {args.committee} committee, {args.features} features each; "
        f"mean test rank loss over seeds 1..{args.seeds} (published: Jung & Tewari 2018, Table 3)"
    )
    print(
        f"{'data':<18}{'Ada.OLMR':>9}{'± sd':>8}{'published':>10}{'s/run':>7}"
        f"{'best BMR':>10}{'± sd':>8}{'gamma':>7}{'published':>10}{'s/run':>7}"
    )
    rows = []
    for name in args.datasets:
        data = load(name)
        ada = _mean_over_seeds(args, data, algorithm="ada-olmr", dataset=name)
        bmr: dict[float, dict[str, Any]] = {}
        if not args.no_bmr:
            for gamma in bmr_gammas(data.n_labels):
                bmr[gamma] = _mean_over_seeds(
                    args, data, algorithm="online-bmr", dataset=name, gamma=gamma
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
    if args.output:
        with open(args.output, "w") as f:
            json.dump(
                {"suite": "mlr", "rows": rows, "compile_seconds": compile_s, **_environment()},
                f,
                indent=2,
            )
    return 0


def _cmd_reproduce_multiclass(args: argparse.Namespace) -> int:
    from olboost import experiments as ex

    columns = args.columns or list(ex.COLUMNS)
    unknown = [c for c in columns if c not in ex.COLUMNS]
    if unknown:
        raise ValueError(f"unknown columns {unknown}; choose from {list(ex.COLUMNS)}")
    results: dict[str, dict[str, Any]] = {}
    for name in args.datasets:
        data = ex.load_experiment_data(name, args.har)
        if data is None:
            why = "not available here" if name == "isolet" else "pass --har PATH to include it"
            results[name] = {"missing": why}
            print(f"{name}: skipped ({why})", flush=True)
            continue
        n_reorder = min(args.reorderings, ex.PAPER_REORDERINGS.get(name, args.reorderings))
        results[name] = {}
        for column in columns:
            runs = [
                ex.run_column(column, data, r, learners=args.learners, n_features=args.features)
                for r in range(1, n_reorder + 1)
            ]
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
    for table, key, title in [
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
                    else (f"{got[c][key]:.2f}" if table == "seconds" else f"{got[c][key]:.3f}")
                )
                cells.append(
                    f"{mine + ' / ' + (f'{pub:g}' if table == 'seconds' else f'{pub:.3f}'):>15}"
                )
            print(f"{name:<10}" + "".join(cells))
    if args.output:
        with open(args.output, "w") as f:
            json.dump(
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
                f,
                indent=2,
            )
    return 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--learners", type=int, default=100, help="number N of weak learners")
    p.add_argument(
        "--committee",
        choices=sorted(COMMITTEES),
        default="vfdt",
        help="vfdt: compiled Hoeffding trees (fast); river: River HoeffdingTreeClassifier",
    )
    p.add_argument(
        "--features",
        type=int,
        default=20,
        help="random features per weak learner (reproduce multiclass: all by default)",
    )
    p.add_argument(
        "--predict-with",
        choices=["sampled", "best"],
        default="sampled",
        help="Ada.OLMR: expert chosen by a Hedge draw (paper) or the best Hedge weight",
    )
    p.add_argument(
        "--gamma",
        type=float,
        default=0.1,
        help="edge of online-bmr/online-mbbm/topk-bbm (default: %(default)s)",
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
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--output", help="write the results as JSON to this path")


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


def build_parser() -> argparse.ArgumentParser:
    from olboost import plots, ranking_experiments, sweep, topk_experiments

    parser = argparse.ArgumentParser(prog="olboost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"olboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate one algorithm on one data set")
    run.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="ada-olmr")
    run.add_argument(
        "--dataset",
        required=True,
        help="bundled name or path to a data file; for label-ranker also an Enron user "
        "(e.g. sanders-r), <dir>/<user>.mbox.tar.xz or a directory of such archives",
    )
    run.add_argument("--labels", help="MULAN XML label file (required with an ARFF path)")
    run.add_argument("--test", help="ARFF file of a separate test split (paper protocol)")
    run.add_argument("--seed", type=int, default=1)
    _add_model_options(run)
    _add_topk_options(run)
    ranking_experiments.add_run_options(run)
    run.add_argument(
        "--curve",
        action="store_true",
        help="add the loss (or correctness) of every example, in stream order, to the JSON record "
        "(olboost plot draws it)",
    )
    run.set_defaults(func=_cmd_run)

    rep = sub.add_parser("reproduce", help="re-run a table of the papers")
    rep_sub = rep.add_subparsers(dest="suite", required=True)
    mlr = rep_sub.add_parser("mlr", help="Jung & Tewari 2018, Table 3 (MULAN sets)")
    mlr.add_argument("--seeds", type=int, default=10, help="seeds 1..N per data set")
    mlr.add_argument(
        "--datasets", nargs="+", default=list(PUBLISHED_MLR), help="bundled data sets to run"
    )
    mlr.add_argument("--no-bmr", action="store_true", help="skip the best-BMR column")
    _add_model_options(mlr)
    mlr.set_defaults(func=_cmd_reproduce, algorithm="ada-olmr", labels=None, test=None)
    mc = rep_sub.add_parser("multiclass", help="Jung, Goetz & Tewari 2017, Tables 3-5 (UCI sets)")
    mc.add_argument("--reorderings", type=int, default=27, help="reorderings per data set")
    mc.add_argument(
        "--datasets",
        nargs="+",
        default=["balance", "mice", "car", "mushroom", "nursery", "isolet", "movement"],
    )
    mc.add_argument("--columns", nargs="+", help="table columns to run (default: all)")
    mc.add_argument("--har", help="path to dataset-har-PUC-Rio-ugulino.csv(.gz) (Movement)")
    _add_model_options(mc)
    # the multiclass paper's trees see every attribute (see olboost.experiments.run_column)
    mc.set_defaults(func=_cmd_reproduce_multiclass, features=None)
    topk_experiments.add_parsers(rep_sub)
    ranking_experiments.add_parser(rep_sub)
    plots.add_parsers(sub)  # plot
    sweep.add_parsers(sub)  # sweep
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
