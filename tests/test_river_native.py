"""The multiclass boosters are River classifiers when River is installed (issue 10, item 3).

``river.evaluate.progressive_val_score`` accepts them with ``river.metrics.Accuracy`` on the
streams River ships (no download), they work after ``river.preprocessing.StandardScaler`` in a
``river.compose.Pipeline``, and they pass every check of ``river.checks.check_estimator``,
including the four that add or drop features mid-stream (the trees learn from missing values).
With ``VFDTCommittee(missing="error")`` those four are declared in ``_unit_test_skips``, and a
test below makes sure they then fail for that reason only.
"""

from __future__ import annotations

import copy
import pickle
import re

import pytest

river = pytest.importorskip("river", reason="River is optional: pip install olboost[river]")

from river import base, checks, compose, datasets, evaluate, metrics, preprocessing  # noqa: E402

from olboost import VFDTCommittee  # noqa: E402
from olboost._river import RIVER_FEATURE_CHECKS, RIVER_MINI_BATCH_FEATURE_CHECKS  # noqa: E402
from olboost.boosters import AdaBoostOLM, OnlineMBBM  # noqa: E402
from olboost.boosters.baselines import AdaOVA, BestTree, OvaAdaBoostOL, OzaBoost  # noqa: E402

MULTICLASS = [AdaBoostOLM, OnlineMBBM, BestTree, OzaBoost, OvaAdaBoostOL, AdaOVA]

PHISHING_CLASSES = [False, True]
IMAGE_SEGMENTS_CLASSES = ["brickface", "cement", "foliage", "grass", "path", "sky", "window"]
#: River's checks feed one model Phishing (bool labels) and ImageSegments (7 named classes); the
#: boosters fix their ``k`` classes up front (as the papers do), so the checked model knows both.
CHECK_CLASSES = PHISHING_CLASSES + IMAGE_SEGMENTS_CLASSES

#: The checks excluded with ``missing="error"``, each with why.
EXCLUDED = {
    "check_emerging_features": "new features mid-stream: rejected with missing='error'",
    "check_disappearing_features": "features dropped mid-stream: missing values are rejected",
    "check_radically_disappearing_features": "all but one feature dropped: missing values",
    "check_learn_many_matches_learn_one": "mini-batches whose features come and go",
}

# Seeded, learners=5: the accuracy of the whole stream, exact (a ratio of integers, reproduced
# bit for bit like every other seeded result of the package).
PHISHING_ACCURACY = {
    "AdaBoostOLM": 0.8728,
    "OnlineMBBM": 0.8784,
    "BestTree": 0.8856,
    "OzaBoost": 0.8824,
    "OvaAdaBoostOL": 0.8864,
    "AdaOVA": 0.876,
}
IMAGE_SEGMENTS_SCALED_ACCURACY = {
    "AdaBoostOLM": 0.812987012987013,
    "OnlineMBBM": 0.6761904761904762,
    "BestTree": 0.8411255411255412,
    "OzaBoost": 0.7458874458874459,
    "OvaAdaBoostOL": 0.8696969696969697,
    "AdaOVA": 0.8753246753246753,
}


