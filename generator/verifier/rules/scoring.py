"""The scoring engine (format v1 §5): similarity, item score, pass rates, the Wilson interval, grades,
the score inside the band, the grader's bullets and the verdict.

Exact rationals throughout; the rounded strings are only for reading and no decision is ever
taken on them. The generator scores with these functions and the verifier re-scores with them:
one implementation, so the two cannot disagree."""

import functools
import math
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from generator.verifier.core.canonical import MAX_SAFE_INTEGER, canonical_bytes
from generator.verifier.core.errors import ScoringError
from generator.verifier.core.formats import MAX_DECIMAL_LENGTH, same
from generator.verifier.core.text import show
from generator.verifier.rules.methodology_rules import Methodology

Z = Fraction(49, 25)  # 1.96, the 95 % normal quantile of format v1 §5
REPORTED_SIMILARITY_RE = re.compile(r"^(0(\.[0-9]+)?|1(\.0+)?)$")
RATIO_RE = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")
PROPOSAL_RE = re.compile(r"^-?(0|[1-9][0-9]*)$")
# The statuses of a result (format v1 §5), defined here once: scored, or one of the non-scored.
SCORED = "scored"
NON_SCORED = ("infra_error", "not_run", "missing_label", "excluded")
STATUSES = (SCORED, *NON_SCORED)


@functools.lru_cache(maxsize=4096)
def decimal_value(text: str) -> Fraction:
    """The exact value of a decimal string. Cached: a methodology's few weights, floors and
    cut-offs, and the reported similarities, come back for every field of every item."""
    return Fraction(text)


def round_half_up(x: Fraction, places: int) -> str:
    """A non-negative exact value as a decimal string with exactly `places` decimals."""
    if x < 0:
        raise ScoringError("round_half_up takes a non-negative value")
    scaled = x * 10**places
    n = scaled.numerator // scaled.denominator
    if 2 * (scaled - n) >= 1:
        n += 1
    digits = str(n).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}" if places else digits


def item_score_text(score: Fraction) -> str:
    """An item score as published: 6 decimals, half-up."""
    return round_half_up(score, 6)


def rate_text(rate: Fraction) -> str:
    """A percentage as published: 4 decimals, half-up."""
    return round_half_up(rate, 4)


def is_exact_field(kind: str, tier: str) -> bool:
    """Critical fields and scalar fields are compared for equality (format v1 §5)."""
    return tier == "critical" or kind == "scalar"


def is_reported_field(kind: str, tier: str) -> bool:
    """Only a non-critical text field takes its similarity from the evaluator's report."""
    return kind == "text" and tier != "critical"


def jaccard_similarity(output: Sequence[Any], answer: Sequence[Any]) -> str:
    """|A∩B| / |A∪B| over the sets of elements (identity by canonical bytes) as "0", "1" or p/q."""
    a = {canonical_bytes(x) for x in output}
    b = {canonical_bytes(x) for x in answer}
    union = len(a | b)
    s = Fraction(len(a & b), union) if union else Fraction(1)
    return similarity_text(s)


def similarity_text(s: Fraction) -> str:
    """A computed similarity: "0", "1", or the reduced fraction "p/q"."""
    if s == 0:
        return "0"
    if s == 1:
        return "1"
    return f"{s.numerator}/{s.denominator}"


def computed_similarity(kind: str, tier: str, output: Any, answer: Any) -> str | None:
    """S of an exact or array field from its output and the answer; None for a reported field."""
    if is_exact_field(kind, tier):
        return "1" if same(output, answer) else "0"
    if kind == "array":
        if not isinstance(output, list) or not isinstance(answer, list):
            return "0"
        return jaccard_similarity(output, answer)
    return None


def _is_reduced_ratio(text: str) -> bool:
    try:
        similarity_value(text)
    except ScoringError:
        return False
    return True


