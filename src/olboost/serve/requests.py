"""The checks of a request's body: every rejection is a :class:`RequestError` (an HTTP status
and a message for the client), raised before anything is written or learned."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from olboost._random import MAX_KEY
from olboost.online.inputs import MAX_ABS_FEATURE
from olboost.serve.config import ServiceConfig

#: Largest draw key of a ranking (the boosters' keys are 64-bit).

#: Longest feedback or impression id accepted.
_MAX_ID = 128


class RequestError(Exception):
    """A rejected request: ``status`` (an HTTP status code) and a message for the client, and
    ``retry_after``, seconds after which the same request may succeed (its ``Retry-After``)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


def _as_json(value: Any) -> str:
    """``value`` as JSON, for an error message: cut after ``_SHOWN_CHARS`` characters (a
    megabyte of string was echoed whole), and named by its type when it is nested too deep to
    write (the body's parser took it, one level shallower: a 500 and a traceback per request)."""
    try:
        text = json.dumps(value)
    except RecursionError:
        return f"a {type(value).__name__} nested too deep to show"
    except (TypeError, ValueError):  # a body built in Python (Service.rank): a NumPy value
        text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


#: Longest JSON value an error message quotes whole.
_SHOWN_CHARS = 200


def _known_labels(labels: Sequence[str]) -> str:
    """The service's labels as an error message shows them: the first ``_SHOWN_LABELS``, as
    JSON strings, and where all of them are (the whole list was the message, 440 kB for 20,000
    labels, for a 53-byte request)."""
    shown = ", ".join(_as_json(label) for label in labels[:_SHOWN_LABELS])
    more = f", ... ({len(labels)} in all: GET /schema lists them)"
    return f"labels: {shown}{more if len(labels) > _SHOWN_LABELS else ''}"


#: How many of the labels an error message names.
_SHOWN_LABELS = 10


def error_text(err: BaseException) -> str:
    """``err`` for a log line or an answer: its type and its message (``repr`` of an
    ``OSError`` leaves out the file it names, and ``str`` of a bare exception is empty)."""
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _fail(message: str, status: int = 422) -> RequestError:
    return RequestError(status, message)


def _check_fields(body: Any, allowed: set[str], required: set[str], what: str) -> None:
    if not isinstance(body, dict):
        raise _fail(f"{what}: the body must be a JSON object, got {type(body).__name__}", 400)
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise _fail(f"{what}: unknown field(s) {_as_json(unknown)}; allowed: {sorted(allowed)}")
    missing = sorted(required - set(body))
    if missing:
        raise _fail(f"{what}: missing field(s) {missing}")


def _flag(body: dict, name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool | np.bool_):
        raise _fail(f"{name} must be true or false, got {_as_json(value)}")
    return bool(value)


def _number(value: Any, where: str) -> float:
    # bool is an int in Python but not a feature value in JSON terms; a body built in Python
    # (Service.rank) may hold NumPy's numbers, which are taken as JSON's
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise _fail(f"features: {where} must be a number, got {_as_json(value)}")
    if isinstance(value, np.complexfloating):
        raise _fail(f"features: {where} must be a real number, got {_as_json(value)}")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond any float
        raise _fail(f"features: {where} exceeds the limit of +-{MAX_ABS_FEATURE:g}") from None
    if not math.isfinite(v):
        raise _fail(f"features: {where} is not finite ({value})")
    if abs(v) > MAX_ABS_FEATURE:
        raise _fail(f"features: {where} = {value} exceeds the limit of +-{MAX_ABS_FEATURE:g}")
    return v


def _vector(values: list[Any], where: Callable[[int], str]) -> np.ndarray:
    """``values`` as float64, every one a finite JSON number within the input limit."""
    # the usual case in one pass of C; the slow loop below only finds the culprit to name
    if all(type(v) is float or type(v) is int for v in values):
        try:
            x = np.array(values, dtype=np.float64)
        except OverflowError:  # an integer beyond any float: named below
            x = None
        if x is not None and np.all(np.abs(x) <= MAX_ABS_FEATURE):  # False for NaN, inf too
            return x
    return np.array([_number(v, where(i)) for i, v in enumerate(values)], dtype=np.float64)


