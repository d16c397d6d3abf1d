"""Committing items and revealing them (SPEC §3).

An item is committed by publishing the SHA-256 of its reveal document, whose 32-byte random
salt keeps the hash from being tested against guesses. The reveal document is written once, at
commit time, and never rebuilt: revealing an item publishes those exact bytes, so their hash
is the commitment signed long before.

Sealed documents are kept in the private directory as append-only JSON-lines batches
(`sealed/<first ledger index>.jsonl`, one document per line: canonical JSON holds no raw
newline). A million items make a handful of files instead of a million, which matters: creating
a small file costs far more than appending a line.
"""

from __future__ import annotations

import re
import secrets
from array import array
from collections import Counter
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import canonical
from generator.datadir import Paths
from generator.disclosure import due_documents, read_due
from generator.errors import InputError, problem
from generator.ledgerfile import appending, event_time
from generator.runs import load_spec
from generator.sources import load_data_file
from generator.verifier import (
    GATE_RE,
    ID_RE,
    MAX_LEAF_BYTES,
    IdIndex,
    Ledger,
    Problem,
    check_item,
    is_gate_id,
    is_id,
    loads_strict,
    sha256_hex,
    show,
)

ITEM_SOURCE_KEYS = ("id", "gate", "prompt", "answer")
PUBLIC_GATE_NOTE = "Public gate: revealed when committed."

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ItemSource:
    id: str
    gate: str
    item: dict[str, Any]
    file: str
    where: str


def reveal_document(item_id: str, gate: str, salt: str, item: dict[str, Any]) -> bytes:
    """The committed preimage: the canonical bytes of the item-reveal document.

    The item has passed `check_item` (number rules included), so the fast canonical form is
    RFC 8785 byte for byte (SPEC §1); the tests check that equality on generated documents.
    """
    return canonical.dumps_validated({"type": "item-reveal", "v": 1, "id": item_id, "gate": gate, "salt": salt, "item": item})


# ---------------------------------------------------------------------------------------------
# Item sources


def _source_files(paths: Paths) -> list[Path]:
    if not paths.items_dir.is_dir():
        raise InputError([problem(paths.show(paths.items_dir), "no item sources directory (it holds *.yaml or *.json files with an 'items' list)")])
    return sorted(p for p in paths.items_dir.iterdir() if p.suffix in (".yaml", ".yml", ".json") and not p.name.startswith("."))


def _source_rows(paths: Paths, path: Path, problems: list[Problem]) -> list[Any] | None:
    file = paths.show(path)
    try:
        raw = load_data_file(path, file)
    except InputError as e:
        problems += e.problems
        return None
    rows = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(rows, list):
        problems.append(problem(file, "must be a mapping with a list 'items'", found=type(raw).__name__))
        return None
    unknown_top = sorted(set(raw) - {"items"})
    if unknown_top:
        problems.append(problem(file, f"unknown top-level key(s) {', '.join(unknown_top)}"))
    return rows


def scan_item_sources(
    paths: Paths, ledger: Ledger, wanted: Container[str] | None = None, mentioning: set[str] | None = None
) -> Iterator[ItemSource]:
    """Validate every item source and yield the valid ones, file by file, in name order.

    Raises InputError with every problem of every file once the scan ends, so a caller that
    writes must consume the whole scan first. Memory stays small: per item only its id and
    where it was seen. With `wanted` (a second pass over sources already scanned whole, or the
    items a retire reveals), only those ids' rows are checked, and no duplicate index is kept.
    With `mentioning`, files whose text names none of those ids are skipped unparsed: retiring
    items of a million must not parse them all.
    """
    problems: list[Problem] = []
    files = _source_files(paths)
    # Where each id was first seen (file number and row, packed), in flat arrays: a million ids.
    seen = _Seen()

    def place(packed: int) -> str:
        return f"{paths.show(files[packed >> 32])} items[{packed & 0xFFFFFFFF}]"

    for file_no, path in enumerate(files):
        if mentioning is not None:
            try:
                if not _mentions(path.read_text(encoding="utf-8", errors="replace"), mentioning):
                    continue
            except OSError:
                pass  # _source_rows reports it
        rows = _source_rows(paths, path, problems)
        if rows is None:
            continue
        file = paths.show(path)
        for i, row in enumerate(rows):
            if wanted is not None:
                if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"] in wanted:
                    found = _check_source(row, file, f"items[{i}]", ledger, _Seen(), place)
                    problems += found
                    if not found:
                        yield ItemSource(row["id"], row["gate"], {"prompt": row["prompt"], "answer": row["answer"]}, file, f"items[{i}]")
                continue
            where = f"items[{i}]"
            found = _check_source(row, file, where, ledger, seen, place)
            problems += found
            if not found:
                seen.add(row["id"], (file_no << 32) | i)
                yield ItemSource(row["id"], row["gate"], {"prompt": row["prompt"], "answer": row["answer"]}, file, where)
            elif isinstance(row, dict) and is_id(row.get("id")) and row["id"] not in seen:
                seen.add(row["id"], (file_no << 32) | i)
    if problems:
        raise InputError(problems, "the item sources have problems; nothing was written")


