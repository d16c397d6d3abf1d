"""A build with nothing to do: the inputs are the bytes the last build read, and the output
folder is, byte for byte, the release it published.

A build is a pure function of its inputs: every file of the data and private directories (the
caches aside, and the private stores no build reads: the item sources, the sealed store and the
certificates' private documents, whose public part `commit`, `certify` and `retire` put in the
data directory), the code that renders them (`digest.rules_version`, and the version of every
installed library), SOURCE_DATE_EPOCH and `--offline`. After a build publishes, it records the
digest of those inputs as it read them (with the checkpoints it then archived in the data
directory added) and the digest of the site it swapped in: every path, mode and SHA-256. The
next build computes both again, reading every input and every published byte; when both match,
building again would write those very bytes, so it writes nothing. Anything else (one input
byte, a file added to or taken from the site, a mode, another library, no record) is a build.

The record also holds, when it can be trusted, one digest of every input's and published
file's identity (size, times, inode: `unchanged_by_identity`), so that a build after nothing
at all tells so from a look at each file, as Git does, and reads no byte; anything else
decides by reading, as above.

The record is a shortcut like the other caches: a missing or unreadable one costs a build. A
build killed after it swapped its site in, before its record, leaves the last build's record,
which no longer matches the site: it costs a build too.
What it cannot know is a witness's answer, so a build that would ask witnesses over the
network (a policy, and not `--offline`) is never skipped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import json
import operator
import os
import re
import stat
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.core.digest import rules_version
from generator.core.layout import BESIDE_OUTPUT_KINDS
from generator.program.datadir import Paths
from generator.state.cache_file import write_cache
from generator.state.hash_index_cache import FileRows, HashIndex, IdentityRows, identity_row, save_index
from generator.verifier import known_still

RECORD_NAME = "build.json"
_VERSION = 5

# The folders of the private directory no build reads: the item sources, the sealed store, and
# the certificates' private documents (a build publishes the copies in the data directory).
UNREAD_PRIVATE = ("items", "sealed", "certificates")


def record_path(paths: Paths) -> Path:
    return paths.private / "cache" / RECORD_NAME


@dataclass
class Inputs:
    """What a build read, and what else its output depends on. A million-item program has
    hundreds of thousands of input files, and this is held for the whole build: so the files
    are kept as two digests of their rows in walk order (place, mode and SHA-256; place and
    identity), and only the checkpoints folder, to which the build itself adds, row by row."""

    outside: str | None  # None: not all plain files and folders, or unreadable
    setting: str
    checkpoints: str = ""  # the checkpoints folder's place among the inputs
    inside: dict[str, tuple[int, str]] = field(default_factory=dict)  # the checkpoints folder's rows
    added: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Each entry's identity and times when it was hashed, and how to look again: an input
    # edited while the build read it (and perhaps put back) must not be recorded as read.
    stats: _Look | None = None
    seen: tuple[str, dict[str, tuple[int, ...]]] = ("", {})
    # The filesystem's time just before the inputs were looked at (`_clock`), and their newest
    # time: an input written again within a tick of its reading keeps its times, so none may be
    # that recent for the identities to be recorded (`save`).
    read_mark: tuple[int, int] | None = None
    newest: int = 0
    # Each input's place, identity as hashed and SHA-256 (zeros for a folder): the hash index's
    # rows (hash_index_cache.py, which keeps the regular files'), recorded once the build
    # published and they are still as read.
    files: FileRows = field(default_factory=FileRows)

    def still_as_read(self) -> bool:
        if self.stats is None:
            return False
        try:
            return self.as_read(self.stats())
        except OSError:
            return False

    def as_read(self, looked: tuple[str, dict[str, tuple[int, ...]]]) -> bool:
        """Whether the inputs' identities `looked` at (`_identities`) are those they had when read."""
        outside, inside = looked
        ignore = set(self.added) | ({self.checkpoints} if self.checkpoints else set())
        return outside == self.seen[0] and {k: v for k, v in inside.items() if k not in ignore} == {
            k: v for k, v in self.seen[1].items() if k not in ignore
        }

    def archived(self, folder: Path, name: str, data: bytes) -> None:
        """The build archived a published checkpoint, `data`, as `name` in the checkpoints
        `folder`: the next build reads it, so it is an input of the record of this one."""
        if self.checkpoints:
            if self.outside is not None and self.checkpoints not in self.inside:
                self.added[self.checkpoints] = (os.lstat(folder).st_mode, "")  # made by this build
            mode = os.lstat(folder / name).st_mode
            self.added[f"{self.checkpoints}/{name}"] = (mode, hashlib.sha256(data).hexdigest())

    def digest(self) -> str | None:
        if self.outside is None:
            return None
        rows = {**self.inside, **self.added}
        return _digest(self.setting, [("", 0, self.outside), *((rel, *rows[rel]) for rel in sorted(rows))])


