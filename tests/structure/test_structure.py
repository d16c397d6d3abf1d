"""The shape of the code, held by tests: the verifier is small modules bundled into one file
that is never stale, it imports nothing of the generator, and the generator uses only what the
verifier declares in `__all__`."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import generator.verifier
from generator import architecture
from generator.core import layout
from generator.verifier import bundle as bundler
from tests.support.demo import REPO, BuiltSite

VERIFIER = REPO / "generator" / "verifier"
GENERATOR = REPO / "generator"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 100


def _imports(path: Path) -> list[tuple[int, str, list[str], int]]:
    """(line, module, names, level) of every import in a file, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            out.append((node.lineno, node.module or "", [a.name for a in node.names], node.level))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, [], 0) for a in node.names)
    return out


def test_the_bundled_verify_py_is_current() -> None:
    """generator/verify.py is generated: `make bundle` regenerates it after any change."""
    assert bundler.TARGET.read_text(encoding="utf-8") == bundler.bundle(), (
        "generator/verify.py is stale: run `make bundle`"
    )


def test_the_bundle_check_command_passes() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "generator.verifier.bundle", "--check"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "is current" in r.stdout


def test_the_table_of_contents_points_at_each_module() -> None:
    text = bundler.TARGET.read_text(encoding="utf-8")
    lines = text.split("\n")
    head = lines[: lines.index('"""', 1)]  # the docstring, which holds the table
    toc = [line.split() for line in head if line.strip().startswith("generator/verifier/") and "lines" in line]
    assert [row[0] for row in toc] == [f"generator/verifier/{m.replace('.', '/')}.py" for m in bundler.MODULES]
    for row in toc:
        start, end = int(row[2]), int(row[4])
        assert lines[start - 1].startswith("# ====") and lines[start].startswith(f"# {row[0]}:"), row
        assert end >= start
    assert int(toc[-1][4]) == len(lines) - 1  # the last module runs to the end of the file


def test_every_verifier_module_is_small_enough_to_read_in_one_sitting() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in VERIFIER.rglob("*.py")}
    assert all(n <= MAX_MODULE_LINES for n in sizes.values()), {k: v for k, v in sizes.items() if v > MAX_MODULE_LINES}


def test_every_function_is_short_enough_to_read_as_one_step() -> None:
    """A function longer than a screenful or two is several steps in one: cut it into named ones.
    The verifier and the generator alike (but the bundle, which is the verifier's modules joined)."""
    long = {}
    for path in sorted(GENERATOR.rglob("*.py")):
        if path == bundler.TARGET:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO)}:{node.lineno} {node.name}"] = lines
    assert not long, long


def test_the_verifier_imports_only_itself_the_standard_library_and_pynacl() -> None:
    for path in sorted(VERIFIER.rglob("*.py")):
        for line, module, _, level in _imports(path):
            top = module.split(".")[0]
            where = f"{path.relative_to(REPO)}:{line}"
            assert level == 0, f"{where}: a relative import"
            assert module != "__future__" or path.name == "bundle.py", (
                f"{where}: `from __future__` is a real import on sys.path"
            )
            if top == "generator":
                assert module.startswith("generator.verifier"), (
                    f"{where}: the verifier imports {module} of the generator"
                )
            else:
                assert top in sys.stdlib_module_names or (top == "nacl" and path.name == "sodium.py"), (
                    f"{where}: imports {module}"
                )


def test_the_generator_uses_only_what_the_verifier_declares() -> None:
    declared = set(generator.verifier.__all__)
    for path in sorted(p for p in GENERATOR.rglob("*.py") if VERIFIER not in p.parents and p.name != "verify.py"):
        for line, module, names, _ in _imports(path):
            where = f"{path.relative_to(REPO)}:{line}"
            if module == "generator.verifier":
                undeclared = [n for n in names if n not in declared]
                assert not undeclared, (
                    f"{where}: imports {undeclared}, which generator.verifier.__all__ does not declare"
                )
            else:
                assert not module.startswith("generator.verifier"), (
                    f"{where}: imports the verifier's module {module}; use its __all__"
                )
                assert module != "generator.verify", f"{where}: imports the bundle; use the package"


