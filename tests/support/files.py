"""Files as a refused command must leave them: a snapshot of trees, and `refused`, which runs a command that must
be refused and checks that it changed nothing."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.core.generator_errors import InputError


def tree(*roots: Path, under: Path | None = None) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under the roots, keyed by path and mode: what a
    refused command must leave exactly as it was. A root that does not exist holds nothing.
    With `under`, paths are relative to it, so that two copies of a program compare equal."""
    out: dict[str, bytes | None] = {}
    for root in roots:
        if root.exists():
            for p in sorted(root.rglob("*")):
                name = p.relative_to(under).as_posix() if under else str(p)
                out[f"{name} {stat.S_IMODE(p.lstat().st_mode):o}"] = p.read_bytes() if p.is_file() else None
    return out


def refused(command: Callable[[], object], *roots: Path) -> InputError:
    """Run a command that must be refused: it raises InputError, carrying its problems, and
    changes nothing under the roots. Returns the error, for the test to read."""
    before = tree(*roots)
    with pytest.raises(InputError) as info:
        command()
    assert info.value.problems, "an InputError must carry its problems"
    assert tree(*roots) == before, "a refused command changed a file"
    return info.value
