"""The mirror's record (memory/mirror_record.py): what save_record writes (version 2),
load_record reads back; a damaged one is not used, saying why; a record of version 1 is still
read, in C as line by line, naming the line that is not well formed."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from generator.verifier.core.folder import known_value
from generator.verifier.memory import mirror_record
from generator.verifier.memory.mirror_record import RECORD_HEADER, RECORD_HEADER_V1, load_record, save_record
from tests.support.mirrors import private_site_and_state

SHA = "0123456789abcdef" * 4


def test_a_record_saved_is_read_back_as_it_was(tmp_path: Path) -> None:
    site, record = private_site_and_state(tmp_path, "record.txt")
    files = {
        "index.html": known_value(SHA, (10, 1_700_000_000_000_000_000, 1_700_000_000_000_000_001, 42)),
        "caf\u00e9/a b.json": known_value("ab" * 32, (0, -5, 7, 2**64 - 1)),
        "z": known_value("cd" * 32, (1, 2, 3, 4)),
    }
    assert None not in files.values()
    save_record(record, "https://example.org/site", files)  # type: ignore[arg-type]
    assert load_record(record, site) == (files, None)
    data = record.read_bytes()
    head, url, counts, body = data.split(b"\n", 3)
    assert (head.decode(), url) == (RECORD_HEADER, b"https://example.org/site")
    assert counts == f"3 {hashlib.sha256(body).hexdigest()}".encode()
    # The paths in byte order, then their values in the same order.
    names = ["caf\u00e9/a b.json", "index.html", "z"]
    assert body == "".join(n + "\n" for n in names).encode() + b"".join(files[n] for n in names)  # type: ignore[misc]


def test_an_empty_record_is_read_back_empty(tmp_path: Path) -> None:
    site, record = private_site_and_state(tmp_path, "record.txt")
    save_record(record, "u", {})
    assert load_record(record, site) == ({}, None)


def test_a_record_of_version_1_is_read_and_written_again_as_version_2(tmp_path: Path) -> None:
    site, record = private_site_and_state(tmp_path, "record.txt")
    record.parent.mkdir(mode=0o700)
    record.write_text(f"{RECORD_HEADER_V1}\nurl\n{SHA} 1 2 3 4 a\n{'ab' * 32} 5 6 7 8 b/c\n")
    record.chmod(0o600)
    files, why = load_record(record, site)
    assert why is None
    assert files == {"a": known_value(SHA, (1, 2, 3, 4)), "b/c": known_value("ab" * 32, (5, 6, 7, 8))}
    save_record(record, "url", files)
    assert record.read_bytes().startswith(RECORD_HEADER.encode() + b"\n")
    assert load_record(record, site) == (files, None)


def test_a_damaged_record_of_version_2_is_not_used_and_says_why(tmp_path: Path) -> None:
    site, record = private_site_and_state(tmp_path, "record.txt")
    files = {f"d/{n}.json": known_value(SHA, (n, 2, 3, 4)) for n in range(5)}
    save_record(record, "url", files)  # type: ignore[arg-type]
    good = record.read_bytes()
    head, url, _counts, body = good.split(b"\n", 3)

    def counted(count: int, rest: bytes) -> bytes:
        return b"\n".join([head, url, f"{count} {hashlib.sha256(rest).hexdigest()}".encode(), rest])

    damaged = {
        "a byte changed": good[:-1] + bytes([good[-1] ^ 1]),
        "cut short": good[:-64],
        "no count": b"\n".join([head, url, body]),
        "a count too high": counted(6, body),
        "a count too low": counted(4, body),
        "a path twice": counted(2, b"a\na\n" + body[-128:]),
        "not UTF-8": counted(1, b"\xff\n" + body[-64:]),
        "another version": good.replace(b"record v2", b"record v3", 1),
    }
    for what, data in damaged.items():
        record.write_bytes(data)
        got, why = load_record(record, site)
        assert got == {}, what
        assert why is not None and "the mirror's record is not used" in why, what
    record.write_bytes(good)
    assert load_record(record, site) == (files, None)


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
            whole: dict[str, bytes] | None = mirror_record._parse(f"{RECORD_HEADER_V1}\nurl\n{body}")
        except ValueError:
            whole = None
        assert whole == want, repr(body)
    assert plain_count > 5_000


def test_a_damaged_record_of_version_1_is_not_used_and_its_line_is_named(tmp_path: Path) -> None:
    site, record = private_site_and_state(tmp_path, "record.txt")
    record.parent.mkdir(mode=0o700)
    record.write_text(f"{RECORD_HEADER_V1}\nurl\n{SHA} 1 2 3 4 a\n{SHA} 1 2 3 4 ../b\n")
    record.chmod(0o600)
    files, why = load_record(record, site)
    assert files == {}
    assert why is not None and "line 4 is malformed" in why
