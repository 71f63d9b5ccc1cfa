"""Adaboost.OLM: adaptive online multiclass boosting (Jung, Goetz & Tewari, NIPS 2017)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from olboost._random import counter_uniform, seed_key
from olboost.base import Interval, OneOf
from olboost.boosters import _ada_olm_kernels as K
from olboost.boosters import _stream_kernels as _SK
from olboost.boosters._ada_olmr_kernels import choose_expert
from olboost.boosters.base import _HEDGE_STREAM, MulticlassBooster
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


class AdaBoostOLM(MulticlassBooster):
    """Adaboost.OLM, the adaptive online multiclass booster (Jung, Goetz & Tewari 2017, Alg. 2).

    At round ``t`` weak learner ``i`` gives a distribution over the ``k`` classes; the booster turns
    it into a weak prediction ``h^i`` (see ``vote``) and builds the experts
    ``s^i = s^{i-1} + alpha^i h^i``, expert ``i`` predicting ``argmax s^i``. The final prediction is
    that of an expert drawn by Hedge. Once the true class ``y`` is revealed:

    * learner ``i`` learns ``y`` with importance weight ``-C^i(y, y) / (k - 1)`` (times the
      committee's per-learner multiplier), ``C^i`` being the cost matrix at ``s^{i-1}``: eq. 9 for
      the logistic loss (the gradient of eq. 8), eq. 37 (exponential) or eq. 40 (square hinge).
      This is the weight of Sec. 4.2's text; Algorithm 2's line 14 prints ``C(y, l^i)`` instead;
    * ``alpha^i`` follows projected online gradient descent on
      ``f(alpha) = L^y(s^{i-1} + alpha h^i)``, whose derivative ``grad L^y(s^i) . h^i`` is eq. 10
      (38, 41) for a one-hot ``h^i``; the step is ``eta_t = step_scale / sqrt(t)`` (times
      ``e^{-i}`` for the exponential loss), the projection on ``[-alpha_bound, alpha_bound]``.
      The printed second case of eq. 10 has the sign of its exponent flipped; the kernel uses the
      true derivative ``-sum_{j != y} 1 / (1 + exp(s(y) + alpha - s(j)))``;
    * Hedge: ``v^i <- v^i exp(-hedge_rate 1[y != argmax s^i])`` (line 15).

    The empirical edges of Sec. 4.2, ``gamma_i = sum_t C^i(y, l^i) / sum_t C^i(y, y)``, are tracked
    in :attr:`empirical_edges`.

    With a :class:`~olboost.weak.vfdt.VFDTCommittee`, ``learn`` and ``predict_then_learn`` on
    dense arrays run the whole stream in one compiled loop
    (:func:`olboost.boosters._stream_kernels.olm_vfdt_stream`), with results bit-identical to
    learning row by row.

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
        ``"square_hinge"`` (App. D.2).
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
        Learning rate of Hedge (paper: 1).
    alpha_bound
        Half-width of the feasible set of ``alpha``. ``None``: the paper's value, 2 (logistic,
        exponential) or ``1 / sqrt(N)`` (square hinge). Kept in ``alpha_bound_``.
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

    _param_constraints = {
        **MulticlassBooster._param_constraints,
        "loss": OneOf(*_LOSSES),
        "vote": OneOf(*_VOTES),
        "predict_with": OneOf("sampled", "best"),
        "hedge_rate": Interval(0, None, closed="left"),
        "alpha_bound": Interval(0, None, closed="neither", allow_none=True),
        "step_scale": Interval(0, None, closed="neither", allow_none=True),
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

    def _init_olm(self, n_boosters: int | None, k: int | None = None) -> None:
        """Allocate ``alpha_``, ``log_v_`` and the edge sums: ``(N,)`` each for one booster, or
        ``(n_boosters, N)`` for the one-vs-all designs that run several of them."""
        k = len(self._outputs()) if k is None else k
        n = self.learners
        step, bound = paper_step_and_bound(self.loss, k, n)
        self.step_scale_ = step if self.step_scale is None else float(self.step_scale)
        self.alpha_bound_ = bound if self.alpha_bound is None else float(self.alpha_bound)
        shape = (n,) if n_boosters is None else (n_boosters, n)
        self.alpha_ = np.zeros(shape)  # Algorithm 2, line 1: alpha^i_1 = 0
        self.log_v_ = np.zeros(shape)  # v^i_1 = 1
        self.edge_num_ = np.zeros(shape)
        self.edge_den_ = np.zeros(shape)
        # one counter-based stream of Hedge draws per booster
        self._hedge_keys = [seed_key(self.seed_, _HEDGE_STREAM)] + [
            np.uint64(
                np.random.SeedSequence([self.seed_, _HEDGE_STREAM, b]).generate_state(
                    1, dtype=np.uint64
                )[0]
            )
            for b in range(1, shape[0] if len(shape) == 2 else 1)
        ]

    def _expert(self, log_v: np.ndarray, b: int = 0) -> int:
        """Algorithm 2, line 10: the expert of this round for booster ``b``, drawn with a number
        that depends only on the seed, ``b`` and the round."""
        u = counter_uniform(self._hedge_keys[b], self.t_ + 1)
        return int(choose_expert(log_v, u, self.predict_with == "sampled"))

    def _olm_scores(
        self, H: np.ndarray, alpha: np.ndarray, log_v: np.ndarray, b: int = 0
    ) -> np.ndarray:
        """Votes of the expert of this round of booster ``b`` (Algorithm 2, lines 7-11)."""
        out = np.empty(H.shape[1])
        K.olm_scores(
            H,
            alpha,
            self._expert(log_v, b),
            _VOTES[self.vote],
            _LOSSES[self.loss],
            out,
        )
        return out

    def _olm_update(self, H: np.ndarray, y: int, b: int | None = None) -> np.ndarray:
        """One round of Algorithm 2 for booster ``b`` (the only one when ``None``)."""
        pick = slice(None) if b is None else b
        weights = np.empty_like(H)
        K.olm_update(
            H,
            y,
            self.alpha_[pick],
            self.log_v_[pick],
            self.t_,
            _VOTES[self.vote],
            _LOSSES[self.loss],
            self.step_scale_,
            self.alpha_bound_,
            self.hedge_rate,
            weights,
            self.edge_num_[pick],
            self.edge_den_[pick],
        )
        return weights

    def _scores(self, H: np.ndarray) -> np.ndarray:
        return self._olm_scores(H, self.alpha_, self.log_v_)

    def _update(self, H: np.ndarray, y: int) -> np.ndarray:
        return self._olm_update(H, y)

    def _compiled_stream(
        self, rows: Any, targets: Sequence, out: np.ndarray | None, start: int
    ) -> int:
        from olboost.weak.vfdt import VFDTCommittee

        committee = self.committee_
        cls = type(self)
        if (
            rows.sparse
            or not isinstance(committee, VFDTCommittee)
            or cls._scores is not AdaBoostOLM._scores  # the one-vs-all designs
            or cls._update is not AdaBoostOLM._update
        ):
            return start
        X = np.ascontiguousarray(rows.X)
        stop = start + committee._first_bad_row(X[start:])  # that row is left to predict's checks
        y = np.asarray(targets, dtype=np.int64)
        n, k = self.learners, len(self._outputs())
        H = np.empty((n, k))
        weights = np.empty((n, k))
        demand = np.zeros(2, dtype=np.int64)
        scores = out if out is not None else np.empty((0, k))
        i = start
        with committee._threads():
            while i < stop:
                j = _SK.olm_vfdt_stream(
                    X,
                    y,
                    i,
                    stop,
                    self.t_,
                    scores,
                    out is not None,
                    committee._kernel_args(),
                    demand,
                    H,
                    weights,
                    self.alpha_,
                    self.log_v_,
                    self._hedge_keys[0],
                    self.predict_with == "sampled",
                    _VOTES[self.vote],
                    _LOSSES[self.loss],
                    self.step_scale_,
                    self.alpha_bound_,
                    self.hedge_rate,
                    self.edge_num_,
                    self.edge_den_,
                )
                if j == stop:
                    self.t_ += stop - i
                    break
                # the booster learned rows i..j; row j's trees need more storage to learn
                self.t_ += j + 1 - i
                committee._learn_valid(X[j], weights)
                i = j + 1
        self._cache = None
        return stop

    # ------------------------------------------------------------------ learned quantities

    @property
    def expert_weights(self) -> np.ndarray:
        """Hedge's current distribution over the experts (``v^i / sum_j v^j``), per booster."""
        w = np.exp(self.log_v_ - self.log_v_.max(axis=-1, keepdims=True))
        return w / w.sum(axis=-1, keepdims=True)

    @property
    def empirical_edges(self) -> np.ndarray:
        """Empirical edge ``gamma_i`` of each weak learner so far (Sec. 4.2), in [-1, 1]; NaN
        while its denominator is 0 (before the first example)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.edge_num_ / self.edge_den_

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
