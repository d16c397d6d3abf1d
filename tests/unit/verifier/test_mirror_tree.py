"""The mirror's descent into a checksum list split into a tree (format v3's `sums/<p>.sha256`,
docs/formats/v3.md section 5), on a hand-made tree served over HTTP: the first copy fetches every
list and file, and after one file changes only that file and the lists above it are asked for;
a file the site stops listing is removed, one the mirror did not write is left alone; a list
the record vouches for but whose bytes are others is fetched again."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from generator.core.signing_key import Signer
from generator.verifier.core.folder import identity_of, known_sha256, known_still, known_value
from generator.verifier.site.mirror import Outcome, mirror_site
from generator.verifier.site.remote import open_remote
from tests.support.http_site import serve

ORIGIN = "mirror.example.org/tree"
SIGNER = Signer(ORIGIN, hashlib.sha256(b"tests: the mirror tree's key").digest())
LEAF_MAX = 2  # v3's leaves hold 64 files; two make a deep tree of a few files


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key_of(path: str) -> str:
    return sha(path.encode())


def write_site(root: Path, content: dict[str, bytes]) -> None:
    """A site of `content` (and the manifest and keys the mirror reads for the key), its list as
    v3's tree: a node splits by the next hex digit of its files' keys while it holds more than
    LEAF_MAX of them, each list `sums/<prefix>.sha256`, the root's SHA256SUMS, signed."""
    keys = {
        "type": "keys",
        "v": 1,
        "origin": ORIGIN,
        "keys": [
            {
                "vkey": SIGNER.vkey,
                "public_key": base64.b64encode(SIGNER.public_key).decode(),
                "fingerprint": SIGNER.fingerprint,
                "pem": "keys/k.pem",
                "valid_from": "2026-01-01T00:00:00Z",
                "valid_until": None,
                "status": "active",
            }
        ],
    }
    files = {
        **content,
        "transparency.json": json.dumps({"keys": "keys.json", "origin": ORIGIN}, separators=(",", ":")).encode(),
        "keys.json": json.dumps(keys, separators=(",", ":"), sort_keys=True).encode(),
    }
    for old in sorted(root.rglob("*"), reverse=True):
        if old.is_file():
            old.unlink()
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)

    def node(prefix: str) -> bytes:
        members = sorted(p for p in files if key_of(p).startswith(prefix))
        lines: list[tuple[str, str]] = []
        if prefix and len(members) <= LEAF_MAX:
            lines = [(sha(files[p]), p) for p in members]
        else:
            for d in "0123456789abcdef":
                if any(key_of(p).startswith(prefix + d) for p in members):
                    child, rel = node(prefix + d), f"sums/{prefix + d}.sha256"
                    (root / "sums").mkdir(exist_ok=True)
                    (root / rel).write_bytes(child)
                    lines.append((sha(child), rel))
        return "".join(f"{h}  {p}\n" for h, p in sorted(lines, key=lambda x: x[1].encode())).encode()

    sums = node("")
    (root / "SHA256SUMS").write_bytes(sums)
    (root / "SHA256SUMS.sig").write_bytes(SIGNER.sign(sums))


def lists_above(root: Path, path: str) -> set[str]:
    """The lists under sums/ whose prefix begins the key of `path`: those that change with it."""
    k = key_of(path)
    return {p.relative_to(root).as_posix() for p in (root / "sums").iterdir() if k.startswith(p.stem)}


CONTENT = {f"pages/{n}.html": f"page {n}\n".encode() for n in range(40)}
META = {"transparency.json", "keys.json", "SHA256SUMS", "SHA256SUMS.sig"}


def mirror(url: str, folder: Path, record: Outcome | None = None) -> Outcome:
    remote = open_remote(url)
    try:
        return mirror_site(remote, folder, SIGNER.vkey, record.files if record else {}, jobs=3)
    finally:
        remote.close()


