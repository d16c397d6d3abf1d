"""`transparency monitor` follows a log, not a folder or a URL (issue 24, item 16): the same
site re-served under a look-alike origin, or the pinned key under any other origin, is that log
again, never a first contact that prints every entry as new. The rule is the verifier's
(other_log_problems), run by the real command over the monitor's state folder."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner, Result

from generator.cli import main
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.core.signing_key import Signer, generate_signer, load_key
from generator.program.datadir import Paths
from generator.state.monitor_state import Remembered, state_path, write_state
from generator.verifier import parse_vkey
from tests.support.demo import BuiltSite
from tests.support.programs import AT0, item, write_items

ORIGIN = "test.example.org/prog"


def monitor(*args: str | Path, code: int = 0) -> Result:
    argv = ["monitor", *map(str, args)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code == code, f"exit {result.exit_code}, wanted {code}\n{result.stdout}\n{result.stderr}"
    return result


def site_under(tmp: Path, origin: str, seed: bytes) -> Path:
    """The same program's items published as a log of `origin`, signed with `seed`, by the real tools."""
    paths = Paths(tmp / "data", tmp / "data" / "private")
    gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
    init_program(paths, "Re-served", origin, gates, "The same items.", AT0, signer=Signer(origin, seed))
    write_items(paths, [item("a-001", "a"), item("a-002", "a"), item("b-0001", "b")])
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    build(paths, tmp / "public")
    return tmp / "public"


@pytest.fixture
def followed(built_program: BuiltSite, tmp_path: Path) -> tuple[BuiltSite, Path]:
    """A program the monitor has followed once: its state folder pins its key."""
    state = tmp_path / "monitor-state"
    monitor(built_program.out, "--state", state)
    return built_program, state


@pytest.mark.parametrize(
    "origin",
    ["test.example.org\u2215prog", "test.ex\u0251mple.org/prog", "test.example.org/pro\u0262", "another.example.net/x"],
    ids=["division-slash", "latin-alpha", "small-capital-g", "unrelated-name"],
)
def test_the_pinned_key_under_another_origin_is_refused(
    origin: str, followed: tuple[BuiltSite, Path], tmp_path: Path
) -> None:
    program, state = followed
    before = sorted(p.name for p in state.glob("*.json"))
    site = site_under(tmp_path / "copy", origin, load_key(program.paths.key_file).seed)
    result = monitor(site, "--state", state, code=1)
    assert "INCONSISTENT" in result.stderr and "is remembered as the key of the log" in result.stderr
    assert f'"{ORIGIN}"' in result.stderr and f'"{origin}"' in result.stderr, result.stderr
    assert "first contact" not in result.stderr and not result.stdout  # no entry printed as new
    assert sorted(p.name for p in state.glob("*.json")) == before  # nothing remembered for it


def test_a_look_alike_origin_with_a_key_of_its_own_is_refused(followed: tuple[BuiltSite, Path], tmp_path: Path) -> None:
    _, state = followed
    origin = "test.ex\u0251mple.org/prog"
    site = site_under(tmp_path / "copy", origin, generate_signer(origin).seed)
    result = monitor(site, "--state", state, code=1)
    assert "a look-alike of a known log" in result.stderr and "U+0251 LATIN SMALL LETTER ALPHA" in result.stderr


def test_another_log_with_its_own_key_is_a_first_contact(followed: tuple[BuiltSite, Path], tmp_path: Path) -> None:
    program, state = followed
    origin = "another.example.net/prog"
    site = site_under(tmp_path / "other", origin, generate_signer(origin).seed)
    result = monitor(site, "--state", state)
    assert "first contact with log another.example.net/prog" in result.stderr
    monitor(program.out, "--state", state)  # the first log is still followed as before


@pytest.mark.parametrize(
    "invisible", ["\u034f", "\ufe0f", "\u3164", "\u2800"], ids=["cgj", "vs16", "hangul", "braille"]
)
def test_an_origin_with_a_character_that_draws_nothing_is_refused(
    invisible: str, followed: tuple[BuiltSite, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The followed origin with an invisible character, and a key of its own: it reads as the
    followed log, so it is refused, the character named, never a first contact."""
    _, state = followed
    before = sorted(p.name for p in state.glob("*.json"))
    # Tools that (unlike these) let such an origin through; the build's own verification skipped.
    for module in ("generator.commands.init", "generator.program.datadir"):
        monkeypatch.setattr(f"{module}.is_origin", lambda value: True)
    monkeypatch.setattr("generator.commands.build.self_check", lambda *args: SimpleNamespace(ok=True, checks=0))
    origin = ORIGIN.replace("example", f"exa{invisible}mple")
    site = site_under(tmp_path / "copy", origin, generate_signer("x.example/y").seed)
    monkeypatch.undo()
    result = monitor(site, "--state", state, code=1)
    assert "INCONSISTENT" in result.stderr and f"U+{ord(invisible):04X} " in result.stderr, result.stderr
    assert "first contact" not in result.stderr and not result.stdout
    assert sorted(p.name for p in state.glob("*.json")) == before


def test_a_key_the_log_rotated_away_from_is_compared_too(demo_site: BuiltSite, tmp_path: Path) -> None:
    """The demo rotated away from its first key: a state that pins that key for another origin
    makes the demo that log under a new name, though the demo's checkpoint is signed by its new key."""
    rows = json.loads((demo_site.out / "keys.json").read_text())["keys"]
    retired = next(parse_vkey(r["vkey"]) for r in rows if r["status"] != "active")
    state = tmp_path / "monitor-state"
    state.mkdir()
    other = "other.example.org/log"
    write_state(state_path(state, other), Remembered(other, retired, 1, bytes(32), b"x"))
    result = monitor(demo_site.out, "--state", state, code=1)
    assert "INCONSISTENT" in result.stderr and "is remembered as the key of the log" in result.stderr, result.stderr
    assert retired.fingerprint in result.stderr and f'"{other}"' in result.stderr
    assert not result.stdout and sorted(p.name for p in state.glob("*.json")) == [state_path(state, other).name]
