"""Consistency proofs read from a log's hash tiles (C2SP tlog-tiles, RFC 9162 §2.1.4.1): PROOF(m, D[n])
made from the tiles of the log at size n, reading only the O(log n) tiles that hold its nodes.

Format v3 publishes one consistency proof per release, and a `.tlog-proof` stays pinned to the
checkpoint of the release that first published it, so a reader goes from that checkpoint to
today's with a proof between two sizes nobody wrote down: every node of it is an aligned complete
subtree of the tree of size n, and such a subtree of height h = 8L + r is the RFC 6962 root of 2^r
consecutive hashes of one level-L tile. check.js (`consistencyFromTiles`) does the same in the
browser. Nothing here is trusted: the proof is then checked against both roots
(merkle.verify_consistency), so a wrong tile only makes that check fail.
"""

from collections.abc import Callable, Iterator

from generator.verifier.core.errors import FormatError, ProofError
from generator.verifier.tlog.merkle import merkle_root, node_hash
from generator.verifier.tlog.tiles import TILE_HASH_BYTES, TILE_WIDTH, hash_tile_path

_LEVELS_PER_TILE = TILE_WIDTH.bit_length() - 1  # 8: a level-L tile holds the level-8L nodes of the tree


def consistency_ranges(old_size: int, new_size: int) -> list[tuple[int, int]]:
    """The leaf ranges [lo, hi) whose MTH are the hashes of RFC 9162 §2.1.4.1 PROOF(old_size,
    D[new_size]), in the proof's order (the order generator/core/proofs.py gives them)."""
    if not 0 <= old_size <= new_size:
        raise ProofError(f"sizes {old_size} → {new_size}: the new tree must not be smaller")
    if old_size in (0, new_size):
        return []
    ranges: list[tuple[int, int]] = []
    lo, hi, m, complete = 0, new_size, old_size, True
    while m != hi - lo:
        k = 1 << ((hi - lo - 1).bit_length() - 1)  # RFC 6962 splits at the largest power of two below
        if m <= k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        ranges.append((lo, hi))
    ranges.reverse()
    return ranges


def complete_subtrees(lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The aligned complete subtrees (height, index) whose RFC 6962 fold is MTH(D[lo:hi]), largest
    first, for a range as the proof's recursion leaves it (lo a multiple of the power of two at or
    above hi - lo): the binary digits of hi - lo, from the top."""
    while lo < hi:
        height = (hi - lo).bit_length() - 1
        while lo % (1 << height):
            height -= 1
        yield height, lo >> height
        lo += 1 << height


def _tile_of(height: int, index: int, size: int) -> tuple[str, int, int, int]:
    """Where node (height, index) of the tree of `size` leaves lies: the path of the level-L tile
    (its width at that size), the first of its hashes under the node, and how many."""
    level, rest = divmod(height, _LEVELS_PER_TILE)
    first = index << rest
    tile = first >> _LEVELS_PER_TILE
    width = min(TILE_WIDTH, (size >> (_LEVELS_PER_TILE * level)) - tile * TILE_WIDTH)
    return hash_tile_path(level, tile, width), width, first % TILE_WIDTH, 1 << rest


class _Tiles:
    """The hash tiles read so far, each read once and its length checked."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self.read: dict[str, bytes] = {}

    def hashes(self, path: str, width: int, start: int, count: int) -> list[bytes]:
        if path not in self.read:
            data = self._read(path)
            if data is None:
                raise FormatError(f"{path}: missing")
            if len(data) != width * TILE_HASH_BYTES:
                raise FormatError(f"{path}: {len(data)} bytes, not the {width * TILE_HASH_BYTES} of its {width} hashes")
            self.read[path] = data
        data = self.read[path]
        n = TILE_HASH_BYTES
        return [data[i * n : (i + 1) * n] for i in range(start, start + count)]


def consistency_proof_from_tiles(
    read: Callable[[str], bytes | None], old_size: int, new_size: int
) -> tuple[list[bytes], list[str]]:
    """PROOF(old_size, D[new_size]) from the hash tiles of the log at `new_size` that `read` serves
    (a path under the log prefix, `tile/<L>/<N>[.p/<W>]`, to its bytes or None), and the paths of
    the tiles it read, in the order it first read them. A missing tile, or one of the wrong
    length, raises FormatError naming it; a tile with wrong hashes gives a proof that
    merkle.verify_consistency refuses."""
    tiles = _Tiles(read)
    proof: list[bytes] = []
    for lo, hi in consistency_ranges(old_size, new_size):
        subtrees = [merkle_root(tiles.hashes(*_tile_of(h, i, new_size))) for h, i in complete_subtrees(lo, hi)]
        node = subtrees.pop()
        while subtrees:  # RFC 6962 folds a range's complete subtrees from the right
            node = node_hash(subtrees.pop(), node)
        proof.append(node)
    return proof, list(tiles.read)


def root_from_tiles(read: Callable[[str], bytes | None], old_size: int, new_size: int) -> bytes:
    """MTH(D[0:old_size]), the root of the log's first `old_size` leaves, from the hash tiles of
    the log at `new_size` that `read` serves (as consistency_proof_from_tiles reads them): its
    complete subtrees folded from the right. Nothing vouches for it until a consistency proof from
    the same tiles verifies it against the root of the tree of `new_size`."""
    if not 0 <= old_size <= new_size:
        raise ProofError(f"sizes {old_size} → {new_size}: the new tree must not be smaller")
    tiles = _Tiles(read)
    subtrees = [merkle_root(tiles.hashes(*_tile_of(h, i, new_size))) for h, i in complete_subtrees(0, old_size)]
    node = subtrees.pop() if subtrees else merkle_root([])
    while subtrees:
        node = node_hash(subtrees.pop(), node)
    return node
