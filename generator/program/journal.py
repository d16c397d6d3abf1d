"""Crash-safe changes: every command that changes the program's files completes, or leaves them
as they were, whatever moment it is killed at.

A command stages everything it will write inside `PRIVATE/.pending/` (the private directory,
so that a sealed item's text never sits in the public data before its reveal is in the ledger),
along with the ledger lines it will append. Then, in this order:

1. every staged byte is flushed to disk, and `ready.json` is written atomically: the commit
   point. It records the ledger's length before the append and every file to move;
2. the lines are appended to the ledger and flushed;
3. the staged files are renamed into place (copied, where the data directory is on another
   file system) and the folder removed.

The next command to take the ledger's lock looks for the folder first. Without `ready.json`
nothing outside it was touched: it is removed (rolled back). With it, the command is completed
(rolled forward): the rest of the append, checked byte for byte against the staged lines, and
the rest of the moves, each checked against its recorded SHA-256. Either way it says so.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.verifier import is_hex64, is_safe_path

log = logging.getLogger("transparency")

PENDING = ".pending"
# A finished command's record, set aside before it is deleted (_discard); any left is deleted.
DONE = ".pending.done"
READY = "ready.json"
LINES = "ledger.lines"
COMMAND = "command"


LOCK = ".lock"
STAGED_RE = re.compile(r"^files/[0-9]{4}/[0-9]{7}$")
MODES = (0o644, 0o600)


@contextmanager
def locked(paths: Paths, create: bool = False) -> Iterator[None]:
    """The private directory's lock: one command at a time changes the program, `init` and the
    finishing of an interrupted command included (the ledger's own lock cannot serve before the
    ledger exists). Only `init` (create=True) makes the private directory: any other command
    without one was pointed at the wrong place, and says so."""
    if create:
        paths.private.mkdir(parents=True, exist_ok=True, mode=0o700)
    elif not paths.private.is_dir():
        raise InputError(
            [
                problem(
                    paths.show(paths.private),
                    "no private directory there; pass --private (or set TRANSPARENCY_PRIVATE) to the program's "
                    "private directory",
                )
            ]
        )
    fd = os.open(paths.private / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                [
                    problem(
                        paths.show(paths.private),
                        "another transparency command is changing the program; try again when it ends",
                    )
                ]
            ) from None
        yield
    finally:
        os.close(fd)


def crash_point(label: str) -> None:
    """Called between the steps of a commit. A no-op; the crash tests replace it with one that
    kills the process at the N-th call, to prove every step can be interrupted."""


def fsync_dir(path: os.PathLike[str] | str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class _Move:
    staged: str  # relative to the pending folder
    root: str  # "data" or "private"
    path: str  # relative to that root
    sha256: str
    mode: int


class _HashingWriter:
    """A staged file written piece by piece (a batch of a million sealed documents)."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self._h = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self._h.update(data)
        return self._f.write(data)

    def writelines(self, lines: Iterable[bytes]) -> None:
        for line in lines:
            self.write(line)

    @property
    def hexdigest(self) -> str:
        return self._h.hexdigest()


# Up to this many staged files, a command makes each durable by itself (Transaction._sync_folders).
_FSYNC_EACH = 64


