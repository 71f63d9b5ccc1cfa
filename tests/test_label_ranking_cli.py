"""``olboost run --algorithm label-ranker`` and ``olboost reproduce label-ranking`` (Table 1 of
Shalev-Shwartz & Singer 2007). The runs on real e-mail need the shared Enron foldering archives
(``../shared/datasets/enron_foldering``) and are skipped without them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from olboost import ranking_experiments as rx
from olboost.cli import main
from olboost.datasets import enron, load, load_enron_foldering
from olboost.evaluate import train_test
from olboost.rankers import LabelRanker, ranking_mistakes

ENRON = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "enron_foldering"

#: These tests read the shared data where the library looks for it by default (conftest.py).
pytestmark = pytest.mark.shared_data

needs_enron = pytest.mark.skipif(
    not (ENRON / "sanders-r.mbox.tar.xz").is_file()
    or not (ENRON / "williams-w3.mbox.tar.xz").is_file(),
    reason=f"the shared Enron foldering archives are not in {ENRON} (not bundled)",
)


@needs_enron
@pytest.mark.parametrize(
    ("update", "complexity", "options", "dataset"),
    [
        ("III", "entropy", [], str(ENRON / "sanders-r.mbox.tar.xz")),
        (
            "II",
            "squared",
            ["--C", "0.05", "--margin", "2", "--fields", "Subject", "From"],
            "sanders-r",
        ),
    ],
)
def test_run_reports_the_mistakes_ranking_mistakes_counts(
    tmp_path, capsys, update, complexity, options, dataset
):
    out = tmp_path / "r.json"
    argv = ["run", "--algorithm", "label-ranker", "--update", update, "--complexity", complexity]
    code = main([*argv, *options, "--dataset", dataset, "--seed", "3", "--output", str(out)])
    assert code == 0
    record = json.loads(out.read_text())
    C, margin = (0.05, 2.0) if options else rx.HYPERPARAMETERS[complexity]
    assert (record["update"], record["complexity"], record["C"], record["margin"]) == (
        update, complexity, C, margin,
    )  # fmt: skip
    fields = ("Subject", "From") if options else rx.FIELDS
    assert record["fields"] == list(fields)
    stream = load_enron_foldering("sanders-r", ENRON, fields=fields)
    model = LabelRanker(update=update, complexity=complexity, C=C, margin=margin, seed=3)
    wrong = ranking_mistakes(model.score_then_learn(stream.X, stream.Y), stream.Y)
    assert record["mistakes"] == int(wrong.sum())
    assert record["mistake_percent"] == pytest.approx(100.0 * wrong.mean(), abs=1e-12)
    assert record["n_messages"] == 1188 and record["n_labels"] == 30
    column = rx.COLUMNS.index((complexity, update))
    assert record["published_percent"] == rx.PUBLISHED["sanders-r"][column]
    assert ("pdip" in record) == (update == "III")
    printed = capsys.readouterr().out
    assert f"{record['mistake_percent']:.2f}% online mistakes" in printed


@needs_enron
def test_reproduce_one_user_prints_the_table_beside_the_published_numbers(tmp_path, capsys):
    out = tmp_path / "t.json"
    argv = ["reproduce", "label-ranking", "--path", str(ENRON), "--users", "williams-w3"]
    assert main([*argv, "--output", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("williams-w3"))
    assert row.split()[1:3] == ["18", "2769"]
    published = ["5.0", "4.5", "4.4", "4.2", "3.4", "3.1"]
    assert [cell.strip("()") for cell in row.split()[4::2]] == published
    assert "Table 1" in printed and "Targets (issue 13)" in printed
    assert "messages/s" in printed and "interior point" in printed

    record = json.loads(out.read_text())
    assert record["users"] == ["williams-w3"]
    assert record["hyperparameters"] == {
        c: {"C": C, "margin": m} for c, (C, m) in rx.HYPERPARAMETERS.items()
    }
    keys = [f"{c} {u}" for c, u in rx.COLUMNS]
    assert list(record["published"]["williams-w3"].values()) == list(rx.PUBLISHED["williams-w3"])
    cells = record["results"]["williams-w3"]
    assert list(cells) == keys
    ours = [cells[k]["percent"] for k in keys]
    assert [f"{v:.1f}" for v in ours] == row.split()[3::2]
    for key in keys:
        cell = cells[key]
        assert cell["messages"] == 2769
        assert cell["percent"] == pytest.approx(100 * cell["mistakes"] / 2769)
        assert ("pdip" in cell) == key.endswith("III")
        assert record["speed"][key]["messages"] == 2769
    targets = record["targets"]
    assert targets["complete"] is False and targets["all_met"] is None
    assert all(t["met"] is None for t in targets["updates_ordered"].values())
    means = targets["column_means"]
    assert [means[k]["published"] for k in keys] == pytest.approx(rx.PUBLISHED["williams-w3"])
    assert [means[k]["ours"] for k in keys] == pytest.approx(ours)


def test_missing_data_exits_2_saying_to_pass_path(tmp_path, capsys, monkeypatch):
    nowhere = tmp_path / "nowhere"
    assert main(["reproduce", "label-ranking", "--path", str(nowhere)]) == 2
    assert "--path" in capsys.readouterr().err
    assert main(["reproduce", "label-ranking", "--path", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds no archive for beck-s" in err and "--path" in err
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    assert main(["reproduce", "label-ranking", "--path", str(a_file)]) == 2
    assert "a file, not a directory" in capsys.readouterr().err
    # a directory named like an archive is no user; a directory without archives says so
    (tmp_path / "ghost.mbox.tar.xz").mkdir()
    assert main(["run", "--algorithm", "label-ranker", "--dataset", str(tmp_path)]) == 2
    assert "nor a directory holding <user>.mbox.tar.xz" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match=r"users in .*: none\)"):
        load_enron_foldering("nobody", tmp_path)
    # no --path and no shared data beside the clone or the working directory
    monkeypatch.setattr(enron, "_SHARED", Path("..") / "no-such-dir" / "enron_foldering")
    assert main(["reproduce", "label-ranking", "--users", "sanders-r"]) == 2
    err = capsys.readouterr().err
    assert "not part of the package" in err and "pass --path DIR" in err
    assert main(["run", "--algorithm", "label-ranker", "--dataset", "sanders-r"]) == 2
    err = capsys.readouterr().err  # run takes no --path: it was advised there (read on stdout)
    assert "pass --dataset DIR" in err and "--path" not in err
    argv = ["reproduce", "label-ranking", "--path", str(ENRON), "--fields", "X-Folder"]
    if ENRON.is_dir():  # a field that names the folder is refused before anything runs
        assert main(argv) == 2
        assert "x-folder" in capsys.readouterr().err.lower()


def test_run_on_mulan_data_is_the_train_test_protocol(tmp_path):
    out = tmp_path / "m.json"
    argv = ["run", "--algorithm", "label-ranker", "--dataset", "emotions", "--no-progress"]
    assert main([*argv, "--update", "II", "--C", "0.1", "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert "learners" not in record and record["protocol"] == "train_test"
    assert (record["update"], record["complexity"], record["C"]) == ("II", "squared", 0.1)
    assert record["scale"] == "minmax"  # MULAN data's default
    data = load("emotions")
    margin = rx.HYPERPARAMETERS["squared"][1]
    model = LabelRanker(
        update="II", complexity="squared", C=0.1, margin=margin, scale="minmax", seed=1
    )
    assert record["rank_loss"] == train_test(model, data.train, data.test).rank_loss


def test_count_notes_name_the_missing_kitchen_folder():
    note = rx.count_note(SimpleNamespace(user="kitchen-l", n_samples=3931, n_labels=46))
    assert note is not None and "3,931 messages in 46 folders" in note
    assert "4,015 in 47" in note and "_americas.sec_media" in note
    assert rx.count_note(SimpleNamespace(user="beck-s", n_samples=1971, n_labels=101)) is None


def _table(percents: dict[str, list[float]]) -> dict:
    return {
        user: {
            f"{c} {u}": {"mistakes": int(round(10 * p)), "percent": p}
            for (c, u), p in zip(rx.COLUMNS, row, strict=True)
        }
        for user, row in percents.items()
    }


def test_targets_count_users_and_compare_means():
    table = _table({u: list(p) for u, p in rx.PUBLISHED.items()})
    targets = rx.check_targets(table)
    assert targets["complete"] and targets["all_met"]
    assert targets["updates_ordered"]["squared"]["users"] == 7
    # two users with Update III behind II under the entropy; three with squared ahead on II
    worse = {u: list(p) for u, p in rx.PUBLISHED.items()}
    for user in ("beck-s", "farmer-d"):
        worse[user][5] = worse[user][4] + 1.0
    for user in ("lokay-m", "sanders-r", "kitchen-l"):
        worse[user][1] = worse[user][4] - 0.5
    targets = rx.check_targets(_table(worse))
    ordered = targets["updates_ordered"]["entropy"]
    assert (ordered["users"], ordered["met"]) == (5, False)
    assert ordered["failing"] == ["beck-s", "farmer-d"]
    ahead = targets["entropy_ahead"]["II"]
    assert (ahead["users"], ahead["met"]) == (4, False)
    assert targets["entropy_ahead"]["III"]["met"] is True
    # a column mean 3 points above the published one is still within the target; more is not
    shifted = {u: [v + (3.0 if j == 0 else 3.2 if j == 3 else 0.0) for j, v in enumerate(p)]
               for u, p in rx.PUBLISHED.items()}  # fmt: skip
    means = rx.check_targets(_table(shifted))["column_means"]
    assert means["squared I"]["met"] and not means["entropy I"]["met"]
    assert means["entropy I"]["difference"] == pytest.approx(3.2)
    assert np.isclose(means["squared II"]["difference"], 0.0)


needs_all_enron = pytest.mark.skipif(
    not all((ENRON / f"{user}.mbox.tar.xz").is_file() for user in rx.PUBLISHED),
    reason=f"the seven shared Enron foldering archives are not in {ENRON} (not bundled)",
)


@needs_all_enron
def test_table_1_meets_the_targets_it_is_known_to_meet():
    # The whole table as `olboost reproduce label-ranking` runs it (the words of FIELDS, the
    # chosen HYPERPARAMETERS, seed 1: deterministic), against issue 13's targets themselves:
    # every column mean within 3 points of the published one or better, Updates III <= II <= I
    # on 6 of 7 users under both complexities, entropy <= squared on 5 of 7 users for Updates I
    # and II. (For Update III it is 4 of 7 here, which misses the target; not asserted.)
    streams, _ = rx.load_streams(rx.PUBLISHED, ENRON)
    targets = rx.check_targets(rx.run_table(streams))
    assert targets["complete"]
    assert all(t["met"] for t in targets["column_means"].values()), targets["column_means"]
    assert all(t["met"] for t in targets["updates_ordered"].values()), targets["updates_ordered"]
    ahead = targets["entropy_ahead"]
    assert ahead["I"]["met"] and ahead["II"]["met"], ahead


def test_run_on_mulan_data_scales_the_features_by_default(tmp_path, capsys):
    """On MULAN data (attributes each on its own scale) ``--scale`` defaults to ``minmax``: on
    *emotions* Update I unscaled ranks worse than the labels' frequencies (0.50, against 0.43
    on the test split), min-max scaled it gets 0.29 (0.24 under the entropy), standardised
    0.22. The record says the scaling, and equals the model built by hand, bit for bit."""
    data = load("emotions")
    runs = {}
    for options in ([], ["--scale", "none"], ["--scale", "standard"], ["--complexity", "entropy"]):
        out = tmp_path / f"r{len(runs)}.json"
        argv = ["run", "--algorithm", "label-ranker", "--update", "I", "--dataset", "emotions"]
        assert main([*argv, *options, "--no-progress", "--output", str(out)]) == 0
        record = json.loads(out.read_text())
        runs[" ".join(options)] = record
        complexity = record["complexity"]
        C, margin = rx.HYPERPARAMETERS[complexity]
        model = LabelRanker(
            update="I", complexity=complexity, C=C, margin=margin, scale=record["scale"], seed=1
        )
        result = train_test(model, data.train, data.test)
        assert record["rank_loss"] == result.rank_loss
    assert runs[""]["scale"] == "minmax" and runs["--complexity entropy"]["scale"] == "minmax"
    assert runs["--scale none"]["scale"] == "none"
    raw = runs["--scale none"]["rank_loss"]
    # 0.29, 0.22 and 0.24 against 0.50: gaps far above the updates' and seeds' spread
    for options in ("", "--scale standard", "--complexity entropy"):
        assert runs[options]["rank_loss"] < raw - 0.15, options
    said = capsys.readouterr().out
    # every summary names its scale: an unscaled run's said nothing, read as the default's
    assert said.count("scale minmax") == 2 and said.count("scale none") == 1, said


def test_scene_loss_of_the_protocol_is_tracking_label_runs():
    # what ranker_scale's docstring says of scene: its test split comes in runs of one label set,
    # which a ranker learning through it tracks (loss 0.0086); frozen after the train split it
    # is not far from label frequency. Gaps of 0.4 and 0.05 against the run-to-run spread of
    # one deterministic ranker (none: Update III draws nothing)
    from olboost.metrics import rank_loss

    data = load("scene")
    Y = np.asarray(data.test.Y, dtype=bool)
    assert int(np.sum(np.any(Y[1:] != Y[:-1], axis=1))) == 166 and Y.shape[0] == 1196
    C, margin = rx.HYPERPARAMETERS["squared"]
    tracked = LabelRanker(update="III", C=C, margin=margin, scale="minmax", seed=1)
    assert train_test(tracked, data.train, data.test).rank_loss < 0.01
    frozen = LabelRanker(update="III", C=C, margin=margin, scale="minmax", seed=1)
    frozen.learn(data.train.X, data.train.Y)
    loss = np.mean([rank_loss(s, y) for s, y in zip(frozen.score(data.test.X), Y, strict=True)])
    frequency = np.asarray(data.train.Y, dtype=float).mean(axis=0)
    baseline = np.mean([rank_loss(frequency, y) for y in Y])
    assert round(loss, 2) == 0.44 and round(baseline, 2) == 0.49
    assert loss > 0.4 and baseline - loss < 0.1


def test_scale_is_refused_on_enron_data_and_kept_by_checkpoints(tmp_path, capsys):
    (tmp_path / "sanders-r.mbox.tar.xz").write_bytes(b"")
    argv = ["run", "--algorithm", "label-ranker", "--dataset", str(tmp_path), "--no-progress"]
    assert main([*argv, "--scale", "standard"]) == 2
    err = capsys.readouterr().err
    assert "--scale standard: Enron foldering data are read as they are" in err
    # a run checkpointed without --scale ran min-max scaled: resumed as such, not unscaled
    ckpt = tmp_path / "ranker.olb"
    argv = ["run", "--algorithm", "label-ranker", "--dataset", "emotions", "--no-progress",
            "--checkpoint", str(ckpt), "--checkpoint-every", "200"]  # fmt: skip
    assert main(argv) == 0
    assert main([*argv, "--scale", "minmax", "--resume"]) == 0
    assert "resuming from" in capsys.readouterr().err
    assert main([*argv, "--scale", "none", "--resume"]) == 2
    assert "(scale 'minmax' there, 'none' here)" in capsys.readouterr().err
