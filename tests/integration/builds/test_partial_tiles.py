"""The partial tiles of every archived size stay published while their tile is partial (C2SP
tlog-tiles: a log serves the partial tiles of each size it made a checkpoint for), and go once
the full tile is there."""

from __future__ import annotations

from pathlib import Path

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_item
from generator.core import layout
from generator.verifier import leaf_hash, read_tiled_log
from tests.support.demo import BuiltSite
from tests.support.programs import item, write_items


def size_of(site: Path) -> int:
    return int((site / layout.CHECKPOINT).read_text().split("\n")[1])


def test_an_archived_size_keeps_its_partial_tiles_until_the_full_tile(built_program: BuiltSite) -> None:
    paths, site = built_program.paths, built_program.out
    first = size_of(site)
    retire_item(paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(paths, site)
    second = size_of(site)
    assert first < second < 256
    tiles = site / "ledger" / "tile"
    today = (tiles / "0" / f"000.p/{second}").read_bytes()
    kept = (tiles / "0" / f"000.p/{first}").read_bytes()
    assert kept == today[: 32 * first]  # the head of today's tile
    # What a reader holding the first checkpoint reads: the tiles of its size give its leaves.
    leaves = list(read_tiled_log(lambda p: (site / "ledger" / p).read_bytes(), first))
    assert [leaf_hash(leaf) for leaf in leaves] == [kept[i : i + 32] for i in range(0, len(kept), 32)]
    assert (tiles / "entries" / f"000.p/{first}").is_file()

    # Past 256 leaves the level-0 tile is full: the partial tiles of the earlier sizes go.
    write_items(paths, [item(f"b-{i:04d}", "b") for i in range(10, 270)], name="more.yaml")
    commit_new_items(paths, "2026-03-03T00:00:00Z")
    build(paths, site)
    third = size_of(site)
    assert third > 256
    assert (tiles / "0" / "000").is_file() and (tiles / "entries" / "000").is_file()
    assert not list((tiles / "0").glob("000.p/*")) and not list((tiles / "entries").glob("000.p/*"))
    assert (tiles / "0" / f"001.p/{third - 256}").is_file()
