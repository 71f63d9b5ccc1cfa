"""The top-k protocol (issue 12, items 4 and 5): loops, feedback kinds, the command line and the
reproduction of Raman, Zhang, Jung & Tewari (2020).

The evaluator knows the relevant sets, records the weighted rank loss of the ranking the model
*showed*, and gives a top-k booster only a :class:`~olboost.feedback.TopkFeedback`; the data-set
path (compiled, the model plays the user) and the iterable path (the evaluator plays the user
with ``show_one`` and ``impression.feedback``) must agree bit for bit.
"""

from __future__ import annotations

import json
import pickle
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from olboost import AdaOLMR, TopkAdaptive, TopkBBM, VFDTCommittee
from olboost import topk_experiments as tx
from olboost.cli import main
from olboost.datasets import load
from olboost.evaluate import prequential, train_test
from olboost.feedback import TopkFeedback, TopkUser

BOOSTERS = [TopkBBM, TopkAdaptive]


@pytest.fixture(scope="module")
def emotions():
    return load("emotions")


def _topk(cls, exploration="uniform", labels=None, **params):
    extra = {"gamma": 0.2} if cls is TopkBBM else {}
    return cls(
        VFDTCommittee(n_features=5), learners=4, seed=3, k=3, rho=0.2,
        exploration=exploration, labels=labels, **extra, **params,
    )  # fmt: skip


def _state(model):
    """What the model learned, as bytes (its id and the ``labels`` parameter left out)."""
    state = model.__getstate__()
    state.pop("model_id_", None)
    state.pop("labels", None)
    return pickle.dumps(state)


def _shown_loss(ranking, relevant):
    """Weighted rank loss of a ranking (best first), pair by pair: the share of (relevant,
    irrelevant) pairs whose irrelevant label is shown above the relevant one."""
    rel = [label for label in ranking if label in relevant]
    irr = [label for label in ranking if label not in relevant]
    if not rel or not irr:
        return 0.0
    where = {label: p for p, label in enumerate(ranking)}
    wrong = sum(where[b] < where[a] for a in rel for b in irr)
    return wrong / (len(rel) * len(irr))


# ------------------------------------------------------------------------------------- loops


@pytest.mark.parametrize("cls", [*BOOSTERS, AdaOLMR])
def test_loops_stream_the_train_split_that_many_times(cls, emotions):
    model = _topk(cls) if cls is not AdaOLMR else AdaOLMR(VFDTCommittee(n_features=5), learners=4)
    result = train_test(model, emotions.train, emotions.test, loops=3)
    n_train, n_test = emotions.train.n_samples, emotions.test.n_samples
    assert model.t_ == result.n_learned == n_train * 3 + n_test
    assert (result.n_train, result.n_test, result.loops) == (n_train, n_test, 3)
    assert result.train_losses.shape == (n_train * 3,) and result.losses.shape == (n_test,)
    running = result.running_losses()
    assert running.shape == (model.t_,)
    assert running[-1] == pytest.approx(np.concatenate([result.train_losses, result.losses]).mean())
    assert result.summary()["loops"] == 3 and "train_losses" not in result.summary()


def test_loops_equal_learning_the_train_split_again_by_hand(emotions):
    names = emotions.label_names
    looped, by_hand = _topk(TopkAdaptive, labels=names), _topk(TopkAdaptive, labels=names)
    result = train_test(looped, emotions.train, emotions.test, loops=2)
    first = by_hand.score_then_learn(emotions.train.X, emotions.train.Y)
    second = by_hand.score_then_learn(emotions.train.X, emotions.train.Y)
    last = by_hand.score_then_learn(emotions.test.X, emotions.test.Y)
    from olboost.metrics import rank_loss

    np.testing.assert_array_equal(result.losses, rank_loss(last, emotions.test.Y))
    np.testing.assert_array_equal(
        result.train_losses,
        np.concatenate([rank_loss(first, emotions.train.Y), rank_loss(second, emotions.train.Y)]),
    )
    assert _state(looped) == _state(by_hand)


@pytest.mark.parametrize("cls", [TopkAdaptive, AdaOLMR])
def test_the_blocks_of_the_array_path_change_no_result(cls, emotions, monkeypatch):
    """The evaluator hands the rows to the model in blocks (``_chunk_rows``: up to 4,096 rows, so
    emotions' splits go in one call each); blocks of 7 and of 100 rows give the same losses and
    the same model, bit for bit."""
    from olboost.evaluate import _loops

    def run():
        model = _topk(cls) if cls is TopkAdaptive else cls(VFDTCommittee(n_features=5), seed=3)
        result = train_test(model, emotions.train, emotions.test, loops=2)
        return result.train_losses, result.losses, _state(model)

    default = run()
    for rows in (7, 100):
        monkeypatch.setattr(_loops, "_chunk_rows", lambda n_outputs, rows=rows: rows)
        blocks = run()
        np.testing.assert_array_equal(blocks[0], default[0])
        np.testing.assert_array_equal(blocks[1], default[1])
        assert blocks[2] == default[2]


