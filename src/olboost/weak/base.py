"""The committee contract: how a booster drives its N weak learners.

A booster never talks to individual weak learners. At each round it asks its committee for all weak
predictions at once, an ``(N, k)`` array whose row ``i`` is learner ``i``'s distribution over the
``k`` labels (Jung & Tewari 2018, Sec. 2.1: single-label, multi-label and binary predictions all
encode as a distribution), and trains the committee with one ``(N, k)`` array of non-negative label
weights: row ``i`` says how much learner ``i`` should learn each label on this example, zero meaning
skip.

Every committee draws, from its seed, the per-learner randomness the papers' experiments used: a
random subset of ``n_features`` attributes per learner (to decorrelate the learners), a weight
multiplier, and the learner's own tree hyperparameters. :func:`draw_learner_setup` is that draw,
shared by the tree committees so that two committees built with the same seed and ranges get
identical learners; a committee of other learners draws its own hyperparameters
(:meth:`Committee._draw_setup`; e.g. :class:`~olboost.weak.linear.LinearCommittee`'s ``C`` and
margin) and its feature subsets with :func:`draw_feature_subsets`.

Learning from label weights is all a learner is told, whatever its kind: a tree learns label ``l``
as an example of weight ``weights[i, l]``; a linear label ranker takes the labels of positive
weight as the relevant set of one ranking trial, with a budget scaled by their total weight
(:class:`~olboost.weak.linear.LinearCommittee`); :class:`~olboost.weak.mixed.MixedCommittee`
puts committees of different kinds side by side as one.

**Compiled committees.** A committee whose learners are compiled (:class:`VFDTCommittee`,
:class:`LinearCommittee`, a :class:`MixedCommittee` of compiled parts) also
exposes them to compiled code through :meth:`Committee.compiled`: a ``predict(x, state, H)`` and a
``learn(x, weights, state, demand)`` kernel and the ``state`` record they take, so that one compiled
loop (:mod:`olboost.boosters._driver`) can drive any booster over any compiled committee without a
Python call per example. ``learn`` returns 0 once every learner has learned, or a status asking
for more storage, which :meth:`Committee.make_room` provides before the loop resumes.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from numbers import Integral
from typing import Any, NamedTuple

import numba
import numpy as np

from olboost import _libm as libm
from olboost._numba_cache import compile_elsewhere, join_pending
from olboost.base import Estimator, Interval, Range, in_olboost, overrides_before
from olboost.online.inputs import MAX_ABS_FEATURE, _first_bad

__all__ = [
    "MAX_WEIGHT_MULTIPLIER",
    "Committee",
    "CompiledKernels",
    "LearnerSetup",
    "draw_feature_subsets",
    "draw_learner_setup",
    "log_uniform",
]


#: Largest weight multiplier (the upper end of ``weight_multiplier``). A booster's weights are
#: at most about ``m^2`` (full feedback) or ``m^2`` over the smallest pair probability of a
#: top-k feedback (at least :data:`olboost.feedback.MIN_PAIR_PROBABILITY`, 1e-100), so times
#: this they stay finite: a committee never refuses a booster's weights once the booster has
#: moved on to the example (a multiplier of 1.7e308 did, at every call, after the booster's
#: state had changed).
MAX_WEIGHT_MULTIPLIER = 1e100


class CompiledKernels(NamedTuple):
    """A compiled committee's interface to compiled code (see the module docstring).

    Attributes
    ----------
    predict
        Numba function ``predict(x, state, H) -> int``: writes the ``(N, k)`` weak predictions
        for the float64 vector ``x`` into ``H``, changes nothing else, returns 0.
    learn
        Numba function ``learn(x, weights, state, demand) -> int``: learner ``i`` learns label
        ``l`` of ``x`` with importance ``weights[i, l]`` (times its multiplier); returns 0, or a
        non-zero status for :meth:`Committee.make_room`, ``demand`` (int64, length 2) saying how
        much. The same call repeated after ``make_room`` learns what the first did not (the
        committee keeps track of any part already learned): each learner learns each label of
        ``x`` once.
    state
        The record (a namedtuple of arrays) both kernels take; valid until ``make_room``.
    """

    predict: Any
    learn: Any
    state: Any


@dataclass(frozen=True)
class LearnerSetup:
    """What a committee draws once per learner at start.

    Attributes
    ----------
    features
        ``(N, m)`` int64, sorted column indices each learner sees (``m = min(n_features, d)``).
    grace_period, split_confidence, tie_threshold, weight_multiplier
        ``(N,)`` float64 per-learner hyperparameters.
    """

    features: np.ndarray
    grace_period: np.ndarray
    split_confidence: np.ndarray
    tie_threshold: np.ndarray
    weight_multiplier: np.ndarray


def _float64(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array; a ``TypeError`` naming ``name`` for text, which NumPy
    would read as numbers where it can ("1") and refuse in its own words where not."""
    array = np.asarray(value)
    if array.dtype.kind in "USV":
        raise TypeError(f"{name} must hold numbers, got {array.dtype} values")
    if array.dtype.kind == "c":
        # NumPy would drop the imaginary parts with a mere warning; the boosters refuse them
        raise TypeError(f"{name} must hold real numbers, got {array.dtype} values")
    try:
        return array.astype(np.float64, copy=False)
    except OverflowError:
        raise ValueError(f"{name} holds an integer too large for a float64") from None
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must hold numbers ({err})") from None


