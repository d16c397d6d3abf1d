"""The site's pages: one template per page kind, each filled from a view model whose every link
is already a site path (templates build none), and every list paged the one way (`_paged`).
"""

from __future__ import annotations

import base64
import bisect
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator import __version__
from generator.build.artifacts import commitment_rows, keys_document, verifier_bytes
from generator.build.gather import CertificateInfo, CertificateRecord, MethodologyVersion, RevealedItem, SiteContext
from generator.build.writer import SiteWriter
from generator.core import layout
from generator.core.digest import RowDigests
from generator.core.progress import Progress
from generator.program.ledgerfile import ledger_lines
from generator.program.methodology_files import describe
from generator.site import search
from generator.site.feeds import base_url
from generator.site.render import NavItem, Renderer
from generator.site.views import ledger_view, links_view, systems_view, view_models
from generator.site.views.events_view import event_link, event_summary
from generator.site.views.examples_view import worked_examples
from generator.state.page_cache import PageMemo
from generator.verifier import ML_DSA_KEYS_MEMBER, OutsideBound, parse_vkey, sha256_hex


@dataclass(frozen=True)
class ItemRow:
    """A revealed item in a list: its facts and its page."""

    id: str
    gate: str
    field_names: tuple[str, ...]
    committed_at: str
    revealed_at: str
    note: str
    page: str
    drawn_round: int | None = None  # retired by a scheduled draw, not for cause


@dataclass(frozen=True)
class GateView:
    id: str
    name: str
    public: bool
    page: str | None  # the list of its items (public gates only)


def _item_row(item: RevealedItem) -> ItemRow:
    return ItemRow(
        item.id,
        item.gate,
        item.field_names,
        item.committed_at,
        item.revealed_at,
        item.note,
        layout.item_page(item.id),
        item.drawn_round,
    )


def _methodology_view(m: MethodologyVersion) -> dict[str, Any]:
    return {
        "m": m,
        "page": layout.methodology_page(m.version),
        "parameters": layout.methodology_parameters(m.version),
        "document": layout.methodology_document(m.version),
    }


# The home page shows this many of the newest certificates and results; the list has them all.
LATEST_CERTIFICATES = 6


def navigation(ctx: SiteContext) -> list[NavItem]:
    """What a first-time visitor looks for first (certificates, systems, search, checking a file),
    then what an auditor reads."""
    nav = [
        NavItem("Home", layout.HOME),
        NavItem("Certificates", layout.CERTIFICATES_PAGE),
        NavItem("Systems", layout.SYSTEMS_PAGE),
        NavItem("Search", layout.SEARCH_PAGE),
        NavItem("Check a file", layout.CHECK_PAGE),
        NavItem("Methodology", layout.METHODOLOGY_PAGE),
    ]
    for g in ctx.ledger.gates.values():
        if g.public:
            nav.append(NavItem(g.name, layout.gate_page(g.id)))
    nav += [
        NavItem("Retired items", layout.RETIRED_PAGE),
        NavItem("Commitments", layout.POOL_PAGE),
        NavItem("Runs", layout.RUNS_PAGE),
        NavItem("Ledger", layout.LEDGER_PAGE),
        NavItem("History", layout.HISTORY_PAGE),
        NavItem("Keys", layout.KEYS_PAGE),
        NavItem("Verify it yourself", layout.VERIFY_PAGE),
    ]
    return nav


def renderer(ctx: SiteContext, memo: PageMemo | None = None) -> Renderer:
    """The renderer with what every page shares: the program, its key, the demo banner; with
    a `memo`, pages made from the same values as last time are not rendered again."""
    key = parse_vkey(next(k for k in ctx.public_keys if k.status == "active").vkey)
    return Renderer(
        {
            "program": ctx.program,
            "demo": ctx.demo,
            "origin": ctx.origin,
            "fingerprint": key.fingerprint,
            "key_pem": layout.key_pem(key.key_id.hex()),
        },
        navigation(ctx),
        memo,
        rows=_rows_apart(),
    )


