"""What the adaptive boosters share on the Python side: Hedge over the experts and projected OGD
on the learner weights (their compiled parts are in :mod:`olboost.boosters._adaptive_kernels`).

Ada.OLMR (Jung & Tewari 2018, Algorithm 3) and Adaboost.OLM (Jung, Goetz & Tewari 2017,
Algorithm 2), with its one-vs-all design, keep per weak learner a weight ``alpha^i`` (projected
online gradient descent), a Hedge log-weight ``log v^i`` of expert ``i`` and the sums behind its
empirical edge; Hedge draws its expert of round ``t`` with ``counter_uniform(key, t)``, one key per
booster derived from the model's seed.
"""

from __future__ import annotations

import numpy as np

from olboost import _libm
from olboost._random import STREAMS, seed_key

__all__ = ["AdaptiveState"]


class AdaptiveState:
    """Mixin of the adaptive boosters: their learned state and what it tells."""

    def _init_adaptive(self, n_boosters: int | None = None) -> None:
        """``alpha_``, ``log_v_`` and the edge sums, ``(N,)`` each for one booster or
        ``(n_boosters, N)`` for designs that run several; one Hedge key per booster."""
        n = self._n_learners
        shape = (n,) if n_boosters is None else (n_boosters, n)
        self.alpha_ = np.zeros(shape)  # alpha^i_1 = 0
        self.log_v_ = np.zeros(shape)  # v^i_1 = 1
        self.edge_num_ = np.zeros(shape)
        self.edge_den_ = np.zeros(shape)
        hedge = STREAMS["hedge"]
        extra = range(1, 1 if n_boosters is None else n_boosters)
        self._hedge_keys = np.array(
            [seed_key(self.seed_, hedge)] + [seed_key(self.seed_, hedge, b) for b in extra],
            dtype=np.uint64,
        )

    @property
    def expert_weights(self) -> np.ndarray:
        """Hedge's current distribution over the ``N`` experts (``v^i / sum_j v^j``), per
        booster (Jung, Goetz & Tewari 2017, Algorithm 2, line 10; Jung & Tewari 2018,
        Algorithm 3, line 6)."""
        w = _libm.exp(self.log_v_ - self.log_v_.max(axis=-1, keepdims=True))
        return w / w.sum(axis=-1, keepdims=True)

    @property
    def empirical_edges(self) -> np.ndarray:
        """Empirical edge of each weak learner so far (Jung & Tewari 2018, eq. 10; Jung, Goetz &
        Tewari 2017, Sec. 4.2); NaN while its denominator is 0."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.edge_num_ / self.edge_den_
