"""The scoring engine of format v1 §5 (generator/verify.py, section "Scoring"), tested as vectors.

Every expected value below is worked out by hand or by an independent computation (plain
integer arithmetic, a float formula, a set of Python objects), never by calling the function
under test a second time. The demo parameter file is data/methodology/2026.1.json: tiers
critical 1.0 / floor 1, high 0.7 / floor 0.8, low 0.3 / floor 0; threshold 0.85; cut-offs
S ≥ 90, A ≥ 75, B ≥ 55, C ≥ 35, else D; min_grade B; min_scored_fraction 0.9.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from generator.verifier import (
    MAX_SAFE_INTEGER,
    NON_SCORED,
    FormatError,
    ItemScore,
    band_score,
    build_open_result,
    check_methodology,
    grade_counts,
    is_exact_field,
    is_reported_field,
    keep_bullets,
    parse_methodology,
    round_half_up,
    score_item,
    similarity_form_problem,
    similarity_value,
)
from generator.verifier.rules.scoring import (
    computed_similarity,
    grade_for,
    item_score_text,
    jaccard_similarity,
    pass_rates,
    proposal_integer,
    rate_text,
    similarity_text,
    verdict_for,
    wilson_interval,
)
from tests.support.demo import REPO

F = Fraction
DEMO: dict[str, Any] = json.loads((REPO / "data" / "methodology" / "2026.1.json").read_text(encoding="utf-8"))
DEMO_M = parse_methodology(DEMO)  # what the engine reads
THRESHOLD = F(DEMO["item_threshold"])
SUMMARY_KEYS = {
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
}
RULES = {"as-proposed", "clamped", "midpoint-fallback"}
VERDICTS = {"certified", "not-certified", "incomplete"}


def params_with(**changes: Any) -> dict[str, Any]:
    """A copy of the demo parameters with some values replaced, checked to be still valid, so a
    test never passes because it fed the engine a file the generator would refuse."""
    p = copy.deepcopy(DEMO)
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = p
        for key in parents:
            node = node[key]
        node[last] = value
    assert check_methodology(p) == [], changes
    return p


def test_demo_parameters_are_the_ones_these_vectors_assume():
    """If someone edits the demo file, the vectors below stop meaning anything: fail loudly."""
    assert check_methodology(DEMO) == []
    assert {t: (v["weight"], v["min_similarity"]) for t, v in DEMO["tiers"].items()} == {
        "critical": ("1.0", "1"),
        "high": ("0.7", "0.8"),
        "low": ("0.3", "0"),
    }
    assert DEMO["item_threshold"] == "0.85"
    assert DEMO_M.grade_order == ("S", "A", "B", "C", "D")
    assert [c["min_pass_rate"] for c in DEMO["grade_cutoffs"]] == ["90", "75", "55", "35"]
    assert DEMO["bands"] == {"S": [96, 100], "A": [85, 95], "B": [70, 84], "C": [55, 69], "D": [0, 54]}
    assert DEMO["certify"]["min_grade"] == "B"
    assert DEMO["certify"]["min_scored_fraction"] == "0.9"


# ---------------------------------------------------------------------------------------------
# Rounding (format v1 §1): half-up, fixed decimals, for reading only


@pytest.mark.parametrize(
    ("x", "places", "text"),
    [
        (F(1, 2), 0, "1"),  # an exact half goes up
        (F(3, 2), 0, "2"),
        (F(5, 2), 0, "3"),  # half-up, not banker's rounding (which would give "2")
        (F(0), 0, "0"),
        (F(49, 100), 0, "0"),
        (F(5, 10**7), 6, "0.000001"),  # 0.0000005: the half at the 7th decimal goes up
        (F(4999999, 10**13), 6, "0.000000"),  # just below that half
        (F(0), 6, "0.000000"),
        (F(1), 6, "1.000000"),
        (F(17, 20), 6, "0.850000"),
        (F(7, 8), 6, "0.875000"),
        (F(1, 3), 6, "0.333333"),
        (F(2, 3), 6, "0.666667"),
        (F(100), 4, "100.0000"),
        (F(200, 3), 4, "66.6667"),
        (F(123456789, 10**5), 4, "1234.5679"),  # 1234.56789
        (F(12345, 10**8), 4, "0.0001"),  # 0.00012345
        (F(5, 10**5), 4, "0.0001"),  # 0.00005 is a half
        (F(49999, 10**9), 4, "0.0000"),
    ],
)
def test_round_half_up_vectors(x: Fraction, places: int, text: str):
    assert round_half_up(x, places) == text


def test_round_half_up_refuses_negative_values_so_minus_zero_cannot_appear():
    """A negative value is a caller's bug; "-0.0000" must never be printed."""
    with pytest.raises(ValueError):
        round_half_up(F(-1, 10**9), 4)


def test_published_widths():
    """An item score has exactly 6 decimals, a rate exactly 4 (format v1 §1)."""
    assert item_score_text(F(1)) == "1.000000"
    assert item_score_text(F(0)) == "0.000000"
    assert rate_text(F(0)) == "0.0000"
    assert rate_text(F(100)) == "100.0000"
    assert rate_text(F(200, 3)) == "66.6667"


@settings(max_examples=300)
@given(st.fractions(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=12))
def test_round_half_up_matches_integer_arithmetic(x: Fraction, places: int):
    """floor(x·10^p + 1/2) in integers, formatted by hand: an independent half-up."""
    n = (2 * x.numerator * 10**places + x.denominator) // (2 * x.denominator)
    whole, part = divmod(n, 10**places)
    expected = f"{whole}.{part:0{places}d}" if places else str(whole)
    text = round_half_up(x, places)
    assert text == expected
    assert not text.startswith("-")


# ---------------------------------------------------------------------------------------------
# Seed 001: the weighted similarity oracle, with this project's floors


def test_account_number_right_and_summary_slightly_off_passes():
    """Seed 001: "the account number right, the summary a little wrong" is a PASS."""
    s = score_item([("account_number", "critical", F(1)), ("summary", "high", F("0.9"))], DEMO_M)
    assert s.score == F(163, 170)  # (1·1 + 0.9·0.7) / 1.7
    assert s.text == "0.958824"
    assert s.passed
    assert s.below_floor == ()


