"""Verifying a release from the last one verified (generator/verifier/memory/release_memory.py): the same
verdicts as a verification from nothing, on honest releases and on every tampered one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import generator.verifier as v
from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.verifier.memory.release_memory import memory_file
from tests.support.tamper import TAMPERS, Tamper, tampered

USED: dict[str, bool] = {}  # tamper -> whether its run resumed from the memory


def remembered(site: Path) -> list[tuple[str, bytes, str | None]]:
    """What a state file would offer: the release's own checkpoint, remembered for its origin."""
    origin = v.verify_site(site).tree["origin"]
    return [("state", (site / "ledger" / "checkpoint").read_bytes(), origin)]


def failed(report: Any) -> list[str]:
    return sorted(p.describe() for p in report.failures)


def test_a_one_event_release_is_verified_from_the_last(demo_copy: Any, tmp_path: Path) -> None:
    memory = tmp_path / "releases"
    since = remembered(demo_copy.out)
    first = v.verify_site(demo_copy.out, since=since, memory=memory)
    assert first.ok and not any("only the entries after them" in n for n in first.notes)
    assert memory_file(memory, first.tree["origin"]).is_file()
    retire_items(demo_copy.paths, ["b-0017"], "One more.", "2027-01-01T00:00:00Z")
    build(demo_copy.paths, demo_copy.out, offline=True)
    after = v.verify_site(demo_copy.out, since=since, memory=memory)
    full = v.verify_site(demo_copy.out, since=since)
    assert after.ok and full.ok
    assert any(f"the first {first.tree['tree_size']} entries are those" in n for n in after.notes), after.notes
    assert after.tree == full.tree and after.counts == full.counts and after.asserted == full.asserted
    assert sorted(after.revoked, key=str) == sorted(full.revoked, key=str)


def test_a_memory_of_another_release_is_not_used(demo_copy: Any, tmp_path: Path) -> None:
    memory = tmp_path / "releases"
    assert v.verify_site(demo_copy.out, since=remembered(demo_copy.out), memory=memory).ok
    # The state remembers nothing of this release: the memory beside it is not the state's.
    report = v.verify_site(demo_copy.out, since=[], memory=memory)
    assert report.ok
    assert any("not of the release the state file remembers" in n for n in report.notes), report.notes
    assert not any("only the entries after them" in n for n in report.notes)


@pytest.mark.parametrize("damage", ["flipped byte", "torn", "other origin", "header nested past the parser"])
def test_a_damaged_memory_is_not_used(demo_copy: Any, tmp_path: Path, damage: str) -> None:
    memory = tmp_path / "releases"
    since = remembered(demo_copy.out)
    first = v.verify_site(demo_copy.out, since=since, memory=memory)
    path = memory_file(memory, first.tree["origin"])
    data = bytearray(path.read_bytes())
    if damage == "flipped byte":
        data[len(data) // 2] ^= 1
    elif damage == "torn":
        del data[len(data) // 2 :]
    elif damage == "header nested past the parser":
        # Its old checksum kept: nothing may be parsed before the checksum holds.
        data = bytearray(data[:32] + (5000).to_bytes(8, "big") + b"[" * 5000 + data[-32:])
    else:
        data = bytearray(data.replace(first.tree["origin"].encode(), b"x" * len(first.tree["origin"]), 1))
    path.write_bytes(bytes(data))
    report = v.verify_site(demo_copy.out, since=since, memory=memory)
    assert report.ok
    assert any("verified in full" in n for n in report.notes), report.notes


def test_full_verifies_from_nothing_but_remembers(demo_copy: Any, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    verify = [sys.executable, "-P", str(demo_copy.out / "verify.py"), str(demo_copy.out), "--state", str(state)]
    assert subprocess.run(verify, capture_output=True).returncode == 0
    again = subprocess.run(verify, capture_output=True, text=True)
    assert again.returncode == 0 and "only the entries after them were replayed" in again.stdout
    full = subprocess.run([*verify, "--full"], capture_output=True, text=True)
    assert full.returncode == 0 and "only the entries after them" not in full.stdout
    assert (tmp_path / "releases").is_dir()


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.id for t in TAMPERS])
def test_a_tampered_release_fails_from_the_memory_as_it_fails_from_nothing(
    tamper: Tamper, demo_copy: Any, tmp_path: Path
) -> None:
    memory = tmp_path / "releases"
    since = remembered(demo_copy.out)
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    pristine = tmp_path / "pristine"
    shutil.copytree(memory, pristine)
    site = tampered(demo_copy, tamper.mutate)
    from_memory = v.verify_site(site.root, since=since, memory=memory)
    from_nothing = v.verify_site(site.root, since=since)
    assert not from_memory.ok
    assert failed(from_memory) == failed(from_nothing)
    USED[tamper.id] = any("only the entries after them" in n for n in from_memory.notes)
    # A failing run teaches the memory nothing.
    assert sorted(p.read_bytes() for p in memory.iterdir()) == sorted(p.read_bytes() for p in pristine.iterdir())


def test_most_tampered_releases_were_checked_from_the_memory() -> None:
    """The matrix above means something only if the memory was in use: it is, unless the
    tamper rewrote the entries the memory remembers (then the replay starts over)."""
    if len(USED) < len(TAMPERS):
        pytest.skip("run with the tamper matrix above")
    assert sum(USED.values()) >= len(TAMPERS) // 2, USED
