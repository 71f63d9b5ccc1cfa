"""scikit-learn adapters: olboost boosters as scikit-learn estimators (the ``sklearn`` extra).

:class:`OnlineBoostingClassifier` (multiclass classification) and :class:`OnlineBoostingRanker`
(multi-label ranking) wrap an olboost booster in scikit-learn's estimator API, so that pipelines,
grid searches and scikit-learn's metrics take it. They are thin: the booster is the model, and it
learns online. ``fit(X, y)`` learns a fresh clone of ``booster`` from the rows of ``X`` in order,
once each (one pass, through the booster's array path ``learn``); ``partial_fit`` goes on
learning from more rows; ``predict`` and ``decision_function`` never change the model.

scikit-learn's conventions hold: ``classes_`` (labels of any type, sorted), ``n_features_in_``,
``feature_names_in_`` (for data frames), ``NotFittedError`` before fitting, and a ``ValueError``
for a wrong number of features, NaN where the booster takes no missing values, or infinite values.
A rejected input raises before anything changes. ``random_state``, when set, seeds the booster
(overriding its ``seed``); parameters of the booster are reached as ``booster__<name>``, e.g. in
``GridSearchCV(OnlineBoostingClassifier(AdaBoostOLM()), {"booster__learners": [10, 50]})``.

Importing this module needs scikit-learn >= 1.6 (``pip install olboost[sklearn]``);
``import olboost`` does not import it.
"""

from __future__ import annotations

import math
import numbers
import pickle
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "olboost.sklearn needs scikit-learn >= 1.6 (pip install 'olboost[sklearn]'): " + str(err)
    ) from err

from olboost import _libm as libm
from olboost.online.inputs import MAX_ABS_FEATURE
from olboost.online.learner import MulticlassLearner, OnlineLearner, RankingLearner

__all__ = ["OnlineBoostingClassifier", "OnlineBoostingRanker"]

_T = TypeVar("_T")

#: Largest ``random_state`` integer, as scikit-learn's ``check_random_state``.
_MAX_SEED = 2**32 - 1


