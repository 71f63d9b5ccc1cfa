"""A label ranker's dict is a sparse example: an absent key is 0 and a key the ranker has not
seen is a new feature (:class:`olboost.LabelRanker`, "Dicts are sparse examples").

The paper's examples are bags of words whose vocabulary grows with the stream; River's
``BagOfWords`` gives them as dicts of the words present. The checks: under the squared norm the
ranker grown one dict at a time is, bit for bit, the ranker run on the CSR matrix of the final
vocabulary (a feature that is 0 is never read or moved); under either complexity a dict with
unseen keys is scored, without changing the model, as the ranker grown by them scores it; the
entropy's normalisers stay those of the grown ``theta``; what is refused changes nothing; the
growth is amortised; a pickled ranker resumes its growth.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from scipy import sparse

from olboost import LabelRanker
from olboost.checks import _state_bytes

LABELS = ["inbox", "work", "family", "spam"]
CONFIGS = [
    {"update": "I", "seed": 1},
    {"update": "II", "C": 0.5, "margin": 1.0, "seed": 2},
    {"update": "III", "C": 0.5, "margin": 1.0},
    {"update": "I", "complexity": "entropy", "C": 2.0, "margin": 0.1, "seed": 3},
    {"update": "II", "complexity": "entropy", "C": 2.0, "margin": 0.1, "seed": 4},
    {"update": "III", "complexity": "entropy", "C": 2.0, "margin": 0.1},
]
IDS = [f"{c['update']}-{c.get('complexity', 'squared')}" for c in CONFIGS]


def _bags(n: int = 120, seed: int = 0) -> tuple[list[dict[str, float]], list[set[str]]]:
    """Bags of words (values in (0, 1], binary for a third of them) whose vocabulary grows:
    each folder has its own words, and word ``w{i}`` first shows up around example ``i / 2``."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for t in range(n):
        folder = int(rng.integers(len(LABELS)))
        top = 8 + t // 2
        words = {f"w{int(j)}" for j in rng.integers(0, top, size=6)}
        words |= {f"{LABELS[folder]}{int(j)}" for j in rng.integers(0, 4 + t // 10, size=3)}
        binary = t % 3 == 0
        xs.append({w: 1.0 if binary else float(rng.uniform(0.1, 1.0)) for w in sorted(words)})
        ys.append({LABELS[folder]} | ({"inbox"} if rng.random() < 0.3 else set()))
    return xs, ys


def _grown(params: dict, xs: list, ys: list) -> tuple[LabelRanker, np.ndarray]:
    """The ranker learned one dict at a time, and its scores of each dict before learning it."""
    model = LabelRanker(labels=LABELS, **params)
    scores = []
    for x, y in zip(xs, ys, strict=True):
        scores.append([model.score_one(x)[label] for label in LABELS])
        model.learn_one(x, y)
    return model, np.array(scores)


@pytest.mark.parametrize("params", CONFIGS[:3], ids=IDS[:3])
def test_squared_norm_grown_ranker_is_the_ranker_of_the_final_vocabulary(params):
    xs, ys = _bags()
    model, scores = _grown(params, xs, ys)
    names = model.feature_names_in_
    assert len(names) > len(xs[0]) + 50, "the vocabulary must have grown along the stream"
    assert len(set(names)) == len(names)
    column = {name: j for j, name in enumerate(names)}
    rows, cols, vals = [], [], []
    for i, x in enumerate(xs):
        for word, value in x.items():
            rows.append(i)
            cols.append(column[word])
            vals.append(value)
    X = sparse.csr_matrix((vals, (rows, cols)), shape=(len(xs), len(names)))
    Y = np.array([[label in y for label in LABELS] for y in ys])
    batch = LabelRanker(labels=LABELS, **params)
    batch_scores = batch.score_then_learn(X, Y)
    # the first row: scores of a ranker not started (zeros) against those of its first trial
    assert np.array_equal(scores[1:], batch_scores[1:])
    assert np.array_equal(model.theta_, batch.theta_)
    assert (model.n_mistakes_, model.n_updates_) == (batch.n_mistakes_, batch.n_updates_)
    assert model.relevant_mass_ == batch.relevant_mass_


@pytest.mark.parametrize("params", CONFIGS, ids=IDS)
def test_unseen_keys_are_scored_as_the_grown_ranker_scores_them(params):
    xs, ys = _bags(60)
    model, _ = _grown(params, xs, ys)
    before = pickle.dumps(model)
    probe = {"w3": 1.0, "never-seen": 0.5, "not-seen-either": 1.0, "work1": 0.25}
    scores = model.score_one(probe)
    ranking = model.rank_one(probe)
    assert pickle.dumps(model) == before, "scoring unseen keys must not change the ranker"
    grown = copy.deepcopy(model)
    grown._grow(["never-seen", "not-seen-either"])
    assert grown.score_one(probe) == scores  # bit for bit
    assert grown.rank_one(probe) == ranking
    # an unseen key of value 0 is as absent: it adds no feature (under the entropy it would
    # shrink every weight)
    bare = {"w3": 1.0, "work1": 0.25}
    assert model.score_one({**bare, "zero-word": 0.0, "w3x": 0.0}) == model.score_one(bare)
    twin = copy.deepcopy(model)
    model.learn_one({**bare, "zero-word": 0.0}, {"work"})
    twin.learn_one(bare, {"work"})
    assert "zero-word" not in model.feature_names_in_
    assert _state_bytes(model) == _state_bytes(twin)


@pytest.mark.parametrize("params", CONFIGS[3:], ids=IDS[3:])
def test_entropy_normalisers_follow_the_grown_theta(params):
    """``log_norm_`` is ``log sum_j exp(theta_j)`` over every feature, those added since
    included (each brings ``e^0``); 1e-12 is the running normaliser's own tolerance
    (:data:`olboost.rankers._kernels.NORM_ERROR_MAX`, 2^-40, plus rounding)."""
    xs, ys = _bags()
    model, scores = _grown(params, xs, ys)
    theta = model.theta_
    top = theta.max(axis=0)
    exact = top + np.log(np.exp(theta - top).sum(axis=0))
    assert np.allclose(model.log_norm_, exact, rtol=0, atol=1e-12)
    assert np.all(model.norm_error_ < 2.0**-40)
    w = model.weight_vectors()
    assert np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # features in [0, 1]: every score is an average of them
    assert np.all((scores >= 0.0) & (scores <= 1.0 + 1e-12))
    assert model.n_mistakes_ < 0.6 * len(xs), "the grown ranker must learn the folders"


@pytest.mark.parametrize("params", CONFIGS[:1] + CONFIGS[3:4], ids=[IDS[0], IDS[3]])
def test_an_absent_key_is_zero(params):
    xs, ys = _bags(30)
    a, _ = _grown(params, xs, ys)
    b = copy.deepcopy(a)
    names = a.feature_names_in_
    x = {"w1": 1.0, "work0": 1.0}
    a.learn_one(x, {"work"})
    b.learn_one({name: x.get(name, 0.0) for name in reversed(names)}, {"work"})
    assert pickle.dumps(a.theta_) == pickle.dumps(b.theta_)
    assert np.array_equal(a.log_norm_, b.log_norm_)
    assert a.score_one({"w2": 1.0}) == b.score_one({name: 0.0 for name in names} | {"w2": 1.0})


def test_rejected_dicts_change_nothing():
    xs, ys = _bags(20)
    for params in (CONFIGS[1], CONFIGS[4]):
        model, _ = _grown(params, xs, ys)
        before = pickle.dumps(model)
        d = model.n_features_in_
        bad = [
            ({"w1": 1.0, "new-word": None}, {"work"}, ValueError, "None"),
            ({"w1": 1.0, "new-word": math.nan}, {"work"}, ValueError, "new-word"),
            ({"w1": 1.0, "new-word": math.inf}, {"work"}, ValueError, "new-word"),
            ({"w1": 1.0, "new-word": 1e160}, {"work"}, ValueError, "new-word"),
            ({"w1": 1.0, "new-word": "1"}, {"work"}, TypeError, "new-word"),
            ({"w1": 1.0, "new-word": 1.0}, {"no such folder"}, ValueError, "no such folder"),
            ({"w1": 1.0, "new-word": 1.0}, ["work"], TypeError, "set"),
            ([1.0] * d, {"work"}, TypeError, "must be a dict"),
        ]
        if params.get("complexity") == "entropy":
            bad.append(({"w1": 1.0, "new-word": 2.0}, {"work"}, ValueError, "'new-word'"))
        for x, y, error, words in bad:
            with pytest.raises(error, match=words):
                model.learn_one(x, y)
            assert pickle.dumps(model) == before, (x, y)
            if y == {"work"}:  # the features are what is wrong: refused when scoring too
                with pytest.raises(error):
                    model.score_one(x)
        assert model.n_features_in_ == d


def test_frames_read_an_absent_column_as_zero_and_refuse_unseen_ones():
    pd = pytest.importorskip("pandas", reason="pandas is optional here")
    xs, ys = _bags(30)
    model, _ = _grown(CONFIGS[4], xs, ys)
    names = model.feature_names_in_
    rows = [{"w1": 1.0, "work0": 0.5}, {"w2": 1.0}]
    frame = pd.DataFrame([{name: r.get(name, 0.0) for name in ["w2", "w1", "work0"]} for r in rows])
    expected = np.array([[model.score_one(r)[label] for label in LABELS] for r in rows])
    assert np.array_equal(model.score(frame), expected)
    before = pickle.dumps(model)
    unseen = frame.assign(fresh=[1.0, 0.0])
    with pytest.raises(ValueError, match="columns the ranker has not seen \\('fresh'\\)"):
        model.learn(unseen, np.zeros((2, len(LABELS)), dtype=bool))
    with pytest.raises(ValueError, match="give dicts"):
        model.score(unseen)
    assert pickle.dumps(model) == before
    grown = copy.deepcopy(model)
    grown.learn(frame, np.eye(len(LABELS), dtype=bool)[:2])
    for r, y in zip(rows, [{LABELS[0]}, {LABELS[1]}], strict=True):
        model.learn_one(r, y)
    assert np.array_equal(grown.theta_, model.theta_)
    assert grown.feature_names_in_ == names


def test_growth_is_amortised_and_survives_pickling():
    """One new word per example: ``theta`` is copied O(log d) times, not once per example; a
    ranker pickled mid-stream grows on as the one never pickled, bit for bit."""
    model = LabelRanker(update="II", labels=LABELS, seed=1)
    buffers = set()
    rng = np.random.default_rng(5)
    stream = [({f"w{t}": 1.0, "common": 1.0}, {LABELS[int(rng.integers(4))]}) for t in range(400)]
    for x, y in stream[:300]:
        model.learn_one(x, y)
        buffers.add(model.theta_.ctypes.data)
    assert model.n_features_in_ == 301
    assert len(buffers) <= 2 * math.ceil(math.log2(301)) + 1
    resumed = pickle.loads(pickle.dumps(model))
    for x, y in stream[300:]:
        model.learn_one(x, y)
        resumed.learn_one(x, y)
    assert _state_bytes(resumed) == _state_bytes(model)
    assert resumed.feature_names_in_[-1] == "w399"


@pytest.mark.parametrize("params", CONFIGS, ids=IDS)
def test_an_empty_first_dict_starts_a_ranker_of_no_feature(params):
    """River's ``BagOfWords`` gives ``{}`` for an empty text, possibly the stream's first: it
    is scored (zeros) and learned before any feature is known; the words that come later are
    new features, and the entropy's normalisers are then those of the grown ``theta``."""
    model = LabelRanker(labels=LABELS, **params)
    assert model.score_one({}) == dict.fromkeys(LABELS, 0.0)
    model.learn_one({}, {"work"})
    assert model.n_features_in_ == 0 and model.feature_names_in_ == []
    assert model.score_one({}) == dict.fromkeys(LABELS, 0.0)
    assert model.weight_vectors().shape == (len(LABELS), 0)
    # no feature: no weight, so no conjugate term (eq. 5); the trial's dual variables count
    assert model.dual_objective() == model.margin * model.relevant_mass_
    xs, ys = _bags(40)
    for x, y in zip(xs, ys, strict=True):
        model.learn_one(x, y)
    assert model.feature_names_in_[: len(xs[0])] == sorted(xs[0])
    assert np.isfinite(model.theta_).all()
    if params.get("complexity") == "entropy":
        theta = model.theta_
        top = theta.max(axis=0)
        exact = top + np.log(np.exp(theta - top).sum(axis=0))
        assert np.allclose(model.log_norm_, exact, rtol=0, atol=1e-12)  # as above


def test_river_bag_of_words_pipeline_with_an_empty_first_text():
    pytest.importorskip("river", reason="River is optional: pip install olboost[river]")
    from river import compose, evaluate, feature_extraction, metrics

    texts = ["", "cheap pills now", "meeting at noon", "cheap meeting", "pills pills", ""]
    targets = [{"spam": False, "work": True}, {"spam": True, "work": False}]
    stream = [(t, targets[i % 2]) for i, t in enumerate(texts * 5)]
    model = compose.Pipeline(
        ("bag", feature_extraction.BagOfWords()),
        ("ranker", LabelRanker(update="II", labels=["spam", "work"], seed=1)),
    )
    metric = metrics.multioutput.MicroAverage(metrics.Accuracy())
    evaluate.progressive_val_score(stream, model, metric)
    ranker = model["ranker"]
    assert ranker.t_ == len(stream)
    assert set(ranker.feature_names_in_) == {"cheap", "pills", "now", "meeting", "at", "noon"}


def test_series_of_names_are_sparse_and_positional_series_refused():
    pd = pytest.importorskip("pandas", reason="pandas is optional here")
    xs, ys = _bags(20)
    model, _ = _grown(CONFIGS[1], xs, ys)
    only_unseen = pd.Series({"zz": 1.0, "w1": 0.0})
    assert model.score_one(only_unseen) == model.score_one({"zz": 1.0})
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="indexed by position"):
        model.learn_one(pd.Series([1.0, 0.0, 2.0]), {"work"})
    assert pickle.dumps(model) == before
    model.learn_one(only_unseen, {"work"})
    assert model.feature_names_in_[-1] == "zz"


def test_frame_columns_are_told_apart_as_pandas_tells_them():
    """A bool column is not the feature 1 it equals (a frame keeps them apart; it was read as
    zeros); tuple names of different lengths (River's n-grams) are read by name."""
    pd = pytest.importorskip("pandas", reason="pandas is optional here")
    ints = LabelRanker(update="II", labels=LABELS, seed=0)
    ints.learn_one({0: 1.0, 1: 1.0}, {"work"})
    before = pickle.dumps(ints)
    with pytest.raises(ValueError, match="not seen \\(True, False\\)"):
        ints.score(pd.DataFrame([[3.0, 5.0]], columns=[True, False]))
    assert pickle.dumps(ints) == before
    grams = LabelRanker(update="II", labels=LABELS, seed=0)
    grams.learn_one({("x", 1): 1.0, ("y", 2, 3): 1.0}, {"work"})
    frame = pd.DataFrame({("x", 1): [1.0, 0.0]})
    expected = [grams.score_one({("x", 1): v}) for v in (1.0, 0.0)]
    got = grams.score(frame)
    assert got.tolist() == [[e[label] for label in LABELS] for e in expected]


def test_a_failed_growing_step_leaves_the_ranker_as_it_was(monkeypatch):
    """The ranker grows before its trial: a trial that never ran (an interrupt while it
    compiled) puts back the features and normalisers it had."""
    from olboost.rankers import _kernels

    xs, ys = _bags(20)
    model, _ = _grown(CONFIGS[4], xs, ys)
    before = pickle.dumps(model)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(_kernels, "learn_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.learn_one({"w1": 1.0, "brand-new": 1.0}, {"work"})
    assert pickle.dumps(model) == before
    monkeypatch.undo()
    model.learn_one({"w1": 1.0, "brand-new": 1.0}, {"work"})
    assert model.feature_names_in_[-1] == "brand-new"


@pytest.mark.parametrize("scale", ["none", "minmax", "standard"])
def test_names_and_scaling_statistics_grow_amortised_too(scale):
    # feature_names_in_ was copied whole at every example bringing a new key, and the scaling
    # statistics concatenated: at 400,000 features, 4.3 ms per such example (0.42 ms now)
    model = LabelRanker(update="II", labels=LABELS, seed=1, scale=scale)
    stores, buffers = set(), set()
    held = []
    for t in range(300):
        model.learn_one({f"w{t}": 1.0, "common": 1.0}, {LABELS[t % 4]})
        names = model.feature_names_in_  # a list at the start, then grown
        stores.add(id(getattr(names, "_names", names)))
        if scale != "none":
            buffers.add(model.m2_.ctypes.data)
        if t in (10, 200):
            held.append(model.feature_names_in_)
    bound = 2 * math.ceil(math.log2(301)) + 1
    assert len(stores) <= bound and len(buffers) <= bound
    # a name list read earlier keeps its names; equal to a list of them, and pickled as one
    assert [len(names) for names in held] == [12, 202] and held[0][-1] == "w10"
    assert held[0] == ["common", *(f"w{t}" for t in range(11))]
    assert model.feature_names_in_[-1] == "w299" and model.feature_names_in_[:2] == ["common", "w0"]
    assert type(pickle.loads(pickle.dumps(model)).feature_names_in_) is list
    # a learning call that fails puts the names back, and the next growth goes on from them
    twin = copy.deepcopy(model)
    with pytest.raises(ValueError, match="unknown label"):
        model.learn_one({"fresh": 1.0}, {"no-such-label"})
    assert len(model.feature_names_in_) == 301 and "fresh" not in model.feature_names_in_
    for m in (model, twin):
        m.learn_one({"fresh": 1.0, "common": 1.0}, {LABELS[0]})
    assert _state_bytes(model) == _state_bytes(twin)
