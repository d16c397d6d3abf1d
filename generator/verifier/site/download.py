"""The site's downloadable copy (format v2): `download/site.zip`, every file of the site outside
`download/`, with a checksum list of its own, so that the unpacked copy is a site that verifies
alone.

The site's SHA256SUMS lists the archive, so the archive cannot hold that list. It holds the same
list without the lines of `download/` instead, under the same name, signed by the same key: the
archive's SHA-256 is signed by the site's list, and each member by the archive's. An archive is
hostile input like every file of a site: it is read in place and never extracted, and a member
is accepted only under a name that is exactly one of the site's files, declaring that file's
size and reading back to its SHA-256, so no name leaves the folder it is unpacked into and no
member inflates beyond the file it copies. Its layout is checked as strictly as the build
writes it, since unpackers differ in what they read: one that walks the local headers in order
would unpack an entry the central directory hides, so no byte may lie outside the members the
central directory lists, and each local header must agree with its central entry.
"""

import hashlib
import io
import stat
import zipfile
import zlib
from collections.abc import Callable
from typing import BinaryIO

from generator.verifier.core.checksum_tree import list_path, part_path
from generator.verifier.core.folder import SUMS_PATH, SUMS_SIG_PATH, Site
from generator.verifier.core.formats import is_safe_path
from generator.verifier.core.public_keys import ed25519_verify, fingerprint
from generator.verifier.core.report import Report
from generator.verifier.core.text import show
from generator.verifier.memory.release_memory import Memory
from generator.verifier.site.release import Listing
from generator.verifier.site.zip_layout import check_end, check_layout

DOWNLOAD_DIR = "download"
ARCHIVE_PATH = f"{DOWNLOAD_DIR}/site.zip"
# The archive's `sha256sum -c` line, for a reader who downloaded the archive alone.
ARCHIVE_SUMS_PATH = f"{ARCHIVE_PATH}.sha256"
ARCHIVE_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# A member's external attributes: the Unix mode the build writes in the high 16 bits and no
# MS-DOS bits, or nothing at all (the unpacker's default for a new file). Any other permission
# (setuid, setgid, sticky, executable, writable by others) would be restored by the unpacker.
MEMBER_MODE = stat.S_IFREG | 0o644
MEMBER_ATTRIBUTES = (MEMBER_MODE << 16, 0)
SIGNATURE_BYTES = 64
_CHUNK = 1 << 20
# What zipfile raises on a damaged or hostile archive; anything else is a bug of this verifier.
# (UnicodeDecodeError, a ValueError, is a name flagged UTF-8 that is not.)
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError)


def in_download(rel: str) -> bool:
    """Whether a site path lies in the download folder, which the archive does not hold."""
    return rel.startswith(f"{DOWNLOAD_DIR}/")


def archive_sums(listed: dict[str, str]) -> bytes:
    """The checksum list the archive holds: the site's lines (path to SHA-256) outside
    `download/`, in SHA256SUMS form and order."""
    paths = sorted((p for p in listed if not in_download(p)), key=lambda p: p.encode())
    return "".join(f"{listed[p]}  {p}\n" for p in paths).encode()


def archive_sums_line(sha256: str) -> bytes:
    """download/site.zip.sha256: `sha256sum -c` checks the archive with it in its own folder."""
    return f"{sha256}  {ARCHIVE_PATH.rsplit('/', 1)[1]}\n".encode()


