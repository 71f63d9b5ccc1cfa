"""``olboost sweep``: specs, and sweeps on real local Dask clusters (no mocks): records equal to
``olboost run``'s, reruns that skip finished tasks, a worker killed mid-sweep."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from olboost import sweep as sw
from olboost._version import __version__
from olboost.cli import main

#: What every record of ``olboost run`` holds, which a rerun checks before reusing it.
VERSION = {"olboost_version": __version__}

SPEC = """\
algorithms = ["ada-olmr", "topk-adaptive"]
datasets = ["emotions"]
seeds = 2
[params]
learners = 4
features = 5
[algorithm-params.topk-adaptive]
loops = [1, 2]
"""


def _spec(tmp_path, text, name="spec.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------------ specs


def test_spec_is_a_grid_in_order():
    spec = {
        "algorithms": ["ada-olmr", "online-bmr"],
        "datasets": ["emotions", {"name": "yeast", "features": 10}],
        "seeds": [3, 7],
        "curve": True,
        "params": {"learners": [5, 10], "features": 4},
        "algorithm-params": {"online-bmr": {"gamma": [0.1, 0.01], "bmr-loss": "rank"}},
    }
    tasks = sw.tasks_from_spec(spec)
    assert len(tasks) == 2 * 2 * 2 + 2 * 2 * 2 * 2 * 1  # ada: d x l x s; bmr: d x g x l x s
    assert len({t.id for t in tasks}) == len(tasks)
    assert all(t.curve for t in tasks)
    first = tasks[0]
    assert (first.algorithm, first.dataset, first.seed) == ("ada-olmr", "emotions", 3)
    assert dict(first.params) == {"features": 4, "learners": 5}
    yeast = [t for t in tasks if t.dataset == "yeast"]
    assert {dict(t.params)["features"] for t in yeast} == {10}  # the data set's own option wins
    bmr = [t for t in tasks if t.algorithm == "online-bmr"][0]
    assert bmr.argv == [
        "--algorithm", "online-bmr", "--dataset", "emotions", "--seed", "3",
        "--bmr-loss", "rank", "--features", "4", "--gamma", "0.1", "--learners", "5",
        "--no-progress", "--curve",
    ]  # fmt: skip
    # the parsed task is what olboost run parses from the same words
    args = sw.parse_run_args(bmr.argv)
    assert (args.bmr_loss, args.gamma, args.learners, args.curve) == ("rank", 0.1, 5, True)
    # a list of seeds may hold 0, olboost run's --seed 0 (a mutation campaign, session 51)
    spec = {"algorithms": ["ada-olmr"], "datasets": ["emotions"], "seeds": [0, 2]}
    assert [t.seed for t in sw.tasks_from_spec(spec)] == [0, 2]


def test_task_ids_are_a_stable_hash_of_the_parameters():
    task = sw.Task("ada-olmr", "emotions", 1, (("learners", 4),))
    # pinned: a rerun in another process, on another machine or Python, finds the same files
    assert task.id == "95f9d1e4bf07c411"
    assert task.filename == "ada-olmr_emotions_seed1_95f9d1e4bf07c411.json"
    assert sw.Task("ada-olmr", "emotions", 2, (("learners", 4),)).id != task.id
    assert sw.Task("ada-olmr", "emotions", 1, (("learners", 5),)).id != task.id
    path = sw.Task("ada-olmr", "data/my set.arff", 1, (("labels", "data/l.xml"),))
    assert path.filename.startswith("ada-olmr_my-set_seed1_")


def test_a_data_set_of_a_long_name_gives_records_a_file_system_takes(tmp_path):
    # a data set's name of 240 bytes (legal) made a record's name of 280: the task ran, then
    # writing its record failed with "File name too long" and the whole sweep stopped
    long = [sw.Task("ada-olmr", f"data/{'l' * 234}{end}.arff", 1, ()) for end in "ab"]
    names = [task.filename for task in long]
    assert names[0] != names[1]  # the same first characters, kept apart by the id
    for name in names:
        assert name.startswith("ada-olmr_" + "l" * 50) and len(name.encode()) <= 160
        (tmp_path / name).write_text("{}")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"datasets": ["emotions"]}, "'algorithms'"),
        ({"algorithms": ["ada-olmr"]}, "'datasets'"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "seed": 1}, "unknown keys"),
        ({"algorithms": ["nope"], "datasets": ["emotions"]}, "invalid choice: 'nope'"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "seeds": 0}, "seeds"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "seeds": [1, 1]}, "twice"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "curve": "yes"}, "curve"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"learner": 3}},
         "no option --learner"),  # argparse would take the abbreviation
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"output": "x"}},
         "set by the sweep"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"checkpoint": "c"}},
         "not for sweep tasks"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"learners": []}},
         "empty list"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"method": "x"}},
         "invalid choice: 'x'"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"],
          "algorithm-params": {"online-bmr": {"gamma": 0.1}}}, "not in algorithms"),
        ({"algorithms": ["label-ranker"], "datasets": ["sanders-r"]}, "Enron"),
        # options olboost run parses but refuses for the data or the model: one bad grid
        # point stops the spec before a cluster starts, naming it (it failed in the workers'
        # warm-up, with a Dask traceback, and no task ran)
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"],
          "params": {"features": [5, 999]}}, "ada-olmr on emotions: --features 999"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"learners": [2, -3]}},
         "learners must be in"),
        ({"algorithms": ["adaboost-olm"], "datasets": ["emotions"]}, "a bundled multi-label"),
        ({"algorithms": ["ada-olmr"], "datasets": ["no/such.arff"]}, "neither a bundled"),
        # false left --learners out of the task, which ran 100 learners labelled learners=False
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"learners": False}},
         "--learners takes a value, not false"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"],
          "params": {"learners": [5, False]}}, "--learners takes a value, not false"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"learners": True}},
         "--learners takes a value, not true"),
        ({"algorithms": ["ada-olmr"], "datasets": [{"name": "emotions", "gamma": False}]},
         "--gamma takes a value"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"],
          "params": {"fields": [["Subject", True]]}}, "not an option value"),
        # options the algorithm would ignore: every cell of the grid was the same run
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"C": [1, 5]}},
         "ada-olmr on emotions: --C: not an option of ada-olmr"),
        ({"algorithms": ["label-ranker"], "datasets": ["emotions"],
          "params": {"committee": "river"}}, "--committee: not an option of label-ranker"),
        ({"algorithms": ["label-ranker"], "datasets": ["emotions"],
          "params": {"fields": ["Subject"]}}, "--fields: for Enron foldering data"),
        # what the evaluation refuses of the data before learning (olboost run refuses it at
        # once): the spec passed, the warm-up failed on a worker and no task ran at all
        ({"algorithms": ["topk-adaptive"], "datasets": ["emotions"], "params": {"k": 7}},
         "topk-adaptive on emotions: .*TopkAdaptive: k=7 must be in \\[2, m=6\\] labels"),
        ({"algorithms": ["label-ranker"], "datasets": ["emotions"],
          "params": {"complexity": "entropy", "scale": "none"}},
         "label-ranker on emotions: train split: .* at row 0, .*must lie in \\[0, 1\\]"),
        # one option twice: either spelling names it, and the last one silently won
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"],
          "params": {"predict-with": "sampled", "predict_with": "best"}}, "name one option"),
        # one run under two ids (the task ran twice, two identical rows in the summary)
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"learners": [4, "4"]}},
         "named twice"),
        ({"algorithms": ["online-bmr"], "datasets": ["emotions"],
          "params": {"gamma": [0.5, "0.50"]}},
         "named twice"),
        # an option at the value it takes when not given: one run, two rows of one
        # configuration, and olboost plot refused the sweep's own records
        ({"algorithms": ["ada-olmr"], "params": {"learners": 2},
          "datasets": ["emotions", {"name": "emotions", "features": [20, 10]}]}, "named twice"),
        ({"algorithms": ["label-ranker"],
          "datasets": ["emotions", {"name": "emotions", "C": 0.01, "margin": 1}]}, "named twice"),
        ({"algorithms": ["label-ranker"],
          "datasets": ["emotions", {"name": "emotions", "scale": "minmax"}]}, "named twice"),
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "params": {"help": True}},
         "--help prints and exits"),
        # a count of 10^12 was a bare MemoryError, one of 3 million a sweep that grew past 2 GB
        # checking its tasks (an audit's fuzzing, session 50)
        ({"algorithms": ["ada-olmr"], "datasets": ["emotions"], "seeds": 10**12},
         "seeds = 1000000000000: at least 1, at most 100,000"),
        ({"algorithms": ["ada-olmr", "online-bmr"], "datasets": ["emotions", "scene"],
          "seeds": 1000, "params": {"learners": list(range(1, 51))}},
         "the grid has 200,000 tasks; a sweep runs at most 100,000"),
    ],
)  # fmt: skip
def test_bad_specs_are_refused_before_anything_runs(spec, message):
    with pytest.raises(ValueError, match=message):
        sw.tasks_from_spec(spec)


def test_cli_reports_a_bad_spec_in_one_line(tmp_path, capsys):
    assert main(["sweep", str(_spec(tmp_path, "algorithms = [\n"))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("olboost: error: ") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "spec-results").exists()


def test_a_spec_nested_too_deeply_is_named(tmp_path, capsys):
    # tomllib's RecursionError escaped: a traceback and exit 1 (an audit's fuzzing, session 50)
    spec = _spec(tmp_path, "x = " + "[" * 1000 + "]" * 1000 + "\n")
    assert main(["sweep", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err == f"olboost: error: {spec}: arrays or tables nested too deeply\n"


def test_a_spec_that_is_not_utf8_is_named(tmp_path, capsys):
    spec = tmp_path / "latin1.toml"
    spec.write_bytes(b'algorithms = ["caf\xe9"]\n')
    assert main(["sweep", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"olboost: error: {spec}: ") and len(err.strip().splitlines()) == 1


def test_a_spec_that_starts_with_a_utf8_bom_is_read_as_without(tmp_path):
    # as Windows' editors save UTF-8: it was "Invalid statement (at line 1, column 1)"
    text = 'algorithms = ["ada-olmr"]\ndatasets = ["emotions"]\nseeds = 2\n'
    plain, bom = tmp_path / "plain.toml", tmp_path / "bom.toml"
    plain.write_text(text, encoding="utf-8")
    bom.write_text(text, encoding="utf-8-sig")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf")
    tasks = sw.load_spec(bom)
    assert len(tasks) == 2 and tasks == sw.load_spec(plain)


def test_python_dash_m_olboost_sweep_is_the_sweep_command(tmp_path):
    import subprocess
    import sys

    bad = _spec(tmp_path, "algorithms = [\n")
    run = subprocess.run(
        [sys.executable, "-m", "olboost.sweep", str(bad)], capture_output=True, text=True
    )
    # the same one-line error and status as `olboost sweep` (above), not "is a package"
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("olboost: error: "), run.stderr
    assert not (tmp_path / "spec-results").exists()


def test_summary_is_mean_and_sd_over_seeds(tmp_path):
    tasks = sw.tasks_from_spec(
        {"algorithms": ["ada-olmr"], "datasets": ["emotions", "yeast"], "seeds": 3}
    )
    losses = [0.1, 0.2, 0.4, 0.3, None, 0.5]  # one task of yeast has not finished
    records = [None if v is None else {"rank_loss": v, "seconds": 1.0} for v in losses]
    rows = sw.summarize(tasks, records)
    assert [(r["dataset"], r["n"], r["seeds"]) for r in rows] == [
        ("emotions", 3, "1 2 3"), ("yeast", 2, "1 3"),
    ]  # fmt: skip
    assert rows[0]["mean"] == pytest.approx(np.mean([0.1, 0.2, 0.4]))
    assert rows[0]["sd"] == pytest.approx(np.std([0.1, 0.2, 0.4], ddof=1))
    assert rows[1]["sd"] == pytest.approx(np.std([0.3, 0.5], ddof=1))
    sw.write_summary_csv(rows, tmp_path / "s.csv")
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0] == "algorithm,dataset,metric,mean,sd,n,seeds,seconds_mean"
    assert lines[2].startswith("ada-olmr,yeast,rank_loss,0.4,")


# --------------------------------------------------------------------- on real clusters


def _records(directory):
    return {p.name: json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))}


def test_sweep_records_are_olboost_runs_bit_for_bit_and_a_rerun_skips_them(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    spec = _spec(tmp_path, SPEC)
    results = tmp_path / "out"
    argv = ["sweep", str(spec), "--results", str(results), "--workers", "2", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    tasks = sw.load_spec(spec)
    assert len(tasks) == 2 + 2 * 2
    records = _records(results)
    assert sorted(records) == sorted(t.filename for t in tasks)
    for task in tasks:
        record = records[task.filename]
        assert record["sweep_task"]["id"] == task.id
        assert record["sweep_task"]["argv"] == ["olboost", "run", *task.argv]
        # the same task by olboost run, here: every field but the timings is equal
        single = tmp_path / "single.json"
        assert main(["run", *task.argv, "--output", str(single)]) == 0
        alone = json.loads(single.read_text())
        assert sw.numbers(record) == sw.numbers(alone)
        assert set(record) - set(alone) == {"sweep_task"}
    loops2 = [records[t.filename] for t in tasks if dict(t.params).get("loops") == 2]
    assert all(r["loops"] == 2 and r["n_train"] == 391 for r in loops2)
    # the summary: printed and in CSV, one row per cell, mean and sd over the two seeds
    lines = (results / "summary.csv").read_text().splitlines()
    header = "algorithm,dataset,features,learners,loops,metric,mean,sd,n,seeds,seconds_mean"
    assert lines[0] == header
    assert len(lines) == 1 + 3
    ada = [records[t.filename]["rank_loss"] for t in tasks if t.algorithm == "ada-olmr"]
    assert f"{np.mean(ada):.4f} ± {np.std(ada, ddof=1):.4f}" in out
    assert lines[1].startswith(f"ada-olmr,emotions,5,4,,rank_loss,{sum(ada) / 2!r},")
    # a rerun finds every task finished and runs nothing: the files are untouched
    stamps = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")}
    assert main(argv) == 0
    assert "all finished before" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")} == stamps
    # (the records keep the digests that let the rerun trust them)
    assert all({"record_sha256", "source_sha256"} <= set(r["sweep_task"]) for r in records.values())


def test_killing_a_worker_mid_sweep_loses_no_finished_task(tmp_path, capsys):
    """A real SIGKILL of a real worker process of a LocalCluster while the sweep runs: the
    records already written stay as they were, the task it was running is run again elsewhere,
    and the sweep completes with every record equal to a run here."""
    distributed = pytest.importorskip("dask.distributed")
    spec = _spec(tmp_path, 'algorithms = ["ada-olmr"]\ndatasets = ["emotions"]\nseeds = 8\n'
                 "[params]\nlearners = 40\nfeatures = 5\n")  # fmt: skip
    tasks = sw.load_spec(spec)
    results = tmp_path / "out"
    with sw.local_cluster(2) as cluster, distributed.Client(cluster) as client:
        outcome = {}
        thread = threading.Thread(
            target=lambda: outcome.update(
                done=sw.run_sweep(tasks, results, client=client, log=None)
            ),
            daemon=True,
        )
        thread.start()
        deadline = time.monotonic() + 120
        while not list(results.glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.02)
        processing = {w: keys for w, keys in client.processing().items() if keys}
        before = {p.name: p.read_bytes() for p in results.glob("*.json")}
        assert before and processing, "the kill must come mid-sweep"
        victim = sorted(processing)[0]
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        thread.join(timeout=120)
        assert not thread.is_alive(), "the sweep did not complete within 120 s"
        assert len(before) < len(tasks)
        done = outcome["done"]
        assert not done.failures and done.ran == len(tasks) and None not in done.records
        after = {p.name: p.read_bytes() for p in results.glob("*.json")}
        assert sorted(after) == sorted(t.filename for t in tasks)
        assert all(after[name] == data for name, data in before.items())  # untouched
        # the worker is gone; the nanny started another one in its place
        workers = client.scheduler_info()["workers"]
        assert victim not in workers
        # every record (the re-run task's included) is the task's run here
        for task in tasks:
            assert sw.numbers(json.loads(after[task.filename])) == sw.numbers(
                sw.run_task(task.argv)
            )
        # --scheduler: a rerun on this cluster skips them all; a new seed runs alone
        spec.write_text(spec.read_text().replace("seeds = 8", "seeds = 9"))
        argv = ["sweep", str(spec), "--results", str(results), "--scheduler",
                cluster.scheduler_address]  # fmt: skip
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "9 tasks: 8 finished before, 1 to run" in out
        assert {p.name: p.read_bytes() for p in results.glob("*.json")}.items() >= after.items()
        assert len(list(results.glob("*.json"))) == 9


def test_a_task_whose_warm_up_fails_fails_alone(tmp_path):
    """A data file gone after the spec was checked (or missing on a worker of a remote
    cluster): the warm-up's error stopped the whole sweep and no task ran."""
    distributed = pytest.importorskip("dask.distributed")
    good = sw.Task("ada-olmr", "emotions", 1, (("features", 5), ("learners", 4)))
    gone = sw.Task("ada-olmr", str(tmp_path / "gone.arff"), 1,
                   (("labels", str(tmp_path / "gone.xml")), ("learners", 4)))  # fmt: skip
    results = tmp_path / "out"
    with sw.local_cluster(1) as cluster, distributed.Client(cluster) as client:
        done = sw.run_sweep([good, gone], results, client=client, log=None)
    assert list(done.failures) == [gone.id] and "gone.arff" in done.failures[gone.id]
    assert done.ran == 1 and done.records[0] is not None and done.records[1] is None
    assert [p.name for p in results.glob("*.json")] == [good.filename]


