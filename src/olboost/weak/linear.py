"""A committee of N linear label rankers (Shalev-Shwartz & Singer 2007), compiled with Numba.

The rankers are :class:`olboost.rankers.LabelRanker`'s (their trials are the compiled ones of
:mod:`olboost.rankers._kernels`); the kernels that drive them as a committee live in
:mod:`olboost.weak._linear_kernels` and this module only orchestrates them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from olboost.base import InstanceOf, Interval, OneOf, Range
from olboost.rankers import _kernels as RK
from olboost.rankers._pdip import MAX_ITER
from olboost.rankers.label_ranker import (
    _UPDATES,
    MAX_ENTROPY_C,
    MAX_STEP_C,
    check_entropy_bounds,
    check_squared_bounds,
    exact,
    outside_unit,
)
from olboost.weak import _linear_kernels as K
from olboost.weak.base import (
    Committee,
    CompiledKernels,
    draw_feature_subsets,
    log_uniform,
)

__all__ = ["LinearCommittee", "LinearSetup"]

_SCALES = {"none": K.NO_SCALING, "minmax": K.MINMAX, "standard": K.STANDARD}


@dataclass(frozen=True)
class LinearSetup:
    """What a :class:`LinearCommittee` draws once per learner at start.

    Attributes
    ----------
    features
        ``(N, m)`` int64, sorted column indices each learner sees (``m = min(n_features, d)``).
    weight_multiplier, C, margin
        ``(N,)`` float64 per-learner multiplier of the importance weights, ``C`` and margin.
    tie_key
        ``(N,)`` uint64 keys of each ranker's tie-breaking draws (eq. 7).
    """

    features: np.ndarray
    weight_multiplier: np.ndarray
    C: np.ndarray
    margin: np.ndarray
    tie_key: np.ndarray


class LinearCommittee(Committee):
    """N linear label rankers as weak learners: :class:`olboost.rankers.LabelRanker`'s Updates
    I, II and III under the squared norm or the entropy (Shalev-Shwartz & Singer 2007), each on
    its own random subset of attributes, compiled with Numba.

    At :meth:`~olboost.weak.base.Committee.start`, learner ``i`` draws from the committee's seed
    its ``n_features`` attributes and its weight multiplier (uniform in ``weight_multiplier``),
    as the trees do, and its own ``C`` and margin, log-uniform in the ranges ``C`` and
    ``margin``; ``update`` and ``complexity`` are the committee's. Learner ``i`` keeps one weight
    vector per label over its attributes (plus a constant feature 1 with ``bias``), and scores
    label ``y`` by ``rho_y = <w_y, x>``.

    **Predictions.** The contract asks each learner for a distribution over the ``k`` labels
    (``h^i_t`` of the boosters' papers). Learner ``i`` predicts the softmax of its scores in
    units of its margin,

        ``h[y] = exp(rho_y / (temperature * margin_i)) / sum_r exp(rho_r / (temperature *
        margin_i))``,

    or, with ``temperature=0``, the uniform distribution over its top-scoring labels (the
    indicator of the top label when it is unique). The margin is the ranker's own unit of
    score: its hinge loss (eq. 1) asks a relevant label to lead an irrelevant one by it, so a
    label leading another by one margin gets ``e^(1 / temperature)`` times its probability,
    whatever the learner's ``C``, margin, features or complexity (under the squared norm, Updates
    II and III scale the weights with ``margin / C`` and the attributes' scale; the ratio to the
    margin does not move; under Update I, which ignores the margin, it scales with ``C``). The
    softmax keeps the learner's whole ranking in its prediction, which the ranking boosters sum
    into their scores (a top-label indicator leaves all other labels tied), and it is the
    uniform distribution before any learning (all scores equal), as the trees'.

    With ``average=True`` (the default) the scores are those of the learner's *averaged* weights,
    the mean of ``theta`` after each of its ``T`` trials so far (the averaged Perceptron of Freund &
    Schapire 1999 and Collins 2002; under the entropy the weights are the softmax of the averaged
    ``theta``): the last iterate of these aggressive updates swings with the last few examples, and
    on noisy data its rankings are much worse than the average's (one Update III ranker on every
    attribute, learning the relevant labels with weight 1, rank loss on the test split of *yeast*
    learned test-then-train after its train split: 0.26 from the last iterate, 0.18 averaged;
    *emotions*: 0.20 and 0.16). The average forgets nothing, so it follows a drifting stream slowly:
    on *scene*, whose splits are sorted by label set (86% of consecutive test examples share it),
    the last iterate tracks the current label set and is far better. The learners still *learn* with
    the last iterate (the updates of the paper); averaging only changes what they predict. It is
    kept sparsely (``theta_sum_``, the sum of ``t`` times the change of trial ``t``, so that the
    average is ``((T + 1) theta - theta_sum) / T``), at ``O(nnz k)`` per update and ``O(m k)`` per
    prediction.

    **Learning.** The contract trains learner ``i`` with a row ``weights[i]`` of non-negative
    label weights (each booster's cost-derived importance of each label on this example; a tree
    learns label ``l`` as a weighted example of weight ``weights[i, l]``). A ranker makes one
    trial of its update (Sec. 3 of the paper) on ``(x, Y)`` with

    * the relevant set ``Y = {l : weights[i, l] > 0}``, every other label irrelevant: learning
      label ``l`` raises it above the labels not learned, as a tree's leaf raises ``l``'s share
      against all the others (a label of zero weight is one the booster does not teach on this
      example; under top-k feedback that includes labels not shown);
    * the budget ``C_t = C_i * multiplier_i * sum_l weights[i, l]`` in place of ``C`` (the step
      of Update I, the largest step of II and III): the example's total importance for the
      learner (the weight a tree's leaf gains from it; the single label's weight under a
      multiclass booster) scales the budget of the example's dual variables, as an importance
      weight scales a hinge loss (eq. 3); capped at
      :data:`olboost.rankers.label_ranker.MAX_ENTROPY_C` under the entropy and at
      :data:`~olboost.rankers.label_ranker.MAX_STEP_C` under the squared norm (Update I's step
      is the whole budget; II's and III's grow with the margin).

    A row of zeros is skipped; a row whose every label has positive weight has no pair: its
    weights do not move (as :class:`~olboost.rankers.LabelRanker` on a full set), but it is a
    trial (the averaged weights count it) and its features move the scaling statistics, so the
    predictions may change. The different
    weights of the relevant labels enter only through their sum: Updates I and II move the most
    violated pair, and Update III distributes the budget optimally over the pairs. The contract
    needs nothing more than label weights.

    **Inputs.** The committee keeps running statistics of every attribute over the examples it
    has learned (updated before each is learned, never when predicting) and the learners read
    the attributes scaled by them. ``scale="standard"`` (the default): ``(x - mean) / sd``
    (Welford's running mean and population standard deviation; 0 while the deviation is 0), so
    that attributes on very different scales (e.g. *emotions*, from -99 to 237) weigh alike in
    the norms of Updates II and III and are centred, which these updates need to learn a
    ranking from same-signed features (the ranker above on *emotions*: 0.16 standardised, 0.20
    min-max scaled, 0.41 on the raw values). ``scale="minmax"``:
    ``(x - lo) / (hi - lo)`` clipped to ``[0, 1]``, ``lo`` and ``hi`` the smallest and largest
    values learned (0 before two different values): a binary or sparse ``[0, 1]`` attribute
    keeps its zeros, and the entropy's features in ``[0, 1]`` (the entropy takes ``"minmax"`` or
    ``"none"``). ``scale="none"``: the values as given (under the entropy they must then lie in
    ``[0, 1]``, or a ``ValueError`` is raised before anything changes). A missing value (NaN,
    with ``missing="learn"``) is an absent feature: it adds nothing to any score and its weights
    do not move, as a zero, and it leaves the statistics alone.

    **Cost.** Per example and learner, ``O(m + nnz k)`` to predict (``O(m k)`` with
    ``average``) and the same plus the update's to learn (Update III: its interior point method,
    ``O(k)`` per iteration for binary rows, ``O(k m)`` otherwise); the learners never grow.

    Parameters
    ----------
    n_features
        Attributes each learner sees (all of them if ``None`` or larger than their number).
    C
        Range of the per-learner ``C`` (log-uniform): the budget of a unit of importance weight.
        Under the entropy at most :data:`~olboost.rankers.label_ranker.MAX_ENTROPY_C`; under
        the squared norm at most :data:`~olboost.rankers.label_ranker.MAX_STEP_C`.
    margin
        Range of the per-learner margin ``gamma`` of the hinge loss (log-uniform); under the
        entropy within ``(0, 1)``, under the squared norm at most
        :data:`~olboost.rankers.label_ranker.MAX_STEP_C`.
    weight_multiplier
        Range of the per-learner factor applied to every importance weight (uniform).
    update
        ``"I"``, ``"II"`` or ``"III"`` (see :class:`~olboost.rankers.LabelRanker`).
    complexity
        ``"squared"`` or ``"entropy"``. The entropy also needs ``scale`` ``"minmax"`` or
        ``"none"`` and a ``margin`` range below 1: the defaults (``"standard"``, up to 1.0) are
        the squared norm's, and are refused with it.
    temperature
        Predictions: softmax of the scores over ``temperature`` margins; ``0``: the top labels.
    bias
        Add a constant feature 1 to every learner (a label's base rate can then be learned).
    average
        Predict with each learner's averaged weights (see above) rather than its last ones.
    scale
        ``"standard"``, ``"minmax"`` or ``"none"`` (see above); the entropy takes the last two.
    missing
        ``"learn"``: a missing attribute value (NaN) is read as absent (see above).
        ``"error"``: it is rejected with a ``ValueError`` before anything changes.

    Attributes
    ----------
    setup_
        The :class:`LinearSetup` drawn at start.
    theta_
        ``(N, m', k)``: learner ``i``'s ``theta`` (eq. 6; its weights under the squared norm),
        ``m' = m + bias``.
    theta_sum_
        ``(N, m', k)`` with ``average``: the sum over trials ``t`` of ``t`` times the change of
        ``theta`` at ``t``.
    lo_, hi_, count_, mean_, m2_
        ``(d,)``: each attribute's running minimum and maximum (``"minmax"``), and number of
        values, mean and sum of squared deviations (``"standard"``).
    n_trials_, n_mistakes_, n_updates_
        ``(N,)``: each learner's trials, ranking mistakes (Sec. 1) and trials that moved it.
    pdip_iterations_
        ``(N, MAX_ITER + 1)``: Update III's interior point runs by number of iterations.

    References
    ----------
    Shalev-Shwartz, S. & Singer, Y. (2007). A unified algorithmic approach for efficient online
    label ranking. AISTATS, 452-459.

    Freund, Y. & Schapire, R. E. (1999). Large margin classification using the perceptron
    algorithm. Machine Learning 37(3), 277-296.

    Collins, M. (2002). Discriminative training methods for hidden Markov models: theory and
    experiments with perceptron algorithms. EMNLP, 1-8.

    Examples
    --------
    Three rankers, each seeing two of four attributes, learn that label ``argmax(x[:3])`` is the
    relevant one. Learners 0 and 2 see two of the three attributes that decide it and put label 0
    first on ``x = (0.9, 0.1, 0.2, 0.5)``; learner 1 sees one of them and hesitates:

    >>> import numpy as np
    >>> from olboost.weak import LinearCommittee
    >>> committee = LinearCommittee(n_features=2)
    >>> committee.start(n_learners=3, n_labels=3, n_attributes=4, seed=2)
    >>> committee.setup_.features
    array([[0, 2],
           [1, 3],
           [1, 2]])
    >>> x = np.array([0.9, 0.1, 0.2, 0.5])
    >>> committee.predict(x)
    array([[0.33333333, 0.33333333, 0.33333333],
           [0.33333333, 0.33333333, 0.33333333],
           [0.33333333, 0.33333333, 0.33333333]])
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(300):
    ...     z = rng.uniform(size=4)
    ...     committee.learn(z, np.eye(3)[[np.argmax(z[:3])] * 3])  # weight 1 on that label
    >>> committee.predict(x).round(2)
    array([[0.91, 0.09, 0.01],
           [0.44, 0.05, 0.51],
           [0.77, 0.05, 0.18]])
    >>> committee.n_mistakes_
    array([102, 150, 115])
    """

    _param_constraints = {
        "n_features": Interval(1, None, integer=True, allow_none=True),
        "C": Range(Interval(0, math.inf, closed="neither")),
        "margin": Range(Interval(0, math.inf, closed="neither")),
        # any multiplier: the budget is capped (MAX_STEP_C under the squared norm,
        # MAX_ENTROPY_C under the entropy), so no weight a booster passes overflows a learner
        "weight_multiplier": Range(Interval(0, math.inf, closed="neither")),
        "update": OneOf("I", "II", "III"),
        "complexity": OneOf("squared", "entropy"),
        "temperature": Interval(0, math.inf, closed="left"),
        "bias": InstanceOf(bool),
        "average": InstanceOf(bool),
        "scale": OneOf("standard", "minmax", "none"),
        "missing": OneOf("learn", "error"),
    }

    def __init__(
        self,
        n_features: int | None = 20,
        C: tuple[float, float] = (0.1, 1.0),
        margin: tuple[float, float] = (0.1, 1.0),
        weight_multiplier: tuple[float, float] = (1.0, 1.0),
        update: str = "III",
        complexity: str = "squared",
        temperature: float = 1.0,
        bias: bool = True,
        average: bool = True,
        scale: str = "standard",
        missing: str = "learn",
    ):
        self.n_features = n_features
        self.C = C
        self.margin = margin
        self.weight_multiplier = weight_multiplier
        self.update = update
        self.complexity = complexity
        self.temperature = temperature
        self.bias = bias
        self.average = average
        self.scale = scale
        self.missing = missing
        self._validate_params()

    def _validate_params(self) -> None:
        super()._validate_params()
        name = type(self).__name__
        if self.complexity != "entropy":
            check_squared_bounds(name, self.margin, self.margin[1], self.C, self.C[1])
            return
        if self.scale == "standard":
            raise ValueError(
                f"{name}.scale must be 'minmax' or 'none' under complexity='entropy' (its "
                "features must lie in [0, 1]; standardised values do not), got 'standard'"
            )
        check_entropy_bounds(name, self.margin, self.margin[1], self.C, self.C[1])

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
        yield {
            "n_features": 3,
            "update": "III",
            "complexity": "entropy",
            "margin": (0.05, 0.2),
            "scale": "minmax",
        }
        yield {"n_features": None, "update": "I", "temperature": 0.0, "bias": False}
        yield {
            "update": "II",
            "average": False,
            "C": (0.5, 2.0),
            "scale": "none",
            "weight_multiplier": (1.0, 3.0),
        }

    # -------------------------------------------------------------------------- setup

    def _draw_setup(self, seed: int | None, n_learners: int, n_attributes: int) -> LinearSetup:
        rng = np.random.default_rng(seed)
        n = n_learners
        C = log_uniform(rng, self.C, n)
        margin = log_uniform(rng, self.margin, n)
        multiplier = rng.uniform(*self.weight_multiplier, size=n)
        features = draw_feature_subsets(rng, n, n_attributes, self.n_features)
        tie_key = rng.integers(0, 2**64, size=n, dtype=np.uint64)
        return LinearSetup(features, multiplier, C, margin, tie_key)

    def _allocate(self, seed: int | None) -> None:
        n, k, d = self.n_learners_, self.n_labels_, self.n_attributes_
        width = self.setup_.features.shape[1] + int(self.bias)
        self.theta_ = np.zeros((n, width, k))
        self.theta_sum_ = np.zeros((n, width, k) if self.average else (n, 0, 0))
        entropy = self.complexity == "entropy"
        # the entropy's weights start uniform over the learner's features: log Z = log m'
        self.log_norm_ = np.full((n, k), math.log(width) if entropy and width else 0.0)
        self.norm_error_ = np.zeros((n, k))
        self.pdip_iterations_ = np.zeros((n, MAX_ITER + 1), dtype=np.int64)
        self.n_trials_ = np.zeros(n, dtype=np.int64)
        self.n_mistakes_ = np.zeros(n, dtype=np.int64)
        self.n_updates_ = np.zeros(n, dtype=np.int64)
        self.lo_ = np.full(d, np.inf)
        self.hi_ = np.full(d, -np.inf)
        self.count_ = np.zeros(d)
        self.mean_ = np.zeros(d)
        self.m2_ = np.zeros(d)

    # -------------------------------------------------------------------------- contract

    def row_problem(self, x: np.ndarray) -> str | None:
        """An attribute outside [0, 1] under the entropy with ``scale="none"``."""
        if not self._needs_unit_interval():
            return None
        bad = np.flatnonzero(outside_unit(x))  # within the slack: read as the bound it passed
        if not bad.size:
            return None
        j = int(bad[0])
        return (
            f"{type(self).__name__}: x has the value {exact(float(x[j]))} at attribute {j}; under "
            "complexity='entropy' with scale='none' attributes must lie in [0, 1] "
            "(rescale them, or use scale='minmax')"
        )

    def _needs_unit_interval(self) -> bool:
        return self.complexity == "entropy" and self.scale == "none"

    def rejects_rows(self) -> bool:
        """Whether :meth:`check_rows` can reject a row: under the entropy with ``scale="none"``."""
        return self._needs_unit_interval()

    def check_rows(self, X: np.ndarray) -> int:
        """Index of the first row of ``X`` with an attribute outside ``[0, 1]`` under the entropy
        with ``scale="none"`` (``len(X)`` if none, or in any other configuration)."""
        if not self._needs_unit_interval():
            return X.shape[0]
        bad = np.flatnonzero(outside_unit(X).any(axis=1))
        return int(bad[0]) if bad.size else X.shape[0]

    def compiled(self) -> CompiledKernels:
        """The rankers' compiled ``predict`` and ``learn`` (:func:`K.predict`, :func:`K.learn`)
        and their state."""
        self._require_started()
        return CompiledKernels(K.predict, K.learn, self._state())

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Each ranker's distribution over the labels for ``x`` (see the class docstring):
        ``(N, k)`` float64."""
        x = self._check_x(x)
        out = np.empty((self.n_learners_, self.n_labels_))
        K.predict(x, self._state(), out)
        return out

    def learn(self, x: np.ndarray, weights: np.ndarray) -> None:
        """Ranker ``i`` makes one trial on ``x`` with the labels of positive ``weights[i, l]``
        relevant and budget ``C_i * multiplier_i * sum(weights[i])`` (see the class docstring).

        Raises ``ValueError``, leaving the committee untouched, on a bad ``x`` or ``weights``."""
        x = self._check_x(x)
        weights = self._check_weights(weights)
        self.learn_compiled(x, np.ascontiguousarray(weights))

    def make_room(self, status: int, demand: np.ndarray) -> None:
        """The rankers never grow: a status is always bad weights (``ValueError``; nothing was
        learned)."""
        if status == K.LEARN_BAD_WEIGHTS:
            raise ValueError("weights must be finite and non-negative")
        raise RuntimeError(f"unknown status {status} of the linear committee's learn")

    def _step_cap(self) -> float:
        """The largest budget of a step under the squared norm: :data:`MAX_STEP_C` (weights
        times multipliers could pass any bound on ``C``; a step is at most the budget times a
        feature, Update I's always)."""
        return MAX_STEP_C

    def _state(self) -> K.State:
        setup = self.setup_
        entropy = self.complexity == "entropy"
        return K.State(
            learners=K.Learners(
                setup.features, setup.weight_multiplier, setup.C, setup.margin, setup.tie_key
            ),
            options=K.Options(
                entropy,
                _UPDATES[self.update],
                float(self.temperature),
                self.bias,
                _SCALES[self.scale],
                MAX_ENTROPY_C if entropy else self._step_cap(),
                self.average,
            ),
            model=K.Model(
                self.theta_,
                self.theta_sum_,
                self.log_norm_,
                self.norm_error_,
                self.pdip_iterations_,
                self.n_trials_,
                self.n_mistakes_,
                self.n_updates_,
                self.lo_,
                self.hi_,
                self.count_,
                self.mean_,
                self.m2_,
            ),
            work=self._work(),
        )

    def _work(self) -> K.Work:
        """The kernels' buffers, made once per process (their contents never outlive a call;
        they are not pickled)."""
        work = self.__dict__.get("_work_buffers")
        if work is None:
            k, width = self.n_labels_, self.theta_.shape[1]
            work = self._work_buffers = K.Work(
                np.empty(self.n_attributes_),
                np.empty(width, dtype=np.int64),
                np.empty(width),
                np.empty(k, dtype=np.bool_),
                np.empty((width, k)),
                np.empty((width, k)),
                np.empty(k),
                RK.scratch(k, width),
            )
        return work

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_work_buffers", None)
        return state
