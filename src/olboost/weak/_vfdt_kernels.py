"""Numba kernels of :class:`olboost.weak.vfdt.VFDTCommittee`: N Hoeffding trees in flat arrays.

The trees follow VFDT (Domingos & Hulten 2000) with the semantics of River's
``HoeffdingTreeClassifier`` (itself a port of MOA's ``HoeffdingTree``): Gaussian numeric attribute
observers (``GaussianSplitter``), nominal observers offering a multiway split and one binary
``x == v`` split per value (``NominalSplitterClassif``), information gain with the min-branch-fraction
rule, the null split as a candidate (pre-pruning), ``max_share_to_split`` and lazily created
branches for nominal values unseen when a multiway split was made.

Layout. Tree ``i``'s nodes live in row ``i`` of the node arrays, node 0 being the root. An internal
node stores its kind, split feature (a position in the learner's feature subset), split value and
the index of its first child; its children are consecutive (2 for a binary split, one per category
for a multiway split, of which those not yet created have kind ``EMPTY``). A leaf stores the slot of
its statistics in the leaf pool, shared by all trees; a slot is freed when its leaf splits, so the
pool holds one slot per live leaf. Per slot: class weights (``leaf_class``), class weights seen by
the attribute observers since the leaf was created (``leaf_obs``; it differs from ``leaf_class`` by
the initial statistics a leaf inherits from its parent's split, and is shared by every numeric
attribute since no value is ever missing), per (feature, class) Gaussian statistics (``leaf_gauss``:
mean, sum of squared deviations, min, max), and per (nominal category, class) weights
(``leaf_nom``).

Every kernel is deterministic and sequential over trees and examples, so results are bit-identical
whatever the capacities and whether or not the state went through pickle.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# Node kinds.
LEAF = 0
NUMERIC_LE = 1  # branch 0 when x[f] <= value, else branch 1
NOMINAL_EQ = 2  # branch 0 when x[f] == value, else branch 1
NOMINAL_MULTIWAY = 3  # branch x[f]
EMPTY = 4  # a multiway branch whose category was unseen at split time; no leaf yet
NO_SPLIT = -1  # the null split (or a splitter with no valid candidate)

# Fields of leaf_gauss[slot, feature, class].
G_MEAN = 0
G_SSD = 1  # Welford's running sum of squared deviations
G_MIN = 2
G_MAX = 3
N_GAUSS_FIELDS = 4

_SQRT2 = math.sqrt(2.0)


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
def learn_demand(weights, n_nodes, max_branches):
    """Validate ``weights`` and bound the storage one ``learn`` call may need.

    Returns ``(ok, nodes, slots)``: ``ok`` is False if a weight is negative or not finite; ``nodes``
    is the largest node count a tree may reach and ``slots`` the number of free leaf slots needed,
    each positive weight being one learned example that can split one leaf into ``max_branches``.
    """
    n, k = weights.shape
    nodes = 0
    slots = 0
    for i in range(n):
        count = 0
        for c in range(k):
            w = weights[i, c]
            if not (w >= 0.0 and w < np.inf):
                return False, 0, 0
            if w > 0.0:
                count += 1
        nodes = max(nodes, n_nodes[i] + count * max_branches)
        slots += count * (max_branches - 1)
    return True, nodes, slots


# ------------------------------------------------------------------------------ split criterion


@numba.njit(cache=True)
def _entropy(dist):
    """Entropy (bits) of a weight vector, computed as River's ``InfoGainSplitCriterion`` does."""
    entropy = 0.0
    total = 0.0
    for d in dist:
        if d > 0.0:
            entropy -= d * math.log2(d)
            total += d
    if total > 0.0:
        return (entropy + total * math.log2(total)) / total
    return 0.0


@numba.njit(cache=True)
def _merit(pre_entropy, post, n_branches, min_branch_fraction):
    """Information gain of a split with branch class weights ``post[:n_branches]``; ``-inf`` unless
    at least two branches hold more than ``min_branch_fraction`` of the weight (MOA's rule)."""
    total = 0.0
    for b in range(n_branches):
        total += np.sum(post[b])
    if not total > 0.0:
        return -np.inf
    big = 0
    for b in range(n_branches):
        if np.sum(post[b]) / total > min_branch_fraction:
            big += 1
    if big < 2:
        return -np.inf
    post_entropy = 0.0
    for b in range(n_branches):
        post_entropy += np.sum(post[b]) * _entropy(post[b])
    return pre_entropy - post_entropy / total


