"""The service learner's one-call learn: Top-k Adaptive's ``learn_one`` on compiled trees, for the
top-k feedback of one of its impressions, as one compiled call that holds no GIL.

``learn_one`` runs three compiled kernels (the trees' ``predict``, the booster's ``update``, the
trees' ``learn``) with Python between and around them. In the server the event loop runs Python
nearly all the time, and a thread that wants the GIL back waits for the holder's switch
interval: the learner wants it back after each kernel and for each piece of Python, and fell
behind the acknowledged feedback under load. :func:`learn_step` (:func:`learn_step_serial` for
trees on one thread) runs the three kernels in one call without the GIL (the same kernels on the
same data, in ``learn_one``'s order: the same bits), and :class:`FusedLearner` does only what
``learn_one`` does around them.

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

from olboost.boosters._topk_kernels import topk_adaptive_update
from olboost.weak._vfdt_kernels import learn as tree_learn
from olboost.weak._vfdt_kernels import learn_serial as tree_learn_serial
from olboost.weak._vfdt_predict import predict as tree_predict

__all__ = ["FusedLearner", "fused_learner", "learn_step", "learn_step_serial"]


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


_STEPS = {tree_learn: learn_step, tree_learn_serial: learn_step_serial}


class FusedLearner:
    """``model.learn_one(x, feedback)`` in one compiled call without the GIL (see the module
    docstring); the caller holds the model lock.

    Parameters
    ----------
    model
        A started :class:`~olboost.TopkAdaptive` on a :class:`~olboost.VFDTCommittee`.
    """

    def __init__(self, model: Any):
        self.model = model
        n, m = model.committee_.n_learners_, model.committee_.n_labels_
        # scratch reused by every call: the learner is the only caller, under the model lock
        self.H = np.empty((n, m))
        self.weights = np.empty((n, m))
        self.costs = np.empty((0, 0))  # no rows: the cost vectors are not kept
        self.demand = np.zeros(2, dtype=np.int64)
        # the step of the committee's learn kernel (fixed by its n_threads), chosen once
        self.step = _STEPS[model.committee_.compiled().learn]

    def learn(self, x: np.ndarray, feedback: Any) -> None:
        """Learn ``feedback`` (a :class:`~olboost.feedback.TopkFeedback` of an impression this
        model showed for the float64 vector ``x``) as ``learn_one`` does, bit for bit."""
        model = self.model
        committee = model.committee_
        state = committee._state()
        # learn_one's order: the round counter first, then the update of that round
        model.t_ += 1
        self.demand[:] = 0
        with committee.running():
            status = self.step(
                x, feedback.shown, feedback.relevant, feedback.probs, model.t_,
                model._step_state(), state, self.H, self.weights, self.costs, self.demand,
            )  # fmt: skip
            # as Committee.learn_compiled: grow what the trees asked for, learn again
            while status != 0:
                committee.make_room(status, self.demand)
                kernels = committee.compiled()
                status = kernels.learn(x, self.weights, kernels.state, self.demand)
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
