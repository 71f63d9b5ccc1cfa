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

from typing import Any

import numpy as np

try:
    from sklearn.base import ClassifierMixin

    # new in scikit-learn 1.6; imported here too so that an older version is reported as below
    from sklearn.utils.validation import validate_data  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "olboost.sklearn needs scikit-learn >= 1.6 (pip install 'olboost[sklearn]'): " + str(err)
    ) from err

from olboost import _libm as libm
from olboost.online.labels import rank_cut
from olboost.online.learner import MulticlassLearner, RankingLearner
from olboost.sklearn._base import _OnlineBoostingBase

# pickles of fitted adapters name olboost.sklearn._PickledBooster
from olboost.sklearn._base import _PickledBooster as _PickledBooster
from olboost.sklearn._targets import (
    _classes_of,
    _codes,
    _indicator,
    _need_two,
    _one_hot,
    _partial_fit_classes,
    _ranking_target,
    refuse_label_sets,
)

__all__ = ["OnlineBoostingClassifier", "OnlineBoostingRanker"]


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
        one, kept in ``booster_.seed_``: a NumPy ``SeedSequence``'s entropy, beyond
        ``random_state``'s range, which ``booster__seed=booster_.seed_`` takes to fit alike).

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
            classes = _classes_of(type(self).__name__, yc)
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
        before anything changes. The fitted booster goes on as it was built: parameters set
        since (``set_params``) take effect at the next ``fit``, which starts a new one."""

        def work() -> OnlineBoostingClassifier:
            first = "booster_" not in self.__dict__
            Xc, yc = self._check_X_y(X, y, reset=first, multi_output=False)
            _classes_of(type(self).__name__, yc)
            known = _partial_fit_classes(self, classes, first)
            codes = _codes(type(self).__name__, known, yc)
            if first:
                booster = self._new_booster(len(known))
                self.classes_ = known
                self.booster_ = booster
                self.n_samples_seen_ = 0
            t0 = self._learned_rows(self.booster_, 0)
            try:
                self.booster_.learn(Xc, codes)
            finally:
                # the rows learned, also those before an interrupt (see _atomic)
                self.n_samples_seen_ += self._learned_rows(self.booster_, t0)
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
    1 and at most ``n_labels``; for a top-k booster (:class:`~olboost.TopkBBM`,
    :class:`~olboost.TopkAdaptive`), which learns only the relevance of the labels it shows, its
    ``k``, as its own ``predict_one``. ``r`` is the same for every row, and known before
    ``predict`` is called.

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
            refuse_label_sets(type(self).__name__, y)
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

        A rejected input raises before anything changes. The fitted booster goes on as it was
        built: parameters set since (``set_params``) take effect at the next ``fit``."""

        def work() -> OnlineBoostingRanker:
            name = type(self).__name__
            first = "booster_" not in self.__dict__
            refuse_label_sets(name, y)
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
            t0 = self._learned_rows(self.booster_, 0)
            try:
                self.booster_.learn(Xc, Y)
            finally:
                # the rows learned, also those before an interrupt (see _atomic)
                done = self._learned_rows(self.booster_, t0)
                self.n_samples_seen_ += done
                self._n_relevant += int(Y[:done].sum())
                self.label_cardinality_ = self._n_relevant / max(self.n_samples_seen_, 1)
            return self

        return self._atomic(work)

    @property
    def _n_predicted(self) -> int:
        """``r``, the number of labels ``predict`` marks relevant (see the class docstring)."""
        from olboost.boosters._topk_base import TopkBooster

        booster = self.__dict__.get("booster_")
        if isinstance(booster, TopkBooster):
            # its predict_one's cut: the label cardinality is what it must not learn from
            return booster._n_predicted(len(self.classes_))
        return rank_cut(self.label_cardinality_, len(self.classes_))

    def decision_function(self, X: Any) -> np.ndarray:
        """The booster's label scores, ``(n, n_labels)``: higher means more relevant. For a
        binary 1-D ``y``, ``scores[:, 1] - scores[:, 0]``, ``(n,)``."""
        scores = self._scores(X)
        # by the classes, not by the first batch's kind of target: a partial_fit whose first
        # batch holds 2 of 3 declared classes looks binary
        if self._target_kind != "multilabel-indicator" and len(self.classes_) == 2:
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