def test_summary_perfect_but_account_number_wrong_fails():
    """Seed 001: "the summary perfect, one digit of the account number wrong" is a FAIL."""
    s = score_item([("account_number", "critical", F(0)), ("summary", "high", F(1))], DEMO_M)
    assert s.score == F(7, 17)  # 0.7 / 1.7
    assert s.text == "0.411765"
    assert not s.passed
    assert s.below_floor == ("account_number",)


def test_score_exactly_at_threshold_passes():
    """score ≥ threshold: equality passes. Two high fields 0.9 and 0.8 average exactly 0.85, and
    0.8 is exactly the high floor, which is also reached (S < floor fails, S = floor does not)."""
    s = score_item([("address", "high", F("0.9")), ("defect", "high", F("0.8"))], DEMO_M)
    assert s.score == THRESHOLD
    assert s.text == "0.850000"
    assert s.passed
    assert s.below_floor == ()


def test_score_exactly_at_threshold_with_a_critical_and_a_low_field():
    """(1·1.0 + 0.35·0.3) / 1.3 = 1.105 / 1.3 = 0.85 exactly: passes."""
    s = score_item([("account_number", "critical", F(1)), ("greeting", "low", F("0.35"))], DEMO_M)
    assert s.score == F(17, 20)
    assert s.passed


def test_just_below_threshold_fails():
    """A hair under 0.85 fails although its 6-decimal text reads "0.850000"."""
    s = score_item([("account_number", "critical", F(1)), ("greeting", "low", F("0.3499999"))], DEMO_M)
    assert s.score < THRESHOLD
    assert s.text == "0.850000"
    assert not s.passed
    assert s.below_floor == ()


def test_one_wrong_critical_field_among_ten_right_high_fields_fails_on_the_floor():
    """Format v1 §5's own example: 7/8 = 0.875 ≥ 0.85, so only the critical floor stops it."""
    fields = [("account_number", "critical", F(0))] + [(f"high_{i}", "high", F(1)) for i in range(10)]
    s = score_item(fields, DEMO_M)
    assert s.score == F(7, 8)
    assert s.text == "0.875000"
    assert s.score >= THRESHOLD
    assert not s.passed
    assert s.below_floor == ("account_number",)


def test_high_field_below_its_floor_fails_although_the_score_passes():
    """(1 + 0.79·0.7 + 1·0.3 + 1·0.3) / 2.3 ≈ 0.96 ≥ 0.85, but 0.79 < 0.8, the high floor."""
    fields = [
        ("account_number", "critical", F(1)),
        ("summary", "high", F("0.79")),
        ("greeting", "low", F(1)),
        ("tone", "low", F(1)),
    ]
    s = score_item(fields, DEMO_M)
    assert s.score == (1 + F("0.553") + F("0.6")) / F("2.3")
    assert s.score >= THRESHOLD
    assert not s.passed
    assert s.below_floor == ("summary",)


def test_low_fields_have_no_floor():
    """A low field at 0 misses no floor (its floor is 0); only the score decides."""
    s = score_item([("account_number", "critical", F(1)), ("greeting", "low", F(0))], DEMO_M)
    assert s.below_floor == ()
    assert s.score == F(10, 13)
    assert not s.passed  # 0.769 < 0.85


def test_below_floor_names_every_field_in_the_order_given():
    fields = [("b", "high", F("0.5")), ("a", "critical", F(0)), ("c", "low", F(0)), ("d", "high", F("0.8"))]
    s = score_item(fields, DEMO_M)
    assert s.below_floor == ("b", "a")
    assert not s.passed


def test_an_item_without_fields_is_refused():
    with pytest.raises(ValueError):
        score_item([], DEMO_M)


def test_item_score_is_a_frozen_value():
    s = score_item([("a", "critical", F(1))], DEMO_M)
    assert s == ItemScore(F(1), True, ())
    with pytest.raises(AttributeError):
        s.passed = False  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Which fields are exact, which are reported (format v1 §5 "Field similarity S")


@pytest.mark.parametrize(
    ("kind", "tier", "exact", "reported"),
    [
        ("scalar", "critical", True, False),
        ("scalar", "high", True, False),
        ("scalar", "low", True, False),
        ("text", "critical", True, False),
        ("text", "high", False, True),
        ("text", "low", False, True),
        ("array", "critical", True, False),
        ("array", "high", False, False),
        ("array", "low", False, False),
    ],
)
def test_field_classes(kind: str, tier: str, exact: bool, reported: bool):
    """Critical or scalar: exact. Non-critical text: reported. Non-critical array: Jaccard."""
    assert is_exact_field(kind, tier) is exact
    assert is_reported_field(kind, tier) is reported


def test_exact_fields_compare_canonical_bytes():
    """1 is not true, "1" is not 1, arrays compare in order (format v1 §1 equality)."""
    assert computed_similarity("scalar", "critical", "110-234", "110-234") == "1"
    assert computed_similarity("scalar", "critical", "110-235", "110-234") == "0"
    assert computed_similarity("scalar", "high", 1, True) == "0"
    assert computed_similarity("scalar", "low", "1", 1) == "0"
    assert computed_similarity("scalar", "low", None, None) == "1"
    assert computed_similarity("scalar", "low", None, "null") == "0"
    assert computed_similarity("text", "critical", "Seoul", "Seoul") == "1"
    assert computed_similarity("text", "critical", "Seoul ", "Seoul") == "0"
    assert computed_similarity("array", "critical", ["a", "b"], ["a", "b"]) == "1"
    assert computed_similarity("array", "critical", ["b", "a"], ["a", "b"]) == "0"
    assert computed_similarity("array", "critical", ["a", "a", "b"], ["a", "b"]) == "0"


def test_reported_fields_are_not_computed():
    assert computed_similarity("text", "high", "x", "y") is None
    assert computed_similarity("text", "low", "x", "x") is None


def test_non_critical_array_uses_jaccard_and_a_non_list_output_scores_zero():
    assert computed_similarity("array", "high", ["b", "a"], ["a", "b"]) == "1"
    assert computed_similarity("array", "low", ["a"], ["a", "b"]) == "1/2"
    assert computed_similarity("array", "low", "a", ["a"]) == "0"


# ---------------------------------------------------------------------------------------------
# build_open_result: the open form of a scored result (format v1 §6)