# The SHA-256 a folder's row carries, and a file's until it is hashed.
_NONE = "00" * 32


def _within(place: str, rel: str) -> bool:
    return bool(place) and (rel == place or rel.startswith(place + "/"))


@dataclass(frozen=True)
class _Places:
    """Where a build of `paths` into `out` reads its inputs: the data and private trees with
    what each leaves out, and the checkpoints folder's place among them."""

    trees: tuple[tuple[str, str, Callable[[str], bool]], ...]
    checkpoints: str
    layout: dict[str, object]

    def look(self) -> Iterator[tuple[str, os.stat_result, str]]:
        for base, label, skip in self.trees:
            if os.path.isdir(base):
                yield from _walk(base, f"{label}/", skip)


@dataclass(frozen=True)
class _Look:
    """Every input's identity, looked at again: by value, so that Inputs crosses from the
    process that wrote a release to the one that publishes it (generator.core.child_process)."""

    paths: Paths
    out: Path

    def __call__(self) -> tuple[str, dict[str, tuple[int, ...]]]:
        places = _places(self.paths, self.out)
        return _identities(((rel, identity_row(st)) for rel, st, _ in places.look()), places.checkpoints)


def _places(paths: Paths, out: Path) -> _Places:
    private = paths.private.resolve()
    data = paths.data.resolve()
    site = out.resolve()
    # The output, the staging, old and spare folders beside it, the caches the build itself rewrites,
    # and the private directory when it lies inside the data one (it is read on its own) are
    # not inputs of the data directory.
    skip = {str(private / "cache"), str(site)}
    inner = {str(private)} if private.is_relative_to(data) else set()
    # The private stores no build reads (a test builds without them and compares every byte):
    # at a million items the certificates' private documents alone are 260,000 files, which
    # every build walked twice.
    unread = {str(private / name) for name in UNREAD_PRIVATE}
    # Exactly the folders a build leaves beside its output (generator.build.writer), no others.
    beside = tuple(str(site.parent / f".{site.name}.{kind}-") for kind in BESIDE_OUTPUT_KINDS)
    parent = str(site.parent)

    def skipped(p: str) -> bool:  # called for every input: the cheap test first
        return p in skip or (p.startswith(beside) and os.path.dirname(p) == parent)

    trees = (
        (str(data), "data", lambda p: skipped(p) or p in inner),
        (str(private), "private", lambda p: skipped(p) or p in unread),
    )
    checkpoints = paths.checkpoints_dir.resolve()
    place = ""
    if checkpoints.is_relative_to(data) and not (inner and checkpoints.is_relative_to(private)):
        place = "data/" + checkpoints.relative_to(data).as_posix()
    layout: dict[str, object] = {
        "private": private.relative_to(data).as_posix() if private.is_relative_to(data) else None,
        "data in private": data.is_relative_to(private),
    }
    return _Places(trees, place, layout)


