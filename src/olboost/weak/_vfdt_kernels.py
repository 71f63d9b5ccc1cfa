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
pool holds one slot per live leaf. Per slot: class weights, class weights seen by the attribute
observers (they differ by the weights a leaf inherits from its parent's split and are shared by all
attributes since no value is ever missing), for each class the index of its observer block and
whether the class is listed in the leaf (River's class dict: a class is listed once the leaf learns
it, or when a split gives it to the leaf, even with zero weight, which matters to naive Bayes), and
the weights the majority class and naive Bayes predicted right (adaptive naive Bayes).
A block, allocated the first time a leaf's observers see a class, holds that class's statistics
for every attribute of the learner: a weighted Gaussian (mean, sum of squared deviations, min, max)
per numeric attribute and a weight per category of each nominal attribute. A leaf typically sees a
few of the ``k`` classes, so blocks keep memory proportional to the (leaf, class) pairs seen.

Helpers on the learning path are compiled inline (``inline="always"``): a call between compiled
functions that passes tuples of arrays pays reference-count updates for each array, which cost
more than the helpers' work. One call of :func:`learn` does everything one example needs.

Each tree is trained sequentially in a deterministic order and touches only its own nodes, slots
and blocks, so results are bit-identical whatever the capacities, the number of threads, and
whether or not the state went through pickle.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

# Node kinds.
LEAF = 0
NUMERIC_LE = 1  # branch 0 when x[f] <= value, else branch 1
NOMINAL_EQ = 2  # branch 0 when x[f] == value, else branch 1
NOMINAL_MULTIWAY = 3  # branch x[f]
EMPTY = 4  # a multiway branch whose category was unseen at split time; no leaf yet
NO_SPLIT = -1  # the null split (or a splitter with no valid candidate)

# Fields of gauss[block, feature].
G_MEAN = 0
G_SSD = 1  # Welford's running sum of squared deviations
G_MIN = 2
G_MAX = 3
N_GAUSS_FIELDS = 4

# Scratch rows at the end of ``work`` (the first rows hold branch class weights).
W_MU = -1
W_SIGMA = -2
W_LO = -3
W_HI = -4
W_NLOGN = -5
N_WORK_ROWS = 5

# The committee's state, as the compiled kernels take it: named records of arrays (Numba types a
# namedtuple by its field names and types, so each field is read by name, at no cost).
Learners = namedtuple(
    "Learners",
    [
        "features",  # (N, m) columns each tree sees
        "n_categories",  # (N, m) categories of each seen column (0: numeric)
        "nominal_offset",  # (N, m) first cell of each nominal column in an observer block
        "weight_multiplier",  # (N,)
        "grace_period",  # (N,)
        "split_confidence",  # (N,)
        "tie_threshold",  # (N,)
    ],
)
Options = namedtuple(
    "Options",
    [
        "n_split_points",
        "min_branch_fraction",
        "max_share_to_split",
        "leaf_mode",  # MC, NB, NBA or MC_WEKA
        "binary_nominal",  # binary x == v candidates besides the multiway split
        "weka",  # the Weka port's rules
        "leaf_prior",
        "nb_threshold",
    ],
)
Nodes = namedtuple("Nodes", ["kind", "feature", "value", "child", "slot", "n_nodes"])
Leaves = namedtuple(
    "Leaves",
    [
        "last_attempt",  # per slot: weight seen at the last split attempt
        "class_weight",  # (slots, k)
        "observed",  # (slots, k) weight seen by the observers
        "blocks",  # (slots, k) observer block of each class, -1 if none
        "gauss",  # (blocks, m, N_GAUSS_FIELDS)
        "nominal",  # (blocks, nominal cells)
        "free_slots",  # (N, .) slots lent to each tree
        "n_free_slots",  # (N,)
        "free_blocks",  # (N, .) blocks lent to each tree
        "n_free_blocks",  # (N,)
        "listed",  # (slots, k) classes a leaf lists
        "correct",  # (slots, 2) correctness weights (adaptive naive Bayes)
    ],
)
Pools = namedtuple(
    "Pools",
    ["spare_slots", "n_spare_slots", "spare_blocks", "n_spare_blocks", "counts", "max_branches"],
)
State = namedtuple("State", ["learners", "options", "nodes", "leaves", "pools", "work"])

# Leaf prediction modes.
MC = 0  # majority class
NB = 1  # naive Bayes
NBA = 2  # adaptive naive Bayes
MC_WEKA = 3  # majority class as the Weka port predicts: listed classes' weights, 1 for the others

# Columns of the per-slot correctness weights (adaptive naive Bayes).
C_MC = 0
C_NB = 1

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_TAU = 0.5 * math.log(math.tau)


# ------------------------------------------------------------------------------ input checks


@numba.njit(cache=True)
def nominal_codes_valid(x, nominal_columns, nominal_cardinality):
    """Whether every nominal column of ``x`` holds an integer code in ``[0, cardinality)``."""
    for q in range(nominal_columns.shape[0]):
        v = x[nominal_columns[q]]
        if not (v >= 0.0 and v < nominal_cardinality[q] and v == math.floor(v)):
            return False
    return True


