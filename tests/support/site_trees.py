"""A site's files as a value, to hold a release built from the last one against one built from scratch."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from generator.commands.build import build
from tests.support.demo import BuiltSite


def files_and_modes(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file and folder under `root`: its mode and, for a file, its bytes."""
    out = {}
    for p in sorted(root.rglob("*")):
        st = os.lstat(p)
        out[p.relative_to(root).as_posix()] = (st.st_mode, p.read_bytes() if stat.S_ISREG(st.st_mode) else b"")
    return out


def assert_matches_a_full_build(site: BuiltSite, before: Path, tmp_path: Path) -> None:
    """`site.out` is what `build --full` makes of the program, from a copy of `before` (the
    published folder before the build that made `site.out`)."""
    full = tmp_path / "full"
    shutil.copytree(before, full)
    build(site.paths, full, offline=True, full=True)
    assert files_and_modes(full) == files_and_modes(site.out)
