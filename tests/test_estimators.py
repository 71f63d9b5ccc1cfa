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


def test_the_checks_leave_the_model_they_are_given_as_it_was():
    # run River-style on one object, check_bad_params left seed=-1 on it (labels given), and
    # every later check failed for that; the others trained it
    import pickle

    from olboost import AdaOLMR, VFDTCommittee

    model = AdaOLMR(VFDTCommittee(n_features=3), learners=3, seed=3, labels=4)
    before = pickle.dumps(model)
    for check in yield_checks(model):
        check(model)
        assert pickle.dumps(model) == before, check.__name__
    assert [c.__name__ for c in yield_checks(model)][:3] == [
        "check_clone_params", "check_repr", "check_bad_params",
    ]  # fmt: skip
