"""The runs of the top-k experiments (:mod:`olboost.topk_experiments`): the paper's settings
(Table 5), one job per run, running the jobs here or in a pool of worker processes through a
cell cache, and the jobs of Tables 1 and 2.

The pool's workers are started by spawning: :func:`run_job` and :func:`_worker_init`, which they
run, are found by their names in this module."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

#: Labels shown in Tables 1 and 2.
K = 3

#: TopOpt's edges (App. C.2); the best mean test loss is reported.
GAMMAS = (0.1, 0.2, 0.3, 0.4)

#: Table columns: top-k feedback (TopOpt, TopAda), full feedback (FullOpt, FullAda).
COLUMNS = ("TopOpt", "TopAda", "FullOpt", "FullAda")

#: Exploration scheme of Table 1 and of Table 2.
EXPLORATIONS = ("uniform", "single-swap")

#: Weak learners of the full-information columns, as ``olboost reproduce mlr`` runs them.
FULL_LEARNERS = 100

#: Random covariates each weak learner sees (App. C.2, as Jung & Tewari 2018).
FEATURES = 20

#: The trees the runs can use (``VFDTCommittee.semantics``), the first by default: the port of
#: Weka's ``HoeffdingTree`` that the authors' code grows (why, and how the two differ: "Which
#: trees" in the package's docstring).
TREES = ("weka_port", "river")

#: The data set standing in for Mediamill, and the paper's row whose settings it takes.
LARGE_STREAM = "tmc2007-500"
PAPER_ROW = {LARGE_STREAM: "mediamill"}

#: Where ``--tmc`` looks by default: the shared data beside the clone of the repository that
#: holds this module, or beside the working directory (:func:`default_tmc`).
DEFAULT_TMC = Path("..") / "shared" / "datasets" / "tmc2007-500"


def default_tmc() -> Path:
    """:data:`DEFAULT_TMC` beside the clone holding this module if it is there, else beside
    the working directory (as the Enron data are found: the runs no longer depended on the
    directory they were started from; :func:`~olboost.datasets.base.shared_candidates`)."""
    from olboost.datasets.base import shared_candidates

    candidates = shared_candidates(DEFAULT_TMC)
    return next((c for c in candidates if c.is_dir()), candidates[-1])


#: Every row of the tables, in the paper's order.
DATASETS = ("emotions", "scene", "yeast", "mediamill-reduced", LARGE_STREAM)


@dataclass(frozen=True)
class Setting:
    """One algorithm's Table 5 hyperparameters on one data set."""

    learners: int
    rho: float
    loops: int


#: Table 5, "Parameters for Algorithms in Format TopOpt/AdaOpt": (TopOpt, TopAda) per data set.
TABLE5: dict[str, tuple[Setting | None, Setting]] = {
    "emotions": (Setting(50, 0.02, 20), Setting(50, 0.02, 10)),
    "scene": (Setting(50, 0.02, 10), Setting(50, 0.04, 10)),
    "yeast": (Setting(30, 0.03, 10), Setting(60, 0.04, 10)),
    "mediamill": (None, Setting(10, 0.06, 20)),  # TopOpt was not run on Mediamill
    "mediamill-reduced": (Setting(20, 0.04, 20), Setting(60, 0.06, 20)),
}

#: Rows of each split (a job's cost is about learners x rows x loops; the longest start first).
_ROWS = {
    "emotions": (391, 202),
    "scene": (1211, 1196),
    "yeast": (1500, 917),
    "mediamill-reduced": (1500, 500),
    LARGE_STREAM: (21519, 7077),
}


#: A Monte Carlo job's cost (:attr:`Job.cost`), in times the exact one's.
_MONTE_CARLO_COST = 100


@dataclass(frozen=True)
class Job:
    """One run: ``column``'s algorithm on ``dataset`` with ``seed`` (the committee's and the
    booster's), its hyperparameters, how many points of its learning curve to return, its
    trees (one of ``TREES``) and how TopOpt and FullOpt compute their potentials (``"exact"``,
    or ``"monte_carlo"`` with 100 draws, as the authors' code estimated them)."""

    dataset: str
    column: str
    seed: int
    learners: int
    loops: int = 1
    exploration: str | None = None
    rho: float | None = None
    gamma: float | None = None
    k: int = K
    curve_points: int = 0
    trees: str = TREES[0]
    method: str = "exact"

    @property
    def cost(self) -> float:
        n_train, n_test = _ROWS.get(self.dataset, (1000, 1000))
        # the Monte Carlo potentials cost two orders of magnitude more (some 25 against 0.3 ms
        # a row on emotions): the longest jobs go first
        slower = _MONTE_CARLO_COST if self.method == "monte_carlo" else 1
        return slower * self.learners * (n_train * self.loops + n_test)


