"""The site's downloadable copy (FORMAT.md, format v2): `download/site.zip`, every file of the
site outside `download/`, with that list of files as its own signed SHA256SUMS, so the unpacked
copy verifies alone with its verify.py; and `download/site.zip.sha256`. Both are listed in the
site's SHA256SUMS like any file, which signs the archive's hash.

Deterministic, like every file of the site: members in the order of SHA256SUMS, one fixed time
(the release's), fixed permissions, no extra fields. Written last before SHA256SUMS (it holds
every other file), streamed member by member: a real program's site is more than a gigabyte.

A rebuild does not deflate again what did not change. A member's compressed bytes, CRC-32 and
sizes depend only on its content and on zlib; only its date (the release's) is new. So each file
whose bytes the last release's archive holds already is copied from it, compressed, under a new
header, which gives the bytes a full build writes. The last archive is copied from only if it is
the one this builder wrote, with the zlib it runs now: the private cache remembers the SHA-256 of
the archive last written and what deflated it (generator.state.archive_cache), and the published
file must still hash to it (one pass over it, far cheaper than deflating), so that nothing edited
in the published folder is carried into the next release.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import shutil
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from generator.build.gather import SiteContext
from generator.build.writer import SiteWriter
from generator.core import layout
from generator.state.archive_cache import archive_cache_path, last_archive, remember_archive
from generator.verifier import MEMBER_MODE, archive_sums, archive_sums_line, in_download

# A ZIP time is local DOS time from 1980 to 2107, in two-second steps; the release's UTC time
# is written as it reads.
_ZIP_YEARS = (1980, 2107)
_MODE = MEMBER_MODE << 16  # the only mode the verifier accepts besides none
_UNIX = 3  # "made by" Unix, whatever the build runs on, so that the mode above is read
_CHUNK = 1 << 20
# A local header's date and time, the only bytes by which a copied member's header differs from the last one's.
_DATE = slice(10, 14)
# What zipfile and the file system raise on an archive that is not what the cache says.
_UNREADABLE = (OSError, ValueError, zipfile.BadZipFile, zlib.error, EOFError, KeyError)


@dataclass(frozen=True)
class Download:
    """What a page may say of the archive (not a page inside it: it would have to hold its own hash)."""

    path: str
    checksum: str  # the archive's `sha256sum -c` line
    size: int
    sha256: str


@dataclass
class PreviousArchive:
    """The last release's archive, open, known to be the bytes this builder wrote with this zlib."""

    f: BinaryIO
    members: dict[str, zipfile.ZipInfo]  # its central directory
    sums: dict[str, str]  # its own SHA256SUMS: the SHA-256 of the bytes each member was deflated from


def zip_time(at: str) -> tuple[int, int, int, int, int, int]:
    t = _dt.datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ")
    if t.year < _ZIP_YEARS[0]:
        return (1980, 1, 1, 0, 0, 0)
    if t.year > _ZIP_YEARS[1]:
        return (2107, 12, 31, 23, 59, 58)
    return (t.year, t.month, t.day, t.hour, t.minute, t.second - t.second % 2)


def write_download(ctx: SiteContext, w: SiteWriter) -> Download | None:
    """The archive and its checksum line, unless program.yaml says `download_archive: false`.
    Every file of the site must be written by now, SHA256SUMS excepted."""
    if not ctx.program.download_archive:
        return None
    sums = archive_sums(w.hashes)
    inline = {layout.SUMS: sums, layout.SUMS_SIG: ctx.signer.sign(sums)}
    members = sorted([p for p in w.hashes if not in_download(p)] + list(inline), key=lambda p: p.encode())
    when = zip_time(ctx.generated_at)
    record = archive_cache_path(ctx.paths.private)
    previous = _open_previous(w, record)

    def fill(f: BinaryIO) -> None:
        fill_zip(f, w, members, when, inline, lambda name: previous)

    try:
        sha256 = w.write_file(layout.ARCHIVE, fill)
    finally:
        if previous is not None:
            previous.f.close()
    remember_archive(record, sha256)
    w.write(layout.ARCHIVE_SUMS, archive_sums_line(sha256))
    return Download(layout.ARCHIVE, layout.ARCHIVE_SUMS, (w.root / layout.ARCHIVE).stat().st_size, sha256)


