"""The downloadable copy of the site (download/site.zip): what it holds, that its unpacked copy
verifies alone, that it is the same bytes every build, and that the verifier refuses an archive
that differs from the site or could write outside its folder, with a message saying which."""

from __future__ import annotations

import hashlib
import io
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.build.site_archive import zip_time
from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core import child_process, layout
from generator.core.signing_key import Signer, load_key
from generator.program.datadir import Paths
from generator.state import archive_cache
from generator.verifier import Report, in_download, verify_site
from tests.support.demo import BuiltSite

Member = tuple[zipfile.ZipInfo, bytes]


def sums_of(site: Path) -> bytes:
    files = sorted(
        (p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()),
        key=lambda r: r.encode(),
    )
    return "".join(
        f"{hashlib.sha256((site / f).read_bytes()).hexdigest()}  {f}\n"
        for f in files
        if f not in (layout.SUMS, layout.SUMS_SIG)
    ).encode()


def republish(site: Path, signer: Signer, sign: bool = True) -> None:
    """As an operator holding the key would after changing the archive: its checksum line, then
    SHA256SUMS (signed again only with `sign`)."""
    if (site / layout.ARCHIVE).is_file():
        digest = hashlib.sha256((site / layout.ARCHIVE).read_bytes()).hexdigest()
        (site / layout.ARCHIVE_SUMS).write_text(f"{digest}  site.zip\n")
    data = sums_of(site)
    (site / layout.SUMS).write_bytes(data)
    if sign:
        (site / layout.SUMS_SIG).write_bytes(signer.sign(data))


def members(site: Path) -> list[Member]:
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        return [(info, zf.read(info)) for info in zf.infolist()]


def rezip(site: Path, edit: Callable[[list[Member]], list[Member]]) -> None:
    items = edit(members(site))
    with zipfile.ZipFile(site / layout.ARCHIVE, "w") as zf:
        for info, data in items:
            zf.writestr(info, data)


def renamed(info: zipfile.ZipInfo, name: str) -> zipfile.ZipInfo:
    new = zipfile.ZipInfo(name, info.date_time)
    new.compress_type, new.external_attr, new.create_system = info.compress_type, info.external_attr, 3
    return new


def failures(site: Path) -> list[str]:
    report: Report = verify_site(site)
    return [p.describe() for p in report.failures]


def signer_of(site: BuiltSite) -> Signer:
    return load_key(site.paths.key_file)


