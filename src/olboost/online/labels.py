"""Targets of the online-learner layer: the outputs (labels to rank or classes), checked as a
parameter and listed; the targets given over them (sets and River's ``{label: bool}``, feedback,
0/1 matrices of relevant labels, class labels), checked completely before any state changes; and
the rank cut that makes a predicted label set of a ranking.

Errors name the learner and the offending label, class or value.
"""

from __future__ import annotations

import math
import numbers
import sys
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from olboost.feedback import Feedback, bool_apart, is_bool

__all__ = [
    "check_feedback_type",
    "check_label_columns",
    "check_outputs",
    "class_vector",
    "classes_and_codes",
    "bool_apart",
    "is_bool",
    "label_mask",
    "object_vector",
    "output_list",
    "rank_cut",
    "relevance_matrix",
    "relevant_in_mapping",
    "relevant_mask",
    "unknown_class",
]


def check_outputs(value: Any) -> str | None:
    """Why ``value`` is not a valid ``labels``/``classes`` parameter (``None`` if it is)."""
    if is_bool(value):
        return "must be None, an int >= 2 or a sequence of at least 2 distinct values"
    if isinstance(value, numbers.Integral):
        if value > sys.maxsize:  # no list, array or range holds that many
            return f"must be at most {sys.maxsize} when an int, got {value}"
        return None if value >= 2 else f"must be >= 2 when an int, got {value}"
    if isinstance(value, np.ndarray):
        # kept a list, as River's classifiers take them: parameters are compared, hashed into
        # model ids and written to checkpoints as plain values
        return (
            "must be None, an int >= 2 or a sequence such as a list, got an array: pass "
            f"{value!r}.tolist()"
        )
    if isinstance(value, str) or not isinstance(value, Sequence):
        return f"must be None, an int >= 2 or a sequence, got {value!r}"
    if len(value) < 2:
        return "must hold at least 2 values"
    try:
        distinct = len(set(value)) == len(value)
    except TypeError:
        return "must hold hashable values"
    if not distinct:
        return "must not repeat a value"
    for v in value:
        # NaN equals nothing, itself included: a target NaN matched only the very object given
        # here (float("nan") did not match np.nan), and two NaNs counted as distinct labels
        if v != v:
            return f"must not hold NaN (it equals no value, not even itself), got {v!r}"
    return None


def output_list(value: Any, param: str, who: str) -> list[Hashable]:
    """The outputs a ``labels``/``classes`` parameter (named ``param``) of value ``value`` gives:
    ``0 .. k-1`` for an int ``k``, else the values in order; a ``ValueError`` for ``None``."""
    if value is None:
        raise ValueError(
            f"{who}: the {param} are unknown: pass {param}=k or {param}=[...] to the constructor, "
            "or learn from arrays first"
        )
    if isinstance(value, numbers.Integral):
        return list(range(int(value)))
    return list(value)


def relevant_in_mapping(y: Mapping, what: str) -> list[Hashable]:
    """The labels River's multi-label target ``y`` (``{label: bool}``) maps to True, in its order;
    ``TypeError`` naming ``what[label]`` for a value that is not a bool (``1`` is not True)."""
    for label, value in y.items():
        if not is_bool(value):
            raise TypeError(
                f"{what}[{label!r}] must be a bool (True: relevant), got "
                f"{type(value).__name__} {value!r}"
            )
    return [label for label, value in y.items() if value]


def label_mask(
    labels: Iterable[Hashable], outputs: list[Hashable], index: dict[Hashable, int], who: str
) -> np.ndarray:
    """The mask over ``outputs`` (``index``: their positions) of ``labels``; a ``ValueError``
    naming an unknown one. A bool is not taken for the label 0 or 1, nor 0 or 1 for a bool
    label (``set(mask_row)`` of a bool row learned labels 0 and 1 as relevant)."""
    mask = np.zeros(len(outputs), dtype=np.bool_)
    for label in labels:
        try:
            i = index[label]
        except (KeyError, TypeError):
            i = None
        if i is None or is_bool(label) != is_bool(outputs[i]):
            raise ValueError(
                f"{who}: unknown label {label!r}; known labels are {outputs[:10]}"
                + (" ..." if len(outputs) > 10 else "")
                + _normalisation_twin(label, outputs)
            ) from None
        mask[i] = True
    return mask


