"""Every public estimator passes the shared check suite (auto-discovered, as River's checks)."""

from __future__ import annotations

import pytest

from olboost.checks import all_estimators, yield_checks


def _cases():
    for cls in all_estimators():
        for i, params in enumerate(cls._unit_test_params()):
            model = cls(**params)
            for check in yield_checks(model):
                yield pytest.param(model, check, id=f"{cls.__name__}[{i}]-{check.__name__}")


@pytest.mark.parametrize(("model", "check"), list(_cases()))
def test_check(model, check):
    check(model.clone())


def test_discovery_finds_the_public_estimators():
    names = {cls.__name__ for cls in all_estimators()}
    assert {"AdaOLMR", "VFDTCommittee"} <= names