@pytest.mark.parametrize(
    ("where", "error", "message"),
    [
        # 0 was taken for the default, a worker per core; a bool for 1
        ({"workers": 0}, ValueError, "workers must be an integer >= 1, got 0"),
        ({"workers": True}, ValueError, "workers must be an integer >= 1, got True"),
        ({"workers": 1.5}, ValueError, "workers must be an integer >= 1, got 1.5"),
        # the second was ignored
        ({"workers": 2, "scheduler": "tcp://h:8786"}, ValueError, "workers and scheduler: give"),
        ({"client": object(), "workers": 2}, ValueError, "client and workers: give at most one"),
        ({"scheduler": 8786}, TypeError, "scheduler must be an address"),
    ],
)
def test_run_sweep_refuses_where_to_run_that_does_not_fit(tmp_path, where, error, message):
    task = sw.Task("ada-olmr", "emotions", 1, (("learners", 2),))
    with pytest.raises(error, match=message):
        sw.run_sweep([task], tmp_path / "out", log=None, **where)
    assert not (tmp_path / "out").exists()  # refused before anything was made


def test_one_data_file_spelled_two_ways_is_one_task(tmp_path, monkeypatch):
    from test_evaluate_cli import ARFF, XML

    rows = [f"{a / 10:.1f},{b / 10:.1f},{a % 2},{b % 2},{(a + b) % 2}" for a in range(6)
            for b in range(6)]  # fmt: skip
    (tmp_path / "t.arff").write_text(ARFF + "\n".join(rows) + "\n")
    (tmp_path / "t.xml").write_text(XML)
    monkeypatch.chdir(tmp_path)
    spec = {
        "algorithms": ["ada-olmr"],
        "params": {"learners": 2},
        "datasets": [{"name": "t.arff", "labels": "t.xml"},
                     {"name": "./t.arff", "labels": str(tmp_path / "t.xml")}],
    }  # fmt: skip
    with pytest.raises(ValueError, match="named twice"):
        sw.tasks_from_spec(spec)


