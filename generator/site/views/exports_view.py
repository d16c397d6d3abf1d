"""What a certificate page shows of its exports (FORMAT.md, "Exports"): a section for each format the
certificate is rendered in, its files linked, with what reads them and what they carry."""

from __future__ import annotations

from dataclasses import dataclass

from generator.verifier import credential_path, eee_paths, statement_path


@dataclass(frozen=True)
class ExportLink:
    label: str
    path: str


@dataclass(frozen=True)
class ExportRow:
    anchor: str
    title: str
    about: str
    links: tuple[ExportLink, ...]


def export_rows(serial: str, sha256: str, public: bool) -> tuple[ExportRow, ...]:
    eee = eee_paths(serial, sha256, public)
    eee_links = [ExportLink("the record", eee[0])]
    if len(eee) > 1:
        eee_links.append(ExportLink("its instance rows, one line per scored item", eee[1]))
    return (
        ExportRow(
            "export-eee",
            "Every Eval Ever record",
            "The evaluation as the EvalEval coalition's shared schema (0.3.0) holds it: the pass rate with its "
            "interval, the score, the grade and the judge, this certificate's SHA-256 and inclusion proof"
            + (
                ", and each item's prompt, reference and outputs."
                if public
                else ", and the sealed items by their commitments."
            ),
            tuple(eee_links),
        ),
        ExportRow(
            "export-credential",
            "Verifiable credential",
            "A W3C Verifiable Credential 2.0 in the Open Badges 3.0 shape, signed (eddsa-jcs-2022) by this site's "
            "did:web, for wallets, registries and procurement tools; a revocation in the ledger sets its bit in the "
            "site's status list.",
            (ExportLink("the credential", credential_path(serial)),),
        ),
        ExportRow(
            "export-scitt",
            "SCITT transparent statement",
            "The certificate's bytes signed as a COSE_Sign1 statement, with an RFC 9942 receipt of its inclusion in "
            "this log, for supply-chain and regulatory tools.",
            (ExportLink("the statement", statement_path(serial)),),
        ),
    )