@numba.njit(cache=True)
def first_bad_row(X, nominal_columns, nominal_cardinality):
    """Index of the first row of ``X`` failing :func:`nominal_codes_valid`, ``X.shape[0]`` if
    none."""
    for i in range(X.shape[0]):
        if not nominal_codes_valid(X[i], nominal_columns, nominal_cardinality):
            return i
    return X.shape[0]


@numba.njit(cache=True)
def learn_demand(weights, n_nodes, max_branches, counts):
    """Validate ``weights`` and bound the node storage one ``learn`` call may need.

    Returns ``(ok, nodes)``: ``ok`` is False, and nothing is written, if a weight is negative or
    not finite; ``nodes`` is the largest node count a tree may reach, each positive weight being
    one learned example that can split one leaf into ``max_branches``. ``counts[i]`` receives the
    number of examples tree ``i`` will learn.
    """
    n, k = weights.shape
    for i in range(n):
        for c in range(k):
            w = weights[i, c]
            if not (w >= 0.0 and w < np.inf):
                return False, 0
    nodes = 0
    for i in range(n):
        count = 0
        for c in range(k):
            if weights[i, c] > 0.0:
                count += 1
        nodes = max(nodes, n_nodes[i] + count * max_branches)
        counts[i] = count
    return True, nodes


LEND_OK = 0
LEND_NO_SPARE = 1  # grow the pool
LEND_STACK_FULL = 2  # widen the per-tree stacks


@numba.njit(cache=True)
def lend(counts, takes, gives, stacks, n_free, spare, n_spare):
    """Before a ``learn`` call, top up each tree's own stack of items (leaf slots or observer
    blocks) from the shared ``spare`` stack to ``counts[i] * takes``, with room for the
    ``counts[i] * gives`` a tree may hand back during the call. Per-tree stacks let the trees
    learn in parallel; :func:`give_back` returns the excess afterwards. A tree's stack never
    holds more than ``takes`` items between calls, so the room check holds.

    Returns a ``LEND_*`` code; on failure the caller grows storage and calls again (items already
    lent stay valid)."""
    for i in range(counts.shape[0]):
        needed = counts[i] * takes
        if needed + counts[i] * gives > stacks.shape[1]:
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


# ------------------------------------------------------------------------------ split criterion


@numba.njit(cache=True, inline="always")
def _row_sum(a, r):
    """``np.sum(a[r])`` (same additions in the same order) without making a view of the row."""
    total = 0.0
    for c in range(a.shape[1]):
        total += a[r, c]
    return total


@numba.njit(cache=True, inline="always")
def _row_entropy(a, r):
    """Entropy (bits) of the weight vector ``a[r]``, computed as River's
    ``InfoGainSplitCriterion`` does."""
    entropy = 0.0
    total = 0.0
    for c in range(a.shape[1]):
        d = a[r, c]
        if d > 0.0:
            entropy -= d * math.log2(d)
            total += d
    if total > 0.0:
        return (entropy + total * math.log2(total)) / total
    return 0.0


# ------------------------------------------------------------------------------ split candidates
#
# A leaf's attribute observers for class c live in block ``blocks[c]`` (-1 if the leaf has not
# seen class c since its observers were last reset): ``gauss[block, j]`` holds the Gaussian of
# numeric feature j and ``nominal[block, offset_j + v]`` the weight of category v of nominal
# feature j. ``observed[c]`` is the weight of class c seen by the observers.


@numba.njit(cache=True, inline="always")
def _gaussian_params(observed, blocks, gauss, j, work):
    """Per-class mean, standard deviation (``ddof=1``, 0 below two units of weight, as River's
    ``proba.Gaussian``), min and max of feature ``j`` into ``work[MU]`` .. ``work[HI]``."""
    mu, sigma, lo, hi = work[W_MU], work[W_SIGMA], work[W_LO], work[W_HI]
    for c in range(observed.shape[0]):
        n = observed[c]
        if n > 0.0:
            g = gauss[blocks[c], j]
            mu[c] = g[G_MEAN]
            sigma[c] = math.sqrt(g[G_SSD] / (n - 1.0)) if n > 1.0 else 0.0
            lo[c] = g[G_MIN]
            hi[c] = g[G_MAX]


@numba.njit(cache=True, inline="always")
def _cdf(threshold, mu, sigma):
    if sigma > 0.0:
        return 0.5 * (1.0 + math.erf(((threshold - mu) / sigma) / _SQRT2))
    return 0.0  # River catches the ZeroDivisionError of a zero deviation and returns 0


@numba.njit(cache=True, inline="always")
def _numeric_partition(observed, threshold, work, post):
    """Estimated class weights left (``x <= threshold``) and right of a threshold, from each
    class's Gaussian, as River's ``GaussianSplitter._class_dists_from_binary_split``."""
    mu, sigma, lo, hi = work[W_MU], work[W_SIGMA], work[W_LO], work[W_HI]
    for c in range(observed.shape[0]):
        n = observed[c]
        post[0, c] = 0.0
        post[1, c] = 0.0
        if n <= 0.0:
            continue
        if threshold < lo[c]:
            post[1, c] = n
        elif threshold >= hi[c]:
            post[0, c] = n
        else:
            post[0, c] = _cdf(threshold, mu[c], sigma[c]) * n
            post[1, c] = n - post[0, c]


