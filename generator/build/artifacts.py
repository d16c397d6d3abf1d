"""The site's artifacts (format v1 §2, §4, §7, §8): keys, the ledger documents, the signed checkpoint,
the manifest and the verifier, streamed where they are large.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from importlib.resources import files
from typing import Any

from generator.build.exports import export_paths
from generator.build.gather import CertificateInfo, CertificateRecord, SiteContext
from generator.build.previous_release import PreviousRelease
from generator.build.writer import SiteWriter
from generator.core import canonical_json, layout
from generator.core.generator_errors import InputError, problem
from generator.core.key_schedule import BuildKeys
from generator.core.object_kinds import static_host_headers
from generator.program.datadir import public_key_row
from generator.program.ledgerfile import ledger_lines
from generator.verifier import (
    MANIFEST_V4,
    ML_DSA_KEYS_MEMBER,
    FormatError,
    Ledger,
    commitment_index_bytes,
    commitment_part_bytes,
    commitment_part_count,
    commitment_part_path,
    commitment_rows_bytes,
    cut_manifest,
    ed25519_verify,
    parse_canonical,
    parse_vkey,
    part_rows,
    parts_touched_since,
    public_key_pem,
    revocation_list,
)


def verifier_bytes() -> bytes:
    """The standalone verifier, as every site ships it (format v1 §8)."""
    return (files("generator") / "verify.py").read_bytes()


def keys_document(ctx: SiteContext) -> dict[str, Any]:
    rows = []
    for k in ctx.public_keys:
        vk = parse_vkey(k.vkey)
        rows.append(
            public_key_row(k)
            | {
                "public_key": base64.b64encode(vk.public_key).decode(),
                "fingerprint": vk.fingerprint,
                "pem": layout.key_pem(vk.key_id.hex()),
            }
        )
    doc: dict[str, Any] = {"type": "keys", "v": 1, "origin": ctx.origin, "keys": rows}
    # The ML-DSA-44 keys enter by ledger leaves only, so the ledger alone gives their rows.
    ml_dsa = [
        row | {"public_key": base64.b64encode(span.key.public_key).decode(), "fingerprint": span.key.fingerprint}
        for row, span in zip(ctx.ledger.keys.ml_dsa_rows(), ctx.ledger.keys.ml_dsa, strict=True)
    ]
    if ml_dsa:
        doc[ML_DSA_KEYS_MEMBER] = ml_dsa
    return doc


def commitment_rows(ctx: SiteContext, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
    revealed = ctx.ledger.reveals
    for c in ctx.ledger.commits(start, stop):
        yield {
            "at": c.at,
            "commitment": c.commitment,
            "gate": c.gate,
            "id": c.id,
            "index": c.index,
            "status": "revealed" if c.id in revealed else "sealed",
        }


def _list_document(key: str, elements: Iterator[bytes], tail: dict[str, Any]) -> Iterator[bytes]:
    """A canonical document {key: [...], **tail} whose list comes as element bytes, in chunks.

    `key` sorts before every key of `tail`, so the list comes first in canonical form.
    """
    yield b'{"' + key.encode() + b'":['
    buf: list[bytes] = []
    for i, raw in enumerate(elements):
        buf.append(b"," + raw if i else raw)
        if len(buf) >= 4096:
            yield b"".join(buf)
            buf.clear()
    yield b"".join(buf)
    yield b"]," + canonical_json.dumps(tail)[1:]


def entries_document(ctx: SiteContext, each: Callable[[int, bytes], None] | None = None) -> Iterator[bytes]:
    """The ledger entries, re-read from the ledger file (which the build holds locked); `each`
    sees every leaf on the way, so that other artifacts of the leaves need no second pass."""
    count = 0

    def leaves() -> Iterator[bytes]:
        nonlocal count
        for raw in ledger_lines(ctx.paths):
            if each is not None:
                each(count, raw)
            count += 1
            yield raw

    yield from _list_document(
        "entries", leaves(), {"origin": ctx.origin, "tree_size": ctx.ledger.size, "type": "ledger-entries", "v": 1}
    )
    if count != ctx.ledger.size:  # pragma: no cover - the lock prevents it
        raise RuntimeError("the ledger changed while the site was being built")


def commitment_list(ctx: SiteContext) -> Iterator[bytes]:
    """The signed list of every commitment, made by the very code that checks it (the verifier
    compares the document with these bytes), a batch of rows at a time for a million items."""
    yield b'{"commitments":['
    yield from commitment_rows_bytes(ctx.ledger)
    yield (
        b"],"
        + canonical_json.dumps({"origin": ctx.origin, "tree_size": ctx.ledger.size, "type": "commitment-list", "v": 1})[
            1:
        ]
    )


def manifest(ctx: SiteContext) -> dict[str, Any]:
    ledger = ctx.ledger
    v3 = ctx.program.format >= 3  # the ledger is its tiles (docs/formats/v3.md, 3)
    return {
        "type": "transparency-manifest",
        "v": 3 if v3 else 1,
        "origin": ctx.origin,
        "name": ctx.program.name,
        "generated_at": ctx.generated_at,
        "keys": layout.KEYS,
        "verifier": layout.VERIFIER,
        "gates": [{"id": g.id, "name": g.name, "public": g.public} for g in ledger.gates.values()],
        "methodology": [
            {
                "version": m.version,
                "document": layout.methodology_document(m.version),
                "parameters": layout.methodology_parameters(m.version),
                "sha256": m.sha256,
            }
            for m in ctx.methodologies
        ],
        "ledger": {
            **({} if v3 else {"entries": layout.ENTRIES}),
            "checkpoint": layout.CHECKPOINT,
            "tree_size": ledger.size,
            "commitment_list": layout.COMMITMENTS,
        },
        "reveals": [
            {"id": r.id, "gate": r.gate, "path": layout.reveal(r.id), "reason": r.reason, "revealed_at": r.revealed_at}
            for r in ctx.revealed
        ],
        "runs": [{"id": r.id, "spec": layout.run_spec(r.id), "status": r.status} for r in ctx.runs],
        "certificates": [
            {
                "serial": c.serial,
                "run": c.run,
                "path": layout.certificate(c.serial),
                "details": c.detail_paths,
                "grader_record": c.grader_record_path,
                "exports": export_paths(c),
            }
            for c in ctx.certificates
        ],
    }


def build_keys(ctx: SiteContext) -> BuildKeys:
    return BuildKeys(
        ctx.paths.private, ctx.signer, ctx.ledger.keys, ctx.paths.checkpoints_dir, ctx.paths.ml_dsa_key_file
    )


def checkpoint_note(ctx: SiteContext, keys: BuildKeys | None = None, earlier: bytes | None = None) -> bytes:
    """The checkpoint (format v1 §4): the C2SP tlog-checkpoint body, signed as a note by the keys
    valid for its size (two at a key rotation's hand-over); `earlier`, the last release's, lends
    its randomized ML-DSA-44 line when the text is the same."""
    return (keys or build_keys(ctx)).checkpoint(ctx.origin, ctx.ledger.size, ctx.root, earlier)


def write_entries(ctx: SiteContext, w: SiteWriter, each: Callable[[int, bytes], None] | None = None) -> None:
    """The ledger's entries document (format v1 §4), `each` called with every leaf's index and bytes."""
    w.write_signed_stream(layout.ENTRIES, entries_document(ctx, each), ctx.signer)


def replay_entries(ctx: SiteContext, each: Callable[[int, bytes], None]) -> None:
    """Every leaf of the ledger file (which the build holds locked), with its index, written
    nowhere: a v3 site's ledger is its tiles (docs/formats/v3.md, 3), made by `each`."""
    count = 0
    for raw in ledger_lines(ctx.paths):
        each(count, raw)
        count += 1
    if count != ctx.ledger.size:  # pragma: no cover - the lock prevents it
        raise RuntimeError("the ledger changed while the site was being built")


def write_commitment_parts(ctx: SiteContext, w: SiteWriter, previous: PreviousRelease | None = None) -> None:
    """A v3 site's commitment list (docs/formats/v3.md, 4): its parts of 1,000 rows, made by the
    very code that checks them, and their signed index. A part no event since the last release
    can have changed (no row committed nor item revealed since in it) is taken from it as it is,
    unread, when the last build recorded its file untouched (SiteWriter.take_vouched); any other
    part is made, and one with its old bytes still linked. The build's check compares every part
    it did not remember checking with the rows the ledger implies."""
    ledger = ctx.ledger
    since = _last_release_commitments(ledger, previous)
    touched, first_touched = parts_touched_since(ledger, *since) if since is not None else (set(), 0)
    parts = []
    for k in range(commitment_part_count(ledger.commit_count)):
        rel = commitment_part_path(k)
        if since is None or k >= first_touched or k in touched or not w.take_vouched(rel):
            w.write(rel, commitment_part_bytes(ledger, ctx.origin, k))
        parts.append((rel, part_rows(ledger, k), w.hashes[rel]))
    w.write_signed(layout.COMMITMENTS, commitment_index_bytes(ledger, ctx.origin, parts), ctx.signer)


def _last_release_commitments(ledger: Ledger, previous: PreviousRelease | None) -> tuple[int, int] | None:
    """The tree size and commit count of the last release's v3 commitment list (its index), if it
    has one that reads as one of an earlier state of this ledger: what its parts were made from."""
    if previous is None or not previous.reuse:
        return None
    try:
        data = previous.file(layout.COMMITMENTS).read_bytes()
        # A format 2 release's list is every row in one document: not read for this.
        index = parse_canonical(data) if data.startswith(b'{"count":') else None
    except (OSError, FormatError):
        return None
    size, count = (index.get("tree_size"), index.get("count")) if isinstance(index, dict) else (None, None)
    if not (type(size) is int and type(count) is int and 0 <= count <= ledger.commit_count and size <= ledger.size):
        return None
    return size, count


def write_ledger(ctx: SiteContext, w: SiteWriter, checkpoint: bytes, previous: PreviousRelease | None = None) -> None:
    """The ledger's other documents (format v1 §4): the checkpoint, the commitment list (in parts
    in format v3), and format v2's revocation list."""
    w.write(layout.CHECKPOINT, checkpoint)
    if ctx.program.format >= 3:
        write_commitment_parts(ctx, w, previous)
    else:
        w.write_signed_stream(layout.COMMITMENTS, commitment_list(ctx), ctx.signer)
    # Written even when empty: a reader can then tell "nothing revoked" from "not published".
    w.write_signed(layout.REVOCATIONS, canonical_json.dumps(revocation_list(ctx.origin, ctx.ledger)), ctx.signer)


def write_keys(ctx: SiteContext, w: SiteWriter) -> None:
    """keys.json and each key as a PEM file (format v1 §2)."""
    w.write(layout.KEYS, canonical_json.dumps(keys_document(ctx)))
    for k in ctx.public_keys:
        vk = parse_vkey(k.vkey)
        w.write(layout.key_pem(vk.key_id.hex()), public_key_pem(vk.public_key))


def write_certificate(
    ctx: SiteContext,
    w: SiteWriter,
    cert: CertificateRecord,
    keys: BuildKeys,
    previous: PreviousRelease | None = None,
) -> None:
    """A certificate, signed by the key valid when it was issued, with its published details
    documents and grader record. A key rotated out since then signs no more: the signature the
    last release published is kept (checked first), as it was made."""
    rel = layout.certificate(cert.serial)
    key = keys.for_leaf(cert.info.index)
    private = keys.private_key(key) if key is not None else None
    w.write(rel, cert.data)
    if private is not None:
        w.write(layout.sig(rel), private.sign(cert.data))
        _write_records(w, cert)
        return
    old = previous.file(layout.sig(rel)) if previous is not None else None
    sig = old.read_bytes() if old is not None and old.is_file() else b""
    if key is None or not ed25519_verify(key.public_key, sig, cert.data):
        raise InputError(
            [
                problem(
                    rel,
                    "was issued under a key this program no longer holds, and the last release has no valid "
                    "signature of it to keep",
                    expected=key.fingerprint if key else "a key valid when it was issued",
                )
            ],
            "cannot sign a certificate",
        )
    w.write(layout.sig(rel), sig)
    _write_records(w, cert)


def certificate_files(info: CertificateInfo) -> list[str]:
    """The files `write_certificate` and the exports write for a certificate, bar its agreement
    files (made from bytes the build holds): each a function of the certificate, its run and
    which of its items are revealed, fixed for a certificate whose page keeps its key."""
    rel = layout.certificate(info.serial)
    record = info.grader_record_path
    return [
        rel,
        layout.sig(rel),
        *info.detail_paths,
        *([record] if record is not None else []),
        *info.evidence_paths,
        *export_paths(info),
    ]


def _write_records(w: SiteWriter, cert: CertificateRecord) -> None:
    for d in cert.details.values():
        w.write(d.path, d.data)
    if cert.grader_record is not None:
        w.write(cert.grader_record.path, cert.grader_record.data)
    for rel, data in cert.evidence:
        w.write(rel, data)


def write_release_files(ctx: SiteContext, w: SiteWriter) -> None:
    """The verifier, the stylesheet, the in-browser check, the static host's headers and the
    manifest (format v1 §7, §8)."""
    w.write(layout.VERIFIER, verifier_bytes())
    w.write(layout.STYLE, (files("site_templates") / "style.css").read_bytes())
    w.write(layout.BROWSER_CHECK, (files("generator.verifier") / "browser" / "check.js").read_bytes())
    w.write(layout.BROWSER_ML_DSA, (files("generator.verifier") / "browser" / "mldsa44.js").read_bytes())
    w.write(layout.HOST_HEADERS, static_host_headers().encode())
    whole = manifest(ctx)
    if ctx.program.format >= MANIFEST_V4:  # the lists in parts (docs/formats/v4.md): the verifier's cut
        whole, parts = cut_manifest(whole)
        for rel, data in parts:
            w.write(rel, data)
    w.write(layout.MANIFEST, canonical_json.dumps(whole))
