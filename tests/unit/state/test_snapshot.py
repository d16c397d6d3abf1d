"""The replayed ledger remembered between commands: saved whole, bound to the bytes it was made
from, and never trusted when it no longer describes them (generator.state.ledger_cache)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_items
from generator.program.datadir import Paths
from generator.program.ledgerfile import replay_from, replay_ledger
from generator.state.ledger_cache import commits_path, snapshot_path, start_replay
from generator.verifier import FormatError, Ledger, load_snapshot, replace_atomically, snapshot_bytes
from generator.verifier.memory.ledger_snapshot import read_snapshot, snapshot_chunks
from tests.support.programs import item, write_items


def state(ledger: Ledger) -> dict[str, Any]:
    """Everything a replay leaves in a Ledger, the id index by its ids (its table is salted)."""
    out = dict(vars(ledger))
    ids = out.pop("_commit_ids")
    out["_commit_ids"] = [ids.key(n) for n in range(len(ids))]
    out["keys"] = vars(ledger.keys)
    for name in ("_commit_index", "_commit_gate", "_commit_time"):
        out[name] = list(out[name])
    return out


def from_scratch(paths: Paths) -> Ledger:
    ledger, problems = replay_ledger(paths, use_snapshot=False)
    assert problems == []
    return ledger


def test_a_snapshot_holds_exactly_the_replayed_state(demo_copy: Any) -> None:
    ledger = from_scratch(demo_copy.paths)
    assert ledger.commit_count and ledger.runs and ledger.certificates and len(ledger.keys.spans) > 1
    again, extra = load_snapshot(snapshot_bytes(ledger, {"any": ["json"]}))
    assert extra == {"any": ["json"]}
    assert state(again) == state(ledger)
    # The loaded id index answers lookups and takes new ids like the one it was made from.
    first = ledger.commit(next(iter(ledger.reveals)))
    assert first is not None and again.commit(first.id) == first
    assert again.commit("no-such-item") is None
    again._commit_ids.add("z-new")
    assert again.is_committed("z-new") and not ledger.is_committed("z-new")


def test_a_snapshot_is_written_in_pieces_and_read_a_section_at_a_time(demo_copy: Any, tmp_path: Path) -> None:
    """What the verifier's memory saves and loads at scale: the arrays written as views of the
    ledger's own (no joined copy), read back from the open file; and every way of damaging the
    file is refused, as from bytes."""
    ledger = from_scratch(demo_copy.paths)
    pieces = snapshot_chunks(ledger, {"any": ["json"]})
    assert any(isinstance(p, memoryview) and p.obj is ledger._commitments for p in pieces)
    path = tmp_path / "snapshot"
    replace_atomically(path, pieces)
    data = path.read_bytes()
    assert data == snapshot_bytes(ledger, {"any": ["json"]})
    with path.open("rb") as f:
        again, extra = read_snapshot(f, len(data))
    assert extra == {"any": ["json"]} and state(again) == state(ledger)
    body = data[:-32]
    length = int.from_bytes(body[32:40], "big")
    header = body[40 : 40 + length]
    damaged = {
        # A byte after the last section, its checksum redone.
        "bytes after its last section": body + b"x",
        # A header that is JSON of another shape, its checksum redone.
        "fields are malformed": body[:32] + (2).to_bytes(8, "big") + b"[]" + body[40 + length :],
        "cut short": body[:32] + (length + 10**9).to_bytes(8, "big") + body[40:],
    }
    # A header nested past the parser's depth: refused for its checksum when that does not hold
    # (nothing is parsed before it does), as malformed when it does.
    deep = body[:32] + (5000).to_bytes(8, "big") + b"[" * 5000
    damaged["fields are malformed (RecursionError"] = deep
    for words, bad in damaged.items():
        with pytest.raises(FormatError, match=re.escape(words)):
            load_snapshot(bad + hashlib.sha256(bad).digest())
    with pytest.raises(FormatError, match="checksum"):
        load_snapshot(deep + bytes(32))
    assert header.startswith(b"{")
    with pytest.raises(FormatError, match="checksum"):
        load_snapshot(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(FormatError, match="checksum"):
        load_snapshot(data[: len(data) // 2])


def test_commands_leave_a_snapshot_that_a_replay_from_scratch_agrees_with(make_program: Any) -> None:
    paths = make_program(secret_items=4, retired=1)
    assert snapshot_path(paths).is_file()
    retire_items(paths, ["b-0002"], "Rotation.", "2026-03-01T00:00:00Z")
    with paths.ledger_file.open("rb") as f:
        start = start_replay(paths, f)
        assert start.why_not is None and start.offset == paths.ledger_file.stat().st_size
    assert state(start.ledger) == state(from_scratch(paths))
    assert start.stream.root() == replay_from(paths, use_snapshot=False)[2].stream.root()
    assert [i for i, _ in start.latest] == list(range(max(0, start.ledger.size - 12), start.ledger.size))


def corrupt(paths: Paths, how: str, other: Path) -> str:
    """Damage the snapshot one way; the words its refusal must contain."""
    path = snapshot_path(paths)
    data = bytearray(path.read_bytes())
    if how == "flipped byte":
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
        return "checksum"
    if how == "torn":
        path.write_bytes(bytes(data[: len(data) // 3]))
        return "checksum"
    if how == "not a snapshot":
        path.write_bytes(b"{}\n")
        return "not a ledger snapshot"
    if how == "another program's":
        path.write_bytes(snapshot_path(Paths(other, other / "private")).read_bytes())
        commits_path(paths).write_bytes(commits_path(Paths(other, other / "private")).read_bytes())
        return "another ledger"
    if how == "longer than the ledger":
        lines = paths.ledger_file.read_bytes().splitlines(keepends=True)
        paths.ledger_file.write_bytes(b"".join(lines[:-1]))
        return "longer ledger"
    if how == "edited ledger":
        text = paths.ledger_file.read_bytes()
        paths.ledger_file.write_bytes(text.replace(b"Retired for test reason 1.", b"Retired for test reason 9."))
        return "another ledger"
    if how == "edited state, checksum redone":
        ledger, extra = load_snapshot(bytes(data))
        extra["root"] = hashlib.sha256(b"another tree").hexdigest()
        path.write_bytes(snapshot_bytes(ledger, extra))
        return "tree does not match"
    if how == "other rules":
        ledger, extra = load_snapshot(bytes(data))
        extra["rules"] = "0" * 64
        path.write_bytes(snapshot_bytes(ledger, extra))
        return "another version"
    raise AssertionError(how)


HOW = [
    "flipped byte",
    "torn",
    "not a snapshot",
    "another program's",
    "longer than the ledger",
    "edited ledger",
    "edited state, checksum redone",
    "other rules",
]


@pytest.mark.parametrize("how", HOW)
def test_a_damaged_or_foreign_snapshot_is_refused_and_rebuilt(make_program: Any, how: str) -> None:
    paths = make_program(secret_items=4, retired=2)
    other = make_program(name="other", secret_items=2, retired=1)
    words = corrupt(paths, how, other.data)
    with paths.ledger_file.open("rb") as f:
        start = start_replay(paths, f)
        assert start.why_not is not None and words in start.why_not
        assert start.offset == 0 and f.tell() == 0 and start.ledger.size == 0
    ledger, problems, _ = replay_from(paths)
    assert problems == []
    assert state(ledger) == state(from_scratch(paths))
    # The rebuilt snapshot is the state of today's ledger, and is used next time.
    with paths.ledger_file.open("rb") as f:
        again = start_replay(paths, f)
    assert again.why_not is None and state(again.ledger) == state(ledger)


def test_an_older_snapshot_replays_only_what_came_after_it(make_program: Any) -> None:
    paths = make_program(secret_items=4, retired=1)
    older, older_commits = snapshot_path(paths).read_bytes(), commits_path(paths).read_bytes()
    size = load_snapshot(older)[0].size
    write_items(paths, [item("b-0009", "b")], "more.yaml")
    commit_new_items(paths, "2026-03-01T00:00:00Z")
    retire_items(paths, ["b-0009"], "Rotation.", "2026-03-02T00:00:00Z")
    snapshot_path(paths).write_bytes(older)  # as if the last two commands had never saved theirs
    commits_path(paths).write_bytes(older_commits)
    seen: list[int] = []
    ledger, problems, start = replay_from(paths, lambda i, leaf, raw: seen.append(i))
    assert problems == [] and start.loaded == size and seen == list(range(size, ledger.size))
    assert state(ledger) == state(from_scratch(paths))
    assert load_snapshot(snapshot_path(paths).read_bytes())[0].size == ledger.size


def test_a_snapshot_made_on_another_byte_order_is_refused() -> None:
    data = snapshot_bytes(Ledger(), {})
    body = data[:-32].replace(b'"byteorder":"little"', b'"byteorder":"big   "')
    with pytest.raises(FormatError, match="checksum"):
        load_snapshot(body + data[-32:])
    with pytest.raises(FormatError, match="big   -endian machine"):
        load_snapshot(body + hashlib.sha256(body).digest())
