"""Numba kernels of :class:`olboost.weak.linear.LinearCommittee`: N linear label rankers.

Learner ``i`` is a label ranker of Shalev-Shwartz & Singer (2007) over its own ``m`` attribute
columns ``features[i]`` (plus a constant feature when ``bias``): its trials are those of
:func:`olboost.rankers._kernels.trial` (Updates I, II and III under the squared norm or the
entropy) on a per-learner :class:`olboost.rankers._kernels.State` made of its own slices of the
committee's arrays, its own margin and tie key, and a budget ``C`` that carries the example's
importance (:func:`learn`). Nothing of the ranker's algorithm is repeated here; this module turns
the committee contract (``(N, k)`` label weights in, ``(N, k)`` distributions out) into trials.

Layout: ``theta`` is ``(N, m', k)``, ``m' = m + bias``, C-ordered, so ``theta[i]`` is learner
``i``'s ``(m', k)`` matrix in the layout of :mod:`olboost.rankers._kernels`; ``log_norm`` and
``norm_error`` are ``(N, k)``, the PDIP iteration counts ``(N, MAX_ITER + 1)``.

Inputs: an example is first mapped attribute by attribute into ``xs`` (:func:`_scaled`, the
running scaling of :mod:`olboost.rankers._scaling`: ``scale`` :data:`STANDARD`, :data:`MINMAX` or
:data:`NO_SCALING`; a missing value is 0, absent). Under :data:`NO_SCALING` and the entropy the
committee refuses values outside [0, 1] by more than ``UNIT_SLACK`` of
:mod:`olboost.rankers.label_ranker`, a rescaler's rounding. The statistics move before an
example is learned (:func:`learn`), never when predicting. Learner ``i`` then reads the non-zero
values of its columns, as the sparse row the ranker's trials take (``O(m + nnz k)`` per learner).
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from olboost.rankers import _kernels as RK
from olboost.rankers._dual import log_norm_exact
from olboost.rankers._scaling import MINMAX, NO_SCALING, STANDARD, learn_scaling, scale_into

__all__ = [
    "LEARN_BAD_WEIGHTS",
    "LEARN_OK",
    "Learners",
    "MINMAX",
    "NO_SCALING",
    "STANDARD",
    "Model",
    "Options",
    "State",
    "Work",
    "distribution",
    "learn",
    "predict",
]

LEARN_OK = 0
LEARN_BAD_WEIGHTS = 1  # a weight is negative or not finite; nothing was changed


#: What each learner drew at start.
Learners = namedtuple(
    "Learners",
    [
        "features",  # (N, m) int64 attribute columns
        "multiplier",  # (N,) weight multipliers
        "C",  # (N,) the rankers' C
        "margin",  # (N,) the rankers' gamma (eq. 1)
        "tie_key",  # (N,) uint64 keys of the tie-breaking draws of eq. 7
    ],
)

#: The committee's options, the same for every learner.
Options = namedtuple(
    "Options",
    [
        "entropy",  # complexity: entropy (True) or squared norm
        "update",  # 1, 2 or 3
        "temperature",  # predictions: softmax of scores / (temperature * margin); 0: top labels
        "bias",  # a constant feature 1 after the learner's columns
        "scale",  # NO_SCALING, MINMAX or STANDARD
        "c_max",  # largest budget of a trial (MAX_ENTROPY_C under the entropy)
        "average",  # predict with the average of theta over the learner's trials
    ],
)

#: The learned state (the committee's own arrays, updated in place).
Model = namedtuple(
    "Model",
    [
        "theta",  # (N, m', k)
        "theta_sum",  # (N, m', k) sum over trials t of t times theta's change at t (average)
        "log_norm",  # (N, k)
        "norm_error",  # (N, k)
        "pdip_hist",  # (N, MAX_ITER + 1) int64
        "trials",  # (N,) int64 trials so far (the counter of the tie draws)
        "mistakes",  # (N,) int64 trials that were ranking mistakes
        "updates",  # (N,) int64 trials that moved the weights
        "lo",  # (d,) smallest value learned per attribute (MINMAX)
        "hi",  # (d,) largest value learned per attribute (MINMAX)
        "count",  # (d,) values learned per attribute (STANDARD)
        "mean",  # (d,) their mean (STANDARD)
        "m2",  # (d,) their sum of squared deviations from the mean (STANDARD)
    ],
)

#: Buffers of one call (their contents never outlive it).
Work = namedtuple(
    "Work",
    [
        "xs",  # (d,) the example after scaling
        "idx",  # (m',) int64 a learner's non-zero columns
        "val",  # (m',) their values
        "y",  # (k,) bool the relevant set of a trial
        "before",  # (m', k) a learner's rows of theta before a trial (average)
        "avg",  # (m', k) a learner's averaged theta (average)
        "avg_norm",  # (k,) its log-normalisers (entropy)
        "sc",  # olboost.rankers._kernels.Scratch for k labels and m' features
    ],
)

State = namedtuple("State", ["learners", "options", "model", "work"])


@numba.njit(cache=True)
def _scaled(x: np.ndarray, st: State) -> None:
    """The example as the learners read it, into ``st.work.xs`` (module docstring)."""
    m = st.model
    scale_into(
        x, st.options.scale, st.options.entropy, m.lo, m.hi, m.count, m.mean, m.m2, st.work.xs
    )


@numba.njit(cache=True)
def _learn_scaling(x: np.ndarray, st: State) -> None:
    """Move the scaling statistics by the example ``x`` (missing values skipped)."""
    m = st.model
    learn_scaling(x, st.options.scale, m.lo, m.hi, m.count, m.mean, m.m2)


@numba.njit(cache=True)
def _row(st: State, i: int) -> int:
    """Learner ``i``'s sparse row of ``st.work.xs`` into ``idx``, ``val``; returns its length."""
    feats = st.learners.features[i]
    xs, idx, val = st.work.xs, st.work.idx, st.work.val
    n = 0
    for j in range(feats.shape[0]):
        v = xs[feats[j]]
        if v != 0.0:
            idx[n] = j
            val[n] = v
            n += 1
    if st.options.bias:
        idx[n] = feats.shape[0]
        val[n] = 1.0
        n += 1
    return n