def read_inputs(paths: Paths, out: Path, offline: bool, index: HashIndex | None = None) -> Inputs:
    """Hash every input of a build of `paths` into `out`, under the ledger's lock (so that no
    command appends while they are read); an input whose identity `index` records is not read:
    its SHA-256 is the one recorded."""
    places = _places(paths, out)
    look, place = places.look, places.checkpoints
    outside: str | None
    inside: dict[str, tuple[int, str]] = {}
    seen: tuple[str, dict[str, tuple[int, ...]]] = ("", {})
    read_mark = _clock(paths)
    newest = 0
    files = FileRows()
    try:
        # One walk, before the bytes are read: an edit after it changes what save sees. Each
        # entry is kept as a flat row as it is walked (place, identity, SHA-256: zeros for a
        # folder, and for a file until it is hashed), never as the walk's objects: 350,000
        # `stat` results held at once were the build's largest peak before its gathering.
        known = index or HashIndex()
        regular: list[str] = []
        pending: list[int] = []
        for rel, st, path in look():
            newest = max(newest, st.st_ctime_ns, st.st_mtime_ns)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise _NotPlain
            sha = known.sha256(rel, st) if stat.S_ISREG(st.st_mode) else _NONE
            if sha is None:
                pending.append(len(files))
                regular.append(path)
            files.append(rel, identity_row(st), sha or _NONE)
        for at, digest in zip(pending, _hash_all(regular), strict=True):
            files.set_sha256(at, digest)
        del regular, pending
        h = hashlib.sha256()
        for rel, ident, sha in files:
            row = (ident[0], sha if stat.S_ISREG(ident[0]) else "")
            if _within(place, rel):
                inside[rel] = row
            else:
                h.update(f"{rel}\0{row[0]:o}\0{row[1]}\n".encode("utf-8", "surrogateescape"))
        outside, seen = h.hexdigest(), _identities(((rel, ident) for rel, ident, _ in files), place)
    except (OSError, _NotPlain):
        # The build itself reports what it cannot read; a link is read through, to a target
        # this record would not follow: either way, build.
        outside, inside, seen, files = None, {}, ("", {}), FileRows()
    return Inputs(
        outside,
        _setting(offline, places.layout),
        place,
        inside,
        stats=_Look(paths, out),
        seen=seen,
        read_mark=read_mark,
        newest=newest,
        files=files,
    )


