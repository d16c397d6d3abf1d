"""Certificates (SPEC §6): their shape, their binding to the ledger and the run spec, when their
private documents fall due, and the recomputation of every derived field. Pure: no I/O."""

import re
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from generator.verifier.canonical import canonical_text
from generator.verifier.errors import Problem
from generator.verifier.formats import (
    KINDS,
    TIERS,
    as_list,
    check_keys,
    is_hex64,
    is_int,
    is_time,
    is_v1,
    same,
    value_kind_problem,
)
from generator.verifier.ledger import CertificateEvent, RunEvent
from generator.verifier.methodology import Methodology
from generator.verifier.scoring import (
    RATIO_RE,
    REPORTED_SIMILARITY_RE,
    SCORED,
    STATUSES,
    band_score,
    computed_similarity,
    grade_counts,
    keep_bullets,
    score_item,
    similarity_form_problem,
    similarity_value,
)
from generator.verifier.text import show, type_name

CERTIFICATE_VERDICTS = ("certified", "not-certified", "incomplete")
SCORE_RULES = ("as-proposed", "clamped", "midpoint-fallback")
CERTIFICATE_KEYS = (
    "type", "v", "serial", "run", "issued_at", "expires_at", "subject", "gate", "methodology",
    "run_spec", "finished_at", "results", "summary", "grade", "band", "worst_case_grade",
    "best_case_grade", "grader", "score", "score_rule", "verdict",
)
SUMMARY_KEYS = (
    "total", "scored", "passed", "infra_error", "not_run", "missing_label", "excluded",
    "pass_rate", "pass_rate_ci95", "worst_case_pass_rate", "best_case_pass_rate",
)
RATE_RE = re.compile(r"^(0|[1-9][0-9]{0,2})\.[0-9]{4}$")
ITEM_SCORE_RE = re.compile(r"^[01]\.[0-9]{6}$")


def _check_result(r: Any, where: str, public: bool, exclusion_rules: int) -> tuple[list[Problem], str | None, bool | None]:
    """The shape of one result (SPEC §6): open on a public gate, sealed on a secret one.
    Returns the problems, the status and, for an open scored result, whether it passed."""
    if not isinstance(r, dict):
        return [Problem("a result must be an object", where=where, found=type_name(r))], None, None
    status = r.get("status")
    if status not in STATUSES:
        return [Problem("unknown status", where=f"{where}.status", expected=" | ".join(STATUSES), found=show(status))], None, None
    if not public:
        problems = check_keys(r, ("item", "status", "details"), where=where)
        if "details" in r and not is_hex64(r["details"]):
            problems.append(Problem("a sealed result's details is a SHA-256", where=f"{where}.details", found=show(r["details"])))
        return problems, status, None
    if status == "scored":
        problems = check_keys(r, ("item", "status", "score", "passed", "fields"), where=where)
        if "score" in r and not (isinstance(r["score"], str) and ITEM_SCORE_RE.fullmatch(r["score"]) and Fraction(r["score"]) <= 1):
            problems.append(Problem("an item score has exactly 6 decimals, in [0, 1]", where=f"{where}.score", found=show(r["score"])))
        if "passed" in r and not isinstance(r["passed"], bool):
            problems.append(Problem("must be true or false", where=f"{where}.passed", found=show(r["passed"])))
        fields = r.get("fields")
        if not isinstance(fields, list) or not fields:
            problems.append(Problem("a scored result lists its fields", where=f"{where}.fields", found=show(fields)))
            fields = []
        names = []
        for j, f in enumerate(fields):
            fw = f"{where}.fields[{j}]"
            problems += check_keys(f, ("name", "kind", "tier", "similarity", "output"), where=fw)
            if not isinstance(f, dict):
                continue
            names.append(f.get("name"))
            if not (isinstance(f.get("name"), str) and f["name"]):
                problems.append(Problem("a field name is a non-empty string", where=f"{fw}.name", found=show(f.get("name"))))
            if f.get("kind") not in KINDS or f.get("tier") not in TIERS:
                problems.append(Problem("unknown kind or tier", where=fw, found=f"{show(f.get('kind'))}, {show(f.get('tier'))}"))
            sim = f.get("similarity")
            if not (isinstance(sim, str) and (REPORTED_SIMILARITY_RE.fullmatch(sim) or RATIO_RE.fullmatch(sim))):
                problems.append(Problem("a similarity is a decimal string in [0, 1] or a fraction p/q", where=f"{fw}.similarity", found=show(sim)))
        texts = [n for n in names if isinstance(n, str)]
        if len(texts) == len(names) and texts != sorted(texts):
            problems.append(Problem("fields are sorted by name", where=f"{where}.fields", found=show(names)))
        return problems, status, r.get("passed") if isinstance(r.get("passed"), bool) else None
    return non_scored_problems(r, where, exclusion_rules), status, None


