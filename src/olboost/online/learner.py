"""The base classes of the online-learner layer, which :mod:`olboost.online` describes:
:class:`OnlineLearner` (outputs, input checks, seed, start, pickling), :class:`RankingLearner`
(multi-label ranking) and :class:`MulticlassLearner` (multiclass classification).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import sys
import warnings
from collections.abc import Hashable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Literal, overload

import numpy as np

from olboost import _libm as libm
from olboost._interrupt import between_rows
from olboost._river import RiverClassifier, RiverMultiLabelClassifier
from olboost.base import Estimator, InstanceOf, Interval, in_olboost, restored_on_failure
from olboost.feedback import Feedback, FullFeedback
from olboost.online.inputs import (
    FeedbackRows,
    Rows,
    check_vector,
    check_width,
    columns_in_order,
    frame_columns,
    key_order,
    named_columns,
    shown_names,
    writable,
)
from olboost.online.labels import (
    bool_apart,
    check_feedback_type,
    check_label_columns,
    check_outputs,
    class_vector,
    classes_and_codes,
    is_bool,
    object_vector,
    output_list,
    rank_cut,
    relevance_matrix,
    relevant_mask,
    unknown_class,
)

__all__ = ["MulticlassLearner", "OnlineLearner", "RankingLearner"]


class OnlineLearner(Estimator):
    """Base class of every online learner (see :mod:`olboost.online`)."""

    #: Name of the parameter (and, with ``_``, of the learned attribute) holding the outputs.
    _outputs_param = "labels"
    # classes_ / labels_ were fixed from them at the first example: a new value was shown by
    # get_params and repr while the model went on predicting (and refusing) the old ones; the
    # random streams were keyed from seed_ then, and went on drawing from the old seed
    _fixed_once_started: tuple[str, ...] | None = ("classes", "labels", "seed")

    # NumPy's seed sequences, from which every random stream derives, take non-negative ints
    _param_constraints = {"seed": Interval(0, None, integer=True, allow_none=True)}

    # ------------------------------------------------------------------ hooks for subclasses

    def _init_state(self) -> None:
        """Allocate the learned state (outputs, ``seed_`` and ``n_features_in_`` are set)."""
        raise NotImplementedError

    def _raw_scores(self, xv: np.ndarray) -> np.ndarray:
        """Scores (length ``k``) of a checked vector under the current model; no change."""
        raise NotImplementedError

    def _stream_scores(self, xv: np.ndarray) -> np.ndarray:
        """The scores the array paths (``score_then_learn``) report for a row about to be
        learned; the model's scores unless the learner shows something else (top-k boosters
        report the ranking they show)."""
        return self._raw_scores(xv)

    def _learn_row(self, xv: np.ndarray, target: Any) -> None:
        """Learn one checked example (``target``: a class code or a feedback); ``t_`` += 1."""
        raise NotImplementedError

    def _missing_allowed(self) -> bool:
        """Whether the model takes missing values: NaN in vectors and matrices, ``None`` or an
        absent key in dicts, and ignores dict keys not seen in the first example (River's
        convention for emerging features: the features are fixed by the first example). When
        false (the default), all of these are rejected, naming the key or column."""
        return False

    def _stream(self, rows: Rows, targets: Sequence, return_scores: bool) -> np.ndarray | None:
        """Score then learn each row, ``targets[i]`` being row ``i``'s target; the scores made
        before each row is learned, ``(n, k)``, if asked. Rows go first to
        :meth:`_compiled_stream`, the rest one at a time."""
        out = np.empty((rows.n, len(self._outputs()))) if return_scores else None
        if rows.n == 0:
            return out
        if not self._started:
            self._start(rows.d, None)
        start = self._compiled_stream(rows, targets, out, 0)
        if start == rows.n:
            return out
        with between_rows() as row:
            for i in range(start, rows.n):
                xv = rows.row(i)
                with row:
                    if out is not None:
                        out[i] = self._stream_scores(xv)
                    self._learn_row(xv, targets[i])
        return out

    def _compiled_stream(
        self, rows: Rows, targets: Sequence, out: np.ndarray | None, start: int
    ) -> int:
        """Score then learn rows ``start, start + 1, ...`` by a faster path with the same
        results, if the learner has one; return the first row left to the one-at-a-time path
        (``start``: none done)."""
        return start

    # ------------------------------------------------------------------ learned-state helpers

    @property
    def _started(self) -> bool:
        return "t_" in self.__dict__

    def _outputs(self) -> list[Hashable]:
        """The ``k`` outputs (labels or classes) in the order of score vectors."""
        attr = self._outputs_param + "_"
        if attr in self.__dict__:
            return self.__dict__[attr]
        param = self._outputs_param
        return output_list(getattr(self, param), param, type(self).__name__)

    def _set_outputs(self, outputs: list[Hashable]) -> None:
        """Fix the outputs (labels or classes) the model scores, as ``labels_``/``classes_``.

        Raises
        ------
        ValueError
            If ``outputs`` is not what the constructor's ``labels``/``classes`` parameter
            accepts (at least 2 distinct hashable values), naming the parameter; nothing changes.
        """
        outputs = list(outputs)
        # the protocols give a data set's outputs here, not through the constructor: without
        # this check one class or label reaches the boosters, whose step sizes divide by k - 1
        reason = check_outputs(outputs)
        if reason is not None:
            shown = repr(outputs[:10]) + (" ..." if len(outputs) > 10 else "")
            raise ValueError(
                f"{type(self).__name__}: the {self._outputs_param} {reason}, got {shown}"
            )
        setattr(self, self._outputs_param + "_", outputs)

    def _output_index(self) -> dict[Hashable, int]:
        index = self.__dict__.get("_index")
        if index is None:
            index = {value: i for i, value in enumerate(self._outputs())}
        return index

    def _check_params(self) -> None:
        """Validate every parameter, and the parameters of those that are estimators (a
        booster's committee, which the booster starts): they may have changed since
        construction. Raises naming the parameter; changes nothing."""
        self._validate_params()
        for value in self._get_params().values():
            if isinstance(value, Estimator):
                value._validate_params()

    def _start(
        self,
        n_features: int,
        feature_names: list[Hashable] | None,
        outputs: list[Hashable] | None = None,
        first: np.ndarray | None = None,
        rows: Rows | None = None,
    ) -> None:
        """Fix the outputs (``outputs``, or those of :meth:`_outputs`), the seed and the
        features on the first example; then :meth:`_init_state`, and check the first example
        ``first`` (if given) against what was created (:meth:`_check_first`), or the rows
        ``rows`` (:meth:`_check_rows`). Parameters are checked first; a start that fails, or
        whose first example or rows are rejected, leaves the learner as it was."""
        self._check_params()
        # a start that fails (e.g. a committee parameter that does not fit the data) leaves the
        # learner as it was, not half started
        with restored_on_failure(self):
            outputs = self._outputs() if outputs is None else outputs
            self._set_outputs(outputs)
            self._index = {value: i for i, value in enumerate(outputs)}
            seed = self.seed if self.seed is not None else int(np.random.SeedSequence().entropy)
            self.seed_ = seed
            self.n_features_in_ = n_features
            self.feature_names_in_ = feature_names
            self._init_model()
            if first is not None:
                self._check_first(first)
            if rows is not None:
                self._check_rows(rows)
        self.t_ = 0

    def _init_model(self) -> None:
        """Create the model at start: :meth:`_init_state` here; committee boosters start their
        committee first."""
        self._init_state()

    def _check_first(self, xv: np.ndarray) -> None:
        """Raise, changing nothing, if the model just started would reject the checked vector
        ``xv`` (e.g. a booster's committee, on a nominal code it does not know), so that a
        rejected first example does not leave the model started. Nothing by default."""

    def _check_rows(self, rows: Rows) -> None:
        """Raise, changing nothing, if the started model would reject a row of ``rows`` (as
        :meth:`_check_first` for one example), so that an array call learns every row or none.
        Nothing by default."""

    def _learn_vector(self, xv: np.ndarray, target: Any, names: list[Hashable] | None) -> None:
        with self._first_learning():
            if not self._started:
                self._start(xv.shape[0], names, first=xv)
            self._learn_row(xv, target)

    @contextlib.contextmanager
    def _first_learning(self) -> Iterator[None]:
        """Around a learning call: if the model was not started and the call fails before it
        learned a row, the model is put back unstarted. The start succeeded, but the first
        row failed in a way no check foresaw (an allocation a parameter made too large, an
        interrupt while compiling): the model was left started on no example, with the
        features, the outputs and the seed of a call that was refused."""
        if self._started:
            yield
            return
        unstarted = restored_on_failure(self)
        try:
            yield
        except BaseException:
            if self.__dict__.get("t_", 0) == 0:
                unstarted.restore()
            raise

    def _scores_one(self, x: Any) -> np.ndarray:
        """Scores of ``x`` (zeros before the first example). Does not change the model."""
        xv, _ = self._check_x(x)
        if not self._started:
            return np.zeros(len(self._outputs()))
        return self._raw_scores(xv)

    def _scores_many(self, X: Any) -> np.ndarray:
        rows = self._check_X(X)
        out = np.zeros((rows.n, len(self._outputs())))
        if self._started:
            self._check_rows(rows)  # as the array paths that learn: naming the row
            for i in range(rows.n):
                out[i] = self._raw_scores(rows.row(i))
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_cache", None)
        return state

    # ------------------------------------------------------------------ input checks

    def _check_x(self, x: Any) -> tuple[np.ndarray, list[Hashable] | None]:
        """Validate one feature vector (:func:`~olboost.online.inputs.check_vector`); returns it
        as float64 and, for the first dict, the key order (sorted) that fixes the features."""
        return check_vector(
            x,
            type(self).__name__,
            self._missing_allowed(),
            self.__dict__.get("feature_names_in_"),
            self.n_features_in_ if self._started else None,
        )

    def _check_X(self, X: Any) -> Rows:
        names = self.__dict__.get("feature_names_in_") if self._started else None
        columns = frame_columns(X)
        _check_unique_columns(type(self).__name__, columns)
        if names is not None and columns != names:
            # the model learned from dicts: a matrix is read by column name, never by
            # position (River's iter_array gives keys 0..11, which sort 0, 1, 10, 11,
            # 2, ...: column 2 was read as key 10)
            name = type(self).__name__
            if columns is None:
                raise ValueError(
                    f"{name}: X is a matrix without column names, but the model's features are "
                    f"named ({shown_names(names)}): give dicts, or a DataFrame with those "
                    "columns"
                )
            if self._missing_allowed():
                # as a dict's: an absent feature is missing, a column of no feature ignored
                X = X.reindex(columns=names)
            else:
                difference = _column_difference(names, columns)
                if difference:
                    raise ValueError(
                        f"{name}: X has other columns than the model's features ({difference}), "
                        "and this model does not accept missing values"
                    )
                X = X[names]
        if self._started and names is None and _feature_names(X) is not None:
            # scikit-learn's warning: a frame's names mean nothing to a model that started on
            # an array (or an unnamed frame), which reads its columns by position
            warnings.warn(
                f"{type(self).__name__}: X has feature names, but the model started without "
                "them: its columns are read by position",
                UserWarning,
                stacklevel=_caller_level(),
            )
        rows = Rows.of(X, type(self).__name__, self._missing_allowed())
        n_features = self.n_features_in_ if self._started else None
        check_width("X", rows.d, n_features, type(self).__name__)
        return rows


def _label_sets(Y: Any) -> bool:
    """Whether ``Y`` is a list (or tuple) of targets as ``learn_one`` takes them: sets of
    relevant labels or River's ``{label: bool}``, not rows of a 0/1 matrix."""
    return (
        isinstance(Y, list | tuple)
        and len(Y) > 0
        and all(isinstance(y, AbstractSet | Mapping) for y in Y)
    )


def _caller_level() -> int:
    """The ``stacklevel`` of a warning issued here that names the first frame outside olboost
    (the user's call), however deep in the package the warning comes from."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and in_olboost(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    return level


def _class_array(classes: list[Hashable]) -> np.ndarray:
    """``classes`` as an array of NumPy's dtype for them where they are all of one kind (ints,
    floats, bools or strings, Python's or NumPy's) and NumPy holds them exactly (an array of
    objects made ``np.bincount`` of an int prediction fail), else of objects (mixed kinds, ints
    beyond int64, strings ending with NUL)."""
    kinds = {_kind(c) for c in classes}
    if len(kinds) == 1 and None not in kinds:
        array = np.asarray(classes)
        values = [c.item() if isinstance(c, np.generic) else c for c in classes]
        if array.dtype.kind in kinds.pop() and array.tolist() == values:
            return array
    return object_vector(classes)


def _kind(value: Any) -> str | None:
    """The NumPy dtype kinds that hold ``value`` exactly, or ``None`` for another value."""
    if isinstance(value, bool | np.bool_):
        return "b"
    if isinstance(value, numbers.Integral):
        return "iu"
    if isinstance(value, float | np.floating):
        return "f"
    if isinstance(value, str):
        return "U"
    return None


def _check_mini_batch(learner: OnlineLearner, X: Any) -> None:
    """Raise a ``TypeError`` or ``ValueError`` unless ``X`` is a DataFrame (a River mini-batch)
    that ``learner`` can read by column name, as it reads a dict by key."""
    who = type(learner).__name__
    columns = frame_columns(X)
    if columns is None:
        raise TypeError(
            f"{who}: X must be a pandas DataFrame (River's mini-batches), got "
            f"{type(X).__name__}; use learn / predict for arrays"
        )
    _check_unique_columns(who, columns)
    if learner._started and learner.__dict__.get("feature_names_in_") is None:
        # learn_one refuses a dict then: the features have no names to read the columns by
        raise TypeError(
            f"{who}: the model's features have no names (it started on an array), so a "
            "mini-batch's columns cannot be read by name: use learn / predict"
        )


def _check_unique_columns(who: str, columns: list[Hashable] | None) -> None:
    """Raise a ``ValueError`` if a frame's ``columns`` name a column twice: a model reads frames
    and dicts by name, and two columns of one name could not be told apart."""
    if columns is None or len(set(columns)) == len(columns):
        return
    seen: set = set()
    twice = []
    for c in columns:
        if c in seen:
            twice.append(c)
        seen.add(c)
    raise ValueError(f"{who}: X names a column twice ({shown_names(twice)})")


def _feature_names(X: Any) -> list[Hashable] | None:
    """The features a DataFrame names, which a model started on it reads later frames (and
    dicts) by, in any column order: its columns when all are strings, as scikit-learn's
    ``feature_names_in_``; ``None`` for other frames (``pd.DataFrame(array)``'s ``0..d-1``) and
    matrices, which are read by position."""
    columns = frame_columns(X)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return columns


def _column_difference(names: Sequence[Hashable], columns: list[Hashable]) -> str:
    """``"missing ..., unexpected ..."``: the ``names`` a frame's ``columns`` lack and the
    columns of no name; ``""`` when the two hold the same names."""
    present, known = {bool_apart(c) for c in columns}, {bool_apart(n) for n in names}
    absent = [n for n in names if bool_apart(n) not in present]
    extra = [c for c in columns if bool_apart(c) not in known]
    if not absent and not extra:
        return ""
    return (
        f"missing {shown_names(absent) if absent else 'none'}, "
        f"unexpected {shown_names(extra) if extra else 'none'}"
    )


class RankingLearner(OnlineLearner, RiverMultiLabelClassifier):
    """Base class of online learners for multi-label ranking (see :mod:`olboost.online`).

    When River is installed, a ranking learner is a ``river.base.MultiLabelClassifier``: it runs
    in ``river.evaluate.progressive_val_score`` with River's multi-output metrics
    (``river.metrics.multioutput``) and in ``river.compose`` pipelines.

    **Targets.** ``learn_one(x, y)`` takes the relevant labels of ``x`` as a set (possibly
    empty), as River's multi-label target ``{label: bool}`` (the relevant labels are those
    mapped to ``True``), or as a :class:`~olboost.feedback.Feedback`. A label absent from the
    dict is irrelevant, as a label absent from a set is: ``{"a": True, "b": False}``,
    ``{"a": True}`` and ``{"a"}`` are the same target. River's multi-label streams (e.g.
    ``river.datasets.Yeast``) give every label, so nothing is lost; what is rejected, naming
    the label, before anything changes, is a key that is not one of the learner's labels
    (``ValueError``) and a value that is not a bool, Python's or NumPy's (``TypeError``: ``1``
    and ``"yes"`` are not taken for ``True``). The labels must be known up front (``labels=``),
    as River streams do not announce them.

    **Predictions.** :meth:`predict_one` gives River's multi-label prediction ``{label: bool}``
    by a rank cut (RCut; Yang 2001, *A study of thresholding strategies for text
    categorization*): the ``r`` labels ranked highest by :meth:`score_one` are predicted
    relevant, where ``r`` is the label cardinality learned so far rounded (half up) to an
    integer, at least 1 and at most ``k``. The label cardinality,
    :attr:`label_cardinality_`, is the mean number of relevant labels over the examples learned
    with their whole relevant set (sets, dicts, rows of ``Y``, a
    :class:`~olboost.feedback.FullFeedback`); partial feedback (a top-k booster's
    :class:`~olboost.feedback.TopkFeedback`) does not reveal it and is not counted. Before any
    such example ``r = 1``. Ties keep label order, as in :meth:`rank_one`. Scores rank the
    labels but are not calibrated (a boosted score has no threshold that means "relevant"),
    which is why the cut is a count, taken from the data. The top-k boosters
    (:mod:`olboost.boosters.topk`) learn only the relevance of the ``k`` labels they show, so
    the label cardinality is hidden from them: they predict their ``k`` top-scored labels (the
    ``k`` they show when they do not explore), count nothing, and their
    :attr:`label_cardinality_` stays NaN.

    Examples
    --------
    River's targets and predictions, with a linear label ranker:

    >>> from olboost import LabelRanker
    >>> model = LabelRanker(update="II", labels=["sport", "music", "news"], seed=0)
    >>> stream = [
    ...     ({"a": 1.0, "b": 0.0}, {"sport": True, "music": False, "news": True}),
    ...     ({"a": 0.0, "b": 1.0}, {"sport": False, "music": True, "news": False}),
    ...     ({"a": 1.0, "b": 0.5}, {"sport", "news"}),  # a set is the same target
    ... ]
    >>> for x, y in stream:
    ...     model.learn_one(x, y)
    >>> model.label_cardinality_  # (2 + 1 + 2) / 3, so r = 2 labels are predicted
    1.6666666666666667
    >>> model.predict_one({"a": 1.0, "b": 0.0})
    {'sport': True, 'music': False, 'news': True}
    >>> model.rank_one({"a": 0.0, "b": 1.0})
    ['music', 'sport', 'news']
    >>> model.predict_one({"a": 0.0, "b": 1.0})  # its top 2
    {'sport': True, 'music': True, 'news': False}
    """

    _outputs_param = "labels"
    _param_constraints = {
        **OnlineLearner._param_constraints,
        "labels": InstanceOf(object, allow_none=True, predicate=check_outputs),
    }

    #: The kinds of feedback the booster learns from (full-feedback boosters: full only).
    _feedback_types: tuple[type[Feedback], ...] = (FullFeedback,)

    def learn_one(
        self,
        x: Mapping | Sequence | np.ndarray,
        y: AbstractSet[Hashable] | Mapping[Any, bool] | Feedback,
    ) -> None:
        """Learn from one example: features ``x`` (a dict, a 1-D vector or a pandas Series row)
        and its target ``y``: the set of its relevant labels (possibly empty), River's ``{label:
        bool}`` (relevant: the labels mapped to ``True``; an absent label is irrelevant) or a
        :class:`olboost.feedback.Feedback` object over the labels, in their order. Invalid input
        raises before anything changes (see the class docstring)."""
        xv, names = self._check_x(x)
        feedback = y if isinstance(y, Feedback) else FullFeedback(self._check_y(y))
        check_feedback_type(feedback, self._feedback_types, type(self).__name__)
        self._check_feedback(feedback)
        self._learn_vector(xv, feedback, names)
        if isinstance(feedback, FullFeedback):
            self._count_targets(feedback.relevant[None, :])

    def _check_feedback(self, feedback: Feedback) -> None:
        """Raise ``ValueError`` if ``feedback`` does not fit the model; changes nothing."""
        k = len(self._outputs())
        if isinstance(feedback, FullFeedback) and feedback.relevant.shape[0] != k:
            raise ValueError(
                f"{type(self).__name__}: the feedback covers {feedback.relevant.shape[0]} labels, "
                f"the model ranks {k}"
            )

    def score_one(self, x: Mapping | Sequence | np.ndarray) -> dict[Hashable, float]:
        """Score of every label for ``x``; higher means more relevant. Does not change the model."""
        s = self._scores_one(x)
        # tolist: Python floats at once, the same values (a float() per label was most of a
        # call at thousands of labels)
        return dict(zip(self._outputs(), s.tolist(), strict=True))

    def rank_one(self, x: Mapping | Sequence | np.ndarray) -> list[Hashable]:
        """The labels ordered from most to least relevant for ``x`` (ties keep label order)."""
        s = self._scores_one(x)
        labels = self._outputs()
        return [labels[i] for i in np.argsort(-s, kind="stable").tolist()]

    def predict_one(
        self, x: Mapping | Sequence | np.ndarray, **kwargs: Any
    ) -> dict[Hashable, bool]:
        """River's multi-label prediction for ``x``: ``{label: bool}`` over every label.

        The ``r`` labels with the highest :meth:`score_one` scores are ``True`` (ties keep label
        order), ``r`` being :attr:`label_cardinality_` rounded half up, at least 1 and at most
        ``k`` (1 before any example learned with its whole relevant set); a top-k booster's
        ``r`` is its parameter ``k``. See the class docstring. Does not change the model. For
        the top-k boosters the scores are the model's own, not the explored ranking
        ``show_one`` displays: predicting draws nothing, so it changes no later result.

        Parameters
        ----------
        x
            Features: a dict, a 1-D vector or a pandas Series row, as in :meth:`learn_one`.
        **kwargs
            Ignored (River's ``MultiLabelClassifier.predict_one`` signature).

        Returns
        -------
        dict
            Label -> ``True`` (predicted relevant) or ``False``, in label order.
        """
        s = self._scores_one(x)
        labels = self._outputs()
        relevant = np.zeros(len(labels), dtype=np.bool_)
        relevant[np.argsort(-s, kind="stable")[: self._n_predicted(len(labels))]] = True
        return dict(zip(labels, relevant.tolist(), strict=True))

    @property
    def label_cardinality_(self) -> float:
        """Mean number of relevant labels of the examples learned with their whole relevant set
        (NaN before any, and always for the top-k boosters, which see only the labels they
        show): the size of :meth:`predict_one`'s predictions, once rounded."""
        n = self.__dict__.get("n_targets_", 0)
        return self.__dict__.get("n_relevant_", 0) / n if n else math.nan

    def _n_predicted(self, k: int) -> int:
        """How many labels :meth:`predict_one` predicts relevant (see the class docstring)."""
        return rank_cut(self.label_cardinality_, k)

    def _count_targets(self, Y: np.ndarray) -> None:
        """Count the examples learned with their whole relevant set, ``Y`` their masks
        ``(n, k)``, and their relevant labels (``n_targets_``, ``n_relevant_``)."""
        if Y.shape[0] == 0:
            return
        self.n_targets_ = self.__dict__.get("n_targets_", 0) + int(Y.shape[0])
        self.n_relevant_ = self.__dict__.get("n_relevant_", 0) + int(np.count_nonzero(Y))

    def learn(self, X: Any, Y: Any) -> RankingLearner:
        """Learn from a stream given as arrays, row by row: ``X`` is ``(n, d)`` (dense or scipy
        sparse) and ``Y`` an ``(n, k)`` 0/1 or boolean matrix of relevant labels (a DataFrame's
        columns named by label), or a list of ``n`` targets as :meth:`learn_one` takes them
        (sets of relevant labels, River's ``{label: bool}``) once the labels are known."""
        self.score_then_learn(X, Y, return_scores=False)
        return self

    def score(self, X: Any) -> np.ndarray:
        """Scores ``(n, k)`` of every row of ``X`` under the current model (no learning)."""
        return self._scores_many(X)

    @overload
    def score_then_learn(
        self, X: Any, Y: Any, *, return_scores: Literal[True] = True
    ) -> np.ndarray: ...

    @overload
    def score_then_learn(self, X: Any, Y: Any, *, return_scores: Literal[False]) -> None: ...

    @overload
    def score_then_learn(
        self, X: Any, Y: Any, *, return_scores: bool = True
    ) -> np.ndarray | None: ...

    def score_then_learn(self, X: Any, Y: Any, *, return_scores: bool = True) -> np.ndarray | None:
        """Test-then-train over a stream given as arrays: score row ``t``, then learn it.

        This is the prequential primitive the evaluation protocols use; returns the ``(n, k)``
        scores made before each row was learned. A model not started yet is started on the
        first row, which is scored by its untrained committee (:meth:`score_one` before the
        first example gives zeros instead: there is no model yet); every later row is scored
        as :meth:`score_one` scores it, bit for bit.
        """
        rows = self._check_X(X)
        Ymask = self._check_Y(Y, rows.n)
        if not self._started and rows.n == 0:
            self._check_params()
            return np.empty((0, Ymask.shape[1])) if return_scores else None
        with self._first_learning():
            if not self._started:
                outputs = None
                if self.labels is None and "labels_" not in self.__dict__:
                    # a label frame's named columns are the labels (later frames are read by
                    # them)
                    columns = frame_columns(Y)
                    outputs = columns if named_columns(columns) else list(range(Ymask.shape[1]))
                # the outputs are fixed inside the start, so that a start that fails leaves none
                self._start(rows.d, _feature_names(X), outputs, first=rows.row(0), rows=rows)
            else:
                self._check_rows(rows)
            t0 = self.t_
            try:
                return self._stream(rows, FeedbackRows(Ymask), return_scores)
            finally:
                # the rows learned, also when a later row was rejected
                self._count_targets(Ymask[: self.t_ - t0])

    def _step_targets(self, targets: Sequence) -> np.ndarray:
        """Relevant-label masks ``(n, k)``, C-contiguous booleans."""
        if isinstance(targets, FeedbackRows):
            return writable(targets.Y)
        k = len(self._outputs())
        return np.array([f.relevant for f in targets], dtype=np.bool_).reshape(len(targets), k)

    def _check_y(self, y: Any) -> np.ndarray:
        """The relevant-label mask of a set or of River's ``{label: bool}``; raises naming the
        first unknown label (``ValueError``) or non-bool value (``TypeError``)."""
        return relevant_mask(y, self._outputs, self._output_index, type(self).__name__)

    def _check_Y(self, Y: Any, n: int) -> np.ndarray:
        name = type(self).__name__
        known = self.__dict__.get("labels_")
        if known is None and self.labels is not None:
            known = self._outputs()
        if _label_sets(Y):
            return self._masks_of_sets(Y, n, known)
        columns = frame_columns(Y)
        typed = None if columns is None else [bool_apart(c) for c in columns]
        if (
            known is not None
            and typed is not None
            and (named_columns(columns) or set(typed) == {bool_apart(label) for label in known})
        ):
            # a DataFrame's columns are labels: read by name, as X's are features (by
            # position, a reordered frame learned every label from another one's column).
            # Columns 0..k-1 in order are pandas' default, read by position, unless they are
            # the model's labels (labels=[2, 1, 0]: columns 0 and 2 were swapped). Compared
            # with their type (True == 1), and taken by position: Y[[True, False]] is a mask
            # of rows to pandas.
            difference = _column_difference(known, columns)
            if difference:
                raise ValueError(f"{name}: Y's columns are not the model's labels ({difference})")
            if len(set(typed)) != len(typed):
                raise ValueError(f"{name}: Y names a label twice")
            Y = columns_in_order(Y, known)
        Y = relevance_matrix(Y, n, name)
        check_label_columns(Y.shape[1], known, name)
        return Y

    def _masks_of_sets(self, Y: Sequence, n: int, known: list[Hashable] | None) -> np.ndarray:
        """The relevance matrix of a list of targets as :meth:`learn_one` takes them (sets of
        relevant labels, River's ``{label: bool}``), each checked as it checks one."""
        name = type(self).__name__
        if known is None:
            raise ValueError(
                f"{name}: Y is a list of label sets, which name labels the model does not know "
                "yet: give labels=, or a 0/1 matrix (e.g. scikit-learn's MultiLabelBinarizer)"
            )
        if len(Y) != n:
            raise ValueError(f"{name}: Y holds {len(Y)} label sets for {n} rows of X")
        masks = np.zeros((n, len(known)), dtype=np.bool_)
        for i, y in enumerate(Y):
            try:
                masks[i] = self._check_y(y)
            except (TypeError, ValueError) as err:
                raise type(err)(f"{err} (Y row {i})") from None
        return masks


class MulticlassLearner(OnlineLearner, RiverClassifier):
    """Base class of online learners for multiclass classification (River's classifier API).

    ``classes`` is an int ``k`` (classes ``0..k-1``) or a sequence of class labels, fixed for the
    whole stream (the papers' ``k`` is known); it may be left ``None`` when learning from arrays,
    whose sorted distinct values then become the classes.
    """

    _outputs_param = "classes"
    _param_constraints = {
        **OnlineLearner._param_constraints,
        "classes": InstanceOf(object, allow_none=True, predicate=check_outputs),
    }

    def _class_code(self, y: Any) -> int:
        try:
            code = self._output_index()[y]
        except (KeyError, TypeError):
            raise unknown_class(y, self._outputs(), type(self).__name__) from None
        if is_bool(y) != is_bool(self._outputs()[code]):
            # True == 1 as dict keys: True was learned as class 1, and 1 as class True
            raise unknown_class(y, self._outputs(), type(self).__name__)
        return code

    def _class_codes(self, values: list) -> list[int]:
        """:meth:`_class_code` of each value, looked up once per distinct value (a Python call
        per row was a twentieth of a compiled Adaboost.OLM run on car)."""
        known: dict[tuple[Any, bool], int] = {}
        codes = []
        for v in values:
            key = bool_apart(v)  # True == 1 as dict keys: told apart, as _class_code does
            try:
                code = known.get(key)
            except TypeError:  # unhashable: _class_code names it
                code = None
            if code is None:
                code = self._class_code(v)
                known[key] = code
            codes.append(code)
        return codes

    def learn_one(self, x: Mapping | Sequence | np.ndarray, y: Hashable) -> None:
        """Learn from one example with features ``x`` and class ``y``."""
        xv, names = self._check_x(x)
        code = self._class_code(y)
        self._learn_vector(xv, code, names)

    def predict_proba_one(
        self, x: Mapping | Sequence | np.ndarray, **kwargs: Any
    ) -> dict[Hashable, float]:
        """Class probabilities: a softmax of the booster's votes. Does not change the model.
        ``kwargs`` are ignored (River's ``Classifier.predict_proba_one`` signature, through
        which a pipeline passes its keyword arguments on)."""
        p = libm.softmax(self._scores_one(x))  # the same bits on every machine
        return {c: float(v) for c, v in zip(self._outputs(), p, strict=True)}

    def predict_one(self, x: Mapping | Sequence | np.ndarray, **kwargs: Any) -> Hashable:
        """The class with the largest vote (the lowest class index on ties). ``kwargs`` are
        ignored (River's ``Classifier.predict_one`` signature)."""
        return self._outputs()[int(np.argmax(self._scores_one(x)))]

    def learn(self, X: Any, y: Any) -> MulticlassLearner:
        """Learn from arrays, row by row: ``X`` is ``(n, d)``, ``y`` the ``n`` classes."""
        self.predict_then_learn(X, y, return_scores=False)
        return self

    def votes(self, X: Any) -> np.ndarray:
        """Votes ``(n, k)`` of every row of ``X`` under the current model (no learning)."""
        return self._scores_many(X)

    def predict(self, X: Any) -> np.ndarray:
        """The predicted class of every row of ``X`` (no learning): an array of NumPy's dtype
        for the classes where they are all ints, all floats, all bools or all strings (as
        scikit-learn's ``predict``) and NumPy holds them exactly, of objects otherwise."""
        classes = _class_array(self._outputs())
        return classes[np.argmax(self._scores_many(X), axis=1)]

    @overload
    def predict_then_learn(
        self, X: Any, y: Any, *, return_scores: Literal[True] = True
    ) -> np.ndarray: ...

    @overload
    def predict_then_learn(self, X: Any, y: Any, *, return_scores: Literal[False]) -> None: ...

    @overload
    def predict_then_learn(
        self, X: Any, y: Any, *, return_scores: bool = True
    ) -> np.ndarray | None: ...

    def predict_then_learn(
        self, X: Any, y: Any, *, return_scores: bool = True
    ) -> np.ndarray | None:
        """Test-then-train over arrays; returns the votes ``(n, k)`` made before each row (the
        first row of a model not started yet: its untrained committee's votes, where
        :meth:`votes` before the first example gives zeros)."""
        return self._predict_then_learn(X, y, return_scores, _feature_names(X))

    # ------------------------------------------------------------------ River's mini-batches

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn from a mini-batch (River's ``MiniBatchClassifier``): the rows of the DataFrame
        ``X`` in order, with the classes ``y`` (a Series or sequence), exactly as
        :meth:`learn_one` learns each row as a dict: the same model bit for bit, by the compiled
        array path. A model not started takes the batch's columns as a first dict's keys
        (sorted); a started one reads columns by name, an absent column or a missing cell
        being a missing value and a column of no feature ignored, as in a dict. As
        :meth:`learn_one`, it needs the classes (``classes=``); a bad batch raises before
        anything changes."""
        _check_mini_batch(self, X)
        self._outputs()  # the classes are fixed in advance, as for learn_one
        names = None
        if not self._started:
            names = key_order(X.columns)
            X = X[names]
        self._predict_then_learn(X, y, False, names)

    def predict_proba_many(self, X: Any) -> Any:
        """Class probabilities of every row of the DataFrame ``X`` (River's
        ``MiniBatchClassifier``): a DataFrame with ``X``'s index and a column per class, each
        row equal bit for bit to :meth:`predict_proba_one` of the row as a dict. Does not
        change the model."""
        import pandas as pd

        _check_mini_batch(self, X)
        votes = self._scores_many(X)
        p = np.array([libm.softmax(row) for row in votes]).reshape(votes.shape)
        return pd.DataFrame(p, index=X.index, columns=self._outputs())

    def predict_many(self, X: Any) -> Any:
        """The predicted class of every row of the DataFrame ``X`` (River's
        ``MiniBatchClassifier``): a Series with ``X``'s index, equal to :meth:`predict_one` of
        each row as a dict. Does not change the model."""
        import pandas as pd

        _check_mini_batch(self, X)
        # the model's own class objects, as predict_one returns them (predict's array would
        # give NumPy scalars: np.int64(1), np.str_('a'), which JSON does not take)
        classes = object_vector(self._outputs())
        return pd.Series(
            list(classes[np.argmax(self._scores_many(X), axis=1)]), index=X.index, dtype=object
        )

    def _predict_then_learn(
        self, X: Any, y: Any, return_scores: bool, names: list[Hashable] | None
    ) -> np.ndarray | None:
        rows = self._check_X(X)
        y = class_vector(y, rows.n, type(self).__name__)
        outputs = None
        if self.classes is None and "classes_" not in self.__dict__:
            outputs, codes = classes_and_codes(y, type(self).__name__)
        else:
            codes = self._class_codes(y.tolist())
        if not self._started and rows.n == 0:
            self._check_params()
            return np.empty((0, len(self._outputs()))) if return_scores else None
        with self._first_learning():
            if not self._started:
                # the classes are fixed inside the start, so that a start that fails leaves none
                self._start(rows.d, names, outputs, first=rows.row(0), rows=rows)
            else:
                self._check_rows(rows)
            return self._stream(rows, codes, return_scores)

    def _step_targets(self, targets: Sequence) -> np.ndarray:
        """Class codes, int64."""
        return np.asarray(targets, dtype=np.int64).reshape(len(targets))
