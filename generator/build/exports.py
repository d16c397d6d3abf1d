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
from generator.verifier import eee_export, eee_paths, statement_path, transparent_statement


class ExportSources:
    """What the exports of every certificate read besides the certificate: the program's name
    and origin, each revealed item's reveal document (read once, when first needed) and each
    item's commitment."""

    def __init__(
        self, ctx: SiteContext, keys: BuildKeys, archived: list[int], previous: PreviousRelease | None = None
    ) -> None:
        self.ctx = ctx
        self.keys = keys
        self.archived = sorted(archived)  # the sizes of the log's archived checkpoints
        self.previous = previous
        self.program = {"name": ctx.program.name, "origin": ctx.origin}
        self._revealed = {r.id: r for r in ctx.revealed}
        self._reveals: dict[str, dict[str, Any]] = {}

    def reveal_of(self, item: str) -> dict[str, Any] | None:
        if item not in self._reveals:
            r = self._revealed.get(item)
            if r is None:
                return None
            self._reveals[item] = r.load(self.ctx.paths)[1]
        return self._reveals[item]

    def commitment_of(self, item: str) -> str | None:
        c = self.ctx.ledger.commit(item)
        return c.commitment if c is not None else None


def write_exports(w: SiteWriter, cert: CertificateRecord, sources: ExportSources) -> None:
    info = cert.info
    levels = [g.name for g in reversed(info.methodology.grades)]
    files = eee_export(
        cert.doc,
        info.sha256,
        info.index,
        info.spec,
        levels,
        sources.program,
        info.public,
        sources.reveal_of,
        sources.commitment_of,
    )
    for rel, data in files:
        w.write(rel, data)
    w.write(statement_path(cert.serial), _statement(cert, sources))


def _statement(cert: CertificateRecord, sources: ExportSources) -> bytes:
    """The certificate's transparent statement, signed by the key that signed the certificate, its
    receipt in the first archived checkpoint past its leaf. A key the program no longer holds
    signs no more: the statement the last release published is kept, as the certificate's
    signature is (artifacts.write_certificate)."""
    rel = statement_path(cert.serial)
    key = sources.keys.for_leaf(cert.index)
    private = sources.keys.private_key(key) if key is not None else None
    at = bisect.bisect_right(sources.archived, cert.index)
    if key is not None and private is not None and at < len(sources.archived):
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
    old = sources.previous.file(rel) if sources.previous is not None else None
    if old is not None and old.is_file():
        return old.read_bytes()  # the verifier checks it as any other
    raise InputError(
        [
            problem(
                rel,
                "cannot be made: the key that signed the certificate is no longer held, and the last release has none",
            )
        ],
        "cannot make a certificate's transparent statement",
    )


def export_paths(info: CertificateInfo) -> list[str]:
    """The site paths of a certificate's exports, as the manifest lists them."""
    return [*eee_paths(info.serial, info.sha256, info.public), statement_path(info.serial)]
