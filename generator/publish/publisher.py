"""Publishing a release: what to send, in what order, and what to say about it.

The plan compares the site's checksum list with the record of the last publish to the same
target (kept only while the store's checkpoint is still the one that publish sent) and sends only
the paths whose bytes changed, in three phases, each finished before the next starts:

1. new immutable objects (artifacts, their signatures, tiles), created only if absent;
2. the pages and indexes that changed, then a format v3 site's lists under `sums/` that changed,
   the deepest first (docs/formats/v3.md, 5), then (one at a time) a format v4 site's manifest,
   after the parts it names (docs/formats/v4.md), `SHA256SUMS` and its signature;
3. the checkpoint;

and then removes what the last publish sent and this release no longer has, if it is a page
(a search shard renamed, say); an immutable object is never removed, whatever the site says.

What a reader can rely on at every moment: the checkpoint it reads comes with every tile and
every immutable object of its release (they were all there before it), so a reader following the
log (C2SP tlog-tiles: the checkpoint, then the tiles) never sees a torn release, and nothing it
fetched before is taken away. The pages and indexes of format v2 (the entries file, the history,
the proofs against today's checkpoint, SHA256SUMS) are replaced one by one during phase 2: until
the checkpoint lands, a reader may get some of the next release's beside the last checkpoint.

Before anything is sent: the checksum list's signature is checked (by the caller's key), every path
is checked to be a safe relative path, every file to be sent is
hashed against the list, the quorum is checked on the checkpoint those hashes name, and a store
whose checkpoint is newer than the site's (a larger tree, or another root at the same size) is
refused: publishing an older site would roll the log back.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import heapq
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from generator.core import layout
from generator.core.object_kinds import Kind, headers_for, kind_of
from generator.core.progress import Progress
from generator.program import journal
from generator.publish.store import Conflict, Store, StoreError, file_sha256
from generator.verifier import (
    LIST_RE,
    MANIFEST_V4,
    is_safe_path,
    parse_policy,
    policy_problems,
    read_lists,
    site_format,
    windowed,
)

# Sent after every other page, before the checkpoint: the list a verifier starts from.
_LAST_PAGES = (layout.SUMS, layout.SUMS_SIG)
POLICY = "ledger/policy.txt"
_CHECKPOINT_BYTES = 1 << 20
# What a record row says of a path a publish was about to send: no bytes are known to be there.
UNKNOWN = "0" * 64


class PublishError(Exception):
    """The publish could not start, or some objects failed; `problems` says which, one a line.
    `bad_input`: the site itself is wrong (exit 2), not the store (exit 1)."""

    def __init__(self, summary: str, problems: list[str], *, bad_input: bool = False) -> None:
        super().__init__(summary)
        self.summary = summary
        self.problems = problems
        self.bad_input = bad_input


@dataclass
class Summary:
    created: int = 0
    replaced: int = 0
    already_there: int = 0
    unchanged: int = 0
    bytes_sent: int = 0
    removed: int = 0
    left_in_place: list[str] = field(default_factory=list)
    checkpoint_sent: bool = False
    record_dropped: str | None = None
    phases: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    immutable: list[tuple[str, str]]
    pages: list[tuple[str, str]]
    checkpoint: tuple[str, str] | None
    unchanged: int
    stale: list[str]
    listing: list[tuple[str, str]]
    site_format: int = 2  # what is immutable depends on it (generator.core.object_kinds)


def site_listing(site: Path, signed: Callable[[bytes, bytes], bool] | None = None) -> Iterator[tuple[str, str]]:
    """(path, sha256) of every file of the site, in path-byte order: SHA256SUMS's lines (which
    the build verified and the verifier requires sorted), in format v3 those of every list of
    its tree, and the two files it cannot list.
    `signed(sums, signature)`, when given, must accept the list's signature: the list is read
    once, so the rows are those of the bytes it accepted."""
    sums = site / layout.SUMS
    if not sums.is_file():
        raise PublishError(f"{site}: no {layout.SUMS}: not a built site (run `transparency build`)", [], bad_input=True)
    listed: list[tuple[str, str]] = []
    try:
        data = sums.read_bytes()
        signature = (site / layout.SUMS_SIG).read_bytes() if (site / layout.SUMS_SIG).is_file() else b""
        data.decode("utf-8")  # a list that is not text is refused here, before its signature
    except (OSError, UnicodeDecodeError) as e:
        raise PublishError(f"{sums}: cannot be read as UTF-8 text ({e})", [], bad_input=True) from None
    if signed is not None and not signed(data, signature):
        raise PublishError(
            f"{sums}: its signature ({layout.SUMS_SIG}) is not by the program's signing key (data/keys.json): "
            "not a site this program built; build again",
            [],
            bad_input=True,
        )
    # A v3 site's SHA256SUMS is the root of a tree of lists (docs/formats/v3.md, 5): each list
    # is read where its parent names it, and taken only with the SHA-256 its parent gives.
    rows, problems = read_lists(data, functools.partial(_read_list, site))
    for path in sorted(rows, key=str.encode):
        if is_safe_path(path):
            listed.append((path, rows[path]))
        else:
            problems.append(f"{site}: {path[:80]!r} is not a safe relative path inside the site")
    if problems:
        raise PublishError(f"{sums} is malformed", problems, bad_input=True)
    own = {layout.SUMS: hashlib.sha256(data).hexdigest(), layout.SUMS_SIG: hashlib.sha256(signature).hexdigest()}
    extra = [(p, own[p]) for p in sorted(_LAST_PAGES, key=str.encode) if (site / p).is_file()]
    yield from heapq.merge(listed, extra, key=lambda r: r[0].encode())


def _read_list(site: Path, rel: str) -> bytes | None:
    path = site / rel
    try:
        return None if not is_safe_path(rel) or path.is_symlink() else path.read_bytes()
    except OSError:
        return None


def _list_depth(path: str) -> int:
    """Where a page goes in phase 2: every other page (0), then a v3 site's lists under sums/,
    the deepest first (each after the lists and parts it names), so that a reader who starts
    from SHA256SUMS after it lands finds what each list names."""
    m = LIST_RE.fullmatch(path)
    return 0 if m is None else 257 - len(m.group(1))  # a prefix is at most 256 bits (v4) or 64 hex digits


def site_format_of(site: Path) -> int:
    """The format of the site in `site`, as its manifest says (2 when it cannot tell: the
    publish's own checks refuse a site without a readable manifest)."""
    try:
        manifest = json.loads((site / layout.MANIFEST).read_bytes())
    except (OSError, ValueError):
        return 2
    return site_format(manifest) if isinstance(manifest, dict) else 2


def plan(listing: list[tuple[str, str]], record: Iterator[tuple[str, str]], site_format: int = 2) -> Plan:
    """What to send: the rows of `listing` the record does not show with the same bytes."""
    before = dict(record)
    problems: list[str] = []
    immutable: list[tuple[str, str]] = []
    pages: list[tuple[str, str]] = []
    checkpoint = None
    unchanged = 0
    for path, sha in listing:
        was = before.pop(path, None)
        if was == sha:
            unchanged += 1
            continue
        kind = kind_of(path, site_format)
        if kind is Kind.IMMUTABLE:
            if was not in (None, UNKNOWN):
                problems.append(
                    f"{path}: published before with SHA-256 {was}, now {sha}: an immutable object is never rewritten"
                )
            immutable.append((path, sha))
        elif kind is Kind.CHECKPOINT:
            checkpoint = (path, sha)
        else:
            pages.append((path, sha))
    if problems:
        raise PublishError("this release would rewrite what was published", problems, bad_input=True)
    stale = sorted(before, key=str.encode)
    return Plan(immutable, pages, checkpoint, unchanged, stale, listing, site_format)


def removable(path: str, site_format: int = 2) -> bool:
    """Whether a path the last publish sent, and this release no longer lists, may be removed."""
    return kind_of(path, site_format) is Kind.PAGE


def _size_and_root(note: bytes) -> tuple[int, bytes] | None:
    lines = note.split(b"\n")
    try:
        return int(lines[1]), base64.b64decode(lines[2], validate=True)
    except (IndexError, ValueError):
        return None


def quorum_problems(site: Path, note: bytes) -> list[str]:
    """What keeps `note` (the site's checkpoint) from meeting the quorum of the policy it ships."""
    policy_file = site / POLICY
    if not policy_file.is_file():
        return []
    try:
        policy = parse_policy(policy_file.read_bytes())
    except ValueError as e:
        return [f"{POLICY}: {e}"]
    origin = note.split(b"\n", 1)[0].decode("utf-8", "replace")
    keys = [k.public_key for k in policy.log_keys if k.name == origin]
    if not keys:
        return [f"{POLICY} names no log key for {origin}"]
    found: list[str] = []
    for key in keys:
        found = policy_problems(policy, origin, key, note)
        if not found or "lacks the cosignatures" in found[0]:
            return found
    return found


def _checked_checkpoint(site: Path, listing: list[tuple[str, str]]) -> bytes:
    """The site's checkpoint, read once: the bytes the quorum is checked on are those the list names."""
    path = site / layout.CHECKPOINT
    if not path.is_file():
        raise PublishError(
            f"{site}: no {layout.CHECKPOINT}: not a built site (run `transparency build`)", [], bad_input=True
        )
    note = path.read_bytes()
    listed = next((sha for p, sha in listing if p == layout.CHECKPOINT), None)
    if listed != hashlib.sha256(note).hexdigest():
        raise PublishError(
            f"{path}: not the checkpoint {layout.SUMS} lists (a build running, or a file changed by hand): build again",
            [],
            bad_input=True,
        )
    return note


def _no_rollback(store: Store, note: bytes) -> bytes | None:
    """The store's checkpoint, after refusing to replace a newer one with this site's."""
    try:
        there = store.fetch(layout.CHECKPOINT, _CHECKPOINT_BYTES)
    except StoreError as e:
        raise PublishError(str(e), []) from None
    if there is None or there == note:
        return there
    ours, theirs = _size_and_root(note), _size_and_root(there)
    if ours is None:
        raise PublishError(f"{layout.CHECKPOINT}: the site's checkpoint cannot be read", [], bad_input=True)
    if theirs is not None and (theirs[0] > ours[0] or (theirs[0] == ours[0] and theirs[1] != ours[1])):
        raise PublishError(
            f"the store's {layout.CHECKPOINT} (tree size {theirs[0]}) is newer than, or another history than, this "
            f"site's (tree size {ours[0]}): publishing it would roll the log back; publish the newest release",
            [],
        )
    return there


def _prechecked(site: Path, rows: list[tuple[str, str]], jobs: int, progress: Progress | None) -> None:
    """Every file about to be sent, hashed against the list before anything is sent."""

    def check(row: tuple[str, str]) -> str | None:
        path, sha = row
        try:
            found = file_sha256(site / path)
        except OSError as e:
            return f"{site / path}: {e.strerror or e}"
        return None if found == sha else f"{site / path}: SHA-256 {found}, but {layout.SUMS} lists {sha}"

    problems = []
    for done, problem in enumerate(windowed(check, rows, jobs), 1):
        if progress is not None:
            progress("checking the files to send", done, len(rows))
        if problem:
            problems.append(problem)
    if problems:
        raise PublishError(
            f"{len(problems)} files are not what {layout.SUMS} lists (a build running, or a file changed by hand): "
            "nothing was sent; build again",
            problems,
            bad_input=True,
        )


def publish(
    site: Path,
    store: Store,
    record: Iterator[tuple[str, str]],
    *,
    require_quorum: bool = True,
    jobs: int = 8,
    progress: Progress | None = None,
    on_start: Callable[[list[tuple[str, str]]], None] | None = None,
    on_done: Callable[[list[tuple[str, str]]], None] | None = None,
    signed: Callable[[bytes, bytes], bool] | None = None,
) -> Summary:
    """Publish `site` to `store`. `on_start` gets what the record must show while the publish
    runs (every path it may leave in the store), `on_done` the listing once everything is there;
    `signed` checks the checksum list's signature (site_listing)."""
    listing = list(site_listing(site, signed))
    note = _checked_checkpoint(site, listing)
    if require_quorum:
        missing = quorum_problems(site, note)
        if missing:
            raise PublishError(
                "the checkpoint does not meet the trust policy's quorum: publishing it would show readers a "
                "checkpoint their policy rejects (gather the cosignatures and build again, or publish with "
                "--without-quorum)",
                missing,
                bad_input=True,
            )
    try:
        store.prepare()
    except StoreError as e:
        raise PublishError(str(e), []) from None
    there = _no_rollback(store, note)
    rows = list(record)
    recorded = next((sha for p, sha in rows if p == layout.CHECKPOINT), None)
    dropped = None
    if rows and there == note and recorded != hashlib.sha256(note).hexdigest():
        # A run that sent this very release was stopped after its checkpoint: every file of the
        # listing is there; what it had not removed yet is still in the record.
        listed = {q for q, _ in listing}
        rows = sorted([*listing, *((q, sha) for q, sha in rows if q not in listed)], key=lambda r: r[0].encode())
    elif rows and (there is None or recorded != hashlib.sha256(there).hexdigest()):
        # The store is not as the last publish from here left it: compare everything with it.
        dropped = "the store's checkpoint is not the one last published from here: every file is sent again"
        rows = [(q, UNKNOWN) for q, _ in rows]
    p = plan(listing, iter(rows), site_format_of(site))
    summary = Summary(unchanged=p.unchanged, record_dropped=dropped)
    to_send = [*p.immutable, *p.pages, *([p.checkpoint] if p.checkpoint else [])]
    _prechecked(site, to_send, jobs, progress)
    if on_start is not None:
        # Whatever this run may leave behind is in the record before it is sent, so that a
        # later run can remove a page this one sent and the next release no longer has.
        known = dict(rows)
        on_start(sorted({**{q: UNKNOWN for q, _ in listing}, **known}.items(), key=lambda r: r[0].encode()))
    fmt = p.site_format
    _phase(site, store, "creating immutable objects", p.immutable, True, summary, jobs, progress, fmt)
    # SHA256SUMS and its signature go one after the other, after the rest of the pages; a v4
    # manifest just before them, after every part it names (docs/formats/v4.md).
    last = (layout.MANIFEST, *_LAST_PAGES) if fmt >= MANIFEST_V4 else _LAST_PAGES
    head = sorted((r for r in p.pages if r[0] not in last), key=lambda r: _list_depth(r[0]))
    tail = sorted((r for r in p.pages if r[0] in last), key=lambda r: last.index(r[0]))
    _phase(site, store, "replacing pages and indexes", head, False, summary, jobs, progress, fmt)
    label = "replacing the manifest and the checksum list" if fmt >= MANIFEST_V4 else "replacing the checksum list"
    _phase(site, store, label, tail, False, summary, 1, progress, fmt)
    if p.checkpoint is not None:
        _phase(site, store, "replacing the checkpoint", [p.checkpoint], False, summary, 1, progress, fmt)
        summary.checkpoint_sent = True
    if p.stale:
        _remove_stale(store, p, summary, jobs, progress)
    if on_done is not None:
        on_done(p.listing)
    return summary


def _phase(
    site: Path,
    store: Store,
    name: str,
    rows: list[tuple[str, str]],
    immutable: bool,
    summary: Summary,
    jobs: int,
    progress: Progress | None,
    site_format: int = 2,
) -> None:
    if not rows:
        return
    summary.phases.append((name, len(rows)))

    def send(row: tuple[str, str]) -> tuple[bool, int, str | None]:
        path, sha = row
        source = site / path
        try:
            size = source.stat().st_size
            if immutable:
                made = store.create(path, source, sha, headers_for(path, site_format))
            else:
                store.replace(path, source, sha, headers_for(path, site_format))
                made = True
        except Conflict as e:
            return False, 0, f"{e} (the store keeps it; a published object is never rewritten)"
        except (StoreError, OSError) as e:
            return False, 0, str(e)
        return made, size if made else 0, None

    errors: list[str] = []
    for done, (made, size, error) in enumerate(windowed(send, rows, jobs), 1):
        journal.crash_point("published an object")
        if progress is not None:
            progress(name, done, len(rows))
        if error is not None:
            errors.append(error)
        elif not made:
            summary.already_there += 1
        else:
            summary.bytes_sent += size
            if immutable:
                summary.created += 1
            else:
                summary.replaced += 1
    if errors:
        raise PublishError(
            f"{len(errors)} of {len(rows)} objects failed while {name}; nothing after this phase was sent, so "
            "readers keep the last checkpoint: fix the cause and publish again",
            errors,
        )


def _remove_stale(store: Store, p: Plan, summary: Summary, jobs: int, progress: Progress | None) -> None:
    doomed = [path for path in p.stale if removable(path, p.site_format)]
    summary.left_in_place = [path for path in p.stale if not removable(path, p.site_format)]
    errors: list[str] = []

    def remove(path: str) -> str | None:
        try:
            store.delete(path)
        except (StoreError, OSError) as e:
            return str(e)
        return None

    for done, error in enumerate(windowed(remove, doomed, jobs), 1):
        journal.crash_point("removed a page")
        if progress is not None:
            progress("removing pages no release lists", done, len(doomed))
        if error is not None:
            errors.append(error)
        else:
            summary.removed += 1
    if errors:
        raise PublishError(
            f"the release is published, but {len(errors)} of {len(doomed)} pages it no longer lists could not be "
            "removed: publish again to retry",
            errors,
        )


@dataclass(frozen=True)
class CheckResult:
    missing: list[str]
    altered: list[str]
    extra: list[str]
    checked: int


def check(store: Store, listing: list[tuple[str, str]], jobs: int = 8, progress: Progress | None = None) -> CheckResult:
    """Compare the site with the store, object by object, reading and hashing each."""
    present = set(store.keys())

    def look(row: tuple[str, str]) -> tuple[str, str | None, str]:
        path, sha = row
        if path not in present:
            return path, None, sha
        return path, store.digest(path), sha

    missing: list[str] = []
    altered: list[str] = []
    for done, (path, there, sha) in enumerate(windowed(look, listing, jobs), 1):
        if progress is not None:
            progress("checking the store", done, len(listing))
        if there is None:
            missing.append(path)
        elif there != sha:
            altered.append(path)
    listed = {p for p, _ in listing}
    extra = sorted((k for k in present if k not in listed), key=str.encode)
    return CheckResult(missing, altered, extra, len(listing))
