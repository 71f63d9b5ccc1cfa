"""Evaluation protocols for online multi-label rankers.

* :func:`train_test`, the protocol of Jung & Tewari (2018, Sec. 4): stream the train split, learning
  from every example; then stream the test split, and for each example predict, record the loss,
  then learn from it. The reported rank loss is the test split's. With ``loops=L`` the train split
  is streamed ``L`` times first (Raman et al. 2020, Sec. 4: the top-k boosters loop over it up to
  20 times).
* :func:`prequential`, test-then-train over one stream: every example is predicted, scored, then
  learned.

Every example the model learns from is scored first, so the per-example losses of the training
passes are recorded too (:attr:`Evaluation.train_losses`), and
:meth:`Evaluation.running_losses` gives the running average over the whole stream (the learning
curves of Raman et al. 2020, Fig. 1).

**Feedback.** A full-information booster (``AdaOLMR``, ``OnlineBMR``) learns from the whole
relevant set (``feedback="full"``). A top-k booster (``TopkBBM``, ``TopkAdaptive``: a model with
``show_one``) learns under top-k feedback (``feedback="topk"``): the evaluator knows the relevant
set, records the weighted rank loss of the ranking the model actually showed, and the model gets
only the relevance of the ``k`` labels it showed on top. On a data set the model's array path plays
that user in compiled code (``score_then_learn`` returns the shown rankings); on an iterable of
``(x, y)`` pairs the evaluator does it in Python, ``imp = model.show_one(x)`` then
``model.learn_one(x, imp.feedback(clicked))``, so the model only ever receives a
:class:`~olboost.feedback.TopkFeedback`. Both give the same bits. ``feedback=None`` picks the
model's own kind.

Both return an :class:`Evaluation` with per-example rank losses under the two conventions for an
example whose relevant set is empty or full (no relevant/irrelevant pair): ``paper`` (loss 0, the
example counts, as the authors' code that made the paper's tables; the paper states no
convention) and ``skip`` (the example is excluded; NaN in
the per-example array). Streams are :class:`olboost.datasets.MultiLabelDataset` objects, which use
the model's array path, or any iterable of ``(x, y)`` pairs, which uses ``score_one``/``learn_one``.

Compilation is kept out of the clock on request: with ``warm_up=True`` both protocols first run
:func:`warm_up` (a clone of the model on the first rows of the same data, through the same calls),
which compiles every Numba kernel the run needs or loads it from Numba's on-disk cache, and report
its duration as ``compile_seconds``, apart from ``seconds``. The command line always does this.

**Checkpoints.** :func:`resumable` runs either protocol on data sets in steps, handing its
:class:`Progress` (the position in the stream, pass included, and the per-example records so
far) to a callback every ``every`` examples, and continues from such a progress and the model
saved with it: the results are those of an uninterrupted run, bit for bit (``olboost run
--checkpoint``, :mod:`olboost.checkpoint`).
"""

# outside __all__, re-exported all the same: the benchmarks and tests import them from here
from olboost.evaluate._compiling import COMPILE_NOTICE_AFTER as COMPILE_NOTICE_AFTER
from olboost.evaluate._compiling import TYPICAL_COMPILE_SECONDS as TYPICAL_COMPILE_SECONDS
from olboost.evaluate._compiling import WARM_UP_ROWS as WARM_UP_ROWS
from olboost.evaluate._compiling import _CompileNotice as _CompileNotice
from olboost.evaluate._compiling import warm_up
from olboost.evaluate._inputs import FEEDBACKS
from olboost.evaluate._protocols import prequential, train_test
from olboost.evaluate._results import ClassificationEvaluation, Evaluation
from olboost.evaluate._resumable import Progress, resumable

__all__ = [
    "FEEDBACKS",
    "ClassificationEvaluation",
    "Evaluation",
    "Progress",
    "prequential",
    "resumable",
    "train_test",
    "warm_up",
]
