"""Randomised rankings for top-k feedback and the unbiased pairwise estimates they allow
(Raman, Zhang, Jung & Tewari 2020, Sec. 2.2, eq. 1, App. B.1).

A top-k learner shows a ranking and learns the relevance of its top ``k`` labels only. To estimate
a pairwise-decomposable loss ``L(s, R) = sum_{a in R} sum_{b notin R} f(s[a], s[b])`` it randomises
the ranking it shows, so that every pair of labels has a positive probability of being shown
together, and weights each shown pair by the inverse of that probability (eq. 1):

    L^(s, R) = sum_{a in R, b notin R} 1(a, b in T^k(r~)) / Pr[a, b in T^k(r~)] f(s[a], s[b]),

an unbiased estimate of ``L`` (Lemma 5). The two exploration schemes of the paper are objects
with a parameter ``rho`` (the exploration rate): :class:`UniformExploration` (Sec. 2.2) and
:class:`SingleSwapExploration` (App. B.1). Each gives the randomised ranking from the deterministic
one with random numbers that are a pure function of a seed, the round and an optional key, and the
exact pair inclusion probabilities (closed forms, no sampling; see
:func:`olboost.feedback._kernels.pair_probability`).

Examples
--------
>>> import numpy as np
>>> from olboost.feedback.exploration import UniformExploration, unbiased_estimate
>>> explore = UniformExploration(rho=0.1)
>>> P = explore.pair_probabilities([2, 0, 1, 3], k=2)     # labels 2 and 0 on top
>>> round(float(P[0, 2]), 6), round(float(P[0, 1]), 6)
(0.916667, 0.016667)
>>> [explore.draw([2, 0, 1, 3], k=2, seed=0, round=t).tolist() for t in (7, 8)]   # 8 explores
[[2, 0, 1, 3], [2, 1, 0, 3]]
>>> from olboost.feedback import TopkFeedback
>>> fb = TopkFeedback(shown=[2, 0], relevant=[True, False], probs=P[np.ix_([2, 0], [2, 0])])
>>> round(unbiased_estimate([0.1, 0.0, 0.5, 0.2], fb, "rank"), 6)       # 1 / P[2, 0] * 0
0.0
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from olboost._random import MAX_KEY, STREAMS, draw_key, seed_key
from olboost.base import Estimator, Interval
from olboost.feedback import MIN_PAIR_PROBABILITY, TopkFeedback
from olboost.feedback import _kernels as K

__all__ = [
    "Exploration",
    "SingleSwapExploration",
    "UniformExploration",
    "exploration_from",
    "unbiased_estimate",
]

_PAIR_FUNCTIONS = {"rank": K.TOPK_RANK, "hinge": K.TOPK_HINGE, "logistic": K.TOPK_LOGISTIC}


class Exploration(Estimator):
    """Base class of the exploration schemes: with probability ``rho`` the shown ranking is drawn
    at random around the deterministic one."""

    _scheme: int
    #: The smallest ``k`` the scheme supports.
    min_k: int = 2

    def __init__(self, rho: float = 0.02):
        self.rho = rho
        self._validate_params()

    def check_k(self, m: int, k: int) -> None:
        """Raise ``ValueError`` unless ``min_k <= k <= m`` (and ``m >= 2``) and every pair of
        the ``m`` labels is shown together with probability at least
        :data:`~olboost.feedback.MIN_PAIR_PROBABILITY` (not so with a tiny ``rho`` at many
        labels); ``TypeError`` if ``k`` is not an int."""
        name = type(self).__name__
        _check_int(f"{name}: k", k)
        if m < 2:
            raise ValueError(f"{name}: top-k feedback needs at least 2 labels, got {m}")
        if not self.min_k <= k <= m:
            raise ValueError(
                f"{name}: k must be in [{self.min_k}, m={m}], got {k}"
                + (" (Lemma 5: a pair must be shown together)" if k < 2 else "")
                + (" (App. B.1, Lemma 10: single swap needs k >= 3)" if 2 <= k < self.min_k else "")
            )
        # A pair's feedback is weighed by the inverse of its probability (eq. 1): one below the
        # floor that TopkFeedback takes would be refused (or the label never shown at all) on
        # the rare rounds that explore it, long after the model started.
        sides = [(True, True)]
        if k < m:
            sides.append((True, False))
        if m - k >= 2:
            sides.append((False, False))
        rho, m_, k_ = float(self.rho), int(m), int(k)
        least = min(K.pair_probability(self._scheme, rho, m_, k_, a, b) for a, b in sides)
        if not least >= MIN_PAIR_PROBABILITY:
            raise ValueError(
                f"{name}: rho={self.rho!r} is too small for m={m} labels and k={k}: a pair of "
                f"labels would be shown together with probability {least:.3g}, below "
                f"MIN_PAIR_PROBABILITY ({MIN_PAIR_PROBABILITY:g}), the least whose feedback "
                "the estimates of eq. 1 can weigh"
            )

    def _ranking(self, ranking: ArrayLike, k: int) -> np.ndarray:
        r = np.asarray(ranking)
        if r.ndim != 1 or not np.issubdtype(r.dtype, np.integer):
            raise TypeError("ranking must be a 1-D array of label indices")
        m = r.shape[0]
        if sorted(r.tolist()) != list(range(m)):
            raise ValueError(f"ranking must be a permutation of 0..{m - 1}")
        self.check_k(m, k)
        return r.astype(np.int64)

    def draw(self, ranking: ArrayLike, k: int, seed: int, round: int, key: int = 0) -> np.ndarray:
        """The randomised ranking shown in round ``round`` from the deterministic ``ranking``
        (label indices, best first): a pure function of ``(seed, round, key)``, the draw a top-k
        booster seeded with ``seed`` makes (:meth:`olboost.TopkBBM.show_one`). ``seed`` is an
        int ``>= 0``, ``round`` an int in ``[0, 2^63)`` and ``key`` an int in ``[0, 2^64)``
        (``None``: 0); anything else raises ``TypeError`` or ``ValueError``."""
        name = type(self).__name__
        seed = _check_int(f"{name}.draw: seed", seed, 0)
        round = _check_int(f"{name}.draw: round", round, 0, _MAX_ROUND)
        key = 0 if key is None else _check_int(f"{name}.draw: key", key, 0, MAX_KEY)
        r = self._ranking(ranking, k).copy()
        # uniform 0 of a round is a booster's own draw (Hedge's expert); exploration starts at 1
        K.randomise_ranking(r, k, self._scheme, float(self.rho), self._key(seed, round, key), 1)
        return r

    @staticmethod
    def _key(seed: int, round: int, key: int) -> np.uint64:
        return np.uint64(draw_key(seed_key(seed, STREAMS["exploration"]), round, np.uint64(key)))

    def pair_probabilities(self, ranking: ArrayLike, k: int) -> np.ndarray:
        """``P[a, b] = Pr[a, b in T^k(r~)]`` for every pair of labels (indices), given the
        deterministic ``ranking``; exact. The diagonal holds ``Pr[a in T^k(r~)]``."""
        r = self._ranking(ranking, k)
        m = r.shape[0]
        top = np.zeros(m, dtype=np.bool_)
        top[r[:k]] = True
        P = np.empty((m, m))
        for a in range(m):
            P[a, a] = self._single(m, k, bool(top[a]))
            for b in range(a + 1, m):
                P[a, b] = P[b, a] = K.pair_probability(
                    self._scheme, float(self.rho), m, k, bool(top[a]), bool(top[b])
                )
        return P

    def _single(self, m: int, k: int, on_top: bool) -> float:
        raise NotImplementedError


class UniformExploration(Exploration):
    """Uniform exploration (Raman et al. 2020, Sec. 2.2): with probability ``rho`` a uniformly
    random permutation of the labels is shown instead of the deterministic ranking.

    ``Pr[a, b in T^k] = (1 - rho) 1(a, b in V) + rho k (k - 1) / (m (m - 1))``, ``V`` the
    deterministic top ``k``.

    Parameters
    ----------
    rho
        The exploration rate, in (0, 1).

    Examples
    --------
    >>> explore = UniformExploration(rho=0.5)
    >>> round(float(explore.pair_probabilities([0, 1, 2], k=2)[0, 1]), 6)   # 0.5 + 0.5 * 2 / 6
    0.666667
    """

    _scheme = K.UNIFORM
    _param_constraints = {"rho": Interval(0, 1, closed="neither")}

    def _single(self, m: int, k: int, on_top: bool) -> float:
        rho = float(self.rho)  # a NumPy float32 rho would give float32 probabilities
        return (1.0 - rho) * on_top + rho * k / m


class SingleSwapExploration(Exploration):
    """Single-swap exploration (Raman et al. 2020, App. B.1): with probability ``rho``, a label
    of the top ``k`` swaps places with a label ranked below ``k`` (both drawn uniformly), twice in
    succession. It moves at most ``2m`` pairs (uniform exploration may reverse all of them) and
    needs ``k >= 3`` and, for Lemma 10's bound, ``rho < 0.25``.

    Parameters
    ----------
    rho
        The exploration rate, in (0, 0.25).

    Examples
    --------
    >>> explore = SingleSwapExploration(rho=0.2)
    >>> P = explore.pair_probabilities([0, 1, 2, 3, 4], k=3)
    >>> round(float(P[3, 4]), 6)     # both below: 0.2 * 2 (k - 1) / (k (m - k)^2)
    0.066667
    """

    _scheme = K.SINGLE_SWAP
    min_k = 3
    _param_constraints = {
        "rho": Interval(
            0, 0.25, closed="neither", why="Lemma 10's condition, Raman et al. 2020, App. B.1"
        )
    }

    def _single(self, m: int, k: int, on_top: bool) -> float:
        if k >= m:
            return 1.0
        K_, M = float(k), float(m - k)
        if on_top:
            explored = ((K_ - 1) / K_) ** 2 + 1.0 / (K_ * M)
        else:
            explored = (K_ - 1) / (K_ * M) + (M - 1) / (M * M)
        rho = float(self.rho)  # a NumPy float32 rho would give float32 probabilities
        return (1.0 - rho) * on_top + rho * explored


_MAX_ROUND = 2**63 - 1


def _check_int(what: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int, or a ``TypeError`` (not an int; a bool is not taken for one) or a
    ``ValueError`` (outside ``[lo, hi]``) naming ``what``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(
            f"{what} must be in [{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            f", got {value}"
        )
    return int(value)


def _scheme_members(scheme: type) -> list[str]:
    """What a scheme of olboost's does itself, by name (its members and :class:`Exploration`'s).
    The boosters' compiled code does the same from the scheme's number and rho, so a subclass
    that does any of it otherwise would be ignored, or (a smaller ``min_k``, a looser
    ``check_k``) run the compiled code where it is not valid."""
    return sorted(
        {
            name
            for cls in (Exploration, scheme)
            for name in vars(cls)
            if not name.startswith("__") and name != "_param_constraints"
        }
    )


def exploration_from(exploration: Exploration | str, rho: float | None) -> Exploration:
    """The exploration object of a booster's parameters: an :class:`Exploration` (used as it is;
    ``rho`` must then be ``None``) or ``"uniform"`` / ``"single-swap"`` with ``rho``.

    The boosters draw and weigh in compiled code, from the scheme and ``rho`` alone: a subclass
    that draws, weighs or checks otherwise (overriding ``draw``, ``pair_probabilities``,
    ``check_k``, ``min_k`` or any other member of its scheme and of :class:`Exploration`) is a
    ``TypeError``, where its methods were silently left unused."""
    if isinstance(exploration, Exploration):
        if rho is not None:
            raise ValueError("give rho either in the exploration object or as rho, not both")
        scheme = next(
            (c for c in (UniformExploration, SingleSwapExploration) if isinstance(exploration, c)),
            None,
        )
        cls = type(exploration)
        name = cls.__name__
        if scheme is None:
            raise TypeError(
                f"exploration={name}(...) is neither UniformExploration nor "
                "SingleSwapExploration, the schemes the boosters' compiled code draws from"
            )
        own = [m for m in _scheme_members(scheme) if getattr(cls, m) is not getattr(scheme, m)]
        if own:
            raise TypeError(
                f"exploration={name}(...) overrides {own} of {scheme.__name__}; the boosters "
                "draw and weigh in compiled code, for the ranges of k the scheme takes, from "
                "the scheme and rho alone, and would leave them unused"
            )
        return exploration
    schemes = {"uniform": UniformExploration, "single-swap": SingleSwapExploration}
    if exploration not in schemes:
        raise ValueError(
            f"exploration must be an Exploration or one of {sorted(schemes)}, got {exploration!r}"
        )
    return schemes[exploration](0.02 if rho is None else rho)


def unbiased_estimate(
    s: ArrayLike,
    feedback: TopkFeedback,
    f: str | Callable[[float, float], float] = "rank",
) -> float:
    """The unbiased estimate of eq. 1 of ``L(s, R) = sum_{a in R, b notin R} f(s[a], s[b])``
    from top-k feedback: the shown relevant/irrelevant pairs, each weighted by ``1 /
    Pr[a, b in T^k]``.

    Parameters
    ----------
    s
        Scores of every label (length ``m``).
    feedback
        What was shown and which of it is relevant.
    f
        ``"rank"`` (``1(s[a] <= s[b])``, the paper's unweighted rank loss), ``"hinge"`` (``(1 +
        s[b] - s[a])_+``), ``"logistic"`` (``log(1 + exp(s[b] - s[a]))``) or any function
        ``f(s_a, s_b)`` of a relevant ``a`` and an irrelevant ``b``.
    """
    s = np.asarray(s, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError("s must be a 1-D score vector")
    if not np.all(np.isfinite(s)):
        j = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"s must be finite (no NaN or infinity), got {s[j]} at label {j}")
    if not isinstance(feedback, TopkFeedback):
        raise TypeError(f"feedback must be a TopkFeedback, got {type(feedback).__name__}")
    feedback.check()  # its arrays may have been written since it was made
    shown = feedback.shown
    if shown.size and (shown.min() < 0 or shown.max() >= s.shape[0]):
        raise ValueError(f"feedback shows a label outside 0..{s.shape[0] - 1}")
    s_shown = np.ascontiguousarray(s[shown])
    if isinstance(f, str):
        if f not in _PAIR_FUNCTIONS:
            raise ValueError(f"f must be a callable or one of {sorted(_PAIR_FUNCTIONS)}, got {f!r}")
        code = _PAIR_FUNCTIONS[f]
        return float(K.estimate_pairwise(s_shown, feedback.relevant, feedback.probs, code))
    if not callable(f):
        raise TypeError(f"f must be a callable or one of {sorted(_PAIR_FUNCTIONS)}, got {f!r}")
    rel = feedback.relevant
    total = 0.0
    for i in np.flatnonzero(rel):
        for j in np.flatnonzero(~rel):
            s_a, s_b = float(s_shown[i]), float(s_shown[j])
            value = f(s_a, s_b)
            # what f gives goes into the estimate as it is: NaN, an infinity or an array came
            # back as the estimate, a string as NumPy's bare ufunc error. A truth value is the
            # indicator it is (the rank loss's 1(s_a <= s_b), written as the comparison).
            if isinstance(value, np.bool_):
                value = bool(value)
            if not isinstance(value, numbers.Real):
                raise TypeError(
                    f"f({s_a!r}, {s_b!r}) of the pair ({shown[i]}, {shown[j]}) must be a real "
                    f"number, got {type(value).__name__}"
                )
            if not np.isfinite(value):
                raise ValueError(
                    f"f({s_a!r}, {s_b!r}) of the pair ({shown[i]}, {shown[j]}) must be finite, "
                    f"got {value!r}"
                )
            total += float(value) / feedback.probs[i, j]
    return float(total)