def test_the_blocks_hold_about_a_million_scores():
    from olboost.evaluate._loops import _chunk_rows

    assert _chunk_rows(6) == _chunk_rows(101) == 4096  # the papers' data sets: one call a pass
    assert _chunk_rows(983) == 1066 and _chunk_rows(5000) == _chunk_rows(10**6) == 256
    assert _chunk_rows(0) == 4096


@pytest.mark.parametrize("loops", [0, -1, 1.5, 2.0, True, "2", None])
def test_bad_loops_are_refused_before_anything_is_learned(loops, emotions):
    model = _topk(TopkBBM)
    with pytest.raises(ValueError, match="loops must be an integer >= 1"):
        train_test(model, emotions.train, emotions.test, loops=loops)
    assert not hasattr(model, "t_")


def test_loops_need_a_train_stream_that_can_be_read_again(emotions):
    model = _topk(TopkBBM, labels=emotions.label_names)
    with pytest.raises(ValueError, match="one-pass iterator"):
        train_test(model, iter(emotions.train), emotions.test, loops=2)
    assert not hasattr(model, "t_")
    # a sequence can be read again; one pass over an iterator is fine
    train_test(model, list(emotions.train)[:20], iter(list(emotions.test)[:5]), loops=2)
    assert model.t_ == 45


# ---------------------------------------------------------------------------------- feedback


def test_feedback_defaults_to_the_models_kind(emotions):
    topk = train_test(_topk(TopkBBM), emotions.train, emotions.test, k=3)
    full = train_test(AdaOLMR(VFDTCommittee(n_features=5), learners=3), emotions.train,
                      emotions.test, feedback="full")  # fmt: skip
    assert (topk.feedback, full.feedback) == ("topk", "full")
    assert topk.summary()["feedback"] == "topk"


@pytest.mark.parametrize(
    ("make", "feedback", "k", "message"),
    [
        (lambda: AdaOLMR(VFDTCommittee(n_features=5), learners=3), "topk", None, "top-k booster"),
        (lambda: AdaOLMR(VFDTCommittee(n_features=5), learners=3), None, 3, "top-k feedback only"),
        (lambda: _topk(TopkBBM), "full", None, "learns from top-k feedback only"),
        (lambda: _topk(TopkAdaptive), "partial", None, "must be None, 'full', 'topk' or"),
        (lambda: _topk(TopkAdaptive), "topk", 4, "does not match the model's k=3"),
        (lambda: _topk(TopkBBM), None, 3.0, "does not match the model's k=3"),
    ],
)
@pytest.mark.parametrize("protocol", ["train_test", "prequential"])
def test_feedback_that_does_not_fit_the_model_is_refused(make, feedback, k, message, protocol):
    data = load("emotions")
    model = make()
    with pytest.raises(ValueError, match=message):
        if protocol == "train_test":
            train_test(model, data.train, data.test, feedback=feedback, k=k)
        else:
            prequential(model, data.test, feedback=feedback, k=k)
    assert not hasattr(model, "t_")


@pytest.mark.parametrize("cls", BOOSTERS)
@pytest.mark.parametrize("exploration", ["uniform", "single-swap"])
def test_iterable_and_data_set_paths_give_the_same_bits(cls, exploration, emotions):
    fast = _topk(cls, exploration)
    slow = _topk(cls, exploration, labels=emotions.label_names)
    a = train_test(fast, emotions.train, emotions.test, loops=2)
    b = train_test(slow, list(emotions.train), iter(emotions.test), loops=2)
    np.testing.assert_array_equal(a.losses, b.losses)
    np.testing.assert_array_equal(a.losses_skip, b.losses_skip)
    np.testing.assert_array_equal(a.train_losses, b.train_losses)
    assert fast.t_ == slow.t_ == 391 * 2 + 202
    assert _state(fast) == _state(slow)
    # and prequentially, on a model that goes on from there
    c, d = prequential(fast, emotions.test), prequential(slow, list(emotions.test))
    np.testing.assert_array_equal(c.losses, d.losses)
    assert _state(fast) == _state(slow)


