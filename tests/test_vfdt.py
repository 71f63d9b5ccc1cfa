"""Tests of :class:`olboost.weak.vfdt.VFDTCommittee` against a slow pure-Python Hoeffding tree."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from helpers import best_numeric
from olboost.weak import _vfdt_kernels as K
from olboost.weak.vfdt import VFDTCommittee

# ------------------------------------------------------------------------------ reference tree


class RefLeaf:
    def __init__(self, stats):
        self.stats = list(stats)
        self.last_attempt = sum(self.stats)
        # the Weka port's class dict and deactivation (semantics="weka_port")
        self.listed = {c for c, s in enumerate(self.stats) if s > 0.0}
        self.inactive = False
        # feature position -> {class: [n, mean, ssd, min, max]}
        self.observers: dict[int, dict] = {}
        # feature position -> {(value, class): weight}
        self.nominal: dict[int, dict] = {}


class RefBranch:
    def __init__(self, kind, feature, value, children):
        self.kind, self.feature, self.value, self.children = kind, feature, value, children


def entropy(dist):
    h = 0.0
    total = 0.0
    for d in dist:
        if d > 0.0:
            h -= d * math.log2(d)
            total += d
    return (h + total * math.log2(total)) / total if total > 0.0 else 0.0


def merit(pre, post, min_frac):
    sums = [sum(b) for b in post]
    total = sum(sums)
    if not total > 0.0 or sum(s / total > min_frac for s in sums) < 2:
        return -math.inf
    return entropy(pre) - sum(s * entropy(b) for s, b in zip(sums, post, strict=True)) / total


class RefTree:
    """One Hoeffding tree written for clarity, with the semantics the kernels implement."""

    def __init__(
        self,
        k,
        columns,
        n_categories,
        grace,
        delta,
        tau,
        n_split_points=10,
        min_frac=0.01,
        max_share=0.99,
        prior=1.0,
        binary=True,
        weka=False,
    ):
        """``weka``: the rules of the Python port of Weka's HoeffdingTree (vitords), as its
        ``HNode.update_distribution``, ``ValueDistribution.add``, ``HoeffdingTree.try_split`` and
        ``HNode.get_distribution`` write them."""
        self.binary, self.weka = binary, weka
        self.k, self.columns, self.n_categories = k, list(columns), list(n_categories)
        self.grace, self.delta, self.tau = grace, delta, tau
        self.n_split_points, self.min_frac, self.max_share, self.prior = (
            n_split_points,
            min_frac,
            max_share,
            prior,
        )
        self.root = RefLeaf([0.0] * k)
        self.unseen_category_predictions = 0

    def _next(self, node, x):
        v = x[self.columns[node.feature]]
        if node.kind == K.NUMERIC_LE:
            return 0 if v <= node.value else 1
        if node.kind == K.NOMINAL_EQ:
            return 0 if v == node.value else 1
        return int(v)

    def _weight(self, node):
        if isinstance(node, RefLeaf):
            return sum(node.stats)
        return sum(self._weight(c) for c in node.children if c is not None)

    def predict(self, x):
        node = self.root
        while isinstance(node, RefBranch):
            child = node.children[self._next(node, x)]
            if child is None:
                self.unseen_category_predictions += 1
                weights = [self._weight(c) if c is not None else -1.0 for c in node.children]
                child = node.children[int(np.argmax(weights))]
            node = child
        if self.weka:
            dist = [s if c in node.listed else 1.0 for c, s in enumerate(node.stats)]
            return [d / sum(dist) for d in dist]
        total = sum(node.stats) + self.k * self.prior
        if total == 0.0:
            return [1.0 / self.k] * self.k
        return [(s + self.prior) / total for s in node.stats]

    def learn(self, x, label, w):
        parent, branch, node = None, None, self.root
        while isinstance(node, RefBranch):
            parent, branch = node, self._next(node, x)
            node = node.children[branch]
            if node is None:
                node = parent.children[branch] = RefLeaf([0.0] * self.k)
                self._update(node, x, label, w)
                return
        self._update(node, x, label, w)
        seen = sum(node.stats)
        if node.inactive:
            return
        since = seen - node.last_attempt
        if since > self.grace if self.weka else since >= self.grace:
            node.last_attempt = seen
            new = self._attempt(node, seen)
            if new is not None:
                if parent is None:
                    self.root = new
                else:
                    parent.children[branch] = new

    def _update(self, leaf, x, label, w):
        if self.weka and label not in leaf.listed:
            leaf.stats[label] = 1.0  # the port's WeightMass starts at 1
        leaf.listed.add(label)
        leaf.stats[label] += w
        if leaf.inactive:
            return
        for j, col in enumerate(self.columns):
            v = x[col]
            if self.n_categories[j]:
                cell = leaf.nominal.setdefault(j, {})
                start = 1.0 if self.weka else 0.0  # ValueDistribution.add starts at 1
                cell[(int(v), label)] = cell.get((int(v), label), start) + w
                continue
            g = leaf.observers.setdefault(j, {})
            if label not in g:
                g[label] = [0.0, 0.0, 0.0, v, v]
            o = g[label]
            o[3], o[4] = min(o[3], v), max(o[4], v)
            o[0] += w
            old = o[1]
            o[1] = old + (w / o[0]) * (v - old)
            o[2] += w * (v - old) * (v - o[1])

    def _numeric_post(self, g, threshold):
        left, right = [0.0] * self.k, [0.0] * self.k
        for c, (n, mean, ssd, lo, hi) in g.items():
            if threshold < lo:
                right[c] = n
            elif threshold >= hi:
                left[c] = n
            else:
                sigma = math.sqrt(ssd / (n - 1.0)) if n > 1.0 else 0.0
                cdf = (
                    0.5 * (1.0 + math.erf((threshold - mean) / sigma / math.sqrt(2.0)))
                    if sigma > 0.0
                    else 0.0
                )
                left[c] = cdf * n
                right[c] = n - left[c]
        return [left, right]

    def _nominal_posts(self, j, cells):
        values = sorted({v for v, _ in cells})
        rows = {v: [0.0] * self.k for v in values}
        for (v, c), wt in cells.items():
            rows[v][c] += wt
        multi = [rows[v] for v in values]
        cands = [(K.NOMINAL_MULTIWAY, 0.0, multi)]
        # each class's weights by value, summed below without value v's, in the order of the
        # values as before (the same bits): a generator over all pairs of values was 12 of the
        # 69 s of test_vfdt_bounds.py (cProfile, 2026-12-06)
        columns = [[rows[u][c] for u in values] for c in range(self.k)]
        for i, v in enumerate(values if self.binary else ()):
            eq = rows[v]
            neq = [sum(column[:i] + column[i + 1 :]) for column in columns]
            cands.append((K.NOMINAL_EQ, float(v), [eq, neq]))
        return cands

    def _attempt(self, leaf, seen):
        if (len(leaf.listed) if self.weka else sum(s != 0.0 for s in leaf.stats)) < 2:
            return None
        if not self.weka and max(leaf.stats) / seen > self.max_share:
            leaf.observers, leaf.nominal = {}, {}
            return None
        # (merit, kind, feature, value, branch stats); the null split comes first.
        suggestions = [(-math.inf, None, None, None, None)]
        for j in range(len(self.columns)):
            best = (-math.inf, None, None, None, None)
            if self.n_categories[j]:
                for n_, (kind, value, post) in enumerate(self._nominal_posts(j, leaf.nominal[j])):
                    m = merit(leaf.stats, post, self.min_frac)
                    if n_ == 0 or m > best[0]:
                        best = (m, kind, j, value, post)
            else:
                g = leaf.observers[j]
                lo = min(o[3] for o in g.values())
                hi = max(o[4] for o in g.values())
                step = (hi - lo) / (self.n_split_points + 1.0)
                for t in range(self.n_split_points):
                    thr = lo + step * (t + 1)
                    if lo < thr < hi:
                        post = self._numeric_post(g, thr)
                        m = merit(leaf.stats, post, self.min_frac)
                        if m > best[0]:
                            best = (m, K.NUMERIC_LE, j, thr, post)
            suggestions.append(best)
        suggestions.sort(key=lambda s: s[0])  # stable, as River's list.sort
        # River's range of merit: every class in the leaf's dict (len(leaf.stats)), a class a
        # split listed at zero weight included (the purity test above counts nonzero weights)
        n_classes = len(leaf.listed | {c for c, s in enumerate(leaf.stats) if s != 0.0})
        r = math.log2(max(n_classes, 2))
        eps = math.sqrt(r * r * math.log(1.0 / self.delta) / (2.0 * seen))
        best, second = suggestions[-1], suggestions[-2]
        if not (best[0] - second[0] > eps or eps < self.tau):
            return None
        if best[1] is None:  # pre-pruning: the leaf restarts its observers (Weka port: for good)
            leaf.observers, leaf.nominal = {}, {}
            leaf.inactive = self.weka
            return None
        _, kind, j, value, post = best
        if kind == K.NOMINAL_MULTIWAY:
            present = sorted({v for v, _ in leaf.nominal[j]})
            children = [None] * self.n_categories[j]
            for v, stats in zip(present, post, strict=True):
                children[v] = RefLeaf(stats)
        else:
            children = [RefLeaf(p) for p in post]
            if kind == K.NUMERIC_LE:
                # a class seen whose range reaches a side is listed there, even at zero weight
                g = leaf.observers[j]
                children[0].listed = {c for c, o in g.items() if value >= o[3]}
                children[1].listed = {c for c, o in g.items() if value < o[4]}
        return RefBranch(kind, j, value, children)

    def structure(self, node=None):
        node = self.root if node is None else node
        if node is None:
            return None
        if isinstance(node, RefLeaf):
            return ("leaf", tuple(node.stats))
        return (
            node.kind,
            node.feature,
            node.value,
            tuple(self.structure(c) if c is not None else None for c in node.children),
        )


def kernel_structure(c: VFDTCommittee, i: int, node: int = 0, leaf_class=None):
    # the leaves' rows gathered once per tree, not once per leaf: 9 ms a call, 15 of the 28 s
    # of two max_depth cases (cProfile, 2026-12-06)
    if leaf_class is None:
        leaf_class = c._dense_leaf_rows()["leaf_class_"]
    kind = int(c.node_kind_[i, node])
    if kind == K.EMPTY:
        return None
    if kind == K.LEAF:
        s = c.node_slot_[i, node]
        return ("leaf", tuple(leaf_class[s].tolist()))
    j = int(c.node_feature_[i, node])
    n_branches = int(c.n_categories_[i, j]) if kind == K.NOMINAL_MULTIWAY else 2
    first = int(c.node_child_[i, node])
    return (
        kind,
        j,
        float(c.node_value_[i, node]),
        tuple(kernel_structure(c, i, first + b, leaf_class) for b in range(n_branches)),
    )


def reference_trees(c: VFDTCommittee) -> list[RefTree]:
    s = c.setup_
    return [
        RefTree(
            c.n_labels_,
            s.features[i],
            c.n_categories_[i],
            s.grace_period[i],
            s.split_confidence[i],
            s.tie_threshold[i],
            c.n_split_points,
            c.min_branch_fraction,
            c.max_share_to_split,
            c.leaf_prior,
            c.nominal_splits == "both",
            c.semantics == "weka_port",
        )
        for i in range(c.n_learners_)
    ]


# ------------------------------------------------------------------------------ streams

NOMINAL = {1: 3, 4: 6, 6: 2, 7: 60}


def mixed_stream(n=700, d=8, k=4, seed=0):
    """Numeric and nominal attributes; labels depend on both, with noise; sparse label weights.

    Column 7 is almost always 0, so its multiway split breaks the min-branch-fraction rule and only
    the binary ``x == 0`` split is valid; column 4 has a rare category, so multiway splits on it
    often leave a branch to create later."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 1] = rng.integers(0, 3, size=n)
    X[:, 4] = rng.choice(6, size=n, p=[0.3, 0.25, 0.2, 0.15, 0.08, 0.02])
    X[:, 6] = rng.integers(0, 2, size=n)
    X[:, 7] = np.where(rng.uniform(size=n) < 0.85, 0, rng.integers(1, 60, size=n))
    score = (
        X[:, 0] + 0.8 * (X[:, 1] == 2) - 0.7 * (X[:, 4] >= 3) + 0.3 * X[:, 2] + 3.0 * (X[:, 7] > 0)
    )
    y = np.digitize(score + 0.3 * rng.normal(size=n), [-0.8, 0.0, 0.8])
    W = np.zeros((n, 5, k))
    for t in range(n):
        W[t, :, y[t]] = rng.uniform(0.2, 1.5, size=5)
        noise = rng.integers(0, k)
        W[t, :, noise] += rng.uniform(0, 0.5, size=5) * (rng.uniform(size=5) < 0.3)
        W[t, rng.uniform(size=5) < 0.2, :] = 0.0  # some learners skip the example
    return X, W


