"""Feeds, sitemap and robots.txt as a feed reader and a crawler read them: parsed as XML, each
Atom feed held to RFC 4287's required elements, every link followed to a file of the built site,
and hostile names shown as the text they are."""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths, load_program
from generator.site import feeds
from generator.verifier import path_key
from tests.support.demo import BuiltSite

A = "{http://www.w3.org/2005/Atom}"
SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
FEEDS = (layout.FEED_CERTIFICATES, layout.FEED_REVEALS, layout.FEED_CHECKPOINTS)
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
DEMO_BASE = "https://transparency.example.org/extraction/"


def parse(site: Path, rel: str) -> ET.Element:
    return ET.fromstring((site / rel).read_bytes())


def is_time(text: str | None) -> bool:
    if text is None or not RFC3339.fullmatch(text):
        return False
    dt.datetime.fromisoformat(text.replace("Z", "+00:00"))  # a real date and time, not only its shape
    return True


def is_absolute_iri(text: str | None) -> bool:
    parts = urllib.parse.urlsplit(text or "")
    return bool(parts.scheme and parts.netloc) and not any(c.isspace() for c in text or "")


def site_path(base: str, href: str) -> str:
    """The site path an absolute link of the site names."""
    assert href.startswith(base), f"{href} is not under {base}"
    return urllib.parse.unquote(href[len(base) :].partition("#")[0])


def check_atom(site: Path, rel: str, base: str) -> ET.Element:
    """RFC 4287 §4.1.1-4.1.2: what a feed and each entry must hold, every link resolving."""
    feed = parse(site, rel)
    assert feed.tag == f"{A}feed"
    for tag in ("id", "title", "updated"):
        assert len(feed.findall(f"{A}{tag}")) == 1, f"{rel}: feed needs exactly one {tag}"
    assert is_absolute_iri(feed.findtext(f"{A}id"))
    assert is_time(feed.findtext(f"{A}updated"))
    assert (feed.findtext(f"{A}author/{A}name") or "").strip(), f"{rel}: no feed author (entries have none)"
    selfs = [link for link in feed.findall(f"{A}link") if link.get("rel") == "self"]
    assert [link.get("href") for link in selfs] == [base + rel]
    entries = feed.findall(f"{A}entry")
    ids = [e.findtext(f"{A}id") for e in entries]
    assert len(set(ids)) == len(ids), f"{rel}: entry ids repeat"
    links: list[str] = [str(link.get("href")) for link in feed.findall(f"{A}link") if link.get("rel") != "self"]
    for e in entries:
        for tag in ("id", "title", "updated"):
            assert len(e.findall(f"{A}{tag}")) == 1, f"{rel}: entry needs exactly one {tag}"
        assert is_absolute_iri(e.findtext(f"{A}id"))
        assert is_time(e.findtext(f"{A}updated"))
        alternates = [(x.get("type"), x.get("href")) for x in e.findall(f"{A}link") if x.get("rel") == "alternate"]
        assert sorted(t for t, _ in alternates) == ["application/json", "text/html"], alternates
        links += [str(x.get("href")) for x in e.findall(f"{A}link")]
    updated = [str(e.findtext(f"{A}updated")) for e in entries]
    assert updated == sorted(updated, reverse=True), f"{rel}: not newest first"
    if entries:
        assert feed.findtext(f"{A}updated") == updated[0]
    for href in links:
        target = site_path(base, href)
        assert (site / target).is_file(), f"{rel} links {href}, which is no file of the site"
    return feed


def test_demo_feeds_are_atom_and_every_link_resolves(demo_site: BuiltSite) -> None:
    for rel in FEEDS:
        check_atom(demo_site.out, rel, DEMO_BASE)


def test_certificate_feed_says_each_verdict(demo_site: BuiltSite) -> None:
    site = demo_site.out
    manifest = json.loads((site / layout.MANIFEST).read_bytes())
    revoked = {r["serial"]: r for r in json.loads((site / layout.REVOCATIONS).read_bytes())["revocations"]}
    feed = parse(site, layout.FEED_CERTIFICATES)
    entries = feed.findall(f"{A}entry")
    assert len(entries) == len(manifest["certificates"]) > 0
    assert revoked, "the demo revokes a certificate: the feed must show it"
    for e in entries:
        json_href = next(x.get("href") for x in e.findall(f"{A}link") if x.get("type") == "application/json")
        cert = json.loads((site / site_path(DEMO_BASE, str(json_href))).read_bytes())
        summary = str(e.findtext(f"{A}summary"))
        said = {
            "certified": f"Certified, grade {cert['grade']}",
            "not-certified": "Not certified",
            "incomplete": "Incomplete: not decisive",
        }[cert["verdict"]]
        if cert["serial"] in revoked:
            r = revoked[cert["serial"]]
            assert summary.startswith(f"Revoked on {r['at']}: "), summary
            assert f"It said: {said}." in summary
            assert e.findtext(f"{A}updated") == r["at"] and e.findtext(f"{A}published") == cert["issued_at"]
        else:
            assert summary.startswith(f"{said}."), summary
            assert e.findtext(f"{A}updated") == cert["issued_at"]
        assert cert["subject"]["name"] in str(e.findtext(f"{A}title"))
        assert e.findtext(f"{A}id") == f"{DEMO_BASE}certificates/{cert['serial']}.json"


