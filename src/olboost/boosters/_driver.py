"""The one compiled test-then-train loop: any booster over any compiled committee.

A booster on a compiled committee (:meth:`olboost.weak.base.Committee.compiled`) scores and learns
a whole stream in one call of :func:`drive`, with no Python between examples. The loop knows
neither the booster nor the committee: it receives their kernels as first-class functions,

* the committee's ``predict(x, committee, H) -> int`` and ``learn(x, weights, committee, demand)
  -> status``, and
* the booster's step ``step(H, target, t, booster, weights, scores, return_scores) -> int``, which
  writes the scores of round ``t`` into ``scores`` when ``return_scores`` (before learning), then
  learns the example whose target is ``target`` and writes the committee's ``(N, k)`` label
  weights into ``weights``,

and their state records. A first-class function argument is typed by its signature, not by its
identity, so Numba compiles (and caches on disk) one loop per combination of state types, and a new
booster or committee needs no loop of its own. The booster's one-example path calls the same step,
so the two paths give the same bits.

The loop stops early, returning the row ``i`` it stopped at, when the committee needs more storage
to learn row ``i``: the booster has then already learned from row ``i`` (its weights are in
``weights``), and :func:`run` lets the committee make room and learn them before resuming.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import types
from numba.core.registry import CPUDispatcher

from olboost._numba_cache import compile_elsewhere, compile_for_arguments

__all__ = ["drive", "run"]


@numba.njit(cache=True, nogil=True)
def drive(
    X, targets, start, stop, t, scores, return_scores,
    predict, learn, committee, step, booster, H, weights, demand,
):  # fmt: skip
    """Score then learn rows ``start .. stop - 1`` of ``X`` (``t`` rows learned before
    ``start``); return ``stop`` or the row whose learning needs more storage."""
    for i in range(start, stop):
        x = X[i]
        predict(x, committee, H)
        t += 1
        step(H, targets[i], t, booster, weights, scores[i if return_scores else 0], return_scores)
        if learn(x, weights, committee, demand) != 0:
            return i
    return stop


_compiled: dict[tuple, Any] = {}
_by_layout: dict[tuple, Any] = {}


def _layout(value: Any) -> Any:
    """A key that determines ``numba.typeof(value)``, taken without building Numba's types:
    an array's dtype, dimensions, contiguity, writability and alignment (what its
    ``types.Array`` holds), a tuple's class and its items' keys; any other value's Numba type.
    Numba types a tuple in Python, item by item, and hashes its nested types in full at every
    lookup: about a millisecond for a committee's state, at every call of :func:`run` (a
    top-k job of Table 5 calls it about a hundred times)."""
    if type(value) is np.ndarray:
        flags = value.flags
        return (value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous,
                flags.writeable, flags.aligned)  # fmt: skip
    if isinstance(value, tuple):
        return (type(value), *[_layout(item) for item in value])
    return numba.typeof(value)


def _entry(X, targets, scores, kernels, step_kernel, booster_state, H, weights, demand) -> Any:
    """The compiled :func:`drive` for these argument types (compiled or loaded once per process),
    the committee's and booster's kernels compiled first for their arguments alone
    (:func:`olboost._numba_cache.compile_for_arguments`), so that each is compiled once for both
    the driver and the one-example path; on a cold start the committee's learn in another
    process (:func:`olboost._numba_cache.compile_elsewhere`). Found again by the arguments'
    :func:`_layout` and the kernels."""
    values = (X, targets, scores, kernels.state, booster_state, H, weights, demand)
    key = (kernels.predict, kernels.learn, step_kernel, *[_layout(v) for v in values])
    entry = _by_layout.get(key)
    if entry is None:
        entry = _by_layout[key] = _typed_entry(
            X, targets, scores, kernels, step_kernel, booster_state, H, weights, demand
        )
    return entry


class _Resolved(CPUDispatcher):
    """A kernel as :func:`drive`'s entry point takes it, its compiled code found once.

    The entry point receives each kernel as a first-class function and asks it for the
    addresses of its compiled code for the argument's signature, twice per kernel and call
    (Numba's ``get_compile_result``), which hashes the signature's types in full: those of a
    committee's state are nested records of dozens of arrays, and a 1,728-row Adaboost.OLM
    run on car, whose driver returns to Python 18 times for the trees' storage, spent about a
    millisecond per return in it (cProfile), a fifth of the run. This stand-in answers for the
    one signature it was made for by identity (Numba's types are unique objects) and asks the
    kernel for any other. It is only ever handed to the entry point, never called: it does not
    run ``Dispatcher.__init__``."""

    def __new__(cls, dispatcher: Any, signature: Any) -> _Resolved:
        return CPUDispatcher.__new__(cls)

    def __init__(self, dispatcher: Any, signature: Any) -> None:
        self.dispatcher = dispatcher
        self._args = tuple(signature.args)
        self._result = dispatcher.get_compile_result(signature)

    def get_compile_result(self, sig: Any) -> Any:
        args = sig.args
        if len(args) == len(self._args) and all(
            a is b for a, b in zip(args, self._args, strict=True)
        ):
            return self._result
        return self.dispatcher.get_compile_result(sig)


class _Entry:
    """:func:`drive`'s compiled entry point, called with the kernels it was typed for replaced
    by their :class:`_Resolved` stand-ins (any other kernel passes as given)."""

    __slots__ = ("call", "resolved")

    def __init__(self, call: Any, resolved: list[_Resolved]) -> None:
        self.call, self.resolved = call, resolved

    def _stand_in(self, kernel: Any) -> Any:
        for r in self.resolved:
            if r.dispatcher is kernel:
                return r
        return kernel

    def __call__(
        self, X, targets, start, stop, t, scores, return_scores,
        predict, learn, committee, step, booster, H, weights, demand,
    ):  # fmt: skip
        predict, learn, step = (self._stand_in(k) for k in (predict, learn, step))
        return self.call(
            X, targets, start, stop, t, scores, return_scores,
            predict, learn, committee, step, booster, H, weights, demand,
        )  # fmt: skip


def _typed_entry(X, targets, scores, kernels, step_kernel, booster_state, H, weights, demand):
    """:func:`_entry` from the arguments' Numba types."""
    committee_state = kernels.state
    t_x = numba.typeof(X)
    t_row = t_x.dtype if t_x.ndim == 1 else types.Array(t_x.dtype, 1, "C")
    t_targets = numba.typeof(targets)
    t_target = t_targets.dtype if t_targets.ndim == 1 else types.Array(t_targets.dtype, 1, "C")
    t_scores = numba.typeof(scores)
    t_score_row = types.Array(t_scores.dtype, 1, "C")
    t_committee = numba.typeof(committee_state)
    t_booster = numba.typeof(booster_state)
    t_H, t_w, t_demand = numba.typeof(H), numba.typeof(weights), numba.typeof(demand)
    predict = types.FunctionType(types.int64(t_row, t_committee, t_H))
    learn = types.FunctionType(types.int64(t_row, t_w, t_committee, t_demand))
    step = types.FunctionType(
        types.int64(t_H, t_target, types.int64, t_booster, t_w, t_score_row, types.boolean)
    )
    sig = (
        t_x, t_targets, types.int64, types.int64, types.int64, t_scores, types.boolean,
        predict, learn, t_committee, step, t_booster, t_H, t_w, t_demand,
    )  # fmt: skip
    entry = _compiled.get(sig)
    if entry is None:
        # On a cold start the committee's learn (the largest kernel) compiles in a second
        # process while this one compiles predict and the booster's step.
        learning = compile_elsewhere(kernels.learn, learn.signature)
        try:
            for kernel, function_type in ((kernels.predict, predict), (step_kernel, step)):
                compile_for_arguments(kernel, function_type.signature)
        except BaseException:
            learning.cancel()
            raise
        learning.join()
        drive.compile(sig)
        entry = _compiled[sig] = drive.overloads[sig].entry_point
    kernels_typed = ((kernels.predict, predict), (kernels.learn, learn), (step_kernel, step))
    return _Entry(entry, [_Resolved(k, f.signature) for k, f in kernels_typed])


def run(
    X: np.ndarray,
    targets: np.ndarray,
    t: int,
    scores: np.ndarray,
    return_scores: bool,
    committee: Any,
    step: Any,
    booster_state: Any,
) -> None:
    """Score then learn every row of the C-contiguous float64 ``X`` with ``committee`` (a started
    compiled committee) and the booster ``step`` over ``booster_state``, ``t`` rows having been
    learned before. With ``return_scores`` the scores made before each row is learned go to
    ``scores`` (``(n, n_outputs)``; otherwise any ``(1, n_outputs)`` scratch).

    The rows must have passed the committee's own checks (:meth:`Committee.check_rows`)."""
    n = X.shape[0]
    kernels = committee.compiled()
    shape = (committee.n_learners_, committee.n_labels_)
    H, weights = np.empty(shape), np.empty(shape)
    demand = np.zeros(2, dtype=np.int64)
    entry = _entry(X, targets, scores, kernels, step, booster_state, H, weights, demand)
    i = 0
    with committee.running():
        while i < n:
            stop = entry(
                X, targets, i, n, t + i, scores, return_scores,
                kernels.predict, kernels.learn, kernels.state, step, booster_state,
                H, weights, demand,
            )  # fmt: skip
            if stop == n:
                return
            # the booster learned row `stop`; the committee makes room, then learns it too
            committee.learn_compiled(X[stop], weights)
            kernels = committee.compiled()
            i = stop + 1