def _module_of(path: Path, package: Path) -> str:
    """A file's dotted module name relative to its package: `site.views.view_models`; "" for the root `__init__`."""
    rel = path.relative_to(package).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _targets(path: Path, package: Path, prefix: str) -> list[tuple[int, str]]:
    """(line, dotted module relative to `prefix`) of every import of the package by a file."""
    out = []
    for line, module, names, _ in _imports(path):
        if module != prefix and not module.startswith(prefix + "."):
            continue
        inner = module.removeprefix(prefix).removeprefix(".")
        for name in names or [""]:
            sub = f"{inner}.{name}" if inner else name
            where = package.joinpath(*sub.split("."))
            out.append((line, sub if name and (where.with_suffix(".py").exists() or where.is_dir()) else inner))
    return out


def _generator_modules() -> list[Path]:
    return sorted(p for p in GENERATOR.rglob("*.py") if VERIFIER not in p.parents and p.name != "verify.py")


def _is_module(package: Path, dotted: str) -> bool:
    return bool(dotted) and package.joinpath(*dotted.split(".")).with_suffix(".py").is_file()


def test_every_folder_is_on_the_map_and_the_map_names_only_folders_and_modules() -> None:
    """Each folder of the generator and of the verifier has its line in generator/architecture.py (a
    folder inside one, as importers/inspect/, follows its parent's); a line is a folder, or a module
    with a line of its own, and lists folders and modules that exist."""
    for package, layers in ((GENERATOR, architecture.GENERATOR), (VERIFIER, architecture.VERIFIER)):
        tops = {p.parent.name for p in package.glob("*/__init__.py")} - (
            {"verifier"} if package == GENERATOR else set()
        )
        assert {f.split(".")[0] for f in layers if f} == tops, (package, tops)
        for line, allowed in layers.items():
            folder = (package.joinpath(*line.split(".")) / "__init__.py").exists()
            assert folder or _is_module(package, line), line
            assert line in allowed or not folder, f"{line or 'the root'} may import its own modules"
            for a in allowed:
                assert a in layers or package.joinpath(*a.split(".")).is_dir() or _is_module(package, a), a


def test_every_single_module_a_line_names_has_its_reason() -> None:
    """A line that lists one module of another folder says why that one (NARROW); a module with a
    line of its own says why it may import less than its folder (OWN_LINES); no reason is left over."""
    named = {(line, a) for line, allowed in architecture.GENERATOR.items() for a in allowed if _is_module(GENERATOR, a)}
    assert named == set(architecture.NARROW), named ^ set(architecture.NARROW)
    own = {line for line in architecture.GENERATOR if _is_module(GENERATOR, line)}
    assert own == set(architecture.OWN_LINES), own ^ set(architecture.OWN_LINES)
    for (a, b), why in architecture.EXCEPTIONS.items():
        assert why and _is_module(GENERATOR, a) and _is_module(GENERATOR, b), (a, b)


def test_cli_only_wires_click_to_the_commands() -> None:
    """The root's line lets cli import the commands and, of the rest, single modules with their
    reasons only: no folder below the commands, so cli cannot grow logic of its own."""
    root = architecture.GENERATOR[""]
    assert [a for a in root if not _is_module(GENERATOR, a)] == ["commands", ""]
    assert sorted(a for a in root if _is_module(GENERATOR, a)) == ["core.generator_errors", "program.datadir"]
    imported = {target.split(".")[0] for _, target in _targets(GENERATOR / "cli.py", GENERATOR, "generator")}
    assert imported <= {"commands", "core", "program", "verifier", ""}, imported  # "": __version__


