"""The scikit-learn adapters (olboost.sklearn) and scikit-learn's parameter protocol on olboost
estimators: scikit-learn's whole estimator check suite, pipelines, grid searches, scikit-learn's
ranking metrics against olboost's, and bad input that changes nothing."""

from __future__ import annotations

import pickle
import re

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import (
    coverage_error,
    label_ranking_average_precision_score,
    label_ranking_loss,
    make_scorer,
)
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from olboost import (
    AdaBoostOLM,
    AdaOLMR,
    LabelRanker,
    OnlineBMR,
    OnlineMBBM,
    TopkAdaptive,
    TopkBBM,
    VFDTCommittee,
)
from olboost.boosters import AdaOVA, BestTree, OvaAdaBoostOL, OzaBoost
from olboost.datasets import load, load_uci
from olboost.evaluate import train_test
from olboost.metrics import rank_loss
from olboost.sklearn import OnlineBoostingClassifier, OnlineBoostingRanker

# ------------------------------------------------------------------------------ check_estimator

# Small boosters keep the suite fast; the default-constructed adapters (100 trees) are checked
# too. ``missing="error"`` boosters reject NaN, so scikit-learn also runs its NaN/inf check on them
# (a booster that learns from missing values declares ``allow_nan`` instead).
CHECKED = [
    OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(), learners=5, seed=0)),
    OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(missing="error"), learners=5, seed=0)),
    OnlineBoostingClassifier(),
    OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=5, seed=0)),
    OnlineBoostingRanker(AdaOLMR(VFDTCommittee(missing="error"), learners=5, seed=0)),
    OnlineBoostingRanker(LabelRanker(seed=0)),
    OnlineBoostingRanker(),
]


@parametrize_with_checks(CHECKED)
def test_sklearn_check_estimator(estimator, check, monkeypatch):
    # scikit-learn runs its array API check only when SCIPY_ARRAY_API is set (else it skips it);
    # with it set, the check runs on NumPy input, the only namespace the adapters declare.
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check(estimator)


def test_tags_follow_the_booster():
    assert get_tags(CHECKED[0]).input_tags.allow_nan  # VFDTCommittee(missing="learn")
    assert not get_tags(CHECKED[1]).input_tags.allow_nan  # so check_estimators_nan_inf runs
    for est in CHECKED:
        tags = get_tags(est)
        assert tags.input_tags.sparse and tags.estimator_type == "classifier"
        assert tags.classifier_tags.multi_label == isinstance(est, OnlineBoostingRanker)
        assert not tags.target_tags.multi_output  # no multiclass-multioutput targets


# ------------------------------------------------------------------------------ data


def _balance() -> tuple[np.ndarray, np.ndarray]:
    """The UCI balance set, shuffled once, with its class names as labels."""
    data = load_uci("balance")
    perm = np.random.default_rng(0).permutation(len(data.y))
    return data.X[perm], np.asarray(data.class_names)[data.y[perm]]


def _small_booster(**kw):
    return AdaBoostOLM(VFDTCommittee(), learners=10, **kw)


# ------------------------------------------------------------------------------ fit is one pass


def test_classifier_fit_is_one_pass_of_the_booster_in_order():
    X, y = _balance()
    clf = OnlineBoostingClassifier(_small_booster(), random_state=3).fit(X, y)
    classes, codes = np.unique(y, return_inverse=True)
    native = _small_booster(seed=3, classes=3).learn(X, codes)
    assert list(clf.classes_) == ["B", "L", "R"] and clf.n_samples_seen_ == len(X)
    assert clf.booster_.t_ == len(X) and clf.booster_.seed_ == 3
    assert np.array_equal(clf.decision_function(X), native.votes(X))
    assert np.array_equal(clf.predict(X), classes[np.argmax(native.votes(X), axis=1)])
    p = clf.predict_proba(X)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert p[0].tolist() == list(native.predict_proba_one(X[0]).values())


def test_partial_fit_in_chunks_equals_fit():
    X, y = _balance()
    whole = OnlineBoostingClassifier(_small_booster(), random_state=1).fit(X, y)
    parts = OnlineBoostingClassifier(_small_booster(), random_state=1)
    for start in range(0, len(X), 100):
        parts.partial_fit(X[start : start + 100], y[start : start + 100], classes=["R", "L", "B"])
    assert parts.n_samples_seen_ == len(X) and list(parts.classes_) == ["B", "L", "R"]
    assert np.array_equal(parts.decision_function(X), whole.decision_function(X))

    data = load("emotions")
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=5), random_state=2)
    whole = clone(ranker).fit(data.train.X, data.train.Y)
    for start in range(0, len(data.train.X), 50):
        ranker.partial_fit(data.train.X[start : start + 50], data.train.Y[start : start + 50])
    assert ranker.label_cardinality_ == whole.label_cardinality_ == data.train.Y.sum() / 391
    assert np.array_equal(
        ranker.decision_function(data.test.X), whole.decision_function(data.test.X)
    )


def test_fit_starts_afresh_and_leaves_the_template_alone():
    X, y = _balance()
    template = _small_booster(seed=4)
    before = pickle.dumps(template)
    clf = OnlineBoostingClassifier(template)
    first = clf.fit(X[:300], y[:300]).decision_function(X)
    clf.partial_fit(X[300:], y[300:])
    again = clf.fit(X[:300], y[:300]).decision_function(X)
    assert np.array_equal(first, again) and clf.n_samples_seen_ == 300
    assert pickle.dumps(template) == before and not hasattr(template, "t_")
    assert clf.booster_ is not template


