"""Write the generated parts of ARCHITECTURE.md: the tables of folders and modules, from the map in
generator/architecture.py and the docstrings, and the build's steps, from generator/commands/build_steps.py.

Each part lies between a `<!-- generated: NAME ... -->` line and the `<!-- end of generated: NAME -->` line after
it; every other byte of the file is kept. A folder is shown with the first paragraph of its package's docstring,
what its line of the map lets it import (and why, where a line names single modules), and one row per module: the
first sentence of the module's docstring. A test fails when the file differs from what this writes, so a module
can never go missing from it.

    python tools/architecture_doc.py           # rewrite ARCHITECTURE.md (make architecture)
    python tools/architecture_doc.py --check   # exit status 1 if it is not current
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generator import architecture  # noqa: E402
from generator.verifier import bundle  # noqa: E402

DOC = REPO / "ARCHITECTURE.md"
GENERATOR = REPO / "generator"
VERIFIER = GENERATOR / "verifier"
BEGIN = "<!-- generated: {name} (python tools/architecture_doc.py writes what follows, up to the end mark) -->"
END = "<!-- end of generated: {name} -->"
# A sentence ends at a full stop followed by a capital, a backtick or a parenthesis; "e.g." and the like do not end one.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)\.\s+(?=[A-Z`(])")


def docstring(path: Path) -> str:
    """The docstring of a module (empty if it has none), read without importing it."""
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def first_sentence(text: str) -> str:
    paragraph = first_paragraph(text)
    end = _SENTENCE_END.search(paragraph)
    return paragraph[: end.start() + 1] if end else paragraph


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _module_table(rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return ["(No module of its own: its sub-folders hold them.)"]
    lines = ["| module | what it holds |", "| --- | --- |"]
    lines += [f"| `{name}` | {_cell(summary)} |" for name, summary in rows]
    return lines


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _where(package: Path, dotted: str) -> str:
    """A line of the map or one of its entries, as the path a reader opens (in backticks)."""
    if not dotted:
        return f"`{_rel(package)}/` (the root)"
    target = package.joinpath(*dotted.split("."))
    return f"`{_rel(target)}.py`" if target.with_suffix(".py").is_file() else f"`{_rel(target)}/`"


def verifier_part() -> list[str]:
    """The verifier's folders, lowest first, each with its modules in the bundle's order."""
    out: list[str] = []
    for folder, allowed in architecture.VERIFIER.items():
        if not folder:
            continue
        package = VERIFIER / folder
        modules = [m.split(".", 1)[1] for m in bundle.MODULES if m.split(".")[0] == folder]
        others = sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__" and p.stem not in modules)
        out += [
            f"### `{_rel(package)}/`",
            "",
            first_paragraph(docstring(package / "__init__.py")),
            "",
            "May import: " + ", ".join(_where(VERIFIER, a) for a in allowed) + ".",
            "",
            *_module_table([(m, first_sentence(docstring(package / f"{m}.py"))) for m in [*modules, *others]]),
            "",
        ]
    root = sorted(p.stem for p in VERIFIER.glob("*.py") if p.stem != "__init__")
    out += [
        f"### `{_rel(VERIFIER)}/` (the root)",
        "",
        first_paragraph(docstring(VERIFIER / "__init__.py")),
        "",
        *_module_table([(m, first_sentence(docstring(VERIFIER / f"{m}.py"))) for m in root]),
    ]
    return out


def _packages() -> list[Path]:
    """The generator's folders (the verifier aside) in the map's order, each followed by its sub-folders,
    and the root last."""
    tops = [line for line in architecture.GENERATOR if line and "." not in line]
    found = [p.parent for p in GENERATOR.rglob("*/__init__.py") if p.parent != VERIFIER and VERIFIER not in p.parents]
    ordered = sorted(found, key=lambda p: (tops.index(p.relative_to(GENERATOR).parts[0]), p.parts))
    return [*ordered, GENERATOR]


def _allowed_text(line: str) -> str:
    allowed = architecture.GENERATOR[line]
    folders = [a for a in allowed if a == line or not (GENERATOR / f"{a.replace('.', '/')}.py").is_file()]
    modules = [a for a in allowed if a not in folders]
    text = "May import: " + ", ".join(_where(GENERATOR, a) for a in folders)
    if modules:
        text += "; and of other folders only " + "; ".join(
            f"{_where(GENERATOR, a)}, {architecture.NARROW[(line, a)]}" for a in modules
        )
    return text + "."


def generator_part() -> list[str]:
    """The generator's folders in the map's order: docstring, what the map lets them import, modules."""
    out: list[str] = []
    for package in _packages():
        dotted = ".".join(package.relative_to(GENERATOR).parts)
        line = architecture.folder_of(dotted, architecture.GENERATOR) if dotted else ""
        heading = f"### `{_rel(package)}/`" + (" (the root)" if package == GENERATOR else "")
        out += [heading, "", first_paragraph(docstring(package / "__init__.py")), ""]
        out += [_allowed_text(line) if line == dotted else f"Follows the line of {_where(GENERATOR, line)}.", ""]
        names = sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__" and p.name != "verify.py")
        for name in names:
            own = f"{dotted}.{name}" if dotted else name
            if own in architecture.OWN_LINES:
                out += [f"`{name}` has a line of its own: {architecture.OWN_LINES[own]}. " + _allowed_text(own), ""]
        out += [*_module_table([(n, first_sentence(docstring(package / f"{n}.py"))) for n in names]), ""]
    out += ["The edges that cross the layers, each named in `EXCEPTIONS` with its reason:", ""]
    out += [f"- `{a}` imports `{b}`: {why}." for (a, b), why in architecture.EXCEPTIONS.items()]
    return out


def _term(text: str) -> str:
    """A step's read or write: a path (its first word, before any remark in parentheses) in backticks."""
    path, sep, remark = text.partition(" (")
    return f"`{path}`{' (' if sep else ''}{remark}" if " " not in path else text