def test_the_archive_holds_every_file_but_download_and_its_copy_verifies_alone(
    demo_site: BuiltSite, tmp_path: Path
) -> None:
    site = demo_site.out
    archive = (site / layout.ARCHIVE).read_bytes()
    digest = hashlib.sha256(archive).hexdigest()
    assert (site / layout.ARCHIVE_SUMS).read_text() == f"{digest}  site.zip\n"
    root_sums = (site / layout.SUMS).read_text()
    assert f"{digest}  {layout.ARCHIVE}\n" in root_sums
    inner = "".join(
        line + "\n" for line in root_sums.splitlines() if not line.split("  ", 1)[1].startswith("download/")
    )
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    wanted = sorted({f for f in files if not f.startswith("download/")}, key=str.encode)
    got = members(site)
    assert [i.filename for i, _ in got] == wanted, "members: every file outside download/, sorted"
    generated_at = yaml.safe_load((site / layout.MANIFEST).read_text())["generated_at"]
    for info, data in got:
        if info.filename == layout.SUMS:
            assert data.decode() == inner
        elif info.filename != layout.SUMS_SIG:
            assert data == (site / info.filename).read_bytes(), info.filename
        assert info.date_time == zip_time(generated_at)
        assert (info.external_attr >> 16, info.create_system) == (stat.S_IFREG | 0o644, 3)
        assert (info.extra, info.comment, info.compress_type) == (b"", b"", zipfile.ZIP_DEFLATED)
        assert not info.flag_bits & 0x8, "a data descriptor: the local header would lack sizes and CRC"
    copy = tmp_path / "unpacked"
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        zf.extractall(copy)  # the names were just compared with the site's own
    run = subprocess.run(
        [sys.executable, "-P", str(copy / "verify.py"), str(copy)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout
    if shutil.which("sha256sum"):
        check = subprocess.run(["sha256sum", "-c", "site.zip.sha256"], cwd=site / "download", capture_output=True)
        assert check.returncode == 0 and b"site.zip: OK" in check.stdout


def test_two_builds_write_the_same_archive(demo_site: BuiltSite, demo_copy: BuiltSite, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build(demo_copy.paths, again)
    for rel in (layout.ARCHIVE, layout.ARCHIVE_SUMS, layout.SUMS):
        assert (again / rel).read_bytes() == (demo_site.out / rel).read_bytes(), rel


def _replace(name: str, data: Callable[[bytes], bytes]) -> Callable[[list[Member]], list[Member]]:
    return lambda ms: [(i, data(d) if i.filename == name else d) for i, d in ms]


def _rename(old: str, new: str) -> Callable[[list[Member]], list[Member]]:
    return lambda ms: [(renamed(i, new) if i.filename == old else i, d) for i, d in ms]


def _mode(name: str, mode: int) -> Callable[[list[Member]], list[Member]]:
    def edit(ms: list[Member]) -> list[Member]:
        for i, _ in ms:
            if i.filename == name:
                i.external_attr = mode << 16
        return ms

    return edit


def _attributes(name: str, attributes: int) -> Callable[[list[Member]], list[Member]]:
    def edit(ms: list[Member]) -> list[Member]:
        for i, _ in ms:
            if i.filename == name:
                i.external_attr = attributes
        return ms

    return edit


def _flip(data: bytes) -> bytes:
    mid = len(data) // 2
    return data[:mid] + bytes([data[mid] ^ 1]) + data[mid + 1 :]


def _flip_hex(data: bytes) -> bytes:
    return data.replace(data[:1], b"f" if data[:1] != b"f" else b"e", 1)


def _lzma(ms: list[Member]) -> list[Member]:
    for i, _ in ms:
        if i.filename == layout.KEYS:
            i.compress_type = zipfile.ZIP_LZMA
    return ms


TAMPERED: dict[str, tuple[Callable[[list[Member]], list[Member]], list[str]]] = {
    "a member changed, same size": (
        _replace(layout.HOME, _flip),
        [f"member {layout.HOME}]: member differs from the site's file"],
    ),
    "a member grown": (
        _replace(layout.HOME, lambda d: d + b"<!-- more -->"),
        ["member the site's file cannot be", "bytes declared", "the size of the site's file"],
    ),
    "a bomb: a member inflating to megabytes": (
        _replace(layout.KEYS, lambda d: bytes(50_000_000)),
        ["member the site's file cannot be", "50000000 bytes declared"],
    ),
    "an extra member": (
        lambda ms: [*ms, (renamed(ms[0][0], "extra.html"), b"<p>extra</p>")],
        ["the archive holds more members than the site has files"],
    ),
    "a member that is not the site's": (
        _rename(layout.HOME, "other.html"),
        ["member that is not a file of the site", "a file of the site is missing from the archive"],
    ),
    "a ../ member": (
        _rename(layout.HOME, "../index.html"),
        ["member with an unsafe name, which unpacking could write outside its folder", '"../index.html"'],
    ),
    "an absolute member": (_rename(layout.HOME, "/tmp/index.html"), ["member with an unsafe name"]),
    "a backslash member": (_rename(layout.HOME, "x\\index.html"), ["member with an unsafe name"]),
    "a folder member": (_rename(layout.HOME, "items/"), ["member with an unsafe name"]),
    "a member twice": (
        lambda ms: [*ms[:-1], (renamed(ms[-1][0], ms[0][0].filename), ms[0][1])],
        ["the archive holds a member twice", "a file of the site is missing from the archive"],
    ),
    "a member missing": (
        lambda ms: [(i, d) for i, d in ms if i.filename != layout.KEYS],
        [f"a file of the site is missing from the archive\n      expected: {layout.KEYS}\n"],
    ),
    "a member as a symbolic link": (
        _mode(layout.HOME, stat.S_IFLNK | 0o777),
        ["member the site's file cannot be", "a link or a device when unpacked"],
    ),
    # Info-ZIP restores a Unix mode as it reads: world-writable and setuid, or executable.
    "a member setuid and world-writable": (
        _mode(layout.HOME, 0o106777),
        ["member the site's file cannot be", "mode 106777", "expected: mode 100644 (a regular file, rw-r--r--"],
    ),
    "a member executable": (_mode(layout.KEYS, stat.S_IFREG | 0o755), ["mode 100755"]),
    "a member with MS-DOS attribute bits": (_attributes(layout.KEYS, (stat.S_IFREG | 0o644) << 16 | 0x10), ["0x10"]),
    "a member compressed with LZMA": (_lzma, ["compression method 14"]),
    "the archive's SHA256SUMS changed, not re-signed": (
        _replace(layout.SUMS, _flip_hex),
        [
            "the archive's SHA256SUMS is not the site's without its download/ lines",
            "the archive's SHA256SUMS.sig is not a valid signature of its SHA256SUMS",
        ],
    ),
    "the archive's signature wrong": (
        _replace(layout.SUMS_SIG, lambda d: bytes(64)),
        ["the archive's SHA256SUMS.sig is not a valid signature of its SHA256SUMS by the site key"],
    ),
}


@pytest.mark.filterwarnings("ignore:Duplicate name")  # zipfile's, writing "a member twice"
@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_archive_fails_with_a_message_naming_it(demo_copy: BuiltSite, case: str) -> None:
    edit, messages = TAMPERED[case]
    site = demo_copy.out
    rezip(site, edit)
    republish(site, signer_of(demo_copy))  # only the key's holder could: the archive alone is wrong
    found = failures(site)
    assert found, f"{case}: the verifier passed a tampered archive"
    assert all(f.startswith(f"{layout.ARCHIVE}") for f in found), found
    for message in messages:
        assert any(message in f for f in found), (message, found)


def _patch_central_flag(site: Path, name: str, flag: int) -> None:
    """Set a general-purpose flag of `name` in the central directory, as no writer would."""
    raw = bytearray((site / layout.ARCHIVE).read_bytes())
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        length = int.from_bytes(raw[at + 28 : at + 30], "little")
        if raw[at + 46 : at + 46 + length] == name.encode():
            raw[at + 8 : at + 10] = (int.from_bytes(raw[at + 8 : at + 10], "little") | flag).to_bytes(2, "little")
            (site / layout.ARCHIVE).write_bytes(bytes(raw))
            return
        at = raw.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{name} not in the central directory")


def _corrupt_data(site: Path, name: str) -> None:
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        info = zf.getinfo(name)
    raw = bytearray((site / layout.ARCHIVE).read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.compress_size // 2] ^= 0xFF
    (site / layout.ARCHIVE).write_bytes(bytes(raw))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda site: _patch_central_flag(site, layout.HOME, 0x1), "an encrypted member"),
        (lambda site: _corrupt_data(site, layout.HOME), "member cannot be read"),
        (lambda site: (site / layout.ARCHIVE).write_bytes(b"not a zip at all"), "not a readable ZIP archive"),
    ],
    ids=["encrypted", "corrupt data", "not a zip"],
)
def test_an_unreadable_archive_fails_without_crashing(
    demo_copy: BuiltSite, damage: Callable[[Path], None], message: str
) -> None:
    site = demo_copy.out
    damage(site)
    republish(site, signer_of(demo_copy))
    found = failures(site)
    assert any(f.startswith(layout.ARCHIVE) and message in f for f in found), found


def test_a_changed_archive_without_the_key_fails_at_the_signature(demo_copy: BuiltSite) -> None:
    """Whoever changes the archive and updates its checksums, but holds no key, is caught by
    SHA256SUMS.sig; the archive, restating an unsigned list, is then not compared with it."""
    site = demo_copy.out
    rezip(site, _replace(layout.HOME, _flip))
    republish(site, signer_of(demo_copy), sign=False)
    run = subprocess.run(
        [sys.executable, "-P", str(site / "verify.py"), str(site)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 1
    fails = [line for line in run.stdout.splitlines() if line.startswith("FAIL ")]
    assert fails == ["FAIL SHA256SUMS.sig: detached signature of SHA256SUMS does not verify with the site key"]
    assert f"Note: {layout.ARCHIVE} not checked: SHA256SUMS, which it restates, does not verify" in run.stdout


def test_a_member_is_not_blamed_for_a_site_file_that_changed(demo_copy: BuiltSite) -> None:
    """A site file changed without its line: SHA256SUMS's check names it, and the archive, which
    still holds what SHA256SUMS lists, adds no failure of its own."""
    site = demo_copy.out
    (site / layout.HOME).write_bytes((site / layout.HOME).read_bytes() + b"\n")
    assert failures(site) == [
        f"{layout.HOME}: SHA-256 differs from SHA256SUMS\n      expected: "
        + next(
            line.split()[0]
            for line in (site / layout.SUMS).read_text().splitlines()
            if line.endswith(f"  {layout.HOME}")
        )
        + f"\n      found:    {hashlib.sha256((site / layout.HOME).read_bytes()).hexdigest()}"
    ]


def test_the_checksum_line_must_match_the_archive(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    (site / layout.ARCHIVE_SUMS).write_text(f"{'0' * 64}  site.zip\n")
    data = sums_of(site)
    (site / layout.SUMS).write_bytes(data)
    (site / layout.SUMS_SIG).write_bytes(signer_of(demo_copy).sign(data))
    assert [f for f in failures(site) if "download/" in f] == [
        next(f for f in failures(site) if f.startswith(f"{layout.ARCHIVE_SUMS}: does not give the archive's SHA-256"))
    ]


def test_a_site_without_the_archive_verifies(demo_copy: BuiltSite, make_program: Callable[..., Paths]) -> None:
    site = demo_copy.out
    shutil.rmtree(site / layout.DOWNLOAD)
    republish(site, signer_of(demo_copy))
    assert failures(site) == []
    paths = make_program()
    doc = yaml.safe_load(paths.program_file.read_text())
    paths.program_file.write_text(yaml.safe_dump({**doc, "download_archive": False}))
    out = paths.data.parent / "public"
    build(paths, out)
    assert not (out / layout.DOWNLOAD).exists()
    assert failures(out) == []


def test_a_checksum_line_without_its_archive_fails(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    (site / layout.ARCHIVE).unlink()
    republish(site, signer_of(demo_copy))
    assert failures(site) == [f"{layout.ARCHIVE_SUMS}: the archive's checksum is published without the archive"]


def _end(raw: bytes | bytearray) -> tuple[int, int]:
    """The genuine archive's entry count and central directory offset (it has no comment)."""
    assert raw[-22:-18] == b"PK\x05\x06" and raw[-2:] == b"\0\0"
    return int.from_bytes(raw[-12:-10], "little"), int.from_bytes(raw[-6:-2], "little")


def _hidden_entry() -> bytes:
    """A local entry for another verify.py, as a tool reading local headers would unpack it."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("verify.py", b"print('PASS')\n")
    raw = out.getvalue()
    return raw[: _end(raw)[1]]


def _shift_offsets(raw: bytearray, by: int) -> None:
    """Move every offset of the central directory and the end record on by `by` bytes."""
    count, at = _end(raw)
    for _ in range(count):
        assert raw[at : at + 4] == b"PK\x01\x02"
        offset = int.from_bytes(raw[at + 42 : at + 46], "little")
        raw[at + 42 : at + 46] = (offset + by).to_bytes(4, "little")
        at += 46 + sum(int.from_bytes(raw[at + i : at + i + 2], "little") for i in (28, 30, 32))
    raw[-6:-2] = (_end(raw)[1] + by).to_bytes(4, "little")


def _hide_before_directory(raw: bytearray) -> bytearray:
    at = _end(raw)[1]
    hidden = _hidden_entry()
    out = raw[:at] + hidden + raw[at:]
    out[-6:-2] = (at + len(hidden)).to_bytes(4, "little")
    return out


def _hide_first(raw: bytearray) -> bytearray:
    hidden = _hidden_entry()
    _shift_offsets(raw, len(hidden))
    return bytearray(hidden) + raw


def _comment(raw: bytearray) -> bytearray:
    raw[-2:] = (5).to_bytes(2, "little")
    return raw + b"hello"


def _count(raw: bytearray) -> bytearray:
    count = _end(raw)[0] - 1
    raw[-14:-10] = count.to_bytes(2, "little") * 2  # entries on this disk, and in all
    return raw


def _local_flags(raw: bytearray) -> bytearray:
    raw[6] |= 0x8  # the first member's local header claims a data descriptor; its central entry does not
    return raw


MALFORMED: dict[str, tuple[Callable[[bytearray], bytearray], str, bool]] = {
    # case: (edit of the genuine bytes, the message, whether zipfile still reads every member)
    "a hidden local entry before the central directory": (
        _hide_before_directory,
        "bytes between the last member and the central directory, which lists none there (a hidden entry?)",
        True,
    ),
    "a hidden local entry first": (
        _hide_first,
        "bytes at offset 0 that no central entry lists (a hidden entry?)",
        True,
    ),
    "bytes prepended": (
        lambda raw: bytearray(b"MZ" * 64) + raw,
        "the central directory is not where the end record places it",
        True,
    ),
    "a trailing comment": (
        _comment,
        "the archive does not end with its end-of-central-directory record\n      expected: nothing after it\n"
        "      found:    a ZIP comment of 5 bytes",
        True,
    ),
    "bytes after the end record": (lambda raw: raw + b"\0" * 7, "found:    7 bytes after the end record", True),
    "a wrong entry count": (
        _count,
        "the end-of-central-directory record counts other entries than the central directory holds",
        True,
    ),
    "a local header disagreeing": (
        _local_flags,
        "the local header's flags (8) differs from the central directory's (0)",
        False,
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_bytes_outside_the_listed_members_fail_the_archive(demo_copy: BuiltSite, case: str) -> None:
    edit, message, readable = MALFORMED[case]
    site = demo_copy.out
    path = site / layout.ARCHIVE
    path.write_bytes(bytes(edit(bytearray(path.read_bytes()))))
    if readable:  # what the strict check is for: zipfile alone sees nothing wrong
        with zipfile.ZipFile(path) as zf:
            assert zf.testzip() is None
    republish(site, signer_of(demo_copy))
    found = failures(site)
    assert found, f"{case}: the verifier passed it"
    assert all(f.startswith(layout.ARCHIVE) for f in found), found
    assert any(message in f for f in found), (message, found)


def test_the_genuine_archive_passes_the_strict_check(demo_site: BuiltSite) -> None:
    assert failures(demo_site.out) == []


# A rebuild copies the compressed bytes of every member whose file did not change from the last
# release's archive, instead of deflating it again, and still writes the bytes of a full build.

RETIRED_AT = "2026-12-06T09:00:00Z"  # after the demo ledger's last event


def deflated_members(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the members zipfile deflates from now on: a copied member is never opened
    for writing."""
    names: list[str] = []
    real = zipfile.ZipFile.open

    def spy(self: zipfile.ZipFile, name: str | zipfile.ZipInfo, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "w":
            names.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real(self, name, mode, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    # Seen from here: the build writes its release in a forked process otherwise.
    monkeypatch.setattr(child_process, "FORK", False)
    return names


def listed(site: Path) -> dict[str, str]:
    """Path to SHA-256, as the site's SHA256SUMS lists them."""
    lines = (line.split("  ", 1) for line in (site / layout.SUMS).read_text().splitlines())
    return {rel: digest for digest, rel in lines}


def archive_members(site: Path) -> list[str]:
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        return [info.filename for info in zf.infolist()]


def full_build(paths: Paths, out: Path) -> bytes:
    """The archive of a build from scratch into a fresh folder."""
    build(paths, out, full=True)
    return (out / layout.ARCHIVE).read_bytes()


def test_a_rebuild_copies_unchanged_members_and_writes_the_archive_of_a_full_build(
    demo_copy: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, site = demo_copy.paths, demo_copy.out
    build(paths, site)  # by this builder, which remembers the archive it wrote
    before = listed(site)
    retire_items(paths, ["b-0017"], "Retired to test the archive.", RETIRED_AT)
    deflated = deflated_members(monkeypatch)
    build(paths, site)
    after = listed(site)
    changed = {p for p, d in after.items() if not in_download(p) and before.get(p) != d}
    assert changed and layout.reveal("b-0017") in changed
    # Only what changed is deflated, and the archive's own SHA256SUMS and its signature, which
    # are not files of the site; every other member is copied.
    assert sorted(deflated, key=str.encode) == sorted(changed | {layout.SUMS, layout.SUMS_SIG}, key=str.encode)
    assert len(deflated) < len(archive_members(site)) // 2
    deflated.clear()
    assert full_build(paths, tmp_path / "full") == (site / layout.ARCHIVE).read_bytes()
    assert len(deflated) == len(archive_members(site)), "the full build deflates every member"


RECORD = "download.json"  # under PRIVATE/cache: the archive the last build wrote, and what deflated it


def _flip_member_byte(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    _corrupt_data(built.out, layout.HOME)


def _flip_and_republish(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """As one who can write into the published folder and holds the key might: the archive's
    checksum and the site's SHA256SUMS say the edited archive is the release's."""
    _corrupt_data(built.out, layout.HOME)
    republish(built.out, signer_of(built))


def _truncate(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    path = built.out / layout.ARCHIVE
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _replace_with_a_link(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    path = built.out / layout.ARCHIVE
    kept = built.out.parent / "site.zip"
    path.rename(kept)
    path.symlink_to(kept)


def _remove(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a clone of this repository: git keeps the demo's public/ but not its archive."""
    (built.out / layout.ARCHIVE).unlink()


def _forget(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    (built.paths.private / "cache" / RECORD).unlink()


def _another_zlib(built: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """As if zlib had been upgraded since the last build: it might deflate otherwise."""
    monkeypatch.setattr(archive_cache, "DEFLATER", "zlib 0.0.0, Python 3.11")


PREVIOUS: dict[str, Callable[[BuiltSite, pytest.MonkeyPatch], None]] = {
    "one byte of a member's compressed data flipped": _flip_member_byte,
    "the same, with the checksums updated and signed again": _flip_and_republish,
    "cut in half": _truncate,
    "a symbolic link to the same bytes": _replace_with_a_link,
    "missing": _remove,
    "not remembered by the cache": _forget,
    "written by another zlib": _another_zlib,
}


@pytest.mark.parametrize("case", list(PREVIOUS))
def test_a_previous_archive_not_known_to_be_ours_is_not_copied_from(
    demo_copy: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Every member deflated again, and the archive the same bytes as the full build's."""
    paths, site = demo_copy.paths, demo_copy.out
    build(paths, site)
    genuine = (site / layout.ARCHIVE).read_bytes()
    assert (paths.private / "cache" / RECORD).is_file(), "the build remembers the archive it wrote"
    PREVIOUS[case](demo_copy, monkeypatch)
    deflated = deflated_members(monkeypatch)
    build(paths, site)  # nothing changed but the archive in the published folder, or what is known of it
    assert sorted(deflated, key=str.encode) == archive_members(site)
    assert (site / layout.ARCHIVE).read_bytes() == genuine
    assert not (site / layout.ARCHIVE).is_symlink()
    assert full_build(paths, tmp_path / "full") == genuine


# -- from the verifier's memory: a member whose compressed bytes were read back before is not
# inflated again; any other is, and fails as it fails from nothing.


def _remembered(site: Path) -> list[tuple[str, bytes, str | None]]:
    origin = verify_site(site).tree["origin"]
    return [("state", (site / "ledger" / "checkpoint").read_bytes(), origin)]


def _inflated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The members the verifier inflates from now on, but for its own SHA256SUMS and signature."""
    from generator.verifier.site import download as checks

    seen: list[str] = []
    read = checks._read_member

    def counting(s: Any, rel: str, zf: Any, info: zipfile.ZipInfo, where: str, keep: bool = False) -> bytes | None:
        if not keep:
            seen.append(info.filename)
        return read(s, rel, zf, info, where, keep)

    monkeypatch.setattr(checks, "_read_member", counting)
    return seen


def test_a_second_verification_inflates_no_member(
    demo_copy: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, memory = demo_copy.out, tmp_path / "releases"
    since = _remembered(site)
    first = verify_site(site, since=since, memory=memory)
    assert first.ok
    inflated = _inflated(monkeypatch)
    again = verify_site(site, since=since, memory=memory)
    assert again.ok and again.checks == first.checks
    assert inflated == []
    # What the run used it remembers again: a third run inflates nothing either.
    assert verify_site(site, since=since, memory=memory).ok and inflated == []
    # Without the memory every member is read back, as before.
    assert verify_site(site).ok and len(inflated) == len(archive_members(site)) - 2


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_archive_fails_from_the_memory_as_from_nothing(
    demo_copy: BuiltSite, tmp_path: Path, case: str
) -> None:
    site, memory = demo_copy.out, tmp_path / "releases"
    since = _remembered(site)
    assert verify_site(site, since=since, memory=memory).ok
    rezip(site, TAMPERED[case][0])
    republish(site, signer_of(demo_copy))
    from_memory = verify_site(site, since=since, memory=memory)
    assert not from_memory.ok
    assert sorted(p.describe() for p in from_memory.failures) == sorted(failures(site))


def test_corrupt_compressed_bytes_are_inflated_and_fail_from_the_memory(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site, memory = demo_copy.out, tmp_path / "releases"
    since = _remembered(site)
    assert verify_site(site, since=since, memory=memory).ok
    _corrupt_data(site, layout.HOME)
    republish(site, signer_of(demo_copy))
    found = [p.describe() for p in verify_site(site, since=since, memory=memory).failures]
    assert any(f.startswith(layout.ARCHIVE) and "member cannot be read" in f for f in found), found


def _set_crc(site: Path, name: str, crc: int) -> None:
    """Give member `name` another CRC-32 in its local header and its central entry alike, so
    that the layout still agrees with itself and only reading the member back can tell."""
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        info = zf.getinfo(name)
    raw = bytearray((site / layout.ARCHIVE).read_bytes())
    value = crc.to_bytes(4, "little")
    raw[info.header_offset + 14 : info.header_offset + 18] = value
    encoded = name.encode()
    pos = raw.find(b"PK\x01\x02")
    while pos >= 0:
        name_len = int.from_bytes(raw[pos + 28 : pos + 30], "little")
        if raw[pos + 46 : pos + 46 + name_len] == encoded:
            raw[pos + 16 : pos + 20] = value
            break
        pos = raw.find(b"PK\x01\x02", pos + 4)
    assert pos >= 0, f"no central entry for {name}"
    (site / layout.ARCHIVE).write_bytes(bytes(raw))


def test_remembered_bytes_under_another_crc_fail_from_the_memory(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site, memory = demo_copy.out, tmp_path / "releases"
    since = _remembered(site)
    assert verify_site(site, since=since, memory=memory).ok
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        crc = zf.getinfo(layout.HOME).CRC
    _set_crc(site, layout.HOME, crc ^ 1)
    republish(site, signer_of(demo_copy))
    from_nothing = sorted(failures(site))
    assert any("member cannot be read" in f for f in from_nothing), from_nothing
    assert sorted(p.describe() for p in verify_site(site, since=since, memory=memory).failures) == from_nothing


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_name_twice_is_read_at_each_entry_from_the_memory(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """Two entries of one name and one header, the first with corrupt compressed bytes, the
    second with the remembered ones: each entry is looked up where it lies, not by its name,
    so the first is read back and fails as it fails from nothing."""
    site, memory = demo_copy.out, tmp_path / "releases"
    since = _remembered(site)
    assert verify_site(site, since=since, memory=memory).ok

    def twice(ms: list[Member]) -> list[Member]:
        first, data = next((i, d) for i, d in ms if i.filename == layout.HOME)
        rest = [(i, d) for i, d in ms if i.filename != layout.HOME]
        return [(first, data), *rest[:-1], (renamed(first, layout.HOME), data)]

    rezip(site, twice)
    with zipfile.ZipFile(site / layout.ARCHIVE) as zf:
        first = zf.infolist()[0]  # getinfo would give the last entry of the name
    assert first.filename == layout.HOME
    raw = bytearray((site / layout.ARCHIVE).read_bytes())
    start = first.header_offset + 30 + len(first.filename.encode()) + len(first.extra)
    raw[start + first.compress_size // 2] ^= 0xFF
    (site / layout.ARCHIVE).write_bytes(bytes(raw))
    republish(site, signer_of(demo_copy))
    from_nothing = sorted(failures(site))
    assert any("member cannot be read" in f for f in from_nothing), from_nothing
    assert sorted(p.describe() for p in verify_site(site, since=since, memory=memory).failures) == from_nothing
