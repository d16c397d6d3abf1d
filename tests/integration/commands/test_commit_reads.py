"""A commit reads the sources that changed, not the million before them: a JSON source read whole
by a commit that landed, and unchanged since, is vouched for by the item sources' index and not
read again. Every refusal a full read gives is still given: an edited file is read (whatever its
times say), a duplicate of a vouched id is named where it is, and an index that is not the
ledger's own, or a commit that did not land, vouches for nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.commands import commit as commit_module
from generator.commands.commit import commit_new_items
from generator.core.generator_errors import InputError
from generator.program import itemsources, journal
from generator.program.datadir import Paths
from generator.state import source_index_cache
from generator.state.cache_file import BlockFile
from tests.support.programs import item

AT = "2026-02-20T00:00:00Z"


def json_source(paths: Paths, name: str, ids: list[str]) -> Path:
    f = paths.items_dir / name
    f.write_text(json.dumps({"items": [item(i, "b") for i in ids]}, indent=1), encoding="utf-8")
    return f


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the source files each scan reads, in order."""
    seen: list[str] = []
    real = itemsources._source_rows

    def spy(paths: Paths, path: Path, *args: Any) -> Any:
        seen.append(path.name)
        return real(paths, path, *args)

    monkeypatch.setattr(itemsources, "_source_rows", spy)
    return seen


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    """The test program (items.yaml) and two JSON sources of secret items, committed."""
    paths = make_program(secret_items=2, retired=0)
    json_source(paths, "c.json", [f"c-{i:03d}" for i in range(1, 6)])
    json_source(paths, "d.json", [f"d-{i:03d}" for i in range(1, 6)])
    commit_new_items(paths, AT)
    return paths


def index_files(paths: Paths) -> dict[str, list[Any]]:
    index = BlockFile(source_index_cache.index_path(paths), source_index_cache._MAGIC, ValueError)
    with index.f:
        return {entry[0]: entry for entry in index.meta["files"]}


def test_a_commit_of_one_more_file_reads_that_file_and_the_yaml_only(prog: Paths, reads: list[str]) -> None:
    json_source(prog, "e.json", ["e-001"])
    result = commit_new_items(prog, "2026-02-21T00:00:00Z")
    assert (result.committed, result.unchanged) == (1, 14)  # 2 public + 2 secret + 10 in c and d
    # Each pass (the check, then the sealing) reads e.json and items.yaml (YAML is never vouched for).
    assert reads == ["e.json", "items.yaml", "e.json", "items.yaml"]
    assert sorted(index_files(prog)) == ["c.json", "d.json", "e.json"]
    # The merged index still finds every row, old and new, for a retire.
    found = source_index_cache.lookup(prog, ["c-003", "d-005", "e-001"])
    assert {i: json.loads(raw)["id"] for i, (_, _, raw) in found.items()} == {
        "c-003": "c-003",
        "d-005": "d-005",
        "e-001": "e-001",
    }
    reads.clear()
    assert commit_new_items(prog, "2026-02-22T00:00:00Z").committed == 0
    assert reads == ["items.yaml"]


def test_an_edited_vouched_file_is_read_and_its_edit_refused(prog: Paths, reads: list[str]) -> None:
    f = prog.items_dir / "c.json"
    st = f.stat()
    # The same length, the old modification time put back: only the bytes (and the change time) differ.
    f.write_bytes(f.read_bytes().replace(b"Summary of c-002", b"Summary of c-00X"))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(InputError) as e:
        commit_new_items(prog, "2026-02-21T00:00:00Z")
    assert "item c-002 was committed" in str(e.value.problems)
    assert "c.json" in reads and "d.json" not in reads


def test_a_duplicate_of_a_vouched_id_is_named_where_it_is(prog: Paths, reads: list[str]) -> None:
    json_source(prog, "e.json", ["e-001", "d-004"])
    with pytest.raises(InputError) as e:
        commit_new_items(prog, "2026-02-21T00:00:00Z")
    [dup] = [p for p in e.value.problems if "duplicate" in p.message]
    assert dup.message == "duplicate item id d-004" and dup.where == "items[1].id"
    assert dup.found is not None and dup.found.endswith("d.json items[3]")
    assert "d.json" not in reads


def test_an_index_of_another_ledger_vouches_for_nothing(
    prog: Paths, make_program: Callable[..., Paths], reads: list[str]
) -> None:
    other = make_program(name="other", secret_items=2, retired=0)
    theirs = json_source(other, "c.json", [f"x-{i:03d}" for i in range(1, 6)])
    commit_new_items(other, AT)
    # The other program's index over this one's, and its c.json, byte for byte, in place of
    # this one's: items this ledger never committed, in a file that index vouches for.
    source_index_cache.index_path(prog).write_bytes(source_index_cache.index_path(other).read_bytes())
    (prog.items_dir / "c.json").write_bytes(theirs.read_bytes())
    reads.clear()
    assert commit_new_items(prog, "2026-02-21T00:00:00Z").committed == 5
    assert sorted(reads) == ["c.json", "c.json", "d.json", "d.json", "items.yaml", "items.yaml"]


def test_a_commit_that_does_not_land_vouches_for_nothing(
    prog: Paths, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    json_source(prog, "e.json", ["e-001"])

    def killed(self: Any, f: Any) -> None:
        raise KeyboardInterrupt  # as a kill would: the transaction never reaches the ledger

    with monkeypatch.context() as m:
        m.setattr(journal.Transaction, "commit", killed)
        with pytest.raises(KeyboardInterrupt):
            commit_new_items(prog, "2026-02-21T00:00:00Z")
    assert "e.json" not in index_files(prog)
    reads.clear()
    assert commit_new_items(prog, "2026-02-21T00:00:00Z").committed == 1
    assert reads == ["e.json", "items.yaml", "e.json", "items.yaml"]


def test_a_file_changed_just_before_the_scan_is_vouched_for_by_its_hash_alone(
    prog: Paths, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    # The fixture's files were written moments before their commit: within a clock tick of it,
    # an edit after the read could leave the times as they were, so no times are kept.
    assert all(entry[4] is None for entry in index_files(prog).values())
    # A commit that starts long after the files last changed keeps their times.
    later = os.stat(prog.items_dir / "d.json").st_ctime_ns + 10 * source_index_cache.RACY_NS
    monkeypatch.setattr(commit_module.time, "time_ns", lambda: later)
    commit_new_items(prog, "2026-02-21T00:00:00Z")
    entries = index_files(prog)
    st = os.stat(prog.items_dir / "d.json")
    assert entries["d.json"][4] == [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]
    assert reads == ["items.yaml"]


def test_a_damaged_index_vouches_for_nothing(prog: Paths, reads: list[str]) -> None:
    json_source(prog, "e.json", ["e-001", "d-004"])  # a duplicate only the index's rows can name
    path = source_index_cache.index_path(prog)
    data = bytearray(path.read_bytes())
    data[-2] ^= 1  # a byte of the last section: the header still checks
    path.write_bytes(bytes(data))
    with pytest.raises(InputError) as e:
        commit_new_items(prog, "2026-02-21T00:00:00Z")
    assert [p.found for p in e.value.problems if "duplicate" in p.message] == [
        f"also at {prog.show(prog.items_dir / 'd.json')} items[3]"
    ]
    assert "c.json" in reads and "d.json" in reads


def test_a_file_whose_ids_are_written_with_escapes_is_read_by_every_commit(prog: Paths, reads: list[str]) -> None:
    # Valid JSON, the same item: its id's key and value spelt with escapes, which the index's
    # plain search for ids does not find. The file is not vouched for, so a duplicate is found.
    f = prog.items_dir / "esc.json"
    row = json.dumps(item("f-001", "b"))
    f.write_text('{"items": [' + row.replace('"id": "f-001"', '"\\u0069d": "\\u0066-001"') + "]}", encoding="utf-8")
    assert commit_new_items(prog, "2026-02-21T00:00:00Z").committed == 1
    assert "esc.json" not in index_files(prog)
    json_source(prog, "g.json", ["f-001"])
    with pytest.raises(InputError) as e:
        commit_new_items(prog, "2026-02-22T00:00:00Z")
    assert [p.message for p in e.value.problems] == ["duplicate item id f-001"]


def test_a_file_edited_between_the_two_passes_is_not_vouched_for(
    prog: Paths, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its leaves were made from the bytes the second pass read: edited in between (and edited
    back after), the file is read again by the next commit, which finds the difference."""
    f = json_source(prog, "e.json", ["e-001"])
    first = f.read_bytes()
    real = itemsources._source_rows
    calls = []

    def editing(paths: Paths, path: Path, *args: Any) -> Any:
        if path.name != "e.json":
            return real(paths, path, *args)
        calls.append(path.name)
        if len(calls) == 2:  # the sealing pass: the operator saved an edit, then undid it
            f.write_text(json.dumps({"items": [item("e-001", "b", prompt="Edited.")]}), encoding="utf-8")
            try:
                return real(paths, path, *args)
            finally:
                f.write_bytes(first)
        return real(paths, path, *args)

    with monkeypatch.context() as m:
        m.setattr(itemsources, "_source_rows", editing)
        assert commit_new_items(prog, "2026-02-21T00:00:00Z").committed == 1
    assert "e.json" not in index_files(prog)
    with pytest.raises(InputError) as e:
        commit_new_items(prog, "2026-02-22T00:00:00Z")
    assert [p.message.split(" (")[0] for p in e.value.problems] == [
        "item e-001 was committed at ledger entry 19 and its source has changed since"
    ]
