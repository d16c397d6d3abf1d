"""The folder a mirror keeps (`verify.py mirror`, site/mirror.py): which files it already holds
with the bytes a list names, and how a run's new files replace the old ones, never through a link.

`LocalCopy.holds` answers from the mirror's record (memory/mirror_record.py) while a file keeps
the identity it had when the mirror hashed it, and hashes it again otherwise; `swap_in` removes
the files the mirror wrote that the site no longer lists, renames each new file into place, and
writes SHA256SUMS and its signature last, so that a copy interrupted before then still names its
old release's list (the next run finds the new files by their hashes).
"""

import hashlib
import os
import stat
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path

from generator.verifier.core.folder import IDENTITY, SUMS_PATH, SUMS_SIG_PATH, identity_of, known_value
from generator.verifier.core.formats import is_safe_path
from generator.verifier.core.windowed import windowed
from generator.verifier.memory.mirror_record import Written
from generator.verifier.site.release import SUMS_LINE_RE

INCOMING = ".mirror-incoming"  # the files of a run not yet swapped in, inside the mirror's folder
SUB_LIST_FOLDER = "sums/"
SUB_LIST_SUFFIX = ".sha256"


def is_sub_list(rel: str) -> bool:
    """Whether a listed path is itself a list of further files (v3's `sums/<p>.sha256`)."""
    return rel.startswith(SUB_LIST_FOLDER) and rel.endswith(SUB_LIST_SUFFIX)


class LocalCopy:
    """The mirror's folder as it is: what the record says the mirror wrote, checked by identity."""

    def __init__(self, root: Path, record: dict[str, Written]) -> None:
        self.root = root
        self.root_name = os.fspath(root)  # asked once a file: a Path's string is made on each use
        self.record = record
        self.written: dict[str, Written] = {}  # what the folder holds now, as far as this run knows
        # Files held as listed whose identity a record cannot hold (a time past 2262): by SHA-256,
        # for this run only; the next hashes them again.
        self.unrecorded: dict[str, str] = {}
        # folder -> neither it nor a folder above it is a link: asked once a folder, not once a
        # file for each folder above it.
        self.link_free: dict[str, bool] = {}
        self.refuted: set[str] = set()  # files the record vouched for whose bytes, read, were others

    def _answers(self, names: Iterable[str], files: Mapping[str, str]) -> dict[str, bool | None]:
        """Whether the folder holds each of `names` with its SHA-256 in `files`, as far as this
        run knows it or the file's lstat (and whether a folder above it is a link) tells: True
        when known so, or when the record names that SHA-256 and the file kept the identity it
        had then (and `written` says so from now on); False when it is known with other bytes,
        the record names other bytes, or there is no regular file there to read (missing, a
        link, under a link, unreadable); None when only hashing the file can tell.

        One loop for every file of a run: most files are answered by one lstat and the record,
        and at 300,000 files a call or two a file more cost a second."""
        written, unrecorded, record, refuted = self.written, self.unrecorded, self.record, self.refuted
        root, lstat, is_regular, pack = self.root_name, os.lstat, stat.S_ISREG, IDENTITY.pack
        answers: dict[str, bool | None] = {}
        folder, free = None, True  # names come folder by folder: asked once a folder
        for rel in names:
            digest = files[rel]
            known = written.get(rel)
            if known is not None:
                answers[rel] = known[:32].hex() == digest
                continue
            if rel in unrecorded:
                answers[rel] = unrecorded[rel] == digest
                continue
            parent = rel.rpartition("/")[0]
            if parent != folder:
                folder, free = parent, self._link_free(parent)
            try:
                st = lstat(f"{root}/{rel}") if free else None
            except OSError:
                st = None
            if st is None or not is_regular(st.st_mode):
                answers[rel] = False
                continue
            known = record.get(rel)
            try:
                # Unchanged since the mirror hashed it: the record says what it holds.
                still = known is not None and known[32:] == pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            except struct.error:  # a time past 2262: never recorded so
                still = False
            if known is None or not still or rel in refuted:
                answers[rel] = None
                continue
            same = known[:32].hex() == digest
            if same:
                written[rel] = known
            answers[rel] = same
        return answers

    def _hashed(self, rel: str, digest: str) -> bool:
        """Whether the regular file `rel` (the record could not answer for it) has SHA-256
        `digest`, hashed now."""
        path = self.root / rel
        try:
            with path.open("rb") as f:
                found = hashlib.file_digest(f, "sha256").hexdigest()
            st = path.lstat()
        except OSError:
            return False
        if found != digest:
            return False
        value = known_value(found, identity_of(st))
        if value is None:
            self.unrecorded[rel] = found
        else:
            self.written[rel] = value
        return True

    def _link_free(self, folder: str) -> bool:
        """Whether no folder on the way to `folder` (itself included) is a link; "" is the root."""
        free = self.link_free.get(folder)
        if free is not None:  # asked before: the answer for nearly every file
            return free
        chain = []  # the folders not yet asked, deepest first, up to one asked or the root
        while folder and folder not in self.link_free:
            chain.append(folder)
            folder = folder.rpartition("/")[0]
        free = self.link_free.get(folder, True) if folder else True
        for f in reversed(chain):
            if free:
                try:  # a string path: 60,000 folders at the full scale
                    free = not stat.S_ISLNK(os.lstat(f"{self.root_name}/{f}").st_mode)
                except OSError:  # missing, or it cannot be asked: it holds nothing
                    free = False
            self.link_free[f] = free
        return free

    def _answered(self, rel: str, digest: str) -> bool | None:
        """As `holds`, without hashing: None when only hashing the file can tell."""
        return self._answers((rel,), {rel: digest})[rel]

    def forget(self, rel: str) -> None:
        """`rel` is no longer known to be held (removed, or its bytes found to be others)."""
        self.written.pop(rel, None)
        self.unrecorded.pop(rel, None)

    def holds(self, rel: str, digest: str) -> bool:
        """Whether the folder holds `rel` with SHA-256 `digest`: known so this run, recorded so
        and unchanged since, or hashed now. A link, or a path through one, holds nothing."""
        answer = self._answered(rel, digest)
        return answer if answer is not None else self._hashed(rel, digest)

    def read_if_recorded(self, rel: str, digest: str) -> bytes | None:
        """The bytes of a list the record says the folder holds with this SHA-256 (no file is
        hashed to decide whether to read it; the bytes read are checked), else None."""
        if self._answered(rel, digest) is not True:
            return None
        return self._read(rel, digest)

    def read_if_held(self, rel: str, digest: str) -> bytes | None:
        """The bytes of a list the folder already holds with this SHA-256, else None."""
        if not self.holds(rel, digest):
            return None
        return self._read(rel, digest)

    def _read(self, rel: str, digest: str) -> bytes | None:
        """The file's bytes if they have the SHA-256 `digest`, else None; and then the record no
        longer answers for it in this run (it vouched for bytes the file does not have): the file
        is hashed if asked about again, and so fetched and written in its place."""
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            self.forget(rel)
            self.refuted.add(rel)
            return None
        return data

    def plan(self, files: dict[str, str], jobs: int) -> list[str]:
        """The listed files to fetch (in path order): those the folder does not hold as listed."""
        names = sorted(files)  # paths read from UTF-8, whose byte order is their code points' order
        # Most files are answered by one lstat and the record, here: handing each of them to a
        # thread costs more in the pool's locks than the lstat. Only the files to hash go to the
        # threads.
        answers = self._answers(names, files)
        unsure = [rel for rel in names if answers[rel] is None]
        answers.update(zip(unsure, windowed(lambda rel: self._hashed(rel, files[rel]), unsure, jobs), strict=True))
        todo = [rel for rel in names if not answers[rel]]
        # A file held as an earlier try's list said, which this list changed, is no longer held:
        # the new bytes fetched replace it (swap_in keeps only what is still held).
        for rel in todo:
            self.forget(rel)
        return todo

    def previously_written(self) -> set[str]:
        """The files an earlier run wrote: the record's, or with no record, those the lists in the
        folder name (the lists the mirror itself wrote last)."""
        if self.record:
            return set(self.record)
        found: set[str] = set()
        todo = [SUMS_PATH]
        while todo and len(found) < 1 << 24:
            rel = todo.pop()
            try:
                text = (self.root / rel).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for line in text.split("\n"):
                m = SUMS_LINE_RE.fullmatch(line)
                if m and is_safe_path(m.group(2)) and m.group(2) not in found:
                    found.add(m.group(2))
                    if is_sub_list(m.group(2)):
                        todo.append(m.group(2))
        return found


