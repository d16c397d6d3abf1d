"""A certificate altered and re-signed with the program's own key still fails verification.

A signature only says who published a file; the verifier must also recompute what a
certificate claims. These tests play a dishonest operator holding the key: they edit a
certificate, fix its ledger leaf, and build with a fork of the generator whose own checks are
switched off, so every hash, signature, checkpoint and SHA256SUMS is valid. verify_site must
still name the altered field with its expected and found values. Without the fork, the real
build refuses the same data.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nacl.signing
import pytest

from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import Problem, Report, band_score, grade_counts, loads_strict, parse_methodology
from tests.support.forgery import forge, forked_build, setter
from tests.support.runs import certify, register, results, run_spec, scored

SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]


def signature_holds(out: Path, rel: str) -> bool:
    """Check the detached signature independently of the verifier, with the site's own key."""
    keys = json.loads((out / "keys.json").read_bytes())
    key = nacl.signing.VerifyKey(base64.b64decode(keys["keys"][0]["public_key"]))
    try:
        key.verify((out / rel).read_bytes(), (out / f"{rel}.sig").read_bytes())
    except nacl.exceptions.BadSignatureError:
        return False
    return True


def failure_at(report: Report, where: str) -> Problem:
    """The failure at `where`; also that no signature failed, so only the content gave it away."""
    assert not [f for f in report.failures if f.file.endswith(".sig")], report.render()
    hits = [f for f in report.failures if f.where == where]
    assert hits, report.render()
    return hits[0]


@pytest.fixture
def public_run(make_program: Callable[..., Paths]) -> Paths:
    """Gate a, two items, both pass: grade S, score 99 as proposed, certified."""
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    c = certify(paths, results("run-001", [scored("a-001"), scored("a-002")], proposed=99))
    assert (c.grade, c.score, c.verdict, c.summary["pass_rate"]) == ("S", 99, "certified", "100.0000")
    return paths


@pytest.fixture
def secret_run(make_program: Callable[..., Paths]) -> Paths:
    """Gate b, ten sealed items, nine pass: pass rate 90, grade S, certified."""
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    rows = [scored(i, passing=i != "b-0010") for i in SECRET10]
    c = certify(paths, results("run-s", rows, proposed=97))
    assert (c.grade, c.verdict, c.summary["passed"], c.summary["pass_rate"]) == ("S", "certified", 9, "90.0000")
    return paths


def test_the_forgery_machinery_alone_leaves_a_valid_site(
    public_run: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control: forging with no change verifies, so each failure below is the alteration's."""
    forge(public_run, "run-001", lambda cert: None)
    report = forked_build(public_run, tmp_path / "site", monkeypatch)
    assert report.ok, report.render()


@pytest.mark.parametrize(
    ("where", "value", "expected", "found"),
    [
        ("grade", "A", '"S"', '"A"'),
        ("score", 97, "99", "97"),
        ("verdict", "not-certified", '"certified"', '"not-certified"'),
        ("results.0.score", "0.990000", "0.982500", '"0.990000"'),
        ("summary.pass_rate", "95.0000", '"100.0000"', '"95.0000"'),
        ("summary.passed", 1, "2", "1"),
    ],
)
def test_public_certificate_resigned_still_fails(
    public_run: Paths,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    value: Any,
    expected: str,
    found: str,
) -> None:
    forge(public_run, "run-001", setter(where, value))
    out = tmp_path / "site"
    report = forked_build(public_run, out, monkeypatch)
    assert signature_holds(out, "certificates/run-001.json")
    reported = "results[0] (a-001).score" if where == "results.0.score" else where
    failure_at(report, reported)
    hits = [f for f in report.failures if f.where == reported and f.file == "certificates/run-001.json"]
    assert any((f.expected, f.found) == (expected, found) for f in hits), report.render()


@pytest.mark.parametrize(("where", "value"), [("verdict", "not-certified"), ("summary.pass_rate", "80.0000")])
def test_sealed_certificate_resigned_still_fails(
    secret_run: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, value: Any
) -> None:
    """Even with every result sealed, the rates and verdict follow from the published counts."""
    forge(secret_run, "run-s", setter(where, value))
    out = tmp_path / "site"
    report = forked_build(secret_run, out, monkeypatch)
    assert signature_holds(out, "certificates/run-s.json")
    f = failure_at(report, where)
    assert f.found == json.dumps(value)


def _hide_a_failure(cert: dict[str, Any], params: Any, proposed: str) -> None:
    """Relabel the failed sealed result as an infrastructure error and recompute every count,
    rate, grade and score to match: consistent on its face, wrong in its details."""
    cert["results"][9]["status"] = "infra_error"
    g = grade_counts(dict(Counter(r["status"] for r in cert["results"])), 9, params)
    cert.update(
        summary=g.summary,
        grade=g.grade,
        band=g.band,
        worst_case_grade=g.worst_case_grade,
        best_case_grade=g.best_case_grade,
        verdict=g.verdict,
    )
    cert["score"], cert["score_rule"] = band_score(proposed, g.band)


def test_a_relabelled_sealed_result_fails_once_its_item_is_revealed(
    secret_run: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = parse_methodology(loads_strict((secret_run.methodology_dir / "2026.1.json").read_bytes()))
    forge(secret_run, "run-s", lambda cert: _hide_a_failure(cert, params, "97"))
    cert = loads_strict((secret_run.certificates_dir / "run-s.json").read_bytes())
    assert (cert["summary"]["pass_rate"], cert["summary"]["infra_error"]) == ("100.0000", 1)

    # Sealed, the forgery is consistent: passed is asserted, not verified (format v1 §6).
    report = forked_build(secret_run, tmp_path / "sealed", monkeypatch)
    assert report.ok, report.render()
    assert any("9 of 9 scored results passed, as the certificate states" in a for a in report.asserted)

    # Revealed, the details document (hashed in the certificate) still says "scored".
    retire_items(secret_run, SECRET10, "Retired after use.", "2026-03-10T00:00:00Z")
    out = tmp_path / "revealed"
    report = forked_build(secret_run, out, monkeypatch)
    assert signature_holds(out, "certificates/run-s.json")
    f = failure_at(report, "results[9] (b-0010) details.result.status")
    assert (f.expected, f.found) == ('"infra_error"', '"scored"')


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("grade", "A"),  # named as the grade, not only as a band and a score that no longer fit it
        ("score", 97),
        ("verdict", "not-certified"),
        ("results.0.score", "0.990000"),
        ("summary.pass_rate", "95.0000"),
        ("summary.passed", 1),
    ],
)
def test_the_real_build_refuses_the_tampered_data(public_run: Paths, tmp_path: Path, where: str, value: Any) -> None:
    forge(public_run, "run-001", setter(where, value))
    with pytest.raises(InputError) as e:
        build(public_run, tmp_path / "site")
    reported = "results[0] (a-001).score" if where == "results.0.score" else where
    assert any(p.file.endswith("certificates/run-001.json") and p.where == reported for p in e.value.problems), (
        e.value.describe()
    )
    assert not (tmp_path / "site").exists()


