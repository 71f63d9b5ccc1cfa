"""Online boosting for multi-label ranking with top-k feedback (Raman, Zhang, Jung & Tewari 2020):
:class:`TopkBBM` (Algorithm 2) and :class:`TopkAdaptive` (Algorithm 3).

A top-k booster shows a randomised ranking (:mod:`olboost.feedback.exploration`) and learns only
the relevance of the ``k`` labels it showed. Two ways to use one:

* **Live**: ``impression = model.show_one(x, key)`` gives the ranking to display and the logged
  propensities; once the user has clicked, ``model.learn_one(x, impression.feedback(clicked))``.
  Feedback may come late, in any order, or never.
* **Simulated** (experiments): ``learn_one(x, y)`` with the full relevant set ``y``, or the array
  paths ``learn(X, Y)`` / ``score_then_learn(X, Y)``, play a user who clicks exactly the relevant
  labels among those shown: the booster shows its ranking of the round, then reads ``y`` at the
  shown labels only. ``score_then_learn`` returns the *shown* rankings as scores (``m - p`` at
  display position ``p``), so that a rank loss of them is the loss of what was shown. River's
  ``{label: bool}`` targets are full relevant sets too (``river.datasets.Yeast`` in
  ``river.evaluate.progressive_val_score``).

``predict_one(x)`` (River's multi-label prediction) marks relevant the ``k`` labels the booster
ranks highest by its scores: the ``k`` it shows when it does not explore under the key 0 (a
``show_one`` without a key). Top-k Adaptive with ``predict_with="sampled"`` draws its expert
from the caller's key, so under another key its unexplored top ``k`` may differ; the impression
of each ranking shown holds the scores it came from (``Impression.scores``). It draws nothing,
so it changes no later result.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from olboost._random import STREAMS, stream_rng
from olboost.base import Interval, OneOf
from olboost.boosters import _topk_kernels as K
from olboost.boosters._topk_base import _NO_COSTS, TopkBooster
from olboost.boosters.adaptive import AdaptiveState
from olboost.boosters.base import MAX_ALPHA, MAX_HEDGE_RATE, BoosterKernels
from olboost.feedback import FullFeedback, TopkFeedback
from olboost.feedback.exploration import Exploration
from olboost.losses.pairwise import TOPK_LOSS_CODES
from olboost.potentials import LOSSES, topk_costs
from olboost.potentials.pairwise import difference_law_stack
from olboost.weak.base import Committee

__all__ = ["MAX_HEDGE_RATE", "TopkAdaptive", "TopkBBM", "TopkBooster"]


class TopkBBM(TopkBooster):
    """Top-k BBM, boost-by-majority for multi-label ranking with top-k feedback.

    Raman, Zhang, Jung & Tewari (2020), Algorithm 1 with the details of Algorithm 2. Every weak
    learner has weight ``alpha = 1`` and the booster ranks by the last expert ``s^N = h^1 + ... +
    h^N``, randomised by the exploration (Sec. 2.2 or App. B.1); only the ``k`` labels on top are
    judged. Weak learner ``i`` gets the unbiased cost estimate of eq. 3, ``c^[l] =
    Phi^^{N-i}(s^{i-1} + e_l)``: the surrogate potential ``Phi = sum_{a in R} sum_{b notin R}
    Lambda^{a,b}`` (each pair under its own baseline ``u_a^gamma``, Sec. 3.2.2) estimated from the
    shown pairs by eq. 1. The potentials are computed exactly (:mod:`olboost.potentials`;
    ``method="monte_carlo"`` keeps the random-walk estimate). As in the paper's experiments (App.
    C.2), each revealed relevant label ``l`` is taught to learner ``i`` with importance weight
    ``max_r c^[r] - c^[l]`` (times the committee's per-learner multiplier).

    Parameters
    ----------
    committee
        The weak learners; default ``VFDTCommittee()``.
    learners
        Number ``N`` of weak learners.
    seed
        Seed of every random choice (committee, exploration, Monte Carlo).
    labels
        The ``m`` labels to rank (an int or a sequence), or ``None`` to take them from arrays.
    k
        Number of labels shown, whose relevance is revealed: ``2 <= k <= m`` (``k >= 3`` for
        single swap). Fixed once the model has started (its impressions and their feedback show
        ``k`` labels): clone it for another ``k``.
    exploration
        ``"uniform"`` (Sec. 2.2), ``"single-swap"`` (App. B.1) or an
        :class:`~olboost.feedback.exploration.Exploration` object.
    rho
        Exploration rate when ``exploration`` is a name (default 0.02); ``None`` with an object.
    gamma
        The assumed edge in (0, 1) of the baselines ``u_a^gamma``.
    loss
        Pair loss behind the potentials: ``"hinge"`` (the paper's unweighted hinge), ``"rank"``
        (the paper's ``I(s[a] <= s[b])``, a tie counting as an error) or ``"hinge_no_margin"``.
    method
        ``"exact"`` or ``"monte_carlo"`` (``draws`` random walks per cost vector).
    draws
        Monte Carlo sample size.
    clip_probability
        Clip the pair probabilities ``Pr[a, b in T^k]`` of eq. 1's weights to ``[p, 1 - p]``
        (App. C.2: "we also clipped all computed probabilities to the range [0.005, 0.995]";
        paper: 0.005), so that no shown pair weighs more than ``1 / p``; ``None``: the unbiased
        estimates of eq. 3. The paper states the heuristic beside Top-k Adaptive's; its Top-k
        BBM results are those of the clipped weights: ``olboost reproduce topk --seeds 10`` on
        mediamill-reduced (edge 0.4) gives 0.1125 under uniform exploration and 0.1271 under
        single swap, where it gave 0.1449 and 0.2032 unclipped (the results file of commit
        e79e66e, run before the clipping; published 0.11 and 0.11).

    Examples
    --------
    >>> from olboost import TopkBBM, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> data = load("emotions")
    >>> model = TopkBBM(VFDTCommittee(), learners=10, seed=1, k=3, rho=0.02, gamma=0.1)
    >>> result = train_test(model, data.train, data.test, loops=2)
    >>> 0.0 <= result.rank_loss <= 0.5
    True

    Live, with late feedback: show, log the impression, learn when the clicks arrive.

    >>> x, y = next(iter(data.test))
    >>> impression = model.show_one(x, key=42)
    >>> len(impression.labels), impression.probs.shape
    (3, (3, 3))
    >>> clicked = [label for label in impression.labels if label in y]
    >>> model.learn_one(x, impression.feedback(clicked))
    """

    _param_constraints = {
        **TopkBooster._param_constraints,
        "gamma": Interval(0, 1, closed="neither"),
        "loss": OneOf(*LOSSES),
        "method": OneOf("exact", "monte_carlo"),
        "draws": Interval(1, None, integer=True),
        "clip_probability": Interval(0, 0.5, closed="neither", allow_none=True),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        labels: int | Sequence[Hashable] | None = None,
        k: int = 3,
        exploration: Exploration | str = "uniform",
        rho: float | None = None,
        gamma: float = 0.1,
        loss: str = "hinge",
        method: str = "exact",
        draws: int = 100,
        clip_probability: float | None = 0.005,
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.labels = labels
        self.k = k
        self.exploration = exploration
        self.rho = rho
        self.gamma = gamma
        self.loss = loss
        self.method = method
        self.draws = draws
        self.clip_probability = clip_probability
        self._validate_params()

    def _init_topk(self) -> None:
        self.weight_max_ = np.zeros(self._n_learners)

    def _tables(self) -> np.ndarray:
        tables = self.__dict__.get("_law")
        if tables is None:  # a cache, dropped when pickled
            m = len(self._outputs())
            tables = self._law = np.array(
                difference_law_stack(self._n_learners - 1, 1, m, self.gamma)[1]
            )
        return tables

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_law", None)
        return state

    def _step_kernels(self) -> BoosterKernels | None:
        if self.method != "exact":
            return None
        return BoosterKernels(K.topk_bbm_score, K.topk_bbm_step)

    def _step_state(self) -> K.BBMState:
        scheme, rho = self._scheme()
        return K.BBMState(
            self._tables(), self.weight_max_, self._draw_key, scheme, rho, self.k,
            TOPK_LOSS_CODES[self.loss], self._probability_clip,
        )  # fmt: skip

    def _scores(self, H: np.ndarray) -> np.ndarray:
        out = np.empty(H.shape[1])
        K.topk_bbm_score(H, self.t_ + 1, None, out)
        return out

    def _show_kernel(self) -> Any:
        return K.topk_bbm_show

    def _simulated_update(self, H: np.ndarray, feedback: FullFeedback) -> np.ndarray:
        if self.method == "exact":
            return super()._simulated_update(H, feedback)
        m, k = H.shape[1], self.k
        scores, ranking, probs = np.empty(m), np.empty(m, dtype=np.int64), np.empty((k, k))
        K.topk_bbm_show(H, self.t_, self._step_state(), np.uint64(0), scores, ranking, probs)
        shown = ranking[:k].copy()
        revealed = TopkFeedback(shown, feedback.relevant[shown], probs)
        return self._topk_update(H, revealed, _NO_COSTS)

    def _topk_update(
        self, H: np.ndarray, feedback: TopkFeedback, costs: np.ndarray, dry_run: bool = False
    ) -> np.ndarray:
        weights = np.empty_like(H)
        w_max = self.weight_max_.copy() if dry_run else self.weight_max_
        if self.method == "exact":
            K.topk_bbm_update(
                H, feedback.shown, feedback.relevant, feedback.probs, self._tables(),
                TOPK_LOSS_CODES[self.loss], self._probability_clip, weights, w_max, costs,
            )  # fmt: skip
            return weights
        # a preview (dry_run) comes before learn moves t_: its walks are those of round t_ + 1,
        # the costs the model then learns with
        t = self.t_ + 1 if dry_run else self.t_
        return self._monte_carlo_update(H, feedback, weights, w_max, costs, t)

    def _monte_carlo_update(
        self,
        H: np.ndarray,
        feedback: TopkFeedback,
        weights: np.ndarray,
        w_max: np.ndarray,
        costs: np.ndarray,
        t: int,
    ) -> np.ndarray:
        """Eq. 3 with each ``Lambda^{a,b}`` a Monte Carlo estimate (``draws`` random walks of
        round ``t``'s stream): :func:`olboost.potentials.topk_costs` over all ``m`` labels, pairs
        not shown weighted 0."""
        n, m = H.shape
        weights[:] = 0.0
        costs[:] = 0.0
        shown, rel = feedback.shown, feedback.relevant
        if rel.all() or not rel.any():
            return weights
        relevant = np.zeros(m, dtype=np.bool_)
        relevant[shown[rel]] = True
        pair_w = np.zeros((m, m))
        pair_w[np.ix_(shown, shown)] = K._inverse(feedback.probs, self._probability_clip)
        rng = stream_rng(self.seed_, STREAMS["monte_carlo"], t)
        s = np.zeros(m)
        for i in range(n):
            cost = topk_costs(
                s, relevant, n - 1 - i, self.gamma, self.loss, pair_w, "monte_carlo",
                self.draws, rng,
            )  # fmt: skip
            w_max[i] = max(w_max[i], cost.max() - cost.min())
            weights[i] = np.where(relevant, cost.max() - cost, 0.0)
            if costs.shape[0]:
                costs[i] = cost
            s += H[i]
        return weights

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.vfdt import VFDTCommittee

        yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3, "rho": 0.3}
        yield {"learners": 4, "seed": 7, "loss": "rank", "k": 3, "exploration": "single-swap",
               "rho": 0.2, "clip_probability": None}  # fmt: skip
        yield {"learners": 3, "seed": 2, "k": 2, "method": "monte_carlo", "draws": 20}


class TopkAdaptive(AdaptiveState, TopkBooster):
    """Top-k Adaptive, adaptive online boosting for multi-label ranking with top-k feedback.

    Raman, Zhang, Jung & Tewari (2020), Algorithm 1 with the details of Algorithm 3: Ada.OLMR
    (:class:`olboost.AdaOLMR`) on unbiased estimates. The booster ranks by the expert ``s^i =
    sum_{j <= i} alpha^j h^j`` Hedge draws, randomised by the exploration; only the top ``k`` labels
    are judged. Then, from the shown pairs (eq. 1):

    * weak learner ``i`` gets ``c^i = grad L^_log(s^{i-1})`` (eq. 4), the gradient of the
      estimated unnormalised logistic loss, and learns each revealed relevant label ``l`` with
      weight ``max_r c^i[r] - c^i[l]`` (App. C.2);
    * ``alpha^i <- Pi(alpha^i - eta_t g)``, ``g`` the derivative of ``L^_log(s^{i-1} + alpha
      h^i)``, ``eta_t = 8 rho sqrt(2) / (m^2 sqrt(t))``, ``Pi`` the projection on ``[-2, 2]``
      (line 13);
    * Hedge multiplies ``v^i`` by ``exp(-L^_rnk(s^i))``, the estimated unweighted rank loss
      (line 14);
    * the empirical edges of eq. 5 are tracked in :attr:`empirical_edges` (their weights
      ``w^i[t]`` estimated the same way).

    The paper's two heuristics (App. C.2) are parameters: the gradient ``g`` clipped to ``[-1,
    1]``, and all computed probabilities (the logistic ``sigma`` of the cost vectors and the pair
    probabilities of eq. 1's weights, as :class:`TopkBBM` does) clipped to ``[0.005, 0.995]``.

    Parameters
    ----------
    committee, learners, seed, labels, k, exploration, rho
        As in :class:`TopkBBM`.
    predict_with
        ``"sampled"`` (the paper: Hedge's expert drawn with the round's random numbers) or
        ``"best"`` (the heaviest expert).
    step_scale
        ``eta_t = step_scale / sqrt(t)``; ``None``: the paper's ``8 rho sqrt(2) / m^2``.
    alpha_bound
        Half-width of the feasible set of the weights (paper: 2). At most
        :data:`~olboost.boosters.base.MAX_ALPHA` (1e100), as is ``step_scale``.
    hedge_rate
        Learning rate of Hedge (paper: 1), at most :data:`MAX_HEDGE_RATE` (1e100).
    clip_gradient
        Clip the weights' gradient to ``[-clip_gradient, clip_gradient]`` (paper: 1); ``None``:
        no clipping.
    clip_probability
        Clip the logistic probabilities and the pair probabilities to ``[p, 1 - p]`` (paper:
        0.005); ``None``: no clipping (the unbiased estimates of eq. 4).

    Examples
    --------
    >>> from olboost import TopkAdaptive, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> data = load("emotions")
    >>> model = TopkAdaptive(VFDTCommittee(), learners=10, seed=1, k=3, rho=0.02)
    >>> result = train_test(model, data.train, data.test, loops=2)
    >>> 0.0 <= result.rank_loss <= 0.5
    True
    >>> model.expert_weights.shape
    (10,)
    """

    _param_constraints = {
        **TopkBooster._param_constraints,
        "predict_with": OneOf("sampled", "best"),
        # the scores add up N alphas: at alpha_bound = step_scale = 1e308 they left float64
        "step_scale": Interval(0, MAX_ALPHA, closed="right", allow_none=True),
        "alpha_bound": Interval(0, MAX_ALPHA, closed="right"),
        # An estimated rank loss is at most (k/2)^2 / MIN_PAIR_PROBABILITY (1e100 per pair):
        # times a rate up to 1e100 it stays finite, so Hedge's best expert keeps a finite
        # log-weight. With rate 1e308 every expert's became -inf and the renormalised ones NaN.
        "hedge_rate": Interval(0, MAX_HEDGE_RATE, closed="both"),
        "clip_gradient": Interval(0, math.inf, closed="neither", allow_none=True),
        "clip_probability": Interval(0, 0.5, closed="neither", allow_none=True),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        labels: int | Sequence[Hashable] | None = None,
        k: int = 3,
        exploration: Exploration | str = "uniform",
        rho: float | None = None,
        predict_with: str = "sampled",
        step_scale: float | None = None,
        alpha_bound: float = 2.0,
        hedge_rate: float = 1.0,
        clip_gradient: float | None = 1.0,
        clip_probability: float | None = 0.005,
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.labels = labels
        self.k = k
        self.exploration = exploration
        self.rho = rho
        self.predict_with = predict_with
        self.step_scale = step_scale
        self.alpha_bound = alpha_bound
        self.hedge_rate = hedge_rate
        self.clip_gradient = clip_gradient
        self.clip_probability = clip_probability
        self._validate_params()

    def _init_topk(self) -> None:
        self._init_adaptive()  # Algorithm 3, line 2: alpha^i_1 = 0, v^i_1 = 1

    @property
    def step_scale_(self) -> float:
        """The scale of ``eta_t`` in use (the paper's ``8 rho sqrt(2) / m^2`` by default)."""
        if self.step_scale is not None:
            return float(self.step_scale)
        m = len(self._outputs())
        # float(): a NumPy float32 rho would make the step float32 (and float16 no kernel's type)
        return 8.0 * float(self.explorer_.rho) * math.sqrt(2.0) / (m * m)

    def _step_kernels(self) -> BoosterKernels:
        return BoosterKernels(K.topk_adaptive_score, K.topk_adaptive_step)

    def _step_state(self) -> K.AdaptiveState:
        scheme, rho = self._scheme()
        return K.AdaptiveState(
            self.alpha_, self.log_v_, self.edge_num_, self.edge_den_, self._draw_key,
            self.predict_with == "sampled", scheme, rho, self.k, self.step_scale_,
            float(self.alpha_bound), float(self.hedge_rate), float(self.clip_gradient or 0.0),
            self._probability_clip,
        )  # fmt: skip

    def _show_kernel(self) -> Any:
        return K.topk_adaptive_show

    def _topk_update(
        self, H: np.ndarray, feedback: TopkFeedback, costs: np.ndarray, dry_run: bool = False
    ) -> np.ndarray:
        weights = np.empty_like(H)
        state = self._step_state()
        if dry_run:
            state = state._replace(
                alpha=state.alpha.copy(), log_v=state.log_v.copy(),
                edge_num=state.edge_num.copy(), edge_den=state.edge_den.copy(),
            )  # fmt: skip
        # the round this feedback is learned in: the next one
        t = self.t_ + 1 if dry_run else self.t_
        K.topk_adaptive_update(
            H, feedback.shown, feedback.relevant, feedback.probs, t, state, weights, costs
        )
        return weights

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.vfdt import VFDTCommittee

        yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3, "rho": 0.3}
        yield {"learners": 4, "seed": 7, "predict_with": "best", "exploration": "single-swap",
               "rho": 0.2, "clip_gradient": None, "clip_probability": None}  # fmt: skip
