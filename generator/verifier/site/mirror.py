"""Keeping a copy of a published site in a folder (`verify.py mirror URL DIR`): what changed is
fetched, checked against the signed SHA256SUMS before it replaces anything, and swapped in.

A run reads the site's key (the one pinned with `--key`, else keys.json's active key, as the
verifier's own check of keys.json decides), then SHA256SUMS and its signature, which must
verify with that key before any line of it is believed. Every path it lists must be safe
(formats.is_safe_path). A listed file under `sums/` ending in `.sha256` is a list of further
files (format v3's checksum tree, docs/formats/v3.md section 5): it is fetched, checked against
its line and read in turn, unless the folder already holds those very bytes, whose files are
then those it lists already; or not read at all when the verifier remembers the list with those
bytes from the release it verified last (memory/list_memory.py): the rows of it and of every
list below it are then the remembered ones, and the verification that follows holds every file
to them. A file the folder holds with the listed SHA-256 (the record says
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from generator.verifier.core.canonical import parse_canonical
from generator.verifier.core.checksum_tree import LIST_RE, list_path
from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import MANIFEST_PATH, SUMS_PATH, SUMS_SIG_PATH
from generator.verifier.core.formats import is_safe_path, plain_sums_rows
from generator.verifier.core.public_keys import ed25519_verify, fingerprint, key_rows, parse_vkey
from generator.verifier.core.text import printable
from generator.verifier.core.windowed import windowed
from generator.verifier.memory.list_memory import ListMemory
from generator.verifier.memory.mirror_record import Written
from generator.verifier.site.mirror_folder import INCOMING, LocalCopy, is_sub_list, swap_in
from generator.verifier.site.release import SUMS_LINE_RE
from generator.verifier.site.remote import Remote, RemoteUnreadable

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

    def summary(self) -> str:
        return f"fetched {self.fetched} file(s), {self.fetched_bytes} bytes; kept {self.kept}; removed {self.removed}"


def mirror_site(
    remote: Remote,
    folder: Path,
    pin: str | None,
    record: dict[str, Written],
    jobs: int = 8,
    progress: TextIO | None = None,
    remembered: Callable[[str], ListMemory | None] = lambda origin: None,
) -> Outcome:
    """Bring `folder` to the release `remote` publishes now; `record` is what an earlier run
    wrote there ({} when there is none), `remembered(origin)` the lists of the release the
    verifier verified last, if it remembers them. Raise MirrorFailed (the site failed a check,
    the folder is unchanged) or RemoteUnreadable (it could not be read)."""
    say = _Progress(progress)
    key, in_hand, origin = site_key(remote, pin)
    lists = remembered(origin)
    source = "pinned with --key" if pin else "the site's keys.json: compare it out of band, or pin it with --key"
    say(f"{remote.label}: the list must be signed by {fingerprint(key)} ({source})")
    folder.mkdir(parents=True, exist_ok=True)
    local = LocalCopy(folder, record)
    incoming = folder / INCOMING
    shutil.rmtree(incoming, ignore_errors=True)  # what an interrupted run left
    incoming.mkdir(mode=0o700)
    staged: dict[tuple[str, str], tuple[Path, int]] = {}  # fetched and checked, reused by a second try
    try:
        for attempt in (1, 2):
            try:
                listing = _read_listing(remote, key, local, in_hand, jobs, lists)
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
        outcome.removed = swap_in(folder, local, listing.files, staged, listing.sums, listing.signature)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    outcome.files = local.written
    say(outcome.summary())
    return outcome


def site_key(remote: Remote, pin: str | None) -> tuple[bytes, dict[str, bytes], str]:
    """The key SHA256SUMS must be signed with: keys.json's active key, which must be the one
    `pin` names (or, pinned to one of its earlier keys, is checked against the ledger's
    hand-overs by the verification that follows); the bytes read to learn it, by path; and the
    manifest's origin."""
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
        return active[0].public_key, in_hand, origin
    pinned = pin.strip()
    for row in rows:
        k = row.key
        if pinned.startswith("SHA256:"):
            match = pinned == k.fingerprint
        else:
            given = parse_vkey(pinned)  # the caller checked that it parses
            match = (given.public_key, given.name) == (k.public_key, k.name)
        if match:
            return active[0].public_key, in_hand, origin
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


