"""Prediction kernels of the compiled Hoeffding trees: the descent to a leaf and the leaf's
distribution (majority class, naive Bayes, adaptive naive Bayes, the Weka port's)."""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.weak._vfdt_layout import (
    _HALF_LOG_TAU,
    C_MC,
    C_NB,
    EMPTY,
    G_MEAN,
    G_SSD,
    G_WEIGHT,
    LEAF,
    MC_WEKA,
    MISSING,
    NB,
    NBA,
    NOMINAL_EQ,
    NOMINAL_MULTIWAY,
    NUMERIC_LE,
)

# The helpers of the descent and the leaf total take scalars or the arrays they read, not the
# state's records: an inlined helper binds each array it is given to a new name, counting a
# reference to it in and out (an atomic operation each), and a record holds up to 16 arrays. On
# the learning path that counting took most of the time (see _vfdt_kernels._learn_trees).


@numba.njit(cache=True, inline="always")
def _listed_total(i, start, n, class_weight, listed, present):
    """The total class weight of a leaf of tree ``i`` whose ``n`` entries start at ``start``
    (summed in class order, as ``np.sum`` of its dense row) and whether it lists any class."""
    total = 0.0
    any_listed = False
    for q in range(n):
        e = start + present[i, start + q]
        total += class_weight[i, e]
        any_listed = any_listed or listed[i, e]
    return total, any_listed


@numba.njit(cache=True)
def _naive_bayes(i, slot, x, learners, leaves, out):
    """River's ``do_naive_bayes_prediction`` at a leaf: write its posterior into ``out``.

    Each listed class ``c`` of weight ``w[c] > 0`` votes ``log(w[c] / W)`` plus, per attribute in
    subset order, the log-likelihood of ``x``: the Gaussian log-density for a numeric attribute
    (skipped, as River does for ``-inf``, while the class has at most one unit of weight or zero
    variance, or has not been seen by the observers), ``log(weight of the category / weight of the
    class)`` for a nominal one (skipped when the category was not seen with the class); a missing
    value (NaN) adds nothing, as River skips the attributes absent from ``x``. A listed
    class of zero weight votes ``0.0`` (River's ``votes[c] = 0.0``). The votes go through
    log-sum-exp; unlisted classes get 0. ``out`` is indexed by class; only the leaf's classes
    are written (the others' probability is 0: the caller zeroes them). Returns ``False``,
    leaving ``out`` undefined, when River returns no votes (no listed class or zero total
    weight)."""
    features, n_categories = learners.features, learners.n_categories
    nominal_offset = learners.nominal_offset
    class_weight, blocks, label = leaves.class_weight, leaves.blocks, leaves.label
    gauss, nominal = leaves.gauss, leaves.nominal
    start, n = leaves.start[slot], leaves.n_present[slot]
    listed = leaves.listed[i, start : start + leaves.room[slot]]
    stats = class_weight[i, start : start + leaves.room[slot]]
    present = leaves.present[i, start : start + n]
    total, any_listed = _listed_total(i, start, n, class_weight, leaves.listed, leaves.present)
    if not any_listed or total == 0.0:
        return False
    best = -np.inf
    for p in present:
        if not listed[p]:
            continue
        c = label[i, start + p]
        if not stats[p] > 0.0:
            out[c] = 0.0
            best = max(best, 0.0)
            continue
        vote = math.log(stats[p] / total)
        block = blocks[i, start + p]
        if block >= 0:
            for j in range(features.shape[1]):
                v = x[features[i, j]]
                if v != v:
                    continue  # missing: River skips the attributes absent from x
                if n_categories[i, j] > 0:
                    offset = nominal_offset[i, j]
                    count = nominal[block, offset + int(v)]
                    if count > 0.0:
                        class_total = 0.0
                        for u in range(n_categories[i, j]):
                            class_total += nominal[block, offset + u]
                        vote += math.log(count / class_total)
                elif gauss[block, j, G_WEIGHT] > 1.0:
                    g = gauss[block, j]
                    variance = g[G_SSD] / (g[G_WEIGHT] - 1.0)
                    if variance > 0.0:
                        d = v - g[G_MEAN]
                        log_p = d * d / (-2.0 * variance) - _HALF_LOG_TAU - 0.5 * math.log(variance)
                        if log_p > -np.inf:
                            vote += log_p
        out[c] = vote
        best = max(best, vote)
    acc = 0.0
    for p in present:
        if listed[p]:
            acc += math.exp(out[label[i, start + p]] - best)
    lse = best + math.log(acc)
    for p in present:
        c = label[i, start + p]
        out[c] = math.exp(out[c] - lse) if listed[p] else 0.0
    return True


