"""A build after one event reads the inputs that changed and the published files it cannot vouch
for, not every byte of the program and the site (generator/state/hash_index_cache.py); and it is
still the build from scratch, whatever was edited behind its back."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import generator.state.build_cache as build_cache
from generator.build import gather, previous_release, writer
from generator.commands import build_steps
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_item
from generator.core import child_process, layout
from generator.program.sealed import iter_sealed
from generator.site import search
from generator.state import listing_cache, search_record_cache
from tests.support.demo import BuiltSite
from tests.support.programs import item, write_items
from tests.support.v3 import LATER, v3_demo


def _sealed(site: BuiltSite) -> list[str]:
    return sorted(i for i, _ in iter_sealed(site.paths) if not site.paths.reveal_file(i).exists())


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many inputs the build hashes, and how many published files it hashes to take them
    (counted here: the build writes in this process, not a forked one)."""
    monkeypatch.setattr(child_process, "FORK", False)
    counts = {"inputs": 0, "taken": 0}
    hash_all = build_cache._hash_all

    def counted(files: Any) -> list[str]:
        todo = list(files)
        counts["inputs"] += len(todo)
        return hash_all(todo)

    monkeypatch.setattr(build_cache, "_hash_all", counted)
    file_digest = writer.hashlib.file_digest

    def digest(f: Any, name: str) -> Any:
        counts["taken"] += 1
        return file_digest(f, name)

    monkeypatch.setattr(writer.hashlib, "file_digest", digest)
    return counts


def test_a_one_event_build_reads_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = v3_demo(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)  # a build once the caches are there records what it read
    counts = _counting(monkeypatch)
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    with monkeypatch.context() as m:
        m.setattr(build_steps.artifacts, "replay_entries", _not_from_the_first_leaf)
        result = build(site.paths, site.out, offline=True)
    files = sum(1 for p in site.paths.data.rglob("*") if p.is_file())
    assert result.kept > 100
    # The ledger, the new reveal and the caches' neighbours: a handful, not the program.
    assert 0 < counts["inputs"] < files // 4, (counts, files)
    assert 0 < counts["taken"] < result.kept // 4, (counts, result.kept)
    # And it is the build from scratch, over the release before (whose proofs a v3 site keeps).
    full = tmp_path / "full"
    shutil.copytree(before, full)
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()