class _OnlineBoostingBase(BaseEstimator):
    """What both adapters share: the booster template, seeding, input checks, tags."""

    #: The olboost learner class the booster must be an instance of.
    _learner_type: type[OnlineLearner] = OnlineLearner
    #: The booster parameter naming its outputs, which the adapter sets from ``y``.
    _outputs_param = ""

    def __init__(self, booster: OnlineLearner | None = None, *, random_state: Any = None):
        self.booster = booster
        self.random_state = random_state

    # ------------------------------------------------------------------ the booster

    def _default_booster(self) -> OnlineLearner:
        raise NotImplementedError

    def _template(self) -> OnlineLearner:
        """The booster to clone: ``booster``, or the default one; a ``TypeError`` otherwise."""
        booster = self._default_booster() if self.booster is None else self.booster
        if not isinstance(booster, self._learner_type):
            raise TypeError(
                f"{type(self).__name__}.booster must be None or an olboost "
                f"{self._learner_type.__name__} (e.g. {type(self._default_booster()).__name__}()"
                f"), got {type(booster).__name__}"
            )
        return booster

    def _seed(self) -> int | None:
        """The booster seed ``random_state`` asks for (``None``: keep the booster's own)."""
        rs = self.random_state
        if rs is None:
            return None
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool | np.bool_):
            if not 0 <= rs <= _MAX_SEED:
                raise ValueError(
                    f"{type(self).__name__}.random_state must be in [0, {_MAX_SEED}], got {rs!r}"
                )
            return int(rs)
        if isinstance(rs, np.random.RandomState):
            return int(check_random_state(rs).randint(np.iinfo(np.int32).max))
        raise TypeError(
            f"{type(self).__name__}.random_state must be None, an int or a "
            f"numpy.random.RandomState, got {type(rs).__name__}"
        )

    def _new_booster(self, n_outputs: int) -> OnlineLearner:
        """A fresh clone of the template over ``n_outputs`` outputs (classes or labels), seeded
        by ``random_state`` if set. Checks everything first."""
        template = self._template()
        outputs = self._outputs_param
        if getattr(template, outputs) is not None:
            raise ValueError(
                f"{type(self).__name__}: leave the booster's {outputs}=None; the adapter takes "
                f"the {outputs} from y (or from partial_fit's classes=), got "
                f"{outputs}={getattr(template, outputs)!r}"
            )
        params: dict[str, Any] = {outputs: n_outputs}
        seed = self._seed()
        if seed is not None and template._is_stochastic:
            params["seed"] = seed
        return template.clone(params)

    def set_params(self, **params: Any) -> _OnlineBoostingBase:
        """Set parameters (``booster__<name>`` for a parameter of the booster) and return
        ``self``. With ``booster=None``, ``booster__<name>`` sets the default booster's
        parameter: the default booster is then created and held in ``booster``."""
        before = dict(self.__dict__)
        try:
            if (
                self.booster is None
                and "booster" not in params
                and any(key.startswith("booster__") for key in params)
            ):
                self.booster = self._default_booster()
            return super().set_params(**params)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    # ------------------------------------------------------------------ state and input

    def _atomic(self, work: Callable[[], _T]) -> _T:
        """Run ``work``; if it raises, restore the adapter's attributes as they were (the
        booster itself rejects bad rows before learning any)."""
        before = dict(self.__dict__)
        try:
            return work()
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _missing_allowed(self) -> bool:
        """Whether NaN passes the input checks: the (fitted or template) booster takes missing
        values (e.g. ``VFDTCommittee(missing="learn")``, the default)."""
        booster = self.__dict__.get("booster_")
        if booster is None:
            try:
                booster = self._template()
            except (TypeError, ValueError):
                return False
        return bool(booster._missing_allowed())

    def _finite(self) -> bool | str:
        return "allow-nan" if self._missing_allowed() else True

    def _validate(self, *arrays: Any, reset: bool, **extra: Any) -> Any:
        """scikit-learn's ``validate_data`` with this adapter's conventions: float64, C-ordered,
        CSR accepted, NaN only where the booster allows missing values."""
        return _no_overflow(
            type(self).__name__,
            lambda: validate_data(
                self,
                *arrays,
                reset=reset,
                accept_sparse="csr",
                dtype=np.float64,
                order="C",
                ensure_all_finite=self._finite(),
                **extra,
            ),
        )

    def _check_X(self, X: Any) -> Any:
        """``X`` checked against the fit (features, names, values) as float64, C-ordered and
        writable (a read-only input is copied), or CSR."""
        return _writable(self._validate(X, reset=False))

    def _check_X_y(self, X: Any, y: Any, *, reset: bool, multi_output: bool) -> tuple[Any, Any]:
        if y is None:
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, but the target "
                "y is None."
            )
        X, y = self._validate(X, y, reset=reset, multi_output=multi_output)
        return _writable(X), y

    def _scores(self, X: Any) -> np.ndarray:
        """The booster's scores ``(n, k)`` for the checked rows of ``X`` (no learning)."""
        check_is_fitted(self, "booster_")
        X = self._check_X(X)
        booster = self.booster_
        return booster.votes(X) if isinstance(booster, MulticlassLearner) else booster.score(X)

    # ------------------------------------------------------------------ pickling

    def __getstate__(self) -> dict[str, Any]:
        # The fitted booster travels as pickle bytes: a model loaded as a read-only memory map
        # (joblib's mmap_mode) would otherwise hold read-only arrays, which its compiled kernels
        # cannot update (partial_fit) and must be compiled again for (predict).
        state = dict(super().__getstate__())
        if "booster_" in state:
            state["booster_"] = _PickledBooster(pickle.dumps(state["booster_"], _PROTOCOL))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        booster = state.get("booster_")
        if isinstance(booster, _PickledBooster):
            state = {**state, "booster_": pickle.loads(booster.data)}
        super().__setstate__(state)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self._missing_allowed()
        return tags


