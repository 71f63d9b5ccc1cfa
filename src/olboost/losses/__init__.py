"""Every loss of the boosters, with its derivatives, as compiled kernels; one home for each.

* :mod:`olboost.losses.pairwise`: the pairwise multi-label ranking losses (rank, hinge, hinge
  without margin) of one pair, and the rank loss of a score vector (Jung & Tewari 2018, Sec. 3.1);
* :mod:`olboost.losses.logistic`: the pairwise logistic surrogate and its gradient, the cost
  vector of Ada.OLMR (Jung & Tewari 2018, Sec. 3.2, eq. 8);
* :mod:`olboost.losses.multiclass`: the multiclass surrogates of Adaboost.OLM (logistic,
  exponential, square hinge) and their cost matrices (Jung, Goetz & Tewari 2017, eq. 8-9,
  36-37, 39-40).

Boosters, potentials (:mod:`olboost.potentials`) and metrics (:mod:`olboost.metrics`) all call them.
"""

from olboost.losses.logistic import logistic_cost, logistic_loss
from olboost.losses.multiclass import (
    EXPONENTIAL,
    LOGISTIC,
    SQUARE_HINGE,
    dphi,
    olm_cost_matrix,
    olm_cost_row,
    olm_loss,
    phi,
)
from olboost.losses.pairwise import (
    HINGE,
    HINGE_NO_MARGIN,
    RANK,
    pair_count,
    pair_loss,
    pair_losses,
    rank_loss_mask,
)

__all__ = [
    "EXPONENTIAL",
    "HINGE",
    "HINGE_NO_MARGIN",
    "LOGISTIC",
    "RANK",
    "SQUARE_HINGE",
    "dphi",
    "logistic_cost",
    "logistic_loss",
    "olm_cost_matrix",
    "olm_cost_row",
    "olm_loss",
    "pair_count",
    "pair_loss",
    "pair_losses",
    "phi",
    "rank_loss_mask",
]
