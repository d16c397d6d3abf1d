"""Keeping a copy of a published site in a folder (`verify.py mirror URL DIR`): what changed is
fetched, checked against the signed SHA256SUMS before it replaces anything, and swapped in.

A run reads the site's key (the one pinned with `--key`, else keys.json's active key, as the
verifier's own check of keys.json decides), then SHA256SUMS and its signature, which must
verify with that key before any line of it is believed. Every path it lists must be safe
(formats.is_safe_path). A listed file under `sums/` ending in `.sha256` is a list of further
files (format v3's checksum tree, docs/formats/v3.md section 5): it is fetched, checked against
its line and read in turn, unless the folder already holds those very bytes, whose files are
then those it lists already. A file the folder holds with the listed SHA-256 (the record says
so and its identity is unchanged, or it is hashed again) is kept; every other file is fetched
on a few kept-alive connections at once into `.mirror-incoming/`, hashed as it arrives, flushed
to disk and checked. Only when every file arrived as listed are the files the mirror wrote and
the site no longer lists removed, the new files renamed into place, SHA256SUMS and its
signature last. A file that arrives with other bytes than listed (a site being published
while it was read, or tampered with) starts the run once more from a fresh SHA256SUMS; a
second time fails the run, naming the file, with the folder as it was.
"""

import hashlib
import os
import shutil
import stat
import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from generator.verifier.core.canonical import parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import MANIFEST_PATH, SUMS_PATH, SUMS_SIG_PATH, identity_of
from generator.verifier.core.formats import is_safe_path
from generator.verifier.core.public_keys import ed25519_verify, fingerprint, key_rows, parse_vkey
from generator.verifier.core.text import printable
from generator.verifier.memory.mirror_record import Written
from generator.verifier.site.release import SUMS_LINE_RE
from generator.verifier.site.remote import Remote, RemoteUnreadable

INCOMING = ".mirror-incoming"  # the files of a run not yet swapped in, inside the mirror's folder
SUB_LIST_FOLDER = "sums/"
SUB_LIST_SUFFIX = ".sha256"
MAX_DOCUMENT_BYTES = 1 << 24  # transparency.json, keys.json
MAX_SIGNATURE_BYTES = 1 << 12
MAX_LIST_BYTES = 1 << 31  # a v2 SHA256SUMS of millions of files
MAX_FILE_BYTES = 1 << 40


class MirrorFailed(Exception):
    """The site failed a check the mirror makes before copying it (exit status 1)."""


