"""Pruning a reused staging folder (generator/build/writer.py): from the spare's listing, only the
paths this release no longer holds go, and never a folder this release holds at a path that was
a file; by a walk, everything the release does not list."""

from __future__ import annotations

import os
from pathlib import Path

from generator.build.writer import SiteWriter, prune_unlisted


def _spare(root: Path) -> None:
    root.mkdir()
    (root / "a").write_bytes(b"a file that becomes a folder")
    (root / "gone").mkdir()
    (root / "gone" / "x.html").write_bytes(b"<p>")
    (root / "kept.html").write_bytes(b"<p>")
    (root / "old.html").write_bytes(b"<p>")


def test_a_path_that_became_a_folder_is_not_removed_from_the_listing(tmp_path: Path) -> None:
    root = tmp_path / "staging"
    _spare(root)
    w = SiteWriter(root, reused=True)
    w.write("a/b.html", b"<p>new</p>")
    w.write("kept.html", b"<p>")
    assert w.prune(["a", "gone/x.html", "kept.html", "old.html"]) == 2
    assert w.pruned_by_listing
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["a", "a/b.html", "kept.html"]
    assert w.expected() == (4, 1)  # two files, SHA256SUMS and its signature; one folder


def test_the_walk_removes_whatever_the_release_does_not_list(tmp_path: Path) -> None:
    root = tmp_path / "staging"
    _spare(root)
    (root / "empty").mkdir()
    os.symlink(tmp_path, root / "link")
    assert prune_unlisted(str(root), ["kept.html", "gone/x.html"]) == 4
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["gone", "gone/x.html", "kept.html"]
    assert (tmp_path / "staging").is_dir()  # the link's target left alone


def test_the_count_names_the_folders_on_the_way_not_those_made(tmp_path: Path) -> None:
    root = tmp_path / "staging"
    root.mkdir()
    w = SiteWriter(root, reused=True)
    w.write("x/y/z.json", b"{}")
    w.write("x/w.json", b"{}")
    (root / "made").mkdir()  # as a take that failed may leave one
    w._dirs.add("made")
    assert w.expected() == (4, 2)


def test_a_folder_that_became_a_file_is_not_removed_from_the_listing(tmp_path: Path) -> None:
    root = tmp_path / "staging"
    _spare(root)
    w = SiteWriter(root, reused=True)
    w.write("gone", b"a folder that became a file")  # the spare's folder goes as the file is written
    w.write("kept.html", b"<p>")
    w.write("a", b"a file that becomes a folder")
    assert w.prune(["a", "gone/x.html", "kept.html", "old.html"]) == 1
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["a", "gone", "kept.html"]
    assert (root / "gone").read_bytes() == b"a folder that became a file"