@numba.njit(cache=True, inline="always")
def _numeric_merit(observed, threshold, work, pre_entropy, min_branch_fraction):
    """:func:`_merit` of the partition of :func:`_numeric_partition`, fused into one pass.

    Bit-identical to partition-then-merit (same operations in the same order), but it reuses each
    class's ``n log2 n`` (``work[W_NLOGN]``) when the class falls wholly on one side."""
    mu, sigma, lo, hi, n_log_n = work[W_MU], work[W_SIGMA], work[W_LO], work[W_HI], work[W_NLOGN]
    left = 0.0
    right = 0.0
    h_left = 0.0
    h_right = 0.0
    for c in range(observed.shape[0]):
        n = observed[c]
        if n <= 0.0:
            continue
        if threshold < lo[c]:
            right += n
            h_right -= n_log_n[c]
        elif threshold >= hi[c]:
            left += n
            h_left -= n_log_n[c]
        else:
            lw = _cdf(threshold, mu[c], sigma[c]) * n
            rw = n - lw
            left += lw
            right += rw
            if lw > 0.0:
                h_left -= lw * math.log2(lw)
            if rw > 0.0:
                h_right -= rw * math.log2(rw)
    total = left + right
    if not total > 0.0:
        return -np.inf
    if (left / total > min_branch_fraction) + (right / total > min_branch_fraction) < 2:
        return -np.inf
    e_left = (h_left + left * math.log2(left)) / left if left > 0.0 else 0.0
    e_right = (h_right + right * math.log2(right)) / right if right > 0.0 else 0.0
    return pre_entropy - (left * e_left + right * e_right) / total


@numba.njit(cache=True, inline="always")
def _best_numeric(
    observed, blocks, gauss, j, pre_entropy, n_split_points, min_branch_fraction, work
):
    """Best threshold of numeric feature ``j``: ``(merit, threshold)``, merit ``-inf`` if none.

    Thresholds are spread evenly strictly inside the range observed over all classes; the first
    best one wins ties (MOA's ``GaussianNumericAttributeClassObserver``)."""
    _gaussian_params(observed, blocks, gauss, j, work)
    lo = np.inf
    hi = -np.inf
    for c in range(observed.shape[0]):
        if observed[c] > 0.0:
            lo = min(lo, work[W_LO, c])
            hi = max(hi, work[W_HI, c])
    best = -np.inf
    best_threshold = 0.0
    if lo == np.inf:
        return best, best_threshold
    step = (hi - lo) / (n_split_points + 1.0)
    for t in range(n_split_points):
        threshold = lo + step * (t + 1)
        if not (lo < threshold < hi):
            continue
        merit = _numeric_merit(observed, threshold, work, pre_entropy, min_branch_fraction)
        if merit > best:
            best = merit
            best_threshold = threshold
    return best, best_threshold


@numba.njit(cache=True, inline="always")
def _category_weights(blocks, nominal, cell, out, r):
    """Class weights of one category (``nominal`` column ``cell``) into row ``r`` of ``out``."""
    for c in range(blocks.shape[0]):
        out[r, c] = nominal[blocks[c], cell] if blocks[c] >= 0 else 0.0


@numba.njit(cache=True, inline="always")
def _nominal_binary(blocks, nominal, offset, n_categories, value, post):
    """Class weights of ``x == value`` (branch 0) and ``x != value`` (branch 1)."""
    post[0, :] = 0.0
    post[1, :] = 0.0
    for v in range(n_categories):
        b = 0 if v == value else 1
        for c in range(blocks.shape[0]):
            if blocks[c] >= 0:
                post[b, c] += nominal[blocks[c], offset + v]


@numba.njit(cache=True, inline="always")
def _best_nominal(
    blocks, nominal, offset, n_categories, pre_entropy, min_branch_fraction, binary, work
):
    """Best split of a nominal feature: ``(merit, kind, value)``. The multiway split is the
    default (even at merit ``-inf``, as in River); if ``binary``, a binary ``x == v`` split
    replaces it only if strictly better, the first best ``v`` winning ties (River); otherwise the
    multiway split is the only candidate (MOA's and Weka's ``binarySplits=false``).

    Merit is information gain, ``-inf`` unless two branches hold more than
    ``min_branch_fraction`` of the weight (MOA's rule). Category ``v``'s class weights go to
    ``work[v]``; a category is observed when its weight is positive. A binary split's ``x == v``
    branch is category ``v``'s multiway branch, so its weight and entropy are computed once for
    both; every sum is taken in the order of River's computation (the ``x != v`` branch adds the
    other categories in increasing order; unobserved ones add exact zeros, as they add nothing to
    the multiway sums), so the merits are River's bit for bit."""
    for v in range(n_categories):
        _category_weights(blocks, nominal, offset + v, work, v)
    rest = work.shape[0] + W_MU
    total = 0.0
    post_entropy = 0.0
    best_binary = -np.inf
    best_value = 0.0
    for v in range(n_categories):
        weight = _row_sum(work, v)
        if not weight > 0.0:
            continue
        entropy = _row_entropy(work, v)
        total += weight
        post_entropy += weight * entropy
        if not binary:
            continue
        for c in range(blocks.shape[0]):
            others = 0.0
            for u in range(n_categories):
                if u != v:
                    others += work[u, c]
            work[rest, c] = others
        rest_weight = _row_sum(work, rest)
        both = 0.0 + weight + rest_weight
        if (weight / both > min_branch_fraction) + (rest_weight / both > min_branch_fraction) < 2:
            continue
        split_entropy = 0.0 + weight * entropy + rest_weight * _row_entropy(work, rest)
        merit = pre_entropy - split_entropy / both
        if merit > best_binary:
            best_binary = merit
            best_value = float(v)
    best = -np.inf
    if total > 0.0:
        big = 0
        for v in range(n_categories):
            big += _row_sum(work, v) / total > min_branch_fraction
        if big >= 2:
            best = pre_entropy - post_entropy / total
    if best_binary > best:
        return best_binary, NOMINAL_EQ, best_value
    return best, NOMINAL_MULTIWAY, 0.0


