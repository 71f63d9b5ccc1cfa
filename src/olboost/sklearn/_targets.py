"""The targets of the scikit-learn adapters of :mod:`olboost.sklearn`: class labels and their
codes, label indicator matrices, the kind of a ranker's ``y`` and the classes of ``partial_fit``,
checked by scikit-learn's conventions.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import column_or_1d

from olboost.base import _same
from olboost.online.labels import bool_apart

if TYPE_CHECKING:
    from olboost.sklearn._base import _OnlineBoostingBase


def _need_two(name: str, classes: np.ndarray) -> None:
    if len(classes) < 2:
        raise ValueError(
            f"{name}: y has {len(classes)} class ({classes.tolist()!r}); at least 2 classes are "
            "needed"
        )


def _classes_of(name: str, labels: Any, what: str = "y") -> np.ndarray:
    """The sorted distinct class labels of the 1-D ``labels`` (``classes_`` is sorted), checked
    by scikit-learn's ``check_classification_targets``; a ``TypeError`` naming ``what`` if they
    do not sort (``None`` among strings, ...), which NumPy reports without saying where."""
    try:
        check_classification_targets(labels)
        return np.unique(labels)
    except ValueError as error:
        if what == "y":  # scikit-learn's own message, as its estimators give it
            raise
        raise ValueError(f"{name}: {what}: {error}") from None
    except TypeError:
        kinds = sorted({type(v).__name__ for v in np.asarray(labels, dtype=object).ravel()})
        raise TypeError(
            f"{name}: {what} must be class labels of one kind that sorts, got a mix of "
            f"{', '.join(kinds)}"
        ) from None


def _codes(name: str, classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The indices in ``classes`` of the labels ``y``; a ``ValueError`` naming unknown ones. A
    bool is no int class (as the boosters take classes): ``True == 1`` as a dict key, and a
    boolean ``y`` was learned as the classes 0 and 1."""
    index = {bool_apart(c): i for i, c in enumerate(classes.tolist())}
    codes = np.empty(len(y), dtype=np.int64)
    unknown = []
    for i, label in enumerate(y.tolist()):
        code = index.get(bool_apart(label))
        if code is None:
            unknown.append(label)
        else:
            codes[i] = code
    if unknown:
        raise ValueError(
            f"{name}: y has label(s) not in classes {classes.tolist()[:10]!r}: "
            f"{sorted(set(unknown), key=repr)[:10]!r}"
        )
    return codes


def _declared_classes(name: str, classes: Any) -> np.ndarray:
    """The sorted ``classes`` given to ``partial_fit``: a 1-D array-like of class labels."""
    try:
        declared = np.asarray(classes)
    except ValueError:
        raise ValueError(
            f"{name}: classes must be a 1-D array-like of class labels, got {classes!r}"
        ) from None
    if declared.ndim != 1:
        raise ValueError(
            f"{name}: classes must be a 1-D array-like of class labels, got shape {declared.shape}"
        )
    return _classes_of(name, declared, "classes")


def _partial_fit_classes(est: _OnlineBoostingBase, classes: Any, first: bool) -> np.ndarray:
    """The classes of a ``partial_fit`` call with 1-D targets, as scikit-learn's convention:
    required on the first call, equal to ``classes_`` if given later."""
    name = type(est).__name__
    if first:
        if classes is None:
            raise ValueError(
                f"{name}: classes must be passed on the first call to partial_fit (every class "
                "of the stream)"
            )
        known = _declared_classes(name, classes)
        _need_two(name, known)
        return known
    # compared as parameters are, a bool never the 0 or 1 it equals (NumPy's array_equal took
    # [False, True] for [0, 1])
    if classes is not None and not _same(
        _declared_classes(name, classes).tolist(), est.classes_.tolist()
    ):
        raise ValueError(
            f"{name}: classes={classes!r} is not the same as on the first call to partial_fit, "
            f"was {est.classes_!r}"
        )
    return est.classes_


def _ranking_target(name: str, y: Any) -> tuple[str, Any]:
    """The kind of a ranker's target (``"multilabel-indicator"``, ``"binary"`` or
    ``"multiclass"``) and the target (a column vector made 1-D, with a warning, as
    scikit-learn does); a ``ValueError`` for any other kind (:func:`refuse_label_sets` for
    the sets of labels that ``learn`` takes)."""
    if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    if getattr(y, "ndim", 1) == 1:
        _classes_of(name, y)
    else:
        check_classification_targets(y)
    kind = type_of_target(y, input_name="y")
    if kind not in ("multilabel-indicator", "binary", "multiclass"):
        raise ValueError(
            f"{name}: y must be a 0/1 label indicator matrix (n_samples, n_labels) or 1-D class "
            f"labels, got {kind} targets" + (_BINARIZE if kind == "multiclass-multioutput" else "")
        )
    return kind, y


_BINARIZE = (
    "; for sets (or lists) of relevant labels, as olboost's learn takes them, give "
    "sklearn.preprocessing.MultiLabelBinarizer().fit_transform(y)"
)


def refuse_label_sets(name: str, y: Any) -> None:
    """A ``ValueError`` saying how to make an indicator matrix of ``y`` where it holds sets
    (or lists of several lengths) of labels, the form olboost's ``learn`` takes: they failed
    in NumPy ("inhomogeneous shape after 1 dimensions") or in scikit-learn ("Unknown label
    type: unknown. Maybe you are trying to fit a classifier ... on a regression target")."""
    if isinstance(y, list | tuple):
        rows = list(y)
    elif getattr(y, "dtype", None) == np.dtype(object) and getattr(y, "ndim", None) == 1:
        rows = list(y)  # an object array or a pandas Series of sets
    else:
        return
    if any(isinstance(row, AbstractSet | Mapping) for row in rows) or _ragged(rows):
        raise ValueError(
            f"{name}: y must be a 0/1 label indicator matrix (n_samples, n_labels) or 1-D class "
            f"labels{_BINARIZE}"
        )


def _ragged(rows: list) -> bool:
    """Whether ``rows`` holds sequences (lists, arrays) of several lengths."""
    lengths = {
        len(row) for row in rows if hasattr(row, "__len__") and not isinstance(row, str | bytes)
    }
    return len(lengths) > 1


def _indicator(name: str, y: Any) -> np.ndarray:
    """A label indicator matrix (dense or sparse, 0/1 or boolean) as C-ordered booleans; a
    ``ValueError`` for other values (scikit-learn takes any two-valued integer matrix for an
    indicator, e.g. of 0 and 2, whose meaning would be a guess)."""
    if hasattr(y, "toarray"):
        y = y.toarray()
    y = np.asarray(y)
    values = np.unique(y)
    if not np.isin(values, (0, 1)).all():
        raise ValueError(
            f"{name}: y must be a 0/1 (or boolean) label indicator matrix, got the values "
            f"{values.tolist()[:10]}"
        )
    return np.ascontiguousarray(y != 0)


def _one_hot(codes: np.ndarray, k: int) -> np.ndarray:
    Y = np.zeros((len(codes), k), dtype=np.bool_)
    Y[np.arange(len(codes)), codes] = True
    return Y
