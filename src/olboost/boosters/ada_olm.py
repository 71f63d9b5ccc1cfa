"""Adaboost.OLM: adaptive online multiclass boosting (Jung, Goetz & Tewari, NIPS 2017)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from olboost.base import Interval, OneOf
from olboost.boosters import _ada_olm_kernels as K
from olboost.boosters.adaptive import AdaptiveState
from olboost.boosters.base import MAX_ALPHA, MAX_HEDGE_RATE, BoosterKernels, MulticlassBooster
from olboost.weak.base import Committee

__all__ = ["AdaBoostOLM", "paper_step_and_bound"]

_LOSSES = {"logistic": K.LOGISTIC, "exponential": K.EXPONENTIAL, "square_hinge": K.SQUARE_HINGE}
_VOTES = {"argmax": K.VOTE_ARGMAX, "proba": K.VOTE_PROBA, "expected_cost": K.VOTE_EXPECTED_COST}


def paper_step_and_bound(loss: str, k: int, n_learners: int) -> tuple[float, float]:
    """The paper's step constant ``c`` (``eta_t = c / sqrt(t)``) and feasible half-width of alpha.

    Logistic loss (Sec. 4.2): ``c = 2 sqrt(2) / (k - 1)`` on ``[-2, 2]``. Exponential loss
    (App. D.1): the same ``c`` and set, the step of learner ``i`` being further multiplied by
    ``e^{-i}`` (done in the kernel). Square hinge loss (App. D.2): ``[-c', c']`` with
    ``c' = 1 / sqrt(N)`` and ``c = sqrt(2) c' / (k - 1 + c' N)``.
    """
    if loss == "square_hinge":
        width = 1.0 / math.sqrt(n_learners)
        return math.sqrt(2.0) * width / (k - 1 + width * n_learners), width
    return 2.0 * math.sqrt(2.0) / (k - 1), 2.0


class AdaBoostOLM(AdaptiveState, MulticlassBooster):
    """Adaboost.OLM, the adaptive online multiclass booster (Jung, Goetz & Tewari 2017, Alg. 2).

    At round ``t`` weak learner ``i`` gives a distribution over the ``k`` classes; the booster turns
    it into a weak prediction ``h^i`` (see ``vote``) and builds the experts
    ``s^i = s^{i-1} + alpha^i h^i``, expert ``i`` predicting ``argmax s^i``. The final prediction is
    that of an expert drawn by Hedge. Once the true class ``y`` is revealed:

    * learner ``i`` learns ``y`` with importance weight ``-C^i(y, y) / (k - 1)`` (times the
      committee's per-learner multiplier), ``C^i`` being the cost matrix at ``s^{i-1}``: eq. 9 for
      the logistic loss (the gradient of eq. 8), eq. 37 (exponential) or eq. 40 (square hinge).
      This is the weight of Sec. 4.2's text; Algorithm 2's line 14 prints ``C(y, l^i)`` instead.
      For the logistic loss it lies in ``[0, 1)`` (each of the ``k - 1`` terms of ``-C(y, y)`` is
      under 1); for the exponential and square-hinge losses ``-C(y, y)`` has no such bound and
      the weight exceeds 1 once other classes lead ``y`` by enough (App. D does not say how to
      scale it; the same formula is kept);
    * ``alpha^i`` follows projected online gradient descent on
      ``f(alpha) = L^y(s^{i-1} + alpha h^i)``, whose derivative ``grad L^y(s^i) . h^i`` is eq. 10
      (38, 41) for a one-hot ``h^i``; the step is ``eta_t = step_scale / sqrt(t)`` (times
      ``e^{-i}`` for the exponential loss), the projection on ``[-alpha_bound, alpha_bound]``.
      The printed second case of eq. 10 has the score difference of its exponent swapped
      (``s(j) + alpha - s(y)``); the kernel uses the true derivative
      ``-sum_{j != y} 1 / (1 + exp(s(y) + alpha - s(j)))``;
    * Hedge: ``v^i <- v^i exp(-hedge_rate 1[y != argmax s^i])`` (line 15).

    The empirical edges of Sec. 4.2, ``gamma_i = sum_t C^i(y, l^i) / sum_t C^i(y, y)``, are tracked
    in :attr:`empirical_edges`.

    With a compiled committee (:class:`~olboost.weak.vfdt.VFDTCommittee`), ``learn`` and
    ``predict_then_learn`` run the whole stream in the compiled driver
    (:mod:`olboost.boosters._driver`), with results bit-identical to learning row by row.

    Parameters
    ----------
    committee
        The weak learners (:class:`olboost.weak.base.Committee`), cloned at start. Default:
        ``VFDTCommittee()``.
    learners
        Number ``N`` of weak learners.
    seed
        Seed of every random choice (committee draws, Hedge draws). ``None`` draws a fresh seed,
        kept in ``seed_``.
    classes
        The ``k`` classes: an int ``k`` (classes ``0..k-1``) or a sequence; may be ``None`` when
        learning from arrays.
    loss
        ``"logistic"`` (Sec. 4, the paper's algorithm), ``"exponential"`` (App. D.1) or
        ``"square_hinge"`` (App. D.2). The exponential loss saturates at a vote gap of
        :data:`olboost.losses.multiclass.EXP_SATURATION` (460), where ``e^z`` times a
        committee's weight multiplier would leave float64.
    vote
        How a learner's distribution ``p`` becomes ``h^i``: ``"argmax"`` (Algorithm 2: the one-hot
        of the most probable class, lowest on ties), ``"proba"`` (``p`` itself) or
        ``"expected_cost"`` (the one-hot of ``argmin_l sum_r p[r] C^i(r, l)``, what the authors'
        code did).
    predict_with
        ``"sampled"`` (the paper): the expert is drawn from Hedge's distribution with a random
        number that depends only on the seed and the round, so predicting never changes the model.
        ``"best"``: the expert of largest Hedge weight (lowest index on ties).
    hedge_rate
        Learning rate of Hedge (paper: 1), at most :data:`MAX_HEDGE_RATE` (1e100).
    alpha_bound
        Half-width of the feasible set of ``alpha``. ``None``: the paper's value, 2 (logistic,
        exponential) or ``1 / sqrt(N)`` (square hinge). At most :data:`MAX_ALPHA` (1e100), as is
        ``step_scale``. Kept in ``alpha_bound_``.
    step_scale
        Constant ``c`` of the step ``eta_t = c / sqrt(t)``. ``None``: the paper's value,
        ``2 sqrt(2) / (k - 1)`` (logistic, exponential) or ``sqrt(2) c' / (k - 1 + c' N)`` with
        ``c' = 1 / sqrt(N)`` (square hinge). With the exponential loss the step of learner ``i``
        (1-based) is always multiplied by ``e^{-i}`` as in App. D.1. Kept in ``step_scale_``.

    Examples
    --------
    Ten trees on the UCI *balance* set, prequentially:

    >>> from olboost import VFDTCommittee
    >>> from olboost.boosters.ada_olm import AdaBoostOLM
    >>> from olboost.datasets import load_uci
    >>> from olboost.evaluate import prequential
    >>> data = load_uci("balance")
    >>> model = AdaBoostOLM(VFDTCommittee(), learners=10, seed=1)
    >>> result = prequential(model, data)
    >>> result.n_test
    625
    >>> round(result.accuracy, 4)
    0.7936

    One example at a time, River style:

    >>> x, y = data.X[0], data.class_names[data.y[0]]
    >>> model.learn_one(x, y)
    >>> model.predict_one(x) in data.class_names
    True
    """

    # rates, scales and bounds must be finite: an infinite one turns Hedge's log-weights or the
    # learner weights alpha into inf and then NaN within a few rounds; and the votes add up N
    # alphas, which at alpha_bound = step_scale = 1.7e308 overflowed to inf (NaN probabilities)
    _param_constraints = {
        **MulticlassBooster._param_constraints,
        "loss": OneOf(*_LOSSES),
        "vote": OneOf(*_VOTES),
        "predict_with": OneOf("sampled", "best"),
        "hedge_rate": Interval(0, MAX_HEDGE_RATE, closed="both"),
        "alpha_bound": Interval(0, MAX_ALPHA, closed="right", allow_none=True),
        "step_scale": Interval(0, MAX_ALPHA, closed="right", allow_none=True),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        classes: int | Sequence[Hashable] | None = None,
        loss: str = "logistic",
        vote: str = "argmax",
        predict_with: str = "sampled",
        hedge_rate: float = 1.0,
        alpha_bound: float | None = None,
        step_scale: float | None = None,
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.classes = classes
        self.loss = loss
        self.vote = vote
        self.predict_with = predict_with
        self.hedge_rate = hedge_rate
        self.alpha_bound = alpha_bound
        self.step_scale = step_scale
        self._validate_params()

    # ------------------------------------------------------------------ booster hooks

    def _init_state(self) -> None:
        self._init_olm(n_boosters=None)

    def _init_olm(self, n_boosters: int | None) -> None:
        """Allocate ``alpha_``, ``log_v_`` and the edge sums: ``(N,)`` each for one booster, or
        ``(n_boosters, N)`` for the one-vs-all designs that run several of them."""
        self._derive_from_params()
        self._init_adaptive(n_boosters)

    def _olm_classes(self) -> int:
        """``k`` of the step size and bound (App. D): the classes of the one booster."""
        return len(self._outputs())

    def _derive_from_params(self) -> None:
        step, bound = paper_step_and_bound(self.loss, self._olm_classes(), self._n_learners)
        self.step_scale_ = step if self.step_scale is None else float(self.step_scale)
        self.alpha_bound_ = bound if self.alpha_bound is None else float(self.alpha_bound)

    def _step_kernels(self) -> BoosterKernels:
        return BoosterKernels(K.olm_score, K.olm_step)

    def _step_state(self) -> K.State:
        return K.State(
            self.alpha_,
            self.log_v_,
            self.edge_num_,
            self.edge_den_,
            self._hedge_keys,
            self.predict_with == "sampled",
            _VOTES[self.vote],
            _LOSSES[self.loss],
            self.step_scale_,
            self.alpha_bound_,
            float(self.hedge_rate),
        )

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.vfdt import VFDTCommittee

        yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3, "classes": 3}
        yield {
            "committee": VFDTCommittee(n_features=3),
            "learners": 4,
            "seed": 7,
            "loss": "exponential",
            "vote": "expected_cost",
            "predict_with": "best",
        }
        yield {
            "committee": VFDTCommittee(n_features=3),
            "learners": 4,
            "seed": 7,
            "loss": "square_hinge",
            "vote": "proba",
        }
