"""The base of the top-k feedback boosters (:mod:`olboost.boosters.topk`): showing a randomised
ranking, impressions with their logged propensities, and the checks of a feedback before it
changes anything."""

from __future__ import annotations

import copy
import hashlib
import numbers
import threading
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from olboost._random import MAX_KEY, STREAMS, seed_key
from olboost.base import Estimator, InstanceOf, Interval
from olboost.boosters import _topk_kernels as K
from olboost.boosters.base import RankingBooster
from olboost.feedback import Feedback, FullFeedback, Impression, TopkFeedback
from olboost.feedback.exploration import Exploration, exploration_from

__all__ = ["TopkBooster"]

_NO_COSTS = np.empty((0, 0))

#: Held by a first ``show_one`` that starts its model (one lock for all: a start is once per
#: model, and a lock in the model would not pickle).
_FIRST_SHOW = threading.Lock()


class TopkBooster(RankingBooster):
    """Base class of the top-k feedback boosters: showing, impressions and feedback checks.

    Subclasses define ``_show_kernel`` (the compiled show of :mod:`._topk_kernels`) and
    ``_topk_update(H, feedback)``.
    """

    _param_constraints = {
        **RankingBooster._param_constraints,
        # 2: a pair must be shown together (Lemma 5); k=0 said "in [1, inf]", and 1 was refused
        "k": Interval(2, None, integer=True),
        "exploration": InstanceOf((Exploration, str)),
        "rho": Interval(0, 1, closed="neither", allow_none=True),
    }
    _feedback_types = (FullFeedback, TopkFeedback)
    # A started model's impressions show k labels and its feedback is checked against k (its id
    # is a digest of the parameters it started with, k included): a k set later was accepted,
    # and the feedback of every impression shown before was then refused.
    _fixed_once_started = ("k", *RankingBooster._fixed_once_started)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        # pickled before the boosters took App. C.2's clipping as a parameter (e10b800): Top-k
        # BBM did not clip then
        self.__dict__.setdefault("clip_probability", None)
        if self._started and "exploration_" not in self.__dict__:
            # pickled before a started model kept its own copy of the scheme
            self._derive_from_params()

    def _validate_params(self) -> None:
        super()._validate_params()
        explore = exploration_from(self.exploration, self.rho)  # a scheme's own rho range
        # an object's rho assigned directly since it was made (or since another model's
        # set_params changed the object they share) is checked here, as a rho parameter is
        explore._validate_params()
        if self.k < explore.min_k:
            raise ValueError(
                f"{type(self).__name__}: k must be at least {explore.min_k} with "
                f"{type(explore).__name__}, got {self.k} (App. B.1)"
            )
        _check_k(type(self).__name__, explore, self.__dict__.get("labels_", self.labels), self.k)

    def _checked_new_params(
        self, params: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        # rho against the labels with the new values: the construction that validates them
        # knows only the labels parameter (not those taken from the data) and the exploration
        # object before a nested change (exploration__rho), and rho=1e-99 with 2,000 labels
        # was accepted after the start
        direct, nested = super()._checked_new_params(params)
        new = {**self._get_params(), **direct}
        exploration = new["exploration"]
        if "exploration" in nested and isinstance(exploration, Exploration):
            exploration = exploration.clone(nested["exploration"])
        explore = exploration_from(exploration, new["rho"])
        _check_k(
            type(self).__name__, explore, self.__dict__.get("labels_", new["labels"]), new["k"]
        )
        return direct, nested

    @property
    def explorer_(self) -> Exploration:
        """The exploration scheme in use: once started, the model's own copy of it
        (``exploration_``), taken at the start and again when ``set_params`` or ``clone`` changes
        this model's parameters. An :class:`Exploration` object given to two models, or changed
        in place after the start, does not reach into a started model's draws, probabilities or
        step sizes (it did: another model's ``set_params(exploration__rho=...)`` changed them,
        past the checks of this model's labels), as River's and scikit-learn's models copy the
        estimators they are given."""
        own = self.__dict__.get("exploration_")
        return own if own is not None else exploration_from(self.exploration, self.rho)

    def _derive_from_params(self) -> None:
        super()._derive_from_params()
        self.exploration_ = copy.deepcopy(exploration_from(self.exploration, self.rho))

    @property
    def _probability_clip(self) -> float:
        """``clip_probability`` as the kernels take it: 0 for none (App. C.2's heuristic off)."""
        return float(self.clip_probability or 0.0)

    def _init_model(self) -> None:
        # rho against the labels taken from the data
        _check_k(type(self).__name__, self.explorer_, self._outputs(), self.k)
        super()._init_model()

    def _init_state(self) -> None:
        # Names the model in its impressions, so that feedback for another model's is refused:
        # a digest of what makes the model (class and parameters, seed, labels) when it starts,
        # not a random draw, so that equal models pickle to equal bytes (a seed of None is drawn
        # at random, and so is then the id). A parameter set later (rho, say) leaves it: the
        # impressions shown before hold the probabilities they were drawn with, and a clone
        # with the new values is another model.
        self.model_id_ = self._id_of(self.seed_)
        self._draw_key = seed_key(self.seed_, STREAMS["exploration"])
        self._derive_from_params()
        self._init_topk()

    def _init_topk(self) -> None:
        raise NotImplementedError

    def _making(self, seed: int) -> str:
        """What makes the model's results: its class, the parameters (with ``seed``, the seed
        drawn, not ``None``; the committee's by name, but not its thread count, which changes no
        bit) and the labels."""
        params = self.get_params(deep=True)
        params["seed"] = seed
        kept = {
            name: value
            for name, value in params.items()
            if name != "committee"
            and not name.endswith("n_threads")
            and not (name in _LATER_DEFAULTS and value is _LATER_DEFAULTS[name])
        }
        made = _plain(sorted(kept.items()))
        return f"{type(self).__qualname__}|{made!r}|{_plain(self._outputs())!r}"

    # ------------------------------------------------------------------ showing

    def show_one(self, x: Mapping | Sequence | np.ndarray, key: int | None = None) -> Impression:
        """Show a ranking for ``x``: the randomised ranking of the coming round (the model has
        learned ``t_`` examples) under the caller key ``key`` (an int in [0, 2^64); ``None`` is
        0), with its top ``k`` and their exact pair inclusion probabilities. A pure function of
        the model, ``x``, the seed, the round and ``key``: showing does not change the model
        (except that the very first call starts it, as a first ``learn_one`` would: it fixes the
        features and the seed)."""
        extra = self._check_key(key)
        xv, names = self._check_x(x)
        if not self._started:
            # concurrent first requests of a service: one starts the model, the others wait
            # for it (they read a half-started committee); started is set last (t_)
            with _FIRST_SHOW:
                if not self._started:
                    self._start(xv.shape[0], names, first=xv)
        ranking, probs, explored, scores = self._show(xv, extra)
        labels = self._outputs()
        order = tuple(labels[i] for i in ranking)
        shown = ranking[: self.k].copy()
        return Impression(
            ranking=order,
            labels=order[: self.k],
            shown=shown,
            probs=probs,
            round=self.t_ + 1,
            key=extra,
            explored=explored,
            source=self.model_id_,
            scores=scores[shown],
        )

    def _show(self, xv: np.ndarray, key: int) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray]:
        """The randomised ranking of round ``t_ + 1`` under ``key`` (label indices), the shown
        labels' pair probabilities, whether the draw explored, and the model's own scores,
        which the draw randomised."""
        m, k = len(self._outputs()), self.k
        scores = np.empty(m)
        ranking = np.empty(m, dtype=np.int64)
        probs = np.empty((k, k))
        explored = self._show_kernel()(
            self._predictions(xv), self.t_ + 1, self._step_state(), np.uint64(key),
            scores, ranking, probs,
        )  # fmt: skip
        return ranking, probs, bool(explored), scores

    def _stream_scores(self, xv: np.ndarray) -> np.ndarray:
        # the simulated user of the array paths sees the draw without a key, as the driver's step
        ranking, _, _, _ = self._show(xv, 0)
        out = np.empty(ranking.shape[0])
        K._display_scores(ranking, out)
        return out

    def rank_one(
        self, x: Mapping | Sequence | np.ndarray, key: int | None = None
    ) -> list[Hashable]:
        """The randomised ranking :meth:`show_one` would show (does not change the model). Before
        the first example it is that of the first round, drawn by an unstarted copy, which
        ``show_one`` starts (it was the labels in their order, undrawn: another ranking than
        the one ``show_one`` then showed for the same seed, round and key)."""
        if not self._started:
            self._check_key(key)
            self._check_x(x)
            self._outputs()  # labels=None: a ValueError saying to give them
            return list(self.clone().show_one(x, key).ranking)
        return list(self.show_one(x, key).ranking)

    def learn_one(self, x: Mapping | Sequence | np.ndarray, y: Any) -> None:
        """Learn from one example: ``y`` is the :class:`~olboost.feedback.TopkFeedback` of an
        impression (``impression.feedback(clicked)``; the live path), or the full set of relevant
        labels, as a set or as River's ``{label: bool}`` (a simulated user who clicks the
        relevant labels among those the model shows in this round, with the draw of
        :meth:`show_one` without a key)."""
        if isinstance(y, Impression):
            raise TypeError(
                f"{type(self).__name__}.learn_one takes the feedback of an impression, not the "
                "impression: pass impression.feedback(clicked)"
            )
        super().learn_one(x, y)

    def _n_predicted(self, k: int) -> int:
        """``predict_one`` marks the booster's top ``k`` (the parameter) relevant: the labels it
        shows when it does not explore, under the key 0. The label cardinality other ranking
        learners cut at is hidden from a top-k booster, which learns only the relevance of the
        labels it shows."""
        return self.k

    def _count_targets(self, Y: np.ndarray) -> None:
        # Nothing is counted: the relevance of the labels not shown must not change the model
        # (nor what a live loop of impressions learns differ from a simulated one).
        return

    @staticmethod
    def _check_key(key: Any) -> int:
        if key is None:
            return 0
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TypeError(f"key must be an int, got {type(key).__name__}")
        if not 0 <= int(key) <= MAX_KEY:
            raise ValueError(f"key must be in [0, 2^64), got {key}")
        return int(key)

    # ------------------------------------------------------------------ learning

    def _check_feedback(self, feedback: Feedback) -> None:
        super()._check_feedback(feedback)
        if not isinstance(feedback, TopkFeedback):
            return
        feedback.check()  # its arrays may have been written since it was made
        name = type(self).__name__
        m = len(self._outputs())
        if feedback.shown.shape[0] != self.k:
            raise ValueError(
                f"{name}: the feedback shows {feedback.shown.shape[0]} labels, the model shows "
                f"k={self.k}"
            )
        if feedback.shown.min() < 0 or feedback.shown.max() >= m:
            raise ValueError(
                f"{name}: the feedback names a label index outside the label set 0..{m - 1}: "
                f"{feedback.shown.tolist()}"
            )
        own = self._model_id()
        if feedback.source is not None and feedback.source != own:
            this = "not started, its seed drawn at the start" if own is None else repr(own)
            raise ValueError(
                f"{name}: the feedback answers an impression of another model "
                f"(source {feedback.source!r}, this model {this})"
            )

    def _model_id(self) -> str | None:
        """``model_id_``, or before the start the id the model will have (a twin built alike,
        or restored from before its first example, takes its twin's impressions); ``None``
        before the start of a model without a seed, whose seed and id are drawn then."""
        if "model_id_" in self.__dict__:
            return self.model_id_
        return None if self.seed is None else self._id_of(self.seed)

    def _id_of(self, seed: int) -> str:
        """The id of the model made with ``seed``: a digest of :meth:`_making`."""
        return hashlib.sha256(self._making(seed).encode()).hexdigest()[:32]

    def estimated_costs(
        self, x: Mapping | Sequence | np.ndarray, feedback: TopkFeedback
    ) -> np.ndarray:
        """The ``(N, m)`` cost vectors ``c^i`` the weak learners would get from ``feedback`` if
        the model learned ``x`` now (eq. 3 or eq. 4); does not change the model. Without
        ``clip_probability`` their expectation over the draw that showed the labels is the
        full-information cost (eq. 1 is unbiased); the clipping of App. C.2 (the default) caps
        the weights of rarely shown pairs, and so biases their estimates downwards."""
        if not isinstance(feedback, TopkFeedback):
            raise TypeError(f"feedback must be a TopkFeedback, got {type(feedback).__name__}")
        xv, _ = self._check_x(x)
        self._check_feedback(feedback)
        if not self._started:
            raise ValueError(f"{type(self).__name__}: learn one example first")
        H = self._predictions(xv)
        costs = np.empty_like(H)
        self._topk_update(H, feedback, costs, dry_run=True)
        return costs

    def _update(self, H: np.ndarray, feedback: Any) -> np.ndarray:
        if isinstance(feedback, TopkFeedback):
            return self._topk_update(H, feedback, _NO_COSTS)
        return self._simulated_update(H, feedback)

    def _simulated_update(self, H: np.ndarray, feedback: FullFeedback) -> np.ndarray:
        """A simulated user who clicks the relevant labels among those shown: the compiled step,
        as the driver runs it."""
        return super()._update(H, feedback)

    def _show_kernel(self) -> Any:
        raise NotImplementedError

    def _topk_update(
        self, H: np.ndarray, feedback: TopkFeedback, costs: np.ndarray, dry_run: bool = False
    ) -> np.ndarray:
        """Learn from ``feedback`` (on copies of the learned state when ``dry_run``); return the
        committee's label weights, the cost vectors going to ``costs`` when it has rows."""
        raise NotImplementedError

    def _scheme(self) -> tuple[int, float]:
        explore = self.explorer_
        return explore._scheme, float(explore.rho)