def paper_row(dataset: str) -> str:
    """The paper's row a data set is compared with (``tmc2007-500``: Mediamill's)."""
    return PAPER_ROW.get(dataset, dataset)


def build_model(job: Job) -> Any:
    """The booster of ``job`` on a :class:`~olboost.VFDTCommittee` of ``job.trees`` trees seeing
    ``FEATURES`` random covariates each."""
    from olboost import AdaOLMR, OnlineBMR, TopkAdaptive, TopkBBM, VFDTCommittee

    committee = VFDTCommittee(n_features=FEATURES, semantics=job.trees)
    common = {"learners": job.learners, "seed": job.seed}
    if job.column == "TopOpt":
        return TopkBBM(
            committee, **common, k=job.k, exploration=job.exploration, rho=job.rho,
            gamma=job.gamma, method=job.method,
        )  # fmt: skip
    if job.column == "TopAda":
        return TopkAdaptive(committee, **common, k=job.k, exploration=job.exploration, rho=job.rho)
    if job.column == "FullOpt":
        return OnlineBMR(committee, **common, gamma=job.gamma, method=job.method)
    if job.column == "FullAda":
        return AdaOLMR(committee, **common)
    raise ValueError(f"unknown column {job.column!r}; choose from {list(COLUMNS)}")


_DATA: dict[tuple[str, str | None], Any] = {}


def tmc_files(tmc: str | os.PathLike | None = None) -> list[Path]:
    """The files of ``tmc2007-500`` in the directory ``tmc`` (default: the shared data's): its
    train split, labels and test split."""
    base = default_tmc() if tmc is None else Path(tmc)
    name = LARGE_STREAM
    return [base / f"{name}-train.arff", base / f"{name}.xml", base / f"{name}-test.arff"]


def load_dataset(name: str, tmc: str | os.PathLike | None = None) -> Any:
    """A bundled MULAN set, or ``tmc2007-500`` from the directory ``tmc`` (cached per process).

    Raises ``FileNotFoundError`` naming the directory when ``tmc2007-500`` is not there."""
    key = (name, None if tmc is None else str(tmc))
    if key not in _DATA:
        from olboost.datasets import load

        if name == LARGE_STREAM:
            files = tmc_files(tmc)
            missing = [str(f) for f in files if not f.is_file()]
            if missing:
                raise FileNotFoundError(f"{name} not found: no {', '.join(missing)}")
            _DATA[key] = load(files[0], files[1], test=files[2])
        else:
            _DATA[key] = load(name)
    return _DATA[key]


def _grid(total: int, points: int) -> np.ndarray:
    """Rounds ``1..total`` at which a learning curve is kept (``points`` of them, evenly)."""
    return np.unique(np.linspace(1, total, min(points, total)).round().astype(np.int64))


def run_job(job: Job, tmc: str | None = None) -> dict[str, Any]:
    """Run ``job`` (train split ``loops`` times, then the test split; timed after a warm-up) and
    return its measurements: test rank losses under both conventions, seconds, compile seconds
    and, with ``curve_points``, the running-average loss over the whole stream at those rounds."""
    from olboost.evaluate import train_test

    data = load_dataset(job.dataset, tmc)
    model = build_model(job)
    result = train_test(model, data.train, data.test, loops=job.loops, warm_up=True)
    out: dict[str, Any] = {
        "rank_loss": result.rank_loss,
        "rank_loss_skip": result.rank_loss_skip,
        "seconds": result.seconds,
        "compile_seconds": result.compile_seconds,
        "n_learned": result.n_learned,
    }
    if job.curve_points:
        rounds = _grid(result.n_learned, job.curve_points)
        out["rounds"] = rounds.tolist()
        out["curve"] = result.running_losses()[rounds - 1].tolist()
        out["test_starts_after"] = result.n_train * result.loops
    return out


def _warm_up_kernels(jobs: Sequence[Job], tmc: str | None) -> float:
    """Compile (or load from Numba's cache) every kernel the jobs need, once, in this process
    before the pool starts: two processes compiling one kernel at once could corrupt Numba's
    on-disk cache (see ``conftest.py``). Returns the seconds it took."""
    from olboost.evaluate import warm_up

    t0 = time.perf_counter()
    seen = set()
    for job in jobs:
        kind = (job.dataset, job.column, job.exploration)
        if kind in seen:
            continue
        seen.add(kind)
        data = load_dataset(job.dataset, tmc)
        warm_up(build_model(replace(job, learners=2)), data.train, data.test, notice=True)
    return time.perf_counter() - t0