def relevant_mask(
    y: Any,
    outputs: Callable[[], list[Hashable]],
    index: Callable[[], dict[Hashable, int]],
    who: str,
) -> np.ndarray:
    """The relevant-label mask of a set or of River's ``{label: bool}`` over the labels
    ``outputs()`` (``index()``: their positions; both read only when ``y`` is of a right type);
    raises naming the first unknown label (``ValueError``) or non-bool value (``TypeError``)."""
    if isinstance(y, Mapping):
        relevant = relevant_in_mapping(y, f"{who}: y")
        # every key must be a label, those mapped to False too
        label_mask(y, outputs(), index(), who)
        return label_mask(relevant, outputs(), index(), who)
    if not isinstance(y, set | frozenset):
        raise TypeError(
            f"{who}: y must be a set of relevant labels (possibly empty) or a dict "
            f"label -> bool, got {type(y).__name__}"
        )
    return label_mask(y, outputs(), index(), who)


def check_feedback_type(feedback: Feedback, types: tuple[type[Feedback], ...], who: str) -> None:
    """Raise a ``TypeError`` unless ``feedback`` is of one of the kinds ``types`` the learner
    ``who`` learns from."""
    if not isinstance(feedback, types):
        raise TypeError(
            f"{who} learns from "
            + " or ".join(t.__name__ for t in types)
            + f", got {type(feedback).__name__}"
        )


def rank_cut(cardinality: float, k: int) -> int:
    """How many of ``k`` labels a rank cut predicts relevant: the label cardinality
    ``cardinality`` rounded half up, at least 1 and at most ``k`` (1 when it is NaN: nothing
    learned yet)."""
    if math.isnan(cardinality):
        return 1
    return min(k, max(1, math.floor(cardinality + 0.5)))


def relevance_matrix(Y: Any, n: int, who: str) -> np.ndarray:
    """``Y`` as an ``(n, k)`` boolean matrix of relevant labels; a ``ValueError`` for another
    shape or values other than 0/1 or booleans. A sparse matrix (``MultiLabelBinarizer(
    sparse_output=True)``'s) is read as the dense one (``np.asarray`` made it a 0-d object)."""
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"{who}: Y must be (n_samples={n}, n_labels), got shape {Y.shape}")
    if Y.dtype != np.bool_:
        try:
            binary = np.isin(Y, (0, 1))
        except TypeError:
            # pandas' NA (the gap of a nullable column): comparisons with it give NA, whose
            # truth pandas refuses, in a bare message naming neither the model nor Y
            binary = np.array([[_is_binary(v) for v in row] for row in Y.tolist()], dtype=bool)
        if not binary.all():
            i, j = np.argwhere(~binary)[0]
            raise ValueError(
                f"{who}: Y must hold only 0/1 or booleans; row {i}, label column {j} holds "
                f"{_shown_value(Y[i, j])}"
            )
        Y = Y.astype(np.bool_)
    return Y


def _is_binary(value: Any) -> bool:
    try:
        return bool(value == 0 or value == 1)
    except TypeError:
        return False


def _shown_value(value: Any) -> str:
    """``value`` as a message shows it: a NumPy scalar as the Python number it holds (``nan``,
    not ``np.float64(nan)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _is_missing(value: Any) -> bool:
    """Whether a class label is a missing value: NaN or NaT (equal to nothing, not even
    itself) or pandas' NA (its comparisons give NA, whose truth is refused)."""
    pandas = sys.modules.get("pandas")  # an NA can come only from pandas, imported then
    if pandas is not None and value is pandas.NA:
        return True
    try:
        return bool(value != value)
    except TypeError:  # a label of the user's own whose comparison refuses: not ours to judge
        return False


def check_label_columns(k: int, known: Sequence[Hashable] | None, who: str) -> None:
    """Raise a ``ValueError`` unless a matrix of ``k`` label columns fits the ``known`` labels
    (``None``: not known yet, so at least 2 columns)."""
    if known is not None and k != len(known):
        raise ValueError(f"{who}: Y has {k} label columns, the model ranks {len(known)}")
    if known is None and k < 2:
        raise ValueError(f"{who}: Y must have at least 2 label columns")