@pytest.mark.parametrize(
    "booster",
    [
        AdaBoostOLM(VFDTCommittee(), learners=3),
        OnlineMBBM(VFDTCommittee(), learners=3),
        BestTree(VFDTCommittee(), learners=3),
        OzaBoost(VFDTCommittee(), learners=3),
        OvaAdaBoostOL(VFDTCommittee(), learners=3),
        AdaOVA(VFDTCommittee(), learners=3),
    ],
    ids=lambda b: type(b).__name__,
)
def test_every_multiclass_booster_fits_as_natively(booster):
    X, y = _balance()
    X, y = X[:200], y[:200]
    clf = OnlineBoostingClassifier(booster, random_state=7).fit(X, y)
    _, codes = np.unique(y, return_inverse=True)
    native = booster.clone({"seed": 7, "classes": 3}).learn(X, codes)
    assert np.array_equal(clf.decision_function(X), native.votes(X))


@pytest.mark.parametrize(
    "booster",
    [
        AdaOLMR(VFDTCommittee(), learners=3),
        OnlineBMR(VFDTCommittee(), learners=3),
        TopkBBM(VFDTCommittee(), learners=3, k=2),
        TopkAdaptive(VFDTCommittee(), learners=3, k=2),
        LabelRanker(),
    ],
    ids=lambda b: type(b).__name__,
)
def test_every_ranking_learner_fits_as_natively(booster):
    data = load("emotions")
    X, Y = data.train.X[:150], data.train.Y[:150]
    ranker = OnlineBoostingRanker(booster, random_state=7).fit(X, Y)
    native = booster.clone({"seed": 7}).learn(X, Y)
    assert np.array_equal(ranker.decision_function(X), native.score(X))


def test_ranker_takes_class_labels_as_one_relevant_label_per_row():
    X, y = _balance()
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=5), random_state=0)
    ranker.fit(X, y)
    classes, codes = np.unique(y, return_inverse=True)
    native = AdaOLMR(VFDTCommittee(), learners=5, seed=0).learn(X, np.eye(3, dtype=bool)[codes])
    scores = native.score(X)
    assert ranker.label_cardinality_ == 1.0 and list(ranker.classes_) == list(classes)
    assert np.array_equal(ranker.decision_function(X), scores)
    assert np.array_equal(ranker.predict(X), classes[np.argmax(scores, axis=1)])


def test_ranker_decision_function_follows_the_classes_not_the_first_batch():
    X, y = _balance()
    classes = np.unique(y)
    assert len(classes) == 3
    # a first batch holding 2 of the 3 declared classes looks binary to scikit-learn
    first = np.flatnonzero(y != classes[2])[:20]
    parts = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=3), random_state=0)
    parts.partial_fit(X[first], y[first], classes=classes)
    parts.partial_fit(X, y)
    assert parts.decision_function(X).shape == (len(X), 3)
    two = np.isin(y, classes[:2])
    binary = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=3), random_state=0)
    scores = binary.fit(X[two], y[two])._scores(X)
    assert np.array_equal(binary.decision_function(X), scores[:, 1] - scores[:, 0])


# ------------------------------------------------------------------------------ predict rule


def test_ranker_predict_rule_is_the_top_r_labels():
    data = load("emotions")
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=10), random_state=1)
    ranker.fit(data.train.X, data.train.Y)
    r = int(np.floor(data.train.Y.sum() / len(data.train.Y) + 0.5))
    assert r == 2
    S = ranker.decision_function(data.test.X)
    P = ranker.predict(data.test.X)
    assert P.dtype == data.train.Y.dtype and P.shape == S.shape
    assert (P.sum(axis=1) == r).all()
    for s, p in zip(S, P, strict=True):
        top = sorted(range(len(s)), key=lambda j: (-s[j], j))[:r]
        assert sorted(np.flatnonzero(p).tolist()) == sorted(top)
    assert np.array_equal(ranker.predict(data.test.X), P)  # deterministic


@pytest.mark.parametrize(
    "Y, r",
    [
        ([[1, 1, 0, 0], [1, 0, 0, 0]], 2),  # mean 1.5: rounded half up
        ([[1, 1, 1, 0], [1, 1, 0, 0]], 3),  # 2.5
        ([[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]], 1),  # 1/3: at least one label
        ([[1, 1, 1, 1], [1, 1, 1, 1]], 4),  # every label
    ],
)
def test_ranker_predicts_the_rounded_mean_number_of_labels_ties_to_the_lower_index(Y, r):
    Y = np.asarray(Y)
    X = np.ones((len(Y), 2))
    ranker = OnlineBoostingRanker(LabelRanker(seed=0)).fit(X, Y)
    # a linear ranker scores the zero vector 0 for every label: ties throughout
    assert np.array_equal(ranker.decision_function(np.zeros((1, 2))), np.zeros((1, 4)))
    assert ranker.predict(np.zeros((1, 2))).tolist() == [[1] * r + [0] * (4 - r)]


def test_ranker_ties_go_to_the_lower_index_past_sixteen_labels():
    # NumPy's quicksort is an insertion sort, stable, below 17 elements, and keeps a constant
    # row in order: only a tie among more labels, beside other scores, tells a stable sort
    # from it (a mutation campaign, session 51). Update III moves every pair of the first
    # row by the same step: labels 50-99 tie on top for its x, the rest below
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    Y = np.zeros((2, 100), dtype=int)
    Y[0, 50:] = 1
    Y[1, 0] = 1
    ranker = OnlineBoostingRanker(LabelRanker(update="III", seed=0)).fit(X, Y)
    S = ranker.decision_function(X[:1])[0]
    assert len(set(S[50:])) == 1 and S[50] > S[:50].max()
    assert ranker.label_cardinality_ == 25.5  # 26 labels predicted: half up
    assert np.flatnonzero(ranker.predict(X[:1])[0]).tolist() == list(range(50, 76))
    # one row learned: the label cardinality is that row's
    one = OnlineBoostingRanker(LabelRanker(seed=0)).fit(X[:1], Y[:1])
    assert (one.n_samples_seen_, one.label_cardinality_) == (1, 50.0)


