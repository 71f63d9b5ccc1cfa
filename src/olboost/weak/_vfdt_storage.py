"""Storage kernels of the compiled Hoeffding trees: the checks of nominal codes, how much room one
example may need, and the lending of leaf slots and observer blocks to the trees of one call."""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.weak._vfdt_layout import MIN_ROOM


@numba.njit(cache=True)
def nominal_codes_valid(x, nominal_columns, nominal_cardinality, allow_missing):
    """Whether every nominal column of ``x`` holds an integer code in ``[0, cardinality)``, or
    NaN (missing) if ``allow_missing``."""
    for q in range(nominal_columns.shape[0]):
        v = x[nominal_columns[q]]
        if v != v and allow_missing:
            continue
        if not (v >= 0.0 and v < nominal_cardinality[q] and v == math.floor(v)):
            return False
    return True


@numba.njit(cache=True)
def first_bad_row(X, nominal_columns, nominal_cardinality, allow_missing):
    """Index of the first row of ``X`` failing :func:`nominal_codes_valid`, ``X.shape[0]`` if
    none."""
    for i in range(X.shape[0]):
        if not nominal_codes_valid(X[i], nominal_columns, nominal_cardinality, allow_missing):
            return i
    return X.shape[0]


@numba.njit(cache=True)
def learn_demand(weights, multiplier, n_nodes, max_branches, counts, weighed):
    """Validate ``weights`` and bound the node storage one ``learn`` call may need.

    Returns ``(ok, nodes)``: ``ok`` is False, and nothing is written, if a weight is negative or
    not finite, or overflows once multiplied by its tree's ``multiplier`` (the trees would then
    learn an infinite weight and predict NaN); ``nodes`` is the largest node count a tree may
    reach, each positive weight being one learned example that can split one leaf into
    ``max_branches``. ``counts[i]`` receives the number of examples tree ``i`` will learn, and
    ``weighed[c]`` (False on entry) whether some tree weighs label ``c``.
    """
    n, k = weights.shape
    # one pass, with no early exit, so that it compiles to vector code (thousands of labels)
    positive = np.empty(n, dtype=np.int64)
    for i in range(n):
        m = multiplier[i]
        bad = False
        count = 0
        for c in range(k):
            w = weights[i, c]
            # x - x is 0 for a finite x and NaN for an infinite or NaN one (w infinite or NaN,
            # or w m overflowing): two tests where three took twice the time at k = 5,000
            x = w * m
            bad |= (w < 0.0) | ((x - x) != 0.0)  # no branch: | not or
            count += w > 0.0
            weighed[c] |= w > 0.0
        if bad:
            return False, 0
        positive[i] = count
    nodes = 0
    for i in range(n):
        nodes = max(nodes, n_nodes[i] + positive[i] * max_branches)
        counts[i] = positive[i]
    return True, nodes


@numba.njit(cache=True, inline="always")
def entries_needed(widest, max_branches):
    """The free class entries a tree's rows must have before it learns one label, its widest
    leaf holding ``widest`` classes: at most one leaf learns the label and meets at most one new
    class (``widest + 1``), and it may move to twice its room (``_vfdt_leaves._move_leaf``), then
    split into ``max_branches`` leaves of at most as many classes; or the label makes a new
    branch, a leaf of none. Each leaf has at least ``MIN_ROOM`` entries."""
    return (max_branches + 3) * (widest + 1 + MIN_ROOM)


LEND_OK = 0
LEND_NO_SPARE = 1  # grow the pool
LEND_STACK_FULL = 2  # widen the per-tree stacks


@numba.njit(cache=True)
def lend(counts, takes, gives, stacks, n_free, spare, n_spare):
    """Before a ``learn`` call, top up each tree's own stack of items (leaf slots or observer
    blocks) from the shared ``spare`` stack to ``counts[i] * takes``, with room for the
    ``counts[i] * gives`` a tree may hand back during the call. Per-tree stacks let the trees
    learn in parallel; :func:`give_back` returns the excess afterwards. The room is checked
    for what a stack holds after the top-up, whatever it held before (between calls a tree
    holds no more than one example's share: the end of a call, or an abandoned example, gives
    back the rest).

    Returns a ``LEND_*`` code; on failure the caller grows storage and calls again (items already
    lent stay valid)."""
    for i in range(counts.shape[0]):
        needed = counts[i] * takes
        if max(n_free[i], needed) + counts[i] * gives > stacks.shape[1]:
            return LEND_STACK_FULL
        while n_free[i] < needed:
            if n_spare[0] == 0:
                return LEND_NO_SPARE
            n_spare[0] -= 1
            stacks[i, n_free[i]] = spare[n_spare[0]]
            n_free[i] += 1
    return LEND_OK


@numba.njit(cache=True)
def give_back(stacks, n_free, spare, n_spare, keep):
    """Return every tree's free items beyond ``keep`` to the shared ``spare`` stack."""
    for i in range(n_free.shape[0]):
        while n_free[i] > keep:
            n_free[i] -= 1
            spare[n_spare[0]] = stacks[i, n_free[i]]
            n_spare[0] += 1
