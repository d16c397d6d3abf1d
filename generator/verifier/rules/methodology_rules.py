"""Methodology parameters (format v1 §5): every rule of a valid parameter file, and the file parsed
once into the immutable object the scoring engine reads."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from generator.verifier.core.errors import FormatError, Problem
from generator.verifier.core.formats import MAX_DECIMAL_LENGTH, TIERS, VERSION_RE, check_keys, is_decimal, is_int
from generator.verifier.core.text import show, type_name
from generator.verifier.rules.beacon import (
    Beacon,
    RetirementSchedule,
    beacon_problems,
    draws_problems,
    parse_beacon,
    parse_schedule,
)

METHODOLOGY_KEYS = (
    "type",
    "v",
    "version",
    "tiers",
    "item_threshold",
    "text_similarity",
    "grade_cutoffs",
    "lowest_grade",
    "bands",
    "certify",
)
DRAW_KEYS = ("beacon", "draws")  # format v2 (FORMAT.md, "Draws and timestamps")


def _fraction_in(value: Any, lo: Fraction, hi: Fraction, lo_open: bool = False) -> bool:
    if not is_decimal(value) or len(value) > MAX_DECIMAL_LENGTH:
        return False
    x = Fraction(value)
    return (lo < x if lo_open else lo <= x) and x <= hi


def check_methodology(params: Any) -> list[Problem]:
    """Every way a methodology parameter file breaks format v1 §5 (empty when it is valid)."""
    problems = check_keys(params, METHODOLOGY_KEYS, optional=DRAW_KEYS)
    if not isinstance(params, dict):
        return problems
    # A methodology that pins a beacon is v 2, so that a reader without draws refuses it
    # instead of certifying runs whose items it cannot check.
    version = 2 if any(k in params for k in DRAW_KEYS) else 1
    if params.get("type") != "methodology" or not (is_int(params.get("v")) and params["v"] == version):
        problems.append(
            Problem(
                "wrong type or version",
                expected=f'"methodology", v {version}',
                found=f"{show(params.get('type'))}, v {show(params.get('v'))}",
            )
        )
    if "beacon" in params:
        problems += beacon_problems(params["beacon"])
    if "draws" in params:
        problems += draws_problems(params["draws"], params.get("beacon"))
    if not (isinstance(params.get("version"), str) and VERSION_RE.fullmatch(params["version"])):
        problems.append(
            Problem(
                "malformed version", where="version", expected=VERSION_RE.pattern, found=show(params.get("version"))
            )
        )
    problems += _tiers_problems(params.get("tiers"))
    if "item_threshold" in params and not _fraction_in(params["item_threshold"], Fraction(0), Fraction(1)):
        problems.append(
            Problem(
                "threshold must be a decimal string in [0, 1]",
                where="item_threshold",
                found=show(params["item_threshold"]),
            )
        )
    problems += _text_similarity_problems(params.get("text_similarity"))
    grades, found = _grades(params)
    problems += found
    bands = params.get("bands")
    if "bands" in params and not isinstance(bands, dict):
        problems.append(Problem("must be an object", where="bands", found=type_name(bands)))
    elif isinstance(bands, dict):
        problems += _bands_problems(bands, grades)
    problems += _certify_problems(params.get("certify"), grades)
    return problems


def _tiers_problems(tiers: Any) -> list[Problem]:
    """Each tier's weight (above 0) and similarity floor (in [0, 1])."""
    problems = check_keys(tiers, TIERS, where="tiers")
    if not isinstance(tiers, dict):
        return problems
    for t in TIERS:
        tier = tiers.get(t)
        if not isinstance(tier, dict):
            if t in tiers:  # a missing tier is check_keys' to report
                problems.append(Problem("a tier is an object", where=f"tiers.{t}", found=type_name(tier)))
            continue
        problems += check_keys(tier, ("weight", "min_similarity"), where=f"tiers.{t}")
        w = tier.get("weight")
        if "weight" in tier and not (is_decimal(w) and Fraction(w) > 0):
            problems.append(
                Problem(
                    "weight must be a decimal string above 0",
                    where=f"tiers.{t}.weight",
                    expected='a string such as "0.7"',
                    found=show(w),
                )
            )
        f = tier.get("min_similarity")
        if "min_similarity" in tier and not _fraction_in(f, Fraction(0), Fraction(1)):
            problems.append(
                Problem("floor must be a decimal string in [0, 1]", where=f"tiers.{t}.min_similarity", found=show(f))
            )
    return problems


