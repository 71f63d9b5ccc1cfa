"""Tables 1, 2 and 4 of the top-k experiments (:mod:`olboost.topk_experiments`): the published
values, the runs' means over seeds with the chosen edges, and the printed tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from olboost.metrics import sample_sd
from olboost.topk_experiments._jobs import GAMMAS, LARGE_STREAM, PAPER_ROW, Job, K, paper_row

#: Mean test weighted rank loss published (Table 1 uniform, Table 2 single swap; the full-feedback
#: columns are the same in both): ``PUBLISHED[exploration][paper row] = (TopOpt, TopAda, FullOpt,
#: FullAda)``, ``None`` where the paper has none.
PUBLISHED: dict[str, dict[str, tuple[float | None, ...]]] = {
    "uniform": {
        "emotions": (0.20, 0.22, 0.17, 0.16),
        "scene": (0.11, 0.13, 0.07, 0.09),
        "yeast": (0.23, 0.23, 0.18, 0.19),
        "mediamill": (None, 0.09, None, 0.05),
        "mediamill-reduced": (0.11, 0.11, 0.06, 0.06),
    },
    "single-swap": {
        "emotions": (0.19, 0.23, 0.17, 0.16),
        "scene": (0.11, 0.13, 0.07, 0.09),
        "yeast": (0.22, 0.22, 0.18, 0.19),
        "mediamill": (None, 0.08, None, 0.05),
        "mediamill-reduced": (0.11, 0.11, 0.06, 0.06),
    },
}

#: Table 3: standard deviations over the 10 runs (uniform), (TopOpt, TopAda).
PUBLISHED_STD: dict[str, tuple[float | None, float]] = {
    "emotions": (0.013, 0.031),
    "scene": (0.010, 0.015),
    "yeast": (0.0054, 0.0059),
    "mediamill": (None, 0.0011),
    "mediamill-reduced": (0.0087, 0.0069),
}

#: Table 4: average run time in seconds (uniform), (TopOpt, TopAda).
PUBLISHED_SECONDS: dict[str, tuple[float | None, float]] = {
    "emotions": (299.0, 189.0),
    "scene": (415.0, 371.0),
    "yeast": (334.0, 260.0),
    "mediamill": (None, 4752.0),
    "mediamill-reduced": (1852.0, 352.0),
}

#: The issue's accuracy target: within this of the published value, or better.
TOLERANCE = 0.02


def _summary(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    losses = [r["rank_loss"] for r in runs]
    return {
        "rank_loss_mean": float(np.mean(losses)),
        "rank_loss_std": sample_sd(losses),
        "rank_loss_per_seed": losses,
        "rank_loss_skip_mean": float(np.mean([r["rank_loss_skip"] for r in runs])),
        "seconds_mean": float(np.mean([r["seconds"] for r in runs])),
        "compile_seconds": float(sum(r["compile_seconds"] or 0.0 for r in runs)),
    }


def _best(by_gamma: dict[float, dict[str, Any]]) -> dict[str, Any]:
    """The edge with the lowest mean test loss, its summary, and every edge's."""
    gamma = min(by_gamma, key=lambda g: (by_gamma[g]["rank_loss_mean"], g))
    return {
        "gamma": gamma,
        **by_gamma[gamma],
        "by_gamma": {str(g): s for g, s in by_gamma.items()},
    }


