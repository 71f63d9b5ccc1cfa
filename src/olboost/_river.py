"""River compatibility, with River optional.

When River imports, :class:`RiverClassifier` is a ``river.base.MiniBatchClassifier`` and
:class:`RiverMultiLabelClassifier` a ``river.base.MultiLabelClassifier``: a multiclass booster
(:class:`olboost.online.MulticlassLearner`) or a ranking learner
(:class:`olboost.online.RankingLearner`) that has one as a base is accepted wherever River wants
such a model (``river.evaluate``, ``river.compose`` pipelines, ``river.checks``, metrics'
``works_with``). When River is not installed they are plain classes holding only olboost's own
methods (``_unit_test_skips``, ``_multiclass``, ``predict_proba_one``), so the core install needs
no River and nothing else changes.

They are meant to come *after* :class:`olboost.base.Estimator` in a class's bases, so that
olboost's ``clone``, ``_get_params``, ``__repr__``, ``__str__``, ``_is_stochastic`` and
``_unit_test_params`` win over River's ``Base`` versions; River contributes what olboost lacks
(``__or__`` / ``__ror__`` to build pipelines, ``_tags``, ``_supervised``, ``mutate``,
``_raw_memory_usage``). Their own methods (``_unit_test_skips``, ``_multiclass``,
``predict_proba_one``) come before River's in the method resolution order: each mixin lists
:class:`_RiverChecks` before the River class.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "RIVER_FEATURE_CHECKS",
    "RIVER_MINI_BATCH_FEATURE_CHECKS",
    "RIVER_INSTALLED",
    "RiverClassifier",
    "RiverMultiLabelClassifier",
]

try:
    from river.base import MiniBatchClassifier as _Classifier
    from river.base import MultiLabelClassifier as _MultiLabelClassifier
except ImportError:  # the core install: River is an optional extra
    RIVER_INSTALLED = False

    class _Classifier:  # type: ignore[no-redef]
        """Stand-in for ``river.base.MiniBatchClassifier`` when River is not installed."""

    class _MultiLabelClassifier:  # type: ignore[no-redef]
        """Stand-in for ``river.base.MultiLabelClassifier`` when River is not installed."""

else:
    RIVER_INSTALLED = True


#: River checks that change the feature set mid-stream: passed when the model learns from
#: missing values (boosters on trees, the default), skipped when it does not (``missing="error"``,
#: :class:`olboost.LabelRanker`).
RIVER_FEATURE_CHECKS = (
    "check_emerging_features",
    "check_disappearing_features",
    "check_radically_disappearing_features",
)
#: River's mini-batch check whose batches drop and add features too (River 0.26; run on the
#: multiclass boosters, which are ``MiniBatchClassifier``\ s).
RIVER_MINI_BATCH_FEATURE_CHECKS = ("check_learn_many_matches_learn_one",)


class _RiverChecks:
    """What ``river.checks.check_estimator`` asks of every olboost learner."""

    def _unit_test_skips(self) -> set[str]:
        # ``river.checks.check_estimator`` skips these. The learners keep the features of their
        # first example; when the model learns from missing values, a key that disappears is
        # missing and a new one is ignored (River's convention), but otherwise (e.g. a committee
        # with ``missing="error"``) an example that lacks a key or brings a new one is
        # rejected, and these three checks drop or add features mid-stream.
        allowed = self._missing_allowed()  # type: ignore[attr-defined]
        return set() if allowed else {*RIVER_FEATURE_CHECKS, *RIVER_MINI_BATCH_FEATURE_CHECKS}


class RiverClassifier(_RiverChecks, _Classifier):
    """Mixin making a multiclass booster a ``river.base.MiniBatchClassifier`` when River is
    installed."""

    @property
    def _multiclass(self) -> bool:
        # River feeds multiclass streams (e.g. its checks' ``ImageSegments``) only to
        # classifiers that say they handle more than two classes.
        return True


class RiverMultiLabelClassifier(_RiverChecks, _MultiLabelClassifier):
    """Mixin making a ranking learner a ``river.base.MultiLabelClassifier`` when River is
    installed: ``learn_one(x, y)`` takes River's ``dict[label, bool]`` targets and
    ``predict_one(x)`` gives one (see :class:`olboost.online.RankingLearner`)."""

    def predict_proba_one(self, x: Any, **kwargs: Any) -> dict:
        """Not available: a ranking learner's scores order the labels but are no probabilities
        (River's evaluation of a multi-label classifier uses :meth:`predict_one`).

        Raises
        ------
        NotImplementedError
            Always; use ``score_one`` for the scores, ``predict_one`` for the label sets.
        """
        raise NotImplementedError(
            f"{type(self).__name__} ranks labels by scores, which are not probabilities: use "
            "score_one(x) for the scores and predict_one(x) for the predicted labels"
        )