def _text_similarity_problems(ts: Any) -> list[Problem]:
    problems = check_keys(ts, ("measure", "model", "version"), where="text_similarity")
    if not isinstance(ts, dict):
        return problems
    if "measure" in ts and ts["measure"] != "cosine":
        problems.append(
            Problem("unknown measure", where="text_similarity.measure", expected='"cosine"', found=show(ts["measure"]))
        )
    for k in ("model", "version"):
        if k in ts and not (isinstance(ts[k], str) and ts[k]):
            problems.append(Problem("must be a non-empty string", where=f"text_similarity.{k}", found=show(ts[k])))
    return problems


def _grades(params: dict[str, Any]) -> tuple[list[str], list[Problem]]:
    """The grades, best first (each cut-off's, then the lowest), and the problems of the
    cut-offs (strictly descending pass rates) and of the grades' names (distinct)."""
    grades: list[str] = []
    problems: list[Problem] = []
    cutoffs = params.get("grade_cutoffs")
    if "grade_cutoffs" in params and not isinstance(cutoffs, list):
        problems.append(Problem("must be a list", where="grade_cutoffs", found=type_name(cutoffs)))
    elif isinstance(cutoffs, list):
        previous: Fraction | None = None
        for i, c in enumerate(cutoffs):
            w = f"grade_cutoffs[{i}]"
            problems += check_keys(c, ("grade", "min_pass_rate"), where=w)
            if not isinstance(c, dict):
                continue
            if isinstance(c.get("grade"), str) and c["grade"]:
                grades.append(c["grade"])
            elif "grade" in c:
                problems.append(
                    Problem("grade must be a non-empty string", where=f"{w}.grade", found=show(c.get("grade")))
                )
            rate = c.get("min_pass_rate")
            if not _fraction_in(rate, Fraction(0), Fraction(100)) or not isinstance(rate, str):
                problems.append(
                    Problem("must be a decimal string in [0, 100]", where=f"{w}.min_pass_rate", found=show(rate))
                )
                continue
            if previous is not None and Fraction(rate) >= previous:
                problems.append(
                    Problem(
                        "cut-offs must be strictly descending",
                        where=f"{w}.min_pass_rate",
                        expected=f"below {previous}",
                        found=rate,
                    )
                )
            previous = Fraction(rate)
    lowest = params.get("lowest_grade")
    if isinstance(lowest, str) and lowest:
        grades.append(lowest)
    elif "lowest_grade" in params:
        problems.append(Problem("must be a non-empty string", where="lowest_grade", found=show(lowest)))
    if len(set(grades)) != len(grades):
        dup = sorted({g for g in grades if grades.count(g) > 1})
        problems.append(Problem("grades must be distinct", where="grade_cutoffs", found=", ".join(dup)))
    return grades, problems


def _bands_problems(bands: dict[str, Any], grades: list[str]) -> list[Problem]:
    """One band per grade, each [min, max] within 0..100 and wholly above the next grade's."""
    problems = []
    for g in grades:
        if g not in bands:
            problems.append(Problem(f"grade {g!r} has no band", where="bands"))
    for g in sorted(set(bands) - set(grades)):
        problems.append(Problem(f"band for unknown grade {g!r}", where="bands"))
    previous_band: tuple[str, list[int]] | None = None
    # With a grade named twice the order of bands means nothing; that error is reported above.
    ordered = len(set(grades)) == len(grades)
    for g in grades:
        b = bands.get(g)
        if b is None:
            continue
        if not (isinstance(b, list) and len(b) == 2 and all(is_int(x) for x in b) and 0 <= b[0] <= b[1] <= 100):
            problems.append(Problem("a band is [min, max] with 0 ≤ min ≤ max ≤ 100", where=f"bands.{g}", found=show(b)))
            previous_band = None
            continue
        if ordered and previous_band is not None and previous_band[1][0] <= b[1]:
            problems.append(
                Problem(
                    f"band of {previous_band[0]} must lie wholly above the band of {g}",
                    where=f"bands.{g}",
                    expected=f"max below {previous_band[1][0]}",
                    found=show(b),
                )
            )
        previous_band = (g, b)
    return problems