def similarity_value(text: str) -> Fraction:
    """The exact value of a similarity string (a decimal or p/q); ScoringError if it is neither."""
    if not isinstance(text, str) or len(text) > MAX_DECIMAL_LENGTH:
        raise ScoringError(f"not a similarity: {text!r}")
    if REPORTED_SIMILARITY_RE.fullmatch(text):
        return decimal_value(text)
    m = RATIO_RE.fullmatch(text)
    if m:
        s = Fraction(int(m[1]), int(m[2]))
        if s < 1 and f"{s.numerator}/{s.denominator}" == text:
            return s
    raise ScoringError(f"not a similarity: {text!r}")


def similarity_form_problem(kind: str, tier: str, text: Any) -> str | None:
    """What a field's similarity string must look like for its kind and tier, if it does not."""
    if is_exact_field(kind, tier):
        return None if text in ("0", "1") else '"0" or "1" (an exact comparison)'
    if kind == "array":
        if text in ("0", "1") or (isinstance(text, str) and RATIO_RE.fullmatch(text) and _is_reduced_ratio(text)):
            return None
        return '"0", "1" or a reduced fraction "p/q" with 0 < p < q (a Jaccard similarity)'
    if isinstance(text, str) and len(text) <= MAX_DECIMAL_LENGTH and REPORTED_SIMILARITY_RE.fullmatch(text):
        return None
    return 'a decimal string in [0, 1], as reported (such as "0.93")'


@dataclass(frozen=True)
class ItemScore:
    score: Fraction
    passed: bool
    below_floor: tuple[str, ...]  # the fields that missed their tier's floor

    @property
    def text(self) -> str:
        return item_score_text(self.score)


def score_item(fields: Iterable[tuple[str, str, Fraction]], m: Methodology) -> ItemScore:
    """Σ S·W / Σ W over (name, tier, S); passes iff ≥ item_threshold and every floor is met."""
    num = den = Fraction(0)
    below: list[str] = []
    for name, tier_name, s in fields:
        tier = m.tiers[tier_name]
        num += s * tier.weight
        den += tier.weight
        if s < tier.min_similarity:
            below.append(name)
    if not den:
        raise ScoringError("an item has at least one field")
    score = num / den
    return ItemScore(score, score >= m.item_threshold and not below, tuple(below))


def build_open_result(
    item_id: str, answer: dict[str, Any], given: dict[str, tuple[Any, str | None]], m: Methodology
) -> dict[str, Any]:
    """The open form of a scored result (format v1 §6) from each field's output (and, for a
    reported field, its similarity). `given` must name exactly the answer's fields."""
    fields = []
    scored = []
    for name in sorted(answer):  # code-point order
        a = answer[name]
        output, reported = given[name]
        sim = computed_similarity(a["kind"], a["tier"], output, a["value"])
        if sim is None:
            form = similarity_form_problem(a["kind"], a["tier"], reported)
            if form:
                raise ScoringError(
                    f"field {name} of item {item_id}: the reported similarity must be {form}, not {show(reported)}"
                )
            sim = str(reported)
        fields.append({"name": name, "kind": a["kind"], "tier": a["tier"], "similarity": sim, "output": output})
        scored.append((name, a["tier"], similarity_value(sim)))
    s = score_item(scored, m)
    return {"item": item_id, "status": SCORED, "score": s.text, "passed": s.passed, "fields": fields}


def pass_rates(passed: int, scored: int, total: int) -> tuple[Fraction, Fraction, Fraction]:
    """The pass rate, and its worst and best cases over the non-scored results, in percent."""
    rate = Fraction(100 * passed, scored) if scored else Fraction(0)
    worst = Fraction(100 * passed, total) if total else Fraction(0)
    best = Fraction(100 * (passed + total - scored), total) if total else Fraction(0)
    return rate, worst, best


