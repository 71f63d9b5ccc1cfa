"""Numba kernels of :class:`olboost.weak.vfdt.VFDTCommittee`: N Hoeffding trees in flat arrays.

The trees follow VFDT (Domingos & Hulten 2000) with the semantics of River's
``HoeffdingTreeClassifier`` (itself a port of MOA's ``HoeffdingTree``): Gaussian numeric
attribute observers (``GaussianSplitter``), nominal observers offering a multiway split and one
binary ``x == v`` split per value (``NominalSplitterClassif``; or, as MOA's and Weka's default
``binarySplits=false``, the multiway split only), information gain with the
min-branch-fraction rule, the null split as a candidate (pre-pruning), ``max_share_to_split`` and
lazily created branches for nominal values unseen when a multiway split was made. When the null
split wins, River (like MOA) deactivates the leaf and, its memory manager finding the tree under
its size limit, reactivates it at once with empty attribute observers; the kernels do that reset
directly.

With the ``weka`` option the trees follow instead the rules of the Python port of Weka's
``HoeffdingTree`` used by the online boosting papers' code (see ``VFDTCommittee``): Laplace counts
(a leaf's class weight starts at 1 when the leaf first learns the class, a nominal observer's
cell at 1 when it first sees the (class, category) pair), a strict grace test, no
``max_share_to_split``, classes counted by the leaf's list, permanent deactivation of a pre-pruned
leaf (``last_attempt`` set to infinity; it then learns its class weights only) and ``MC_WEKA``
predictions.

Leaves predict as River's ``leaf_prediction`` options (see :func:`predict`): majority class
(``MC``), naive Bayes (``NB``, River's ``do_naive_bayes_prediction`` over the leaf's attribute
observers) or adaptive naive Bayes (``NBA``: a leaf keeps the weight of the training examples that
each of the two would have predicted right and predicts with the better one).

Layout. Tree ``i``'s nodes live in row ``i`` of the node arrays, node 0 being the root. An internal
node stores its kind, split feature (a position in the learner's feature subset), split value and
the index of its first child; its children are consecutive (2 for a binary split, one per category
for a multiway split, of which those not yet created have kind ``EMPTY``). A leaf stores the slot of
its statistics in the leaf pool, shared by all trees; a slot is freed when its leaf splits, so the
pool holds one slot per live leaf. Per slot: the weights the majority class and naive Bayes
predicted right (adaptive naive Bayes), whether the observers skipped a missing value, and where
the leaf's class entries are. A leaf holds one entry per class it has any statistic for (its
*present* classes), in its tree's entry rows: the class, its weight, its weight seen by the
attribute observers (they differ by the weights a leaf inherits from its parent's split), the
index of its observer block and whether the class is listed in the leaf (River's class dict: a
class is listed once the leaf learns it, or when a split gives it to the leaf, even with zero
weight, which matters to naive Bayes). Entries sit in the order the leaf met their classes, so
that a position never moves (the kept sums of :mod:`._vfdt_bounds` name entries by position); a
list of the positions in increasing class order drives every per-class loop of learning, split
evaluation and prediction, so every sum adds the same terms in the same order as over a dense row
of ``k``, bit for bit, and a leaf costs, in time and memory, the labels that reached it, not
``k``. Learning finds a class by bisection in that list; a leaf whose room is full moves to twice
the room at the end of its tree's rows, and a split leaf's entries are left behind: the rows are
compacted (:meth:`olboost.weak._vfdt_arrays.TreeArrays._compact_entries`) when a call could
otherwise run out: a tree checks, before it learns each label, that its rows hold what the label
may take (:func:`._vfdt_storage.entries_needed`), and if not the call stops there and resumes
after the compaction (``Pools.progress``).
A block, allocated the first time a leaf's observers see a class, holds that class's statistics
for every attribute of the learner: a weighted Gaussian (weight seen, mean, sum of squared
deviations, min, max) per numeric attribute and a weight per category of each nominal attribute.
A leaf typically sees a few of the ``k`` classes, so blocks keep memory proportional to the (leaf,
class) pairs seen.

Reference counts. A call between compiled functions, and an inlined helper too (Numba binds each
parameter to a new name), counts a reference to each array it is given, in and out, by atomic
operations that cost more than a leaf update's work when the state's records (dozens of arrays)
are passed. So one call of :func:`learn` does everything one example needs, the path every
example takes (descent, leaf update, grace period) is written out in :func:`_learn_trees`, and
the helpers it and the split evaluation call per tree, label or threshold take scalars or the few
arrays they read.

The kernels are split by concern: the state layout and named records (:mod:`._vfdt_layout`),
storage lending (:mod:`._vfdt_storage`), leaves (:mod:`._vfdt_leaves`), split evaluation
(:mod:`._vfdt_split`), bounds on merits (:mod:`._vfdt_bounds`), split attempts
(:mod:`._vfdt_attempt`), prediction (:mod:`._vfdt_predict`), and here :func:`learn` with the
per-example leaf update; this module re-exports the names the committee uses.

Each tree is trained sequentially in a deterministic order and touches only its own nodes, slots
and blocks, so results are bit-identical whatever the capacities, the number of threads, and
whether or not the state went through pickle.
"""

