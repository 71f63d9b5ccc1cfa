"""Property-based fuzzing of every public estimator (issue 14, item 7), with hypothesis.

Every class :func:`olboost.checks.all_estimators` finds, in each of its ``_unit_test_params``
configurations, and both scikit-learn adapters of :mod:`olboost.sklearn` get at least
:data:`EXAMPLES` (2,000) generated cases each, valid and invalid: feature vectors and dicts
(NaN, infinities, values beyond ``MAX_ABS_FEATURE``, Python ints too large for a float, wrong
widths and shapes, missing, extra and non-numeric keys, wrong types), targets (sets, empty
sets, River's ``{label: bool}`` with non-bool values, unknown labels and classes, wrong types),
feedback objects (full, top-k, of another model, of a kind the model does not learn from, an
impression in place of its feedback, clicks that were not shown), ``show_one`` / ``rank_one``
keys, the array paths (dense, sparse and nested lists, wrong widths, bad label matrices),
constructor, ``set_params`` and ``clone`` values, and parameters assigned before the first
example. Committees are driven through a ranking and a multiclass booster and through their
own ``predict`` / ``learn``; the exploration schemes through ``draw``, ``pair_probabilities``
and the feedback functions.

**What is documented** (the bad-input convention of issue 11: README "Input", the docstrings
of :mod:`olboost.online`, :mod:`olboost.checks`, :mod:`olboost.feedback` and
:mod:`olboost.sklearn`):

* An input a method cannot take raises ``ValueError`` (a bad value: a wrong width or shape,
  NaN where the model takes no missing value, an infinite or too large value, an unknown label
  or class, a parameter out of range, a feedback that does not fit the model) or ``TypeError``
  (a bad type: a feature vector that is neither a dict nor a 1-D vector, a non-numeric feature,
  a target that is neither a set, a ``{label: bool}`` dict nor a feedback the model learns
  from, a non-bool target value, a parameter of the wrong type), with a message, *before
  anything changes*: the model pickles to the same bytes after the rejection as before.
  Subclasses count (scikit-learn's ``NotFittedError`` is a ``ValueError``).
* A bad parameter is rejected naming it, at construction and in ``set_params`` (which then sets
  nothing), and, when it was assigned after construction, when the model starts (which leaves
  it unstarted).
* Scoring, ranking, predicting and showing never change a started model.

Anything else fails: another exception (``OverflowError``, ``IndexError``, ``KeyError``, a Numba
error, ...), an error without a message, a valid input rejected, an input known to be invalid
accepted, a rejection that changed the model, a prediction that did, or non-finite scores after
an accepted example. Inputs the convention leaves open (numeric strings in a vector, which NumPy
parses; NumPy complex scalars, which it casts with a ``ComplexWarning``) may be accepted or
rejected, but only as documented.

**Cost.** Each test builds and starts its small models once and pickles each; a case works on a
live copy, restored from those bytes (``pickle.loads``) only after a case changed it, and a
rejection or a prediction costs one ``pickle.dumps``. A hypothesis example costs more than a
small model's case (about a millisecond of bookkeeping), so it is shared: an example draws
``(model, first kind, seed, variant)`` and runs one case of every kind the model takes (learn,
predict, arrays, parameters, the top-k protocol, ...; a "case" is one input given to the
model), case ``j`` on a NumPy generator seeded by ``(seed, j)`` for its values and with its
own variant (an edge value, a flaw). Hypothesis shrinks to the smallest model, kind, seed and
variant, and prints which case of the example failed. ``ceil(EXAMPLES / kinds)`` examples give
at least :data:`EXAMPLES` cases per estimator (each test asserts it). Hypothesis runs
derandomized with no example database, so CI is deterministic; ``OLBOOST_FUZZ_EXAMPLES``
changes the number of cases (e.g. more for a longer local run).
"""

from __future__ import annotations

import functools
import math
import pickle
import re
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note, settings
from hypothesis import strategies as st

from fuzzing import EXAMPLES, FUZZ
from helpers import marks_for
from olboost import AdaBoostOLM, AdaOLMR, LabelRanker, VFDTCommittee
from olboost.boosters.topk import TopkBooster
from olboost.checks import _stream, _with_labels, all_estimators, synthetic_multilabel
from olboost.feedback import Feedback, FullFeedback, Impression, TopkFeedback
from olboost.feedback.exploration import Exploration, exploration_from, unbiased_estimate
from olboost.online import OnlineLearner, RankingLearner
from olboost.online.inputs import MAX_ABS_FEATURE
from olboost.rankers.label_ranker import UNIT_SLACK
from olboost.weak.base import Committee

DOCUMENTED = (ValueError, TypeError)
OK, BAD, ANY = "ok", "bad", "any"
D = 6  # features of the started models
NAMES = [f"f{j}" for j in range(D)]
VARIANTS = 32


def worst(*verdicts: str) -> str:
    """The verdict on an input made of parts: bad if a part is, else open if a part is."""
    if BAD in verdicts:
        return BAD
    return ANY if ANY in verdicts else OK


def pick(rng: np.random.Generator, items: list | tuple) -> Any:
    return items[int(rng.integers(0, len(items)))]


# ------------------------------------------------------------------------------ the sandbox


class Box:
    """One model under test: the pickle bytes of its state and a live copy, restored from them
    only after a case changed it; ``info`` says what inputs it takes."""

    def __init__(self, model: Any, **info: Any):
        self.info = info
        # pickling need not be a fixpoint at once (shared references); the second round is
        self.snapshot = pickle.dumps(pickle.loads(pickle.dumps(model)))
        self.live = pickle.loads(self.snapshot)
        assert pickle.dumps(self.live) == self.snapshot
        self.dirty = False

    def get(self) -> Any:
        if self.dirty:
            self.live = pickle.loads(self.snapshot)
            self.dirty = False
        return self.live

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        return f"<{self.info.get('label', type(self.live).__name__)}>"


def attempt(box: Box, call: Callable[[Any], Any], expect: str, *, changes: bool) -> Any:
    """Run ``call(model)`` on the box's live model and check the outcome against ``expect``:
    a documented rejection with a message that changed nothing (returned), or success (the
    result returned); ``changes`` says whether success may change the model."""
    model = box.get()
    box.dirty = True  # until the model is known to be unchanged (also when a check fails)
    try:
        out = call(model)
    except DOCUMENTED as err:
        if expect == OK:
            raise AssertionError(f"a valid input was rejected: {err!r}") from err
        assert str(err).strip(), f"{type(err).__name__} without a message"
        assert pickle.dumps(model) == box.snapshot, f"a rejected input changed the model: {err!r}"
        box.dirty = False
        return err
    if expect == BAD:
        raise AssertionError(f"an invalid input was accepted, giving {out!r}")
    if not changes:
        assert pickle.dumps(model) == box.snapshot, "a call that must not change the model did"
        box.dirty = False
    return out