def test_a_sweeps_cluster_takes_no_port_another_cluster_holds():
    # Dask's default HTTP port, held as by another cluster or sweep: the scheduler took another
    # one and warned ("Port 8787 is already in use"), a line on the sweep's output; two sweeps
    # overlapping under xdist made test_ctrl_c_stops_a_sweep_in_one_line fail so
    import socket
    import warnings

    pytest.importorskip("dask.distributed")
    held = socket.socket()
    try:
        held.bind(("127.0.0.1", 8787))
        held.listen()
    except OSError:
        pass  # held by another process already: the same case
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with sw.local_cluster(1) as cluster:
                address, port = (
                    cluster.scheduler.http_server.address,
                    cluster.scheduler.http_server.port,
                )
    finally:
        held.close()
    assert not [w for w in caught if "already in use" in str(w.message)], caught
    assert address == "127.0.0.1" and port != 8787


@pytest.mark.parametrize("moment", ["workers-starting", "tasks-running"])
def test_ctrl_c_stops_a_sweep_in_one_line(tmp_path, moment):
    # a terminal's Ctrl-C goes to the whole process group: each Dask worker printed the
    # traceback of its KeyboardInterrupt (33 lines) beside "olboost: interrupted"; workers
    # still importing olboost printed 60 lines more, and the sweep's own scheduler a warning
    # per worker removed with results
    import subprocess
    import sys

    import psutil

    spec = _spec(tmp_path, 'algorithms = ["ada-olmr"]\ndatasets = ["emotions"]\nseeds = 400\n'
                 "[params]\nlearners = 4\nfeatures = 5\nloops = 5\n")  # fmt: skip
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "olboost", "sweep", str(spec), "--workers", "2",
         "--results", str(results)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # as a shell starts a command; pytest-xdist's workers ignore SIGINT, which a child keeps
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    sweep = psutil.Process(proc.pid)

    def ready() -> bool:
        if moment == "tasks-running":
            return bool(list(results.glob("*.json")))
        # the workers' processes exist: they are starting (importing olboost)
        return len(sweep.children(recursive=True)) >= 2

    try:
        deadline = time.monotonic() + 240
        while not ready():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert err.splitlines() == ["olboost: interrupted"], err


