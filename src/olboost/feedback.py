"""What a booster learns from after it has made its prediction.

Under *full feedback* the whole relevant set ``Y_t`` is revealed (Jung & Tewari 2018). Under *top-k
feedback* (Raman, Zhang, Jung & Tewari 2020) only the relevance of the ``k`` labels the learner
showed on top is revealed, and the booster must build unbiased estimates from them. Boosters receive
their feedback as one of these objects, so a new feedback model plugs in without changing their API:
``learn_one(x, y)`` wraps a label set into :class:`FullFeedback`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Feedback", "FullFeedback"]


class Feedback:
    """Base class of the feedback a booster receives for one example."""

    #: True when the feedback reveals the relevance of every label.
    full: bool = False


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
