"""The site's downloadable copy (FORMAT.md, format v2): `download/site.zip`, every file of the
site outside `download/`, with that list of files as its own signed SHA256SUMS, so the unpacked
copy verifies alone with its verify.py; and `download/site.zip.sha256`. Both are listed in the
site's SHA256SUMS like any file, which signs the archive's hash.

Deterministic, like every file of the site: members in the order of SHA256SUMS, one fixed time
(the release's), fixed permissions, no extra fields. Written last before SHA256SUMS (it holds
every other file), streamed member by member: a real program's site is more than a gigabyte.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import stat
import zipfile
from dataclasses import dataclass
from typing import BinaryIO

from generator import layout
from generator.gather import SiteContext
from generator.verifier import archive_sums, archive_sums_line, in_download
from generator.writer import SiteWriter

# A ZIP time is local DOS time from 1980 to 2107, in two-second steps; the release's UTC time
# is written as it reads.
_ZIP_YEARS = (1980, 2107)
_MODE = (stat.S_IFREG | 0o644) << 16
_UNIX = 3  # "made by" Unix, whatever the build runs on, so that the mode above is read
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Download:
    """What a page may say of the archive (not a page inside it: it would have to hold its own hash)."""

    path: str
    checksum: str  # the archive's `sha256sum -c` line
    size: int
    sha256: str


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

    def fill(f: BinaryIO) -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zf:
            for name in members:
                info = zipfile.ZipInfo(name, when)
                info.compress_type = zipfile.ZIP_DEFLATED  # at zlib's default level, 6
                info.create_system = _UNIX
                info.external_attr = _MODE
                data = inline.get(name)
                source = w.root / name
                # Declared before writing, so that zipfile knows whether the member needs ZIP64.
                info.file_size = len(data) if data is not None else source.stat().st_size
                with zf.open(info, "w") as out:
                    if data is not None:
                        out.write(data)
                    else:
                        with source.open("rb") as src:
                            shutil.copyfileobj(src, out, _CHUNK)

    sha256 = w.write_file(layout.ARCHIVE, fill)
    w.write(layout.ARCHIVE_SUMS, archive_sums_line(sha256))
    return Download(layout.ARCHIVE, layout.ARCHIVE_SUMS, (w.root / layout.ARCHIVE).stat().st_size, sha256)
