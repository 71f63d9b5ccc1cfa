"""OnlineMBBM: optimal online multiclass boosting (Jung, Goetz & Tewari, NeurIPS 2017)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from olboost._random import STREAMS, counter_uniform, seed_key, stream_rng
from olboost.base import Interval, OneOf
from olboost.boosters import _mbbm_kernels as MK
from olboost.boosters.base import BoosterKernels, MulticlassBooster
from olboost.potentials import mbbm_weight_bound, multiclass_costs, normalize_multiclass_costs
from olboost.potentials._multiclass_kernels import binomial_table
from olboost.weak.base import Committee

__all__ = ["OnlineMBBM"]

#: Smallest weight ``weight_bound="authors"`` teaches a learner (as the authors' code did).
_AUTHORS_WEIGHT_FLOOR = 1e-10

#: Kernel arguments (binomial table, code layout and memo of exact potentials) shared by the models
#: with the same ``(learners, k, gamma)``, e.g. the reorderings of one experiment: a pure cache,
#: holding the most recently used few.
_SHARED_KERNEL_ARGS: OrderedDict[tuple[int, int, float], tuple] = OrderedDict()
_SHARED_KERNEL_ARGS_SIZE = 4


class OnlineMBBM(MulticlassBooster):
    """OnlineMBBM, online multiclass boost-by-majority under the 0-1 loss.

    Jung, Goetz & Tewari (2017), "Online Multiclass Boosting", Algorithm 1. Each weak learner
    votes for one class, by default (``vote="argmax"``) ``l^i = argmax`` of its committee row
    (lowest class on ties), with weight 1: ``s^i = s^{i-1} + e_{l^i}``, and the booster predicts
    ``argmax s^N`` (Algorithm 1 leaves ties open; the lowest class wins them, as in
    ``predict_one``). After the true class ``y`` is revealed, learner ``i`` is taught ``(x, y)``
    with importance weight ``w^i(t) / w^{i*}`` (times the committee's multiplier), where
    ``w^i(t) = sum_l [phi^y_{N-i}(s^{i-1} + e_l) - phi^y_{N-i}(s^{i-1} + e_y)]`` (line 11) is built
    from the cost row of eq. 4, and ``phi`` is the 0-1 loss potential of eq. 16: the probability
    that ``y`` does not win the vote after ``N - i`` more draws from the baseline ``u_gamma^y``.

    Potentials are computed **exactly**, equal to :func:`olboost.potentials.multiclass_costs`: one
    compiled call per example (:mod:`olboost.boosters._mbbm_kernels`) with a memo of the potentials
    keyed by ``n`` and the sorted clipped differences ``s[r] - s[l]``, shared by the models of the
    same ``learners``, ``k`` and ``gamma`` in one process. The memo is a cache, not learned state:
    it is left out of pickles and looked up again on demand. A memo holds at most
    :data:`~olboost.boosters._mbbm_memo.MEMO_SIZE` potentials (128 MB), and a process keeps the
    memos of the 4 triples ``(learners, k, gamma)`` it used last (up to 512 MB), also once their
    models are gone, so that the next model of a triple starts with its potentials. When the
    state codes of ``learners`` and ``k`` do not fit in 63 bits (``k > 12`` with 100 learners)
    the booster falls back to the slower Python path, as exact. ``method="monte_carlo"`` keeps
    the authors' estimate, on the Python path.

    ``vote="expected_cost"`` is what the authors' code did instead of the ``argmax``: learner ``i``,
    whose committee row is the distribution ``p_i``, votes for ``l^i = argmin_l sum_r p_i(r)
    C^i(r, l)``, the cost it expects to pay under the full cost matrix of eq. 4, ``C^i(r, l) =
    phi^r_{N-i}(s^{i-1} + e_l)`` for every possible true class ``r``, at the votes ``s^{i-1}`` of
    the learners before it (lowest ``l`` on ties). The votes are sequential, and both the booster's
    prediction and the learning step use them; predicting stays a pure function of the model (only
    the memo fills). With ``method="monte_carlo"`` the cost matrices are estimated from draws
    seeded by the model seed and the number of examples learned.

    Parameters
    ----------
    committee
        The weak learners; default ``VFDTCommittee()``.
    learners
        Number ``N`` of weak learners.
    seed
        Seed of the committee's randomness (and of the Monte Carlo draws).
    classes
        The classes (an int ``k`` or a sequence), or ``None`` to take them from arrays.
    gamma
        The assumed edge in (0, 1).
    weight_bound
        The divisor ``w^{i*}`` of line 12: an estimate of ``max_t w^i(t)`` (line 1),
        ``"lemma10"`` (Lemma 10 of the paper, eq. 20, capped by ``k``; it requires ``gamma <
        1/2`` and falls back to ``k`` otherwise), ``"trivial"`` (``k``) or ``"exact_law"``
        (eq. 21-22 with the exact law of the vote difference, before the Berry-Esseen step of
        Lemma 10: a valid bound for every ``gamma``, and much tighter; see
        :func:`~olboost.potentials.mbbm_weight_bound`). Lemma 10's bound ``c k^{5/2} /
        sqrt(N - i)`` (``c`` about 4.6) is below ``k`` only where ``N - i`` exceeds about
        ``21 k^3`` (171 learners at ``k = 2``, 572 at 3, 1,354 at 4): with fewer learners
        ``"lemma10"`` is ``"trivial"``, bit for bit. Or ``"authors"``, the normalisation of the
        authors' code, ``10 (k - 1)``: their learner ``i`` is taught with weight ``0.1 c_i
        w^i(t) / (k - 1)``, ``c_i`` being a per-learner constant (uniform on ``[10, 200]``
        there), which is the committee's weight multiplier here: pair it with
        ``VFDTCommittee(weight_multiplier=(10, 200))``, as ``olboost reproduce multiclass``
        does; under the default multipliers, drawn on ``[3, 10]``, each example weighs an order of
        magnitude less than in their setup, and the model learns far more slowly. The weight the
        booster passes is at least ``1e-10``, so that every learner learns every example, as
        their ``max(1e-10, .)`` does (they floor after multiplying by ``c_i``, here the floor
        comes before the multiplier: only the size of a negligible weight differs). The weights
        are then no longer in ``[0, 1]``. Kept in ``w_star_``.
    method
        ``"exact"`` or ``"monte_carlo"`` (``draws`` samples per potential).
    draws
        Monte Carlo sample size.
    vote
        How a weak learner's committee row becomes its vote: ``"argmax"`` (Algorithm 1, line 7) or
        ``"expected_cost"`` (minimum expected cost under eq. 4, as in the authors' code).
    tie_break
        Which class a weak learner votes for when several are tied: ``"lowest"`` or
        ``"random"``, one of them uniformly (as the authors' code did), drawn with a counter-based
        number that depends only on the seed, the round and the learner, so that scoring an
        example never changes the model.

    Examples
    --------
    >>> import numpy as np
    >>> from olboost import OnlineMBBM, VFDTCommittee
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = np.argmax(X[:, :3], axis=1)
    >>> model = OnlineMBBM(VFDTCommittee(n_features=2), learners=10, seed=1, gamma=0.1)
    >>> votes = model.predict_then_learn(X, y)
    >>> bool(np.mean(np.argmax(votes[150:], axis=1) == y[150:]) > 0.5)  # chance is 1/3
    True
    """

    _param_constraints = {
        **MulticlassBooster._param_constraints,
        "gamma": Interval(0, 1, closed="neither"),
        "weight_bound": OneOf("lemma10", "trivial", "exact_law", "authors"),
        "method": OneOf("exact", "monte_carlo"),
        "draws": Interval(1, None, integer=True),
        "vote": OneOf("argmax", "expected_cost"),
        "tie_break": OneOf("lowest", "random"),
    }

    def __init__(
        self,
        committee: Committee | None = None,
        learners: int = 100,
        seed: int | None = None,
        classes: int | Sequence[Hashable] | None = None,
        gamma: float = 0.1,
        weight_bound: str = "lemma10",
        method: str = "exact",
        draws: int = 100,
        vote: str = "argmax",
        tie_break: str = "lowest",
    ):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.classes = classes
        self.gamma = gamma
        self.weight_bound = weight_bound
        self.method = method
        self.draws = draws
        self.vote = vote
        self.tie_break = tie_break
        self._validate_params()

    def _init_state(self) -> None:
        self._derive_from_params()
        self.weight_max_ = np.zeros(self._n_learners)
        self._tie_key = seed_key(self.seed_, STREAMS["tie"])

    def _derive_from_params(self) -> None:
        n, k = self._n_learners, len(self._outputs())
        if self.weight_bound == "trivial":
            self.w_star_ = np.full(n, float(k))
        elif self.weight_bound == "authors":
            self.w_star_ = np.full(n, 10.0 * (k - 1))
        else:
            form = "exact_law" if self.weight_bound == "exact_law" else "berry_esseen"
            self.w_star_ = np.array(
                [mbbm_weight_bound(i, n, k, self.gamma, form=form) for i in range(1, n + 1)]
            )

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_memo", None)  # a cache of exact potentials, rebuilt on demand
        state.pop("_vote_cache", None)  # the last expected-cost votes
        return state

    def _kernel_args(self) -> tuple | None:
        """``(gamma, tab, offsets, comb, memo, max_entries)`` for the compiled kernels, looked up on
        first use (shared with the other models of the same ``learners``, ``k`` and ``gamma``);
        ``None`` when the Python path must be used (Monte Carlo, or state codes that do not fit
        in 63 bits)."""
        if self.method != "exact":
            return None
        args = self.__dict__.get("_memo")
        if args is None:
            key = (self._n_learners, len(self._outputs()), float(self.gamma))
            args = _SHARED_KERNEL_ARGS.get(key)
            if args is None:
                args = _build_kernel_args(*key)
                _SHARED_KERNEL_ARGS[key] = args
                while len(_SHARED_KERNEL_ARGS) > _SHARED_KERNEL_ARGS_SIZE:
                    _SHARED_KERNEL_ARGS.popitem(last=False)
            _SHARED_KERNEL_ARGS.move_to_end(key)
            self._memo = args
        return args or None

    def _step_kernels(self) -> BoosterKernels | None:
        return None if self._kernel_args() is None else BoosterKernels(MK.mbbm_score, MK.mbbm_step)

    def _step_state(self) -> MK.State:
        gamma, tab, offsets, comb, memo, max_entries = self._kernel_args()
        return MK.State(
            self.w_star_,
            self.weight_max_,
            gamma,
            tab,
            offsets,
            comb,
            memo,
            max_entries,
            self._tie_key,
            self.tie_break == "random",
            self.vote == "expected_cost",
            _AUTHORS_WEIGHT_FLOOR if self.weight_bound == "authors" else 0.0,
        )

    def _votes(self, H: np.ndarray, t: int) -> np.ndarray:
        """Each learner's vote on an example whose committee rows are ``H``; ``t`` examples were
        learned before it (it seeds the Monte Carlo draws of expected-cost votes)."""
        if self.vote == "argmax":
            votes = np.empty(H.shape[0], dtype=np.int64)
            MK.argmax_votes(H, t, self._tie_key, self.tie_break == "random", votes)
            return votes
        # scoring then learning one example asks for the same votes twice: keep the last ones
        cached = self.__dict__.get("_vote_cache")
        if cached is not None and cached[0] == t and np.array_equal(cached[1], H):
            return cached[2].copy()
        votes = self._expected_cost_votes(H, t)
        self._vote_cache = (t, H.copy(), votes.copy())
        return votes

    def _expected_cost_votes(self, H: np.ndarray, t: int) -> np.ndarray:
        votes = np.empty(H.shape[0], dtype=np.int64)
        n, k = H.shape
        rng = (
            stream_rng(self.seed_, STREAMS["monte_carlo_vote"], t)
            if self.method == "monte_carlo"
            else None
        )
        s = np.zeros(k, dtype=np.int64)
        for i in range(n):
            C = [
                multiclass_costs(s, r, n - 1 - i, self.gamma, self.method, self.draws, rng)
                for r in range(k)
            ]
            e = np.zeros(k)
            tol = MK.expected_costs(H[i], np.array(C), e)
            best = MK.pick_min(e, self._tie_u(t, i), tol)
            votes[i] = best
            s[best] += 1
        return votes

    def _tie_u(self, t: int, i: int) -> float:
        """The uniform that breaks ties in learner ``i``'s vote at round ``t`` (-1: lowest)."""
        if self.tie_break == "lowest":
            return -1.0
        return counter_uniform(self._tie_key, t * self._n_learners + i)

    def _scores(self, H: np.ndarray) -> np.ndarray:
        if self._step_kernels() is not None:
            return super()._scores(H)
        votes = self._votes(H, self.t_)
        return np.bincount(votes, minlength=H.shape[1]).astype(np.float64)

    def _update(self, H: np.ndarray, y: int) -> np.ndarray:
        if self._step_kernels() is not None:
            return super()._update(H, y)
        n, k = H.shape
        votes = self._votes(H, self.t_ - 1)  # t_ already counts this example
        weights = np.zeros_like(H)
        s = np.zeros(k, dtype=np.int64)
        rng = (
            stream_rng(self.seed_, STREAMS["monte_carlo"], self.t_)
            if self.method == "monte_carlo"
            else None
        )
        for i in range(n):
            c = multiclass_costs(s, y, n - 1 - i, self.gamma, self.method, self.draws, rng)
            w = normalize_multiclass_costs(c, y)[1]  # Algorithm 1, line 11
            self.weight_max_[i] = max(self.weight_max_[i], w)
            weights[i, y] = w / self.w_star_[i]  # line 12
            s[votes[i]] += 1
        return self._floored(weights, y)

    def _floored(self, weights: np.ndarray, y: int) -> np.ndarray:
        if self.weight_bound == "authors":
            # The authors' get_weight returns max(1e-10, weight): every learner learns every
            # example, which matters to trees that count a class's first sight (VFDTCommittee's
            # semantics="weka_port").
            weights[:, y] = np.maximum(weights[:, y], _AUTHORS_WEIGHT_FLOOR)
        return weights

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.vfdt import VFDTCommittee

        yield {"committee": VFDTCommittee(n_features=3), "learners": 5, "seed": 3}
        yield {"learners": 4, "seed": 7, "gamma": 0.3, "weight_bound": "trivial"}
        yield {
            "committee": VFDTCommittee(n_features=3, weight_multiplier=(10.0, 200.0)),
            "learners": 4,
            "seed": 8,
            "gamma": 0.1,
            "weight_bound": "authors",
        }
        yield {"learners": 6, "seed": 5, "gamma": 0.2, "vote": "expected_cost"}
        yield {"learners": 5, "seed": 4, "vote": "expected_cost", "tie_break": "random"}
        yield {"learners": 5, "seed": 4, "tie_break": "random"}
        yield {
            "committee": VFDTCommittee(n_features=3),
            "learners": 3,
            "seed": 2,
            "vote": "expected_cost",
            "method": "monte_carlo",
            "draws": 20,
        }


def _build_kernel_args(learners: int, k: int, gamma: float) -> tuple:
    """Arguments of the compiled kernels for ``learners`` learners and ``k`` classes, with an
    empty memo; ``()`` when the state codes do not fit in 63 bits."""
    layout = MK.memo_layout(learners - 1, k)
    if layout is None:
        return ()
    tab = binomial_table(learners - 1, k - 1)
    return (gamma, tab, *layout, MK.new_memo(), MK.MEMO_SIZE)
