"""Top-k BBM and Top-k Adaptive against the paper's run times (``python benchmarks/topk.py``).

Every run of Table 1 of Raman, Zhang, Jung & Tewari (2020): TopOpt (:class:`olboost.TopkBBM`) and
TopAda (:class:`olboost.TopkAdaptive`) on emotions, scene, yeast and mediamill-reduced, ``k = 3``,
uniform exploration, the paper's Table 5 hyperparameters (learners, ``rho``, loops over the train
split; :data:`olboost.topk_experiments.TABLE5`), the trees ``olboost reproduce topk`` grows by
default (:data:`olboost.topk_experiments.TREES`), seed 1, the train/test protocol with those loops
(:func:`olboost.evaluate.train_test`). TopOpt's edge is not in Table 5 and barely moves the time:
``gamma = 0.1``. Each case runs in its own subprocess with ``NUMBA_NUM_THREADS=1`` (one thread),
timed after a warm-up that compiles every kernel (or loads it from Numba's cache), ``--repeats``
times; the fastest run is the case's time (the machine is shared: slower repeats measure the other
work on it), every repeat is recorded.

Target (issue 12): each run at least 200x faster than the paper's Table 4 (emotions 299 / 189 s,
scene 415 / 371 s, yeast 334 / 260 s, m-reduced 1,852 / 352 s). ``tmc2007-500`` (TopAda with
Mediamill's Table 5 settings, from ``../shared/datasets``; skipped when absent) is timed once
for information: Table 4's Mediamill time (4,752 s) is of another data set, no target.
Where the time goes: for yeast and mediamill-reduced, TopAda runs once more with trees that never
attempt a split (``grace_period`` far beyond any leaf's weight; the case ``...-no-split-attempts``,
not a model anyone would use, its rank loss is meaningless): what a run costs besides the split
attempts, recorded with the share of the run those attempts take (``split_attempt_share``).
Written to ``results/topk.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from _common import SHARED, load_mulan, loadavg, machine_info, process_facts, run_one

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

#: Speed-up over Table 4 the issue asks for.
TARGET_SPEEDUP = 200.0
#: TopOpt's edge in the timed runs (Table 5 has none).
GAMMA = 0.1
#: Every case runs on one Numba thread.
ONE_THREAD = {"NUMBA_NUM_THREADS": "1"}
#: The column suffix of the runs whose trees never attempt a split (their grace period).
NO_SPLITS = "-no-split-attempts"
NEVER = (1e300, 1e300)
#: The data sets on which TopAda is also timed without split attempts.
NO_SPLIT_DATASETS = ("yeast", "mediamill-reduced")


def _case(name: str, column: str, repeats: int) -> dict:
    """Warm up, then run ``column`` on ``name`` ``repeats`` times; return the measurements."""
    from olboost import TopkAdaptive, TopkBBM, VFDTCommittee
    from olboost import topk_experiments as tx
    from olboost.evaluate import train_test, warm_up

    load_start = loadavg()
    data = load_mulan(name)
    opt, ada = tx.TABLE5[tx.paper_row(name)]
    setting = opt if column == "TopOpt" else ada
    trees = {"grace_period": NEVER} if column.endswith(NO_SPLITS) else {}

    def make():
        common = {
            "learners": setting.learners, "seed": 1, "k": tx.K, "exploration": "uniform",
            "rho": setting.rho,
        }  # fmt: skip
        committee = VFDTCommittee(n_features=tx.FEATURES, semantics=tx.TREES[0], **trees)
        if column == "TopOpt":
            return TopkBBM(committee, **common, gamma=GAMMA)
        return TopkAdaptive(committee, **common)

    compile_s = warm_up(make(), data.train, data.test)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = train_test(make(), data.train, data.test, loops=setting.loops)
        runs.append({"seconds": result.seconds, "wall": time.perf_counter() - t0,
                     "rank_loss": result.rank_loss})  # fmt: skip
    best = min(runs, key=lambda r: r["seconds"])
    return {
        "dataset": name,
        "column": column,
        "learners": setting.learners,
        "rho": setting.rho,
        "loops": setting.loops,
        "gamma": GAMMA if column == "TopOpt" else None,
        "examples_learned": result.n_learned,
        "seconds": best["seconds"],
        "seconds_per_repeat": [r["seconds"] for r in runs],
        "rank_loss": best["rank_loss"],
        "warmup_seconds": compile_s,
        **process_facts(load_start),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=3, metavar=("DATASET", "COLUMN", "REPEATS"))
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per case (best kept)")
    args = parser.parse_args()
    if args.one:
        name, column, repeats = args.one
        print(json.dumps(_case(name, column, int(repeats))))
        return 0

    from olboost import topk_experiments as tx

    RESULTS.mkdir(parents=True, exist_ok=True)
    machine = machine_info(env=("NUMBA_NUM_THREADS", "OMP_WAIT_POLICY"))
    print(
        f"{'case':<26} {'learned':>8} {'seconds':>8} {'paper s':>8} {'speed-up':>9} {'met':>4} "
        f"{'rank loss':>9} {'load':>5}",
        flush=True,
    )
    cases: dict[str, dict] = {}
    for name in ("emotions", "scene", "yeast", "mediamill-reduced", tx.LARGE_STREAM):
        for j, column in enumerate(("TopOpt", "TopAda")):
            label = f"{name}-{column}"
            paper = tx.PUBLISHED_SECONDS[tx.paper_row(name)][j]
            if name == tx.LARGE_STREAM:
                if column == "TopOpt":
                    continue
                if not (SHARED / name).is_dir():
                    cases[label] = {"skipped": f"{SHARED / name} not found"}
                    print(f"{label:<26} skipped: {cases[label]['skipped']}", flush=True)
                    continue
            repeats = 1 if name == tx.LARGE_STREAM else args.repeats
            r = run_one(__file__, [name, column, str(repeats)], ONE_THREAD)
            r["paper_seconds"] = paper
            if name == tx.LARGE_STREAM:
                r["paper_seconds_note"] = "Table 4's Mediamill, another data set: no target"
                r["speedup"] = r["met"] = None
            else:
                r["speedup"] = paper / r["seconds"]
                r["target_speedup"] = TARGET_SPEEDUP
                r["met"] = r["speedup"] >= TARGET_SPEEDUP
            cases[label] = r
            speedup = "-" if r["speedup"] is None else f"{r['speedup']:.0f}x"
            met = "-" if r["met"] is None else ("yes" if r["met"] else "NO")
            print(
                f"{label:<26} {r['examples_learned']:>8} {r['seconds']:>8.2f} {paper:>8g} "
                f"{speedup:>9} {met:>4} {r['rank_loss']:>9.4f} {r['loadavg_start'][0]:>5.2f}",
                flush=True,
            )
            if column == "TopAda" and name in NO_SPLIT_DATASETS:
                bare = run_one(__file__, [name, column + NO_SPLITS, str(repeats)], ONE_THREAD)
                cases[label + NO_SPLITS] = bare
                r["split_attempt_share"] = 1.0 - bare["seconds"] / r["seconds"]
                print(
                    f"{label + NO_SPLITS:<26} {bare['examples_learned']:>8} "
                    f"{bare['seconds']:>8.2f}   (split attempts: "
                    f"{100 * r['split_attempt_share']:.0f}% of {label})",
                    flush=True,
                )
    out = {
        "benchmark": "topk",
        "machine": machine,
        "loadavg_end": loadavg(),
        "setup": "Table 1 runs of Raman et al. 2020 (k=3, uniform, Table 5 hyperparameters, "
        f"seed 1, TopOpt gamma={GAMMA}), train_test with the loops, one subprocess per case, "
        "NUMBA_NUM_THREADS=1, timed after a warm-up; seconds: the fastest of the repeats",
        "target_speedup": TARGET_SPEEDUP,
        "cases": cases,
    }
    path = RESULTS / "topk.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
