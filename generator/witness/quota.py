"""Daily quotas of add-checkpoint requests: at most `qpd` requests a log in any rolling day, as a
log list (`logs/v0`) sets them, and how long a log over its quota must wait.

c2sp.org/tlog-witness sets no status code for a log over its quota: the witness answers HTTP's
own, 429 Too Many Requests, with a Retry-After header in seconds. The counts are kept in memory:
a restarted witness starts them afresh (a quota protects the witness's work, not a security
property). The clock is injectable, monotonic by default, so that a change of the wall clock
neither frees nor blocks a log.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

DAY_SECONDS = 86_400


class DailyQuota:
    """Requests counted per log against its quota (a log with no quota is never limited)."""

    def __init__(self, limits: Mapping[str, int], clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = dict(limits)
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, origin: str) -> int | None:
        """Count a request of the log `origin`: None if it is within the quota, or else the whole
        seconds until one is allowed again (the request is then not counted)."""
        limit = self._limits.get(origin)
        if limit is None:
            return None
        with self._lock:
            now = self._clock()
            seen = self._seen.setdefault(origin, deque())
            while seen and seen[0] <= now - DAY_SECONDS:
                seen.popleft()
            if len(seen) >= limit:
                return max(1, math.ceil(seen[0] + DAY_SECONDS - now)) if seen else DAY_SECONDS
            seen.append(now)
            return None
