"""What a booster learns from after it has made its prediction.

Under *full feedback* the whole relevant set ``Y_t`` is revealed (Jung & Tewari 2018). Under *top-k
feedback* (Raman, Zhang, Jung & Tewari 2020) only the relevance of the ``k`` labels the learner
showed on top is revealed, and the booster must build unbiased estimates from them. Boosters receive
their feedback as one of these objects, so a new feedback model plugs in without changing their API:
``learn_one(x, y)`` wraps a label set into :class:`FullFeedback`.

A top-k booster (:class:`olboost.TopkBBM`, :class:`olboost.TopkAdaptive`) hands back what it
showed as an :class:`Impression`: the ``k`` labels on top of its randomised ranking and the exact
probabilities, under the draw that showed them, that each pair of them would be shown (the logged
propensities; :mod:`olboost.feedback.exploration`). The clicks on those labels make a
:class:`TopkFeedback` (:meth:`Impression.feedback`), which holds nothing about any other label, so
a booster cannot see the relevance of a label it did not show. Feedback may arrive late, after
other examples were learned: the estimates stay unbiased, since they use the probabilities of the
draw that was shown.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "MIN_PAIR_PROBABILITY",
    "Feedback",
    "FullFeedback",
    "Impression",
    "TopkFeedback",
    "TopkUser",
]


def is_bool(value: object) -> bool:
    """Whether ``value`` is a bool (Python's or NumPy's), which equals 0 or 1 as a dict key: no
    label or class of another type is taken for it, nor it for one."""
    return isinstance(value, bool | np.bool_)


def bool_apart(value: Hashable) -> tuple[Hashable, bool]:
    """``value`` as a dict or set key that tells a bool from the 0 or 1 it equals (:func:`is_bool`):
    no label, class or column name of one type is found for the other."""
    return value, is_bool(value)


def is_positions(values: Iterable[Hashable]) -> bool:
    """Whether ``values`` are ``0, 1, ..., n - 1`` in order (numbers equal to them, no bool):
    positions, as pandas numbers unnamed columns and ``labels=k`` numbers labels."""
    keys = [bool_apart(v) for v in values]
    return keys == [(j, False) for j in range(len(keys))]


class Feedback:
    """Base class of the feedback a booster receives for one example."""

    #: True when the feedback reveals the relevance of every label.
    full: bool = False


#: Smallest pair probability a :class:`TopkFeedback` may carry. The unbiased estimates divide
#: by it (Raman et al. 2020, eq. 1), and a booster with ``clip_probability=None`` passes them on
#: as weights: with 1e-310 a weight overflowed once multiplied, and the learners refused it
#: after the booster had learned the example. The exploration schemes' probabilities are far
#: above (uniform: at least ``rho k (k - 1) / (m (m - 1))``, 6e-14 for a million labels at
#: ``rho = 0.01``, ``k = 3``).
MIN_PAIR_PROBABILITY = 1e-100


@dataclass(frozen=True)
class FullFeedback(Feedback):
    """The relevance of every label: ``relevant`` is a boolean mask over the booster's labels.

    An empty mask (no relevant label) and a full mask are allowed; for both the paper's rank loss is
    0 and the example carries no pairwise information.
    """

    relevant: np.ndarray
    full = True

    def __post_init__(self) -> None:
        mask = np.asarray(self.relevant)
        if mask.ndim != 1 or mask.dtype != np.bool_:
            raise TypeError("FullFeedback.relevant must be a 1-D boolean mask over the labels")
        object.__setattr__(self, "relevant", mask)


@dataclass(frozen=True, eq=False)
class TopkFeedback(Feedback):
    """Top-k feedback (Raman et al. 2020, Sec. 2.1): the relevance of the ``k`` labels shown.

    Attributes
    ----------
    shown
        The shown labels' indices in the booster's label order, in display order (int64, ``k``).
    relevant
        ``relevant[i]``: whether ``shown[i]`` is relevant (boolean, ``k``).
    probs
        ``probs[i, j] = Pr[shown[i], shown[j] in T^k(r~)]`` under the draw that showed them,
        ``(k, k)``, symmetric, in ``[MIN_PAIR_PROBABILITY, 1]`` (the diagonal is 1 and unused).
    source
        The id of the model whose impression this answers (:attr:`Impression.source`), or
        ``None`` for feedback built by hand, which any model with the same labels accepts.

    Nothing else is held: the relevance of labels that were not shown is unknown.
    """

    shown: np.ndarray
    relevant: np.ndarray
    probs: np.ndarray
    source: str | None = None

    def __post_init__(self) -> None:
        # copies, checked and kept: a record that shared the caller's buffer took on whatever
        # was written there later (late feedback logged from one reused array all read the
        # last propensities, or a 0 that the checks had not seen)
        shown, relevant, probs = _checked(
            np.array(self.shown), np.array(self.relevant), np.array(self.probs)
        )
        object.__setattr__(self, "shown", shown.astype(np.int64, copy=False))
        object.__setattr__(self, "relevant", relevant)
        object.__setattr__(self, "probs", np.ascontiguousarray(probs, dtype=np.float64))

    def check(self) -> None:
        """Raise, as the constructor does, if the arrays no longer hold valid feedback: the
        record is frozen but its arrays are not, and a booster checks them again before it
        learns them (a probability written over with 0 or a label shown twice)."""
        _checked(self.shown, self.relevant, self.probs)


def _checked(
    shown: np.ndarray, relevant: np.ndarray, probs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(shown, relevant, probs)`` if they are valid :class:`TopkFeedback` arrays, or a
    ``TypeError`` / ``ValueError`` naming what is not."""
    if shown.ndim != 1 or not np.issubdtype(shown.dtype, np.integer):
        raise TypeError("TopkFeedback.shown must be a 1-D array of label indices")
    if relevant.ndim != 1 or relevant.dtype != np.bool_:
        raise TypeError("TopkFeedback.relevant must be a 1-D boolean mask over those shown")
    k = shown.shape[0]
    if relevant.shape[0] != k:
        raise ValueError(
            f"TopkFeedback: relevant has {relevant.shape[0]} entries for {k} shown labels"
        )
    if len(set(shown.tolist())) != k:
        raise ValueError(f"TopkFeedback: a label is shown twice: {shown.tolist()}")
    if k and (int(shown.min()) < 0 or int(shown.max()) > np.iinfo(np.int64).max):
        # an index is a position in the label order: a uint64 of 2^63 or more was taken as a
        # negative int64, and the booster named an index the caller never passed
        raise ValueError(
            f"TopkFeedback.shown must hold label indices, 0 or more, got {shown.tolist()}"
        )
    if probs.shape != (k, k) or not np.issubdtype(probs.dtype, np.floating):
        raise ValueError(f"TopkFeedback.probs must be a ({k}, {k}) float array")
    if not (np.all(probs > 0.0) and np.all(probs <= 1.0)):
        raise ValueError("TopkFeedback.probs must lie in (0, 1]")
    if np.any(probs < MIN_PAIR_PROBABILITY):
        raise ValueError(
            f"TopkFeedback.probs must be at least {MIN_PAIR_PROBABILITY:g} "
            "(MIN_PAIR_PROBABILITY): the estimates divide by them (eq. 1), and smaller ones "
            f"would make the weak learners' weights overflow; got {float(probs.min())!r}"
        )
    if not np.array_equal(probs, probs.T):
        raise ValueError("TopkFeedback.probs must be symmetric")
    return shown, relevant, probs


