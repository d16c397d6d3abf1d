"""The build's steps, in the order they run, each naming what it reads and what it writes.

The order is a protocol: the entries and tiles first (they do not depend on the checkpoint's
cosignatures, and a witness that replays the rules is sent the new ones before it cosigns), the
checkpoint's documents and history once it is cosigned, the record pages on every core (all
written when their block ends, before anything reads them back), the search index after the last
record page (it indexes them), the feeds after the last page (the sitemap lists them), the
download archive after every other file (it holds them) and SHA256SUMS after it (it lists it).
`write_site` (generator.commands.build) runs `WRITE` in this order into the staging folder, and
the build stages the caches beside their places (`stage_caches`), both in a process forked for
them (generator.core.child_process), whose end gives all their memory back before the verifier
makes its own. The build's own process then verifies the staged site with the verify.py it ships,
swaps it in, and runs `AFTER_SWAP`: what it keeps of a release only once that release is published.

A step's `reads` and `writes` name site paths, values an earlier step makes ("the checkpoint"),
and the build's inputs: what `gather` read and checked, the signing key, the last release
(generator.build.previous_release), the private directory, the witnesses. A step comes after
every step whose writes it reads (a test holds the list to it), and ARCHITECTURE.md shows the
list (tools/architecture_doc.py writes it there).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from generator.build import (
    artifacts,
    cosigning,
    exports,
    history_files,
    log_list_entry,
    schemas,
    site_archive,
    sums_tree,
    timestamping,
)
from generator.build.gather import CertificateInfo, SiteContext
from generator.build.previous_release import PreviousRelease
from generator.build.release_continuity import check_published_unchanged
from generator.build.writer import SiteWriter
from generator.core import layout
from generator.core.cleanup import Cleanup
from generator.core.generator_errors import TransparencyError
from generator.core.key_schedule import BuildKeys
from generator.core.progress import Progress
from generator.program.datadir import Paths
from generator.program.ledgerfile import last_ledger_lines
from generator.site import feeds, pages, parallel, search
from generator.site.render import Renderer
from generator.site.views import links_view, systems_view, view_models
from generator.state import (
    archive_cache,
    build_cache,
    gather_cache,
    ledger_cache,
    listing_cache,
    page_cache,
    recheck_cache,
    search_record_cache,
    tree_cache,
)
from generator.state.cache_file import Staged
from generator.state.page_cache import PageMemo
from generator.verifier import TileBuilder, Tree, tile_paths

S = TypeVar("S")

# What a step reads that no step writes, apart from site paths read back.
EVERY_PAGE = "every page written above"
EVERY_FILE = "every file written above"
# A v3 site's inner lists, written after its download parts: a part holds its leaf's files and
# list, never an inner list (docs/formats/v3.md, 6).
INNER_LISTS = "v3: sums/<inner node>.sha256"


@dataclass(frozen=True)
class Step(Generic[S]):
    name: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    run: Callable[[S], None]
    # Rendered by the pool of every core: consecutive such steps share one pool, whose pages are
    # all written when the last of them returns.
    on_every_core: bool = False


@dataclass
class Lists:
    """The rows the lists, the system pages and each item's "used by" share, made once."""

    runs: list[view_models.RunRow]
    certificates: list[view_models.CertificateRow]
    runs_of_systems: list[systems_view.SystemRun]
    used_by: dict[str, Any]
    public_gates: set[str]