from __future__ import annotations

import numba
import numpy as np

from olboost.weak._vfdt_attempt import (  # noqa: F401 (re-exported: the tests use K.*)
    _CEILING_SLACK,
    _attempt_split,
    _merit_ceilings,
    attempt_scratch,
)
from olboost.weak._vfdt_bounds import (  # noqa: F401
    _bounds_of_merits,
    _kept_bounds_of_merits,
    _log_update,
)
from olboost.weak._vfdt_layout import (  # noqa: F401 (re-exported: the committee and the tests use K.*)
    C_MC,
    C_NB,
    EMPTY,
    G_MAX,
    G_MEAN,
    G_MIN,
    G_SSD,
    G_WEIGHT,
    LEAF,
    MC,
    MC_WEKA,
    MIN_ROOM,
    MISSING,
    N_GAUSS_FIELDS,
    N_WORK_ROWS,
    NB,
    NBA,
    NO_DEPTH_LIMIT,
    NO_SPLIT,
    NOMINAL_EQ,
    NOMINAL_MULTIWAY,
    NUMERIC_LE,
    W_HI,
    W_LO,
    W_MU,
    W_N,
    W_NLOGN,
    W_SIGMA,
    Learners,
    Leaves,
    Nodes,
    Options,
    Pools,
    State,
)
from olboost.weak._vfdt_leaves import (
    _move_leaf,
    _new_leaf,
    _reset_observers,
    _score_predictors,
)
from olboost.weak._vfdt_predict import (  # noqa: F401
    _branch,
    _most_common_child,
    _naive_bayes,
    predict,
)
from olboost.weak._vfdt_split import (  # noqa: F401
    _best_nominal,
    _best_numeric,
    _category_weights,
    _chi_square_ceilings,
    _gaussian_params,
    _nominal_binary,
    _numeric_partition,
    _row_entropy,
    _row_sum,
)
from olboost.weak._vfdt_storage import (  # noqa: F401
    LEND_NO_SPARE,
    LEND_OK,
    entries_needed,
    first_bad_row,
    give_back,
    learn_demand,
    lend,
    nominal_codes_valid,
)

# ------------------------------------------------------------------------------ committee calls