def committee(k=4, **params):
    defaults = dict(
        n_features=6,
        nominal_attributes=NOMINAL,
        grace_period=(3.0, 8.0),
        split_confidence=(0.05, 0.5),
        tie_threshold=(0.05, 0.5),
        weight_multiplier=(1.0, 3.0),
    )
    c = VFDTCommittee(**{**defaults, **params})
    c.start(5, k, 8, seed=7)
    return c


def run(c, X, W):
    out = []
    for x, w in zip(X, W, strict=True):
        out.append(c.predict(x))
        c.learn(x, w)
    return np.array(out)


def assert_matches_reference(c, X, W):
    """Run ``c`` and its reference trees over the stream: same predictions before each example,
    same trees at the end. Returns the reference trees."""
    refs = reference_trees(c)
    mult = c.setup_.weight_multiplier
    for t, (x, w) in enumerate(zip(X, W, strict=True)):
        got = c.predict(x)
        for i, ref in enumerate(refs):
            assert got[i].tolist() == ref.predict(x), (t, i)
        c.learn(x, w)
        for i, ref in enumerate(refs):
            for label in range(w.shape[1]):
                if w[i, label] > 0:
                    ref.learn(x, label, w[i, label] * mult[i])
    for i, ref in enumerate(refs):
        assert kernel_structure(c, i) == ref.structure(), i
    return refs


# ------------------------------------------------------------------------------ tests


def test_matches_reference_exactly():
    X, W = mixed_stream()
    c = committee()
    refs = assert_matches_reference(c, X, W)
    # The stream must exercise every kind of split and the lazily created multiway branches.
    kinds = set(np.unique(np.concatenate([c.node_kind_[i, : c.n_nodes_[i]] for i in range(5)])))
    assert kinds == {K.LEAF, K.NUMERIC_LE, K.NOMINAL_EQ, K.NOMINAL_MULTIWAY, K.EMPTY}
    assert sum(ref.unseen_category_predictions for ref in refs) > 0
    assert c.leaf_counts().min() >= 3


def river_structure(node, columns, k):
    from river.tree.nodes.branch import NominalBinaryBranch, NumericBinaryBranch
    from river.tree.nodes.leaf import HTLeaf

    if isinstance(node, HTLeaf):
        return ("leaf", tuple(float(node.stats.get(c, 0.0)) for c in range(k)))
    j = columns.index(node.feature)
    children = tuple(river_structure(child, columns, k) for child in node.children)
    if isinstance(node, NumericBinaryBranch):
        return (K.NUMERIC_LE, j, node.threshold, children)
    if isinstance(node, NominalBinaryBranch):
        return (K.NOMINAL_EQ, j, float(node.value), children)
    by_code = [None] * NOMINAL[node.feature]
    for position, child in enumerate(children):
        by_code[int(node._r_mapping[position])] = child
    return (K.NOMINAL_MULTIWAY, j, 0.0, tuple(by_code))


def river_trees(c, mode="mc", **params):
    """Each learner of ``c`` as River's HoeffdingTreeClassifier with the learner's drawn
    hyperparameters: ``(columns, trees)``, the columns each learner reads and the trees."""
    river_tree = pytest.importorskip("river.tree")
    s = c.setup_
    columns = [[int(f) for f in s.features[i]] for i in range(len(s.features))]
    trees = [
        river_tree.HoeffdingTreeClassifier(
            grace_period=float(s.grace_period[i]),
            delta=float(s.split_confidence[i]),
            tau=float(s.tie_threshold[i]),
            leaf_prediction=mode,
            nominal_attributes=[f for f in columns[i] if f in NOMINAL],
            **params,
        )
        for i in range(len(columns))
    ]
    return columns, trees


def _rivers_learn(rivers, columns, x, w, multiplier):
    """River's tree ``i`` learns ``x`` (its ``columns[i]``, as Python floats) with each label of
    positive weight ``w[i, label]``, times the learner's ``multiplier[i]``: what the committee's
    ``learn(x, w)`` does."""
    for i, tree in enumerate(rivers):
        xi = {f: float(x[f]) for f in columns[i]}
        for label in range(w.shape[1]):
            if w[i, label] > 0:
                tree.learn_one(xi, label, w=float(w[i, label]) * float(multiplier[i]))


def test_matches_river_hoeffding_tree():
    """Each tree is River's HoeffdingTreeClassifier (majority-class leaves) with the learner's
    hyperparameters, fed the learner's attributes as Python floats: same splits, same leaf
    weights, bit for bit."""
    X, W = mixed_stream(1500)
    c = committee()
    s = c.setup_
    columns, rivers = river_trees(c)
    for x, w in zip(X, W, strict=True):
        c.learn(x, w)
        _rivers_learn(rivers, columns, x, w, s.weight_multiplier)
    for i, tree in enumerate(rivers):
        assert kernel_structure(c, i) == river_structure(tree._root, columns[i], 4), i


def test_range_of_merit_counts_classes_listed_at_zero_weight():
    """River's Hoeffding bound takes its range ``log2(c)`` over every class in the leaf's class
    dict (``InfoGainSplitCriterion.range_of_merit(leaf.stats)``), a class that a numeric split
    listed in the leaf at zero weight included; only its purity test counts nonzero weights.
    Integer-valued numeric attributes give classes of zero variance, whose Gaussians put exactly
    zero weight on one side of a threshold: on this stream (seed 4, 6 classes) a tree that
    counted only the nonzero weights split differently from River by example 900."""
    river_tree = pytest.importorskip("river.tree")
    k, n = 6, 1500
    rng = np.random.default_rng(4)
    X = rng.integers(0, 4, size=(n, 8)).astype(float)
    X[:, 5:] = rng.normal(size=(n, 3))
    y = (X[:, 0] + X[:, 1] * (X[:, 2] > 1) + (X[:, 5] > 0)).astype(int) % k
    W = np.zeros((n, 5, k))
    for t in range(n):
        W[t, :, y[t]] = rng.uniform(0.2, 1.5, size=5)
        if rng.uniform() < 0.3:
            W[t, :, rng.integers(0, k)] += rng.uniform(0, 0.5, size=5)
    c = VFDTCommittee(
        n_features=6, grace_period=(3.0, 8.0), split_confidence=(0.05, 0.5),
        tie_threshold=(0.01, 0.05), weight_multiplier=(1.0, 3.0),
    )  # fmt: skip
    c.start(5, k, 8, seed=4)
    s = c.setup_
    columns = [[int(f) for f in s.features[i]] for i in range(5)]
    rivers = [
        river_tree.HoeffdingTreeClassifier(
            grace_period=float(s.grace_period[i]),
            delta=float(s.split_confidence[i]),
            tau=float(s.tie_threshold[i]),
        )
        for i in range(5)
    ]
    zero_listed = 0
    for t, (x, w) in enumerate(zip(X, W, strict=True)):
        c.learn(x, w)
        _rivers_learn(rivers, columns, x, w, s.weight_multiplier)
        if t % 50 == 0:
            zero_listed = max(zero_listed, listed_zero_classes(c))
    assert zero_listed > 0
    for i, tree in enumerate(rivers):
        assert kernel_structure(c, i) == river_structure(tree._root, columns[i], k), i


def test_learns_a_threshold_concept():
    rng = np.random.default_rng(1)
    c = VFDTCommittee(n_features=None, grace_period=(10.0, 20.0), weight_multiplier=(1.0, 1.0))
    c.start(3, 2, 4, seed=0)
    hits = 0
    for t in range(3000):
        x = rng.uniform(size=4)
        y = int(x[2] > 0.3)
        if t >= 2000:
            hits += (c.predict(x).argmax(axis=1) == y).sum()
        w = np.zeros((3, 2))
        w[:, y] = 1.0
        c.learn(x, w)
    assert hits / 3000 > 0.97
    assert (c.leaf_counts() >= 2).all()
    assert (c.node_feature_[:, 0] == 2).all() and (c.node_kind_[:, 0] == K.NUMERIC_LE).all()


def test_uniform_before_any_data():
    c = committee()
    assert np.array_equal(c.predict(np.zeros(8)), np.full((5, 4), 0.25))
    c = VFDTCommittee(leaf_prior=0.0)
    c.start(2, 3, 4, seed=0)
    assert np.array_equal(c.predict(np.zeros(4)), np.full((2, 3), 1 / 3))


