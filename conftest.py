"""Test-session set-up shared by ``tests/`` and the doctests in ``src/olboost``.

``make test`` runs the suite on every core with pytest-xdist (``pytest -n auto``). Each worker
process then gets its own Numba cache directory, ``.numba_cache/<worker>`` (under
``$NUMBA_CACHE_DIR`` if that is set), because Numba's on-disk cache is not safe for two processes
compiling the same function at once: saving an overload reads the function's index, picks the first
free data-file number and writes index and data back, so two workers compiling different
specialisations of one function can both take ``<name>.1.nbc`` and leave an index whose entry
points at the other specialisation's code, which a later run would load without checking (wrong
results or a crash). One directory per worker makes that impossible; the directories persist, so
only the first run after a kernel change compiles (``make clean-cache`` empties them too). A
serial run (no xdist) keeps Numba's default cache beside the sources.

The variable must be set before Numba is imported, which this file, loaded by pytest before any
test module or doctest, guarantees.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _base = os.environ.get("NUMBA_CACHE_DIR") or Path(__file__).resolve().parent / ".numba_cache"
    os.environ["NUMBA_CACHE_DIR"] = str(Path(_base) / _WORKER)
    if "numba" in sys.modules:  # imported by a plugin already: make it read the variable again
        from numba.core import config

        config.reload_config()