def test_reveal_and_checkpoint_feeds_follow_the_ledger(demo_site: BuiltSite) -> None:
    site = demo_site.out
    manifest = json.loads((site / layout.MANIFEST).read_bytes())
    reveals = parse(site, layout.FEED_REVEALS).findall(f"{A}entry")
    want = sorted(manifest["reveals"], key=lambda r: r["revealed_at"], reverse=True)[: layout.FEED_ENTRIES]
    assert {e.findtext(f"{A}id") for e in reveals} == {f"{DEMO_BASE}{r['path']}" for r in want}
    by_id = {r["path"]: r for r in manifest["reveals"]}
    for e in reveals:
        r = by_id[site_path(DEMO_BASE, str(e.findtext(f"{A}id")))]
        assert [c.get("term") for c in e.findall(f"{A}category")] == [r["reason"]]
        assert ("Retired item" if r["reason"] == "retired" else "Public item") in str(e.findtext(f"{A}title"))
    entries = json.loads((site / layout.ENTRIES).read_bytes())["entries"]
    rows = json.loads((site / layout.HISTORY).read_bytes())["checkpoints"]
    checkpoints = parse(site, layout.FEED_CHECKPOINTS).findall(f"{A}entry")
    assert len(checkpoints) == len(rows) > 1
    for e in checkpoints:
        note = site_path(DEMO_BASE, str(e.findtext(f"{A}id")))
        size = int((site / note).read_text().split("\n")[1])
        assert e.findtext(f"{A}updated") == entries[size - 1]["at"], "a checkpoint is dated by its newest entry"


def test_sitemap_lists_every_page_and_robots_names_it(demo_site: BuiltSite) -> None:
    site = demo_site.out
    urlset = parse(site, layout.SITEMAP)
    assert urlset.tag == f"{SM}urlset"
    locs = [str(u.findtext(f"{SM}loc")) for u in urlset.findall(f"{SM}url")]
    pages = sorted((p.relative_to(site).as_posix() for p in site.rglob("*.html")), key=str.encode)
    assert [site_path(DEMO_BASE, loc) for loc in locs] == pages
    assert len(pages) > 20 and all(is_absolute_iri(loc) for loc in locs)
    assert (site / layout.ROBOTS).read_text() == f"User-agent: *\nAllow: /\n\nSitemap: {DEMO_BASE}sitemap.xml\n"


def test_a_large_sitemap_becomes_an_index_of_parts_by_key() -> None:
    """Past `per_file` pages, an index of parts, each the pages whose key (the SHA-256 of the
    path) starts with its prefix, at most `per_file` of them; one page more rewrites one part."""
    pages = [f"items/x-{i:03d}.html" for i in range(40)] + ["index.html"]
    files = feeds.sitemap_files("https://h.example/p/", reversed(pages), per_file=8)
    index = ET.fromstring(files["sitemap.xml"])
    assert index.tag == f"{SM}sitemapindex"
    parts = [str(s.findtext(f"{SM}loc")) for s in index.findall(f"{SM}sitemap")]
    names = [loc.removeprefix("https://h.example/p/") for loc in parts]
    assert names == sorted(files.keys() - {"sitemap.xml"}) and len(names) >= 41 // 8
    listed = []
    for name in names:
        prefix = re.fullmatch(r"sitemap-([0-9a-f]+)\.xml", name)
        assert prefix, name
        urls = [str(u.findtext(f"{SM}loc")).removeprefix("https://h.example/p/") for u in ET.fromstring(files[name])]
        assert 0 < len(urls) <= 8 and urls == sorted(urls, key=str.encode)
        assert all(path_key(u).startswith(prefix.group(1)) for u in urls)
        listed += urls
    assert sorted(listed) == sorted(pages)
    more = feeds.sitemap_files("https://h.example/p/", [*pages, "items/y.html"], per_file=8)
    changed = {k for k in more.keys() | files.keys() if more.get(k) != files.get(k)}
    assert changed == {"sitemap-0.xml"} and b"items/y.html" in more["sitemap-0.xml"], "one part, not the index"
    assert list(feeds.sitemap_files("https://h.example/", pages, per_file=41)) == ["sitemap.xml"]


def _set_program(paths: Paths, **changes: Any) -> None:
    doc = yaml.safe_load(paths.program_file.read_text(encoding="utf-8"))
    doc.update(changes)
    paths.program_file.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


HOSTILE = "Evil <b>&amp; ]]> \x01\x0b\x7f\x85 \ufffe"


