"""The documents a certificate publishes besides itself (format v1 §6), each against when it
falls due: its evidence files, its details documents and its grader record. One published early
would give answers away; one missing when due hides evidence."""

import os
from typing import Any

from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.formats import sha256_hex
from generator.verifier.core.text import show
from generator.verifier.rules.certificate_documents import due_records
from generator.verifier.rules.evidence import evidence_due, evidence_path, is_evidence_name
from generator.verifier.rules.ledger import Ledger


def check_evidence_files(s: Site, cert: dict[str, Any], public: bool, ledger: Ledger) -> None:
    """Each evidence file the certificate lists, against its hash and size once it is due, and
    absent before: a secret gate's log published early would give its answers away. An entry
    check_certificate refuses (a bad name, no items) is not looked for."""
    serial, listed = cert.get("serial"), cert.get("evidence")
    if not isinstance(serial, str) or not isinstance(listed, list):
        return
    report = s.report
    for e in listed:
        if not (
            isinstance(e, dict)
            and is_evidence_name(e.get("name"))
            and isinstance(e.get("items"), list)
            and all(isinstance(i, str) for i in e["items"])
        ):
            continue
        rel = evidence_path(serial, e["name"])
        if not evidence_due(e, public, ledger.reveals):
            report.check(
                not os.path.lexists(s.root / rel),
                rel,
                f"certificate {serial}: evidence file published before every item it concerns is revealed",
                "not yet published",
                "published",
            )
            continue
        if s.path(rel, f"evidence of certificate {serial}") is None:
            continue  # missing: reported by path(), naming the file
        size, digest = s.file_size(rel), s.file_sha256(rel)
        report.check(
            size == e.get("size"),
            rel,
            "evidence file's size differs from the certificate's",
            show(e.get("size")),
            show(size),
        )
        report.check(
            digest == e.get("sha256"),
            rel,
            "evidence file does not hash to the SHA-256 the certificate lists",
            str(e.get("sha256")),
            digest,
        )


def published_records(
    s: Site, row: dict[str, Any], cert: dict[str, Any], spec: dict[str, Any], public: bool, ledger: Ledger, rel: str
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """The details documents and grader record the manifest lists for a certificate, checked
    against its hashes and against when each is due (format v1 §6): a details document once its
    item is revealed, the grader record once every item is (at once on a public gate). One
    published early would leak answers; one missing when due hides evidence."""
    results = (
        [r for r in cert.get("results", []) if isinstance(r, dict) and isinstance(r.get("item"), str)]
        if isinstance(cert.get("results"), list)
        else []
    )
    sealed_due, due = due_records(results, spec["items"], public, ledger.reveals)
    details = _details_documents(s, row, cert.get("serial"), results, sealed_due, ledger, rel)
    return details, _grader_record(s, row, cert, due)


def _details_documents(
    s: Site,
    row: dict[str, Any],
    serial: Any,
    results: list[dict[str, Any]],
    sealed_due: list[dict[str, Any]],
    ledger: Ledger,
    rel: str,
) -> dict[str, dict[str, Any]]:
    """The details documents listed, by item: each the one a sealed result's hash names, of an item
    revealed, every one due listed, in result order."""
    report = s.report
    listed = row.get("details")
    if not isinstance(listed, list):
        report.check(False, MANIFEST_PATH, f"certificate {serial}: details must be a list of paths", found=show(listed))
        listed = []
    by_hash = {r.get("details"): r for r in results if isinstance(r.get("details"), str)}
    details: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for path in listed:
        loaded = s.document(path, f"details of certificate {serial}")
        if loaded is None:
            continue
        digest = sha256_hex(loaded[0])
        sealed = by_hash.get(digest)
        if not report.check(
            sealed is not None,
            str(path),
            "details document whose hash no sealed result of the certificate holds",
            f"one of the results' details hashes in {rel}",
            digest,
        ):
            continue
        assert sealed is not None
        item = sealed.get("item")
        report.check(
            item in ledger.reveals,
            str(path),
            f"details of {item} published while the item is sealed: they would reveal its answer",
            "published after the item's reveal",
            "published",
        )
        details[str(item)] = loaded[1]
        order.append(str(item))
    for r in sealed_due:
        report.check(
            r["item"] in details,
            MANIFEST_PATH,
            f"certificate {serial}: item {r['item']} is revealed but its details document is not published",
            "listed in details",
            "missing",
        )
    want_order = [r.get("item") for r in results if r.get("item") in details]
    report.check(
        order == want_order,
        MANIFEST_PATH,
        f"certificate {serial}: details are listed in result order",
        show(want_order),
        show(order),
    )
    return details


def _grader_record(s: Site, row: dict[str, Any], cert: dict[str, Any], due: bool) -> dict[str, Any] | None:
    """The grader record listed, if it is due and hashes to the certificate's grader.record."""
    report, serial = s.report, cert.get("serial")
    path = row.get("grader_record")
    if path is None:
        report.check(
            not due,
            MANIFEST_PATH,
            f"certificate {serial}: the grader record is due but not published",
            "published (a public gate's at once, a secret gate's once every item is revealed)",
            "null",
        )
        return None
    report.check(
        due,
        str(path),
        f"certificate {serial}: grader record published before every item of the certificate is revealed",
        "not yet published",
        "published",
    )
    loaded = s.document(path, f"grader record of {serial}")
    if loaded is None:
        return None
    want = cert.get("grader", {}).get("record") if isinstance(cert.get("grader"), dict) else None
    if report.check(
        sha256_hex(loaded[0]) == want,
        str(path),
        "grader record does not hash to the certificate's grader.record",
        show(want),
        sha256_hex(loaded[0]),
    ):
        return loaded[1] if isinstance(loaded[1], dict) else None
    return None
