"""Checks that names keep their identity (part of :mod:`olboost.checks`): class and label names
of every kind a user gives (integers in another order, NumPy scalars, strings, tuples, floats,
bools) are the same names on every path of a booster or ranker.

* :func:`check_booster_bools_apart`: a bool is never the class or label 0 or 1, in targets (one
  row and arrays) and in ``set_params`` / ``clone`` of the outputs parameter.
* :func:`check_booster_tuple_names`: tuple classes and labels on every array path, as
  ``learn_one`` takes them.
* :func:`check_booster_own_objects`: ``predict_many`` gives the model's own class objects, as
  ``predict_one``.
* :func:`check_booster_names_array_path`: the array paths and the evaluation protocols over a
  data set end in the same model, bit for bit, as the one-at-a-time path over the same rows.
* :func:`check_booster_names_frames_and_arrays`: the same over DataFrames, Series and arrays of
  the names.

The parts that build DataFrames run where pandas is installed (it comes with River).
"""

from __future__ import annotations

import pickle

import numpy as np

from olboost.checks import _is_ranker, _learned, _n_outputs, _state_bytes, _stream

# ------------------------------------------------------------------------------ helpers


def _name_variants(k: int) -> dict[str, list]:
    """Output names of ``k`` values of each kind a user may give."""
    out = {
        "ints in another order": [(3 * j + 1) % k if k % 3 else (k - 1 - j) for j in range(k)],
        "numpy ints": [np.int64(10 + j) for j in range(k)],
        "strings": [f"c{j}" for j in range(k)],
        "numpy strings": [np.str_(f"s{j}") for j in range(k)],
        "tuples": [(j, "t") for j in range(k)],
        "floats": [0.5 + j for j in range(k)],
    }
    if k == 2:
        out["bools"] = [True, False]
    else:  # bools beside other names (distinct as a set: no 0 or 1 among them)
        out["bools beside ints"] = [False, True] + [j + 2 for j in range(k - 2)]
    assert sorted(out["ints in another order"]) == list(range(k))
    return out


def _renamed(model, names: list):
    """A clone of ``model`` whose outputs are ``names`` (seeded)."""
    params = {model._outputs_param: list(names)}
    if "seed" in model._param_names() and model.seed is None:
        params["seed"] = 5
    return model.clone(params)


def _stream_named(model, n: int):
    """``n`` rows of the suite's stream, the targets given by the model's outputs. Returns
    ``X``, the one-row targets and the array targets (a label matrix in the order of the
    outputs for a ranker, the class list for a classifier)."""
    X, ys = _stream(model, n)
    if _is_ranker(model):
        return X, ys, _label_matrix(model._outputs(), ys)
    return X, ys, list(ys)


def _label_matrix(outputs: list, ys: list) -> np.ndarray:
    """The label sets ``ys`` as a matrix whose columns are ``outputs``."""
    where = {o: j for j, o in enumerate(outputs)}
    Y = np.zeros((len(ys), len(outputs)), dtype=bool)
    for i, y in enumerate(ys):
        for label in y:
            Y[i, where[_key(label, outputs)]] = True
    return Y


def _key(label, outputs):
    """``label``'s object among ``outputs`` (bools apart from 0 and 1)."""
    from olboost.feedback import bool_apart

    for o in outputs:
        if bool_apart(o) == bool_apart(label):
            return o
    raise KeyError(label)


def _one_at_a_time(model, X, ys):
    for x, y in zip(X, ys, strict=True):
        model.learn_one(x, y)
    return model


def _frame(X):
    import pandas as pd

    return pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])


def _dicts(X):
    return [{f"f{j}": float(v) for j, v in enumerate(row)} for row in X]


def _dataset(model, names, X, ys):
    """A data set of the rows, its classes / labels ``names`` in the model's order."""
    from olboost.datasets import MulticlassDataset, MultiLabelDataset

    features = [f"f{j}" for j in range(X.shape[1])]
    outputs = model._outputs()
    if _is_ranker(model):
        return MultiLabelDataset("names", X, _label_matrix(outputs, ys), features, list(names))
    where = {o: j for j, o in enumerate(outputs)}
    codes = np.array([where[_key(y, outputs)] for y in ys])
    return MulticlassDataset("names", X, codes, features, list(names))