# ------------------------------------------------------------------------------ leaves
#
# The kernels below take the committee's arrays in four tuples:
#   learners = (features, n_categories, nominal_offset, weight_multiplier, grace_period,
#               split_confidence, tie_threshold)   per-learner setup, fixed after start
#   options  = (n_split_points, min_branch_fraction, max_share_to_split, leaf_prediction,
#               nominal_binary, weka)   nominal_binary: whether binary ``x == v`` splits are
#               candidates; weka: the Weka port's rules (see the module docstring)
#   nodes    = (kind, feature, value, child, slot, n_nodes)   node arrays, (N, capacity)
#   leaves   = (last_attempt, class_weight, observed, blocks, gauss, nominal,
#               free_slots, n_free_slots, free_blocks, n_free_blocks, listed, correct)
# where leaf arrays are indexed by slot, gauss and nominal by block, and free_slots[i] /
# free_blocks[i] are the stacks lent to tree i for the current call (see lend).


@numba.njit(cache=True, inline="always")
def _reset_observers(i, slot, leaves):
    """Give the leaf's observer blocks back to tree ``i``'s stack."""
    observed, blocks = leaves.observed, leaves.blocks
    free_blocks, n_free_blocks = leaves.free_blocks, leaves.n_free_blocks
    for c in range(blocks.shape[1]):
        if blocks[slot, c] >= 0:
            free_blocks[i, n_free_blocks[i]] = blocks[slot, c]
            n_free_blocks[i] += 1
            blocks[slot, c] = -1
        observed[slot, c] = 0.0


# Not inlined (unlike the other helpers of learn): inlining it changed the trees grown (Numba
# 0.68; the reference tests in tests/test_vfdt.py catch it), and it only runs when a leaf is made.
@numba.njit(cache=True)
def _new_leaf(i, node, initial, listed_initial, nodes, leaves):
    """Turn ``node`` of tree ``i`` into a fresh leaf with class weights ``initial``, listing the
    classes whose ``listed_initial`` is positive, and zero correctness weights (River's new
    leaves start with ``_mc_correct_weight = _nb_correct_weight = 0``)."""
    kind, node_slot = nodes.kind, nodes.slot
    last_attempt, class_weight = leaves.last_attempt, leaves.class_weight
    observed, blocks = leaves.observed, leaves.blocks
    free_slots, n_free_slots = leaves.free_slots, leaves.n_free_slots
    listed, correct = leaves.listed, leaves.correct
    n_free_slots[i] -= 1
    slot = free_slots[i, n_free_slots[i]]
    class_weight[slot, :] = initial
    for c in range(initial.shape[0]):
        listed[slot, c] = listed_initial[c] > 0.0
    correct[slot, :] = 0.0
    observed[slot, :] = 0.0
    blocks[slot, :] = -1
    # River starts a leaf's grace period from the weight it inherits.
    last_attempt[slot] = np.sum(initial)
    kind[i, node] = LEAF
    node_slot[i, node] = slot


@numba.njit(cache=True, inline="always")
def _update_leaf(i, slot, x, label, w, learners, leaves, weka):
    """Add example ``(x, label)`` of weight ``w`` to a leaf's statistics (weighted Welford).

    With ``weka`` (the Weka port's rules, see the module docstring), a class's weight starts at 1
    the first time the leaf sees it, so does a category's weight the first time the class's
    observer sees it, and a deactivated leaf (``last_attempt`` infinite) updates its class weights
    only."""
    features, n_categories = learners.features, learners.n_categories
    nominal_offset = learners.nominal_offset
    last_attempt, class_weight = leaves.last_attempt, leaves.class_weight
    observed, blocks, gauss, nominal = leaves.observed, leaves.blocks, leaves.gauss, leaves.nominal
    free_blocks, n_free_blocks, listed = leaves.free_blocks, leaves.n_free_blocks, leaves.listed
    if weka and not listed[slot, label]:
        class_weight[slot, label] = 1.0
    class_weight[slot, label] += w
    listed[slot, label] = True
    if weka and last_attempt[slot] == np.inf:
        return
    block = blocks[slot, label]
    if block < 0:
        n_free_blocks[i] -= 1
        block = free_blocks[i, n_free_blocks[i]]
        blocks[slot, label] = block
        gauss[block] = 0.0
        nominal[block] = 0.0
    if weka:
        # a separate pass keeps the loop below as it is without the Weka rules
        for j in range(features.shape[1]):
            if n_categories[i, j] > 0:
                cell = nominal_offset[i, j] + int(x[features[i, j]])
                if nominal[block, cell] == 0.0:
                    nominal[block, cell] = 1.0
    n_before = observed[slot, label]
    n = n_before + w
    observed[slot, label] = n
    for j in range(features.shape[1]):
        v = x[features[i, j]]
        if n_categories[i, j] > 0:
            nominal[block, nominal_offset[i, j] + int(v)] += w
            continue
        g = gauss[block, j]
        if n_before > 0.0:
            g[G_MIN] = min(g[G_MIN], v)
            g[G_MAX] = max(g[G_MAX], v)
        else:
            g[G_MIN] = v
            g[G_MAX] = v
        mean_old = g[G_MEAN]
        g[G_MEAN] = mean_old + (w / n) * (v - mean_old)
        g[G_SSD] += w * (v - mean_old) * (v - g[G_MEAN])


