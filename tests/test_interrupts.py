"""A Ctrl-C in the middle of a long array call leaves a model that learned a whole number of rows,
counts them, and goes on as an uninterrupted one (olboost._interrupt.held_interrupt).

A Ctrl-C during a compiled call is raised by Python when the call returns: the tests raise
SIGINT at that moment, after the real call, as a user's Ctrl-C lands."""

from __future__ import annotations

import functools
import pickle
import signal

import numpy as np
import pytest

from olboost import (
    AdaBoostOLM,
    AdaOLMR,
    LabelRanker,
    LinearCommittee,
    RiverCommittee,
    VFDTCommittee,
)
from olboost.boosters.baselines import OzaBoost
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

    @functools.wraps(real)  # its signature: RiverCommittee reads whether learn_one takes w
    def interrupted(*args, **kwargs):
        out = real(*args, **kwargs)
        calls[0] += 1
        if calls[0] == call:
            signal.raise_signal(signal.SIGINT)
        return out

    monkeypatch.setattr(owner, name, interrupted)


def _state(model):
    """What a model learned, comparable across runs: its pickle, or for a River committee (whose
    learners pickle differently from run to run) the booster's own state and the scores and
    every learner's prediction on a fixed set of points."""
    if not isinstance(model.committee_, RiverCommittee):
        return pickle.dumps(model)
    own = {k: v for k, v in vars(model).items() if k not in ("committee_", "_cache")}
    probes = _stream(20)[0] + 0.37
    weak = [model.committee_.predict(x).tobytes() for x in probes]
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        probes = pytest.importorskip("pandas").DataFrame(probes, columns=names)
    scores = model.score if hasattr(model, "score") else model.votes
    return pickle.dumps(own), scores(probes).tobytes(), weak


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


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdaOLMR(RiverCommittee(n_features=3), learners=3, seed=1, labels=4),
        lambda: OzaBoost(VFDTCommittee(n_features=3), learners=3, seed=1, classes=4),
    ],
    ids=["AdaOLMR-River", "OzaBoost-judge-after"],
)
def test_a_row_by_row_array_call_is_interrupted_between_rows(monkeypatch, make):
    # boosters with no compiled path learn an array a row at a time in Python: a Ctrl-C inside a
    # row's committee call put the booster back (restored_on_failure) while the committee kept
    # the row, and learning on from t_ learned it twice
    pytest.importorskip("river")
    X, Y = _stream(40)
    y = Y.argmax(axis=1) if isinstance(make(), OzaBoost) else Y
    whole = make().learn(X, y)
    model = make()
    if isinstance(model.committee, RiverCommittee):
        # inside the committee's call: a learner learned the row, the ones after it had not
        from river.tree import HoeffdingTreeClassifier

        _ctrl_c_after_call(monkeypatch, HoeffdingTreeClassifier, "learn_one", 20)
    else:
        _ctrl_c_after_call(monkeypatch, type(model.committee), "learn", 7)
    with pytest.raises(KeyboardInterrupt):
        model.learn(X, y)
    monkeypatch.undo()
    t = model.t_
    assert 0 < t < len(X)
    assert _state(model) == _state(make().learn(X[:t], y[:t]))
    model.learn(X[t:], y[t:])
    assert _state(model) == _state(whole)


