"""Fingerprints of seeded runs through the compiled Hoeffding trees, to compare two versions of
the code bit for bit (``python benchmarks/fingerprints.py [OUT.json]``; not part of ``make
bench``: it measures no time).

Each line is the SHA-1 (first 16 hex digits) of the float64 bytes of a test-then-train run's
scores or votes: Ada.OLMR with majority-class, naive Bayes and adaptive naive Bayes leaves, the
Weka port's trees and 10% missing values, OnlineBMR on two threads, Top-k Adaptive, at 20 and
300 labels (the grouped rounds from 256 on); AdaBoost.OLM with nominal attributes under River's
and the Weka port's rules, both nominal split modes, with and without missing values; OnlineMBBM
with adaptive naive Bayes leaves. Run it with each version's ``src`` on ``PYTHONPATH`` and
compare the files: a refactor of the trees must leave every line as it was (the label-sparse
leaves, commit d82d7db, left all 23 unchanged against commit 20d9e18).
"""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

import olboost as ob
from olboost.datasets import make_label_stream


def _hash(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


def fingerprints() -> dict[str, str]:
    """The runs' fingerprints, by name."""
    out: dict[str, str] = {}

    def run(name: str, model, X: np.ndarray, Y: np.ndarray) -> None:
        scores = model.score_then_learn(X, Y) if Y.ndim == 2 else model.predict_then_learn(X, Y)
        out[name] = _hash(scores)
        print(name, out[name], flush=True)

    rng = np.random.default_rng(5)
    grace = (2.0, 8.0)
    for k, rows in ((20, 400), (300, 250)):
        X, Y = make_label_stream(rows, k, 5, 30, 3)
        Xm = X.copy()
        Xm[rng.uniform(size=X.shape) < 0.1] = np.nan
        for mode in ("mc", "nb", "nba"):
            c = ob.VFDTCommittee(n_features=10, leaf_prediction=mode, grace_period=grace)
            run(f"ada-{k}-{mode}", ob.AdaOLMR(c, learners=6, seed=2, labels=k), X, Y)
        c = ob.VFDTCommittee(n_features=10, semantics="weka_port", grace_period=grace)
        run(f"ada-{k}-weka", ob.AdaOLMR(c, learners=6, seed=2, labels=k), X, Y)
        c = ob.VFDTCommittee(n_features=10, grace_period=grace)
        run(f"ada-{k}-missing", ob.AdaOLMR(c, learners=6, seed=2, labels=k), Xm, Y)
        c = ob.VFDTCommittee(n_features=10, grace_period=grace, n_threads=2)
        run(f"bmr-{k}-par", ob.OnlineBMR(c, learners=6, seed=2, labels=k, gamma=0.1), X, Y)
        c = ob.VFDTCommittee(n_features=10, grace_period=grace)
        run(f"topada-{k}", ob.TopkAdaptive(c, learners=6, seed=2, labels=k, k=3), X, Y)
    n = 600
    Xn = np.column_stack(
        [rng.integers(0, 4, n), rng.integers(0, 3, n), rng.normal(size=(n, 6))]
    ).astype(float)
    y = ((Xn[:, 0] + Xn[:, 1] + (Xn[:, 2] > 0)) % 5).astype(int)
    Xnm = Xn.copy()
    Xnm[rng.uniform(size=Xn.shape) < 0.1] = np.nan
    nominal = {0: 4, 1: 3}
    for semantics in ("river", "weka_port"):
        for splits in ("both", "multiway"):
            for tag, data in (("", Xn), ("missing-", Xnm)):
                c = ob.VFDTCommittee(
                    n_features=None, nominal_attributes=nominal, grace_period=grace,
                    semantics=semantics, nominal_splits=splits,
                )  # fmt: skip
                model = ob.AdaBoostOLM(c, learners=5, seed=3, classes=5)
                run(f"olm-{tag}{semantics}-{splits}", model, data, y)
    c = ob.VFDTCommittee(
        n_features=None, nominal_attributes=nominal, grace_period=grace, leaf_prediction="nba"
    )
    run("mbbm-nba", ob.OnlineMBBM(c, learners=5, seed=3, classes=5, gamma=0.1), Xn, y)
    return out


if __name__ == "__main__":
    result = fingerprints()
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(result, f, indent=1)
