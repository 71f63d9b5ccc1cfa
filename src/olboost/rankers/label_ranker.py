"""Online label ranking by dual ascent (Shalev-Shwartz & Singer, AISTATS 2007)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse

from olboost import _libm
from olboost._interrupt import held_interrupt
from olboost._numba_cache import compile_for_values
from olboost._random import STREAMS, seed_key
from olboost.base import Interval, OneOf
from olboost.feedback import bool_apart
from olboost.online.inputs import (
    Rows,
    _is_series,
    entry_position,
    frame_columns,
    shown_names,
    sparse_dict_vector,
    writable,
)
from olboost.online.learner import RankingLearner
from olboost.rankers import _kernels as K
from olboost.rankers._pdip import MAX_ITER
from olboost.rankers._scaling import SCALES, Scaling

__all__ = [
    "MAX_ENTROPY_C",
    "MAX_STEP_C",
    "LabelRanker",
    "check_entropy_bounds",
    "check_squared_bounds",
    "ranking_mistakes",
]

_UPDATES = {"I": 1, "II": 2, "III": 3}

#: Largest ``C`` under the entropy. A step multiplies a weight by at most ``e^C`` (features lie
#: in [0, 1]); the weights of the example's features, ``w = exp(theta - log Z)``, are formed in
#: double precision, where those below ``e^-745`` are 0. With ``C <= 600`` what such a weight
#: could contribute after one step is below ``e^-145`` of the normaliser, far below rounding;
#: beyond, a step could bring an underflowed weight back to a size that matters.
MAX_ENTROPY_C = 600.0

#: Largest ``C`` (and margin) under the squared norm. A step moves a weight by at most ``C``
#: times a feature: Update I's is ``C x`` whatever the loss (eq. 8); II and III stop at the
#: loss, but that grows with the margin (a margin of 1e300 on an example of 1e-90 asked for a
#: step of 1e390). Features lie within :data:`~olboost.online.inputs.MAX_ABS_FEATURE` (1e100),
#: so a step moves a weight by at most 1e150 and a score by at most 1e250 per feature, and no
#: stream can overflow them; a margin within the same bound keeps the dual objective finite.
#: (Under the squared norm Update I's ranking does not depend on ``C``: the weights are ``C``
#: times a sum of examples; and C = 1e50 leaves II and III a step the loss alone limits.)
MAX_STEP_C = 1e50


def _number(value: Any) -> float:
    """``value`` as a Python float, an integer beyond float64's range as infinity (``float()``
    raised ``OverflowError`` on ``C=10**400``). A Python float, not NumPy's: NumPy casts 1e50
    to a float32 value's type to compare, overflowing (a warning)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def check_entropy_bounds(name: str, margin: Any, top_margin: float, C: Any, top_C: float) -> None:
    """Reject a margin or budget the entropic complexity cannot use: ``top_margin`` (the largest
    margin of ``margin``, a number or a range) must be below 1 and ``top_C`` at most
    :data:`MAX_ENTROPY_C`; ``name`` names the estimator in the ``ValueError``."""
    if _number(top_margin) >= 1.0:
        raise ValueError(
            f"{name}.margin must be in (0, 1) under complexity='entropy' (scores are "
            f"averages of features in [0, 1], so no gap reaches 1), got {margin!r}"
        )
    if _number(top_C) > MAX_ENTROPY_C:
        raise ValueError(
            f"{name}.C must be at most {MAX_ENTROPY_C:g} under complexity='entropy' (a step "
            f"multiplies weights by up to e^C; weights below e^-745 underflow), got {C!r}"
        )


def check_squared_bounds(name: str, margin: Any, top_margin: float, C: Any, top_C: float) -> None:
    """Reject a margin or budget beyond :data:`MAX_STEP_C` under the squared norm
    (``top_margin``, ``top_C`` the largest values of ``margin`` and ``C``, numbers or ranges);
    ``name`` names the estimator in the ``ValueError``."""
    for what, value, top in (("C", C, top_C), ("margin", margin, top_margin)):
        if _number(top) > MAX_STEP_C:
            raise ValueError(
                f"{name}.{what} must be at most {MAX_STEP_C:g} under the squared norm (a step "
                f"moves a weight by up to C times a feature, and II and III step to the loss, "
                f"which grows with the margin: larger ones can overflow the weights), got "
                f"{value!r}"
            )


#: Rows converted to CSR at a time when learning from a dense matrix.
_BLOCK_ROWS = 4096


