"""Feeds, the sitemap and robots.txt: the site as feed readers and crawlers read it.

Three Atom feeds (RFC 4287), newest first and capped at `layout.FEED_ENTRIES`: certificates
(issued or revoked), reveals (retired items and public items alike, told apart by their
category), and checkpoints. The sitemap (sitemaps.org) lists every page. All need absolute URLs,
which a static site cannot know: they are built on program.yaml's `site_url`, or else on
`https://<origin>/`. Entry and feed ids are built on `https://<origin>/` always, so that they
stay the same when the site moves (RFC 4287 §4.2.6). Every time comes from the ledger, never
the clock, and every text from the data goes through ElementTree, with the characters XML 1.0
cannot carry replaced: names and notes are hostile input.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from generator.build.gather import CertificateInfo, RevealedItem, SiteContext
from generator.build.writer import SiteWriter
from generator.core import layout
from generator.program.ledgerfile import ledger_lines
from generator.site.views.view_models import VERDICT_WORDS
from generator.verifier import build_tree

ATOM_NS = "http://www.w3.org/2005/Atom"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
ATOM_TYPE = "application/atom+xml"
# XML 1.0 §2.2: what a document may hold; the C0 and C1 controls it allows or discourages are
# replaced too, since no reader shows them as anything.
_NOT_XML = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# An origin's characters a URL may carry as they are (RFC 3986 unreserved, sub-delims, ':', '@', '/').
_URL_SAFE = "/:@!$&'()*+,;=-._~"


def clean(text: str) -> str:
    """`text` with every character XML 1.0 cannot carry (or only discourages) made U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def origin_url(origin: str) -> str:
    """`https://<origin>/`: the program's identity (format v1 §1) as a base URL."""
    return "https://" + urllib.parse.quote(origin.rstrip("/"), safe=_URL_SAFE) + "/"


def base_url(ctx: SiteContext) -> str:
    """Where the site is served: program.yaml's site_url, or the origin's https URL."""
    return ctx.program.site_url or origin_url(ctx.origin)


def absolute(base: str, rel: str) -> str:
    """A site path as an absolute URL, its fragment kept."""
    path, _, fragment = rel.partition("#")
    url = base + urllib.parse.quote(path, safe="/")
    return f"{url}#{urllib.parse.quote(fragment, safe='')}" if fragment else url


@dataclass(frozen=True)
class Link:
    rel: str
    type: str
    path: str  # a site path


@dataclass(frozen=True)
class Entry:
    id_path: str  # what the entry is about, as a site path: its id is built on the origin
    title: str
    updated: str
    published: str | None
    summary: str
    links: tuple[Link, ...]
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Feed:
    path: str
    title: str
    subtitle: str
    page: str  # the HTML page that lists the same things
    entries: Sequence[Entry]


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    e = ET.SubElement(parent, tag, {k: clean(v) for k, v in attrs.items()})
    if text is not None:
        e.text = clean(text)
    return e


def _xml(root: ET.Element) -> bytes:
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def atom(ctx: SiteContext, feed: Feed) -> bytes:
    """The feed as an Atom document. Its `updated` is its newest entry's (the release's time when
    it has none): a feed changes when an entry does."""
    base, ids = base_url(ctx), origin_url(ctx.origin)
    root = ET.Element("feed", {"xmlns": ATOM_NS})
    _sub(root, "id", ids + urllib.parse.quote(feed.path, safe="/"))
    _sub(root, "title", f"{ctx.program.name}: {feed.title}")
    _sub(root, "subtitle", feed.subtitle)
    _sub(root, "updated", max((e.updated for e in feed.entries), default=ctx.generated_at))
    author = _sub(root, "author")
    _sub(author, "name", ctx.program.name)
    _sub(author, "uri", base)
    _sub(root, "link", rel="self", type=ATOM_TYPE, href=absolute(base, feed.path))
    _sub(root, "link", rel="alternate", type="text/html", href=absolute(base, feed.page))
    for e in feed.entries:
        entry = _sub(root, "entry")
        _sub(entry, "id", ids + urllib.parse.quote(e.id_path, safe="/"))
        _sub(entry, "title", e.title)
        _sub(entry, "updated", e.updated)
        if e.published is not None:
            _sub(entry, "published", e.published)
        for link in e.links:
            _sub(entry, "link", rel=link.rel, type=link.type, href=absolute(base, link.path))
        for term in e.categories:
            _sub(entry, "category", term=term)
        _sub(entry, "summary", e.summary)
    return _xml(root)