def non_scored_problems(r: dict[str, Any], where: str, exclusion_rules: int, render: Callable[[Any], str] = show) -> list[Problem]:
    """A non-scored result (SPEC §6): its members, its note, and for an excluded one the index
    of the run spec's exclusion rule. One rule for the results file `certify` reads and for the
    certificate the verifier reads; `render` shows a found value."""
    status = r.get("status")
    problems = check_keys(r, ("item", "status", "note"), optional=("rule",) if status == "excluded" else (), where=where)
    if "note" in r and not isinstance(r["note"], str):
        problems.append(Problem("a note is text", where=f"{where}.note", found=render(r["note"])))
    if status == "excluded":
        rule = r.get("rule")
        if not (is_int(rule) and 0 <= rule < exclusion_rules):
            problems.append(Problem("an excluded result names the index of one of the run spec's exclusion rules", where=f"{where}.rule",
                                    expected=f"an integer from 0 to {exclusion_rules - 1}" if exclusion_rules else "an exclusion rule (the run spec has none)",
                                    found=render(rule)))
    return problems


def check_certificate(cert: Any, spec: dict[str, Any], m: Methodology | None, public: bool, spec_path: str, spec_sha256: str) -> list[Problem]:
    """Every rule of SPEC §6 a certificate must obey that needs no scoring engine: its members,
    its binding to the run spec, the shape of each result, counts that add up, and grades,
    band, score, rule and verdict that exist under the pinned methodology."""
    problems = check_keys(cert, CERTIFICATE_KEYS)
    if not isinstance(cert, dict):
        return problems
    if cert.get("type") != "certificate" or not is_v1(cert):
        problems.append(Problem("wrong type or version", expected='"certificate", v 1', found=f"{show(cert.get('type'))}, v {show(cert.get('v'))}"))
    for k in ("issued_at", "finished_at"):
        if k in cert and not is_time(cert[k]):
            problems.append(Problem("malformed time", where=k, expected="YYYY-MM-DDTHH:MM:SSZ", found=show(cert[k])))
    if "expires_at" in cert and not (cert["expires_at"] is None or is_time(cert["expires_at"])):
        problems.append(Problem("must be a time or null", where="expires_at", found=show(cert["expires_at"])))
    want_spec = {"path": spec_path, "sha256": spec_sha256}
    if "run_spec" in cert and not same(cert["run_spec"], want_spec):
        problems.append(Problem("run_spec must name the published run spec and its hash", where="run_spec", expected=canonical_text(want_spec), found=show(cert["run_spec"], 200)))
    results = cert.get("results")
    counts = dict.fromkeys(STATUSES, 0)
    open_passed: list[bool | None] = []
    if not isinstance(results, list):
        problems.append(Problem("must be a list", where="results", found=type_name(results)))
        results = []
    rules = as_list(spec.get("exclusion_rules"))
    for i, r in enumerate(results):
        found, status, passed = _check_result(r, f"results[{i}]", public, len(rules))
        problems += found
        if status is not None:
            counts[status] += 1
            if status == "scored":
                open_passed.append(passed)
    summary = cert.get("summary")
    problems += check_keys(summary, SUMMARY_KEYS, where="summary")
    if isinstance(summary, dict):
        want_counts = {"total": len(results), **counts}
        for k, v in want_counts.items():
            if k in summary and not (is_int(summary[k]) and summary[k] == v):
                problems.append(Problem(f"{k} does not count the results", where=f"summary.{k}", expected=str(v), found=show(summary[k])))
        passed = summary.get("passed")
        if "passed" in summary and not (is_int(passed) and 0 <= passed <= counts["scored"]):
            problems.append(Problem("passed must be an integer between 0 and the scored count", where="summary.passed", expected=f"0..{counts['scored']}", found=show(passed)))
        elif public and open_passed and all(p is not None for p in open_passed) and passed != sum(bool(p) for p in open_passed):
            problems.append(Problem("passed does not count the results marked passed", where="summary.passed", expected=str(sum(bool(p) for p in open_passed)), found=show(passed)))
        for k in ("pass_rate", "worst_case_pass_rate", "best_case_pass_rate"):
            if k in summary and not (isinstance(summary[k], str) and RATE_RE.fullmatch(summary[k]) and Fraction(summary[k]) <= 100):
                problems.append(Problem("a rate is a percentage with exactly 4 decimals", where=f"summary.{k}", found=show(summary[k])))
        ci = summary.get("pass_rate_ci95")
        if "pass_rate_ci95" in summary and not (isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, str) and RATE_RE.fullmatch(x) for x in ci) and Fraction(ci[0]) <= Fraction(ci[1]) <= 100):
            problems.append(Problem("the interval is two ordered percentages with 4 decimals", where="summary.pass_rate_ci95", found=show(ci)))
    grader = cert.get("grader")
    problems += check_keys(grader, ("record", "kept", "dropped"), where="grader")
    if isinstance(grader, dict):
        if "record" in grader and not is_hex64(grader["record"]):
            problems.append(Problem("the grader record is a SHA-256", where="grader.record", found=show(grader["record"])))
        for k in ("kept", "dropped"):
            if k in grader and not (is_int(grader[k]) and grader[k] >= 0):
                problems.append(Problem("must be a count", where=f"grader.{k}", found=show(grader[k])))
    if cert.get("score_rule") not in SCORE_RULES:
        problems.append(Problem("unknown score rule", where="score_rule", expected=" | ".join(SCORE_RULES), found=show(cert.get("score_rule"))))
    if cert.get("verdict") not in CERTIFICATE_VERDICTS:
        problems.append(Problem("unknown verdict", where="verdict", expected=" | ".join(CERTIFICATE_VERDICTS), found=show(cert.get("verdict"))))
    if m is not None:
        grades = m.grade_order
        for k in ("grade", "worst_case_grade", "best_case_grade"):
            if k in cert and cert[k] not in grades:
                problems.append(Problem("not a grade of the pinned methodology", where=k, expected=", ".join(grades), found=show(cert[k])))
        grade = cert.get("grade")
        band = list(m.band(grade)) if isinstance(grade, str) and m.is_grade(grade) else None
        if band is not None:
            if "band" in cert and not same(cert["band"], band):
                problems.append(Problem("band is not the grade's band", where="band", expected=show(band), found=show(cert["band"])))
            score = cert.get("score")
            if "score" in cert and not (is_int(score) and band[0] <= score <= band[1]):
                problems.append(Problem("score lies outside the grade's band", where="score", expected=f"an integer in {band[0]}..{band[1]}", found=show(score)))
            elif cert.get("score_rule") == "midpoint-fallback" and score != (band[0] + band[1]) // 2:
                problems.append(Problem("a midpoint fallback scores the band's midpoint", where="score", expected=str((band[0] + band[1]) // 2), found=show(score)))
            elif cert.get("score_rule") == "clamped" and score not in band:
                problems.append(Problem("a clamped score is a band edge", where="score", expected=f"{band[0]} or {band[1]}", found=show(score)))
    return problems


def due_records(results: list[dict[str, Any]], items: Iterable[str], public: bool, revealed: Container[str]) -> tuple[list[dict[str, Any]], bool]:
    """When a certificate's private documents fall due (SPEC §6): the sealed results whose
    details document is due (their item is revealed), in result order, and whether the grader
    record is due (at once on a public gate, else once every item of the run is revealed).
    The verifier, the build and `retire` all ask here."""
    sealed = [r for r in results if isinstance(r.get("details"), str) and isinstance(r.get("item"), str) and r["item"] in revealed]
    return sealed, public or all(i in revealed for i in items)
DETAILS_KEYS = ("type", "v", "serial", "salt", "result")
GRADER_RECORD_KEYS = ("type", "v", "serial", "salt", "proposed_json", "rationale")


def check_details_document(doc: Any, serial: str, sealed: dict[str, Any]) -> list[Problem]:
    """A published details document against the sealed result whose hash it matched."""
    problems = _salted_document_problems(doc, "result-details", DETAILS_KEYS, serial)
    if not isinstance(doc, dict):
        return problems
    r = doc.get("result")
    if isinstance(r, dict):
        for k in ("item", "status"):
            if r.get(k) != sealed.get(k):
                problems.append(Problem(f"{k} differs from the sealed result's", where=f"result.{k}", expected=show(sealed.get(k)), found=show(r.get(k))))
    return problems


def _salted_document_problems(doc: Any, kind: str, keys: tuple[str, ...], serial: str) -> list[Problem]:
    """The members, type, serial and salt of a certificate's details document or grader record."""
    problems = check_keys(doc, keys)
    if not isinstance(doc, dict):
        return problems
    if doc.get("type") != kind or not is_v1(doc):
        problems.append(Problem("wrong type or version", expected=f'"{kind}", v 1', found=f"{show(doc.get('type'))}, v {show(doc.get('v'))}"))
    if doc.get("serial") != serial:
        problems.append(Problem("serial differs from the certificate's", where="serial", expected=serial, found=show(doc.get("serial"))))
    if not is_hex64(doc.get("salt")):
        problems.append(Problem("a salt is 64 lowercase hex digits", where="salt", found=show(doc.get("salt"))))
    return problems


def check_grader_record(doc: Any, serial: str) -> list[Problem]:
    problems = _salted_document_problems(doc, "grader-record", GRADER_RECORD_KEYS, serial)
    if not isinstance(doc, dict):
        return problems
    if not (doc.get("proposed_json") is None or isinstance(doc.get("proposed_json"), str)):
        problems.append(Problem("the proposal is kept as its JSON text, or null", where="proposed_json", found=show(doc.get("proposed_json"))))
    return problems


def recheck_open_result(r: dict[str, Any], answer: dict[str, Any] | None, m: Methodology, where: str) -> tuple[list[Problem], bool | None]:
    """Recompute an open scored result (SPEC §6): with the revealed answer, each field's kind,
    tier and computed similarity; always the item score and pass. Returns the problems and the
    recomputed pass (None if the result is too malformed to score)."""
    problems: list[Problem] = []
    fields = as_list(r.get("fields"))
    found_names = [f.get("name") if isinstance(f, dict) else None for f in fields]
    names = [n for n in found_names if isinstance(n, str)]
    if len(names) != len(found_names):
        return [*problems, Problem("a field name is a non-empty string", where=f"{where}.fields", found=show(found_names))], None
    if answer is not None and sorted(names) != sorted(answer):
        problems.append(Problem("fields differ from the revealed answer's", where=f"{where}.fields", expected=", ".join(sorted(answer)), found=", ".join(map(show, names))))
        return problems, None
    scored: list[tuple[str, str, Fraction]] = []
    for j, f in enumerate(fields):
        if not isinstance(f, dict) or f.get("kind") not in KINDS or f.get("tier") not in TIERS:
            return problems, None  # the shape check has reported it
        name, kind, tier, sim = str(f.get("name")), f["kind"], f["tier"], f.get("similarity")
        fw = f"{where}.fields[{j}]"
        a = answer.get(name) if answer is not None else None
        if a is not None and (a["kind"], a["tier"]) != (kind, tier):
            problems.append(Problem("kind or tier differs from the revealed answer", where=fw, expected=f"{a['kind']}, {a['tier']}", found=f"{kind}, {tier}"))
            kind, tier = a["kind"], a["tier"]
        bad_output = value_kind_problem(kind, f.get("output"))
        if bad_output:
            problems.append(Problem(f"the output of a {kind} field", where=f"{fw}.output", expected=bad_output, found=show(f.get("output"))))
        form = similarity_form_problem(kind, tier, sim)
        if form or not isinstance(sim, str):
            problems.append(Problem(f"malformed similarity for a {tier} {kind} field", where=f"{fw}.similarity", expected=str(form), found=show(sim)))
            return problems, None
        if a is not None and not bad_output:
            want = computed_similarity(kind, tier, f.get("output"), a["value"])
            if want is not None and want != sim:
                problems.append(Problem("similarity does not follow from the output and the revealed answer", where=f"{fw}.similarity", expected=want, found=show(sim)))
                sim = want
        scored.append((str(name), tier, similarity_value(sim)))
    if not scored:
        return problems, None
    s = score_item(scored, m)
    if r.get("score") != s.text:
        problems.append(Problem("item score does not follow from the similarities", where=f"{where}.score", expected=s.text, found=show(r.get("score"))))
    if r.get("passed") is not s.passed:
        why = f"below the floor: {', '.join(s.below_floor)}" if s.below_floor else f"score {s.text} against threshold {m.item_threshold_text}"
        problems.append(Problem(f"passed does not follow from the score and the floors ({why})", where=f"{where}.passed", expected=str(s.passed).lower(), found=show(r.get("passed"))))
    return problems, s.passed


def certificate_binding_problems(cert: dict[str, Any], ev: CertificateEvent, run: RunEvent, spec: dict[str, Any] | None) -> list[Problem]:
    """A certificate against its ledger leaf and its run spec (SPEC §4, §6): type, serial, run,
    times, and the subject, gate, methodology and items of the registered run."""
    p: list[Problem] = []
    if cert.get("type") != "certificate" or not is_v1(cert):
        p.append(Problem("wrong type or version", where="type", expected='"certificate", v 1', found=f"{show(cert.get('type'))}, v {show(cert.get('v'))}"))
    for k, want in (("serial", ev.serial), ("run", ev.run)):
        if cert.get(k) != want:
            p.append(Problem(f"{k} differs from the ledger", where=k, expected=want, found=show(cert.get(k))))
    if cert.get("issued_at") != ev.at:
        p.append(Problem("issued_at differs from the certificate leaf's time", where="issued_at", expected=ev.at, found=show(cert.get("issued_at"))))
    fin = cert.get("finished_at")
    if not (is_time(fin) and run.at <= fin <= ev.at):
        p.append(Problem("finished_at must lie between the run's registration and the issue time", where="finished_at", expected=f"{run.at} ≤ finished_at ≤ {ev.at}", found=show(fin)))
    if spec is None:
        return p
    for k in ("subject", "gate", "methodology"):
        if not same(cert.get(k), spec.get(k)):
            p.append(Problem(f"{k} differs from the run spec's", where=k, expected=show(spec.get(k)), found=show(cert.get(k))))
    results = cert.get("results")
    got = [x.get("item") if isinstance(x, dict) else None for x in results] if isinstance(results, list) else None
    if got != spec["items"]:
        p.append(Problem("results do not name the run spec's items in its order", where="results", expected=show(spec["items"]), found=show(got)))
    return p


def recheckable(cert: Any) -> bool:
    """Whether a certificate has the structure recheck_certificate reads (its other problems are
    reported by check_certificate, and recomputing still names the fields that do not follow)."""
    if not isinstance(cert, dict) or not isinstance(cert.get("serial"), str):
        return False
    results, summary, grader = cert.get("results"), cert.get("summary"), cert.get("grader")
    if not (isinstance(results, list) and isinstance(summary, dict) and isinstance(grader, dict)):
        return False
    if not all(isinstance(r, dict) and isinstance(r.get("item"), str) and r.get("status") in STATUSES for r in results):
        return False
    scored = sum(r["status"] == SCORED for r in results)
    passed = summary.get("passed")
    return is_int(passed) and 0 <= passed <= scored


@dataclass
class Recheck:
    """What recomputing a certificate found, what it could only take as asserted, and how
    many comparisons it made (each one counted where it is made)."""

    problems: list[Problem] = field(default_factory=list)
    asserted: list[str] = field(default_factory=list)
    checks: int = 0


def recheck_certificate(
    cert: dict[str, Any],
    m: Methodology,
    public: bool,
    answers: dict[str, dict[str, Any]],
    details: dict[str, dict[str, Any]],
    record: dict[str, Any] | None,
    exclusion_rules: int,
) -> Recheck:
    """Recompute every derived field of a certificate whose shape check_certificate accepted.

    `answers` holds the answers of the certificate's revealed items, `details` the published
    details documents by item, `record` the published grader record. What cannot be recomputed
    yet is reported as asserted, never as verified.
    """
    out = Recheck()
    serial = cert["serial"]
    results = cert["results"]
    counts = dict.fromkeys(STATUSES, 0)
    passed = 0
    unknown = 0
    scored_ids: set[str] = set()
    for i, r in enumerate(results):
        item, status = r["item"], r["status"]
        counts[status] += 1
        where = f"results[{i}] ({item})"
        opened: dict[str, Any] | None = r if public else None
        if not public and item in details:
            d = details[item]
            out.problems += [p.at("", f"{where} details") for p in check_details_document(d, serial, r)]
            out.checks += 1
            res = d.get("result") if isinstance(d, dict) else None
            shape, _, _ = _check_result(res, f"{where} details.result", True, exclusion_rules)
            out.problems += shape
            opened = res if not shape else None
        if status == SCORED:
            scored_ids.add(item)
            if opened is None:
                unknown += 1
                continue
            problems, ok = recheck_open_result(opened, answers.get(item), m, where)
            out.checks += 1
            out.problems += problems
            passed += bool(ok)
    summary = cert["summary"]
    out.checks += 1  # passed: bounded by the open results, or equal to their count
    if unknown and not passed <= summary["passed"] <= passed + unknown:
        out.problems.append(Problem("passed cannot be: the published results already show how many pass, and only the sealed ones are unknown",
                                    where="summary.passed", expected=f"{passed} to {passed + unknown}", found=show(summary["passed"])))
    if unknown:
        passed = summary["passed"]
        out.asserted.append(f"certificate {serial}: {summary['passed']} of {counts[SCORED]} scored results passed, as the certificate states; "
                            f"{unknown} sealed result(s) can be rechecked once their items are retired")
    elif summary["passed"] != passed:
        out.problems.append(Problem("passed does not count the results that pass", where="summary.passed", expected=str(passed), found=show(summary["passed"])))
    g = grade_counts(counts, passed, m)
    for k in ("pass_rate", "pass_rate_ci95", "worst_case_pass_rate", "best_case_pass_rate"):
        out.checks += 1
        if not same(summary.get(k), g.summary[k]):
            out.problems.append(Problem(f"{k} does not follow from the counts", where=f"summary.{k}", expected=show(g.summary[k]), found=show(summary.get(k))))
    for k in ("grade", "band", "worst_case_grade", "best_case_grade", "verdict"):
        out.checks += 1
        if not same(cert.get(k), getattr(g, k)):
            out.problems.append(Problem(f"{k} does not follow from the pass rates", where=k, expected=show(getattr(g, k)), found=show(cert.get(k))))
    grader = cert["grader"]
    if record is not None:
        out.problems += [p.at("", "grader record") for p in check_grader_record(record, serial)]
        pj = record.get("proposed_json") if isinstance(record.get("proposed_json"), str) else None
        score, rule = band_score(pj, g.band)
        out.checks += 5  # the record's shape, the score, its rule, the kept and the dropped bullets
        if cert.get("score") != score:
            out.problems.append(Problem(f"score does not follow from the proposal {show(pj)} and the band {g.band}", where="score", expected=str(score), found=show(cert.get("score"))))
        if cert.get("score_rule") != rule:
            out.problems.append(Problem("score_rule does not follow from the proposal", where="score_rule", expected=rule, found=show(cert.get("score_rule"))))
        kept, dropped = keep_bullets(record.get("rationale"), scored_ids)
        for k, v in (("kept", len(kept)), ("dropped", dropped)):
            if grader.get(k) != v:
                out.problems.append(Problem(f"{k} does not count the rationale's bullets", where=f"grader.{k}", expected=str(v), found=show(grader.get(k))))
    else:
        out.asserted.append(f"certificate {serial}: the grader's proposal behind score {cert.get('score')} ({cert.get('score_rule')}) and the "
                            f"{grader.get('kept')} kept / {grader.get('dropped')} dropped bullets; the grader record is published once every item is revealed")
    return out


def examine_certificate(
    cert: Any,
    ev: CertificateEvent,
    run: RunEvent,
    spec: dict[str, Any] | None,
    m: Methodology | None,
    public: bool,
    spec_path: str,
    answers: dict[str, dict[str, Any]],
    details: dict[str, dict[str, Any]],
    record: dict[str, Any] | None,
) -> Recheck:
    """Every rule of SPEC §6 for one certificate, given what is published of it: its binding to
    the ledger and the run spec, its shape, and (when the binding holds) every derived field
    recomputed. The verifier and the build both ask here, each after reading the documents its
    own way, so that the two apply one pipeline."""
    if not isinstance(cert, dict):
        return Recheck([Problem("a certificate must be an object", found=type_name(cert))], checks=1)
    binding = certificate_binding_problems(cert, ev, run, spec)
    out = Recheck(list(binding), checks=1)
    if spec is None:
        return out
    out.problems += check_certificate(cert, spec, m, public, spec_path, run.sha256)
    out.checks += 1
    if binding or m is None or not recheckable(cert):
        return out
    redo = recheck_certificate(cert, m, public, answers, details, record, len(spec["exclusion_rules"]))
    out.problems += redo.problems
    out.asserted += redo.asserted
    out.checks += redo.checks
    return out