ANSWER: dict[str, Any] = {
    "summary": {"kind": "text", "tier": "high", "value": "Card declined twice"},
    "account_number": {"kind": "scalar", "tier": "critical", "value": "110-234-5678"},
    "tags": {"kind": "array", "tier": "low", "value": ["refund", "card", "urgent", "vip"]},
    "Amount": {"kind": "scalar", "tier": "high", "value": 1500},
    "ürgent": {"kind": "scalar", "tier": "low", "value": True},
}
# Code-point order: "A" (0x41) < "a" (0x61) < "s" < "t" < "ü" (0xFC). A locale-aware or
# case-folding sort would put "Amount" after "account_number" or "ürgent" first.
CODE_POINT_ORDER = ["Amount", "account_number", "summary", "tags", "ürgent"]


def test_open_result_all_right_with_reported_similarity_kept_verbatim():
    given = {
        "summary": ("The card was declined twice", "0.90"),
        "account_number": ("110-234-5678", None),
        "tags": (["vip", "urgent", "card", "refund", "card"], None),
        "Amount": (1500, None),
        "ürgent": (True, None),
    }
    r = build_open_result("item-1", ANSWER, given, DEMO_M)
    assert set(r) == {"item", "status", "score", "passed", "fields"}
    assert r["item"] == "item-1"
    assert r["status"] == "scored"
    assert [f["name"] for f in r["fields"]] == CODE_POINT_ORDER
    sims = {f["name"]: f["similarity"] for f in r["fields"]}
    assert sims == {"Amount": "1", "account_number": "1", "summary": "0.90", "tags": "1", "ürgent": "1"}
    # (1.0 + 0.7 + 0.9·0.7 + 0.3 + 0.3) / 3.0 = 2.93 / 3
    assert r["score"] == "0.976667"
    assert r["passed"] is True
    for f in r["fields"]:
        assert set(f) == {"name", "kind", "tier", "similarity", "output"}
        assert (f["kind"], f["tier"]) == (ANSWER[f["name"]]["kind"], ANSWER[f["name"]]["tier"])
        assert f["output"] == given[f["name"]][0]


def test_open_result_with_type_confusions_and_partial_jaccard():
    """ "1500" is not 1500, 1 is not true; {card, refund} vs four tags is 2/4 = "1/2"."""
    given = {
        "summary": ("Card declined", "1.000"),
        "account_number": ("110-234-5678", "0"),  # a reported value on an exact field is ignored
        "tags": (["card", "refund", "card"], None),
        "Amount": ("1500", None),
        "ürgent": (1, None),
    }
    r = build_open_result("item-2", ANSWER, given, DEMO_M)
    sims = [f["similarity"] for f in r["fields"]]
    assert sims == ["0", "1", "1.000", "1/2", "0"]
    # (0·0.7 + 1·1.0 + 1·0.7 + 0.5·0.3 + 0·0.3) / 3.0 = 1.85 / 3 = 0.61666…
    assert r["score"] == "0.616667"
    assert r["passed"] is False  # below threshold, and Amount (high) below its floor


def test_open_result_critical_wrong_fails_even_with_everything_else_right():
    given = {
        "summary": ("Card declined twice", "1"),
        "account_number": ("110-234-5679", None),
        "tags": (["refund", "card", "urgent", "vip"], None),
        "Amount": (1500, None),
        "ürgent": (True, None),
    }
    r = build_open_result("item-3", ANSWER, given, DEMO_M)
    assert r["fields"][1]["name"] == "account_number"
    assert r["fields"][1]["similarity"] == "0"
    assert r["score"] == "0.666667"  # 2.0 / 3.0
    assert r["passed"] is False


@pytest.mark.parametrize(
    "bad",
    [
        "1.5",
        "0.9e0",
        ".9",
        "0.",
        "-0.1",
        "0.5 ",
        None,
        True,
        "1/2",
        0.9,
        1,
    ],
)
def test_open_result_refuses_a_malformed_reported_similarity(bad: Any):
    """A reported similarity must be a decimal string in [0, 1] (format v1 §1); anything else is an
    error, never a silently scored field."""
    answer = {"summary": {"kind": "text", "tier": "low", "value": "x"}}
    with pytest.raises(ValueError):
        build_open_result("i", answer, {"summary": ("y", bad)}, DEMO_M)


# ---------------------------------------------------------------------------------------------
# Exactness: binary floats would decide some items the wrong way; the engine must not


def _float_score(fields: list[tuple[str, str]], params: dict[str, Any]) -> float:
    """What a float implementation of Σ S·W / Σ W would compute."""
    tiers = params["tiers"]
    num = sum(float(s) * float(tiers[t]["weight"]) for t, s in fields)
    return num / sum(float(tiers[t]["weight"]) for t, _ in fields)


def _exact_score(fields: list[tuple[str, str]], params: dict[str, Any]) -> Fraction:
    tiers = params["tiers"]
    num = sum((F(s) * F(tiers[t]["weight"]) for t, s in fields), F(0))
    return num / sum((F(tiers[t]["weight"]) for t, _ in fields), F(0))


def _check_engine(fields: list[tuple[str, str]], params: dict[str, Any]) -> ItemScore:
    s = score_item([(f"f{i}", t, F(v)) for i, (t, v) in enumerate(fields)], parse_methodology(params))
    assert s.score == _exact_score(fields, params)
    return s


def test_float_would_fail_an_item_exactly_at_threshold():
    """0.94·0.7 + 0.64·0.3 = 0.658 + 0.192 = 0.85 exactly; in floats 0.8499999999999999."""
    fields = [("high", "0.94"), ("low", "0.64")]
    assert _float_score(fields, DEMO) < float(DEMO["item_threshold"])  # the trap is real
    s = _check_engine(fields, DEMO)
    assert s.score == THRESHOLD
    assert s.passed


def test_float_would_pass_an_item_just_below_threshold():
    """A reported similarity one unit in the 20th decimal under 0.85 reads as the float 0.85."""
    fields = [("low", "0.84999999999999999999")]
    assert _float_score(fields, DEMO) >= float(DEMO["item_threshold"])
    s = _check_engine(fields, DEMO)
    assert s.score < THRESHOLD
    assert s.text == "0.850000"  # the reading text rounds up; the decision does not
    assert not s.passed


def _float_traps(
    params: dict[str, Any], tier_sets: list[tuple[str, ...]], sims: list[str]
) -> list[list[tuple[str, str]]]:
    """Every field list (critical S only "0"/"1") whose float verdict differs from the exact one."""
    thr_f, thr = float(params["item_threshold"]), F(params["item_threshold"])
    found = []
    for tiers in tier_sets:
        choices = [["0", "1"] if t == "critical" else sims for t in tiers]
        for values in itertools.product(*choices):
            fields = list(zip(tiers, values, strict=True))
            if (_float_score(fields, params) >= thr_f) != (_exact_score(fields, params) >= thr):
                found.append(fields)
    return found


