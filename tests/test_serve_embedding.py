"""The service embedded in an application: :class:`olboost.serve.service.Service` used from
Python, not through ``olboost serve`` (an embedding probe, session 35). Bad parameters are refused
before anything exists, a body built with NumPy values is taken as JSON's, and no call leaves a
future that never resolves, a thread running or the store locked."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

pytest.importorskip("starlette", reason="olboost serve needs the serve extra")
pytest.importorskip("uvicorn", reason="olboost serve needs the serve extra")

from olboost.serve.requests import RequestError  # noqa: E402
from olboost.serve.service import Service, ServiceConfig  # noqa: E402
from olboost.serve.store import backup, replay  # noqa: E402

CONFIG = ServiceConfig("topk-adaptive", ("a", "b", "c", "d"), 2, learners=3, k=2, seed=5)


def olboost_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("olboost-")]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"synchronous": "bogus"}, ValueError, "synchronous must be one of"),
        ({"fork_checkpoints": "no"}, TypeError, "fork_checkpoints must be"),
        ({"clock": 42}, TypeError, "clock must be a callable"),
        ({"impression_ttl": True}, ValueError, "impression_ttl must be"),
        ({"config": {"labels": ["a"]}}, TypeError, "config must be a ServiceConfig"),
    ],
)
def test_bad_parameters_are_refused_before_anything_exists(tmp_path, options, error, message):
    # each was taken: "bogus" stopped the log writer's thread at start and close() then hung
    # with the store locked, "no" is true (the service forked), 42 failed at start, True was a
    # TTL of 1 s, and a dict failed with an AttributeError after the log was made
    options = {"config": CONFIG, **options}
    with pytest.raises(error, match=message):
        Service(tmp_path / "s", **options)
    assert not (tmp_path / "s").exists()


def test_a_log_writer_that_cannot_open_the_log_ends_the_start_cleanly(tmp_path, monkeypatch):
    # the learner waited for ever for a log writer that had ended: close() hung, the store
    # stayed locked for the rest of the process, and `started` said True
    import olboost.serve._log_writer as log_writer

    class Unopenable:
        def __init__(self, *args, **kwargs):
            raise OSError("no log here")

    monkeypatch.setattr(log_writer, "Store", Unopenable)
    service = Service(tmp_path / "s", CONFIG)
    with pytest.raises(OSError, match="no log here"):
        service.start()
    assert not service.started and olboost_threads() == []
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="closed: serve the store with a new Service"):
        service.start()
    with Service(tmp_path / "s") as again:  # not locked
        assert again.started


def test_an_interrupted_start_or_close_leaves_the_store_free(tmp_path, monkeypatch):
    import olboost.serve.service as service_module

    def interrupted(*args):
        raise KeyboardInterrupt

    # during the warm-up (the first run's compiling): the store stayed locked
    with monkeypatch.context() as patch:
        patch.setattr(service_module, "warm_up_model", interrupted)
        with pytest.raises(KeyboardInterrupt):
            Service(tmp_path / "s", CONFIG).start()
    # during close()'s wait: a second close() returned at once, threads running, store locked
    service = Service(tmp_path / "s")
    service.start()
    service.rank({"features": [0.5, 0.5]})[1].result()
    service._threads[0].join = interrupted
    with pytest.raises(KeyboardInterrupt):
        service.close()
    del service._threads[0].join
    service.close()
    assert olboost_threads() == []
    with Service(tmp_path / "s") as again:
        assert again.health()["impressions"] == 1


def test_a_body_built_with_numpy_values_is_taken_as_json(tmp_path):
    # np.float64 features failed an internal assertion, other NumPy numbers a TypeError of the
    # error message's json.dumps
    with Service(tmp_path / "s", CONFIG) as service:
        plain, _ = service.rank({"features": [0.25, 3.0], "key": 7, "ranking": True})
        numpy, _ = service.rank({
            "features": [np.float64(0.25), np.float32(3.0)], "key": np.uint64(7),
            "ranking": np.True_,
        })  # fmt: skip
        assert numpy["ranking"] == plain["ranking"] and numpy["labels"] == plain["labels"]
        assert service.rank({"features": np.array([1, 2]).tolist()})[0]["labels"]
        for body, message in [
            ({"features": [np.int64(1), np.complex128(1j)]}, "value 1 must be a real number"),
            ({"features": [np.float64("nan"), 1.0]}, "value 0 is not finite"),
        ]:
            with pytest.raises(RequestError, match=message):
                service.rank(body)
        # a row as NumPy holds it, or a tuple: "features must be a list ..., got ndarray"
        for row in [np.array([0.25, 3.0]), np.array([0.25, 3.0], dtype=np.float32), (0.25, 3)]:
            same, _ = service.rank({"features": row, "key": 7, "ranking": True})
            assert same["ranking"] == plain["ranking"] and same["labels"] == plain["labels"]
        for body, message in [
            ({"features": np.zeros((1, 2))}, r"an array must be one row, got shape \(1, 2\)"),
            ({"features": np.array([1.0, np.nan])}, "value 1 is not finite"),
            ({"features": np.array([1.0, 2.0, 3.0])}, "expected 2 values, got 3"),
        ]:
            with pytest.raises(RequestError, match=message):
                service.rank(body)
        clicked = {"impression": plain["impression"], "clicked": [np.int64(0)]}
        shown = re.escape(repr(np.int64(0)))  # np.int64(0), or 0 before NumPy 2
        with pytest.raises(RequestError, match=rf"a label is a JSON string, got {shown} \(int64\)"):
            service.feedback(clicked)


def test_no_wait_outlives_the_service(tmp_path):
    # a wait for a feedback never committed, a checkpoint asked for as the service closed, and
    # requests that passed the open check as close() queued its stop: their futures waited for
    # ever, and wait_learned() with them
    service = Service(tmp_path / "s", CONFIG)
    service.start()
    never = service.learned_future(99)
    service.close()
    with pytest.raises(RequestError, match="closed before learning the feedback of seq 99"):
        never.result(timeout=5)
    with pytest.raises(RequestError, match="closed before learning"):
        service.learned_future(100).result(timeout=5)
    assert service.wait_learned(100) is False  # at once
    futures = []
    for _ in range(15):
        service = Service(tmp_path / "s")
        service.start()
        go = threading.Barrier(5)

        def client(service=service, go=go):
            go.wait()
            for i in range(20):
                try:
                    futures.append(service.rank({"features": [i / 20, 0.5]})[1])
                    futures.append(service.checkpoint_now())
                except RequestError:  # refused at once: closed
                    return

        threads = [threading.Thread(target=client) for _ in range(4)]
        for thread in threads:
            thread.start()
        go.wait()
        service.close()
        for thread in threads:
            thread.join()
    for future in futures:
        try:
            future.result(timeout=5)  # answered, or refused: never left waiting
        except RequestError as err:
            assert err.status == 503


def test_calls_at_the_wrong_time_say_so(tmp_path):
    service = Service(tmp_path / "s", CONFIG)
    assert service.pending == 0  # an AttributeError before start
    with pytest.raises(RuntimeError, match="not started"):  # an AttributeError of None
        service.model_digest()
    with service:
        assert service.health()["status"] == "ok"
        # a second Service of this process on the store is told where the first one is
        with pytest.raises(ValueError, match="another Service of this process, not closed"):
            Service(tmp_path / "s").start()
    assert service.health()["status"] == "closed"  # it said "ok" of a closed service


def test_replay_and_backup_refuse_a_store_never_started(tmp_path):
    # Service() alone makes the log: replay failed with a bare FileNotFoundError for
    # initial.olb, and backup copied it as a store
    Service(tmp_path / "s", CONFIG)
    for read in (lambda: replay(tmp_path / "s"), lambda: backup(tmp_path / "s", tmp_path / "b")):
        with pytest.raises(ValueError, match="no store here yet"):
            read()
    assert not (tmp_path / "b").exists()


def test_a_feedback_that_asks_to_wait_is_answered_once_learned(tmp_path):
    # Service.feedback's future resolved once the feedback was committed, wait or not (only the
    # HTTP handler waited): an application embedding the service ranked, 179 times in 200, on a
    # model that had not learned the feedback it had waited for. The model lock held here keeps
    # the learner from learning, so the answer must not come until it is released.
    with Service(tmp_path / "s", CONFIG) as service:
        shown, logged = service.rank({"features": [0.25, 3.0], "key": 1})
        logged.result(timeout=30)
        with service.lock:
            answer = service.feedback(
                {"impression": shown["impression"], "clicked": [], "wait": True}
            )
            with pytest.raises(TimeoutError):
                answer.result(timeout=1.0)
            assert service.applied_seq == 0
        result = answer.result(timeout=30)
        assert result["seq"] == 1 and service.applied_seq >= 1
        assert "wait" not in result  # the HTTP answer's keys, no internal flag
        for i in range(30):
            shown, _ = service.rank({"features": [i / 30, 1.0], "key": i + 2})
            body = {"impression": shown["impression"], "clicked": shown["labels"][:1]}
            result = service.feedback({**body, "wait": True}).result(timeout=30)
            assert service.applied_seq >= result["seq"]


def test_a_feedback_sent_again_with_wait_after_it_was_learned_is_answered(tmp_path):
    # a client that retries a feedback (its id) with "wait" once the first was learned gets its
    # duplicate answer at once: a feedback of the seq just learned is learned (a waiter left
    # for a later one hung the retry until another feedback came: a mutation campaign,
    # session 51)
    with Service(tmp_path / "s", CONFIG) as service:
        shown, logged = service.rank({"features": [0.25, 3.0], "key": 1})
        logged.result(timeout=30)
        body = {"impression": shown["impression"], "clicked": [], "feedback_id": "f1", "wait": True}
        first = service.feedback(body).result(timeout=30)
        assert first["seq"] == 1 and service.applied_seq == 1
        again = service.feedback(body).result(timeout=10)
        assert again["seq"] == 1 and again["duplicate"] is True
        assert service.learned_future(1).result(timeout=10) == 1


def test_a_feedback_that_does_not_wait_is_held_to_the_learners_pace(tmp_path):
    # backpressure, as over HTTP: with the learner stopped, a feedback more than max_learn_lag
    # ahead of it is answered only once it catches up
    with Service(tmp_path / "s", CONFIG, max_learn_lag=2) as service:
        shown = [service.rank({"features": [i / 4, 1.0], "key": i})[0] for i in range(4)]
        with service.lock:
            answers = [
                service.feedback({"impression": s["impression"], "clicked": []}) for s in shown
            ]
            for answer in answers[:2]:  # within the lag of a learner at seq 0
                assert answer.result(timeout=30)["seq"] in (1, 2)
            for answer in answers[2:]:  # past it, from the first one (seq 3) on
                with pytest.raises(TimeoutError):
                    answer.result(timeout=0.5)
        assert answers[3].result(timeout=30)["seq"] == 4 and service.applied_seq >= 2


def test_the_model_digest_is_of_every_committed_feedback_learned(tmp_path, monkeypatch):
    # GET /admin/model (Service.model_digest) waits for the learner to learn what was
    # committed: a digest of a model behind its log passed every test (a mutation campaign,
    # session 51); a learner made slow here shows it
    import hashlib
    import time

    from olboost.checkpoint import dumps
    from olboost.serve import _learner

    with Service(tmp_path / "s", CONFIG) as service:
        feedback_of = _learner.feedback_of

        def slow(*args, **kwargs):  # outside the model lock: rankings and the digest go on
            time.sleep(0.2)
            return feedback_of(*args, **kwargs)

        monkeypatch.setattr(_learner, "feedback_of", slow)
        service._fused = None  # the learner learns with model.learn_one, through feedback_of
        for i in range(5):
            shown, logged = service.rank({"features": [i / 5, 1.0], "key": i})
            logged.result(timeout=30)
            service.feedback({"impression": shown["impression"], "clicked": []}).result(timeout=30)
        state = service.model_digest()
        assert (state["seq"], state["rounds"]) == (5, 5), state
        assert service.applied_seq == service.committed_seq == 5
        with service.lock:
            assert state["sha256"] == hashlib.sha256(dumps(service.model)).hexdigest()


def test_a_backup_to_a_file_names_the_backup_not_a_store(tmp_path):
    # "r.json: a file, not a store": the file is where the backup was to go
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(NotADirectoryError, match="a file, not a backup's directory") as err:
        backup(tmp_path / "s", tmp_path / "r.json")
    assert err.value.filename == str(tmp_path / "r.json")
    assert (tmp_path / "r.json").read_text() == "{}"
