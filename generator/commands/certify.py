"""`transparency certify`: from the evaluator's results to a verdict (format v1 §5, §6).

Everything on the certificate that can be computed is computed here, with the verifier's own
engine, from the outputs and the private answers: the similarity of exact and list fields, every
item score, the counts and rates, the grades and band, the verdict. The grader's proposal only
moves the score inside the band.

On a secret gate each result is published sealed, as the hash of a salted details document
kept in the private directory; `retire` publishes it with the item. The grader record (its
proposal and rationale) follows once every item of the certificate is revealed, since the
judge's words may quote answers. On a public gate results are open and the record is
published at once.
"""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import canonical_json, layout
from generator.core.generator_errors import InputError, problem
from generator.core.progress import Progress
from generator.program.agreement_reports import judge_scale_problems
from generator.program.datadir import Paths
from generator.program.disclosure import certificate_items
from generator.program.documents import load_spec, methodology
from generator.program.evidence_files import EvidenceFile, read_evidence
from generator.program.ledgerfile import LedgerAppender, appending, event_time
from generator.program.results_file import RunResults, _numbers, _plain, check_results_shape, read_results
from generator.program.sealed import locate_sealed, run_answers
from generator.state import item_uses_cache
from generator.verifier import (
    JUDGE_LABELS,
    SCORE_EDITS,
    SCORED,
    Ledger,
    Methodology,
    Problem,
    RunEvent,
    band_score,
    build_open_result,
    check_certificate,
    grade_counts,
    is_id,
    is_time,
    keep_bullets,
    lineage_keys,
    lineage_skeleton,
    number_rule_problems,
    sha256_hex,
    show,
)


@dataclass(frozen=True)
class Certified:
    serial: str
    run: str
    verdict: str
    grade: str
    score: int
    score_rule: str
    summary: dict[str, Any]
    sealed: bool
    at: str


@dataclass
class _Decided:
    certified: Certified
    leaf: dict[str, Any]
    data: bytes
    record: bytes
    details: list[tuple[str, bytes]]
    evidence: list[EvidenceFile]


def certify_run(
    paths: Paths, source: Path, at: str | None = None, serial: str | None = None, expires_at: str | None = None
) -> Certified:
    """Decide the run the results in `source` belong to; refuse (writing nothing) on any problem."""
    return certify_runs(paths, [source], at, serial, expires_at)[0]


def certify_runs(
    paths: Paths,
    sources: list[Path],
    at: str | None = None,
    serial: str | None = None,
    expires_at: str | None = None,
    progress: Progress | None = None,
) -> list[Certified]:
    """Decide the runs of several results files under one lock and one ledger replay, all or
    nothing: any problem in any file refuses the whole batch, which writes nothing. Files are
    decided one at a time, so memory holds one run, not the batch."""
    if serial is not None and len(sources) != 1:
        raise InputError([problem("--serial", "a serial names one certificate: give one results file with --serial")])
    with appending(paths, "certify") as app:
        ledger = app.ledger
        problems: list[Problem] = []
        when = event_time(at, ledger, problems)
        if expires_at is not None and not (is_time(expires_at) and expires_at > when):
            problems.append(
                problem(
                    "--expires-at",
                    "must be a time after the issue time",
                    expected=f"YYYY-MM-DDTHH:MM:SSZ after {when}",
                    found=expires_at,
                )
            )
        plan = _plan(paths, ledger, sources, problems, progress)
        sealed = locate_sealed(
            paths,
            {
                i: c.commitment
                for _, run, spec in plan
                if not ledger.gates[run.gate].public
                for i in spec["items"]
                if (c := ledger.commit(i)) is not None
            },
            ledger,
        )
        methodology_of: dict[str, Methodology | None] = {}
        leaves: list[dict[str, Any]] = []
        certified: list[Certified] = []
        for n, (source, run, spec) in enumerate(plan, start=1):
            file = str(source)
            res = read_results(source, file)  # again: a batch's parsed results are not all kept
            version = spec["methodology"]["version"]
            if version not in methodology_of:
                methodology_of[version] = methodology(paths, ledger, version, problems)
            m = methodology_of[version]
            if m is None:
                problems.append(problem(file, f"the methodology {version} pinned by run {run.id} is not published"))
                continue
            answers = run_answers(paths, ledger, spec["items"], ledger.gates[run.gate].public, sealed, problems)
            evidence, found = read_evidence(res.doc, source, file, spec["items"])
            problems += found
            problems += judge_scale_problems(paths, ledger, run.id, res.doc, file)
            d = _decide(
                ledger, file, res, run, spec, m, answers, serial or run.id, when, expires_at, problems, evidence
            )
            if d is not None and not problems:
                _stage_decided(app, d)
                leaves.append(d.leaf)
                certified.append(d.certified)
            if progress:
                progress("certifying", n, len(plan))
        if problems:
            if len(sources) != 1:
                what = f"these {len(sources)} runs"
            elif plan:
                what = f"run {show(_plain(plan[0][1].id))}"
            else:  # the one results file names no run that can be certified
                what = f"the run of {sources[0]}"
            raise InputError(problems, f"cannot certify {what}; nothing was written")
        app.append(leaves)
    # The items of the certificates just issued, for the next retire to find them without
    # reading every certificate (a cache: no index kept yet, the next retire makes it).
    item_uses_cache.follow(paths, ledger, lambda s: certificate_items(paths, ledger, s), only_if_kept=True)
    return certified


