"""The replayed ledger, remembered between commands: `<private>/cache/ledger.snapshot` and
`<private>/cache/ledger.commits`.

Replaying a million-event ledger takes half a minute; a command that adds one event should not
pay it, nor read a million commits to learn about the one item it touches. After each command
and each build the replayed state is saved in two files: the commitment arrays (ids, leaf
indexes, gates, commitments, times; about 70 bytes an item) in `ledger.commits`, written again
only when a commit added items, each block of it with its SHA-256 in its header; and everything
else (generator.verifier's snapshot format, with no commits in it) in `ledger.snapshot`, which
names the commits file by the SHA-256 of its header and is bound to the ledger bytes it was made
from: their length, the SHA-256 of each whole MiB of them and of the rest, the ledger file's
identity (device, inode, size, modification time) when it ended there, and the Merkle tree they
form (size, root and compact range).

A reader whose ledger file still has that identity checks the last MiB alone; any other hashes
every MiB (one pass in C, a fraction of a second for a million lines). It then replays only the
lines after them, and falls back to a full replay whenever anything disagrees: a snapshot that
is missing, torn, edited, made of another ledger, or longer than the ledger is rebuilt, never
trusted. A command (`lazy`) reads the commits file's blocks only as it looks items up, each
checked against its hash when first read: a damaged block stops the command with an error that
says so, and the cache is removed, so that the next command replays. It is a cache: losing it
costs one slow replay, so it is written atomically but not flushed to disk, and its hashes
catch what a crash leaves.

The snapshot lives in the private directory because the site never needs it, and it is only
ever a shortcut to the state a replay of the same bytes would reach.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
from array import array
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.state.cache_file import BlockFile, Piece, Staged, block_file_pieces, stage_cache
from generator.verifier import (
    SNAPSHOT_SECTIONS,
    FormatError,
    IdIndex,
    Ledger,
    MerkleStream,
    Problem,
    frontier_of,
    leaf_hash,
    load_snapshot,
    snapshot_bytes,
    stream_from,
)

SNAPSHOT_NAME = "ledger.snapshot"
COMMITS_NAME = "ledger.commits"
# The home page lists the latest events: kept here so that a build from the snapshot has them.
LATEST_EVENTS = 12
# The ledger is bound in chunks of this many bytes: the last one alone is read when the file
# is still the one the snapshot was saved beside.
CHUNK = 1 << 20
_COMMITS_MAGIC = b"transparency ledger commits v1\n"
# The arrays of a Ledger and its IdIndex, in file order, with their typecodes: the snapshot's.
_SECTIONS = SNAPSHOT_SECTIONS


class _Chunks:
    """The SHA-256 of each whole CHUNK of the ledger read so far, and of the bytes after them."""

    def __init__(self, done: list[str] | None = None, tail: bytes = b"") -> None:
        self.done = done or []
        self.tail = hashlib.sha256(tail)
        self.tail_len = len(tail)

    def update(self, data: bytes) -> None:
        while data:
            part = data[: CHUNK - self.tail_len]
            self.tail.update(part)
            self.tail_len += len(part)
            data = data[len(part) :]
            if self.tail_len == CHUNK:
                self.done.append(self.tail.hexdigest())
                self.tail, self.tail_len = hashlib.sha256(), 0


@dataclass
class ReplayStart:
    """Where a replay begins: an empty ledger, or a snapshot's state at `offset` bytes."""

    ledger: Ledger = field(default_factory=Ledger)
    stream: MerkleStream = field(default_factory=MerkleStream)
    offset: int = 0
    chunks: _Chunks = field(default_factory=_Chunks)  # of the ledger's first `offset` bytes
    latest: deque[tuple[int, dict[str, Any]]] = field(default_factory=lambda: deque(maxlen=LATEST_EVENTS))
    why_not: str | None = None  # why the snapshot was not used, when there was one
    loaded: int = 0  # the leaves the snapshot held
    # The key spans the replay made, when something after it gave the ring its first key from
    # keys.json (gather does): a snapshot holds what a replay makes, nothing else.
    spans: int | None = None
    # The commits file the state came from and how many commits it holds: saved again as it is
    # while no commit was added.
    commits_id: str | None = None
    commits_rows: int = -1
    rebind: bool = False  # the ledger file was not the one the snapshot names: every MiB was hashed

    def moved_on(self) -> bool:
        """Whether a replay from here reached further than the snapshot, or checked every MiB of
        a ledger file the snapshot was not saved beside (a copy, a restored backup), and nothing
        was applied beyond what it read: the state is worth saving, and still the file's."""
        return self.stream.size == self.ledger.size and (self.ledger.size != self.loaded or self.rebind)

    def advance(self, line: bytes) -> None:
        """Count one more line of the ledger (with its newline) as read: its bytes and its leaf."""
        self.chunks.update(line)
        self.offset += len(line)
        self.stream.append(leaf_hash(line[:-1] if line.endswith(b"\n") else line))

    def take(self, index: int, leaf: dict[str, Any], line: bytes) -> None:
        """Follow one more valid line, parsed as `leaf`."""
        self.advance(line)
        self.latest.append((index, leaf))