def _identities(entries: Iterable[tuple[str, tuple[int, ...]]], place: str) -> tuple[str, dict[str, tuple[int, ...]]]:
    """Every entry's identity and times: one digest of those outside the checkpoints folder at
    `place`, in walk order, and those inside it by place (the build adds to it)."""
    h = hashlib.sha256()
    inside: dict[str, tuple[int, ...]] = {}
    for rel, ident in entries:
        if _within(place, rel):
            inside[rel] = ident
        else:
            h.update(f"{rel}\0{ident}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest(), inside


def site_digest(out: Path, known: Mapping[str, str] | None = None, walked: IdentityRows | None = None) -> str | None:
    """The digest of the site in `out`: every folder and file, its mode and its SHA-256 (taken
    from `known`, by path, for the files the build just wrote, else read); None if the folder
    holds anything else (a link, a device) or cannot be read. `walked`: the site's rows as
    `_identity_digest` found them, instead of a walk of its own."""
    root = str(out.resolve())
    try:
        if walked is None:
            walked = IdentityRows()
            for rel, st, _ in _walk(root, "site/"):
                walked.append(rel, identity_row(st))
    except OSError:
        return None
    places, modes = walked.places, walked.modes()
    if not all(stat.S_ISREG(m) or stat.S_ISDIR(m) for m in set(modes)):
        return None
    known = known or {}
    cut = len("site/")
    todo = [
        place[cut:]
        for place, mode in zip(places, modes, strict=True)
        if stat.S_ISREG(mode) and place[cut:] not in known
    ]
    try:
        hashed = dict(zip(todo, _hash_all(f"{root}/{rel}" for rel in todo), strict=True))
        own = os.stat(out).st_mode  # the folder's own mode: swap_in sets it
    except OSError:
        return None
    none = "0" * 64  # a folder's: no file's SHA-256
    # In blocks, not a line a file: the places, the modes, the SHA-256es (a string made as it
    # is joined: at a million items, no list of 330,000 of them beside it).
    h = hashlib.sha256(f"transparency build record v{_VERSION}\0site\0{own:o}\0{len(places)}\0".encode())
    h.update("\0".join(places).encode("utf-8", "surrogateescape"))
    h.update(b"\0" + modes.tobytes())
    shas = "".join(
        none if stat.S_ISDIR(mode) else known.get(place[cut:]) or hashed[place[cut:]]
        for place, mode in zip(places, modes, strict=True)
    )
    h.update(bytes.fromhex(shas))
    return h.hexdigest()


@dataclass(frozen=True)
class Published:
    """What a build said of the release it published, said again when nothing has changed."""

    files: int
    tree_size: int
    demo: bool
    fingerprint: str
    warnings: list[str]


def unchanged(paths: Paths, inputs: Inputs, out: Path) -> Published | None:
    """What the last build said when it read these very inputs and `out` is still the site it
    published; else None (build)."""
    digest = inputs.digest()
    try:
        doc = json.loads(record_path(paths).read_bytes())
        if digest is None or doc.get("v") != _VERSION or doc.get("inputs") != digest:
            return None
        said = _published(doc)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if said is None or site_digest(out) != doc.get("site"):
        return None
    return said


def save(
    paths: Paths,
    inputs: Inputs,
    said: Published,
    out: Path,
    offline: bool,
    look: SiteLook | None,
    hashes: Mapping[str, str] | None = None,
) -> None:
    """Record a build just published: what it read, the site it swapped in (its digest, with
    the SHA-256es of `hashes`), what it said; and, when it can be told safely, every input's and
    published file's identity (`identities`). Called once nothing of the build's is left beside
    the site but the spare release (generator.build.staging), which it leaves there: removing a
    folder that shares files with the site changes their identity (the link count, so the change
    time). `look` is the look at the staged site before the build's check hashed it
    (`look_at_site`), whose identities serve in place of a look at the site's files, when it took
    them. With `hashes` (the SHA-256 of each file the build published, as it wrote
    or took it), the hash index (hash_index_cache.py) is recorded too: every input and published
    file, by identity. One look at every input and published file serves all three, where it
    can, and the published files' part of it is the look before the check when that one took
    them: at a million items, a look at 45,000 inputs instead of 375,000 files."""
    digest = inputs.digest()
    if digest is None:
        return
    read = inputs.read_mark
    settled = read is not None and inputs.newest < read[0] - _TICK_NS
    published: list[IdentityRows] = []
    looked: list[tuple[str, dict[str, tuple[int, ...]]]] = []
    seen = _settled_identities(paths, out, offline, look, published, looked)
    # Once the identities are taken: the inputs must still be as read for any record (the look
    # that took them says, else one of its own).
    still = inputs.as_read(looked[-1]) if seen is not None and looked else inputs.still_as_read()
    site = site_digest(out, hashes, published[0] if seen is not None and published else None)
    if site is None or not still:
        return
    doc: dict[str, object] = {"v": _VERSION, "inputs": digest, "site": site, "published": dataclasses.asdict(said)}
    if settled and seen is not None:
        doc["identities"] = {**seen, "record": _record_digest(doc), "ledger": _ledger_identity(paths)}
    write_cache(record_path(paths), json.dumps(doc, separators=(",", ":")).encode())
    mark = seen.get("mark") if seen is not None else None
    if not isinstance(mark, int) or hashes is None or read is None:
        return  # the last index stays: each of its rows still says what it said
    # Every input was older than the clock before it was read, less a tick, and is still as it
    # was read; every published file older than the mark written before it was looked at.
    rows = [
        (place, ident, sha)
        for place, ident, sha in inputs.files
        if stat.S_ISREG(ident[0]) and max(ident[2], ident[3]) < read[0] - _TICK_NS
    ]
    save_index(paths, mark - _TICK_NS, rows, published[0], hashes)


# Timestamps come from a coarse clock (a kernel tick, 1 to 10 ms): a file changed twice within
# one tick keeps its first change time. An identity is trusted only for files last changed
# more than this before a mark written before they were looked at, so that any later change
# gives a later time.
_TICK_NS = 20_000_000
MARK_NAME = "build.mark"


def _mark(paths: Paths) -> tuple[int, int] | None:
    """Write the mark, a file whose modification time is the filesystem's time now; return
    that time and the filesystem's device. None on a filesystem whose times are whole
    milliseconds or coarser (FAT, some network shares), whose identities are never trusted."""
    path = paths.private / "cache" / MARK_NAME
    # A new file renamed over the mark, never the mark written in place: a link planted there
    # would have its target truncated. write_cache makes the cache folder, never the private one
    # (a wrong --private is not made).
    if not write_cache(path, b""):
        return None
    try:
        return _fine_time(os.lstat(path))
    except OSError:
        return None


def _fine_time(st: os.stat_result) -> tuple[int, int] | None:
    """A just-written file's modification time and device, or None where the times are whole
    milliseconds or coarser."""
    return None if st.st_mtime_ns % 1_000_000 == 0 else (st.st_mtime_ns, st.st_dev)


def _site_entries(out: Path) -> Iterator[tuple[str, os.stat_result, str]]:
    site = out.resolve()
    yield "site", os.lstat(site), str(site)
    yield from _walk(str(site), "site/")


def _site_folder(out: Path) -> Iterator[tuple[str, os.stat_result, str]]:
    site = out.resolve()
    yield "site", os.lstat(site), str(site)


@dataclass(frozen=True)
class SiteLook:
    """What one look at the staged site found before the build's check hashed it: its shape
    (`_shape`: place, mode, size, modification time, inode of each file, bar its change time),
    and, when every file and folder in it lay on the filesystem of a clock read just before the
    look and was last changed a tick before that clock, each one's identity (`rows`, else None).

    The record takes those rows instead of looking at the site again (`save`): nothing the build
    does after the look changes a file of the site (the swap renames its folder, whose own
    identity the record looks at again), and a file changed by anyone since has a change time
    after the clock, which the record's row then does not match; so a row kept is never one a
    changed file still answers to. At a million items that is a look at 330,000 files fewer.

    It counts the files and folders too (`counted`): a staging folder pruned from the spare's
    listing must hold as many as the release, or it is walked (generator.commands.build)."""

    shape: str
    rows: IdentityRows | None
    counted: tuple[int, int] = (0, 0)  # the files (anything but a folder) and folders it holds


def look_at_site(paths: Paths, out: Path, carried: dict[str, bytes] | None = None) -> SiteLook | None:
    """One look at the staged site `out`, before the build verifies it (whose first step hashes
    every file); None if it cannot be read. The same look takes what the record keeps of it
    (SiteLook), and checks each file of `carried` (path -> the SHA-256 and identity the writer
    handed over, SiteWriter.carried): one whose identity is no longer that one is dropped from
    it, so that the build's check is told every identity left was looked at in this run (and
    looks at none of them again)."""
    # Two ticks first, as before any look whose identities are kept: the build has just written
    # the site. The clock is a file made and removed at once: the mark is the record's to write.
    time.sleep(min(2 * _TICK_NS, 10**9) / 1e9)
    clock = _clock(paths)
    every = IdentityRows()
    settled = clock is not None
    counted = [0, 0]
    try:
        for rel, st, _ in _carried_still(_site_entries(out), carried):
            if rel == "site":  # the folder's own entry: swap_in sets its mode
                continue
            counted[stat.S_ISDIR(st.st_mode)] += 1
            every.append(rel, identity_row(st))
            if settled:
                plain = stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)
                assert clock is not None
                settled = plain and st.st_dev == clock[1] and max(st.st_mtime_ns, st.st_ctime_ns) < clock[0] - _TICK_NS
    except OSError:
        return None
    return SiteLook(_shape(every), every if settled else None, (counted[0], counted[1]))


