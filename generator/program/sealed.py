"""The sealed store: every committed preimage of a secret item, kept privately until it is revealed.

Sealed documents are append-only JSON-lines batches (`sealed/<first ledger index>.jsonl`, one
document per line: canonical JSON holds no raw newline). A million items make a handful of files
instead of a million, which matters: creating a small file costs far more than appending a line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from generator.core.generator_errors import problem
from generator.program.datadir import Paths
from generator.program.documents import read_or_none
from generator.verifier import Ledger, Problem, RevealedAnswers, sha256_hex

_SEALED_ID_RE = re.compile(rb'^\{"gate":"[a-z0-9]{1,16}","id":"([a-z0-9][a-z0-9_-]{0,63})","item":', re.M)


def _sealed_lines(paths: Paths) -> Iterator[tuple[str, bytes, Path, int]]:
    """Every sealed document as (item id, the exact committed bytes, batch, offset)."""
    if not paths.sealed_dir.is_dir():
        return
    for batch in sorted(paths.sealed_dir.glob("*.jsonl")):
        offset = 0
        with batch.open("rb") as f:
            for line in f:
                m = _SEALED_ID_RE.match(line)
                if m and line.endswith(b"\n"):
                    yield m.group(1).decode(), line[:-1], batch, offset
                offset += len(line)


def iter_sealed(paths: Paths) -> Iterator[tuple[str, bytes]]:
    """Every sealed document as (item id, the exact committed bytes), batch by batch."""
    for item_id, line, _, _ in _sealed_lines(paths):
        yield item_id, line


def locate_sealed(
    paths: Paths, wanted: dict[str, str], ledger: Ledger | None = None
) -> dict[str, tuple[Path, int, int]]:
    """Where the sealed documents of many items are, {id: (batch, offset, length)}, in one pass
    over the batches. `wanted` maps each id to its commitment; a line counts only if it hashes
    to it (an interrupted commit can leave a line no leaf refers to). A caller that needs a
    quarter of a million answers reads them one at a time (read_located) instead of holding
    them all.

    With `ledger` (the replayed state), a few items are first looked up by bisection
    (`_bisect_sealed`): a command that needs 25 answers reads a few dozen lines, not a million.
    What that does not find is looked for in the full pass, as without it."""
    found: dict[str, tuple[Path, int, int]] = {}
    if ledger is not None and 0 < len(wanted) <= _BISECT_AT_MOST:
        batches = _batches_by_start(paths)
        for item_id, commitment in wanted.items():
            where = _bisect_sealed(batches, ledger, item_id, commitment)
            if where is not None:
                found[item_id] = where
        if len(found) == len(wanted):
            return found
    for item_id, line, batch, offset in _sealed_lines(paths):
        want = wanted.get(item_id)
        if want is not None and item_id not in found and sha256_hex(line) == want:
            found[item_id] = (batch, offset, len(line))
            if len(found) == len(wanted):
                break
    return found


def find_sealed_many(paths: Paths, wanted: dict[str, str], ledger: Ledger | None = None) -> dict[str, bytes]:
    """The sealed documents of many items at once, {id: bytes} (locate_sealed)."""
    return {item_id: read_located(where) for item_id, where in locate_sealed(paths, wanted, ledger).items()}


# Past this many items a command reads every batch once anyway: bisection would cost more.
_BISECT_AT_MOST = 1000
# Below this many bytes between the bounds, the lines are read one by one.
_BISECT_SPAN = 1 << 12
_BATCH_RE = re.compile(r"^([0-9]{9})(?:-[0-9]+)?\.jsonl$")


def _batches_by_start(paths: Paths) -> list[tuple[int, Path]]:
    """The sealed batches with the ledger index each starts at (its name), latest first."""
    if not paths.sealed_dir.is_dir():
        return []
    out = [(int(m.group(1)), p) for p in paths.sealed_dir.glob("*.jsonl") if (m := _BATCH_RE.match(p.name))]
    return sorted(out, key=lambda b: (b[0], b[1].name), reverse=True)


def _bisect_sealed(
    batches: list[tuple[int, Path]], ledger: Ledger, item_id: str, want: str
) -> tuple[Path, int, int] | None:
    """Where the sealed line of `item_id` is, found by bisection, or None (then the caller reads
    every batch). A commit writes its sealed lines in the order of its leaves, into a batch named
    by the ledger index it starts at: within a batch the lines' commit indexes increase, so the
    batch is bisected on them. A line the ledger does not know at its commitment (one an
    interrupted commit left) breaks that order: the bisection gives up rather than guess."""
    c = ledger.commit(item_id)
    if c is None:
        return None
    for start, batch in batches:
        if start > c.index:
            continue
        try:
            hit = _bisect_batch(batch, ledger, c.index, item_id.encode())
        except OSError:
            return None
        if hit is not None and sha256_hex(hit[1]) == want:
            return batch, hit[0], len(hit[1])
        return None
    return None


def _line_index(ledger: Ledger, line: bytes) -> int | None:
    """The ledger index of the commit a sealed line belongs to, or None for a line no commit
    of the ledger holds (its id unknown, or its bytes not the commitment)."""
    m = _SEALED_ID_RE.match(line)
    if m is None or not line.endswith(b"\n"):
        return None
    c = ledger.commit(m.group(1).decode())
    if c is None or sha256_hex(line[:-1]) != c.commitment:
        return None
    return c.index


def _bisect_batch(batch: Path, ledger: Ledger, target: int, item_id: bytes) -> tuple[int, bytes] | None:
    """(offset, bytes without the newline) of the line of `batch` that holds `item_id`, whose
    commit is the leaf at `target`; None if the bisection does not lead to it."""
    with batch.open("rb") as f:
        lo, hi = 0, f.seek(0, 2)
        while hi - lo > _BISECT_SPAN:
            f.seek((lo + hi) // 2)
            f.readline()  # the rest of the line the middle falls in
            at = f.tell()
            if at >= hi:
                break
            line = f.readline()
            k = _line_index(ledger, line)
            if k is None:
                return None
            if k == target:
                return at, line[:-1]
            if k < target:
                lo = at + len(line)
            else:
                hi = at
        # A few lines are left: the one wanted is the one with its id (its hash is checked).
        f.seek(lo)
        at = lo
        while at < hi:
            line = f.readline()
            m = _SEALED_ID_RE.match(line)
            if not line.endswith(b"\n"):
                return None
            if m is not None and m.group(1) == item_id:
                return at, line[:-1]
            at += len(line)
    return None


def read_located(where: tuple[Path, int, int]) -> bytes:
    batch, offset, length = where
    with batch.open("rb") as f:
        f.seek(offset)
        return f.read(length)


def run_answers(
    paths: Paths,
    ledger: Ledger,
    items: list[str],
    public: bool,
    sealed: dict[str, tuple[Path, int, int]],
    problems: list[Problem],
) -> dict[str, dict[str, Any]]:
    """The answer of every item of a run: from the published reveal on a public gate, from the
    sealed document on a secret one, each checked against its commitment."""
    if public:
        source = RevealedAnswers(ledger, lambda item: read_or_none(paths.reveal_file(item)))
    else:
        source = RevealedAnswers(
            ledger, lambda item: read_located(sealed[item]) if item in sealed else None, sealed=True
        )
    out: dict[str, dict[str, Any]] = {}
    for item_id in items:
        if ledger.commit(item_id) is None:
            continue
        answer, why = source.load(item_id)
        if answer is not None:
            out[item_id] = answer
        elif not public and item_id not in sealed:
            problems.append(
                problem(
                    paths.show(paths.sealed_dir),
                    f"no sealed document of {item_id} hashes to its commitment; its answer is needed to score it",
                )
            )
        else:
            problems.append(problem(paths.show(paths.reveal_file(item_id) if public else paths.sealed_dir), str(why)))
    return out
