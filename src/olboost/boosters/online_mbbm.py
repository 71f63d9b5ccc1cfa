"""OnlineMBBM: optimal online multiclass boosting (Jung, Goetz & Tewari, NeurIPS 2017)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from olboost.base import Interval, OneOf
from olboost.boosters.base import MulticlassBooster
from olboost.potentials import mbbm_weight_bound, multiclass_costs, normalize_multiclass_costs
from olboost.weak.base import Committee

__all__ = ["OnlineMBBM"]

#: Stream key of the Monte Carlo draws (see ``olboost.boosters.base``).
_MONTE_CARLO_STREAM = 3


class OnlineMBBM(MulticlassBooster):
    """OnlineMBBM, online multiclass boost-by-majority under the 0-1 loss.

    Jung, Goetz & Tewari (2017), "Online Multiclass Boosting", Algorithm 1. Each weak learner
    votes for one class, ``l^i = argmax`` of its committee row (lowest class on ties), with weight
    1: ``s^i = s^{i-1} + e_{l^i}``, and the booster predicts ``argmax s^N``. After the true class
    ``y`` is revealed, learner ``i`` is taught ``(x, y)`` with importance weight
    ``w^i(t) / w^{i*}`` (times the committee's multiplier), where
    ``w^i(t) = sum_l [phi^y_{N-i}(s^{i-1} + e_l) - phi^y_{N-i}(s^{i-1} + e_y)]`` (line 11) is built
    from the cost row of eq. 4, and ``phi`` is the 0-1 loss potential of eq. 16: the probability
    that ``y`` does not win the vote after ``N - i`` more draws from the baseline ``u_gamma^y``.
    Potentials are computed **exactly** (:func:`olboost.potentials.multiclass_costs`, memoised on
    the vote state); ``method="monte_carlo"`` keeps the authors' estimate.

    Parameters
    ----------
    committee
        The weak learners; default ``VFDTCommittee()``.
    learners
        Number ``N`` of weak learners.
    seed
        Seed of the committee's randomness (and of the Monte Carlo draws).
    classes
        The classes (an int ``k`` or a sequence), or ``None`` to take them from arrays.
    gamma
        The assumed edge in (0, 1).
    weight_bound
        Estimate of ``w^{i*}`` (line 1): ``"lemma10"`` (Lemma 10 of the paper, capped by ``k``;
        it requires ``gamma < 1/2`` and falls back to ``k`` otherwise) or ``"trivial"`` (``k``).
    method
        ``"exact"`` or ``"monte_carlo"`` (``draws`` samples per potential).
    draws
        Monte Carlo sample size.

    Examples
    --------
    >>> import numpy as np
    >>> from olboost import OnlineMBBM, VFDTCommittee
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = np.argmax(X[:, :3], axis=1)
    >>> model = OnlineMBBM(VFDTCommittee(n_features=2), learners=10, seed=1, gamma=0.1)
    >>> votes = model.predict_then_learn(X, y)
    >>> round(float(np.mean(np.argmax(votes[150:], axis=1) == y[150:])), 2)
    0.8...
    """

    _param_constraints = {
        **MulticlassBooster._param_constraints,
        "gamma": Interval(0, 1, closed="neither"),
        "weight_bound": OneOf("lemma10", "trivial"),
        "method": OneOf("exact", "monte_carlo"),
        "draws": Interval(1, None, integer=True),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        classes: int | Sequence[Hashable] | None = None,
        gamma: float = 0.1,
        weight_bound: str = "lemma10",
        method: str = "exact",
        draws: int = 100,
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.classes = classes
        self.gamma = gamma
        self.weight_bound = weight_bound
        self.method = method
        self.draws = draws
        self._validate_params()

    def _init_state(self) -> None:
        n, k = self.learners, len(self._outputs())
        if self.weight_bound == "trivial":
            self.w_star_ = np.full(n, float(k))
        else:
            self.w_star_ = np.array(
                [mbbm_weight_bound(i, n, k, self.gamma) for i in range(1, n + 1)]
            )
        self.weight_max_ = np.zeros(n)

    @staticmethod
    def _votes(H: np.ndarray) -> np.ndarray:
        return np.argmax(H, axis=1)

    def _scores(self, H: np.ndarray) -> np.ndarray:
        return np.bincount(self._votes(H), minlength=H.shape[1]).astype(np.float64)

    def _update(self, H: np.ndarray, y: int) -> np.ndarray:
        n, k = H.shape
        votes = self._votes(H)
        weights = np.zeros_like(H)
        s = np.zeros(k, dtype=np.int64)
        rng = (
            np.random.default_rng([self.seed_, _MONTE_CARLO_STREAM, self.t_])
            if self.method == "monte_carlo"
            else None
        )
        for i in range(n):
            c = multiclass_costs(s, y, n - 1 - i, self.gamma, self.method, self.draws, rng)
            w = normalize_multiclass_costs(c, y)[1]  # Algorithm 1, line 11
            self.weight_max_[i] = max(self.weight_max_[i], w)
            weights[i, y] = w / self.w_star_[i]  # line 12
            s[votes[i]] += 1
        return weights

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.vfdt import VFDTCommittee

        yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3}
        yield {"learners": 4, "seed": 7, "gamma": 0.3, "weight_bound": "trivial"}
