"""Consistency proofs made from hash tiles (generator/verifier/tlog/tile_proofs.py): for every pair of
sizes tried, the proof is the one generator/core/proofs.py makes from the leaves, it verifies
against the two roots, it reads only tiles of the new size and few of them; a missing or short tile
is refused by name, and a tile with a wrong hash gives a proof the roots refuse.

The log is synthetic (tests/support/tiled_logs.py): every pair of sizes up to 40, and around the
tile boundaries of level 0 (256, 512) and level 1 (65536), partial tiles included.
"""

from __future__ import annotations

import functools

import pytest

from generator.verifier.core.errors import FormatError, ProofError, RootMismatchError
from generator.verifier.tlog.merkle import verify_consistency
from generator.verifier.tlog.tile_proofs import complete_subtrees, consistency_proof_from_tiles, consistency_ranges
from generator.verifier.tlog.tiles import tile_paths
from tests.support.tiled_logs import TiledLog, old_sizes, tiled_log

SMALL = range(1, 41)
NEAR_256 = [255, 256, 257, 300, 511, 512, 513, 600, 767, 768, 769]
NEAR_65536 = [65535, 65536, 65537, 66000, 70000]


@functools.cache
def log() -> TiledLog:
    return tiled_log([*SMALL, *NEAR_256, *NEAR_65536])


def pairs(sizes: list[int] | range, every: bool = False) -> list[tuple[int, int]]:
    return [(m, n) for n in sizes for m in (range(n + 1) if every else old_sizes(n))]


def levels(n: int) -> int:
    """How many tile levels a log of n leaves has."""
    count = 0
    while n:
        n, count = n >> 8, count + 1
    return count


def check_pairs(cases: list[tuple[int, int]]) -> None:
    t = log()
    for m, n in cases:
        proof, read = consistency_proof_from_tiles(t.read(n).get, m, n)
        assert proof == t.tree.consistency_proof(m, n), (m, n)
        if m:
            verify_consistency(m, n, proof, t.tree.root(m), t.tree.root(n))
        assert set(read) <= {p for p, _ in tile_paths(n)}, (m, n, read)
        # O(log n): a proof node lies in one tile per level, the right edge in at most two.
        assert len(read) <= 2 * levels(n), (m, n, read)
        assert len(read) == len(set(read))


def test_every_pair_of_small_sizes() -> None:
    check_pairs(pairs(SMALL, every=True))


def test_sizes_around_the_level_0_tile_boundaries() -> None:
    check_pairs(pairs(NEAR_256))
    check_pairs([(m, n) for n in (512, 600) for m in range(0, n + 1, 7)])


def test_sizes_around_the_level_1_tile_boundary() -> None:
    cases = pairs(NEAR_65536)
    assert (65536, 70000) in cases and (256, 65536) in cases and (65535, 65537) in cases
    check_pairs(cases)


def test_level_2_is_read_past_65536() -> None:
    _, read = consistency_proof_from_tiles(log().read(70000).get, 65535, 70000)
    assert "tile/2/000.p/1" not in read  # 65535 is no complete subtree of height 16: level 2 is not needed
    _, read = consistency_proof_from_tiles(log().read(70000).get, 65537, 70000)
    assert "tile/2/000.p/1" in read and "tile/1/001.p/17" in read and "tile/0/273.p/112" in read


def test_equal_sizes_and_the_empty_tree_read_nothing() -> None:
    def nothing(path: str) -> bytes | None:
        raise AssertionError(f"read {path}")

    for m, n in [(0, 0), (0, 5), (5, 5), (256, 256), (70000, 70000)]:
        assert consistency_proof_from_tiles(nothing, m, n) == ([], [])


@pytest.mark.parametrize(("m", "n"), [(6, 5), (-1, 5)])
def test_a_smaller_new_tree_is_refused(m: int, n: int) -> None:
    with pytest.raises(ProofError, match="the new tree must not be smaller"):
        consistency_proof_from_tiles(log().read(5).get, m, n)


def test_ranges_and_subtrees_by_hand() -> None:
    assert consistency_ranges(3, 7) == [(2, 3), (3, 4), (0, 2), (4, 7)]
    assert consistency_ranges(4, 7) == [(4, 7)]
    assert list(complete_subtrees(4, 7)) == [(1, 2), (0, 6)]
    assert list(complete_subtrees(256, 600)) == [(8, 1), (6, 8), (4, 36), (3, 74)]


def test_a_missing_tile_is_named() -> None:
    tiles = dict(log().read(600))
    del tiles["tile/0/002.p/88"]
    with pytest.raises(FormatError) as e:
        consistency_proof_from_tiles(tiles.get, 300, 600)
    assert type(e.value) is FormatError and str(e.value) == "tile/0/002.p/88: missing"


def test_a_short_tile_is_named() -> None:
    tiles = dict(log().read(600))
    tiles["tile/0/002.p/88"] = tiles["tile/0/002.p/88"][:-1]
    with pytest.raises(FormatError, match=r"^tile/0/002\.p/88: 2815 bytes, not the 2816 of its 88 hashes$"):
        consistency_proof_from_tiles(tiles.get, 300, 600)


@pytest.mark.parametrize(("path", "hash_index"), [("tile/0/002.p/88", 87), ("tile/0/001", 0), ("tile/1/000.p/2", 0)])
def test_a_wrong_hash_in_a_tile_read_makes_the_proof_fail(path: str, hash_index: int) -> None:
    t = log()
    tiles = dict(t.read(600))
    data = tiles[path]
    tiles[path] = data[: 32 * hash_index] + bytes(32) + data[32 * (hash_index + 1) :]
    proof, read = consistency_proof_from_tiles(tiles.get, 300, 600)
    assert path in read
    with pytest.raises(RootMismatchError):
        verify_consistency(300, 600, proof, t.tree.root(300), t.tree.root(600))


def test_a_hash_no_node_of_the_proof_covers_is_not_used() -> None:
    """300 → 600 needs hash 0 of tile/1/000.p/2 (leaves 0..255), not hash 1 (256..511): a wrong one
    there changes nothing, since nothing that is checked rests on it."""
    t = log()
    tiles = dict(t.read(600))
    tiles["tile/1/000.p/2"] = tiles["tile/1/000.p/2"][:32] + bytes(32)
    proof, read = consistency_proof_from_tiles(tiles.get, 300, 600)
    assert "tile/1/000.p/2" in read
    verify_consistency(300, 600, proof, t.tree.root(300), t.tree.root(600))