def draw_learner_setup(
    seed: int | None,
    n_learners: int,
    n_attributes: int,
    n_features: int | None,
    grace_period: tuple[float, float],
    split_confidence: tuple[float, float],
    tie_threshold: tuple[float, float],
    weight_multiplier: tuple[float, float],
) -> LearnerSetup:
    """Draw every learner's feature subset and hyperparameters from one seeded generator.

    Grace period and weight multiplier are uniform in their ranges; split confidence and tie
    threshold are log-uniform, a choice of this library: Jung, Goetz & Tewari 2017 (App. E)
    draw all three "randomly between" their ranges, which are
    :class:`~olboost.weak.vfdt.VFDTCommittee`'s defaults, and name no distribution; its default
    weight multipliers, ``(3, 10)``, are this library's too (the paper names none).
    ``n_features=None`` (or a value at least the number of attributes) gives every learner all
    attributes.
    """
    rng = np.random.default_rng(seed)
    n = n_learners
    conf = log_uniform(rng, split_confidence, n)
    grace = rng.uniform(*grace_period, size=n)
    tie = log_uniform(rng, tie_threshold, n)
    mult = rng.uniform(*weight_multiplier, size=n)
    feats = draw_feature_subsets(rng, n, n_attributes, n_features)
    return LearnerSetup(feats, grace, conf, tie, mult)


def log_uniform(rng: np.random.Generator, bounds: tuple[float, float], n: int) -> np.ndarray:
    """``n`` draws, log-uniform between the (positive) ``bounds``."""
    lo, hi = bounds
    # libm's exp and log: the same hyperparameters on every machine (see olboost._libm)
    return libm.exp(rng.uniform(math.log(lo), math.log(hi), size=n))


def draw_feature_subsets(
    rng: np.random.Generator, n_learners: int, n_attributes: int, n_features: int | None
) -> np.ndarray:
    """``(n_learners, m)`` int64: each learner's sorted random subset of ``m = min(n_features,
    n_attributes)`` attribute columns, drawn without replacement (all of them, in order, when
    ``n_features`` is ``None`` or at least ``n_attributes``)."""
    m = n_attributes if n_features is None else min(n_features, n_attributes)
    if m == n_attributes:
        return np.tile(np.arange(n_attributes, dtype=np.int64), (n_learners, 1))
    return np.stack(
        [np.sort(rng.choice(n_attributes, size=m, replace=False)) for _ in range(n_learners)]
    ).astype(np.int64)


def olboost_predicts(committee: Committee) -> bool:
    """Whether the committee's ``predict`` is olboost's own (checked by the shared check suite),
    and so are its parts' (a mix's), not a committee of the user's, whose answers
    :func:`checked_predictions` checks."""
    own = in_olboost(getattr(type(committee).predict, "__module__", ""))
    return own and all(olboost_predicts(part) for part in getattr(committee, "parts_", ()))


