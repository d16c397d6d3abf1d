"""Drawn runs' and scheduled retirements' pools at the scale of a million items: the sorted
eligible ids of a gate (or of several gates, in one order) at any leaf, counted and indexed without
listing them (FORMAT.md, "Draws and timestamps").

A drawn run's pool is its gate's items committed before its registration and not revealed before
it, less those its subject ran. Listing it reads every commitment, once per drawn run: quadratic
over a history of tens of thousands of runs. Here each gate's ids are sorted once, and a Fenwick
tree over those positions follows the ledger in order (a commit adds its item, a reveal removes
it), so that at a run's registration the pool's size is a prefix sum and its `k`-th id a descent
of the tree: O(log n) each. Runs are met in ledger order by the verifier; a run met out of order
(a command's new run, after the verifier's) starts the sweep again.

A scheduled retirement draws from several gates at once (every secret gate but those a waiting
drawn run holds whole), in one UTF-8 order across them: its `k`-th id is found by a binary search
over every id in that order, counting each gate's members at or before a candidate with its own
tree, so that a retirement costs O(gates · log² n) a drawn item instead of a read of every
commitment.
"""

import bisect
import weakref
from collections.abc import Iterable

from generator.verifier.rules.events import RunEvent
from generator.verifier.rules.ledger import Ledger


class _GateTree:
    """One gate's ids in UTF-8 order, and a Fenwick tree of which are in the pool."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = sorted(ids, key=lambda i: i.encode("utf-8"))
        self.position = {item: n for n, item in enumerate(self.ids)}
        self.tree = [0] * (len(self.ids) + 1)
        self.size = 0
        self.top = 1 << max(len(self.ids), 1).bit_length()

    def add(self, item: str, delta: int) -> None:
        n = self.position[item] + 1
        self.size += delta
        while n < len(self.tree):
            self.tree[n] += delta
            n += n & -n

    def prefix(self, n: int) -> int:
        """How many of the first `n` ids (in UTF-8 order) are in the pool."""
        total = 0
        while n > 0:
            total += self.tree[n]
            n -= n & -n
        return total

    def at_or_before(self, item: str) -> int:
        """How many ids of the pool are at or before `item` in UTF-8 order (`item` of any gate)."""
        return self.prefix(bisect.bisect_right(self.ids, item.encode("utf-8"), key=lambda i: i.encode("utf-8")))

    def select(self, k: int) -> str:
        """The `k`-th (from 0) id of the pool."""
        n, step = 0, self.top
        while step:
            if n + step < len(self.tree) and self.tree[n + step] <= k:
                n += step
                k -= self.tree[n]
            step >>= 1
        return self.ids[n]


class Pool:
    """A run's pool, read by rank; close() puts back the items its subject ran."""

    def __init__(self, tree: _GateTree | None, taken: list[str]) -> None:
        self._tree = tree
        self._taken = taken

    def at(self, rank: int) -> str:
        assert self._tree is not None
        return self._tree.select(rank)

    def close(self) -> None:
        for i in self._taken:
            if self._tree is not None:
                self._tree.add(i, 1)
        self._taken = []


class UnionPool:
    """A scheduled retirement's pool over several gates, read by rank in one UTF-8 order;
    close() puts back the items open runs held."""

    def __init__(self, ordered: list[str], trees: list[_GateTree], taken: list[tuple[_GateTree, str]]) -> None:
        self._ordered = ordered
        self._trees = trees
        self._taken = taken

    def at(self, rank: int) -> str:
        """The `rank`-th (from 0) id: the first in the joint order with more than `rank` at or before it."""
        lo, hi = 0, len(self._ordered) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if sum(t.at_or_before(self._ordered[mid]) for t in self._trees) > rank:
                hi = mid
            else:
                lo = mid + 1
        return self._ordered[lo]

    def close(self) -> None:
        for tree, item in self._taken:
            tree.add(item, 1)
        self._taken = []


