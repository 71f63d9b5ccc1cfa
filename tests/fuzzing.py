"""Hypothesis settings shared by the fuzz tests (``from fuzzing import EXAMPLES, FUZZ``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: Generated cases per estimator or loader; ``OLBOOST_FUZZ_EXAMPLES`` overrides it.
EXAMPLES = int(os.environ.get("OLBOOST_FUZZ_EXAMPLES", "2000"))

#: Derandomized with no example database, so CI is deterministic; no deadline (the first
#: examples compile kernels).
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    # the models and files are built once per test, outside hypothesis
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