@numba.njit(cache=True, inline="always")
def _branch(v, kind, first, value):
    """The child that an example goes to at an internal node of kind ``kind``, first child
    ``first`` and split value ``value``, its value of the split attribute being ``v`` (possibly
    an ``EMPTY`` child), or ``MISSING`` if ``v`` is missing (NaN)."""
    if v != v:
        return MISSING
    if kind == NUMERIC_LE:
        return first if v <= value else first + 1
    if kind == NOMINAL_EQ:
        return first if v == value else first + 1
    return first + int(v)


@numba.njit(cache=True)
def _subtree_weights(i, lowest, n_categories, nodes, leaves, totals):
    """``totals[node]`` = weight of the leaves under ``node`` for every node of tree ``i`` from
    ``lowest`` on, summed child by child as River's recursive ``DTBranch.total_weight``.

    Children always come after their parent, so one backward sweep suffices."""
    kind, feature, _, child, node_slot, n_nodes = nodes
    class_weight, listed, present = leaves.class_weight, leaves.listed, leaves.present
    start, n_present = leaves.start, leaves.n_present
    for node in range(n_nodes[i] - 1, lowest - 1, -1):
        if kind[i, node] == LEAF:
            slot = node_slot[i, node]
            totals[node] = _listed_total(
                i, start[slot], n_present[slot], class_weight, listed, present
            )[0]
        elif kind[i, node] == EMPTY:
            totals[node] = 0.0
        else:
            n_branches = 2
            if kind[i, node] == NOMINAL_MULTIWAY:
                n_branches = n_categories[i, feature[i, node]]
            first = child[i, node]
            total = 0.0
            for b in range(n_branches):
                total += totals[first + b]
            totals[node] = total


@numba.njit(cache=True)
def _most_common_child(i, node, n_categories, nodes, leaves):
    """River's ``most_common_path``: the existing child with the most weight below it (first one
    on ties), where an example goes when its value of the split attribute is missing, or, to
    predict, when its category was unseen at a multiway split."""
    kind, feature, _, child, _, n_nodes = nodes
    first = child[i, node]
    n_branches = 2
    if kind[i, node] == NOMINAL_MULTIWAY:
        n_branches = n_categories[i, feature[i, node]]
    # Scratch on this rare path only, so that predicting never writes to the committee's state.
    totals = np.empty(n_nodes[i])
    _subtree_weights(i, first, n_categories, nodes, leaves, totals)
    best = -1
    for b in range(n_branches):
        candidate = first + b
        if kind[i, candidate] != EMPTY and (best < 0 or totals[candidate] > totals[best]):
            best = candidate
    return best