_ID_TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _mentions(text: str, ids: set[str]) -> bool:
    if len(ids) <= 16:
        return any(i in text for i in ids)
    return any(m.group() in ids for m in _ID_TOKEN_RE.finditer(text))


class _Seen:
    """Ids seen so far and where, on the verifier's compact IdIndex."""

    def __init__(self) -> None:
        self._ids = IdIndex()
        self._where = array("Q")

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._ids

    def add(self, item_id: str, packed: int) -> None:
        self._ids.add(item_id)
        self._where.append(packed)

    def __getitem__(self, item_id: str) -> int:
        o = self._ids.get(item_id)
        if o is None:
            raise KeyError(item_id)
        return self._where[o]


def _check_source(row: Any, file: str, where: str, ledger: Ledger, seen: _Seen, place: Callable[[int], str]) -> list[Problem]:
    if not isinstance(row, dict):
        return [problem(file, "an item must be a mapping", where, found=type(row).__name__)]
    problems: list[Problem] = []
    item_id = row.get("id")
    label = f"{where} ({item_id})" if isinstance(item_id, str) else where
    if not is_id(item_id):
        problems.append(problem(file, "malformed item id (lowercase letters, digits, '_' and '-', at most 64, starting with a letter or digit)", f"{where}.id", expected=ID_RE.pattern, found=show(item_id)))
    elif item_id in seen:
        problems.append(problem(file, f"duplicate item id {item_id}", f"{where}.id", expected="ids unique across all item files", found=f"also at {place(seen[item_id])}"))
    gate = row.get("gate")
    if not is_gate_id(gate):
        problems.append(problem(file, "malformed gate id", f"{label}.gate", expected=GATE_RE.pattern, found=show(gate)))
    elif gate not in ledger.gates:
        problems.append(problem(file, "unknown gate (declare it first with 'transparency gate add')", f"{label}.gate", expected=", ".join(ledger.gates) or "a declared gate", found=gate))
    unknown = sorted(set(row) - set(ITEM_SOURCE_KEYS))
    if unknown:
        problems.append(problem(file, f"unknown key(s) {', '.join(unknown)}", label, expected=", ".join(ITEM_SOURCE_KEYS)))
    problems += [p.at(file, label) for p in check_item({"prompt": row.get("prompt"), "answer": row.get("answer")}, "")]
    return problems


# ---------------------------------------------------------------------------------------------
# The sealed store


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


# ---------------------------------------------------------------------------------------------
# Commit


@dataclass(frozen=True)
class CommitResult:
    """Counts, not ids: a commit may hold a million."""

    committed: int
    revealed: int
    unchanged: int


def commit_new_items(paths: Paths, at: str | None = None, progress: Progress | None = None) -> CommitResult:
    """Commit every item source not yet in the ledger; reveal public-gate items at once.

    Two passes over the sources: the first validates everything (any problem stops the batch
    before a byte is written), the second seals and stages, so memory holds ids, not items.
    Nothing is written outside the transaction's staging folder until every leaf is durable
    (generator.journal).
    """
    with appending(paths, "commit") as app:
        ledger = app.ledger
        when = event_time(at, ledger)
        new = IdIndex()
        total = 0
        for src in scan_item_sources(paths, ledger):
            total += 1
            if not ledger.is_committed(src.id):
                new.add(src.id)
            if progress and total % 10000 == 0:
                progress("checking item sources", total, 0)
        if not len(new):
            return CommitResult(0, 0, total)
        public = ledger.public_gates()
        revealed = 0
        done = 0
        with app.tx.stage_stream(_new_batch(paths, ledger.size), mode=0o600) as sealed:
            for src in scan_item_sources(paths, ledger, wanted=new):
                data = reveal_document(src.id, src.gate, secrets.token_bytes(32).hex(), src.item)
                leaves: list[dict[str, Any]] = [
                    {"type": "commit", "v": 1, "id": src.id, "gate": src.gate, "commitment": sha256_hex(data), "at": when}
                ]
                if src.gate in public:
                    leaves.append({"type": "reveal", "v": 1, "id": src.id, "reason": "public-gate", "note": PUBLIC_GATE_NOTE, "at": when})
                    app.stage(paths.reveal_file(src.id), data)
                    revealed += 1
                else:
                    sealed.write(data + b"\n")
                # Validates against the replayed state: an id seen twice fails here, unwritten.
                app.tx.add_lines(app.prepare(leaves, bulk=True))
                done += 1
                if progress and (done % 10000 == 0 or done == len(new)):
                    progress("sealing items", done, len(new))
        if done != len(new):
            raise InputError([problem(paths.show(paths.items_dir), "the item sources changed while they were being committed; nothing was committed, run 'transparency commit' again")])
        return CommitResult(len(new), revealed, total - len(new))


def _new_batch(paths: Paths, size: int) -> Path:
    """A sealed batch named by the ledger size it starts at, never over an existing file."""
    batch = paths.sealed_dir / f"{size:09d}.jsonl"
    n = 1
    while batch.exists():
        batch = paths.sealed_dir / f"{size:09d}-{n}.jsonl"
        n += 1
    return batch


