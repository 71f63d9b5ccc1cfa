"""Holding a Ctrl-C back until the state it would cut in two is whole again."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any


@contextlib.contextmanager
def held_interrupt() -> Iterator[None]:
    """Record a Ctrl-C (SIGINT) that comes inside the block, and deliver it once the block is
    done, as the handler in place before would have (Python's default: ``KeyboardInterrupt``;
    an ignored SIGINT stays ignored, and the default action ends the process).

    A Ctrl-C during a compiled call is raised by Python as the call returns, before the caller
    can record what the call did: a model's arrays had learned a block of rows that its ``t_``
    did not count, and learning on learned them twice. Around a call and its bookkeeping, the
    interrupt comes at the end instead, with the model whole. An exception from the block goes
    on as it is, unless a Ctrl-C came too: then the interrupt, with the exception as its
    context. Only the main thread sets handlers (and only it receives a Ctrl-C); elsewhere,
    or when the handler in place was set outside Python, the block runs as it is. Setting a
    handler and putting it back takes two system calls: hold a block of rows, not a row.
    """
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or threading.current_thread() is not threading.main_thread():
        # a handler set outside Python could not be put back
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        # delivered even when the block raised: a caller that catches the exception and goes
        # on would otherwise never see the Ctrl-C (the exception is then its context)
        if received:
            _deliver(previous, None)


@contextlib.contextmanager
def blocked_interrupt() -> Iterator[None]:
    """Block SIGINT in the calling thread inside the block: a Ctrl-C waits, pending, and comes
    as the block ends (to whatever handler is then in place); the threads started inside, and
    the processes they start, keep it blocked (a signal mask survives fork and exec, and Python
    does not unblock it; multiprocessing's resource tracker does, in the thread that starts it:
    see :func:`olboost.sweep.local_cluster`).

    For the worker processes of a sweep's local cluster, spawned by Dask's event-loop thread:
    a Ctrl-C while they imported olboost raised ``KeyboardInterrupt`` in each (60 lines of
    tracebacks, and "Nanny failed to start"). Where there are no signal masks (Windows) the
    block runs as it is."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Row:
    """The part of a loop's step in which a Ctrl-C waits (:func:`between_rows`)."""

    __slots__ = ("previous", "inside", "received")

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.inside = False
        self.received = False

    def __enter__(self) -> None:
        self.inside = True

    def __exit__(self, *exc: object) -> None:
        self.inside = False
        if self.received:
            self.received = False
            _deliver(self.previous, None)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.inside:
            self.received = True
        else:
            _deliver(self.previous, frame)


@contextlib.contextmanager
def between_rows() -> Iterator[contextlib.AbstractContextManager[None]]:
    """For a loop that learns one example at a time: a Ctrl-C that comes while the loop is inside
    the context manager it gets (around one example's learning) is delivered when it leaves it,
    one that comes elsewhere (between examples, e.g. while the next one is read) at once, each
    as the handler in place before would have (see :func:`held_interrupt`).

    In the middle of an example a Ctrl-C tore it: a committee's first learners had learned it,
    the others and the booster (which puts back its own state on an error) had not. The handler
    is set once for the loop: entering and leaving the example's part is a flag, not two system
    calls. Holding is for the main thread and handlers set in Python (elsewhere the loop runs as
    it is), and only there: a read that waits (a socket, a pipe) is interrupted at once.
    """
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or threading.current_thread() is not threading.main_thread():
        yield contextlib.nullcontext()
        return
    row = _Row(previous)
    signal.signal(signal.SIGINT, row.handle)
    try:
        yield row
    finally:
        signal.signal(signal.SIGINT, previous)


def _deliver(previous: Any, frame: FrameType | None) -> None:
    """Do with a Ctrl-C what ``previous``, a SIGINT handler replaced, does with it: call it,
    ignore it, or, for the default action, end the process."""
    if callable(previous):
        previous(signal.SIGINT, frame)
    elif previous == signal.SIG_DFL:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.raise_signal(signal.SIGINT)
