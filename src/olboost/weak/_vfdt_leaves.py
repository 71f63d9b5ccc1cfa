"""Leaf kernels of the compiled Hoeffding trees (:mod:`olboost.weak._vfdt_kernels`): a leaf's
present classes, making and freeing leaves, resetting its observers and the adaptive naive Bayes
bookkeeping. (Learning one example at a leaf is written out in ``_vfdt_kernels._learn_trees``.)"""

from __future__ import annotations

import numba

from olboost.weak._vfdt_bounds import _forget_kept
from olboost.weak._vfdt_layout import C_MC, C_NB, LEAF
from olboost.weak._vfdt_predict import _listed_total, _naive_bayes

# ------------------------------------------------------------------------------ leaves
#
# The kernels below take the committee's arrays as the named records of ``_vfdt_layout``
# (``learners``, ``options``, ``nodes``, ``leaves``), where leaf arrays are indexed by slot, gauss
# and nominal by block, and free_slots[i] / free_blocks[i] are the stacks lent to tree i for the
# current call (see lend).


@numba.njit(cache=True, inline="always")
def _reset_observers(i, slot, leaves):
    """Give the leaf's observer blocks back to tree ``i``'s stack."""
    observed, blocks = leaves.observed, leaves.blocks
    free_blocks, n_free_blocks = leaves.free_blocks, leaves.n_free_blocks
    present = leaves.present[slot, : leaves.n_present[slot]]
    for c in present:
        if blocks[slot, c] >= 0:
            free_blocks[i, n_free_blocks[i]] = blocks[slot, c]
            n_free_blocks[i] += 1
            blocks[slot, c] = -1
        observed[slot, c] = 0.0
    leaves.incomplete[slot] = False
    _forget_kept(i, slot, leaves.kept)  # its kept sums (_vfdt_bounds) no longer hold


@numba.njit(cache=True, inline="always")
def _add_present(present, n_present, slot, c):
    """Insert class ``c`` in the slot's increasing list of present classes, if absent."""
    n = n_present[slot]
    q = n
    while q > 0 and present[slot, q - 1] > c:
        q -= 1
    if q > 0 and present[slot, q - 1] == c:
        return
    for r in range(n, q, -1):
        present[slot, r] = present[slot, r - 1]
    present[slot, q] = c
    n_present[slot] = n + 1


@numba.njit(cache=True, inline="always")
def _free_slot(i, slot, leaves):
    """Return a split leaf's slot to tree ``i``'s stack, clean: a free slot holds zero weights,
    no listed class, no block and no present class, so that a new leaf writes its own classes
    only. Called after :func:`_reset_observers`, which cleared the blocks and observed weights."""
    class_weight, listed = leaves.class_weight, leaves.listed
    for c in leaves.present[slot, : leaves.n_present[slot]]:
        class_weight[slot, c] = 0.0
        listed[slot, c] = False
    leaves.n_present[slot] = 0
    leaves.incomplete[slot] = False
    leaves.free_slots[i, leaves.n_free_slots[i]] = slot
    leaves.n_free_slots[i] += 1


# Not inlined (unlike the other helpers of learn): inlining it changed the trees grown (Numba
# 0.68; the reference tests in tests/test_vfdt.py catch it), and it only runs when a leaf is made.
@numba.njit(cache=True)
def _new_leaf(i, node, initial, listed_initial, classes, nodes, leaves):
    """Turn ``node`` of tree ``i`` into a fresh leaf with class weights ``initial``, listing the
    classes whose ``listed_initial`` is positive, and zero correctness weights (River's new
    leaves start with ``_mc_correct_weight = _nb_correct_weight = 0``). Only the entries of
    ``classes`` (increasing; the split leaf's present classes) are read: the others are zero."""
    kind, node_slot = nodes.kind, nodes.slot
    last_attempt, class_weight = leaves.last_attempt, leaves.class_weight
    free_slots, n_free_slots = leaves.free_slots, leaves.n_free_slots
    listed, correct = leaves.listed, leaves.correct
    n_free_slots[i] -= 1
    slot = free_slots[i, n_free_slots[i]]
    # River starts a leaf's grace period from the weight it inherits.
    total = 0.0
    n = 0
    for c in classes:
        if initial[c] > 0.0 or listed_initial[c] > 0.0:
            class_weight[slot, c] = initial[c]
            listed[slot, c] = listed_initial[c] > 0.0
            leaves.present[slot, n] = c
            n += 1
        total += initial[c]
    leaves.n_present[slot] = n
    correct[slot, :] = 0.0
    last_attempt[slot] = total
    kind[i, node] = LEAF
    node_slot[i, node] = slot


@numba.njit(cache=True, inline="always")
def _listed_argmax(listed, values, present):
    """First listed class of largest value (River: first in its class dict), -1 if none."""
    best = -1
    for c in present:
        if listed[c] and (best < 0 or values[c] > values[best]):
            best = c
    return best


@numba.njit(cache=True)
def _score_predictors(i, slot, x, label, w, learners, leaves, scratch):
    """River's ``LeafNaiveBayesAdaptive.learn_one`` bookkeeping, before the leaf learns
    ``(x, label)``: add ``w`` to the majority-class correct weight if the leaf lists no class or
    its majority class is ``label``, and to the naive Bayes correct weight if naive Bayes has votes
    and its most probable class is ``label``. ``scratch`` is a length-``k`` work row."""
    class_weight, listed, correct = leaves.class_weight[slot], leaves.listed[slot], leaves.correct
    present = leaves.present[slot, : leaves.n_present[slot]]
    total, any_listed = _listed_total(
        leaves.class_weight, leaves.listed, leaves.present, leaves.n_present, slot
    )
    if not any_listed:
        correct[slot, C_MC] += w
    else:
        # River compares the normalised weights (scaled by 1 / total unless total is 0).
        scale = 1.0 / total if total != 0.0 else 1.0
        for c in present:
            scratch[c] = class_weight[c] * scale
        if _listed_argmax(listed, scratch, present) == label:
            correct[slot, C_MC] += w
    if _naive_bayes(i, slot, x, learners, leaves, scratch):
        if _listed_argmax(listed, scratch, present) == label:
            correct[slot, C_NB] += w