def checked_predictions(committee: Committee, H: Any) -> np.ndarray:
    """``H``, the predictions of a committee of the user's, as a C-ordered float64 array, or a
    ``ValueError`` naming the committee unless it is ``(N, k)`` (the committee's learners and
    labels) and finite: the compiled steps read it unchecked (one row too many wrote past their
    arrays), and a NaN spread through every weight."""
    name = f"{type(committee).__name__}.predict"
    shape = (committee.n_learners_, committee.n_labels_)
    got = getattr(H, "shape", None)
    if not isinstance(H, np.ndarray) or got != shape:
        what = f"shape {got}" if isinstance(H, np.ndarray) else type(H).__name__
        raise ValueError(f"{name} must return an (N, k) = {shape} array, got {what}")
    H = np.ascontiguousarray(H, dtype=np.float64)
    finite = np.isfinite(H)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        raise ValueError(f"{name}: learner {i}'s prediction for label {j} is {float(H[i, j])!r}")
    return H


def driven_kernels(committee: Committee) -> CompiledKernels | None:
    """``committee.compiled()`` for a driver that runs its kernels in place of its ``predict``
    and ``learn`` (a booster's compiled driver, a mix), or ``None``, for the driver to call
    them from Python, when the committee's class overrides either over the class whose
    ``compiled`` it inherits (a subclass of it, or a mixin before it): the kernels would not
    run the override (a subclass predicting otherwise predicted as its parent on the array
    paths only)."""
    if _overrides_the_kernels(type(committee)):
        return None
    return committee.compiled()


def _overrides_the_kernels(cls: type) -> bool:
    return overrides_before(cls, ("predict", "learn"), "compiled")


