"""Evaluation protocols and the command line."""

from __future__ import annotations

import json
import pickle
import re

import numpy as np
import pytest

from olboost import AdaOLMR, VFDTCommittee
from olboost.cli import main
from olboost.datasets import load
from olboost.evaluate import prequential, train_test
from olboost.metrics import rank_loss


def _model(seed=1):
    return AdaOLMR(VFDTCommittee(n_features=5), learners=8, seed=seed)


def test_train_test_array_path_equals_pair_path():
    data = load("emotions")
    fast = train_test(_model(), data.train, data.test)
    slow = train_test(
        AdaOLMR(VFDTCommittee(n_features=5), learners=8, seed=1, labels=data.label_names),
        iter(data.train),
        iter(data.test),
    )
    assert fast.n_train == slow.n_train == 391
    assert fast.n_test == slow.n_test == 202
    np.testing.assert_array_equal(fast.losses, slow.losses)
    assert fast.rank_loss == pytest.approx(fast.losses.mean())


def test_prequential_records_every_example_and_both_conventions():
    data = load("mediamill-reduced")
    small = data.train
    result = prequential(_model(), small)
    assert result.n_test == small.n_samples and result.n_train == 0
    empty = ~small.Y.any(axis=1) | small.Y.all(axis=1)
    assert empty.any(), "m-reduced has examples with no relevant label"
    assert np.isnan(result.losses_skip[empty]).all()
    assert (result.losses[empty] == 0).all()
    kept = result.losses[~empty]
    assert result.rank_loss_skip == pytest.approx(kept.mean())
    assert result.rank_loss == pytest.approx(result.losses.mean())
    assert result.n_skipped == int(empty.sum())


def test_river_dict_targets_are_read_by_their_values_not_their_keys():
    from olboost import TopkAdaptive

    data = load("emotions")
    labels = list(data.label_names)
    sets = list(data.train)[:60]
    dicts = [(x, {label: label in y for label in labels}) for x, y in sets]
    for cls, params in [(AdaOLMR, {}), (TopkAdaptive, {"k": 3, "rho": 0.05})]:
        results, models = [], []
        for stream in (sets, dicts):
            model = cls(VFDTCommittee(n_features=5), learners=4, seed=1, labels=labels, **params)
            results.append(prequential(model, stream))
            models.append(model)
        # a label River maps to False is irrelevant: the same losses and model as with sets
        np.testing.assert_array_equal(results[0].losses, results[1].losses)
        assert results[1].n_skipped == results[0].n_skipped < 60
        assert pickle.dumps(models[0]) == pickle.dumps(models[1]) or cls is TopkAdaptive
        x = sets[0][0]
        assert models[0].score_one(x) == models[1].score_one(x)
    with pytest.raises(TypeError, match=r"y\['amazed-suprised'\] must be a bool"):
        prequential(_model(), [(sets[0][0], {labels[0]: 1})])


def test_protocol_inputs_are_checked_before_anything_changes():
    import json

    from olboost import TopkAdaptive
    from olboost.boosters import OnlineMBBM
    from olboost.experiments import load_experiment_data

    data = load("emotions")
    x = data.train.X[0]
    topk = TopkAdaptive(VFDTCommittee(n_features=5), learners=4, seed=1, labels=6, k=3, rho=0.05)
    with pytest.raises(ValueError, match="unknown label 'no-such-label'"):
        prequential(topk, [(x, {"no-such-label"})])
    assert not topk._started  # the first show would have started it
    balance = load_experiment_data("balance")
    with pytest.raises(TypeError, match="multiclass classifier, evaluated with prequential"):
        train_test(OnlineMBBM(learners=4, seed=1), balance, balance)
    result = train_test(_model(), data.train, data.test, loops=np.int64(2))
    assert json.loads(json.dumps(result.summary()))["loops"] == 2


def test_losses_are_those_of_the_scores_made_before_learning():
    data = load("emotions").train
    model = _model()
    scores = model.clone().score_then_learn(data.X, data.Y)
    result = prequential(model, data)
    np.testing.assert_allclose(result.losses, rank_loss(scores, data.Y))


