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

and their states: the booster's record, and the committee behind an opaque handle
(:func:`olboost.weak._handles.bind`, whose trampolines call the committee's kernels). A
first-class function argument is typed by its signature, not by its identity, and the handle's
type is the same for every committee, so Numba compiles (and caches on disk) one loop per
booster state type, and a new booster or committee needs no loop of its own. The booster's
one-example path calls the same step, so the two paths give the same bits.

The loop stops early, returning the row ``i`` it stopped at, when the committee needs more storage
to learn row ``i``: the booster has then already learned from row ``i`` (its weights are in
``weights``), and :func:`run` lets the committee make room and learn them before resuming.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import types

from olboost._numba_cache import compile_elsewhere, compile_for_arguments, layout_key
from olboost.weak import _handles as H_

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


def _entry(X, targets, scores, kernels, step_kernel, booster_state, H, weights, demand) -> Any:
    """The compiled :func:`drive` for these arguments (compiled or loaded once per process),
    called with the committee behind a handle (:func:`olboost.weak._handles.bind`): one loop
    per booster and argument types, whatever the committee. The committee's and booster's
    kernels are compiled first for their arguments alone (:func:`olboost._numba_cache.
    compile_for_arguments`), so that each is compiled once for both the driver and the
    one-example path; on a cold start the committee's learn in another process
    (:func:`olboost._numba_cache.compile_elsewhere`). Found again by the arguments'
    :func:`olboost._numba_cache.layout_key`, the step and the committee's binding (its kernels
    and the layout of its state)."""
    values = (X, targets, scores, booster_state, H, weights, demand)
    key = (H_.binding(kernels), step_kernel, *[layout_key(v) for v in values])
    entry = _by_layout.get(key)
    if entry is None:
        entry = _by_layout[key] = _typed_entry(
            X, targets, scores, kernels, step_kernel, booster_state, H, weights, demand
        )
    return entry


def _find_once(kernel: Any) -> None:
    """Make ``kernel`` (a Numba dispatcher) answer ``get_compile_result`` from a cache.

    :func:`drive`'s entry point receives the booster's step as a first-class function and asks
    it for its compiled code for the argument's signature, twice per call; Numba's lookup
    hashes the signature's types in full, and those of a state are nested records of arrays:
    a 1,728-row Adaboost.OLM run on car, whose driver returns to Python 18 times for the trees'
    storage, spent about a millisecond per return in it (cProfile) when the committee's kernels
    were handed over so too. The cache, an attribute of this dispatcher only, finds a signature
    by the identities of its types (Numba's types are unique objects, and the cache holds those
    it was asked for, so that no other object can take their ids) and asks Numba for any other,
    as before: the same compile results."""
    if "get_compile_result" in kernel.__dict__:
        return
    found: dict[tuple[int, ...], tuple[tuple, Any]] = {}

    def get_compile_result(sig: Any) -> Any:
        types_ = (*sig.args, sig.return_type)
        key = tuple(map(id, types_))
        if key not in found:
            result = type(kernel).get_compile_result(kernel, sig)
            _addresses_once(result.library)
            found[key] = (types_, result)
        return found[key][1]

    kernel.get_compile_result = get_compile_result


def _addresses_once(library: Any) -> None:
    """Make a Numba code library answer ``get_pointer_to_function`` from a cache: the entry
    point asks it for each kernel's two addresses at every call of :func:`drive`, and each
    answer was a symbol lookup of LLVM's execution engine (about 20 microseconds; 108 of them
    in a 1,728-row Adaboost.OLM run on car, whose driver returns 18 times). A finalised
    library's code does not move, so its addresses hold for the process."""
    if "get_pointer_to_function" in library.__dict__:
        return
    addresses: dict[str, int] = {}
    lookup = library.get_pointer_to_function

    def get_pointer_to_function(name: str) -> int:
        if name not in addresses:
            addresses[name] = lookup(name)
        return addresses[name]

    library.get_pointer_to_function = get_pointer_to_function


def _typed_entry(X, targets, scores, kernels, step_kernel, booster_state, H, weights, demand):
    """:func:`_entry` from the arguments' Numba types."""
    t_x = numba.typeof(X)
    t_row = t_x.dtype if t_x.ndim == 1 else types.Array(t_x.dtype, 1, "C")
    t_targets = numba.typeof(targets)
    t_target = t_targets.dtype if t_targets.ndim == 1 else types.Array(t_targets.dtype, 1, "C")
    t_scores = numba.typeof(scores)
    t_score_row = types.Array(t_scores.dtype, 1, "C")
    t_booster = numba.typeof(booster_state)
    t_H, t_w, t_demand = numba.typeof(H), numba.typeof(weights), numba.typeof(demand)
    if (t_row, t_w, t_H, t_demand) != (H_.ROW, H_.MATRIX, H_.MATRIX, H_.DEMAND):
        raise TypeError(f"the compiled driver takes float64 rows, got {t_x}")
    step = types.FunctionType(
        types.int64(t_H, t_target, types.int64, t_booster, t_w, t_score_row, types.boolean)
    )
    # the committee's binding (found by _entry already): its first-class functions carry the
    # kernels' signatures over the state's type, which it took once
    binding = H_.binding(kernels)
    predict, learn = (function.signature() for function in binding.functions)
    # On a cold start the committee's learn (the largest kernel) compiles in a second process
    # while this one compiles predict and the booster's step.
    learning = compile_elsewhere(kernels.learn, learn)
    try:
        compile_for_arguments(kernels.predict, predict)
        compile_for_arguments(step_kernel, step.signature)
    except BaseException:
        learning.cancel()
        raise
    learning.join()
    sig = (
        t_x, t_targets, types.int64, types.int64, types.int64, t_scores, types.boolean,
        types.FunctionType(H_.PREDICT), types.FunctionType(H_.LEARN), H_.OPAQUE, step,
        t_booster, t_H, t_w, t_demand,
    )  # fmt: skip
    entry = _compiled.get(sig)
    if entry is None:
        drive.compile(sig)
        entry = _compiled[sig] = drive.overloads[sig].entry_point
    # the binding's trampolines, compiled (or loaded) now, not in run's first call (which may
    # hold a Ctrl-C)
    binding.predict.__wrapper_address__()
    binding.learn.__wrapper_address__()
    _find_once(step_kernel)
    return entry


def _scratch(committee: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The weak predictions, the label weights and the storage demand :func:`drive` writes."""
    shape = (committee.n_learners_, committee.n_labels_)
    return np.empty(shape), np.empty(shape), np.zeros(2, dtype=np.int64)


def prepare(
    X: np.ndarray,
    targets: np.ndarray,
    scores: np.ndarray,
    committee: Any,
    step: Any,
    booster_state: Any,
) -> tuple:
    """What :func:`run` takes as ``prepared`` for these arguments: the compiled :func:`drive`
    (compiled or loaded from Numba's cache on first use) and its scratch. Changes no model. A
    caller that holds a Ctrl-C during :func:`run` (see :func:`olboost._interrupt.held_interrupt`)
    prepares first, outside the hold, so that a Ctrl-C during a first run's compiling, which
    may last a minute, stops it at once."""
    kernels = committee.compiled()
    H, weights, demand = _scratch(committee)
    entry = _entry(X, targets, scores, kernels, step, booster_state, H, weights, demand)
    return H_.binding(kernels), H, weights, demand, entry


def run(
    X: np.ndarray,
    targets: np.ndarray,
    t: int,
    scores: np.ndarray,
    return_scores: bool,
    committee: Any,
    step: Any,
    booster_state: Any,
    prepared: tuple | None = None,
) -> None:
    """Score then learn every row of the C-contiguous float64 ``X`` with ``committee`` (a started
    compiled committee) and the booster ``step`` over ``booster_state``, ``t`` rows having been
    learned before. With ``return_scores`` the scores made before each row is learned go to
    ``scores`` (``(n, n_outputs)``; otherwise any ``(1, n_outputs)`` scratch). ``prepared``:
    :func:`prepare`'s answer for the same arguments, if taken.

    The rows must have passed the committee's own checks (:meth:`Committee.check_rows`)."""
    n = X.shape[0]
    if prepared is None:
        prepared = prepare(X, targets, scores, committee, step, booster_state)
    binding, H, weights, demand, entry = prepared
    kernels = binding.bind(committee.compiled().state)
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
            kernels = binding.bind(committee.compiled().state)
            i = stop + 1
