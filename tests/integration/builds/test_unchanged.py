"""A build with nothing to do writes nothing, and anything that could change its output builds.

A build records what it read (every file of the data and private directories but the caches,
the code and libraries, SOURCE_DATE_EPOCH, --offline) and the site it published. The next
build, finding both as recorded, writes nothing; each test here changes one thing a build
depends on, or one thing in the published site, and checks that the build then builds, and that
its site is the one a build from scratch makes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.state import build_cache
from tests.support.demo import BuiltSite, copy_demo_data
from tests.support.files import tree
from tests.support.history import vkey_of
from tests.support.programs import item, new_program, write_items
from tests.support.settle import settle
from tests.support.witnesses import WitnessFiles, write_policy


def state(out: Path) -> dict[str, tuple[int, int, int, int]]:
    """Every entry of the site with its inode, size, mode and modification time: what a build
    that writes nothing leaves exactly as it was."""
    found = {}
    for p in sorted(out.rglob("*")):
        st = p.lstat()
        found[p.relative_to(out).as_posix()] = (st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns)
    return found


def from_scratch(paths: Paths, tmp_path: Path) -> dict[str, bytes]:
    """The site a full build makes of a copy of this program, the caches left behind."""
    copy = tmp_path / "scratch"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(paths.data, copy / "data", ignore=shutil.ignore_patterns("cache", "public", ".public.*"))
    out = copy / "public"
    build(Paths(copy / "data", copy / "data" / "private"), out, full=True)
    return BuiltSite(paths, out).files()


@pytest.fixture
def site(tmp_path: Path) -> BuiltSite:
    paths = new_program(tmp_path / "prog" / "data")
    out = tmp_path / "prog" / "public"
    settle()
    build(paths, out)
    return BuiltSite(paths, out)


def test_a_build_with_nothing_changed_writes_nothing(site: BuiltSite) -> None:
    before = state(site.out)
    parent = sorted(p.name for p in site.out.parent.iterdir())
    result = build(site.paths, site.out)
    assert result.unchanged
    assert state(site.out) == before
    assert sorted(p.name for p in site.out.parent.iterdir()) == parent  # not even a staging folder
    # What it says is what the last build said of the same release.
    sums = (site.out / "SHA256SUMS").read_text().splitlines()
    assert result.files == len(sums) + 2
    assert result.tree_size == json.loads((site.out / "ledger" / "history.json").read_bytes())["tree_size"]
    assert result.rendered == 0 and result.checks == 0


def test_full_always_builds(site: BuiltSite) -> None:
    assert not build(site.paths, site.out, full=True).unchanged


def _append_event(site: BuiltSite) -> None:
    write_items(site.paths, [item("b-0100", "b")], "more.yaml")
    commit_new_items(site.paths, "2026-03-01T00:00:00Z")


def test_after_an_event_the_files_are_not_walked_to_say_so(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    # The ledger's own identity says a build has work to do: no look at every file first.
    _append_event(site)
    walked: list[int] = []
    real = build_cache._identity_digest
    monkeypatch.setattr(build_cache, "_identity_digest", lambda *a, **k: walked.append(1) or real(*a, **k))
    assert build_cache.unchanged_by_identity(site.paths, site.out, False) is None
    assert walked == []
    monkeypatch.undo()
    settle()
    assert not build(site.paths, site.out).unchanged
    # Recorded again with the new ledger: the next build with nothing changed walks, and skips.
    assert build_cache.unchanged_by_identity(site.paths, site.out, False) is not None


def test_the_record_of_a_build_looks_at_each_file_once(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the swap, the build records its inputs' and its site's identities, the site's digest
    and the hash index: one walk of each input tree serves them all, and the site's part is the
    look the build took at the staged site before its check (at a million items, 330,000 files
    not looked at again), and the record still lets the next build with nothing to do skip."""
    _append_event(site)
    settle()
    walks: list[str] = []
    real_walk, real_save = build_cache._walk, build_cache.save
    recording = [False]

    def walk(base: str, prefix: str, skip: Callable[[str], bool] | None = None) -> Any:
        if recording[0] and prefix.count("/") <= 1:  # a tree's top, not a folder within it
            walks.append(prefix)
        return real_walk(base, prefix, skip)

    def save(*args: Any, **kwargs: Any) -> None:
        recording[0] = True
        try:
            real_save(*args, **kwargs)
        finally:
            recording[0] = False

    monkeypatch.setattr(build_cache, "_walk", walk)
    monkeypatch.setattr(build_cache, "save", save)
    assert not build(site.paths, site.out).unchanged
    assert sorted(walks) == ["data/", "private/"], walks
    monkeypatch.undo()
    settle()
    assert build(site.paths, site.out).unchanged