def test_random_state_takes_every_seed_up_to_two_to_the_32_less_one():
    # scikit-learn's bound (check_random_state), the booster's seed as given
    X, y = np.random.default_rng(0).normal(size=(30, 3)), np.arange(30) % 2
    top = 2**32 - 1
    clf = OnlineBoostingClassifier(_small_booster(), random_state=top).fit(X, y)
    assert clf.booster_.seed == top
    with pytest.raises(ValueError, match=re.escape(f"random_state must be in [0, {top}]")):
        OnlineBoostingClassifier(_small_booster(), random_state=top + 1).fit(X, y)


# ------------------------------------------------------------------------------ metrics


def test_ranker_scores_give_sklearn_metrics_olboosts_rank_loss():
    data = load("emotions")
    booster = AdaOLMR(VFDTCommittee(), learners=10)
    ranker = OnlineBoostingRanker(booster, random_state=1).fit(data.train.X, data.train.Y)
    S = ranker.decision_function(data.test.X)
    Y = data.test.Y
    # the same run natively: the same scores, bit for bit
    native = booster.clone({"seed": 1}).learn(data.train.X, data.train.Y)
    assert np.array_equal(S, native.score(data.test.X))
    # no tied scores, where the two definitions differ (olboost counts a tie 1/2, sklearn 1)
    assert all(len(np.unique(s)) == len(s) for s in S)
    assert label_ranking_loss(Y, S) == pytest.approx(rank_loss(S, Y).mean(), abs=1e-12)
    assert round(label_ranking_loss(Y, S), 4) == 0.2576  # as in the adapter's docstring
    # coverage error: the deepest rank of a relevant label, ties counted pessimistically
    depth = [
        max((s >= s[j]).sum() for j in np.flatnonzero(y)) if y.any() else 0
        for s, y in zip(S, Y, strict=True)
    ]
    assert coverage_error(Y, S) == pytest.approx(np.mean(depth), abs=1e-12)
    assert 0.0 < label_ranking_average_precision_score(Y, S) <= 1.0


def test_adapter_test_then_train_reproduces_olboost_train_test():
    data = load("emotions")
    booster = AdaOLMR(VFDTCommittee(), learners=10)
    result = train_test(booster.clone({"seed": 1}), data.train, data.test)
    ranker = OnlineBoostingRanker(booster, random_state=1).fit(data.train.X, data.train.Y)
    S = np.empty(data.test.Y.shape)
    for i in range(len(S)):
        S[i] = ranker.decision_function(data.test.X[i : i + 1])[0]
        ranker.partial_fit(data.test.X[i : i + 1], data.test.Y[i : i + 1])
    assert np.array_equal(rank_loss(S, data.test.Y), result.losses)
    assert all(len(np.unique(s)) == len(s) for s in S)
    assert label_ranking_loss(data.test.Y, S) == pytest.approx(result.rank_loss, abs=1e-12)


# ------------------------------------------------------------------------------ pipeline, grid


def test_pipeline_equals_scaler_then_adapter():
    X, y = _balance()
    clf = OnlineBoostingClassifier(_small_booster(), random_state=2)
    pipe = Pipeline([("scale", StandardScaler()), ("boost", clf)]).fit(X[:400], y[:400])
    scaler = StandardScaler().fit(X[:400])
    manual = clone(clf).fit(scaler.transform(X[:400]), y[:400])
    Xt = scaler.transform(X[400:])
    assert np.array_equal(pipe.decision_function(X[400:]), manual.decision_function(Xt))
    assert np.array_equal(pipe.predict_proba(X[400:]), manual.predict_proba(Xt))
    assert np.array_equal(pipe.predict(X[400:]), manual.predict(Xt))
    assert pipe.score(X[400:], y[400:]) == manual.score(Xt, y[400:])

    data = load("emotions")
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=5), random_state=2)
    pipe = Pipeline([("scale", StandardScaler()), ("rank", ranker)])
    pipe.fit(data.train.X, data.train.Y)
    scaler = StandardScaler().fit(data.train.X)
    manual = clone(ranker).fit(scaler.transform(data.train.X), data.train.Y)
    Xt = scaler.transform(data.test.X)
    assert np.array_equal(pipe.decision_function(data.test.X), manual.decision_function(Xt))
    assert np.array_equal(pipe.predict(data.test.X), manual.predict(Xt))


def _cv_scores(estimator, param, values, X, y, scorer) -> list[float]:
    """Mean test score per value, by hand: clone, set the parameter, fit each fold, score."""
    means = []
    for value in values:
        scores = []
        for train, test in KFold(3).split(X):
            est = clone(estimator).set_params(**{param: value}).fit(X[train], y[train])
            scores.append(scorer(est, X[test], y[test]))
        means.append(np.mean(scores))
    return means