@dataclass
class Writing:
    """What the write steps share: their inputs, and the values a step makes for later ones."""

    ctx: SiteContext
    w: SiteWriter
    r: Renderer
    keys: BuildKeys
    progress: Progress | None = None
    carried: list[history_files.Archived] = field(default_factory=list)
    previous: PreviousRelease | None = None
    offline: bool = False
    memo: PageMemo | None = None
    # Made by the steps.
    proven: dict[int, str] = field(default_factory=dict)  # leaf index -> the artifact its proof is beside
    leaves: dict[int, bytes] = field(default_factory=dict)  # the leaves the inclusion proofs carry
    resumed_at: int = 0  # the last release's tree size, when the tiles went on from it
    checkpoint: bytes = b""
    policy: bytes | None = None
    history_rows: list[dict[str, Any]] = field(default_factory=list)
    lists: Lists | None = None
    # Caches a step wrote beside their place, put in place once the release is published.
    staged: list[Staged] = field(default_factory=list)
    # Public gates' answer keys, shown beside outputs: a thousand items, not a million.
    answers: dict[str, Any] = field(default_factory=dict)
    example: dict[str, str | None] | None = None
    # A public gate's item -> its commitment row, as found (pages.certificate_page_inputs).
    commitment_rows: dict[str, str | None] = field(default_factory=dict)
    tree: Tree | None = None  # a v3 site's checksum tree, once its leaves are written
    # Every path the spare release lists, when remembered (listing_cache.spare_paths): what a
    # reused staging folder holds, unless someone changed it (which the build's look counts).
    spare: Callable[[], Iterable[str] | None] | None = None


def _entries(b: Writing) -> None:
    ctx = b.ctx
    # The leaves the inclusion proofs carry, caught on the one pass that writes the entries.
    b.proven = {item.commit_index: layout.reveal(item.id) for item in ctx.revealed}
    b.proven.update({info.index: layout.certificate(info.serial) for info in ctx.certificates})
    resume = _resumed_tiles(b)
    tiles = history_files.Tiles(b.w, b.previous, (a.size for a in b.carried), resume)

    def keep(index: int, raw: bytes) -> None:
        tiles.append(raw)
        if index in b.proven:
            b.leaves[index] = raw

    if resume is not None:
        # From the last release's tree: only the leaves after it are read, from the ledger's end.
        for index, raw in enumerate(last_ledger_lines(ctx.paths, ctx.ledger.size - resume.size), resume.size):
            keep(index, raw)
    elif ctx.program.format >= 3:
        artifacts.replay_entries(ctx, keep)  # the ledger is its tiles: no entries document
    else:
        artifacts.write_entries(ctx, b.w, keep)
    tiles.finish(ctx.root)


def _resumed_tiles(b: Writing) -> TileBuilder | None:
    """A v3 build goes on from the last release's tree (its size the last archived checkpoint's)
    when every file it would otherwise make again from the older leaves is one the last build
    recorded, untouched since: its tiles, and the inclusion proof of every artifact it proved."""
    ctx = b.ctx
    if ctx.program.format < 3 or not b.carried or b.previous is None or not b.previous.reuse:
        return None
    size = max(a.size for a in b.carried if a.size <= ctx.ledger.size)
    if size == 0:
        return None
    # An older leaf a new proof carries (the commitment of an item retired now) is read from
    # its entry bundle, one the last build recorded.
    unproven = [i for i, rel in b.proven.items() if i < size and b.w.vouched(layout.tlog_proof(rel)) is None]
    older = history_files.older_leaves(b.w, size, unproven)
    if older is None:
        return None
    resume = history_files.resumed_tiles(b.w, size, ctx.tree.root(size), (a.size for a in b.carried))
    if resume is not None:
        b.leaves.update(older)
        b.resumed_at = size
    return resume


def _cosignatures(b: Writing) -> None:
    ctx = b.ctx
    cosigned = cosigning.cosign(
        ctx.paths,
        cosigning.load_policy(ctx.paths),
        artifacts.checkpoint_note(ctx, b.keys, _last_checkpoint(b.previous)),
        ctx.tree,
        b.previous,
        b.carried[-1].size if b.carried else 0,
        offline=b.offline,
        files=functools.partial(_new_files, ctx, b.w),
        demo_at=ctx.generated_at if ctx.demo else None,  # the demo runs its own published witness
    )
    b.checkpoint = cosigned.note
    ctx.warnings.extend(cosigned.warnings)
    b.policy = cosigning.policy_bytes(ctx.paths)
    if b.policy is not None:
        b.w.write(layout.POLICY, b.policy)


def _log_list(b: Writing) -> None:
    log_list_entry.write_log_list(b.ctx, b.w, feeds.base_url(b.ctx))


def _last_checkpoint(previous: PreviousRelease | None) -> bytes | None:
    path = previous.file(layout.CHECKPOINT) if previous is not None else None
    return path.read_bytes() if path is not None and path.is_file() else None


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


