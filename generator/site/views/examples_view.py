"""Worked examples for the methodology page, computed from a parameter file by the engine.

Every number an example shows comes out of verify.py's scoring engine (build_open_result,
score_item, grade_counts, band_score, wilson_interval …) run on the methodology's own
parameters; nothing is typed in. The examples adapt to any valid parameter file: where a
parameter makes one impossible (a floor of 0 cannot be missed, a threshold no similarity can
land on exactly), the example is skipped with the reason instead of showing something untrue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from generator.site.views.view_models import (
    SCORE_RULE_WORDS,
    STATUS_WORDS,
    VERDICT_WORDS,
    grade_reason,
    outcome_text,
    verdict_sentence,
)
from generator.verifier import (
    Methodology,
    band_score,
    build_open_result,
    grade_counts,
    is_exact_field,
    is_reported_field,
    round_half_up,
    score_item,
    similarity_value,
)

ACCOUNT = "110-482-339201"
ACCOUNT_WRONG = "110-482-339202"  # one digit off
MAX_DECIMALS = 12  # a similarity the page would show with more digits is not a readable example
EXAMPLE_TOTAL = 20  # results in each verdict example


# ---------------------------------------------------------------------------------------------
# Scoring one item


@dataclass(frozen=True)
class ExampleField:
    name: str
    count: int  # how many identical fields this row stands for
    kind: str
    tier: str
    weight: str
    floor: str
    similarity: str
    how: str
    meets_floor: bool


@dataclass(frozen=True)
class ItemExample:
    key: str  # the HTML id
    title: str
    setup: str
    fields: tuple[ExampleField, ...]
    formula: str
    exact: str  # the exact score as a fraction
    score: str  # as published: six decimals
    passed: bool
    outcome: str


@dataclass(frozen=True)
class Skipped:
    key: str
    title: str
    reason: str


@dataclass(frozen=True)
class FieldSpec:
    """One row of an example item: `count` fields alike (named name_01 … when more than one)."""

    name: str
    kind: str
    tier: str
    right: bool = True
    similarity: str | None = None  # reported similarity of a non-critical text field
    count: int = 1


def decimal_text(x: Fraction, max_places: int = MAX_DECIMALS) -> str | None:
    """x as a terminating decimal string without trailing zeros, or None if it does not terminate
    within max_places decimals (or is negative)."""
    if x < 0:
        return None
    for places in range(max_places + 1):
        scaled = x * 10**places
        if scaled.denominator == 1:
            return round_half_up(x, places)
    return None


def _field_names(spec: FieldSpec) -> list[str]:
    return [spec.name] if spec.count == 1 else [f"{spec.name}_{i:02d}" for i in range(1, spec.count + 1)]


def score_example(m: Methodology, key: str, title: str, setup: str, specs: Sequence[FieldSpec]) -> ItemExample:
    """Score an example item through the engine (build_open_result) and describe how."""
    answer: dict[str, Any] = {}
    given: dict[str, tuple[Any, str | None]] = {}
    for spec in specs:
        for name in _field_names(spec):
            if spec.kind == "text":
                value: Any = f"The customer reports {name.replace('_', ' ')}."
                output: Any = value if spec.right else "Something else entirely."
            elif spec.kind == "array":
                value = ["transfer", "refund"]
                output = value if spec.right else ["complaint"]
            else:
                value = ACCOUNT
                output = ACCOUNT if spec.right else ACCOUNT_WRONG
            answer[name] = {"kind": spec.kind, "tier": spec.tier, "value": value}
            given[name] = (output, spec.similarity if is_reported_field(spec.kind, spec.tier) else None)
    result = build_open_result(key, answer, given, m)
    sims = {f["name"]: f["similarity"] for f in result["fields"]}
    rows = []
    num_terms = []
    den_terms = []
    for spec in specs:
        sim = sims[_field_names(spec)[0]]
        t = m.tiers[spec.tier]
        if is_exact_field(spec.kind, spec.tier):
            how = "exact comparison: " + ("equal to the answer" if sim == "1" else "differs from the answer")
        elif is_reported_field(spec.kind, spec.tier):
            how = "cosine similarity, as the evaluator reports it"
        else:
            how = "Jaccard similarity of the two sets"
        rows.append(
            ExampleField(
                spec.name if spec.count == 1 else f"{spec.name}_01 … {spec.name}_{spec.count:02d}",
                spec.count,
                spec.kind,
                spec.tier,
                t.weight_text,
                t.min_similarity_text,
                sim,
                how,
                similarity_value(sim) >= t.min_similarity,
            )
        )
        times = f"{spec.count} × " if spec.count > 1 else ""
        num_terms.append(f"{times}{t.weight_text} × {sim}")
        den_terms.append(f"{times}{t.weight_text}")
    exact = score_item(((f["name"], f["tier"], similarity_value(f["similarity"])) for f in result["fields"]), m).score
    return ItemExample(
        key=key,
        title=title,
        setup=setup,
        fields=tuple(rows),
        formula=f"({' + '.join(num_terms)}) / ({' + '.join(den_terms)})",
        exact=str(exact),
        score=result["score"],
        passed=result["passed"],
        outcome=outcome_text(result, m),
    )


def _below_floor(m: Methodology) -> ItemExample | Skipped:
    key, title = "example-high-below-floor", "A high field below its floor, though the score clears the threshold"
    floor_text = m.tiers["high"].min_similarity_text
    floor = m.tiers["high"].min_similarity
    if floor == 0:
        return Skipped(
            key, title, f"The high tier's floor is {floor_text}: no similarity falls below it, so this cannot happen."
        )
    places = len(floor_text.partition(".")[2]) + 1
    below = round_half_up(floor - Fraction(1, 10**places), places)
    threshold = m.item_threshold
    for extra in range(0, 51):
        specs = [FieldSpec("account_number", "scalar", "critical")]
        if extra:
            specs.append(FieldSpec("reference", "scalar", "critical", count=extra))
        specs.append(FieldSpec("summary", "text", "high", similarity=below))
        fields = "The account number" + (f" and {extra} more critical field{'s' if extra > 1 else ''}" if extra else "")
        ex = score_example(
            m,
            key,
            title,
            f"{fields} right; the summary (high tier) at a reported similarity of {below}, "
            f"just below the high floor of {floor_text}.",
            specs,
        )
        if Fraction(ex.exact) >= threshold:
            return ex
    return Skipped(
        key, title, f"With these weights no item with a high field at {below} scores {m.item_threshold_text} or more."
    )


def _on_threshold(m: Methodology) -> ItemExample | Skipped:
    """An item whose exact score equals the threshold: solve for the reported similarity s of one
    text field that makes it so, in a few shapes of item, and keep the first s that is a short
    terminating decimal in [0, 1] at or above its tier's floor (so that the item passes)."""
    key, title = "example-on-threshold", "A score exactly on the threshold"
    tiers = m.tiers
    threshold = m.item_threshold
    shapes: list[tuple[list[FieldSpec], str]] = [
        ([FieldSpec("account_number", "scalar", "critical")], "high"),
        ([FieldSpec("account_number", "scalar", "critical"), FieldSpec("amount", "scalar", "high")], "low"),
        ([FieldSpec("account_number", "scalar", "critical")], "low"),
        ([], "high"),
        ([], "low"),
    ]
    candidates: list[tuple[list[FieldSpec], str, Fraction, str]] = []
    for right, tier in shapes:
        w = tiers[tier].weight
        a = sum((tiers[f.tier].weight for f in right), Fraction(0))
        s = (threshold * (a + w) - a) / w
        text = decimal_text(s)
        if text is None or not 0 <= s <= 1 or s < tiers[tier].min_similarity:
            continue
        candidates.append((right, tier, s, text))
    candidates.sort(key=lambda c: not 0 < c[2] < 1)  # an inner similarity reads better than 0 or 1
    for right, tier, _, text in candidates:
        name = "summary" if tier == "high" else "comment"
        specs = [*right, FieldSpec(name, "text", tier, similarity=text)]
        rest = " and ".join(f"the {f.name.replace('_', ' ')}" for f in right)
        setup = (
            (f"{rest[0].upper()}{rest[1:]} right; " if rest else "A single field: ")
            + f"the {name} ({tier} tier) at a reported similarity of {text}, the value that puts the score "
            f"exactly on {m.item_threshold_text}."
        )
        ex = score_example(m, key, title, setup, specs)
        if Fraction(ex.exact) == threshold and ex.passed:
            return ex
    return Skipped(
        key,
        title,
        "No simple item here has a reported similarity that is a short decimal in [0, 1] and lands the score "
        f"exactly on {m.item_threshold_text}.",
    )