@pytest.mark.parametrize("cls", BOOSTERS)
def test_iterable_path_gives_only_topk_feedback_and_scores_the_shown_ranking(cls, emotions):
    model = _topk(cls, labels=emotions.label_names)
    replay = model.clone()
    received = []
    learn_one = model.learn_one

    def recording(x, y):
        received.append(y)
        learn_one(x, y)

    model.learn_one = recording
    pairs = list(emotions.test)[:60]
    result = prequential(model, pairs)
    assert len(received) == 60 and all(isinstance(f, TopkFeedback) for f in received)
    # the recorded losses are those of the rankings shown, pair by pair
    for (x, y), loss, feedback in zip(pairs, result.losses, received, strict=True):
        impression = replay.show_one(x)
        assert loss == pytest.approx(_shown_loss(impression.ranking, y), abs=1e-12)
        clicked = [label for label in impression.labels if label in y]
        np.testing.assert_array_equal(feedback.shown, impression.shown)
        assert feedback.relevant.sum() == len(clicked)
        replay.learn_one(x, impression.feedback(clicked))
    del model.learn_one
    assert _state(model) == _state(replay)


@pytest.mark.parametrize(
    ("y", "error", "match"),
    [
        ({99}, ValueError, "unknown label 99"),
        ({True}, ValueError, "unknown label True"),  # was learned as the label 1
        ([0], TypeError, "got list"),  # was taken
        ({0: True, "zz": False}, ValueError, "unknown label 'zz'"),  # was taken
        ({0: 1}, TypeError, "bool"),
    ],
)
def test_a_target_learn_one_refuses_is_refused_by_the_topk_protocol(y, error, match, emotions):
    """The top-k evaluator checks a target as learn_one (and the full-feedback evaluator) do,
    before the model shows anything: the model stays as it was."""
    labels = list(range(len(emotions.label_names)))
    x, _ = next(iter(emotions.test))
    for model in (_topk(TopkBBM, labels=labels), AdaOLMR(learners=2, seed=1, labels=labels)):
        before = pickle.dumps(model)
        with pytest.raises(error, match=match):
            prequential(model, [(x, y)])
        assert pickle.dumps(model) == before


# ------------------------------------------------------------------------------ command line


@pytest.mark.parametrize(
    ("algorithm", "extra"),
    [("topk-bbm", ["--gamma", "0.3"]), ("topk-adaptive", ["--exploration", "single-swap"])],
)
def test_cli_runs_the_topk_algorithms(algorithm, extra, tmp_path, capsys, emotions):
    out = tmp_path / "r.json"
    argv = ["run", "--algorithm", algorithm, "--dataset", "emotions", "--learners", "3",
            "--seed", "2", "--k", "3", "--rho", "0.1", "--loops", "2", "--features", "5",
            "--no-progress", "--output", str(out), *extra]  # fmt: skip
    assert main(argv) == 0
    record = json.loads(out.read_text())
    assert record["algorithm"] == algorithm and record["feedback"] == "topk"
    assert (record["k"], record["rho"], record["loops"]) == (3, 0.1, 2)
    assert record["n_train"] == 391 and record["n_test"] == 202
    assert "shown rankings" in capsys.readouterr().out
    cls, params = (
        (TopkBBM, {"gamma": 0.3, "exploration": "uniform"})
        if algorithm == "topk-bbm"
        else (TopkAdaptive, {"exploration": "single-swap"})
    )
    again = cls(VFDTCommittee(n_features=5), learners=3, seed=2, k=3, rho=0.1, **params)
    expected = train_test(again, emotions.train, emotions.test, loops=2).rank_loss
    assert record["rank_loss"] == expected


