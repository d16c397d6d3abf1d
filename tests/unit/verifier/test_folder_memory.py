"""What the walk of a mirror's folder keeps of each folder (memory/folder_memory.py): saved and
read back; a damaged record is not used, saying why; and a walk that takes the folders unchanged
since finds what a walk reading every folder finds, whatever was changed in between."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from generator.verifier.core.folder import FOLDER_TICK_NS, Site
from generator.verifier.core.report import Report
from generator.verifier.memory.folder_memory import (
    FOLDERS_HEADER,
    FolderRecord,
    _parse_folders,
    load_folders,
    save_folders,
)
from generator.verifier.memory.release_memory import rules_version
from tests.support.mirrors import private_site_and_state

IDENTITY = bytes(range(32))


def test_folders_saved_are_read_back_as_they_were(tmp_path: Path) -> None:
    site, path = private_site_and_state(tmp_path, "record.folders")
    seen = {
        "": (IDENTITY, "index.html/keys.json", "caf\u00e9/ledger"),
        "caf\u00e9": (bytes(32), "a b.json", ""),
        "ledger": (IDENTITY[::-1], "", "tile"),
    }
    save_folders(path, seen)
    record, why = load_folders(path, site)
    assert why is None and record.path == path
    assert record.remembered == seen
    assert path.read_bytes().startswith(f"{FOLDERS_HEADER}\n{rules_version()}\n3 ".encode())


def test_no_folders_yet_is_an_empty_record_that_will_be_written(tmp_path: Path) -> None:
    site, path = private_site_and_state(tmp_path, "record.folders")
    record, why = load_folders(path, site)
    assert (record.path, dict(record.remembered), why) == (path, {}, None)
    assert record.save({"": (IDENTITY, "a", "")}) is None
    assert load_folders(path, site)[0].remembered == {"": (IDENTITY, "a", "")}


def test_a_damaged_record_is_not_used_and_says_why(tmp_path: Path) -> None:
    site, path = private_site_and_state(tmp_path, "record.folders")
    save_folders(path, {"": (IDENTITY, "a", "b"), "b": (IDENTITY, "c", "")})
    good = path.read_bytes()
    head, rules, counts, body = good.split(b"\n", 3)
    damaged = {
        "a byte changed": good[:-2] + bytes([good[-2] ^ 1]) + good[-1:],
        "cut short": good[:-3],
        "another version": good.replace(b"folders v1", b"folders v2", 1),
        "no count": b"\n".join([head, rules, body]),
        "another verifier's": b"\n".join([head, b"0" * 64, counts, body]),
    }
    for what, data in damaged.items():
        path.write_bytes(data)
        record, why = load_folders(path, site)
        assert dict(record.remembered) == {}, what
        assert record.path == path, what  # written again, whole, after the walk
        assert why is not None and "every folder of the mirror is read" in why, what
    assert counts.startswith(b"2 ")


def test_a_record_others_may_write_is_neither_used_nor_written(tmp_path: Path) -> None:
    site, path = private_site_and_state(tmp_path, "record.folders")
    save_folders(path, {"": (IDENTITY, "a", "")})
    path.chmod(0o666)
    record, why = load_folders(path, site)
    assert record.path is None and dict(record.remembered) == {}
    assert why is not None and "not this user's alone" in why
    assert record.save({"": (IDENTITY, "b", "")}) is None
    assert load_folders(path, site)[0].path is None


def _walk(
    root: Path,
    remembered: dict[str, tuple[bytes, str, str]] | None,
    settled: int | None = 1 << 62,
    environment: str | None = None,
) -> tuple[Site, set[str], list[str]]:
    """A walk of `root` with `remembered` folders; `settled`: a folder changed after this time
    is not recorded (by default every one is: the changes here are made a moment before);
    `environment`: the folder of the Python running the verifier, as Site finds it."""
    report = Report(str(root))
    s = Site(root, report)
    s.folders = remembered
    s.folders_settled_before = settled
    s.environment = environment
    found = set(s.files("verify.py"))
    return s, found, [f"{f.file}: {f.message}" for f in report.failures]


def _tree(root: Path, draw: random.Random) -> None:
    (root / "verify.py").write_text("the verifier")
    for n in range(draw.randint(5, 40)):
        folder = root.joinpath(*(f"d{draw.randrange(4)}" for _ in range(draw.randint(0, 3))))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.json").write_text(str(n))


def _change(root: Path, draw: random.Random) -> str:
    """One change a hostile hand could make to a folder; what it was, for the message."""
    folders = sorted(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()) or [root]
    files = sorted(p for p in root.rglob("*.json") if p.is_file() and not p.is_symlink())
    folder = draw.choice([root, *folders])
    kind = draw.choice(["add", "remove", "rename", "link", "python", "folder", "empty", "rewrite"])
    if kind == "add":
        (folder / f"planted{draw.randrange(1000)}.json").write_text("x")
    elif kind == "remove" and files:
        draw.choice(files).unlink()
    elif kind == "rename" and files:
        victim = draw.choice(files)
        victim.rename(victim.with_name(f"moved{draw.randrange(1000)}.json"))
    elif kind == "link":
        (folder / f"link{draw.randrange(1000)}").symlink_to("/etc")
    elif kind == "python":
        (folder / f"evil{draw.randrange(1000)}.py").write_text("import os")
    elif kind == "folder":
        made = folder / f"new{draw.randrange(1000)}"
        made.mkdir(exist_ok=True)
        (made / "x.json").write_text("x")
    elif kind == "empty":
        (folder / f"empty{draw.randrange(1000)}").mkdir(exist_ok=True)
    elif kind == "rewrite" and files:
        draw.choice(files).write_text("other bytes, same folder")
    return f"{kind} in {folder.relative_to(root)}"


def test_a_walk_that_takes_unchanged_folders_finds_what_reading_every_folder_finds(tmp_path: Path) -> None:
    draw = random.Random(20261207)
    for round_ in range(40):
        root = tmp_path / f"site{round_}"
        root.mkdir()
        _tree(root, draw)
        first = _walk(root, {})[0]
        remembered = dict(first.folders_seen)
        assert "" not in remembered, "the site's own folder holds the verifier: never taken"
        for step in range(draw.randint(1, 4)):
            what = _change(root, draw)
            again, got, got_failures = _walk(root, remembered)
            _, want, want_failures = _walk(root, None)
            assert got == want, (round_, step, what)
            assert got_failures == want_failures, (round_, step, what)
            remembered = dict(again.folders_seen)
        assert _walk(root, remembered)[0].folders_taken == len(remembered)


def test_an_unchanged_tree_is_walked_from_the_record_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "site"
    root.mkdir()
    _tree(root, random.Random(7))
    first, found, _ = _walk(root, {})
    plain = dict(first.folders_seen)
    assert plain and first.folders_taken == 0
    read: list[str] = []
    scandir = os.scandir

    def counted(path: Any) -> Any:
        read.append(os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counted)
    again, got, failures = _walk(root, plain)
    assert got == found and failures == []
    assert again.folders_taken == len(plain)
    assert read == [os.fspath(root)], "only the site's own folder (which holds the verifier) is read"


def test_folders_seen_are_kept_only_for_a_trusted_record(tmp_path: Path) -> None:
    record = FolderRecord(None, {"": (IDENTITY, "a", "")})
    assert record.save({"": (IDENTITY, "b", "")}) is None
    assert not os.listdir(tmp_path)


def test_a_folder_changed_within_a_tick_of_the_walk_is_read_again_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two changes within one tick of a coarse clock can leave a folder the same times: one that
    # changed that lately is not recorded, so a change right after its reading cannot hide.
    root = tmp_path / "site"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.json").write_text("x")
    (root / "a" / "y.json").write_text("y")
    changed = max((root / "a").lstat().st_ctime_ns, (root / "a" / "b").lstat().st_ctime_ns)
    monkeypatch.setattr(time, "time_ns", lambda: changed + FOLDER_TICK_NS // 2)
    fresh = _walk(root, {}, settled=None)[0]  # the walk's own start, less a tick
    assert fresh.folders_seen == {}
    monkeypatch.setattr(time, "time_ns", lambda: changed + FOLDER_TICK_NS + 1)
    assert set(_walk(root, {}, settled=None)[0].folders_seen) == {"a", "a/b"}
    changed = (root / "a").lstat().st_ctime_ns
    late = _walk(root, {}, settled=changed)[0]  # "a" changed at that very time: too late
    assert "a" not in late.folders_seen
    later = _walk(root, {}, settled=changed + 1)[0]
    assert "a" in later.folders_seen and "" not in later.folders_seen


def test_a_folder_holding_the_verifiers_environment_is_read_so_that_it_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "d" / "env" / "lib").mkdir(parents=True)
    (root / "d" / "env" / "lib" / "site.json").write_text("{}")
    (root / "d" / "x.json").write_text("{}")
    remembered = dict(_walk(root, {})[0].folders_seen)
    assert {"d", "d/env", "d/env/lib"} <= set(remembered)
    # The auditor now runs the verifier from d/env: the walk must skip it, with a note.
    s, got, failures = _walk(root, remembered, environment="d/env")
    _, want, want_failures = _walk(root, None, environment="d/env")
    assert got == want == {"d/x.json"} and failures == want_failures
    assert any("d/env/ was not read" in note for note in s.report.notes)


def test_a_folder_with_a_name_no_record_line_can_hold_is_not_recorded(tmp_path: Path) -> None:
    root = tmp_path / "site"
    odd = root / "d" / "two\nlines"
    odd.mkdir(parents=True)
    (odd / "x.json").write_text("{}")
    seen = _walk(root, {})[0].folders_seen
    assert "d/two\nlines" not in seen and "d" not in seen  # its parent holds an unsafe name: not plain
    path = tmp_path / "state" / "record.folders"
    save_folders(path, seen)
    assert _parse_folders(path.read_bytes()) == seen