# ------------------------------------------------------------------------------ split candidates


@numba.njit(cache=True)
def _gaussian_params(leaf_obs, leaf_gauss, slot, j, mu, sigma):
    """Per-class mean and standard deviation (``ddof=1``, 0 below two units of weight), as River's
    ``proba.Gaussian``."""
    for c in range(leaf_obs.shape[1]):
        n = leaf_obs[slot, c]
        mu[c] = leaf_gauss[slot, j, c, G_MEAN]
        sigma[c] = math.sqrt(leaf_gauss[slot, j, c, G_SSD] / (n - 1.0)) if n > 1.0 else 0.0


@numba.njit(cache=True)
def _numeric_partition(leaf_obs, leaf_gauss, slot, j, threshold, mu, sigma, post):
    """Estimated class weights left (``x <= threshold``) and right of a threshold, from each
    class's Gaussian, as River's ``GaussianSplitter._class_dists_from_binary_split``."""
    for c in range(leaf_obs.shape[1]):
        n = leaf_obs[slot, c]
        post[0, c] = 0.0
        post[1, c] = 0.0
        if n <= 0.0:
            continue
        if threshold < leaf_gauss[slot, j, c, G_MIN]:
            post[1, c] = n
        elif threshold >= leaf_gauss[slot, j, c, G_MAX]:
            post[0, c] = n
        else:
            cdf = 0.0
            if sigma[c] > 0.0:
                cdf = 0.5 * (1.0 + math.erf(((threshold - mu[c]) / sigma[c]) / _SQRT2))
            post[0, c] = cdf * n
            post[1, c] = n - post[0, c]


@numba.njit(cache=True)
def _best_numeric(leaf_obs, leaf_gauss, slot, j, pre_entropy, n_split_points,
                  min_branch_fraction, work):
    """Best threshold of numeric feature ``j``: ``(merit, threshold)``, merit ``-inf`` if none.

    Thresholds are spread evenly strictly inside the range observed over all classes; the first
    best one wins ties (MOA's ``GaussianNumericAttributeClassObserver``)."""
    k = leaf_obs.shape[1]
    lo = np.inf
    hi = -np.inf
    for c in range(k):
        if leaf_obs[slot, c] > 0.0:
            lo = min(lo, leaf_gauss[slot, j, c, G_MIN])
            hi = max(hi, leaf_gauss[slot, j, c, G_MAX])
    best = -np.inf
    best_threshold = 0.0
    if lo == np.inf:
        return best, best_threshold
    mu = work[-2]
    sigma = work[-1]
    _gaussian_params(leaf_obs, leaf_gauss, slot, j, mu, sigma)
    step = (hi - lo) / (n_split_points + 1.0)
    for t in range(n_split_points):
        threshold = lo + step * (t + 1)
        if not (lo < threshold < hi):
            continue
        _numeric_partition(leaf_obs, leaf_gauss, slot, j, threshold, mu, sigma, work)
        merit = _merit(pre_entropy, work, 2, min_branch_fraction)
        if merit > best:
            best = merit
            best_threshold = threshold
    return best, best_threshold


@numba.njit(cache=True)
def _nominal_multiway(leaf_nom, slot, offset, n_categories, post):
    """Class weights of each observed category of a nominal feature, written to ``post`` in
    increasing category order; returns how many categories were observed."""
    n_obs = 0
    for v in range(n_categories):
        row = leaf_nom[slot, offset + v]
        if np.sum(row) > 0.0:
            post[n_obs, :] = row
            n_obs += 1
    return n_obs


@numba.njit(cache=True)
def _nominal_binary(leaf_nom, slot, offset, n_categories, value, post):
    """Class weights of ``x == value`` (branch 0) and ``x != value`` (branch 1)."""
    post[0, :] = 0.0
    post[1, :] = 0.0
    for v in range(n_categories):
        row = leaf_nom[slot, offset + v]
        if np.sum(row) > 0.0:
            b = 0 if v == value else 1
            for c in range(row.shape[0]):
                post[b, c] += row[c]


