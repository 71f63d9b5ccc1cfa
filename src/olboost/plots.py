"""Learning curves: what ``olboost run --curve`` records and ``olboost plot`` draws.

``olboost run --curve`` adds the run's per-example values to its JSON record, in stream order
(:func:`curve_fields`):

* ``curve``: the rank loss (paper convention; for a top-k booster, of the ranking it showed) of
  every round, the training passes first, then the test split; for a multiclass booster, whether
  each example was predicted correctly (1 or 0);
* ``curve_metric``: ``"rank_loss"`` or ``"correct"``;
* ``curve_test_starts_after``: rounds before the first test example (0 when prequential).

A record whose ``curve`` is not a non-empty list of finite numbers, or whose other fields are
not as above, is refused before anything is drawn, naming the field (:func:`curve_problem`).

``olboost plot RESULTS... -o fig.png`` draws the running average of those values against the
round (:func:`plot_curves`, which returns the matplotlib ``Figure``). Records of one configuration
with different seeds become one line, their mean, with a band of one standard deviation
(``ddof=1``) around it; each configuration gets a line of its own, named in the legend by what
sets it apart. A configuration is everything a record holds except what changes from run to run
(:data:`PER_RUN_KEYS`: the seed, the results, timings, the environment); a sweep's records
(:mod:`olboost.sweep`) add the options of their task. A curve keeps :data:`DEFAULT_POINTS` rounds,
evenly spread (the first and the last included), or all of them with ``points=None``.

Drawing needs matplotlib (``pip install 'olboost[plot]'``); recording does not. Fig. 1 of the
top-k paper (``olboost reproduce topk-curves``, :mod:`olboost.topk_experiments`) is drawn by the
same code (:func:`figure`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "CURVE_METRICS",
    "DEFAULT_POINTS",
    "PER_RUN_KEYS",
    "Curve",
    "add_parsers",
    "curve_fields",
    "curve_problem",
    "curves",
    "draw",
    "figure",
    "load_records",
    "plot_curves",
    "running_average",
    "sample_rounds",
]

#: What a curve's values are -> the label of the running average's axis.
CURVE_METRICS = {
    "rank_loss": "running average rank loss",
    "correct": "running average accuracy",
}

#: Rounds kept of each curve by default (evenly spread; the first and the last always).
DEFAULT_POINTS = 500

#: Record keys that change from one run of a configuration to the next: never part of the
#: configuration that groups runs into one line.
PER_RUN_KEYS = frozenset(
    {
        "seed",
        "rank_loss",
        "rank_loss_skip",
        "n_skipped",
        "accuracy",
        "accuracy_last20",
        "seconds",
        "seconds_train",
        "seconds_test",
        "compile_seconds",
        "n_gamma_capped",
        "best_accuracy_in_hindsight",
        "curve",
        "curve_metric",
        "curve_test_starts_after",
        "olboost_version",
        "python",
        "numpy",
        "numba",
        "machine",
        "platform",
        "sweep_task",
    }
)

#: The largest ``--dpi`` of ``olboost plot``.
MAX_DPI = 1200

#: Figure size (inches), line width, band opacity: the look of every curve figure.
FIGSIZE = (7.5, 4.8)
LINEWIDTH = 1.2
BAND_ALPHA = 0.2


def curve_fields(result: Any) -> dict[str, Any]:
    """The record fields of ``olboost run --curve`` for an evaluation's outcome.

    Parameters
    ----------
    result
        An :class:`olboost.evaluate.Evaluation` (rank losses of the training passes, then of the
        test split) or :class:`olboost.evaluate.ClassificationEvaluation` (correct or not).

    Returns
    -------
    dict
        ``curve_metric``, ``curve_test_starts_after`` and ``curve`` (a list, JSON-ready).

    Examples
    --------
    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> data = load("emotions")
    >>> result = train_test(AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1),
    ...                     data.train, data.test)
    >>> fields = curve_fields(result)
    >>> fields["curve_metric"], fields["curve_test_starts_after"], len(fields["curve"])
    ('rank_loss', 391, 593)
    >>> bool(running_average(fields["curve"])[-1] == result.running_losses()[-1])
    True
    """
    if hasattr(result, "correct"):  # a multiclass evaluation
        return {
            "curve_metric": "correct",
            "curve_test_starts_after": 0,
            "curve": np.asarray(result.correct, dtype=np.int64).tolist(),
        }
    values = np.concatenate([result.train_losses, result.losses])
    return {
        "curve_metric": "rank_loss",
        "curve_test_starts_after": int(result.n_train * result.loops),
        "curve": values.tolist(),
    }


def running_average(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Entry ``t`` is the mean of ``values[0..t]`` (as
    :meth:`olboost.evaluate.Evaluation.running_losses`).

    >>> running_average([1, 0, 0, 1]).tolist()
    [1.0, 0.5, 0.3333333333333333, 0.5]
    """
    v = np.asarray(values, dtype=np.float64)
    return np.cumsum(v) / np.arange(1, v.size + 1)