def test_grid_search_over_a_booster_parameter():
    X, y = _balance()
    for estimator in [
        OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee()), random_state=0),
        OnlineBoostingClassifier(random_state=0),  # booster__ reaches the default booster
    ]:
        search = GridSearchCV(estimator, {"booster__learners": [1, 20]}, cv=KFold(3)).fit(X, y)
        assert search.best_params_ == {"booster__learners": 20}
        assert search.best_estimator_.booster_.learners == 20
        assert estimator.booster is None or estimator.booster.learners == 100  # untouched
        manual = _cv_scores(
            estimator, "booster__learners", [1, 20], X, y, lambda e, a, b: e.score(a, b)
        )
        assert search.cv_results_["mean_test_score"].tolist() == manual
        assert manual[1] > manual[0] + 0.03

    data = load("emotions")
    scorer = make_scorer(
        label_ranking_loss, greater_is_better=False, response_method="decision_function"
    )
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee()), random_state=0)
    search = GridSearchCV(ranker, {"booster__learners": [1, 20]}, scoring=scorer, cv=KFold(3))
    search.fit(data.train.X, data.train.Y)
    assert search.best_params_ == {"booster__learners": 20}
    manual = _cv_scores(ranker, "booster__learners", [1, 20], data.train.X, data.train.Y, scorer)
    assert search.cv_results_["mean_test_score"].tolist() == manual


# ------------------------------------------------------------------------------ parameters


def test_nested_params_clone_and_set_params():
    clf = OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(n_features=3), learners=5))
    params = clf.get_params()
    assert params["booster__learners"] == 5 and params["booster__committee__n_features"] == 3
    assert set(clf.get_params(deep=False)) == {"booster", "random_state"}
    clf.set_params(booster__learners=7, booster__committee__n_features=2, random_state=4)
    assert clf.booster.learners == 7 and clf.booster.committee.n_features == 2
    copy = clone(clf)
    assert copy.booster is not clf.booster and repr(copy) == repr(clf)
    # a bad name raises naming it, and nothing is set
    before = repr(clf)
    with pytest.raises(ValueError, match="AdaBoostOLM has no parameter 'lerners'"):
        clf.set_params(random_state=9, booster__learners=2, booster__lerners=0)
    with pytest.raises(ValueError, match="VFDTCommittee has no parameter 'n_feature'"):
        clf.set_params(booster__learners=9, booster__committee__n_feature=-1)
    assert repr(clf) == before
    # a bad value is refused by fit, naming the parameter, as by scikit-learn's estimators (a
    # search then scores that candidate error_score and goes on), and nothing is fitted
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    for bad, named in [
        ({"booster__learners": 0}, r"AdaBoostOLM.learners must be in \[1, "),
        ({"booster__committee__n_features": -1}, "VFDTCommittee.n_features must be"),
    ]:
        candidate = clone(clf).set_params(**bad)
        with pytest.raises(ValueError, match=named):
            candidate.fit(X, y)
        assert not hasattr(candidate, "booster_")
    # with the default booster, booster__ creates it
    default = OnlineBoostingRanker().set_params(booster__learners=3)
    assert isinstance(default.booster, AdaOLMR) and default.booster.learners == 3
    bare = OnlineBoostingRanker()
    with pytest.raises(ValueError, match="AdaOLMR has no parameter 'lerners'"):
        bare.set_params(booster__lerners=-3)
    assert bare.booster is None


