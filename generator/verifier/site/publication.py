"""What the ledger's leaves refer to (format v1 §3, §5, §6): gates, methodology parameters, reveal
documents and run specs, each against its leaf. The ledger itself is site/ledger_files.py."""

from typing import Any

from generator.verifier.core.canonical import canonical_text, parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.formats import (
    check_keys,
    check_reveal_document,
    same,
    sha256_hex,
)
from generator.verifier.core.report import Report
from generator.verifier.core.text import show
from generator.verifier.memory.release_memory import Memory
from generator.verifier.rules.drawn_items import effective_spec, required_draw_problems, retirement_problems
from generator.verifier.rules.events import RunEvent
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology, check_methodology, parse_methodology
from generator.verifier.rules.runs import check_run_rules, check_run_spec
from generator.verifier.site.certificate_memo import Vouched, methodology_digests
from generator.verifier.site.run_memo import RunContext, RunLooked, earlier_chain, run_key


def ordered_ids(report: Report, listed: Any, file: str, what: str, key: str, want: list[str]) -> list[dict[str, Any]]:
    """Check a manifest list names exactly `want`, in ledger order; return its well-formed rows."""
    rows = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
    got = [r.get(key) for r in rows]
    if got != want:
        got_set = {x for x in got if isinstance(x, str)}
        want_set = set(want)
        missing = [x for x in want if x not in got_set]
        extra = [x for x in got if not isinstance(x, str) or x not in want_set]
        detail = (
            f"missing {show(missing[:5])}, extra {show(extra[:5])}"
            if missing or extra
            else "same entries in another order"
        )
        report.check(
            False, file, f"{what} differ from the ledger's, in ledger order ({detail})", show(want[:5]), show(got[:5])
        )
    else:
        report.checks += 1
    return rows


def check_gates(s: Site, manifest: dict[str, Any], ledger: Ledger) -> None:
    rows = ordered_ids(s.report, manifest["gates"], MANIFEST_PATH, "gates", "id", list(ledger.gates))
    for r in rows:
        g = ledger.gates.get(r["id"]) if isinstance(r.get("id"), str) else None
        if g is not None:
            want = {"id": g.id, "name": g.name, "public": g.public}
            s.report.check(
                same(r, want), MANIFEST_PATH, f"gate {g.id} differs from its ledger leaf", canonical_text(want), show(r)
            )


def check_methodology_files(s: Site, manifest: dict[str, Any], ledger: Ledger) -> dict[str, Methodology]:
    report = s.report
    rows = ordered_ids(
        report, manifest["methodology"], MANIFEST_PATH, "methodology versions", "version", list(ledger.methodologies)
    )
    methodologies: dict[str, Methodology] = {}
    for r in rows:
        version = r.get("version")
        event = ledger.methodologies.get(version) if isinstance(version, str) else None
        report.add(
            check_keys(r, ("version", "document", "parameters", "sha256"), where=f"methodology[{version}]"),
            MANIFEST_PATH,
        )
        if event is None:
            continue
        report.check(
            r.get("sha256") == event.sha256,
            MANIFEST_PATH,
            f"methodology {version}: hash differs from the ledger",
            event.sha256,
            show(r.get("sha256")),
        )
        s.path(r.get("document"), f"methodology {version} document")
        loaded = s.document(r.get("parameters"), f"methodology {version} parameters")
        if loaded is None:
            continue
        data, doc = loaded
        rel = str(r.get("parameters"))
        digest = sha256_hex(data)
        report.check(
            digest == event.sha256, rel, "SHA-256 differs from the ledger's methodology leaf", event.sha256, digest
        )
        rules = check_methodology(doc)
        report.add(rules, rel)
        report.check(
            isinstance(doc, dict) and doc.get("version") == version,
            rel,
            "version inside the file differs",
            version,
            show(doc.get("version") if isinstance(doc, dict) else None),
        )
        if not rules:
            methodologies[str(version)] = parse_methodology(doc)
    return methodologies


def check_reveals(s: Site, manifest: dict[str, Any], ledger: Ledger) -> None:
    report = s.report
    want = sorted(ledger.reveals, key=lambda i: ledger.reveals[i].index)
    rows = ordered_ids(report, manifest["reveals"], MANIFEST_PATH, "reveals", "id", want)
    salts: dict[str, str] = {}
    for r in rows:
        item_id = r.get("id")
        ev = ledger.reveals.get(item_id) if isinstance(item_id, str) else None
        commit = ledger.commit(item_id) if isinstance(item_id, str) else None
        w = f"reveals[{item_id}]"
        report.add(check_keys(r, ("id", "gate", "path", "reason", "revealed_at"), where=w), MANIFEST_PATH)
        if ev is None or commit is None:
            continue
        want_row = {"gate": commit.gate, "reason": ev.reason, "revealed_at": ev.at}
        got_row = {k: r.get(k) for k in want_row}
        report.check(
            same(got_row, want_row),
            MANIFEST_PATH,
            f"reveal of {item_id} differs from its ledger leaves",
            canonical_text(want_row),
            show(got_row),
            where=w,
        )
        data = s.read(r.get("path"), f"reveal of {item_id}")
        if data is None:
            continue
        rel = str(r.get("path"))
        digest = sha256_hex(data)
        report.check(
            digest == commit.commitment,
            rel,
            f"SHA-256 of the reveal file is not the commitment of {item_id}",
            f"{commit.commitment} (ledger entries[{commit.index}])",
            digest,
        )
        try:
            doc = parse_canonical(data)
        except FormatError as e:
            report.check(False, rel, str(e))
            continue
        if not report.add(check_reveal_document(doc), rel):
            continue
        report.check(doc["id"] == item_id, rel, "id differs from the ledger", item_id, doc["id"])
        report.check(doc["gate"] == commit.gate, rel, "gate differs from the commit leaf", commit.gate, doc["gate"])
        if doc["salt"] in salts:
            report.check(False, rel, f"salt reused (also in the reveal of {salts[doc['salt']]})")
        salts[doc["salt"]] = str(item_id)


