"""Learning curves: ``olboost run --curve`` records them, ``olboost plot`` and
``olboost.plots.plot_curves`` draw them (Agg backend, no display)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from olboost import AdaOLMR, VFDTCommittee
from olboost import topk_experiments as tx
from olboost.cli import main
from olboost.datasets import load
from olboost.evaluate import train_test
from olboost.plots import curves, load_records, plot_curves, running_average

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _run(tmp_path, name, *argv):
    out = tmp_path / f"{name}.json"
    argv = ["run", "--dataset", "emotions", "--learners", "4", "--features", "5", "--no-progress",
            "--curve", "--output", str(out), *argv]  # fmt: skip
    assert main(argv) == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Records of ``olboost run --curve``: Ada.OLMR with seeds 1-3, OnlineBMR with seeds 1-2."""
    tmp = tmp_path_factory.mktemp("curves")
    records = {}
    for seed in (1, 2, 3):
        records[f"ada{seed}"] = _run(tmp, f"ada{seed}", "--seed", str(seed))
    for seed in (1, 2):
        records[f"bmr{seed}"] = _run(tmp, f"bmr{seed}", "--algorithm", "online-bmr",
                                     "--seed", str(seed))  # fmt: skip
    return tmp, records


def test_run_curve_is_the_evaluation_per_example(runs):
    _, records = runs
    record = records["ada2"]
    data = load("emotions")
    result = train_test(AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=2), data.train,
                        data.test)  # fmt: skip
    curve = np.array(record["curve"])
    assert record["curve_metric"] == "rank_loss"
    assert record["curve_test_starts_after"] == 391 and curve.size == 391 + 202
    np.testing.assert_array_equal(curve, np.concatenate([result.train_losses, result.losses]))
    np.testing.assert_array_equal(running_average(curve), result.running_losses())
    assert np.mean(curve[391:]) == record["rank_loss"]  # the test part is what rank_loss averages
    # the record's other fields are those of a run without --curve
    assert list(record)[-3:] == ["curve_metric", "curve_test_starts_after", "curve"]


def test_run_curve_multiclass_records_correctness(tmp_path):
    out = tmp_path / "mc.json"
    argv = ["run", "--algorithm", "adaboost-olm", "--dataset", "balance", "--learners", "4",
            "--no-progress", "--curve", "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    record = json.loads(out.read_text())
    curve = np.array(record["curve"])
    assert record["curve_metric"] == "correct" and record["curve_test_starts_after"] == 0
    assert set(np.unique(curve)) <= {0, 1} and curve.size == record["n_test"] == 625
    assert np.mean(curve) == record["accuracy"]
    fig = plot_curves([record])
    assert fig.axes[0].get_ylabel() == "running average accuracy"
    assert fig.axes[0].get_lines()[0].get_ydata()[-1] == pytest.approx(record["accuracy"])


def test_drawn_lines_and_bands_are_the_records_running_averages(runs):
    tmp, records = runs
    fig = plot_curves(load_records([tmp]), points=None)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label()[0] == "_"}
    assert sorted(lines) == ["ada-olmr (3 seeds)", "online-bmr (2 seeds)"]
    bands = ax.collections
    assert len(bands) == 2
    for (label, keys), band in zip(
        [("ada-olmr (3 seeds)", ["ada1", "ada2", "ada3"]),
         ("online-bmr (2 seeds)", ["bmr1", "bmr2"])],
        bands, strict=True,
    ):  # fmt: skip
        # computed here from the JSON: running average of each seed, mean and sd over seeds
        stack = np.array([np.cumsum(records[k]["curve"]) / np.arange(1, 594) for k in keys])
        mean, sd = stack.mean(axis=0), stack.std(axis=0, ddof=1)
        line = lines[label]
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 594))
        np.testing.assert_array_equal(line.get_ydata(), mean)
        (path,) = band.get_paths()
        n = mean.size  # fill_between: a start point, the lower edge, an end point, the upper edge
        np.testing.assert_array_equal(path.vertices[1 : n + 1, 0], np.arange(1, 594))
        np.testing.assert_array_equal(path.vertices[1 : n + 1, 1], mean - sd)
        np.testing.assert_array_equal(path.vertices[n + 2 : 2 * n + 2, 1], (mean + sd)[::-1])
        assert np.allclose(band.get_facecolor()[0][:3], matplotlib.colors.to_rgb(line.get_color()))
    # the test split starts after the training pass: a dotted line there
    assert any(list(v.get_xdata()) == [391, 391] for v in ax.get_lines())
    assert ax.get_title() == "emotions"