# ------------------------------------------------------------------ mutation round 4's kills


def test_a_data_sets_own_option_wins_over_the_algorithms_params():
    # the most specific setting: [algorithm-params] overrode the data set's own features = 10
    spec = {
        "algorithms": ["ada-olmr"],
        "seeds": 1,
        "datasets": [{"name": "emotions", "features": 10}],
        "algorithm-params": {"ada-olmr": {"features": 4, "learners": 2}},
    }
    (task,) = sw.tasks_from_spec(spec)
    assert dict(task.params)["features"] == 10 and dict(task.params)["learners"] == 2


def test_the_summary_keeps_a_cell_that_has_no_finished_seed_and_means_its_seconds(tmp_path):
    tasks = [sw.Task("ada-olmr", d, s) for d in ("emotions", "yeast", "scene") for s in (1, 2)]
    records = [
        {"rank_loss": 0.2, "seconds": 1.0},
        {"rank_loss": 0.3, "seconds": 3.0},
        {"rank_loss": 0.2, "seconds": 5.0},
        {"rank_loss": 0.3, "seconds": 7.0},
        None,  # scene: both seeds failed
        None,
    ]
    rows = {row["dataset"]: row for row in sw.summarize(tasks, records)}
    assert (rows["emotions"]["seconds_mean"], rows["yeast"]["seconds_mean"]) == (2.0, 6.0)
    assert rows["scene"]["n"] == 0
    path = tmp_path / "summary.csv"
    sw.write_summary_csv(list(rows.values()), path)
    lines = path.read_text().splitlines()
    header, scene = lines[0].split(","), next(x for x in lines if ",scene," in x).split(",")
    assert "nan" not in path.read_text()  # "empty where a cell has no value"
    assert scene[header.index("mean")] == scene[header.index("seconds_mean")] == ""
    assert scene[header.index("n")] == "0"


