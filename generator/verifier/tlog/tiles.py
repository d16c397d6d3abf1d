"""C2SP tlog-tiles (format v1 §9): the paths of a log's hash tiles and entry bundles, the building of
every tile as the log's leaves stream in, and the reading of a tiled log with every tile checked.

A level-L tile holds 256 consecutive level-8L tree hashes, the roots of complete 256**L-leaf
subtrees (level 0: the leaf hashes); only complete subtrees appear, so the rightmost tile of a
level may be partial. An entry bundle holds the 256 leaves under a level-0 tile. Paths carry no
height, unlike Go's sumdb/tlog: tile/<L>/<N>[.p/<W>] and tile/entries/<N>[.p/<W>].
"""

import functools
from collections.abc import Callable, Iterator

from generator.verifier.core.errors import FormatError, ProofError
from generator.verifier.tlog.merkle import EMPTY_ROOT, leaf_hash, merkle_root, node_hash

_TILE_HEIGHT = 8  # a tile is the bottom of a height-8 subtree: 256 hashes
TILE_WIDTH = 1 << _TILE_HEIGHT
TILE_HASH_BYTES = 32
_TILE_MAX_LEVEL = 63  # C2SP: <L> is 0..63
_ENTRY_MAX_BYTES = 0xFFFF  # the big-endian uint16 length before each leaf of a bundle
_ENTRIES_PREFIX = "tile/entries/"


def tile_number_path(n: int) -> str:
    """<N> of a tile path: 3-digit groups, each but the last prefixed by x, so that no name is
    both a file and a directory (1234067 is x001/x234/067, 5 is 005)."""
    if n < 0:
        raise FormatError(f"tile index {n} is negative")
    digits = str(n)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    return "/".join(["x" + g for g in groups[:-1]] + groups[-1:])


def _tile_width_suffix(width: int) -> str:
    if not 1 <= width <= TILE_WIDTH:
        raise FormatError(f"tile width {width} is outside 1..{TILE_WIDTH}")
    return "" if width == TILE_WIDTH else f".p/{width}"


def hash_tile_path(level: int, index: int, width: int) -> str:
    if not 0 <= level <= _TILE_MAX_LEVEL:
        raise FormatError(f"tile level {level} is outside 0..{_TILE_MAX_LEVEL}")
    return f"tile/{level}/{tile_number_path(index)}{_tile_width_suffix(width)}"


def entry_bundle_path(index: int, width: int) -> str:
    return f"{_ENTRIES_PREFIX}{tile_number_path(index)}{_tile_width_suffix(width)}"


def _tiles_of_row(count: int, path: Callable[[int, int], str]) -> list[tuple[str, int]]:
    """The tiles holding `count` consecutive hashes (or entries): full ones, then the partial."""
    full, rest = divmod(count, TILE_WIDTH)
    row = [(path(i, TILE_WIDTH), TILE_WIDTH) for i in range(full)]
    return [*row, (path(full, rest), rest)] if rest else row


def tile_paths(size: int) -> list[tuple[str, int]]:
    """Every tile of a log of `size` leaves, with its width: the hash tiles level by level (a hash
    tile is 32 bytes × width), then the entry bundles (whose bytes depend on the leaves).

    Level L has floor(size / 256**L) hashes, so its partial tile has that many mod 256; an empty
    tile does not exist, and the levels end where no complete 256**L-leaf subtree is left."""
    if size < 0:
        raise FormatError(f"a log cannot have {size} leaves")
    out: list[tuple[str, int]] = []
    count, level = size, 0
    while count:
        out += _tiles_of_row(count, functools.partial(hash_tile_path, level))
        count, level = count // TILE_WIDTH, level + 1
    return out + _tiles_of_row(size, entry_bundle_path)


def parse_entry_bundle(data: bytes, width: int, where: str = "entry bundle") -> list[bytes]:
    """The `width` leaves of an entry bundle, each stored as its length (big-endian uint16) then
    its bytes. Fewer entries, a length running past the end or bytes after the last are refused."""
    _tile_width_suffix(width)
    leaves: list[bytes] = []
    pos = 0
    for i in range(width):
        if pos == len(data):
            raise FormatError(f"{where}: ends after {i} of its {width} entries")
        if pos + 1 == len(data):
            raise FormatError(f"{where}: the length of entry {i} is cut off after its first byte")
        n = int.from_bytes(data[pos : pos + 2], "big")
        pos += 2
        if len(data) - pos < n:
            raise FormatError(f"{where}: entry {i} claims {n} bytes but only {len(data) - pos} remain")
        leaves.append(data[pos : pos + n])
        pos += n
    if pos != len(data):
        raise FormatError(f"{where}: {len(data) - pos} bytes after its {width} entries")
    return leaves


