"""Split attempts of the compiled Hoeffding trees (:mod:`olboost.weak._vfdt_kernels`): River's
``HoeffdingTreeClassifier._attempt_to_split`` at a leaf, the Hoeffding test over the best
candidates of :mod:`._vfdt_split`, evaluated exactly only where the bounds of
:mod:`._vfdt_bounds` (or, with fewer classes, the chi-square ceilings of
:func:`._vfdt_split._chi_square_ceilings`) leave the outcome open, and the split itself (new
children from the candidate's class partition)."""

from __future__ import annotations

import math

import numba
import numpy as np

from olboost.weak._vfdt_bounds import (
    ITEM_ROWS,
    KEEP_MIN_CLASSES,
    _bounds_of_merits,
    _kept_bounds_of_merits,
    item_columns,
)
from olboost.weak._vfdt_layout import (
    EMPTY,
    G_MAX,
    G_MIN,
    G_WEIGHT,
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
)
from olboost.weak._vfdt_leaves import (
    _free_slot,
    _new_leaf,
    _reset_observers,
)
from olboost.weak._vfdt_split import (
    _best_nominal,
    _best_numeric,
    _category_weights,
    _chi_square_ceilings,
    _entropy_with,
    _gaussian_params,
    _nominal_binary,
    _numeric_partition,
    _row_sum,
    _scratch_columns,
)

# Absorbs the rounding of merits and ceilings (each within about 1e-13 of its exact value for
# entropies below log2 of any feasible class count), so that the early stop of _attempt_split
# never declines a split the complete evaluation would make.
_CEILING_SLACK = 1e-9
# From this many classes at a leaf on, features are narrowed by the bounds of
# _bounds_of_merits (tight, lower and upper); below it, by the chi-square ceilings alone (loose
# and upper only, but several times cheaper, which more than pays for the exact evaluations
# they leave: on yeast, 14 labels, the trees replayed alone (benchmarks/booster_share.py's
# replay, on the train split) took 1.1 s instead of 2.0 s with 8 here; the
# 1,000-label stream ran alike with 8, 32 or 64, and TopAda on mediamill-reduced with 8 or 64).
# A speed choice only; results do not depend on it.
_NARROW_MIN_CLASSES = 32


@numba.njit(cache=True, inline="always")
def _merit_ceilings(observed, present, pre_entropy, incomplete, n_log_n):
    """Upper bounds on the merit of any numeric and any nominal candidate of a leaf, used by
    :func:`_attempt_split` to stop once the Hoeffding test cannot pass whatever is left.

    A candidate's merit is ``pre_entropy - H(C | S)`` where ``H(C | S)``, the branches' weighted
    entropy, is non-negative; so ``pre_entropy`` bounds every merit. When no value was missing,
    each numeric observer's class weights are the leaf's observed ones, and for a binary split
    ``H(C) - H(C | S)`` is the mutual information of class and side, at most ``H(S) <= 1`` bit:
    the bound is then ``pre_entropy - H(C) + 1``, ``H(C)`` being the observed weights' entropy.
    (Nominal observers may hold the Weka port's Laplace counts, so only ``pre_entropy`` bounds
    them.) Both bounds carry ``_CEILING_SLACK``. ``n_log_n[c]`` is ``observed[c] log2
    observed[c]``."""
    nominal_ceiling = pre_entropy + _CEILING_SLACK
    if incomplete:
        return nominal_ceiling, nominal_ceiling
    h_observed = _entropy_with(observed, present, n_log_n, observed)
    return min(nominal_ceiling, pre_entropy - h_observed + 1.0 + _CEILING_SLACK), nominal_ceiling


