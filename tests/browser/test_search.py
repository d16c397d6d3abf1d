"""Search: the Pagefind index of the record pages (generator/site/search.py) and the search page.

The index is queried for real, twice over: through Node, with the published pagefind.js reading
the bundle from disk (a stand-in for fetch), and in Chromium, through the search page served on
localhost, as the public uses it. What each query must find is read from the site's own files
(the manifest, the certificates, the reveals), never written here. Without Node or Chromium the
tests that need them are skipped, saying why; with CI set they fail instead.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from generator.build.previous_release import PreviousRelease
from generator.build.writer import SiteWriter
from generator.commands.build import build
from generator.core import layout
from generator.site import search
from generator.site.render import make_environment
from generator.state import search_record_cache
from generator.verifier import identity_of, verify_site
from tests.support.browser import Browsing, Tab, axe, blocking, browsing, describe, overflowing, page_width, serve
from tests.support.demo import BuiltSite, copy_demo_data
from tests.support.leaks import sealed_needles
from tests.support.leaks import search as find_needles

# pagefind.js in Node: its fetches of bundle files are served from disk, as a browser would
# fetch them from the site; it merges the other shards the way search.js does, and prints, for
# each query, every result's URL and metadata.
NODE_QUERY = r"""
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
const [primary, shards, ...queries] = process.argv.slice(2);
const base = pathToFileURL(primary);
globalThis.fetch = async (url) => new Response(await readFile(fileURLToPath(new URL(url, base))));
const pagefind = await import(new URL("pagefind.js", base).href);
const options = { baseUrl: "/" };
await pagefind.options({ basePath: base.href, ...options });
await pagefind.init();
for (const shard of JSON.parse(shards)) {
  await pagefind.mergeIndex(pathToFileURL(shard).href, options);
}
const out = {};
for (const q of queries) {
  const found = await pagefind.search(q);
  out[q] = await Promise.all(found.results.map(async (r) => {
    const d = await r.data();
    return { url: d.url, meta: d.meta };
  }));
}
process.stdout.write(JSON.stringify(out));
"""


def unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the search tests: {reason}", pytrace=False)
    pytest.skip(reason)


def shard_folders(index: Path) -> list[Path]:
    """The index's shards, the primary (the one holding Pagefind's script) first, the others in
    order, as the search page lists them."""
    shards = sorted((p.parent for p in index.glob("*/pagefind-entry.json")), key=lambda p: p.name)
    primary = [p for p in shards if (p / "pagefind.js").is_file()]
    assert len(primary) == 1, f"not one primary shard in {index}: {primary}"
    return primary + [p for p in shards if p != primary[0]]


def node_query(index: Path, queries: list[str], tmp_path: Path) -> dict[str, list[dict[str, Any]]]:
    node = shutil.which("node")
    if node is None:
        unavailable("Node is not installed (Debian: apt install nodejs)")
    script = tmp_path / "query.mjs"
    script.write_text(NODE_QUERY, encoding="utf-8")
    primary, *others = (f"{p}/" for p in shard_folders(index))
    done = subprocess.run(
        [str(node), str(script), primary, json.dumps(others), *queries],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def urls(results: list[dict[str, Any]]) -> list[str]:
    return [r["url"].lstrip("/") for r in results]


def read_json(site: Path, rel: str) -> Any:
    return json.loads((site / rel).read_bytes())


def sha256_of(site: Path, rel: str) -> str:
    return hashlib.sha256((site / rel).read_bytes()).hexdigest()


def site_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def marked_pages(site: Path) -> set[str]:
    return {rel for rel in site_pages(site) if search.MARKER in (site / rel).read_bytes()}


def index_files(site: Path, shard: Path | None = None) -> dict[str, bytes]:
    """The index's files (or one shard's), by path from the site's root."""
    root = shard or site / layout.SEARCH_INDEX_DIR
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def unpacked(data: bytes) -> bytes:
    """A bundle file as Pagefind reads it: its chunks are gzip."""
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def fragments(site: Path, shard: Path | None = None) -> list[dict[str, Any]]:
    """Every page record of the index (or of one shard), as Pagefind stored it (url, content,
    meta, filters)."""
    out = []
    for rel, data in index_files(site, shard).items():
        if rel.endswith(".pf_fragment"):
            raw = unpacked(data)
            assert raw.startswith(b"pagefind_dcd"), rel
            out.append(json.loads(raw[len(b"pagefind_dcd") :]))
    return out


def demo_key(site: Path) -> str:
    return next(k["vkey"] for k in read_json(site, layout.KEYS)["keys"] if k["status"] == "active")


# ---- the published index -----------------------------------------------------------------------