def parents_of(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def swap_in(
    folder: Path,
    local: LocalCopy,
    files: dict[str, str],
    staged: dict[tuple[str, str], tuple[Path, int]],
    sums: bytes,
    signature: bytes,
) -> int:
    """Everything arrived as listed: remove what the mirror wrote and the site no longer lists,
    rename the new files into place, the signed list last. Returns how many files were removed."""
    removed = 0
    for rel in sorted(local.previously_written() - set(files)):
        # The record's paths are checked here, where one is used as a path, not at each reading.
        if is_safe_path(rel) and _remove(folder, rel):
            removed += 1
        local.forget(rel)
    for rel in sorted(files):
        if rel in local.written or rel in local.unrecorded:
            continue
        source, _ = staged[(rel, files[rel])]
        target = _prepare(folder, rel)
        os.replace(source, target)
        value = known_value(files[rel], identity_of(target.lstat()))
        if value is not None:
            local.written[rel] = value
    for rel, data in ((SUMS_SIG_PATH, signature), (SUMS_PATH, sums)):
        temp = folder / INCOMING / f"{rel}.part"
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, _prepare(folder, rel))
    _sync_folder(folder)
    return removed


def _prepare(folder: Path, rel: str) -> Path:
    """The path `rel` names in the folder, its parent folders made; a link on the way, or a file
    where a folder must be, is refused: the mirror writes inside its folder only."""
    for parent in parents_of(rel):
        p = folder / parent
        try:
            st = p.lstat()
        except FileNotFoundError:
            p.mkdir()
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{p}: a link or a file where the mirror needs a folder for {rel}; move it away")
    target = folder / rel
    if target.is_symlink() or target.is_dir():
        raise OSError(f"{target}: a link or a folder where the mirror writes the file {rel}; move it away")
    return target


def _remove(folder: Path, rel: str) -> bool:
    """Remove a file the mirror wrote, and the folders it leaves empty; never a link's target."""
    if any((folder / p).is_symlink() for p in parents_of(rel)):
        return False
    path = folder / rel
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        path.unlink()
    except OSError:
        return False
    for parent in reversed(parents_of(rel)):
        try:
            (folder / parent).rmdir()
        except OSError:
            break  # not empty
    return True


def _sync_folder(folder: Path) -> None:
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
