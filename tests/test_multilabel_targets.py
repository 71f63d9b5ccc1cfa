"""River's multi-label targets and predictions on every ranking learner, River not needed
(issue 14, item 2; River itself is exercised in ``test_river_multilabel.py``).

* ``learn_one(x, y)`` takes ``y`` as River's ``{label: bool}``: the same target as the set of the
  labels mapped to ``True``, a label absent from the dict being irrelevant; every key must be a
  label and every value a bool, checked before anything changes.
* ``predict_one(x)`` is ``{label: bool}`` by the documented rank cut: the ``r`` top-scored labels,
  ``r`` the label cardinality learned so far rounded half up, in ``[1, k]`` (a top-k booster:
  its ``k``). It changes nothing.
* ``RankLoss.update`` / ``rank_loss`` take ``score_one``'s dict with a set or a River dict, and
  agree with the index-and-array path.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from olboost import AdaOLMR, LabelRanker, OnlineBMR, TopkAdaptive, TopkBBM, VFDTCommittee
from olboost.checks import synthetic_multilabel
from olboost.feedback import FullFeedback
from olboost.metrics import RankLoss, rank_loss

RANKERS = [AdaOLMR, OnlineBMR, TopkBBM, TopkAdaptive, LabelRanker]
TOPK = (TopkBBM, TopkAdaptive)
LABELS = ["l0", "l1", "l2", "l3", "l4"]

#: Every check-suite configuration of every ranking learner, over string labels.
CONFIGS = [
    pytest.param(cls, params, id=f"{cls.__name__}-{i}")
    for cls in RANKERS
    for i, params in enumerate(cls._unit_test_params())
]


def _model(cls, params, labels=LABELS):
    """The configuration over ``labels``, seeded (a configuration without a seed gets 0)."""
    return cls(**{"seed": 0, **params, "labels": labels})


def _stream(model, n=60, seed=0):
    """Features the model accepts and the relevant-label masks ``(n, k)``."""
    X, Y = synthetic_multilabel(n=n, d=6, k=len(model._outputs()), seed=seed)
    if hasattr(model, "_unit_test_features"):
        X = model._unit_test_features(X)
    return X, Y


def _as_set(model, row):
    return {model._outputs()[j] for j in np.flatnonzero(row)}


def _as_dict(model, row):
    return {label: bool(v) for label, v in zip(model._outputs(), row, strict=True)}


def _state(model):
    """What the model learned, as bytes (a top-k booster's random model id left out)."""
    state = model.__getstate__()
    state.pop("model_id_", None)
    return pickle.dumps(state)


def _expected_r(counts, k):
    """The documented cut: the mean count rounded half up, in [1, k]; 1 before any example."""
    if not counts:
        return 1
    return min(k, max(1, math.floor(sum(counts) / len(counts) + 0.5)))


# ------------------------------------------------------------------------------ targets


@pytest.mark.parametrize(("cls", "params"), CONFIGS)
def test_a_dict_target_is_the_set_of_its_true_labels(cls, params):
    """Sets, full dicts, dicts of NumPy bools and dicts of the relevant labels only: every
    model scores and ends bit for bit alike."""
    models = [_model(cls, params) for _ in range(4)]
    X, Y = _stream(models[0])
    targets = [
        lambda row: _as_set(models[0], row),
        lambda row: _as_dict(models[0], row),
        lambda row: {label: np.bool_(v) for label, v in _as_dict(models[0], row).items()},
        lambda row: {label: True for label in _as_set(models[0], row)},
    ]
    scores = [[] for _ in models]
    for x, row in zip(X, Y, strict=True):
        for model, target, out in zip(models, targets, scores, strict=True):
            out.append(list(model.score_one(x).values()))
            model.learn_one(x, target(row))
    for out in scores[1:]:
        assert np.array_equal(out, scores[0])
    assert len({_state(model) for model in models}) == 1
    assert models[0].t_ == len(X)


@pytest.mark.parametrize(("cls", "params"), CONFIGS)
def test_rejected_dict_targets_change_nothing(cls, params):
    model = _model(cls, params)
    X, Y = _stream(model, n=12)
    fresh = pickle.dumps(model)
    bad = [
        ({"nope": True}, ValueError, "unknown label 'nope'"),
        ({"l0": True, "nope": False}, ValueError, "unknown label 'nope'"),  # False keys too
        ({"l0": 1}, TypeError, r"y\['l0'\] must be a bool"),
        ({"l1": True, "l2": 0}, TypeError, r"y\['l2'\] must be a bool"),
        ({"l0": "yes"}, TypeError, "must be a bool"),
        ({"l0": None}, TypeError, "must be a bool"),
        ({"l0": np.float64(1.0)}, TypeError, "must be a bool"),
        ({"l0": np.array([True])}, TypeError, "must be a bool"),
        (["l0"], TypeError, "a set of relevant labels .* or a dict label -> bool"),
    ]
    for y, err, match in bad:  # before the first example: nothing starts
        with pytest.raises(err, match=match):
            model.learn_one(X[0], y)
        assert pickle.dumps(model) == fresh
        assert not model._started
    for x, row in zip(X, Y, strict=True):
        model.learn_one(x, _as_dict(model, row))
    before = pickle.dumps(model)
    for y, err, match in bad:
        with pytest.raises(err, match=match):
            model.learn_one(X[0], y)
        assert pickle.dumps(model) == before, f"the rejected target {y!r} changed the model"


def test_labels_must_be_known_up_front():
    model = AdaOLMR(learners=3, seed=0)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="the labels are unknown: pass labels="):
        model.learn_one([0.1, 0.2], {"a": True, "b": False})
    assert pickle.dumps(model) == before


