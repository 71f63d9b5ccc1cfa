"""The crash test of issue 15: ``olboost serve`` killed with SIGKILL at 20 random moments under
load, restarted each time, loses no acknowledged feedback, applies none twice, and ends with the
model of the acknowledged log's replay, bit for bit.

Four client threads send rank + feedback pairs (each feedback with an id of its own) while a
seeded generator picks when to kill: 20 to 600 ms into the load, so that the kills land while
requests are in flight, while the learner learns and, with a checkpoint every 20 feedbacks, while
checkpoints are written. A feedback whose answer was lost in the kill is sent again, with its id,
after the restart (it was either logged, and the answer is the same ``seq``, or not, and it is
logged now), as a client that retries would; some acknowledged ones are re-sent too and must
come back as duplicates with their ``seq``. At the end the log holds exactly the acknowledged
feedback ids, each with the ``seq`` it was acknowledged with; the served model (digest after it
learned everything committed) equals the initial model learning the whole log in ``seq`` order.

The second test kills a service that prunes its log (``--prune-log``) 8 times the same way, and
checks the model against the replay of the whole log, pruned rows put back.

Time: 21 starts of a forked server (recovery, Numba's cached kernels) and about 6 s of load; about
20-30 s of wall time, a third of it CPU, on a 2-core machine.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="olboost serve needs the serve extra")
pytest.importorskip("uvicorn", reason="olboost serve needs the serve extra")

from olboost.checkpoint import dumps  # noqa: E402
from olboost.serve.store import replay  # noqa: E402
from serve_support import Server, features  # noqa: E402

KILLS = 20
CLIENTS = 4
ARGS = ("--labels", "a,b,c,d,e,f", "--n-features", "4", "--learners", "3", "--k", "3")


class Load:
    """Client threads sending rank + feedback pairs until the server dies or :meth:`stop`."""

    def __init__(self, server: Server, round_: int):
        self.server = server
        self.round = round_
        self.lock = threading.Lock()
        self.acked: dict[str, int] = {}
        self.unsure: dict[str, tuple[str, list[str]]] = {}
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._client, args=(c,)) for c in range(CLIENTS)]

    def _post(self, conn: http.client.HTTPConnection, path: str, body: dict) -> dict:
        conn.request("POST", path, json.dumps(body), {
            "Content-Type": "application/json", "Authorization": f"Bearer {self.server.token}",
        })  # fmt: skip
        response = conn.getresponse()
        answer = json.loads(response.read())
        assert response.status == 200, answer
        return answer

    def _client(self, c: int) -> None:
        host, port = self.server.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        i = 0
        while not self.stopping.is_set():
            i += 1
            try:
                shown = self._post(conn, "/rank", {"features": features(4, 1000 * c + i)})
            except (OSError, http.client.HTTPException):
                return  # the server is gone; an unanswered ranking is never answered
            fid = f"r{self.round}-c{c}-{i}"
            clicked = shown["labels"][: i % 3]
            body = {"impression": shown["impression"], "clicked": clicked, "feedback_id": fid}
            try:
                answer = self._post(conn, "/feedback", body)
            except (OSError, http.client.HTTPException):
                with self.lock:
                    self.unsure[fid] = (shown["impression"], clicked)
                return
            with self.lock:
                self.acked[fid] = answer["seq"]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def join(self) -> None:
        self.stopping.set()
        for t in self.threads:
            t.join(60)


def load_then_kill(server: Server, round_: int, rng: random.Random) -> Load:
    """Put the server under load, kill it at a random moment, and return the load, done."""
    load = Load(server, round_)
    load.start()
    time.sleep(rng.uniform(0.02, 0.6))
    server.kill()
    load.join()
    return load


def test_twenty_kills_lose_nothing_and_replay_bit_for_bit(tmp_path: Path) -> None:
    rng = random.Random(15)
    store = tmp_path / "store"
    server = Server(store, *ARGS, "--checkpoint-every", "20")
    acked: dict[str, int] = {}
    unsure: dict[str, tuple[str, list[str]]] = {}
    t0 = time.monotonic()
    try:
        for round_ in range(KILLS + 1):
            server.start()
            # answers lost in the last kill: the same feedback id again
            for fid, (impression, clicked) in sorted(unsure.items()):
                status, answer = server.feedback(impression, clicked, feedback_id=fid)
                assert status == 200, answer
                acked[fid] = answer["seq"]
            unsure.clear()
            for fid in rng.sample(sorted(acked), min(3, len(acked))):
                status, answer = server.request("POST", "/feedback", {
                    "impression": "unused", "clicked": [], "feedback_id": fid,
                })  # fmt: skip
                # an id answered before: the duplicate check comes first, whatever the body
                assert status in (200, 409), answer
            if round_ == KILLS:
                break
            load = load_then_kill(server, round_, rng)
            assert set(load.acked).isdisjoint(acked)
            acked.update(load.acked)
            unsure.update(load.unsure)
        state = server.request("GET", "/admin/model")[1]
        n_acked = len(acked)
    finally:
        server.stop()
    assert time.monotonic() - t0 < 300, "the crash test is bounded in time"
    assert n_acked > 10 * KILLS, "too little load to mean anything"
    db = sqlite3.connect(f"file:{store / 'log.sqlite'}?mode=ro", uri=True)
    logged = dict(db.execute("SELECT feedback_id, seq FROM feedback").fetchall())
    db.close()
    # nothing acknowledged is lost, nothing is logged twice, nothing unacknowledged remains
    assert logged == acked
    model, n = replay(store)
    assert n == len(acked) == state["rounds"] == model.t_
    assert hashlib.sha256(dumps(model)).hexdigest() == state["sha256"]


#: What the pruning kill test's store keeps of every deleted row (a trigger's copy, made in the
#: deleting transaction): the whole log, rebuilt at the end for the replay.
_ARCHIVE = """
CREATE TABLE archived_impressions AS SELECT * FROM impressions WHERE 0;
CREATE TABLE archived_feedback AS SELECT * FROM feedback WHERE 0;
CREATE TRIGGER archive_impression BEFORE DELETE ON impressions BEGIN
    INSERT INTO archived_impressions SELECT * FROM impressions WHERE id = OLD.id; END;