def test_within_a_layer_a_view_never_imports_the_writer_and_gathering_imports_no_other_build_module() -> None:
    for view in ("site.views.view_models", "site.views.links_view"):
        for forbidden in ("build.writer", "site.render", "site.pages", "build.artifacts", "state.page_cache"):
            assert not architecture.may_import(view, forbidden), (view, forbidden)
    for forbidden in ("build.writer", "build.artifacts", "build.cosigning", "site.pages"):
        assert not architecture.may_import("build.gather", forbidden), forbidden
    assert not architecture.may_import("build.writer", "build.gather")
    assert architecture.may_import("build.artifacts", "build.writer")


def test_data_flows_one_way_through_the_generator_s_folders() -> None:
    """generator.architecture's map: a module imports only the folders and modules its line lists (a
    view never the writer, gathering no other build module, a program of its own core and its own
    state, and the program's files for an importer)."""
    for path in _generator_modules():
        own = _module_of(path, GENERATOR)
        for line, target in _targets(path, GENERATOR, "generator"):
            if target in ("", "__version__") or target.split(".")[0] == "verifier":
                continue
            assert architecture.may_import(own, target), (
                f"{path.relative_to(REPO)}:{line} imports generator.{target}: the map in generator/architecture.py "
                f"lets {architecture.folder_of(own, architecture.GENERATOR) or 'the root'} import only "
                f"{architecture.GENERATOR[architecture.folder_of(own, architecture.GENERATOR)]}"
            )


def test_every_exception_to_the_map_is_an_import_that_exists() -> None:
    found = {
        (_module_of(p, GENERATOR), target)
        for p in _generator_modules()
        for _, target in _targets(p, GENERATOR, "generator")
    }
    for edge in architecture.EXCEPTIONS:
        assert edge in found, f"{edge} is no longer imported: remove it from generator.architecture.EXCEPTIONS"
        assert not architecture.may_import(*edge, exceptions=False), f"{edge} needs no exception"


def test_the_verifier_s_folders_import_only_lower_ones() -> None:
    for path in sorted(VERIFIER.rglob("*.py")):
        own = _module_of(path, VERIFIER)
        if own == "bundle":
            continue
        for line, target in _targets(path, VERIFIER, "generator.verifier"):
            assert architecture.may_import(own, target, architecture.VERIFIER), (
                f"{path.relative_to(REPO)}:{line} imports generator.verifier.{target}, a folder "
                f"{architecture.folder_of(own, architecture.VERIFIER)} may not import (generator/architecture.py)"
            )


def test_no_two_modules_share_a_file_name() -> None:
    """A name says what a module holds, once: `keys.py` cannot mean three things."""
    seen: dict[str, list[str]] = {}
    for path in GENERATOR.rglob("*.py"):
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(path.relative_to(REPO).as_posix())
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}


