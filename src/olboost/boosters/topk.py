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
ranks highest by its scores: the ``k`` it shows when it does not explore. It draws nothing, so it
changes no later result.
"""

from __future__ import annotations

import math
import numbers
import uuid
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from olboost._random import STREAMS, seed_key, stream_rng
from olboost.base import InstanceOf, Interval, OneOf
from olboost.boosters import _topk_kernels as K
from olboost.boosters.adaptive import AdaptiveState
from olboost.boosters.base import BoosterKernels, RankingBooster
from olboost.feedback import Feedback, FullFeedback, Impression, TopkFeedback
from olboost.feedback.exploration import Exploration, exploration_from
from olboost.losses.pairwise import HINGE, HINGE_NO_MARGIN, RANK
from olboost.potentials import LOSSES, topk_costs
from olboost.potentials.pairwise import difference_law_stack
from olboost.weak.base import Committee

__all__ = ["TopkAdaptive", "TopkBBM", "TopkBooster"]

_LOSS_CODES = {"rank": RANK, "hinge": HINGE, "hinge_no_margin": HINGE_NO_MARGIN}
_MAX_KEY = 2**64 - 1
_NO_COSTS = np.empty((0, 0))


class TopkBooster(RankingBooster):
    """Base class of the top-k feedback boosters: showing, impressions and feedback checks.

    Subclasses define ``_show_kernel`` (the compiled show of :mod:`._topk_kernels`) and
    ``_topk_update(H, feedback)``.
    """

    _param_constraints = {
        **RankingBooster._param_constraints,
        "k": Interval(1, None, integer=True),
        "exploration": InstanceOf((Exploration, str)),
        "rho": Interval(0, 1, closed="neither", allow_none=True),
    }
    _feedback_types = (FullFeedback, TopkFeedback)

    def _validate_params(self) -> None:
        super()._validate_params()
        explore = exploration_from(self.exploration, self.rho)  # a scheme's own rho range
        if self.k < explore.min_k:
            raise ValueError(
                f"{type(self).__name__}: k must be at least {explore.min_k} with "
                f"{type(explore).__name__}, got {self.k}"
                + (" (Lemma 5: pairs must be shown together)" if self.k < 2 else " (App. B.1)")
            )
        labels = self.__dict__.get("labels_", self.labels)
        if labels is not None:
            # the number of labels, without listing range(labels) for an int
            m = int(labels) if isinstance(labels, numbers.Integral) else len(labels)
            explore.check_k(m, self.k)

    @property
    def explorer_(self) -> Exploration:
        """The exploration scheme in use."""
        return exploration_from(self.exploration, self.rho)

    @property
    def _probability_clip(self) -> float:
        """``clip_probability`` as the kernels take it: 0 for none (App. C.2's heuristic off)."""
        return float(self.clip_probability or 0.0)

    def _init_model(self) -> None:
        m = len(self._outputs())
        if not 2 <= self.k <= m:
            raise ValueError(f"{type(self).__name__}: k={self.k} must be in [2, m={m}] labels")
        super()._init_model()

    def _init_state(self) -> None:
        self.model_id_ = uuid.uuid4().hex
        self._draw_key = seed_key(self.seed_, STREAMS["exploration"])
        self._init_topk()

    def _init_topk(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ showing

    def show_one(self, x: Mapping | Sequence | np.ndarray, key: int | None = None) -> Impression:
        """Show a ranking for ``x``: the randomised ranking of the coming round (the model has
        learned ``t_`` examples) under the caller key ``key`` (an int in [0, 2^64); ``None`` is
        0), with its top ``k`` and their exact pair inclusion probabilities. A pure function of
        the model, ``x``, the seed, the round and ``key``: showing does not change the model
        (except that the very first call starts it, as a first ``learn_one`` would: it fixes the
        features and the seed)."""
        extra = self._check_key(key)
        xv, names = self._check_x(x)
        if not self._started:
            self._start(xv.shape[0], names, first=xv)
        ranking, probs, explored = self._show(xv, extra)
        labels = self._outputs()
        order = tuple(labels[i] for i in ranking)
        return Impression(
            ranking=order,
            labels=order[: self.k],
            shown=ranking[: self.k].copy(),
            probs=probs,
            round=self.t_ + 1,
            key=extra,
            explored=explored,
            source=self.model_id_,
        )

    def _show(self, xv: np.ndarray, key: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """The randomised ranking of round ``t_ + 1`` under ``key`` (label indices), the shown
        labels' pair probabilities and whether the draw explored."""
        m, k = len(self._outputs()), self.k
        scores = np.empty(m)
        ranking = np.empty(m, dtype=np.int64)
        probs = np.empty((k, k))
        explored = self._show_kernel()(
            self._predictions(xv), self.t_ + 1, self._step_state(), np.uint64(key),
            scores, ranking, probs,
        )  # fmt: skip
        return ranking, probs, bool(explored)

    def _stream_scores(self, xv: np.ndarray) -> np.ndarray:
        # the simulated user of the array paths sees the draw without a key, as the driver's step
        ranking, _, _ = self._show(xv, 0)
        out = np.empty(ranking.shape[0])
        K._display_scores(ranking, out)
        return out

    def rank_one(
        self, x: Mapping | Sequence | np.ndarray, key: int | None = None
    ) -> list[Hashable]:
        """The randomised ranking :meth:`show_one` would show (does not change the model; before
        the first example, the labels in their order)."""
        if not self._started:
            self._check_key(key)
            self._check_x(x)
            return list(self._outputs())
        return list(self.show_one(x, key).ranking)

    def learn_one(self, x: Mapping | Sequence | np.ndarray, y: Any) -> None:
        """Learn from one example: ``y`` is the :class:`~olboost.feedback.TopkFeedback` of an
        impression (``impression.feedback(clicked)``; the live path), or the full set of relevant
        labels, as a set or as River's ``{label: bool}`` (a simulated user who clicks the
        relevant labels among those the model shows in this round, with the draw of
        :meth:`show_one` without a key)."""
        if isinstance(y, Impression):
            raise TypeError(
                f"{type(self).__name__}.learn_one takes the feedback of an impression, not the "
                "impression: pass impression.feedback(clicked)"
            )
        super().learn_one(x, y)

    def _n_predicted(self, k: int) -> int:
        """``predict_one`` marks the booster's top ``k`` (the parameter) relevant: the labels it
        shows when it does not explore. The label cardinality other ranking learners cut at is
        hidden from a top-k booster, which learns only the relevance of the labels it shows."""
        return self.k

    def _count_targets(self, Y: np.ndarray) -> None:
        # Nothing is counted: the relevance of the labels not shown must not change the model
        # (nor what a live loop of impressions learns differ from a simulated one).
        return

    @staticmethod
    def _check_key(key: Any) -> int:
        if key is None:
            return 0
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TypeError(f"key must be an int, got {type(key).__name__}")
        if not 0 <= int(key) <= _MAX_KEY:
            raise ValueError(f"key must be in [0, 2^64), got {key}")
        return int(key)

    # ------------------------------------------------------------------ learning

    def _check_feedback(self, feedback: Feedback) -> None:
        super()._check_feedback(feedback)
        if not isinstance(feedback, TopkFeedback):
            return
        name = type(self).__name__
        m = len(self._outputs())
        if feedback.shown.shape[0] != self.k:
            raise ValueError(
                f"{name}: the feedback shows {feedback.shown.shape[0]} labels, the model shows "
                f"k={self.k}"
            )
        if feedback.shown.min() < 0 or feedback.shown.max() >= m:
            raise ValueError(
                f"{name}: the feedback names a label index outside the label set 0..{m - 1}: "
                f"{feedback.shown.tolist()}"
            )
        if feedback.source is not None and feedback.source != self.__dict__.get("model_id_"):
            raise ValueError(
                f"{name}: the feedback answers an impression of another model "
                f"(source {feedback.source!r}, this model "
                f"{self.__dict__.get('model_id_', 'not started')!r})"
            )

    def estimated_costs(
        self, x: Mapping | Sequence | np.ndarray, feedback: TopkFeedback
    ) -> np.ndarray:
        """The ``(N, m)`` cost vectors ``c^i`` the weak learners would get from ``feedback`` if
        the model learned ``x`` now (eq. 3 or eq. 4); does not change the model. Their
        expectation over the draw that showed the labels is the full-information cost."""
        if not isinstance(feedback, TopkFeedback):
            raise TypeError(f"feedback must be a TopkFeedback, got {type(feedback).__name__}")
        xv, _ = self._check_x(x)
        self._check_feedback(feedback)
        if not self._started:
            raise ValueError(f"{type(self).__name__}: learn one example first")
        H = self._predictions(xv)
        costs = np.empty_like(H)
        self._topk_update(H, feedback, costs, dry_run=True)
        return costs

    def _update(self, H: np.ndarray, feedback: Any) -> np.ndarray:
        if isinstance(feedback, TopkFeedback):
            return self._topk_update(H, feedback, _NO_COSTS)
        return self._simulated_update(H, feedback)

    def _simulated_update(self, H: np.ndarray, feedback: FullFeedback) -> np.ndarray:
        """A simulated user who clicks the relevant labels among those shown: the compiled step,
        as the driver runs it."""
        return super()._update(H, feedback)

    def _show_kernel(self) -> Any:
        raise NotImplementedError

    def _topk_update(
        self, H: np.ndarray, feedback: TopkFeedback, costs: np.ndarray, dry_run: bool = False
    ) -> np.ndarray:
        """Learn from ``feedback`` (on copies of the learned state when ``dry_run``); return the
        committee's label weights, the cost vectors going to ``costs`` when it has rows."""
        raise NotImplementedError

    def _scheme(self) -> tuple[int, float]:
        explore = self.explorer_
        return explore._scheme, float(explore.rho)


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
        Number of labels shown, whose relevance is revealed: ``2 <= k <= m`` (``3`` for single
        swap).
    exploration
        ``"uniform"`` (Sec. 2.2), ``"single-swap"`` (App. B.1) or an
        :class:`~olboost.feedback.exploration.Exploration` object.
    rho
        Exploration rate when ``exploration`` is a name (default 0.02); ``None`` with an object.
    gamma
        The assumed edge in (0, 1) of the baselines ``u_a^gamma``.
    loss
        Pair loss behind the potentials: ``"hinge"`` (the paper's unweighted hinge), ``"rank"``
        or ``"hinge_no_margin"``.
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
        mediamill-reduced (edge 0.4) gives 0.1125 under uniform exploration and 0.1302 under
        single swap, where it gave 0.1449 and 0.2032 unclipped (commit 059f40b; published 0.11
        and 0.11).

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
        self.weight_max_ = np.zeros(self.learners)

    def _tables(self) -> np.ndarray:
        tables = self.__dict__.get("_law")
        if tables is None:  # a cache, dropped when pickled
            m = len(self._outputs())
            tables = self._law = np.array(
                difference_law_stack(self.learners - 1, 1, m, self.gamma)[1]
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
            _LOSS_CODES[self.loss], self._probability_clip,
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
                _LOSS_CODES[self.loss], self._probability_clip, weights, w_max, costs,
            )  # fmt: skip
            return weights
        return self._monte_carlo_update(H, feedback, weights, w_max, costs)

    def _monte_carlo_update(
        self,
        H: np.ndarray,
        feedback: TopkFeedback,
        weights: np.ndarray,
        w_max: np.ndarray,
        costs: np.ndarray,
    ) -> np.ndarray:
        """Eq. 3 with each ``Lambda^{a,b}`` a Monte Carlo estimate (``draws`` random walks):
        :func:`olboost.potentials.topk_costs` over all ``m`` labels, pairs not shown weighted 0."""
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
        rng = stream_rng(self.seed_, STREAMS["monte_carlo"], self.t_)
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
        Half-width of the feasible set of the weights (paper: 2).
    hedge_rate
        Learning rate of Hedge (paper: 1).
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
        "step_scale": Interval(0, math.inf, closed="neither", allow_none=True),
        "alpha_bound": Interval(0, math.inf, closed="neither"),
        "hedge_rate": Interval(0, math.inf, closed="left"),
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
        return 8.0 * self.explorer_.rho * math.sqrt(2.0) / (m * m)

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
