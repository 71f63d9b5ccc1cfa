"""Test-session set-up shared by ``tests/`` and the doctests in ``src/olboost``.

``make test`` runs the suite with pytest-xdist, a worker per core and one more (``pytest -n``).
The workers, and the processes their tests start (CLI runs, Dask workers, servers), share one
Numba cache directory, ``.numba_cache`` (or ``$NUMBA_CACHE_DIR`` if that is set), so that each
kernel specialisation is compiled once per run, not once per worker. On a fresh clone
(2026-12-06, 2 workers, Numba's compile events) compiling took 333 of the workers' 1,370
CPU-seconds, besides what the processes they start compile, of which 45 s were second copies:
two workers that needed a kernel at the same moment both compiled it, as the booster steps of
OnlineMBBM, OnlineBMR and Top-k BBM; since then one waits for the other's. Numba's own cache is
not safe for processes that share it; ``import olboost`` makes it so, and makes them compile
each kernel once (:mod:`olboost._numba_cache`). The directory persists, so only
the first run after a kernel change compiles (``make clean-cache`` empties it). A serial run
(no xdist) keeps Numba's default cache beside the sources.

The variable must be set before Numba is imported, which this file, loaded by pytest before any
test module or doctest, guarantees.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(__file__).resolve().parent / ".numba_cache"))
    if "numba" in sys.modules:  # imported by a plugin already: make it read the variable again
        from numba.core import config

        config.reload_config()


#: Some of the suite's longest tests (each took 35 s or more in a serial run on a busy 2-core
#: machine when listed; the paper-protocol tests left this list when ``make test`` began to rerun
#: one seed of each, tests/protocol.py). Marked ``slow`` so that they can be found and skipped
#: while iterating (``pytest -m "not slow"``); ``make test`` runs them all. Keyed by file and
#: function name, so parameters may be added freely.
SLOW_TESTS = {
    "test_multiclass_experiments.py": [
        "test_best_tree_columns_are_hindsight_oracles",
        "test_reproduce_multiclass_cli",
    ],
    "test_river_committee.py": ["test_vfdt_and_river_committees_boost_alike"],
    "test_ada_olm.py": ["test_parameter_overrides_are_used"],
    "test_numba_cache.py": ["test_cold_starts_compile_learn_in_another_process"],
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: one of the suite's longest tests (see SLOW_TESTS in conftest.py)"
    )
    config.addinivalue_line(
        "markers",
        "shared_data: reads the development data in ../shared/datasets (skipping without it); "
        "the other tests do not see it there (see pytest_runtest_setup in conftest.py)",
    )
    config.addinivalue_line(
        "markers",
        "protocol: a paper-protocol accuracy test, every seed recorded (tests/protocol.py); "
        "make test reruns one seed of each, make accuracy all of them",
    )


#: Seconds of the longest single tests (``--durations=30`` of ``make test`` in a fresh clone,
#: 2 workers on an otherwise idle 2-core machine, 2026-12-03, commit 2888b9e),
#: keyed by test id. pytest-xdist's ``worksteal`` hands each worker a contiguous share of the
#: collection and lets idle workers steal from the tail of the others' queues; a long test near
#: the end of a share would keep its worker busy alone after the others have finished. So the
#: long tests go first, spread over the shares longest first onto the least loaded one (LPT), and
#: the rest fill the shares in their order.
LONGEST = {
    # its cases and the service's cold start in one process since 2888b9e; 237 s in a
    # fresh-clone make test there (2026-12-03), waiting on its processes' compiles; 201 s on
    # 2026-12-07 (a slower day for the host: the suite 1,028 s), most of it compiling the
    # Ada.OLMR path on the shared cache, which its cold process then loads (_prefill)
    "test_numba_cache.py::test_cold_starts_compile_learn_in_another_process": 201,
    "test_fuzz_estimators.py::test_fuzz_committee[MixedCommittee]": 165,
    "test_river_committee.py::test_vfdt_and_river_committees_boost_alike": 44,
    "test_ada_olmr.py::test_paper_accuracy_over_ten_seeds[mediamill-reduced]": 42,
    "test_checkpoint_kill.py::"
    "test_sigkill_at_20_random_moments_then_resume_equals_an_uninterrupted_run": 33,
}

#: The same for the paper-protocol tests when every seed runs (``make accuracy`` and
#: ``make accuracy-record``, tests/protocol.py; ``--durations`` of ``make accuracy-record`` on 2
#: workers, 2026-12-03): in ``make test`` each reruns one seed (or a tenth of the movement stream),
#: 2 to 14 s.
PROTOCOL_LONGEST = {
    "test_multiclass_experiments.py::test_accuracy_on_movement[MB .1-0.988]": 79,
    "test_multiclass_experiments.py::test_accuracy_on_movement[AdaOLM-0.962]": 28,
    "test_ada_olmr.py::test_paper_accuracy_over_ten_seeds[mediamill-reduced]": 123,
    "test_multiclass_experiments.py::test_online_mbbm_accuracy_over_27_reorderings[mice]": 89,
    "test_online_bmr_mbbm.py::test_best_bmr_accuracy_over_ten_seeds[mediamill-reduced]": 55,
    "test_multiclass_experiments.py::test_online_mbbm_accuracy_over_27_reorderings[nursery]": 53,
    "test_online_bmr_mbbm.py::test_best_bmr_accuracy_over_ten_seeds[yeast]": 38,
    "test_multiclass_experiments.py::test_adaboost_olm_accuracy_over_27_reorderings[nursery]": 36,
    "test_ada_olmr.py::test_paper_accuracy_over_ten_seeds[yeast]": 35,
    "test_multiclass_experiments.py::test_online_mbbm_accuracy_over_27_reorderings[mushroom]": 17,
    "test_multiclass_experiments.py::test_adaboost_olm_accuracy_over_27_reorderings[mice]": 14,
    "test_multiclass_experiments.py::test_online_mbbm_accuracy_over_27_reorderings[car]": 13,
    "test_multiclass_experiments.py::test_adaboost_olm_accuracy_over_27_reorderings[mushroom]": 13,
    **{
        f"test_topk_accuracy.py::test_topk_cell_within_0_02_of_the_published_value[{cell}]": s
        for cell, s in (
            ("mediamill-reduced-uniform-TopAda", 116),
            ("mediamill-reduced-single-swap-TopAda", 55),
            ("yeast-uniform-TopAda", 38),
            ("yeast-single-swap-TopAda", 38),
            ("mediamill-reduced-uniform-TopOpt", 23),
            ("scene-uniform-TopAda", 20),
            ("yeast-single-swap-TopOpt", 16),
            ("yeast-uniform-TopOpt", 15),
            ("scene-single-swap-TopOpt", 13),
            ("mediamill-reduced-single-swap-TopOpt", 13),
            ("scene-single-swap-TopAda", 13),
        )
    },
}


#: Test files whose long tests compile on empty caches of their own (cold starts), not the
#: shared one: they cannot load what another worker compiled, nor save anything for it.
OWN_CACHE = {"test_numba_cache.py"}


def _longest_first(items: list, workers: int) -> list:
    """``items`` reordered so that each worker's initial share starts with its long tests."""
    longest = LONGEST
    # tests/protocol.py, imported by the protocol tests' modules if any was collected
    protocol = sys.modules.get("protocol")
    if protocol is not None and protocol.mode() != "sample":
        longest = {**LONGEST, **PROTOCOL_LONGEST}
    seconds = {id(i): longest.get(f"{i.path.name}::{i.name}", 0) for i in items}
    long = sorted((i for i in items if seconds[id(i)]), key=lambda i: -seconds[id(i)])
    rest = [i for i in items if not seconds[id(i)]]
    shares: list[list] = [[] for _ in range(workers)]
    loads = [0] * workers

    # Every worker's first long test would otherwise compile the trees' kernels at the same
    # moment as the others' (the shared cache only helps once one has saved them): the long
    # tests that compile into caches of their own go to the workers after the first, ahead of
    # their other tests, so that the first worker has saved the trees' kernels by the time the
    # others need them. With only some of them there (2026-12-02, a fresh clone on 2 workers,
    # benchmarks/compile_events.py), the second worker's first Ada.OLMR test compiled again,
    # beside the first worker, 53 s of kernels the first was compiling.
    def own(item) -> bool:
        return workers > 1 and item.path.name in OWN_CACHE

    for item in sorted(long, key=lambda i: not own(i)):  # stable: longest first in each group
        w = min(range(1 if own(item) else 0, workers), key=loads.__getitem__)
        shares[w].append(item)
        loads[w] += seconds[id(item)]
    out, left = [], len(items)
    for w, share in enumerate(shares):  # the sizes worksteal gives: left // workers still up
        size = max(left // (workers - w), len(share))
        take = size - len(share)
        out += share + rest[:take]
        rest = rest[take:]
        left -= size
    return out + rest


#: Modules whose doctests need an optional dependency, and its extra. ``make test`` installs every
#: extra; an environment without one (``make mindeps``: River's oldest release needs a newer
#: NumPy than olboost's oldest) skips their doctests and says why, as the tests skip theirs.
DOCTESTS_NEEDING = {"weak/river.py": ("river", "river")}


def pytest_collection_modifyitems(config, items):
    import importlib.util

    import pytest

    missing = {
        path: pytest.mark.skip(reason=f"{module} is optional: pip install olboost[{extra}]")
        for path, (module, extra) in DOCTESTS_NEEDING.items()
        if importlib.util.find_spec(module) is None
    }
    for item in items:
        if getattr(item, "originalname", item.name) in SLOW_TESTS.get(item.path.name, ()):
            item.add_marker(pytest.mark.slow)
        for path, skip in missing.items():
            if item.path.as_posix().endswith("/olboost/" + path):
                item.add_marker(skip)
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = _longest_first(items, workers)


#: Where the library looks for the development data by default, and what it then finds.
_SHARED_DEFAULTS = (
    ("olboost.datasets.enron", "_SHARED", Path("..") / "no-shared-data" / "enron_foldering"),
    ("olboost.topk_experiments._jobs", "DEFAULT_TMC", Path("..") / "no-shared-data" / "tmc"),
)


def pytest_runtest_setup(item):
    """Tests not marked ``shared_data`` run as in a clone without ``../shared`` beside it, as a
    user's is: the library's default data locations point to nothing there. A test that reads
    the development data without saying so fails here rather than only in such a clone (one
    did, session 47: an option error it expected came after a search for the Enron archives,
    which said "not found" there)."""
    if item.get_closest_marker("shared_data") is not None:
        return
    import importlib

    patches = []
    for module, name, nowhere in _SHARED_DEFAULTS:
        owner = importlib.import_module(module)
        patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, nowhere)
    item._shared_defaults = patches


def pytest_runtest_teardown(item):
    for owner, name, value in getattr(item, "_shared_defaults", ()):
        setattr(owner, name, value)
