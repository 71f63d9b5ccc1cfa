"""Resumable evaluation (checkpoints): :func:`resumable` runs either protocol on data sets in
steps, handing its :class:`Progress` to a callback, and continues from a saved one bit for
bit."""

from __future__ import annotations

import hashlib
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

import numpy as np
from scipy import sparse

from olboost.evaluate._compiling import WARM_UP_ROWS

# warm_up under another name: resumable's ``warm_up`` argument shadows it
from olboost.evaluate._compiling import warm_up as _warm_up
from olboost.evaluate._inputs import (
    _check_loops,
    _feedback_mode,
    _head,
    _is_classification_data,
    _is_dataset,
    _progress,
    _require_examples,
)
from olboost.evaluate._loops import (
    _chunk_rows,
    _class_codes,
    _classification_step,
    _label_columns,
    _pairless,
    _ranking_step,
    check_splits,
    refuse_other_kind,
)
from olboost.evaluate._results import ClassificationEvaluation, Evaluation
from olboost.feedback import is_bool
from olboost.online.labels import object_vector

if TYPE_CHECKING:
    from olboost.online import MulticlassLearner


@dataclass
class Progress:
    """Where a :func:`resumable` evaluation stands: with the model as it was then, enough to
    continue the evaluation bit for bit.

    Attributes
    ----------
    protocol
        ``"train_test"`` or ``"prequential"``.
    sizes
        Examples of each pass, in order: the train split ``loops`` times then the test split,
        or the one stream.
    done
        Examples learned so far, counted over the passes in order.
    records
        One entry per example of all the passes: its rank loss (paper convention) before it was
        learned, or (a multiclass classifier) whether it was predicted right; the first ``done``
        are filled.
    seconds_train, seconds_test
        Time spent learning so far in each phase (a prequential pass counts as the test phase;
        the callbacks are not timed).
    model_steps
        The model's step count (``t_``) after the ``done`` examples (``None``: a model that
        keeps none), by which a resumed evaluation knows the model saved with the progress.
    data_digest
        SHA-256 of the data sets' features and targets, by which it knows their data.
    names_digest
        SHA-256 of the data sets' class or label names, which say what the targets' codes and
        columns are (``None`` in a progress saved before olboost kept it: then unchecked).
    model_class
        The model's class (module and name), by which a resumed evaluation refuses another
        kind of model that learned as many examples (``None`` in a progress saved before
        olboost kept it: then unchecked). Its parameters are not checked: resume with the model
        saved with the progress.
    """

    protocol: str
    sizes: tuple[int, ...]
    done: int
    records: np.ndarray
    seconds_train: float = 0.0
    seconds_test: float = 0.0
    model_steps: int | None = None
    data_digest: str | None = None
    names_digest: str | None = None
    model_class: str | None = None

    @property
    def total(self) -> int:
        """Examples the evaluation learns in all."""
        return sum(self.sizes)

    @property
    def finished(self) -> bool:
        return self.done == self.total


def _passes(stream: Any, test: Any, loops: Any, classify: bool) -> tuple[str, list[Any]]:
    """The protocol and the streams of its passes, in order; refuses what cannot resume."""
    loops = _check_loops(loops, stream)
    if test is None and loops != 1:
        raise ValueError(f"loops={loops} needs a test split: a prequential pass is one pass")
    if classify and test is not None:
        raise ValueError("a multiclass classifier is evaluated prequentially: pass no test split")
    passes = [stream] * loops + ([] if test is None else [test])
    kind = _is_classification_data if classify else _is_dataset
    if not all(kind(s) for s in passes):
        raise TypeError(
            "resumable evaluation needs data sets (olboost.datasets), which can be read again "
            "from any row; an iterable of (x, y) pairs cannot"
        )
    _require_examples(passes[-1], "test stream" if test is not None else "stream")
    return ("prequential" if test is None else "train_test"), passes