def test_largest_leaf_prior_still_predicts_distributions():
    # leaf_prior up to MAX_LEAF_PRIOR: each row sums to 1 at many labels and with weight seen
    # (a prior of 1.7e308 made k * prior infinite and every row 0); above it, refused by name
    from olboost.weak.vfdt import MAX_LEAF_PRIOR

    c = VFDTCommittee(leaf_prior=MAX_LEAF_PRIOR)
    c.start(2, 101, 3, seed=0)
    weights = np.zeros((2, 101))
    weights[:, 5] = 1e6
    c.learn(np.array([0.5, 1.0, 2.0]), weights)
    H = c.predict(np.array([0.5, 1.0, 2.0]))
    assert np.all(H > 0.0) and np.allclose(H.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    for bad in (MAX_LEAF_PRIOR * 1.01, 1.7e308, math.inf):
        with pytest.raises(ValueError, match="leaf_prior"):
            VFDTCommittee(leaf_prior=bad)


def test_capacity_growth_is_invisible():
    X, W = mixed_stream(400)
    tiny = committee(capacity=1)
    big = committee(capacity=512)
    assert np.array_equal(run(tiny, X, W), run(big, X, W))
    assert tiny.node_kind_.shape[1] > 1 and tiny.leaf_last_.shape[0] > 5
    for i in range(5):
        assert kernel_structure(tiny, i) == kernel_structure(big, i)


def test_two_threads_learn_the_serial_kernel_bits():
    """``n_threads=1`` runs the serial ``learn`` kernel, more threads the parallel one (trees in a
    ``prange``): the same trees and predictions, bit for bit, and each committee hands out its
    own kernel (to the driver, mixes and the service)."""
    X, W = mixed_stream(400)
    one, two = committee(n_threads=1), committee(n_threads=2)
    assert one.compiled().learn is K.learn_serial and two.compiled().learn is K.learn
    assert np.array_equal(run(one, X, W), run(two, X, W))
    for name, value in vars(one).items():
        if name.endswith("_") and isinstance(value, np.ndarray):
            assert np.array_equal(value, getattr(two, name), equal_nan=True), name


def test_one_thread_or_two_save_the_same_bytes():
    # one thread stopped the example at the first tree short of entry rows and compacted the
    # rows before the later trees had learned it; the parallel learn compacts with every tree
    # where it stopped: the same predictions, other bytes (entry_top_, leaf_start_ ...)
    from olboost import AdaOLMR
    from olboost.checkpoint import dumps
    from olboost.datasets import load

    train = load("emotions").train
    models = []
    for threads in (1, 2):
        model = AdaOLMR(VFDTCommittee(n_features=10, n_threads=threads), learners=6, seed=1)
        model.score_then_learn(train.X[:200], train.Y[:200])
        model.committee.n_threads = model.committee_.n_threads = 1
        models.append(model)
    assert dumps(models[0]) == dumps(models[1])


def test_a_started_model_may_change_its_thread_count_and_nothing_else_of_its_committee():
    # a model trained on one thread could not be resumed or served on two: set_params refused
    # committee__n_threads as if the learned state were made from it
    from olboost import AdaOLMR
    from olboost.datasets import load

    train = load("emotions").train
    X, Y = train.X[:200], train.Y[:200]
    whole = AdaOLMR(VFDTCommittee(n_features=10), learners=6, seed=1).score_then_learn(X, Y)
    model = AdaOLMR(VFDTCommittee(n_features=10), learners=6, seed=1)
    first = model.score_then_learn(X[:100], Y[:100])
    model.set_params(committee__n_threads=2)
    assert model.committee.n_threads == model.committee_.n_threads == 2
    assert model.committee_.compiled().learn is K.learn
    rest = model.score_then_learn(X[100:], Y[100:])
    assert np.array_equal(np.vstack([first, rest]), whole)
    for change in ({"committee__grace_period": (1.0, 2.0)}, {"committee__n_threads": 0}):
        with pytest.raises(ValueError):
            model.set_params(**change)
    assert model.committee_.n_threads == 2 and model.committee_.grace_period == (5.0, 20.0)
    model.committee_.set_params(n_threads=1)  # the started committee itself, too
    assert model.committee_.compiled().learn is K.learn_serial
    # and a clone with the learned state, in River's form (what set_params' refusal advises)
    copy = model.clone({"committee": (VFDTCommittee, {"n_threads": 2})}, include_attributes=True)
    assert copy.committee.n_threads == copy.committee_.n_threads == 2
    with pytest.raises(ValueError, match="committee cannot change"):
        model.clone({"committee": (VFDTCommittee, {"n_features": 3})}, include_attributes=True)


def test_pickling_mid_stream_resumes_identically():
    X, W = mixed_stream(400)
    straight = committee(capacity=2)
    full = run(straight, X, W)
    c = committee(capacity=2)
    first = run(c, X[:150], W[:150])
    c = pickle.loads(pickle.dumps(c))
    rest = run(c, X[150:], W[150:])
    assert np.array_equal(np.concatenate([first, rest]), full)
    # Whole-object pickles may differ in memoisation of shared objects, not in state.
    assert vars(c).keys() == vars(straight).keys()
    for name, value in vars(c).items():
        assert pickle.dumps(value) == pickle.dumps(vars(straight)[name]), name


def test_zero_weights_change_nothing():
    X, W = mixed_stream(100)
    c = committee()
    run(c, X, W)
    before = pickle.dumps(c)
    c.learn(X[0], np.zeros((5, 4)))
    assert pickle.dumps(c) == before
    trees = [kernel_structure(c, i) for i in range(5)]
    w = np.ones((5, 4))
    w[2] = 0.0
    c.learn(X[1], w)
    assert kernel_structure(c, 2) == trees[2]


@pytest.mark.parametrize(
    "x_fix, weights",
    [
        (None, np.ones((5, 3))),
        (None, np.ones((4, 4))),
        (None, -np.ones((5, 4))),
        (None, np.full((5, 4), np.nan)),
        (None, np.full((5, 4), np.inf)),
        (None, np.full((5, 4), 1.7e308)),  # finite, but not once multiplied (by 1.06 or more)
        ("short", np.ones((5, 4))),
        ("nominal_out_of_range", np.ones((5, 4))),
        ("nominal_not_integer", np.ones((5, 4))),
        ("nominal_negative", np.ones((5, 4))),
        ("nominal_nan", np.ones((5, 4))),
        ("numeric_nan", np.ones((5, 4))),
        ("numeric_inf", np.ones((5, 4))),
    ],
)
def test_bad_input_raises_and_changes_nothing(x_fix, weights):
    X, W = mixed_stream(60)
    # missing="error": NaN is bad input (with "learn", the default, it is a missing value)
    c = committee(missing="error")
    run(c, X, W)
    before = pickle.dumps(c)
    x = X[0].copy()
    if x_fix == "short":
        x = x[:-1]
    elif x_fix == "nominal_out_of_range":
        x[4] = 6.0
    elif x_fix == "nominal_not_integer":
        x[1] = 0.5
    elif x_fix == "nominal_negative":
        x[6] = -1.0
    elif x_fix == "nominal_nan":
        x[1] = np.nan
    elif x_fix == "numeric_nan":
        x[0] = np.nan
    elif x_fix == "numeric_inf":
        x[0] = -np.inf
    with pytest.raises(ValueError):
        c.learn(x, weights)
    if x_fix is not None:
        with pytest.raises(ValueError):
            c.predict(x)
    assert pickle.dumps(c) == before


def test_a_weight_that_overflows_once_multiplied_is_refused():
    """A finite weight that its learner's multiplier makes infinite would leave infinite class
    weights and NaN predictions for good (found by an audit): it is refused before any tree
    learns, naming the multiplier, and the trees keep predicting finite distributions."""
    c = VFDTCommittee(n_features=None, weight_multiplier=(3.0, 3.0))
    c.start(2, 3, 2, seed=0)
    c.learn(np.array([0.1, 0.2]), np.ones((2, 3)))
    before = pickle.dumps(c)
    with pytest.raises(ValueError, match="weight_multiplier"):
        c.learn(np.array([0.1, 0.2]), np.full((2, 3), 1e308))
    assert pickle.dumps(c) == before
    assert np.isfinite(c.predict(np.array([0.1, 0.2]))).all()
    c.learn(np.array([0.1, 0.2]), np.full((2, 3), 1e307))  # 3e307 is finite: learned


def test_the_compiled_weight_check_refuses_what_the_committee_refuses():
    """``learn_demand``, the compiled learn's check of the weights (the driver's path, where no
    Python check runs), against the rule written plainly: a weight is refused if negative,
    infinite or NaN, or infinite once multiplied by its tree's multiplier; otherwise it counts
    each tree's positive weights and lists the labels some tree weighs."""
    from olboost.weak._vfdt_storage import learn_demand

    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e308, 1.7e308, 5e-324])
    multipliers = np.array([1.0, 0.0, 2.0, 1e300, np.inf, 0.5, 1e-300])
    refused = 0
    for _ in range(3000):
        n, k = (int(v) for v in rng.integers(1, 5, size=2))
        w = rng.choice(special, (n, k)) if rng.random() < 0.8 else rng.random((n, k))
        m = rng.choice(multipliers, n)
        counts, weighed = np.zeros(n, dtype=np.int64), np.zeros(k, dtype=bool)
        ok, _ = learn_demand(w, m, np.ones(n, dtype=np.int64), 2, counts, weighed)
        with np.errstate(all="ignore"):
            expected = bool(((w >= 0) & np.isfinite(w) & np.isfinite(w * m[:, None])).all())
        assert ok == expected, (w, m)
        refused += not ok
        if ok:
            np.testing.assert_array_equal(counts, (w > 0).sum(axis=1))
            np.testing.assert_array_equal(weighed, (w > 0).any(axis=0))
    assert 0 < refused < 3000


def test_bad_parameters():
    with pytest.raises(ValueError):
        VFDTCommittee(nominal_attributes={0: 0}).start(2, 2, 3, seed=0)
    with pytest.raises(TypeError):
        VFDTCommittee(nominal_attributes=[0]).start(2, 2, 3, seed=0)
    with pytest.raises(ValueError, match="only 3 attributes"):
        VFDTCommittee(nominal_attributes={3: 2}).start(2, 2, 3, seed=0)


# ------------------------------------------------------------------------------ naive Bayes leaves


def _side_effect_free_cond_proba(self, att_val, target_val):
    """River's ``NominalSplitterClassif.cond_proba`` without inserting an empty dict for a class
    the observer has not seen (its ``defaultdict`` lookup does): same values returned."""
    class_dist = self._att_dist_per_class.get(target_val, {})
    if att_val not in class_dist:
        return 0.0
    value = class_dist[att_val]
    try:
        return value / sum(class_dist.values())
    except ZeroDivisionError:
        return 0.0


def kernel_correct(c: VFDTCommittee, i: int, node: int = 0) -> list:
    """The (majority class, naive Bayes) correct weights of tree ``i``'s leaves, depth first."""
    kind = int(c.node_kind_[i, node])
    if kind == K.EMPTY:
        return []
    if kind == K.LEAF:
        return [tuple(c.leaf_correct_[c.node_slot_[i, node]].tolist())]
    j = int(c.node_feature_[i, node])
    n_branches = int(c.n_categories_[i, j]) if kind == K.NOMINAL_MULTIWAY else 2
    first = int(c.node_child_[i, node])
    return [w for b in range(n_branches) for w in kernel_correct(c, i, first + b)]


def river_correct(node, k: int) -> list:
    from river.tree.nodes.branch import NominalMultiwayBranch
    from river.tree.nodes.leaf import HTLeaf

    if isinstance(node, HTLeaf):
        return [(node._mc_correct_weight, node._nb_correct_weight)]
    children = list(node.children)
    if isinstance(node, NominalMultiwayBranch):  # in category order, as the kernels
        by_code = {int(node._r_mapping[p]): child for p, child in enumerate(children)}
        children = [by_code[code] for code in sorted(by_code)]
    return [w for child in children for w in river_correct(child, k)]


def listed_zero_classes(c: VFDTCommittee) -> int:
    """Live leaves' classes listed with zero weight (a numeric split gave them none)."""
    total = 0
    rows = c._dense_leaf_rows()
    for i in range(c.n_learners_):
        live = c.node_slot_[i, : c.n_nodes_[i]][c.node_kind_[i, : c.n_nodes_[i]] == K.LEAF]
        total += int((rows["leaf_listed_"][live] & (rows["leaf_class_"][live] == 0.0)).sum())
    return total


def _lockstep_with_river(c, rivers, columns, X, W, after_each=None) -> float:
    """Feed the committee ``c`` and River's trees (one per learner, reading ``columns``) the
    stream ``X, W`` in lockstep; returns the largest gap between their class probabilities
    before each example. ``after_each(t)`` runs after example ``t``."""
    s = c.setup_
    gap = 0.0
    for t, (x, w) in enumerate(zip(X, W, strict=True)):
        got = c.predict(x)
        for i, tree in enumerate(rivers):
            xi = {f: float(x[f]) for f in columns[i]}
            proba = tree.predict_proba_one(xi)
            want = np.array([proba.get(label, 0.0) for label in range(4)])
            if not want.sum() > 0.0:  # River has no votes yet: the committee is uniform
                want[:] = 0.25
            gap = max(gap, float(np.abs(got[i] - want).max()))
        c.learn(x, w)
        _rivers_learn(rivers, columns, x, w, s.weight_multiplier)
        if after_each is not None:
            after_each(t)
    return gap