def _sentence(text: str) -> str:
    """Operator's words (a reason, a note) ended as a sentence, once."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _subject(c: CertificateInfo) -> str:
    s = c.subject
    return f"{s.get('name')} {s.get('version')} ({s.get('organization')})"


def certificate_verdict(c: CertificateInfo) -> str:
    """The verdict in a few words: "Certified, grade B", "Not certified", "Incomplete: not decisive"."""
    words = VERDICT_WORDS.get(c.verdict, c.verdict)
    if c.verdict == "certified":
        return f"{words}, grade {c.grade}"
    return f"{words}: not decisive" if c.verdict == "incomplete" else words


def certificate_entries(ctx: SiteContext, limit: int | None = None) -> list[Entry]:
    """The newest certificates, by their last event: issued, or revoked (a revocation of an old
    certificate is news, and brings it back to the top)."""
    limit = limit or layout.FEED_ENTRIES
    revocations = ctx.ledger.revocations
    by_serial = {c.serial: c for c in ctx.certificates}
    # Both lists are in ledger order, so the newest `limit` events are among their tails.
    candidates = {c.serial: (c.index, c) for c in ctx.certificates[-limit:]}
    for r in list(revocations.values())[-limit:]:
        if r.serial in by_serial:
            candidates[r.serial] = (r.index, by_serial[r.serial])
    newest = sorted(candidates.values(), key=lambda pair: pair[0], reverse=True)[:limit]
    entries = []
    gates = ctx.ledger.gates
    for _, c in newest:
        verdict = certificate_verdict(c)
        gate = gates[c.gate].name if c.gate in gates else c.gate
        # A run that was not certified gets a result, not a certificate (the word would mislead).
        what = "Certificate" if c.verdict == "certified" else "Result (not a certificate)"
        facts = f"{what} {c.serial} of run {c.run} for {_subject(c)} on {gate}, issued {c.at}"
        if c.expires_at:
            facts += f", expires {c.expires_at}"
        revoked = revocations.get(c.serial)
        if revoked is not None:
            summary = f"Revoked on {revoked.at}: {_sentence(revoked.reason)} It said: {verdict}. {facts}."
            title = f"{_subject(c)}: Revoked (was: {verdict})"
        else:
            summary = f"{verdict}. {facts}."
            title = f"{_subject(c)}: {verdict}"
        entries.append(
            Entry(
                layout.certificate(c.serial),
                title,
                revoked.at if revoked is not None else c.at,
                c.at,
                summary,
                (
                    Link("alternate", "text/html", layout.certificate_page(c.serial)),
                    Link("alternate", "application/json", layout.certificate(c.serial)),
                ),
                (c.verdict, "revoked") if revoked is not None else (c.verdict,),
            )
        )
    return entries


def reveal_entries(ctx: SiteContext, limit: int | None = None) -> list[Entry]:
    """The newest reveals. A secret item revealed on retirement (reason "retired") and a public
    gate's item, revealed as it is committed ("public-gate"), are both reveals of the ledger;
    their category and title tell them apart, as the retired page and the gate pages do."""
    limit = limit or layout.FEED_ENTRIES
    gates = ctx.ledger.gates
    entries = []
    newest: Iterable[RevealedItem] = sorted(ctx.revealed[-limit:], key=lambda i: i.reveal_index, reverse=True)
    for item in newest:
        gate = gates[item.gate].name if item.gate in gates else item.gate
        committed = f"committed {item.committed_at} (ledger entry {item.commit_index})"
        if item.reason == "retired":
            title = f"Retired item {item.id} revealed"
            summary = f"Secret item {item.id} of {gate}, {committed}, revealed {item.revealed_at}"
            summary += f": {_sentence(item.note)}" if item.note.strip() else "."
        else:
            title = f"Public item {item.id} published"
            summary = f"Item {item.id} of the public {gate}, {committed} and published at once."
        entries.append(
            Entry(
                layout.reveal(item.id),
                title,
                item.revealed_at,
                item.revealed_at,
                summary,
                (
                    Link("alternate", "text/html", layout.item_page(item.id)),
                    Link("alternate", "application/json", layout.reveal(item.id)),
                ),
                (item.reason,),
            )
        )
    return entries


def leaf_times(ctx: SiteContext, indices: set[int]) -> dict[int, str]:
    """The time of each of these ledger leaves, read from the ledger file in one pass that stops
    at the last one wanted (the replay keeps no time per leaf: a million of them)."""
    out: dict[int, str] = {}
    if not indices:
        return out
    last = max(indices)
    for i, raw in enumerate(ledger_lines(ctx.paths)):
        if i in indices:
            out[i] = str(json.loads(raw)["at"])
        if i >= last:
            break
    return out


def checkpoint_entries(
    ctx: SiteContext, history_rows: Sequence[dict[str, Any]], limit: int | None = None
) -> list[Entry]:
    """The newest checkpoints of the history (ledger/history.json's rows). A checkpoint of N
    entries is dated by its newest entry, the N-th: a checkpoint itself holds no time."""
    limit = limit or layout.FEED_ENTRIES
    rows = sorted(history_rows, key=lambda r: int(r["tree_size"]), reverse=True)[:limit]
    size = ctx.ledger.size
    times = leaf_times(ctx, {int(r["tree_size"]) - 1 for r in rows if 0 < int(r["tree_size"]) < size})
    entries = []
    for row in rows:
        n = int(row["tree_size"])
        at = ctx.ledger.last_at if n == size and n else times.get(n - 1, ctx.generated_at)
        root = base64.b64encode(bytes.fromhex(row["root"])).decode()
        links = [
            Link("alternate", "text/html", layout.HISTORY_PAGE),
            Link("alternate", "application/json", layout.HISTORY),
            Link("related", "text/plain", row["checkpoint"]),
        ]
        if row["consistency"]:
            links.append(Link("related", "application/json", row["consistency"]))
            tail = (
                f"A consistency proof shows that this ledger begins with the checkpoint before: {row['consistency']}."
                if ctx.program.format >= 3  # one proof a release, from the row before (docs/formats/v3.md, 1)
                else f"A consistency proof shows that today's ledger begins with them: {row['consistency']}."
            )
        else:
            tail = "The first checkpoint." if ctx.program.format >= 3 and n != size else "Today's checkpoint."
        entries.append(
            Entry(
                row["checkpoint"],
                f"Checkpoint of {n} ledger entr{'y' if n == 1 else 'ies'}",
                at,
                None,
                f"The signed root of the ledger's first {n} entries: {root}, the newest entry dated {at}. {tail}",
                tuple(links),
            )
        )
    return entries


def sitemap_files(base: str, pages: Iterable[str], per_file: int | None = None) -> dict[str, bytes]:
    """`sitemap.xml` listing every page, sorted by path bytes, while they are at most `per_file`
    (layout.SITEMAP_URLS); past that, an index of parts `sitemap-<p>.xml`, one for each leaf of a
    tree of the pages' keys (the SHA-256 of a path, as the checksum tree's): a node holding more
    than `per_file` pages is split by the next hex digit. A part's pages depend on its prefix
    alone, so a release that adds a page rewrites the part that holds it (and the index only when
    a part splits), never a list of every page: at a million items that list was 4 MiB a release."""
    per_file = per_file or layout.SITEMAP_URLS
    unique = set(pages)

    def urlset(chunk: Iterable[str]) -> bytes:
        root = ET.Element("urlset", {"xmlns": SITEMAP_NS})
        for page in chunk:
            _sub(ET.SubElement(root, "url"), "loc", absolute(base, page))
        return _xml(root)

    if len(unique) <= per_file:
        return {layout.SITEMAP: urlset(sorted(unique, key=lambda p: p.encode()))}
    tree = build_tree(unique, per_file)  # each leaf's pages in path-byte order
    files = {}
    index = ET.Element("sitemapindex", {"xmlns": SITEMAP_NS})
    for prefix in sorted(tree.leaves):
        files[layout.sitemap_part(prefix)] = urlset(tree.leaves[prefix])
        _sub(ET.SubElement(index, "sitemap"), "loc", absolute(base, layout.sitemap_part(prefix)))
    files[layout.SITEMAP] = _xml(index)
    return files


def robots(base: str) -> bytes:
    """Everything may be read; the sitemap is named. A crawler reads robots.txt only at a host's
    root: a site served under a prefix is governed by its host's."""
    return f"User-agent: *\nAllow: /\n\nSitemap: {absolute(base, layout.SITEMAP)}\n".encode()


def write_feeds(ctx: SiteContext, w: SiteWriter, history_rows: Sequence[dict[str, Any]]) -> None:
    """The three feeds, the sitemap of every page written so far, and robots.txt: written after
    the last page."""
    feeds = (
        Feed(
            layout.FEED_CERTIFICATES,
            "certificates",
            "Every certificate and result as it is issued or revoked, newest first",
            layout.CERTIFICATES_PAGE,
            certificate_entries(ctx),
        ),
        Feed(
            layout.FEED_REVEALS,
            "revealed items",
            "Secret items revealed when retired, and public items as they are published, newest first",
            layout.RETIRED_PAGE,
            reveal_entries(ctx),
        ),
        Feed(
            layout.FEED_CHECKPOINTS,
            "checkpoints",
            "Each signed checkpoint of the ledger the site has published, newest first",
            layout.HISTORY_PAGE,
            checkpoint_entries(ctx, history_rows),
        ),
    )
    for feed in feeds:
        w.write(feed.path, atom(ctx, feed))
    base = base_url(ctx)
    for rel, data in sitemap_files(base, [p for p in w.hashes if p.endswith(".html")]).items():
        w.write(rel, data)
    w.write(layout.ROBOTS, robots(base))