@pytest.mark.parametrize("kind", ["ranking", "multiclass"])
def test_an_evaluation_over_an_iterable_is_interrupted_between_examples(monkeypatch, kind):
    # prequential over River-style (dict, target) pairs learns with learn_one: the Ctrl-C waits
    # for the example's end, and one that comes while the next example is read is raised there
    from olboost.evaluate import prequential

    pytest.importorskip("river")
    X, Y = _stream(30)
    ranking = kind == "ranking"
    pairs = [
        (
            {f"x{j}": float(v) for j, v in enumerate(x)},
            set(np.flatnonzero(y)) if ranking else int(np.argmax(y)),
        )
        for x, y in zip(X, Y, strict=True)
    ]

    def make():
        if ranking:
            return AdaOLMR(RiverCommittee(n_features=3), learners=3, seed=1, labels=4)
        return AdaBoostOLM(RiverCommittee(n_features=3), learners=3, seed=1, classes=4)

    from river.tree import HoeffdingTreeClassifier

    model = make()
    _ctrl_c_after_call(monkeypatch, HoeffdingTreeClassifier, "learn_one", 20)
    with pytest.raises(KeyboardInterrupt):
        prequential(model, pairs)
    monkeypatch.undo()
    alike = make()
    for x, y in pairs[: model.t_]:
        alike.learn_one(x, y)
    assert model.t_ > 0 and _state(model) == _state(alike)

    read = []

    def stream():
        for i, pair in enumerate(pairs):
            if i == 3:
                signal.raise_signal(signal.SIGINT)
            read.append(i)
            yield pair

    model = make()
    with pytest.raises(KeyboardInterrupt):
        prequential(model, stream())
    assert read == [0, 1, 2] and model.t_ == 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_between_rows_delivers_as_the_handler_it_replaced_would():
    from olboost._interrupt import between_rows

    done = []
    with pytest.raises(KeyboardInterrupt), between_rows() as row:
        for i in range(3):
            with row:
                if i == 1:
                    signal.raise_signal(signal.SIGINT)
                done.append(i)
    assert done == [0, 1]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # an ignored Ctrl-C stays ignored, a handler of the caller's is called once per Ctrl-C and
    # the loop goes on when it returns
    seen: list = []
    for handler, calls in [(signal.SIG_IGN, 0), (lambda signum, frame: seen.append(signum), 2)]:
        seen.clear()
        signal.signal(signal.SIGINT, handler)
        done = []
        with between_rows() as row:
            for i in range(4):
                with row:
                    if i in (1, 2):
                        signal.raise_signal(signal.SIGINT)
                    done.append(i)
        assert done == [0, 1, 2, 3] and len(seen) == calls
        assert signal.getsignal(signal.SIGINT) is handler
    # a Ctrl-C that came with an error inside a row is delivered, the error its context
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt) as caught, between_rows() as row, row:
        signal.raise_signal(signal.SIGINT)
        raise ValueError("the row's own error")
    assert isinstance(caught.value.__context__, ValueError)


@pytest.mark.parametrize("hold", ["held_interrupt", "between_rows"])
def test_a_held_ctrl_c_goes_to_the_callers_own_handler_once(hold):
    # "as the handler in place before would have": a handler of the caller's (e.g. one that asks
    # a loop to stop at its next check) is called, once, and the code goes on when it returns
    from olboost import _interrupt

    seen = []
    signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    done = []
    if hold == "held_interrupt":
        with _interrupt.held_interrupt():
            signal.raise_signal(signal.SIGINT)
            done.append("the block ran to its end")
    else:
        with _interrupt.between_rows() as row, row:
            signal.raise_signal(signal.SIGINT)
            done.append("the block ran to its end")
    assert done == ["the block ran to its end"] and seen == [signal.SIGINT]