class _Torn(Exception):
    """A file arrived with other bytes than the list read at the start of the run said."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass
class Outcome:
    """What a run did, and the SHA-256 of every file of the mirror as the mirror knows it."""

    fetched: int = 0
    fetched_bytes: int = 0
    kept: int = 0
    removed: int = 0
    files: dict[str, Written] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"fetched {self.fetched} file(s), {self.fetched_bytes} bytes; kept {self.kept}; removed {self.removed}"


def is_sub_list(rel: str) -> bool:
    """Whether a listed path is itself a list of further files (v3's `sums/<p>.sha256`)."""
    return rel.startswith(SUB_LIST_FOLDER) and rel.endswith(SUB_LIST_SUFFIX)


def mirror_site(
    remote: Remote,
    folder: Path,
    pin: str | None,
    record: dict[str, Written],
    jobs: int = 8,
    progress: TextIO | None = None,
) -> Outcome:
    """Bring `folder` to the release `remote` publishes now; `record` is what an earlier run
    wrote there ({} when there is none). Raise MirrorFailed (the site failed a check, the folder
    is unchanged) or RemoteUnreadable (it could not be read)."""
    say = _Progress(progress)
    key, in_hand = site_key(remote, pin)
    say(f"{remote.label}: SHA256SUMS signed by {fingerprint(key)}")
    folder.mkdir(parents=True, exist_ok=True)
    local = _Local(folder, record)
    incoming = folder / INCOMING
    shutil.rmtree(incoming, ignore_errors=True)  # what an interrupted run left
    incoming.mkdir(mode=0o700)
    staged: dict[tuple[str, str], tuple[Path, int]] = {}  # fetched and checked, reused by a second try
    try:
        for attempt in (1, 2):
            try:
                listing = _read_listing(remote, key, local, in_hand, jobs)
                todo = local.plan(listing.files, jobs)
                outcome = Outcome(kept=len(listing.files) - len(todo))
                _fetch(remote, incoming / str(attempt), todo, listing, staged, jobs, say, outcome)
                break
            except _Torn as e:
                if attempt == 2:
                    raise MirrorFailed(
                        f"{e}; it changed again after a fresh {SUMS_PATH}: the mirror is unchanged"
                    ) from None
                say(f"{e}: reading a fresh {SUMS_PATH} and trying once more")
        outcome.removed = _swap_in(folder, local, listing, staged, outcome)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    outcome.files = local.written
    say(outcome.summary())
    return outcome


def site_key(remote: Remote, pin: str | None) -> tuple[bytes, dict[str, bytes]]:
    """The key SHA256SUMS must be signed with: keys.json's active key, which must be the one
    `pin` names (or, pinned to one of its earlier keys, is checked against the ledger's
    hand-overs by the verification that follows); and the bytes read to learn it, by path."""
    in_hand: dict[str, bytes] = {}
    manifest = _document(remote, MANIFEST_PATH, "manifest", in_hand)
    origin, keys_rel = manifest.get("origin"), manifest.get("keys")
    if not isinstance(origin, str) or not is_safe_path(keys_rel):
        raise MirrorFailed(f"{remote.url_of(MANIFEST_PATH)}: no origin or no safe keys path")
    doc = _document(remote, keys_rel, "keys", in_hand)
    rows, problems = key_rows(doc.get("keys"), origin, published=True)
    if problems:
        raise MirrorFailed(f"{remote.url_of(keys_rel)}: {problems[0].describe()}")
    active = [r.key for r in rows if r.status == "active"]
    if len(active) != 1:
        raise MirrorFailed(f"{remote.url_of(keys_rel)}: {len(active)} active keys, expected exactly one")
    if pin is None:
        return active[0].public_key, in_hand
    pinned = pin.strip()
    for row in rows:
        k = row.key
        if pinned.startswith("SHA256:"):
            match = pinned == k.fingerprint
        else:
            given = parse_vkey(pinned)  # the caller checked that it parses
            match = (given.public_key, given.name) == (k.public_key, k.name)
        if match:
            return active[0].public_key, in_hand
    raise MirrorFailed(
        f"{remote.url_of(keys_rel)}: no key of the site is the key given with --key (expected {pinned}, found "
        f"{', '.join(r.key.fingerprint for r in rows) or 'none'})"
    )


def _document(remote: Remote, rel: str, what: str, in_hand: dict[str, bytes]) -> dict[str, Any]:
    data = remote.get(rel, MAX_DOCUMENT_BYTES)
    if data is None:
        raise RemoteUnreadable(f"{remote.url_of(rel)}: no such file: not a transparency site's {what}")
    in_hand[rel] = data
    try:
        doc = parse_canonical(data)
    except FormatError as e:
        raise MirrorFailed(f"{remote.url_of(rel)}: {what}: {e}") from None
    if not isinstance(doc, dict):
        raise MirrorFailed(f"{remote.url_of(rel)}: {what}: not a JSON object")
    return doc


@dataclass
class _Listing:
    sums: bytes
    signature: bytes
    files: dict[str, str]  # every listed path, the sub-lists included, to its SHA-256
    # Files already fetched with the listed bytes (the sub-lists read while descending, the
    # manifest and keys read for the key): written as they are, not asked for again.
    fetched_lists: dict[str, bytes]


def _read_listing(remote: Remote, key: bytes, local: "_Local", in_hand: dict[str, bytes], jobs: int) -> _Listing:
    sums = remote.get(SUMS_PATH, MAX_LIST_BYTES)
    signature = remote.get(SUMS_SIG_PATH, MAX_SIGNATURE_BYTES)
    if sums is None or signature is None:
        missing = SUMS_PATH if sums is None else SUMS_SIG_PATH
        raise MirrorFailed(f"{remote.url_of(missing)}: no such file (every site publishes it)")
    if not ed25519_verify(key, signature, sums):
        raise MirrorFailed(
            f"{remote.url_of(SUMS_SIG_PATH)}: does not verify {SUMS_PATH}'s {len(sums)} bytes with {fingerprint(key)}"
        )
    listing = _Listing(sums, signature, {}, {})
    wave: list[tuple[str, bytes]] = [(SUMS_PATH, sums)]
    descended: set[str] = set()

    def read(n: int, item: tuple[str, str]) -> tuple[str, bytes, bool]:
        rel, digest = item
        held = local.read_if_held(rel, digest)
        if held is not None:
            return rel, held, False
        return rel, _check_arrived(remote, rel, digest, remote.get(rel, MAX_LIST_BYTES)), True

    while wave:
        children: list[tuple[str, str]] = []
        for name, data in wave:
            for rel, digest in _lines(remote.url_of(name), data):
                if listing.files.setdefault(rel, digest) != digest:
                    raise MirrorFailed(f"{remote.url_of(name)}: {rel} is listed again with another SHA-256")
                if is_sub_list(rel) and rel not in descended:
                    descended.add(rel)
                    children.append((rel, digest))
        # The lists of one level are read together, a few requests at a time: a tree costs a
        # round trip per level, not one per list.
        wave = []
        for rel, data, fetched in _bounded(read, children, jobs):
            if fetched:
                listing.fetched_lists[rel] = data
            wave.append((rel, data))
    _check_shape(remote, listing.files)
    for rel, data in in_hand.items():
        if listing.files.get(rel) == hashlib.sha256(data).hexdigest():
            listing.fetched_lists.setdefault(rel, data)
    return listing


def _lines(url: str, data: bytes) -> Iterable[tuple[str, str]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MirrorFailed(f"{url}: not valid UTF-8") from None
    if text and not text.endswith("\n"):
        raise MirrorFailed(f"{url}: the last line does not end with a newline")
    for n, line in enumerate(text.split("\n")[:-1], start=1):
        m = SUMS_LINE_RE.fullmatch(line)
        if not m or not is_safe_path(m.group(2)):
            raise MirrorFailed(
                f"{url}: line {n}: expected '<64 hex>  <safe relative path>' (no '..', no leading '/'), found "
                f"{printable(line)!r}: refused, nothing was written"
            )
        yield m.group(2), m.group(1)


def _check_shape(remote: Remote, files: dict[str, str]) -> None:
    """Paths a folder can hold side by side, none of them where the mirror keeps its own files."""
    for rel in sorted(files):
        top = rel.split("/", 1)[0]
        if rel in (SUMS_PATH, SUMS_SIG_PATH) or top == INCOMING:
            raise MirrorFailed(f"{remote.url_of(SUMS_PATH)}: lists {rel}, a path the list itself or the mirror holds")
        parts = rel.split("/")
        for n in range(1, len(parts)):
            if "/".join(parts[:n]) in files:
                raise MirrorFailed(f"{remote.url_of(SUMS_PATH)}: lists both {'/'.join(parts[:n])} and {rel} under it")


def _check_arrived(remote: Remote, rel: str, digest: str, data: bytes | None) -> bytes:
    if data is None:
        raise _Torn(f"{remote.url_of(rel)}: listed with SHA-256 {digest}, but the site has no such file")
    found = hashlib.sha256(data).hexdigest()
    if found != digest:
        raise _Torn(f"{remote.url_of(rel)}: expected SHA-256 {digest} (as listed), found {found}")
    return data


class _Local:
    """The mirror's folder as it is: what the record says the mirror wrote, checked by identity."""

    def __init__(self, root: Path, record: dict[str, Written]) -> None:
        self.root = root
        self.record = record
        self.written: dict[str, Written] = {}  # what the folder holds now, as far as this run knows

    def held(self, rel: str, digest: str) -> bool:
        """Whether the folder holds `rel` with SHA-256 `digest`: recorded so and unchanged since,
        or hashed now. A link, or a path through one, holds nothing."""
        path = self.root / rel
        try:
            if any((self.root / p).is_symlink() for p in _parents(rel)):
                return False
            st = path.lstat()
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode):
            return False
        known = self.record.get(rel)
        if known is not None and known.identity == identity_of(st):
            # Unchanged since the mirror hashed it: the record says what it holds.
            if known.sha256 == digest:
                self.written[rel] = known
            return known.sha256 == digest
        try:
            with path.open("rb") as f:
                found = hashlib.file_digest(f, "sha256").hexdigest()
            st = path.lstat()
        except OSError:
            return False
        if found != digest:
            return False
        self.written[rel] = Written(found, identity_of(st))
        return True

    def holds(self, rel: str, digest: str) -> bool:
        known = self.written.get(rel)
        return known.sha256 == digest if known is not None else self.held(rel, digest)

    def read_if_held(self, rel: str, digest: str) -> bytes | None:
        """The bytes of a list the folder already holds with this SHA-256, else None."""
        if not self.holds(rel, digest):
            return None
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    def plan(self, files: dict[str, str], jobs: int) -> list[str]:
        """The listed files to fetch (in path order): those the folder does not hold as listed."""
        names = sorted(files, key=lambda p: p.encode())
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            held = list(pool.map(lambda rel: self.holds(rel, files[rel]), names))
        return [rel for rel, ok in zip(names, held, strict=True) if not ok]

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


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


class _Progress:
    """Lines on stderr saying what the run does: how many files and bytes it fetched so far."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def __call__(self, line: str) -> None:
        if self.stream is not None:
            print(f"mirror: {printable(line)}", file=self.stream, flush=True)


def _fetch(
    remote: Remote,
    incoming: Path,
    todo: list[str],
    listing: _Listing,
    staged: dict[tuple[str, str], tuple[Path, int]],
    jobs: int,
    say: Callable[[str], None],
    outcome: Outcome,
) -> None:
    """Every file of `todo` into `incoming`, checked against its line; a few requests at a
    time, each file's bytes hashed as they arrive and flushed to disk before it counts."""
    files = listing.files
    incoming.mkdir()
    need = [rel for rel in todo if (rel, files[rel]) not in staged]
    say(
        f"{len(todo)} file(s) to fetch, {len(files) - len(todo)} kept" + (f" ({len(need)} new)" if need != todo else "")
    )
    step = max(1, len(need) // 10)

    def one(n: int, rel: str) -> tuple[str, Path, int]:
        target = incoming / f"{n}.part"
        data = listing.fetched_lists.get(rel)
        h = hashlib.sha256()
        with open(target, "wb") as f:
            if data is not None:
                f.write(data)
                h.update(data)
                size: int | None = len(data)
            else:

                def sink(chunk: bytes) -> None:
                    h.update(chunk)
                    f.write(chunk)

                size = remote.stream(rel, MAX_FILE_BYTES, sink)
            f.flush()
            os.fsync(f.fileno())
        if size is None:
            raise _Torn(f"{remote.url_of(rel)}: listed with SHA-256 {files[rel]}, but the site has no such file")
        if h.hexdigest() != files[rel]:
            raise _Torn(f"{remote.url_of(rel)}: expected SHA-256 {files[rel]} (as listed), found {h.hexdigest()}")
        return rel, target, size

    for done, (rel, target, size) in enumerate(_bounded(one, need, jobs), start=1):
        staged[(rel, files[rel])] = (target, size)
        outcome.fetched_bytes += size
        if done % step == 0 or done == len(need):
            say(f"fetched {done}/{len(need)} file(s), {outcome.fetched_bytes} bytes")
    outcome.fetched = len(todo)
    outcome.fetched_bytes = sum(staged[(rel, files[rel])][1] for rel in todo)


def _bounded(work: Callable[[int, Any], Any], items: Sequence[Any], jobs: int) -> Iterable[Any]:
    """work(n, item) on `jobs` threads, the results in order, at most four times `jobs` in
    flight; an error is raised in its turn, and what has not started is cancelled."""
    jobs = max(1, jobs)
    queued: deque[Future[Any]] = deque()
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for n, item in enumerate(items):
            queued.append(pool.submit(work, n, item))
            if len(queued) >= jobs * 4:
                yield queued.popleft().result()
        while queued:
            yield queued.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _swap_in(
    folder: Path,
    local: _Local,
    listing: _Listing,
    staged: dict[tuple[str, str], tuple[Path, int]],
    outcome: Outcome,
) -> int:
    """Everything arrived as listed: remove what the mirror wrote and the site no longer lists,
    rename the new files into place, the signed list last. Returns how many files were removed."""
    files = listing.files
    removed = 0
    for rel in sorted(local.previously_written() - set(files)):
        if _remove(folder, rel):
            removed += 1
        local.written.pop(rel, None)
    for rel in sorted(files):
        if rel in local.written:
            continue
        source, _ = staged[(rel, files[rel])]
        target = _prepare(folder, rel)
        os.replace(source, target)
        local.written[rel] = Written(files[rel], identity_of(target.lstat()))
    for rel, data in ((SUMS_SIG_PATH, listing.signature), (SUMS_PATH, listing.sums)):
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
    for parent in _parents(rel):
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
    if any((folder / p).is_symlink() for p in _parents(rel)):
        return False
    path = folder / rel
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        path.unlink()
    except OSError:
        return False
    for parent in reversed(_parents(rel)):
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


def print_outcome(outcome: Outcome, stream: TextIO = sys.stderr) -> None:
    for note in outcome.notes:
        print(f"mirror: {printable(note)}", file=stream)