CREATE TRIGGER archive_feedback BEFORE DELETE ON feedback BEGIN
    INSERT INTO archived_feedback SELECT * FROM feedback WHERE seq = OLD.seq; END;
"""


def test_kills_of_a_service_pruning_its_log_lose_nothing(tmp_path: Path) -> None:
    """``--prune-log`` under the kills above (8 of them): the log keeps every acknowledged
    feedback it has not pruned, pruned ones were learned by the checkpoint, and the served
    model equals the replay of the whole log, pruned rows put back (a trigger of the test's
    archived them as they were deleted)."""
    from olboost.serve.store import Store

    kills = 8
    rng = random.Random(16)
    store = tmp_path / "store"
    Store(store).close()  # the log's tables, for the archive's triggers
    db = sqlite3.connect(store / "log.sqlite")
    db.executescript(_ARCHIVE)
    db.close()
    # impressions expire within the test (a restart takes longer): pruned at the checkpoints
    options = ("--checkpoint-every", "20", "--prune-log", "--impression-ttl", "0.5")
    server = Server(store, *ARGS, *options)
    acked: dict[str, int] = {}
    unsure: dict[str, tuple[str, list[str]]] = {}
    lost: set[str] = set()  # answers lost, and the impression gone when sent again
    try:
        for round_ in range(kills + 1):
            server.start()
            for fid, (impression, clicked) in sorted(unsure.items()):
                status, answer = server.feedback(impression, clicked, feedback_id=fid)
                if status == 410:  # expired (or pruned) before the restart: logged or not
                    lost.add(fid)
                    continue
                assert status == 200, answer
                acked[fid] = answer["seq"]
            unsure.clear()
            if round_ == kills:
                break
            load = load_then_kill(server, round_, rng)
            acked.update(load.acked)
            unsure.update(load.unsure)
        state = server.request("GET", "/admin/model")[1]
        health = server.request("GET", "/health")[1]
    finally:
        server.stop()
    assert len(acked) > 5 * kills, "too little load to mean anything"
    db = sqlite3.connect(store / "log.sqlite")
    try:
        done = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'pruned%'"))
        assert int(done["pruned_feedback"]) > 0, "nothing was pruned"
        kept = dict(db.execute("SELECT feedback_id, seq FROM feedback").fetchall())
        archived = dict(db.execute("SELECT feedback_id, seq FROM archived_feedback").fetchall())
        assert kept.keys().isdisjoint(archived)
        logged = {**kept, **archived}
        assert {f: s for f, s in logged.items() if f not in lost} == acked
        assert health["feedback"] == len(logged) == state["rounds"]
        # the whole log again, as an olboost that never pruned would have it
        db.executescript(
            "INSERT INTO impressions SELECT * FROM archived_impressions;"
            "INSERT INTO feedback SELECT * FROM archived_feedback;"
            "DELETE FROM meta WHERE key LIKE 'pruned%';"
            "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
        )
    finally:
        db.close()
    model, n = replay(store)
    assert n == len(logged) == model.t_
    assert hashlib.sha256(dumps(model)).hexdigest() == state["sha256"]
