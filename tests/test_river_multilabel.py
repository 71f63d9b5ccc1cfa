"""The ranking learners are River multi-label classifiers when River is installed (issue 14,
item 2).

AdaOLMR, OnlineBMR, TopkBBM, TopkAdaptive and LabelRanker are ``river.base.MultiLabelClassifier``
instances: ``learn_one`` takes River's ``{label: bool}`` targets, ``predict_one`` gives one (the
rank cut documented in :class:`olboost.online.RankingLearner`), and
``river.evaluate.progressive_val_score`` runs them with River's multi-output metrics on
``river.datasets.Yeast``.

**Data.** ``river.datasets.Yeast`` is a ``FileDataset``: River 0.26 ships its file
(``yeast.csv.gz``, the 2,417 MULAN yeast examples in another order than olboost's bundled
train/test files), so nothing is downloaded; should a River release make it a download, the
tests that use it skip with the reason. ``river.checks.check_estimator`` feeds a
``MultiLabelClassifier`` ``river.datasets.Music`` (50 examples; 500 for
``check_bounded_memory_growth``), a *download* (scikit-multiflow's ``music.csv``), and this
machine has no internet. Music is the MULAN *emotions* set (593 songs, 72 features, 6 moods),
which olboost bundles; when River's copy is absent, River's own check functions are run on the
same number of emotions examples in Music's form (features by name, the three ``BH_*`` beat
features as ints as River's converters make them, targets ``{mood: bool}`` under Music's label
names, "relaxing-clam" included), in MULAN's train-then-test order (River's file may order them
otherwise). Every other River check runs as ``check_estimator`` runs it, and when River's Music
is present, ``check_estimator`` itself runs.

**River checks that cannot apply**, with why:

* ``check_emerging_features``, ``check_disappearing_features``,
  ``check_radically_disappearing_features`` on boosters whose committee has ``missing="error"``:
  the features are fixed by the first example and this model takes no missing values, so an
  example that lacks a key or brings a new one is rejected with ``ValueError``; they are declared
  in ``_unit_test_skips`` and shown below to fail for that reason only. Boosters on trees (the
  default) pass them, and so does :class:`olboost.LabelRanker`, whose dicts are sparse examples
  (an absent key is 0, an unseen one a new feature).
* ``LabelRanker(complexity="entropy")`` is not checked on Music's features: the entropy takes
  features in [0, 1] only and rejects Music's raw values (e.g. beats per minute) by design; its
  squared-norm configurations are checked.
* ``check_predict_one_pure`` and ``check_predict_one_before_any_learn`` run but check nothing for
  any multi-label classifier: River 0.26 lists inference methods only for classifiers,
  regressors, anomaly detectors and transformers, and ``MultiLabelClassifier`` is none of these.
  :func:`test_predict_one_is_pure_and_works_before_learning` checks what they would.
* ``predict_proba_one`` raises ``NotImplementedError``: scores rank labels and are no
  probabilities. River's evaluation of a multi-label classifier never asks for it.

River 0.26.1 has no Hamming loss among its multi-output metrics; with every label in each
target, it is ``1 - MicroAverage(Accuracy())``, which is pinned below.
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import pickle
import warnings

import numpy as np
import pytest

river = pytest.importorskip("river", reason="River is optional: pip install olboost[river]")

from river import base, checks, compose, datasets, evaluate, metrics, preprocessing  # noqa: E402

from olboost import (  # noqa: E402
    AdaOLMR,
    LabelRanker,
    OnlineBMR,
    TopkAdaptive,
    TopkBBM,
    VFDTCommittee,
)
from olboost._river import RIVER_FEATURE_CHECKS, RIVER_MINI_BATCH_FEATURE_CHECKS  # noqa: E402
from olboost.datasets import load  # noqa: E402
from olboost.metrics import RankLoss  # noqa: E402

RANKERS = [AdaOLMR, OnlineBMR, TopkBBM, TopkAdaptive, LabelRanker]
TOPK = (TopkBBM, TopkAdaptive)
MO = metrics.multioutput

YEAST_LABELS = [f"Class{i}" for i in range(1, 15)]
#: ``river.datasets.Music``'s targets, in its order (its spelling).
MUSIC_LABELS = [
    "amazed-suprised",
    "happy-pleased",
    "relaxing-clam",
    "quiet-still",
    "sad-lonely",
    "angry-aggresive",
]
#: The features ``river.datasets.Music`` converts with ``int``.
MUSIC_INT_FEATURES = {"BH_LowPeakBPM", "BH_HighPeakBPM", "BH_HighLowRatio"}

#: The dataset checks River 0.26 runs on a stochastic multi-label classifier.
DATASET_CHECKS = {
    "check_learn_one",
    "check_pickling",
    "check_shuffle_features_no_impact",
    *RIVER_FEATURE_CHECKS,
    "check_predict_one_pure",
    "check_predict_one_before_any_learn",
    "check_no_state_aliasing_with_input",
    "check_clone_is_independent",
    "check_seeding_is_idempotent",
    "check_bounded_memory_growth",
}

# progressive_val_score on river.datasets.Yeast, learners=5 (LabelRanker: its defaults), seed 1:
# micro-averaged F1, exact match, micro-averaged accuracy (1 - Hamming loss), macro-averaged F1.
# Exact: seeded results are reproduced bit for bit.
YEAST_SCORES = {
    "AdaOLMR": (0.5982425307557118, 0.11088125775755076, 0.7635498551923873, 0.2923715701489046),
    # an example with gamma |Y| = 1 keeps its edge since 0bffdcc (it was capped): yeast has
    # such examples at the default gamma = 0.1 (ten relevant labels); before, 0.5916143610343961,
    # 0.11543235415804727, 0.7596489154205331, 0.2875586893602977
    "OnlineBMR": (0.5913130805925182, 0.11501861812163836, 0.7594715999763579, 0.2872775979705934),
    "TopkBBM": (0.4372284472901898, 0.0028961522548613984, 0.7090844612565754, 0.20849690695954218),
    "TopkAdaptive": (
        0.414703864623828,
        0.001654944145635092,
        0.6974407470890714,
        0.19489881404657836,
    ),  # fmt: skip
    "LabelRanker": (
        0.41857896058247557,
        0.05171700455109633,
        0.657810745315917,
        0.3505007180012227,
    ),
}


def _yeast():
    """River's Yeast, skipping when its file is not there (it ships with River 0.26)."""
    dataset = datasets.Yeast()
    if isinstance(dataset, datasets.base.RemoteDataset) and not dataset.is_downloaded:
        pytest.skip("river.datasets.Yeast must be downloaded and there is no internet here")
    if isinstance(dataset, datasets.base.FileDataset) and not dataset.path.exists():
        pytest.skip(f"river.datasets.Yeast's file {dataset.path} is absent")
    return dataset