def _same_bytes(a, b, what: str) -> None:
    pa, pb = pickle.dumps(a), pickle.dumps(b)
    if pa != pb:
        detail = ""
        if _state_bytes(a) == _state_bytes(b):
            detail = " (equal without pickle's memo: shared objects only)"
        else:
            la, lb = _learned(a), _learned(b)
            diff = sorted(
                k for k in set(la) | set(lb)
                if k not in la or k not in lb or _state_bytes(la[k]) != _state_bytes(lb[k])
            )  # fmt: skip
            priv = sorted(
                k for k in set(vars(a)) | set(vars(b))
                if not k.endswith("_") and (
                    k not in vars(a) or k not in vars(b)
                    or _state_bytes(vars(a)[k]) != _state_bytes(vars(b)[k])
                )
            )  # fmt: skip
            detail = f" (learned attributes that differ: {diff}; others: {priv})"
        raise AssertionError(f"{what}: the models differ{detail}")


# ------------------------------------------------------------------------------ (a) bools


def _refused(what: str, model, method, *args, **kwargs) -> None:
    """``method(*args, **kwargs)`` raises a ``ValueError`` or ``TypeError`` and leaves
    ``model`` as it was."""
    before = pickle.dumps(model)
    try:
        method(*args, **kwargs)
    except (ValueError, TypeError):
        pass
    else:
        raise AssertionError(f"{what} must be refused")
    assert pickle.dumps(model) == before, f"a refused {what} changed the model"


def check_booster_bools_apart(model) -> None:
    """A bool is never the class or label 0 or 1: a model of outputs ``[0, 1, ...]`` refuses
    ``True`` / ``False`` as targets (one row, arrays) and the parameter ``[False, True, ...]``
    once started; a model of outputs ``[False, True, ...]`` refuses ``0`` / ``1`` alike and
    keeps its bools (predict_one returns ``True``, not ``1``); the same names as a tuple are no
    change."""
    k = _n_outputs(model)
    param = model._outputs_param
    ints = list(range(k))
    bools = [False, True] + list(range(2, k))
    for mine, other in ((ints, bools), (bools, ints)):
        m = _renamed(model, mine)
        X, ys, _ = _stream_named(m, 12)
        _one_at_a_time(m, X[:6], ys[:6])
        outs = m._outputs()
        assert [type(o) for o in outs] == [type(o) for o in mine], "outputs changed type"
        pair = [other[1], other[0]]
        if _is_ranker(m):
            _refused(f"label {other[1]!r} to {mine}", m, m.learn_one, X[6], {other[1]})
            _refused(f"label {other[0]!r} to {mine}", m, m.learn_one, X[6], {other[0]: True})
            what = f"labels {pair!r} in a list of targets to {mine}"
            _refused(what, m, m.learn, X[6:8], [{other[1]}, {other[0]}])
        else:
            _refused(f"class {other[1]!r} to {mine}", m, m.learn_one, X[6], other[1])
            _refused(f"classes {pair!r} in learn to {mine}", m, m.learn, X[6:8], pair)
            what = f"classes {np.array(pair)!r} in learn to {mine}"
            _refused(what, m, m.learn, X[6:8], np.array(pair))
            what = f"classes {pair!r} in predict_then_learn to {mine}"
            _refused(what, m, m.predict_then_learn, X[6:8], pair)
            p = m.predict_one(X[7])
            assert any(p is o or (type(p) is type(o) and p == o) for o in outs), (
                f"predict_one gave {p!r}, none of the model's own {outs}"
            )
        # the parameter: the other kind is a change (refused once started), a tuple is not
        _refused(f"set_params({param}={other})", m, m.set_params, **{param: list(other)})
        what = f"clone({param}={other}, include_attributes=True)"
        _refused(what, m, m.clone, {param: list(other)}, include_attributes=True)
        before = pickle.dumps(m)
        m.set_params(**{param: tuple(mine)})
        m.set_params(**{param: list(mine)})
        assert pickle.dumps(m) == before, "the same names again changed the model"


# ------------------------------------------------------------------------------ (b) tuples


