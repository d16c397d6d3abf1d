"""`pip install .` (not only editable) must carry the templates and defaults with the package."""

from __future__ import annotations

import fnmatch
import tomllib

from conftest import REPO


def test_every_template_and_default_is_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(config["packages"]) >= {"generator", "site_templates"}
    # setuptools takes the list literally: a subpackage left out is missing from the wheel.
    for init in sorted(REPO.glob("generator/**/__init__.py")):
        name = ".".join(init.parent.relative_to(REPO).parts)
        assert name in config["packages"], f"{name} would be missing from a wheel"
    patterns = config["package-data"]
    for package in ("site_templates", "generator"):
        root = REPO / package
        for path in root.rglob("*"):
            rel = path.relative_to(root).as_posix()
            if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in rel:
                continue
            assert any(fnmatch.fnmatch(rel, p) for p in patterns.get(package, [])), (
                f"{package}/{rel} would be missing from a wheel"
            )
