"""Every citation in the repository resolves inside it.

The formats are this project's own documents: public formats v1, docs/formats/v1.md, cited as "format v1 §N",
and this project's readings and format v2, indexed by FORMAT.md and written one file a topic in docs/formats/.
A citation of a document kept elsewhere, a section that document does not have, a heading of the format
documents that none of them has (`FORMAT.md, "Heading"`, `FORMAT.md reading N`, `FORMAT.md v2 item N`, …, by
the rule FORMAT.md states at its top), a README section that is not there (`README, "Heading"`), a link to a
Markdown heading that does not exist, or a relative link of a Markdown file to no file leaves an operator or an
auditor with nothing to read, so each fails here, naming the file and the line.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.demo import REPO

FORMATS = REPO / "docs" / "formats"
V1 = FORMATS / "v1.md"
INDEX = REPO / "FORMAT.md"
README = REPO / "README.md"

# Spelled in pieces so that this file does not cite what it forbids.
OUTSIDE = ("../" + "shared", "SPEC" + ".md")
BARE_SPEC = re.compile(r"\b" + "SPEC" + r"\b(?!\.md)")
# A section of format v1 is a whole number; a dotted one (§2.1.3) is an RFC's or another standard's.
SECTION = re.compile(r"§(\d+)(?![.\d])")
MD_LINK = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)#([^\s)\]\"'`<>,;]+)")
SAME_FILE_LINK = re.compile(r"\]\(#([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# A source file of this repository named in any file, e.g. generator/verifier/rules/ledger.py: modules
# move, and a path that no longer exists sends the reader nowhere (Markdown files: the link checks).
REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:generator|tests|site_templates|tools|data|examples|docs)/[\w./-]*\w\.(?:py|js|html|sh))(?![\w/-])"
)
# A Markdown link to a file of the repository: [text](path) or [text](path#anchor), not a URL.
FILE_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s#]+)(?:#[^)\s]*)?\)")

# FORMAT.md cited by a section: the words after the name, read across line breaks and comment markers.
FORMAT_CITED = re.compile(r"(?<![\w/.-])FORMAT\.md(?![\w#\]])")
README_CITED = re.compile(r"(?<![\w/.-])README(?:\.md)?,?\s*\\?\"([^\"\\]+)\\?\"")
QUOTED = re.compile(r'\\?"([^"\\]+)\\?"')
QUOTED_MORE = re.compile(r'\s*(?:,|;|and|or)\s*(?=\\?")')


def words(text: str) -> str:
    """A heading or a cited name compared as words: links and backticks dropped, case folded, spaces one."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "")
    return " ".join(text.split()).casefold()


def headings(markdown: str) -> list[str]:
    """The headings of a Markdown file, in order, as written (code blocks hold none)."""
    found: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = HEADING.match(line)
        if match and not fenced:
            found.append(match.group(2))
    return found


