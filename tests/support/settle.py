"""Waiting out the file system's clock tick, so that a build records the identities of what it read."""

from __future__ import annotations

import time

from generator.state import build_cache


def settle() -> None:
    """Wait out the clock tick within which an input just written could change again unseen:
    a build reading inputs that recent records no identities (build_cache.save)."""
    time.sleep(3 * build_cache._TICK_NS / 1e9)
