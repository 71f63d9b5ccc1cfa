"""The service's one-call learn and show: Top-k Adaptive's ``learn_one`` on compiled trees, for the
top-k feedback of one of its impressions, and its ``show_one``, each as one compiled call that
holds no GIL.

``learn_one`` runs three compiled kernels (the trees' ``predict``, the booster's ``update``, the
trees' ``learn``) with Python between and around them. In the server the event loop runs Python
nearly all the time, and a thread that wants the GIL back waits for the holder's switch
interval: the learner wants it back after each kernel and for each piece of Python, and fell
behind the acknowledged feedback under load. :func:`learn_step` (:func:`learn_step_serial` for
trees on one thread) runs the three kernels in one call without the GIL (the same kernels on the
same data, in ``learn_one``'s order: the same bits), and :class:`FusedLearner` does only what
``learn_one`` does around them. A ranking holds the model lock too, and ``show_one`` spent most of
its time in the lock on Python around two kernels (the trees' ``predict``, the booster's
``show``), wanting the GIL back after each while the learner waited for the lock:
:func:`show_step` runs both in one call, and :meth:`FusedLearner.show` checks nothing (the
service has parsed ``x`` and the key).

Used only where it is the same computation: a :class:`~olboost.TopkAdaptive` on a
:class:`~olboost.VFDTCommittee`, learning a :class:`~olboost.feedback.TopkFeedback` built from the
log (:func:`olboost.serve.store.feedback_of`) for an ``x`` the model has shown, so already
checked; anything else learns through ``learn_one``. The crash and learning tests compare the
served model with ``learn_one``'s replay of the log, bit for bit.

Like every kernel calling kernels of other modules, :func:`learn_step`'s Numba cache does not see
edits of the kernels it calls (``make clean-cache``).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from olboost._numba_cache import join_pending
from olboost.boosters._topk_kernels import topk_adaptive_show, topk_adaptive_update
from olboost.weak._vfdt_kernels import learn as tree_learn
from olboost.weak._vfdt_kernels import learn_serial as tree_learn_serial
from olboost.weak._vfdt_predict import predict as tree_predict

__all__ = ["FusedLearner", "fused_learner", "learn_step", "learn_step_serial", "show_step"]


@numba.njit(cache=True, inline="always")
def _predict_and_update(x, shown, rel, probs, t, booster, committee, H, weights, costs):
    tree_predict(x, committee, H)
    topk_adaptive_update(H, shown, rel, probs, t, booster, weights, costs)


@numba.njit(cache=True, nogil=True)
def learn_step(x, shown, rel, probs, t, booster, committee, H, weights, costs, demand):
    """``H = predict(x)``; Top-k Adaptive's update of round ``t`` from the feedback (the label
    weights into ``weights``); the trees learn them (their parallel ``learn``). Returns the
    trees' ``learn`` status (0, or the storage they need: the booster has learned then, the
    trees not yet)."""
    _predict_and_update(x, shown, rel, probs, t, booster, committee, H, weights, costs)
    return tree_learn(x, weights, committee, demand)


@numba.njit(cache=True, nogil=True)
def learn_step_serial(x, shown, rel, probs, t, booster, committee, H, weights, costs, demand):
    """:func:`learn_step` with the trees' serial ``learn`` (a committee with ``n_threads=1``).
    Two kernels, not one taking the ``learn`` kernel as an argument: Numba cannot cache a
    function typed on a dispatcher."""
    _predict_and_update(x, shown, rel, probs, t, booster, committee, H, weights, costs)
    return tree_learn_serial(x, weights, committee, demand)


@numba.njit(cache=True, nogil=True)
def show_step(x, t, booster, key, committee, H, scores, ranking, probs):
    """``H = predict(x)``, then Top-k Adaptive's randomised ranking of round ``t`` under the
    caller key ``key`` into ``ranking`` and the shown labels' pair probabilities into ``probs``
    (``show_one``'s kernels, in its order). Returns whether the draw explored."""
    tree_predict(x, committee, H)
    return topk_adaptive_show(H, t, booster, key, scores, ranking, probs)


_STEPS = {tree_learn: learn_step, tree_learn_serial: learn_step_serial}


class FusedLearner:
    """``model.learn_one(x, feedback)`` and ``model.show_one(x, key)``, each in one compiled call
    without the GIL (see the module docstring); the caller holds the model lock.

    Parameters
    ----------
    model
        A started :class:`~olboost.TopkAdaptive` on a :class:`~olboost.VFDTCommittee`.
    """

    def __init__(self, model: Any):
        self.model = model
        n, m = model.committee_.n_learners_, model.committee_.n_labels_
        # scratch reused by every call, under the model lock
        self.H = np.empty((n, m))
        self.weights = np.empty((n, m))
        self.costs = np.empty((0, 0))  # no rows: the cost vectors are not kept
        self.demand = np.zeros(2, dtype=np.int64)
        # the step of the committee's learn kernel (fixed by its n_threads), chosen once
        self.tree_learn = model.committee_.compiled().learn
        self.step = _STEPS[self.tree_learn]
        self.scores = np.empty(m)
        # The kernels' views of the model, built once rather than in every call (some 70 us
        # of Python, in the model lock): a started booster's arrays are only changed in place;
        # the trees' are replaced when they grow, and their view is built again then.
        self.booster = model._step_state()
        self.trees = model.committee_._state()
        self.grown = model.committee_._grown_arrays()

    def _trees(self) -> Any:
        """The trees' view, built again if they grew since (here or through the model)."""
        grown = self.model.committee_._grown_arrays()
        if any(a is not b for a, b in zip(grown, self.grown, strict=True)):
            self.trees, self.grown = self.model.committee_._state(), grown
        return self.trees

    def show(self, x: np.ndarray, key: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """``show_one(x, key)``'s draw, bit for bit, for a float64 vector ``x`` of the model's
        width with finite values in the input limit and a key in [0, 2^64), both checked by the
        caller: the ranking (label indices, best first), the shown labels' pair probabilities
        and whether the draw explored. Its round is ``model.t_ + 1``."""
        model = self.model
        m, k = self.scores.shape[0], model.k
        ranking = np.empty(m, dtype=np.int64)
        probs = np.empty((k, k))
        explored = show_step(
            x, model.t_ + 1, self.booster, np.uint64(key), self._trees(), self.H, self.scores,
            ranking, probs,
        )  # fmt: skip
        return ranking, probs, bool(explored)

    def learn(self, x: np.ndarray, feedback: Any) -> None:
        """Learn ``feedback`` (a :class:`~olboost.feedback.TopkFeedback` of an impression this
        model showed for the float64 vector ``x``) as ``learn_one`` does, bit for bit."""
        self.learn_shown(x, feedback.shown, feedback.relevant, feedback.probs)

    def learn_shown(
        self, x: np.ndarray, shown: np.ndarray, relevant: np.ndarray, probs: np.ndarray
    ) -> None:
        """:meth:`learn` from the arrays of the feedback: the shown labels (int64, in display
        order), which of them are relevant (bool) and their pair probabilities (float64), as
        the model's own impression and the service's checked clicks give them (no
        :class:`~olboost.feedback.TopkFeedback` is built, so nothing is checked again)."""
        model = self.model
        committee = model.committee_
        # The step links the trees' learn: if it is compiling in another process (a cold start,
        # see Committee.start), wait for it rather than compile it here too. Here, not at
        # construction, so that what is compiled before the first learn (the rankings' kernels)
        # overlaps it.
        join_pending(self.tree_learn)
        # learn_one's order: the round counter first, then the update of that round
        model.t_ += 1
        self.demand[:] = 0
        with committee.running():
            status = self.step(
                x, shown, relevant, probs, model.t_, self.booster, self._trees(), self.H,
                self.weights, self.costs, self.demand,
            )  # fmt: skip
            if status != 0:
                # as the compiled driver: the trees asked for room, and the committee makes it
                # and learns the example (resuming where its trees stopped)
                committee.learn_compiled(x, self.weights)
        model._cache = None  # the predictions cached by a ranking are stale now


def fused_learner(model: Any) -> FusedLearner | None:
    """A :class:`FusedLearner` for ``model`` when it is a started Top-k Adaptive on a compiled
    Hoeffding-tree committee whose kernels are the ones :func:`learn_step` calls; ``None``
    otherwise (learn through ``learn_one``)."""
    from olboost.boosters.topk import TopkAdaptive
    from olboost.weak.vfdt import VFDTCommittee

    if type(model) is not TopkAdaptive or not model._started:
        return None
    committee = model.committee_
    if type(committee) is not VFDTCommittee:
        return None
    kernels = committee.compiled()
    if kernels.predict is not tree_predict or kernels.learn not in _STEPS:
        return None
    return FusedLearner(model)
