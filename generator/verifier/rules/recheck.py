"""Recomputing a certificate (format v1 §5, §6): every derived field from its results, the revealed
answers and the methodology, and the one pipeline that applies every rule of format v1 §6 to a
certificate. Pure: no I/O."""

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import (
    KINDS,
    TIERS,
    as_list,
    is_int,
    same,
    value_kind_problem,
)
from generator.verifier.core.text import show, type_name
from generator.verifier.rules.certificate_documents import (
    check_details_document,
    check_grader_record,
)
from generator.verifier.rules.certificates import (
    certificate_binding_problems,
    check_certificate,
    check_result,
)
from generator.verifier.rules.events import CertificateEvent, RunEvent
from generator.verifier.rules.methodology_rules import Methodology
from generator.verifier.rules.scoring import (
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


def recheck_open_result(
    r: dict[str, Any], answer: dict[str, Any] | None, m: Methodology, where: str
) -> tuple[list[Problem], bool | None]:
    """Recompute an open scored result (format v1 §6): with the revealed answer, each field's kind,
    tier and computed similarity; always the item score and pass. Returns the problems and the
    recomputed pass (None if the result is too malformed to score)."""
    problems: list[Problem] = []
    fields = as_list(r.get("fields"))
    found_names = [f.get("name") if isinstance(f, dict) else None for f in fields]
    names = [n for n in found_names if isinstance(n, str)]
    if len(names) != len(found_names):
        return [
            *problems,
            Problem("a field name is a non-empty string", where=f"{where}.fields", found=show(found_names)),
        ], None
    if answer is not None and sorted(names) != sorted(answer):
        problems.append(
            Problem(
                "fields differ from the revealed answer's",
                where=f"{where}.fields",
                expected=", ".join(sorted(answer)),
                found=", ".join(map(show, names)),
            )
        )
        return problems, None
    scored: list[tuple[str, str, Fraction]] = []
    for j, f in enumerate(fields):
        found, field_score = _recheck_field(f, f"{where}.fields[{j}]", answer)
        problems += found
        if field_score is None:
            return problems, None
        scored.append(field_score)
    if not scored:
        return problems, None
    s = score_item(scored, m)
    if r.get("score") != s.text:
        problems.append(
            Problem(
                "item score does not follow from the similarities",
                where=f"{where}.score",
                expected=s.text,
                found=show(r.get("score")),
            )
        )
    if r.get("passed") is not s.passed:
        why = (
            f"below the floor: {', '.join(s.below_floor)}"
            if s.below_floor
            else f"score {s.text} against threshold {m.item_threshold_text}"
        )
        problems.append(
            Problem(
                f"passed does not follow from the score and the floors ({why})",
                where=f"{where}.passed",
                expected=str(s.passed).lower(),
                found=show(r.get("passed")),
            )
        )
    return problems, s.passed


def _recheck_field(
    f: Any, fw: str, answer: dict[str, Any] | None
) -> tuple[list[Problem], tuple[str, str, Fraction] | None]:
    """One field of an open result: with the revealed answer, its kind and tier and the
    similarity its output gives (the answer's taken where they differ); its output's form and
    its similarity's. Returns the problems and what the item score reads of the field (name,
    tier, similarity), None if it cannot be scored."""
    if not isinstance(f, dict) or f.get("kind") not in KINDS or f.get("tier") not in TIERS:
        return [], None  # the shape check has reported it
    problems = []
    name, kind, tier, sim = str(f.get("name")), f["kind"], f["tier"], f.get("similarity")
    a = answer.get(name) if answer is not None else None
    if a is not None and (a["kind"], a["tier"]) != (kind, tier):
        problems.append(
            Problem(
                "kind or tier differs from the revealed answer",
                where=fw,
                expected=f"{a['kind']}, {a['tier']}",
                found=f"{kind}, {tier}",
            )
        )
        kind, tier = a["kind"], a["tier"]
    bad_output = value_kind_problem(kind, f.get("output"))
    if bad_output:
        problems.append(
            Problem(
                f"the output of a {kind} field",
                where=f"{fw}.output",
                expected=bad_output,
                found=show(f.get("output")),
            )
        )
    form = similarity_form_problem(kind, tier, sim)
    if form or not isinstance(sim, str):
        problems.append(
            Problem(
                f"malformed similarity for a {tier} {kind} field",
                where=f"{fw}.similarity",
                expected=str(form),
                found=show(sim),
            )
        )
        return problems, None
    if a is not None and not bad_output:
        want = computed_similarity(kind, tier, f.get("output"), a["value"])
        if want is not None and want != sim:
            problems.append(
                Problem(
                    "similarity does not follow from the output and the revealed answer",
                    where=f"{fw}.similarity",
                    expected=want,
                    found=show(sim),
                )
            )
            sim = want
    return problems, (name, tier, similarity_value(sim))


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
    tally = _recheck_results(out, cert, m, public, answers, details, exclusion_rules)
    passed = _recheck_passed(out, cert, tally)
    g = grade_counts(tally.counts, passed, m)
    summary = cert["summary"]
    for k in ("pass_rate", "pass_rate_ci95", "worst_case_pass_rate", "best_case_pass_rate"):
        out.checks += 1
        if not same(summary.get(k), g.summary[k]):
            out.problems.append(
                Problem(
                    f"{k} does not follow from the counts",
                    where=f"summary.{k}",
                    expected=show(g.summary[k]),
                    found=show(summary.get(k)),
                )
            )
    for k in ("grade", "band", "worst_case_grade", "best_case_grade", "verdict"):
        out.checks += 1
        if not same(cert.get(k), getattr(g, k)):
            out.problems.append(
                Problem(
                    f"{k} does not follow from the pass rates",
                    where=k,
                    expected=show(getattr(g, k)),
                    found=show(cert.get(k)),
                )
            )
    _recheck_grader(out, cert, record, g.band, tally.scored_ids)
    return out


@dataclass
class _Tally:
    """What recomputing the results found: the results by status, how many of the scored ones
    pass, how many are sealed and cannot be opened yet, and the scored items."""

    counts: dict[str, int]
    passed: int = 0
    unknown: int = 0
    scored_ids: set[str] = field(default_factory=set)


def _recheck_results(
    out: Recheck,
    cert: dict[str, Any],
    m: Methodology,
    public: bool,
    answers: dict[str, dict[str, Any]],
    details: dict[str, dict[str, Any]],
    exclusion_rules: int,
) -> _Tally:
    """Each result recomputed where it can be read: an open one as published, a sealed one from
    its details document once that is published."""
    serial = cert["serial"]
    tally = _Tally(dict.fromkeys(STATUSES, 0))
    # The names a revealed attempt may give: the certificate's own list (check_certificate checked it).
    evidence_names = {
        e["name"] for e in cert.get("evidence", []) if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    for i, r in enumerate(cert["results"]):
        item, status = r["item"], r["status"]
        tally.counts[status] += 1
        where = f"results[{i}] ({item})"
        opened: dict[str, Any] | None = r if public else None
        if not public and item in details:
            d = details[item]
            out.problems += [p.at("", f"{where} details") for p in check_details_document(d, serial, r)]
            out.checks += 1
            res = d.get("result") if isinstance(d, dict) else None
            shape, _, _ = check_result(
                res, f"{where} details.result", True, exclusion_rules, evidence_names=evidence_names
            )
            out.problems += shape
            opened = res if not shape else None
        if status == SCORED:
            tally.scored_ids.add(item)
            if opened is None:
                tally.unknown += 1
                continue
            problems, ok = recheck_open_result(opened, answers.get(item), m, where)
            out.checks += 1
            out.problems += problems
            tally.passed += bool(ok)
    return tally


def _recheck_passed(out: Recheck, cert: dict[str, Any], tally: _Tally) -> int:
    """The summary's passed count against the results that pass, or within what the sealed ones
    leave open; returns the count the grades follow from (the certificate's, while some are sealed)."""
    serial, summary, passed, unknown = cert["serial"], cert["summary"], tally.passed, tally.unknown
    out.checks += 1  # passed: bounded by the open results, or equal to their count
    if unknown and not passed <= summary["passed"] <= passed + unknown:
        out.problems.append(
            Problem(
                "passed cannot be: the published results already show how many pass, and only the sealed ones "
                "are unknown",
                where="summary.passed",
                expected=f"{passed} to {passed + unknown}",
                found=show(summary["passed"]),
            )
        )
    if unknown:
        out.asserted.append(
            f"certificate {serial}: {summary['passed']} of {tally.counts[SCORED]} scored results passed, as the "
            "certificate states; "
            f"{unknown} sealed result(s) can be rechecked once their items are retired"
        )
        passed = summary["passed"]
    elif summary["passed"] != passed:
        out.problems.append(
            Problem(
                "passed does not count the results that pass",
                where="summary.passed",
                expected=str(passed),
                found=show(summary["passed"]),
            )
        )
    return passed


def _recheck_grader(
    out: Recheck, cert: dict[str, Any], record: dict[str, Any] | None, band: list[int], scored_ids: set[str]
) -> None:
    """With the grader record, the score and its rule from the grader's proposal and the grade's
    band, and the rationale's bullets kept and dropped; without it, all three as asserted."""
    serial, grader = cert["serial"], cert["grader"]
    if record is None:
        out.asserted.append(
            f"certificate {serial}: the grader's proposal behind score {cert.get('score')} "
            f"({cert.get('score_rule')}) and the "
            f"{grader.get('kept')} kept / {grader.get('dropped')} dropped bullets; the grader record is published "
            "once every item is revealed"
        )
        return
    out.problems += [p.at("", "grader record") for p in check_grader_record(record, serial)]
    pj = record.get("proposed_json") if isinstance(record.get("proposed_json"), str) else None
    score, rule = band_score(pj, band)
    out.checks += 5  # the record's shape, the score, its rule, the kept and the dropped bullets
    if cert.get("score") != score:
        out.problems.append(
            Problem(
                f"score does not follow from the proposal {show(pj)} and the band {band}",
                where="score",
                expected=str(score),
                found=show(cert.get("score")),
            )
        )
    if cert.get("score_rule") != rule:
        out.problems.append(
            Problem(
                "score_rule does not follow from the proposal",
                where="score_rule",
                expected=rule,
                found=show(cert.get("score_rule")),
            )
        )
    kept, dropped = keep_bullets(record.get("rationale"), scored_ids)
    for k, v in (("kept", len(kept)), ("dropped", dropped)):
        if grader.get(k) != v:
            out.problems.append(
                Problem(
                    f"{k} does not count the rationale's bullets",
                    where=f"grader.{k}",
                    expected=str(v),
                    found=show(grader.get(k)),
                )
            )


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
    """Every rule of format v1 §6 for one certificate, given what is published of it: its binding to
    the ledger and the run spec, its shape, and (when the binding holds) every derived field
    recomputed. The verifier and the build both ask here, each after reading the documents its
    own way, so that the two apply one pipeline."""
    if not isinstance(cert, dict):
        return Recheck([Problem("a certificate must be an object", found=type_name(cert))], checks=1)
    binding = certificate_binding_problems(cert, ev, run, spec)
    out = Recheck(list(binding), checks=1)
    if spec is None:
        return out
    out.problems += check_certificate(cert, spec, m, public, spec_path, run.sha256, run.at)
    out.checks += 1
    if binding or m is None or not recheckable(cert):
        return out
    redo = recheck_certificate(cert, m, public, answers, details, record, len(spec["exclusion_rules"]))
    out.problems += redo.problems
    out.asserted += redo.asserted
    out.checks += redo.checks
    return out