def test_hostile_names_are_escaped_and_forbidden_characters_replaced(make_program: Callable[..., Paths]) -> None:
    paths = make_program(secret_items=3, retired=1)
    retire_item(paths, "b-0002", f"Leak <script>alert(1)</script> & ]]> {HOSTILE}", "2026-03-01T00:00:00Z")
    _set_program(paths, name=HOSTILE)
    out = paths.data.parent / "public"
    build(paths, out)
    base = "https://test.example.org/prog/"
    for rel in FEEDS:
        raw = (out / rel).read_bytes()
        assert b"\x01" not in raw and b"\x0b" not in raw and "\ufffe".encode() not in raw
        assert b"<script>" not in raw and b"<b>" not in raw
        feed = check_atom(out, rel, base)  # parses: the forbidden characters are gone
        assert feed.findtext(f"{A}author/{A}name") == "Evil <b>&amp; ]]> \ufffd\ufffd\ufffd\ufffd \ufffd"
    entry = parse(out, layout.FEED_REVEALS).find(f"{A}entry")
    assert entry is not None
    assert "Leak <script>alert(1)</script> & ]]> Evil <b>" in str(entry.findtext(f"{A}summary"))


def test_feeds_keep_only_the_newest_entries(
    make_program: Callable[..., Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_program(secret_items=6, retired=5)
    monkeypatch.setattr(layout, "FEED_ENTRIES", 3)
    out = paths.data.parent / "public"
    build(paths, out)
    manifest = json.loads((out / layout.MANIFEST).read_bytes())
    base = "https://test.example.org/prog/"
    feed = check_atom(out, layout.FEED_REVEALS, base)
    newest = sorted(manifest["reveals"], key=lambda r: r["revealed_at"], reverse=True)[:3]
    assert [site_path(base, str(e.findtext(f"{A}id"))) for e in feed.findall(f"{A}entry")] == [
        r["path"] for r in newest
    ]
    assert len(manifest["reveals"]) > 3


def test_site_url_moves_links_but_not_ids(make_program: Callable[..., Paths]) -> None:
    paths = make_program()
    _set_program(paths, site_url="https://mirror.example.net/certs")
    out = paths.data.parent / "public"
    build(paths, out)
    base = "https://mirror.example.net/certs/"
    feed = check_atom(out, layout.FEED_REVEALS, base)
    assert feed.findtext(f"{A}id") == "https://test.example.org/prog/feeds/reveals.xml"
    assert all(
        str(e.findtext(f"{A}id")).startswith("https://test.example.org/prog/reveals/") for e in feed.iter(f"{A}entry")
    )
    assert f"Sitemap: {base}sitemap.xml\n" in (out / layout.ROBOTS).read_text()
    assert all(str(u.text).startswith(base) for u in parse(out, layout.SITEMAP).iter(f"{SM}loc"))


@pytest.mark.parametrize(
    "value",
    [
        "http://example.org/",
        "https://",
        "https://user@example.org/",
        "https://example.org/?page=1",
        "https://example.org/#top",
        "https://example.org/a b/",
        "https://example.org/<x>/",
        "https://example.org:99999/",
        "https://example.org/%zz/",
        "https://exämple.org/",
        "ftp://example.org/",
        42,
    ],
)
def test_a_bad_site_url_is_refused_naming_the_key(make_program: Callable[..., Paths], value: object) -> None:
    paths = make_program(retired=0)
    _set_program(paths, site_url=value)
    with pytest.raises(InputError) as info:
        load_program(paths)
    [p] = info.value.problems
    assert p.where == "site_url" and "https URL" in p.message


def test_good_site_urls_become_base_urls(make_program: Callable[..., Paths]) -> None:
    paths = make_program(retired=0)
    for value, base in [
        ("https://example.org", "https://example.org/"),
        ("https://example.org:8443/a%20b/c/", "https://example.org:8443/a%20b/c/"),
        ("https://[2001:db8::1]/site", "https://[2001:db8::1]/site/"),
    ]:
        _set_program(paths, site_url=value)
        program, warnings = load_program(paths)
        assert (program.site_url, warnings) == (base, [])


def test_origin_becomes_an_escaped_https_url() -> None:
    assert feeds.origin_url("transparency.example.org/oracle") == "https://transparency.example.org/oracle/"
    assert feeds.origin_url("예시.example/a?b#c") == "https://%EC%98%88%EC%8B%9C.example/a%3Fb%23c/"
    assert feeds.absolute("https://h/", "certificates/a b/index.html#x y") == (
        "https://h/certificates/a%20b/index.html#x%20y"
    )


def test_two_builds_write_the_same_feeds_sitemap_and_robots(
    demo_site: BuiltSite, demo_copy: BuiltSite, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    build(demo_copy.paths, again)
    names = [*FEEDS, layout.SITEMAP, layout.ROBOTS]
    assert {n: (again / n).read_bytes() for n in names} == {n: (demo_site.out / n).read_bytes() for n in names}