def _carried_still(
    entries: Iterable[tuple[str, os.stat_result, str]], carried: dict[str, bytes] | None
) -> Iterator[tuple[str, os.stat_result, str]]:
    met = 0
    for entry in entries:
        if carried:
            rel, st = entry[0][len("site/") :], entry[1]
            value = carried.get(rel)
            if value is not None:
                if stat.S_ISREG(st.st_mode) and known_still(value, st):
                    met += 1
                else:
                    del carried[rel]
        yield entry
    if carried and met != len(carried):
        # A carried file the look never met (missing, or in a folder that went away): its place
        # was not looked at, so nothing carried is vouched for; the check hashes them all.
        carried.clear()


def _shape(rows: IdentityRows) -> str:
    """The site's shape: every place below the site's folder (not the folder itself, whose mode
    swap_in sets, and which is another folder before) with its identity bar its change time."""
    h = hashlib.sha256(b"shape\0")
    rows.feed(h, shape=True)
    return h.hexdigest()


def _clock(paths: Paths) -> tuple[int, int] | None:
    """The filesystem's time now, as `_mark` gives it, from a file made and removed at once in
    the cache folder (a build that is then refused must leave no file changed); None without
    that folder, as before a first build."""
    folder = paths.private / "cache"
    if not folder.is_dir():
        return None
    try:
        fd, name = tempfile.mkstemp(prefix=".clock-", dir=folder)
    except OSError:
        return None
    try:
        return _fine_time(os.fstat(fd))
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)


