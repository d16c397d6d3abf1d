"""The program's ledger file: one canonical leaf per line, read in a stream, only appended to.

`data/ledger.jsonl` is the source of truth for every event. Each line is the exact leaf bytes
the site publishes and hashes, so reading it checks canonical form line by line and replays the
same rules the verifier applies (`verify.Ledger`). Commands append under an exclusive lock and
validate the new leaves against the replayed state before a byte is written.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.program import journal
from generator.program.datadir import Paths
from generator.program.retirement_schedule import overdue_problem
from generator.state import ledger_cache
from generator.state.ledger_cache import ReplayStart
from generator.verifier import (
    MAX_LEAF_BYTES,
    RETIREMENT_DRAW,
    FormatError,
    Ledger,
    Problem,
    canonical_bytes,
    is_time,
    loads_strict,
    number_rule_problems,
    parse_canonical,
    prose_problems,
)

LeafHook = Callable[[int, dict[str, Any], bytes], None]

# Past this many, more problems in one ledger add noise, not information.
MAX_REPORTED = 100


def _replay_stream(
    f: BinaryIO, file: str, on_leaf: LeafHook | None, start: ReplayStart | None = None
) -> tuple[Ledger, list[Problem]]:
    """Replay `f` from `start` (the beginning, or where a snapshot left off: `f` is there)."""
    start = start or ReplayStart()
    ledger = start.ledger
    problems: list[Problem] = []
    extra = 0
    for lineno, line in enumerate(f, start=ledger.size + 1):
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
                    found.append(
                        problem(
                            file,
                            "leaf is not in canonical (RFC 8785) form",
                            where,
                            expected=canonical_bytes(parsed).decode(),
                            found=raw.decode("utf-8", "replace"),
                        )
                    )
                leaf = parsed
            except FormatError:
                found.append(problem(file, f"not a JSON leaf: {e}", where))
        if leaf is not None:
            found += [p.at(file, where) for p in ledger.apply(leaf, len(raw))]
            if not found:
                start.take(ledger.size - 1, leaf, line)
                if on_leaf is not None:
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


def replay_ledger(
    paths: Paths, on_leaf: LeafHook | None = None, use_snapshot: bool = True
) -> tuple[Ledger, list[Problem]]:
    """Replay the ledger file: the state of its valid leaves, and every problem (up to a limit).

    With `use_snapshot`, from the saved state when it still describes the ledger's first bytes
    (generator.state.ledger_cache), `on_leaf` then seeing only the leaves after it; the state reached
    is saved for the next reader. Without, from the first line, touching no cache."""
    ledger, problems, _ = replay_from(paths, on_leaf, use_snapshot)
    return ledger, problems


def replay_from(
    paths: Paths, on_leaf: LeafHook | None = None, use_snapshot: bool = True, save: bool = True
) -> tuple[Ledger, list[Problem], ReplayStart]:
    """`replay_ledger`, with where it ended: its tree, its latest events, whether a snapshot
    helped. `save=False` leaves saving the state reached to the caller (ledger_cache.save)."""
    file = paths.show(paths.ledger_file)
    try:
        f = paths.ledger_file.open("rb")
    except FileNotFoundError:
        return Ledger(), [problem(file, "no ledger file; create a program with 'transparency init'")], ReplayStart()
    with f:
        start = ledger_cache.start_replay(paths, f) if use_snapshot else ReplayStart()
        ledger, problems = _replay_stream(f, file, on_leaf, start)
    if save and use_snapshot and not problems and start.moved_on():
        ledger_cache.save(paths, start)
    return ledger, problems, start


def ledger_lines(paths: Paths) -> Iterator[bytes]:
    """The ledger's leaf bytes, one by one, without their newlines (already validated by a replay)."""
    with paths.ledger_file.open("rb") as f:
        for line in f:
            yield line[:-1] if line.endswith(b"\n") else line


