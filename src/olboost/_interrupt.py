"""Holding a Ctrl-C back until the state it would cut in two is whole again."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


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
            if callable(previous):
                previous(signal.SIGINT, None)
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)  # what it would have done: end the process