@pytest.mark.parametrize("mode", ["mc", "nb"])
def test_thresholds_on_a_class_minimum_match_river_hoeffding_tree(mode):
    """Integer attributes in 0..4 with 3 split points: the thresholds are exactly 1, 2 and 3,
    and they fall on classes' minima. River (``GaussianSplitter``) sends a class wholly right
    only where the threshold is below its minimum, and lists it in the left branch where the
    threshold is at or above it; at equality the class is divided by its Gaussian. A kernel
    that sent it wholly right, or left it unlisted on the left (mutation round 9: ``<=`` for
    ``<``, ``>`` for ``>=``), passed every other test; here the leaves' weights and naive Bayes'
    votes differ. Same splits and leaf weights bit for bit, probabilities to 1e-12 (see
    :func:`test_naive_bayes_matches_river_hoeffding_tree`)."""
    river_tree = pytest.importorskip("river.tree")
    from river.tree.splitter import GaussianSplitter

    k, n = 4, 1200
    rng = np.random.default_rng(11)
    y = rng.integers(0, k, size=n)
    # class c takes the integers c-1 .. c+1 within 0..4 on each attribute, noisier on the last
    X = np.clip(y[:, None] + rng.integers(-1, 2, size=(n, 4)), 0, 4).astype(float)
    X[:, 3] = rng.integers(0, 5, size=n)
    W = np.zeros((n, 5, k))
    for t in range(n):
        W[t, :, y[t]] = rng.uniform(0.2, 1.5, size=5)
    c = VFDTCommittee(
        n_features=3, grace_period=(5.0, 20.0), split_confidence=(0.05, 0.5),
        tie_threshold=(0.05, 0.3), weight_multiplier=(1.0, 2.0), n_split_points=3,
        leaf_prediction=mode, leaf_prior=0.0,
    )  # fmt: skip
    c.start(5, k, 4, seed=2)
    s = c.setup_
    columns = [[int(f) for f in s.features[i]] for i in range(5)]
    rivers = [
        river_tree.HoeffdingTreeClassifier(
            grace_period=float(s.grace_period[i]), delta=float(s.split_confidence[i]),
            tau=float(s.tie_threshold[i]), leaf_prediction=mode,
            splitter=GaussianSplitter(n_splits=3),
        )
        for i in range(5)
    ]  # fmt: skip
    assert _lockstep_with_river(c, rivers, columns, X, W) < 1e-12
    for i, tree in enumerate(rivers):
        assert kernel_structure(c, i) == river_structure(tree._root, columns[i], k), i
    assert c.leaf_counts().min() > 2  # every tree split, more than once


def test_a_majority_share_exactly_at_max_share_to_split_still_splits_as_in_river():
    """River offers only the null split where the majority's share is above
    ``max_share_to_split`` (0.99), strictly: at 198 of 200 it still splits. Unit weights, a
    minority every 100th example far to the right; a kernel that stopped at the share itself
    (mutation round 9, ``>=`` for ``>``) kept one leaf and passed every other test."""
    river_tree = pytest.importorskip("river.tree")
    n = 3000
    rng = np.random.default_rng(0)
    y = (np.arange(n) % 100 == 99).astype(int)
    X = np.where(y == 1, rng.uniform(2, 3, n), rng.uniform(0, 1, n))[:, None]
    c = VFDTCommittee(
        n_features=1, grace_period=(200.0, 200.0), split_confidence=(1e-7, 1e-7),
        tie_threshold=(0.05, 0.05), weight_multiplier=(1.0, 1.0), min_branch_fraction=0.001,
        leaf_prior=0.0,
    )  # fmt: skip
    c.start(1, 2, 1, seed=0)
    river = river_tree.HoeffdingTreeClassifier(
        grace_period=200, delta=1e-7, tau=0.05, min_branch_fraction=0.001, max_share_to_split=0.99
    )
    for x, label in zip(X, y, strict=True):
        c.learn(x, np.eye(2)[label][None, :])
        river.learn_one({0: float(x[0])}, int(label))
    assert int(c.leaf_counts()[0]) == river.n_leaves == 2
    assert kernel_structure(c, 0) == river_structure(river._root, [0], 2)


@pytest.mark.parametrize("gap", [5e-5, -5e-5])
def test_a_gap_at_the_hoeffding_bound_splits_as_in_river(gap):
    """Feature 0 separates two classes (merit 1 bit), feature 1 holds the same values in both
    (merit 0): with the Hoeffding bound set ``gap`` below 1, River splits, and ``gap`` above,
    it does not. An attempt's floor on a feature's best merit must be a bound: one raised by
    1e-4 bits (mutation round 9) stopped the attempt early and kept one leaf, and passed every
    other test."""
    river_tree = pytest.importorskip("river.tree")
    n = 20
    y = np.array([0, 1] * 10)
    X = np.column_stack(
        [np.where(y == 0, np.linspace(0, 1, n), np.linspace(2, 3, n)),
         np.repeat(np.linspace(0, 1, 10), 2)]
    )  # fmt: skip
    bound = 1.0 - gap
    delta = math.exp(-2.0 * n * bound * bound)  # the bound sqrt(R^2 ln(1/delta) / 2n), R = 1
    c = VFDTCommittee(
        n_features=2, grace_period=(20.0, 20.0), split_confidence=(delta, delta),
        tie_threshold=(1e-9, 1e-9), weight_multiplier=(1.0, 1.0), leaf_prior=0.0,
    )  # fmt: skip
    c.start(1, 2, 2, seed=0)
    river = river_tree.HoeffdingTreeClassifier(grace_period=20, delta=delta, tau=1e-9)
    for x, label in zip(X, y, strict=True):
        c.learn(x, np.eye(2)[label][None, :])
        river.learn_one({0: float(x[0]), 1: float(x[1])}, int(label))
    assert int(c.leaf_counts()[0]) == river.n_leaves == (2 if gap > 0 else 1)


@pytest.mark.parametrize("mode, nb_threshold", [("nb", 0.0), ("nb", 6.0), ("nba", 0.0)])
def test_naive_bayes_matches_river_hoeffding_tree(monkeypatch, mode, nb_threshold):
    """With ``leaf_prior=0`` each tree is River's HoeffdingTreeClassifier with naive Bayes or
    adaptive naive Bayes leaves: same splits and leaf weights bit for bit, same adaptive
    correctness weights bit for bit, and the same probabilities before every example to 1e-12.

    Probabilities are not always bit-identical because River sums floats in dict insertion order
    where the kernels sum in class or category order: the leaf weight in the class prior, a
    class's weight in a nominal likelihood (categories in first-seen order) and the log-sum-exp
    (most rows are bit-identical; the largest gap is a few ulps). For the same reason
    River's ``NominalSplitterClassif.cond_proba``, whose ``defaultdict`` lookup inserts an empty
    dict for every class it is asked about, reorders the sums of later split merits; when two
    candidates are mathematically tied (a multiway split whose extra branches are pure in the same
    class, against the binary split that merges them), that rounding can pick the other one. The
    test replaces ``cond_proba`` with the same function minus that insertion. Such ties are
    broken by rounding in majority-class trees too (``mixed_stream(1000)`` already splits
    differently from River at example 141 with ``leaf_prediction="mc"``), so the stream is the one
    of :func:`test_matches_river_hoeffding_tree`."""
    pytest.importorskip("river.tree")
    from river.tree.splitter.nominal_splitter_classif import NominalSplitterClassif

    monkeypatch.setattr(NominalSplitterClassif, "cond_proba", _side_effect_free_cond_proba)
    X, W = mixed_stream(1500)
    c = committee(leaf_prediction=mode, nb_threshold=nb_threshold, leaf_prior=0.0)
    columns, rivers = river_trees(c, mode, nb_threshold=nb_threshold)
    zero_listed = []

    def count_zero_listed(t):
        if t % 10 == 0:
            zero_listed.append(listed_zero_classes(c))

    assert _lockstep_with_river(c, rivers, columns, X, W, count_zero_listed) < 1e-12
    zero_listed = sum(zero_listed)
    for i, tree in enumerate(rivers):
        assert kernel_structure(c, i) == river_structure(tree._root, columns[i], 4), i
        if mode == "nba":
            assert kernel_correct(c, i) == river_correct(tree._root, 4), i
    # River's zero-weight classes (which vote log 1 in naive Bayes) must have been exercised.
    assert zero_listed > 0
    if mode == "nba":
        weights = c.leaf_correct_
        assert (weights[:, 0] > weights[:, 1]).any() and (weights[:, 1] > weights[:, 0]).any()


def test_max_depth_beyond_the_kernels_int64_is_refused_naming_it():
    # 10**30 passed validation and failed inside Numba ("Int value is too large"); 2**63
    # compiled the kernels once more for a uint64
    for bad in (10**30, 2**63, 2**62):
        with pytest.raises(ValueError, match="max_depth"):
            VFDTCommittee(max_depth=bad)
    VFDTCommittee(max_depth=2**62 - 1)


def _depth(structure) -> int:
    """Depth of the deepest leaf of a :func:`kernel_structure` (the root at 0)."""
    if structure is None or structure[0] == "leaf":
        return 0
    return 1 + max(_depth(child) for child in structure[3])


@pytest.mark.parametrize("mode", ["mc", "nb", "nba"])
@pytest.mark.parametrize("max_depth", [0, 1, 2])
def test_max_depth_matches_river_hoeffding_tree(monkeypatch, mode, max_depth):
    """``max_depth`` is River's: a leaf at that depth is deactivated by the first example it
    learns, keeps its class weights only (no observers: its blocks are freed) and predicts by
    them. The stream and the tolerance of :func:`test_naive_bayes_matches_river_hoeffding_tree`:
    same splits and leaf weights bit for bit, same adaptive correctness weights, the same
    probabilities before every example to 1e-12."""
    pytest.importorskip("river.tree")
    from river.tree.splitter.nominal_splitter_classif import NominalSplitterClassif

    monkeypatch.setattr(NominalSplitterClassif, "cond_proba", _side_effect_free_cond_proba)
    X, W = mixed_stream(1500)
    c = committee(leaf_prediction=mode, leaf_prior=0.0, max_depth=max_depth)
    columns, rivers = river_trees(c, mode, max_depth=max_depth)
    assert _lockstep_with_river(c, rivers, columns, X, W) < 1e-12
    depths = []
    for i, tree in enumerate(rivers):
        structure = kernel_structure(c, i)
        assert structure == river_structure(tree._root, columns[i], 4), i
        if mode == "nba":
            assert kernel_correct(c, i) == river_correct(tree._root, 4), i
        depths.append(_depth(structure))
    # every tree stopped at the limit, and the limit was reached (without it they grow deeper)
    assert max(depths) == max_depth
    unlimited = committee(leaf_prediction=mode, leaf_prior=0.0)
    for x, w in zip(X, W, strict=True):
        unlimited.learn(x, w)
    assert max(_depth(kernel_structure(unlimited, i)) for i in range(5)) > max_depth
    # the deactivated leaves hold no observer blocks: only the active ones use the pool
    live = [slot for i in range(5) for slot in c._live_slots(i)]
    inactive = [slot for slot in live if c.leaf_last_[slot] == np.inf]
    assert inactive
    rows = c._dense_leaf_rows()["leaf_blocks_"]
    assert (rows[inactive] == -1).all()