def test_cli_run_writes_the_json_record(tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(
        [
            "run",
            "--algorithm",
            "ada-olmr",
            "--dataset",
            "emotions",
            "--learners",
            "5",
            "--seed",
            "1",
            "--output",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    record = json.loads(out.read_text())
    for key in [
        "algorithm",
        "dataset",
        "seed",
        "learners",
        "rank_loss",
        "rank_loss_skip",
        "n_train",
        "n_test",
        "seconds",
        "olboost_version",
    ]:
        assert key in record
    assert record["n_train"] == 391 and record["n_test"] == 202
    assert 0 < record["rank_loss"] < 0.5
    again = _model().clone({"learners": 5, "committee": VFDTCommittee()})
    data = load("emotions")
    assert record["rank_loss"] == train_test(again, data.train, data.test).rank_loss
    assert "rank loss" in capsys.readouterr().out


ARFF = """@relation tiny
@attribute a numeric
@attribute b numeric
@attribute l1 {0,1}
@attribute l2 {0,1}
@attribute l3 {0,1}
@data
"""
XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="l1"></label><label name="l2"></label><label name="l3"></label>
</labels>
"""


def test_cli_prequential_on_a_path(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(50):
        a, b = rng.normal(size=2)
        rows.append(f"{a:.4f},{b:.4f},{int(a > 0)},{int(b > 0)},{int(a + b > 1)}")
    (tmp_path / "t.arff").write_text(ARFF + "\n".join(rows) + "\n")
    (tmp_path / "t.xml").write_text(XML)
    out = tmp_path / "r.json"
    code = main(
        [
            "run",
            "--dataset",
            str(tmp_path / "t.arff"),
            "--labels",
            str(tmp_path / "t.xml"),
            "--learners",
            "3",
            "--output",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    record = json.loads(out.read_text())
    assert record["protocol"] == "prequential" and record["n_test"] == 50


def test_cli_reports_bad_input_clearly(capsys, tmp_path):
    (tmp_path / "t.xml").write_text(XML)
    missing = str(tmp_path / "missing.arff")
    assert main(["run", "--dataset", missing, "--labels", str(tmp_path / "t.xml")]) == 2
    assert "missing.arff" in capsys.readouterr().err
    assert main(["run", "--dataset", "emotions", "--learners", "0", "--no-progress"]) == 2
    assert "learners" in capsys.readouterr().err


def test_cli_reproduce_mlr_has_the_best_bmr_column(tmp_path, capsys):
    out = tmp_path / "mlr.json"
    code = main(
        [
            "reproduce",
            "mlr",
            "--seeds",
            "2",
            "--datasets",
            "emotions",
            "--learners",
            "3",
            "--no-progress",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    assert "best BMR" in capsys.readouterr().out
    row = json.loads(out.read_text())["rows"][0]
    assert row["dataset"] == "emotions" and row["published_ada_olmr"] == 0.1600
    by_gamma = row["online_bmr_by_gamma"]
    assert set(by_gamma) == {"0.2", "0.1", "0.01", "0.001"}
    best = row["best_bmr_gamma"]
    assert by_gamma[str(best)]["rank_loss_mean"] == min(
        r["rank_loss_mean"] for r in by_gamma.values()
    )
    assert len(row["ada_olmr"]["rank_loss_per_seed"]) == 2


def _one_output_data(tmp_path):
    """A UCI file of one class and a MULAN set (ARFF and XML) of one label, both loaded."""
    from olboost.datasets import load_uci

    (tmp_path / "balance-scale.data").write_text("L,1,2,3,4\nL,2,3,4,5\nL,3,4,5,6\n")
    arff = "@relation one\n@attribute a numeric\n@attribute b numeric\n@attribute l1 {0,1}\n"
    (tmp_path / "one.arff").write_text(arff + "@data\n0.1,0.2,1\n0.3,0.4,0\n0.5,0.6,1\n")
    (tmp_path / "one.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<labels xmlns="http://mulan.sourceforge.net/labels"><label name="l1"></label></labels>\n'
    )
    multiclass = load_uci(tmp_path / "balance-scale.data")
    multilabel = load(tmp_path / "one.arff", tmp_path / "one.xml")
    return multiclass, multilabel


def test_a_data_set_of_one_class_or_label_is_refused_before_the_model_changes(tmp_path):
    # the protocols give a model built without classes or labels the data set's, which the
    # constructor's check of at least 2 never saw: Ada.OLM divided by k - 1 = 0 after taking
    # classes_, the other boosters reported accuracy 1.0, the rankers a rank loss of NaN
    from olboost import AdaBoostOLM, LabelRanker, OnlineBMR
    from olboost.boosters import OzaBoost
    from olboost.evaluate import resumable

    multiclass, multilabel = _one_output_data(tmp_path)
    for model in (AdaBoostOLM(learners=2, seed=1), OzaBoost(learners=2, seed=1)):
        before = pickle.dumps(model)
        for run in (prequential, resumable):
            with pytest.raises(
                ValueError,
                match=r"the data set 'balance' has 1 class \('L'\): a classifier needs at least 2 "
                "classes",
            ):
                run(model, multiclass)
            assert pickle.dumps(model) == before
    rankers = (_model(), OnlineBMR(learners=2, seed=1), LabelRanker(seed=1))
    for model in rankers:
        before = pickle.dumps(model)
        for run in (
            lambda m: prequential(m, multilabel),
            lambda m: train_test(m, multilabel, multilabel),
            lambda m: resumable(m, multilabel),
            lambda m: prequential(m, multilabel, warm_up=True),
        ):
            with pytest.raises(
                ValueError,
                match=r"the data set 'one' has 1 label \('l1'\): a ranker needs at least 2 labels",
            ):
                run(model)
            assert pickle.dumps(model) == before
    # a model that ranks labels of its own is told why too, not that the labels differ
    with pytest.raises(ValueError, match="has 1 label"):
        prequential(AdaOLMR(VFDTCommittee(), learners=2, seed=1, labels=2), multilabel)


def test_a_data_set_of_the_other_task_is_refused_naming_both_kinds():
    # the model found no classes (labels) of its kind and asked for them: "pass classes=k ...
    # or learn from arrays first", neither of which would run it
    from olboost import AdaBoostOLM, LabelRanker
    from olboost.datasets import load_uci
    from olboost.evaluate import resumable

    classifier, ranker = AdaBoostOLM(learners=2, seed=1), LabelRanker(seed=1)
    cases = [
        (classifier, load("emotions"), "AdaBoostOLM is a multiclass classifier and the data set "
         "'emotions' is multi-label (data sets of its kind: load_uci)"),
        (ranker, load_uci("balance"), "LabelRanker is a multi-label ranker and the data set "
         "'balance' is multiclass (data sets of its kind: load)"),
    ]  # fmt: skip
    for model, data, message in cases:
        before = pickle.dumps(model)
        runs = [prequential, resumable]
        if model is ranker:  # (train_test evaluates rankers only, and says so)
            runs.append(lambda m, d: train_test(m, d, d))
        for run in runs:
            with pytest.raises(ValueError, match=r"(stream|train split): " + re.escape(message)):
                run(model, data)
            assert pickle.dumps(model) == before


def test_outputs_set_outside_the_constructor_are_checked_as_its_parameter():
    from olboost import AdaBoostOLM

    for model, param in ((AdaBoostOLM(learners=2, seed=1), "classes"), (_model(), "labels")):
        before = pickle.dumps(model)
        with pytest.raises(ValueError, match=f"the {param} must hold at least 2 values, got"):
            model._set_outputs(["L"])
        with pytest.raises(ValueError, match=f"the {param} must not repeat a value"):
            model._set_outputs(["L", "L"])
        assert pickle.dumps(model) == before
        model._set_outputs(["L", "R"])
        assert model._outputs() == ["L", "R"]


def test_cli_refuses_a_data_set_of_one_class_or_label_in_one_line(tmp_path, capsys):
    _one_output_data(tmp_path)
    uci = tmp_path / "balance-scale.data"
    arff, xml = tmp_path / "one.arff", tmp_path / "one.xml"
    cases = [
        (["--algorithm", "adaboost-olm", "--dataset", str(uci)], f"--dataset {uci}: ", "1 class"),
        (["--algorithm", "oza-boost", "--dataset", str(uci)], f"--dataset {uci}: ", "1 class"),
    ]
    for algorithm in ("ada-olmr", "online-bmr", "label-ranker"):
        argv = ["--algorithm", algorithm, "--dataset", str(arff), "--labels", str(xml)]
        cases.append((argv, f"--dataset {arff}: ", "1 label ('l1')"))
    for argv, where, what in cases:
        assert main(["run", *argv, "--no-progress"]) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        lines = captured.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"olboost: error: {where}"), captured.err
        assert what in lines[0] and "needs at least 2" in lines[0]


def _split(width, labels, rows=50, name="x", seed=0):
    from olboost.datasets import MultiLabelDataset

    rng = np.random.default_rng(seed)
    X = rng.random((rows, width))
    X[:, 0] = rng.integers(0, 3, rows)  # nominal codes 0..2, for the committee that has them
    Y = rng.random((rows, len(labels))) < 0.4
    return MultiLabelDataset(name, X, Y, [f"f{i}" for i in range(width)], list(labels))


def test_labels_that_differ_beyond_the_first_five_are_named():
    # a misspelt sixth label: both lists, cut at 5, read the same ("['a', ..., 'e']..."),
    # the one difference hidden, and "..." followed lists that were not cut
    from olboost import AdaOLMR, VFDTCommittee

    model = AdaOLMR(VFDTCommittee(n_features=2), learners=2, seed=1, labels=list("abcdefg"))
    with pytest.raises(ValueError) as err:
        train_test(model, _split(3, "abcdefh"), _split(3, "abcdefh", seed=1))
    assert str(err.value) == (
        "train split: the model ranks labels ['a', 'b', 'c', 'd', 'e', ...], the data set has "
        "labels ['a', 'b', 'c', 'd', 'e', ...]: the data set lacks the model's ['g']; the model "
        "lacks the data set's ['h']"
    )
    assert not model._started


def _head(data, rows=10):
    return data.X[:rows], data.Y[:rows]


def _with_value(data, row, column, value):
    data.X[row, column] = value
    return data


def _booster(**params):
    return AdaOLMR(VFDTCommittee(n_features=3, **params), learners=3, seed=1)


def _label_ranker():
    from olboost import LabelRanker

    return LabelRanker(seed=0)


def _topk():
    from olboost import TopkAdaptive

    return TopkAdaptive(VFDTCommittee(n_features=3), learners=3, seed=1, k=2, rho=0.05)


_OTHER_LABELS = r"test split: the model ranks labels \['a', 'b', 'c'\], the data set has "
_BAD_SPLITS = {
    "other labels": (
        _booster,
        _split(4, "abd"),
        _OTHER_LABELS + r"labels \['a', 'b', 'd'\]: the data set lacks the model's \['c'\]; "
        r"the model lacks the data set's \['d'\] \(the model takes the train split's\)$",
    ),
    "other labels, ranker": (
        _label_ranker,
        _split(4, "abd"),
        r"\(the model takes the train split's\)",
    ),
    "other labels, top-k": (_topk, _split(4, "abd"), _OTHER_LABELS),
    "other width": (
        _booster,
        _split(5, "abc"),
        "test split: X has 5 features, the train split has 4",
    ),
    "one label": (
        _booster,
        _split(4, "a"),
        r"test split: the data set 'x' has 1 label \('a'\): a ranker",
    ),
    "NaN": (
        _label_ranker,
        _with_value(_split(4, "abc"), 3, 1, np.nan),
        r"test split: X has a missing value \(NaN\) at row 3, feature 1",
    ),
    "infinity": (
        _booster,
        _with_value(_split(4, "abc"), 5, 2, np.inf),
        r"test split: X has an infinite value",
    ),
    # a started model's committee checks the rows too
    "unknown nominal code": (
        lambda: _booster(nominal_attributes={0: 3}).learn(*_head(_split(4, "abc", seed=2))),
        _with_value(_split(4, "abc"), 7, 0, 3),
        r"test split: AdaOLMR: X row 7: nominal attributes must hold integer codes .* got 3",
    ),
    # and so does the committee an unstarted model will start, from its parameters: the whole
    # train split was learned before the test split's row was refused
    "unknown nominal code, unstarted": (
        lambda: _booster(nominal_attributes={0: 3}),
        _with_value(_split(4, "abc"), 7, 0, 3),
        r"test split: AdaOLMR: X row 7: nominal attributes must hold integer codes .* got 3",
    ),
}


@pytest.mark.parametrize("case", list(_BAD_SPLITS))
@pytest.mark.parametrize("protocol", ["train_test", "train_test loops=3", "resumable"])
def test_a_test_split_that_does_not_fit_is_refused_before_anything_is_learned(case, protocol):
    # both splits are given up front, yet train_test learned the whole train split (resumable
    # fixed labels_, or learned it too) before refusing a test split of other labels, another
    # width, one label or values the model refuses
    from olboost.evaluate import resumable

    make, test, message = _BAD_SPLITS[case]
    run = {
        "train_test": lambda m: train_test(m, _split(4, "abc", seed=1), test),
        "train_test loops=3": lambda m: train_test(m, _split(4, "abc", seed=1), test, loops=3),
        "resumable": lambda m: resumable(m, _split(4, "abc", seed=1), test, loops=2, every=10),
    }[protocol]
    model = make()
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=message):
        run(model)
    assert pickle.dumps(model) == before


_BAD_STREAMS = {
    "NaN": (_label_ranker, 2, np.nan, r"stream: X has a missing value \(NaN\) at row 4500"),
    # the committee's and the ranker's own conditions, checked from their parameters before
    # the model starts: the blocks before were learned, and the row was counted in its block
    "nominal code": (
        lambda: _booster(nominal_attributes={0: 3}),
        0,
        7.0,
        r"stream: AdaOLMR: X row 4500: nominal attributes must hold integer codes",
    ),
}


@pytest.mark.parametrize("case", list(_BAD_STREAMS))
@pytest.mark.parametrize("protocol", ["prequential", "resumable"])
def test_one_stream_is_checked_whole_before_anything_is_learned(case, protocol):
    # the model checks the block it is handed: a bad row after the first block was refused once
    # the blocks before it had been learned
    from olboost.evaluate import resumable

    make, column, value, message = _BAD_STREAMS[case]
    stream = _with_value(_split(4, "abc", rows=5000), 4500, column, value)
    model = make()
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=message):
        {"prequential": prequential, "resumable": resumable}[protocol](model, stream)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("protocol", ["train_test", "prequential"])
def test_the_entropy_ranker_checks_every_split_before_it_starts(protocol):
    # its features must lie in [0, 1]: a value beyond, in the test split or after the stream's
    # first block, was refused once everything before it had been learned
    from olboost import LabelRanker

    def unit(data):
        data.X[:, 0] /= 2.0  # the nominal codes 0..2 of _split into [0, 1]
        return data

    model = LabelRanker(complexity="entropy", margin=0.1, seed=0)
    before = pickle.dumps(model)
    if protocol == "train_test":
        train, test = unit(_split(4, "abc", seed=1)), unit(_split(4, "abc"))
        with pytest.raises(ValueError, match="test split: LabelRanker: X has the value 3 at row 7"):
            train_test(model, train, _with_value(test, 7, 0, 3.0))
    else:
        stream = _with_value(unit(_split(4, "abc", rows=5000)), 4500, 1, 2.0)
        with pytest.raises(ValueError, match="stream: LabelRanker: X has the value 2 at row 4500"):
            prequential(model, stream)
    assert pickle.dumps(model) == before


def test_splits_that_fit_still_run_and_a_started_model_checks_its_width():
    train = _split(4, "abc", seed=1)
    # the same labels in another order (a 3-cycle: a permutation mapped backwards is another
    # one): the model ranks them in its order, as on the test split with its columns in that
    # order, bit for bit
    test = _split(4, "bca")
    in_order = type(test)(test.name, test.X, test.Y[:, [2, 0, 1]], test.feature_names, list("abc"))
    for make in (_booster, _label_ranker, _topk):
        result = train_test(make(), train, test, loops=2)
        assert result.n_test == 50 and np.isfinite(result.rank_loss)
        again = train_test(make(), train, in_order, loops=2)
        np.testing.assert_array_equal(result.losses, again.losses)
    # a top-k booster that shows more labels than the data set has: refused before the model
    # takes the data set's labels (it kept them, refused by its start)
    model = _topk().set_params(k=4)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=r"TopkAdaptive: k=4 must be in \[2, m=3\] labels"):
        train_test(model, train, train)
    assert pickle.dumps(model) == before
    model = _label_ranker()
    prequential(model, train)
    before = pickle.dumps(model)
    wide = _split(5, "abc")
    for tr, te, role in ((train, wide, "test"), (wide, train, "train")):
        with pytest.raises(
            ValueError, match=f"{role} split: X has 5 features, the model was started with 4"
        ):
            train_test(model, tr, te)
        assert pickle.dumps(model) == before


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_a_record_is_strict_json_when_a_loss_is_undefined(tmp_path, capsys):
    # no test row has a relevant/irrelevant pair: rank_loss_skip is NaN, which json.dumps
    # wrote as the bare NaN that strict parsers (jq, JavaScript) refuse
    rng = np.random.default_rng(0)
    rows = [f"{a:.3f},{b:.3f},{int(a > 0)},{int(b > 0)},{int(a + b > 0)}"
            for a, b in rng.normal(size=(40, 2))]  # fmt: skip
    (tmp_path / "t.arff").write_text(ARFF + "\n".join(rows) + "\n")
    (tmp_path / "z.arff").write_text(ARFF + "0.1,0.2,0,0,0\n0.3,0.1,1,1,1\n")
    (tmp_path / "t.xml").write_text(XML)
    out = tmp_path / "r.json"
    argv = ["run", "--dataset", str(tmp_path / "t.arff"), "--labels", str(tmp_path / "t.xml"),
            "--test", str(tmp_path / "z.arff"), "--learners", "3", "--no-progress"]  # fmt: skip
    assert main([*argv, "--output", str(out)]) == 0
    record = _strict(out.read_text())
    assert record["rank_loss_skip"] is None and record["n_skipped"] == 2
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    assert _strict(capsys.readouterr().out)["rank_loss_skip"] is None


def test_a_record_holds_text_when_a_name_was_read_under_a_locale_that_is_not_utf8(tmp_path):
    # under LC_ALL=C with UTF-8 mode off, Python reads the file name 'café.arff' as
    # 'caf\udcc3\udca9.arff' (lone surrogates): the record held them, which no UTF-8 reader
    # takes (jq prints U+FFFD, Python's encode fails)
    rng = np.random.default_rng(0)
    rows = [f"{a:.3f},{b:.3f},{int(a > 0)},{int(b > 0)},{int(a + b > 0)}"
            for a, b in rng.normal(size=(20, 2))]  # fmt: skip
    data = tmp_path / "caf\udcc3\udca9.arff"  # the bytes of 'café.arff', as Python holds them
    data.write_text(ARFF + "\n".join(rows) + "\n")
    (tmp_path / "t.xml").write_text(XML)
    out = tmp_path / "r.json"
    argv = ["run", "--dataset", str(data), "--labels", str(tmp_path / "t.xml"), "--learners", "2",
            "--no-progress", "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    record = _strict(out.read_bytes().decode("utf-8"))
    assert record["dataset"] == "café"


def test_a_models_class_instead_of_a_model_is_named():
    # train_test(AdaOLMR, ...) failed inside: "OnlineLearner._set_outputs() missing 1 required
    # positional argument: 'outputs'"; prequential(AdaBoostOLM, ...): "type object
    # 'AdaBoostOLM' has no attribute 'score_one'"; the adapter said "got EstimatorMeta"
    from olboost import AdaBoostOLM, AdaOLMR
    from olboost.datasets import load, load_uci
    from olboost.evaluate import prequential, resumable
    from olboost.sklearn import OnlineBoostingClassifier

    data, balance = load("emotions"), load_uci("balance")
    message = r"^model is the class {0}, not a model: pass an instance, {0}\(\.\.\.\)$"
    with pytest.raises(TypeError, match=message.format("AdaOLMR")):
        train_test(AdaOLMR, data.train, data.test)
    with pytest.raises(TypeError, match=message.format("AdaBoostOLM")):
        prequential(AdaBoostOLM, balance)
    with pytest.raises(TypeError, match=message.format("AdaOLMR")):
        resumable(AdaOLMR, data.train, data.test)
    with pytest.raises(TypeError, match=r"got the class AdaBoostOLM; pass an instance"):
        OnlineBoostingClassifier(AdaBoostOLM).fit(np.zeros((4, 2)), [0, 1, 0, 1])


def test_a_bad_example_of_a_stream_of_pairs_is_named_by_its_position():
    # the array path names the row ("(Y row 37)"); a stream of (x, y) pairs said only what was
    # wrong, and an item that was no pair gave "cannot unpack non-iterable ..."
    import itertools

    from olboost import AdaBoostOLM, AdaOLMR, VFDTCommittee
    from olboost.datasets import load, load_uci
    from olboost.evaluate import prequential

    data = load("emotions")
    train = list(itertools.islice(iter(data.train), 40))
    test = list(itertools.islice(iter(data.test), 10))

    def model():
        return AdaOLMR(VFDTCommittee(n_features=5), learners=2, seed=1, labels=data.label_names)

    short = [*train[:37], (train[37][0][:71], train[37][1]), *train[38:]]
    with pytest.raises(ValueError, match=r"^train split example 37: AdaOLMR: x has 71 features"):
        train_test(model(), short, test)
    wrong = [*test[:7], (test[7][0], {"angry"}), *test[8:]]
    with pytest.raises(ValueError, match=r"^test split example 7: AdaOLMR: unknown label 'angry'"):
        train_test(model(), train, wrong)
    for items, got in (([x for x, _ in train], "ndarray"), ([(*p, 1.0) for p in train], "tuple")):
        with pytest.raises(TypeError, match=rf"^stream example 0: an \(x, y\) pair is expected, "
                           rf"got {got}"):  # fmt: skip
            prequential(model(), items)
    # a single label where the set of relevant ones goes ("argument of type 'int' is not
    # iterable"; a string was searched for its characters), named at its position
    for label in (1, "angry"):
        one = [*train[:3], (train[3][0], label), *train[4:]]
        with pytest.raises(TypeError, match=rf"^stream example 3: y must be the set of relevant "
                           rf"labels .* pass \{{{label!r}\}}"):  # fmt: skip
            prequential(model(), one)
    # whatever unpacks as a pair is one (the rows of a 2-column object array were taken)
    rows = np.empty((len(train), 2), dtype=object)
    rows[:, 0], rows[:, 1] = [x for x, _ in train], [y for _, y in train]
    np.testing.assert_array_equal(
        prequential(model(), iter(rows)).losses, prequential(model(), train).losses
    )

    class Broken(AdaOLMR):  # a model's own bug keeps its traceback, the position added
        def learn_one(self, x, y):
            return len(None)

    with pytest.raises(TypeError, match=r"^stream example 0: object of type 'NoneType'") as err:
        prequential(Broken(learners=2, seed=1, labels=data.label_names), train)
    assert err.traceback[-1].name == "learn_one"
    balance = list(itertools.islice(iter(load_uci("balance")), 30))
    classifier = AdaBoostOLM(learners=2, seed=1, classes=["B", "L", "R"])
    with pytest.raises(ValueError, match=r"^stream example 12: AdaBoostOLM: unknown class 'Q'"):
        prequential(classifier, [*balance[:12], (balance[12][0], "Q"), *balance[13:]])


def test_a_stream_that_is_no_stream_is_refused_before_anything_is_learned():
    import pickle

    from olboost import AdaOLMR, VFDTCommittee
    from olboost.datasets import load
    from olboost.evaluate import prequential, train_test

    data = load("emotions")
    model = AdaOLMR(VFDTCommittee(n_features=5), learners=3, seed=1)
    model.learn(data.train.X[:5], data.train.Y[:5])
    before = pickle.dumps(model)
    # the train split was learned whole, then the test pass failed: "not enough values to
    # unpack (expected 2, got 1)"
    for train, test in ((data.train, "emotions"), (data.train.X, data.test), (data.train, b"x")):
        with pytest.raises(TypeError, match="must be a data set .* or an iterable of"):
            train_test(model, train, test)
    with pytest.raises(TypeError, match="the stream must be a data set"):
        prequential(model, data.test.X)
    assert pickle.dumps(model) == before


def test_resumable_hands_each_checkpoint_a_snapshot():
    # one live Progress, mutated: a callback that kept it resumed "earlier" checkpoints from
    # the end
    from olboost import AdaOLMR, VFDTCommittee
    from olboost.datasets import load
    from olboost.evaluate import resumable

    data = load("emotions")
    saved = []
    resumable(AdaOLMR(VFDTCommittee(n_features=5), learners=3, seed=1), data.train, data.test,
              every=200, on_checkpoint=saved.append)  # fmt: skip
    assert [p.done for p in saved] == [200, 400, 593]
    assert len({id(p.records) for p in saved}) == 3


def test_one_iterator_for_both_splits_and_loops_0_are_refused(capsys):
    from olboost import AdaOLMR, VFDTCommittee
    from olboost.datasets import load
    from olboost.evaluate import train_test

    data = load("emotions")
    X, Y = data.test.X[:20], data.test.Y[:20]
    pairs = iter([(x, set(np.flatnonzero(y).tolist())) for x, y in zip(X, Y, strict=True)])
    # the train pass consumed it: n_test was 0 and the rank loss NaN, without an error
    with pytest.raises(ValueError, match="one iterator"):
        train_test(AdaOLMR(VFDTCommittee(n_features=5), learners=2, seed=1), pairs, pairs)
    argv = ["run", "--dataset", "emotions", "--learners", "2", "--loops", "0", "--no-progress"]
    assert main(argv) == 2
    assert "--loops must be >= 1, got 0" in capsys.readouterr().err


def test_outputs_named_by_the_models_integers_are_read_by_name_on_the_array_path():
    # A data set whose classes (labels) are named by the integers 0 .. k - 1 in another order
    # than the model's: the array path read its codes (columns) by position, so every example
    # was learned under another class than the same data set's (x, y) pairs gave (coverage
    # probe, session 31). Both paths must give the same model.
    from olboost import AdaBoostOLM, LabelRanker
    from olboost.datasets import MulticlassDataset, MultiLabelDataset

    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    names = [f"f{j}" for j in range(3)]
    y = (X[:, 0] > 0.5).astype(int)  # code 1, the class named 0, where x0 > 0.5
    data = MulticlassDataset("swapped", X, y, names, [1, 0])

    def classifier():
        return AdaBoostOLM(VFDTCommittee(n_features=3), learners=3, seed=0, classes=[0, 1])

    fast, slow = classifier(), classifier()
    by_array = prequential(fast, data)
    by_pairs = prequential(slow, list(data))
    np.testing.assert_array_equal(by_array.correct, by_pairs.correct)
    assert fast.predict(X).tolist() == slow.predict(X).tolist()
    assert fast.predict_one(np.array([0.9, 0.5, 0.5])) == 0

    Y = np.zeros((120, 3), dtype=bool)
    Y[:, 2] = X[:, 0] > 0.5  # the label named 0
    Y[:, 0] = ~Y[:, 2]
    ranked = MultiLabelDataset("swapped", X, Y, names, [2, 1, 0])
    for labels in ([0, 1, 2], 3):
        fast, slow = LabelRanker(labels=labels, seed=0), LabelRanker(labels=labels, seed=0)
        by_array = train_test(fast, ranked, ranked)
        by_pairs = train_test(slow, list(ranked), list(ranked))
        np.testing.assert_array_equal(by_array.losses, by_pairs.losses)
        assert fast.rank_one(np.array([0.9, 0.5, 0.5]))[0] == 0

    # labels=k on labels of other names still takes the columns as they are
    lettered = MultiLabelDataset("lettered", X, Y, names, ["a", "b", "c"])
    counted, named = LabelRanker(labels=3, seed=0), LabelRanker(labels=["a", "b", "c"], seed=0)
    np.testing.assert_array_equal(
        prequential(counted, lettered).losses, prequential(named, lettered).losses
    )


def test_a_split_is_read_by_position_only_against_outputs_no_one_named():
    # The model without labels takes the train split's names 0, 1, 2: a test split of other
    # names is other labels (it was read by position, the train split's names taken for a
    # count); the reverse was refused already. A data set naming some of a count's integers
    # beside others (classes 1 and 2 on classes=2) is read neither way: refused, as its pairs.
    from olboost import AdaBoostOLM
    from olboost.datasets import MulticlassDataset

    numbered, lettered = _split(4, [0, 1, 2]), _split(4, "abc", seed=1)
    for train, test in ((numbered, lettered), (lettered, numbered)):
        model = _booster()
        with pytest.raises(ValueError, match=r"test split: the model ranks labels .* \(the model "):
            train_test(model, train, test)
        assert not model._started
    # read by position, a split listing the other's labels in another order would be read as
    # other labels under the same names
    reversed_ = _split(4, "cba", seed=1)
    reversed_.Y = reversed_.Y[:, ::-1].copy()
    model = AdaOLMR(VFDTCommittee(n_features=3), learners=3, seed=1, labels=3)
    with pytest.raises(ValueError, match="test split: the data set lists the train split's labels"):
        train_test(model, lettered, reversed_)
    assert not model._started
    # a classifier's classes taken from y are names: a data set of others is refused
    from olboost import AdaBoostOLM as Olm

    started = Olm(VFDTCommittee(n_features=3), learners=2, seed=0).learn(
        lettered.X[:4], [0, 1, 0, 1]
    )
    named_classes = MulticlassDataset("n", lettered.X, np.arange(50) % 2, list("wxyz"), ["p", "q"])
    with pytest.raises(ValueError, match=r"classes \['p', 'q'\] the model does not know"):
        prequential(started, named_classes)
    # a count reads other names by position, also once started (its labels_ are 0, 1, 2)
    counted = AdaOLMR(VFDTCommittee(n_features=3), learners=3, seed=1, labels=3)
    named = AdaOLMR(VFDTCommittee(n_features=3), learners=3, seed=1, labels=["a", "b", "c"])
    for _ in range(2):
        np.testing.assert_array_equal(
            train_test(counted, lettered, lettered).losses,
            train_test(named, lettered, lettered).losses,
        )

    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    data = MulticlassDataset("overlap", X, (X[:, 0] > 0.5).astype(int), ["f", "g", "h"], [1, 2])
    model = AdaBoostOLM(VFDTCommittee(n_features=3), learners=3, seed=0, classes=2)
    with pytest.raises(ValueError, match=r"classes \[1, 2\] the model does not know \(\[0, 1\]\)"):
        prequential(model, data)
    assert not model._started
    with pytest.raises(ValueError, match="2"):
        prequential(model, list(data))


def test_a_stream_of_pairs_keeps_a_few_bytes_an_example():
    """Over an iterable of pairs, the protocol keeps what its result holds, the loss and whether
    the example has a pair: it kept a Python float and a mask of the k labels for every
    example, for a stream of any length (an audit, session 51). The peak memory that
    tracemalloc counts (allocations, not time) over 2,000 examples less that over 500, per
    example, at 1,000 labels: 9 bytes now (a double and a byte), 2,190 before; the bound leaves
    room for the allocator's rounding. The losses and skips are the array path's, examples
    without a pair included."""
    import itertools
    import tracemalloc

    from olboost import LabelRanker
    from olboost.datasets import MultiLabelDataset

    rng = np.random.default_rng(0)
    k, n = 1000, 2000
    X = rng.normal(size=(n, 4))
    Y = rng.random((n, k)) < 0.002
    Y[::7] = False  # no relevant label
    Y[3::11] = True  # every label
    data = MultiLabelDataset("s", X, Y, ["a", "b", "c", "d"], [f"l{j}" for j in range(k)])
    model = LabelRanker(update="II", labels=data.label_names, seed=0)

    def peak(m):
        tracemalloc.start()
        try:
            result = prequential(model.clone(), itertools.islice(iter(data), m))
            return tracemalloc.get_traced_memory()[1], result
        finally:
            tracemalloc.stop()

    peak(100)  # first calls' imports and caches
    (short, _), (long, slow) = peak(500), peak(n)
    assert (long - short) / (n - 500) < 100, (long - short) / (n - 500)
    fast = prequential(model.clone(), data)
    pairless = ~Y.any(axis=1) | Y.all(axis=1)
    assert slow.n_test == n and slow.n_skipped == int(pairless.sum()) > 400
    np.testing.assert_array_equal(slow.losses, fast.losses)
    np.testing.assert_array_equal(slow.losses_skip, fast.losses_skip)
