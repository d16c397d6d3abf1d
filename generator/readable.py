"""Numbers and sentences for people who read a certificate once: rounded for reading (the exact
values stay on the page, one link away), intervals said in words, a failed run called a result.

Rounding here is for display only and never feeds a decision: every verdict was reached, and
rechecked, on exact values before a page is written.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Decimal


def rounded(text: str, places: int, rounding: str = ROUND_HALF_UP) -> str:
    """A decimal string rounded to `places` decimals, half-up by default as format v1 §1 rounds (a
    reader who rounds "55.55" by hand must get the same "55.6")."""
    q = Decimal(1).scaleb(-places)
    return str(Decimal(text).quantize(q, rounding=rounding))


def percent(text: str, places: int = 1, rounding: str = ROUND_DOWN) -> str:
    """A pass rate ("55.5556") as a reader wants it: "55.5 %"; whole numbers lose the ".0".

    Cut down, never up: a grade needs a pass rate of *at least* its cut-off, and 54.95 % shown as
    "55 %" beside grade C would read as a wrong grade."""
    r = rounded(text, places, rounding)
    if "." in r:
        r = r.rstrip("0").rstrip(".")
    return f"{r} %"


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
