"""What the protocols accept: the kinds of feedback, the kinds of stream, and the checks and
stream handling (lengths, heads, a progress bar) shared by every protocol."""

from __future__ import annotations

import itertools
import numbers
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from olboost.feedback import TopkUser

#: The kinds of feedback the protocols simulate (``feedback=`` of :func:`train_test`).
FEEDBACKS = ("full", "topk")


def _is_classification_data(stream: Any) -> bool:
    return hasattr(stream, "X") and hasattr(stream, "class_names")


def _is_dataset(stream: Any) -> bool:
    return hasattr(stream, "X") and hasattr(stream, "Y") and hasattr(stream, "label_names")


def _feedback_mode(model: Any, feedback: Any, k: Any) -> str:
    """``"full"`` or ``"topk"``: the feedback ``model`` learns from under ``feedback`` (``None``:
    the model's own kind; a :class:`~olboost.feedback.TopkUser`: top-k) and ``k``; a
    ``ValueError`` when they do not fit the model, a ``TypeError`` for a model's class instead of
    a model (the evaluation failed inside, on a method called without its instance)."""
    if isinstance(model, type):
        raise TypeError(
            f"model is the class {model.__name__}, not a model: pass an instance, "
            f"{model.__name__}(...)"
        )
    name = type(model).__name__
    topk = hasattr(model, "show_one")
    if feedback is None:
        mode = "topk" if topk else "full"
    elif isinstance(feedback, str) and feedback in FEEDBACKS:
        mode = feedback
    elif isinstance(feedback, TopkUser):
        mode = "topk"
        if not topk:
            raise ValueError(
                f"feedback={feedback!r} simulates a user of a top-k booster (TopkBBM, "
                f"TopkAdaptive: a model with show_one); {name} learns from full feedback"
            )
        own = getattr(feedback, "k", None)
        if own is not None:
            if k is not None and k != own:
                raise ValueError(f"k={k!r} and the user's k={own!r} differ")
            k = own
    elif isinstance(feedback, type) and issubclass(feedback, TopkUser):
        raise TypeError(
            f"feedback is the class {feedback.__name__}, not a user: pass an instance, "
            f"{feedback.__name__}(...)"
        )
    else:
        raise ValueError(f"feedback must be None, 'full', 'topk' or a TopkUser, got {feedback!r}")
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


def _custom_user(feedback: Any) -> Any:
    """The :class:`~olboost.feedback.TopkUser` the protocol plays in Python (one that overrides
    its clicks), or ``None``: the model's own simulation of the paper's user, compiled on a data
    set."""
    if isinstance(feedback, TopkUser) and not feedback.truthful:
        return feedback
    return None


def _check_loops(loops: Any, train: Any) -> int:
    """``loops`` as an ``int`` (a NumPy integer too, for JSON records) after its checks."""
    if isinstance(loops, bool) or not isinstance(loops, numbers.Integral) or loops < 1:
        raise ValueError(f"loops must be an integer >= 1, got {loops!r}")
    loops = int(loops)
    if loops > 1 and iter(train) is train:
        raise ValueError(
            f"loops={loops} streams the train split {loops} times, but it is a one-pass "
            "iterator: pass a data set or a sequence of (x, y) pairs"
        )
    return loops


def _require_stream(stream: Any, role: str) -> None:
    """Refuse what is no stream before anything is learned: a protocol reads a data set, or an
    iterable of ``(x, y)`` pairs. Text is iterable, and an array is an iterable of rows: either
    was taken, the model learned the splits before it, and the pass failed on its first
    item with Python's "not enough values to unpack"."""
    if _is_dataset(stream) or _is_classification_data(stream):
        return
    what = None
    if isinstance(stream, str | bytes | bytearray):
        what = f"a {type(stream).__name__} ({stream[:40]!r})"
    elif hasattr(stream, "shape") and hasattr(stream, "dtype"):  # NumPy and SciPy arrays
        what = f"an array of shape {getattr(stream, 'shape', None)}"
    elif isinstance(stream, Mapping):
        what = "a mapping"
    elif not isinstance(stream, Iterable):
        what = f"a {type(stream).__name__}, which is not iterable"
    if what is not None:
        raise TypeError(
            f"the {role} must be a data set (olboost.datasets) or an iterable of (x, y) pairs, "
            f"got {what}; arrays go to the model's score_then_learn / predict_then_learn"
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
