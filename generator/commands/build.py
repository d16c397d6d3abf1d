"""`transparency build`: read, gather, write, verify, swap in.

Data flows one way: read and validate `data/` (generator.build.gather) → refuse anything that would
rewrite the last release (generator.build.release_continuity) → write every artifact (generator.build.artifacts) and
page (generator.site.pages) into a staging directory → run the very verifier the site ships on it,
pinned to our own key → swap it in. A failure at any step leaves the previous site byte for byte
as it was.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.build import artifacts, cosigning, history_files, schemas, site_archive
from generator.build.gather import SiteContext, gather
from generator.build.release_continuity import check_key_matches, check_ledger_extends, check_published_unchanged
from generator.build.writer import SiteWriter, Staging, is_replaceable_site, remove_leftovers, swap_in
from generator.core import heap, layout
from generator.core.cleanup import Cleanup
from generator.core.generator_errors import InputError, VerificationFailed, problem
from generator.core.progress import Progress
from generator.program.datadir import Paths
from generator.program.ledgerfile import ledger_lines, reading
from generator.site import feeds, pages, parallel, search
from generator.site.views import links_view, systems_view, view_models
from generator.state import build_cache
from generator.state.page_cache import PageMemo, memo_path
from generator.verifier import sha256_hex, tile_paths

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
    with reading(paths):
        asks_witnesses = not offline and cosigning.policy_bytes(paths) is not None
        if not full and not asks_witnesses:
            last = build_cache.unchanged_by_identity(paths, out, offline)
            if last is not None:
                return _nothing_to_do(out, last, strict, started)
        # A build that asks witnesses is never skipped, so its inputs are not worth reading.
        inputs = None if asks_witnesses else build_cache.read_inputs(paths, out, offline)
        last = None if full or inputs is None else build_cache.unchanged(paths, inputs, out)
        if last is not None:
            return _nothing_to_do(out, last, strict, started)
        ctx = gather(paths, progress, use_snapshot=not full)
        if strict and ctx.warnings:
            raise InputError([problem("--strict", w) for w in ctx.warnings], "warnings are errors under --strict")
        check_key_matches(out, ctx.signer, ctx.ledger.keys)
        check_ledger_extends(out, lambda: ledger_lines(paths), paths.show(paths.ledger_file), ctx.tree)
        keys = artifacts.build_keys(ctx)
        carried = history_files.with_hand_overs(
            history_files.carried_checkpoints(out, ctx.origin, ctx.ledger.keys, ctx.tree, paths.checkpoints_dir),
            keys,
            ctx.origin,
            ctx.tree,
        )
        staging = Staging(out)
        memo = PageMemo(memo_path(paths.private), None if full else out)
        try:
            writer = SiteWriter(staging.path, None if full else out, cleanup)
            write_site(ctx, writer, progress, carried, out, offline, memo)
            check_published_unchanged(out, writer.hashes)
        except BaseException:
            staging.discard()
            raise
    result = BuildResult(
        out,
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
    vkey = ctx.signer.vkey
    # A million-item ledger's state is not needed twice: what the caches keep of it is written
    # now, beside their places, and the state freed before the verifier makes its own.
    staged = [s for s in (stage() for stage in ctx.remember) if s is not None]
    del ctx
    heap.release()
    try:
        if progress:
            progress("verifying the built site", 0, 1)
        shape = build_cache.site_shape(staging.path) if inputs is not None else None
        report = self_check(staging.path, vkey, paths.private / "cache" / "verify", out, full)
        if not report.ok:
            raise VerificationFailed(report.render())
        swap_in(staging.path, out, cleanup)
    except BaseException:
        staging.discard()
        for s in staged:
            s.discard()
        raise
    staging.close()
    memo.save(writer.hashes, (out / layout.SUMS).read_bytes())
    for s in staged:
        s.commit()
    # Published, then kept: a kill in between leaves them in the site, whence the next build
    # carries them, so no checkpoint is lost either way.
    for name, data in history_files.remember_published(out, paths.checkpoints_dir):
        if inputs is not None:
            inputs.archived(paths.checkpoints_dir, name, data)
    if inputs is not None:
        said = build_cache.Published(result.files, result.tree_size, result.demo, result.fingerprint, result.warnings)
        site = build_cache.site_digest(out, writer.hashes)
        cleanup.wait()  # the last release gone: the identities recorded are those that stay
        build_cache.save(paths, inputs, site, said, out, offline, shape)
    return dataclasses.replace(result, checks=report.checks, seconds=time.monotonic() - started)


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
    previous: Path | None = None,
    offline: bool = False,
    memo: PageMemo | None = None,
) -> None:
    """Every artifact and page, each input file read once and checked against its hash.

    `previous` is the last release, whose full tiles are kept as they are (hard links), and whose
    checkpoint's cosignatures are kept when the checkpoint is the same. `offline` asks no witness.
    `memo` knows what each of the last release's pages was made from (generator.state.page_cache)."""
    r = pages.renderer(ctx, memo)
    keys = artifacts.build_keys(ctx)
    # The leaves the inclusion proofs carry, caught on the one pass that writes the entries.
    proven = {item.commit_index: layout.reveal(item.id) for item in ctx.revealed}
    proven.update({info.index: layout.certificate(info.serial) for info in ctx.certificates})
    leaves: dict[int, bytes] = {}
    tiles = history_files.Tiles(w, previous)

    def keep(index: int, raw: bytes) -> None:
        tiles.append(raw)
        if index in proven:
            leaves[index] = raw

    # The entries and their tiles first: they do not depend on the checkpoint's cosignatures,
    # and a witness that replays the rules is sent the new ones before it cosigns.
    artifacts.write_entries(ctx, w, keep)
    tiles.finish(ctx.root)
    policy = cosigning.load_policy(ctx.paths)
    cosigned = cosigning.cosign(
        ctx.paths,
        policy,
        artifacts.checkpoint_note(ctx, keys),
        ctx.tree,
        previous,
        carried[-1].size if carried else 0,
        offline=offline,
        files=functools.partial(_new_files, ctx, w),
        demo_at=ctx.generated_at if ctx.demo else None,  # the demo runs its own published witness
    )
    checkpoint = cosigned.note
    ctx.warnings.extend(cosigned.warnings)
    policy_data = cosigning.policy_bytes(ctx.paths)
    if policy_data is not None:
        w.write(layout.POLICY, policy_data)
    artifacts.write_ledger(ctx, w, checkpoint)
    history_rows = history_files.write_history(w, ctx.signer, ctx.origin, ctx.tree, checkpoint, carried or [])
    history_files.write_inclusion_proofs(
        w, ctx.tree, checkpoint, ((rel, index) for index, rel in sorted(proven.items())), leaves.__getitem__
    )
    if progress:
        progress("writing the ledger, its history and proofs", 1, 1)
    artifacts.write_keys(ctx, w)
    for m in ctx.methodologies:
        w.write(layout.methodology_parameters(m.version), m.params_bytes)
        w.write(layout.methodology_document(m.version), m.document.encode("utf-8"))
    pages.write_methodology_pages(ctx, w, r)
    gate_names = {g.id: g.name for g in ctx.ledger.gates.values()}
    run_rows = view_models.run_rows(
        ctx.runs, ctx.certificates, gate_names, ctx.ledger.revocations, ctx.ledger.withdrawals
    )
    # Made once, for the lists, the system pages and each revealed item's "used by".
    cert_rows = view_models.certificate_rows(ctx.certificates, gate_names, ctx.ledger.revocations, ctx.generated_at)
    runs_of_systems = systems_view.system_runs(run_rows, cert_rows)
    used_by = links_view.runs_by_item(ctx.runs, runs_of_systems, ctx.ledger.reveals)
    public_gates = {g.id for g in ctx.ledger.gates.values() if g.public}
    answers: dict[str, Any] = {}  # public gates' answer keys, shown beside outputs: a thousand items, not a million
    # The bulk of the pages (items, certificates, lists) rendered on every core; all written
    # by the end of the block, before anything reads them back.
    with parallel.RenderPool(len(ctx.revealed) + 2 * len(ctx.certificates)) as pool:
        r.pool = pool
        for i, item in enumerate(ctx.revealed, start=1):
            data, doc = item.load(ctx.paths)
            if item.gate in public_gates:
                answers[item.id] = doc["item"]["answer"]
            w.write(layout.reveal(item.id), data)
            pages.write_item_page(ctx, w, r, item, doc, used_by.get(item.id, ()))
            if progress and (i % 1000 == 0 or i == len(ctx.revealed)):
                progress("writing reveals and their pages", i, len(ctx.revealed))
        for run in ctx.runs:
            w.write(layout.run_spec(run.id), run.spec_bytes)
        by_run = {row.id: row for row in run_rows}
        chosen = next(
            (c for c in ctx.certificates if c.details_items), ctx.certificates[0] if ctx.certificates else None
        )
        example = None
        for i, info in enumerate(ctx.certificates, start=1):
            cert = info.load(ctx.paths)  # once, for the artifacts and the page: tens of thousands are not kept
            artifacts.write_certificate(ctx, w, cert, keys, previous)
            pages.write_certificate_page(ctx, w, r, cert, by_run.get(cert.run), answers)
            if info is chosen:
                signer = keys.for_leaf(cert.info.index) or ctx.signer.verifier
                example = pages.certificate_example(cert, layout.key_pem(signer.key_id.hex()))
            if progress and (i % 1000 == 0 or i == len(ctx.certificates)):
                progress("writing certificates and their pages", i, len(ctx.certificates))
        pages.write_lists(ctx, w, r, run_rows, cert_rows, runs_of_systems, progress)
    r.pool = None
    pages.write_home(ctx, w, r, checkpoint)
    pages.write_keys_and_verify_pages(
        ctx, w, r, example, history_rows[0]["checkpoint"], policy_data.decode("utf-8") if policy_data else None
    )
    pages.write_history_page(w, r, history_rows)
    pages.write_check_page(ctx, w, r, policy=policy_data is not None)
    pages.write_search_page(
        ctx, w, r, search.write_index(w, progress, reuse=memo is not None and memo.knows_last_release)
    )  # after the last record page, which it indexes
    schemas.write_schemas(w)
    feeds.write_feeds(ctx, w, history_rows)  # after the last page: the sitemap lists them all
    artifacts.write_release_files(ctx, w)
    site_archive.write_download(ctx, w)  # after every other file, which it holds; before SHA256SUMS, which lists it
    w.finish(ctx.signer)


