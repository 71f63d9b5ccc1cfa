"""Dask preload of the local cluster's worker processes (:func:`olboost.sweep.local_cluster`)."""

from __future__ import annotations

import os
from typing import Any


def dask_setup(worker: Any) -> None:
    """Move the worker process out of the terminal's foreground process group.

    A terminal's Ctrl-C goes to every process of that group: each worker printed the traceback
    of its ``KeyboardInterrupt`` beside the sweep's own one-line message. The sweep's process
    stops its cluster on a Ctrl-C, and Dask's workers end with it."""
    try:
        os.setpgid(0, 0)
    except (AttributeError, OSError):  # pragma: no cover - Windows, or a session leader
        pass
