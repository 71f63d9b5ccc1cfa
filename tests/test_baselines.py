"""Baselines of the multiclass experiments: Oza's boosting, best tree, the one-vs-all designs."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from helpers import RecordingCommittee, ScriptedCommittee
from olboost import VFDTCommittee
from olboost._random import STREAMS
from olboost.boosters import _ada_olm_kernels as K
from olboost.boosters.ada_olm import AdaBoostOLM, paper_step_and_bound
from olboost.boosters.baselines import AdaOVA, BestTree, OvaAdaBoostOL, OzaBoost, oza_lambda_step
from test_ada_olm import NO_EXPERT

_COMMITTEE_STREAM = STREAMS["committee"]


class TableCommittee(RecordingCommittee):
    """Learner ``i`` predicts class ``TABLE[int(x[0])][i]`` (one-hot), whatever it learned."""

    TABLE = {0: [0, 1, 0], 1: [0, 1, 1], 2: [2, 2, 0]}

    def predict(self, x):
        self.n_predict_ += 1
        return np.eye(self.n_labels_)[self.TABLE[int(x[0])]]


class MemoryCommittee(RecordingCommittee):
    """Learner ``i`` predicts the last class it learned with a positive weight (uniform before)."""

    def _allocate(self, seed):
        super()._allocate(seed)
        self.last_ = np.full(self.n_learners_, -1)

    def predict(self, x):
        self.n_predict_ += 1
        out = np.full((self.n_learners_, self.n_labels_), 1.0 / self.n_labels_)
        seen = self.last_ >= 0
        out[seen] = np.eye(self.n_labels_)[self.last_[seen]]
        return out

    def learn(self, x, weights):
        super().learn(x, weights)
        rows = weights.max(axis=1) > 0
        self.last_[rows] = np.argmax(weights[rows], axis=1)


def blobs(n=450, k=3, d=4, seed=0, spread=0.3):
    """A separable k-class problem: class c is centred on 2 e_c."""
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n)
    X = rng.normal(scale=spread, size=(n, d))
    X[np.arange(n), y % d] += 2.0
    return X, y


# ----------------------------------------------------------------------------- OzaBoost


def _last_weights(model):
    """The label weights of the last example: one call, or one per learner when judging after."""
    calls = model.committee_.learned_
    return sum(calls[-model.learners :]) if model.judge == "after" else calls[-1]


@pytest.mark.parametrize("judge", ["after", "before"])
def test_oza_lambda_updates_by_hand(judge):
    model = OzaBoost(TableCommittee(), learners=3, seed=0, classes=3, judge=judge)
    # example 1, y = 0, learners predict (0, 1, 0):
    #   lambda 1 -> right: sc0 = 1, lambda = 1 * 1 / 2 = 1/2
    #   wrong: sw1 = 1/2, lambda = 1/2 * (1/2) / 1 = 1/4; right: sc2 = 1/4, lambda -> 1/8
    model.learn_one([0.0], 0)
    np.testing.assert_allclose(_last_weights(model)[:, 0], [1, 1 / 2, 1 / 4])
    # example 2, y = 1, learners predict (0, 1, 1):
    #   wrong: sw0 = 1, lambda = 1 * 2 / 2 = 1; right: sc1 = 1, lambda = 1 * 1.5 / 2 = 3/4
    #   right: sc2 = 1/4 + 3/4 = 1, lambda -> 3/4 * 1 / 2
    model.learn_one([1.0], 1)
    np.testing.assert_allclose(_last_weights(model)[:, 1], [1, 1, 3 / 4])
    np.testing.assert_allclose(model.lambda_sc_, [1, 1, 1])
    np.testing.assert_allclose(model.lambda_sw_, [1, 1 / 2, 0])
    # learner 2 was never wrong: its weight is infinite, it outvotes the others
    np.testing.assert_array_equal(model.vote_weights(), [0, 0, 1])
    assert model.predict_one([2.0]) == 0
    # example 3, y = 2, learners predict (2, 2, 0):
    #   right: sc0 = 2, lambda = 1 * 3 / 4 = 3/4; right: sc1 = 7/4, lambda = 3/4 * 9/4 / 7/2
    #   = 27/56; wrong: sw2 = 27/56
    model.learn_one([2.0], 2)
    np.testing.assert_allclose(_last_weights(model)[:, 2], [1, 3 / 4, 27 / 56])
    np.testing.assert_allclose(model.lambda_sc_, [2, 7 / 4, 1])
    np.testing.assert_allclose(model.lambda_sw_, [1, 1 / 2, 27 / 56])
    np.testing.assert_allclose(model.errors_, [1 / 3, 2 / 9, 27 / 83])
    weights = [math.log(2), math.log(7 / 2), math.log(56 / 27)]
    np.testing.assert_allclose(model.vote_weights(), weights)
    votes = model.votes([[2.0]])[0]  # predictions (2, 2, 0)
    np.testing.assert_allclose(votes, [weights[2], 0, weights[0] + weights[1]])
    assert model.predict_one([2.0]) == 2


def test_oza_lambda_step_and_bad_learners_get_no_vote():
    sc, sw = np.array([0.0]), np.array([3.0])
    assert oza_lambda_step(1.0, True, 0, sc, sw) == pytest.approx(4 / 2)
    assert sc[0] == 1.0
    model = OzaBoost(TableCommittee(), learners=3, seed=0, classes=3)
    model.learn_one([0.0], 0)
    model.lambda_sc_[:] = [1.0, 1.0, 0.0]
    model.lambda_sw_[:] = [1.0, 3.0, 0.0]  # eps = 1/2, 3/4, never judged
    np.testing.assert_array_equal(model.vote_weights(), [0, 0, 0])


def test_oza_judges_after_learning_like_river_or_before_in_one_call():
    after = OzaBoost(MemoryCommittee(), learners=4, seed=0, classes=3)
    before = after.clone({"judge": "before"})
    X, y = blobs(n=12)
    after.learn(X, y)
    before.learn(X, y)
    # a learner that memorises its last label is always right after learning it
    assert (after.lambda_sw_ == 0).all() and (after.lambda_sc_ > 0).all()
    assert (before.lambda_sw_ > 0).any()
    assert len(after.committee_.learned_) == 12 * 4  # one learn call per learner
    assert len(before.committee_.learned_) == 12
    for w in after.committee_.learned_:
        assert np.count_nonzero(w) == 1


# ----------------------------------------------------------------------------- BestTree


def test_best_tree_counts_prequential_hits():
    model = BestTree(ScriptedCommittee(), learners=6, seed=0, classes=4)
    rng = np.random.default_rng(1)
    hits, t = np.zeros(6), 0
    for _ in range(50):
        x, y = rng.normal(size=2), int(rng.integers(4))
        if t:
            H = model.committee_.predict(x)
            np.testing.assert_array_equal(model.votes([x])[0], H[np.argmax(hits)])
        model.learn_one(x, y)
        H = model.committee_.predict(x)
        hits += np.argmax(H, axis=1) == y
        t += 1
        np.testing.assert_array_equal(model.committee_.learned_[-1], np.eye(4)[[y] * 6])
    np.testing.assert_array_equal(model.correct_, hits)
    assert model.best_accuracy_in_hindsight_ == hits.max() / 50
    np.testing.assert_allclose(model.accuracies_, hits / 50)


def test_best_tree_hindsight_accuracy_is_a_direct_count_with_trees():
    X, y = blobs(n=200, spread=0.8)
    model = BestTree(VFDTCommittee(n_features=2), learners=5, seed=3, classes=3)
    model.learn(X, y)
    # the same trees, grown by hand from the same committee seed
    trees = VFDTCommittee(n_features=2)
    committee_seed = np.random.SeedSequence([3, _COMMITTEE_STREAM]).generate_state(1)[0]
    trees.start(5, 3, X.shape[1], int(committee_seed))
    hits = np.zeros(5)
    for x, c in zip(X, y, strict=True):
        hits += np.argmax(trees.predict(x), axis=1) == c
        trees.learn(x, np.eye(3)[[c] * 5])
    assert model.best_accuracy_in_hindsight_ == hits.max() / len(y)
    np.testing.assert_array_equal(model.correct_, hits)


# ----------------------------------------------------------------------------- one-vs-all


def test_ova_adaboost_ol_shapes_and_wiring():
    N, k = 4, 3
    model = OvaAdaBoostOL(ScriptedCommittee(), learners=N, seed=0, classes=k)
    rng = np.random.default_rng(2)
    step, bound = paper_step_and_bound("logistic", 2, N)
    alpha, log_v = np.zeros((k, N)), np.zeros((k, N))
    for t in range(1, 20):
        x, y = rng.normal(size=2), int(rng.integers(k))
        model.learn_one(x, y)
        assert (model.committee_.n_learners_, model.committee_.n_labels_) == (N * k, 2)
        H = model.committee_.predict(x)
        W = model.committee_.learned_[-1]
        assert W.shape == (N * k, 2)
        for c in range(k):
            w = np.empty((N, 2))
            block = slice(c * N, (c + 1) * N)
            K.olm_update(
                H[block], int(c == y), alpha[c], log_v[c], t, K.VOTE_ARGMAX, K.LOGISTIC,
                step, bound, 1.0, w, np.zeros(N), np.zeros(N), NO_EXPERT, np.empty(2),
            )  # fmt: skip
            np.testing.assert_allclose(W[block], w, rtol=1e-12)
            assert (W[block, 1 - int(c == y)] == 0).all()
    assert model.alpha_.shape == model.log_v_.shape == (k, N)
    np.testing.assert_allclose(model.alpha_, alpha, rtol=1e-12)
    assert model.empirical_edges.shape == (k, N)
    assert model.votes([[0.3, 0.1]]).shape == (1, k)


def test_one_vs_all_boosters_each_draw_from_their_own_hedge_stream():
    # a mutant giving the first two boosters one key survived every test file; only
    # OvaAdaBoostOL's doctest caught it (mutation round 8)
    model = OvaAdaBoostOL(ScriptedCommittee(), learners=3, seed=0, classes=4)
    model.learn_one(np.zeros(2), 1)
    keys = model._hedge_keys.tolist()
    assert len(keys) == 4 and len(set(keys)) == 4


def test_ada_ova_shapes_and_wiring():
    N, k = 4, 3
    model = AdaOVA(ScriptedCommittee(), learners=N, seed=0, classes=k)
    rng = np.random.default_rng(3)
    step, bound = paper_step_and_bound("logistic", k, N)
    alpha, log_v = np.zeros(N), np.zeros(N)
    for t in range(1, 20):
        x, y = rng.normal(size=2), int(rng.integers(k))
        model.learn_one(x, y)
        H = model.committee_.predict(x)
        assert H.shape == (N * k, 2)
        P = H[:, 1].reshape(N, k)
        P = P / P.sum(axis=1, keepdims=True)
        w = np.empty((N, k))
        K.olm_update(
            P, y, alpha, log_v, t, K.VOTE_ARGMAX, K.LOGISTIC, step, bound, 1.0, w,
            np.zeros(N), np.zeros(N), NO_EXPERT, np.empty(k),
        )  # fmt: skip
        W = model.committee_.learned_[-1].reshape(N, k, 2)
        for c in range(k):
            np.testing.assert_allclose(W[:, c, int(c == y)], w[:, y], rtol=1e-12)
            np.testing.assert_array_equal(W[:, c, 1 - int(c == y)], 0.0)
    np.testing.assert_allclose(model.alpha_, alpha, rtol=1e-12)
    assert model.alpha_.shape == (N,)


@pytest.mark.parametrize("cls", [OvaAdaBoostOL, AdaOVA, OzaBoost, BestTree, AdaBoostOLM])
def test_learns_a_separable_three_class_problem(cls):
    X, y = blobs(n=450)
    model = cls(VFDTCommittee(), learners=5, seed=0)
    votes = model.predict_then_learn(X, y)
    correct = np.argmax(votes, axis=1) == y
    assert correct[150:].mean() > 0.9, correct[150:].mean()
    assert (model.predict(X[-100:]) == y[-100:]).mean() > 0.9


@pytest.mark.parametrize("cls", [OvaAdaBoostOL, AdaOVA, OzaBoost, BestTree])
def test_pickled_baselines_resume_exactly(cls):
    X, y = blobs(n=60, spread=0.8)
    a = cls(VFDTCommittee(n_features=2), learners=3, seed=4, classes=3)
    b = a.clone()
    va = a.predict_then_learn(X, y)
    vb = b.predict_then_learn(X[:30], y[:30])
    b = pickle.loads(pickle.dumps(b))
    np.testing.assert_array_equal(va, np.vstack([vb, b.predict_then_learn(X[30:], y[30:])]))


def test_ova_committee_restarted_from_the_committee_seed():
    # the binary committee is drawn from the same seed stream as every booster's committee
    model = AdaOVA(VFDTCommittee(n_features=2), learners=3, seed=8, classes=3)
    model.learn_one(np.zeros(4), 1)
    ref = VFDTCommittee(n_features=2)
    ref.start(9, 2, 4, int(np.random.SeedSequence([8, _COMMITTEE_STREAM]).generate_state(1)[0]))
    np.testing.assert_array_equal(model.committee_.setup_.features, ref.setup_.features)


@pytest.mark.parametrize(
    ("cls", "params", "err"),
    [
        (OzaBoost, {"judge": "never"}, ValueError),
        (BestTree, {"learners": 0}, ValueError),
        (OvaAdaBoostOL, {"loss": "hinge"}, ValueError),
        (AdaOVA, {"vote": "soft"}, ValueError),
    ],
)
def test_invalid_parameters(cls, params, err):
    with pytest.raises(err):
        cls(**params)


def test_ova_groups_normalise_each_group_and_make_an_empty_one_uniform():
    # AdaOVA's group i is the distribution of its k binary learners' probabilities of label 1;
    # a group whose learners all give 0 is uniform, not all zeros, which under expected-cost
    # votes was a different vote (a mutation survived every test, session 50)
    k = 3
    H = np.zeros((2 * k, 2))
    H[:k, 1] = [0.2, 0.6, 0.2]  # group 0; group 1 all 0
    np.testing.assert_allclose(
        K.ova_groups(H, k), [[0.2, 0.6, 0.2], [1 / 3, 1 / 3, 1 / 3]], rtol=0, atol=1e-15
    )
    H[:k, 1] = [1.0, 3.0, 0.0]
    np.testing.assert_allclose(K.ova_groups(H, k)[0], [0.25, 0.75, 0.0], rtol=0, atol=1e-15)