# The grace period's test without its sum. A leaf's ``seen_bound`` B bounds the exact sum T of
# its C class weights from above (u = 2^-53, every quantity >= 0). The sum in class order S is
# within (C - 1) u (1 + O(u)) T of T (recursive summation), so B = fl(S (1 + (C + 4) 2u)) >= T
# where S is taken. Adding w to a class weight (1 + w for a class the Weka rules restart at 1,
# which is more than the weight it replaces) raises T by at most (w + t) u beyond w, so
# B <- fl(fl(B + w) (1 + 4u)) >= (B + w)(1 + u) stays above T. Then fl(B (1 + (C + 4) 2u)) >=
# S, and since fl(x - last) never decreases in x, a bound below the grace period proves the
# exact test false: the results are those of the sum taken at every update, bit for bit.
_ULP_OF_ONE = 2.0**-52
_BOUND_GROWTH = 1.0 + 2.0**-51


LEARN_OK = 0
LEARN_BAD_WEIGHTS = 1  # a weight is negative or not finite; nothing was changed
LEARN_GROW_NODES = 2  # the node arrays need ``demand[0]`` columns
LEARN_GROW_SLOTS = 3  # grow the leaf-slot pool (``demand[1]``: a LEND_* code)
LEARN_GROW_BLOCKS = 4  # grow the observer-block pool (``demand[1]``: a LEND_* code)
# give every tree ``demand[0]`` free class entries; unlike the others, this status may come after
# some trees learned some labels (``progress``): the call again resumes where they stopped
LEARN_GROW_ENTRIES = 5


@numba.njit(cache=True, nogil=True)
def learn(x, weights, state, demand):
    """The committee's compiled ``learn`` (:class:`olboost.weak.base.CompiledKernels`) on the
    calling thread's ``numba.get_num_threads()`` threads: see :func:`_learn`, to which the
    state's records are passed one by one (Numba's parallel lowering reads records only from
    arguments)."""
    return _learn(
        x, weights, state.learners[:], state.options[:], state.nodes[:], state.leaves[:],
        state.pools[:], state.work, demand,
    )  # fmt: skip


@numba.njit(cache=True, nogil=True)
def learn_serial(x, weights, state, demand):
    """:func:`learn` on the calling thread alone, with the same results bit for bit: the
    committee's ``learn`` when it runs one thread (``n_threads=1``, the default). Compiling it
    skips Numba's parallel lowering (``olboost run --algorithm ada-olmr --dataset emotions`` on
    an empty cache compiled 3 to 8 s faster, of about 40 s, in two paired runs); the trees'
    split attempts and leaf kernels are shared with :func:`learn`, compiled once for both. It
    does the work of :func:`_learn` itself rather than through a serial twin, and
    :func:`_learn_trees` is inlined into it: each compiled function called from another is
    optimised and turned into machine code again inside its caller, so a layer less is a
    second or two less of a cold start."""
    learners, options, nodes = state.learners[:], state.options[:], state.nodes[:]
    leaves, pools, work = state.leaves[:], state.pools[:], state.work
    learners_ = Learners(*learners)
    multiplier = learners_.weight_multiplier
    weighed = np.zeros(weights.shape[1], dtype=np.bool_)
    status = _lend_for_one_example(weights, multiplier, nodes, leaves, pools, demand, weighed)
    if status != LEARN_OK:
        return status
    scratch, spare = attempt_scratch(
        learners_.features.shape[1], Options(*options).n_split_points, weights.shape[1]
    )
    labels = np.flatnonzero(weighed)
    pools_ = Pools(*pools)
    need = _learn_trees_inlined(
        0, weights.shape[0], x, weights, labels, learners, options, nodes, leaves, work, scratch,
        spare, pools_.progress, pools_.max_branches,
    )  # fmt: skip
    if need > 0:
        demand[0] = need
        return LEARN_GROW_ENTRIES
    _take_back(leaves, pools)
    return LEARN_OK


