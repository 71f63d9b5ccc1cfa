"""Dask preload of the local cluster's worker processes (:func:`olboost.sweep.local_cluster`)."""

from __future__ import annotations

import logging
import os
from typing import Any

#: What a worker of a local cluster logs, with a traceback, when a heartbeat finds the scheduler
#: gone (``distributed.worker``: the same words in 2024.1 and 2026.8; a test checks the one
#: installed).
HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat"


class _SchedulerGone(logging.Filter):
    """Drops a worker's heartbeat failure: a local cluster's scheduler lives in the sweep's own
    process, so it is gone only when the sweep ends (a Ctrl-C stops the cluster), and a
    heartbeat in flight then printed a 30-line traceback after "olboost: interrupted"."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(HEARTBEAT_FAILED)


def quiet_heartbeats() -> None:
    """Install :class:`_SchedulerGone` on ``distributed.worker``'s logger (once)."""
    logger = logging.getLogger("distributed.worker")
    if not any(isinstance(f, _SchedulerGone) for f in logger.filters):
        logger.addFilter(_SchedulerGone())


def dask_setup(worker: Any) -> None:
    """Move the worker process out of the terminal's foreground process group, and keep its
    heartbeat quiet when the sweep's process ends (:func:`quiet_heartbeats`).

    A terminal's Ctrl-C goes to every process of that group: each worker printed the traceback
    of its ``KeyboardInterrupt`` beside the sweep's own one-line message. The sweep's process
    stops its cluster on a Ctrl-C, and Dask's workers end with it."""
    quiet_heartbeats()
    try:
        os.setpgid(0, 0)
    except (AttributeError, OSError):  # pragma: no cover - Windows, or a session leader
        pass