class NotResumable(ProofError):
    """The log read does not begin with the leaves of the state it was resumed from."""


class TileBuilder:
    """Every tile of a log, built as its leaves are appended. Memory: one unfinished tile per level
    (log_256 of the size levels) and the unfinished entry bundle. Work: each leaf costs one leaf
    hash, and each full tile the 255 node hashes of its root, which goes one level up."""

    def __init__(self) -> None:
        self.size = 0
        self._levels: list[list[bytes]] = [[]]  # hashes of each level's rightmost, unfinished tile
        self._entries = bytearray()  # the unfinished entry bundle

    def append(self, leaf: bytes) -> list[tuple[str, bytes]]:
        """Add a leaf; return the full tiles (entry bundle, hash tiles of any level) it completes."""
        if len(leaf) > _ENTRY_MAX_BYTES:
            raise FormatError(
                f"leaf {self.size} is {len(leaf)} bytes, more than the {_ENTRY_MAX_BYTES} that the uint16"
                f" length prefix of {entry_bundle_path(self.size >> _TILE_HEIGHT, TILE_WIDTH)} allows"
            )
        self._entries += len(leaf).to_bytes(2, "big")
        self._entries += leaf
        self._levels[0].append(leaf_hash(leaf))
        self.size += 1
        if self.size % TILE_WIDTH:
            return []  # 255 leaves in 256 stop here
        # The leaf completes a bundle, a level-0 tile and perhaps one tile on each level above. A
        # full tile never changes again: publish it, and carry its root one level up.
        done = [(entry_bundle_path((self.size >> _TILE_HEIGHT) - 1, TILE_WIDTH), bytes(self._entries))]
        self._entries.clear()
        level = 0
        while len(row := self._levels[level]) == TILE_WIDTH:
            index = (self.size >> (_TILE_HEIGHT * (level + 1))) - 1
            done.append((hash_tile_path(level, index, TILE_WIDTH), b"".join(row)))
            self._levels[level] = []
            if level + 1 == len(self._levels):
                self._levels.append([])
            self._levels[level + 1].append(merkle_root(row))
            level += 1
        return done

    def finish(self) -> list[tuple[str, bytes]]:
        """The partial tiles of the log at its current size (a checkpoint's): each level's
        unfinished tile and the unfinished entry bundle. Appending may go on afterwards."""
        out = [
            (hash_tile_path(level, self.size >> (_TILE_HEIGHT * (level + 1)), len(row)), b"".join(row))
            for level, row in enumerate(self._levels)
            if row
        ]
        if self.size % TILE_WIDTH:
            out.append((entry_bundle_path(self.size >> _TILE_HEIGHT, self.size % TILE_WIDTH), bytes(self._entries)))
        return out

    def unfinished(self) -> bytes:
        """The unfinished bundle's bytes: the leaves after the last whole 256."""
        return bytes(self._entries)

    def state(self) -> dict[str, object]:
        """What resumed() needs to go on from here: the size, each level's unfinished row (hex)
        and the unfinished bundle's bytes (hex); a few KiB whatever the size of the log."""
        return {
            "size": self.size,
            "levels": [[h.hex() for h in row] for row in self._levels],
            "entries": self._entries.hex(),
        }

    @classmethod
    def resumed(cls, state: object) -> "TileBuilder":
        """A builder in the state state() gave; FormatError if it is not one (a size that its
        rows and bundle do not fit)."""
        if not isinstance(state, dict):
            raise FormatError("a tile builder's state is an object")
        size, levels, entries = state.get("size"), state.get("levels"), state.get("entries")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise FormatError("a tile builder's size is a count")
        if not isinstance(levels, list) or not levels or not isinstance(entries, str):
            raise FormatError("a tile builder's state has its levels and its unfinished bundle")
        b = cls()
        try:
            b._levels = [[bytes.fromhex(h) for h in row] for row in levels]
            b._entries = bytearray.fromhex(entries)
        except (TypeError, ValueError) as e:
            raise FormatError(f"a tile builder's state holds something other than hex: {e}") from None
        count = size
        for row in b._levels:
            if len(row) != count % TILE_WIDTH or any(len(h) != TILE_HASH_BYTES for h in row):
                raise FormatError("a tile builder's rows do not fit its size")
            count //= TILE_WIDTH
        if count:
            raise FormatError("a tile builder's levels do not reach the top of its tree")
        if size % TILE_WIDTH:
            leaves = parse_entry_bundle(
                bytes(b._entries), size % TILE_WIDTH, where="a tile builder's unfinished bundle"
            )
            if [leaf_hash(leaf) for leaf in leaves] != b._levels[0]:
                raise FormatError("a tile builder's first row is not the hashes of its unfinished bundle's leaves")
        elif b._entries:
            raise FormatError("a tile builder of whole bundles holds an unfinished one")
        b.size = size
        return b

    def root(self) -> bytes:
        """The RFC 6962 root of the leaves so far, from the unfinished tiles alone: read from the top
        level down, their hashes are the roots of the tree's complete subtrees, largest first, once
        each tile is split into complete subtrees by the binary digits of its width."""
        subtrees: list[bytes] = []
        for row in reversed(self._levels):
            start = 0
            for bit in (1 << k for k in reversed(range(_TILE_HEIGHT))):
                if len(row) & bit:
                    subtrees.append(merkle_root(row[start : start + bit]))
                    start += bit
        if not subtrees:
            return EMPTY_ROOT
        # RFC 6962 splits at the largest power of two below the size, so they fold from the right.
        root = subtrees.pop()
        while subtrees:
            root = node_hash(subtrees.pop(), root)
        return root