@numba.njit(cache=True)
def _naive_bayes(i, slot, x, learners, leaves, out):
    """River's ``do_naive_bayes_prediction`` at a leaf: write its posterior into ``out``.

    Each listed class ``c`` of weight ``w[c] > 0`` votes ``log(w[c] / W)`` plus, per attribute in
    subset order, the log-likelihood of ``x``: the Gaussian log-density for a numeric attribute
    (skipped, as River does for ``-inf``, while the class has at most one unit of weight or zero
    variance, or has not been seen by the observers), ``log(weight of the category / weight of the
    class)`` for a nominal one (skipped when the category was not seen with the class). A listed
    class of zero weight votes ``0.0`` (River's ``votes[c] = 0.0``). The votes go through
    log-sum-exp; unlisted classes get 0. Returns ``False``, leaving ``out`` undefined, when River
    returns no votes (no listed class or zero total weight)."""
    features, n_categories = learners.features, learners.n_categories
    nominal_offset = learners.nominal_offset
    class_weight, observed, blocks = leaves.class_weight, leaves.observed, leaves.blocks
    gauss, nominal = leaves.gauss, leaves.nominal
    listed = leaves.listed[slot]
    stats = class_weight[slot]
    k = stats.shape[0]
    total = 0.0
    any_listed = False
    for c in range(k):
        total += stats[c]
        any_listed = any_listed or listed[c]
    if not any_listed or total == 0.0:
        return False
    best = -np.inf
    for c in range(k):
        if not listed[c]:
            continue
        if not stats[c] > 0.0:
            out[c] = 0.0
            best = max(best, 0.0)
            continue
        vote = math.log(stats[c] / total)
        block = blocks[slot, c]
        if block >= 0:
            n = observed[slot, c]
            for j in range(features.shape[1]):
                v = x[features[i, j]]
                if n_categories[i, j] > 0:
                    offset = nominal_offset[i, j]
                    count = nominal[block, offset + int(v)]
                    if count > 0.0:
                        class_total = 0.0
                        for u in range(n_categories[i, j]):
                            class_total += nominal[block, offset + u]
                        vote += math.log(count / class_total)
                elif n > 1.0:
                    g = gauss[block, j]
                    variance = g[G_SSD] / (n - 1.0)
                    if variance > 0.0:
                        d = v - g[G_MEAN]
                        log_p = d * d / (-2.0 * variance) - _HALF_LOG_TAU - 0.5 * math.log(variance)
                        if log_p > -np.inf:
                            vote += log_p
        out[c] = vote
        best = max(best, vote)
    acc = 0.0
    for c in range(k):
        if listed[c]:
            acc += math.exp(out[c] - best)
    lse = best + math.log(acc)
    for c in range(k):
        out[c] = math.exp(out[c] - lse) if listed[c] else 0.0
    return True


@numba.njit(cache=True, inline="always")
def _listed_argmax(listed, values):
    """First listed class of largest value (River: first in its class dict), -1 if none."""
    best = -1
    for c in range(values.shape[0]):
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
    total = 0.0
    any_listed = False
    for c in range(class_weight.shape[0]):
        total += class_weight[c]
        any_listed = any_listed or listed[c]
    if not any_listed:
        correct[slot, C_MC] += w
    else:
        # River compares the normalised weights (scaled by 1 / total unless total is 0).
        scale = 1.0 / total if total != 0.0 else 1.0
        for c in range(class_weight.shape[0]):
            scratch[c] = class_weight[c] * scale
        if _listed_argmax(listed, scratch) == label:
            correct[slot, C_MC] += w
    if _naive_bayes(i, slot, x, learners, leaves, scratch):
        if _listed_argmax(listed, scratch) == label:
            correct[slot, C_NB] += w


