"""Weak learners, driven as committees (see :mod:`olboost.weak.base` for the contract)."""

from olboost.weak.base import Committee, draw_learner_setup
from olboost.weak.linear import LinearCommittee
from olboost.weak.mixed import MixedCommittee
from olboost.weak.river import RiverCommittee
from olboost.weak.vfdt import VFDTCommittee

__all__ = [
    "Committee",
    "LinearCommittee",
    "MixedCommittee",
    "RiverCommittee",
    "VFDTCommittee",
    "draw_learner_setup",
]