def collect(jobs: Sequence[Job], results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means over seeds: ``{"tables": {exploration: {dataset: {column: summary}}}, "full":
    {dataset: {column: summary}}}``, with the chosen edges (see
    :mod:`olboost.topk_experiments`)."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for job, result in zip(jobs, results, strict=True):
        key = (job.dataset, job.column, job.exploration, job.gamma)
        groups.setdefault(key, []).append(result)
    cells: dict[tuple, dict[Any, dict[str, Any]]] = {}
    for (dataset, column, exploration, gamma), runs in groups.items():
        cells.setdefault((dataset, column, exploration), {})[gamma] = _summary(runs)
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    full: dict[str, dict[str, Any]] = {}
    for (dataset, column, exploration), by_gamma in cells.items():
        cell = _best(by_gamma) if column in ("TopOpt", "FullOpt") else by_gamma[None]
        where = full if exploration is None else tables.setdefault(exploration, {})
        where.setdefault(dataset, {})[column] = cell
    return {"tables": tables, "full": full}


# ---------------------------------------------------------------------------------- printing


def _cell(value: float | None, published: float | None, comparable: bool) -> str:
    if value is None:
        return f"{'-':>8}{'':>7}{'':>5}"
    pub = "-" if published is None else f"{published:.2f}"
    if published is None or not comparable:
        mark = ""
    else:
        mark = "ok" if value <= published + TOLERANCE + 1e-12 else "MISS"
    return f"{value:>8.4f}{'[' + pub + ']':>7}{mark:>5}"


def format_tables(
    collected: dict[str, Any],
    seeds: int,
    datasets: Sequence[str],
    gammas: Sequence[float] = GAMMAS,
    overridden: str = "",
) -> list[str]:
    """The printed Tables 1, 2 and 4 (ours beside the published values). ``overridden`` names
    the Table 5 settings a run replaced (e.g. ``"loops 1, learners 3"``): its numbers are then
    no reproduction, so no cell is marked ok or MISS and no speed-up is given."""
    lines = []
    titles = {"uniform": "Table 1: uniform exploration", "single-swap": "Table 2: single swap"}
    for exploration, rows in collected["tables"].items():
        lines.append(
            f"\n{titles[exploration]}; k = {K}; mean test weighted rank loss over seeds "
            f"1..{seeds} [published]; "
            + (
                f"settings overridden ({overridden}): not compared with the published values"
                if overridden
                else f"ok: within {TOLERANCE} of it or better"
            )
        )
        lines.append(
            f"{'data':<18}{'TopOpt':>20}{'gamma':>6}{'TopAda':>20}{'FullOpt':>20}{'gamma':>6}"
            f"{'FullAda':>20}"
        )
        for name in datasets:
            if name not in rows:
                continue
            top = rows[name]
            full = collected["full"].get(name, {})
            pub = PUBLISHED[exploration][paper_row(name)]
            comparable = name not in PAPER_ROW and not overridden
            line = f"{name + ('*' if name in PAPER_ROW else ''):<18}"
            for column, j in (("TopOpt", 0), ("TopAda", 1), ("FullOpt", 2), ("FullAda", 3)):
                cell = (top if column.startswith("Top") else full).get(column)
                line += _cell(None if cell is None else cell["rank_loss_mean"], pub[j], comparable)
                if column.endswith("Opt"):
                    gamma = "" if cell is None else f"{cell['gamma']:g}"
                    line += f"{gamma:>6}"
            lines.append(line)
    if any(name in PAPER_ROW for name in datasets):
        lines.append(
            f"* {LARGE_STREAM} stands in for Mediamill (not available), with Mediamill's Table 5 "
            "settings; the published values in brackets are Mediamill's, for scale only."
        )
    lines.append(
        f"gamma: TopOpt's edge is the one of {{{', '.join(f'{g:g}' for g in gammas)}}} (--gammas) "
        "with the lowest mean test loss over the seeds, per data set and table (the paper tuned "
        "it over {0.1, 0.2, 0.3, 0.4} on that set and reported the best, App. C.2); FullOpt's "
        "likewise among the four edges of `reproduce mlr`."
    )
    uniform = collected["tables"].get("uniform")
    if uniform:
        lines.append(
            "\nTable 4: seconds per run, uniform exploration (ours: mean over seeds, compiling "
            "excluded [published]; "
            + (
                f"settings overridden ({overridden}): no speed-up)"
                if overridden
                else "speed-up = published / ours)"
            )
        )
        lines.append(
            f"{'data':<18}{'TopOpt':>10}{'[paper]':>9}{'x':>7}{'TopAda':>10}{'[paper]':>9}{'x':>7}"
        )
        for name in datasets:
            if name not in uniform:
                continue
            line = f"{name + ('*' if name in PAPER_ROW else ''):<18}"
            for j, column in enumerate(("TopOpt", "TopAda")):
                cell = uniform[name].get(column)
                paper = PUBLISHED_SECONDS[paper_row(name)][j]
                if cell is None:
                    line += f"{'-':>10}{'-' if paper is None else f'{paper:g}':>9}{'':>7}"
                    continue
                ours = cell["seconds_mean"]
                ratio = (
                    ""
                    if paper is None or name in PAPER_ROW or overridden
                    else f"{paper / ours:.0f}"
                )
                line += f"{ours:>10.2f}{'-' if paper is None else f'{paper:g}':>9}{ratio:>7}"
            lines.append(line)
    return lines
