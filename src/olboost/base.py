"""Base classes shared by every olboost estimator.

An estimator's parameters are exactly the arguments of its ``__init__``; ``__init__`` stores them
as given and validates them (a bad parameter fails at construction, not at the first example), and
does nothing else. Learned state lives in attributes whose names end with ``_`` and is created
lazily, on the first example. ``clone()`` rebuilds an estimator from its parameters, as River's
``clone`` and scikit-learn's ``sklearn.base.clone`` do (``sklearn.base.clone`` calls it), and
``get_params`` / ``set_params`` follow scikit-learn's protocol, nested ``committee__...`` names
included (see :mod:`olboost.sklearn`).

Parameter validation is declared, not written inline: each class lists its constraints in
``_param_constraints`` (name -> checker), and :meth:`Estimator._validate_params` runs them all with
errors that name the parameter.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import inspect
import numbers
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Self

import numpy as np

__all__ = ["Estimator", "Interval", "OneOf", "Range", "InstanceOf"]


class restored_on_failure:
    """``with restored_on_failure(obj):`` if the block raises, ``obj``'s attributes are put back
    as they were before it, and the exception goes on. With ``arrays``, so are the contents of
    its arrays named ``*_`` (learned state), which the block may update in place (compiled
    kernels do); each is copied on entry, so keep that for objects whose arrays are small."""

    __slots__ = ("obj", "before", "arrays")

    def __init__(self, obj: Any, arrays: bool = False) -> None:
        self.obj = obj
        self.before = dict(obj.__dict__)
        self.arrays = (
            {
                name: value.copy()
                for name, value in self.before.items()
                if name.endswith("_") and isinstance(value, np.ndarray)
            }
            if arrays
            else None
        )

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        if kind is not None:
            self.restore()
        return False

    def restore(self) -> None:
        """Put ``obj``'s attributes (and, with ``arrays``, their contents) back as they were."""
        self.obj.__dict__.clear()
        self.obj.__dict__.update(self.before)
        for name, value in (self.arrays or {}).items():
            np.copyto(self.before[name], value)


@functools.cache
def overrides_before(cls: type, methods: tuple[str, ...], anchor: str) -> bool:
    """Whether class ``cls`` takes one of ``methods`` from a class that comes before the one it
    takes ``anchor`` from in its method resolution order (a subclass of it, or a mixin put
    first): compiled code that stands in for ``methods`` next to ``anchor`` would not run that
    override."""
    mro = cls.__mro__

    def owner(name: str) -> int:
        return next(i for i, c in enumerate(mro) if name in vars(c))

    return any(owner(name) < owner(anchor) for name in methods)


def in_olboost(module: str) -> bool:
    """Whether the module named ``module`` is olboost or one of its submodules."""
    return module == "olboost" or module.startswith("olboost.")