# ------------------------------------------------------------------------------ predictions


@pytest.mark.parametrize(("cls", "params"), CONFIGS)
def test_predict_one_is_the_documented_cut_and_changes_nothing(cls, params):
    model = _model(cls, params)
    X, Y = _stream(model, n=50, seed=3)
    k = len(LABELS)
    counts = []
    for x, row in zip(X, Y, strict=True):
        before = _state(model)
        started = model._started
        predicted = model.predict_one(x)
        assert _state(model) == before and model._started == started, "predict_one changed it"
        assert list(predicted) == LABELS
        assert all(type(v) is bool for v in predicted.values())
        scores = np.array(list(model.score_one(x).values()))
        top = [LABELS[j] for j in np.argsort(-scores, kind="stable")]
        r = model.k if cls in TOPK else _expected_r(counts, k)
        assert [label for label in top if predicted[label]] == top[:r]
        assert sum(predicted.values()) == r
        model.learn_one(x, _as_set(model, row))
        counts.append(int(row.sum()))
    if cls in TOPK:  # the cardinality is hidden from a top-k booster: nothing is counted
        assert math.isnan(model.label_cardinality_)
        assert "n_targets_" not in vars(model) and "n_relevant_" not in vars(model)
    else:
        assert model.n_targets_ == len(X) and model.n_relevant_ == int(Y.sum())
        assert model.label_cardinality_ == Y.sum() / len(X)


@pytest.mark.parametrize(
    ("sizes", "r"),
    [
        ([], 1),  # nothing learned yet
        ([0, 0, 0], 1),  # at least one label
        ([1, 1, 2], 1),  # 1.33
        ([1, 2], 2),  # 1.5 rounds up
        ([2, 2, 3], 2),  # 2.33
        ([2, 3], 3),  # 2.5 rounds up
        ([5, 5, 4], 5),  # 4.67 -> 5 = k, every label
        ([5, 5], 5),
    ],
)
@pytest.mark.parametrize("cls", [LabelRanker, AdaOLMR, OnlineBMR], ids=lambda c: c.__name__)
def test_the_number_of_labels_predicted(cls, sizes, r):
    model = (
        cls(labels=LABELS, seed=1) if cls is LabelRanker else cls(learners=3, labels=LABELS, seed=1)
    )
    rng = np.random.default_rng(7)
    for size in sizes:
        relevant = rng.choice(LABELS, size=size, replace=False).tolist()
        model.learn_one(rng.normal(size=4), {label: label in relevant for label in LABELS})
    x = rng.normal(size=4)
    predicted = model.predict_one(x)
    assert sum(predicted.values()) == r
    assert [label for label in model.rank_one(x) if predicted[label]] == model.rank_one(x)[:r]
    if not sizes:  # all scores tie before learning: the first label, in label order
        assert predicted == {label: label == "l0" for label in LABELS}


