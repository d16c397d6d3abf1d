"""A certificate's exports in other people's formats (FORMAT.md, "Exports"), written beside it: the
renderings themselves are the verifier's (generator/verifier/exports/), so that the build writes the
bytes the verifier remakes."""

from __future__ import annotations

import bisect
from typing import Any

from generator.build.gather import CertificateInfo, CertificateRecord, SiteContext
from generator.build.previous_release import PreviousRelease
from generator.build.writer import SiteWriter
from generator.core.generator_errors import InputError, problem
from generator.core.key_schedule import BuildKeys
from generator.verifier import (
    DID_PATHS,
    STATUS_LIST_PATH,
    canonical_bytes,
    certificate_credential,
    certificate_ordinals,
    credential_path,
    current_keys,
    did_document,
    eee_export,
    eee_paths,
    revocation_bits,
    secured,
    statement_path,
    status_list_credential,
    transparent_statement,
    verification_method,
)


class ExportSources:
    """What the exports of every certificate read besides the certificate and the ledger: the
    keys, the archived checkpoints' sizes, the last release, the program's origin, each
    certificate's place in the status list, the gates' names and each revealed item's reveal
    document (read once, when first needed)."""

    def __init__(
        self, ctx: SiteContext, keys: BuildKeys, archived: list[int], previous: PreviousRelease | None = None
    ) -> None:
        self.ctx = ctx
        self.keys = keys
        self.archived = sorted(archived)  # the sizes of the log's archived checkpoints
        self.previous = previous
        self.program = {"name": ctx.program.name, "origin": ctx.origin}
        self.ordinals = certificate_ordinals((s, e.index) for s, e in ctx.ledger.certificates.items())
        self.gate_names = {g.id: g.name for g in ctx.ledger.gates.values()}
        self._revealed = {r.id: r for r in ctx.revealed}
        self._reveals: dict[str, dict[str, Any]] = {}

    def reveal_of(self, item: str) -> dict[str, Any] | None:
        if item not in self._reveals:
            r = self._revealed.get(item)
            if r is None:
                return None
            self._reveals[item] = r.load(self.ctx.paths)[1]
        return self._reveals[item]


def write_exports(w: SiteWriter, cert: CertificateRecord, sources: ExportSources) -> None:
    """A certificate's exports. Each is a function of what never changes (the certificate, its
    spec, its items' commitments, the ledger's order and keys, the origin), so the last release's
    file, when the hash index vouches for it, is taken as it is, unread: a release after one event
    signs and renders the exports of the new certificates only."""
    info = cert.info
    taken = {rel for rel in export_paths(info) if w.take_vouched(rel)}
    statement, credential = statement_path(cert.serial), credential_path(cert.serial)
    if any(rel not in taken for rel in eee_paths(info.serial, info.sha256, info.public)):
        files = eee_export(
            cert.doc,
            info.sha256,
            info.index,
            info.spec,
            info.methodology,
            sources.program,
            info.public,
            sources.reveal_of,
            sources.ctx.ledger,
        )
        for rel, data in files:
            if rel not in taken:
                w.write(rel, data)
    if statement not in taken:
        w.write(statement, _statement(cert, sources))
    if credential not in taken:
        w.write(credential, _credential(cert, sources))


def _held(cert: CertificateRecord, sources: ExportSources, rel: str) -> tuple[Any, Any, str] | bytes:
    """The key that signed the certificate (the key valid at its leaf), which signs its exports
    too, its private half and the proof's time (the certificate's); or, when the program no longer
    holds that key, what the last release published at `rel`, kept as it was made (as a
    certificate's signature is: artifacts.write_certificate). Signed by that key whatever happened
    to it since, an export is the same bytes in every build."""
    key = sources.keys.for_leaf(cert.index)
    private = sources.keys.private_key(key) if key is not None else None
    if key is not None and private is not None:
        return key, private, cert.at
    old = sources.previous.file(rel) if sources.previous is not None else None
    if old is not None and old.is_file():
        return old.read_bytes()
    raise InputError(
        [
            problem(
                rel,
                "cannot be made: the key that signed the certificate is no longer held, and the last release has none",
            )
        ],
        "cannot make a certificate's export",
    )


def _credential(cert: CertificateRecord, sources: ExportSources) -> bytes:
    """The certificate's verifiable credential, its proof by the key that signed the certificate (_held)."""
    rel = credential_path(cert.serial)
    held = _held(cert, sources, rel)
    if isinstance(held, bytes):
        return held
    key, private, created = held
    gate = cert.info.gate
    doc = certificate_credential(
        cert.doc, cert.info.sha256, sources.program, sources.gate_names.get(gate, gate), sources.ordinals[cert.serial]
    )
    return secured(doc, created, verification_method(sources.ctx.origin, key.public_key), private.sign)


def write_credential_files(w: SiteWriter, sources: ExportSources) -> None:
    """The site's DID document (at both places did:web resolves a site) and the status list of its
    credentials, the ledger's revocations as bits, signed by today's key; from the first
    certificate on, as the verifier expects (export_files.check_credential_files)."""
    ctx = sources.ctx
    if not ctx.certificates:
        return
    document = canonical_bytes(did_document(ctx.origin, current_keys(ctx.ledger.keys)))
    for rel in DID_PATHS:
        w.write(rel, document)
    key = sources.keys.for_leaf(ctx.ledger.size - 1)  # today's key, as the checkpoint's
    private = sources.keys.private_key(key) if key is not None else None
    if key is None or private is None:
        raise InputError([problem(STATUS_LIST_PATH, "cannot be signed: today's key is not held")], "cannot sign")
    bits = revocation_bits(sources.ordinals, ctx.ledger.revocations)
    doc = status_list_credential(sources.program, bits, ctx.generated_at)
    w.write(
        STATUS_LIST_PATH, secured(doc, ctx.generated_at, verification_method(ctx.origin, key.public_key), private.sign)
    )


def _statement(cert: CertificateRecord, sources: ExportSources) -> bytes:
    """The certificate's transparent statement, signed by the key that signed the certificate
    (_held), its receipt in the first archived checkpoint past its leaf."""
    rel = statement_path(cert.serial)
    at = bisect.bisect_right(sources.archived, cert.index)
    held = _held(cert, sources, rel) if at < len(sources.archived) else None
    if held is None:
        raise InputError([problem(rel, "cannot be made: no archived checkpoint past its leaf")], "cannot make it")
    if isinstance(held, bytes):
        return held
    key, private, _ = held
    size, tree = sources.archived[at], sources.ctx.tree
    return transparent_statement(
        cert.data,
        sources.ctx.origin,
        cert.serial,
        key.public_key,
        private.sign,
        size,
        cert.index,
        tree.inclusion_proof(cert.index, size),
        tree.root(size),
    )


def export_paths(info: CertificateInfo) -> list[str]:
    """The site paths of a certificate's exports, as the manifest lists them."""
    return [
        *eee_paths(info.serial, info.sha256, info.public),
        statement_path(info.serial),
        credential_path(info.serial),
    ]
