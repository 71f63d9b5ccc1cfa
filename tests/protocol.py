"""The paper-protocol accuracy tests: every seed run and recorded, one seed rerun by ``make test``.

A paper-protocol test runs a published experiment over the issues' seeds (10 seeds, or 27
reorderings of a stream; Jung & Tewari 2018 averaged 20 runs, 10 for OnlineBMR on
mediamill-reduced) and compares the mean with the published value. Run in full, the 36 of
them took 1,013 s on one core (2026-12-03, one after another on a fresh cache), over 40% of the
CPU time of the whole suite, which put ``make test`` over the 15 minutes CI allows on 2 cores. So
they run in two ways:

* ``make accuracy`` (``OLBOOST_PROTOCOL=full``) runs every seed of every protocol test, checks the
  target on those fresh values, and checks that each equals its recorded value bit for bit;
  ``make accuracy-record`` (``OLBOOST_PROTOCOL=record``) runs every seed and writes the values to
  the record (:data:`RECORD`) instead, after a change that moves results on purpose, and checks
  the targets.
* ``make test`` (no variable) reruns one seed per test, which must equal its recorded value bit
  for bit, and checks the target on the recorded values with the fresh one in their place. A test
  of a single long run (the movement stream) records a cheap part of it beside its result, the
  accuracy on the stream's first rows, and ``make test`` reruns that part.

The runs are seeded and deterministic, so the record holds what the code computes: a change that
moves the results of a test's rerun seed fails that test in ``make test``, whatever the record
says, and a record that misses a target fails it too. The seed rerun is the test id's CRC-32
modulo the number of seeds, so that the tests between them rerun many different seeds. What
``make test`` does not see is a change that moves other seeds' results and not the rerun one's:
``make accuracy`` does.
"""

from __future__ import annotations

import fcntl
import json
import os
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

#: The environment variable that chooses how protocol tests run: unset (or ``sample``), ``full``
#: or ``record``.
MODE_ENV = "OLBOOST_PROTOCOL"
MODES = ("sample", "full", "record")

#: Every protocol test's value per seed, as ``make accuracy-record`` last wrote them.
RECORD = Path(__file__).resolve().parent / "data" / "protocol_record.json"


def mode() -> str:
    """How protocol tests run here (:data:`MODE_ENV`)."""
    value = os.environ.get(MODE_ENV) or "sample"
    if value not in MODES:
        raise ValueError(f"{MODE_ENV}={value!r}: expected one of {', '.join(MODES)}")
    return value


def sampled_seed(test_id: str, seeds: Sequence[Any]) -> Any:
    """The seed that ``make test`` reruns for ``test_id``."""
    return seeds[zlib.crc32(test_id.encode()) % len(seeds)]


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _write(path: Path, test_id: str, values: dict[str, float]) -> None:
    """Set ``test_id``'s values in the record, under a lock: pytest-xdist's workers write it at
    once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(str(path) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = _read(path)
        record[test_id] = values
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)


def seed_values(
    test_id: str,
    seeds: Sequence[Any],
    run: Callable[[Any], float],
    record: Path = RECORD,
    rerun: Any = None,
) -> list[float]:
    """The values of ``run(seed)`` for every seed of ``seeds``, in order, for the test
    ``test_id`` (its pytest node id): all of them run (``full`` and ``record`` modes) or one run
    and the others read from ``record`` (``make test``); see the module's docstring. ``rerun``
    names the one that ``make test`` runs, where the test has a cheap one (by default
    :func:`sampled_seed`). Fails the test when a value run differs from its recorded one, or
    when the record has no values for ``test_id`` outside ``record`` mode."""
    how = mode()
    seeds = list(seeds)
    if how == "record":
        values = [float(run(seed)) for seed in seeds]
        _write(record, test_id, {str(s): v for s, v in zip(seeds, values, strict=True)})
        return values
    recorded = _read(record).get(test_id)
    if recorded is None or sorted(recorded) != sorted(str(s) for s in seeds):
        pytest.fail(
            f"{record.name} has no values for seeds {seeds} of {test_id}: "
            f"run `make accuracy-record` to write them"
        )
    if how == "full":
        values = [float(run(seed)) for seed in seeds]
    else:
        if rerun is None:
            rerun = sampled_seed(test_id, seeds)
        values = [float(run(s)) if s == rerun else recorded[str(s)] for s in seeds]
    moved = [
        f"seed {s}: {v!r}, recorded {recorded[str(s)]!r}"
        for s, v in zip(seeds, values, strict=True)
        if v != recorded[str(s)]
    ]
    assert not moved, (
        f"{test_id}: results differ from {record.name} ({'; '.join(moved)}); if on purpose, "
        f"run `make accuracy-record`"
    )
    return values
