"""Bundle the verifier's modules into the one file every site ships: generator/verify.py.

    python -m generator.verifier.bundle           # write generator/verify.py
    python -m generator.verifier.bundle --check   # exit 1 if it is not what the modules give

As SQLite's amalgamation: the modules are the source of truth, and the single file people
download is generated from them, with a table of contents and a banner before each module.
The bundle is the modules' statements in dependency order, their intra-package imports
removed and their standard-library imports gathered after the isolation prelude (which must
run before any of them). Anything that could change meaning when files become one is refused
rather than bundled: a name defined in two modules, an import form other than
`from generator.verifier.<package>.<module> import <names>` for the package's own modules, an import of
anything but the standard library and PyNaCl, `from __future__`, or `__all__`.

This module is the project's tool, not part of the verifier: it is not bundled.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "generator.verifier"
HERE = Path(__file__).resolve().parent
TARGET = HERE.parent / "verify.py"

# Dependency order; the first runs before every other import, the last holds the __main__ block.
MODULES = (
    "core.isolation",
    "core.text",
    "core.errors",
    "core.canonical",
    "core.confusables_table",
    "core.confusables",
    "core.formats",
    "core.sodium",
    "core.public_keys",
    "core.note",
    "crypto.mldsa",
    "tlog.merkle",
    "tlog.subtrees",
    "tlog.tlogproof",
    "tlog.tiles",
    "tlog.tile_proofs",
    "tlog.cosignature",
    "tlog.log_list",
    "tlog.policy",
    "tlog.witnessing",
    "core.idindex",
    "crypto.der",
    "crypto.rsa",
    "crypto.ecdsa",
    "crypto.signatures",
    "crypto.x509",
    "crypto.timestamp_token",
    "crypto.hash_to_g1",
    "crypto.bls12_381",
    "crypto.drand",
    "rules.beacon",
    "rules.methodology_rules",
    "rules.scoring",
    "rules.agreement_statistics",
    "rules.labelsets",
    "rules.subjects",
    "rules.withdrawals",
    "rules.events",
    "rules.draws",
    "tlog.keyring",
    "rules.ledger",
    "rules.draw_pools",
    "rules.drawn_items",
    "exports.eee_record",
    "exports.cbor",
    "exports.scitt_statement",
    "exports.credential",
    "memory.ledger_snapshot",
    "memory.checkpoint_memory",
    "memory.list_memory",
    "memory.release_memory",
    "rules.answers",
    "rules.runs",
    "rules.lineage",
    "rules.score_edits",
    "rules.evidence",
    "rules.certificates",
    "rules.certificate_documents",
    "rules.recheck",
    "core.report",
    "core.windowed",
    "core.folder",
    "core.checksum_tree",
    "tlog.rotation",
    "memory.folder_memory",
    "memory.mirror_record",
    "site.manifest_parts",
    "site.release",
    "site.checksum_lists",
    "site.zip_layout",
    "site.download",
    "site.history",
    "site.history_v3",
    "site.commitment_parts",
    "site.ledger_files",
    "site.certificate_memo",
    "site.run_memo",
    "site.publication",
    "rules.revocations",
    "site.export_files",
    "site.certificate_records",
    "site.certificate_files",
    "site.agreement_files",
    "site.timestamp_files",
    "site.log_list_file",
    "site.accounting",
    "site.remote",
    "site.mirror_folder",
    "site.mirror",
    "site.verify_site",
    "site.command_line",
)
PRELUDE = "core.isolation"
NOT_BUNDLED = {"bundle"}  # and every package's __init__

HEADER = '''#!/usr/bin/env python3
"""Offline verifier for a transparency site (public formats v1).

    python3 -P /path/to/verify.py SITE [--key VKEY_OR_FINGERPRINT] [--json] [--debug]
    python3 -P /path/to/verify.py mirror URL DIR [--key VKEY_OR_FINGERPRINT] [--jobs N]

Checks every hash, signature and Merkle root of a downloaded site, replays its ledger and
recomputes what follows from it, every certificate's scores, grades and verdict included.
Needs only Python 3.11+ and PyNaCl. Exit status: 0 every check passed, 1 at least one failed,
2 the site could not be read, the arguments are wrong, or the verifier cannot run.

A copy found inside a site proves nothing by itself: it was shipped by the party being checked.
Obtain verify.py from the transparency-site project (generator/verify.py at the release the
site names), compare its SHA-256 with the one the project publishes for the release (README,
"Verifier releases"), keep it outside the site's folder and run it there; -P keeps Python from
importing modules from the script's folder.

GENERATED FILE: do not edit. It is the modules of generator/verifier/ bundled in this order by
`python -m generator.verifier.bundle`; read them there, one format concept each. Contents:

