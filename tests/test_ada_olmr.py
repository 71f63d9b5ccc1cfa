"""Ada.OLMR: kernels against a plain transcription of the paper, API behaviour, accuracy."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from helpers import OracleCommittee, ScriptedCommittee
from olboost import AdaOLMR, VFDTCommittee
from olboost._random import counter_uniform
from olboost.boosters._ada_olmr_kernels import ada_olmr_update
from olboost.boosters._adaptive_kernels import choose_expert
from olboost.datasets import load
from olboost.evaluate import prequential, train_test
from olboost.losses import logistic_cost, logistic_loss
from protocol import seed_values

# ----------------------------------------------------------------------------- reference


def ref_logistic(s, Y, k):
    """L_log^Y(s), Jung & Tewari 2018 Sec. 3.2, written pair by pair."""
    Yc = [r for r in range(k) if r not in Y]
    if not Y or not Yc:
        return 0.0
    return sum(math.log1p(math.exp(s[r] - s[l])) for l in Y for r in Yc) / (len(Y) * len(Yc))


def ref_grad(s, Y, k, h=1e-6):
    """Central finite differences of ref_logistic: eq. 8 without its closed form."""
    g = np.zeros(k)
    for j in range(k):
        e = np.zeros(k)
        e[j] = h
        g[j] = (ref_logistic(s + e, Y, k) - ref_logistic(s - e, Y, k)) / (2 * h)
    return g


def ref_rank(s, Y, k):
    Yc = [r for r in range(k) if r not in Y]
    if not Y or not Yc:
        return 0.0
    bad = sum((s[l] < s[r]) + 0.5 * (s[l] == s[r]) for l in Y for r in Yc)
    return bad / (len(Y) * len(Yc))


def ref_round(H, Y, alpha, v, t):
    """Algorithm 3 as printed, with the weak-learner weights of Sec. 4."""
    n, k = H.shape
    alpha, v = alpha.copy(), v.copy()
    weights = np.zeros((n, k))
    s_prev = np.zeros(k)
    for i in range(n):
        c = ref_grad(s_prev, Y, k)
        for l in Y:
            weights[i, l] = c.max() - c[l]
        s_i = s_prev + alpha[i] * H[i]
        grad = ref_grad(s_i, Y, k) @ H[i]  # f'(alpha) = c^{i+1} . h^i
        alpha[i] = max(-2.0, min(2.0, alpha[i] - grad / math.sqrt(t)))
        v[i] *= math.exp(-ref_rank(s_i, Y, k))
        s_prev = s_i
    return alpha, v, weights


# ----------------------------------------------------------------------------- kernels


def test_logistic_cost_is_the_gradient_eq8_and_eq9():
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(2, 9))
        s = rng.normal(scale=2, size=k)
        y = rng.random(k) < 0.4
        Y = set(np.flatnonzero(y))
        out = np.empty(k)
        half_l1 = logistic_cost(s, y, out)
        np.testing.assert_allclose(out, ref_grad(s, Y, k), atol=1e-7)
        assert logistic_loss(s, y) == pytest.approx(ref_logistic(s, Y, k), rel=1e-12)
        assert out.sum() == pytest.approx(0.0, abs=1e-12)  # Sec. 3.2: entries sum to 0
        assert half_l1 == pytest.approx(np.abs(out).sum() / 2, rel=1e-12)  # eq. 9
        assert (out[y] <= 0).all() and (out[~y] >= 0).all()


def test_update_kernel_matches_the_paper_transcription():
    rng = np.random.default_rng(1)
    n, k = 7, 5
    alpha = rng.uniform(-2, 2, n)
    log_v = np.zeros(n)
    v = np.ones(n)
    for t in range(1, 30):
        H = rng.dirichlet(np.ones(k), size=n)
        y = rng.random(k) < 0.4
        ref_alpha, v, ref_w = ref_round(H, set(np.flatnonzero(y)), alpha, v, t)
        w = np.empty((n, k))
        ada_olmr_update(H, y, alpha, log_v, t, 1.0, 2.0, 1.0, w, np.zeros(n), np.zeros(n))
        # finite-difference gradients in the reference: agreement to 1e-6 is what they allow
        np.testing.assert_allclose(alpha, ref_alpha, atol=1e-6)
        np.testing.assert_allclose(w, ref_w, atol=1e-6)
        np.testing.assert_allclose(np.exp(log_v) / np.exp(log_v).sum(), v / v.sum(), rtol=1e-9)
        alpha = ref_alpha.copy()  # keep both on the same trajectory


def test_choose_expert_inverts_hedge_distribution():
    log_v = np.log(np.array([0.1, 0.0001, 0.6, 0.2999]))
    us = (np.arange(100_000) + 0.5) / 100_000
    picks = np.array([choose_expert(log_v, u, True) for u in us])
    freq = np.bincount(picks, minlength=4) / us.size
    np.testing.assert_allclose(freq, np.exp(log_v), atol=1e-4)  # grid step is 1e-5
    assert choose_expert(log_v, 0.0, False) == 2
    # Hedge's weights tie at the start and after equal losses: the lowest index (docstring)
    assert choose_expert(np.zeros(4), 0.5, False) == 0
    assert choose_expert(np.log(np.array([0.1, 0.45, 0.45])), 0.5, False) == 1


def test_the_best_expert_of_tied_weights_is_the_first():
    # mutation round 9: ties going to the last expert (>= for >) passed every test; after 3
    # rows Hedge's log-weights here are [-0.5, 0, 0, 0, 0], and "best" scores with expert 1
    rng = np.random.default_rng(0)
    X, Y = rng.random((30, 4)), rng.random((30, 3)) < 0.4
    best = AdaOLMR(learners=5, seed=1, labels=3, predict_with="best")
    best.learn(X[:3], Y[:3])
    log_v = best.log_v_
    assert log_v[0] < log_v[1] == log_v[2] == log_v[3] == log_v[4]
    for x, scores in zip(X[20:23], best.score(X[20:23]), strict=True):
        H = best.committee_.predict(x)
        np.testing.assert_allclose(scores, best.alpha_[:2] @ H[:2], rtol=1e-12, atol=1e-15)
        assert not np.allclose(scores, best.alpha_ @ H)  # not the last expert's


def test_counter_uniform_is_uniform_and_deterministic():
    key = np.uint64(12345)
    u = np.array([counter_uniform(key, t) for t in range(20_000)])
    assert ((u >= 0) & (u < 1)).all()
    # mean of 20,000 uniforms has sd 0.002; 5 sd
    assert abs(u.mean() - 0.5) < 0.01
    assert counter_uniform(key, 7) == counter_uniform(key, 7)
    assert counter_uniform(key, 7) != counter_uniform(np.uint64(12346), 7)


# ----------------------------------------------------------------------------- a scripted committee


def test_booster_drives_the_committee_with_paper_weights():
    model = AdaOLMR(ScriptedCommittee(), learners=4, seed=0, labels=3)
    rng = np.random.default_rng(2)
    alpha, v = np.zeros(4), np.ones(4)
    for t in range(1, 12):
        x = rng.normal(size=2)
        Y = {int(j) for j in np.flatnonzero(rng.random(3) < 0.5)}
        model.learn_one(x, Y)
        H = model.committee_.predict(x)
        alpha, v, w = ref_round(H, Y, alpha, v, t)
        np.testing.assert_allclose(model.committee_.learned_[-1], w, atol=1e-6)
        np.testing.assert_allclose(model.alpha_, alpha, atol=1e-6)
        alpha = model.alpha_.copy()
    assert model.t_ == 11


# ----------------------------------------------------------------------------- API


def small_data(n=120, d=8, k=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X[:, :k] + 0.2 * rng.normal(size=(n, k))) > 0.3
    return X, Y


def test_one_by_one_equals_array_path():
    X, Y = small_data()
    a = AdaOLMR(VFDTCommittee(n_features=4), learners=6, seed=4, labels=4)
    b = a.clone()
    one = []
    for x, y in zip(X, Y, strict=True):
        one.append(list(a.score_one(x).values()))
        a.learn_one(x, set(np.flatnonzero(y).tolist()))
    arr = b.score_then_learn(X, Y)
    np.testing.assert_array_equal(np.asarray(one), arr)
    np.testing.assert_array_equal(a.score(X), b.score(X))


def test_sparse_rows_equal_dense_rows():
    sparse = pytest.importorskip("scipy.sparse")
    X, Y = small_data()
    X[np.abs(X) < 0.8] = 0.0
    a = AdaOLMR(VFDTCommittee(n_features=4), learners=5, seed=1).score_then_learn(X, Y)
    b = AdaOLMR(VFDTCommittee(n_features=4), learners=5, seed=1).score_then_learn(
        sparse.csr_array(X), Y
    )
    np.testing.assert_array_equal(a, b)


def test_scores_need_labels_and_start_at_zero():
    with pytest.raises(ValueError, match="labels"):
        AdaOLMR().score_one([1.0, 2.0])
    assert AdaOLMR(labels=["a", "b"]).score_one([1.0]) == {"a": 0.0, "b": 0.0}


@pytest.mark.parametrize(
    ("params", "err"),
    [
        ({"learners": 0}, ValueError),
        ({"learners": 2.5}, TypeError),
        ({"predict_with": "mean"}, ValueError),
        ({"labels": 1}, ValueError),
        ({"labels": ["a", "a"]}, ValueError),
        ({"step_scale": -1.0}, ValueError),
        ({"alpha_bound": 0}, ValueError),
        ({"committee": "vfdt"}, TypeError),
        ({"seed": 1.5}, TypeError),
    ],
)
def test_invalid_parameters(params, err):
    with pytest.raises(err):
        AdaOLMR(**params)


def test_bad_arrays_leave_model_unchanged():
    X, Y = small_data()
    model = AdaOLMR(VFDTCommittee(n_features=4), learners=3, seed=0).learn(X[:20], Y[:20])
    before = pickle.dumps(model)
    # (NaN would be a missing value, which the trees learn from by default)
    Xinf = X[20:30].copy()
    Xinf[3, 2] = np.inf
    for bad_X, bad_Y in [
        (Xinf, Y[20:30]),
        (X[20:30, :5], Y[20:30]),
        (X[20:30], Y[20:30, :3]),
        (X[20:30], Y[20:30] * 2),
        (X[20:30], Y[20:29]),
    ]:
        with pytest.raises(ValueError):
            model.learn(bad_X, bad_Y)
        assert pickle.dumps(model) == before


def test_empty_and_full_label_sets_are_allowed_and_carry_no_update():
    model = AdaOLMR(VFDTCommittee(n_features=2), learners=3, seed=0, labels=3)
    model.learn_one([0.1, 0.2], {0})
    state = pickle.dumps((model.alpha_, model.log_v_))
    model.learn_one([0.3, 0.1], set())
    model.learn_one([0.3, 0.1], {0, 1, 2})
    assert pickle.dumps((model.alpha_, model.log_v_)) == state
    assert model.t_ == 3


def test_learns_a_ranking_better_than_chance():
    X, Y = small_data(n=600)
    result = prequential(
        AdaOLMR(VFDTCommittee(n_features=4), learners=10, seed=0, labels=4),
        zip(X, [set(np.flatnonzero(y).tolist()) for y in Y], strict=True),
    )
    # untrained scores tie every pair (loss 0.5); the first 4 features decide the labels, so a
    # boosted ranker must do far better than that over 600 examples
    assert result.rank_loss < 0.3
    assert result.n_test == 600


# ----------------------------------------------------------------------------- accuracy


# Issue #2 targets: mean test rank loss over 10 seeds, paper setup (100 VFDT, 20 features each),
# within the spread of the published runs. The seeds are fixed, so these are deterministic checks
# of the whole pipeline; the bounds are the issue's, not tuned to our numbers.
ACCURACY_TARGETS = {"emotions": 0.170, "scene": 0.095, "yeast": 0.192, "mediamill-reduced": 0.066}


@pytest.mark.protocol
@pytest.mark.parametrize("name", list(ACCURACY_TARGETS))
def test_paper_accuracy_over_ten_seeds(name, request):
    data = load(name)

    def run(seed):
        model = AdaOLMR(VFDTCommittee(), learners=100, seed=seed)
        return train_test(model, data.train, data.test).rank_loss

    losses = seed_values(request.node.nodeid, range(1, 11), run)
    assert np.mean(losses) <= ACCURACY_TARGETS[name], losses


def test_learn_one_takes_an_explicit_feedback_object():
    from olboost import FullFeedback

    X, Y = small_data(n=40)
    a = AdaOLMR(VFDTCommittee(n_features=4), learners=4, seed=2, labels=4)
    b = a.clone()
    for x, y in zip(X, Y, strict=True):
        a.learn_one(x, set(np.flatnonzero(y).tolist()))
        b.learn_one(x, FullFeedback(y.copy()))
    np.testing.assert_array_equal(a.score(X), b.score(X))
    before = pickle.dumps(b)
    with pytest.raises(ValueError, match="feedback covers 3 labels"):
        b.learn_one(X[0], FullFeedback(np.zeros(3, dtype=bool)))
    with pytest.raises(TypeError):
        FullFeedback([1, 0, 1])
    assert pickle.dumps(b) == before


@pytest.mark.parametrize("name", ["AdaOLMR", "TopkAdaptive"])
def test_scores_stay_finite_at_the_largest_alpha_bound(name):
    """alpha_bound and step_scale are at most MAX_ALPHA, as for AdaBoostOLM: at 1e308 (then
    accepted) the scores, sums of N alphas, were -inf from the third row of this stream on, and
    learn_one refused rows with a message about weights the user never gave."""
    import olboost
    from olboost.boosters.base import MAX_ALPHA

    cls = getattr(olboost, name)
    extra = {"k": 2, "rho": 0.2} if name == "TopkAdaptive" else {}
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3))
    Y = np.zeros((300, 4), dtype=bool)
    Y[np.arange(300), (X[:, 0] * 4).astype(int)] = True
    Y[::3] = ~Y[::3]
    model = cls(
        VFDTCommittee(n_features=3), learners=100, seed=1, labels=4,
        alpha_bound=MAX_ALPHA, step_scale=MAX_ALPHA, **extra,
    )  # fmt: skip
    assert np.isfinite(model.score_then_learn(X, Y)).all()
    assert model.t_ == 300 and np.isfinite(model.alpha_).all()
    assert np.isfinite(model.score(X)).all()
    for param in ("alpha_bound", "step_scale"):
        with pytest.raises(ValueError, match=param):
            cls(**{param: MAX_ALPHA * 10}, **extra)


def test_empirical_edges_are_one_for_a_learner_always_right_and_minus_one_always_wrong():
    # eq. 10, gamma_i = -sum_t c^i . h^i / ||w^i||_1: a learner scoring 1 on exactly the relevant
    # labels meets the negative costs only, -c . h = ||c||_1 / 2 = w^i[t] (eq. 9); its reverse
    # meets the positive ones only
    model = AdaOLMR(OracleCommittee(), learners=2, seed=0, labels=4)
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.permutation([True, False, rng.random() < 0.5, False])
        model.learn_one(y.astype(float), set(np.flatnonzero(y).tolist()))
    np.testing.assert_allclose(model.empirical_edges, [1.0, -1.0], rtol=0, atol=1e-12)


def test_a_started_booster_of_the_default_committee_does_not_build_one_per_call(monkeypatch):
    # committee=None: every learn_one, predict_one and score_one built a VFDTCommittee (17
    # parameter checks) to read whether it takes missing values, a third of a predict_one
    import olboost.boosters.base as booster_base

    model = AdaOLMR(learners=2, seed=1, labels=3)
    model.learn_one([0.1, 0.2], {0})

    def built() -> None:
        raise AssertionError("a default committee was built after the start")

    monkeypatch.setattr(booster_base, "_default_committee", built)
    model.learn_one([0.3, 0.1], {1})
    assert model.predict_one([0.2, 0.2]) and model.rank_one([0.1, 0.1])
    assert set(model.score_one([0.2, 0.4])) == {0, 1, 2}
    model.learn(np.array([[0.1, 0.2]]), np.array([[1, 0, 1]]))