def test_search_for_float_traps_with_the_demo_parameters():
    """A small search over two-decimal similarities finds items floats misjudge; the engine
    decides every one of them exactly."""
    sims = [f"0.{i:02d}" for i in range(100)] + ["1"]
    traps = _float_traps(DEMO, [("high", "low"), ("critical", "low", "low")], sims)
    assert len(traps) >= 3
    for fields in traps:
        s = _check_engine(fields, DEMO)
        floors_met = all(F(v) >= F(DEMO["tiers"][t]["min_similarity"]) for t, v in fields)
        assert s.passed == (s.score >= THRESHOLD and floors_met)


def test_search_for_float_traps_with_weights_one_two_and_three_tenths():
    """0.1 + 0.2 != 0.3 in floats: weights 0.1 / 0.2 / 0.3, no floors, threshold 0.6."""
    params = params_with(
        tiers__critical={"weight": "0.1", "min_similarity": "0"},
        tiers__high={"weight": "0.2", "min_similarity": "0"},
        tiers__low={"weight": "0.3", "min_similarity": "0"},
        item_threshold="0.6",
    )
    sims = [f"0.{i}" for i in range(10)] + ["1"]
    tier_sets = list(itertools.combinations_with_replacement(("critical", "high", "low"), 3))
    traps = _float_traps(params, tier_sets, sims)
    assert traps
    for fields in traps:
        s = _check_engine(fields, params)
        assert s.passed == (s.score >= F("0.6"))
        assert s.below_floor == ()
    # One spelled out: (1·0.1 + 0.1·0.2 + 0.8·0.3) / 0.6 = 0.36 / 0.6 = 0.6 exactly, while
    # floats give 0.5999999999999999 and would fail it.
    pinned = [("critical", "1"), ("high", "0.1"), ("low", "0.8")]
    assert pinned in traps
    assert _float_score(pinned, params) < 0.6
    s = _check_engine(pinned, params)
    assert s.score == F(3, 5)
    assert s.passed


# ---------------------------------------------------------------------------------------------
# Jaccard and the forms of a similarity string


def test_jaccard_counts_duplicates_once():
    assert jaccard_similarity(["a", "a", "b"], ["b", "a"]) == "1"
    assert jaccard_similarity([1, 1, 1], [1, 2]) == "1/2"


def test_jaccard_identity_is_canonical_bytes():
    """1, true and "1" are three different elements; so are null and "null"; 0 and false."""
    assert jaccard_similarity([1], [True]) == "0"
    assert jaccard_similarity([1], ["1"]) == "0"
    assert jaccard_similarity([1, True, "1"], [1]) == "1/3"
    assert jaccard_similarity([None, "null"], [None]) == "1/2"
    assert jaccard_similarity([0, False, ""], [0, False, ""]) == "1"
    assert jaccard_similarity([0], [False]) == "0"


def test_jaccard_of_two_empty_lists_is_one():
    assert jaccard_similarity([], []) == "1"
    assert jaccard_similarity([], ["a"]) == "0"
    assert jaccard_similarity(["a"], []) == "0"


def test_jaccard_is_reduced():
    """|{a,b}| / |{a,b,c,d}| is 2/4, published as "1/2"; 6/9 as "2/3"."""
    assert jaccard_similarity(["a", "b"], ["a", "b", "c", "d"]) == "1/2"
    assert jaccard_similarity(list("abcdef"), list("abcdefghi")) == "2/3"
    assert jaccard_similarity(list("abc"), list("abcd")) == "3/4"


def test_similarity_text_forms():
    assert similarity_text(F(0)) == "0"
    assert similarity_text(F(1)) == "1"
    assert similarity_text(F(2, 4)) == "1/2"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", F(0)),
        ("1", F(1)),
        ("1.0", F(1)),
        ("1.000", F(1)),
        ("0.90", F(9, 10)),
        ("0.5", F(1, 2)),
        ("1/2", F(1, 2)),
        ("2/3", F(2, 3)),
    ],
)
def test_similarity_value_accepts(text: str, value: Fraction):
    assert similarity_value(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "2/4",
        "1/1",
        "3/2",
        "0/3",
        "01/2",
        "1.01",
        "1.5",
        ".5",
        "0.",
        "-0",
        "00.5",
        "0.5 ",
        "",
        "1e0",
        "٠.5",
        0.5,
        1,
        None,
    ],
)
def test_similarity_value_refuses(text: Any):
    with pytest.raises(ValueError):
        similarity_value(text)


@pytest.mark.parametrize(
    ("kind", "tier", "text", "ok"),
    [
        ("scalar", "critical", "1", True),
        ("scalar", "low", "0", True),
        ("scalar", "low", "1.0", False),  # exact fields are "0" or "1", nothing else
        ("text", "critical", "0.9", False),
        ("array", "high", "1/2", True),
        ("array", "high", "2/4", False),  # not reduced
        ("array", "high", "0.5", False),  # a Jaccard similarity is a fraction, not a decimal
        ("array", "low", "1", True),
        ("text", "high", "0.90", True),
        ("text", "low", "1.000", True),
        ("text", "low", "1/2", False),
        ("text", "low", "1.01", False),
        ("text", "low", 0.9, False),
    ],
)
def test_similarity_form_problem(kind: str, tier: str, text: Any, ok: bool):
    assert (similarity_form_problem(kind, tier, text) is None) is ok


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=3))


@given(st.lists(SCALARS, max_size=8), st.lists(SCALARS, max_size=8))
def test_jaccard_agrees_with_typed_python_sets(a: list[Any], b: list[Any]):
    """For JSON scalars, (type, value) identity equals JCS-bytes identity: an independent set."""
    sa = {(type(x).__name__, x) for x in a}
    sb = {(type(x).__name__, x) for x in b}
    union = sa | sb
    expected = F(len(sa & sb), len(union)) if union else F(1)
    text = jaccard_similarity(a, b)
    assert similarity_value(text) == expected
    assert text == jaccard_similarity(b, a)
    assert similarity_form_problem("array", "low", text) is None


# ---------------------------------------------------------------------------------------------
# Seed 003: grades and bands from the pass rate, and the score inside the band


