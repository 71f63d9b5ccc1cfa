"""The second process of :func:`olboost._numba_cache.compile_elsewhere`: reads a pickled
``(module, qualname, argument types)`` on standard input and compiles that kernel for those
argument types, which saves it to Numba's disk cache. Exit status 0 when it compiled."""

from __future__ import annotations

import importlib
import pickle
import sys
from typing import Any


def main() -> int:
    """Compile the kernel named on standard input (see the module doc)."""
    import numba

    import olboost  # noqa: F401  (installs the cache's file locks)

    module, qualname, args = pickle.loads(sys.stdin.buffer.read())
    kernel: Any = importlib.import_module(module)
    for part in qualname.split("."):
        kernel = getattr(kernel, part)
    # a kernel with a parallel loop links against the threading layer, launched here first
    numba.get_num_threads()
    kernel.compile(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