def check_download(s: Site, key: bytes, sums: Listing, memory: Memory | None = None) -> None:
    """The archive, if the site has one (it is optional): its checksum line, and its members
    exactly the files SHA256SUMS lists outside `download/`, each with the listed SHA-256, and
    the archive's own checksum list signed by `key`. `sums` is SHA256SUMS as read and compared
    with the files, the archive's bytes included.

    Each discrepancy is reported once, where it is: nothing is compared with a SHA256SUMS whose
    signature failed, nor a member with a site file that differs from its line. With a `memory`
    (generator/verifier/memory/release_memory.py), a member whose compressed bytes were read back before to
    the SHA-256 now listed is not inflated again: its compressed bytes are hashed instead."""
    report = s.report
    listed = sums.files
    if sums.leaves is not None:
        _check_parts(s, sums, memory)
        return
    if ARCHIVE_PATH not in listed:
        if ARCHIVE_SUMS_PATH in listed:
            report.check(False, ARCHIVE_SUMS_PATH, "the archive's checksum is published without the archive")
        return
    line = s.read(ARCHIVE_SUMS_PATH, "checksum line of the archive")
    if line is not None:
        want = archive_sums_line(listed[ARCHIVE_PATH])
        report.check(
            line == want,
            ARCHIVE_SUMS_PATH,
            f"does not give the archive's SHA-256 that {SUMS_PATH} lists",
            show(want.decode()),
            show(line.decode("utf-8", "replace")),
        )
    if not sums.signed:
        report.notes.append(f"{ARCHIVE_PATH} not checked: {SUMS_PATH}, which it restates, does not verify")
        return
    expected = _expected(listed)
    _check_archive(
        s,
        ARCHIVE_PATH,
        expected,
        f"the files {SUMS_PATH} lists outside {DOWNLOAD_DIR}/, with its own {SUMS_PATH} and {SUMS_SIG_PATH}",
        "the archive holds more members than the site has files",
        lambda zf, known: _check_members(s, ARCHIVE_PATH, zf, sums, expected, known, (key, archive_sums(listed))),
        memory,
    )


def _check_parts(s: Site, sums: Listing, memory: Memory | None) -> None:
    """A v3 site's download parts (docs/formats/v3.md, 6): each leaf's part, if the tree lists
    one, holds exactly the leaf's files and its list, as v2's archive holds the site's."""
    if sums.leaves is None:
        return
    known = 0
    for prefix, files in sorted(sums.leaves.items()):
        rel = part_path(prefix)
        if rel not in sums.files:
            continue  # the tree checks that every leaf has its part or none does
        if not sums.signed:
            s.report.notes.append(f"{rel} not checked: {SUMS_PATH}, which lists it, does not verify")
            continue
        # A leaf that lost a path to another list naming it too holds fewer files than its list
        # names: its part is checked again, whatever was remembered of it and its list.
        key = _part_key(sums, rel, list_path(prefix), memory) if prefix not in sums.doubled else None
        if key is not None and memory is not None and memory.check_known("parts", key):
            s.report.checks += 1
            known += 1
            continue
        failures = len(s.report.failures)
        expected = {*files, list_path(prefix)}
        _check_archive(
            s,
            rel,
            expected,
            f"the files of leaf {prefix} and its list {list_path(prefix)}",
            "the part holds more members than its leaf has files, with its list",
            # Called before the loop moves on: `rel` and `expected` are this leaf's.
            lambda zf, known: _check_members(s, rel, zf, sums, expected, known),  # noqa: B023
            memory,
            sums.files[rel],
        )
        if key is not None and memory is not None and len(s.report.failures) == failures:
            memory.check_passed("parts", key)
    if known:
        s.report.notes.append(
            f"{known} download part(s) not read again: each, and its leaf's list, has the SHA-256 of a part and "
            "list checked together before"
        )


def _part_key(sums: Listing, rel: str, list_rel: str, memory: Memory | None) -> str | None:
    """The memory's key of a part and its leaf's list, when both have the SHA-256 listed (hashed
    in this run, or known to be unchanged since they were)."""
    if memory is None or rel not in sums.matched or list_rel not in sums.matched:
        return None
    return memory.part_key(rel, sums.files[rel], list_rel, sums.files[list_rel])


def _check_archive(
    s: Site,
    rel: str,
    expected: set[str],
    members_are: str,
    too_many: str,
    check_members: Callable[[zipfile.ZipFile, "_Known | None"], None],
    memory: Memory | None,
    listed_sha256: str = "",
) -> None:
    """An archive read in place: its end records, its central directory, its layout, then its
    members; with a memory and the SHA-256 its list gives (a v3 part), read whole and held to it."""
    report = s.report
    f: BinaryIO | None
    if memory is not None and listed_sha256:
        # What this run remembers of a v3 part (by its listed SHA-256) must be of the bytes it
        # checked: read once, hashed, and checked from memory (a leaf's files, a few MiB at
        # most). v2's archive, gigabytes, is streamed: its memory is of the bytes read.
        data = s.read(rel, "archive")
        if data is None:
            return
        digest = hashlib.sha256(data).hexdigest()
        if digest != listed_sha256:  # counted where the file was hashed: only a change fails here
            report.check(False, rel, "the archive changed while it was being checked", listed_sha256, digest)
            return
        f = io.BytesIO(data)
    else:
        f = s.open(rel, "archive")
    if f is None:
        return
    with f:
        # Before zipfile reads the central directory: the end records say how large it is.
        where = check_end(s, rel, f, expected, members_are, too_many)
        if where is None:
            return
        try:
            zf = zipfile.ZipFile(f)
        except _UNREADABLE as e:
            report.check(False, rel, "not a readable ZIP archive", "a ZIP archive", f"{type(e).__name__}: {e}")
            return
        with zf:
            infos = zf.infolist()
            if not report.check(
                len(infos) == where.count,
                rel,
                "the end-of-central-directory record counts other entries than the central directory holds",
                f"{len(infos)} entries",
                f"{where.count} entries",
            ):
                return
            data_at = check_layout(s, rel, f, infos, where)
            check_members(zf, _Known(f, data_at, memory) if memory and data_at else None)


