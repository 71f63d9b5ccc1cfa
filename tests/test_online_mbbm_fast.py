"""OnlineMBBM's compiled path: kernels against the public potentials, whole streams against
transcriptions of Algorithm 1, expected-cost votes, and the memo kept out of the learned state."""

from __future__ import annotations

import copy
import itertools
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

from helpers import ScriptedCommittee
from olboost import VFDTCommittee
from olboost.boosters import _mbbm_kernels as MK
from olboost.boosters import online_mbbm
from olboost.boosters.online_mbbm import OnlineMBBM
from olboost.potentials import multiclass_costs, multiclass_potential
from olboost.potentials._multiclass_kernels import binomial_table


def mbbm_reference(votes, y, k, gamma, w_star):
    """Algorithm 1, lines 10-13 (eq. 4 costs, line 11 weight, line 12 example) from the public
    potential functions, for given votes."""
    n = len(votes)
    s = np.zeros(k, dtype=np.int64)
    out = np.zeros((n, k))
    for i in range(n):
        c = multiclass_costs(s, y, n - 1 - i, gamma)
        w = sum(max(c[l] - c[y], 0.0) for l in range(k))
        out[i, y] = w / w_star[i]
        s[votes[i]] += 1
    return out


def expected_cost_reference(H, gamma):
    """Votes ``argmin_l sum_r H[i, r] phi^r_{N-i}(s^{i-1} + e_l)``, lowest ``l`` on ties, by brute
    force from :func:`multiclass_potential` (every entry of every cost matrix evaluated). The
    sums are exact (``math.fsum``) and costs within ``1e-12`` of the terms' size of the minimum
    are ties, the documented rule: labels tied in exact arithmetic (all of them on uniform rows)
    must be ties, whatever the rounding of a sum taken in one order."""
    n, k = H.shape
    s = np.zeros(k, dtype=np.int64)
    votes = np.zeros(n, dtype=np.int64)
    for i in range(n):
        expected, size = [], 0.0
        for l in range(k):
            t = s.copy()
            t[l] += 1
            terms = [H[i, r] * multiclass_potential(t, r, n - 1 - i, gamma) for r in range(k)]
            expected.append(math.fsum(terms))
            size = max(size, math.fsum(abs(v) for v in terms))
        lo = min(expected)
        votes[i] = min(l for l in range(k) if expected[l] <= lo + 1e-12 * size)
        s[votes[i]] += 1
    return votes


def _kernel_args(n_max, k, gamma, max_entries=MK.MEMO_SIZE, memoised=True):
    tab = binomial_table(n_max, k - 1)
    if memoised:
        offsets, comb = MK.memo_layout(n_max, k)
    else:
        offsets, comb = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64)
    return (gamma, tab, offsets, comb, MK.new_memo(), max_entries)


# ------------------------------------------------------------------------------ kernels


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_state_codes_are_a_bijection(k):
    n_max = 6
    offsets, comb = MK.memo_layout(n_max, k)
    for n in range(n_max + 1):
        codes = set()
        for d in itertools.combinations_with_replacement(range(-n, n + 2), k - 1):
            code = MK.state_code(np.array(d, dtype=np.int64), n, offsets, comb)
            assert offsets[n] <= code < offsets[n + 1]
            codes.add(code)
        assert len(codes) == math.comb(2 * n + 1 + k - 1, k - 1) == offsets[n + 1] - offsets[n]


