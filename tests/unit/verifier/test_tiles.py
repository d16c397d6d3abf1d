"""C2SP tlog-tiles (generator/verifier/tlog/tiles.py): which tiles a log has, what they hold, that a
full tile never changes, and that reading a tiled log back refuses every kind of damage.

Everything expected here is computed from the definitions, with hashlib only: the paths from
the C2SP text, the hashes as RFC 6962 MTH of leaf ranges, the bundles as uint16-prefixed leaves.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
import time

import pytest

from generator.verifier.core.errors import FormatError, ProofError
from generator.verifier.tlog.tiles import (
    TILE_WIDTH,
    NotResumable,
    TileBuilder,
    entry_bundle_path,
    hash_tile_path,
    parse_entry_bundle,
    partial_tile_paths,
    read_tiled_log,
    tile_number_path,
    tile_paths,
    tile_read_order,
)

SIZES = [1, 255, 256, 257, 65_536, 70_000]
MAX = max(SIZES) + 1
LEAVES = [b"leaf %d" % i for i in range(MAX)]  # every log here is a prefix of this one
LEAF_HASHES = [hashlib.sha256(b"\x00" + leaf).digest() for leaf in LEAVES]


@functools.cache
def mth(lo: int, hi: int) -> bytes:
    """RFC 6962 §2.1 MTH(D[lo:hi]): split at the largest power of two below the length."""
    if hi - lo == 1:
        return LEAF_HASHES[lo]
    k = 1 << ((hi - lo - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + mth(lo, lo + k) + mth(lo + k, hi)).digest()


def root_of(size: int) -> bytes:
    return mth(0, size) if size else hashlib.sha256(b"").digest()


def number(n: int) -> str:
    """<N> the long way: peel off groups of three digits from the right."""
    groups = [f"{n % 1000:03d}"]
    while n >= 1000:
        n //= 1000
        groups.insert(0, f"x{n % 1000:03d}")
    return "/".join(groups)


def expected_widths(size: int) -> dict[str, int]:
    """Every tile of the log and its width, from C2SP: at level l, floor(size / 256**(l+1)) full
    tiles and a partial one of floor(size / 256**l) mod 256 hashes when that is not 0."""
    out: dict[str, int] = {}
    level = 0
    while size // 256**level:
        for i in range(size // 256 ** (level + 1)):
            out[f"tile/{level}/{number(i)}"] = 256
        if w := size // 256**level % 256:
            out[f"tile/{level}/{number(size // 256 ** (level + 1))}.p/{w}"] = w
        level += 1
    for i in range(size // 256):
        out[f"tile/entries/{number(i)}"] = 256
    if size % 256:
        out[f"tile/entries/{number(size // 256)}.p/{size % 256}"] = size % 256
    return out


# The counts per level of C2SP's own examples and of each size, worked out by hand:
# level -> (full tiles, partial width); "e" is the entry bundles.
BY_HAND = {
    1: {0: (0, 1), "e": (0, 1)},
    255: {0: (0, 255), "e": (0, 255)},
    256: {0: (1, 0), 1: (0, 1), "e": (1, 0)},
    257: {0: (1, 1), 1: (0, 1), "e": (1, 1)},
    65_536: {0: (256, 0), 1: (1, 0), 2: (0, 1), "e": (256, 0)},
    70_000: {0: (273, 112), 1: (1, 17), 2: (0, 1), "e": (273, 112)},
}


def expected_content(path: str, width: int) -> bytes:
    base = path.partition(".p/")[0]
    kind, *groups = base.split("/")[1:]
    index = int("".join(g.lstrip("x") for g in groups))
    if kind == "entries":
        leaves = LEAVES[index * 256 : index * 256 + width]
        return b"".join(len(leaf).to_bytes(2, "big") + leaf for leaf in leaves)
    span = 256 ** int(kind)  # the leaves under one hash of this level
    return b"".join(mth(j * span, (j + 1) * span) for j in range(index * 256, index * 256 + width))


def build(size: int) -> tuple[dict[str, bytes], TileBuilder]:
    builder = TileBuilder()
    tiles: dict[str, bytes] = {}
    for leaf in LEAVES[:size]:
        for path, data in builder.append(leaf):
            assert path not in tiles, f"{path} emitted twice"
            tiles[path] = data
    for path, data in builder.finish():
        assert path not in tiles
        tiles[path] = data
    return tiles, builder


@functools.cache
def built(size: int) -> dict[str, bytes]:
    return build(size)[0]


def widths(tiles: dict[str, bytes]) -> dict[str, int]:
    return {
        p: len(parse_entry_bundle(d, int(p.split("/")[-1]) if ".p/" in p else 256))
        if p.startswith("tile/entries/")
        else len(d) // 32
        for p, d in tiles.items()
    }


# --- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,path",
    [(0, "000"), (5, "005"), (999, "999"), (1000, "x001/000"), (1234067, "x001/x234/067"), (10**6, "x001/x000/000")],
)
def test_tile_number_path(n: int, path: str) -> None:
    assert tile_number_path(n) == path == number(n)


def test_hash_tile_and_entry_bundle_paths() -> None:
    assert hash_tile_path(0, 1234067, 256) == "tile/0/x001/x234/067"
    assert hash_tile_path(2, 0, 1) == "tile/2/000.p/1"
    assert hash_tile_path(1, 1000, 17) == "tile/1/x001/000.p/17"
    assert entry_bundle_path(273, 112) == "tile/entries/273.p/112"
    assert entry_bundle_path(0, 256) == "tile/entries/000"


@pytest.mark.parametrize("call", [lambda: hash_tile_path(0, 0, 0), lambda: hash_tile_path(0, 0, 257),
                                  lambda: hash_tile_path(64, 0, 1), lambda: entry_bundle_path(-1, 1)])  # fmt: skip
def test_impossible_paths_are_refused(call) -> None:
    with pytest.raises(FormatError):
        call()


def test_the_counts_worked_out_by_hand_match_the_formula() -> None:
    for size, levels in BY_HAND.items():
        got = expected_widths(size)
        for level, (full, partial) in levels.items():
            prefix = "tile/entries/" if level == "e" else f"tile/{level}/"
            row = {p: w for p, w in got.items() if p.startswith(prefix)}
            assert sum(w == 256 for w in row.values()) == full, (size, level)
            assert [w for w in row.values() if w != 256] == ([partial] if partial else []), (size, level)
        assert {p.split("/")[1] for p in got} == {"entries" if k == "e" else str(k) for k in levels}, size


@pytest.mark.parametrize("size", [0, *SIZES])
def test_tile_paths(size: int) -> None:
    paths = tile_paths(size)
    assert dict(paths) == expected_widths(size)
    assert len(paths) == len(dict(paths))
    assert paths == tile_paths(size)


def test_the_tiles_a_smaller_log_adds_to_a_larger_ones_are_its_partial_tiles() -> None:
    # What the accounting of archived sizes relies on: of a smaller log's tiles, only its
    # partial ones can be missing from a larger log's.
    draw = random.Random(20261207)
    sizes = [1, 255, 256, 257, 65535, 65536, 65537, 1 << 20, *(draw.randrange(1, 1 << 21) for _ in range(20))]
    for m in sizes:
        mine = tile_paths(m)
        partial = partial_tile_paths(m)
        assert set(partial) == {p for p, w in mine if w != 256}, m
        for n in (m + 1, m + 255, m + 256, m + draw.randrange(1, 1 << 16), 2 * m):
            larger = {p for p, _ in tile_paths(n)}
            assert {p for p, _ in mine} - larger == set(partial) - larger, (m, n)


# --- building ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_built_tiles_are_the_tiles_of_the_log(size: int) -> None:
    tiles = built(size)
    assert widths(tiles) == expected_widths(size) == dict(tile_paths(size))
    for path, data in tiles.items():
        assert data == expected_content(path, expected_widths(size)[path]), path


@pytest.mark.parametrize("size", SIZES)
def test_the_root_from_the_tiles_is_the_rfc6962_root(size: int) -> None:
    tiles, builder = build(size)
    assert builder.size == size
    assert builder.root() == root_of(size)
    # Read back, the tiles give every leaf, and the leaves the same root.
    log = read_tiled_log(tiles.get, size)
    assert len(list(log)) == size
    assert log.root() == root_of(size)


def test_root_and_tiles_at_every_size_up_to_600() -> None:
    builder = TileBuilder()
    full: dict[str, bytes] = {}
    assert builder.root() == root_of(0) and builder.finish() == []
    for size in range(1, 601):
        full.update(builder.append(LEAVES[size - 1]))
        assert builder.root() == root_of(size), size
        assert widths(full | dict(builder.finish())) == expected_widths(size), size


@pytest.mark.parametrize("size", SIZES)
def test_a_full_tile_never_changes(size: int) -> None:
    tiles, builder = build(size)
    completed = dict(builder.append(LEAVES[size]))
    after = {p: d for p, d in tiles.items() if ".p/" not in p} | completed | dict(builder.finish())
    assert widths(after) == expected_widths(size + 1)
    for path, width in expected_widths(size + 1).items():
        assert after[path] == expected_content(path, width), path
    for path, data in tiles.items():
        if ".p/" not in path:
            assert after[path] == data, path  # a full tile is still there, byte for byte
    assert all(".p/" in p for p in set(tiles) - set(after))  # only partial tiles went
    for path in set(tiles) & set(after):
        assert tiles[path] == after[path]  # a partial tile still needed is the same tile
    assert all(".p/" in p for p in set(after) - set(tiles) - set(completed))


def test_building_70000_leaves_is_fast() -> None:
    """Not a benchmark: a linear build of 70,000 leaves takes well under 2 s of CPU."""
    start = time.process_time()
    build(70_000)
    assert time.process_time() - start < 2


def test_empty_and_largest_leaves() -> None:
    builder = TileBuilder()
    builder.append(b"")
    builder.append(b"\xff" * 65_535)
    [(path, data)] = builder.finish()[1:]
    assert path == "tile/entries/000.p/2"
    assert data == b"\x00\x00" + b"\xff\xff" + b"\xff" * 65_535
    assert parse_entry_bundle(data, 2) == [b"", b"\xff" * 65_535]


def test_a_leaf_of_65536_bytes_is_refused() -> None:
    builder = TileBuilder()
    for leaf in LEAVES[:300]:
        builder.append(leaf)
    with pytest.raises(FormatError, match=r"leaf 300 is 65536 bytes.*tile/entries/001"):
        builder.append(b"x" * 65_536)
    assert builder.size == 300


# --- parsing entry bundles ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,width,message",
    [
        (b"\x00\x01a", 2, "ends after 1 of its 2 entries"),
        (b"\x00\x01a\x00", 2, "the length of entry 1 is cut off after its first byte"),
        (b"\x00\x05abc", 1, "entry 0 claims 5 bytes but only 3 remain"),
        (b"\x00\x01a\x00", 1, "1 bytes after its 1 entries"),
        (b"", 1, "ends after 0 of its 1 entries"),
    ],
)
def test_parse_entry_bundle_is_strict(data: bytes, width: int, message: str) -> None:
    with pytest.raises(FormatError, match="^" + re.escape(f"tile/entries/000.p/{width}: {message}")):
        parse_entry_bundle(data, width, where=f"tile/entries/000.p/{width}")


def test_parse_entry_bundle_refuses_impossible_widths() -> None:
    for width in (0, 257):
        with pytest.raises(FormatError, match=r"outside 1\.\.256"):
            parse_entry_bundle(b"", width)


# --- reading a tiled log back ------------------------------------------------------------------

SMALL = 600  # two full tiles and a partial at level 0, a partial level-1 tile of width 2


def test_reading_asks_for_every_tile_and_nothing_else() -> None:
    tiles = built(SMALL)
    asked: list[str] = []

    def read(path: str) -> bytes | None:
        asked.append(path)
        return tiles.get(path)

    log = read_tiled_log(read, SMALL)
    assert list(log) == LEAVES[:SMALL]
    assert sorted(asked) == sorted(p for p, _ in tile_paths(SMALL))
    assert log.root() == root_of(SMALL)


def test_the_empty_log_reads_nothing() -> None:
    log = read_tiled_log(lambda path: pytest.fail(path), 0)
    assert list(log) == []
    assert log.root() == root_of(0)


def test_root_before_the_last_leaf_is_a_bug() -> None:
    log = read_tiled_log(built(SMALL).get, SMALL)
    next(log)
    with pytest.raises(RuntimeError):
        log.root()


def damaged(change: dict[str, bytes | None]) -> tuple[list[bytes], Exception]:
    """Read the small log with some tiles replaced (None: missing); the leaves it gave, and the error."""
    tiles = dict(built(SMALL)) | change
    got: list[bytes] = []
    with pytest.raises((FormatError, ProofError)) as e:
        got.extend(read_tiled_log(tiles.get, SMALL))
    return got, e.value


def flip(data: bytes, bit: int) -> bytes:
    return data[: bit // 8] + bytes([data[bit // 8] ^ (1 << bit % 8)]) + data[bit // 8 + 1 :]


def test_a_missing_tile() -> None:
    got, e = damaged({"tile/0/001": None})
    assert type(e) is FormatError and str(e) == "tile/0/001: missing"
    assert got == LEAVES[:256]  # the first bundle was checked and given; the second never was


def test_a_missing_entry_bundle() -> None:
    got, e = damaged({"tile/entries/002.p/88": None})
    assert type(e) is FormatError and str(e) == "tile/entries/002.p/88: missing"
    assert got == LEAVES[:512]


def test_a_truncated_hash_tile() -> None:
    _, e = damaged({"tile/0/000": built(SMALL)["tile/0/000"][:-1]})
    assert type(e) is FormatError and str(e).startswith("tile/0/000: 8191 bytes, not the 8192 of its 256 hashes")


def test_a_truncated_entry_bundle() -> None:
    _, e = damaged({"tile/entries/001": built(SMALL)["tile/entries/001"][:-1]})
    assert type(e) is FormatError and str(e).startswith("tile/entries/001: entry 255 claims 8 bytes but only 7 remain")


def test_an_entry_bundle_with_trailing_bytes() -> None:
    _, e = damaged({"tile/entries/002.p/88": built(SMALL)["tile/entries/002.p/88"] + b"\x00"})
    assert type(e) is FormatError and str(e) == "tile/entries/002.p/88: 1 bytes after its 88 entries"


def test_a_flipped_bit_in_a_level0_tile() -> None:
    got, e = damaged({"tile/0/001": flip(built(SMALL)["tile/0/001"], 32 * 8 * 7 + 3)})
    assert type(e) is ProofError and str(e).startswith("tile/0/001: hash 7 is ")
    assert f"but leaf 7 of tile/entries/001 hashes to {LEAF_HASHES[256 + 7].hex()}" in str(e)
    assert got == LEAVES[:256]


def test_a_flipped_bit_in_a_partial_level1_tile() -> None:
    got, e = damaged({"tile/1/000.p/2": flip(built(SMALL)["tile/1/000.p/2"], 32 * 8 + 255)})
    assert type(e) is ProofError and str(e).startswith("tile/1/000.p/2: hash 1 is ")
    assert f"but the leaves under it hash to {mth(256, 512).hex()}" in str(e)
    assert got == LEAVES[:512]  # partial tiles are checked with the last bundle, before its leaves


def test_a_flipped_bit_in_a_full_level1_tile() -> None:
    tiles = dict(built(70_000))
    tiles["tile/1/000"] = flip(tiles["tile/1/000"], 32 * 8 * 255)
    got: list[bytes] = []
    with pytest.raises(ProofError, match=r"^tile/1/000: hash 255 is ") as e:
        got.extend(read_tiled_log(tiles.get, 70_000))
    assert mth(255 * 256, 65_536).hex() in str(e.value)
    assert len(got) == 65_536 - 256  # the bundle completing tile/1/000 was held back


def test_a_flipped_bit_in_an_entry_bundle() -> None:
    bundle = built(SMALL)["tile/entries/000"]
    got, e = damaged({"tile/entries/000": flip(bundle, 8 * (2 + len(LEAVES[0])) + 8 * 2 + 1)})  # leaf 1's bytes
    assert type(e) is ProofError and str(e).startswith("tile/0/000: hash 1 is ")
    assert "leaf 1 of tile/entries/000 hashes to" in str(e)
    assert got == []


def test_a_flipped_length_in_an_entry_bundle() -> None:
    bundle = built(SMALL)["tile/entries/000"]
    _, e = damaged({"tile/entries/000": flip(bundle, 7)})  # the first length becomes 0x8006
    assert type(e) is FormatError and str(e).startswith("tile/entries/000: entry 0 claims 32774 bytes")


def test_a_consistent_forgery_still_changes_the_root() -> None:
    """Tiles rebuilt from other leaves pass every tile check; only the root can tell, so the
    caller must compare it with the checkpoint."""
    forged = list(LEAVES[:SMALL])
    forged[3] = b"forged"
    builder = TileBuilder()
    tiles = {p: d for leaf in forged for p, d in builder.append(leaf)} | dict(builder.finish())
    log = read_tiled_log(tiles.get, SMALL)
    assert list(log) == forged
    assert log.root() != root_of(SMALL)
    assert TILE_WIDTH == 256


@pytest.mark.parametrize("size", [0, 1, 255, 256, 257, 511, 512, 513, 65535, 65536, 65537, 70000])
def test_the_read_order_is_the_order_a_tiled_log_reads_in(size: int) -> None:
    """A reader fetching ahead asks for tile_read_order's paths: TiledLog must read exactly those."""
    builder = TileBuilder()
    store: dict[str, bytes] = {}
    for i in range(size):
        store.update(builder.append(i.to_bytes(3, "big")))
    store.update(builder.finish())
    read: list[str] = []

    def fetch(path: str) -> bytes | None:
        read.append(path)
        return store.get(path)

    log = read_tiled_log(fetch, size)
    assert sum(1 for _ in log) == size
    assert read == list(tile_read_order(size))


