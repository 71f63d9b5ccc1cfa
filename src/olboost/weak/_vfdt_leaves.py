"""Leaf kernels of the compiled Hoeffding trees (:mod:`olboost.weak._vfdt_kernels`): a leaf's
class entries, making and freeing leaves, resetting its observers and the adaptive naive Bayes
bookkeeping. (Learning one example at a leaf is written out in ``_vfdt_kernels._learn_trees``.)"""

from __future__ import annotations

import math

import numba

from olboost.weak._vfdt_bounds import _forget_kept
from olboost.weak._vfdt_layout import C_MC, C_NB, LEAF, MIN_ROOM
from olboost.weak._vfdt_predict import _listed_total, _naive_bayes

# ------------------------------------------------------------------------------ leaves
#
# The kernels below take the committee's arrays as the named records of ``_vfdt_layout``
# (``learners``, ``options``, ``nodes``, ``leaves``), where per-leaf arrays are indexed by slot, a
# leaf's class entries by tree and entry (those of slot s from ``start[s]``), gauss and nominal by
# block, and free_slots[i] / free_blocks[i] are the stacks lent to tree i for the current call
# (see lend).


@numba.njit(cache=True, inline="always")
def _reset_observers(i, slot, leaves):
    """Give the leaf's observer blocks back to tree ``i``'s stack."""
    observed, blocks, present = leaves.observed, leaves.blocks, leaves.present
    free_blocks, n_free_blocks = leaves.free_blocks, leaves.n_free_blocks
    start = leaves.start[slot]
    for q in range(leaves.n_present[slot]):
        e = start + present[i, start + q]
        if blocks[i, e] >= 0:
            free_blocks[i, n_free_blocks[i]] = blocks[i, e]
            n_free_blocks[i] += 1
            blocks[i, e] = -1
        observed[i, e] = 0.0
    leaves.incomplete[slot] = False
    _forget_kept(i, slot, leaves.kept)  # its kept sums (_vfdt_bounds) no longer hold


@numba.njit(cache=True)
def _move_leaf(i, slot, leaves):
    """Move the entries of leaf ``slot`` of tree ``i``, its room full, to twice the room at the
    top of the tree's rows (which the tree checked it has before it learned the label, see
    ``_vfdt_storage.entries_needed``); positions do not change. Returns the new start.
    (Giving a leaf an entry for a new class is written out in ``_vfdt_kernels._learn_trees``.)"""
    start, room, top = leaves.start, leaves.room, leaves.top
    st = start[slot]
    new_room = max(2 * room[slot], MIN_ROOM)
    moved = top[i]
    top[i] += new_room
    for p in range(leaves.n_present[slot]):
        leaves.label[i, moved + p] = leaves.label[i, st + p]
        leaves.class_weight[i, moved + p] = leaves.class_weight[i, st + p]
        leaves.observed[i, moved + p] = leaves.observed[i, st + p]
        leaves.blocks[i, moved + p] = leaves.blocks[i, st + p]
        leaves.listed[i, moved + p] = leaves.listed[i, st + p]
        leaves.present[i, moved + p] = leaves.present[i, st + p]
    start[slot] = moved
    room[slot] = new_room
    return moved


@numba.njit(cache=True, inline="always")
def _free_slot(i, slot, leaves):
    """Return a split leaf's slot to tree ``i``'s stack. Its entries stay as they were until the
    next compaction of the tree's rows (:meth:`olboost.weak._vfdt_arrays.TreeArrays.
    _compact_entries`), so that the children made after it can read them."""
    leaves.n_present[slot] = 0
    leaves.incomplete[slot] = False
    leaves.free_slots[i, leaves.n_free_slots[i]] = slot
    leaves.n_free_slots[i] += 1