def _same(a: Any, b: Any) -> bool:
    """Whether two parameter values are equal (``False`` where comparing them fails): a list
    and a tuple by their items, and a bool never the 0 or 1 it equals (``classes=[False,
    True]`` names other classes than ``[0, 1]``: :func:`olboost.feedback.is_bool`)."""
    if a is b:
        return True
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool | np.bool_) != isinstance(b, bool | np.bool_):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _flat_params(estimator: Any, new_attrs: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """River's nested ``{"committee": {"grace_period": ...}}`` as ``set_params``'s
    ``committee__grace_period``."""
    if not isinstance(new_attrs, dict):
        raise TypeError(f"mutate takes a dict of new values, got {type(new_attrs).__name__}")
    flat: dict[str, Any] = {}
    for name, value in new_attrs.items():
        inner = getattr(estimator, name, None)
        if inner is None and isinstance(estimator, Estimator):
            inner = estimator._default_estimator(name)  # set_params creates it (_nested_target)
        if isinstance(value, dict) and isinstance(inner, Estimator):
            flat.update(_flat_params(inner, value, f"{prefix}{name}__"))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def _resembling(name: str, names: list[str]) -> str | None:
    """The one of ``names`` that ``name`` abbreviates or most resembles, if any."""
    starting = [n for n in names if n.startswith(name)]
    if len(starting) == 1:
        return starting[0]
    close = difflib.get_close_matches(name, names, 1)
    return close[0] if close else None


#: The constructors :func:`_naming_init` made (a user's ``functools.wraps`` of one copies its
#: attributes, so no attribute can tell them apart).
_NAMING_INITS: weakref.WeakSet[Callable[..., None]] = weakref.WeakSet()


def _no_parameter(owner: str, unknown: list[str], names: list[str]) -> ValueError:
    """The ``ValueError`` for parameters ``unknown`` that ``owner``, whose parameters are
    ``names``, does not have (``set_params`` or ``clone``), with the one each most resembles."""
    hints = [
        f"{name!r} (did you mean {close!r}?)" if (close := _resembling(name, names)) else repr(name)
        for name in unknown
    ]
    noun = "parameter" if len(unknown) == 1 else "parameters"
    return ValueError(f"{owner} has no {noun} {', '.join(hints)}; its parameters are {names}")


def _unfit_call(name: str, detail: str, keyword: str | None) -> TypeError:
    """The ``TypeError`` of a constructor call that does not fit the signature: ``detail`` is
    what does not fit, ``keyword`` the unknown keyword if that is it (kept on the error, for a
    constructor that passed the caller's keywords on to name the caller's class)."""
    error = TypeError(f"{name}() {detail}")
    error._olboost_unfit = (detail, keyword)  # type: ignore[attr-defined]
    return error


def _naming_init(init: Callable[..., None], owner: type) -> Callable[..., None]:
    """``owner``'s constructor ``init``, raising on a call that does not fit its signature a
    ``TypeError`` that names the class the caller constructed and, for a misspelt keyword, the
    parameter it resembles (Python names the class that defines ``__init__``:
    ``OvaAdaBoostOL(lerners=3)`` said ``AdaBoostOLM.__init__() got an unexpected keyword
    argument``). A call that fits costs nothing more: the arguments are bound to the signature
    only once ``init`` raised a ``TypeError``, which Python raises before the body runs when the
    call does not fit."""
    signature = inspect.signature(init)
    names = [p.name for p in signature.parameters.values() if p.name != "self"]

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        # the class the caller constructed where this is its constructor (inherited, as
        # OvaAdaBoostOL's), else the class whose constructor a body called badly
        name = type(self).__name__ if type(self).__init__ is wrapper else owner.__name__
        try:
            init(self, *args, **kwargs)
        except TypeError as error:
            inner = getattr(error, "_olboost_unfit", None)
            if inner is not None:
                # a keyword of this call, passed on by a constructor taking **kwargs (or
                # written with functools.wraps): this call's class; else a body's bad call
                if inner[1] is None or inner[1] not in kwargs:
                    raise
                raise _unfit_call(name, *inner) from None
            try:
                signature.bind(self, *args, **kwargs)
            except TypeError as unfit:
                problem = str(unfit)
            else:
                raise  # raised by the body, for a value
            unknown = next((key for key in kwargs if key not in names), None)
            close = _resembling(unknown, names) if unknown is not None else None
            hint = f" (did you mean {close!r}?)" if close else ""
            detail = f"{problem}{hint}; its parameters are {', '.join(names)}"
            raise _unfit_call(name, detail, unknown) from None

    _NAMING_INITS.add(wrapper)
    return wrapper


def _wrap_own_init(cls: type) -> None:
    """Make ``cls``'s own constructor, if it has one, a :func:`_naming_init` (once)."""
    init = vars(cls).get("__init__")
    if inspect.isfunction(init) and init not in _NAMING_INITS:
        cls.__init__ = _naming_init(init, cls)  # type: ignore[misc]


class Estimator:
    """Base class: parameters from ``__init__``, ``clone``, ``repr`` and declared validation."""

    #: name -> constraint object with ``check(name, value)`` raising ``TypeError``/``ValueError``.
    _param_constraints: dict[str, Any] = {}
    #: The parameters that ``set_params`` refuses to change once the estimator has started
    #: (:attr:`_started`), because its learned state was made from them; ``None``: every one,
    #: nested ones included. ``_noun`` names the estimator in the refusal.
    _fixed_once_started: tuple[str, ...] | None = ()
    #: Parameters that may change once started even when every other one is fixed: they change
    #: how the estimator runs, not what it learns (a committee's ``n_threads``). Set on a model's
    #: sub-estimator (``committee__n_threads``), they reach its started twin (``committee_``).
    _live_once_started: tuple[str, ...] = ()
    _noun = "model"

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        # each class's own constructor, wrapped at the first construction rather than when the
        # class is made, when a dataclass has none yet (its decorator writes it after); Python
        # looks the constructor up after __new__. One a class inherits is named by the wrapper
        # it inherits (as type(self)), and a class without one gets none planted.
        for klass in cls.__mro__:
            if klass is Estimator:
                break
            _wrap_own_init(klass)
        if (args or kwargs) and cls.__init__ is object.__init__:
            # object.__init__ says so only for a class without its own __new__
            raise TypeError(f"{cls.__name__}() takes no arguments")
        return super().__new__(cls)

    @property
    def _started(self) -> bool:
        """Whether the estimator has learned state (made from its parameters)."""
        return False

    def __setstate__(self, state: dict[str, Any]) -> None:
        # joblib.load(..., mmap_mode="r") restores arrays as read-only memory maps: learning
        # then failed inside a kernel (Numba cannot write them) after the model had changed,
        # and predicting compiled every kernel again for read-only arrays. Those are copied;
        # the arrays of a plain pickle are writable and kept as they are. The names interned,
        # as pickle's default does, so that the model pickles to the same bytes again.
        writable = _writable_arrays(state, {})
        self.__dict__.update((sys.intern(name), value) for name, value in writable.items())

    def _none_stands_for(self, name: str) -> Any:
        """A new object of what a parameter ``name`` of ``None`` stands for (a booster's
        default committee, say); ``None`` if it stands for none (see :meth:`_nested_target`)."""
        return None

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def _get_params(self) -> dict[str, Any]:
        """The constructor arguments of this estimator, as given."""
        return {name: getattr(self, name) for name in self._param_names()}

    def clone(
        self, new_params: dict[str, Any] | None = None, include_attributes: bool = False
    ) -> Self:
        """A fresh, unfitted copy built from the parameters (deep-copied), optionally overridden.

        ``include_attributes=True`` also deep-copies every attribute that is not a parameter (the
        learned state), as River's ``clone`` does (River's pipelines pass it along). A new value
        ``(cls, params)`` (River's form for a sub-estimator, as ``river.utils.expand_param_grid``
        writes it) is the current sub-estimator cloned with ``params`` if it is a ``cls``, else
        ``cls(**params)``."""
        params = {k: copy.deepcopy(v) for k, v in self._get_params().items()}
        unknown = sorted(set(new_params or {}) - set(params))
        if unknown:
            raise _no_parameter(type(self).__name__, unknown, list(params))
        nested_new: list[str] = []  # given in River's (cls, params) form
        live: dict[str, dict[str, Any]] = {}  # those that change only what may change live
        for name, value in (new_params or {}).items():
            if (
                isinstance(value, tuple)
                and len(value) == 2
                and inspect.isclass(value[0])
                and isinstance(value[1], dict)
            ):
                nested_new.append(name)
                if isinstance(getattr(self, name), value[0]) and self._live_change(name, value[1]):
                    live[name] = value[1]
                current = getattr(self, name)
                value = (
                    current.clone(value[1])
                    if isinstance(current, value[0]) and hasattr(current, "clone")
                    else value[0](**value[1])
                )
            else:
                # deep-copied as River's clone does: the models expand_param_grid builds from
                # one value would share one committee, and a set_params on one would reach
                # into another (past its fixed-once-started parameters)
                value = copy.deepcopy(value)
            params[name] = value
        if include_attributes and self._started and new_params:
            # the learned state copied below was made from these (set_params refuses them too):
            # an OnlineMBBM cloned with fewer learners indexed its tables past their end
            self._refuse_fixed_changes(
                {n: v for n, v in params.items() if n in new_params and n not in nested_new},
                [name for name in nested_new if name not in live],
            )
        clone = type(self)(**params)
        if include_attributes:
            # the state pickle would save: it leaves out the caches of compiled code (which
            # deepcopy cannot copy, and which are rebuilt when needed)
            state = self.__getstate__() or {}
            for name, value in state.items():
                if name not in params:
                    setattr(clone, name, copy.deepcopy(value))
            if clone._started:
                for name, sub in live.items():  # the started twin runs as its parameter says
                    clone.__dict__[name + "_"].set_params(**sub)
                # the new values against the learned state, as set_params checks them (a top-k
                # booster's rho against the labels it took from the data)
                clone._validate_params()
                clone._derive_from_params()
        return clone

    # scikit-learn's parameter protocol, so that ``sklearn.base.clone``, ``set_params`` with
    # ``booster__learners=...`` and ``GridSearchCV`` reach into olboost estimators
    # (:mod:`olboost.sklearn`); the parameters stay those of ``__init__``.

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters, as scikit-learn's ``get_params``: ``name -> value``, and with ``deep``
        also ``name__sub -> value`` for each parameter of a parameter that has parameters
        itself (a booster's committee)."""
        params = self._get_params()
        if deep:
            for name, value in list(params.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    params.update({f"{name}__{k}": v for k, v in value.get_params().items()})
        return params

    def set_params(self, **params: Any) -> Self:
        """Set parameters as scikit-learn's ``set_params`` does (``name=value``, or
        ``name__sub=value`` for a parameter of a parameter) and return ``self``.

        Every new value is validated first, as at construction: a bad one raises naming the
        parameter, and nothing is set. Learned state is not touched (see ``clone``); what a
        pickle leaves out (caches derived from the parameters, such as an edge's potential
        tables) is dropped and rebuilt on demand, so that the model goes on as its pickle would."""
        direct, nested = self._checked_new_params(params)
        for name, value in direct.items():
            setattr(self, name, value)
        for name, sub in nested.items():
            self._nested_target(name).set_params(**sub)
            if self._started and self._live_change(name, sub):
                self.__dict__[name + "_"].set_params(**sub)
        self._drop_caches()
        if self._started:
            self._derive_from_params()
        return self

    @property
    def _mutable_attributes(self) -> set[str]:
        """River's: the parameters :meth:`mutate` may change, those not fixed once the
        estimator has started (:attr:`_fixed_once_started`)."""
        fixed = self._fixed_once_started
        if fixed is None:
            return set(self._live_once_started) & set(self._param_names())
        return {name for name in self._param_names() if name not in fixed}

    def mutate(self, new_attrs: dict[str, Any]) -> None:
        """River's ``mutate``: change parameters in place, a dict value setting the parameters of
        a parameter that is an estimator, as :meth:`set_params` does (every value validated
        first, all or nothing, those fixed once started refused then, derived state updated).
        River's own set the attributes unchecked, and olboost declared none mutable: every
        ``mutate`` failed."""
        self.set_params(**_flat_params(self, new_attrs))

    def _derive_from_params(self) -> None:
        """Recompute the learned-state values that are functions of the parameters alone (an
        Adaboost.OLM step size and bound, OnlineMBBM's weight bounds): at start, and after
        ``set_params`` or ``clone`` changed a parameter of a started estimator, which then goes
        on with the new value rather than showing it while using the old one."""

    def _drop_caches(self) -> None:
        """Forget the attributes ``__getstate__`` leaves out of a pickle: the caches."""
        kept = self.__getstate__() or {}
        for name in [name for name in self.__dict__ if name not in kept]:
            del self.__dict__[name]

    def _set_params_at_fit(self, params: dict[str, Any]) -> None:
        """:meth:`set_params` as scikit-learn's convention has it, for the adapters of
        :mod:`olboost.sklearn`: the names are checked now (a misspelt one raises, and nothing
        is set), the values when the adapter fits, whose clone of this estimator constructs it
        (and a learner's start checks them again, :meth:`_check_params`). ``GridSearchCV``
        sets a candidate's values outside the error handling that scores a failed fit as
        ``error_score``: a bad value refused here ended the whole search, where scikit-learn's
        own estimators get NaN for that candidate. A started estimator is set as
        :meth:`set_params` sets it, checked."""
        if self._started:
            self.set_params(**params)
            return
        direct, nested = self._checked_new_params(params, values=False)
        for name, value in direct.items():
            setattr(self, name, value)
        for name, sub in nested.items():
            target = self._nested_target(name)
            if isinstance(target, Estimator):
                target._set_params_at_fit(sub)
            else:
                target.set_params(**sub)
        self._drop_caches()

    def _nested_target(self, name: str) -> Any:
        """The value of parameter ``name`` whose own parameters are being set: for ``None``
        that stands for a default estimator (a booster's committee), that default, created
        and held in ``name`` (as the scikit-learn adapters create their default booster), so
        that ``committee__grace_period`` can be set, and searched over, on a default booster."""
        target = getattr(self, name)
        if target is None:
            target = self._default_estimator(name)
            if target is not None:
                setattr(self, name, target)
        return target

    def _default_estimator(self, name: str) -> Estimator | None:
        """A new default estimator that parameter ``name`` of ``None`` stands for
        (:meth:`_none_stands_for`), or ``None`` if it stands for no estimator."""
        default = self._none_stands_for(name)
        return default if isinstance(default, Estimator) else None

    def _checked_new_params(
        self, params: dict[str, Any], values: bool = True
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Split ``set_params``'s arguments into direct and nested ones and validate them all
        (the names alone without ``values``); changes nothing."""
        names = self._param_names()
        direct: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in names:
                raise _no_parameter(type(self).__name__, [name], names)
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                direct[name] = value
        new = {**self._get_params(), **direct}
        for name, sub in nested.items():
            target = new[name]
            if target is None:
                target = self._default_estimator(name)  # created when set (_nested_target)
            if isinstance(target, Estimator):
                target._checked_new_params(sub, values)
            elif not hasattr(target, "set_params"):
                raise ValueError(
                    f"{type(self).__name__}.{name} is {target!r}, which has no parameters to "
                    f"set ({sorted(sub)})"
                )
        if values:
            type(self)(**new)  # validates the direct values as a construction does
        if self._started:
            live = [name for name, sub in nested.items() if self._live_change(name, sub)]
            self._refuse_fixed_changes(direct, [name for name in nested if name not in live])
        return direct, nested

    def _live_change(self, name: str, sub: dict[str, Any]) -> bool:
        """Whether setting ``sub`` inside the parameter ``name`` changes only what its started
        twin ``name_`` may change (:attr:`_live_once_started`)."""
        twin = self.__dict__.get(name + "_")
        return isinstance(twin, Estimator) and set(sub) <= twin._mutable_attributes

    def _refuse_fixed_changes(self, direct: dict[str, Any], nested: list[str]) -> None:
        """Raise if new values (``direct``, and the parameters ``nested`` set inside) change a
        parameter of :attr:`_fixed_once_started`."""
        fixed = self._fixed_once_started
        changed = [
            name
            for name, value in direct.items()
            if (fixed is None or name in fixed)
            and name not in self._live_once_started
            and not _same(value, getattr(self, name))
        ]
        changed += [name for name in nested if fixed is None or name in fixed]
        if changed:
            raise ValueError(
                f"{type(self).__name__}: {', '.join(sorted(changed))} cannot change once "
                f"the {self._noun} has started (its learned state was made from "
                f"{'it' if len(changed) == 1 else 'them'}); clone it for a fresh "
                f"{self._noun} with other parameters"
            )

    def __sklearn_clone__(self) -> Estimator:
        """``sklearn.base.clone(estimator)`` is ``estimator.clone()``."""
        return self.clone()

    def _validate_params(self) -> None:
        """Check every declared constraint; raise naming the first offending parameter."""
        for name, constraint in self._param_constraints.items():
            constraint.check(f"{type(self).__name__}.{name}", getattr(self, name))

    @property
    def _is_stochastic(self) -> bool:
        return "seed" in self._param_names()

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        """Constructor arguments used by the shared check suite (:mod:`olboost.checks`)."""
        yield {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._get_params().items())
        return f"{type(self).__name__}({args})"

    def __str__(self) -> str:
        # as without River: River's ``Base.__str__`` (the class name) must not win in subclasses
        # that are also River estimators
        return repr(self)


# --------------------------------------------------------------------------------------------------
# Declarative parameter constraints
# --------------------------------------------------------------------------------------------------


class Interval:
    """A real or integer number in an interval; ``closed`` says which ends are included, and
    ``why`` (if given) why the interval is what it is, in the error."""

    def __init__(
        self,
        lo: float | None,
        hi: float | None,
        *,
        closed: str = "both",
        integer: bool = False,
        allow_none: bool = False,
        why: str | None = None,
    ):
        self.lo, self.hi, self.closed, self.integer, self.allow_none = (
            lo,
            hi,
            closed,
            integer,
            allow_none,
        )
        self.why = why

    def check(self, name: str, value: Any) -> None:
        if value is None and self.allow_none:
            return
        kind = numbers.Integral if self.integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            what = "an integer" if self.integer else "a real number"
            raise TypeError(f"{name} must be {what}, got {value!r}")
        if value != value:
            raise ValueError(f"{name} must not be NaN")
        # compared as a Python number: a NumPy float32 met a bound of 1e100 cast to float32, a
        # RuntimeWarning ("overflow encountered in cast") for a value that was fine
        v = value.item() if isinstance(value, np.generic) else value
        lo_ok = self.lo is None or (
            v >= self.lo if self.closed in ("both", "left") else v > self.lo
        )
        hi_ok = self.hi is None or (
            v <= self.hi if self.closed in ("both", "right") else v < self.hi
        )
        if not (lo_ok and hi_ok):
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            lo = "-inf" if self.lo is None else self.lo
            hi = "inf" if self.hi is None else self.hi
            why = "" if self.why is None else f" ({self.why})"
            raise ValueError(f"{name} must be in {left}{lo}, {hi}{right}{why}, got {value!r}")


class Range:
    """A ``(low, high)`` pair of numbers with ``low <= high``, each inside ``bounds``."""

    def __init__(self, bounds: Interval):
        self.bounds = bounds

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, tuple | list) or len(value) != 2:
            raise TypeError(f"{name} must be a (low, high) pair, got {value!r}")
        self.bounds.check(f"{name}[0]", value[0])
        self.bounds.check(f"{name}[1]", value[1])
        if value[0] > value[1]:
            raise ValueError(f"{name} must have low <= high, got {value!r}")


class OneOf:
    """One of a fixed set of values."""

    def __init__(self, *options: Any):
        self.options = options

    def check(self, name: str, value: Any) -> None:
        if value not in self.options:
            raise ValueError(f"{name} must be one of {list(self.options)}, got {value!r}")


class InstanceOf:
    """An instance of the given type(s), or ``None`` when ``allow_none``; optionally a predicate."""

    def __init__(
        self,
        types: type | tuple[type, ...],
        *,
        allow_none: bool = False,
        predicate: Callable[[Any], str | None] | None = None,
    ):
        self.types, self.allow_none, self.predicate = types, allow_none, predicate

    def check(self, name: str, value: Any) -> None:
        if value is None and self.allow_none:
            return
        if not isinstance(value, self.types):
            types = self.types if isinstance(self.types, tuple) else (self.types,)
            # a union (int | str) or a nested tuple has no __name__: its repr says it
            allowed = [getattr(t, "__name__", repr(t)) for t in types]
            allowed += ["None"] if self.allow_none else []
            raise TypeError(
                f"{name} must be of type {' or '.join(allowed)}, got {type(value).__name__}"
            )
        if self.predicate is not None:
            problem = self.predicate(value)
            if problem:
                raise ValueError(f"{name} {problem}")


def _writable_arrays(value: Any, copies: dict[int, Any]) -> Any:
    """``value`` with every read-only NumPy array in it (in tuples, named ones included, lists,
    dicts and dataclasses) replaced by a writable copy, one copy per array (``copies``: by
    ``id``), so that an array held twice is still one; the containers are new only where
    something changed."""
    if isinstance(value, np.ndarray):
        if value.flags.writeable:
            return value
        if id(value) not in copies:
            copies[id(value)] = np.array(value)
        return copies[id(value)]
    if isinstance(value, tuple | list):
        items = [_writable_arrays(item, copies) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if isinstance(value, list):
            return items
        return type(value)._make(items) if hasattr(value, "_make") else type(value)(items)
    if type(value) is dict:
        changed = {key: _writable_arrays(item, copies) for key, item in value.items()}
        if all(changed[key] is item for key, item in value.items()):
            return value
        return changed
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # a committee's per-learner setup: its fields, rebuilt if any changed
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
        changed = {name: _writable_arrays(item, copies) for name, item in fields.items()}
        if all(changed[name] is item for name, item in fields.items()):
            return value
        return dataclasses.replace(value, **changed)
    return value