def fuzz(boxes: list[Box], kinds: Callable[[Box], list[str]], cases: dict) -> dict[str, int]:
    """Run at least :data:`EXAMPLES` cases over ``boxes``; return how many of each kind ran.

    A hypothesis example draws ``(model, first kind, seed, variant)`` and runs every kind of
    case the model takes (``kinds(box)``, in order from the drawn one), case ``j`` with the
    generator seeded by ``(seed, j)`` and its own variant: the drawing costs as much as a case,
    so it is shared. There are enough examples for :data:`EXAMPLES` cases."""
    counts: dict[str, int] = {}
    n_kinds = max(len(kinds(box)) for box in boxes)
    examples = -(-EXAMPLES // min(len(kinds(box)) for box in boxes))

    @settings(FUZZ, max_examples=examples)
    @given(
        st.integers(0, len(boxes) - 1),
        st.integers(0, n_kinds - 1),
        st.integers(0, 2**32 - 1),
        st.integers(0, VARIANTS - 1),
    )
    def run(b: int, k: int, seed: int, variant: int) -> None:
        box = boxes[b]
        own = kinds(box)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow in drawing huge values
            for j in range(len(own)):
                kind = own[(k + j) % len(own)]
                v = (variant + 7 * j) % VARIANTS
                note(f"case {j}: {kind}, generator seeded with ({seed}, {j}), variant {v}")
                counts[kind] = counts.get(kind, 0) + 1
                cases[kind](box, np.random.default_rng((seed, j)), v)

    run()
    return counts


# ------------------------------------------------------------------------------ feature values

#: Edge values: the limits and just beyond, the float extremes, signed zero, subnormals.
EDGE_FLOATS = [
    0.0,
    -0.0,
    1.0,
    0.5,
    5e-324,
    -2.2250738585072014e-308,
    MAX_ABS_FEATURE,
    -MAX_ABS_FEATURE,
    float(np.nextafter(MAX_ABS_FEATURE, math.inf)),
    1e101,
    -1e160,
    1.7976931348623157e308,
    math.nan,
    math.inf,
    -math.inf,
    -1e-12,  # within the entropy's slack: read as 0
    -2e-6,
    1.000002,
]
EDGE_INTS = [0, 1, -1, 10**100, 10**100 + 10**84, 10**101, -(10**150), 2**1023, 2**1024, 10**400]


def special_float(rng: np.random.Generator, variant: int) -> float:
    """An edge value (by ``variant``) or a random one: any bit pattern (NaN payloads,
    subnormals, infinities), any magnitude, or one within the limits."""
    if variant < len(EDGE_FLOATS):
        return EDGE_FLOATS[variant]
    way = variant % 4
    if way == 0:
        return float(np.frombuffer(rng.bytes(8), dtype=np.float64)[0])
    if way == 1:
        return float(rng.normal() * 10.0 ** float(rng.integers(-320, 309)))
    if way == 2:
        return float(rng.uniform(-MAX_ABS_FEATURE, MAX_ABS_FEATURE))
    return float(rng.uniform(-1.0, 2.0))


def special_int(rng: np.random.Generator, variant: int) -> int:
    if variant < len(EDGE_INTS):
        return EDGE_INTS[variant]
    return int(rng.integers(-(2**62), 2**62)) ** int(rng.integers(1, 12))


def float_verdict(v: float, info: dict, col: int | None = None) -> str:
    """The verdict on the value ``v`` at column ``col``: NaN is a missing value, infinities and
    magnitudes beyond the limit are rejected, and so are values outside [0, 1] under the
    entropy (by more than its slack, a rescaler's rounding) and, in a nominal column, anything
    but a category code."""
    if math.isnan(v):
        return OK if info["missing"] else BAD
    if math.isinf(v) or abs(v) > MAX_ABS_FEATURE:
        return BAD
    if info["unit"] and not -UNIT_SLACK <= v <= 1.0 + UNIT_SLACK:
        return BAD
    card = info["nominal"].get(col)
    if card is not None and not (v == int(v) and 0 <= v < card):
        return BAD
    return OK


def int_verdict(v: int, info: dict, col: int | None = None) -> str:
    try:
        f = float(v)
    except OverflowError:
        return BAD
    return float_verdict(f, info, col)


def base_values(rng: np.random.Generator, width: int, info: dict) -> np.ndarray:
    """Valid feature values (a nominal column holds a category code)."""
    if info["unit"]:
        values = rng.uniform(size=width)
        values[rng.random(width) < 0.3] = float(rng.integers(0, 2))  # bag-of-words 0s and 1s
        return values
    values = rng.normal(size=width) * 10.0 ** float(rng.integers(-3, 4))
    row = info.get("row_width", width) if width else 0
    for col, card in info["nominal"].items():
        if col < row:
            values[col::row] = rng.integers(0, card, size=values[col::row].shape[0])
    return values


def width_verdict(width: int, info: dict) -> str:
    """A fresh model starts on any width, but its committee's nominal columns must exist."""
    if info["started"] or not info["nominal"]:
        return OK
    return OK if width > max(info["nominal"]) else BAD


class Weird:
    """An object that is no number."""

    def __repr__(self) -> str:
        return "Weird()"


#: Elements of a vector that are not floats, with the convention's verdict.
ELEMENTS = [
    ("abc", BAD),
    ("1.5", ANY),  # NumPy parses numeric strings in a vector
    (b"1", ANY),
    (None, "missing"),  # NumPy makes None NaN in a float vector
    (complex(1, 2), BAD),
    (np.complex128(1 + 1j), ANY),  # NumPy casts it with a ComplexWarning
    ([1.0], BAD),
    (Weird(), BAD),
    (Decimal("0.5"), OK),
    (Fraction(1, 3), OK),
    (True, OK),
    (np.float32(0.25), OK),
    (np.int64(1), OK),
]

#: Things that are no feature vector at all.
NOT_VECTORS = ["abc", b"abc", 3, 3.5, None, {1, 2}, Weird(), np.float64(1.0), np.array(1.0)]


def element_verdict(value: Any, verdict: str, info: dict, col: int) -> str:
    if verdict == "missing":
        return OK if info["missing"] else BAD
    if verdict == OK:
        return float_verdict(float(value), info, col)
    return verdict


def vector_form(rng: np.random.Generator, values: np.ndarray) -> Any:
    form = int(rng.integers(0, 5))
    if form == 0:
        return values.tolist()
    if form == 1:
        return tuple(values.tolist())
    if form == 2:
        return values.copy()
    if form == 3:
        return [np.float64(v) for v in values]
    return np.repeat(values, 2)[::2]  # a strided view


X_KINDS = ["valid", "valid", "special", "special", "int", "element", "width", "shape", "range",
           "object", "dict", "dict"]  # fmt: skip


def draw_x(rng: np.random.Generator, variant: int, info: dict) -> tuple[Any, str]:
    """A feature input for a model described by ``info``, and the convention's verdict."""
    started, keys = info["started"], info["keys"]
    kind = pick(rng, X_KINDS)
    width = D if started else int(rng.integers(1, 9))
    if kind == "dict" or (kind == "valid" and keys is not None):
        return draw_dict(rng, variant, info, width)
    vector_ok = OK if keys is None else BAD  # a model started on dicts takes dicts only
    vector_ok = worst(vector_ok, width_verdict(width, info))
    values = base_values(rng, width, info)
    at = int(rng.integers(0, width))
    if kind == "valid":
        return vector_form(rng, values), vector_ok
    if kind == "special":
        v = special_float(rng, variant)
        values[at] = v
        return vector_form(rng, values), worst(vector_ok, float_verdict(v, info, at))
    if kind == "int":
        v = special_int(rng, variant)
        out: list[Any] = values.tolist()
        out[at] = v
        return out, worst(vector_ok, int_verdict(v, info, at))
    if kind == "element":
        value, verdict = ELEMENTS[variant % len(ELEMENTS)]
        out = values.tolist()
        out[at] = value
        return out, worst(vector_ok, element_verdict(value, verdict, info, at))
    if kind == "width":
        n = int(rng.integers(0, D + 4))
        if started and n == D:
            n = 0
        bad = n == 0 or started
        verdict = BAD if bad else worst(OK if keys is None else BAD, width_verdict(n, info))
        return vector_form(rng, base_values(rng, n, info)), verdict
    if kind == "shape":
        return np.full(pick(rng, [(1, width), (width, 1), (2, width), (0,), ()]), 0.5), BAD
    if kind == "range":
        return range(width), worst(vector_ok, ANY)
    return NOT_VECTORS[variant % len(NOT_VECTORS)], BAD


#: Values under a dict key that are not floats, with the convention's verdict.
DICT_VALUES = [
    ("1.0", BAD),  # strings are rejected in dicts, even numeric ones
    (b"1", BAD),
    (None, "missing"),
    (complex(1, 2), BAD),
    (np.complex128(1 + 1j), ANY),
    ([], BAD),
    ({}, BAD),
    (np.array([1.0, 2.0]), BAD),
    (Weird(), BAD),
    (Decimal("0.5"), OK),
    (True, OK),
    (np.int8(1), OK),
]

#: Keys of a first dict: any hashables.
FIRST_KEYS = ["a", "b", 3, 4, (1, 2), 2.5, "f0", frozenset({1}), None]


def draw_dict(rng: np.random.Generator, variant: int, info: dict, width: int) -> tuple[Any, str]:
    keys, started = info["keys"], info["started"]
    verdict = OK
    if not started:
        chosen = rng.choice(len(FIRST_KEYS), size=min(width, len(FIRST_KEYS)), replace=False)
        keys = [FIRST_KEYS[i] for i in chosen]
        verdict = width_verdict(len(keys), info)
    elif keys is None:
        keys, verdict = NAMES, BAD  # a dict to a model started on vectors
    columns = sorted(keys, key=lambda key: (str(key), type(key).__name__))  # the model's order
    values = base_values(rng, len(keys), info)
    x: dict[Any, Any] = {columns[i]: float(values[i]) for i in rng.permutation(len(keys))}
    key = pick(rng, keys)
    col = columns.index(key)
    mutation = int(rng.integers(0, 8))
    # a label ranker's dict is sparse: an absent key is 0, an unseen one a new feature
    sparse_ok = OK if info["missing"] or info["sparse_dicts"] else BAD
    if mutation == 1 and started:  # a key missing
        del x[key]
        verdict = worst(verdict, sparse_ok)
    elif mutation == 2 and started:  # a key the first example did not have
        x["extra"] = 1.0
        verdict = worst(verdict, sparse_ok)
    elif mutation == 3:
        v = special_float(rng, variant)
        x[key] = v
        verdict = worst(verdict, float_verdict(v, info, col))
    elif mutation == 4:
        value, v = DICT_VALUES[variant % len(DICT_VALUES)]
        x[key] = value
        if v == "missing":
            v = OK if info["missing"] else BAD
        elif v == OK:
            v = float_verdict(float(value), info, col)
        verdict = worst(verdict, v)
    elif mutation == 5:
        v = special_int(rng, variant)
        x[key] = v
        verdict = worst(verdict, int_verdict(v, info, col))
    elif mutation == 6 and not started:
        # no features: an example of zeros to a label ranker (its dicts are sparse)
        x, verdict = {}, OK if info["sparse_dicts"] else BAD
    form = int(rng.integers(0, 3))
    if form == 1:
        return types.MappingProxyType(x), verdict
    if form == 2:
        return OrderedDict(x), verdict
    return x, verdict


# ------------------------------------------------------------------------------ targets

#: Labels and classes no model of these tests has (none equals 0..3 nor "a", "b", "c").
UNKNOWN = [99, -1, "zz", None, (0,), 0.5, 4, "A"]
NOT_BOOLS = [0, 1, 1.0, "yes", "True", None, np.int64(1), [], 0.0, np.float64(1.0)]


class OtherFeedback(Feedback):
    """A kind of feedback no booster learns from."""


Y_KINDS = ["set", "set", "river", "not bool", "unknown", "full", "topk", "other", "wrong"]


def draw_labels_target(rng: np.random.Generator, variant: int, info: dict) -> tuple[Any, str]:
    """A ranking target: a set, River's dict, a feedback object, or something wrong."""
    labels = info["outputs"]
    m = len(labels)
    kind = pick(rng, Y_KINDS)
    mask = rng.random(m) < pick(rng, [0.0, 0.4, 1.0, 0.4])  # empty and full sets too
    chosen = [labels[j] for j in np.flatnonzero(mask)]
    if kind == "set":
        return (set(chosen) if variant % 2 else frozenset(chosen)), OK
    if kind == "river":
        keep = rng.random(m) < 0.8  # labels absent from the dict are irrelevant
        numpy_bools = variant % 2 == 1
        y = {labels[j]: (np.bool_(mask[j]) if numpy_bools else bool(mask[j]))
             for j in range(m) if keep[j]}  # fmt: skip
        return y, OK
    if kind == "not bool":
        y = {label: bool(mask[j]) for j, label in enumerate(labels)}
        y[pick(rng, labels)] = NOT_BOOLS[variant % len(NOT_BOOLS)]
        return y, BAD
    if kind == "unknown":
        bad = UNKNOWN[variant % len(UNKNOWN)]
        if bad in labels:
            return set(chosen), OK
        if variant % 2:
            return {*chosen, bad}, BAD
        return {**dict.fromkeys(chosen, True), bad: bool(rng.integers(0, 2))}, BAD
    if kind == "full":
        width = m if variant % 3 else int(rng.integers(0, m + 3))
        return FullFeedback(rng.random(width) < 0.5), OK if width == m else BAD
    if kind == "topk":
        return draw_topk_feedback(rng, variant, info)
    if kind == "other":
        return OtherFeedback(), BAD
    wrong = [chosen, tuple(chosen), "ab", 1, None, mask, iter(chosen), 1.5, labels[0]]
    return wrong[variant % len(wrong)], BAD


def draw_topk_feedback(rng: np.random.Generator, variant: int, info: dict) -> tuple[Any, str]:
    """A hand-made top-k feedback over the model's labels: valid, or with a flaw (another
    number of labels shown, an index outside the labels, the source of another model)."""
    m = len(info["outputs"])
    k = info["k"] or 2
    flaw = variant % 5
    size = int(rng.integers(1, m + 1)) if flaw == 1 else k
    shown = rng.choice(m, size=size, replace=False)
    if flaw == 2:
        # (a negative index is refused when the feedback is built: case_feedback)
        shown[int(rng.integers(0, size))] = pick(rng, [m, m + 5, 2 * m])
    probs = rng.uniform(0.05, 1.0, size=(size, size))
    probs = np.triu(probs, 1) + np.triu(probs, 1).T + np.eye(size)
    source = "another model" if flaw == 3 else None
    feedback = TopkFeedback(shown, rng.random(size) < 0.5, probs, source)
    if not info.get("topk"):
        return feedback, BAD  # a full-feedback learner takes no partial feedback
    shown_ok = np.all((0 <= shown) & (shown < m))
    return feedback, OK if (size == k and shown_ok and flaw != 3) else BAD


def draw_class(rng: np.random.Generator, variant: int, info: dict) -> tuple[Any, str]:
    classes = info["outputs"]
    if variant % 3:
        return pick(rng, classes), OK
    bad = [*UNKNOWN, [0], {}, {0}][variant % (len(UNKNOWN) + 3)]
    return bad, OK if bad in classes else BAD


def draw_target(rng: np.random.Generator, variant: int, info: dict) -> tuple[Any, str]:
    if info["ranker"]:
        return draw_labels_target(rng, variant, info)
    return draw_class(rng, variant, info)


# ------------------------------------------------------------------------------ learner boxes


def learner_boxes(model: OnlineLearner, label: str, params: dict) -> list[Box]:
    """The model fresh, started on 12 vectors, and started on 12 dicts."""
    model = _with_labels(model)
    X, ys = _stream(model, 12)
    committee = getattr(model, "committee", None)
    for col, card in (getattr(committee, "nominal_attributes", None) or {}).items():
        X[:, col] = np.floor(np.abs(X[:, col]) * 10.0) % card  # category codes
    boxes = []
    for how in (None, "vectors", "dicts"):
        m = model.clone()
        for x, y in zip(X, ys, strict=True) if how else ():
            m.learn_one(dict(zip(NAMES, x, strict=True)) if how == "dicts" else x, y)
        info = {
            "label": f"{label}/{how or 'fresh'}",
            "cls": type(m),
            "params": params,
            "started": how is not None,
            "keys": NAMES if how == "dicts" else None,
            "missing": m._missing_allowed(),
            "sparse_dicts": isinstance(m, LabelRanker),
            # the entropy takes [0, 1] unless the ranker scales its features into it
            "unit": getattr(m, "complexity", None) == "entropy"
            and getattr(m, "scale", "none") == "none",
            "nominal": dict(getattr(m.committee, "nominal_attributes", None) or {})
            if hasattr(m, "committee") and m.committee is not None
            else {},
            "outputs": list(m._outputs()),
            "ranker": isinstance(m, RankingLearner),
            "topk": isinstance(m, TopkBooster),
            "k": getattr(m, "k", None),
            "reference": X[0],
        }
        boxes.append(Box(m, **info))
    return boxes


def reference_x(box: Box) -> Any:
    x = box.info["reference"]
    return dict(zip(NAMES, x, strict=True)) if box.info["keys"] is not None else x


def check_scores(box: Box) -> None:
    """After an accepted example the model still scores finitely."""
    model = box.live
    if box.info["ranker"]:
        s = list(model.score_one(reference_x(box)).values())
    else:
        s = list(model.predict_proba_one(reference_x(box)).values())
    assert np.all(np.isfinite(s)), f"non-finite scores after an accepted example: {s}"


# ------------------------------------------------------------------------------ learner cases


def case_learn_one(box: Box, rng: np.random.Generator, variant: int) -> None:
    x, xv = draw_x(rng, variant, box.info)
    y, yv = draw_target(rng, variant // 2, box.info)
    out = attempt(box, lambda m: m.learn_one(x, y), worst(xv, yv), changes=True)
    if not isinstance(out, Exception) and box.info["started"]:
        check_scores(box)


def draw_key(rng: np.random.Generator, variant: int) -> tuple[Any, str]:
    keys: list[Any] = [None, 0, 2**64 - 1, np.uint64(5), np.int64(3), int(rng.integers(0, 2**63))]
    bad: list[Any] = [-1, 2**64, 2**70, 1.0, "1", True, [], np.float64(2.0), np.int64(-4)]
    if variant % 2:
        return keys[variant % len(keys)], OK
    return bad[variant % len(bad)], BAD


def case_predict(box: Box, rng: np.random.Generator, variant: int) -> None:
    info = box.info
    x, xv = draw_x(rng, variant, info)
    how = int(rng.integers(0, 4))
    outputs = info["outputs"]
    if info["nominal"] and not info["started"] and xv == BAD:
        xv = ANY  # before the start there is no committee to see a nominal code
    if not info["ranker"]:
        method = ["predict_one", "predict_proba_one"][how % 2]
        out = attempt(box, lambda m: getattr(m, method)(x), xv, changes=False)
        if isinstance(out, dict):
            p = np.array(list(out.values()))
            assert list(out) == outputs and np.all(p >= 0) and math.isclose(p.sum(), 1.0)
        elif not isinstance(out, Exception):
            assert out in outputs
        return
    if info["topk"] and how >= 2:
        key, kv = draw_key(rng, variant // 3)
        if how == 2:
            # the first show starts a fresh model, as a first learn_one would
            out = attempt(box, lambda m: m.show_one(x, key), worst(xv, kv),
                          changes=not info["started"])  # fmt: skip
            if isinstance(out, Impression):
                assert len(out.labels) == info["k"] and out.probs.shape == (info["k"],) * 2
                assert sorted(out.ranking, key=repr) == sorted(outputs, key=repr)
            return
        out = attempt(box, lambda m: m.rank_one(x, key), worst(xv, kv), changes=False)
    else:
        method = ["score_one", "rank_one", "predict_one", "score_one"][how]
        out = attempt(box, lambda m: getattr(m, method)(x), xv, changes=False)
    if isinstance(out, dict):
        assert list(out) == outputs and np.all(np.isfinite(list(out.values())))
    elif isinstance(out, list):
        assert sorted(out, key=repr) == sorted(outputs, key=repr)


def draw_matrix(
    rng: np.random.Generator, variant: int, info: dict
) -> tuple[Any, str, int, int | None]:
    """An ``(n, width)`` feature matrix, dense, sparse or nested lists, maybe with a flaw; the
    verdict, ``n``, and the row of a flaw only the committee sees (a nominal code), before
    which the rows are learned (the array paths learn a stream up to its first bad row)."""
    n = int(rng.integers(0, 5))
    flaw = int(rng.integers(0, 5))
    width = D if info["started"] else int(rng.integers(1, 8))
    verdict = OK
    committee_row = None
    if flaw == 1:  # another width
        width = int(rng.integers(0, D + 3))
        verdict = BAD if width == 0 or (info["started"] and width != D) else OK
    verdict = worst(verdict, width_verdict(width, info) if n else OK)
    X = base_values(rng, n * width, {**info, "row_width": width}).reshape(n, width)
    if flaw == 2 and n:
        v = special_float(rng, variant)
        row, col = int(rng.integers(0, n)), int(rng.integers(0, width))
        X[row, col] = v
        if verdict == OK and float_verdict(v, info, col) == BAD:
            if float_verdict(v, {**info, "nominal": {}}) == OK:
                committee_row = row  # only a nominal code is wrong
        verdict = worst(verdict, float_verdict(v, info, col))
    if flaw == 3:
        return X.ravel(), BAD, n, None  # 1-D
    if info["started"] and info["keys"] is not None:
        # a model started on dicts reads a matrix by column name (a DataFrame): these have
        # none, and were read by position (sorted keys against columns)
        verdict, committee_row = BAD, None
    form = int(rng.integers(0, 4))
    if form == 1:
        X = sp.csr_array(X)
    elif form == 2 and n:
        X = X.tolist()
    elif form == 3:
        X = duplicated_csr(X)
    return X, verdict, n, committee_row


def duplicated_csr(X: np.ndarray) -> sp.csr_array:
    """``X`` as a CSR matrix that stores each finite non-zero value as two halves (a valid,
    non-canonical CSR matrix: scipy adds duplicates up, so it means ``X``)."""
    indptr, indices, data = [0], [], []
    for row in X:
        for j in np.flatnonzero(row):
            v = row[j]
            halves = [v / 2.0, v - v / 2.0] if np.isfinite(v) else [v]
            indices += [j] * len(halves)
            data += halves
        indptr.append(len(data))
    return sp.csr_array((np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64),
                         np.array(indptr)), shape=X.shape)  # fmt: skip


def draw_label_matrix(rng: np.random.Generator, info: dict, n: int) -> tuple[Any, str]:
    m = len(info["outputs"])
    flaw = int(rng.integers(0, 5))
    Y = rng.random((n, m)) < 0.4
    if flaw == 1:
        return Y.astype(np.int64), OK
    if flaw == 2:  # another number of labels or of rows, or 1-D
        return rng.random(pick(rng, [(n, m + 1), (n + 1, m), (n, 1), (n,)])) < 0.5, BAD
    if flaw == 3 and n:
        Z = Y.astype(np.float64)
        Z[int(rng.integers(0, n)), int(rng.integers(0, m))] = pick(rng, [2.0, -1.0, 0.5, math.nan])
        return Z, BAD
    return Y, OK


def draw_classes(rng: np.random.Generator, info: dict, n: int) -> tuple[Any, str]:
    classes = info["outputs"]
    flaw = int(rng.integers(0, 4))
    y = [classes[j] for j in rng.integers(0, len(classes), size=n)]
    if flaw == 1 and n:
        y[int(rng.integers(0, n))] = pick(rng, ["zz", 99, None, 0.5])
        return y, BAD
    if flaw == 2:
        return [*y, classes[0]], BAD
    return (np.array(y) if flaw == 3 else y), OK


def case_arrays(box: Box, rng: np.random.Generator, variant: int) -> None:
    info = box.info
    X, xv, n, committee_row = draw_matrix(rng, variant, info)
    how = int(rng.integers(0, 3))
    k = len(info["outputs"])
    if how == 0:  # scoring only
        method = "score" if info["ranker"] else pick(rng, ["votes", "predict"])
        if info["nominal"] and not info["started"] and xv == BAD:
            xv = ANY  # before the start there is no committee to see nominal columns
        out = attempt(box, lambda m: getattr(m, method)(X), xv, changes=False)
        if isinstance(out, np.ndarray) and method != "predict":
            assert out.shape == (n, k) and np.all(np.isfinite(out))
        if isinstance(out, np.ndarray) and sp.issparse(X):  # a sparse matrix means X.toarray()
            assert np.array_equal(out, getattr(box.live, method)(X.toarray()))
        return
    if info["ranker"]:
        Y, yv = draw_label_matrix(rng, info, n)
        method = "learn" if how == 1 else "score_then_learn"
    else:
        Y, yv = draw_classes(rng, info, n)
        method = "learn" if how == 1 else "predict_then_learn"
    if committee_row and yv == OK:
        # a stream learns its rows up to the first one its committee rejects
        model = box.get()
        box.dirty = True
        with pytest.raises(ValueError, match="nominal"):
            getattr(model, method)(X, Y)
        reference = pickle.loads(box.snapshot)
        getattr(reference, method)(X[:committee_row], Y[:committee_row])
        assert pickle.dumps(model) == pickle.dumps(reference), "not the rows before the bad one"
        return
    out = attempt(box, lambda m: getattr(m, method)(X, Y), worst(xv, yv), changes=True)
    if isinstance(out, np.ndarray):
        assert out.shape == (n, k) and np.all(np.isfinite(out))


def case_topk(box: Box, rng: np.random.Generator, variant: int) -> None:
    """The live top-k protocol: show, then learn the feedback of the clicks; clicks that were
    not shown, the impression in place of its feedback; the estimated costs of a feedback."""
    info = box.info
    x = reference_x(box)
    how = variant % 5
    if how == 3:
        feedback, verdict = draw_topk_feedback(rng, variant // 5, info)
        if not info["started"]:
            verdict = BAD  # "learn one example first"
        out = attempt(box, lambda m: m.estimated_costs(x, feedback), verdict, changes=False)
        if isinstance(out, np.ndarray):
            assert np.all(np.isfinite(out))
        return
    model = box.get()
    box.dirty = True  # until shown to be unchanged
    impression = model.show_one(x, int(rng.integers(0, 2**63)))
    labels = list(impression.labels)
    if not info["started"]:  # the first show starts the model: it then learns the clicks
        model.learn_one(x, impression.feedback(labels[:1]))
        return
    assert pickle.dumps(model) == box.snapshot, "showing changed the model"
    box.dirty = False
    clicked = [label for label in labels if rng.random() < 0.5]
    if how == 1:  # a click on a label that was not shown, or twice on one
        others = [label for label in info["outputs"] if label not in labels] + [99]
        with pytest.raises(ValueError, match="not shown|repeated"):
            impression.feedback([*clicked, pick(rng, [*others, labels[0]])] * 2)
        return
    if how == 2:
        attempt(box, lambda m: m.learn_one(x, impression), BAD, changes=True)
        return
    feedback = impression.feedback(clicked)
    attempt(box, lambda m: m.learn_one(x, feedback), OK, changes=True)
    check_scores(box)


# ------------------------------------------------------------------------------ parameters

GARBAGE: list[Any] = [
    None, True, False, -1, 0, 1, 2, 3, 10**30, -0.5, 0.0, 0.3, 1.0, 2.5, math.nan, math.inf,
    -math.inf, 1e308, "", "abc", "I", "exact", "uniform", "learn", [], [1], ["a", "a"],
    ["a", "b"], [[1], [2]], (0.1, 0.9), (0.9, 0.1), (1.0, math.nan), (0.0, 1.0), (1, 2, 3), {},
    {0: 2}, Weird(), VFDTCommittee(), np.int64(2), np.float64(0.5),
]  # fmt: skip


@functools.cache
def param_values(cls: type, name: str) -> list[Any]:
    constraint = getattr(cls, "_param_constraints", {}).get(name)
    options = list(getattr(constraint, "options", ()))
    return [*GARBAGE, *options]


def tame(value: Any) -> bool:
    """Small enough to start a model with (a huge int sizes arrays or loops)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return value <= 64
    if isinstance(value, list | tuple):
        return len(value) <= 64 and all(tame(v) for v in value)
    return True


def names_param(err: Exception, names: list[str]) -> bool:
    """Whether the message names one of ``names`` (the parameter, or one it conflicts with)."""
    return any(
        re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", str(err)) for name in names
    )


def param_trial(
    cls: type, base: dict, rng: np.random.Generator, variant: int
) -> tuple[Any, str, Any] | None:
    """A parameter of ``cls`` (or an unknown name) and a value for it, tried at construction,
    ``clone`` and ``set_params``: a rejected value must be reported as such, naming the
    parameter, and leave the template untouched. ``(template, name, value)`` when the value was
    accepted, ``None`` when nothing is left to check."""
    name = pick(rng, [*cls._param_names(), "no_such_parameter"])
    values = param_values(cls, name)
    value = values[variant % len(values)] if rng.random() < 0.8 else special_float(rng, variant)
    template = cls(**base)
    before = pickle.dumps(template)
    if name == "no_such_parameter":
        with pytest.raises(ValueError, match="no_such_parameter"):
            template.clone({name: value}) if variant % 2 else template.set_params(**{name: value})
        assert pickle.dumps(template) == before
        return None
    try:
        model = cls(**{**base, name: value})
    except DOCUMENTED as err:
        # a value that conflicts with another parameter may be reported under that one (e.g.
        # labels=2 with k=3: "k=3 must be in [2, m=2] labels")
        assert names_param(err, [name, *cls._param_names()]), f"{cls.__name__}({name}=...): {err!r}"
        with pytest.raises(DOCUMENTED):
            template.set_params(**{name: value})
        assert pickle.dumps(template) == before, "a rejected set_params changed the estimator"
        return None
    assert repr(model.clone()) == repr(model)
    return template, name, value


def case_params(box: Box, rng: np.random.Generator, variant: int) -> None:
    """Constructor, ``set_params`` and ``clone`` values, and a value assigned after
    construction, checked when the model starts."""
    cls, base = box.info["cls"], box.info["params"]
    trial = param_trial(cls, base, rng, variant)
    if trial is None:
        return
    template, name, value = trial
    template.set_params(**{name: value})
    if not (isinstance(template, OnlineLearner) and tame(value)):
        return
    # assigned after construction (as River's mutate does): checked again at the start
    fresh = cls(**base)
    setattr(fresh, name, value)
    try:
        outputs = fresh._outputs()
    except DOCUMENTED:
        return  # the outputs are unknown: a first learn_one would say so
    if not outputs:
        return
    x = rng.uniform(size=D)
    y = {outputs[0]} if isinstance(fresh, RankingLearner) else outputs[0]
    attempt(Box(fresh), lambda m: m.learn_one(x, y), ANY, changes=True)


# ------------------------------------------------------------------------------ the learner tests

LEARNER_CASES = {
    "learn_one": case_learn_one,
    "predict": case_predict,
    "arrays": case_arrays,
    "params": case_params,
    "topk": case_topk,
}


def learner_kinds(box: Box) -> list[str]:
    kinds = ["learn_one", "learn_one", "learn_one", "predict", "predict", "arrays", "params"]
    return [*kinds, "topk", "topk"] if box.info["topk"] else kinds


def classes_of(kind: type) -> list[type]:
    return [cls for cls in all_estimators() if issubclass(cls, kind)]


LEARNERS = classes_of(OnlineLearner)
COMMITTEES = classes_of(Committee)
EXPLORATIONS = classes_of(Exploration)


def test_every_public_estimator_is_fuzzed():
    fuzzed = {*LEARNERS, *COMMITTEES, *EXPLORATIONS}
    assert set(all_estimators()) == fuzzed, set(all_estimators()) ^ fuzzed
    assert len(LEARNERS) >= 11 and len(COMMITTEES) == 4 and len(EXPLORATIONS) == 2


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_fuzz_learner(cls):
    boxes = []
    for i, params in enumerate(cls._unit_test_params()):
        boxes += learner_boxes(cls(**params), f"{cls.__name__}[{i}]", params)
    counts = fuzz(boxes, learner_kinds, LEARNER_CASES)
    assert sum(counts.values()) >= EXAMPLES, counts


# ------------------------------------------------------------------------------ committees

N_LEARNERS, N_LABELS = 4, 4


def learners_of(cls: type) -> int:
    """Learners per committee: 4 (a mix of three parts needs them), 2 River trees (a River
    model is a graph of Python objects: pickling one, as every case does, takes milliseconds)."""
    return 2 if cls.__name__ == "RiverCommittee" else N_LEARNERS


def committee_kinds(box: Box) -> list[str]:
    if box.info.get("direct"):
        return ["committee", "committee", "committee", "committee", "committee", "committee",
                "params"]  # fmt: skip
    return learner_kinds(box)


def committee_boxes(cls: type, i: int, params: dict) -> list[Box]:
    """The committee through a ranking and a multiclass booster (fresh, started on vectors and
    on dicts), and on its own, started and taught a few rounds."""
    committee = cls(**params)
    label = f"{cls.__name__}[{i}]"
    n = learners_of(cls)
    boxes = []
    for booster in (
        AdaOLMR(committee, learners=n, seed=1, labels=N_LABELS),
        AdaBoostOLM(committee, learners=n, seed=1, classes=N_LABELS),
    ):
        boxes += learner_boxes(booster, f"{label}/{type(booster).__name__}", {})
    direct = committee.clone()
    direct.start(n, N_LABELS, D, 1)
    X, Y = synthetic_multilabel(n=10, d=D, k=N_LABELS)
    for col, card in (params.get("nominal_attributes") or {}).items():
        X[:, col] = np.floor(np.abs(X[:, col]) * 10.0) % card  # category codes
    for x, y in zip(X, Y, strict=True):
        direct.learn(x, np.where(y, 1.0, 0.0)[None, :] * np.linspace(0.5, 1.5, n)[:, None])
    boxes.append(Box(direct, label=f"{label}/direct", direct=True, reference=X[0]))
    for box in boxes:
        box.info.update(param_cls=cls, param_base=params)
    return boxes


def case_committee(box: Box, rng: np.random.Generator, variant: int) -> None:
    """A committee's own ``predict(x)`` and ``learn(x, weights)``: ``x`` a float vector of the
    started width (NaN only where the learners take missing values; the booster checks the
    magnitude), ``weights`` an ``(N, k)`` array of finite non-negative numbers."""
    model = box.get()
    info = {"missing": model.handles_missing, "unit": False, "nominal": {}}
    n_attributes = model.n_attributes_
    nominal = dict(getattr(model, "nominal_attributes", None) or {})
    x = rng.normal(size=n_attributes)
    for col, card in nominal.items():
        x[col] = float(rng.integers(0, card))
    verdict = OK
    flaw = int(rng.integers(0, 4))
    if flaw == 1:
        width = pick(rng, [n_attributes - 1, n_attributes + 1, 0])
        x = rng.normal(size=width)
        verdict = BAD
    elif flaw == 2:
        v = special_float(rng, variant)
        if abs(v) > MAX_ABS_FEATURE and math.isfinite(v):
            v = math.copysign(MAX_ABS_FEATURE, v)
        col = int(rng.integers(0, n_attributes))
        x[col] = v
        verdict = float_verdict(v, {**info, "nominal": nominal}, col)
    if rng.random() < 0.4:
        out = attempt(box, lambda m: m.predict(x), verdict, changes=False)
        if isinstance(out, np.ndarray):
            assert out.shape == (model.n_learners_, N_LABELS) and np.allclose(out.sum(axis=1), 1)
        return
    n_learners = model.n_learners_
    weights = rng.uniform(0.0, 2.0, size=(n_learners, N_LABELS))
    weights[rng.random(weights.shape) < 0.5] = 0.0
    wflaw = int(rng.integers(0, 6))
    if wflaw == 1:
        weights = weights[:, :-1] if variant % 2 else weights[None]
        verdict = BAD
    elif wflaw == 2:
        weights[int(rng.integers(0, n_learners)), int(rng.integers(0, N_LABELS))] = pick(
            rng, [-1.0, -5e-324, math.nan, math.inf, -math.inf]
        )
        verdict = BAD
    elif wflaw == 3:
        weights = weights * 10.0 ** float(rng.integers(-300, 7))  # tiny to large, all valid
    out = attempt(box, lambda m: m.learn(x, weights), verdict, changes=True)
    if not isinstance(out, Exception):
        H = box.live.predict(box.info["reference"])
        assert np.all(np.isfinite(H)) and np.allclose(H.sum(axis=1), 1.0), H


def case_committee_params(box: Box, rng: np.random.Generator, variant: int) -> None:
    """The committee's parameters: at construction and ``set_params``, and assigned to a
    booster's committee before its first example (the booster checks them at its start)."""
    cls, base = box.info["param_cls"], box.info["param_base"]
    trial = param_trial(cls, base, rng, variant)
    if trial is None:
        return
    _, name, value = trial
    if not tame(value):
        return
    booster = AdaOLMR(cls(**base), learners=learners_of(cls), seed=1, labels=N_LABELS)
    setattr(booster.committee, name, value)  # e.g. River's mutate
    x = rng.uniform(size=D)
    attempt(Box(booster), lambda m: m.learn_one(x, {0}), ANY, changes=True)


COMMITTEE_CASES = {
    **LEARNER_CASES,
    "committee": case_committee,
    "params": lambda box, rng, variant: case_committee_params(box, rng, variant),
}

#: Configurations added to ``_unit_test_params`` here: nominal attributes, which the shared
#: checks leave out (they feed real-valued streams).
EXTRA_COMMITTEE_PARAMS = {
    "VFDTCommittee": [{"grace_period": (1.0, 3.0), "nominal_attributes": {0: 3, 4: 2}}],
}


@pytest.mark.parametrize("cls", [pytest.param(c, marks=marks_for(c)) for c in COMMITTEES],
                         ids=lambda c: c.__name__)  # fmt: skip
def test_fuzz_committee(cls):
    configs = [*cls._unit_test_params(), *EXTRA_COMMITTEE_PARAMS.get(cls.__name__, [])]
    boxes = []
    for i, params in enumerate(configs):
        boxes += committee_boxes(cls, i, params)
    counts = fuzz(boxes, committee_kinds, COMMITTEE_CASES)
    assert sum(counts.values()) >= EXAMPLES, counts


# ------------------------------------------------------------------------------ exploration


def draw_ranking(rng: np.random.Generator, variant: int, min_k: int) -> tuple[Any, Any, str]:
    """A deterministic ranking and a ``k``: valid, or with a flaw."""
    m = int(rng.integers(2, 8))
    ranking: Any = rng.permutation(m)
    k: Any = int(rng.integers(min(min_k, m), m + 1))
    verdict = OK if min_k <= k <= m else BAD
    flaw = int(rng.integers(0, 8))
    if flaw == 1:
        k = pick(rng, [-1, 0, 1, m + 1, 2.5, "2", True, None, np.int64(2), np.int8(m)])
        valid_int = isinstance(k, int | np.integer) and not isinstance(k, bool)
        verdict = OK if valid_int and min_k <= k <= m else BAD
    elif flaw == 2:
        bad = [
            [0] * m,
            list(range(1, m + 1)),
            ranking.astype(np.float64),
            ranking[None, :],
            "ab",
            [],
            [0],
            [*range(m - 1), 2**70],
            [*ranking.tolist(), -1],
        ]
        ranking, verdict = bad[variant % len(bad)], BAD
    elif flaw == 3:
        ranking = ranking.tolist() if variant % 2 else ranking.astype(np.uint8)
    return ranking, k, verdict


def case_draw(box: Box, rng: np.random.Generator, variant: int) -> None:
    explore = box.live
    ranking, k, verdict = draw_ranking(rng, variant, explore.min_k)
    seed: Any = int(rng.integers(0, 2**62)) ** int(rng.integers(1, 3))
    rnd: Any = int(rng.integers(0, 2**63))
    key: Any = int(rng.integers(0, 2**63)) * 2
    which = int(rng.integers(0, 6))
    if which == 1:
        seed = pick(rng, [-1, 1.5, "1", None, True, np.int64(-3)])
        verdict = BAD
    elif which == 2:
        rnd = pick(rng, [-1, 2**63, 2**70, 1.5, "1", True])
        verdict = BAD
    elif which == 3:
        key = pick(rng, [-1, 2**64, 1.5, "1", True, [], np.float64(1.0)])
        verdict = BAD
    elif which == 4:
        key = pick(rng, [None, 0, 2**64 - 1, np.uint64(7)])
    out = attempt(box, lambda e: e.draw(ranking, k, seed, rnd, key), verdict, changes=False)
    if isinstance(out, np.ndarray):
        assert sorted(out.tolist()) == sorted(np.asarray(ranking).tolist())
        assert np.array_equal(out, explore.draw(ranking, k, seed, rnd, key)), "not pure"


def case_pairs(box: Box, rng: np.random.Generator, variant: int) -> None:
    explore = box.live
    ranking, k, verdict = draw_ranking(rng, variant, explore.min_k)
    if rng.random() < 0.3:
        attempt(box, lambda e: e.check_k(len(np.atleast_1d(ranking)), k), ANY, changes=False)
        return
    P = attempt(box, lambda e: e.pair_probabilities(ranking, k), verdict, changes=False)
    if isinstance(P, np.ndarray):
        m = P.shape[0]
        assert np.array_equal(P, P.T) and np.all((P > 0) & (P <= 1 + 1e-12))
        assert math.isclose(np.trace(P), k, rel_tol=1e-9), "the top k must hold k labels"
        assert math.isclose(P.sum() - np.trace(P), k * (k - 1), rel_tol=1e-9), (m, k)


def case_feedback(box: Box, rng: np.random.Generator, variant: int) -> None:
    """The feedback objects and the unbiased estimate, built from random (maybe bad) parts."""
    m = int(rng.integers(2, 7))
    k = int(rng.integers(1, m + 1))
    shown: Any = rng.choice(m, size=k, replace=False)
    relevant: Any = rng.random(k) < 0.5
    probs: Any = rng.uniform(0.05, 1.0, size=(k, k))
    probs = np.triu(probs, 1) + np.triu(probs, 1).T + np.eye(k)
    verdict = OK
    flaw = variant % 8
    if flaw == 1:
        past_int64 = np.array([2**63 + i for i in range(k)], dtype=np.uint64)
        shown, verdict = pick(rng, [shown.astype(float), shown[None], [0] * k if k > 1 else "a",
                                    [2**70] * k, -shown - 1, past_int64]), BAD  # fmt: skip
    elif flaw == 2:
        relevant, verdict = pick(rng, [relevant.astype(int), relevant[:-1], None, "yes"]), BAD
    elif flaw == 3:
        nan_diagonal = np.where(np.eye(k) > 0, math.nan, probs)
        probs = pick(rng, [probs[:-1], probs * 0.0, probs + 1.0, probs.astype(np.complex128),
                           nan_diagonal, probs.astype(int)])  # fmt: skip
        verdict = BAD
    elif flaw == 4 and k > 1:
        probs = probs.copy()
        probs[0, 1] *= 0.5
        verdict = BAD  # not symmetric
    try:
        feedback = TopkFeedback(shown, relevant, probs)
    except DOCUMENTED as err:
        assert verdict != OK, f"valid feedback rejected: {err!r}"
        assert str(err)
        return
    assert verdict == OK, "invalid feedback accepted"
    s: Any = rng.normal(size=m) * 10.0 ** float(rng.integers(-3, 4))
    f: Any = pick(rng, ["rank", "hinge", "logistic", lambda a, b: max(0.0, b - a)])
    verdict = OK
    if variant % 3 == 1:
        s, f, verdict = pick(rng, [(s[:-1], f, ANY), (s[None], f, BAD), ("abc", f, BAD),
                                   (s, "squared", BAD), (s, 3, ANY)])  # fmt: skip
    if variant % 5 == 2:
        feedback, verdict = pick(rng, [FullFeedback(np.ones(m, dtype=bool)), "fb", None]), BAD
    try:
        value = unbiased_estimate(s, feedback, f)
    except DOCUMENTED as err:
        assert verdict != OK, f"a valid estimate failed: {err!r}"
        assert str(err)
        return
    assert verdict != BAD, "an invalid estimate was computed"
    assert isinstance(value, float)
    if verdict == OK:
        assert math.isfinite(value) and value >= 0.0
    # an impression's feedback: clicks must be shown labels, each once
    labels = tuple(f"l{j}" for j in shown.tolist())
    impression = Impression(labels, labels, feedback.shown, feedback.probs, 1, 0, False, "x")
    clicked = [label for label in labels if rng.random() < 0.5]
    extra = pick(rng, [None, "zz", labels[0], [1]])
    if extra is None:
        assert impression.feedback(clicked).relevant.sum() == len(clicked)
    else:
        with pytest.raises(ValueError, match="not shown|repeated"):
            impression.feedback([*clicked, extra, extra])


def case_exploration_params(box: Box, rng: np.random.Generator, variant: int) -> None:
    cls = type(box.live)
    rho = pick(rng, [*GARBAGE, special_float(rng, variant)])
    try:
        explore = cls(rho)
    except DOCUMENTED as err:
        assert names_param(err, ["rho"]), repr(err)
    else:
        assert 0.0 < explore.rho < (0.25 if explore.min_k == 3 else 1.0)
    name = pick(rng, [cls(0.1), "uniform", "single-swap", "greedy", None, 3])
    rho2 = pick(rng, [None, 0.1, 0.3, -1.0, "x"])
    try:
        explore = exploration_from(name, rho2)
    except DOCUMENTED as err:
        assert str(err)
    else:
        assert isinstance(explore, Exploration)


EXPLORATION_CASES = {
    "draw": case_draw,
    "pairs": case_pairs,
    "feedback": case_feedback,
    "params": case_exploration_params,
}


@pytest.mark.parametrize("cls", EXPLORATIONS, ids=lambda c: c.__name__)
def test_fuzz_exploration(cls):
    boxes = [Box(cls(**p), label=f"{cls.__name__}[{i}]") for i, p in
             enumerate([*cls._unit_test_params(), {"rho": 0.2}])]  # fmt: skip
    counts = fuzz(boxes, lambda box: list(EXPLORATION_CASES), EXPLORATION_CASES)
    assert sum(counts.values()) >= EXAMPLES, counts


# ------------------------------------------------------------------------------ scikit-learn

SK_D = 4


def sk_boxes(kind: str) -> list[Box]:
    """Small adapters: fitted (indicator or class targets, boosters that take NaN or not, a
    linear ranker) and unfitted."""
    from olboost.sklearn import OnlineBoostingClassifier, OnlineBoostingRanker

    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, SK_D))
    classes = np.array(["a", "b", "c"])
    y = classes[np.arange(24) % 3]
    Y = rng.random((24, 4)) < 0.4
    boxes = []
    if kind == "classifier":
        for missing in ("learn", "error"):
            booster = AdaBoostOLM(VFDTCommittee(n_features=3, missing=missing), learners=3)
            est = OnlineBoostingClassifier(booster, random_state=1)
            boxes.append(Box(est, label=f"clf/{missing}/unfitted", fitted=False, nan=missing))
            boxes.append(Box(est.fit(X, y), label=f"clf/{missing}", fitted=True, nan=missing,
                             classes=list(classes), target="classes"))  # fmt: skip
        return boxes
    for booster, nan in (
        (AdaOLMR(VFDTCommittee(n_features=3), learners=3), "learn"),
        (LabelRanker(seed=0), "error"),
    ):
        est = OnlineBoostingRanker(booster, random_state=1)
        name = type(booster).__name__
        boxes.append(Box(est, label=f"ranker/{name}/unfitted", fitted=False, nan=nan))
        boxes.append(Box(est.fit(X, Y), label=f"ranker/{name}/indicator", fitted=True, nan=nan,
                         labels=4, target="indicator"))  # fmt: skip
    est = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(n_features=3), learners=3), random_state=1)
    boxes.append(Box(est.fit(X, y), label="ranker/classes", fitted=True, nan="learn",
                     classes=list(classes), target="classes"))  # fmt: skip
    return boxes


