"""The base of the scikit-learn adapters of :mod:`olboost.sklearn`: what both share (the booster
template, seeding, the checks of ``X``, tags and pickling).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Self, TypeVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from olboost.base import Estimator, _writable_arrays, restored_on_failure
from olboost.online.inputs import MAX_ABS_FEATURE
from olboost.online.learner import MulticlassLearner, OnlineLearner

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
            # a class itself was reported by its metaclass ("got EstimatorMeta")
            got = (
                f"the class {booster.__name__}; pass an instance, {booster.__name__}(...)"
                if isinstance(booster, type)
                else type(booster).__name__
            )
            raise TypeError(
                f"{type(self).__name__}.booster must be None or an olboost "
                f"{self._learner_type.__name__} (e.g. {type(self._default_booster()).__name__}()"
                f"), got {got}"
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
        # every booster with a seed takes it: a LabelRanker with Update III, which uses its
        # seed only where it falls back on Update II's step, still draws its seed_ at the start
        # (two fits pickled apart) and uses it once its update is set to I or II
        if seed is not None and "seed" in template._param_names():
            params["seed"] = seed
        return template.clone(params)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """scikit-learn's ``get_params``; with ``deep`` and ``booster=None``, also the default
        booster's parameters as ``booster__<name>``, which :meth:`set_params` sets (a search
        over them, or ``HalvingGridSearchCV(resource="booster__learners")``, which looks the
        name up here, works on the default adapter as on one given a booster)."""
        params = super().get_params(deep=deep)
        if deep and self.booster is None:
            default = self._default_booster().get_params(deep=True)
            params.update((f"booster__{name}", value) for name, value in default.items())
        return params

    def _get_params_html(self, deep: bool = True, doc_link: str = "") -> Any:
        # scikit-learn's HTML repr tables get_params(deep=True) for an estimator that does not
        # draw nested ones (the booster has no fit): every booster__<name> was listed flat and
        # marked as set by the user, being no parameter of __init__. The booster's own repr is
        # in the booster row.
        return super()._get_params_html(deep=False, doc_link=doc_link)

    def set_params(self, **params: Any) -> Self:
        """Set parameters (``booster__<name>`` for a parameter of the booster) and return
        ``self``. With ``booster=None``, ``booster__<name>`` sets the default booster's
        parameter: the default booster is then created and held in ``booster``.

        As scikit-learn's estimators do, a bad value is refused by ``fit``, naming the
        parameter, not here, so that a search scores that candidate ``error_score`` and goes
        on; an unknown name is refused here, and nothing is set
        (:meth:`olboost.base.Estimator._set_params_at_fit`)."""
        with restored_on_failure(self):
            own = {k: v for k, v in params.items() if not k.startswith("booster__")}
            prefixed = {k: v for k, v in params.items() if k not in own}
            super().set_params(**own)
            if self.booster is None and prefixed:
                self.booster = self._default_booster()
            if prefixed and isinstance(self.booster, Estimator):
                self.booster._set_params_at_fit(
                    {k.removeprefix("booster__"): v for k, v in prefixed.items()}
                )
            elif prefixed:
                super().set_params(**prefixed)
            return self

    # ------------------------------------------------------------------ state and input

    def _atomic(self, work: Callable[[], _T]) -> _T:
        """Run ``work``; if it raises, restore the adapter's attributes as they were (the
        booster itself rejects bad rows before learning any), unless the fitted booster learned
        rows before it stopped (an interrupt: it learns in place, and stops between blocks of
        rows): then the counts ``work`` kept of them stay, as the booster's learning does."""
        booster = self.__dict__.get("booster_")
        t0 = booster.__dict__.get("t_") if booster is not None else None
        saved = restored_on_failure(self)
        try:
            return work()
        except BaseException:
            if t0 is None or self.__dict__.get("booster_") is not booster or booster.t_ == t0:
                saved.restore()
            raise

    @staticmethod
    def _learned_rows(booster: Any, t0: int) -> int:
        """Rows ``booster`` learned since it had learned ``t0``."""
        return int(booster.__dict__.get("t_", 0)) - t0

    def _missing_allowed(self, fitted: bool = True) -> bool:
        """Whether NaN passes the input checks: the booster takes missing values (e.g.
        ``VFDTCommittee(missing="learn")``, the default). With ``fitted``, the fitted booster's
        rule where there is one (predicting, or ``partial_fit`` going on); else the rule of the
        booster the parameters make (``fit``, which forgets the fitted one, and the tags)."""
        booster = self.__dict__.get("booster_") if fitted else None
        if booster is None:
            try:
                booster = self._template()
            except (TypeError, ValueError):
                return False
        return bool(booster._missing_allowed())

    def _finite(self, fitted: bool) -> bool | str:
        return "allow-nan" if self._missing_allowed(fitted) else True

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
                ensure_all_finite=self._finite(fitted=not reset),
                **extra,
            ),
        )

    def _check_X(self, X: Any) -> Any:
        """``X`` checked against the fit (features, names, values) as float64, C-ordered, or
        CSR (a read-only array is given to the kernels as writable blocks by the booster's
        :class:`~olboost.online.inputs.Rows`)."""
        return self._validate(X, reset=False)

    def _check_X_y(self, X: Any, y: Any, *, reset: bool, multi_output: bool) -> tuple[Any, Any]:
        if y is None:
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, but the target "
                "y is None."
            )
        return self._validate(X, y, reset=reset, multi_output=multi_output)

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
        # The canonical pickle of olboost.checkpoint: equal adapters give equal bytes, however
        # their booster was reached (a resumed one holds arrays with copied dtypes).
        from olboost.checkpoint import dumps

        state = dict(super().__getstate__())
        if "booster_" in state:
            state["booster_"] = _PickledBooster(dumps(state["booster_"]))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        booster = state.get("booster_")
        if isinstance(booster, _PickledBooster):
            from olboost.checkpoint import loads

            state = {**state, "booster_": loads(booster.data)}
        # the adapter's own arrays (classes_) as the booster's (Estimator.__setstate__): under
        # joblib's mmap_mode they came back read-only memory maps, and pickled as such after
        super().__setstate__(_writable_arrays(state, {}))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self._missing_allowed(fitted=False)
        return tags


class _PickledBooster:
    """A fitted booster as pickle bytes, inside a pickled adapter."""

    # pickled under its name from before olboost.sklearn became a package (which re-exports
    # it), so that pickles of fitted adapters keep their bytes and old ones still load
    __module__ = "olboost.sklearn"
    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def __reduce__(self) -> tuple[Any, ...]:
        return (_PickledBooster, (self.data,))


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
