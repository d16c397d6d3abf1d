"""Certificates (format v1 §6): their shape and their binding to the ledger and the run spec.
Pure: no I/O; recomputing their derived fields is recheck.py's work."""

import re
from collections.abc import Callable, Container
from fractions import Fraction
from typing import Any

from generator.verifier.core.canonical import canonical_text
from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import (
    KINDS,
    TIERS,
    as_list,
    check_keys,
    is_hex64,
    is_int,
    is_time,
    is_v1,
    same,
)
from generator.verifier.core.text import show, type_name
from generator.verifier.rules.events import CertificateEvent, RunEvent
from generator.verifier.rules.evidence import evidence_problems
from generator.verifier.rules.labelsets import JUDGE_LABELS, judge_labels_problems
from generator.verifier.rules.lineage import lineage_keys, lineage_problems
from generator.verifier.rules.methodology_rules import Methodology
from generator.verifier.rules.score_edits import SCORE_EDITS, score_edits_problems
from generator.verifier.rules.scoring import (
    RATIO_RE,
    REPORTED_SIMILARITY_RE,
    STATUSES,
)

CERTIFICATE_VERDICTS = ("certified", "not-certified", "incomplete")
SCORE_RULES = ("as-proposed", "clamped", "midpoint-fallback")
CERTIFICATE_KEYS = (
    "type",
    "v",
    "serial",
    "run",
    "issued_at",
    "expires_at",
    "subject",
    "gate",
    "methodology",
    "run_spec",
    "finished_at",
    "results",
    "summary",
    "grade",
    "band",
    "worst_case_grade",
    "best_case_grade",
    "grader",
    "score",
    "score_rule",
    "verdict",
)
SUMMARY_KEYS = (
    "total",
    "scored",
    "passed",
    "infra_error",
    "not_run",
    "missing_label",
    "excluded",
    "pass_rate",
    "pass_rate_ci95",
    "worst_case_pass_rate",
    "best_case_pass_rate",
)
RATE_RE = re.compile(r"^(0|[1-9][0-9]{0,2})\.[0-9]{4}$")
ITEM_SCORE_RE = re.compile(r"^[01]\.[0-9]{6}$")


def check_result(
    r: Any,
    where: str,
    public: bool,
    exclusion_rules: int,
    max_attempts: int | None = None,
    not_before: str | None = None,
    not_after: str | None = None,
    evidence_names: Container[str] = (),
) -> tuple[list[Problem], str | None, bool | None]:
    """The shape of one result (format v1 §6): open on a public gate, sealed on a secret one, with its
    attempts (lineage.py) checked against the retry limit and the run's times when given, and
    the names of the certificate's evidence files its attempts may name.
    Returns the problems, the status and, for an open scored result, whether it passed."""
    found, status, passed = _check_result(r, where, public, exclusion_rules)
    if status is not None:
        found += lineage_problems(
            r,
            where,
            sealed=not public,
            max_attempts=max_attempts,
            not_before=not_before,
            not_after=not_after,
            evidence_names=evidence_names,
        )
    return found, status, passed