@pytest.mark.parametrize("cls", [LabelRanker, AdaOLMR, OnlineBMR], ids=lambda c: c.__name__)
def test_the_array_path_counts_as_learn_one(cls):
    """``learn(X, Y)`` (the compiled driver for the boosters) counts the relevant labels as a
    ``learn_one`` loop does, so both predict the same."""
    params = next(iter(cls._unit_test_params()))
    one, arrays = _model(cls, params), _model(cls, params)
    X, Y = _stream(one, n=70, seed=4)
    for x, row in zip(X, Y, strict=True):
        one.learn_one(x, _as_dict(one, row))
    arrays.learn(X[:30], Y[:30]).learn(X[30:], Y[30:])
    assert (arrays.n_targets_, arrays.n_relevant_) == (one.n_targets_, one.n_relevant_)
    assert (arrays.n_targets_, arrays.n_relevant_) == (70, int(Y.sum()))
    for x in X[:10]:
        assert arrays.predict_one(x) == one.predict_one(x)
    before = pickle.dumps(arrays)
    huge = X[:3].copy()
    huge[2, 1] = 1e160
    with pytest.raises(ValueError, match="row 2, feature 1"):
        arrays.learn(huge, Y[:3])
    assert pickle.dumps(arrays) == before, "a rejected matrix changed the counts"


def test_full_feedback_counts_and_an_empty_stream_does_not():
    model = LabelRanker(labels=3, seed=0)
    model.learn(np.empty((0, 2)), np.empty((0, 3), dtype=bool))
    assert "n_targets_" not in vars(model)
    model.learn_one([0.5, 1.0], FullFeedback(np.array([True, True, False])))
    model.learn_one([1.0, 0.5], {0: True, 1: False, 2: False})
    assert (model.n_targets_, model.n_relevant_) == (2, 3)
    assert model.label_cardinality_ == 1.5
    assert sum(model.predict_one([1.0, 1.0]).values()) == 2


@pytest.mark.parametrize("cls", TOPK, ids=lambda c: c.__name__)
def test_topk_predict_one_is_what_it_shows_unexplored_and_draws_nothing(cls):
    """A top-k booster predicts its k top-scored labels: the k it shows when the round's draw
    does not explore. Predicting, also before the first example, changes no later result."""
    make = lambda: cls(learners=4, seed=5, labels=LABELS, k=3, rho=0.3)  # noqa: E731
    quiet, chatty = make(), make()
    X, Y = _stream(quiet, n=60, seed=6)
    assert chatty.predict_one(X[0]) == {"l0": True, "l1": True, "l2": True, "l3": False,
                                        "l4": False}  # fmt: skip
    assert not chatty._started
    unexplored = 0
    for x, row in zip(X, Y, strict=True):
        predicted = chatty.predict_one(x)
        assert sum(predicted.values()) == 3
        impression = chatty.show_one(x)
        if not impression.explored:
            unexplored += 1
            assert {label for label, v in predicted.items() if v} == set(impression.labels)
        assert chatty.predict_one(x) == predicted
        quiet.learn_one(x, _as_set(quiet, row))
        chatty.learn_one(x, _as_dict(chatty, row))
    assert unexplored > 20
    assert _state(quiet) == _state(chatty)
    fresh_quiet, fresh_chatty = make(), make()
    fresh_quiet.learn(X, Y)
    for x in X:
        fresh_chatty.predict_one(x)
    fresh_chatty.learn(X, Y)
    assert _state(fresh_quiet) == _state(fresh_chatty)


def test_predict_proba_one_says_scores_are_no_probabilities():
    model = AdaOLMR(learners=3, seed=0, labels=LABELS)
    with pytest.raises(NotImplementedError, match="not probabilities: use score_one"):
        model.predict_proba_one([0.1, 0.2])


# ------------------------------------------------------------------------------ rank loss


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("cls", RANKERS, ids=lambda c: c.__name__)
def test_rank_loss_takes_score_one_output_with_sets_and_dicts(cls, weighted):
    """``update(y, model.score_one(x))`` with ``y`` a set or River's dict equals the index and
    array path, over a stream (some examples without pairs, some with ties)."""
    params = next(iter(cls._unit_test_params()))
    model = _model(cls, params)
    X, Y = _stream(model, n=50, seed=8)
    by_set, by_dict, by_array = (RankLoss(weighted=weighted) for _ in range(3))
    for x, row in zip(X, Y, strict=True):
        scores = model.score_one(x)
        by_set.update(_as_set(model, row), scores)
        by_dict.update(_as_dict(model, row), scores)
        by_array.update(np.flatnonzero(row).tolist(), np.array(list(scores.values())))
        assert rank_loss(scores, _as_set(model, row), weighted=weighted) == rank_loss(
            np.array(list(scores.values())), row, weighted=weighted
        )
        model.learn_one(x, _as_set(model, row))
    for metric in (by_set, by_dict):
        assert (metric.paper, metric.skip, metric.n_paper, metric.n_skip) == (
            by_array.paper, by_array.skip, by_array.n_paper, by_array.n_skip,
        )  # fmt: skip
    assert by_array.n_skip < by_array.n_paper  # the stream has examples without pairs


