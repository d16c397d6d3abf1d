"""A site's folder: the only code of the verifier that reads files.

`Site` is how every check reaches the site: by the paths the documents name, never following
a link or leaving the folder, each failure to read reported against the file.
"""

import contextlib
import hashlib
import operator
import os
import stat
import struct
import time
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from generator.verifier.core.canonical import parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.formats import PYTHON_CODE_SUFFIXES, is_safe_path
from generator.verifier.core.isolation import interpreter_folder_in, own_file
from generator.verifier.core.public_keys import ed25519_verify, fingerprint
from generator.verifier.core.report import Report
from generator.verifier.core.text import show

MANIFEST_PATH = "transparency.json"
SUMS_PATH = "SHA256SUMS"
SUMS_SIG_PATH = "SHA256SUMS.sig"
# A site's deepest path (certificates/<serial>/details/<item>.json) is four levels down; a
# folder far deeper is refused where it is, instead of being walked until Python gives up.
MAX_SITE_DEPTH = 32

Identity = tuple[int, int, int, int]  # a file's size, mtime_ns, ctime_ns and inode
IDENTITY = struct.Struct("<qqqQ")
# Files whose SHA-256 the caller knows: path -> known_value(SHA-256, the identity the file had
# when hashed), 64 bytes: a mirror's record of 300,000 files is held while it verifies, and a
# tuple of a hex string and four integers costs five times as much.
KnownHashes = Mapping[str, bytes]
# A folder as a walk found it (memory/folder_memory.py): its identity (IDENTITY packed), the names
# of its regular files and of its folders, each joined by "/" (which no name holds).
FolderSeen = tuple[bytes, str, str]


def known_value(sha256_hex: str, identity: Identity) -> bytes | None:
    """A file's SHA-256 (64 hex digits) and identity as one value of KnownHashes; None when the
    identity does not fit (a time past 2262, an inode over 64 bits): such a file is hashed."""
    try:
        return bytes.fromhex(sha256_hex) + IDENTITY.pack(*identity)
    except struct.error:
        return None


def known_sha256(value: bytes) -> str:
    return value[:32].hex()


def known_identity(value: bytes) -> Identity:
    size, mtime, ctime, inode = IDENTITY.unpack_from(value, 32)
    return size, mtime, ctime, inode


def known_still(value: bytes, st: os.stat_result) -> bool:
    """Whether the file `st` describes has the identity `value` records."""
    try:
        return value[32:] == IDENTITY.pack(*identity_of(st))
    except struct.error:
        return False


