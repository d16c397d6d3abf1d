"""Shared fixtures: the demo site built once per session (per worker, when the suite runs in
parallel), small programs built per test, the verifier, and what every test gets: its own
verifier memory, no stray environment, and verifier bugs that raise. Helpers a test imports
live in tests/support/, never here nor in another test module.

Tests never touch the repository's data/ or public/: they copy what they need into a
temporary directory first (the demo key's file mode, in particular, is not theirs to change).
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from generator.commands.build import build
from generator.program.datadir import Paths
from tests.support import py_ecc_quiet  # noqa: F401  (first: py_ecc imported without its side effect)
from tests.support.demo import BuiltSite, copy_demo_data
from tests.support.programs import new_program

# Every property test draws the same examples on every machine and every run, not only under CI: a
# test that passes on one clone and fails on the next by luck is a defect of the suite, and a case
# worth keeping belongs in an @example, not in a local .hypothesis/ folder nobody else has. No
# deadline and no too_slow health check either, as both depend on how busy the machine is. The
# settings objects of the test modules inherit this profile, so it is loaded here, before they are
# imported. `pytest --hypothesis-profile=explore` draws new examples, to hunt for cases to keep.
settings.register_profile(
    "deterministic",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("deterministic")


@pytest.fixture(scope="session")
def verifier() -> ModuleType:
    """The verifier package the generator imports. The bundled verify.py the site ships is these
    modules joined (tests/structure/test_structure.py proves it byte for byte), so the vector tests
    run here once; tests/integration/verifier/test_bundle_smoke.py runs the bundle itself."""
    return importlib.import_module("generator.verifier")


@pytest.fixture(autouse=True)
def _verifier_bugs_fail_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the tests an error inside the verifier raises, instead of being reported as an
    internal error: a bug can never hide as a failure some test expected."""
    monkeypatch.setattr("generator.verifier.site.verify_site.RAISE_INTERNAL_ERRORS", True)
    monkeypatch.setattr("generator.commands.build.RAISE_INTERNAL_ERRORS", True)


@pytest.fixture
def write_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build writes its release in a forked process (generator.core.child_process): a test that
    watches the writing from its own objects (a spy, a counter) has it written in the test's
    process instead, where it can see it."""
    monkeypatch.setattr("generator.core.child_process.FORK", False)


@pytest.fixture(autouse=True)
def _no_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stray SOURCE_DATE_EPOCH in the environment would change every build's bytes."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.delenv("TRANSPARENCY_DATA", raising=False)
    monkeypatch.delenv("TRANSPARENCY_PRIVATE", raising=False)


@pytest.fixture(autouse=True)
def _own_verifier_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """verify.py remembers checkpoints under $XDG_CACHE_HOME: each test gets a cache of its own,
    so that no test reads another's memory, nor the memory of the person running them."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The demo program built from a copy of data/ (read-only for tests: copy it to mutate)."""
    os.environ.pop("SOURCE_DATE_EPOCH", None)
    root = tmp_path_factory.mktemp("demo")
    paths = copy_demo_data(root / "data")
    out = root / "public"
    build(paths, out)
    return BuiltSite(paths, out)


@pytest.fixture
def demo_copy(demo_site: BuiltSite, tmp_path: Path) -> BuiltSite:
    """A private, mutable copy of the built demo site and its data."""
    paths = copy_demo_data(tmp_path / "data")
    out = tmp_path / "public"
    shutil.copytree(demo_site.out, out)
    return BuiltSite(paths, out)


@pytest.fixture
def make_program(tmp_path: Path) -> Callable[..., Paths]:
    """new_program in this test's folder: `make_program(name="other", ...)` for a second one."""

    def make(name: str = "prog", **options: Any) -> Paths:
        return new_program(tmp_path / name / "data", **options)

    return make


@pytest.fixture
def built_program(make_program: Callable[..., Paths]) -> Iterator[BuiltSite]:
    paths = make_program()
    out = paths.data.parent / "public"
    build(paths, out)
    yield BuiltSite(paths, out)
