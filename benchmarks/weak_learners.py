"""Weak learners: Ada.OLMR on Hoeffding trees, on linear label rankers and on a mix of both
(``python benchmarks/weak_learners.py``).

Issue 13, "Weak learners": Ada.OLMR (:class:`olboost.AdaOLMR`, 100 learners, the paper's
defaults) on

* ``trees``: ``VFDTCommittee()`` (20 random attributes per tree, as Jung & Tewari 2018);
* ``mixed``: ``MixedCommittee()``, the default mix: 50 trees, 25 Update III label rankers
  predicting with their averaged weights and 25 with their last ones, interleaved
  (``[VFDTCommittee(), LinearCommittee(), LinearCommittee(average=False)]``, shares 2:1:1);
* ``linear``: ``LinearCommittee()`` alone (100 averaged Update III rankers, 20 attributes each);

and :class:`olboost.LabelRanker` alone (Update III, squared norm, ``C = margin = 1``: under the
squared norm only their ratio matters; deterministic, so one run) on the raw attributes
(``label_ranker``), and on the attributes standardised by the train split's means and standard
deviations with a constant attribute 1 added (``label_ranker_standardised``: what the committee's
rankers read, up to their running statistics, without averaging).

Data: emotions, scene, yeast, mediamill-reduced (bundled) and MULAN's enron (train/test split of
``../shared/datasets/enron``, skipped when absent), in the paper's protocol (train split once,
then the test split test-then-train; the rank loss is averaged over the test split:
:func:`olboost.evaluate.train_test`), ``--seeds`` seeds (1..n; 10 by default), beside the best
batch boosting models' rank losses that Jung & Tewari's Table 3 quotes from Dembczynski &
Hullermeier (2012) (emotions .1699, scene .0720, yeast .1820; none for m-reduced, which Table 3
leaves blank, nor for enron), and beside the numbers issue #13 gives as the best batch models'
(emotions .1512, scene .0600, yeast .1625, m-reduced .0502), which none of the shared papers
holds (their source is not known here). Target: ``mixed`` below ``trees`` (mean over seeds) on
at least 3 of the 5 sets.

Note on *scene*: its MULAN splits are sorted by label set (86% of consecutive test examples share
their label set), so a learner that follows the last few examples (a last-iterate ranker) scores
far below the batch models there; that is the protocol's doing, not a better model.

Each (data set, model) case runs in its own subprocess (``NUMBA_NUM_THREADS=1``) after a warm-up
that compiles every kernel (or loads it from Numba's cache). Written to
``results/weak_learners.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from _common import SHARED, loadavg, machine_info, process_facts, run_one

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

DATASETS = ("emotions", "scene", "yeast", "mediamill-reduced", "enron")
#: Best batch boosting models' rank losses (Jung & Tewari 2018, Table 3).
BATCH_BEST = {"emotions": 0.1699, "scene": 0.0720, "yeast": 0.1820}
#: The best batch models' rank losses as issue #13 gives them (no shared paper holds them).
ISSUE_BATCH_BEST = {
    "emotions": 0.1512,
    "scene": 0.0600,
    "yeast": 0.1625,
    "mediamill-reduced": 0.0502,
}
BOOSTED = ("trees", "mixed", "linear")
SINGLE = ("label_ranker", "label_ranker_standardised")
LEARNERS = 100
ONE_THREAD = {"NUMBA_NUM_THREADS": "1"}


def _load(name: str):
    from olboost.datasets import load

    if name == "enron":
        base = SHARED / "enron"
        return load(base / "enron-train.arff", base / "enron.xml", test=base / "enron-test.arff")
    return load(name)


def _committee(model: str):
    from olboost.weak import LinearCommittee, MixedCommittee, VFDTCommittee

    return {
        "trees": VFDTCommittee,
        "mixed": MixedCommittee,
        "linear": LinearCommittee,
    }[model]()


def _standardised(train, test):
    """Both splits standardised by the train split's statistics, with a column of ones."""
    import numpy as np

    def dense(X):
        return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)

    A, B = dense(train.X), dense(test.X)
    mean, sd = A.mean(axis=0), A.std(axis=0)
    sd[sd == 0] = 1.0

    def scaled(M):
        return np.hstack([(M - mean) / sd, np.ones((M.shape[0], 1))])

    names = [*train.feature_names, "bias"]
    # standardised, a nominal column's codes are numbers like any other (and no longer codes,
    # which the data set would refuse): the label ranker reads every column as a number anyway
    return (
        dataclasses.replace(train, X=scaled(A), feature_names=names, nominal={}),
        dataclasses.replace(test, X=scaled(B), feature_names=names, nominal={}),
    )