def parse_features(value: Any, config: ServiceConfig) -> np.ndarray:
    """A feature vector from JSON: a list of ``n_features`` numbers or an object with exactly
    the schema's feature names. Raises :class:`RequestError` (422) naming the problem."""
    n = config.n_features
    if isinstance(value, np.ndarray):  # from Python, embedding the service: one row
        if value.ndim != 1:
            raise _fail(f"features: an array must be one row, got shape {value.shape}")
        value = list(value)
    elif isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        if len(value) != n:
            raise _fail(f"features: expected {n} values, got {len(value)}")
        return _vector(value, lambda i: f"value {i}")
    if isinstance(value, dict):
        names = config.feature_names
        if names is None:
            raise _fail("features: this service has no feature names; send a list of numbers")
        unknown = sorted(set(value) - set(names))
        missing = [name for name in names if name not in value]
        if unknown or missing:
            raise _fail(
                f"features: unknown names {_as_json(unknown[:5])}, missing names "
                f"{_as_json(missing[:5])} "
                f"({len(unknown)} unknown, {len(missing)} missing of {n})"
            )
        return _vector([value[name] for name in names], lambda i: repr(names[i]))
    raise _fail(
        f"features must be a list of {n} numbers or an object of named values, got "
        f"{type(value).__name__}"
    )


def _parse_id(value: Any, name: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= _MAX_ID or not value.isprintable():
        raise _fail(f"{name} must be a printable string of 1 to {_MAX_ID} characters")
    return value


def parse_rank(body: Any, config: ServiceConfig) -> tuple[np.ndarray, int | None, bool, bool]:
    """A ``/rank`` body's ``(features, key, ranking, scores)``: the feature vector, the draw key
    (``None``: the service's own) and whether the ranking and the scores are wanted. Raises
    :class:`RequestError` naming the problem."""
    _check_fields(body, {"features", "key", "ranking", "scores"}, {"features"}, "rank")
    x = parse_features(body["features"], config)
    key = body.get("key")
    if isinstance(key, np.integer):  # a body built in Python (Service.rank)
        key = int(key)
    if key is not None and (
        isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= MAX_KEY
    ):
        raise _fail(f"key must be an integer in [0, 2^64), got {_as_json(key)}")
    want_ranking = _flag(body, "ranking")
    want_scores = _flag(body, "scores")
    return x, key, want_ranking, want_scores


def parse_feedback(
    body: Any, config: ServiceConfig, index: Mapping[str, int]
) -> tuple[str, str, list[int], bool]:
    """A ``/feedback`` body's ``(feedback_id, impression, clicked, wait)``, ``clicked`` as the
    indices of the labels (``index``: a label's index). Raises :class:`RequestError` naming the
    problem."""
    _check_fields(
        body, {"impression", "clicked", "feedback_id", "wait"}, {"impression", "clicked"},
        "feedback",
    )  # fmt: skip
    impression = _parse_id(body["impression"], "impression")
    feedback_id = _parse_id(body.get("feedback_id", impression), "feedback_id")
    clicked = body["clicked"]
    if not isinstance(clicked, list):
        raise _fail(f"clicked must be a list of labels, got {type(clicked).__name__}")
    indices = []
    seen: set[int] = set()
    for label in clicked:
        if not isinstance(label, str):
            # the labels are strings: 1 is not the label "1"
            raise _fail(
                f"clicked: a label is a JSON string, got {_as_json(label)} ({type(label).__name__})"
            )
        if label not in index:
            raise _fail(f"clicked: unknown label {_as_json(label)}; {_known_labels(config.labels)}")
        if index[label] in seen:
            raise _fail(f"clicked: label {_as_json(label)} is repeated")
        seen.add(index[label])
        indices.append(index[label])
    wait = _flag(body, "wait")
    return feedback_id, impression, indices, wait