def _read_listing(
    remote: Remote, key: bytes, local: "LocalCopy", in_hand: dict[str, bytes], jobs: int, lists: ListMemory | None
) -> _Listing:
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

    def read(item: tuple[str, str]) -> tuple[str, bytes, bool]:
        rel, digest = item
        held = local.read_if_held(rel, digest)
        if held is not None:
            return rel, held, False
        return rel, _check_arrived(remote, rel, digest, remote.get(rel, MAX_LIST_BYTES)), True

    children: list[tuple[str, str]] = []  # the lists of the next level to read

    def add(name: str, rows: Iterable[tuple[str, str]], descend: bool = True) -> None:
        for rel, digest in rows:
            if listing.files.setdefault(rel, digest) != digest:
                raise MirrorFailed(f"{remote.url_of(name)}: {rel} is listed again with another SHA-256")
            if not is_sub_list(rel) or rel in descended:
                continue
            descended.add(rel)
            if not descend:  # a list of a subtree taken whole below
                continue
            m = LIST_RE.fullmatch(rel)
            # A list the verifier checked in the release it verified last, with these very
            # bytes, heads the lists it then found below it: their rows are known.
            span = lists.subtree(m.group(1), digest) if lists is not None and m else None
            if span is None or lists is None:
                children.append((rel, digest))
                continue
            for kept in lists.lists(span):
                add(list_path(kept.prefix), ((path, sha) for sha, path in kept.rows()), descend=False)

    while wave:
        children.clear()
        for name, data in wave:
            add(name, _lines(remote.url_of(name), data))
        # The lists of one level are read together, a few requests at a time: a tree costs a
        # round trip per level, not one per list. A list the folder holds as the record says is
        # read here: a thread's locks cost more than reading a small file.
        got = {rel: kept for rel, digest in children if (kept := local.read_if_recorded(rel, digest)) is not None}
        for rel, data, fetched in windowed(read, [c for c in children if c[0] not in got], jobs):
            if fetched:
                listing.fetched_lists[rel] = data
            got[rel] = data
        wave = [(rel, got[rel]) for rel, _ in children]
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
    plain = plain_sums_rows(text)
    if plain is not None:
        yield from ((path, sha) for sha, path in plain)
        return
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
    folders: set[str] = set()  # every folder the paths run through: a look a path, not one a level
    for rel in files:
        parent = rel.rpartition("/")[0]
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    own = sorted({SUMS_PATH, SUMS_SIG_PATH, INCOMING} & (files.keys() | folders))
    if own:
        found = own[0] if own[0] in files else min(rel for rel in files if rel.startswith(own[0] + "/"))
        raise MirrorFailed(f"{remote.url_of(SUMS_PATH)}: lists {found}, a path the list itself or the mirror holds")
    clash = sorted(folders & files.keys())
    if clash:
        under = min(rel for rel in files if rel.startswith(clash[0] + "/"))
        raise MirrorFailed(f"{remote.url_of(SUMS_PATH)}: lists both {clash[0]} and {under} under it")


def _check_arrived(remote: Remote, rel: str, digest: str, data: bytes | None) -> bytes:
    if data is None:
        raise _Torn(f"{remote.url_of(rel)}: listed with SHA-256 {digest}, but the site has no such file")
    found = hashlib.sha256(data).hexdigest()
    if found != digest:
        raise _Torn(f"{remote.url_of(rel)}: expected SHA-256 {digest} (as listed), found {found}")
    return data


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

    for done, (rel, target, size) in enumerate(windowed(lambda job: one(*job), enumerate(need), jobs), start=1):
        staged[(rel, files[rel])] = (target, size)
        outcome.fetched_bytes += size
        if done % step == 0 or done == len(need):
            say(f"fetched {done}/{len(need)} file(s), {outcome.fetched_bytes} bytes")
    outcome.fetched = len(todo)
    outcome.fetched_bytes = sum(staged[(rel, files[rel])][1] for rel in todo)
