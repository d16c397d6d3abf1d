"""The shape of the test suite, held by tests: every test module sits in a folder of its kind, each folder says
what belongs in it, and no test module imports another. A helper two test modules share lives in tests/support/,
a fixture in tests/conftest.py, so that moving, renaming or trimming one test module breaks no other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.demo import REPO

TESTS = REPO / "tests"


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def suite_modules() -> set[str]:
    """The dotted names of every test module and conftest, as the suite imports them."""
    return {
        ".".join(p.relative_to(REPO).with_suffix("").parts)
        for p in python_files()
        if p.name.startswith("test_") or p.name == "conftest.py"
    }


def imports_of_test_modules(source: str, stems: set[str]) -> list[str]:
    """Every import in `source` (nested ones included) that reaches a test module: by its dotted name under
    tests, by a bare name a test folder on sys.path would give (`conftest`, `test_history`), or relatively."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append(f"line {node.lineno}: a relative import")
            continue
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if (top == "tests" and not (name + ".").startswith("tests.support.")) or top in stems:
                found.append(f"line {node.lineno}: imports {name}")
    return found


def test_no_test_module_imports_another() -> None:
    stems = {name.rsplit(".", 1)[-1] for name in suite_modules()}
    problems = [
        f"{path.relative_to(REPO)}: {p}"
        for path in python_files()
        for p in imports_of_test_modules(path.read_text(encoding="utf-8"), stems)
    ]
    assert not problems, "take what two test modules share from tests/support/ instead:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "source",
    [
        "from conftest import REPO\n",
        "from test_history import grow\n",
        "import tests.unit.verifier.test_scoring\n",
        "from tests.integration.format import test_history\n",
        "def f():\n    from tests.adversarial.test_verify_tamper import TAMPERS\n",
        "from . import helpers\n",
    ],
)
def test_the_import_check_catches_each_way_to_reach_a_test_module(source: str) -> None:
    assert imports_of_test_modules(source, {"conftest", "test_history"}), source


def test_the_import_check_lets_support_and_the_package_through() -> None:
    source = "from tests.support.demo import REPO\nimport tests.support\nfrom generator.verifier import Ledger\n"
    assert imports_of_test_modules(source, {"conftest", "test_history"}) == []


def test_every_test_module_is_in_a_folder_of_its_kind() -> None:
    at_root = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert not at_root, f"move these into the folder of their kind (docs/testing.md): {at_root}"


def test_every_test_folder_says_what_belongs_in_it() -> None:
    for folder in sorted({p.parent for p in python_files()}):
        init = folder / "__init__.py"
        assert init.is_file(), f"{folder.relative_to(REPO)} has no __init__.py"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init.relative_to(REPO)}: no docstring"


def test_only_support_and_conftest_hold_helpers_outside_test_modules() -> None:
    """A module of the suite that is not a test module is a helper: it belongs in tests/support/."""
    stray = [
        p.relative_to(REPO).as_posix()
        for p in python_files()
        if not p.name.startswith("test_")
        and p.name not in ("conftest.py", "__init__.py")
        and TESTS / "support" not in p.parents
    ]
    assert not stray, f"move these helpers into tests/support/: {stray}"
