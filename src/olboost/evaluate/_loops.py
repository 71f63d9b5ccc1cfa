"""The streaming loops of the protocols: each example scored (or predicted), then learned,
on a data set's array path in blocks or on an iterable one ``(x, y)`` pair at a time."""

from __future__ import annotations

import copy
import numbers
import time
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from olboost._interrupt import between_rows
from olboost.evaluate._inputs import _is_classification_data, _is_dataset
from olboost.evaluate._results import ClassificationEvaluation, Evaluation
from olboost.feedback import bool_apart, is_positions
from olboost.metrics import rank_loss
from olboost.online.labels import object_vector, relevant_in_mapping
from olboost.online.learner import shown_names

#: Rows handed to the model per call on the array path: as many as keep its scores (rows x
#: outputs, float64) near 8 MB, from 256 to 4,096 rows (:func:`_chunk_rows`). Results do not
#: depend on it (the model learns the rows in order whatever the blocks); a call costs about a
#: millisecond in Python besides its rows (checks, and Numba's lookup of the compiled kernels it
#: is handed), which at 256 rows was about 5% of a Top-k Adaptive run on yeast (64 calls, cProfile
#: and perf); and the progress bar moves once per call.
_CHUNK_SCORES = 1 << 20
_CHUNK_MIN, _CHUNK_MAX = 256, 4096