@pytest.mark.parametrize(
    ("rate", "grade", "band"),
    [
        (F(100), "S", [96, 100]),
        (F(90), "S", [96, 100]),
        (F("89.9999"), "A", [85, 95]),
        (F(75), "A", [85, 95]),
        (F("74.99"), "B", [70, 84]),
        (F(55), "B", [70, 84]),
        (F(35), "C", [55, 69]),
        (F("34.99"), "D", [0, 54]),
        (F(0), "D", [0, 54]),
        (F(900, 10) - F(1, 10**30), "A", [85, 95]),  # a hair under a cut-off is under it
    ],
)
def test_seed_003_grade_and_band_table(rate: Fraction, grade: str, band: list[int]):
    assert grade_for(rate, DEMO_M) == grade
    assert DEMO["bands"][grade] == band


A = (85, 95)  # midpoint 90: the same as the proposal "90", so B is used to tell rules apart
B = (70, 84)  # midpoint ⌊154/2⌋ = 77


@pytest.mark.parametrize(
    ("proposal", "band", "score", "rule"),
    [
        ("90", A, 90, "as-proposed"),
        ("85", A, 85, "as-proposed"),
        ("95", A, 95, "as-proposed"),
        ("90.0", A, 90, "midpoint-fallback"),
        ("true", A, 90, "midpoint-fallback"),
        ('"90"', A, 90, "midpoint-fallback"),
        (None, A, 90, "midpoint-fallback"),
        ("1000", A, 95, "clamped"),
        ("96", A, 95, "clamped"),
        ("84", A, 85, "clamped"),
        ("-5", A, 85, "clamped"),
        ("-0", A, 85, "clamped"),  # the spec's regex admits -0, which is 0
        ("9e1", A, 90, "midpoint-fallback"),
        ("90", B, 84, "clamped"),
        ("77", B, 77, "as-proposed"),
        ("90.0", B, 77, "midpoint-fallback"),
        ("true", B, 77, "midpoint-fallback"),
        ('"90"', B, 77, "midpoint-fallback"),
        (None, B, 77, "midpoint-fallback"),
        ("9e1", B, 77, "midpoint-fallback"),
        ("1000", B, 84, "clamped"),
        ("-5", B, 70, "clamped"),
        ("-0", B, 70, "clamped"),
        ("null", B, 77, "midpoint-fallback"),
        ("", B, 77, "midpoint-fallback"),
        ("[80]", B, 77, "midpoint-fallback"),
        ('{"score":80}', B, 77, "midpoint-fallback"),
        ("080", B, 77, "midpoint-fallback"),  # a leading zero is not JSON
        ("+80", B, 77, "midpoint-fallback"),
        (" 80", B, 77, "midpoint-fallback"),
        ("80\n", B, 77, "midpoint-fallback"),
        ("80 ", B, 77, "midpoint-fallback"),
        ("8_0", B, 77, "midpoint-fallback"),  # int() would accept this; the regex does not
        ("٨٠", B, 77, "midpoint-fallback"),  # Arabic-Indic digits: int() would accept them too
        ("80.5", B, 77, "midpoint-fallback"),
        ("-0.0", B, 77, "midpoint-fallback"),
        (str(MAX_SAFE_INTEGER), B, 84, "clamped"),
        (str(-MAX_SAFE_INTEGER), B, 70, "clamped"),
        (str(MAX_SAFE_INTEGER + 1), B, 77, "midpoint-fallback"),  # out of ±(2^53 − 1)
        (str(-MAX_SAFE_INTEGER - 1), B, 77, "midpoint-fallback"),
        ("9" * 5000, B, 77, "midpoint-fallback"),  # huge: no int() conversion error either
        ("1", (96, 100), 96, "clamped"),
        (None, (96, 100), 98, "midpoint-fallback"),
        (None, (0, 54), 27, "midpoint-fallback"),
        (None, (55, 69), 62, "midpoint-fallback"),
        (None, (0, 1), 0, "midpoint-fallback"),  # ⌊(0+1)/2⌋ = 0: floor, not rounding
        ("3", (7, 7), 7, "clamped"),
        ("7", (7, 7), 7, "as-proposed"),
    ],
)
def test_band_score_vectors(proposal: str | None, band: tuple[int, int], score: int, rule: str):
    assert band_score(proposal, band) == (score, rule)


def test_proposal_integer_range():
    assert proposal_integer("0") == 0
    assert proposal_integer("-0") == 0
    assert proposal_integer(str(MAX_SAFE_INTEGER)) == MAX_SAFE_INTEGER
    assert proposal_integer(str(-MAX_SAFE_INTEGER)) == -MAX_SAFE_INTEGER
    assert proposal_integer(str(MAX_SAFE_INTEGER + 1)) is None
    assert proposal_integer("1.0") is None
    assert proposal_integer(None) is None


# ---------------------------------------------------------------------------------------------
# Rationale bullets: kept only when grounded in scored results


SCORED_IDS = frozenset({"i1", "i2", "i3"})


def test_missing_rationale_is_no_elements():
    """certify records a missing rationale as [] (FORMAT.md, reading 18): no elements."""
    assert keep_bullets([], SCORED_IDS) == ([], 0)


@pytest.mark.parametrize("rationale", ["text", {}, {"text": "x", "evidence_refs": ["i1"]}, 3, True, 0, None])
def test_rationale_that_is_not_a_list_is_one_dropped_element(rationale: Any):
    assert keep_bullets(rationale, SCORED_IDS) == ([], 1)


def test_empty_list_keeps_and_drops_nothing():
    assert keep_bullets([], SCORED_IDS) == ([], 0)


def test_bullet_rules_and_order():
    good1 = {"text": "first", "evidence_refs": ["i2"]}
    good2 = {"text": "", "evidence_refs": ["i3", "i1", "i3"]}  # empty text is still a string
    good3 = {"evidence_refs": ["i1"], "text": "third"}
    rationale = [
        {"text": "extra key", "evidence_refs": ["i1"], "score": 90},
        good1,
        {"text": "no refs", "evidence_refs": []},
        {"text": "unknown ref", "evidence_refs": ["i1", "i9"]},
        good2,
        {"text": 5, "evidence_refs": ["i1"]},
        {"text": None, "evidence_refs": ["i1"]},
        {"text": "refs not a list", "evidence_refs": "i1"},
        {"text": "ref not a string", "evidence_refs": [1]},
        {"text": "no evidence key"},
        {"evidence_refs": ["i1"]},
        "a bare string",
        ["text", "i1"],
        None,
        good3,
    ]
    kept, dropped = keep_bullets(rationale, SCORED_IDS)
    assert kept == [good1, good2, good3]
    assert dropped == len(rationale) - 3


