"""Missing attribute values in the compiled Hoeffding trees (``VFDTCommittee(missing="learn")``):
River's rules, checked against River's ``HoeffdingTreeClassifier`` fed dicts without the missing
keys, and the strict ``missing="error"``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from olboost import AdaOLMR, VFDTCommittee
from olboost.weak import _vfdt_kernels as K
from test_vfdt import (
    NOMINAL,
    _side_effect_free_cond_proba,
    committee,
    kernel_structure,
    mixed_stream,
    river_structure,
    river_trees,
    run,
)


def with_missing(X, rate=0.15, seed=3):
    """``X`` with each value missing (NaN) with probability ``rate``."""
    X = X.copy()
    X[np.random.default_rng(seed).uniform(size=X.shape) < rate] = np.nan
    return X


def present(x, columns):
    """River's view of ``x``: the learner's attributes whose value is not missing."""
    return {f: float(x[f]) for f in columns if not np.isnan(x[f])}


@pytest.mark.parametrize("mode", ["mc", "nba"])
def test_matches_river_with_missing_values(monkeypatch, mode):
    """Each tree is River's HoeffdingTreeClassifier given dicts without the missing attributes:
    observers skip the value, a split on a missing attribute sends the example down the heaviest
    branch (no split attempt follows, as in River), naive Bayes leaves the attribute out. Same
    splits and leaf weights bit for bit; probabilities to 1e-12 (River sums in dict order, see
    ``test_naive_bayes_matches_river_hoeffding_tree``).

    Mathematically tied candidates are broken by rounding, which depends on the order of the sums:
    River sums a splitter's classes in the order they first came with a present value, the kernels
    in class order. With missing values that order varies more, and so does the winner of such
    ties: the multiway split of a nominal attribute with two observed categories against its
    binary split, or a multiway split whose extra branches are pure in one class against the binary
    split merging them. Every divergence seen with other missing-value patterns (seeds 3, 4, 5:
    first at examples 1016, 509 and 506) was such a tie, its merits equal to 1e-15; this pattern
    (seed 6) meets none."""
    splitter = pytest.importorskip("river.tree.splitter.nominal_splitter_classif")
    NominalSplitterClassif = splitter.NominalSplitterClassif

    monkeypatch.setattr(NominalSplitterClassif, "cond_proba", _side_effect_free_cond_proba)
    X, W = mixed_stream(1500)
    X = with_missing(X, seed=6)
    c = committee(leaf_prediction=mode, leaf_prior=0.0)
    columns, trees = river_trees(c, mode)
    mult = c.setup_.weight_multiplier
    gap = 0.0
    detours = 0
    for x, w in zip(X, W, strict=True):
        got = c.predict(x)
        for i, tree in enumerate(trees):
            proba = tree.predict_proba_one(present(x, columns[i]))
            want = np.array([proba.get(label, 0.0) for label in range(4)])
            if not want.sum() > 0.0:
                want[:] = 0.25
            gap = max(gap, float(np.abs(got[i] - want).max()))
            node = tree._root
            while hasattr(node, "children"):
                if node.feature not in present(x, columns[i]):
                    detours += 1
                    break
                try:
                    node = node.next(present(x, columns[i]))
                except KeyError:
                    break
        c.learn(x, w)
        for i, tree in enumerate(trees):
            xi = present(x, columns[i])
            for label in range(4):
                if w[i, label] > 0:
                    tree.learn_one(xi, label, w=float(w[i, label]) * float(mult[i]))
    assert gap < 1e-12
    for i, tree in enumerate(trees):
        assert kernel_structure(c, i) == river_structure(tree._root, columns[i], 4), i
    # The stream must have sent examples down the heaviest branch, and grown real trees.
    assert detours > 100
    assert c.leaf_counts().min() >= 3


def test_complete_data_learns_the_same_with_either_setting():
    """Without missing values, ``missing="learn"`` and ``"error"`` grow the same trees."""
    X, W = mixed_stream(400)
    a, b = committee(), committee(missing="error")
    assert np.array_equal(run(a, X, W), run(b, X, W))
    for name in ("node_kind_", "node_value_", "block_gauss_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a._dense_leaf_rows()["leaf_class_"], b._dense_leaf_rows()["leaf_class_"])


def test_per_attribute_weights():
    """A numeric observer's weight counts the examples where its value was present."""
    c = VFDTCommittee(n_features=None, grace_period=(1e9, 1e9), weight_multiplier=(1.0, 1.0))
    c.start(1, 2, 2, seed=0)
    w = np.array([[1.0, 0.0]])
    for x in ([1.0, np.nan], [2.0, 5.0], [np.nan, np.nan], [4.0, 7.0]):
        c.learn(np.array(x), w)
    slot = c.node_slot_[0, 0]
    rows = c._dense_leaf_rows()
    block = rows["leaf_blocks_"][slot, 0]
    g = c.block_gauss_[block]
    assert rows["leaf_obs_"][slot, 0] == 4.0
    features = list(c.setup_.features[0])
    a, b = g[features.index(0)], g[features.index(1)]
    assert a[K.G_WEIGHT] == 3.0 and a[K.G_MEAN] == pytest.approx(7.0 / 3.0)
    assert (a[K.G_MIN], a[K.G_MAX]) == (1.0, 4.0)
    assert b[K.G_WEIGHT] == 2.0 and b[K.G_MEAN] == 6.0 and b[K.G_SSD] == 2.0