class Transaction:
    """What one command will write, staged until `commit`. Made by `ledgerfile.appending`,
    which holds the ledger's lock and has recovered any earlier transaction first."""

    def __init__(self, paths: Paths, command: str) -> None:
        self.paths = paths
        self._command = command
        self.dir = paths.private / PENDING
        self._moves: list[_Move] = []
        self._named = 0
        self._targets: set[tuple[str, str]] = set()
        self._folders: set[Path] = set()  # those that hold staged files
        self.dir.mkdir(parents=True, mode=0o700)
        with os.fdopen(
            os.open(self.dir / COMMAND, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8"
        ) as f:
            f.write(command)
        self._lines = os.fdopen(os.open(self.dir / LINES, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")
        self._lines_hash = hashlib.sha256()
        self._lines_bytes = 0
        self._events = 0
        self._open: list[BinaryIO] = [self._lines]

    # -- staging

    def _target(self, target: Path) -> tuple[str, str]:
        # The private directory first: the demo keeps it inside the data directory.
        for root_name, root in (("private", self.paths.private), ("data", self.paths.data)):
            try:  # targets are built from the roots by Paths: a lexical test suffices
                rel = target.relative_to(root).as_posix()
            except ValueError:
                continue
            if not is_safe_path(rel) or rel.startswith(PENDING):
                break
            if (root_name, rel) in self._targets:
                raise AssertionError(f"{target} staged twice in one command")
            self._targets.add((root_name, rel))
            return root_name, rel
        raise AssertionError(f"{target} lies outside the data and private directories")

    def _staged_name(self) -> str:
        n = self._named
        self._named += 1
        return f"files/{n // 4096:04d}/{n:07d}"

    def stage(self, target: Path, data: bytes, mode: int = 0o644) -> None:
        """Write `data` to `target` when the command commits, never before."""
        with self.stage_stream(target, mode) as f:
            f.write(data)

    def stage_stream(self, target: Path, mode: int = 0o644) -> _StagedFile:
        root, rel = self._target(target)
        return _StagedFile(self, root, rel, mode)

    def _add_move(self, move: _Move) -> None:
        self._moves.append(move)
        crash_point("staged a file")

    def add_lines(self, lines: Iterable[bytes]) -> None:
        """Ledger lines (each a canonical leaf and its newline) to append when the command commits."""
        for line in lines:
            self._lines.write(line)
            self._lines_hash.update(line)
            self._lines_bytes += len(line)
            self._events += 1

    @property
    def events(self) -> int:
        return self._events

    @property
    def staged(self) -> int:
        return len(self._moves)

    # -- committing

    def commit(self, ledger: BinaryIO | None) -> None:
        """Make the staged changes real: the ledger appended (`ledger` is its open, locked
        file; None creates the ledger, for `init`), then every file moved into place."""
        try:
            self._lines.close()
            self._open.clear()
            self._sync_folders()  # every staged byte on disk before the commit point says they are there
            ready = {
                "v": 1,
                "ledger_bytes": None if ledger is None else ledger.seek(0, os.SEEK_END),
                "lines_bytes": self._lines_bytes,
                "lines_sha256": self._lines_hash.hexdigest(),
                "moves": [dataclasses.asdict(m) for m in self._moves],
            }
            tmp = self.dir / (READY + ".tmp")
            tmp.unlink(missing_ok=True)  # a link there is removed, never written through
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            with os.fdopen(os.open(tmp, flags, 0o600), "w", encoding="utf-8") as f:
                json.dump(ready, f)
                f.flush()
                os.fsync(f.fileno())
            crash_point("wrote ready.json")
            os.replace(tmp, self.dir / READY)
            fsync_dir(self.dir)
        except BaseException:
            self.abort()  # before the commit point: as if the command had never run
            raise
        crash_point("committed")
        # Past the commit point an error leaves the folder for the next command to finish.
        _roll_forward(self.paths, self.dir, ready, ledger)

    def _sync_folders(self) -> None:
        """Make the staged files durable. A command of a few files (one event) fsyncs each, its
        ledger lines, every folder that holds one, and the pending folder's own entry: not os.sync(), which
        waits for every dirty byte of the machine (a build writing gigabytes beside it). A
        batch of many (a commit of a million items stages one file a revealed item), and `init`
        (which makes the program's folders before its transaction), call os.sync() once: a
        flush per file would cost more."""
        if self._command == "init" or len(self._moves) > _FSYNC_EACH:
            os.sync()
            return
        for name in (LINES, *(m.staged for m in self._moves)):
            fd = os.open(self.dir / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for folder in sorted(self._folders):
            fsync_dir(folder)
        if self._folders:
            fsync_dir(self.dir / "files")
        fsync_dir(self.dir)
        fsync_dir(self.paths.private)

    def abort(self) -> None:
        """Forget everything staged: nothing outside the pending folder was touched."""
        for f in self._open:
            f.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class _StagedFile:
    def __init__(self, tx: Transaction, root: str, rel: str, mode: int) -> None:
        self.tx, self.root, self.rel, self.mode = tx, root, rel, mode
        self.name = tx._staged_name()
        path = tx.dir / self.name
        if not tx.dir.is_dir():  # removed under the command's feet: never made again silently
            raise InputError(
                [
                    problem(
                        tx.paths.show(tx.dir),
                        "the staging folder of this command disappeared while it ran; nothing was changed",
                    )
                ]
            )
        path.parent.mkdir(exist_ok=True, parents=True, mode=0o700)
        tx._folders.add(path.parent)
        # 0600: a staged file may be the signing key, or a sealed item's text
        self._f = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")
        self.writer = _HashingWriter(self._f)

    def __enter__(self) -> _HashingWriter:
        self.tx._open.append(self._f)
        return self.writer

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self._f.close()
        self.tx._open.remove(self._f)
        if kind is None:
            self.tx._add_move(_Move(self.name, self.root, self.rel, self.writer.hexdigest, self.mode))


# ---------------------------------------------------------------------------------------------
# Finishing a committed transaction, now or after a crash


def _ready_problems(ready: Any) -> list[str]:
    """What makes a ready.json unsafe to act on: it names files to move and a mode to give
    them, so every member is checked before anything is done."""
    if (
        not isinstance(ready, dict)
        or set(ready) != {"v", "ledger_bytes", "lines_bytes", "lines_sha256", "moves"}
        or ready["v"] != 1
    ):
        return ["not a v1 record with ledger_bytes, lines_bytes, lines_sha256 and moves"]
    out = []
    if not (ready["ledger_bytes"] is None or (type(ready["ledger_bytes"]) is int and ready["ledger_bytes"] >= 0)):
        out.append("ledger_bytes is not a length or null")
    if not (type(ready["lines_bytes"]) is int and ready["lines_bytes"] >= 0) or not is_hex64(ready["lines_sha256"]):
        out.append("lines_bytes or lines_sha256 is malformed")
    if not isinstance(ready["moves"], list):
        return [*out, "moves is not a list"]
    for i, m in enumerate(ready["moves"]):
        if not (
            isinstance(m, dict)
            and set(m) == {"staged", "root", "path", "sha256", "mode"}
            and isinstance(m["staged"], str)
            and STAGED_RE.fullmatch(m["staged"])
            and m["root"] in ("data", "private")
            and is_safe_path(m["path"])
            and not m["path"].startswith(PENDING)
            and is_hex64(m["sha256"])
            and m["mode"] in MODES
            and type(m["mode"]) is int
        ):
            out.append(f"moves[{i}] is malformed")
    return out


def _root(paths: Paths, name: str) -> Path:
    return paths.private if name == "private" else paths.data


def _append_rest(paths: Paths, pending: Path, ready: dict[str, Any], ledger: BinaryIO | None) -> int:
    """Bring the ledger to its length before the command plus the staged lines; return how
    many bytes of them this call appended. Refuses a ledger that holds anything else."""
    lines = pending / LINES
    size: int = ready["lines_bytes"]
    start: int | None = ready["ledger_bytes"]
    file = paths.show(paths.ledger_file)
    if start is None:  # `init`: the ledger is created whole, by a rename
        if paths.ledger_file.exists():
            if _sha256_file(paths.ledger_file) != ready["lines_sha256"]:
                raise InputError(
                    [
                        problem(
                            file,
                            "an interrupted 'init' left a ledger that is not the one it was creating; move it away "
                            "and run init again",
                        )
                    ]
                )
            return 0
        if not lines.exists() or _sha256_file(lines) != ready["lines_sha256"]:
            raise InputError(
                [
                    problem(
                        paths.show(lines),
                        "an interrupted 'init' lost the ledger it was creating; remove the program's files and run "
                        "init again",
                    )
                ],
                "cannot finish an interrupted command",
            )
        _place(lines, paths.ledger_file, 0o644)
        fsync_dir(paths.ledger_file.parent)
        return size
    assert ledger is not None
    end = ledger.seek(0, os.SEEK_END)
    done = end - start
    if done < 0 or done > size:
        raise InputError(
            [
                problem(
                    file,
                    f"the ledger is {end} bytes long, but an interrupted command recorded it at {start} bytes before "
                    f"appending {size}; "
                    f"someone else changed it. Compare it with {paths.show(pending)} by hand",
                )
            ],
            "cannot finish an interrupted command",
        )
    if not lines.exists():
        raise InputError(
            [
                problem(
                    paths.show(lines),
                    "the ledger lines an interrupted command was appending are gone; compare the ledger with a "
                    "backup by hand",
                )
            ],
            "cannot finish an interrupted command",
        )
    h = hashlib.sha256()
    with lines.open("rb") as src:
        ledger.seek(start)
        remaining = done
        while remaining:
            chunk = ledger.read(min(remaining, 1 << 20))
            if not chunk or src.read(len(chunk)) != chunk:
                raise InputError(
                    [
                        problem(
                            file,
                            f"the ledger's last {done} bytes are not the lines an interrupted command was appending; "
                            f"compare them with {paths.show(lines)} by hand",
                        )
                    ],
                    "cannot finish an interrupted command",
                )
            h.update(chunk)
            remaining -= len(chunk)
        ledger.seek(end)
        half = True
        while chunk := src.read(1 << 20):
            h.update(chunk)
            if half and len(chunk) > 1:  # lets a crash test stop the append halfway
                ledger.write(chunk[: len(chunk) // 2])
                ledger.flush()
                crash_point("half of the ledger lines")
                chunk = chunk[len(chunk) // 2 :]
                half = False
            ledger.write(chunk)
    if h.hexdigest() != ready["lines_sha256"]:  # pragma: no cover - the staged lines were damaged
        raise InputError(
            [problem(paths.show(lines), "the staged ledger lines do not hash to what the command recorded")],
            "cannot finish an interrupted command",
        )
    ledger.flush()
    os.fsync(ledger.fileno())
    crash_point("appended the ledger")
    return size - done


def _check_move(paths: Paths, pending: Path, m: dict[str, Any]) -> None:
    """A move of an interrupted command can be finished: the staged copy holds the recorded
    bytes, or the file was moved already."""
    staged = pending / m["staged"]
    target = _root(paths, m["root"]) / m["path"]
    if not staged.exists():
        if target.exists() and _sha256_file(target) == m["sha256"]:
            return
        raise InputError(
            [
                problem(
                    paths.show(target),
                    "an interrupted command had staged this file, but neither the staged copy nor the file itself "
                    "is there "
                    "with the recorded content",
                    expected=f"SHA-256 {m['sha256']}",
                )
            ],
            "cannot finish an interrupted command",
        )
    if _sha256_file(staged) != m["sha256"]:
        raise InputError(
            [
                problem(
                    paths.show(staged),
                    f"the staged copy of {paths.show(target)} is not what the command recorded; nothing was changed",
                    expected=f"SHA-256 {m['sha256']}",
                )
            ],
            "cannot finish an interrupted command",
        )


def _move(paths: Paths, pending: Path, m: dict[str, Any]) -> None:
    staged = pending / m["staged"]
    if not staged.exists():
        return  # moved before the interruption (checked by _check_move)
    _place(staged, _root(paths, m["root"]) / m["path"], m["mode"])
    crash_point("moved a file")


def _place(staged: Path, target: Path, mode: int) -> None:
    """Put a staged file in place in one rename, or where the data directory is on another file
    system, as a copy made whole beside the target and renamed over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(staged, mode)
    try:
        os.replace(staged, target)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(staged, tmp)
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        staged.unlink()


def _roll_forward(
    paths: Paths, pending: Path, ready: dict[str, Any], ledger: BinaryIO | None, recovering: bool = False
) -> int:
    if recovering:  # every file checked before anything is changed: a damaged record changes nothing
        for m in ready["moves"]:
            _check_move(paths, pending, m)
    appended = _append_rest(paths, pending, ready, ledger)
    folders: set[Path] = set()
    for m in ready["moves"]:
        _move(paths, pending, m)
        folders.add((_root(paths, m["root"]) / m["path"]).parent)
    for folder in sorted(folders):  # once each, not once a file: a batch moves a quarter of a million
        fsync_dir(folder)
    crash_point("moved every file")
    _discard(paths, pending)
    return appended


def _discard(paths: Paths, pending: Path) -> None:
    """Remove a finished command's record in one step: renamed out of the way, then deleted. Files
    are deleted one at a time, in no set order: deleting the record in place, a kill could leave
    its ready.json without the ledger lines it names, and the next command would try to finish a
    command already finished."""
    done = paths.private / DONE
    if done.exists():
        shutil.rmtree(done)
    os.replace(pending, done)
    fsync_dir(paths.private)
    crash_point("set the record aside")
    shutil.rmtree(done)


def recover(paths: Paths, ledger: BinaryIO | None) -> str | None:
    """Finish or undo a command that was interrupted; say which, or None if none was.
    The caller holds the ledger's exclusive lock (`ledger` is the locked file; None if the
    ledger does not exist yet)."""
    pending = paths.private / PENDING
    if (paths.private / DONE).exists():  # a finished command's record a kill left half deleted
        shutil.rmtree(paths.private / DONE)
    if not pending.is_dir():
        return None
    try:
        command = (pending / COMMAND).read_text(encoding="utf-8").strip() or "command"
    except (OSError, UnicodeDecodeError):
        command = "command"
    try:
        ready = json.loads((pending / READY).read_text(encoding="utf-8"))
    except FileNotFoundError:
        shutil.rmtree(pending)
        fsync_dir(paths.private)
        message = (
            f"rolled back an interrupted '{command}': it had not reached its commit point, so nothing of it was kept"
        )
        log.warning(message)
        return message
    except (OSError, ValueError) as e:
        raise InputError(
            [
                problem(
                    paths.show(pending / READY), f"an interrupted '{command}' left a record that cannot be read ({e})"
                )
            ],
            "cannot finish an interrupted command",
        ) from None
    damaged = _ready_problems(ready)
    if damaged:
        raise InputError(
            [
                problem(
                    paths.show(pending / READY),
                    f"the record of an interrupted '{command}' is damaged: {d}; nothing was changed",
                )
                for d in damaged
            ],
            "cannot finish an interrupted command",
        )
    _roll_forward(paths, pending, ready, ledger, recovering=True)
    message = f"completed an interrupted '{command}': its ledger events and files are now all in place"
    log.warning(message)
    return message