def test_refs_to_non_scored_results_are_dropped():
    """An infra_error or excluded result is not evidence: only scored ids count."""
    kept, dropped = keep_bullets([{"text": "x", "evidence_refs": ["timed-out"]}], {"i1"})
    assert (kept, dropped) == ([], 1)


# ---------------------------------------------------------------------------------------------
# Verdicts and the summary


def run(total: int, scored: int, passed: int, **non_scored: int) -> Any:
    """grade_counts for a run; non-scored results default to infra_error."""
    counts = {"scored": scored, **non_scored}
    rest = total - scored - sum(non_scored.values())
    assert rest >= 0
    if rest:
        counts["infra_error"] = counts.get("infra_error", 0) + rest
    return grade_counts(counts, passed, DEMO_M)


def test_verdict_certified():
    g = run(100, 100, 80)
    assert (g.grade, g.worst_case_grade, g.best_case_grade) == ("A", "A", "A")
    assert g.band == [85, 95]
    assert g.verdict == "certified"


def test_verdict_rule_1_best_case_below_min_grade_beats_incomplete():
    """Only 50 of 100 scored (fraction 0.5 < 0.9), none passed: best case 50 % is C < B, so the
    run is not-certified, not incomplete."""
    g = run(100, 50, 0)
    assert g.best_case_grade == "C"
    assert g.verdict == "not-certified"


def test_verdict_rule_2_too_few_scored():
    """89 of 100 scored, all passed: every grade reaches B, but 0.89 < 0.9."""
    g = run(100, 89, 89)
    assert (g.grade, g.worst_case_grade, g.best_case_grade) == ("S", "A", "S")
    assert g.verdict == "incomplete"


def test_verdict_rule_2_boundary_fraction_is_enough():
    """scored / total = 0.9 exactly is not below min_scored_fraction."""
    g = run(10, 9, 9)
    assert g.summary["worst_case_pass_rate"] == "90.0000"
    assert g.verdict == "certified"


def test_verdict_rule_2_nothing_scored():
    g = run(10, 0, 0, not_run=4, missing_label=3, excluded=3)
    assert g.verdict == "incomplete"
    assert g.summary == {
        "total": 10,
        "scored": 0,
        "passed": 0,
        "infra_error": 0,
        "not_run": 4,
        "missing_label": 3,
        "excluded": 3,
        "pass_rate": "0.0000",
        "pass_rate_ci95": ["0.0000", "100.0000"],
        "worst_case_pass_rate": "0.0000",
        "best_case_pass_rate": "100.0000",
    }
    assert (g.grade, g.worst_case_grade, g.best_case_grade) == ("D", "D", "S")
    assert g.band == [0, 54]


def test_verdict_rule_4_worst_case_below_min_grade():
    """90 of 100 scored, 50 passed: rate 55.6 % (B), best 60 % (B), worst 50 % (C)."""
    g = run(100, 90, 50)
    assert (g.grade, g.worst_case_grade, g.best_case_grade) == ("B", "C", "B")
    assert g.verdict == "not-certified"


def test_verdict_rule_4_grade_below_min_grade():
    """The grade itself below B while the best case still reaches it."""
    assert verdict_for("C", "C", "B", 100, 100, DEMO_M) == "not-certified"
    g = run(100, 90, 45)
    assert (g.grade, g.worst_case_grade, g.best_case_grade) == ("C", "C", "B")
    assert g.verdict == "not-certified"


@pytest.mark.parametrize(
    ("grade", "worst", "best", "scored", "total", "verdict"),
    [
        ("S", "S", "S", 10, 10, "certified"),
        ("B", "B", "B", 10, 10, "certified"),  # min_grade itself is enough
        ("S", "C", "S", 10, 10, "not-certified"),
        ("C", "C", "C", 10, 10, "not-certified"),
        ("C", "C", "C", 0, 10, "not-certified"),  # rule 1 before rule 2
        ("D", "D", "B", 0, 10, "incomplete"),
        ("S", "S", "S", 8, 10, "incomplete"),
        ("S", "B", "S", 9, 10, "certified"),
    ],
)
def test_verdict_for_table(grade: str, worst: str, best: str, scored: int, total: int, verdict: str):
    assert verdict_for(grade, worst, best, scored, total, DEMO_M) == verdict


def test_summary_keys_and_rates():
    g = run(12, 9, 7, excluded=1, not_run=2)
    assert set(g.summary) == SUMMARY_KEYS
    s = g.summary
    assert (s["total"], s["scored"], s["passed"]) == (12, 9, 7)
    assert (s["infra_error"], s["not_run"], s["missing_label"], s["excluded"]) == (0, 2, 0, 1)
    assert s["pass_rate"] == "77.7778"  # 700 / 9
    assert s["worst_case_pass_rate"] == "58.3333"  # 700 / 12
    assert s["best_case_pass_rate"] == "83.3333"  # 100 · (7 + 3) / 12
    assert s["pass_rate_ci95"] == wilson_interval(7, 9)
    assert g.verdict == "incomplete"  # 9 / 12 = 0.75 < 0.9


def test_pass_rates_are_exact():
    assert pass_rates(1, 3, 4) == (F(100, 3), F(25), F(50))
    assert pass_rates(0, 0, 5) == (F(0), F(0), F(100))


def test_grade_counts_refuses_more_passes_than_scored():
    with pytest.raises(ValueError):
        grade_counts({"scored": 2}, 3, DEMO_M)
    with pytest.raises(ValueError):
        grade_counts({"scored": 2}, -1, DEMO_M)


def test_min_grade_from_the_parameters_is_used():
    """With min_grade S, an A run is not certified."""
    p = params_with(certify__min_grade="S")
    g = grade_counts({"scored": 100}, 80, parse_methodology(p))
    assert g.verdict == "not-certified"
    g = grade_counts({"scored": 100}, 90, parse_methodology(p))
    assert g.verdict == "certified"


# ---------------------------------------------------------------------------------------------
# The Wilson interval