def item_examples(m: Methodology) -> list[ItemExample | Skipped]:
    """The worked cases of weighted similarity (a critical field right, or wrong) under these tiers and threshold."""
    out: list[ItemExample | Skipped] = [
        score_example(
            m,
            "example-summary-off",
            "The account number right, the summary slightly off",
            "A critical account number given exactly; a high-tier summary worded differently, reported at a "
            "similarity of 0.90.",
            [
                FieldSpec("account_number", "scalar", "critical"),
                FieldSpec("summary", "text", "high", similarity="0.90"),
            ],
        ),
        score_example(
            m,
            "example-account-wrong",
            "The summary perfect, the account number wrong",
            "The summary matches in meaning (reported similarity 1); the account number is off by one digit.",
            [
                FieldSpec("account_number", "scalar", "critical", right=False),
                FieldSpec("summary", "text", "high", similarity="1"),
            ],
        ),
        score_example(
            m,
            "example-ten-high",
            "One wrong critical field among ten right high fields",
            "A wrong account number, and ten high-tier single-value fields all given exactly: the weights alone "
            "would let "
            "the ten outvote the one, which is what the floors are for.",
            [
                FieldSpec("account_number", "scalar", "critical", right=False),
                FieldSpec("detail", "scalar", "high", count=10),
            ],
        ),
        _below_floor(m),
        _on_threshold(m),
    ]
    return out


