"""Evaluation protocols for online multi-label rankers.

* :func:`train_test`, the protocol of Jung & Tewari (2018, Sec. 4): stream the train split, learning
  from every example; then stream the test split, and for each example predict, record the loss,
  then learn from it. Only test losses are reported.
* :func:`prequential`, test-then-train over one stream: every example is predicted, scored, then
  learned.

Both return an :class:`Evaluation` with per-example rank losses under the two conventions for an
example whose relevant set is empty or full (no relevant/irrelevant pair): ``paper`` (loss 0, the
example counts, as the paper and its authors' code) and ``skip`` (the example is excluded; NaN in
the per-example array). Streams are :class:`olboost.datasets.MultiLabelDataset` objects, which use
the model's array path, or any iterable of ``(x, y)`` pairs, which uses ``score_one``/``learn_one``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from olboost.metrics import rank_loss

__all__ = ["ClassificationEvaluation", "Evaluation", "prequential", "train_test"]

#: Rows handed to the model per call on the array path; sets the progress bar's granularity only.
_CHUNK = 256


@dataclass
class Evaluation:
    """Outcome of an evaluation protocol.

    Attributes
    ----------
    losses
        Rank loss of every evaluated example, paper convention.
    losses_skip
        The same with NaN where the example has no relevant/irrelevant pair.
    n_train, n_test
        Examples learned without evaluation, and evaluated examples.
    seconds_train, seconds_test
        Wall-clock time of each phase (the test phase includes learning from test examples).
    """

    losses: np.ndarray
    losses_skip: np.ndarray
    n_train: int
    n_test: int
    seconds_train: float
    seconds_test: float
    extra: dict[str, Any] = field(default_factory=dict)

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
        return self.seconds_train + self.seconds_test

    def summary(self) -> dict[str, Any]:
        """Scalars only, ready for JSON."""
        out = {k: v for k, v in asdict(self).items() if k not in ("losses", "losses_skip", "extra")}
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
    """

    correct: np.ndarray
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

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
            **self.extra,
        }


def _class_codes(model: Any, stream: Any) -> np.ndarray:
    """``stream.y`` as the model's class codes (a model without classes takes the data's)."""
    names = list(stream.class_names)
    if getattr(model, "classes", None) is None and not hasattr(model, "classes_"):
        model._set_outputs(names)
    known = list(model._outputs())
    if known == names or known == list(range(len(names))):
        return np.asarray(stream.y)
    if not set(names) <= set(known):
        raise ValueError(f"the data set has classes {names} the model does not know ({known})")
    where = {c: j for j, c in enumerate(known)}
    return np.array([where[c] for c in names])[np.asarray(stream.y)]


def _run_classification(model: Any, stream: Any, progress: Any) -> np.ndarray:
    """Prequential pass of a multiclass booster; returns which examples were predicted right."""
    if hasattr(stream, "X") and hasattr(stream, "class_names"):
        codes = _class_codes(model, stream)
        outputs = np.asarray(model._outputs(), dtype=object)
        n = len(codes)
        correct = np.empty(n, dtype=bool)
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            votes = model.predict_then_learn(stream.X[lo:hi], outputs[codes[lo:hi]])
            correct[lo:hi] = np.argmax(votes, axis=1) == codes[lo:hi]
            if progress is not None:
                progress.update(hi - lo)
        return correct
    out = []
    for x, y in stream:
        out.append(model.predict_one(x) == y)
        model.learn_one(x, y)
        if progress is not None:
            progress.update(1)
    return np.asarray(out, dtype=bool)


def _is_dataset(stream: Any) -> bool:
    return hasattr(stream, "X") and hasattr(stream, "Y") and hasattr(stream, "label_names")


def _label_columns(model: Any, stream: Any) -> np.ndarray:
    """Columns of ``stream.Y`` in the order of the model's labels.

    A model built without labels ranks the data set's labels in the data set's order; a model built
    with ``labels=k`` takes the columns as they are; a model built with label names must name the
    same labels as the data set, in any order.
    """
    names = list(stream.label_names)
    if getattr(model, "labels", None) is None and not hasattr(model, "labels_"):
        model._set_outputs(names)
    known = list(model._outputs())
    if known == names or known == list(range(len(names))):
        return np.arange(len(names))
    if set(known) != set(names):
        raise ValueError(
            f"the model ranks labels {known[:5]}..., the data set has labels {names[:5]}..."
        )
    where = {name: j for j, name in enumerate(names)}
    return np.array([where[label] for label in known])


