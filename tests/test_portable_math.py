"""Seeded results do not depend on the CPU's vector extensions (see ``olboost._libm``)."""

from __future__ import annotations

import math

import numpy as np

from olboost import _libm as libm


def test_exp_is_the_c_librarys_to_the_bit():
    # NumPy's AVX-512 exp differs from the C library's in about one value in twenty (measured on
    # an AVX-512 machine): 20,000 values make a match by chance impossible there.
    x = np.random.default_rng(0).normal(size=(100, 200)) * 5.0
    want_exp = np.array([math.exp(v) for v in x.ravel()]).reshape(x.shape)
    assert np.array_equal(libm.exp(x), want_exp)


def test_class_probabilities_use_the_c_librarys_exp():
    from olboost.boosters import AdaBoostOLM
    from olboost.checks import synthetic_multilabel
    from olboost.weak import VFDTCommittee

    X, Y = synthetic_multilabel(n=200, d=6, k=5, seed=3)
    model = AdaBoostOLM(VFDTCommittee(grace_period=(5.0, 10.0)), learners=5, classes=5, seed=1)
    for x, y in zip(X, Y.argmax(1), strict=True):
        votes = model._scores_one(x)
        e = [math.exp(v - votes.max()) for v in votes]
        total = float(np.sum(e))
        assert list(model.predict_proba_one(x).values()) == [v / total for v in e]
        model.learn_one(x, int(y))


def test_log_is_the_c_librarys_to_the_bit():
    # as exp above: NumPy's AVX-512 log rounds otherwise for some of these values
    x = np.exp(np.random.default_rng(1).normal(size=(100, 200)) * 5.0)
    want = np.array([math.log(v) for v in x.ravel()]).reshape(x.shape)
    assert np.array_equal(libm.log(x), want)
    with np.errstate(divide="ignore", invalid="ignore"):
        edges = np.array([0.0, -1.0, np.inf, np.nan])
        np.testing.assert_array_equal(libm.log(edges), np.log(edges))


def test_reported_weights_use_the_c_librarys_exp():
    from olboost.boosters import AdaOLMR
    from olboost.checks import synthetic_multilabel
    from olboost.rankers import LabelRanker
    from olboost.weak import VFDTCommittee

    X, Y = synthetic_multilabel(n=300, d=6, k=5, seed=3)
    ranker = LabelRanker(update="II", complexity="entropy", labels=5, seed=1)
    ranker.score_then_learn(libm.exp(-np.abs(X)), Y)
    theta = ranker.theta_
    e = np.array([[math.exp(v) for v in col - col.max()] for col in theta.T])
    assert np.array_equal(ranker.weight_vectors(), e / e.sum(axis=1, keepdims=True))
    model = AdaOLMR(VFDTCommittee(grace_period=(5.0, 10.0)), learners=8, labels=5, seed=1)
    model.score_then_learn(X, Y)
    log_v = model.log_v_
    e = np.array([math.exp(v) for v in log_v - log_v.max(axis=-1, keepdims=True)])
    assert np.array_equal(model.expert_weights, e.reshape(log_v.shape) / e.sum())