def test_rank_loss_with_labelled_scores_rejects_bad_input_before_counting():
    metric = RankLoss()
    scores = {"a": 0.3, "b": 0.2, "c": 0.1}
    metric.update({"a": True}, scores)
    before = pickle.dumps(metric)
    bad = [
        ({"d"}, scores, ValueError, "the label 'd', which has no score"),
        ({"a": True, "d": False}, scores, ValueError, "the label 'd'"),
        ({"a": 1}, scores, TypeError, r"relevant\['a'\] must be a bool"),
        ({"a": "True"}, scores, TypeError, "must be a bool"),
        (["a"], scores, TypeError, "a set of labels or a dict label -> bool"),
        (0, scores, TypeError, "a set of labels"),
        ({"a"}, {"a": 1.0, "b": float("nan")}, ValueError, "finite"),
        ({"a"}, {"a": 1.0, "b": "high"}, TypeError, "real numbers"),
        ({"a"}, {"a": 1.0, "b": None}, TypeError, "real numbers"),
        (set(), {}, ValueError, "at least one label"),
    ]
    for relevant, s, err, match in bad:
        with pytest.raises(err, match=match):
            metric.update(relevant, s)
        assert pickle.dumps(metric) == before
    metric.update({"c": True, "a": False}, scores)  # c below a and b: 1
    metric.update(frozenset({"b"}), scores)  # below a: 1/2
    assert (metric.get(), metric.n_paper) == (0.5, 3)


def test_targets_and_predictions_need_no_river():
    """The core install (River absent: its import fails) takes dict targets and predicts."""
    code = textwrap.dedent(
        """
        import json
        import sys
        sys.modules["river"] = None  # as if River were not installed: importing it fails
        from olboost import AdaOLMR
        from olboost._river import RIVER_INSTALLED
        model = AdaOLMR(learners=3, seed=0, labels=["a", "b", "c"])
        for i in range(6):
            model.learn_one({"f": float(i), "g": 1.0}, {"a": True, "b": i % 2 == 0, "c": False})
        predicted = model.predict_one({"f": 0.0, "g": 1.0})
        print(json.dumps([RIVER_INSTALLED, model.label_cardinality_, predicted]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    installed, cardinality, predicted = json.loads(out.stdout)
    assert (installed, cardinality) == (False, 1.5)
    assert list(predicted) == ["a", "b", "c"] and sum(predicted.values()) == 2


@pytest.mark.parametrize("form", ["sets", "dicts"])
def test_the_array_paths_take_a_list_of_the_targets_learn_one_takes(form):
    # refused with "Y must be (n_samples, n_labels), got shape (40,)": only a 0/1 matrix
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = rng.random((40, 4)) < 0.4
    if form == "sets":
        targets = [set(np.flatnonzero(row).tolist()) for row in Y]
    else:
        targets = [{label: bool(row[label]) for label in range(4)} for row in Y]
    makers = [
        lambda: LabelRanker(labels=4, seed=0),
        lambda: AdaOLMR(VFDTCommittee(n_features=2), learners=3, seed=1, labels=4),
        lambda: TopkAdaptive(VFDTCommittee(n_features=2), learners=3, seed=1, labels=4, k=2),
    ]
    for make in makers:
        by_matrix = make().learn(X, Y)
        assert pickle.dumps(make().learn(X, targets)) == pickle.dumps(by_matrix)
        np.testing.assert_array_equal(
            make().score_then_learn(X, targets), make().score_then_learn(X, Y)
        )
    model = makers[0]().learn(X[:10], targets[:10])
    before = pickle.dumps(model)
    bad = [
        (targets[:-1], ValueError, "Y holds 39 label sets for 40 rows"),
        (targets[:3] + [{9}] + targets[4:], ValueError, r"unknown label 9.* \(Y row 3\)"),
        (targets[:2] + [{0: 1}] + targets[3:], TypeError, r"must be a bool.* \(Y row 2\)"),
    ]
    for Y_bad, error, match in bad:
        with pytest.raises(error, match=match):
            model.learn(X, Y_bad)
        assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="labels the model does not know yet: give labels="):
        LabelRanker().learn(X, targets)
