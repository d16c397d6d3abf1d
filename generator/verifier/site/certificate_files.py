"""A site's certificates (format v1 §6): each certificate file against its ledger leaf and signature,
its details documents and grader record against its hashes and against when each falls due,
and then every rule of recheck.examine_certificate."""

import datetime
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
from generator.verifier.rules.answers import ANSWER_CACHE, RevealedAnswers
from generator.verifier.rules.drawn_items import effective_spec
from generator.verifier.rules.events import CertificateEvent
from generator.verifier.rules.evidence import evidence_path, is_evidence_name
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology
from generator.verifier.rules.recheck import examine_certificate
from generator.verifier.site.certificate_memo import Context, Looked, Vouched, certificate_key, methodology_digests
from generator.verifier.site.certificate_records import check_evidence_files, published_records
from generator.verifier.site.export_files import (
    Signed,
    check_exports,
    exports_memo_key,
    history_roots,
)
from generator.verifier.site.publication import ordered_ids
from generator.verifier.site.run_memo import SpecSummary


def check_certificates(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    specs: dict[str, dict[str, Any]],
    methodologies: dict[str, Methodology],
    key: bytes,
    memory: Memory | None = None,
    history: dict[str, Any] | None = None,
    vouched: Vouched | None = None,
) -> dict[str, tuple[str, list[Any]]]:
    """Check every certificate; return, for each run a label set measures, the serial and the
    open results the judge's labels of its certificate are taken from (agreement_files). With a
    `memory` and the SHA-256es this run `vouched` for, a certificate whose check passed in the
    release verified last and read nothing that differs now is not read again
    (certificate_memo.py)."""
    report = s.report
    run_rows = manifest["runs"]
    rows = ordered_ids(
        report, manifest["certificates"], MANIFEST_PATH, "certificates", "serial", list(ledger.certificates)
    )
    reveal_paths = {
        r["id"]: r.get("path") for r in manifest["reveals"] if isinstance(r, dict) and isinstance(r.get("id"), str)
    }
    program = {"name": str(manifest.get("name")), "origin": str(manifest.get("origin"))}
    run_paths = {r["id"]: r.get("spec") for r in run_rows if isinstance(r, dict) and isinstance(r.get("id"), str)}
    roots = history_roots(history)
    ordinals = certificate_ordinals((serial, e.index) for serial, e in ledger.certificates.items())
    digests = methodology_digests(methodologies)
    c = _Certificates(
        s,
        ledger,
        specs,
        methodologies,
        run_paths,
        RevealedAnswers(ledger, lambda item: _read_quietly(s, reveal_paths.get(item))),
        key,
        {e.run for e in ledger.label_sets.values()},
        memory,
        program,
        _RevealDocuments(s, ledger, reveal_paths),
        roots,
        ordinals,
        digests,
        Context(
            str(s.root),
            ledger,
            vouched,
            key,
            run_paths,
            reveal_paths,
            digests,
            ordinals,
            roots,
            program,
        )
        if vouched is not None
        else None,
    )
    for r in rows:
        if not _remembered(c, r):
            _check_and_remember(c, r)
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
    methodology_digests: dict[str, str]  # version -> certificate_memo.methodology_digests of what was parsed
    memo: Context | None  # what a remembered certificate's key is computed against, with a memory
    now: _Clock = field(default_factory=_Clock)
    verdicts: dict[str, str] = field(default_factory=dict)
    judged: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)


def _remembered(c: _Certificates, r: dict[str, Any]) -> bool:
    """Whether the certificate of row `r` passed in the release verified last and everything its
    check read is as it was then: its remembered counts and verdict are taken, its expiry judged."""
    serial = r.get("serial")
    ev = c.ledger.certificates.get(serial) if isinstance(serial, str) else None
    if c.memory is None or c.memo is None or ev is None or ev.run in c.measured:
        return False
    saved = c.memory.memo("certificates", ev.serial)
    found = Looked.loaded(saved) if saved is not None else None
    if saved is None or found is None or certificate_key(c.memory, c.memo, r, ev, found[1]) != found[0]:
        return False
    looked, report = found[1], c.s.report
    report.checks += looked.checks
    report.asserted += list(looked.asserted)
    c.verdicts[ev.run] = looked.verdict
    _expiry(c, ev.serial, looked.expires_at)
    c.memory.took_memo("certificates", ev.serial, saved)  # kept as read: the same list, not a copy
    return True


def _check_and_remember(c: _Certificates, r: dict[str, Any]) -> None:
    """Check the certificate of row `r` in full; remember what it read if nothing failed."""
    report = c.s.report
    failures, checks, asserted = len(report.failures), report.checks, len(report.asserted)
    read = _check_one_certificate(c, r)
    if read is None or c.memory is None or c.memo is None or len(report.failures) != failures:
        return
    ev, items, evidence, version, cert = read
    if ev.run in c.measured:
        return
    looked = Looked(
        items,
        evidence,
        version,
        report.checks - checks,
        tuple(report.asserted[asserted:]),
        str(cert.get("verdict")),
        cert.get("expires_at") if is_time(cert.get("expires_at")) else None,
    )
    key = certificate_key(c.memory, c.memo, r, ev, looked)
    if key is not None:
        c.memory.took_memo("certificates", ev.serial, looked.saved(key))


