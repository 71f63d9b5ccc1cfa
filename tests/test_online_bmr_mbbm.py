"""OnlineBMR and OnlineMBBM: boosters against transcriptions of the papers' algorithm boxes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from helpers import ScriptedCommittee
from olboost import VFDTCommittee
from olboost.boosters import _mbbm_kernels as MK
from olboost.boosters.online_bmr import OnlineBMR
from olboost.boosters.online_mbbm import OnlineMBBM
from olboost.datasets import load
from olboost.evaluate import train_test
from olboost.potentials import (
    mbbm_weight_bound,
    multiclass_costs,
    normalize_multiclass_costs,
    pairwise_costs,
)
from protocol import seed_values


def bmr_reference(H, y, gamma, loss):
    """Algorithm 2 of Jung & Tewari 2018 with the cost vectors of eq. 2 (via the public potential
    functions) and the importance weights of Sec. 4."""
    n, k = H.shape
    s = np.zeros(k)
    out = np.zeros((n, k))
    for i in range(n):
        c = pairwise_costs(s, y, n - 1 - i, gamma, loss)
        out[i] = np.where(y, c.max() - c, 0.0)
        s = s + H[i]
    return out


@pytest.mark.parametrize("loss", ["hinge", "rank", "hinge_no_margin"])
def test_bmr_weights_follow_algorithm_2(loss):
    model = OnlineBMR(ScriptedCommittee(), learners=6, seed=0, labels=5, gamma=0.15, loss=loss)
    rng = np.random.default_rng(3)
    for _ in range(15):
        x = rng.normal(size=2)
        y = rng.random(5) < 0.4
        model.learn_one(x, {int(j) for j in np.flatnonzero(y)})
        H = model.committee_.predict(x)
        np.testing.assert_allclose(
            model.committee_.learned_[-1], bmr_reference(H, y, 0.15, loss), rtol=1e-12, atol=1e-14
        )
        np.testing.assert_array_equal(model.score(x[None, :])[0], H.sum(axis=0))


@pytest.mark.parametrize("method", ["exact", "monte_carlo"])
def test_bmr_caps_large_edges_and_counts_them(method):
    # the Monte Carlo path's count had no test (mutation round 8)
    model = OnlineBMR(
        ScriptedCommittee(), learners=4, seed=0, labels=6, gamma=0.4, method=method, draws=20_000
    )
    assert model.edge_for(2) == 0.4
    assert model.edge_for(3) == pytest.approx(0.9 / 3)  # 0.4 * 3 >= 1: capped at gamma_cap / |Y|
    model.learn_one([0.1, 0.2], {0, 1})
    model.learn_one([0.3, 0.2], {0, 1, 2})
    model.learn_one([0.5, 0.2], {0, 1, 2, 3})
    assert model.n_gamma_capped_ == 2
    H = model.committee_.predict(np.array([0.5, 0.2]))
    y = np.array([True] * 4 + [False] * 2)
    # exact to the rounding, or within the Monte Carlo bound of the test above (20,000 draws)
    atol = 1e-14 if method == "exact" else 0.15
    np.testing.assert_allclose(
        model.committee_.learned_[-1], bmr_reference(H, y, 0.9 / 4, "hinge"), atol=atol
    )


@pytest.mark.parametrize("method", ["exact", "monte_carlo"])
def test_bmr_keeps_an_edge_of_exactly_one_over_the_relevant_labels(method):
    # gamma |Y| = 1 leaves the baseline u_gamma^Y no mass on the irrelevant labels (a = 0) but
    # is still the paper's distribution: the edge is used as it is, not capped (it was)
    model = OnlineBMR(
        ScriptedCommittee(), learners=3, seed=0, labels=4, gamma=0.5, method=method, draws=20_000
    )
    assert model.edge_for(2) == 0.5
    assert model.edge_for(3) == pytest.approx(0.9 / 3)
    model.learn_one([0.1, 0.2], {0, 1})
    assert model.n_gamma_capped_ == 0
    H = model.committee_.predict(np.array([0.1, 0.2]))
    y = np.array([True, True, False, False])
    expect = bmr_reference(H, y, 0.5, "hinge")
    # exact to the rounding, or within the Monte Carlo bound of the tests around (20,000 draws)
    atol = 1e-14 if method == "exact" else 0.15
    np.testing.assert_allclose(model.committee_.learned_[-1], expect, atol=atol)
    if method == "exact":
        # the capped edge's weights differ: the test tells the two apart
        assert not np.allclose(bmr_reference(H, y, 0.9 / 2, "hinge"), expect, atol=1e-3)


def test_bmr_monte_carlo_path_estimates_the_exact_weights():
    X = np.random.default_rng(0).normal(size=(5, 2))
    exact = OnlineBMR(ScriptedCommittee(), learners=5, seed=1, labels=4, gamma=0.1)
    mc = exact.clone({"method": "monte_carlo", "draws": 20_000})
    for x in X:
        exact.learn_one(x, {0, 2})
        mc.learn_one(x, {0, 2})
    # hinge potentials of 4 draws are bounded by 5, so 20,000 draws give a standard error below
    # 5 / sqrt(20,000) ~ 0.035 on each cost and twice that on a difference of costs
    diff = np.abs(np.asarray(exact.committee_.learned_) - np.asarray(mc.committee_.learned_))
    assert diff.max() < 0.15
    assert not np.array_equal(exact.committee_.learned_, mc.committee_.learned_)
    # the largest cost range each learner met: a difference of costs too (mutation round 8: the
    # Monte Carlo path never recorded it)
    assert (exact.weight_max_ > 0).all()
    np.testing.assert_allclose(mc.weight_max_, exact.weight_max_, rtol=0, atol=0.15)


def test_bmr_bad_parameters():
    for params in (
        {"gamma": 0.0},
        {"gamma": 1.0},
        {"gamma": -0.1},
        {"loss": "logistic"},
        {"method": "approx"},
        {"gamma_cap": 1.0},
        {"draws": 0},
    ):
        with pytest.raises(ValueError):
            OnlineBMR(**params)


def mbbm_reference(H, y, gamma, w_star, floor=0.0):
    """Algorithm 1 of Jung, Goetz & Tewari 2017: eq. 4 costs, line 11 weight, line 12 example
    (at least ``floor``, as the authors' code)."""
    n, k = H.shape
    s = np.zeros(k, dtype=np.int64)
    out = np.zeros((n, k))
    for i in range(n):
        c = multiclass_costs(s, y, n - 1 - i, gamma)
        w = sum(c[l] - c[y] for l in range(k))
        out[i, y] = max(w / w_star[i], floor)
        s[np.argmax(H[i])] += 1
    return out


@pytest.mark.parametrize("bound", ["lemma10", "trivial", "exact_law", "authors"])
def test_mbbm_weights_follow_algorithm_1(bound):
    model = OnlineMBBM(
        ScriptedCommittee(), learners=7, seed=0, classes=4, gamma=0.2, weight_bound=bound
    )
    rng = np.random.default_rng(5)
    floor = 1e-10 if bound == "authors" else 0.0  # the authors' get_weight: max(1e-10, weight)
    floored = 0
    for _ in range(12):
        x = rng.normal(size=3)
        y = int(rng.integers(4))
        model.learn_one(x, y)
        H = model.committee_.predict(x)
        np.testing.assert_allclose(
            model.committee_.learned_[-1],
            mbbm_reference(H, y, 0.2, model.w_star_, floor),
            rtol=1e-12,
        )
        floored += int(np.sum(model.committee_.learned_[-1][:, y] == 1e-10))
        if bound != "authors":  # an upper bound on w^i(t): every weight taught is in [0, 1]
            assert model.committee_.learned_[-1].max() <= 1.0
        votes = np.bincount(np.argmax(H, axis=1), minlength=4)
        assert model.predict_one(x) == int(np.argmax(votes))
    # the last learners often face a decided vote (weight 0): the floor is exercised
    assert (floored > 0) == (bound == "authors")
    expected = {
        "trivial": 4.0,
        "authors": 30.0,  # the authors' code teaches 0.1 w^i / (k - 1), k = 4
        "lemma10": [mbbm_weight_bound(i, 7, 4, 0.2) for i in range(1, 8)],
        "exact_law": [mbbm_weight_bound(i, 7, 4, 0.2, form="exact_law") for i in range(1, 8)],
    }[bound]
    np.testing.assert_allclose(model.w_star_, expected)


def test_mbbm_normalised_cost_rows_are_in_the_eor_set():
    c = multiclass_costs([2, 0, 1, 0], 0, 5, 0.1)
    d, w = normalize_multiclass_costs(c, 0)
    assert d[0] == 0 and (d >= 0).all() and d.sum() == pytest.approx(1.0)
    assert w == pytest.approx(sum(c - c[0]))


def test_mbbm_learns_and_resumes_from_pickle():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = np.argmax(X[:, :3], axis=1)
    a = OnlineMBBM(VFDTCommittee(n_features=2), learners=8, seed=2, gamma=0.1)
    full = a.clone().predict_then_learn(X, y)
    first = a.predict_then_learn(X[:150], y[:150])
    rest = pickle.loads(pickle.dumps(a)).predict_then_learn(X[150:], y[150:])
    np.testing.assert_array_equal(np.vstack([first, rest]), full)
    # chance is 1/3; over the last 200 examples its standard deviation is 0.033, so 0.5 is five
    # standard deviations above chance
    assert np.mean(np.argmax(full[200:], axis=1) == y[200:]) > 0.5


# Issue #3 targets for the best OnlineBMR (paper: best of 4 edges): mean test rank loss over 10
# seeds, 100 VFDT with 20 features each, bounds from the issue. The best edge is at most as bad as
# any single edge, so one edge of the paper's grid meeting the bound shows that the best does; the
# edge used is, per data set, the best one `olboost reproduce mlr --seeds 10` found (scene: 0.0792
# at 0.01; 0.0800 at 0.001, the best before River's range of merit counted zero-weight classes)
# or a cheaper one of the grid within the bound by a clear margin.
BMR_TARGETS = {
    "emotions": (0.001, 0.170),
    "scene": (0.01, 0.080),
    "yeast": (0.01, 0.190),
    "mediamill-reduced": (0.01, 0.066),
}


@pytest.mark.protocol
@pytest.mark.parametrize("name", list(BMR_TARGETS))
def test_best_bmr_accuracy_over_ten_seeds(name, request):
    gamma, target = BMR_TARGETS[name]
    data = load(name)

    def run(seed):
        model = OnlineBMR(VFDTCommittee(), learners=100, seed=seed, gamma=gamma)
        return train_test(model, data.train, data.test).rank_loss

    losses = seed_values(request.node.nodeid, range(1, 11), run)
    assert np.mean(losses) <= target, losses


class TiedCommittee(ScriptedCommittee):
    """Rows of ``ScriptedCommittee`` where learners 0..3 are uniform (every class tied) and
    learner 4 ties classes 1 and 2."""

    def predict(self, x):
        H = super().predict(x)
        H[:4] = 1.0 / H.shape[1]
        H[4] = [0.1, 0.4, 0.4, 0.1]
        return H


def test_pick_min_lowest_or_uniform_over_exact_ties():
    values = np.array([3.0, 1.0, 2.0, 1.0, 1.0])
    assert MK.pick_min(values, -1.0) == 1
    picks = [MK.pick_min(values, u) for u in (np.arange(300) + 0.5) / 300]
    assert {p: picks.count(p) for p in set(picks)} == {1: 100, 3: 100, 4: 100}
    assert MK.pick_min(np.array([2.0, 0.5]), 0.99) == 1  # a unique minimum whatever u
    # within tol of the minimum is a tie; beyond it is not
    near = np.array([1.0 + 1e-13, 1.0, 1.5])
    assert MK.pick_min(near, -1.0, 1e-12) == 0 and MK.pick_min(near, -1.0, 0.0) == 1
    assert MK.pick_min(np.array([1.0 + 1e-11, 1.0]), -1.0, 1e-12) == 1


def _exact_potential(s, r, n, k, gamma):
    """phi^r_n(s) of eq. 16 in rational arithmetic: the probability that r does not win after
    n more draws from u_gamma^r, by enumerating every composition of the draws."""
    import itertools
    import math
    from fractions import Fraction

    u = [(1 - gamma) / k] * k
    u[r] += gamma
    total = Fraction(0)
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        x = [b - a - 1 for a, b in zip((-1, *cut), (*cut, n + k - 1), strict=True)]
        z = [s[j] + x[j] for j in range(k)]
        if max(z[c] for c in range(k) if c != r) >= z[r]:
            ways = math.factorial(n)
            p = Fraction(1)
            for xi, ui in zip(x, u, strict=True):
                ways //= math.factorial(xi)
                p *= ui**xi
            total += ways * p
    return total


def test_expected_cost_votes_tied_in_exact_arithmetic_are_ties():
    # on the first example every tree gives the uniform row, and at these symmetric vote states
    # all the expected costs are equal; summed over r in order they differed by an ulp, so
    # "lowest" voted [2, 1, 1, 3] and "random" gave class 3 three votes for 200 of 200 seeds
    from fractions import Fraction

    k, n, gamma = 4, 7, Fraction(1, 10)
    s = [0] * k
    for i in range(1, n + 1):
        e = [
            sum(_exact_potential([s[j] + (j == l) for j in range(k)], r, n - i, k, gamma)
                for r in range(k))
            for l in range(k)
        ]  # fmt: skip
        s[e.index(min(e))] += 1  # the lowest of the exact ties
    assert s == [4, 1, 1, 1]
    x, y = np.array([[0.1, -0.3, 0.5, 0.2]]), np.array([2])

    def votes(**params):
        model = OnlineMBBM(
            VFDTCommittee(n_features=2), learners=n, classes=k, gamma=0.1,
            vote="expected_cost", **params,
        )  # fmt: skip
        return model.predict_then_learn(x, y)[0]

    np.testing.assert_array_equal(votes(seed=3), s)
    # drawn uniformly among ties: class 3 gets three votes or more for a quarter of the seeds
    # (the first learner's draw), 50 of 200 in expectation, sd 6.1
    many = sum(votes(seed=seed, tie_break="random")[3] >= 3 for seed in range(200))
    assert 25 <= many <= 75, many


def test_adaboost_olm_expected_cost_ties_go_to_the_lowest_label():
    # labels 0, 1 and 3 are tied in exact arithmetic (checked with fractions from the very
    # floats the kernel uses); their float sums differed in the last bit, and 3 was chosen
    from fractions import Fraction

    from olboost.boosters import _ada_olm_kernels as OK

    p = np.array([0.28629598, 0.28629598, 0.14111205, 0.28629598])
    p /= p.sum()
    s_prev = np.array([0.0, 0.0, -0.47140452, 0.0])
    C = np.empty((4, 4))
    OK.olm_cost_matrix(s_prev, OK.LOGISTIC, C)
    exact = [sum(Fraction(p[r]) * Fraction(C[r, l]) for r in range(4)) for l in range(4)]
    assert exact[0] == exact[1] == exact[3] < exact[2]
    out = np.empty(4)
    OK.olm_weak_vote(p, s_prev, OK.VOTE_EXPECTED_COST, OK.LOGISTIC, out, np.empty((5, 4)))
    np.testing.assert_array_equal(out, [1.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("vote", ["argmax", "expected_cost"])
def test_mbbm_random_tie_break_changes_only_tied_votes(vote):
    kwargs = {"learners": 7, "seed": 3, "classes": 4, "gamma": 0.2, "vote": vote}
    lowest = OnlineMBBM(TiedCommittee(), **kwargs)
    drawn = OnlineMBBM(TiedCommittee(), tie_break="random", **kwargs)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    for model in (lowest, drawn):
        model.learn_one(X[0], 0)
    seen = set()
    for t, x in enumerate(X[1:], start=1):
        H = drawn.committee_.predict(x)
        a, b = lowest._votes(H, t), drawn._votes(H, t)
        np.testing.assert_array_equal(b, drawn._votes(H, t))  # a pure function of (seed, t)
        if vote == "argmax":
            # untied learners vote as before; tied ones vote for one of their tied classes
            np.testing.assert_array_equal(a[5:], b[5:])
            assert a[0] == 0 and b[4] in (1, 2)
        seen.update(b[:4].tolist())
    # over 39 rounds the uniform learners' votes are spread over the classes, not all on 0
    assert len(seen) >= 3
