"""Fetching ahead: the tiles a replay will read next, asked for a few at a time, so that a site
read over the network costs about its bytes, not a round trip per tile.

The replay reads the tiles in an order known in advance (generator.verifier's tile_read_order).
A ReadAhead keeps up to `window` of the next ones in flight on as many threads, and hands each to
the replay when it asks, in order; a path it did not expect is fetched at once, as without it.
Memory: `window` tiles at most.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from generator.monitor.site_source import Fetch


class ReadAhead:
    def __init__(self, fetch: Fetch, order: Iterable[tuple[str, int]], window: int = 8) -> None:
        self._fetch = fetch
        self._order: Iterator[tuple[str, int]] = iter(order)
        self._window = max(1, window)
        self._pool = ThreadPoolExecutor(max_workers=self._window, thread_name_prefix="read-ahead")
        self._queued: deque[tuple[str, Future[bytes | None]]] = deque()
        self._fill()

    def _fill(self) -> None:
        while len(self._queued) < self._window:
            nxt = next(self._order, None)
            if nxt is None:
                return
            rel, limit = nxt
            self._queued.append((rel, self._pool.submit(self._fetch, rel, limit)))

    def get(self, rel: str, limit: int) -> bytes | None:
        if self._queued and self._queued[0][0] == rel:
            _, future = self._queued.popleft()
            self._fill()
            return future.result()  # the fetch's own error (Unreadable) is raised here
        return self._fetch(rel, limit)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
