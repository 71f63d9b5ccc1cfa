"""The facts every benchmark result records about its machine (``benchmarks/_common.py``): the
speed targets are absolute while the hosts differ in type and in speed from hour to hour, so a
recorded time is read with what the kernels were compiled for and a clock of the host's speed."""

from __future__ import annotations

import math
import re
from pathlib import Path

from helpers import load_benchmark


def _first(text: str, key: str) -> str | None:
    """The value of the first line of ``/proc/cpuinfo``'s ``text`` that starts with ``key``."""
    line = next((row for row in text.splitlines() if row.startswith(key)), None)
    return line.partition(":")[2].strip() if line else None


def test_machine_info_names_the_compile_target_the_vector_extensions_and_a_speed_clock(
    monkeypatch,
):
    import llvmlite.binding as llvm

    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    common = load_benchmark(monkeypatch, "_common")
    info = common.machine_info()
    # the CPU that Numba's machine code targets on this host
    assert info["llvm_cpu"] == llvm.get_host_cpu_name()
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:  # not Linux
        assert info["vector_isa"] is None and info["cpu_family_model"] is None
        assert "cpu" not in info
    else:
        flags = set((_first(text, "flags") or "").split())
        expected = [isa for isa in ("avx2", "avx512f") if isa in flags]
        assert info["vector_isa"] == (expected if flags else None)
        assert info.get("cpu") == _first(text, "model name")
        if _first(text, "cpu family") is not None:  # x86
            assert re.fullmatch(r"\d+/\d+", info["cpu_family_model"])
    # a time, and a plausible one: a million additions take milliseconds, not seconds
    seconds = info["reference_loop_seconds"]
    assert math.isfinite(seconds) and 1e-4 < seconds < 5.0


def test_machine_info_says_which_code_was_measured(monkeypatch, tmp_path):
    # a result named its commit only: a working tree with changes, or another version put on
    # PYTHONPATH to compare code with code, was recorded as that commit
    import subprocess

    import olboost

    common = load_benchmark(monkeypatch, "_common")
    info = common.machine_info()
    assert info["olboost"] == olboost.__version__
    assert info["olboost_path"] == str(Path(olboost.__file__).resolve().parent)
    here = Path(common.__file__).parent
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        assert info["commit"] is None and info["dirty"] is None
    else:
        assert info["dirty"] is bool(status.strip())
