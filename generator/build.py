"""Building the site: gather, check against the last release, write, verify, swap in.

Data flows one way: read and validate `data/` (site.gather) → refuse anything that would
rewrite the last release → write every artifact and page into a staging directory → run the
standalone verifier on it, pinned to our own key → swap it in. A failure at any step leaves the
previous site byte for byte as it was.
"""

from __future__ import annotations

import base64
import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from generator import __version__, canonical, layout, views
from generator.datadir import Paths
from generator.errors import InputError, VerificationFailed, problem
from generator.examples import worked_examples
from generator.ledgerfile import ledger_lines, reading
from generator.methodology import describe
from generator.release import check_key_matches, check_ledger_extends, check_published_unchanged
from generator.render import NavItem, Renderer
from generator.site import RevealedItem, SiteContext, event_link, event_summary, gather
from generator.verifier import loads_strict, parse_vkey, public_key_pem, sha256_hex, verify_site
from generator.writer import SiteWriter, Staging, is_replaceable_site, remove_leftovers, swap_in

Progress = Callable[[str, int, int], None]


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


def build(paths: Paths, out: Path, progress: Progress | None = None, strict: bool = False) -> BuildResult:
    """Build the site from `paths` into `out`; raise (leaving `out` untouched) on any problem.

    With strict=True, warnings (such as unknown keys in program.yaml) are errors too."""
    started = time.monotonic()
    remove_leftovers(out)
    if not is_replaceable_site(out):
        raise InputError([problem(str(out), "the output exists and is not a site built by transparency (no transparency.json); refusing to replace it")])
    with reading(paths):
        ctx = gather(paths, progress)
        if strict and ctx.warnings:
            raise InputError([problem("--strict", w) for w in ctx.warnings], "warnings are errors under --strict")
        check_key_matches(out, ctx.signer)
        check_ledger_extends(out, ledger_lines(paths), paths.show(paths.ledger_file))
        staging = Staging(out)
        try:
            writer = SiteWriter(staging.path)
            write_site(ctx, writer, progress)
            check_published_unchanged(out, writer.hashes)
        except BaseException:
            staging.discard()
            raise
    result = BuildResult(out, len(writer.hashes) + 2, ctx.ledger.size, 0, 0.0, ctx.demo, ctx.warnings, ctx.signer.fingerprint)
    vkey = ctx.signer.vkey
    del ctx  # a million-item ledger's state is not needed twice: free it before verifying
    try:
        if progress:
            progress("verifying the built site", 0, 1)
        report = verify_site(staging.path, vkey)
        if not report.ok:
            raise VerificationFailed(report.render())
        swap_in(staging.path, out)
    except BaseException:
        staging.discard()
        raise
    staging.close()
    return dataclasses.replace(result, checks=report.checks, seconds=time.monotonic() - started)


# ---------------------------------------------------------------------------------------------
# Artifacts


def write_site(ctx: SiteContext, w: SiteWriter, progress: Progress | None = None) -> None:
    signer = ctx.signer
    w.write_signed_stream(layout.ENTRIES, entries_document(ctx), signer)
    w.write(layout.CHECKPOINT, ctx.checkpoint)
    w.write_signed_stream(layout.COMMITMENTS, commitment_list(ctx), signer)
    if progress:
        progress("writing the ledger", 1, 1)

    w.write(layout.KEYS, canonical.dumps(keys_document(ctx)))
    for k in ctx.public_keys:
        vk = parse_vkey(k.vkey)
        w.write(layout.key_pem(vk.key_id.hex()), public_key_pem(vk.public_key))
    for m in ctx.methodologies:
        w.write(layout.methodology_parameters(m.version), m.params_bytes)
        w.write(layout.methodology_document(m.version), m.document.encode("utf-8"))
    for i, item in enumerate(ctx.revealed, start=1):
        w.write(layout.reveal(item.id), ctx.paths.reveal_file(item.id).read_bytes())
        if progress and (i % 1000 == 0 or i == len(ctx.revealed)):
            progress("copying reveals", i, len(ctx.revealed))
    for run in ctx.runs:
        w.write(layout.run_spec(run.id), run.spec_bytes)
    # Certificates, their details and grader records are written with their pages
    # (_write_runs_and_certificates), so that each is read from data/ once.
    w.write(layout.VERIFIER, verifier_bytes())
    w.write(layout.STYLE, (files("site_templates") / "style.css").read_bytes())
    w.write(layout.MANIFEST, canonical.dumps(manifest(ctx)))
    write_pages(ctx, w, progress)
    w.finish(signer)