class OnlineBoostingClassifier(ClassifierMixin, _OnlineBoostingBase):
    """An olboost multiclass booster as a scikit-learn classifier.

    ``fit(X, y)`` learns a fresh clone of ``booster`` from the rows of ``X`` in their order, one
    pass, row by row (online learning: the order matters, as in a stream); ``partial_fit`` goes
    on learning. Classes may be of any type; the booster sees their indices in ``classes_``.

    Parameters
    ----------
    booster : MulticlassLearner, default=None
        The olboost multiclass learner to fit (a template: ``fit`` learns a clone of it, so it is
        never changed), e.g. :class:`~olboost.AdaBoostOLM` or :class:`~olboost.OnlineMBBM`.
        Leave its ``classes`` at ``None``: they come from ``y``. ``None``: ``AdaBoostOLM()``
        (100 Hoeffding trees).
    random_state : int, numpy.random.RandomState or None, default=None
        Seed of the booster, overriding its ``seed``: an int is used as the seed (so
        ``random_state=3`` learns as ``seed=3`` does); a ``RandomState`` gives one draw per fit.
        ``None`` keeps the booster's own ``seed`` (if that is ``None`` too, each fit draws a fresh
        one, kept in ``booster_.seed_``).

    Attributes
    ----------
    booster_ : MulticlassLearner
        The fitted booster (classes ``0 .. k-1``, the indices of ``classes_``).
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen in ``fit``, when ``X`` had string column names.
    n_samples_seen_ : int
        Rows learned so far (``fit`` and ``partial_fit``).

    Notes
    -----
    ``decision_function`` gives the booster's votes, ``(n, n_classes)``, or for two classes the
    difference ``votes[:, 1] - votes[:, 0]``, ``(n,)``; ``predict`` is the class of the largest
    vote (the first class on ties) and ``predict_proba`` a softmax of the votes, as the booster's
    ``predict_proba_one``. ``sample_weight`` is not supported: the boosters weight their weak
    learners' examples themselves.

    Examples
    --------
    Ten Hoeffding trees on the bundled UCI *balance* set, in a scikit-learn pipeline:

    >>> from olboost import AdaBoostOLM, VFDTCommittee
    >>> from olboost.datasets import load_uci
    >>> from olboost.sklearn import OnlineBoostingClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> data = load_uci("balance")
    >>> X, y = data.X, [data.class_names[c] for c in data.y]
    >>> clf = OnlineBoostingClassifier(AdaBoostOLM(VFDTCommittee(), learners=10), random_state=1)
    >>> model = make_pipeline(StandardScaler(), clf).fit(X[:500], y[:500])
    >>> clf.classes_
    array(['B', 'L', 'R'], dtype='<U1')
    >>> round(model.score(X[500:], y[500:]), 4)
    0.848
    >>> model.predict(X[500:503])
    array(['L', 'L', 'L'], dtype='<U1')

    ``partial_fit`` learns more rows (``classes`` is needed on the first call only):

    >>> _ = clf.partial_fit(StandardScaler().fit(X[:500]).transform(X[500:]), y[500:])
    >>> clf.n_samples_seen_
    625
    """

    _learner_type = MulticlassLearner
    _outputs_param = "classes"

    def _default_booster(self) -> MulticlassLearner:
        from olboost.boosters import AdaBoostOLM

        return AdaBoostOLM()

    def fit(self, X: Any, y: Any) -> OnlineBoostingClassifier:
        """Learn a fresh clone of ``booster`` from the rows of ``X`` (dense or sparse,
        ``(n, d)``) and their classes ``y``, in order, one pass. Returns ``self``."""

        def work() -> OnlineBoostingClassifier:
            Xc, yc = self._check_X_y(X, y, reset=True, multi_output=False)
            check_classification_targets(yc)
            classes = np.unique(yc)
            _need_two(type(self).__name__, classes)
            codes = _codes(type(self).__name__, classes, yc)
            booster = self._new_booster(len(classes))
            booster.learn(Xc, codes)
            self.classes_ = classes
            self.booster_ = booster
            self.n_samples_seen_ = int(Xc.shape[0])
            return self

        return self._atomic(work)

    def partial_fit(self, X: Any, y: Any, classes: Any = None) -> OnlineBoostingClassifier:
        """Learn the rows of ``X`` and classes ``y`` in order, continuing the fitted model (or
        starting one). ``classes`` (every class of the stream) is required on the first call;
        later it may be omitted, or must equal ``classes_``. Returns ``self``.

        A rejected input (wrong features, unknown class, NaN where not accepted, ...) raises
        before anything changes."""

        def work() -> OnlineBoostingClassifier:
            first = "booster_" not in self.__dict__
            Xc, yc = self._check_X_y(X, y, reset=first, multi_output=False)
            check_classification_targets(yc)
            known = _partial_fit_classes(self, classes, first)
            codes = _codes(type(self).__name__, known, yc)
            if first:
                booster = self._new_booster(len(known))
                self.classes_ = known
                self.booster_ = booster
                self.n_samples_seen_ = 0
            _check_rows(self.booster_, Xc)
            self.booster_.learn(Xc, codes)
            self.n_samples_seen_ += int(Xc.shape[0])
            return self

        return self._atomic(work)

    def decision_function(self, X: Any) -> np.ndarray:
        """The booster's votes, ``(n, n_classes)``; with two classes ``votes[:, 1] -
        votes[:, 0]``, ``(n,)``, positive for ``classes_[1]``."""
        votes = self._scores(X)
        if votes.shape[1] == 2:
            return votes[:, 1] - votes[:, 0]
        return votes

    def predict(self, X: Any) -> np.ndarray:
        """The class of the largest vote for each row (the first class of ``classes_`` on
        ties)."""
        votes = self._scores(X)
        return self.classes_[np.argmax(votes, axis=1)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, ``(n, n_classes)``: a softmax of the booster's votes (as its
        ``predict_proba_one``)."""
        return libm.softmax(self._scores(X))


class OnlineBoostingRanker(ClassifierMixin, _OnlineBoostingBase):
    """An olboost multi-label ranking booster as a scikit-learn multi-label classifier.

    ``y`` is a label indicator matrix ``(n, n_labels)`` (0/1 or booleans; column ``j`` is label
    ``classes_[j] == j``). ``fit(X, y)`` learns a fresh clone of ``booster`` from the rows of
    ``X`` in their order, one pass, row by row; ``partial_fit`` goes on learning.
    ``decision_function`` gives the booster's label scores, which
    :func:`sklearn.metrics.label_ranking_loss`, :func:`~sklearn.metrics.coverage_error` and
    :func:`~sklearn.metrics.label_ranking_average_precision_score` take.

    **The predict rule.** ``predict`` marks the ``r`` labels of highest score in each row
    relevant (ties go to the label of lower index), with ``r`` the rounded mean number of
    relevant labels per row seen in training (``label_cardinality_``, rounded half up), at least
    1 and at most ``n_labels``. ``r`` is the same for every row, and known before ``predict`` is
    called.

    A 1-D ``y`` of class labels (binary or multiclass; any type) is also taken, as scikit-learn's
    multi-label classifiers do: one relevant label per row, the classes. ``r`` is then 1:
    ``predict`` gives the top-ranked class, ``decision_function`` the scores ``(n, n_classes)``
    (for two classes, ``scores[:, 1] - scores[:, 0]``).

    Parameters
    ----------
    booster : RankingLearner, default=None
        The olboost ranking learner to fit (a template: ``fit`` learns a clone), e.g.
        :class:`~olboost.AdaOLMR`, :class:`~olboost.OnlineBMR` or :class:`~olboost.LabelRanker`.
        Leave its ``labels`` at ``None``: they come from ``y``. ``None``: ``AdaOLMR()`` (100
        Hoeffding trees).
    random_state : int, numpy.random.RandomState or None, default=None
        Seed of the booster, overriding its ``seed`` (see :class:`OnlineBoostingClassifier`);
        ``None`` keeps the booster's own.

    Attributes
    ----------
    booster_ : RankingLearner
        The fitted booster (labels ``0 .. n_labels-1``, the columns of ``y``).
    classes_ : ndarray of shape (n_labels,)
        ``arange(n_labels)`` for an indicator ``y``; the sorted class labels for a 1-D ``y``.
    label_cardinality_ : float
        Mean number of relevant labels per row seen so far (1 for a 1-D ``y``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen in ``fit``, when ``X`` had string column names.
    n_samples_seen_ : int
        Rows learned so far (``fit`` and ``partial_fit``).

    Notes
    -----
    There is no ``predict_proba``: the boosters' scores rank labels and are not probabilities.
    ``sample_weight`` is not supported, as for :class:`OnlineBoostingClassifier`.
    ``score`` is scikit-learn's classifier score (subset accuracy for an indicator ``y``); for a
    ranking score use e.g. ``make_scorer(label_ranking_loss, greater_is_better=False,
    response_method="decision_function")``.

    Examples
    --------
    Ten Hoeffding trees on the bundled *emotions* set (six labels):

    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.sklearn import OnlineBoostingRanker
    >>> from sklearn.metrics import label_ranking_loss
    >>> data = load("emotions")
    >>> ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(), learners=10), random_state=1)
    >>> _ = ranker.fit(data.train.X, data.train.Y)
    >>> round(label_ranking_loss(data.test.Y, ranker.decision_function(data.test.X)), 4)
    0.2576
    >>> round(ranker.label_cardinality_, 3)   # so predict marks the top 2 labels of each row
    1.813
    >>> ranker.predict(data.test.X[:2])     # of y's dtype (here boolean)
    array([[False, False, False,  True,  True, False],
           [ True, False, False, False, False,  True]])
    """

    _learner_type = RankingLearner
    _outputs_param = "labels"

    def _default_booster(self) -> RankingLearner:
        from olboost.boosters import AdaOLMR

        return AdaOLMR()

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags

    def fit(self, X: Any, y: Any) -> OnlineBoostingRanker:
        """Learn a fresh clone of ``booster`` from the rows of ``X`` (dense or sparse,
        ``(n, d)``) and ``y`` (an ``(n, n_labels)`` indicator matrix, or ``n`` class labels), in
        order, one pass. Returns ``self``."""

        def work() -> OnlineBoostingRanker:
            Xc, yc = self._check_X_y(X, y, reset=True, multi_output=True)
            kind, yc = _ranking_target(type(self).__name__, yc)
            if kind == "multilabel-indicator":
                Y = _indicator(type(self).__name__, yc)
                classes = np.arange(Y.shape[1])
                dtype = yc.dtype
            else:
                classes = np.unique(yc)
                _need_two(type(self).__name__, classes)
                Y = _one_hot(_codes(type(self).__name__, classes, yc), len(classes))
                dtype = None
            booster = self._new_booster(len(classes))
            booster.learn(Xc, Y)
            self._target_kind = kind
            self._y_dtype = dtype
            self.classes_ = classes
            self.booster_ = booster
            self.n_samples_seen_ = int(Y.shape[0])
            self._n_relevant = int(Y.sum())
            self.label_cardinality_ = self._n_relevant / self.n_samples_seen_
            return self

        return self._atomic(work)

    def partial_fit(self, X: Any, y: Any, classes: Any = None) -> OnlineBoostingRanker:
        """Learn the rows of ``X`` and ``y`` in order, continuing the fitted model (or starting
        one). ``y`` is of the same kind as in the first call: an indicator matrix with the same
        number of columns (``classes`` may be omitted; if given it must be
        ``arange(n_labels)``), or class labels (``classes``, every class of the stream, is then
        required on the first call). Returns ``self``.

        A rejected input raises before anything changes."""

        def work() -> OnlineBoostingRanker:
            name = type(self).__name__
            first = "booster_" not in self.__dict__
            Xc, yc = self._check_X_y(X, y, reset=first, multi_output=True)
            kind, yc = _ranking_target(name, yc)
            if not first and (kind == "multilabel-indicator") != (
                self._target_kind == "multilabel-indicator"
            ):
                raise ValueError(
                    f"{name}: y must be "
                    + (
                        "a label indicator matrix"
                        if self._target_kind == "multilabel-indicator"
                        else "1-D class labels"
                    )
                    + f", as in the first call; got {kind} targets"
                )
            if kind == "multilabel-indicator":
                Y = _indicator(name, yc)
                m = Y.shape[1] if first else len(self.classes_)
                if Y.shape[1] != m:
                    raise ValueError(
                        f"{name}: y has {Y.shape[1]} label columns, the model ranks {m}"
                    )
                if classes is not None and not np.array_equal(np.asarray(classes), np.arange(m)):
                    raise ValueError(
                        f"{name}: with a label indicator y, classes must be None or "
                        f"arange({m}) (the columns), got {classes!r}"
                    )
                known, dtype = np.arange(m), yc.dtype
            else:
                known = _partial_fit_classes(self, classes, first)
                Y = _one_hot(_codes(name, known, yc), len(known))
                dtype = None
            if first:
                self._target_kind = kind
                self._y_dtype = dtype
                self.classes_ = known
                self.booster_ = self._new_booster(len(known))
                self.n_samples_seen_ = 0
                self._n_relevant = 0
            _check_rows(self.booster_, Xc)
            self.booster_.learn(Xc, Y)
            self.n_samples_seen_ += int(Y.shape[0])
            self._n_relevant += int(Y.sum())
            self.label_cardinality_ = self._n_relevant / max(self.n_samples_seen_, 1)
            return self

        return self._atomic(work)

    @property
    def _n_predicted(self) -> int:
        """``r``, the number of labels ``predict`` marks relevant (see the class docstring)."""
        m = len(self.classes_)
        return min(m, max(1, math.floor(self.label_cardinality_ + 0.5)))

    def decision_function(self, X: Any) -> np.ndarray:
        """The booster's label scores, ``(n, n_labels)``: higher means more relevant. For a
        binary 1-D ``y``, ``scores[:, 1] - scores[:, 0]``, ``(n,)``."""
        scores = self._scores(X)
        if self._target_kind == "binary":
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X: Any) -> np.ndarray:
        """The top ``r`` labels of each row as an indicator matrix ``(n, n_labels)`` (of ``y``'s
        dtype), ``r`` by the rule in the class docstring; for a 1-D ``y``, the top-ranked
        class."""
        scores = self._scores(X)
        if self._target_kind != "multilabel-indicator":
            return self.classes_[np.argmax(scores, axis=1)]
        order = np.argsort(-scores, axis=1, kind="stable")[:, : self._n_predicted]
        Y = np.zeros(scores.shape, dtype=np.bool_)
        np.put_along_axis(Y, order, True, axis=1)
        return Y.astype(self._y_dtype)


# ---------------------------------------------------------------------------------- helpers

_PROTOCOL = pickle.HIGHEST_PROTOCOL


class _PickledBooster:
    """A fitted booster as pickle bytes, inside a pickled adapter."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def __reduce__(self) -> tuple[Any, ...]:
        return (_PickledBooster, (self.data,))


