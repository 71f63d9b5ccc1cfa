"""Compilation kept out of the clock: :func:`warm_up` runs a clone of the model through the
protocol's calls on the first rows of the data, and :class:`_CompileNotice` says on stderr
when Numba is compiling rather than loading its cache."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from numba.core import event as numba_event

from olboost._numba_cache import COMPILING_ELSEWHERE
from olboost.evaluate._inputs import _custom_user, _feedback_mode, _head
from olboost.evaluate._loops import _counted, _prequential, _train_test
from olboost.feedback import TopkUser, is_positions


class _PythonTruthfulUser(TopkUser):
    """The paper's user, played example by example as a user of one's own is (its clicks are
    :class:`TopkUser`'s, under another name): what a warm-up for such a user runs."""

    def clicks(self, impression: Any, relevant: Any) -> Any:
        return TopkUser.clicks(self, impression, relevant)


#: What :class:`_CompileNotice` hears: compiling here, and waiting for a compile elsewhere.
_COMPILE_EVENTS = ("numba:compile", COMPILING_ELSEWHERE)

#: Rows of each stream that :func:`warm_up` runs through a clone of the model.
WARM_UP_ROWS = 32

#: :func:`warm_up` says on stderr that it is compiling once Numba has compiled for this long.
COMPILE_NOTICE_AFTER = 1.0

#: What the notice announces: compile time of one booster path on an empty cache, 2-core machine
#: (``make bench``, ``benchmarks/results/ada_olmr.json``, ``cold_start``).
TYPICAL_COMPILE_SECONDS = "30-60"


class _CompileNotice(numba_event.Listener):
    """Says on stderr that kernels are being compiled, and how long it took when it is done.

    Whether Numba compiles or loads its on-disk cache is observed, not guessed: Numba announces
    every compilation (a cache miss) with a ``numba:compile`` event, olboost a wait for a kernel
    compiling in another process with one of its own
    (:data:`olboost._numba_cache.COMPILING_ELSEWHERE`), and the notice is printed when compiling
    has gone on for ``after`` seconds. Loading a cached path (about a second) and recompiling
    one small kernel stay silent. The closing line is left out when the block ends in an
    exception (a Ctrl-C while compiling, say): it would speak of a run that did not happen.
    ``say`` takes each line (default: on stderr, after ``olboost: ``), ``closing`` what the
    closing line ends with in parentheses.
    """

    def __init__(
        self,
        enabled: bool,
        after: float | None = None,
        say: Callable[[str], None] | None = None,
        closing: str | None = "not counted in the run's seconds",
    ):
        self.enabled = enabled
        self.after = COMPILE_NOTICE_AFTER if after is None else after
        self.say = _on_stderr if say is None else say
        self.closing = closing
        self.compiled = 0  # kernel specialisations compiled (cache misses), callees included
        self.waited = 0  # waits for a kernel compiling in another process
        self.shown = False
        self._timer: threading.Timer | None = None

    def on_start(self, event: Any) -> None:
        if event.kind == COMPILING_ELSEWHERE:
            self.waited += 1
        else:
            self.compiled += 1
        if self.enabled and self._timer is None:
            self._timer = threading.Timer(self.after, self._show)
            self._timer.daemon = True
            self._timer.start()

    def on_end(self, event: Any) -> None:
        pass

    def _show(self) -> None:
        self.shown = True
        self.say(
            f"compiling kernels (first run after install or upgrade, about "
            f"{TYPICAL_COMPILE_SECONDS} s; Numba caches them on disk for later runs) ..."
        )

    def __enter__(self) -> _CompileNotice:
        self.t0 = time.perf_counter()
        for kind in _COMPILE_EVENTS:
            numba_event.register(kind, self)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.t0
        for kind in _COMPILE_EVENTS:
            numba_event.unregister(kind, self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        if self.shown and exc_type is None:
            n = self.compiled
            elsewhere = " here, more in another process," if self.waited else ""
            closing = f" ({self.closing})" if self.closing else ""
            self.say(
                f"compiled {n} function{'' if n == 1 else 's'}{elsewhere} in "
                f"{self.seconds:.1f} s{closing}"
            )


def _on_stderr(text: str) -> None:
    print(f"olboost: {text}", file=sys.stderr, flush=True)


def warm_up(
    model: Any,
    stream: Any,
    test: Any = None,
    *,
    rows: int = WARM_UP_ROWS,
    notice: bool = False,
    feedback: Any = None,
) -> float:
    """Compile every Numba kernel that evaluating ``model`` on the data runs (or load it from
    Numba's on-disk cache), without changing ``model``; return the seconds it took.

    A clone of ``model`` (same class, parameters and committee, fresh state) runs the first ``rows``
    rows of the data through the protocol the evaluation will use: ``warm_up(model, stream)``
    through :func:`prequential`, ``warm_up(model, train, test)`` through :func:`train_test`. Numba
    compiles a kernel for the types of its first call's arguments; the clone makes the same calls
    on arrays of the same dtypes and layouts, so every specialisation the full run needs exists
    afterwards, and timing that run measures the algorithm, not the compiler. The first run after
    an install (or after an upgrade of olboost or Numba) compiles, about 30-60 s per booster on a
    2-core machine; later runs load the kernels from Numba's cache in about a second.

    ``model`` and the data are left exactly as they were, so results are the same with or without
    a warm-up. A one-pass iterator cannot be read twice: warm up on a list of its first rows, or
    pass ``warm_up=True`` to :func:`train_test` or :func:`prequential`, which peel them off and
    chain them back.

    Parameters
    ----------
    model
        An unfitted or fitted booster; only its parameters are used.
    stream, test
        The data the evaluation will stream: one stream (prequential), or the train and test
        splits (train/test). Data sets, sequences of ``(x, y)`` pairs, or lists.
    rows
        Rows of each stream to run; a few suffice.
    notice
        Print a line on stderr if this takes longer than ``COMPILE_NOTICE_AFTER`` seconds (it is
        then compiling, not loading the cache), and another when it is done.
    feedback
        The evaluation's ``feedback`` (see :func:`train_test`). A
        :class:`~olboost.feedback.TopkUser` of one's own is played one example at a time, so the
        clone takes that path too, clicking as the paper's user: the user itself is never
        called (its state, if it keeps any, is left as it was).

    Examples
    --------
    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load
    >>> from olboost.evaluate import train_test, warm_up
    >>> data = load("emotions")
    >>> model = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> compile_s = warm_up(model, data.train, data.test)
    >>> hasattr(model, "committee_")  # untouched: the clone learned
    False
    >>> result = train_test(model, data.train, data.test)  # result.seconds: no compiling inside
    """
    if rows < 1:
        raise ValueError(f"rows must be >= 1, got {rows}")
    heads = [_head(s, rows) for s in ((stream,) if test is None else (stream, test))]
    if any(h is None for h in heads):
        raise TypeError(
            "warm_up needs data sets or sequences; a one-pass iterator cannot be read twice "
            "(pass warm_up=True to train_test or prequential instead)"
        )
    mode = _feedback_mode(model, feedback, None)
    user = None if _custom_user(feedback) is None else _PythonTruthfulUser()
    with _CompileNotice(notice) as timer:
        clone = model.clone()
        param = getattr(model, "_outputs_param", None)
        if param is not None and getattr(model, param) is None and hasattr(model, param + "_"):
            # outputs the model took from arrays are learned state, which a clone leaves out:
            # given to it, so that it runs what the model will (it refused the pairs otherwise);
            # a ranker's labels 0 .. k-1 as their count, positions as they are to the model
            # (:func:`olboost.evaluate._loops._counted`: a list would be names)
            taken = list(getattr(model, param + "_"))
            positions = _counted(model) and is_positions(taken)
            clone = model.clone({param: len(taken) if positions else taken})
        if test is None:
            _prequential(clone, heads[0], None, mode, user)
        else:
            _train_test(clone, heads[0], heads[1], None, 1, mode, user)
    return timer.seconds
