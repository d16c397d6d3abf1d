"""The program's ledger file: one canonical leaf per line, read in a stream, only appended to.

`data/ledger.jsonl` is the source of truth for every event. Each line is the exact leaf bytes
the site publishes and hashes, so reading it checks canonical form line by line and replays the
same rules the verifier applies (`verify.Ledger`). Commands append under an exclusive lock and
validate the new leaves against the replayed state before a byte is written.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from generator import canonical
from generator.datadir import Paths
from generator.errors import InputError, problem
from generator.verify import (
    FormatError,
    Ledger,
    Problem,
    canonical_bytes,
    is_time,
    loads_strict,
    number_rule_problems,
    parse_canonical,
)

LeafHook = Callable[[int, dict[str, Any], bytes], None]

# Past this many, more problems in one ledger add noise, not information.
MAX_REPORTED = 100


def _replay_stream(f: BinaryIO, file: str, on_leaf: LeafHook | None) -> tuple[Ledger, list[Problem]]:
    ledger = Ledger()
    problems: list[Problem] = []
    extra = 0
    for lineno, line in enumerate(f, start=1):
        where = f"line {lineno}"
        found: list[Problem] = []
        raw = line[:-1] if line.endswith(b"\n") else line
        if not line.endswith(b"\n"):
            found.append(problem(file, "last line does not end with a newline (an interrupted write?)", where))
        leaf = None
        try:
            leaf = parse_canonical(raw)
        except FormatError as e:
            # Say precisely why: not JSON at all, or JSON in another form than the canonical one.
            try:
                parsed = loads_strict(raw)
                rules = number_rule_problems(parsed)
                found += [p.at(file, where) for p in rules]
                if not rules:
                    found.append(problem(file, "leaf is not in canonical (RFC 8785) form", where, expected=canonical_bytes(parsed).decode(), found=raw.decode("utf-8", "replace")))
                leaf = parsed
            except FormatError:
                found.append(problem(file, f"not a JSON leaf: {e}", where))
        if leaf is not None:
            found += [p.at(file, where) for p in ledger.apply(leaf, len(raw))]
            if not found and on_leaf is not None:
                on_leaf(ledger.size - 1, leaf, raw)
        else:
            ledger.size += 1  # keep line numbers and leaf indexes aligned in later messages
        if len(problems) < MAX_REPORTED:
            problems += found[: MAX_REPORTED - len(problems)]
        else:
            extra += len(found)
    problems += [p.at(file) for p in ledger.final_problems()][: max(0, MAX_REPORTED - len(problems))]
    if extra:
        problems.append(problem(file, f"... and {extra} more problems"))
    return ledger, problems


def replay_ledger(paths: Paths, on_leaf: LeafHook | None = None) -> tuple[Ledger, list[Problem]]:
    """Replay the ledger file: the state of its valid leaves, and every problem (up to a limit)."""
    file = paths.show(paths.ledger_file)
    try:
        f = paths.ledger_file.open("rb")
    except FileNotFoundError:
        return Ledger(), [problem(file, "no ledger file; create a program with 'transparency init'")]
    with f:
        return _replay_stream(f, file, on_leaf)


def ledger_lines(paths: Paths) -> Iterator[bytes]:
    """The ledger's leaf bytes, one by one, without their newlines (already validated by a replay)."""
    with paths.ledger_file.open("rb") as f:
        for line in f:
            yield line[:-1] if line.endswith(b"\n") else line


@contextmanager
def reading(paths: Paths) -> Iterator[None]:
    """Hold a shared lock on the ledger: commands cannot append while a build reads it twice."""
    try:
        f = paths.ledger_file.open("rb")
    except FileNotFoundError:
        yield  # gather reports the missing ledger
        return
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError([problem(paths.show(paths.ledger_file), "another transparency command is writing the ledger; build again when it ends")]) from None
        yield


def event_time(at: str | None, ledger: Ledger) -> str:
    """The time of a new event: `at` if given, else the clock; never before the last event."""
    if at is None:
        at = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    elif not is_time(at):
        raise InputError([problem("--at", "malformed time", expected="YYYY-MM-DDTHH:MM:SSZ (UTC, whole seconds)", found=at)])
    if at < ledger.last_at:
        raise InputError([problem("--at", "an event cannot come before the ledger's last event", expected=f"{ledger.last_at} or later", found=at)])
    return at


class LedgerAppender:
    """Holds the ledger's lock, knows its replayed state, and appends validated leaves."""

    def __init__(self, paths: Paths, f: BinaryIO, ledger: Ledger) -> None:
        self.paths = paths
        self._f = f
        self.ledger = ledger

    def prepare(self, leaves: list[dict[str, Any]], bulk: bool = False) -> list[bytes]:
        """Apply `leaves` to the replayed state and return their lines.

        With bulk=True (a commit of a million leaves) the leaves are serialised in the fast
        canonical form after the number-rule check, instead of through the pure-Python rfc8785.

        Raises InputError, having written nothing, if any leaf breaks a rule; commands call this
        before they write the files the leaves refer to, so a refused command leaves no trace.
        """
        file = self.paths.show(self.paths.ledger_file)
        problems: list[Problem] = []
        lines: list[bytes] = []
        for leaf in leaves:
            try:
                raw = canonical.dumps_checked(leaf) if bulk else canonical.dumps(leaf)
            except canonical.NotCanonicalizable as e:
                problems += [p.at(file, "new leaf") for p in e.problems]
                continue
            problems += [p.at(file) for p in self.ledger.apply(leaf, len(raw))]
            lines.append(raw + b"\n")
        if problems:
            raise InputError(problems, "the new ledger events would break the rules of SPEC §4; nothing was written")
        return lines

    def write(self, lines: list[bytes]) -> None:
        """Append prepared lines in one write, then fsync."""
        self._f.seek(0, os.SEEK_END)
        self._f.write(b"".join(lines))
        self._f.flush()
        os.fsync(self._f.fileno())

    def write_file(self, lines_file: Path) -> None:
        """Append the prepared lines stored in `lines_file` (for batches too large to hold)."""
        self._f.seek(0, os.SEEK_END)
        with lines_file.open("rb") as src:
            while chunk := src.read(1 << 20):
                self._f.write(chunk)
        self._f.flush()
        os.fsync(self._f.fileno())

    def append(self, leaves: list[dict[str, Any]]) -> None:
        self.write(self.prepare(leaves))


@contextmanager
def appending(paths: Paths) -> Iterator[LedgerAppender]:
    """Lock the ledger, replay it, and yield an appender; the lock is held until the block ends."""
    file = paths.show(paths.ledger_file)
    try:
        f = paths.ledger_file.open("r+b")
    except FileNotFoundError:
        raise InputError([problem(file, "no ledger file; create a program with 'transparency init'")]) from None
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError([problem(file, "another transparency command is using the ledger; try again when it ends")]) from None
        ledger, problems = _replay_stream(f, file, None)
        if problems:
            raise InputError(problems, f"{file}: the ledger breaks the rules of SPEC §4; fix it before adding events")
        yield LedgerAppender(paths, f, ledger)


def fsync_dir(path: os.PathLike[str] | str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes, mode: int = 0o644, sync: bool = True) -> None:
    """Write a file completely (temp file, rename), so a crash never leaves half of it.

    With sync=False the caller syncs many files at once afterwards (one fsync per small file
    would dominate a large commit).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