def last_ledger_lines(paths: Paths, count: int) -> list[bytes]:
    """The ledger's last `count` leaves, read from its end a block at a time: what a build that
    goes on from the last release's tree reads of the ledger, not its first bytes. A leaf holds
    no newline (canonical JSON escapes it), so they are its last `count` lines."""
    if count <= 0:
        return []
    chunks: list[bytes] = []
    newlines = 0
    with paths.ledger_file.open("rb") as f:
        at = f.seek(0, 2)
        # The last line's own newline, if any, ends it: `count` lines need `count` newlines
        # before them (or the file's start) besides that one.
        f.seek(max(0, at - 1))
        trailing = at > 0 and f.read(1) == b"\n"
        while at > 0 and newlines < count + trailing:
            step = min(at, 1 << 16)
            at -= step
            f.seek(at)
            chunk = f.read(step)
            chunks.append(chunk)
            newlines += chunk.count(b"\n")
    tail = b"".join(reversed(chunks))
    lines = (tail[:-1] if trailing else tail).split(b"\n")
    if at > 0:
        lines = lines[1:]  # the first is cut: a line begun before the block read
    if len(lines) < count:
        raise ValueError(f"{paths.ledger_file}: fewer than {count} leaves")
    return lines[-count:]


@contextmanager
def reading(paths: Paths) -> Iterator[None]:
    """Hold a shared lock on the ledger: commands cannot append while a build reads it twice.
    A command interrupted earlier is finished (or undone) first."""
    finish_interrupted(paths)
    if not paths.ledger_file.exists():
        yield  # gather reports the missing ledger
        return
    with _locked(paths, exclusive=False):
        yield


def reason_problems(reason: str, leaf: dict[str, Any]) -> list[Problem]:
    """What is wrong with the `--reason` of an event that states one (a revocation, a withdrawal):
    text that could mislead a reader, or so much of it that `leaf` would be too large a leaf."""
    problems = [
        problem("--reason", f"the reason {p.message}", expected=p.expected, found=p.found)
        for p in prose_problems(reason, "reason")
    ]
    if not problems and (size := len(canonical_json.dumps(leaf))) > MAX_LEAF_BYTES:
        problems.append(
            problem(
                "--reason",
                "the reason makes the ledger leaf too large",
                expected=f"at most {MAX_LEAF_BYTES} bytes",
                found=f"{size} bytes",
            )
        )
    return problems


def event_time(at: str | None, ledger: Ledger, problems: list[Problem] | None = None) -> str:
    """The time of a new event: `at` if given, else the clock; never before the last event.

    With `problems`, a bad time is added there (for the caller to report with every other problem
    of the command) and a stand-in time is returned so the other checks can run; without, it is
    raised alone.
    """
    found: list[Problem] = []
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if at is not None and not is_time(at):
        found.append(problem("--at", "malformed time", expected="YYYY-MM-DDTHH:MM:SSZ (UTC, whole seconds)", found=at))
        when = max(now, ledger.last_at)
    else:
        when = now if at is None else at
        if when < ledger.last_at:
            # Without --at the time is the clock's: say so rather than name an option never given.
            found.append(
                problem(
                    "--at" if at is not None else "the event's time",
                    "an event cannot come before the ledger's last event",
                    expected=f"{ledger.last_at} or later" + ("" if at is not None else " (give it with --at)"),
                    found=when if at is not None else f"now (no --at given): {when}",
                )
            )
    if found and problems is None:
        raise InputError(found)
    if problems is not None:
        problems += found
    return when


class LedgerAppender:
    """Holds the ledger's lock, knows its replayed state, and stages validated leaves and the
    files they refer to in one transaction (generator.program.journal), committed when the
    `appending` block ends without an error."""

    def __init__(self, paths: Paths, ledger: Ledger, tx: journal.Transaction) -> None:
        self.paths = paths
        self.ledger = ledger
        self.tx = tx
        # The overdue check reads the methodology document: a commit prepares a leaf pair per
        # item, all at one time, and a million reads of it took most of the commit. Its answer
        # depends on the time, the methodology in force and the retirements drawn since, so it
        # is asked again whenever one of them changed.
        self._due_checked: tuple[str, int, int] | None = None

    def prepare(self, leaves: list[dict[str, Any]], bulk: bool = False) -> list[bytes]:
        """Apply `leaves` to the replayed state and return their lines.

        With bulk=True (a commit of a million leaves) the leaves are serialised in the fast
        canonical form after the number-rule check, instead of through the pure-Python rfc8785.

        Raises InputError, having written nothing, if any leaf breaks a rule.
        """
        file = self.paths.show(self.paths.ledger_file)
        problems: list[Problem] = []
        lines: list[bytes] = []
        # A scheduled retirement that is due comes before any other event (FORMAT.md, "Draws and
        # timestamps"): recorded after one, it could never be recorded at all.
        first = leaves[0] if leaves else None
        if isinstance(first, dict) and first.get("type") != RETIREMENT_DRAW and is_time(first.get("at")):
            asked = (first["at"], len(self.ledger.methodologies), len(self.ledger.retirement_draws))
            if asked != self._due_checked:
                overdue = overdue_problem(self.paths, self.ledger, first["at"])
                if overdue is not None:
                    raise InputError([overdue], "a scheduled retirement is due; nothing was written")
                self._due_checked = asked
        for leaf in leaves:
            try:
                raw = canonical_json.dumps_checked(leaf) if bulk else canonical_json.dumps(leaf)
            except canonical_json.NotCanonicalizable as e:
                problems += [p.at(file, "new leaf") for p in e.problems]
                continue
            problems += [p.at(file) for p in self.ledger.apply(leaf, len(raw))]
            lines.append(raw + b"\n")
        if problems:
            raise InputError(
                problems, "the new ledger events would break the rules of format v1 §4; nothing was written"
            )
        return lines

    def append(self, leaves: list[dict[str, Any]]) -> None:
        """Validate `leaves` and stage them for the commit."""
        self.tx.add_lines(self.prepare(leaves))

    def stage(self, target: Path, data: bytes, mode: int = 0o644) -> None:
        """A file to write when the command commits: never before its leaves are durable."""
        self.tx.stage(target, data, mode)