@numba.njit(cache=True, nogil=True)
def predict(x, state, out):
    """Write in ``out[i]`` the class distribution of the leaf of tree ``i`` that ``x`` reaches.

    The leaf predicts with naive Bayes (:func:`_naive_bayes`) when ``leaf_prediction`` is ``NB``
    and its weight ``W`` is at least ``nb_threshold``, or when it is ``NBA`` and naive Bayes has
    been right at least as much as the majority class (River's ties go to naive Bayes), and the
    leaf is active (not deactivated by ``max_depth``, River's ``is_active``); a naive
    Bayes posterior ``q`` is smoothed as ``(W q[c] + leaf_prior) / (W + k leaf_prior)``, which is
    ``q`` itself for ``leaf_prior = 0``. Otherwise, or when naive Bayes has no votes, the leaf
    predicts its smoothed class weights ``(w[c] + leaf_prior) / (W + k leaf_prior)``, uniform if
    that is 0/0. With ``MC_WEKA`` it predicts the weights of its listed classes and 1 for the
    others, normalised (the Weka port's ``HNode.get_distribution``). Nothing is written to the
    committee's state. Returns 0 (the committee contract's compiled ``predict``, see
    :class:`olboost.weak.base.CompiledKernels`)."""
    learners, nodes, leaves = state.learners, state.nodes, state.leaves
    leaf_prediction = state.options.leaf_mode
    leaf_prior, nb_threshold = state.options.leaf_prior, state.options.nb_threshold
    features, n_categories = learners.features, learners.n_categories
    kind, feature, value, child_of = nodes.kind, nodes.feature, nodes.value, nodes.child
    node_slot = nodes.slot
    class_weight, listed, correct = leaves.class_weight, leaves.listed, leaves.correct
    present, n_present, label = leaves.present, leaves.n_present, leaves.label
    start_of = leaves.start  # taken out of the loop: in it, each access counts a reference
    n, k = out.shape
    # Every tree's descent first, then the leaves: the descents are independent, and back to
    # back the processor overlaps their cache misses, where each leaf's reads waited for the
    # descent before them (the trees' predict on car's 100 trees: a fifth less time).
    slots = np.empty(n, dtype=np.int64)
    for i in range(n):
        node = np.int64(0)  # not a literal 0: one compile of _most_common_child
        while kind[i, node] != LEAF:
            v = x[features[i, feature[i, node]]]
            child = _branch(v, kind[i, node], child_of[i, node], value[i, node])
            if child == MISSING or kind[i, child] == EMPTY:
                child = _most_common_child(i, node, n_categories, nodes, leaves)
            node = child
        slots[i] = node_slot[i, node]
    for i in range(n):
        slot = slots[i]
        start, held = start_of[slot], n_present[slot]
        if leaf_prediction == MC_WEKA:
            for c in range(k):
                out[i, c] = 1.0
            for e in range(start, start + held):  # distinct classes: any order
                if listed[i, e]:
                    out[i, label[i, e]] = class_weight[i, e]
            total = 0.0
            for c in range(k):
                total += out[i, c]
            for c in range(k):
                out[i, c] /= total
            continue
        total = _listed_total(i, start, held, class_weight, listed, present)[0]
        if leaf_prediction == NB:
            naive_bayes = total >= nb_threshold
        elif leaf_prediction == NBA:
            naive_bayes = correct[slot, C_NB] >= correct[slot, C_MC]
        else:
            naive_bayes = False
        # a leaf deactivated by max_depth has no observers: River's inactive leaves predict
        # by their class weights
        naive_bayes = naive_bayes and leaves.last_attempt[slot] != np.inf
        if naive_bayes:
            out[i, :] = 0.0  # naive Bayes writes the present classes only
        if naive_bayes and _naive_bayes(i, slot, x, learners, leaves, out[i]):
            if leaf_prior > 0.0:
                evidence = total / (total + k * leaf_prior)
                floor = leaf_prior / (total + k * leaf_prior)
                for c in range(k):
                    out[i, c] = evidence * out[i, c] + floor
            continue
        denominator = total + k * leaf_prior
        if denominator > 0.0:
            # a class the leaf does not hold has weight 0: its entry is the prior's share, the
            # bits the formula gives it (0 + p is p), written for every class, then the held
            # classes' entries (with thousands of labels, a leaf holds a few hundred)
            share = leaf_prior / denominator
            for c in range(k):
                out[i, c] = share
            for e in range(start, start + held):  # distinct classes: any order
                out[i, label[i, e]] = (class_weight[i, e] + leaf_prior) / denominator
        else:
            for c in range(k):
                out[i, c] = 1.0 / k
    return 0