def test_all_missing_predicts_and_learns():
    X, W = mixed_stream(300)
    c = committee()
    run(c, X, W)
    before = c._dense_leaf_rows()["leaf_class_"].sum()
    x = np.full(8, np.nan)
    p = c.predict(x)
    assert p.shape == (5, 4) and np.allclose(p.sum(axis=1), 1.0)
    c.learn(x, np.ones((5, 4)))
    assert c._dense_leaf_rows()["leaf_class_"].sum() > before


def test_error_setting_rejects_missing_and_learn_rejects_infinity():
    X, W = mixed_stream(60)
    strict = committee(missing="error")
    run(strict, X, W)
    snapshot = pickle.dumps(strict)
    x = X[0].copy()
    x[0] = np.nan
    with pytest.raises(ValueError, match="missing value"):
        strict.learn(x, np.ones((5, 4)))
    assert pickle.dumps(strict) == snapshot
    lenient = committee()
    run(lenient, X, W)
    snapshot = pickle.dumps(lenient)
    x[0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        lenient.learn(x, np.ones((5, 4)))
    assert pickle.dumps(lenient) == snapshot
    with pytest.raises(ValueError, match="missing"):
        VFDTCommittee(missing="skip")


def test_booster_learns_with_missing_values_and_pickles():
    """A booster on a stream with missing values: runs through the compiled driver, scores stay
    finite, and a pickled copy continues identically."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 0] + X[:, 2] > 0])
    X = with_missing(X, rate=0.2)
    model = AdaOLMR(VFDTCommittee(n_features=4), learners=8, seed=1, labels=3)
    scores = model.score_then_learn(X[:200], Y[:200])
    assert np.isfinite(scores).all()
    copy = pickle.loads(pickle.dumps(model))
    rest = model.score_then_learn(X[200:], Y[200:])
    assert np.array_equal(rest, copy.score_then_learn(X[200:], Y[200:]))


def test_river_committee_leaves_missing_attributes_out_as_the_compiled_trees_skip_them():
    """RiverCommittee hands River dicts without the missing attributes; on the stream of
    ``test_matches_river_with_missing_values`` its predictions are the compiled committee's."""
    pytest.importorskip("river")
    from olboost import RiverCommittee

    X, W = mixed_stream(400)
    X = with_missing(X, seed=6)
    params = dict(
        n_features=6,
        grace_period=(3.0, 8.0),
        split_confidence=(0.05, 0.5),
        tie_threshold=(0.05, 0.5),
        weight_multiplier=(1.0, 3.0),
    )
    from river.tree import HoeffdingTreeClassifier

    river_c = RiverCommittee(
        HoeffdingTreeClassifier(leaf_prediction="mc", nominal_attributes=sorted(NOMINAL)), **params
    )
    river_c.start(5, 4, 8, seed=7)
    fast = committee(leaf_prior=0.0)
    for x, w in zip(X, W, strict=True):
        np.testing.assert_allclose(river_c.predict(x), fast.predict(x), rtol=0, atol=1e-12)
        river_c.learn(x, w)
        fast.learn(x, w)
    strict = RiverCommittee(missing="error", **params)
    strict.start(5, 4, 8, seed=7)
    with pytest.raises(ValueError, match="missing value"):
        strict.learn(X[np.isnan(X).any(axis=1)][0], np.ones((5, 4)))


def test_pandas_na_in_a_dict_is_a_missing_value():
    # River's stream.iter_frame (iter_pandas in older River) yields pd.NA for a gap in a
    # nullable column; it was refused
    # ("the value under key 'a' must be a number, got <NA>") where None is a missing value
    pd = pytest.importorskip("pandas")
    stream = pytest.importorskip("river.stream")
    frames = getattr(stream, "iter_frame", None) or stream.iter_pandas
    frame = pd.DataFrame({"a": [1.0, None, 3.0, 0.5], "b": [2.0, 1.0, None, 4.0]})
    nullable = frame.astype("Float64")
    rows = [x for x, _ in frames(nullable)]
    assert rows[1]["a"] is pd.NA and rows[2]["b"] is pd.NA
    plain = [{k: (None if v != v else v) for k, v in x.items()} for x, _ in frames(frame)]
    a, b = (AdaOLMR(VFDTCommittee(), learners=3, seed=1, labels=2) for _ in range(2))
    for x, x_none, y in zip(rows, plain, [{0}, {1}, {0, 1}, {1}], strict=True):
        a.learn_one(x, y)
        b.learn_one(x_none, y)
    assert pickle.dumps(a) == pickle.dumps(b)
    assert a.score_one(rows[1]) == b.score_one(plain[1])
    strict = AdaOLMR(VFDTCommittee(missing="error"), learners=3, seed=1, labels=2)
    strict.learn_one(rows[0], {0})
    before = pickle.dumps(strict)
    with pytest.raises(ValueError, match=r"missing value \(pandas NA\) under key 'a'"):
        strict.learn_one(rows[1], {1})
    assert pickle.dumps(strict) == before
