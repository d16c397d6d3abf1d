"""The shape of the code, held by tests: the verifier is small modules bundled into one file
that is never stale, it imports nothing of the generator, and the generator uses only what the
verifier declares in `__all__`."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, BuiltSite

import generator.verifier
from generator.verifier import bundle as bundler

VERIFIER = REPO / "generator" / "verifier"
GENERATOR = REPO / "generator"
MAX_MODULE_LINES = 500


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
    toc = [line.split() for line in lines[:70] if line.strip().startswith("generator/verifier/") and "lines" in line]
    assert [row[0] for row in toc] == [f"generator/verifier/{m}.py" for m in bundler.MODULES]
    for row in toc:
        start, end = int(row[2]), int(row[4])
        assert lines[start - 1].startswith("# ====") and lines[start].startswith(f"# {row[0]}:"), row
        assert end >= start
    assert int(toc[-1][4]) == len(lines) - 1  # the last module runs to the end of the file


def test_every_verifier_module_is_small_enough_to_read_in_one_sitting() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in VERIFIER.glob("*.py")}
    assert all(n <= MAX_MODULE_LINES for n in sizes.values()), {k: v for k, v in sizes.items() if v > MAX_MODULE_LINES}


def test_the_verifier_imports_only_itself_the_standard_library_and_pynacl() -> None:
    for path in sorted(VERIFIER.glob("*.py")):
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


# The generator's phases, lowest first (ARCHITECTURE.md). A module imports from its own layer
# or a lower one, never a higher: data flows from the inputs to the site and never back.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "errors",
        "cachefile",
        "digest",
        "canonical",
        "layout",
        "progress",
        "sources",
        "keys",
        "proofs",
        "regularfile",
        "witness",
        "witness_site",
        "signing",
        "cleanup",
        "heap",
    ),
    ("datadir", "journal", "ledgercache", "treecache", "ledgerfile", "unchanged"),
    (
        "methodology",
        "documents",
        "itemsources",
        "sealed",
        "itemdigests",
        "results",
        "evidence_files",
        "agreement_files",
        "disclosure",
    ),
    ("rechecks", "gather", "cosigning"),
    (
        "writer",
        "memo",
        "parallel",
        "release",
        "artifacts",
        "history",
        "readable",
        "views",
        "lineage_view",
        "evidence_view",
        "agreement_view",
        "systems",
        "links",
        "ledger_view",
        "examples",
        "events",
        "render",
        "pages",
        "schemas",
        "feeds",
        "download",
        "search",
    ),
    ("commands", "monitor", "inspect_import"),
    ("cli", "__main__"),
)


def _layer_of(module: str) -> int:
    top = module.removeprefix("generator.").split(".")[0]
    found = [i for i, names in enumerate(LAYERS) if top in names]
    assert found, f"generator.{top} is in no layer of test_structure.LAYERS: add it where it belongs"
    return found[0]


def test_data_flows_one_way_through_the_generator_s_layers() -> None:
    for path in sorted(p for p in GENERATOR.rglob("*.py") if VERIFIER not in p.parents and p.name != "verify.py"):
        rel = path.relative_to(GENERATOR).with_suffix("")
        if rel.parts in (("__init__",), ("commands", "__init__")):
            continue
        own = _layer_of(".".join(rel.parts))
        for line, module, names, _ in _imports(path):
            targets = [f"{module}.{n}" for n in names] if module == "generator" else [module]
            for target in targets:
                if not target.startswith("generator.") or target.startswith("generator.verifier"):
                    continue
                if target == "generator.__version__":
                    continue
                assert _layer_of(target) <= own, (
                    f"generator/{rel}.py:{line} imports {target}, a later phase: data must flow one way"
                )


def test_gathering_signs_nothing_and_words_no_page() -> None:
    """The gather phase reads and derives; signing is the artifacts' work, words the pages'."""
    source = (GENERATOR / "gather.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not calls & {"sign", "sign_note", "sign_file"}, calls & {"sign", "sign_note", "sign_file"}
    imported = {m for _, m, _, _ in _imports(GENERATOR / "gather.py")}
    assert not imported & {"jinja2", "markupsafe", "generator.render", "generator.views", "generator.pages"}


def test_every_declared_name_exists() -> None:
    assert [n for n in generator.verifier.__all__ if not hasattr(generator.verifier, n)] == []


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (
            ("text.py", "\ndef show(", "\ndef report(value: object) -> None:\n    pass\n\n\ndef show("),
            None,
        ),  # a fine change
        (
            (
                "report.py",
                "\nPASS_MEANING = (",
                "\ndef show(value: object) -> str:\n    return ''\n\n\nPASS_MEANING = (",
            ),
            "show is defined in both text.py and report.py",
        ),
        (("keys.py", "import base64\n", "import base64\nfrom .formats import is_time\n"), "a relative import"),
        (
            ("keys.py", "import base64\n", "import base64\nimport generator.verifier.formats\n"),
            "write `from generator.verifier.<module> import <names>`",
        ),
        (
            ("keys.py", "import base64\n", "import base64\nimport yaml\n"),
            "imports yaml, which is not the standard library",
        ),
        (
            ("text.py", "import json\n", "from __future__ import annotations\nimport json\n"),
            "`from __future__` is a real import",
        ),
        (
            ("text.py", "import json\n", "import json\n__all__ = ['show']\n"),
            "__all__ belongs in the package's __init__",
        ),
        (
            ("text.py", "import json\n", "import json\nfrom generator.verifier.keys import fingerprint\n"),
            "comes later in MODULES",
        ),
        (
            (
                "text.py",
                "    if text.isprintable()",
                "    from generator.verifier.keys import fingerprint  # noqa\n    if text.isprintable()",
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
    from generator.verifier import site as verifier_site

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
