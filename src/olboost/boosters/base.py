"""The committee layer of every booster: a booster is an online learner
(:mod:`olboost.online`) whose model is a committee of ``N`` weak learners
(:mod:`olboost.weak`) and an algorithm box.

A booster implements ``_init_state`` (allocate its learned state) and its algorithm, either as
a compiled step (``_step_kernels``, ``_step_state``: see :mod:`olboost.boosters._driver`) or in
Python (``_scores``: its score vector from the committee's ``(N, k)`` weak predictions;
``_update``: learn from one example's target and return the ``(N, k)`` label weights to train
the committee with). This module starts the committee, caches its predictions between scoring
and learning one example, and runs streams through the compiled driver when it can.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from olboost._interrupt import held_interrupt
from olboost._random import STREAMS, seed_int
from olboost.base import InstanceOf, Interval, overrides_before, restored_on_failure
from olboost.boosters import _driver
from olboost.online.inputs import Rows
from olboost.online.learner import MulticlassLearner, OnlineLearner, RankingLearner
from olboost.weak.base import Committee, checked_predictions, driven_kernels, olboost_predicts

__all__ = [
    "MAX_ALPHA",
    "MAX_HEDGE_RATE",
    "Booster",
    "BoosterKernels",
    "MulticlassBooster",
    "RankingBooster",
]

#: Largest ``alpha_bound`` and ``step_scale`` of the adaptive boosters: their scores or votes sum
#: ``N`` alphas of at most this size, finite for any committee; at 1.7e308 a few rounds gave
#: infinite scores and refused examples.
MAX_ALPHA = 1e100

#: Largest ``hedge_rate`` of the adaptive boosters. Hedge subtracts ``hedge_rate`` times a loss
#: from the log-weights every round, the largest kept at 0: near 1.7e308 a lagging expert's fell
#: to -inf within a few rounds, for good, and Hedge then followed a worse expert. Top-k
#: Adaptive's losses are estimates weighted by inverse pair probabilities of up to 1e100
#: (:data:`~olboost.feedback.MIN_PAIR_PROBABILITY`), still finite.
MAX_HEDGE_RATE = 1e100

#: Rows the compiled driver takes per call at most (a sparse stream is densified one block at a
#: time, of fewer rows when it is wide: :meth:`olboost.online.inputs.Rows.block_rows`).
_BLOCK_ROWS = 4096


class BoosterKernels(NamedTuple):
    """A booster's compiled functions (:mod:`olboost.boosters._driver`): ``score(H, t, state,
    out)`` writes the scores of round ``t``; ``step(H, target, t, state, weights, scores,
    return_scores) -> int`` is one round of the algorithm for the driver."""

    score: Any
    step: Any


#: NumPy's messages for an array too large to exist (a ValueError, not a MemoryError).
_NUMPY_TOO_BIG = ("Maximum allowed dimension exceeded", "array is too big")


class Booster(OnlineLearner):
    """Base class of all boosters: a committee of ``learners`` weak learners over ``k`` outputs
    (the labels to rank, or the classes), started on the first example."""

    _param_constraints = {
        "committee": InstanceOf(Committee, allow_none=True),
        # the compiled kernels index learners with 64-bit integers
        "learners": Interval(1, sys.maxsize, integer=True),
        "seed": Interval(None, None, integer=True, allow_none=True),
    }

    def _missing_allowed(self) -> bool:
        """Missing feature values pass the input checks when the committee learns from them
        (:attr:`olboost.weak.base.Committee.handles_missing`)."""
        # the started committee's, as _check_rows reads it: a committee=None prototype is a new
        # VFDTCommittee (17 parameter checks) at each call, a third of a predict_one (probe)
        committee = self.__dict__.get("committee_")
        if committee is None:
            committee = self._committee_prototype()
        return committee.handles_missing

    # The started committee and the booster's per-learner state have the old number, and the
    # boosters read ``learners`` again later (OnlineMBBM's and Top-k BBM's potential tables,
    # OzaBoost's loop over its learners, which failed with an IndexError after t_ moved). The
    # committee (and its parameters) is a prototype cloned at start: a new one changed nothing.
    _fixed_once_started = ("learners", "committee", *OnlineLearner._fixed_once_started)

    @property
    def _n_learners(self) -> int:
        """``learners`` as a Python int: a NumPy uint8 or int16 count wrapped around in the
        trees' storage sizes and in OnlineMBBM's tie-draw counters."""
        return int(self.learners)

    def _committee_shape(self) -> tuple[int, int]:
        """``(learners, labels)`` of the committee; one-vs-all designs use binary learners."""
        return self._n_learners, len(self._outputs())

    def _none_stands_for(self, name: str) -> Any:
        return _default_committee() if name == "committee" else super()._none_stands_for(name)

    def _committee_prototype(self) -> Committee:
        """The committee the start clones: ``committee``, or the default one."""
        return self.committee if self.committee is not None else _default_committee()

    def _init_model(self) -> None:
        self.committee_ = self._committee_prototype().clone()
        n_learners, n_labels = self._committee_shape()
        try:
            self.committee_.start(
                n_learners,
                n_labels,
                self.n_features_in_,
                seed_int(self.seed_, STREAMS["committee"]),
            )
            self._init_state()
        except (MemoryError, ValueError) as err:
            # NumPy's words ("Maximum allowed dimension exceeded", or none at all) named no
            # parameter; the start is rolled back by the caller either way
            if isinstance(err, ValueError) and not any(s in str(err) for s in _NUMPY_TOO_BIG):
                raise
            raise (MemoryError if isinstance(err, MemoryError) else ValueError)(
                f"{type(self).__name__}: no room for the arrays of {n_learners} learners over "
                f"{n_labels} outputs and {self.n_features_in_} features ({err or 'out of memory'}"
                "): lower learners"
            ) from None

    def _check_first(self, xv: np.ndarray) -> None:
        # the committee's own conditions (nominal codes, the entropy's [0, 1], ...), said as the
        # array paths say them (_check_rows): for this model
        try:
            self.committee_._check_x(xv)
        except ValueError as err:
            raise ValueError(f"{type(self).__name__}: {err}") from None

    def _check_rows(self, rows: Rows) -> None:
        # before the start, the committee that will be cloned checks them: its row conditions
        # follow from its parameters (an evaluation checks every split before the model starts)
        committee = self.__dict__.get("committee_")
        if committee is None:
            committee = self._committee_prototype()
        if not committee.rejects_rows():
            return
        size = rows.block_rows(_BLOCK_ROWS)
        for start in range(0, rows.n, size):
            X = rows.block(start, size)
            bad = committee.check_rows(X)
            if bad < X.shape[0]:
                problem = committee.row_problem(X[bad])
                raise ValueError(
                    f"{type(self).__name__}: X row {start + bad}: "
                    + (problem or f"rejected by {type(committee).__name__}")
                )

    def _predictions(self, xv: np.ndarray) -> np.ndarray:
        # predicting then learning the same x (the usual test-then-train loop) asks the
        # committee once: the predictions are cached until the model next changes.
        cached = self.__dict__.get("_cache")
        if cached is not None and cached[0] == self.t_ and np.array_equal(cached[1], xv):
            return cached[2]
        try:
            H = self.committee_.predict(xv)
        except ValueError as err:
            # the committee's own conditions on x (a nominal code, the entropy's [0, 1]),
            # said for this model, as the array paths say them (_check_rows)
            raise ValueError(f"{type(self).__name__}: {err}") from None
        if not olboost_predicts(self.committee_):
            H = checked_predictions(self.committee_, H)
        self._cache = (self.t_, xv.copy(), H)
        return H

    def _raw_scores(self, xv: np.ndarray) -> np.ndarray:
        return self._scores(self._predictions(xv))

    def _learn_row(self, xv: np.ndarray, target: Any) -> None:
        self._learn_predicted(xv, self._predictions(xv), target)

    def _learn_predicted(self, xv: np.ndarray, H: np.ndarray, target: Any) -> None:
        # The booster's step updates its own state before the committee learns, and a committee
        # refuses weights it cannot take (e.g. ones that overflow times its multipliers) before
        # changing anything: then the booster's state goes back too (a few small arrays).
        with restored_on_failure(self, arrays=True):
            self.t_ += 1
            weights = self._update(H, target)
            self.committee_.learn(xv, weights)
        self._cache = None

    def _compiled_stream(
        self, rows: Rows, targets: Sequence, out: np.ndarray | None, start: int
    ) -> int:
        """Score then learn rows ``start, start + 1, ...`` in the compiled driver
        (:func:`olboost.boosters._driver.run`, a block at a time) when the committee is compiled
        and the booster has a step; return the first row left to the row-by-row path
        (``start``: none done). The array entry points have checked every row against the
        committee first (:meth:`_check_rows`), as the driver requires."""
        kernels = self._step_kernels()
        if kernels is None or driven_kernels(self.committee_) is None:
            return start
        if _overrides_the_step(type(self)):
            # a subclass's own _update or _scores (say): the driver would run the step it
            # inherits, and the array paths would learn otherwise than learn_one
            return start
        k = len(self._outputs())
        scratch = np.empty((1, k))
        state = self._step_state()
        i = start
        size = rows.block_rows(_BLOCK_ROWS)
        while i < rows.n:
            X = rows.block(i, size)
            stop = i + X.shape[0]
            block_targets = self._step_targets(targets[i:stop])
            scores = out[i:stop] if out is not None else scratch
            # compiled before the hold below, which would keep a Ctrl-C waiting for the compiler
            prepared = _driver.prepare(
                X, block_targets, scores, self.committee_, kernels.step, state
            )
            # a Ctrl-C comes between blocks, counted: during the driver it came as the driver
            # returned, and t_ missed the block its arrays had learned
            with held_interrupt():
                _driver.run(
                    X,
                    block_targets,
                    self.t_,
                    scores,
                    out is not None,
                    self.committee_,
                    kernels.step,
                    state,
                    prepared,
                )
                self.t_ += stop - i
                self._cache = None
            i = stop
        return i

    # ------------------------------------------------------------------ compiled step

    def _step_kernels(self) -> BoosterKernels | None:
        """The booster's compiled ``score`` and ``step`` (see :mod:`olboost.boosters._driver`),
        or ``None`` when this configuration learns in Python (e.g. Monte Carlo potentials)."""
        return None

    def _step_state(self) -> Any:
        """The record of learned state and parameters the compiled step reads and updates (its
        arrays are the model's own, updated in place)."""
        raise NotImplementedError

    def _scores(self, H: np.ndarray) -> np.ndarray:
        """The booster's score vector (length ``k``) given weak predictions ``H``, ``(N, k)``:
        its compiled ``score`` for round ``t_ + 1``."""
        kernels = self._kernels_or_say("_scores")
        out = np.empty(len(self._outputs()))
        kernels.score(H, self.t_ + 1, self._step_state(), out)
        return out

    def _update(self, H: np.ndarray, target: Any) -> np.ndarray:
        """Learn from one example (round ``t_``); return ``(N, k)`` label weights for the
        committee: the compiled step, as the driver runs it."""
        kernels = self._kernels_or_say("_update")
        weights = np.empty_like(H)
        scratch = np.empty(len(self._outputs()))
        target = self._step_targets([target])[0]
        kernels.step(H, target, self.t_, self._step_state(), weights, scratch, False)
        return weights

    def _kernels_or_say(self, method: str) -> BoosterKernels:
        """The compiled step, or a ``NotImplementedError`` saying what a booster of one's own
        implements (the base class's ``_scores`` and ``_update`` run the compiled step)."""
        kernels = self._step_kernels()
        if kernels is None:
            raise NotImplementedError(
                f"{type(self).__name__}.{method}: a booster implements its step in Python "
                "(_scores and _update) or compiled (_step_kernels and _step_state); this one "
                "has neither"
            )
        return kernels


class RankingBooster(Booster, RankingLearner):
    """Base class of online boosters for multi-label ranking (a ``river.base.MultiLabelClassifier``
    when River is installed: see :class:`olboost.online.RankingLearner`).

    Subclasses take at least the parameters ``committee``, ``learners``, ``labels`` and ``seed``.
    """

    _param_constraints = {**Booster._param_constraints, **RankingLearner._param_constraints}


class MulticlassBooster(Booster, MulticlassLearner):
    """Base class of online boosters for multiclass classification (River's classifier API).

    Subclasses take at least the parameters ``committee``, ``learners``, ``classes`` and ``seed``
    (see :class:`olboost.online.MulticlassLearner` for ``classes``).
    """

    _param_constraints = {**Booster._param_constraints, **MulticlassLearner._param_constraints}


def _default_committee() -> Committee:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee()


#: What the compiled driver does in place of these methods, row after row.
_STEP_METHODS = (
    "_scores",
    "_update",
    "_predictions",
    "_raw_scores",
    "_stream_scores",
    "_learn_row",
    "_learn_predicted",
)


def _overrides_the_step(cls: type) -> bool:
    """Whether booster class ``cls`` overrides a method of :data:`_STEP_METHODS` over the class
    whose ``_step_kernels`` it inherits (a subclass of it, or a mixin before it): then the
    driver, which runs those kernels, would not run the override."""
    return overrides_before(cls, _STEP_METHODS, "_step_kernels")
