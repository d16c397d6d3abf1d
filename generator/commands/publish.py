"""`transparency publish TARGET`: send the built site to an S3-compatible bucket or a folder.

TARGET is `s3://BUCKET[/PREFIX]` or a folder's path. Only what changed since the last publish
to TARGET is sent (the record of it is in the private directory's cache), in the order of
generator.publish.publisher; `check` instead reads back every object and compares.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.core.progress import Progress
from generator.program.datadir import Paths, load_public_keys
from generator.publish import publisher
from generator.publish.folder_store import FolderStore, remove_leftovers
from generator.publish.s3_store import S3Store, parse_url
from generator.publish.store import Store, StoreError
from generator.state.publish_cache import read_record, record_path, write_record
from generator.verifier import ed25519_verify, parse_vkey


class PublishFailed(TransparencyError):
    """Some objects could not be published or checked (exit 1: the store, not the input)."""

    exit_code = 1


@dataclass(frozen=True)
class StoreOptions:
    endpoint_url: str | None = None
    region: str | None = None
    profile: str | None = None
    cors: bool = True


def open_store(target: str, options: StoreOptions) -> Store:
    if target.startswith("s3:"):
        try:
            parse_url(target)
        except ValueError as e:
            raise InputError([problem("TARGET", str(e))]) from None
        try:
            return S3Store(
                target,
                endpoint_url=options.endpoint_url,
                region=options.region,
                profile=options.profile,
                cors=options.cors,
            )
        except StoreError as e:
            raise InputError([problem("TARGET", str(e))]) from None
    if "://" in target:
        raise InputError([problem("TARGET", f"{target}: expected s3://BUCKET[/PREFIX] or a folder's path")])
    return FolderStore(Path(target))


def _failed(e: publisher.PublishError) -> TransparencyError:
    lines = [e.summary, *(f"  {p}" for p in e.problems)]
    if e.bad_input:
        return BadSite("\n".join(lines))
    return PublishFailed("\n".join(lines))


class BadSite(TransparencyError):
    """The site to publish is not one the build made as it is (exit 2: the input)."""


def _remember(record: Path, listing: list[tuple[str, str]]) -> None:
    # A record that cannot be written costs the next publish its shortcut, nothing else.
    write_record(record, listing)


def publish_site(
    paths: Paths,
    site: Path,
    target: str,
    options: StoreOptions,
    *,
    require_quorum: bool = True,
    jobs: int = 8,
    progress: Progress | None = None,
) -> publisher.Summary:
    store = open_store(target, options)
    if isinstance(store, FolderStore):
        here, there = site.resolve(), store.root.resolve()
        if there == here or here in there.parents or there in here.parents:
            raise InputError(
                [problem("TARGET", f"{target} is the site, inside it or holds it: publish to a folder beside it")]
            )
    record = record_path(paths.private / "cache", store.identity())
    # One publish to a target at a time: two would interleave their pages and checkpoints.
    with _locked(record, target):
        if isinstance(store, FolderStore) and store.root.exists():
            remove_leftovers(store.root)  # a killed run's, never a running one's: we hold the lock
        try:
            return publisher.publish(
                site,
                store,
                read_record(record),
                require_quorum=require_quorum,
                jobs=jobs,
                progress=progress,
                on_start=lambda rows: _remember(record, rows),
                on_done=lambda listing: _remember(record, listing),
                signed=_program_signed(paths),
            )
        except publisher.PublishError as e:
            raise _failed(e) from None
        except StoreError as e:
            raise PublishFailed(str(e)) from None


def _program_signed(paths: Paths) -> Callable[[bytes, bytes], bool]:
    """Whether a checksum list is signed by a key the program holds active (data/keys.json): the
    operator's own record of its key, not the site's copy, which the site could have replaced."""
    active = [parse_vkey(k.vkey).public_key for k in load_public_keys(paths, None) if k.status == "active"]
    return lambda data, signature: any(ed25519_verify(key, signature, data) for key in active)


@contextmanager
def _locked(record: Path, target: str) -> Iterator[None]:
    lock = record.with_suffix(".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise InputError([problem(str(lock), f"cannot open the publish lock: {e.strerror or e}")]) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                [problem("TARGET", f"another publish to {target} is running; wait for it, or run this one after it")]
            ) from None
        yield
    finally:
        os.close(fd)


def check_store(
    paths: Paths, site: Path, target: str, options: StoreOptions, jobs: int = 8, progress: Progress | None = None
) -> publisher.CheckResult:
    store = open_store(target, options)
    try:
        listing = list(publisher.site_listing(site))
        return publisher.check(store, listing, jobs, progress)
    except publisher.PublishError as e:
        raise _failed(e) from None
    except (StoreError, OSError) as e:
        raise PublishFailed(str(e)) from None
