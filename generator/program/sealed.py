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


def locate_sealed(paths: Paths, wanted: dict[str, str]) -> dict[str, tuple[Path, int, int]]:
    """Where the sealed documents of many items are, {id: (batch, offset, length)}, in one pass
    over the batches. `wanted` maps each id to its commitment; a line counts only if it hashes
    to it (an interrupted commit can leave a line no leaf refers to). A caller that needs a
    quarter of a million answers reads them one at a time (read_located) instead of holding
    them all."""
    found: dict[str, tuple[Path, int, int]] = {}
    for item_id, line, batch, offset in _sealed_lines(paths):
        want = wanted.get(item_id)
        if want is not None and item_id not in found and sha256_hex(line) == want:
            found[item_id] = (batch, offset, len(line))
            if len(found) == len(wanted):
                break
    return found


def find_sealed_many(paths: Paths, wanted: dict[str, str]) -> dict[str, bytes]:
    """The sealed documents of many items at once, {id: bytes}, in one pass over the batches."""
    return {item_id: read_located(where) for item_id, where in locate_sealed(paths, wanted).items()}


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