def sample_rounds(total: int, points: int | None = DEFAULT_POINTS) -> np.ndarray:
    """Rounds ``1..total`` at which a curve is drawn: ``points`` of them evenly spread (the first
    and the last included), or every round with ``points=None``.

    >>> sample_rounds(10, 4).tolist()
    [1, 4, 7, 10]
    """
    if points is None or points >= total:
        return np.arange(1, total + 1)
    if points < 2:
        raise ValueError(f"points must be >= 2 or None, got {points}")
    return np.unique(np.linspace(1, total, points).round().astype(np.int64))


@dataclass(frozen=True)
class Curve:
    """One line of a figure: the mean running average at ``rounds`` (1-based) over ``runs``
    runs, and its standard deviation (``None``: no band)."""

    label: str
    rounds: np.ndarray
    mean: np.ndarray
    std: np.ndarray | None
    runs: int = 1


def _configuration(record: Mapping[str, Any]) -> str:
    """The record's configuration as a canonical string (what groups runs into one line): its
    fields but those of :data:`PER_RUN_KEYS`. ``olboost run`` records every option of its
    algorithm, so a sweep task's record (whose ``sweep_task`` is per run) and ``olboost run``'s
    of one configuration are one line."""
    config = {k: v for k, v in record.items() if k not in PER_RUN_KEYS}
    return json.dumps(config, sort_keys=True, default=str)


def _shown(value: Any, limit: int = 40) -> str:
    """``value`` as an error message quotes it: as JSON (a float as Python writes it, nan and
    inf included), cut to ``limit`` characters."""
    text = json.dumps(value, default=str) if not isinstance(value, float) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _finite_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number (not a bool) that is finite as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond any float
        return False


def curve_problem(record: Mapping[str, Any], *, values_only: bool = False) -> str | None:
    """What is wrong with the curve fields of a record holding a ``curve`` (the module
    docstring gives them), naming the field, or ``None`` when they can be drawn.

    ``curve`` must be a non-empty list of finite numbers, ``curve_metric`` (if given) a string,
    ``curve_test_starts_after`` (if given) an integer from 0 to the curve's length (not checked
    with ``values_only``).

    >>> curve_problem({"curve": [0.5, 0.25], "curve_test_starts_after": 1}) is None
    True
    >>> curve_problem({"curve": []})
    'curve must be a non-empty list of finite numbers, got []'
    """
    curve = record["curve"]
    if not isinstance(curve, list) or not curve:
        return f"curve must be a non-empty list of finite numbers, got {_shown(curve)}"
    metric = record.get("curve_metric", "rank_loss")
    if not isinstance(metric, str):
        return f"curve_metric must be a string such as 'rank_loss', got {_shown(metric)}"
    for i, value in enumerate(curve):
        if not _finite_number(value):
            return f"curve[{i}] must be a finite number, got {_shown(value)}"
    return None if values_only else _start_problem(record)


def _start_problem(record: Mapping[str, Any]) -> str | None:
    """:func:`curve_problem` of ``curve_test_starts_after``, for a record whose ``curve`` passed
    the rest (a list)."""
    start, n = record.get("curve_test_starts_after"), len(record["curve"])
    if start is not None and (
        isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= n
    ):
        return (
            f"curve_test_starts_after must be an integer from 0 to the curve's length {n}, "
            f"got {_shown(start)}"
        )
    return None


def _describe(record: Mapping[str, Any]) -> str:
    return (
        f"{record.get('algorithm', '?')} on {record.get('dataset', '?')} "
        f"(seed {record.get('seed', '?')})"
    )


def _literal(text: str) -> str:
    """``text`` drawn as it is: a ``$`` of a data set's or an option's name escaped, where
    matplotlib would parse the text between two of them as math (and refuse most of it)."""
    return text.replace("$", r"\$")


