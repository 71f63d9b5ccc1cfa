"""Test doubles shared by the booster tests (``from helpers import ScriptedCommittee``), and
:func:`load_benchmark` for the tests of the benchmark scripts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from olboost.weak.base import Committee

#: Skips a test of an estimator built on River (RiverCommittee) where River is not installed
#: (``make mindeps``); ``make test`` installs it.
needs_river = pytest.mark.skipif(
    importlib.util.find_spec("river") is None,
    reason="River is optional: pip install olboost[river]",
)


def marks_for(cls: type) -> list:
    """The marks of a test of estimator class ``cls``: skipped where its optional dependency is
    not installed."""
    return [needs_river] if cls.__name__ == "RiverCommittee" else []


class RecordingCommittee(Committee):
    """Base of the test committees: fixed hyperparameters, records every learn call.

    ``learned_`` holds a copy of every ``(N, k)`` weight array the booster taught, in order, and
    ``n_predict_`` counts predict calls (subclasses' ``predict`` increments it).
    """

    def __init__(
        self,
        n_features=None,
        grace_period=(1.0, 1.0),
        split_confidence=(0.5, 0.5),
        tie_threshold=(0.5, 0.5),
        weight_multiplier=(1.0, 1.0),
    ):
        self.n_features = n_features
        self.grace_period = grace_period
        self.split_confidence = split_confidence
        self.tie_threshold = tie_threshold
        self.weight_multiplier = weight_multiplier

    def _allocate(self, seed):
        self.learned_ = []
        self.n_predict_ = 0

    def learn(self, x, weights):
        self.learned_.append(weights.copy())


class ScriptedCommittee(RecordingCommittee):
    """Predicts a fixed pseudo-random table per x and records the weights it is taught.

    Row ``i`` is a Dirichlet(1) draw from a generator seeded by ``x[0]``, whatever was learned.
    With ``lean`` set, each learner additionally leans, with probability ``lean``, towards ``x``'s
    class ``int(abs(x[1])) % k`` (that label gets +1, then the row is renormalised); ``lean=None``
    (the default) leaves the Dirichlet rows untouched.
    """

    def __init__(
        self,
        n_features=None,
        grace_period=(1.0, 1.0),
        split_confidence=(0.5, 0.5),
        tie_threshold=(0.5, 0.5),
        weight_multiplier=(1.0, 1.0),
        lean=None,
    ):
        super().__init__(
            n_features=n_features,
            grace_period=grace_period,
            split_confidence=split_confidence,
            tie_threshold=tie_threshold,
            weight_multiplier=weight_multiplier,
        )
        self.lean = lean

    def predict(self, x):
        self.n_predict_ += 1
        rng = np.random.default_rng(int(abs(x[0]) * 1e6))
        H = rng.dirichlet(np.ones(self.n_labels_), size=self.n_learners_)
        if self.lean is None:
            return H
        lean = rng.random(self.n_learners_) < self.lean
        H[lean, int(abs(x[1])) % self.n_labels_] += 1.0
        return H / H.sum(axis=1, keepdims=True)


class OracleCommittee(RecordingCommittee):
    """Two learners, one always right and one always wrong, reading the answer from ``x``.

    ``kind="ranking"``: ``x[:k]`` is the relevance mask; learner 0 scores 1 on the relevant
    labels and 0 elsewhere, learner 1 the reverse. ``kind="multiclass"``: ``x[0]`` is the class
    ``y``; learner 0 puts all its mass on ``y``, learner 1 on ``y + 1 (mod k)``.
    """

    def __init__(self, kind="ranking"):
        super().__init__()
        self.kind = kind

    def predict(self, x):
        self.n_predict_ += 1
        k = self.n_labels_
        if self.kind == "ranking":
            y = np.asarray(x[:k]) > 0.5
            return np.vstack([y, ~y]).astype(float)
        H = np.zeros((2, k))
        H[0, int(x[0])] = H[1, (int(x[0]) + 1) % k] = 1.0
        return H


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(monkeypatch, name: str) -> ModuleType:
    """``benchmarks/{name}.py`` as a module (its folder on ``sys.path`` for the test's duration,
    for its sibling ``_common``)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ceilings_table(observed, blocks, gauss, j, pre, n_split_points, fraction, work, present):
    """``_vfdt_split._chi_square_ceilings`` of numeric feature ``j`` of a leaf: the whole table
    and its width ``w`` (row ``j``: threshold ``t``'s linear bound at ``t``, the ceiling at
    ``w``, the caps from ``w + 1``, the floor at ``2 w + 1``)."""
    from olboost.weak import _vfdt_split as S

    width = S._scratch_columns(n_split_points)
    table = np.full((gauss.shape[1], 2 * width + 2), np.nan)
    S._chi_square_ceilings(
        j, j + 1, observed, blocks, gauss, np.zeros(gauss.shape[1], dtype=np.int64), pre,
        n_split_points, fraction, work, present, np.empty((5, width)), table,
    )  # fmt: skip
    return table, width


def best_numeric(
    observed, blocks, gauss, j, pre, n_split_points, fraction, work, present, floor=-np.inf,
    ceiling_only=False,
):  # fmt: skip
    """``_vfdt_split._best_numeric`` of feature ``j`` as a split attempt runs it, after the bounds
    of ``_chi_square_ceilings``; with ``ceiling_only``, ``(ceiling, 0.0)``: the ceiling that
    these bounds give the feature."""
    from olboost.weak import _vfdt_split as S

    leaf = (observed, blocks, gauss, j, pre, n_split_points, fraction, work, present)
    table, width = ceilings_table(*leaf)
    if ceiling_only:
        return table[j, width], 0.0
    return S._best_numeric(
        observed, blocks, gauss, j, pre, n_split_points, fraction, work, present, table, floor
    )
