"""A certificate's exports in other people's formats (FORMAT.md, "Exports"), written beside it: the
renderings themselves are the verifier's (generator/verifier/exports/), so that the build writes the
bytes the verifier remakes."""

from __future__ import annotations

from typing import Any

from generator.build.gather import CertificateInfo, CertificateRecord, SiteContext
from generator.build.writer import SiteWriter
from generator.verifier import eee_export, eee_paths


class ExportSources:
    """What the exports of every certificate read besides the certificate: the program's name
    and origin, each revealed item's reveal document (read once, when first needed) and each
    item's commitment."""

    def __init__(self, ctx: SiteContext) -> None:
        self.ctx = ctx
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


def export_paths(info: CertificateInfo) -> list[str]:
    """The site paths of a certificate's exports, as the manifest lists them."""
    return eee_paths(info.serial, info.sha256, info.public)