def _timestamps(b: Writing) -> None:
    ctx = b.ctx
    listed, authorities = timestamping.load_authorities(ctx.paths)
    if listed is None:
        return
    stamped = timestamping.stamp(ctx.paths, authorities, ctx.tree.size, b.checkpoint, ctx.ledger.last_at, b.offline)
    ctx.warnings.extend(stamped)
    sizes = [int(r["tree_size"]) for r in b.history_rows]
    for rel, data in timestamping.site_files(ctx.paths, listed, authorities, sizes):
        b.w.write(rel, data)
    ctx.bounds = timestamping.outside_bounds(ctx.paths, authorities, sizes)


def _ledger(b: Writing) -> None:
    artifacts.write_ledger(b.ctx, b.w, b.checkpoint, b.previous)


def _history(b: Writing) -> None:
    ctx = b.ctx
    proven = ((rel, index) for index, rel in sorted(b.proven.items()))
    if ctx.program.format >= 3:
        # Written once (docs/formats/v3.md, 1 and 2): what the last release published is kept.
        archive = history_files.v3_archive(b.carried, ctx.tree.size, b.checkpoint)
        b.history_rows = history_files.write_history_v3(b.w, ctx.signer, ctx.origin, ctx.tree, archive, b.previous)
        history_files.write_inclusion_proofs_v3(
            b.w, ctx.tree, archive[-1].checkpoint, archive, proven, functools.partial(_leaf, b), b.previous
        )
    else:
        b.history_rows = history_files.write_history(b.w, ctx.signer, ctx.origin, ctx.tree, b.checkpoint, b.carried)
        history_files.write_inclusion_proofs(b.w, ctx.tree, b.checkpoint, proven, b.leaves.__getitem__)
    if b.progress:
        b.progress("writing the ledger, its history and proofs", 1, 1)


def _leaf(b: Writing, index: int) -> bytes:
    """Leaf `index`, caught as the tiles were made; an older one, from the tiles a build that went
    on from the last release's tree took (a proof it found vouched for, changed since)."""
    if index not in b.leaves and index < b.resumed_at:
        older = history_files.older_leaves(b.w, b.resumed_at, [index])
        if older is None:
            raise TransparencyError(f"leaf {index}: the last release's tiles changed while this build ran; build again")
        b.leaves.update(older)
    return b.leaves[index]


def _keys(b: Writing) -> None:
    artifacts.write_keys(b.ctx, b.w)


def _methodologies(b: Writing) -> None:
    for m in b.ctx.methodologies:
        b.w.write(layout.methodology_parameters(m.version), m.params_bytes)
        b.w.write(layout.methodology_document(m.version), m.document.encode("utf-8"))
    pages.write_methodology_pages(b.ctx, b.w, b.r)


def _rows(b: Writing) -> None:
    ctx = b.ctx
    gate_names = {g.id: g.name for g in ctx.ledger.gates.values()}
    run_rows = view_models.run_rows(
        ctx.runs, ctx.certificates, gate_names, ctx.ledger.revocations, ctx.ledger.withdrawals
    )
    cert_rows = view_models.certificate_rows(ctx.certificates, gate_names, ctx.ledger.revocations, ctx.generated_at)
    runs_of_systems = systems_view.system_runs(run_rows, cert_rows)
    used_by = links_view.runs_by_item(ctx.runs, runs_of_systems, ctx.ledger.reveals)
    public_gates = {g.id for g in ctx.ledger.gates.values() if g.public}
    b.lists = Lists(run_rows, cert_rows, runs_of_systems, used_by, public_gates)


def _reveals(b: Writing) -> None:
    ctx, w, lists = b.ctx, b.w, _lists(b)
    for i, item in enumerate(ctx.revealed, start=1):
        data, doc = item.load(ctx.paths)
        if item.gate in lists.public_gates:
            b.answers[item.id] = doc["item"]["answer"]
        w.write(layout.reveal(item.id), data)
        pages.write_item_page(ctx, w, b.r, item, doc, lists.used_by.get(item.id, ()))
        if b.progress and (i % 1000 == 0 or i == len(ctx.revealed)):
            b.progress("writing reveals and their pages", i, len(ctx.revealed))