def test_naive_bayes_leaf_prior_mixes_with_uniform():
    """``leaf_prior`` smooths a naive Bayes posterior ``q`` as ``(W q + prior) / (W + k prior)``;
    learning does not depend on it."""
    X, W = mixed_stream(300)
    plain = committee(leaf_prediction="nba", leaf_prior=0.0)
    smooth = committee(leaf_prediction="nba", leaf_prior=0.5)
    for x, w in zip(X, W, strict=True):
        q, p = plain.predict(x), smooth.predict(x)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        for i in range(5):
            node = 0
            while plain.node_kind_[i, node] != K.LEAF:
                v = x[plain.setup_.features[i, plain.node_feature_[i, node]]]
                node = K._branch(
                    v, plain.node_kind_[i, node], plain.node_child_[i, node],
                    plain.node_value_[i, node],
                )  # fmt: skip
                if plain.node_kind_[i, node] == K.EMPTY:
                    break
            if plain.node_kind_[i, node] != K.LEAF:
                continue
            total = plain._dense_leaf_rows()["leaf_class_"][plain.node_slot_[i, node]].sum()
            if total > 0.0:
                np.testing.assert_allclose(
                    p[i], (total * q[i] + 0.5) / (total + 4 * 0.5), rtol=0, atol=1e-12
                )
        plain.learn(x, w)
        smooth.learn(x, w)
    for i in range(5):
        assert kernel_structure(plain, i) == kernel_structure(smooth, i)
    assert np.array_equal(plain.leaf_correct_, smooth.leaf_correct_)


@pytest.mark.parametrize("mode", ["nb", "nba"])
def test_naive_bayes_uniform_before_any_data_and_predict_is_read_only(mode):
    c = committee(leaf_prediction=mode)
    assert np.array_equal(c.predict(np.zeros(8)), np.full((5, 4), 0.25))
    X, W = mixed_stream(200)
    run(c, X[:150], W[:150])
    before = pickle.dumps(c)
    for x in X[150:]:
        out = c.predict(x)
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert (out >= 0.0).all()
    assert pickle.dumps(c) == before


def test_naive_bayes_differs_from_majority_class():
    X, W = mixed_stream(300)
    mc, nb, nba = (committee(leaf_prediction=m) for m in ("mc", "nb", "nba"))
    p_mc, p_nb, p_nba = run(mc, X, W), run(nb, X, W), run(nba, X, W)
    for other in (nb, nba):  # the trees themselves do not depend on the leaf prediction
        for i in range(5):
            assert kernel_structure(other, i) == kernel_structure(mc, i)
    assert not np.allclose(p_mc, p_nb) and not np.allclose(p_nb, p_nba)
    assert not mc.leaf_correct_.any() and not nb.leaf_correct_.any() and nba.leaf_correct_.any()
    # A threshold no leaf reaches makes "nb" the majority class.
    never = committee(leaf_prediction="nb", nb_threshold=np.inf)
    assert np.array_equal(run(never, X, W), p_mc)


def test_naive_bayes_adaptive_capacity_growth_is_invisible():
    X, W = mixed_stream(400)
    tiny = committee(capacity=1, leaf_prediction="nba")
    big = committee(capacity=512, leaf_prediction="nba")
    assert np.array_equal(run(tiny, X, W), run(big, X, W))
    assert tiny.leaf_correct_.shape[0] > 5 and tiny.leaf_start_.shape == tiny.leaf_last_.shape
    for i in range(5):
        assert kernel_structure(tiny, i) == kernel_structure(big, i)
        assert kernel_correct(tiny, i) == kernel_correct(big, i)


def test_naive_bayes_adaptive_pickling_mid_stream_resumes_identically():
    X, W = mixed_stream(400)
    straight = committee(capacity=2, leaf_prediction="nba")
    full = run(straight, X, W)
    c = committee(capacity=2, leaf_prediction="nba")
    first = run(c, X[:150], W[:150])
    c = pickle.loads(pickle.dumps(c))
    rest = run(c, X[150:], W[150:])
    assert np.array_equal(np.concatenate([first, rest]), full)
    for name, value in vars(c).items():
        assert pickle.dumps(value) == pickle.dumps(vars(straight)[name]), name


@pytest.mark.parametrize(
    "params",
    [
        {"leaf_prediction": "bayes"},
        {"leaf_prediction": "NB"},
        {"leaf_prediction": None},
        {"nb_threshold": -1.0},
        {"nb_threshold": float("nan")},
    ],
)
def test_bad_leaf_prediction_parameters(params):
    with pytest.raises(ValueError):
        VFDTCommittee(**params)


# ------------------------------------------------------------------------------ nominal splits


def _seq_sum(values):
    """Left-to-right sum, as the kernels add (Python 3.12's ``sum`` compensates)."""
    total = 0.0
    for v in values:
        total += v
    return total


def _seq_merit(pre_entropy, post, min_frac):
    sums = [_seq_sum(b) for b in post]
    total = _seq_sum(sums)
    if not total > 0.0 or sum(s / total > min_frac for s in sums) < 2:
        return -math.inf
    return pre_entropy - _seq_sum(s * entropy(b) for s, b in zip(sums, post, strict=True)) / total


def _brute_best_nominal(blocks, nominal, offset, n_cat, pre_entropy, min_frac, binary):
    """River's ``NominalSplitterClassif`` candidates written out: the multiway split over the
    observed categories, then each ``x == v`` split, the ``x != v`` branch adding the other
    categories in increasing order; a binary split wins only if strictly better, the first of
    equal ones winning."""
    k = len(blocks)
    rows = [[nominal[b, offset + v] if b >= 0 else 0.0 for b in blocks] for v in range(n_cat)]
    observed = [v for v in range(n_cat) if any(d > 0.0 for d in rows[v])]
    best = (_seq_merit(pre_entropy, [rows[v] for v in observed], min_frac), K.NOMINAL_MULTIWAY, 0.0)
    for v in observed if binary else ():
        rest = [_seq_sum(rows[u][c] for u in range(n_cat) if u != v) for c in range(k)]
        m = _seq_merit(pre_entropy, [rows[v], rest], min_frac)
        if m > best[0]:
            best = (m, K.NOMINAL_EQ, float(v))
    return best


def _nominal_case(rng, k, n_cat, integer):
    blocks = np.where(rng.uniform(size=k) < 0.8, np.arange(k), -1).astype(np.int64)
    cells = (
        rng.integers(0, 4, size=(k, 2 + n_cat)) if integer else rng.exponential(size=(k, 2 + n_cat))
    )
    cells = np.where(rng.uniform(size=cells.shape) < 0.3, 0.0, cells).astype(np.float64)
    return blocks, cells


@pytest.mark.parametrize("binary", [True, False])
def test_best_nominal_matches_the_candidates_written_out(binary):
    """The kernel's nominal candidates (the multiway split's branches reused by the binary
    splits) give River's merits bit for bit, a binary split replacing the multiway one only if
    strictly better, on random cells with absent classes, unobserved categories and integer
    weights (with which a binary split often ties the multiway one)."""
    rng = np.random.default_rng(5)
    checked = {K.NOMINAL_MULTIWAY: 0, K.NOMINAL_EQ: 0, "-inf": 0}
    for case in range(600):
        k, n_cat = int(rng.integers(2, 6)), int(rng.integers(1, 7))
        blocks, nominal = _nominal_case(rng, k, n_cat, integer=case % 2 == 0)
        offset = int(rng.integers(0, 3))
        pre = entropy(rng.exponential(size=k))
        min_frac = float(rng.choice([0.0, 0.01, 0.2]))
        # only the classes with observers are present; the others' work entries, never read,
        # hold NaN so that a read would show
        present = np.flatnonzero(blocks >= 0)
        work = np.full((max(2, n_cat) + K.N_WORK_ROWS, k), np.nan)
        got = K._best_nominal(blocks, nominal, offset, n_cat, pre, min_frac, binary, work, present)
        want = _brute_best_nominal(blocks, nominal, offset, n_cat, pre, min_frac, binary)
        assert (got[1], got[2]) == (want[1], want[2])
        assert got[0] == want[0] or (math.isinf(got[0]) and math.isinf(want[0])), (got, want)
        checked["-inf" if math.isinf(want[0]) else want[1]] += 1
    assert min(checked.values()) > 0 if binary else checked[K.NOMINAL_EQ] == 0


def test_binary_split_can_beat_an_invalid_multiway_split():
    """Five rare categories each hold less than ``min_branch_fraction`` of the weight, so the
    multiway split has a single big branch (merit ``-inf``), while ``x == 0`` against the rest
    has two: the binary split is chosen."""
    blocks = np.array([0, 1], dtype=np.int64)
    nominal = np.array([[90.0, 0.3, 0.3, 0.3, 0.3, 0.3], [8.0, 0.0, 0.0, 0.0, 0.0, 0.5]])
    work = np.zeros((6 + K.N_WORK_ROWS, 2))
    present = np.arange(2)
    merit_, kind, value = K._best_nominal(blocks, nominal, 0, 6, 0.5, 0.01, True, work, present)
    assert (kind, value) == (K.NOMINAL_EQ, 0.0) and merit_ > -math.inf
    assert _brute_best_nominal(blocks, nominal, 0, 6, 0.5, 0.01, True) == (merit_, kind, value)
    assert K._best_nominal(blocks, nominal, 0, 6, 0.5, 0.01, False, work, present)[0] == -math.inf


def test_the_first_of_equal_binary_splits_wins():
    """Three categories of the same class weights: every ``x == v`` split has the same merit to
    the bit (above the multiway split's, by rounding), and the first, ``v = 0``, wins, as in
    River (a mutation campaign, session 51: ``>=`` took the last, and the random cases above
    never tie two binary splits)."""
    nominal = np.array([[0.1, 0.1, 0.1], [0.2, 0.2, 0.2]])
    present = np.arange(2)
    pre = K._row_entropy(nominal.sum(axis=1)[None, :], 0, present)
    work = np.zeros((3 + K.N_WORK_ROWS, 2))
    got = K._best_nominal(present, nominal, 0, 3, pre, 0.0, True, work, present)
    assert got[1:] == (K.NOMINAL_EQ, 0.0)
    assert _brute_best_nominal(present, nominal, 0, 3, pre, 0.0, True) == got


def test_multiway_matches_reference_exactly():
    X, W = mixed_stream()
    c = committee(nominal_splits="multiway")
    assert_matches_reference(c, X, W)
    kinds = set(np.unique(np.concatenate([c.node_kind_[i, : c.n_nodes_[i]] for i in range(5)])))
    assert K.NOMINAL_EQ not in kinds and K.NOMINAL_MULTIWAY in kinds