def _worker_init() -> None:
    # a worker must not write a progress bar or a notice over the parent's
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115


def job_key(job: Job, tmc: str | None = None) -> dict[str, Any]:
    """What a job's result depends on, the key of its cell: its fields, the directory of the
    large stream (for that stream) and the olboost version."""
    from olboost._version import __version__

    where = str(tmc) if job.dataset == LARGE_STREAM and tmc is not None else None
    fields = asdict(job)
    if job.dataset == LARGE_STREAM:
        # its files, not only their directory: a file changed in place was reused
        from olboost.cli._shared import files_digest

        fields["files_sha256"] = files_digest(tmc_files(tmc))
    if job.method == "exact" or job.column not in ("TopOpt", "FullOpt"):
        # the cells of exact potentials keep the key they had before the option existed, and
        # the columns without potentials one key whatever the option
        del fields["method"]
    return {"suite": "topk", **fields, "tmc": where, "olboost": __version__}


def run_jobs(
    jobs: Sequence[Job],
    n_jobs: int = 1,
    tmc: str | None = None,
    progress: bool = False,
    cache: Any = None,
) -> tuple[list[dict[str, Any]], float]:
    """Run every job, ``n_jobs`` at a time in worker processes (``1``: here, one after the
    other); return their results in the order of ``jobs`` and the compile seconds spent first.

    Longer jobs start first; results do not depend on the order or the number of processes.
    With ``cache`` (a :class:`~olboost.checkpoint.CellCache`), the jobs finished before are read
    from it, not run, and each job is stored in it as soon as it is done."""
    from olboost.checkpoint import CellCache

    cache = CellCache(None, "topk") if cache is None else cache
    results: list[dict[str, Any] | None] = [cache.get(job_key(job, tmc)) for job in jobs]
    cache.reused += sum(r is not None for r in results)
    pending = [i for i in range(len(jobs)) if results[i] is None]
    order = sorted(pending, key=lambda i: -jobs[i].cost)

    def done(i: int, result: dict[str, Any]) -> None:
        cache.computed += 1
        results[i] = cache.put(job_key(jobs[i], tmc), result)
        if bar is not None:
            bar.update(1)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), initial=len(jobs) - len(pending), desc="runs",
                   file=sys.stderr, unit="run", leave=False)  # fmt: skip
    compile_s = 0.0
    if n_jobs <= 1 or len(order) <= 1:
        for i in order:
            done(i, run_job(jobs[i], tmc))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        compile_s = _warm_up_kernels([jobs[i] for i in order], tmc)
        # spawn, not fork: the parent has started Numba's threads (forking them is unsafe)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(n_jobs, mp_context=context, initializer=_worker_init) as pool:
            futures = {pool.submit(run_job, jobs[i], tmc): i for i in order}
            for future in as_completed(futures):
                done(futures[future], future.result())
    if bar is not None:
        bar.close()
    return results, compile_s  # type: ignore[return-value]


def plan(
    datasets: Iterable[str],
    explorations: Iterable[str],
    seeds: int,
    gammas: Sequence[float] = GAMMAS,
    full: bool = True,
    loops: int | None = None,
    learners: int | None = None,
    trees: str = TREES[0],
    method: str = "exact",
) -> list[Job]:
    """The jobs of Tables 1 and 2: Table 5 hyperparameters unless ``loops`` or ``learners``
    override them (a smoke run), every column on ``trees``, TopOpt's and FullOpt's potentials
    by ``method``."""
    from olboost.cli import bmr_gammas

    jobs = []
    explorations = list(explorations)
    for name in datasets:
        opt, ada = TABLE5[paper_row(name)]
        settings = [("TopAda", ada, [None])]
        if opt is not None:
            settings.insert(0, ("TopOpt", opt, list(gammas)))
        with_full = full and name != LARGE_STREAM
        full_gammas = bmr_gammas(len(load_dataset(name).label_names)) if with_full else ()
        for seed in range(1, seeds + 1):
            for exploration in explorations:
                for column, s, edges in settings:
                    for gamma in edges:
                        jobs.append(
                            Job(
                                name,
                                column,
                                seed,
                                learners or s.learners,
                                loops or s.loops,
                                exploration,
                                s.rho,
                                gamma,
                                trees=trees,
                                method=method if column == "TopOpt" else "exact",
                            )  # fmt: skip
                        )
            if with_full:
                n = learners or FULL_LEARNERS
                for gamma in full_gammas:
                    jobs.append(
                        Job(name, "FullOpt", seed, n, gamma=gamma, trees=trees, method=method)
                    )
                jobs.append(Job(name, "FullAda", seed, n, trees=trees))
    return jobs