@numba.njit(cache=True)
def _best_nominal(leaf_nom, slot, offset, n_categories, pre_entropy, min_branch_fraction, work):
    """Best split of a nominal feature: ``(merit, kind, value)``. The multiway split is the
    default (even at merit ``-inf``, as in River); a binary ``x == v`` split replaces it only if
    strictly better, the first best ``v`` winning ties."""
    n_obs = _nominal_multiway(leaf_nom, slot, offset, n_categories, work)
    best = _merit(pre_entropy, work, n_obs, min_branch_fraction)
    kind = NOMINAL_MULTIWAY
    value = 0.0
    for v in range(n_categories):
        if np.sum(leaf_nom[slot, offset + v]) > 0.0:
            _nominal_binary(leaf_nom, slot, offset, n_categories, v, work)
            merit = _merit(pre_entropy, work, 2, min_branch_fraction)
            if merit > best:
                best = merit
                kind = NOMINAL_EQ
                value = float(v)
    return best, kind, value


# ------------------------------------------------------------------------------ leaves


@numba.njit(cache=True)
def _new_leaf(i, node, initial, node_kind, node_slot, leaf_active, leaf_last, leaf_class,
              leaf_obs, leaf_gauss, leaf_nom, free_slots, n_free):
    """Turn ``node`` of tree ``i`` into a fresh active leaf with class weights ``initial``."""
    n_free[0] -= 1
    slot = free_slots[n_free[0]]
    leaf_class[slot, :] = initial
    leaf_obs[slot, :] = 0.0
    leaf_gauss[slot] = 0.0
    leaf_nom[slot] = 0.0
    leaf_active[slot] = True
    # River starts a leaf's grace period from the weight it inherits.
    leaf_last[slot] = np.sum(initial)
    node_kind[i, node] = LEAF
    node_slot[i, node] = slot


@numba.njit(cache=True)
def _update_leaf(i, slot, x, label, w, features, n_categories, nominal_offset, leaf_active,
                 leaf_class, leaf_obs, leaf_gauss, leaf_nom):
    """Add example ``(x, label)`` of weight ``w`` to a leaf's statistics (weighted Welford)."""
    leaf_class[slot, label] += w
    if not leaf_active[slot]:
        return
    n_before = leaf_obs[slot, label]
    n = n_before + w
    leaf_obs[slot, label] = n
    for j in range(features.shape[1]):
        v = x[features[i, j]]
        if n_categories[i, j] > 0:
            leaf_nom[slot, nominal_offset[i, j] + int(v), label] += w
            continue
        g = leaf_gauss[slot, j, label]
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
def _attempt_split(i, node, weight_seen, split_confidence, tie_threshold, features,
                   n_categories, nominal_offset, n_split_points, min_branch_fraction,
                   max_share_to_split, node_kind, node_feature, node_value, node_child,
                   node_slot, n_nodes, leaf_active, leaf_last, leaf_class, leaf_obs, leaf_gauss,
                   leaf_nom, free_slots, n_free, work):
    """River's ``HoeffdingTreeClassifier._attempt_to_split`` on leaf ``node`` of tree ``i``."""
    slot = node_slot[i, node]
    stats = leaf_class[slot]
    k = stats.shape[0]
    n_classes = 0
    majority = 0.0
    for c in range(k):
        if stats[c] != 0.0:
            n_classes += 1
        majority = max(majority, stats[c])
    if n_classes < 2:
        return
    if majority > 0.0 and majority / weight_seen > max_share_to_split:
        # River offers only the null split here, which wins: the leaf is deactivated.
        leaf_active[slot] = False
        return

    # Candidates in River's order (null split, then features in subset order); River sorts them
    # stably by merit and takes the last two, so the last of equal best merits wins.
    pre_entropy = _entropy(stats)
    best = -np.inf  # the null split's merit under the min-branch-fraction rule
    second = -np.inf
    best_kind = NO_SPLIT
    best_feature = -1
    best_value = 0.0
    for j in range(features.shape[1]):
        if n_categories[i, j] > 0:
            merit, kind, value = _best_nominal(leaf_nom, slot, nominal_offset[i, j],
                                               n_categories[i, j], pre_entropy,
                                               min_branch_fraction, work)
        else:
            merit, value = _best_numeric(leaf_obs, leaf_gauss, slot, j, pre_entropy,
                                         n_split_points, min_branch_fraction, work)
            kind = NUMERIC_LE if merit > -np.inf else NO_SPLIT
        if merit >= best:
            second = best
            best = merit
            best_kind = kind
            best_feature = j
            best_value = value
        elif merit > second:
            second = merit

    value_range = math.log2(max(n_classes, 2))
    bound = math.sqrt(value_range * value_range * math.log(1.0 / split_confidence)
                      / (2.0 * weight_seen))
    if not (best - second > bound or bound < tie_threshold):
        return
    if best_kind == NO_SPLIT:
        leaf_active[slot] = False
        return

    # Branch statistics of the winning split, computed before the slot is recycled.
    j = best_feature
    if best_kind == NUMERIC_LE:
        _gaussian_params(leaf_obs, leaf_gauss, slot, j, work[-2], work[-1])
        _numeric_partition(leaf_obs, leaf_gauss, slot, j, best_value, work[-2], work[-1], work)
        n_branches = 2
    elif best_kind == NOMINAL_EQ:
        _nominal_binary(leaf_nom, slot, nominal_offset[i, j], n_categories[i, j],
                        int(best_value), work)
        n_branches = 2
    else:
        n_branches = n_categories[i, j]
        offset = nominal_offset[i, j]
        for v in range(n_branches):
            work[v, :] = leaf_nom[slot, offset + v]

    first = n_nodes[i]
    n_nodes[i] += n_branches
    node_kind[i, node] = best_kind
    node_feature[i, node] = j
    node_value[i, node] = best_value
    node_child[i, node] = first
    free_slots[n_free[0]] = slot
    n_free[0] += 1
    for b in range(n_branches):
        if best_kind == NOMINAL_MULTIWAY and not np.sum(work[b]) > 0.0:
            node_kind[i, first + b] = EMPTY
        else:
            _new_leaf(i, first + b, work[b], node_kind, node_slot, leaf_active, leaf_last,
                      leaf_class, leaf_obs, leaf_gauss, leaf_nom, free_slots, n_free)