def _rows_apart() -> RowDigests:
    # The rows an item's page and a system's pages show, thousands of them each shown on
    # several pages (a system's whole list of runs is in each of its pages' values).
    return RowDigests((systems_view.SystemView, systems_view.SystemRun, systems_view.Standing, view_models.RunRow))


def write_home(ctx: SiteContext, w: SiteWriter, r: Renderer, checkpoint: bytes) -> None:
    ledger = ctx.ledger
    revealed = len(ledger.reveals)
    counts = {
        "ledger entries": ledger.size,
        "gates": len(ledger.gates),
        "committed items": ledger.commit_count,
        "revealed items": revealed,
        "sealed items": ledger.commit_count - revealed,
        "runs": len(ledger.runs),
        "certificates": len(ledger.certificates),
    }
    current = ctx.methodologies[-1] if ctx.methodologies else None
    r.write(
        w,
        "home.html",
        layout.HOME,
        ctx.program.name,
        layout.MANIFEST,
        description=ctx.program_html,
        released_at=ctx.generated_at,
        checkpoint=checkpoint.decode("utf-8"),
        tree_size=ledger.size,
        root_b64=base64.b64encode(ctx.root).decode(),
        root_hex=ctx.root.hex(),
        counts=counts,
        latest=[
            {"index": i, "at": leaf["at"], "text": event_summary(leaf), "link": event_link(leaf)}
            for i, leaf in ctx.latest
        ],
        gates=[
            GateView(g.id, g.name, g.public, layout.gate_page(g.id) if g.public else None)
            for g in ledger.gates.values()
        ],
        methodology=_methodology_view(current) if current else None,
        latest_certificates=list(
            reversed(
                view_models.certificate_rows(
                    ctx.certificates[-LATEST_CERTIFICATES:],
                    {g.id: g.name for g in ledger.gates.values()},
                    ledger.revocations,
                    ctx.generated_at,
                )
            )
        ),
    )


def write_methodology_pages(ctx: SiteContext, w: SiteWriter, r: Renderer) -> None:
    """A page per version, and the current version's again as the methodology page."""
    current = ctx.methodologies[-1] if ctx.methodologies else None
    versions = [_methodology_view(m) for m in ctx.methodologies]
    pages = [(m, layout.methodology_page(m.version), f"Methodology {m.version}", False) for m in ctx.methodologies]
    if current is not None:
        pages.append((current, layout.METHODOLOGY_PAGE, "Methodology", True))
    examples = {m.version: worked_examples(m.methodology) for m in ctx.methodologies}
    for m, page, title, is_index in pages:
        r.write(
            w,
            "methodology.html",
            page,
            title,
            layout.methodology_parameters(m.version),
            this=_methodology_view(m),
            m=m,
            table=describe(m.params),
            versions=versions,
            current=_methodology_view(current) if current else None,
            is_index=is_index,
            examples=examples[m.version],
            search_record=None if is_index else search.methodology_record(m),
        )


def write_item_page(
    ctx: SiteContext,
    w: SiteWriter,
    r: Renderer,
    item: RevealedItem,
    doc: dict[str, Any],
    used_by: Sequence[systems_view.SystemRun] = (),
) -> None:
    """A revealed item's page, from its reveal document (read once, with the artifact), and
    `used_by`, the runs whose run spec lists it (links_view.runs_by_item), the first PAGE_SIZE shown."""
    page = layout.item_page(item.id)
    r.write(
        w,
        "item.html",
        page,
        f"Item {item.id}",
        layout.reveal(item.id),
        item=item,
        reveal_path=layout.reveal(item.id),
        proof_path=layout.tlog_proof(layout.reveal(item.id)),
        doc=doc,
        gate=ctx.ledger.gates[item.gate],
        answer=[{"name": k, **v} for k, v in doc["item"]["answer"].items()],
        commitment_row=links_view.commitment_link(ctx.ledger, item.id),
        used_by=used_by[: layout.PAGE_SIZE],
        used_by_total=len(used_by),
        rows_apart=bool(used_by),  # each run is shown on the page of every item it used
        search_record=search.item_record(item, ctx.ledger.gates[item.gate].name),
    )


