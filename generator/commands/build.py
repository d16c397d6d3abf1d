"""`transparency build`: read, gather, write, verify, swap in.

Data flows one way: read and validate `data/` (generator.build.gather) → refuse anything that would
rewrite the last release (generator.build.release_continuity) → write every artifact and page into a
staging directory (generator.build.staging: the spare release, the one before the last), step by
step (generator.commands.build_steps.WRITE) → stage the caches; all of it in a forked process
(generator.core.child_process), so that the replayed ledger and the record of every file it wrote
are given back whole, not left beside the check's own state → run the very verifier the site
ships on it, pinned to our own key → swap it in, the release it replaces kept as the next spare →
keep what a published release leaves for the next build (build_steps.AFTER_SWAP). The last
release is one input, `PreviousRelease` (generator.build.previous_release), handed to every step
that reads it. A failure at any step before the swap leaves the previous site byte for byte as it
was.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import os
import pickle
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from generator.build import artifacts, cosigning, history_files
from generator.build.gather import SiteContext, gather
from generator.build.previous_release import PreviousRelease
from generator.build.release_continuity import check_format_kept, check_key_matches, check_ledger_extends
from generator.build.staging import Staging, is_replaceable_site, remove_leftovers, swap_in
from generator.build.writer import SiteWriter, prune_unlisted
from generator.commands import build_steps
from generator.core import child_process, heap, layout
from generator.core.cleanup import Cleanup
from generator.core.generator_errors import InputError, VerificationFailed, problem
from generator.core.progress import Progress
from generator.program.datadir import Paths
from generator.program.ledgerfile import ledger_lines, reading
from generator.site import pages
from generator.state import build_cache, listing_cache
from generator.state.cache_file import Staged
from generator.state.hash_index_cache import HashIndex, load_index
from generator.state.page_cache import PageMemo, memo_path
from generator.verifier import sha256_hex

# Set by the test suite: a bug in the published verifier raises there, instead of being reported
# as an internal error that fails the build like any other failure.
RAISE_INTERNAL_ERRORS = False


@dataclass(frozen=True)
class BuildResult:
    out: Path
    files: int
    tree_size: int
    checks: int
    seconds: float
    demo: bool
    warnings: list[str]
    fingerprint: str
    rendered: int = 0  # pages rendered
    kept: int = 0  # files taken as they were from the last release (pages the memo knew, and
    # artifacts whose bytes did not change)
    unchanged: bool = False  # nothing to do: the inputs and the site were as the last build left them


def build(
    paths: Paths,
    out: Path,
    progress: Progress | None = None,
    strict: bool = False,
    offline: bool = False,
    full: bool = False,
) -> BuildResult:
    """Build the site from `paths` into `out`; raise (leaving `out` untouched) on any problem.

    With strict=True, warnings (such as unknown keys in program.yaml) are errors too. With
    offline=True no witness is asked for a cosignature (those stored in data/ are still used).
    A build starts from what the caches under the private directory remember (the replayed
    ledger, what each page was made from) and is byte for byte the build from scratch that
    full=True forces: it reads no cache, replays every line, recomputes every certificate and
    renders every page (and leaves every cache for the next build)."""
    started = time.monotonic()
    cleanup = Cleanup()
    try:
        return _build(paths, out, progress, strict, offline, full, started, cleanup)
    finally:
        cleanup.wait()  # a build returns (or fails) with nothing of its own left beside the site


def _build(
    paths: Paths,
    out: Path,
    progress: Progress | None,
    strict: bool,
    offline: bool,
    full: bool,
    started: float,
    cleanup: Cleanup,
) -> BuildResult:
    remove_leftovers(out)
    if not is_replaceable_site(out):
        raise InputError(
            [
                problem(
                    str(out),
                    "the output exists and is not a site built by transparency (no transparency.json); refusing to "
                    "replace it",
                )
            ]
        )
    # Read back on every build; its files taken as they are only when not building from scratch.
    previous = PreviousRelease(out, reuse=not full)
    written: Written | None = None
    # What the writing hands over, pickled into two unnamed files opened before the fork: no
    # copy of it in either process's memory, and nothing left behind by a kill.
    with _handover_file(paths) as carried_file, _handover_file(paths) as after_file:
        # Made here, so that its lock is held until the release is swapped in, and discarded
        # below on any failure: the spare release (generator.build.staging), unless building
        # from scratch.
        staging = Staging(out, reuse=not full, cleanup=cleanup)
        try:
            # Written in a process of its own: the state a million-item release is written from
            # is given back whole before the release is checked (generator.core.child_process).

            def write(channel: child_process.Channel) -> Written:
                if channel.forked:
                    staging.leave_lock_to_parent()
                return _write_release(
                    paths, previous, staging, strict, offline, full, channel.progress, carried_file, after_file
                )

            written = child_process.run_step(write, progress)
            if written.unchanged is not None:
                staging.give_back()
                return _nothing_to_do(out, written.unchanged, strict, started)
            if progress:
                progress("verifying the built site", 0, 1)
            carried: dict[str, bytes] = _read_back(carried_file)
            # The look that takes the site's shape checks each carried file's identity too, so
            # the check looks at none of them again (a pass over every file of the site), and
            # takes the identities the build's record keeps, so the record looks at none either.
            look = build_cache.look_at_site(paths, staging.path, carried) if written.has_inputs else None
            if written.expected is not None and (look is None or look.counted != written.expected):
                # The spare held something its listing does not name (put there by someone):
                # removed now, by a walk, and the site looked at again.
                prune_unlisted(str(staging.path), _read_back(after_file))
                look = build_cache.look_at_site(paths, staging.path, carried)
            looked = look is not None
            report = self_check(
                staging.path,
                written.vkey,
                paths.private / "cache" / "verify",
                previous,
                full,
                carried,
                looked,
                paths.private / "cache" / FOLDERS_DIR,
            )
            # The verifier's state, and the files carried over that it was handed, are let go
            # before the steps after the swap walk the site: their peaks must not add up.
            del carried
            checks = report.checks
            if not report.ok:
                raise VerificationFailed(report.render())
            del report
            heap.release()
            if swap_in(staging.path, out, cleanup) and look is not None:
                # A folder sharing the site's files is being removed: their change times move
                # after the look, so the record looks at the site itself.
                look = dataclasses.replace(look, rows=None)
        except BaseException:
            staging.discard()
            for s in written.staged if written is not None else ():
                s.discard()
            raise
        staging.close()
        result = written.result
        assert result is not None
        hashes = _read_back(after_file)
        finished, memo, inputs = pickle.load(after_file)  # the second pickle, after the first
    said = build_cache.Published(result.files, result.tree_size, result.demo, result.fingerprint, result.warnings)
    published = build_steps.AfterSwap(
        paths, out, hashes, finished, memo, list(written.staged), inputs, said, offline, look, cleanup
    )
    for step in build_steps.AFTER_SWAP:
        step.run(published)
    return dataclasses.replace(result, checks=checks, seconds=time.monotonic() - started)


def _handover_file(paths: Paths) -> IO[bytes]:
    """An unnamed file (O_TMPFILE where there is one) beside the private caches: on disk, not in a
    memory-backed /tmp; the system's temporary folder if the cache folder cannot be made."""
    folder = paths.private / "cache"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        return tempfile.TemporaryFile(dir=folder)
    except OSError:
        return tempfile.TemporaryFile()