def test_wilson_hand_vectors():
    """For x = 0, R = z² is a perfect square, so the lower bound is exactly 0 and the upper bound
    z²/(n + z²) = 3.8416/13.8416 = 2401/8651 = 27.75401…%. For x = n, by symmetry, the lower
    bound is n/(n + z²) = 6250/8651 = 72.24598…% and the upper exactly 100."""
    assert wilson_interval(0, 0) == ["0.0000", "100.0000"]
    assert wilson_interval(0, 10) == ["0.0000", "27.7540"]
    assert wilson_interval(10, 10) == ["72.2460", "100.0000"]
    assert wilson_interval(0, 1)[0] == "0.0000"
    assert wilson_interval(1, 1)[1] == "100.0000"
    # x = n = 1: 1/(1 + z²) = 625/3026 = 20.65432…%
    assert wilson_interval(1, 1) == ["20.6543", "100.0000"]


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
    with pytest.raises(ValueError):
        wilson_interval(-1, 10)


def _float_wilson(x: int, n: int) -> tuple[float, float]:
    """The textbook Wilson score interval in floats, in percent, clamped to [0, 100]."""
    z = 1.96
    p = x / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / denom) * 100, min(1.0, (centre + half) / denom) * 100


def _round4(v: float) -> str | None:
    """v to 4 decimals half-up, or None when v is too close to a rounding boundary for a float
    to say which side it is on."""
    scaled = v * 10**4
    whole = math.floor(scaled)
    frac = scaled - whole
    if abs(frac - 0.5) < 1e-6:
        return None
    r = whole + (1 if frac > 0.5 else 0)
    return f"{r // 10**4}.{r % 10**4:04d}"


def test_wilson_agrees_with_an_independent_float_formula():
    rng = random.Random(20261)
    pairs = [(x, n) for n in range(1, 61) for x in range(n + 1)]
    for _ in range(300):
        n = rng.randint(61, 10**7)
        pairs.append((rng.choice([0, n, rng.randint(0, n), rng.randint(0, min(n, 50))]), n))
    skipped = 0
    for x, n in pairs:
        exact = wilson_interval(x, n)
        for got, approx in zip(exact, _float_wilson(x, n), strict=True):
            want = _round4(approx)
            if want is None:
                skipped += 1
                continue
            assert got == want, (x, n, exact, _float_wilson(x, n))
    assert skipped <= 5, skipped


@settings(max_examples=300)
@given(st.data())
def test_wilson_brackets_the_rate_and_stays_in_range(data: st.DataObject):
    n = data.draw(st.integers(0, 10**6), label="n")
    x = data.draw(st.integers(0, n), label="x")
    lo_text, hi_text = wilson_interval(x, n)
    for t in (lo_text, hi_text):
        assert not t.startswith("-")
        whole, _, part = t.partition(".")
        assert len(part) == 4 and whole.isdigit()
    lo, hi = F(lo_text), F(hi_text)
    assert 0 <= lo <= hi <= 100
    if n:
        rate = F(100 * x, n)
        half_unit = F(5, 10**5)
        assert lo <= rate + half_unit
        assert hi >= rate - half_unit


@settings(max_examples=200)
@given(st.data())
def test_wilson_is_symmetric(data: st.DataObject):
    """lower(x, n) + upper(n − x, n) = 100 exactly before rounding (same √R), so the rounded
    strings also sum to 100 (a tie at the 4th decimal would need √R to hit a half exactly)."""
    n = data.draw(st.integers(1, 10**6), label="n")
    x = data.draw(st.integers(0, n), label="x")
    assert F(wilson_interval(x, n)[0]) + F(wilson_interval(n - x, n)[1]) == 100


# ---------------------------------------------------------------------------------------------
# Property tests


PROPOSALS = st.one_of(
    st.none(),
    st.integers().map(str),
    st.integers(min_value=-(10**60), max_value=10**60).map(str),
    st.integers(-200, 200).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(json.dumps),
    st.floats(-200, 200).map(repr),
    st.text(max_size=12),
    st.from_regex(r"\A-?[0-9]{1,4}(\.[0-9]{1,2})?([eE][+-]?[0-9])?\Z"),
    st.sampled_from(["true", "false", "null", '"90"', "[]", "{}", "-0", "9e1"]),
)


@st.composite
def bands(draw: st.DrawFn) -> tuple[int, int]:
    lo = draw(st.integers(0, 100))
    return lo, draw(st.integers(lo, 100))


@settings(max_examples=500)
@given(bands(), PROPOSALS)
def test_band_score_is_always_inside_the_band(band: tuple[int, int], proposal: str | None):
    """Seed 003: the model cannot leave the band, whatever it writes."""
    lo, hi = band
    score, rule = band_score(proposal, band)
    assert type(score) is int
    assert lo <= score <= hi
    assert rule in RULES
    if rule == "midpoint-fallback":
        assert score == (lo + hi) // 2
    elif rule == "clamped":
        assert score in (lo, hi)
        assert not lo <= int(proposal) <= hi  # type: ignore[arg-type]
    else:
        assert score == int(proposal)  # type: ignore[arg-type]


@st.composite
def cutoff_params(draw: st.DrawFn) -> dict[str, Any]:
    """A grade ladder: 1–6 strictly descending cut-offs in [0, 100] and a lowest grade."""
    rates = draw(st.lists(st.integers(0, 100 * 10**4), min_size=1, max_size=6, unique=True))
    rates.sort(reverse=True)
    cutoffs = [{"grade": f"g{i}", "min_pass_rate": f"{r // 10**4}.{r % 10**4:04d}"} for i, r in enumerate(rates)]
    grades = [c["grade"] for c in cutoffs] + ["bottom"]
    width = 100 // len(grades)
    bands = {g: [100 - (i + 1) * width + 1, 100 - i * width] for i, g in enumerate(grades)}
    bands["bottom"] = [0, 100 - (len(grades) - 1) * width]
    return {
        **copy.deepcopy(DEMO),
        "grade_cutoffs": cutoffs,
        "lowest_grade": "bottom",
        "bands": bands,
        "certify": {**DEMO["certify"], "min_grade": "bottom"},
    }


@settings(max_examples=300)
@given(st.one_of(st.just(DEMO), cutoff_params()), st.fractions(0, 100), st.fractions(0, 100))
def test_grade_never_falls_as_the_rate_rises(params: dict[str, Any], r1: Fraction, r2: Fraction):
    lo, hi = min(r1, r2), max(r1, r2)
    m = parse_methodology(params)
    order = m.grade_order
    assert order.index(grade_for(hi, m)) <= order.index(grade_for(lo, m))