def _chunk_rows(n_outputs: int) -> int:
    """Rows per call on the array path for a model of ``n_outputs`` labels or classes."""
    return max(_CHUNK_MIN, min(_CHUNK_MAX, _CHUNK_SCORES // max(n_outputs, 1)))


def require_outputs(data: Any) -> None:
    """Refuse a data set of fewer than 2 classes (``class_names``) or labels (``label_names``).

    A model built without classes or labels takes the data set's, which the constructor's check
    of at least 2 never sees; the boosters are undefined for one (their step sizes divide by
    ``k - 1``) and a one-class stream is trivially predicted right.

    Raises
    ------
    ValueError
        Naming the data set (its ``name``, if it has one) and the count.
    """
    multiclass = hasattr(data, "class_names")
    names = list(data.class_names if multiclass else data.label_names)
    if len(names) >= 2:
        return
    one, many, who = (
        ("class", "classes", "classifier") if multiclass else ("label", "labels", "ranker")
    )
    name = getattr(data, "name", None)
    shown = f" ({', '.join(map(repr, names))})" if names else ""
    raise ValueError(
        f"the data set{f' {name!r}' if name else ''} has {len(names)} "
        f"{one if len(names) == 1 else many}{shown}: a {who} needs at least 2 {many}"
    )


def _counted(model: Any) -> bool:
    """Whether ``model``'s outputs are positions rather than names: given as a count
    (``labels=k`` or ``classes=k``), or a ranker's labels taken from data (a label matrix's
    columns are positions; so are a data set's labels named ``0 .. k - 1``), so that its
    outputs ``0 .. k - 1`` may stand for a data set's columns or codes by position (in a later
    call: within one, the outputs taken from its first split are that split's names, see
    :func:`check_splits`). A classifier's classes taken from ``y`` are the values of ``y``:
    names."""
    param = getattr(model, "_outputs_param", "labels")
    count = getattr(model, param, None)
    if count is None:
        return param == "labels"
    return isinstance(count, numbers.Integral) and not isinstance(count, bool)


def _by_position(counted: bool, known: list, names: list) -> bool:
    """Whether a model of outputs ``known`` reads a data set's outputs ``names`` by position:
    they are ``0 .. k - 1``, not named by its user (:func:`_counted`), and the data set names
    none of them (names that are those integers are read by name, as the ``(x, y)`` pairs of
    the same data set are; some of them beside others would be read either way: refused)."""
    return (
        counted
        and len(known) == len(names)
        and is_positions(known)
        and not {bool_apart(c) for c in known} & {bool_apart(c) for c in names}
    )


def _class_map(known: list, names: list, counted: bool = False) -> np.ndarray | None:
    """The model's code of each class of a data set of classes ``names``, for a model of classes
    ``known`` (``None``: the same codes), named by no one if ``counted`` (:func:`_by_position`);
    a ``ValueError`` if the model does not know one."""
    keys, named = [bool_apart(c) for c in known], [bool_apart(c) for c in names]
    if keys == named:
        return None
    if not set(named) <= set(keys):
        if _by_position(counted, known, names):
            return None
        raise ValueError(f"the data set has classes {names} the model does not know ({known})")
    where = {c: j for j, c in enumerate(keys)}
    return np.array([where[c] for c in named])


def _class_codes(model: Any, stream: Any) -> np.ndarray:
    """``stream.y`` as the model's class codes (a model without classes takes the data's, of
    which there must be at least 2: :func:`require_outputs`)."""
    names = list(stream.class_names)
    if not _has_outputs(model):
        require_outputs(stream)
        model._set_outputs(names)
    codes = _class_map(list(model._outputs()), names, _counted(model))
    return np.asarray(stream.y) if codes is None else codes[np.asarray(stream.y)]


def _classification_step(model: Any, X: Any, outputs: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """One block of the array path: predict, then learn; which rows were predicted right."""
    votes = model.predict_then_learn(X, outputs[codes])
    return np.argmax(votes, axis=1) == codes


def _run_classification(model: Any, stream: Any, progress: Any) -> np.ndarray:
    """Prequential pass of a multiclass booster; returns which examples were predicted right."""
    if _is_classification_data(stream):
        codes = _class_codes(model, stream)
        outputs = object_vector(model._outputs())
        n = len(codes)
        correct = np.empty(n, dtype=bool)
        chunk = _chunk_rows(len(outputs))
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            correct[lo:hi] = _classification_step(model, stream.X[lo:hi], outputs, codes[lo:hi])
            if progress is not None:
                progress.update(hi - lo)
        return correct
    out = []
    # a Ctrl-C comes between examples, not inside one (olboost._interrupt.between_rows)
    with between_rows() as example:
        for i, x, y in _pairs(stream, "stream"):
            with example:
                try:
                    out.append(model.predict_one(x) == y)
                    model.learn_one(x, y)
                except (ValueError, TypeError) as err:
                    raise _at(err, "stream", i) from None
            if progress is not None:
                progress.update(1)
    return np.asarray(out, dtype=bool)


def _label_columns(model: Any, stream: Any) -> np.ndarray:
    """Columns of ``stream.Y`` in the order of the model's labels.

    A model built without labels ranks the data set's labels in the data set's order; a model built
    with ``labels=k`` (or whose labels ``0 .. k - 1`` came from data: :func:`_counted`) takes the
    columns as they are, unless the data set names its labels by those integers (then by name, as
    below; some of them beside other names are refused); a model built with label names must
    name the same labels as the data set, in any order (:func:`_by_position`).
    """
    names = list(stream.label_names)
    # checked first, whatever the model's labels: a model ranks at least 2, so a data set of
    # fewer would fail below anyway, with a message that hides why
    require_outputs(stream)
    if not _has_outputs(model):
        model._set_outputs(names)
    return _label_order(list(model._outputs()), names, _counted(model))


def _label_order(known: list, names: list, counted: bool = False) -> np.ndarray:
    """Columns of a data set of labels ``names`` in the order of a model's labels ``known``,
    named by no one if ``counted`` (the rules of :func:`_label_columns`); a ``ValueError`` if
    they are other labels."""
    keys, named = [bool_apart(c) for c in known], [bool_apart(c) for c in names]
    if keys == named:
        return np.arange(len(names))
    if set(keys) != set(named):
        if _by_position(counted, known, names):
            return np.arange(len(names))
        # the differences named: the first five of each list looked the same where a label
        # beyond them differed (a misspelt sixth label)
        theirs, ours = set(named), set(keys)
        missing = [c for c, key in zip(known, keys, strict=True) if key not in theirs]
        extra = [c for c, key in zip(names, named, strict=True) if key not in ours]
        raise ValueError(
            f"the model ranks labels [{shown_names(known)}], the data set has labels "
            f"[{shown_names(names)}]: "
            + "; ".join(
                text
                for text, part in (
                    (f"the data set lacks the model's [{shown_names(missing)}]", missing),
                    (f"the model lacks the data set's [{shown_names(extra)}]", extra),
                )
                if part
            )
        )
    where = {name: j for j, name in enumerate(named)}
    return np.array([where[label] for label in keys])


def _has_outputs(model: Any) -> bool:
    """Whether ``model`` has its labels or classes (a parameter, or taken from data already)."""
    param = getattr(model, "_outputs_param", "labels")
    return getattr(model, param, None) is not None or hasattr(model, param + "_")


def refuse_other_kind(model: Any, role: str, data: Any) -> None:
    """A ``ValueError`` naming both kinds when ``data`` is a data set of the task ``model`` does
    not learn (multi-label for a multiclass classifier, or the reverse): the model, finding no
    classes (labels) of its kind, asked for them instead ("pass classes=k ... or learn from
    arrays first"), neither of which would run it."""
    from olboost.online import MulticlassLearner

    classify = isinstance(model, MulticlassLearner)
    own, other = (
        (_is_classification_data, _is_dataset)
        if classify
        else (_is_dataset, _is_classification_data)
    )
    if not other(data) or own(data):
        return
    model_kind, data_kind, loader = (
        ("multiclass classifier", "multi-label", "load_uci")
        if classify
        else ("multi-label ranker", "multiclass", "load")
    )
    name = getattr(data, "name", None)
    raise ValueError(
        f"{role}: {type(model).__name__} is a {model_kind} and the data set"
        f"{f' {name!r}' if name else ''} is {data_kind} (data sets of its kind: {loader})"
    )


def check_splits(model: Any, splits: Sequence[tuple[str, Any]]) -> None:
    """Refuse, before ``model`` learns anything, a data set among ``splits`` (``(role, data)``
    pairs, in the order the protocol streams them) that the loops would refuse only on reaching
    it, after the model had learned the streams before it (or a block of its own first rows: the
    model checks one block per call).

    Each data set must have at least 2 labels or classes (:func:`require_outputs`), outputs that
    fit the model's, or those the model takes from the first (the rules of
    :func:`_label_columns` and :func:`_class_codes`), the width of the others and of a started
    model, parameters that fit the outputs the model takes, and values the model accepts: the
    checks its array path makes of a block before learning it (``Rows.of``; a started model's
    committee's row checks too), made here of every row. Iterables of ``(x, y)`` pairs are not
    checked here (they are read once, as they are learned).

    Raises
    ------
    ValueError, TypeError
        Naming the role (``"test split"`` ...) and the problem; the model is unchanged.
    """
    from olboost.online import MulticlassLearner, OnlineLearner
    from olboost.online.inputs import Rows, check_width
    from olboost.online.labels import relevance_matrix

    if not isinstance(model, OnlineLearner):
        return
    classify = isinstance(model, MulticlassLearner)
    is_data = _is_classification_data if classify else _is_dataset
    started = model._started
    known = list(model._outputs()) if _has_outputs(model) else None
    taken_from = None  # the role whose outputs the model takes, if it has none of its own
    by_position = None  # (role, names) of the first split read by position
    width, width_from = None, None
    checked: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for role, data in splits:
        refuse_other_kind(model, role, data)
        if not is_data(data) or id(data) in seen:  # the train split of several loops: once
            continue
        seen.add(id(data))
        try:
            require_outputs(data)
        except ValueError as err:
            raise ValueError(f"{role}: {err}") from None
        names = list(data.class_names if classify else data.label_names)
        if known is None:
            known, taken_from = names, role
        else:
            # outputs taken from the first split are its names, never positions
            counted = taken_from is None and _counted(model)
            try:
                (_class_map if classify else _label_order)(known, names, counted)
            except ValueError as err:
                takes = f" (the model takes the {taken_from}'s)" if taken_from else ""
                raise ValueError(f"{role}: {err}{takes}") from None
            if _by_position(counted, known, names):
                # read by position, one split's names in another's order would be other
                # outputs under the same names
                if by_position is None:
                    by_position = role, names
                elif names != by_position[1] and set(map(bool_apart, names)) == set(
                    map(bool_apart, by_position[1])
                ):
                    raise ValueError(
                        f"{role}: the data set lists the {by_position[0]}'s "
                        f"{'classes' if classify else 'labels'} in another order, and the "
                        f"model ({known[:3]}...) reads them by position: give the model their "
                        "names, or the splits one order"
                    )
        rows = Rows.of(data.X, role, model._missing_allowed())
        if started:
            check_width("X", rows.d, model.n_features_in_, role)
        elif width is None:
            width, width_from = rows.d, role
        elif rows.d != width:
            raise ValueError(f"{role}: X has {rows.d} features, the {width_from} has {width}")
        if not classify:
            relevance_matrix(data.Y, rows.n, role)
        checked.append((role, rows))
    if not started and taken_from is not None:
        # the model takes the data's outputs before it starts, and its start checks its
        # parameters against them (a top-k booster's k against the number of labels): checked
        # on a shallow copy, so that the model does not keep outputs it was refused with
        probe = copy.copy(model)
        probe._set_outputs(known)
        probe._check_params()
    # the committee's own conditions on rows (nominal codes ...), which an unstarted model's
    # committee checks from its parameters: the model checks them only block by block, as it
    # reaches them, after learning the blocks and splits before
    for role, rows in checked:
        try:
            model._check_rows(rows)
        except ValueError as err:
            raise ValueError(f"{role}: {err}") from None


def _run(
    model: Any, stream: Any, mode: str, progress: Any, role: str, user: Any = None
) -> tuple[int, np.ndarray, np.ndarray]:
    """Stream ``stream`` (the ``role`` split) through ``model``, scoring each example before
    learning it (under ``mode`` feedback, the clicks of ``user`` if one is given: a
    :class:`~olboost.feedback.TopkUser` of its own, played in Python, data sets included);
    return the number of examples and the per-example losses (paper, skip)."""
    if _is_dataset(stream) and user is None:
        n = stream.n_samples
        Y = stream.Y[:, _label_columns(model, stream)]
        losses = np.empty(n)
        chunk = _chunk_rows(Y.shape[1])
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            losses[lo:hi] = _ranking_step(model, stream.X[lo:hi], Y[lo:hi])
            if progress is not None:
                progress.update(hi - lo)
        pairless = _pairless(Y)
    else:
        if user is not None:

            def one(model: Any, x: Any, y: Any) -> tuple[float, np.ndarray]:
                return _show_then_learn(model, x, y, user)

            pairs = _dataset_pairs(model, stream) if _is_dataset(stream) else stream
        else:
            one = _show_then_learn if mode == "topk" else _score_then_learn
            pairs = stream
        # what the result keeps, a double and a byte an example: a list of floats and a mask
        # of the k labels for every example took about 200 bytes an example at 6 labels and
        # 2 kB at 1,000 (an audit, session 51), for a stream of any length
        n, losses_a, pairless_a = 0, array("d"), bytearray()
        with between_rows() as example:
            for i, x, y in _pairs(pairs, role):
                n += 1
                with example:
                    try:
                        loss, mask = one(model, x, y)
                    except (ValueError, TypeError) as err:
                        raise _at(err, role, i) from None
                losses_a.append(loss)
                pairless_a.append(bool(_pairless(mask[None, :])[0]))
                if progress is not None:
                    progress.update(1)
        losses = np.frombuffer(losses_a, dtype=float).copy()
        pairless = np.frombuffer(pairless_a, dtype=bool).copy()
    # the "skip" convention differs from the paper's only on examples without a pair
    return n, losses, np.where(pairless, np.nan, losses)


def _dataset_pairs(model: Any, data: Any) -> Iterator[tuple[Any, frozenset]]:
    """A data set's ``(x, y)`` pairs with ``y`` in the model's labels, its columns matched to
    them as the array path matches them (:func:`_label_columns`)."""
    Y = data.Y[:, _label_columns(model, data)]
    labels = model._outputs()
    for (x, _), row in zip(data, Y, strict=True):
        yield x, frozenset(labels[j] for j in np.flatnonzero(row))


def _pairs(stream: Iterable, role: str) -> Iterator[tuple[int, Any, Any]]:
    """``(i, x, y)`` for the ``i``-th item of ``stream``, which must be an ``(x, y)`` pair
    (Python's "cannot unpack non-iterable int object" named neither)."""
    for i, item in enumerate(stream):
        try:
            x, y = item
        except (TypeError, ValueError):
            length = f" of length {len(item)}" if hasattr(item, "__len__") else ""
            raise TypeError(
                f"{role} example {i}: an (x, y) pair is expected, got {type(item).__name__}{length}"
            ) from None
        yield i, x, y


def _at(err: ValueError | TypeError, role: str, i: int) -> BaseException:
    """The model's refusal ``err`` of an example of a stream of pairs, with its position in
    the stream (the array path names the row; this one said only what was wrong), and its
    own traceback (where a model's bug raised it). A subclass keeps its own arguments."""
    if type(err) not in (ValueError, TypeError):
        return err
    return type(err)(f"{role} example {i}: {err}").with_traceback(err.__traceback__)


def _ranking_step(model: Any, X: Any, Y: np.ndarray) -> np.ndarray:
    """One block of the array path: score, then learn; the rank losses (paper convention) of the
    scores. A top-k booster's array path plays the user and returns the shown rankings."""
    scores = model.score_then_learn(X, Y)
    return rank_loss(scores, Y, empty="paper")


def _pairless(Y: np.ndarray) -> np.ndarray:
    """Rows without a relevant/irrelevant pair (excluded by the ``skip`` convention)."""
    return ~Y.any(axis=1) | Y.all(axis=1)


def _relevant(y: Any) -> Any:
    """The relevant labels of a target: a set (or sequence) of labels, or River's ``{label:
    bool}``, whose relevant labels are those mapped to True (not its keys)."""
    if isinstance(y, Mapping):
        return set(relevant_in_mapping(y, "y"))
    if isinstance(y, str | bytes) or not isinstance(y, Collection):
        # a single label (a multiclass stream's): "argument of type 'int' is not iterable"
        raise TypeError(
            f"y must be the set of relevant labels (or River's {{label: bool}}), got "
            f"{type(y).__name__} {y!r}; for a single relevant label, pass {{{y!r}}}"
        )
    return y


def _score_then_learn(model: Any, x: Any, y: Any) -> tuple[float, np.ndarray]:
    """Full feedback, one example: score, record the loss, learn from the relevant set."""
    relevant = _relevant(y)
    scores = model.score_one(x)
    s = np.fromiter(scores.values(), float, len(scores))
    mask = np.array([label in relevant for label in scores])
    loss = rank_loss(s, mask, empty="paper")
    model.learn_one(x, y)
    return loss, mask


def _show_then_learn(model: Any, x: Any, y: Any, user: Any = None) -> tuple[float, np.ndarray]:
    """Top-k feedback, one example: the model shows its randomised ranking, the loss of that
    ranking is recorded, and the model learns which of the ``k`` labels it showed are relevant
    (a :class:`~olboost.feedback.TopkFeedback`: nothing about the labels it did not show), or
    which of them ``user`` clicked (:meth:`~olboost.feedback.TopkUser.clicks`)."""
    labels = model._outputs()
    # checked as learn_one checks a target (a bool is no label, River's dict has known keys and
    # bool values), before the first show_one, which starts the model; _outputs raises, changing
    # nothing, when the model does not know its labels yet
    mask = model._check_y(y)
    impression = model.show_one(x)
    m = len(labels)
    position = {label: p for p, label in enumerate(impression.ranking)}
    s = np.array([m - position[label] for label in labels], dtype=float)
    loss = rank_loss(s, mask, empty="paper")
    if user is None:
        shown = zip(impression.labels, impression.shown, strict=True)
        clicked = [label for label, i in shown if mask[i]]
    else:
        clicked = user.clicks(impression, frozenset(labels[i] for i in np.flatnonzero(mask)))
    model.learn_one(x, impression.feedback(clicked))
    return loss, mask


def _train_test(
    model: Any, train: Iterable, test: Iterable, bar: Any, loops: int, mode: str, user: Any = None
) -> Evaluation:
    t0 = time.perf_counter()
    train_losses = []
    for _ in range(loops):
        n_train, losses, _ = _run(model, train, mode, bar, "train split", user)
        train_losses.append(losses)
    t1 = time.perf_counter()
    n_test, losses, skip = _run(model, test, mode, bar, "test split", user)
    t2 = time.perf_counter()
    return Evaluation(
        losses, skip, n_train, n_test, t1 - t0, t2 - t1,
        train_losses=np.concatenate(train_losses), loops=loops, feedback=mode,
    )  # fmt: skip


def _prequential(
    model: Any, stream: Iterable, bar: Any, mode: str, user: Any = None
) -> Evaluation | ClassificationEvaluation:
    from olboost.online import MulticlassLearner

    if isinstance(model, MulticlassLearner):
        t0 = time.perf_counter()
        correct = _run_classification(model, stream, bar)
        return ClassificationEvaluation(correct, time.perf_counter() - t0)
    t0 = time.perf_counter()
    n, losses, skip = _run(model, stream, mode, bar, "stream", user)
    t1 = time.perf_counter()
    return Evaluation(losses, skip, 0, n, 0.0, t1 - t0, feedback=mode)