def check_booster_tuple_names(model) -> None:
    """Tuple classes / labels (equally long, which NumPy takes apart) on every path as learn_one
    takes them: the array path learns the same model, predict / predict_many / score give
    one value per row (the tuples themselves), a data set of tuple names is taken by name."""
    import pandas as pd

    k = _n_outputs(model)
    names = [(j, "t") for j in range(k)]
    base = _renamed(model, names)
    X, ys, Yarr = _stream_named(base, 10)
    one = _one_at_a_time(base.clone(), X, ys)
    if not hasattr(base, "show_one"):
        many = base.clone()
        many.learn(X, Yarr)
        _same_bytes(one, many, "learn over tuple names vs learn_one")
    if _is_ranker(base):
        s = one.score_one(X[0])
        assert list(s) == names, f"score_one's keys {list(s)} are not the labels {names}"
        assert sorted(one.rank_one(X[0])) == names
        assert one.score(X[:3]).shape == (3, k)
        p = one.predict_one(X[0])
        assert set(p) == set(names)
        if hasattr(one, "predict_many"):
            pm = one.predict_many(_frame(X[:3]))
            assert list(pm.columns) == names
    else:
        predicted = one.predict(X)
        assert predicted.shape == (len(X),), f"predict gave shape {predicted.shape}"
        assert list(predicted) == [one.predict_one(x) for x in X]
        dict_model = _one_at_a_time(base.clone(), _dicts(X), ys)
        pm = dict_model.predict_many(_frame(X))
        assert list(pm) == [dict_model.predict_one(x) for x in _dicts(X)]
        assert all(type(v) is tuple for v in pm), f"predict_many gave {list(pm)}"
        proba = dict_model.predict_proba_many(_frame(X[:3]))
        assert proba.shape == (3, k), f"predict_proba_many gave shape {proba.shape}"
        assert not isinstance(proba.columns, pd.MultiIndex), (
            "predict_proba_many's columns are a MultiIndex of the tuples' members, not the classes"
        )
        assert list(proba.columns) == names
        assert proba.iloc[0].to_dict() == dict_model.predict_proba_one(_dicts(X)[0])
        batch = base.clone()
        batch.learn_many(_frame(X), pd.Series(ys, dtype=object))
        _same_bytes(dict_model, batch, "learn_many over tuple classes vs learn_one of dicts")
    # a data set of tuple names, read by name
    from olboost.evaluate import prequential

    data = _dataset(base, names, X, ys)
    via_data = base.clone()
    prequential(via_data, data)
    via_rows = base.clone()
    prequential(via_rows, list(data))
    _same_bytes(via_data, via_rows, "prequential over a data set of tuple names vs its rows")


# ------------------------------------------------------------------------------ (c) objects


def check_booster_own_objects(model) -> None:
    """predict_many (a Series) holds the model's own class objects, as predict_one returns
    them, for every kind of name; predict_proba_many's columns are those objects too."""
    if _is_ranker(model):
        return
    for kind, names in _name_variants(_n_outputs(model)).items():
        m = _renamed(model, names)
        X, ys, _ = _stream_named(m, 10)
        _one_at_a_time(m, _dicts(X), ys)
        outs = m._outputs()
        pm = list(m.predict_many(_frame(X)))
        po = [m.predict_one(x) for x in _dicts(X)]
        assert pm == po, f"{kind}: predict_many {pm} != predict_one {po}"
        assert [type(v) for v in pm] == [type(v) for v in po], (
            f"{kind}: predict_many's types {[type(v) for v in pm]} are not predict_one's"
        )
        assert all(type(v) in {type(o) for o in outs} for v in po), (
            f"{kind}: predict_one's types {[type(v) for v in po]} are not the classes'"
        )
        from olboost.feedback import bool_apart

        # equal names, bools apart (pandas' Index gives NumPy integer names back as ints)
        cols = list(m.predict_proba_many(_frame(X[:2])).columns)
        assert [bool_apart(c) for c in cols] == [bool_apart(o) for o in outs], (
            f"{kind}: predict_proba_many's columns {cols!r} are not the classes {outs!r}"
        )


# ------------------------------------------------------------------------------ (d) paths


