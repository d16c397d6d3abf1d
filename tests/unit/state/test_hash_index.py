"""The hash index (generator/state/hash_index_cache.py): a file's SHA-256 is taken from it only while
the file keeps the identity it had when recorded, only a settled file is recorded, and a damaged
index is no index."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import pytest

from generator.program.datadir import Paths
from generator.state.hash_index_cache import FileRows, IdentityRows, index_path, load_index, save_index


def _paths(tmp_path: Path) -> Paths:
    (tmp_path / "private").mkdir()
    return Paths(tmp_path, tmp_path / "private")


def _ident(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _files(tmp_path: Path, n: int) -> list[tuple[str, Path, str]]:
    out = []
    for i in range(n):
        f = tmp_path / f"f{i}.txt"
        f.write_bytes(b"file %d" % i)
        out.append((f"data/f{i}.txt", f, hashlib.sha256(f.read_bytes()).hexdigest()))
    return out


def test_a_recorded_file_is_known_while_its_identity_holds(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    files = _files(tmp_path, 3)
    later = max(os.lstat(f).st_ctime_ns for _, f, _ in files) + 1
    assert save_index(paths, later, [(place, _ident(os.lstat(f)), sha) for place, f, sha in files]) == 3
    index = load_index(paths)
    assert len(index) == 3
    for place, f, sha in files:
        assert index.sha256(place, os.lstat(f)) == sha
    assert index.used == 3
    # Another place, and the same place with another identity, are unknown.
    assert index.sha256("data/other.txt", os.lstat(files[0][1])) is None
    place, f, _ = files[1]
    f.write_bytes(b"file 9")  # same size, other bytes: its times change
    assert index.sha256(place, os.lstat(f)) is None
    os.utime(f, ns=(os.lstat(f).st_atime_ns, _ident(os.lstat(files[0][1]))[2]))  # the mtime put back
    assert index.sha256(place, os.lstat(f)) is None  # the change time cannot be


def test_a_file_changed_within_a_tick_of_the_mark_is_not_recorded(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    files = _files(tmp_path, 2)
    settled = os.lstat(files[1][1]).st_ctime_ns  # the second file is not older than this
    rows = [(place, _ident(os.lstat(f)), sha) for place, f, sha in files]
    os.utime(files[0][1], ns=(1, 1))
    rows[0] = (rows[0][0], _ident(os.lstat(files[0][1])), rows[0][2])
    recorded = save_index(paths, settled, rows)
    index = load_index(paths)
    assert recorded == len(index) <= 1
    assert index.sha256(files[1][0], os.lstat(files[1][1])) is None


def test_a_damaged_or_foreign_index_is_no_index(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    files = _files(tmp_path, 5)
    later = max(os.lstat(f).st_ctime_ns for _, f, _ in files) + 1
    save_index(paths, later, [(place, _ident(os.lstat(f)), sha) for place, f, sha in files])
    good = index_path(paths).read_bytes()
    for damaged in (good[: len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"{}", b""):
        index_path(paths).write_bytes(damaged)
        index = load_index(paths)
        assert len(index) == 0
        assert index.sha256(files[0][0], os.lstat(files[0][1])) is None
    index_path(paths).unlink()
    assert len(load_index(paths)) == 0


def test_odd_names_are_kept_as_they_are(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    f = tmp_path / "x"
    f.write_bytes(b"x")
    st = os.lstat(f)
    names = ["data/a b.json", "data/\udcff.bin", "data/é/ü.json", "data/z"]
    save_index(paths, st.st_ctime_ns + 1, [(n, _ident(st), "ab" * 32) for n in names])
    index = load_index(paths)
    assert [index.sha256(n, st) for n in names] == ["ab" * 32] * 4


def test_rows_gathered_flat_give_back_what_was_appended_in_any_process() -> None:
    """The rows a build holds for every input until it records them (FileRows): flat arrays that
    give back each row as appended, pickled across to the process that records them."""
    rows = [
        (
            f"data/runs/run-{i:06d}.json",
            (0o100644, i, 10**18 + i, 10**18 + 2 * i, 7 * i),
            hashlib.sha256(b"%d" % i).hexdigest(),
        )
        for i in range(1000)
    ]
    kept = FileRows()
    for row in rows:
        kept.append(*row)
    assert len(kept) == 1000 and list(kept) == rows
    again = pickle.loads(pickle.dumps(kept))
    assert list(again) == rows and list(pickle.loads(pickle.dumps(FileRows()))) == []
    with pytest.raises(ValueError, match="5 fields"):
        kept.append("data/x", (1, 2), "00" * 32)
    with pytest.raises(ValueError, match="32 bytes"):
        kept.set_sha256(0, "00")
    assert list(kept) == rows  # a refused row leaves nothing behind
    # An inode number past 2**63, as some network file systems give, and a name that is not
    # UTF-8 (kept by the walk as surrogates): both come back as they went in, across processes.
    odd = ("data/caf\udce9.json", (0o100644, 1, 2, 3, (1 << 64) - 5), "ab" * 32)
    kept.append(*odd)
    kept.set_sha256(1000, "cd" * 32)
    assert list(pickle.loads(pickle.dumps(kept)))[-1] == (odd[0], odd[1], "cd" * 32)


def test_an_inode_number_past_two_to_the_63rd_is_recorded_and_matched(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    st = os.lstat(_files(tmp_path, 1)[0][1])
    big = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, (1 << 64) - 7)
    assert save_index(paths, st.st_ctime_ns + 1, [("data/f0.txt", big, "ef" * 32)]) == 1

    class Looked:  # the stat result such a file system gives
        st_mode, st_size, st_mtime_ns, st_ctime_ns, st_ino = big

    assert load_index(paths).sha256("data/f0.txt", Looked()) == "ef" * 32  # type: ignore[arg-type]


def test_the_site_rows_of_a_look_are_recorded_as_the_same_rows_given_one_by_one(tmp_path: Path) -> None:
    """save_index takes a look's rows (IdentityRows) in blocks: the index it writes is byte for
    byte the one the same rows make given as tuples, each filtered by the same rule (a regular
    file, settled, with a SHA-256), in place order though the look walked folder by folder."""
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    names = ["a/x.json", "a.json", "a-b.txt", "b.txt", "unhashed.txt", "late.txt"]
    for name in names:
        (site / name).write_bytes(name.encode())
    os.utime(site / "late.txt", ns=(1, 1))
    settled = max(os.lstat(site / n).st_ctime_ns for n in names) + 1
    late = site / "late.txt"
    # A walk's order (folder "a" before "a-b.txt" and "a.json"), not the places' sorted order.
    walked = ["a", "a/x.json", "a-b.txt", "a.json", "b.txt", "late.txt", "unhashed.txt"]
    rows = IdentityRows()
    for rel in walked:
        st = os.lstat(site / rel)
        ident = _ident(st)
        if rel == "late.txt":  # changed within the tick: not recorded
            ident = (*ident[:3], settled + 5, ident[4])
        rows.append(f"site/{rel}", ident)
    hashes = {n: hashlib.sha256(n.encode()).hexdigest() for n in names if n not in ("unhashed.txt",)}
    inputs = [("data/in.txt", _ident(os.lstat(late)), "cd" * 32)]
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
    one = _paths(tmp_path / "one")
    two = _paths(tmp_path / "two")
    assert save_index(one, settled, inputs, rows, hashes) == 5
    tuples = [(place, ident, hashes[place[5:]]) for place, ident in rows if place[5:] in hashes]
    assert save_index(two, settled, [*inputs, *tuples]) == 5
    assert index_path(one).read_bytes() == index_path(two).read_bytes()
    index = load_index(one)
    assert index.sha256("site/a.json", os.lstat(site / "a.json")) == hashes["a.json"]
    assert index.sha256("site/late.txt", os.lstat(late)) is None
    # Site places that would not sort after the inputs' (no build makes them): sorted all the same.
    three = _paths(tmp_path / "three")
    assert save_index(three, settled, [("zz/in.txt", *inputs[0][1:])], rows, hashes) == 5
    assert load_index(three).sha256("zz/in.txt", os.lstat(late)) == "cd" * 32


def test_identity_rows_hash_in_blocks_and_their_shape_leaves_change_times_out() -> None:
    one, two = IdentityRows(), IdentityRows()
    one.append("site/a", (0o100644, 1, 2, 3, 4))
    two.append("site/a", (0o100644, 1, 2, 9, 4))
    digests = []
    for rows in (one, two):
        plain, shape = hashlib.sha256(), hashlib.sha256()
        rows.feed(plain)
        rows.feed(shape, shape=True)
        digests.append((plain.hexdigest(), shape.hexdigest()))
    assert digests[0][0] != digests[1][0] and digests[0][1] == digests[1][1]
    assert (one.newest(), two.newest(), IdentityRows().newest()) == (3, 9, 0)
