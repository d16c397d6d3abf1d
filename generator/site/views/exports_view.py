"""What a certificate page shows of its exports (FORMAT.md, "Exports"): each file that renders the
certificate in another project's format, linked, with what reads it."""

from __future__ import annotations

from dataclasses import dataclass

from generator.verifier import credential_path, eee_paths, statement_path


@dataclass(frozen=True)
class ExportRow:
    label: str
    path: str
    read_by: str


def export_rows(serial: str, sha256: str, public: bool) -> tuple[ExportRow, ...]:
    paths = eee_paths(serial, sha256, public)
    rows = [ExportRow("Every Eval Ever record", paths[0], "the Every Eval Ever validator and datastore")]
    if len(paths) > 1:
        rows.append(
            ExportRow("Every Eval Ever instance rows", paths[1], "the same, one row per scored item (JSON lines)")
        )
    rows.append(
        ExportRow(
            "SCITT transparent statement",
            statement_path(serial),
            "SCITT verifiers: the certificate signed as COSE_Sign1, with its RFC 9942 receipt in this log",
        )
    )
    rows.append(
        ExportRow(
            "Verifiable credential (W3C VC 2.0, Open Badges 3.0)",
            credential_path(serial),
            "wallets, registries and procurement tools: eddsa-jcs-2022 by this site's did:web, revocable",
        )
    )
    return tuple(rows)