{toc}
"""
'''


class BundleError(Exception):
    """A module the bundler cannot join to the others without changing what it means."""


@dataclass
class _Module:
    name: str
    doc: str
    imports: list[str]  # hoisted standard-library import statements, as source
    body: list[str]  # the other top-level statements, as source
    defined: set[str]


def _isort_key(name: str) -> tuple[int, str, str]:
    """The order ruff's isort gives the names of one `from` import: constants, then classes,
    then the rest, each case-insensitively, so that the bundle passes the project's lint."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[0].isupper() else 2
    return kind, name.lower(), name


def _defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.With)):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    elif isinstance(node, (ast.If, ast.Try)):
        out: set[str] = set()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                out |= _defined_names(child)
            elif isinstance(child, ast.ExceptHandler):
                for c in child.body:
                    out |= _defined_names(c)
        return out
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def _relative(name: str) -> str:
    """A module's file under generator/verifier/, from its dotted name: `core.text` is core/text.py."""
    return name.replace(".", "/") + ".py"


def _read(name: str, folder: Path = HERE, modules: tuple[str, ...] = MODULES) -> _Module:
    path = folder / _relative(name)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    lines = source.split("\n")
    doc = ast.get_docstring(tree) or ""
    module = _Module(name, doc, [], [], set())
    body = tree.body[1:] if doc else tree.body
    for node in ast.walk(tree):  # an import inside a function would look for a module the bundle does not have
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in body:
            named = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            relative = isinstance(node, ast.ImportFrom) and node.level > 0
            if relative or any(m == "generator" or m.startswith("generator.") or m == "__future__" for m in named):
                raise BundleError(
                    f"generator/verifier/{_relative(name)} line {node.lineno}: an import of the package inside a "
                    "function or block; import at the top"
                )
    for node in body:
        text = "\n".join(lines[_start(node, lines) - 1 : node.end_lineno])
        where = f"generator/verifier/{_relative(name)} line {node.lineno}"
        if isinstance(node, ast.ImportFrom):
            if node.level or node.module is None:
                raise BundleError(f"{where}: a relative import; write `from {PACKAGE}.<module> import <names>`")
            if node.module == "__future__":
                raise BundleError(
                    f"{where}: `from __future__` is a real import of a module on sys.path; the verifier has none"
                )
            if node.module == PACKAGE or node.module.startswith(PACKAGE + "."):
                inner = node.module[len(PACKAGE) + 1 :]
                if inner not in modules or any(a.asname for a in node.names) or any(a.name == "*" for a in node.names):
                    raise BundleError(
                        f"{where}: import only plain names from a bundled module, as `from {PACKAGE}.<module> "
                        "import a, b`"
                    )
                if name != PRELUDE and modules.index(inner) >= modules.index(name):
                    raise BundleError(
                        f"{where}: imports {inner}, which comes later in MODULES: the order must follow the imports"
                    )
                continue  # the names are defined earlier in the same file
            if not _is_stdlib(node.module):
                raise BundleError(
                    f"{where}: imports {node.module}, which is neither the standard library nor the package itself"
                )
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("generator"):
                    raise BundleError(f"{where}: `import {a.name}`; write `from {PACKAGE}.<module> import <names>`")
                if not _is_stdlib(a.name):
                    raise BundleError(
                        f"{where}: imports {a.name}, which is not the standard library (PyNaCl is imported inside "
                        "sodium's try)"
                    )
        names = _defined_names(node)
        if "__all__" in names:
            raise BundleError(f"{where}: __all__ belongs in the package's __init__, not in a bundled module")
        if name != PRELUDE and isinstance(node, (ast.Import, ast.ImportFrom)):
            module.imports.append(text.strip())
        else:
            module.body.append(text)
        module.defined |= names if not isinstance(node, (ast.Import, ast.ImportFrom)) else set()
    return module


def _prelude_source(folder: Path) -> str:
    source = (folder / _relative(PRELUDE)).read_text(encoding="utf-8")
    tree = ast.parse(source)
    first = tree.body[1] if ast.get_docstring(tree) else tree.body[0]
    return "\n".join(source.split("\n")[first.lineno - 1 :]).strip("\n")


def _read_prelude_names(prelude: _Module) -> set[str]:
    """The modules the prelude imports itself (sys, os): not imported a second time."""
    return {
        a.name
        for stmt in prelude.body
        for node in ast.parse(stmt).body
        if isinstance(node, ast.Import)
        for a in node.names
    }