# --- resuming from a remembered state (release_memory.py) --------------------------------------

RESUME_PAIRS = [
    (0, 1),
    (1, 1),
    (255, 256),
    (256, 256),
    (256, 600),
    (300, 600),
    (511, 513),
    (600, 600),
    (65_535, 70_000),
]


def builder_at(size: int) -> TileBuilder:
    """The state a verifier remembers after reading a log of `size` leaves, through JSON."""
    import json

    log = read_tiled_log(built(size).get, size)
    assert len(list(log)) == size
    return TileBuilder.resumed(json.loads(json.dumps(log.builder.state())))


@pytest.mark.parametrize(("old", "new"), RESUME_PAIRS)
def test_a_resumed_read_gives_the_new_leaves_and_the_root(old: int, new: int) -> None:
    asked: list[str] = []
    tiles = built(new)

    def read(path: str) -> bytes | None:
        asked.append(path)
        return tiles.get(path)

    log = read_tiled_log(read, new, builder_at(old))
    assert list(log) == LEAVES[old:new]
    assert log.root() == root_of(new)
    assert log.first == old
    # Only what the new leaves make: no whole tile of the old tree is read again.
    whole_before = {p for p, w in tile_paths(old) if w == TILE_WIDTH}
    assert not whole_before & set(asked)
    expected = {p for p, _ in tile_paths(new)} - whole_before
    if old == new and old % TILE_WIDTH == 0:
        expected = {p for p in expected if not p.startswith("tile/entries/")}  # no bundle holds a new leaf
    assert set(asked) == expected