def _run_specs(b: Writing) -> None:
    for run in b.ctx.runs:
        b.w.write(layout.run_spec(run.id), run.spec_bytes)


def _certificates(b: Writing) -> None:
    ctx, w = b.ctx, b.w
    by_run = {row.id: row for row in _lists(b).runs}
    chosen = next((c for c in ctx.certificates if c.details_items), ctx.certificates[0] if ctx.certificates else None)
    archived = [int(r["tree_size"]) for r in b.history_rows]
    sources = exports.ExportSources(ctx, b.keys, archived, b.previous)
    for i, info in enumerate(ctx.certificates, start=1):
        if info is chosen or not _take_unchanged(b, info, by_run.get(info.run)):
            cert = info.load(ctx.paths)  # once, for the artifacts and the page: tens of thousands are not kept
            artifacts.write_certificate(ctx, w, cert, b.keys, b.previous)
            exports.write_exports(w, cert, sources)
            pages.write_certificate_page(ctx, w, b.r, cert, by_run.get(cert.run), b.answers)
        if info is chosen:
            signer = b.keys.for_leaf(cert.info.index) or ctx.signer.verifier
            b.example = pages.certificate_example(cert, layout.key_pem(signer.key_id.hex()))
        if b.progress and (i % 1000 == 0 or i == len(ctx.certificates)):
            b.progress("writing certificates and their pages", i, len(ctx.certificates))
    exports.write_credential_files(w, sources)


def _take_unchanged(b: Writing, info: CertificateInfo, run_row: view_models.RunRow | None) -> bool:
    """Take a certificate's files and page from the last release as they are, unread, when the
    memo knows its page made from the same facts (pages.certificate_page_inputs), which fix its
    files too, and the hash index vouches for each; its agreement files are written from the
    bytes the build holds. Else nothing is taken, and the caller writes it whole."""
    if b.memo is None or not b.memo.knows_last_release:
        return False
    page, twin, inputs = pages.certificate_page_inputs(b.ctx, info, run_row, b.answers, b.commitment_rows)
    digest = b.r.known_keyed(pages.CERTIFICATE_TEMPLATE, page, twin, inputs)
    if digest is None or not b.w.take_unchanged([*artifacts.certificate_files(info), page], {page: digest}):
        return False
    b.r.count_reused()
    for rel, data in info.agreement:
        b.w.write(rel, data)
    return True


def _list_pages(b: Writing) -> None:
    lists = _lists(b)
    pages.write_lists(b.ctx, b.w, b.r, lists.runs, lists.certificates, lists.runs_of_systems, b.progress)


def _lists(b: Writing) -> Lists:
    assert b.lists is not None, "the rows step runs first"
    return b.lists


def _home(b: Writing) -> None:
    pages.write_home(b.ctx, b.w, b.r, b.checkpoint)


def _keys_and_verify_pages(b: Writing) -> None:
    policy = b.policy.decode("utf-8") if b.policy else None
    pages.write_keys_and_verify_pages(b.ctx, b.w, b.r, b.example, b.history_rows[0]["checkpoint"], policy)


def _history_page(b: Writing) -> None:
    pages.write_history_page(b.w, b.r, b.history_rows, b.ctx.bounds)


def _check_page(b: Writing) -> None:
    pages.write_check_page(b.ctx, b.w, b.r, policy=b.policy is not None)


def _search(b: Writing) -> None:
    reuse = b.memo is not None and b.memo.knows_last_release
    # Which pages carry a record: read only where the last release is taken from (never under
    # --full), put in place with the other caches once this release passed its check. A site
    # written without a last release (not by a build) keeps no memory.
    place = search_record_cache.memory_path(b.ctx.paths.private)
    memory = None
    if b.previous is not None:
        memory = search_record_cache.load(place) if b.previous.reuse else {}
    pages.write_search_page(b.ctx, b.w, b.r, search.write_index(b.w, b.progress, reuse=reuse, memory=memory))
    staged = search_record_cache.stage(place, memory) if memory is not None else None
    if staged is not None:
        b.staged.append(staged)