def _new_files(ctx: SiteContext, w: SiteWriter, old: int) -> list[tuple[str, bytes]]:
    """What a copy of the site at size `old` lacks to replay the rules up to today's checkpoint:
    the tiles of today's log that the log of `old` did not have (full ones that have filled, the
    partial ones of today's width), as staged, and the documents of the reveals since `old`."""
    if not 0 <= old <= ctx.tree.size:
        return []  # the witness saw another history: it refuses whatever it is sent
    known = {rel for rel, _ in tile_paths(old)}
    rels = [layout.tile(rel) for rel, _ in tile_paths(ctx.tree.size) if rel not in known]
    files = [(rel, (w.root / rel).read_bytes()) for rel in rels]
    return files + [(layout.reveal(i.id), i.load(ctx.paths)[0]) for i in ctx.revealed if i.reveal_index >= old]


def self_check(
    site: Path, vkey: str, memory: Path | None = None, previous: Path | None = None, full: bool = False
) -> Any:
    """The site verified by the very verify.py it ships: those bytes, loaded as a module of
    their own, pinned to our key. The report is that module's Report.

    With `memory` (a folder of the private cache) and the last release in `previous`, the new
    release must extend the last one's checkpoint, and is verified from what the verifier
    remembers of that release when it verified it (only new ledger entries replayed, only
    changed certificates recomputed); `full` verifies from nothing, remembering all the same."""
    since: list[tuple[str, bytes, str | None]] = []
    if previous is not None and (previous / layout.CHECKPOINT).is_file():
        since.append(("the last release's checkpoint", (previous / layout.CHECKPOINT).read_bytes(), None))
    name = f"_published_verifier_{sha256_hex(site.as_posix().encode())[:12]}"
    spec = importlib.util.spec_from_file_location(name, site / layout.VERIFIER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while they are made
    try:
        spec.loader.exec_module(module)
        vars(module)["RAISE_INTERNAL_ERRORS"] = RAISE_INTERNAL_ERRORS
        return module.verify_site(site, vkey, since=since, memory=memory, full=full)
    finally:
        del sys.modules[name]