def _labels(configs: Sequence[dict[str, Any]]) -> list[str]:
    """A legend entry per configuration: algorithm and data set, then the settings that differ
    between configurations that have them (an option of one algorithm only, set alike in all
    its configurations, does not set them apart: their algorithms do); drawn as written
    (:func:`_literal`)."""
    keys = sorted({k for c in configs for k in c} - {"algorithm", "dataset"})
    differ = [
        k
        for k in keys
        if len({json.dumps(c[k], sort_keys=True) for c in configs if c.get(k) is not None}) > 1
    ]
    datasets = {str(c.get("dataset")) for c in configs}
    out = []
    for c in configs:
        label = str(c.get("algorithm", "?"))
        if len(datasets) > 1:
            label += f" on {c.get('dataset')}"
        extra = []
        for k in differ:
            v = c.get(k)
            if isinstance(v, Mapping):
                extra += [f"{kk}={vv}" for kk, vv in sorted(v.items())]
            elif v is not None:
                extra.append(f"{k}={v}")
        out.append(_literal(label + (f" ({', '.join(extra)})" if extra else "")))
    return out


#: What a message of :func:`curves` advises for runs it cannot tell apart (the command,
#: which has no group_by, says the rest of it).
_GROUP_BY_HINT = "pass group_by, or plot them separately"


def curves(
    records: Iterable[Mapping[str, Any]],
    *,
    points: int | None = DEFAULT_POINTS,
    group_by: Callable[[Mapping[str, Any]], str] | None = None,
) -> list[Curve]:
    """The lines :func:`plot_curves` draws: records grouped by configuration (or ``group_by``,
    a function of a record giving its line's label), each group's running averages averaged.

    Raises
    ------
    ValueError
        If a record has no curve or malformed curve fields (:func:`curve_problem`; the message
        names the record's index and the field), the records mix metrics (rank loss and
        correctness), or two runs of one line have curves of different lengths or the same seed
        (their records do not tell them apart: group them with ``group_by``).
    """
    records = list(records)
    if not records:
        raise ValueError("no records to plot")
    for i, r in enumerate(records):
        if "curve" not in r:
            raise ValueError(
                f"the record of {_describe(r)} holds no curve: run it with olboost run --curve "
                "(or curve = true in a sweep spec)"
            )
        # the start's range is checked last: a curve cut short is said to be of another length
        problem = curve_problem(r, values_only=True)
        if problem is not None:
            raise ValueError(f"record {i} ({_describe(r)}): {problem}")
    metrics = sorted({str(r.get("curve_metric", "rank_loss")) for r in records})
    if len(metrics) > 1:
        raise ValueError(f"records of different metrics {metrics} cannot share an axis")
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault(group_by(r) if group_by else _configuration(r), []).append(r)
    if group_by is not None:
        labels = list(groups)
    else:
        labels = _labels([json.loads(key) for key in groups])
    for label, runs in zip(labels, groups.values(), strict=True):
        seeds = [r.get("seed") for r in runs]
        twice = sorted({str(s) for s in seeds if seeds.count(s) > 1})
        if twice:
            raise ValueError(
                f"{label}: more than one run with seed {', '.join(twice)}, and their records do "
                f"not say how they differ ({_GROUP_BY_HINT})"
            )
        lengths = sorted({len(r["curve"]) for r in runs})
        if len(lengths) > 1:
            raise ValueError(f"{label}: runs of different lengths {lengths} cannot be averaged")
    for i, r in enumerate(records):
        problem = _start_problem(r)
        if problem is not None:
            raise ValueError(f"record {i} ({_describe(r)}): {problem}")
    out = []
    for label, runs in zip(labels, groups.values(), strict=True):
        stack = np.array([running_average(r["curve"]) for r in runs])
        rounds = sample_rounds(stack.shape[1], points)
        mean = stack.mean(axis=0)[rounds - 1]
        std = stack.std(axis=0, ddof=1)[rounds - 1] if len(runs) > 1 else None
        out.append(Curve(label, rounds, mean, std, len(runs)))
    return out


def _require_matplotlib(what: str = "plotting") -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            f"{what} needs matplotlib, which is not installed: pip install 'olboost[plot]'"
        ) from None


def draw(ax: Axes, lines: Sequence[Curve], *, test_starts_after: int | None = None) -> None:
    """Draw each curve on ``ax``: its mean as a line, mean +- std as a band of the line's colour;
    a dotted vertical line after round ``test_starts_after`` (if given and > 0)."""
    for c in lines:
        (line,) = ax.plot(c.rounds, c.mean, label=c.label, linewidth=LINEWIDTH)
        if c.std is not None:
            ax.fill_between(
                c.rounds, c.mean - c.std, c.mean + c.std, color=line.get_color(), alpha=BAND_ALPHA
            )
    if test_starts_after:
        ax.axvline(test_starts_after, color="grey", linestyle=":", linewidth=1)