def _check_model(cls):
    """The class's first unit-test configuration, over the classes of River's check streams."""
    return cls(**{**next(iter(cls._unit_test_params())), "classes": CHECK_CLASSES})


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_is_a_river_multiclass_classifier(cls):
    model = _check_model(cls)
    assert isinstance(model, base.Classifier)
    assert model._multiclass
    assert metrics.Accuracy().works_with(model)
    # olboost's own Estimator methods win over River's Base ones
    assert str(model) == repr(model) == repr(model.clone())
    assert model._is_stochastic


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_progressive_val_score_on_phishing(cls):
    model = cls(learners=5, seed=1, classes=PHISHING_CLASSES)
    metric = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert metric.get() == PHISHING_ACCURACY[cls.__name__]


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_pipeline_after_standard_scaler_on_image_segments(cls):
    booster = cls(learners=5, seed=1, classes=IMAGE_SEGMENTS_CLASSES)
    pipeline = preprocessing.StandardScaler() | booster
    assert isinstance(pipeline, compose.Pipeline)
    metric = evaluate.progressive_val_score(datasets.ImageSegments(), pipeline, metrics.Accuracy())
    assert metric.get() == IMAGE_SEGMENTS_SCALED_ACCURACY[cls.__name__]
    # the trained pipeline pickles, and River's clone (which passes include_attributes) works
    x, _ = next(iter(datasets.ImageSegments()))
    restored = pickle.loads(pickle.dumps(pipeline))
    assert restored.predict_proba_one(x) == pipeline.predict_proba_one(x)
    # River's Classifier signatures take keyword arguments (a TypeError before)
    assert booster.predict_proba_one(x, extra=1) == booster.predict_proba_one(x)
    assert booster.predict_one(x, extra=1) == booster.predict_one(x)
    fresh = pipeline.clone()
    assert repr(fresh) == repr(pipeline)
    assert fresh.predict_proba_one(x) == dict.fromkeys(IMAGE_SEGMENTS_CLASSES, 1 / 7)


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_river_check_estimator(cls):
    """Every River check, the feature-changing ones included (``_unit_test_skips`` is empty)."""
    model = _check_model(cls)
    assert model._unit_test_skips() == set()
    assert {check.__name__ for check in checks.yield_checks(model)} >= set(EXCLUDED)
    checks.check_estimator(model)


@pytest.mark.parametrize("cls", [AdaBoostOLM, OzaBoost], ids=lambda c: c.__name__)
def test_river_check_estimator_with_missing_error(cls):
    """Every River check but the four skipped ones passes on a committee that takes no missing
    values (the mini-batch check, whose batches change the features, was not skipped)."""
    model = _check_model(cls)
    strict = (model.committee or VFDTCommittee()).clone({"missing": "error"})
    model = model.clone({"committee": strict})
    assert model._unit_test_skips() == set(EXCLUDED)
    checks.check_estimator(model)


@pytest.mark.parametrize("name", sorted(EXCLUDED))
@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_feature_checks_are_skipped_and_fail_with_missing_error(cls, name):
    """With ``missing="error"`` the four feature-changing checks are skipped, and fail only for
    the features they change."""
    assert name in RIVER_FEATURE_CHECKS + RIVER_MINI_BATCH_FEATURE_CHECKS
    model = _check_model(cls)
    strict = (model.committee or VFDTCommittee()).clone({"missing": "error"})
    model = model.clone({"committee": strict})
    assert model._unit_test_skips() == set(EXCLUDED)
    found = [check for check in checks.yield_checks(model) if check.__name__ == name]
    assert found
    for check in found:
        with pytest.raises(ValueError, match="different features than the first example"):
            check(model.clone())


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_unknown_classes_are_a_clear_error_before_any_change(cls):
    """River streams do not announce their classes; the boosters need them up front."""
    model = cls(learners=3, seed=0)
    x, y = next(iter(datasets.Phishing()))
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="the classes are unknown: pass classes="):
        model.learn_one(x, y)
    assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="unknown class 'sky'"):
        cls(learners=3, seed=0, classes=PHISHING_CLASSES).learn_one(x, "sky")


