"""olboost: online boosting for multiclass classification and multi-label ranking.

A booster combines ``N`` online weak learners, driven together as a *committee*, into a strong
online learner, one example at a time. The public API is small:

* boosters: :class:`AdaOLMR` (Jung & Tewari 2018);
* committees of weak learners: :class:`VFDTCommittee` (compiled Hoeffding trees) and
  :class:`RiverCommittee` (any River classifiers);
* :mod:`olboost.datasets`, :mod:`olboost.metrics`, :mod:`olboost.evaluate`.
"""

from olboost import datasets, evaluate, metrics
from olboost._version import __version__
from olboost.boosters import AdaOLMR
from olboost.feedback import FullFeedback
from olboost.weak import RiverCommittee, VFDTCommittee

__all__ = [
    "__version__",
    "AdaOLMR",
    "FullFeedback",
    "RiverCommittee",
    "VFDTCommittee",
    "datasets",
    "evaluate",
    "metrics",
]
