"""The online-learner layer: the River-style API, input checks and output bookkeeping that every
olboost estimator shares, committee booster or not (:mod:`olboost.online.learner`)."""

from olboost.online.learner import MulticlassLearner, OnlineLearner, RankingLearner

__all__ = ["MulticlassLearner", "OnlineLearner", "RankingLearner"]