def _hand_over(value: object, f: IO[bytes]) -> None:
    pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    f.flush()  # the writing process ends with os._exit, which flushes nothing


def _read_back(f: IO[bytes]) -> Any:
    f.seek(0)
    return pickle.load(f)


@dataclass(frozen=True)
class Written:
    """What the process that wrote a release hands back: nothing to do (`unchanged`, what the
    last build said), or the release staged and what its check and the steps after the swap
    need (the larger parts pickled into the files it was handed, each read back when needed)."""

    unchanged: build_cache.Published | None = None
    result: BuildResult | None = None
    vkey: str = ""
    staged: tuple[Staged, ...] = ()
    has_inputs: bool = False
    # The files and folders the release holds, when the staging folder was pruned from the spare's
    # listing (SiteWriter.prune): the look at the site must count as many, or it is walked.
    expected: tuple[int, int] | None = None


def _write_release(
    paths: Paths,
    previous: PreviousRelease,
    staging: Staging,
    strict: bool,
    offline: bool,
    full: bool,
    progress: Progress | None,
    carried_file: IO[bytes],
    after_file: IO[bytes],
) -> Written:
    """Read, gather and write the release into `staging`, and stage the caches; or find that
    nothing changed since the last build. SiteWriter.carried is pickled into `carried_file`, and
    what the steps after the swap need into `after_file`."""
    cleanup = Cleanup()  # this process's own: what the search index puts aside
    try:
        with reading(paths):
            asks_witnesses = not offline and cosigning.policy_bytes(paths) is not None
            if not full and not asks_witnesses:
                last = build_cache.unchanged_by_identity(paths, previous.folder, offline)
                if last is not None:
                    return Written(unchanged=last)
            # A build that asks witnesses is never skipped, so its inputs are not worth reading.
            # What the last build hashed, by identity: none under --full, which reads every byte.
            index = HashIndex() if full else load_index(paths)
            previous.remember(None if full else listing_cache.load(paths, previous.sums_bytes()))
            inputs = None if asks_witnesses else build_cache.read_inputs(paths, previous.folder, offline, index)
            last = None if full or inputs is None else build_cache.unchanged(paths, inputs, previous.folder)
            if last is not None:
                return Written(unchanged=last)
            # The inputs' listing, when they were read whole (not when a link or a failure made the
            # record give up on them: then gather walks and reads for itself).
            listed = inputs.files if inputs is not None and inputs.outside is not None else None
            ctx = gather(paths, progress, use_snapshot=not full, files=listed)
            if strict and ctx.warnings:
                raise InputError([problem("--strict", w) for w in ctx.warnings], "warnings are errors under --strict")
            check_format_kept(previous, ctx.program.format)
            check_key_matches(previous, ctx.signer, ctx.ledger.keys)
            check_ledger_extends(previous, lambda: ledger_lines(paths), paths.show(paths.ledger_file), ctx.tree)
            carried = history_files.with_hand_overs(
                history_files.carried_checkpoints(
                    previous, ctx.origin, ctx.ledger.keys, ctx.tree, paths.checkpoints_dir
                ),
                artifacts.build_keys(ctx),
                ctx.origin,
                ctx.tree,
            )
            memo = PageMemo(memo_path(paths.private), previous.sums_bytes())
            writer = SiteWriter(staging.path, previous, cleanup, index.sha256, reused=staging.reused)
            # The spare release's own root, read before this release's takes its place: what it
            # lists is remembered by it. Only where the parent looks at the site, which counts it.
            spare = _spare_listing(paths, staging) if inputs is not None else None
            step_caches = write_site(ctx, writer, progress, carried, previous, offline, memo, spare)
        memo.written()
        result = BuildResult(
            previous.folder,
            len(writer.hashes) + 2,
            ctx.ledger.size,
            0,
            0.0,
            ctx.demo,
            ctx.warnings,
            ctx.signer.fingerprint,
            memo.rendered,
            writer.linked,
        )
        staged = [*step_caches, *build_steps.stage_caches(ctx)]
        vkey = ctx.signer.vkey
        del ctx  # freed before the pickling below, whose memo of every object pickled is its own peak
        try:
            _hand_over(writer.carried, carried_file)
            # The files' SHA-256es first, a pickle of their own: the prune after a count that
            # differs (`_build`) loads them alone.
            _hand_over(writer.hashes, after_file)
            _hand_over((writer.finished, memo, inputs), after_file)
        except BaseException:
            for s in staged:  # the build never hears of them: no one else would remove them
                s.discard()
            raise
        return Written(
            result=result,
            vkey=vkey,
            staged=tuple(staged),
            has_inputs=inputs is not None,
            expected=writer.expected() if writer.pruned_by_listing else None,
        )
    finally:
        cleanup.wait()


