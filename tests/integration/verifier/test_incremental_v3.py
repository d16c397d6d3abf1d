"""A format v3 release verified from the verifier's memory of the last one
(generator/verifier/memory/release_memory.py): the whole tiles, the commitment list's parts no
event touched and the download parts unchanged since are not read again, and each of them changed
by a key holder still fails, as it fails verified from nothing.

The program is the demo's made v3 with 2,100 items more (a ledger of whole tiles, a commitment
list of three parts), verified once into a memory, then one retirement later: the retired item's
row is in the first part, new rows were committed in none, so the second part is the one no event
touched."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import generator.verifier as v
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from tests.support.demo import BuiltSite
from tests.support.programs import item, write_items
from tests.support.tamper import resign_sums
from tests.support.v3 import copy_release, demo_signer, hide, one_event, v3_demo

MORE = 2100
FIRST_PART = "ledger/commitments/0.json"
UNTOUCHED_PART = "ledger/commitments/1.json"


@dataclass
class Released:
    site: BuiltSite
    memory: Path  # the memory of the release before the last, as the verifier left it
    since: list[tuple[str, bytes, str | None]]
    before: dict[str, bytes]  # files of the release before the last, by path


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Released:
    root = tmp_path_factory.mktemp("v3-incremental")
    site = v3_demo(root)
    write_items(site.paths, [item(f"b-{5000 + i:05d}", "b") for i in range(MORE)], "many.yaml")
    commit_new_items(site.paths, "2027-01-03T09:00:00Z")
    build(site.paths, site.out, offline=True)
    memory = root / "releases"
    origin = v.verify_site(site.out).tree["origin"]
    since = [("state", (site.out / "ledger" / "checkpoint").read_bytes(), origin)]
    first = v.verify_site(site.out, since=since, memory=memory)
    assert first.ok, first.render()
    before = {p: (site.out / p).read_bytes() for p in (FIRST_PART, UNTOUCHED_PART)}
    one_event(site)
    return Released(site, memory, since, before)


def failed(report: Any) -> list[str]:
    return sorted(p.describe() for p in report.failures)


def test_the_release_is_verified_from_the_memory_reading_only_what_changed(released: Released, tmp_path: Path) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    after = v.verify_site(site, since=released.since, memory=memory)
    full = v.verify_site(site, since=released.since)
    assert after.ok, after.render()
    assert full.ok
    notes = "\n".join(after.notes)
    assert "the whole tiles of the release verified last" in notes, notes
    assert "1 of its 3 parts not read again" in notes, notes
    assert after.tree == full.tree and after.counts == full.counts
    # The memory it leaves serves the next run the same way; the same release again, every
    # download part is one checked before (here one event changed a file in every leaf).
    state = [("state", (site / "ledger" / "checkpoint").read_bytes(), after.tree["origin"])]
    again = v.verify_site(site, since=state, memory=memory)
    notes = "\n".join(again.notes)
    assert again.ok and "the whole tiles of the release verified last" in notes, notes
    parts = len(list((site / "download").glob("*.zip")))
    assert f"{parts} download part(s) not read again" in notes, notes


def _flip(rel: str, at: int = 40) -> Callable[[Path], list[str]]:
    def change(site: Path) -> list[str]:
        data = bytearray((site / rel).read_bytes())
        data[at] ^= 1
        (site / rel).write_bytes(bytes(data))
        return []

    return change


def _row_status(site: Path) -> list[str]:
    """A row of the part no event touched says "revealed": the index is re-signed to match."""
    import hashlib
    import json

    data = (site / UNTOUCHED_PART).read_bytes().replace(b'"status":"sealed"', b'"status":"revealed"', 1)
    (site / UNTOUCHED_PART).write_bytes(data)
    index = json.loads((site / "ledger/commitments.json").read_bytes())
    for row in index["parts"]:
        if row["path"] == UNTOUCHED_PART:
            row["sha256"] = hashlib.sha256(data).hexdigest()
    (site / "ledger/commitments.json").write_bytes(v.canonical_bytes(index))
    return ["ledger/commitments.json"]


TAMPERS: dict[str, Callable[[Released], Callable[[Path], list[str]]]] = {
    "a whole hash tile": lambda r: _flip("ledger/tile/0/000"),
    "a whole entry bundle": lambda r: _flip("ledger/tile/entries/001", 100),
    "a part no event touched": lambda r: _row_status,
    # The retirement's row left as it was: the part a new event touched, kept from before it.
    "a part an event touched, kept": lambda r: (
        lambda site: (site / FIRST_PART).write_bytes(r.before[FIRST_PART]) and []
    ),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_changed_file_fails_from_the_memory_as_from_nothing(released: Released, tmp_path: Path, name: str) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    signed = TAMPERS[name](released)(site)
    hide(BuiltSite(released.site.paths, site), *signed)
    from_memory = v.verify_site(site, since=released.since, memory=memory)
    from_nothing = v.verify_site(site, since=released.since)
    assert not from_nothing.ok
    assert failed(from_memory) == failed(from_nothing)


def test_a_changed_download_part_fails_from_the_memory_as_from_nothing(released: Released, tmp_path: Path) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    part = sorted((site / "download").glob("*.zip"))[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 3] ^= 1
    part.write_bytes(bytes(data))
    resign_sums(site, demo_signer(released.site), keep_parts=True)
    from_memory = v.verify_site(site, since=released.since, memory=memory)
    from_nothing = v.verify_site(site, since=released.since)
    assert not from_nothing.ok
    assert failed(from_memory) == failed(from_nothing)
    assert any(f.file == part.relative_to(site).as_posix() for f in from_memory.failures), failed(from_memory)
