"""A Ctrl-C in the middle of a long array call leaves a model that learned a whole number of rows,
counts them, and goes on as an uninterrupted one (olboost._interrupt.held_interrupt).

A Ctrl-C during a compiled call is raised by Python when the call returns: the tests raise
SIGINT at that moment, after the real call, as a user's Ctrl-C lands."""

from __future__ import annotations

import pickle
import signal

import pytest

from olboost import AdaBoostOLM, AdaOLMR, LabelRanker, LinearCommittee, VFDTCommittee
from olboost.checks import synthetic_multilabel


@pytest.fixture(autouse=True)
def _python_sigint():
    # pytest-xdist's workers ignore SIGINT; a user's Python raises KeyboardInterrupt
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _ctrl_c_after_call(monkeypatch, owner, name, call):
    """Make the ``call``-th call of ``owner.name`` end as a Ctrl-C during it would."""
    real = getattr(owner, name)
    calls = [0]

    def interrupted(*args, **kwargs):
        out = real(*args, **kwargs)
        calls[0] += 1
        if calls[0] == call:
            signal.raise_signal(signal.SIGINT)
        return out

    monkeypatch.setattr(owner, name, interrupted)


def _stream(n=100):
    X, Y = synthetic_multilabel(n=n, k=4)
    return X, Y


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdaOLMR(VFDTCommittee(n_features=3), learners=4, seed=1, labels=4),
        lambda: AdaOLMR(LinearCommittee(), learners=4, seed=1, labels=4),
        lambda: AdaBoostOLM(VFDTCommittee(n_features=3), learners=4, seed=1, classes=4),
    ],
    ids=["AdaOLMR-trees", "AdaOLMR-linear", "AdaBoostOLM-trees"],
)
def test_a_booster_interrupted_in_the_driver_counts_the_rows_it_learned(monkeypatch, make):
    # the driver learned a block of rows, Python raised the Ctrl-C as it returned, and t_ (and
    # the label counts) missed the block: learning on from t_ learned it twice
    from olboost.boosters import _driver, base

    X, Y = _stream()
    y = Y.argmax(axis=1) if isinstance(make(), AdaBoostOLM) else Y
    monkeypatch.setattr(base, "_BLOCK_ROWS", 16)
    whole = make().learn(X, y)
    _ctrl_c_after_call(monkeypatch, _driver, "run", 2)
    model = make()
    with pytest.raises(KeyboardInterrupt):
        model.learn(X, y)
    assert model.t_ == 32
    monkeypatch.undo()  # the real driver, blocks of 4,096 rows
    assert pickle.dumps(model) == pickle.dumps(make().learn(X[:32], y[:32]))
    model.learn(X[32:], y[32:])
    assert pickle.dumps(model) == pickle.dumps(whole)


def test_a_label_ranker_interrupted_in_its_trials_counts_the_rows_it_learned(monkeypatch):
    from olboost.rankers import _kernels, label_ranker

    X, Y = _stream()
    whole = LabelRanker(update="II", seed=1, labels=4).learn(X, Y)
    monkeypatch.setattr(label_ranker, "_BLOCK_ROWS", 16)
    _ctrl_c_after_call(monkeypatch, _kernels, "learn_rows", 3)
    model = LabelRanker(update="II", seed=1, labels=4)
    with pytest.raises(KeyboardInterrupt):
        model.learn(X, Y)
    assert model.t_ == 48
    monkeypatch.undo()
    alike = LabelRanker(update="II", seed=1, labels=4).learn(X[:48], Y[:48])
    assert pickle.dumps(model) == pickle.dumps(alike)
    model.learn(X[48:], Y[48:])
    assert pickle.dumps(model) == pickle.dumps(whole)


def test_an_interrupted_partial_fit_counts_the_rows_its_booster_learned(monkeypatch):
    # the adapter put n_samples_seen_ back while its booster, changed in place, kept the rows
    pytest.importorskip("sklearn")
    from olboost.boosters import _driver, base
    from olboost.sklearn import OnlineBoostingRanker

    X, Y = _stream()
    monkeypatch.setattr(base, "_BLOCK_ROWS", 16)
    ranker = OnlineBoostingRanker(AdaOLMR(VFDTCommittee(n_features=3), learners=4, seed=1))
    ranker.partial_fit(X[:20], Y[:20])
    _ctrl_c_after_call(monkeypatch, _driver, "run", 3)
    with pytest.raises(KeyboardInterrupt):
        ranker.partial_fit(X[20:], Y[20:])
    assert ranker.booster_.t_ == 20 + 48
    assert ranker.n_samples_seen_ == 68
    assert ranker.label_cardinality_ == pytest.approx(Y[:68].sum() / 68, rel=1e-15)


def test_a_ctrl_c_outside_a_held_block_is_raised_at_once_and_an_ignored_one_stays_ignored():
    from olboost._interrupt import held_interrupt

    done = []
    with pytest.raises(KeyboardInterrupt):
        with held_interrupt():
            signal.raise_signal(signal.SIGINT)
            done.append("the block ran to its end")
    assert done == ["the block ran to its end"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with held_interrupt():
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    with pytest.raises(ValueError, match="inside"), held_interrupt():
        raise ValueError("an error inside goes on as it is")
    # a Ctrl-C that came with an error is delivered too (a caller that caught the error lost it)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt) as caught, held_interrupt():
        signal.raise_signal(signal.SIGINT)
        raise ValueError("the block's own error")
    assert isinstance(caught.value.__context__, ValueError)
