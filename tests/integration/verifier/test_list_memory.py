"""A format v4 site's checksum lists verified from the verifier's memory of the release it verified
last (generator/verifier/memory/list_memory.py): a list its parent names with the SHA-256 it had
then is not read, nor any list below it, and the report is the one reading them makes; a list a
key holder changed still fails; an edited memory is not used; and `verify.py mirror` reads no
list it remembers.

The program is the demo's made v4, verified once into a memory, then one retirement later."""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import generator.verifier as v
from generator.verifier.core.folder import Site
from generator.verifier.site.command_line import main
from generator.verifier.site.mirror_folder import LocalCopy
from tests.support.demo import BuiltSite
from tests.support.http_site import serve
from tests.support.tamper import resign
from tests.support.v3 import copy_release, demo_signer, one_event, v3_demo


@dataclass
class Released:
    site: BuiltSite
    memory: Path  # the memory of the release before the last, as the verifier left it
    since: list[tuple[str, bytes, str | None]]
    before: dict[str, bytes]  # the lists of the release before the last, by path


def lists(site: Path) -> dict[str, bytes]:
    found = {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted((site / "sums").glob("*.sha256"))}
    return {**found, "SHA256SUMS": (site / "SHA256SUMS").read_bytes()}


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Released:
    root = tmp_path_factory.mktemp("list-memory")
    site = v3_demo(root, fmt=4)
    memory = root / "releases"
    origin = v.verify_site(site.out).tree["origin"]
    since = [("state", (site.out / "ledger" / "checkpoint").read_bytes(), origin)]
    first = v.verify_site(site.out, since=since, memory=memory)
    assert first.ok, first.render()
    assert len(list(memory.glob("*.lists"))) == 1, "a passing run remembers its lists"
    before = lists(site.out)
    one_event(site)
    return Released(site, memory, since, before)


@contextmanager
def lists_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The lists under sums/ the verifier reads while in the block."""
    seen: list[str] = []
    read = Site.read

    def spy(self: Site, rel: Any, what: str) -> bytes | None:
        if isinstance(rel, str) and rel.startswith("sums/"):
            seen.append(rel)
        return read(self, rel, what)

    with monkeypatch.context() as m:
        m.setattr(Site, "read", spy)
        yield seen


def hashed_by(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[Any, Counter[str]]:
    """What `run()` returns, and how many times it read each file of the site for its SHA-256."""
    hashed: Counter[str] = Counter()
    hash_file = Site.hash_file

    def spy(self: Site, rel: str) -> str:
        hashed[rel] += 1
        return hash_file(self, rel)

    with monkeypatch.context() as m:
        m.setattr(Site, "hash_file", spy)
        return run(), hashed


def failed(report: Any) -> list[str]:
    return sorted(p.describe() for p in report.failures)


def test_only_the_lists_that_changed_are_read_and_the_report_is_the_same(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    after = lists(site)
    changed = {rel for rel, data in after.items() if released.before.get(rel) != data and rel != "SHA256SUMS"}
    # The demo is small: one event changes most of its lists (at scale, those on a few paths to the root).
    assert 0 < len(changed) < len(after) - 1, "some list kept its bytes"
    with lists_read(monkeypatch) as seen:
        remembering = v.verify_site(site, since=released.since, memory=memory)
    assert remembering.ok, remembering.render()
    assert sorted(seen) == sorted(changed), "a list whose bytes did not change was read again"
    # The same run without the lists remembered reads every list, and reports the same.
    shutil.copytree(released.memory, tmp_path / "without")
    (tmp_path / "without").chmod(0o700)
    for f in (tmp_path / "without").glob("*.lists"):
        f.unlink()
    with lists_read(monkeypatch) as seen:
        reading = v.verify_site(site, since=released.since, memory=tmp_path / "without")
    assert sorted(seen) == sorted(rel for rel in after if rel != "SHA256SUMS")
    assert (remembering.tree, remembering.counts, remembering.checks) == (reading.tree, reading.counts, reading.checks)
    # Both leave the same memory of the lists: what is remembered does not depend on what was read.
    [ours] = memory.glob("*.lists")
    assert ours.read_bytes() == (tmp_path / "without" / ours.name).read_bytes()


def _relist_upward(site: Path, rel: str, data: bytes, signer: Any) -> None:
    """List `rel` given the bytes `data`, and every list above it naming its new SHA-256, up to
    SHA256SUMS, signed again: what a key holder can do."""
    (site / rel).write_bytes(data)
    prefix = rel.removeprefix("sums/").removesuffix(".sha256")
    while prefix:
        parent = v.list_path(prefix[:-1])
        child = v.list_path(prefix)
        sha = hashlib.sha256((site / child).read_bytes()).hexdigest()
        lines = (site / parent).read_text().splitlines(keepends=True)
        (site / parent).write_text("".join(f"{sha}  {child}\n" if ln.endswith(f"  {child}\n") else ln for ln in lines))
        prefix = prefix[:-1]
    resign(site, "SHA256SUMS", signer)


def an_unchanged_leaf(r: Released, site: Path) -> str:
    """A leaf's list the one event did not change (so the memory holds it), of at least two files."""
    after = lists(site)
    for rel in sorted(after):
        data = after[rel]
        if rel != "SHA256SUMS" and r.before.get(rel) == data and b"sums/" not in data and data.count(b"\n") >= 2:
            return rel
    raise AssertionError("no unchanged leaf")


