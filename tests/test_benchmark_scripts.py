"""Each benchmark script's measuring function on a tiny case, so that no script rots between two
``make bench`` runs (benchmarks/weak_learners.py once did: a data set check it predated refused
its standardised splits). Nothing here asserts a speed: that is the benchmarks' job, on an idle
machine; these only check that each case runs and reports what its JSON records."""

import numpy as np
import pytest

from helpers import load_benchmark


def test_run_case(monkeypatch):
    r = load_benchmark(monkeypatch, "run")._case("emotions", "vfdt", 1, True)
    assert r["dataset"] == "emotions" and r["n_examples"] == 593
    assert r["seconds"] > 0 and 0 <= r["rank_loss"] <= 1


@pytest.mark.parametrize("method", ["exact", "monte_carlo"])
def test_online_bmr_quick_case(monkeypatch, method):
    r = load_benchmark(monkeypatch, "online_bmr")._case("emotions", method, True)
    assert r["method"] == method and r["truncated"] and r["n_train"] <= 150
    assert r["seconds"] > 0 and 0 <= r["rank_loss"] <= 1


def test_multiclass_quick_case(monkeypatch):
    r = load_benchmark(monkeypatch, "multiclass")._case("balance", "vfdt", 2, True)
    assert r["n_examples"] == 150 and r["deterministic"]
    assert len(r["seconds_runs"]) == 2 and 0 <= r["accuracy"] <= 1


def test_potentials_case_and_brute_force(monkeypatch):
    potentials = load_benchmark(monkeypatch, "potentials")
    assert potentials.brute_force_check()["agree"]
    r = potentials._case(6, 10, 20)  # the smallest of CASES, on 2 examples
    assert r["met"] in (True, False) and r["peak_rss_mb"] > 0


def test_booster_share_measure(monkeypatch):
    share = load_benchmark(monkeypatch, "booster_share")
    from olboost import AdaOLMR, VFDTCommittee
    from olboost.datasets import load

    data = load("emotions")
    X = np.ascontiguousarray(data.train.X[:40], dtype=np.float64)
    Y = np.asarray(data.train.Y[:40], dtype=bool)

    def make():
        return AdaOLMR(VFDTCommittee(n_features=20), learners=5, seed=1, labels=6)

    r = share.measure("AdaOLMR", make, X, Y, repeats=1)
    assert r["rows"] == 40 and 0 <= r["booster_share"] <= 1
