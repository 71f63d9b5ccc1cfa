"""``benchmarks/topk.py`` runs its cases, so that the script cannot rot between ``make bench`` runs.

No speed is asserted here (that is the benchmark's job, on an idle machine): only that a case runs
the paper's protocol and that the diagnostic case (trees that never attempt a split) really has
trees that never split.
"""

from __future__ import annotations

import pytest

from helpers import load_benchmark


@pytest.fixture
def topk(monkeypatch):
    """benchmarks/topk.py as a module."""
    return load_benchmark(monkeypatch, "topk")


def test_the_case_without_split_attempts_runs_table_5s_protocol(topk):
    from olboost import topk_experiments as tx
    from olboost.datasets import load

    column = "TopAda" + topk.NO_SPLITS
    r = topk._case("emotions", column, 1)
    data = load("emotions")
    setting = tx.TABLE5["emotions"][1]
    assert r["column"] == column and r["learners"] == setting.learners
    # every train row learned once per loop, then every test row
    assert r["examples_learned"] == data.train.n_samples * setting.loops + data.test.n_samples
    assert 0.0 <= r["rank_loss"] <= 1.0 and r["seconds"] > 0.0


@pytest.mark.parametrize("never", [False, True])
def test_trees_with_the_benchmarks_grace_period_never_split(topk, never):
    import numpy as np

    from olboost import VFDTCommittee

    # a stream whose label is the sign of the first attribute: the committee's default trees
    # split on it within a few hundred examples (the control), the benchmark's never do
    grace = {"grace_period": topk.NEVER} if never else {}
    committee = VFDTCommittee(n_features=2, **grace)
    committee.start(n_learners=3, n_labels=2, n_attributes=2, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        x = rng.normal(size=2)
        weights = np.zeros((3, 2))
        weights[:, int(x[0] <= 0.0)] = 1.0
        committee.learn(x, weights)
    if never:
        assert (committee.n_nodes_ == 1).all()  # every root is still a leaf
    else:
        assert (committee.n_nodes_ > 1).all()
