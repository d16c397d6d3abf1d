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
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from generator.datadir import Paths
from generator.errors import InputError, problem
from generator.verifier import is_safe_path

log = logging.getLogger("transparency")

PENDING = ".pending"
READY = "ready.json"
LINES = "ledger.lines"
COMMAND = "command"


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


class Transaction:
    """What one command will write, staged until `commit`. Made by `ledgerfile.appending`,
    which holds the ledger's lock and has recovered any earlier transaction first."""

    def __init__(self, paths: Paths, command: str) -> None:
        self.paths = paths
        self.dir = paths.private / PENDING
        self._moves: list[_Move] = []
        self._named = 0
        self._targets: set[tuple[str, str]] = set()
        self.dir.mkdir(parents=True, mode=0o700)
        (self.dir / COMMAND).write_text(command, encoding="utf-8")
        self._lines = (self.dir / LINES).open("wb")
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
            os.sync()  # every staged byte on disk before the commit point says they are there
            ready = {
                "v": 1,
                "ledger_bytes": None if ledger is None else ledger.seek(0, os.SEEK_END),
                "lines_bytes": self._lines_bytes,
                "lines_sha256": self._lines_hash.hexdigest(),
                "moves": [dataclasses.asdict(m) for m in self._moves],
            }
            tmp = self.dir / (READY + ".tmp")
            with tmp.open("w", encoding="utf-8") as f:
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
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f = path.open("wb")
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


def _root(paths: Paths, name: str) -> Path:
    return paths.private if name == "private" else paths.data


def _append_rest(paths: Paths, pending: Path, ready: dict, ledger: BinaryIO | None) -> int:
    """Bring the ledger to its length before the command plus the staged lines; return how
    many bytes of them this call appended. Refuses a ledger that holds anything else."""
    lines = pending / LINES
    size, start = ready["lines_bytes"], ready["ledger_bytes"]
    file = paths.show(paths.ledger_file)
    if start is None:  # `init`: the ledger is created whole, by a rename
        if paths.ledger_file.exists():
            if _sha256_file(paths.ledger_file) != ready["lines_sha256"]:
                raise InputError([problem(file, "an interrupted 'init' left a ledger that is not the one it was creating; move it away and run init again")])
            return 0
        if lines.exists():
            os.replace(lines, paths.ledger_file)
            fsync_dir(paths.ledger_file.parent)
        return size
    assert ledger is not None
    end = ledger.seek(0, os.SEEK_END)
    done = end - start
    if done < 0 or done > size:
        raise InputError([problem(file, f"the ledger is {end} bytes long, but an interrupted command recorded it at {start} bytes before appending {size}; "
                                  f"someone else changed it. Compare it with {paths.show(pending)} by hand")], "cannot finish an interrupted command")
    h = hashlib.sha256()
    with lines.open("rb") as src:
        ledger.seek(start)
        remaining = done
        while remaining:
            chunk = ledger.read(min(remaining, 1 << 20))
            if not chunk or src.read(len(chunk)) != chunk:
                raise InputError([problem(file, f"the ledger's last {done} bytes are not the lines an interrupted command was appending; "
                                          f"compare them with {paths.show(lines)} by hand")], "cannot finish an interrupted command")
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
        raise InputError([problem(paths.show(lines), "the staged ledger lines do not hash to what the command recorded")], "cannot finish an interrupted command")
    ledger.flush()
    os.fsync(ledger.fileno())
    crash_point("appended the ledger")
    return size - done


def _move(paths: Paths, pending: Path, m: dict) -> None:
    staged = pending / m["staged"]
    target = _root(paths, m["root"]) / m["path"]
    if not is_safe_path(m["path"]) or m["root"] not in ("data", "private"):  # pragma: no cover - we wrote it
        raise InputError([problem(paths.show(pending / READY), "names an unsafe path", found=m["path"])])
    if not staged.exists():
        if target.exists() and _sha256_file(target) == m["sha256"]:
            return  # moved before the interruption
        raise InputError([problem(paths.show(target), "an interrupted command had staged this file, but neither the staged copy nor the file itself is there "
                                  "with the recorded content", expected=f"SHA-256 {m['sha256']}")], "cannot finish an interrupted command")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(staged, m["mode"])
    try:
        os.replace(staged, target)
    except OSError as e:
        if e.errno != 18:  # EXDEV: the data directory is on another file system
            raise
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(staged, tmp)
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, m["mode"])
        os.replace(tmp, target)
        staged.unlink()
    crash_point("moved a file")


def _roll_forward(paths: Paths, pending: Path, ready: dict, ledger: BinaryIO | None) -> int:
    appended = _append_rest(paths, pending, ready, ledger)
    folders: set[Path] = set()
    for m in ready["moves"]:
        _move(paths, pending, m)
        folders.add((_root(paths, m["root"]) / m["path"]).parent)
    for folder in sorted(folders):
        fsync_dir(folder)
    crash_point("moved every file")
    shutil.rmtree(pending)
    fsync_dir(paths.private)
    return appended


def recover(paths: Paths, ledger: BinaryIO | None) -> str | None:
    """Finish or undo a command that was interrupted; say which, or None if none was.
    The caller holds the ledger's exclusive lock (`ledger` is the locked file; None if the
    ledger does not exist yet)."""
    pending = paths.private / PENDING
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
        message = f"rolled back an interrupted '{command}': it had not reached its commit point, so nothing of it was kept"
        log.warning(message)
        return message
    except (OSError, ValueError) as e:
        raise InputError([problem(paths.show(pending / READY), f"an interrupted '{command}' left a record that cannot be read ({e})")],
                         "cannot finish an interrupted command") from None
    _roll_forward(paths, pending, ready, ledger)
    message = f"completed an interrupted '{command}': its ledger events and files are now all in place"
    log.warning(message)
    return message