def _schemas(b: Writing) -> None:
    schemas.write_schemas(b.w)


def _feeds(b: Writing) -> None:
    feeds.write_feeds(b.ctx, b.w, b.history_rows)


def _release_files(b: Writing) -> None:
    artifacts.write_release_files(b.ctx, b.w)


def _download(b: Writing) -> None:
    if b.ctx.program.format >= 3:
        b.tree = sums_tree.write_leaves(b.ctx, b.w)
    else:
        site_archive.write_download(b.ctx, b.w)


def _sums(b: Writing) -> None:
    if b.tree is not None:
        sums_tree.write_root(b.ctx, b.w, b.tree)
    else:
        b.w.finish(b.ctx.signer)


def _nothing_rewritten(b: Writing) -> None:
    if b.previous is not None:
        check_published_unchanged(b.previous, b.w.hashes, b.ctx.program.format)


GATHERED = "what gather read and checked"
# Every page is taken from the last release instead of rendered when the memo knows it was made
# from the very same values (generator.state.page_cache).
MEMO = "the page memo"


def _cache(name: str) -> str:
    return f"PRIVATE/cache/{name}"


LAST = "the last release"
PROOFS = "<artifact>.tlog-proof"

WRITE: tuple[Step[Writing], ...] = (
    Step(
        "entries and tiles",
        (
            f"the ledger ({GATHERED})",
            "the signing key",
            f"{LAST}: its full tiles (kept as they are)",
            "the archived checkpoints' sizes (their partial tiles)",
        ),
        (layout.ENTRIES, layout.sig(layout.ENTRIES), "ledger/tile/", "the leaves to prove"),
        _entries,
    ),
    Step(
        "cosignatures",
        (
            "the checkpoint, signed by the keys valid for its size",
            "data/policy.txt",
            "data/cosignatures/",
            f"{LAST}: its checkpoint's cosignatures",
            "the policy's witnesses (sent the new tiles and reveals)",
            "ledger/tile/",
        ),
        ("the checkpoint", layout.POLICY),
        _cosignatures,
    ),
    Step(
        "log list",
        (f"program.yaml's witness_qpd and contact, keys.json ({GATHERED})",),
        (layout.LOG_LIST,),
        _log_list,
    ),
    Step(
        "ledger documents",
        ("the checkpoint", GATHERED),
        (layout.CHECKPOINT, layout.COMMITMENTS, "ledger/commitments/ (format v3)", layout.REVOCATIONS, "their .sig"),
        _ledger,
    ),
    Step(
        "history and inclusion proofs",
        (
            "the checkpoint",
            f"the checkpoints published before (data/checkpoints/, {LAST})",
            "the leaves to prove",
            f"{LAST}: its consistency and inclusion proofs (format v3: kept as they are)",
        ),
        (layout.HISTORY, "ledger/checkpoints/", "ledger/consistency/", PROOFS, "the history's rows"),
        _history,
    ),
    Step(
        "timestamps",
        (
            "the checkpoint",
            "the history's rows",
            "data/timestamp-authorities.json",
            "data/timestamps/",
            "the listed timestamp authorities (asked for a token over a size none covers yet)",
        ),
        ("ledger/timestamp-authorities.json", "ledger/timestamps/<size>/<authority>.tst"),
        _timestamps,
    ),
    Step("keys", (GATHERED,), (layout.KEYS, "keys/<key id>.pem"), _keys),
    Step(
        "methodologies",
        (f"methodology versions ({GATHERED})", MEMO),
        ("methodology/<version>.json", "methodology/<version>.md", layout.METHODOLOGY_PAGE, "methodology/*/index.html"),
        _methodologies,
    ),
    Step("rows", (GATHERED,), ("the lists' rows",), _rows),
    Step(
        "reveals and item pages",
        ("reveal documents (read again, checked)", "the lists' rows", MEMO),
        ("reveals/<id>.json", "items/<id>.html", "public answer keys"),
        _reveals,
        on_every_core=True,
    ),
    Step("run specs", (f"run specs ({GATHERED})",), ("runs/<id>.json",), _run_specs, on_every_core=True),
    Step(
        "certificates and their pages",
        (
            "certificates and their documents (read again, checked)",
            "the lists' rows",
            "public answer keys",
            f"{LAST}: the signature of a certificate whose key is gone",
            MEMO,
        ),
        (
            "certificates/<serial>.json",
            "certificates/<serial>/ (documents, evidence, agreement files)",
            "certificates/<serial>/index.html",
            "an example certificate",
        ),
        _certificates,
        on_every_core=True,
    ),
    Step(
        "lists",
        ("the lists' rows", MEMO),
        (
            "gates/*.html",
            "pool/*.html",
            "retired/*.html",
            "runs/*.html",
            "certificates/*.html",
            "systems/*/index.html",
            "ledger/*.html",
        ),
        _list_pages,
        on_every_core=True,
    ),
    Step("home page", ("the checkpoint", MEMO), (layout.HOME,), _home),
    Step(
        "keys and verify pages",
        ("an example certificate", "the history's rows", layout.POLICY, MEMO),
        (layout.KEYS_PAGE, layout.VERIFY_PAGE),
        _keys_and_verify_pages,
    ),
    Step("history page", ("the history's rows", "the timestamp tokens", MEMO), (layout.HISTORY_PAGE,), _history_page),
    Step("check page", (layout.POLICY, MEMO), (layout.CHECK_PAGE,), _check_page),
    Step(
        "search",
        (
            "items/<id>.html",
            "certificates/<serial>/index.html",
            "systems/*/index.html",
            "methodology/*/index.html",
            f"{LAST}: the shards whose pages did not change",
            MEMO,
            _cache(search_record_cache.MEMORY_NAME),
        ),
        (f"{layout.SEARCH_INDEX_DIR}/", layout.SEARCH_PAGE, _cache(search_record_cache.MEMORY_NAME)),
        _search,
    ),
    Step("JSON Schemas", ("the package's schemas",), (f"{layout.SCHEMAS}/",), _schemas),
    Step(
        "feeds and sitemap",
        (EVERY_PAGE, "the history's rows"),
        ("feeds/*.xml", layout.SITEMAP, layout.sitemap_part("*"), layout.ROBOTS),
        _feeds,
    ),
    Step(
        "release files",
        (GATHERED, "the package's verify.py, style.css, check.js and mldsa44.js"),
        (
            layout.VERIFIER,
            layout.STYLE,
            layout.BROWSER_CHECK,
            layout.BROWSER_ML_DSA,
            layout.HOST_HEADERS,
            layout.MANIFEST,
            layout.manifest_part("*", 0).replace("/0.json", "/*.json"),
        ),
        _release_files,
    ),
    Step(
        "download archive",
        (EVERY_FILE, f"{LAST}: its archive's members, or its parts (v3)", _cache(archive_cache.RECORD_NAME)),
        (
            layout.ARCHIVE,
            layout.ARCHIVE_SUMS,
            "v3: sums/<leaf>.sha256, download/<leaf>.zip",
            _cache(archive_cache.RECORD_NAME),
        ),
        _download,
    ),
    Step(
        "SHA256SUMS",
        (EVERY_FILE, "the signing key"),
        (layout.SUMS, layout.SUMS_SIG, INNER_LISTS),
        _sums,
    ),
    Step(
        "nothing published rewritten",
        (EVERY_FILE, f"{LAST}: its {layout.SUMS}"),
        (),
        _nothing_rewritten,
    ),
)


