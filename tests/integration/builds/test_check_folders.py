"""The build's own check walks the staging folder with a record of what its last walk of that
folder found (generator/commands/build.py, _folder_record): the staging folder is the spare
release, which the check before last walked, so a folder unchanged since is not read again;
one a file was put into is, and the build still publishes the release a build from scratch
makes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from generator.build import staging
from generator.commands import build as build_command
from generator.commands.build import FOLDERS_DIR, build
from generator.commands.retire import retire_item
from generator.core import child_process
from generator.program.sealed import iter_sealed
from tests.support.demo import BuiltSite
from tests.support.site_trees import assert_matches_a_full_build
from tests.support.v3 import LATER, v3_demo


def _retire_one(site: BuiltSite, at: str) -> None:
    sealed = sorted(i for i, _ in iter_sealed(site.paths) if not site.paths.reveal_file(i).exists())
    retire_item(site.paths, sealed[0], "One event.", at)


def _folders(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.is_dir() and not p.is_symlink())


@contextmanager
def _reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The folders the build's check reads (os.scandir while self_check runs)."""
    read: list[str] = []
    scandir, check = os.scandir, build_command.self_check
    checking = [False]

    def counted(path: Any = ".") -> Any:
        if checking[0] and FOLDERS_DIR not in os.fspath(path):  # not the records' own folder
            read.append(os.fspath(path))
        return scandir(path)

    def checked(*args: Any, **kwargs: Any) -> Any:
        checking[0] = True
        try:
            return check(*args, **kwargs)
        finally:
            checking[0] = False

    monkeypatch.setattr(os, "scandir", counted)
    monkeypatch.setattr(build_command, "self_check", checked)
    yield read


def test_the_check_reads_again_only_the_folders_of_the_spare_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(child_process, "FORK", False)
    site = v3_demo(tmp_path, fmt=4)
    _retire_one(site, LATER)
    build(site.paths, site.out, offline=True)  # the spare release is the first build's folder
    records = site.paths.private / "cache" / FOLDERS_DIR
    spare = staging.spare_path(site.out)
    assert sorted(p.name for p in records.iterdir()) == sorted(
        f"{os.lstat(p).st_ino}.folders" for p in (site.out, spare)
    )
    _retire_one(site, "2027-01-04T10:00:00Z")
    with _reads(monkeypatch) as read:
        build(site.paths, site.out, offline=True)
    total = _folders(site.out) + 1
    # The folders the release changed, and the site's own (never recorded): not every folder
    # (on the demo, a retirement changes a third of them: its reveal, pages, lists and tiles).
    assert 0 < len(read) < total / 2, (len(read), total)
    # Without the records, every folder is read.
    shutil.rmtree(records)
    _retire_one(site, "2027-01-04T10:30:00Z")
    with _reads(monkeypatch) as read:
        build(site.paths, site.out, offline=True)
    assert len(read) >= _folders(site.out) + 1
    # A file put into a folder of the spare (through the published site it was) changes that
    # folder: it is read, the file found, and the release is the one a build from scratch makes.
    planted = site.out / "items" / "planted.txt"
    planted.parent.mkdir(exist_ok=True)
    planted.write_text("not listed")
    _retire_one(site, "2027-01-04T11:00:00Z")
    build(site.paths, site.out, offline=True)
    _retire_one(site, "2027-01-04T12:00:00Z")
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    build(site.paths, site.out, offline=True)
    assert not (site.out / "items" / "planted.txt").exists()
    assert_matches_a_full_build(site, before, tmp_path)


def test_records_of_other_folders_are_removed_and_a_full_build_reads_every_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(child_process, "FORK", False)
    site = v3_demo(tmp_path, fmt=4)
    _retire_one(site, LATER)
    build(site.paths, site.out, offline=True)
    records = site.paths.private / "cache" / FOLDERS_DIR
    (records / "12345.folders").write_text("another folder's")
    _retire_one(site, "2027-01-04T10:00:00Z")
    with _reads(monkeypatch) as read:
        build(site.paths, site.out, offline=True, full=True)  # a fresh staging folder
    assert len(read) >= _folders(site.out) + 1
    names = {p.name for p in records.iterdir()}
    spare = staging.spare_path(site.out)
    ours = {f"{os.lstat(p).st_ino}.folders" for p in (site.out, spare) if p.is_dir()}
    assert f"{os.lstat(site.out).st_ino}.folders" in names and names <= ours