def _plan(
    paths: Paths, ledger: Ledger, sources: list[Path], problems: list[Problem], progress: Progress | None
) -> list[tuple[Path, RunEvent, dict[str, Any]]]:
    """Which registered, undecided run each results file decides, and that run's spec."""
    plan: list[tuple[Path, RunEvent, dict[str, Any]]] = []
    named: dict[str, str] = {}
    for n, source in enumerate(sources, start=1):
        file = str(source)
        try:
            run_id = read_results(source, file).doc.get("run")
        except InputError as e:
            problems += e.problems
            continue
        run = ledger.runs.get(run_id) if isinstance(run_id, str) else None
        if run is None:
            problems.append(
                problem(
                    file,
                    f"run {show(_plain(run_id))} is not registered; register its spec first with 'transparency "
                    "register'",
                    "run",
                )
            )
        elif run.id in ledger.withdrawals:
            w = ledger.withdrawals[run.id]
            problems.append(
                problem(
                    file,
                    f"run {run.id} was withdrawn ({w.at}: {w.reason}); a withdrawn run never gets a certificate",
                    "run",
                )
            )
        elif run.id in ledger.certificate_of_run:
            s = ledger.certificate_of_run[run.id]
            problems.append(
                problem(
                    file,
                    f"run {run.id} is already certified (certificate {s}, {ledger.certificates[s].at}); every run "
                    "gets exactly one certificate",
                    "run",
                )
            )
        elif run.id in named:
            problems.append(
                problem(file, f"run {run.id} is decided twice in this batch (also by {named[run.id]})", "run")
            )
        else:
            named[run.id] = file
            spec = load_spec(paths, ledger, run.id, problems)
            if spec is not None:
                plan.append((source, run, spec))
        if progress and n % 1000 == 0:
            progress("reading results", n, len(sources))
    return plan


def _stage_decided(app: LedgerAppender, d: _Decided) -> None:
    """A decided run's private documents and its certificate, written when the batch commits."""
    c, paths = d.certified, app.paths
    for item_id, data in d.details:
        app.stage(paths.details_file(c.serial, item_id, private=True), data, mode=0o600)
    app.stage(paths.grader_record_file(c.serial, private=c.sealed), d.record, mode=0o600 if c.sealed else 0o644)
    for f in d.evidence:
        # On a secret gate the log holds the subject's outputs: private until its items are revealed.
        app.stage(
            paths.evidence_file(c.serial, f.entry["name"], private=c.sealed), f.data, mode=0o600 if c.sealed else 0o644
        )
    app.stage(paths.certificate_file(c.serial), d.data)