@numba.njit(cache=True)
def distribution(s: np.ndarray, unit: float, out: np.ndarray) -> None:
    """The distribution over labels of the scores ``s``: ``softmax(s / unit)`` (computed from
    ``s - max s``), or for ``unit = 0`` the uniform distribution over the top-scoring labels."""
    k = s.shape[0]
    top = s[0]
    for c in range(1, k):
        if s[c] > top:
            top = s[c]
    if unit == 0.0:
        count = 0
        for c in range(k):
            if s[c] == top:
                count += 1
        for c in range(k):
            out[c] = 1.0 / count if s[c] == top else 0.0
        return
    total = 0.0
    for c in range(k):
        e = np.exp((s[c] - top) / unit)
        out[c] = e
        total += e
    for c in range(k):
        out[c] /= total


@numba.njit(cache=True)
def _averaged(st: State, i: int) -> None:
    """Learner ``i``'s average of ``theta`` over its ``T`` trials into ``st.work.avg`` (and, under
    the entropy, its log-normalisers into ``avg_norm``): ``((T + 1) theta - theta_sum) / T``,
    ``theta_sum`` being the sum of ``t`` times the change of trial ``t`` (module docstring)."""
    theta, theta_sum = st.model.theta[i], st.model.theta_sum[i]
    avg = st.work.avg
    t = st.model.trials[i]
    for j in range(theta.shape[0]):
        for c in range(theta.shape[1]):
            avg[j, c] = ((t + 1) * theta[j, c] - theta_sum[j, c]) / t
    if st.options.entropy:
        for c in range(theta.shape[1]):
            st.work.avg_norm[c] = log_norm_exact(avg, c)


@numba.njit(cache=True)
def predict(x: np.ndarray, st: State, H: np.ndarray) -> int:
    """The committee's compiled ``predict`` (:class:`olboost.weak.base.CompiledKernels`): row
    ``i`` of ``H`` is learner ``i``'s distribution of its scores ``<w_y, x>``
    (:func:`distribution`, unit ``temperature * margin[i]``), ``w`` its averaged weights with
    ``average``. Changes nothing else."""
    _scaled(x, st)
    model, work = st.model, st.work
    s = work.sc.s
    entropy = st.options.entropy
    temperature = st.options.temperature
    for i in range(H.shape[0]):
        n = _row(st, i)
        if st.options.average and model.trials[i] > 0:
            _averaged(st, i)
            RK.score_row(work.avg, work.avg_norm, entropy, work.idx[:n], work.val[:n], s)
        else:
            theta, log_norm = model.theta[i], model.log_norm[i]
            RK.score_row(theta, log_norm, entropy, work.idx[:n], work.val[:n], s)
        distribution(s, temperature * st.learners.margin[i], H[i])
    return 0


@numba.njit(cache=True)
def learn(x: np.ndarray, weights: np.ndarray, st: State, demand: np.ndarray) -> int:
    """The committee's compiled ``learn``: learner ``i`` makes one ranking trial on ``x`` whose
    relevant labels are those of positive weight ``weights[i]``, with budget
    ``C[i] * multiplier[i] * sum(weights[i])`` (capped at ``c_max``); a row of zeros is skipped.

    Returns :data:`LEARN_BAD_WEIGHTS`, having changed nothing, when a weight is negative or not
    finite; :data:`LEARN_OK` otherwise (the learners never need more storage; ``demand`` is
    not used)."""
    n_learners, k = weights.shape
    learned = False
    for i in range(n_learners):
        for c in range(k):
            w = weights[i, c]
            if not (w >= 0.0 and w < np.inf):
                return LEARN_BAD_WEIGHTS
            if w > 0.0:
                learned = True
    if not learned:
        return LEARN_OK
    opt, lrn, model, work = st.options, st.learners, st.model, st.work
    _learn_scaling(x, st)
    _scaled(x, st)
    y = work.y
    for i in range(n_learners):
        total = 0.0
        for c in range(k):
            w = weights[i, c]
            y[c] = w > 0.0
            total += w
        if total == 0.0:
            continue
        budget = lrn.C[i] * lrn.multiplier[i] * total
        if budget > opt.c_max:
            budget = opt.c_max
        if not budget > 0.0:  # underflow
            continue
        n = _row(st, i)
        model.trials[i] += 1
        theta = model.theta[i]
        if opt.average:
            for p in range(n):
                for c in range(k):
                    work.before[p, c] = theta[work.idx[p], c]
        ranker = RK.State(
            theta, model.log_norm[i], model.norm_error[i], opt.entropy, opt.update,
            budget, lrn.margin[i], lrn.tie_key[i], model.pdip_hist[i],
        )  # fmt: skip
        mistake, updated, _ = RK.trial(
            work.idx[:n], work.val[:n], y, model.trials[i], ranker, work.sc
        )
        model.mistakes[i] += mistake
        model.updates[i] += updated
        if opt.average and updated:
            t = model.trials[i]
            theta_sum = model.theta_sum[i]
            for p in range(n):
                j = work.idx[p]
                for c in range(k):
                    theta_sum[j, c] += t * (theta[j, c] - work.before[p, c])
    return LEARN_OK