def test_a_leaf_relisted_by_a_key_holder_fails_from_the_memory_as_from_nothing(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    leaf = an_unchanged_leaf(released, site)
    dropped = (site / leaf).read_bytes().split(b"\n", 1)[1]  # its first file no longer listed
    _relist_upward(site, leaf, dropped, demo_signer(released.site))
    with lists_read(monkeypatch) as seen:
        from_memory = v.verify_site(site, since=released.since, memory=memory)
    assert len(seen) < len(lists(site)) - 1, "the memory was not used"
    from_nothing = v.verify_site(site, since=released.since)
    assert not from_nothing.ok
    assert failed(from_memory) == failed(from_nothing)
    assert any("not listed in any checksum list" in f for f in failed(from_memory)), failed(from_memory)


def _drop_first_line(site: Path, leaf: str) -> None:
    (site / leaf).write_bytes((site / leaf).read_bytes().split(b"\n", 1)[1])


def _same_size_edit(site: Path, leaf: str) -> None:
    data = bytearray((site / leaf).read_bytes())
    data[0] = ord("0") if data[0] != ord("0") else ord("1")  # a digit of its first row's SHA-256
    (site / leaf).write_bytes(bytes(data))


@pytest.mark.parametrize("change", ["removed", "cut short", "same size, other bytes"])
def test_a_remembered_list_changed_behind_its_parent_fails_as_from_nothing(
    released: Released, tmp_path: Path, change: str
) -> None:
    """The parent still names the SHA-256 the memory holds, the file is not those bytes: the
    failures are those a run reading every list reports."""
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    leaf = an_unchanged_leaf(released, site)
    if change == "removed":
        (site / leaf).unlink()
    elif change == "cut short":
        _drop_first_line(site, leaf)
    else:
        _same_size_edit(site, leaf)
    from_memory = v.verify_site(site, since=released.since, memory=memory)
    from_nothing = v.verify_site(site, since=released.since)
    assert not from_nothing.ok
    assert failed(from_memory) == failed(from_nothing)
    assert any(f.file == leaf for f in from_memory.failures), failed(from_memory)


def _other_half_leaves(r: Released, site: Path) -> tuple[str, str]:
    """Two unchanged leaves, the first under bit 0, the second under bit 1."""
    after = lists(site)
    leaves = [
        rel
        for rel in sorted(after)
        if rel != "SHA256SUMS" and r.before.get(rel) == after[rel] and b"sums/" not in after[rel]
    ]
    zero = next(rel for rel in leaves if rel.startswith("sums/0"))
    one = next(rel for rel in leaves if rel.startswith("sums/1"))
    return zero, one


@pytest.mark.parametrize("relisted", ["under bit 0", "under bit 1"])
def test_a_path_a_relisted_leaf_takes_from_a_remembered_one_fails_as_from_nothing(
    released: Released, tmp_path: Path, relisted: str
) -> None:
    """A key holder lists a file of a leaf the memory holds in another leaf too: whichever of
    the two the run meets first, the path is reported twice, as reading every list reports it."""
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    zero, one = _other_half_leaves(released, site)
    taker, giver = (zero, one) if relisted == "under bit 0" else (one, zero)
    line = (site / giver).read_bytes().split(b"\n", 1)[0] + b"\n"
    rows = sorted([*(site / taker).read_bytes().splitlines(keepends=True), line], key=lambda x: x[66:])
    _relist_upward(site, taker, b"".join(rows), demo_signer(released.site))
    from_memory = v.verify_site(site, since=released.since, memory=memory)
    from_nothing = v.verify_site(site, since=released.since)
    assert not from_nothing.ok
    assert failed(from_memory) == failed(from_nothing)
    assert any("a path listed twice" in f for f in failed(from_memory)), failed(from_memory)


def test_a_memory_of_the_lists_others_may_write_is_not_used(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    [remembered] = memory.glob("*.lists")
    remembered.chmod(0o666)
    with lists_read(monkeypatch) as seen:
        report = v.verify_site(site, since=released.since, memory=memory)
    assert report.ok, report.render()
    assert sorted(seen) == sorted(rel for rel in lists(site) if rel != "SHA256SUMS"), "every list read again"
    assert any("the checksum lists were read again" in n and "not this user's alone" in n for n in report.notes)


def test_an_edited_memory_of_the_lists_is_not_used(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    [remembered] = memory.glob("*.lists")
    data = bytearray(remembered.read_bytes())
    data[-10] ^= 1  # a byte of the last list's rows
    remembered.write_bytes(bytes(data))
    with lists_read(monkeypatch) as seen:
        report = v.verify_site(site, since=released.since, memory=memory)
    assert report.ok, report.render()
    assert sorted(seen) == sorted(rel for rel in lists(site) if rel != "SHA256SUMS"), "every list read again"
    assert any("the checksum lists were read again" in n and "not used" in n for n in report.notes), report.notes


def test_the_mirror_reads_no_list_it_remembers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site = v3_demo(tmp_path / "v4", fmt=4)
    mirror, state = tmp_path / "mirror", tmp_path / "state" / "state.json"
    with serve(site.out) as served:
        assert main(["mirror", served.url, str(mirror), "--state", str(state)]) == 0, capsys.readouterr()
    assert len(list((state.parent / "releases").glob("*.lists"))) == 1
    before = lists(site.out)
    one_event(site)
    changed = {rel for rel, data in lists(site.out).items() if before.get(rel) != data}
    held: list[str] = []
    read = LocalCopy._read

    def spy(self: LocalCopy, rel: str, digest: str) -> bytes | None:
        held.append(rel)
        return read(self, rel, digest)

    monkeypatch.setattr(LocalCopy, "_read", spy)
    with serve(site.out) as served:
        code = main(["mirror", served.url, str(mirror), "--state", str(state)])
    out, err = capsys.readouterr()
    assert code == 0 and "PASS" in out, out + err
    assert not [rel for rel in held if rel.startswith("sums/")], "a list the mirror holds was read again"
    fetched = {rel for rel in served.requests if rel.startswith("sums/")}
    assert fetched == changed - {"SHA256SUMS"}, "a list was asked for whose bytes did not change"


def test_no_list_is_hashed_twice_when_the_tree_is_read_again(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list taken from the memory is hashed before the tree is trusted, and the check of every
    file takes that hash: a site that makes the tree be read again costs no list hashed twice."""
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    _same_size_edit(site, an_unchanged_leaf(released, site))
    report, from_memory = hashed_by(monkeypatch, lambda: v.verify_site(site, since=released.since, memory=memory))
    _, from_nothing = hashed_by(monkeypatch, lambda: v.verify_site(site, since=released.since))
    assert not report.ok
    assert any(rel.startswith("sums/") for rel in from_memory), "a taken list was hashed before the tree was trusted"
    # (Files other checks hash for their own keys are not the lists' business.)
    more = [rel for rel in from_memory if rel.startswith("sums/") and from_memory[rel] > from_nothing[rel]]
    assert not more, f"hashed more often than verifying from nothing hashes them: {sorted(more)[:5]}"


def test_no_file_is_hashed_more_often_from_the_memory_than_from_nothing(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate the one event made the verifier check again keys its exports by the SHA-256es
    the check of every file verified, not by hashing them a second time: from the memory, no file
    of a passing release is read for its SHA-256 more often than reading everything reads it."""
    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    report, from_memory = hashed_by(monkeypatch, lambda: v.verify_site(site, since=released.since, memory=memory))
    assert report.ok, report.render()[-2000:]
    again, from_nothing = hashed_by(monkeypatch, lambda: v.verify_site(site, since=released.since))
    assert again.ok
    assert any(rel.startswith("certificates/") for rel in from_memory), "the event made certificates be checked again"
    more = sorted(rel for rel in from_memory if from_memory[rel] > from_nothing[rel])
    assert not more, f"hashed more often from the memory than from nothing: {more[:5]}"


def test_no_temporary_file_for_the_lists_costs_the_next_run_not_the_verdict(
    released: Released, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import tempfile

    site, memory = copy_release(released.site.out, released.memory, tmp_path)
    [remembered] = memory.glob("*.lists")
    before = remembered.read_bytes()

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    report = v.verify_site(site, since=released.since, memory=memory)
    assert report.ok, report.render()
    assert any("the checksum lists will be read again next time" in w for w in report.warnings), report.warnings
    assert remembered.read_bytes() == before, "the lists remembered are left as they were"
