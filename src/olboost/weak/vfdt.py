"""A committee of N compiled Hoeffding trees (VFDT) stored in flat arrays.

The trees are VFDT (Domingos & Hulten 2000) with the semantics of River's
``HoeffdingTreeClassifier`` and MOA's ``HoeffdingTree``; the kernels live in
:mod:`olboost.weak._vfdt_kernels` and this module only orchestrates them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from numbers import Integral
from typing import Any

import numba
import numpy as np

from olboost.base import InstanceOf, Interval, OneOf
from olboost.weak import _vfdt_kernels as K
from olboost.weak._vfdt_arrays import TreeArrays
from olboost.weak.base import Committee, CompiledKernels

__all__ = ["VFDTCommittee"]

_MODES = {"mc": K.MC, "nb": K.NB, "nba": K.NBA}


_OVERFLOWING_WEIGHTS = (
    "weights must be finite and non-negative, and stay finite once multiplied by their "
    "learner's weight multiplier (weight_multiplier)"
)


def _check_nominal_attributes(value: Mapping) -> str | None:
    for col, n_cat in value.items():
        for item in (col, n_cat):
            if isinstance(item, bool) or not isinstance(item, Integral):
                return f"must map integer column indices to integer category counts, got {value!r}"
        if col < 0 or n_cat < 1:
            return f"must map column indices >= 0 to category counts >= 1, got {value!r}"
        if n_cat > MAX_CATEGORIES:
            # counts are sized into int64 arrays at start: 2**63 was an OverflowError there
            return f"category counts must be at most {MAX_CATEGORIES}, got {n_cat} (column {col})"
    return None


#: Most categories of a nominal attribute (each leaf keeps a weight per category and class).
MAX_CATEGORIES = 2**31 - 1


#: Largest ``leaf_prior``: times any number of labels (and plus any leaf's weight, which the
#: committee keeps finite) it stays finite.
MAX_LEAF_PRIOR = 1e100


class VFDTCommittee(TreeArrays, Committee):
    """N Hoeffding trees (VFDT, Domingos & Hulten 2000), compiled with Numba, one per learner.

    Each learner is a single-label classifier over the ``k`` labels that sees only its own random
    subset of attributes (:func:`olboost.weak.base.draw_learner_setup` draws the subset and the
    learner's grace period, split confidence, tie threshold and weight multiplier). The trees
    follow River's ``HoeffdingTreeClassifier`` (a port of MOA's ``HoeffdingTree``):

    * a leaf keeps class weights and, per attribute, a Gaussian per class (weighted Welford mean
      and variance, min and max) for numeric attributes, or weights per (category, class) for
      nominal ones. The attribute statistics are kept for the classes that reached the leaf
      only, and learning and split evaluation run over those classes: their cost follows the
      labels a leaf has seen, not ``k``. The leaf's own per-class statistics (weight, observed
      weight, observer block, whether listed) are entries, one per class the leaf met (41
      bytes each, in rows that double as they fill), so memory grows with the (leaf, class)
      pairs seen, not the leaves times ``k``. A prediction writes each tree's ``k``
      probabilities: the prior's share for every class, then the leaf's classes;
    * once the weight seen at a leaf since its last attempt reaches the grace period, and the leaf
      has seen two classes or more, the leaf tries to split. Numeric candidates are ``x <= t`` at
      ``n_split_points`` thresholds evenly spaced strictly inside the observed range, the class
      weights on each side being estimated from the Gaussians (River's ``GaussianSplitter``);
      nominal candidates are the multiway split and each binary ``x == v`` split (River's
      ``NominalSplitterClassif``), or the multiway split only with ``nominal_splits="multiway"``.
      Merit is information gain, ``-inf`` unless two branches hold
      more than ``min_branch_fraction`` of the weight; the null split (pre-pruning) is a candidate
      and, under that rule, has merit ``-inf``;
    * the best candidate is applied when it beats the second best by more than the Hoeffding bound
      ``sqrt(R^2 ln(1/delta) / (2 n))``, ``R = log2(max(c, 2))`` with ``c`` the number of classes
      the leaf lists (River's ``len(leaf.stats)``: those it learned and those a split gave it,
      even at zero weight) and ``n`` its weight, or when the bound is below the tie threshold (an
      attempt stops early once no candidate left could pass, with the same outcome). If the
      null split wins, or the majority class holds more than ``max_share_to_split`` of the leaf's
      weight, the leaf restarts its attribute observers (River and MOA deactivate the leaf, then
      their memory manager reactivates it with fresh observers while the tree is under its size
      limit). New leaves start with the class weights their branch was estimated to receive and
      empty observers;
    * a leaf predicts as River's ``leaf_prediction`` option says. ``"mc"`` (majority class): its
      class weights smoothed by ``leaf_prior``, ``(w[c] + leaf_prior) / (W + k * leaf_prior)``.
      ``"nb"`` (naive Bayes, River's ``do_naive_bayes_prediction``), once the leaf's weight ``W``
      reaches ``nb_threshold`` (before, as ``"mc"``): each class the leaf lists votes the log of
      its share of ``W`` plus the log-likelihood of each attribute under its observer (Gaussian
      log-density; share of the class's weight in the category), an attribute being skipped
      where River skips it (a numeric one while the class has at most one unit of weight or zero
      variance, a category not seen with the class); the votes are normalised by log-sum-exp.
      As in River, a class that a split listed in the leaf with zero weight votes ``0.0``, and
      classes the leaf does not list get probability 0. ``"nba"`` (adaptive naive Bayes): a
      leaf also keeps the weight of the training examples, counted before it learns each of them,
      whose label its majority class (or, while it lists no class, any prediction) and its naive
      Bayes prediction would have matched, and predicts with naive Bayes unless the majority
      class has been right strictly more (ties go to naive Bayes, as in River and MOA). New leaves
      start from zero correctness weights; restarting a leaf's observers keeps them (River
      breaks exact ties between classes by its dict order, the committee by the lowest index;
      sums are taken in class order, so probabilities may differ from River's by a few ulps).
      A naive Bayes posterior ``q`` is smoothed like the class weights,
      ``(W * q[c] + leaf_prior) / (W + k * leaf_prior)``, i.e. mixed with the uniform
      distribution as if ``k * leaf_prior`` examples were spread over the labels; with
      ``leaf_prior=0`` it is ``q``, as River returns it. Whatever the mode, a leaf without
      votes (no weight yet) predicts the uniform distribution.

    ``semantics="weka_port"`` follows instead the Python port of Weka's ``HoeffdingTree`` that the
    online boosting papers' code used (vitords/HoeffdingTree, as in
    YoungHJung/OnlineBoostingWithVFDT), where it differs from River:

    * Laplace counts: a leaf's weight for a class starts at 1 the first time the leaf learns the
      class, and a nominal observer's weight for a (class, category) pair starts at 1 the first
      time it sees the pair (``update_distribution``, ``ValueDistribution.add``); the grace
      period, the pre-split entropy and the branch weights of a multiway split count them;
    * a leaf tries to split once the weight seen since its last attempt *exceeds* the grace
      period (River: reaches it), and ``max_share_to_split`` does not apply;
    * a leaf whose null split wins is deactivated for good (``InactiveHNode``): it keeps
      learning its class weights but never tries to split again;
    * a leaf predicts the weights of the classes it lists and 1 for the others, normalised
      (``HNode.get_distribution``); only ``leaf_prediction="mc"`` exists there, and
      ``leaf_prior`` is not used.

    Numeric observers, the split candidates (use ``nominal_splits="multiway"`` for the port's
    multiway-only nominal splits) and the Hoeffding bound are as above. The port's other quirks
    are not reproduced: its attributes are tried in dictionary order, a leaf of a multiway split
    starts from the class weights of the *i*-th category observed rather than of category *i*
    when some category was not observed, and an example whose category has no branch is
    predicted from the split node's class weights at split time (here: the branch with the most
    weight, as River).

    All learners live in flat arrays: nodes per tree, a pool of leaf slots (recycled when a leaf
    splits) and a pool of per-(leaf, class) observer blocks, allocated only for the classes a leaf
    actually sees, so memory grows with the number of leaves and of classes per leaf. Storage
    grows (nodes doubling, pools by half) before any ``learn`` call that could exceed it. The
    node and entry arrays have one row per tree, each as wide as the largest tree needs: they
    take the number of trees times the largest tree's size, not the sum of the trees' sizes,
    and trees of randomly drawn settings differ widely (a tree with a low tie threshold stays
    small beside one with a high threshold); a pickle holds them whole. Trees
    learn in parallel (Numba threads) with results that do not depend on the number of threads.

    A split attempt computes the outcome of River's (the merits exactly as the kernels add
    them) but skips what cannot change it. At a leaf with 32 classes or more
    (``_vfdt_attempt._NARROW_MIN_CLASSES``), each numeric feature's best merit is first bounded
    within about 6e-4 bits without ``erf`` nor a logarithm per class
    (:mod:`olboost.weak._vfdt_bounds`), and features are evaluated exactly, highest bound
    first, only while one of them could still change the Hoeffding test or, when the test will
    pass, the best candidate: most attempts that do not split evaluate nothing exactly. With
    fewer classes each numeric feature gets a cheaper upper bound (chi-square ceilings,
    :func:`olboost.weak._vfdt_split._chi_square_ceilings`) and the features are evaluated
    exactly, highest ceiling first, until the test cannot pass whatever is left. Either way,
    the thresholds whose information gain is provably below the second best merit so far are
    skipped (a chi-square bound on the gain; see
    :func:`olboost.weak._vfdt_split._best_numeric`). The kernels add a leaf's weights and
    entropies over its classes in class order where River adds them in the order the classes
    reached the leaf: the sums can differ in the last bit, which decides a grace period met
    to the last bit or two candidates tied to the last bit differently from River. Two exact
    ties are also broken otherwise than River breaks them, which only exact ties (examples of
    weight exactly 1, say) reach: two attributes of equal best merit split on the one of
    larger index (River: the one whose first value reached the leaf last, the same one as long
    as no value is missing), and, for an example whose value is missing or whose category has no
    branch, children of a multiway split of equal weight go to the lowest category (River: the
    branch made first, which differs when a category's branch was added after the split).

    Parameters
    ----------
    n_features
        Attributes each learner sees (all of them if ``None`` or larger than their number).
    grace_period
        Range of the per-learner grace period: the weight a leaf must see between split attempts.
    split_confidence
        Range (log-uniform) of the per-learner ``delta`` of the Hoeffding bound.
    tie_threshold
        Range (log-uniform) of the per-learner tie threshold ``tau``.
    weight_multiplier
        Range of the per-learner factor applied to every importance weight.
    nominal_attributes
        ``{column index: number of categories}`` of the nominal attributes; a nominal value arrives
        as a float code in ``0 .. m-1``. ``None``: every attribute is numeric.
    n_split_points
        Thresholds tried per numeric attribute at each split attempt.
    min_branch_fraction
        A split needs two branches each with more than this fraction of the weight.
    max_share_to_split
        A leaf whose majority class holds more than this share of its weight stops growing.
    leaf_prior
        Additive prior of the leaf class distributions (all modes, see above; ``0`` is River).
    leaf_prediction
        ``"mc"`` (majority class), ``"nb"`` (naive Bayes) or ``"nba"`` (adaptive naive Bayes), as
        River's ``HoeffdingTreeClassifier``.
    nb_threshold
        Weight a leaf must have seen before it predicts with naive Bayes (``"nb"`` only, as in
        River).
    max_depth
        Depth at which a leaf stops growing (the root is at depth 0), as River's
        ``HoeffdingTreeClassifier(max_depth=...)``: the first example such a leaf learns
        deactivates it; it frees its attribute observers and from then on learns its class
        weights only and predicts with them (majority class, naive Bayes needing the
        observers). ``None``: no limit. Bounds each tree's size (at most
        ``max_branches ** max_depth`` leaves), so that a long stream, or one whose concept
        keeps moving, cannot grow the trees without end. Without it the trees grow as long
        as the stream runs, even a stationary one: with the default ranges (tie thresholds up
        to 0.9, weight multipliers of 3 to 10, the authors' settings) a leaf splits on a tie
        once it has seen a little weight, so leaves, and memory, grow in proportion to the
        examples learned. A model that learns for days needs a limit.
    capacity
        Initial node slots per tree (storage grows automatically when needed).
    nominal_splits
        Split candidates of a nominal attribute. ``"both"``: the multiway split and one binary
        ``x == v`` split per observed category, the best of them competing with the other
        attributes (River's ``HoeffdingTreeClassifier``). ``"multiway"``: the multiway split only,
        as MOA's ``HoeffdingTree`` and Weka's ``HoeffdingTree`` do by default
        (``binarySplits=false``, ``NominalAttributeClassObserver``); the experiments of the
        online boosting papers used a Weka port. The two rarely differ: a multiway split refines
        every binary split of its attribute, so its information gain is never lower (up to
        rounding), and a binary split replaces it only at a strictly higher merit, as in River;
        a binary split wins where the multiway one is invalid (fewer than two categories above
        ``min_branch_fraction`` of the weight) and one of its own is not. River's
        ``binary_split=True`` (binary candidates only) has no counterpart here.
    semantics
        ``"river"`` (River's ``HoeffdingTreeClassifier``) or ``"weka_port"`` (the Weka port used by
        the online boosting papers' code; see above).
    missing
        ``"learn"``: an attribute value may be missing (NaN; ``None`` or an absent key in a dict
        given to a booster), as River's and MOA's trees allow. The attribute's observers skip the
        example (each numeric observer keeps the weight it saw), naive Bayes leaves the attribute
        out, and at a split on that attribute the example goes to the child with the most weight
        below it (River's ``most_common_path``); an example that took such a detour is learned by
        the leaf it reaches without a split attempt, as in River. ``"error"``: a missing value is
        rejected with a ``ValueError``, before anything changes.
    n_threads
        Numba threads the trees learn on (capped by ``NUMBA_NUM_THREADS``); results do not depend
        on it. The default, 1, is the safe choice: on a machine whose cores are busy with other
        work, OpenMP threads that spin while waiting can make learning many times slower; and
        with one thread the trees learn in a serial kernel, with no parallel region to compile
        or enter. On an idle machine, one thread per core roughly halves the learning time on 2
        cores. More than one thread runs Numba's threading layer, with its limits: under GNU
        OpenMP (Numba's choice where TBB is absent) a child that ``fork`` made of a process that
        used olboost is killed when it learns on more than one thread (start such workers with
        ``multiprocessing.get_context("spawn")``, or keep them to one thread), and Numba's
        ``workqueue`` layer aborts when models learn on several threads each from several
        Python threads at once.

    References
    ----------
    Domingos, P. & Hulten, G. (2000). Mining high-speed data streams. KDD, 71-80.

    Bifet, A., Holmes, G., Kirkby, R. & Pfahringer, B. (2010). MOA: Massive Online Analysis.
    JMLR 11, 1601-1604 (``HoeffdingTree``, ``GaussianNumericAttributeClassObserver``).

    Montiel, J. et al. (2021). River: machine learning for streaming data in Python. JMLR 22(110)
    (``HoeffdingTreeClassifier``).

    Examples
    --------
    Three trees learn, from labels with 10% noise, that the label is 1 when attribute 0 exceeds
    0.5 (each tree draws its own split confidence and tie threshold):

    >>> import numpy as np
    >>> from olboost.weak import VFDTCommittee
    >>> committee = VFDTCommittee(n_features=2, grace_period=(10.0, 10.0),
    ...                           weight_multiplier=(1.0, 1.0))
    >>> committee.start(3, 2, 2, seed=0)
    >>> committee.predict(np.array([0.9, 0.5]))
    array([[0.5, 0.5],
           [0.5, 0.5],
           [0.5, 0.5]])
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(1000):
    ...     x = rng.uniform(size=2)
    ...     label = int(x[0] > 0.5) if rng.uniform() < 0.9 else int(rng.integers(2))
    ...     weights = np.zeros((3, 2))
    ...     weights[:, label] = 1.0
    ...     committee.learn(x, weights)
    >>> committee.predict(np.array([0.9, 0.5])).round(2)
    array([[0.11, 0.89],
           [0.47, 0.53],
           [0.07, 0.93]])
    >>> committee.leaf_counts()
    array([23, 30,  7])
    """

    # the threads run the same kernel's trees: a started committee may change them (see
    # olboost.base.Estimator._live_once_started)
    _live_once_started = ("n_threads",)

    _param_constraints = {
        **Committee._param_constraints,
        "nominal_attributes": InstanceOf(
            Mapping, allow_none=True, predicate=_check_nominal_attributes
        ),
        "n_split_points": Interval(1, None, integer=True),
        "min_branch_fraction": Interval(0, 1, closed="left"),
        "max_share_to_split": Interval(0, 1, closed="right"),
        # (w + prior) / (W + k prior): a prior near the float range made k prior infinite and
        # every leaf predict a row of zeros, not a distribution; 1e100 is uniform to the last bit
        "leaf_prior": Interval(0, MAX_LEAF_PRIOR),
        "leaf_prediction": OneOf("mc", "nb", "nba"),
        "nominal_splits": OneOf("both", "multiway"),
        "semantics": OneOf("river", "weka_port"),
        "missing": OneOf("learn", "error"),
        "nb_threshold": Interval(0, None),  # inf: naive Bayes never predicts
        # below the kernels' "no limit" (an int64): deeper than any tree can grow
        "max_depth": Interval(0, K.NO_DEPTH_LIMIT - 1, integer=True, allow_none=True),
        "capacity": Interval(1, None, integer=True),
        "n_threads": Interval(1, None, integer=True),
    }

    def __init__(
        self,
        n_features: int | None = 20,
        grace_period: tuple[float, float] = (5.0, 20.0),
        split_confidence: tuple[float, float] = (0.01, 0.9),
        tie_threshold: tuple[float, float] = (0.01, 0.9),
        weight_multiplier: tuple[float, float] = (3.0, 10.0),
        nominal_attributes: Mapping[int, int] | None = None,
        n_split_points: int = 10,
        min_branch_fraction: float = 0.01,
        max_share_to_split: float = 0.99,
        leaf_prior: float = 1.0,
        capacity: int = 32,
        leaf_prediction: str = "mc",
        nb_threshold: float = 0.0,
        n_threads: int = 1,
        nominal_splits: str = "both",
        semantics: str = "river",
        missing: str = "learn",
        max_depth: int | None = None,
    ):
        self.n_features = n_features
        self.grace_period = grace_period
        self.split_confidence = split_confidence
        self.tie_threshold = tie_threshold
        self.weight_multiplier = weight_multiplier
        self.nominal_attributes = nominal_attributes
        self.n_split_points = n_split_points
        self.min_branch_fraction = min_branch_fraction
        self.max_share_to_split = max_share_to_split
        self.leaf_prior = leaf_prior
        self.capacity = capacity
        self.leaf_prediction = leaf_prediction
        self.nb_threshold = nb_threshold
        self.n_threads = n_threads
        self.nominal_splits = nominal_splits
        self.semantics = semantics
        self.missing = missing
        self.max_depth = max_depth
        self._validate_params()

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.semantics == "weka_port" and self.leaf_prediction != "mc":
            raise ValueError(
                f"{type(self).__name__}.semantics='weka_port' predicts with the majority class "
                f"only (the port has no naive Bayes leaves), got leaf_prediction="
                f"{self.leaf_prediction!r}"
            )

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
        yield {"n_features": 3, "grace_period": (1.0, 3.0), "capacity": 1}
        yield {"grace_period": (1.0, 3.0), "leaf_prediction": "nba", "leaf_prior": 0.0}
        yield {"leaf_prediction": "nb", "nb_threshold": 2.0}
        yield {"grace_period": (1.0, 3.0), "semantics": "weka_port"}
        yield {"grace_period": (1.0, 3.0), "leaf_prediction": "nba", "max_depth": 1}
        # No nominal attributes: the shared checks feed real-valued streams.

    # -------------------------------------------------------------------------- contract

    def _nominal_arrays(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """The nominal columns and their numbers of categories: the started trees', or, before
        the start, those of ``nominal_attributes`` within ``d`` attributes (the start refuses
        the others)."""
        if self._started:
            return self.nominal_columns_, self.nominal_cardinality_
        nominal = {c: n for c, n in (self.nominal_attributes or {}).items() if c < d}
        columns = sorted(nominal)
        return (
            np.asarray(columns, dtype=np.int64),
            np.asarray([nominal[c] for c in columns], dtype=np.int64),
        )

    def row_problem(self, x: np.ndarray) -> str | None:
        """A nominal attribute's value that is not one of its codes (a missing one aside, when
        the trees take them)."""
        columns, cardinality = self._nominal_arrays(x.shape[0])
        if not columns.size or K.nominal_codes_valid(x, columns, cardinality, self.handles_missing):
            return None
        for column, n in zip(columns.tolist(), cardinality.tolist(), strict=True):
            v = float(x[column])
            if v != v and self.handles_missing:
                continue
            if not (0.0 <= v < n and v == math.floor(v)):
                return (
                    "nominal attributes must hold integer codes in [0, number of "
                    f"categories): attribute {column} has {n} categories, got {v!r}"
                )
        raise AssertionError("unreachable: nominal_codes_valid found a bad code")

    def rejects_rows(self) -> bool:
        """Whether :meth:`check_rows` can reject a row: when there are nominal attributes."""
        if self._started:
            return bool(self.nominal_columns_.size)
        return bool(self.nominal_attributes)

    def check_rows(self, X: np.ndarray) -> int:
        """Index of the first row of ``X`` (float64, ``(n, n_attributes)``) whose nominal codes
        :meth:`_check_x` would reject, ``n`` if none."""
        columns, cardinality = self._nominal_arrays(X.shape[1])
        if not columns.size:
            return X.shape[0]
        return int(K.first_bad_row(X, columns, cardinality, self.handles_missing))

    def _callee_signatures(self) -> list[tuple[Any, tuple]]:
        """``(kernel, argument types)`` of the trees' learn's callees that
        :meth:`_compile_learn_elsewhere` compiles here first, for this committee's state (started):
        ``_kept_bounds_of_merits`` only with kept sums, whose branch for trees without them is
        compiled too (Numba prunes it only when the argument is None)."""
        f8, i8 = numba.float64, numba.int64
        state = self._state()
        learners, nodes, leaves = (
            numba.typeof(state.learners),
            numba.typeof(state.nodes),
            numba.typeof(state.leaves),
        )
        numeric = (f8[::1], i8[::1], f8[:, :, ::1], i8, f8, i8, f8, f8[:, ::1], i8[::1])
        ceilings = (i8, i8, *numeric[:3], i8[::1], *numeric[4:], f8[:, ::1], f8[:, ::1])
        signatures = [
            (K._best_numeric, (*numeric, f8[:, ::1], f8)),
            (K._score_predictors, (i8, i8, f8[::1], i8, f8, learners, leaves, f8[::1])),
            (K._new_leaf, (i8, i8, f8[::1], f8[::1], i8[::1], i8, nodes, leaves)),
            (K._chi_square_ceilings, ceilings),
            (K._bounds_of_merits, (*numeric[:7], f8[::1], i8[::1], f8[:, ::1], i8, f8[:, ::1])),
        ]
        if self.kept_ is not None:
            kept = (i8[:, ::1], f8[:, :, :, ::1], f8[:, :, :, :, ::1])
            leaf = (*numeric[:3], *numeric[4:7], f8[::1], i8[::1], f8[:, ::1], f8[:, ::1])
            signatures.append((K._kept_bounds_of_merits, (i8, i8, i8, *leaf, *kept)))
        return signatures

    def _compile_learn_elsewhere(self) -> Any:
        """:meth:`Committee._compile_learn_elsewhere`, then, when the other process was started,
        five of the kernels its learn calls (``_best_numeric``, ``_score_predictors``,
        ``_new_leaf``, ``_chi_square_ceilings``, ``_bounds_of_merits`` and, with kept sums,
        ``_kept_bounds_of_merits``) compiled here first: the other process reaches them late
        enough to find them in the cache, which moves about three seconds of its compile, the
        longer of the two, to this process and leaves the two about even
        (``benchmarks/cold_start.py``, CPU seconds of each process; the same machine code either
        way)."""
        elsewhere = super()._compile_learn_elsewhere()
        if elsewhere is None or not elsewhere.started:
            return elsewhere
        try:
            for kernel, signature in self._callee_signatures():
                kernel.compile(signature)
        except BaseException:
            elsewhere.cancel()
            raise
        return elsewhere

    def compiled(self) -> CompiledKernels:
        """The trees' compiled ``predict`` and ``learn`` (:func:`K.predict`; :func:`K.learn`, or
        :func:`K.learn_serial` when ``n_threads`` is 1) and their state; valid until storage
        grows (after a ``learn`` status other than 0)."""
        self._require_started()
        # the serial kernel computes the same bits without compiling Numba's parallel lowering
        learn = K.learn if self.n_threads > 1 else K.learn_serial
        return CompiledKernels(K.predict, learn, self._state())

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Each tree's smoothed leaf distribution for ``x``: ``(N, k)`` float64."""
        x = self._check_x(x)
        out = np.empty((self.n_learners_, self.n_labels_))
        K.predict(x, self._state(), out)
        return out

    def learn(self, x: np.ndarray, weights: np.ndarray) -> None:
        """Tree ``i`` learns ``(x, l)`` with weight ``weights[i, l]`` times its multiplier, for
        each label ``l`` in increasing order whose weight is positive.

        Raises ``ValueError``, leaving the committee untouched, on a bad ``x`` or ``weights``."""
        x = self._check_x(x)
        weights = self._check_weights(weights)
        with self.running():
            self.learn_compiled(x, weights)

    def _leaf_mode(self) -> int:
        if self.semantics == "weka_port":
            return K.MC_WEKA
        return _MODES[self.leaf_prediction]

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        # pickled before trees had a depth limit
        self.__dict__.setdefault("max_depth", None)
        if "leaf_last_" in state and "leaf_leads_" not in state:
            # pickled before leaves kept their leads: a hint, so start without one
            self.leaf_leads_ = np.full((len(state["leaf_last_"]), 2), -1, dtype=np.int64)
        if "leaf_last_" in state and "leaf_bound_" not in state:
            # pickled before leaves kept a bound of their weight: a cache, so start unknown
            self.leaf_bound_ = np.full(len(state["leaf_last_"]), np.inf)
        if "leaf_last_" in state and "kept_" not in state:
            # pickled before the trees kept their bounds' sums: a cache, so start without
            self._allocate_kept_sums()
        if "leaf_class_" in state:
            self._entries_from_dense_rows()
        if "counts_" in state and "progress_" not in state:
            # pickled before a learn call could stop between labels: none had
            self.progress_ = np.zeros(len(state["counts_"]), dtype=np.int64)

    def _state(self) -> K.State:
        setup = self.setup_
        return K.State(
            learners=K.Learners(
                setup.features,
                self.n_categories_,
                self.nominal_offset_,
                setup.weight_multiplier,
                setup.grace_period,
                setup.split_confidence,
                setup.tie_threshold,
            ),
            options=K.Options(
                self.n_split_points,
                float(self.min_branch_fraction),
                float(self.max_share_to_split),
                self._leaf_mode(),
                self.nominal_splits == "both",
                self.semantics == "weka_port",
                float(self.leaf_prior),
                float(self.nb_threshold),
                K.NO_DEPTH_LIMIT if self.max_depth is None else int(self.max_depth),
            ),
            nodes=K.Nodes(
                self.node_kind_,
                self.node_feature_,
                self.node_value_,
                self.node_child_,
                self.node_slot_,
                self.n_nodes_,
            ),
            leaves=K.Leaves(
                self.leaf_last_,
                self.leaf_start_,
                self.leaf_room_,
                self.entry_label_,
                self.entry_class_,
                self.entry_obs_,
                self.entry_blocks_,
                self.block_gauss_,
                self.block_nominal_,
                self.free_slots_,
                self.n_free_slots_,
                self.free_blocks_,
                self.n_free_blocks_,
                self.entry_listed_,
                self.leaf_correct_,
                self.entry_present_,
                self.leaf_n_present_,
                self.leaf_incomplete_,
                self.leaf_leads_,
                self.leaf_bound_,
                self.entry_top_,
                self.entry_widest_,
                self.kept_,
                self.kept_log_,
                self.kept_acc_,
            ),
            pools=K.Pools(
                self.spare_slots_,
                self.n_spare_slots_,
                self.spare_blocks_,
                self.n_spare_blocks_,
                self.counts_,
                self.progress_,
                self.max_branches_,
            ),
            work=self.work_,
        )

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Run the trees on ``n_threads`` Numba threads inside the block."""
        if self.n_threads == 1:
            # the serial kernels run no parallel loop (compiled, see compiled()); asking
            # Numba for its thread count was 6 of the 55 us of a call of learn
            yield
            return
        # set_num_threads applies to this thread only; restore it so other code is unaffected
        previous = numba.get_num_threads()
        n_threads = min(self.n_threads, numba.config.NUMBA_NUM_THREADS)
        if n_threads != previous:
            numba.set_num_threads(n_threads)
        try:
            yield
        finally:
            if n_threads != previous:
                numba.set_num_threads(previous)

    def weights_problem(self, weights: np.ndarray) -> str | None:
        """A weight that its learner's multiplier makes infinite (the kernels refuse it too)."""
        with np.errstate(over="ignore"):
            scaled = weights * self.setup_.weight_multiplier[:, None]
        if np.all(np.isfinite(scaled)):
            return None
        return _OVERFLOWING_WEIGHTS

    def make_room(self, status: int, demand: np.ndarray) -> None:
        """Grow what the trees' ``learn`` (:meth:`compiled`) asked for with ``status`` and
        ``demand``; a ``ValueError`` on bad weights (then nothing was learned)."""
        if status == K.LEARN_BAD_WEIGHTS:
            raise ValueError(_OVERFLOWING_WEIGHTS)
        # a failure here (a MemoryError) abandons the example: Committee.learn_compiled, the
        # one loop that makes room, calls abandon_example
        if status == K.LEARN_GROW_NODES:
            self._grow_nodes(int(demand[0]))
        elif status == K.LEARN_GROW_ENTRIES:
            self._compact_entries(int(demand[0]))
        else:
            kind = "slots" if status == K.LEARN_GROW_SLOTS else "blocks"
            self._grow_for(kind, int(demand[1]))

    def abandon_example(self) -> None:
        # and what the trees were lent for it, as the end of a call gives back: the next call's
        # lending counts on a tree holding no more than one example's share between calls (the
        # blocks of a leaf reset part way through overran the stacks after a few abandons)
        if "progress_" not in self.__dict__:
            return  # not started: nothing lent, and the error raised stays the one raised
        K.take_back(
            self.free_slots_, self.n_free_slots_, self.spare_slots_, self.n_spare_slots_,
            self.free_blocks_, self.n_free_blocks_, self.spare_blocks_, self.n_spare_blocks_,
            self.counts_, self.progress_, self.max_branches_,
        )  # fmt: skip

    # -------------------------------------------------------------------------- inspection

    def leaf_counts(self) -> np.ndarray:
        """Number of leaves of each tree, ``(N,)`` int64."""
        live = np.arange(self.node_kind_.shape[1])[None, :] < self.n_nodes_[:, None]
        return ((self.node_kind_ == K.LEAF) & live).sum(axis=1)
