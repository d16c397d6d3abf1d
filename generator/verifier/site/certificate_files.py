"""A site's certificates (format v1 §6): each certificate file against its ledger leaf and signature,
its details documents and grader record against its hashes and against when each falls due,
and then every rule of recheck.examine_certificate."""

import datetime
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from generator.verifier.core.canonical import canonical_bytes, parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.formats import check_keys, is_safe_path, is_time, sha256_hex
from generator.verifier.core.text import show
from generator.verifier.exports.credential import certificate_ordinals
from generator.verifier.exports.eee_record import Unremade, eee_export
from generator.verifier.memory.release_memory import Memory
from generator.verifier.rules.answers import RevealedAnswers
from generator.verifier.rules.certificate_documents import due_records
from generator.verifier.rules.events import CertificateEvent
from generator.verifier.rules.evidence import evidence_due, evidence_path, is_evidence_name
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology
from generator.verifier.rules.recheck import examine_certificate
from generator.verifier.site.export_files import (
    Signed,
    check_exports,
    exports_memo_key,
    history_roots,
)
from generator.verifier.site.publication import ordered_ids


def check_certificates(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    specs: dict[str, dict[str, Any]],
    methodologies: dict[str, Methodology],
    key: bytes,
    memory: Memory | None = None,
    history: dict[str, Any] | None = None,
) -> dict[str, tuple[str, list[Any]]]:
    """Check every certificate; return, for each run a label set measures, the serial and the
    open results the judge's labels of its certificate are taken from (agreement_files)."""
    report = s.report
    run_rows = manifest["runs"]
    rows = ordered_ids(
        report, manifest["certificates"], MANIFEST_PATH, "certificates", "serial", list(ledger.certificates)
    )
    reveal_paths = {
        r["id"]: r.get("path") for r in manifest["reveals"] if isinstance(r, dict) and isinstance(r.get("id"), str)
    }
    program = {"name": str(manifest.get("name")), "origin": str(manifest.get("origin"))}
    c = _Certificates(
        s,
        ledger,
        specs,
        methodologies,
        {r["id"]: r.get("spec") for r in run_rows if isinstance(r, dict) and isinstance(r.get("id"), str)},
        RevealedAnswers(ledger, lambda item: _read_quietly(s, reveal_paths.get(item))),
        key,
        {e.run for e in ledger.label_sets.values()},
        memory,
        program,
        lambda item: _reveal_document(s, ledger, reveal_paths, item),
        history_roots(history),
        certificate_ordinals((serial, e.index) for serial, e in ledger.certificates.items()),
    )
    for r in rows:
        _check_one_certificate(c, r)
    for row in run_rows:
        if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"] in ledger.runs:
            withdrawn = "withdrawn" if row["id"] in ledger.withdrawals else "open"
            want = c.verdicts.get(row["id"], "open") if row["id"] in ledger.certificate_of_run else withdrawn
            report.check(
                row.get("status") == want,
                MANIFEST_PATH,
                f"run {row['id']}: status differs from its certificate",
                want,
                show(row.get("status")),
            )
    return c.judged


def _read_quietly(s: Site, rel: Any) -> bytes | None:
    """A reveal document for scoring: publication.check_reveals reports whatever is wrong with
    it, so a file that cannot be read here is simply no answer."""
    if not is_safe_path(rel) or s.path(rel, "reveal") is None:
        return None
    try:
        return (s.root / rel).read_bytes()
    except OSError:
        return None


class _Clock:
    """This machine's time, read once and only if a certificate has an expiry: expiry is a
    state reported against the verifier's clock (FORMAT.md, reading 20), and a build that
    verifies its own output must not otherwise read the clock."""

    def __init__(self) -> None:
        self._now: str | None = None

    def __call__(self) -> str:
        if self._now is None:
            self._now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._now