def write_lists(
    ctx: SiteContext,
    w: SiteWriter,
    r: Renderer,
    run_rows: Sequence[view_models.RunRow],
    cert_rows: Sequence[view_models.CertificateRow],
    runs_of_systems: Sequence[systems_view.SystemRun],
    progress: Progress | None = None,
) -> None:
    """Every list of the site, paged: each public gate's items, the retired items, the
    commitments, the runs, the certificates, the systems and the ledger. `cert_rows` and
    `runs_of_systems` are the build's, made once (systems_view.system_runs of the run and
    certificate rows)."""
    for g in ctx.ledger.gates.values():
        if g.public:
            items = [_item_row(i) for i in ctx.revealed if i.gate == g.id]
            _paged(
                w,
                r,
                len(items),
                functools.partial(layout.gate_page, g.id),
                g.name,
                "gate.html",
                layout.MANIFEST,
                functools.partial(_slice, items),
                gate=g,
            )
    retired = [_item_row(i) for i in ctx.revealed if i.reason == "retired"]
    _paged(
        w,
        r,
        len(retired),
        layout.retired_page,
        "Retired items",
        "retired.html",
        layout.MANIFEST,
        lambda lo, hi: {"items": retired[lo:hi]},
    )

    write_pool_pages(ctx, w, r, progress)
    _paged(
        w,
        r,
        len(run_rows),
        layout.runs_page,
        "Runs",
        "runs.html",
        layout.MANIFEST,
        lambda lo, hi: {
            "groups": view_models.group_rows(run_rows[lo:hi]),
            "count": len(run_rows[lo:hi]),
            "first": lo + 1,
        },
    )
    listed = systems_view.listed_certificates(cert_rows, {c.serial: str(c.subject["id"]) for c in ctx.certificates})
    _paged(
        w,
        r,
        len(listed),
        layout.certificates_page,
        "Certificates",
        "certificates.html",
        layout.MANIFEST,
        lambda lo, hi: {"rows": listed[lo:hi], "first": lo + 1},
        revocations=layout.REVOCATIONS,
        certified=sum(1 for c in cert_rows if c.verdict == "certified"),
    )
    write_system_pages(w, r, runs_of_systems, cert_rows)
    write_ledger_pages(ctx, w, r, run_rows, progress)


def write_pool_pages(ctx: SiteContext, w: SiteWriter, r: Renderer, progress: Progress | None = None) -> None:
    """The commitment list, a page at a time, each keyed by its commits (by the leaf hashes of
    the entries that hold them) and which of them are revealed."""
    ledger = ctx.ledger
    revealed = sorted(p for i in ledger.reveals if (p := ledger.commit_position(i)) is not None)

    def inputs(lo: int, hi: int) -> tuple[Any, ...]:
        first, last = (
            (ledger_view.commit_leaf(ledger, lo), ledger_view.commit_leaf(ledger, hi - 1)) if hi > lo else (0, -1)
        )
        opened = revealed[bisect.bisect_left(revealed, lo) : bisect.bisect_left(revealed, hi)]
        return (lo, hi, ctx.tree.leaf_hashes(first, last + 1), opened)

    def rows(lo: int, hi: int) -> dict[str, Any]:
        listed = [
            {**row, "page": layout.item_page(row["id"]) if row["status"] == "revealed" else None}
            for row in commitment_rows(ctx, lo, hi)
        ]
        return {"rows": listed, "first": lo + 1}

    _paged(
        w,
        r,
        ledger.commit_count,
        layout.pool_page,
        "Commitments",
        "pool.html",
        # A v3 page's rows are one part of the list, as long as a page (docs/formats/v3.md, 4).
        (lambda p: layout.commitment_part(p - 1)) if ctx.program.format >= 3 else layout.COMMITMENTS,
        rows,
        inputs,
        progress=progress,
        gates=ledger.gates,
        commitments_sig=layout.sig(layout.COMMITMENTS),
    )


