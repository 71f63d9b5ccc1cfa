"""Compiled committees behind opaque handles (``olboost.weak._handles``): what the compiled
driver and a mix hold of a committee."""

from __future__ import annotations

import gc
import sys

import numba
import numpy as np
import pytest

from olboost.weak import _handles as H_
from olboost.weak.base import CompiledKernels


@numba.njit
def _toy_predict(x, state, H):
    H[:, :] = state[0][0] + x[0]
    return 0


@numba.njit
def _toy_learn(x, weights, state, demand):
    values, count = state
    values[0] += weights.sum()
    count[0] += 1
    if count[0] > 2:
        raise ValueError("the toy committee refuses its third row")
    return 0


def _toy_state():
    """A toy committee's state: its values and its count of learned rows. A plain tuple: the
    handles' kernels are cached with olboost's (tests share one Numba cache), and a record type
    of this module in their index would make it unreadable to a process without the tests."""
    return (np.zeros(1), np.zeros(1, dtype=np.int64))


def test_the_trampolines_call_the_committees_kernels_on_its_state():
    state = _toy_state()
    bound = H_.bind(CompiledKernels(_toy_predict, _toy_learn, state))
    assert numba.typeof(bound.state) == H_.OPAQUE
    H = np.empty((2, 3))
    weights = np.ones((2, 3))
    demand = np.zeros(2, dtype=np.int64)
    x = np.array([0.5])
    learn, predict = _entry(bound.learn), _entry(bound.predict)
    assert learn(x, weights, bound.state, demand) == 0
    assert state[0][0] == 6.0 and state[1][0] == 1  # the state itself, not a copy
    assert predict(x, bound.state, H) == 0
    np.testing.assert_array_equal(H, 6.5)
    learn(x, weights, bound.state, demand)
    # an exception of the committee's kernel reaches the caller through the trampoline
    with pytest.raises(ValueError, match="refuses its third row"):
        learn(x, weights, bound.state, demand)


def _refs(a):
    """``a``'s reference count (measured on a line of its own: within a comparison, CPython
    3.11 counted one more)."""
    return sys.getrefcount(a)


def _entry(function):
    """The entry point of a bound trampoline (compiled once it is asked for its address)."""
    function.__wrapper_address__()
    return function.kernel.overloads[tuple(function._compiled_for.args)].entry_point


def test_a_handle_holds_its_states_arrays_until_it_is_collected():
    # the buffer holds references to the arrays (a committee's old arrays, replaced when it
    # makes room, would otherwise be freed under a live handle), and drops them with the handle
    # (else every make_room of a long stream would leak the arrays it replaced)
    state = _toy_state()
    kernels = CompiledKernels(_toy_predict, _toy_learn, state)
    H_.bind(kernels)  # compiled: the counts below are of the handle alone
    gc.collect()
    before = _refs(state[0])
    bound = H_.bind(kernels)
    held = _refs(state[0])
    del bound
    gc.collect()
    after = _refs(state[0])
    assert (held, after) == (before + 1, before)
    values = state[0]
    bound = H_.bind(CompiledKernels(_toy_predict, _toy_learn, (values, state[1])))
    del state, kernels
    gc.collect()
    _entry(bound.learn)(np.zeros(1), np.ones((1, 1)), bound.state, np.zeros(2, dtype=np.int64))
    assert values[0] == 1.0


def test_one_driver_and_one_mix_for_every_committee():
    # the driver holds the committee behind the opaque handle, a mix holds its parts so: one
    # loop per booster whatever the committee, one pair of mix kernels for every mix (each was
    # compiled per committee type, the largest compiles of the suite)
    from olboost import AdaOLMR, LinearCommittee, MixedCommittee, VFDTCommittee
    from olboost.boosters import _driver
    from olboost.checks import synthetic_multilabel
    from olboost.weak import _mixed_kernels as MK

    X, Y = synthetic_multilabel(n=30, d=5, k=4, seed=2)
    committees = [
        VFDTCommittee(),
        LinearCommittee(),
        MixedCommittee(),
        MixedCommittee([LinearCommittee(update="II"), VFDTCommittee(capacity=1)]),
        MixedCommittee([VFDTCommittee(), MixedCommittee([LinearCommittee(), VFDTCommittee()])]),
    ]
    AdaOLMR(MixedCommittee(), learners=6, seed=1, labels=4).score_then_learn(X, Y)

    def compiled():
        return [len(kernel.overloads) for kernel in (_driver.drive, MK.predict, MK.learn)]

    before = compiled()
    for committee in committees:
        AdaOLMR(committee, learners=6, seed=1, labels=4).score_then_learn(X, Y)
    assert compiled() == before


def test_a_state_record_of_a_users_module_stays_out_of_the_shared_cache():
    # Numba keeps one cache index per function: an entry naming this module's class would make
    # the handles' indexes unreadable to a process that cannot import it (which replaces them,
    # olboost's entries with them, and warns); such a state is compiled for without the cache
    from collections import namedtuple

    Toy = namedtuple("Toy", ["values", "count"])
    state = Toy(*_toy_state())
    bound = H_.bind(CompiledKernels(_toy_predict, _toy_learn, state))
    _entry(bound.learn)(np.zeros(1), np.ones((1, 2)), bound.state, np.zeros(2, dtype=np.int64))
    assert state.values[0] == 2.0
    cached = (H_._pack, H_._release, H_.predict_via, H_.learn_via)
    assert not [sig for kernel in cached for sig in kernel.overloads if "Toy" in str(sig)], (
        "a record type of the tests' module reached a cached kernel"
    )
    assert H_._cacheable(numba.typeof(_toy_state()))
    assert not H_._cacheable(numba.typeof(state))


def test_a_mix_builds_its_pairs_again_only_when_a_part_changed():
    # a one-example call built the pairs (and four handles) anew each time, a third of its time
    from olboost import AdaOLMR, LinearCommittee, MixedCommittee, VFDTCommittee
    from olboost.checks import synthetic_multilabel
    from olboost.weak.mixed import _identity

    X, Y = synthetic_multilabel(n=300, d=5, k=4, seed=4)
    mix = MixedCommittee([VFDTCommittee(capacity=1, grace_period=(5.0, 10.0)), LinearCommittee()])
    model = AdaOLMR(mix, learners=4, seed=1, labels=4)
    model.learn_one(X[0], {0})
    trees = model.committee_.parts_[0]
    first = model.committee_.compiled()
    assert model.committee_.compiled() is first
    arrays = _identity(trees.compiled().state)
    grown = None
    for i in range(1, len(X)):
        model.learn_one(X[i], set(np.flatnonzero(Y[i]).tolist()))
        if _identity(trees.compiled().state) != arrays:
            grown = i
            break
    assert grown is not None, "the trees never grew their storage"
    assert model.committee_.compiled() is not first