class PoolIndex:
    """The pools of a replayed ledger's drawn runs, swept once in ledger order."""

    def __init__(self, ledger: Ledger) -> None:
        # No reference to the ledger is kept: the index is the value of a weak mapping keyed by it.
        self.size = ledger.size
        by_gate: dict[str, list[str]] = {}
        self._events: list[tuple[int, int, str, str]] = []  # (leaf, +1 commit / -1 reveal, gate, id)
        for c in ledger.commits():
            by_gate.setdefault(c.gate, []).append(c.id)
            self._events.append((c.index, 1, c.gate, c.id))
        gate_of = {}
        for r in ledger.reveals.values():
            revealed = ledger.commit(r.id)
            if revealed is not None:
                gate_of[r.id] = revealed.gate
                self._events.append((r.index, -1, revealed.gate, r.id))
        self._events.sort(key=lambda e: e[0])
        self._gates = {g: _GateTree(ids) for g, ids in by_gate.items()}
        # Each gate's reveals by leaf index, for "was any revealed between two leaves".
        self._reveal_leaves: dict[str, list[int]] = {}
        for item, gate in gate_of.items():
            self._reveal_leaves.setdefault(gate, []).append(ledger.reveals[item].index)
        for leaves in self._reveal_leaves.values():
            leaves.sort()
        self._next = 0
        self._at = 0
        self._ordered: list[str] | None = None  # every gate's ids in one UTF-8 order, made when first asked

    def _sweep_to(self, index: int) -> None:
        """The trees as they stood before leaf `index`."""
        if index < self._at:
            self._next = 0
            for tree in self._gates.values():
                tree.tree = [0] * len(tree.tree)
                tree.size = 0
        while self._next < len(self._events) and self._events[self._next][0] < index:
            _, delta, gate, item = self._events[self._next]
            self._gates[gate].add(item, delta)
            self._next += 1
        self._at = index

    def pool(self, run: RunEvent, seen: set[str]) -> tuple[int, Pool]:
        """The size of the run's pool, and a way to read its ids by rank."""
        self._sweep_to(run.index)
        tree = self._gates.get(run.gate)
        if tree is None:
            return 0, Pool(None, [])
        # Items the subject ran leave the pool while it is read, and come back after.
        taken = [i for i in sorted(seen) if i in tree.position and self._in_pool(tree, i)]
        for i in taken:
            tree.add(i, -1)
        return tree.size, Pool(tree, taken)

    def union_pool(self, index: int, gates: Iterable[str], held: set[str]) -> tuple[int, UnionPool]:
        """The size of the pool the gates' items form before leaf `index` (committed, not
        revealed), less the `held` ones, and a way to read its ids by rank in one UTF-8 order."""
        self._sweep_to(index)
        trees = [self._gates[g] for g in sorted(set(gates)) if g in self._gates]
        if self._ordered is None:
            self._ordered = sorted((i for t in self._gates.values() for i in t.ids), key=lambda i: i.encode("utf-8"))
        taken = []
        for tree in trees:
            for item in sorted(held):
                if item in tree.position and self._in_pool(tree, item):
                    tree.add(item, -1)
                    taken.append((tree, item))
        return sum(t.size for t in trees), UnionPool(self._ordered, trees, taken)

    def _in_pool(self, tree: _GateTree, item: str) -> bool:
        n, total = tree.position[item] + 1, 0
        lo = n - 1
        while n > 0:
            total += tree.tree[n]
            n -= n & -n
        while lo > 0:
            total -= tree.tree[lo]
            lo -= lo & -lo
        return total == 1

    def revealed_between(self, gate: str, after: int, before: int) -> int | None:
        """The leaf of a reveal of `gate` strictly between two leaves, if any."""
        leaves = self._reveal_leaves.get(gate, [])
        n = bisect.bisect_right(leaves, after)
        return leaves[n] if n < len(leaves) and leaves[n] < before else None


class OpenRuns:
    """The runs open at a leaf (registered before it, not decided before it), swept in ledger order
    as the pool index is: a scheduled retirement reads the runs open then, not every run."""

    def __init__(self, ledger: Ledger) -> None:
        self.size = ledger.size
        # (first leaf it is open at / first leaf it is no longer open at, kind, run): open at leaf i
        # iff registered before i and not decided at or before i.
        events: list[tuple[int, int, str]] = []
        self._runs = dict(ledger.runs)
        for run in ledger.runs.values():
            events.append((run.index + 1, 0, run.id))
            decided = ledger.decided_at(run.id)
            if decided is not None:
                events.append((decided, 1, run.id))
        self._events = sorted(events)
        self._open: dict[str, RunEvent] = {}
        self._next = 0
        self._at = 0

    def at(self, index: int) -> list[RunEvent]:
        """The runs open at leaf `index`, in registration order."""
        if index < self._at:
            self._open, self._next = {}, 0
        while self._next < len(self._events) and self._events[self._next][0] <= index:
            _, kind, run_id = self._events[self._next]
            if kind == 0:
                self._open[run_id] = self._runs[run_id]
            else:
                self._open.pop(run_id, None)
            self._next += 1
        self._at = index
        return sorted(self._open.values(), key=lambda r: r.index)


_INDEXES: "weakref.WeakKeyDictionary[Ledger, PoolIndex]" = weakref.WeakKeyDictionary()
_OPEN: "weakref.WeakKeyDictionary[Ledger, OpenRuns]" = weakref.WeakKeyDictionary()


def open_runs(ledger: Ledger) -> OpenRuns:
    """The ledger's open-runs sweep, made once per replayed state (again when the ledger grew)."""
    found = _OPEN.get(ledger)
    if found is None or found.size != ledger.size:
        found = _OPEN[ledger] = OpenRuns(ledger)
    return found


def pool_index(ledger: Ledger) -> PoolIndex:
    """The ledger's pool index, made once per replayed state (again when the ledger grew)."""
    index = _INDEXES.get(ledger)
    if index is None or index.size != ledger.size:
        index = _INDEXES[ledger] = PoolIndex(ledger)
    return index