@numba.njit(cache=True)
def _learn_trees(
    lo, hi, x, weights, labels, learners, options, nodes, leaves, work, scratch, spare, progress,
    max_branches,
):  # fmt: skip
    """Trees ``lo .. hi - 1``, in order: tree ``i`` learns ``(x, l)`` with weight ``weights[i,
    l]`` times its multiplier, for each label ``l`` in increasing order with a positive weight,
    as River's ``HoeffdingTreeClassifier.learn_one``. ``labels`` lists, in increasing order, the
    labels some of these trees weigh (:func:`learn_demand` finds them in its pass over the
    weights): with thousands of labels, a booster weighs a handful, and a tree's scan of its
    row for them cost more than learning them. ``scratch`` and ``spare`` are the split
    attempts' (:func:`attempt_scratch`), or empty: then each attempt allocates its own.

    Tree ``i`` starts at ``labels[progress[i]]`` and sets ``progress[i]`` to ``len(labels)``
    when it is done. Before each label it checks that its entry rows have the room the label
    may take (:func:`entries_needed`, for ``max_branches``); if not, it stops there, recording
    the label's index in ``progress[i]``, and the next tree goes on; the most room a tree
    needed is returned (0 once every tree is done): the caller compacts the rows and calls
    again, which resumes each tree where it stopped. Rows reserved for the worst example
    instead (every label a new class and a split at every label) made them hundreds of times
    wider than the entries they held, at hundreds of labels per example.

    At a split whose attribute is missing from ``x`` the example follows the child with the most
    weight below it (River's ``most_common_path``), and the leaf it reaches then learns without
    attempting a split, as in River."""
    # Reference counting. The parallel loop of _learn passes plain tuples (Numba's parfor lowering
    # mishandles namedtuples, silently); the records are rebuilt here, outside the parallel
    # region. A call, or an inlined helper (Numba binds each parameter to a new name), counts a
    # reference to each array it is given, in and out (atomic operations): the serial learn makes
    # one call for all the trees, the path every example takes (descent, leaf update, grace
    # period) is written out here with the records' arrays taken out once, and the records only
    # go to the helpers of rare events (a missing value, a new branch, a split attempt, adaptive
    # naive Bayes). Per (tree, label), one inlined helper given the records counted 52
    # references, a leaf-update helper given its 16 arrays 17, and they took two thirds of the
    # time of Adaboost.OLM on nursery.
    learners_, options_ = Learners(*learners), Options(*options)
    nodes_, leaves_ = Nodes(*nodes), Leaves(*leaves)
    weight_multiplier, grace_period = learners_.weight_multiplier, learners_.grace_period
    features, n_categories = learners_.features, learners_.n_categories
    nominal_offset = learners_.nominal_offset
    kind, feature, value, child_of = nodes_.kind, nodes_.feature, nodes_.value, nodes_.child
    node_slot = nodes_.slot
    last_attempt, class_weight, observed = (
        leaves_.last_attempt,
        leaves_.class_weight,
        leaves_.observed,
    )
    blocks, gauss, nominal = leaves_.blocks, leaves_.gauss, leaves_.nominal
    free_blocks, n_free_blocks = leaves_.free_blocks, leaves_.n_free_blocks
    listed, present, n_present = leaves_.listed, leaves_.present, leaves_.n_present
    start, room, label_of, widest = leaves_.start, leaves_.room, leaves_.label, leaves_.widest
    top, width = leaves_.top, leaves_.label.shape[1]
    incomplete, seen_bound = leaves_.incomplete, leaves_.seen_bound
    kept, kept_log = leaves_.kept, leaves_.kept_log
    weka, leaf_mode, max_depth = options_.weka, options_.leaf_mode, options_.max_depth
    n_features = features.shape[1]
    # Each tree's leaf for its first weighed label, found for every tree before any learns
    # (-1: not found, a missing value or an unseen category on the way): the descents are
    # independent, and back to back the processor overlaps their cache misses, where each
    # waited for the tree before to learn. A tree's learning changes no other tree, so the
    # leaf found is the one its descent would find; its later labels descend again (a split
    # may have followed the first).
    reached = np.empty(hi - lo, dtype=np.int64)
    reached_depth = np.empty(hi - lo, dtype=np.int64)
    for i in range(lo, hi):
        reached[i - lo] = -1
        for q in range(progress[i], labels.shape[0]):
            if weights[i, labels[q]] * weight_multiplier[i] > 0.0:
                node = np.int64(0)
                depth = 0
                while kind[i, node] != LEAF:
                    depth += 1
                    v = x[features[i, feature[i, node]]]
                    node = _branch(v, kind[i, node], child_of[i, node], value[i, node])
                    if node == MISSING or kind[i, node] == EMPTY:
                        break
                if node != MISSING and kind[i, node] == LEAF:
                    reached[i - lo], reached_depth[i - lo] = node, depth
                break
    most = 0
    for i in range(lo, hi):
        # work[i] is taken on the rare paths only: a view counts a reference in and out
        # (iterating the array counts a reference per tree)
        waiting = False
        for q in range(progress[i], labels.shape[0]):
            label = labels[q]
            w = weights[i, label] * weight_multiplier[i]
            if not w > 0.0:
                continue
            need = entries_needed(widest[i], max_branches)
            if top[i] + need > width:
                # this tree waits for the rows to be compacted, the others learn on: the rows
                # are compacted with every tree where it stopped, as after the parallel learn,
                # so that one thread or several leave the same bytes
                progress[i] = q
                most = max(most, need)
                waiting = True
                break
            node = np.int64(0)  # not a literal 0: one compile of _most_common_child
            no_attempt = False  # River learns without a split attempt after a detour or new branch
            depth = 0
            if reached[i - lo] >= 0:
                node, depth = reached[i - lo], reached_depth[i - lo]
                reached[i - lo] = -1
            while kind[i, node] != LEAF:
                depth += 1
                v = x[features[i, feature[i, node]]]
                child = _branch(v, kind[i, node], child_of[i, node], value[i, node])
                if child == MISSING:
                    child = _most_common_child(i, node, n_categories, nodes_, leaves_)
                    no_attempt = True
                elif kind[i, child] == EMPTY:
                    # A category unseen when the multiway split was made: River grows the branch
                    # and trains the new leaf.
                    # no classes, so no parent entries (an int64 0, not a literal: one compile)
                    none = np.empty(0, np.int64)
                    _new_leaf(i, child, work[i, 0], work[i, 0], none, np.int64(0), nodes_, leaves_)
                    no_attempt = True
                node = child
            slot = node_slot[i, node]
            # A deactivated leaf (last_attempt infinite: the Weka rules' pre-pruning, or
            # max_depth) learns its class weights only, as River's inactive leaves.
            active = last_attempt[slot] != np.inf
            if leaf_mode == NBA and active:
                _score_predictors(i, slot, x, label, w, learners_, leaves_, work[i, W_MU])
            # The leaf update (weighted Welford), written out (see above). A missing value (NaN)
            # is skipped by its attribute's observer, as River's splitters skip ``None``: each
            # numeric observer keeps its own weight (``G_WEIGHT``), which equals the class's
            # observed weight bit for bit when nothing is missing. With ``weka`` (the Weka port's
            # rules, see the module docstring), a class's weight starts at 1 the first time the
            # leaf sees it, so does a category's weight the first time the class's observer sees
            # it, and a deactivated leaf (``last_attempt`` infinite) updates its class weights
            # only.
            # The label's entry: found by bisection in the leaf's class order, or made (the
            # leaf moved first if full, a rare event, see _move_leaf), written out as the rest.
            st = start[slot]
            n = n_present[slot]
            below = 0
            above = n
            while below < above:
                mid = (below + above) >> 1
                if label_of[i, st + present[i, st + mid]] < label:
                    below = mid + 1
                else:
                    above = mid
            if below < n and label_of[i, st + present[i, st + below]] == label:
                p = present[i, st + below]
            else:
                if n == room[slot]:
                    st = _move_leaf(i, slot, leaves_)
                p = n
                e = st + p
                label_of[i, e] = label
                class_weight[i, e] = 0.0
                observed[i, e] = 0.0
                blocks[i, e] = -1
                listed[i, e] = False
                for r in range(n, below, -1):
                    present[i, st + r] = present[i, st + r - 1]
                present[i, st + below] = p
                n_present[slot] = n + 1
                widest[i] = max(widest[i], n + 1)
            e = st + p
            added = w
            if not listed[i, e] and weka:
                class_weight[i, e] = 1.0
                added += 1.0
            class_weight[i, e] += w
            listed[i, e] = True
            seen_bound[slot] = (seen_bound[slot] + added) * _BOUND_GROWTH
            if active:
                block = blocks[i, e]
                if block < 0:
                    n_free_blocks[i] -= 1
                    block = free_blocks[i, n_free_blocks[i]]
                    blocks[i, e] = block
                    gauss[block] = 0.0
                    nominal[block] = 0.0
                _log_update(i, slot, block, p, gauss, kept, kept_log)
                if weka:
                    # a separate pass keeps the loop below as it is without the Weka rules
                    for j in range(n_features):
                        v = x[features[i, j]]
                        if n_categories[i, j] > 0 and v == v:
                            cell = nominal_offset[i, j] + int(v)
                            if nominal[block, cell] == 0.0:
                                nominal[block, cell] = 1.0
                observed[i, e] += w
                for j in range(n_features):
                    v = x[features[i, j]]
                    if v != v:
                        incomplete[slot] = True
                        continue  # missing: the attribute's observer skips the example
                    if n_categories[i, j] > 0:
                        nominal[block, nominal_offset[i, j] + int(v)] += w
                        continue
                    n_before = gauss[block, j, G_WEIGHT]
                    n = n_before + w
                    gauss[block, j, G_WEIGHT] = n
                    if n_before > 0.0:
                        gauss[block, j, G_MIN] = min(gauss[block, j, G_MIN], v)
                        gauss[block, j, G_MAX] = max(gauss[block, j, G_MAX], v)
                    else:
                        gauss[block, j, G_MIN] = v
                        gauss[block, j, G_MAX] = v
                    mean_old = gauss[block, j, G_MEAN]
                    mean = mean_old + (w / n) * (v - mean_old)
                    gauss[block, j, G_MEAN] = mean
                    gauss[block, j, G_SSD] += w * (v - mean_old) * (v - mean)
            if no_attempt:
                continue
            if depth >= max_depth:
                # River's max_depth: the leaf is deactivated after learning the example, its
                # observers dropped (their blocks freed)
                if active:
                    _reset_observers(i, slot, leaves_)
                    last_attempt[slot] = np.inf
                continue
            grace = grace_period[i]
            # The weight seen is a sum over the leaf's classes, in class order, hundreds of
            # them at thousands of labels: it is taken only when the leaf's bound of it may
            # reach the grace period (see _BOUND_GROWTH), and the bound then starts from it.
            n_classes = n_present[slot]
            slack = 1.0 + (n_classes + 4) * _ULP_OF_ONE
            if seen_bound[slot] * slack - last_attempt[slot] < grace:
                continue
            weight_seen = 0.0  # _listed_total's sum, written out as the rest of the path
            for q in range(n_classes):  # (st: the leaf's start, after any move above)
                weight_seen += class_weight[i, st + present[i, st + q]]
            seen_bound[slot] = weight_seen * slack
            since = weight_seen - last_attempt[slot]
            if (since > grace) if weka else (since >= grace):
                last_attempt[slot] = weight_seen
                # never reassigned here: a variable reassigned in the loop counted a
                # reference to each of the two arrays in and out at every (tree, label), the
                # most reference counting of a TopAda run on yeast (perf)
                if spare.shape[0] == 0:
                    floats, classes = attempt_scratch(
                        n_features, options_.n_split_points, weights.shape[1]
                    )
                    _attempt_split(
                        i, node, weight_seen, learners_, options_, nodes_, leaves_, work[i], kept,
                        floats, classes,
                    )  # fmt: skip
                else:
                    _attempt_split(
                        i, node, weight_seen, learners_, options_, nodes_, leaves_, work[i], kept,
                        scratch, spare,
                    )  # fmt: skip
        if not waiting:
            progress[i] = labels.shape[0]
    return most


