"""`transparency commit`: every new item of the sources committed (format v1 §3).

An item is committed by publishing the SHA-256 of its reveal document, whose 32-byte random
salt keeps the hash from being tested against guesses. The reveal document is written once, at
commit time, and never rebuilt: revealing an item publishes those exact bytes, so their hash
is the commitment signed long before.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.progress import Progress
from generator.program.datadir import Paths
from generator.program.itemsources import ItemSource, SourceRead, scan_item_sources, source_files
from generator.program.ledgerfile import appending, event_time
from generator.state import source_index_cache
from generator.state.item_digest_cache import UNKNOWN, ItemDigests, changed_members, source_digest
from generator.verifier import IdIndex, Ledger, Problem, sha256_hex

PUBLIC_GATE_NOTE = "Public gate: revealed when committed."


def reveal_document(item_id: str, gate: str, salt: str, item: dict[str, Any]) -> bytes:
    """The committed preimage: the canonical bytes of the item-reveal document.

    The item has passed `check_item` (number rules included), so the fast canonical form is
    RFC 8785 byte for byte (format v1 §1); the tests check that equality on generated documents.
    """
    return canonical_json.dumps_validated(
        {"type": "item-reveal", "v": 1, "id": item_id, "gate": gate, "salt": salt, "item": item}
    )


@dataclass(frozen=True)
class CommitResult:
    """Counts, not ids: a commit may hold a million."""

    committed: int
    revealed: int
    unchanged: int


def commit_new_items(paths: Paths, at: str | None = None, progress: Progress | None = None) -> CommitResult:
    """Commit every item source not yet in the ledger; reveal public-gate items at once.

    Two passes over the sources: the first validates every file it reads (any problem stops the
    batch before a byte is written), the second seals and stages, so memory holds ids, not items.
    Nothing is written outside the transaction's staging folder until every leaf is durable
    (generator.program.journal). A JSON source unchanged since a commit that landed read it
    whole is not read again (generator.state.source_index_cache): a commit of one more item
    reads the new file, not the million before it.
    """
    started_ns = time.time_ns()
    read: dict[Path, SourceRead] = {}
    sealed_from: dict[Path, SourceRead] = {}
    with appending(paths, "commit") as app:
        ledger = app.ledger
        kept = source_index_cache.Kept(paths, ledger, source_files(paths), started_ns)
        new = IdIndex()
        total = 0
        digests = ItemDigests(paths, ledger)
        edited: list[tuple[ItemSource, bytes]] = []
        problems: list[Problem] = []
        when = event_time(at, ledger, problems)
        try:
            for src in scan_item_sources(paths, ledger, skip=kept.files, elsewhere=kept.elsewhere, read_whole=read):
                total += 1
                if not ledger.is_committed(src.id):
                    new.add(src.id)
                else:
                    # A committed item never changes; certify would score against the old answer key.
                    was, now = digests.digest(src.id), source_digest(src.gate, src.item)
                    if was not in (now, UNKNOWN):
                        edited.append((src, now))
                if progress and total % 10000 == 0:
                    progress("checking item sources", total, 0)
        except InputError as e:
            problems += e.problems
        problems += [_edited_problem(paths, ledger, digests, src) for src, _ in edited]
        if problems:
            raise InputError(problems, "the item sources have problems; nothing was committed")
        total += kept.rows
        if not len(new):
            digests.save()
            source_index_cache.update(paths, kept, read, ledger)
            return CommitResult(0, 0, total)
        public = ledger.public_gates()
        revealed = 0
        done = 0
        with app.tx.stage_stream(_new_batch(paths, ledger.size), mode=0o600) as sealed:
            for src in scan_item_sources(paths, ledger, wanted=new, skip=kept.files, read_whole=sealed_from):
                data = reveal_document(src.id, src.gate, secrets.token_bytes(32).hex(), src.item)
                leaves = _leaves(src, sha256_hex(data), when, src.gate in public)
                if src.gate in public:
                    app.stage(paths.reveal_file(src.id), data)
                    revealed += 1
                else:
                    sealed.write(data + b"\n")
                # Validates against the replayed state: an id seen twice fails here, unwritten.
                app.tx.add_lines(app.prepare(leaves, bulk=True))
                digests.add(leaves[0]["commitment"], source_digest(src.gate, src.item))
                done += 1
                if progress and (done % 10000 == 0 or done == len(new)):
                    progress("sealing items", done, len(new))
        if done != len(new):
            raise InputError(
                [
                    problem(
                        paths.show(paths.items_dir),
                        "the item sources changed while they were being committed; nothing was committed, run "
                        "'transparency commit' again",
                    )
                ]
            )
    # Records of leaves that did not reach the ledger are never used: the cache is bound to its commitments.
    digests.save()
    # Only now that the commits landed may the index vouch for the files they came from: where
    # each row is (a later retire reads one row instead of parsing its file), and which files
    # the next commit need not read. Only a file both passes read with the same bytes: one
    # edited between them (and perhaps edited back) had its leaves made from other bytes than
    # those validated, and is read again next time.
    same = {p: r for p, r in read.items() if p in sealed_from and sealed_from[p].sha256 == r.sha256}
    source_index_cache.update(paths, kept, same, ledger)
    return CommitResult(len(new), revealed, total - len(new))


def _leaves(src: ItemSource, commitment: str, when: str, public: bool) -> list[dict[str, Any]]:
    """The commit leaf of an item, and for a public gate's item its reveal at once."""
    leaves: list[dict[str, Any]] = [
        {"type": "commit", "v": 1, "id": src.id, "gate": src.gate, "commitment": commitment, "at": when}
    ]
    if public:
        leaves.append(
            {"type": "reveal", "v": 1, "id": src.id, "reason": "public-gate", "note": PUBLIC_GATE_NOTE, "at": when}
        )
    return leaves


def _edited_problem(paths: Paths, ledger: Ledger, digests: ItemDigests, src: ItemSource) -> Problem:
    c = ledger.commit(src.id)
    doc = digests.committed_document(src.id)
    members = changed_members(doc, src.gate, src.item) if doc is not None else []
    what = ", ".join(members) if members else "its content"
    return problem(
        src.file,
        f"item {src.id} was committed at ledger entry {c.index if c else '?'} and its source has changed since "
        f"({what}); certify scores against the committed version",
        f"{src.where} ({src.id})",
        expected="the committed item, unchanged (to change an item, restore this one and commit the new version "
        "under a new id; retire the old one if it is sealed)",
    )


def _new_batch(paths: Paths, size: int) -> Path:
    """A sealed batch named by the ledger size it starts at, never over an existing file."""
    batch = paths.sealed_dir / f"{size:09d}.jsonl"
    n = 1
    while batch.exists():
        batch = paths.sealed_dir / f"{size:09d}-{n}.jsonl"
        n += 1
    return batch
