"""A ZIP archive's layout held to the one the build writes (FORMAT.md, "The downloadable copy"):
the end records last and as zipfile writes them, the central directory right before them, and
the local entries back to back from offset 0, each agreeing with its central entry. Unpackers
differ in what they read: one that walks the local headers in order would unpack an entry the
central directory hides, so no byte may lie outside the members the central directory lists.
Used for v2's `download/site.zip` and v3's download parts alike (generator/verifier/site/download.py).
"""

import struct
import zipfile
from dataclasses import dataclass
from typing import BinaryIO

from generator.verifier.core.folder import Site
from generator.verifier.core.formats import is_safe_path
from generator.verifier.core.text import show

# The records of APPNOTE 4.3, as zipfile writes them; the signature first.
_END = struct.Struct("<4s4H2LH")  # disks, entries on this disk and in all, size, offset, comment
_END64 = struct.Struct("<4sQ2H2L4Q")  # its size, versions, disks, entries (twice), size, offset
_LOCATOR64 = struct.Struct("<4sLQL")  # the disk and offset of the zip64 end record, disks
_LOCAL = struct.Struct("<4s5H3L2H")  # version, flags, method, time, date, CRC, sizes, name and extra
_ZIP64_EXTRA = 0x0001
_DESCRIPTOR_FLAG = 0x8
# The largest central entry of a site file: zipfile adds at most a zip64 field of three values.
_CENTRAL_EXTRA_MAX = 4 + 3 * 8


@dataclass(frozen=True)
class Directory:
    """Where the end records place the central directory, checked against the file's size."""

    count: int
    offset: int
    size: int


def check_end(s: Site, rel: str, f: BinaryIO, expected: set[str], members_are: str, too_many: str) -> Directory | None:
    """The end records, as the build writes them: the end-of-central-directory record is the
    archive's last 22 bytes (no comment, nothing after it), for one disk; preceded by the zip64
    end record and its locator exactly when zipfile needs them (too many entries, or a central
    directory too large or too far); the central directory ending where they begin, and no
    larger than the site's files can make it. None, and a failure, if not."""

    def fail(message: str, expected: object, found: object) -> None:
        s.report.check(False, rel, message, expected, found)

    size = f.seek(0, 2)
    f.seek(max(0, size - _END.size - 0xFFFF))
    tail = f.read(_END.size + 0xFFFF)  # an end record and the longest comment it could have
    last = tail[-_END.size :]
    if len(last) < _END.size or last[:4] != b"PK\x05\x06" or last[-2:] != b"\0\0":
        at = tail.rfind(b"PK\x05\x06", 0, len(tail) - _END.size + 1)  # for the message only
        if at < 0:
            fail("not a readable ZIP archive", "a ZIP archive", "no end-of-central-directory record")
            return None
        after = len(tail) - at - _END.size
        what = f"{after} bytes after the end record"
        if int.from_bytes(tail[at + 20 : at + 22], "little") == after:
            what = f"a ZIP comment of {after} bytes"
        fail("the archive does not end with its end-of-central-directory record", "nothing after it", what)
        return None
    _, disk, cd_disk, on_disk, count, cd_size, cd_offset, _ = _END.unpack(last)
    end_at = size - _END.size
    if (disk, cd_disk, on_disk) != (0, 0, count):
        fail("an archive split over disks", "one disk", f"disks {disk} and {cd_disk}, {on_disk} of {count} entries")
        return None
    cd_end = end_at
    f.seek(max(0, end_at - _LOCATOR64.size))
    locator = f.read(_LOCATOR64.size) if end_at >= _LOCATOR64.size + _END64.size else b""
    zip64 = locator[:4] == b"PK\x06\x07"
    if zip64:
        _, disk64, end64_at, disks = _LOCATOR64.unpack(locator)
        cd_end = end_at - _LOCATOR64.size - _END64.size
        f.seek(cd_end)
        rec = _END64.unpack(f.read(_END64.size))
        if (disk64, end64_at, disks) != (0, cd_end, 1) or rec[0] != b"PK\x06\x06" or rec[1] != _END64.size - 12:
            fail("a zip64 end record not as zipfile writes it", f"a zip64 end record at {cd_end}", "another")
            return None
        if (rec[4], rec[5], rec[6]) != (0, 0, rec[7]):
            fail("an archive split over disks", "one disk", f"disks {rec[4]} and {rec[5]}")
            return None
        small = (min(rec[7], 0xFFFF), min(rec[8], 0xFFFFFFFF), min(rec[9], 0xFFFFFFFF))
        if (count, cd_size, cd_offset) != small:
            fail("the end record disagrees with the zip64 end record", small, (count, cd_size, cd_offset))
            return None
        count, cd_size, cd_offset = rec[7], rec[8], rec[9]
    needed = count > zipfile.ZIP_FILECOUNT_LIMIT or max(cd_size, cd_offset) > zipfile.ZIP64_LIMIT
    if zip64 != needed:
        fail("zip64 end records where the build writes none, or none where it does", needed, zip64)
        return None
    if count > len(expected):
        # More members than files cannot be right; naming each of a million would be no help.
        fail(
            too_many,
            f"{len(expected)} members: {members_are}",
            f"{count} members",
        )
        return None
    if cd_offset + cd_size != cd_end:
        fail(
            "the central directory is not where the end record places it (bytes added before it or inside it)",
            f"{cd_size} bytes ending at offset {cd_end}",
            f"{cd_size} bytes from offset {cd_offset}, ending at {cd_offset + cd_size}",
        )
        return None
    largest = sum(46 + len(p.encode()) + _CENTRAL_EXTRA_MAX for p in expected)
    if cd_size > largest:
        fail("a central directory larger than the site's files make it", f"at most {largest} bytes", cd_size)
        return None
    return Directory(count, cd_offset, cd_size)


