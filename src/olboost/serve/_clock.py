"""The service's clock: wall-clock time that a step of the system's clock cannot move."""

from __future__ import annotations

import time


class SteadyClock:
    """Seconds since the epoch as the wall clock gave them when the clock was made (or
    ``floor``, the latest time in the service's log, if that is later), advanced by
    :func:`time.monotonic`.

    The service stamps impressions and feedback with it and times expiry, feedback lags and the
    status page's series by it. Read from :func:`time.time` instead, a step of the system's
    clock while the service ran (an NTP correction, a restored snapshot, an operator setting
    the date) gave negative feedback lags, revived impressions already counted as expired
    (a step back), expired every pending impression at once (a step forward) and froze the
    status page's series for the length of a step back. A step now shows only in a restarted
    service, which reads the wall clock again, and ``floor`` keeps the log's stamps in order
    across the restart. The monotonic clock follows the system clock's slewing (NTP's gradual
    corrections), so the two drift apart only by the steps.
    """

    def __init__(self, floor: float = 0.0) -> None:
        self._origin = max(time.time(), floor)
        self._monotonic = time.monotonic()

    def __call__(self) -> float:
        return self._origin + (time.monotonic() - self._monotonic)
