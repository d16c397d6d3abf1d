"""generator/verifier/tlog/witnessing.py: the rule the monitor and verify.py share for a cosignature's time (one
from the future beyond the clock skew, one older than the maximum age) and the strict reading of a maximum age."""

from __future__ import annotations

import pytest

from generator.verifier import COSIGNATURE_CLOCK_SKEW, FormatError, cosignature_age_problems, parse_max_age

NOW = 1_800_000_000  # 2027-01-15T08:00:00Z


def test_a_cosignature_within_the_skew_and_the_age_passes() -> None:
    assert COSIGNATURE_CLOCK_SKEW == 60
    times = {"w1": NOW, "w2": NOW + 60, "w3": NOW - 3600, "w4": 0}
    assert cosignature_age_problems(times, NOW, None) == []
    assert cosignature_age_problems({"w1": NOW - 3600}, NOW, 3600) == []
    assert cosignature_age_problems({}, NOW, 1) == []


def test_one_from_the_future_beyond_the_skew_is_named_with_both_times() -> None:
    assert cosignature_age_problems({"w1": NOW + 61}, NOW, None) == [
        "the cosignature by w1 is dated 2027-01-15T08:01:01Z (timestamp 1800000061), 1m 1s in the future of this "
        "clock's 2027-01-15T08:00:00Z (timestamp 1800000000); expected at most 60s ahead"
    ]
    # Far beyond what a date can say: the timestamp alone.
    [far] = cosignature_age_problems({"w1": 2**63 - 1}, NOW, None)
    assert far.startswith("the cosignature by w1 is dated timestamp 9223372036854775807, ")


def test_one_older_than_the_maximum_age_is_named_and_any_age_will_do_without_one() -> None:
    assert cosignature_age_problems({"w2": NOW - 3 * 86400 - 7}, NOW, 2 * 86400) == [
        "the cosignature by w2 is dated 2027-01-12T07:59:53Z (timestamp 1799740793), 3d 7s before this clock's "
        "2027-01-15T08:00:00Z (timestamp 1800000000); expected at most 2d old"
    ]
    assert cosignature_age_problems({"w2": NOW - 3601}, NOW, 3600) != []
    assert cosignature_age_problems({"w2": 0}, NOW, None) == []


def test_problems_come_in_the_order_of_the_names_not_of_the_dict() -> None:
    problems = cosignature_age_problems({"zz": NOW + 999, "aa": NOW - 999, "mm": NOW}, NOW, 10)
    assert [p.split(" ")[3] for p in problems] == ["aa", "zz"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1), ("3600s", 3600), ("90m", 5400), ("36h", 129600), ("7d", 604800), ("9999999999d", 9999999999 * 86400)],
)
def test_a_maximum_age_is_a_whole_number_and_its_unit(text: str, seconds: int) -> None:
    assert parse_max_age(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "36", "h", "0s", "07d", "1.5h", "-1h", "+1h", " 1h", "1h ", "1 h", "1H", "1w", "1d12h", "1e3s", "١h"]
)
def test_anything_else_is_refused_with_what_was_expected(text: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_max_age(text)
    assert str(caught.value) == (
        f"{text!r} is not a duration; expected a whole number then s, m, h or d, e.g. 3600s, 36h or 7d"
    )