@pytest.mark.parametrize(
    "block",
    [
        "with held_interrupt():\n    signal.raise_signal(signal.SIGINT)\n    print('inside')",
        "with between_rows() as row, row:\n    signal.raise_signal(signal.SIGINT)\n"
        "    print('inside')",
        "with between_rows() as row:\n    signal.raise_signal(signal.SIGINT)",
    ],
    ids=["held", "inside-a-row", "between-rows"],
)
def test_a_held_ctrl_c_under_the_default_action_ends_the_process(block):
    # SIGINT at SIG_DFL (a process started so): the default action ends it, after the block
    import subprocess
    import sys
    import textwrap

    code = (
        textwrap.dedent(
            """
        import signal
        from olboost._interrupt import between_rows, held_interrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        """
        )
        + block
        + "\nprint('still running', flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGINT, done.stderr
    assert "still running" not in done.stdout
    assert done.stdout.count("inside") == block.count("inside")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_a_blocked_ctrl_c_waits_for_the_block_and_threads_started_inside_keep_it_blocked():
    # the threads a sweep's local cluster starts, and the worker processes they spawn, must
    # not see a Ctrl-C (each printed a traceback while importing olboost)
    import threading

    from olboost import _interrupt

    seen = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    inside: dict[str, object] = {}
    try:
        with _interrupt.blocked_interrupt():
            signal.raise_signal(signal.SIGINT)  # pending: SIGINT is blocked
            inside["seen"] = list(seen)

            def report():
                inside["thread"] = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])

            thread = threading.Thread(target=report)
            thread.start()
            thread.join()
        for _ in range(1000):  # Python runs the handler at its next check
            if seen:
                break
    finally:
        signal.signal(signal.SIGINT, previous)
    assert inside == {"seen": [], "thread": True}
    assert seen == [signal.SIGINT]
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_the_row_by_row_loops_run_as_they_are_off_the_main_thread():
    # signal handlers are the main thread's: elsewhere the loops hold nothing, and run
    import threading

    from olboost.evaluate import prequential

    X, Y = _stream(40)
    y = Y.argmax(axis=1)
    pairs = [
        ({f"x{j}": float(v) for j, v in enumerate(x)}, int(c)) for x, c in zip(X, y, strict=True)
    ]
    done = {}

    def work():
        try:
            oza = OzaBoost(VFDTCommittee(n_features=3), learners=3, seed=1, classes=4).learn(X, y)
            done["learn"] = oza.t_
            model = AdaBoostOLM(VFDTCommittee(n_features=3), learners=3, seed=1, classes=4)
            done["prequential"] = len(prequential(model, pairs).correct)
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            done["error"] = repr(err)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(120)
    assert done == {"learn": 40, "prequential": 40}


def _ctrl_c_in_compile(monkeypatch, dispatcher):
    """Make Numba's compile of ``dispatcher`` get a Ctrl-C as it starts; returns the list that
    records whether the compile went on regardless (it did, with the Ctrl-C held)."""
    went_on: list[bool] = []
    real = dispatcher.compile

    def compile_interrupted(sig):
        signal.raise_signal(signal.SIGINT)
        went_on.append(True)
        return real(sig)

    monkeypatch.setattr(dispatcher, "compile", compile_interrupted)
    return went_on


@pytest.mark.parametrize("trees", [True, False], ids=["trees", "linear"])
def test_a_ctrl_c_while_the_driver_compiles_stops_it_at_once(monkeypatch, trees):
    # the driver compiled inside the block that holds a Ctrl-C: a user's Ctrl-C during a first
    # run's minute of compiling waited for the compiler to finish (about 20 s, measured), and a
    # second one too. Compiling changes no model: it may stop there.
    from olboost.boosters import _driver

    X, Y = _stream()
    committee = VFDTCommittee(n_features=3) if trees else LinearCommittee()
    whole = AdaOLMR(committee, learners=4, seed=1, labels=4).learn(X, Y)
    monkeypatch.setattr(_driver, "_by_layout", {})
    monkeypatch.setattr(_driver, "_compiled", {})
    went_on = _ctrl_c_in_compile(monkeypatch, _driver.drive)
    model = AdaOLMR(committee.clone(), learners=4, seed=1, labels=4)
    fresh = pickle.dumps(model)
    with pytest.raises(KeyboardInterrupt):
        model.learn(X, Y)
    assert went_on == []
    assert pickle.dumps(model) == fresh  # stopped before its first row: not even started
    monkeypatch.undo()
    model.learn(X, Y)
    assert pickle.dumps(model) == pickle.dumps(whole)


def test_a_ctrl_c_while_a_label_ranker_compiles_stops_it_at_once(monkeypatch):
    from olboost import _numba_cache
    from olboost.rankers import _kernels

    X, Y = _stream()
    whole = LabelRanker(update="II", seed=1, labels=4).learn(X, Y)
    monkeypatch.setattr(_numba_cache, "_READY", set())  # as in a process that compiled nothing
    went_on = _ctrl_c_in_compile(monkeypatch, _kernels.learn_rows)
    model = LabelRanker(update="II", seed=1, labels=4)
    fresh = pickle.dumps(model)
    with pytest.raises(KeyboardInterrupt):
        model.learn(X, Y)
    assert went_on == []
    assert pickle.dumps(model) == fresh
    monkeypatch.undo()
    model.learn(X, Y)
    assert pickle.dumps(model) == pickle.dumps(whole)