def test_a_search_scores_a_candidate_with_a_bad_booster_value_as_error_score():
    # set_params refused booster__learners=0 at once, outside the error handling in which
    # GridSearchCV scores a failed fit as error_score: one bad candidate ended the whole search
    import warnings

    from sklearn.datasets import load_iris
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import GridSearchCV, validation_curve

    X, y = load_iris(return_X_y=True)
    clf = OnlineBoostingClassifier(AdaBoostOLM(learners=3))  # committee None: the default
    grid = {"booster__learners": [0, 3], "booster__committee__n_features": [-1, 2]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = GridSearchCV(clf, grid, cv=2, error_score=np.nan).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.isnan(scores).sum() == 3 and np.isfinite(scores).sum() == 1
    assert search.best_params_ == {"booster__learners": 3, "booster__committee__n_features": 2}
    failed = [str(w.message) for w in caught if issubclass(w.category, FitFailedWarning)]
    assert failed and "AdaBoostOLM.learners must be in" in " ".join(failed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        _, test = validation_curve(
            clf, X, y, param_name="booster__learners", param_range=[0, 2], cv=2
        )
    assert np.isnan(test[0]).all() and np.isfinite(test[1]).all()
    # the default adapter lists its default booster's parameters, as set_params sets them: a
    # halving search over booster__learners looks the name up there (it was refused)
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV

    default = OnlineBoostingClassifier(random_state=0)
    assert default.get_params()["booster__learners"] == 100
    assert set(default.get_params(deep=False)) == {"booster", "random_state"}
    halving = HalvingGridSearchCV(
        default, {"booster__committee__n_features": [2, 3]}, resource="booster__learners",
        min_resources=2, max_resources=8, cv=2, random_state=0,
    ).fit(X, y)  # fmt: skip
    assert halving.n_resources_[0] == 2 and "booster__learners" in halving.best_params_


def test_sklearn_clone_of_olboost_estimators():
    X, y = _balance()
    booster = _small_booster(seed=1).learn(X, y)  # fitted
    copy = clone(booster)
    assert type(copy) is AdaBoostOLM and repr(copy) == repr(booster)
    assert copy.committee is not booster.committee and not hasattr(copy, "t_")
    ranker = AdaOLMR(VFDTCommittee(n_features=4), learners=6)
    assert repr(clone(ranker)) == repr(ranker)
    ranker.set_params(learners=8, committee__grace_period=(1.0, 2.0))
    assert ranker.learners == 8 and ranker.committee.grace_period == (1.0, 2.0)
    with pytest.raises(ValueError, match="has no parameter 'lerners'"):
        ranker.set_params(lerners=3)
    # a committee left None (the default VFDTCommittee()) is created to set its parameters, as
    # the adapters create their default booster: it was refused ("committee is None"), and a
    # search over committee__ parameters of a default booster failed; the same model
    from olboost.checks import synthetic_multilabel

    X, Y = synthetic_multilabel(n=60, k=4)
    created = AdaOLMR(learners=3, seed=1).set_params(committee__n_features=3)
    assert repr(created.committee) == repr(VFDTCommittee(n_features=3))
    given = AdaOLMR(VFDTCommittee(n_features=3), learners=3, seed=1)
    assert pickle.dumps(created.learn(X, Y)) == pickle.dumps(given.learn(X, Y))
    mutated = AdaBoostOLM()
    mutated.mutate({"committee": {"grace_period": (1.0, 2.0)}})  # River's form
    assert mutated.committee.grace_period == (1.0, 2.0)
    bare = AdaOLMR()
    with pytest.raises(ValueError, match=r"^VFDTCommittee has no parameter 'bogus'"):
        bare.set_params(committee__bogus=3)
    with pytest.raises(ValueError, match="VFDTCommittee.n_features must be in"):
        bare.set_params(learners=4, committee__n_features=-3)
    assert bare.committee is None and bare.learners == 100  # nothing set


def test_an_unknown_parameter_to_set_or_clone_names_the_one_it_resembles():
    # set_params and clone named the misspelt parameter only; the constructor named the one
    # it resembles, and so do they now (each of several, and nothing for no resemblance)
    ranker = AdaOLMR(VFDTCommittee(n_features=4), learners=6)
    with pytest.raises(ValueError, match=r"^AdaOLMR has no parameter 'lerners' \(did you mean "
                       r"'learners'\?\); its parameters are \['committee', "):  # fmt: skip
        ranker.set_params(lerners=3)
    with pytest.raises(ValueError, match=r"^VFDTCommittee has no parameter 'n_feature' \(did "
                       r"you mean 'n_features'\?\)"):  # fmt: skip
        ranker.set_params(committee__n_feature=3)
    with pytest.raises(ValueError, match=r"^AdaOLMR has no parameters 'lerners' \(did you mean "
                       r"'learners'\?\), 'sed' \(did you mean 'seed'\?\), 'zzz'; "):  # fmt: skip
        ranker.clone({"zzz": 1, "sed": 2, "lerners": 3})
    with pytest.raises(ValueError, match=r"^AdaOLMR has no parameter 'zzz'; its parameters"):
        ranker.set_params(zzz=1)
    assert ranker.learners == 6 and ranker.committee.n_features == 4


def test_random_state_seeds_the_booster():
    X, y = _balance()
    seeded = OnlineBoostingClassifier(_small_booster(seed=1), random_state=5).fit(X, y)
    assert seeded.booster_.seed_ == 5
    same = OnlineBoostingClassifier(_small_booster(seed=5)).fit(X, y)
    assert same.booster_.seed_ == 5
    assert np.array_equal(seeded.decision_function(X), same.decision_function(X))
    a = OnlineBoostingClassifier(_small_booster(), random_state=np.random.RandomState(0)).fit(X, y)
    b = OnlineBoostingClassifier(_small_booster(), random_state=np.random.RandomState(0)).fit(X, y)
    assert a.booster_.seed_ == b.booster_.seed_
    assert np.array_equal(a.decision_function(X), b.decision_function(X))


# ------------------------------------------------------------------------------ input


def test_sparse_input_equals_dense():
    X, y = _balance()
    dense = OnlineBoostingClassifier(_small_booster(), random_state=0).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        sparse = OnlineBoostingClassifier(_small_booster(), random_state=0)
        sparse.fit(sp.csr_matrix(X).asformat(fmt), y)
        assert np.array_equal(
            sparse.decision_function(sp.csr_matrix(X).asformat(fmt)), dense.decision_function(X)
        )


def test_missing_values_pass_when_the_booster_learns_them():
    X, y = _balance()
    X = X.copy()
    X[::7, 1] = np.nan
    clf = OnlineBoostingClassifier(_small_booster(), random_state=0).fit(X, y)
    _, codes = np.unique(y, return_inverse=True)
    native = _small_booster(seed=0, classes=3).learn(X, codes)
    assert np.array_equal(clf.decision_function(X), native.votes(X))


def test_refit_takes_the_missing_value_rule_of_the_parameters_not_of_the_old_fit():
    """``fit`` forgets the fitted booster, so its input check (NaN allowed or not) and the tags
    follow the booster the parameters make now; predicting and ``partial_fit`` keep the fitted
    booster's rule."""
    X, y = _balance()
    Xn = X.copy()
    Xn[::7, 1] = np.nan
    strict = AdaBoostOLM(VFDTCommittee(missing="error"), learners=3)
    clf = OnlineBoostingClassifier(strict, random_state=0).fit(X, y)
    clf.set_params(booster__committee__missing="learn")
    assert get_tags(clf).input_tags.allow_nan == get_tags(clone(clf)).input_tags.allow_nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(Xn, y)  # the fitted booster refuses missing values
    refit = clf.fit(Xn, y)
    fresh = clone(clf).fit(Xn, y)
    assert np.array_equal(refit.decision_function(Xn), fresh.decision_function(Xn))
    clf.set_params(booster__committee__missing="error")
    assert not get_tags(clf).input_tags.allow_nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(Xn, y)


def test_memory_mapped_model_keeps_learning(tmp_path):
    X, y = _balance()
    clf = OnlineBoostingClassifier(_small_booster(), random_state=0).fit(X[:300], y[:300])
    joblib.dump(clf, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    assert np.array_equal(loaded.decision_function(X), clf.decision_function(X))
    loaded.partial_fit(X[300:], y[300:])
    clf.partial_fit(X[300:], y[300:])
    assert np.array_equal(loaded.decision_function(X), clf.decision_function(X))
    # the adapter's own arrays (classes_) are plain arrays again, as the booster's: the resumed
    # adapter pickles to the bytes of the one never mapped (a read-only np.memmap stayed one)
    assert type(loaded.classes_) is np.ndarray and loaded.classes_.flags.writeable
    assert pickle.dumps(loaded) == pickle.dumps(clf)


def _fitted_classifier():
    X, y = _balance()
    booster = AdaBoostOLM(VFDTCommittee(missing="error"), learners=5)
    return OnlineBoostingClassifier(booster, random_state=0).fit(X[:100], y[:100]), X, y


def _with(X: np.ndarray, value: float) -> np.ndarray:
    X = X.copy()
    X[-1, 2] = value
    return X


CLASSIFIER_BAD_CALLS = {
    "nan": (lambda X, y: (_with(X, np.nan), y, {}), ValueError, "NaN"),
    "inf": (lambda X, y: (_with(X, np.inf), y, {}), ValueError, "infinity"),
    "huge": (lambda X, y: (_with(X, 1e200), y, {}), ValueError, "too large in magnitude"),
    "features": (lambda X, y: (X[:, :3], y, {}), ValueError, "X has 3 features"),
    "unknown class": (
        lambda X, y: (X, np.where(np.arange(len(y)) == 5, "Q", y), {}),
        ValueError,
        r"not in classes .*'Q'",
    ),
    "lengths": (lambda X, y: (X, y[:-1], {}), ValueError, "inconsistent numbers of samples"),
    "classes": (lambda X, y: (X, y, {"classes": ["B", "L"]}), ValueError, "not the same"),
    "2-D y": (lambda X, y: (X, np.c_[y, y], {}), ValueError, "1d array"),
    "strings": (lambda X, y: (X.astype(str).astype(object) + "x", y, {}), ValueError, "string"),
}

#: Inputs that ``fit`` rejects too (``fit`` starts afresh: other features or classes are fine).
BAD_FOR_FIT_TOO = {"nan", "inf", "huge", "lengths", "2-D y", "strings"}


@pytest.mark.parametrize("case", list(CLASSIFIER_BAD_CALLS))
def test_classifier_bad_partial_fit_changes_nothing(case):
    clf, X, y = _fitted_classifier()
    make, error, match = CLASSIFIER_BAD_CALLS[case]
    Xb, yb, kw = make(X[100:150], y[100:150])
    before = pickle.dumps(clf)
    with pytest.raises(error, match=match):
        clf.partial_fit(Xb, yb, **kw)
    assert pickle.dumps(clf) == before
    if case in BAD_FOR_FIT_TOO:
        with pytest.raises(error, match=match):
            clf.fit(Xb, yb)
        assert pickle.dumps(clf) == before  # a failed fit keeps the fitted model too


RANKER_BAD_CALLS = {
    "columns": (lambda X, Y: (X, Y[:, :5]), ValueError, "5 label columns, the model ranks 6"),
    "not 0/1": (lambda X, Y: (X, Y.astype(int) * 2), ValueError, r"indicator .*\[0, 2\]"),
    "-1/1": (lambda X, Y: (X, Y.astype(int) * 2 - 1), ValueError, "indicator"),
    "kind": (lambda X, Y: (X, Y.argmax(axis=1)), ValueError, "as in the first call"),
    "features": (lambda X, Y: (X[:, :10], Y), ValueError, "X has 10 features"),
    "inf": (lambda X, Y: (_with(X, -np.inf), Y), ValueError, "infinity"),
}


@pytest.mark.parametrize("case", list(RANKER_BAD_CALLS))
def test_ranker_bad_partial_fit_changes_nothing(case):
    data = load("emotions")
    booster = AdaOLMR(VFDTCommittee(), learners=5)
    ranker = OnlineBoostingRanker(booster, random_state=0).fit(data.train.X, data.train.Y)
    make, error, match = RANKER_BAD_CALLS[case]
    Xb, Yb = make(data.test.X[:20], data.test.Y[:20])
    before = pickle.dumps(ranker)
    with pytest.raises(error, match=match):
        ranker.partial_fit(Xb, Yb)
    assert pickle.dumps(ranker) == before


def test_a_row_the_committee_rejects_mid_batch_changes_nothing():
    # the booster's own array path learns the rows before a bad nominal code (stream semantics);
    # partial_fit must check the whole batch first
    X, y = _balance()
    X = np.floor(np.abs(X)).clip(0, 4)
    booster = AdaBoostOLM(VFDTCommittee(nominal_attributes={0: 5}, missing="error"), learners=5)
    clf = OnlineBoostingClassifier(booster, random_state=0).fit(X[:100], y[:100])
    Xb = X[100:150].copy()
    Xb[30, 0] = 7.0
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match="X row 30: .*nominal"):
        clf.partial_fit(Xb, y[100:150])
    assert pickle.dumps(clf) == before
    Xb[30, 0] = 3.0
    assert clf.partial_fit(Xb, y[100:150]).n_samples_seen_ == 150


def test_first_partial_fit_needs_classes_and_leaves_no_state():
    X, y = _balance()
    for est in (OnlineBoostingClassifier(_small_booster()), OnlineBoostingRanker()):
        with pytest.raises(ValueError, match="classes must be passed on the first call"):
            est.partial_fit(X, y)
        assert not [name for name in vars(est) if name.endswith("_")]
    # an indicator y names its labels by its columns: no classes needed
    data = load("emotions")
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=3))
    ranker.partial_fit(data.train.X[:10], data.train.Y[:10])
    assert ranker.classes_.tolist() == list(range(6))
    with pytest.raises(ValueError, match="arange"):
        ranker.partial_fit(data.train.X[:10], data.train.Y[:10], classes=[1, 2, 3, 4, 5, 6])