def sk_X(rng: np.random.Generator, variant: int, box: Box) -> tuple[Any, str, int, int]:
    """Feature rows for an adapter: valid, or with a flaw scikit-learn's checks or the
    booster's must reject."""
    n = int(rng.integers(1, 6))
    X: Any = rng.normal(size=(n, SK_D))
    verdict = OK
    flaw = int(rng.integers(0, 9))
    nan_ok = box.info["nan"] == "learn"
    if flaw == 1:
        X = rng.normal(size=(n, pick(rng, [SK_D - 1, SK_D + 1])))
        verdict = BAD if box.info["fitted"] else OK
    elif flaw == 2:
        v = special_float(rng, variant)
        X[int(rng.integers(0, n)), int(rng.integers(0, SK_D))] = v
        verdict = float_verdict(v, {"missing": nan_ok, "unit": False, "nominal": {}})
    elif flaw == 3:
        X = X.tolist()
        v = special_int(rng, variant)
        X[0][int(rng.integers(0, SK_D))] = v
        verdict = int_verdict(v, {"missing": nan_ok, "unit": False, "nominal": {}})
    elif flaw == 4:
        X = X.tolist()
        value = pick(rng, ["abc", complex(1, 2), None, "1.5", Weird(), [1.0]])
        X[0][0] = value
        verdict = ANY if value in ("1.5", None) else BAD
    elif flaw == 5:
        X, verdict = pick(rng, [X[0], X[None], np.zeros((0, SK_D)), "abc", {"a": 1}, None]), BAD
        n = 0
    elif flaw == 6:
        X = sp.csr_array(X)
    elif flaw == 7:
        X = X.astype(np.float32) if variant % 2 else X.tolist()
    return X, verdict, n, flaw