def _expiry(c: _Certificates, serial: Any, expires: Any) -> None:
    if is_time(expires) and expires < c.now():
        c.s.report.notes.append(f"certificate {serial} expired at {expires} (a state, not a failure)")
        c.s.report.expired.append({"serial": serial, "expires_at": expires})


def _check_one_certificate(
    c: _Certificates, r: dict[str, Any]
) -> tuple[CertificateEvent, tuple[str, ...], tuple[str, ...], str | None, dict[str, Any]] | None:
    """Check one certificate in full. When it could be read as a certificate of a spec, return
    what its check looked at (certificate_memo.Looked): its leaf, the items whose reveal it read,
    the evidence files it looked for, its methodology version, and the certificate."""
    report, ledger = c.s.report, c.ledger
    read = _read_certificate(c, r)
    if read is None:
        return None
    ev, rel, data, cert = read
    serial = r.get("serial")
    run = ledger.runs[ev.run]
    spec = c.specs.get(ev.run)
    if isinstance(spec, SpecSummary):
        spec = _whole_spec(c, ev.run)
    if isinstance(cert, dict):
        c.verdicts[ev.run] = str(cert.get("verdict"))
        _expiry(c, serial, cert.get("expires_at"))
    gate = ledger.gates.get(run.gate)
    public = bool(gate and gate.public)
    version = spec["methodology"].get("version") if spec is not None else None
    pinned = c.methodologies.get(version) if isinstance(version, str) else None
    details: dict[str, dict[str, Any]] = {}
    record = None
    _exports(c, r, cert, data, ev.index, spec, pinned, public)
    if isinstance(cert, dict) and spec is not None:
        details, record = published_records(c.s, r, cert, spec, public, ledger, rel)
        check_evidence_files(c.s, cert, public, ledger)
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
            return _looked_at(ev, cert, spec, version)
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
    return _looked_at(ev, cert, spec, version)


def _whole_spec(c: _Certificates, run: str) -> dict[str, Any] | None:
    """The spec of a run remembered whole (run_memo.py), read now for a certificate checked in
    full: the file whose SHA-256 the run's key holds, checked then (its check is not counted
    again, so that the counts are those of a check from nothing). Its bytes are hashed again: the
    file could have been replaced since the site's files were hashed."""
    rel = c.run_paths.get(run)
    data = c.s.read(rel, f"run spec of {run}")
    want, digest = c.ledger.runs[run].sha256, sha256_hex(data) if data is not None else None
    if digest is not None and digest != want:
        c.s.report.check(False, str(rel), f"SHA-256 differs from run {run}'s ledger leaf", want, digest)
        return None
    try:
        spec = parse_canonical(data) if data is not None else None
    except FormatError as e:
        c.s.report.check(False, str(rel), f"run spec of {run}: {e}")
        return None
    return effective_spec(spec, c.ledger) if isinstance(spec, dict) else None


def _looked_at(
    ev: CertificateEvent, cert: Any, spec: dict[str, Any] | None, version: Any
) -> tuple[CertificateEvent, tuple[str, ...], tuple[str, ...], str | None, dict[str, Any]] | None:
    """The items whose reveal a certificate's check read (its spec's, its results', its
    evidence's) and the evidence files it looked for, in a fixed order; None if it could not be
    read as a certificate of a spec."""
    if not isinstance(cert, dict) or spec is None or not (version is None or isinstance(version, str)):
        return None
    items = [i for i in spec.get("items", []) if isinstance(i, str)]
    results = cert.get("results")
    items += (
        [r["item"] for r in results if isinstance(r, dict) and isinstance(r.get("item"), str)]
        if isinstance(results, list)
        else []
    )
    evidence: list[str] = []
    listed = cert.get("evidence")
    for e in listed if isinstance(listed, list) else []:
        if isinstance(e, dict) and is_evidence_name(e.get("name")) and isinstance(e.get("items"), list):
            items += [i for i in e["items"] if isinstance(i, str)]
            evidence.append(evidence_path(ev.serial, e["name"]))
    return ev, tuple(dict.fromkeys(items)), tuple(evidence), version, cert


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
            c.memory,
            c.s,
            r,
            data,
            index,
            spec,
            public,
            key,
            gate_name,
            c.ordinals,
            c.roots,
            c.program,
            c.ledger,
            c.memo.vouched if c.memo is not None else None,
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


class _RevealDocuments:
    """Reveal documents as the exports read them, each read, hashed and parsed once a run: a
    public gate's certificates draw on one small pool of items (at a tenth of the bench scale,
    25,000 reads of 100 documents)."""

    def __init__(self, s: Site, ledger: Ledger, paths: dict[str, Any]) -> None:
        self.s, self.ledger, self.paths = s, ledger, paths
        self._known: dict[str, dict[str, Any] | None] = {}

    def __call__(self, item: str) -> dict[str, Any] | None:
        if item in self._known:
            return self._known[item]
        doc = _reveal_document(self.s, self.ledger, self.paths, item)
        if len(self._known) >= ANSWER_CACHE:
            self._known.clear()
        self._known[item] = doc
        return doc


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
            # What was parsed: a file whose bytes differ from the leaf's hash is parsed all the same.
            c.methodology_digests.get(version) if isinstance(version, str) else None,
        ],
        pinned,
        public,
        str(c.run_paths.get(ev.run, "")),
        revealed,
        [[i, sha256_hex(canonical_bytes(d))] for i, d in sorted(details.items())],
        sha256_hex(canonical_bytes(record)) if record is not None else None,
    )
