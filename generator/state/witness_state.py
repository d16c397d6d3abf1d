"""What a witness remembers between runs: per log, the latest checkpoint it cosigned and the note
it serves for it (and, when it replays the rules, the ledger as of that checkpoint, a cache:
`replay_path`).

One file a log in the witness's state folder, named by the SHA-256 of the origin (an origin is
text from a log, never a file name). The file starts with the record, the checkpoint's first
three lines (origin, size, root hash); once the cosignature is made, an empty line and the
cosigned note follow: the checkpoint with the log's signatures the witness verified and the
witness's own cosignature lines, as c2sp.org/tlog-witness's read API serves it. A file of the
record alone (written by earlier releases, or by a witness killed between recording and
signing) has no note to serve.

Each write replaces the file atomically (a temporary file, fsynced and renamed over the old
one), so a kill leaves the old file or the new one. The witness records (size, root) alone
before it signs, then the record with the note: a kill in between leaves a record with no
note, never a note whose cosignatures were not made. The witness's own memory, not a cache: it
is what makes the witness refuse a second history, so a file that cannot be read back as the
record it should be (a note of another checkpoint included) is an error (`WitnessStateError`),
never a fresh start.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from generator.core.generator_errors import TransparencyError
from generator.verifier import (
    FormatError,
    NoteError,
    checkpoint_text,
    parse_checkpoint,
    replace_atomically,
    verify_cosignatures,
)


class WitnessStateError(TransparencyError):
    """A state file that cannot be read back as the record it should be."""


@dataclass(frozen=True)
class WitnessRecord:
    """The latest checkpoint cosigned for a log, and the cosigned note of it, when kept."""

    size: int
    root: bytes
    note: bytes | None = None


def state_path(state_dir: Path, origin: str) -> Path:
    """The file of `origin`'s record in the state folder."""
    return state_dir / f"{hashlib.sha256(origin.encode('utf-8')).hexdigest()}.checkpoint"


def replay_path(state_dir: Path, origin: str) -> Path:
    """Where a witness replaying the rules keeps the log's ledger as of the checkpoint it last
    cosigned (state/replay_cache.py): a cache beside the record, never the record."""
    return state_path(state_dir, origin).with_suffix(".ledger")


def _note_problem(note: bytes, origin: str, size: int, root: bytes) -> str | None:
    """Why `note` is not a cosigned note of the checkpoint (origin, size, root), or None."""
    try:
        verify_cosignatures(note, [])  # the note's and the checkpoint's shape
        text = note.decode("utf-8")
        found = parse_checkpoint(text[: text.rfind("\n\n") + 1])
    except (NoteError, FormatError, UnicodeDecodeError) as e:
        return f"the kept note is not a cosigned checkpoint: {e}"
    if found != (origin, size, root):
        return f"the kept note is of {found[0]!r} at size {found[1]}, not of the record (size {size})"
    return None


def read_record(state_dir: Path, origin: str) -> WitnessRecord | None:
    """The latest checkpoint cosigned for the log and its note, or None if none ever was."""
    path = state_path(state_dir, origin)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise WitnessStateError(f"{path}: cannot read the witness state: {e}") from None
    head = b"\n".join(data.split(b"\n", 3)[:3]) + b"\n"
    try:
        text = head.decode("utf-8")
        found, size, root = parse_checkpoint(text)
    except (FormatError, UnicodeDecodeError) as e:
        raise WitnessStateError(f"{path}: not a witness state file: {e}") from None
    if not data.startswith(head):
        raise WitnessStateError(f"{path}: not a witness state file: its record does not end with a newline")
    if found != origin or text != checkpoint_text(origin, size, root):
        raise WitnessStateError(f"{path}: holds the state of {found!r}, not of {origin!r}")
    rest = data[len(head) :]
    if not rest:
        return WitnessRecord(size, root)
    if not rest.startswith(b"\n"):
        raise WitnessStateError(f"{path}: the record must be followed by an empty line, then the cosigned note")
    why = _note_problem(rest[1:], origin, size, root)
    if why is not None:
        raise WitnessStateError(f"{path}: {why}")
    return WitnessRecord(size, root, rest[1:])


def read_latest(state_dir: Path, origin: str) -> tuple[int, bytes] | None:
    """The (size, root hash) last cosigned for the log, or None if none ever was."""
    record = read_record(state_dir, origin)
    return None if record is None else (record.size, record.root)


def record_latest(state_dir: Path, origin: str, size: int, root: bytes, note: bytes | None = None) -> None:
    """Remember (size, root) as the latest checkpoint cosigned for the log, with the cosigned
    `note` of it to serve if given (ValueError if it is not of that checkpoint), atomically."""
    data = checkpoint_text(origin, size, root).encode("utf-8")
    if note is not None:
        why = _note_problem(note, origin, size, root)
        if why is not None:
            raise ValueError(why)
        data += b"\n" + note
    replace_atomically(state_path(state_dir, origin), data)