# _learn_trees as learn_serial's own code (Numba IR inlining of the same Python function): the
# compiled _learn_trees would be optimised and turned into machine code a second time inside
# learn_serial, with every callee it links (about a second of the cold start's longer process,
# olboost run --algorithm ada-olmr, paired runs). Only inlined, never compiled on its own: no
# cache of its own, which would share _learn_trees' cache index.
_learn_trees_inlined = numba.njit(inline="always")(_learn_trees.py_func)


@numba.njit(cache=True, inline="always")
def _learn_tree(
    i, x, weights, labels, learners, options, nodes, leaves, work, progress, max_branches
):  # fmt: skip
    """Tree ``i`` learns (:func:`_learn_trees`), in a parallel loop; returns the entries it
    stopped for, or 0."""
    # the parallel lowering types i as uint64 where the serial typing says int64: one type,
    # so that the learning kernels below compile once, not twice
    tree = np.int64(i)
    weight_multiplier = Learners(*learners).weight_multiplier
    for q in range(labels.shape[0]):
        if weights[tree, labels[q]] * weight_multiplier[tree] > 0.0:
            none, no_classes = np.empty(0), np.empty(0, dtype=np.int64)  # see _learn_trees
            return _learn_trees(
                tree, tree + 1, x, weights, labels, learners, options, nodes, leaves, work, none,
                no_classes, progress, max_branches,
            )  # fmt: skip
    return 0