class Committee(Estimator):
    """Abstract committee of ``N`` online weak learners (see the module docstring).

    Subclasses implement :meth:`_allocate`, :meth:`predict` and :meth:`learn`. The booster calls
    :meth:`start` once, when it sees its first example, then alternates ``predict`` and ``learn``.
    Parameters stay untouched; the state created by ``start`` ends with ``_``.

    A committee of one's own (as :class:`~olboost.LinearCommittee` is one) also:

    * declares a constraint for each ``__init__`` parameter in ``_param_constraints`` (this
      class's are the trees': ``n_features``, ``grace_period``, ...) and calls
      ``self._validate_params()`` at the end of ``__init__``;
    * draws its per-learner randomness from the seed in ``_draw_setup`` (this class's draws the
      trees' hyperparameters), so that another seed gives another committee;
    * returns from ``predict`` an ``(N, k)`` float64 array whose rows are distributions,
      uniform before any learning (the check suite's rules); the boosters check the shape and
      that every value is finite at each call of a committee of one's own (``ValueError``),
      and run its ``predict`` and ``learn`` from Python unless :meth:`compiled` gives kernels;
    * refuses in ``learn``, with a ``ValueError`` and before any change, weights that are not
      finite and non-negative or not ``(N, k)``.

    ``olboost.checks.yield_checks(committee)`` runs the shared check suite on it.
    """

    # the ranges are drawn from with a uniform or log-uniform draw, which an infinite end
    # overflows: finite ends only
    _param_constraints = {
        "n_features": Interval(1, None, integer=True, allow_none=True),
        "grace_period": Range(Interval(0, math.inf, closed="neither")),
        "split_confidence": Range(Interval(0, 1, closed="neither")),
        "tie_threshold": Range(Interval(0, math.inf, closed="neither")),
        "weight_multiplier": Range(Interval(0, MAX_WEIGHT_MULTIPLIER, closed="right")),
    }

    # A started committee's learners and arrays were made from its parameters (a linear
    # learner's bias row and average, the trees' drawn setups), and its kernels read some of them
    # again at every call: a new bias or average made them read and write outside their arrays
    # (a crash, or results changing from run to run).
    _fixed_once_started = None
    _noun = "committee"

    @property
    def _started(self) -> bool:
        return "n_attributes_" in self.__dict__

    def start(self, n_learners: int, n_labels: int, n_attributes: int, seed: int | None) -> None:
        """Create the learners: ``n_learners`` of them over ``n_labels`` labels and ``n_attributes``
        input columns, with per-learner randomness drawn from ``seed``."""
        self._validate_params()
        for name, value, least in (
            ("n_learners", n_learners, 1),
            ("n_labels", n_labels, 2),
            ("n_attributes", n_attributes, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise TypeError(
                    f"{type(self).__name__}.start: {name} must be an integer, got {value!r}"
                )
            if value < least:
                raise ValueError(
                    f"{type(self).__name__}.start: {name} must be at least {least}, got {value}"
                )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, Integral)):
            raise TypeError(f"{type(self).__name__}.start: seed must be an integer, got {seed!r}")
        if seed is not None and seed < 0:
            raise ValueError(f"{type(self).__name__}.start: seed must be >= 0, got {seed}")
        self._check_start(n_labels)
        # all or nothing: a start refused in _allocate (a nominal column beyond n_attributes)
        # left n_attributes_ set, so the committee counted as started with no trees, or a
        # restarted one with the new width and the old nominal columns (read past the row)
        before = dict(self.__dict__)
        try:
            self.setup_ = self._draw_setup(seed, n_learners, n_attributes)
            self.n_learners_ = n_learners
            self.n_labels_ = n_labels
            self.n_attributes_ = n_attributes
            self._allocate(seed)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        self._compile_learn_elsewhere()

    def _check_start(self, n_labels: int) -> None:
        """Raise, before anything is set, if this committee cannot learn ``n_labels`` labels
        (e.g. a River committee of a binary-only model, for three labels). Nothing by default."""

    def _draw_setup(self, seed: int | None, n_learners: int, n_attributes: int) -> Any:
        """The per-learner randomness, drawn from ``seed`` (stored as ``setup_``): the tree
        committees' :func:`draw_learner_setup`; a committee of other learners draws its own."""
        return draw_learner_setup(
            seed,
            n_learners,
            n_attributes,
            self.n_features,
            self.grace_period,
            self.split_confidence,
            self.tie_threshold,
            self.weight_multiplier,
        )

    def _allocate(self, seed: int | None) -> None:
        """Create the learners' state (attributes ending with ``_``), from ``setup_``."""
        raise NotImplementedError(
            f"{type(self).__name__}: a committee implements _allocate (its learners' state), "
            "predict and learn"
        )

    def _compile_learn_elsewhere(self) -> Any:
        """On a cold cache, start compiling the compiled ``learn`` for this state's types in
        another process (:func:`olboost._numba_cache.compile_elsewhere`), so that what this
        process compiles before the first learn (predict, a booster's step) overlaps it; the
        first learn (:meth:`learn_compiled`), or the compiled driver, waits for it. Returns its
        :class:`~olboost._numba_cache.Elsewhere`; ``None`` for a committee that is not
        compiled."""
        kernels = self.compiled()
        if kernels is None:
            return None
        row, matrix = numba.float64[::1], numba.float64[:, ::1]
        signature = numba.int64(row, matrix, numba.typeof(kernels.state), numba.int64[::1])
        return compile_elsewhere(kernels.learn, signature)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Weak predictions for one example: ``(N, k)`` float64, each row a distribution.

        ``x`` is a validated float64 vector of length ``n_attributes``.
        """
        raise NotImplementedError

    def learn(self, x: np.ndarray, weights: np.ndarray) -> None:
        """Train learner ``i`` on label ``l`` of ``x`` with importance ``weights[i, l]`` times the
        learner's weight multiplier; zero weights are skipped. ``weights`` is ``(N, k)`` float64,
        non-negative."""
        raise NotImplementedError

    def compiled(self) -> CompiledKernels | None:
        """The compiled interface of a started committee, or ``None`` when its learners are not
        compiled (the booster then drives them from Python, example by example)."""
        return None

    def make_room(self, status: int, demand: np.ndarray) -> None:
        """Act on a non-zero status of the compiled ``learn`` (grow storage, or raise
        ``ValueError`` for bad weights), so that the same call succeeds when repeated."""
        raise NotImplementedError(f"{type(self).__name__} has no compiled learn")

    def learn_compiled(self, x: np.ndarray, weights: np.ndarray) -> None:
        """Train through the compiled ``learn`` (``x`` and ``weights`` already checked, inside
        :meth:`running`), making room as often as it asks."""
        demand = np.zeros(2, dtype=np.int64)
        try:
            kernels = self.compiled()
            join_pending(kernels.learn)
            status = self._learn_kernel(kernels)(x, weights, kernels.state, demand)
            while status != 0:
                self.make_room(status, demand)
                kernels = self.compiled()
                status = self._learn_kernel(kernels)(x, weights, kernels.state, demand)
        except BaseException:
            self.abandon_example()
            raise

    def abandon_example(self) -> None:
        """Forget where the compiled ``learn`` of an example stopped (an exception between its
        repeated calls: a failed ``make_room``, an interrupt), so that the next call, another
        example's, starts from the beginning; what the example's calls learned stays learned.
        Nothing to forget by default."""

    def _learn_kernel(self, kernels: CompiledKernels) -> Any:
        """What :meth:`learn_compiled` calls for ``kernels.learn``: the dispatcher itself, or
        (a committee whose state Numba types slowly) an entry point for its state's type."""
        return kernels.learn

    def running(self) -> contextlib.AbstractContextManager:
        """A context the compiled kernels run in (e.g. the committee's thread count)."""
        return contextlib.nullcontext()

    @property
    def handles_missing(self) -> bool:
        """Whether the learners take missing attribute values (NaN) in ``predict`` and ``learn``
        (a ``missing`` parameter set to ``"learn"``); the booster's input checks let NaN through
        only then."""
        return getattr(self, "missing", "error") == "learn"

    def _check_x(self, x: np.ndarray) -> np.ndarray:
        """``x`` as a float64 vector of ``n_attributes`` values that :meth:`predict` and
        :meth:`learn` take (a writable C-ordered copy if it is not one), or a ``ValueError``
        (nothing changes): the length, :meth:`_check_values` and the committee's own
        conditions (:meth:`row_problem`). A committee not started raises a ``RuntimeError``
        saying so."""
        self._require_started()
        x = _float64(x, "x")
        if x.shape != (self.n_attributes_,):
            raise ValueError(
                f"x must be a vector of {self.n_attributes_} attributes, got shape {x.shape}"
            )
        self._check_values(x)
        problem = self.row_problem(x)
        if problem is not None:
            raise ValueError(problem)
        if not (x.flags.c_contiguous and x.flags.writeable):
            # the compiled kernels take writable C-ordered rows: a strided or read-only view
            # would make Numba compile each of them again for its layout
            x = x.copy()
        return x

    def _check_weights(self, weights: np.ndarray) -> np.ndarray:
        """``weights`` of :meth:`learn` as float64 of shape ``(n_learners, n_labels)``, or a
        ``TypeError``/``ValueError`` naming them (nothing changes)."""
        weights = _float64(weights, "weights")
        if weights.shape != (self.n_learners_, self.n_labels_):
            raise ValueError(
                f"weights must have shape {(self.n_learners_, self.n_labels_)}, got {weights.shape}"
            )
        return weights

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError(f"{type(self).__name__} is not started: call start() first")

    def _check_values(self, x: np.ndarray) -> None:
        """Reject an infinite attribute value or one beyond :data:`MAX_ABS_FEATURE` (the linear
        learners' running scales and the trees' Gaussian statistics square them), and a missing
        one (NaN) unless the learners handle them, before anything changes."""
        j = _first_bad(x, allow_missing=True)  # the first infinite or too large value
        if j is not None:
            if np.isinf(x[j]):
                raise ValueError(f"x has an infinite value ({x[j]}) at attribute {j}")
            raise ValueError(
                f"x has a value ({x[j]}) at attribute {j} beyond +/-{MAX_ABS_FEATURE:g} "
                "(MAX_ABS_FEATURE)"
            )
        if not self.handles_missing and np.isnan(x).any():
            j = int(np.flatnonzero(np.isnan(x))[0])
            raise ValueError(
                f"x has a missing value (NaN) at attribute {j}, and "
                f"missing={getattr(self, 'missing', None)!r}"
            )

    def check_rows(self, X: np.ndarray) -> int:
        """Index of the first row of the float64 matrix ``X`` that :meth:`predict` would reject
        beyond the booster's own checks (``len(X)`` if none): a booster's array path checks
        every row with it before it learns any (the compiled loop takes checked rows only).
        These conditions follow from the parameters alone, so a committee not started yet
        checks them too (for data of ``X``'s width): an evaluation checks every split before
        its model starts."""
        return X.shape[0]

    def rejects_rows(self) -> bool:
        """Whether :meth:`check_rows` can reject a row in this configuration: when not, a
        booster's array path skips checking every row before it learns any."""
        return False

    def row_problem(self, x: np.ndarray) -> str | None:
        """Why :meth:`check_rows` rejects the float64 vector ``x`` (``None`` if it does not):
        the message of the ``ValueError`` that :meth:`predict` and :meth:`learn` raise for it."""
        return None

    def weights_problem(self, weights: np.ndarray) -> str | None:
        """What :meth:`learn` would refuse in ``weights`` (finite and non-negative, checked by
        the caller) beyond those checks, or ``None``: a committee holding others (a mix) asks
        each before any of them learns, so that none learns what another refuses."""
        return None