def test_memo_table_holds_what_a_dict_holds():
    """The memo's hash table against a dict: random codes (clustered, as the states' codes
    are) stored and read back through growth by doubling, and emptied at ``max_entries``."""
    rng = np.random.default_rng(5)
    memo = MK.new_memo(capacity=4)
    reference = {}
    max_entries = 3000
    emptied = 0
    for _ in range(60):
        batch = rng.integers(0, 2**40, size=5) // int(rng.choice([1, 2**20]))
        table, count = MK.memo_room(memo, batch.size, max_entries)
        if count[0] == 0 and reference:
            reference.clear()
            emptied += 1
        for code in batch.tolist():
            value = MK.memo_lookup(table, code)
            if code in reference:
                assert value == reference[code]  # bit for bit
                continue
            assert value == -1.0
            value = float(rng.random())
            MK.memo_store(table, count, code, value, max_entries)
            reference[code] = value
        assert MK.memo_len(memo) == len(reference) <= max_entries
        # at most half full: a probe always ends at an empty slot
        assert 2 * MK.memo_len(memo) <= memo[0].size // 2
    assert memo[0].size >= 2 * 256 and emptied == 0
    for code, value in reference.items():
        assert MK.memo_lookup(memo[0], code) == value
    # room past max_entries empties the memo
    table, count = MK.memo_room(memo, max_entries, max_entries)
    assert count[0] == 0 and MK.memo_lookup(table, next(iter(reference))) == -1.0
    # a full memo takes no more values, and stays usable
    MK.memo_store(table, count, 7, 0.5, 0)
    assert MK.memo_lookup(table, 7) == -1.0


def test_memo_layout_fits_63_bits_or_declines():
    assert MK.memo_layout(99, 12) is not None
    assert MK.memo_layout(99, 13) is None
    offsets, comb = MK.memo_layout(99, 12)
    assert 0 < offsets[-1] < 2**63
    assert comb[20, 3] == math.comb(20, 3) and comb[5, 0] == 1


def test_canonical_state_is_the_public_memo_key():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 8))
        n = int(rng.integers(0, 12))
        s = rng.integers(0, 15, size=k)
        r, l = int(rng.integers(k)), int(rng.integers(-1, k))
        t = s.copy()
        if l >= 0:
            t[l] += 1
        d = np.empty(k - 1, dtype=np.int64)
        MK.canonical_state(s, r, l, n, d)
        expected = np.sort(np.clip(np.delete(t[r] - t, r), -n, n + 1))
        np.testing.assert_array_equal(d, expected)


@pytest.mark.parametrize("k", range(2, 9))
def test_cost_rows_equal_the_public_function(k):
    rng = np.random.default_rng(k)
    n_max = 99
    memoised = _kernel_args(n_max, k, 0.1)
    direct = _kernel_args(n_max, k, 0.1, memoised=False)
    tiny = _kernel_args(n_max, k, 0.1, max_entries=3)  # emptied over and over
    d = np.empty(k - 1, dtype=np.int64)
    out = np.empty(k)
    for j in range(12):
        n = int(rng.integers(0, n_max + 1)) if j % 2 else int(rng.integers(0, 8))
        s = rng.multinomial(n_max - n, rng.dirichlet(np.ones(k))).astype(np.int64)
        r = int(rng.integers(k))
        expected = multiclass_costs(s, r, n, 0.1)
        rows = []
        for args in (memoised, memoised, direct, tiny):  # the second pass reads the memo
            g, tab, offsets, comb, memo, size = args
            MK.mbbm_cost_row_memo(s, r, n, g, tab, offsets, comb, memo, size, d, out)
            np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)
            rows.append(out.copy())
        # the memo's codes are the states' own: a wrong one would read another state's potential
        for row in rows[1:]:
            np.testing.assert_array_equal(row, rows[0])
    assert 0 < MK.memo_len(memoised[4]) and MK.memo_len(direct[4]) == 0
    assert MK.memo_len(tiny[4]) <= 3


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_update_kernel_equals_algorithm_1(k):
    rng = np.random.default_rng(10 + k)
    N, gamma = 30, 0.15
    w_star = rng.uniform(0.5, k, size=N)
    args = _kernel_args(N - 1, k, gamma)
    for _ in range(4):
        y = int(rng.integers(k))
        votes = np.where(rng.random(N) < 0.5, y, rng.integers(k, size=N)).astype(np.int64)
        weights = np.full((N, k), np.nan)
        wmax = np.zeros(N)
        MK.mbbm_update(votes, y, *args, w_star, weights, wmax)
        expected = mbbm_reference(votes, y, k, gamma, w_star)
        np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(wmax, expected[:, y] * w_star, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_expected_cost_votes_equal_brute_force(k):
    rng = np.random.default_rng(20 + k)
    N, gamma = 12, 0.2
    args = _kernel_args(N - 1, k, gamma)
    for j in range(4):
        H = rng.dirichlet(np.ones(k), size=N)
        if j == 0:
            H[:] = 1.0 / k  # uniform rows: ties everywhere, lowest label wins
        votes = np.empty(N, dtype=np.int64)
        costs = np.full((N, k, k), np.nan)
        MK.mbbm_expected_cost_votes(H, *args, votes, np.uint64(0), -1, costs)
        np.testing.assert_array_equal(votes, expected_cost_reference(H, gamma))
        # the cost matrices the votes used, which the learning step reuses
        s = np.zeros(k, dtype=np.int64)
        for i in range(N):
            for r in range(k):
                expected = multiclass_costs(s, r, N - 1 - i, gamma)
                np.testing.assert_allclose(costs[i, r], expected, rtol=0, atol=1e-12)
            s[votes[i]] += 1
        again = np.empty(N, dtype=np.int64)
        MK.mbbm_expected_cost_votes(H, *args, again, np.uint64(0), -1, np.empty((0, k, k)))
        np.testing.assert_array_equal(again, votes)


# ------------------------------------------------------------------------------ whole streams


def _stream(k, n, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.integers(k, size=n), rng.normal(size=n)])
    return X, X[:, 1].astype(int)