def wilson_interval(x: int, n: int) -> list[str]:
    """The 95 % Wilson score interval of x/n in percent, exactly as format v1 §5 defines it."""
    if not 0 <= x <= n:
        raise ScoringError("0 ≤ passed ≤ scored")
    if n == 0:
        return ["0.0000", "100.0000"]
    z2 = Z * Z
    r = z2 + Fraction(4 * x * (n - x), n)
    scaled = r * 10**80
    root = Fraction(math.isqrt(scaled.numerator // scaled.denominator), 10**40)
    bounds = []
    for sign in (-1, 1):
        b = (2 * x + z2 + sign * Z * root) / (2 * (n + z2)) * 100
        bounds.append(rate_text(min(max(b, Fraction(0)), Fraction(100))))
    return bounds


def grade_for(rate: Fraction, m: Methodology) -> str:
    """The first grade whose cut-off the rate reaches, else the lowest grade."""
    for g in m.grades:
        if g.min_pass_rate is None or rate >= g.min_pass_rate:
            return g.name
    raise ScoringError("a methodology ends with its lowest grade")  # pragma: no cover - parse_methodology makes it so


def proposal_integer(proposed_json: str | None) -> int | None:
    """The grader's proposal as an integer, if its JSON text is a plain integer in range."""
    if proposed_json is None or len(proposed_json) > 20 or not PROPOSAL_RE.fullmatch(proposed_json):
        return None
    value = int(proposed_json)
    return value if abs(value) <= MAX_SAFE_INTEGER else None


def band_score(proposed_json: str | None, band: Sequence[int]) -> tuple[int, str]:
    """The score inside the locked band and the rule that produced it (fail-closed)."""
    lo, hi = band
    p = proposal_integer(proposed_json)
    if p is None:
        return (lo + hi) // 2, "midpoint-fallback"
    if lo <= p <= hi:
        return p, "as-proposed"
    return min(max(p, lo), hi), "clamped"


def keep_bullets(rationale: Any, scored_ids: Container[str]) -> tuple[list[Any], int]:
    """The rationale bullets kept, and how many were dropped. A rationale that is not a list
    (null included) is one dropped element; a missing one is recorded as []."""
    if not isinstance(rationale, list):
        return [], 1
    kept = [b for b in rationale if _is_grounded_bullet(b, scored_ids)]
    return kept, len(rationale) - len(kept)


def _is_grounded_bullet(b: Any, scored_ids: Container[str]) -> bool:
    if not (isinstance(b, dict) and set(b) == {"text", "evidence_refs"} and isinstance(b["text"], str)):
        return False
    refs = b["evidence_refs"]
    return isinstance(refs, list) and bool(refs) and all(isinstance(r, str) and r in scored_ids for r in refs)


def verdict_for(grade: str, worst_grade: str, best_grade: str, scored: int, total: int, m: Methodology) -> str:
    """The fail-closed verdict: the first of format v1 §5's four rules that applies."""

    def reaches(g: str) -> bool:
        return m.reaches(g, m.min_grade)

    if not reaches(best_grade):
        return "not-certified"
    if scored == 0 or Fraction(scored, total) < m.min_scored_fraction:
        return "incomplete"
    if reaches(grade) and reaches(worst_grade):
        return "certified"
    return "not-certified"


@dataclass(frozen=True)
class Grading:
    """Everything a certificate derives from its counts, without the grader's proposal."""

    summary: dict[str, Any]
    grade: str
    band: list[int]
    worst_case_grade: str
    best_case_grade: str
    verdict: str


def grade_counts(counts: dict[str, int], passed: int, m: Methodology) -> Grading:
    """Summary, grades, band and verdict from the status counts and the number passed."""
    unknown = sorted(set(counts) - set(STATUSES))
    if unknown:
        raise ScoringError(f"unknown status(es): {', '.join(unknown)}")
    total = sum(counts.get(s, 0) for s in STATUSES)
    scored = counts.get(SCORED, 0)
    if not 0 <= passed <= scored:
        raise ScoringError("0 ≤ passed ≤ scored")
    rate, worst, best = pass_rates(passed, scored, total)
    summary = {
        "total": total,
        "scored": scored,
        "passed": passed,
        **{s: counts.get(s, 0) for s in NON_SCORED},
        "pass_rate": rate_text(rate),
        "pass_rate_ci95": wilson_interval(passed, scored),
        "worst_case_pass_rate": rate_text(worst),
        "best_case_pass_rate": rate_text(best),
    }
    grade, wg, bg = grade_for(rate, m), grade_for(worst, m), grade_for(best, m)
    return Grading(summary, grade, list(m.band(grade)), wg, bg, verdict_for(grade, wg, bg, scored, total, m))
