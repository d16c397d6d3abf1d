"""Judge-agreement statistics (generator/verifier/rules/agreement_statistics.py): raw agreement, Cohen's kappa,
ordinal Krippendorff's alpha, the per-dimension report and the published decimals.

Kappa and alpha are checked against the two reference implementations the definitions name,
scikit-learn's cohen_kappa_score and the krippendorff package, on random label sets; and
against small examples worked out by hand in the comments, so that a shared misreading of the
references would still be caught.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score  # type: ignore[import-untyped]

from generator.verifier import (
    AgreementError,
    agreement_decimal,
    agreement_report,
    cohen_kappa,
    krippendorff_alpha_ordinal,
    raw_agreement,
)

SCALE = [1, 2, 3, 4, 5]
PROPERTY = settings(max_examples=400, deadline=None)
# About a third of the random cases are undefined (compared only as None against nan): more of
# them, so that well over 300 are compared as numbers.
AGAINST_REFERENCE = settings(max_examples=700, deadline=None)


@st.composite
def scales(draw: st.DrawFn) -> list[int]:
    """2 to 7 strictly increasing integers, sometimes with gaps: both references weigh by
    position on the scale, never by the value, and a gap shows whether that holds here."""
    k = draw(st.integers(2, 7))
    return sorted(draw(st.sets(st.integers(-5, 12), min_size=k, max_size=k)))


def part_of(scale: list[int]) -> st.SearchStrategy[list[int]]:
    """The categories labels are drawn from: often a part of the scale, so that the degenerate
    cases (one category only, unused categories between used ones) come up."""
    return st.one_of(st.just(scale), st.lists(st.sampled_from(scale), min_size=1, max_size=len(scale), unique=True))


@st.composite
def paired_labels(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    scale = draw(scales())
    used = draw(part_of(scale))
    n = draw(st.integers(1, 40))
    first = draw(st.lists(st.sampled_from(used), min_size=n, max_size=n))
    second = draw(st.lists(st.sampled_from(used), min_size=n, max_size=n))
    return scale, first, second


@st.composite
def reliability_units(draw: st.DrawFn) -> tuple[list[int], list[list[int | None]]]:
    scale = draw(scales())
    used = draw(part_of(scale))
    raters = draw(st.integers(2, 6))
    # None for none, some or most of the labels: units without two labels must come up.
    missing = draw(st.sampled_from([0, 1, 3]))
    label = st.one_of(*[st.none()] * missing, st.sampled_from(used))
    units = draw(st.lists(st.lists(label, min_size=raters, max_size=raters), min_size=1, max_size=30))
    return scale, units


def sklearn_kappa(first: list[int], second: list[int], scale: list[int], weights: str | None) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the UndefinedMetricWarning of the degenerate cases
        return float(cohen_kappa_score(first, second, labels=scale, weights=weights))


def reference_alpha(units: list[list[int | None]], scale: list[int]) -> float:
    """krippendorff.alpha, nan where it raises or divides 0 by 0 (the statistic is undefined)."""
    data = np.array([[math.nan if v is None else float(v) for v in unit] for unit in units]).T  # raters × units
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=scale))
    except ValueError:
        return math.nan


# -- against the references


@AGAINST_REFERENCE
@given(paired_labels(), st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_equals_scikit_learn(case: tuple[list[int], list[int], list[int]], weights: Any) -> None:
    scale, first, second = case
    mine = cohen_kappa(first, second, scale, weights)
    reference = sklearn_kappa(first, second, scale, weights)
    # Undefined exactly when no disagreement was possible: every label the same category.
    assert (mine is None) == (len(set(first) | set(second)) == 1) == math.isnan(reference)
    if mine is not None:
        assert float(mine) == pytest.approx(reference, abs=1e-9)


@pytest.mark.slow
@AGAINST_REFERENCE
@given(reliability_units())
def test_alpha_equals_krippendorff(case: tuple[list[int], list[list[int | None]]]) -> None:
    scale, units = case
    mine = krippendorff_alpha_ordinal(units, scale)
    reference = reference_alpha(units, scale)
    pairable = [v for unit in units if sum(v is not None for v in unit) >= 2 for v in unit if v is not None]
    assert (mine is None) == (len(set(pairable)) <= 1) == math.isnan(reference)
    if mine is not None:
        assert float(mine) == pytest.approx(reference, abs=1e-9)


@PROPERTY
@given(reliability_units())
def test_alpha_does_not_depend_on_the_order_of_raters_or_units(case: tuple[list[int], list[list[int | None]]]) -> None:
    scale, units = case
    shuffled = [list(reversed(unit)) for unit in reversed(units)]
    assert krippendorff_alpha_ordinal(units, scale) == krippendorff_alpha_ordinal(shuffled, scale)


@PROPERTY
@given(paired_labels())
def test_raw_agreement_is_the_share_of_equal_pairs(case: tuple[list[int], list[int], list[int]]) -> None:
    scale, first, second = case
    result = raw_agreement(first, second, scale)
    assert result == Fraction(sum(a == b for a, b in zip(first, second, strict=True)), len(first))
    assert 0 <= result <= 1


# -- worked by hand


def test_kappa_by_hand() -> None:
    # Scale 1..3, positions 0..2. Pairs (1,1) (2,2) (3,2): O has 1 at (0,0), (1,1), (2,1).
    # Rows (first) r = [1,1,1], columns (second) c = [1,2,0], n = 3.
    # Linear: Σ w·O = |2-1| = 1. Σ w·r·c over c_j > 0: j=0: 1·1·1 + 1·1·2 = 3; j=1: 1·2·1 + 1·2·1 = 4;
    #   so Σ w·E = 7/3 and kappa = 1 - 1/(7/3) = 4/7.
    # Quadratic: Σ w·O = 1. j=0: 1·1·1 + 1·1·4 = 5; j=1: 2 + 2 = 4; Σ w·E = 9/3, kappa = 1 - 1/3 = 2/3.
    # Unweighted: p_o = 2/3, p_e = (1·1 + 1·2 + 1·0)/9 = 1/3, kappa = (2/3 - 1/3)/(2/3) = 1/2.
    first, second = [1, 2, 3], [1, 2, 2]
    assert cohen_kappa(first, second, [1, 2, 3], "linear") == Fraction(4, 7)
    assert cohen_kappa(first, second, [1, 2, 3], "quadratic") == Fraction(2, 3)
    assert cohen_kappa(first, second, [1, 2, 3]) == Fraction(1, 2)
    assert raw_agreement(first, second, [1, 2, 3]) == Fraction(2, 3)


def test_kappa_weighs_by_position_on_the_scale_not_by_value() -> None:
    # The scale [1, 3, 10] has positions 0, 1, 2: the same table as the example above.
    assert cohen_kappa([1, 3, 10], [1, 3, 3], [1, 3, 10], "linear") == Fraction(4, 7)
    # An unused category in between moves the positions: scale 1..4, pairs (1,1) (2,2) (4,2),
    # positions 0, 1, 3. Σ w·O = 2, n = 3; r = [1,1,0,1], c = [1,2,0,0].
    # j=0: r_1·1·1 + r_3·1·3 = 4; j=1: r_0·2·1 + r_3·2·2 = 6; Σ w·r·c = 10; kappa = 1 - 3·2/10 = 2/5.
    assert cohen_kappa([1, 2, 4], [1, 2, 2], [1, 2, 3, 4], "linear") == Fraction(2, 5)


def test_perfect_and_opposite_kappa() -> None:
    assert cohen_kappa([1, 2, 3], [1, 2, 3], [1, 2, 3], "quadratic") == 1
    # Pairs (1,2) (2,1): O off-diagonal only, r = c = [1,1]; Σ w·O = 2, Σ w·r·c = 2, n = 2: 1 - 4/2 = -1.
    assert cohen_kappa([1, 2], [2, 1], [1, 2]) == -1


def test_kappa_is_undefined_when_no_disagreement_was_possible() -> None:
    assert cohen_kappa([2, 2, 2], [2, 2, 2], SCALE, "linear") is None
    assert cohen_kappa([1], [1], [1]) is None  # a one-category scale
    assert raw_agreement([2, 2, 2], [2, 2, 2], SCALE) == 1


def test_alpha_by_hand() -> None:
    # Units (rater labels) [1,1], [2,3], [3,3] on scale 1..3.
    # Coincidences: unit 1 gives o_11 = 2·1/(2-1) = 2; unit 2 o_23 = o_32 = 1; unit 3 o_33 = 2.
    # Marginals n_1 = 2, n_2 = 1, n_3 = 3, n = 6.
    # δ²_12 = (2+1 - 3/2)² = 9/4, δ²_23 = (1+3 - 2)² = 4, δ²_13 = (2+1+3 - 5/2)² = 49/4.
    # Σ o·δ² = 2·4 = 8; Σ n_c·n_k·δ² (c ≠ k) = 2·(2·1·9/4 + 2·3·49/4 + 1·3·4) = 2·90 = 180.
    # alpha = 1 - (6-1)·8/180 = 1 - 2/9 = 7/9.
    assert krippendorff_alpha_ordinal([[1, 1], [2, 3], [3, 3]], [1, 2, 3]) == Fraction(7, 9)


def test_alpha_with_missing_values_by_hand() -> None:
    # Units [1,2,2], [1,1,-], [3,-,-] on scale 1..4; the last has one label and is not pairable.
    # Unit 1 (m = 3): o_12 = o_21 = 1·2/2 = 1, o_22 = (2·2 - 2)/2 = 1, o_11 = 0. Unit 2: o_11 = 2.
    # n_1 = 3, n_2 = 2, n_3 = n_4 = 0, n = 5 (the lone 3 is not counted).
    # δ²_12 = (3+2 - 5/2)² = 25/4. Σ o·δ² = 2·25/4 = 25/2; Σ n·n·δ² = 2·3·2·25/4 = 75.
    # alpha = 1 - 4·(25/2)/75 = 1/3.
    units: list[list[int | None]] = [[1, 2, 2], [1, 1, None], [3, None, None]]
    assert krippendorff_alpha_ordinal(units, [1, 2, 3, 4]) == Fraction(1, 3)
    assert float(Fraction(1, 3)) == pytest.approx(reference_alpha(units, [1, 2, 3, 4]), abs=1e-12)


def test_alpha_is_undefined_without_pairs_or_without_variation() -> None:
    assert krippendorff_alpha_ordinal([[1, None], [None, 2]], SCALE) is None  # no unit has two labels
    assert krippendorff_alpha_ordinal([[3, 3], [3, None], [5, None]], SCALE) is None  # pairable all 3
    assert krippendorff_alpha_ordinal([[1, 1]], [1]) is None


def test_refused_inputs_name_what_is_wrong() -> None:
    with pytest.raises(AgreementError, match=r"pair 1 \[2, 7\]: label 7 is not one of the categories \[1, 2, 3"):
        cohen_kappa([1, 2], [1, 7], SCALE)
    with pytest.raises(AgreementError, match="label true is not one of"):
        raw_agreement([True], [1], SCALE)
    with pytest.raises(AgreementError, match="no paired labels"):
        raw_agreement([], [], SCALE)
    with pytest.raises(AgreementError, match="must be paired"):
        cohen_kappa([1, 2], [1], SCALE)
    with pytest.raises(AgreementError, match="not strictly increasing at category 2"):
        cohen_kappa([1], [1], [1, 3, 2])
    with pytest.raises(AgreementError, match="scale of categories is empty"):
        krippendorff_alpha_ordinal([[1, 1]], [])
    with pytest.raises(AgreementError, match="kappa weights"):
        cohen_kappa([1], [1], SCALE, "cubic")  # type: ignore[arg-type]
    with pytest.raises(AgreementError, match="unit 1 rater 0: label 0 is not one of"):
        krippendorff_alpha_ordinal([[1, 1], [0, 1]], SCALE)
    with pytest.raises(AgreementError, match="unit 1 has 3 raters' labels, unit 0 has 2"):
        krippendorff_alpha_ordinal([[1, 1], [1, 1, 1]], SCALE)
    with pytest.raises(AgreementError, match="no units"):
        krippendorff_alpha_ordinal([], SCALE)
    assert issubclass(AgreementError, ValueError)


# -- the report


HUMANS = [
    ("alice", "i1", "clarity", 3),
    ("bob", "i1", "clarity", 4),
    ("alice", "i2", "clarity", 4),
    ("bob", "i3", "clarity", 1),
    ("carol", "i9", "clarity", 2),  # the judge did not label i9
    ("alice", "i1", "accuracy", 5),
]
JUDGE = {("i1", "clarity"): 3, ("i2", "clarity"): 4, ("i3", "clarity"): 2, ("i4", "clarity"): 5}
JUDGE_MORE = {**JUDGE, ("i1", "accuracy"): 5, ("i5", "style"): 2}


def test_the_report_per_dimension() -> None:
    report = agreement_report(HUMANS, JUDGE_MORE, SCALE)
    assert list(report) == ["accuracy", "clarity", "style"]
    clarity = report["clarity"]
    # Sample i1, i2, i3 (i4 has no human label, i9 no judge label). Pairs (judge, human), items then
    # labellers in order: (3,3) alice i1, (3,4) bob i1, (4,4) alice i2, (2,1) bob i3.
    assert clarity["sample_size"] == 3
    assert clarity["pairs"] == 4
    assert clarity["human_labels_without_judge"] == 1
    assert clarity["raw_agreement"] == Fraction(1, 2)
    # Linear, positions judge [2,2,3,1], human [2,3,3,0]: Σ w·O = 0+1+0+1 = 2, n = 4.
    # r (judge) = {1:1, 2:2, 3:1}, c (human) = {0:1, 2:1, 3:2}.
    # i=1: 1·1·1 + 1·1·1 + 1·2·2 = 6; i=2: 2·1·2 + 0 + 2·2·1 = 8; i=3: 1·1·3 + 1·1·1 + 0 = 4; Σ = 18.
    # kappa = 1 - 4·2/18 = 5/9.
    assert clarity["kappa_linear"] == Fraction(5, 9)
    assert clarity["kappa_quadratic"] == cohen_kappa([3, 3, 4, 2], [3, 4, 4, 1], SCALE, "quadratic")
    units: list[list[int | None]] = [[3, 3, 4], [4, 4, None], [2, None, 1]]  # judge, alice, bob
    assert clarity["alpha_ordinal"] == krippendorff_alpha_ordinal(units, SCALE)
    assert float(clarity["alpha_ordinal"] or 0) == pytest.approx(reference_alpha(units, SCALE), abs=1e-9)
    assert clarity["disagreements"] == [("i1", "bob", 4, 3), ("i3", "bob", 1, 2)]

    accuracy = report["accuracy"]
    assert (accuracy["sample_size"], accuracy["pairs"], accuracy["raw_agreement"]) == (1, 1, Fraction(1))
    assert accuracy["kappa_linear"] is None and accuracy["alpha_ordinal"] is None  # one category only
    assert accuracy["disagreements"] == []

    assert report["style"] == {
        "sample_size": 0,
        "pairs": 0,
        "human_labels_without_judge": 0,
        "raw_agreement": None,
        "kappa_linear": None,
        "kappa_quadratic": None,
        "alpha_ordinal": None,
        "disagreements": [],
    }


def test_the_report_does_not_depend_on_the_order_of_records() -> None:
    forward = agreement_report(HUMANS, JUDGE_MORE, SCALE)
    backward = agreement_report(list(reversed(HUMANS)), dict(reversed(list(JUDGE_MORE.items()))), SCALE)
    assert forward == backward


def test_disagreements_are_sorted_by_item_then_labeller() -> None:
    humans = [("zoe", "b", "d", 1), ("amy", "b", "d", 2), ("kim", "a", "d", 3), ("lee", "a", "d", 1)]
    row = agreement_report(humans, {("b", "d"): 3, ("a", "d"): 1}, SCALE)["d"]
    assert row["disagreements"] == [("a", "kim", 3, 1), ("b", "amy", 2, 3), ("b", "zoe", 1, 3)]
    assert (row["sample_size"], row["pairs"], row["raw_agreement"]) == (2, 4, Fraction(1, 4))


def test_the_report_refuses_bad_records_by_name() -> None:
    bad = [*HUMANS[:2], ("bob", "i2", "clarity", 6)]
    with pytest.raises(AgreementError, match=r'human label record 2 \["bob", "i2", "clarity", 6\]: label 6 is not'):
        agreement_report(bad, JUDGE, SCALE)
    twice = [*HUMANS, ("alice", "i2", "clarity", 3)]
    with pytest.raises(
        AgreementError,
        match=r'human label record 6 \["alice", "i2", "clarity", 3\]: labeller "alice" already labelled item "i2" '
        r'on dimension "clarity"',
    ):
        agreement_report(twice, JUDGE, SCALE)
    with pytest.raises(AgreementError, match=r'judge label \["i3", "clarity"\]: label 0 is not one of'):
        agreement_report(HUMANS, {**JUDGE, ("i3", "clarity"): 0}, SCALE)
    with pytest.raises(AgreementError, match="no human labels"):
        agreement_report([], JUDGE, SCALE)
    unjudged = agreement_report(HUMANS, {}, SCALE)
    assert all(row["sample_size"] == 0 and row["kappa_linear"] is None for row in unjudged.values())
    with pytest.raises(AgreementError, match=r"human label record 0 \[\"alice\", \"i1\"\]: not \(labeller"):
        agreement_report([("alice", "i1")], JUDGE, SCALE)  # type: ignore[list-item]
    with pytest.raises(AgreementError, match="labeller, item and dimension must be strings"):
        agreement_report([("alice", 1, "clarity", 3)], JUDGE, SCALE)  # type: ignore[list-item]


# -- the published decimals


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(1, 3), "0.333333"),
        (Fraction(2, 3), "0.666667"),
        (Fraction(-1, 3), "-0.333333"),
        (Fraction(-2, 3), "-0.666667"),
        (Fraction(1234565, 10**7), "0.123457"),  # a 5 at the 7th digit goes away from zero
        (Fraction(-1234565, 10**7), "-0.123457"),
        (Fraction(12345649999, 10**11), "0.123456"),  # just under the half
        (Fraction(-12345649999, 10**11), "-0.123456"),
        (Fraction(5, 10**7), "0.000001"),
        (Fraction(-5, 10**7), "-0.000001"),
        (Fraction(-4999999, 10**13), "0.000000"),  # rounds to zero: no sign
        (Fraction(-1, 10**9), "0.000000"),
        (Fraction(0), "0.000000"),
        (Fraction(1), "1.000000"),
        (Fraction(-1), "-1.000000"),
        (Fraction(7, 9), "0.777778"),
        (Fraction(-9999995, 10**7), "-1.000000"),
        (Fraction(7, 2), "3.500000"),
        (None, None),
    ],
)
def test_agreement_decimal(value: Fraction | None, text: str | None) -> None:
    assert agreement_decimal(value) == text


def test_agreement_decimal_refuses_a_float() -> None:
    with pytest.raises(AgreementError, match="not an exact value"):
        agreement_decimal(0.5)  # type: ignore[arg-type]


@PROPERTY
@given(st.fractions(min_value=-2, max_value=2, max_denominator=10**9))
def test_agreement_decimal_is_within_half_a_unit(value: Fraction) -> None:
    text = agreement_decimal(value)
    assert text is not None and text != "-0.000000"
    assert abs(Fraction(text) - value) <= Fraction(1, 2 * 10**6)
    assert len(text.split(".")[1]) == 6