@numba.njit(cache=True)
def _attempt_split(i, node, weight_seen, learners, options, nodes, leaves, work):
    """River's ``HoeffdingTreeClassifier._attempt_to_split`` on leaf ``node`` of tree ``i``."""
    features, n_categories = learners.features, learners.n_categories
    nominal_offset = learners.nominal_offset
    split_confidence, tie_threshold = learners.split_confidence[i], learners.tie_threshold[i]
    n_split_points, min_branch_fraction = options.n_split_points, options.min_branch_fraction
    max_share_to_split = options.max_share_to_split
    kind, feature, value, child, node_slot, n_nodes = nodes
    class_weight, observed_all, blocks_all = leaves.class_weight, leaves.observed, leaves.blocks
    gauss, nominal = leaves.gauss, leaves.nominal
    free_slots, n_free_slots = leaves.free_slots, leaves.n_free_slots

    slot = node_slot[i, node]
    stats = class_weight[slot]
    observed = observed_all[slot]
    blocks = blocks_all[slot]
    listed = leaves.listed[slot]
    n_classes = 0
    majority = 0.0
    for c in range(stats.shape[0]):
        # the Weka port counts the classes in its class dict, even at zero weight
        if stats[c] != 0.0 or (options.weka and listed[c]):
            n_classes += 1
        majority = max(majority, stats[c])
    if n_classes < 2:
        return
    if not options.weka and majority > 0.0 and majority / weight_seen > max_share_to_split:
        # River offers only the null split here, which wins (see below).
        _reset_observers(i, slot, leaves)
        return

    # Candidates in River's order (null split, then features in subset order); River sorts them
    # stably by merit and takes the last two, so the last of equal best merits wins.
    pre_entropy = _row_entropy(class_weight, slot)
    n_log_n = work[W_NLOGN]
    for c in range(stats.shape[0]):
        n = observed[c]
        n_log_n[c] = n * math.log2(n) if n > 0.0 else 0.0
    best = -np.inf  # the null split's merit under the min-branch-fraction rule
    second = -np.inf
    best_kind = NO_SPLIT
    best_feature = -1
    best_value = 0.0
    for j in range(features.shape[1]):
        if n_categories[i, j] > 0:
            merit, candidate_kind, candidate_value = _best_nominal(
                blocks, nominal, nominal_offset[i, j], n_categories[i, j], pre_entropy,
                min_branch_fraction, options.binary_nominal, work,
            )  # fmt: skip
        else:
            merit, candidate_value = _best_numeric(
                observed, blocks, gauss, j, pre_entropy, n_split_points, min_branch_fraction, work
            )
            candidate_kind = NUMERIC_LE if merit > -np.inf else NO_SPLIT
        if merit >= best:
            second = best
            best = merit
            best_kind = candidate_kind
            best_feature = j
            best_value = candidate_value
        elif merit > second:
            second = merit

    value_range = math.log2(max(n_classes, 2))
    bound = math.sqrt(
        value_range * value_range * math.log(1.0 / split_confidence) / (2.0 * weight_seen)
    )
    if not (best - second > bound or bound < tie_threshold):
        return
    if best_kind == NO_SPLIT:
        # Pre-pruning: River deactivates the leaf, then its memory manager, the tree being under
        # its size limit, reactivates it with empty observers (MOA's enforceTrackerLimit does
        # the same). The Weka port deactivates it for good.
        _reset_observers(i, slot, leaves)
        if options.weka:
            leaves.last_attempt[slot] = np.inf
        return

    # Branch statistics of the winning split, computed before the slot is recycled.
    j = best_feature
    if best_kind == NUMERIC_LE:
        _gaussian_params(observed, blocks, gauss, j, work)
        _numeric_partition(observed, best_value, work, work)
        # River lists in a branch every class seen by the observers whose range reaches that side,
        # even when the Gaussian gives it zero weight there (the mean and deviation rows are free).
        for c in range(observed.shape[0]):
            seen = observed[c] > 0.0
            work[W_MU, c] = 1.0 if seen and best_value >= work[W_LO, c] else 0.0
            work[W_SIGMA, c] = 1.0 if seen and best_value < work[W_HI, c] else 0.0
        n_branches = 2
    elif best_kind == NOMINAL_EQ:
        n_cat = n_categories[i, j]
        _nominal_binary(blocks, nominal, nominal_offset[i, j], n_cat, int(best_value), work)
        n_branches = 2
    else:
        n_branches = n_categories[i, j]
        for v in range(n_branches):
            _category_weights(blocks, nominal, nominal_offset[i, j] + v, work, v)

    first = n_nodes[i]
    n_nodes[i] += n_branches
    kind[i, node] = best_kind
    feature[i, node] = j
    value[i, node] = best_value
    child[i, node] = first
    _reset_observers(i, slot, leaves)
    free_slots[i, n_free_slots[i]] = slot
    n_free_slots[i] += 1
    for b in range(n_branches):
        if best_kind == NOMINAL_MULTIWAY and not _row_sum(work, b) > 0.0:
            kind[i, first + b] = EMPTY
        elif best_kind == NUMERIC_LE:
            _new_leaf(i, first + b, work[b], work[W_MU if b == 0 else W_SIGMA], nodes, leaves)
        else:
            _new_leaf(i, first + b, work[b], work[b], nodes, leaves)


@numba.njit(cache=True, inline="always")
def _branch(i, node, x, features, nodes):
    """The child of internal ``node`` that ``x`` goes to (possibly ``EMPTY``)."""
    kind, feature, value, child, _, _ = nodes
    v = x[features[i, feature[i, node]]]
    first = child[i, node]
    if kind[i, node] == NUMERIC_LE:
        return first if v <= value[i, node] else first + 1
    if kind[i, node] == NOMINAL_EQ:
        return first if v == value[i, node] else first + 1
    return first + int(v)


