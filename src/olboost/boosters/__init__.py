"""Online boosters: combine a committee of weak learners into a strong online learner."""

from olboost.boosters.ada_olmr import AdaOLMR
from olboost.boosters.base import Booster, MulticlassBooster, RankingBooster
from olboost.boosters.online_bmr import OnlineBMR
from olboost.boosters.online_mbbm import OnlineMBBM

__all__ = ["AdaOLMR", "Booster", "MulticlassBooster", "OnlineBMR", "OnlineMBBM", "RankingBooster"]