def check_booster_names_array_path(model) -> None:
    """For outputs of every kind of name, the array path and the one-at-a-time path over the
    same rows end in the same model, bit for bit (``pickle.dumps``): learn / predict_then_learn
    / score_then_learn, learn_many over a DataFrame against learn_one of dicts, and
    prequential (and train_test, for a ranker) over a data set against over its rows; a data
    set naming the model's names in another order is read by name."""
    import pandas as pd

    from olboost.evaluate import prequential, train_test

    topk = hasattr(model, "show_one")
    for kind, names in _name_variants(_n_outputs(model)).items():
        base = _renamed(model, names)
        X, ys, Yarr = _stream_named(base, 12)
        one = _one_at_a_time(base.clone(), X, ys)
        if not topk:
            learned = base.clone()
            learned.learn(X, Yarr)
            _same_bytes(one, learned, f"{kind}: learn vs learn_one")
            stepped = base.clone()
            if _is_ranker(base):
                stepped.score_then_learn(X, Yarr)
            else:
                stepped.predict_then_learn(X, Yarr)
            _same_bytes(one, stepped, f"{kind}: score/predict_then_learn vs learn_one")
            if _is_ranker(base):
                listed = base.clone()
                listed.learn(X, ys)  # a list of targets as learn_one takes them
                _same_bytes(one, listed, f"{kind}: learn of a list of sets vs learn_one")
            else:
                dict_one = _one_at_a_time(base.clone(), _dicts(X), ys)
                batch = base.clone()
                batch.learn_many(_frame(X), pd.Series(ys, dtype=object))
                _same_bytes(dict_one, batch, f"{kind}: learn_many vs learn_one of dicts")
        # a data set (its array path) against its rows one at a time
        data = _dataset(base, names, X, ys)
        a, b = base.clone(), base.clone()
        prequential(a, data)
        prequential(b, list(data))
        _same_bytes(a, b, f"{kind}: prequential over a data set vs its rows")
        if not topk and _is_ranker(base):
            c = base.clone()
            prequential(c, list(zip(X, ys, strict=True)))
            _same_bytes(a, c, f"{kind}: prequential over a data set vs learn_one's targets")
        if _is_ranker(base):
            a, b = base.clone(), base.clone()
            train_test(
                a, _dataset(base, names, X[:6], ys[:6]), _dataset(base, names, X[6:], ys[6:])
            )
            rows = list(data)
            train_test(b, rows[:6], rows[6:])
            _same_bytes(a, b, f"{kind}: train_test over data sets vs over their rows")
        # the data set naming the model's outputs in another order: read by name
        perm = list(reversed(range(len(names))))
        shuffled = [names[j] for j in perm]
        data2 = _dataset(base.clone({base._outputs_param: shuffled}), shuffled, X, ys)
        a = base.clone()
        prequential(a, data2)
        b = base.clone()
        prequential(b, list(data2))
        _same_bytes(a, b, f"{kind}: prequential over a reordered data set vs its rows")
        _same_bytes(a, _prequential_rows(base, X, ys), f"{kind}: reordered data set vs rows")


def _prequential_rows(base, X, ys):
    from olboost.evaluate import prequential

    m = base.clone()
    prequential(m, list(zip(X, ys, strict=True)))
    return m


# ------------------------------------------------------------------------------ (b)+(d) frames


def check_booster_names_frames_and_arrays(model) -> None:
    """(b)/(d) on the named containers: a ranker's label DataFrame whose columns are the
    labels (any kind, in another order) learns as learn_one of the same sets (a top-k
    booster's, whose array path plays the user who clicks, as its label matrix), and a ranker
    taking its labels from such a frame keeps them as they are (tuples, bools, NumPy scalars);
    a classifier's y given as a NumPy array or a pandas Series of the names learns as
    learn_one of the names."""
    import pandas as pd

    topk = hasattr(model, "show_one")
    for kind, names in _name_variants(_n_outputs(model)).items():
        base = _renamed(model, names)
        X, ys, Yarr = _stream_named(base, 12)
        if topk:
            one = base.clone()
            one.learn(X, Yarr)
        else:
            one = _one_at_a_time(base.clone(), X, ys)
        if _is_ranker(base):
            perm = list(reversed(range(len(names))))
            frame = pd.DataFrame(
                Yarr[:, perm],
                columns=pd.Index([names[j] for j in perm], dtype=object, tupleize_cols=False),
            )
            via_frame = base.clone()
            via_frame.learn(X, frame)
            what = "its matrix" if topk else "learn_one"
            _same_bytes(one, via_frame, f"{kind}: learn of a label frame (reordered) vs {what}")
            fresh = base.clone({base._outputs_param: None})
            straight = pd.DataFrame(
                Yarr, columns=pd.Index(list(names), dtype=object, tupleize_cols=False)
            )
            fresh.learn(X, straight)
            got = fresh._outputs()
            assert [type(g) for g in got] == [type(n) for n in names] and got == list(names), (
                f"{kind}: labels taken from a frame are {got!r}, not its columns {names!r}"
            )
        else:
            y_series = base.clone()
            y_series.learn(X, pd.Series(ys, dtype=object))
            _same_bytes(one, y_series, f"{kind}: learn of a Series of classes vs learn_one")
            if kind != "tuples":
                arr = np.array(ys)
                if kind == "bools beside ints":
                    continue  # NumPy makes them ints: refused, checked in (a)
                via_arr = base.clone()
                via_arr.learn(X, arr)
                _same_bytes(
                    one, via_arr, f"{kind}: learn of np.array(y) ({arr.dtype}) vs learn_one"
                )
