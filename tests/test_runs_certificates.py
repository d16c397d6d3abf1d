"""Runs and certificates as far as this release takes them: published, signed, bound to the
ledger and to the run rules of SPEC §4 and §6 that need no scoring engine.

`register` and `certify` come with the scoring engine; until then these tests write the run
spec, the certificate and their ledger leaves by hand, the way those commands will.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from conftest import BuiltSite

from generator import canonical, layout
from generator.build import build
from generator.commitments import retire_item
from generator.datadir import Paths
from generator.errors import InputError
from generator.keys import load_key
from generator.ledgerfile import appending
from generator.verify import sha256_hex, verify_site

RUN_AT = "2026-03-01T00:00:00Z"
CERT_AT = "2026-03-02T00:00:00Z"


def methodology_pin(paths: Paths) -> dict[str, str]:
    data = (paths.methodology_dir / "2026.1.json").read_bytes()
    return {"version": "2026.1", "sha256": sha256_hex(data)}


def run_spec(paths: Paths, run_id: str, gate: str, items: list[str], **over: Any) -> dict[str, Any]:
    spec = {
        "type": "run-spec", "v": 1, "id": run_id, "previous_run": None,
        "subject": {"name": "Extractor", "version": "1.0", "organization": "Acme AI"},
        "gate": gate, "question": "Does Extractor 1.0 extract customer-message fields reliably?",
        "items": items, "budget": {"max_tokens_per_item": 4096}, "repetitions": 1,
        "metrics": ["pass_rate"], "exclusion_rules": ["The item's message is not in a supported language."],
        "methodology": methodology_pin(paths),
        "judge": {"provider": "Independent Grading Co", "model": "grader-large", "version": "3",
                  "rubric_sha256": "ab" * 32, "seed": 7},
    }
    spec.update(over)
    return spec


def register(paths: Paths, spec: dict[str, Any], at: str = RUN_AT) -> None:
    data = canonical.dumps(spec)
    paths.runs_dir.mkdir(parents=True, exist_ok=True)
    (paths.runs_dir / f"{spec['id']}.json").write_bytes(data)
    with appending(paths) as app:
        app.append([{"type": "run", "v": 1, "id": spec["id"], "sha256": sha256_hex(data),
                     "subject": spec["subject"], "gate": spec["gate"], "at": at}])


def certify(paths: Paths, spec: dict[str, Any], serial: str, at: str = CERT_AT, **over: Any) -> dict[str, Any]:
    n = len(spec["items"])
    cert = {
        "type": "certificate", "v": 1, "serial": serial, "run": spec["id"], "issued_at": at, "expires_at": None,
        "subject": spec["subject"], "gate": spec["gate"], "methodology": spec["methodology"],
        "run_spec": {"path": f"runs/{spec['id']}.json", "sha256": sha256_hex(canonical.dumps(spec))},
        "finished_at": at,
        "results": [{"item": i, "status": "not_run", "note": "Not attempted."} for i in spec["items"]],
        "summary": {"total": n, "scored": 0, "passed": 0, "infra_error": 0, "not_run": n, "missing_label": 0,
                    "excluded": 0, "pass_rate": "0.0000", "pass_rate_ci95": ["0.0000", "100.0000"],
                    "worst_case_pass_rate": "0.0000", "best_case_pass_rate": "100.0000"},
        "grade": "D", "band": [0, 54], "worst_case_grade": "D", "best_case_grade": "S",
        "grader": {"record": "cd" * 32, "kept": 0, "dropped": 0},
        "score": 27, "score_rule": "midpoint-fallback", "verdict": "incomplete",
    }
    cert.update(over)
    data = canonical.dumps(cert)
    paths.certificates_dir.mkdir(parents=True, exist_ok=True)
    (paths.certificates_dir / f"{serial}.json").write_bytes(data)
    with appending(paths) as app:
        app.append([{"type": "certificate", "v": 1, "serial": serial, "run": spec["id"], "sha256": sha256_hex(data), "at": at}])
    return cert


@pytest.fixture
def with_run(make_program: Callable[..., Paths]) -> tuple[BuiltSite, dict[str, Any]]:
    paths = make_program(public_items=3, secret_items=12, retired=0)
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"])
    register(paths, spec)
    certify(paths, spec, "cert-001")
    out = paths.data.parent / "public"
    build(paths, out)
    return BuiltSite(paths, out), spec


def test_run_and_certificate_are_published_and_verify(with_run: tuple[BuiltSite, dict[str, Any]]) -> None:
    site, spec = with_run
    report = verify_site(site.out)
    assert report.ok, report.render()
    manifest = json.loads((site.out / "transparency.json").read_bytes())
    assert manifest["runs"] == [{"id": "run-001", "spec": "runs/run-001.json", "status": "incomplete"}]
    assert manifest["certificates"][0]["serial"] == "cert-001"
    assert (site.out / "runs/run-001.json").read_bytes() == canonical.dumps(spec)
    assert (site.out / "certificates/cert-001.json.sig").stat().st_size == 64
    runs_page = BeautifulSoup((site.out / "runs/index.html").read_text(), "html.parser")
    assert "Extractor" in runs_page.get_text() and "incomplete" in runs_page.get_text()
    page = BeautifulSoup((site.out / layout.certificate_page("cert-001")).read_text(), "html.parser")
    assert page.h1.get_text() == "Certificate cert-001"
    twin = (site.out / "certificates/cert-001" / page.select_one("a.twin")["href"]).resolve()
    assert twin == (site.out / "certificates/cert-001.json").resolve()


def _resign_all(site: Path, paths: Paths, rel: str) -> None:
    signer = load_key(paths.key_file)
    (site / f"{rel}.sig").write_bytes(signer.sign((site / rel).read_bytes()))
    _resign_sums_only(site, signer)


@pytest.mark.parametrize(("rel", "field", "value", "message"), [
    ("certificates/cert-001.json", "verdict", "certified", "SHA-256 differs from the certificate's ledger leaf"),
    ("runs/run-001.json", "question", "Another question?", "SHA-256 differs from run run-001's ledger leaf"),
])
def test_an_altered_and_resigned_document_fails_on_its_ledger_leaf(
    with_run: tuple[BuiltSite, dict[str, Any]], tmp_path: Path, rel: str, field: str, value: str, message: str
) -> None:
    site, _ = with_run
    copy = tmp_path / "site"
    shutil.copytree(site.out, copy)
    doc = json.loads((copy / rel).read_bytes())
    doc[field] = value
    (copy / rel).write_bytes(canonical.dumps(doc))
    _resign_all(copy, site.paths, rel)
    report = verify_site(copy)
    assert not report.ok
    assert any(p.file == rel and message in p.message for p in report.failures), report.render()


def test_a_certificate_signature_over_other_bytes_fails(with_run: tuple[BuiltSite, dict[str, Any]], tmp_path: Path) -> None:
    site, _ = with_run
    copy = tmp_path / "site"
    shutil.copytree(site.out, copy)
    signer = load_key(site.paths.key_file)
    (copy / "certificates/cert-001.json.sig").write_bytes(signer.sign(b"something else"))
    _resign_sums_only(copy, signer)
    report = verify_site(copy)
    assert [p.file for p in report.failures] == ["certificates/cert-001.json.sig"]


def _resign_sums_only(site: Path, signer: Any) -> None:
    files = sorted((p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()), key=str.encode)
    lines = "".join(f"{sha256_hex((site / f).read_bytes())}  {f}\n" for f in files if f not in ("SHA256SUMS", "SHA256SUMS.sig"))
    (site / "SHA256SUMS").write_text(lines)
    (site / "SHA256SUMS.sig").write_bytes(signer.sign(lines.encode()))


def test_an_open_run_is_shown_as_open_and_blocks_retiring_its_items(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=12, retired=0)
    items = [f"b-{i:04d}" for i in range(1, 11)]
    register(paths, run_spec(paths, "run-002", "b", items))
    out = paths.data.parent / "public"
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    assert any("still open" in n and "run-002" in n for n in report.notes)
    manifest = json.loads((out / "transparency.json").read_bytes())
    assert manifest["runs"][0]["status"] == "open"
    assert "open: not yet decided" in (out / "runs/index.html").read_text()
    with pytest.raises(InputError, match="used by run run-002, which is still open"):
        retire_item(paths, "b-0003", "Would contaminate the run.", "2026-03-05T00:00:00Z")
    retire_item(paths, "b-0011", "Not in the run.", "2026-03-05T00:00:00Z")


@pytest.mark.parametrize(("over", "items", "message"), [
    ({"judge": {"provider": "  ACME AI ", "model": "m", "version": "1", "rubric_sha256": "ab" * 32, "seed": None}}, None,
     "judge must be independent"),
    ({"repetitions": 2}, None, "repetitions is 1 in v1"),
    ({}, ["b-0001", "b-0002"], "too few items for a secret gate"),
    ({}, ["b-0001"] * 10, "items must be distinct"),
    ({"previous_run": "run-000"}, None, "previous_run is not the last run"),
    ({"methodology": {"version": "2026.9", "sha256": "00" * 32}}, None, "not published before the run"),
    ({}, [f"b-{i:04d}" for i in range(1, 10)] + ["a-001"], "is not of the run's gate"),
])
def test_the_build_refuses_a_run_that_breaks_the_rules(
    make_program: Callable[..., Paths], over: dict[str, Any], items: list[str] | None, message: str
) -> None:
    paths = make_program(public_items=1, secret_items=12, retired=0)
    spec = run_spec(paths, "run-003", "b", items or [f"b-{i:04d}" for i in range(1, 11)], **over)
    register(paths, spec)
    with pytest.raises(InputError) as e:
        build(paths, paths.data.parent / "public")
    assert any(message in p.message for p in e.value.problems), e.value.describe()
    assert all(p.file.endswith("runs/run-003.json") for p in e.value.problems)


def test_one_observation_per_sealed_item_per_subject(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=20, retired=0)
    first = run_spec(paths, "run-a", "b", [f"b-{i:04d}" for i in range(1, 11)])
    register(paths, first)
    certify(paths, first, "cert-a")
    second = run_spec(paths, "run-b", "b", [f"b-{i:04d}" for i in range(6, 16)], previous_run="run-a")
    register(paths, second, at="2026-03-03T00:00:00Z")
    with pytest.raises(InputError, match="reuses sealed items already run by this subject"):
        build(paths, paths.data.parent / "public")


def test_records_named_index_do_not_collide_with_list_pages(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    """A methodology version or a serial may be called 'index'; its page must not replace the list."""
    from generator.methodology import publish

    paths = make_program(public_items=2, secret_items=0, retired=0)
    params = json.loads((paths.methodology_dir / "2026.1.json").read_text())
    params["version"] = "index"
    (tmp_path / "p.json").write_text(json.dumps(params))
    publish(paths, tmp_path / "p.json", paths.methodology_dir / "2026.1.md", "2026-02-01T00:00:00Z")
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002"])
    register(paths, spec)
    certify(paths, spec, "index")
    out = paths.data.parent / "public"
    build(paths, out)
    assert verify_site(out).ok
    for listing, record in (("methodology/index.html", "methodology/index/index.html"), ("certificates/index.html", "certificates/index/index.html")):
        assert BeautifulSoup((out / listing).read_text(), "html.parser").h1.get_text() in ("Methodology", "Certificates")
        assert (out / record).is_file()


@pytest.mark.parametrize(("over", "where", "message"), [
    ({"verdict": "whatever"}, "verdict", "unknown verdict"),
    ({"grade": "Z"}, "grade", "not a grade of the pinned methodology"),
    ({"band": [0, 1]}, "band", "band is not the grade's band"),
    ({"score": -5}, "score", "score lies outside the grade's band"),
    ({"score": 30}, "score", "a midpoint fallback scores the band's midpoint"),
    ({"score_rule": "whatever"}, "score_rule", "unknown score rule"),
    ({"run_spec": {"path": "../../etc/passwd", "sha256": "00" * 32}}, "run_spec", "run_spec must name the published run spec"),
    ({"expires_at": 12345}, "expires_at", "must be a time or null"),
    ({"results": [{"item": "a-001", "status": "bogus", "note": "x"}, {"item": "a-002", "status": "not_run", "note": "x"}, {"item": "a-003", "status": "not_run", "note": "x"}]},
     "results[0].status", "unknown status"),
    ({"results": [{"item": "a-001", "status": "not_run", "details": "ab" * 32}, {"item": "a-002", "status": "not_run", "note": "x"}, {"item": "a-003", "status": "not_run", "note": "x"}]},
     "results[0]", "unknown member"),
    ({"grader": {"record": "x", "kept": -1, "dropped": 0}}, "grader.record", "the grader record is a SHA-256"),
    ({"extra": 1}, "", "unknown member"),
])
def test_the_build_refuses_a_malformed_certificate(make_program: Callable[..., Paths], over: dict[str, Any], where: str, message: str) -> None:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"])
    register(paths, spec)
    certify(paths, spec, "cert-001", **over)
    with pytest.raises(InputError) as e:
        build(paths, paths.data.parent / "public")
    assert any(message in p.message and p.where.startswith(where) and p.file.endswith("cert-001.json") for p in e.value.problems), e.value.describe()


def test_summary_counts_must_add_up(make_program: Callable[..., Paths]) -> None:
    from generator.verify import check_certificate

    paths = make_program(public_items=3, secret_items=0, retired=0)
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"])
    register(paths, spec)
    cert = certify(paths, spec, "cert-001")
    params = json.loads((paths.methodology_dir / "2026.1.json").read_text())
    good = check_certificate(cert, spec, params, True, "runs/run-001.json", sha256_hex(canonical.dumps(spec)))
    assert good == []
    cert["summary"] = {**cert["summary"], "total": "lots", "not_run": 2}
    found = check_certificate(cert, spec, params, True, "runs/run-001.json", sha256_hex(canonical.dumps(spec)))
    assert {p.where for p in found} == {"summary.total", "summary.not_run"}