def _edit_private_byte(site: BuiltSite) -> None:
    # The private README changes no page, but it is an input: build, not guess.
    f = site.paths.private / "README.md"
    f.write_bytes(f.read_bytes() + b"\n")


def _chmod_input(site: BuiltSite) -> None:
    os.chmod(site.paths.program_file, 0o600)


def _empty_folder_in_data(site: BuiltSite) -> None:
    (site.paths.data / "notes").mkdir()


def _link_in_data(site: BuiltSite) -> None:
    # A build reads through a link, to a target the record does not follow: never skipped.
    os.symlink(site.paths.program_file, site.paths.data / "program-link.yaml")


INPUT_CHANGES: dict[str, Callable[[BuiltSite], None]] = {
    "a ledger event": _append_event,
    "a byte of a private file": _edit_private_byte,
    "the mode of an input": _chmod_input,
    "an empty folder in data": _empty_folder_in_data,
    "a link in data": _link_in_data,
}


@pytest.mark.parametrize("change", sorted(INPUT_CHANGES))
def test_any_change_to_an_input_builds(site: BuiltSite, change: str, tmp_path: Path) -> None:
    INPUT_CHANGES[change](site)
    result = build(site.paths, site.out)
    assert not result.unchanged
    assert site.files() == from_scratch(site.paths, tmp_path)
    again = build(site.paths, site.out)
    # Once built, the same inputs are nothing to do again (but a link is never taken on trust).
    assert again.unchanged is (change != "a link in data")


def _edit_item_source(site: BuiltSite) -> None:
    f = next(site.paths.items_dir.glob("*.yaml"))
    f.write_bytes(f.read_bytes() + b"\n")


def _new_item_source(site: BuiltSite) -> None:
    write_items(site.paths, [item("b-0101", "b")], "later.yaml")


def _edit_sealed_store(site: BuiltSite) -> None:
    f = next(site.paths.sealed_dir.glob("*.jsonl"))
    f.write_bytes(f.read_bytes() + b"\n")


def _private_certificate_document(site: BuiltSite) -> None:
    f = site.paths.private / "certificates" / "run-x" / "details" / "b-0001.json"
    f.parent.mkdir(parents=True)
    f.write_text("{}")


UNREAD_CHANGES: dict[str, Callable[[BuiltSite], None]] = {
    "an item source edited": _edit_item_source,
    "a new item source": _new_item_source,
    "the sealed store edited": _edit_sealed_store,
    "a private certificate document": _private_certificate_document,
}


@pytest.mark.parametrize("change", sorted(UNREAD_CHANGES))
def test_a_change_to_a_private_store_no_build_reads_is_nothing_to_do(site: BuiltSite, change: str) -> None:
    """The item sources, the sealed store and the certificates' private documents are not
    inputs (build_cache.UNREAD_PRIVATE): `commit`, `certify` and `retire` read them, and what they
    publish reaches the data directory, which is."""
    UNREAD_CHANGES[change](site)
    settle()
    assert build(site.paths, site.out).unchanged


def test_no_build_reads_the_private_stores_it_does_not_record(tmp_path: Path) -> None:
    """The demo, whose private directory holds all three stores, built with them and without
    them: the same bytes. A build that came to read one would fail here, not publish a site its
    record could not tell was stale."""
    paths = copy_demo_data(tmp_path / "with" / "data")
    for name in build_cache.UNREAD_PRIVATE:
        assert any((paths.private / name).iterdir()), name
    with_them = tmp_path / "with" / "public"
    build(paths, with_them, offline=True, full=True)
    without = copy_demo_data(tmp_path / "without" / "data")
    for name in build_cache.UNREAD_PRIVATE:
        shutil.rmtree(without.private / name)
    out = tmp_path / "without" / "public"
    build(without, out, offline=True, full=True)
    assert BuiltSite(without, out).files() == BuiltSite(paths, with_them).files()