def write_steps(b: Writing) -> None:
    """Run `WRITE` in its order, the steps marked on_every_core in one pool; then remove from a
    reused staging folder what the release does not hold."""
    for pooled, group in itertools.groupby(WRITE, key=lambda s: s.on_every_core):
        if not pooled:
            for step in group:
                step.run(b)
            continue
        with parallel.RenderPool(len(b.ctx.revealed) + 2 * len(b.ctx.certificates)) as pool:
            b.r.pool = pool
            for step in group:
                step.run(b)
        b.r.pool = None
    # A reused staging folder (generator.build.staging) loses what this release does not list.
    b.w.prune(b.spare() if b.spare is not None else None)


def stage_caches(ctx: SiteContext) -> list[Staged]:
    """What the caches remember of this gathering (the replayed ledger, its tree, the certificates
    recomputed), each written beside its place: so that the gathered state can be freed before
    the build verifies, and a refused or failed build changes nothing (AFTER_SWAP puts them in
    place, or the build discards them)."""
    c = ctx.caches
    if c is None:
        return []
    staged = [
        ledger_cache.stage(ctx.paths, c.replay) if c.replay is not None else None,
        tree_cache.stage_tree(ctx.paths, ctx.tree, c.tree_end) if c.tree_end is not None else None,
        c.rechecks.stage(),
        c.gathered.stage(),
    ]
    return [s for s in staged if s is not None]