def _identity_digest(
    paths: Paths,
    out: Path,
    offline: bool,
    device: int | None = None,
    site_entries: list[IdentityRows] | None = None,
    looked: list[tuple[str, dict[str, tuple[int, ...]]]] | None = None,
    site_rows: IdentityRows | None = None,
) -> tuple[str, int, str] | None:
    """One digest of every input's and every published file's identity (place, mode, size,
    modification and change times, inode), with the settings (code, libraries, umask); the
    newest time among them; and the site's shape (`_shape`). None if anything is not a
    plain file or folder, or (given `device`) lies on another filesystem than the mark, whose
    clock the mark does not read. The site's rows are added to `site_entries`, and the inputs'
    identities (`_identities`, for Inputs.as_read) to `looked`, if given. One look at each
    file, none of them kept but the site's rows; with `site_rows` (SiteLook.rows), a look at
    the site's own folder only, and the rest of the site as those rows say."""
    places = _places(paths, out)
    h = hashlib.sha256(f"transparency identities v{_VERSION}\0{_setting(offline, places.layout)}\0".encode())
    newest = 0
    plain = True

    def through(entries: Iterable[tuple[str, os.stat_result, str]]) -> Iterator[tuple[str, os.stat_result, str]]:
        nonlocal newest, plain
        for entry in entries:
            st = entry[1]
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) or (
                device is not None and st.st_dev != device
            ):
                plain = False
                return
            newest = max(newest, st.st_ctime_ns, st.st_mtime_ns)
            yield entry

    try:
        inputs = _identities(((rel, identity_row(st)) for rel, st, _ in through(places.look())), places.checkpoints)
        # The inputs by their digest (`_identities`) and the checkpoints' by a line each.
        h.update(inputs[0].encode() + b"\0")
        for rel in sorted(inputs[1]):
            h.update(_identity_line(rel, inputs[1][rel]))
        # The site's own folder by a line; what it holds in two blocks (IdentityRows.feed).
        for rel, st, _ in through(_site_folder(out)):
            h.update(_identity_line(rel, identity_row(st)))
        site = site_rows
        if site is None:
            site = IdentityRows()
            for rel, st, _ in through(_walk(str(out.resolve()), "site/")):
                site.append(rel, identity_row(st))
    except OSError:
        return None
    if not plain:
        return None
    # Looked at, plain and on the clock's filesystem, as SiteLook says when it gave the rows.
    newest = max(newest, site.newest())
    site.feed(h)
    if site_entries is not None:
        site_entries[:] = [site]
    if looked is not None:
        looked.append(inputs)
    return h.hexdigest(), newest, _shape(site)


def _identity_line(rel: str, ident: tuple[int, ...]) -> bytes:
    return f"{rel}\0{ident}\n".encode("utf-8", "surrogateescape")


def _settled_identities(
    paths: Paths,
    out: Path,
    offline: bool,
    look: SiteLook | None,
    site_entries: list[IdentityRows] | None = None,
    looked: list[tuple[str, dict[str, tuple[int, ...]]]] | None = None,
) -> dict[str, object] | None:
    """The identities to record, with the mark they were taken after (the site's, when `look`
    took them, before it); None when some file changed too recently to be told from a change to
    come (once more after a tick's wait), or the site is no longer as it was before the build's
    check hashed it (the look's shape)."""
    if look is None:
        return None
    for _ in range(2):
        # Two ticks before each look, so that what just changed is settled: the build has just
        # written the site, linking into it files the spare release shares (which changes their
        # change time), and each look is a look at every file. Never long (a tick of a
        # second or more, which no filesystem has, only fails the second look as the first).
        time.sleep(min(2 * _TICK_NS, 10**9) / 1e9)
        mark = _mark(paths)
        if mark is None:
            return None
        seen = _identity_digest(
            paths, out, offline, device=mark[1], site_entries=site_entries, looked=looked, site_rows=look.rows
        )
        if seen is None or seen[2] != look.shape:
            return None
        if seen[1] < mark[0] - _TICK_NS:
            return {"digest": seen[0], "mark": mark[0]}
    return None


