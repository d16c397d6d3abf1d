"""Committing items and revealing them (SPEC §3).

An item is committed by publishing the SHA-256 of its reveal document, whose 32-byte random
salt keeps the hash from being tested against guesses. The reveal document is written once, at
commit time, and never rebuilt: revealing an item publishes those exact bytes, so their hash
is the commitment signed long before.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import canonical
from generator.datadir import Paths
from generator.errors import InputError, problem
from generator.ledgerfile import appending, event_time, fsync_dir, write_new_file
from generator.sources import load_data_file
from generator.verify import (
    GATE_RE,
    ID_RE,
    MAX_LEAF_BYTES,
    FormatError,
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
    """The committed preimage: JCS bytes of the item-reveal document."""
    return canonical.dumps({"type": "item-reveal", "v": 1, "id": item_id, "gate": gate, "salt": salt, "item": item})


def load_item_sources(paths: Paths, ledger: Ledger) -> dict[str, ItemSource]:
    """Every item source under the private items directory, validated; all problems at once.

    A source file holds `items:`, a list of {id, gate, prompt, answer}. Files are read in name
    order so that messages and commit order never depend on the file system.
    """
    problems: list[Problem] = []
    items: dict[str, ItemSource] = {}
    if not paths.items_dir.is_dir():
        raise InputError([problem(paths.show(paths.items_dir), "no item sources directory (it holds *.yaml or *.json files with an 'items' list)")])
    files = sorted(p for p in paths.items_dir.iterdir() if p.suffix in (".yaml", ".yml", ".json") and not p.name.startswith("."))
    for path in files:
        file = paths.show(path)
        try:
            raw = load_data_file(path, file)
        except InputError as e:
            problems += e.problems
            continue
        rows = raw.get("items") if isinstance(raw, dict) else None
        if not isinstance(rows, list):
            problems.append(problem(file, "must be a mapping with a list 'items'", found=type(raw).__name__))
            continue
        unknown_top = sorted(set(raw) - {"items"})
        if unknown_top:
            problems.append(problem(file, f"unknown top-level key(s) {', '.join(unknown_top)}"))
        for i, row in enumerate(rows):
            where = f"items[{i}]"
            problems += _check_source(row, file, where, ledger, items)
            if isinstance(row, dict) and is_id(row.get("id")) and row["id"] not in items:
                items[row["id"]] = ItemSource(row["id"], str(row.get("gate")), {"prompt": row.get("prompt"), "answer": row.get("answer")}, file, where)
    if problems:
        raise InputError(problems, "the item sources have problems; nothing was committed")
    return items


def _check_source(row: Any, file: str, where: str, ledger: Ledger, seen: dict[str, ItemSource]) -> list[Problem]:
    if not isinstance(row, dict):
        return [problem(file, "an item must be a mapping", where, found=type(row).__name__)]
    problems: list[Problem] = []
    item_id = row.get("id")
    label = f"{where} ({item_id})" if isinstance(item_id, str) else where
    if not is_id(item_id):
        problems.append(problem(file, "malformed item id (lowercase letters, digits, '_' and '-', at most 64, starting with a letter or digit)", f"{where}.id", expected=ID_RE.pattern, found=show(item_id)))
    elif item_id in seen:
        first = seen[item_id]
        problems.append(problem(file, f"duplicate item id {item_id}", f"{where}.id", expected="ids unique across all item files", found=f"also at {first.file} {first.where}"))
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


@dataclass(frozen=True)
class CommitResult:
    committed: list[str]
    revealed: list[str]
    unchanged: int


def commit_new_items(paths: Paths, at: str | None = None, progress: Progress | None = None) -> CommitResult:
    """Commit every item source not yet in the ledger; reveal public-gate items at once."""
    with appending(paths) as app:
        sources = load_item_sources(paths, app.ledger)
        new = [s for s in sources.values() if not app.ledger.is_committed(s.id)]
        when = event_time(at, app.ledger)
        public = app.ledger.public_gates()
        leaves: list[dict[str, Any]] = []
        files: list[tuple[Path, bytes]] = []
        revealed: list[str] = []
        for n, src in enumerate(new, start=1):
            data = reveal_document(src.id, src.gate, secrets.token_bytes(32).hex(), src.item)
            leaves.append({"type": "commit", "v": 1, "id": src.id, "gate": src.gate, "commitment": sha256_hex(data), "at": when})
            if src.gate in public:
                leaves.append({"type": "reveal", "v": 1, "id": src.id, "reason": "public-gate", "note": PUBLIC_GATE_NOTE, "at": when})
                revealed.append(src.id)
                files.append((paths.reveal_file(src.id), data))
            else:
                files.append((paths.sealed_file(src.id), data))
            if progress and (n % 1000 == 0 or n == len(new)):
                progress("sealing items", n, len(new))
        lines = app.prepare(leaves)
        for n, (target, data) in enumerate(files, start=1):
            write_new_file(target, data, 0o600 if target.is_relative_to(paths.private) else 0o644)
            if progress and (n % 1000 == 0 or n == len(files)):
                progress("writing reveal documents", n, len(files))
        for d in sorted({t.parent for t, _ in files}):
            fsync_dir(d)
        # The ledger is written last: a crash before this line leaves files no leaf refers to,
        # which the next commit overwrites, never a leaf whose document is missing.
        app.write(lines)
        return CommitResult([s.id for s in new], revealed, len(sources) - len(new))


def retire_item(paths: Paths, item_id: str, note: str, at: str | None = None) -> dict[str, Any]:
    """Reveal a sealed item of a secret gate: publish its committed bytes, append the reveal."""
    with appending(paths) as app:
        ledger = app.ledger
        label = "retire"
        c = ledger.commit(item_id) if isinstance(item_id, str) else None
        if c is None:
            raise InputError([problem(label, f"unknown item {item_id!r}: it was never committed")])
        if item_id in ledger.reveals:
            r = ledger.reveals[item_id]
            raise InputError([problem(label, f"item {item_id} is already revealed ({r.reason}, {r.at})")])
        if ledger.gates[c.gate].public:  # pragma: no cover - public items are revealed at commit
            raise InputError([problem(label, f"item {item_id} is on public gate {c.gate}; it was revealed when committed")])
        problems = _open_runs_using(paths, ledger, item_id)
        sealed = paths.sealed_file(item_id)
        try:
            data = sealed.read_bytes()
        except FileNotFoundError:
            raise InputError([problem(paths.show(sealed), f"the sealed reveal document of {item_id} is missing; without it the item cannot be revealed")]) from None
        if sha256_hex(data) != c.commitment:
            raise InputError([problem(paths.show(sealed), "the sealed document does not hash to the item's commitment", expected=c.commitment, found=sha256_hex(data))])
        sources = load_item_sources(paths, ledger)
        src = sources.get(item_id)
        doc = loads_strict(data)
        if src is None:
            problems.append(problem(paths.show(paths.items_dir), f"no item source for {item_id}: cannot confirm its text is the one committed"))
        elif canonical.dumps(src.item) != canonical.dumps(doc["item"]):
            problems.append(problem(src.file, f"item {item_id} changed since it was committed; a committed item cannot change (revert the edit, or commit a new item)", src.where))
        when = event_time(at, ledger)
        leaf = {"type": "reveal", "v": 1, "id": item_id, "reason": "retired", "note": note, "at": when}
        size = len(canonical.dumps(leaf))
        if size > MAX_LEAF_BYTES:
            problems.append(problem("--note", "the note makes the ledger leaf too large", expected=f"at most {MAX_LEAF_BYTES} bytes", found=f"{size} bytes"))
        if not note.strip():
            problems.append(problem("--note", "a retirement needs a note saying why"))
        if problems:
            raise InputError(problems, f"cannot retire {item_id}")
        lines = app.prepare([leaf])
        write_new_file(paths.reveal_file(item_id), data)
        fsync_dir(paths.reveals_dir)
        app.write(lines)
        return leaf


def _open_runs_using(paths: Paths, ledger: Ledger, item_id: str) -> list[Problem]:
    """An item of an open run cannot be retired: the run's results would be contaminated."""
    problems = []
    for run in ledger.runs.values():
        if run.id in ledger.certificate_of_run:
            continue
        spec_file = paths.runs_dir / f"{run.id}.json"
        try:
            spec = loads_strict(spec_file.read_bytes())
        except (OSError, FormatError):
            problems.append(problem(paths.show(spec_file), f"cannot read the spec of open run {run.id} to check it does not use {item_id}"))
            continue
        if item_id in (spec.get("items") or []):
            problems.append(problem("retire", f"item {item_id} is used by run {run.id}, which is still open; certify the run first"))
    return problems