# ---------------------------------------------------------------------------------------------
# Grades and the band


@dataclass(frozen=True)
class GradeExample:
    passed: int
    scored: int
    pass_rate: str
    ci_low: str
    ci_high: str
    grade: str
    grade_reason: str
    band: tuple[int, int]


@dataclass(frozen=True)
class ProposalExample:
    written: str  # the proposal's JSON text as written in the results file ("" when absent)
    what: str
    score: int
    rule: str
    rule_words: str


PROPOSALS: tuple[tuple[str | None, str], ...] = (
    ("90", "a plain integer"),
    ("90.0", "a number with a decimal point, even one equal to an integer"),
    ('"90"', "a string of digits, not a number"),
    ("1000", "a plain integer above every band"),
    ("-5", "a plain negative integer"),
    (None, "no proposal at all"),
)


def grade_example(m: Methodology, passed: int = 8, scored: int = 10) -> tuple[GradeExample, list[ProposalExample]]:
    g = grade_counts({"scored": scored}, passed, m)
    lo, hi = g.band
    example = GradeExample(
        passed,
        scored,
        g.summary["pass_rate"],
        g.summary["pass_rate_ci95"][0],
        g.summary["pass_rate_ci95"][1],
        g.grade,
        grade_reason(g.grade, m),
        (lo, hi),
    )
    proposals = []
    for written, what in PROPOSALS:
        score, rule = band_score(written, g.band)
        proposals.append(ProposalExample(written or "", what, score, rule, SCORE_RULE_WORDS[rule]))
    return example, proposals


# ---------------------------------------------------------------------------------------------
# The verdict


@dataclass(frozen=True)
class VerdictExample:
    key: str
    title: str
    total: int
    scored: int
    passed: int
    not_scored: tuple[tuple[str, int], ...]  # (status in words, count)
    pass_rate: str
    worst_case_rate: str
    best_case_rate: str
    grade: str
    worst_case_grade: str
    best_case_grade: str
    verdict: str
    verdict_words: str
    why: str

    @property
    def not_scored_text(self) -> str:
        return ", ".join(f"{words}: {n}" for words, n in self.not_scored if n) or "none"


def verdict_example(m: Methodology, key: str, title: str, counts: dict[str, int], passed: int) -> VerdictExample:
    g = grade_counts(counts, passed, m)
    s = g.summary
    doc = {
        "summary": s,
        "grade": g.grade,
        "worst_case_grade": g.worst_case_grade,
        "best_case_grade": g.best_case_grade,
        "verdict": g.verdict,
    }
    return VerdictExample(
        key=key,
        title=title,
        total=s["total"],
        scored=s["scored"],
        passed=passed,
        not_scored=tuple((STATUS_WORDS[k], counts[k]) for k in counts if k != "scored"),
        pass_rate=s["pass_rate"],
        worst_case_rate=s["worst_case_pass_rate"],
        best_case_rate=s["best_case_pass_rate"],
        grade=g.grade,
        worst_case_grade=g.worst_case_grade,
        best_case_grade=g.best_case_grade,
        verdict=g.verdict,
        verdict_words=VERDICT_WORDS[g.verdict],
        why=verdict_sentence(doc, m),
    )