def _check_result(
    r: Any, where: str, public: bool, exclusion_rules: int
) -> tuple[list[Problem], str | None, bool | None]:
    if not isinstance(r, dict):
        return [Problem("a result must be an object", where=where, found=type_name(r))], None, None
    status = r.get("status")
    if status not in STATUSES:
        return (
            [Problem("unknown status", where=f"{where}.status", expected=" | ".join(STATUSES), found=show(status))],
            None,
            None,
        )
    if not public:
        problems = check_keys(r, ("item", "status", "details"), optional=lineage_keys(r), where=where)
        if "details" in r and not is_hex64(r["details"]):
            problems.append(
                Problem("a sealed result's details is a SHA-256", where=f"{where}.details", found=show(r["details"]))
            )
        return problems, status, None
    if status == "scored":
        problems = check_keys(
            r,
            ("item", "status", "score", "passed", "fields"),
            optional=(*lineage_keys(r), JUDGE_LABELS, SCORE_EDITS),
            where=where,
        )
        if JUDGE_LABELS in r:
            problems += judge_labels_problems(r[JUDGE_LABELS], where)
        if SCORE_EDITS in r:
            problems += score_edits_problems(r[SCORE_EDITS], where)
        if "score" in r and not (
            isinstance(r["score"], str) and ITEM_SCORE_RE.fullmatch(r["score"]) and Fraction(r["score"]) <= 1
        ):
            problems.append(
                Problem(
                    "an item score has exactly 6 decimals, in [0, 1]", where=f"{where}.score", found=show(r["score"])
                )
            )
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
                problems.append(
                    Problem("a field name is a non-empty string", where=f"{fw}.name", found=show(f.get("name")))
                )
            if f.get("kind") not in KINDS or f.get("tier") not in TIERS:
                problems.append(
                    Problem("unknown kind or tier", where=fw, found=f"{show(f.get('kind'))}, {show(f.get('tier'))}")
                )
            sim = f.get("similarity")
            if not (isinstance(sim, str) and (REPORTED_SIMILARITY_RE.fullmatch(sim) or RATIO_RE.fullmatch(sim))):
                problems.append(
                    Problem(
                        "a similarity is a decimal string in [0, 1] or a fraction p/q",
                        where=f"{fw}.similarity",
                        found=show(sim),
                    )
                )
        texts = [n for n in names if isinstance(n, str)]
        if len(texts) == len(names) and texts != sorted(texts):
            problems.append(Problem("fields are sorted by name", where=f"{where}.fields", found=show(names)))
        return problems, status, r.get("passed") if isinstance(r.get("passed"), bool) else None
    return non_scored_problems(r, where, exclusion_rules), status, None


def non_scored_problems(
    r: dict[str, Any], where: str, exclusion_rules: int, render: Callable[[Any], str] = show
) -> list[Problem]:
    """A non-scored result (format v1 §6): its members, its note, and for an excluded one the index
    of the run spec's exclusion rule. One rule for the results file `certify` reads and for the
    certificate the verifier reads; `render` shows a found value."""
    status = r.get("status")
    problems = check_keys(
        r,
        ("item", "status", "note"),
        optional=(("rule",) if status == "excluded" else ()) + lineage_keys(r) + (SCORE_EDITS,),
        where=where,
    )
    if SCORE_EDITS in r:
        problems += score_edits_problems(r[SCORE_EDITS], where, render)
    if "note" in r and not isinstance(r["note"], str):
        problems.append(Problem("a note is text", where=f"{where}.note", found=render(r["note"])))
    if status == "excluded":
        rule = r.get("rule")
        if not (is_int(rule) and 0 <= rule < exclusion_rules):
            problems.append(
                Problem(
                    "an excluded result names the index of one of the run spec's exclusion rules",
                    where=f"{where}.rule",
                    expected=f"an integer from 0 to {exclusion_rules - 1}"
                    if exclusion_rules
                    else "an exclusion rule (the run spec has none)",
                    found=render(rule),
                )
            )
    return problems


def check_certificate(
    cert: Any,
    spec: dict[str, Any],
    m: Methodology | None,
    public: bool,
    spec_path: str,
    spec_sha256: str,
    run_at: str | None = None,
) -> list[Problem]:
    """Every rule of format v1 §6 a certificate must obey that needs no scoring engine: its members,
    its binding to the run spec, the shape of each result, counts that add up, and grades,
    band, score, rule and verdict that exist under the pinned methodology."""
    problems = check_keys(cert, CERTIFICATE_KEYS, optional=("evidence",))
    if not isinstance(cert, dict):
        return problems
    if "evidence" in cert:
        problems += evidence_problems(cert["evidence"], as_list(spec.get("items")))
    problems += _header_problems(cert, {"path": spec_path, "sha256": spec_sha256})
    found, counts, open_passed = _results_problems(cert, spec, m, public, run_at)
    problems += found
    problems += _summary_problems(cert.get("summary"), counts, open_passed if public else [])
    problems += _grader_problems(cert.get("grader"))
    problems += _outcome_problems(cert, m)
    return problems


def _header_problems(cert: dict[str, Any], want_spec: dict[str, str]) -> list[Problem]:
    """The type and version, the times, and the run spec the certificate names."""
    problems = []
    if cert.get("type") != "certificate" or not is_v1(cert):
        problems.append(
            Problem(
                "wrong type or version",
                expected='"certificate", v 1',
                found=f"{show(cert.get('type'))}, v {show(cert.get('v'))}",
            )
        )
    for k in ("issued_at", "finished_at"):
        if k in cert and not is_time(cert[k]):
            problems.append(Problem("malformed time", where=k, expected="YYYY-MM-DDTHH:MM:SSZ", found=show(cert[k])))
    if "expires_at" in cert and not (cert["expires_at"] is None or is_time(cert["expires_at"])):
        problems.append(Problem("must be a time or null", where="expires_at", found=show(cert["expires_at"])))
    if "run_spec" in cert and not same(cert["run_spec"], want_spec):
        problems.append(
            Problem(
                "run_spec must name the published run spec and its hash",
                where="run_spec",
                expected=canonical_text(want_spec),
                found=show(cert["run_spec"], 200),
            )
        )
    return problems