@numba.njit(cache=True)
def _branch(i, node, x, features, node_kind, node_feature, node_value, node_child):
    """The child of internal ``node`` that ``x`` goes to (possibly ``EMPTY``)."""
    kind = node_kind[i, node]
    v = x[features[i, node_feature[i, node]]]
    first = node_child[i, node]
    if kind == NUMERIC_LE:
        return first if v <= node_value[i, node] else first + 1
    if kind == NOMINAL_EQ:
        return first if v == node_value[i, node] else first + 1
    return first + int(v)


@numba.njit(cache=True)
def _learn_one(i, x, label, w, grace_period, split_confidence, tie_threshold, features,
               n_categories, nominal_offset, n_split_points, min_branch_fraction,
               max_share_to_split, node_kind, node_feature, node_value, node_child, node_slot,
               n_nodes, leaf_active, leaf_last, leaf_class, leaf_obs, leaf_gauss, leaf_nom,
               free_slots, n_free, work):
    """River's ``HoeffdingTreeClassifier.learn_one`` for tree ``i``."""
    node = 0
    while node_kind[i, node] != LEAF:
        child = _branch(i, node, x, features, node_kind, node_feature, node_value, node_child)
        if node_kind[i, child] == EMPTY:
            # A category unseen when the multiway split was made: River grows the branch and
            # trains the new leaf without attempting to split it.
            work[0, :] = 0.0
            _new_leaf(i, child, work[0], node_kind, node_slot, leaf_active, leaf_last,
                      leaf_class, leaf_obs, leaf_gauss, leaf_nom, free_slots, n_free)
            slot = node_slot[i, child]
            _update_leaf(i, slot, x, label, w, features, n_categories, nominal_offset,
                         leaf_active, leaf_class, leaf_obs, leaf_gauss, leaf_nom)
            return
        node = child
    slot = node_slot[i, node]
    _update_leaf(i, slot, x, label, w, features, n_categories, nominal_offset, leaf_active,
                 leaf_class, leaf_obs, leaf_gauss, leaf_nom)
    if not leaf_active[slot]:
        return
    weight_seen = np.sum(leaf_class[slot])
    if weight_seen - leaf_last[slot] >= grace_period[i]:
        leaf_last[slot] = weight_seen
        _attempt_split(i, node, weight_seen, split_confidence[i], tie_threshold[i],
                       features, n_categories, nominal_offset, n_split_points,
                       min_branch_fraction, max_share_to_split, node_kind, node_feature,
                       node_value, node_child, node_slot, n_nodes, leaf_active, leaf_last,
                       leaf_class, leaf_obs, leaf_gauss, leaf_nom, free_slots, n_free, work)


