"""benchmarks/profile_kernels.py: the perf map of the kernels compiled here, and its reading of
``perf report``. (Running perf itself is the script's job: it needs a cold compile of a workload,
a minute of CPU, and Linux perf.)"""

from __future__ import annotations

import os
import weakref

import numba

from helpers import load_benchmark

SYMBOL = (
    "_ZN7olboost4weak11_vfdt_split20_chi_square_ceilingsB4v187B46c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbCQQ"
    "PKkLTj8NAE_3dExx5ArrayIdLi1E1C7mutable7alignedE"
)


def test_numba_symbols_are_named_by_module_and_function(monkeypatch):
    profile = load_benchmark(monkeypatch, "profile_kernels")
    assert profile.short_name(SYMBOL) == "olboost.weak._vfdt_split._chi_square_ceilings"
    assert profile.short_name("__log2_fma") == "__log2_fma"
    report = f"# comment\n    41.52%  [.] {SYMBOL}\n     4.02%  [.] __log2_fma\n  0.3% [k] x\n"
    assert profile.shares(report) == [
        (41.52, "olboost.weak._vfdt_split._chi_square_ceilings"),
        (4.02, "__log2_fma"),
        (0.3, "x"),
    ]


def test_the_perf_map_names_a_kernel_compiled_here_at_its_address(monkeypatch):
    profile = load_benchmark(monkeypatch, "profile_kernels")

    @numba.njit  # compiled here, not loaded from a cache: its library keeps the names
    def profiled_kernel(x):
        return x * 2.0 + 1.0

    assert profiled_kernel(1.0) == 3.0

    class Gone:
        pass

    dead = weakref.proxy(Gone())  # among the objects scanned (a test worker had one): skipped
    assert dead is not None
    compiled = next(iter(profiled_kernel.overloads.values()))
    path = profile.write_perf_map(pid=-os.getpid())  # not the name perf would read for us
    try:
        rows = [line.split(" ", 2) for line in path.read_text().splitlines()]
    finally:
        path.unlink()
    named = {name: (int(a, 16), int(size, 16)) for a, size, name in rows}
    ours = [name for name in named if "profiled_kernel" in name]
    assert ours, "the kernel compiled here is not in the map"
    assert any(named[name][0] == compiled.library.get_pointer_to_function(name) for name in ours)
    addresses = [int(a, 16) for a, _, _ in rows]
    assert addresses == sorted(addresses)
    assert all(0 < int(size, 16) <= profile.MAX_SIZE for _, size, _ in rows)