def test_gathering_signs_nothing_and_words_no_page() -> None:
    """The gather phase reads and derives; signing is the artifacts' work, words the pages'."""
    source = (GENERATOR / "build" / "gather.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not calls & {"sign", "sign_note", "sign_file"}, calls & {"sign", "sign_note", "sign_file"}
    imported = {m for _, m, _, _ in _imports(GENERATOR / "build" / "gather.py")}
    assert not {m for m in imported if m in ("jinja2", "markupsafe") or m.startswith("generator.site")}


STATE = GENERATOR / "state"
# Writing a file kept between runs: only the state modules may.
_STATE_WRITERS = {"write_cache", "stage_cache", "replace_atomically", "user_cache_dir"}


def test_everything_kept_between_runs_is_in_state_and_says_so_in_its_name() -> None:
    """A `*_cache` is a file of the private cache/ folder, a `*_state` a program's own memory;
    `cache_file` writes the caches. No module elsewhere writes a cache or a state file (the
    checkpoints a build keeps in data/checkpoints/ are the program's files, not state)."""
    names = sorted(p.stem for p in STATE.glob("*.py") if p.stem != "__init__")
    assert [n for n in names if not n.endswith(("_cache", "_state")) and n != "cache_file"] == []
    for path in _generator_modules():
        if STATE in path.parents:
            continue
        for line, module, imported, _ in _imports(path):
            used = set(imported) & _STATE_WRITERS
            allowed = path == GENERATOR / "build" / "history_files.py" and used == {"replace_atomically"}
            assert not used or allowed, f"{path.relative_to(REPO)}:{line} imports {used} from {module}: state"


def test_every_module_and_package_has_a_docstring() -> None:
    """What ARCHITECTURE.md says of a folder and of a module is its docstring's first paragraph
    and first sentence: none may be missing."""
    missing = [
        p.relative_to(REPO).as_posix()
        for p in sorted(GENERATOR.rglob("*.py"))
        if p.name != "verify.py" and not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert missing == []


def _architecture_doc() -> Any:
    spec = importlib.util.spec_from_file_location("architecture_doc", REPO / "tools" / "architecture_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_architecture_md_is_what_the_map_and_the_docstrings_make_it() -> None:
    """ARCHITECTURE.md's tables of folders and modules and its list of build steps are generated:
    a module added, moved or described anew, or a change of the map, shows there, or this fails."""
    tool = _architecture_doc()
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert tool.generated(text) == text, "ARCHITECTURE.md is not current: run python tools/architecture_doc.py"
    for path in _generator_modules():
        if path.name != "__init__.py":
            assert f"| `{path.stem}` |" in text, path
    for path in sorted(VERIFIER.rglob("*.py")):
        if path.name != "__init__.py":
            assert f"| `{path.stem}` |" in text, path


def test_the_architecture_tool_refuses_a_document_without_its_marks() -> None:
    with pytest.raises(ValueError, match="has no line"):
        _architecture_doc().generated("# Architecture\n")


def test_each_build_step_comes_after_every_step_whose_writes_it_reads() -> None:
    """The build's order, as generator.commands.build_steps writes it: a value or a file a step
    reads is made by an earlier step; nothing writes a page after the feeds (the sitemap lists
    every page), nor a file after the archive but SHA256SUMS (the archive holds every other) and a
    v3 site's inner lists (a part holds its leaf's files and list only)."""
    from generator.commands import build_steps

    for steps in (build_steps.WRITE, build_steps.AFTER_SWAP):
        names = [s.name for s in steps]
        assert len(set(names)) == len(names), names
        for n, step in enumerate(steps):
            later = [w for s in steps[n + 1 :] for w in s.writes]
            assert not set(step.reads) & set(later), (step.name, set(step.reads) & set(later))
            if build_steps.EVERY_PAGE in step.reads:
                assert not [w for w in later if w.endswith(".html")], step.name
            if build_steps.EVERY_FILE in step.reads:
                assert set(later) <= {layout.SUMS, layout.SUMS_SIG, build_steps.INNER_LISTS}, (step.name, later)
    pooled = [n for n, s in enumerate(build_steps.WRITE) if s.on_every_core]
    assert pooled == list(range(pooled[0], pooled[-1] + 1)), "the steps on every core share one pool"
    assert [s.name for s in build_steps.WRITE][-2:] == ["SHA256SUMS", "nothing published rewritten"]


def test_every_declared_name_exists() -> None:
    assert [n for n in generator.verifier.__all__ if not hasattr(generator.verifier, n)] == []


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (
            ("core/text.py", "\ndef show(", "\ndef report(value: object) -> None:\n    pass\n\n\ndef show("),
            None,
        ),  # a fine change
        (
            (
                "core/report.py",
                "\nPASS_MEANING = (",
                "\ndef show(value: object) -> str:\n    return ''\n\n\nPASS_MEANING = (",
            ),
            "show is defined in both core/text.py and core/report.py",
        ),
        (
            ("core/public_keys.py", "import base64\n", "import base64\nfrom .formats import is_time\n"),
            "a relative import",
        ),
        (
            ("core/public_keys.py", "import base64\n", "import base64\nimport generator.verifier.core.formats\n"),
            "write `from generator.verifier.<module> import <names>`",
        ),
        (
            ("core/public_keys.py", "import base64\n", "import base64\nimport yaml\n"),
            "imports yaml, which is not the standard library",
        ),
        (
            ("core/text.py", "import json\n", "from __future__ import annotations\nimport json\n"),
            "`from __future__` is a real import",
        ),
        (
            ("core/text.py", "import json\n", "import json\n__all__ = ['show']\n"),
            "__all__ belongs in the package's __init__",
        ),
        (
            (
                "core/text.py",
                "import json\n",
                "import json\nfrom generator.verifier.core.public_keys import fingerprint\n",
            ),
            "comes later in MODULES",
        ),
        (
            (
                "core/text.py",
                "    if text.isprintable()",
                "    from generator.verifier.core.public_keys import fingerprint  # noqa\n    if text.isprintable()",
            ),
            "inside a function or block",
        ),
    ],
)
def test_the_bundler_refuses_what_it_cannot_join_safely(
    tmp_path: Path, edit: tuple[str, str, str], error: str | None
) -> None:
    folder = tmp_path / "verifier"
    shutil.copytree(VERIFIER, folder)
    name, old, new = edit
    source = (folder / name).read_text()
    assert old in source
    (folder / name).write_text(source.replace(old, new, 1))
    if error is None:
        assert "def report(" in bundler.bundle(folder)
        return
    with pytest.raises(bundler.BundleError, match=error.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        bundler.bundle(folder)


def test_the_bundler_refuses_a_module_it_does_not_list(tmp_path: Path) -> None:
    folder = tmp_path / "verifier"
    shutil.copytree(VERIFIER, folder)
    (folder / "extra.py").write_text('"""An extra module."""\n')
    with pytest.raises(bundler.BundleError, match=r"holds \['extra'\]"):
        bundler.bundle(folder)


# -- the last-resort catch


def test_a_bug_in_a_check_is_reported_as_an_internal_error_never_a_pass(
    demo_site: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.verifier.site import verify_site as verifier_site

    def broken(*args: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(verifier_site, "RAISE_INTERNAL_ERRORS", False)
    monkeypatch.setattr(verifier_site, "check_gates", broken)
    report = generator.verifier.verify_site(demo_site.out)
    assert not report.ok
    internal = [p for p in report.failures if "internal error of the verifier" in p.message]
    assert len(internal) == 1 and "KeyError" in internal[0].message and internal[0].file
    assert report.debug == []
    debugged = generator.verifier.verify_site(demo_site.out, debug=True)
    assert debugged.debug and "Traceback" in debugged.debug[0] and "KeyError" in debugged.debug[0]


def test_the_command_line_prints_the_traceback_under_debug(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """A site that makes the verifier fail in a way no check foresaw still fails, and --debug
    says where. A copy of the verifier with a planted bug stands for such a bug."""
    broken = tmp_path / "verify.py"
    text = bundler.TARGET.read_text()
    assert "def check_gates(" in text
    broken.write_text(
        text.replace(
            "def check_gates(s: Site, manifest: dict[str, Any], ledger: Ledger) -> None:\n",
            "def check_gates(s: Site, manifest: dict[str, Any], ledger: Ledger) -> None:\n    raise "
            "KeyError('planted')\n",
        )
    )
    r = subprocess.run(
        [sys.executable, "-P", str(broken), str(demo_copy.out), "--debug"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 1
    assert "internal error of the verifier while checking this file (KeyError: 'planted')" in r.stdout
    assert "Traceback" in r.stderr and "planted" in r.stderr