@dataclass
class AfterSwap:
    """What the steps after the swap share: the release just published, and what the build keeps."""

    paths: Paths
    out: Path
    hashes: dict[str, str]  # every file of the release published, and its SHA-256
    finished: dict[str, str]  # SHA256SUMS and its signature, as the build wrote them (SiteWriter.finished)
    memo: PageMemo
    staged: list[Staged]
    inputs: build_cache.Inputs | None  # what the build read, when a build with nothing to do is possible
    said: build_cache.Published
    offline: bool
    look: build_cache.SiteLook | None  # the staged site before the verifier read it (build_cache.look_at_site)
    cleanup: Cleanup


def _save_memo(a: AfterSwap) -> None:
    if layout.SUMS in a.finished:
        a.memo.save(a.hashes, a.finished[layout.SUMS])


def _caches_in_place(a: AfterSwap) -> None:
    for s in a.staged:
        s.commit()


def _save_listing(a: AfterSwap) -> None:
    # What the tree lists is every file the build wrote: the tree is made of them (sums_tree).
    # Bound to the root the build wrote, not to what the published folder holds by now.
    # The last release's listing is now the spare's: the release this build replaced.
    listing_cache.keep_as_spare(a.paths)
    if layout.SUMS in a.finished:
        listing_cache.save(a.paths, a.finished[layout.SUMS], a.hashes)


def _keep_checkpoints(a: AfterSwap) -> None:
    # Published, then kept: a kill in between leaves them in the site, whence the next build
    # carries them, so no checkpoint is lost either way.
    for name, data in history_files.remember_published(a.out, a.paths.checkpoints_dir):
        if a.inputs is not None:
            a.inputs.archived(a.paths.checkpoints_dir, name, data)


def _record_build(a: AfterSwap) -> None:
    if a.inputs is None:
        return
    a.cleanup.wait()  # what the build removes is gone: the identities recorded are those that stay
    # SHA256SUMS and its signature as written, not as read now: an edit since is not vouched for.
    # One dict, not a ChainMap of the two: the record asks it of every file, and a ChainMap's
    # lookups are Python code (a second at a million items).
    build_cache.save(a.paths, a.inputs, a.said, a.out, a.offline, a.look, {**a.hashes, **a.finished})


AFTER_SWAP: tuple[Step[AfterSwap], ...] = (
    Step(
        "page memo",
        ("the pages' keys", f"the {layout.SUMS} the build wrote"),
        (_cache(page_cache.MEMO_NAME),),
        _save_memo,
    ),
    Step(
        "listing",
        ("the files' SHA-256es", f"the {layout.SUMS} the build wrote"),
        (_cache(listing_cache.SPARE_LISTING_NAME), _cache(listing_cache.LISTING_NAME)),
        _save_listing,
    ),
    Step(
        "caches in place",
        ("the caches staged",),
        (
            _cache(ledger_cache.SNAPSHOT_NAME),
            _cache(ledger_cache.COMMITS_NAME),
            _cache(tree_cache.TREE_NAME),
            _cache(recheck_cache.RECHECKS_NAME),
            _cache(gather_cache.GATHER_NAME),
        ),
        _caches_in_place,
    ),
    Step(
        "checkpoints kept",
        (f"the published {layout.HISTORY} and ledger/checkpoints/",),
        ("data/checkpoints/",),
        _keep_checkpoints,
    ),
    Step(
        "build record",
        ("what the build read", "the published site", "data/checkpoints/"),
        (_cache(build_cache.RECORD_NAME),),
        _record_build,
    ),
)
