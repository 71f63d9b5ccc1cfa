"""Where a workload's compiled time goes: Linux ``perf`` samples of olboost's kernels, by kernel.

``python benchmarks/profile_kernels.py WORKLOAD [--repeats R] [--top N]`` runs the workload once
to compile its kernels in this process, writes the perf map of every compiled function
(``/tmp/perf-PID.map``, which ``perf report`` reads to name samples in JIT code), then samples
this process with ``perf record`` while it runs the workload ``R`` more times, and prints each
function's share of the samples. Needs ``perf`` (Debian's ``linux-perf``).

Why a script of our own: ``perf`` names machine code that Numba compiled only through a map of
addresses, and Numba writes none (``NUMBA_ENABLE_PROFILING`` adds debug information, which made
compiling, not running, most of a profile). The map is read from Numba's code libraries, which
hold their functions' names only for code compiled in this process, not for code loaded from the
disk cache: so the script compiles everything here, on an empty private cache, with nothing
compiled in another process (``OLBOOST_SERIAL_COMPILE=1``). Each function's size in the map is the
gap to the next mapped address (capped at 1 MiB), an approximation: samples in unmapped code
just after a function count as its own.

Workloads (the first two need ``../shared/datasets``):

* ``topada-mediamill``: Table 1's TopAda job on mediamill-reduced, uniform exploration, seed 1
  (issue #12's timed case).
* ``mbbm-mice``: OnlineMBBM at edge 0.1 on mice, one reordering per repeat (Table 3).
* ``adaolmr-large-k``: Ada.OLMR on 1,000 rows of the synthetic stream of ``large_k.py`` at
  ``k = 1,000`` (issue #11's timed case).
* ``adaolm-car``: Adaboost.OLM, 100 trees, prequential on the bundled car set, shuffled with
  seed 1 (the multiclass benchmark's River-ratio case).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: Cap on a function's size in the perf map (the gap to the next mapped address otherwise).
MAX_SIZE = 1 << 20


def workload(name: str) -> Callable[[int], None]:
    """``run(i)``: the ``i``-th run of workload ``name`` (``i = 0`` compiles)."""
    if name == "topada-mediamill":
        from olboost import topk_experiments as tx

        job = next(
            j
            for j in tx.plan(["mediamill-reduced"], ["uniform"], 1, full=False)
            if j.column == "TopAda"
        )
        return lambda i: tx.run_job(job)
    if name == "mbbm-mice":
        from olboost import experiments as ex

        data = ex.load_experiment_data("mice")
        return lambda i: ex.run_column("MB .1", data, i + 1)
    if name == "adaolmr-large-k":
        from olboost import AdaOLMR, VFDTCommittee
        from olboost.datasets import make_label_stream

        X, Y = make_label_stream(1000, 1000, relevant=5, features=50, seed=0)

        def run(i: int) -> None:
            model = AdaOLMR(VFDTCommittee(n_features=20), learners=20, seed=1, labels=1000)
            model.score_then_learn(X, Y, return_scores=False)

        return run
    if name == "adaolm-car":
        from olboost import AdaBoostOLM, VFDTCommittee
        from olboost.datasets import load_uci
        from olboost.evaluate import prequential

        data = load_uci("car").shuffled(1)
        nominal = data.nominal_cardinalities or None

        def run(i: int) -> None:
            model = AdaBoostOLM(VFDTCommittee(nominal_attributes=nominal), learners=100, seed=1)
            prequential(model, data)

        return run
    raise ValueError(f"unknown workload {name!r}")


def write_perf_map(pid: int | None = None) -> Path:
    """Write ``/tmp/perf-PID.map`` naming every function of every Numba code library compiled
    in this process; returns its path."""
    from numba.core.dispatcher import Dispatcher

    addresses: dict[int, str] = {}
    for obj in gc.get_objects():
        # type(), not isinstance(): the latter raises on a weak proxy whose object is gone
        if not issubclass(type(obj), Dispatcher):
            continue
        for compiled in list(obj.overloads.values()):
            library = compiled.library
            module = getattr(library, "_final_module", None)
            if module is None:  # loaded from the disk cache: no names
                continue
            for function in module.functions:
                if function.is_declaration:
                    continue
                address = library.get_pointer_to_function(function.name)
                if address:
                    addresses[address] = function.name
    items = sorted(addresses.items())
    path = Path(f"/tmp/perf-{pid or os.getpid()}.map")
    with path.open("w") as out:
        for i, (address, name) in enumerate(items):
            size = items[i + 1][0] - address if i + 1 < len(items) else MAX_SIZE
            out.write(f"{address:x} {min(size, MAX_SIZE):x} {name}\n")
    return path


def short_name(symbol: str) -> str:
    """``module.function`` of a Numba-mangled symbol (``_ZN7olboost4weak...``), else the symbol."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        digits = re.match(r"\d+", symbol[i:]).group()
        i += len(digits)
        parts.append(symbol[i : i + int(digits)])
        i += int(digits)
    return ".".join(p.replace("_3clocals_3e", "<locals>") for p in parts) or symbol


def shares(report: str) -> list[tuple[float, str]]:
    """``(percent, name)`` of the lines of ``perf report --stdio --sort symbol``."""
    rows = []
    for line in report.splitlines():
        match = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)", line)
        if match:
            rows.append((float(match.group(1)), short_name(match.group(2))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "workload", choices=["topada-mediamill", "mbbm-mice", "adaolmr-large-k", "adaolm-car"]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    if "numba" in sys.modules:
        raise SystemExit("run as a script: Numba must not be imported before the cache is set")
    # everything it writes goes when it ends (three runs had left 18 MB in /tmp)
    with tempfile.TemporaryDirectory(prefix="olboost-profile-") as scratch:
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(scratch, "numba")
        try:
            _profile(args, Path(scratch) / "perf.data")
        finally:
            Path(f"/tmp/perf-{os.getpid()}.map").unlink(missing_ok=True)


def _profile(args: argparse.Namespace, data: Path) -> None:
    """Run the workload, record it with ``perf`` into ``data`` and print the shares."""
    os.environ["OLBOOST_SERIAL_COMPILE"] = "1"
    run = workload(args.workload)
    t = time.perf_counter()
    run(0)
    print(f"compiled and ran once in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    write_perf_map()
    record = subprocess.Popen(
        ["perf", "record", "-F", "999", "-o", str(data), "-p", str(os.getpid())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # perf attaches
    t = time.perf_counter()
    for i in range(1, args.repeats + 1):
        run(i)
    seconds = time.perf_counter() - t
    record.send_signal(signal.SIGINT)
    if record.wait() not in (0, -signal.SIGINT):
        raise SystemExit(f"perf record failed (exit {record.returncode})")
    report = subprocess.run(
        ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "symbol"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(f"{args.workload}: {args.repeats} runs in {seconds:.2f} s; share of samples:")
    for percent, name in shares(report)[: args.top]:
        print(f"{percent:6.2f}%  {name}")


if __name__ == "__main__":
    main()