def unchanged_by_identity(paths: Paths, out: Path, offline: bool) -> Published | None:
    """What the last build said, when every input and published file has the very identity it
    had when that build recorded them (and the mark is the one written then): nothing can have
    been written since, short of resetting a change time, which takes the system's clock.
    Costs a look at each file, not a read. None: decide by content (`unchanged`)."""
    try:
        doc = json.loads(record_path(paths).read_bytes())
        if doc.get("v") != _VERSION or not isinstance(doc.get("identities"), dict):
            return None
        recorded = doc["identities"]
        if os.lstat(paths.private / "cache" / MARK_NAME).st_mtime_ns != recorded.get("mark"):
            return None
        said = _published(doc) if recorded.get("record") == _record_digest(doc) else None
        # Every event appends to the ledger: after one, the walk of every file below would only
        # find what this look finds. (The same identity proves nothing: the walk decides.)
        if recorded.get("ledger") != _ledger_identity(paths):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    seen = _identity_digest(paths, out, offline)
    if said is None or seen is None or seen[0] != recorded.get("digest"):
        return None
    return said


def _ledger_identity(paths: Paths) -> list[int] | None:
    try:
        return list(identity_row(os.lstat(paths.ledger_file)))
    except OSError:
        return None


def _record_digest(doc: Any) -> str:
    """The rest of the record, which the identities vouch for with it: an edited record is
    not one to skip a build on."""
    rest = {k: doc[k] for k in ("v", "inputs", "site", "published")}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _published(doc: Any) -> Published | None:
    said = Published(**doc["published"])
    types = (int, int, bool, str, list)
    if not all(type(getattr(said, f.name)) is t for f, t in zip(dataclasses.fields(said), types, strict=True)):
        return None
    if not all(type(w) is str for w in said.warnings):
        return None
    return said


def _libraries() -> list[str]:
    """This project and every library it runs on, each with its version: its requirements and
    theirs (not the extras, such as the test tools), whatever else happens to be installed aside."""
    found: dict[str, str] = {}
    todo = ["transparency-site"]
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            found[key] = f"{key} (not installed)"
            continue
        found[key] = f"{key}=={dist.version}"
        for requirement in dist.requires or ():
            if "extra ==" not in requirement and (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)):
                todo.append(m.group())
    return sorted(found.values())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _setting(offline: bool, layout: dict[str, object]) -> str:
    # The umask sets the site's modes; zlib (a system library) deflates the download archive;
    # where the private directory lies decides what is read from where.
    return json.dumps(
        {
            "rules": rules_version(),
            "python": sys.version,
            "zlib": zlib.ZLIB_RUNTIME_VERSION,
            "umask": _umask(),
            "layout": layout,
            "libraries": _libraries(),
            "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH"),
            "offline": offline,
        },
        sort_keys=True,
    )


def _digest(setting: str, rows: Iterable[tuple[str, int, str]]) -> str:
    h = hashlib.sha256(f"transparency build record v{_VERSION}\0{setting}\0".encode())
    for rel, mode, sha in rows:
        h.update(f"{rel}\0{mode:o}\0{sha}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _walk(
    base: str, prefix: str, skip: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, os.stat_result, str]]:
    """(place, lstat, path) of everything under `base`, in sorted order (each folder after its
    name, before what it holds), not following links."""
    # A stack of folders' entries, not nested generators: each of 370,000 places was handed up
    # through a generator per level.
    frames = [(prefix, _sorted_entries(base))]
    while frames:
        folder, entries = frames[-1]
        e = next(entries, None)
        if e is None:
            frames.pop()
            continue
        if skip is not None and skip(e.path):
            continue
        rel = f"{folder}{e.name}"
        st = e.stat(follow_symlinks=False)
        yield rel, st, e.path
        if stat.S_ISDIR(st.st_mode):
            frames.append((rel + "/", _sorted_entries(e.path)))


_NAME = operator.attrgetter("name")


def _sorted_entries(folder: str) -> Iterator[os.DirEntry[str]]:
    with os.scandir(folder) as it:
        return iter(sorted(it, key=_NAME))


class _NotPlain(Exception):
    pass


def _hash_files(files: list[str]) -> list[str]:
    out = []
    for p in files:
        with open(p, "rb") as f:
            out.append(hashlib.file_digest(f, "sha256").hexdigest())
    return out


def _hash_all(files: Iterable[str]) -> list[str]:
    # Reading and hashing release the GIL: a share of the files per core, each share read in
    # one thread (a thread per file costs more than hashing a small one).
    todo = list(files)
    n = max(1, min(4, os.cpu_count() or 1))
    shares = [todo[i::n] for i in range(n)]
    with ThreadPoolExecutor(max_workers=n) as pool:
        done = list(pool.map(_hash_files, shares))
    out = [""] * len(todo)
    for i, share in enumerate(done):
        out[i::n] = share
    return out