def check_layout(
    s: Site, rel: str, f: BinaryIO, infos: list[zipfile.ZipInfo], where: Directory
) -> dict[int, tuple[int, int]] | None:
    """The members as the build lays them out: local entries back to back from offset 0 in the
    order of the central directory, each header agreeing with its central entry, no data
    descriptor, no extra field but zip64's, and the central directory right after the last.
    Only headers are read; a data size is trusted only to find the next header, which must lie
    before the central directory. The first discrepancy is reported, where the walk stops.
    Returns where each member's data lies (offset, size) by the offset of its header, which
    the walk saw to be each member's own, if the layout is the build's."""
    pos = 0
    data_at: dict[int, tuple[int, int]] = {}
    for info in infos:
        name = info.orig_filename
        at = f"member {name}" if is_safe_path(name) else f"member {show(name)}"
        problem = _local_problem(f, info, pos)
        if isinstance(problem, str):
            s.report.check(False, rel, problem, "the archive as the build writes it", where=at)
            return None
        data_at[info.header_offset] = (problem - info.compress_size, info.compress_size)
        pos = problem
        if pos > where.offset:
            s.report.check(False, rel, "member data running into the central directory", where.offset, pos, where=at)
            return None
    if not s.report.check(
        pos == where.offset,
        rel,
        "bytes between the last member and the central directory, which lists none there (a hidden entry?)",
        f"the central directory at offset {pos}",
        f"{where.offset - pos} bytes more",
    ):
        return None
    return data_at


def _local_problem(f: BinaryIO, info: zipfile.ZipInfo, pos: int) -> str | int:
    """What is wrong with the local entry of `info`, expected at `pos`; or where the next begins."""
    if info.header_offset != pos:
        if info.header_offset > pos:
            return f"{info.header_offset - pos} bytes at offset {pos} that no central entry lists (a hidden entry?)"
        return f"a local header at offset {info.header_offset}, inside the entry before it; expected at {pos}"
    if info.comment or info.volume or not _only_zip64(info.extra):
        return "a central entry with a comment, another disk or an extra field the build does not write"
    f.seek(pos)
    head = f.read(_LOCAL.size)
    if len(head) < _LOCAL.size or head[:4] != b"PK\x03\x04":
        return f"no local header at offset {pos}, where the central directory places it"
    _, _, flags, method, time, date, crc, csize, usize, name_len, extra_len = _LOCAL.unpack(head)
    name, extra = f.read(name_len), f.read(extra_len)
    when = ((date >> 9) + 1980, (date >> 5) & 0xF, date & 0x1F, time >> 11, (time >> 5) & 0x3F, (time & 0x1F) * 2)
    raw_name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    if len(extra) != extra_len or not _only_zip64(extra):
        return "a local header with an extra field the build does not write"
    sizes = _local_sizes(usize, csize, extra)
    ours = (name, flags, method, when, crc, sizes)
    theirs = (
        raw_name,
        info.flag_bits,
        info.compress_type,
        info.date_time,
        info.CRC,
        (info.file_size, info.compress_size),
    )
    for what, a, b in zip(("name", "flags", "method", "time", "CRC-32", "sizes"), ours, theirs, strict=True):
        if a != b:
            return f"the local header's {what} ({a!r}) differs from the central directory's ({b!r})"
    if flags & _DESCRIPTOR_FLAG:
        return "a data descriptor after the member, which the build does not write"
    return int(pos + _LOCAL.size + name_len + extra_len + info.compress_size)


def _only_zip64(extra: bytes) -> bool:
    """Whether an extra field holds nothing but one zip64 record, all zipfile writes there."""
    return not extra or (extra[:2] == _ZIP64_EXTRA.to_bytes(2, "little") and len(extra) == 4 + extra[2])


def _local_sizes(usize: int, csize: int, extra: bytes) -> tuple[int, int]:
    """A local header's sizes, from its zip64 record (both, in that order) where they say 0xFFFFFFFF."""
    if usize == csize == 0xFFFFFFFF and len(extra) == 20:
        usize, csize = struct.unpack_from("<QQ", extra, 4)
    return usize, csize
