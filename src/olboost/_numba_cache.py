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

:func:`compile_for_arguments` keeps the cache from holding a kernel twice when it is both called
from Python and handed to compiled code as a first-class function.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

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
        # A read-only or missing cache directory: Numba itself will not write there either.
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def install() -> bool:
    """Wrap ``numba.core.caching.IndexDataCacheFile.save``, ``load`` and ``flush`` in file
    locks (once per process). ``False`` where there is no ``fcntl``."""
    if fcntl is None:  # pragma: no cover - Windows
        return False
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    if getattr(cls, "_olboost_locked", False):
        return True
    save, load, flush = cls.save, cls.load, cls.flush

    def locked_save(self: Any, key: Any, data: Any) -> None:
        with _locked(self, exclusive=True):
            save(self, key, data)

    def locked_load(self: Any, key: Any) -> Any:
        with _locked(self, exclusive=False):
            return load(self, key)

    def locked_flush(self: Any) -> None:
        with _locked(self, exclusive=True):
            flush(self)

    cls.save, cls.load, cls.flush = locked_save, locked_load, locked_flush
    cls._olboost_locked = True
    return True


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

    numba.get_num_threads()
    if isinstance(kernel, numba.core.dispatcher.Dispatcher):
        kernel.compile(tuple(signature.args))
