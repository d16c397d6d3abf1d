"""The release a build replaces is kept beside the output as the spare release, and the next build
writes into it (generator/build/staging.py): it links only the files that changed in the last two
releases, never writes through a file the published site holds, and whatever the spare holds,
publishes the build from scratch."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.build import staging, writer
from generator.commands import build as build_command
from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core import child_process
from generator.program.sealed import iter_sealed
from generator.state import build_cache, listing_cache
from tests.support.demo import BuiltSite
from tests.support.settle import settle
from tests.support.site_trees import assert_matches_a_full_build, files_and_modes
from tests.support.v3 import LATER, v3_demo


def _sealed(site: BuiltSite) -> list[str]:
    return sorted(i for i, _ in iter_sealed(site.paths) if not site.paths.reveal_file(i).exists())


def _built_twice(tmp_path: Path) -> BuiltSite:
    site = v3_demo(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)
    return site


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders the build walks to prune (writer.prune_unlisted, in the writing process or in
    the build's own, both this one)."""
    monkeypatch.setattr(child_process, "FORK", False)
    walks: list[str] = []
    walk = writer.prune_unlisted

    def walked(root: str, *args: Any) -> int:
        walks.append(root)
        return walk(root, *args)

    monkeypatch.setattr(writer, "prune_unlisted", walked)
    monkeypatch.setattr(build_command, "prune_unlisted", walked)
    return walks


def test_the_release_replaced_is_kept_and_the_next_build_links_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _built_twice(tmp_path)
    spare = staging.spare_path(site.out)
    assert spare.is_dir() and (spare / "transparency.json").is_file()
    files = sum(1 for p in site.out.rglob("*") if p.is_file())
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    monkeypatch.setattr(child_process, "FORK", False)
    links: list[str] = []
    link = writer.os.link

    def counted(src: Any, dst: Any) -> None:
        links.append(str(dst))
        link(src, dst)

    monkeypatch.setattr(writer.os, "link", counted)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    result = build(site.paths, site.out, offline=True)
    assert result.kept > files // 2
    assert 0 < len(links) < files // 10, (len(links), files)
    # The spare is now the release just replaced, byte for byte: nothing was written through.
    assert files_and_modes(spare) == files_and_modes(before)
    assert not [p for p in site.out.parent.iterdir() if ".staging-" in p.name or ".old-" in p.name]
    assert_matches_a_full_build(site, before, tmp_path)


def test_a_file_the_spare_holds_as_recorded_is_kept_on_one_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most of the spare's files are the last release's own, as the last build recorded them: the
    writer keeps each on its look at the spare, and looks at the last release's file only for
    the few that changed in the last two releases."""
    site = _built_twice(tmp_path)
    settle()  # the last release older than the build's mark: its identities are recorded
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    build(site.paths, site.out, offline=True)
    files = sum(1 for p in site.out.rglob("*") if p.is_file())
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    monkeypatch.setattr(child_process, "FORK", False)
    published = f"{site.out}/"
    looks: list[str] = []
    lstat = writer.os.lstat
    taking = [0]

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if taking[0] and os.fspath(path).startswith(published):
            looks.append(os.fspath(path))
        return lstat(path, *args, **kwargs)

    def take(method: Any) -> Any:
        def counting(*args: Any) -> Any:
            taking[0] += 1
            try:
                return method(*args)
            finally:
                taking[0] -= 1

        return counting

    monkeypatch.setattr(writer.os, "lstat", counted)
    # The looks a take makes, not those of the steps that ask whether a file is vouched for.
    for name in ("link_previous", "take_vouched", "take_unchanged"):
        monkeypatch.setattr(writer.SiteWriter, name, take(getattr(writer.SiteWriter, name)))
    retire_item(site.paths, _sealed(site)[0], "And one more.", LATER)
    result = build(site.paths, site.out, offline=True)
    assert result.kept > files // 2
    assert len(looks) < files // 10, (len(looks), files)
    assert_matches_a_full_build(site, before, tmp_path)


def test_the_spare_is_pruned_from_its_listing_without_a_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a release no longer holds is found from what the spare listed (the listing of the
    release it was, kept when it was replaced), not by walking every folder of the spare."""
    site = _built_twice(tmp_path)
    assert (site.paths.private / "cache" / listing_cache.SPARE_LISTING_NAME).is_file()
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    monkeypatch.setattr(child_process, "FORK", False)
    walks: list[str] = []

    def walked(root: str, *args: Any) -> int:
        walks.append(root)
        return 0

    monkeypatch.setattr(writer, "prune_unlisted", walked)
    monkeypatch.setattr(build_command, "prune_unlisted", walked)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    build(site.paths, site.out, offline=True)
    assert walks == []
    assert_matches_a_full_build(site, before, tmp_path)


