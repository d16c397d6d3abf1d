"""The runs, certificates, certificate and methodology pages, read the way a browser would.

Programs are made through the real commands (register, certify, retire, methodology publish),
built, and the pages parsed with BeautifulSoup's html.parser. Numbers on the pages are checked
against the scoring engine of verify.py, never against numbers typed here.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup, Tag

from generator.build.gather import RunInfo
from generator.commands.build import build
from generator.commands.methodology import publish as publish_methodology
from generator.commands.retire import retire_items
from generator.core import layout
from generator.program.datadir import Paths
from generator.site.views import view_models
from generator.site.views.examples_view import worked_examples
from generator.verifier import (
    band_score,
    check_methodology,
    grade_counts,
    loads_strict,
    parse_methodology,
    score_item,
)
from generator.verifier.rules.scoring import item_score_text, rate_text, wilson_interval
from tests.support.demo import REPO
from tests.support.html import follow_pages, resolve, site_problems
from tests.support.runs import certify, register, results, run_spec, scored

PUBLIC10 = [f"a-{i:03d}" for i in range(1, 11)]
SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]
OTHER = {"id": "other-reader", "name": "Other Reader", "version": "2.1", "organization": "Other Org"}
FORBIDDEN = re.compile(r"percentile|\brank|top\s*\d+\s*%|leaderboard|better than \d+\s*%", re.IGNORECASE)


def publish(paths: Paths) -> Path:
    out = paths.data.parent / "public"
    build(paths, out)
    return out


def soup(out: Path, page: str) -> BeautifulSoup:
    return BeautifulSoup((out / page).read_text(encoding="utf-8"), "html.parser")


def text_of(el: Tag | BeautifulSoup | None) -> str:
    assert el is not None
    return " ".join(el.get_text(" ").split())


def day(n: int, hour: int = 0) -> str:
    return f"2026-03-{n:02d}T{hour:02d}:00:00Z"


def decide(
    paths: Paths,
    run_id: str,
    gate: str,
    items: list[str],
    rows: list[dict[str, Any]] | None,
    when: int,
    previous: str | None = None,
    subject: dict[str, str] | None = None,
    **kw: Any,
) -> None:
    """Register a run on day `when` and, with rows, certify it the same day at noon."""
    over: dict[str, Any] = {"previous_run": previous}
    if subject:
        over["subject"] = subject
    register(paths, run_spec(paths, run_id, gate, items, **over), at=day(when))
    if rows is not None:
        certify(paths, results(run_id, rows, finished_at=day(when, 12), **kw), at=day(when, 12))


def several(make_program: Callable[..., Paths]) -> Paths:
    """Extractor on gate a: certified, not certified, incomplete, then an open fourth attempt;
    Other Reader on the secret gate b: certified, sealed."""
    paths = make_program(public_items=10, secret_items=12, retired=0)
    rationale = [{"text": "Every account number was copied exactly.", "evidence_refs": ["a-001", "a-002"]}]
    decide(paths, "run-001", "a", PUBLIC10, [scored(i) for i in PUBLIC10], 1, proposed=99, rationale=rationale)
    decide(
        paths,
        "run-002",
        "a",
        PUBLIC10,
        [scored(i, passing=n >= 5) for n, i in enumerate(PUBLIC10)],
        3,
        previous="run-001",
        proposed="90.0",
        rationale=[{"text": "Half of the account numbers were wrong.", "evidence_refs": ["a-001"]}],
    )
    decide(
        paths,
        "run-003",
        "a",
        PUBLIC10,
        [
            scored("a-001"),
            *({"item": i, "status": "not_run", "note": "Skipped by the evaluator."} for i in PUBLIC10[1:]),
        ],
        5,
        previous="run-002",
        proposed=1000,
    )
    decide(
        paths,
        "run-s",
        "b",
        SECRET10,
        [scored(i) for i in SECRET10],
        6,
        subject=OTHER,
        proposed=-5,
        rationale=[{"text": "The summaries read well.", "evidence_refs": ["b-0001"]}],
    )
    decide(paths, "run-004", "a", PUBLIC10, None, 7, previous="run-003")
    return paths


def run_rows_on(out: Path, page: str) -> dict[str, Tag]:
    return {tr["id"].removeprefix("run-"): tr for tr in soup(out, page).select("table.runs tr.run")}


# ---------------------------------------------------------------------------------------------
# The runs page


def test_runs_page_shows_every_run_grouped_with_its_chain(make_program: Callable[..., Paths]) -> None:
    paths = several(make_program)
    out = publish(paths)
    rows = run_rows_on(out, layout.RUNS_PAGE)
    assert list(rows) == ["run-001", "run-002", "run-003", "run-004", "run-s"], (
        "grouped by subject and gate, each group in ledger order"
    )
    groups = [text_of(th) for th in soup(out, layout.RUNS_PAGE).select("table.runs th[scope=rowgroup]")]
    assert groups == [
        "Extractor (subject extractor ) on Gate A (gate a )",
        "Other Reader (subject other-reader ) on Gate B (gate b )",
    ]

    def cells(run: str) -> list[str]:
        return [text_of(td) for td in rows[run].find_all(["th", "td"])]

    assert cells("run-001")[1] == "attempt 1 of 4, the first run"
    assert cells("run-002")[1] == "attempt 2 of 4, after run run-001"
    assert cells("run-004")[1] == "attempt 4 of 4, after run run-003"
    prev = rows["run-003"].find_all("td")[0].find("a")
    assert (
        prev is not None
        and resolve(out, layout.RUNS_PAGE, prev["href"])[0] == layout.RUNS_PAGE
        and prev["href"].endswith("#run-run-002")
    )
    assert cells("run-s")[1] == "attempt 1 of 1, the first run"

    assert "open: not yet decided" in cells("run-004")[5]
    assert rows["run-004"].find("a", href=re.compile("certificates/")) is None, "an open run has no certificate to link"
    for run, words in (
        ("run-001", "certified"),
        ("run-002", "not certified"),
        ("run-003", "incomplete"),
        ("run-s", "certified"),
    ):
        status = rows[run].find_all("td")[4]
        assert text_of(status).startswith(words + ","), (run, text_of(status))
        link = status.find("a")
        assert link is not None and resolve(out, layout.RUNS_PAGE, link["href"])[0] == layout.certificate_page(run)
    for run in rows:
        assert cells(run)[4] == "10"
        spec_link = rows[run].find("a", string=layout.run_spec(run))
        assert spec_link is not None and resolve(out, layout.RUNS_PAGE, spec_link["href"])[0] == layout.run_spec(run)
    assert day(3) in cells("run-002")[3]
    assert "Other Org" in cells("run-s")[2]
    assert not site_problems(out)


def test_runs_and_certificates_lists_are_paged(
    make_program: Callable[..., Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(layout, "PAGE_SIZE", 2)
    paths = several(make_program)
    out = publish(paths)
    chain = follow_pages(out, layout.RUNS_PAGE)
    assert chain == [layout.RUNS_PAGE, "runs/page-2.html", "runs/page-3.html"]
    listed = [run for page in chain for run in run_rows_on(out, page)]
    assert listed == ["run-001", "run-002", "run-003", "run-004", "run-s"]
    page2 = soup(out, "runs/page-2.html")
    assert "continued from the previous page" in text_of(page2.select_one("th[scope=rowgroup]"))
    prev = run_rows_on(out, "runs/page-2.html")["run-003"].find_all("td")[0].find("a")
    assert prev is not None and resolve(out, "runs/page-2.html", prev["href"])[0] == layout.RUNS_PAGE, (
        "a previous run on another page is linked there"
    )

    certs = follow_pages(out, layout.CERTIFICATES_PAGE)
    assert certs == [layout.CERTIFICATES_PAGE, "certificates/page-2.html"]
    serials = [a.get_text() for p in certs for a in soup(out, p).select("table.certificates tbody th a")]
    assert serials == ["run-001", "run-002", "run-003", "run-s"]
    assert not site_problems(out)


def test_run_rows_are_linear_in_the_number_of_runs() -> None:
    """Tens of thousands of runs: grouping and chaining must not be quadratic."""
    n = 30000
    runs = []
    for i in range(n):
        subject = {"id": f"s{i % 5000}", "name": f"S{i % 5000}", "version": "1", "organization": "O"}
        prev = f"r{i - 5000}" if i >= 5000 else None
        runs.append(
            RunInfo(
                f"r{i}",
                {"subject": subject, "gate": "b", "items": ["x"], "previous_run": prev},
                b"",
                day(1),
                i,
                None,
                "open",
            )
        )
    started = time.monotonic()
    rows = view_models.run_rows(runs, [], {"b": "Gate B"})
    pages = [view_models.group_rows(rows[p : p + layout.PAGE_SIZE]) for p in range(0, n, layout.PAGE_SIZE)]
    assert time.monotonic() - started < 5
    assert (
        len(rows) == n
        and rows[0].id == "r0"
        and rows[1].id == "r5000"
        and rows[1].attempt_text == "attempt 2 of 6, after run r0"
    )
    assert sum(len(g.rows) for groups in pages for g in groups) == n


# ---------------------------------------------------------------------------------------------
# A certificate page


HOSTILE = "<script>alert(1)</script>"


def test_public_certificate_page_in_words(make_program: Callable[..., Paths]) -> None:
    items = [f"a-{i:03d}" for i in range(1, 21)]
    paths = make_program(public_items=20, secret_items=0, retired=0)
    rows = [scored(i, passing=n not in (1, *range(4, 11))) for n, i in enumerate(items)]  # 8 of 18 scored fail
    rows[0] = scored("a-001", summary={"name": "summary", "output": HOSTILE, "similarity": "0.91"})
    rows[2] = {"item": "a-003", "status": "infra_error", "note": "The sandbox crashed twice."}
    rows[3] = {"item": "a-004", "status": "excluded", "rule": 0, "note": "The message is in Latin."}
    rationale = [
        {"text": "Account numbers were copied exactly.", "evidence_refs": ["a-001", "a-005"]},
        {"text": "Cites an item that was not scored.", "evidence_refs": ["a-003"]},
    ]
    decide(paths, "run-001", "a", items, rows, 1, proposed=2000, rationale=rationale)
    out = publish(paths)
    cert = loads_strict((out / layout.certificate("run-001")).read_bytes())
    page = layout.certificate_page("run-001")
    s = soup(out, page)
    main = text_of(s.find("main"))

    assert cert["verdict"] == "not-certified" and cert["score_rule"] == "clamped"
    verdict = text_of(s.select_one("p.verdict-summary"))
    assert verdict.startswith("Verdict: Not certified.") and "worst-case grade" in verdict
    assert text_of(s.select_one(".grade")) == cert["grade"]
    assert text_of(s.select_one(".band")) == f"{cert['band'][0]} to {cert['band'][1]}"
    assert text_of(s.select_one(".score")) == str(cert["score"]) == str(cert["band"][1])
    assert "clamped to the nearest edge" in text_of(s.select_one(".score-sentence")) and "proposed 2000" in main
    summary = cert["summary"]
    assert (summary["total"], summary["scored"], summary["passed"], summary["infra_error"], summary["excluded"]) == (
        20,
        18,
        10,
        1,
        1,
    )
    assert text_of(s.select_one(".pass-rate")) == f"{rate_text(Fraction(100 * 10, 18))} %", (
        "the pass rate leaves non-scored results out"
    )
    assert rate_text(Fraction(100 * 10, 20)) != rate_text(Fraction(100 * 10, 18))
    assert text_of(s.select_one(".ci")) == "{} % to {} %".format(*wilson_interval(10, 18))
    assert f"{summary['worst_case_pass_rate']} %" in main and f"{summary['best_case_pass_rate']} %" in main

    scored_items = [t["id"] for t in s.select("table.results tbody")]
    assert scored_items == [f"result-{i}" for i in items if i not in ("a-003", "a-004")], (
        "non-scored results are not in the scored table"
    )
    apart = {tr["id"]: text_of(tr) for tr in s.select("table.not-scored tbody tr")}
    assert set(apart) == {"result-a-003", "result-a-004"}
    assert "infrastructure error" in apart["result-a-003"] and "The sandbox crashed twice." in apart["result-a-003"]
    assert "rule 0: The item's message is not in a supported language." in apart["result-a-004"]
    failing = text_of(s.select_one("#result-a-002 th[scope=rowgroup]"))
    assert "failed" in failing and "account_number" in failing and cert["results"][1]["score"] in failing

    # Outputs are text, never markup: the one script is the site's own check, loaded from its file.
    assert [str(el.get("src")) for el in s.find_all("script")] == ["../../check.js"]
    assert not any(el.get_text().strip() for el in s.find_all("script"))
    outputs = [c.get_text() for c in s.select("#result-a-001 code.output")]
    assert json.dumps(HOSTILE) in outputs

    # The grader record is published on a public gate: the kept bullet, marked as the model's words.
    label = s.select_one(".model-words-label")
    assert label is not None and "model's words" in text_of(label) and "not verified" in text_of(label)
    bullets = [text_of(li) for li in s.select(".model-words li")]
    assert len(bullets) == 1 and "Account numbers were copied exactly." in bullets[0]
    assert "Cites an item that was not scored." not in main
    assert text_of(s.select_one(".kept")) == "1" and text_of(s.select_one(".dropped")) == "1"
    assert text_of(s.select_one("code.proposal")) == "2000"

    # Pins, times, claims, and the JSON twin.
    assert cert["methodology"]["sha256"] in main and cert["run_spec"]["sha256"] in main
    # Not certified: a result, which has no expiry to speak of.
    assert text_of(s.select_one(".expiry")).startswith("not applicable: a result does not expire")
    claims = text_of(s.find(id="claims"))
    for words in (
        "ran the system honestly",
        "reported text similarities",
        "times",
        "not a comparison with other systems",
    ):
        assert words in claims
    twin = s.select_one("footer a.twin")
    assert twin is not None and resolve(out, page, twin["href"])[0] == layout.certificate("run-001")
    assert not site_problems(out)


@pytest.mark.slow
def test_sealed_results_open_as_their_items_are_retired(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=12, retired=0)
    rows = [scored(i, passing=n % 4 != 0) for n, i in enumerate(SECRET10)]
    rows[9] = {"item": SECRET10[9], "status": "infra_error", "note": "The sandbox crashed."}
    rationale = [{"text": "Mostly right; b-0002 is fine.", "evidence_refs": ["b-0002"]}]
    decide(paths, "run-s", "b", SECRET10, rows, 1, proposed=50, rationale=rationale)
    page = layout.certificate_page("run-s")

    out = publish(paths)
    s = soup(out, page)
    main = text_of(s.find("main"))
    sealed = [tr["id"] for tr in s.select("table.sealed tbody tr")]
    assert sealed == [f"result-{i}" for i in SECRET10[:9]]
    assert not s.select("table.results"), "nothing is shown in full before a retire"
    for tr in s.select("table.sealed tbody tr"):
        assert "sealed" in text_of(tr) and re.search(r"\b[0-9a-f]{64}\b", text_of(tr))
    assert "Summary of b-00" not in main and "110-482-3392" not in main, "no output of a sealed result"
    apart = text_of(s.select_one("#result-b-0010"))
    assert "infrastructure error" in apart and "sealed" in apart and "The sandbox crashed." not in apart
    assert s.select_one(".model-words") is None and "Mostly right" not in main
    assert "not published yet" in text_of(s.select_one(".record-waiting"))
    assert "6 of 9 scored results passed, as the certificate states" in text_of(s.select_one("ul.asserted"))

    retire_items(paths, ["b-0002"], "Retired after use.", "2026-03-10T00:00:00Z")
    out = publish(paths)
    s = soup(out, page)
    shown = s.select("table.results tbody")
    assert [t["id"] for t in shown] == ["result-b-0002"]
    head = text_of(shown[0].select_one("th[scope=rowgroup]"))
    assert "passed" in head and layout.details("run-s", "b-0002") in head
    link = shown[0].find("a", string=layout.details("run-s", "b-0002"))
    assert link is not None and resolve(out, page, link["href"])[0] == layout.details("run-s", "b-0002")
    assert json.dumps("Summary of b-0002") in [c.get_text() for c in shown[0].select("code.output")]
    assert "result-b-0002" not in [tr["id"] for tr in s.select("table.sealed tbody tr")]
    assert "Summary of b-0003" not in text_of(s.find("main"))
    assert s.select_one(".model-words") is None, "the grader record waits for every item"

    retire_items(paths, [i for i in SECRET10 if i != "b-0002"], "Retired after use.", "2026-03-11T00:00:00Z")
    out = publish(paths)
    s = soup(out, page)
    assert not s.select("table.sealed") and len(s.select("table.results tbody")) == 9
    assert "The sandbox crashed." in text_of(s.select_one("#result-b-0010"))
    label = s.select_one(".model-words-label")
    assert label is not None and "not verified" in text_of(label)
    assert "Mostly right; b-0002 is fine." in text_of(s.select_one(".model-words"))
    assert s.select_one(".asserted-none") is not None
    assert not site_problems(out)


# ---------------------------------------------------------------------------------------------
# No comparison language


def visible_text(out: Path, page: str) -> str:
    s = soup(out, page)
    for el in s(["script", "style", "head"]):
        el.decompose()
    return " ".join(s.get_text(" ").split())


def test_no_percentile_or_rank_language(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    """There is no population to compare with (seed 003): no page talks as if there were."""
    paths = several(make_program)
    alt = json.loads((paths.methodology_dir / "2026.1.json").read_text())
    alt.update(version="2026.9", item_threshold="0.9")
    (tmp_path / "p.json").write_text(json.dumps(alt))
    publish_methodology(paths, tmp_path / "p.json", paths.methodology_dir / "2026.1.md", "2026-03-20T00:00:00Z")
    out = publish(paths)
    pages = [
        layout.RUNS_PAGE,
        layout.CERTIFICATES_PAGE,
        layout.METHODOLOGY_PAGE,
        layout.methodology_page("2026.1"),
        layout.methodology_page("2026.9"),
    ]
    pages += [layout.certificate_page(s) for s in ("run-001", "run-002", "run-003", "run-s")]
    for page in pages:
        assert len(visible_text(out, page)) > 200, page
    # Every page of the site, the systems, search, check and ledger pages among them, and the feeds.
    every = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
    assert set(pages) <= set(every) and layout.SYSTEMS_PAGE in every and layout.SEARCH_PAGE in every
    for page in every:
        found = FORBIDDEN.findall(visible_text(out, page))
        assert not found, f"{page}: comparison language {found}"
    for feed in (layout.FEED_CERTIFICATES, layout.FEED_REVEALS, layout.FEED_CHECKPOINTS):
        words = " ".join(ElementTree.fromstring((out / feed).read_bytes()).itertext())
        assert not FORBIDDEN.findall(words), feed


def test_forbidden_words_pattern_catches_what_it_should() -> None:
    for bad in (
        "90th percentile",
        "Ranked first",
        "rank",
        "in the top 10 %",
        "on the leaderboard",
        "better than 80% of systems",
    ):
        assert FORBIDDEN.search(bad), bad
    for fine in ("frank", "a grade of A", "the 95 % Wilson interval", "the top of the band"):
        assert not FORBIDDEN.search(fine), fine


# ---------------------------------------------------------------------------------------------
# The methodology page's worked examples


ALT = {
    "version": "2027.1",
    "tiers": {
        "critical": {"weight": "2", "min_similarity": "1"},
        "high": {"weight": "0.5", "min_similarity": "0.6"},
        "low": {"weight": "0.25", "min_similarity": "0.1"},
    },
    "item_threshold": "0.8",
    "grade_cutoffs": [{"grade": "Gold", "min_pass_rate": "85"}, {"grade": "Silver", "min_pass_rate": "60"}],
    "lowest_grade": "Bronze",
    "bands": {"Gold": [90, 100], "Silver": [60, 89], "Bronze": [0, 59]},
    "certify": {
        "min_grade": "Silver",
        "min_scored_fraction": "0.75",
        "independent_judge": True,
        "min_items_secret_gate": 5,
    },
}


def example_text(s: BeautifulSoup, key: str) -> str:
    return text_of(s.find(id=key))


def test_methodology_examples_are_the_engines_and_follow_the_parameters(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    paths = make_program(public_items=1, secret_items=0, retired=0)
    base = json.loads((paths.methodology_dir / "2026.1.json").read_text())
    alt = {**base, **ALT}
    assert not check_methodology(alt)
    (tmp_path / "p.json").write_text(json.dumps(alt))
    publish_methodology(paths, tmp_path / "p.json", paths.methodology_dir / "2026.1.md", "2026-02-01T00:00:00Z")
    out = publish(paths)
    shown: dict[str, dict[str, str]] = {}
    for params in (base, alt):
        page = layout.methodology_page(params["version"])
        s = soup(out, page)
        w = params["tiers"]
        m = parse_methodology(params)
        ten = score_item(
            [("account_number", "critical", Fraction(0)), *((f"d{i}", "high", Fraction(1)) for i in range(10))], m
        )
        assert ten.score == 10 * Fraction(w["high"]["weight"]) / (
            Fraction(w["critical"]["weight"]) + 10 * Fraction(w["high"]["weight"])
        )
        text = example_text(s, "example-ten-high")
        assert (
            f"shown as {ten.text}" in text and str(ten.score) in text and "failed" in text and "account_number" in text
        )
        assert f"(1 + 10 × {w['high']['weight']}" not in text  # the weights are the parameter file's strings
        assert f"{w['critical']['weight']} × 0 + 10 × {w['high']['weight']} × 1" in text

        off = score_item([("account_number", "critical", Fraction(1)), ("summary", "high", Fraction("0.90"))], m)
        assert f"shown as {off.text}" in example_text(s, "example-summary-off")
        assert ("passed" if off.passed else "failed") in example_text(s, "example-summary-off")

        on = example_text(s, "example-on-threshold")
        assert f"shown as {item_score_text(Fraction(params['item_threshold']))}" in on and "Result: passed" in on

        below = example_text(s, "example-high-below-floor")
        assert "Result: failed" in below and "clears the threshold" in below and "summary" in below

        g = grade_counts({"scored": 10}, 8, m)
        grade = example_text(s, "example-grade")
        assert f"{g.summary['pass_rate']} %" in grade and "{} % to {} %".format(*g.summary["pass_rate_ci95"]) in grade
        assert f"The grade is {g.grade}" in grade and f"{g.band[0]} to {g.band[1]}" in grade
        proposals = [[text_of(c) for c in tr.find_all(["th", "td"])] for tr in s.select("table.proposals tbody tr")]
        for written, row in zip(("90", "90.0", '"90"', "1000", "-5", None), proposals, strict=True):
            score, rule = band_score(written, g.band)
            assert row[2] == str(score) and rule in row[3], (written, row)

        verdicts = {tr["id"]: text_of(tr) for tr in s.select("table.verdicts tbody tr")}
        assert verdicts["example-certified"].endswith("Certified")
        assert verdicts["example-best-case-below"].endswith("Not certified")
        assert verdicts["example-incomplete"].endswith("Incomplete")
        assert "example-relabel-0" in verdicts and not any(
            v.endswith(" Certified") for k, v in verdicts.items() if k.startswith("example-relabel")
        )
        shown[params["version"]] = {"ten": ten.text, "grade": g.grade, "threshold": on}
    assert shown["2026.1"]["ten"] != shown["2027.1"]["ten"] and shown["2026.1"]["grade"] != shown["2027.1"]["grade"]
    assert shown["2026.1"]["threshold"] != shown["2027.1"]["threshold"]
    assert not site_problems(out)


VARIANTS: list[dict[str, Any]] = [
    {},
    {"item_threshold": "1"},
    {"item_threshold": "0"},
    {
        "tiers": {
            "critical": {"weight": "1", "min_similarity": "0"},
            "high": {"weight": "3", "min_similarity": "0"},
            "low": {"weight": "0.001", "min_similarity": "1"},
        }
    },
    {
        "tiers": {
            "critical": {"weight": "0.3", "min_similarity": "1"},
            "high": {"weight": "0.7", "min_similarity": "0.95"},
            "low": {"weight": "0.3", "min_similarity": "0.5"},
        },
        "item_threshold": "0.97",
    },
    {"certify": {"min_grade": "D", "min_scored_fraction": "1", "independent_judge": False, "min_items_secret_gate": 1}},
    {
        "certify": {
            "min_grade": "S",
            "min_scored_fraction": "0.01",
            "independent_judge": True,
            "min_items_secret_gate": 1,
        }
    },
    {
        "grade_cutoffs": [{"grade": "P", "min_pass_rate": "100"}],
        "lowest_grade": "F",
        "bands": {"P": [100, 100], "F": [0, 0]},
        "certify": {
            "min_grade": "P",
            "min_scored_fraction": "0.5",
            "independent_judge": True,
            "min_items_secret_gate": 1,
        },
    },
]


@pytest.mark.parametrize("change", VARIANTS)
def test_worked_examples_hold_for_any_valid_parameters(change: dict[str, Any]) -> None:
    doc = {**json.loads((REPO / "generator/defaults/methodology.json").read_text()), **change}
    assert not check_methodology(doc), check_methodology(doc)
    ex = worked_examples(parse_methodology(doc))
    params = doc
    threshold = Fraction(params["item_threshold"])
    by_key = {e.key: e for e in ex.items}
    on = by_key["example-on-threshold"]
    if hasattr(on, "exact"):
        assert Fraction(on.exact) == threshold and on.passed and on.score == item_score_text(threshold)
    below = by_key["example-high-below-floor"]
    if hasattr(below, "exact"):
        assert not below.passed and Fraction(below.exact) >= threshold
        assert [f.meets_floor for f in below.fields if f.tier == "high"] == [False]
    else:
        assert params["tiers"]["high"]["min_similarity"] == "0" or "no item" in below.reason
    for e in ex.verdicts:
        if hasattr(e, "verdict"):
            assert e.key.split("-", 1)[1].startswith(
                {"certified": "certified", "not-certified": "best-case", "incomplete": "incomplete"}[e.verdict]
            )
    if hasattr(ex.relabelling, "before"):
        assert ex.relabelling.before.verdict == "not-certified"
        assert all(
            s.verdict != "certified" and s.worst_case_rate == ex.relabelling.before.worst_case_rate
            for s in ex.relabelling.steps
        )