def test_the_index_is_published_whole_and_listed_in_sha256sums(demo_site: BuiltSite) -> None:
    site = demo_site.out
    files = index_files(site)
    listed = dict(
        reversed(line.split("  ", 1)) for line in (site / layout.SUMS).read_text(encoding="utf-8").splitlines()
    )
    assert files, "no search index in the built site"
    for rel, data in files.items():
        assert listed.get(rel) == hashlib.sha256(data).hexdigest(), f"{rel} is not listed in SHA256SUMS as it is"
    primary = shard_folders(site / layout.SEARCH_INDEX_DIR)[0].relative_to(site).as_posix()
    names = {rel.removeprefix(f"{primary}/") for rel in files}
    assert {"pagefind.js", "pagefind-worker.js", "pagefind-entry.json", "wasm.en.pagefind"} <= names
    # Pagefind's ready-made interfaces are not published: the search page has its own.
    assert not {n for n in names if "-ui" in n or "highlight" in n or n.startswith("wasm.unknown")}, names
    assert (site / layout.SEARCH_PAGE).is_file()
    assert verify_site(site, demo_key(site)).ok


def test_a_changed_index_file_fails_the_verifier(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    target = next(rel for rel in index_files(site) if rel.endswith(".pf_fragment"))
    (site / target).write_bytes((site / target).read_bytes() + b"\0")
    report = verify_site(site, demo_key(site))
    assert not report.ok
    assert any(p.file == target or target in p.describe() for p in report.failures), report.failures


def test_only_record_pages_are_indexed_and_each_of_them_is(demo_site: BuiltSite) -> None:
    site = demo_site.out
    manifest = read_json(site, layout.MANIFEST)
    records = {layout.certificate_page(c["serial"]) for c in manifest["certificates"]}
    records |= {layout.item_page(r["id"]) for r in manifest["reveals"]}
    indexed = {f["url"].lstrip("/") for f in fragments(site)}
    marked = marked_pages(site)
    assert records <= indexed, f"record pages missing from the index: {sorted(records - indexed)}"
    assert indexed == marked, "the index and the pages carrying a search record disagree"
    patterns = [p for _, p in search.RECORD_PAGES]
    assert all(any(Path(rel).match(p) for p in patterns) for rel in indexed), sorted(indexed)
    # The lists are never indexed, nor the search page itself.
    for rel in (layout.POOL_PAGE, layout.CERTIFICATES_PAGE, layout.RETIRED_PAGE, layout.RUNS_PAGE, layout.HOME):
        assert rel not in indexed
    assert layout.SEARCH_PAGE not in indexed
    entries = [read_json(p, "pagefind-entry.json") for p in shard_folders(site / layout.SEARCH_INDEX_DIR)]
    assert sum(lang["page_count"] for e in entries for lang in e["languages"].values()) == len(indexed)


def test_what_is_indexed_is_the_record_not_the_page(demo_site: BuiltSite) -> None:
    """A record's few lines, not the page's breakdown tables: what keeps Pagefind's memory small."""
    site = demo_site.out
    by_url = {f["url"].lstrip("/"): f for f in fragments(site)}
    for c in read_json(site, layout.MANIFEST)["certificates"]:
        f = by_url[layout.certificate_page(c["serial"])]
        cert = read_json(site, c["path"])
        assert f["meta"]["serial"] == c["serial"]
        assert f["meta"]["system"] == cert["subject"]["name"]
        assert f["meta"]["organization"] == cert["subject"]["organization"]
        assert f["meta"]["sha256"] == sha256_of(site, c["path"])
        assert f["meta"]["kind"] == "certificate"
        assert f["filters"] == {}, "Pagefind writes filters in no fixed order: a site with them is not reproducible"
        assert len(f["content"]) < 1000, "the whole page was indexed, not its record"
        assert "Pass rate" not in f["content"]


def test_the_index_holds_no_sealed_secret(demo_site: BuiltSite) -> None:
    """The leak search reads files as bytes; the index's chunks are gzip, so they are read
    unpacked here."""
    needles, sealed = sealed_needles(demo_site)
    assert sealed, "the demo has no sealed item to look for"
    files = {rel: unpacked(data) for rel, data in index_files(demo_site.out).items()}
    assert not find_needles(files, needles)


def test_two_builds_of_the_same_data_publish_the_same_index(demo_site: BuiltSite, tmp_path: Path) -> None:
    # Another folder, at another depth: the index must not depend on where the site is built.
    paths = copy_demo_data(tmp_path / "elsewhere" / "deeper" / "data")
    out = tmp_path / "elsewhere" / "site"
    build(paths, out)
    first, second = index_files(demo_site.out), index_files(out)
    assert first == second
    assert (demo_site.out / layout.SEARCH_PAGE).read_bytes() == (out / layout.SEARCH_PAGE).read_bytes()
    for rel in marked_pages(out):
        assert (demo_site.out / rel).read_bytes() == (out / rel).read_bytes(), rel


# ---- the index, queried through Node ------------------------------------------------------------


def test_the_index_finds_systems_serials_hashes_and_items(demo_site: BuiltSite, tmp_path: Path) -> None:
    site = demo_site.out
    manifest = read_json(site, layout.MANIFEST)
    cert = manifest["certificates"][0]
    doc = read_json(site, cert["path"])
    digest = sha256_of(site, cert["path"])
    reveal = manifest["reveals"][-1]
    commitment = sha256_of(site, reveal["path"])
    page, item_page = layout.certificate_page(cert["serial"]), layout.item_page(reveal["id"])
    same_system = {
        layout.certificate_page(c["serial"])
        for c in manifest["certificates"]
        if read_json(site, c["path"])["subject"]["name"] == doc["subject"]["name"]
    }
    queries = {
        "system": doc["subject"]["name"],
        "organization": doc["subject"]["organization"],
        "serial": cert["serial"],
        "hash": digest,
        "hash prefix": digest[:12],
        "item": reveal["id"],
        "commitment": commitment,
        "commitment prefix": commitment[:12],
        "nothing": "zzqxv",
    }
    found = node_query(site / layout.SEARCH_INDEX_DIR, list(queries.values()), tmp_path)
    got = {name: urls(found[q]) for name, q in queries.items()}
    assert same_system <= set(got["system"]), got["system"]
    assert page in got["organization"]
    for name in ("serial", "hash", "hash prefix"):
        assert got[name][:1] == [page], (name, got[name])
    for name in ("hash", "hash prefix", "commitment", "commitment prefix"):
        assert len(got[name]) == 1, (name, got[name])
    for name in ("item", "commitment", "commitment prefix"):
        assert got[name][:1] == [item_page], (name, got[name])
    assert got["nothing"] == []
    meta = found[cert["serial"]][0]["meta"]
    assert meta["title"].endswith(cert["serial"]) and doc["subject"]["name"] in meta["title"]
    assert meta["summary"]


# ---- write_index on pages of its own ----------------------------------------------------------


def record_page(title: str, record: bool = True, hidden_marker: bool = False, extra: str = "") -> bytes:
    """A page like the site's: its record rendered by the real macro."""
    env = make_environment()
    body = ""
    if record:
        macro = env.from_string('{% from "search_macros.html" import hidden_record %}{{ hidden_record(r) }}')
        r = search.SearchRecord("item", title, f"Summary of {title}.", (search.Fact("item", "Item", title),))
        body = macro.render(r=r)
    if hidden_marker:  # the marker's bytes where Pagefind reads no element: an empty record
        body += f"<!-- {search.MARKER.decode()}</div> -->"
    body += extra
    head = f'<!DOCTYPE html><html lang="en"><head><title>{title}</title></head>'
    return f"{head}<body><main><h1>{title}</h1>{body}<p>page text {title}</p></main></body></html>".encode()


def test_write_index_indexes_the_pages_with_a_record_among_the_record_pages(tmp_path: Path) -> None:
    w = SiteWriter(tmp_path / "site")
    w.write(layout.item_page("x-1"), record_page("x-1"))
    w.write(layout.item_page("x-2"), record_page("x-2", record=False))  # a record page without its record
    w.write(layout.POOL_PAGE, record_page("x-3"))  # a record outside the record pages
    indexed = search.write_index(w)
    assert indexed.count("item") == 1 and indexed.total == 1
    assert [f["url"] for f in fragments(w.root)] == ["/" + layout.item_page("x-1")]
    assert all(rel in w.hashes for rel in index_files(w.root))
    w.cleanup.wait()
    assert not [p for p in w.root.iterdir() if p.name.startswith(".search-")], "the scratch folder was left behind"
    assert [p.name for p in w.root.parent.iterdir()] == [w.root.name], "the scratch folder was left beside the site"


def test_each_kind_of_record_page_is_indexed_as_its_kind(tmp_path: Path) -> None:
    """System and methodology pages too, once they are given a record; a system's later pages
    and the methodology's copy of its current version are never records."""
    env = make_environment()
    macro = env.from_string('{% from "search_macros.html" import hidden_record %}{{ hidden_record(r) }}')
    version = SimpleNamespace(version="2031.2", at="2031-02-01T00:00:00Z", index=7, sha256="ab" * 32)
    records = {
        layout.system_page("orca-parser"): search.system_record("Orca Parser", ["3.1"], ["Orca Systems"], "Latest."),
        layout.system_page("orca-parser", 2): search.system_record("Orca Parser", ["3.1"], ["Orca Systems"], "x"),
        layout.methodology_page("2031.2"): search.methodology_record(version),
        layout.METHODOLOGY_PAGE: search.methodology_record(version),
    }
    w = SiteWriter(tmp_path / "site")
    for rel, r in records.items():
        w.write(rel, f'<!DOCTYPE html><html lang="en"><body><main>{macro.render(r=r)}</main></body></html>'.encode())
    indexed = search.write_index(w)
    assert (indexed.count("system"), indexed.count("methodology"), indexed.total) == (1, 1, 2)
    found = node_query(w.root / layout.SEARCH_INDEX_DIR, ["Orca", "2031.2", "abababababab"], tmp_path)
    assert urls(found["Orca"]) == [layout.system_page("orca-parser")]
    assert urls(found["2031.2"]) == urls(found["abababababab"]) == [layout.methodology_page("2031.2")]


def test_a_record_is_found_however_far_into_its_page(tmp_path: Path) -> None:
    """Pages are read a piece at a time for the marker: one that straddles two pieces counts."""
    w = SiteWriter(tmp_path / "site")
    for n, offset in enumerate((65536 - 20, 65536, 3 * 65536 - 1)):
        page = record_page(f"x-{n}")
        at = page.index(search.MARKER)
        w.write(layout.item_page(f"x-{n}"), page[:at] + b" " * (offset - at) + page[at:])
    assert search.write_index(w).count("item") == 3


def test_the_record_memory_spares_reading_the_pages_whose_bytes_it_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build after one event reads the changed pages for their record, not every record page;
    the memory keeps this release's record pages only, each with what its bytes hold."""
    w = SiteWriter(tmp_path / "site")
    w.write(layout.item_page("x-1"), record_page("x-1"))
    w.write(layout.item_page("x-2"), record_page("x-2", record=False))
    w.write(layout.POOL_PAGE, record_page("pool"))
    memory: dict[str, bool] = {"0" * 64: True}  # a page no longer on the site
    assert search.record_pages(w, memory) == [(layout.item_page("x-1"), "item")]
    assert memory == {w.hashes[layout.item_page("x-1")]: True, w.hashes[layout.item_page("x-2")]: False}

    read: list[str] = []
    record_of = search._record_of

    def counted(path: Path, rel: str) -> bytes | None:
        read.append(rel)
        return record_of(path, rel)

    monkeypatch.setattr(search, "_record_of", counted)
    w.write(layout.item_page("x-3"), record_page("x-3"))
    assert [rel for rel, _ in search.record_pages(w, memory)] == [layout.item_page(n) for n in ("x-1", "x-3")]
    assert read == [layout.item_page("x-3")]
    # What the memory says is taken as said: it is bound to the code that read the bytes.
    assert search.record_pages(w, {sha: False for sha in memory}) == []
    assert search.record_pages(w) == search.record_pages(w, {}) == search.record_pages(w, memory)


def test_the_record_memory_is_bound_to_the_code_and_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    place = search_record_cache.memory_path(tmp_path)
    assert search_record_cache.load(place) == {}
    facts = {"a" * 64: True, "b" * 64: False}
    place.parent.mkdir(parents=True)
    staged = search_record_cache.stage(place, facts)
    assert staged is not None and search_record_cache.load(place) == {}  # beside its place, not in it
    staged.commit()
    assert search_record_cache.load(place) == facts
    doc = json.loads(place.read_bytes())
    place.write_text(json.dumps({**doc, "rules": "0" * 64}))
    assert search_record_cache.load(place) == {}
    place.write_text(json.dumps({**doc, "pages": {"a" * 64: 1, "../x": True, "c" * 64: True}}))
    assert search_record_cache.load(place) == {"c" * 64: True}
    place.write_bytes(place.read_bytes()[:-3])
    assert search_record_cache.load(place) == {}


def test_write_index_publishes_nothing_without_a_record(tmp_path: Path) -> None:
    w = SiteWriter(tmp_path / "site")
    w.write(layout.HOME, record_page("home", record=False))
    assert search.write_index(w).total == 0
    assert not index_files(w.root) and not any(k.startswith(layout.SEARCH_INDEX_DIR) for k in w.hashes)


def test_write_index_refuses_when_pagefind_skips_a_page_given_to_it(tmp_path: Path) -> None:
    w = SiteWriter(tmp_path / "site")
    w.write(layout.item_page("x-1"), record_page("x-1"))
    w.write(layout.item_page("x-2"), record_page("x-2", record=False, hidden_marker=True))
    with pytest.raises(search.SearchIndexError, match="indexed 1 pages of the 2"):
        search.write_index(w)


def test_a_record_without_its_end_is_refused_naming_the_page(tmp_path: Path) -> None:
    w = SiteWriter(tmp_path / "site")
    w.write(layout.item_page("x-1"), record_page("x-1").replace(b"</div>", b""))
    with pytest.raises(search.SearchIndexError, match=f"^{layout.item_page('x-1')}: its search record does not end"):
        search.write_index(w)


def test_a_pagefind_filter_is_refused_since_pagefind_writes_it_in_no_fixed_order(tmp_path: Path) -> None:
    w = SiteWriter(tmp_path / "site")
    page = record_page("x-1").replace(b"</div>", b'<span data-pagefind-filter="kind:item"></span></div>', 1)
    w.write(layout.item_page("x-1"), page)
    with pytest.raises(search.SearchIndexError, match="filter"):
        search.write_index(w)


def test_only_the_record_reaches_pagefind(tmp_path: Path) -> None:
    """Whatever else the page holds (here a filter, after the record) is not given to Pagefind."""
    w = SiteWriter(tmp_path / "site")
    w.write(layout.item_page("x-1"), record_page("x-1", extra='<span data-pagefind-filter="kind:item">aside</span>'))
    assert search.write_index(w).total == 1
    assert [(f["filters"], "aside" in f["content"]) for f in fragments(w.root)] == [({}, False)]


def sharded_site(root: Path, names: list[str]) -> SiteWriter:
    w = SiteWriter(root)
    for name in names:
        w.write(layout.item_page(name), record_page(name))
    w.write(layout.item_page("no-record"), record_page("no-record", record=False))
    return w


def test_the_index_comes_in_shards_each_page_in_one_of_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past SHARD_PAGES record pages a shard, the pages are split by the hash of their path, each
    shard indexed alone; searched merged, as the search page does, every page is found once."""
    monkeypatch.setattr(search, "SHARD_PAGES", 2)
    names = [f"x-{n}" for n in range(9)]
    w = sharded_site(tmp_path / "site", names)
    indexed = search.write_index(w)
    assert indexed.total == 9
    assert search.shard_bits(10) == 3  # ten candidates (one without a record): 8 shards of up to 2
    folders = shard_folders(w.root / layout.SEARCH_INDEX_DIR)
    assert [f"{layout.SEARCH_INDEX_DIR}/{p.name}" for p in folders] == list(indexed.shards)
    assert indexed.script == f"{indexed.shards[0]}/pagefind.js"
    assert 1 < len(folders) <= 8 and all(len(p.name) == 1 for p in folders)
    for p in folders[1:]:  # only the primary carries Pagefind's script, worker and wasm
        assert not {q.name for q in p.iterdir()} & {"pagefind.js", "pagefind-worker.js", "wasm.en.pagefind"}
    for p in folders:
        entry = read_json(p, "pagefind-entry.json")
        held = sorted(f"x-{n}" for n in range(9) if search.shard_of(layout.item_page(f"x-{n}"), 3) == int(p.name, 16))
        assert entry["languages"]["en"]["page_count"] == len(held) > 0, (p.name, held)
    found = node_query(w.root / layout.SEARCH_INDEX_DIR, [*names, "Summary"], tmp_path)
    for name in names:
        assert urls(found[name]) == [layout.item_page(name)], name
    assert sorted(urls(found["Summary"])) == sorted(layout.item_page(n) for n in names)


def test_the_shards_are_the_index_of_the_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Split or not, the same records are indexed with the same texts and metadata."""
    names = [f"x-{n}" for n in range(9)]
    whole = sharded_site(tmp_path / "whole", names)
    search.write_index(whole)
    monkeypatch.setattr(search, "SHARD_PAGES", 2)
    split = sharded_site(tmp_path / "split", names)
    search.write_index(split)
    assert len(shard_folders(split.root / layout.SEARCH_INDEX_DIR)) > 1
    assert sorted(map(json.dumps, fragments(whole.root))) == sorted(map(json.dumps, fragments(split.root)))


def test_pagefind_s_own_configuration_sources_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pagefind reads PAGEFIND_* variables and a pagefind.yml in its working folder: neither may
    change what the build publishes."""

    def built(name: str) -> dict[str, bytes]:
        w = SiteWriter(tmp_path / name)
        w.write(layout.item_page("x-1"), record_page("x-1"))
        w.write(layout.item_page("x-2"), record_page("x-2"))
        search.write_index(w)
        return {k: v for k, v in index_files(w.root).items()}

    clean = built("clean")
    monkeypatch.setenv("PAGEFIND_EXCLUDE_SELECTORS", "p")
    monkeypatch.setenv("PAGEFIND_FORCE_LANGUAGE", "fr")
    monkeypatch.setenv("PAGEFIND_KEEP_INDEX_URL", "false")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pagefind.yml").write_text("root_selector: h1\noutput_subdir: elsewhere\n", encoding="utf-8")
    assert built("configured") == clean


def test_a_missing_pagefind_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pagefind_bin

    monkeypatch.setattr(pagefind_bin, "get_executable", lambda: tmp_path / "no-such-pagefind")
    w = SiteWriter(tmp_path / "site")
    w.write(layout.item_page("x-1"), record_page("x-1"))
    with pytest.raises(search.SearchIndexError, match="cannot run pagefind"):
        search.write_index(w)


def test_the_search_box_is_a_plain_form_to_the_search_page() -> None:
    env = make_environment()
    html = env.from_string('{% from "search_macros.html" import search_box with context %}{{ search_box() }}').render(
        page_path="certificates/x/index.html"
    )
    assert f'action="../../{layout.SEARCH_PAGE}"' in html
    assert 'method="get"' in html and 'name="q"' in html and 'role="search"' in html
    assert '<label for="site-search">' in html and 'id="site-search"' in html


# ---- the search page in Chromium ----------------------------------------------------------------


@pytest.fixture(scope="module")
def served(demo_site: BuiltSite) -> Iterator[Browsing]:
    with browsing(demo_site.out) as b:
        yield b


def search_for(b: Browsing, query: str, width: int = 390) -> Tab:
    """The search page opened with ?q=, once its live region has announced the outcome."""
    from urllib.parse import quote

    tab = b.open(f"{layout.SEARCH_PAGE}?q={quote(query)}", width)
    tab.page.wait_for_function(
        "() => /match/.test(document.getElementById('search-status').textContent)", timeout=15000
    )
    return tab


def result_links(tab: Tab) -> list[str]:
    """Each result's link, resolved, as a site path from the server's root."""
    return list(tab.page.eval_on_selector_all("#search-results a", "links => links.map(a => a.href)"))


def test_the_search_page_finds_a_system_by_name_and_a_certificate_by_serial_and_hash(
    served: Browsing, demo_site: BuiltSite
) -> None:
    """The first query comes in the address (as the home page's box sends it), the others
    through the form, as a reader types them one after the other."""
    site = demo_site.out
    cert = read_json(site, layout.MANIFEST)["certificates"][-1]
    doc = read_json(site, cert["path"])
    page = served.base_url + layout.certificate_page(cert["serial"])
    digest = sha256_of(site, cert["path"])
    queries = [(doc["subject"]["name"], False), (cert["serial"], True), (digest, True), (digest[:12], True)]
    tab = search_for(served, queries[0][0])
    for n, (query, first) in enumerate(queries):
        if n:
            tab.page.fill("#search-query", query)
            tab.page.click("#search-form button[type=submit]")
            tab.page.wait_for_function(
                "q => document.getElementById('search-status').textContent.includes(`“${q}”`)", arg=query
            )
        links = result_links(tab)
        status = tab.page.inner_text("#search-status")
        assert page in links, (query, links)
        if first:
            assert links[0] == page, (query, links)
        count = len(links)
        assert status == f"{count} record{' matches' if count == 1 else 's match'} “{query}”.", status
    tab.page.fill("#search-query", "zzqxv")
    tab.page.click("#search-form button[type=submit]")
    tab.page.wait_for_function("() => /No record/.test(document.getElementById('search-status').textContent)")
    assert result_links(tab) == []
    assert tab.errors == [], tab.errors
    tab.close()


def test_the_search_page_merges_every_shard(served: Browsing, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the index in many shards, a system's certificates, spread over several of them, are
    all found by the search page, which merges the shards the page names."""
    monkeypatch.setattr(search, "SHARD_PAGES", 4)
    paths = copy_demo_data(tmp_path / "data")
    out = tmp_path / "public"
    build(paths, out)
    manifest = read_json(out, layout.MANIFEST)
    name = read_json(out, manifest["certificates"][0]["path"])["subject"]["name"]
    pages = {
        layout.certificate_page(c["serial"])
        for c in manifest["certificates"]
        if read_json(out, c["path"])["subject"]["name"] == name
    }
    folders = shard_folders(out / layout.SEARCH_INDEX_DIR)
    held = {f["url"].lstrip("/"): p.name for p in folders for f in fragments(out, p)}
    assert len({held[page] for page in pages}) > 1, "the system's certificates are all in one shard"
    html = (out / layout.SEARCH_PAGE).read_text(encoding="utf-8")
    named = html.split('data-shards="', 1)[1].split('"', 1)[0].split()
    assert [n.rstrip("/").rsplit("/", 1)[1] for n in named] == [p.name for p in folders[1:]]
    with serve(out) as base_url:  # in the browser the other tests use: one Playwright at a time
        b = Browsing(base_url, served.chromium)
        tab = search_for(b, name)
        while tab.page.is_visible("#search-more"):
            before = len(result_links(tab))
            tab.page.click("#search-more")
            tab.page.wait_for_function("n => document.querySelectorAll('#search-results a').length > n", arg=before)
        links = {link.removeprefix(b.base_url) for link in result_links(tab)}
        assert pages <= links, sorted(pages - links)
        assert tab.errors == [], tab.errors
        tab.close()


def test_search_by_keyboard_and_follow_a_result(served: Browsing, demo_site: BuiltSite) -> None:
    cert = read_json(demo_site.out, layout.MANIFEST)["certificates"][0]
    tab = served.open(layout.SEARCH_PAGE, 1280)
    page = tab.page
    for _ in range(40):  # the skip link, the header's links, then the form
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "search-query":
            break
    else:
        pytest.fail("the search field cannot be reached with the Tab key")
    page.keyboard.type(cert["serial"])
    page.keyboard.press("Enter")
    page.wait_for_function("() => /match/.test(document.getElementById('search-status').textContent)")
    assert page.url.endswith(f"?q={cert['serial']}"), "the results' address is not kept"
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('#search-results') !== null"):
            break
    else:
        pytest.fail("no result can be reached with the Tab key")
    page.keyboard.press("Enter")
    page.wait_for_url(served.base_url + layout.certificate_page(cert["serial"]))
    assert cert["serial"] in page.title()
    assert tab.errors == [], tab.errors
    tab.close()


def test_the_search_page_with_results_reflows_at_320_px_and_passes_axe(served: Browsing, demo_site: BuiltSite) -> None:
    # A hash query: results whose excerpts hold 64-character words, the likeliest to overflow.
    cert = read_json(demo_site.out, layout.MANIFEST)["certificates"][0]
    digest = sha256_of(demo_site.out, cert["path"])
    for width in (320, 390, 1280):
        tab = search_for(served, digest[:12], width)
        assert page_width(tab.page) <= width, overflowing(tab.page)
        violations = blocking(axe(tab.page))
        assert not violations, describe(violations)
        tab.close()


def test_more_results_load_on_request_and_take_the_focus(served: Browsing, demo_site: BuiltSite) -> None:
    reveals = read_json(demo_site.out, layout.MANIFEST)["reveals"]
    assert len(reveals) > 20, "the demo has too few items for a second batch of results"
    tab = search_for(served, "item")  # every item's record says "Item"
    page = tab.page
    assert len(result_links(tab)) == 20
    assert page.is_visible("#search-more")
    page.click("#search-more")
    page.wait_for_function("() => /records are shown/.test(document.getElementById('search-status').textContent)")
    links = result_links(tab)
    assert len(links) > 20 and len(set(links)) == len(links)
    assert page.evaluate("document.activeElement.href") == links[20]
    assert tab.errors == [], tab.errors
    tab.close()


def test_without_javascript_the_page_says_so_and_links_the_sorted_lists(served: Browsing) -> None:
    context = served.chromium.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(served.base_url + layout.SEARCH_PAGE + "?q=anything")
    assert page.is_visible("noscript p")
    assert "Search needs JavaScript" in page.inner_text("main")
    hrefs = page.eval_on_selector_all("main a", "links => links.map(a => a.href)")
    for target in (layout.CERTIFICATES_PAGE, layout.RETIRED_PAGE, layout.RUNS_PAGE, layout.POOL_PAGE):
        assert served.base_url + target in hrefs, target
    assert not page.is_visible("#search-from-disk") and not page.is_visible("#search-results")
    assert page_width(page) <= 390
    context.close()


def test_from_disk_the_page_says_search_cannot_run(served: Browsing, demo_site: BuiltSite) -> None:
    context = served.chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((demo_site.out / layout.SEARCH_PAGE).as_uri() + "?q=orca")
    page.wait_for_selector("#search-from-disk", state="visible")
    assert "opened from disk" in page.inner_text("#search-status")
    assert "file://" in page.inner_text("#search-from-disk")
    assert page.is_visible(f"main a[href='../{layout.CERTIFICATES_PAGE}']")
    assert not page.is_visible("noscript p")
    assert errors == []
    context.close()


def test_results_link_to_their_pages_under_any_url_prefix(
    served: Browsing, demo_site: BuiltSite, tmp_path: Path
) -> None:
    root = tmp_path / "served"
    shutil.copytree(demo_site.out, root / "mirror" / "transparency")
    cert = read_json(demo_site.out, layout.MANIFEST)["certificates"][0]
    with serve(root) as base:
        b = Browsing(base + "mirror/transparency/", served.chromium)
        tab = search_for(b, cert["serial"])
        links = result_links(tab)
        assert links[0] == b.base_url + layout.certificate_page(cert["serial"]), links
        tab.page.click("#search-results a")
        tab.page.wait_for_load_state("load")
        assert cert["serial"] in tab.page.title()
        assert tab.errors == [], tab.errors
        tab.close()


def test_the_home_page_s_search_box_takes_its_query_to_the_search_page(served: Browsing, demo_site: BuiltSite) -> None:
    """The box's plain GET form leads to the search page, whose script searches for `q`."""
    cert = read_json(demo_site.out, layout.MANIFEST)["certificates"][0]
    tab = served.open(layout.HOME, 390)
    tab.page.fill("#site-search", cert["serial"])
    tab.page.press("#site-search", "Enter")
    tab.page.wait_for_url(f"{served.base_url}{layout.SEARCH_PAGE}?q={cert['serial']}")
    tab.page.wait_for_function("() => /match/.test(document.getElementById('search-status').textContent)")
    assert result_links(tab)[0] == served.base_url + layout.certificate_page(cert["serial"])
    assert tab.page.input_value("#search-query") == cert["serial"]
    assert tab.errors == [], tab.errors
    tab.close()


def test_a_site_written_to_a_relative_folder_is_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`transparency build` writes to `public` by default: a relative path, while pagefind runs
    in a folder of its own."""
    monkeypatch.chdir(tmp_path)
    w = SiteWriter(Path("site"))
    w.write(layout.item_page("x-1"), record_page("x-1"))
    search.write_index(w)
    assert any(rel.startswith(layout.SEARCH_INDEX_DIR + "/") for rel in w.hashes)


def released(w: SiteWriter) -> Path:
    """The writer's folder as a last release: its SHA256SUMS lists what it wrote."""
    w.cleanup.wait()
    lines = [f"{digest}  {rel}\n" for rel, digest in sorted(w.hashes.items())]
    (w.root / layout.SUMS).write_text("".join(lines), encoding="utf-8")
    return w.root


def test_a_rebuild_indexes_only_the_shards_whose_pages_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One changed record re-indexes its shard; the others are taken from the last release, and
    the index is the one a build from scratch makes. A shard file edited in the last release is
    never taken: that shard is indexed again."""
    monkeypatch.setattr(search, "SHARD_PAGES", 2)
    names = [f"x-{n}" for n in range(9)]
    ran: list[str] = []
    real = search.run_pagefind

    def counted(site: Path, bundle: Path) -> None:
        ran.append(bundle.parent.name)
        real(site, bundle)

    monkeypatch.setattr(search, "run_pagefind", counted)

    memory: dict[str, bool] = {}  # which pages carry a record, as a build keeps it from one to the next

    def site(name: str, previous: Path | None, changed: str | None) -> SiteWriter:
        w = SiteWriter(tmp_path / name, previous=PreviousRelease(previous) if previous is not None else None)
        for n in names:
            w.write(layout.item_page(n), record_page(n + (" changed" if n == changed else "")))
        w.write(layout.item_page("no-record"), record_page("no-record", record=False))
        search.write_index(w, reuse=previous is not None, memory=memory if name != "scratch" else None)
        return w

    first = released(site("first", None, None))
    assert len(ran) == len(shard_folders(first / layout.SEARCH_INDEX_DIR)) > 2
    shard = search.shard_name(search.shard_of(layout.item_page("x-4"), 3), 3)

    ran.clear()
    second = site("second", first, "x-4")
    assert ran == [shard]
    ran.clear()
    scratch = site("scratch", None, "x-4")
    assert index_files(second.root) == {
        rel.replace("scratch", "second"): data for rel, data in index_files(scratch.root).items()
    }
    for p in (second.root / layout.SEARCH_INDEX_DIR).rglob("*"):  # an unchanged shard's are the last release's
        rel = p.relative_to(second.root)
        if p.is_file() and rel.parts[1] != shard:
            assert p.stat().st_ino == (first / rel).stat().st_ino, rel

    ran.clear()
    victim = next(p for p in shard_folders(first / layout.SEARCH_INDEX_DIR) if p.name != shard)
    fragment = min(victim.glob("fragment/*"))  # the same one on every file system
    fragment.write_bytes(fragment.read_bytes() + b"\0")
    site("third", first, "x-4")
    assert sorted(ran) == sorted({shard, victim.name})


def test_a_shard_the_hash_index_vouches_for_is_taken_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the last build's hash index vouches for each file of an unchanged shard (by its
    identity), the shard is taken without a byte of it read; a shard file edited since is not
    vouched for, read, found other, and its shard indexed again. The index is the one a build
    from scratch makes either way."""
    monkeypatch.setattr(search, "SHARD_PAGES", 2)
    names = [f"x-{n}" for n in range(9)]
    ran: list[str] = []
    read: list[str] = []
    real, real_bytes = search.run_pagefind, search._previous_bytes

    def counted(site: Path, bundle: Path) -> None:
        ran.append(bundle.parent.name)
        real(site, bundle)

    def bytes_read(last: PreviousRelease, rels: Any) -> Any:
        rels = list(rels)
        read.extend(rels)
        return real_bytes(last, rels)

    monkeypatch.setattr(search, "run_pagefind", counted)
    monkeypatch.setattr(search, "_previous_bytes", bytes_read)

    def site(
        name: str, previous: Path | None, index: dict[str, tuple[tuple[int, ...], str]], changed: bool = True
    ) -> SiteWriter:
        def recorded(place: str, st: os.stat_result) -> str | None:
            known = index.get(place)
            return known[1] if known is not None and known[0] == identity_of(st) else None

        w = SiteWriter(
            tmp_path / name, previous=PreviousRelease(previous) if previous is not None else None, recorded=recorded
        )
        for n in names:
            w.write(layout.item_page(n), record_page(n + (" changed" if n == "x-4" and changed else "")))
        search.write_index(w, reuse=previous is not None)
        return w

    w = site("first", None, {}, changed=False)
    first = released(w)
    index = {f"site/{rel}": (identity_of(os.lstat(first / rel)), digest) for rel, digest in w.hashes.items()}
    shard = search.shard_name(search.shard_of(layout.item_page("x-4"), 3), 3)
    runtime = {*search._RUNTIME_FILES, *(p.name for p in first.rglob("wasm.*.pagefind"))}
    ran.clear()
    second = site("second", first, index)
    # Only the primary shard's script, worker and wasm are read (from their own list: a few files).
    assert ran == [shard] and all(rel.rpartition("/")[2] in runtime for rel in read), read
    scratch = site("scratch", None, {})
    assert index_files(second.root) == {
        rel.replace("scratch", "second"): data for rel, data in index_files(scratch.root).items()
    }
    ran.clear()
    # Taken again, as a build records it: linking a file into the second site changed its
    # change time, so the first index no longer vouches for it.
    index = {f"site/{rel}": (identity_of(os.lstat(first / rel)), digest) for rel, digest in w.hashes.items()}
    victim = next(p for p in shard_folders(first / layout.SEARCH_INDEX_DIR) if p.name != shard)
    fragment = min(victim.glob("fragment/*"))
    fragment.write_bytes(fragment.read_bytes() + b"\0")
    read.clear()
    site("third", first, index)
    assert sorted(ran) == sorted({shard, victim.name})
    shard_files = [rel for rel in read if rel.rpartition("/")[2] not in runtime]
    assert shard_files and all(rel.startswith(f"{layout.SEARCH_INDEX_DIR}/{victim.name}/") for rel in shard_files)
