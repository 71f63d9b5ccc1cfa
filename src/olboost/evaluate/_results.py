"""The results of the evaluation protocols: :class:`Evaluation` (rank losses of a multi-label
ranker) and :class:`ClassificationEvaluation` (accuracy of a multiclass classifier)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class Evaluation:
    """Outcome of an evaluation protocol.

    Attributes
    ----------
    losses
        Rank loss of every evaluated (test) example, paper convention. Under top-k feedback, the
        weighted rank loss of the ranking the model showed.
    losses_skip
        The same with NaN where the example has no relevant/irrelevant pair.
    n_train, n_test
        Examples in the train split (each learned ``loops`` times, not reported), and evaluated
        examples.
    seconds_train, seconds_test
        Wall-clock time of each phase (all the training passes; the test phase includes learning
        from test examples).
    compile_seconds
        Wall-clock time of the :func:`warm_up` run before the clock started (compiling the
        kernels or loading them from Numba's cache), or ``None`` when there was none.
    train_losses
        Rank loss (paper convention) of every example of the training passes, scored before it
        was learned, in stream order (``n_train * loops`` values).
    loops
        Passes over the train split.
    feedback
        ``"full"`` or ``"topk"``: what the model learned from.
    """

    losses: np.ndarray
    losses_skip: np.ndarray
    n_train: int
    n_test: int
    seconds_train: float
    seconds_test: float
    extra: dict[str, Any] = field(default_factory=dict)
    compile_seconds: float | None = None
    train_losses: np.ndarray = field(default_factory=lambda: np.empty(0))
    loops: int = 1
    feedback: str = "full"

    @property
    def rank_loss(self) -> float:
        """Mean test rank loss, paper convention (examples without pairs count as 0)."""
        return float(self.losses.mean()) if self.losses.size else float("nan")

    @property
    def rank_loss_skip(self) -> float:
        """Mean test rank loss over the examples that have at least one pair."""
        kept = self.losses_skip[~np.isnan(self.losses_skip)]
        return float(kept.mean()) if kept.size else float("nan")

    @property
    def n_skipped(self) -> int:
        """Evaluated examples excluded by the ``skip`` convention."""
        return int(np.isnan(self.losses_skip).sum())

    @property
    def seconds(self) -> float:
        """Wall-clock time of both phases; never includes ``compile_seconds``."""
        return self.seconds_train + self.seconds_test

    @property
    def n_learned(self) -> int:
        """Examples the model learned from: ``n_train * loops + n_test``."""
        return self.n_train * self.loops + self.n_test

    def running_losses(self) -> np.ndarray:
        """Running average of the rank loss (paper convention) over the whole stream, training
        passes then test: entry ``t`` is the mean loss of rounds ``1..t+1`` (Raman et al. 2020,
        Fig. 1)."""
        stream = np.concatenate([self.train_losses, self.losses])
        return np.cumsum(stream) / np.arange(1, stream.size + 1)

    def summary(self) -> dict[str, Any]:
        """Scalars only, ready for JSON."""
        arrays = ("losses", "losses_skip", "extra", "train_losses")
        out = {k: v for k, v in asdict(self).items() if k not in arrays}
        out.update(
            rank_loss=self.rank_loss,
            rank_loss_skip=self.rank_loss_skip,
            n_skipped=self.n_skipped,
            seconds=self.seconds,
        )
        out.update(self.extra)
        return out


@dataclass
class ClassificationEvaluation:
    """Outcome of prequential evaluation of a multiclass classifier.

    Attributes
    ----------
    correct
        Whether each example was predicted correctly before it was learned.
    seconds
        Wall-clock time of the pass.
    compile_seconds
        Wall-clock time of the :func:`warm_up` run before the clock started, or ``None``.
    """

    correct: np.ndarray
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)
    compile_seconds: float | None = None

    @property
    def n_test(self) -> int:
        return int(self.correct.size)

    @property
    def accuracy(self) -> float:
        """Accuracy over the whole stream."""
        return float(self.correct.mean()) if self.correct.size else float("nan")

    @property
    def accuracy_last20(self) -> float:
        """Accuracy over the final 20% of the stream (from index ``floor(0.8 n)`` on), the
        figure Jung, Goetz & Tewari (2017) report besides whole-stream accuracy."""
        tail = self.correct[int(0.8 * self.correct.size) :]
        return float(tail.mean()) if tail.size else float("nan")

    def summary(self) -> dict[str, Any]:
        """Scalars only, ready for JSON."""
        return {
            "n_test": self.n_test,
            "accuracy": self.accuracy,
            "accuracy_last20": self.accuracy_last20,
            "seconds": self.seconds,
            "compile_seconds": self.compile_seconds,
            **self.extra,
        }


# Documented as olboost.evaluate's: their pickles name that module, as before it became a package
Evaluation.__module__ = ClassificationEvaluation.__module__ = "olboost.evaluate"