@pytest.mark.parametrize(
    ("classes", "error", "message"),
    [
        # NumPy sorts the classes and said only "'<' not supported between ..."
        (["B", "L", None], TypeError, "classes must be class labels of one kind that sorts"),
        # flattened by np.unique, a 2-D classes was taken for the classes it holds
        ([["B", "L", "R"]], ValueError, r"classes must be a 1-D array-like .* shape \(1, 3\)"),
        ([["B"], ["L", "R"]], ValueError, "classes must be a 1-D array-like"),
        ([1.5, 2.5], ValueError, "classes: Unknown label type: continuous"),
    ],
)
def test_bad_classes_are_named_and_leave_no_state(classes, error, message):
    X, y = _balance()
    for est in (OnlineBoostingClassifier(_small_booster()), OnlineBoostingRanker()):
        before = pickle.dumps(est)
        with pytest.raises(error, match=message):
            est.partial_fit(X[:20], y[:20], classes=classes)
        assert pickle.dumps(est) == before
        est.partial_fit(X[:20], y[:20], classes=["B", "L", "R"])
        with pytest.raises(error, match=message):
            est.partial_fit(X[20:40], y[20:40], classes=classes)
        assert est.n_samples_seen_ == 20
    mixed = np.array(["B", None, "L", "R"] * 5, dtype=object)
    for est in (OnlineBoostingClassifier(_small_booster()), OnlineBoostingRanker()):
        with pytest.raises(TypeError, match="y must be class labels of one kind that sorts"):
            est.fit(X[:20], mixed)


