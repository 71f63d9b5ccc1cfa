"""The top-k feedback experiments of Raman, Zhang, Jung & Tewari (2020): Tables 1, 2, 4 and Fig. 1.

``olboost reproduce topk --seeds 10`` re-runs Table 1 (uniform exploration) and Table 2 (single
swap): on each data set, Top-k BBM (TopOpt, :class:`olboost.TopkBBM`) and Top-k Adaptive (TopAda,
:class:`olboost.TopkAdaptive`) with ``k = 3`` and the paper's Table 5 hyperparameters (weak
learners, exploration rate ``rho`` and loops over the train split, per data set and algorithm),
beside OnlineBMR (FullOpt) and Ada.OLMR (FullAda) under full feedback, run as ``olboost reproduce
mlr`` runs them (100 learners, one pass) but on the same trees as the top-k columns. Each cell is
the mean test weighted rank loss over seeds ``1..N`` (of the ranking the booster *showed*, for the
top-k ones), printed beside the published value; run times per run are printed beside Table 4's.

**How the edges are chosen.** The paper tuned TopOpt's edge ``gamma`` over {0.1, 0.2, 0.3, 0.4}
and reported the best (App. C.2); so does this: for each data set and exploration scheme, every
``gamma`` runs on every seed and the one with the lowest mean test loss is reported (all four are
in the JSON). FullOpt's edge is chosen the same way from the four of ``olboost reproduce mlr``
(:func:`olboost.cli.bmr_gammas`). Nothing else is tuned: ``rho``, the learners and the loops are
Table 5's.

**Which trees.** Every column grows the same trees, as in the paper (Sec. 4: "the same
multilabel weak learners as in Jung and Tewari (2018)"): by default the port of Weka's
``HoeffdingTree`` that the authors' code uses (``VFDTCommittee(semantics="weka_port")``, as
``olboost reproduce multiclass`` does for the earlier paper's MB columns); ``--trees river``
runs them all on River's ``HoeffdingTreeClassifier`` semantics instead, for comparison. The two
differ where a split attempt finds no split worth making: River's leaf restarts its observers
and tries again ``grace_period`` later, the port's leaf stops trying. Top-k feedback teaches
with large weights (``max_l c^[l] - c^[l]`` from estimates scaled by inverse inclusion
probabilities), so a River leaf then retries at almost every example.

**Mediamill.** The full Mediamill set is not available here; its row is replaced by
``tmc2007-500`` (21,519 + 7,077 examples, 22 labels), the large stream at hand, run with
Mediamill's Table 5 hyperparameters for TopAda only (TopOpt on Mediamill was not run in the paper
either). Its published numbers are Mediamill's, printed for scale, not as a target. The data set is
read from a directory (``--tmc``, by default ``../shared/datasets/tmc2007-500`` beside a clone of
the repository); the row is skipped, saying so, when it is absent.

``olboost reproduce topk-curves`` draws Fig. 1: Top-k BBM on yeast with ``k`` in {2, 3, 4, 6, 8,
10, 14} (uniform exploration: single swap needs ``k >= 3``), Table 5 hyperparameters, the running
average of the weighted rank loss over the whole stream (training loops, then test) as the mean of
the seeds (``--seeds``, 10 by default) with a one-standard-deviation band, to a PNG (matplotlib:
``pip install 'olboost[plot]'``), and the curves' numbers to a JSON file beside it.

Runs are independent jobs, one per (data set, algorithm, exploration, edge, seed), spread over
``--jobs`` processes (default: every core). Each job is a pure function of its parameters, so the
results do not depend on how the jobs were scheduled; the kernels are compiled (or loaded from
Numba's cache) once before the pool starts, and each run is timed after its own warm-up. Each
finished job is kept as a cell beside the output (``reproduce_topk.cells``, see
:func:`olboost.cli.cell_cache`): a rerun after a crash runs only the jobs not done.
"""

# Every name of the former single module stays importable from here (``__all__`` unchanged).
from olboost.topk_experiments._commands import (  # noqa: F401
    CURVE_GAMMA,
    CURVE_KS,
    add_parsers,
    cmd_curves,
    cmd_topk,
    plot_curves,
)
from olboost.topk_experiments._jobs import (  # noqa: F401
    COLUMNS,
    DATASETS,
    DEFAULT_TMC,
    EXPLORATIONS,
    FEATURES,
    FULL_LEARNERS,
    GAMMAS,
    LARGE_STREAM,
    PAPER_ROW,
    TABLE5,
    TREES,
    Job,
    K,
    Setting,
    build_model,
    job_key,
    load_dataset,
    paper_row,
    plan,
    run_job,
    run_jobs,
)
from olboost.topk_experiments._tables import (  # noqa: F401
    PUBLISHED,
    PUBLISHED_SECONDS,
    PUBLISHED_STD,
    TOLERANCE,
    collect,
    format_tables,
)

__all__ = [
    "COLUMNS",
    "CURVE_KS",
    "GAMMAS",
    "PUBLISHED",
    "PUBLISHED_SECONDS",
    "TABLE5",
    "Job",
    "Setting",
    "job_key",
    "run_job",
    "run_jobs",
]
