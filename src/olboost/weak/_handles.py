"""A compiled committee behind an opaque handle: what the compiled driver and a mix hold of it.

A compiled committee is a pair of kernels over a state record (:class:`~olboost.weak.base.
CompiledKernels`), and a record's Numba type names every array it holds: ~100 for a tree
committee, ~170 for a mix of trees and rankers, nested. Code that takes the record as an argument
is compiled for that type, with an entry wrapper that unboxes every array: the compiled driver of
every (booster, committee) combination and the mixes' own kernels took most of the suite's
compile time (3-6 s each for one committee, 10-28 s for a mix, on a slow machine), for loops of
a few lines.

:func:`bind` hides the record. Its :class:`Handle` is one 64-bit address of a buffer holding the
committee's kernels (first-class functions) and state, and its kernels are two small trampolines,
:func:`predict_via` and :func:`learn_via`, compiled per state type, that load the buffer and call
the committee's own. The trampolines are handed out as first-class functions of the *opaque*
handle type :data:`OPAQUE` (one type for every committee: a handle's data is one address
whatever it points to), so the driver is compiled once per booster, and a mix of handles
(:mod:`olboost.weak._mixed_kernels`) once in all. Per state type only the trampolines and
:func:`_pack` (which unboxes the record once, into the buffer) are compiled.

The buffer holds references to the state's arrays (taken by :func:`_pack`, dropped by
:func:`_release` when the handle is collected), so a handle stays valid for as long as it lives;
like the record it describes, it is out of date once the committee makes room. The trampolines
pass the state on borrowed, and call the committee's kernel through its Numba entry, so that an
exception it raises propagates (:func:`_install_addresses` tells Numba that entry).

Hand-written because Numba has no type-erased value: a first-class function's signature names its
arguments' types, and so does any record holding one. Measured on the test suite (fresh clone,
three workers on two cores, ``benchmarks/compile_events.py``): 285 s of compiling in the workers
before, 168 s after; the driver 28 compilations (56 s) before, 11 (3 s) after.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, registry
from numba.core.extending import (
    NativeValue,
    intrinsic,
    models,
    register_model,
    typeof_impl,
    unbox,
)
from numba.experimental import function_type

from olboost._numba_cache import compile_for_arguments, layout_key

__all__ = [
    "OPAQUE",
    "Binding",
    "FirstClass",
    "Handle",
    "StateHandle",
    "bind",
    "binding",
    "first_class",
    "learn_via",
    "predict_via",
]


class StateHandle(types.Type):
    """Numba type of a :class:`Handle`: with the type of what its buffer holds (a tuple of the
    committee's two kernels and its state) for the trampolines, or ``None`` (:data:`OPAQUE`) for
    code that only passes it on."""

    def __init__(self, bundle: Any = None):
        self.bundle = bundle
        super().__init__(name="StateHandle" if bundle is None else f"StateHandle({bundle})")

    @property
    def key(self) -> Any:
        return self.bundle


#: The type every :class:`Handle` has outside its trampolines.
OPAQUE = StateHandle()


@register_model(StateHandle)
class _HandleModel(models.PrimitiveModel):
    def __init__(self, dmm: Any, fe_type: Any):
        super().__init__(dmm, fe_type, ir.IntType(64))


class Handle:
    """A compiled committee's state behind one address (see the module docstring): ``address``
    of the buffer that holds the committee's kernels and (references to) its state."""

    __slots__ = ("__weakref__", "address", "_buffer", "_keep")

    def __init__(self, buffer: np.ndarray, keep: tuple):
        self._buffer = buffer
        self.address = buffer.ctypes.data
        # the first-class functions in the buffer are addresses of these objects, and a mix's
        # state holds its members' handles as addresses
        self._keep = keep


class _Address(NamedTuple):
    """What :func:`_release` is called with once a :class:`Handle` is gone: its address."""

    address: int


@typeof_impl.register(Handle)
def _typeof_handle(val: Handle, c: Any) -> StateHandle:
    return OPAQUE


@unbox(StateHandle)
def _unbox_handle(typ: Any, obj: Any, c: Any) -> NativeValue:
    value = cgutils.alloca_once_value(c.builder, ir.Constant(ir.IntType(64), 0))
    address = c.pyapi.object_getattr_string(obj, "address")
    with c.builder.if_then(cgutils.is_not_null(c.builder, address), likely=True):
        c.builder.store(c.pyapi.long_as_longlong(address), value)
        c.pyapi.decref(address)
    return NativeValue(c.builder.load(value), is_error=c.pyapi.c_api_error())


def _bundle_pointer(context: Any, builder: Any, bundle: Any, address: Any) -> Any:
    model = context.data_model_manager[bundle]
    return model, builder.inttoptr(address, model.get_data_type().as_pointer())


def _member_call(handle: Any, args: tuple, member: int, at: int) -> Any:
    """Typing and code of a call of the kernel at ``member`` of a typed handle's bundle, with
    the bundle's state inserted at position ``at`` of ``args``, through the kernel's own code
    (an exception it raises propagates). The state is read from the buffer and passed on
    borrowed, as any argument is: no reference counting of its ~100 arrays at every call (which
    took about a microsecond per example of a small tree committee)."""
    if not isinstance(handle, StateHandle) or handle.bundle is None:
        return None
    bundle = handle.bundle
    kernel = bundle.types[member].signature
    expected = list(kernel.args)
    if expected.pop(at) != bundle.types[2] or expected != list(args):
        return None

    def codegen(context: Any, builder: Any, sig: Any, values: Any) -> Any:
        model, pointer = _bundle_pointer(context, builder, bundle, values[0])
        value = model.load_from_data_pointer(builder, pointer)
        # the kernel's Numba entry (a FirstClass always gives one), and the state
        jit_address = builder.extract_value(builder.extract_value(value, member), 2)
        arguments = list(values[1:])
        arguments.insert(at, builder.extract_value(value, 2))
        function = context.call_conv.get_function_type(kernel.return_type, kernel.args)
        status, result = context.call_conv.call_function(
            builder,
            builder.bitcast(jit_address, function.as_pointer()),
            kernel.return_type,
            kernel.args,
            arguments,
        )
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return kernel.return_type(handle, *args), codegen


@intrinsic
def _call_predict(typingctx: Any, handle: Any, x: Any, H: Any) -> Any:
    return _member_call(handle, (x, H), 0, 1)


@intrinsic
def _call_learn(typingctx: Any, handle: Any, x: Any, weights: Any, demand: Any) -> Any:
    return _member_call(handle, (x, weights, demand), 1, 2)


@intrinsic
def _store(typingctx: Any, bundle: Any, address: Any) -> Any:
    """Write ``bundle`` into the buffer at ``address``, which holds references to its arrays
    from then on."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        value, where = args
        model, pointer = _bundle_pointer(context, builder, bundle, where)
        builder.store(model.as_data(builder, value), pointer)
        context.nrt.incref(builder, bundle, value)
        return context.get_dummy_value()

    return types.none(bundle, address), codegen


@intrinsic
def _drop(typingctx: Any, handle: Any) -> Any:
    """Drop the references a typed handle's buffer holds."""
    if not isinstance(handle, StateHandle) or handle.bundle is None:
        return None
    bundle = handle.bundle

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        model, pointer = _bundle_pointer(context, builder, bundle, args[0])
        context.nrt.decref(builder, bundle, model.load_from_data_pointer(builder, pointer))
        return context.get_dummy_value()

    return types.none(handle), codegen


class Bundle(NamedTuple):
    """What a handle's buffer holds: the committee's kernels (first-class functions) and state."""

    predict: Any
    learn: Any
    state: Any


@numba.njit(cache=True)
def _pack(predict: Any, learn: Any, state: Any, address: int) -> None:
    _store(Bundle(predict, learn, state), address)


@numba.njit(cache=True)
def _release(handle: Any) -> None:
    _drop(handle)


@numba.njit(cache=True, nogil=True)
def predict_via(x: np.ndarray, handle: Any, H: np.ndarray) -> int:
    """The committee's ``predict`` on the state behind ``handle``."""
    return _call_predict(handle, x, H)


@numba.njit(cache=True, nogil=True)
def learn_via(x: np.ndarray, weights: np.ndarray, handle: Any, demand: np.ndarray) -> int:
    """The committee's ``learn`` on the state behind ``handle``."""
    return _call_learn(handle, x, weights, demand)


#: Numba types of the arguments every compiled committee kernel takes.
ROW = types.Array(types.float64, 1, "C")
MATRIX = types.Array(types.float64, 2, "C")
DEMAND = types.Array(types.int64, 1, "C")
#: The opaque trampolines' signatures: what the driver and a mix call.
PREDICT = types.int64(ROW, OPAQUE, MATRIX)
LEARN = types.int64(ROW, MATRIX, OPAQUE, DEMAND)


class FirstClass(types.WrapperAddressProtocol):
    """A compiled kernel as a first-class function of one signature (Numba's wrapper address
    protocol): what holds it is typed by the signature, not by the kernel's identity, so that
    what is compiled for the holder (a mix's kernels, the boosters' driver) is cached on disk and
    found again by the next process; its addresses are looked up once.

    ``compiled_for`` is the kernel's signature; ``declared`` the one the holder sees, when it is
    another of the same machine signature (a trampoline of a typed handle declared with the
    opaque one). Called through its own code (:func:`_install_addresses`), an exception the
    kernel raises reaches the caller."""

    def __init__(self, kernel: Any, compiled_for: Any, declared: Any = None):
        self.kernel = kernel
        self._compiled_for = compiled_for
        self._signature = compiled_for if declared is None else declared
        self._addresses: tuple[int, int] | None = None

    def signature(self) -> Any:
        return self._signature

    def _lookup(self) -> tuple[int, int]:
        if self._addresses is None:
            if tuple(self._compiled_for.args) in self.kernel.overloads:
                numba.get_num_threads()  # Numba's threading layer, which the lookup needs
            else:  # (launches it too)
                compile_for_arguments(self.kernel, self._compiled_for)
            result = self.kernel.get_compile_result(self._compiled_for)
            names = (result.fndesc.llvm_cfunc_wrapper_name, result.fndesc.llvm_func_name)
            self._addresses = tuple(map(result.library.get_pointer_to_function, names))
        return self._addresses

    def __wrapper_address__(self) -> int:
        return self._lookup()[0]

    def __jit_address__(self) -> int:
        return self._lookup()[1]


def first_class(predict: Any, learn: Any, state_type: Any) -> tuple[FirstClass, FirstClass]:
    """A committee's ``predict`` and ``learn`` as first-class functions over a state of Numba
    type ``state_type``."""
    return (
        FirstClass(predict, types.int64(ROW, state_type, MATRIX)),
        FirstClass(learn, types.int64(ROW, MATRIX, state_type, DEMAND)),
    )


def _install_addresses() -> None:
    """Let Numba take a :class:`FirstClass`'s addresses from it when it unboxes one (it finds
    ``_get_wrapper_address`` and ``_get_jit_address`` by name in its module at every unboxing).

    * ``_get_jit_address`` knows only dispatchers: without the kernel's own entry, a call goes
      through the C wrapper, which prints an exception and returns 0;
    * ``_get_wrapper_address`` first checks that the signature is precise, walking all its
      types, those of a committee's state included: about two thirds of the time of putting a
      state behind a handle, which a mix's one-example path does four times per call."""
    getters = {
        "_get_wrapper_address": lambda func: func.__wrapper_address__(),
        "_get_jit_address": lambda func: func.__jit_address__(),
    }
    for name, get in getters.items():
        original = getattr(function_type, name)
        if getattr(original, "olboost", False):
            continue

        def address(func: Any, sig: Any, get: Any = get, original: Any = original) -> int:
            if isinstance(func, FirstClass):
                return get(func)
            return original(func, sig)

        address.olboost = True  # type: ignore[attr-defined]
        setattr(function_type, name, address)


_install_addresses()


class Binding(NamedTuple):
    """What :func:`binding` compiles once per committee kernels and state type: :meth:`bind`
    puts a state of that type behind a handle."""

    functions: tuple  # the committee's kernels as first-class functions (FirstClass)
    pack: Any  # _pack's entry point for them
    release: Any  # _release's for the typed handle
    size: int  # bytes of the buffer
    predict: FirstClass  # the trampolines, declared with the opaque handle
    learn: FirstClass

    def bind(self, state: Any) -> Any:
        """The committee on ``state`` behind a :class:`Handle`: a
        :class:`~olboost.weak.base.CompiledKernels` of the trampolines (typed by
        :data:`OPAQUE`) and the handle, valid as long as ``state`` is (until the committee makes
        room; a committee's state keeps its type when it does)."""
        from olboost.weak.base import CompiledKernels

        buffer = np.zeros(self.size, dtype=np.uint8)
        handle = Handle(buffer, (self.functions, state))
        self.pack(*self.functions, state, handle.address)
        # the finalizer holds the buffer until it has dropped the references in it (not at
        # exit: the process's memory goes then anyway)
        weakref.finalize(handle, _release_buffer, self.release, buffer).atexit = False
        return CompiledKernels(self.predict, self.learn, handle)


_bindings: dict[tuple, Binding] = {}
#: The last kernels :func:`binding` was asked about and their binding, as one pair (a thread
#: reads one pair or another, never half of each).
_last: list[tuple] = [(None, None)]


def _entry_point(kernel: Any, arg_types: tuple) -> Any:
    compile_for_arguments(kernel, types.none(*arg_types))
    return kernel.overloads[tuple(arg_types)].entry_point


def binding(kernels: Any) -> Binding:
    """The :class:`Binding` of ``kernels`` (a :class:`~olboost.weak.base.CompiledKernels`):
    compiled (or loaded from Numba's cache) once per process for their state's type. Asked
    again for the same ``kernels`` object (as the driver's setup does), answered without taking
    the state's layout key again (13 us for a tree committee's)."""
    last = _last[0]
    if last[0] is kernels:
        return last[1]
    key = (kernels.predict, kernels.learn, layout_key(kernels.state))
    found = _bindings.get(key)
    if found is None:
        state_type = numba.typeof(kernels.state)
        functions = first_class(kernels.predict, kernels.learn, state_type)
        function_types = tuple(types.FunctionType(f.signature()) for f in functions)
        bundle = types.NamedTuple((*function_types, state_type), Bundle)
        typed = StateHandle(bundle)
        context = registry.cpu_target.target_context
        size = context.get_abi_sizeof(context.data_model_manager[bundle].get_data_type())
        pack, release, predict, learn = _KERNELS if _cacheable(state_type) else _uncached()
        found = _bindings[key] = Binding(
            functions,
            _entry_point(pack, (*function_types, state_type, types.int64)),
            _entry_point(release, (typed,)),
            size,
            FirstClass(predict, types.int64(ROW, typed, MATRIX), PREDICT),
            FirstClass(learn, types.int64(ROW, MATRIX, typed, DEMAND), LEARN),
        )
    _last[0] = (kernels, found)
    return found


_KERNELS = (_pack, _release, predict_via, learn_via)
_UNCACHED: list[tuple] = []


def _uncached() -> tuple:
    """:data:`_KERNELS` compiled without Numba's disk cache (made once per process)."""
    if not _UNCACHED:
        _UNCACHED.append(tuple(numba.njit(nogil=True)(k.py_func) for k in _KERNELS))
    return _UNCACHED[0]


#: Modules whose types any process can unpickle from a cache index.
_PORTABLE = ("numba", "numpy", "olboost", "builtins", "collections")


def _cacheable(numba_type: Any) -> bool:
    """Whether ``numba_type`` names only classes of :data:`_PORTABLE` modules. A committee of a
    user's, its state a record class of the user's module, is compiled for here without the disk
    cache: Numba keeps one index per function, and an entry naming a class another process
    cannot import makes that process find the whole index unreadable and replace it (olboost's
    own entries with it)."""
    classes = [type(numba_type), getattr(numba_type, "instance_class", None)]
    for cls in classes:
        if cls is not None and cls.__module__.split(".")[0] not in _PORTABLE:
            return False
    children = list(getattr(numba_type, "types", ()) or ())
    if isinstance(numba_type, types.FunctionType):
        signature = numba_type.signature
        children += [*signature.args, signature.return_type]
    return all(_cacheable(child) for child in children)


def bind(kernels: Any) -> Any:
    """``kernels`` (a :class:`~olboost.weak.base.CompiledKernels`) as the same committee behind a
    :class:`Handle` (:meth:`Binding.bind`)."""
    return binding(kernels).bind(kernels.state)


def _release_buffer(release: Any, buffer: np.ndarray) -> None:
    release(_Address(buffer.ctypes.data))
