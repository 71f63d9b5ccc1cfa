"""Losses and surrogate losses for multi-label ranking, as compiled kernels."""

from olboost.losses.logistic import logistic_cost, logistic_loss

__all__ = ["logistic_cost", "logistic_loss"]