def _certify_problems(certify: Any, grades: list[str]) -> list[Problem]:
    """What a certificate needs: the least grade, scored fraction and secret-gate size, whether
    the judge must be independent, and the retry limit if there is one."""
    problems = check_keys(
        certify,
        ("min_grade", "min_scored_fraction", "independent_judge", "min_items_secret_gate"),
        optional=("max_attempts",),
        where="certify",
    )
    if not isinstance(certify, dict):
        return problems
    if "min_grade" in certify and certify["min_grade"] not in grades:
        problems.append(
            Problem(
                "must be one of the grades",
                where="certify.min_grade",
                expected=", ".join(grades),
                found=show(certify["min_grade"]),
            )
        )
    if "min_scored_fraction" in certify and not _fraction_in(
        certify["min_scored_fraction"], Fraction(0), Fraction(1), lo_open=True
    ):
        problems.append(
            Problem(
                "must be a decimal string in (0, 1]",
                where="certify.min_scored_fraction",
                found=show(certify["min_scored_fraction"]),
            )
        )
    if "independent_judge" in certify and not isinstance(certify["independent_judge"], bool):
        problems.append(
            Problem(
                "must be true or false", where="certify.independent_judge", found=show(certify["independent_judge"])
            )
        )
    for k in ("max_attempts", "min_items_secret_gate"):
        if k in certify and not (is_int(certify[k]) and certify[k] >= 1):
            problems.append(Problem("must be an integer of at least 1", where=f"certify.{k}", found=show(certify[k])))
    return problems


# ---------------------------------------------------------------------------------------------
# The parsed methodology: what the engine reads, every quantity an exact Fraction


@dataclass(frozen=True)
class Tier:
    name: str
    weight: Fraction
    min_similarity: Fraction
    weight_text: str  # as published, for pages
    min_similarity_text: str


@dataclass(frozen=True)
class Grade:
    name: str
    min_pass_rate: Fraction | None  # None for the lowest grade, below every cut-off
    min_pass_rate_text: str | None
    band: tuple[int, int]


@dataclass(frozen=True)
class Methodology:
    """A valid parameter file, parsed once (parse_methodology): the engine's only input besides
    the results. Grades run best first, the lowest last."""

    version: str
    tiers: Mapping[str, Tier]
    item_threshold: Fraction
    item_threshold_text: str
    grades: tuple[Grade, ...]
    min_grade: str
    min_scored_fraction: Fraction
    min_scored_fraction_text: str
    independent_judge: bool
    min_items_secret_gate: int
    similarity_model: str
    similarity_version: str
    document: Mapping[str, Any]  # the parameter file as published, for pages
    max_attempts: int | None = None  # the retry limit, when the methodology sets one
    beacon: Beacon | None = None  # the randomness beacon it pins, if any
    draws_required: bool = False  # whether a secret-gate run must draw its items
    retirement_schedule: RetirementSchedule | None = None
    _rank: dict[str, int] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, Grade] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rank", {g.name: i for i, g in enumerate(self.grades)})
        object.__setattr__(self, "_by_name", {g.name: g for g in self.grades})

    @property
    def grade_order(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.grades)

    @property
    def lowest_grade(self) -> str:
        return self.grades[-1].name

    def band(self, grade: str) -> tuple[int, int]:
        return self._by_name[grade].band

    def reaches(self, grade: str, least: str) -> bool:
        """Whether `grade` is `least` or better."""
        return self._rank[grade] <= self._rank[least]

    def is_grade(self, grade: Any) -> bool:
        return isinstance(grade, str) and grade in self._rank


def parse_methodology(doc: Any) -> Methodology:
    """The methodology of a parameter file; FormatError naming the first rule it breaks."""
    problems = check_methodology(doc)
    if problems:
        p = problems[0]
        raise FormatError(
            f"not a valid methodology: {p.message}"
            + (f" at {p.where}" if p.where else "")
            + (f" ({p.found})" if p.found else "")
        )
    tiers = {
        t: Tier(
            t,
            Fraction(doc["tiers"][t]["weight"]),
            Fraction(doc["tiers"][t]["min_similarity"]),
            doc["tiers"][t]["weight"],
            doc["tiers"][t]["min_similarity"],
        )
        for t in TIERS
    }
    grades = [
        Grade(
            c["grade"],
            Fraction(c["min_pass_rate"]),
            c["min_pass_rate"],
            (doc["bands"][c["grade"]][0], doc["bands"][c["grade"]][1]),
        )
        for c in doc["grade_cutoffs"]
    ]
    lowest = doc["lowest_grade"]
    grades.append(Grade(lowest, None, None, (doc["bands"][lowest][0], doc["bands"][lowest][1])))
    c = doc["certify"]
    return Methodology(
        doc["version"],
        MappingProxyType(tiers),
        Fraction(doc["item_threshold"]),
        doc["item_threshold"],
        tuple(grades),
        c["min_grade"],
        Fraction(c["min_scored_fraction"]),
        c["min_scored_fraction"],
        c["independent_judge"],
        c["min_items_secret_gate"],
        doc["text_similarity"]["model"],
        doc["text_similarity"]["version"],
        MappingProxyType(doc),
        c.get("max_attempts"),
        parse_beacon(doc["beacon"]) if "beacon" in doc else None,
        doc.get("draws", {}).get("secret_gate_runs") == "required",
        parse_schedule(doc.get("draws")),
    )