def anchors(markdown: str) -> set[str]:
    """The heading anchors GitHub gives a Markdown file: lower case, punctuation dropped, spaces as
    hyphens, a repeated anchor numbered -1, -2, … (code blocks hold no headings)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in headings(markdown):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def names_of(heading: str) -> set[str]:
    """The names a heading answers to (FORMAT.md's rule): itself, itself without its closing parenthesis, and
    its words before its first colon or comma."""
    full = words(heading)
    names = {full, re.sub(r"\s*\([^()]*\)$", "", full)}
    names.add(re.split(r"[:,]", full, maxsplit=1)[0].strip())
    return {n for n in names if n}


def numbered(path: Path) -> set[int]:
    """The numbers of a document's numbered readings: each a list item `N. **Name.**` at the margin."""
    return {int(m.group(1)) for m in re.finditer(r"^(\d+)\. \*\*", path.read_text(encoding="utf-8"), re.M)}


@dataclass(frozen=True)
class Docs:
    sections: frozenset[int]  # of format v1
    format_names: frozenset[str]  # every name a heading of the format documents answers to, and the aliases
    readings: frozenset[int]  # of docs/formats/readings.md
    v2_items: frozenset[int]  # of docs/formats/history.md
    readme_names: frozenset[str]


def aliases(index: str) -> set[str]:
    """The names of FORMAT.md's table "Names cited for part of a section" (first column)."""
    part = index.split("## Names cited for part of a section", 1)
    rows = re.findall(r"^\| ([^|]+?) \|", part[1], re.M) if len(part) == 2 else []
    return {words(r) for r in rows if words(r) not in ("cited as", "---")}


@functools.cache
def docs() -> Docs:
    names: set[str] = set()
    for path in [INDEX, *sorted(FORMATS.glob("*.md"))]:
        for heading in headings(path.read_text(encoding="utf-8")):
            names |= names_of(heading)
    names |= aliases(INDEX.read_text(encoding="utf-8"))
    readme_names: set[str] = set()
    for heading in headings(README.read_text(encoding="utf-8")):
        readme_names |= names_of(heading)
    return Docs(
        sections=frozenset(v1_sections()),
        format_names=frozenset(names),
        readings=frozenset(numbered(FORMATS / "readings.md")),
        v2_items=frozenset(numbered(FORMATS / "history.md")),
        readme_names=frozenset(readme_names),
    )


def v1_sections() -> set[int]:
    return {int(m.group(1)) for m in re.finditer(r"^## (\d+)\. ", V1.read_text(encoding="utf-8"), re.M)}


def joined(text: str, start: int, size: int = 240) -> str:
    """The text from START on as one line: each line break, with the indentation and comment marker (#, //, *)
    of the next line, read as one space."""
    return re.sub(r"\s*\n\s*(?:#|//|\*(?!\*))?\s*", " ", text[start : start + size])


def format_citation_problems(tail: str, known: Docs) -> list[str]:
    """What is wrong with the citation that follows the name FORMAT.md (TAIL, on one line)."""
    if m := re.match(r",?\s+v2 item (\d+)", tail):
        return [] if int(m.group(1)) in known.v2_items else [f"cites FORMAT.md v2 item {m.group(1)}, which it has not"]
    if m := re.match(r",?\s+reading (\d+)|\s+(\d+)\b", tail):
        n = m.group(1) or m.group(2)
        return [] if int(n) in known.readings else [f"cites FORMAT.md reading {n}, which it has not"]
    if m := re.match(r"(?:\s+v2)?(?:,\s*|\s+)\(?(?=\\?\")", tail):
        problems = []
        at = m.end()
        while quoted := QUOTED.match(tail, at):
            name = words(quoted.group(1))
            if name not in known.format_names:
                problems.append(f'cites FORMAT.md, "{quoted.group(1)}", a heading no format document has')
            more = QUOTED_MORE.match(tail, quoted.end())
            if not more:
                break
            at = more.end()
        return problems
    if m := re.match(r",\s+(?=[A-Za-z])", tail):
        # Unquoted (the JSON Schemas' descriptions): the longest name the words begin with, then a word's end.
        rest = words(tail[m.end() :])
        if any(rest.startswith(n) and not rest[len(n) : len(n) + 1].isalnum() for n in known.format_names):
            return []
        cited = re.split(r"[):;.]", tail[m.end() :], maxsplit=1)[0].strip()
        return [f'cites FORMAT.md, "{cited}", a heading no format document has']
    return []


def without_code_spans(markdown: str) -> str:
    """A Markdown text with each inline code span blanked out: a span shows a form (`FORMAT.md, "Heading"`),
    it cites nothing. Fence lines are kept, and every offset and line stays where it was."""
    return "\n".join(
        line if line.lstrip().startswith("```") else re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line)
        for line in markdown.split("\n")
    )


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def problems_in(rel: str, text: str, known: Docs, anchors_of: dict[Path, set[str] | None]) -> list[str]:
    """Every broken citation of one file's text, as 'path:line: what'."""
    problems: list[str] = []
    base = (REPO / rel).parent
    markdown = rel.endswith(".md")
    if markdown:
        text = without_code_spans(text)
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{rel}:{number}"
        for outside in OUTSIDE:
            if outside in line:
                problems.append(f"{where}: cites {outside}, which is not in this repository (use docs/formats/v1.md)")
        if BARE_SPEC.search(line):
            problems.append(f"{where}: cites the spec by a name outside this repository (write 'format v1 §N')")
        for match in REPO_PATH.finditer(line):
            if not (REPO / match.group(1)).exists():
                problems.append(f"{where}: names {match.group(1)}, which this repository does not have")
        for match in SECTION.finditer(line):
            if int(match.group(1)) not in known.sections:
                problems.append(f"{where}: cites §{match.group(1)}, a section docs/formats/v1.md does not have")
        links = [(m.group(1), m.group(2)) for m in MD_LINK.finditer(line)]
        if markdown:
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
            known_anchors = anchors_of[path]
            if known_anchors is not None and anchor not in known_anchors:
                problems.append(f"{where}: links {target}#{anchor}, a heading {target} does not have")
        if markdown:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced:
                for m in FILE_LINK.finditer(line):
                    if not (base / m.group(1)).exists():
                        problems.append(f"{where}: links {m.group(1)}, but there is no such file or folder")
    for m in FORMAT_CITED.finditer(text):
        for problem in format_citation_problems(joined(text, m.end()), known):
            problems.append(f"{rel}:{line_of(text, m.start())}: {problem}")
    for m in re.finditer(r"(?<![\w/.-])README(?:\.md)?(?=,|\s+\\?\")", text):
        cited = README_CITED.match(joined(text, m.start()))
        if cited and words(cited.group(1)) not in known.readme_names:
            problems.append(f'{rel}:{line_of(text, m.start())}: cites README, "{cited.group(1)}", a section it has not')
    return problems


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    # public/ is the committed build of these sources; the test that rebuilds it compares every byte (the
    # archive by its hash). This file holds broken citations on purpose, as the cases that show the checks can fail.
    own = Path(__file__).resolve().relative_to(REPO).as_posix()
    return sorted(p for p in listed.decode().split("\0") if p and not p.startswith("public/") and p != own)


