"""The booster's share of run time: everything but the trees' own predict and learn.

``python benchmarks/booster_share.py`` trains Ada.OLMR and OnlineBMR (100 trees, 20 features per
tree, seed 1, the paper's setting) on emotions' training set through the compiled driver, recording
the committee's predictions ``H`` and the label weights the booster gave each row. It then replays
the trees alone: a fresh committee with the same seed predicts and learns the recorded weights in a
compiled loop (the trees grow exactly as in the run, their learning being deterministic). The
booster's share is ``1 - trees / run`` over medians of 5 runs each: it counts the booster's step,
the driver loop and every Python call around them. Writes ``benchmarks/results/booster_share.json``.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numba
import numpy as np

from _common import machine_info
from olboost import AdaOLMR, OnlineBMR, VFDTCommittee
from olboost._random import STREAMS, seed_int
from olboost.datasets import load

RESULTS = Path(__file__).with_name("results") / "booster_share.json"


# Not cached: its kernels are typed by dispatcher identity, which Numba cannot write to an index
# that already holds another process's entries ("underlying object has vanished").
@numba.njit
def _replay(X, W, predict, learn, state, H, demand):
    for i in range(X.shape[0]):
        predict(X[i], state, H)
        if learn(X[i], W[i], state, demand) != 0:
            return i
    return X.shape[0]


def _recorded_weights(make, X, Y):
    """The weights the booster gives each row (row by row, recording ``_update``)."""
    model = make()
    rows = []
    update = model._update

    def recording(H, target):
        weights = update(H, target)
        rows.append(weights.copy())
        return weights

    model._update = recording
    model._compiled_stream = lambda rows_, targets, out, start: start
    model.score_then_learn(X, Y, return_scores=False)
    return np.stack(rows)


def _trees_seconds(make, X, W):
    committee = make().committee.clone()
    committee.start(W.shape[1], W.shape[2], X.shape[1], seed_int(1, STREAMS["committee"]))
    H = np.empty(W.shape[1:])
    demand = np.zeros(2, dtype=np.int64)
    t0 = time.perf_counter()
    i = 0
    with committee.running():
        while i < X.shape[0]:
            kernels = committee.compiled()
            stop = _replay(X[i:], W[i:], kernels.predict, kernels.learn, kernels.state, H, demand)
            i += stop
            if i < X.shape[0]:
                committee.learn_compiled(X[i], W[i])
                i += 1
    return time.perf_counter() - t0


def measure(name, make, X, Y, repeats=5):
    W = _recorded_weights(make, X, Y)
    _trees_seconds(make, X, W)  # compile
    make().score_then_learn(X, Y, return_scores=False)
    run, trees = [], []
    for _ in range(repeats):
        model = make()
        t0 = time.perf_counter()
        model.score_then_learn(X, Y, return_scores=False)
        run.append(time.perf_counter() - t0)
        trees.append(_trees_seconds(make, X, W))
    run_s, trees_s = statistics.median(run), statistics.median(trees)
    return {
        "booster": name,
        "rows": int(X.shape[0]),
        "run_seconds": run_s,
        "trees_seconds": trees_s,
        "booster_share": max(0.0, 1.0 - trees_s / run_s),
    }


def main() -> None:
    data = load("emotions")
    X = np.ascontiguousarray(data.train.X, dtype=np.float64)
    Y = np.asarray(data.train.Y, dtype=bool)
    cases = {
        "AdaOLMR": lambda: AdaOLMR(VFDTCommittee(n_features=20), learners=100, seed=1, labels=6),
        "OnlineBMR": lambda: OnlineBMR(
            VFDTCommittee(n_features=20), learners=100, seed=1, labels=6, gamma=0.1
        ),
    }
    rows = [measure(name, make, X, Y) for name, make in cases.items()]
    for r in rows:
        print(
            f"{r['booster']:<10} run {r['run_seconds']:.3f} s, trees alone "
            f"{r['trees_seconds']:.3f} s, booster share {100 * r['booster_share']:.1f}%"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    record = {"dataset": "emotions (train)", "cases": rows, "machine": machine_info()}
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