def test_a_refused_certificate_does_not_make_its_records_stray(public_run: Paths, tmp_path: Path) -> None:
    """The refusal should name the certificate, not blame its due grader record as unpublishable."""
    forge(public_run, "run-001", setter("score", 97))
    with pytest.raises(InputError) as e:
        build(public_run, tmp_path / "site")
    assert any(p.where == "score" for p in e.value.problems), e.value.describe()
    assert not [p for p in e.value.problems if "no certificate in the ledger makes this file due" in p.message], (
        e.value.describe()
    )


def test_the_real_build_refuses_a_tampered_sealed_certificate(secret_run: Paths, tmp_path: Path) -> None:
    forge(secret_run, "run-s", setter("verdict", "incomplete"))
    with pytest.raises(InputError) as e:
        build(secret_run, tmp_path / "site")
    assert any(p.file.endswith("certificates/run-s.json") and p.where == "verdict" for p in e.value.problems), (
        e.value.describe()
    )


def test_a_field_name_that_is_not_a_string_is_no_escape(
    public_run: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field renamed to a non-string could dodge the comparison with the revealed answer and
    so the recomputation of its similarity; the verifier refuses the name itself."""

    def mutate(cert: dict[str, Any]) -> None:
        field = cert["results"][0]["fields"][0]
        field["name"], field["output"] = 1, "wrong"

    forge(public_run, "run-001", mutate)
    report = forked_build(public_run, tmp_path / "site", monkeypatch)
    assert any(f.where == "results[0].fields[0].name" and "non-empty string" in f.message for f in report.failures), (
        report.render()
    )


def test_a_sealed_pass_count_below_what_the_details_show_fails(
    secret_run: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With five passing results opened, a summary claiming two passes cannot be taken on
    trust, even while the other five are sealed."""
    retire_items(secret_run, SECRET10[:5], "Retired.", "2026-03-10T00:00:00Z")

    def mutate(cert: dict[str, Any]) -> None:
        g = grade_counts(
            Counter(r["status"] for r in cert["results"]),
            2,
            parse_methodology(loads_strict((secret_run.methodology_dir / "2026.1.json").read_bytes())),
        )
        cert["summary"] = g.summary
        cert["grade"], cert["band"], cert["worst_case_grade"], cert["best_case_grade"], cert["verdict"] = (
            g.grade,
            g.band,
            g.worst_case_grade,
            g.best_case_grade,
            g.verdict,
        )
        cert["score"], cert["score_rule"] = band_score("97", g.band)

    forge(secret_run, "run-s", mutate)
    failure = failure_at(forked_build(secret_run, tmp_path / "site", monkeypatch), "summary.passed")
    assert (failure.expected, failure.found) == ("5 to 10", "2")


def test_one_hostile_certificate_does_not_stop_the_others_being_checked(
    make_program: Callable[..., Paths], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001"]))
    certify(paths, results("run-001", [scored("a-001")]))
    register(paths, run_spec(paths, "run-002", "a", ["a-002"], previous_run="run-001"), "2026-03-03T00:00:00Z")
    certify(paths, results("run-002", [scored("a-002")], finished_at="2026-03-03T12:00:00Z"), at="2026-03-04T00:00:00Z")
    forge(paths, "run-001", setter("results.0.item", ["a-001"]))
    forge(paths, "run-002", setter("verdict", "not-certified"))
    report = forked_build(paths, tmp_path / "site", monkeypatch)
    assert any(f.where == "verdict" and f.found == '"not-certified"' for f in report.failures), report.render()