def identity_of(st: os.stat_result) -> Identity:
    """What changes when a file is written or replaced: its ctime cannot be set back (utime sets
    only mtime), and a replaced file has another inode."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _folder_identity(path: str) -> tuple[bytes, int] | None:
    """A folder's identity as folder_memory records it, and the later of its modification and
    change times; None if it is no folder now."""
    try:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            return None
        return IDENTITY.pack(*identity_of(st)), max(st.st_mtime_ns, st.st_ctime_ns)
    except (OSError, struct.error):
        return None


# Timestamps come from a coarse clock (a kernel tick, 1 to 10 ms): a folder changed twice within
# one tick keeps its first change time. A folder is recorded only if it last changed more than
# this before the walk began, so that any change after its reading gives it another identity.
FOLDER_TICK_NS = 20_000_000


_NAME = operator.attrgetter("name")  # a folder's entries in name order, so the report's order is fixed


class Site:
    """A site folder, read only through the paths its documents name."""

    def __init__(self, root: Path, report: Report, known: KnownHashes | None = None, known_now: bool = False) -> None:
        self.root = root
        # SHA-256es `verify.py mirror` computed of the files it wrote (memory/mirror_record.py
        # says why they may be trusted), each used only while the file keeps its identity; the
        # paths whose hash was taken from there, for the report.
        self.known: KnownHashes = known or {}
        self.known_used: set[str] = set()
        # Whether the caller looked at every file of `known` in this very run (the mirror, which
        # has just checked each one's identity or written it): its values are then taken as they
        # are, without a second lstat of each of 300,000 files a moment later.
        self.known_now = known_now
        self.resolved = root.resolve()
        self.report = report
        self.current = MANIFEST_PATH  # the file being checked, for an internal error's report
        self._folders: dict[str, bool] = {}  # folder -> no link on its way down from the root
        # A virtual environment the auditor made inside the site's folder and runs this verifier
        # from: not the site's, so the walk skips it (and says so); SHA256SUMS listing a file in it
        # is a failure of its own (release.check_sums).
        self.environment = interpreter_folder_in(str(root))
        # Every regular file the walk of the whole site found (release.check_sums walks it once):
        # what accounting.py holds against the files the site's documents account for.
        self.files_found: set[str] = set()
        # Files hashed once already in this run, by path (the checksum lists taken from the
        # verifier's memory, hashed before the tree is trusted): release.check_files takes these.
        self.hashed_now: dict[str, str] = {}
        # What the last walk of this folder found in each plain folder (memory/folder_memory.py),
        # if the caller keeps that; and what this walk finds, for the caller to keep.
        self.folders: Mapping[str, FolderSeen] | None = None
        self.folders_seen: dict[str, FolderSeen] = {}
        self.folders_taken = 0  # folders the walk took from `folders` instead of reading them
        self.folders_settled_before: int | None = None  # tests only: else the walk's start, less a tick

    def path(self, rel: Any, what: str) -> Path | None:
        """The file a document's path names, or None (and a failure) if unsafe or missing."""
        if not is_safe_path(rel):
            self.report.check(
                False,
                MANIFEST_PATH,
                f"{what}: unsafe or malformed path",
                "a relative path with '/', no '..'",
                show(rel),
            )
            return None
        self.current = rel
        p = self.root / rel
        # No component inside the site may be a link (each folder looked at once, however many
        # files it holds), and the path has no '..': then it cannot leave the site.
        real = p
        try:
            if os.name == "nt":  # junctions are not links to lstat there: resolve each path
                real = p.resolve()
                inside = real.is_relative_to(self.resolved) and not any(
                    q.is_symlink() for q in (p, *p.parents) if q.is_relative_to(self.root) and q != self.root
                )
                is_file = p.is_file()
            else:
                st = os.lstat(p)
                inside = self._link_free(rel.rpartition("/")[0]) and not stat.S_ISLNK(st.st_mode)
                is_file = stat.S_ISREG(st.st_mode)
        except FileNotFoundError:
            inside, is_file = self._link_free(rel.rpartition("/")[0]), False
        except (OSError, RuntimeError):  # a link loop, a name too long, a permission
            inside = is_file = False
        if not inside:
            with contextlib.suppress(OSError, RuntimeError):  # only to say where it leads
                real = p.resolve()
            self.report.check(
                False,
                rel,
                f"{what}: the path leaves the site or passes through a link",
                "a regular file inside the site",
                str(real),
            )
            return None
        if not is_file:
            self.report.check(False, rel, f"{what}: the file is missing", "a regular file", "nothing")
            return None
        return p

    def _link_free(self, rel_dir: str) -> bool:
        """Whether no component of folder `rel_dir` (inside the site) is a link; one that does
        not exist is none (the file under it is then missing)."""
        ok = True
        folder = ""
        for part in rel_dir.split("/") if rel_dir else ():
            folder = f"{folder}/{part}" if folder else part
            known = self._folders.get(folder)
            if known is None:
                try:
                    known = not stat.S_ISLNK(os.lstat(self.root / folder).st_mode)
                except FileNotFoundError:
                    known = True
                except OSError:
                    known = False
                known = known and ok
                self._folders[folder] = known
            ok = known
        return ok

    def read(self, rel: Any, what: str) -> bytes | None:
        p = self.path(rel, what)
        if p is None:
            return None
        try:
            return p.read_bytes()
        except OSError as e:
            self.report.check(False, str(rel), f"{what}: cannot be read", "a readable file", e.strerror or str(e))
            return None

    def document(self, rel: Any, what: str) -> tuple[bytes, Any] | None:
        """Read and parse a canonical JSON document; None (and a failure) if it is not one."""
        data = self.read(rel, what)
        if data is None:
            return None
        try:
            value = parse_canonical(data)
        except FormatError as e:
            self.report.check(False, str(rel), f"{what}: {e}")
            return None
        self.report.checks += 1
        return data, value

    def signed(self, rel: str, data: bytes, key: bytes, what: str) -> bool:
        """Whether `rel`.sig is a valid detached signature of `data` by `key` (a failure if not)."""
        sig = self.read(rel + ".sig", f"signature of {what}")
        if sig is None:
            return False
        return self.report.check(
            ed25519_verify(key, sig, data),
            rel + ".sig",
            f"detached signature of {rel} does not verify with the site key",
            f"a valid Ed25519 signature by {fingerprint(key)} of the file's {len(data)} bytes",
            f"{len(sig)} bytes that are not",
        )

    def open(self, rel: str, what: str) -> BinaryIO | None:
        """A file to read in place (an archive), by the same rules as read()."""
        p = self.path(rel, what)
        if p is None:
            return None
        try:
            return p.open("rb")
        except OSError as e:
            self.report.check(False, rel, f"{what}: cannot be read", "a readable file", e.strerror or str(e))
            return None

    def file_size(self, rel: str) -> int | None:
        """The size of a file SHA256SUMS lists; None if it is not there (which that check reports)."""
        try:
            st = (self.root / rel).lstat()
        except OSError:
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def known_sha256(self, rel: str) -> str | None:
        """The SHA-256 the caller knows for `rel` (Site.known), if the file still has the
        identity it had when hashed; else None, and it must be read."""
        known = self.known.get(rel)
        if known is None:
            return None
        if not self.known_now:
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except OSError:
                return None
            if not stat.S_ISREG(st.st_mode) or not known_still(known, st):
                return None
        self.known_used.add(rel)
        return known_sha256(known)

    def known_sha256s(self, rels: Iterable[str]) -> dict[str, str]:
        """known_sha256 of each of `rels` it answers for, in one loop: when the caller looked at
        every file in this run (known_now), 300,000 of them cost no call a file."""
        if not self.known_now:
            return {rel: sha for rel in rels if (sha := self.known_sha256(rel)) is not None}
        known = self.known
        found = {rel: value[:32].hex() for rel in rels if (value := known.get(rel)) is not None}
        self.known_used.update(found)
        return found

    def file_sha256(self, rel: str) -> str:
        known = self.known_sha256(rel)
        return known if known is not None else self.hash_file(rel)

    def hash_file(self, rel: str) -> str:
        """The SHA-256 of the file's bytes, read now (never taken from Site.known)."""
        h = hashlib.sha256()
        with (self.root / rel).open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()

    def files(self, verifier: str) -> Iterator[str]:
        """Every regular file of the site, as a '/' path; failures for anything else found:
        links, devices, empty folders, Python code other than the verifier, folders nested
        deeper than MAX_SITE_DEPTH. An explicit stack rather than recursion (a folder 1,200
        levels deep is data, not a crash), and never a link followed.

        With `folders` (what the last walk of this folder found, memory/folder_memory.py), a
        folder whose identity is the one recorded is not read: its entries are the ones it held
        then. Every plain folder the walk meets, read or taken, is in `folders_seen` after it."""
        remembered, seen, root = self.folders, self.folders_seen, os.fspath(self.root)
        settled = self.folders_settled_before
        if settled is None and remembered is not None:  # the clock is read for the mirror's record only
            settled = time.time_ns() - FOLDER_TICK_NS
        env = self.environment
        stack: list[tuple[str, int]] = [("", 0)]
        while stack:
            rel_dir, depth = stack.pop()
            prefix = f"{rel_dir}/" if rel_dir else ""
            # Taken before the folder is read; no trailing slash, with which lstat follows a link.
            looked = _folder_identity(f"{root}/{rel_dir}" if rel_dir else root) if remembered is not None else None
            identity = looked[0] if looked is not None else None
            kept = remembered.get(rel_dir) if remembered is not None and identity is not None else None
            # A folder holding the environment running the verifier is read: that entry is skipped, with a note.
            holds_env = env is not None and env.rpartition("/")[0] == rel_dir
            if kept is not None and kept[0] == identity and rel_dir and not holds_env:
                seen[rel_dir] = kept
                self.folders_taken += 1
                if kept[1]:
                    yield from (prefix + name for name in kept[1].split("/"))
                if kept[2]:
                    stack.extend((prefix + name, depth + 1) for name in kept[2].split("/"))
                continue
            files: list[str] = []
            folders: list[str] = []
            plain = yield from self._read_entries(rel_dir, prefix, depth, verifier, files, folders)
            stack.extend((prefix + name, depth + 1) for name in folders)
            # Never the site's own folder (it holds the verifier, whose path the manifest names);
            # never one whose times are whole milliseconds (a coarse filesystem's), nor one
            # changed too lately to tell from a change to come.
            recordable = looked is not None and settled is not None and looked[1] % 1_000_000 and looked[1] < settled
            if plain and rel_dir and looked is not None and recordable and is_safe_path(rel_dir):
                seen[rel_dir] = (looked[0], "/".join(files), "/".join(folders))

    def _read_entries(
        self, rel_dir: str, prefix: str, depth: int, verifier: str, files: list[str], folders: list[str]
    ) -> Generator[str, None, bool]:
        """Yield the regular files of one folder, reading it; add the names of its files and
        of the folders to walk to `files` and `folders`. Whether it is plain: nothing in it
        reported, no Python code in it (the verifier's path may change), every name safe."""
        report = self.report
        try:
            with os.scandir(self.root / rel_dir if rel_dir else self.root) as it:
                entries = sorted(it, key=_NAME)
        except OSError as e:
            report.check(False, rel_dir or ".", "folder cannot be read", "a readable folder", e.strerror or str(e))
            return False
        if rel_dir and not entries:
            report.check(
                False,
                rel_dir,
                "the site holds an empty folder, which no SHA256SUMS line can list",
                "no empty folders",
                "an empty folder",
            )
            return False
        plain = True
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    plain = False
                    report.check(
                        False,
                        rel,
                        "the site holds a symbolic link",
                        "regular files and folders only",
                        f"a link to {os.readlink(entry.path)}",
                    )
                elif entry.is_dir(follow_symlinks=False):
                    if self._read_folder(rel, entry.name, depth + 1):
                        folders.append(entry.name)
                        plain = plain and entry.name.lower() != "__pycache__" and is_safe_path(rel)
                    else:
                        plain = False
                elif entry.is_file(follow_symlinks=False):
                    if entry.name.lower().endswith(PYTHON_CODE_SUFFIXES):
                        plain = False
                        if rel != verifier:
                            report.check(
                                False,
                                rel,
                                "the site holds Python code a verifier could be made to import",
                                "no Python code but the verifier",
                                "a Python file",
                            )
                    files.append(entry.name)
                    plain = plain and is_safe_path(rel)
                    yield rel
                else:
                    plain = False
                    report.check(
                        False,
                        rel,
                        "the site holds something that is neither a file nor a folder",
                        "regular files and folders only",
                        "a device, socket or pipe",
                    )
            except OSError as e:
                plain = False
                report.check(False, rel, "cannot be read", "a readable file or folder", e.strerror or str(e))
        return plain

    def _read_folder(self, rel: str, name: str, depth: int) -> bool:
        """Whether to read a folder of the site found `depth` levels down: not the environment
        running the verifier, nor one nested too deeply; a bytecode cache is read, and fails."""
        report = self.report
        if rel == self.environment:
            report.notes.append(
                f"{rel}/ was not read: it is the Python environment running this verifier "
                "(its sys.prefix), not a file of the site"
            )
            return False
        if name.lower() == "__pycache__":
            report.check(
                False,
                rel,
                "the site holds a Python bytecode cache",
                "no Python code but the verifier",
                "a __pycache__ folder",
            )
        if depth >= MAX_SITE_DEPTH:
            report.check(
                False,
                rel,
                "folder nested too deeply to be part of a site",
                f"at most {MAX_SITE_DEPTH} levels",
                "deeper (not read further)",
            )
            return False
        return True

    def own_verifier(self) -> bytes:
        """The bytes of the verify.py this code is (OSError if it cannot read itself)."""
        return Path(own_file()).read_bytes()
