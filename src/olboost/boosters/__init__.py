"""Online boosters: combine a committee of weak learners into a strong online learner.

Multi-label ranking: :class:`AdaOLMR`, :class:`OnlineBMR` (Jung & Tewari 2018). Multiclass:
:class:`OnlineMBBM`, :class:`AdaBoostOLM` (Jung, Goetz & Tewari 2017) and the baselines of that
paper's experiments, :class:`BestTree`, :class:`OzaBoost`, :class:`OvaAdaBoostOL`, :class:`AdaOVA`.
Multi-label ranking with top-k feedback: :class:`TopkBBM`, :class:`TopkAdaptive` (Raman, Zhang, Jung
& Tewari 2020).
"""

from olboost.boosters.ada_olm import AdaBoostOLM
from olboost.boosters.ada_olmr import AdaOLMR
from olboost.boosters.base import Booster, MulticlassBooster, RankingBooster
from olboost.boosters.baselines import AdaOVA, BestTree, OvaAdaBoostOL, OzaBoost
from olboost.boosters.online_bmr import OnlineBMR
from olboost.boosters.online_mbbm import OnlineMBBM
from olboost.boosters.topk import TopkAdaptive, TopkBBM

__all__ = [
    "AdaBoostOLM",
    "AdaOLMR",
    "AdaOVA",
    "BestTree",
    "Booster",
    "MulticlassBooster",
    "OnlineBMR",
    "OnlineMBBM",
    "OvaAdaBoostOL",
    "OzaBoost",
    "RankingBooster",
    "TopkAdaptive",
    "TopkBBM",
]