def _results_problems(
    cert: dict[str, Any], spec: dict[str, Any], m: Methodology | None, public: bool, run_at: str | None
) -> tuple[list[Problem], dict[str, int], list[bool | None]]:
    """Each result's shape, and what the summary must count: the results by status (after
    `total`), and whether each open scored result passed."""
    results = cert.get("results")
    counts = dict.fromkeys(STATUSES, 0)
    open_passed: list[bool | None] = []
    problems = []
    if not isinstance(results, list):
        problems.append(Problem("must be a list", where="results", found=type_name(results)))
        results = []
    rules = len(as_list(spec.get("exclusion_rules")))
    max_attempts = m.max_attempts if m is not None else None
    finished_at = cert["finished_at"] if is_time(cert.get("finished_at")) else None
    evidence = {
        e["name"] for e in as_list(cert.get("evidence")) if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    for i, r in enumerate(results):
        found, status, passed = check_result(
            r, f"results[{i}]", public, rules, max_attempts, run_at, finished_at, evidence
        )
        problems += found
        if status is not None:
            counts[status] += 1
            if status == "scored":
                open_passed.append(passed)
    return problems, {"total": len(results), **counts}, open_passed


def _summary_problems(summary: Any, counts: dict[str, int], open_passed: list[bool | None]) -> list[Problem]:
    """The summary: its counts (`counts`, total first), its passed count against the scored
    count and, on a public gate, against the open results marked passed, and its rates."""
    problems = check_keys(summary, SUMMARY_KEYS, where="summary")
    if not isinstance(summary, dict):
        return problems
    for k, v in counts.items():
        if k in summary and not (is_int(summary[k]) and summary[k] == v):
            problems.append(
                Problem(
                    f"{k} does not count the results", where=f"summary.{k}", expected=str(v), found=show(summary[k])
                )
            )
    passed = summary.get("passed")
    if "passed" in summary and not (is_int(passed) and 0 <= passed <= counts["scored"]):
        problems.append(
            Problem(
                "passed must be an integer between 0 and the scored count",
                where="summary.passed",
                expected=f"0..{counts['scored']}",
                found=show(passed),
            )
        )
    elif open_passed and all(p is not None for p in open_passed) and passed != sum(bool(p) for p in open_passed):
        problems.append(
            Problem(
                "passed does not count the results marked passed",
                where="summary.passed",
                expected=str(sum(bool(p) for p in open_passed)),
                found=show(passed),
            )
        )
    for k in ("pass_rate", "worst_case_pass_rate", "best_case_pass_rate"):
        if k in summary and not (
            isinstance(summary[k], str) and RATE_RE.fullmatch(summary[k]) and Fraction(summary[k]) <= 100
        ):
            problems.append(
                Problem("a rate is a percentage with exactly 4 decimals", where=f"summary.{k}", found=show(summary[k]))
            )
    ci = summary.get("pass_rate_ci95")
    if "pass_rate_ci95" in summary and not (
        isinstance(ci, list)
        and len(ci) == 2
        and all(isinstance(x, str) and RATE_RE.fullmatch(x) for x in ci)
        and Fraction(ci[0]) <= Fraction(ci[1]) <= 100
    ):
        problems.append(
            Problem(
                "the interval is two ordered percentages with 4 decimals",
                where="summary.pass_rate_ci95",
                found=show(ci),
            )
        )
    return problems


def _grader_problems(grader: Any) -> list[Problem]:
    problems = check_keys(grader, ("record", "kept", "dropped"), where="grader")
    if isinstance(grader, dict):
        if "record" in grader and not is_hex64(grader["record"]):
            problems.append(
                Problem("the grader record is a SHA-256", where="grader.record", found=show(grader["record"]))
            )
        for k in ("kept", "dropped"):
            if k in grader and not (is_int(grader[k]) and grader[k] >= 0):
                problems.append(Problem("must be a count", where=f"grader.{k}", found=show(grader[k])))
    return problems


def _outcome_problems(cert: dict[str, Any], m: Methodology | None) -> list[Problem]:
    """The score rule and verdict, and under the pinned methodology the grades, the band and the
    score the rule allows in it."""
    problems = []
    for k, known in (("score_rule", SCORE_RULES), ("verdict", CERTIFICATE_VERDICTS)):
        if cert.get(k) not in known:
            problems.append(
                Problem(f"unknown {k.replace('_', ' ')}", where=k, expected=" | ".join(known), found=show(cert.get(k)))
            )
    if m is None:
        return problems
    for k in ("grade", "worst_case_grade", "best_case_grade"):
        if k in cert and cert[k] not in m.grade_order:
            problems.append(
                Problem(
                    "not a grade of the pinned methodology",
                    where=k,
                    expected=", ".join(m.grade_order),
                    found=show(cert[k]),
                )
            )
    grade = cert.get("grade")
    if isinstance(grade, str) and m.is_grade(grade):
        problems += _band_problems(cert, list(m.band(grade)))
    return problems


def _band_problems(cert: dict[str, Any], band: list[int]) -> list[Problem]:
    """The band of the certificate's grade, and the score in it its score rule gives."""
    problems = []
    if "band" in cert and not same(cert["band"], band):
        problems.append(
            Problem("band is not the grade's band", where="band", expected=show(band), found=show(cert["band"]))
        )
    score = cert.get("score")
    if "score" in cert and not (is_int(score) and band[0] <= score <= band[1]):
        problems.append(
            Problem(
                "score lies outside the grade's band",
                where="score",
                expected=f"an integer in {band[0]}..{band[1]}",
                found=show(score),
            )
        )
    elif cert.get("score_rule") == "midpoint-fallback" and score != (band[0] + band[1]) // 2:
        problems.append(
            Problem(
                "a midpoint fallback scores the band's midpoint",
                where="score",
                expected=str((band[0] + band[1]) // 2),
                found=show(score),
            )
        )
    elif cert.get("score_rule") == "clamped" and score not in band:
        problems.append(
            Problem(
                "a clamped score is a band edge", where="score", expected=f"{band[0]} or {band[1]}", found=show(score)
            )
        )
    return problems


def certificate_binding_problems(
    cert: dict[str, Any], ev: CertificateEvent, run: RunEvent, spec: dict[str, Any] | None
) -> list[Problem]:
    """A certificate against its ledger leaf and its run spec (format v1 §4, §6): type, serial, run,
    times, and the subject, gate, methodology and items of the registered run."""
    p: list[Problem] = []
    if cert.get("type") != "certificate" or not is_v1(cert):
        p.append(
            Problem(
                "wrong type or version",
                where="type",
                expected='"certificate", v 1',
                found=f"{show(cert.get('type'))}, v {show(cert.get('v'))}",
            )
        )
    for k, want in (("serial", ev.serial), ("run", ev.run)):
        if cert.get(k) != want:
            p.append(Problem(f"{k} differs from the ledger", where=k, expected=want, found=show(cert.get(k))))
    if cert.get("issued_at") != ev.at:
        p.append(
            Problem(
                "issued_at differs from the certificate leaf's time",
                where="issued_at",
                expected=ev.at,
                found=show(cert.get("issued_at")),
            )
        )
    fin = cert.get("finished_at")
    if not (is_time(fin) and run.at <= fin <= ev.at):
        p.append(
            Problem(
                "finished_at must lie between the run's registration and the issue time",
                where="finished_at",
                expected=f"{run.at} ≤ finished_at ≤ {ev.at}",
                found=show(fin),
            )
        )
    if spec is None:
        return p
    for k in ("subject", "gate", "methodology"):
        if not same(cert.get(k), spec.get(k)):
            p.append(
                Problem(
                    f"{k} differs from the run spec's", where=k, expected=show(spec.get(k)), found=show(cert.get(k))
                )
            )
    results = cert.get("results")
    got = [x.get("item") if isinstance(x, dict) else None for x in results] if isinstance(results, list) else None
    if got != spec["items"]:
        p.append(
            Problem(
                "results do not name the run spec's items in its order",
                where="results",
                expected=show(spec["items"]),
                found=show(got),
            )
        )
    return p
