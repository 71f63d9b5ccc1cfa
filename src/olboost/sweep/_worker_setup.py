"""Dask preload of the local cluster's worker processes (:func:`olboost.sweep.local_cluster`)."""

from __future__ import annotations

import logging
import os
import re
from typing import Any

#: What a worker of a local cluster logs as the sweep stops its cluster (a Ctrl-C): by logger,
#: a pattern of the message. A heartbeat in flight finds the scheduler gone (with a 30-line
#: traceback), and each task still running is cancelled by the worker's close. A local
#: cluster's scheduler lives in the sweep's own process, gone only when the sweep ends, and
#: the sweep says it was interrupted. The same words in distributed 2024.1 and 2026.8; a test
#: checks the installed one.
SHUTDOWN_RECORDS = {
    "distributed.worker": re.compile(r"Failed to communicate with scheduler during heartbeat"),
    "distributed.worker.state_machine": re.compile(
        r"Async instruction for .* ended with CancelledError$", re.DOTALL
    ),
}


class _Shutdown(logging.Filter):
    """Drops the record of a cluster stopping that :data:`SHUTDOWN_RECORDS` names for its
    logger: after "olboost: interrupted" they said, in Dask's words, only what it says."""

    def __init__(self, pattern: re.Pattern[str]):
        super().__init__()
        self.pattern = pattern

    def filter(self, record: logging.LogRecord) -> bool:
        return self.pattern.match(record.getMessage()) is None


def quiet_shutdown() -> None:
    """Install a :class:`_Shutdown` filter on each logger of :data:`SHUTDOWN_RECORDS` (once)."""
    for name, pattern in SHUTDOWN_RECORDS.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Shutdown) for f in logger.filters):
            logger.addFilter(_Shutdown(pattern))


def dask_setup(worker: Any) -> None:
    """Move the worker process out of the terminal's foreground process group, and keep it
    quiet about its cluster stopping (:func:`quiet_shutdown`).

    A terminal's Ctrl-C goes to every process of that group: each worker printed the traceback
    of its ``KeyboardInterrupt`` beside the sweep's own one-line message. The sweep's process
    stops its cluster on a Ctrl-C, and Dask's workers end with it."""
    quiet_shutdown()
    try:
        os.setpgid(0, 0)
    except (AttributeError, OSError):  # pragma: no cover - Windows, or a session leader
        pass