def _case(name: str, model: str, seeds: int) -> dict:
    from olboost import AdaOLMR, LabelRanker
    from olboost.evaluate import train_test, warm_up

    load_start = loadavg()
    data = _load(name)
    train, test = data.train, data.test
    if model in SINGLE:
        if model == "label_ranker_standardised":
            train, test = _standardised(train, test)
        ranker = LabelRanker(update="III", C=1.0, margin=1.0)
        # warmed up as the boosters are: the seconds are the ranker's, not Numba's compiling
        compile_s = warm_up(ranker, train, test)
        result = train_test(ranker, train, test)
        return {
            "dataset": name,
            "model": model,
            "seeds": 1,
            "rank_loss_per_seed": [result.rank_loss],
            "rank_loss_mean": result.rank_loss,
            "rank_loss_std": 0.0,
            "seconds_mean": result.seconds,
            "warmup_seconds": compile_s,
            **process_facts(load_start),
        }

    def make(seed: int) -> AdaOLMR:
        return AdaOLMR(_committee(model), learners=LEARNERS, seed=seed)

    compile_s = warm_up(make(0), train, test)
    losses, seconds = [], []
    for seed in range(1, seeds + 1):
        result = train_test(make(seed), train, test)
        losses.append(result.rank_loss)
        seconds.append(result.seconds)
    mean = sum(losses) / len(losses)
    std = (sum((v - mean) ** 2 for v in losses) / len(losses)) ** 0.5
    return {
        "dataset": name,
        "model": model,
        "seeds": seeds,
        "rank_loss_per_seed": losses,
        "rank_loss_mean": mean,
        "rank_loss_std": std,
        "seconds_mean": sum(seconds) / len(seconds),
        "warmup_seconds": compile_s,
        **process_facts(load_start),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=3, metavar=("DATASET", "MODEL", "SEEDS"))
    parser.add_argument("--seeds", type=int, default=10, help="seeds 1..n per boosted model")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    args = parser.parse_args()
    if args.one:
        name, model, seeds = args.one
        print(json.dumps(_case(name, model, int(seeds))))
        return 0

    RESULTS.mkdir(parents=True, exist_ok=True)
    machine = machine_info(env=("NUMBA_NUM_THREADS", "OMP_WAIT_POLICY"))
    rows: dict[str, dict] = {}
    print(f"{'data set':<18} {'model':<26} {'rank loss':>9} {'std':>7} {'s/run':>7}", flush=True)
    for name in args.datasets:
        if name == "enron" and not (SHARED / "enron").is_dir():
            rows[name] = {"skipped": f"{SHARED / 'enron'} not found"}
            print(f"{name:<18} skipped: {rows[name]['skipped']}", flush=True)
            continue
        row: dict = {
            "batch_best": BATCH_BEST.get(name),
            "issue_batch_best": ISSUE_BATCH_BEST.get(name),
        }
        for model in BOOSTED + SINGLE:
            r = run_one(__file__, [name, model, str(args.seeds)], ONE_THREAD)
            row[model] = r
            print(
                f"{name:<18} {model:<26} {r['rank_loss_mean']:>9.4f} {r['rank_loss_std']:>7.4f} "
                f"{r['seconds_mean']:>7.2f}",
                flush=True,
            )
        row["mixed_better_than_trees"] = (
            row["mixed"]["rank_loss_mean"] < row["trees"]["rank_loss_mean"]
        )
        rows[name] = row
    measured = [r for r in rows.values() if "skipped" not in r]
    wins = sum(r["mixed_better_than_trees"] for r in measured)
    out = {
        "benchmark": "weak_learners",
        "machine": machine,
        "loadavg_end": loadavg(),
        "setup": (
            f"Ada.OLMR, {LEARNERS} learners, paper defaults; train_test (train split once, test "
            f"split test-then-train); seeds 1..{args.seeds}; trees = VFDTCommittee(), mixed = "
            "MixedCommittee() (50 trees + 25 averaged + 25 last-iterate Update III rankers, "
            "interleaved), linear = LinearCommittee(); LabelRanker(update='III', C=1, margin=1) "
            "on raw and on train-standardised attributes (+ bias); one subprocess per case, "
            "NUMBA_NUM_THREADS=1, after a warm-up"
        ),
        "target": "mixed below trees on at least 3 of the 5 data sets",
        "mixed_better_than_trees": f"{wins} of {len(measured)}",
        "target_met": wins >= 3,
        "rows": rows,
    }
    path = RESULTS / "weak_learners.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"mixed better than trees on {wins} of {len(measured)}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
