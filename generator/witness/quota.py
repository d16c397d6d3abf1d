"""Daily quotas of add-checkpoint requests: at most `qpd` requests a log in any rolling day, as a
log list (`logs/v0`) sets them, and how long a log over its quota must wait.

The witness counts only the requests that move its record of the log (a new tree cosigned): a
log's signed checkpoints are public, so anyone can replay one, and a replay answered 409, or one
of the tree the witness already holds, must not spend the log's quota.

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

    def wait(self, origin: str) -> int | None:
        """None if the log `origin` may make one more counted request now, or else the whole
        seconds until it may."""
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
            return None

    def spend(self, origin: str) -> None:
        """Count one request of the log `origin` (one that moved the witness's record)."""
        if origin in self._limits:
            with self._lock:
                self._seen.setdefault(origin, deque()).append(self._clock())

    def take(self, origin: str) -> int | None:
        """wait(), and the request counted when it is allowed."""
        waited = self.wait(origin)
        if waited is None:
            self.spend(origin)
        return waited
