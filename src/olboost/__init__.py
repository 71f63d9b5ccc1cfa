"""olboost: online boosting for multiclass classification and multi-label ranking.

A booster combines ``N`` online weak learners, driven together as a *committee*, into a strong
online learner, one example at a time. The public API is small:

* boosters for multi-label ranking: :class:`AdaOLMR` and :class:`OnlineBMR` (Jung & Tewari 2018);
  for multiclass classification: :class:`OnlineMBBM` and :class:`AdaBoostOLM` (Jung, Goetz &
  Tewari 2017), with that paper's baselines in :mod:`olboost.boosters`; for multi-label ranking
  with top-k feedback: :class:`TopkBBM` and :class:`TopkAdaptive` (Raman, Zhang, Jung & Tewari
  2020), with :mod:`olboost.feedback` (impressions, feedback, exploration);
* committees of weak learners: :class:`VFDTCommittee` (compiled Hoeffding trees),
  :class:`LinearCommittee` (compiled linear label rankers), :class:`MixedCommittee` (committees
  side by side, e.g. trees and rankers) and :class:`RiverCommittee` (any River classifiers);
* linear online label rankers: :class:`LabelRanker` (Updates I, II and III of Shalev-Shwartz &
  Singer 2007, squared norm or entropy), in :mod:`olboost.rankers`;
* :mod:`olboost.potentials` (exact boost-by-majority potentials), :mod:`olboost.datasets`,
  :mod:`olboost.metrics`, :mod:`olboost.evaluate`;
* :func:`save` and :func:`load`: a model to a file and back, with the format and olboost versions
  and a digest (:mod:`olboost.checkpoint`; loading unpickles: load only files you trust).
"""

# Installed before any kernel module is imported: Numba takes a kernel's cache stamp when the
# module defines it (at decoration), not when it compiles, so a module imported first would keep
# Numba's own stamp (its file alone) and a caller could load stale callees from the cache.
from olboost import _numba_cache

_numba_cache.install()

from olboost import datasets, evaluate, metrics, potentials, rankers  # noqa: E402
from olboost._version import __version__  # noqa: E402
from olboost.boosters import (  # noqa: E402
    AdaBoostOLM,
    AdaOLMR,
    OnlineBMR,
    OnlineMBBM,
    TopkAdaptive,
    TopkBBM,
)
from olboost.checkpoint import load, save  # noqa: E402
from olboost.feedback import FullFeedback, Impression, TopkFeedback  # noqa: E402
from olboost.rankers import LabelRanker  # noqa: E402
from olboost.weak import LinearCommittee, MixedCommittee, RiverCommittee, VFDTCommittee  # noqa: E402

__all__ = [
    "__version__",
    "AdaBoostOLM",
    "AdaOLMR",
    "FullFeedback",
    "Impression",
    "LabelRanker",
    "LinearCommittee",
    "MixedCommittee",
    "OnlineBMR",
    "OnlineMBBM",
    "RiverCommittee",
    "TopkAdaptive",
    "TopkBBM",
    "TopkFeedback",
    "VFDTCommittee",
    "datasets",
    "evaluate",
    "load",
    "metrics",
    "potentials",
    "rankers",
    "save",
]
