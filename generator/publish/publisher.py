"""Publishing a release: what to send, in what order, and what to say about it.

The plan compares the site's checksum list with the record of the last publish to the same
target (one pass over two sorted lists) and sends only the paths whose bytes changed, in three
phases, each finished before the next starts:

1. new immutable objects, created only if absent;
2. the pages and indexes that changed, `SHA256SUMS` and its signature after every other;
3. the checkpoint;

and then removes what the last publish sent and this release no longer has, if it is a page
(a search shard renamed, say) or a partial tile whose full tile is now published (C2SP
tlog-tiles allows it); an immutable object is never removed, whatever the site says.

A reader therefore never sees a checkpoint whose tiles, proofs or pages are not there yet: until
phase 3 ends it sees the old checkpoint, whose objects are all still there, since nothing is ever
deleted. A failure stops the publish at the end of its phase, before the checkpoint; running it
again finishes the job.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from generator.core import layout
from generator.core.object_kinds import Kind, headers_for, kind_of
from generator.core.progress import Progress
from generator.program import journal
from generator.publish.store import Conflict, Store, StoreError
from generator.verifier import SUMS_LINE_RE, parse_policy, policy_problems

# Sent after every other page, before the checkpoint: the list a verifier starts from.
_LAST_PAGES = (layout.SUMS, layout.SUMS_SIG)
POLICY = "ledger/policy.txt"


class PublishError(Exception):
    """The publish could not start, or some objects failed; `problems` says which, one a line."""

    def __init__(self, summary: str, problems: list[str]) -> None:
        super().__init__(summary)
        self.summary = summary
        self.problems = problems


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
    phases: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    immutable: list[tuple[str, str]]
    pages: list[tuple[str, str]]
    checkpoint: tuple[str, str] | None
    unchanged: int
    stale: list[str]
    listing: list[tuple[str, str]]


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def site_listing(site: Path) -> Iterator[tuple[str, str]]:
    """(path, sha256) of every file of the site, in path-byte order: SHA256SUMS's lines (which
    the build verified and the verifier requires sorted), and the two files it cannot list."""
    sums = site / layout.SUMS
    if not sums.is_file():
        raise PublishError(f"{site}: no {layout.SUMS}: not a built site (run `transparency build`)", [])
    problems: list[str] = []
    listed: list[tuple[str, str]] = []
    for n, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), 1):
        m = SUMS_LINE_RE.fullmatch(line)
        if not m:
            problems.append(f"{sums}:{n}: expected `<sha256>  <path>`, found {line[:80]!r}")
            continue
        listed.append((m.group(2), m.group(1)))
    if problems:
        raise PublishError(f"{sums} is malformed", problems)
    extra = sorted(
        ((p, _file_sha256(site / p)) for p in _LAST_PAGES if (site / p).is_file()), key=lambda r: r[0].encode()
    )
    yield from heapq.merge(listed, extra, key=lambda r: r[0].encode())


def plan(listing: list[tuple[str, str]], record: Iterator[tuple[str, str]]) -> Plan:
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
        kind = kind_of(path)
        if kind is Kind.IMMUTABLE:
            if was is not None:
                problems.append(
                    f"{path}: published before with SHA-256 {was}, now {sha}: an immutable object is never rewritten"
                )
            immutable.append((path, sha))
        elif kind is Kind.CHECKPOINT:
            checkpoint = (path, sha)
        else:
            pages.append((path, sha))
    if problems:
        raise PublishError("this release would rewrite what was published", problems)
    # Kept in the site's order, but the list a verifier starts from after every other page.
    pages.sort(key=lambda r: (r[0] in _LAST_PAGES, _LAST_PAGES.index(r[0]) if r[0] in _LAST_PAGES else 0))
    stale = sorted(before, key=str.encode)
    return Plan(immutable, pages, checkpoint, unchanged, stale, listing)


_PARTIAL_TILE = re.compile(r"^(ledger/tile/.+)\.p/[0-9]+$")


def removable(path: str, listed: set[str]) -> bool:
    """Whether a path the last publish sent, and this release no longer lists, may be removed."""
    if kind_of(path) is Kind.PAGE:
        return True
    partial = _PARTIAL_TILE.match(path)
    return partial is not None and partial.group(1) in listed


def quorum_problems(site: Path) -> list[str]:
    """What keeps the site's checkpoint from meeting the quorum of the trust policy it ships."""
    policy_file = site / POLICY
    if not policy_file.is_file():
        return []
    note = (site / layout.CHECKPOINT).read_bytes()
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