@pytest.mark.parametrize(
    ("k", "learners", "examples"),
    [(2, 100, 4), (3, 100, 4), (4, 60, 5), (5, 100, 3), (6, 20, 10), (7, 10, 10), (8, 100, 2)],
)
# below about 21 k^3 learners, "lemma10" is "trivial" bit for bit (OnlineMBBM's docstring):
# "exact_law" is the other divisor
@pytest.mark.parametrize("bound", ["lemma10", "exact_law"])
def test_stream_equals_algorithm_1(k, learners, examples, bound):
    model = OnlineMBBM(
        ScriptedCommittee(lean=0.5),
        learners=learners,
        seed=0,
        classes=k,
        gamma=0.1,
        weight_bound=bound,
    )
    X, y = _stream(k, examples, k)
    for x, c in zip(X, y, strict=True):
        model.learn_one(x, c)
        H = model.committee_.predict(x)
        votes = np.argmax(H, axis=1)
        np.testing.assert_allclose(
            model.committee_.learned_[-1],
            mbbm_reference(votes, c, k, 0.1, model.w_star_),
            rtol=0,
            atol=1e-12,
        )
        np.testing.assert_array_equal(model.votes(x[None, :])[0], np.bincount(votes, minlength=k))
    assert MK.memo_len(model._memo[4]) > 0


@pytest.mark.parametrize("vote", ["argmax", "expected_cost"])
@pytest.mark.parametrize("k", [3, 5])
def test_compiled_path_equals_the_python_path(vote, k):
    X, y = _stream(k, 8, 30 + k)
    fast = OnlineMBBM(
        ScriptedCommittee(lean=0.5), learners=15, seed=1, classes=k, gamma=0.2, vote=vote
    )
    slow = fast.clone()
    slow._memo = ()  # forces the Python path (what a too-large k falls back to)
    a = fast.predict_then_learn(X, y)
    b = slow.predict_then_learn(X, y)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(
        fast.committee_.learned_, slow.committee_.learned_, rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(fast.weight_max_, slow.weight_max_, rtol=0, atol=1e-12)
    assert slow._kernel_args() is None and fast._kernel_args() is not None


@pytest.mark.parametrize("vote", ["argmax", "expected_cost"])
def test_the_python_path_learns_with_the_tie_draws_it_predicted_with(vote):
    # tie_break="random" draws by the round: the Python path (Monte Carlo, or too many classes
    # for the kernels) learned with the next round's draws (mutation round 8: t_ instead of
    # t_ - 1 survived). Young trees tie often, so the draws decide many votes. The compiled
    # expected-cost votes drew from the counter of the next round too (round 10 survived).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    fast = OnlineMBBM(
        VFDTCommittee(), learners=8, seed=1, classes=3, gamma=0.2, tie_break="random", vote=vote
    )
    slow = fast.clone()
    slow._memo = ()  # forces the Python path
    np.testing.assert_array_equal(fast.predict_then_learn(X, y), slow.predict_then_learn(X, y))
    np.testing.assert_array_equal(fast.votes(X), slow.votes(X))