def test_points_keep_evenly_spread_rounds_of_the_same_curve(runs):
    _, records = runs
    ada = [records[k] for k in ("ada1", "ada2", "ada3")]
    full = plot_curves(ada, points=None).axes[0].get_lines()[0]
    some = plot_curves(ada, points=50).axes[0].get_lines()[0]
    rounds = np.asarray(some.get_xdata())
    assert rounds[0] == 1 and rounds[-1] == 593 and 45 <= rounds.size <= 50
    np.testing.assert_array_equal(some.get_ydata(), np.asarray(full.get_ydata())[rounds - 1])


def test_cli_plot_writes_the_image_and_says_the_final_values(runs, tmp_path, capsys):
    tmp, records = runs
    png = tmp_path / "fig.png"
    files = [str(tmp / f"{k}.json") for k in ("ada1", "ada2", "bmr1")]
    assert main(["plot", *files, "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    final = np.mean([running_average(records[k]["curve"])[-1] for k in ("ada1", "ada2")])
    assert f"ada-olmr: final running average rank_loss {final:.4f}" in out
    assert "(2 runs)" in out and "(1 runs)" in out


def test_bad_records_are_refused_with_the_reason(runs, tmp_path, capsys):
    tmp, records = runs
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({k: v for k, v in records["ada1"].items() if k != "curve"}))
    assert main(["plot", str(plain), "-o", str(tmp_path / "x.png")]) == 2
    assert "--curve" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "none.json"), "-o", str(tmp_path / "x.png")]) == 2
    assert "none.json" in capsys.readouterr().err
    with pytest.raises(ValueError, match="seed 1"):  # twice the same run: cannot be seeds
        curves([records["ada1"], records["ada1"]])
    mc = {**records["ada1"], "curve_metric": "correct", "algorithm": "x"}
    with pytest.raises(ValueError, match="different metrics"):
        curves([records["ada1"], mc])
    with pytest.raises(ValueError, match="different lengths"):
        curves([records["ada1"], {**records["ada2"], "curve": records["ada2"]["curve"][:10]}])
    # grouped by hand, two runs of one seed are two lines
    two = curves([records["ada1"], {**records["ada1"]}], group_by=lambda r: str(id(r)))
    assert len(two) == 2 and all(c.std is None for c in two)
    assert not (tmp_path / "x.png").exists()


