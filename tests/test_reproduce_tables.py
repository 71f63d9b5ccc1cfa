"""What the `olboost reproduce` suites make of their runs: the aggregation, the published numbers
beside them and the targets, on runs given by hand (instant fakes of the run functions): the runs
themselves are tested elsewhere, the tables are what a reader of the paper compares."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from olboost import experiments as ex
from olboost.cli import _reproduce, main

# Ada.OLMR's loss (None) and OnlineBMR's by edge; each seed adds seed / 100
_MLR_LOSS = {None: 0.30, 0.2: 0.40, 0.1: 0.20, 0.01: 0.25, 0.001: 0.50}


def _reproduce_json(tmp_path, suite, *argv):
    out = tmp_path / "r.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["reproduce", suite, *argv, "--output", str(out), "--no-progress"])
    assert code == 0
    return json.loads(out.read_text()), printed.getvalue()


def test_reproduce_mlr_puts_each_published_number_beside_its_column(tmp_path, monkeypatch):
    def run_one(args, data):
        gamma = args.gamma if args.algorithm == "online-bmr" else None
        loss = _MLR_LOSS[gamma] + args.seed / 100
        return {"rank_loss": loss, "seconds": 1.0, "compile_seconds": 0.5}

    monkeypatch.setattr(_reproduce, "run_one", run_one)
    record, printed = _reproduce_json(
        tmp_path, "mlr", "--datasets", "emotions", "--seeds", "2", "--no-cells"
    )
    (row,) = record["rows"]
    # Table 3: Ada.OLMR .1600, best BMR .1654 (swapped, each was printed under the other)
    assert (row["published_ada_olmr"], row["published_best_bmr"]) == _reproduce.PUBLISHED_MLR[
        "emotions"
    ]
    # the best edge has the least mean loss (0.1: 0.215), not the most (0.001: 0.515)
    assert row["best_bmr_gamma"] == 0.1
    line = next(line for line in printed.splitlines() if line.startswith("emotions"))
    assert line.split()[1:4] == ["0.3150", "0.0071", "0.1600"]
    assert line.split()[5:9] == ["0.2150", "0.0071", "0.1", "0.1654"]


@pytest.fixture
def multiclass_runs(monkeypatch):
    """Instant runs: whole-stream accuracy 0.50 + r / 100 at reordering r (from 1), 0.90 on the
    final 20%, 1 s to run, 2 s to compile."""
    calls = []

    def run_column(column, data, reordering, **kwargs):
        calls.append((data.name, column, reordering))
        return ex.MulticlassRun(0.50 + reordering / 100, 0.90, 1.0, 2.0)

    monkeypatch.setattr(ex, "run_column", run_column)
    return calls


def test_reproduce_multiclass_tables_take_the_final_fifth_and_the_total_compile_time(
    tmp_path, multiclass_runs
):
    record, printed = _reproduce_json(
        tmp_path, "multiclass", "--datasets", "balance", "--columns", "DT",
        "--reorderings", "3", "--no-cells",
    )  # fmt: skip
    cell = record["results"]["balance"]["DT"]
    assert cell["compile_seconds"] == 6.0  # the total over the 3 reorderings, not their mean
    lines = printed.splitlines()
    table_3 = lines.index(next(line for line in lines if line.startswith("Table 3")))
    assert lines[table_3 + 2].split()[:2] == ["balance", "0.900"]  # the final 20%, not 0.52
    table_4 = lines.index(next(line for line in lines if line.startswith("Table 4")))
    assert lines[table_4 + 2].split()[:2] == ["balance", "0.520"]  # reorderings 1, 2, 3


def test_reproduce_multiclass_runs_movement_on_the_papers_nine_reorderings_at_most(
    tmp_path, monkeypatch, multiclass_runs
):
    class Movement:  # what is tested is the count of reorderings, not the 165,633 rows
        name, n_samples, nominal_cardinalities, n_features = "movement", 10, None, 3

    har = tmp_path / "har.csv"
    har.write_text("")
    monkeypatch.setattr(ex, "load_experiment_data", lambda name, har_path=None: Movement())
    monkeypatch.setattr(_reproduce, "_check_features", lambda *args, **kwargs: None)
    record, _ = _reproduce_json(
        tmp_path, "multiclass", "--datasets", "movement", "--har", str(har), "--columns", "DT",
        "--reorderings", "27", "--no-cells",
    )  # fmt: skip
    assert (
        record["results"]["movement"]["DT"]["reorderings"] == ex.PAPER_REORDERINGS["movement"] == 9
    )
    assert sorted({r for _, _, r in multiclass_runs}) == list(range(1, 10))


def _topk_collect(loss_by_gamma, skip_by_gamma=None):
    from olboost.topk_experiments._jobs import Job
    from olboost.topk_experiments._tables import collect

    jobs, results = [], []
    for seed in (1, 2):
        for gamma, loss in loss_by_gamma.items():
            jobs.append(Job("emotions", "TopOpt", seed, 10, exploration="uniform", gamma=gamma))
            skip = (skip_by_gamma or loss_by_gamma)[gamma]
            results.append(
                {"rank_loss": loss, "rank_loss_skip": skip, "seconds": 10.0, "compile_seconds": 0}
            )
        jobs.append(Job("emotions", "TopAda", seed, 10, exploration="uniform"))
        results.append(
            {"rank_loss": 0.30, "rank_loss_skip": 0.30, "seconds": 10.0, "compile_seconds": 0}
        )
    return collect(jobs, results)


def test_reproduce_topk_marks_a_loss_better_than_published_ok_and_picks_the_edge_by_test_loss():
    from olboost.topk_experiments._tables import format_tables

    # "within 0.02 of the published value or better": 0.15 against 0.20 is ok, 0.30 against
    # 0.22 a miss
    lines = format_tables(_topk_collect({0.1: 0.15}), 2, ["emotions"], gammas=(0.1,))
    row = next(line for line in lines if line.startswith("emotions") and "[" in line)
    assert row.split()[1:4] == ["0.1500", "[0.20]", "ok"]
    assert row.split()[5:8] == ["0.3000", "[0.22]", "MISS"]
    # TopOpt's edge: the least mean test loss, as the paper chose it, not the least skip loss
    cell = _topk_collect({0.1: 0.25, 0.2: 0.18}, {0.1: 0.10, 0.2: 0.30})["tables"]["uniform"]
    assert (cell["emotions"]["TopOpt"]["gamma"], cell["emotions"]["TopOpt"]["rank_loss_mean"]) == (
        0.2,
        0.18,
    )


def test_label_ranking_targets_count_a_column_mean_below_the_published_one_as_met():
    from olboost.ranking_experiments import COLUMNS, PUBLISHED, check_targets

    # every percentage 5 points under the paper's, Update III <= II <= I throughout
    result = {
        user: {
            f"{c} {u}": {"mistakes": 10 * (3 - j % 3), "percent": PUBLISHED[user][j] - 5.0}
            for j, (c, u) in enumerate(COLUMNS)
        }
        for user in PUBLISHED
    }
    targets = check_targets(result)
    mean = targets["column_means"]["squared I"]
    assert mean["difference"] == pytest.approx(-5.0, abs=1e-9) and mean["met"]
    assert targets["all_met"]


def test_pdip_summary_counts_runs_of_more_than_fifteen_iterations():
    from olboost.ranking_experiments import pdip_summary

    histogram = np.zeros(17, dtype=np.int64)
    histogram[10], histogram[15] = 5, 3  # the paper never needed more than 15: 15 is not over
    assert pdip_summary(histogram)["over_15"] == 0
    histogram[16] = 2
    assert pdip_summary(histogram)["over_15"] == 2


def test_reproduce_multiclass_reruns_movement_when_its_file_changed_in_place(
    tmp_path, monkeypatch, multiclass_runs
):
    # the key held the --har path and its rows: a file changed in place, with as many rows,
    # was reused from the cells
    class Movement:
        name, n_samples, nominal_cardinalities, n_features = "movement", 10, None, 3

    har = tmp_path / "har.csv"
    har.write_text("sitting\n")
    monkeypatch.setattr(ex, "load_experiment_data", lambda name, har_path=None: Movement())
    monkeypatch.setattr(_reproduce, "_check_features", lambda *args, **kwargs: None)
    argv = ("multiclass", "--datasets", "movement", "--har", str(har), "--columns", "DT",
            "--reorderings", "1", "--cells", str(tmp_path / "cells"))  # fmt: skip
    _reproduce_json(tmp_path, *argv)
    _, printed = _reproduce_json(tmp_path, *argv)
    assert "1 of 1 cells finished before" in printed and len(multiclass_runs) == 1
    har.write_text("walking\n")  # the same size
    _, printed = _reproduce_json(tmp_path, *argv)
    assert "finished before" not in printed and len(multiclass_runs) == 2