def sk_y(rng: np.random.Generator, variant: int, box: Box, n: int) -> dict[str, Any]:
    """A target for ``n`` rows of the box's kind, valid or not: ``y``, the verdicts for
    ``partial_fit`` (``part``) and ``fit`` (``fit``, which starts afresh), and ``classes`` for
    ``partial_fit`` with its own verdict (``given``)."""
    info = box.info
    target = info.get("target") or pick(rng, ["classes", "indicator"])
    flaw = int(rng.integers(0, 6))
    out: dict[str, Any] = {"part": OK, "fit": OK, "classes": None, "given": OK}
    if target == "indicator":
        m = info.get("labels") or 4
        Y: Any = (rng.random((n, m)) < 0.4).astype(pick(rng, [bool, np.int64, np.float64]))
        if flaw == 1:  # another number of labels: only fit takes it
            Y = rng.random((n, m + 1)) < 0.5
            out["part"] = BAD if info["fitted"] else OK
        elif flaw == 2 and n:
            Y = Y.astype(np.float64)
            Y[0, 0] = pick(rng, [2.0, -1.0, 0.5, math.nan])
            out["part"] = out["fit"] = BAD
        elif flaw == 3:
            Y = Y[:-1] if n > 1 else Y[:0]
            out["part"] = out["fit"] = BAD
        if out["fit"] == OK:
            # e.g. every row without a relevant label: scikit-learn may see another target kind
            out["fit"] = ANY
            out["part"] = ANY if not info["fitted"] and out["part"] == OK else out["part"]
        return {**out, "y": Y}
    classes = np.array(info.get("classes") or ["a", "b", "c"])
    y: Any = classes[rng.integers(0, len(classes), size=n)]
    out["classes"] = classes if (not info["fitted"] or variant % 3 == 0) else None
    out["fit"] = ANY  # fit needs two classes, and scikit-learn's target checks decide types
    if flaw == 1 and n:
        y = y.astype(object)
        y[0] = pick(rng, ["zz", None, 1.5, math.nan])
        out["part"] = BAD  # not one of the classes
    elif flaw == 2:
        y = [*y.tolist(), "a"]
        out["part"] = out["fit"] = BAD  # one more label than rows
    elif flaw == 3:
        out["classes"], out["given"] = pick(rng, [["a"], ["x", "y", "z"], "abc"]), BAD
    elif flaw == 4:
        y = y[:, None]  # a column vector: scikit-learn warns and ravels it
        out["part"] = ANY
    return {**out, "y": y}