@numba.njit(cache=True, inline="always")
def _lend_for_one_example(weights, multiplier, nodes, leaves, pools, demand, weighed):
    """The checks and lending of :func:`_learn` before any tree learns: a ``LEARN_*`` code;
    ``weighed`` as :func:`learn_demand` writes it."""
    spare_slots, n_spare_slots, spare_blocks, n_spare_blocks, counts, progress, max_branches = pools
    nodes_, leaves_ = Nodes(*nodes), Leaves(*leaves)
    free_slots, n_free_slots = leaves_.free_slots, leaves_.n_free_slots
    free_blocks, n_free_blocks = leaves_.free_blocks, leaves_.n_free_blocks
    ok, needed = learn_demand(weights, multiplier, nodes_.n_nodes, max_branches, counts, weighed)
    if not ok:
        return LEARN_BAD_WEIGHTS
    # A call that stopped for entries, resumed: each tree needs room for the labels it has
    # left only. The first call lent for them all (the trees give back at the example's end),
    # so the lending below gives nothing and the trees take the slots and blocks of a call that
    # never stopped; and a larger demand would grow the node arrays where it never did.
    resumed = False
    for i in range(progress.shape[0]):
        resumed |= progress[i] != 0
    if resumed:
        labels = np.flatnonzero(weighed)
        needed = 0
        for i in range(progress.shape[0]):
            left = 0
            for q in range(progress[i], labels.shape[0]):
                left += weights[i, labels[q]] > 0.0
            counts[i] = left
            needed = max(needed, nodes_.n_nodes[i] + left * max_branches)
    if needed > nodes_.kind.shape[1]:
        demand[0] = needed
        return LEARN_GROW_NODES
    # Per example learned, a tree takes at most max_branches - 1 net slots (a split) and one
    # block, and gives back at most one slot and k blocks (a leaf's observers).
    k = weights.shape[1]
    one = np.int64(1)  # not a literal 1: Numba would compile lend once more for it
    status = lend(
        counts, max_branches - 1, one, free_slots, n_free_slots, spare_slots, n_spare_slots
    )
    if status != LEND_OK:
        demand[1] = status
        return LEARN_GROW_SLOTS
    status = lend(counts, one, k, free_blocks, n_free_blocks, spare_blocks, n_spare_blocks)
    if status != LEND_OK:
        demand[1] = status
        return LEARN_GROW_BLOCKS
    return LEARN_OK


