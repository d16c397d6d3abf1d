"""A committed item never changes: `commit` refuses a source that edits one, naming what changed.

The comparison is with what was committed (the sealed or revealed document), remembered as a
digest per item in the private cache, so that a commit of new items reads no sealed document.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from generator.commands.commit import commit_new_items
from generator.program.datadir import Paths
from generator.state.item_digest_cache import CACHE_NAME
from tests.support.files import refused
from tests.support.programs import item, write_items

AT = "2026-03-01T00:00:00Z"
SECRET = "110-482-339201"


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    """a-001, a-002 public (revealed), b-0001..b-0003 secret (b-0001 retired), all from items.yaml."""
    return make_program()


def sources(paths: Paths) -> list[dict]:
    return [item(f"a-{i:03d}", "a") for i in (1, 2)] + [item(f"b-{i:04d}", "b") for i in (1, 2, 3)]


def edited(paths: Paths, index: int, **change: object) -> list[dict]:
    rows = sources(paths)
    rows[index] = {**rows[index], **change}
    return rows


def test_an_unchanged_source_commits_nothing_and_says_so(prog: Paths) -> None:
    result = commit_new_items(prog, AT)
    assert (result.committed, result.unchanged) == (0, 5)
    assert (prog.private / "cache" / CACHE_NAME).is_file()


@pytest.mark.parametrize("with_cache", [True, False])
def test_an_edited_secret_answer_is_refused_naming_the_member_not_the_value(prog: Paths, with_cache: bool) -> None:
    if with_cache:
        commit_new_items(prog, AT)  # leaves the digests cache
    else:
        (prog.private / "cache" / CACHE_NAME).unlink(missing_ok=True)
    rows = edited(prog, 3)  # b-0002, sealed
    rows[3]["answer"] = {**rows[3]["answer"], "account_number": {"kind": "scalar", "tier": "critical", "value": "999"}}
    write_items(prog, [*rows, item("new-1", "b")])
    e = refused(lambda: commit_new_items(prog, AT), prog.data, prog.private)
    [p] = e.problems
    assert p.file.endswith("items.yaml") and "items[3]" in p.where and "b-0002" in p.message
    assert "answer.account_number.value" in p.message
    assert "999" not in p.describe() and SECRET not in p.describe()
    assert "nothing was committed" in e.summary


@pytest.mark.parametrize(
    ("index", "change", "member"),
    [
        (0, {"prompt": "Another prompt."}, "prompt"),  # public, revealed
        (1, {"gate": "b"}, "gate"),
        (2, {"prompt": "A retired item, edited."}, "prompt"),  # retired secret item
        (4, {"answer": {"summary": {"kind": "text", "tier": "high", "value": "x"}}}, "answer.account_number (removed)"),
    ],
)
def test_every_kind_of_edit_is_named(prog: Paths, index: int, change: dict, member: str) -> None:
    write_items(prog, edited(prog, index, **change))
    e = refused(lambda: commit_new_items(prog, AT), prog.data, prog.private)
    assert any(member in p.message for p in e.problems), [p.describe() for p in e.problems]


def test_an_edit_is_reported_with_every_other_problem_in_one_run(prog: Paths) -> None:
    write_items(prog, edited(prog, 4, prompt="Changed."))
    (prog.items_dir / "zz-bad.yaml").write_text("items:\n  - id: Bad Id\n    gate: b\n", encoding="utf-8")
    e = refused(lambda: commit_new_items(prog, AT), prog.data, prog.private)
    assert any("b-0003" in p.message and "prompt" in p.message for p in e.problems)
    assert any(p.file.endswith("zz-bad.yaml") for p in e.problems)


def test_a_stale_or_damaged_cache_is_remade_not_trusted(prog: Paths) -> None:
    commit_new_items(prog, AT)
    cache = prog.private / "cache" / CACHE_NAME
    data = bytearray(cache.read_bytes())
    data[-40] ^= 1  # the last record's digest: the checksum no longer holds
    cache.write_bytes(bytes(data))
    write_items(prog, edited(prog, 4, prompt="Changed."))
    refused(lambda: commit_new_items(prog, AT), prog.data, prog.private)
    write_items(prog, [*sources(prog), item("new-1", "b")])
    assert commit_new_items(prog, AT).committed == 1
    # The new item is remembered as committed: editing it now is refused too.
    write_items(prog, [*sources(prog), item("new-1", "b", prompt="Edited after commit.")])
    e = refused(lambda: commit_new_items(prog, AT), prog.data, prog.private)
    assert any("new-1" in p.message for p in e.problems)


def test_a_commit_reads_and_writes_only_the_records_it_needs(prog: Paths) -> None:
    more = prog.items_dir / "more.json"
    more.write_text(json.dumps({"items": [item("new-1", "b")]}), encoding="utf-8")
    commit_new_items(prog, AT)
    cache = prog.private / "cache" / CACHE_NAME
    data = bytearray(cache.read_bytes())
    magic = data.index(b"\n") + 1
    assert len(data) == magic + 72 * 6  # a record per commit, at its place
    data[magic + 5 * 72 + 40] ^= 1  # new-1's digest: its record's check no longer holds
    cache.write_bytes(bytes(data))
    # Another file of new items: new-1's file is unchanged, so its record is neither read nor remade.
    (prog.items_dir / "more2.json").write_text(json.dumps({"items": [item("new-2", "b")]}), encoding="utf-8")
    assert commit_new_items(prog, AT).committed == 1
    after = cache.read_bytes()
    assert after[: magic + 72 * 6] == bytes(data) and len(after) == magic + 72 * 7
    # An edit of new-1 is still found: the damaged record is remade from the sealed document.
    more.write_text(json.dumps({"items": [item("new-1", "b", prompt="Edited.")]}), encoding="utf-8")
    e = refused(lambda: commit_new_items(prog, AT), prog.data, prog.private)
    assert [p.message.split(" (")[0] for p in e.problems] == [
        "item new-1 was committed at ledger entry 11 and its source has changed since"
    ]
