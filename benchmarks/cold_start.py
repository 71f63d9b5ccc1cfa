"""Cold and warm start of every booster path: what the first ``olboost run`` after an install
compiles, and where that time goes (``make bench`` runs it from ``benchmarks/run.py``; alone:
``python benchmarks/cold_start.py [--paths ada-olmr ...]``, which prints the JSON).

Each path is what ``olboost run --algorithm <path>`` compiles before its clock starts: the CLI's
own model (100 learners, 20 features per tree, CLI defaults) warmed up by
:func:`olboost.evaluate.warm_up` on its data set (emotions train/test for the rankers, balance
prequential for the multiclass boosters). Per path, in fresh interpreters:

* ``cold``: ``NUMBA_CACHE_DIR`` pointed at a new, empty directory; wall and CPU seconds of the
  warm-up (compiling every kernel and saving it to the cache; the median of :data:`REPEATS`
  runs, each on its own empty cache, all listed), and of ``import olboost``. The driver
  compiles the committee's learn in a second process meanwhile
  (:func:`olboost._numba_cache.compile_elsewhere`): ``cold_compile_cpu_seconds`` is this
  process's, ``worker_cpu_seconds`` the second's, ``compiled_elsewhere`` the kernels it compiled;
* ``serial``: the same cold start with ``OLBOOST_SERIAL_COMPILE=1`` (every kernel compiled in
  one process, on another empty cache): what one core takes;
* ``warm``: a third interpreter on the cache the cold one filled (loading only);
* ``kernels``: where the serial cold compile goes, per compiled function (Numba's
  ``numba:compile`` events; CPU seconds of the compiling thread, so that a busy machine does not
  inflate them): ``seconds`` inclusive of the callees compiled on the way (non-inlined ``njit``
  functions called from it), ``self_seconds`` without them, and ``llvm_seconds``, the part spent
  holding LLVM's lock (IR optimisation and machine code) in that function's own compile;
* ``passes``: wall seconds per Numba compiler pass (type inference, parfor passes, lowering,
  which includes LLVM), summed over every function compiled; a caller's type inference includes
  the callees it compiles, so passes overlap and their sum exceeds the total.

``all`` compiles every path in one interpreter (the kernels they share compiled once): the full
set of kernels of the library.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from _common import run_one

#: Cold starts per path (the median is reported): the target path's moves by a few seconds from
#: one run to the next on a 2-core host (12.9 to 19.6 s in five runs of one commit).
REPEATS = {"ada-olmr": 3}

#: Booster paths measured (``olboost run --algorithm`` names); "all" is every one in one process.
PATHS = [
    "ada-olmr",
    "online-bmr",
    "adaboost-olm",
    "online-mbbm",
    "best-tree",
    "oza-boost",
    "ova-adaboost-ol",
    "ada-ova",
]


def _path_model(algorithm: str):
    """The model and data ``olboost run --algorithm <algorithm>`` builds (CLI defaults)."""
    import argparse as ap

    from olboost import cli

    args = cli.build_parser().parse_args(["run", "--algorithm", algorithm, "--dataset", "x"])
    spec = cli.ALGORITHMS[algorithm]
    name = "balance" if spec.task == "multiclass" else "emotions"
    data = cli._load(ap.Namespace(**{**vars(args), "dataset": name}))
    model = spec.build(cli.COMMITTEES["vfdt"](args, data.nominal_cardinalities), args)
    if spec.task == "multiclass":
        return model, (data.shuffled(args.seed),)
    return model, (data.train, data.test)


def _short(args) -> str:
    """A compact signature: ``f8[:, ::1]`` style arrays, ``ro`` for read-only, tuples as ``(n)``."""
    import numba

    out = []
    for a in args:
        if isinstance(a, numba.types.Array):
            layout = {"C": "C", "F": "F", "A": "A"}[a.layout]
            out.append(f"{a.dtype}[{a.ndim}d,{layout}{',ro' if not a.mutable else ''}]")
        elif isinstance(a, numba.types.BaseTuple):
            out.append(f"tuple({len(a)})")
        else:
            text = str(a)
            out.append(text if len(text) <= 40 else text[:37] + "...")
    return "(" + ", ".join(out) + ")"


class _Recorder:
    """Per-function compile time from Numba's ``numba:compile`` events (nested: a callee compiled
    on the way is timed inside its caller) and LLVM-lock time attributed to the innermost."""

    def __init__(self):
        from numba.core import event

        recorder = self

        class Compile(event.Listener):
            def on_start(self, ev):
                d = ev.data["dispatcher"]
                name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
                recorder.stack.append([name, time.thread_time(), 0.0, 0.0])

            def on_end(self, ev):
                name, t0, children, llvm = recorder.stack.pop()
                seconds = time.thread_time() - t0
                if recorder.stack:
                    recorder.stack[-1][2] += seconds
                row = recorder.kernels.setdefault(
                    name,
                    {
                        "compiles": 0,
                        "seconds": 0.0,
                        "self_seconds": 0.0,
                        "llvm_seconds": 0.0,
                        "signatures": [],
                    },
                )
                row["compiles"] += 1
                row["seconds"] += seconds
                row["self_seconds"] += seconds - children
                row["llvm_seconds"] += llvm
                if name.startswith("olboost"):
                    row["signatures"].append(_short(ev.data["args"]))

        class Llvm(event.Listener):
            def on_start(self, ev):
                recorder.llvm_t0 = time.thread_time()

            def on_end(self, ev):
                if recorder.stack:
                    recorder.stack[-1][3] += time.thread_time() - recorder.llvm_t0

        self.stack: list[list] = []
        self.kernels: dict[str, dict] = {}
        self.llvm_t0 = 0.0
        self.listeners = [("numba:compile", Compile()), ("numba:llvm_lock", Llvm())]

    def __enter__(self):
        from numba.core import event

        for kind, listener in self.listeners:
            event.register(kind, listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        for kind, listener in self.listeners:
            event.unregister(kind, listener)


def _pass_times() -> dict[str, float]:
    """Seconds per Numba compiler pass, summed over every compiled overload of olboost's
    dispatchers (each overload's own pipeline; a callee's passes are counted once, as its own)."""
    import numba

    totals: dict[str, float] = {}
    seen = set()
    for name, mod in list(sys.modules.items()):
        if not name.startswith("olboost"):
            continue
        for obj in vars(mod).values():
            if not isinstance(obj, numba.core.dispatcher.Dispatcher) or id(obj) in seen:
                continue
            seen.add(id(obj))
            for cres in obj.overloads.values():
                for pipeline in (cres.metadata or {}).get("pipeline_times", {}).values():
                    for pass_name, t in pipeline.items():
                        key = pass_name.split("_", 1)[1] if pass_name[0].isdigit() else pass_name
                        totals[key] = totals.get(key, 0.0) + t.init + t.run + t.finalize
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def _measure(path: str) -> dict:
    """Import olboost and warm up ``path`` (or every path) in this process; report the times."""
    t0, c0 = time.perf_counter(), time.process_time()
    import olboost  # noqa: F401
    from olboost import _numba_cache
    from olboost.evaluate import warm_up

    out = {"import_seconds": time.perf_counter() - t0}
    elsewhere = []
    join = _numba_cache.Elsewhere.join

    def recording_join(self):
        started = self.started
        ok = join(self)
        if started:
            elsewhere.append({"kernel": self.kernel.py_func.__qualname__, "ok": ok})
        return ok

    _numba_cache.Elsewhere.join = recording_join
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    t1, c1 = time.perf_counter(), time.process_time()
    with _Recorder() as rec:
        for algorithm in PATHS if path == "all" else [path]:
            model, streams = _path_model(algorithm)
            warm_up(model, *streams)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["worker_cpu_seconds"] = (after.ru_utime + after.ru_stime) - (
        children.ru_utime + children.ru_stime
    )
    out["compiled_elsewhere"] = elsewhere
    by_module: dict[str, float] = {}
    for name, row in rec.kernels.items():
        module = name.split(".<locals>")[0].rsplit(".", 1)[0]
        module = module if module.startswith("olboost") else "numba (library overloads)"
        by_module[module] = by_module.get(module, 0.0) + row["self_seconds"]
    out.update(
        warm_up_seconds=time.perf_counter() - t1,
        self_seconds_by_module=dict(sorted(by_module.items(), key=lambda kv: -kv[1])),
        warm_up_cpu_seconds=time.process_time() - c1,
        total_cpu_seconds=time.process_time() - c0,
        compiled_functions=sum(k["compiles"] for k in rec.kernels.values()),
        kernels=dict(sorted(rec.kernels.items(), key=lambda kv: -kv[1]["self_seconds"])),
        passes=_pass_times(),
    )
    return out


def measure(paths: list[str]) -> dict:
    """Cold then warm start of each path, each in fresh interpreters (see the module doc)."""
    from _common import loadavg

    results = {}
    for path in paths:
        load_start = loadavg()
        runs = []
        for _ in range(REPEATS.get(path, 1)):
            with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                env = {"NUMBA_CACHE_DIR": cache}
                runs.append((run_one(__file__, [path], env), run_one(__file__, [path], env)))
        # the median cold start (by wall seconds), with the warm start on its cache
        cold, warm = sorted(runs, key=lambda r: r[0]["warm_up_seconds"])[len(runs) // 2]
        with tempfile.TemporaryDirectory(prefix="numba-serial-") as cache:
            env = {"NUMBA_CACHE_DIR": cache, "OLBOOST_SERIAL_COMPILE": "1"}
            serial = run_one(__file__, [path], env)
        results[path] = {
            "cold_compile_seconds": cold["warm_up_seconds"],
            "cold_compile_runs_seconds": [c["warm_up_seconds"] for c, _ in runs],
            "cold_compile_cpu_seconds": cold["warm_up_cpu_seconds"],
            "worker_cpu_seconds": cold["worker_cpu_seconds"],
            "compiled_elsewhere": cold["compiled_elsewhere"],
            "serial_compile_seconds": serial["warm_up_seconds"],
            "serial_compile_cpu_seconds": serial["warm_up_cpu_seconds"],
            "warm_start_seconds": warm["warm_up_seconds"],
            "import_seconds_cold": cold["import_seconds"],
            "import_seconds_warm": warm["import_seconds"],
            "compiled_functions": serial["compiled_functions"],
            "self_seconds_by_module": {
                k: round(v, 2) for k, v in serial["self_seconds_by_module"].items()
            },
            "loadavg_start": load_start,
            "loadavg_end": loadavg(),
            "kernels": {
                k: {
                    f: round(v, 3) if isinstance(v, float) else v
                    for f, v in row.items()
                    if f != "signatures" or row["compiles"] > 1
                }
                for k, row in serial["kernels"].items()
                if row["self_seconds"] >= 0.1
            },
            "passes": {k: round(v, 3) for k, v in serial["passes"].items() if v >= 0.05},
        }
        if path == "ada-olmr":
            # issue 10: halve the Ada.OLMR path's cold start, about 30 s when it was filed
            results[path].update(target_seconds=15.0, met=cold["warm_up_seconds"] <= 15.0)
        print(
            f"cold start {path}: compile {cold['warm_up_seconds']:.1f} s "
            f"(CPU {cold['warm_up_cpu_seconds']:.1f} s here, {cold['worker_cpu_seconds']:.1f} s "
            f"in the second process), one process {serial['warm_up_seconds']:.1f} s "
            f"({serial['compiled_functions']} functions), "
            f"warm start {warm['warm_up_seconds']:.2f} s",
            file=sys.stderr,
            flush=True,
        )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=1, metavar="PATH", help="measure in this process")
    parser.add_argument("--paths", nargs="+", default=["all", *PATHS], choices=["all", *PATHS])
    parser.add_argument("--output", type=Path, help="write the JSON here (default: stdout)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_measure(args.one[0])))
        return 0
    text = json.dumps(measure(args.paths), indent=2)
    if args.output:
        args.output.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