@numba.njit(cache=True)
def take_back(
    free_slots, n_free_slots, spare_slots, n_spare_slots, free_blocks, n_free_blocks,
    spare_blocks, n_spare_blocks, counts, progress, max_branches,
):  # fmt: skip
    """What :func:`_learn` does after the trees learned, and what an abandoned example's
    trees give back (``VFDTCommittee.abandon_example``): each tree keeps what one more example
    may take, so that the next call lends nothing when every tree learns one example (the
    boosters' usual case), and the counts of what was lent and where each tree stopped are
    reset."""
    give_back(free_slots, n_free_slots, spare_slots, n_spare_slots, max_branches - 1)
    one = np.int64(1)  # not a literal 1: Numba would compile give_back once more for it
    give_back(free_blocks, n_free_blocks, spare_blocks, n_spare_blocks, one)
    # an explicit loop: in the parallel function, ``counts[:] = 0`` left the array unchanged
    for i in range(counts.shape[0]):
        counts[i] = 0
        progress[i] = 0


@numba.njit(cache=True, inline="always")
def _take_back(leaves, pools):
    """:func:`take_back` of the trees' ``leaves`` and ``pools`` records (tuples)."""
    spare_slots, n_spare_slots, spare_blocks, n_spare_blocks, counts, progress, max_branches = pools
    leaves_ = Leaves(*leaves)
    take_back(
        leaves_.free_slots, leaves_.n_free_slots, spare_slots, n_spare_slots,
        leaves_.free_blocks, leaves_.n_free_blocks, spare_blocks, n_spare_blocks, counts,
        progress, max_branches,
    )  # fmt: skip


