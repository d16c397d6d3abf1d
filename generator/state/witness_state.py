"""What a witness remembers between runs: per log, the latest checkpoint it cosigned (and, when
it replays the rules, the ledger as of that checkpoint, a cache: `replay_path`).

One file a log in the witness's state folder, named by the SHA-256 of the origin (an origin is
text from a log, never a file name), holding the checkpoint's first three lines, (origin, size,
root hash). Each write replaces the file atomically (a temporary file, fsynced and renamed over
the old one), so a kill leaves the old record or the new one. The witness's own memory, not a
cache: it is what makes the witness refuse a second history, so a file that cannot be read back
as the record it should be is an error (`WitnessStateError`), never a fresh start.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from generator.core.generator_errors import TransparencyError
from generator.verifier import FormatError, checkpoint_text, parse_checkpoint, replace_atomically


class WitnessStateError(TransparencyError):
    """A state file that cannot be read back as the record it should be."""


def state_path(state_dir: Path, origin: str) -> Path:
    """The file of `origin`'s record in the state folder."""
    return state_dir / f"{hashlib.sha256(origin.encode('utf-8')).hexdigest()}.checkpoint"


def replay_path(state_dir: Path, origin: str) -> Path:
    """Where a witness replaying the rules keeps the log's ledger as of the checkpoint it last
    cosigned (state/replay_cache.py): a cache beside the record, never the record."""
    return state_path(state_dir, origin).with_suffix(".ledger")


def read_latest(state_dir: Path, origin: str) -> tuple[int, bytes] | None:
    """The (size, root hash) last cosigned for the log, or None if none ever was."""
    path = state_path(state_dir, origin)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise WitnessStateError(f"{path}: cannot read the witness state: {e}") from None
    try:
        found, size, root = parse_checkpoint(text)
    except FormatError as e:
        raise WitnessStateError(f"{path}: not a witness state file: {e}") from None
    if found != origin or text != checkpoint_text(origin, size, root):
        raise WitnessStateError(f"{path}: holds the state of {found!r}, not of {origin!r}")
    return size, root


def record_latest(state_dir: Path, origin: str, size: int, root: bytes) -> None:
    """Remember (size, root) as the latest checkpoint cosigned for the log, atomically."""
    replace_atomically(state_path(state_dir, origin), checkpoint_text(origin, size, root).encode("utf-8"))
