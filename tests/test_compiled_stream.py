"""The compiled test-then-train loops give exactly the row-by-row results."""

from __future__ import annotations

import numpy as np
import pytest

from olboost import AdaBoostOLM, VFDTCommittee
from olboost.boosters import _stream_kernels
from olboost.datasets import load_uci


class RowByRow(AdaBoostOLM):
    """Adaboost.OLM with the compiled loop switched off (the reference path)."""

    def _compiled_stream(self, rows, targets, out, start):
        return start


def _state(model):
    c = model.committee_
    arrays = {
        name: value
        for name, value in vars(c).items()
        if name.endswith("_") and isinstance(value, np.ndarray)
    }
    arrays.update(alpha=model.alpha_, log_v=model.log_v_, num=model.edge_num_, den=model.edge_den_)
    return model.t_, arrays


def _assert_same(a, b):
    (ta, xa), (tb, xb) = _state(a), _state(b)
    assert ta == tb
    assert xa.keys() == xb.keys()
    for name in xa:
        np.testing.assert_array_equal(xa[name], xb[name], err_msg=name)


CASES = [
    ("balance", {}, {}),
    ("car", {"loss": "exponential", "vote": "expected_cost"}, {"capacity": 1}),
    ("car", {"loss": "square_hinge", "vote": "proba", "predict_with": "best"}, {}),
    ("balance", {}, {"leaf_prediction": "nba", "capacity": 1}),
]


@pytest.mark.parametrize(("name", "params", "committee"), CASES)
def test_compiled_loop_is_bit_identical_to_row_by_row(name, params, committee):
    data = load_uci(name).shuffled(2).head(400)
    make = {"nominal_attributes": data.nominal_cardinalities or None, **committee}
    fast = AdaBoostOLM(VFDTCommittee(**make), learners=12, seed=4, **params)
    slow = RowByRow(VFDTCommittee(**make), learners=12, seed=4, **params)
    # two calls: the second resumes a started model (and its t) in the compiled loop
    for part in (slice(0, 150), slice(150, 400)):
        a = fast.predict_then_learn(data.X[part], data.y[part])
        b = slow.predict_then_learn(data.X[part], data.y[part])
        np.testing.assert_array_equal(a, b)
    assert fast.learn(data.X[:50], data.y[:50]) is fast
    slow.learn(data.X[:50], data.y[:50])
    _assert_same(fast, slow)
    # one example at a time after the loop (the learn_one path) agrees as well
    x, y = data.X[60], data.y[60]
    assert fast.predict_proba_one(x) == slow.predict_proba_one(x)
    fast.learn_one(x, y)
    slow.learn_one(x, y)
    _assert_same(fast, slow)


def test_compiled_loop_is_used_and_stops_where_storage_must_grow(monkeypatch):
    data = load_uci("car").shuffled(1).head(300)
    calls = []
    kernel = _stream_kernels.olm_vfdt_stream

    def spy(*args):
        stopped = kernel(*args)
        calls.append((args[2], stopped))
        return stopped

    monkeypatch.setattr(_stream_kernels, "olm_vfdt_stream", spy)
    committee = VFDTCommittee(nominal_attributes=data.nominal_cardinalities, capacity=1)
    model = AdaBoostOLM(committee, learners=8, seed=1)
    model.learn(data.X, data.y)
    # the loop ran, stopped (at least once) where a tree needed more nodes, and resumed after it
    assert calls[0][0] == 0 and calls[-1][1] == 300 and len(calls) > 1
    assert all(stop + 1 == nxt for (_, stop), (nxt, _) in zip(calls, calls[1:], strict=False))
    assert model.t_ == 300


def test_bad_nominal_row_mid_stream_is_rejected_after_the_rows_before_it():
    data = load_uci("car").shuffled(1).head(120)
    X = data.X.copy()
    X[70, 0] = 99.0  # not a category code of attribute 0
    make = {"nominal_attributes": data.nominal_cardinalities}
    fast = AdaBoostOLM(VFDTCommittee(**make), learners=6, seed=2)
    slow = RowByRow(VFDTCommittee(**make), learners=6, seed=2)
    for model in (fast, slow):
        with pytest.raises(ValueError, match="nominal attributes must hold integer codes"):
            model.learn(X, data.y)
    assert fast.t_ == 70
    _assert_same(fast, slow)


def test_one_vs_all_designs_keep_the_row_by_row_path(monkeypatch):
    from olboost.boosters.baselines import AdaOVA

    def fail(*args):
        raise AssertionError("the one-vs-all designs have no compiled loop")

    monkeypatch.setattr(_stream_kernels, "olm_vfdt_stream", fail)
    data = load_uci("balance").head(40)
    AdaOVA(VFDTCommittee(), learners=3, seed=1).learn(data.X, data.y)