# ---------------------------------------------------------------------------------------------
# Retire


def retire_items(paths: Paths, item_ids: list[str], note: str, at: str | None = None) -> list[dict[str, Any]]:
    """Reveal sealed items of a secret gate: publish their committed bytes, append the reveals.

    Refuses (writing nothing) an unknown or already revealed item, one whose source changed
    since it was committed, one whose sealed document is missing, and one used by an open run.
    """
    with appending(paths, "retire") as app:
        ledger = app.ledger
        problems: list[Problem] = []
        when = event_time(at, ledger)
        if not note.strip():
            problems.append(problem("--note", "a retirement needs a note saying why"))
        twice = sorted(i for i, n in Counter(item_ids).items() if n > 1)
        if twice:
            problems.append(problem("retire", f"an id is given twice: {', '.join(twice)}"))
        open_specs = _open_run_items(paths, ledger, problems)
        known = {i: c.commitment for i in item_ids if is_id(i) and (c := ledger.commit(i)) is not None and i not in ledger.reveals}
        # One pass over the sealed batches and one over the sources, however many items retire.
        sealed = find_sealed_many(paths, known)
        try:
            sources = {src.id: src for src in scan_item_sources(paths, ledger, wanted=set(known), mentioning=set(known))}
        except InputError as e:
            problems += e.problems
            sources = {}
        documents: list[tuple[str, bytes]] = []
        leaves: list[dict[str, Any]] = []
        for item_id in item_ids:
            c = ledger.commit(item_id) if is_id(item_id) else None
            if c is None:
                problems.append(problem("retire", f"unknown item {item_id!r}: it was never committed"))
                continue
            if item_id in ledger.reveals:
                r = ledger.reveals[item_id]
                problems.append(problem("retire", f"item {item_id} is already revealed ({r.reason}, {r.at})"))
                continue
            for run_id, items in open_specs.items():
                if item_id in items:
                    problems.append(problem("retire", f"item {item_id} is used by run {run_id}, which is still open; certify the run first"))
            data = sealed.get(item_id)
            if data is None:
                problems.append(problem(paths.show(paths.sealed_dir), f"no sealed document of {item_id} hashes to its commitment {c.commitment}; without it the item cannot be revealed"))
                continue
            src = sources.get(item_id)
            if src is None:
                problems.append(problem(paths.show(paths.items_dir), f"no item source for {item_id}: cannot confirm its text is the one committed"))
            elif canonical.dumps_validated(src.item) != canonical.dumps_validated(loads_strict(data)["item"]):
                problems.append(problem(src.file, f"item {item_id} changed since it was committed; a committed item cannot change (revert the edit, or commit a new item)", src.where))
            leaf = {"type": "reveal", "v": 1, "id": item_id, "reason": "retired", "note": note, "at": when}
            size = len(canonical.dumps(leaf))
            if size > MAX_LEAF_BYTES:
                problems.append(problem("--note", "the note makes the ledger leaf too large", expected=f"at most {MAX_LEAF_BYTES} bytes", found=f"{size} bytes"))
            documents.append((item_id, data))
            leaves.append(leaf)
        # Retiring makes due the details of every certificate that used these items, and the
        # grader record of every certificate whose items are now all revealed (SPEC §6).
        retiring = set(item_ids)
        revealed = _RevealedAfter(ledger, retiring)
        published = [(due, read_due(paths, due, problems)) for due in due_documents(paths, ledger, revealed, problems, only_items=retiring)]
        if problems:
            raise InputError(problems, f"cannot retire {', '.join(item_ids)}; nothing was written")
        app.append(leaves)
        # Staged: the item's text reaches data/ only once its reveal is in the ledger.
        for item_id, data in documents:
            app.stage(paths.reveal_file(item_id), data)
        for due, data in published:
            assert data is not None
            app.stage(due.target, data)
        return leaves


class _RevealedAfter:
    """The items revealed once a retire lands: the ledger's reveals and the ones retiring."""

    def __init__(self, ledger: Ledger, retiring: set[str]) -> None:
        self.ledger = ledger
        self.retiring = retiring

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.retiring or item_id in self.ledger.reveals


def retire_item(paths: Paths, item_id: str, note: str, at: str | None = None) -> dict[str, Any]:
    return retire_items(paths, [item_id], note, at)[0]


def _open_run_items(paths: Paths, ledger: Ledger, problems: list[Problem]) -> dict[str, set[str]]:
    """The items of every run still open: such items cannot be retired (it would contaminate the run)."""
    out: dict[str, set[str]] = {}
    for run in ledger.runs.values():
        if run.id in ledger.certificate_of_run:
            continue
        spec = load_spec(paths, ledger, run.id, problems)
        if isinstance(spec, dict) and isinstance(spec.get("items"), list):
            out[run.id] = set(spec["items"])
        elif spec is not None:
            problems.append(problem(paths.show(paths.run_spec_file(run.id)), f"the spec of open run {run.id} lists no items; cannot check which items it uses"))
    return out