def test_the_v1_document_has_sections_1_to_9() -> None:
    assert v1_sections() == set(range(1, 10))
    assert {"5-methodology", "6-runs-and-certificates", "1-conventions"} <= anchors(V1.read_text(encoding="utf-8"))


def test_the_format_documents_have_their_numbered_readings() -> None:
    assert docs().readings == set(range(1, 27))
    assert docs().v2_items == set(range(1, 8))


def test_the_index_links_every_format_document_and_keeps_every_old_heading() -> None:
    """FORMAT.md lists every file of docs/formats/, and keeps each heading the single FORMAT.md had, so that
    an old link FORMAT.md#heading still leads to the file that now holds it."""
    index = INDEX.read_text(encoding="utf-8")
    for path in sorted(FORMATS.glob("*.md")):
        assert f"](docs/formats/{path.name}" in index, f"FORMAT.md does not link docs/formats/{path.name}"
    old = {
        "the-sites-paths",
        "readings-where-the-spec-is-silent",
        "format-v2-history-format-v1-9",
        "events-v2-adds-certificate-revocation",
        "events-v2-adds-key-rotation-and-key-revocation",
        "events-v2-adds-run-withdrawal",
        "witnesses-cosignatures-and-trust-policies",
        "the-downloadable-copy",
        "importing-an-inspect-log-transparency-results-from-inspect",
        "judge-pinning-v2",
        "evidence-files-v2",
        "attempts-and-lineage-v2",
        "score-edits-v2",
        "judge-agreement-v2",
        "feeds-sitemap-robotstxt",
        "private-formats-never-published",
        "json-schemas",
        "in-browser-verification",
        "search",
    }
    assert old <= anchors(index), old - anchors(index)


def test_no_two_format_documents_share_a_heading() -> None:
    """A cited heading names one place: the topic files (the index aside, which repeats their titles) do not
    repeat one another's headings."""
    seen: dict[str, str] = {}
    for path in sorted(FORMATS.glob("*.md")):
        for heading in set(map(words, headings(path.read_text(encoding="utf-8")))):
            assert heading not in seen, f"{heading!r} is a heading of both {seen[heading]} and {path.name}"
            seen[heading] = path.name