def _decide(
    ledger: Ledger,
    file: str,
    res: RunResults,
    run: RunEvent,
    spec: dict[str, Any],
    m: Methodology,
    answers: dict[str, dict[str, Any]],
    serial: str,
    when: str,
    expires_at: str | None,
    problems: list[Problem],
    evidence: list[EvidenceFile],
) -> _Decided | None:
    """The certificate of one run, or None (with the problems recorded)."""
    before = len(problems)
    _check_decidable(ledger, file, res, run, spec, m, answers, serial, when, problems)
    if len(problems) > before:
        return None

    doc = res.doc
    public = ledger.gates[run.gate].public
    open_results = _open_results(doc, spec["items"], answers, m)
    counts = Counter(r["status"] for r in open_results)
    passed = sum(1 for r in open_results if r.get("passed") is True)
    grading = grade_counts(dict(counts), passed, m)
    score, rule = band_score(res.proposed_json, grading.band)
    scored_ids = {r["item"] for r in open_results if r["status"] == SCORED}
    kept, dropped = keep_bullets(res.rationale, scored_ids)
    record = canonical_json.dumps(
        {
            "type": "grader-record",
            "v": 1,
            "serial": serial,
            "salt": secrets.token_bytes(32).hex(),
            "proposed_json": res.proposed_json,
            "rationale": res.rationale,
        }
    )
    results, details = (open_results, []) if public else _sealed_results(open_results, serial)
    cert = {
        "type": "certificate",
        "v": 1,
        "serial": serial,
        "run": run.id,
        "issued_at": when,
        "expires_at": expires_at,
        "subject": spec["subject"],
        "gate": spec["gate"],
        "methodology": spec["methodology"],
        "run_spec": {"path": layout.run_spec(run.id), "sha256": run.sha256},
        "finished_at": doc["finished_at"],
        "results": results,
        "summary": grading.summary,
        "grade": grading.grade,
        "band": grading.band,
        "worst_case_grade": grading.worst_case_grade,
        "best_case_grade": grading.best_case_grade,
        "grader": {"record": sha256_hex(record), "kept": len(kept), "dropped": dropped},
        "score": score,
        "score_rule": rule,
        "verdict": grading.verdict,
    }
    if evidence:
        cert["evidence"] = [f.entry for f in evidence]
    data = canonical_json.dumps(cert)
    own = check_certificate(cert, spec, m, public, layout.run_spec(run.id), run.sha256, run.at)
    if own:  # pragma: no cover - the engine and the checker disagreeing is a bug, never input
        raise AssertionError(
            "certify produced a certificate its own checks reject: " + "; ".join(p.describe() for p in own)
        )
    leaf = {"type": "certificate", "v": 1, "serial": serial, "run": run.id, "sha256": sha256_hex(data), "at": when}
    certified = Certified(
        serial, run.id, grading.verdict, grading.grade, score, rule, grading.summary, not public, when
    )
    return _Decided(certified, leaf, data, record, details, evidence)


