"""Writing the site: every file once, inside the staging directory, hashed as it is written.

The build writes into a fresh staging directory beside the output and swaps it in only when
the whole site is written and has passed its own verification, so a failed build leaves the
last good site untouched and a reader never sees half a release.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from generator.build.previous_release import PreviousRelease
from generator.core import layout
from generator.core.cleanup import Cleanup
from generator.core.generator_errors import TransparencyError
from generator.core.signing_key import Signer
from generator.verifier import identity_of, is_safe_path, known_value, sha256_hex


class OutputPathError(TransparencyError):
    """A path that would escape the site or be written twice: a bug or hostile data, never both files."""


class SiteWriter:
    """Writes a release into `root`. With `previous` (the last release, generator.build.previous_release),
    a file whose bytes are those the last release published under the same path is that file,
    hard-linked: a release rewrites only what changed, and a mirror syncing it copies only that."""

    def __init__(
        self,
        root: Path,
        previous: PreviousRelease | None = None,
        cleanup: Cleanup | None = None,
        recorded: Callable[[str, os.stat_result], str | None] | None = None,
    ) -> None:
        self.root = root
        # The last build's record of files' SHA-256 by identity (generator.state.hash_index_cache),
        # as place ("site/<path>"), lstat -> SHA-256 or None: a file of the last release it
        # vouches for is taken without being read.
        self.recorded = recorded or (lambda place, st: None)
        self.cleanup = cleanup or Cleanup()  # removes what the build made and no longer needs
        self.hashes: dict[str, str] = {}
        self._root = os.fspath(root)
        self._dirs: set[str] = set()  # folders made so far, as site paths
        self.previous = previous
        self.linked = 0
        # The files taken from the last release, each with the SHA-256 it was read to have just
        # before it was linked and the identity it has since: the build's own check of the
        # release hashes the files this build wrote, and these only if they changed since.
        self.carried: dict[str, bytes] = {}  # known_value(SHA-256, identity), as the verifier takes them
        umask = os.umask(0)
        os.umask(umask)
        self._mode = 0o666 & ~umask  # what a file written now gets: a linked one must have it too

    def _target(self, rel: str) -> str:
        # Strings, not Path objects: a release takes tens of thousands of files, and making a
        # Path of each cost more than linking it.
        if not is_safe_path(rel):
            raise OutputPathError(f"refusing to write {rel!r}: not a safe site-relative path")
        if rel in self.hashes:
            raise OutputPathError(f"refusing to write {rel} twice: two records map to one path")
        folder, _, _ = rel.rpartition("/")
        path = f"{self._root}/{rel}"
        if folder not in self._dirs:
            # A safe path (no '..', not absolute) under a folder only this build creates, which
            # holds no link, cannot lead outside it: no need to resolve each of 100,000 folders.
            parent = f"{self._root}/{folder}" if folder else self._root
            os.makedirs(parent, exist_ok=True)
            if os.path.islink(parent):
                raise OutputPathError(f"refusing to write {rel}: its folder is a link")
            self._dirs.add(folder)
        return path

    def write(self, rel: str, data: bytes) -> None:
        digest = sha256_hex(data)
        if self.previous is not None and self.previous.digest(rel) == digest and self.link_previous(rel, digest):
            return
        path = self._target(rel)
        with open(path, "xb") as f:
            f.write(data)
        self.hashes[rel] = digest

    def link_previous(self, rel: str, digest: str) -> bool:
        """Take the last release's file for `rel` as it is (a hard link), if it still holds the
        bytes whose SHA-256 is `digest`: a page the memo says is unchanged is not rendered again,
        and a file someone edited in the published folder is never carried into the next."""
        if self.previous is None or not self.previous.reuse:
            return False
        previous = self.previous.file_name(rel)
        try:
            st = os.lstat(previous)
            if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != self._mode:
                return False
            recorded = self.recorded(f"site/{rel}", st)
            if recorded is not None and recorded != digest:
                return False
            path = self._target(rel)
            os.link(previous, path)
        except OSError:
            return False
        if recorded is not None:
            # Not written since the last build hashed it (hash_index_cache.py): linked as it is,
            # if the link is still that file (the link changes only its change time); a write
            # between the look and the link sends it to the hashing below.
            after = os.lstat(path)
            if (after.st_mode, after.st_size, after.st_mtime_ns, after.st_ino) == (
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            ):
                value = known_value(digest, identity_of(after))
                if value is not None:  # else the build's check hashes it
                    self.carried[rel] = value
                self.hashes[rel] = digest
                self.linked += 1
                return True
        # The link is hashed, not the published path: what is hashed is the file this release
        # holds. Its identity before and after hashing is the same or it changed meanwhile (the
        # published path is the same file): then, or with other bytes, the file is written anew.
        try:
            before = identity_of(os.lstat(path))
            with open(path, "rb") as f:
                same = hashlib.file_digest(f, "sha256").hexdigest() == digest
            same = same and identity_of(os.lstat(path)) == before
        except OSError:
            same = False
        if not same:
            os.unlink(path)
            return False
        value = known_value(digest, before)
        if value is not None:
            self.carried[rel] = value
        self.hashes[rel] = digest
        self.linked += 1
        return True

    def vouched(self, rel: str) -> str | None:
        """The SHA-256 the last release lists for `rel`, if its file is the one the last build
        recorded with that SHA-256 (hash_index_cache), untouched since, with the mode a file
        written now gets: known without reading it."""
        digest = self.previous.digest(rel) if self.previous is not None and self.previous.reuse else None
        if digest is None or self.previous is None:
            return None
        try:
            st = os.lstat(self.previous.file_name(rel))
        except OSError:
            return None
        if stat.S_IMODE(st.st_mode) != self._mode:
            return None
        return digest if self.recorded(f"site/{rel}", st) == digest else None

    def take_vouched(self, rel: str) -> bool:
        """Take the last release's file for `rel` as it is, if `vouched` (never read); where it
        cannot be linked, a copy of its bytes, if they still have that SHA-256."""
        digest = self.vouched(rel)
        if digest is None or self.previous is None:
            return False
        if self.link_previous(rel, digest):
            return True
        try:
            data = self.previous.file(rel).read_bytes()
        except OSError:
            return False
        if sha256_hex(data) != digest or rel in self.hashes:
            return False
        self.write(rel, data)
        return True

    def take_unchanged(self, rels: Sequence[str], digests: Mapping[str, str]) -> bool:
        """Take every file of `rels` from the last release as it is, unread (each `vouched`,
        and the one of `digests` names with that SHA-256 too), or none of them: a certificate
        whose files and page are all unchanged is not read again, and one that is not is
        written whole, each of its files once."""
        found = [self.vouched(rel) for rel in rels]
        if any(d is None or digests.get(rel, d) != d for rel, d in zip(rels, found, strict=True)):
            return False
        taken: list[str] = []
        for rel, digest in zip(rels, found, strict=True):
            assert digest is not None
            if not self.link_previous(rel, digest):
                for t in taken:  # changed between the look and the link: written whole, below
                    self._forget(t)
                return False
            taken.append(rel)
        return True

    def _forget(self, rel: str) -> None:
        os.unlink(f"{self._root}/{rel}")
        del self.hashes[rel]
        self.carried.pop(rel, None)
        self.linked -= 1

    def write_stream(self, rel: str, chunks: Iterable[bytes]) -> Path:
        """Write a large file piece by piece, hashing as it goes; return its path."""
        path = self._target(rel)
        h = hashlib.sha256()
        with open(path, "xb") as f:
            for chunk in chunks:
                f.write(chunk)
                h.update(chunk)
        self.hashes[rel] = h.hexdigest()
        return Path(path)

    def write_signed_stream(self, rel: str, chunks: Iterable[bytes], signer: Signer) -> None:
        """A large signed file: Ed25519 needs the whole message, so it is read back once to sign,
        never held twice."""
        path = self.write_stream(rel, chunks)
        self.write(layout.sig(rel), signer.sign(path.read_bytes()))

    def write_file(self, rel: str, fill: Callable[[BinaryIO], None]) -> str:
        """A file made by code that needs a real, seekable file (a ZIP archive completes each
        member's header after its data), hashed by reading it back once; returns its SHA-256."""
        path = self._target(rel)
        with open(path, "xb") as f:
            fill(f)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        self.hashes[rel] = h.hexdigest()
        return self.hashes[rel]

    def write_text(self, rel: str, text: str) -> None:
        self.write(rel, text.encode("utf-8"))

    def write_signed(self, rel: str, data: bytes, signer: Signer) -> None:
        self.write(rel, data)
        self.write(layout.sig(rel), signer.sign(data))

    def finish(self, signer: Signer, data: bytes | None = None) -> None:
        """Write SHA256SUMS and sign it: `data` (a v3 site's root list), or by default a line for
        every file written, sorted by the UTF-8 bytes of the path."""
        if data is None:
            lines = [f"{self.hashes[p]}  {p}\n" for p in sorted(self.hashes, key=lambda p: p.encode())]
            data = "".join(lines).encode()
        # "x": a new file, never one that is there already (a link would be written through).
        with open(self.root / layout.SUMS, "xb") as f:
            f.write(data)
        with open(self.root / layout.SUMS_SIG, "xb") as f:
            f.write(signer.sign(data))


def is_replaceable_site(out: Path) -> bool:
    """Only an empty directory or a site we built may be replaced wholesale."""
    if not out.exists():
        return True
    if not out.is_dir() or out.is_symlink():
        return False
    if not any(out.iterdir()):
        return True
    try:
        manifest = json.loads((out / layout.MANIFEST).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("type") == "transparency-manifest"


def _leftovers(out: Path) -> list[Path]:
    return sorted(
        p
        for p in out.parent.glob(f".{out.name}.*-*")
        if p.name.startswith((f".{out.name}.staging-", f".{out.name}.old-"))
    )


def remove_leftovers(out: Path) -> list[Path]:
    """Remove what killed builds left beside `out`: staging folders (a full site each) and old
    copies of a swap. A folder whose build is still running holds a lock on it and is kept.
    If a kill fell between the two renames of a swap, `out` is missing and its old copy is put
    back first."""
    removed = []
    for p in _leftovers(out):
        if not p.is_dir() or p.is_symlink():
            continue
        fd = os.open(p, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # another build is writing it
            if not out.exists() and p.name.startswith(f".{out.name}.old-") and is_replaceable_site(p):
                os.rename(p, out)
                continue
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
        finally:
            os.close(fd)
    return removed


class Staging:
    """A fresh staging folder beside `out`, locked for as long as the build runs."""

    def __init__(self, out: Path) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
        self._fd = os.open(self.path, os.O_RDONLY)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def leave_lock_to_parent(self) -> None:
        """In a process forked from the build: close this copy of the lock's descriptor, so that
        the lock lives and dies with the build's own process (a build killed outright frees its
        staging folder for the next build to remove at once, while its writing process is still
        being killed with it), and is not released here (a lock lives while any descriptor of it
        is open)."""
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        self.close()


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one atomic step (Linux renameat2); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return bool(renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)


def swap_in(staging: Path, out: Path, cleanup: Cleanup) -> None:
    """Replace `out` with `staging`. Readers see the old site or the new one, never neither: one
    atomic exchange where the system offers it, else two renames; the old copy, under a
    leftover's name, is then removed by `cleanup`, in the background."""
    os.chmod(staging, 0o755)  # mkdtemp creates 0700; a published site is world-readable
    if out.exists() and not out.is_symlink() and _exchange(staging, out):
        cleanup.remove(staging)  # now holds the previous site
        return
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rmdir(old)
        os.rename(out, old)  # a kill here leaves no `out`: remove_leftovers puts `old` back
        try:
            os.rename(staging, out)
        except OSError:
            os.rename(old, out)
            raise
        cleanup.remove(old)
    else:
        os.rename(staging, out)
