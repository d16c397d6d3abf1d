"""The docs by reader: README a landing page leading each reader into docs/, and the verifier release table in
a file of its own that `make bundle` writes (tools/release_table.py) and every route of an auditor names."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.demo import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
TABLE = DOCS / "verifier-releases.md"


def release_table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_table", REPO / "tools" / "release_table.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_a_landing_page() -> None:
    """What it is, the two commands first, and where each reader goes next; the rest is in docs/."""
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block and text.index("```sh") < text.index("\n## ")
    assert [line.split()[:2] for line in first_block.group(1).splitlines()] == [["make", "site"], ["make", "test"]]
    assert len(text.splitlines()) <= 90, "README is a landing page: the guides are in docs/"
    readers = text.split("## Where to go next", 1)[1]
    for heading, link in [
        ("### The public", "(docs/site.md)"),
        ("### Auditors", "(docs/verifying.md)"),
        ("### Operators", "(docs/operating.md)"),
        ("### Contributors", "(ARCHITECTURE.md)"),
    ]:
        section = readers.split(heading + "\n", 1)[1].split("\n### ", 1)[0]
        assert link in section, (heading, link)
    for guide in ("docs/tutorial.md", "docs/testing.md", "docs/scale.md", "docs/verifier-releases.md", "FORMAT.md"):
        assert f"]({guide})" in readers, guide


def test_every_guide_in_docs_is_linked_from_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    for path in sorted(DOCS.glob("*.md")):
        assert f"](docs/{path.name}" in text, f"README does not lead to docs/{path.name}"


def test_every_auditor_route_names_the_release_table() -> None:
    """The table moved out of README: the site's "Verify it yourself" page, the verifying guide and README all
    send an auditor to it (the bundled verify.py's own help names README's "Verifier releases", which links it)."""
    page = (REPO / "site_templates" / "verify.html").read_text(encoding="utf-8")
    assert "docs/verifier-releases.md" in page and "in its README" not in page
    assert "](verifier-releases.md)" in (DOCS / "verifying.md").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    section = readme.split("#### Verifier releases\n", 1)[1].split("\n#", 1)[0]
    assert "(docs/verifier-releases.md)" in section
    assert not re.search(r"^\| [0-9.]+ \| `[0-9a-f]{64}` \|$", readme, re.M), "the table lives in its own file"
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    bundle = makefile.split("\nbundle:", 1)[1].split("\n\n", 1)[0]
    assert "tools/release_table.py docs/verifier-releases.md" in bundle and "README" not in bundle


def test_the_table_has_a_row_per_release_in_order() -> None:
    rows = re.findall(r"^\| ([0-9.]+) \| `([0-9a-f]{64})` \|$", TABLE.read_text(encoding="utf-8"), re.M)
    versions = [tuple(int(p) for p in v.split(".")) for v, _ in rows]
    assert versions == sorted(set(versions)) and len(rows) >= 2


TEXT = """# Verifier releases

| release | SHA-256 of verify.py |
| --- | --- |
| 0.2.0 | `{a}` |
| 0.3.0 | `{b}` |

Release 0.1.0 published no verifier hash.
"""
A, B, C = "a" * 64, "b" * 64, "c" * 64


def test_make_bundle_rewrites_this_release_s_row_and_keeps_every_other_byte() -> None:
    tool = release_table()
    before = TEXT.format(a=A, b=B)
    assert tool.with_release(before, "0.3.0", C) == TEXT.format(a=A, b=C)
    assert tool.with_release(before, "0.3.0", B) == before
    assert tool.with_release(before, "0.2.0", C) == TEXT.format(a=C, b=B)


def test_make_bundle_adds_the_row_of_a_new_release_after_the_last() -> None:
    after = release_table().with_release(TEXT.format(a=A, b=B), "0.4.0", C)
    assert after == TEXT.format(a=A, b=B).replace(f"| 0.3.0 | `{B}` |\n", f"| 0.3.0 | `{B}` |\n| 0.4.0 | `{C}` |\n")


@pytest.mark.parametrize(
    ("text", "version", "digest", "expected"),
    [
        ("# Verifier releases\n\nNo table.\n", "0.3.0", A, "no release table"),
        (TEXT.format(a=A, b=B) + f"| 0.3.0 | `{C}` |\n", "0.3.0", A, "release 0.3.0 has 2 rows"),
        (TEXT.format(a=A, b=B), "0.3.0", "ABC", "not a SHA-256"),
    ],
)
def test_make_bundle_refuses_a_table_it_cannot_update(text: str, version: str, digest: str, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        release_table().with_release(text, version, digest)


def test_the_tool_writes_the_file_it_is_given(tmp_path: Path) -> None:
    import hashlib

    from generator import __version__

    table = tmp_path / "releases.md"
    table.write_text(TEXT.format(a=A, b=B).replace("0.3.0", __version__), encoding="utf-8")
    assert release_table().main([str(table)]) == 0
    digest = hashlib.sha256((REPO / "generator" / "verify.py").read_bytes()).hexdigest()
    assert f"| {__version__} | `{digest}` |" in table.read_text(encoding="utf-8")


def test_no_document_holds_a_merge_left_unresolved() -> None:
    """A conflict's markers once reached ARCHITECTURE.md, with both sides of it: every document
    of the repository is read for them."""
    docs = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "FORMAT.md", *sorted(DOCS.rglob("*.md"))]
    found = [
        f"{p.relative_to(REPO)}:{n}"
        for p in docs
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"(<{7}|>{7}) |={7}$", line)
    ]
    assert not found, f"merge conflict markers: {found}"