def _check_rows(booster: OnlineLearner, X: np.ndarray) -> None:
    """Raise, before any row is learned, if the booster's committee would reject a row of ``X``
    (a nominal code its trees do not know, a value outside [0, 1] for rankers under the entropy).
    The booster's array path learns the rows before a rejected one, as a stream must; a
    ``partial_fit`` batch is all or nothing."""
    committee = booster.__dict__.get("committee_")
    if committee is None:  # not started: a failure discards the new booster
        return
    first_bad = committee.check_rows(X)
    if first_bad < X.shape[0]:
        try:
            committee.predict(X[first_bad])
        except ValueError as error:
            raise ValueError(f"X row {first_bad}: {error}") from None
        raise ValueError(f"X row {first_bad} is rejected by {type(committee).__name__}")


def _no_overflow(name: str, validate: Callable[[], _T]) -> _T:
    """``validate()`` (scikit-learn's ``validate_data``), with the ``OverflowError`` NumPy
    raises for an integer too large for a float64 reported as the ``ValueError`` of a value
    out of range, as the boosters report values beyond ``MAX_ABS_FEATURE``."""
    try:
        return validate()
    except OverflowError as err:
        raise ValueError(
            f"{name}: X holds a number too large for a float64 ({err}); feature values must lie "
            f"within +/-{MAX_ABS_FEATURE:g} (MAX_ABS_FEATURE)"
        ) from None


