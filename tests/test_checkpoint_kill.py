"""The kill test of issue 14 (item 4): ``olboost run --checkpoint`` killed with SIGKILL at 20
random moments and resumed each time ends with the model (pickle bytes) and the JSON record
(timings aside) of an uninterrupted run.

The moments are drawn from a seeded generator, two kinds mixed: a delay after the process starts
(it then dies while importing, loading the data or compiling, or in its first checkpoints), or a
number of checkpoints written by that process followed by a delay within one checkpoint
interval (it then dies while learning, or while writing a checkpoint: most of the time of a run
that checkpoints every 25 examples). Each process runs the same command line (``--resume``
starts from the beginning while there is no checkpoint). The run is long enough for every kill to
find it unfinished; the test fails otherwise, as it does if a resumed run loses ground.

Time: the processes' start (Python, NumPy, Numba's cached kernels: 1.5-3 s each on a loaded
2-core machine) dominates; about 40-60 s in all (the uninterrupted run goes alongside).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from olboost import checkpoint as ck

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)"
)  # the platforms olboost supports all have it; Windows does not

KILLS = 20
EVERY = 25
SEED = 20261125
# Long enough for the 20 kills: a process is killed after the checkpoints it was seen to write,
# but the polling misses some when they come faster than every millisecond or so, and a killed
# process then got up to 375 examples further (2026-12-02, a fast host and faster trees: at 6
# loops, 2,548 examples, the run finished before its 20th kill). 24 loops leave room for 20
# kills of 475 examples each.
LOOPS = 24
RUN = [
    "run", "--algorithm", "ada-olmr", "--dataset", "emotions", "--learners", "4",
    "--features", "10", "--loops", str(LOOPS), "--seed", "3", "--no-progress",
]  # fmt: skip
TOTAL = 391 * LOOPS + 202
TIMINGS = {"seconds", "seconds_train", "seconds_test", "compile_seconds"}
#: Longest wait for one process to reach its kill moment (it only ever takes seconds).
PATIENCE = 120.0


def _olboost(*argv: str) -> list[str]:
    return [sys.executable, "-m", "olboost", *argv]


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which file ``path`` is now: each checkpoint is a new file renamed over the old one."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _kill_at_a_random_moment(
    argv: list[str], checkpoint: Path, rng: random.Random, timing: dict[str, float]
) -> str:
    """Start ``argv``, SIGKILL it at a moment drawn from ``rng``; return the kind of moment."""
    t0 = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = t0 + PATIENCE
    try:
        if "startup" in timing and rng.random() < 1 / 3:
            kind = "after a delay"
            until = t0 + rng.uniform(0.0, timing["startup"])
            while time.monotonic() < until and process.poll() is None:
                time.sleep(0.001)
        else:
            kind = "after checkpoints"
            wanted, seen = rng.randint(1, 4), 0
            last, stamps = _identity(checkpoint), []
            while seen < wanted and process.poll() is None and time.monotonic() < deadline:
                now = _identity(checkpoint)
                if now != last and now is not None:
                    seen, last = seen + 1, now
                    stamps.append(time.monotonic())
                time.sleep(0.001)
            if stamps:  # the shortest start seen: a delay within it ends in the start
                timing["startup"] = min(timing.get("startup", PATIENCE), stamps[0] - t0)
            gap = (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else 0.03
            until = time.monotonic() + rng.uniform(0.0, gap)
            while time.monotonic() < until and process.poll() is None:
                time.sleep(0.001)
        assert process.poll() is None, (
            f"the run ended (status {process.returncode}) before its kill {kind}: it must be "
            "longer for this test"
        )
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    return kind


def test_sigkill_at_20_random_moments_then_resume_equals_an_uninterrupted_run(tmp_path):
    reference = subprocess.Popen(
        _olboost(*RUN, "--output", str(tmp_path / "ref.json"), "--save-model",
                 str(tmp_path / "ref.olb")),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    checkpoint = tmp_path / "run.olb"

    def resumed(every: int = EVERY) -> list[str]:
        return _olboost(
            *RUN, "--checkpoint", str(checkpoint), "--checkpoint-every", str(every), "--resume",
            "--output", str(tmp_path / "out.json"), "--save-model", str(tmp_path / "out.olb"),
        )  # fmt: skip

    rng = random.Random(SEED)
    timing: dict[str, float] = {}
    done, kinds, torn = [], [], 0
    for _ in range(KILLS):
        kinds.append(_kill_at_a_random_moment(resumed(), checkpoint, rng, timing))
        torn += any(tmp_path.glob(".run.olb.*.olboost-tmp"))  # killed while writing one
        done.append(ck.load_run(checkpoint)["progress"].done if checkpoint.exists() else 0)
        assert not (tmp_path / "out.json").exists(), (kinds, done, timing)
    assert done == sorted(done), f"a resumed run lost ground: {done}"
    assert 0 < done[-1] < TOTAL and done.count(0) <= kinds.count("after a delay")
    assert kinds.count("after checkpoints") >= KILLS // 2
    # the last process checkpoints less often: --checkpoint-every may change between resumes
    finished = subprocess.run(resumed(500), capture_output=True, text=True, timeout=PATIENCE)
    assert finished.returncode == 0, finished.stderr
    assert f"resuming from {checkpoint}: {done[-1]} of {TOTAL} examples done" in finished.stderr
    assert reference.wait(timeout=PATIENCE) == 0, reference.stderr.read()
    reference.stderr.close()

    # the same model, to the byte (olboost.save writes a canonical pickle) ...
    assert (tmp_path / "out.olb").read_bytes() == (tmp_path / "ref.olb").read_bytes()
    assert ck.dumps(ck.load(tmp_path / "out.olb")) == ck.dumps(ck.load(checkpoint))
    # ... and the same record, timings aside
    ours, theirs = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("out", "ref"))
    assert set(ours) == set(theirs)
    assert {k: v for k, v in ours.items() if k not in TIMINGS} == {
        k: v for k, v in theirs.items() if k not in TIMINGS
    }
    assert ours["n_train"] == 391 and ours["loops"] == LOOPS and ours["n_test"] == 202
    # no temporary file of a killed write is left
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "out.json", "out.olb", "ref.json", "ref.olb", "run.olb",
    ]  # fmt: skip
    print(f"\nkills: {kinds.count('after checkpoints')} after checkpoints, "
          f"{kinds.count('after a delay')} after a delay; {torn} while writing a checkpoint; "
          f"examples done at each kill: {done} of {TOTAL}")  # fmt: skip
