"""The commands of :mod:`olboost.topk_experiments`: ``olboost reproduce topk`` (Tables 1, 2 and
4, with their record) and ``olboost reproduce topk-curves`` (Fig. 1, drawn and recorded), with
their options."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from olboost.cli._algorithms import GivenOption
from olboost.cli._shared import add_suite_parser, load_average
from olboost.metrics import sample_sd
from olboost.topk_experiments._jobs import (
    DATASETS,
    DEFAULT_TMC,
    EXPLORATIONS,
    GAMMAS,
    LARGE_STREAM,
    PAPER_ROW,
    TABLE5,
    TREES,
    Job,
    K,
    build_model,
    load_dataset,
    plan,
    run_jobs,
    tmc_files,
)
from olboost.topk_experiments._tables import (
    PUBLISHED,
    PUBLISHED_SECONDS,
    PUBLISHED_STD,
    TOLERANCE,
    collect,
    format_tables,
)

#: Fig. 1: Top-k BBM on yeast with these ``k``.
CURVE_KS = (2, 3, 4, 6, 8, 10, 14)

#: Fig. 1's edge, which Table 5 does not give: the one ``reproduce topk --seeds 10`` chose for yeast
#: in both tables (``benchmarks/results/reproduce_topk.json``).
CURVE_GAMMA = 0.1


def _default_output(name: str) -> Path:
    """``benchmarks/results/<name>`` when run from the repository, else ``<name>`` here."""
    results = Path("benchmarks") / "results"
    return results / name if results.is_dir() else Path(name)


def _n_jobs(value: int | None) -> int:
    n = (os.cpu_count() or 1) if value is None else value
    if n < 1:
        raise ValueError(f"--jobs must be >= 1, got {n}")
    return n


def _check_counts(args: argparse.Namespace) -> None:
    for name in ("seeds", "loops", "learners"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise ValueError(f"--{name} must be >= 1, got {value}")


def cmd_topk(args: argparse.Namespace) -> int:
    """``olboost reproduce topk``: Tables 1, 2 and 4."""
    from olboost.cli import _environment, cell_cache, check_output, show_progress, write_record

    output = Path(args.output) if args.output else _default_output("reproduce_topk.json")
    check_output(output, reads=[("--tmc", f) for f in tmc_files(args.tmc)])
    if args.tmc is not None and LARGE_STREAM not in args.datasets:
        # taken and ignored, a wrong path included
        raise ValueError(
            f"--tmc: the {LARGE_STREAM} data's directory, and --datasets leaves it out"
        )
    _check_counts(args)
    n_jobs = _n_jobs(args.jobs)
    unknown = [g for g in args.gammas if not 0.0 < g < 1.0]
    if unknown:
        raise ValueError(f"--gammas must lie in (0, 1), got {unknown}")
    datasets, skipped = [], {}
    for name in args.datasets:
        if name == LARGE_STREAM:
            try:
                load_dataset(name, args.tmc)
            except FileNotFoundError as err:
                # asked for by name (--datasets), it is not skipped: "0 runs", exit 0 before
                if args.tmc is not None or "datasets" in getattr(args, "given_options", ()):
                    raise
                skipped[name] = f"{err} (pass --tmc DIR to include it)"
                print(f"{name}: skipped: {skipped[name]}", flush=True)
                continue
        datasets.append(name)
    jobs = plan(
        datasets, args.explorations, args.seeds, args.gammas, not args.no_full, args.loops,
        args.learners, args.trees, args.method,
    )  # fmt: skip
    print(
        f"{len(jobs)} runs ({args.seeds} seeds) on {n_jobs} process"
        f"{'es' if n_jobs > 1 else ''}: Table 5 settings"
        + (f", loops overridden: {args.loops}" if args.loops else "")
        + (f", learners overridden: {args.learners}" if args.learners else "")
        + f"; {args.trees} trees"
        + ("; Monte Carlo potentials" if args.method == "monte_carlo" else ""),
        flush=True,
    )
    cache = cell_cache(args, output, "topk")
    load_start = load_average()
    t0 = time.perf_counter()
    results, compile_s = run_jobs(jobs, n_jobs, args.tmc, show_progress(args), cache)
    wall = time.perf_counter() - t0
    if cache.summary():
        print(cache.summary(), flush=True)
    warm_s = sum(r["compile_seconds"] or 0.0 for r in results)
    collected = collect(jobs, results)
    overridden = ", ".join(
        f"{name} {value}"
        for name, value in (("loops", args.loops), ("learners", args.learners))
        if value
    )
    for line in format_tables(collected, args.seeds, datasets, args.gammas, overridden):
        print(line)
    print(
        f"\n{len(jobs)} runs in {wall:.1f} s wall time on {n_jobs} process"
        f"{'es' if n_jobs > 1 else ''}, all included (compiling or loading the kernels: "
        f"{compile_s:.1f} s before the runs, {warm_s:.1f} s in the runs' warm-ups, outside their "
        f"seconds); load average at start {load_start}",
        flush=True,
    )
    record = {
        "suite": "topk",
        "k": K,
        "seeds": args.seeds,
        "datasets": datasets,
        "skipped": skipped,
        "explorations": list(args.explorations),
        "gammas": list(args.gammas),
        "gamma_choice": "per data set and table, the edge with the lowest mean test loss over "
        "the seeds (TopOpt: of gammas; FullOpt: of olboost.cli.bmr_gammas)",
        "loops_override": args.loops,
        "learners_override": args.learners,
        "trees": args.trees,
        "method": args.method,
        "table5": {
            name: [None if s is None else asdict(s) for s in v] for name, v in TABLE5.items()
        },
        "stand_in": PAPER_ROW,
        "tables": collected["tables"],
        "full": collected["full"],
        "published": PUBLISHED,
        "published_std": PUBLISHED_STD,
        "published_seconds": PUBLISHED_SECONDS,
        "tolerance": TOLERANCE,
        "runs": len(jobs),
        "jobs": n_jobs,
        "wall_seconds": wall,
        "compile_seconds": compile_s,
        "warm_up_seconds": warm_s,
        "loadavg_start": load_start,
        "loadavg_end": load_average(),
        "cpu_count": os.cpu_count(),
        **_environment(),
    }
    write_record(args, record, output)
    print(f"results: {output}")
    return 0


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            "reproduce topk-curves draws its figure with matplotlib, which is not installed: "
            "pip install 'olboost[plot]'"
        ) from None


def plot_curves(record: dict[str, Any], path: str | os.PathLike) -> Any:
    """Fig. 1 from the record :func:`cmd_curves` writes: one curve per ``k``, mean running
    average over the seeds with a one-standard-deviation band, drawn by
    :func:`olboost.plots.figure` (as ``olboost plot``), saved to ``path``; returns the figure."""
    _require_matplotlib()
    from olboost import plots

    lines = []
    for k, c in record["curves"].items():
        rounds, mean = np.asarray(c["rounds"]), np.asarray(c["mean"])
        std = None if c["std"] is None else np.asarray(c["std"])  # one seed: no band
        lines.append(plots.Curve(f"k = {k}", rounds, mean, std, record["seeds"]))
    fig = plots.figure(
        lines,
        xlabel="round (training loops, then test after the dotted line)",
        ylabel="running average weighted rank loss",
        title=f"Top-k BBM on {record['dataset']} ({record['learners']} learners, rho "
        f"{record['rho']:g}, gamma {record['gamma']:g}, {record['loops']} loops, "
        f"{record.get('trees', 'river')} trees; "
        f"{record['seeds']} seeds, mean ± 1 sd)",
        test_starts_after=record["test_starts_after"],
    )
    plots.write_figure(fig, path, 120)
    return fig


def cmd_curves(args: argparse.Namespace) -> int:
    """``olboost reproduce topk-curves``: Fig. 1."""
    from olboost.cli import _environment, cell_cache, check_output, show_progress, write_record

    output = Path(args.output) if args.output else _default_output("topk_curves.png")
    check_output(output)
    numbers = output.with_suffix(".json")
    try:  # written after every run: a directory there lost them all
        check_output(numbers)
    except OSError as err:
        raise type(err)(
            err.errno,
            f"the numbers go beside the figure, to {numbers}: {err.strerror.split(';')[0]}",
            f"--output {output}",
        ) from None
    _require_matplotlib()
    from olboost.plots import check_figure_path

    check_figure_path(output, "--output")  # the figure is drawn after every run
    _check_counts(args)
    n_jobs = _n_jobs(args.jobs)
    if args.points < 2:
        raise ValueError(f"--points must be >= 2, got {args.points}")
    opt, _ = TABLE5[args.dataset]
    assert opt is not None
    # an option given as 0 is checked (and refused) as given, not replaced by Table 5's value
    learners = opt.learners if args.learners is None else args.learners
    loops = opt.loops if args.loops is None else args.loops
    rho = opt.rho if args.rho is None else args.rho
    m = len(load_dataset(args.dataset).label_names)
    bad = [k for k in args.ks if not 2 <= k <= m]
    if bad:
        raise ValueError(f"--ks must lie in 2..{m} (the labels of {args.dataset}), got {bad}")
    repeated = sorted({k for k in args.ks if args.ks.count(k) > 1})
    if repeated:
        # one curve of twice the seeds, recorded as --seeds of them
        raise ValueError(f"--ks names {repeated} more than once")
    jobs = [
        Job(
            args.dataset,
            "TopOpt",
            seed,
            learners,
            loops,
            "uniform",
            rho,
            args.gamma,
            k,
            args.points,
            args.trees,
        )  # fmt: skip
        for k in args.ks
        for seed in range(1, args.seeds + 1)
    ]
    for job in jobs[:: args.seeds]:  # one per k: the model's parameters (--gamma, --rho)
        build_model(job)._validate_params()  # before the cells' directory is made
    cache = cell_cache(args, output, "topk-curves")
    t0 = time.perf_counter()
    results, compile_s = run_jobs(jobs, n_jobs, None, show_progress(args), cache)
    wall = time.perf_counter() - t0
    warm_s = sum(r["compile_seconds"] or 0.0 for r in results)
    if cache.summary():
        print(cache.summary(), flush=True)
    curves: dict[str, dict[str, Any]] = {}
    for k in args.ks:
        runs = [r for job, r in zip(jobs, results, strict=True) if job.k == k]
        stack = np.array([r["curve"] for r in runs])
        finals = [r["rank_loss"] for r in runs]
        curves[str(k)] = {
            "rounds": runs[0]["rounds"],
            "mean": stack.mean(axis=0).tolist(),
            "std": stack.std(axis=0, ddof=1).tolist() if len(runs) > 1 else None,
            "final_running_mean": float(stack[:, -1].mean()),
            "test_rank_loss_mean": float(np.mean(finals)),
            "test_rank_loss_std": sample_sd(finals),
            "test_rank_loss_per_seed": finals,
        }
    record = {
        "figure": "Raman et al. 2020, Fig. 1",
        "dataset": args.dataset,
        "algorithm": "TopkBBM",
        "exploration": "uniform",
        "learners": learners,
        "rho": rho,
        "gamma": args.gamma,
        "loops": loops,
        "trees": args.trees,
        "seeds": args.seeds,
        "ks": list(args.ks),
        "test_starts_after": results[0]["test_starts_after"],
        "rounds_total": results[0]["n_learned"],
        "curves": curves,
        "wall_seconds": wall,
        "compile_seconds": compile_s,
        "warm_up_seconds": warm_s,
        "jobs": n_jobs,
        **_environment(),
    }
    write_record(args, record, numbers)  # first: the runs' numbers outlive a failed drawing
    plot_curves(record, output)
    print(f"{'k':>3}{'final running mean':>20}{'test loss ± sd':>20}")
    for k, c in curves.items():
        print(
            f"{k:>3}{c['final_running_mean']:>20.4f}"
            f"{c['test_rank_loss_mean']:>12.4f}{_sd_text(c['test_rank_loss_std'])}"
        )
    processes = f"{n_jobs} process" + ("es" if n_jobs != 1 else "")
    print(f"{len(jobs)} runs in {wall:.1f} s on {processes}; figure: {output}, numbers: {numbers}")
    return 0


def _add_trees_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trees",
        choices=TREES,
        default=TREES[0],
        help="every run's weak learners (VFDTCommittee.semantics): weka_port, the port of Weka's "
        "HoeffdingTree the authors' code grows (default), or river, River's "
        "HoeffdingTreeClassifier",
    )


def add_parsers(sub: Any) -> None:
    """Add ``topk`` and ``topk-curves`` to the ``olboost reproduce`` subcommands."""
    from olboost import topk_experiments
    from olboost.cli import add_output_options

    doc = topk_experiments.__doc__
    topk = add_suite_parser(
        sub, "topk", "Raman et al. 2020, Tables 1, 2 and 4 (top-k feedback)", doc, 1
    )
    topk.add_argument("--seeds", type=int, default=10, help="seeds 1..N per cell")
    topk.add_argument(
        "--datasets",
        nargs="+",
        choices=DATASETS,
        default=list(DATASETS),
        action=GivenOption,
        help=f"table rows ({LARGE_STREAM}: an error if absent, where the default skips it)",
    )
    topk.add_argument(
        "--explorations",
        nargs="+",
        choices=EXPLORATIONS,
        default=list(EXPLORATIONS),
        help="uniform: Table 1; single-swap: Table 2",
    )
    topk.add_argument(
        "--gammas", nargs="+", type=float, default=list(GAMMAS), help="TopOpt's edges to try"
    )
    topk.add_argument("--no-full", action="store_true", help="skip the FullOpt and FullAda columns")
    topk.add_argument(
        "--loops",
        type=int,
        help="override Table 5's loops for every top-k run (a quick look; the comparison with "
        "the paper needs Table 5's)",
    )
    topk.add_argument(
        "--learners",
        type=int,
        help="override every run's weak learners (Table 5's, 100 for the Full columns): a smoke "
        "run",
    )
    topk.add_argument(
        "--tmc",
        help=f"directory holding {LARGE_STREAM}-{{train,test}}.arff and {LARGE_STREAM}.xml "
        f"(default: {DEFAULT_TMC} beside the clone, or beside the working directory; skipped "
        "if absent)",
    )
    _add_trees_option(topk)
    topk.add_argument(
        "--method",
        choices=["exact", "monte_carlo"],
        default="exact",
        help="TopOpt's and FullOpt's potentials: exact, or Monte Carlo estimates (100 draws) as "
        "the authors' code (default: %(default)s)",
    )
    topk.add_argument("--jobs", type=int, help="worker processes (default: every core)")
    add_output_options(
        topk,
        output="JSON results (default: benchmarks/results/reproduce_topk.json in the repository, "
        "else ./reproduce_topk.json: it replaces the committed record; give another path for a "
        "trial)",
        cells=True,
    )
    topk.set_defaults(func=cmd_topk)

    curves = add_suite_parser(
        sub,
        "topk-curves",
        "Raman et al. 2020, Fig. 1 (learning curves of Top-k BBM on yeast)",
        doc,
        5,
    )
    curves.add_argument("--seeds", type=int, default=10, help="seeds 1..N per curve")
    curves.add_argument("--ks", nargs="+", type=int, default=list(CURVE_KS), help="labels shown")
    curves.add_argument(
        "--dataset",
        choices=[d for d in TABLE5 if d != "mediamill"],
        default="yeast",
        help="data set of the curves (default: %(default)s, as Fig. 1)",
    )
    curves.add_argument(
        "--gamma",
        type=float,
        default=CURVE_GAMMA,
        help="Top-k BBM's edge (not in Table 5: the one reproduce topk chose for yeast)",
    )
    curves.add_argument("--rho", type=float, help="exploration rate (default: Table 5's)")
    curves.add_argument("--loops", type=int, help="loops (default: Table 5's)")
    curves.add_argument("--learners", type=int, help="weak learners (default: Table 5's)")
    curves.add_argument("--points", type=int, default=500, help="points kept of each curve")
    _add_trees_option(curves)
    curves.add_argument("--jobs", type=int, help="worker processes (default: every core)")
    add_output_options(
        curves,
        output="PNG path; the numbers go beside it as .json (default: "
        "benchmarks/results/topk_curves.png in the repository, else ./topk_curves.png: it replaces "
        "the committed figure; give another path for a trial)",
        cells=True,
    )
    curves.set_defaults(func=cmd_curves)


def _sd_text(sd: float | None) -> str:
    """`` ± sd``, or nothing for one seed, whose spread is unknown."""
    return "" if sd is None else f" ± {sd:.4f}"