def case_sk_predict(box: Box, rng: np.random.Generator, variant: int) -> None:
    X, verdict, n, _ = sk_X(rng, variant, box)
    if not box.info["fitted"]:
        verdict = BAD  # NotFittedError, a ValueError
    method = pick(rng, ["predict", "decision_function", "predict_proba", "score"])
    if method == "predict_proba" and not hasattr(box.live, "predict_proba"):
        method = "predict"
    if method == "score":
        y = sk_y(rng, variant, box, n)["y"]
        verdict = worst(verdict, ANY)  # an accuracy: unknown classes only count as wrong
        attempt(box, lambda m: m.score(X, y), verdict, changes=False)
        return
    out = attempt(box, lambda m: getattr(m, method)(X), verdict, changes=False)
    if isinstance(out, np.ndarray) and method != "predict":
        assert np.all(np.isfinite(out)) and out.shape[0] == n


def case_sk_fit(box: Box, rng: np.random.Generator, variant: int) -> None:
    X, xv, n, flaw = sk_X(rng, variant, box)
    t = sk_y(rng, variant, box, n)
    y, classes = t["y"], t["classes"]
    if variant % 2:
        if flaw == 1:
            xv = OK  # fit starts afresh: another width is fine
        attempt(box, lambda m: m.fit(X, y), worst(xv, t["fit"]), changes=True)
        return
    if classes is not None:
        call = lambda m: m.partial_fit(X, y, classes=classes)  # noqa: E731
        verdict = worst(xv, t["part"], t["given"])
    else:
        call = lambda m: m.partial_fit(X, y)  # noqa: E731
        verdict = worst(xv, t["part"])
    if not box.info["fitted"]:
        verdict = ANY if verdict == OK else verdict  # the first call fixes what is valid
    attempt(box, call, verdict, changes=True)


