"""When a certificate's private documents fall due, and publishing them (format v1 §6).

A sealed result's details document is due once its item is revealed; a grader record once
every item of its certificate is revealed (at once on a public gate); an evidence file once
every item it concerns is. `certify` writes both
into the private directory; `retire` copies what its reveals make due into the data
directory, at the same relative path, before it appends the reveal leaves.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import problem
from generator.program.datadir import Paths
from generator.program.documents import read_document
from generator.verifier import (
    Ledger,
    Problem,
    due_records,
    evidence_due,
    is_evidence_name,
    recheckable,
    sha256_hex,
)


@dataclass(frozen=True)
class Due:
    """A private document that must be published: copy `source` to `target`."""

    serial: str
    what: str
    source: Path
    target: Path
    sha256: str


def certificate_document(paths: Paths, ledger: Ledger, serial: str, problems: list[Problem]) -> dict[str, Any] | None:
    ev = ledger.certificates[serial]
    loaded = read_document(paths, paths.certificate_file(serial), ev.sha256, f"certificate {serial}", problems)
    return loaded[1] if loaded and isinstance(loaded[1], dict) else None


def certificate_items(paths: Paths, ledger: Ledger, serial: str) -> list[str] | None:
    """The items a certificate's results name (its run spec's, in order), or None when its
    document cannot be read as the ledger binds it."""
    cert = certificate_document(paths, ledger, serial, [])
    if cert is None:
        return None
    raw = cert.get("results")
    results: list[Any] = raw if isinstance(raw, list) else []
    return [r["item"] for r in results if isinstance(r, dict) and isinstance(r.get("item"), str)]


def due_documents(
    paths: Paths,
    ledger: Ledger,
    revealed: Container[str],
    problems: list[Problem],
    only_items: Container[str] | None = None,
    serials: Container[str] | None = None,
) -> Iterator[Due]:
    """The secret-gate documents due once the items in `revealed` are revealed.

    With `only_items`, only certificates that used one of those items are looked at (a retire
    looks at the certificates its items make due, not at all of them); with `serials`, only
    those certificates are read (the ones an index says used them).
    """
    for cert_ev in ledger.certificates.values():
        if serials is not None and cert_ev.serial not in serials:
            continue
        run = ledger.runs[cert_ev.run]
        if ledger.gates[run.gate].public:
            continue
        cert = certificate_document(paths, ledger, cert_ev.serial, problems)
        if cert is None:
            continue
        # The results name the run spec's items in its order (the build checks it), so the
        # certificate alone says which items it used.
        raw = cert.get("results")
        results: list[Any] = raw if isinstance(raw, list) else []
        items = [r["item"] for r in results if isinstance(r, dict) and isinstance(r.get("item"), str)]
        if only_items is not None and not any(i in only_items for i in items):
            continue
        if not recheckable(cert) or any(not isinstance(r.get("details"), str) for r in cert["results"]):
            problems.append(
                problem(
                    paths.show(paths.certificate_file(cert_ev.serial)),
                    "a secret-gate certificate without the sealed results of format v1 §6; run 'transparency build' "
                    "to see why",
                )
            )
            continue
        serial = cert_ev.serial
        sealed_due, record_due = due_records(cert["results"], items, False, revealed)
        for r in sealed_due:
            if only_items is None or r["item"] in only_items:
                yield Due(
                    serial,
                    f"details of {r['item']}",
                    paths.details_file(serial, r["item"], private=True),
                    paths.details_file(serial, r["item"]),
                    r["details"],
                )
        listed = cert.get("evidence")
        for e in listed if isinstance(listed, list) else []:
            if (
                isinstance(e, dict)
                and is_evidence_name(e.get("name"))
                and isinstance(e.get("items"), list)
                and evidence_due(e, False, revealed)
                and (only_items is None or any(i in only_items for i in e["items"]))
            ):
                yield Due(
                    serial,
                    f"evidence file {e['name']}",
                    paths.evidence_file(serial, e["name"], private=True),
                    paths.evidence_file(serial, e["name"]),
                    str(e.get("sha256")),
                )
        if record_due:
            yield Due(
                serial,
                "grader record",
                paths.grader_record_file(serial, private=True),
                paths.grader_record_file(serial),
                cert["grader"]["record"],
            )


def read_due(paths: Paths, due: Due, problems: list[Problem]) -> bytes | None:
    """The private bytes of a due document, checked against the hash its certificate holds."""
    try:
        data = due.source.read_bytes()
    except OSError:
        problems.append(
            problem(
                paths.show(due.source),
                f"certificate {due.serial}: the {due.what} is missing from the private directory; it must be "
                "published now",
            )
        )
        return None
    if sha256_hex(data) != due.sha256:
        problems.append(
            problem(
                paths.show(due.source),
                f"certificate {due.serial}: the {due.what} does not hash to the value in the certificate",
                expected=due.sha256,
                found=sha256_hex(data),
            )
        )
        return None
    return data
