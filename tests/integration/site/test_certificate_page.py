"""Certificate pages for people: who, the verdict in one sentence, figures that cannot be misread.

Every expectation is read from the published certificate JSON and the reveals, never written
into the test, so a page that drifts from its document fails here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup, Tag

from generator.commands.build import build
from generator.commands.methodology import publish
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths, load_program
from generator.site.views import readable_view
from generator.verifier import loads_strict
from tests.support.demo import BuiltSite
from tests.support.html import resolve
from tests.support.programs import METHODOLOGY
from tests.support.runs import certify, methodology_pin, register, results, run_spec, scored, write_json


def soup(site: Path, page: str) -> BeautifulSoup:
    return BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")


def text(el: Tag | None) -> str:
    assert el is not None
    return " ".join(el.get_text(" ", strip=True).split())


def certificates(site: Path) -> dict[str, dict]:
    out = {}
    for p in sorted((site / "certificates").glob("*.json")):
        out[p.stem] = loads_strict(p.read_bytes())
    return out


def by_verdict(site: Path, verdict: str) -> str:
    return next(serial for serial, doc in certificates(site).items() if doc["verdict"] == verdict)


# ---------------------------------------------------------------------------------------------
# Rounding and words


@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        ("55.5556", 1, "55.6"),
        ("55.55", 1, "55.6"),
        ("0.125", 2, "0.13"),
        ("0.984167", 2, "0.98"),
        ("100.0000", 0, "100"),
    ],
)
def test_rounding_is_half_up_like_the_format(value: str, places: int, expected: str) -> None:
    assert readable_view.rounded(value, places) == expected


def test_percentages_are_cut_down_and_drop_a_trailing_zero() -> None:
    assert readable_view.percent("50.0000") == "50 %"
    assert readable_view.percent("52.9105") == "52.9 %"
    # 1099 of 2000 is 54.95 %: grade C when B needs 55 %, so it must never read "55 %".
    assert readable_view.percent("54.9500") == "54.9 %" and readable_view.percent("54.9500", 0) == "54 %"
    assert readable_view.percent("89.9999") == "89.9 %"


CUTOFFS = [("S", Fraction(90), "90"), ("A", Fraction(75), "75"), ("B", Fraction(55), "55"), ("C", Fraction(35), "35")]


@pytest.mark.parametrize(
    ("passed", "scored", "shown"),
    [(5, 9, "55.6 %"), (22, 24, "91.7 %"), (1, 2, "50 %"), (9, 9, "100 %"), (0, 9, "0 %"), (1101, 2000, "55.1 %")],
)
def test_a_headline_pass_rate_is_rounded_as_a_reader_rounds(passed: int, scored: int, shown: str) -> None:
    assert readable_view.rate_for_reading(Fraction(100 * passed, scored), CUTOFFS) == (shown, "")


def test_a_headline_pass_rate_never_reads_across_a_cut_off() -> None:
    b80 = [("A", Fraction(90), "90"), ("B", Fraction(80), "80")]
    # 1999 of 2500 is 79.96 %: "80 %" would read as grade B, which it does not reach.
    shown, note = readable_view.rate_for_reading(Fraction(100 * 1999, 2500), b80)
    assert shown == "79.96 %"
    assert note == (
        "given to two decimals: rounded to one it would read 80 %, the other side of grade B's cut-off of 80 %, "
        "which it does not reach"
    )
    # 1099 of 2000 is 54.95 %: "55 %" beside B's cut-off of 55 % would be wrong the same way.
    assert readable_view.rate_for_reading(Fraction(100 * 1099, 2000), [("B", Fraction(55), "55")])[0] == "54.95 %"
    # And down: exactly at a cut-off of two decimals, one decimal would read below it.
    shown, note = readable_view.rate_for_reading(Fraction(100 * 2001, 2500), [("B", Fraction("80.04"), "80.04")])
    assert shown == "80.04 %" and note.endswith("which it reaches")
    # As many decimals as it takes: 79.9996 % needs four.
    assert readable_view.rate_for_reading(Fraction("79.9996"), b80)[0] == "79.9996 %"


def test_the_certificate_page_rounds_its_headline_and_says_when_it_cannot(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    """5 of 9 (55.5556 %) reads "55.6 %" beside cut-offs of whole numbers, and "55.56 %", with a
    note saying why, under a methodology whose grade B starts at 55.6 %."""
    paths = make_program(public_items=9)
    params = json.loads(METHODOLOGY[0].read_text())
    params["version"] = "2026.2"
    params["grade_cutoffs"][2]["min_pass_rate"] = "55.6"
    publish(paths, write_json(tmp_path / "2026.2.json", params), METHODOLOGY[1], "2026-02-20T00:00:00Z")
    items = [f"a-{i:03d}" for i in range(1, 10)]
    rows = [scored(i, passing=n < 5) for n, i in enumerate(items)]
    other = {"id": "other", "name": "Other", "version": "1", "organization": "Other Org"}
    register(paths, run_spec(paths, "whole", "a", items))
    register(paths, run_spec(paths, "tenths", "a", items, subject=other, methodology=methodology_pin(paths, "2026.2")))
    certify(paths, results("whole", rows))
    certify(paths, results("tenths", rows), at="2026-03-03T00:00:00Z")
    out = tmp_path / "public"
    build(paths, out)
    for serial, shown, note in (("whole", "55.6 %", None), ("tenths", "55.56 %", "grade B's cut-off of 55.6 %")):
        page = soup(out, layout.certificate_page(serial))
        assert text(page.select_one(".pass-rate-short")) == shown
        said = page.select_one(".pass-rate-note")
        assert (said is None) if note is None else (note in text(said) and "does not reach" in text(said))
        assert "55.5556 %" in text(page.select_one("#exact")), "the exact figure stays in the table"


def test_the_interval_in_words_is_rounded_outward() -> None:
    assert readable_view.interval_words(9, "26.6647", "81.1225") == (
        "With 9 scored items, the true pass rate could be anywhere between 26 % and 82 % (95 % Wilson interval)."
    )
    assert "between 52 % and 100 %" in readable_view.interval_words(3, "52.9105", "100.0000")
    assert "1 scored item," in readable_view.interval_words(1, "0.0000", "79.3450")
    assert "nothing is known" in readable_view.interval_words(0, "0.0000", "100.0000")


# ---------------------------------------------------------------------------------------------
# The demo's pages


def test_every_page_is_headed_by_the_system_and_its_verdict(demo_site: BuiltSite) -> None:
    site = demo_site.out
    revoked = {r["serial"] for r in loads_strict((site / layout.REVOCATIONS).read_bytes())["revocations"]}
    for serial, doc in certificates(site).items():
        page = layout.certificate_page(serial)
        s = soup(site, page)
        subject = doc["subject"]
        assert text(s.find("h1")) == f"{subject['name']} {subject['version']}", page
        line = text(s.select_one(".subject-line"))
        assert subject["organization"] in line and serial in line
        noun = "Certificate" if doc["verdict"] == "certified" else "Result"
        assert line.split("·")[1].strip().startswith(noun), (page, line)
        title = text(s.find("title"))
        assert f"{noun.lower()} {serial}" in title and subject["name"] in title
        box = s.select_one(".verdict-box")
        label = text(box.select_one(".verdict-label"))
        # Never colour alone: the label has its words and a symbol.
        want = {
            "certified": "Revoked" if serial in revoked else "Certified",
            "not-certified": "Not certified",
            "incomplete": "Incomplete",
        }[doc["verdict"]]
        assert want in label and label[0] in "✓✗?⊘⌛", label
        headline = text(box.select_one(".headline"))
        assert headline.startswith(f"{subject['name']} {subject['version']}"), headline
        if doc["verdict"] != "certified":
            assert "was not" in headline
            # A result is not a certificate: nowhere above the breakdown is it called one.
            assert "certificate" not in label.lower() and "certificate" not in line.lower()
            assert text(s.select_one(".expiry")).startswith("not applicable")


def test_the_score_is_a_band_score_and_an_incomplete_run_decides_nothing(demo_site: BuiltSite) -> None:
    site = demo_site.out
    for serial, doc in certificates(site).items():
        s = soup(site, layout.certificate_page(serial))
        figures = s.select_one("dl.key-figures")
        terms = [text(dt) for dt in figures.find_all("dt")]
        assert terms == ["Grade", "Pass rate", "Band score"]
        score = figures.find_all("div")[2]
        assert text(score.select_one(".figure")) == str(doc["score"])
        if doc["verdict"] == "incomplete":
            assert "not-decisive" in figures["class"]
            assert "Not decisive" in text(figures)
        else:
            assert "not-decisive" not in figures["class"]
            assert "not a percentage" in text(score)
            assert f"{doc['band'][0]} to {doc['band'][1]}" in text(score)


def test_numbers_are_rounded_for_reading_and_exact_one_link_away(demo_site: BuiltSite) -> None:
    site = demo_site.out
    for serial, doc in certificates(site).items():
        s = soup(site, layout.certificate_page(serial))
        summary = doc["summary"]
        rate = Fraction(100 * summary["passed"], summary["scored"] or 1)
        assert text(s.select_one(".pass-rate-short")) == readable_view.rate_for_reading(rate, CUTOFFS)[0]
        words = text(s.select_one(".interval-words"))
        low, high = summary["pass_rate_ci95"]
        if summary["scored"]:
            assert f"With {summary['scored']} scored item" in words
            assert f"between {Decimal(low).quantize(Decimal(1), 'ROUND_FLOOR')} %" in words
            assert f"and {Decimal(high).quantize(Decimal(1), 'ROUND_CEILING')} %" in words
        assert s.select_one('a[href="#exact"]') is not None
        exact = text(s.select_one("#exact"))
        assert f"{summary['pass_rate']} %" in exact and f"{low} % to {high} %" in exact


def test_every_term_links_to_its_methodology_section(demo_site: BuiltSite) -> None:
    site = demo_site.out
    for serial in certificates(site):
        page = layout.certificate_page(serial)
        s = soup(site, page)
        term_links = [a["href"] for a in s.find_all("a", href=True) if "#term-" in a["href"]]
        assert len({h.split("#")[1] for h in term_links}) >= 6, page
        for href in term_links:
            target, why = resolve(site, page, href)
            assert why is None, (page, href, why)
            anchor = href.split("#", 1)[1]
            assert soup(site, target).find(id=anchor) is not None, (page, href)


def test_what_failed_comes_before_the_breakdown(demo_site: BuiltSite) -> None:
    site = demo_site.out
    for serial, doc in certificates(site).items():
        s = soup(site, layout.certificate_page(serial))
        section = s.select_one("#what-failed")
        body = str(s)
        assert body.index('id="what-failed"') < body.index('id="breakdown"')
        failed_shown = [t["id"].removeprefix("result-") for t in s.select("table.results tbody.result.failed")]
        lines = [text(li) for li in section.find_all("li")]
        for item in failed_shown:
            assert any(line.startswith(f"Item {item}:") for line in lines), (serial, item)
            head = text(s.select_one(f"#result-{item} th[scope=rowgroup]"))
            assert head.startswith("✗ Failed")
        not_scored = [r["item"] for r in doc["results"] if r["status"] != "scored"]
        for item in not_scored:
            assert any(f"Item {item} was not scored" in line for line in lines)
        if doc["summary"]["passed"] == doc["summary"]["total"]:
            assert text(section.find("h2")) == "Nothing failed"


def test_a_public_gate_shows_the_expected_value_beside_the_output(demo_site: BuiltSite) -> None:
    site = demo_site.out
    public = [serial for serial, doc in certificates(site).items() if doc["gate"] == "a"]
    assert public, "the demo has certificates on its public gate"
    for serial in public:
        doc = certificates(site)[serial]
        s = soup(site, layout.certificate_page(serial))
        heads = [text(th) for th in s.select("table.results thead th")]
        assert heads[-2:] == ["Output (JSON)", "Expected (JSON)"]
        for r in doc["results"]:
            if r["status"] != "scored":
                continue
            answer = loads_strict((site / layout.reveal(r["item"])).read_bytes())["item"]["answer"]
            rows = s.select(f"#result-{r['item']} tr")[1:]
            for f, row in zip(r["fields"], rows, strict=True):
                expected = row.select_one("code.expected")
                assert expected is not None
                assert json.loads(expected.get_text()) == answer[f["name"]]["value"]
    secret = next(serial for serial, doc in certificates(site).items() if doc["gate"] != "a")
    assert "Expected (JSON)" not in text(soup(site, layout.certificate_page(secret)).select_one("main"))


def test_korean_text_is_marked_as_korean(demo_site: BuiltSite) -> None:
    site = demo_site.out
    marked = 0
    for page in [*sorted((site / "items").glob("*.html")), *sorted((site / "certificates").glob("*/index.html"))]:
        s = soup(site, page.relative_to(site).as_posix())
        for el in s.select("pre.prompt, code.output, code.expected, code.json"):
            has_hangul = any("\uac00" <= ch <= "\ud7af" for ch in el.get_text())
            assert (el.get("lang") == "ko") == has_hangul, (page, el)
            marked += has_hangul
    assert marked, "the demo has Korean items"


def test_sealed_items_link_to_their_commitment_rows(demo_site: BuiltSite) -> None:
    site = demo_site.out
    checked = 0
    for serial in certificates(site):
        page = layout.certificate_page(serial)
        s = soup(site, page)
        for row in s.select("table.sealed tbody tr"):
            a = row.th.find("a")
            assert a is not None, (page, text(row))
            target, why = resolve(site, page, a["href"])
            assert why is None
            anchor = a["href"].split("#", 1)[1]
            cell = soup(site, target).find(id=anchor)
            assert cell is not None and a.get_text() in text(cell)
            checked += 1
    assert checked


# ---------------------------------------------------------------------------------------------
# The home page for a first-time visitor


def test_the_home_page_says_who_runs_it_and_leads_with_the_latest_certificates(demo_site: BuiltSite) -> None:
    site = demo_site.out
    s = soup(site, layout.HOME)
    program = yaml.safe_load((demo_site.paths.program_file).read_text(encoding="utf-8"))
    assert s.select_one(".operator").get_text() == f"Run by {program['operator']}."
    cards = s.select("ul.latest-certificates li")
    newest = sorted(certificates(site).items(), key=lambda kv: kv[1]["issued_at"], reverse=True)
    assert [text(li.find("a")) for li in cards] == [
        f"{d['subject']['name']} {d['subject']['version']}" for _, d in newest[: len(cards)]
    ]
    body = str(s.find("main"))
    # What the program is, the certificates, the search box, and only then the checkpoint.
    assert body.index("latest-certificates") < body.index('role="search"') < body.index("checkpoint-h")
    banner = text(s.select_one(".demo-banner"))
    assert "systems, organizations, items and results here are invented" in banner


@pytest.mark.parametrize("value", ["", "   ", 7, ["x"]])
def test_an_empty_operator_is_refused_naming_the_key(demo_copy: BuiltSite, value: object) -> None:
    f = demo_copy.paths.program_file
    f.write_text(yaml.safe_dump({**yaml.safe_load(f.read_text()), "operator": value}), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_program(demo_copy.paths)
    [p] = info.value.problems
    assert p.where == "operator" and "non-empty name" in p.message