class LabelRanker(RankingLearner):
    """A linear online label ranker trained by dual ascent: Updates I, II and III of
    Shalev-Shwartz & Singer (2007) under the squared norm or the entropy.

    One weight vector per label, scores ``rho_y = <w_y, x>`` (Sec. 1). The learner ascends the
    dual (eq. 5) of the competitor's problem ``min sum_y F(w_y) + C sum_t l_gamma(w; x_t, Y_t)``
    (eq. 3, hinge loss of eq. 1) by changing, at trial ``t``, only the dual variables of example
    ``t``, and keeps ``w_y = grad G(theta_y)`` with ``theta_y`` the combination of examples of
    eq. 6:

    * ``update="I"`` (eq. 7-8): on a mistake, the most violated pair
      ``(r, s) = argmin_{r in Y, s not in Y} <w_r - w_s, x>`` gets ``tau = C``:
      ``theta_r += C x``, ``theta_s -= C x``;
    * ``update="II"`` (eq. 9): the same pair gets the ``tau`` in ``[0, C]`` that increases the
      dual most, on every trial whose hinge loss is positive (closed forms of Sec. 4; see
      :mod:`olboost.rankers._dual`);
    * ``update="III"`` (eq. 10-11): every dual variable of the example moves optimally, the
      ``k``-variable problem of eq. 11 being solved by the primal-dual interior point method of
      eq. 12-20 in ``O(k)`` per iteration (:mod:`olboost.rankers._pdip`). Its answer is
      within the method's tolerance of the optimum; where it gains less than Update II's step
      on the same pair (a feasible point of eq. 11: a margin tiny against ``C`` under the
      entropy), or the method breaks down in floating point, the trial takes that step (on the
      pair of eq. 7, its ties broken at random as below), so that Update III never raises the
      dual less than Update II (eq. 10 optimises over a set that holds Update II's step; Sec.
      3 states the bound against Update I's, eq. 8).

    A *mistake* (Sec. 1) is a trial where some relevant label is not strictly above every
    irrelevant one (ties are mistakes); an example with no relevant label, or with all of them,
    has no pair: it is neither a mistake nor learned from. Ties between labels in eq. 7 are
    broken uniformly at random, by draws that are a pure function of the seed and the trial.
    Ties are those of the scores as computed in floating point: under the entropy two scores
    equal in exact arithmetic (every score, when ``x`` is all ones) can differ in the last bit,
    and then make no tie.

    **Complexities.** ``"squared"``: ``F(w) = ||w||^2 / 2``, ``w = theta`` (Update I is then the
    multi-label Perceptron of Crammer & Singer, II the Passive-Aggressive update). ``"entropy"``:
    ``F(w) = sum_j w_j log(n w_j)`` on the simplex, ``w_y = softmax(theta_y)`` (Update I is then
    an EG update), ``n`` the number of features.

    **Features under the entropy** must lie in [0, 1] (the paper's setting is a binary bag of
    words, Sec. 4-5; it uses no duplicated or negated features). Then every score is a weighted
    average of the feature values, in [0, 1], so the margin is a gap between averages and must
    lie in (0, 1) (no two scores can differ by 1 or more: a margin of 1 would make every example
    a hinge-loss example forever), and Lemma 1's condition ``<x, H x> <= 1/2`` holds for every
    example (``<x, H x>`` is a variance of values in [0, 1], at most 1/4), so every update has
    the mistake bound of eq. 2. A value within ``1e-6`` of the interval (a rescaler's rounding:
    scikit-learn's ``MinMaxScaler`` gives ``1.0000000000000002``, ``1.0000001`` in float32) is
    read as the bound; others are rejected with a ``ValueError`` (rescale them, or use the
    squared norm). Under the squared norm any finite features are accepted; only the ratio
    ``margin / C`` matters to Updates II and III (scaling both scales ``w``) and Update I
    ignores the margin; Lemma 1 holds for the examples with ``||x||^2 <= 1/2``.

    **Cost.** Examples are used as sparse rows (a dense vector by its non-zero entries), so a
    trial costs ``O(nnz k)`` whatever the number of features ``d``: only the rows of ``theta``
    of the example's non-zero features are read or changed. Under the entropy the normalisers
    ``Z_y = sum_j exp(theta_{j,y})`` are kept in log space and updated from the example's
    features alone (``log Z_y += log(R_y + sum_v Q_{y,v} e^{alpha_y v})``, the masses of the
    current weights on the zero features and on each distinct non-zero value), so the zero
    features are never touched. Steps that take weight away amplify a running normaliser's
    rounding error; a bound on it is kept per label, and a normaliser whose bound passes
    ``2^-40`` is recomputed exactly in ``O(d)`` (:mod:`olboost.rankers._kernels`). As every
    step adds 4 units in the last place to the bound, that is at least once per 1,024 moves of a
    label: under the entropy a trial costs ``O(nnz k)`` plus an amortised ``O(d k / 1024)``,
    which shows at a million features or more. Update II is
    a closed form for the squared norm and for the entropy on binary (more generally
    single-valued) examples, a safeguarded Newton iteration otherwise; Update III's interior
    point method costs ``O(k m)`` per iteration, ``m`` the number of distinct non-zero values (1
    for binary ``x``), over the labels in a pair that violates the margin (the others stay put
    at the optimum of eq. 11).

    **Dicts are sparse examples**, as the paper's bags of words and River's ``BagOfWords``
    give them: a dict (or a pandas Series indexed by feature names) holds the features present,
    an absent key is 0, and a key the ranker has not seen is a new feature, added when the
    example is learned, with ``theta = 0`` (a feature that was 0 in every earlier example); an
    unseen key of value 0 is as absent and adds nothing. Under the squared norm the ranker is
    then the one that had the feature from the start, bit for bit (a feature that is 0 is never
    read or moved). Under the entropy each new feature adds ``e^0 = 1`` to every normaliser
    ``Z_y``: the simplex grows, and the weights of the other features shrink in proportion.
    Scoring a dict with unseen keys changes nothing and gives the scores of the ranker grown by
    them. A dict costs ``O(len(x) k)``, whatever the number of features (without a ``scale``:
    a scaled row is dense, ``O(d k)``). ``None`` and NaN are
    not zeros: they are refused. The first dict fixes the first features, sorted (an empty one,
    e.g. an empty text, starts a ranker of no feature); the keys each later dict adds follow,
    sorted among themselves (``feature_names_in_``). A ranker started on a DataFrame keeps its
    column order, and reads later frames by those names, an absent column as 0; a frame with a
    column the ranker has not seen is refused (give dicts), and so is a Series indexed by
    position (pandas' default ``0..n-1``) that names none of the features. Vectors and matrices
    keep the width of the first.

    Parameters
    ----------
    update
        ``"I"``, ``"II"`` or ``"III"`` (see above).
    complexity
        ``"squared"`` or ``"entropy"``.
    C
        The trade-off ``C > 0`` of eq. 2-3: the budget of each example's dual variables (Update
        I's step; the largest step of II and III). At most 600 under the entropy (a step
        multiplies weights by up to ``e^C``; see :data:`MAX_ENTROPY_C`), and at most 1e50 under
        the squared norm (:data:`MAX_STEP_C`).
    margin
        The hinge loss's ``gamma`` (eq. 1): ``(0, 1e50]`` under the squared norm
        (:data:`MAX_STEP_C`), ``(0, 1)`` under the entropy.
    scale
        How each feature is mapped before the ranker reads it, from running statistics of the
        values learned so far (:mod:`olboost.rankers._scaling`, shared with
        :class:`~olboost.weak.LinearCommittee`): ``"none"`` (the paper's setting: the values as
        given), ``"standard"`` (``(x - mean) / sd``, Welford's running mean and population
        standard deviation; 0 while ``sd`` is 0) or ``"minmax"`` (``(x - lo) / (hi - lo)``
        clipped to [0, 1]; then under the entropy any finite value is taken). The paper's bags of
        words need none; attributes on very different scales do (*emotions*, -99 to 237: rank
        loss 0.21 to 0.23 standardised, 0.39 to 0.45 raw, Updates I-III, ``C = 0.01``,
        ``margin = 1``). The statistics move by an example before it is learned (its trial reads
        it so scaled, as River's pipelines update a scaler before the model learns), never when
        scoring: the scores of ``score_then_learn`` are those of ``score_one``. The weights
        (:meth:`weight_vectors`) are over the scaled features; a scaled sparse row is dense
        (standardising moves zeros). ``"standard"`` is refused under the entropy.
    labels
        The ``k`` labels: an int ``k`` (labels ``0..k-1``) or a sequence of labels. May be left
        ``None`` when learning from arrays, whose columns then name the labels ``0..k-1``.
    seed
        Seed of the tie-breaking draws of eq. 7: the pair Updates I and II step on. Update III
        uses it only on a trial that falls back on Update II's step (see ``update`` above), so
        with an ordinary margin its results do not depend on the seed; with a margin tiny
        against ``C`` under the entropy they may. ``None`` draws a fresh seed (kept in
        ``seed_``).

    Attributes
    ----------
    theta_
        ``(d, k)``: column ``y`` is ``theta_y`` of eq. 6 (the weights ``w_y`` under the squared
        norm; see :meth:`weight_vectors`).
    log_norm_
        ``(k,)``: ``log sum_j exp(theta_{j,y})`` under the entropy (zeros otherwise).
    norm_error_
        ``(k,)``: a bound on the relative error each running normaliser owes to its steps'
        rounding at unit scale (entropy; see :mod:`olboost.rankers._kernels`): it does not
        count the rounding of ``theta`` and ``log Z`` themselves, about their unit in the last
        place per step, which matters only once they reach the hundreds (large ``C``).
    n_mistakes_
        Trials so far on which the ranking was a mistake (Sec. 1).
    n_updates_
        Trials so far on which the weights moved.
    relevant_mass_
        ``sum_t sum_{(r,s)} tau_{t,r,s}``: the linear part of the dual (eq. 5), see
        :meth:`dual_objective`.
    pdip_iterations_
        Update III: ``pdip_iterations_[i]`` is the number of trials whose interior point method
        took ``i`` iterations (the paper never needed more than 15).
    lo_, hi_, count_, mean_, m2_
        ``(d,)``, with a ``scale`` only: each feature's running minimum and maximum
        (``"minmax"``), and number of values, mean and sum of squared deviations
        (``"standard"``). A feature a dict adds later starts with the statistics of the zeros
        it had in every example learned before.

    Examples
    --------
    Five folders, each with its own words, in a stream of 600 binary bags of words over 300
    words, in CSR form; test-then-train with the three updates under the entropy (the counts of
    mistakes from the scores and from the model agree):

    >>> import numpy as np
    >>> from scipy import sparse
    >>> from olboost.rankers import LabelRanker, ranking_mistakes
    >>> rng = np.random.default_rng(0)
    >>> words = rng.random((5, 300)) < 0.03
    >>> folder = rng.integers(0, 5, size=600)
    >>> X = sparse.csr_matrix((words[folder] & (rng.random((600, 300)) < 0.3))
    ...                       | (rng.random((600, 300)) < 0.05), dtype=float)
    >>> Y = np.eye(5, dtype=bool)[folder]
    >>> for update in ["I", "II", "III"]:
    ...     model = LabelRanker(update=update, complexity="entropy", C=5.0, margin=0.1, seed=1)
    ...     scores = model.score_then_learn(X, Y)
    ...     print(update, model.n_mistakes_, int(ranking_mistakes(scores, Y).sum()))
    I 241 241
    II 151 151
    III 137 137
    >>> int(np.nonzero(model.pdip_iterations_)[0].max())  # interior point iterations, at most
    12

    One example at a time, River style (``y`` is the set of relevant labels):

    >>> x = X[0].toarray()[0]
    >>> model.learn_one(x, {int(folder[0])})
    >>> model.rank_one(x)[0] == int(folder[0])
    True

    Bags of words as dicts, whose vocabulary grows:

    >>> bags = LabelRanker(update="II", labels=["work", "family"], seed=0)
    >>> bags.learn_one({"meeting": 1.0, "noon": 1.0}, {"work"})
    >>> bags.learn_one({"dinner": 1.0, "sunday": 1.0}, {"family"})  # new words, new features
    >>> bags.feature_names_in_
    ['meeting', 'noon', 'dinner', 'sunday']
    >>> bags.rank_one({"sunday": 1.0, "lunch": 1.0})  # an unseen word weighs nothing yet
    ['family', 'work']
    """

    _param_constraints = {
        **RankingLearner._param_constraints,
        "update": OneOf("I", "II", "III"),
        "complexity": OneOf("squared", "entropy"),
        "C": Interval(0, math.inf, closed="neither"),
        "margin": Interval(0, math.inf, closed="neither"),
        "scale": OneOf("none", "minmax", "standard"),
    }

    def __init__(
        self,
        update: str = "III",
        complexity: str = "squared",
        C: float = 1.0,
        margin: float = 0.5,
        scale: str = "none",
        labels: int | Sequence[Hashable] | None = None,
        seed: int | None = None,
    ):
        self.update = update
        self.complexity = complexity
        self.C = C
        self.margin = margin
        self.scale = scale
        self.labels = labels
        self.seed = seed
        self._validate_params()

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.complexity == "entropy" and self.scale == "standard":
            raise ValueError(
                f"{type(self).__name__}.scale must be 'minmax' or 'none' under "
                "complexity='entropy' (its features must lie in [0, 1]; standardised values do "
                "not), got 'standard'"
            )
        if self.complexity != "entropy":
            check_squared_bounds(type(self).__name__, self.margin, self.margin, self.C, self.C)
            return
        check_entropy_bounds(type(self).__name__, self.margin, self.margin, self.C, self.C)

    # theta_ and log_norm_ mean weights under one complexity only (w = theta, or the softmax
    # of theta): switched, a started ranker scored the squared norm's weights as entropic ones.
    # C, the margin and the update may change: every update ascends the same dual from any state.
    # scale: the statistics learned mean one mapping of the features, and theta was learned on
    # features so mapped
    _fixed_once_started = ("complexity", "scale", *RankingLearner._fixed_once_started)
    _noun = "ranker"

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        if isinstance(state.get("feature_names_in_"), _FeatureNames):
            # a list, as before the names were grown in place: the same bytes for the same
            # ranker, whichever way its names grew
            state["feature_names_in_"] = list(state["feature_names_in_"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        # pickled before the parameter existed (0b54c45): those rankers read features as given
        self.__dict__.setdefault("scale", "none")

    def _unit_test_skips(self) -> set[str]:
        # a dict is a sparse example (an absent key 0, an unseen one a new feature), so River's
        # checks that drop and add features mid-stream apply, missing values or not
        return set()

    @property
    def _is_stochastic(self) -> bool:
        # the seed only breaks ties in eq. 7, which Update III uses only when it falls back on
        # Update II's step: on the check suite's stream it never does, so the seed changes
        # nothing there (tests/test_rankers.py: test_seed_breaks_ties_only)
        return self.update != "III"

    # ------------------------------------------------------------------ learned state

    def _init_state(self) -> None:
        k = len(self._outputs())
        d = self.n_features_in_
        self.theta_ = np.zeros((d, k))
        entropy = self.complexity == "entropy"
        # log Z = log d (uniform weights); -inf for a ranker started on an empty dict, whose
        # first features then bring Z = n (grown_log_norm)
        self.log_norm_ = np.full(k, math.log(d) if d else -math.inf) if entropy else np.zeros(k)
        self.norm_error_ = np.zeros(k)
        self.n_mistakes_ = 0
        self.n_updates_ = 0
        self.relevant_mass_ = 0.0
        self.pdip_iterations_ = np.zeros(MAX_ITER + 1, dtype=np.int64)
        self._tie_key = seed_key(self.seed_, STREAMS["tie"])
        if self.scale != "none":
            self.lo_ = np.full(d, np.inf)
            self.hi_ = np.full(d, -np.inf)
            self.count_ = np.zeros(d)
            self.mean_ = np.zeros(d)
            self.m2_ = np.zeros(d)

    def _scaling(self) -> Scaling:
        return Scaling(SCALES[self.scale], self.lo_, self.hi_, self.count_, self.mean_, self.m2_)

    def _state(self) -> K.State:
        return K.State(
            self.theta_,
            self.log_norm_,
            self.norm_error_,
            self.complexity == "entropy",
            _UPDATES[self.update],
            float(self.C),
            float(self.margin),
            self._tie_key,
            self.pdip_iterations_,
        )

    def weight_vectors(self) -> np.ndarray:
        """The weight vectors ``w_y`` as rows, ``(k, d)``: ``theta_y`` under the squared norm,
        ``softmax(theta_y)`` (computed exactly) under the entropy."""
        if self.complexity == "squared" or self.theta_.shape[0] == 0:
            return self.theta_.T.copy()  # (no weight yet: a ranker started on an empty dict)
        top = self.theta_.max(axis=0)
        w = _libm.exp(self.theta_ - top)
        return (w / w.sum(axis=0)).T

    def dual_objective(self) -> float:
        """The dual objective of eq. 5 at the current dual variables,
        ``gamma sum_t sum tau_t - sum_y G(theta_y)``, with ``G`` computed exactly over every
        feature: ``||theta_y||^2 / 2`` (squared norm) or ``log sum_j exp(theta_{j,y}) - log n``
        (entropy). By weak duality it lower-bounds the competitor's objective of eq. 3."""
        theta = self.theta_
        if self.complexity == "squared" or theta.shape[0] == 0:
            # (and with no feature yet, a ranker started on an empty dict: no weight, no
            # conjugate term)
            conj = 0.5 * float(np.sum(theta * theta))
        else:
            top = theta.max(axis=0)
            lse = top + _libm.log(_libm.exp(theta - top).sum(axis=0))
            conj = float(np.sum(lse - math.log(theta.shape[0])))
        return float(self.margin) * self.relevant_mass_ - conj

    # ------------------------------------------------------------------ online-learner hooks

    def _raw_scores(self, xv: np.ndarray | SparseRow) -> np.ndarray:
        entropy = self.complexity == "entropy"
        out = np.empty((1, self.theta_.shape[1]))
        d = self.theta_.shape[0]
        log_norm = self.log_norm_
        if isinstance(xv, SparseRow) and xv.width > d and entropy:
            # a dict's unseen keys: scored as the ranker grown by them (which, under a scale,
            # read them as 0, the statistics of their zeros, but still grow the normalisers)
            log_norm = grown_log_norm(log_norm, xv.width - d)
        if self.scale != "none":
            dense = writable(_dense(xv, d)[None, :d])
            K.score_scaled_rows(dense, self.theta_, log_norm, entropy, self._scaling(), out)
            return out[0]
        if isinstance(xv, SparseRow):
            learned = int(np.searchsorted(xv.idx, d))
            K.score_rows(
                xv.val[:learned], xv.idx[:learned], np.array([0, learned], dtype=np.int64),
                self.theta_, log_norm, entropy, out,
            )  # fmt: skip
            K.add_unlearned(xv.val[learned:], log_norm, entropy, out[0])
            return out[0]
        idx = np.flatnonzero(xv)
        K.score_rows(
            xv[idx], idx.astype(np.int64), np.array([0, idx.size], dtype=np.int64),
            self.theta_, log_norm, entropy, out,
        )  # fmt: skip
        return out[0]

    def _learn_vector(
        self, xv: np.ndarray | SparseRow, target: Any, names: list[Hashable] | None
    ) -> None:
        if not (isinstance(xv, SparseRow) and xv.width > self.n_features_in_):
            super()._learn_vector(xv, target, names)
            return
        kept = {name: self.__dict__[name] for name in _GROWN if name in self.__dict__}
        self._grow(names)
        try:
            self._learn_row(xv, target)
        except BaseException:
            # learned nothing (an interrupt while compiling, say): not grown either
            self.__dict__.update(kept)
            raise

    def _grow(self, new: list[Hashable]) -> None:
        """Add the features ``new`` (keys of a dict the ranker had not seen), each with a zero
        row of ``theta`` (see the class docstring). ``theta_``, the scaling statistics and
        ``feature_names_in_`` are views of buffers with room to spare, doubled when full
        (:func:`_grown_rows`, :class:`_FeatureNames`), so that a stream whose vocabulary grows
        at every example copies them ``O(log d)`` times, not once per example. Every
        attribute it changes (:data:`_GROWN`) is set to a new object, so that the old ones can
        be put back."""
        d = self.theta_.shape[0]
        n = len(new)
        self.theta_ = _grown_rows(self.theta_, n, 0.0)
        if self.complexity == "entropy":
            self.log_norm_ = grown_log_norm(self.log_norm_, n)
            # Z + n rounds once more (the error Z carries shrinks relative to Z + n)
            self.norm_error_ = self.norm_error_ + 4.0 * K._ULP
        if self.scale != "none":
            # the statistics of a feature that was 0 in every example learned so far
            # (each scaling moves its own statistics only)
            seen = self.scale == "minmax" and self.t_ > 0
            count = float(self.t_) if self.scale == "standard" else 0.0
            self.lo_ = _grown_rows(self.lo_, n, 0.0 if seen else np.inf)
            self.hi_ = _grown_rows(self.hi_, n, 0.0 if seen else -np.inf)
            self.count_ = _grown_rows(self.count_, n, count)
            self.mean_ = _grown_rows(self.mean_, n, 0.0)
            self.m2_ = _grown_rows(self.m2_, n, 0.0)
        self.feature_names_in_ = _FeatureNames.grown(self.feature_names_in_, new)
        self.n_features_in_ = d + n
        positions = self.__dict__.get("_cache")
        if positions is not None:
            positions.update((key, d + i) for i, key in enumerate(new))

    def _positions(self) -> dict[Hashable, int]:
        """The index of each feature name (kept as ``_cache``, which a pickle leaves out)."""
        positions = self.__dict__.get("_cache")
        if positions is None or len(positions) != self.n_features_in_:
            positions = {key: j for j, key in enumerate(self.feature_names_in_)}
            self._cache = positions
        return positions

    def _learn_row(self, xv: np.ndarray | SparseRow, target: Any) -> None:
        Y = np.ascontiguousarray(target.relevant, dtype=np.bool_)[None, :]
        if self.scale != "none":
            self._run_scaled(writable(_dense(xv, self.n_features_in_)[None, :]), Y, None)
            return
        if isinstance(xv, SparseRow):
            idx, val = xv.idx, xv.val
        else:
            idx = np.flatnonzero(xv).astype(np.int64)
            val = xv[idx]
        indptr = np.array([0, idx.size], dtype=np.int64)
        self._run(self._trial_arguments(val, idx, indptr, Y, None))

    def _trial_arguments(
        self,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        Y: np.ndarray,
        out: np.ndarray | None,
    ) -> tuple:
        """The arguments of :func:`K.learn_rows` for :meth:`_run`: trials on the rows of a
        canonical CSR matrix, their scores to ``out`` if given."""
        scores = out if out is not None else np.empty((1, Y.shape[1]))
        return (
            data, indices, indptr, Y, self.t_, self._state(), scores, out is not None,
            self.relevant_mass_,
        )  # fmt: skip

    def _run(self, arguments: tuple) -> None:
        """Trials on the rows of a canonical CSR matrix (see :func:`K.learn_rows`), given by
        :meth:`_trial_arguments`."""
        mistakes, updates, mass = K.learn_rows(*arguments)
        self.t_ += arguments[3].shape[0]
        self.n_mistakes_ += int(mistakes)
        self.n_updates_ += int(updates)
        self.relevant_mass_ = float(mass)

    def _run_scaled(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray | None) -> None:
        """Trials on the dense rows ``X`` under the ranker's scaling (see
        :func:`K.learn_scaled_rows`), their scores to ``out`` if given."""
        scores = out if out is not None else np.empty((1, Y.shape[1]))
        arguments = (
            X, Y, self.t_, self._state(), self._scaling(), scores, out is not None,
            self.relevant_mass_,
        )  # fmt: skip
        # compiled before the hold, which would keep a Ctrl-C waiting for the compiler
        compile_for_values(K.learn_scaled_rows, *arguments)
        with held_interrupt():
            mistakes, updates, mass = K.learn_scaled_rows(*arguments)
            self.t_ += X.shape[0]
            self.n_mistakes_ += int(mistakes)
            self.n_updates_ += int(updates)
            self.relevant_mass_ = float(mass)

    def _compiled_stream(
        self, rows: Rows, targets: Sequence, out: np.ndarray | None, start: int
    ) -> int:
        """Every row from ``start`` on in the compiled trial loop, CSR rows as they are (in
        canonical form), dense rows a block at a time by their non-zero entries; under a
        scaling, every row a dense block at a time."""
        Y = self._step_targets(targets)
        if self.scale != "none":
            size = rows.block_rows(_BLOCK_ROWS)
            for lo in range(start, rows.n, size):
                hi = min(lo + size, rows.n)
                block_out = out[lo:hi] if out is not None else None
                # a Ctrl-C comes between blocks, counted (see held_interrupt)
                self._run_scaled(rows.block(lo, size), Y[lo:hi], block_out)
            return rows.n
        for lo, hi, (data, indices, indptr) in _csr_blocks(rows, start):
            block_out = out[lo:hi] if out is not None else None
            # compiled before the hold, which would keep a Ctrl-C waiting for the compiler
            arguments = self._trial_arguments(data, indices, indptr, Y[lo:hi], block_out)
            compile_for_values(K.learn_rows, *arguments)
            # a Ctrl-C comes between blocks, counted (see held_interrupt)
            with held_interrupt():
                self._run(arguments)
        return rows.n

    def _scores_one(self, x: Any) -> np.ndarray:
        if self._started:
            return super()._scores_one(x)
        xv, _ = self._check_x(x)
        return np.full(len(self._outputs()), self._fresh_score(xv))

    def _fresh_score(self, xv: np.ndarray) -> float:
        """Every label's score before any learning: 0 under the squared norm, the mean of
        ``x`` under the entropy (uniform weights ``1/n``), as the started model scores it."""
        if self.complexity == "squared" or xv.shape[0] == 0 or self.scale != "none":
            return 0.0  # (no statistics yet: a scaling maps every feature to 0)
        out = np.zeros((1, 1))
        idx = np.flatnonzero(xv)
        K.score_rows(
            xv[idx], idx.astype(np.int64), np.array([0, idx.size], dtype=np.int64),
            np.zeros((xv.shape[0], 1)), np.array([math.log(xv.shape[0])]), True, out,
        )  # fmt: skip
        return float(out[0, 0])

    def _scores_many(self, X: Any) -> np.ndarray:
        rows = self._check_X(X)
        self._check_rows(rows)
        out = np.zeros((rows.n, len(self._outputs())))
        if not self._started and self.complexity == "entropy":
            for i in range(rows.n):
                out[i] = self._fresh_score(rows.row(i))
        if self._started:
            theta, log_norm = self.theta_, self.log_norm_
            entropy = self.complexity == "entropy"
            if self.scale != "none":
                size = rows.block_rows(_BLOCK_ROWS)
                for lo in range(0, rows.n, size):
                    block = rows.block(lo, size)
                    K.score_scaled_rows(
                        block, theta, log_norm, entropy, self._scaling(), out[lo : lo + size]
                    )
                return out
            for lo, hi, (data, indices, indptr) in _csr_blocks(rows, 0):
                K.score_rows(data, indices, indptr, theta, log_norm, entropy, out[lo:hi])
        return out

    # ------------------------------------------------------------------ input checks

    def _check_x(self, x: Any) -> tuple[np.ndarray | SparseRow, list[Hashable] | None]:
        known = self.__dict__.get("feature_names_in_") if self._started else None
        if known is not None and (isinstance(x, Mapping) or _is_series(x)):
            # a sparse example: an absent key is 0, an unseen one a new feature (the class
            # docstring); names are the unseen keys, which learning adds
            idx, val, names = sparse_dict_vector(
                x, type(self).__name__, known, self._positions(), self._unit_values
            )
            return SparseRow(idx, val, len(known) + len(names)), names
        if not self._started and isinstance(x, Mapping) and not x:
            # a first dict of no key: an example of zeros (River's BagOfWords of an empty
            # text), scored as zeros before the start, and starting a ranker of no feature
            return np.zeros(0), []
        xv, names = super()._check_x(x)
        return self._unit_values(xv, names if names is not None else known), names

    def _unit_values(self, values: np.ndarray, keys: list[Hashable] | None) -> np.ndarray:
        """An example's ``values`` as the ranker reads them: under the entropy, in [0, 1] within
        :data:`UNIT_SLACK` (taken to it), else refused naming the key (``keys``) or feature."""
        # per example: the common case in two reductions, the slack's checks only beyond it
        if (
            self.complexity != "entropy"
            or self.scale != "none"  # a scaling takes any value into [0, 1] (min-max)
            or (values.min(initial=0.0) >= 0.0 and values.max(initial=0.0) <= 1.0)
        ):
            return values
        bad = np.flatnonzero(outside_unit(values))
        if bad.size:
            j = int(bad[0])
            where = f"key {keys[j]!r}" if keys is not None else f"feature {j}"
            raise ValueError(self._range_problem(float(values[j]), where, "x"))
        return into_unit(values)

    def _check_X(self, X: Any) -> Rows:
        rows = self._named_rows(X)
        if rows is None:
            rows = super()._check_X(X)
        # into [0, 1] before _canonical, which drops the zeros so made
        if self.complexity == "entropy" and self.scale == "none":
            values = into_unit(rows.X[0] if rows.sparse else rows.X)
            X = (values, *rows.X[1:]) if rows.sparse else values
            rows = Rows(X, rows.n, rows.d, rows.sparse)
        return _canonical(rows)

    def _named_rows(self, X: Any) -> Rows | None:
        """A DataFrame whose columns are some of the features of a ranker started on names, in
        any order, as the rows of the ranker's features (an absent column is 0); ``None`` for
        anything else (read by the base class). A column the ranker has not seen is refused."""
        known = self.__dict__.get("feature_names_in_") if self._started else None
        columns = frame_columns(X)
        if known is None or columns is None or columns == known:
            return None
        name = type(self).__name__
        # a bool column is not the feature 1 or 0 it equals, as a frame's columns tell them
        features = {bool_apart(key) for key in known}
        unseen = [c for c in columns if bool_apart(c) not in features]
        if unseen:
            raise ValueError(
                f"{name}: X has columns the ranker has not seen ({shown_names(unseen)}): a "
                "DataFrame is read by the ranker's features; give dicts (learn_one), whose "
                "unseen keys are new features"
            )
        if len({bool_apart(c) for c in columns}) != len(columns):
            return None  # a name given twice: refused by the base class, naming it
        rows = Rows.of(X, name, False)
        positions = self._positions()
        at = np.array([positions[c] for c in columns], dtype=np.int64)
        d = len(known)
        if rows.sparse:
            data, indices, indptr = rows.X
            M = sparse.csr_matrix((data, at[indices], indptr), shape=(rows.n, d))
            M.sort_indices()
            return Rows((M.data, M.indices, M.indptr), rows.n, d, True)
        dense = np.zeros((rows.n, d))
        dense[:, at] = rows.X
        return Rows(dense, rows.n, d, False)

    def _check_rows(self, rows: Rows) -> None:
        # a condition of the parameters alone: an evaluation checks every split with it before
        # the ranker starts (the array path, before it learns any row of a call)
        if self.complexity != "entropy" or self.scale != "none":
            return
        values = rows.X[0] if rows.sparse else rows.X
        bad = np.flatnonzero(outside_unit(values).ravel())
        if bad.size:
            p = int(bad[0])
            csr = (rows.X[2], rows.X[1]) if rows.sparse else ()  # (indptr, indices)
            i, j = entry_position(p, rows.d, *csr)
            value = float(values.ravel()[p])
            raise ValueError(self._range_problem(value, f"row {i}, feature {j}", "X"))

    def _range_problem(self, value: float, where: str, subject: str) -> str:
        return (
            f"{type(self).__name__}: {subject} has the value {exact(value)} at {where}; under "
            "complexity='entropy' features must lie in [0, 1] (the paper's binary bag of words: "
            "weights live in the simplex and the margin is a gap between averages of features); "
            "rescale them or use complexity='squared'"
        )

    # ------------------------------------------------------------------ check suite

    def _unit_test_features(self, X: np.ndarray) -> np.ndarray:
        """The check suite's features made valid for this model: squashed into [0, 1] under
        the entropy."""
        return 1.0 / (1.0 + _libm.exp(-X)) if self.complexity == "entropy" else X

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"update": "I", "seed": 3}
        yield {"update": "II", "complexity": "entropy", "C": 2.0, "margin": 0.2, "seed": 4}
        yield {"update": "III", "complexity": "entropy", "C": 3.0, "margin": 0.1, "seed": 5}
        yield {"update": "III", "C": 0.5, "margin": 1.0, "labels": ["a", "b", "c"]}
        yield {"update": "II", "C": 0.5, "margin": 1.0, "scale": "standard", "seed": 6}
        yield {"update": "III", "complexity": "entropy", "C": 2.0, "margin": 0.1, "scale": "minmax"}


class SparseRow(NamedTuple):
    """A dict as a started :class:`LabelRanker` reads it (:meth:`LabelRanker._check_x`): the
    positions (increasing) and values of its non-zero features, and the number of features of
    the ranker grown by its unseen keys, which take the positions from ``n_features_in_`` on."""

    idx: np.ndarray
    val: np.ndarray
    width: int


def _grown_rows(rows: np.ndarray, n: int, fill: float) -> np.ndarray:
    """``rows`` with ``n`` more rows of ``fill`` (along the first axis), as a view of a buffer
    with room to spare: the buffer ``rows`` views when it has the room (its rows beyond
    ``rows`` are no other array's), else a new one of twice the rows. The rows of ``rows``
    are left as they are (a view of them may be put back)."""
    d = rows.shape[0]
    buffer = rows.base
    if not (
        isinstance(buffer, np.ndarray)
        and buffer.shape[1:] == rows.shape[1:]
        and buffer.shape[0] >= d + n
        and buffer.flags.c_contiguous
        and buffer.ctypes.data == rows.ctypes.data
    ):
        buffer = np.empty((max(2 * d, d + n), *rows.shape[1:]))
        buffer[:d] = rows
    buffer[d : d + n] = fill
    return buffer[: d + n]


class _FeatureNames(Sequence):
    """A ranker's ``feature_names_in_``: the first ``n`` names of a list that the names of later
    features extend, so that a vocabulary growing at every example does not copy the names
    every time (a new object per growth all the same, which a failed learning call puts back;
    an older one keeps its length). Compares equal to a list of the same names; pickles, and
    copies, as a list."""

    __slots__ = ("_names", "_n")

    def __init__(self, names: list[Hashable], n: int) -> None:
        self._names = names
        self._n = n

    @classmethod
    def grown(cls, names: Sequence[Hashable], new: list[Hashable]) -> _FeatureNames:
        """``names`` and then ``new``: appended to the list ``names`` views when nothing
        follows its end there, else to a copy."""
        if isinstance(names, cls) and len(names._names) == names._n:
            store = names._names
        else:
            store = list(names)
        store.extend(new)
        return cls(store, len(store))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self._names[: self._n][i]
        j = i + self._n if -self._n <= i < 0 else i
        if not 0 <= j < self._n:
            raise IndexError("feature index out of range")
        return self._names[j]

    def __iter__(self) -> Iterator[Hashable]:
        # its own n names, even while a growth extends the list (a loop that learns)
        return itertools.islice(self._names, self._n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _FeatureNames | list):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


#: What :meth:`LabelRanker._grow` changes.
_GROWN = (
    "theta_", "log_norm_", "norm_error_", "feature_names_in_", "n_features_in_",
    "lo_", "hi_", "count_", "mean_", "m2_",
)  # fmt: skip


def _dense(xv: np.ndarray | SparseRow, width: int) -> np.ndarray:
    """A row as a dense vector of its first ``width`` features (a dense one as it is)."""
    if not isinstance(xv, SparseRow):
        return xv
    out = np.zeros(width)
    keep = xv.idx < width
    out[xv.idx[keep]] = xv.val[keep]
    return out


def grown_log_norm(log_norm: np.ndarray, n: int) -> np.ndarray:
    """The entropy's ``log Z_y`` once ``n`` features with ``theta = 0`` (each adding ``e^0 = 1``
    to ``Z_y``) join: ``log(Z_y + n)``."""
    return np.logaddexp(log_norm, math.log(n))


def ranking_mistakes(scores: Any, Y: Any) -> np.ndarray:
    """Which rows of ``scores`` ``(n, k)`` are prediction mistakes for the relevant-label
    masks ``Y`` ``(n, k)`` (Sec. 1 of Shalev-Shwartz & Singer 2007): some relevant label is not
    strictly above every irrelevant one, ties included. Rows whose relevant set is empty or full
    are never mistakes. Applied to the scores of :meth:`LabelRanker.score_then_learn`, it gives
    the trials :attr:`LabelRanker.n_mistakes_` counts."""
    scores = np.asarray(scores, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.bool_)
    if scores.ndim != 2 or scores.shape != Y.shape:
        raise ValueError(f"scores {scores.shape} and Y {Y.shape} must be (n, k) alike")
    lowest = np.where(Y, scores, np.inf).min(axis=1, initial=np.inf)
    highest = np.where(Y, -np.inf, scores).max(axis=1, initial=-np.inf)
    proper = Y.any(axis=1) & ~Y.all(axis=1)
    return proper & (lowest <= highest)


#: How far outside [0, 1] a feature may lie under the entropy, read as the bound it passed:
#: rescalers round (scikit-learn's MinMaxScaler, ``X * scale_ + min_``, gives 1.0000000000000002
#: at some columns' maxima of the very data it was fitted on, and 1.0000001 on float32 data,
#: whose unit in the last place is 1.2e-7), and 1e-6 is above a few of float32's rounding and
#: far below any value a user means.
UNIT_SLACK = 1e-6


def outside_unit(values: np.ndarray) -> np.ndarray:
    """Where ``values`` lie outside [0, 1] by more than :data:`UNIT_SLACK` (NaN: nowhere)."""
    return (values < -UNIT_SLACK) | (values > 1.0 + UNIT_SLACK)


def exact(value: float) -> str:
    """``value`` as a message shows it: short (``7``, ``0.5``), but never rounded to another
    number (``1.0000000000000002``, which ``{:g}`` printed as a ``1`` it was refused for)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def into_unit(values: np.ndarray) -> np.ndarray:
    """``values`` within :data:`UNIT_SLACK` of [0, 1] taken to it: a clipped copy where one is
    outside, else ``values`` itself (also where one is outside by more than the slack, which
    the range checks then name)."""
    if not ((values < 0.0) | (values > 1.0)).any() or outside_unit(values).any():
        return values
    return np.clip(values, 0.0, 1.0)


def _canonical(rows: Rows) -> Rows:
    """``rows`` with a sparse matrix in canonical CSR form (sorted indices, no duplicates, no
    stored zeros, int64 indices): as it is when it already is, else a canonical copy
    (duplicates summed, as scipy does). Dense rows are returned as they are."""
    if not rows.sparse:
        return rows
    data, indices, indptr = rows.X
    indices = indices.astype(np.int64, copy=False)
    indptr = indptr.astype(np.int64, copy=False)
    if not K.is_canonical(data, indices, indptr):
        M = sparse.csr_matrix((data, indices, indptr), shape=(rows.n, rows.d), copy=True)
        M.sum_duplicates()
        M.eliminate_zeros()
        data, indices, indptr = M.data, M.indices.astype(np.int64), M.indptr.astype(np.int64)
    return Rows((data, indices, indptr), rows.n, rows.d, True)


def _csr_blocks(rows: Rows, start: int) -> Iterator[tuple[int, int, tuple]]:
    """``(lo, hi, (data, indices, indptr))``: rows ``lo..hi-1`` from ``start`` on as CSR with
    int64 indices; a sparse matrix (canonical, from :func:`_canonical`) in one piece, dense rows
    a block at a time by their non-zero entries (which is canonical CSR)."""
    if rows.sparse:
        data, indices, indptr = rows.X
        if start:
            lo = indptr[start]
            data, indices, indptr = data[lo:], indices[lo:], indptr[start:] - lo
        yield start, rows.n, (data, indices, indptr)
        return
    for lo in range(start, rows.n, _BLOCK_ROWS):
        block = rows.block(lo, _BLOCK_ROWS)
        r, c = np.nonzero(block)
        indptr = np.zeros(block.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=block.shape[0]), out=indptr[1:])
        yield lo, lo + block.shape[0], (block[r, c], c.astype(np.int64), indptr)