def publish(
    site: Path,
    store: Store,
    record: Iterator[tuple[str, str]],
    *,
    require_quorum: bool = True,
    jobs: int = 8,
    progress: Progress | None = None,
    on_done: Callable[[list[tuple[str, str]]], None] | None = None,
) -> Summary:
    """Publish `site` to `store`; `on_done` gets the listing once everything is there."""
    if not (site / layout.CHECKPOINT).is_file():
        raise PublishError(f"{site}: no {layout.CHECKPOINT}: not a built site (run `transparency build`)", [])
    if require_quorum:
        missing = quorum_problems(site)
        if missing:
            raise PublishError(
                "the checkpoint does not meet the trust policy's quorum: publishing it would show readers a "
                "checkpoint their policy rejects (gather the cosignatures and build again, or publish with "
                "--without-quorum)",
                missing,
            )
    p = plan(list(site_listing(site)), record)
    summary = Summary(unchanged=p.unchanged)
    try:
        store.prepare()
    except StoreError as e:
        raise PublishError(str(e), []) from None
    _phase(site, store, "creating immutable objects", p.immutable, True, summary, jobs, progress)
    # SHA256SUMS and its signature go one after the other, after the rest of the pages.
    head = [r for r in p.pages if r[0] not in _LAST_PAGES]
    tail = [r for r in p.pages if r[0] in _LAST_PAGES]
    _phase(site, store, "replacing pages and indexes", head, False, summary, jobs, progress)
    _phase(site, store, "replacing the checksum list", tail, False, summary, 1, progress)
    if p.checkpoint is not None:
        _phase(site, store, "replacing the checkpoint", [p.checkpoint], False, summary, 1, progress)
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
) -> None:
    if not rows:
        return
    summary.phases.append((name, len(rows)))

    def send(row: tuple[str, str]) -> tuple[str, bool, int, str | None]:
        path, sha = row
        source = site / path
        try:
            if immutable:
                made = store.create(path, source, sha, headers_for(path))
            else:
                store.replace(path, source, sha, headers_for(path))
                made = True
        except Conflict as e:
            return path, False, 0, f"{e} (the store keeps it; a published object is never rewritten)"
        except (StoreError, OSError) as e:
            return path, False, 0, str(e)
        return path, made, source.stat().st_size if made else 0, None

    errors: list[str] = []
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        # map keeps the rows' order, so the errors come out in path order whatever finishes first.
        for _path, made, size, error in pool.map(send, rows):
            done += 1
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
            "readers still see the last release: fix the cause and publish again",
            errors,
        )


def _remove_stale(store: Store, p: Plan, summary: Summary, jobs: int, progress: Progress | None) -> None:
    listed = {path for path, _ in p.listing}
    doomed = [path for path in p.stale if removable(path, listed)]
    summary.left_in_place = [path for path in p.stale if not removable(path, listed)]
    errors: list[str] = []

    def remove(path: str) -> str | None:
        try:
            store.delete(path)
        except (StoreError, OSError) as e:
            return str(e)
        return None

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for done, error in enumerate(pool.map(remove, doomed), 1):
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
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for path, there, sha in pool.map(look, listing):
            done += 1
            if progress is not None:
                progress("checking the store", done, len(listing))
            if there is None:
                missing.append(path)
            elif there != sha:
                altered.append(path)
    listed = {p for p, _ in listing}
    extra = sorted((k for k in present if k not in listed), key=str.encode)
    return CheckResult(missing, altered, extra, len(listing))
