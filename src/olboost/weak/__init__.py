"""Weak learners, driven as committees (see :mod:`olboost.weak.base` for the contract)."""

from olboost.weak.base import Committee, draw_learner_setup
from olboost.weak.river import RiverCommittee
from olboost.weak.vfdt import VFDTCommittee

__all__ = ["Committee", "RiverCommittee", "VFDTCommittee", "draw_learner_setup"]
