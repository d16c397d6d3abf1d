"""Writing the site: every file once, inside the staging directory, hashed as it is written.

The build writes into a staging directory beside the output (generator.build.staging) and swaps it
in only when the whole site is written and has passed its own verification, so a failed build
leaves the last good site untouched and a reader never sees half a release. The staging
directory is a fresh folder, or the spare release: the one before the last, most of whose files
are the last release's own (hard links), which the writer keeps where they are the very file the
release takes, never writing through one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from generator.build.previous_release import PreviousRelease
from generator.core import layout
from generator.core.cleanup import Cleanup
from generator.core.generator_errors import TransparencyError
from generator.core.signing_key import Signer
from generator.verifier import identity_of, is_safe_path, known_value, sha256_hex

# Written by `finish`, which lists every other file: not in SiteWriter.hashes.
_NOT_IN_HASHES = frozenset({layout.SUMS, layout.SUMS_SIG})


def prune_unlisted(root: str, listed: Collection[str], folders: Container[str] | None = None) -> int:
    """Remove from the folder `root` every file and folder that is not one of the paths `listed`
    (nor SHA256SUMS and its signature), nor a folder holding one (`folders`, by default found from
    `listed`), without following a link; the number removed."""
    if folders is None:
        folders = _folders_of(listed)
    removed = 0

    def walk(folder: str, path: str) -> None:
        nonlocal removed
        with os.scandir(path) as it:
            entries = list(it)
        for e in entries:
            rel = f"{folder}/{e.name}" if folder else e.name
            if e.is_dir(follow_symlinks=False):
                if rel in folders:
                    walk(rel, e.path)
                else:  # no file of this release under it
                    shutil.rmtree(e.path)
                    removed += 1
            elif rel not in listed and rel not in _NOT_IN_HASHES:
                os.unlink(e.path)
                removed += 1

    walk("", root)
    return removed


def _folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder on the way to each of `paths`, the site's own ("") included."""
    folders = {""}
    for leaf in {rel.rpartition("/")[0] for rel in paths}:
        while leaf not in folders:
            folders.add(leaf)
            leaf = leaf.rpartition("/")[0]
    return folders


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
        reused: bool = False,
    ) -> None:
        self.root = root
        # The folder holds the spare release (generator.build.staging.Staging): what the writer
        # finds at a path is removed before it writes there, and kept only where it is the last
        # release's very file it takes; what this release does not list is removed (`prune`).
        self.reused = reused
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
        # SHA256SUMS and its signature, as `finish` wrote them (they are not in `hashes`, which
        # they list): what the steps after the swap bind their records to, whatever the
        # published folder holds by then.
        self.finished: dict[str, str] = {}
        self.pruned_by_listing = False  # `prune` took the spare's listing instead of walking the folder
        self._device: int | None = None
        umask = os.umask(0)
        os.umask(umask)
        self._mode = 0o666 & ~umask  # what a file written now gets: a linked one must have it too
        self._dir_mode = 0o777 & ~umask  # and a folder made now

    def _target(self, rel: str) -> str:
        """The path to write `rel` at, its folders made and nothing there."""
        return self._place(rel, None)[0]

    def _place(self, rel: str, keep: os.stat_result | None) -> tuple[str, bool]:
        """The path for `rel`, its folders made; and whether the file there is already `keep`
        (the last release's file, in a reused folder), else nothing is there."""
        # Strings, not Path objects: a release takes tens of thousands of files, and making a
        # Path of each cost more than linking it.
        self._check_new(rel)
        folder, _, _ = rel.rpartition("/")
        path = f"{self._root}/{rel}"
        if folder not in self._dirs:
            if self.reused:
                self._reuse_folders(folder)
            else:
                # A safe path (no '..', not absolute) under a folder only this build creates, which
                # holds no link, cannot lead outside it: no need to resolve each of 100,000 folders.
                parent = f"{self._root}/{folder}" if folder else self._root
                os.makedirs(parent, exist_ok=True)
                if os.path.islink(parent):
                    raise OutputPathError(f"refusing to write {rel}: its folder is a link")
                self._dirs.add(folder)
        if not self.reused:
            return path, False
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return path, False
        if keep is not None and stat.S_ISREG(st.st_mode) and (st.st_ino, st.st_dev) == (keep.st_ino, keep.st_dev):
            return path, True
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)  # never written through: it may be a file the published site holds
        return path, False

    def _check_new(self, rel: str) -> None:
        if not is_safe_path(rel):
            raise OutputPathError(f"refusing to write {rel!r}: not a safe site-relative path")
        if rel in self.hashes:
            raise OutputPathError(f"refusing to write {rel} twice: two records map to one path")

    def _reuse_folders(self, folder: str) -> None:
        """In a reused folder, each folder on the way to `folder`, looked at once: a folder with
        the mode a new one gets, where anything else (a file, a link) is replaced by one."""
        done = ""
        for part in folder.split("/") if folder else ():
            done = f"{done}/{part}" if done else part
            if done in self._dirs:
                continue
            path = f"{self._root}/{done}"
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                os.mkdir(path)
            else:
                if not stat.S_ISDIR(st.st_mode):
                    os.unlink(path)
                    os.mkdir(path)
                elif stat.S_IMODE(st.st_mode) != self._dir_mode:
                    os.chmod(path, self._dir_mode)
            self._dirs.add(done)
        self._dirs.add(folder)

    def prune(self, spare: Iterable[str] | None = None) -> int:
        """In a reused folder, remove what this release does not list (and the folders it no
        longer holds); the number of files and folders removed. Called once the release is
        written. With `spare`, every path the spare release listed (generator.state.listing_cache):
        only those this release does not list are looked at, not every file of the folder
        (`pruned_by_listing`); whatever else the folder holds, put there by someone, the build
        finds by counting the site (`expected`) and removes by `prune_unlisted`."""
        if not self.reused:
            return 0
        if spare is None:
            # The folders holding the release's files, not every folder made: a take that failed
            # may have made one that stayed empty.
            return prune_unlisted(self._root, self.hashes)
        self.pruned_by_listing = True
        removed = 0
        for rel in spare:
            if rel in self.hashes or rel in _NOT_IN_HASHES or rel in self._dirs or not is_safe_path(rel):
                continue  # a file or folder of this release
            # The highest folder on its way that this release does not hold goes whole: every
            # folder above it is one `_reuse_folders` made sure is a folder, so no link is followed.
            # Where a folder on its way is now a file of this release, the spare's folder is gone.
            target = self._prune_target(rel)
            if target is None:
                continue
            path = f"{self._root}/{target}"
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed += 1
        return removed

    def _prune_target(self, rel: str) -> str | None:
        """What to remove for a path the spare listed and this release does not: the path, or the
        highest folder on its way that this release does not hold; None where a folder on its
        way is now a file of this release (the spare's folder went when that file was written)."""
        for i, c in enumerate(rel):
            if c != "/":
                continue
            folder = rel[:i]
            if folder in self.hashes or folder in _NOT_IN_HASHES:
                return None
            if folder not in self._dirs:
                return folder
        return rel

    def expected(self) -> tuple[int, int]:
        """How many files and folders the release holds: its files, and the folders on their way
        (not the folders the writer made, one of which a take that failed may have left empty)."""
        return len(self.hashes) + len(_NOT_IN_HASHES), len(_folders_of(self.hashes)) - 1

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
        if self._take_there(rel, digest):
            return True
        st = self._look_previous(rel)
        if st is None:
            return False
        recorded = self.recorded(f"site/{rel}", st)
        if recorded is not None and recorded != digest:
            return False
        return self._link_looked(rel, digest, st, recorded)

    def _there(self, rel: str, digest: str) -> os.stat_result | None:
        """In a reused folder, the file already at `rel`, if it is one the last build recorded
        at that path of the site with `digest`, untouched since (most of the spare release's
        files are the last release's own): kept on this one look, with no look at the last
        release's file and no link. Its folders are made first, as for any file written there:
        a link or file in their place would lead the look elsewhere."""
        if not self.reused:
            return None
        self._check_new(rel)
        folder = rel.rpartition("/")[0]
        if folder not in self._dirs:
            self._reuse_folders(folder)
        st = self._regular(f"{self._root}/{rel}")
        return st if st is not None and self.recorded(f"site/{rel}", st) == digest else None

    def _take_there(self, rel: str, digest: str) -> bool:
        st = self._there(rel, digest)
        if st is None:
            return False
        self._taken(rel, digest, st)
        return True

    def _taken(self, rel: str, digest: str, st: os.stat_result) -> None:
        """`rel` is the file `st` describes, known to hold the bytes whose SHA-256 is `digest`."""
        value = known_value(digest, identity_of(st))
        if value is not None:  # else the build's check hashes it
            self.carried[rel] = value
        self.hashes[rel] = digest
        self.linked += 1

    def _dev(self) -> int:
        # The device the last release's files are on: an inode number means a file only there.
        if self._device is None:
            assert self.previous is not None
            self._device = os.lstat(self.previous.folder).st_dev
        return self._device

    def _link_looked(self, rel: str, digest: str, st: os.stat_result, recorded: str | None) -> bool:
        """`link_previous` once the last release's file has been looked at (`st`, a regular file
        with a new file's mode) and the hash index asked (`recorded`, its SHA-256 there, if any)."""
        assert self.previous is not None
        previous = self.previous.file_name(rel)
        try:
            path, there = self._place(rel, st)
            if not there:
                os.link(previous, path)
        except OSError:
            return False
        if recorded is not None:
            # Not written since the last build hashed it (hash_index_cache.py): linked as it is,
            # if the link is still that file (the link changes only its change time); a write
            # between the look and the link sends it to the hashing below. A file the reused
            # folder already held is the one just looked at (the same inode): no second look.
            after = st if there else os.lstat(path)
            if (after.st_mode, after.st_size, after.st_mtime_ns, after.st_ino) == (
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            ):
                self._taken(rel, digest, after)
                return True
        # The link is hashed, not the published path: what is hashed is the file this release
        # holds. Its identity before and after hashing is the same or it changed meanwhile (the
        # published path is the same file): then, or with other bytes, the file is written anew.
        try:
            looked = os.lstat(path)
            if not stat.S_ISREG(looked.st_mode) or stat.S_IMODE(looked.st_mode) != self._mode:
                raise OSError("not a regular file with a new file's mode")  # changed since the look
            before = identity_of(looked)
            with open(path, "rb") as f:
                same = hashlib.file_digest(f, "sha256").hexdigest() == digest
            same = same and identity_of(os.lstat(path)) == before
        except OSError:
            same = False
        if not same:
            os.unlink(path)
            return False
        self._taken(rel, digest, looked)
        return True

    def vouched(self, rel: str) -> str | None:
        """The SHA-256 the last release lists for `rel`, if its file is the one the last build
        recorded with that SHA-256 (hash_index_cache), untouched since, with the mode a file
        written now gets: known without reading it."""
        looked = self._vouched_look(rel)
        return looked[0] if looked is not None else None

    def _vouched_look(self, rel: str) -> tuple[str, os.stat_result] | None:
        """`vouched`, with the look at the last release's file it was decided on: the file its
        callers read (a take looks at the spare's first, `_there`)."""
        digest = self.previous.digest(rel) if self.previous is not None and self.previous.reuse else None
        st = self._look_previous(rel) if digest is not None else None
        if digest is None or st is None:
            return None
        return (digest, st) if self.recorded(f"site/{rel}", st) == digest else None

    def _regular(self, path: str) -> os.stat_result | None:
        """The file at `path`, looked at, if it is a regular file with the mode a file written now
        gets, on the last release's device."""
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != self._mode or st.st_dev != self._dev():
            return None
        return st

    def _look_previous(self, rel: str) -> os.stat_result | None:
        """The last release's file for `rel`, looked at: a regular file with the mode a file
        written now gets (a linked one must have it too), else None."""
        assert self.previous is not None
        try:
            st = os.lstat(self.previous.file_name(rel))
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != self._mode:
            return None
        return st

    def take_vouched(self, rel: str) -> bool:
        """Take the last release's file for `rel` as it is, if `vouched` (never read); where it
        cannot be linked, a copy of its bytes, if they still have that SHA-256."""
        listed = self.previous.digest(rel) if self.previous is not None and self.previous.reuse else None
        if listed is not None and self._take_there(rel, listed):
            return True
        looked = self._vouched_look(rel)
        if looked is None or self.previous is None:
            return False
        digest, st = looked
        if self._link_looked(rel, digest, st, digest):
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
        if self.previous is None or not self.previous.reuse:
            return False
        # A file the spare release already holds as the last build recorded it is kept on that one
        # look (`_there`); any other is looked at in the last release, and linked below.
        there: list[tuple[str, str, os.stat_result]] = []
        linked: list[tuple[str, str, os.stat_result]] = []
        for rel in rels:
            digest = self.previous.digest(rel)
            if digest is None or digests.get(rel, digest) != digest:
                return False
            st = self._there(rel, digest)
            if st is not None:
                there.append((rel, digest, st))
                continue
            looked = self._vouched_look(rel)
            if looked is None or looked[0] != digest:
                return False
            linked.append((rel, digest, looked[1]))
        taken: list[str] = []
        for rel, digest, st in linked:
            # Linked on the look just taken: a change since sends it to hashing, as link_previous says.
            if not self._link_looked(rel, digest, st, digest):
                for t in taken:  # changed between the look and the link: written whole, below
                    self._forget(t)
                return False
            taken.append(rel)
        for rel, digest, st in there:
            self._taken(rel, digest, st)
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
        # "x": a new file, never one that is there already (a link would be written through);
        # `_target` clears the place, as for every other file.
        signature = signer.sign(data)
        with open(self._target(layout.SUMS), "xb") as f:
            f.write(data)
        with open(self._target(layout.SUMS_SIG), "xb") as f:
            f.write(signature)
        self.finished = {layout.SUMS: sha256_hex(data), layout.SUMS_SIG: sha256_hex(signature)}
