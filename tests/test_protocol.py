"""The protocol tests' record (tests/protocol.py): what ``make test`` reruns and when it fails."""

from __future__ import annotations

import json
import math

import pytest

from protocol import MODE_ENV, seed_values

SEEDS = list(range(1, 11))
TEST_ID = "tests/test_x.py::test_y[z]"


def loss(seed: int) -> float:
    return 1.0 / (seed + 0.1)


class Counting:
    """``loss`` that remembers the seeds it ran."""

    def __init__(self) -> None:
        self.seeds: list[int] = []

    def __call__(self, seed: int) -> float:
        self.seeds.append(seed)
        return loss(seed)


@pytest.fixture
def record(tmp_path, monkeypatch):
    path = tmp_path / "record.json"
    monkeypatch.setenv(MODE_ENV, "record")
    assert seed_values(TEST_ID, SEEDS, loss, path) == [loss(s) for s in SEEDS]
    monkeypatch.delenv(MODE_ENV)
    return path


def _tamper(path, seed: int) -> None:
    values = json.loads(path.read_text())
    value = values[TEST_ID][str(seed)]
    values[TEST_ID][str(seed)] = math.nextafter(value, math.inf)  # one ulp
    path.write_text(json.dumps(values))


def test_make_test_reruns_one_seed_and_reads_the_others(record):
    run = Counting()
    assert seed_values(TEST_ID, SEEDS, run, record) == [loss(s) for s in SEEDS]
    assert len(run.seeds) == 1 and run.seeds[0] in SEEDS


def test_the_tests_rerun_different_seeds(record):
    rerun = set()
    for i in range(40):
        run = Counting()
        test_id = f"{TEST_ID}-{i}"
        values = json.loads(record.read_text())
        values[test_id] = values[TEST_ID]
        record.write_text(json.dumps(values))
        seed_values(test_id, SEEDS, run, record)
        rerun.update(run.seeds)
    assert rerun == set(SEEDS)


def test_a_rerun_seed_that_moved_fails(record):
    run = Counting()
    seed_values(TEST_ID, SEEDS, run, record)
    _tamper(record, run.seeds[0])
    with pytest.raises(AssertionError, match=f"seed {run.seeds[0]}: .*make accuracy-record"):
        seed_values(TEST_ID, SEEDS, loss, record)


def test_a_full_run_checks_every_seed(record, monkeypatch):
    run = Counting()
    seed_values(TEST_ID, SEEDS, run, record)
    other = next(s for s in SEEDS if s != run.seeds[0])
    _tamper(record, other)
    # what make test cannot see ...
    seed_values(TEST_ID, SEEDS, loss, record)
    # ... make accuracy does
    monkeypatch.setenv(MODE_ENV, "full")
    with pytest.raises(AssertionError, match=f"seed {other}: "):
        seed_values(TEST_ID, SEEDS, loss, record)


def test_a_full_run_returns_fresh_values_of_every_seed(record, monkeypatch):
    monkeypatch.setenv(MODE_ENV, "full")
    run = Counting()
    assert seed_values(TEST_ID, SEEDS, run, record) == [loss(s) for s in SEEDS]
    assert run.seeds == SEEDS


def test_a_test_without_a_record_fails(tmp_path, record):
    with pytest.raises(pytest.fail.Exception, match="no values .*make accuracy-record"):
        seed_values(TEST_ID, SEEDS, loss, tmp_path / "missing.json")
    with pytest.raises(pytest.fail.Exception, match="no values"):  # other seeds than recorded
        seed_values(TEST_ID, range(1, 12), loss, record)


def test_an_unknown_mode_is_refused(record, monkeypatch):
    monkeypatch.setenv(MODE_ENV, "fast")
    with pytest.raises(ValueError, match="OLBOOST_PROTOCOL='fast'"):
        seed_values(TEST_ID, SEEDS, loss, record)


def test_a_test_can_name_the_value_it_reruns(record):
    for seed in (SEEDS[0], SEEDS[-1]):
        run = Counting()
        assert seed_values(TEST_ID, SEEDS, run, record, rerun=seed) == [loss(s) for s in SEEDS]
        assert run.seeds == [seed]
