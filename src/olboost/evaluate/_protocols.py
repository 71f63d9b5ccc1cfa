"""The two protocols: :func:`train_test` (the paper's) and :func:`prequential`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, overload

from olboost.evaluate._compiling import WARM_UP_ROWS

# warm_up under another name: the protocols' ``warm_up`` argument shadows it
from olboost.evaluate._compiling import warm_up as _warm_up
from olboost.evaluate._inputs import (
    _check_loops,
    _custom_user,
    _feedback_mode,
    _length,
    _peel,
    _progress,
    _require_examples,
    _require_stream,
)
from olboost.evaluate._loops import _prequential, _train_test, check_splits
from olboost.evaluate._results import ClassificationEvaluation, Evaluation
from olboost.feedback import TopkUser

if TYPE_CHECKING:
    from olboost.online import MulticlassLearner


def train_test(
    model: Any,
    train: Iterable,
    test: Iterable,
    *,
    loops: int = 1,
    feedback: str | TopkUser | None = None,
    k: int | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation:
    """The paper's protocol: learn from ``train`` (``loops`` times), then predict-record-learn over
    ``test``.

    Parameters
    ----------
    model
        A multi-label ranker (``AdaOLMR``, ``TopkBBM`` ...); it is trained in place.
    train, test
        Data sets (``MultiLabelDataset``) or iterables of ``(x, y)`` with ``y`` a set of labels
        (with ``loops > 1``, ``train`` must be readable more than once: not an iterator). A data
        set's label columns are matched to the model's labels by name, as its ``(x, y)`` pairs
        are; only a model whose labels are positions (``labels=k``, or ``0 .. k - 1`` taken
        from a label matrix or an earlier data set) takes the columns of other names as they
        are.
    loops
        Passes over ``train`` before the test split (an integer >= 1; Raman et al. 2020 use up to
        20 for the top-k boosters). The model learns ``n_train * loops + n_test`` examples.
    feedback
        ``"full"`` (the model learns the relevant set), ``"topk"`` (a top-k booster shows its
        ranking and learns the relevance of the ``k`` labels on top only; the loss recorded is
        that of the ranking shown), a :class:`~olboost.feedback.TopkUser` (top-k feedback from
        the clicks of that simulated user: ``TopkUser()`` is ``"topk"``, a subclass models
        another user) or ``None``: the model's kind (``"topk"`` for a model with
        ``show_one``). Each kind needs the matching model (``ValueError`` otherwise).
    k
        If given, must equal the top-k booster's ``k`` (a check; the model shows its own ``k``),
        as must a ``TopkUser``'s ``k``.
    progress
        Show a progress bar on stderr.
    warm_up
        Run :func:`warm_up` first (saying on stderr when it compiles), so that ``seconds``
        excludes compilation; its duration is ``compile_seconds``. Results are the same.

    Raises
    ------
    ValueError
        If ``test`` is known to hold no example (a data set or sequence of length 0), ``loops``
        is not an integer >= 1 (or > 1 with a one-pass iterator), ``feedback`` or ``k`` do not
        fit the model, or a split that is a data set does not fit the model or the other split
        (fewer than 2 labels, other labels, another width, values the model refuses; the message
        names the split). Nothing is learned then.

    Examples
    --------
    >>> from olboost import TopkAdaptive, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test
    >>> data = load("emotions")
    >>> model = TopkAdaptive(VFDTCommittee(n_features=5), learners=4, seed=1, k=3, rho=0.05)
    >>> result = train_test(model, data.train, data.test, loops=2)
    >>> result.feedback, model.t_ == result.n_learned == 391 * 2 + 202
    ('topk', True)
    >>> result.train_losses.shape, result.running_losses().shape
    ((782,), (984,))
    """
    from olboost.online import MulticlassLearner

    if isinstance(model, MulticlassLearner):
        raise TypeError(
            f"train_test evaluates multi-label rankers; {type(model).__name__} is a multiclass "
            "classifier, evaluated with prequential"
        )
    _require_stream(train, "train split")
    _require_stream(test, "test split")
    if train is test and iter(train) is train:
        # the train pass would consume it: the test pass then scored nothing (a NaN loss)
        raise ValueError(
            "the train and test splits are one iterator, which the train pass consumes: "
            "give two streams"
        )
    mode = _feedback_mode(model, feedback, k)
    user = _custom_user(feedback)
    loops = _check_loops(loops, train)
    _require_examples(test, "test stream")
    check_splits(model, [("train split", train), ("test split", test)])
    compile_s = None
    if warm_up:
        train_head, train = _peel(train, WARM_UP_ROWS)
        test_head, test = _peel(test, WARM_UP_ROWS)
        compile_s = _warm_up(model, train_head, test_head, notice=True, feedback=feedback)
    n_train, n_test = _length(train), _length(test)
    total = None if n_train is None or n_test is None else n_train * loops + n_test
    bar = _progress(total, progress, "train+test")
    result = _train_test(model, train, test, bar, loops, mode, user)
    if bar is not None:
        bar.close()
    result.compile_seconds = compile_s
    return result


@overload
def prequential(
    model: MulticlassLearner,
    stream: Iterable,
    *,
    feedback: str | TopkUser | None = None,
    k: int | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> ClassificationEvaluation: ...


@overload
def prequential(
    model: Any,
    stream: Iterable,
    *,
    feedback: str | TopkUser | None = None,
    k: int | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation: ...


def prequential(
    model: Any,
    stream: Iterable,
    *,
    feedback: str | TopkUser | None = None,
    k: int | None = None,
    progress: bool = False,
    warm_up: bool = False,
) -> Evaluation | ClassificationEvaluation:
    """Test-then-train over one stream: each example is predicted, its loss recorded, then learned.

    A multi-label ranker gets an :class:`Evaluation` (rank losses); a multiclass classifier
    (:class:`olboost.boosters.MulticlassBooster`) gets a :class:`ClassificationEvaluation`
    (accuracy over the stream and over its final 20%). ``feedback`` and ``k`` are as in
    :func:`train_test` (a top-k booster shows a ranking, is scored on it and learns the relevance
    of its top ``k``). With ``warm_up=True``, :func:`warm_up` runs first and its duration is the
    result's ``compile_seconds``, kept out of ``seconds``. A stream known to hold no example
    (length 0), a ``feedback`` or ``k`` that does not fit the model, or a data set the model
    would refuse a row of (checked whole, before anything is learned) is a ``ValueError``.
    """
    _require_stream(stream, "stream")
    mode = _feedback_mode(model, feedback, k)
    user = _custom_user(feedback)
    _require_examples(stream, "stream")
    check_splits(model, [("stream", stream)])
    compile_s = None
    n = _length(stream)
    if warm_up:
        head, stream = _peel(stream, WARM_UP_ROWS)
        compile_s = _warm_up(model, head, notice=True, feedback=feedback)
    bar = _progress(n, progress, "prequential")
    result = _prequential(model, stream, bar, mode, user)
    if bar is not None:
        bar.close()
    result.compile_seconds = compile_s
    return result
