"""Every citation in the repository resolves inside it.

The formats are this project's own document, docs/formats/v1.md, cited as "format v1 §N". A
citation of a document kept elsewhere, a section that document does not have, or a link to a
Markdown heading that does not exist leaves an operator or an auditor with nothing to read, so each
fails here, naming the file and the line.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

V1 = REPO / "docs" / "formats" / "v1.md"

# Spelled in pieces so that this file does not cite what it forbids.
OUTSIDE = ("../" + "shared", "SPEC" + ".md")
BARE_SPEC = re.compile(r"\b" + "SPEC" + r"\b(?!\.md)")
# A section of format v1 is a whole number; a dotted one (§2.1.3) is an RFC's or another standard's.
SECTION = re.compile(r"§(\d+)(?![.\d])")
MD_LINK = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)#([^\s)\]\"'`<>,;]+)")
SAME_FILE_LINK = re.compile(r"\]\(#([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def anchors(markdown: str) -> set[str]:
    """The heading anchors GitHub gives a Markdown file: lower case, punctuation dropped, spaces as
    hyphens, a repeated anchor numbered -1, -2, … (code blocks hold no headings)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = HEADING.match(line)
        if fenced or not match:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def v1_sections() -> set[int]:
    return {int(m.group(1)) for m in re.finditer(r"^## (\d+)\. ", V1.read_text(encoding="utf-8"), re.M)}


def problems_in(rel: str, text: str, sections: set[int], anchors_of: dict[Path, set[str] | None]) -> list[str]:
    """Every broken citation of one file's text, as 'path:line: what'."""
    problems: list[str] = []
    base = (REPO / rel).parent
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{rel}:{number}"
        for outside in OUTSIDE:
            if outside in line:
                problems.append(f"{where}: cites {outside}, which is not in this repository (use docs/formats/v1.md)")
        if BARE_SPEC.search(line):
            problems.append(f"{where}: cites the spec by a name outside this repository (write 'format v1 §N')")
        for match in SECTION.finditer(line):
            if int(match.group(1)) not in sections:
                problems.append(f"{where}: cites §{match.group(1)}, a section docs/formats/v1.md does not have")
        links = [(m.group(1), m.group(2)) for m in MD_LINK.finditer(line)]
        if rel.endswith(".md"):
            links += [(Path(rel).name, m.group(1)) for m in SAME_FILE_LINK.finditer(line)]
        for target, anchor in links:
            # A link in a Markdown file is relative to that file; a path in code, to the repository.
            candidates = [(base / target).resolve(), (REPO / target).resolve()]
            path = next((c for c in candidates if c.is_file()), None)
            if path is None:
                problems.append(f"{where}: links {target}#{anchor}, but there is no file {target}")
                continue
            if path not in anchors_of:
                anchors_of[path] = anchors(path.read_text(encoding="utf-8"))
            known = anchors_of[path]
            if known is not None and anchor not in known:
                problems.append(f"{where}: links {target}#{anchor}, a heading {target} does not have")
    return problems


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    # public/ is the committed build of these sources; the test that rebuilds it compares every byte. This file
    # holds broken citations on purpose, as the cases that show the checks can fail.
    own = Path(__file__).resolve().relative_to(REPO).as_posix()
    return sorted(p for p in listed.decode().split("\0") if p and not p.startswith("public/") and p != own)


def test_the_v1_document_has_sections_1_to_9() -> None:
    assert v1_sections() == set(range(1, 10))
    assert {"5-methodology", "6-runs-and-certificates", "1-conventions"} <= anchors(V1.read_text(encoding="utf-8"))


def test_every_tracked_file_cites_only_what_the_repository_holds() -> None:
    sections = v1_sections()
    anchors_of: dict[Path, set[str] | None] = {}
    problems: list[str] = []
    files = tracked_files()
    for rel in files:
        path = REPO / rel
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a binary file cites nothing
        problems += problems_in(rel, text, sections, anchors_of)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("see " + "SPEC" + " §5", "by a name outside"),
        ("the contract is " + "SPEC" + ".md", "not in this repository"),
        ("in " + "../" + "shared/conformance", "not in this repository"),
        ("format v1 §12 says", "§12, a section"),
        ("see [FORMAT.md](FORMAT.md#no-such-heading)", "a heading FORMAT.md does not have"),
        ("see docs/formats/nothing.md#x", "there is no file"),
    ],
)
def test_a_broken_citation_is_found(line: str, expected: str) -> None:
    found = problems_in("README.md", f"ok\n{line}\n", v1_sections(), {})
    assert len(found) == 1 and found[0].startswith("README.md:2: ") and expected in found[0], found


@pytest.mark.parametrize(
    "line",
    [
        "RFC 9162 §2.1.3 and UTS #39 §5.2 are other documents",
        "format v1 §5 and §2-§8 ([format v1 §6](docs/formats/v1.md#6-runs-and-certificates))",
        "RUN_SPEC.json and SPEC_CASES are names, not citations",
        "[Verifier releases](#verifier-releases) and FORMAT.md#readings-where-the-spec-is-silent",
    ],
)
def test_a_good_citation_passes(line: str) -> None:
    assert problems_in("README.md", line, v1_sections(), {}) == []