@numba.njit(cache=True, inline="always")
def _no_threshold_anywhere(observed, blocks, gauss, kinds, present):
    """Whether no feature of a leaf has a threshold inside its range: every feature numeric,
    and each one's observed range over the leaf's classes (as :func:`._vfdt_split._observed_range`
    takes it) empty or a single point. Then every threshold of :func:`._best_numeric` is the
    range's end, outside the open range, and every candidate's merit is ``-inf``."""
    for j in range(kinds.shape[0]):
        if kinds[j] > 0:
            return False
        lo = np.inf
        hi = -np.inf
        for q in range(present.shape[0]):
            c = present[q]
            if observed[c] > 0.0 and gauss[blocks[c], j, G_WEIGHT] > 0.0:
                lo = min(lo, gauss[blocks[c], j, G_MIN])
                hi = max(hi, gauss[blocks[c], j, G_MAX])
        if lo < hi:
            return False
    return True


@numba.njit(cache=True, inline="always")
def _null_split_wins(i, slot, leaves, weka):
    """Pre-pruning, when the null split passes the Hoeffding test at leaf ``slot`` of tree
    ``i``: River deactivates the leaf, then its memory manager, the tree being under its size
    limit, reactivates it with empty observers (MOA's enforceTrackerLimit does the same). The
    Weka port deactivates it for good."""
    _reset_observers(i, slot, leaves)
    if weka:
        leaves.last_attempt[slot] = np.inf


@numba.njit(cache=True, inline="always")
def attempt_scratch(n_features, n_split_points, k):
    """The scratch of :func:`_attempt_split` for trees of ``n_features`` features and ``k``
    labels: ``(floats, classes)``."""
    width = _scratch_columns(n_split_points)
    size = 3 * n_features + 5 * width + n_features * (2 * width + 2)
    if k >= _NARROW_MIN_CLASSES:
        size += ITEM_ROWS * item_columns(n_split_points)
    return np.empty(size), np.empty(k, dtype=np.int64)


