"""The service's clock: wall-clock time that a step of the system's clock cannot move."""

from __future__ import annotations

import time


def _elapsed() -> float:
    """Seconds on a clock that never steps: the time since boot where the system counts the
    time it was suspended (Linux's ``CLOCK_BOOTTIME``), else :func:`time.monotonic` (which
    stops while the system sleeps)."""
    if hasattr(time, "CLOCK_BOOTTIME"):
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.monotonic()


class SteadyClock:
    """Seconds since the epoch as the wall clock gave them when the clock was made, advanced
    by a clock that never steps (:func:`_elapsed`).

    The service stamps impressions and feedback with it and times expiry, feedback lags and the
    status page's series by it. Read from :func:`time.time` instead, a step of the system's
    clock while the service ran (an NTP correction, a restored snapshot, an operator setting
    the date) gave negative feedback lags, revived impressions already counted as expired
    (a step back), expired every pending impression at once (a step forward) and froze the
    status page's series for the length of a step back. A step shows only in a restarted
    service, which reads the wall clock again (a lag is then at least 0). Both clocks follow
    NTP's gradual corrections, so they drift apart only by the steps.
    """

    def __init__(self) -> None:
        self._origin = time.time()
        self._elapsed = _elapsed()

    def __call__(self) -> float:
        return self._origin + (_elapsed() - self._elapsed)