def test_every_tracked_file_cites_only_what_the_repository_holds() -> None:
    known = docs()
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
        problems += problems_in(rel, text, known, anchors_of)
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
        ('the rule (FORMAT.md, "No such heading")', '"No such heading", a heading no'),
        ('as FORMAT.md "Judge pinning (v3)" says', '"Judge pinning (v3)", a heading no'),
        ('(FORMAT.md v2, "History"; "Nowhere")', '"Nowhere", a heading no'),
        ('(FORMAT.md, "Score edits" and "Attempts and\n    # nothing")', '"Attempts and nothing", a heading no'),
        ('"description": "(FORMAT.md, Judge agreements): the labels"', '"Judge agreements", a heading no'),
        ("(FORMAT.md reading 27)", "reading 27, which it has not"),
        ("(FORMAT.md, reading 0)", "reading 0, which it has not"),
        ("(FORMAT.md 99)", "reading 99, which it has not"),
        ("(FORMAT.md v2 item 8)", "v2 item 8, which it has not"),
        ('the wheel (README, "Installing")', 'README, "Installing", a section'),
        ('see README "Item sources"', 'README, "Item sources", a section'),
        ("the [guide](docs/nothing.md)", "links docs/nothing.md, but there is no such file"),
        ("the [folder](docs/nothing/)", "links docs/nothing/, but there is no such file"),
        ("[a heading](docs/formats/v1.md#99-nothing)", "a heading docs/formats/v1.md does not have"),
        ("the rule lives in generator/verifier/ledger.py", "names generator/verifier/ledger.py, which this"),
    ],
)
def test_a_broken_citation_is_found(line: str, expected: str) -> None:
    found = problems_in("README.md", f"ok\n{line}\n", docs(), {})
    assert len(found) == 1 and found[0].startswith("README.md:2: ") and expected in found[0], found


@pytest.mark.parametrize(
    "line",
    [
        "RFC 9162 §2.1.3 and UTS #39 §5.2 are other documents",
        "format v1 §5 and §2-§8 ([format v1 §6](docs/formats/v1.md#6-runs-and-certificates))",
        "RUN_SPEC.json and SPEC_CASES are names, not citations",
        "[Verifier releases](#verifier-releases) and FORMAT.md#readings-where-the-spec-is-silent",
        '(FORMAT.md, "Judge pinning") and (FORMAT.md, "Judge agreement (v2)")',
        '(FORMAT.md ("Search")) and FORMAT.md "Importing an Inspect log"',
        '(FORMAT.md v2, "History"; "Evidence files") and (FORMAT.md, "Evidence files" and "Attempts and lineage")',
        '(FORMAT.md, "The\n#     verifier\'s memory"), (FORMAT.md, "State snapshots")',
        '"(format v2, FORMAT.md, Events v2 adds: run withdrawal)", "(FORMAT.md, Evidence files: the files)"',
        "(FORMAT.md, feeds), (FORMAT.md, format v2), (FORMAT.md v2): (FORMAT.md) FORMAT.md: the list",
        "FORMAT.md reading 26, (FORMAT.md, reading\n    17), (FORMAT.md 4), FORMAT.md v2 item 7",
        '(FORMAT.md, v2 item 6), and in code a form: `FORMAT.md, "Heading"` or `FORMAT.md#anchor`',
        "the bounds of FORMAT.md (64 dimensions on a 101-point scale)",
        'for name in ("README.md", "FORMAT.md"): print(f"{name}")',
        'the wheel (README, "Install"), the table (README,\n"Verifier releases")',
        "[the guide](docs/operating.md#install), [formats](docs/formats/), [items](examples/items.yaml)",
        "[a site](https://example.org/x.md) and [mail](mailto:a@example.org)",
        "the replay in generator/verifier/rules/ledger.py, the page tests/docs/test_tutorial.py",
    ],
)
def test_a_good_citation_passes(line: str) -> None:
    assert problems_in("README.md", line, docs(), {}) == []