def test_the_sweep_command_exits_1_when_a_task_failed_and_writes_beside_the_cwd(
    tmp_path, monkeypatch
):
    from olboost.sweep import _command

    spec = tmp_path / "grid.toml"
    spec.write_text('algorithms = ["ada-olmr"]\ndatasets = ["emotions"]\n[params]\nlearners = 2\n')
    seen = {}

    def run_sweep(tasks, results, **kwargs):
        seen["results"] = os.path.abspath(results)
        os.makedirs(results, exist_ok=True)
        return sw.SweepOutcome(
            [None] * len(tasks), skipped=0, ran=0, failures={tasks[0].id: "OSError: gone"}
        )

    monkeypatch.setattr(_command, "run_sweep", run_sweep)
    cwd = tmp_path / "here"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert main(["sweep", str(spec)]) == 1
    assert seen["results"] == str(cwd / "grid-results")  # "in this directory" (--help)


def test_a_rerun_of_a_finished_sweep_counts_it_and_removes_dead_writers_temporaries(tmp_path):
    import subprocess
    import sys

    task = sw.Task("ada-olmr", "emotions", 1, (("learners", 2),))
    record = {"rank_loss": 0.2, "seconds": 1.0, "sweep_task": {"id": task.id}, **VERSION}
    (tmp_path / task.filename).write_text(json.dumps(record))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    stale = tmp_path / f".{task.filename}.{dead}.abcd1234.olboost-tmp"
    stale.write_bytes(b"half a record")
    outcome = sw.run_sweep([task], tmp_path, log=None)
    assert (outcome.skipped, outcome.ran) == (1, 0)
    assert not stale.exists()


