"""Shared fixtures and helpers: the demo site built once per session, small programs built per
test, a snapshot of a tree of files, and `refused`, which runs a command that must be refused.

Tests never touch the repository's data/ or public/: they copy what they need into a
temporary directory first (the demo key's file mode, in particular, is not theirs to change).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.commands.retire import retire_item
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths

REPO = Path(__file__).resolve().parent.parent
DEMO_DATA = REPO / "data"
BUNDLE = REPO / "generator" / "verify.py"

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


def load_bundle() -> ModuleType:
    """generator/verify.py, the one file every site ships, imported as a module of its own."""
    spec = importlib.util.spec_from_file_location("verify_bundle", BUNDLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_bundle"] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session", params=["package", "bundle"])
def verifier(request: pytest.FixtureRequest) -> ModuleType:
    """The verifier twice over: the package the generator imports, and the bundled file the
    site ships. Vector tests run on both, so the two can never drift apart."""
    return importlib.import_module("generator.verifier") if request.param == "package" else load_bundle()


@pytest.fixture(autouse=True)
def _verifier_bugs_fail_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the tests an error inside the verifier raises, instead of being reported as an
    internal error: a bug can never hide as a failure some test expected."""
    monkeypatch.setattr("generator.verifier.site.verify_site.RAISE_INTERNAL_ERRORS", True)
    monkeypatch.setattr("generator.commands.build.RAISE_INTERNAL_ERRORS", True)


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


def copy_demo_data(target: Path) -> Paths:
    shutil.copytree(DEMO_DATA, target, ignore=shutil.ignore_patterns(".lock", ".pending"))
    for key in [target / "private" / "signing.key", *(target / "private").glob("**/*.key")]:
        os.chmod(key, 0o600)  # git keeps no file modes: a clone's keys are world-readable
    return Paths(target, target / "private")


@dataclass
class BuiltSite:
    paths: Paths
    out: Path

    def files(self) -> dict[str, bytes]:
        return {p.relative_to(self.out).as_posix(): p.read_bytes() for p in sorted(self.out.rglob("*")) if p.is_file()}


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


AT0 = "2026-01-05T09:00:00Z"
# The demo's methodology (2026.1), which init publishes only when given: the test programs pin it.
METHODOLOGY = (REPO / "generator" / "defaults" / "methodology.json", REPO / "generator" / "defaults" / "methodology.md")


def item(item_id: str, gate: str, prompt: str = "Extract the account number.", **fields: Any) -> dict[str, Any]:
    """An item source; every kind and tier unless fields are given."""
    answer = fields or {
        "account_number": {"kind": "scalar", "tier": "critical", "value": "110-482-339201"},
        "summary": {"kind": "text", "tier": "high", "value": f"Summary of {item_id}"},
        "tags": {"kind": "array", "tier": "low", "value": ["transfer"]},
    }
    return {"id": item_id, "gate": gate, "prompt": prompt, "answer": answer}


def write_items(paths: Paths, items: list[dict[str, Any]], name: str = "items.yaml") -> Path:
    paths.items_dir.mkdir(parents=True, exist_ok=True)
    f = paths.items_dir / name
    f.write_text(yaml.safe_dump({"items": items}, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return f


def new_program(
    data: Path,
    private: Path | None = None,
    public_items: int = 2,
    secret_items: int = 3,
    retired: int | list[str] = 1,
    extra_items: list[dict[str, Any]] | None = None,
) -> Paths:
    """A small program: gates a (public) and b (secret); items a-001.. and b-0001.. committed;
    `retired` secret items retired (the first N, or the ids given), one a day from 2026-02-01."""
    paths = Paths(data, private or data / "private")
    gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
    init_program(
        paths, "Test program", "test.example.org/prog", gates, "A *test* program.", AT0, methodology=METHODOLOGY
    )
    items = [item(f"a-{i:03d}", "a") for i in range(1, public_items + 1)]
    items += [item(f"b-{i:04d}", "b") for i in range(1, secret_items + 1)]
    items += extra_items or []
    write_items(paths, items)
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    ids = [f"b-{i:04d}" for i in range(1, retired + 1)] if isinstance(retired, int) else retired
    for n, item_id in enumerate(ids, 1):
        retire_item(paths, item_id, f"Retired for test reason {n}.", f"2026-02-{n:02d}T00:00:00Z")
    return paths


@pytest.fixture
def make_program(tmp_path: Path) -> Callable[..., Paths]:
    """new_program in this test's folder: `make_program(name="other", ...)` for a second one."""

    def make(name: str = "prog", **options: Any) -> Paths:
        return new_program(tmp_path / name / "data", **options)

    return make


def tree(*roots: Path, under: Path | None = None) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under the roots, keyed by path and mode: what a
    refused command must leave exactly as it was. A root that does not exist holds nothing.
    With `under`, paths are relative to it, so that two copies of a program compare equal."""
    out: dict[str, bytes | None] = {}
    for root in roots:
        if root.exists():
            for p in sorted(root.rglob("*")):
                name = p.relative_to(under).as_posix() if under else str(p)
                out[f"{name} {stat.S_IMODE(p.lstat().st_mode):o}"] = p.read_bytes() if p.is_file() else None
    return out


def refused(command: Callable[[], object], *roots: Path) -> InputError:
    """Run a command that must be refused: it raises InputError, carrying its problems, and
    changes nothing under the roots. Returns the error, for the test to read."""
    before = tree(*roots)
    with pytest.raises(InputError) as info:
        command()
    assert info.value.problems, "an InputError must carry its problems"
    assert tree(*roots) == before, "a refused command changed a file"
    return info.value


@pytest.fixture
def built_program(make_program: Callable[..., Paths]) -> Iterator[BuiltSite]:
    paths = make_program()
    out = paths.data.parent / "public"
    build(paths, out)
    yield BuiltSite(paths, out)