def test_clone_takes_rivers_class_and_params_form_of_a_sub_estimator():
    # River's clone reads {"model": (cls, params)} as the current sub-estimator cloned with
    # params (its _get_params and expand_param_grid write that form); olboost's raised a
    # TypeError ("committee must be of type Committee, got tuple")
    from river import utils

    model = AdaBoostOLM(VFDTCommittee(grace_period=(1.0, 2.0)), learners=3, seed=1, classes=2)
    clone = model.clone({"committee": (VFDTCommittee, {"n_features": 3})})
    assert clone.committee.n_features == 3 and clone.committee.grace_period == (1.0, 2.0)
    assert clone.committee is not model.committee and model.committee.n_features == 20
    fresh = AdaBoostOLM().clone({"committee": (VFDTCommittee, {"n_features": 2})})
    assert fresh.committee.n_features == 2 and fresh.committee.grace_period == (5.0, 20.0)
    grid = utils.expand_param_grid(
        model, {"committee": [(VFDTCommittee, {"n_features": [2, 3]})], "learners": [2, 4]}
    )
    assert sorted((m.learners, m.committee.n_features) for m in grid) == [
        (2, 2), (2, 3), (4, 2), (4, 3)
    ]  # fmt: skip


def test_clone_include_attributes_keeps_the_learned_state():
    model = AdaBoostOLM(learners=3, seed=0, classes=PHISHING_CLASSES)
    stream = list(datasets.Phishing().take(50))
    for x, y in stream:
        model.learn_one(x, y)
    copied = model.clone(include_attributes=True)
    fresh = model.clone()
    assert not hasattr(fresh, "committee_")
    for x, _ in stream[:10]:
        assert copied.predict_proba_one(x) == model.predict_proba_one(x)
    copied.learn_one(*stream[0])
    assert copied.t_ == model.t_ + 1  # independent state
    assert copy.deepcopy(model).predict_proba_one(stream[0][0]) == model.predict_proba_one(
        stream[0][0]
    )


def test_a_model_that_learned_from_dicts_reads_matrices_by_column_name():
    # River's iter_array gives keys 0..11, which sort 0, 1, 10, 11, 2, ...: predict(X) read
    # column 2 as key 10 (accuracy 0.50 where predict_one gave 1.0), and learn(X) learned so
    pd = pytest.importorskip("pandas")
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 12))
    y = (X[:, 2] > 0).astype(int)
    model = AdaBoostOLM(learners=3, seed=1, classes=[0, 1])
    for row, label in zip(X[:100], y[:100], strict=True):
        model.learn_one(dict(enumerate(row)), int(label))
    before = pickle.dumps(model)
    for call in (model.predict, model.votes, lambda X: model.learn(X, y[: len(X)])):
        with pytest.raises(ValueError, match="matrix without column names"):
            call(X)
    assert pickle.dumps(model) == before
    frame = pd.DataFrame(X[:, ::-1], columns=list(range(11, -1, -1)))  # named, other order
    one = [model.predict_one(dict(enumerate(row))) for row in X]
    assert model.predict(frame).tolist() == one


def test_a_frame_follows_the_feature_rules_of_dicts():
    # A model started on dicts with missing="error" refused a dict with an extra key but took a
    # DataFrame with an extra column; with missing="learn" a dict without key 11 had it missing,
    # a DataFrame without column 11 was refused
    pd = pytest.importorskip("pandas")
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 12))
    y = (X[:, 2] > 0).astype(int)
    for missing in ("learn", "error"):
        model = AdaBoostOLM(VFDTCommittee(missing=missing), learners=3, seed=1, classes=[0, 1])
        for row, label in zip(X[:40], y[:40], strict=True):
            model.learn_one(dict(enumerate(row)), int(label))
        before = pickle.dumps(model)
        short = pd.DataFrame(X[40:, :11])  # no column 11
        wide = pd.DataFrame(X[40:]).assign(extra=1.0)
        if missing == "learn":
            dicts = [dict(enumerate(row[:11])) for row in X[40:]]
            assert model.predict(short).tolist() == [model.predict_one(x) for x in dicts]
            full = [model.predict_one(dict(enumerate(row))) for row in X[40:]]
            assert model.predict(wide).tolist() == full
        else:
            for frame, said in [(short, "missing 11, unexpected none"),
                                (wide, "missing none, unexpected 'extra'")]:  # fmt: skip
                for call in (model.predict, lambda F, m=model: m.learn(F, y[40:])):
                    with pytest.raises(ValueError, match=re.escape(said)):
                        call(frame)
                with pytest.raises(ValueError, match="unexpected"):
                    model.predict_one({**dict(enumerate(X[40])), "extra": 1.0})
        assert pickle.dumps(model) == before


