"""The user an evaluation plays for a top-k booster: shown a ranking, it clicks.

Under top-k feedback (Raman, Zhang, Jung & Tewari 2020, Sec. 2) the booster shows a ranking and
learns only the relevance of the ``k`` labels on top. An evaluation that knows each example's
relevant set simulates the user: :func:`olboost.evaluate.train_test` and
:func:`olboost.evaluate.prequential` take ``feedback="topk"`` (the paper's user, who reveals the
truth) or a :class:`TopkUser`, whose :meth:`~TopkUser.clicks` says which of the shown labels are
marked relevant, so that a booster can be evaluated against another user (clicks missed, position
bias, noise) with the protocol unchanged.
"""

from __future__ import annotations

import numbers
from collections.abc import Collection, Hashable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from olboost.feedback import Impression

__all__ = ["TopkUser"]


class TopkUser:
    """A simulated user under top-k feedback, for the evaluation protocols.

    Shown a booster's ranking (an :class:`~olboost.feedback.Impression`), the user marks some of
    the ``k`` labels on top relevant: its clicks, from which the booster learns a
    :class:`~olboost.feedback.TopkFeedback` (nothing about the labels it did not show). The
    evaluator records the weighted rank loss of the ranking shown against the example's true
    relevant set, whatever the user clicks.

    This class is the paper's user (Raman et al. 2020, Sec. 2), who reveals the relevance of
    every shown label truthfully; ``feedback=TopkUser()`` is ``feedback="topk"``, to the bit (on
    a data set both run the booster's compiled array path). A subclass overrides :meth:`clicks`
    to model another user; the evaluator then plays it example by example in Python
    (``model.show_one(x)``, ``user.clicks(...)``, ``model.learn_one(x, impression.feedback(...))``),
    data sets included. Its clicks must be labels that were shown (anything else is a
    ``ValueError`` naming the example). A user that draws at random should draw from the seed and
    the impression's ``round`` (and ``key``), so that a rerun clicks the same.

    Parameters
    ----------
    k
        If given, the booster's ``k``, checked by the protocol as its ``k=`` argument is (the
        booster shows its own ``k`` labels).

    Examples
    --------
    A user who sees a relevant label at display position ``p`` (0 on top) and clicks it with
    probability ``1 / (p + 1)``, from draws that are a function of the round only:

    >>> import numpy as np
    >>> from olboost import TopkAdaptive, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> from olboost.feedback import TopkUser
    >>> class PositionBiased(TopkUser):
    ...     def clicks(self, impression, relevant):
    ...         u = np.random.default_rng([7, impression.round]).random(len(impression.labels))
    ...         return [label for p, label in enumerate(impression.labels)
    ...                 if label in relevant and u[p] < 1 / (p + 1)]
    >>> data = load("emotions")
    >>> model = TopkAdaptive(VFDTCommittee(n_features=5), learners=4, seed=1, k=3, rho=0.05)
    >>> paper = train_test(model.clone(), data.train, data.test, feedback="topk")
    >>> same = train_test(model.clone(), data.train, data.test, feedback=TopkUser(k=3))
    >>> same.rank_loss == paper.rank_loss
    True
    >>> biased = train_test(model.clone(), data.train, data.test, feedback=PositionBiased())
    >>> biased.n_test, biased.feedback
    (202, 'topk')
    """

    def __init__(self, k: int | None = None) -> None:
        if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
            raise ValueError(f"k must be None or an integer >= 1, got {k!r}")
        self.k = None if k is None else int(k)

    def clicks(self, impression: Impression, relevant: Collection[Hashable]) -> Iterable[Hashable]:
        """The shown labels the user marks relevant, for a booster that showed ``impression``
        on an example whose relevant labels are ``relevant`` (in the booster's labels). This
        user clicks exactly the relevant labels among :attr:`Impression.labels`."""
        return [label for label in impression.labels if label in relevant]

    @property
    def truthful(self) -> bool:
        """Whether :meth:`clicks` is this class's own (the paper's user), which the protocols
        may play in compiled code."""
        return type(self).clicks is TopkUser.clicks

    def __repr__(self) -> str:
        return f"{type(self).__name__}(k={self.k!r})"
