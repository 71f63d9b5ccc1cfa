"""``olboost reproduce mlr`` (Jung & Tewari 2018, Table 3) and ``olboost reproduce multiclass``
(Jung, Goetz & Tewari 2017, Tables 3-5): the suites, their printed tables and their parsers."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from olboost._version import __version__
from olboost.cli._algorithms import (
    ALGORITHM_OPTIONS,
    ALGORITHMS,
    GivenOption,
    _add_committee_options,
    _add_ranking_options,
    _features,
)
from olboost.cli._run import _check_features, run_one
from olboost.cli._shared import (
    HelpFormatter,
    _environment,
    add_output_options,
    cell_cache,
    cell_key,
    check_output,
    files_digest,
    show_progress,
    write_record,
)
from olboost.metrics import sample_sd

#: Mean test rank loss published in Jung & Tewari (2018), Table 3: (Ada.OLMR, best BMR).
PUBLISHED_MLR = {
    "emotions": (0.1600, 0.1654),
    "scene": (0.0881, 0.0743),
    "yeast": (0.1874, 0.1836),
    "mediamill-reduced": (0.0632, 0.0630),
}


def bmr_gammas(n_labels: int) -> tuple[float, ...]:
    """Edges tried for "best BMR" (Jung & Tewari 2018, Table 3, footnote 4: one grid "for
    small k", one "for large k"; small here up to 14 labels, so emotions, scene and yeast take
    the first, mediamill-reduced's 101 the second)."""
    return (0.05, 0.01, 0.005, 0.001) if n_labels > 14 else (0.2, 0.1, 0.01, 0.001)


def _mean_over_seeds(
    args: argparse.Namespace, data: Any, cache: Any, **override: Any
) -> dict[str, Any]:
    losses, seconds, compile_s, capped = [], [], 0.0, 0
    # the suite runs two algorithms on one command line: an option of one (--predict-with of
    # Ada.OLMR, --bmr-loss of OnlineBMR) is not an error in the other's runs, which ignore it
    takes = ALGORITHMS[override["algorithm"]].takes
    given = {
        d for d in getattr(args, "given_options", ()) if d not in ALGORITHM_OPTIONS or d in takes
    }
    for seed in range(1, args.seeds + 1):
        ns = argparse.Namespace(**{**vars(args), **override, "seed": seed, "given_options": given})
        record = cache.run(cell_key(ns, suite="mlr"), lambda ns=ns: run_one(ns, data))
        losses.append(record["rank_loss"])
        seconds.append(record["seconds"])
        compile_s += record["compile_seconds"]
        capped += record.get("n_gamma_capped", 0)
    return {
        "rank_loss_mean": float(np.mean(losses)),
        "rank_loss_std": sample_sd(losses),
        "rank_loss_per_seed": losses,
        "seconds_mean": float(np.mean(seconds)),
        "compile_seconds": compile_s,
        "n_gamma_capped": capped,
    }


def _sd_column(sd: float | None) -> str:
    """A table's ``± sd`` column: blank for one seed, whose spread is unknown."""
    return " " * 8 if sd is None else f"{sd:>8.4f}"


def _check_positive(args: argparse.Namespace, *names: str) -> None:
    for name in names:
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {value}")


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from olboost.datasets import load

    check_output(args.output)
    _check_positive(args, "seeds", "learners", "features")
    if args.no_bmr:
        # run refuses an option its algorithm does not use; these were taken and ignored
        unused = [d for d in ("bmr_loss", "method") if d in getattr(args, "given_options", ())]
        if unused:
            options = " and ".join(f"--{d.replace('_', '-')}" for d in unused)
            raise ValueError(
                f"{options}: for OnlineBMR's column, which --no-bmr skips (Ada.OLMR's column "
                "does not use them)"
            )
    # every data set read before the first run: an unknown one is an error, not one after hours
    for name in args.datasets:
        if name not in PUBLISHED_MLR and Path(name).exists():
            # load() would ask for its labels=, which this command has no option for
            raise ValueError(
                f"--datasets {name}: reproduce mlr runs the bundled data sets "
                f"({', '.join(PUBLISHED_MLR)}), beside the paper's Table 3; run a file with "
                "olboost run --dataset PATH --labels XML"
            )
    datasets = {name: load(name) for name in args.datasets}
    for data in datasets.values():
        _check_features(args, data, ALGORITHMS["ada-olmr"])
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
    for name, data in datasets.items():
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
            f"{name:<18}{ada['rank_loss_mean']:>9.4f}{_sd_column(ada['rank_loss_std'])}"
            f"{_fmt(pub_ada):>10}{ada['seconds_mean']:>7.2f}"
        )
        if best is not None:
            b = bmr[best]
            line += (
                f"{b['rank_loss_mean']:>10.4f}{_sd_column(b['rank_loss_std'])}{best:>7g}"
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
    options = {
        "learners": args.learners,
        "committee": args.committee,
        "features_per_learner": _features(args),
        "predict_with": args.predict_with,
        "bmr_loss": args.bmr_loss,
        "method": args.method,
        "no_bmr": args.no_bmr,
    }  # what the table's first line says (a 3-learner smoke run's record looked the paper's)
    write_record(
        args,
        {"suite": "mlr", **options, "rows": rows, "compile_seconds": compile_s, **_environment()},
    )
    return 0


def _cmd_reproduce_multiclass(args: argparse.Namespace) -> int:
    from olboost import experiments as ex

    check_output(args.output, reads=[("--har", args.har)])
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
    options = {"learners": args.learners, "n_features": args.features, "method": args.method}
    # every data set read and checked before the first run
    if args.har is not None and "movement" not in args.datasets:
        # taken and ignored, a wrong path included
        raise ValueError("--har: the Movement data's file, and --datasets leaves movement out")
    if args.har is not None and not Path(args.har).is_file():
        # load_uci's message named neither the option nor that a file was expected
        what = "is a directory" if Path(args.har).is_dir() else "no such file"
        raise FileNotFoundError(2, f"{what} (the Movement data, HAR's CSV)", f"--har {args.har}")
    datasets = {name: ex.load_experiment_data(name, args.har) for name in args.datasets}
    for data in datasets.values():
        if data is not None:
            _check_features(args, data, ALGORITHMS["adaboost-olm"])
    missing = [name for name, data in datasets.items() if data is None]
    if missing and "datasets" in getattr(args, "given_options", ()):
        # asked for by name, a row that cannot run is an error (as reproduce topk's), not a
        # "skipped" line and exit 0
        name = missing[0]
        raise ValueError(
            f"--datasets {name}: "
            + ("not available here" if name == "isolet" else "needs --har PATH (HAR's CSV)")
        )
    for name, data in datasets.items():
        if data is None:
            why = "not available here" if name == "isolet" else "pass --har PATH to include it"
            results[name] = {"missing": why}
            print(f"{name}: skipped ({why})", flush=True)
            continue
        n_reorder = min(args.reorderings, ex.PAPER_REORDERINGS.get(name, args.reorderings))
        results[name] = {}
        for column in columns:
            runs = []
            monte_carlo = args.method != "exact" and ex.COLUMNS[column][0] == "OnlineMBBM"
            for r in range(1, n_reorder + 1):
                key = {
                    "suite": "multiclass", "dataset": name, "rows": data.n_samples,
                    "har": args.har if name == "movement" else None, "column": column,
                    "reordering": r, "learners": args.learners, "features": args.features,
                    "olboost": __version__,
                }  # fmt: skip
                if name == "movement":
                    # the file's bytes, not only its path and rows: a file changed in place,
                    # with as many rows, was reused
                    key["har_sha256"] = files_digest([Path(args.har)])
                if monte_carlo:
                    # only then: the cells of exact potentials keep the key they had before
                    # the option existed
                    key["method"] = args.method
                cell = cache.run(
                    key,
                    lambda c=column, r=r, d=data: asdict(ex.run_column(c, d, r, **options)),
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
                f"+ {got['compile_seconds']:.2f} s compile)  [{n_reorder} reorderings"
                + (", Monte Carlo potentials]" if monte_carlo else "]"),
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
            "method": args.method,
            "learners": args.learners,
            "features_per_learner": args.features,  # None: every attribute, the paper's
            "reorderings": args.reorderings,
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
        action=GivenOption,
        help="data sets (table rows; isolet, and movement without --har: an error if named, "
        "where the default skips them)",
    )
    mc.add_argument("--columns", nargs="+", help="table columns to run (default: all)")
    mc.add_argument("--har", help="path to dataset-har-PUC-Rio-ugulino.csv(.gz) (Movement)")
    mc.add_argument("--learners", type=int, default=100, help="number N of weak learners")
    # the multiclass paper's trees see every attribute (see olboost.experiments.run_column)
    mc.add_argument("--features", type=int, help="random features per weak learner (default: all)")
    mc.add_argument(
        "--method",
        choices=["exact", "monte_carlo"],
        default="exact",
        help="the MB columns' potentials: exact, or Monte Carlo estimates as the paper's (App. "
        "E; 100 draws, as the authors' code; hundreds of times slower) (default: %(default)s)",
    )
    add_output_options(mc, cells=True)
    mc.set_defaults(func=_cmd_reproduce_multiclass)