@pytest.mark.parametrize("memory", ["of another release", "torn", "none"])
def test_a_spare_listing_not_of_the_spare_is_not_used(
    tmp_path: Path, memory: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _built_twice(tmp_path)
    kept = site.paths.private / "cache" / listing_cache.SPARE_LISTING_NAME
    if memory == "of another release":
        shutil.copyfile(site.paths.private / "cache" / listing_cache.LISTING_NAME, kept)
    elif memory == "torn":
        kept.write_bytes(kept.read_bytes()[:-10])
    else:
        kept.unlink()
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    walks = _walks(monkeypatch)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    build(site.paths, site.out, offline=True)
    assert len(walks) == 1  # the spare walked, as without a listing
    assert_matches_a_full_build(site, before, tmp_path)


@pytest.mark.parametrize(
    "damage",
    [
        *("extra file", "extra folder", "empty folder", "other bytes", "folder for a file", "file for a folder"),
        *("link", "mode", "link where a file went", "folder for its root", "pipe for its root"),
    ],
)
def test_whatever_the_spare_holds_the_release_is_the_build_from_scratch(
    tmp_path: Path, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _built_twice(tmp_path)
    spare = staging.spare_path(site.out)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not the site's")
    if damage == "extra file":
        (spare / "certificates" / "planted.json").write_bytes(b"{}")
    elif damage == "extra folder":
        (spare / "planted" / "deep").mkdir(parents=True)
        (spare / "planted" / "deep" / "x.html").write_bytes(b"<p>")
    elif damage == "empty folder":
        (spare / "certificates" / "planted").mkdir()
    elif damage == "link where a file went":
        # A file the next release no longer holds (the spare's search fragments change with every
        # event), replaced by a link: removed, and what it leads to left alone.
        gone = sorted(set(files_and_modes(spare)) - set(files_and_modes(site.out)))
        assert gone
        (spare / gone[0]).unlink()
        (spare / gone[0]).symlink_to(outside)
    elif damage == "folder for its root":
        (spare / "SHA256SUMS").unlink()
        (spare / "SHA256SUMS").mkdir()
        (spare / "SHA256SUMS" / "x").write_bytes(b"x")
    elif damage == "pipe for its root":  # never opened for reading: the build would wait for a writer
        (spare / "SHA256SUMS").unlink()
        os.mkfifo(spare / "SHA256SUMS")
    elif damage == "other bytes":
        target = spare / "index.html"
        target.unlink()  # its own file, not the published one
        target.write_bytes(b"<p>not the home page</p>")
    elif damage == "folder for a file":
        (spare / "style.css").unlink()
        (spare / "style.css").mkdir()
        (spare / "style.css" / "x").write_bytes(b"x")
    elif damage == "file for a folder":
        shutil.rmtree(spare / "ledger")
        (spare / "ledger").write_bytes(b"not a folder")
    elif damage == "link":
        shutil.rmtree(spare / "certificates")
        (spare / "certificates").symlink_to(tmp_path)
    else:
        os.chmod(spare / "ledger", 0o700)
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    walks = _walks(monkeypatch)
    build(site.paths, site.out, offline=True)
    # Pruned from the spare's listing, then walked once the look counted what the listing did not
    # name; or, with no root to bind the listing to, walked.
    by_listing = ("other bytes", "mode", "link", "file for a folder", "folder for a file", "link where a file went")
    assert len(walks) == (damage not in by_listing)
    assert outside.read_bytes() == b"not the site's" and not (tmp_path / "x").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["data", "public", ".public.spare-release", "outside.txt", "before"]
    )
    assert_matches_a_full_build(site, before, tmp_path)


def test_a_build_from_scratch_does_not_start_from_the_spare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _built_twice(tmp_path)
    monkeypatch.setattr(child_process, "FORK", False)
    reused: list[bool] = []
    init = writer.SiteWriter.__init__

    def seen(self: writer.SiteWriter, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        reused.append(self.reused)

    monkeypatch.setattr(writer.SiteWriter, "__init__", seen)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    build(site.paths, site.out, offline=True, full=True)
    retire_item(site.paths, _sealed(site)[0], "And one more.", LATER)
    build(site.paths, site.out, offline=True)
    assert reused == [False, True]
    assert staging.spare_path(site.out).is_dir()


def test_a_failed_build_discards_the_spare_and_the_next_starts_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _built_twice(tmp_path)
    published = files_and_modes(site.out)
    monkeypatch.setattr(child_process, "FORK", False)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)

    def fail(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("killed in the middle")

    with monkeypatch.context() as m:
        m.setattr(writer.SiteWriter, "prune", fail)
        with pytest.raises(RuntimeError):
            build(site.paths, site.out, offline=True)
    assert files_and_modes(site.out) == published
    assert not staging.spare_path(site.out).exists()
    assert not [p for p in site.out.parent.iterdir() if p.name.startswith(".public.")]
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    build(site.paths, site.out, offline=True)
    assert_matches_a_full_build(site, before, tmp_path)


def test_a_build_with_nothing_to_do_gives_the_spare_back(tmp_path: Path) -> None:
    """Removing the spare would change the change time of every published file it shares, and
    the next build could no longer tell from a look that nothing changed."""
    site = _built_twice(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    settle()  # the inputs older than the build's mark: it records their identities
    build(site.paths, site.out, offline=True)
    spare = staging.spare_path(site.out)
    before = (os.stat(spare).st_ino, files_and_modes(spare))
    assert build(site.paths, site.out, offline=True).unchanged
    assert (os.stat(spare).st_ino, files_and_modes(spare)) == before
    looked = build_cache._identity_digest
    with pytest.MonkeyPatch.context() as m:
        m.setattr(build_cache, "site_digest", _never)  # decided by identity, not by reading
        assert build(site.paths, site.out, offline=True).unchanged
    assert looked is build_cache._identity_digest


def _never(*args: Any) -> None:
    raise AssertionError("the site was read to tell that nothing changed")


def test_the_spare_taken_is_locked_and_one_put_aside_is_never_put_back(tmp_path: Path) -> None:
    site = _built_twice(tmp_path)
    taken = staging.Staging(site.out)
    try:
        assert taken.reused
        # Another build's clean-up of leftovers meanwhile: a locked folder is a running build's.
        assert staging.remove_leftovers(site.out) == [] and (taken.path / "transparency.json").is_file()
    finally:
        taken.give_back()
    removed: list[Path] = []
    cleanup = staging.Cleanup()
    cleanup.remove = removed.append  # type: ignore[method-assign]
    fresh = staging.Staging(site.out, reuse=False, cleanup=cleanup)
    fresh.discard()
    # Put aside under a staging leftover's name: a build finding `out` missing puts back only an old copy.
    assert [p.name.startswith(".public.staging-") for p in removed] == [True]
    shutil.rmtree(removed[0])


def test_a_spare_replaced_while_it_is_taken_is_locked_as_the_one_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another build keeps its own spare under the name between this build's look (and lock)
    and its rename: the folder this build then holds is locked, so that no clean-up removes it."""
    site = _built_twice(tmp_path)
    spare = staging.spare_path(site.out)
    other = tmp_path / "other-spare"
    shutil.copytree(spare, other)
    (other / "from-the-other-build").write_bytes(b"x")
    rename = os.rename

    def raced(src: Any, dst: Any) -> None:
        if Path(src) == spare and Path(dst).name.startswith(".public.staging-"):
            rename(spare, tmp_path / "put-aside")  # the other build's swap, meanwhile
            rename(other, spare)
        rename(src, dst)

    monkeypatch.setattr(staging.os, "rename", raced)
    taken = staging.Staging(site.out)
    monkeypatch.setattr(staging.os, "rename", rename)
    try:
        assert taken.reused and (taken.path / "from-the-other-build").is_file()
        assert staging.remove_leftovers(site.out) == [] and taken.path.is_dir()
    finally:
        taken.discard()


def test_a_leftover_gone_before_it_is_opened_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "public"
    out.mkdir()
    gone = tmp_path / ".public.staging-gone"
    gone.mkdir()
    kept = tmp_path / ".public.staging-kept"
    kept.mkdir()
    real_open = os.open

    def opening(path: Any, *args: Any, **kwargs: Any) -> int:
        if Path(path) == gone:
            gone.rmdir()  # given back, or removed, by another build meanwhile
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(staging.os, "open", opening)
    assert staging.remove_leftovers(out) == [kept]
