"""Format v1 §1's patterns are ASCII: Python's `\\d` also matches Arabic-Indic and other digits, and
times are compared as strings, so a time written in them would sort apart from every other."""

from __future__ import annotations

import random
from types import ModuleType

import pytest


@pytest.mark.parametrize(
    "value",
    [
        "\u0662\u0660\u0662\u0666-01-05T09:00:00Z",  # Arabic-Indic digits
        "2026-01-05T0\uff19:00:00Z",  # a fullwidth nine
        "2026-01-05T09:00:0\u0969Z",  # a Devanagari three
        "2026-01-05T09:00:00Z\n",
    ],
)
def test_a_time_in_other_digits_is_refused(verifier: ModuleType, value: str) -> None:
    assert not verifier.is_time(value)


def test_an_ascii_time_is_accepted(verifier: ModuleType) -> None:
    assert verifier.is_time("2026-01-05T09:00:00Z")


@pytest.mark.parametrize(
    ("value", "safe"),
    [
        ("ledger/tile/0/000", True),
        ("certificates/run-1/caf\u00e9.json", True),
        ("a b/\x7f", True),  # DEL is not a control character of this rule; a space is none at all
        ("", False),
        ("/etc/passwd", False),
        ("a//b", False),
        ("a/./b", False),
        ("a/../b", False),
        ("a/", False),
        ("a\\b", False),
        ("a\x00b", False),
        ("a\nb", False),
        ("a\x1f", False),
        (["a"], False),
        (None, False),
    ],
)
def test_a_site_path_is_relative_plain_and_free_of_control_characters(
    verifier: ModuleType, value: object, safe: bool
) -> None:
    assert verifier.is_safe_path(value) is safe


def _safe_by_the_rule(value: object) -> bool:
    """The rule spelt out segment by segment, to hold the verifier's one-search form to."""
    if not isinstance(value, str) or not value or any(ord(c) < 0x20 or c == "\\" for c in value):
        return False
    return all(part not in ("", ".", "..") for part in value.split("/"))


def test_the_path_rule_agrees_with_the_rule_spelt_out_on_many_strings(verifier: ModuleType) -> None:
    # Every string of up to six pieces drawn from those the rule turns on, with a fixed seed.
    pieces = ["a", "/", ".", "..", "...", "\\", "\x00", "\x1f", "\n", "\u00e9", " ", "b.c", "\x7f"]
    draw = random.Random(20261206)
    for _ in range(50_000):
        value = "".join(draw.choice(pieces) for _ in range(draw.randint(0, 6)))
        assert verifier.is_safe_path(value) is _safe_by_the_rule(value), repr(value)