@pytest.mark.parametrize("fmt", [2, 3, 4])
def test_a_one_event_build_reads_no_list_of_the_last_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: int
) -> None:
    """What the last release lists is remembered (generator.state.listing_cache) as its tree
    says, read whole; the next build takes it and reads none of the tree's lists, reads for its
    search record only a record page whose bytes changed (generator.state.search_record_cache),
    and is still the build from scratch. A memory of another root, or torn, is none."""
    site = v3_demo(tmp_path, fmt)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)
    sums = (site.out / layout.SUMS).read_bytes()
    assert listing_cache.load(site.paths, sums) == previous_release.listed_files(site.out)
    assert listing_cache.load(site.paths, sums + b"\n") is None
    place = listing_cache.listing_path(site.paths)
    whole = place.read_bytes()
    place.write_bytes(whole[:-1])
    assert listing_cache.load(site.paths, sums) is None
    place.write_bytes(whole.replace(b" ", b"  ", 2))
    assert listing_cache.load(site.paths, sums) is None
    place.write_bytes(whole)
    records = search_record_cache.load(search_record_cache.memory_path(site.paths.private))
    assert records and any(records.values())

    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)

    def unread(folder: Path) -> dict[str, str]:
        raise AssertionError(f"the build read the last release's tree in {folder}")

    read: list[str] = []
    record_of, index_shard = search._record_of, search._index_shard
    indexing = [False]

    def counted(path: Path, rel: str) -> bytes | None:
        if not indexing[0]:  # looking for records, not giving a changed shard's to Pagefind
            read.append(rel)
        return record_of(path, rel)

    def shard(*args: Any, **kwargs: Any) -> None:
        indexing[0] = True
        index_shard(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(child_process, "FORK", False)  # the writing in this process, to count its reads
        m.setattr(previous_release, "listed_files", unread)
        m.setattr(search, "_record_of", counted)
        m.setattr(search, "_index_shard", shard)
        build(site.paths, site.out, offline=True)
    # Only pages whose bytes changed: the retired item's, its certificates'.
    unchanged = {
        rel for rel in read if (before / rel).is_file() and (before / rel).read_bytes() == (site.out / rel).read_bytes()
    }
    assert read and not unchanged, sorted(unchanged)
    full = tmp_path / "full"
    shutil.copytree(before, full)
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()


def _not_from_the_first_leaf(*args: Any) -> None:
    raise AssertionError("the build replayed the ledger from its first leaf to make the tiles")


def test_a_build_that_completes_tiles_goes_on_from_the_last_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 leaves more: the last release's partial tiles are completed, level 1 gets its first
    hashes, and an archived size's partial tiles stop being served once their tile is whole."""
    site = v3_demo(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    write_items(site.paths, [item(f"b-{7000 + i:05d}", "b") for i in range(300)], "more.yaml")
    commit_new_items(site.paths, LATER)
    retire_item(site.paths, _sealed(site)[0], "And one more, of an old commitment.", LATER)
    with monkeypatch.context() as m:
        m.setattr(build_steps.artifacts, "replay_entries", _not_from_the_first_leaf)
        build(site.paths, site.out, offline=True)
    full = tmp_path / "full"
    shutil.copytree(before, full)
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()
    tiles = site.out / "ledger" / "tile"
    assert (tiles / "0" / "000").is_file() and (tiles / "1" / "000.p" / "1").is_file()


def test_an_input_rewritten_with_its_old_times_is_read_again(tmp_path: Path) -> None:
    site = v3_demo(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)  # records the index
    program = site.paths.data / "program.yaml"
    text = program.read_text(encoding="utf-8")
    assert "Extraction" in text
    before = os.lstat(program)
    program.write_text(text.replace("Extraction", "Extractiom", 1), encoding="utf-8")
    os.utime(program, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as they were
    build(site.paths, site.out, offline=True)
    assert "Extractiom" in (site.out / "index.html").read_text(encoding="utf-8")


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The certificates the build reads again to write them (their serials)."""
    loaded: list[str] = []
    load = gather.CertificateInfo.load

    def counted(self: gather.CertificateInfo, paths: Any) -> Any:
        loaded.append(self.serial)
        return load(self, paths)

    monkeypatch.setattr(gather.CertificateInfo, "load", counted)
    return loaded


def test_an_unchanged_certificate_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a retirement of an item no certificate names, each certificate's files and page are
    taken from the last release unread, but one (the verify page's example, read for its
    commands); and the release is the build from scratch."""
    site = v3_demo(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)
    named = {i for spec in site.paths.runs_dir.glob("*.json") for i in _items(spec)}
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    monkeypatch.setattr(child_process, "FORK", False)
    loaded = _loads(monkeypatch)
    retire_item(site.paths, next(i for i in _sealed(site) if i not in named), "One more.", LATER)
    build(site.paths, site.out, offline=True)
    certificates = len(list(site.paths.certificates_dir.glob("*.json")))
    assert certificates > 3 and len(loaded) == 1, (certificates, loaded)
    full = tmp_path / "full"
    shutil.copytree(before, full)
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()


@pytest.mark.parametrize("damage", ["edited", "removed"])
def test_a_certificate_file_not_as_published_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """A certificate's signature edited or removed in the published folder: that certificate is
    written whole again (the hash index no longer vouches for the file), nothing else is."""
    site = v3_demo(tmp_path)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)
    before = tmp_path / "before"
    shutil.copytree(site.out, before)
    serial = sorted(p.stem for p in site.paths.certificates_dir.glob("*.json"))[-1]
    sig = site.out / "certificates" / f"{serial}.json.sig"
    if damage == "edited":
        sig.write_bytes(bytes(64))
    else:
        sig.unlink()
    monkeypatch.setattr(child_process, "FORK", False)
    loaded = _loads(monkeypatch)
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    build(site.paths, site.out, offline=True)
    assert serial in loaded
    full = tmp_path / "full"
    shutil.copytree(before, full)
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()


def _items(spec: Path) -> list[str]:
    doc = json.loads(spec.read_bytes())
    return list(doc.get("items", []))


def test_a_run_spec_whose_shape_passed_is_not_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run spec's shape is a function of its bytes: remembered passing under its SHA-256, it is
    not checked again by the next build (nor under --full, which remembers nothing)."""
    site = v3_demo(tmp_path)
    checked: list[str] = []
    check = gather.check_run_spec

    def counted(spec: Any) -> Any:
        checked.append(spec["id"])
        return check(spec)

    monkeypatch.setattr(gather, "check_run_spec", counted)
    monkeypatch.setattr(child_process, "FORK", False)
    retire_item(site.paths, _sealed(site)[0], "One event.", LATER)
    build(site.paths, site.out, offline=True)
    assert checked == []
    runs = len(list(site.paths.runs_dir.glob("*.json")))
    retire_item(site.paths, _sealed(site)[0], "One more.", LATER)
    build(site.paths, site.out, offline=True, full=True)
    assert len(checked) == runs > 3