def test_bad_parameters_are_named_at_fit():
    X, y = _balance()
    with pytest.raises(TypeError, match="booster must be None or an olboost MulticlassLearner"):
        OnlineBoostingClassifier(AdaOLMR()).fit(X, y)
    with pytest.raises(TypeError, match="booster must be None or an olboost RankingLearner"):
        OnlineBoostingRanker(AdaBoostOLM()).fit(X, y)
    with pytest.raises(ValueError, match="leave the booster's classes=None"):
        OnlineBoostingClassifier(AdaBoostOLM(classes=3)).fit(X, y)
    with pytest.raises(ValueError, match="random_state must be in"):
        OnlineBoostingClassifier(random_state=-1).fit(X, y)
    with pytest.raises(TypeError, match="random_state must be None, an int"):
        OnlineBoostingClassifier(random_state="seed").fit(X, y)
    with pytest.raises(ValueError, match="1 class"):
        OnlineBoostingClassifier().fit(X[:5], ["B"] * 5)


@pytest.mark.parametrize("cls", [TopkAdaptive, TopkBBM])
def test_a_topk_booster_predicts_its_k_labels_as_through_river(cls):
    # predict cut at the training label cardinality (2 on emotions), computed from the full Y
    # a top-k booster never sees, where the fitted booster's own predict_one marks its k
    data = load("emotions")
    ranker = OnlineBoostingRanker(cls(VFDTCommittee(), learners=4, seed=0, k=3))
    ranker.fit(data.train.X[:200], data.train.Y[:200])
    assert ranker.label_cardinality_ < 2.5  # so the old cut was 2, not k
    X = data.test.X[:5]
    river = [[int(v) for v in ranker.booster_.predict_one(x).values()] for x in X]
    np.testing.assert_array_equal(ranker.predict(X).astype(int), river)
    assert (ranker.predict(X).sum(axis=1) == 3).all()


def test_random_state_seeds_a_label_ranker_with_update_three():
    # Update III uses no random number, so the seed was not set: every fit drew its own seed_
    # (equal fits pickled apart), used once the update was switched to I or II
    X, Y = load("emotions").train.X[:60], load("emotions").train.Y[:60]
    fits = [
        OnlineBoostingRanker(LabelRanker(update="III"), random_state=3).fit(X, Y) for _ in range(2)
    ]
    assert [f.booster_.seed for f in fits] == [3, 3]
    assert pickle.dumps(fits[0]) == pickle.dumps(fits[1])


# ------------------------------------------------------------------ mutation round 5's kills


def test_a_binary_decision_function_is_positive_where_predict_gives_the_second_class():
    # "positive for classes_[1]": a flipped sign inverted every ROC curve
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] > 0, "pos", "neg")
    model = AdaBoostOLM(VFDTCommittee(), learners=5)
    clf = OnlineBoostingClassifier(model, random_state=0).fit(X, y)
    decision = clf.decision_function(X)
    assert np.array_equal(decision > 0, clf.predict(X) == clf.classes_[1])


def test_a_ranker_of_a_two_column_indicator_scores_both_labels_in_ys_dtype():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = np.stack([X[:, 0] > 0, X[:, 1] > 0], axis=1).astype(np.int64)
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=3), random_state=0)
    ranker.fit(X, Y)
    assert ranker.decision_function(X).shape == (60, 2)  # not one column of differences
    assert ranker.predict(X).dtype == Y.dtype  # "of y's dtype"


