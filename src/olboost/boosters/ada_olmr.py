"""Ada.OLMR: adaptive online boosting for multi-label ranking (Jung & Tewari, AISTATS 2018)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from olboost.base import Interval, OneOf
from olboost.boosters import _ada_olmr_kernels as K
from olboost.boosters.adaptive import AdaptiveState
from olboost.boosters.base import MAX_ALPHA, MAX_HEDGE_RATE, BoosterKernels, RankingBooster
from olboost.weak.base import Committee

__all__ = ["AdaOLMR"]


class AdaOLMR(AdaptiveState, RankingBooster):
    """Ada.OLMR, the adaptive online boosting algorithm for multi-label ranking.

    Jung & Tewari (2018), "Online Boosting Algorithms for Multi-label Ranking", Algorithm 1 with the
    details of Algorithm 3. At round ``t`` the committee's ``N`` weak predictions ``h^i`` are
    combined into the experts ``s^i = sum_{j <= i} alpha^j h^j``; the final scores are those of an
    expert drawn by Hedge. After ``Y_t`` is revealed:

    * weak learner ``i`` gets the cost vector ``c^i = grad L_log^Y(s^{i-1})`` of the pairwise
      logistic loss (eq. 8) and, as in the paper's experiments (Sec. 4), learns each relevant label
      ``l`` with importance weight ``max_r c^i[r] - c^i[l]`` (times the committee's per-learner
      multiplier);
    * ``alpha^i`` follows projected online gradient descent, ``alpha <- Pi(alpha - eta_t c^{i+1}
      . h^i)``, ``eta_t = step_scale / sqrt(t)``, ``Pi`` the projection on
      ``[-alpha_bound, alpha_bound]`` (Algorithm 3, line 9);
    * the Hedge weight of expert ``i`` is multiplied by ``exp(-hedge_rate L_rnk^Y(s^i))``
      (Algorithm 3, line 13).

    The empirical edges of eq. 10 are tracked in :attr:`empirical_edges`.

    Parameters
    ----------
    committee
        The weak learners (:class:`olboost.weak.base.Committee`); cloned at start. Default:
        ``VFDTCommittee()``, 20 random features per tree, as in the paper.
    learners
        Number ``N`` of weak learners.
    seed
        Seed of every random choice (feature subsets, tree hyperparameters, Hedge draws). Same seed
        and data give the same scores bit for bit; ``None`` draws a fresh seed (kept in ``seed_``).
    labels
        The ``k`` labels to rank: an int ``k`` (labels ``0..k-1``) or a sequence of labels. May be
        left ``None`` when learning from arrays, whose columns then name the labels ``0..k-1``.
    predict_with
        ``"sampled"`` (the paper): the expert is drawn from Hedge's distribution, with a random
        number that depends only on the seed and the round, so scoring never changes the model.
        ``"best"``: the expert of largest Hedge weight, a deterministic variant.
    step_scale
        Scale of the gradient step ``step_scale / sqrt(t)`` (paper: 1).
    alpha_bound
        Half-width of the feasible set ``[-alpha_bound, alpha_bound]`` of the weights (paper: 2).
        At most :data:`~olboost.boosters.base.MAX_ALPHA` (1e100), as is ``step_scale``.
    hedge_rate
        Learning rate of Hedge over experts (paper: 1), at most
        :data:`~olboost.boosters.base.MAX_HEDGE_RATE` (1e100).

    Examples
    --------
    Ten trees on the bundled *emotions* set, with the paper's train/test protocol:

    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> data = load("emotions")
    >>> model = AdaOLMR(VFDTCommittee(), learners=10, seed=1)
    >>> result = train_test(model, data.train, data.test)
    >>> result.n_train, result.n_test
    (391, 202)
    >>> round(result.rank_loss, 4)
    0.2207
    >>> model.rank_one(data.test.X[0])[:3]
    ['relaxing-calm', 'quiet-still', 'sad-lonely']

    One example at a time, River style (``y`` is the set of relevant labels):

    >>> x, y = next(iter(data.test))
    >>> model.learn_one(x, y)
    >>> sorted(model.score_one(x)) == sorted(data.label_names)
    True
    """

    # rates, scales and bounds must be finite: an infinite one turns Hedge's log-weights or the
    # learner weights alpha into inf and then NaN within a few rounds; and the scores add up N
    # alphas, which at alpha_bound = step_scale = 1e308 overflowed to -inf within three rounds
    _param_constraints = {
        **RankingBooster._param_constraints,
        "predict_with": OneOf("sampled", "best"),
        "step_scale": Interval(0, MAX_ALPHA, closed="right"),
        "alpha_bound": Interval(0, MAX_ALPHA, closed="right"),
        "hedge_rate": Interval(0, MAX_HEDGE_RATE, closed="both"),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        labels: int | Sequence[Hashable] | None = None,
        predict_with: str = "sampled",
        step_scale: float = 1.0,
        alpha_bound: float = 2.0,
        hedge_rate: float = 1.0,
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.labels = labels
        self.predict_with = predict_with
        self.step_scale = step_scale
        self.alpha_bound = alpha_bound
        self.hedge_rate = hedge_rate
        self._validate_params()

    def _init_state(self) -> None:
        self._init_adaptive()  # Algorithm 3, line 1: alpha^i_1 = 0, v^i_1 = 1

    def _step_kernels(self) -> BoosterKernels:
        if len(self._outputs()) >= K.COMPACT_FROM_LABELS:
            return BoosterKernels(K.ada_olmr_score, K.ada_olmr_step_grouped)
        return BoosterKernels(K.ada_olmr_score, K.ada_olmr_step)

    def _step_state(self) -> K.State:
        return K.State(
            self.alpha_,
            self.log_v_,
            self.edge_num_,
            self.edge_den_,
            self._hedge_keys[0],
            self.predict_with == "sampled",
            float(self.step_scale),
            float(self.alpha_bound),
            float(self.hedge_rate),
        )

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.vfdt import VFDTCommittee

        yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3}
        yield {"learners": 4, "seed": 7, "predict_with": "best"}
        # a missing value refused: the bad-input checks then give a NaN, before any change
        yield {"committee": VFDTCommittee(missing="error"), "learners": 3, "seed": 2}
