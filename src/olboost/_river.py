"""River compatibility, with River optional.

When River imports, :class:`RiverClassifier` is a ``river.base.Classifier``: a booster that has
it as a base is accepted wherever River wants a classifier (``river.evaluate``, ``river.compose``
pipelines, ``river.checks``, metrics' ``works_with``). When River is not installed it is an empty
class, so the core install needs no River and nothing else changes.

It is meant to come *after* :class:`olboost.base.Estimator` in a class's bases, so that olboost's
``clone``, ``_get_params``, ``__repr__``, ``__str__``, ``_is_stochastic`` and
``_unit_test_params`` win over River's ``Base`` versions; River contributes what olboost lacks
(``__or__`` / ``__ror__`` to build pipelines, ``_tags``, ``_supervised``, ``mutate``,
``_raw_memory_usage``).
"""

from __future__ import annotations

__all__ = ["RIVER_FEATURE_CHECKS", "RIVER_INSTALLED", "RiverClassifier"]

try:
    from river.base import Classifier as _Classifier
except ImportError:  # the core install: River is an optional extra
    RIVER_INSTALLED = False

    class _Classifier:  # type: ignore[no-redef]
        """Stand-in for ``river.base.Classifier`` when River is not installed."""

else:
    RIVER_INSTALLED = True


class RiverClassifier(_Classifier):
    """Mixin making a multiclass booster a ``river.base.Classifier`` when River is installed."""

    @property
    def _multiclass(self) -> bool:
        # River feeds multiclass streams (e.g. its checks' ``ImageSegments``) only to
        # classifiers that say they handle more than two classes.
        return True

    def _unit_test_skips(self) -> set[str]:
        # ``river.checks.check_estimator`` skips these. The boosters keep the features of their
        # first example; when the committee learns from missing values, a key that disappears is
        # missing and a new one is ignored (River's convention), but with ``missing="error"`` an
        # example that lacks a key or brings a new one is rejected, and these three checks drop or
        # add features mid-stream.
        return set() if self._missing_allowed() else set(RIVER_FEATURE_CHECKS)


#: River checks that change the feature set mid-stream: passed when the committee learns from
#: missing values (the default), skipped with ``missing="error"``.
RIVER_FEATURE_CHECKS = (
    "check_emerging_features",
    "check_disappearing_features",
    "check_radically_disappearing_features",
)
