"""Numba kernels of :class:`olboost.weak.mixed.MixedCommittee`: two compiled committees as one.

A :data:`Pair` holds two committees' compiled kernels (first-class functions typed by their
signatures: :class:`FirstClass`) and states, and which rows of the pair's ``(N, k)`` arrays are
each committee's learners. :func:`predict` asks both for their predictions and scatters them into
``H``; :func:`learn` checks every weight, gathers each committee's rows and trains them in turn.
More than two committees nest: the second member of a pair is itself a pair.

Storage requests. A member's ``learn`` may return a non-zero status asking for storage
(:meth:`olboost.weak.base.Committee.make_room`); the same call, repeated, learns what it did not
(:class:`olboost.weak.base.CompiledKernels`). When the second member asks,
the first has already learned the example; ``progress[0]`` records that, so the repeated call
(after ``make_room``) trains the second member only, and every learner learns the example once.
``progress[1]`` says who returned the status (:data:`SELF`, :data:`FIRST`, :data:`SECOND`), for
``make_room`` to ask the right committee.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numba
import numpy as np
from numba import types

from olboost._numba_cache import compile_for_arguments

__all__ = [
    "FIRST",
    "LEARN_BAD_WEIGHTS",
    "FirstClass",
    "Pair",
    "SECOND",
    "SELF",
    "first_class",
    "learn",
    "predict",
]

#: ``progress[1]``: the status came from the pair itself (bad weights), its first member, or its
#: second member.
SELF, FIRST, SECOND = -1, 0, 1
#: Status of the pair's own weight check (nothing was changed).
LEARN_BAD_WEIGHTS = 1

Pair = namedtuple(
    "Pair",
    [
        "predict_a",  # first member's compiled predict and learn, and its state
        "learn_a",
        "state_a",
        "predict_b",  # second member's
        "learn_b",
        "state_b",
        "rows_a",  # (n_a,) int64 rows of H and weights that are the first member's learners
        "rows_b",  # (n_b,) int64 the second member's
        "H_a",  # (n_a, k) buffers of one call
        "H_b",
        "W_a",
        "W_b",
        "progress",  # (2,) int64: members done on the current example; who returned a status
    ],
)

#: Numba types of the arguments every compiled committee kernel takes.
ROW = types.Array(types.float64, 1, "C")
MATRIX = types.Array(types.float64, 2, "C")
DEMAND = types.Array(types.int64, 1, "C")


class FirstClass(types.WrapperAddressProtocol):
    """A committee kernel as a first-class function of one signature (Numba's wrapper address
    protocol): a :data:`Pair` holding it is typed by the signature, not by the kernel's identity,
    so that what is compiled for the pair (its kernels, the boosters' driver) is cached on disk
    and found again by the next process; its address is looked up once."""

    def __init__(self, kernel: Any, signature: Any):
        self.kernel = kernel
        self._signature = signature
        self._address: int | None = None

    def signature(self) -> Any:
        return self._signature

    def __wrapper_address__(self) -> int:
        if self._address is None:
            # also launches Numba's threading layer, which the lookup below needs
            compile_for_arguments(self.kernel, self._signature)
            result = self.kernel.get_compile_result(self._signature)
            name = result.fndesc.llvm_cfunc_wrapper_name
            self._address = result.library.get_pointer_to_function(name)
        return self._address


def first_class(predict: Any, learn: Any, state_type: Any) -> tuple[FirstClass, FirstClass]:
    """A committee's ``predict`` and ``learn`` as first-class functions over a state of Numba
    type ``state_type``."""
    return (
        FirstClass(predict, types.int64(ROW, state_type, MATRIX)),
        FirstClass(learn, types.int64(ROW, MATRIX, state_type, DEMAND)),
    )


@numba.njit(cache=True)
def predict(x: np.ndarray, st: Pair, H: np.ndarray) -> int:
    """Both members' predictions, each learner's row at its place in ``H``."""
    st.predict_a(x, st.state_a, st.H_a)
    st.predict_b(x, st.state_b, st.H_b)
    k = H.shape[1]
    for j in range(st.rows_a.shape[0]):
        r = st.rows_a[j]
        for c in range(k):
            H[r, c] = st.H_a[j, c]
    for j in range(st.rows_b.shape[0]):
        r = st.rows_b[j]
        for c in range(k):
            H[r, c] = st.H_b[j, c]
    return 0


@numba.njit(cache=True)
def learn(x: np.ndarray, weights: np.ndarray, st: Pair, demand: np.ndarray) -> int:
    """Train the first member on its rows of ``weights``, then the second (the module docstring
    says how a storage request is resumed). Returns :data:`LEARN_BAD_WEIGHTS`, having changed
    nothing, when a weight is negative or not finite."""
    n, k = weights.shape
    progress = st.progress
    if progress[0] == 0:
        for i in range(n):
            for c in range(k):
                w = weights[i, c]
                if not (w >= 0.0 and w < np.inf):
                    progress[1] = SELF
                    return LEARN_BAD_WEIGHTS
    if progress[0] == 0:
        for j in range(st.rows_a.shape[0]):
            r = st.rows_a[j]
            for c in range(k):
                st.W_a[j, c] = weights[r, c]
        status = st.learn_a(x, st.W_a, st.state_a, demand)
        if status != 0:
            progress[1] = FIRST
            return status
        progress[0] = 1
    for j in range(st.rows_b.shape[0]):
        r = st.rows_b[j]
        for c in range(k):
            st.W_b[j, c] = weights[r, c]
    status = st.learn_b(x, st.W_b, st.state_b, demand)
    if status != 0:
        progress[1] = SECOND
        return status
    progress[0] = 0
    return 0
