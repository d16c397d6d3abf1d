"""A checksum list read in C (formats.plain_sums_rows) must say exactly what reading it line by
line says (format v1 §7): every line `<64 hex>  <path>` ending with a newline, each path safe,
in strictly increasing byte order; anything else is left to the line-by-line reading, which
names the line. Held to the rule spelt out here, on many lists drawn with a fixed seed."""

from __future__ import annotations

import random
import re

from generator.verifier.core.formats import plain_sums_rows
from generator.verifier.core.report import Report
from generator.verifier.site.release import parse_sums

_LINE = re.compile(r"([0-9a-f]{64})  (.+)")


def _by_the_rule(text: str) -> list[tuple[str, str]] | None:
    if not text.endswith("\n"):
        return None
    rows = []
    for line in text[:-1].split("\n"):
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        path = m.group(2)
        segments = path.split("/")
        if any(ord(c) < 0x20 or c == "\\" for c in path) or any(p in ("", ".", "..") for p in segments):
            return None
        if rows and path.encode() <= rows[-1][1].encode():
            return None
        rows.append((m.group(1), path))
    return rows


def _draw_list(draw: random.Random) -> str:
    sha = "0123456789abcdef" * 4
    paths = ["a", "b/c", "b/d", "caf\u00e9", "z", "\u00e9t\u00e9", "\U0001f600", "a b", ".x", "..."]
    bad = ["", "/a", "a//b", "./a", "a/..", "a\\b", "a\rb", "a\x00", "a/"]
    lines = []
    for _ in range(draw.randint(0, 6)):
        path = draw.choice(bad if draw.random() < 0.05 else paths)
        digest = sha if draw.random() > 0.03 else draw.choice([sha.upper(), sha[:-1], sha + "0", ""])
        spaces = "  " if draw.random() > 0.03 else draw.choice([" ", "   ", "\t"])
        lines.append(f"{digest}{spaces}{path}")
    if draw.random() < 0.7:
        lines.sort(key=lambda line: line[66:].encode())
    text = "\n".join(lines)
    return text + "\n" if lines and draw.random() < 0.9 else text


def test_the_list_read_in_c_agrees_with_the_rule_line_by_line() -> None:
    draw = random.Random(20261206)
    agreed = 0
    for _ in range(30_000):
        text = _draw_list(draw)
        want = _by_the_rule(text)
        got = plain_sums_rows(text)
        # An empty list is left to the line-by-line reading (which reports it), as is any list
        # the rule refuses.
        assert got == (want or None), repr(text)
        agreed += got is not None
    assert agreed > 5_000  # the draw reaches both kinds of list


def test_a_list_that_is_not_plain_is_still_read_line_by_line_and_named() -> None:
    sha = "ab" * 32
    text = f"{sha}  b\n{sha}  a\nnot a line\n".encode()
    report = Report("site")
    rows = parse_sums(report, "SHA256SUMS", text)
    assert [r[2] for r in rows] == ["b", "a"]
    assert [(p.where, p.message) for p in report.failures] == [
        ("line 2", "lines not sorted by path bytes (or a path listed twice)"),
        ("line 3", "malformed line"),
    ]


def test_a_hostile_last_line_without_a_newline_is_refused_in_linear_time() -> None:
    """A last line of many `<64 hex>  ` blocks and no newline: a search that tried it as a row
    from every block would read to its end and back each time (hours at a few MB); it is left
    to the line-by-line reading at once, which names it. An alarm, far above what linear takes,
    stands for "hours"."""
    import signal

    sha = "ab" * 32
    text = f"{sha}  a\n" + f"{sha}  " * 60_000  # 4 MB
    before = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("quadratic")))
    signal.alarm(60)
    try:
        assert plain_sums_rows(text) is None
        report = Report("site")
        rows = parse_sums(report, "SHA256SUMS", text.encode())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert rows is not None and rows[0][2] == "a" and len(rows) == 2
    assert [p.message for p in report.failures][-1] == "last line does not end with a newline"


def test_a_path_holding_a_newline_is_not_safe_among_others() -> None:
    from generator.verifier.core.formats import all_safe_paths

    assert all_safe_paths(["a", "b/c"])
    assert not all_safe_paths(["a", "b\nc"])
    assert not all_safe_paths(["a", ""])
