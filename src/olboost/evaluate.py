"""Evaluation protocols for online multi-label rankers.

* :func:`train_test`, the protocol of Jung & Tewari (2018, Sec. 4): stream the train split, learning
  from every example; then stream the test split, and for each example predict, record the loss,
  then learn from it. The reported rank loss is the test split's. With ``loops=L`` the train split
  is streamed ``L`` times first (Raman et al. 2020, Sec. 4: the top-k boosters loop over it up to
  20 times).
* :func:`prequential`, test-then-train over one stream: every example is predicted, scored, then
  learned.

Every example the model learns from is scored first, so the per-example losses of the training
passes are recorded too (:attr:`Evaluation.train_losses`), and
:meth:`Evaluation.running_losses` gives the running average over the whole stream (the learning
curves of Raman et al. 2020, Fig. 1).

**Feedback.** A full-information booster (``AdaOLMR``, ``OnlineBMR``) learns from the whole
relevant set (``feedback="full"``). A top-k booster (``TopkBBM``, ``TopkAdaptive``: a model with
``show_one``) learns under top-k feedback (``feedback="topk"``): the evaluator knows the relevant
set, records the weighted rank loss of the ranking the model actually showed, and the model gets
only the relevance of the ``k`` labels it showed on top. On a data set the model's array path plays
that user in compiled code (``score_then_learn`` returns the shown rankings); on an iterable of
``(x, y)`` pairs the evaluator does it in Python, ``imp = model.show_one(x)`` then
``model.learn_one(x, imp.feedback(clicked))``, so the model only ever receives a
:class:`~olboost.feedback.TopkFeedback`. Both give the same bits. ``feedback=None`` picks the
model's own kind.

Both return an :class:`Evaluation` with per-example rank losses under the two conventions for an
example whose relevant set is empty or full (no relevant/irrelevant pair): ``paper`` (loss 0, the
example counts, as the paper and its authors' code) and ``skip`` (the example is excluded; NaN in
the per-example array). Streams are :class:`olboost.datasets.MultiLabelDataset` objects, which use
the model's array path, or any iterable of ``(x, y)`` pairs, which uses ``score_one``/``learn_one``.

Compilation is kept out of the clock on request: with ``warm_up=True`` both protocols first run
:func:`warm_up` (a clone of the model on the first rows of the same data, through the same calls),
which compiles every Numba kernel the run needs or loads it from Numba's on-disk cache, and report
its duration as ``compile_seconds``, apart from ``seconds``. The command line always does this.

**Checkpoints.** :func:`resumable` runs either protocol on data sets in steps, handing its
:class:`Progress` (the position in the stream, pass included, and the per-example records so
far) to a callback every ``every`` examples, and continues from such a progress and the model
saved with it: the results are those of an uninterrupted run, bit for bit (``olboost run
--checkpoint``, :mod:`olboost.checkpoint`).
"""

from __future__ import annotations

import itertools
import numbers
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numba.core import event as numba_event

from olboost.metrics import rank_loss

__all__ = [
    "FEEDBACKS",
    "ClassificationEvaluation",
    "Evaluation",
    "Progress",
    "prequential",
    "resumable",
    "train_test",
    "warm_up",
]

#: The kinds of feedback the protocols simulate (``feedback=`` of :func:`train_test`).
FEEDBACKS = ("full", "topk")

#: Rows handed to the model per call on the array path; sets the progress bar's granularity only.
_CHUNK = 256

#: Rows of each stream that :func:`warm_up` runs through a clone of the model.
WARM_UP_ROWS = 32

#: :func:`warm_up` says on stderr that it is compiling once Numba has compiled for this long.
COMPILE_NOTICE_AFTER = 1.0

#: What the notice announces: compile time of one booster path on an empty cache, 2-core machine
#: (``make bench``, ``benchmarks/results/ada_olmr.json``, ``cold_start``).
TYPICAL_COMPILE_SECONDS = "30-60"


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


def _is_classification_data(stream: Any) -> bool:
    return hasattr(stream, "X") and hasattr(stream, "class_names")


