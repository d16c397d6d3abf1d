"""`pip install .` (not only editable) must carry the templates and defaults with the package, and the install routes
the project names must exist."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.support.demo import REPO


def test_every_template_and_default_is_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(config["packages"]) >= {"generator", "site_templates"}
    # setuptools takes the list literally: a subpackage left out is missing from the wheel.
    for init in sorted(REPO.glob("generator/**/__init__.py")):
        name = ".".join(init.parent.relative_to(REPO).parts)
        assert name in config["packages"], f"{name} would be missing from a wheel"
    # A data file is carried when a pattern of a package holding it matches its path below that package
    # (`generator.site` = ["schemas/*.json"] carries generator/site/schemas/keys.schema.json).
    patterns = config["package-data"]
    for top in ("site_templates", "generator"):
        for path in (REPO / top).rglob("*"):
            rel = path.relative_to(REPO).as_posix()
            if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in rel:
                continue
            assert any(
                rel.startswith(package.replace(".", "/") + "/")
                and fnmatch.fnmatch(rel.removeprefix(package.replace(".", "/") + "/"), p)
                for package, globs in patterns.items()
                for p in globs
            ), f"{rel} would be missing from a wheel"


def test_the_install_hint_names_routes_that_exist() -> None:
    """The package is not on PyPI: the error of a missing inspect_ai names the checkout, the wheel built from it,
    and inspect_ai itself, each as the project really provides it, and the operator's guide's Install section
    (docs/operating.md, which README's "Install" links) shows each."""
    from generator import __version__
    from generator.importers.inspect.inspect_log import INSTALL_HINT

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (inspect_requirement,) = project["optional-dependencies"]["inspect"]
    assert project["version"] == __version__
    wheel = f"{project['name'].replace('-', '_')}-{__version__}-py3-none-any.whl"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/operating.md#install)" in readme.split("\n#### Install\n", 1)[1].split("\n#", 1)[0]
    guide = (REPO / "docs" / "operating.md").read_text(encoding="utf-8")
    install = guide.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    for route in (f"'{inspect_requirement}'", "pip install -e '.[inspect]'", f"'dist/{wheel}[inspect]'"):
        assert route in INSTALL_HINT, route
        assert route in install or route.replace("inspect_ai", "inspect-ai") in install, route
    assert "python3 -m pip wheel . --no-deps -w dist" in INSTALL_HINT and "pip wheel . --no-deps -w dist" in install
    assert f"'{project['name']}[inspect]'" not in INSTALL_HINT + readme + guide, "an install from PyPI, where it is not"


@pytest.mark.slow
def test_a_wheel_built_from_the_checkout_carries_templates_schemas_and_defaults(tmp_path: Path) -> None:
    """`pip wheel . --no-deps`, the README's route to a wheel, on a copy of the tracked sources: the wheel is the
    one the install hint names and holds everything a build reads besides code."""
    from generator.importers.inspect.inspect_log import INSTALL_HINT

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode()
    source = tmp_path / "src"
    for rel in listed.split("\0"):
        wanted = rel in ("pyproject.toml", "README.md") or rel.startswith(("generator/", "site_templates/"))
        if wanted and (REPO / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / rel, source / rel)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--quiet", "-w", str(tmp_path / "dist")],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and re.search(
        r"No matching distribution|Could not find a version|NewConnectionError|"
        r"Failed to establish|Temporary failure in name resolution",
        built.stderr,
    ):
        pytest.skip(f"pip cannot fetch the build backend (setuptools) here: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").iterdir()
    assert f"dist/{wheel.name}[inspect]" in INSTALL_HINT
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for tracked in listed.split("\0"):
        data = ("site_templates/", "generator/defaults/", "generator/site/schemas/", "generator/verifier/browser/")
        if tracked.startswith(data) or tracked == "generator/verify.py":
            assert tracked in names, f"{tracked} is missing from {wheel.name}"
    assert any(n.startswith("generator/site/schemas/") and n.endswith(".json") for n in names)
    assert "inspect-ai" in archive_metadata(wheel)


def archive_metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (meta,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(meta).decode()