# Compiled without Numba's runtime (no array is allocated here: the caller hands the scratch of
# attempt_scratch): a function with the runtime counts a reference, in and out, to each array it
# binds, atomically, and the records given here hold about thirty, on the path of every attempt.
@numba.njit(cache=True, _nrt=False)
def _attempt_split(
    i, node, weight_seen, learners, options, nodes, leaves, work, kept, scratch, spare
):  # fmt: skip
    """River's ``HoeffdingTreeClassifier._attempt_to_split`` on leaf ``node`` of tree ``i``;
    ``kept`` is ``leaves.kept``, an argument so that Numba prunes by its type the branch that
    trees keeping no sums (``None``) never take; ``scratch`` and ``spare`` are
    :func:`attempt_scratch`'s."""
    features, n_categories = learners.features, learners.n_categories
    nominal_offset = learners.nominal_offset
    split_confidence, tie_threshold = learners.split_confidence[i], learners.tie_threshold[i]
    n_split_points, min_branch_fraction = options.n_split_points, options.min_branch_fraction
    max_share_to_split = options.max_share_to_split
    kind, feature, value, child, node_slot, n_nodes = nodes
    gauss, nominal = leaves.gauss, leaves.nominal

    # The leaf's entries, indexed by position (the per-class rows below and ``work``'s too);
    # ``present`` lists the positions in class order, the order of every loop.
    slot = node_slot[i, node]
    start, end = leaves.start[slot], leaves.start[slot] + leaves.room[slot]
    stats = leaves.class_weight[i, start:end]
    observed = leaves.observed[i, start:end]
    blocks = leaves.blocks[i, start:end]
    listed = leaves.listed[i, start:end]
    present = leaves.present[i, start : start + leaves.n_present[slot]]
    n_classes = 0
    n_listed = 0
    majority = 0.0
    for c in present:
        # the Weka port counts the classes in its class dict, even at zero weight
        if stats[c] != 0.0 or (options.weka and listed[c]):
            n_classes += 1
        # River's range of merit counts every class in its class dict (len(leaf.stats)), even
        # one a split listed at zero weight; only its purity test counts nonzero weights
        if stats[c] != 0.0 or listed[c]:
            n_listed += 1
        majority = max(majority, stats[c])
    if n_classes < 2:
        return
    if not options.weka and majority > 0.0 and majority / weight_seen > max_share_to_split:
        # River offers only the null split here, which wins (see below).
        _reset_observers(i, slot, leaves)
        return

    # The candidates are the null split, then the features; River sorts them stably by merit
    # and takes the last two, so the last (in subset order) of equal best merits wins. The fold
    # below keeps that rule in any order of evaluation (a tie goes to the larger feature index).
    # Features are evaluated exactly, highest upper bound on their merit first, only while one
    # of them could still change the outcome: the Hoeffding test, which bounds alone often
    # settle with no exact evaluation at all, or the best candidate when the test will pass.
    # A numeric feature's bound starts as the leaf's ceiling and is narrowed, when it comes
    # first, by _bounds_of_merits (within about 6e-4 bits, at a fraction of an exact
    # evaluation's cost, from sums the tree keeps between attempts: _kept_bounds_of_merits);
    # the two best features of the leaf's last attempt (``leaves.leads``)
    # are narrowed first, which settles the attempts whose Hoeffding bound is wide. At a leaf
    # of fewer than _NARROW_MIN_CLASSES classes every numeric feature is narrowed at once, to
    # its ceiling and floor (_chi_square_ceilings). Any order gives the same result.
    value_range = math.log2(max(n_listed, 2))
    bound = math.sqrt(
        value_range * value_range * math.log(1.0 / split_confidence) / (2.0 * weight_seen)
    )
    decided = bound >= tie_threshold  # the test depends on the gap, not on the tie rule
    n_features = features.shape[1]
    kinds = n_categories[i]
    few = present.shape[0] < _NARROW_MIN_CLASSES
    if few and _no_threshold_anywhere(observed, blocks, gauss, kinds, present):
        # Every candidate's merit is -inf: what the loop below ends with, at once (its ceilings
        # would all be -inf, and the last feature takes the tie). Common where the weights
        # reach the grace period at every example: the observers, reset by the attempt before,
        # hold one example, so each feature's range is a single point.
        leaves.leads[slot, 0] = n_features - 1
        leaves.leads[slot, 1] = n_features - 2 if n_features > 1 else -1
        if not decided:
            _null_split_wins(i, slot, leaves, options.weka)
        return
    n_log_n = work[W_NLOGN]
    for c in present:
        n = observed[c]
        n_log_n[c] = n * math.log2(n) if n > 0.0 else 0.0
    # the class weights' entropy, from those logarithms where they are the observed weights
    pre_entropy = _entropy_with(stats, present, n_log_n, observed)
    best = -np.inf  # the null split's merit under the min-branch-fraction rule
    second = -np.inf
    best_kind = NO_SPLIT
    best_feature = -1
    second_feature = -1
    best_value = 0.0
    numeric_ceiling, nominal_ceiling = _merit_ceilings(
        observed, present, pre_entropy, leaves.incomplete[slot], n_log_n
    )
    # Per feature, in one allocation (an attempt is frequent and often short), lower and upper
    # bounds on its merit, then its stage (0: to narrow, 1: narrowed or nominal, 2: evaluated);
    # the scratch of _bounds_of_merits and _chi_square_ceilings, and the bounds on each
    # numeric feature's thresholds that _best_numeric reads.
    lower = 0
    upper = n_features
    stage = 2 * n_features
    width = _scratch_columns(n_split_points)
    bounds = scratch[: 3 * n_features]
    at = 3 * n_features
    acc = scratch[at : at + 5 * width].reshape((5, width))
    at += 5 * width
    table = scratch[at : at + n_features * (2 * width + 2)].reshape((n_features, 2 * width + 2))
    at += n_features * (2 * width + 2)
    # the scratch of the bounds' sums, there when a leaf can narrow (attempt_scratch)
    columns = item_columns(n_split_points)
    items = scratch[at : at + ITEM_ROWS * columns].reshape((-1, columns))
    for j in range(n_features):
        bounds[lower + j] = -np.inf
        bounds[upper + j] = nominal_ceiling if kinds[j] > 0 else numeric_ceiling
        bounds[stage + j] = 1.0 if kinds[j] > 0 else 0.0
    # One vectorised pass of ceilings and floors over every numeric feature (_chi_square_ceilings)
    # opens the attempt: with fewer than _NARROW_MIN_CLASSES classes it narrows them for good
    # (the loop below would narrow every feature at its first step anyway); at a leaf of more,
    # when the Hoeffding test depends on the gap, it starts them off, so that only the features
    # it leaves open get the tight bounds of _bounds_of_merits (on mediamill-reduced, Ada.OLMR's
    # seed 1, 2.1 features narrowed per failed attempt instead of 18.8). Not where the tree keeps
    # sums (KEEP_MIN_CLASSES): their bounds cost less than the pass (at 1,000 labels, the pass
    # made Ada.OLMR 1.7x slower).
    passed = few or (decided and present.shape[0] < KEEP_MIN_CLASSES)
    if passed:
        zero = np.int64(0)  # not a literal 0: Numba would compile the ceilings again
        _chi_square_ceilings(
            zero, n_features, observed, blocks, gauss, kinds, pre_entropy, n_split_points,
            min_branch_fraction, work, present, acc, table,
        )  # fmt: skip
        for j in range(n_features):
            if kinds[j] == 0:
                bounds[lower + j] = table[j, 2 * width + 1]
                bounds[upper + j] = min(table[j, width], numeric_ceiling)
                bounds[stage + j] = 1.0 if few else 0.0
    stopped = False
    first = leaves.leads[slot, 0]
    first = first if 0 <= first < n_features else -1
    then = leaves.leads[slot, 1]
    then = then if 0 <= then < n_features and then != first else -1
    lead = 0
    while True:
        # The unevaluated feature of highest upper bound (a lead not narrowed yet first), and
        # the two best lower bounds on the final merits (exact ones for the features evaluated).
        j = -1
        ceiling = -np.inf
        top = best
        runner_up = second
        for f in range(n_features):
            if bounds[stage + f] == 2.0:
                continue
            if j < 0 or bounds[upper + f] > ceiling:
                j = f
                ceiling = bounds[upper + f]
            low = bounds[lower + f]
            if low > top:
                runner_up = top
                top = low
            elif low > runner_up:
                runner_up = low
        if decided and max(best, ceiling) - runner_up <= bound - _CEILING_SLACK:
            stopped = True
            break
        # Done once no feature left can become the best, nor (if the test depends on it) the
        # second best: a merit below both changes neither, a tie included.
        if j < 0 or ceiling < (second if decided else best):
            break
        while lead < 2:
            hint = first if lead == 0 else then
            lead += 1
            if hint >= 0 and bounds[stage + hint] == 0.0:
                j = hint
                break
        if bounds[stage + j] == 0.0:
            # Narrow j (only at a leaf of _NARROW_MIN_CLASSES classes or more: with fewer the
            # pass above narrowed every feature); if the test will pass whatever the gap, the
            # best candidate is needed exactly and every feature will be narrowed: narrow them
            # all at once.
            every = not decided
            for f in range(0 if every else j, n_features if every else j + 1):
                if bounds[stage + f] != 0.0:
                    continue
                if kept is None:
                    ahead = -1
                    if f + 1 < n_features and bounds[stage + f + 1] == 0.0:
                        ahead = f + 1
                    low, high = _bounds_of_merits(
                        observed, blocks, gauss, f, pre_entropy, n_split_points,
                        min_branch_fraction, n_log_n, present, acc, ahead, items,
                    )  # fmt: skip
                else:
                    low, high = _kept_bounds_of_merits(
                        i, slot, f, observed, blocks, gauss, pre_entropy, n_split_points,
                        min_branch_fraction, n_log_n, present, acc, items, kept,
                        leaves.kept_log, leaves.kept_acc,
                    )  # fmt: skip
                bounds[lower + f] = max(bounds[lower + f], low)
                bounds[upper + f] = min(bounds[upper + f], high)
                bounds[stage + f] = 1.0
            continue
        if ceiling == -np.inf:
            # No threshold of any feature left can be valid (they are numeric): their
            # merits are -inf, as _best_numeric would return them, and at -inf the last of
            # them takes a tie.
            if best == -np.inf:
                for f in range(n_features):
                    if bounds[stage + f] != 2.0 and f > best_feature:
                        second_feature = best_feature
                        best_feature = f
                        best_kind = NO_SPLIT
                        best_value = 0.0
            break
        bounds[stage + j] = 2.0
        if kinds[j] > 0:
            merit, candidate_kind, candidate_value = _best_nominal(
                blocks, nominal, nominal_offset[i, j], kinds[j], pre_entropy,
                min_branch_fraction, options.binary_nominal, work, present,
            )  # fmt: skip
        else:
            if not passed:  # else the pass above has the feature's row already
                _chi_square_ceilings(
                    j, j + 1, observed, blocks, gauss, kinds, pre_entropy, n_split_points,
                    min_branch_fraction, work, present, acc, table,
                )  # fmt: skip
            merit, candidate_value = _best_numeric(
                observed, blocks, gauss, j, pre_entropy, n_split_points, min_branch_fraction, work,
                present, table, second,
            )  # fmt: skip
            candidate_kind = NUMERIC_LE if merit > -np.inf else NO_SPLIT
        if merit > best or (merit == best and j > best_feature):
            second = best
            second_feature = best_feature
            best = merit
            best_kind = candidate_kind
            best_feature = j
            best_value = candidate_value
        elif merit > second:
            second = merit
            second_feature = j
    leaves.leads[slot, 0] = best_feature
    leaves.leads[slot, 1] = second_feature
    if stopped:
        return

    if not (best - second > bound or bound < tie_threshold):
        return
    if best_kind == NO_SPLIT:
        _null_split_wins(i, slot, leaves, options.weka)
        return

    # Branch statistics of the winning split, computed before the slot is recycled.
    j = best_feature
    if best_kind == NUMERIC_LE:
        _gaussian_params(observed, blocks, gauss, j, work, present)
        _numeric_partition(best_value, work, work, present)
        # River lists in a branch every class seen by the observer whose range reaches that side,
        # even when the Gaussian gives it zero weight there (the mean and deviation rows are free).
        for c in present:
            seen = work[W_N, c] > 0.0
            work[W_MU, c] = 1.0 if seen and best_value >= work[W_LO, c] else 0.0
            work[W_SIGMA, c] = 1.0 if seen and best_value < work[W_HI, c] else 0.0
        n_branches = 2
    elif best_kind == NOMINAL_EQ:
        n_cat = n_categories[i, j]
        _nominal_binary(
            blocks, nominal, nominal_offset[i, j], n_cat, int(best_value), work, present
        )
        n_branches = 2
    else:
        n_branches = n_categories[i, j]
        for v in range(n_branches):
            _category_weights(blocks, nominal, nominal_offset[i, j] + v, work, v, present)

    first = n_nodes[i]
    n_nodes[i] += n_branches
    kind[i, node] = best_kind
    feature[i, node] = j
    value[i, node] = best_value
    child[i, node] = first
    _reset_observers(i, slot, leaves)
    # the children may take the slot back at once: keep its classes' positions (its entries
    # stay where they are until the tree's rows are compacted, after the call)
    classes = spare[: present.shape[0]]
    for q in range(present.shape[0]):
        classes[q] = present[q]
    _free_slot(i, slot, leaves)
    for b in range(n_branches):
        if best_kind == NOMINAL_MULTIWAY and not _row_sum(work, b, classes) > 0.0:
            kind[i, first + b] = EMPTY
        elif best_kind == NUMERIC_LE:
            listed_initial = work[W_MU if b == 0 else W_SIGMA]
            _new_leaf(i, first + b, work[b], listed_initial, classes, start, nodes, leaves)
        else:
            _new_leaf(i, first + b, work[b], work[b], classes, start, nodes, leaves)