def _first(
    m: Methodology, key: str, title: str, tries: Sequence[tuple[dict[str, int], int]], want: str, extra: Any = None
) -> VerdictExample | None:
    for counts, passed in tries:
        ex = verdict_example(m, key, title, counts, passed)
        if ex.verdict == want and (extra is None or extra(ex)):
            return ex
    return None


@dataclass(frozen=True)
class Relabelling:
    before: VerdictExample
    steps: tuple[VerdictExample, ...]


def verdict_examples(m: Methodology) -> tuple[list[VerdictExample | Skipped], Relabelling | Skipped]:
    n = EXAMPLE_TOTAL
    least = m.min_grade
    order = m.grade_order
    out: list[VerdictExample | Skipped] = []

    key, title = "example-certified", "Certified"
    tries = []
    for k in (1, 0):
        scored = n - k
        tries += [({"scored": scored, "infra_error": k}, p) for p in [*range(scored - 1, -1, -1), scored]]
    ex = _first(m, key, title, tries, "certified")
    out.append(
        ex or Skipped(key, title, f"No run of {n} items reaches the minimum grade {least} under these parameters.")
    )

    key, title = "example-best-case-below", "Not certified: even the best case is below the minimum grade"
    if order.index(least) == len(order) - 1:
        out.append(Skipped(key, title, f"The minimum grade {least} is the lowest grade: every pass rate reaches it."))
    else:
        tries = [({"scored": n - 2, "infra_error": 1, "not_run": 1}, p) for p in range(n - 2, -1, -1)]
        ex = _first(m, key, title, tries, "not-certified", lambda e: not m.reaches(e.best_case_grade, least))
        out.append(
            ex or Skipped(key, title, f"No run of {n} items has a best case below {least} under these parameters.")
        )

    key, title = "example-incomplete", "Incomplete: too few results scored"
    fraction = m.min_scored_fraction
    tries = [
        ({"scored": s, "not_run": n - s}, p)
        for s in range(n - 1, -1, -1)
        if Fraction(s, n) < fraction
        for p in range(s, -1, -1)
    ]
    ex = _first(m, key, title, tries, "incomplete")
    out.append(ex or Skipped(key, title, f"Every run of {n} items scores enough of them under these parameters."))

    # Relabelling: a run that failed with every result scored, then its failures called infrastructure errors.
    key, title = "example-relabel", "Relabelling failures as infrastructure errors"
    base = _first(
        m,
        f"{key}-0",
        "As run: every result scored",
        [({"scored": n}, p) for p in range(n - 1, -1, -1)],
        "not-certified",
    )
    if base is None:
        return out, Skipped(key, title, f"Every run of {n} fully scored items is certified under these parameters.")
    failures = n - base.passed
    steps = []

    def relabelled(r: int) -> str:
        if r == failures:
            return "The one failure relabelled" if r == 1 else f"All {r} failures relabelled"
        return f"{r} of the {failures} failures relabelled"

    for r in range(1, failures + 1):
        e = verdict_example(m, f"{key}-{r}", relabelled(r), {"scored": n - r, "infra_error": r}, base.passed)
        if m.reaches(e.grade, least) or r == failures:
            steps.append(e)
            break
    if failures > 1 and steps and steps[-1].scored != base.passed:
        steps.append(
            verdict_example(
                m,
                f"{key}-{failures}",
                relabelled(failures),
                {"scored": base.passed, "infra_error": failures},
                base.passed,
            )
        )
    if any(
        s.verdict == "certified" for s in steps
    ):  # pragma: no cover - the worst case never moves, see the module docstring
        raise AssertionError("relabelling failures bought a certificate")
    return out, Relabelling(base, tuple(steps))


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkedExamples:
    items: list[ItemExample | Skipped]
    threshold: str
    grade: GradeExample
    proposals: list[ProposalExample]
    verdicts: list[VerdictExample | Skipped]
    relabelling: Relabelling | Skipped
    min_grade: str
    min_scored_fraction: str
    total: int


def worked_examples(m: Methodology) -> WorkedExamples:
    """Everything the methodology page's "Worked examples" section shows, for these parameters."""
    grade, proposals = grade_example(m)
    verdicts, relabelling = verdict_examples(m)
    return WorkedExamples(
        items=item_examples(m),
        threshold=m.item_threshold_text,
        grade=grade,
        proposals=proposals,
        verdicts=verdicts,
        relabelling=relabelling,
        min_grade=m.min_grade,
        min_scored_fraction=m.min_scored_fraction_text,
        total=EXAMPLE_TOTAL,
    )