def figure(
    lines: Sequence[Curve],
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    test_starts_after: int | None = None,
) -> Figure:
    """A new ``Figure`` (no pyplot state, no backend chosen) with the curves :func:`draw`
    draws, a legend, a light grid and the labels."""
    _require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE)
    ax = fig.subplots()
    draw(ax, lines, test_starts_after=test_starts_after)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_curves(
    records: Iterable[Mapping[str, Any]],
    *,
    points: int | None = DEFAULT_POINTS,
    title: str | None = None,
    group_by: Callable[[Mapping[str, Any]], str] | None = None,
) -> Figure:
    """The running-average learning curves of ``records`` (JSON records of ``olboost run
    --curve``, as dicts), one line per configuration, the mean over its seeds with a band of one
    standard deviation; the ``Figure`` that ``olboost plot`` saves.

    Parameters
    ----------
    records
        Records with a ``curve`` (see the module docstring).
    points
        Rounds kept of each curve (evenly spread), or ``None`` for all.
    title
        The axes' title (default: the data set, if all records share one, drawn as written: a
        ``$`` in its name is no math).
    group_by
        A function of a record giving the label of its line (default: by configuration, drawn
        as written).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, not shown nor saved: ``fig.savefig("fig.png")``.

    Raises
    ------
    ValueError
        As :func:`curves`.
    ImportError
        If matplotlib is not installed.

    Examples
    --------
    >>> record = {"algorithm": "ada-olmr", "dataset": "toy", "seed": 1, "curve_metric":
    ...           "rank_loss", "curve_test_starts_after": 2, "curve": [1.0, 0.0, 0.5, 0.5]}
    >>> records = [record, {**record, "seed": 2, "curve": [0.0, 0.0, 0.5, 0.5]}]
    >>> fig = plot_curves(records)
    >>> ax = fig.axes[0]
    >>> line = ax.get_lines()[0]
    >>> line.get_label(), line.get_xdata().tolist(), line.get_ydata().tolist()
    ('ada-olmr (2 seeds)', [1, 2, 3, 4], [0.5, 0.25, 0.3333333333333333, 0.375])
    >>> len(ax.collections)  # the band, mean +- 1 sd
    1
    >>> ax.get_ylabel(), ax.get_title()
    ('running average rank loss', 'toy')
    >>> fig.savefig(os.devnull, format="png")
    """
    _require_matplotlib()
    records = list(records)
    lines = curves(records, points=points, group_by=group_by)
    lines = [
        c if c.runs == 1 else Curve(f"{c.label} ({c.runs} seeds)", c.rounds, c.mean, c.std, c.runs)
        for c in lines
    ]
    starts = {int(r.get("curve_test_starts_after") or 0) for r in records}
    start = starts.pop() if len(starts) == 1 else None
    datasets = {r.get("dataset") for r in records}
    if title is None and len(datasets) == 1 and None not in datasets:
        title = _literal(str(datasets.pop()))
    xlabel = "round" + (" (training, then test after the dotted line)" if start else "")
    metric = str(records[0].get("curve_metric", "rank_loss"))
    return figure(
        lines,
        xlabel=xlabel,
        ylabel=CURVE_METRICS.get(metric, _literal(f"running average {metric}")),
        title=title,
        test_starts_after=start,
    )


