"""The mirror's record (memory/mirror_record.py): what save_record writes, load_record reads
back; a record read in C says what reading it line by line says, and a damaged one is not used,
naming its line."""

from __future__ import annotations

import random
from pathlib import Path

from generator.verifier.core.folder import known_value
from generator.verifier.memory import mirror_record
from generator.verifier.memory.mirror_record import RECORD_HEADER, load_record, save_record

SHA = "0123456789abcdef" * 4


def _private(tmp_path: Path) -> tuple[Path, Path]:
    site, state = tmp_path / "site", tmp_path / "state"
    site.mkdir(mode=0o700)
    state.mkdir(mode=0o700)
    tmp_path.chmod(0o700)
    return site, state / "mirrors" / "record.txt"


def test_a_record_saved_is_read_back_as_it_was(tmp_path: Path) -> None:
    site, record = _private(tmp_path)
    files = {
        "index.html": known_value(SHA, (10, 1_700_000_000_000_000_000, 1_700_000_000_000_000_001, 42)),
        "caf\u00e9/a b.json": known_value("ab" * 32, (0, -5, 7, 2**64 - 1)),
        "z": known_value("cd" * 32, (1, 2, 3, 4)),
    }
    assert None not in files.values()
    save_record(record, "https://example.org/site", files)  # type: ignore[arg-type]
    assert load_record(record, site) == (files, None)
    assert record.read_text().splitlines()[2:] == [
        f"{'ab' * 32} 0 -5 7 {2**64 - 1} caf\u00e9/a b.json",
        f"{SHA} 10 1700000000000000000 1700000000000000001 42 index.html",
        f"{'cd' * 32} 1 2 3 4 z",
    ]


def _draw_body(draw: random.Random) -> str:
    lines = []
    for _ in range(draw.randint(0, 5)):
        sha = SHA if draw.random() > 0.05 else draw.choice([SHA.upper(), SHA[:-1], ""])
        numbers = [str(draw.choice([0, 1, 42, -3, 2**63 - 1])) for _ in range(4)]
        if draw.random() < 0.05:
            numbers[draw.randrange(4)] = draw.choice(["+5", "1_0", "x", "", "\u0665", str(2**63), str(2**64)])
        good = [f"p{draw.randrange(50)}", f"d/{draw.randrange(50)} x.json", f"\u00e9/{draw.randrange(50)}"]
        path = draw.choice(good if draw.random() > 0.05 else ["", "/a", "a/../b", "a\\b", "a\rb", "a/"])
        lines.append(" ".join([sha, *numbers, path]))
    return "".join(line + "\n" for line in lines)


def test_the_record_read_in_c_agrees_with_reading_it_line_by_line() -> None:
    draw = random.Random(20261206)
    plain_count = 0
    for _ in range(20_000):
        body = _draw_body(draw)
        try:
            want: dict[str, bytes] | None = mirror_record._parse_by_line(body)
        except ValueError:
            want = None
        got = mirror_record._parse_plain(body)
        if got is not None:
            plain_count += 1
            assert got == want, repr(body)
        # What it leaves to the line-by-line reading, that reading decides: the record as a whole.
        try:
            whole: dict[str, bytes] | None = mirror_record._parse(f"{RECORD_HEADER}\nurl\n{body}")
        except ValueError:
            whole = None
        assert whole == want, repr(body)
    assert plain_count > 5_000


def test_a_damaged_record_is_not_used_and_its_line_is_named(tmp_path: Path) -> None:
    site, record = _private(tmp_path)
    record.parent.mkdir(mode=0o700)
    record.write_text(f"{RECORD_HEADER}\nurl\n{SHA} 1 2 3 4 a\n{SHA} 1 2 3 4 ../b\n")
    record.chmod(0o600)
    files, why = load_record(record, site)
    assert files == {}
    assert why is not None and "line 4 is malformed" in why
