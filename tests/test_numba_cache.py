"""Processes sharing one Numba cache directory (olboost._numba_cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

fcntl = pytest.importorskip("fcntl", reason="file locks are POSIX only; Windows keeps Numba's own")

import olboost  # noqa: E402,F401  (installs the locks)
from olboost import _numba_cache  # noqa: E402

KERNEL = """
import numba
import numpy as np

@numba.njit(cache=True)
def plus_one(x):
    a = np.array([x])  # x's own dtype
    a[0] += 1
    return a
"""

# Each process compiles one specialisation of the same function into the shared directory, then
# a fresh process must load every one of them (no compile) and get each type's own result. (The
# race the locks close is a window of a few milliseconds, which this rarely hits without them;
# the next test shows that the locks are taken.)
TYPES = ["np.int64", "np.float64", "np.int32", "np.float32", "np.complex128", "np.int16"]
EXPECTED = [
    "42:int64", "42.0:float64", "42:int32", "42.0:float32", "(42+0j):complex128", "42:int16"
]  # fmt: skip

COMPILE = """
import sys, time
sys.path.insert(0, {dir!r})
import numpy as np
import olboost  # the locks
import kern
time.sleep(max(0.0, {start} - time.time()))  # start together, to meet at the index
r = kern.plus_one({typ}(41))
print(f"{{r[0]}}:{{r.dtype}}")
"""

CHECK = """
import sys
sys.path.insert(0, {dir!r})
import numpy as np
import olboost
from numba.core import event
compiles = []
class L(event.Listener):
    def on_start(self, e): compiles.append(e)
    def on_end(self, e): pass
event.register("numba:compile", L())
import kern
out = [f"{{r[0]}}:{{r.dtype}}" for r in (kern.plus_one(t(41)) for t in ({types},))]
print(len(compiles)); print(*out, sep="\\n")
"""


def _env(cache: str) -> dict[str, str]:
    return {**os.environ, "NUMBA_CACHE_DIR": cache}


def test_import_installs_the_locks_once():
    from numba.core import caching

    assert caching.IndexDataCacheFile._olboost_locked
    save = caching.IndexDataCacheFile.save
    assert _numba_cache.install() is True
    assert caching.IndexDataCacheFile.save is save  # not wrapped twice


def test_processes_compiling_one_function_at_once_leave_a_correct_cache(tmp_path):
    (tmp_path / "kern.py").write_text(KERNEL)
    cache = str(tmp_path / "cache")
    start = time.time() + 6.0  # after every process has imported olboost and numba
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COMPILE.format(dir=str(tmp_path), start=start, typ=t)],
            env=_env(cache),
            stdout=subprocess.PIPE,
            text=True,
        )
        for t in TYPES
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == EXPECTED
    check = subprocess.run(
        [sys.executable, "-c", CHECK.format(dir=str(tmp_path), types=", ".join(TYPES))],
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split("\n")
    # every specialisation came from the cache, each with its own code
    assert check[0] == "0"
    assert check[1:7] == EXPECTED


def test_a_save_waits_for_the_lock_of_the_index(tmp_path):
    (tmp_path / "kern.py").write_text(KERNEL)
    cache = tmp_path / "cache"
    # Learn where the function's index lives with a first compile, then empty the cache.
    subprocess.run(
        [sys.executable, "-c", COMPILE.format(dir=str(tmp_path), start=0, typ="np.int64")],
        env=_env(str(cache)),
        check=True,
        capture_output=True,
    )
    (index,) = cache.rglob("*.nbi")
    for f in index.parent.iterdir():
        if f.suffix in (".nbi", ".nbc"):
            f.unlink()
    fd = os.open(str(index) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", COMPILE.format(dir=str(tmp_path), start=0, typ="np.int64")],
            env=_env(str(cache)),
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(8.0)  # imports and compiling take a few seconds; then it must wait for us
        assert proc.poll() is None
        assert not index.exists()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert proc.communicate(timeout=60)[0].strip() == "42:int64"
    assert index.exists()
