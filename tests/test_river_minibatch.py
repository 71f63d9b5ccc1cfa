"""The multiclass boosters are River mini-batch classifiers (``river.base.MiniBatchClassifier``).

``learn_many`` must give the model a loop of ``learn_one`` over the rows as dicts gives, bit for
bit (the pickles are compared), also when a later batch lacks columns, holds missing cells or
brings columns of no feature; ``predict_proba_many`` and ``predict_many`` must equal the
one-row answers exactly. River's own mini-batch checks run in ``test_river_native.py``
(``check_estimator``); here they are only shown to be among the checks it runs.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

river = pytest.importorskip("river", reason="River is optional: pip install olboost[river]")
pd = pytest.importorskip("pandas", reason="River's mini-batches are pandas DataFrames")

from river import base, checks, datasets, preprocessing  # noqa: E402

from olboost import VFDTCommittee  # noqa: E402
from olboost.boosters import AdaBoostOLM, OnlineMBBM  # noqa: E402
from olboost.boosters.baselines import AdaOVA, BestTree, OvaAdaBoostOL, OzaBoost  # noqa: E402

MULTICLASS = [AdaBoostOLM, OnlineMBBM, BestTree, OzaBoost, OvaAdaBoostOL, AdaOVA]
CLASSES = ["brickface", "cement", "foliage", "grass", "path", "sky", "window"]
MINI_BATCH_CHECKS = {
    "check_learn_many_matches_learn_one",
    "check_predict_many_matches_predict_one",
    "check_predict_proba_many_matches_predict_proba_one",
}


def _rows(n: int) -> tuple[list[dict], list[str]]:
    rows = [(x, y) for _, (x, y) in zip(range(n), datasets.ImageSegments(), strict=False)]
    return [x for x, _ in rows], [y for _, y in rows]


def _batches(xs: list[dict]) -> list[list[dict]]:
    """Five batches whose features come and go (as River's check does), with a missing cell and
    a column no feature has in the later ones."""
    keys = sorted(xs[0])
    half = len(keys) // 2
    subsets = [keys[half:][::-1], keys, keys[:half], keys[:1], keys]
    per = len(xs) // len(subsets)
    batches = []
    for i, cols in enumerate(subsets):
        batch = [{c: x[c] for c in cols} for x in xs[i * per : (i + 1) * per]]
        if i >= 1:
            batch[0][cols[-1]] = None  # a missing value, as learn_one reads None
            batch[1]["no-such-feature"] = 1.0
        batches.append(batch)
    return batches


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_learn_many_is_a_learn_one_loop_bit_for_bit(cls):
    xs, ys = _rows(100)
    one = cls(learners=4, seed=3, classes=CLASSES)
    many = one.clone()
    start = 0
    for batch in _batches(xs):
        targets = ys[start : start + len(batch)]
        start += len(batch)
        for x, y in zip(batch, targets, strict=True):
            one.learn_one(x, y)
        # None in a frame is NaN, a missing value, as None in a dict
        frame = pd.DataFrame(batch).astype(float)
        many.learn_many(frame, pd.Series(targets, index=frame.index + 1000))
        assert pickle.dumps(many) == pickle.dumps(one)
    assert many.feature_names_in_ == sorted(xs[0])[len(xs[0]) // 2 :]
    assert one.t_ == many.t_ == start


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_predictions_of_a_batch_are_the_one_row_predictions(cls):
    xs, ys = _rows(440)
    model = cls(learners=4, seed=3, classes=CLASSES)
    model.learn_many(pd.DataFrame(xs[:400]), ys[:400])
    query = pd.DataFrame(xs[400:], index=[f"r{i}" for i in range(40)])
    query["sky-blue"] = 0.0  # a column of no feature: ignored, as in a dict
    query = query.drop(columns=[sorted(xs[0])[3]])  # an absent feature: missing
    before = pickle.dumps(model)
    proba = model.predict_proba_many(query)
    labels = model.predict_many(query)
    assert pickle.dumps(model) == before
    assert list(proba.columns) == CLASSES
    assert list(proba.index) == list(labels.index) == list(query.index)
    dicts = query.to_dict("records")
    assert [proba.loc[i].to_dict() for i in query.index] == [
        model.predict_proba_one(x) for x in dicts
    ]
    assert labels.tolist() == [model.predict_one(x) for x in dicts]
    # the rows' probabilities differ: the comparison above is not of constants
    assert len({tuple(row) for row in proba.to_numpy()}) > 1


@pytest.mark.parametrize("cls", [AdaBoostOLM, OnlineMBBM], ids=lambda c: c.__name__)
def test_before_the_first_batch_predictions_are_uniform(cls):
    model = cls(learners=3, seed=0, classes=CLASSES)
    xs, _ = _rows(2)
    proba = model.predict_proba_many(pd.DataFrame(xs))
    assert proba.to_numpy().tolist() == [[1 / 7] * 7] * 2
    assert model.predict_many(pd.DataFrame(xs)).tolist() == [CLASSES[0]] * 2
    empty = model.predict_many(pd.DataFrame(xs).iloc[:0])
    assert empty.empty


def test_bad_batches_raise_before_any_change():
    xs, ys = _rows(40)
    model = AdaBoostOLM(learners=3, seed=0, classes=CLASSES)
    model.learn_many(pd.DataFrame(xs[:20]), ys[:20])
    before = pickle.dumps(model)
    frame = pd.DataFrame(xs[20:])
    with pytest.raises(TypeError, match="X must be a pandas DataFrame"):
        model.learn_many(frame.to_numpy(), ys[20:])
    with pytest.raises(TypeError, match="X must be a pandas DataFrame"):
        model.predict_many(xs[20:])
    with pytest.raises(ValueError, match="unknown class 'mud'"):
        model.learn_many(frame, ys[20:-1] + ["mud"])
    with pytest.raises(ValueError, match="y has 19 values for 20 rows|19"):
        model.learn_many(frame, ys[20:-1])
    inf = frame.copy()
    inf.iloc[5, 2] = np.inf
    where = f"infinite value \\(inf\\) at row 5, column {frame.columns[2]!r}"
    with pytest.raises(ValueError, match=where):
        model.learn_many(inf, ys[20:])
    assert pickle.dumps(model) == before
    # the classes are needed up front, as for learn_one
    fresh = AdaBoostOLM(learners=3, seed=0)
    with pytest.raises(ValueError, match="the classes are unknown"):
        fresh.learn_many(frame, ys[20:])
    assert pickle.dumps(fresh) == pickle.dumps(AdaBoostOLM(learners=3, seed=0))


def test_strict_committee_refuses_a_batch_with_other_columns():
    xs, ys = _rows(30)
    strict = VFDTCommittee(missing="error")
    model = AdaBoostOLM(strict, learners=3, seed=0, classes=CLASSES)
    model.learn_many(pd.DataFrame(xs[:20]), ys[:20])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="other columns than the model's features"):
        model.learn_many(pd.DataFrame(xs[20:]).iloc[:, 1:], ys[20:])
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
def test_is_a_mini_batch_classifier_that_rivers_checks_cover(cls):
    model = cls(learners=3, seed=0, classes=CLASSES)
    assert isinstance(model, base.MiniBatchClassifier)
    assert {check.__name__ for check in checks.yield_checks(model)} >= MINI_BATCH_CHECKS


def test_a_pipeline_learns_and_predicts_mini_batches():
    xs, ys = _rows(150)
    scaler = preprocessing.StandardScaler()
    pipeline = scaler | AdaBoostOLM(learners=4, seed=1, classes=CLASSES)
    for start in range(0, 100, 25):
        pipeline.learn_many(pd.DataFrame(xs[start : start + 25]), pd.Series(ys[start : start + 25]))
    query = pd.DataFrame(xs[100:])
    booster = pipeline.steps[list(pipeline.steps)[-1]]
    scaled = scaler.transform_many(query)
    assert pipeline.predict_many(query).tolist() == booster.predict_many(scaled).tolist()
    # it learned: better than the most common class of the query rows
    accuracy = float(np.mean(pipeline.predict_many(query).to_numpy() == np.array(ys[100:])))
    majority = max(ys[100:].count(c) for c in CLASSES) / 50
    assert accuracy > majority


def test_a_batch_with_integer_column_names_starts_the_model_a_dict_would():
    """The columns of the first batch are the keys of a first dict, whatever their type: sorted
    by their text (1, 10, 3) and kept as the features' names, by which later dicts are read."""
    xs, ys = _rows(40)
    keys = sorted(xs[0])
    as_ints = [{[3, 1, 10, 2][i % 4] * 100 + i: x[key] for i, key in enumerate(keys)} for x in xs]
    one = AdaBoostOLM(learners=3, seed=2, classes=CLASSES)
    many = one.clone()
    for x, y in zip(as_ints, ys, strict=True):
        one.learn_one(x, y)
    many.learn_many(pd.DataFrame(as_ints[:20]), ys[:20])
    for x, y in zip(as_ints[20:], ys[20:], strict=True):
        many.learn_one(x, y)
    assert many.feature_names_in_ == sorted(as_ints[0], key=str)
    assert pickle.dumps(many) == pickle.dumps(one)


def test_batches_the_model_cannot_read_by_name_are_refused_unchanged():
    # a first batch naming a column twice started a model of 2 names over 4 columns, which
    # then refused every input; a model started on an array (no feature names) read a batch
    # by position, its column names ignored, where learn_one refuses a dict
    xs, ys = _rows(30)
    fresh = AdaBoostOLM(learners=3, seed=0, classes=CLASSES)
    twice = pd.DataFrame(xs[:10])
    twice.columns = [twice.columns[0], *twice.columns[:-1]]
    for model in (fresh, fresh.clone()):
        if model is not fresh:
            model.learn_many(pd.DataFrame(xs[:10]), ys[:10])
        before = pickle.dumps(model)
        with pytest.raises(ValueError, match=f"X names a column twice \\({twice.columns[0]!r}"):
            model.learn_many(twice, ys[:10])
        assert pickle.dumps(model) == before
    on_arrays = AdaBoostOLM(learners=3, seed=0, classes=CLASSES)
    on_arrays.learn(pd.DataFrame(xs[:10]).to_numpy(), ys[:10])
    before = pickle.dumps(on_arrays)
    for call in (
        lambda: on_arrays.learn_many(pd.DataFrame(xs[10:]), ys[10:]),
        lambda: on_arrays.predict_many(pd.DataFrame(xs[10:])),
        lambda: on_arrays.predict_proba_many(pd.DataFrame(xs[10:])),
    ):
        with pytest.raises(TypeError, match="features have no names"):
            call()
    assert pickle.dumps(on_arrays) == before
    # a text cell is named by its column, as a dict's value by its key
    text = pd.DataFrame(xs[:10])
    text[text.columns[3]] = text[text.columns[3]].astype(object)
    text.iloc[4, 3] = "x"
    for model in (fresh, fresh.clone().learn(pd.DataFrame(xs[:10]), ys[:10])):
        with pytest.raises(TypeError, match=f"row 4, column {text.columns[3]!r} is 'x'"):
            model.learn_many(text, ys[:10])
