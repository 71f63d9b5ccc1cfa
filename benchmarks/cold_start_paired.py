"""Issue 10's cold-start target as it is worded, "halve today's": the first ``olboost run
--algorithm ada-olmr --dataset emotions`` on an empty Numba cache, this checkout against the code
of an earlier commit (by default ``1f660dc^``, the last one before issue 10's redesign), the two
alternating on one host, so that the host's speed (which moves compile times by a third from
one hour to the next here) cancels out of the ratio.

``python benchmarks/cold_start_paired.py [--against REV] [--rounds R]`` writes
``benchmarks/results/cold_start_paired.json``. Per round and version, in fresh interpreters of
this one (same packages; each version's ``src`` first on ``PYTHONPATH``, from ``git archive``):

* ``cold``: ``olboost run`` on a new, empty ``NUMBA_CACHE_DIR``;
* ``warm``: the same command on the cache the cold run filled;
* ``cold_cost``: the seconds the cold run reports minus those the warm run reports, each
  version's own report: before the redesign one figure (compilation included), after it the
  run and, apart, the compiling before it. What the first run after an install costs over the
  next ones.

Needs the repository's history (a git clone, not an unpacked release).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _common import machine_info

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
COMMAND = ["-m", "olboost", "run", "--algorithm", "ada-olmr", "--dataset", "emotions"]
#: The last commit before issue 10's redesign (1f660dc pinned its seeded results first).
BEFORE = "1f660dc^"
# "<job> s" or "<job> s (+ <compile> s compile before)" at the end of olboost run's last line
_SECONDS = re.compile(r"([0-9.]+) s(?: \(\+ ([0-9.]+) s compile before\))?\s*$")


def reported_seconds(line: str) -> float | None:
    """The seconds an ``olboost run`` line reports, job and compile before it together (before
    the redesign, one figure that included the compile); ``None`` if it reports none."""
    match = _SECONDS.search(line)
    return None if match is None else float(match[1]) + float(match[2] or 0.0)


def _run(src: Path, cache: str) -> tuple[float, float]:
    """The seconds one ``olboost run`` reports (:func:`reported_seconds`) and its wall seconds."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(src)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, *COMMAND], capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - t0
    lines = out.stdout.strip().splitlines()
    seconds = reported_seconds(lines[-1]) if lines else None
    if out.returncode != 0 or seconds is None:
        tail = out.stdout[-2000:] + out.stderr[-3000:]
        raise RuntimeError(f"olboost run failed with {src}:\n{tail}")
    return seconds, wall


def _source(rev: str | None, into: Path) -> tuple[Path, str]:
    """The ``src`` directory of ``rev`` (``None``: this checkout's, whose commit the record's
    ``commit`` names, from :func:`machine_info`) and the commit it names."""
    if rev is None:
        return ROOT / "src", "working tree"
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", commit, "src"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src", commit


def measure(against: str, rounds: int) -> dict:
    """Alternate the two versions ``rounds`` times; the medians and their ratio."""
    with tempfile.TemporaryDirectory(prefix="olboost-before-") as tmp:
        versions = {"before": _source(against, Path(tmp)), "after": _source(None, Path(tmp))}
        runs: dict[str, list[dict]] = {name: [] for name in versions}
        for _ in range(rounds):
            for name, (src, _commit) in versions.items():
                with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                    cold, cold_wall = _run(src, cache)
                    warm, warm_wall = _run(src, cache)
                runs[name].append(
                    {
                        "cold_reported_seconds": cold,
                        "warm_reported_seconds": warm,
                        "cold_cost_seconds": cold - warm,
                        "cold_wall_seconds": cold_wall,
                        "warm_wall_seconds": warm_wall,
                    }
                )
                print(f"{name}: cold {cold:.2f} s, warm {warm:.2f} s", file=sys.stderr, flush=True)
    median = {n: statistics.median(r["cold_cost_seconds"] for r in rs) for n, rs in runs.items()}
    ratio = median["after"] / median["before"]
    return {
        "suite": "cold start, paired: olboost " + " ".join(COMMAND[2:]),
        "command": "python " + " ".join(COMMAND),
        "versions": {name: commit for name, (_src, commit) in versions.items()},
        "rounds": rounds,
        "runs": runs,
        "median_cold_cost_seconds": median,
        "ratio_after_to_before": ratio,
        "target": "issue 10: halve the cold start (ratio <= 0.5)",
        "met": ratio <= 0.5,
        **machine_info(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--against", default=BEFORE, help="the earlier commit (default %(default)s)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS / "cold_start_paired.json")
    args = parser.parse_args()
    known = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
        cwd=ROOT, capture_output=True,
    )  # fmt: skip
    if known.returncode != 0:
        print(f"cold_start_paired: skipped, {args.against} is not in this checkout's history")
        return 0
    result = measure(args.against, args.rounds)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    m = result["median_cold_cost_seconds"]
    print(
        f"cold start: {m['before']:.1f} s before ({result['versions']['before']}), "
        f"{m['after']:.1f} s after: ratio {result['ratio_after_to_before']:.2f} (target 0.5)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
