"""Tests of olboost.datasets.make_label_stream and of the large-k benchmark that uses it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import load_benchmark
from olboost import AdaOLMR, VFDTCommittee
from olboost.datasets import MultiLabelDataset, make_label_stream
from olboost.metrics import rank_loss


def test_shapes_and_types():
    X, Y = make_label_stream(300, 40, relevant=4, features=7, seed=3)
    assert X.shape == (300, 7) and X.dtype == np.float64 and X.flags.c_contiguous
    assert Y.shape == (300, 40) and Y.dtype == np.bool_
    assert np.isfinite(X).all()
    # The loaders' container takes the arrays as they are.
    ds = MultiLabelDataset(
        "synthetic", X, Y, [f"x{i}" for i in range(7)], list(map(str, range(40)))
    )
    assert ds.stats()["min_labels"] == ds.stats()["max_labels"] == 4


@pytest.mark.parametrize(
    ("n", "labels", "relevant", "features"),
    [(1, 2, 1, 1), (500, 3, 2, 2), (700, 1000, 5, 50), (250, 30, 29, 4)],
)
def test_exactly_relevant_labels_per_row(n, labels, relevant, features):
    X, Y = make_label_stream(n, labels, relevant, features, seed=1)
    assert (Y.sum(axis=1) == relevant).all()


def test_empty_stream():
    X, Y = make_label_stream(0, 10)
    assert X.shape == (0, 50) and Y.shape == (0, 10)


def test_deterministic_in_seed():
    X1, Y1 = make_label_stream(400, 100, seed=7)
    X2, Y2 = make_label_stream(400, 100, seed=7)
    X3, Y3 = make_label_stream(400, 100, seed=8)
    assert np.array_equal(X1, X2) and np.array_equal(Y1, Y2)
    assert not np.array_equal(X1, X3) and not np.array_equal(Y1, Y3)


def test_rows_past_the_first_chunk():
    # Rows are scored in chunks; the chunking must not change which labels a row gets, so a
    # stream drawn with the same seed and more rows than one chunk is still deterministic and
    # every chunk boundary gives exactly `relevant` labels.
    X, Y = make_label_stream(1001, 50, seed=2)
    assert (Y.sum(axis=1) == 5).all()
    assert np.array_equal(Y, make_label_stream(1001, 50, seed=2)[1])


def test_popularity_is_skewed_and_skew_zero_flattens_it():
    _, Y = make_label_stream(4000, 200, seed=0)
    freq = np.sort(Y.sum(axis=0))[::-1]
    # A Zipf prior of exponent 1.5 over 200 labels, flattened by the features: the 10 most
    # frequent labels hold about 37% of the relevances, the 100 least frequent about 13%.
    assert freq[:10].sum() > 2 * freq[-100:].sum()
    _, Y0 = make_label_stream(4000, 200, seed=0, skew=0.0)
    freq0 = np.sort(Y0.sum(axis=0))[::-1]
    assert freq0[:10].sum() < freq[:10].sum()


def test_labels_depend_on_the_features():
    # Labels are the top scores of x . p_j: a label's mean feature vector over the rows where it
    # is relevant points away from zero; with shuffled rows it would be close to zero.
    X, Y = make_label_stream(3000, 10, relevant=2, features=5, seed=4)
    j = int(np.argmax(Y.sum(axis=0)))
    mean = X[Y[:, j]].mean(axis=0)
    assert np.linalg.norm(mean) > 0.3


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"n": -1}, ValueError, "n must"),
        ({"n": 2.0}, TypeError, "n must"),
        ({"labels": 1}, ValueError, "labels must"),
        ({"labels": True}, TypeError, "labels must"),
        ({"relevant": 0}, ValueError, "relevant must"),
        ({"relevant": 10}, ValueError, "relevant must be < labels=10"),
        ({"features": 0}, ValueError, "features must"),
        ({"seed": -1}, ValueError, "seed must"),
        ({"seed": None}, TypeError, "seed must"),
        ({"informative": 0}, ValueError, "informative must"),
        ({"informative": 51}, ValueError, "informative must be <= features=50"),
        ({"skew": -0.5}, ValueError, "skew must"),
        ({"skew": math.inf}, ValueError, "skew must"),
        ({"skew": "1"}, TypeError, "skew must"),
    ],
)
def test_argument_errors_name_the_parameter(kwargs, error, name):
    args = {"n": 5, "labels": 10, **kwargs}
    with pytest.raises(error, match=name):
        make_label_stream(**args)


def test_informative_defaults_to_at_most_the_features():
    X, Y = make_label_stream(20, 5, relevant=1, features=2)
    assert X.shape == (20, 2) and (Y.sum(axis=1) == 1).all()


def test_a_booster_learns_more_than_label_frequencies():
    X, Y = make_label_stream(1000, 20, relevant=3, seed=0)
    model = AdaOLMR(VFDTCommittee(n_features=20), learners=20, seed=1, labels=20)
    scores = model.score_then_learn(X, Y)
    # Label-frequency ranking, prequential: each row ranked by the counts of the rows before it.
    counts = np.vstack([np.zeros(20), np.cumsum(Y, axis=0)[:-1]])
    boosted = float(rank_loss(scores, Y).mean())
    frequency = float(rank_loss(counts, Y).mean())
    # Measured with these seeds: 0.286 against 0.315, a gap of 0.029; over streams 0-2 and
    # model seeds 1-2 the gap was 0.024 to 0.033. The run is deterministic given the seeds, but
    # the trees are being reworked (issue #11 lets small-k results move within a stated
    # tolerance), so ask for half the smallest gap seen rather than the exact value.
    assert boosted < frequency - 0.012


@pytest.fixture
def large_k(monkeypatch):
    """benchmarks/large_k.py as a module."""
    return load_benchmark(monkeypatch, "large_k")


@pytest.mark.parametrize("booster", ["AdaOLMR", "OnlineBMR"])
def test_benchmark_measure_runs_on_a_tiny_case(large_k, booster):
    # The benchmark's measuring function on a tiny case, so the script cannot rot; no speed is
    # asserted (that is the benchmark's job, on an idle machine).
    r = large_k.measure(booster, 50, 30, warm_small_rows=20, warm_rows=5, chunk=10, share_rows=10)
    assert r["booster"] == booster and r["k"] == 50 and r["rows"] == 30
    assert r["ms_per_example"] > 0 and r["peak_rss_mb"] >= r["model_peak_mb"]
    assert 0 <= r["rank_loss"] <= 1 and 0 <= r["frequency_rank_loss"] <= 1
    assert r["split"]["rows"] == 10 and 0 <= r["split"]["booster_share"] <= 1
    # a grown case times the rows after the grown ones: the same model's run over both, its
    # last rows' losses (frequency ranking's too, from the counts of every row before)
    g = large_k.measure(
        booster, 50, 30, warm_small_rows=20, warm_rows=5, chunk=10, share_rows=10, grown_rows=20
    )
    assert g["rows"] == 30 and g["grown_rows"] == 20 and g["split"] is None
    assert g["frequency_rank_loss"] == large_k._frequency_rank_loss(
        make_label_stream(50, 50, 5, 50, 0)[1], 10, 20
    )
    ada = {"k": 1000, "ms_per_example": 1.0}
    bmr = {"k": 1000, "ms_per_example": 1.5}
    large_k._judge(ada, bmr, quick=False)
    assert ada["met"] is False and bmr["met"] is True and bmr["ratio_to_ada_olmr"] == 1.5


def test_the_zipf_prior_and_unit_prototypes_give_the_documented_frequencies():
    # two labels, skew 3: odds of 2^3 = 8 for the more popular one (seeded; with 40,000 rows the
    # odds' sampling sd is about 0.13, so 8 +- 0.6; a prior of other ranks gave 3.4)
    _, Y = make_label_stream(
        40000, labels=2, relevant=1, features=1, seed=0, informative=1, skew=3.0
    )
    f = np.sort(Y.mean(axis=0))[::-1]
    assert abs(f[0] / f[1] - 8.0) < 0.6
    # skew 0: no label favoured, the prototypes all of unit length (seed 0 is 0.013 off at most;
    # prototypes left unnormalised were 0.051 off: 0.22 to 0.30)
    _, Y = make_label_stream(
        20000, labels=4, relevant=1, features=50, seed=0, informative=3, skew=0.0
    )
    assert np.abs(Y.mean(axis=0) - 0.25).max() < 0.03
