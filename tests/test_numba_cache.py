"""Processes sharing one Numba cache directory (olboost._numba_cache)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
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


def _script(source: str, cache: str, timeout: float) -> str:
    """The standard output of ``python -c source`` on the Numba cache ``cache`` (raises if it
    fails)."""
    return subprocess.run(
        [sys.executable, "-c", source],
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    ).stdout


def _script_json(source: str, cache: str) -> Any:
    """The JSON of the last line :func:`_script` prints."""
    return json.loads(_script(source, cache, 300).strip().splitlines()[-1])


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
    check = _script(CHECK.format(dir=str(tmp_path), types=", ".join(TYPES)), cache, 120)
    check = check.split("\n")
    # every specialisation came from the cache, each with its own code
    assert check[0] == "0"
    assert check[1:7] == EXPECTED


# One olboost kernel, one signature, in processes that start together on an empty cache.
SAME_KERNEL = """
import json, sys, time
import numpy as np
import olboost
from numba.core import event
from olboost.losses import pairwise

compiled = []
class L(event.Listener):
    def on_start(self, e): compiled.append(e.data["dispatcher"].py_func.__name__)
    def on_end(self, e): pass
event.register("numba:compile", L())
time.sleep(max(0.0, {start} - time.time()))  # start together, to miss the cache together
groups = pairwise.irrelevant_groups(np.array([0.3, 0.1, 0.7]), np.array([True, False, False]))
print(json.dumps({{"compiled": compiled, "groups": [g.tolist() for g in groups]}}))
"""


def test_processes_that_miss_one_kernel_at_once_compile_it_once(tmp_path):
    # each compiled it (three processes: three compiles of every kernel a cold start needed,
    # as pytest-xdist's workers, a sweep's Dask workers, a server's processes do); now one
    # compiles, the others wait for it and load its code
    cache = str(tmp_path / "cache")
    start = time.time() + 6.0  # after every process has imported olboost and numba
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAME_KERNEL.format(start=start)],
            env=_env(cache),
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(out["compiled"].count("irrelevant_groups") for out in outs) == [0, 0, 1]
    assert all(out["groups"] == [[1, 2], [0, 1], [0.1, 0.7]] for out in outs)
    (lock,) = Path(cache).rglob("pairwise.irrelevant_groups-*.nbi.compiling")
    assert lock.stat().st_size == 0  # a lock only: nothing written to it


def test_a_compile_waits_for_the_process_compiling_it_and_loads_its_code(tmp_path):
    # the lock is taken: while another process holds the byte of the kernel's signature, a
    # process that misses the cache waits, then loads what was saved meanwhile
    cache = str(tmp_path / "cache")
    first = _script(SAME_KERNEL.format(start=0), cache, 120)  # compiles, and leaves the index
    assert json.loads(first.splitlines()[-1])["compiled"].count("irrelevant_groups") == 1
    (lock,) = Path(cache).rglob("pairwise.irrelevant_groups-*.nbi.compiling")
    index = Path(str(lock).removesuffix(".compiling"))
    data = {f: f.read_bytes() for f in index.parent.glob(index.name.split("-")[0] + "-*")}
    for f in data:
        if f.suffix in (".nbi", ".nbc"):
            f.unlink()  # a cold cache again
    fd = os.open(lock, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)  # every signature's byte (length 0: to the end)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", SAME_KERNEL.format(start=0)],
            env=_env(cache),
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(8.0)  # imports take a few seconds; then it must wait for us
        assert proc.poll() is None
        for f, content in data.items():  # "our" compile, saved
            f.write_bytes(content)
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN, 0, 0)
        os.close(fd)
    out = json.loads(proc.communicate(timeout=60)[0].strip().splitlines()[-1])
    assert "irrelevant_groups" not in out["compiled"]  # loaded what we saved
    assert out["groups"] == [[1, 2], [0, 1], [0.1, 0.7]]


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


# Cold starts of a booster's compiled stream, one case after another in one process on one empty
# cache, reporting per case what the driver compiled in another process
# (olboost._numba_cache.compile_elsewhere) and the scores it made; then, with {service}, a cold
# start of the service: what it waited for, and how many one-call rankings (show_step) it had
# compiled here at each wait.
COLD_STREAMS = """
import json
import os
import tempfile
import numpy as np
from olboost import AdaOLMR, LinearCommittee, VFDTCommittee, _numba_cache
from olboost.datasets import make_label_stream
from olboost.weak import _vfdt_kernels as K

