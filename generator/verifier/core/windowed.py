"""Work on a few threads, the results in the order of the items, never more than a window of them
in flight: a million objects to send, or the 300,000 files of a site to hash, never become as
many futures at once, and a replay reading tiles ahead never holds more than the window in
memory."""

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def windowed(work: Callable[[_In], _Out], items: Iterable[_In], jobs: int, window: int | None = None) -> Iterator[_Out]:
    """work(item) for each item on `jobs` threads, yielded in the items' order, with at most
    `window` (default four times `jobs`) submitted and not yet yielded. An exception of work(item)
    is raised when that item's turn comes. Closing the iterator early cancels what has not started."""
    jobs = max(1, jobs)
    window = max(1, window if window is not None else jobs * 4)
    queued: deque[Future[_Out]] = deque()
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for item in items:
            queued.append(pool.submit(work, item))
            if len(queued) >= window:
                yield queued.popleft().result()
        while queued:
            yield queued.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