def test_multiway_only_on_a_nominal_stream_and_learns_it():
    """Label = (a == 2) or (b == 0) over four nominal attributes (a has 4 categories, the others 3):
    with ``"multiway"`` every split is multiway, and the concept is still learned."""
    rng = np.random.default_rng(3)
    nominal = {0: 4, 1: 3, 2: 3, 3: 3}
    trees = {}
    for mode in ("both", "multiway"):
        c = VFDTCommittee(
            n_features=None,
            nominal_attributes=nominal,
            grace_period=(10.0, 20.0),
            weight_multiplier=(1.0, 1.0),
            nominal_splits=mode,
        )
        c.start(3, 2, 4, seed=0)
        hits = 0
        for t in range(3000):
            x = np.array([rng.integers(4)] + [rng.integers(3) for _ in range(3)], dtype=float)
            y = int(x[0] == 2 or x[1] == 0)
            if t >= 2000:
                hits += (c.predict(x).argmax(axis=1) == y).sum()
            w = np.zeros((3, 2))
            w[:, y] = 1.0
            c.learn(x, w)
        trees[mode] = c
        if mode == "multiway":
            assert hits / 3000 > 0.95
    kinds = {
        mode: set(np.unique(np.concatenate([c.node_kind_[i, : c.n_nodes_[i]] for i in range(3)])))
        for mode, c in trees.items()
    }
    assert kinds["multiway"] <= {K.LEAF, K.NOMINAL_MULTIWAY, K.EMPTY}
    assert K.NOMINAL_MULTIWAY in kinds["multiway"]
    # Information gain never prefers a binary x == v split to the multiway split it coarsens, so
    # "both" differs only where the multiway split breaks the min-branch-fraction rule (column 7
    # of mixed_stream; see test_multiway_matches_reference_exactly) or by rounding.


def test_multiway_pickling_mid_stream_resumes_identically():
    X, W = mixed_stream(400)
    straight = committee(capacity=2, nominal_splits="multiway")
    full = run(straight, X, W)
    c = committee(capacity=2, nominal_splits="multiway")
    first = run(c, X[:150], W[:150])
    c = pickle.loads(pickle.dumps(c))
    assert c.nominal_splits == "multiway"
    rest = run(c, X[150:], W[150:])
    assert np.array_equal(np.concatenate([first, rest]), full)
    for name, value in vars(c).items():
        assert pickle.dumps(value) == pickle.dumps(vars(straight)[name]), name


@pytest.mark.parametrize("value", ["binary", "Multiway", None, True])
def test_bad_nominal_splits(value):
    with pytest.raises(ValueError):
        VFDTCommittee(nominal_splits=value)


# ------------------------------------------------------------------------------ Weka port


@pytest.mark.parametrize("nominal_splits", ["multiway", "both"])
def test_weka_port_matches_reference_exactly(nominal_splits):
    X, W = mixed_stream()
    c = committee(semantics="weka_port", nominal_splits=nominal_splits)
    assert_matches_reference(c, X, W)
    # the trees differ from River's semantics on the same stream
    river = committee(nominal_splits=nominal_splits)
    run(river, X, W)
    assert any(kernel_structure(c, i) != kernel_structure(river, i) for i in range(5))


def test_weka_port_laplace_counts_and_prediction():
    c = VFDTCommittee(
        nominal_attributes={0: 3},
        grace_period=(100.0, 100.0),
        weight_multiplier=(1.0, 1.0),
        semantics="weka_port",
    )
    c.start(1, 3, 2, seed=0)
    w = np.zeros((1, 3))
    w[0, 1] = 0.25
    c.learn(np.array([2.0, 0.5]), w)
    c.learn(np.array([2.0, 0.7]), w)
    w[0, 1], w[0, 2] = 0.0, 0.5
    c.learn(np.array([0.0, 0.1]), w)
    slot = c.node_slot_[0, 0]
    rows = c._dense_leaf_rows()
    # a class starts at 1 the first time the leaf learns it; so does a (class, category) cell
    assert rows["leaf_class_"][slot].tolist() == [0.0, 1.5, 1.5]
    block_1, block_2 = rows["leaf_blocks_"][slot, 1], rows["leaf_blocks_"][slot, 2]
    assert c.block_nominal_[block_1].tolist() == [0.0, 0.0, 1.5]
    assert c.block_nominal_[block_2].tolist() == [1.5, 0.0, 0.0]
    # listed classes predict their weight, the others 1 (leaf_prior is not used)
    assert c.predict(np.array([1.0, 0.0]))[0].tolist() == pytest.approx([1 / 4, 1.5 / 4, 1.5 / 4])


def _constant_feature_committee(semantics):
    c = VFDTCommittee(
        grace_period=(4.0, 4.0),
        split_confidence=(0.5, 0.5),
        tie_threshold=(0.9, 0.9),
        weight_multiplier=(1.0, 1.0),
        semantics=semantics,
    )
    c.start(1, 2, 1, seed=0)
    return c


@pytest.mark.parametrize("semantics", ["river", "weka_port"])
def test_weka_port_grace_is_strict_and_pruned_leaves_stay_inactive(semantics):
    # One constant attribute: no threshold lies inside its range, so once a leaf with two classes
    # tries to split, the null split wins (the bound is below the tie threshold).
    c = _constant_feature_committee(semantics)
    x = np.array([1.0])
    weka = semantics == "weka_port"
    for t in range(4):
        w = np.zeros((1, 2))
        w[0, t % 2] = 1.0
        c.learn(x, w)
    slot = c.node_slot_[0, 0]
    # River tries once the weight seen reaches the grace period: at 4 = 1 + 1 + 1 + 1. The port
    # starts each class at 1 and tries once the weight exceeds it: at 5 = 2 + 2 + 1 (not at 4).
    assert c._dense_leaf_rows()["leaf_class_"][slot].tolist() == (
        [3.0, 3.0] if weka else [2.0, 2.0]
    )
    assert c.leaf_last_[slot] == (np.inf if weka else 4.0)
    for _ in range(11):
        c.learn(x, np.array([[1.0, 0.0]]))
    rows = c._dense_leaf_rows()
    if weka:
        # deactivated for good: the class weights keep growing, the observers stay empty
        assert rows["leaf_class_"][slot].tolist() == [14.0, 3.0]
        assert (rows["leaf_blocks_"][slot] == -1).all() and c.leaf_last_[slot] == np.inf
    else:
        # River restarts the observers and keeps trying (last at 12; 13-15 were observed)
        assert rows["leaf_class_"][slot].tolist() == [13.0, 2.0]
        assert rows["leaf_blocks_"][slot, 0] >= 0 and c.leaf_last_[slot] == 12.0


def test_weka_port_bad_parameters():
    with pytest.raises(ValueError, match="semantics"):
        VFDTCommittee(semantics="weka")
    with pytest.raises(ValueError, match="leaf_prediction"):
        VFDTCommittee(semantics="weka_port", leaf_prediction="nb")


def test_weka_port_pickling_mid_stream_resumes_identically():
    X, W = mixed_stream(400)
    full = run(committee(capacity=2, semantics="weka_port"), X, W)
    c = committee(capacity=2, semantics="weka_port")
    first = run(c, X[:150], W[:150])
    c = pickle.loads(pickle.dumps(c))
    rest = run(c, X[150:], W[150:])
    assert np.array_equal(np.concatenate([first, rest]), full)


def test_many_classes_match_reference_exactly():
    """With 40 classes (most of them noise, so leaves hold a few of them each and the Hoeffding
    bound is wide), the label-sparse leaves and the early stop of split attempts grow the trees
    of the reference, which evaluates every class and every candidate."""
    X, W = mixed_stream(600, k=40)
    c = committee(k=40)
    assert_matches_reference(c, X, W)
    assert c.leaf_counts().sum() >= 20
    live = [
        c.node_slot_[i, : c.n_nodes_[i]][c.node_kind_[i, : c.n_nodes_[i]] == K.LEAF]
        for i in range(5)
    ]
    assert 0 < min(c.leaf_n_present_[s].min() for s in live) < 40


def test_merit_ceilings_bound_every_candidate():
    """The early stop of a split attempt is exact only if its ceilings bound every candidate's
    merit: on random leaves (inherited weights making the pre-split entropy differ from the
    observers', classes seen once, spread Gaussians, nominal cells), every numeric merit is below
    the numeric ceiling and every nominal one below the nominal ceiling, the binary numeric
    ceiling ``pre - H(C) + 1`` being reached within a few bits' tolerance of its slack."""
    rng = np.random.default_rng(11)
    closest = np.inf
    for case in range(400):
        k = int(rng.integers(2, 30))
        observed = rng.exponential(size=k) * (rng.uniform(size=k) < 0.8)
        if (observed > 0).sum() < 2:
            observed[:2] = 1.0
        inherited = rng.exponential(size=k) * (rng.uniform(size=k) < 0.3)
        class_weight = (observed + inherited)[None, :]
        present = np.arange(k)
        blocks = np.where(observed > 0, np.arange(k), -1).astype(np.int64)
        gauss = np.zeros((k, 1, K.N_GAUSS_FIELDS))
        gauss[:, 0, K.G_WEIGHT] = observed
        gauss[:, 0, K.G_MEAN] = rng.normal(size=k)
        single = rng.uniform(size=k) < 0.4  # seen once: no spread
        spread = rng.exponential(size=k) * ~single
        gauss[:, 0, K.G_SSD] = spread**2 * np.maximum(observed - 1.0, 0.0)
        gauss[:, 0, K.G_MIN] = gauss[:, 0, K.G_MEAN] - 2 * spread
        gauss[:, 0, K.G_MAX] = gauss[:, 0, K.G_MEAN] + 2 * spread
        pre = K._row_entropy(class_weight, 0, present)
        work = np.zeros((8 + K.N_WORK_ROWS, k))
        work[K.W_NLOGN] = np.where(
            observed > 0, observed * np.log2(np.where(observed > 0, observed, 1)), 0
        )
        numeric_ceiling, nominal_ceiling = K._merit_ceilings(
            observed, present, pre, False, work[K.W_NLOGN]
        )
        # the floor passed as the split attempt passes it (a default would compile once more)
        m_num, _ = best_numeric(observed, blocks, gauss, 0, pre, 10, 0.0, work, present, -np.inf)
        assert m_num <= numeric_ceiling, (case, m_num, numeric_ceiling)
        closest = min(closest, numeric_ceiling - m_num)
        nominal_blocks, cells = _nominal_case(rng, k, 4, integer=case % 2 == 0)
        m_nom, _, _ = K._best_nominal(
            nominal_blocks, cells, 0, 4, pre, 0.0, True, work, np.flatnonzero(nominal_blocks >= 0)
        )
        assert m_nom <= nominal_ceiling, (case, m_nom, nominal_ceiling)
        # with a missing value seen, both ceilings fall back to the pre-split entropy
        assert K._merit_ceilings(observed, present, pre, True, work[K.W_NLOGN]) == (
            pre + K._CEILING_SLACK,
            pre + K._CEILING_SLACK,
        )
    assert closest < 0.5  # the numeric ceiling is not vacuous on these leaves


def test_entropy_from_the_observed_logarithms_is_the_entropy_to_the_bit():
    """``_entropy_with`` takes ``d log2 d`` from the attempt's row of ``n log2 n`` where the
    class weight is the observed weight (most classes), and computes it elsewhere: the pre-split
    entropy of a split attempt keeps its bits, on weights that equal the observed ones, exceed
    them by an inherited weight, or are zero."""
    from olboost.weak._vfdt_split import _entropy_of, _entropy_with

    rng = np.random.default_rng(12)
    for _ in range(300):
        k = int(rng.integers(1, 40))
        observed = rng.exponential(size=k) * (rng.uniform(size=k) < 0.8)
        inherited = rng.exponential(size=k) * (rng.uniform(size=k) < 0.3)
        weights = observed + inherited
        n_log_n = np.zeros(k)
        for c in range(k):  # as the attempt computes it: math's log2, one class at a time
            n_log_n[c] = observed[c] * math.log2(observed[c]) if observed[c] > 0 else 0.0
        present = np.flatnonzero(rng.uniform(size=k) < 0.9)
        for row in (weights, observed):
            got = _entropy_with(row, present, n_log_n, observed)
            assert got == _entropy_of(row, present), (row, present)
    # a wrong row is used only where the weights are the observed ones
    observed = np.array([1.0, 2.0, 3.0])
    wrong = np.array([5.0, 5.0, 5.0])
    assert _entropy_with(observed + 1.0, np.arange(3), wrong, observed) == _entropy_of(
        observed + 1.0, np.arange(3)
    )
    assert _entropy_with(observed, np.arange(3), wrong, observed) != _entropy_of(
        observed, np.arange(3)
    )


