"""A program's history grown one release at a time, and what a built site says of its log: its size and its
active key."""

from __future__ import annotations

import json
from pathlib import Path

from generator.commands.commit import commit_new_items
from generator.core import layout
from generator.program.datadir import Paths
from generator.verifier import parse_checkpoint
from tests.support.programs import item, write_items


def vkey_of(site: Path) -> str:
    keys = json.loads((site / layout.KEYS).read_text())
    return str(next(k["vkey"] for k in keys["keys"] if k["status"] == "active"))


def grow(paths: Paths, n: int, at: str) -> None:
    """One more release's worth of events: an item committed and one retired."""
    write_items(paths, [item(f"b-{900 + n:04d}", "b")], f"more-{n}.yaml")
    commit_new_items(paths, at)


def size_of(site: Path) -> int:
    return parse_checkpoint((site / layout.CHECKPOINT).read_text().split("\n\n")[0] + "\n")[1]