@contextmanager
def _locked(paths: Paths, exclusive: bool) -> Iterator[BinaryIO]:
    file = paths.show(paths.ledger_file)
    try:
        f = paths.ledger_file.open("r+b" if exclusive else "rb")
    except FileNotFoundError:
        raise InputError([problem(file, "no ledger file; create a program with 'transparency init'")]) from None
    with f:
        try:
            fcntl.flock(f.fileno(), (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            busy = "using" if exclusive else "writing"
            raise InputError(
                [problem(file, f"another transparency command is {busy} the ledger; try again when it ends")]
            ) from None
        yield f


def finish_interrupted(paths: Paths) -> str | None:
    """Complete or undo a command that was killed, under the program's locks; what was done,
    or None if nothing was pending."""
    if not (paths.private / journal.PENDING).is_dir() and not (paths.private / journal.DONE).exists():
        return None
    with journal.locked(paths):
        return _recover_locked(paths)


def _recover_locked(paths: Paths) -> str | None:
    if not paths.ledger_file.exists():
        return journal.recover(paths, None)  # an interrupted init, which creates the ledger
    with _locked(paths, exclusive=True) as f:
        return journal.recover(paths, f)


@contextmanager
def appending(paths: Paths, command: str) -> Iterator[LedgerAppender]:
    """Lock the program, finish any interrupted command, replay the ledger, and yield an
    appender. Everything staged is committed when the block ends without an error, and
    forgotten when it raises: the ledger and the files change together or not at all."""
    with journal.locked(paths):
        if not paths.ledger_file.exists():
            _recover_locked(paths)
        with _locked(paths, exclusive=True) as f:
            journal.recover(paths, f)
            f.seek(0)
            file = paths.show(paths.ledger_file)
            start = ledger_cache.start_replay(paths, f, lazy=True)
            ledger, problems = _replay_stream(f, file, None, start)
            if problems:
                raise InputError(
                    problems, f"{file}: the ledger breaks the rules of format v1 §4; fix it before adding events"
                )
            tx = journal.Transaction(paths, command)
            try:
                yield LedgerAppender(paths, ledger, tx)
            except BaseException:
                tx.abort()
                raise
            if tx.events or tx.staged:
                tx.commit(f)
                ledger_cache.follow_appended(paths, start, f)
            else:
                tx.abort()
                if start.moved_on():
                    ledger_cache.save(paths, start)


@contextmanager
def creating(paths: Paths, command: str) -> Iterator[LedgerAppender]:
    """`appending` for a program that has no ledger yet (`init`): the ledger is created whole,
    with its first events, when the block ends."""
    with journal.locked(paths, create=True):
        _recover_locked(paths)
        if paths.ledger_file.exists():
            raise InputError(
                [problem(paths.show(paths.ledger_file), "a program is already there; refusing to overwrite it")]
            )
        tx = journal.Transaction(paths, command)
        try:
            yield LedgerAppender(paths, Ledger(), tx)
        except BaseException:
            tx.abort()
            raise
        tx.commit(None)
