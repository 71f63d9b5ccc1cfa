"""benchmarks/weak_learners.py's own pieces, so that the script cannot rot between benchmark runs
(no speed or accuracy is asserted here: that is the benchmark's job, on an idle machine)."""

import numpy as np
import pytest

from helpers import load_benchmark
from olboost.datasets import MultiLabelDataset


@pytest.fixture
def weak_learners(monkeypatch):
    return load_benchmark(monkeypatch, "weak_learners")


def test_standardised_splits_read_nominal_codes_as_numbers(weak_learners):
    # MULAN's enron declares nominal columns; standardised, their codes are no longer codes,
    # which a data set refuses (the benchmark failed on enron once for it)
    X = np.array([[0.0, 1.5], [1.0, 2.5], [1.0, 0.5], [0.0, 3.0]])
    Y = np.array([[True, False], [False, True], [True, True], [False, False]])

    def split(rows):
        return MultiLabelDataset(
            "toy", X[rows], Y[rows], ["code", "x"], ["a", "b"], nominal={0: ["no", "yes"]}
        )

    train, test = weak_learners._standardised(split(slice(0, 3)), split(slice(3, 4)))
    assert train.nominal == {} and test.nominal == {}
    assert train.feature_names == ["code", "x", "bias"] == test.feature_names
    np.testing.assert_allclose(train.X[:, :2].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(train.X[:, :2].std(axis=0), 1.0)
    assert (train.X[:, 2] == 1.0).all() and test.X.shape == (1, 3)


def test_a_single_ranker_case_is_timed_after_its_warm_up(weak_learners):
    r = weak_learners._case("emotions", "label_ranker_standardised", 1)
    assert r["model"] == "label_ranker_standardised" and r["seeds"] == 1
    assert 0.0 <= r["rank_loss_mean"] <= 1.0
    assert r["seconds_mean"] > 0.0 and r["warmup_seconds"] >= 0.0