def _classification_step(model: Any, X: Any, outputs: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """One block of the array path: predict, then learn; which rows were predicted right."""
    votes = model.predict_then_learn(X, outputs[codes])
    return np.argmax(votes, axis=1) == codes


def _run_classification(model: Any, stream: Any, progress: Any) -> np.ndarray:
    """Prequential pass of a multiclass booster; returns which examples were predicted right."""
    if _is_classification_data(stream):
        codes = _class_codes(model, stream)
        outputs = np.asarray(model._outputs(), dtype=object)
        n = len(codes)
        correct = np.empty(n, dtype=bool)
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            correct[lo:hi] = _classification_step(model, stream.X[lo:hi], outputs, codes[lo:hi])
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


def _run(model: Any, stream: Any, mode: str, progress: Any) -> tuple[int, np.ndarray, np.ndarray]:
    """Stream ``stream`` through ``model``, scoring each example before learning it (under
    ``mode`` feedback); return the number of examples and the per-example losses (paper, skip)."""
    if _is_dataset(stream):
        n = stream.n_samples
        Y = stream.Y[:, _label_columns(model, stream)]
        losses = np.empty(n)
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            losses[lo:hi] = _ranking_step(model, stream.X[lo:hi], Y[lo:hi])
            if progress is not None:
                progress.update(hi - lo)
        masks = Y
    else:
        one = _show_then_learn if mode == "topk" else _score_then_learn
        n, losses_l, masks_l = 0, [], []
        for x, y in stream:
            n += 1
            loss, mask = one(model, x, y)
            losses_l.append(loss)
            masks_l.append(mask)
            if progress is not None:
                progress.update(1)
        losses = np.asarray(losses_l, dtype=float)
        masks = np.asarray(masks_l, dtype=bool) if masks_l else np.zeros((0, 0), dtype=bool)
    # the "skip" convention differs from the paper's only on examples without a pair
    return n, losses, np.where(_pairless(masks), np.nan, losses)


def _ranking_step(model: Any, X: Any, Y: np.ndarray) -> np.ndarray:
    """One block of the array path: score, then learn; the rank losses (paper convention) of the
    scores. A top-k booster's array path plays the user and returns the shown rankings."""
    scores = model.score_then_learn(X, Y)
    return rank_loss(scores, Y, empty="paper")


def _pairless(Y: np.ndarray) -> np.ndarray:
    """Rows without a relevant/irrelevant pair (excluded by the ``skip`` convention)."""
    return ~Y.any(axis=1) | Y.all(axis=1)


def _score_then_learn(model: Any, x: Any, y: Any) -> tuple[float, np.ndarray]:
    """Full feedback, one example: score, record the loss, learn from the relevant set."""
    scores = model.score_one(x)
    s = np.fromiter(scores.values(), float, len(scores))
    mask = np.array([label in y for label in scores])
    loss = rank_loss(s, mask, empty="paper")
    model.learn_one(x, y)
    return loss, mask


def _show_then_learn(model: Any, x: Any, y: Any) -> tuple[float, np.ndarray]:
    """Top-k feedback, one example: the model shows its randomised ranking, the loss of that
    ranking is recorded, and the model learns which of the ``k`` labels it showed are relevant
    (a :class:`~olboost.feedback.TopkFeedback`: nothing about the labels it did not show)."""
    impression = model.show_one(x)  # the first call starts the model: its labels are fixed now
    labels = model._outputs()
    unknown = [label for label in y if label not in impression.ranking]
    if unknown:
        raise ValueError(
            f"{type(model).__name__}: relevant labels {unknown[:5]} are not among the model's "
            f"labels {list(labels)[:5]}..."
        )
    m = len(labels)
    position = {label: p for p, label in enumerate(impression.ranking)}
    s = np.array([m - position[label] for label in labels], dtype=float)
    mask = np.array([label in y for label in labels], dtype=bool)
    loss = rank_loss(s, mask, empty="paper")
    model.learn_one(x, impression.feedback([label for label in impression.labels if label in y]))
    return loss, mask


def _feedback_mode(model: Any, feedback: Any, k: Any) -> str:
    """``"full"`` or ``"topk"``: the feedback ``model`` learns from under ``feedback`` (``None``:
    the model's own kind) and ``k``; a ``ValueError`` when they do not fit the model."""
    name = type(model).__name__
    topk = hasattr(model, "show_one")
    if feedback is None:
        mode = "topk" if topk else "full"
    elif isinstance(feedback, str) and feedback in FEEDBACKS:
        mode = feedback
    else:
        raise ValueError(f"feedback must be None, 'full' or 'topk', got {feedback!r}")
    if mode == "topk" and not topk:
        raise ValueError(
            f"feedback='topk' needs a top-k booster (TopkBBM, TopkAdaptive: a model with "
            f"show_one); {name} learns from full feedback"
        )
    if mode == "full" and topk:
        raise ValueError(
            f"{name} learns from top-k feedback only (it shows k={model.k} labels and learns their "
            "relevance): use feedback='topk' or None, or a full-information booster "
            "(AdaOLMR, OnlineBMR) for full feedback"
        )
    if k is not None:
        if mode != "topk":
            raise ValueError(f"k={k!r} applies to top-k feedback only; {name} gets full feedback")
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k != model.k:
            raise ValueError(
                f"k={k!r} does not match the model's k={model.k}: the model shows its own k "
                f"labels; build it with k={k!r}"
            )
    return mode


def _check_loops(loops: Any, train: Any) -> None:
    if isinstance(loops, bool) or not isinstance(loops, numbers.Integral) or loops < 1:
        raise ValueError(f"loops must be an integer >= 1, got {loops!r}")
    if loops > 1 and iter(train) is train:
        raise ValueError(
            f"loops={loops} streams the train split {loops} times, but it is a one-pass "
            "iterator: pass a data set or a sequence of (x, y) pairs"
        )


def _require_examples(stream: Any, role: str) -> None:
    """Refuse to evaluate a stream known to be empty: its mean loss would be NaN over 0
    examples, which reads like a result."""
    if _length(stream) == 0:
        name = getattr(stream, "name", None)
        raise ValueError(
            f"the {role}{f' {name!r}' if name else ''} holds no examples: nothing to evaluate"
        )


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


def _head(stream: Any, n: int) -> Any:
    """The first ``n`` rows of ``stream`` as the same kind of stream (same array types and layouts),
    or ``None`` for a one-pass iterator, which cannot be read twice."""
    if hasattr(stream, "head"):  # MulticlassDataset
        return stream.head(n)
    if _is_dataset(stream):  # MultiLabelDataset (dense or sparse X)
        return stream._rows(0, min(n, stream.n_samples), stream.name)
    if isinstance(stream, Sequence):
        return stream[:n]
    return None


def _peel(stream: Any, n: int) -> tuple[Any, Any]:
    """``(head, stream)``: the first ``n`` rows of ``stream`` and a stream still holding every
    row (an iterator's head is read into a list and chained back in front of the rest)."""
    head = _head(stream, n)
    if head is not None:
        return head, stream
    rest: Iterator = iter(stream)
    head = list(itertools.islice(rest, n))
    return head, itertools.chain(head, rest)


class _CompileNotice(numba_event.Listener):
    """Says on stderr that kernels are being compiled, and how long it took when it is done.

    Whether Numba compiles or loads its on-disk cache is observed, not guessed: Numba announces
    every compilation (a cache miss) with a ``numba:compile`` event, and the notice is printed when
    compiling has gone on for ``after`` seconds. Loading a cached path (about a second) and
    recompiling one small kernel stay silent.
    """

    def __init__(self, enabled: bool, after: float | None = None):
        self.enabled = enabled
        self.after = COMPILE_NOTICE_AFTER if after is None else after
        self.compiled = 0  # kernel specialisations compiled (cache misses), callees included
        self.shown = False
        self._timer: threading.Timer | None = None

    def on_start(self, event: Any) -> None:
        self.compiled += 1
        if self.enabled and self._timer is None:
            self._timer = threading.Timer(self.after, self._show)
            self._timer.daemon = True
            self._timer.start()

    def on_end(self, event: Any) -> None:
        pass

    def _show(self) -> None:
        self.shown = True
        print(
            f"olboost: compiling kernels (first run after install or upgrade, about "
            f"{TYPICAL_COMPILE_SECONDS} s; Numba caches them on disk for later runs) ...",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> _CompileNotice:
        self.t0 = time.perf_counter()
        numba_event.register("numba:compile", self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.t0
        numba_event.unregister("numba:compile", self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        if self.shown:
            print(
                f"olboost: compiled {self.compiled} functions in {self.seconds:.1f} s "
                "(not counted in the run's seconds)",
                file=sys.stderr,
                flush=True,
            )


def warm_up(
    model: Any,
    stream: Any,
    test: Any = None,
    *,
    rows: int = WARM_UP_ROWS,
    notice: bool = False,
) -> float:
    """Compile every Numba kernel that evaluating ``model`` on the data runs (or load it from
    Numba's on-disk cache), without changing ``model``; return the seconds it took.

    A clone of ``model`` (same class, parameters and committee, fresh state) runs the first ``rows``
    rows of the data through the protocol the evaluation will use: ``warm_up(model, stream)``
    through :func:`prequential`, ``warm_up(model, train, test)`` through :func:`train_test`. Numba
    compiles a kernel for the types of its first call's arguments; the clone makes the same calls
    on arrays of the same dtypes and layouts, so every specialisation the full run needs exists
    afterwards, and timing that run measures the algorithm, not the compiler. The first run after
    an install (or after an upgrade of olboost or Numba) compiles, about 30-60 s per booster on a
    2-core machine; later runs load the kernels from Numba's cache in about a second.

    ``model`` and the data are left exactly as they were, so results are the same with or without
    a warm-up. A one-pass iterator cannot be read twice: warm up on a list of its first rows, or
    pass ``warm_up=True`` to :func:`train_test` or :func:`prequential`, which peel them off and
    chain them back.

    Parameters
    ----------
    model
        An unfitted or fitted booster; only its parameters are used.
    stream, test
        The data the evaluation will stream: one stream (prequential), or the train and test
        splits (train/test). Data sets, sequences of ``(x, y)`` pairs, or lists.
    rows
        Rows of each stream to run; a few suffice.
    notice
        Print a line on stderr if this takes longer than ``COMPILE_NOTICE_AFTER`` seconds (it is
        then compiling, not loading the cache), and another when it is done.

    Examples
    --------
    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test, warm_up
    >>> data = load("emotions")
    >>> model = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> compile_s = warm_up(model, data.train, data.test)
    >>> hasattr(model, "committee_")  # untouched: the clone learned
    False
    >>> result = train_test(model, data.train, data.test)  # result.seconds: no compiling inside
    """
    if rows < 1:
        raise ValueError(f"rows must be >= 1, got {rows}")
    heads = [_head(s, rows) for s in ((stream,) if test is None else (stream, test))]
    if any(h is None for h in heads):
        raise TypeError(
            "warm_up needs data sets or sequences; a one-pass iterator cannot be read twice "
            "(pass warm_up=True to train_test or prequential instead)"
        )
    mode = _feedback_mode(model, None, None)
    with _CompileNotice(notice) as timer:
        clone = model.clone()
        if test is None:
            _prequential(clone, heads[0], None, mode)
        else:
            _train_test(clone, heads[0], heads[1], None, 1, mode)
    return timer.seconds


def train_test(
    model: Any,
    train: Iterable,
    test: Iterable,
    *,
    loops: int = 1,
    feedback: str | None = None,
    k: int | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation:
    """The paper's protocol: learn from ``train`` (``loops`` times), then predict-record-learn over
    ``test``.

    Parameters
    ----------
    model
        A multi-label ranker (``AdaOLMR``, ``TopkBBM`` ...); it is trained in place.
    train, test
        Data sets (``MultiLabelDataset``) or iterables of ``(x, y)`` with ``y`` a set of labels
        (with ``loops > 1``, ``train`` must be readable more than once: not an iterator).
    loops
        Passes over ``train`` before the test split (an integer >= 1; Raman et al. 2020 use up to
        20 for the top-k boosters). The model learns ``n_train * loops + n_test`` examples.
    feedback
        ``"full"`` (the model learns the relevant set), ``"topk"`` (a top-k booster shows its
        ranking and learns the relevance of the ``k`` labels on top only; the loss recorded is
        that of the ranking shown) or ``None``: the model's kind (``"topk"`` for a model with
        ``show_one``). Each kind needs the matching model (``ValueError`` otherwise).
    k
        If given, must equal the top-k booster's ``k`` (a check; the model shows its own ``k``).
    progress
        Show a progress bar on stderr.
    warm_up
        Run :func:`warm_up` first (saying on stderr when it compiles), so that ``seconds``
        excludes compilation; its duration is ``compile_seconds``. Results are the same.

    Raises
    ------
    ValueError
        If ``test`` is known to hold no example (a data set or sequence of length 0), ``loops``
        is not an integer >= 1 (or > 1 with a one-pass iterator), or ``feedback`` or ``k`` do not
        fit the model. Nothing is learned then.

    Examples
    --------
    >>> from olboost import TopkAdaptive, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> data = load("emotions")
    >>> model = TopkAdaptive(VFDTCommittee(n_features=5), learners=4, seed=1, k=3, rho=0.05)
    >>> result = train_test(model, data.train, data.test, loops=2)
    >>> result.feedback, model.t_ == result.n_learned == 391 * 2 + 202
    ('topk', True)
    >>> result.train_losses.shape, result.running_losses().shape
    ((782,), (984,))
    """
    mode = _feedback_mode(model, feedback, k)
    _check_loops(loops, train)
    _require_examples(test, "test stream")
    compile_s = None
    if warm_up:
        train_head, train = _peel(train, WARM_UP_ROWS)
        test_head, test = _peel(test, WARM_UP_ROWS)
        compile_s = _warm_up(model, train_head, test_head, notice=True)
    n_train, n_test = _length(train), _length(test)
    total = None if n_train is None or n_test is None else n_train * loops + n_test
    bar = _progress(total, progress, "train+test")
    result = _train_test(model, train, test, bar, loops, mode)
    if bar is not None:
        bar.close()
    result.compile_seconds = compile_s
    return result


def _train_test(
    model: Any, train: Iterable, test: Iterable, bar: Any, loops: int, mode: str
) -> Evaluation:
    t0 = time.perf_counter()
    train_losses = []
    for _ in range(loops):
        n_train, losses, _ = _run(model, train, mode, bar)
        train_losses.append(losses)
    t1 = time.perf_counter()
    n_test, losses, skip = _run(model, test, mode, bar)
    t2 = time.perf_counter()
    return Evaluation(
        losses, skip, n_train, n_test, t1 - t0, t2 - t1,
        train_losses=np.concatenate(train_losses), loops=loops, feedback=mode,
    )  # fmt: skip


def prequential(
    model: Any,
    stream: Iterable,
    *,
    feedback: str | None = None,
    k: int | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation | ClassificationEvaluation:
    """Test-then-train over one stream: each example is predicted, its loss recorded, then learned.

    A multi-label ranker gets an :class:`Evaluation` (rank losses); a multiclass classifier
    (:class:`olboost.boosters.MulticlassBooster`) gets a :class:`ClassificationEvaluation`
    (accuracy over the stream and over its final 20%). ``feedback`` and ``k`` are as in
    :func:`train_test` (a top-k booster shows a ranking, is scored on it and learns the relevance
    of its top ``k``). With ``warm_up=True``, :func:`warm_up` runs first and its duration is the
    result's ``compile_seconds``, kept out of ``seconds``. A stream known to hold no example
    (length 0), or a ``feedback`` or ``k`` that does not fit the model, is a ``ValueError``.
    """
    mode = _feedback_mode(model, feedback, k)
    _require_examples(stream, "stream")
    compile_s = None
    n = _length(stream)
    if warm_up:
        head, stream = _peel(stream, WARM_UP_ROWS)
        compile_s = _warm_up(model, head, notice=True)
    bar = _progress(n, progress, "prequential")
    result = _prequential(model, stream, bar, mode)
    if bar is not None:
        bar.close()
    result.compile_seconds = compile_s
    return result


def _prequential(
    model: Any, stream: Iterable, bar: Any, mode: str
) -> Evaluation | ClassificationEvaluation:
    from olboost.online import MulticlassLearner

    if isinstance(model, MulticlassLearner):
        t0 = time.perf_counter()
        correct = _run_classification(model, stream, bar)
        return ClassificationEvaluation(correct, time.perf_counter() - t0)
    t0 = time.perf_counter()
    n, losses, skip = _run(model, stream, mode, bar)
    t1 = time.perf_counter()
    return Evaluation(losses, skip, 0, n, 0.0, t1 - t0, feedback=mode)


#: :func:`warm_up` under another name, for the functions whose ``warm_up`` argument shadows it.
_warm_up = warm_up


# --------------------------------------------------------------------------------------------------
# Resumable evaluation (checkpoints)
# --------------------------------------------------------------------------------------------------


@dataclass
class Progress:
    """Where a :func:`resumable` evaluation stands: with the model as it was then, enough to
    continue the evaluation bit for bit.

    Attributes
    ----------
    protocol
        ``"train_test"`` or ``"prequential"``.
    sizes
        Examples of each pass, in order: the train split ``loops`` times then the test split,
        or the one stream.
    done
        Examples learned so far, counted over the passes in order.
    records
        One entry per example of all the passes: its rank loss (paper convention) before it was
        learned, or (a multiclass classifier) whether it was predicted right; the first ``done``
        are filled.
    seconds_train, seconds_test
        Time spent learning so far in each phase (a prequential pass counts as the test phase;
        the callbacks are not timed).
    """

    protocol: str
    sizes: tuple[int, ...]
    done: int
    records: np.ndarray
    seconds_train: float = 0.0
    seconds_test: float = 0.0

    @property
    def total(self) -> int:
        """Examples the evaluation learns in all."""
        return sum(self.sizes)

    @property
    def finished(self) -> bool:
        return self.done == self.total


def _passes(stream: Any, test: Any, loops: Any, classify: bool) -> tuple[str, list[Any]]:
    """The protocol and the streams of its passes, in order; refuses what cannot resume."""
    _check_loops(loops, stream)
    if test is None and loops != 1:
        raise ValueError(f"loops={loops} needs a test split: a prequential pass is one pass")
    if classify and test is not None:
        raise ValueError("a multiclass classifier is evaluated prequentially: pass no test split")
    passes = [stream] * loops + ([] if test is None else [test])
    kind = _is_classification_data if classify else _is_dataset
    if not all(kind(s) for s in passes):
        raise TypeError(
            "resumable evaluation needs data sets (olboost.datasets), which can be read again "
            "from any row; an iterable of (x, y) pairs cannot"
        )
    _require_examples(passes[-1], "test stream" if test is not None else "stream")
    return ("prequential" if test is None else "train_test"), passes


def resumable(
    model: Any,
    stream: Any,
    test: Any = None,
    *,
    loops: int = 1,
    every: int | None = None,
    on_checkpoint: Callable[[Progress], None] | None = None,
    start: Progress | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation | ClassificationEvaluation:
    """:func:`train_test` (with ``test``) or :func:`prequential` (without) on data sets, in steps
    that can be checkpointed and resumed.

    Every ``every`` examples, and once all are learned, ``on_checkpoint(progress)`` is called
    with the :class:`Progress` so far (outside the clock); saving it with the model
    (:func:`olboost.checkpoint.save_run`) lets a later call continue with ``start=progress`` and
    the saved model, however often the run was interrupted. The result is bit for bit that of
    :func:`train_test` or :func:`prequential` on the same model and data: each example is
    scored, then learned, and the boosters' random draws depend on their step count, not on how
    the stream is cut (their array paths give the same bits in any blocks).

    Parameters
    ----------
    model
        A multi-label ranker or a multiclass classifier (prequential only), trained in place; to
        resume, the model saved with ``start``.
    stream, test
        Data sets: the train split and the test split, or one stream (``test=None``).
    loops
        Passes over the train split before the test split.
    every
        Examples between two calls of ``on_checkpoint`` (counted over all the passes); ``None``:
        only at the end.
    on_checkpoint
        ``on_checkpoint(progress)``, or ``None``.
    start
        The progress to continue from (``None``: the beginning).
    progress, warm_up
        As in :func:`train_test`.

    Raises
    ------
    ValueError
        For bad ``loops`` or ``every``, or a ``start`` that does not fit the data (another data
        set, split or number of loops).
    TypeError
        If a stream is not a data set.

    Examples
    --------
    >>> import pickle
    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import resumable, train_test
    >>> data = load("emotions")
    >>> model = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> saved = []
    >>> def checkpoint(progress):  # a crash after the third checkpoint
    ...     saved.append(pickle.dumps((model, progress)))
    ...     if len(saved) == 3:
    ...         raise KeyboardInterrupt
    >>> try:
    ...     resumable(model, data.train, data.test, loops=2, every=100, on_checkpoint=checkpoint)
    ... except KeyboardInterrupt:
    ...     pass
    >>> again, progress = pickle.loads(saved[-1])
    >>> progress.done, progress.total
    (300, 984)
    >>> result = resumable(again, data.train, data.test, loops=2, start=progress)
    >>> fresh = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> result.rank_loss == train_test(fresh, data.train, data.test, loops=2).rank_loss
    True
    """
    from olboost.online import MulticlassLearner

    classify = isinstance(model, MulticlassLearner)
    mode = _feedback_mode(model, None, None)
    if every is not None and (
        isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 1
    ):
        raise ValueError(f"every must be an integer >= 1 or None, got {every!r}")
    protocol, passes = _passes(stream, test, loops, classify)
    sizes = tuple(int(s.n_samples) for s in passes)
    state = start
    if state is None:
        state = Progress(protocol, sizes, 0, np.zeros(sum(sizes), bool if classify else float))
    elif (state.protocol, tuple(state.sizes)) != (protocol, sizes) or not (
        0 <= state.done <= state.total == state.records.size
    ):
        raise ValueError(
            f"the progress to resume ({state.protocol}, passes of {list(state.sizes)} examples, "
            f"{state.done} done) does not fit this evaluation ({protocol}, passes of "
            f"{list(sizes)} examples)"
        )
    compile_s = None
    if warm_up:
        heads = [_head(s, WARM_UP_ROWS) for s in ((stream,) if test is None else (stream, test))]
        compile_s = _warm_up(model, *heads, notice=True)
    # what each pass feeds the model: label columns in the model's order, or class codes
    if classify:
        codes = _class_codes(model, stream)
        outputs = np.asarray(model._outputs(), dtype=object)
    else:
        labels = {id(s): s.Y[:, _label_columns(model, s)] for s in passes}
    bar = _progress(state.total, progress, protocol.replace("_", "+"))
    if bar is not None and state.done:
        bar.update(state.done)
    offset = 0
    for index, data in enumerate(passes):
        first, offset = offset, offset + sizes[index]
        phase = "train" if protocol == "train_test" and index < loops else "test"
        while state.done < offset:
            lo = state.done - first
            hi = min(sizes[index], (lo // _CHUNK + 1) * _CHUNK)
            if every is not None:
                hi = min(hi, (state.done // every + 1) * every - first)
            t0 = time.perf_counter()
            if classify:
                values = _classification_step(model, data.X[lo:hi], outputs, codes[lo:hi])
            else:
                values = _ranking_step(model, data.X[lo:hi], labels[id(data)][lo:hi])
            elapsed = time.perf_counter() - t0
            state.records[first + lo : first + hi] = values
            state.done = first + hi
            if phase == "train":
                state.seconds_train += elapsed
            else:
                state.seconds_test += elapsed
            if bar is not None:
                bar.update(hi - lo)
            due = every is not None and state.done % every == 0
            if on_checkpoint is not None and (due or state.finished):
                on_checkpoint(state)
    if bar is not None:
        bar.close()
    return _outcome(state, passes, labels if not classify else None, loops, mode, compile_s)


def _outcome(
    state: Progress,
    passes: list[Any],
    labels: dict[int, np.ndarray] | None,
    loops: int,
    mode: str,
    compile_s: float | None,
) -> Evaluation | ClassificationEvaluation:
    """The evaluation a finished :class:`Progress` records, as the protocols report it."""
    if labels is None:
        correct = state.records.copy()
        return ClassificationEvaluation(correct, state.seconds_test, compile_seconds=compile_s)
    learned_before_test = state.sizes[0] * loops if state.protocol == "train_test" else 0
    losses = state.records[learned_before_test:].copy()
    skip = np.where(_pairless(labels[id(passes[-1])]), np.nan, losses)
    if state.protocol == "prequential":
        return Evaluation(
            losses, skip, 0, state.sizes[0], 0.0, state.seconds_test, feedback=mode,
            compile_seconds=compile_s,
        )  # fmt: skip
    return Evaluation(
        losses, skip, state.sizes[0], state.sizes[-1], state.seconds_train, state.seconds_test,
        compile_seconds=compile_s, train_losses=state.records[:learned_before_test].copy(),
        loops=loops, feedback=mode,
    )  # fmt: skip
