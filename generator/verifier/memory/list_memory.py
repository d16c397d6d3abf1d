"""What the verifier remembers of the checksum lists it verified last (a v3 or v4 site's tree of
lists, docs/formats/v3.md, 5; v4.md, 3), so that a list met again with a SHA-256 it had then is
not read again, nor any list below it.

A list names each child's list by its SHA-256, so a list whose own bytes were hashed to that
SHA-256 heads the very lists that were below it then: every list of the subtree is known by the
one SHA-256 its parent names. A one-event release changes the lists on the way from a few leaves
to the root (about fifteen each in a v4 tree of a million items' files); the rest of the tree's
tens of thousands of lists are taken from here as they are, with what the check of them found.

The lists are kept in one file beside the release memory (release_memory.py), written only by a
run that passed, whole or not at all:

- a header line, JSON: the version, the log's origin, the verifier's rules version, the tree's
  rule (by the word for its digits), the number of lists, the length of their bytes, and the
  SHA-256 of all that follows the header (checked when read: a torn or edited file is not used);
- a line per list, in the order the run met them: `i` (inner) or `l` (leaf), its prefix, the
  SHA-256 of its bytes (hashed here, never the one its parent names), its length, and how many
  lists its subtree holds (itself included);
- the lists' bytes, one after the other in that order.

Each list is followed by the lists below it, so a subtree is a run of consecutive lines and bytes,
carried whole into the next run's file. The memory is used only where the release memory is
(this user's alone, the same code, of the release the state file remembers); it vouches for no
file of the site, whose every file is still held to its line.
"""

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.verifier.core.errors import FormatError

LISTS_VERSION = 1
_MAX_HEADER = 1 << 12


@dataclass(frozen=True)
class Remembered:
    """One list as remembered: its node's prefix, whether it is an inner node's, its bytes."""

    prefix: str
    inner: bool
    body: memoryview


class ListMemory:
    """The lists of the release verified last, by prefix."""

    def __init__(self, rows: list[tuple[str, bool, str, int, int, int]], blob: bytes) -> None:
        self.rows = rows  # (prefix, inner, SHA-256, start, end, lists in its subtree)
        self.blob = memoryview(blob)
        self.at = {row[0]: n for n, row in enumerate(rows)}

    def subtree(self, prefix: str, sha256: str) -> range | None:
        """The lists of node `prefix`'s subtree (its own first), if its list was remembered
        with SHA-256 `sha256`; else None, and the list must be read."""
        n = self.at.get(prefix)
        if n is None or self.rows[n][2] != sha256:
            return None
        return range(n, n + self.rows[n][5])

    def lists(self, span: range) -> Iterator[Remembered]:
        for n in span:
            prefix, inner, _, start, end, _ = self.rows[n]
            yield Remembered(prefix, inner, self.blob[start:end])


def lists_file(release_file: Path) -> Path:
    """The lists of the release remembered in `release_file` (release_memory.memory_file)."""
    return release_file.with_suffix(".lists")


def load_lists(path: Path, origin: str, rules: str, rule: str | None) -> ListMemory | None:
    """The lists remembered in `path` for log `origin` by code of `rules` in a tree of `rule`
    (None: any rule, for a reader that takes rows only); None if there are none, or they are
    not such lists, or they were torn or edited."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return _parse_lists(data, origin, rules, rule)
    except (FormatError, ValueError, KeyError, TypeError, IndexError):
        return None


def _parse_lists(data: bytes, origin: str, rules: str, rule: str | None) -> ListMemory | None:
    end = data.find(b"\n", 0, _MAX_HEADER)
    if end < 0:
        raise FormatError("no header")
    header = json.loads(data[:end])
    if (header["v"], header["origin"], header["rules"]) != (LISTS_VERSION, origin, rules):
        return None
    if rule is not None and header["rule"] != rule:
        return None
    count, size = header["lists"], header["bytes"]
    if hashlib.sha256(memoryview(data)[end + 1 :]).hexdigest() != header["sha256"]:
        raise FormatError("the lines and lists are not those written")
    lines = data[end + 1 :].split(b"\n", count)
    if len(lines) != count + 1 or len(lines[count]) != size:
        raise FormatError("fewer lines than lists")
    blob = lines[count]
    rows: list[tuple[str, bool, str, int, int, int]] = []
    start = 0
    for line in lines[:count]:
        kind, prefix, sha, length, below = line.decode("ascii").split(" ")
        if kind not in ("i", "l"):
            raise FormatError(f"a list of kind {kind!r}")
        stop = start + int(length)
        rows.append((prefix, kind == "i", sha, start, stop, int(below)))
        start = stop
    if start != size or any(n + r[5] > count or r[5] < 1 for n, r in enumerate(rows)):
        raise FormatError("lists that do not add up")
    return ListMemory(rows, blob)


@dataclass
class ListRecord:
    """The lists of this run in the order met, each read (its bytes, hashed here) or taken
    with its subtree from the memory, for the next run."""

    pieces: list[tuple[str, bool, str, bytes | memoryview]] = field(default_factory=list)

    def read(self, prefix: str, inner: bool, body: bytes) -> None:
        self.pieces.append((prefix, inner, hashlib.sha256(body).hexdigest(), body))

    def taken(self, memory: ListMemory, span: range) -> None:
        for n in span:
            prefix, inner, sha, start, end, _ = memory.rows[n]
            self.pieces.append((prefix, inner, sha, memory.blob[start:end]))

    def chunks(self, origin: str, rules: str, rule: str) -> Sequence[bytes | memoryview]:
        """The file's bytes, in pieces (the lists' bytes are never joined in memory)."""
        below = _subtree_sizes([p[0] for p in self.pieces])
        lines = "".join(
            f"{'i' if inner else 'l'} {prefix} {sha} {len(body)} {n}\n"
            for (prefix, inner, sha, body), n in zip(self.pieces, below, strict=True)
        ).encode("ascii")
        h = hashlib.sha256(lines)
        for piece in self.pieces:
            h.update(piece[3])
        header = {
            "bytes": sum(len(p[3]) for p in self.pieces),
            "lists": len(self.pieces),
            "origin": origin,
            "rule": rule,
            "rules": rules,
            "sha256": h.hexdigest(),
            "v": LISTS_VERSION,
        }
        head = json.dumps(header, sort_keys=True).encode() + b"\n"
        return [head, lines, *(p[3] for p in self.pieces)]


def _subtree_sizes(prefixes: list[str]) -> list[int]:
    """How many lists each one's subtree holds, itself included, when each list is followed by
    every list below it (a node's prefix begins each of its descendants')."""
    sizes = [1] * len(prefixes)
    open_: list[int] = []  # the lists whose subtree may go on, outermost first
    for n, prefix in enumerate(prefixes):
        while open_ and not prefix.startswith(prefixes[open_[-1]]):
            m = open_.pop()
            sizes[m] = n - m
        open_.append(n)
    for m in open_:
        sizes[m] = len(prefixes) - m
    return sizes
