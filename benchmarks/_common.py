"""Pieces shared by the benchmark scripts: machine information, the per-case subprocess runner and
where the shared data sets live.

The scripts run as ``python benchmarks/<name>.py``, so this directory is on ``sys.path`` and they
import it as ``from _common import ...``.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

#: Data sets shared between checkouts (``../shared/datasets`` next to the repository).
SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def warm_up(make, train, test, n: int = 30) -> float:
    """Seconds to compile every kernel that ``train_test(make(), train, test)`` runs, by running
    it on the first ``n`` examples of each (the same calls and argument types), with 3 learners.
    """
    import dataclasses
    import time

    from olboost.evaluate import train_test

    def head(data):
        return dataclasses.replace(data, X=data.X[:n], Y=data.Y[:n])

    t0 = time.perf_counter()
    train_test(make(3), head(train), head(test))
    return time.perf_counter() - t0


def load_mulan(name: str):
    """A bundled MULAN set by name, or ``"tmc2007-500"`` from the shared data (train and test)."""
    from olboost.datasets import load

    if name == "tmc2007-500":
        base = SHARED / "tmc2007-500"
        return load(
            base / "tmc2007-500-train.arff",
            base / "tmc2007-500.xml",
            test=base / "tmc2007-500-test.arff",
        )
    return load(name)


def process_facts(load_start: list[float] | None) -> dict:
    """What each case records about the process that ran it, at its end: peak memory, Numba's
    threads and threading layer, ``OMP_WAIT_POLICY``, and the load averages at start and end."""
    import resource

    import numba

    return {
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        "threading_layer": threading_layer(),
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
    }


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where ``/proc/loadavg`` is unreadable."""
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def threading_layer() -> str | None:
    """Numba's threading layer, or ``None`` before any parallel region has run."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        return None


#: Additions of the reference loop of :func:`host_facts`.
REFERENCE_LOOP = 10**6


def cpuinfo() -> dict[str, str]:
    """The fields of the first processor's block of ``/proc/cpuinfo`` (``"model name"``, ``"cpu
    family"``, ``"flags"`` ...), or none where it is unreadable."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def host_facts(fields: dict[str, str] | None = None) -> dict:
    """What the kernels are compiled for, and how fast this core runs plain Python now;
    ``fields`` are those of :func:`cpuinfo` (read here if not given).

    ``llvm_cpu`` is the CPU that LLVM, hence Numba, generates machine code for (e.g. ``znver3``,
    ``znver4``; ``NUMBA_CPU_NAME`` overrides it), ``cpu_family_model`` the family and model of
    ``/proc/cpuinfo``, and ``vector_isa`` the widest vector extensions among its flags
    (``avx2``, ``avx512f``): the machine code, and so the times, differ between hosts that
    differ there. ``reference_loop_seconds`` is the fastest of five runs of a Python loop of
    :data:`REFERENCE_LOOP` integer additions, a clock of the host's speed at the moment of the
    run. The machines the benchmarks run on are shared and of more than one type: on
    2026-12-02 the test suite (``.ci/run``, commit 5dea7fb) took 23 minutes on one host and 14
    an hour later on the same host. Times recorded on different days or hosts compare only
    alongside these facts."""
    import time

    import numba

    facts: dict = {}
    try:
        import llvmlite.binding as llvm

        facts["llvm_cpu"] = numba.config.CPU_NAME or llvm.get_host_cpu_name()
    except (ImportError, AttributeError):
        facts["llvm_cpu"] = None
    fields = cpuinfo() if fields is None else fields
    family, model = fields.get("cpu family"), fields.get("model")
    facts["cpu_family_model"] = f"{family}/{model}" if family and model else None
    flags = set(fields.get("flags", "").split())
    facts["vector_isa"] = [isa for isa in ("avx2", "avx512f") if isa in flags] if flags else None
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for i in range(REFERENCE_LOOP):
            total += i
        best = min(best, time.perf_counter() - start)
    facts["reference_loop_seconds"] = best
    return facts


def machine_info(
    env: Iterable[str] = ("NUMBA_NUM_THREADS",),
    packages: Iterable[str] = (),
    loadavg_key: str = "loadavg",
) -> dict:
    """Python, platform, CPU count and model, numpy/numba versions, numba threads, load average,
    the date (UTC), the git commit of the code and whether its tracked files differed from it
    (``dirty``; both ``None`` outside a git checkout), and the olboost measured: its version and
    the directory it was imported from (another version on ``PYTHONPATH``, when code is compared
    with code, is not this checkout's commit).

    Each name in ``env`` adds ``"<name>_env"``: that environment variable, or ``None``. Each name
    in ``packages`` adds its ``__version__`` (``None`` if it is not installed). The load average is
    stored under ``loadavg_key``; ``"cpu"`` (the model name) is added where ``/proc/cpuinfo``
    has it.
    """
    import numba
    import numpy

    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
    }
    for name in env:
        info[f"{name}_env"] = os.environ.get(name)
    info[loadavg_key] = loadavg()
    for name in packages:
        try:
            info[name] = __import__(name).__version__
        except ImportError:
            info[name] = None
    fields = cpuinfo()
    if "model name" in fields:
        info["cpu"] = fields["model name"]
    info.update(host_facts(fields))
    # which code and when: the README cites results by commit and date
    info["date"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    try:
        git = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        info["commit"] = git.stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=Path(__file__).parent,
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        info["dirty"] = bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        info["commit"] = info["dirty"] = None
    import olboost

    info["olboost"] = olboost.__version__
    info["olboost_path"] = str(Path(olboost.__file__).resolve().parent)
    return info


def run_one(script: str | Path, args: list[str], env: dict | None = None) -> dict:
    """Run ``script --one *args`` in a fresh interpreter and parse its last stdout line as JSON.

    ``env`` is added to this process's environment. A non-zero exit raises ``RuntimeError`` with
    the end of the case's stderr.
    """
    out = subprocess.run(
        [sys.executable, str(script), "--one", *args],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if out.returncode != 0:
        raise RuntimeError(f"case {args} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
