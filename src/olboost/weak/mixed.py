"""Several committees driven as one: e.g. Hoeffding trees and linear rankers side by side.

Compiled when every part is (:mod:`olboost.weak._mixed_kernels`), from Python otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numba
import numpy as np

from olboost._random import seed_int
from olboost.base import InstanceOf, OneOf
from olboost.weak import _mixed_kernels as K
from olboost.weak._handles import bind
from olboost.weak.base import (
    Committee,
    CompiledKernels,
    checked_predictions,
    driven_kernels,
    olboost_predicts,
)

__all__ = ["MixedCommittee", "MixedSetup"]

#: The shares of the default parts (trees, averaged rankers, last-iterate rankers).
_DEFAULT_SHARES = (2.0, 1.0, 1.0)


@dataclass(frozen=True)
class MixedSetup:
    """How a :class:`MixedCommittee` shares its learners among its parts (drawn at start).

    Attributes
    ----------
    counts
        ``(P,)`` int64: learners of each part (in the order of ``committees``).
    part
        ``(N,)`` int64: the part learner ``i`` (row ``i`` of the predictions) belongs to; part
        ``j``'s learners are its rows in increasing order.
    """

    counts: np.ndarray
    part: np.ndarray


def _committees_problem(value: Sequence) -> str | None:
    if len(value) == 0:
        return "must hold at least one committee"
    bad = [type(c).__name__ for c in value if not isinstance(c, Committee)]
    if bad:
        return f"must hold committees (olboost.weak.base.Committee), got {bad}"
    return None


def _shares_problem(value: Sequence) -> str | None:
    for share in value:
        if isinstance(share, bool) or not isinstance(share, Real):
            return f"must hold real numbers, got {value!r}"
        if not (0.0 <= share < float("inf")):
            return f"must hold finite non-negative numbers, got {value!r}"
    total = sum(value)
    if not total > 0:
        return f"must have a positive sum, got {value!r}"
    if total == float("inf"):
        return f"must have a finite sum (the parts' shares of the learners), got {value!r}"
    return None


def split_counts(n: int, shares: Sequence[float]) -> np.ndarray:
    """``n`` learners apportioned to the ``shares`` by largest remainders (Hamilton's method;
    ties go to the earlier part)."""
    w = np.asarray(shares, dtype=np.float64)
    with np.errstate(over="ignore"):
        overflows = not np.isfinite(n * w).all()
    if overflows:
        # shares near float64's largest (1e308) overflowed in n * w: same ratios, scaled down
        w = w / w.max()
    quota = n * w / w.sum()
    counts = np.floor(quota).astype(np.int64)
    rest = quota - counts
    order = sorted(range(len(w)), key=lambda j: (-rest[j], j))
    for j in order[: n - int(counts.sum())]:
        counts[j] += 1
    return counts


def interleave(counts: np.ndarray) -> np.ndarray:
    """Part of each of the ``sum(counts)`` rows such that every prefix of the rows holds each
    part in proportion to its count as closely as possible (at each row, the part furthest
    behind its proportional share, ties to the earlier part)."""
    n = int(counts.sum())
    taken = np.zeros(len(counts), dtype=np.int64)
    part = np.empty(n, dtype=np.int64)
    for p in range(n):
        lag = counts * (p + 1) / n - taken
        lag[taken >= counts] = -np.inf
        j = int(np.argmax(lag))
        part[p] = j
        taken[j] += 1
    return part


class MixedCommittee(Committee):
    """Committees combined into one: the ``N`` learners are shared among ``committees`` in
    proportion to ``shares``, and the booster sees one committee of ``N`` learners.

    Any booster runs on any mix without a change, e.g. 50 Hoeffding trees and 50 linear label
    rankers: ``MixedCommittee([VFDTCommittee(), LinearCommittee()])`` with ``learners=100``
    (``MixedCommittee()``: 50 trees, 25 averaged and 25 last-iterate rankers, see
    ``committees``).
    Part ``j`` gets ``counts[j]`` learners, ``N`` apportioned to the shares by largest remainders
    (:func:`split_counts`; a part whose count is 0 is left out), and is started with its own seed
    derived from the committee's (``seed_int(seed, j)``). Row ``i`` of the predictions and of the
    label weights belongs to part ``setup_.part[i]``:

    * ``order="interleaved"`` (the default): the parts alternate in proportion to their counts
      (:func:`interleave`; with two equal shares, learner 1 is a tree, 2 a ranker, 3 a tree ...),
      so that every prefix of the learners mixes the kinds, which matters to boosters whose
      experts are prefixes (Ada.OLMR's ``s^i = sum_{j <= i} alpha_j h^j``, and the
      boost-by-majority cost vectors, which depend on a learner's position);
    * ``order="blocks"``: part 0's learners first, then part 1's, ...

    Every part must take the same examples; a missing value passes the checks only if every
    part handles missing values (:attr:`handles_missing`).

    **Compiled.** When every part is compiled (:meth:`compiled` is not ``None``), so is the mix:
    its kernels (:mod:`olboost.weak._mixed_kernels`) call each part's kernels as first-class
    functions on the part's rows of ``H`` and of the weights, more than two parts nesting as
    pairs, and the boosters' compiled driver runs them with no Python per example; a part's
    request for storage is served by that part's :meth:`make_room` and the example resumes where
    it stopped, each learner learning it once. Otherwise (e.g. a
    :class:`~olboost.weak.river.RiverCommittee` part) the mix runs each part from Python.

    Parameters
    ----------
    committees
        The parts (unstarted committees, used as prototypes: cloned at start). ``None``: the mix
        measured in ``benchmarks/weak_learners.py``, ``[VFDTCommittee(), LinearCommittee(),
        LinearCommittee(average=False)]`` with shares ``[2, 1, 1]`` (half trees, a quarter
        rankers predicting with their averaged weights, a quarter with their last ones: the
        averaged rankers are the better ones on shuffled noisy streams, the last iterates on
        drifting or sorted ones, and the booster weighs them).
    shares
        Relative numbers of learners of the parts (non-negative, positive sum). ``None``: equal
        shares, or ``[2, 1, 1]`` for the default parts.
    order
        ``"interleaved"`` or ``"blocks"`` (see above).

    Attributes
    ----------
    setup_
        The :class:`MixedSetup` drawn at start.
    parts_
        The started parts with at least one learner, in the order of ``committees``.
    rows_
        ``rows_[j]``: the rows of ``parts_[j]``'s learners, increasing.

    Examples
    --------
    Four trees and two linear rankers, interleaved (rows 1 and 4 are the rankers), learn which
    of the first three attributes is the largest; every row is a distribution:

    >>> import numpy as np
    >>> from olboost.weak import LinearCommittee, MixedCommittee, VFDTCommittee
    >>> committee = MixedCommittee([VFDTCommittee(), LinearCommittee()], shares=[2, 1])
    >>> committee.start(n_learners=6, n_labels=3, n_attributes=4, seed=0)
    >>> committee.setup_.part
    array([0, 1, 0, 0, 1, 0])
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(300):
    ...     z = rng.uniform(size=4)
    ...     committee.learn(z, np.eye(3)[[np.argmax(z[:3])] * 6])
    >>> committee.predict(np.array([0.9, 0.1, 0.2, 0.5])).round(2)
    array([[0.98, 0.01, 0.01],
           [0.99, 0.  , 0.01],
           [0.84, 0.08, 0.08],
           [0.99, 0.01, 0.01],
           [0.99, 0.  , 0.01],
           [0.99, 0.01, 0.01]])
    """

    _param_constraints = {
        "committees": InstanceOf((list, tuple), allow_none=True, predicate=_committees_problem),
        "shares": InstanceOf((list, tuple), allow_none=True, predicate=_shares_problem),
        "order": OneOf("interleaved", "blocks"),
    }

    def __init__(
        self,
        committees: Sequence[Committee] | None = None,
        shares: Sequence[float] | None = None,
        order: str = "interleaved",
    ):
        self.committees = committees
        self.shares = shares
        self.order = order
        self._validate_params()

    def _validate_params(self) -> None:
        super()._validate_params()
        self._refuse_itself(self.committees)
        if self.shares is not None and len(self.shares) != len(self._prototypes()):
            raise ValueError(
                f"{type(self).__name__}.shares must have one share per committee "
                f"({len(self._prototypes())}), got {self.shares!r}"
            )

    def _checked_new_params(
        self, params: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        direct, nested = super()._checked_new_params(params)
        self._refuse_itself(direct.get("committees"))
        return direct, nested

    def _refuse_itself(self, committees: Sequence[Committee] | None) -> None:
        """Raise if ``committees``, or a mix among them at any depth, holds this mix: set by
        ``set_params``, learning recursed until Python's limit."""
        stack, seen = list(committees or ()), set()
        while stack:
            committee = stack.pop()
            if committee is self:
                raise ValueError(f"{type(self).__name__}.committees must not hold the mix itself")
            if isinstance(committee, MixedCommittee) and id(committee) not in seen:
                seen.add(id(committee))
                stack.extend(committee.committees or ())

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        from olboost.weak.linear import LinearCommittee
        from olboost.weak.vfdt import VFDTCommittee

        yield {}
        yield {
            "committees": [
                VFDTCommittee(n_features=3, grace_period=(1.0, 3.0), capacity=1),
                LinearCommittee(
                    update="III", complexity="entropy", margin=(0.05, 0.2), scale="minmax"
                ),
                LinearCommittee(update="I", n_features=2),
            ],
            "shares": [2, 1, 1],
            "order": "blocks",
        }

    def _prototypes(self) -> list[Committee]:
        if self.committees is not None:
            return list(self.committees)
        from olboost.weak.linear import LinearCommittee
        from olboost.weak.vfdt import VFDTCommittee

        return [VFDTCommittee(), LinearCommittee(), LinearCommittee(average=False)]

    @property
    def handles_missing(self) -> bool:
        """Whether every part takes missing attribute values."""
        parts = self.__dict__.get("parts_") or self._prototypes()
        return all(part.handles_missing for part in parts)

    # -------------------------------------------------------------------------- setup

    def _draw_setup(self, seed: int | None, n_learners: int, n_attributes: int) -> MixedSetup:
        prototypes = self._prototypes()
        shares = self.shares
        if shares is None:
            shares = _DEFAULT_SHARES if self.committees is None else [1.0] * len(prototypes)
        counts = split_counts(n_learners, shares)
        if self.order == "interleaved":
            part = interleave(counts)
        else:
            part = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        return MixedSetup(counts, part)

    def _allocate(self, seed: int | None) -> None:
        parts, rows = [], []
        for j, prototype in enumerate(self._prototypes()):
            count = int(self.setup_.counts[j])
            if count == 0:
                continue
            part = prototype.clone()
            part_seed = None if seed is None else seed_int(seed, j)
            part.start(count, self.n_labels_, self.n_attributes_, part_seed)
            parts.append(part)
            rows.append(np.flatnonzero(self.setup_.part == j).astype(np.int64))
        self.parts_ = parts
        self.rows_ = rows
        # each nesting level's two members: their rows among the level's rows, in order
        self.pair_rows_ = []
        for level in range(len(parts) - 1):
            members = np.sort(np.concatenate(rows[level:]))
            rest = np.sort(np.concatenate(rows[level + 1 :]))
            self.pair_rows_.append(
                (np.searchsorted(members, rows[level]), np.searchsorted(members, rest))
            )
        # per nesting level: members done on the current example, who returned a status
        self.progress_ = np.zeros((max(len(parts) - 1, 1), 2), dtype=np.int64)

    def _compile_learn_elsewhere(self) -> None:
        # Each part started its own (Committee.start). The mix's learn is given its parts'
        # kernels as first-class functions, which another process cannot be handed, and making
        # them would compile the parts' kernels here, at start, before anything can overlap.
        return

    # -------------------------------------------------------------------------- contract

    def _check_values(self, x: np.ndarray) -> None:
        """Each part's :meth:`Committee._check_values`, its refusal naming the part (a missing
        value is refused by the parts that take none, under their own ``missing``). The parts'
        own conditions are :meth:`row_problem`'s, which the base ``_check_x`` asks after this."""
        for part in self._parts():
            try:
                part._check_values(x)
            except ValueError as err:
                raise ValueError(f"{type(self).__name__}'s {type(part).__name__}: {err}") from None

    def _parts(self) -> list[Committee]:
        """The started parts, or before the start the prototypes they will be cloned from."""
        return self.parts_ if self._started else self._prototypes()

    def rejects_rows(self) -> bool:
        """Whether some part's :meth:`check_rows` can reject a row."""
        return any(part.rejects_rows() for part in self._parts())

    def check_rows(self, X: np.ndarray) -> int:
        """The first row of ``X`` that some part's checks would reject (``len(X)`` if none)."""
        return min(part.check_rows(X) for part in self._parts())

    def row_problem(self, x: np.ndarray) -> str | None:
        """The first part's reason to reject ``x``."""
        problems = (part.row_problem(x) for part in self._parts())
        return next((problem for problem in problems if problem is not None), None)

    def compiled(self) -> CompiledKernels | None:
        """The mix's compiled ``predict`` and ``learn`` over nested :data:`K.Pair` states, or
        ``None`` when a part is not compiled. Level ``L`` pairs part ``L`` with the pair of parts
        ``L+1..`` (or the last part)."""
        self._require_started()
        kernels = [driven_kernels(part) for part in self.parts_]
        if any(kern is None for kern in kernels):
            return None
        if len(kernels) == 1:
            return kernels[0]
        # The pairs built last time, while the parts' kernels and arrays are the same ones (their
        # handles hold references to them, so no id can be reused meanwhile): a one-example call
        # built them anew, four handles for the default mix, about a third of its time.
        key = tuple((kern.predict, kern.learn, _identity(kern.state)) for kern in kernels)
        built = self.__dict__.get("_built")
        if built is not None and built[0] == key:
            return built[1]
        k = self.n_labels_
        inner = kernels[-1]
        for level in range(len(kernels) - 2, -1, -1):
            rows_a, rows_b = self.pair_rows_[level]
            a, b = bind(kernels[level]), bind(inner)
            state = K.Pair(
                a.predict, a.learn, a.state, b.predict, b.learn, b.state, rows_a, rows_b,
                np.empty((rows_a.size, k)), np.empty((rows_b.size, k)),
                np.empty((rows_a.size, k)), np.empty((rows_b.size, k)), self.progress_[level],
            )  # fmt: skip
            inner = CompiledKernels(K.predict, K.learn, state)
        self.__dict__["_built"] = (key, inner)
        return inner

    def _entry(self, name: str, kernels: CompiledKernels) -> Any:
        """The compiled ``predict`` or ``learn`` (``name``) of :meth:`compiled`'s ``kernels``,
        as an entry point for Python compiled for the type of their state, found once per
        process: the dispatcher itself would type the state at every call, which Numba does in
        Python for a state holding first-class functions (milliseconds)."""
        entries = self.__dict__.setdefault("_entries", {})
        entry = entries.get(name)
        if entry is None:
            kernel = getattr(kernels, name)
            state_type = numba.typeof(kernels.state)
            if name == "predict":
                arg_types = (K.ROW, state_type, K.MATRIX)
            else:
                arg_types = (K.ROW, K.MATRIX, state_type, K.DEMAND)
            kernel.compile(arg_types)
            entry = entries[name] = kernel.overloads[arg_types].entry_point
        return entry

    def _learn_kernel(self, kernels: CompiledKernels) -> Any:
        return self._entry("learn", kernels)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_entries", None)
        state.pop("_built", None)
        return state

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Every part's predictions, row ``i`` that of learner ``i``: ``(N, k)`` float64."""
        x = self._check_x(x)
        out = np.empty((self.n_learners_, self.n_labels_))
        kernels = self.compiled()
        if kernels is not None:
            self._entry("predict", kernels)(x, kernels.state, out)
            return out
        for part, rows in zip(self.parts_, self.rows_, strict=True):
            H = part.predict(x)
            # a part of the user's, checked as the boosters check a committee of the user's
            # (its error named the mix, or was NumPy's broadcasting one)
            out[rows] = H if olboost_predicts(part) else checked_predictions(part, H)
        return out

    def learn(self, x: np.ndarray, weights: np.ndarray) -> None:
        """Each part learns its rows of ``weights`` (see the contract).

        Raises ``ValueError``, leaving every part untouched, on a bad ``x`` or ``weights``."""
        x = self._check_x(x)
        # the contract's checks (text and complex weights were read as numbers, learned)
        weights = np.array(self._check_weights(weights), order="C")  # a writable copy
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("weights must be finite and non-negative")
        problem = self.weights_problem(weights)
        if problem is not None:
            raise ValueError(problem)
        if self.compiled() is not None:
            with self.running():
                self.learn_compiled(x, weights)
            return
        for part, rows in zip(self.parts_, self.rows_, strict=True):
            part.learn(x, weights[rows])

    def weights_problem(self, weights: np.ndarray) -> str | None:
        """The first part's objection to its rows of ``weights``: asked of every part before
        any learns, since the compiled pair cannot undo a part that learned when the next one
        refuses."""
        for part, rows in zip(self.parts_, self.rows_, strict=True):
            problem = part.weights_problem(weights[rows])
            if problem is not None:
                return problem
        return None

    def make_room(self, status: int, demand: np.ndarray) -> None:
        """Pass a storage request to the part that made it; a ``ValueError`` on bad weights."""
        if len(self.parts_) == 1:
            self.parts_[0].make_room(status, demand)
            return
        for level in range(len(self.parts_) - 1):
            who = self.progress_[level, 1]
            if who == K.SELF:
                raise ValueError("weights must be finite and non-negative")
            if who == K.FIRST:
                self.parts_[level].make_room(status, demand)
                return
        self.parts_[-1].make_room(status, demand)

    def abandon_example(self) -> None:
        """Forget which parts learned the example, and where each stopped."""
        if "progress_" not in self.__dict__:
            return  # not started
        self.progress_[:] = 0
        for part in self.parts_:
            part.abandon_example()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Every part's context (e.g. the trees' thread count): the parts' thread counts are
        set one after the other, the largest last, so that it is the one in force (the last
        part's was, whichever it was; a part on one thread learns in a serial kernel)."""
        with contextlib.ExitStack() as stack:
            for part in sorted(self.parts_, key=_most_threads):
                stack.enter_context(part.running())
            yield


def _most_threads(committee: Committee) -> int:
    """The largest thread count a committee learns on: its ``n_threads``, or its parts' (a
    mix in a mix)."""
    parts = getattr(committee, "parts_", None)
    if parts is not None:
        return max(_most_threads(part) for part in parts)
    return getattr(committee, "n_threads", 1)


def _identity(value: Any) -> Any:
    """What a compiled state is made of: its arrays' identities, its other values."""
    if isinstance(value, np.ndarray):
        return id(value)
    if isinstance(value, tuple):
        return tuple(map(_identity, value))
    return value
