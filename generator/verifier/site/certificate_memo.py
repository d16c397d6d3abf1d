"""What a certificate's check on a site (certificate_files.py) is a function of, so that the
verifier's memory (memory/release_memory.py) can vouch for a certificate that passed in the
release verified last without reading, parsing or recomputing it again.

A certificate's check reads its manifest row and the files the row names (the certificate, its
signature, its run's spec, details documents, grader record, exports), its evidence files (or
that they are absent), its leaf and its run's, the key valid when it was issued, its gate, its
pinned methodology, the archived root its receipt needs, its place in the status list, and which
of the items it looks at (its spec's, its results', its evidence's) are revealed and where their
documents are. Everything else it checks is fixed by those. The key below hashes all of them,
each file by the SHA-256 this run verified it has (its checksum list's, checked against its
bytes: check_files), never by reading it again. The items and evidence files looked at, and the
methodology version, are what the last check found in the certificate and its spec, whose
SHA-256es are in the key: the same bytes name the same items.

The key is trusted only when the replay went on from the release that check passed in
(Memory.memo): then every leaf up to that release is the one it read, so the commitments
of its items are too. A run a label set measures is always checked in full: the label sets'
check needs what its certificate opened.
"""

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.verifier.core.canonical import canonical_bytes
from generator.verifier.core.formats import ids_text, is_safe_path, sha256_hex
from generator.verifier.memory.release_memory import Memory
from generator.verifier.rules.events import CertificateEvent
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology

# The SHA-256 this run verified a file has (it is listed, and its bytes have what is listed), or None.
Vouched = Callable[[str], str | None]


@dataclass(frozen=True)
class Looked:
    """What a passing certificate check looked at beyond its row and leaves, and what it found."""

    items: tuple[str, ...]  # the items whose reveal it read: its spec's, its results', its evidence's
    evidence: tuple[str, ...]  # the paths of the evidence files it looked for
    version: str | None  # the methodology version its spec pins
    checks: int
    asserted: tuple[str, ...]
    verdict: str
    expires_at: str | None

    def saved(self, key: str) -> list[Any]:
        return [
            key,
            "\n".join(self.items),
            "\n".join(self.evidence),
            self.version,
            self.checks,
            list(self.asserted),
            self.verdict,
            self.expires_at,
        ]

    @staticmethod
    def loaded(saved: list[Any]) -> tuple[str, "Looked"] | None:
        """A remembered check (saved), or None for anything this code did not write."""
        if len(saved) != 8:
            return None
        key, items, evidence, version, checks, asserted, verdict, expires = saved
        if not (
            isinstance(key, str)
            and isinstance(items, str)
            and isinstance(evidence, str)
            and (version is None or isinstance(version, str))
            and isinstance(checks, int)
            and isinstance(asserted, list)
            and all(isinstance(a, str) for a in asserted)
            and isinstance(verdict, str)
            and (expires is None or isinstance(expires, str))
        ):
            return None
        return key, Looked(_split(items), _split(evidence), version, checks, tuple(asserted), verdict, expires)


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n")) if text else ()


@dataclass(frozen=True)
class Context:
    """What every certificate's key is computed against in one run."""

    root: str  # the site's folder
    ledger: Ledger
    vouched: Vouched
    site_key: bytes  # the key a certificate is checked with when the ledger names none valid then
    run_paths: Mapping[str, Any]  # run id -> its spec's path, as the manifest lists it
    reveal_paths: Mapping[str, Any]  # item id -> its reveal document's path, as the manifest lists it
    methodologies: Mapping[str, str]  # version -> methodology_digest of the file this run parsed
    ordinals: Mapping[str, int]
    roots: Mapping[int, bytes]
    program: Mapping[str, str]
    # item -> what certificate_key hashes of its reveal, made once a run (filled as keys are made)
    reveal_entries: dict[str, list[Any]] = field(default_factory=dict)


def certificate_key(
    memory: Memory, x: Context, row: Mapping[str, Any], ev: CertificateEvent, looked: Looked
) -> str | None:
    """The key of everything the check of the certificate `row` names read, given what it looked
    at (`looked`); None when a file it names is not one this run verified (then it is checked in
    full, and says what is wrong)."""
    ledger = x.ledger
    run = ledger.runs.get(ev.run)
    if run is None:
        return None
    gate = ledger.gates.get(run.gate)
    named: list[Any] = [row.get("path"), f"{row.get('path')}.sig", x.run_paths.get(ev.run)]
    for member in ("details", "exports"):
        listed = row.get(member, [])
        if not isinstance(listed, list):
            return None
        named += listed
    if row.get("grader_record") is not None:
        named.append(row.get("grader_record"))
    files = _vouched(x.vouched, named)
    if files is None:
        return None
    evidence = []
    for rel in looked.evidence:
        # Absent until due (a secret gate's log would give answers away): whether it is there counts.
        present = os.path.lexists(os.path.join(x.root, rel))
        evidence.append([rel, present, x.vouched(rel) if present else None])
    items = ids_text(looked.items)
    if items is None:
        return None
    # The items, and for each revealed one where and with which bytes: an item of the public
    # gate is in thousands of runs, so what it contributes is made once a run of the verifier.
    cache, revealed = x.reveal_entries, ledger.reveals
    reveals: list[Any] = [items]
    for item in looked.items:
        if item in revealed:
            entry = cache.get(item)
            if entry is None:
                path = x.reveal_paths.get(item)
                sha = x.vouched(path) if is_safe_path(path) else None
                entry = cache[item] = [item, revealed[item].index, path, sha]
            reveals.append(entry)
    valid = ledger.keys.valid_at(ev.index + 1)
    key = valid[-1].public_key if valid else x.site_key
    published = ledger.methodologies.get(looked.version) if looked.version is not None else None
    draw = ledger.draws.get(run.id)
    size = min((n for n in x.roots if n > ev.index), default=None)
    return memory.recheck_key(
        "certificate",
        dict(row),
        files,
        [ev.serial, ev.run, ev.sha256, ev.index, ev.at],
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at, ledger.decided_at(run.id)],
        [gate.public, gate.name, gate.index] if gate is not None else None,
        key.hex(),
        [looked.version, published.sha256, published.index] if published is not None else looked.version,
        x.methodologies.get(looked.version) if looked.version is not None else None,
        draw.index if draw is not None else None,
        reveals,
        evidence,
        x.ordinals.get(ev.serial),
        [size, x.roots[size].hex()] if size is not None else None,
        dict(x.program),
        ev.serial in ledger.revocations,
    )


def methodology_digests(methodologies: Mapping[str, Methodology]) -> dict[str, str]:
    """Each methodology this run parsed, by version, as the SHA-256 of its parameters as parsed:
    a file whose bytes differ from its leaf's hash is reported, and parsed all the same, so the
    leaf's hash does not say what the checks read."""
    return {v: sha256_hex(canonical_bytes(dict(m.document))) for v, m in sorted(methodologies.items())}


def _vouched(vouched: Vouched, named: list[Any]) -> list[list[str]] | None:
    out = []
    for rel in named:
        sha = vouched(rel) if is_safe_path(rel) else None
        if sha is None:
            return None
        out.append([rel, sha])
    return out