def on_disk(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    write_site(root, CONTENT)
    assert len(list((root / "sums").iterdir())) > 16, "the tree has inner lists below the root"
    return root


@pytest.mark.parametrize("with_record", [True, False], ids=["record", "no-record"])
def test_a_change_fetches_the_file_and_the_lists_above_it_only(site: Path, tmp_path: Path, with_record: bool) -> None:
    folder = tmp_path / "mirror"
    with serve(site) as served:
        first = mirror(served.url, folder)
    assert on_disk(folder) == on_disk(site)
    assert first.fetched == len(on_disk(site)) - 2 and first.kept == 0
    assert set(served.requests) == set(on_disk(site))

    changed = max(CONTENT, key=lambda p: (len(lists_above(site, p)), p))  # a file deep in the tree
    write_site(site, {**CONTENT, changed: b"corrected\n"})
    above = lists_above(site, changed)
    assert len(above) >= 2, "a leaf list and an inner list above it"
    with serve(site) as served:
        second = mirror(served.url, folder, first if with_record else None)
    assert sorted(served.requests) == sorted(META | above | {changed})
    assert second.fetched == len(above) + 1 and second.removed == 0
    assert on_disk(folder) == on_disk(site)


def test_a_file_no_longer_listed_is_removed_and_one_never_written_is_kept(site: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mirror"
    with serve(site) as served:
        first = mirror(served.url, folder)
    (folder / "notes.txt").write_bytes(b"the user's own")
    gone = "pages/3.html"
    write_site(site, {p: d for p, d in CONTENT.items() if p != gone})
    with serve(site) as served:
        second = mirror(served.url, folder, first)
    assert not (folder / gone).exists()
    assert second.removed >= 1  # the file, and any list of the tree that went with it
    assert (folder / "notes.txt").read_bytes() == b"the user's own"
    assert {p: d for p, d in on_disk(folder).items() if p != "notes.txt"} == on_disk(site)


def test_a_list_the_record_vouches_for_but_whose_bytes_differ_is_fetched_again(site: Path, tmp_path: Path) -> None:
    """A record (wrong, or written over between the lstat and the read) naming the listed SHA-256
    and the list's identity as it is now, over other bytes: the bytes read decide, not the record."""
    folder = tmp_path / "mirror"
    with serve(site) as served:
        first = mirror(served.url, folder)
    rel = sorted(p for p in first.files if p.startswith("sums/"))[0]
    (folder / rel).write_bytes(b"0" * 64 + b"  pages/planted.html\n")
    first.files[rel] = known_value(known_sha256(first.files[rel]), identity_of((folder / rel).lstat()))
    with serve(site) as served:
        second = mirror(served.url, folder, first)
    assert rel in served.requests
    assert on_disk(folder) == on_disk(site)
    assert second.files[rel] == known_value(sha((site / rel).read_bytes()), identity_of((folder / rel).lstat()))


def test_a_file_whose_times_do_not_fit_a_record_is_kept_and_hashed_each_run(site: Path, tmp_path: Path) -> None:
    """A record's value holds the times as 64-bit integers: a time past 2262 does not fit. Such a
    file is checked by its bytes, kept if they are the listed ones, and never recorded."""
    folder = tmp_path / "mirror"
    with serve(site) as served:
        first = mirror(served.url, folder)
    rel = "pages/3.html"
    late = 2**63 + 5  # nanoseconds: April 2262
    os.utime(folder / rel, ns=(late, late))
    st = (folder / rel).lstat()
    assert st.st_mtime_ns == late, "this file system cannot hold a time past 2262: the test shows nothing"
    assert known_value(sha(CONTENT[rel]), identity_of(st)) is None
    assert not known_still(first.files[rel], st)
    for _ in range(2):
        with serve(site) as served:
            again = mirror(served.url, folder, first)
        assert rel not in served.requests and rel not in again.files and again.fetched == 0
        assert on_disk(folder) == on_disk(site)
        first = again


def test_a_file_held_on_the_first_try_and_changed_by_the_second_list_is_replaced(tmp_path: Path) -> None:
    """A torn read starts the run again from a fresh list. A file the first try found held with
    its old bytes, which the second list changes, is fetched, and swapped in: the first try's
    answer does not keep the old bytes in place under the new list."""
    from generator.verifier.site.mirror_folder import INCOMING, LocalCopy, swap_in

    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "p.html").write_bytes(b"A")
    record = {"p.html": known_value(sha(b"A"), identity_of((folder / "p.html").lstat()))}
    local = LocalCopy(folder, record)  # type: ignore[arg-type]
    assert local.plan({"p.html": sha(b"A")}, 1) == []  # the first try: held
    assert local.plan({"p.html": sha(b"B")}, 1) == ["p.html"]  # the second: changed
    (folder / INCOMING).mkdir()
    fetched = folder / INCOMING / "0.part"
    fetched.write_bytes(b"B")
    swap_in(folder, local, {"p.html": sha(b"B")}, {("p.html", sha(b"B")): (fetched, 1)}, b"", b"")
    assert (folder / "p.html").read_bytes() == b"B"
    assert known_sha256(local.written["p.html"]) == sha(b"B")