def _spare_listing(paths: Paths, staging: Staging) -> Callable[[], Iterable[str] | None] | None:
    """What the spare release taken as the staging folder lists, remembered by the SHA-256 of its
    root SHA256SUMS (listing_cache.spare_paths), read when the release is written; None for a
    fresh folder, or one whose root is not a regular file that can be read (whatever someone put
    there: a pipe is opened without waiting for a writer, and never read)."""
    if not staging.reused:
        return None
    try:
        fd = os.open(staging.path / layout.SUMS, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            release = hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)
    return functools.partial(listing_cache.spare_paths, paths, release)


FOLDERS_DIR = "site-folders"


def _folder_record(module: Any, folder: Path, site: Path, previous: PreviousRelease | None) -> Any:
    """The published verifier's FolderRecord for the staging folder `site`, named by its inode:
    the staging folder is the spare release, the folder this build's check before last walked,
    and becomes the published one. Only the records of these two folders are kept; a fresh
    staging folder starts a record of its own. (An inode a removed folder had may be another's
    later: each folder of the record is taken only where its inode, size and times are the
    ones recorded, which a new folder's change time is not.)"""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        mine = f"{os.lstat(site).st_ino}.folders"
        keep = {mine}
        if previous is not None and previous.folder.is_dir():
            keep.add(f"{os.lstat(previous.folder).st_ino}.folders")
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name not in keep:
                    os.unlink(entry.path)
    except OSError:
        return None
    record, _why = module.load_folders(folder / mine, site)
    return record