def _merged_imports(statements: list[str], already: set[str]) -> list[str]:
    """The modules' standard-library imports as one sorted block: `import x` lines, then one
    `from m import a, b` line per module, each name once."""
    plain: set[str] = set()
    names: dict[str, set[str]] = {}
    for stmt in statements:
        node = ast.parse(stmt).body[0]
        if isinstance(node, ast.Import):
            plain |= {
                a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names if a.name not in already
            }
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.setdefault(node.module, set()).update(
                a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names
            )
    return [f"import {m}" for m in sorted(plain)] + [
        f"from {m} import {', '.join(sorted(n, key=_isort_key))}" for m, n in sorted(names.items())
    ]


def _start(node: ast.stmt, lines: list[str]) -> int:
    """The first line of a statement, its decorators and the comment lines just above it."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    while first > 1 and lines[first - 2].startswith("#"):
        first -= 1
    return first


def bundle(folder: Path = HERE, order: tuple[str, ...] = MODULES) -> str:
    """The bundled verify.py, as text, from the modules in `folder` in `order`."""
    present = {
        ".".join(p.relative_to(folder).with_suffix("").parts) for p in folder.rglob("*.py") if p.stem != "__init__"
    } - NOT_BUNDLED
    if present != set(order):
        raise BundleError(
            f"generator/verifier holds {sorted(present - set(order))} and lacks {sorted(set(order) - present)}: "
            "list every module in bundle.MODULES, in dependency order"
        )
    modules = [_read(m, folder, order) for m in order]
    owner: dict[str, str] = {}
    for m in modules:
        for n in sorted(m.defined):
            if n in owner:
                raise BundleError(
                    f"{n} is defined in both {_relative(owner[n])} and {_relative(m.name)}: one bundle cannot hold "
                    "both; rename one"
                )
            owner[n] = m.name
    imports = _merged_imports([i for m in modules for i in m.imports], _read_prelude_names(modules[0]))
    sections: list[tuple[str, list[str]]] = []
    for m in modules:
        first = m.doc.split("\n\n")[0].replace("\n", " ")
        title = textwrap.wrap(f"generator/verifier/{_relative(m.name)}: {first}", 116, subsequent_indent="    ")
        banner = ["# " + "=" * 94, *("# " + t for t in title), "# " + "=" * 94, ""]
        code = "\n\n\n".join(s for s in m.body)
        if m.name == PRELUDE:
            code = _prelude_source(folder)  # as written: its statements' order and spacing are the point
            sections.append(
                (
                    m.name,
                    [
                        *banner,
                        code,
                        "",
                        "",
                        "# " + "=" * 94,
                        "# The standard library, imported once the site's folder is off sys.path",
                        "# " + "=" * 94,
                        *imports,
                        "",
                    ],
                )
            )
        else:
            sections.append((m.name, [*banner, code, "", ""]))
    body = "\n".join("\n".join(lines) for _, lines in sections).rstrip("\n") + "\n"
    # The table of contents has one line a module and fixed-width numbers: lay the file out
    # once with zeros, find each module's banner, then write the real numbers in.
    draft = HEADER.format(toc="\n".join(_toc_line(name, 0, 0) for name, _ in sections)) + "\n" + body
    lines = draft.split("\n")
    starts = [
        next(i for i, line in enumerate(lines) if line.startswith(f"# generator/verifier/{_relative(name)}: "))
        for name, _ in sections
    ]
    total = len(lines) - 1  # the file ends with a newline
    ends = [start - 1 for start in starts[1:]] + [total]
    toc = "\n".join(_toc_line(name, start, end) for (name, _), start, end in zip(sections, starts, ends, strict=True))
    return HEADER.format(toc=toc) + "\n" + body


def _toc_line(name: str, start: int, end: int) -> str:
    """A module's line range, from its opening banner (1-based) to the line before the next."""
    return f"    generator/verifier/{_relative(name):<32} lines {start:>5} to {end:>5}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator.verifier.bundle", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="fail (exit 1) if generator/verify.py is not what the modules give"
    )
    args = parser.parse_args(argv)
    try:
        text = bundle()
    except BundleError as e:
        print(f"bundle: {e}", file=sys.stderr)
        return 2
    if args.check:
        if TARGET.read_text(encoding="utf-8") != text:
            print(
                f"bundle: {TARGET} is stale; run `make bundle` (python -m generator.verifier.bundle) and commit it",
                file=sys.stderr,
            )
            return 1
        print(f"bundle: {TARGET} is current")
        return 0
    # Whole or not at all: a test or a build reading verify.py meanwhile never sees half of it.
    tmp = TARGET.with_name(f".{TARGET.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, TARGET)
    print(f"bundle: wrote {TARGET} ({text.count(chr(10))} lines from {len(MODULES)} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