def _run(
    model: Any, stream: Any, evaluate: bool, progress: Any
) -> tuple[int, np.ndarray, np.ndarray]:
    """Stream ``stream`` through ``model``; return the number of examples and, if evaluating, the
    per-example losses (paper, skip)."""
    if _is_dataset(stream):
        n = stream.n_samples
        Y = stream.Y[:, _label_columns(model, stream)]
        losses = np.empty(n if evaluate else 0)
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            if evaluate:
                scores = model.score_then_learn(stream.X[lo:hi], Y[lo:hi])
                losses[lo:hi] = rank_loss(scores, Y[lo:hi], empty="paper")
            else:
                model.learn(stream.X[lo:hi], Y[lo:hi])
            if progress is not None:
                progress.update(hi - lo)
        masks = Y if evaluate else Y[:0]
    else:
        n, losses_l, masks_l = 0, [], []
        for x, y in stream:
            n += 1
            if evaluate:
                scores = model.score_one(x)
                s = np.fromiter(scores.values(), float, len(scores))
                mask = np.array([label in y for label in scores])
                losses_l.append(rank_loss(s, mask, empty="paper"))
                masks_l.append(mask)
            model.learn_one(x, y)
            if progress is not None:
                progress.update(1)
        losses = np.asarray(losses_l, dtype=float)
        masks = np.asarray(masks_l, dtype=bool) if masks_l else np.zeros((0, 0), dtype=bool)
    # the "skip" convention differs from the paper's only on examples without a pair
    pairless = ~masks.any(axis=1) | masks.all(axis=1)
    return n, losses, np.where(pairless, np.nan, losses)


def _progress(total: int | None, show: bool, desc: str) -> Any:
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, unit="ex", leave=False)


def _length(stream: Any) -> int | None:
    try:
        return len(stream)
    except TypeError:
        return None


def train_test(
    model: Any, train: Iterable, test: Iterable, *, progress: bool = False
) -> Evaluation:
    """The paper's protocol: learn from ``train``, then predict-record-learn over ``test``.

    Parameters
    ----------
    model
        A multi-label ranker (``AdaOLMR`` ...); it is trained in place.
    train, test
        Data sets (``MultiLabelDataset``) or iterables of ``(x, y)`` with ``y`` a set of labels.
    progress
        Show a progress bar on stderr.
    """
    n_train, n_test = _length(train), _length(test)
    total = None if n_train is None or n_test is None else n_train + n_test
    bar = _progress(total, progress, "train+test")
    t0 = time.perf_counter()
    n_train, _, _ = _run(model, train, False, bar)
    t1 = time.perf_counter()
    n_test, losses, skip = _run(model, test, True, bar)
    t2 = time.perf_counter()
    if bar is not None:
        bar.close()
    return Evaluation(losses, skip, n_train, n_test, t1 - t0, t2 - t1)


def prequential(
    model: Any, stream: Iterable, *, progress: bool = False
) -> Evaluation | ClassificationEvaluation:
    """Test-then-train over one stream: each example is predicted, its loss recorded, then learned.

    A multi-label ranker gets an :class:`Evaluation` (rank losses); a multiclass classifier
    (:class:`olboost.boosters.MulticlassBooster`) gets a :class:`ClassificationEvaluation`
    (accuracy over the stream and over its final 20%).
    """
    from olboost.boosters.base import MulticlassBooster

    bar = _progress(_length(stream), progress, "prequential")
    if isinstance(model, MulticlassBooster):
        t0 = time.perf_counter()
        correct = _run_classification(model, stream, bar)
        seconds = time.perf_counter() - t0
        if bar is not None:
            bar.close()
        return ClassificationEvaluation(correct, seconds)
    t0 = time.perf_counter()
    n, losses, skip = _run(model, stream, True, bar)
    t1 = time.perf_counter()
    if bar is not None:
        bar.close()
    return Evaluation(losses, skip, 0, n, 0.0, t1 - t0)