def test_cli_runs_on_the_trees_of_reproduce_topk(tmp_path, capsys):
    # --committee vfdt-weka: what reproduce topk runs (its Job with 20 features), bit for bit
    out = tmp_path / "r.json"
    argv = ["run", "--algorithm", "topk-adaptive", "--dataset", "emotions", "--learners", "3",
            "--seed", "2", "--k", "3", "--rho", "0.02", "--loops", "2", "--features", "20",
            "--exploration", "single-swap", "--committee", "vfdt-weka", "--no-progress",
            "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    record = json.loads(out.read_text())
    assert record["committee"] == "vfdt-weka"
    job = tx.Job("emotions", "TopAda", 2, 3, 2, "single-swap", 0.02)
    assert record["rank_loss"] == tx.run_job(job)["rank_loss"]
    river = tx.run_job(replace(job, trees="river"))["rank_loss"]
    assert river != record["rank_loss"]  # so the two checks tell the trees apart
    assert main([*argv[:-5], "--committee", "vfdt", "--no-progress", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["rank_loss"] == river


def test_cli_help_shows_the_topk_options_with_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ["topk-bbm", "topk-adaptive", "--k K", "(default: 3)", "(default: uniform)",
                   "--rho RHO", "(default: 0.02)", "--loops LOOPS", "(default: 1)"]:  # fmt: skip
        assert needle in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--algorithm", "topk-bbm", "--k", "7"], "TopkBBM: k=7 must be in [2, m=6] labels"),
        (["--algorithm", "topk-adaptive", "--exploration", "single-swap", "--k", "2"], "App. B.1"),
        (["--algorithm", "topk-bbm", "--rho", "1.5"], "rho"),
        (["--algorithm", "topk-adaptive", "--loops", "0"], "--loops must be >= 1, got 0"),
        (["--algorithm", "adaboost-olm", "--dataset", "balance", "--loops", "2"], "prequentially"),
    ],
)
def test_cli_topk_errors_exit_2_without_a_traceback(argv, message, capsys):
    if "--dataset" not in argv:
        argv = [*argv, "--dataset", "emotions"]
    assert main(["run", *argv, "--learners", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# ---------------------------------------------------------------------------- reproduction


def test_reproduce_topk_prints_both_tables_beside_the_published_numbers(tmp_path, capsys):
    out = tmp_path / "topk.json"
    argv = ["reproduce", "topk", "--datasets", "emotions", "--seeds", "2", "--loops", "1",
            "--learners", "2", "--gammas", "0.1", "0.3", "--jobs", "1", "--no-progress",
            "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    table1, table2 = text.split("Table 1: uniform")[1], text.split("Table 2: single swap")[1]
    row1 = next(line for line in table1.splitlines() if line.startswith("emotions"))
    row2 = next(line for line in table2.splitlines() if line.startswith("emotions"))
    for published in ["[0.20]", "[0.22]", "[0.17]", "[0.16]"]:
        assert published in row1
    for published in ["[0.19]", "[0.23]", "[0.17]", "[0.16]"]:
        assert published in row2
    assert "Table 4" in text and "299" in text and "189" in text
    assert "lowest mean test loss" in text  # how the edge was chosen
    record = json.loads(out.read_text())
    for exploration in ("uniform", "single-swap"):
        cells = record["tables"][exploration]["emotions"]
        opt = cells["TopOpt"]
        assert set(opt["by_gamma"]) == {"0.1", "0.3"}
        assert opt["rank_loss_mean"] == min(c["rank_loss_mean"] for c in opt["by_gamma"].values())
        assert opt["rank_loss_mean"] == opt["by_gamma"][str(opt["gamma"])]["rank_loss_mean"]
        assert len(cells["TopAda"]["rank_loss_per_seed"]) == 2
    assert set(record["full"]["emotions"]) == {"FullOpt", "FullAda"}
    assert record["published"]["uniform"]["emotions"] == [0.20, 0.22, 0.17, 0.16]
    # each cell is the mean of runs that are pure functions of their job
    job = tx.Job("emotions", "TopAda", 2, 2, 1, "single-swap", 0.02)
    assert (
        record["tables"]["single-swap"]["emotions"]["TopAda"]["rank_loss_per_seed"][1]
        == (tx.run_job(job)["rank_loss"])
    )


def test_reproduce_topk_results_do_not_depend_on_the_processes(tmp_path, capsys):
    records = []
    for jobs in ("1", "2"):
        out = tmp_path / f"topk{jobs}.json"
        argv = ["reproduce", "topk", "--datasets", "emotions", "--explorations", "uniform",
                "--seeds", "2", "--loops", "1", "--learners", "2", "--gammas", "0.2",
                "--no-full", "--jobs", jobs, "--no-progress", "--output", str(out)]  # fmt: skip
        assert main(argv) == 0
        records.append(json.loads(out.read_text()))
    strip = ("seconds_mean", "compile_seconds")
    cells = [
        {
            c: {k: v for k, v in s.items() if k not in strip and k != "by_gamma"}
            for c, s in r["tables"]["uniform"]["emotions"].items()
        }  # fmt: skip
        for r in records
    ]
    assert cells[0] == cells[1]


def test_reproduce_topk_grows_the_authors_trees_unless_told_otherwise(tmp_path, capsys):
    # Sec. 4: every column on the weak learners of Jung & Tewari (2018), whose code grows the port
    # of Weka's HoeffdingTree; --trees river runs every column on River's semantics instead.
    jobs = tx.plan(["emotions"], ["uniform"], 1, gammas=(0.1,))
    assert {job.column for job in jobs} == set(tx.COLUMNS)
    assert {job.trees for job in jobs} == {"weka_port"}
    assert {tx.build_model(job).committee.semantics for job in jobs} == {"weka_port"}
    river = tx.plan(["emotions"], ["uniform"], 1, gammas=(0.1,), trees="river")
    assert {tx.build_model(job).committee.semantics for job in river} == {"river"}
    out = tmp_path / "topk.json"
    argv = ["reproduce", "topk", "--datasets", "emotions", "--explorations", "single-swap",
            "--seeds", "1", "--loops", "1", "--learners", "3", "--gammas", "0.2", "--no-full",
            "--trees", "river", "--jobs", "1", "--no-progress", "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert "river trees" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["trees"] == "river"
    job = tx.Job("emotions", "TopAda", 1, 3, 1, "single-swap", 0.02, trees="river")
    got = record["tables"]["single-swap"]["emotions"]["TopAda"]["rank_loss_per_seed"]
    assert got == [tx.run_job(job)["rank_loss"]]
    with pytest.raises(SystemExit):
        main([*argv[:-2], "--trees", "moa", "--output", str(out)])
    assert "invalid choice: 'moa'" in capsys.readouterr().err


def test_reproduce_topk_skips_the_large_stream_when_it_is_absent(tmp_path, capsys, monkeypatch):
    from olboost.topk_experiments import _jobs

    absent = tmp_path / "no-shared" / "tmc2007-500"
    monkeypatch.setattr(_jobs, "default_tmc", lambda: absent)
    monkeypatch.setattr(_jobs, "_DATA", {})  # a stream loaded by another test stays loaded
    out = tmp_path / "topk.json"
    small = ["--seeds", "1", "--learners", "2", "--explorations", "uniform", "--no-full",
             "--gammas", "0.1", "--jobs", "1", "--no-progress", "--output", str(out)]  # fmt: skip
    # every row (no --datasets): the absent large stream is skipped, saying so
    assert main(["reproduce", "topk", *small]) == 0
    assert "tmc2007-500: skipped" in capsys.readouterr().out
    assert "tmc2007-500" in json.loads(out.read_text())["skipped"]
    # asked for by name it is an error ("0 runs", exit 0 before), as a directory given by hand
    argv = ["reproduce", "topk", "--datasets", "tmc2007-500", *small]
    assert main(argv) == 2
    assert str(absent) in capsys.readouterr().err
    assert main([*argv, "--tmc", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_the_large_stream_is_looked_for_beside_the_clone_from_any_directory(tmp_path, monkeypatch):
    # it was looked for beside the working directory only: from anywhere else the row was
    # skipped though the data sat beside the clone
    from olboost.topk_experiments._jobs import DEFAULT_TMC, default_tmc

    beside_clone = (Path(tx.__file__).resolve().parents[3] / DEFAULT_TMC).resolve()
    monkeypatch.chdir(tmp_path)
    if beside_clone.is_dir():
        assert default_tmc() == beside_clone
    else:
        assert default_tmc() == (tmp_path / DEFAULT_TMC).resolve()


def test_reproduce_topk_curves_writes_the_figure_and_its_numbers(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    argv = ["reproduce", "topk-curves", "--ks", "2", "14", "--seeds", "2", "--loops", "1",
            "--learners", "2", "--points", "40", "--jobs", "1", "--no-progress",
            "--output", str(png)]  # fmt: skip
    assert main(argv) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    record = json.loads(png.with_suffix(".json").read_text())
    assert record["ks"] == [2, 14] and record["exploration"] == "uniform"
    assert record["rounds_total"] == 1500 + 917 and record["test_starts_after"] == 1500
    for k in ("2", "14"):
        curve = record["curves"][k]
        rounds = np.array(curve["rounds"])
        assert len(rounds) <= 40 and rounds[0] == 1 and rounds[-1] == 1500 + 917
        assert np.all(np.diff(rounds) > 0)
        mean, std = np.array(curve["mean"]), np.array(curve["std"])
        assert mean.shape == std.shape == rounds.shape
        assert np.all((mean >= 0) & (mean <= 1)) and np.all(std >= 0)
        assert curve["final_running_mean"] == pytest.approx(mean[-1])
    # a curve is the seeds' mean running average: seed 1's run, by hand
    job = tx.Job("yeast", "TopOpt", 1, 2, 1, "uniform", 0.03, tx.CURVE_GAMMA, 14, 40)
    runs = [tx.run_job(job)["curve"], tx.run_job(replace(job, seed=2))["curve"]]
    np.testing.assert_allclose(record["curves"]["14"]["mean"], np.mean(runs, axis=0), rtol=1e-12)
    assert "final running mean" in capsys.readouterr().out


def test_reproduce_topk_curves_of_one_seed_have_no_band(tmp_path, capsys):
    # one seed stored a standard deviation of zeros, drawn as a band, and printed "± 0.0000"
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    argv = ["reproduce", "topk-curves", "--ks", "2", "--seeds", "1", "--loops", "1",
            "--learners", "2", "--points", "20", "--jobs", "1", "--no-progress", "--no-cells",
            "--output", str(png)]  # fmt: skip
    assert main(argv) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    curve = json.loads(png.with_suffix(".json").read_text())["curves"]["2"]
    assert curve["std"] is None and curve["test_rank_loss_std"] is None
    out = capsys.readouterr().out
    assert "final running mean" in out and "± 0.0000" not in out


def test_reproduce_topk_curves_options_given_as_zero_are_checked_not_replaced(tmp_path, capsys):
    for option, message in (("--rho", "rho must be in (0, 1)"), ("--loops", "loops")):
        argv = ["reproduce", "topk-curves", "--seeds", "1", "--no-progress", option, "0",
                "--output", str(tmp_path / "c.png")]  # fmt: skip
        assert main(argv) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()


def test_reproduce_topk_curves_without_matplotlib_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    argv = ["reproduce", "topk-curves", "--seeds", "1", "--no-progress", "--output",
            str(tmp_path / "c.png")]  # fmt: skip
    assert main(argv) == 2
    assert "olboost[plot]" in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()


def test_reproduce_topk_curves_refuses_a_figure_format_before_any_run(tmp_path, capsys):
    # --output curves.txt ran every run, then failed in savefig with nothing written
    pytest.importorskip("matplotlib")
    for name, said in (("c.txt", "matplotlib writes no .txt figures"), ("c", "by its suffix")):
        argv = ["reproduce", "topk-curves", "--seeds", "1", "--ks", "2", "--no-progress",
                "--no-cells", "--output", str(tmp_path / name)]  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_reproduce_topk_curves_help_describes_fig_1(capsys):
    # it showed the paragraph on Mediamill of `reproduce topk`
    with pytest.raises(SystemExit):
        main(["reproduce", "topk-curves", "--help"])
    out = capsys.readouterr().out
    assert "draws Fig. 1" in out and "Mediamill" not in out
    assert "(default: yeast" in out


def test_reproduce_topk_footnote_names_the_edges_tried():
    # it said {0.1, 0.2, 0.3, 0.4} whatever --gammas were
    from olboost.topk_experiments._tables import format_tables

    note = format_tables({"tables": {}, "full": {}}, 1, [], [0.05, 0.5])[-1]
    assert note.startswith("gamma: TopOpt's edge is the one of {0.05, 0.5} (--gammas)")


def test_reproduce_topk_tables_compare_only_the_papers_settings():
    # with --loops or --learners the tables still marked cells ok/MISS against the published
    # values and gave Table 4's speed-ups (22,499x with 3 learners against the paper's 50)
    from olboost.topk_experiments._tables import format_tables

    cell = {"rank_loss_mean": 0.5, "gamma": 0.1, "seconds_mean": 0.01}
    collected = {
        "tables": {"uniform": {"emotions": {"TopOpt": cell, "TopAda": cell}}},
        "full": {"emotions": {"FullOpt": cell, "FullAda": cell}},
    }
    paper = format_tables(collected, 1, ["emotions"])
    assert "MISS" in "\n".join(paper) and "speed-up = published / ours" in "\n".join(paper)
    speed_row = paper[paper.index(next(x for x in paper if x.startswith("\nTable 4"))) + 2]
    assert speed_row.split()[3] == "29900"  # 299 s published / 0.01 s
    smoke = format_tables(collected, 1, ["emotions"], overridden="loops 1, learners 3")
    text = "\n".join(smoke)
    assert "MISS" not in text and " ok" not in text and "speed-up =" not in text
    assert text.count("settings overridden (loops 1, learners 3)") == 2
    assert (
        len(smoke[smoke.index(next(x for x in smoke if x.startswith("\nTable 4"))) + 2].split())
        == 5
    )


def test_reproduce_topk_computes_the_potentials_as_told(tmp_path, capsys):
    # exact by default; --method monte_carlo estimates TopOpt's and FullOpt's as the authors'
    # code did, and keys those cells apart (the exact cells keep their key, so an existing
    # cache stays valid)
    exact = tx.plan(["emotions"], ["uniform"], 1, gammas=(0.1,))
    mc = tx.plan(["emotions"], ["uniform"], 1, gammas=(0.1,), method="monte_carlo")
    assert {job.method for job in exact} == {"exact"}
    assert {job.column: job.method for job in mc} == {
        "TopOpt": "monte_carlo", "TopAda": "exact", "FullOpt": "monte_carlo", "FullAda": "exact"
    }  # fmt: skip
    for job in mc:
        if job.method == "monte_carlo":
            assert tx.build_model(job).method == "monte_carlo"
            assert tx.job_key(job)["method"] == "monte_carlo"
        else:
            assert "method" not in tx.job_key(job)
    assert all("method" not in tx.job_key(job) for job in exact)
    # and the slow ones go first
    costs = [{job.column: job.cost for job in jobs} for jobs in (exact, mc)]
    assert costs[1]["TopOpt"] > 50 * costs[0]["TopOpt"] and costs[1]["TopAda"] == costs[0]["TopAda"]
    out = tmp_path / "topk.json"
    argv = ["reproduce", "topk", "--datasets", "emotions", "--explorations", "uniform",
            "--seeds", "1", "--loops", "1", "--learners", "2", "--gammas", "0.2", "--no-full",
            "--jobs", "1", "--no-progress", "--cells", str(tmp_path / "cells"),
            "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    first = json.loads(out.read_text())
    assert main([*argv, "--method", "monte_carlo"]) == 0
    assert "1 of 2 cells finished before" in capsys.readouterr().out  # TopAda's
    second = json.loads(out.read_text())
    assert (first["method"], second["method"]) == ("exact", "monte_carlo")
    table = {r["method"]: r["tables"]["uniform"]["emotions"] for r in (first, second)}
    assert table["exact"]["TopAda"] == table["monte_carlo"]["TopAda"]
    job = tx.Job("emotions", "TopOpt", 1, 2, 1, "uniform", 0.02, 0.2, method="monte_carlo")
    assert table["monte_carlo"]["TopOpt"]["rank_loss_per_seed"] == [tx.run_job(job)["rank_loss"]]


def test_the_large_streams_cells_are_keyed_by_its_files_content(tmp_path):
    # the key held the directory only: files changed in place were reused from the cells
    from olboost.cli._shared import _files_digest
    from olboost.topk_experiments._jobs import tmc_files

    job = tx.Job(tx.LARGE_STREAM, "TopAda", 1, 2, 1, "uniform", 0.05)
    files = tmc_files(tmp_path)
    for f in files:
        f.write_text("a")
    first = tx.job_key(job, str(tmp_path))
    assert first["files_sha256"] is not None and first == tx.job_key(job, str(tmp_path))
    files[2].write_text("b")
    _files_digest.cache_clear()  # as a rerun's new process starts (within one, a file kept
    # its size and modification time is read once)
    assert tx.job_key(job, str(tmp_path))["files_sha256"] != first["files_sha256"]
    assert "files_sha256" not in tx.job_key(tx.Job("emotions", "TopAda", 1, 2), str(tmp_path))


# ------------------------------------------------------------------------- simulated users


class _Recording(TopkUser):
    """The paper's user, played in Python (its clicks are overridden), recording its calls."""

    def __init__(self, k=None):
        super().__init__(k)
        self.calls = []

    def clicks(self, impression, relevant):
        self.calls.append((impression, relevant))
        return [label for label in impression.labels if label in relevant]


class _Silent(TopkUser):
    """A user who never clicks."""

    def clicks(self, impression, relevant):
        return []


@pytest.mark.parametrize("cls", BOOSTERS)
def test_the_papers_user_as_an_object_is_feedback_topk_to_the_bit(cls, emotions):
    # TopkUser() is the compiled path; _Recording, whose clicks are the same, the Python one,
    # data sets included: three ways to the same bits, train/test with loops and prequential
    runs = []
    for feedback in ("topk", TopkUser(k=3), _Recording()):
        model = _topk(cls)
        a = train_test(model, emotions.train, emotions.test, loops=2, feedback=feedback)
        b = prequential(model, emotions.test, feedback=feedback)
        runs.append((a.losses, a.train_losses, b.losses, _state(model)))
    for other in runs[1:]:
        for got, want in zip(other, runs[0], strict=True):
            if isinstance(want, bytes):
                assert got == want
            else:
                np.testing.assert_array_equal(got, want)


def test_a_user_gets_each_shown_ranking_and_the_relevant_set_in_the_models_labels(emotions):
    # a model whose labels are the data set's in another order: the user's relevant sets are
    # the model's labels, matched by name as the array path matches the columns
    names = list(reversed(emotions.label_names))
    user = _Recording()
    model = _topk(TopkAdaptive, labels=names)
    result = train_test(model, emotions.train, emotions.test, feedback=user)
    assert len(user.calls) == emotions.train.n_samples + emotions.test.n_samples
    pairs = list(emotions.train) + list(emotions.test)
    for (impression, relevant), (_, y) in zip(user.calls, pairs, strict=True):
        assert relevant == y
        assert len(impression.labels) == 3
    tail = user.calls[emotions.train.n_samples :]
    for (impression, relevant), loss in zip(tail, result.losses, strict=True):
        assert loss == pytest.approx(_shown_loss(impression.ranking, relevant), abs=1e-12)
    # the same run with the truthful compiled path, the model's labels in the data's order
    # aside: the same losses
    compiled = train_test(_topk(TopkAdaptive, labels=names), emotions.train, emotions.test)
    np.testing.assert_array_equal(compiled.losses, result.losses)


@pytest.mark.parametrize("cls", BOOSTERS)
def test_the_model_learns_the_users_clicks_and_is_scored_on_the_truth(cls, emotions):
    model = _topk(cls, labels=emotions.label_names)
    replay = model.clone()
    pairs = list(emotions.test)[:80]
    result = prequential(model, pairs, feedback=_Silent())
    for (x, y), loss in zip(pairs, result.losses, strict=True):
        impression = replay.show_one(x)
        # scored against the relevant set, not against the (empty) clicks
        assert loss == pytest.approx(_shown_loss(impression.ranking, y), abs=1e-12)
        replay.learn_one(x, impression.feedback([]))
    assert _state(model) == _state(replay)
    truthful = prequential(_topk(cls, labels=emotions.label_names), pairs, feedback="topk")
    assert not np.array_equal(truthful.losses, result.losses)


def test_a_click_on_a_label_not_shown_is_refused_naming_the_example(emotions):
    class Clumsy(TopkUser):
        def clicks(self, impression, relevant):
            hidden = [label for label in impression.ranking if label not in impression.labels]
            return hidden[:1] if impression.round == 6 else []

    model = _topk(TopkBBM)
    with pytest.raises(ValueError, match=r"train split example 5: clicked label .* was not shown"):
        train_test(model, emotions.train, emotions.test, feedback=Clumsy())
    assert model.t_ == 5  # the five examples before it were learned, the sixth not


@pytest.mark.parametrize(
    ("feedback", "k", "error", "match"),
    [
        (TopkUser(k=4), None, ValueError, "does not match the model's k=3"),
        (TopkUser(k=3), 4, ValueError, "k=4 and the user's k=3 differ"),
        (TopkUser, None, TypeError, "the class TopkUser, not a user"),
    ],
)
def test_a_user_that_does_not_fit_is_refused_before_anything_is_learned(
    feedback, k, error, match, emotions
):
    model = _topk(TopkAdaptive)
    with pytest.raises(error, match=match):
        train_test(model, emotions.train, emotions.test, feedback=feedback, k=k)
    with pytest.raises(error, match=match):
        prequential(model, emotions.test, feedback=feedback, k=k)
    assert not hasattr(model, "t_")
    full = AdaOLMR(VFDTCommittee(n_features=5), learners=3)
    with pytest.raises(ValueError, match="simulates a user of a top-k booster"):
        train_test(full, emotions.train, emotions.test, feedback=TopkUser())
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="k must be None or an integer >= 1"):
            TopkUser(k=bad)


def test_a_warm_up_leaves_the_user_alone_and_the_results_as_they_were(emotions):
    model = _topk(TopkAdaptive)
    users = [_Silent(), _Recording()]
    cold = train_test(model.clone(), emotions.train, emotions.test, feedback=users[1])
    n_calls = len(users[1].calls)
    users[1].calls.clear()
    warm = train_test(model.clone(), emotions.train, emotions.test, feedback=users[1], warm_up=True)
    assert len(users[1].calls) == n_calls  # the warm-up clone's clicks were not the user's
    assert warm.compile_seconds is not None
    np.testing.assert_array_equal(cold.losses, warm.losses)
    np.testing.assert_array_equal(cold.train_losses, warm.train_losses)