@numba.njit(cache=True, inline="always")
def _learn_one(i, x, label, w, learners, options, nodes, leaves, work):
    """River's ``HoeffdingTreeClassifier.learn_one`` for tree ``i``."""
    kind, node_slot = nodes.kind, nodes.slot
    last_attempt, class_weight = leaves.last_attempt, leaves.class_weight
    node = 0
    while kind[i, node] != LEAF:
        child = _branch(i, node, x, learners.features, nodes)
        if kind[i, child] == EMPTY:
            # A category unseen when the multiway split was made: River grows the branch and
            # trains the new leaf without attempting to split it.
            work[0, :] = 0.0
            _new_leaf(i, child, work[0], work[0], nodes, leaves)
            if options.leaf_mode == NBA:
                _score_predictors(i, node_slot[i, child], x, label, w, learners, leaves, work[W_MU])
            _update_leaf(i, node_slot[i, child], x, label, w, learners, leaves, options.weka)
            return
        node = child
    slot = node_slot[i, node]
    if options.leaf_mode == NBA:
        _score_predictors(i, slot, x, label, w, learners, leaves, work[W_MU])
    _update_leaf(i, slot, x, label, w, learners, leaves, options.weka)
    weight_seen = np.sum(class_weight[slot])
    since = weight_seen - last_attempt[slot]
    grace_period = learners.grace_period[i]
    if (since > grace_period) if options.weka else (since >= grace_period):
        last_attempt[slot] = weight_seen
        _attempt_split(i, node, weight_seen, learners, options, nodes, leaves, work)


# ------------------------------------------------------------------------------ committee calls


LEARN_OK = 0
LEARN_BAD_WEIGHTS = 1  # a weight is negative or not finite; nothing was changed
LEARN_GROW_NODES = 2  # the node arrays need ``demand[0]`` columns
LEARN_GROW_SLOTS = 3  # grow the leaf-slot pool (``demand[1]``: a LEND_* code)
LEARN_GROW_BLOCKS = 4  # grow the observer-block pool (``demand[1]``: a LEND_* code)


@numba.njit(cache=True)
def learn(x, weights, state, demand):
    """The committee's compiled ``learn`` (:class:`olboost.weak.base.CompiledKernels`): see
    :func:`_learn`, to which the state's records are passed one by one (Numba's parallel
    lowering reads records only from arguments)."""
    return _learn(
        x, weights, state.learners[:], state.options[:], state.nodes[:], state.leaves[:],
        state.pools[:], state.work, demand,
    )  # fmt: skip


@numba.njit(cache=True)
def _learn_one_of_tuples(i, x, label, w, learners, options, nodes, leaves, work):
    # The parallel loop of _learn passes plain tuples (Numba's parfor lowering mishandles
    # namedtuples, silently); the records are rebuilt here, outside the parallel region.
    _learn_one(
        i, x, label, w, Learners(*learners), Options(*options), Nodes(*nodes), Leaves(*leaves),
        work,
    )  # fmt: skip


@numba.njit(cache=True, parallel=True)
def _learn(x, weights, learners, options, nodes, leaves, pools, work, demand):
    """Train every tree: tree ``i`` learns ``(x, l)`` with weight ``weights[i, l]`` times its
    multiplier, for each label ``l`` in increasing order with a positive weight.

    One call does what one example needs, so that the per-example cost is one dispatch: it
    validates ``weights`` (:func:`learn_demand`), checks the node capacity, lends every tree the
    leaf slots and observer blocks it may take (:func:`lend`), trains the trees and takes back
    what a tree holds beyond one example's needs (:func:`give_back`). ``pools`` is
    ``(spare_slots, n_spare_slots, spare_blocks, n_spare_blocks, counts, max_branches)``.
    Returns a ``LEARN_*`` code: on anything but ``LEARN_OK`` no tree has learned; the caller
    grows what ``demand`` names and calls again (items already lent stay valid).

    Trees touch disjoint state (their own node rows, leaf slots, free stacks and ``work[i]``), so
    they are trained in parallel (on the calling thread's ``numba.get_num_threads()``) with
    identical results."""
    spare_slots, n_spare_slots, spare_blocks, n_spare_blocks, counts, max_branches = pools
    free_slots, n_free_slots, free_blocks, n_free_blocks = leaves[6:10]
    ok, needed = learn_demand(weights, nodes[5], max_branches, counts)
    if not ok:
        return LEARN_BAD_WEIGHTS
    if needed > nodes[0].shape[1]:
        demand[0] = needed
        return LEARN_GROW_NODES
    # Per example learned, a tree takes at most max_branches - 1 net slots (a split) and one
    # block, and gives back at most one slot and k blocks (a leaf's observers).
    k = weights.shape[1]
    status = lend(counts, max_branches - 1, 1, free_slots, n_free_slots, spare_slots, n_spare_slots)
    if status != LEND_OK:
        demand[1] = status
        return LEARN_GROW_SLOTS
    status = lend(counts, 1, k, free_blocks, n_free_blocks, spare_blocks, n_spare_blocks)
    if status != LEND_OK:
        demand[1] = status
        return LEARN_GROW_BLOCKS

    weight_multiplier = learners[3]
    for i in numba.prange(weights.shape[0]):
        for label in range(k):
            w = weights[i, label] * weight_multiplier[i]
            if w > 0.0:
                _learn_one_of_tuples(i, x, label, w, learners, options, nodes, leaves, work[i])

    # Each tree keeps what one more example may take, so that the next call lends nothing when
    # every tree learns one example (the boosters' usual case).
    give_back(free_slots, n_free_slots, spare_slots, n_spare_slots, max_branches - 1)
    give_back(free_blocks, n_free_blocks, spare_blocks, n_spare_blocks, 1)
    # an explicit loop: in this parallel function, ``counts[:] = 0`` left the array unchanged
    for i in range(counts.shape[0]):
        counts[i] = 0
    return LEARN_OK


