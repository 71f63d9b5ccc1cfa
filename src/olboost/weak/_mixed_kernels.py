"""Numba kernels of :class:`olboost.weak.mixed.MixedCommittee`: two compiled committees as one.

A :data:`Pair` holds two committees behind handles (:func:`olboost.weak._handles.bind`: two
first-class functions of the opaque handle type, and the handle), and which rows of the pair's
``(N, k)`` arrays are each committee's learners. Its Numba type is the same for every pair, so
the two kernels here are compiled once for every mix. :func:`predict` asks both for their
predictions and scatters them into ``H``; :func:`learn` checks every weight, gathers each
committee's rows and trains them in turn. More than two committees nest: the second member of a
pair is itself a pair.

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

import numba
import numpy as np

from olboost.weak._handles import DEMAND, MATRIX, ROW, FirstClass, first_class

__all__ = [
    "DEMAND",
    "FIRST",
    "LEARN_BAD_WEIGHTS",
    "MATRIX",
    "ROW",
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
        "predict_a",  # first member's compiled predict and learn, and its handle
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