def _writable(X: Any) -> Any:
    """``X`` itself, or a copy when it is a read-only dense array (e.g. a memory map), so the
    compiled kernels see the array type they were compiled for."""
    if isinstance(X, np.ndarray) and not X.flags.writeable:
        return np.array(X, order="C")
    return X


def _need_two(name: str, classes: np.ndarray) -> None:
    if len(classes) < 2:
        raise ValueError(
            f"{name}: y has {len(classes)} class ({classes.tolist()!r}); at least 2 classes are "
            "needed"
        )


def _codes(name: str, classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The indices in ``classes`` of the labels ``y``; a ``ValueError`` naming unknown ones."""
    index: dict[Hashable, int] = {c: i for i, c in enumerate(classes.tolist())}
    codes = np.empty(len(y), dtype=np.int64)
    unknown = []
    for i, label in enumerate(y.tolist()):
        code = index.get(label)
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
        known = np.unique(np.asarray(classes))
        _need_two(name, known)
        return known
    if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), est.classes_):
        raise ValueError(
            f"{name}: classes={classes!r} is not the same as on the first call to partial_fit, "
            f"was {est.classes_!r}"
        )
    return est.classes_


def _ranking_target(name: str, y: Any) -> tuple[str, Any]:
    """The kind of a ranker's target (``"multilabel-indicator"``, ``"binary"`` or
    ``"multiclass"``) and the target (a column vector made 1-D, with a warning, as
    scikit-learn does); a ``ValueError`` for any other kind."""
    if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    check_classification_targets(y)
    kind = type_of_target(y, input_name="y")
    if kind not in ("multilabel-indicator", "binary", "multiclass"):
        raise ValueError(
            f"{name}: y must be a 0/1 label indicator matrix (n_samples, n_labels) or 1-D class "
            f"labels, got {kind} targets"
        )
    return kind, y


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
