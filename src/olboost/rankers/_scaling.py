"""Running feature scaling for the linear label rankers (compiled kernels).

The label rankers' weights are linear in the features, so attributes on very different scales
(e.g. *emotions*, from -99 to 237) weigh unalike, and the entropy takes features in [0, 1] only.
Both :class:`olboost.rankers.LabelRanker` and :class:`olboost.weak.LinearCommittee` can map each
attribute, online, from statistics of the values learned so far (never of later ones):

* :data:`STANDARD`: ``(x - mean) / sd``, with the running mean and population standard deviation
  (Welford's updates), 0 while ``sd`` is 0, and held within the features' bound
  :data:`~olboost.online.inputs.MAX_ABS_FEATURE` (a z-score beyond 1e100, of a deviation of
  many subnormal standard deviations, would take scores past float64's range);
* :data:`MINMAX`: ``(x - lo) / (hi - lo)`` clipped to [0, 1], ``lo`` and ``hi`` the smallest and
  largest values so far, 0 while ``hi <= lo``;
* :data:`NO_SCALING`: the value as given (under the entropy taken to [0, 1]: values outside it
  by more than a rescaler's rounding are refused before they reach here).

A missing value (NaN) is 0, absent (the committee's trees take missing values; the rankers
refuse them before). The statistics move before an example is learned (:func:`learn_scaling`,
then :func:`scale_into`, as River's pipelines update a scaler before transforming the example
they learn), and never when predicting.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from olboost.online.inputs import MAX_ABS_FEATURE

__all__ = [
    "MINMAX",
    "NO_SCALING",
    "SCALES",
    "STANDARD",
    "Scaling",
    "learn_scaling",
    "scale_into",
]

#: How attribute values are mapped before the rankers read them.
NO_SCALING, MINMAX, STANDARD = 0, 1, 2

#: The ``scale`` parameter's values.
SCALES = {"none": NO_SCALING, "minmax": MINMAX, "standard": STANDARD}

#: A label ranker's scaling: ``scale`` and its statistics, one per attribute (the ranker's own
#: arrays, updated in place).
Scaling = namedtuple("Scaling", ["scale", "lo", "hi", "count", "mean", "m2"])


@numba.njit(cache=True)
def scale_into(
    x: np.ndarray,
    scale: int,
    entropy: bool,
    lo: np.ndarray,
    hi: np.ndarray,
    count: np.ndarray,
    mean: np.ndarray,
    m2: np.ndarray,
    xs: np.ndarray,
) -> None:
    """The example ``x`` as the rankers read it, into ``xs`` (module docstring); the
    statistics are ``lo``, ``hi`` (:data:`MINMAX`) and ``count``, ``mean``, ``m2``
    (:data:`STANDARD`), one per attribute, and are not changed."""
    for j in range(x.shape[0]):
        v = x[j]
        if v != v:
            u = 0.0
        elif scale == STANDARD:
            sd = np.sqrt(m2[j] / count[j]) if count[j] > 0.0 else 0.0
            u = (v - mean[j]) / sd if sd > 0.0 else 0.0
            if not abs(u) < np.inf:  # an overflowed deviation
                u = 0.0
            # a deviation of many tiny standard deviations (a value far from the few, nearly
            # equal ones learned) is held to the features' bound, which keeps scores finite
            u = min(max(u, -MAX_ABS_FEATURE), MAX_ABS_FEATURE)
        elif scale == MINMAX:
            span = hi[j] - lo[j]
            u = (v - lo[j]) / span if span > 0.0 else 0.0
            if not u >= 0.0:  # below the range, or an overflowed span
                u = 0.0
            elif u > 1.0:
                u = 1.0
        elif entropy:  # within the slack of [0, 1], or refused: read as the bound
            u = min(max(v, 0.0), 1.0)
        else:
            u = v
        xs[j] = u


@numba.njit(cache=True)
def learn_scaling(
    x: np.ndarray,
    scale: int,
    lo: np.ndarray,
    hi: np.ndarray,
    count: np.ndarray,
    mean: np.ndarray,
    m2: np.ndarray,
) -> None:
    """Move the scaling statistics by the example ``x`` (missing values skipped)."""
    for j in range(x.shape[0]):
        v = x[j]
        if v != v:
            continue
        if scale == MINMAX:
            if v < lo[j]:
                lo[j] = v
            if v > hi[j]:
                hi[j] = v
        elif scale == STANDARD:
            count[j] += 1.0
            delta = v - mean[j]
            mean[j] += delta / count[j]
            m2[j] += delta * (v - mean[j])