CALLEES = [getattr(K, name) for name in {callees}]
def compiled_callees():
    return [f.py_func.__name__ for f in CALLEES if f.signatures]
joined = []
here = []  # the trees' learn's callees this process had compiled at the case's first wait
join = _numba_cache.Elsewhere.join
def recording_join(self):
    if not joined:
        here.extend(compiled_callees())
    started = self.started
    ok = join(self)
    joined.append([self.kernel.py_func.__qualname__, started, ok])
    return ok
_numba_cache.Elsewhere.join = recording_join
X, Y = make_label_stream(60, 6, relevant=2, features=5, seed=3)
cases = {{}}
for case, committee, first_one in {cases}:
    joined.clear()
    here.clear()
    before = compiled_callees()
    model = AdaOLMR(eval(committee), learners=4, seed=2, labels=6)
    if first_one:  # River's way first: one example, then the rest in the compiled driver
        model.learn_one(X[0], set(np.flatnonzero(Y[0]).tolist()))
    scores = model.score_then_learn(X[first_one:], Y[first_one:])
    cases[case] = {{
        "joined": list(joined), "here": list(here), "before": before, "scores": scores.tolist()
    }}
if {service}:
    from olboost.serve import _fused
    from olboost.serve.service import Service, ServiceConfig

    joined.clear()
    shown = []
    waits = _numba_cache.Elsewhere.join
    def counting_join(self):
        shown.append(len(_fused.show_step.overloads))
        return waits(self)
    _numba_cache.Elsewhere.join = counting_join
    labels = tuple(f"l{{i}}" for i in range(5))
    config = ServiceConfig(algorithm="topk-adaptive", labels=labels, n_features=4, learners=3)
    service = Service(os.path.join(tempfile.mkdtemp(), "store"), config)
    service.start()
    service.close()
    cases["service"] = {{"joined": list(joined), "shown": shown}}
