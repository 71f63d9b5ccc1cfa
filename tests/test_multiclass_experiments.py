"""The multiclass experiments of Jung, Goetz & Tewari 2017 (Tables 3-5) and their targets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from olboost import experiments as ex
from olboost.boosters import BestTree
from olboost.cli import main
from olboost.datasets import load_uci
from olboost.evaluate import prequential
from olboost.weak import VFDTCommittee
from protocol import seed_values

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
HAR = SHARED / "puc_rio_har" / "dataset-har-PUC-Rio-ugulino.csv.gz"


def test_published_tables_are_complete():
    for table in ("final20", "full", "seconds"):
        assert set(ex.PUBLISHED[table]) == {
            "balance",
            "mice",
            "car",
            "mushroom",
            "nursery",
            "isolet",
            "movement",
        }
        for row in ex.PUBLISHED[table].values():
            assert list(row) == list(ex.COLUMNS)
    assert ex.PUBLISHED["final20"]["nursery"]["AdaOLM"] == 0.966
    assert ex.PUBLISHED["full"]["movement"]["MB .05"] == 0.973


def test_nursery_has_the_papers_four_classes():
    data = ex.load_experiment_data("nursery")
    assert data.n_classes == 4 and data.n_samples == 12960
    assert ex.load_experiment_data("isolet") is None
    assert ex.load_experiment_data("movement") is None  # no path given


def test_best_tree_columns_are_hindsight_oracles():
    data = load_uci("balance")
    run = ex.run_column("DT", data, 3, learners=8)
    # the whole-stream figure is the best tree's prequential accuracy on reordering 3
    model = BestTree(VFDTCommittee(n_features=20), learners=8, seed=3)
    prequential(model, data.shuffled(3))
    assert run.accuracy == pytest.approx(model.best_accuracy_in_hindsight_)
    assert run.accuracy == pytest.approx(model.accuracies_.max())
    # the final-20% figure maximises over trees separately, so it is at least that tree's
    cut = int(0.8 * data.n_samples)
    stream = data.shuffled(3)
    again = BestTree(VFDTCommittee(n_features=20), learners=8, seed=3)
    votes = again.predict_then_learn(stream.X, np.asarray(stream.class_names)[stream.y])
    assert run.accuracy_last20 >= np.mean(np.argmax(votes[cut:], axis=1) == stream.y[cut:]) - 1e-12


def test_reproduce_multiclass_cli(tmp_path, capsys):
    out = tmp_path / "mc.json"
    code = main(
        [
            "reproduce",
            "multiclass",
            "--reorderings",
            "2",
            "--datasets",
            "balance",
            "--columns",
            "AdaOLM",
            "MB .1",
            "--learners",
            "5",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "Table 3" in text and "Table 5" in text
    record = json.loads(out.read_text())
    got = record["results"]["balance"]["AdaOLM"]
    assert got["reorderings"] == 2 and 0.3 < got["accuracy_last20"] <= 1.0


def test_reproduce_multiclass_computes_the_mb_potentials_as_told(tmp_path, capsys):
    # exact by default; --method monte_carlo estimates them as the paper did (App. E), keys
    # those cells apart and leaves the columns without potentials as they were
    argv = ["reproduce", "multiclass", "--reorderings", "1", "--datasets", "balance",
            "--columns", "AdaOLM", "MB .1", "--learners", "5", "--no-progress",
            "--cells", str(tmp_path / "cells"), "--output", str(tmp_path / "mc.json")]  # fmt: skip
    assert main(argv) == 0
    exact = json.loads((tmp_path / "mc.json").read_text())
    assert main([*argv, "--method", "monte_carlo"]) == 0
    printed = capsys.readouterr().out
    assert "1 of 2 cells finished before" in printed  # AdaOLM's
    assert "[1 reorderings, Monte Carlo potentials]" in printed
    mc = json.loads((tmp_path / "mc.json").read_text())
    assert (exact["method"], mc["method"]) == ("exact", "monte_carlo")
    data = ex.load_experiment_data("balance")
    by_hand = ex.run_column("MB .1", data, 1, learners=5, method="monte_carlo", warm_up=False)
    assert mc["results"]["balance"]["MB .1"]["accuracy"] == by_hand.accuracy
    assert by_hand.accuracy != ex.run_column("MB .1", data, 1, learners=5, warm_up=False).accuracy
    ada = [record["results"]["balance"]["AdaOLM"]["accuracy"] for record in (exact, mc)]
    assert ada[0] == ada[1]


def test_reproduce_multiclass_skips_default_rows_it_cannot_run_and_refuses_named_ones(
    tmp_path, capsys
):
    # named, a row that cannot run was a "skipped" line and exit 0 (reproduce topk's rule: an
    # error if named, skipped in the default set); nothing is run or written
    out = tmp_path / "mc.json"
    quick = ["--reorderings", "1", "--columns", "AdaOLM", "--learners", "2", "--no-cells"]
    for named, message in (("isolet", "not available here"), ("movement", "needs --har PATH")):
        argv = ["reproduce", "multiclass", "--datasets", "balance", named, "--output", str(out)]
        assert main([*argv, *quick]) == 2
        assert f"--datasets {named}: {message}" in capsys.readouterr().err
        assert not out.exists()
    assert main(["reproduce", "multiclass", *quick, "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "isolet: skipped (not available here)" in text
    assert "movement: skipped (pass --har PATH to include it)" in text
    record = json.loads(out.read_text())
    assert record["results"]["isolet"] == {"missing": "not available here"}
    assert record["results"]["nursery"]["AdaOLM"]["reorderings"] == 1


# Issue #4 targets: Adaboost.OLM with 100 VFDT, accuracy on the final 20% of the stream, mean over
# the paper's 27 reorderings, within 0.02 of the published value or better (Table 3).
OLM_TARGETS = {"balance": 0.754, "car": 0.930, "mice": 0.561, "mushroom": 1.000, "nursery": 0.966}


@pytest.mark.protocol
@pytest.mark.parametrize("name", list(OLM_TARGETS))
def test_adaboost_olm_accuracy_over_27_reorderings(name, request):
    data = ex.load_experiment_data(name)
    accuracies = seed_values(
        request.node.nodeid,
        range(1, 28),
        lambda r: ex.run_column("AdaOLM", data, r).accuracy_last20,
    )
    assert np.mean(accuracies) >= OLM_TARGETS[name] - 0.02, accuracies


# Issue #4 targets for OnlineMBBM: the best over the paper's edges within 0.02 of the published
# best on the final 20% (Table 3), mean over 27 reorderings. Any one edge meeting it shows that the
# best does; the edge tested is the one we found best when the targets were set (on mice .3 is
# now ahead, 0.689 against 0.683, since tied expected costs are ties): (edge, published best).
MBBM_TARGETS = {
    "balance": ("MB .1", 0.821),
    "mushroom": ("MB .3", 1.000),
    "mice": ("MB .1", 0.695),
    "nursery": ("MB .3", 0.969),
    "car": ("MB .3", 0.914),
}


@pytest.mark.protocol
@pytest.mark.parametrize("name", list(MBBM_TARGETS))
def test_online_mbbm_accuracy_over_27_reorderings(name, request):
    column, published = MBBM_TARGETS[name]
    data = ex.load_experiment_data(name)
    accuracies = seed_values(
        request.node.nodeid,
        range(1, 28),
        lambda r: ex.run_column(column, data, r).accuracy_last20,
    )
    assert np.mean(accuracies) >= published - 0.02, accuracies


# Movement (PUC-Rio HAR), one reordering (the paper used 9): the final 20% holds 33,127 examples,
# so the accuracy of a single pass has a standard error below 0.002, far inside the 0.02
# tolerance. (column, published value: Adaboost.OLM's, and the best MBBM's, at MB .05.)
# A protocol test with one reordering: make test reruns the stream's first MOVEMENT_HEAD rows
# (a tenth), whose accuracy must equal the recorded one, and checks the target on the recorded
# final-20% accuracy; make accuracy runs both (tests/protocol.py).
MOVEMENT_HEAD = 16_000


class _Head:
    """The first ``n`` rows of each reordering of ``data``: what a run over the whole reordering
    sees first (run_column reorders the data it is given)."""

    def __init__(self, data, n):
        self.data, self.n = data, n

    def shuffled(self, reordering):
        return self.data.shuffled(reordering).head(self.n)


@pytest.mark.protocol
@pytest.mark.parametrize(("column", "published"), [("AdaOLM", 0.962), ("MB .1", 0.988)])
def test_accuracy_on_movement(column, published, request):
    if not HAR.exists():
        pytest.skip(f"{HAR} not found: the PUC-Rio HAR file is only in the dev tree")
    data = ex.load_experiment_data("movement", str(HAR))
    head = f"accuracy of the first {MOVEMENT_HEAD}"

    def run(part):
        if part == head:
            return ex.run_column(column, _Head(data, MOVEMENT_HEAD), 1).accuracy
        return ex.run_column(column, data, 1).accuracy_last20

    _, last20 = seed_values(request.node.nodeid, [head, "accuracy_last20"], run, rerun=head)
    assert last20 >= published - 0.02