def _expected(listed: dict[str, str]) -> set[str]:
    return {p for p in listed if not in_download(p)} | {SUMS_PATH, SUMS_SIG_PATH}


class _Known:
    """What the verifier's memory knows of members: compressed bytes already read back to the
    SHA-256 their file is listed with."""

    def __init__(self, f: BinaryIO, data_at: dict[int, tuple[int, int]], memory: Memory) -> None:
        self.f, self.data_at, self.memory = f, data_at, memory

    def key(self, info: zipfile.ZipInfo, listed: str) -> str | None:
        """The memory's key of the member's compressed bytes read back to `listed`."""
        at = self.data_at.get(info.header_offset)
        if at is None:
            return None
        h = hashlib.sha256()
        self.f.seek(at[0])
        left = at[1]
        while left > 0 and (chunk := self.f.read(min(_CHUNK, left))):
            h.update(chunk)
            left -= len(chunk)
        if left:
            return None
        return self.memory.member_key(info.compress_type, info.CRC, info.file_size, h.hexdigest(), listed)


def _check_members(
    s: Site,
    rel: str,
    zf: zipfile.ZipFile,
    listing: Listing,
    expected: set[str],
    known: _Known | None = None,
    own_sums: tuple[bytes, bytes] | None = None,
) -> None:
    """Each member of archive `rel` against the site's file of its name (`expected`, each listed
    in `listing`). `own_sums` (the key, and the list it must hold): v2's archive, which holds its
    own SHA256SUMS and signature instead of the site's."""
    report = s.report
    listed = listing.files
    sums = own_sums[1] if own_sums is not None else b""
    infos = zf.infolist()  # no more than the site has files: _check_end saw to it
    seen: set[str] = set()
    sums_member: bytes | None = None
    sig_member: bytes | None = None
    for info in infos:
        name = info.orig_filename  # before zipfile cuts it at a NUL or turns separators round
        where = f"member {name}" if is_safe_path(name) else f"member {show(name)}"
        s.current = rel
        if not _member_named_well(report, rel, info, seen, expected, where):
            continue
        own = own_sums is not None and name in (SUMS_PATH, SUMS_SIG_PATH)
        if not own and name not in listing.matched:
            continue  # the site's file is missing or differs from its line: reported there
        size = (len(sums) if name == SUMS_PATH else SIGNATURE_BYTES) if own else s.file_size(name)
        if size is None:
            report.check(False, rel, f"{where}: the site's file is gone since it was hashed", "the file", "nothing")
            continue
        if not _plain(s, rel, info, size, where):
            continue
        if own:
            data = _read_member(s, rel, zf, info, where, keep=True)
            if name == SUMS_PATH:
                sums_member = data
            else:
                sig_member = data
            continue
        remembered = known.key(info, listed[name]) if known is not None else None
        if remembered is not None and known is not None and known.memory.check_known("members", remembered):
            report.checks += 1
            continue
        digest = _read_member(s, rel, zf, info, where)
        if digest is None:
            continue
        same_bytes = report.check(
            digest.decode() == listed[name],
            rel,
            f"member differs from the site's file (SHA-256 from {SUMS_PATH if own_sums else 'its leaf list'})",
            listed[name],
            digest.decode(),
            where=where,
        )
        if same_bytes and remembered is not None and known is not None:
            known.memory.check_passed("members", remembered)
    for name in sorted(expected - seen, key=lambda p: p.encode()):
        report.check(False, rel, "a file of the site is missing from the archive", name, "nothing")
    if sums_member is not None and own_sums is not None:
        _check_archive_sums(report, own_sums[0], sums, sums_member, sig_member)