@functools.cache
def rules_version() -> str:
    """The SHA-256 of the verifier's sources and of the ledger file's reader: a snapshot replayed
    under other rules (an older version that let a leaf through) is replayed again rather than
    believed."""
    h = hashlib.sha256()
    root = Path(__file__).parent.parent  # generator/
    verifier = sorted((root / "verifier").rglob("*.py"))
    for source in [*verifier, root / "state" / "ledger_cache.py", root / "program" / "ledgerfile.py"]:
        h.update(source.relative_to(root).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    return h.hexdigest()


def snapshot_path(paths: Paths) -> Path:
    return paths.private / "cache" / SNAPSHOT_NAME


def commits_path(paths: Paths) -> Path:
    return paths.private / "cache" / COMMITS_NAME


def start_replay(paths: Paths, f: BinaryIO, lazy: bool = False) -> ReplayStart:
    """The snapshot's state if it still describes the first bytes of `f` (left positioned just
    after them), else an empty start (`f` at 0) saying why. With `lazy` (a command), the commit
    arrays stay in their file, read a block at a time as items are looked up; else they are read
    and checked whole."""
    path = snapshot_path(paths)
    f.seek(0)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ReplayStart()
    except OSError as e:
        return ReplayStart(why_not=f"{paths.show(path)} cannot be read ({e.strerror or e})")
    try:
        ledger, extra = load_snapshot(data)
        offset, chunks, tail = extra["ledger_bytes"], extra["ledger_chunks"], extra["ledger_tail"]
        stream = stream_from(extra["frontier"])
        latest = deque(((int(i), leaf) for i, leaf in extra["latest"]), maxlen=LATEST_EVENTS)
        if extra["rules"] != rules_version():
            raise FormatError("it was made by another version of the ledger's rules")
        if not isinstance(offset, int) or offset < 0 or not isinstance(chunks, list) or len(chunks) != offset // CHUNK:
            raise FormatError("a malformed length")
        commits = _Commits(paths, extra["commits"])
        commits.install(ledger)
        if not lazy:
            commits.materialize(ledger)
        if stream.size != ledger.size or stream.root().hex() != extra["root"]:
            raise FormatError("its tree does not match its ledger state")
    except (FormatError, KeyError, TypeError, ValueError, OSError) as e:
        return ReplayStart(why_not=f"{paths.show(path)} is damaged ({e})")
    except InputError as e:  # a block of the commits file that does not hash to its value
        return ReplayStart(why_not=f"{paths.show(path)} is damaged ({e.problems[0].message})")
    del data
    same_file = extra.get("ledger_stat") == _stat_key(os.fstat(f.fileno()))
    why_not = _check_binding(f, offset, chunks, tail, same_file)
    if why_not is not None:
        f.seek(0)
        return ReplayStart(why_not=f"{paths.show(path)} {why_not}")
    hashed = _Chunks(list(chunks), _read_tail(f, offset))
    return ReplayStart(
        ledger,
        stream,
        offset,
        hashed,
        latest,
        loaded=ledger.size,
        commits_id=commits.id,
        commits_rows=commits.rows,
        rebind=not same_file,
    )


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _read_tail(f: BinaryIO, offset: int) -> bytes:
    f.seek(offset - offset % CHUNK)
    return f.read(offset % CHUNK)


def _check_binding(f: BinaryIO, offset: int, chunks: list[str], tail: str, same_file: bool) -> str | None:
    """Why the ledger's first `offset` bytes are not the ones the snapshot was made from, or
    None (and `f` left at `offset`). The file the snapshot was saved beside, unchanged since (its
    identity and times the same), has its last chunk checked; any other file every chunk."""
    whole = offset - offset % CHUNK
    if not same_file:
        f.seek(0)
        for n, digest in enumerate(chunks):
            chunk = f.read(CHUNK)
            if len(chunk) < CHUNK:
                return "describes a longer ledger than today's"
            if hashlib.sha256(chunk).hexdigest() != digest:
                return f"was made from another ledger (its bytes differ in its MiB {n})"
    rest = _read_tail(f, offset)
    if len(rest) < offset - whole:
        return "describes a longer ledger than today's"
    if hashlib.sha256(rest).hexdigest() != tail:
        return "was made from another ledger (its last bytes differ)"
    return None


def follow_appended(paths: Paths, start: ReplayStart, f: BinaryIO) -> None:
    """After a command appended its lines to `f` (which `start` had replayed to its end, and
    whose ledger has applied the new leaves), follow them and save the state reached."""
    f.seek(start.offset)
    tail: deque[tuple[int, bytes]] = deque(maxlen=LATEST_EVENTS)
    for line in f:
        if not line.endswith(b"\n"):
            return  # not what a command appends: leave it to the next replay
        start.advance(line)
        tail.append((start.stream.size - 1, line[:-1]))
    if start.stream.size != start.ledger.size:
        return
    try:
        start.latest.extend((i, json.loads(raw)) for i, raw in tail)
    except ValueError:
        return
    save(paths, start)


def save(paths: Paths, start: ReplayStart) -> None:
    """Remember `start` (a replay that reached the end of a valid ledger) for the next reader.
    A failure to write is not an error: the next reader replays."""
    staged = stage(paths, start)
    if staged is not None:
        staged.commit()


def stage(paths: Paths, start: ReplayStart) -> Staged | None:
    """`save`, written beside its place until the caller commits it."""
    commits: Staged | None = None
    rows = start.ledger.commit_count
    if start.commits_id is not None and rows == start.commits_rows and commits_path(paths).is_file():
        commits_id = start.commits_id  # the commit arrays only grow: the same rows, the same bytes
    else:
        data, commits_id = _commits_bytes(start.ledger)
        commits = stage_cache(commits_path(paths), data)
        if commits is None:
            return None
    snapshot = stage_cache(snapshot_path(paths), _snapshot(paths, start, commits_id))
    if snapshot is None:
        if commits is not None:
            commits.discard()
        return None
    return _StagedPair(commits, snapshot)


class _StagedPair(Staged):
    """The commits file, when it changed, put in place before the snapshot that names it: a
    crash between the two leaves a snapshot whose commits file is not the one it names, which
    its reader refuses."""

    def __init__(self, first: Staged | None, second: Staged) -> None:
        super().__init__(second.tmp, second.path)
        self.first = first

    def commit(self) -> bool:
        if self.first is not None and not self.first.commit():
            super().discard()
            return False
        return super().commit()

    def discard(self) -> None:
        if self.first is not None:
            self.first.discard()
        super().discard()


def _snapshot(paths: Paths, start: ReplayStart, commits_id: str) -> bytes:
    try:
        st = os.stat(paths.ledger_file)
        stat = _stat_key(st) if st.st_size == start.offset else None
    except OSError:
        stat = None
    extra = {
        "ledger_bytes": start.offset,
        "ledger_chunks": start.chunks.done,
        "ledger_tail": start.chunks.tail.hexdigest(),
        "ledger_stat": stat,
        "commits": {"id": commits_id, "rows": start.ledger.commit_count},
        "frontier": frontier_of(start.stream),
        "root": start.stream.root().hex(),
        "latest": [[i, leaf] for i, leaf in start.latest],
        "rules": rules_version(),
    }
    # The commit arrays are in their own file: the snapshot holds the rest, with none of them.
    shell = copy.copy(start.ledger)
    shell.__class__ = Ledger
    shell._commit_ids = IdIndex(start.ledger._commit_ids.parts()[0])
    shell._commit_index, shell._commit_gate, shell._commit_time = array("q"), array("H"), array("I")
    shell._commitments = bytearray()
    return snapshot_bytes(shell, extra, start.spans)


def _commits_bytes(ledger: Ledger) -> tuple[list[Piece], str]:
    """The commits file of `ledger` as pieces to write (its arrays as views of the ledger's own,
    not copies), and its id (the SHA-256 of its header)."""
    _, blob, ends, table = ledger._commit_ids.parts()
    arrays = [blob, ends, table, ledger._commit_index, ledger._commit_gate, ledger._commitments, ledger._commit_time]
    sections: list[tuple[str, str, Piece]] = [
        (name, code, memoryview(cast(Any, a)).cast("B")) for (name, code), a in zip(_SECTIONS, arrays, strict=True)
    ]
    return block_file_pieces(_COMMITS_MAGIC, {"rows": ledger.commit_count}, sections)


class _Commits:
    """The commits file, open (a BlockFile): its header checked against the id the snapshot
    names, its arrays read a checked block at a time."""

    def __init__(self, paths: Paths, named: Any) -> None:
        self.paths = paths
        path = commits_path(paths)
        try:
            self.file = BlockFile(path, _COMMITS_MAGIC, self.damaged)
        except ValueError as e:
            raise FormatError(f"{paths.show(path)}: {e}") from None
        self.id = self.file.id
        self.rows: int = self.file.meta["rows"]
        self.sections = self.file.sections
        if self.id != named["id"] or self.rows != named["rows"]:
            raise FormatError(f"{paths.show(path)} is not the commits file it names")
        if [[n, s.code] for n, s in self.sections.items()] != [list(s) for s in _SECTIONS]:
            raise FormatError(f"{paths.show(path)}: the sections are not this version's")
        s, n = self.sections, self.rows
        table = len(s["ids_table"])
        if (
            len(s["ids_ends"]) != n
            or table < 2 * n
            or table & (table - 1)
            or any(len(s[k]) != n for k in ("commit_index", "commit_gate", "commit_time"))
            or len(s["commitments"]) != 32 * n
            or len(s["ids_blob"]) != (s["ids_ends"][n - 1] if n else 0)
        ):
            raise FormatError(f"{paths.show(path)}: the commit arrays disagree in length")

    def install(self, ledger: Ledger) -> None:
        """Give `ledger` (a snapshot's, with no commits) these commit arrays, read as needed."""
        s: Any = self.sections
        salt = ledger._commit_ids.parts()[0]
        ledger._commit_ids = IdIndex.from_parts(salt, s["ids_blob"], s["ids_ends"], s["ids_table"])
        ledger._commit_index, ledger._commit_gate = s["commit_index"], s["commit_gate"]
        ledger._commitments, ledger._commit_time = s["commitments"], s["commit_time"]
        ledger.__class__ = CommandLedger
        ledger._lazy_commits = self  # type: ignore[attr-defined]

    def materialize(self, ledger: Ledger) -> None:
        """Read every section whole (each block checked) into the plain arrays a replay makes."""
        s = {name: sec.whole() for name, sec in self.sections.items()}
        salt = ledger._commit_ids.parts()[0]
        ledger._commit_ids = IdIndex.from_parts(salt, s["ids_blob"], s["ids_ends"], s["ids_table"])
        ledger._commit_index, ledger._commit_gate = s["commit_index"], s["commit_gate"]
        ledger._commitments, ledger._commit_time = s["commitments"], s["commit_time"]
        ledger.__class__ = Ledger
        vars(ledger).pop("_lazy_commits", None)
        if max(ledger._commit_gate, default=0) >= max(len(ledger._gate_ids), 1) or max(
            ledger._commit_time, default=0
        ) >= max(len(ledger._times), 1):
            raise FormatError("the commits point past the snapshot's gates or times")

    def damaged(self, section: str, block: int) -> InputError:
        """The error a block that does not hash to its recorded value stops a command with; the
        cache is removed, so that the next command replays the ledger instead."""
        for path in (snapshot_path(self.paths), commits_path(self.paths)):
            with contextlib.suppress(OSError):
                path.unlink()
        return InputError(
            [
                problem(
                    self.paths.show(commits_path(self.paths)),
                    f"the cached commit arrays are damaged (block {block} of {section} does not hash to the value "
                    "the file records); the cache was removed: run the command again, and it replays the ledger",
                )
            ],
            "nothing was written",
        )


class CommandLedger(Ledger):
    """A Ledger whose commit arrays are still in the commits file (a command's, `lazy`): looked
    up a block at a time. A commit leaf reads them whole first, as a replay would have them."""

    _lazy_commits: _Commits

    def _apply_commit(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        self._materialize()
        return Ledger._apply_commit(self, index, leaf)  # a plain Ledger from here on

    def gate_counts(self) -> dict[str, tuple[int, int]]:
        self._materialize()
        return Ledger.gate_counts(self)

    def final_problems(self) -> list[Problem]:
        # Its snapshot was saved from a ledger that had none, and only a commit (which reads the
        # arrays whole, and makes this a plain Ledger) can add one.
        return []

    def _materialize(self) -> None:
        try:
            self._lazy_commits.materialize(self)
        except FormatError as e:
            raise InputError(
                [problem(self._lazy_commits.paths.show(commits_path(self._lazy_commits.paths)), str(e))]
            ) from None
