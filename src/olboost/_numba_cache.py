"""Numba's on-disk cache, made safe for several processes that share it.

olboost's kernels are ``numba.njit(cache=True)``: compiled once, then loaded from disk. Numba's
cache is not safe for two processes compiling the same function at once (a Dask sweep's workers,
the processes of ``olboost serve``, pytest-xdist's workers): saving an overload reads the
function's index, picks the first data-file number that index does not list, and writes index and
data back. Two processes saving different specialisations of one function can both take
``<name>.1.nbc``, and the index then points one signature at the other's machine code, which a
later run loads without checking: wrong results or a crash. A reader can also find a new index
entry before its data file is written and load a stale file of that name.

:func:`install` wraps the index's save in an exclusive and its load in a shared ``flock`` of a
lock file beside the index (``<index>.lock``), so that read-modify-write of an index and the write
of its data file are one step for every process that installed it. Nothing else changes: the same
files, the same names, the same code loaded. Numba has no such lock of its own; on systems
without ``fcntl`` (Windows) nothing is installed and Numba behaves as it always does.

Numba judges an entry fresh by the hash of its function's own source file, but the machine code
holds the callees compiled into it from other modules; :func:`install` also stamps every olboost
kernel's entry with the hash of all of olboost's modules that use Numba and of the modules they
import (:func:`package_stamp`), so that no edit leaves a stale kernel in a persistent cache (the
test suite's ``.numba_cache``, an editable install).

:func:`install` also makes processes that miss the same olboost kernel specialisation at the same
moment compile it once: one compiles, the others wait for it and load its code
(:func:`_compile_once`).

:func:`compile_for_arguments` keeps the cache from holding a kernel twice when it is both called
from Python and handed to compiled code as a first-class function.

:func:`compile_elsewhere` compiles a kernel into the cache in a second process
(:mod:`olboost._compile_worker`) while this one compiles others: a cold start uses two cores.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import os
import pickle
import re
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def _locked(cache_file: Any, exclusive: bool) -> Iterator[None]:
    path = cache_file._index_path + ".lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        try:
            # flock needs no write access: another user's lock file (0644 under umask 022, in a
            # cache the users share) still locks against its owner
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            # A read-only or missing cache directory: Numba itself will not write there either.
            yield
            return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing releases the lock


_warned: set[str] = set()


def _warn_once(kind: str, message: str) -> None:
    # once per process and kind: a bad cache would otherwise warn for each of 200 kernels
    if kind not in _warned:
        _warned.add(kind)
        # raised inside Numba's cache, which a stack level named ("numba/core/caching.py"):
        # olboost's module and word, so that a filter by module="olboost" selects it
        line = sys._getframe(1).f_lineno
        warnings.warn_explicit(
            f"olboost: {message}", RuntimeWarning, __file__, line, module=__name__, registry={}
        )


def _index_readable(cache_file: Any) -> None:
    """Remove the index of ``cache_file`` if it does not unpickle (truncated, damaged), so
    that a save writes a new one instead of failing on it (under the exclusive lock)."""
    try:
        cache_file._load_index()
    except OSError:
        raise
    except Exception as err:
        _warn_once(
            "index",
            f"damaged Numba cache index {cache_file._index_path} ({type(err).__name__}: {err}); "
            "replaced by a new one",
        )
        with contextlib.suppress(FileNotFoundError):
            os.remove(cache_file._index_path)


def _fall_back_cache_dir() -> None:
    """Give Numba a cache directory when it finds none for olboost's files (site-packages read
    only, and HOME or XDG_CACHE_HOME unwritable): every ``cache=True`` kernel would otherwise
    fail to define, and ``import olboost`` with it."""
    import tempfile

    from numba.core import caching, config

    def probe() -> None:  # a function of this file, in the package's directory
        pass

    asked = config.CACHE_DIR  # NUMBA_CACHE_DIR, if set
    try:
        impl = caching.CompileResultCacheImpl(probe)
    except RuntimeError as err:
        if "no locator available" not in str(err):
            raise  # NUMBA_CACHE_LOCATOR_CLASSES naming no class: Numba's own error
    else:
        if asked and not isinstance(impl.locator, caching.UserProvidedCacheLocator):
            # Numba passes over a NUMBA_CACHE_DIR it cannot write without a word, and caches
            # in the package's __pycache__ (a source tree, site-packages) or the user's cache
            _warn_once(
                "asked",
                f"NUMBA_CACHE_DIR={asked} is not a directory Numba can write: it caches "
                f"olboost's kernels in {impl.locator.get_cache_path()} instead",
            )
        return
    usable = False
    # Windows has no user ids (os.getuid failed the import there): a directory of its own
    if hasattr(os, "getuid"):
        path = os.path.join(tempfile.gettempdir(), f"olboost-numba-{os.getuid()}")
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            st = os.lstat(path)
            # another user's directory, or one others may write to, could hold planted code
            usable = st.st_uid == os.getuid() and not st.st_mode & 0o022 and os.path.isdir(path)
        except OSError:
            pass
    if not usable:
        path = tempfile.mkdtemp(prefix="olboost-numba-")
    config.CACHE_DIR = path
    os.environ["NUMBA_CACHE_DIR"] = path  # the compile workers' too (_compile_worker)
    unwritable = "the package's __pycache__ and the user's cache are read-only"
    if asked:
        unwritable = (
            f"NUMBA_CACHE_DIR={asked} cannot be written, nor can the package's __pycache__ "
            "or the user's cache"
        )
    _warn_once(
        "fallback",
        f"Numba finds no writable cache directory for olboost's kernels ({unwritable}): "
        f"caching them in {path}; set NUMBA_CACHE_DIR to a writable directory to choose",
    )


def install() -> bool:
    """Give Numba a cache directory if it has none for olboost (:func:`_fall_back_cache_dir`),
    stamp olboost's cache entries with all its kernel modules (:func:`package_stamp`), and
    wrap ``numba.core.caching.IndexDataCacheFile.save``, ``load`` and ``flush`` in file locks
    (once per process). A cache entry that cannot be read is a miss, and one that cannot be
    saved is left unsaved, each with a ``RuntimeWarning``: the code compiled is in memory
    either way. ``False`` where there is no ``fcntl`` (no locks).

    Raises ``ImportError`` under ``NUMBA_DISABLE_JIT``: the kernels pass compiled functions to
    one another (and read their ``py_func``), which the plain Python functions Numba leaves
    then cannot do; the import failed on an ``AttributeError`` deep in a kernel module."""
    import numba

    if numba.config.DISABLE_JIT:
        raise ImportError(
            "olboost needs Numba's compiler, and NUMBA_DISABLE_JIT is set: unset it (olboost's "
            "kernels pass compiled functions to one another, which plain Python cannot run)"
        )
    _fall_back_cache_dir()
    _stamp_with_the_package()
    if fcntl is None:  # pragma: no cover - Windows
        return False
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    if getattr(cls, "_olboost_locked", False):
        return True
    save, load, flush = cls.save, cls.load, cls.flush

    def locked_save(self: Any, key: Any, data: Any) -> None:
        with _locked(self, exclusive=True):
            try:
                _index_readable(self)
                save(self, key, data)
            except OSError as err:
                # another user's entry in a sticky /tmp, a full disk: Numba raised it
                _warn_once(
                    "save",
                    f"cannot save compiled code to the Numba cache ({err}); it is compiled "
                    "again in each process",
                )

    def locked_load(self: Any, key: Any) -> Any:
        with _locked(self, exclusive=False):
            try:
                return load(self, key)
            except Exception as err:  # a damaged file: any error of unpickling it
                _warn_once(
                    "load",
                    f"cannot read a Numba cache entry indexed by {self._index_path} "
                    f"({type(err).__name__}: {err}); compiling it again",
                )
                return None

    def locked_flush(self: Any) -> None:
        with _locked(self, exclusive=True):
            flush(self)

    cls.save, cls.load, cls.flush = locked_save, locked_load, locked_flush
    cls._olboost_locked = True
    _compile_once()
    return True


#: Seconds a process waits for another one's compile of the same olboost kernel specialisation
#: before compiling it itself: a safeguard only (the longest compile is under a minute here, and
#: the waits cannot form a cycle: see :func:`_compile_once`).
COMPILE_WAIT = 600.0
_compile_lock_fds: dict[str, int] = {}
_compile_locks_held: set[tuple[str, int]] = set()


@contextlib.contextmanager
def _compiling(path: str, slot: int) -> Iterator[None]:
    """Hold byte ``slot`` of the lock file ``path`` (a POSIX record lock: the process owns it,
    so the same process may enter again), waiting at most :data:`COMPILE_WAIT` seconds for
    another process that holds it; without it if the file cannot be opened for writing. The
    file stays open for the process's life: closing any descriptor of a file drops every record
    lock the process holds on it."""
    if (path, slot) in _compile_locks_held:
        yield
        return
    fd = _compile_lock_fds.get(path)
    if fd is None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            yield  # another user's read-only file: compile as Numba does
            return
        _compile_lock_fds[path] = fd
    deadline = time.monotonic() + COMPILE_WAIT
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
            break
        except OSError as err:
            if err.errno not in (errno.EACCES, errno.EAGAIN) or time.monotonic() > deadline:
                yield  # not lockable here, or held too long: compile as Numba does
                return
            time.sleep(0.02)
    _compile_locks_held.add((path, slot))
    try:
        yield
    finally:
        _compile_locks_held.discard((path, slot))
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, slot)


def _compile_once() -> None:
    """Make processes that share the cache compile each olboost kernel specialisation once.

    Numba looks a specialisation up in the cache, misses, compiles and saves it; two processes
    that miss at the same moment (pytest-xdist's workers, a sweep's Dask workers, a server's
    processes starting together) both compile it, each for a minute or more of a cold start's
    kernels. Wrapped here, a process that is to compile an olboost kernel for a signature it has
    not loaded first holds a lock of that function and signature (a byte of
    ``<index>.compiling`` beside the function's cache index, taken after Numba's own compiler
    lock, so threads of one process never wait on each other here); a process that waited finds
    the other's code in the cache and loads it. A kernel's compile holds the locks of the
    callees it compiles meanwhile, never of its callers, so no two processes wait on each other.
    Other functions compile as Numba compiles them."""
    from numba.core import dispatcher, sigutils
    from numba.core.compiler_lock import global_compiler_lock

    cls = dispatcher.Dispatcher
    if getattr(cls, "_olboost_once", False):
        return
    compile = cls.compile

    def compile_once(self: Any, sig: Any) -> Any:
        index = getattr(getattr(self._cache, "_cache_file", None), "_index_path", None)
        code = getattr(self.py_func, "__code__", None)
        if index is None or code is None or not code.co_filename.startswith(_PACKAGE + os.sep):
            return compile(self, sig)
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) in self.overloads:
            return compile(self, sig)
        name = str(tuple(args)).encode()
        slot = int.from_bytes(hashlib.sha256(name).digest()[:4], "big") >> 1
        with global_compiler_lock, _compiling(index + ".compiling", slot):
            return compile(self, sig)

    cls.compile = compile_once
    cls._olboost_once = True


_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_package_stamp: bytes | None = None

# `from MODULE import NAMES` (NAMES possibly in parentheses over several lines) and `import
# MODULES`, anywhere in a file (a function's own imports too): what a kernel module imports.
_FROM_IMPORT = re.compile(
    rb"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M
)
_IMPORT = re.compile(rb"^[ \t]*import[ \t]+([^\n]*)", re.M)
# A module that compiles code: a jit decorator, or Numba's extension API (overloads)
_DEFINES_KERNELS = re.compile(rb"\bn?jit\b|numba\.extending|cfunc\b")


def _imported_modules(module: str, is_package: bool, text: bytes) -> set[str]:
    """The dotted names ``text`` (module ``module``'s source) may import: each ``from``
    import's module, resolved if relative, and that module's attribute names as submodules;
    each plain import's modules. Names that are no module of the package are harmless."""
    names: set[str] = set()
    base = module if is_package else module.rpartition(".")[0]
    for match in _FROM_IMPORT.finditer(text):
        source = match.group(1).decode()
        dots = len(source) - len(source.lstrip("."))
        if dots:
            parts = base.split(".")
            parent = ".".join(parts[: len(parts) - dots + 1])
            source = parent + ("." + source[dots:] if source[dots:] else "")
        names.add(source)
        for name in re.split(rb"[\s,()]+", match.group(2)):
            name = name.partition(b"#")[0].split(b" as ")[0].strip()
            if name and name != b"*":
                names.add(f"{source}.{name.decode()}")
    for match in _IMPORT.finditer(text):
        for name in match.group(1).partition(b"#")[0].split(b","):
            names.add(name.strip().split(b" ")[0].decode())
    return names


def _stamped_sources(package: str) -> dict[str, bytes]:
    """The sources the package stamp covers, by path relative to ``package``: every module
    that uses Numba (its text names ``numba``) and every module of the package that one of
    them imports. The second kind holds no kernel but may hold what a kernel compiles in as a
    constant: the trees' layout (``weak/_vfdt_layout.py``: node kinds, the columns of their
    arrays, the missing-value marker) is read by seven kernel modules and names no Numba;
    before it was covered, an edit of it left their old machine code in a persistent cache.
    A constant a kernel reads comes from its own module or one it imports, so this covers it
    (a module imported only by such an imported module is not covered, and olboost's kernels
    read none)."""
    from olboost._version import package_sources

    sources = package_sources(package)
    module_of = {  # relative path -> dotted module name
        relative: ("olboost." + relative[:-3].replace(os.sep, ".")).removesuffix(".__init__")
        for relative in sources
    }
    file_of = {module: relative for relative, module in module_of.items()}
    stamped = {relative for relative, text in sources.items() if b"numba" in text}
    for relative in sorted(r for r in stamped if _DEFINES_KERNELS.search(sources[r])):
        is_package = os.path.basename(relative) == "__init__.py"
        imported = _imported_modules(module_of[relative], is_package, sources[relative])
        stamped |= {file_of[name] for name in imported if name in file_of}
    return {relative: sources[relative] for relative in sorted(stamped)}


def package_stamp() -> bytes:
    """SHA-256 of the sources of every olboost module that uses Numba and of the package's
    modules they import (:func:`_stamped_sources`; path and contents), computed once per
    process."""
    global _package_stamp
    if _package_stamp is None:
        import hashlib

        digest = hashlib.sha256()
        for relative, text in _stamped_sources(_PACKAGE).items():
            digest.update(relative.encode() + b"\0" + text)
        _package_stamp = digest.digest()
    return _package_stamp


def _stamp_with_the_package() -> None:
    """Make the freshness stamp of every olboost kernel's cache entry cover all of olboost's
    kernel modules, not only the kernel's own file.

    Numba stamps a cached function with the hash of its own source file, but its machine code
    holds the callees it inlined or linked from other modules: after an edit of
    ``boosters/_topk_kernels.py``, the service's fused step (``serve/_fused.py``, unchanged) was
    loaded from the cache with the old update inside it. With this stamp any change to a module
    that uses Numba, or to one such a module imports, recompiles every olboost kernel; nothing
    changes for other functions."""
    from numba.core import caching

    mixin = caching._SourceFileBackedLocatorMixin
    if getattr(mixin, "_olboost_stamped", False):
        return
    own_stamp = mixin.get_source_stamp

    def get_source_stamp(self: Any) -> Any:
        stamp = own_stamp(self)
        py_file = os.path.abspath(getattr(self, "_py_file", ""))
        if py_file.startswith(_PACKAGE + os.sep):
            return (stamp, package_stamp())
        return stamp

    mixin.get_source_stamp = get_source_stamp
    mixin._olboost_stamped = True


def compile_for_arguments(kernel: Any, signature: Any) -> None:
    """Compile (or load from the disk cache) ``kernel`` for the argument types of ``signature``
    alone, as a call from Python does.

    Numba keys its disk cache by the signature a compilation was asked for: a kernel handed over
    as a first-class function (its full signature, return type included) and also called from
    Python (the argument types) would be compiled and cached twice. Compiled this way first, the
    first-class use finds it among the dispatcher's overloads (keyed by argument types).

    Numba's threading layer is launched first: a kernel with a parallel loop (the trees' learn)
    needs it before its code is loaded, and code loaded from the disk cache without it fails to
    link (LLVM "Symbol not found: allocate_sched", which aborts the process). A call through the
    dispatcher launches it; a compilation or a lookup of a compiled result does not."""
    import numba

    pending = _PENDING.get((kernel, tuple(signature.args)))
    if pending is not None:  # being compiled elsewhere: wait for it rather than compile it too
        pending.join()
        return
    numba.get_num_threads()
    if isinstance(kernel, numba.core.dispatcher.Dispatcher):
        kernel.compile(tuple(signature.args))


def layout_key(value: Any) -> Any:
    """A key that determines ``numba.typeof(value)``, taken without building Numba's types:
    an array's dtype, dimensions, contiguity, writability and alignment (what its
    ``types.Array`` holds), a tuple's class and its items' keys; any other value's Numba type.
    Numba types a tuple in Python, item by item, and hashes its nested types in full at every
    lookup: about a millisecond for a committee's state."""
    if type(value) is np.ndarray:
        flags = value.flags
        return (value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous,
                flags.writeable, flags.aligned)  # fmt: skip
    if isinstance(value, tuple):
        return (type(value), *[layout_key(item) for item in value])
    kind = type(value)
    # Python's and NumPy's scalars as Numba types them (float64, boolean, the scalar's dtype;
    # int64 for an int of fewer than 64 bits), a few microseconds each through numba.typeof
    if kind is float or kind is bool or (kind is int and value.bit_length() < 64):
        return kind
    if isinstance(value, np.generic):
        return value.dtype
    import numba

    return numba.typeof(value)


#: ``(kernel, layout keys)`` that :func:`compile_for_values` made ready in this process.
_READY: set[tuple] = set()


def compile_for_values(kernel: Any, *values: Any) -> None:
    """:func:`compile_for_arguments` for the Numba types of ``values``, the arguments of a
    call of ``kernel`` to come: compiled before a block that holds a Ctrl-C until it ends
    (:func:`olboost._interrupt.held_interrupt`), so that the compiler is not held too. Found
    again by the values' :func:`layout_key` (typing a label ranker's state and asking Numba
    for a compiled kernel took about 250 microseconds, three times a one-row ``learn``)."""
    key = (kernel, *[layout_key(v) for v in values])
    if key in _READY:
        return
    import numba

    compile_for_arguments(kernel, numba.types.void(*[numba.typeof(v) for v in values]))
    _READY.add(key)


#: The Numba event (kind) of a wait for a kernel compiling in another process (:class:`Elsewhere`),
#: which Numba's own ``numba:compile`` events of this process do not show:
#: :class:`olboost.evaluate._compiling._CompileNotice` listens to both.
COMPILING_ELSEWHERE = "olboost:compiling-elsewhere"


@contextlib.contextmanager
def trigger_event(kind: str) -> Iterator[None]:
    """:func:`numba.core.event.trigger_event` (imported when used: Numba loads with the first
    kernel)."""
    from numba.core import event

    with event.trigger_event(kind):
        yield


#: Set to ``"1"`` to compile every kernel in the calling process (no second process).
SERIAL_ENV = "OLBOOST_SERIAL_COMPILE"

#: Kernels compiling in another process, by ``(kernel, argument types)``, until joined: a second
#: request for one (the committee's start, then the driver) shares the same process.
_PENDING: dict[tuple[Any, tuple], Elsewhere] = {}


class Elsewhere:
    """A kernel being compiled into the disk cache by another process (:func:`compile_elsewhere`).

    :meth:`join` waits for that process, then compiles or loads the kernel here as
    :func:`compile_for_arguments` does, so that nothing depends on the other process: if it
    failed or could not save, the kernel is compiled here."""

    def __init__(self, kernel: Any, signature: Any, process: subprocess.Popen | None):
        self.kernel, self.signature, self.process = kernel, signature, process
        self.pid = os.getpid()  # a forked child cannot wait for its parent's process
        # threads (the service's models share kernels) join one at a time; the later ones find
        # the kernel compiled
        self.lock = threading.Lock()

    def _forget(self) -> None:
        _PENDING.pop((self.kernel, tuple(self.signature.args)), None)
        if self.pid != os.getpid():
            self.process = None

    @property
    def started(self) -> bool:
        """Whether another process was started (``False``: :meth:`join` compiles here)."""
        return self.process is not None

    def cancel(self) -> None:
        """Stop the other process, if any (the caller gave up: nothing is compiled here)."""
        with self.lock:
            self._forget()
            if self.process is not None:
                self.process.kill()
                self.process.wait()
                self.process = None

    def join(self) -> bool:
        """Wait for the other process, then make the kernel ready here; ``True`` when another
        process was started and ended successfully."""
        ok = False
        with self.lock:
            self._forget()
            if self.process is not None:
                try:
                    with trigger_event(COMPILING_ELSEWHERE):
                        ok = self.process.wait() == 0
                finally:
                    if self.process.poll() is None:  # interrupted while waiting
                        self.process.kill()
                    self.process = None
            compile_for_arguments(self.kernel, self.signature)
        return ok


def _on_disk(kernel: Any, args: tuple) -> bool:
    """Whether ``kernel`` for ``args`` is compiled here or in the disk cache (then loaded), or
    has no disk cache that another process could hand it over through."""
    if args in kernel.overloads:
        return True
    cache = getattr(kernel, "_cache", None)
    if cache is None or type(cache).__name__ == "NullCache":
        return True
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        cres = cache.load_overload(args, kernel.targetctx)
        if cres is None:
            return False
        # what Dispatcher.compile does with a cache hit, so that the kernel is not loaded twice;
        # should a Numba release change that, compile_for_arguments loads it again instead
        with contextlib.suppress(AttributeError, TypeError):
            kernel.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            kernel.add_overload(cres)
    return True


def compile_elsewhere(kernel: Any, signature: Any) -> Elsewhere:
    """Start compiling ``kernel`` for the argument types of ``signature`` into Numba's disk cache
    in a new interpreter (:mod:`olboost._compile_worker`); :meth:`Elsewhere.join` finishes it in
    this process, and a second request for the same kernel and types meanwhile gets the same
    :class:`Elsewhere`. Nothing is started when the kernel is compiled already or in the cache,
    is not one of olboost's own (the other process imports it by name), has argument types that
    do not pickle, has no disk cache, the cache has no file locks (:func:`install`: Windows),
    :data:`SERIAL_ENV` is ``"1"``, or the interpreter cannot be started.

    Why: a cold start is Numba's compiler, one thread per process, and the kernels of a committee
    and of a booster do not depend on each other; compiling the committee's learn in a second
    process while this one compiles the others uses a second core. The other process writes the
    cache files a compilation here would write (same interpreter, sources and CPU: the same
    machine code), under the locks that make sharing the cache safe."""
    import numba

    numba.get_num_threads()  # before a parallel kernel is loaded (see compile_for_arguments)
    args = tuple(signature.args)
    pending = _PENDING.get((kernel, args))
    if pending is not None:
        return pending
    if (
        fcntl is None
        or os.environ.get(SERIAL_ENV) == "1"
        or not isinstance(kernel, numba.core.dispatcher.Dispatcher)
        # the other process imports the kernel by name: olboost's own, not a user's __main__
        or not kernel.py_func.__module__.startswith("olboost.")
        or _on_disk(kernel, args)
    ):
        return Elsewhere(kernel, signature, None)
    function = kernel.py_func
    try:
        job = pickle.dumps((function.__module__, function.__qualname__, args))
    except (pickle.PicklingError, TypeError, AttributeError):  # e.g. first-class function types
        return Elsewhere(kernel, signature, None)
    # the package as this process imported it, whatever put it on this process's path
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": here + (os.pathsep + path if path else "")}
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "olboost._compile_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, ValueError):
        return Elsewhere(kernel, signature, None)
    try:
        assert process.stdin is not None
        process.stdin.write(job)
        process.stdin.close()
    except OSError:
        process.kill()
        process.wait()
        return Elsewhere(kernel, signature, None)
    _PENDING[(kernel, args)] = elsewhere = Elsewhere(kernel, signature, process)
    return elsewhere


@atexit.register
def _cancel_pending() -> None:
    """Stop this process's compilations elsewhere that nothing joined (a committee started,
    never learning): they went on compiling for tens of seconds after the program had ended,
    orphans of no process."""
    for elsewhere in list(_PENDING.values()):
        process = elsewhere.process
        # not cancel(): a daemon thread may hold the lock, waiting in join() for ever
        if elsewhere.pid == os.getpid() and process is not None and process.poll() is None:
            process.kill()
            process.wait()


def join_pending(kernel: Any) -> None:
    """Wait for every compilation of ``kernel`` started elsewhere and not joined yet (a call of
    the kernel from Python would otherwise compile it here too)."""
    if _PENDING:
        for key, elsewhere in list(_PENDING.items()):
            if key[0] is kernel:
                elsewhere.join()