def test_a_rerun_finds_a_record_written_under_a_data_sets_whole_long_name(tmp_path):
    # records' names now keep 100 characters of a data set's; a record written whole by an
    # earlier version was not found, and its task ran again beside it
    task = sw.Task("ada-olmr", f"data/{'l' * 150}.arff", 1, (("learners", 2),))
    record = {"rank_loss": 0.2, "seconds": 1.0, "sweep_task": {"id": task.id}, **VERSION}
    (tmp_path / f"ada-olmr_{'l' * 150}_seed1_{task.id}.json").write_text(json.dumps(record))
    outcome = sw.run_sweep([task], tmp_path, log=None)
    assert (outcome.skipped, outcome.ran) == (1, 0) and outcome.records == [record]


def _sweep_interrupted(tmp_path):
    """SPEC's tasks, swept into ``tmp_path / "out"`` on one local worker until the Ctrl-C the
    test raises in it (Python's default handler: pytest-xdist's workers ignore SIGINT)."""
    tasks = sw.load_spec(_spec(tmp_path, SPEC))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            sw.run_sweep(tasks, tmp_path / "out", workers=1, log=None)
    finally:
        signal.signal(signal.SIGINT, previous)
    return tasks


def test_a_ctrl_c_while_the_local_cluster_starts_stops_the_cluster(tmp_path, monkeypatch):
    # a Ctrl-C inside the cluster's start left it half made, outside the exit stack, never
    # closed (Dask's exit hook then failed on it): it now comes once the cluster is in the stack
    pytest.importorskip("dask.distributed")
    from olboost.sweep import _client

    made = []
    real = _client.local_cluster

    def starting(n):
        cluster = real(n)
        made.append(cluster)
        signal.raise_signal(signal.SIGINT)  # as a Ctrl-C lands while the cluster starts
        return cluster

    monkeypatch.setattr(_client, "local_cluster", starting)
    _sweep_interrupted(tmp_path)
    assert len(made) == 1 and made[0].status.name == "closed"


def test_a_ctrl_c_while_a_finished_tasks_result_is_fetched_comes_after_its_record(
    tmp_path, monkeypatch
):
    # the Ctrl-C of a terminal landed inside Dask's wait for a finished task's result: Dask's
    # cancel callback then failed on a name it had not set (a traceback after "olboost:
    # interrupted", distributed 2026.8), and the finished task's record was never written
    pytest.importorskip("dask.distributed")
    import distributed

    real = distributed.Future.result
    fetched = []

    def interrupted(self, *args, **kwargs):
        if str(self.key).startswith("olboost-sweep-") and not fetched:
            signal.raise_signal(signal.SIGINT)  # as a Ctrl-C lands while the result is fetched
            fetched.append(self.key)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(distributed.Future, "result", interrupted)
    tasks = _sweep_interrupted(tmp_path)
    (key,) = fetched
    (task,) = [t for t in tasks if f"olboost-sweep-{t.id}" == key]
    written = json.loads((tmp_path / "out" / task.filename).read_text())
    assert written["sweep_task"]["id"] == task.id
    # and only it: the interrupt stopped the sweep there
    assert [p.name for p in (tmp_path / "out").glob("*.json")] == [task.filename]


