"""Finding and following things on the built site: every "ledger entry N" leads to entry N's
row on the ledger pages, every commitment has a row of its own, revealed items list the runs
that used them, each system has a page of its runs, and the certificates list says where each
certificate stands.

Pages are parsed with BeautifulSoup's html.parser; what they should say is worked out from the
site's signed JSON documents (entries, commitments, run specs, certificates, revocations), never
from the generator's own view models.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from bs4 import BeautifulSoup, NavigableString, Tag

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.revoke import revoke_certificate
from generator.core import layout
from generator.program.datadir import Paths
from generator.program.ledgerfile import replay_ledger
from generator.site.views.links_view import commitment_link, ledger_entry_link
from tests.support.demo import BuiltSite
from tests.support.html import follow_pages, html_pages, resolve
from tests.support.programs import item, new_program
from tests.support.runs import certify, register, results, run_spec, scored

MENTION = re.compile(r"\bledger entry (\d+)\b")
NOT_CERTIFIED = "Not certified (a result, not a certificate)"


# ---------------------------------------------------------------------------------------------
# Reading the site


@functools.lru_cache(maxsize=64)
def soup_of(site: Path, page: str) -> BeautifulSoup:
    """A built page, parsed once: a site is not changed after its build, and a thousand rows
    link the same page."""
    return BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")


@functools.lru_cache(maxsize=64)
def ids_of(site: Path, page: str) -> frozenset[str]:
    return frozenset(str(el["id"]) for el in soup_of(site, page).find_all(id=True))


def read_json(site: Path, rel: str) -> Any:
    return json.loads((site / rel).read_bytes())


def text_of(el: Tag | None) -> str:
    assert el is not None
    return " ".join(el.get_text(" ").split())


def follow(site: Path, page: str, href: str) -> tuple[str, str]:
    """The page and element id an in-site link leads to; fails unless both exist."""
    target, why = resolve(site, page, href)
    assert target is not None, f"{page}: link {href!r} {why}"
    fragment = href.split("#", 1)[1] if "#" in href else ""
    if fragment:
        assert fragment in ids_of(site, target), f"{page}: {href!r}: no id {fragment!r} in {target}"
    return target, fragment


def ledger_rows(site: Path) -> list[tuple[str, Tag]]:
    """(page, row) for every row of the ledger pages, in the order of the pages' rel=next chain,
    which must be every ledger page on disk."""
    chain = follow_pages(site, layout.LEDGER_PAGE)
    on_disk = sorted(p.relative_to(site).as_posix() for p in (site / layout.LEDGER_PREFIX).glob("*.html"))
    assert sorted(chain) == on_disk, f"ledger pages reachable by rel=next {chain} differ from those on disk {on_disk}"
    rows = []
    for page in chain:
        table = soup_of(site, page).select_one("table.ledger")
        assert table is not None, f"{page}: no ledger table"
        found = table.select("tbody tr")
        assert 0 < len(found) <= layout.PAGE_SIZE, f"{page}: {len(found)} rows (PAGE_SIZE {layout.PAGE_SIZE})"
        rows += [(page, tr) for tr in found]
    return rows


def check_ledger_pages(site: Path, leaves: list[bytes]) -> dict[int, str]:
    """Every ledger entry has exactly one row, in order, saying its index, time and type, with its
    RFC 6962 leaf hash computed here from the entry's bytes; returns each entry's page."""
    entries = read_json(site, layout.ENTRIES)["entries"]
    assert [rfc8785.dumps(e) for e in entries] == leaves, "entries.json holds the ledger's leaves, byte for byte"
    rows = ledger_rows(site)
    assert len(rows) == len(entries), f"{len(rows)} ledger rows for {len(entries)} entries"
    where = {}
    commits = 0
    for n, ((page, tr), entry, raw) in enumerate(zip(rows, entries, leaves, strict=True)):
        assert tr.get("id") == f"entry-{n}", f"{page}: row {n} has id {tr.get('id')!r}"
        cells = [text_of(c) for c in tr.find_all(["th", "td"])]
        assert cells[0] == str(n) and cells[1] == entry["at"] and cells[2] == entry["type"], f"{page}: row {n}: {cells}"
        assert cells[4] == hashlib.sha256(b"\x00" + raw).hexdigest(), f"{page}: row {n}: not the RFC 6962 leaf hash"
        link = tr.find_all("td")[2].find("a")
        if entry["type"] == "commit":
            assert link is not None, f"{page}: commit entry {n} does not link its commitment row"
            target = follow(site, page, link["href"])
            assert target == (layout.pool_page(commits // layout.PAGE_SIZE + 1), f"item-{entry['id']}"), target
            commits += 1
        elif entry["type"] in ("reveal", "certificate", "revocation", "run", "methodology"):
            assert link is not None, f"{page}: {entry['type']} entry {n} links nowhere"
            target = follow(site, page, link["href"])
            if entry["type"] == "reveal":
                assert target[0] == layout.item_page(entry["id"])
            if entry["type"] == "run":
                assert target[1] == f"run-{entry['id']}"
            if entry["type"] in ("certificate", "revocation"):
                assert target[0] == layout.certificate_page(entry["serial"])
        where[n] = page
    twin = soup_of(site, layout.LEDGER_PAGE).select_one('link[rel~="alternate"]')
    assert twin is not None and resolve(site, layout.LEDGER_PAGE, twin["href"])[0] == layout.ENTRIES
    return where


def link_problems(site: Path, page: str) -> list[str]:
    """Every link of a page that leads to no file of the site, or to no element of the page it
    names (the site-wide rules are test_site_html's)."""
    out = []
    for a in soup_of(site, page).find_all("a", href=True):
        href = str(a["href"])
        if href.startswith(("http://", "https://")):
            continue
        target, why = resolve(site, page, href)
        fragment = href.split("#", 1)[1] if "#" in href else ""
        if target is None:
            out.append(f"{page}: {href!r} {why}")
        elif fragment and target.endswith(".html") and fragment not in ids_of(site, target):
            out.append(f"{page}: {href!r}: no id {fragment!r} in {target}")
    return out


def mentions(site: Path) -> list[tuple[str, int, NavigableString]]:
    """Every "ledger entry N" written in the main content of every page."""
    out = []
    for page in html_pages(site):
        main = soup_of(site, page).find("main")
        assert isinstance(main, Tag), f"{page}: no <main>"
        for s in main.find_all(string=MENTION):
            out += [(page, int(m.group(1)), s) for m in MENTION.finditer(s)]
    return out


def run_specs(site: Path) -> dict[str, dict[str, Any]]:
    """Every run spec the manifest lists, by run id, in ledger order; a drawn run's with the items
    its `draw` entry recorded."""
    drawn = {e["run"]: e["items"] for e in read_json(site, layout.ENTRIES)["entries"] if e["type"] == "draw"}
    specs = {r["id"]: read_json(site, r["spec"]) for r in read_json(site, layout.MANIFEST)["runs"]}
    return {run: spec if "items" in spec else {**spec, "items": drawn.get(run, [])} for run, spec in specs.items()}


def certificates(site: Path) -> dict[str, dict[str, Any]]:
    """Every certificate, by run id."""
    return {c["run"]: read_json(site, c["path"]) for c in read_json(site, layout.MANIFEST)["certificates"]}


def expected_standing(site: Path, cert: dict[str, Any]) -> tuple[str, str]:
    """(validity, expires) in the list's words, from the certificate, the signed revocations and
    the release's time."""
    revoked = {r["serial"]: r["at"] for r in read_json(site, layout.REVOCATIONS)["revocations"]}
    now = read_json(site, layout.MANIFEST)["generated_at"]
    expires = cert["expires_at"]
    if cert["verdict"] != "certified":
        return NOT_CERTIFIED, "not applicable: a result does not expire"
    shown = "never" if expires is None else f"{expires} (expired)" if expires < now else expires
    if cert["serial"] in revoked:
        return f"Revoked on {revoked[cert['serial']]}", shown
    if expires is not None and expires < now:
        return f"Expired on {expires}", shown
    return "Valid", shown


# ---------------------------------------------------------------------------------------------
# Ledger entries


def test_every_ledger_entry_has_one_row_with_its_leaf_hash(demo_site: BuiltSite) -> None:
    leaves = demo_site.paths.ledger_file.read_bytes().splitlines()
    where = check_ledger_pages(demo_site.out, leaves)
    assert all(layout.ledger_entry(n) == f"{page}#entry-{n}" for n, page in where.items())
    assert ledger_entry_link(len(leaves) - 1) == layout.ledger_entry(len(leaves) - 1)


def test_every_mention_of_a_ledger_entry_links_to_its_row(demo_site: BuiltSite) -> None:
    site = demo_site.out
    found = mentions(site)
    size = read_json(site, layout.ENTRIES)["tree_size"]
    # Item pages, the runs page, methodology pages and the history page all name entries.
    kinds = {page.split("/")[0] for page, _, _ in found}
    assert {"items", "runs", "methodology", "history"} <= kinds, kinds
    for page, n, text in found:
        assert 0 <= n < size, f"{page}: ledger entry {n} of a ledger of {size}"
        link = text.find_parent("a")
        assert link is not None, f"{page}: 'ledger entry {n}' is not a link: {text.parent}"
        assert MENTION.fullmatch(text_of(link)), f"{page}: a link says {text_of(link)!r}, more than the entry"
        assert follow(site, page, link["href"]) == tuple(layout.ledger_entry(n).split("#")), (
            f"{page}: 'ledger entry {n}' leads to {link['href']!r}"
        )
    # The home page's latest events: each number links to its entry.
    home = soup_of(site, layout.HOME)
    latest = next(t for t in home.find_all("table") if "#" in [text_of(th) for th in t.select("thead th")])
    cells = [tr.find("td") for tr in latest.select("tbody tr")]
    assert cells
    for td in cells:
        link = td.find("a")
        assert link is not None, f"{layout.HOME}: latest event {text_of(td)} is not a link"
        assert follow(site, layout.HOME, link["href"]) == tuple(layout.ledger_entry(int(text_of(td))).split("#"))


def test_every_commitment_row_is_addressable(demo_site: BuiltSite) -> None:
    site = demo_site.out
    ledger, problems = replay_ledger(demo_site.paths)
    assert not problems
    commitments = read_json(site, layout.COMMITMENTS)["commitments"]
    assert commitments
    for position, c in enumerate(commitments):
        link = commitment_link(ledger, c["id"])
        assert link == layout.commitment_row(position, c["id"])
        page, fragment = follow(site, layout.HOME, link)
        row = soup_of(site, page).find(id=fragment)
        assert isinstance(row, Tag) and row.name == "tr"
        assert text_of(row.find_all("td")[1]) == c["id"]
        entry = row.find("td").find("a")
        assert entry is not None and text_of(entry) == str(c["index"])
        assert follow(site, page, entry["href"]) == tuple(layout.ledger_entry(c["index"]).split("#"))
    assert commitment_link(ledger, "never-committed") is None


def test_pages_stay_within_page_size_and_point_at_the_right_page(tmp_path: Path) -> None:
    """1,205 commits: the ledger and the commitment list each take two pages, and an entry or a
    commitment past the first thousand is on page 2."""
    paths = new_program(tmp_path / "data", public_items=2, secret_items=3, retired=1)
    # JSON is YAML, and the strict loader reads it far faster than block YAML.
    more = [item(f"c-{i:04d}", "b") for i in range(1, 1201)]
    (paths.items_dir / "more.json").write_text(json.dumps({"items": more}), encoding="utf-8")
    commit_new_items(paths, "2026-03-01T00:00:00Z")
    out = tmp_path / "public"
    build(paths, out)
    leaves = paths.ledger_file.read_bytes().splitlines()
    assert len(leaves) > layout.PAGE_SIZE
    where = check_ledger_pages(out, leaves)
    pages = sorted(set(where.values()))
    assert pages == [layout.LEDGER_PAGE, "ledger/page-2.html"], pages
    for n in (0, layout.PAGE_SIZE - 1, layout.PAGE_SIZE, len(leaves) - 1):
        page, fragment = layout.ledger_entry(n).split("#")
        assert page == where[n] and fragment == f"entry-{n}"
        assert soup_of(out, page).find(id=fragment) is not None
    ledger, _ = replay_ledger(paths)
    commitments = read_json(out, layout.COMMITMENTS)["commitments"]
    assert len(commitments) == 1205
    for position in (0, layout.PAGE_SIZE - 1, layout.PAGE_SIZE, len(commitments) - 1):
        item_id = commitments[position]["id"]
        link = commitment_link(ledger, item_id)
        assert link is not None
        page, fragment = link.split("#")
        assert page == layout.pool_page(1 if position < layout.PAGE_SIZE else 2)
        assert soup_of(out, page).find(id=fragment) is not None


# ---------------------------------------------------------------------------------------------
# Items, systems, certificates


OTHER = {"id": "other", "name": "Other Reader", "version": "2", "organization": "Other Org"}
FAILING = {"id": "failing", "name": "Failing Parser", "version": "0.1", "organization": "Fail Inc"}
OPEN = {"id": "open-engine", "name": "Open Engine", "version": "5", "organization": "Open Co"}
ITEMS = ["a-001", "a-002"]


@pytest.fixture
def standings(make_program: Callable[..., Paths]) -> BuiltSite:
    """Four systems on the public gate: run-001 certified, then revoked; run-002 certified and
    expired before the release; run-003 not certified; run-004 open."""
    paths = make_program()
    register(paths, run_spec(paths, "run-001", "a", ITEMS))
    certify(paths, results("run-001", [scored(i) for i in ITEMS]))
    register(paths, run_spec(paths, "run-002", "a", ITEMS, subject=OTHER), at="2026-03-03T00:00:00Z")
    certify(
        paths,
        results("run-002", [scored(i) for i in ITEMS], finished_at="2026-03-04T00:00:00Z"),
        at="2026-03-05T00:00:00Z",
        expires_at="2026-03-06T00:00:00Z",
    )
    register(paths, run_spec(paths, "run-003", "a", ITEMS, subject=FAILING), at="2026-03-07T00:00:00Z")
    certify(
        paths,
        results("run-003", [scored(i, passing=False) for i in ITEMS], finished_at="2026-03-07T12:00:00Z"),
        at="2026-03-08T00:00:00Z",
    )
    revoke_certificate(paths, "run-001", "A grading bug was found.", "2026-03-20T00:00:00Z")
    register(paths, run_spec(paths, "run-004", "a", ITEMS, subject=OPEN), at="2026-03-21T00:00:00Z")
    out = paths.data.parent / "public"
    build(paths, out)
    return BuiltSite(paths, out)


def certificate_rows(site: Path) -> list[tuple[str, Tag]]:
    rows = []
    for page in follow_pages(site, layout.CERTIFICATES_PAGE):
        s = soup_of(site, page)
        head = [text_of(th) for th in s.select("table.certificates thead th")]
        assert "Validity" in head and "Expires" in head, head
        rows += [(page, tr) for tr in s.select("table.certificates tbody tr")]
    return rows


def check_certificates_list(site: Path) -> None:
    certs = {c["serial"]: c for c in certificates(site).values()}
    rows = certificate_rows(site)
    assert sorted(text_of(tr.th) for _, tr in rows) == sorted(certs)
    for page, tr in rows:
        s = soup_of(site, page)
        head = [text_of(th) for th in s.select("table.certificates thead th")]
        cells = dict(zip(head, tr.find_all(["th", "td"]), strict=True))
        cert = certs[text_of(tr.th)]
        assert (text_of(cells["Validity"]), text_of(cells["Expires"])) == expected_standing(site, cert)
        subject = cells["Subject"].find("a")
        assert subject is not None and text_of(subject) == cert["subject"]["name"]
        assert follow(site, page, subject["href"])[0] == layout.system_page(cert["subject"]["id"])
        # The filter by system is the systems index, linked above the table.
        table = s.select_one("table.certificates")
        assert table is not None
        before = table.find_all_previous("a")
        assert any(resolve(site, page, a["href"])[0] == layout.SYSTEMS_PAGE for a in before), page


def test_the_certificates_list_shows_validity_and_expiry(standings: BuiltSite) -> None:
    site = standings.out
    check_certificates_list(site)
    words = {text_of(tr.th): text_of(tr.select_one("td.validity")) for _, tr in certificate_rows(site)}
    # What the fixture made, in words (the general rule is checked against the JSON above).
    assert words == {
        "run-001": "Revoked on 2026-03-20T00:00:00Z",
        "run-002": "Expired on 2026-03-06T00:00:00Z",
        "run-003": NOT_CERTIFIED,
    }
    mine = [p for p in html_pages(site) if p.split("/")[0] in ("systems", "ledger", "items", "pool", "certificates")]
    assert [p for page in mine for p in link_problems(site, page)] == []


def test_the_demo_certificates_list_shows_validity_and_expiry(demo_site: BuiltSite) -> None:
    check_certificates_list(demo_site.out)


def check_item_pages(site: Path) -> int:
    """Each revealed item's page lists exactly the runs whose spec lists it, in ledger order,
    linking each run's row and certificate; returns how many uses were listed."""
    specs = run_specs(site)
    certs = certificates(site)
    listed = 0
    for reveal in read_json(site, layout.MANIFEST)["reveals"]:
        page = layout.item_page(reveal["id"])
        s = soup_of(site, page)
        heading = s.find(id="used-by")
        assert heading is not None and text_of(heading) == "Used by", f"{page}: no 'Used by' section"
        section = heading.find_parent("section")
        assert section is not None
        want = [run for run, spec in specs.items() if reveal["id"] in spec["items"]]
        rows = section.select("table tbody tr")
        assert [text_of(tr.th) for tr in rows] == want, f"{page}: lists {[text_of(tr.th) for tr in rows]}"
        for tr in rows:
            run = text_of(tr.th)
            assert follow(site, page, tr.th.a["href"])[1] == f"run-{run}"
            system = tr.find("td").find("a")
            assert system is not None and text_of(system) == specs[run]["subject"]["name"]
            assert follow(site, page, system["href"])[0] == layout.system_page(specs[run]["subject"]["id"])
            links = [follow(site, page, a["href"])[0] for a in tr.find_all("a")]
            if run in certs:
                assert layout.certificate_page(certs[run]["serial"]) in links
                assert expected_standing(site, certs[run])[0] in text_of(tr)
            else:
                assert not any(t.startswith("certificates/") for t in links)
        listed += len(rows)
        if not want:
            assert "No registered run lists this item." in text_of(section)
    return listed


def test_item_pages_list_the_runs_that_used_them(demo_site: BuiltSite, standings: BuiltSite) -> None:
    assert check_item_pages(demo_site.out) > 0
    assert check_item_pages(standings.out) == 8  # a-001 and a-002, four runs each


def check_system_pages(site: Path) -> None:
    """The systems index lists every subject once; each system's page lists exactly its runs, in
    ledger order, with each certificate's standing."""
    specs = run_specs(site)
    certs = certificates(site)
    by_system: dict[str, list[str]] = {}
    for run, spec in specs.items():
        by_system.setdefault(spec["subject"]["id"], []).append(run)
    index = []
    for page in follow_pages(site, layout.SYSTEMS_PAGE):
        for tr in soup_of(site, page).select("table.systems tbody tr"):
            target = follow(site, page, tr.th.a["href"])[0]
            index.append((target, text_of(tr.th), int(text_of(tr.find_all("td")[2]))))
    names = {sid: specs[runs[0]]["subject"]["name"] for sid, runs in by_system.items()}
    assert sorted(index) == sorted((layout.system_page(sid), names[sid], len(r)) for sid, r in by_system.items())
    assert [n for _, n, _ in index] == sorted(names.values(), key=lambda n: (n.casefold(), n)), "sorted by name"
    for sid, runs in by_system.items():
        rows = []
        for page in follow_pages(site, layout.system_page(sid)):
            s = soup_of(site, page)
            head = [text_of(th) for th in s.select("table.system-runs thead th")]
            rows += [(page, dict(zip(head, tr.find_all(["th", "td"]), strict=True))) for tr in s.select("tbody tr")]
        assert [text_of(r["Run"]) for _, r in rows] == runs, f"{sid}: lists {[text_of(r['Run']) for _, r in rows]}"
        for page, r in rows:
            run = text_of(r["Run"])
            assert follow(site, page, r["Run"].a["href"])[1] == f"run-{run}"
            assert text_of(r["Version"]) == specs[run]["subject"]["version"]
            if run in certs:
                link = r["Certificate"].find("a")
                assert link is not None
                assert follow(site, page, link["href"])[0] == layout.certificate_page(certs[run]["serial"])
                assert (text_of(r["Validity"]), text_of(r["Expires"])) == expected_standing(site, certs[run])
            else:
                assert r["Certificate"].find("a") is None and text_of(r["Validity"]) == "no certificate yet"


def test_system_pages_list_exactly_their_runs(demo_site: BuiltSite, standings: BuiltSite) -> None:
    check_system_pages(demo_site.out)
    check_system_pages(standings.out)
    nav = [text_of(a) for a in soup_of(demo_site.out, layout.HOME).select("nav[aria-label=Site] a")]
    assert "Systems" in nav and "Ledger" in nav, nav


def test_a_hostile_subject_name_is_text_on_the_system_pages(make_program: Callable[..., Paths]) -> None:
    paths = make_program()
    hostile = {"id": "hostile", "name": "Evil <b>Bold</b> & Co", "version": "<i>1</i>", "organization": "A&B"}
    register(paths, run_spec(paths, "run-001", "a", ITEMS, subject=hostile))
    out = paths.data.parent / "public"
    build(paths, out)
    for page in (layout.SYSTEMS_PAGE, layout.system_page("hostile"), layout.item_page("a-001")):
        s = BeautifulSoup((out / page).read_text(encoding="utf-8"), "html.parser")
        main = s.find("main")
        assert isinstance(main, Tag)
        assert main.find(["b", "i"]) is None, f"{page}: data became markup"
        assert "Evil <b>Bold</b> & Co" in main.get_text(), page


def test_the_link_check_finds_a_missing_row_and_a_missing_page(tmp_path: Path) -> None:
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "index.html").write_text('<table><tr id="entry-0"><td>0</td></tr></table>')
    links = ["ledger/index.html#entry-0", "ledger/index.html#entry-1", "ledger/page-2.html#entry-1000"]
    (tmp_path / "a.html").write_text("".join(f'<a href="{h}">x</a>' for h in links))
    assert link_problems(tmp_path, "a.html") == [
        "a.html: 'ledger/index.html#entry-1': no id 'entry-1' in ledger/index.html",
        "a.html: 'ledger/page-2.html#entry-1000' names no file of the site (ledger/page-2.html)",
    ]