def write_system_pages(
    w: SiteWriter,
    r: Renderer,
    runs_of_systems: Sequence[systems_view.SystemRun],
    cert_rows: Sequence[view_models.CertificateRow],
) -> None:
    """The systems, by name, and a page per system: its runs on every gate and where each of
    its certificates stands. `cert_rows` are in ledger order, which tells a system's latest."""
    found = systems_view.systems(runs_of_systems, {c.serial: n for n, c in enumerate(cert_rows)})
    _paged(
        w,
        r,
        len(found),
        layout.systems_page,
        "Systems",
        "systems.html",
        layout.MANIFEST,
        lambda lo, hi: {"rows": found[lo:hi], "first": lo + 1},
    )
    for s in found:
        _paged(
            w,
            r,
            len(s.runs),
            functools.partial(layout.system_page, s.id),
            s.name,
            "system.html",
            layout.MANIFEST,
            functools.partial(_system_rows, s),
            # A system on several pages holds its every run in each page's values.
            rows_apart=len(s.runs) > layout.PAGE_SIZE,
            system=s,
            search_record=search.system_record(s.name, s.versions, s.organizations, f"Latest: {s.latest_text}."),
        )


def _system_rows(s: systems_view.SystemView, lo: int, hi: int) -> dict[str, Any]:
    return {"rows": s.runs[lo:hi], "first": lo + 1}


def write_ledger_pages(
    ctx: SiteContext,
    w: SiteWriter,
    r: Renderer,
    run_rows: Sequence[view_models.RunRow],
    progress: Progress | None = None,
) -> None:
    """Every ledger entry, a page at a time, from one more pass over the ledger file (which the
    build holds locked): its JSON twin is the signed entries document."""
    rows = ledger_view.EntryPages(
        ledger_lines(ctx.paths), ctx.ledger, {row.id: row.link for row in run_rows}, ctx.tree, ctx.bounds
    )
    _paged(
        w,
        r,
        ctx.ledger.size,
        layout.ledger_page,
        "Ledger",
        "ledger.html",
        # A v3 site's ledger is its tiles (docs/formats/v3.md, 3): no one document is the twin.
        None if ctx.program.format >= 3 else layout.ENTRIES,
        rows,
        rows.inputs,
        unread=rows.skip,
        progress=progress,
        stamped=bool(ctx.bounds),
    )
    rows.finish()