def test_a_local_clusters_workers_say_nothing_of_the_cluster_stopping():
    # a Ctrl-C stops the cluster: a worker's heartbeat in flight logged a 30-line traceback
    # after "olboost: interrupted" (seen with distributed 2024.1 on a loaded machine), and each
    # task still running a warning that it was cancelled
    pytest.importorskip("dask.distributed")
    import inspect
    import logging

    import distributed.worker
    import distributed.worker_state_machine

    from olboost.sweep import _worker_setup as setup

    # the words the filters know are the ones this Dask logs
    sources = {
        "distributed.worker": inspect.getsource(distributed.worker.Worker.heartbeat),
        "distributed.worker.state_machine": inspect.getsource(distributed.worker_state_machine),
    }
    assert "Failed to communicate with scheduler during heartbeat" in sources["distributed.worker"]
    machine_source = sources["distributed.worker.state_machine"]
    assert 'f"Async instruction for {task} ended with CancelledError"' in machine_source
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    loggers = [logging.getLogger(name) for name in setup.SHUTDOWN_RECORDS]
    assert loggers[1].parent is loggers[0]  # the state machine's records reach the handler
    loggers[0].addHandler(handler)
    try:
        setup.quiet_shutdown()
        setup.quiet_shutdown()
        for logger in loggers:
            assert sum(isinstance(f, setup._Shutdown) for f in logger.filters) == 1
        worker, machine = loggers
        try:
            raise OSError("Stream is closed")
        except OSError:
            worker.exception("Failed to communicate with scheduler during heartbeat.")
        machine.warning("Async instruction for %s ended with CancelledError", "<Task cancelled>")
        # the others still pass
        worker.error("Scheduler was unaware of this worker")
        machine.warning("Async instruction for <Task> ended with CancelledError, and more")
    finally:
        loggers[0].removeHandler(handler)
        for logger in loggers:
            for f in [f for f in logger.filters if isinstance(f, setup._Shutdown)]:
                logger.removeFilter(f)
    assert [r.getMessage() for r in records] == [
        "Scheduler was unaware of this worker",
        "Async instruction for <Task> ended with CancelledError, and more",
    ]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_local_clusters_workers_start_with_sigint_blocked():
    # spawned by Dask's threads, they had it unblocked: multiprocessing's resource tracker,
    # started by a thread's first queue, unblocks SIGINT in that thread
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    from olboost.sweep._client import local_cluster

    with local_cluster(2) as cluster, Client(cluster) as client:
        masks = client.run(_sigint_blocked)
    assert len(masks) == 2 and set(masks.values()) == {True}
    assert not _sigint_blocked()  # the caller's thread as it was


def _sigint_blocked() -> bool:
    """Whether the calling process's main thread blocks SIGINT (``/proc``)."""
    status = Path("/proc/self/status").read_text().splitlines()
    (mask,) = [line.split()[1] for line in status if line.startswith("SigBlk:")]
    return bool(int(mask, 16) >> (signal.SIGINT - 1) & 1)


def test_after_a_ctrl_c_dask_is_quiet_until_the_cluster_is_closed():
    # the sweep's own scheduler logged a warning per worker removed with results, and a comm
    # closed while writing, after "olboost: interrupted"
    import logging

    from olboost.sweep._client import _QuietTeardown

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    scheduler = logging.getLogger("distributed.scheduler")
    scheduler.addHandler(handler)
    levels = {name: logging.getLogger(name).level for name in _QuietTeardown.LOGGERS}
    try:
        quiet = _QuietTeardown()
        assert quiet(ValueError, ValueError("a task's"), None) is False  # not an interrupt
        scheduler.warning("kept")
        assert quiet(KeyboardInterrupt, KeyboardInterrupt(), None) is False
        scheduler.critical("dropped")
        quiet.restore()
        scheduler.warning("kept again")
        assert {n: logging.getLogger(n).level for n in _QuietTeardown.LOGGERS} == levels
    finally:
        scheduler.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    assert [r.getMessage() for r in records] == ["kept", "kept again"]


def test_the_summary_aligns_columns_after_names_in_wide_characters():
    # len() counted a Chinese character as one column: a terminal draws it in two, and every
    # column after a data set named so was pushed right
    from olboost.sweep import Task, format_summary
    from olboost.sweep._summary import summarize

    tasks = [Task("ada-olmr", name, 1, (("learners", 10),)) for name in ("情感数据", "emotions")]
    records = [{"rank_loss": 0.25, "seconds": 1.0}, {"rank_loss": 0.5, "seconds": 3.0}]
    lines = format_summary(summarize(tasks, records))
    starts = set()
    for line in lines:
        # the terminal column where "learners" (the third column) starts
        cut = line.index("10") if "10" in line else line.index("learners")
        starts.add(sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in line[:cut]))
    assert len(starts) == 1, lines


def test_a_record_of_another_version_or_damaged_is_run_again(tmp_path):
    # a record of any olboost version was reused (its numbers went into the summary), and one
    # without its seconds failed the summary with a bare KeyError
    from olboost.sweep._client import _finished

    task = sw.Task("ada-olmr", "emotions", 1, (("learners", 2),))
    path = tmp_path / task.filename
    good = {"rank_loss": 0.2, "seconds": 1.0, "sweep_task": {"id": task.id}, **VERSION}
    for record, kept in [
        (good, True),
        ({**good, "olboost_version": "0.0.1-old"}, False),
        ({k: v for k, v in good.items() if k != "olboost_version"}, False),
        ({k: v for k, v in good.items() if k != "seconds"}, False),
        ({**good, "rank_loss": None}, False),
        ({**good, "sweep_task": {"id": "other"}}, False),
        ([good], False),
    ]:
        path.write_text(json.dumps(record))
        assert (_finished(path, task) is not None) == kept, record