def tile_read_order(size: int) -> Iterator[str]:
    """The paths TiledLog reads for a log of `size` leaves, in the order it reads them: each entry
    bundle, then the full hash tiles its leaves complete (level 0, and a level above each time a
    tile below completes its 256th), and after the last bundle the partial hash tiles, level by
    level. A reader fetching ahead fetches these (a test holds the two to the same order)."""
    bundles = -(-size // TILE_WIDTH)
    for index in range(bundles):
        width = min(TILE_WIDTH, size - index * TILE_WIDTH)
        yield entry_bundle_path(index, width)
        if width == TILE_WIDTH:
            done, level = index + 1, 0  # full tiles at this level so far
            yield hash_tile_path(level, done - 1, TILE_WIDTH)
            while done % TILE_WIDTH == 0:
                done, level = done // TILE_WIDTH, level + 1
                yield hash_tile_path(level, done - 1, TILE_WIDTH)
    yield from (p for p in partial_tile_paths(size) if not p.startswith(_ENTRIES_PREFIX))


def partial_tile_paths(size: int) -> list[str]:
    """The partial tiles of a log of `size` leaves: each level's, if its count is no multiple of
    256, level by level, then the partial entry bundle, if any. A look at log_256(size) levels,
    where tile_paths lists every tile."""
    out = []
    count, level = size, 0
    while count:
        if count % TILE_WIDTH:
            out.append(hash_tile_path(level, count // TILE_WIDTH, count % TILE_WIDTH))
        count, level = count // TILE_WIDTH, level + 1
    if size % TILE_WIDTH:
        out.append(entry_bundle_path(size // TILE_WIDTH, size % TILE_WIDTH))
    return out


class TiledLog(Iterator[bytes]):
    """The leaves of a tiled log of `size` leaves, in order, read from its entry bundles through
    `read` (a path to its bytes, or None when missing). Every hash tile of the log is compared with
    the one the leaves give, and a bundle's leaves are yielded only once every tile they complete
    has been checked. After the last leaf, root() is their RFC 6962 root, for the caller to compare
    with its checkpoint. Memory: one bundle, and one tile per level."""

    def __init__(self, read: Callable[[str], bytes | None], size: int, resume: TileBuilder | None = None) -> None:
        if size < 0:
            raise FormatError(f"a log cannot have {size} leaves")
        if resume is not None and resume.size > size:
            raise FormatError(f"a log of {size} leaves cannot go on from {resume.size}")
        self.size = size
        self._read = read
        # Resumed, the tiles that hold only leaves before `first` are not read: the caller knows
        # them to be the ones it checked when it built `resume` (release_memory.py).
        self._built = resume or TileBuilder()
        self.first = self._built.size
        self._root: bytes | None = None
        self._leaves = self._each_leaf()

    def __next__(self) -> bytes:
        return next(self._leaves)

    @property
    def builder(self) -> TileBuilder:
        """The tiles built so far: after the last leaf, the state to resume from next time."""
        return self._built

    def root(self) -> bytes:
        if self._root is None:
            raise RuntimeError("the root of a tiled log is known only once its last leaf has been read")
        return self._root

    def _each_leaf(self) -> Iterator[bytes]:
        bundles = -(-self.size // TILE_WIDTH)
        for index in range(self.first // TILE_WIDTH, bundles):
            width = min(TILE_WIDTH, self.size - index * TILE_WIDTH)
            bundle = entry_bundle_path(index, width)
            data = self._fetch_tile(bundle)
            leaves = parse_entry_bundle(data, width, where=bundle)
            if (done := self.first - index * TILE_WIDTH) > 0:
                # The bundle the resumed builder stopped in: its first leaves are those it holds.
                if not data.startswith(self._built.unfinished()):
                    raise NotResumable(f"{bundle}: its first {done} entries are not those the log had at {self.first}")
                leaves = leaves[done:]
            made = [tile for leaf in leaves for tile in self._built.append(leaf)]
            if index == bundles - 1:
                made += self._built.finish()
            for path, expected in made:
                # A bundle parsed strictly re-encodes to its own bytes: only hash tiles need reading.
                if not path.startswith(_ENTRIES_PREFIX):
                    self._check_hash_tile(path, expected, bundle)
            yield from leaves
        if self.first == self.size and not self.size % TILE_WIDTH:
            # Resumed at this very size, on a whole bundle: no bundle is read, but the partial
            # tiles of the levels above are this release's files, and are checked all the same.
            for path, expected in self._built.finish():
                self._check_hash_tile(path, expected, "the leaves")
        self._root = self._built.root()

    def _fetch_tile(self, path: str) -> bytes:
        data = self._read(path)
        if data is None:
            raise FormatError(f"{path}: missing")
        return data

    def _check_hash_tile(self, path: str, expected: bytes, bundle: str) -> None:
        data = self._fetch_tile(path)
        if len(data) != len(expected):
            raise FormatError(
                f"{path}: {len(data)} bytes, not the {len(expected)} of its {len(expected) // TILE_HASH_BYTES} hashes"
            )
        if data == expected:
            return
        n = TILE_HASH_BYTES
        i = next(i for i in range(0, len(data), n) if data[i : i + n] != expected[i : i + n]) // n
        # A level-0 tile is checked right after the bundle under it, so hash i is that bundle's leaf i.
        source = f"leaf {i} of {bundle} hashes" if path.startswith("tile/0/") else "the leaves under it hash"
        found, computed = data[i * n : (i + 1) * n].hex(), expected[i * n : (i + 1) * n].hex()
        raise ProofError(f"{path}: hash {i} is {found}, but {source} to {computed}")


def read_tiled_log(read: Callable[[str], bytes | None], size: int, resume: TileBuilder | None = None) -> TiledLog:
    """The leaves of the tiled log of `size` leaves that `read` serves, every tile checked (TiledLog);
    with `resume`, only the leaves after its size, and the tiles they complete or leave partial."""
    return TiledLog(read, size, resume)


def bundles_from(start: int, size: int) -> list[tuple[str, int, int]]:
    """The entry bundles holding leaves `start` to `size` - 1 of a log of `size` leaves: (path,
    width, how many of its first entries come before `start`). What a reader that remembers the
    tree up to `start` (its compact range) reads to extend it, and nothing else."""
    if not 0 <= start <= size:
        raise FormatError(f"entries from {start} of a log of {size} leaves")
    out = []
    for i in range(start // TILE_WIDTH, -(-size // TILE_WIDTH)):
        width = min(TILE_WIDTH, size - i * TILE_WIDTH)
        out.append((entry_bundle_path(i, width), width, max(0, start - i * TILE_WIDTH)))
    return out