@dataclass
class _Certificates:
    """What each certificate of a site is checked with, and what their checks gather: each run's
    verdict, and the open results of the runs a label set measures."""

    s: Site
    ledger: Ledger
    specs: dict[str, dict[str, Any]]
    methodologies: dict[str, Methodology]
    run_paths: dict[str, Any]
    answers: RevealedAnswers
    key: bytes
    measured: set[str]
    memory: Memory | None
    program: dict[str, str]
    reveal_of: Callable[[str], dict[str, Any] | None]
    roots: dict[int, bytes]
    ordinals: dict[str, int]
    now: _Clock = field(default_factory=_Clock)
    verdicts: dict[str, str] = field(default_factory=dict)
    judged: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)


def _check_one_certificate(c: _Certificates, r: dict[str, Any]) -> None:
    report, ledger = c.s.report, c.ledger
    read = _read_certificate(c, r)
    if read is None:
        return
    ev, rel, data, cert = read
    serial = r.get("serial")
    run = ledger.runs[ev.run]
    spec = c.specs.get(ev.run)
    if isinstance(cert, dict):
        c.verdicts[ev.run] = str(cert.get("verdict"))
        expires = cert.get("expires_at")
        if is_time(expires) and expires < c.now():
            report.notes.append(f"certificate {serial} expired at {expires} (a state, not a failure)")
            report.expired.append({"serial": serial, "expires_at": expires})
    gate = ledger.gates.get(run.gate)
    public = bool(gate and gate.public)
    version = spec["methodology"].get("version") if spec is not None else None
    pinned = c.methodologies.get(version) if isinstance(version, str) else None
    details: dict[str, dict[str, Any]] = {}
    record = None
    _exports(c, r, cert, data, ev.index, spec, pinned, public)
    if isinstance(cert, dict) and spec is not None:
        details, record = _published_records(c.s, r, cert, spec, public, ledger, rel)
        _check_evidence_files(c.s, cert, public, ledger)
        if ev.run in c.measured:  # kept only for a run some label set measures: a verifier's memory stays flat
            opened = (
                cert.get("results") if public else [d.get("result") for d in details.values() if isinstance(d, dict)]
            )
            c.judged[ev.run] = (str(serial), opened if isinstance(opened, list) else [])
    recheck = None
    if c.memory is not None and spec is not None:
        recheck = _recheck_key(c, c.memory, data, ev, spec, pinned is not None, public, details, record)
        known = c.memory.recheck(recheck)
        if known is not None:
            report.checks += known[0]
            report.asserted += known[1]
            return
    found = examine_certificate(
        cert,
        ev,
        run,
        spec,
        pinned,
        public,
        c.run_paths.get(ev.run, ""),
        c.answers.answers(spec["items"]) if spec is not None else {},
        details,
        record,
    )
    report.add(found.problems, rel, checks=found.checks)
    report.asserted += found.asserted
    if recheck is not None and c.memory is not None and not found.problems:
        c.memory.passed(recheck, found.checks, found.asserted)


def _exports(
    c: _Certificates,
    r: dict[str, Any],
    cert: Any,
    data: bytes,
    index: int,
    spec: dict[str, Any] | None,
    pinned: Methodology | None,
    public: bool,
) -> None:
    serial = str(r.get("serial"))
    # Signed by the key that signed the certificate, as the certificate is (a rotation or
    # revocation since changes nothing: the DID document no longer names a revoked key).
    valid = c.ledger.keys.valid_at(index + 1)
    key = valid[-1].public_key if valid else c.key
    issued = str(cert.get("issued_at")) if isinstance(cert, dict) else ""
    gate = c.ledger.gates.get(c.ledger.runs[c.ledger.certificates[serial].run].gate)
    gate_name = gate.name if gate is not None else ""
    memo = (
        exports_memo_key(
            c.memory, c.s, r, data, index, spec, public, key, gate_name, c.ordinals, c.roots, c.program, c.ledger
        )
        if c.memory is not None
        else None
    )
    report = c.s.report
    if memo is not None and c.memory is not None:
        known = c.memory.recheck(memo)
        if known is not None:  # the same exports of the same certificate passed before
            report.checks += known[0]
            return
    before, checks = len(report.failures), report.checks
    made, elsewhere = None, False
    if isinstance(cert, dict) and spec is not None and pinned is not None:
        try:
            made = eee_export(cert, sha256_hex(data), index, spec, pinned, c.program, public, c.reveal_of, c.ledger)
        except Unremade:
            elsewhere = True  # a reveal document that is not its commitment: failed where reveals are
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            made = None  # a certificate of another shape: its own checks say how
    signed = (
        Signed(cert, data, index, key, issued, c.program, c.roots, gate_name, c.ordinals.get(serial))
        if isinstance(cert, dict)
        else None
    )
    check_exports(c.s, r, serial, made, signed, elsewhere)
    if memo is not None and c.memory is not None and len(report.failures) == before and not elsewhere:
        c.memory.passed(memo, report.checks - checks, [])