class _SortedSet(frozenset):
    """A set whose repr lists its members sorted (a set's repr follows the hash order of its
    members, which for strings changes with ``PYTHONHASHSEED``)."""

    def __repr__(self) -> str:
        return f"{{{', '.join(sorted(repr(member) for member in self))}}}"


#: Parameters added after models had ids, at the default that makes the old models: left out
#: of the id, so that a twin saved before them keeps its id (its pending impressions).
_LATER_DEFAULTS: dict[str, Any] = {"committee__max_depth": None}


def _plain(value: Any) -> Any:
    """``value`` with the same repr for equal parameters: NumPy scalars as Python numbers
    (``np.int64(1)`` is ``1``), dicts by sorted keys, sets sorted, estimators rebuilt from plain
    parameters; a Python value's repr is unchanged (so are the ids it gave before)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, str | bytes):
        return (str if isinstance(value, str) else bytes)(value)  # np.str_('a') is 'a'
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, Mapping):
        items = [(_plain(k), _plain(v)) for k, v in value.items()]
        try:
            items.sort(key=lambda item: item[0])
        except TypeError:
            items.sort(key=lambda item: repr(item[0]))
        return dict(items)
    if isinstance(value, set | frozenset):
        return _SortedSet(_plain(v) for v in value)
    if isinstance(value, Estimator):
        # a thread count changes no bit, nested (a mixed committee's parts) as at the top
        params = value._get_params()
        return type(value)(**{name: _plain(v) for name, v in params.items() if name != "n_threads"})
    return value


def _check_k(who: str, explore: Exploration, labels: Any, k: int) -> None:
    """``k`` against ``labels`` (a count or a sequence), once they are known: shown labels are
    pairs of the labels (the booster ``who``'s message, which names its parameter: through
    scikit-learn's adapter, a default k=3 on a binary y said only "UniformExploration: k must
    be in [2, m=2]"), then ``explore.check_k``."""
    if labels is None:
        return
    # the number of labels, without listing range(labels) for an int
    m = int(labels) if isinstance(labels, numbers.Integral) else len(labels)
    if isinstance(k, numbers.Integral) and not isinstance(k, bool) and not 2 <= k <= m:
        raise ValueError(f"{who}: k={k} must be in [2, m={m}] labels (the k shown of the m)")
    explore.check_k(m, k)