def verifier_bytes() -> bytes:
    """The standalone verifier, as every site ships it (SPEC §8)."""
    return (files("generator") / "verify.py").read_bytes()


def keys_document(ctx: SiteContext) -> dict[str, Any]:
    rows = []
    for k in ctx.public_keys:
        vk = parse_vkey(k.vkey)
        row: dict[str, Any] = {
            "vkey": k.vkey,
            "public_key": base64.b64encode(vk.public_key).decode(),
            "fingerprint": vk.fingerprint,
            "pem": layout.key_pem(vk.key_id.hex()),
            "valid_from": k.valid_from,
            "valid_until": k.valid_until,
            "status": k.status,
        }
        if k.reason is not None:
            row["reason"] = k.reason
        rows.append(row)
    return {"type": "keys", "v": 1, "origin": ctx.origin, "keys": rows}


def commitment_rows(ctx: SiteContext, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
    revealed = ctx.ledger.reveals
    for c in ctx.ledger.commits(start, stop):
        yield {"at": c.at, "commitment": c.commitment, "gate": c.gate, "id": c.id, "index": c.index,
               "status": "revealed" if c.id in revealed else "sealed"}


def _list_document(key: str, elements: Iterator[bytes], tail: dict[str, Any]) -> Iterator[bytes]:
    """A canonical document {key: [...], **tail} whose list comes as element bytes, in chunks.

    `key` sorts before every key of `tail`, so the list comes first in canonical form.
    """
    yield b'{"' + key.encode() + b'":['
    buf: list[bytes] = []
    for i, raw in enumerate(elements):
        buf.append(b"," + raw if i else raw)
        if len(buf) >= 4096:
            yield b"".join(buf)
            buf.clear()
    yield b"".join(buf)
    yield b"]," + canonical.dumps(tail)[1:]


def entries_document(ctx: SiteContext) -> Iterator[bytes]:
    """The ledger entries, re-read from the ledger file (which the build holds locked)."""
    count = 0

    def leaves() -> Iterator[bytes]:
        nonlocal count
        for raw in ledger_lines(ctx.paths):
            count += 1
            yield raw

    yield from _list_document("entries", leaves(), {"origin": ctx.origin, "tree_size": ctx.ledger.size, "type": "ledger-entries", "v": 1})
    if count != ctx.ledger.size:  # pragma: no cover - the lock prevents it
        raise RuntimeError("the ledger changed while the site was being built")


def commitment_list(ctx: SiteContext) -> Iterator[bytes]:
    """The signed list of every commitment, row by row for a million items.

    Rows hold only ASCII strings and small integers, for which the standard library's form is
    byte for byte RFC 8785 (SPEC §1); the tail still goes through rfc8785.
    """
    rows = (canonical.dumps_validated(row) for row in commitment_rows(ctx))
    return _list_document("commitments", rows, {"origin": ctx.origin, "tree_size": ctx.ledger.size, "type": "commitment-list", "v": 1})


def manifest(ctx: SiteContext) -> dict[str, Any]:
    ledger = ctx.ledger
    return {
        "type": "transparency-manifest",
        "v": 1,
        "origin": ctx.origin,
        "name": ctx.program.name,
        "generated_at": ctx.generated_at,
        "keys": layout.KEYS,
        "verifier": layout.VERIFIER,
        "gates": [{"id": g.id, "name": g.name, "public": g.public} for g in ledger.gates.values()],
        "methodology": [
            {"version": m.version, "document": layout.methodology_document(m.version),
             "parameters": layout.methodology_parameters(m.version), "sha256": m.sha256}
            for m in ctx.methodologies
        ],
        "ledger": {"entries": layout.ENTRIES, "checkpoint": layout.CHECKPOINT, "tree_size": ledger.size,
                   "commitment_list": layout.COMMITMENTS},
        "reveals": [
            {"id": r.id, "gate": r.gate, "path": layout.reveal(r.id), "reason": r.reason, "revealed_at": r.revealed_at}
            for r in ctx.revealed
        ],
        "runs": [{"id": r.id, "spec": layout.run_spec(r.id), "status": r.status} for r in ctx.runs],
        "certificates": [
            {"serial": c.serial, "run": c.run, "path": layout.certificate(c.serial),
             "details": c.detail_paths, "grader_record": c.grader_record_path}
            for c in ctx.certificates
        ],
    }


# ---------------------------------------------------------------------------------------------
# Pages


def navigation(ctx: SiteContext) -> list[NavItem]:
    nav = [NavItem("Home", layout.HOME), NavItem("Methodology", layout.METHODOLOGY_PAGE)]
    for g in ctx.ledger.gates.values():
        if g.public:
            nav.append(NavItem(g.name, layout.gate_page(g.id)))
    nav += [
        NavItem("Commitments", layout.POOL_PAGE),
        NavItem("Retired items", layout.RETIRED_PAGE),
        NavItem("Runs", layout.RUNS_PAGE),
        NavItem("Certificates", layout.CERTIFICATES_PAGE),
        NavItem("Keys", layout.KEYS_PAGE),
        NavItem("Verify it yourself", layout.VERIFY_PAGE),
    ]
    return nav


def _pages(total: int) -> int:
    return max(1, -(-total // layout.PAGE_SIZE))


def write_pages(ctx: SiteContext, w: SiteWriter, progress: Progress | None = None) -> None:
    ledger = ctx.ledger
    active = next(k for k in ctx.public_keys if k.status == "active")
    key = parse_vkey(active.vkey)
    revealed_count = len(ledger.reveals)
    counts = {
        "ledger entries": ledger.size,
        "gates": len(ledger.gates),
        "committed items": ledger.commit_count,
        "revealed items": revealed_count,
        "sealed items": ledger.commit_count - revealed_count,
        "runs": len(ledger.runs),
        "certificates": len(ledger.certificates),
    }
    r = Renderer(
        {
            "program": ctx.program,
            "demo": ctx.demo,
            "generated_at": ctx.generated_at,
            "origin": ctx.origin,
            "fingerprint": key.fingerprint,
            "key_pem": layout.key_pem(key.key_id.hex()),
        },
        navigation(ctx),
    )
    checkpoint_text = ctx.checkpoint.decode("utf-8")
    current = ctx.methodologies[-1] if ctx.methodologies else None
    w.write_text(layout.HOME, r.page(
        "home.html", layout.HOME, ctx.program.name, layout.MANIFEST,
        description=ctx.program_html, checkpoint=checkpoint_text, tree_size=ledger.size,
        root_b64=base64.b64encode(ctx.root).decode(), root_hex=ctx.root.hex(), counts=counts,
        latest=[{"index": i, "at": leaf["at"], "text": event_summary(leaf), "link": event_link(leaf)} for i, leaf in ctx.latest],
        gates=list(ledger.gates.values()), methodology=current,
    ))

    examples = {m.version: worked_examples(m.params) for m in ctx.methodologies}
    for m in ctx.methodologies:
        page = layout.methodology_page(m.version)
        w.write_text(page, r.page(
            "methodology.html", page, f"Methodology {m.version}", layout.methodology_parameters(m.version),
            m=m, table=describe(m.params), versions=ctx.methodologies, current=current, is_index=False,
            examples=examples[m.version],
        ))
    if current is not None:
        w.write_text(layout.METHODOLOGY_PAGE, r.page(
            "methodology.html", layout.METHODOLOGY_PAGE, "Methodology", layout.methodology_parameters(current.version),
            m=current, table=describe(current.params), versions=ctx.methodologies, current=current, is_index=True,
            examples=examples[current.version],
        ))

    _write_item_lists(ctx, w, r)
    for i, item in enumerate(ctx.revealed, start=1):
        doc = loads_strict(ctx.paths.reveal_file(item.id).read_bytes())
        page = layout.item_page(item.id)
        w.write_text(page, r.page(
            "item.html", page, f"Item {item.id}", layout.reveal(item.id),
            item=item, doc=doc, gate=ledger.gates[item.gate],
            answer=[{"name": k, **v} for k, v in doc["item"]["answer"].items()],
        ))
        if progress and (i % 1000 == 0 or i == len(ctx.revealed)):
            progress("rendering item pages", i, len(ctx.revealed))

    pages = _pages(ledger.commit_count)
    for p in range(1, pages + 1):
        page = layout.pool_page(p)
        rows = list(commitment_rows(ctx, (p - 1) * layout.PAGE_SIZE, p * layout.PAGE_SIZE))
        w.write_text(page, r.page(
            "pool.html", page, "Commitments" if p == 1 else f"Commitments, page {p}", layout.COMMITMENTS,
            rows=rows, pager=_pager(p, pages, layout.pool_page), total=ledger.commit_count,
            first=(p - 1) * layout.PAGE_SIZE + 1, gates=ledger.gates,
        ))
        if progress and (p % 20 == 0 or p == pages):
            progress("rendering commitment pages", p, pages)

    _write_runs_and_certificates(ctx, w, r, progress)
    w.write_text(layout.KEYS_PAGE, r.page("keys.html", layout.KEYS_PAGE, "Keys", layout.KEYS, keys=keys_document(ctx)["keys"]))
    example = next((i for i in ctx.revealed if i.reason == "retired"), ctx.revealed[0] if ctx.revealed else None)
    w.write_text(layout.VERIFY_PAGE, r.page(
        "verify.html", layout.VERIFY_PAGE, "Verify it yourself", layout.MANIFEST,
        vkey=key.vkey, example=example, cert_example=_certificate_example(ctx),
        verifier={"version": __version__, "sha256": sha256_hex(verifier_bytes())},
    ))


def _certificate_example(ctx: SiteContext) -> dict[str, str | None] | None:
    """A certificate for the "by hand" commands of the verify page: one with a published
    details document if there is one, so the page can show a sealed result being opened."""
    with_details = next((c for c in ctx.certificates if c.details_items), None)
    cert = with_details or (ctx.certificates[0] if ctx.certificates else None)
    if cert is None:
        return None
    out = {"serial": cert.serial, "path": layout.certificate(cert.serial), "page": layout.certificate_page(cert.serial),
           "sha256": cert.sha256, "item": None}
    if with_details is not None:
        item = cert.details_items[0]
        doc = cert.load(ctx.paths).doc
        out |= {"item": item, "details_path": layout.details(cert.serial, item),
                "details_sha256": next(r["details"] for r in doc["results"] if r["item"] == item)}
    return out


def _write_runs_and_certificates(ctx: SiteContext, w: SiteWriter, r: Renderer, progress: Progress | None = None) -> None:
    """The runs pages (grouped by subject and gate), the certificates list and a page per
    certificate, with the certificate's own artifacts (its signed JSON, published details and
    grader record). Everything the pages show is worked out by generator.views; linear in the runs."""
    gate_names = {g.id: g.name for g in ctx.ledger.gates.values()}
    rows = views.run_rows(ctx.runs, ctx.certificates, gate_names)
    pages = _pages(len(rows))
    for p in range(1, pages + 1):
        page = layout.runs_page(p)
        chunk = rows[(p - 1) * layout.PAGE_SIZE : p * layout.PAGE_SIZE]
        w.write_text(page, r.page(
            "runs.html", page, "Runs" if p == 1 else f"Runs, page {p}", layout.MANIFEST,
            groups=views.group_rows(chunk), total=len(rows), count=len(chunk), first=(p - 1) * layout.PAGE_SIZE + 1,
            pager=_pager(p, pages, layout.runs_page),
        ))

    cert_rows = views.certificate_rows(ctx.certificates, gate_names)
    pages = _pages(len(cert_rows))
    for p in range(1, pages + 1):
        page = layout.certificates_page(p)
        w.write_text(page, r.page(
            "certificates.html", page, "Certificates" if p == 1 else f"Certificates, page {p}", layout.MANIFEST,
            rows=cert_rows[(p - 1) * layout.PAGE_SIZE : p * layout.PAGE_SIZE], total=len(cert_rows),
            first=(p - 1) * layout.PAGE_SIZE + 1, pager=_pager(p, pages, layout.certificates_page),
        ))

    by_run = {row.id: row for row in rows}
    revealed = ctx.ledger.reveals
    for i, info in enumerate(ctx.certificates, start=1):
        # Read once, for both the artifacts and the page: tens of thousands are not kept.
        cert = info.load(ctx.paths)
        w.write_signed(layout.certificate(cert.serial), cert.data, ctx.signer)
        for d in cert.details.values():
            w.write(d.path, d.data)
        if cert.grader_record is not None:
            w.write(cert.grader_record.path, cert.grader_record.data)
        page = layout.certificate_page(cert.serial)
        view = views.certificate_view(cert, revealed, gate_names, by_run.get(cert.run), ctx.generated_at)
        w.write_text(page, r.page("certificate.html", page, f"Certificate {cert.serial}", layout.certificate(cert.serial), view=view))
        if progress and (i % 1000 == 0 or i == len(ctx.certificates)):
            progress("writing certificates and their pages", i, len(ctx.certificates))


def _write_item_lists(ctx: SiteContext, w: SiteWriter, r: Renderer) -> None:
    for g in ctx.ledger.gates.values():
        if not g.public:
            continue
        items = [i for i in ctx.revealed if i.gate == g.id]
        _write_paged_list(w, r, items, lambda p, gid=g.id: layout.gate_page(gid, p), g.name, "gate.html", gate=g)
    retired = [i for i in ctx.revealed if i.reason == "retired"]
    _write_paged_list(w, r, retired, layout.retired_page, "Retired items", "retired.html")


def _write_paged_list(
    w: SiteWriter, r: Renderer, items: list[RevealedItem], page_of: Callable[[int], str], title: str, template: str, **extra: Any
) -> None:
    pages = _pages(len(items))
    for p in range(1, pages + 1):
        page = page_of(p)
        chunk = items[(p - 1) * layout.PAGE_SIZE : p * layout.PAGE_SIZE]
        w.write_text(page, r.page(
            template, page, title if p == 1 else f"{title}, page {p}", layout.MANIFEST,
            items=chunk, total=len(items), pager=_pager(p, pages, page_of), **extra,
        ))


def _pager(page: int, pages: int, page_of: Callable[[int], str]) -> dict[str, Any]:
    """Links for a paginated list: first, previous, next, last, and a window around this page."""
    window = range(max(1, page - 3), min(pages, page + 3) + 1)
    return {
        "page": page,
        "pages": pages,
        "prev": page_of(page - 1) if page > 1 else None,
        "next": page_of(page + 1) if page < pages else None,
        "first": page_of(1),
        "last": page_of(pages),
        "window": [(p, page_of(p)) for p in window],
    }
