"""Rendering pages on every core, with the bytes of rendering them one by one.

A page is a pure function of its template and the values handed to it (generator.state.page_cache), so it
can be rendered anywhere: the build pickles those values once (for the memo's key anyway),
worker processes forked after the inputs are read render them, and the build writes each
result as it comes back, in the order it asked for them, never more than a bounded number
pending (tens of thousands of pages are not held in memory at once). Where processes cannot be
forked (not Linux), or for a small site, pages are rendered in the build's own process.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor

from generator.build.writer import SiteWriter
from generator.core.child_process import die_with
from generator.site.render import render_page

# Enough in flight to keep every worker busy while the build makes the next page's values.
PENDING = 64
# Below this many pages the workers cost more to start than they save.
MIN_PAGES = 300


def _render(payload: bytes) -> str:
    template, page_path, title, twin, context, common, nav = pickle.loads(payload)
    return render_page(template, page_path, title, twin, context, common, nav)


class RenderPool:
    def __init__(self, expected_pages: int, workers: int | None = None) -> None:
        workers = workers or os.cpu_count() or 1
        # A pool that says when a worker died (BrokenProcessPool), rather than wait for it.
        self._pool: ProcessPoolExecutor | None = None
        if workers > 1 and expected_pages >= MIN_PAGES and "fork" in multiprocessing.get_all_start_methods():
            self._pool = ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=die_with,
                initargs=(os.getpid(),),
            )
        self._pending: deque[tuple[SiteWriter, str, Future[str]]] = deque()

    def render(self, w: SiteWriter, rel: str, payload: bytes | None, local: Callable[[], str]) -> None:
        """Write page `rel`, rendered from `payload` (the pickled values) by a worker, or by
        `local()` here when there is no pool or the values could not be pickled."""
        if self._pool is None or payload is None:
            w.write_text(rel, local())
            return
        self._pending.append((w, rel, self._pool.submit(_render, payload)))
        while len(self._pending) > PENDING:
            self._write_oldest()

    def _write_oldest(self) -> None:
        w, rel, result = self._pending.popleft()
        w.write_text(rel, result.result())

    def flush(self) -> None:
        """Write every page asked for: before anything reads the pages back (the search index)."""
        while self._pending:
            self._write_oldest()

    def close(self) -> None:
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> RenderPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.flush()
        self.close()