def _edit_page(out: Path) -> None:
    (out / "index.html").write_bytes((out / "index.html").read_bytes().replace(b"</body>", b"<p>x</p></body>"))


def _extra_file(out: Path) -> None:
    (out / "extra.html").write_text("<p>not ours</p>")


def _extra_folder(out: Path) -> None:
    (out / "empty").mkdir()


def _chmod_page(out: Path) -> None:
    os.chmod(out / "index.html", 0o600)


def _remove_file(out: Path) -> None:
    (out / "robots.txt").unlink() if (out / "robots.txt").exists() else (out / "sitemap.xml").unlink()


SITE_CHANGES: dict[str, Callable[[Path], None]] = {
    "an edited page": _edit_page,
    "a file added": _extra_file,
    "a folder added": _extra_folder,
    "a mode changed": _chmod_page,
    "a file removed": _remove_file,
}


@pytest.mark.parametrize("change", sorted(SITE_CHANGES))
def test_a_site_not_as_published_is_built_again(site: BuiltSite, change: str, tmp_path: Path) -> None:
    expected = site.files()
    SITE_CHANGES[change](site.out)
    result = build(site.paths, site.out)
    assert not result.unchanged
    assert site.files() == expected == from_scratch(site.paths, tmp_path)
    assert not (site.out / "empty").exists()
    assert os.stat(site.out / "index.html").st_mode & 0o777 != 0o600


def test_settings_the_output_depends_on_build(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    assert not build(site.paths, site.out).unchanged
    assert build(site.paths, site.out).unchanged
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert not build(site.paths, site.out).unchanged
    assert not build(site.paths, site.out, offline=True).unchanged
    assert build(site.paths, site.out, offline=True).unchanged


def test_other_code_builds(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_cache, "rules_version", lambda: "other code")
    assert not build(site.paths, site.out).unchanged
    monkeypatch.setattr(build_cache, "_libraries", lambda: ["jinja2==0.0"])
    assert not build(site.paths, site.out).unchanged


@pytest.mark.parametrize("damage", ["missing", "garbage", "wrong types", "other inputs", "other site"])
def test_a_damaged_record_costs_a_build_never_a_stale_site(site: BuiltSite, damage: str) -> None:
    record = build_cache.record_path(site.paths)
    doc = json.loads(record.read_bytes())
    if damage == "missing":
        record.unlink()
    elif damage == "garbage":
        record.write_bytes(b"\x00not json")
    elif damage == "wrong types":
        doc["published"]["files"] = "many"
        record.write_text(json.dumps(doc))
    elif damage == "other inputs":
        doc["inputs"] = "0" * 64
        record.write_text(json.dumps(doc))
    else:
        doc["site"] = "0" * 64
        record.write_text(json.dumps(doc))
    assert not build(site.paths, site.out).unchanged
    assert build(site.paths, site.out).unchanged


def test_a_build_killed_before_its_record_costs_a_build(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    _append_event(site)

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    # Killed once its site is in: the record is still the last build's, of another site.
    monkeypatch.setattr(build_cache, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        build(site.paths, site.out)
    monkeypatch.undo()
    assert not build(site.paths, site.out).unchanged
    assert build(site.paths, site.out).unchanged


def test_a_refused_build_changes_nothing(site: BuiltSite) -> None:
    _append_event(site)
    before = tree(site.paths.data, site.paths.private, site.out)
    (site.paths.private / "signing.key").rename(site.paths.private / "elsewhere.key")
    with pytest.raises(InputError):
        build(site.paths, site.out)
    (site.paths.private / "elsewhere.key").rename(site.paths.private / "signing.key")
    assert tree(site.paths.data, site.paths.private, site.out) == before


def test_warnings_are_said_again_and_are_errors_under_strict(site: BuiltSite) -> None:
    program = site.paths.program_file
    program.write_text(program.read_text() + "unknown_key: 1\n")
    first = build(site.paths, site.out)
    assert first.warnings and not first.unchanged
    again = build(site.paths, site.out)
    assert again.unchanged and again.warnings == first.warnings
    with pytest.raises(InputError, match="warnings are errors"):
        build(site.paths, site.out, strict=True)


def test_a_build_that_would_ask_witnesses_is_never_skipped(site: BuiltSite, tmp_path: Path) -> None:
    w1 = WitnessFiles(tmp_path, "w1.example.org", vkey_of(site.out))
    write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, None)], "w1")
    assert not build(site.paths, site.out).unchanged
    # What a witness would answer today, a build not told --offline cannot know without asking.
    assert not build(site.paths, site.out).unchanged
    assert not build(site.paths, site.out, offline=True).unchanged
    assert build(site.paths, site.out, offline=True).unchanged


