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