def unknown_class(y: Any, classes: list[Hashable], who: str) -> ValueError:
    """The error for a class ``y`` that is not one of ``classes``."""
    return ValueError(
        f"{who}: unknown class {y!r}; the classes are {classes[:10]}"
        + (" ..." if len(classes) > 10 else "")
        + _normalisation_twin(y, classes)
    )


def _normalisation_twin(name: Any, known: Sequence[Hashable]) -> str:
    """A note where the unknown ``name`` is a known one in another Unicode normalisation form
    ('café' composed, or 'e' and a combining accent): both print alike, and the message said
    that 'café' was unknown beside a known 'café'."""
    if not isinstance(name, str):
        return ""
    form = unicodedata.normalize("NFC", name)
    for other in known:
        if isinstance(other, str) and other != name and unicodedata.normalize("NFC", other) == form:
            return (
                f" ({ascii(name)} and the known {ascii(other)} differ in their Unicode "
                "normalisation only: names are compared as written)"
            )
    return ""


def object_vector(values: Sequence[Any]) -> np.ndarray:
    """``values`` as a 1-D array of objects, one per value: ``np.asarray(values, dtype=object)``
    made a 2-D array of the members of equally long tuples (tuple classes)."""
    return np.fromiter(values, dtype=object, count=len(values))


def class_vector(y: Any, n: int, who: str) -> np.ndarray:
    """The ``n`` class labels ``y`` as a 1-D array (of objects unless ``y`` is an array); a
    ``ValueError`` for another shape."""
    if not isinstance(y, np.ndarray):
        whole = isinstance(y, Sequence) and all(isinstance(v, tuple) for v in y)
        y = object_vector(y) if whole else np.asarray(y, dtype=object)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{who}: y must be 1-D with {n} entries, got shape {y.shape}")
    return y


def _class_order(value: Any) -> tuple:
    # numbers by value whatever their type (a list [0, 1, 2.5] and its float array give the
    # same order), then other types by type name and value; sets by their sorted members and
    # tuples member by member, as "<" on sets is only inclusion, which would leave their order
    # to the hash seed of the process
    if isinstance(value, numbers.Real):
        return (0, "", value)
    if isinstance(value, frozenset | set):
        return (2, str(type(value)), tuple(sorted(_class_order(v) for v in value)))
    if isinstance(value, tuple):
        return (3, str(type(value)), tuple(_class_order(v) for v in value))
    return (1, str(type(value)), value)


def classes_and_codes(y: np.ndarray, who: str) -> tuple[list[Hashable], list[int]]:
    """The classes of ``y``, its distinct values sorted (numbers by value, then the others by
    type name and value), and the code of each entry; a ``ValueError`` if there are fewer than 2
    or one is missing (NaN or pandas' NA: no class)."""
    if y.dtype.kind in "mM" and np.isnat(y).any():
        # tolist makes a NaT None (or, at nanoseconds, an integer): checked here, as a NaT
        raise ValueError(f"{who}: y has a missing class (NaT) at row {int(np.isnat(y).argmax())}")
    values = y.tolist()
    for row, value in enumerate(values):
        if _is_missing(value):
            what = "NaN class" if isinstance(value, float) else f"missing class ({value!r})"
            raise ValueError(f"{who}: y has a {what} at row {row}")
    bools = [is_bool(v) for v in values]
    if any(bools) and not all(bools):
        # a set merges True with 1 and False with 0: the classes came out as [0, True, 2]
        row = bools.index(not bools[0])
        raise ValueError(
            f"{who}: y mixes bool and other classes ({values[0]!r} at row 0, {values[row]!r} "
            f"at row {row}); True would be taken for 1"
        )
    try:
        outputs = sorted(set(values), key=_class_order)
    except TypeError:
        # complex numbers, or classes of one type that has no order: NumPy's bare "'<' not
        # supported" named neither the model nor y
        kinds = sorted({type(v).__name__ for v in values})
        raise TypeError(
            f"{who}: the classes of y do not sort ({', '.join(kinds)}): pass classes= to fix "
            "their order"
        ) from None
    if len(outputs) < 2:
        raise ValueError(f"{who}: y must hold at least 2 classes")
    index = {value: i for i, value in enumerate(outputs)}
    return outputs, [index[v] for v in values]