def test_a_random_state_object_gives_each_fit_its_own_draw():
    # "a RandomState gives one draw per fit": successive fits draw on, another seed draws otherwise
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    shared = np.random.RandomState(7)
    clf = OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(), learners=2), random_state=shared)
    first, second = clf.fit(X, y).booster_.seed_, clf.fit(X, y).booster_.seed_
    other = clf.set_params(random_state=np.random.RandomState(8)).fit(X, y).booster_.seed_
    assert first != second and other != first


def test_a_boolean_y_is_no_int_classes():
    # True == 1 as a dict key: a boolean y was learned as the classes 0 and 1, which the
    # booster the adapter wraps refuses (a bool is no int class)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, 30)
    clf = OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(n_features=2), learners=4, seed=1))
    clf.partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match=r"not in classes \[0, 1, 2\]: \[False, True\]"):
        clf.partial_fit(X[20:], y[20:] > 0)
    assert pickle.dumps(clf) == before
    flags = OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(n_features=2), learners=4, seed=1))
    flags.partial_fit(X, y > 0, classes=[False, True])
    assert flags.n_samples_seen_ == 30 and list(flags.classes_) == [False, True]


def test_the_seed_an_unseeded_fit_drew_refits_alike_as_the_boosters_seed():
    # the docstring's way back to an unseeded fit: random_state cannot take the drawn seed
    X, y = _balance()
    first = OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(n_features=2), learners=4))
    first.fit(X[:200], y[:200])
    seed = first.booster_.seed_
    assert seed > 2**32
    with pytest.raises(ValueError, match="random_state must be in"):
        clone(first).set_params(random_state=seed).fit(X[:200], y[:200])
    again = clone(first).set_params(booster__seed=seed).fit(X[:200], y[:200])
    np.testing.assert_array_equal(again.predict_proba(X[200:]), first.predict_proba(X[200:]))


def test_partial_fit_takes_bool_classes_for_other_classes_than_0_and_1():
    # np.array_equal took [False, True] for the first call's [0, 1]: accepted, then every bool
    # y refused (a names probe, session 31)
    X = np.random.default_rng(0).normal(size=(8, 3))
    model = OnlineBoostingClassifier(
        AdaBoostOLM(VFDTCommittee(n_features=3), learners=2), random_state=1
    ).partial_fit(X[:4], [0, 1, 0, 1], classes=[0, 1])
    with pytest.raises(ValueError, match=r"classes=\[False, True\] is not the same as on"):
        model.partial_fit(X[4:], [0, 1, 0, 1], classes=[False, True])
    model.partial_fit(X[4:], [0, 1, 0, 1], classes=np.array([0, 1]))


@pytest.mark.parametrize("booster", ["TopkBBM", "TopkAdaptive"])
def test_a_top_k_booster_showing_more_labels_than_y_has_is_named(booster):
    # a default k=3 on a binary y said only "UniformExploration: k must be in [2, m=2], got 3",
    # naming neither the booster nor its parameter
    import olboost

    model = OnlineBoostingRanker(getattr(olboost, booster)(learners=2), random_state=0)
    X, y = np.zeros((6, 2)), np.array([0, 1, 0, 1, 1, 0])
    with pytest.raises(ValueError, match=rf"^{booster}: k=3 must be in \[2, m=2\] labels"):
        model.fit(X, y)


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_sets_of_labels_are_refused_with_how_to_make_an_indicator(method):
    # the form olboost's learn takes failed in scikit-learn ("Unknown label type: unknown.
    # Maybe you are trying to fit a classifier ... on a regression target") or in NumPy
    # ("inhomogeneous shape after 1 dimensions")
    X = np.random.default_rng(0).random((4, 3))
    hint = (
        r"; for sets \(or lists\) of relevant labels, as olboost's learn takes them, give "
        r"sklearn\.preprocessing\.MultiLabelBinarizer\(\)\.fit_transform\(y\)$"
    )
    import pandas as pd

    sets = [{"a", "b"}, {"b"}, {"a"}, set()]
    for y in (sets, [["a", "b"], ["b"], ["a"], ["c"]],
              [["a", "b"], ["b", "c"], ["a", "c"], ["c", "a"]], pd.Series(sets),
              np.array(sets, dtype=object),
              [np.array([1, 0]), np.array([1]), np.array([0, 1]), np.array([1, 1])]):  # fmt: skip
        model = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=2, seed=0))
        with pytest.raises(ValueError, match=r"^OnlineBoostingRanker: y must be .*" + hint):
            getattr(model, method)(X, y)
        assert "booster_" not in model.__dict__


def test_the_html_repr_tables_the_adapters_own_parameters():
    # scikit-learn (1.7+) tables get_params(deep=True) of an estimator whose parts it does not
    # draw: the default booster's parameters were listed as booster__<name>, every one marked
    # as set by the user
    from sklearn.base import BaseEstimator

    if not hasattr(BaseEstimator, "_get_params_html"):
        pytest.skip("scikit-learn before 1.7 draws no table of parameters")
    for adapter in (OnlineBoostingRanker(), OnlineBoostingClassifier(random_state=2)):
        html = adapter._repr_html_()
        assert "booster__" not in html
        set_by_user = re.findall(
            r'<tr class="user-set">.*?<td class="param">(.*?)</td>', html, re.S
        )
        assert [re.sub("<[^>]+>", "", name).strip() for name in set_by_user] == (
            ["random_state"] if adapter.random_state is not None else []
        )