def test_a_record_edited_since_or_of_other_code_is_run_again(tmp_path, monkeypatch):
    # a record whose rank loss was edited by hand (valid JSON) was reused, the hand-made number
    # in the summary; and on a development install, whose version stays the same while its
    # code changes, so was a record of the old code
    from olboost import _version
    from olboost.sweep._client import _finished, _record_digest

    task = sw.Task("ada-olmr", "emotions", 1, (("learners", 2),))
    path = tmp_path / task.filename
    sweep_task = {"id": task.id, "source_sha256": _version.source_digest()}
    record = {"rank_loss": 0.2, "seconds": 1.0, "sweep_task": sweep_task, **VERSION}
    record["sweep_task"]["record_sha256"] = _record_digest(record)
    path.write_text(json.dumps(record))
    assert _finished(path, task) == record
    for edited in ({**record, "rank_loss": 0.0001}, {**record, "note": 1}):
        path.write_text(json.dumps(edited))
        assert _finished(path, task) is None, edited
    path.write_text(json.dumps(record, indent=4))  # spelled otherwise, the same record
    assert _finished(path, task) == record
    monkeypatch.setattr(_version, "source_digest", lambda: "0" * 64)  # the code changed
    assert _finished(path, task) is None
    monkeypatch.undo()
    # records from before the digests: trusted as before
    older = {**record, "sweep_task": {"id": task.id}}
    path.write_text(json.dumps(older))
    assert _finished(path, task) == older


def test_a_record_of_a_data_file_changed_since_is_run_again(tmp_path):
    # records were keyed by the task's parameters alone: a file changed in place, with as many
    # rows, was reused by a rerun
    from olboost.cli._shared import _files_digest as cached
    from olboost.sweep._client import _files_digest, _finished

    data, labels = tmp_path / "d.arff", tmp_path / "d.xml"
    data.write_text("one")
    labels.write_text("two")
    task = sw.Task("ada-olmr", str(data), 1, (("labels", str(labels)), ("learners", 2)))
    path = tmp_path / task.filename
    sweep_task = {"id": task.id, "files_sha256": _files_digest(task)}
    record = {"rank_loss": 0.2, "seconds": 1.0, "sweep_task": sweep_task, **VERSION}
    path.write_text(json.dumps(record))
    assert _finished(path, task) == record
    labels.write_text("owt")  # the same size
    cached.cache_clear()  # as a rerun's new process starts
    assert _finished(path, task) is None
    del record["sweep_task"]["files_sha256"]  # written before the digest: trusted
    path.write_text(json.dumps(record))
    assert _finished(path, task) == record
    bundled = sw.Task("ada-olmr", "emotions", 1, (("learners", 2),))
    assert _files_digest(bundled) is None


def test_a_record_from_before_an_option_of_its_algorithm_is_run_again(tmp_path):
    # label-ranker's --scale came with a new default (min-max on MULAN data): a record written
    # before it, unscaled, has the same task id and was reused as the scaled task's result
    from olboost.cli._algorithms import ALGORITHMS
    from olboost.sweep._client import _finished

    task = sw.Task("label-ranker", "emotions", 1, ())
    path = tmp_path / task.filename
    options = {o: None for o in ALGORITHMS["label-ranker"].options if o != "fields"}
    record = {"algorithm": "label-ranker", **options, "rank_loss": 0.2, "seconds": 1.0,
              "sweep_task": {"id": task.id}, **VERSION}  # fmt: skip
    path.write_text(json.dumps(record))
    assert _finished(path, task) == record
    del record["scale"]
    path.write_text(json.dumps(record))
    assert _finished(path, task) is None
    path.write_text(json.dumps({**record, "algorithm": ["label-ranker"]}))  # damaged: no error
    assert _finished(path, task) is not None


def test_a_scheduler_it_cannot_reach_leaves_no_results_directory_it_made(tmp_path, capsys):
    # the sweep made its results directory, then failed to reach the scheduler: an empty
    # directory was left where nothing ran (one that existed stays)
    pytest.importorskip("dask.distributed")
    spec = tmp_path / "s.toml"
    spec.write_text('algorithms = ["ada-olmr"]\ndatasets = ["emotions"]\nseeds = 1\n')
    made, kept = tmp_path / "new" / "results", tmp_path / "kept"
    kept.mkdir()
    for results in (made, kept):
        argv = ["sweep", str(spec), "--results", str(results), "--scheduler", "bogus"]
        assert main(argv) == 2
        assert "olboost: error:" in capsys.readouterr().err
    assert not made.exists() and kept.is_dir()
