"""Every `make TARGET` the documents tell a reader to run is a target of the Makefile, with a recipe."""

from __future__ import annotations

import re

from tests.support.demo import REPO

# `make` followed by a word in backticks or a code block: what a reader types.
_NAMED = re.compile(r"(?:`|^\s*|\$ )make ([a-z][a-z-]*)", re.M)
_TARGET = re.compile(r"^([a-z][a-z-]*):(?!=)[^\n]*\n\t", re.M)


def test_every_make_target_the_docs_name_exists() -> None:
    targets = set(_TARGET.findall((REPO / "Makefile").read_text(encoding="utf-8")))
    docs = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "FORMAT.md", *sorted((REPO / "docs").rglob("*.md"))]
    missing = {
        f"{path.relative_to(REPO)}: make {name}"
        for path in docs
        for name in _NAMED.findall(path.read_text(encoding="utf-8"))
        if name not in targets
    }
    assert not missing, sorted(missing)
    # The check can fail: the targets it reads are the Makefile's recipes.
    assert {"site", "test", "test-fast", "bundle", "conformance", "bench"} <= targets