@overload
def resumable(
    model: MulticlassLearner,
    stream: Any,
    test: Any = None,
    *,
    loops: int = 1,
    every: int | None = None,
    on_checkpoint: Callable[[Progress], None] | None = None,
    start: Progress | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> ClassificationEvaluation: ...


@overload
def resumable(
    model: Any,
    stream: Any,
    test: Any = None,
    *,
    loops: int = 1,
    every: int | None = None,
    on_checkpoint: Callable[[Progress], None] | None = None,
    start: Progress | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation: ...


def resumable(
    model: Any,
    stream: Any,
    test: Any = None,
    *,
    loops: int = 1,
    every: int | None = None,
    on_checkpoint: Callable[[Progress], None] | None = None,
    start: Progress | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation | ClassificationEvaluation:
    """:func:`train_test` (with ``test``) or :func:`prequential` (without) on data sets, in steps
    that can be checkpointed and resumed.

    Every ``every`` examples, and once all are learned, ``on_checkpoint(progress)`` is called
    with the :class:`Progress` so far (a snapshot of its own, outside the clock); saving it with
    the model (:func:`olboost.checkpoint.save_run`) lets a later call continue with
    ``start=progress`` and the saved model, however often the run was interrupted. The result
    is bit for bit that of :func:`train_test` or :func:`prequential` on the same model and
    data: each example is scored, then learned, and the boosters' random draws depend on their
    step count, not on how the stream is cut (their array paths give the same bits in any
    blocks).

    Parameters
    ----------
    model
        A multi-label ranker or a multiclass classifier (prequential only), trained in place; to
        resume, the model saved with ``start``.
    stream, test
        Data sets: the train split and the test split, or one stream (``test=None``).
    loops
        Passes over the train split before the test split.
    every
        Examples between two calls of ``on_checkpoint`` (counted over all the passes); ``None``:
        only at the end.
    on_checkpoint
        ``on_checkpoint(progress)``, or ``None``.
    start
        The progress to continue from (``None``: the beginning).
    progress, warm_up
        As in :func:`train_test`.

    Raises
    ------
    ValueError
        For bad ``loops`` or ``every``, a ``start`` that does not fit the data (another data
        set, split or number of loops), or a split that does not fit the model or the other
        split (as in :func:`train_test`). Nothing is learned then.
    TypeError
        If a stream is not a data set.

    Examples
    --------
    >>> import pickle
    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import resumable, train_test
    >>> data = load("emotions")
    >>> model = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> saved = []
    >>> def checkpoint(progress):  # a crash after the third checkpoint
    ...     saved.append(pickle.dumps((model, progress)))
    ...     if len(saved) == 3:
    ...         raise KeyboardInterrupt
    >>> try:
    ...     resumable(model, data.train, data.test, loops=2, every=100, on_checkpoint=checkpoint)
    ... except KeyboardInterrupt:
    ...     pass
    >>> again, progress = pickle.loads(saved[-1])
    >>> progress.done, progress.total
    (300, 984)
    >>> result = resumable(again, data.train, data.test, loops=2, start=progress)
    >>> fresh = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> result.rank_loss == train_test(fresh, data.train, data.test, loops=2).rank_loss
    True
    """
    from olboost.online import MulticlassLearner

    classify = isinstance(model, MulticlassLearner)
    mode = _feedback_mode(model, None, None)
    if every is not None and (
        isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 1
    ):
        raise ValueError(f"every must be an integer >= 1 or None, got {every!r}")
    for role, data in (("stream", stream), ("test split", test)):
        refuse_other_kind(model, role, data)  # before _passes calls it no data set
    protocol, passes = _passes(stream, test, loops, classify)
    check_splits(
        model,
        [("stream", stream)] if test is None else [("train split", stream), ("test split", test)],
    )
    sizes = tuple(int(s.n_samples) for s in passes)
    digest, names = _data_digest(passes), _names_digest(passes)
    if start is None:
        state = Progress(
            protocol, sizes, 0, np.zeros(sum(sizes), bool if classify else float),
            model_steps=_steps(model), data_digest=digest, names_digest=names,
            model_class=_class_name(model),
        )  # fmt: skip
    else:
        if (start.protocol, tuple(start.sizes)) != (protocol, sizes) or not (
            0 <= start.done <= start.total == start.records.size
        ):
            raise ValueError(
                f"the progress to resume ({start.protocol}, passes of {list(start.sizes)} "
                f"examples, {start.done} done) does not fit this evaluation ({protocol}, passes "
                f"of {list(sizes)} examples)"
            )
        if start.data_digest is not None and start.data_digest != digest:
            raise ValueError(
                "the progress to resume was made on other data (the same sizes, other values)"
            )
        if start.names_digest is not None and start.names_digest != names:
            # the same codes under other names are other examples (their (x, y) pairs differ)
            which = "class" if classify else "label"
            raise ValueError(
                f"the progress to resume was made on data of other {which} names (the same "
                "values, other names)"
            )
        if start.model_class is not None and _class_name(model) != start.model_class:
            raise ValueError(
                f"the progress to resume goes with a model of class {start.model_class}, this "
                f"one is a {_class_name(model)}: resume with the model saved with the progress"
            )
        if start.model_steps is not None and _steps(model) != start.model_steps:
            raise ValueError(
                f"the progress to resume goes with a model that had learned {start.model_steps} "
                f"examples, this one has learned {_steps(model)}: resume with the model saved "
                "with the progress"
            )
        # the caller's progress stays what was saved: a retry from it resumes the same way
        # (one saved before the names were kept keeps them from now on)
        state = replace(
            start, records=start.records.copy(), names_digest=names, model_class=_class_name(model)
        )
    compile_s = None
    if warm_up:
        heads = [_head(s, WARM_UP_ROWS) for s in ((stream,) if test is None else (stream, test))]
        compile_s = _warm_up(model, *heads, notice=True)
    # what each pass feeds the model: label columns in the model's order, or class codes
    if classify:
        codes = _class_codes(model, stream)
        outputs = object_vector(model._outputs())
    else:
        labels = {id(s): s.Y[:, _label_columns(model, s)] for s in passes}
    chunk = _chunk_rows(len(outputs) if classify else passes[0].Y.shape[1])
    bar = _progress(state.total, progress, protocol.replace("_", "+"))
    if bar is not None and state.done:
        bar.update(state.done)
    offset = 0
    for index, data in enumerate(passes):
        first, offset = offset, offset + sizes[index]
        phase = "train" if protocol == "train_test" and index < loops else "test"
        while state.done < offset:
            lo = state.done - first
            hi = min(sizes[index], (lo // chunk + 1) * chunk)
            if every is not None:
                hi = min(hi, (state.done // every + 1) * every - first)
            t0 = time.perf_counter()
            if classify:
                values = _classification_step(model, data.X[lo:hi], outputs, codes[lo:hi])
            else:
                values = _ranking_step(model, data.X[lo:hi], labels[id(data)][lo:hi])
            elapsed = time.perf_counter() - t0
            state.records[first + lo : first + hi] = values
            state.done = first + hi
            state.model_steps = _steps(model)
            if phase == "train":
                state.seconds_train += elapsed
            else:
                state.seconds_test += elapsed
            if bar is not None:
                bar.update(hi - lo)
            due = every is not None and state.done % every == 0
            if on_checkpoint is not None and (due or state.finished):
                # a snapshot: the live state goes on changing, and a callback that kept it
                # (not a pickle of it) resumed an "earlier" checkpoint from the end
                on_checkpoint(replace(state, records=state.records.copy()))
    if bar is not None:
        bar.close()
    return _outcome(state, passes, labels if not classify else None, loops, mode, compile_s)


def _class_name(model: Any) -> str:
    """The model's class, with its module (``olboost.boosters.ada_olmr.AdaOLMR``)."""
    return f"{type(model).__module__}.{type(model).__qualname__}"


def _steps(model: Any) -> int | None:
    """The model's step count, ``None`` if it keeps none (0 before its first example)."""
    if not hasattr(type(model), "_started"):
        return None
    return int(getattr(model, "t_", 0))


def _distinct(passes: list[Any]) -> list[Any]:
    """The distinct data sets among ``passes`` (the train split of several loops: once)."""
    return list({id(data): data for data in passes}.values())


def _data_digest(passes: list[Any]) -> str:
    """SHA-256 of the features and targets of the distinct data sets among ``passes``."""
    h = hashlib.sha256()
    for data in _distinct(passes):
        X = data.X
        parts = (X.data, X.indices, X.indptr) if sparse.issparse(X) else (X,)
        target = data.y if hasattr(data, "class_names") else data.Y
        for array in (*parts, np.asarray(target)):
            h.update(f"{array.dtype.str}{array.shape}".encode())
            if array.size == 0:  # its shape says it all (and a view of no bytes cannot cast)
                continue
            # the array's own buffer, not a copy of it (tobytes)
            h.update(
                repr(array.tolist()).encode()
                if array.dtype == object
                else memoryview(np.ascontiguousarray(array)).cast("B")
            )
    return h.hexdigest()


def _names_digest(passes: list[Any]) -> str:
    """SHA-256 of the class or label names of the distinct data sets among ``passes``, each by
    what it is as a name (:func:`_name_key`: a NumPy integer as the int it equals, a bool apart)."""
    h = hashlib.sha256()
    for data in _distinct(passes):
        names = data.class_names if hasattr(data, "class_names") else data.label_names
        h.update(repr([_name_key(name) for name in names]).encode())
    return h.hexdigest()


def _name_key(name: Any) -> tuple[str, Any]:
    """A class or label name as the data it is, whatever its Python or NumPy type: the names
    that are equal (and both bools or neither) give the same key, a tuple's by its members' and
    a set's by its members' sorted (their ``repr`` order follows the process's hash seed)."""
    if is_bool(name):
        return "bool", bool(name)
    if isinstance(name, tuple):
        return "tuple", tuple(_name_key(member) for member in name)
    if isinstance(name, frozenset | set):
        return "set", tuple(sorted((_name_key(member) for member in name), key=repr))
    if isinstance(name, numbers.Integral):
        return "int", int(name)
    if isinstance(name, numbers.Real):
        value = float(name)
        # 1.0 is the name 1, as a dict key and for the models
        return ("int", int(value)) if value.is_integer() else ("float", value)
    if isinstance(name, str):
        return "str", str(name)
    return type(name).__name__, repr(name)


def _outcome(
    state: Progress,
    passes: list[Any],
    labels: dict[int, np.ndarray] | None,
    loops: int,
    mode: str,
    compile_s: float | None,
) -> Evaluation | ClassificationEvaluation:
    """The evaluation a finished :class:`Progress` records, as the protocols report it."""
    if labels is None:
        correct = state.records.copy()
        return ClassificationEvaluation(correct, state.seconds_test, compile_seconds=compile_s)
    learned_before_test = state.sizes[0] * loops if state.protocol == "train_test" else 0
    losses = state.records[learned_before_test:].copy()
    skip = np.where(_pairless(labels[id(passes[-1])]), np.nan, losses)
    if state.protocol == "prequential":
        return Evaluation(
            losses, skip, 0, state.sizes[0], 0.0, state.seconds_test, feedback=mode,
            compile_seconds=compile_s,
        )  # fmt: skip
    return Evaluation(
        losses, skip, state.sizes[0], state.sizes[-1], state.seconds_train, state.seconds_test,
        compile_seconds=compile_s, train_losses=state.records[:learned_before_test].copy(),
        loops=loops, feedback=mode,
    )  # fmt: skip


# Run files (olboost run --checkpoint) pickle a Progress: naming olboost.evaluate.Progress, as
# before that module became a package, they stay byte for byte what they were
Progress.__module__ = "olboost.evaluate"