# ------------------------------------------------------------------------------ committee calls


@numba.njit(cache=True)
def learn(x, weights, weight_multiplier, grace_period, split_confidence, tie_threshold,
          features, n_categories, nominal_offset, n_split_points, min_branch_fraction,
          max_share_to_split, node_kind, node_feature, node_value, node_child, node_slot,
          n_nodes, leaf_active, leaf_last, leaf_class, leaf_obs, leaf_gauss, leaf_nom,
          free_slots, n_free, work):
    """Train every tree: tree ``i`` learns ``(x, l)`` with weight ``weights[i, l]`` times its
    multiplier, for each label ``l`` in increasing order with a positive weight.

    The caller guarantees the node and slot capacity given by :func:`learn_demand`."""
    n, k = weights.shape
    for i in range(n):
        for label in range(k):
            w = weights[i, label] * weight_multiplier[i]
            if w > 0.0:
                _learn_one(i, x, label, w, grace_period, split_confidence, tie_threshold,
                           features, n_categories, nominal_offset, n_split_points,
                           min_branch_fraction, max_share_to_split, node_kind, node_feature,
                           node_value, node_child, node_slot, n_nodes, leaf_active, leaf_last,
                           leaf_class, leaf_obs, leaf_gauss, leaf_nom, free_slots, n_free, work)


@numba.njit(cache=True)
def _subtree_weights(i, lowest, n_categories, node_kind, node_feature, node_child, node_slot,
                     n_nodes, leaf_class, totals):
    """``totals[node]`` = weight of the leaves under ``node`` for every node of tree ``i`` from
    ``lowest`` on, summed child by child as River's recursive ``DTBranch.total_weight``.

    Children always come after their parent, so one backward sweep suffices."""
    for node in range(n_nodes[i] - 1, lowest - 1, -1):
        kind = node_kind[i, node]
        if kind == LEAF:
            totals[node] = np.sum(leaf_class[node_slot[i, node]])
        elif kind == EMPTY:
            totals[node] = 0.0
        else:
            n_branches = 2
            if kind == NOMINAL_MULTIWAY:
                n_branches = n_categories[i, node_feature[i, node]]
            first = node_child[i, node]
            total = 0.0
            for b in range(n_branches):
                total += totals[first + b]
            totals[node] = total


@numba.njit(cache=True)
def _most_common_child(i, node, n_categories, node_kind, node_feature, node_child, node_slot,
                       n_nodes, leaf_class, totals):
    """River's ``NominalMultiwayBranch.most_common_path``: the existing child with the most
    weight below it (first one on ties), used to predict for an unseen category."""
    first = node_child[i, node]
    _subtree_weights(i, first, n_categories, node_kind, node_feature, node_child, node_slot,
                     n_nodes, leaf_class, totals)
    best = -1
    for b in range(n_categories[i, node_feature[i, node]]):
        child = first + b
        if node_kind[i, child] != EMPTY and (best < 0 or totals[child] > totals[best]):
            best = child
    return best


@numba.njit(cache=True)
def predict(x, features, n_categories, leaf_prior, node_kind, node_feature, node_value,
            node_child, node_slot, n_nodes, leaf_class, totals, out):
    """Write in ``out[i]`` the smoothed class distribution of the leaf of tree ``i`` that ``x``
    reaches: ``(w[c] + leaf_prior) / (W + k * leaf_prior)``, uniform if that is 0/0."""
    n, k = out.shape
    for i in range(n):
        node = 0
        while node_kind[i, node] != LEAF:
            child = _branch(i, node, x, features, node_kind, node_feature, node_value, node_child)
            if node_kind[i, child] == EMPTY:
                child = _most_common_child(i, node, n_categories, node_kind, node_feature,
                                           node_child, node_slot, n_nodes, leaf_class, totals)
            node = child
        stats = leaf_class[node_slot[i, node]]
        denominator = np.sum(stats) + k * leaf_prior
        for c in range(k):
            if denominator > 0.0:
                out[i, c] = (stats[c] + leaf_prior) / denominator
            else:
                out[i, c] = 1.0 / k