def _check_decidable(
    ledger: Ledger,
    file: str,
    res: RunResults,
    run: RunEvent,
    spec: dict[str, Any],
    m: Methodology,
    answers: dict[str, dict[str, Any]],
    serial: str,
    when: str,
    problems: list[Problem],
) -> None:
    """Record why the results in `file` cannot be decided as certificate `serial` issued at
    `when`: the serial, the finishing time, the results' shape, the rationale's numbers and
    the score edits' times."""
    doc = res.doc
    if not is_id(serial):
        problems.append(problem("--serial", "malformed serial", expected="^[a-z0-9][a-z0-9_-]{0,63}$", found=serial))
    elif serial in ledger.certificates:
        problems.append(
            problem(
                file,
                f"serial {serial} is already used by the certificate of run {ledger.certificates[serial].run}; "
                "choose another with --serial",
            )
        )
    finished = doc.get("finished_at")
    if not is_time(finished):
        problems.append(
            problem(
                file, "malformed time", "finished_at", expected="YYYY-MM-DDTHH:MM:SSZ", found=show(_plain(finished))
            )
        )
    elif not run.at <= finished <= when:
        problems.append(
            problem(
                file,
                "finished_at must lie between the run's registration and the certificate's issue time",
                "finished_at",
                expected=f"{run.at} ≤ finished_at ≤ {when}",
                found=finished,
            )
        )
    problems += [
        p.at(file) for p in check_results_shape(doc, spec, answers, max_attempts=m.max_attempts, not_before=run.at)
    ]
    bad = _numbers(res.rationale, "grader.rationale")
    for nw, ntext in bad:
        problems.append(
            problem(
                file,
                "the rationale holds a number format v1 §1 does not allow, so the grader record could not keep it as "
                "received",
                nw,
                found=ntext,
            )
        )
    if not bad:
        problems += [p.at(file) for p in number_rule_problems(res.rationale, "grader.rationale")]
    for i, r in enumerate(doc["results"] if isinstance(doc.get("results"), list) else []):
        edits = r.get(SCORE_EDITS) if isinstance(r, dict) else None
        for j, e in enumerate(edits if isinstance(edits, list) else []):
            if isinstance(e, dict) and is_time(e.get("at")) and e["at"] > when:
                problems.append(
                    problem(
                        file,
                        "a score edit is dated after the certificate's issue time: the certificate cannot rest on it",
                        f"results[{i}].{SCORE_EDITS}[{j}].at",
                        expected=f"{when} or earlier",
                        found=e["at"],
                    )
                )


def _open_results(
    doc: dict[str, Any], items: list[str], answers: dict[str, dict[str, Any]], m: Methodology
) -> list[dict[str, Any]]:
    """Each item's result as the certificate of a public gate shows it, in the spec's order,
    from results the checks passed: a scored one computed by the verifier's engine."""
    by_item = {r["item"]: r for r in doc["results"]}
    open_results: list[dict[str, Any]] = []
    for item_id in items:
        r = by_item[item_id]
        if r["status"] == SCORED:
            given = {f["name"]: (f["output"], f.get("similarity")) for f in r["fields"]}
            o = build_open_result(item_id, answers[item_id], given, m)
            if JUDGE_LABELS in r:
                o[JUDGE_LABELS] = _plain(r[JUDGE_LABELS])
        else:
            o = {"item": item_id, "status": r["status"], "note": r["note"]}
            if r["status"] == "excluded":
                o["rule"] = r["rule"]
        # Every attempt goes into the certificate as received: a retry or an exclusion that
        # left no trace there could not be audited.
        o.update({k: _plain(r[k]) for k in lineage_keys(r)})
        # Hand edits of the harness's scores go in beside the result they changed, and on a secret
        # gate into its details document only: an edit's values and reason may speak of the item.
        if SCORE_EDITS in r:
            o[SCORE_EDITS] = _plain(r[SCORE_EDITS])
        open_results.append(o)
    return open_results


def _sealed_results(
    open_results: list[dict[str, Any]], serial: str
) -> tuple[list[dict[str, Any]], list[tuple[str, bytes]]]:
    """A secret gate's results, sealed: each the hash of a salted details document that holds the
    open result, beside its lineage's numbers, statuses and times; and those documents by item."""
    results: list[dict[str, Any]] = []
    details: list[tuple[str, bytes]] = []
    for o in open_results:
        data = canonical_json.dumps(
            {"type": "result-details", "v": 1, "serial": serial, "salt": secrets.token_bytes(32).hex(), "result": o}
        )
        details.append((o["item"], data))
        results.append({"item": o["item"], "status": o["status"], "details": sha256_hex(data), **lineage_skeleton(o)})
    return results, details