def fill_zip(
    f: BinaryIO,
    w: SiteWriter,
    members: list[str],
    when: tuple[int, int, int, int, int, int],
    inline: dict[str, bytes],
    previous_for: Callable[[str], PreviousArchive | None],
) -> None:
    """A ZIP archive into `f` by the byte rules of FORMAT.md, "The downloadable copy": the site's
    files `members` (or `inline`'s bytes for a name it has), in that order, dated `when`; a
    member is copied compressed from the archive `previous_for(name)` when that one was deflated
    from the same bytes."""
    root = os.fspath(w.root)

    def member(name: str, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, when)
        info.compress_type = zipfile.ZIP_DEFLATED  # at zlib's default level, 6
        info.create_system = _UNIX
        info.external_attr = _MODE
        # Declared before writing, so that zipfile knows whether the member needs ZIP64.
        info.file_size = size
        return info

    with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in members:
            data = inline.get(name)
            source = os.path.join(root, name)  # a str, not a Path: a hundred thousand of them
            size = len(data) if data is not None else os.stat(source).st_size
            previous = previous_for(name) if data is None else None
            if previous is not None and _copy(zf, member(name, size), previous, w.hashes[name]):
                continue
            with zf.open(member(name, size), "w") as out:
                if data is not None:
                    out.write(data)
                else:
                    with open(source, "rb") as src:
                        shutil.copyfileobj(src, out, _CHUNK)


def _open_previous(w: SiteWriter, record: Path) -> PreviousArchive | None:
    """The last release's archive, if it is the one the cache says this builder wrote, deflated
    as this one would deflate it; else None, and every member is deflated."""
    if w.previous is None or not w.previous.reuse:
        return None
    digest = last_archive(record)
    if digest is None or digest != w.previous.digest(layout.ARCHIVE):
        return None

    def own_sums(zf: zipfile.ZipFile) -> dict[str, str]:
        lines = (line.partition("  ") for line in zf.read(layout.SUMS).decode().splitlines())
        return {rel: sha256 for sha256, _, rel in lines}

    return open_archive(w.previous.file(layout.ARCHIVE), digest, own_sums)


def open_archive(path: Path, digest: str, sums: Callable[[zipfile.ZipFile], dict[str, str]]) -> PreviousArchive | None:
    """An archive of the last release to copy members from, if its file still hashes to `digest`
    (the bytes this builder wrote); `sums(zf)` says from which bytes each member was deflated.
    None if not: every member is deflated again."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        f = path.open("rb")
    except _UNREADABLE:
        return None
    try:
        if hashlib.file_digest(f, "sha256").hexdigest() == digest:
            with zipfile.ZipFile(f) as zf:  # reads the central directory once; leaves `f` open
                found = {info.filename: info for info in zf.infolist()}
                return PreviousArchive(f, found, sums(zf))
    except _UNREADABLE:
        pass
    f.close()
    return None


def _copy(zf: zipfile.ZipFile, info: zipfile.ZipInfo, previous: PreviousArchive, digest: str) -> bool:
    """Write the member `info` from the last archive's compressed bytes, if its member of that
    name was deflated from the bytes whose SHA-256 is `digest`; False, having written nothing,
    if not. Written as zipfile writes a member to a seekable file (ZipFile._open_to_write, then
    _ZipWriteFile.close): the header with the final CRC-32 and sizes, the data, the entry listed
    for the central directory."""
    old = previous.members.get(info.filename)
    if (
        old is None
        or previous.sums.get(info.filename) != digest
        or old.compress_type != zipfile.ZIP_DEFLATED
        or old.file_size != info.file_size
    ):
        return False
    info.CRC, info.compress_size = old.CRC, old.compress_size
    header = info.FileHeader(info.file_size * 1.05 > zipfile.ZIP64_LIMIT)  # zipfile's choice of ZIP64
    try:
        previous.f.seek(old.header_offset)
        theirs = previous.f.read(len(header))
    except OSError:
        return False
    # The same header but for the date (version, flags, method, CRC-32, sizes, name, ZIP64
    # field), or the data does not follow it as this one's will.
    if theirs[: _DATE.start] + theirs[_DATE.stop :] != header[: _DATE.start] + header[_DATE.stop :]:
        return False
    out, start = zf.fp, zf.start_dir
    assert out is not None  # open for writing
    out.seek(start)
    out.write(header)
    left = old.compress_size
    while left:
        try:
            chunk = previous.f.read(min(_CHUNK, left))
        except OSError:
            chunk = b""
        if not chunk:  # shorter than it was hashed: no longer the archive the cache describes
            out.seek(start)
            out.truncate()
            previous.members.clear()
            return False
        out.write(chunk)
        left -= len(chunk)
    info.header_offset = start
    zf.start_dir = out.tell()
    zf.filelist.append(info)
    zf.NameToInfo[info.filename] = info
    return True
