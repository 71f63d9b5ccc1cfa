"""Where the test suite's compile time goes: Numba's compile events in the pytest workers.

A pytest plugin and its report. In a fresh clone (an empty Numba cache), run the suite with it::

    rm -rf .numba_cache /tmp/compile_events
    COMPILE_EVENTS=/tmp/compile_events PYTHONPATH=benchmarks \\
        .venv/bin/python -m pytest -q -n auto --dist worksteal -p compile_events
    .venv/bin/python benchmarks/compile_events.py /tmp/compile_events

Each worker records every ``numba:compile`` event (a function compiled for one signature, not
loaded from the cache) with its seconds exclusive of the callees compiled inside it, and writes
them as JSON to ``$COMPILE_EVENTS/<worker>-<pid>.json`` at its end. The report prints the total,
the seconds spent compiling a (function, signature) that had been compiled before (by the other
worker, or again in one), and the functions and the tests that take most (a test is charged
with the compiles that ran during it: the kernels it was the first of its worker to need).
Compiles in the tests' subprocesses (cold starts, CLI runs, servers, the second compile process)
are not seen.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

_events: list[dict[str, Any]] = []
_stack: list[list[float]] = []
_test: list[str | None] = [None]


def _listen() -> None:
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            _stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev: Any) -> None:
            start, inner = _stack.pop()
            seconds = time.perf_counter() - start
            if _stack:
                _stack[-1][1] += seconds
            function = ev.data["dispatcher"].py_func
            signature = str(ev.data["args"])
            _events.append(
                {
                    "function": f"{function.__module__}.{function.__qualname__}",
                    "signature": hashlib.md5(signature.encode()).hexdigest(),
                    "seconds": seconds - inner,
                    "test": _test[0],
                }
            )

    event.register("numba:compile", Listener())


def pytest_configure(config: Any) -> None:
    _listen()


def pytest_runtest_setup(item: Any) -> None:
    _test[0] = item.nodeid


def pytest_unconfigure(config: Any) -> None:
    folder = Path(os.environ.get("COMPILE_EVENTS", "compile_events"))
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"{worker}-{os.getpid()}.json").write_text(json.dumps(_events))


def report(folder: Path, top: int = 20) -> None:
    """Print the totals, the ``top`` functions and the ``top`` tests (the compiles that ran
    while each test did, whichever test needed them first) of the events written to ``folder``."""
    events = [e for f in sorted(folder.glob("*.json")) for e in json.loads(f.read_text())]
    seen: set[tuple[str, str]] = set()
    repeated = 0.0
    by_function: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    by_test: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for e in events:
        key = (e["function"], e["signature"])
        if key in seen:
            repeated += e["seconds"]
        seen.add(key)
        for table, name in ((by_function, e["function"]), (by_test, e["test"] or "(no test)")):
            table[name][0] += e["seconds"]
            table[name][1] += 1
    total = sum(e["seconds"] for e in events)
    print(f"{len(events)} compiles, {total:.1f} s; {repeated:.1f} s of them repeated")
    for title, table in (("by function", by_function), ("by test", by_test)):
        print(title)
        for name, (seconds, n) in sorted(table.items(), key=lambda kv: -kv[1][0])[:top]:
            print(f"{seconds:8.1f} s {n:4d}  {name}")


if __name__ == "__main__":
    report(Path(sys.argv[1] if len(sys.argv) > 1 else "compile_events"))
