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
  rule (the word for its digits and a leaf's bound of files), the number of lists, the length of
  their bytes, the SHA-256 of the lines that follow and that of the lists' bytes (both checked
  when read: a torn or edited file is not used);
- a line per list, in the order the run met them: `i` (inner) or `l` (leaf), its prefix, the
  SHA-256 of its bytes (hashed here, never the one its parent names), its length, and how many
  lists its subtree holds (itself included);
- the lists' bytes, one after the other in that order.

Each list is followed by the lists below it, so a subtree is a run of consecutive lines and bytes,
carried whole into the next run's file. The verifier uses it only where it uses the release
memory (this user's alone, the same code, of the release the state file remembers) and the file
is this user's alone too; `verify.py mirror`, which takes only rows from it (by content: a list
is found by its SHA-256, whatever release it came from), where the file and its folder are the
user's alone and of the same code. It vouches for no file of the site, whose every file is still
held to its line.
"""

import hashlib
import json
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from generator.verifier.core.errors import FormatError

LISTS_VERSION = 1
_MAX_HEADER = 1 << 12
# A remembered list passed as a plain list: each of its lines is of this form.
_REMEMBERED_ROW = re.compile(r"([0-9a-f]{64})  ([^\n]+)\n")


@dataclass(frozen=True)
class Remembered:
    """One list as remembered: its node's prefix, whether it is an inner node's, its bytes."""

    prefix: str
    inner: bool
    body: memoryview

    def rows(self) -> list[tuple[str, str]]:
        """Its lines as (SHA-256, path)."""
        return _REMEMBERED_ROW.findall(str(self.body, "utf-8"))


class ListMemory:
    """The lists of the release verified last, by prefix."""

    def __init__(self, rows: list[tuple[str, bool, str, int, int, int]], blob: memoryview) -> None:
        self.rows = rows  # (prefix, inner, SHA-256, start, end, lists in its subtree)
        self.blob = blob
        self.at = {row[0]: n for n, row in enumerate(rows)}

    def subtree(self, prefix: str, sha256: str) -> range | None:
        """The lists of node `prefix`'s subtree (its own first), if its list was remembered
        with SHA-256 `sha256`; else None, and the list must be read."""
        n = self.at.get(prefix)
        if n is None or self.rows[n][2] != sha256:
            return None
        return range(n, n + self.rows[n][5])

    def length(self, n: int) -> int:
        """The length of the bytes of list `n` (a subtree's first: `span.start`)."""
        return self.rows[n][4] - self.rows[n][3]

    def lists(self, span: range) -> Iterator[Remembered]:
        for n in span:
            prefix, inner, _, start, end, _ = self.rows[n]
            yield Remembered(prefix, inner, self.blob[start:end])


def lists_file(release_file: Path) -> Path:
    """The lists of the release remembered in `release_file` (release_memory.memory_file)."""
    return release_file.with_suffix(".lists")


def load_lists(path: Path, origin: str, rules: str, rule: str | None) -> tuple[ListMemory | None, str | None]:
    """The lists remembered in `path` for log `origin` by code of `rules` in a tree of `rule`
    (None: any rule, for a reader that takes rows only), or None and why not (None when there
    is no such file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"{path} cannot be read ({e.strerror or e})"
    try:
        return _parse_lists(data, origin, rules, rule), None
    # A header nested past the parser's depth is as unusable as a torn one.
    except (FormatError, ValueError, KeyError, TypeError, IndexError, RecursionError) as e:
        return None, f"{path}: not used ({e.__class__.__name__}: {e})"


def _parse_lists(data: bytes, origin: str, rules: str, rule: str | None) -> ListMemory:
    end = data.find(b"\n", 0, _MAX_HEADER)
    if end < 0:
        raise FormatError("no header")
    header = json.loads(data[:end])
    if not isinstance(header, dict):
        raise FormatError("the header is not an object")
    if (header["v"], header["origin"], header["rules"]) != (LISTS_VERSION, origin, rules):
        raise FormatError("not the lists of this log by this version of the verifier")
    if rule is not None and header["rule"] != rule:
        raise FormatError(f"lists of a tree split otherwise ({header['rule']}, not {rule})")
    count, size = header["lists"], header["bytes"]
    rows: list[tuple[str, bool, str, int, int, int]] = []
    at = end + 1
    start = 0
    for _ in range(count):
        stop_line = data.index(b"\n", at)
        kind, prefix, sha, length, below = data[at:stop_line].decode("ascii").split(" ")
        if kind not in ("i", "l"):
            raise FormatError(f"a list of kind {kind!r}")
        stop = start + int(length)
        rows.append((prefix, kind == "i", sha, start, stop, int(below)))
        start = stop
        at = stop_line + 1
    blob = memoryview(data)[at:]
    if (
        hashlib.sha256(memoryview(data)[end + 1 : at]).hexdigest() != header["lines"]
        or hashlib.sha256(blob).hexdigest() != header["sha256"]
    ):
        raise FormatError("the lines and lists are not those written")
    if start != size or len(blob) != size or any(n + r[5] > count or r[5] < 1 for n, r in enumerate(rows)):
        raise FormatError("lists that do not add up")
    return ListMemory(rows, blob)


class ListRecord:
    """The lists of this run in the order met, each read (its bytes, hashed here) or taken
    with its subtree from the memory, for the next run. Their bytes go to a temporary file as
    they are met: a million items' lists are tens of MiB, which the run would hold to its end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, bool, str, int]] = []  # prefix, inner, SHA-256, length
        self.hashed = hashlib.sha256()
        self.why_not: str | None = None  # why nothing is recorded (the temporary file failed)
        # Read back and closed by chunks(), or closed by close(): a file without a name.
        self.spool: IO[bytes] | None = None
        try:
            self.spool = tempfile.TemporaryFile()  # noqa: SIM115
        except OSError as e:
            self._fail(e)

    def _fail(self, e: OSError) -> None:
        # The record is only the next run's shortcut: a temporary folder full or unwritable
        # costs that, never this run's verdict.
        self.why_not = f"no temporary file for the checksum lists ({e.strerror or e})"
        self.close()

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None

    # A run that fails, or stops early, never writes its record: its file goes with it.
    __del__ = close

    def _add(self, prefix: str, inner: bool, sha256: str, body: bytes | memoryview) -> None:
        if self.spool is None:
            return
        try:
            self.spool.write(body)
        except OSError as e:
            self._fail(e)
            return
        self.rows.append((prefix, inner, sha256, len(body)))
        self.hashed.update(body)

    def read(self, prefix: str, inner: bool, body: bytes) -> None:
        self._add(prefix, inner, hashlib.sha256(body).hexdigest(), body)

    def taken(self, memory: ListMemory, span: range) -> None:
        for n in span:
            prefix, inner, sha, start, end, _ = memory.rows[n]
            self._add(prefix, inner, sha, memory.blob[start:end])

    def chunks(self, origin: str, rules: str, rule: str) -> Iterator[bytes]:
        """The file's bytes, in pieces (the lists' bytes are read back a MiB at a time)."""
        below = _subtree_sizes([r[0] for r in self.rows])
        lines = "".join(
            f"{'i' if inner else 'l'} {prefix} {sha} {length} {n}\n"
            for (prefix, inner, sha, length), n in zip(self.rows, below, strict=True)
        ).encode("ascii")
        header = {
            "bytes": sum(r[3] for r in self.rows),
            "lines": hashlib.sha256(lines).hexdigest(),
            "lists": len(self.rows),
            "origin": origin,
            "rule": rule,
            "rules": rules,
            "sha256": self.hashed.hexdigest(),
            "v": LISTS_VERSION,
        }
        spool = self.spool
        if spool is None:
            raise OSError(self.why_not or "the checksum lists were written already")
        self.spool = None
        with spool:
            yield json.dumps(header, sort_keys=True).encode() + b"\n"
            yield lines
            spool.seek(0)
            while chunk := spool.read(1 << 20):
                yield chunk


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