def _yeast_model(cls):
    if cls is LabelRanker:
        return LabelRanker(labels=YEAST_LABELS, seed=1)
    return cls(learners=5, seed=1, labels=YEAST_LABELS)


def _yeast_arrays(stream):
    """The stream as arrays, the features in the order a learner gives the first dict's keys."""
    names = sorted(stream[0][0], key=lambda key: (str(key), type(key).__name__))
    X = np.array([[x[name] for name in names] for x, _ in stream])
    Y = np.array([[y[label] for label in YEAST_LABELS] for _, y in stream])
    return X, Y


def _cut(scores, r):
    top = set(np.argsort(-scores, kind="stable")[:r].tolist())
    return {label: j in top for j, label in enumerate(YEAST_LABELS)}


def _state(model):
    """What the model learned, as bytes: the dict path's feature names and a top-k booster's
    random model id left out."""
    state = model.__getstate__()
    state.pop("model_id_", None)
    state.pop("feature_names_in_", None)
    return pickle.dumps(state)


@functools.cache
def _emotions():
    data = load("emotions")
    assert data.feature_names[:2] == ["Mean_Acc1298_Mean_Mem40_Centroid",
                                      "Mean_Acc1298_Mean_Mem40_Rolloff"]  # fmt: skip
    assert len(data.label_names) == len(MUSIC_LABELS) and data.n_samples == 593
    return data


def _music_like():
    """The emotions set in ``river.datasets.Music``'s form (see the module docstring)."""
    data = _emotions()
    for xv, yv in zip(data.X, data.Y, strict=True):
        x = {
            name: int(v) if name in MUSIC_INT_FEATURES else float(v)
            for name, v in zip(data.feature_names, xv.tolist(), strict=True)
        }
        yield x, {label: bool(v) for label, v in zip(MUSIC_LABELS, yv.tolist(), strict=True)}


def _music_rows(dataset, name):
    """How many examples of ``river.datasets.Music`` River's check would read."""
    try:
        with warnings.catch_warnings():
            # Python 3.12 to 3.13 say islice's pickling goes in 3.14, where the except below
            # takes over
            warnings.simplefilter("ignore", DeprecationWarning)
            source, start, stop, step = dataset.__reduce__()[1]
        owner = source.gi_frame.f_locals["self"]
    except (AttributeError, TypeError, ValueError, KeyError):  # islice no longer pickles
        return 500 if name == "check_bounded_memory_growth" else 50
    assert type(owner) is datasets.Music, f"{name}: River now checks on {type(owner).__name__}"
    assert (start, step) == (0, 1)
    return stop