def test_falls_back_to_python_when_codes_do_not_fit(monkeypatch):
    X, y = _stream(4, 6, 3)
    fast = OnlineMBBM(ScriptedCommittee(lean=0.5), learners=9, seed=1, classes=4, gamma=0.2)
    a = fast.predict_then_learn(X, y)
    monkeypatch.setattr(MK, "memo_layout", lambda n_max, k: None)
    monkeypatch.setattr(online_mbbm, "_SHARED_KERNEL_ARGS", OrderedDict())
    slow = fast.clone()
    b = slow.predict_then_learn(X, y)
    assert slow._kernel_args() is None
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(fast.committee_.learned_, slow.committee_.learned_, atol=1e-12)


@pytest.mark.parametrize("k", [3, 4])
def test_expected_cost_stream_follows_its_definition(k):
    gamma = 0.25
    model = OnlineMBBM(
        ScriptedCommittee(lean=0.3),
        learners=10,
        seed=0,
        classes=k,
        gamma=gamma,
        vote="expected_cost",
    )
    X, y = _stream(k, 8, 40 + k)
    differs = False
    for x, c in zip(X, y, strict=True):
        model.learn_one(x, c)
        H = model.committee_.predict(x)
        votes = expected_cost_reference(H, gamma)
        differs |= not np.array_equal(votes, np.argmax(H, axis=1))
        np.testing.assert_allclose(
            model.committee_.learned_[-1],
            mbbm_reference(votes, c, k, gamma, model.w_star_),
            rtol=0,
            atol=1e-12,
        )
        np.testing.assert_array_equal(model.votes(x[None, :])[0], np.bincount(votes, minlength=k))
        assert model.predict_one(x) == int(np.argmax(np.bincount(votes, minlength=k)))
    assert differs, "the expected-cost votes should differ from argmax somewhere in this stream"


# ------------------------------------------------------------------------------ memo and state


