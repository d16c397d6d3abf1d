"""The build's own check of a release hashes the files this build wrote, not those it took from the
last release as they were (hard links, hashed when taken): unless such a file changed since, as
one edited through the published folder, which is the same file, would. The build's look at the
staged site finds such a change (a file's identity), and the check hashes that file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import generator.commands.build as build_command
from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core.generator_errors import VerificationFailed
from generator.program.datadir import Paths
from generator.program.sealed import iter_sealed
from generator.verifier import identity_of, known_value
from tests.support.demo import BuiltSite
from tests.support.v3 import LATER, v3_demo

NOTE = "not read again: their SHA-256 is the one the build computed when it took them from the last release"


def _retire_one(site: BuiltSite) -> None:
    paths = site.paths
    item = sorted(i for i, _ in iter_sealed(paths) if not paths.reveal_file(i).exists())[0]
    retire_item(paths, item, "Retired to make a release.", LATER)


def _watching(monkeypatch: pytest.MonkeyPatch, before: Any = None) -> list[Any]:
    """Every self-check's report (and its `carried` files), with `before(site, carried)` run first."""
    seen: list[Any] = []
    original = build_command.self_check

    def watched(site: Path, *args: Any, **kwargs: Any) -> Any:
        carried = args[4] if len(args) > 4 else kwargs.get("carried")
        if before is not None:
            before(site, carried)
        report = original(site, *args, **kwargs)
        seen.append((report, carried))
        return report

    monkeypatch.setattr(build_command, "self_check", watched)
    return seen


def test_the_files_taken_from_the_last_release_are_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = v3_demo(tmp_path)
    seen = _watching(monkeypatch)
    _retire_one(site)
    result = build(site.paths, site.out, offline=True)
    ((report, carried),) = seen
    assert carried and len(carried) == result.kept, (len(carried), result.kept)
    assert any(f"{len(carried)} file(s) {NOTE}" in n for n in report.notes), report.notes
    # `--full` hashes everything.
    seen.clear()
    build(site.paths, site.out, offline=True, full=True)
    ((report, _),) = seen
    assert not any(NOTE in n for n in report.notes), report.notes


def test_a_taken_file_changed_through_the_published_folder_fails_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = v3_demo(tmp_path)
    published = site.out
    victim: list[str] = []

    def edit(staging: Path, carried: Any) -> None:
        # The published file and the staged one are one file: an edit of either is seen in both.
        rel = sorted(r for r in carried if r.endswith(".html"))[0]
        victim.append(rel)
        with open(published / rel, "r+b") as f:
            f.seek(0, 2)
            f.write(b"<!-- edited while the build ran -->")
        assert (staging / rel).read_bytes().endswith(b"<!-- edited while the build ran -->")

    # Edited before the build's look at the staged site (build_cache.look_at_site), which checks
    # each taken file's identity and hands the check only those it found unchanged.
    look = build_command.build_cache.look_at_site

    def edited_first(paths: Paths, staging: Path, carried: Any = None) -> Any:
        edit(staging, carried)
        return look(paths, staging, carried)

    monkeypatch.setattr(build_command.build_cache, "look_at_site", edited_first)
    _retire_one(site)
    with pytest.raises(VerificationFailed) as e:
        build(site.paths, site.out, offline=True)
    assert victim and victim[0] in str(e.value)


def test_the_look_drops_a_carried_file_changed_and_vouches_for_none_when_one_is_missing(tmp_path: Path) -> None:
    """build_cache.look_at_site checks each carried identity on its walk: a changed file is
    dropped; a carried file the walk never meets leaves nothing vouched for."""
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    for name in ("a/one.html", "a/two.html"):
        (site / name).write_text(name)
    sha = "00" * 32

    def value(rel: str) -> bytes:
        made = known_value(sha, identity_of((site / rel).lstat()))
        assert made is not None
        return made

    carried = {"a/one.html": value("a/one.html"), "a/two.html": value("a/two.html")}
    paths = Paths(tmp_path / "data", tmp_path / "private")
    (site / "a/two.html").write_text("changed, and longer than it was")
    assert build_command.build_cache.look_at_site(paths, site, carried) is not None
    assert list(carried) == ["a/one.html"]
    carried["a/gone.html"] = carried["a/one.html"]
    assert build_command.build_cache.look_at_site(paths, site, carried) is not None
    assert carried == {}
