"""The compiled driver gives exactly the row-by-row results, for every booster that has a step."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from olboost import AdaBoostOLM, LinearCommittee, VFDTCommittee
from olboost._numba_cache import layout_key
from olboost.boosters import _driver
from olboost.datasets import load_uci
from olboost.weak._handles import bind
from olboost.weak.base import CompiledKernels


class RowByRow(AdaBoostOLM):
    """Adaboost.OLM with the compiled loop switched off (the reference path)."""

    def _compiled_stream(self, rows, targets, out, start):
        return start


def _state(model):
    c = model.committee_
    arrays = {
        name: value
        for name, value in vars(c).items()
        if name.endswith("_") and isinstance(value, np.ndarray)
    }
    arrays.update(
        {
            name: value
            for name, value in vars(model).items()
            if name.endswith("_") and isinstance(value, np.ndarray)
        }
    )
    return model.t_, arrays


def _assert_same(a, b):
    (ta, xa), (tb, xb) = _state(a), _state(b)
    assert ta == tb
    assert xa.keys() == xb.keys()
    for name in xa:
        np.testing.assert_array_equal(xa[name], xb[name], err_msg=name)


CASES = [
    ("balance", {}, {}),
    ("car", {"loss": "exponential", "vote": "expected_cost"}, {"capacity": 1}),
    ("car", {"loss": "square_hinge", "vote": "proba", "predict_with": "best"}, {}),
    ("balance", {}, {"leaf_prediction": "nba", "capacity": 1}),
]


@pytest.mark.parametrize(("name", "params", "committee"), CASES)
def test_compiled_loop_is_bit_identical_to_row_by_row(name, params, committee):
    data = load_uci(name).shuffled(2).head(400)
    make = {"nominal_attributes": data.nominal_cardinalities or None, **committee}
    fast = AdaBoostOLM(VFDTCommittee(**make), learners=12, seed=4, **params)
    slow = RowByRow(VFDTCommittee(**make), learners=12, seed=4, **params)
    # two calls: the second resumes a started model (and its t) in the compiled loop
    for part in (slice(0, 150), slice(150, 400)):
        a = fast.predict_then_learn(data.X[part], data.y[part])
        b = slow.predict_then_learn(data.X[part], data.y[part])
        np.testing.assert_array_equal(a, b)
    assert fast.learn(data.X[:50], data.y[:50]) is fast
    slow.learn(data.X[:50], data.y[:50])
    _assert_same(fast, slow)
    # one example at a time after the loop (the learn_one path) agrees as well
    x, y = data.X[60], data.y[60]
    assert fast.predict_proba_one(x) == slow.predict_proba_one(x)
    fast.learn_one(x, y)
    slow.learn_one(x, y)
    _assert_same(fast, slow)


def _spy_on_driver(monkeypatch):
    calls = []
    entry = _driver._entry

    def spying_entry(*args):
        compiled = entry(*args)

        def call(*a):
            stopped = compiled(*a)
            calls.append((a[2], stopped))
            return stopped

        return call

    monkeypatch.setattr(_driver, "_entry", spying_entry)
    return calls


def test_compiled_loop_is_used_and_stops_where_storage_must_grow(monkeypatch):
    data = load_uci("car").shuffled(1).head(300)
    calls = _spy_on_driver(monkeypatch)
    committee = VFDTCommittee(nominal_attributes=data.nominal_cardinalities, capacity=1)
    model = AdaBoostOLM(committee, learners=8, seed=1)
    model.learn(data.X, data.y)
    # the loop ran, stopped (at least once) where a tree needed more nodes, and resumed after it
    assert calls[0][0] == 0 and calls[-1][1] == 300 and len(calls) > 1
    assert all(stop + 1 == nxt for (_, stop), (nxt, _) in zip(calls, calls[1:], strict=False))
    assert model.t_ == 300


def test_a_bad_nominal_row_rejects_the_whole_call_on_both_paths():
    import pickle

    data = load_uci("car").shuffled(1).head(120)
    X = data.X.copy()
    X[70, 0] = 99.0  # not a category code of attribute 0
    make = {"nominal_attributes": data.nominal_cardinalities}
    classes = np.unique(data.y).tolist()
    fast = AdaBoostOLM(VFDTCommittee(**make), learners=6, seed=2, classes=classes)
    slow = RowByRow(VFDTCommittee(**make), learners=6, seed=2, classes=classes)
    for model in (fast, slow):
        model.learn(X[:50], data.y[:50])
        before = pickle.dumps(model)
        # every row is checked before any is learned: rows 50..69 are not learned either
        with pytest.raises(ValueError, match="X row 20: nominal attributes must hold integer"):
            model.learn(X[50:], data.y[50:])
        assert pickle.dumps(model) == before
        model.learn(X[50:70], data.y[50:70])
    assert fast.t_ == 70
    _assert_same(fast, slow)


def test_a_wide_sparse_stream_is_densified_in_small_blocks(monkeypatch):
    """A sparse stream of many features reaches the driver in dense blocks of at most
    DENSE_BLOCK_FLOATS floats (4,096 rows of them took 1.7 GB at 47,236 features), and learns the
    same bits as its dense copy; every row is still checked (a bad code in the last row)."""
    import pickle

    import scipy.sparse as sp

    from olboost.online.inputs import DENSE_BLOCK_FLOATS

    rng = np.random.default_rng(3)
    n, d = 200, 30_000
    X = sp.random(n, d, density=0.001, random_state=4, format="lil")
    X[:, 7] = rng.integers(0, 3, size=(n, 1)).astype(float)  # a nominal column, filled
    X = X.tocsr()
    X.data[:] = np.where(X.indices == 7, X.data, rng.integers(0, 3, size=X.data.shape[0]))
    y = rng.integers(0, 3, size=n)
    make = {"n_features": 5, "nominal_attributes": {7: 3}}
    rows = []
    run = _driver.run

    def spying_run(X, *args):
        rows.append(X.shape[0])
        return run(X, *args)

    monkeypatch.setattr(_driver, "run", spying_run)
    sparse_model = AdaBoostOLM(VFDTCommittee(**make), learners=4, seed=5, classes=[0, 1, 2])
    sparse_model.learn(X, y)
    assert max(rows) * d <= DENSE_BLOCK_FLOATS and sum(rows) == n  # blocks of 69 rows here
    assert len(rows) > 1
    dense_model = AdaBoostOLM(VFDTCommittee(**make), learners=4, seed=5, classes=[0, 1, 2])
    dense_model.learn(X.toarray(), y)
    _assert_same(sparse_model, dense_model)
    bad = X.tolil()
    bad[n - 1, 7] = 9.0
    before = pickle.dumps(sparse_model)
    with pytest.raises(ValueError, match=f"X row {n - 1}: nominal attributes"):
        sparse_model.learn(sp.csr_matrix(bad), y)
    assert pickle.dumps(sparse_model) == before


def _every_compiled_booster():
    from olboost.boosters.base import Booster
    from olboost.checks import all_estimators

    for cls in all_estimators():
        if not issubclass(cls, Booster):
            continue
        for i, params in enumerate(cls._unit_test_params()):
            committee = params.get("committee")
            if committee is not None and not isinstance(committee, VFDTCommittee):
                continue
            yield pytest.param(cls, params, id=f"{cls.__name__}[{i}]")


@pytest.mark.parametrize(("cls", "params"), list(_every_compiled_booster()))
def test_every_booster_with_a_step_runs_the_driver_bit_identically(cls, params, monkeypatch):
    from olboost.checks import synthetic_multilabel

    X, Y = synthetic_multilabel(n=150, d=6, k=4, seed=5)
    ranking = hasattr(cls, "rank_one")
    params = {**params, ("labels" if ranking else "classes"): 4}
    targets = Y if ranking else Y.argmax(1)

    def stream(model, part):
        if ranking:
            return model.score_then_learn(X[part], targets[part])
        return model.predict_then_learn(X[part], targets[part])

    slow = cls(**params)
    slow._compiled_stream = lambda rows, targets, out, start: start
    fast = cls(**params)
    calls = _spy_on_driver(monkeypatch)
    for part in (slice(0, 70), slice(70, 150)):
        np.testing.assert_array_equal(stream(fast, part), stream(slow, part))
    _assert_same(fast, slow)
    # every configuration has a compiled step but the Monte Carlo potentials and Oza's order of
    # judging after learning (N committee calls per example), which learn in Python
    has_step = fast._step_kernels() is not None
    assert bool(calls) == has_step
    oza_after = cls.__name__ == "OzaBoost" and params.get("judge", "after") == "after"
    assert has_step == (params.get("method") != "monte_carlo" and not oza_after)


@numba.njit
def _toy_predict(x, state, H):
    H[:] = x[0] + state[0]
    return x.shape[0] - x.shape[0]


@numba.njit
def _toy_learn(x, weights, state, demand):
    state[0] += weights[0, 0]
    return demand[0]


@numba.njit
def _toy_step(H, target, t, booster, weights, scores, return_scores):
    weights[:] = 1.0 + booster[0]
    return t - t


def test_the_driver_compiles_kernels_for_their_arguments_as_python_calls_do(monkeypatch):
    # Numba keys its disk cache by the signature it was asked for: compiled for a first-class
    # function type (with its return type) and again from a Python call (arguments only), a
    # kernel would be compiled and cached twice. The driver asks for the arguments only.
    asked = []
    kernels = (_toy_predict, _toy_learn, _toy_step)
    for kernel in kernels:
        original = kernel.compile
        monkeypatch.setattr(
            kernel, "compile", lambda sig, k=kernel, f=original: (asked.append((k, sig)), f(sig))[1]
        )
    X, targets = np.ones((3, 2)), np.zeros(3, dtype=np.int64)
    scores, state, booster = np.zeros((1, 1)), np.zeros(1), np.zeros(1)
    H, weights, demand = np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2, dtype=np.int64)
    committee = CompiledKernels(_toy_predict, _toy_learn, state)
    entry = _driver._entry(X, targets, scores, committee, _toy_step, booster, H, weights, demand)
    # learn last: an olboost committee's learn compiles in another process meanwhile
    assert [k for k, _ in asked] == [_toy_predict, _toy_step, _toy_learn]
    assert all(isinstance(sig, tuple) for _, sig in asked)  # no return type
    bound = bind(committee)  # what the driver is handed: the committee behind a handle
    stop = entry(
        X, targets, 0, 3, 0, scores, False, bound.predict, bound.learn, bound.state, _toy_step,
        booster, H, weights, demand,
    )  # fmt: skip
    assert stop == 3 and state[0] == 3.0
    assert len(asked) == 3  # the call found them compiled


@pytest.mark.parametrize("committee", [VFDTCommittee(), LinearCommittee()], ids=type)
def test_committees_take_strided_and_read_only_rows_as_c_ordered_copies(committee):
    # one compiled specialisation per kernel: a strided or read-only row would be another
    committee.start(2, 3, 4, 0)
    X = np.arange(8.0).reshape(4, 2) / 10
    X.flags.writeable = False
    x = committee._check_x(X[:, 0])
    assert x.flags.c_contiguous and x.flags.writeable
    assert np.array_equal(x, X[:, 0])


def test_a_mixed_committees_first_class_kernels_are_compiled_for_their_arguments(monkeypatch):
    # as the driver's: the mix hands its members' kernels over as first-class functions
    from olboost.weak import _mixed_kernels as MK

    asked = []
    toy_learn = numba.njit(_toy_learn.py_func)  # not compiled yet by another test
    original = toy_learn.compile
    monkeypatch.setattr(toy_learn, "compile", lambda sig: (asked.append(sig), original(sig))[1])
    state_type = numba.typeof(np.zeros(1))
    learn = MK.first_class(_toy_predict, toy_learn, state_type)[1]
    assert learn.__wrapper_address__() != 0
    assert asked == [(MK.ROW, MK.MATRIX, state_type, MK.DEMAND)]


def _layout_cases():
    """Values whose Numba types differ in every way a driver argument's can: dtype, dimensions,
    layout (C, F, neither), read-only, alignment, tuple class and items, scalars."""
    from collections import namedtuple

    Pair = namedtuple("Pair", ["a", "b"])
    Other = namedtuple("Other", ["a", "b"])
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    readonly = base.copy()
    readonly.flags.writeable = False
    unaligned = np.frombuffer(b"\0" + np.zeros(4).tobytes(), dtype=np.float64, offset=1, count=4)
    arrays = [
        base, base.astype(np.int64), base.astype(np.float32), base.astype(bool), base.ravel(),
        base.T, base[:, ::2], base[::2], readonly, unaligned, base[:1, :1],
    ]  # fmt: skip
    scalars = [1, 2**63, 1.5, True, None, np.uint64(3), np.int8(2), np.bool_(True)]
    return (
        arrays
        + scalars
        + [
            (base, 1),
            (base, 1.0),
            Pair(base, 1),
            Other(base, 1),
            Pair(base.T, 1),
            (),
            (base,),
        ]
    )


def test_the_layout_key_determines_the_numba_type():
    # _entry finds a compiled loop again by the arguments' _layout: values with one key must
    # have one Numba type, else a loop compiled for other types would be handed them
    cases = _layout_cases()
    for a in cases:
        for b in cases:
            if layout_key(a) == layout_key(b):
                assert numba.typeof(a) == numba.typeof(b), (a, b)


def test_entry_types_the_arguments_once_per_layout(monkeypatch):
    typed = []
    original = _driver._typed_entry

    def counting(*args):
        typed.append(args)
        return original(*args)

    monkeypatch.setattr(_driver, "_typed_entry", counting)
    monkeypatch.setattr(_driver, "_by_layout", {})
    X, targets = np.ones((3, 2)), np.zeros(3, dtype=np.int64)
    scores, booster = np.zeros((1, 1)), np.zeros(1)
    H, weights, demand = np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2, dtype=np.int64)

    def entry(X, state, booster):
        committee = CompiledKernels(_toy_predict, _toy_learn, state)
        return _driver._entry(X, targets, scores, committee, _toy_step, booster, H, weights, demand)

    first = entry(X, np.zeros(1), booster)
    assert entry(X.copy(), np.zeros(1), booster.copy()) is first  # new arrays, same layout
    assert len(typed) == 1
    # another type of the committee's state is typed again (its kernels are compiled for it),
    # but runs in the same loop: the loop holds any committee behind an opaque handle
    assert entry(X, np.zeros(1, dtype=np.int64), booster) is first
    # another type of the booster's state is compiled for
    assert entry(X, np.zeros(1), (booster, 1.0)) is not first
    assert len(typed) == 3


def _read_only(a):
    a = a.copy()
    a.setflags(write=False)
    return a


def _read_only_case(name):
    """``(model, targets, call)`` for one of the array paths."""
    import olboost

    rng = np.random.default_rng(2)
    if name == "AdaBoostOLM":
        model = AdaBoostOLM(VFDTCommittee(n_features=2), learners=3, seed=1, classes=3)
        return model, np.arange(40) % 3, "predict_then_learn"
    params = {"k": 3} if name == "TopkAdaptive" else {}
    if name != "LabelRanker":
        params.update(committee=VFDTCommittee(n_features=2), learners=3)
    model = getattr(olboost, name)(**params, seed=1, labels=5)
    return model, rng.random((40, 5)) < 0.4, "score_then_learn"


@pytest.mark.parametrize("name", ["AdaBoostOLM", "AdaOLMR", "TopkAdaptive", "LabelRanker"])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_read_only_arrays_learn_as_writable_ones(name, layout):
    # np.load(..., mmap_mode="r") and np.frombuffer give read-only arrays, another type to
    # Numba: the driver refused them ("mismatch of argument types: readonly array(float64, 1d,
    # C)", Numba's words) after the array call had started a fresh model
    import pickle

    import scipy.sparse as sp

    X = np.random.default_rng(1).normal(size=(40, 4))
    if layout == "sparse":
        X = sp.csr_matrix(np.where(X > 0.5, X, 0.0))
        frozen = X.copy()
        for part in (frozen.data, frozen.indices, frozen.indptr):
            part.setflags(write=False)
    else:
        frozen = _read_only(X)
    from olboost.rankers import _kernels as RK

    b, y, call = _read_only_case(name)
    a = b.clone()
    want = getattr(b, call)(X, y)
    kernels = [_driver.drive, *(v for v in vars(RK).values() if hasattr(v, "overloads"))]
    compiled = [len(kernel.overloads) for kernel in kernels]
    got = getattr(a, call)(frozen, _read_only(y))
    np.testing.assert_array_equal(got, want)
    assert pickle.dumps(a) == pickle.dumps(b)
    # the same machine code: nothing compiled again for read-only arguments
    assert [len(kernel.overloads) for kernel in kernels] == compiled


@pytest.mark.parametrize("name", ["AdaBoostOLM", "AdaOLMR-mixed", "TopkAdaptive", "LabelRanker"])
def test_a_model_loaded_by_joblib_with_memory_maps_goes_on_learning(tmp_path, name):
    # joblib.load(..., mmap_mode="r") gives read-only arrays: learn_one failed inside a kernel
    # ("setitem(readonly array(float64, ...))") after t_ had moved on
    joblib = pytest.importorskip("joblib")
    from olboost import MixedCommittee
    from olboost.checkpoint import dumps

    base = name.split("-")[0]
    model, y, call = _read_only_case(base)
    if name.endswith("mixed"):
        model = model.clone({"committee": MixedCommittee()})
    X = np.random.default_rng(3).normal(size=(40, 4))
    getattr(model, call)(X[:30], y[:30])
    joblib.dump(model, tmp_path / "m.joblib")
    mapped = joblib.load(tmp_path / "m.joblib", mmap_mode="r")
    kernels = [_driver.drive]
    compiled = [len(kernel.overloads) for kernel in kernels]
    np.testing.assert_array_equal(
        getattr(mapped, call)(X[30:], y[30:]), getattr(model, call)(X[30:], y[30:])
    )
    assert dumps(mapped) == dumps(model)
    assert [len(kernel.overloads) for kernel in kernels] == compiled


@pytest.mark.parametrize(("cls", "params"), list(_every_compiled_booster()))
def test_the_array_path_scores_as_the_one_row_path_does(cls, params):
    # learn_one and the array path learn the same bits (test above); they also report the same
    # scores before each row, but for the first one: score_one before the first example gives
    # zeros (uniform probabilities: no model yet), while the array path has started the model
    # for it and reports its untrained committee's scores (OnlineMBBM's votes [4, 0, 0, 0]).
    # The top-k boosters report the ranking they showed, which show_one shows.
    from olboost.boosters._topk_base import TopkBooster
    from olboost.checks import synthetic_multilabel

    X, Y = synthetic_multilabel(n=20, d=6, k=4, seed=5)
    ranking = hasattr(cls, "rank_one")
    params = {**params, ("labels" if ranking else "classes"): 4}
    arrays, rows = cls(**params), cls(**params)
    if issubclass(cls, TopkBooster):
        shown = []
        for x, y in zip(X, Y, strict=True):
            impression = rows.show_one(x)
            order = [int(lab) for lab in impression.ranking]
            shown.append([4 - order.index(j) for j in range(4)])
            rows.learn_one(x, impression.feedback([lab for lab in impression.labels if y[lab]]))
        np.testing.assert_array_equal(arrays.score_then_learn(X, Y), shown)
        return
    scored = []
    for x, y in zip(X, Y, strict=True):
        if ranking:
            scored.append(list(rows.score_one(x).values()))
            rows.learn_one(x, set(np.flatnonzero(y).tolist()))
        else:
            scored.append(rows.votes(x[None])[0])
            rows.learn_one(x, int(y.argmax()))
    expected = np.array(scored)
    if ranking:
        got = arrays.score_then_learn(X, Y)
    else:
        got = arrays.predict_then_learn(X, Y.argmax(1))
    np.testing.assert_array_equal(expected[0], 0.0)
    np.testing.assert_array_equal(got[1:], expected[1:])
    _assert_same(arrays, rows)


@numba.njit
def _raising_learn(x, weights, state, demand):
    if state[0] >= 2.0:
        raise ValueError("the toy committee refuses its third row")
    state[0] += 1.0
    return 0


def test_the_driver_finds_each_kernel_once_and_errors_still_propagate(monkeypatch):
    # At every call the driver's entry point asked each kernel for its compiled code, twice,
    # hashing the committee's state types in full (Numba's get_compile_result): about a
    # millisecond per return to Python to grow the trees. The kernels are resolved once per
    # argument layout; an error raised in a kernel still reaches the caller (the kernels are
    # called through their own code, not through a C callback that would print and return 0).
    # Nor does it look up the kernels' addresses in LLVM's execution engine at every call
    # (about 20 microseconds each, two per kernel).
    from numba.core.codegen import JITCodeLibrary
    from numba.core.dispatcher import Dispatcher

    asked = []
    original = Dispatcher.get_compile_result
    original_lookup = JITCodeLibrary.get_pointer_to_function

    def spying(self, sig):
        asked.append(self)
        return original(self, sig)

    def spying_lookup(self, name):
        asked.append(name)
        return original_lookup(self, name)

    monkeypatch.setattr(Dispatcher, "get_compile_result", spying)
    monkeypatch.setattr(JITCodeLibrary, "get_pointer_to_function", spying_lookup)
    data = load_uci("car").shuffled(1).head(300)
    committee = VFDTCommittee(nominal_attributes=data.nominal_cardinalities, capacity=1)
    calls = _spy_on_driver(monkeypatch)
    AdaBoostOLM(committee, learners=8, seed=1).learn(data.X, data.y)  # types and compiles
    asked.clear()
    calls.clear()
    model = AdaBoostOLM(committee, learners=8, seed=1)
    model.learn(data.X, data.y)
    assert len(calls) > 10  # the loop returned often for storage
    assert asked == []
    # the same bits as learning row by row
    slow = RowByRow(committee, learners=8, seed=1)
    slow.learn(data.X, data.y)
    _assert_same(model, slow)

    X, targets = np.ones((3, 2)), np.zeros(3, dtype=np.int64)
    scores, state, booster = np.zeros((1, 1)), np.zeros(1), np.zeros(1)
    H, weights, demand = np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2, dtype=np.int64)
    kernels = CompiledKernels(_toy_predict, _raising_learn, state)
    entry = _driver._entry(X, targets, scores, kernels, _toy_step, booster, H, weights, demand)
    bound = bind(kernels)
    with pytest.raises(ValueError, match="refuses its third row"):
        entry(
            X, targets, 0, 3, 0, scores, False, bound.predict, bound.learn, bound.state,
            _toy_step, booster, H, weights, demand,
        )  # fmt: skip
    assert state[0] == 2.0
