"""Baselines of the online multiclass boosting experiments (Jung, Goetz & Tewari 2017, Sec. 5 and
Appendix E): the best single tree in hindsight, Oza's online boosting, and two one-vs-all designs.

All run on the committee contract of :mod:`olboost.weak.base` and the River-style API of
:class:`olboost.boosters.base.MulticlassBooster`, so they use the same weak learners, drawn from the
same seed, as :class:`olboost.boosters.ada_olm.AdaBoostOLM`.

The one-vs-all designs (:class:`OvaAdaBoostOL`, :class:`AdaOVA`) need ``learners * k`` binary
learners: their committee is started over 2 labels (0 = "not this class", 1 = "this class") with
``learners * k`` learners instead of ``learners`` learners over the ``k`` classes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from olboost.base import OneOf
from olboost.boosters import _ada_olm_kernels as K
from olboost.boosters import _baseline_kernels as BK
from olboost.boosters._baseline_kernels import oza_lambda_step
from olboost.boosters.ada_olm import AdaBoostOLM
from olboost.boosters.base import BoosterKernels, MulticlassBooster
from olboost.weak.base import Committee

__all__ = ["AdaOVA", "BestTree", "OvaAdaBoostOL", "OzaBoost", "oza_lambda_step"]


def _vfdt_test_params() -> Iterator[dict[str, Any]]:
    from olboost.weak.vfdt import VFDTCommittee

    yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3, "classes": 3}
    yield {"committee": VFDTCommittee(n_features=3), "learners": 3, "seed": 7}


# --------------------------------------------------------------------------------------------------
# Best tree in hindsight
# --------------------------------------------------------------------------------------------------


class BestTree(MulticlassBooster):
    """The best of ``N`` independent online learners, judged by their prequential accuracy.

    Every learner learns every example with weight 1 on its true class (times the committee's
    per-learner multiplier) and is scored on it just before: ``correct_[i]`` counts the examples
    learner ``i`` predicted right (the argmax of its distribution, lowest class on ties) before
    learning them. :meth:`predict_one` uses the learner with the most correct predictions so far
    (lowest index on ties), a fair online strategy ("follow the leader").

    :attr:`best_accuracy_in_hindsight_` is the paper's *best decision tree* (Sec. 5, "DT" in
    Appendix E): the accuracy of the learner that turned out best over the whole stream. It is an
    ORACLE, chosen after seeing every label, not something an online learner could achieve.

    Parameters
    ----------
    committee
        The weak learners, cloned at start. Default: ``VFDTCommittee()``.
    learners
        Number ``N`` of independent learners.
    seed
        Seed of the committee's draws; ``None`` draws a fresh one (kept in ``seed_``).
    classes
        The ``k`` classes (an int or a sequence); may be ``None`` when learning from arrays.

    Examples
    --------
    >>> from olboost import VFDTCommittee
    >>> from olboost.boosters.baselines import BestTree
    >>> from olboost.datasets import load_uci
    >>> from olboost.evaluate import prequential
    >>> data = load_uci("balance")
    >>> model = BestTree(VFDTCommittee(), learners=10, seed=1)
    >>> round(prequential(model, data).accuracy, 4)
    0.7728
    >>> round(model.best_accuracy_in_hindsight_, 4)
    0.7872
    """

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        classes: int | Sequence[Hashable] | None = None,
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.classes = classes
        self._validate_params()

    def _init_state(self) -> None:
        self.correct_ = np.zeros(self._n_learners, dtype=np.int64)

    def _step_kernels(self) -> BoosterKernels:
        return BoosterKernels(BK.best_score, BK.best_step)

    def _step_state(self) -> BK.BestState:
        return BK.BestState(self.correct_)

    @property
    def best_accuracy_in_hindsight_(self) -> float:
        """ORACLE: the prequential accuracy of the best learner over the examples seen so far."""
        return float(self.correct_.max() / self.t_) if self.t_ else float("nan")

    @property
    def accuracies_(self) -> np.ndarray:
        """Prequential accuracy of every learner over the examples seen so far."""
        return self.correct_ / self.t_ if self.t_ else np.full(self._n_learners, np.nan)

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield from _vfdt_test_params()


# --------------------------------------------------------------------------------------------------
# Oza's online boosting
# --------------------------------------------------------------------------------------------------


class OzaBoost(MulticlassBooster):
    """Online boosting of Oza & Russell (2001) / Oza (2005, Fig. 2), with importance weights.

    Per example, ``lambda = 1``; for ``i = 1..N``: learner ``i`` learns the example with importance
    weight ``lambda`` (times the committee's multiplier) instead of ``Poisson(lambda)`` copies,
    then ``lambda`` is updated by :func:`oza_lambda_step`. The vote of learner ``i`` is
    ``log((1 - eps_i) / eps_i)``, ``eps_i = lambda_sw_i / (lambda_sc_i + lambda_sw_i)``, given to
    the class it predicts (the argmax of its distribution, Oza's hard vote).

    Edge cases, and how they differ from River's ``ensemble.AdaBoostClassifier`` (river 0.26,
    ``river/ensemble/boosting.py``), which sums the learners' probabilities and adds ``1e-16`` to
    ``eps``'s numerator and denominator:

    * learners with ``eps_i >= 1/2`` get no vote (River gives them weight 1), nor do learners that
      have not been judged yet;
    * learners never wrong so far (``eps_i = 0``, an infinite weight) outvote all others: when any
      exist, the votes are theirs alone, one each (the limit of the weights as ``eps_i -> 0``;
      River's ``1e-16`` makes their weight about ``37 + log(lambda_sc_i)`` instead).

    Parameters
    ----------
    committee
        The weak learners, cloned at start. Default: ``VFDTCommittee()``.
    learners
        Number ``N`` of learners.
    seed
        Seed of the committee's draws; ``None`` draws a fresh one (kept in ``seed_``).
    classes
        The ``k`` classes (an int or a sequence); may be ``None`` when learning from arrays.
    judge
        When learner ``i``'s correctness is judged. ``"after"`` (Oza's Fig. 2, River and MOA):
        after it has learned the example, which needs one committee call per learner (``N``
        ``learn`` and ``N`` ``predict`` calls per example). ``"before"``: on its prediction made
        before learning (the prequential one), so that all learners train in one committee call,
        ``N`` times cheaper in committee calls; a variant, not Oza's algorithm.

    Examples
    --------
    >>> from olboost import VFDTCommittee
    >>> from olboost.boosters.baselines import OzaBoost
    >>> from olboost.datasets import load_uci
    >>> from olboost.evaluate import prequential
    >>> data = load_uci("balance")
    >>> model = OzaBoost(VFDTCommittee(), learners=10, seed=1)
    >>> round(prequential(model, data).accuracy, 4)
    0.7872
    >>> model.errors_.shape
    (10,)
    """

    _param_constraints = {
        **MulticlassBooster._param_constraints,
        "judge": OneOf("after", "before"),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        classes: int | Sequence[Hashable] | None = None,
        judge: str = "after",
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.classes = classes
        self.judge = judge
        self._validate_params()

    def _init_state(self) -> None:
        self.lambda_sc_ = np.zeros(self._n_learners)
        self.lambda_sw_ = np.zeros(self._n_learners)

    @property
    def errors_(self) -> np.ndarray:
        """``eps_i = lambda_sw_i / (lambda_sc_i + lambda_sw_i)`` (NaN before learner ``i`` is
        judged)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.lambda_sw_ / (self.lambda_sc_ + self.lambda_sw_)

    def vote_weights(self) -> np.ndarray:
        """The weight of each learner's vote (see the class docstring for the edge cases)."""
        out = np.empty(self._n_learners)
        BK.oza_vote_weights(self._step_state(), out)
        return out

    def _step_kernels(self) -> BoosterKernels | None:
        # Oza's order (judge="after") interleaves N committee calls per example: no step
        return BoosterKernels(BK.oza_score, BK.oza_step) if self.judge == "before" else None

    def _step_state(self) -> BK.OzaState:
        return BK.OzaState(self.lambda_sc_, self.lambda_sw_)

    def _scores(self, H: np.ndarray) -> np.ndarray:
        out = np.empty(H.shape[1])
        BK.oza_score(H, self.t_ + 1, self._step_state(), out)
        return out

    def _learn_predicted(self, xv: np.ndarray, H: np.ndarray, target: Any) -> None:
        if self.judge == "before":
            super()._learn_predicted(xv, H, target)
            return
        # Oza's Fig. 2 order: learner i learns, then is judged on its updated prediction.
        self.t_ += 1
        y = int(target)
        weights = np.zeros_like(H)
        lam = 1.0
        for i in range(self._n_learners):
            weights[i, y] = lam
            self.committee_.learn(xv, weights)
            weights[i, y] = 0.0
            correct = int(np.argmax(self.committee_.predict(xv)[i])) == y
            lam = oza_lambda_step(lam, correct, i, self.lambda_sc_, self.lambda_sw_)
        self._cache = None

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield from _vfdt_test_params()
        yield {"learners": 3, "seed": 2, "judge": "before"}


# --------------------------------------------------------------------------------------------------
# One-vs-all designs
# --------------------------------------------------------------------------------------------------


class _BinaryCommittee:
    """Mixin: the committee holds ``learners * k`` binary learners (labels 0 = rest, 1 = class)."""

    def _committee_shape(self) -> tuple[int, int]:
        return self._n_learners * len(self._outputs()), 2


class OvaAdaBoostOL(_BinaryCommittee, AdaBoostOLM):
    """One-vs-all over ``k`` binary Adaboost.OL boosters ("OvA" of Jung, Goetz & Tewari 2017,
    App. E).

    Booster ``c`` separates class ``c`` (binary label 1) from the rest (label 0) with its own
    ``learners`` weak learners: block ``c`` of a committee of ``learners * k`` binary learners,
    rows ``c * learners`` to ``(c + 1) * learners - 1``. Each booster is Adaboost.OLM with
    ``k = 2``, which is Adaboost.OL of Beygelzimer, Kale & Luo (2015) (Jung, Goetz & Tewari
    2017, Sec. 4.2), with its own ``alpha``, Hedge weights and Hedge draws. The parameters are
    those of :class:`AdaBoostOLM`, applied to every binary booster with ``k = 2`` (so the
    paper's step is ``2 sqrt(2) / sqrt(t)``; Adaboost.OL's own analysis uses ``4 / sqrt(t)``,
    which ``step_scale=4`` gives).

    Prediction: the class whose booster gives the largest margin ``s_c(1) - s_c(0)`` (the votes of
    its expert of the round for "class c" minus those for "rest"); ties go to the lowest class.
    The votes (:meth:`votes`) are these ``k`` margins. ``alpha_``, ``log_v_`` and the edge sums
    are ``(k, learners)``.

    Parameters
    ----------
    committee
        The binary weak learners' committee, cloned at start (``learners * k`` learners of 2
        labels). Default: ``VFDTCommittee()``.
    learners
        Number ``N`` of weak learners of each binary booster.
    seed, classes, loss, vote, predict_with, hedge_rate
        As in :class:`AdaBoostOLM`, for every binary booster.
    alpha_bound, step_scale
        As in :class:`AdaBoostOLM` with ``k = 2``: the default step is ``2 sqrt(2) / sqrt(t)``.

    Examples
    --------
    >>> from olboost import VFDTCommittee
    >>> from olboost.boosters.baselines import OvaAdaBoostOL
    >>> from olboost.datasets import load_uci
    >>> from olboost.evaluate import prequential
    >>> data = load_uci("balance")
    >>> model = OvaAdaBoostOL(VFDTCommittee(), learners=10, seed=1)
    >>> round(prequential(model, data).accuracy, 4)
    0.8304
    >>> model.committee_.n_learners_, model.committee_.n_labels_
    (30, 2)
    """

    def _init_state(self) -> None:
        self._init_olm(n_boosters=len(self._outputs()))

    def _olm_classes(self) -> int:
        return 2  # each of the k boosters is binary

    def _step_kernels(self) -> BoosterKernels:
        return BoosterKernels(K.ova_score, K.ova_step)

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield from _vfdt_test_params()


class AdaOVA(_BinaryCommittee, AdaBoostOLM):
    """Adaboost.OLM over one-vs-all weak learners ("AdaOVA" of Jung, Goetz & Tewari 2017, App. E).

    Weak learner ``i`` is a group of ``k`` binary learners, rows ``i * k + c`` of a committee of
    ``learners * k`` binary learners, learner ``(i, c)`` telling class ``c`` (binary label 1) from
    the rest (label 0). The group's distribution over the ``k`` classes is its learners'
    probabilities of label 1, normalised to sum to 1 (uniform if they are all 0); Adaboost.OLM
    (every parameter as in :class:`AdaBoostOLM`, ``vote`` included) runs on these ``learners``
    distributions. When Adaboost.OLM gives weak learner ``i`` importance weight ``w`` on the true
    class ``y``, every binary learner ``(i, c)`` of the group learns the example with label
    ``1[c == y]`` and the same weight ``w`` (times its multiplier).

    Parameters
    ----------
    committee
        The binary weak learners' committee, cloned at start (``learners * k`` learners of 2
        labels). Default: ``VFDTCommittee()``.
    learners
        Number ``N`` of weak learners of Adaboost.OLM, each a group of ``k`` binary learners.
    seed, classes, loss, vote, predict_with, hedge_rate, alpha_bound, step_scale
        As in :class:`AdaBoostOLM` (``k`` the number of classes).

    Examples
    --------
    >>> from olboost import VFDTCommittee
    >>> from olboost.boosters.baselines import AdaOVA
    >>> from olboost.datasets import load_uci
    >>> from olboost.evaluate import prequential
    >>> data = load_uci("balance")
    >>> model = AdaOVA(VFDTCommittee(), learners=10, seed=1)
    >>> round(prequential(model, data).accuracy, 4)
    0.7952
    """

    def _step_kernels(self) -> BoosterKernels:
        return BoosterKernels(K.ada_ova_score, K.ada_ova_step)

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield from _vfdt_test_params()
        yield {"learners": 3, "seed": 5, "vote": "proba", "loss": "square_hinge"}