# Not inlined (unlike the other helpers of learn): inlining it changed the trees grown (Numba
# 0.68; the reference tests in tests/test_vfdt.py catch it), and it only runs when a leaf is made.
@numba.njit(cache=True)
def _new_leaf(i, node, initial, listed_initial, classes, parent, nodes, leaves):
    """Turn ``node`` of tree ``i`` into a fresh leaf with class weights ``initial``, listing the
    classes whose ``listed_initial`` is positive, and zero correctness weights (River's new
    leaves start with ``_mc_correct_weight = _nb_correct_weight = 0``). ``classes`` are the split
    leaf's entry positions in class order, its entries starting at ``parent``; ``initial`` and
    ``listed_initial`` are indexed by those positions (the other classes' weights are zero). The
    leaf holds the classes of positive weight or listed, in the same order."""
    kind, node_slot = nodes.kind, nodes.slot
    last_attempt, class_weight = leaves.last_attempt, leaves.class_weight
    free_slots, n_free_slots = leaves.free_slots, leaves.n_free_slots
    listed, correct, label, present = leaves.listed, leaves.correct, leaves.label, leaves.present
    n_free_slots[i] -= 1
    slot = free_slots[i, n_free_slots[i]]
    n = 0
    for p in classes:
        n += initial[p] > 0.0 or listed_initial[p] > 0.0
    room = max(n, MIN_ROOM)
    start = leaves.top[i]
    leaves.top[i] += room
    # River starts a leaf's grace period from the weight it inherits.
    total = 0.0
    n = 0
    for p in classes:
        if initial[p] > 0.0 or listed_initial[p] > 0.0:
            e = start + n
            label[i, e] = label[i, parent + p]
            class_weight[i, e] = initial[p]
            leaves.observed[i, e] = 0.0
            leaves.blocks[i, e] = -1
            listed[i, e] = listed_initial[p] > 0.0
            present[i, e] = n
            n += 1
        total += initial[p]
    leaves.start[slot] = start
    leaves.room[slot] = room
    leaves.n_present[slot] = n
    correct[slot, :] = 0.0
    last_attempt[slot] = total
    leaves.seen_bound[slot] = math.inf
    kind[i, node] = LEAF
    node_slot[i, node] = slot


@numba.njit(cache=True, inline="always")
def _listed_argmax(i, start, n, listed, label, present, values):
    """First listed class of largest ``values[class]`` in class order (the lowest index of
    tied ones, where River takes the first in its class dict: see :class:`VFDTCommittee`), -1
    if none, over the leaf's ``n`` entries from ``start``."""
    best = -1
    for q in range(n):
        e = start + present[i, start + q]
        c = label[i, e]
        if listed[i, e] and (best < 0 or values[c] > values[best]):
            best = c
    return best


@numba.njit(cache=True)
def _score_predictors(i, slot, x, c, w, learners, leaves, scratch):
    """River's ``LeafNaiveBayesAdaptive.learn_one`` bookkeeping, before the leaf learns
    ``(x, c)``: add ``w`` to the majority-class correct weight if the leaf lists no class or
    its majority class is ``c``, and to the naive Bayes correct weight if naive Bayes has votes
    and its most probable class is ``c``. ``scratch`` is a length-``k`` work row."""
    class_weight, listed, correct = leaves.class_weight, leaves.listed, leaves.correct
    label, present = leaves.label, leaves.present
    start, n = leaves.start[slot], leaves.n_present[slot]
    total, any_listed = _listed_total(i, start, n, class_weight, listed, present)
    if not any_listed:
        correct[slot, C_MC] += w
    else:
        # River compares the normalised weights (scaled by 1 / total unless total is 0).
        scale = 1.0 / total if total != 0.0 else 1.0
        for q in range(n):
            e = start + present[i, start + q]
            scratch[label[i, e]] = class_weight[i, e] * scale
        if _listed_argmax(i, start, n, listed, label, present, scratch) == c:
            correct[slot, C_MC] += w
    if _naive_bayes(i, slot, x, learners, leaves, scratch):
        if _listed_argmax(i, start, n, listed, label, present, scratch) == c:
            correct[slot, C_NB] += w
