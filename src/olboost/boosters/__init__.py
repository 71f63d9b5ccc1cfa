"""Online boosters: combine a committee of weak learners into a strong online learner."""

from olboost.boosters.ada_olmr import AdaOLMR
from olboost.boosters.base import Booster, MulticlassBooster, RankingBooster

__all__ = ["AdaOLMR", "Booster", "MulticlassBooster", "RankingBooster"]