@pytest.mark.parametrize(
    "params",
    [
        {"vote": "argmax"},
        {"vote": "expected_cost"},
        {"vote": "expected_cost", "method": "monte_carlo", "draws": 10, "learners": 4},
    ],
)
def test_memo_is_not_learned_state(params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.argmax(X[:, :3], axis=1)
    kwargs = {"learners": 12, "seed": 2, "gamma": 0.1, **params}
    model = OnlineMBBM(VFDTCommittee(n_features=2), **kwargs)
    full = model.clone().predict_then_learn(X, y)
    first = model.predict_then_learn(X[:60], y[:60])
    if params.get("method") != "monte_carlo":
        assert MK.memo_len(model._memo[4]) > 0
    blob = pickle.dumps(model)
    assert "_memo" not in pickle.loads(blob).__dict__
    assert "_memo" not in copy.deepcopy(model).__dict__
    # predicting and rejected examples leave the pickle unchanged, though the memo may grow
    model.votes(rng.normal(size=(5, 4)))
    model.predict_one(rng.normal(size=4))
    for bad_x, bad_y in ((X[0][:-1], 0), (X[0], 7), (np.full(4, np.inf), 0)):
        with pytest.raises(ValueError):
            model.learn_one(bad_x, bad_y)
    assert pickle.dumps(model) == blob
    # a fresh memo (after unpickling) or a filled one resume identically
    rest = pickle.loads(blob).predict_then_learn(X[60:], y[60:])
    np.testing.assert_array_equal(np.vstack([first, rest]), full)
    np.testing.assert_array_equal(model.predict_then_learn(X[60:], y[60:]), rest)


def test_models_of_one_configuration_share_the_memo():
    X, y = _stream(3, 5, 7)
    a = OnlineMBBM(ScriptedCommittee(lean=0.5), learners=11, seed=1, classes=3, gamma=0.123)
    b = a.clone({"seed": 2})
    c = a.clone({"gamma": 0.124})
    for model in (a, b, c):
        model.predict_then_learn(X, y)
    assert a._memo[4] is b._memo[4] and a._memo[4] is not c._memo[4]
    # a model run alone on a fresh memo learns the same
    fresh = b.clone()
    fresh._memo = online_mbbm._build_kernel_args(11, 3, 0.123)
    np.testing.assert_array_equal(
        fresh.predict_then_learn(X, y), b.clone().predict_then_learn(X, y)
    )
    np.testing.assert_array_equal(fresh.committee_.learned_, b.committee_.learned_)


def test_monte_carlo_estimates_the_exact_weights():
    X, y = _stream(3, 4, 5)
    exact = OnlineMBBM(ScriptedCommittee(lean=0.5), learners=5, seed=1, classes=3, gamma=0.2)
    mc = exact.clone({"method": "monte_carlo", "draws": 20_000})
    exact.predict_then_learn(X, y)
    mc.predict_then_learn(X, y)
    assert mc._kernel_args() is None
    # each cost is a mean of 20,000 indicators (standard error <= 0.0036); a weight sums k of them
    diff = np.abs(np.asarray(exact.committee_.learned_) - np.asarray(mc.committee_.learned_))
    assert diff.max() < 0.05
    assert not np.array_equal(exact.committee_.learned_, mc.committee_.learned_)


def test_bad_vote_parameter():
    with pytest.raises(ValueError):
        OnlineMBBM(vote="softmax")


def test_the_memo_holds_a_zero_potential_and_fills_to_its_documented_bounds():
    # mutation round 10: a memoised potential of exactly 0 (the true label ahead of every other
    # by more than n) was taken for a miss and stored again at each lookup; a table filled to
    # exactly half, or a room ending exactly at max_entries, was refused or emptied
    n, k, gamma = 3, 3, 0.2
    offsets, comb = MK.memo_layout(n, k)
    tab = binomial_table(n, k - 1)
    memo = MK.new_memo()
    ahead = np.array([n + 1, n + 1], dtype=np.int64)
    values = [
        MK.mbbm_potential_memo(ahead, n, k, gamma, tab, offsets, comb, memo, 1000) for _ in range(5)
    ]
    assert values == [0.0] * 5 and MK.memo_len(memo) == 1
    memo = MK.new_memo(capacity=4)
    table, count = MK.memo_room(memo, 2, 100)  # 4 slots: at most half full
    for code in (1, 2):
        MK.memo_store(table, count, code, 0.5, 100)
    assert MK.memo_len(memo) == 2
    memo = MK.new_memo()
    table, count = MK.memo_room(memo, 2, 10)
    MK.memo_store(table, count, 1, 0.25, 10)
    MK.memo_store(table, count, 2, 0.5, 10)
    table, count = MK.memo_room(memo, 8, 10)  # 2 held and 8 more: max_entries, not past it
    assert MK.memo_len(memo) == 2 and MK.memo_lookup(table, 1) == 0.25


def test_expected_costs_tolerance_is_of_the_largest_label_sum():
    # mutation round 10: the tolerance was of the last label's sum; a cost within TIE_RTOL of
    # the largest sum of another label is a tie, which u = 0 gives to the lowest label
    p = np.array([1.0, 0.0])
    C = np.array([[2.0, 1.0], [0.0, 0.0]])  # label sums 2 and 1
    assert MK.expected_costs(p, C, np.empty(2)) == 2.0 * MK.TIE_RTOL
    p = np.array([1.0, 1.0])
    C = np.array([[1000.0, 1.0], [-999.0 + 1.5e-12, 0.0]])
    out = np.empty(2)
    tol = MK.expected_costs(p, C, out)
    assert MK.pick_min(out, 0.0, tol) == 0
