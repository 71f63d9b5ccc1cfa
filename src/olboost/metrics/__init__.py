"""Evaluation metrics for online multiclass classification and multi-label ranking.

The central metric is the rank loss of Jung & Tewari (2018, Sec. 3.1), with tied scores counting
one half:

- :func:`rank_loss` -- validated function for one score vector or an ``(n, k)`` batch;
- :func:`rank_loss_mask` -- the compiled kernel boosters call from their own Numba code;
- :class:`RankLoss` -- River-style running metric (``update(relevant, scores)``, ``get()``) that
  keeps both conventions for examples without relevant/irrelevant pairs; it takes a ranking
  learner's ``score_one`` output with a set of labels or River's ``{label: bool}`` as they are;
- :class:`RunningMean` -- the (weighted) running mean behind it, skipping NaN values;
- :func:`sample_sd` -- the spread of a result over seeds, as the experiment tables report it.

See :func:`rank_loss` for how this differs from :func:`sklearn.metrics.label_ranking_loss`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from olboost.metrics._rank import rank_loss, rank_loss_mask

__all__ = ["RankLoss", "RunningMean", "rank_loss", "rank_loss_mask", "sample_sd"]


def sample_sd(values: Collection[float]) -> float | None:
    """The sample standard deviation (``ddof=1``) of ``values``, the results of one
    configuration over seeds; ``None`` for fewer than two, whose spread is unknown (not 0).

    >>> sample_sd([0.25, 0.5, 0.75]), sample_sd([0.5]) is None
    (0.25, True)
    """
    if len(values) < 2:
        return None
    return float(np.std(np.asarray(values, dtype=float), ddof=1))


def _check_total(total: float, name: str, weight: float, before: float) -> None:
    """Raise a ``ValueError`` naming the weight ``name`` (of value ``weight``) if adding it to
    the total weight ``before`` gave the non-finite ``total``."""
    if not math.isfinite(total):
        raise ValueError(
            f"{name}={weight!r} would make the total weight overflow to infinity ({before!r} "
            "counted so far): scale the weights down"
        )


def _checked_weight(weight: float, name: str = "weight") -> float:
    """``weight`` as a float, checked finite and non-negative."""
    weight = float(weight)
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"{name} must be finite and non-negative, got {weight!r}")
    return weight


class RunningMean:
    """Weighted running mean that skips NaN values.

    NaN is how "leave this example out" is reported (e.g. ``rank_loss(..., empty="skip")``), so a
    NaN value changes nothing, not even :attr:`n`.

    Attributes
    ----------
    n
        Number of values counted (NaN values excluded).
    weight
        Total weight of the values counted.

    Examples
    --------
    >>> from olboost.metrics import RunningMean
    >>> mean = RunningMean()
    >>> for v in [1.0, float("nan"), 2.0]:
    ...     mean.update(v)
    >>> mean.get(), mean.n
    (1.5, 2)
    >>> mean.update(4.0, weight=2.0)
    >>> mean
    RunningMean: 2.7500
    """

    def __init__(self) -> None:
        self.n = 0
        self.weight = 0.0
        self._mean = 0.0

    def update(self, value: float, weight: float = 1.0) -> None:
        """Add ``value`` with a finite, non-negative ``weight``; a NaN ``value`` is skipped.

        Raises
        ------
        ValueError
            If ``weight`` is negative or not finite, if ``value`` is infinite, or if ``weight``
            would make the total weight overflow to infinity (the mean would then stop
            moving); nothing is counted.
        """
        value, weight = float(value), _checked_weight(weight)
        if math.isnan(value):
            return
        if math.isinf(value):
            raise ValueError(f"value must be finite or NaN (skipped), got {value!r}")
        total = self.weight + weight
        _check_total(total, "weight", weight, self.weight)
        self.n += 1
        self.weight = total
        if total > 0:
            share = weight / total
            step = value - self._mean
            # values of opposite signs near the float limit overflow their difference; the
            # same mean as a convex combination of the two cannot overflow
            if math.isfinite(step):
                self._mean += share * step
            else:
                self._mean = self._mean * (1.0 - share) + value * share

    def revert(self, value: float, weight: float = 1.0) -> None:
        """Take back a ``value`` added with ``weight`` (for a rolling window, River's
        ``utils.Rolling``); a NaN ``value`` is skipped, as it was when added.

        Raises
        ------
        ValueError
            If nothing is counted, or ``weight`` is negative, not finite or more than the
            total; nothing changes.
        """
        value, weight = float(value), _checked_weight(weight)
        if math.isnan(value):
            return
        # a weight as added may exceed the total by the total's rounding
        if self.n == 0 or weight > self.weight * (1.0 + 1e-12):
            raise ValueError(
                f"nothing to revert: {self.n} values counted, of total weight {self.weight!r}"
            )
        self.n -= 1
        rest = self.weight - weight
        if self.n == 0 or rest <= 0.0:  # what is left has no weight (rounding aside)
            self.weight = 0.0
            self._mean = 0.0
            return
        self._mean = (self._mean * self.weight - value * weight) / rest
        self.weight = rest

    def get(self) -> float:
        """The mean so far; NaN while no weight has been counted."""
        return self._mean if self.weight > 0 else math.nan

    def __repr__(self) -> str:
        return f"{type(self).__name__}: {self.get():.4f}"


class RankLoss:
    """Running mean of the rank loss (Jung & Tewari 2018, Sec. 3.1), River style.

    An example whose relevant set ``Y`` is empty or contains every label has no
    relevant/irrelevant pair, so its rank loss is undefined. The paper states no convention (its
    analysis leaves such examples out, its Table 2 lists mediamill-reduced with some); the
    authors' code, which made its tables, scores such an example 0 and counts it: the *paper*
    convention here. Leaving it out is the other sensible choice. This metric keeps both at
    once: :meth:`get` (and :attr:`paper`) is the paper convention, :attr:`skip` the
    mean over examples that have pairs; :attr:`n_paper` and :attr:`n_skip` count the examples
    behind each.

    Parameters
    ----------
    weighted
        Average the weighted loss ``w_Y * pairs`` (in [0, 1], the paper's) or the raw number of
        mis-ordered pairs.

    Notes
    -----
    :attr:`paper` differs from :func:`sklearn.metrics.label_ranking_loss` only in ties: sklearn
    counts a tied relevant/irrelevant pair as a full error, here it counts 1/2. Both give 0 to
    examples without pairs and average them in; sklearn has no equivalent of :attr:`skip`.

    Examples
    --------
    >>> from olboost.metrics import RankLoss
    >>> metric = RankLoss()
    >>> metric.update([0], [0.7, 0.2, 0.1])         # label 0 ranked first: 0
    >>> metric.update({1, 2}, [0.5, 0.3, 0.2])      # both relevant below label 0: 1
    >>> metric.update([True, False, False], [0.4, 0.4, 0.2])  # one tie out of 2 pairs: 0.25
    >>> metric.update([], [0.2, 0.3, 0.5])          # no pairs: 0 (paper) or left out (skip)
    >>> metric
    RankLoss: 0.3125
    >>> round(metric.paper, 4), metric.n_paper
    (0.3125, 4)
    >>> round(metric.skip, 4), metric.n_skip
    (0.4167, 3)

    With a ranking learner, ``score_one``'s dict goes in as it is, with the target as a set of
    labels or as River's ``{label: bool}`` (labels absent from it are irrelevant):

    >>> metric = RankLoss()
    >>> scores = {"sport": 0.9, "music": 0.1, "news": 0.5}   # e.g. model.score_one(x)
    >>> metric.update({"news"}, scores)                      # below sport: 1 pair of 2
    >>> metric.update({"sport": True, "music": False}, scores)   # first: 0
    >>> metric
    RankLoss: 0.2500
    """

    bigger_is_better = False

    def __init__(self, weighted: bool = True) -> None:
        if not isinstance(weighted, bool | np.bool_):
            raise TypeError(f"RankLoss.weighted must be a bool, got {weighted!r}")
        self.weighted = weighted
        self._paper = RunningMean()
        self._skip = RunningMean()

    def update(
        self,
        relevant: ArrayLike | Collection[Hashable] | int | Mapping[Any, bool],
        scores: ArrayLike | Mapping[Any, float],
        w: float = 1.0,
    ) -> None:
        """Add one example (1-D ``scores``, or a dict label -> score such as a ranking
        learner's ``score_one`` output) or a batch (2-D ``scores`` and ``(n, k)`` mask).

        ``relevant`` and ``scores`` are as in :func:`rank_loss`: with dict ``scores``,
        ``relevant`` is a set of labels or River's ``{label: bool}``. ``w`` weights every
        example added. Invalid input raises before anything is counted, as does a ``w`` that
        would make the total weight overflow to infinity.
        """
        losses, w = self._losses(relevant, scores, w)
        # the paper's mean counts every example (the skip one a subset), so its total is the
        # largest; summed as its updates will sum it, so that no update of a batch overflows
        total = self._paper.weight
        for _ in losses:
            total += w
        _check_total(total, "w", w, self._paper.weight)
        for loss in losses:
            self._skip.update(loss, w)
            self._paper.update(0.0 if math.isnan(loss) else loss, w)

    def revert(
        self,
        relevant: ArrayLike | Collection[Hashable] | int | Mapping[Any, bool],
        scores: ArrayLike | Mapping[Any, float],
        w: float = 1.0,
    ) -> None:
        """Take back an example (or a batch) added by :meth:`update` with the same arguments:
        the metric of a rolling window (River's ``utils.Rolling(RankLoss, window_size=...)``).
        Invalid input raises before anything changes."""
        losses, w = self._losses(relevant, scores, w)
        if len(losses) > self._paper.n or w * len(losses) > self._paper.weight * (1 + 1e-12):
            raise ValueError(
                f"nothing to revert: {self._paper.n} examples counted, {len(losses)} given"
            )
        for loss in losses:
            self._skip.revert(loss, w)
            self._paper.revert(0.0 if math.isnan(loss) else loss, w)

    def _losses(
        self,
        relevant: ArrayLike | Collection[Hashable] | int | Mapping[Any, bool],
        scores: ArrayLike | Mapping[Any, float],
        w: float,
    ) -> tuple[list[float], float]:
        """The examples' rank losses (NaN: no pair) and the checked weight ``w``."""
        losses = rank_loss(scores, relevant, weighted=self.weighted, empty="skip")
        w = _checked_weight(w, "w")
        return ([losses] if isinstance(losses, float) else losses.tolist()), w

    def works_with(self, model: Any) -> bool:
        """False: River's evaluation (``evaluate.progressive_val_score``) hands a metric the
        model's ``predict_one``, which says which labels are relevant but not their order,
        where the rank loss needs scores: update the metric with ``score_one``'s (see the
        examples)."""
        return False

    def is_better_than(self, other: RankLoss) -> bool:
        """Whether this metric's loss is lower than ``other``'s (River's metric protocol)."""
        return self.get() < other.get()

    def get(self) -> float:
        """The mean rank loss, paper convention (examples without pairs count as 0)."""
        return self._paper.get()

    @property
    def paper(self) -> float:
        """Mean with examples without pairs counted as 0 (same as :meth:`get`)."""
        return self._paper.get()

    @property
    def skip(self) -> float:
        """Mean over the examples that have at least one relevant/irrelevant pair."""
        return self._skip.get()

    @property
    def n_paper(self) -> int:
        """Number of examples behind :attr:`paper` (all of them)."""
        return self._paper.n

    @property
    def n_skip(self) -> int:
        """Number of examples behind :attr:`skip` (those with pairs)."""
        return self._skip.n

    def clone(self) -> RankLoss:
        """A fresh metric with the same parameters."""
        return type(self)(weighted=self.weighted)

    def __repr__(self) -> str:
        return f"{type(self).__name__}: {self.get():.4f}"