@numba.njit(cache=True)
def _subtree_weights(i, lowest, n_categories, nodes, class_weight, totals):
    """``totals[node]`` = weight of the leaves under ``node`` for every node of tree ``i`` from
    ``lowest`` on, summed child by child as River's recursive ``DTBranch.total_weight``.

    Children always come after their parent, so one backward sweep suffices."""
    kind, feature, _, child, node_slot, n_nodes = nodes
    for node in range(n_nodes[i] - 1, lowest - 1, -1):
        if kind[i, node] == LEAF:
            totals[node] = np.sum(class_weight[node_slot[i, node]])
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
def _most_common_child(i, node, n_categories, nodes, class_weight):
    """River's ``NominalMultiwayBranch.most_common_path``: the existing child with the most
    weight below it (first one on ties), used to predict for an unseen category."""
    kind, feature, _, child, _, n_nodes = nodes
    first = child[i, node]
    # Scratch on this rare path only, so that predicting never writes to the committee's state.
    totals = np.empty(n_nodes[i])
    _subtree_weights(i, first, n_categories, nodes, class_weight, totals)
    best = -1
    for b in range(n_categories[i, feature[i, node]]):
        candidate = first + b
        if kind[i, candidate] != EMPTY and (best < 0 or totals[candidate] > totals[best]):
            best = candidate
    return best


@numba.njit(cache=True)
def predict(x, state, out):
    """Write in ``out[i]`` the class distribution of the leaf of tree ``i`` that ``x`` reaches.

    The leaf predicts with naive Bayes (:func:`_naive_bayes`) when ``leaf_prediction`` is ``NB``
    and its weight ``W`` is at least ``nb_threshold``, or when it is ``NBA`` and naive Bayes has
    been right at least as much as the majority class (River's ties go to naive Bayes); a naive
    Bayes posterior ``q`` is smoothed as ``(W q[c] + leaf_prior) / (W + k leaf_prior)``, which is
    ``q`` itself for ``leaf_prior = 0``. Otherwise, or when naive Bayes has no votes, the leaf
    predicts its smoothed class weights ``(w[c] + leaf_prior) / (W + k leaf_prior)``, uniform if
    that is 0/0. With ``MC_WEKA`` it predicts the weights of its listed classes and 1 for the
    others, normalised (the Weka port's ``HNode.get_distribution``). Nothing is written to the
    committee's state. Returns 0 (the committee contract's compiled ``predict``, see
    :class:`olboost.weak.base.CompiledCommittee`)."""
    learners, nodes, leaves = state.learners, state.nodes, state.leaves
    leaf_prediction = state.options.leaf_mode
    leaf_prior, nb_threshold = state.options.leaf_prior, state.options.nb_threshold
    features, n_categories = learners.features, learners.n_categories
    kind, node_slot = nodes.kind, nodes.slot
    class_weight, listed, correct = leaves.class_weight, leaves.listed, leaves.correct
    n, k = out.shape
    for i in range(n):
        node = 0
        while kind[i, node] != LEAF:
            child = _branch(i, node, x, features, nodes)
            if kind[i, child] == EMPTY:
                child = _most_common_child(i, node, n_categories, nodes, class_weight)
            node = child
        slot = node_slot[i, node]
        stats = class_weight[slot]
        if leaf_prediction == MC_WEKA:
            total = 0.0
            for c in range(k):
                out[i, c] = stats[c] if listed[slot, c] else 1.0
                total += out[i, c]
            for c in range(k):
                out[i, c] /= total
            continue
        total = np.sum(stats)
        if leaf_prediction == NB:
            naive_bayes = total >= nb_threshold
        elif leaf_prediction == NBA:
            naive_bayes = correct[slot, C_NB] >= correct[slot, C_MC]
        else:
            naive_bayes = False
        if naive_bayes and _naive_bayes(i, slot, x, learners, leaves, out[i]):
            if leaf_prior > 0.0:
                evidence = total / (total + k * leaf_prior)
                floor = leaf_prior / (total + k * leaf_prior)
                for c in range(k):
                    out[i, c] = evidence * out[i, c] + floor
            continue
        denominator = total + k * leaf_prior
        for c in range(k):
            if denominator > 0.0:
                out[i, c] = (stats[c] + leaf_prior) / denominator
            else:
                out[i, c] = 1.0 / k
    return 0