def write_certificate_page(
    ctx: SiteContext,
    w: SiteWriter,
    r: Renderer,
    cert: CertificateRecord,
    run_row: view_models.RunRow | None,
    answers: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """`answers`: the public gates' answer keys by item, shown beside the outputs.

    Keyed by its inputs (Renderer.write_keyed): a certificate's view is the costliest of the
    site's, and tens of thousands of them stay the same from one release to the next."""
    gate_names = {g.id: g.name for g in ctx.ledger.gates.values()}
    revocation = ctx.ledger.revocations.get(cert.serial)
    reveals = ctx.ledger.reveals
    commitment = functools.partial(links_view.commitment_link, ctx.ledger)

    def make() -> tuple[str, dict[str, Any]]:
        view = view_models.certificate_view(
            cert, reveals, gate_names, run_row, ctx.generated_at, revocation, answers, commitment
        )
        title = f"{view.subject_name} {view.subject_version}: {view.noun} {cert.serial}"
        gate_name = gate_names.get(cert.info.gate, cert.info.gate)
        record = search.certificate_record(cert, gate_name, revocation, ctx.generated_at)
        return title, {"view": view, "search_record": record}

    page, twin, inputs = certificate_page_inputs(ctx, cert.info, run_row, answers)
    r.write_keyed(w, CERTIFICATE_TEMPLATE, page, twin, inputs, make)


CERTIFICATE_TEMPLATE = "certificate.html"


def certificate_page_inputs(
    ctx: SiteContext,
    info: CertificateInfo,
    run_row: view_models.RunRow | None,
    answers: Mapping[str, Mapping[str, Any]] | None = None,
    links: dict[str, str | None] | None = None,
) -> tuple[str, str, Any]:
    """A certificate page's path, its twin's and what the page is made from (Renderer.write_keyed),
    each by a value that changes whenever what the view and its search record read does: the
    document, its details and its results' order by the certificate's hash (which binds the
    details' hashes, and whose results name its run's items in their order), the run spec and
    methodology by theirs, each item by whether it is revealed, its commitment row and, on a
    public gate, its answer key. All of it known without reading the certificate again, so
    that an unchanged one is taken from the last release unread (build_steps).

    `links`: the commitment rows of public gates' items found so far in this build (such an item
    is in thousands of runs, and its row never moves; a secret gate's items are drawn from a
    pool of a million, each in a run or two: those are found each time, not kept)."""
    reveals = ctx.ledger.reveals
    shown = answers if info.public else None
    links = links if links is not None and info.public else {}
    items = []
    for i in info.spec["items"]:
        row = links.get(i)
        if row is None:
            row = links[i] = links_view.commitment_link(ctx.ledger, i)
        items.append((i, i in reveals, row, shown.get(i) if shown is not None else None))
    inputs = (
        info.sha256,
        ctx.ledger.runs[info.run].sha256,
        ctx.ledger.methodologies[info.spec["methodology"]["version"]].sha256,
        info.public,
        tuple(info.detail_paths),
        items,
        {g.id: g.name for g in ctx.ledger.gates.values()},
        run_row,
        view_models.is_expired(info.expires_at, ctx.generated_at),  # all the release's date changes in it
        ctx.ledger.revocations.get(info.serial),
    )
    return layout.certificate_page(info.serial), layout.certificate(info.serial), inputs


def write_keys_and_verify_pages(
    ctx: SiteContext,
    w: SiteWriter,
    r: Renderer,
    certificate_example: dict[str, str | None] | None,
    oldest_checkpoint: str = layout.CHECKPOINT,
    policy: str | None = None,
) -> None:
    key = parse_vkey(next(k for k in ctx.public_keys if k.status == "active").vkey)
    keys = keys_document(ctx)
    r.write(
        w,
        "keys.html",
        layout.KEYS_PAGE,
        "Keys",
        layout.KEYS,
        keys=keys["keys"],
        ml_dsa_keys=keys.get(ML_DSA_KEYS_MEMBER, []),
    )
    example = next((i for i in ctx.revealed if i.reason == "retired"), ctx.revealed[0] if ctx.revealed else None)
    r.write(
        w,
        "verify.html",
        layout.VERIFY_PAGE,
        "Verify it yourself",
        layout.MANIFEST,
        vkey=key.vkey,
        example=example,
        cert_example=certificate_example,
        example_paths={"page": layout.item_page(example.id), "reveal": layout.reveal(example.id)} if example else None,
        verifier={"version": __version__, "sha256": sha256_hex(verifier_bytes())},
        oldest_checkpoint=oldest_checkpoint,
        policy=policy,
        ml_dsa=bool(keys.get(ML_DSA_KEYS_MEMBER)),
        check_page=layout.CHECK_PAGE,
        site_url=base_url(ctx),
        download={
            "path": layout.ARCHIVE,
            "name": layout.ARCHIVE.rsplit("/", 1)[-1],
            "checksum": layout.ARCHIVE_SUMS,
            "checksum_name": layout.ARCHIVE_SUMS.rsplit("/", 1)[-1],
        }
        # A v3 site has no site.zip: its download is in parts, one a leaf list (docs/formats/v3.md, 6).
        if ctx.program.download_archive and ctx.program.format < 3
        else None,
        # A v3 site's checksum list is a tree (docs/formats/v3.md, 5): "parts" when it has its download.
        sums_tree=("parts" if ctx.program.download_archive else "lists") if ctx.program.format >= 3 else None,
    )


def write_history_page(
    w: SiteWriter, r: Renderer, rows: list[dict[str, Any]], bounds: Sequence[OutsideBound] = ()
) -> None:
    """The archived checkpoints, newest first, each with the timestamps over it; its JSON twin is
    the signed history document."""
    shown = [
        {
            **row,
            "root_b64": base64.b64encode(bytes.fromhex(row["root"])).decode(),
            "stamps": [
                (b.authority, b.time, layout.timestamp_token(b.size, b.authority))
                for b in bounds
                if b.size == row["tree_size"]
            ],
        }
        for row in reversed(rows)
    ]
    r.write(
        w, "history.html", layout.HISTORY_PAGE, "History", layout.HISTORY, rows=shown, verify_page=layout.VERIFY_PAGE
    )


def certificate_example(cert: CertificateRecord, key_pem: str) -> dict[str, str | None]:
    """A certificate for the "by hand" commands of the verify page (one with a published
    details document if there is one, so that the page can show a sealed result being opened);
    `key_pem` is the PEM of the key that signed it (the key valid when it was issued)."""
    out: dict[str, str | None] = {
        "key_pem": key_pem,
        "serial": cert.serial,
        "path": layout.certificate(cert.serial),
        "page": layout.certificate_page(cert.serial),
        "sha256": cert.info.sha256,
        "item": None,
    }
    if cert.details:
        item = next(iter(cert.details))
        out |= {
            "item": item,
            "details_path": layout.details(cert.serial, item),
            "details_sha256": next(r["details"] for r in cert.doc["results"] if r["item"] == item),
        }
    return out


def _slice(rows: Sequence[Any], lo: int, hi: int) -> dict[str, Any]:
    return {"items": rows[lo:hi]}


def _paged(
    w: SiteWriter,
    r: Renderer,
    total: int,
    page_of: Callable[[int], str],
    title: str,
    template: str,
    twin: str | Callable[[int], str] | None,
    rows: Callable[[int, int], dict[str, Any]],
    inputs: Callable[[int, int], Any] | None = None,
    unread: Callable[[int, int], None] | None = None,
    progress: Progress | None = None,
    rows_apart: bool = False,
    **extra: Any,
) -> None:
    """A list of `total` rows as pages of layout.PAGE_SIZE; `rows(lo, hi)` gives one page's
    context, `extra` what every page shows (`rows_apart`: Renderer.write's). Every list of the
    site goes through here.

    A list that only grows (the ledger, the commitment list) gives `inputs(lo, hi)`: each page
    is then keyed by it (Renderer.write_keyed) and made by `rows(lo, hi)` only when the memo
    lacks it (else `unread(lo, hi)` is told); `extra` is part of the key. A full
    page's rows never change, so only the first page (the way in) and the last say the total,
    the number of pages and where the last one is: a new row re-renders those two, and the row
    that opens a new page the few whose window of page links reaches it, never every page."""
    pages = max(1, -(-total // layout.PAGE_SIZE))
    for p in range(1, pages + 1):
        lo, hi = (p - 1) * layout.PAGE_SIZE, min(p * layout.PAGE_SIZE, total)
        page = page_of(p)
        page_twin = twin(p) if callable(twin) and total else None if callable(twin) else twin
        pager = _pager(p, pages, page_of, says_pages=inputs is None or p in (1, pages))
        heading = title if p == 1 else f"{title}, page {p}"
        if inputs is None:
            r.write(
                w,
                template,
                page,
                heading,
                page_twin,
                rows_apart=rows_apart,
                total=total,
                pager=pager,
                **rows(lo, hi),
                **extra,
            )
        else:
            shown = total if p in (1, pages) else None

            def make(
                lo: int = lo,
                hi: int = hi,
                pager: dict[str, Any] = pager,
                shown: int | None = shown,
                heading: str = heading,
            ) -> tuple[str, dict[str, Any]]:
                return heading, {"total": shown, "pager": pager, **rows(lo, hi), **extra}

            made = r.write_keyed(w, template, page, page_twin, (inputs(lo, hi), pager, shown, heading, extra), make)
            if not made and unread is not None:
                unread(lo, hi)
        if progress and (p % 20 == 0 or p == pages):
            progress(f"rendering {title.lower()} pages", p, pages)


def _pager(page: int, pages: int, page_of: Callable[[int], str], says_pages: bool = True) -> dict[str, Any]:
    """Links for a paginated list: first, previous, next, last, and a window around this page.
    Without `says_pages`, neither the number of pages nor the last page's link: a page in the
    middle of a list that grows then stays as it was when the list gains a page."""
    window = range(max(1, page - 3), min(pages, page + 3) + 1)
    return {
        "page": page,
        "paged": pages > 1,  # whether the list has a pager at all
        "pages": pages if says_pages else None,
        "prev": page_of(page - 1) if page > 1 else None,
        "next": page_of(page + 1) if page < pages else None,
        "first": page_of(1),
        "last": page_of(pages) if says_pages else None,
        "window": [(p, page_of(p)) for p in window],
    }


def write_check_page(ctx: SiteContext, w: SiteWriter, r: Renderer, policy: bool = False) -> None:
    """The check-a-file page: a certificate, reveal document or .tlog-proof someone was sent, checked in the
    browser against this site's ledger by check.js; without JavaScript, how verify.py does the same. `policy`:
    the site publishes its trust policy, whose witnesses the check also asks for. Its JSON twin is keys.json,
    what the check trusts."""
    key = parse_vkey(next(k for k in ctx.public_keys if k.status == "active").vkey)
    r.write(w, "check.html", layout.CHECK_PAGE, "Check a file you were sent", layout.KEYS, vkey=key.vkey, policy=policy)


def write_search_page(ctx: SiteContext, w: SiteWriter, r: Renderer, indexed: search.Indexed) -> None:
    """The search page: a form whose script searches the index search.write_index published
    (`indexed` says what it holds), and the sorted lists, which work without JavaScript."""
    nouns = {
        "certificate": ("certificate or result", "certificates and results"),
        "item": ("revealed item", "revealed items"),
        "system": ("system", "systems"),
        "methodology": ("methodology version", "methodology versions"),
    }
    held = [f"{n} {nouns[kind][0] if n == 1 else nouns[kind][1]}" for kind, n in indexed.counts if n]
    if held:
        listed = held[0] if len(held) == 1 else ", ".join(held[:-1]) + " and " + held[-1]
        coverage = f"The index holds {listed}: each found by its names, ids and hashes."
    else:
        coverage = "Nothing to search yet: this site has no certificate, revealed item or methodology version."
    browse = [
        {"label": "Certificates", "path": layout.CERTIFICATES_PAGE, "about": "every certificate and result"},
        {"label": "Systems", "path": layout.SYSTEMS_PAGE, "about": "every system that has a run, by name"},
        {"label": "Runs", "path": layout.RUNS_PAGE, "about": "every registered run, by system and gate"},
        {"label": "Retired items", "path": layout.RETIRED_PAGE, "about": "every retired item, published in full"},
    ]
    browse += [
        {"label": g.name, "path": layout.gate_page(g.id), "about": "the public items of this gate"}
        for g in ctx.ledger.gates.values()
        if g.public
    ]
    browse += [
        {
            "label": "Commitments",
            "path": layout.POOL_PAGE,
            "about": "every committed item, sealed or revealed, in ledger order",
        },
        {"label": "Ledger", "path": layout.LEDGER_PAGE, "about": "every ledger entry, in order"},
        {"label": "Methodology", "path": layout.METHODOLOGY_PAGE, "about": "the scoring rules, every version"},
    ]
    search.write_script(w)
    r.write(
        w,
        "search.html",
        layout.SEARCH_PAGE,
        "Search",
        layout.MANIFEST,  # what it searches, as data: every certificate and reveal
        bundle=indexed.script,
        shards=[f"{folder}/" for folder in indexed.shards[1:]],
        coverage=coverage,
        browse=browse,
    )