print(json.dumps(cases))
"""

#: (id, committee, learn_one first, the committee's learn kernel). Case "2" is the driver's
#: hand-off (the trees' parallel learn), "linear-learn_one" the committee start's (the linear
#: rankers' learn). The trees' serial learn is handed off at the committee's start by the
#: service's cold start, which comes last in the same process (until 2026-12-03 it was also case
#: "learn_one" here, an Ada.OLMR on serial trees, and the service had a cold process of its own,
#: which compiled the trees' predict and split kernels again: 136 of the suite's 2,637 sampled
#: process-seconds, py-spy; until 2026-11-27 there was also case "1", the serial learn started by
#: the driver).
COLD_CASES = [
    ("2", "VFDTCommittee(n_features=3, n_threads=2)", False, "learn"),
    ("linear-learn_one", "LinearCommittee()", True, "learn"),
]


#: Five of the trees' learn's callees, which the process that starts the trees compiles itself
#: while their learn compiles in another process.
TREE_CALLEES = [
    "_best_numeric",
    "_score_predictors",
    "_new_leaf",
    "_chi_square_ceilings",
    "_bounds_of_merits",
]


def _cold_streams(cache: str, cases: list, service: bool = False) -> dict:
    listed = [(case, committee, int(first_one)) for case, committee, first_one, _ in cases]
    source = COLD_STREAMS.format(
        cases=repr(listed), callees=repr(TREE_CALLEES), service=repr(service)
    )
    return _script_json(source, cache)


#: The kernels the cold process must find missing from its cache: the committees' learn (the
#: trees' parallel one and the linear rankers', ``learn``; the service's trees', ``learn_serial``)
#: and the five callees of the trees' learn it compiles itself meanwhile.
COLD_KERNELS = ("learn", "learn_serial", *TREE_CALLEES)


def _prefill(cache: str) -> int:
    """Copy into the empty Numba cache ``cache`` the entries of the tests' shared cache
    (conftest.py's ``$NUMBA_CACHE_DIR``, filled by this process's warm runs) of every kernel but
    :data:`COLD_KERNELS`; return how many files. Nothing without a shared cache directory (a
    serial run keeps Numba's default cache beside the sources): the cold process then compiles
    everything, as a first start does.

    Why: what the test is about is the committees' learn, compiled in another process while the
    first compiles the trees' callees. The booster's kernels, the trees' predict and split
    attempts, the linear rankers' and the service's others were compiled cold too, about 45 of
    the cold process's 52 seconds of compilation on an idle machine; under the suite's three
    workers on two cores the process outran its five-minute guard (2026-12-07)."""
    shared = os.environ.get("NUMBA_CACHE_DIR")
    if not shared or not os.path.isdir(shared):
        return 0
    copied = 0
    for path in Path(shared).rglob("*.nb[ic]"):
        function = path.name.split(".")[1].rsplit("-", 1)[0]
        if function in COLD_KERNELS:
            continue
        target = Path(cache) / path.relative_to(shared)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
        copied += 1
    return copied


# The cases share one cold process (each alone was a cold compile of the whole Ada.OLMR path in
# two processes: 40 to 77 CPU-seconds, 171 for three, on an idle machine). Each case's committee
# learn is still cold when the case starts: case "2" comes first, as its hand-off is the driver's,
# which a driver compiled for the same types by an earlier case would skip; the linear committee
# shares no kernel with the trees; the service's trees learn serially, a kernel of its own (the
# parallel one does not call it), handed off at the committee's start. No case starts from an
# empty cache for the booster's kernels and the trees' predict (_prefill: since 2026-12-07; they
# had been the cold process's own compiles, about 45 of its 52 seconds): what is cold is the
# committees' learn and the five callees of the trees' learn, whose compilation in this process
# meanwhile ("here") is case "2"'s test. The warm starts stay one process per case: the second
# case's driver would otherwise be the first's, found with no wait.
def test_cold_starts_compile_learn_in_another_process(tmp_path):
    from olboost import AdaOLMR, LinearCommittee, VFDTCommittee  # noqa: F401 (eval)
    from olboost.datasets import make_label_stream
    from olboost.serve.service import Service, ServiceConfig

    # This process's runs first, on the shared cache (what they compile, other tests need too;
    # under pytest-xdist, what another worker is compiling meanwhile they wait for): then the
    # cold process's cache holds all of it but the kernels whose cold start is tested (_prefill)
    X, Y = make_label_stream(60, 6, relevant=2, features=5, seed=3)
    heres = {}
    for case, committee, first_one, _ in COLD_CASES:
        model = AdaOLMR(eval(committee), learners=4, seed=2, labels=6)
        if first_one:
            model.learn_one(X[0], set(np.flatnonzero(Y[0]).tolist()))
        heres[case] = model.score_then_learn(X[first_one:], Y[first_one:])
    labels = tuple(f"l{i}" for i in range(5))
    config = ServiceConfig(algorithm="topk-adaptive", labels=labels, n_features=4, learners=3)
    service = Service(str(tmp_path / "store"), config)
    service.start()
    service.close()
    cache = str(tmp_path / "cache")
    _prefill(cache)
    assert not [p for name in COLD_KERNELS for p in Path(cache).rglob(f"*.{name}-*")]
    colds = _cold_streams(cache, COLD_CASES, service=True)
    assert colds["2"]["before"] == []  # the first case starts from nothing compiled
    for case, committee, _, learn in COLD_CASES:
        cold = colds[case]
        here = heres[case]
        # The committee's learn (the trees' with its parallel loop, the linear rankers') was
        # compiled by the other process, started when the committee started, which succeeded,
        # on a cache without it: the first learn waited for it (learn_one's, or the driver's,
        # which shares it)
        assert cold["joined"][0] == [learn, True, True], case
        # later requests found it compiled here
        assert all(row == [learn, False, False] for row in cold["joined"][1:]), case
        # meanwhile this process had compiled five of the trees' learn's callees, which the
        # other process then found in the cache (the linear committee compiles none of them:
        # what it finds compiled, an earlier case did)
        trees = committee.startswith("VFDT")
        assert cold["here"] == (TREE_CALLEES if trees else cold["before"]), case
        # each once, for the other process's types: one machine code per callee in the cache (a
        # second would be the other process compiling it again, or the ceilings compiled once
        # more for a literal argument)
        for name in TREE_CALLEES if trees else []:
            assert len(list(Path(cache).rglob(f"*.{name}-*.nbc"))) == 1, (case, name)
        # and the code it saved gives this process's scores, bit for bit
        assert np.array_equal(np.array(cold["scores"]), here), case
    for case, committee, first_one, learn in COLD_CASES:
        # a second start finds it on disk (and loads it, parallel loop included): no other
        # process
        warm = _cold_streams(cache, [(case, committee, first_one, learn)])[case]
        assert warm["joined"] == [[learn, False, False]], case
        assert warm["here"] == [], case  # and compiles nothing for it here
        assert warm["scores"] == colds[case]["scores"], case
    # The service's cold start: the trees' learn (serial: the service runs the trees on one
    # thread) compiled elsewhere and was waited for once, when the warm-up's first learn needed
    # it; by then this process had compiled the one-call ranking (show_step), so the two
    # compilations overlapped. Later requests found it compiled here.
    service = colds["service"]
    assert service["joined"][0] == ["learn_serial", True, True]
    assert service["shown"][0] >= 1
    assert all(row == ["learn_serial", False, False] for row in service["joined"][1:])


def test_compile_elsewhere_starts_nothing_it_cannot_hand_over(monkeypatch):
    import numba

    from olboost.weak import _vfdt_kernels as K

    @numba.njit(cache=True)
    def users_kernel(x):  # not importable by name from another process
        return x + 1

    sig = numba.types.int64(numba.types.int64)
    assert not _numba_cache.compile_elsewhere(users_kernel, sig).started
    # olboost's own, compiled already in this process
    counts = np.zeros(1, dtype=np.int64)
    weighed = np.zeros(1, dtype=bool)
    values = (np.zeros((1, 1)), np.ones(1), np.zeros(1, dtype=np.int64), 2, counts, weighed)
    K.learn_demand(*values)
    args = tuple(numba.typeof(v) for v in values)
    assert args in K.learn_demand.overloads
    assert not _numba_cache.compile_elsewhere(K.learn_demand, numba.types.none(*args)).started
    monkeypatch.setenv(_numba_cache.SERIAL_ENV, "1")
    fresh = numba.njit(cache=True)(K.learn_demand.py_func)  # not compiled anywhere
    elsewhere = _numba_cache.compile_elsewhere(fresh, numba.types.none(*args))
    assert not elsewhere.started and elsewhere.join() is False
    assert args in fresh.overloads  # join compiled it here


def test_a_kernel_given_up_on_stops_its_other_process():
    import numba

    from olboost.weak import _vfdt_storage as S

    # olboost's own kernel for argument types nothing else uses (int32): on no disk cache, and
    # never saved there, the other process being stopped within milliseconds of its start
    fresh = numba.njit(cache=True)(S.give_back.py_func)
    i32 = numba.int32
    args = (i32[:, ::1], i32[::1], i32[::1], i32[::1], i32)
    elsewhere = _numba_cache.compile_elsewhere(fresh, numba.types.none(*args))
    assert elsewhere.started
    process = elsewhere.process
    elsewhere.cancel()
    assert process.returncode is not None and not elsewhere.started
    assert args not in fresh.overloads  # nothing compiled here


NEVER_JOINED = """
import numba
from olboost import _numba_cache
from olboost.weak import _vfdt_storage as S

i32 = numba.int32
args = (i32[:, ::1], i32[::1], i32[::1], i32[::1], i32)
elsewhere = _numba_cache.compile_elsewhere(S.give_back, numba.types.none(*args))
print(elsewhere.started, elsewhere.process.pid)
"""


def test_a_compilation_nothing_joined_ends_with_the_program(tmp_path):
    # a committee started and never learning left its compile process running as an orphan,
    # compiling for tens of seconds after the program had ended
    out = _script(NEVER_JOINED, str(tmp_path / "cache"), 120).split()
    assert out[0] == "True"
    pid = int(out[1])
    # killed and reaped before the program's exit: gone at once, while a compile takes seconds
    assert not Path(f"/proc/{pid}").exists() or "_compile_worker" not in Path(
        f"/proc/{pid}/cmdline"
    ).read_text(errors="replace"), "the compile process outlived its program"


THREADS_JOIN = """
import threading
import numba
from olboost import _numba_cache
from olboost.weak import _vfdt_storage as S

i32 = numba.int32
args = (i32[:, ::1], i32[::1], i32[::1], i32[::1], i32)
elsewhere = _numba_cache.compile_elsewhere(S.give_back, numba.types.none(*args))
results = []
threads = [threading.Thread(target=lambda: results.append(elsewhere.join())) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(elsewhere.started, sorted(results), args in S.give_back.overloads, _numba_cache._PENDING)
"""


def test_threads_joining_one_kernel_wait_for_it_once(tmp_path):
    # the service's models share kernels: two threads may join the same compilation
    out = _script(THREADS_JOIN, str(tmp_path / "cache"), 120)
    assert out.split() == ["False", "[False,", "True]", "True", "{}"]


def test_olboost_kernels_are_stamped_with_every_kernel_module(tmp_path, monkeypatch):
    # Numba stamps a cache entry with its function's own file only; an olboost kernel's entry
    # also carries the hash of every olboost module that uses Numba, so that editing a callee's
    # module (boosters/_topk_kernels.py) cannot leave a caller's machine code (serve/_fused.py)
    # stale in a persistent cache.
    from olboost.weak import _vfdt_storage as S

    stamp = S.give_back._cache._impl.locator.get_source_stamp()
    assert isinstance(stamp, tuple) and stamp[1] == _numba_cache.package_stamp()
    # What Numba compares is the stamp its cache file took when the kernel's module was
    # imported: every olboost kernel, in whatever order olboost imports its modules, must hold
    # the package stamp there (modules imported before the stamp was installed kept Numba's own,
    # and a caller was loaded with a stale callee)
    from numba.core.dispatcher import Dispatcher

    import olboost.cli  # noqa: F401  (imports most kernel modules; the others below)
    import olboost.serve._fused  # noqa: F401
    import olboost.weak.river  # noqa: F401

    kernels = [
        value
        for name, module in sorted(sys.modules.items())
        if name.startswith("olboost.")
        for value in vars(module).values()
        if isinstance(value, Dispatcher)
        and value.__module__ == name
        and getattr(value, "_cache", None) is not None
        and hasattr(value._cache, "_cache_file")
    ]
    assert len(kernels) > 100
    for kernel in kernels:
        taken = kernel._cache._cache_file._source_stamp
        assert isinstance(taken, tuple), kernel.__qualname__
        assert taken[1] == _numba_cache.package_stamp(), kernel.__qualname__
    user = tmp_path / "user_kernels.py"
    user.write_text("import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_kernels

    user_stamp = user_kernels.f._cache._impl.locator.get_source_stamp()  # Numba's own
    assert not (isinstance(user_stamp, tuple) and user_stamp[-1] == _numba_cache.package_stamp())
    # the package stamp follows the modules that use Numba, and only those
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "_kernels.py").write_text("import numba\n")
    (package / "cli.py").write_text("import argparse\n")
    monkeypatch.setattr(_numba_cache, "_PACKAGE", str(package))

    def fresh_stamp() -> bytes:
        monkeypatch.setattr(_numba_cache, "_package_stamp", None)
        return _numba_cache.package_stamp()

    first = fresh_stamp()
    (package / "cli.py").write_text("import argparse  # edited\n")
    assert fresh_stamp() == first
    (package / "sub" / "_kernels.py").write_text("import numba  # edited\n")
    assert fresh_stamp() != first


@pytest.mark.parametrize(
    "imports",
    [
        "from olboost.sub._layout import LEAF",
        "from ._layout import (\n    EMPTY,\n    LEAF,\n)",
        "from . import _layout",
        "from olboost.sub import _layout as L",
        "import olboost.sub._layout",
    ],
)
def test_a_module_of_constants_a_kernel_module_imports_is_in_the_package_stamp(
    tmp_path, monkeypatch, imports
):
    # weak/_vfdt_layout.py (node kinds, array columns, the missing-value marker) names no
    # Numba, but seven kernel modules compile its constants in: an edit of it left their old
    # machine code in a persistent cache (a kernel returned the old marker)
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "_layout.py").write_text("EMPTY = 0\nLEAF = -1\n")
    (package / "sub" / "_kernels.py").write_text(f"import numba\n{imports}\n\n@numba.njit\n")
    (package / "sub" / "helpers.py").write_text("from olboost.sub import _kernels\n")
    (package / "plots.py").write_text("")
    (package / "cli.py").write_text("import numba  # said, no kernel\nfrom . import plots\n")
    monkeypatch.setattr(_numba_cache, "_PACKAGE", str(package))

    def fresh_stamp() -> bytes:
        monkeypatch.setattr(_numba_cache, "_package_stamp", None)
        return _numba_cache.package_stamp()

    first = fresh_stamp()
    (package / "sub" / "_layout.py").write_text("EMPTY = 0\nLEAF = -7\n")
    assert fresh_stamp() != first
    # what imports a kernel module, and what a module that only says "numba" imports, are not
    # compiled into any kernel: an edit of them recompiles nothing
    second = fresh_stamp()
    (package / "sub" / "helpers.py").write_text("from olboost.sub import _kernels  # edited\n")
    (package / "plots.py").write_text("# edited\n")
    assert fresh_stamp() == second


def test_every_package_module_a_kernel_module_imports_is_stamped():
    # read with ast here, with the regular expressions in olboost: each olboost module a module
    # with kernels imports (names from, or itself), relative imports and imports inside
    # functions included
    import ast

    package = Path(_numba_cache._PACKAGE)
    stamped = set(_numba_cache._stamped_sources(str(package)))
    files = {
        ".".join(("olboost", *path.relative_to(package).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): str(path.relative_to(package))
        for path in package.rglob("*.py")
    }
    checked = 0
    for name, relative in files.items():
        text = (package / relative).read_text()
        if "njit" not in text:
            continue
        assert relative in stamped, relative
        base = name if relative.endswith("__init__.py") else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(text)):
            targets = []
            if isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    parent = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
                    source = f"{parent}.{source}" if source else parent
                targets = [source, *(f"{source}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target in files:
                    checked += 1
                    assert files[target] in stamped, (relative, target)
    assert "weak/_vfdt_layout.py" in stamped
    assert checked > 50  # the imports of the kernel modules were found (66 when written)


# ------------------------------------------------------------------ caches Numba cannot use

RUN = """
import sys
sys.path.insert(0, {dir!r})
import numba
import numpy as np
import olboost
import kern
print(kern.plus_one(np.int64(41))[0], numba.config.CACHE_DIR)
"""


def _run(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    kernel = tmp_path / "kern.py"
    # written once: Numba before 0.67 stamps a cache entry with its file's modification time,
    # and a file written again made every entry stale (a damaged one was then never read)
    if not kernel.exists() or kernel.read_text() != KERNEL:
        kernel.write_text(KERNEL)
    return subprocess.run(
        [sys.executable, "-c", RUN.format(dir=str(tmp_path))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_works_where_numba_finds_no_cache_directory(tmp_path):
    # a non-root user of a read-only site-packages with no writable HOME: every cache=True
    # kernel failed to define ("no locator available"), and `import olboost` with it. Numba's
    # own locator classes narrowed to the one of NUMBA_CACHE_DIR, which is unset, find none.
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator", TMPDIR=str(tmp_path))
    fallback = tmp_path / f"olboost-numba-{os.getuid()}"
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["42", str(fallback)]
    assert "no writable cache directory" in done.stderr and "NUMBA_CACHE_DIR" in done.stderr
    assert list(fallback.rglob("kern.plus_one*.nbi"))  # cached there, for the next run
    assert fallback.stat().st_mode & 0o777 == 0o700
    # a directory of that name that others may write to is not used: it could hold planted code
    fallback.chmod(0o777)
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    used = Path(done.stdout.split()[1])
    assert used != fallback and used.parent == tmp_path and used.name.startswith("olboost-numba-")
    # where there are no user ids (Windows), a directory of the process's own: os.getuid()
    # failed the import
    (tmp_path / "nouid.py").write_text("import os\ndel os.getuid\n")
    done = subprocess.run(
        [sys.executable, "-c", "import nouid\n" + RUN.format(dir=str(tmp_path))],
        env={**env, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    used = Path(done.stdout.split()[1])
    assert used.parent == tmp_path and used.name.startswith("olboost-numba-") and used != fallback


def test_a_numba_cache_dir_numba_cannot_write_is_said_with_where_it_caches_instead(tmp_path):
    # NUMBA_CACHE_DIR naming a file (or a read-only directory): Numba passed over it without a
    # word and cached olboost's kernels in the package's __pycache__, a source tree or
    # site-packages the user had chosen not to write to
    not_a_directory = tmp_path / "cache-file"
    not_a_directory.write_text("")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(not_a_directory), "TMPDIR": str(tmp_path)}
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"NUMBA_CACHE_DIR={not_a_directory} is not a directory Numba can write" in done.stderr
    (instead,) = re.findall(r"caches olboost's kernels in (.*) instead", done.stderr)
    assert Path(instead).is_dir() and not Path(instead).is_relative_to(not_a_directory)
    # and where no other place is left either, the fallback names the directory asked for
    # rather than only telling the user to set what they had set
    env["NUMBA_CACHE_LOCATOR_CLASSES"] = "UserProvidedCacheLocator"
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"NUMBA_CACHE_DIR={not_a_directory} cannot be written" in done.stderr
    assert str(tmp_path / f"olboost-numba-{os.getuid()}") in done.stderr


def _cached_once(tmp_path: Path) -> tuple[dict[str, str], Path]:
    env = _env(str(tmp_path / "cache"))
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    (index,) = (tmp_path / "cache").rglob("kern.plus_one*.nbi")
    return env, index


def test_a_damaged_cache_entry_is_compiled_again_and_replaced(tmp_path):
    # a truncated .nbc or .nbi ended every later run with a bare pickle traceback
    env, index = _cached_once(tmp_path)
    (data,) = index.parent.glob("kern.plus_one*.nbc")
    for damaged in (data, index):
        damaged.write_bytes(damaged.read_bytes()[:20])
        done = _run(tmp_path, env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split()[0] == "42"
        assert "RuntimeWarning" in done.stderr and "UnpicklingError" in done.stderr
        # olboost's warning, said so and filed under its module (it named Numba's caching.py)
        assert "_numba_cache.py:" in done.stderr and "RuntimeWarning: olboost: " in done.stderr
        assert "caching.py" not in done.stderr, done.stderr
    quiet = {**env, "PYTHONWARNINGS": "ignore::RuntimeWarning:olboost._numba_cache"}
    data.write_bytes(data.read_bytes()[:20])
    done = _run(tmp_path, quiet)
    assert done.returncode == 0 and "RuntimeWarning" not in done.stderr, done.stderr
    check = _script(CHECK.format(dir=str(tmp_path), types="np.int64"), env["NUMBA_CACHE_DIR"], 120)
    assert check.split("\n")[:2] == ["0", "42:int64"]  # repaired: loaded, not compiled


def test_a_cache_entry_that_cannot_be_saved_is_left_unsaved(tmp_path):
    # another user's index in a sticky /tmp (os.replace refused) ended a run whose code had
    # compiled; here the index's name is taken by a directory, which refuses it to root too
    env, index = _cached_once(tmp_path)
    for f in index.parent.glob("kern.plus_one*"):
        f.unlink()
    index.mkdir()
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "42"
    assert "cannot save compiled code to the Numba cache" in done.stderr


# Python 3.12+ warns of any fork beside threads (pytest-xdist's): the child here only takes a
# file lock and exits
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_another_users_lock_file_still_locks(tmp_path):
    # the lock file is created 0644 under umask 022: another user could not open it for
    # writing, and went on without the lock; flock needs no write access
    import tempfile

    folder = Path(tempfile.mkdtemp())  # tmp_path's parents are closed to other users
    try:
        folder.chmod(0o755)
        index = folder / "f.nbi"
        lock = Path(str(index) + ".lock")
        lock.touch()
        lock.chmod(0o444)  # unwritable to its non-root owner too, and to nobody
        fd = os.open(lock, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 2
            try:
                if os.getuid() == 0:
                    os.setuid(65534)  # nobody
                start = time.monotonic()
                with _numba_cache._locked(type("File", (), {"_index_path": str(index)}), True):
                    code = 0 if time.monotonic() - start > 0.8 else 1
            finally:
                os._exit(code)
        time.sleep(1.2)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0  # it waited for the lock
    finally:
        import shutil

        shutil.rmtree(folder)


def test_importing_under_numba_disable_jit_says_olboost_needs_the_compiler():
    # it failed on "'function' object has no attribute 'py_func'" deep in a kernel module
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", "import olboost"], env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: olboost needs Numba's compiler"), done.stderr
    assert "NUMBA_DISABLE_JIT is set" in last
