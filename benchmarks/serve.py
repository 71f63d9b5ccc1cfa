"""Load benchmark of ``olboost serve`` (issue 15): 100 trees on yeast, 8 concurrent users for 60 s.

The server is ``olboost serve`` in its own process (uvicorn on 127.0.0.1, the default ``--sync
full`` log), Top-k Adaptive with 100 Hoeffding trees (rho 0.04, k 3) on yeast's schema. Its model
is first grown by one pass of the stream (2,417 users, untimed), since a fresh model's small
trees learn faster than a trained one's; then ``olboost.serve.simulate`` plays 8 concurrent users
for 60 s (the train split looped, each user ranking then clicking at once), in this process. The
targets: at least 300 rank + feedback pairs per second sustained, p99 ``/rank`` latency under
25 ms. Also recorded: the learner's backlog when the load stops and how long it takes to learn it
(a service that acknowledges faster than it learns would show it here), and the server's CPU.

``python benchmarks/serve.py [--seconds 60] [--sync full|normal]`` writes
``benchmarks/results/serve.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from olboost.checkpoint import atomic_write
from olboost.datasets import load
from olboost.serve.simulate import _get, simulate

RESULTS = Path(__file__).parent / "results" / "serve.json"
TOKEN = "benchmark-token"


def _health(url: str) -> dict:
    import asyncio

    return asyncio.run(_get(url, "/health"))


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--sync", choices=["full", "normal"], default="full")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    data = load("yeast")
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "url"
        env = {**os.environ, "OLBOOST_SERVE_TOKEN": TOKEN}
        cmd = [
            sys.executable, "-m", "olboost", "serve", "--store", f"{tmp}/store", "--port", "0",
            "--ready-file", str(ready), "--dataset", "yeast", "--learners", str(args.learners),
            "--rho", "0.04", "--k", "3", "--sync", args.sync,
        ]  # fmt: skip
        server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
        try:
            while not ready.exists():
                if server.poll() is not None:
                    raise SystemExit("olboost serve exited before it was ready")
                time.sleep(0.1)
            url = ready.read_text().strip()
            warm = simulate(url, data, token=TOKEN, concurrency=args.concurrency)
            while (h := _health(url))["applied_seq"] < h["committed_seq"]:
                time.sleep(0.1)
            cpu0 = _cpu_seconds(server.pid)
            report = simulate(
                url, data, token=TOKEN, concurrency=args.concurrency, loops=20,
                duration=args.seconds,
            )  # fmt: skip
            cpu1 = _cpu_seconds(server.pid)
            stopped = time.perf_counter()
            health = _health(url)
            backlog = health["committed_seq"] - health["applied_seq"]
            while (h := _health(url))["applied_seq"] < h["committed_seq"]:
                time.sleep(0.05)
            drain = time.perf_counter() - stopped
        finally:
            server.terminate()
            server.wait(60)
    rec = report.record()
    record = {
        "what": "olboost serve, Top-k Adaptive, 100 trees on yeast, rank+feedback pairs",
        "learners": args.learners,
        "concurrency": args.concurrency,
        "sync": args.sync,
        "warm_up_pairs": warm.pairs,
        "seconds": rec["seconds"],
        "pairs": rec["pairs"],
        "pairs_per_second": rec["pairs_per_second"],
        "rank_latency_ms": rec["rank_latency_ms"],
        "feedback_latency_ms": rec["feedback_latency_ms"],
        "errors": rec["errors"],
        "learn_backlog_at_stop": backlog,
        "seconds_to_learn_backlog": drain,
        "server_cpu_seconds": cpu1 - cpu0,
        "targets": {"pairs_per_second": 300, "rank_p99_ms": 25},
        "met": {
            "pairs_per_second": rec["pairs_per_second"] >= 300,
            "rank_p99_ms": rec["rank_latency_ms"]["p99"] < 25,
        },
        "load_average_after": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    atomic_write(args.output, (json.dumps(record, indent=2) + "\n").encode())
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
