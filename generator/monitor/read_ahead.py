"""Fetching ahead: the tiles a replay will read next, asked for a few at a time, so that a site
read over the network costs about its bytes, not a round trip per tile.

The replay reads the tiles in an order known in advance (generator.verifier's tile_read_order).
A ReadAhead keeps up to `window` of the next ones in flight on as many threads
(generator.verifier.core.windowed), and hands each to the replay when it asks, in order; a path it did
not expect is fetched at once, as without it. Memory: `window` tiles at most.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from generator.monitor.site_source import Fetch
from generator.verifier import windowed

# A fetched tile, or the error fetching it raised, to be raised only if the replay asks for it.
_Fetched = tuple[str, bytes | None, BaseException | None]


class ReadAhead:
    def __init__(self, fetch: Fetch, order: Iterable[tuple[str, int]], window: int = 8) -> None:
        self._fetch = fetch

        def one(item: tuple[str, int]) -> _Fetched:
            try:
                return item[0], fetch(*item), None
            except Exception as e:
                return item[0], None, e

        self._ahead: Iterator[_Fetched] = windowed(one, order, window, window)
        self._next: _Fetched | None = None

    def get(self, rel: str, limit: int) -> bytes | None:
        if self._next is None:
            self._next = next(self._ahead, None)
        if self._next is not None and self._next[0] == rel:
            _, data, error = self._next
            self._next = None
            if error is not None:
                raise error
            return data
        return self._fetch(rel, limit)

    def close(self) -> None:
        close = getattr(self._ahead, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
