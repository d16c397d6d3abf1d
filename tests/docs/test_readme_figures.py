"""Figures the docs state about the committed demo site (docs/scale.md), checked against it, so that
they cannot go stale when the demo changes."""

from __future__ import annotations

import re
import subprocess

from tests.support.demo import REPO


def committed_public_files() -> list[str]:
    """The files of the committed public/: git's list in a clone, else the folder (a source
    archive, which is the commit's tree)."""
    if (REPO / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--", "public"], capture_output=True, check=True
        ).stdout
        return sorted(p.decode() for p in listed.split(b"\0") if p)
    return sorted(p.relative_to(REPO).as_posix() for p in (REPO / "public").rglob("*") if p.is_file())


def test_the_readme_counts_the_demo_site_s_files() -> None:
    scale = (REPO / "docs" / "scale.md").read_text(encoding="utf-8")
    said = re.findall(r"The demo site builds in about \S+ s into ([0-9][0-9,]*) files", scale)
    assert len(said) == 1, "docs/scale.md should say once how many files the demo site builds into"
    count = len(committed_public_files())
    assert int(said[0].replace(",", "")) == count, (
        f"docs/scale.md says the demo site has {said[0]} files; the committed public/ has {count}: update it"
    )
