"""The built site as HTML: well-formed pages, working relative links, no script but the site's
own files (progressive enhancement: every page works without them), no external resources,
escaped item texts, complete and paginated lists, and the demo banner where it belongs.

Pages are parsed with BeautifulSoup's html.parser, the way a browser would see the markup.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.commands.retire import retire_item
from generator.core import layout
from generator.program.datadir import Paths
from tests.support.demo import BuiltSite
from tests.support.html import (
    OWN_SCRIPTS,
    follow_pages,
    html_pages,
    page_problems,
    resolve,
    site_problems,
    soup_of,
)
from tests.support.programs import AT0, item, write_items

# ---------------------------------------------------------------------------------------------
# Helpers


def pool_rows(root: Path, page: str) -> list[tuple[str, str, Tag]]:
    table = soup_of(root, page).select_one("table.commitments")
    if table is None:
        return []
    rows = []
    for tr in table.select("tbody tr"):
        tds = tr.find_all("td")
        assert len(tds) >= 4, f"{page}: a commitments row with {len(tds)} cells: {tr}"
        rows.append((tds[1].get_text(strip=True), tds[3].get_text(strip=True), tds[1]))
    return rows


def check_pool(root: Path, page_size: int) -> list[str]:
    """The pool pages list every committed item once, in ledger order, with its status."""
    commitments = json.loads((root / layout.COMMITMENTS).read_bytes())["commitments"]
    chain = follow_pages(root, layout.POOL_PAGE)
    on_disk = sorted(p.relative_to(root).as_posix() for p in (root / "pool").glob("*.html"))
    assert sorted(chain) == on_disk, (
        f"pool pages reachable by rel=next {chain} differ from the pool pages on disk {on_disk}"
    )
    listed: list[tuple[str, str]] = []
    for page in chain:
        rows = pool_rows(root, page)
        assert rows or not commitments, f"{page}: no rows"
        assert len(rows) <= page_size, f"{page}: {len(rows)} rows, more than PAGE_SIZE={page_size}"
        for item_id, status, cell in rows:
            link = cell.find("a")
            if status == "revealed":
                assert link is not None, f"{page}: revealed item {item_id} is not linked to its page"
                target, why = resolve(root, page, link["href"])
                assert target == layout.item_page(item_id), f"{page}: {item_id} links to {target or why}"
            else:
                assert link is None, f"{page}: sealed item {item_id} links somewhere: {link}"
            listed.append((item_id, status))
    ids = [i for i, _ in listed]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert not dupes, f"pool pages list these items more than once: {dupes}"
    expected = [(c["id"], c["status"]) for c in commitments]
    assert listed == expected, (
        f"pool pages {chain} do not list {layout.COMMITMENTS} in order with matching statuses; "
        f"missing {sorted(set(expected) - set(listed))}, extra {sorted(set(listed) - set(expected))}"
    )
    return chain


# ---------------------------------------------------------------------------------------------
# Structure, links, twins, no external resources


def test_every_demo_page_is_well_formed_linked_and_self_contained(demo_site: BuiltSite) -> None:
    root = demo_site.out
    pages = html_pages(root)
    for must in (
        layout.HOME,
        layout.POOL_PAGE,
        layout.RETIRED_PAGE,
        layout.RUNS_PAGE,
        layout.CERTIFICATES_PAGE,
        layout.KEYS_PAGE,
        layout.VERIFY_PAGE,
        layout.METHODOLOGY_PAGE,
        layout.item_page("a-006"),
    ):
        assert must in pages, f"the demo build has no page {must}"
    problems = site_problems(root)
    assert not problems, "site problems:\n" + "\n".join(problems)


def test_link_checker_catches_broken_links(demo_copy: BuiltSite) -> None:
    """The checks above would fail on a broken site (so their passing means something)."""
    root = demo_copy.out
    page = root / layout.HOME
    text = page.read_text(encoding="utf-8")
    text = text.replace(
        "</main>",
        '<a href="/etc/passwd">a</a><a href="../../x.html">b</a><a href="pool/">c</a>'
        '<a href="nowhere.html">d</a><img src="https://example.org/t.png"><script>1</script>'
        '<p style="background:url(http://example.org/x)">e</p></main>',
        1,
    )
    page.write_text(text, encoding="utf-8")
    found = "\n".join(page_problems(root, layout.HOME))
    for expected in (
        "'/etc/passwd'",
        "leaves the site",
        "is a directory",
        "names no file",
        "example.org/t.png",
        "<script>",
        "inline style",
    ):
        assert expected in found, f"the checker missed {expected!r}; it reported:\n{found}"


# ---------------------------------------------------------------------------------------------
# Escaping of item texts

A006_STRINGS = ("<script>alert('x')</script>", '"><img src=x onerror=alert(1)>')


def assert_inert(page: str, s: BeautifulSoup) -> None:
    scripts = [el for el in s.find_all("script") if el.get_text().strip() or not el.get("src")]
    scripts += [el for el in s.find_all("script") if not str(el.get("src", "")).endswith(OWN_SCRIPTS)]
    assert not scripts, f"{page}: a <script> element came through from item text"
    assert not s.find_all("img"), f"{page}: an <img> element came through from item text"
    assert not s.find_all(attrs={"onerror": True}), f"{page}: an element with an onerror attribute"
    for el in s.find_all(True):
        handlers = [a for a in el.attrs if a.lower().startswith("on")]
        assert not handlers, f"{page}: <{el.name}> has event handler attributes {handlers}"


def answer_cells(s: BeautifulSoup, page: str) -> dict[str, str]:
    """Field name → the text of its expected-value cell in the answer table."""
    heading = next((h for h in s.find_all("h2") if h.get_text(strip=True) == "Answer key"), None)
    assert heading is not None, f"{page}: no 'Answer key' heading"
    table = heading.find_next("table")
    assert table is not None, f"{page}: no answer table"
    cells = {}
    for tr in table.select("tbody tr"):
        tds = tr.find_all("td")
        cells[tds[0].get_text()] = tds[-1].get_text()
    return cells


def test_demo_hostile_item_is_shown_as_text(demo_site: BuiltSite) -> None:
    page = layout.item_page("a-006")
    s = soup_of(demo_site.out, page)
    prompt = s.select_one("pre.prompt")
    assert prompt is not None, f"{page}: no pre.prompt"
    doc = json.loads((demo_site.out / layout.reveal("a-006")).read_bytes())
    assert prompt.get_text() == doc["item"]["prompt"], f"{page}: pre.prompt does not show the prompt verbatim"
    cells = answer_cells(s, page)
    table_text = " ".join(cells.values())
    for text in A006_STRINGS:
        assert text in prompt.get_text(), f"{page}: {text!r} is not in pre.prompt as text"
        assert text in table_text, f"{page}: {text!r} is not in the answer table as text"
    for name, f in doc["item"]["answer"].items():
        assert cells.get(name) == json.dumps(f["value"], ensure_ascii=False), (
            f"{page}: the value of {name} is not shown as its JSON"
        )
    assert_inert(page, s)


HOSTILE = "</pre><script>alert(1)</script>"
HOSTILE_ATTR = '"><img src=x onerror=alert(1)>'
TEMPLATE = "{{ 7*7 }}"
ENTITY = "&amp;"
KOREAN = "안녕하세요, 주문번호 확인 부탁드립니다"
HOSTILE_TEXT = f"A {HOSTILE} B {HOSTILE_ATTR} C {TEMPLATE} D {ENTITY} E {KOREAN} {{% if 1 %}}F{{% endif %}} <!-- c -->"
HOSTILE_FIELD = "<img src=y onerror=alert(2)>"


def test_fresh_hostile_item_is_shown_as_text(make_program: Callable[..., Paths]) -> None:
    hostile = item(
        "a-900",
        "a",
        prompt=HOSTILE_TEXT,
        note={"kind": "text", "tier": "high", "value": HOSTILE_TEXT},
        snippets={"kind": "array", "tier": "low", "value": [HOSTILE, HOSTILE_ATTR, TEMPLATE, ENTITY, KOREAN]},
        code={"kind": "scalar", "tier": "critical", "value": HOSTILE_ATTR},
        **{HOSTILE_FIELD: {"kind": "scalar", "tier": "low", "value": True}},
    )
    paths = make_program(extra_items=[hostile])
    out = paths.data.parent / "public"
    build(paths, out)
    page = layout.item_page("a-900")
    s = soup_of(out, page)
    prompt = s.select_one("pre.prompt")
    assert prompt is not None, f"{page}: no pre.prompt"
    assert prompt.get_text() == HOSTILE_TEXT, f"{page}: the prompt is not shown verbatim: {prompt.get_text()!r}"
    assert "49" not in prompt.get_text(), f"{page}: {TEMPLATE!r} was evaluated as a template"
    cells = answer_cells(s, page)
    assert set(cells) == {"note", "snippets", "code", HOSTILE_FIELD}, f"{page}: answer fields shown: {sorted(cells)}"
    for name, f in hostile["answer"].items():
        want = json.dumps(f["value"], ensure_ascii=False)
        assert cells[name] == want, f"{page}: field {name!r} shows {cells[name]!r}, expected its JSON {want!r}"
    for text in (HOSTILE, HOSTILE_ATTR, TEMPLATE, ENTITY, KOREAN):
        assert text in prompt.get_text(), f"{page}: {text!r} not in pre.prompt as text"
        assert text in cells["note"], f"{page}: {text!r} not in the answer table as text"
    assert "49" not in cells["note"], f"{page}: {TEMPLATE!r} was evaluated in the answer table"
    assert_inert(page, s)
    raw = (out / page).read_text(encoding="utf-8")
    assert "</pre><script>" not in raw and "<img src" not in raw, (
        f"{page}: hostile markup is in the HTML source unescaped"
    )
    # The gate list shows field names: the hostile one must be text there too.
    gate = layout.gate_page("a")
    gs = soup_of(out, gate)
    assert HOSTILE_FIELD in gs.get_text(), f"{gate}: the field name {HOSTILE_FIELD!r} is not shown as text"
    assert_inert(gate, gs)
    problems = site_problems(out)
    assert not problems, "site problems:\n" + "\n".join(problems)


# ---------------------------------------------------------------------------------------------
# Lists: pool, pagination, retired items, runs and certificates


def test_demo_pool_pages_list_every_commitment_once(demo_site: BuiltSite) -> None:
    chain = check_pool(demo_site.out, layout.PAGE_SIZE)
    assert chain[0] == layout.POOL_PAGE


def test_pagination_chains_pages(make_program: Callable[..., Paths], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "PAGE_SIZE", 3)
    paths = make_program(public_items=4, secret_items=4, retired=2)
    out = paths.data.parent / "public"
    build(paths, out)
    commitments = json.loads((out / layout.COMMITMENTS).read_bytes())["commitments"]
    assert len(commitments) == 8
    chain = check_pool(out, 3)
    assert chain == [layout.POOL_PAGE, "pool/page-2.html", "pool/page-3.html"], f"pool pages: {chain}"
    assert [len(pool_rows(out, p)) for p in chain] == [3, 3, 2]
    for n, page in enumerate(chain, start=1):
        text = soup_of(out, page).get_text(" ", strip=True)
        # The first and the last page say how many there are; one in the middle of a list that
        # grows says only its own number, so that a new page does not change it.
        said = f"Page {n} of 3." if n in (1, 3) else f"Page {n}."
        assert said in text, f"{page}: does not say {said!r}"
    assert not soup_of(out, layout.POOL_PAGE).select('a[rel~="prev"]'), (
        f"{layout.POOL_PAGE}: page 1 has a previous page"
    )
    # The public gate's list is paged the same way: 4 items, 2 pages.
    gate_chain = follow_pages(out, layout.gate_page("a"))
    assert gate_chain == [layout.gate_page("a"), layout.gate_page("a", 2)], f"gate pages: {gate_chain}"
    listed = [
        a.get_text(strip=True)
        for p in gate_chain
        for a in soup_of(out, p).select("main table tbody tr td:first-child a")
    ]
    assert listed == [f"a-{i:03d}" for i in range(1, 5)], f"gate pages list {listed}"
    problems = site_problems(out)
    assert not problems, "site problems:\n" + "\n".join(problems)


def retired_from_site(root: Path) -> dict[str, str]:
    """Retired item id → the note of its reveal, from the manifest and the ledger."""
    manifest = json.loads((root / layout.MANIFEST).read_bytes())
    entries = json.loads((root / layout.ENTRIES).read_bytes())["entries"]
    notes = {e["id"]: e["note"] for e in entries if e["type"] == "reveal"}
    return {r["id"]: notes[r["id"]] for r in manifest["reveals"] if r["reason"] == "retired"}


def test_every_retired_item_is_listed_with_its_note(demo_site: BuiltSite) -> None:
    root = demo_site.out
    retired = retired_from_site(root)
    assert len(retired) >= 2, f"the demo should retire several items, found {sorted(retired)}"
    linked: dict[str, str] = {}
    for page in follow_pages(root, layout.RETIRED_PAGE):
        for tr in soup_of(root, page).select("main table tbody tr"):
            a = tr.find("a")
            assert a is not None, f"{page}: a row without a link: {tr}"
            target, why = resolve(root, page, a["href"])
            assert why is None, f"{page}: link {a['href']!r} {why}"
            item_id = a.get_text(strip=True)
            assert target == layout.item_page(item_id), f"{page}: {item_id} links to {target}"
            assert item_id not in linked, f"{page}: {item_id} listed twice"
            linked[item_id] = " ".join(tr.get_text(" ").split())
    assert set(linked) == set(retired), f"{layout.RETIRED_PAGE}: lists {sorted(linked)}, retired are {sorted(retired)}"
    for item_id, note in retired.items():
        flat = " ".join(note.split())
        assert flat in linked[item_id], f"{layout.RETIRED_PAGE}: the row of {item_id} does not show its note {note!r}"
        page = layout.item_page(item_id)
        text = " ".join(soup_of(root, page).get_text(" ").split())
        assert flat in text, f"{page}: does not show the retirement note {note!r}"


def test_runs_and_certificates_pages_say_there_are_none(built_program: BuiltSite) -> None:
    root = built_program.out
    manifest = json.loads((root / layout.MANIFEST).read_bytes())
    assert manifest["runs"] == [] and manifest["certificates"] == []
    for page, words in ((layout.RUNS_PAGE, "No runs"), (layout.CERTIFICATES_PAGE, "No certificates")):
        main = soup_of(root, page).find("main")
        assert main is not None, f"{page}: no <main>"
        assert words in main.get_text(" "), f"{page}: does not say plainly {words!r}"
        assert main.find("table") is None, f"{page}: shows a table with nothing in it"


# ---------------------------------------------------------------------------------------------
# The demo banner


def test_demo_banner_on_every_demo_page(demo_site: BuiltSite) -> None:
    assert demo_site.paths.private_in_data
    missing = [p for p in html_pages(demo_site.out) if len(soup_of(demo_site.out, p).select(".demo-banner")) != 1]
    assert not missing, f"pages of the demo build without exactly one .demo-banner: {missing}"


def build_private_outside(tmp_path: Path) -> Path:
    """A program whose private directory is not inside its data directory: a real one."""
    paths = Paths(tmp_path / "data", tmp_path / "private")
    init_program(
        paths,
        "Real program",
        "test.example.org/real",
        [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)],
        "A *real* program.",
        AT0,
    )
    items: list[dict[str, Any]] = [item("a-001", "a"), item("b-0001", "b"), item("b-0002", "b")]
    write_items(paths, items)
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    retire_item(paths, "b-0001", "Retired for a test.", "2026-02-01T00:00:00Z")
    assert not paths.private_in_data
    out = tmp_path / "public"
    build(paths, out)
    return out


def test_no_banner_when_private_dir_is_outside_data(tmp_path: Path) -> None:
    out = build_private_outside(tmp_path)
    pages = html_pages(out)
    assert layout.item_page("b-0001") in pages
    with_banner = [
        p
        for p in pages
        if soup_of(out, p).select(".demo-banner") or "Demo build" in (out / p).read_text(encoding="utf-8")
    ]
    assert not with_banner, f"pages of a non-demo build with the demo banner: {with_banner}"