@st.composite
def runs_with_relabelling(draw: st.DrawFn) -> tuple[dict[str, int], int, int]:
    """A run as status counts plus passes, and k of its failed scored items to relabel."""
    total = draw(st.integers(1, 300))
    scored = draw(st.integers(0, total))
    passed = draw(st.integers(0, scored))
    counts = {"scored": scored}
    rest = total - scored
    for status in NON_SCORED[:-1]:
        counts[status] = draw(st.integers(0, rest))
        rest -= counts[status]
    counts[NON_SCORED[-1]] = rest
    k = draw(st.integers(0, scored - passed))
    return counts, passed, k


def _relabel(counts: dict[str, int], k: int) -> dict[str, int]:
    after = dict(counts)
    after["scored"] -= k
    after["infra_error"] += k
    return after


@settings(max_examples=500)
@given(runs_with_relabelling())
def test_relabelling_failures_never_buys_a_certificate(case: tuple[dict[str, int], int, int]):
    """Relabelling failed scored items as infrastructure errors leaves the worst case unchanged,
    so a not-certified run can never become certified (format v1 §5 rule 3's stated purpose)."""
    counts, passed, k = case
    before = grade_counts(counts, passed, DEMO_M)
    after = grade_counts(_relabel(counts, k), passed, DEMO_M)
    assert after.summary["worst_case_pass_rate"] == before.summary["worst_case_pass_rate"]
    if before.verdict == "not-certified":
        assert after.verdict != "certified"
        # While enough results stay scored, rule 2 cannot apply and the verdict holds.
        if F(after.summary["scored"], after.summary["total"]) >= F(DEMO["certify"]["min_scored_fraction"]):
            assert after.verdict == "not-certified"


def test_relabelling_can_reach_incomplete_the_spec_gloss_overstates():
    """Format v1 §5 glosses rule 1 as "relabelling failures as infrastructure errors cannot turn a
    failure into incomplete". The rules themselves do not quite deliver it (FORMAT.md, reading
    17): relabelling raises the best case, here from 50 % (C) to 61 % (B), and with 89 of 100
    results scored rule 2 then says incomplete. This project follows the rules as written; the
    next test pins down what they do guarantee."""
    before = grade_counts({"scored": 100}, 50, DEMO_M)
    assert (before.best_case_grade, before.verdict) == ("C", "not-certified")
    after = grade_counts({"scored": 89, "infra_error": 11}, 50, DEMO_M)
    assert (after.best_case_grade, after.verdict) == ("B", "incomplete")


@settings(max_examples=500)
@example(case=({"scored": 100, "infra_error": 0, "not_run": 0, "missing_label": 0, "excluded": 0}, 50, 11))
@example(case=({"scored": 90, "infra_error": 10, "not_run": 0, "missing_label": 0, "excluded": 0}, 50, 1))
@given(runs_with_relabelling())
def test_relabelling_reaches_incomplete_only_by_showing_too_few_scored(case: tuple[dict[str, int], int, int]):
    """What the rules guarantee: relabelling failures never turns not-certified into certified,
    and into incomplete only when the relabelled run has fewer than min_scored_fraction of its
    results scored, which its certificate shows, and which earns no certificate."""
    counts, passed, k = case
    if grade_counts(counts, passed, DEMO_M).verdict != "not-certified":
        return
    after = grade_counts(_relabel(counts, k), passed, DEMO_M)
    assert after.verdict != "certified"
    if after.verdict == "incomplete":
        assert F(after.summary["scored"], after.summary["total"]) < F(DEMO["certify"]["min_scored_fraction"])


IDS = ["i1", "i2", "i3", "x9"]
BULLETS = st.one_of(
    st.builds(
        lambda t, r: {"text": t, "evidence_refs": r}, st.text(max_size=5), st.lists(st.sampled_from(IDS), max_size=3)
    ),
    st.builds(lambda r: {"text": "t", "evidence_refs": r, "extra": 1}, st.lists(st.sampled_from(IDS), max_size=2)),
    st.builds(lambda t: {"text": t, "evidence_refs": ["i1"]}, st.one_of(st.none(), st.integers(), st.booleans())),
    st.sampled_from(["bare", None, 3, [], {}, ["i1"], {"text": "t"}]),
)


@settings(max_examples=300)
@given(
    st.one_of(st.none(), st.lists(BULLETS, max_size=8)),
    bands(),
    PROPOSALS,
)
def test_dropping_a_bullet_never_changes_the_score(
    rationale: list[Any] | None, band: tuple[int, int], proposal: str | None
):
    """The score and its rule come from the proposal and the band only; a bullet affects only
    what is kept. Removing one bullet keeps the others' order and lowers kept by at most 1."""
    scored_ids = {"i1", "i2", "i3"}
    decision = band_score(proposal, band)
    kept, dropped = keep_bullets(rationale, scored_ids)
    assert len(kept) + dropped == (len(rationale) if rationale is not None else 1)
    for i in range(len(rationale or [])):
        fewer = rationale[:i] + rationale[i + 1 :]  # type: ignore[index]
        kept2, dropped2 = keep_bullets(fewer, scored_ids)
        assert band_score(proposal, band) == decision
        assert 0 <= len(kept) - len(kept2) <= 1
        assert len(kept2) + dropped2 == len(fewer)
        it = iter(kept)
        assert all(any(b is k for k in it) for b in kept2)  # kept2 is a subsequence of kept


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=4))


@settings(max_examples=500)
@given(
    st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=3)),
    st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=3)),
)
def test_same_is_equality_of_canonical_bytes(a: Any, b: Any):
    """same() takes a shortcut for scalars; it must still mean equal canonical bytes (format v1 §1),
    so 1 is not true and "1" is not 1."""
    from generator.verifier import canonical_bytes, same

    assert same(a, b) == (canonical_bytes(a) == canonical_bytes(b))
    assert same(a, a)


@pytest.mark.parametrize("value", ["1.0", 1, None, ["1.0", "1"]])
def test_a_tier_that_is_not_an_object_is_refused_not_a_crash(value: Any) -> None:
    """Found by the fuzz corpus: a tier that was a string passed the shape check and made
    parse_methodology index into a string."""
    p = copy.deepcopy(DEMO)
    p["tiers"]["high"] = value
    assert [(x.message, x.where) for x in check_methodology(p)] == [("a tier is an object", "tiers.high")]
    with pytest.raises(FormatError, match=r"a tier is an object at tiers\.high"):
        parse_methodology(p)
