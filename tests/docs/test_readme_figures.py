"""Figures the docs state about the committed demo site (docs/scale.md), checked against it, so that
they cannot go stale when the demo changes."""

from __future__ import annotations

import re

from generator.core import layout
from tests.support.demo import REPO


def demo_site_files() -> list[str]:
    """The files the demo site builds into: those its committed SHA256SUMS lists, and SHA256SUMS
    and its signature. Counted from the list, not the folder: download/site.zip is built but not
    committed, so a clone lacks it until `make site`."""
    sums = (REPO / "public" / layout.SUMS).read_text(encoding="utf-8")
    return sorted([line.split("  ", 1)[1] for line in sums.splitlines()] + [layout.SUMS, layout.SUMS_SIG])


def test_the_readme_counts_the_demo_site_s_files() -> None:
    scale = (REPO / "docs" / "scale.md").read_text(encoding="utf-8")
    said = re.findall(r"The demo site builds in about \S+ s into ([0-9][0-9,]*) files", scale)
    assert len(said) == 1, "docs/scale.md should say once how many files the demo site builds into"
    count = len(demo_site_files())
    assert int(said[0].replace(",", "")) == count, (
        f"docs/scale.md says the demo site has {said[0]} files; its committed SHA256SUMS makes it {count}: update it"
    )