def _random_numeric_leaf(rng, k):
    """A leaf's numeric observer of one feature over ``k`` classes: weights (some zero), inherited
    weights making the pre-split entropy differ from the observers', classes seen once (no
    spread), and a ``work`` array as a split attempt has it."""
    observed = rng.exponential(size=k) * (rng.uniform(size=k) < 0.8) * 10.0 ** rng.integers(-1, 4)
    if (observed > 0).sum() < 2:
        observed[:2] = 1.0
    inherited = rng.exponential(size=k) * (rng.uniform(size=k) < 0.3)
    class_weight = (observed + inherited)[None, :]
    blocks = np.where(observed > 0, np.arange(k), -1).astype(np.int64)
    gauss = np.zeros((k, 1, K.N_GAUSS_FIELDS))
    gauss[:, 0, K.G_WEIGHT] = observed
    gauss[:, 0, K.G_MEAN] = rng.normal(size=k) * rng.uniform(0.1, 3.0)
    spread = rng.exponential(size=k) * (rng.uniform(size=k) > 0.3)
    gauss[:, 0, K.G_SSD] = spread**2 * np.maximum(observed - 1.0, 0.0)
    gauss[:, 0, K.G_MIN] = gauss[:, 0, K.G_MEAN] - 2 * spread
    gauss[:, 0, K.G_MAX] = gauss[:, 0, K.G_MEAN] + 2 * spread
    work = np.zeros((2 + K.N_WORK_ROWS, k))
    work[K.W_NLOGN] = np.where(
        observed > 0, observed * np.log2(np.where(observed > 0, observed, 1)), 0
    )
    pre = K._row_entropy(class_weight, 0, np.arange(k))
    return observed, blocks, gauss, work, pre


def brute_best_numeric(observed, blocks, gauss, j, pre, n_split_points, fraction):
    """The best merit of numeric feature ``j`` written out from River's ``GaussianSplitter``
    (MOA's thresholds, the minimum branch fraction), with no bound nor pruning: a reference
    for the kernels' bounds (within rounding of the kernel's merit)."""
    classes = []
    for c in range(len(observed)):
        n = gauss[blocks[c], j, K.G_WEIGHT] if observed[c] > 0.0 else 0.0
        if n > 0.0:
            g = gauss[blocks[c], j]
            sigma = math.sqrt(g[K.G_SSD] / (n - 1.0)) if n > 1.0 else 0.0
            classes.append((n, g[K.G_MEAN], sigma, g[K.G_MIN], g[K.G_MAX]))
    if not classes:
        return -math.inf
    lo = min(c[3] for c in classes)
    hi = max(c[4] for c in classes)
    step = (hi - lo) / (n_split_points + 1.0)
    best = -math.inf
    for t in range(n_split_points):
        threshold = lo + step * (t + 1)
        if not lo < threshold < hi:
            continue
        left, right = [], []
        for n, mu, sigma, c_lo, c_hi in classes:
            if threshold < c_lo:
                share = 0.0
            elif threshold >= c_hi:
                share = 1.0
            elif sigma > 0.0:
                share = 0.5 * (1.0 + math.erf((threshold - mu) / sigma / math.sqrt(2.0)))
            else:
                share = 0.0
            left.append(share * n if share < 1.0 else n)
            right.append(n - left[-1] if share > 0.0 else n)
        sums = [sum(left), sum(right)]
        total = sum(sums)
        if total > 0.0 and sum(x / total > fraction for x in sums) == 2:
            post = sums[0] * entropy(left) + sums[1] * entropy(right)
            best = max(best, pre - post / total)
    return best


def test_pruned_thresholds_leave_every_merit_that_matters_exact():
    """A split attempt hands each numeric feature the second best merit so far as a floor, below
    which thresholds are skipped by a chi-square bound on their information gain. The feature's
    ``(merit, threshold)`` must equal the unpruned one bit for bit whenever that merit reaches the
    floor (then it may become the best or second best), and stay below the floor otherwise; and
    the bound must skip something, or it costs without saving."""
    rng = np.random.default_rng(5)
    skipped = 0
    for case in range(300):
        k = int(rng.integers(2, 40))
        observed, blocks, gauss, work, pre = _random_numeric_leaf(rng, k)
        present = np.arange(k)
        fraction = [0.0, 0.01][case % 2]
        exact = best_numeric(observed, blocks, gauss, 0, pre, 10, fraction, work, present, -np.inf)
        # the thresholds whose bound is -inf are skipped whatever the floor: -inf exactly
        brute = brute_best_numeric(observed, blocks, gauss, 0, pre, 10, fraction)
        assert exact[0] == brute or abs(exact[0] - brute) < 1e-12, (case, exact, brute)
        if exact[0] == -np.inf:
            continue
        for floor in (
            exact[0],
            np.nextafter(exact[0], -np.inf),
            exact[0] - 1e-3,
            -1.0,
            np.nextafter(exact[0], np.inf),
            exact[0] + 1e-3,
            exact[0] + 0.5,
        ):
            pruned = best_numeric(
                observed, blocks, gauss, 0, pre, 10, fraction, work, present, floor
            )
            if exact[0] >= floor:
                assert pruned == exact, (case, floor)
            else:
                assert pruned[0] < floor, (case, floor)
                skipped += pruned[0] == -np.inf
    assert skipped > 100, skipped


def test_approximate_cdf_is_within_its_stated_error():
    """The chi-square bound is taken from Abramowitz & Stegun's rational approximation of
    ``erf`` (7.1.28, error at most 3e-7), widened by ``_APPROXIMATE_CDF_ERROR``: on a dense grid
    of standardised thresholds the approximate CDF is within half the published error of the
    exact one (and within the constant the bound uses), and a zero deviation gives River's 0."""
    from olboost.weak import _vfdt_split as S

    z = np.concatenate([np.linspace(-8, 8, 200_001), [-1e6, -40.0, 40.0, 1e6]])
    worst = max(
        abs(S._approximate_cdf(t, 0.0, 1.0 / np.sqrt(2.0)) - S._cdf(t, 0.0, 1.0)) for t in z
    )
    assert worst <= 1.5e-7 + 1e-15 < S._APPROXIMATE_CDF_ERROR
    # a zero deviation (marker -1) gives River's 0; an infinite one (inverse scale 0, its sum of
    # squared deviations having overflowed) gives 1/2, as the exact CDF does
    assert S._approximate_cdf(3.0, 1.0, -1.0) == S._cdf(3.0, 1.0, 0.0) == 0.0
    assert S._approximate_cdf(3.0, 1.0, 0.0) == S._cdf(3.0, 1.0, np.inf) == 0.5


def test_chi_square_bound_is_above_every_threshold_merit():
    """The bound behind the pruning, ``pre - H(C) + chi^2 / (N q (1 - q) ln 2)`` taken from the
    approximate shares and widened by their error, against the merit of a threshold, as
    computed: with the merit itself as the floor it comes back exactly
    (the bound is never below it), with a floor above it exactly or as ``-inf``. One split point
    per call (the middle of the leaf's range), so that the floor given is the one the threshold
    meets."""
    from olboost.weak import _vfdt_split as S

    rng = np.random.default_rng(6)
    returned = 0
    tried = 0
    for _ in range(3000):
        k = int(rng.integers(2, 40))
        observed, blocks, gauss, work, pre = _random_numeric_leaf(rng, k)
        present = np.arange(k)
        S._gaussian_params(observed, blocks, gauss, 0, work, present)
        n = work[K.W_N]
        live = n > 0
        total = n[live].sum()
        h = (total * np.log2(total) - work[S.W_NLOGN_F][live].sum()) / total

        leaf = (observed, blocks, gauss, 0, pre, 1, 0.0, work, present)
        merit, _ = best_numeric(*leaf, -np.inf)
        if merit == -np.inf:
            continue
        assert best_numeric(*leaf, merit) == best_numeric(*leaf, -np.inf)
        # A Bernoulli KL divergence is about half its chi-square one when the shares are
        # close: a floor of three times the information gain is mostly above the bound.
        gain = merit - (pre - h)
        above, _ = best_numeric(*leaf, pre - h + 3 * gain)
        assert above in (merit, -np.inf)
        returned += above == merit
        tried += 1
    assert tried > 1000 and returned < tried / 2, (returned, tried)


@pytest.mark.parametrize("semantics", ["river", "weka_port"])
def test_split_attempts_do_not_depend_on_the_leads(semantics):
    """A split attempt evaluates first the two best features of the leaf's last attempt
    (``leaf_leads_``), a hint for the pruning floor: scrambling the hints leaves every tree
    bit-identical. Columns come in identical pairs (numeric and nominal), so that merits tie
    exactly and the tie rule (the later feature wins, as in River's stable sort) is exercised
    whatever the order of evaluation."""
    rng = np.random.default_rng(3)
    n, k = 4000, 4
    a = rng.normal(size=n)
    b = rng.normal(size=n)
    c = rng.integers(0, 3, size=n).astype(float)
    X = np.column_stack([a, a, b, c, c, b])
    labels = (a > 0.3).astype(int) + 2 * (c == 1) * (rng.uniform(size=n) < 0.8)
    params = dict(
        n_features=None, grace_period=(5.0, 20.0), nominal_attributes={3: 3, 4: 3},
        semantics=semantics, leaf_prediction="nba" if semantics == "river" else "mc",
    )  # fmt: skip
    plain, scrambled = VFDTCommittee(**params), VFDTCommittee(**params)
    for committee in (plain, scrambled):
        committee.start(6, k, X.shape[1], seed=2)
    for t in range(n):
        weights = np.zeros((6, k))
        weights[:, labels[t]] = rng.uniform(0.5, 2.0)
        if t % 7 == 0:
            scrambled.leaf_leads_[:] = rng.integers(
                -2, X.shape[1] + 2, size=scrambled.leaf_leads_.shape
            )
        plain.learn(X[t], weights)
        scrambled.learn(X[t], weights)
        if t % 50 == 0:
            assert np.array_equal(plain.predict(X[t]), scrambled.predict(X[t]))
    assert plain.leaf_counts().sum() > 30  # the trees split: the attempts were exercised
    for name, value in vars(plain).items():
        # the leads themselves differ, and so does the scratch the evaluations leave in work_
        if name.endswith("_") and name not in ("leaf_leads_", "work_"):
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(scrambled, name), equal_nan=True), name


