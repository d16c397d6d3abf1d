"""View models for the runs and certificate pages: every word and number a page shows, worked
out here so the templates only lay them out.

Nothing here decides anything: verdicts, grades, scores and rates are read from certificates that
the build has already rechecked (site.gather), and where a page explains a number it asks the
scoring engine of verify.py (score_item, band_score, keep_bullets, grade_reaches …), never a copy
of it. Every text that comes from data (subjects, notes, outputs, the grader's words) is returned
as plain text for the templates to escape.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from generator.build.gather import CertificateInfo, CertificateRecord, RunInfo
from generator.core import layout
from generator.site.views import readable_view
from generator.site.views.agreement_view import AgreementView, agreement_views
from generator.site.views.evidence_view import EvidenceRow, evidence_rows
from generator.site.views.exports_view import ExportRow, export_rows
from generator.site.views.lineage_view import Lineage, lineage_of
from generator.verifier import (
    NON_SCORED,
    SCORE_EDITS,
    SCORED,
    ItemScore,
    Methodology,
    Revocation,
    Withdrawal,
    is_exact_field,
    is_reported_field,
    keep_bullets,
    score_item,
    similarity_value,
)

# ---------------------------------------------------------------------------------------------
# Words


VERDICT_WORDS = {"certified": "Certified", "not-certified": "Not certified", "incomplete": "Incomplete"}
OPEN_STATUS = "open: not yet decided"

STATUS_WORDS = {
    "scored": "scored",
    "infra_error": "infrastructure error",
    "not_run": "not run",
    "missing_label": "missing label",
    "excluded": "excluded",
}
STATUS_MEANING = {
    "scored": "the item was run and its output compared with the answer",
    "infra_error": "the evaluation infrastructure failed on the item",
    "not_run": "the item was not attempted",
    "missing_label": "the item could not be scored for want of an answer label",
    "excluded": "an exclusion rule written in the run spec, before the run, applies",
}
SCORE_RULE_WORDS = {
    "as-proposed": "as proposed by the grader",
    "clamped": "clamped to the band edge",
    "midpoint-fallback": "band midpoint (the proposal did not count)",
}


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _subject_text(subject: Any) -> tuple[str, str, str]:
    s = subject if isinstance(subject, dict) else {}
    return str(s.get("name", "")), str(s.get("version", "")), str(s.get("organization", ""))


def _subject_id(subject: Any) -> str:
    return str(subject.get("id", "")) if isinstance(subject, dict) else ""


def is_expired(expires_at: str | None, generated_at: str) -> bool:
    """Expired as of this release: after `expires_at` (format v1 §6), judged at the release's time,
    never the clock's, so that the same data builds the same pages."""
    return expires_at is not None and expires_at < generated_at


# ---------------------------------------------------------------------------------------------
# Runs


@dataclass(frozen=True)
class RunRow:
    id: str
    spec_path: str
    subject_id: str
    subject_name: str
    subject_version: str
    organization: str
    gate: str
    gate_name: str
    at: str
    index: int
    items: int
    attempt: int
    attempts: int
    previous: str | None
    previous_link: str | None  # the previous run's row on the runs pages
    attempt_text: str
    status: str  # "open" or the verdict
    status_text: str
    certificate: str | None  # the certificate's serial
    certificate_page: str | None
    page: str  # the runs page that lists this row
    anchor: str

    @property
    def link(self) -> str:
        """This run's row on the runs pages (path and fragment)."""
        return f"{self.page}#{self.anchor}"


@dataclass(frozen=True)
class RunGroup:
    subject_id: str
    subject_name: str
    gate: str
    gate_name: str
    rows: list[RunRow]
    continued: bool  # the group began on an earlier page
    continues: bool  # the group goes on on the next page