def _run_river_checks(model):
    """Every River check of ``model`` not in its ``_unit_test_skips``, each on a fresh clone, as
    ``river.checks.check_estimator`` runs them; River's own Music when it is there, else the
    dataset checks on as many emotions examples in Music's form. Returns the names run."""
    if datasets.Music().is_downloaded:
        checks.check_estimator(model)
        return {check.__name__ for check in checks.yield_checks(model)} - set(
            model._unit_test_skips()
        )
    ran = set()
    for check in checks.yield_checks(model):
        if check.__name__ in model._unit_test_skips():
            continue
        if isinstance(check, functools.partial) and "dataset" in check.keywords:
            n = _music_rows(check.keywords["dataset"], check.__name__)
            check.func(model.clone(), dataset=itertools.islice(_music_like(), n))
        else:
            check(model.clone())
        ran.add(check.__name__)
    return ran


def _check_configs():
    for cls in RANKERS:
        for i, params in enumerate(cls._unit_test_params()):
            if params.get("complexity") == "entropy":  # features in [0, 1] only
                continue
            yield pytest.param(cls, params, id=f"{cls.__name__}-{i}")


def _check_model(cls, params):
    return cls(**{**params, "labels": MUSIC_LABELS})


# ------------------------------------------------------------------------------ the type


@pytest.mark.parametrize("cls", RANKERS, ids=lambda c: c.__name__)
def test_is_a_river_multilabel_classifier(cls):
    model = _yeast_model(cls)
    assert isinstance(model, base.MultiLabelClassifier)
    assert not isinstance(model, base.Classifier)
    for metric in [MO.MicroAverage(metrics.F1()), MO.ExactMatch(), MO.MacroAverage(metrics.F1())]:
        assert metric.works_with(model)
    assert not metrics.Accuracy().works_with(model)
    # olboost's own Estimator methods win over River's Base ones
    assert str(model) == repr(model) == repr(model.clone())
    assert model._is_stochastic == (cls is not LabelRanker)  # LabelRanker's Update III is not
    with pytest.raises(NotImplementedError, match="not probabilities"):
        model.predict_proba_one({"Att1": 0.0})


# ------------------------------------------------------------------------------ Yeast


@pytest.mark.parametrize("cls", RANKERS, ids=lambda c: c.__name__)
def test_progressive_val_score_on_yeast(cls):
    """River's loop, metrics and dict targets on Yeast give pinned scores, and the very
    predictions and final model of olboost's array path."""
    dataset = _yeast()
    stream = list(dataset)
    assert list(stream[0][1]) == YEAST_LABELS
    model = _yeast_model(cls)
    scores = [
        MO.MicroAverage(metrics.F1()),
        MO.ExactMatch(),
        MO.MicroAverage(metrics.Accuracy()),
        MO.MacroAverage(metrics.F1()),
    ]
    steps = evaluate.iter_progressive_val_score(
        dataset, model, metrics.base.Metrics(scores), step=1, yield_predictions=True
    )
    predictions = [step["Prediction"] for step in steps]
    assert len(predictions) == len(stream) == 2417
    assert tuple(metric.get() for metric in scores) == YEAST_SCORES[cls.__name__]

    X, Y = _yeast_arrays(stream)
    twin = _yeast_model(cls)
    if cls in TOPK:  # r = k; the scores of vectors, learning sets of labels
        expected = []
        for xv, row in zip(X, Y, strict=True):
            expected.append(_cut(np.array(list(twin.score_one(xv).values())), twin.k))
            twin.learn_one(xv, {YEAST_LABELS[j] for j in np.flatnonzero(row)})
    else:  # the scores of score_then_learn, cut at the cardinality of the rows before
        S = twin.score_then_learn(X, Y)
        seen = np.concatenate([[0], np.cumsum(Y.sum(axis=1))])
        expected = [
            _cut(S[i], 1 if i == 0 else min(14, max(1, math.floor(seen[i] / i + 0.5))))
            for i in range(len(X))
        ]
        assert model.label_cardinality_ == Y.sum() / len(Y)
    assert predictions == expected
    assert _state(model) == _state(twin)