def test_clone_deep_copies_the_new_parameters():
    # kept by reference: models of river.utils.expand_param_grid shared one committee, and a
    # set_params on one changed another, started or not
    from river import utils

    committee = VFDTCommittee(n_features=5)
    classes = ["a", "b"]
    m1 = AdaBoostOLM(learners=3, seed=1).clone({"committee": committee, "classes": classes})
    m2 = AdaBoostOLM(learners=3, seed=2).clone({"committee": committee, "classes": classes})
    assert m1.committee is not committee and m1.committee is not m2.committee
    m1.set_params(committee__n_features=2)
    classes.append("c")
    assert m2.committee.n_features == 5 and m1.classes == ["a", "b"]
    grid = utils.expand_param_grid(
        AdaBoostOLM(learners=3, seed=1, classes=2),
        {"committee": [VFDTCommittee(n_features=4)], "learners": [2, 3]},
    )
    assert grid[0].committee is not grid[1].committee


def test_mutate_changes_parameters_as_set_params_does():
    # olboost declared no _mutable_attributes, so River's mutate refused every parameter, also
    # those set_params changes on a started model; now it goes through set_params
    from olboost import AdaBoostOLM, LabelRanker

    ranker = LabelRanker(labels=["a", "b", "c"])
    ranker.learn_one({"x": 1.0, "z": 0.5}, {"a"})
    assert ranker._mutable_attributes == {"C", "margin", "update"}
    ranker.mutate({"C": 3.0, "update": "II"})
    assert (ranker.C, ranker.update) == (3.0, "II")
    before = pickle.dumps(ranker)
    for bad, error in [({"C": -1.0}, "C"), ({"C": 2.0, "labels": ["x", "y"]}, "labels")]:
        with pytest.raises(ValueError, match=error):
            ranker.mutate(bad)
        assert pickle.dumps(ranker) == before  # all or nothing
    pipeline = preprocessing.StandardScaler() | LabelRanker(labels=["a", "b"])
    pipeline.mutate({"LabelRanker": {"margin": 0.5}})
    assert pipeline["LabelRanker"].margin == 0.5
    # derived state follows, as after set_params: Adaboost.OLM's step in use
    booster = AdaBoostOLM(VFDTCommittee(), learners=2, seed=1, classes=2)
    booster.learn_one({"x": 0.3}, 1)
    booster.mutate({"step_scale": 0.25})
    assert booster.step_scale_ == 0.25
    # a committee's parameters, nested as River nests them, are fixed once started
    with pytest.raises(ValueError, match="committee cannot change"):
        booster.mutate({"committee": {"grace_period": (1.0, 2.0)}})


def test_an_empty_dict_before_the_first_example_is_refused_saying_why():
    # A River transformer gives {} for an example it finds nothing in (BagOfWords of a text of
    # one-letter words): the booster said "x has no features". Its keys cannot fix the
    # features, which a first example's do: refused, saying so, the model unchanged; once the
    # features are fixed, {} is every feature missing.
    from olboost import AdaOLMR

    for model in (AdaBoostOLM(learners=2, seed=1, classes=["x", "y"]),
                  AdaOLMR(learners=2, seed=1, labels=["a", "b", "c"])):  # fmt: skip
        before = pickle.dumps(model)
        target = "x" if isinstance(model, AdaBoostOLM) else {"a"}
        for method, args in (("predict_one", ({},)), ("learn_one", ({}, target))):
            with pytest.raises(ValueError, match="x is an empty dict: a first example's keys fix"):
                getattr(model, method)(*args)
            assert pickle.dumps(model) == before
        model.learn_one({"w": 1.0, "v": 2.0}, target)
        model.learn_one({}, target)  # both features missing
        model.predict_one({})