def _steps_table(steps: tuple[Any, ...]) -> list[str]:
    lines = ["| # | step | reads | writes |", "| --- | --- | --- | --- |"]
    for n, step in enumerate(steps, start=1):
        name = step.name + (" (on every core)" if step.on_every_core else "")
        reads = "; ".join(_term(r) for r in step.reads) or "nothing"
        writes = "; ".join(_term(w) for w in step.writes) or "nothing"
        lines.append(f"| {n} | {_cell(name)} | {_cell(reads)} | {_cell(writes)} |")
    return lines


def steps_part() -> list[str]:
    from generator.commands import build_steps

    return [
        "Into the staging folder, in this order (`WRITE`, run by `write_site`):",
        "",
        *_steps_table(build_steps.WRITE),
        "",
        "These steps, and the caches staged beside their places (`stage_caches`), run in a process forked for them "
        "(`generator/core/child_process.py`), whose end gives back all the memory they took; the build's own process "
        "then verifies the staged site with the verify.py it ships and swaps it in; after the swap (`AFTER_SWAP`):",
        "",
        *_steps_table(build_steps.AFTER_SWAP),
    ]


PARTS = {"verifier": verifier_part, "generator": generator_part, "build steps": steps_part}


def generated(text: str) -> str:
    """`text` with each generated part written anew."""
    for name, make in PARTS.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        head, sep, rest = text.partition(begin + "\n")
        if not sep:
            raise ValueError(f"{DOC.name} has no line {begin!r}")
        _, sep, tail = rest.partition(end + "\n")
        if not sep:
            raise ValueError(f"{DOC.name} has no line {end!r} after {begin!r}")
        text = head + begin + "\n\n" + "\n".join(make()) + "\n\n" + end + "\n" + tail
    return text


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    want = generated(text)
    if argv[1:] == ["--check"]:
        if want != text:
            print(f"{DOC.name} is not current: run python tools/architecture_doc.py", file=sys.stderr)
            return 1
        print(f"{DOC.name} is current")
        return 0
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    if want != text:
        DOC.write_text(want, encoding="utf-8")
        print(f"wrote {DOC.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