def _read_json(path: Path) -> Any:
    """The JSON of ``path``; a file that is not UTF-8 JSON is a ``ValueError`` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not a JSON record ({err})") from None


def load_records(paths: Iterable[str | os.PathLike]) -> list[dict[str, Any]]:
    """The JSON records in ``paths``: files (each must hold a curve) and directories (their
    ``*.json`` files that hold one, e.g. a sweep's results; others are passed over).

    Raises ``ValueError`` if a file named holds no curve, a record's curve fields are malformed
    (:func:`curve_problem`: the message names the file and the field) or nothing holds one, and
    ``FileNotFoundError`` for a path that does not exist."""
    out: list[dict[str, Any]] = []

    def add(record: dict[str, Any], path: Path) -> None:
        # checked here, where the file is known, and before anything is drawn or written
        problem = curve_problem(record)
        if problem is not None:
            raise ValueError(f"{path}: {problem}")
        out.append(record)

    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.glob("*.json")):
                record = _read_json(f)
                if isinstance(record, dict) and "curve" in record:
                    add(record, f)
            continue
        if not p.exists():
            raise FileNotFoundError(f"no such file or directory: {p}")
        record = _read_json(p)
        if not isinstance(record, dict) or "curve" not in record:
            raise ValueError(
                f"{p} holds no learning curve: write it with olboost run --curve --output"
            )
        add(record, p)
    if not out:
        raise ValueError(
            "no learning curve in the results given: olboost run --curve --output, or curve = "
            "true in a sweep spec"
        )
    return out


def _check_math_text(text: str, option: str) -> None:
    """A ``ValueError`` naming ``option`` for a text whose math (between pairs of ``$``)
    matplotlib cannot draw, before any figure is drawn."""
    from matplotlib import cbook
    from matplotlib.mathtext import MathTextParser

    if not cbook.is_math_text(text):
        return
    try:
        MathTextParser("path").parse(text)
    except ValueError as err:
        reason = " ".join(str(err).split())
        raise ValueError(
            f"{option} {text!r}: matplotlib cannot draw its math text between '$' signs "
            f"({reason}); write \\$ for a dollar sign"
        ) from None


def check_figure_path(output: Path, option: str) -> None:
    """Refuse, before anything runs, a figure path whose suffix matplotlib cannot write (no
    suffix, ``.txt``): ``savefig`` would refuse it only once the figure is drawn."""
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = output.suffix[1:].lower()
    if not suffix:
        raise ValueError(
            f"{option} {output}: give the figure's format by its suffix (.png, .pdf, .svg)"
        )
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix not in formats:
        raise ValueError(
            f"{option} {output}: matplotlib writes no .{suffix} figures (formats: "
            f"{', '.join(sorted(formats))})"
        )


def write_figure(fig: Figure, path: str | os.PathLike[str], dpi: float) -> None:
    """Write ``fig`` to ``path`` atomically, in the format its suffix names (written in place,
    a full disk left a cut figure where a good one was)."""
    import io

    from olboost.checkpoint import atomic_write

    image = io.BytesIO()
    fig.savefig(image, format=Path(path).suffix.lstrip(".").lower() or "png", dpi=dpi)
    atomic_write(path, image.getvalue())


def cmd_plot(args: argparse.Namespace) -> int:
    """``olboost plot RESULTS... -o fig.png``."""
    _require_matplotlib("olboost plot")
    if args.points < 0 or args.points == 1:
        raise ValueError(f"--points must be 0 (every round) or >= 2, got {args.points}")
    if not 1 <= args.dpi <= MAX_DPI:
        # the figure is FIGSIZE inches: 1200 dpi is already 9000 x 5760 pixels
        raise ValueError(f"--dpi must be in [1, {MAX_DPI}], got {args.dpi}")
    output = Path(args.output)
    if output.is_dir():
        raise IsADirectoryError(21, "is a directory, not a figure file", f"-o {output}")
    check_figure_path(output, "-o")
    if args.title:
        _check_math_text(args.title, "--title")
    records = load_records(args.results)
    try:
        fig = plot_curves(records, points=args.points or None, title=args.title)
    except ValueError as err:
        if _GROUP_BY_HINT not in str(err):
            raise
        # group_by is the Python function's, which the command has none of
        raise ValueError(str(err).replace(_GROUP_BY_HINT, "plot them separately")) from None
    # the summary before the figure is written: nothing is written when something fails
    finals = curves(records, points=2)

    write_figure(fig, args.output, args.dpi)
    metric = str(records[0].get("curve_metric", "rank_loss"))
    for c in finals:
        sd = "" if c.std is None else f" ± {c.std[-1]:.4f}"
        print(f"{c.label}: final running average {metric} {c.mean[-1]:.4f}{sd} ({c.runs} runs)")
    print(f"figure: {args.output}")
    return 0


def add_parsers(sub: Any) -> None:
    """Add ``plot`` to the ``olboost`` subcommands."""
    from olboost.cli import HelpFormatter

    p = sub.add_parser(
        "plot",
        help="draw running-average learning curves from olboost run --curve records",
        description="Draw the running-average learning curves of JSON records written by "
        "'olboost run --curve --output' (or a sweep with curve = true): runs of one "
        "configuration with different seeds as their mean with a band of one standard "
        "deviation, each configuration a line of its own.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("results", nargs="+", help="JSON records, or directories of them")
    p.add_argument(
        "-o", "--output", required=True, help="image file (format from the suffix: png, pdf, svg)"
    )
    p.add_argument(
        "--points",
        type=int,
        default=DEFAULT_POINTS,
        help="rounds kept of each curve, evenly spread (0: every round)",
    )
    p.add_argument("--title", help="title (default: the data set, if the records share one)")
    p.add_argument("--dpi", type=int, default=120, help="resolution of raster images")
    p.set_defaults(func=cmd_plot)