def _reveal_document(s: Site, ledger: Ledger, paths: dict[str, Any], item: str) -> dict[str, Any] | None:
    """An item's reveal document, as the site publishes it, once it is revealed."""
    if item not in ledger.reveals or not isinstance(paths.get(item), str):
        return None
    data = _read_quietly(s, paths[item])
    commit = ledger.commit(item)
    if data is None or commit is None or sha256_hex(data) != commit.commitment:
        return None  # not the committed document: failed where reveals are checked
    try:
        doc = parse_canonical(data)
    except FormatError:
        return None
    return doc if isinstance(doc, dict) else None


def _read_certificate(c: _Certificates, r: dict[str, Any]) -> tuple[CertificateEvent, str, bytes, Any] | None:
    """The certificate a manifest row names, if its ledger leaf exists and its file can be read:
    the row against the leaf, the file against the leaf's hash and the signature of the key
    valid when it was issued. Returns the leaf, the file's path, bytes and document."""
    report = c.s.report
    serial = r.get("serial")
    ev = c.ledger.certificates.get(serial) if isinstance(serial, str) else None
    report.add(
        check_keys(
            r, ("serial", "run", "path", "details", "grader_record"), ("exports",), where=f"certificates[{serial}]"
        ),
        MANIFEST_PATH,
    )
    if ev is None:
        return None
    report.check(
        r.get("run") == ev.run,
        MANIFEST_PATH,
        f"certificate {serial}: run differs from the ledger",
        ev.run,
        show(r.get("run")),
    )
    loaded = c.s.document(r.get("path"), f"certificate {serial}")
    if loaded is None:
        return None
    data, cert = loaded
    rel = str(r.get("path"))
    # Signed when it was issued, by the key valid then: a rotation later does not re-sign it.
    valid = c.ledger.keys.valid_at(ev.index + 1)
    c.s.signed(rel, data, valid[-1].public_key if valid else c.key, f"certificate {serial}")
    digest = sha256_hex(data)
    report.check(digest == ev.sha256, rel, "SHA-256 differs from the certificate's ledger leaf", ev.sha256, digest)
    return ev, rel, data, cert


def _recheck_key(
    c: _Certificates,
    memory: Memory,
    data: bytes,
    ev: CertificateEvent,
    spec: dict[str, Any],
    pinned: bool,
    public: bool,
    details: dict[str, dict[str, Any]],
    record: dict[str, Any] | None,
) -> str:
    """The key a certificate's recomputation is remembered under: every input of it, exactly, so
    that a key that passed before passes again."""
    ledger = c.ledger
    run = ledger.runs[ev.run]
    version = spec["methodology"].get("version")
    revealed = [[i, x.commitment] for i in spec["items"] if i in ledger.reveals and (x := ledger.commit(i))]
    return memory.recheck_key(
        sha256_hex(data),
        [ev.serial, ev.run, ev.sha256, ev.index, ev.at],
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at],
        sha256_hex(canonical_bytes(spec)),
        [
            version,
            ledger.methodologies[version].sha256
            if isinstance(version, str) and version in ledger.methodologies
            else None,
        ],
        pinned,
        public,
        str(c.run_paths.get(ev.run, "")),
        revealed,
        [[i, sha256_hex(canonical_bytes(d))] for i, d in sorted(details.items())],
        sha256_hex(canonical_bytes(record)) if record is not None else None,
    )


def _check_evidence_files(s: Site, cert: dict[str, Any], public: bool, ledger: Ledger) -> None:
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


def _published_records(
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