def check_runs(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    methodologies: dict[str, Methodology],
    memory: Memory | None = None,
    vouched: Vouched | None = None,
) -> dict[str, dict[str, Any]]:
    """Every run's spec against its leaf, its shape and the rules a registered run obeys; returns
    the specs by run, as effective_spec gives them. With a `memory` and the SHA-256es this run
    `vouched` for, a run whose check passed in the release verified last and read nothing that
    differs now is not read again: its entry is a run_memo.SpecSummary."""
    report = s.report
    rows = ordered_ids(report, manifest["runs"], MANIFEST_PATH, "runs", "id", list(ledger.runs))
    specs: dict[str, dict[str, Any]] = {}
    by_id = {r["id"]: r for r in rows if isinstance(r.get("id"), str)}
    measured = frozenset(e.run for e in ledger.label_sets.values())
    memo = (
        RunContext(ledger, vouched, methodology_digests(methodologies), measured)
        if memory is not None and vouched is not None
        else None
    )
    chains: dict[tuple[str, str], str] = {}  # (subject name, gate) -> earlier_chain of its runs so far
    for run in ledger.runs.values():
        row = by_id.get(run.id)
        subject = (str(run.subject.get("name")), run.gate)  # as Ledger.runs_before groups them
        earlier = chains.get(subject, "")
        if row is not None and not (
            memory is not None and memo is not None and _remembered_run(memory, memo, report, row, run, earlier, specs)
        ):
            failures, checks = len(report.failures), report.checks
            spec = _check_run(s, row, run, ledger, methodologies, specs)
            if spec is not None:
                specs[run.id] = spec
                looked = RunLooked.of(spec, report.checks - checks) if len(report.failures) == failures else None
                key = run_key(memory, memo, row, run, looked, earlier) if memory and memo and looked else None
                if memory is not None and looked is not None and key is not None:
                    memory.took_memo("runs", run.id, looked.saved(key))
        chains[subject] = earlier_chain(earlier, run.id, specs.get(run.id))
    # Scheduled retirements draw among the items no open run holds: after every spec is read.
    report.add(retirement_problems(ledger, methodologies, specs), "ledger")
    report.add(required_draw_problems(ledger, methodologies, specs), "ledger")
    return specs


def _remembered_run(
    memory: Memory,
    memo: RunContext,
    report: Report,
    row: dict[str, Any],
    run: RunEvent,
    earlier: str,
    specs: dict[str, Any],
) -> bool:
    """Whether run `row` passed in the release verified last and everything its check read is
    as it was then: its remembered checks are counted and its summary taken for its spec."""
    saved = memory.memo("runs", run.id)
    found = RunLooked.loaded(saved) if saved is not None else None
    if saved is None or found is None or run_key(memory, memo, row, run, found[1], earlier) != found[0]:
        return False
    looked = found[1]
    report.checks += looked.checks
    specs[run.id] = looked.summary(run.id)
    memory.took_memo("runs", run.id, saved)  # kept as read: the same list, not a copy
    return True


def _check_run(
    s: Site,
    row: dict[str, Any],
    run: RunEvent,
    ledger: Ledger,
    methodologies: dict[str, Methodology],
    specs: dict[str, dict[str, Any]],
) -> dict[str, Any] | None:
    """One run's spec checked in full; the spec as effective_spec gives it, if it has the shape
    of one (whatever the rules found)."""
    report = s.report
    report.add(check_keys(row, ("id", "spec", "status"), where=f"runs[{run.id}]"), MANIFEST_PATH)
    loaded = s.document(row.get("spec"), f"run spec of {run.id}")
    if loaded is None:
        return None
    data, spec = loaded
    rel = str(row.get("spec"))
    digest = sha256_hex(data)
    report.check(digest == run.sha256, rel, f"SHA-256 differs from run {run.id}'s ledger leaf", run.sha256, digest)
    if not report.add(check_run_spec(spec), rel):
        return None
    spec = effective_spec(spec, ledger)
    version = spec["methodology"].get("version")
    report.add(
        check_run_rules(ledger, run, spec, methodologies.get(version) if isinstance(version, str) else None, specs),
        rel,
    )
    return spec