SK_PARAMS: list[tuple[str, Any]] = [
    ("random_state", -1),
    ("random_state", 2**40),
    ("random_state", 1.5),
    ("random_state", np.random.RandomState(0)),
    ("random_state", 3),
    ("booster", None),
    ("booster", 5),
    ("booster", VFDTCommittee()),
    ("booster__learners", 0),
    ("booster__learners", 2),
    ("booster__learners", "x"),
    ("booster__seed", -1),
    ("booster__committee__n_features", 0),
    ("booster__committee__n_features", 2),
    ("booster__no_such", 1),
    ("no_such", 1),
]


def case_sk_params(box: Box, rng: np.random.Generator, variant: int) -> None:
    name, value = SK_PARAMS[variant % len(SK_PARAMS)]
    out = attempt(box, lambda m: m.set_params(**{name: value}), ANY, changes=True)
    if isinstance(out, Exception):
        return
    X = rng.normal(size=(6, SK_D))
    y = (rng.random((6, 4)) < 0.5) if box.info.get("target") == "indicator" else ["a", "b"] * 3
    box.snapshot = pickle.dumps(box.live)  # the parameters set; a rejected fit keeps them
    try:
        attempt(box, lambda m: m.fit(X, y), ANY, changes=True)
    finally:
        box.snapshot = box.info["bytes"]
        box.dirty = True


SK_CASES = {"predict": case_sk_predict, "fit": case_sk_fit, "params": case_sk_params}


@pytest.mark.parametrize("kind", ["classifier", "ranker"])
def test_fuzz_sklearn_adapter(kind):
    pytest.importorskip("sklearn", minversion="1.6")
    boxes = sk_boxes(kind)
    for box in boxes:
        box.info["bytes"] = box.snapshot
    kinds = ["predict", "predict", "fit", "fit", "params"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's conversion warnings
        counts = fuzz(boxes, lambda box: kinds, SK_CASES)
    assert sum(counts.values()) >= EXAMPLES, counts