def test_a_pipeline_after_a_scaler_and_rank_loss_on_score_one():
    """A ranking learner after ``StandardScaler`` in a River pipeline; RankLoss takes the
    learner's ``score_one`` with River's targets as they are, and agrees with the array path."""
    stream = list(_yeast().take(600))
    ranker = LabelRanker(labels=YEAST_LABELS)  # Update III: deterministic
    pipeline = preprocessing.StandardScaler() | ranker
    assert isinstance(pipeline, compose.Pipeline)
    assert MO.MicroAverage(metrics.F1()).works_with(pipeline)
    f1, loss, by_array = MO.MicroAverage(metrics.F1()), RankLoss(), RankLoss()
    for x, y in stream:
        f1.update(y, pipeline.predict_one(x))
        scaled = pipeline["StandardScaler"].transform_one(x)
        scores = ranker.score_one(scaled)
        loss.update(y, scores)
        by_array.update([y[label] for label in YEAST_LABELS], np.array(list(scores.values())))
        pipeline.learn_one(x, y)
    assert (loss.get(), loss.n_paper) == (by_array.get(), 600)
    assert (loss.get(), f1.get()) == (0.424686869677941, 0.39615076182838815)
    x = stream[0][0]
    restored = pickle.loads(pickle.dumps(pipeline))
    assert restored.predict_one(x) == pipeline.predict_one(x)


# ------------------------------------------------------------------------------ River checks


@pytest.mark.parametrize(("cls", "params"), list(_check_configs()))
def test_river_check_estimator(cls, params):
    """River's checks for a multi-label classifier (module docstring: which data, which cannot
    apply)."""
    model = _check_model(cls, params)
    skipped = model._unit_test_skips()
    # the feature checks drop and add keys mid-stream: only a committee with missing="error"
    # skips them (the label ranker reads an absent key as 0 and grows by an unseen one)
    committee = params.get("committee")
    refuses = getattr(committee, "missing", "learn") == "error"
    refused = {*RIVER_FEATURE_CHECKS, *RIVER_MINI_BATCH_FEATURE_CHECKS}  # no mini-batch one here
    assert skipped == (refused if refuses else set())
    ran = _run_river_checks(model)
    expected = DATASET_CHECKS - skipped
    if not model._is_stochastic:
        expected -= {"check_seeding_is_idempotent"}
    assert expected <= ran
    assert {"check_repr", "check_pickling_supports_roundtrip", "check_doc"} <= ran


@pytest.mark.parametrize("name", RIVER_FEATURE_CHECKS)
def test_feature_checks_are_skipped_and_fail_only_for_the_features(name):
    model = AdaOLMR(VFDTCommittee(missing="error"), learners=3, seed=3, labels=MUSIC_LABELS)
    assert not model._missing_allowed()
    assert name in model._unit_test_skips()
    found = [check for check in checks.yield_checks(model) if check.__name__ == name]
    assert len(found) == 1
    with pytest.raises(ValueError, match="different features than the first example"):
        found[0].func(model.clone(), dataset=itertools.islice(_music_like(), 50))


@pytest.mark.parametrize("name", RIVER_FEATURE_CHECKS)
def test_label_ranker_passes_the_feature_checks(name):
    """The label ranker takes no missing values, yet runs River's checks that drop and add keys
    mid-stream: a dict is a sparse example. The emerging-features check first learns an example
    without 3 of Music's 72 features, and later examples bring them: the ranker grows to all 72."""
    model = LabelRanker(update="I", seed=3, labels=MUSIC_LABELS)
    assert not model._missing_allowed()
    assert name not in model._unit_test_skips()
    found = [check for check in checks.yield_checks(model) if check.__name__ == name]
    assert len(found) == 1
    ran = model.clone()
    found[0].func(ran, dataset=itertools.islice(_music_like(), 50))
    assert ran.t_ > 0
    assert ran.n_features_in_ == 72
    if name == "check_emerging_features":
        assert ran.theta_.shape == (72, len(MUSIC_LABELS))


@pytest.mark.parametrize("cls", RANKERS, ids=lambda c: c.__name__)
def test_predict_one_is_pure_and_works_before_learning(cls):
    """What River's ``check_predict_one_pure`` and ``check_predict_one_before_any_learn`` would
    check if River ran them on multi-label classifiers: ``predict_one`` works on a fresh model
    and leaves ``x`` (and the model) as they were."""
    model = _check_model(cls, next(iter(cls._unit_test_params())))
    for i, (x, y) in enumerate(itertools.islice(_music_like(), 40)):
        xx = copy.deepcopy(x)
        before = pickle.dumps(model)
        predicted = model.predict_one(x)
        assert x == xx and pickle.dumps(model) == before
        assert set(predicted) == set(MUSIC_LABELS) and any(predicted.values())
        if i == 0:
            assert not model._started
        yy = copy.deepcopy(y)
        model.learn_one(x, y)
        assert y == yy
