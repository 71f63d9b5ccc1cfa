"""Every public estimator passes the shared check suite (auto-discovered, as River's checks)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import marks_for
from olboost import AdaOLMR, LabelRanker, TopkAdaptive, VFDTCommittee
from olboost._random import STREAMS, seed_key
from olboost.checks import all_estimators, yield_checks
from olboost.feedback import TopkFeedback
from olboost.feedback.exploration import SingleSwapExploration, UniformExploration


def _cases():
    for cls in all_estimators():
        for i, params in enumerate(cls._unit_test_params()):
            model = cls(**params)
            for check in yield_checks(model):
                yield pytest.param(
                    model, check, id=f"{cls.__name__}[{i}]-{check.__name__}", marks=marks_for(cls)
                )


@pytest.mark.parametrize(("model", "check"), list(_cases()))
def test_check(model, check):
    check(model.clone())


def test_discovery_finds_the_public_estimators():
    names = {cls.__name__ for cls in all_estimators()}
    assert {"AdaOLMR", "VFDTCommittee"} <= names


def test_the_checks_leave_the_model_they_are_given_as_it_was():
    # run River-style on one object, check_bad_params left seed=-1 on it (labels given), and
    # every later check failed for that; the others trained it
    import pickle

    from olboost import AdaOLMR, VFDTCommittee

    model = AdaOLMR(VFDTCommittee(n_features=3), learners=3, seed=3, labels=4)
    before = pickle.dumps(model)
    for check in yield_checks(model):
        check(model)
        assert pickle.dumps(model) == before, check.__name__
    assert [c.__name__ for c in yield_checks(model)][:3] == [
        "check_clone_params", "check_repr", "check_bad_params",
    ]  # fmt: skip


# Estimators each broken in one way (module level: the checks pickle them), with the check
# that must catch each


class PredictChangesState(VFDTCommittee):
    def predict(self, x):
        self.n_predicted_ = self.__dict__.get("n_predicted_", 0) + 1
        return super().predict(x)


class PredictResizesX(VFDTCommittee):
    def predict(self, x):
        return super().predict(np.resize(np.asarray(x, dtype=float), self.n_attributes_))


class LearnOverwritesX(VFDTCommittee):
    def learn(self, x, weights):
        super().learn(x, weights)
        x *= 0.0


class LearnOneWritesIntoX(AdaOLMR):
    def learn_one(self, x, y):
        super().learn_one(x, y)
        if isinstance(x, np.ndarray):
            x += 1.0


class ArraysInReverse(AdaOLMR):
    def score_then_learn(self, X, Y, *, return_scores=True):
        reversed_ = super().score_then_learn(X[::-1], Y[::-1], return_scores=return_scores)
        return None if reversed_ is None else reversed_[::-1]


class PredictsNothing(AdaOLMR):
    def predict_one(self, x, **kwargs):
        return {label: False for label in self._outputs()}


class IgnoresTheSeed(AdaOLMR):
    def __init__(self, committee=None, learners=100, seed=None, labels=None, **params):
        super().__init__(committee, learners, 1, labels, **params)


class CommitteeIgnoresTheSeed(VFDTCommittee):
    def start(self, n_learners, n_labels, n_attributes, seed):
        super().start(n_learners, n_labels, n_attributes, 0)


class PickleForgetsAlpha(AdaOLMR):
    def __getstate__(self):
        state = super().__getstate__()
        if "alpha_" in state:
            state["alpha_"] = np.zeros_like(state["alpha_"])
        return state


class CountsBeforeChecking(AdaOLMR):
    def learn_one(self, x, y):
        self.calls_ = self.__dict__.get("calls_", 0) + 1
        super().learn_one(x, y)


class SkipsNonRealMatrices(AdaOLMR):
    # learns nothing from a complex or text matrix, and says nothing
    def learn(self, X, Y):
        data = X.data if hasattr(X, "tocsr") else np.asarray(X)
        if data.dtype.kind in "cUS":
            return self
        return super().learn(X, Y)


class RankerCountsMatricesBeforeChecking(LabelRanker):
    # no learners parameter: the check returned before the later one that saw the change
    def learn(self, X, Y):
        data = X.data if hasattr(X, "tocsr") else np.asarray(X)
        if data.dtype.kind in "cUS":  # counted, then refused
            self.matrices_ = self.__dict__.get("matrices_", 0) + 1
        return super().learn(X, Y)


class CloneForgetsAParameter(AdaOLMR):
    def clone(self, new_params=None, include_attributes=False):
        return super().clone({"hedge_rate": 1.0, **(new_params or {})}, include_attributes)


class ReadsDictsInTheirOrder(AdaOLMR):
    def _check_x(self, x):
        if isinstance(x, dict) and "feature_names_in_" not in self.__dict__:
            xv, _ = super()._check_x(x)
            return np.array(list(x.values()), dtype=float), list(x)
        return super()._check_x(x)


class DrawsFromAGlobalStream(UniformExploration):
    _stream = np.random.default_rng(0)

    def draw(self, ranking, k, seed, round, key=0):
        return self._stream.permutation(np.asarray(ranking))  # not a function of its arguments


class DrawSortsTheRanking(UniformExploration):
    def draw(self, ranking, k, seed, round, key=0):
        if isinstance(ranking, np.ndarray):
            ranking.sort()  # the caller's ranking, changed
        return super().draw(ranking, k, seed, round, key)


class ForgetsTheLastLabel(SingleSwapExploration):
    def pair_probabilities(self, ranking, k):
        P = super().pair_probabilities(ranking, k)
        P[-1, :] = P[:, -1] = 0.0
        return P


class TakesANegativeSeed(UniformExploration):
    def draw(self, ranking, k, seed, round, key=0):
        return super().draw(ranking, k, abs(seed), round, key)


class ArrayScoringChangesState(AdaOLMR):
    def score(self, X):
        self.n_scored_ = self.__dict__.get("n_scored_", 0) + 1
        return super().score(X)


class KeepsPredictionsOfAnotherX(AdaOLMR):
    # the predictions kept for the next learn_one, keyed on the round alone
    def _predictions(self, xv):
        cached = self.__dict__.get("_cache")
        if cached is not None and cached[0] == self.t_:
            return cached[2]
        H = self.committee_.predict(xv)
        self._cache = (self.t_, xv.copy(), H)
        return H


class PickleForgetsTheLabelCounts(AdaOLMR):
    # the rank cut of predict_one restarts from nothing in a resumed model
    def __getstate__(self):
        state = super().__getstate__()
        state.pop("n_targets_", None)
        state.pop("n_relevant_", None)
        return state


class PickleForgetsTheFeatureNames(AdaOLMR):
    def __getstate__(self):
        return {**super().__getstate__(), "feature_names_in_": None}


class LearnReadsTheRowsBackwards(AdaOLMR):
    def learn(self, X, Y):
        return super().learn(X[::-1], Y[::-1])


class CountsDictsBeforeChecking(AdaOLMR):
    def learn_one(self, x, y):
        if isinstance(x, dict):
            self.n_dicts_ = self.__dict__.get("n_dicts_", 0) + 1
        super().learn_one(x, y)


class CloneSharesTheCommittee(AdaOLMR):
    def clone(self, new_params=None, include_attributes=False):
        clone = super().clone(new_params, include_attributes)
        clone.committee = self.committee
        return clone


class PredictWithUnchecked(AdaOLMR):
    _param_constraints = {
        k: v for k, v in AdaOLMR._param_constraints.items() if k != "predict_with"
    }


class PredictChangesStateOnceGrown(VFDTCommittee):
    def predict(self, x):
        if self.__dict__.get("n_learned_", 0) >= 15:
            self.n_predicted_ = self.__dict__.get("n_predicted_", 0) + 1
        return super().predict(x)

    def learn(self, x, weights):
        super().learn(x, weights)
        self.n_learned_ = self.__dict__.get("n_learned_", 0) + 1


class CloneSharesTheTrees(VFDTCommittee):
    def clone(self, new_params=None, include_attributes=False):
        clone = super().clone(new_params, include_attributes)
        if include_attributes:
            for name, value in vars(self).items():
                if isinstance(value, np.ndarray):
                    setattr(clone, name, value)
        return clone


class ExploresAlikeForEverySeed(TopkAdaptive):
    def _init_state(self):
        super()._init_state()
        self._draw_key = seed_key(0, STREAMS["exploration"])


class EstimatingLearns(TopkAdaptive):
    def estimated_costs(self, x, feedback):
        costs = super().estimated_costs(x, feedback)
        self.n_estimated_ = self.__dict__.get("n_estimated_", 0) + 1
        return costs


class CountsFeedbackBeforeChecking(TopkAdaptive):
    def learn_one(self, x, y):
        if isinstance(y, TopkFeedback):
            self.n_feedback_ = self.__dict__.get("n_feedback_", 0) + 1
        super().learn_one(x, y)


class ReprNamesNoParameter(AdaOLMR):
    def __repr__(self):
        return f"{type(self).__name__}()"


class CopyForgetsTheWeights(AdaOLMR):
    # a copy with the learned state goes on from zero weights
    def clone(self, new_params=None, include_attributes=False):
        clone = super().clone(new_params, include_attributes)
        if include_attributes and "alpha_" in vars(clone):
            clone.alpha_ = np.zeros_like(clone.alpha_)
        return clone


class KeepsTheFirstStepScale(AdaOLMR):
    # a cache of a parameter's value, dropped on loading rather than left out of the pickle:
    # set_params (which forgets what a pickle leaves out) kept it stale
    def _step_state(self):
        state = super()._step_state()
        kept = self.__dict__.setdefault("_kept_step_scale", float(self.step_scale))
        return state._replace(**{state._fields[6]: kept})

    def __setstate__(self, state):
        super().__setstate__({k: v for k, v in state.items() if k != "_kept_step_scale"})


class _CountsItsLearning(VFDTCommittee):
    def learn(self, x, weights):
        super().learn(x, weights)
        self.n_learned_ = self.__dict__.get("n_learned_", 0) + 1


class FreshPredictsTheFirstLabel(_CountsItsLearning):
    # not uniform before it has learned anything
    def predict(self, x):
        H = super().predict(x)
        if not self.__dict__.get("n_learned_", 0):
            H = np.zeros_like(H)
            H[:, 0] = 1.0
        return H


class PredictsNoDistribution(_CountsItsLearning):
    def predict(self, x):
        H = super().predict(x)
        return 2.0 * H if self.__dict__.get("n_learned_", 0) else H


class PickleRestartsTheTrees(VFDTCommittee):
    # a resumed committee starts from scratch
    def __setstate__(self, state):
        super().__setstate__(state)
        if "n_learners_" not in state:
            return
        fresh = self.clone()
        fresh.start(self.n_learners_, self.n_labels_, self.n_attributes_, 1)
        self.__dict__.update(fresh.__dict__)


class SwallowsUnknownKeywords(AdaOLMR):
    # a misspelt parameter is silently dropped, the default taking its place
    def __init__(
        self, committee=None, learners=100, seed=None, labels=None, predict_with="sampled",
        step_scale=1.0, alpha_bound=2.0, hedge_rate=1.0, **unknown,
    ):  # fmt: skip
        super().__init__(
            committee, learners, seed, labels, predict_with, step_scale, alpha_bound, hedge_rate
        )


_COMMITTEE = {"n_features": 3}
_BOOSTER = {"committee": VFDTCommittee(n_features=3), "learners": 3, "seed": 1, "labels": 4}
_TOPK = {"committee": VFDTCommittee(n_features=3), "learners": 3, "seed": 1, "labels": 4}
_BROKEN = [
    (PredictChangesState(**_COMMITTEE), "check_committee_purity"),
    (PredictResizesX(**_COMMITTEE), "check_committee_bad_input"),
    (LearnOverwritesX(**_COMMITTEE), "check_committee_purity"),
    (LearnOneWritesIntoX(**_BOOSTER), "check_booster_purity"),
    (ArraysInReverse(**_BOOSTER), "check_booster_array_path"),
    (PredictsNothing(**_BOOSTER), "check_booster_scores"),
    (IgnoresTheSeed(**_BOOSTER), "check_booster_seeding"),
    (CommitteeIgnoresTheSeed(**_COMMITTEE), "check_committee_seeding"),
    (PickleForgetsAlpha(**_BOOSTER), "check_booster_pickling"),
    (CountsBeforeChecking(**_BOOSTER), "check_booster_bad_input"),
    (CloneForgetsAParameter(**_BOOSTER, hedge_rate=0.5), "check_clone_params"),
    (ReadsDictsInTheirOrder(**_BOOSTER), "check_booster_feature_order"),
    (DrawsFromAGlobalStream(rho=0.1), "check_exploration_draws"),
    (DrawSortsTheRanking(rho=0.1), "check_exploration_draws"),
    (ForgetsTheLastLabel(rho=0.1), "check_exploration_probabilities"),
    (TakesANegativeSeed(rho=0.1), "check_exploration_bad_input"),
    (ArrayScoringChangesState(**_BOOSTER), "check_booster_purity"),
    (KeepsPredictionsOfAnotherX(**_BOOSTER), "check_booster_purity"),
    (PickleForgetsTheLabelCounts(**_BOOSTER), "check_booster_pickling"),
    (PickleForgetsTheFeatureNames(**_BOOSTER), "check_booster_pickling"),
    (LearnReadsTheRowsBackwards(**_BOOSTER), "check_booster_array_path"),
    (CountsDictsBeforeChecking(**_BOOSTER), "check_booster_bad_input"),
    (CloneSharesTheCommittee(**_BOOSTER), "check_clone_params"),
    (PredictWithUnchecked(**_BOOSTER), "check_bad_params"),
    (PredictChangesStateOnceGrown(**_COMMITTEE), "check_committee_purity"),
    (CloneSharesTheTrees(**_COMMITTEE), "check_committee_clone_with_attributes"),
    (ExploresAlikeForEverySeed(**_TOPK), "check_booster_seeding"),
    (EstimatingLearns(**_TOPK), "check_booster_purity"),
    (CountsFeedbackBeforeChecking(**_TOPK), "check_booster_bad_input"),
    (ReprNamesNoParameter(**_BOOSTER), "check_repr"),
    (KeepsTheFirstStepScale(**_BOOSTER), "check_booster_set_params_goes_on_as_pickle"),
    (CopyForgetsTheWeights(**_BOOSTER), "check_booster_clone_learns_alike"),
    (FreshPredictsTheFirstLabel(**_COMMITTEE), "check_committee_predictions"),
    (PredictsNoDistribution(**_COMMITTEE), "check_committee_predictions"),
    (PickleRestartsTheTrees(**_COMMITTEE), "check_committee_pickling"),
    (SwallowsUnknownKeywords(**_BOOSTER), "check_unknown_params"),
    (SkipsNonRealMatrices(**_BOOSTER), "check_booster_bad_input"),
    (RankerCountsMatricesBeforeChecking(labels=4), "check_booster_bad_input"),
]


@pytest.mark.parametrize(("model", "name"), _BROKEN, ids=[type(m).__name__ for m, _ in _BROKEN])
def test_the_suite_catches_a_broken_estimator(model, name):
    # each passed the whole suite before these checks were added
    (check,) = [c for c in yield_checks(model) if c.__name__ == name]
    with pytest.raises(AssertionError):
        check(model)


@pytest.mark.parametrize("cls", all_estimators(), ids=lambda c: c.__name__)
def test_every_estimator_documents_each_parameter_in_a_numpydoc_section(cls):
    # OvaAdaBoostOL and AdaOVA said in prose that their parameters were AdaBoostOLM's
    import inspect
    import re

    doc = inspect.getdoc(cls) or ""
    assert "\nParameters\n----------\n" in doc, f"{cls.__name__} has no Parameters section"
    section = doc.split("\nParameters\n----------\n", 1)[1]
    section = re.split(r"\n[A-Z][a-z]+\n-+\n", section, maxsplit=1)[0]
    named = {
        name.strip() for line in section.splitlines() if line and not line.startswith(" ")
        for name in line.split(",")
    }  # fmt: skip
    missing = [p for p in cls._param_names() if p not in named]
    assert not missing, f"{cls.__name__} does not document {missing}"