def test_the_demo_program_built_twice_writes_nothing(tmp_path: Path) -> None:
    paths = copy_demo_data(tmp_path / "data")
    out = tmp_path / "public"
    build(paths, out, offline=True)
    before = state(out)
    assert build(paths, out, offline=True).unchanged
    assert state(out) == before


def test_the_umask_and_the_folder_mode_are_part_of_the_site(site: BuiltSite) -> None:
    old = os.umask(0o077)
    try:
        assert not build(site.paths, site.out).unchanged  # another umask: other modes
        assert os.stat(site.out / "index.html").st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert not build(site.paths, site.out).unchanged
    assert os.stat(site.out / "index.html").st_mode & 0o777 == 0o666 & ~old
    os.chmod(site.out, 0o700)
    assert not build(site.paths, site.out).unchanged
    assert os.stat(site.out).st_mode & 0o777 != 0o700


def test_a_folder_named_like_a_staging_one_is_still_an_input(tmp_path: Path) -> None:
    # Only the build's own ".public.staging-*" and ".public.old-*" folders are left out.
    data = tmp_path / ".public.data"
    paths = new_program(data)
    out = tmp_path / "public"
    build(paths, out)
    assert build(paths, out).unchanged
    program = paths.program_file
    program.write_text(program.read_text().replace("Test program", "Renamed program"))
    assert not build(paths, out).unchanged
    assert "Renamed program" in (out / "index.html").read_text()


def test_moving_the_private_directory_into_the_data_one_builds(tmp_path: Path) -> None:
    data, apart = tmp_path / "data", tmp_path / "private"
    paths = new_program(data, apart)
    out = tmp_path / "public"
    assert not build(paths, out).demo
    shutil.move(apart, data / "private")
    moved = Paths(data, data / "private")
    result = build(moved, out)
    # A build, for the inputs are read from elsewhere; still no demo: the key decides that.
    assert not result.unchanged and not result.demo