def _member_named_well(
    report: Report, rel: str, info: zipfile.ZipInfo, seen: set[str], expected: set[str], where: str
) -> bool:
    """Whether a member's name is one to read: its first time in the archive, safe to unpack,
    and a file of the site the archive holds. `seen` gathers the names met."""
    name = info.orig_filename
    if name in seen:
        report.check(False, rel, "the archive holds a member twice", "each file once", where=where)
        return False
    seen.add(name)
    if not is_safe_path(name) or name != info.filename:
        report.check(
            False,
            rel,
            "member with an unsafe name, which unpacking could write outside its folder",
            "a relative path with '/', no '..', no empty segment, backslash or control character",
            show(name),
            where=where,
        )
        return False
    if name not in expected:
        report.check(
            False,
            rel,
            f"member that is not a file of the site (not in {SUMS_PATH}, or in {DOWNLOAD_DIR}/)"
            if rel == ARCHIVE_PATH
            else "member that is not a file of the part's leaf, nor its list (docs/formats/v3.md, 6)",
            "only the site's files" if rel == ARCHIVE_PATH else "only the leaf's files and its list",
            "an extra member",
            where=where,
        )
        return False
    return True


def _check_archive_sums(report: Report, key: bytes, sums: bytes, sums_member: bytes, sig_member: bytes | None) -> None:
    """The archive's own SHA256SUMS (the site's without its download lines) and its signature."""
    report.check(
        sums_member == sums,
        ARCHIVE_PATH,
        f"the archive's {SUMS_PATH} is not the site's without its {DOWNLOAD_DIR}/ lines",
        f"{len(sums)} bytes, SHA-256 {hashlib.sha256(sums).hexdigest()}",
        f"{len(sums_member)} bytes, SHA-256 {hashlib.sha256(sums_member).hexdigest()}",
        where=f"member {SUMS_PATH}",
    )
    if sig_member is not None:
        report.check(
            ed25519_verify(key, sig_member, sums_member),
            ARCHIVE_PATH,
            f"the archive's {SUMS_SIG_PATH} is not a valid signature of its {SUMS_PATH} by the site key",
            f"an Ed25519 signature by {fingerprint(key)}",
            f"{len(sig_member)} bytes that are not",
            where=f"member {SUMS_SIG_PATH}",
        )


def _plain(s: Site, rel: str, info: zipfile.ZipInfo, size: int, where: str) -> bool:
    """A member this verifier reads: a regular file, unencrypted, stored or deflated, declaring
    the size of the file it copies (so reading it can never inflate beyond that)."""
    mode = info.external_attr >> 16
    problem = None
    if info.flag_bits & 0x1:
        problem = ("an encrypted member", "no encryption")
    elif info.compress_type not in ARCHIVE_METHODS:
        problem = (f"compression method {info.compress_type}", "stored (0) or deflated (8)")
    elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):
        problem = (f"file type {stat.S_IFMT(mode):o} (a link or a device when unpacked)", "a regular file")
    elif info.external_attr not in MEMBER_ATTRIBUTES:
        # Unpackers restore these bits: Info-ZIP makes 0106777 a world-writable setuid file.
        problem = (
            f"mode {mode:o}, attributes {info.external_attr & 0xFFFF:#x}",
            f"mode {MEMBER_MODE:o} (a regular file, rw-r--r--, as the build writes it) or no attributes at all",
        )
    elif info.file_size != size:
        problem = (f"{info.file_size} bytes declared", f"{size} bytes, the size of the site's file")
    if problem is not None:
        s.report.check(False, rel, "member the site's file cannot be", problem[1], problem[0], where=where)
    return problem is None


def _read_member(
    s: Site, rel: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, keep: bool = False
) -> bytes | None:
    """A member's SHA-256 (hex, as bytes) or, with `keep`, its bytes; read in chunks, never more
    than it declares (zipfile stops there and checks the CRC-32). None, and a failure, if it
    cannot be read."""
    h = hashlib.sha256()
    kept: list[bytes] = []
    try:
        with zf.open(info) as m:
            while chunk := m.read(_CHUNK):
                h.update(chunk)
                if keep:
                    kept.append(chunk)
    except _UNREADABLE as e:
        s.report.check(False, rel, "member cannot be read", "a readable member", f"{type(e).__name__}: {e}", where)
        return None
    return b"".join(kept) if keep else h.hexdigest().encode()
