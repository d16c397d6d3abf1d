"""The ledger as pages people read: every entry in order, in plain words, with its leaf hash and
a link to what it is about, so that "ledger entry N" anywhere on the site can be followed.

A million entries are read from the ledger file in one pass, a page at a time: a page's rows
are the only ones held, never the ledger's.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.core import layout
from generator.core.proofs import MerkleTree
from generator.site.views.events_view import event_link, event_summary
from generator.verifier import Ledger, OutsideBound, leaf_hash


def commit_leaf(ledger: Ledger, position: int) -> int:
    """The ledger entry of the `position`-th commit."""
    return next(ledger.commits(position, position + 1)).index


def commits_before(ledger: Ledger, index: int) -> int:
    """How many commit entries the ledger holds before entry `index` (a search: commits are in
    ledger order)."""
    return bisect.bisect_left(range(ledger.commit_count), index, key=functools.partial(commit_leaf, ledger))


@dataclass(frozen=True)
class EntryRow:
    index: int
    anchor: str  # the row's id, the fragment of layout.ledger_entry(index)
    at: str
    type: str
    text: str
    link: str | None  # the page (or row) of what the entry is about
    leaf_hash: str  # RFC 6962: SHA-256(0x00 || the leaf's bytes), hex; the tiles hold it too
    existed_by: OutsideBound | None = None  # the earliest timestamp over a checkpoint that holds it


class EntryPages:
    """The rows of the ledger pages, read from `leaves` (the ledger's leaf bytes, in order): an
    instance is the `rows(lo, hi)` of the site's pager, which asks for its pages in order.

    `run_links`: each run's row on the runs pages, by run id."""

    def __init__(
        self,
        leaves: Iterator[bytes],
        ledger: Ledger,
        run_links: Mapping[str, str],
        tree: MerkleTree,
        bounds: Sequence[OutsideBound] = (),
    ) -> None:
        # Per stamped size, its earliest token (sizes in order).
        earliest: dict[int, OutsideBound] = {}
        for b in sorted(bounds, key=lambda b: (b.size, b.time, b.authority)):
            earliest.setdefault(b.size, b)
        self._bounds = list(earliest.values())
        self._bound_sizes = [b.size for b in self._bounds]
        self._leaves = leaves
        self._ledger = ledger
        self._tree = tree
        self._size = ledger.size
        self._run_at = {run.index: run.id for run in ledger.runs.values()}
        self._next = 0
        self._commits = 0  # commits so far: the next commit's place in the commitment list
        self._public = ledger.public_gates()
        self._run_links = run_links

    def __call__(self, lo: int, hi: int) -> dict[str, Any]:
        self._commits = commits_before(self._ledger, lo)
        return {"rows": [self._row(index, raw) for index, raw in self._take(lo, hi)], "first": lo}

    def skip(self, lo: int, hi: int) -> None:
        """Pass over entries lo..hi unread: a page the memo already has."""
        for _ in self._take(lo, hi):
            pass

    def _take(self, lo: int, hi: int) -> Iterator[tuple[int, bytes]]:
        """Entries lo..hi (index, leaf bytes), the next ones of the single pass."""
        if lo != self._next:
            raise RuntimeError(f"ledger pages are read in one pass: asked for entry {lo}, at entry {self._next}")
        stop = min(hi, self._size)
        for index, raw in enumerate(itertools.islice(self._leaves, stop - lo), lo):
            self._next = index + 1
            yield index, raw
        if self._next != stop:  # pragma: no cover - the build holds the ledger locked
            raise RuntimeError("the ledger changed while the site was being built")

    def inputs(self, lo: int, hi: int) -> tuple[Any, ...]:
        """What the rows of entries lo..hi are made from, without reading them: the entries
        (by their leaf hashes, which the tree holds), the place of the first commit among them in
        the commitment list, the runs pages' rows of the runs among them, the public gates."""
        stop = min(hi, self._size)
        runs = [(i, self._run_links.get(self._run_at[i])) for i in range(lo, stop) if i in self._run_at]
        return (
            lo,
            stop,
            self._tree.leaf_hashes(lo, stop),
            commits_before(self._ledger, lo),
            runs,
            sorted(self._public),
            self._bounds[bisect.bisect_right(self._bound_sizes, lo) : bisect.bisect_right(self._bound_sizes, stop) + 1],
        )

    def finish(self) -> None:
        """Every leaf was shown, and there was none beyond the ledger the build replayed."""
        if self._next != self._size or next(self._leaves, None) is not None:  # pragma: no cover - locked
            raise RuntimeError("the ledger changed while the site was being built")

    def _row(self, index: int, raw: bytes) -> EntryRow:
        leaf = json.loads(raw)  # already replayed and checked by the gather: its words, not its rules
        return EntryRow(
            index,
            f"entry-{index}",
            leaf["at"],
            leaf["type"],
            event_summary(leaf),
            self._link(leaf),
            leaf_hash(raw).hex(),
            self._bound_of(index),
        )

    def _bound_of(self, index: int) -> OutsideBound | None:
        n = bisect.bisect_right(self._bound_sizes, index)
        return self._bounds[n] if n < len(self._bounds) else None

    def _link(self, leaf: dict[str, Any]) -> str | None:
        kind = leaf["type"]
        if kind == "commit":
            self._commits += 1
            return layout.commitment_row(self._commits - 1, leaf["id"])
        if kind == "run":
            return self._run_links.get(leaf["id"])
        if kind == "gate":
            return layout.gate_page(leaf["id"]) if leaf["id"] in self._public else None
        return event_link(leaf)