@numba.njit(cache=True, parallel=True)
def _learn(x, weights, learners, options, nodes, leaves, pools, work, demand):
    """Train every tree: tree ``i`` learns ``(x, l)`` with weight ``weights[i, l]`` times its
    multiplier, for each label ``l`` in increasing order with a positive weight.

    One call does what one example needs, so that the per-example cost is one dispatch: it
    validates ``weights`` (:func:`learn_demand`), checks the node capacity, lends every tree the
    leaf slots and observer blocks it may take (:func:`lend`), trains the trees and takes back
    what a tree holds beyond one example's needs (:func:`give_back`). ``pools`` is
    the :data:`Pools` record as a tuple. Returns a ``LEARN_*`` code: on anything but
    ``LEARN_OK`` the caller grows what ``demand`` names and calls again (items already lent
    stay valid); no tree has learned, except on ``LEARN_GROW_ENTRIES``, after which each tree
    resumes where it stopped (:func:`_learn_trees`).

    Trees touch disjoint state (their own node rows, leaf slots, free stacks and ``work[i]``), so
    they are trained in parallel (on the calling thread's ``numba.get_num_threads()``) with
    identical results."""
    multiplier = Learners(*learners).weight_multiplier
    weighed = np.zeros(weights.shape[1], dtype=np.bool_)
    status = _lend_for_one_example(weights, multiplier, nodes, leaves, pools, demand, weighed)
    if status != LEARN_OK:
        return status
    labels = np.flatnonzero(weighed)
    progress, max_branches = pools[5], pools[6]
    need = np.zeros(weights.shape[0], dtype=np.int64)
    for i in numba.prange(weights.shape[0]):
        need[i] = _learn_tree(
            i, x, weights, labels, learners, options, nodes, leaves, work, progress, max_branches
        )
    most = need.max()
    if most > 0:
        demand[0] = most
        return LEARN_GROW_ENTRIES
    _take_back(leaves, pools)
    return LEARN_OK