def test_an_input_edited_while_the_build_read_it_is_not_recorded(
    site: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    _append_event(site)
    real = build_cache.read_inputs
    program = site.paths.program_file
    text = program.read_text()

    def then_edited(*args: Any, **kwargs: Any) -> build_cache.Inputs:
        inputs = real(*args, **kwargs)
        program.write_text(text.replace("Test program", "Edited program"))  # read by gather, later
        return inputs

    monkeypatch.setattr(build_cache, "read_inputs", then_edited)
    build(site.paths, site.out)
    monkeypatch.undo()
    program.write_text(text)  # put back: the inputs are those first hashed, the site is not
    assert not build(site.paths, site.out).unchanged
    assert "Edited program" not in (site.out / "index.html").read_text()


# ---- the shortcut by identity: size, times and inode, no byte read -------------------------------


def _reading_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the inputs were read: the identities did not vouch for them")

    monkeypatch.setattr(build_cache, "read_inputs", refuse)


def test_nothing_changed_is_told_from_the_files_identities_without_reading_them(
    site: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "identities" in json.loads(build_cache.record_path(site.paths).read_bytes())
    _reading_forbidden(monkeypatch)
    assert build(site.paths, site.out).unchanged


def _rewritten_in_place(path: Path) -> None:
    """The same number of bytes, other bytes, and the modification time put back: what only
    the change time (which no user can set) still tells."""
    st = path.lstat()
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.lstat().st_size == st.st_size and path.lstat().st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize("where", ["site", "data", "private"])
def test_a_file_rewritten_with_its_size_and_time_put_back_builds(site: BuiltSite, where: str) -> None:
    """Only its change time tells: the shortcut must not skip, and the build then reads and
    sees the other bytes (a page of the site is put back; an input builds)."""
    notes = {"data": site.paths.data / "notes.txt", "private": site.paths.private / "notes.txt"}
    if where in notes:
        notes[where].write_text("An operator's note, of some length.\n")
        settle()
        assert not build(site.paths, site.out).unchanged  # a new input
        assert "identities" in json.loads(build_cache.record_path(site.paths).read_bytes())
    victim = site.out / "index.html" if where == "site" else notes[where]
    before = victim.read_bytes()
    _rewritten_in_place(victim)
    assert not build(site.paths, site.out).unchanged
    if where == "site":
        assert victim.read_bytes() == before, "the build did not put the published page back"
    assert build(site.paths, site.out).unchanged


def test_a_record_edited_or_a_new_mark_is_decided_by_reading(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    record = build_cache.record_path(site.paths)
    doc = json.loads(record.read_bytes())
    doc["published"]["warnings"] = ["edited"]
    record.write_text(json.dumps(doc))
    with monkeypatch.context() as m:
        _reading_forbidden(m)
        with pytest.raises(AssertionError, match="inputs were read"):
            build(site.paths, site.out)
    assert build(site.paths, site.out).unchanged  # by reading every byte
    mark = site.paths.private / "cache" / build_cache.MARK_NAME
    build(site.paths, site.out, full=True)
    mark.write_bytes(b"")  # written again: its time is not the one recorded
    with monkeypatch.context() as m:
        _reading_forbidden(m)
        with pytest.raises(AssertionError, match="inputs were read"):
            build(site.paths, site.out)


def test_identities_taken_too_soon_after_a_change_are_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within a clock tick of the mark could change again unseen: with a tick
    longer than the whole build, no identity is recorded, and the next build reads."""
    monkeypatch.setattr(build_cache, "_TICK_NS", 10**18)
    paths = new_program(tmp_path / "prog" / "data")
    out = tmp_path / "prog" / "public"
    build(paths, out)
    assert "identities" not in json.loads(build_cache.record_path(paths).read_bytes())
    assert build(paths, out).unchanged


def test_an_input_written_within_a_tick_of_its_reading_records_no_identities(
    site: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written again within the same tick after the build read it, it would keep its times:
    identities are recorded only of inputs older than a tick when they were read. (The input's
    time is set to the reading's, as a write in that tick would give it.)"""
    real = build_cache.read_inputs

    def just_written(*args: Any, **kwargs: Any) -> build_cache.Inputs:
        inputs = real(*args, **kwargs)
        assert inputs.read_mark is not None
        return dataclasses.replace(inputs, newest=inputs.read_mark[0] - 1)

    monkeypatch.setattr(build_cache, "read_inputs", just_written)
    (site.paths.data / "notes.txt").write_text("Just written.\n")
    settle()
    assert not build(site.paths, site.out).unchanged
    assert "identities" not in json.loads(build_cache.record_path(site.paths).read_bytes())
    assert build(site.paths, site.out).unchanged  # decided by reading


def test_the_look_keeps_identities_only_of_a_site_settled_before_its_clock(tmp_path: Path) -> None:
    """A file changed within a tick of the look's clock could change again unseen: the look
    then keeps no identity, and the record looks at the site itself. Settled, it keeps each
    place's, the site's own folder aside (the swap renames it)."""
    paths = Paths(tmp_path / "data", tmp_path / "private")
    (paths.private / "cache").mkdir(parents=True)
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "a" / "one.html").write_text("one")
    settle()
    look = build_cache.look_at_site(paths, site)
    assert look is not None and look.rows is not None
    assert [place for place, _ in look.rows] == ["site/a", "site/a/one.html"]
    assert dict(look.rows)["site/a/one.html"] == build_cache.identity_row(os.lstat(site / "a" / "one.html"))

    # A time past the clock stands for a change within its tick, whatever the machine's pace.
    (site / "a" / "two.html").write_text("two")
    later = time.time_ns() + 10**9
    os.utime(site / "a" / "two.html", ns=(later, later))
    fresh = build_cache.look_at_site(paths, site)
    assert fresh is not None and fresh.rows is None and fresh.shape != look.shape
    # The change time alone within the clock's tick (the modification time set long before):
    # a clock read just after it.
    os.utime(site / "a" / "two.html", ns=(10**18, 10**18))
    changed = os.lstat(site / "a" / "two.html").st_ctime_ns
    real_clock = build_cache._clock
    with pytest.MonkeyPatch.context() as m:
        m.setattr(build_cache, "_clock", lambda p: (changed + 1_000_000, real_clock(p)[1]))  # type: ignore[index]
        assert build_cache.look_at_site(paths, site).rows is None  # type: ignore[union-attr]
        # On another filesystem than the clock's, nothing is kept either.
        m.setattr(build_cache, "_clock", lambda p: (changed + 10**9, real_clock(p)[1] + 1))  # type: ignore[index]
        assert build_cache.look_at_site(paths, site).rows is None  # type: ignore[union-attr]
        m.setattr(build_cache, "_clock", lambda p: (changed + 10**9, real_clock(p)[1]))  # type: ignore[index]
        assert build_cache.look_at_site(paths, site).rows is not None  # type: ignore[union-attr]
    assert build_cache.look_at_site(Paths(tmp_path / "d", tmp_path / "none"), site).rows is None  # type: ignore[union-attr]


def test_a_folder_the_swap_removes_beside_the_site_makes_the_record_look_again(
    site: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spare that is there at the swap (another build gave one back meanwhile) is removed in
    the background; removing it changes the change time of the site's files it shares, after
    the look before the check: the record then looks at the site itself, and the next build
    with nothing to do still skips."""
    import generator.commands.build as build_module

    real_swap = build_module.swap_in

    def spare_meanwhile(staging: Path, out: Path, cleanup: Any) -> bool:
        spare = out.parent / f".{out.name}.spare-release"
        spare.mkdir(exist_ok=True)
        os.link(staging / "index.html", spare / "index.html")  # a file the new site shares
        return real_swap(staging, out, cleanup)

    walks: list[str] = []
    real_walk = build_cache._walk

    def walk(base: str, prefix: str, skip: Callable[[str], bool] | None = None) -> Any:
        if prefix == "site/":
            walks.append(base)
        return real_walk(base, prefix, skip)

    _append_event(site)
    settle()
    with monkeypatch.context() as m:
        m.setattr(build_module, "swap_in", spare_meanwhile)
        m.setattr(build_cache, "_walk", walk)
        assert not build(site.paths, site.out).unchanged
    assert len(walks) == 2, walks  # the look before the check, and the record's own
    settle()
    assert build(site.paths, site.out).unchanged


def test_sha256sums_edited_after_the_swap_is_not_vouched_for(site: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record binds the site to the SHA256SUMS and signature the build wrote, not to what
    the published folder holds when the record is written: an edit in between is found by the
    next build, which puts the list back."""
    real_save = build_cache.save

    def edited_first(paths: Paths, inputs: Any, said: Any, out: Path, *args: Any, **kwargs: Any) -> None:
        with open(out / "SHA256SUMS", "ab") as f:
            f.write(b"# edited\n")
        real_save(paths, inputs, said, out, *args, **kwargs)

    _append_event(site)
    settle()
    with monkeypatch.context() as m:
        m.setattr(build_cache, "save", edited_first)
        assert not build(site.paths, site.out).unchanged
    settle()
    assert not build(site.paths, site.out).unchanged
    assert b"# edited" not in (site.out / "SHA256SUMS").read_bytes()


def test_a_page_written_while_the_build_verifies_is_not_vouched_for_by_the_identities(
    site: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's check hashes every file first; a page written after that, before the swap,
    is in the site it publishes. The identities recorded are those the look before the check
    found, which the page no longer has: the next build does not skip on them, reads the site,
    finds the page and puts it back."""
    import generator.commands.build as build_module

    real = build_module.self_check

    def then_written(staging: Path, *args: Any, **kwargs: Any) -> Any:
        report = real(staging, *args, **kwargs)
        page = staging / "index.html"
        page.write_bytes(page.read_bytes().replace(b"</main>", b"<p>Written late.</p></main>"))
        return report

    _append_event(site)
    settle()
    with monkeypatch.context() as m:
        m.setattr(build_module, "self_check", then_written)
        assert not build(site.paths, site.out).unchanged
    assert b"Written late" in (site.out / "index.html").read_bytes()
    assert "identities" in json.loads(build_cache.record_path(site.paths).read_bytes())  # taken by the look
    assert build_cache.unchanged_by_identity(site.paths, site.out, False) is None
    assert not build(site.paths, site.out).unchanged
    assert b"Written late" not in (site.out / "index.html").read_bytes()