def test_bad_files_and_outputs_are_named(runs, tmp_path, capsys):
    tmp, _ = runs
    good = str(tmp / "ada1.json")
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "broken.json").write_text('{"curve": [0.1, ')
    (folder / "latin1.json").write_bytes(b'{"algorithm": "caf\xe9"}')
    for bad in ("broken.json", "latin1.json"):
        assert main(["plot", str(folder / bad), "-o", str(tmp_path / "x.png")]) == 2
        assert f"{bad}: not a JSON record" in capsys.readouterr().err
    assert main(["plot", str(folder), "-o", str(tmp_path / "x.png")]) == 2
    assert "broken.json" in capsys.readouterr().err  # a directory's files are named too
    # the figure goes where -o says, or nowhere
    assert main(["plot", good, "-o", str(folder)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["plot", good, "-o", str(tmp_path / "figure")]) == 2
    assert "suffix" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists() and not list(tmp_path.glob("figure*"))


_TOY = {"algorithm": "ada-olmr", "dataset": "toy", "seed": 1, "curve_metric": "rank_loss"}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # the figure was written, then an IndexError
        (
            {"curve_test_starts_after": 0, "curve": []},
            "curve must be a non-empty list of finite numbers, got []",
        ),
        # "object of type 'int' has no len()", naming neither the file nor the field
        ({"curve": 5}, "curve must be a non-empty list of finite numbers, got 5"),
        ({"curve": {"0": 0.5}}, "curve must be a non-empty list"),
        ({"curve": [0.5, "0.5"]}, 'curve[1] must be a finite number, got "0.5"'),
        ({"curve": [0.5, None]}, "curve[1] must be a finite number, got null"),
        ({"curve": [0.5, True]}, "curve[1] must be a finite number, got true"),
        ({"curve": [0.5, float("nan")]}, "curve[1] must be a finite number, got nan"),
        ({"curve": [float("inf"), 0.5]}, "curve[0] must be a finite number, got inf"),
        ({"curve": [0.5, 10**400]}, "curve[1] must be a finite number, got 1000"),
        ({"curve": [1, 0], "curve_metric": ["rank_loss"]}, "curve_metric must be a string"),
        # an OverflowError: cannot convert float infinity to integer
        (
            {"curve": [0.5, 0.5], "curve_test_starts_after": float("inf")},
            "curve_test_starts_after must be an integer from 0 to the curve's length 2, got inf",
        ),
        (
            {"curve": [0.5, 0.5], "curve_test_starts_after": 3},
            "curve_test_starts_after must be an integer from 0 to the curve's length 2, got 3",
        ),
        (
            {"curve": [0.5, 0.5], "curve_test_starts_after": -1},
            "curve_test_starts_after must be an integer from 0 to the curve's length 2, got -1",
        ),
        (
            {"curve": [0.5, 0.5], "curve_test_starts_after": 1.5},
            "curve_test_starts_after must be an integer from 0 to the curve's length 2, got 1.5",
        ),
        (
            {"curve": [0.5, 0.5], "curve_test_starts_after": "1"},
            'curve_test_starts_after must be an integer from 0 to the curve\'s length 2, got "1"',
        ),
    ],
)
def test_malformed_curve_fields_are_one_line_naming_the_file_and_field_and_draw_nothing(
    tmp_path, capsys, fields, message
):
    record = {**_TOY, **fields}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))  # NaN and Infinity as Python's json writes them
    png = tmp_path / "fig.png"
    assert main(["plot", str(path), "-o", str(png)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"olboost: error: {path}: {message}"), captured.err
    assert len(captured.err.splitlines()) == 1
    assert not png.exists()
    # a directory's file is named too, and the API names the record's index
    assert main(["plot", str(tmp_path), "-o", str(png)]) == 2
    assert capsys.readouterr().err.startswith(f"olboost: error: {path}: {message}")
    good = {**_TOY, "seed": 2, "curve": [0.5, 0.5]}
    with pytest.raises(ValueError) as err:
        curves([good, record])
    assert str(err.value).startswith(f"record 1 (ada-olmr on toy (seed 1)): {message}")
    assert not png.exists()


def test_curve_fields_as_olboost_run_writes_them_still_draw(runs, tmp_path):
    # the limits are those of real records: 0 (prequential), a test split starting after the
    # training passes, a curve of one round, correctness as 0 and 1
    _, records = runs
    assert records["ada1"]["curve_test_starts_after"] == 391
    fine = [
        records["ada1"],
        {**_TOY, "curve": [1], "curve_test_starts_after": 0},
        {**_TOY, "curve": [0.5, 0.5], "curve_test_starts_after": 2},
        {**_TOY, "curve": [1, 0, 1.0], "curve_metric": "correct"},
        {**_TOY, "curve": [0.5, 0], "curve_test_starts_after": None},
    ]
    for record in fine:
        path = tmp_path / "r.json"
        path.write_text(json.dumps(record))
        assert main(["plot", str(path), "-o", str(tmp_path / "fig.png")]) == 0


def test_run_curve_refused_on_enron_foldering(capsys):
    argv = ["run", "--algorithm", "label-ranker", "--dataset", "sanders-r", "--curve"]
    assert main(argv) == 2
    assert "--curve" in capsys.readouterr().err


def test_plot_without_matplotlib_names_the_extra(runs, tmp_path, capsys, monkeypatch):
    tmp, _ = runs
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert main(["plot", str(tmp), "-o", str(tmp_path / "x.png")]) == 2
    assert "olboost[plot]" in capsys.readouterr().err
    with pytest.raises(ImportError, match=r"olboost\[plot\]"):
        plot_curves([{"curve": [0.5], "seed": 1}])
    assert not (tmp_path / "x.png").exists()


def test_fig1_of_the_topk_paper_is_drawn_by_the_same_code(tmp_path):
    """``reproduce topk-curves`` draws its record's numbers: the mean and the band of each k."""
    rounds = [1, 5, 10]
    record = {
        "dataset": "yeast", "learners": 2, "rho": 0.03, "gamma": 0.4, "loops": 1, "seeds": 2,
        "test_starts_after": 6,
        "curves": {
            "2": {"rounds": rounds, "mean": [0.5, 0.4, 0.3], "std": [0.1, 0.05, 0.02]},
            "14": {"rounds": rounds, "mean": [0.6, 0.5, 0.45], "std": [0.0, 0.01, 0.03]},
        },
    }  # fmt: skip
    fig = tx.plot_curves(record, tmp_path / "fig1.png")
    assert (tmp_path / "fig1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if line.get_label() in ("k = 2", "k = 14")]
    for line, band, (k, c) in zip(lines, ax.collections, record["curves"].items(), strict=True):
        assert line.get_label() == f"k = {k}"
        np.testing.assert_array_equal(line.get_xdata(), rounds)
        np.testing.assert_array_equal(line.get_ydata(), c["mean"])
        low = band.get_paths()[0].vertices[1:4, 1]
        np.testing.assert_array_equal(low, np.subtract(c["mean"], c["std"]))
    assert any(list(v.get_xdata()) == [6, 6] for v in ax.get_lines())


def test_a_sweep_record_and_a_run_record_of_one_configuration_are_one_line(runs, tmp_path):
    # olboost run records every option of its algorithm; plots grouped a sweep's records by
    # its task's params, which olboost run's records lack: the same configuration drew two
    # lines, and the legend repeated the params (learners=4, features=5, learners=4)
    _, records = runs
    for key in ("predict_with", "gamma", "bmr_loss", "method"):
        assert key in (records["ada1"] if key == "predict_with" else records["bmr1"])
    task = {"id": "0" * 16, "algorithm": "ada-olmr", "dataset": "emotions", "seed": 2,
            "params": {"features": 5, "learners": 4}, "curve": True}  # fmt: skip
    swept = {**records["ada2"], "sweep_task": task}
    lines = curves([records["ada1"], swept])
    assert [(c.label, c.runs) for c in lines] == [("ada-olmr", 2)]
    other = {**records["ada2"], "predict_with": "best", "seed": 2}
    labels = sorted(c.label for c in curves([records["ada1"], other]))
    assert labels == ["ada-olmr (predict_with=best)", "ada-olmr (predict_with=sampled)"]


def test_plot_options_are_checked_naming_them(runs, tmp_path, capsys):
    tmp, records = runs
    good = str(tmp / "ada1.json")
    out = tmp_path / "x.png"
    for dpi in ("0", "100000"):
        assert main(["plot", good, "-o", str(out), "--dpi", dpi]) == 2
        assert "--dpi must be in [1, 1200]" in capsys.readouterr().err
    assert main(["plot", good, "-o", str(out), "--title", "$\\foo$"]) == 2
    assert "--title '$\\\\foo$': matplotlib cannot draw its math text" in capsys.readouterr().err
    assert not out.exists()
    assert main(["plot", good, "-o", str(out), "--title", "$\\alpha$ costs \\$5"]) == 0
    no_dataset = {k: v for k, v in records["ada1"].items() if k != "dataset"}
    assert plot_curves([no_dataset]).axes[0].get_title() == ""


def test_names_from_the_records_are_drawn_as_written(runs, tmp_path):
    """A ``$`` in a data set's name (the default title) or an option's value (a legend entry)
    is no math: a name like ``prices$_$2024`` made saving fail with matplotlib's parser
    error, and ``olboost plot`` with it."""
    tmp, records = runs
    named = [
        {**records["bmr1"], "dataset": "/data/prices$_$2024.arff", "gamma": "$\\foo$"},
        {**records["bmr2"], "dataset": "/data/prices$_$2024.arff", "gamma": 0.5},
    ]
    named = [{**r, "curve_metric": "cost_$_usd_$"} for r in named]  # the y label's name
    fig = plot_curves(named)
    fig.savefig(tmp_path / "named.png")  # math text is parsed when drawn
    ax = fig.axes[0]
    assert ax.get_title() == "/data/prices\\$_\\$2024.arff"
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("gamma=\\$\\foo\\$" in t for t in texts), texts
    for path in (tmp_path / "a.json", tmp_path / "b.json"):
        path.write_text(json.dumps(named[path.stem == "b"]))
    assert main(["plot", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "-o", str(tmp_path / "cli.png")]) == 0  # fmt: skip
    assert (tmp_path / "cli.png").stat().st_size > 0


# ------------------------------------------------------------------ mutation round 4's kills


def test_the_test_split_starts_after_every_loop_of_the_train_split():
    from olboost.plots import curve_fields

    data = load("emotions")
    model = AdaOLMR(VFDTCommittee(n_features=5), learners=2, seed=1)
    fields = curve_fields(train_test(model, data.train, data.test, loops=2))
    n_train = len(data.train.Y)
    assert fields["curve_test_starts_after"] == 2 * n_train
    assert len(fields["curve"]) == 2 * n_train + len(data.test.Y)


def test_the_title_names_the_data_set_only_when_every_record_shares_it():
    a = {"algorithm": "ada-olmr", "dataset": "emotions", "seed": 1, "curve": [1.0, 0.0, 0.5]}
    b = {"algorithm": "ada-olmr", "dataset": "yeast", "seed": 1, "curve": [0.0, 0.0, 0.5]}
    assert plot_curves([a, b]).axes[0].get_title() == ""
    assert "emotions" in plot_curves([a, {**a, "seed": 2}]).axes[0].get_title()


def test_plot_prints_the_sd_over_seeds_at_the_last_round(tmp_path, capsys):
    # running averages 0, 0.5, 2/3, 0.75 and 1, 0.5, 1/3, 0.25: sd at the last round
    # |0.75 - 0.25| / sqrt(2) = 0.3536 (at the first, 0.7071)
    for seed, curve in ((1, [0.0, 1.0, 1.0, 1.0]), (2, [1.0, 0.0, 0.0, 0.0])):
        record = {"algorithm": "ada-olmr", "dataset": "toy", "seed": seed, "curve": curve}
        (tmp_path / f"r{seed}.json").write_text(json.dumps(record))
    assert main(["plot", str(tmp_path), "-o", str(tmp_path / "f.png")]) == 0
    assert "0.5000 ± 0.3536 (2 runs)" in capsys.readouterr().out


def test_sampled_rounds_are_spread_evenly_to_the_nearest_round():
    from olboost.plots import sample_rounds

    assert sample_rounds(11, 4).tolist() == [1, 4, 8, 11]  # linspace: 1, 4.33, 7.67, 11


def test_two_runs_of_one_seed_that_no_record_tells_apart_are_refused(runs, tmp_path, capsys):
    # the command said "pass group_by", an argument of the Python function only
    tmp, records = runs
    with pytest.raises(ValueError, match=r"more than one run with seed 1.*\(pass group_by, or"):
        curves([records["ada1"], records["ada1"]])
    twin = tmp_path / "twin.json"
    twin.write_text(json.dumps(records["ada1"]))
    argv = ["plot", str(tmp / "ada1.json"), str(twin), "-o", str(tmp_path / "f.png")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "more than one run with seed 1" in err and "(plot them separately)" in err, err
    assert "group_by" not in err and not (tmp_path / "f.png").exists()