@dataclass(frozen=True, eq=False)
class Impression:
    """What a top-k booster showed for one example: a record to log beside the request and to
    build the feedback from once the clicks are known (see :meth:`feedback`).

    Attributes
    ----------
    ranking
        The whole randomised ranking that was shown, best first (labels).
    labels
        Its top ``k``: the labels whose relevance the user reveals, in display order.
    shown
        Their indices in the booster's label order.
    probs
        The exact pair inclusion probabilities of the draw (``(k, k)``, as in
        :class:`TopkFeedback`): the logged propensities.
    round
        The round the draw belongs to (the model had learned ``round - 1`` examples).
    key
        The caller's key of the draw (0 when none was given).
    explored
        Whether the draw explored (for diagnostics; the estimates do not use it).
    source
        The id of the model that showed it.
    scores
        The model's scores of the shown labels (in display order): its own order of them,
        which the draw may have changed. An unbiased estimate of the model's loss (eq. 1)
        compares the feedback with this order, not with the display's, whose order depends on
        the draw.
    """

    ranking: tuple[Hashable, ...]
    labels: tuple[Hashable, ...]
    shown: np.ndarray
    probs: np.ndarray
    round: int
    key: int
    explored: bool
    source: str
    scores: np.ndarray | None = None

    def __post_init__(self) -> None:
        # read-only copies: the record is what was shown, and feedback() maps the clicked
        # labels to indices through it (a shown array written over in place mapped clicks to
        # labels that were never shown)
        for name in ("shown", "probs", "scores"):
            value = getattr(self, name)
            if value is not None:
                kept = np.array(value)
                kept.setflags(write=False)
                object.__setattr__(self, name, kept)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # pickle and deepcopy restore the fields without __post_init__: unpickled arrays are
        # writable again
        self.__dict__.update(state)
        self.__post_init__()

    def feedback(self, clicked: Iterable[Hashable] | Mapping[Any, bool]) -> TopkFeedback:
        """The feedback of a user who found the labels ``clicked`` relevant (a subset of
        :attr:`labels`, possibly empty) and the other shown labels irrelevant. ``clicked`` may
        also be River's ``{label: bool}`` over shown labels, as ``learn_one`` takes a target:
        the labels mapped to ``True`` were clicked."""
        if isinstance(clicked, str | bytes):
            # iterated, a string is its characters: feedback("news") clicked 'n', 'e', 'w', 's'
            raise TypeError(
                f"clicked must be a collection of shown labels, not a {type(clicked).__name__}"
                f" ({clicked!r}): pass [{clicked!r}] for one label"
            )
        position = {label: i for i, label in enumerate(self.labels)}
        relevant = np.zeros(len(self.labels), dtype=np.bool_)
        if isinstance(clicked, Mapping):
            # iterated, a dict is its keys: {label: False} was a click on label
            pairs = list(clicked.items())
            for label, value in pairs:
                if not is_bool(value):
                    raise TypeError(
                        f"clicked maps labels to bools ({{label: bool}}); label {label!r} maps "
                        f"to {type(value).__name__} {value!r}"
                    )
        elif isinstance(clicked, Iterable):
            pairs = [(label, True) for label in clicked]
        else:  # None said "'NoneType' object is not iterable"
            raise TypeError(
                "clicked must be a collection of shown labels (possibly empty: no click) or a "
                f"{{label: bool}} mapping, got {type(clicked).__name__} {clicked!r}"
            )
        for label, value in pairs:
            try:
                i = position[label]
            except (KeyError, TypeError):
                i = None
            # True == 1 as a dict key: feedback([True]) clicked the shown label 1
            if i is None or is_bool(label) != is_bool(self.labels[i]):
                raise ValueError(
                    f"clicked label {label!r} was not shown; shown: {list(self.labels)}"
                )
            if relevant[i]:
                raise ValueError(f"clicked label {label!r} is repeated")
            relevant[i] = bool(value)
        return TopkFeedback(self.shown, relevant, self.probs, self.source)


# at the end: the users module names Impression in its annotations only
from olboost.feedback.users import TopkUser  # noqa: E402