def test_a_committee_pickled_before_the_leads_loads_without_them():
    """Committees pickled before leaves kept their leads (checkpoints of earlier versions) load
    with no lead, and then learn exactly as a committee that had them."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 3))
    committee = VFDTCommittee(n_features=None)
    committee.start(3, 2, 3, seed=1)
    weights = np.ones((3, 2))
    for x in X[:300]:
        committee.learn(x, weights * (x[:2] > 0))
    state = pickle.loads(pickle.dumps(committee)).__dict__
    del state["leaf_leads_"]
    old = VFDTCommittee.__new__(VFDTCommittee)
    old.__setstate__(state)
    assert (old.leaf_leads_ == -1).all() and old.leaf_leads_.shape == (len(old.leaf_last_), 2)
    for x in X[300:]:
        committee.learn(x, weights * (x[:2] > 0))
        old.learn(x, weights * (x[:2] > 0))
    assert np.array_equal(committee.node_feature_, old.node_feature_)
    assert np.array_equal(committee.predict(X[0]), old.predict(X[0]))


@pytest.mark.parametrize("n_split_points", [10, 300])
def test_split_attempts_do_not_depend_on_the_kept_sums(n_split_points):
    """With many labels each tree keeps the sums behind its bounds at a few leaves and brings
    them up to date from a log of the updates (``_vfdt_bounds._kept_bounds_of_merits``): a
    cache. Forgetting it every few rows (every narrowing then sums afresh) leaves every tree
    bit-identical, the kept sums having been used most of the time in the other committee.
    Also with more split points than a catch-up batches terms by default (``ITEM_COLUMNS``):
    its scratch then holds one class's terms at least."""
    from olboost.datasets import make_label_stream
    from olboost.weak._vfdt_bounds import ITEM_COLUMNS, KEPT_LEAVES, kept_ages

    assert n_split_points <= 10 or n_split_points > ITEM_COLUMNS
    X, Y = make_label_stream(1500, 150, relevant=4, features=8, seed=2)
    params = dict(n_features=None, grace_period=(5.0, 20.0), n_split_points=n_split_points)
    plain, forgetful = VFDTCommittee(**params), VFDTCommittee(**params)
    for committee in (plain, forgetful):
        committee.start(4, 150, X.shape[1], seed=3)
    caught_up = 0
    for t in range(X.shape[0]):
        weights = np.outer(np.linspace(0.5, 2.0, 4), Y[t])
        if t % 5 == 0:
            forgetful.kept_[:, :KEPT_LEAVES] = -1
        plain.learn(X[t], weights)
        forgetful.learn(X[t], weights)
        caught_up = max(caught_up, int(kept_ages(plain.kept_, X.shape[1]).max()))
    assert plain.leaf_counts().sum() > 12 and caught_up > 50, (plain.leaf_counts(), caught_up)
    for name, value in vars(plain).items():
        # the caches differ, so may the hints of the leads and the scratch in work_
        if (
            name.endswith("_")
            and not name.startswith("kept_")
            and name
            not in (
                "leaf_leads_",
                "work_",
            )
        ):
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(forgetful, name), equal_nan=True), name


def test_a_committee_pickled_before_the_kept_sums_loads_without_them():
    """Committees pickled before trees kept their bounds' sums load with none kept, and then
    learn exactly as a committee that had them."""
    from olboost.datasets import make_label_stream
    from olboost.weak._vfdt_bounds import KEPT_LEAVES

    X, Y = make_label_stream(800, 80, relevant=3, features=5, seed=4)
    committee = VFDTCommittee(n_features=None)
    committee.start(3, 80, X.shape[1], seed=1)
    weights = np.ones((3, 80))
    for t in range(400):
        committee.learn(X[t], weights * Y[t])
    state = pickle.loads(pickle.dumps(committee)).__dict__
    for name in [name for name in state if name.startswith("kept_")]:
        del state[name]
    old = VFDTCommittee.__new__(VFDTCommittee)
    old.__setstate__(state)
    assert (old.kept_[:, :KEPT_LEAVES] == -1).all() and old.kept_log_.shape[0] == 3
    for t in range(400, 800):
        committee.learn(X[t], weights * Y[t])
        old.learn(X[t], weights * Y[t])
    assert np.array_equal(committee.node_feature_, old.node_feature_)
    assert np.array_equal(
        committee._dense_leaf_rows()["leaf_class_"], old._dense_leaf_rows()["leaf_class_"]
    )
    assert np.array_equal(committee.predict(X[0]), old.predict(X[0]))


@pytest.mark.parametrize("semantics", ["river", "weka_port"])
def test_heavy_weights_match_reference_exactly(semantics):
    """Weights that reach the grace period at every example (as the top-k boosters' importance
    weights do, times the multipliers): each leaf attempts a split at every example, and after
    a null split restarts its observers with one example in them, one point per feature, which
    split attempts settle by a shortcut (``_vfdt_attempt._no_threshold_anywhere``). Numeric
    features only, so that the shortcut can apply."""
    X, W = mixed_stream(n=500, seed=3)
    W = W * 4.0
    c = committee(
        semantics=semantics,
        nominal_attributes={},
        grace_period=(1.0, 3.0),
        tie_threshold=(0.05, 0.5),
        weight_multiplier=(3.0, 10.0),
    )
    assert_matches_reference(c, X, W)


def test_a_sum_of_squared_deviations_rounded_below_zero_is_a_zero_deviation():
    """Welford's weighted update rounds a sum of squared deviations a little below 0 when the
    weights are very uneven (a Top-k BBM of 2,000 learners at gamma 1e-300: 593 of them, down to
    -1.1e-14). Every use already took the NaN of its root as a zero deviation; the split
    search's scratch, which is pickled, held 22 NaN. Now the deviation is 0 itself."""
    from olboost import TopkBBM
    from olboost.datasets import make_label_stream
    from olboost.weak._vfdt_split import _deviation

    assert _deviation(-1e-14, 5.0) == (0.0, -1.0)
    X, Y = make_label_stream(150, labels=4, relevant=2, features=6, seed=0)
    model = TopkBBM(VFDTCommittee(n_features=4), learners=2000, seed=1, gamma=1e-300, k=2, rho=0.05)
    model.learn(X, Y)
    assert (model.committee_.block_gauss_[..., K.G_SSD] < 0).any()  # the case is reached
    assert not np.isnan(model.committee_.work_).any()


# ----------------------------------------------- boundaries River's trees meet (mutation round 2)


def _river_proba(proba: dict, k: int = 2) -> np.ndarray:
    return np.array([proba.get(c, 0.0) for c in range(k)]) if proba else np.full(k, 1.0 / k)


def test_a_value_equal_to_a_threshold_goes_left_as_in_river():
    # River sends x <= threshold left; on an integer feature the thresholds are data values
    # (range 0..11, 10 split points: 1.0 .. 10.0), which the continuous streams never hit
    HoeffdingTreeClassifier = pytest.importorskip("river.tree").HoeffdingTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 12, size=(600, 2)).astype(float)
    y = (X[:, 0] >= 6).astype(int)
    c = VFDTCommittee(grace_period=(20.0, 20.0), split_confidence=(0.1, 0.1),
                      tie_threshold=(0.05, 0.05), weight_multiplier=(1.0, 1.0),
                      leaf_prior=0.0)  # fmt: skip
    c.start(1, 2, 2, seed=1)
    r = HoeffdingTreeClassifier(grace_period=20.0, delta=0.1, tau=0.05, leaf_prediction="mc")
    for x, label in zip(X, y, strict=True):
        expected = _river_proba(r.predict_proba_one({0: x[0], 1: x[1]}))
        np.testing.assert_allclose(c.predict(x)[0], expected)
        w = np.zeros((1, 2))
        w[0, label] = 1.0
        c.learn(x, w)
        r.learn_one({0: x[0], 1: x[1]}, int(label))
    assert kernel_structure(c, 0) == river_structure(r._root, [0, 1], 2)
    assert np.isin(c.node_value_[0, : c.n_nodes_[0]], X).any()  # a threshold on a data value


def test_a_missing_value_takes_the_first_of_equally_heavy_branches_as_in_river():
    # River's most_common_path keeps the left branch unless it is lighter
    HoeffdingTreeClassifier = pytest.importorskip("river.tree").HoeffdingTreeClassifier

    c = VFDTCommittee(grace_period=(10.0, 10.0), split_confidence=(0.1, 0.1),
                      tie_threshold=(0.05, 0.05), weight_multiplier=(1.0, 1.0), leaf_prior=0.0,
                      missing="learn")  # fmt: skip
    c.start(1, 2, 1, seed=1)
    r = HoeffdingTreeClassifier(grace_period=10.0, delta=0.1, tau=0.05, leaf_prediction="mc")
    for t in range(40):
        w = np.zeros((1, 2))
        w[0, t % 2] = 1.0
        c.learn(np.array([float(t % 2)]), w)
        r.learn_one({0: float(t % 2)}, t % 2)
    assert kernel_structure(c, 0) == river_structure(r._root, [0], 2)  # two leaves of 20 each
    np.testing.assert_allclose(c.predict(np.array([np.nan]))[0], [1.0, 0.0])
    np.testing.assert_allclose(_river_proba(r.predict_proba_one({})), [1.0, 0.0])


def test_naive_bayes_starts_when_the_weight_reaches_the_threshold_as_in_river():
    HoeffdingTreeClassifier = pytest.importorskip("river.tree").HoeffdingTreeClassifier

    c = VFDTCommittee(grace_period=(1000.0, 1000.0), split_confidence=(0.1, 0.1),
                      tie_threshold=(0.05, 0.05), weight_multiplier=(1.0, 1.0), leaf_prior=0.0,
                      leaf_prediction="nb", nb_threshold=6.0)  # fmt: skip
    c.start(1, 2, 1, seed=1)
    r = HoeffdingTreeClassifier(grace_period=1000.0, delta=0.1, tau=0.05, leaf_prediction="nb",
                                nb_threshold=6)  # fmt: skip
    for v, label in [(0.0, 0), (0.2, 0), (0.1, 0), (1.0, 1), (1.2, 1), (0.9, 1)]:  # weight 6
        w = np.zeros((1, 2))
        w[0, label] = 1.0
        c.learn(np.array([v]), w)
        r.learn_one({0: v}, label)
    p = c.predict(np.array([0.05]))[0]
    np.testing.assert_allclose(p, _river_proba(r.predict_proba_one({0: 0.05})))
    assert p[0] > 0.99  # naive Bayes, not the majority's tie


def test_the_weka_port_attempts_no_split_at_a_weight_equal_to_the_grace_period():
    # its leaf tries once the weight seen exceeds the grace period: at 4 (each class counted
    # from 1, then two examples) it has not tried, so it is not pre-pruned yet
    c = VFDTCommittee(grace_period=(4.0, 4.0), split_confidence=(0.5, 0.5),
                      tie_threshold=(0.9, 0.9), weight_multiplier=(1.0, 1.0),
                      semantics="weka_port")  # fmt: skip
    c.start(1, 2, 1, seed=0)
    for t in range(2):
        w = np.zeros((1, 2))
        w[0, t % 2] = 1.0
        c.learn(np.array([1.0]), w)
    assert c.leaf_last_[c.node_slot_[0, 0]] != np.inf


def test_interval_ends_closed_on_the_left_take_their_low_end_and_nominals_beyond_a_row_wait():
    # mutation round 10: closed="left" refused its low end (min_branch_fraction=0 "must be in
    # [0, 1)"); and before the start, a nominal attribute past the row's width was read past it
    from olboost.base import Interval

    Interval(0, 1, closed="left").check("p", 0.0)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\), got 1.0"):
        Interval(0, 1, closed="left").check("p", 1.0)
    assert VFDTCommittee(min_branch_fraction=0.0).min_branch_fraction == 0.0
    committee = VFDTCommittee(nominal_attributes={2: 3})
    assert committee.row_problem(np.array([0.0, 1.0])) is None
    assert committee.check_rows(np.array([[0.0, 1.0], [1.0, 0.0]])) == 2
