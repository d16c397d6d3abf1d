"""Numbers and sentences for people who read a certificate once: rounded for reading (the exact
values stay on the page, one link away), intervals said in words, a failed run called a result.

Rounding here is for display only and never feeds a decision: every verdict was reached, and
rechecked, on exact values before a page is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from fractions import Fraction

from generator.verifier import round_half_up

_PLACES_WORDS = {2: "two", 3: "three", 4: "four"}


def rounded(text: str, places: int, rounding: str = ROUND_HALF_UP) -> str:
    """A decimal string rounded to `places` decimals, half-up by default as format v1 §1 rounds (a
    reader who rounds "55.55" by hand must get the same "55.6")."""
    q = Decimal(1).scaleb(-places)
    return str(Decimal(text).quantize(q, rounding=rounding))


def percent(text: str, places: int = 1, rounding: str = ROUND_DOWN) -> str:
    """A percentage ("55.5556") rounded as asked, cut down by default ("55.5 %"); whole numbers
    lose the ".0". The interval's ends use it, rounded outward; a headline pass rate is
    `rate_for_reading`'s, which rounds as a reader does unless that would cross a cut-off."""
    r = rounded(text, places, rounding)
    if "." in r:
        r = r.rstrip("0").rstrip(".")
    return f"{r} %"


def _shown(r: str) -> str:
    return f"{r.rstrip('0').rstrip('.') if '.' in r else r} %"


def rate_for_reading(rate: Fraction, cutoffs: Sequence[tuple[str, Fraction, str]]) -> tuple[str, str]:
    """A pass rate (the exact percentage) as a headline shows it, and a note to print beside it,
    empty unless needed: rounded half-up to one decimal, as a reader rounds ("55.6 %" for 5 of 9),
    unless that figure would lie on the other side of a grade's cut-off (`cutoffs`: grade,
    minimum pass rate, and that minimum as published) than the exact rate does, as 79.96 %
    would read "80 %" beside a cut-off of 80 %; then it is given with as many more decimals as
    keep it on its own side, and the note says why."""

    def crossed(shown: str) -> tuple[str, Fraction, str] | None:
        return next((c for c in cutoffs if (rate >= c[1]) != (Fraction(shown) >= c[1])), None)

    one = round_half_up(rate, 1)
    cut = crossed(one)
    if cut is None:
        return _shown(one), ""
    places = 2
    while crossed(round_half_up(rate, places)) is not None and places < 40:
        places += 1
    grade, minimum, text = cut
    side = "which it reaches" if rate >= minimum else "which it does not reach"
    note = (
        f"given to {_PLACES_WORDS.get(places, str(places))} decimals: rounded to one it would read {_shown(one)}, "
        f"the other side of grade {grade}'s cut-off of {text} %, {side}"
    )
    return f"{round_half_up(rate, places)} %", note


def interval_words(scored: int, low: str, high: str) -> str:
    """The 95 % Wilson interval as a sentence: what the range means for these many items. Its
    ends are rounded outward, so the range said in words always holds the exact one."""
    if scored == 0:
        return "With no scored item, nothing is known about the pass rate: it could be anything from 0 % to 100 %."
    items = "1 scored item" if scored == 1 else f"{scored} scored items"
    return (
        f"With {items}, the true pass rate could be anywhere between {percent(low, 0, ROUND_FLOOR)} and "
        f"{percent(high, 0, ROUND_CEILING)} (95 % Wilson interval)."
    )


def noun(verdict: str) -> str:
    """What the site calls the signed record of a decided run: only a certified run holds a
    certificate; calling a failed run's record a certificate reads as an endorsement."""
    return "certificate" if verdict == "certified" else "result"


def size(n: int) -> str:
    """A byte count for reading: exact below 1 KiB, else to one decimal in KiB, MiB or GiB."""
    if n < 1024:
        return f"{n} byte{'s' if n != 1 else ''}"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            tenths = (n * 10 + scale // 2) // scale  # half up, in integers: no float formatting
            return f"{tenths // 10}.{tenths % 10} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover
