"""What lets a one-event command do work in proportion to its event: the commit arrays read a
checked block at a time, the item sources' row index, the index of the items each certificate
used, and the bisection of the sealed store. Each is a shortcut: a stale, damaged or foreign one
is refused or rebuilt, and the command's answer is the one it gives without it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_item, retire_items
from generator.commands.revoke import revoke_certificate
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.program.disclosure import certificate_items
from generator.program.itemsources import SourceRead
from generator.program.ledgerfile import replay_ledger
from generator.program.sealed import locate_sealed
from generator.state import item_uses_cache, source_index_cache
from generator.state.cache_file import BLOCK
from generator.state.ledger_cache import commits_path, snapshot_path, start_replay
from generator.verifier import Ledger
from tests.support.programs import item
from tests.support.runs import certify, register, results, run_spec, scored

SECRET = [f"b-{i:04d}" for i in range(1, 16)]


def json_items(paths: Paths, items: list[dict[str, Any]], name: str = "more.json") -> Path:
    f = paths.items_dir / name
    f.write_text(json.dumps({"items": items}, ensure_ascii=False, indent=1), encoding="utf-8")
    return f


def more_items(paths: Paths) -> Path:
    """Secret items in a JSON source, one with text outside ASCII (its row's byte span differs
    from its character span), committed."""
    items = [item(f"c-{i:03d}", "b", prompt=f"Extrait le numéro {i} — « compte ».") for i in range(1, 5)]
    f = json_items(paths, items)
    commit_new_items(paths, "2026-02-20T00:00:00Z")
    return f


def index_as_is(paths: Paths, f: Path) -> None:
    """An index of `f` as it is now, vouched for as a commit would vouch for it: a cache that lies."""
    ledger = scratch(paths)
    st = f.stat()
    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    read = {f: SourceRead(st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, digest)}
    source_index_cache.update(paths, source_index_cache.Kept(paths, ledger, [], 0), read, ledger)


def scratch(paths: Paths) -> Ledger:
    ledger, problems = replay_ledger(paths, use_snapshot=False)
    assert problems == []
    return ledger


# The commit arrays, read a block at a time.


def test_a_lazy_snapshot_answers_every_lookup_as_a_replay_does(make_program: Any) -> None:
    paths = make_program(secret_items=6, retired=1)
    more_items(paths)
    full = scratch(paths)
    with paths.ledger_file.open("rb") as f:
        start = start_replay(paths, f, lazy=True)
    assert start.why_not is None and start.ledger.size == full.size
    ids = [c.id for c in full.commits()]
    assert [start.ledger.commit(i) for i in ids] == [full.commit(i) for i in ids]
    assert start.ledger.commit("no-such-item") is None
    assert start.ledger.final_problems() == [] and start.ledger.gate_counts() == full.gate_counts()


def test_a_damaged_commits_block_stops_a_command_and_the_next_one_replays(make_program: Any) -> None:
    paths = make_program(secret_items=4, retired=1)
    path = commits_path(paths)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # the last section's last block
    path.write_bytes(bytes(data))
    before = paths.ledger_file.read_bytes()
    with pytest.raises(InputError, match="damaged"):
        retire_item(paths, "b-0002", "Rotation.", "2026-03-01T00:00:00Z")
    assert paths.ledger_file.read_bytes() == before and not snapshot_path(paths).exists()
    retire_item(paths, "b-0002", "Rotation.", "2026-03-01T00:00:00Z")
    with paths.ledger_file.open("rb") as f:
        start = start_replay(paths, f)
    assert start.why_not is None and "b-0002" in start.ledger.reveals


def test_a_commits_file_that_is_not_the_one_named_is_refused(make_program: Any) -> None:
    paths = make_program(secret_items=4, retired=1)
    other = make_program(name="other", secret_items=4, retired=1)
    commits_path(paths).write_bytes(commits_path(other).read_bytes())
    with paths.ledger_file.open("rb") as f:
        start = start_replay(paths, f, lazy=True)
    assert start.why_not is not None and "not the commits file it names" in start.why_not
    assert start.ledger.size == 0


def test_a_same_size_edit_of_the_ledger_is_found_though_the_last_chunk_is_not_read_alone(
    make_program: Any,
) -> None:
    paths = make_program(secret_items=4, retired=2)
    text = paths.ledger_file.read_bytes()
    st = paths.ledger_file.stat()
    paths.ledger_file.write_bytes(text.replace(b"Retired for test reason 1.", b"Retired for test reason 7."))
    os.utime(paths.ledger_file, ns=(st.st_atime_ns, st.st_mtime_ns))  # the change time still moves
    with paths.ledger_file.open("rb") as f:
        start = start_replay(paths, f, lazy=True)
    assert start.why_not is not None and "another ledger" in start.why_not


# The item sources' row index.


def test_retire_reads_an_indexed_row_and_scans_when_the_file_changed(make_program: Any) -> None:
    paths = make_program(secret_items=2, retired=0)
    f = more_items(paths)
    found = source_index_cache.lookup(paths, ["c-002", "c-004", "b-0001", "nope"])
    assert sorted(found) == ["c-002", "c-004"]  # b-0001 is in a YAML source: not indexed
    path, n, raw = found["c-004"]
    assert (path, n) == (f, 3) and json.loads(raw)["id"] == "c-004"
    assert json.loads(raw) == json.loads(f.read_text(encoding="utf-8"))["items"][3]
    retire_item(paths, "c-002", "Rotation.", "2026-03-01T00:00:00Z")
    assert paths.reveal_file("c-002").is_file()
    # Another item of the file edited: the file is no longer the one indexed, and the scan
    # still finds that the retired item itself is unchanged.
    doc = json.loads(f.read_text(encoding="utf-8"))
    doc["items"][0]["prompt"] = "Changed, and longer than before."
    f.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    assert source_index_cache.lookup(paths, ["c-004"]) == {}
    retire_item(paths, "c-004", "Rotation.", "2026-03-02T00:00:00Z")
    assert paths.reveal_file("c-004").is_file()


def test_an_edited_item_is_refused_whether_the_index_or_the_scan_finds_it(make_program: Any) -> None:
    paths = make_program(secret_items=2, retired=0)
    f = more_items(paths)
    doc = json.loads(f.read_text(encoding="utf-8"))
    doc["items"][2]["answer"]["summary"]["value"] = "Summary of c-00X"  # the same length
    f.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    index_as_is(paths, f)  # an index of the edited file: the row read is the edited one
    assert "c-003" in source_index_cache.lookup(paths, ["c-003"])
    before = paths.ledger_file.read_bytes()
    with pytest.raises(InputError, match="changed since it was committed"):
        retire_item(paths, "c-003", "Rotation.", "2026-03-01T00:00:00Z")
    assert paths.ledger_file.read_bytes() == before


def test_a_damaged_source_index_is_removed_and_the_sources_scanned(make_program: Any) -> None:
    paths = make_program(secret_items=2, retired=0)
    more_items(paths)
    path = source_index_cache.index_path(paths)
    data = bytearray(path.read_bytes())
    data[-2] ^= 1
    path.write_bytes(bytes(data))
    assert source_index_cache.lookup(paths, ["c-001"]) == {} and not path.exists()
    retire_item(paths, "c-001", "Rotation.", "2026-03-01T00:00:00Z")
    assert paths.reveal_file("c-001").is_file()


def test_row_spans_of_a_json_source() -> None:
    text = '{"note": "é", "items" : [ {"id": "x-1", "v": "ü"} ,\n{"id":"x-2"}], "z": 1}'
    data = text.encode()
    spans = source_index_cache.json_row_spans(data)
    assert spans is not None and [json.loads(data[a:b]) for a, b in spans] == [{"id": "x-1", "v": "ü"}, {"id": "x-2"}]
    assert source_index_cache.json_row_spans(b"[1, 2]") is None
    assert source_index_cache.json_row_spans(b'{"other": []}') is None


# The index of the items each secret-gate certificate used.


def secret_certificates(paths: Paths) -> None:
    """run-1 used b-0001..b-0010, run-2 (another subject) b-0006..b-0015."""
    register(paths, run_spec(paths, "run-1", "b", SECRET[:10]))
    certify(paths, results("run-1", [scored(i) for i in SECRET[:10]]))
    other = {"id": "other", "name": "Other Model", "version": "1.0", "organization": "Beta AI"}
    register(paths, run_spec(paths, "run-2", "b", SECRET[5:], subject=other), "2026-03-03T00:00:00Z")
    certify(
        paths,
        results("run-2", [scored(i) for i in SECRET[5:]], finished_at="2026-03-03T12:00:00Z"),
        at="2026-03-04T00:00:00Z",
    )


def uses(paths: Paths, items: list[str]) -> set[str] | None:
    ledger = scratch(paths)
    return item_uses_cache.certificates_using(paths, ledger, items, lambda s: certificate_items(paths, ledger, s))


def test_the_item_uses_index_names_the_certificates_of_an_item(make_program: Any) -> None:
    paths = make_program(secret_items=15, retired=0)
    secret_certificates(paths)
    assert uses(paths, ["b-0001"]) == {"run-1"}
    assert uses(paths, ["b-0007"]) == {"run-1", "run-2"}
    assert uses(paths, ["b-0015", "b-0002"]) == {"run-1", "run-2"}
    assert uses(paths, ["a-001"]) == set()
    retire_items(paths, ["b-0007"], "Rotation.", "2026-04-01T00:00:00Z")
    for serial in ("run-1", "run-2"):
        assert paths.details_file(serial, "b-0007").is_file()
    assert not paths.details_file("run-2", "b-0001").exists()


@pytest.mark.parametrize("how", ["bucket edited", "index of another ledger", "line of another certificate"])
def test_a_damaged_item_uses_index_is_not_believed(make_program: Any, how: str) -> None:
    paths = make_program(secret_items=15, retired=0)
    secret_certificates(paths)
    assert uses(paths, ["b-0007"]) == {"run-1", "run-2"}
    folder = item_uses_cache.uses_dir(paths)
    index = json.loads((folder / item_uses_cache.INDEX).read_bytes())
    bucket = folder / item_uses_cache._bucket("b-0007")
    if how == "bucket edited":
        bucket.write_bytes(b"".join(ln for ln in bucket.read_bytes().splitlines(keepends=True) if b"run-2" not in ln))
    elif how == "index of another ledger":
        index["last"] = ["run-9", 99]
        (folder / item_uses_cache.INDEX).write_text(json.dumps(index))
    else:
        data = bucket.read_bytes().replace(b" run-2 ", b" run-3 ")
        bucket.write_bytes(data)
        index["buckets"][bucket.name] = hashlib.sha256(data).hexdigest()
        (folder / item_uses_cache.INDEX).write_text(json.dumps(index))
    ledger = scratch(paths)
    got = item_uses_cache.certificates_using(paths, ledger, ["b-0007"], lambda s: certificate_items(paths, ledger, s))
    assert got in (None, {"run-1", "run-2"})
    # Whatever it said, retire publishes both certificates' details of the item.
    retire_items(paths, ["b-0007"], "Rotation.", "2026-04-01T00:00:00Z")
    for serial in ("run-1", "run-2"):
        assert paths.details_file(serial, "b-0007").is_file()
    assert uses(paths, ["b-0007"]) == {"run-1", "run-2"}


def test_a_revocation_does_not_disturb_the_item_uses_index(make_program: Any) -> None:
    paths = make_program(secret_items=15, retired=0)
    secret_certificates(paths)
    revoke_certificate(paths, "run-1", "Test.", "2026-04-01T00:00:00Z")
    assert uses(paths, ["b-0001"]) == {"run-1"}


# The sealed store, bisected.


def test_bisection_finds_what_the_full_pass_finds_across_batches(make_program: Any) -> None:
    paths = make_program(secret_items=40, retired=0)
    json_items(paths, [item(f"d-{i:04d}", "b") for i in range(1, 30)], "d.json")
    commit_new_items(paths, "2026-02-20T00:00:00Z")
    ledger = scratch(paths)
    wanted = {c.id: c.commitment for c in ledger.commits() if not ledger.gates[c.gate].public}
    assert len(list(paths.sealed_dir.glob("*.jsonl"))) == 2
    every = locate_sealed(paths, wanted)
    assert len(every) == len(wanted)
    for item_id, commitment in wanted.items():
        assert locate_sealed(paths, {item_id: commitment}, ledger) == {item_id: every[item_id]}


def test_bisection_gives_way_to_the_full_pass_past_a_line_no_commit_holds(make_program: Any) -> None:
    paths = make_program(secret_items=3, retired=0)
    ledger = scratch(paths)
    batch = next(paths.sealed_dir.glob("*.jsonl"))
    lines = batch.read_bytes().splitlines(keepends=True)
    stray = b'{"gate":"b","id":"b-9999","item":{"prompt":"x"},"salt":"00"}\n' + b"x" * (2 * BLOCK) + b"\n"
    batch.write_bytes(lines[0] + stray + b"".join(lines[1:]))
    wanted = {c.id: c.commitment for c in ledger.commits() if not ledger.gates[c.gate].public}
    assert locate_sealed(paths, wanted, ledger).keys() == locate_sealed(paths, wanted).keys() == wanted.keys()