def _nothing_to_do(out: Path, last: build_cache.Published, strict: bool, started: float) -> BuildResult:
    """The result of a build whose inputs and site are those the last build read and published:
    that build's, with nothing written (and its warnings, errors under --strict, said again)."""
    if strict and last.warnings:
        raise InputError([problem("--strict", w) for w in last.warnings], "warnings are errors under --strict")
    return BuildResult(
        out,
        last.files,
        last.tree_size,
        0,
        time.monotonic() - started,
        last.demo,
        list(last.warnings),
        last.fingerprint,
        unchanged=True,
    )


def write_site(
    ctx: SiteContext,
    w: SiteWriter,
    progress: Progress | None = None,
    carried: list[history_files.Archived] | None = None,
    previous: PreviousRelease | None = None,
    offline: bool = False,
    memo: PageMemo | None = None,
    spare: Callable[[], Iterable[str] | None] | None = None,
) -> list[Staged]:
    """Every artifact and page, each input file read once and checked against its hash: the steps
    of generator.commands.build_steps.WRITE, in their order, ending with SHA256SUMS and the check
    that nothing the last release published is rewritten. Returns the caches the steps staged,
    to be put in place once the release is published.

    `previous` is the last release, whose full tiles are kept as they are (hard links), and whose
    checkpoint's cosignatures are kept when the checkpoint is the same. `offline` asks no witness.
    `memo` knows what each of the last release's pages was made from (generator.state.page_cache).
    `spare` gives what a reused staging folder lists (build_steps.Writing.spare)."""
    b = build_steps.Writing(
        ctx, w, pages.renderer(ctx, memo), artifacts.build_keys(ctx), progress, carried or [], previous, offline, memo
    )
    b.spare = spare
    try:
        build_steps.write_steps(b)
    except BaseException:
        for s in b.staged:  # the caller never hears of them
            s.discard()
        raise
    return b.staged


def self_check(
    site: Path,
    vkey: str,
    memory: Path | None = None,
    previous: PreviousRelease | None = None,
    full: bool = False,
    carried: Mapping[str, bytes] | None = None,
    looked: bool = False,
    folders: Path | None = None,
) -> Any:
    """The site verified by the very verify.py it ships: those bytes, loaded as a module of
    their own, pinned to our key. The report is that module's Report.

    With `memory` (a folder of the private cache) and the last release in `previous`, the new
    release must extend the last one's checkpoint, and is verified from what the verifier
    remembers of that release when it verified it (only new ledger entries replayed, only
    changed certificates recomputed); `full` verifies from nothing, remembering all the same.
    `carried` are the files taken from the last release as they were (SiteWriter.carried): their
    SHA-256 is not computed again while their identity is the one they had when hashed, so that
    the files this build wrote are the ones hashed; `looked` says each of their identities was
    found so in this run (build_cache.look_at_site), so the check does not look at them again. A
    file edited after that look (through the published folder, whose files these are) is not
    seen by the check, as one edited after the check's own look was not before: the window is
    from the look to the swap.

    `folders`: where what the check's walk found in each folder of the staging folder is kept,
    one record for each of the two folders a build stages into in turn (`_folder_record`): a
    folder of the spare release unchanged since its own check is not read again."""
    since: list[tuple[str, bytes, str | None]] = []
    if previous is not None and previous.file(layout.CHECKPOINT).is_file():
        since.append(("the last release's checkpoint", previous.file(layout.CHECKPOINT).read_bytes(), None))
    name = f"_published_verifier_{sha256_hex(site.as_posix().encode())[:12]}"
    spec = importlib.util.spec_from_file_location(name, site / layout.VERIFIER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while they are made
    # Never a bytecode cache beside the published verifier: a __pycache__ folder in the site is
    # a failure of its check (a file no SHA256SUMS lists, Python code a verifier could import).
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        try:
            spec.loader.exec_module(module)
        finally:
            sys.dont_write_bytecode = writes_bytecode
        vars(module)["RAISE_INTERNAL_ERRORS"] = RAISE_INTERNAL_ERRORS
        record = _folder_record(module, folders, site, previous) if folders is not None else None
        return module.verify_site(
            site,
            vkey,
            since=since,
            memory=memory,
            full=full,
            known_files=carried,
            known_from="the build computed when it took them from the last release",
            known_now=looked,
            folders=record,
        )
    finally:
        del sys.modules[name]