@pytest.mark.parametrize(("old", "new"), [(300, 600), (1, 255)])
def test_a_resumed_read_refuses_a_bundle_that_does_not_begin_with_the_old_leaves(old: int, new: int) -> None:
    forged = list(LEAVES[:new])
    forged[old - 1] = b"forged"
    builder = TileBuilder()
    tiles = {p: d for leaf in forged for p, d in builder.append(leaf)} | dict(builder.finish())
    with pytest.raises(NotResumable, match=f"its first {old % 256} entries are not those the log had at {old}"):
        list(read_tiled_log(tiles.get, new, builder_at(old)))


def test_a_resumed_read_still_checks_the_partial_tiles_at_the_same_size() -> None:
    tiles = dict(built(512))
    tiles["tile/1/000.p/2"] = flip(tiles["tile/1/000.p/2"], 3)
    with pytest.raises(ProofError, match=r"^tile/1/000.p/2: hash 0 is "):
        list(read_tiled_log(tiles.get, 512, builder_at(512)))


def test_a_log_shorter_than_the_state_is_refused() -> None:
    with pytest.raises(FormatError, match="a log of 255 leaves cannot go on from 256"):
        read_tiled_log(built(255).get, 255, builder_at(256))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s | {"size": 257}, "rows do not fit its size"),
        (lambda s: s | {"size": -1}, "size is a count"),
        (lambda s: s | {"levels": []}, "has its levels"),
        (lambda s: s | {"entries": "zz"}, "other than hex"),
        (lambda s: s | {"entries": s["entries"][:-2]}, "unfinished bundle"),
        (lambda s: s | {"levels": [*s["levels"], ["00" * 32]]}, "rows do not fit its size"),
        (lambda s: s | {"levels": [["00" * 32, *s["levels"][0][1:]], *s["levels"][1:]]}, "first row is not the hashes"),
    ],
)
def test_a_damaged_state_is_refused(change, message: str) -> None:  # type: ignore[no-untyped-def]
    state = builder_at(300).state()
    with pytest.raises(FormatError, match=message):
        TileBuilder.resumed(change(state))
