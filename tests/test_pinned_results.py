"""Seeded results pinned bit for bit to the recorded benchmark files.

`benchmarks/results/reproduce_mlr.json` and `reproduce_multiclass*.json` were written by
`olboost reproduce`; every refactor must leave their numbers unchanged to the last bit. These tests
rerun a few cells of each (the cheap ones: emotions for the ranking boosters, balance for every
multiclass column) through the same code paths and compare with ``==``, no tolerance: a change of
one ulp in any kernel, seed derivation or summation order fails here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from olboost import cli
from olboost import experiments as ex

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _record(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def _mlr_row(dataset: str) -> dict:
    return next(r for r in _record("reproduce_mlr.json")["rows"] if r["dataset"] == dataset)


def _mlr_args(algorithm: str, seed: int, **extra: object) -> argparse.Namespace:
    """The namespace `olboost reproduce mlr` hands to `run_one` (its defaults)."""
    parser = cli.build_parser()
    args = parser.parse_args(["reproduce", "mlr", "--no-progress"])
    return argparse.Namespace(
        **{**vars(args), "algorithm": algorithm, "dataset": "emotions", "seed": seed, **extra}
    )


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_ada_olmr_emotions_rank_loss_is_the_recorded_one(seed):
    from olboost.datasets import load

    expected = _mlr_row("emotions")["ada_olmr"]["rank_loss_per_seed"][seed - 1]
    record = cli.run_one(_mlr_args("ada-olmr", seed), load("emotions"))
    assert record["rank_loss"] == expected


@pytest.mark.parametrize(("gamma", "seed"), [("0.1", 1), ("0.01", 4)])
def test_online_bmr_emotions_rank_loss_is_the_recorded_one(gamma, seed):
    from olboost.datasets import load

    expected = _mlr_row("emotions")["online_bmr_by_gamma"][gamma]["rank_loss_per_seed"][seed - 1]
    args = _mlr_args("online-bmr", seed, gamma=float(gamma))
    record = cli.run_one(args, load("emotions"))
    assert record["rank_loss"] == expected


@pytest.mark.parametrize("column", list(_record("reproduce_multiclass.json")["results"]["balance"]))
def test_multiclass_balance_column_is_the_recorded_one(column):
    recorded = _record("reproduce_multiclass.json")["results"]["balance"][column]
    data = ex.load_experiment_data("balance")
    runs = [ex.run_column(column, data, r) for r in range(1, recorded["reorderings"] + 1)]
    got = ex.summarize(runs)
    assert got["accuracy"] == recorded["accuracy"]
    assert got["accuracy_last20"] == recorded["accuracy_last20"]


@pytest.mark.parametrize("column", ["MB .3", "MB .1"])
def test_mbbm_balance_over_27_reorderings_is_the_recorded_one(column):
    recorded = _record("reproduce_multiclass_mbbm.json")["results"]["balance"][column]
    data = ex.load_experiment_data("balance")
    runs = [ex.run_column(column, data, r) for r in range(1, recorded["reorderings"] + 1)]
    got = ex.summarize(runs)
    assert got["accuracy"] == recorded["accuracy"]
    assert got["accuracy_last20"] == recorded["accuracy_last20"]


# --------------------------------------------------------------------------------------------------
# Every booster configuration of the shared check suite, fingerprinted: the SHA-256 of the float64
# bytes of the scores it gives, row by row (one-example API) and over arrays (the compiled path),
# while learning a seeded synthetic stream. `tests/pinned_scores.json` was recorded from the code
# before the redesign of issue 10 (`OLBOOST_RECORD_PINS=1 pytest tests/test_pinned_results.py`
# rewrites it, which is only right when a result is meant to change). Bytes are compared, so this
# holds on one machine and one set of library versions, as the determinism promise does.
# --------------------------------------------------------------------------------------------------

PINS = Path(__file__).with_name("pinned_scores.json")


def _booster_cases() -> list[tuple[str, dict]]:
    from olboost.boosters.base import Booster
    from olboost.checks import all_estimators
    from olboost.weak.river import RiverCommittee

    cases = []
    for cls in all_estimators():
        if not issubclass(cls, Booster):
            continue
        for i, params in enumerate(cls._unit_test_params()):
            if isinstance(params.get("committee"), RiverCommittee):
                continue  # River's own arithmetic may change with its version
            cases.append((f"{cls.__name__}[{i}]", cls, params))
    return cases


def _linear_cases() -> list[tuple[str, type, dict]]:
    """The linear label ranker and boosters on linear rankers (alone and mixed with trees),
    pinned apart: the check suite's booster configurations run on trees. One case per scaling
    of the committee (standard, min-max under the entropy, none) and per update. Recorded from
    the code of commit 08180c9, before the scaling kernels moved to
    :mod:`olboost.rankers._scaling`."""
    from olboost import (
        AdaBoostOLM,
        AdaOLMR,
        LabelRanker,
        LinearCommittee,
        MixedCommittee,
        OnlineBMR,
    )

    entropic = LinearCommittee(
        n_features=4, complexity="entropy", scale="minmax", margin=(0.05, 0.2), C=(0.5, 2.0)
    )
    return [
        ("LabelRanker[I]", LabelRanker, {"update": "I", "seed": 3}),
        ("LabelRanker[II]", LabelRanker, {"update": "II", "C": 0.5, "margin": 1.0, "seed": 2}),
        ("LabelRanker[III]", LabelRanker, {"update": "III", "C": 0.5, "margin": 1.0}),
        (
            "LabelRanker[III-entropy]",
            LabelRanker,
            {"update": "III", "complexity": "entropy", "C": 3.0, "margin": 0.1},
        ),
        (
            "LabelRanker[I-entropy]",
            LabelRanker,
            {"update": "I", "complexity": "entropy", "C": 2.0, "margin": 0.2, "seed": 4},
        ),
        (
            "AdaOLMR[linear]",
            AdaOLMR,
            {"committee": LinearCommittee(n_features=4), "learners": 4, "seed": 1},
        ),
        (
            "AdaBoostOLM[linear-entropy]",
            AdaBoostOLM,
            {"committee": entropic, "learners": 4, "seed": 2},
        ),
        (
            "OnlineBMR[linear-unscaled]",
            OnlineBMR,
            {
                "committee": LinearCommittee(n_features=4, scale="none", update="II"),
                "learners": 4,
                "seed": 3,
            },
        ),
        ("AdaOLMR[mixed]", AdaOLMR, {"committee": MixedCommittee(), "learners": 4, "seed": 4}),
    ]


def _fingerprint(cls: type, params: dict) -> dict[str, str]:
    import hashlib

    import numpy as np

    from olboost import _libm
    from olboost.checks import synthetic_multilabel

    X, Y = synthetic_multilabel(n=120, d=6, k=4, seed=11)
    if params.get("complexity") == "entropy":  # a label ranker's entropy takes [0, 1]
        # the C library's exp (NumPy's rounds otherwise on AVX-512 machines: other data there)
        X = 1.0 / (1.0 + _libm.exp(-X))
    ranking = hasattr(cls, "rank_one")
    params = {**params, ("labels" if ranking else "classes"): 4}
    targets = [set(np.flatnonzero(row).tolist()) for row in Y] if ranking else Y.argmax(1)
    one = cls(**params)
    rows = []
    for x, y in zip(X, targets, strict=True):
        s = one.score_one(x) if ranking else one.predict_proba_one(x)
        rows.append(list(s.values()))
        one.learn_one(x, y)
    arrays = cls(**params)
    if ranking:
        many = arrays.score_then_learn(X, Y)
    else:
        many = arrays.predict_then_learn(X, targets)

    def digest(a: object) -> str:
        return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()

    return {"one": digest(rows), "arrays": digest(many)}


_CASES = _booster_cases() + _linear_cases()


@pytest.mark.parametrize(("key", "cls", "params"), _CASES, ids=[c[0] for c in _CASES])
def test_booster_scores_are_the_pinned_ones(key, cls, params):
    import os

    got = _fingerprint(cls, params)
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if os.environ.get("OLBOOST_RECORD_PINS") == "1":
        pins[key] = got
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
    assert key in pins, f"no pin recorded for {key}"
    assert got == pins[key]