def run_rows(
    runs: Sequence[RunInfo],
    certificates: Iterable[CertificateInfo],
    gate_names: dict[str, str],
    revocations: Mapping[str, Revocation] | None = None,
    withdrawals: Mapping[str, Withdrawal] | None = None,
) -> list[RunRow]:
    """Every run, grouped by subject and gate (groups in the order of their first run), each
    group's runs in ledger order, with its place in the chain of attempts. Linear."""
    revoked = revocations or {}
    by_serial = {c.serial: c for c in certificates}
    groups: dict[tuple[str, str], list[RunInfo]] = {}
    for r in runs:  # ledger order
        groups.setdefault((_subject_id(r.spec.get("subject")), str(r.spec.get("gate"))), []).append(r)
    rows: list[RunRow] = []
    links: dict[str, str] = {}
    for (subject_id, gate), members in groups.items():
        name, _, _ = _subject_text(members[0].spec.get("subject"))
        for n, r in enumerate(members, start=1):
            page = layout.runs_page(len(rows) // layout.PAGE_SIZE + 1)
            _, version, org = _subject_text(r.spec.get("subject"))
            previous = r.spec.get("previous_run")
            attempt_text = f"attempt {n} of {len(members)}, " + (
                f"after run {previous}" if previous else "the first run"
            )
            cert = by_serial.get(r.certificate) if r.certificate else None
            withdrawn = (withdrawals or {}).get(r.id)
            if withdrawn is not None:
                status, status_text = "withdrawn", f"withdrawn on {withdrawn.at}, never to be run: {withdrawn.reason}"
            elif r.certificate is None:
                status, status_text = "open", OPEN_STATUS
            else:
                status = r.status
                status_text = VERDICT_WORDS.get(status, status).lower()
                if cert is not None:
                    status_text += f", grade {cert.grade}, score {cert.score}"
                if r.certificate in revoked:
                    status_text += f"; certificate revoked on {revoked[r.certificate].at}"
            rows.append(
                RunRow(
                    id=r.id,
                    spec_path=layout.run_spec(r.id),
                    subject_id=subject_id,
                    subject_name=name,
                    subject_version=version,
                    organization=org,
                    gate=gate,
                    gate_name=gate_names.get(gate, gate),
                    at=r.at,
                    index=r.index,
                    items=len(r.spec.get("items", [])),
                    attempt=n,
                    attempts=len(members),
                    previous=previous if isinstance(previous, str) else None,
                    previous_link=links.get(previous) if isinstance(previous, str) else None,
                    attempt_text=attempt_text,
                    status=status,
                    status_text=status_text,
                    certificate=r.certificate,
                    certificate_page=layout.certificate_page(r.certificate) if r.certificate else None,
                    page=page,
                    anchor=f"run-{r.id}",
                )
            )
            links[r.id] = rows[-1].link
    return rows


def group_rows(rows: Sequence[RunRow]) -> list[RunGroup]:
    """One page's rows as consecutive groups of the same subject and gate."""
    out: list[RunGroup] = []
    for r in rows:
        if out and (out[-1].subject_id, out[-1].gate) == (r.subject_id, r.gate):
            out[-1].rows.append(r)
        else:
            out.append(
                RunGroup(
                    r.subject_id, r.subject_name, r.gate, r.gate_name, [r], continued=r.attempt > 1, continues=False
                )
            )
    if out:
        last = out[-1]
        out[-1] = dataclasses.replace(last, continues=last.rows[-1].attempt < last.rows[-1].attempts)
    return out


# ---------------------------------------------------------------------------------------------
# Certificates


@dataclass(frozen=True)
class FieldView:
    name: str
    kind: str
    tier: str
    weight: str
    floor: str
    similarity: str
    how: str  # how the similarity was obtained, in words
    meets_floor: bool
    output_json: str
    expected_json: str | None = None  # the answer key's value, where the gate is public


@dataclass(frozen=True)
class ResultView:
    item: str
    anchor: str
    status: str
    status_text: str
    item_page: str | None  # the item's page, once it is revealed
    shown: bool  # the full result is public (open, or its details document is published)
    details_hash: str | None
    details_path: str | None
    # scored results shown in full
    score: str | None = None
    score_short: str | None = None  # rounded for reading
    passed: bool | None = None
    outcome: str = ""
    fields: tuple[FieldView, ...] = ()
    # non-scored results
    note: str | None = None
    rule: int | None = None
    rule_text: str | None = None
    commitment_link: str | None = None  # a sealed item's row in the commitment list


@dataclass(frozen=True)
class CountRow:
    label: str
    value: int
    meaning: str
    status: str | None = None


@dataclass(frozen=True)
class Bullet:
    text: str
    refs: tuple[str, ...]


@dataclass(frozen=True)
class GraderView:
    record_hash: str
    kept: int
    dropped: int
    published: bool
    record_path: str | None
    proposed_json: str | None  # as written (None: absent)
    bullets: tuple[Bullet, ...]
    waiting: str  # why the record is not published yet ("" once it is)


@dataclass(frozen=True)
class ScoreEditRow:
    """One hand edit of a harness's score that a result rests on (FORMAT.md, "Score edits")."""

    item: str
    anchor: str  # the result's own row on the page
    scorer: str
    from_json: str  # the score's value before the edit, as JSON ("null": the edit made the score)
    to_json: str
    by: str
    at: str
    reason: str


@dataclass(frozen=True)
class CertificateView:
    serial: str
    run: str
    json_path: str
    sig_path: str
    proof_path: str
    index: int
    subject_name: str
    subject_version: str
    organization: str
    gate: str
    gate_name: str
    public: bool
    run_row: RunRow | None
    verdict: str
    verdict_words: str
    verdict_sentence: str
    grade: str
    grade_reason: str
    worst_case_grade: str
    best_case_grade: str
    min_grade: str
    band: tuple[int, int]
    score: int
    score_rule: str
    score_rule_words: str
    score_sentence: str
    pass_rate: str
    ci_low: str
    ci_high: str
    worst_case_rate: str
    best_case_rate: str
    rate_sentence: str
    counts: tuple[CountRow, ...]
    scored_shown: tuple[ResultView, ...]
    scored_sealed: tuple[ResultView, ...]
    not_scored: tuple[ResultView, ...]
    grader: GraderView
    judge: str
    methodology_version: str
    methodology_sha256: str
    methodology_page: str
    run_spec_path: str
    run_spec_sha256: str
    issued_at: str
    finished_at: str
    expires_at: str | None
    expiry_text: str
    asserted: tuple[str, ...]
    expired: bool
    # Format v2: the certificate's revocation, if the ledger holds one (its reason is the operator's words).
    revoked_at: str | None
    revocation_reason: str | None
    revocation_index: int | None
    revocations_path: str
    # For people: what to call it, whether it stands, and the one sentence that says so.
    noun: str = "certificate"  # "result" unless certified
    validity: str = "valid"  # valid, revoked, expired, not-certified, incomplete
    label: str = ""  # the big label, symbol and words
    headline: str = ""
    decisive: bool = True  # false for an incomplete run: its grade and score decide nothing
    pass_rate_short: str = ""
    pass_rate_note: str = ""  # why the headline rate has more than one decimal, when it does
    worst_case_rate_short: str = ""
    lineage: tuple[Lineage, ...] = ()  # the results tried more than once, in result order
    score_edits: tuple[ScoreEditRow, ...] = ()  # hand edits of the harness's scores, in result order
    evidence: tuple[EvidenceRow, ...] = ()  # the raw files the certificate binds, by name
    exports: tuple[ExportRow, ...] = ()  # the certificate in other projects' formats
    agreement: tuple[AgreementView, ...] = ()  # format v2: the judge against blind human labels
    judge_pins: JudgePins | None = None  # format v2: the judge's rubric, direction, route and scope
    best_case_rate_short: str = ""
    interval_words: str = ""
    what_failed: tuple[str, ...] = ()
    exact: tuple[tuple[str, str], ...] = ()  # (what, exact value) for the exact-values table
    entry: str = ""  # this record's row on the ledger pages
    revocation_entry: str | None = None
    system_page: str | None = None


LABELS = {
    "valid": "✓ Certified",
    "revoked": "⊘ Revoked: no longer valid",
    "expired": "⌛ Expired: no longer valid",
    "not-certified": "✗ Not certified",
    "incomplete": "? Incomplete: not decided",
}


def validity(verdict: str, revoked: bool, expired: bool) -> str:
    """Whether a decided run's record stands today, as one word: a revocation or an expiry
    outranks the verdict, which stays what it was when issued."""
    if verdict != "certified":
        return verdict
    return "revoked" if revoked else "expired" if expired else "valid"


def headline(doc: dict[str, Any], m: Methodology, system: str, gate: str, state: str, revoked_at: str | None) -> str:
    """The verdict in one plain sentence, naming the system, for the top of the page."""
    s = doc["summary"]
    scored, total, passed = s["scored"], s["total"], s["passed"]
    g, wg, least = doc["grade"], doc["worst_case_grade"], m.min_grade
    if state == "revoked":
        return (
            f"{system} was certified on {gate}, but the program revoked the certificate on {revoked_at}: "
            "it is no longer valid."
        )
    if state == "expired":
        return f"{system} was certified on {gate}, but the certificate expired on {doc.get('expires_at')}."
    if state == "valid":
        until = f", valid until {doc['expires_at']}" if doc.get("expires_at") else ""
        return (
            f"{system} is certified on {gate}: it passed {passed} of {scored} scored items, grade {g}, "
            f"at least the minimum grade {least} even in the worst case{until}."
        )
    if state == "incomplete":
        return (
            f"{system} was not decided on {gate}: only {scored} of {total} items were scored, less than the "
            f"fraction {m.min_scored_fraction_text} of them that the methodology needs, so this result neither passes "
            "nor fails."
        )
    if not m.reaches(g, least):
        return (
            f"{system} was not certified on {gate}: it passed {passed} of {scored} scored items, grade {g}, "
            f"below the minimum grade {least}."
        )
    non = total - scored
    return (
        f"{system} was not certified on {gate}: its grade {g} reaches the minimum {least}, but with the "
        f"{_plural(non, 'item')} that could not be scored counted as {'a failure' if non == 1 else 'failures'} it "
        f"falls to grade {wg}."
    )


def grade_reason(grade: str, m: Methodology) -> str:
    """Which cut-off a grade stands for, in words."""
    for g in m.grades:
        if g.name == grade and g.min_pass_rate_text is not None:
            return f"a pass rate of at least {g.min_pass_rate_text} %"
    return "a pass rate below every cut-off"


def verdict_sentence(doc: dict[str, Any], m: Methodology) -> str:
    """Why the certificate's verdict is what it is: the rule of format v1 §5 that applied, in words."""
    s = doc["summary"]
    total, scored = s["total"], s["scored"]
    non_scored = total - scored
    least = m.min_grade
    fraction = m.min_scored_fraction_text
    g, wg, bg = doc["grade"], doc["worst_case_grade"], doc["best_case_grade"]
    verdict = doc["verdict"]
    if verdict == "certified":
        return (
            f"Its grade {g} and its worst-case grade {wg} (every non-scored result counted as a failure) both reach "
            f"the minimum grade {least}, and {scored} of {total} results were scored, at least the {fraction} "
            f"the methodology requires."
        )
    if verdict == "incomplete":
        if scored == 0:
            return (
                "No result was scored, so there is nothing to grade: the run is incomplete, not a pass and not a "
                "failure."
            )
        return (
            f"Only {scored} of {total} results were scored; the methodology requires at least {fraction} of them. "
            f"The run cannot be decided either way on so few scored results."
        )
    if not m.reaches(bg, least):
        if non_scored:
            return (
                f"Even counting every one of the {_plural(non_scored, 'non-scored result')} as a pass, the grade "
                "would be "
                f"{bg}, below the minimum grade {least}."
            )
        return f"The grade {g} is below the minimum grade {least}."
    if not m.reaches(g, least):
        return f"The grade {g} is below the minimum grade {least}."
    return (
        f"The grade {g} reaches the minimum grade {least}, but the worst-case grade {wg} does not: counted as "
        "failures, "
        f"the {_plural(non_scored, 'non-scored result')} would bring the pass rate to {s['worst_case_pass_rate']} %. "
        f"Results that were not scored cannot buy a certificate."
    )


def score_sentence(doc: dict[str, Any], proposed_json: str | None, published: bool) -> str:
    """How the score inside the band came about (format v1 §5, the agent tier), in words."""
    lo, hi = doc["band"]
    score, rule = doc["score"], doc["score_rule"]
    band = f"the band {lo} to {hi}"
    if rule == "as-proposed":
        if published:
            return (
                f"The grader proposed {proposed_json}, which lies inside {band}, so the score is {score}, as proposed."
            )
        return f"The grader's proposal lay inside {band}, so the score is the proposal itself, {score}."
    if rule == "clamped":
        if published:
            return (
                f"The grader proposed {proposed_json}, outside {band}. The grader can only move the score inside "
                "the band, "
                f"so the proposal is clamped to the nearest edge: {score}."
            )
        return f"The grader's proposal lay outside {band}, so the score is clamped to the nearest band edge: {score}."
    mid = f"the band's midpoint, ⌊({lo} + {hi}) / 2⌋ = {score}"
    if published:
        if proposed_json is None:
            return f"The grader made no proposal, so the score is {mid}."
        return (
            f"The grader's proposal, written as {proposed_json}, is not a plain integer (such as 90, without quotes, "
            f"decimals or exponent), so it does not count and the score is {mid}."
        )
    return (
        f"The grader's proposal was not a plain integer, or there was none, so it did not count and the score is {mid}."
    )


_HOW_EXACT = {"1": "exact match", "0": "differs from the answer"}
_HOW_REPORTED = "cosine, as reported by the evaluator"
_HOW_JACCARD = "Jaccard, shared elements over all distinct elements"


def _field_view(
    f: dict[str, Any], value: Fraction, m: Methodology, answer: Mapping[str, Any] | None = None
) -> FieldView:
    kind, tier, sim = f["kind"], f["tier"], f["similarity"]
    expected = answer.get(str(f["name"])) if answer is not None else None
    t = m.tiers[tier]
    if is_exact_field(kind, tier):
        how = _HOW_EXACT.get(sim, "differs from the answer")
    elif is_reported_field(kind, tier):
        how = _HOW_REPORTED
    else:
        how = _HOW_JACCARD
    return FieldView(
        str(f["name"]),
        kind,
        tier,
        t.weight_text,
        t.min_similarity_text,
        sim,
        how,
        value >= t.min_similarity,
        json.dumps(f.get("output"), ensure_ascii=False),
        json.dumps(expected["value"], ensure_ascii=False)
        if isinstance(expected, dict) and "value" in expected
        else None,
    )


def _outcome(s: ItemScore, threshold: str) -> str:
    if s.passed:
        return f"passed: score {s.text} is at least the threshold {threshold} and every field reaches its tier's floor"
    floors = (
        "a field is" if len(s.below_floor) == 1 else "fields are"
    ) + f" below its tier's floor ({', '.join(s.below_floor)})"
    if s.score >= Fraction(threshold):
        return f"failed: score {s.text} clears the threshold {threshold}, but {floors}"
    return f"failed: score {s.text} is below the threshold {threshold}" + (f", and {floors}" if s.below_floor else "")


def outcome_text(result: dict[str, Any], m: Methodology) -> str:
    """Why a scored result passed or failed, from the engine's own scoring of its fields."""
    s = score_item(((str(f["name"]), f["tier"], similarity_value(f["similarity"])) for f in result["fields"]), m)
    return _outcome(s, m.item_threshold_text)


@dataclass(frozen=True)
class JudgePins:
    rubric: str
    rubric_sha256: str
    direction: str
    route: str
    transcript_scope: str


DIRECTION_WORDS: dict[str, str] = {
    "higher_is_better": "a higher score is better",
    "lower_is_better": "a lower score is better",
}


def judge_pins(judge: Any) -> JudgePins | None:
    """The pins of a judge the run spec pinned (the verifier checked that all four are there)."""
    j = judge if isinstance(judge, dict) else {}
    if "rubric" not in j:
        return None
    return JudgePins(
        j["rubric"],
        j["rubric_sha256"],
        DIRECTION_WORDS.get(j["score_direction"], str(j["score_direction"])),
        j["route"],
        j["transcript_scope"],
    )


def judge_text(judge: Any) -> str:
    j = judge if isinstance(judge, dict) else {}
    return f"{j.get('model', '')} (version {j.get('version', '')}) from {j.get('provider', '')}"


def certificate_view(
    c: CertificateRecord,
    revealed: Any,  # a container of revealed item ids
    gate_names: dict[str, str],
    run_row: RunRow | None,
    generated_at: str,
    revocation: Revocation | None = None,
    answers: Mapping[str, Mapping[str, Any]] | None = None,
    commitment: Callable[[str], str | None] | None = None,
) -> CertificateView:
    """`answers` holds the answer keys of public-gate items (item id → field → {value, …}), so
    that a public result shows each expected value beside its output; `commitment` gives a sealed
    item's row in the commitment list."""
    doc, m, spec, s = c.doc, c.methodology, c.spec, c.doc["summary"]
    results = _result_views(c, revealed, answers, commitment)
    grader = _grader_view(c, revealed)
    rate_short, rate_note, worst_short, best_short = _rates_for_reading(s, m)
    expires = doc.get("expires_at")
    name, version, org = _subject_text(doc.get("subject"))
    subject_id = _subject_id(doc.get("subject"))
    gate = str(doc.get("gate"))
    gate_name = gate_names.get(gate, gate)
    state = validity(doc["verdict"], revocation is not None, is_expired(expires, generated_at))
    system = f"{name} {version}".strip()
    return CertificateView(
        serial=c.serial,
        run=c.run,
        json_path=layout.certificate(c.serial),
        sig_path=layout.sig(layout.certificate(c.serial)),
        proof_path=layout.tlog_proof(layout.certificate(c.serial)),
        index=c.index,
        subject_name=name,
        subject_version=version,
        organization=org,
        gate=gate,
        gate_name=gate_name,
        public=c.public,
        run_row=run_row,
        verdict=doc["verdict"],
        verdict_words=VERDICT_WORDS.get(doc["verdict"], doc["verdict"]),
        verdict_sentence=verdict_sentence(doc, m),
        grade=doc["grade"],
        grade_reason=grade_reason(doc["grade"], m),
        worst_case_grade=doc["worst_case_grade"],
        best_case_grade=doc["best_case_grade"],
        min_grade=m.min_grade,
        band=(doc["band"][0], doc["band"][1]),
        score=doc["score"],
        score_rule=doc["score_rule"],
        score_rule_words=SCORE_RULE_WORDS.get(doc["score_rule"], doc["score_rule"]),
        score_sentence=score_sentence(doc, grader.proposed_json, grader.published),
        pass_rate=s["pass_rate"],
        ci_low=s["pass_rate_ci95"][0],
        ci_high=s["pass_rate_ci95"][1],
        worst_case_rate=s["worst_case_pass_rate"],
        best_case_rate=s["best_case_pass_rate"],
        rate_sentence=_rate_sentence(doc),
        counts=_count_rows(s),
        scored_shown=tuple(results.shown),
        scored_sealed=tuple(results.sealed),
        not_scored=tuple(results.not_scored),
        grader=grader,
        judge=judge_text(spec.get("judge")),
        judge_pins=judge_pins(spec.get("judge")),
        methodology_version=doc["methodology"]["version"],
        methodology_sha256=doc["methodology"]["sha256"],
        methodology_page=layout.methodology_page(doc["methodology"]["version"]),
        run_spec_path=doc["run_spec"]["path"],
        run_spec_sha256=doc["run_spec"]["sha256"],
        issued_at=doc["issued_at"],
        finished_at=doc["finished_at"],
        expires_at=expires,
        expiry_text=_expiry_text(expires, generated_at),
        asserted=c.asserted,
        expired=is_expired(expires, generated_at),
        revoked_at=revocation.at if revocation else None,
        revocation_reason=revocation.reason if revocation else None,
        revocation_index=revocation.index if revocation else None,
        revocations_path=layout.REVOCATIONS,
        noun=readable_view.noun(doc["verdict"]),
        validity=state,
        label=LABELS[state],
        headline=headline(doc, m, system, gate_name, state, revocation.at if revocation else None),
        decisive=doc["verdict"] != "incomplete",
        pass_rate_short=rate_short,
        pass_rate_note=rate_note,
        worst_case_rate_short=worst_short,
        lineage=tuple(results.lineage),
        score_edits=tuple(results.score_edits),
        evidence=evidence_rows(doc, {rel for rel, _ in c.evidence}, revealed),
        exports=export_rows(c.serial, c.info.sha256, c.public),
        agreement=agreement_views(c.evidence),
        best_case_rate_short=best_short,
        interval_words=readable_view.interval_words(s["scored"], *s["pass_rate_ci95"]),
        what_failed=_what_failed(s, results),
        exact=_exact_values(s, results),
        entry=layout.ledger_entry(c.index),
        revocation_entry=layout.ledger_entry(revocation.index) if revocation else None,
        system_page=layout.system_page(subject_id) if subject_id else None,
    )


@dataclass
class _Results:
    """A certificate's results as its page shows them, each list in result order."""

    shown: list[ResultView] = dataclasses.field(default_factory=list)  # scored, and open to read
    sealed: list[ResultView] = dataclasses.field(default_factory=list)  # scored, and sealed
    not_scored: list[ResultView] = dataclasses.field(default_factory=list)
    lineage: list[Lineage] = dataclasses.field(default_factory=list)
    score_edits: list[ScoreEditRow] = dataclasses.field(default_factory=list)


def _result_views(
    c: CertificateRecord,
    revealed: Any,
    answers: Mapping[str, Mapping[str, Any]] | None,
    commitment: Callable[[str], str | None] | None,
) -> _Results:
    """Each result of `c`, opened where it can be read (on a public gate, or once its details
    document is published), with the attempts and score edits an opened one shows."""
    m = c.methodology
    rules = c.spec.get("exclusion_rules", [])
    out = _Results()
    for r in c.doc["results"]:
        item, status = r["item"], r["status"]
        details = c.details.get(item)
        opened: dict[str, Any] | None = r if c.public else (details.doc["result"] if details is not None else None)
        tried = lineage_of(item, opened if opened is not None else r, opened is not None, rules, STATUS_WORDS)
        if tried is not None:
            out.lineage.append(tried)
        out.score_edits += _score_edit_rows(item, opened)
        base = {
            "item": item,
            "anchor": f"result-{item}",
            "status": status,
            "status_text": STATUS_WORDS.get(status, status),
            "item_page": layout.item_page(item) if item in revealed else None,
            "shown": opened is not None,
            "details_hash": r.get("details"),
            "details_path": details.path if details is not None else None,
            "commitment_link": commitment(item) if commitment is not None and item not in revealed else None,
        }
        if status != SCORED:
            rule = opened.get("rule") if opened is not None else None
            rule_text = rules[rule] if isinstance(rule, int) and 0 <= rule < len(rules) else None
            note = opened.get("note") if opened is not None else None
            out.not_scored.append(ResultView(**base, note=note, rule=rule, rule_text=rule_text))
        elif opened is None:
            out.sealed.append(ResultView(**base))
        else:
            answer = answers.get(item) if answers is not None and c.public else None
            out.shown.append(_scored_view(base, opened, m, answer))
    return out


def _score_edit_rows(item: str, opened: dict[str, Any] | None) -> list[ScoreEditRow]:
    edits = opened.get(SCORE_EDITS) if opened is not None else None
    return [
        ScoreEditRow(
            item,
            f"result-{item}",
            e["scorer"],
            json.dumps(e["from"], ensure_ascii=False, sort_keys=True),
            json.dumps(e["to"], ensure_ascii=False, sort_keys=True),
            e["by"],
            e["at"],
            e["reason"],
        )
        for e in (edits if isinstance(edits, list) else [])
    ]


def _scored_view(
    base: dict[str, Any], opened: dict[str, Any], m: Methodology, answer: Mapping[str, Any] | None
) -> ResultView:
    """A scored result open to read: its fields (beside the answer key, on a public gate) and
    why it passed or failed."""
    values = [similarity_value(f["similarity"]) for f in opened["fields"]]
    fields = tuple(_field_view(f, v, m, answer) for f, v in zip(opened["fields"], values, strict=True))
    if opened["passed"] is True:  # rechecked by the build: the score reaches the threshold and every floor is met
        outcome = (
            f"passed: score {opened['score']} is at least the threshold {m.item_threshold_text} and "
            "every field reaches its tier's floor"
        )
    else:
        engine = score_item(((fv.name, fv.tier, v) for fv, v in zip(fields, values, strict=True)), m)
        outcome = _outcome(engine, m.item_threshold_text)
    return ResultView(
        **base,
        score=opened["score"],
        score_short=readable_view.rounded(opened["score"], 2),
        passed=opened["passed"],
        outcome=outcome,
        fields=fields,
    )


def _count_rows(s: dict[str, Any]) -> tuple[CountRow, ...]:
    """The counts table, from the certificate's summary `s`."""
    counts = [
        CountRow("Total results", s["total"], "one per item of the run spec"),
        CountRow("Scored", s["scored"], "only these count toward the pass rate", SCORED),
        CountRow("Passed", s["passed"], "scored results that passed"),
        CountRow("Failed", s["scored"] - s["passed"], "scored results that failed"),
    ]
    counts += [CountRow(f"Not scored: {STATUS_WORDS[k]}", s[k], STATUS_MEANING[k], k) for k in NON_SCORED]
    return tuple(counts)


def _rate_sentence(doc: dict[str, Any]) -> str:
    """The pass rate, its interval and its worst and best cases, in words."""
    s = doc["summary"]
    if s["scored"]:
        rate_sentence = (
            f"{s['passed']} of {s['scored']} scored results passed: a pass rate of {s['pass_rate']} %, with a 95 % "
            f"Wilson score interval of {s['pass_rate_ci95'][0]} % to {s['pass_rate_ci95'][1]} %."
        )
    else:
        rate_sentence = (
            "No result was scored: the pass rate is taken as 0 % and its interval spans everything, "
            f"{s['pass_rate_ci95'][0]} % to {s['pass_rate_ci95'][1]} %."
        )
    non_scored = s["total"] - s["scored"]
    if non_scored:
        rate_sentence += (
            f" The {_plural(non_scored, 'non-scored result')} {'is' if non_scored == 1 else 'are'} not counted as "
            "failures; "
            f"counted as failures {'it' if non_scored == 1 else 'they'} would "
            f"give {s['worst_case_pass_rate']} % (the worst case, grade {doc['worst_case_grade']}), counted as passes "
            f"{s['best_case_pass_rate']} % (the best case, grade {doc['best_case_grade']})."
        )
    else:
        rate_sentence += " Every result was scored, so the worst and best cases equal the pass rate."
    return rate_sentence


def _grader_view(c: CertificateRecord, revealed: Any) -> GraderView:
    """The grader record: its kept bullets once published, else why it waits."""
    doc, record = c.doc, c.grader_record
    proposed = record.doc.get("proposed_json") if record is not None else None
    bullets: tuple[Bullet, ...] = ()
    if record is not None:
        scored_ids = {r["item"] for r in doc["results"] if r["status"] == SCORED}
        kept, _ = keep_bullets(record.doc.get("rationale"), scored_ids)
        bullets = tuple(Bullet(b["text"], tuple(b["evidence_refs"])) for b in kept)
        waiting = ""
    else:
        items = c.spec.get("items", [])
        sealed_left = sum(1 for i in items if i not in revealed)
        waiting = (
            "The grader record is not published yet: on a secret gate the grading model's words may quote the "
            "answers of "
            f"sealed items, so the record is published once every item of this certificate has been revealed "
            f"({len(items) - sealed_left} of {len(items)} revealed so far). Its hash is fixed in the signed "
            "certificate above."
        )
    return GraderView(
        doc["grader"]["record"],
        doc["grader"]["kept"],
        doc["grader"]["dropped"],
        record is not None,
        record.path if record is not None else None,
        proposed if isinstance(proposed, str) else None,
        bullets,
        waiting,
    )


def _rates_for_reading(s: dict[str, Any], m: Methodology) -> tuple[str, str, str, str]:
    """The pass rate rounded for reading with the note on its rounding, and the worst and best
    cases rounded."""
    # The headline rates from the counts, exactly (format v1 §5), to be rounded for reading on
    # the right side of every grade's cut-off; the published 4-decimal figures are the table's.
    passed, scored, total = s["passed"], s["scored"], s["total"]
    rate = Fraction(100 * passed, scored) if scored else Fraction(0)
    worst = Fraction(100 * passed, total) if total else Fraction(0)
    best = Fraction(100 * (passed + total - scored), total) if total else Fraction(0)
    cutoffs = [(g.name, g.min_pass_rate, g.min_pass_rate_text or "") for g in m.grades if g.min_pass_rate is not None]
    rate_short, rate_note = readable_view.rate_for_reading(rate, cutoffs)
    return (
        rate_short,
        rate_note,
        readable_view.rate_for_reading(worst, cutoffs)[0],
        readable_view.rate_for_reading(best, cutoffs)[0],
    )


def _expiry_text(expires: str | None, generated_at: str) -> str:
    if expires is None:
        return "does not expire"
    if is_expired(expires, generated_at):
        return f"{expires}: expired as of this release; expiry is a state, not a failure"
    return expires


def _exact_values(s: dict[str, Any], results: _Results) -> tuple[tuple[str, str], ...]:
    """The exact values table: the published rates and each open result's item score."""
    return (
        ("Pass rate", f"{s['pass_rate']} %"),
        ("95 % Wilson interval", f"{s['pass_rate_ci95'][0]} % to {s['pass_rate_ci95'][1]} %"),
        ("Worst-case pass rate", f"{s['worst_case_pass_rate']} %"),
        ("Best-case pass rate", f"{s['best_case_pass_rate']} %"),
        *((f"Item score of {r.item}", str(r.score)) for r in results.shown),
    )


def _what_failed(s: dict[str, Any], results: _Results) -> tuple[str, ...]:
    """What did not pass, item by item where the result is open, by count where it is sealed."""
    failed = [r for r in results.shown if r.passed is False]
    what_failed = [f"Item {r.item}: {r.outcome}." for r in failed]
    sealed_failed = (s["scored"] - s["passed"]) - len(failed)
    if sealed_failed > 0:
        what_failed.append(
            f"{_plural(sealed_failed, 'sealed result')} failed, by the certificate's count; which ones stays sealed "
            "until their items are retired."
        )
    for r in results.not_scored:
        what_failed.append(f"Item {r.item} was not scored ({r.status_text}); it is counted apart, not as a failure.")
    return tuple(what_failed)


@dataclass(frozen=True)
class CertificateRow:
    serial: str
    page: str
    subject_name: str
    subject_version: str
    organization: str
    gate: str
    gate_name: str
    verdict: str
    verdict_words: str
    grade: str
    score: int
    score_rule_words: str
    issued_at: str
    expires_at: str | None
    expired: bool
    revoked_at: str | None
    revocation_reason: str | None

    @property
    def validity(self) -> str:
        return validity(self.verdict, self.revoked_at is not None, self.expired)

    @property
    def label(self) -> str:
        return LABELS[self.validity]

    @property
    def noun(self) -> str:
        return readable_view.noun(self.verdict)


def certificate_rows(
    certificates: Iterable[CertificateInfo],
    gate_names: dict[str, str],
    revocations: Mapping[str, Revocation] | None = None,
    generated_at: str = "",
) -> list[CertificateRow]:
    """One row per certificate, each marked when it is revoked or, as of the release time
    `generated_at`, expired."""
    revoked = revocations or {}
    rows = []
    for c in certificates:
        name, version, org = _subject_text(c.subject)
        gate = c.gate
        rows.append(
            CertificateRow(
                c.serial,
                layout.certificate_page(c.serial),
                name,
                version,
                org,
                gate,
                gate_names.get(gate, gate),
                c.verdict,
                VERDICT_WORDS.get(c.verdict, c.verdict),
                c.grade,
                c.score,
                SCORE_RULE_WORDS.get(c.score_rule, c.score_rule),
                c.at,
                c.expires_at,
                is_expired(c.expires_at, generated_at),
                revoked[c.serial].at if c.serial in revoked else None,
                revoked[c.serial].reason if c.serial in revoked else None,
            )
        )
    return rows
