"""What every booster shares: input checks, committee start-up, the River-style one-example API and
the array API built on it, for multi-label ranking (:class:`RankingBooster`) and multiclass
classification (:class:`MulticlassBooster`).

A booster implements three hooks: ``_init_state`` (allocate learned state), ``_scores`` (its score
vector from the committee's ``(N, k)`` weak predictions) and ``_update`` (learn from one example's
target and return the ``(N, k)`` label weights to train the committee with). Everything else, and
every check, lives here once.

Inputs are checked completely before anything changes: an example that is rejected with a
``ValueError`` or ``TypeError`` leaves the model exactly as it was.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from olboost._random import STREAMS, seed_int
from olboost._river import RiverClassifier
from olboost.base import Estimator, InstanceOf, Interval
from olboost.boosters import _driver
from olboost.feedback import Feedback, FullFeedback
from olboost.weak.base import Committee

__all__ = ["Booster", "MulticlassBooster", "RankingBooster"]

#: Rows the compiled driver takes per call (a sparse stream is densified one block at a time).
_BLOCK_ROWS = 4096


class BoosterKernels(NamedTuple):
    """A booster's compiled functions (:mod:`olboost.boosters._driver`): ``score(H, t, state,
    out)`` writes the scores of round ``t``; ``step(H, target, t, state, weights, scores,
    return_scores) -> int`` is one round of the algorithm for the driver."""

    score: Any
    step: Any


def _check_outputs(value: Any) -> str | None:
    if isinstance(value, bool):
        return "must be None, an int >= 2 or a sequence of at least 2 distinct values"
    if isinstance(value, numbers.Integral):
        return None if value >= 2 else f"must be >= 2 when an int, got {value}"
    if isinstance(value, str) or not isinstance(value, Sequence):
        return f"must be None, an int >= 2 or a sequence, got {value!r}"
    if len(value) < 2:
        return "must hold at least 2 values"
    try:
        distinct = len(set(value)) == len(value)
    except TypeError:
        return "must hold hashable values"
    return None if distinct else "must not repeat a value"


class Booster(Estimator):
    """Base class of all boosters: a committee of ``learners`` weak learners over ``k`` outputs
    (the labels to rank, or the classes), started on the first example."""

    #: Name of the parameter (and, with ``_``, of the learned attribute) holding the outputs.
    _outputs_param = "labels"

    _param_constraints = {
        "committee": InstanceOf(Committee, allow_none=True),
        "learners": Interval(1, None, integer=True),
        "seed": Interval(None, None, integer=True, allow_none=True),
    }

    # ------------------------------------------------------------------ hooks for subclasses

    def _init_state(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ learned-state helpers

    @property
    def _started(self) -> bool:
        return hasattr(self, "committee_")

    def _committee_shape(self) -> tuple[int, int]:
        """``(learners, labels)`` of the committee; one-vs-all designs use binary learners."""
        return self.learners, len(self._outputs())

    def _outputs(self) -> list[Hashable]:
        """The ``k`` outputs (labels or classes) in the order of score vectors."""
        attr = self._outputs_param + "_"
        if attr in self.__dict__:
            return self.__dict__[attr]
        value = getattr(self, self._outputs_param)
        if value is None:
            raise ValueError(
                f"{type(self).__name__}: the {self._outputs_param} are unknown: pass "
                f"{self._outputs_param}=k or {self._outputs_param}=[...] to the constructor, "
                "or learn from arrays first"
            )
        if isinstance(value, numbers.Integral):
            return list(range(int(value)))
        return list(value)

    def _set_outputs(self, outputs: list[Hashable]) -> None:
        setattr(self, self._outputs_param + "_", list(outputs))

    def _output_index(self) -> dict[Hashable, int]:
        index = self.__dict__.get("_index")
        if index is None:
            index = {value: i for i, value in enumerate(self._outputs())}
        return index

    def _start(self, n_features: int, feature_names: list[Hashable] | None) -> None:
        outputs = self._outputs()
        self._set_outputs(outputs)
        self._index = {value: i for i, value in enumerate(outputs)}
        seed = self.seed if self.seed is not None else int(np.random.SeedSequence().entropy)
        self.seed_ = seed
        self.n_features_in_ = n_features
        self.feature_names_in_ = feature_names
        committee = self.committee if self.committee is not None else _default_committee()
        self.committee_ = committee.clone()
        committee_seed = seed_int(seed, STREAMS["committee"])
        n_learners, n_labels = self._committee_shape()
        self.committee_.start(n_learners, n_labels, n_features, committee_seed)
        self.t_ = 0
        self._init_state()

    def _predictions(self, xv: np.ndarray) -> np.ndarray:
        # predicting then learning the same x (the usual test-then-train loop) asks the
        # committee once: the predictions are cached until the model next changes.
        cached = self.__dict__.get("_cache")
        if cached is not None and cached[0] == self.t_ and np.array_equal(cached[1], xv):
            return cached[2]
        H = self.committee_.predict(xv)
        self._cache = (self.t_, xv.copy(), H)
        return H

    def _learn_vector(self, xv: np.ndarray, target: Any, names: list[Hashable] | None) -> None:
        if not self._started:
            self._start(xv.shape[0], names)
        self._learn_predicted(xv, self._predictions(xv), target)

    def _learn_predicted(self, xv: np.ndarray, H: np.ndarray, target: Any) -> None:
        self.t_ += 1
        weights = self._update(H, target)
        self.committee_.learn(xv, weights)
        self._cache = None

    def _scores_one(self, x: Any) -> np.ndarray:
        """Scores of ``x`` (zeros before the first example). Does not change the model."""
        k = len(self._outputs())
        xv, _ = self._check_x(x)
        if not self._started:
            return np.zeros(k)
        return self._scores(self._predictions(xv))

    def _scores_many(self, X: Any) -> np.ndarray:
        rows = self._check_X(X)
        out = np.zeros((rows.n, len(self._outputs())))
        if self._started:
            for i in range(rows.n):
                out[i] = self._scores(self.committee_.predict(rows.row(i)))
        return out

    def _stream(self, rows: _Rows, targets: Sequence, return_scores: bool) -> np.ndarray | None:
        """Score then learn each row; ``targets[i]`` is what ``_update`` receives for row ``i``.

        With a compiled committee and a booster step (:meth:`_step_kernels`) the rows run through
        the compiled driver (:func:`olboost.boosters._driver.run`), a block at a time, with the
        same results as the row-by-row path here."""
        out = np.empty((rows.n, len(self._outputs()))) if return_scores else None
        i = 0
        while i < rows.n:
            if not self._started:
                self._start(rows.d, None)
            i = self._compiled_stream(rows, targets, out, i)
            if i == rows.n:
                break
            xv = rows.row(i)
            H = self.committee_.predict(xv)
            if out is not None:
                out[i] = self._scores(H)
            self._learn_predicted(xv, H, targets[i])
            i += 1
        return out

    def _compiled_stream(
        self, rows: _Rows, targets: Sequence, out: np.ndarray | None, start: int
    ) -> int:
        """Score then learn rows ``start, start + 1, ...`` in the compiled driver when the
        committee is compiled and the booster has a step; return the first row left to the
        row-by-row path (``start``: none done). A row the committee's checks reject stops the
        driver and is left to that path, which raises."""
        kernels = self._step_kernels()
        if kernels is None or self.committee_.compiled() is None:
            return start
        k = len(self._outputs())
        scratch = np.empty((1, k))
        state = self._step_state()
        i = start
        while i < rows.n:
            X = rows.block(i, _BLOCK_ROWS)
            stop = i + self.committee_.check_rows(X)
            if stop > i:
                _driver.run(
                    X[: stop - i],
                    self._step_targets(targets[i:stop]),
                    self.t_,
                    out[i:stop] if out is not None else scratch,
                    out is not None,
                    self.committee_,
                    kernels.step,
                    state,
                )
                self.t_ += stop - i
                self._cache = None
            if stop < i + X.shape[0]:
                return stop
            i = stop
        return i

    # ------------------------------------------------------------------ compiled step

    def _step_kernels(self) -> BoosterKernels | None:
        """The booster's compiled ``score`` and ``step`` (see :mod:`olboost.boosters._driver`),
        or ``None`` when this configuration learns in Python (e.g. Monte Carlo potentials)."""
        return None

    def _step_state(self) -> Any:
        """The record of learned state and parameters the compiled step reads and updates (its
        arrays are the model's own, updated in place)."""
        raise NotImplementedError

    def _step_targets(self, targets: Sequence) -> np.ndarray:
        """``targets`` (what ``_update`` receives) as the array the compiled step reads."""
        raise NotImplementedError

    def _scores(self, H: np.ndarray) -> np.ndarray:
        """The booster's score vector (length ``k``) given weak predictions ``H``, ``(N, k)``:
        its compiled ``score`` for round ``t_ + 1``."""
        out = np.empty(len(self._outputs()))
        self._step_kernels().score(H, self.t_ + 1, self._step_state(), out)
        return out

    def _update(self, H: np.ndarray, target: Any) -> np.ndarray:
        """Learn from one example (round ``t_``); return ``(N, k)`` label weights for the
        committee: the compiled step, as the driver runs it."""
        weights = np.empty_like(H)
        scratch = np.empty(len(self._outputs()))
        target = self._step_targets([target])[0]
        self._step_kernels().step(H, target, self.t_, self._step_state(), weights, scratch, False)
        return weights

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_cache", None)
        return state

    # ------------------------------------------------------------------ input checks

    def _check_x(self, x: Any) -> tuple[np.ndarray, list[Hashable] | None]:
        """Validate one feature vector; returns it as float64 and, for dicts, the key order."""
        name = type(self).__name__
        names: list[Hashable] | None = None
        if isinstance(x, Mapping):
            known = self.__dict__.get("feature_names_in_")
            if self._started and known is None:
                raise TypeError(f"{name}: x must be a vector, as in the first example, not a dict")
            if known is None:
                # Sorted, so that the first dict's key order does not decide which columns each
                # weak learner sees.
                names = sorted(x, key=lambda key: (str(key), type(key).__name__))
                values = [x[key] for key in names]
            else:
                if len(x) != len(known) or any(key not in x for key in known):
                    missing = [key for key in known if key not in x]
                    extra = [key for key in x if key not in set(known)]
                    raise ValueError(
                        f"{name}: x has different features than the first example "
                        f"(missing {missing[:5]}, unexpected {extra[:5]})"
                    )
                values = [x[key] for key in known]
            xv = _floats(values, f"{name}: feature values")
        else:
            if self.__dict__.get("feature_names_in_") is not None:
                raise TypeError(f"{name}: x must be a dict, as in the first example")
            if isinstance(x, str | bytes) or not isinstance(x, Sequence | np.ndarray):
                raise TypeError(f"{name}: x must be a dict or a 1-D vector, got {type(x).__name__}")
            xv = _floats(x, f"{name}: feature values")
            if xv.ndim != 1:
                raise ValueError(f"{name}: x must be 1-D, got shape {xv.shape}")
        if self._started and xv.shape[0] != self.n_features_in_:
            raise ValueError(
                f"{name}: x has {xv.shape[0]} features, the model was started with "
                f"{self.n_features_in_}"
            )
        if xv.shape[0] == 0:
            raise ValueError(f"{name}: x has no features")
        bad = ~np.isfinite(xv)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            key = names[j] if names is not None else j
            raise ValueError(f"{name}: x has a non-finite value ({xv[j]}) at feature {key!r}")
        return xv, names

    def _check_X(self, X: Any) -> _Rows:
        rows = _Rows.of(X, type(self).__name__)
        if self._started and rows.d != self.n_features_in_:
            raise ValueError(
                f"{type(self).__name__}: X has {rows.d} features, the model was started with "
                f"{self.n_features_in_}"
            )
        return rows


class RankingBooster(Booster):
    """Base class of online boosters for multi-label ranking (see the module docstring).

    Subclasses take at least the parameters ``committee``, ``learners``, ``labels`` and ``seed``.
    """

    _outputs_param = "labels"
    _param_constraints = {
        **Booster._param_constraints,
        "labels": InstanceOf(object, allow_none=True, predicate=_check_outputs),
    }

    #: The kinds of feedback the booster learns from (full-feedback boosters: full only).
    _feedback_types: tuple[type[Feedback], ...] = (FullFeedback,)

    def learn_one(self, x: Mapping | Sequence | np.ndarray, y: set | frozenset | Feedback) -> None:
        """Learn from one example: features ``x`` (a dict or a 1-D vector) and either the set ``y``
        of its relevant labels (possibly empty) or a :class:`olboost.feedback.Feedback` object
        over the booster's labels, in their order."""
        xv, names = self._check_x(x)
        feedback = y if isinstance(y, Feedback) else FullFeedback(self._check_y(y))
        if not isinstance(feedback, self._feedback_types):
            raise TypeError(
                f"{type(self).__name__} learns from "
                + " or ".join(t.__name__ for t in self._feedback_types)
                + f", got {type(feedback).__name__}"
            )
        k = len(self._outputs())
        if isinstance(feedback, FullFeedback) and feedback.relevant.shape[0] != k:
            raise ValueError(
                f"{type(self).__name__}: the feedback covers {feedback.relevant.shape[0]} labels, "
                f"the model ranks {k}"
            )
        self._learn_vector(xv, feedback, names)

    def score_one(self, x: Mapping | Sequence | np.ndarray) -> dict[Hashable, float]:
        """Score of every label for ``x``; higher means more relevant. Does not change the model."""
        s = self._scores_one(x)
        return {label: float(v) for label, v in zip(self._outputs(), s, strict=True)}

    def rank_one(self, x: Mapping | Sequence | np.ndarray) -> list[Hashable]:
        """The labels ordered from most to least relevant for ``x`` (ties keep label order)."""
        s = self._scores_one(x)
        labels = self._outputs()
        return [labels[i] for i in np.argsort(-s, kind="stable")]

    def learn(self, X: Any, Y: Any) -> RankingBooster:
        """Learn from a stream given as arrays, row by row: ``X`` is ``(n, d)`` (dense or scipy
        sparse) and ``Y`` an ``(n, k)`` 0/1 or boolean matrix of relevant labels."""
        self.score_then_learn(X, Y, return_scores=False)
        return self

    def score(self, X: Any) -> np.ndarray:
        """Scores ``(n, k)`` of every row of ``X`` under the current model (no learning)."""
        return self._scores_many(X)

    def score_then_learn(self, X: Any, Y: Any, *, return_scores: bool = True) -> np.ndarray | None:
        """Test-then-train over a stream given as arrays: score row ``t``, then learn it.

        This is the prequential primitive the evaluation protocols use; returns the ``(n, k)``
        scores made before each row was learned.
        """
        rows = self._check_X(X)
        Ymask = self._check_Y(Y, rows.n)
        if self.labels is None and "labels_" not in self.__dict__:
            self._set_outputs(list(range(Ymask.shape[1])))
        return self._stream(rows, _FeedbackRows(Ymask), return_scores)

    def _step_targets(self, targets: Sequence) -> np.ndarray:
        """Relevant-label masks ``(n, k)``, C-contiguous booleans."""
        if isinstance(targets, _FeedbackRows):
            return np.ascontiguousarray(targets.Y)
        k = len(self._outputs())
        return np.array([f.relevant for f in targets], dtype=np.bool_).reshape(len(targets), k)

    def _check_y(self, y: Any) -> np.ndarray:
        name = type(self).__name__
        if not isinstance(y, set | frozenset):
            raise TypeError(
                f"{name}: y must be a set of relevant labels (possibly empty), "
                f"got {type(y).__name__}"
            )
        labels = self._outputs()
        index = self._output_index()
        mask = np.zeros(len(labels), dtype=np.bool_)
        for label in y:
            try:
                mask[index[label]] = True
            except (KeyError, TypeError):
                raise ValueError(
                    f"{name}: unknown label {label!r}; known labels are {labels[:10]}"
                    + (" ..." if len(labels) > 10 else "")
                ) from None
        return mask

    def _check_Y(self, Y: Any, n: int) -> np.ndarray:
        name = type(self).__name__
        Y = np.asarray(Y)
        if Y.ndim != 2 or Y.shape[0] != n:
            raise ValueError(f"{name}: Y must be (n_samples={n}, n_labels), got shape {Y.shape}")
        if Y.dtype != np.bool_:
            if not np.isin(Y, (0, 1)).all():
                raise ValueError(f"{name}: Y must hold only 0/1 or booleans")
            Y = Y.astype(np.bool_)
        k = Y.shape[1]
        known = self.__dict__.get("labels_")
        if known is None and self.labels is not None:
            known = self._outputs()
        if known is not None and k != len(known):
            raise ValueError(f"{name}: Y has {k} label columns, the model ranks {len(known)}")
        if known is None and k < 2:
            raise ValueError(f"{name}: Y must have at least 2 label columns")
        return Y


class MulticlassBooster(Booster, RiverClassifier):
    """Base class of online boosters for multiclass classification (River's classifier API).

    Subclasses take at least the parameters ``committee``, ``learners``, ``classes`` and ``seed``;
    ``classes`` is an int ``k`` (classes ``0..k-1``) or a sequence of class labels, fixed for the
    whole stream (the papers' ``k`` is known); it may be left ``None`` when learning from arrays,
    whose sorted distinct values then become the classes.
    """

    _outputs_param = "classes"
    _param_constraints = {
        **Booster._param_constraints,
        "classes": InstanceOf(object, allow_none=True, predicate=_check_outputs),
    }

    def _class_code(self, y: Any) -> int:
        try:
            return self._output_index()[y]
        except (KeyError, TypeError):
            classes = self._outputs()
            raise ValueError(
                f"{type(self).__name__}: unknown class {y!r}; the classes are {classes[:10]}"
                + (" ..." if len(classes) > 10 else "")
            ) from None

    def learn_one(self, x: Mapping | Sequence | np.ndarray, y: Hashable) -> None:
        """Learn from one example with features ``x`` and class ``y``."""
        xv, names = self._check_x(x)
        code = self._class_code(y)
        self._learn_vector(xv, code, names)

    def predict_proba_one(self, x: Mapping | Sequence | np.ndarray) -> dict[Hashable, float]:
        """Class probabilities: a softmax of the booster's votes. Does not change the model."""
        s = self._scores_one(x)
        p = np.exp(s - s.max())
        p /= p.sum()
        return {c: float(v) for c, v in zip(self._outputs(), p, strict=True)}

    def predict_one(self, x: Mapping | Sequence | np.ndarray) -> Hashable:
        """The class with the largest vote (the lowest class index on ties)."""
        return self._outputs()[int(np.argmax(self._scores_one(x)))]

    def learn(self, X: Any, y: Any) -> MulticlassBooster:
        """Learn from arrays, row by row: ``X`` is ``(n, d)``, ``y`` the ``n`` classes."""
        self.predict_then_learn(X, y, return_scores=False)
        return self

    def votes(self, X: Any) -> np.ndarray:
        """Votes ``(n, k)`` of every row of ``X`` under the current model (no learning)."""
        return self._scores_many(X)

    def predict(self, X: Any) -> np.ndarray:
        """The predicted class of every row of ``X`` (no learning)."""
        classes = np.asarray(self._outputs(), dtype=object)
        return classes[np.argmax(self._scores_many(X), axis=1)]

    def predict_then_learn(
        self, X: Any, y: Any, *, return_scores: bool = True
    ) -> np.ndarray | None:
        """Test-then-train over arrays; returns the votes ``(n, k)`` made before each row."""
        rows = self._check_X(X)
        y = np.asarray(y, dtype=object) if not isinstance(y, np.ndarray) else y
        if y.ndim != 1 or y.shape[0] != rows.n:
            raise ValueError(
                f"{type(self).__name__}: y must be 1-D with {rows.n} entries, got shape {y.shape}"
            )
        if self.classes is None and "classes_" not in self.__dict__:
            values = sorted(set(y.tolist()), key=lambda v: (str(type(v)), v))
            if len(values) < 2:
                raise ValueError(f"{type(self).__name__}: y must hold at least 2 classes")
            self._set_outputs(values)
        codes = [self._class_code(v) for v in y.tolist()]
        return self._stream(rows, codes, return_scores)

    def _step_targets(self, targets: Sequence) -> np.ndarray:
        """Class codes, int64."""
        return np.asarray(targets, dtype=np.int64).reshape(len(targets))


def _floats(values: Any, what: str) -> np.ndarray:
    """``values`` as a float64 array; a ``TypeError`` naming ``what`` if they are not numbers."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must be numbers ({err})") from None


def _default_committee() -> Committee:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee()


class _Rows:
    """Row access to a validated dense or CSR matrix, densifying one sparse row at a time."""

    def __init__(self, X: Any, n: int, d: int, sparse: bool):
        self.X, self.n, self.d, self.sparse = X, n, d, sparse

    @classmethod
    def of(cls, X: Any, name: str) -> _Rows:
        if hasattr(X, "tocsr") and hasattr(X, "nnz"):
            X = X.tocsr()
            data = np.asarray(X.data, dtype=np.float64)
            if not np.isfinite(data).all():
                raise ValueError(f"{name}: X has non-finite values")
            return cls((data, X.indices, X.indptr), X.shape[0], X.shape[1], True)
        X = _floats(X, f"{name}: X")
        if X.ndim != 2:
            raise ValueError(f"{name}: X must be 2-D, got shape {X.shape}")
        if X.shape[1] == 0:
            raise ValueError(f"{name}: X has no features")
        if not np.isfinite(X).all():
            i, j = np.argwhere(~np.isfinite(X))[0]
            raise ValueError(f"{name}: X has a non-finite value at row {i}, feature {j}")
        return cls(X, X.shape[0], X.shape[1], False)

    def block(self, start: int, size: int) -> np.ndarray:
        """Rows ``start .. start + size - 1`` (fewer at the end) as a C-contiguous float64
        matrix."""
        stop = min(start + size, self.n)
        if not self.sparse:
            return np.ascontiguousarray(self.X[start:stop])
        data, indices, indptr = self.X
        out = np.zeros((stop - start, self.d))
        for r in range(start, stop):
            lo, hi = indptr[r], indptr[r + 1]
            out[r - start, indices[lo:hi]] = data[lo:hi]
        return out

    def row(self, i: int) -> np.ndarray:
        if not self.sparse:
            return self.X[i]
        data, indices, indptr = self.X
        buf = np.zeros(self.d)
        lo, hi = indptr[i], indptr[i + 1]
        buf[indices[lo:hi]] = data[lo:hi]
        return buf


class _FeedbackRows(Sequence):
    """Full feedback for each row of a relevant-label matrix, made only when a row is read."""

    def __init__(self, Y: np.ndarray):
        self.Y = Y

    def __len__(self) -> int:
        return self.Y.shape[0]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return _FeedbackRows(self.Y[i])
        return FullFeedback(self.Y[i])
