"""Runs and certificates through the real commands: register, certify, retire, build, verify."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from generator.commands.build import build
from generator.commands.retire import retire_item, retire_items
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import loads_strict, sha256_hex, verify_site
from tests.support.files import tree
from tests.support.runs import CERT_AT, certify, register, results, run_spec, scored

SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]


def publish(paths: Paths) -> Path:
    out = paths.data.parent / "public"
    build(paths, out)
    return out


def test_public_gate_run_is_certified_open_and_verifies(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"]))
    c = certify(
        paths,
        results(
            "run-001",
            [scored("a-001"), scored("a-002"), scored("a-003")],
            proposed=99,
            rationale=[
                {"text": "All three right.", "evidence_refs": ["a-001", "a-002"]},
                {"text": "uncited", "evidence_refs": []},
            ],
        ),
    )
    assert (c.verdict, c.grade, c.score, c.score_rule) == ("certified", "S", 99, "as-proposed")
    out = publish(paths)
    report = verify_site(out)
    assert report.ok, report.render()
    assert not report.asserted, report.asserted
    manifest = json.loads((out / "transparency.json").read_bytes())
    assert manifest["runs"] == [{"id": "run-001", "spec": "runs/run-001.json", "status": "certified"}]
    exports = manifest["certificates"][0].pop("exports")
    assert [e.rsplit("/", 1)[-1] for e in exports[2:]] == ["transparent-statement.cose", "credential.json"]
    assert manifest["certificates"] == [
        {
            "serial": "run-001",
            "run": "run-001",
            "path": "certificates/run-001.json",
            "details": [],
            "grader_record": "certificates/run-001/grader-record.json",
        }
    ]
    cert = json.loads((out / "certificates/run-001.json").read_bytes())
    assert cert["results"][0] == {
        "item": "a-001",
        "status": "scored",
        "score": "0.982500",
        "passed": True,  # (1·1 + 0.95·0.7 + 1·0.3) / 2
        "fields": [
            {
                "name": "account_number",
                "kind": "scalar",
                "tier": "critical",
                "similarity": "1",
                "output": "110-482-339201",
            },
            {"name": "summary", "kind": "text", "tier": "high", "similarity": "0.95", "output": "Summary of a-001"},
            {"name": "tags", "kind": "array", "tier": "low", "similarity": "1", "output": ["transfer"]},
        ],
    }
    assert cert["grader"]["kept"] == 1 and cert["grader"]["dropped"] == 1
    record = loads_strict((out / "certificates/run-001/grader-record.json").read_bytes())
    assert (
        record["proposed_json"] == "99"
        and sha256_hex((out / "certificates/run-001/grader-record.json").read_bytes()) == cert["grader"]["record"]
    )


def test_the_proposal_is_kept_as_written(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    doc = results("run-001", [scored("a-001"), scored("a-002")])
    raw = json.dumps(doc).replace('"proposed_score": 90', '"proposed_score":  90.0 ')
    c = certify(paths, raw=raw)
    assert c.score_rule == "midpoint-fallback" and c.score == 98
    record = loads_strict((paths.data / "certificates/run-001/grader-record.json").read_bytes())
    assert record["proposed_json"] == "90.0"


@pytest.mark.parametrize(
    ("grader", "recorded", "dropped"),
    [
        ({"proposed_score": 90}, [], 0),  # missing: no elements, recorded as []
        ({"proposed_score": 90, "rationale": None}, None, 1),  # null: not a list, one dropped
        (None, [], 0),  # no grader block at all
    ],
)
def test_missing_and_null_rationales(
    make_program: Callable[..., Paths], grader: Any, recorded: Any, dropped: int
) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    doc = results("run-001", [scored("a-001"), scored("a-002")])
    if grader is None:
        del doc["grader"]
    else:
        doc["grader"] = grader
    c = certify(paths, doc)
    record = loads_strict((paths.data / "certificates/run-001/grader-record.json").read_bytes())
    cert = loads_strict((paths.data / "certificates/run-001.json").read_bytes())
    assert record["rationale"] == recorded and cert["grader"]["dropped"] == dropped
    assert c.score_rule == ("midpoint-fallback" if grader is None else "clamped")
    assert verify_site(publish(paths)).ok


def test_a_compound_proposal_is_kept_byte_for_byte(make_program: Callable[..., Paths]) -> None:
    """ "As written" includes the whitespace inside the value, line ends too (format v1 §6)."""
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    raw = json.dumps(results("run-001", [scored("a-001"), scored("a-002")])).replace(
        '"proposed_score": 90', '"proposed_score": [97,\r\n 98]'
    )
    assert certify(paths, raw=raw).score_rule == "midpoint-fallback"
    record = loads_strict((paths.data / "certificates/run-001/grader-record.json").read_bytes())
    assert record["proposed_json"] == "[97,\r\n 98]"


def test_secret_gate_results_are_sealed_until_retired(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=12, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    rows = [scored(i, passing=n % 4 != 0) for n, i in enumerate(SECRET10)]
    rows[9] = {"item": SECRET10[9], "status": "infra_error", "note": "The sandbox crashed."}
    c = certify(
        paths,
        results(
            "run-s",
            rows,
            proposed=50,
            rationale=[{"text": "Mostly right; b-0001 is fine.", "evidence_refs": ["b-0001"]}],
        ),
        serial="cert-s",
    )
    assert c.sealed and c.summary["passed"] == 6 and c.summary["scored"] == 9
    cert = loads_strict((paths.data / "certificates/cert-s.json").read_bytes())
    assert all(set(r) == {"item", "status", "details"} for r in cert["results"])
    private_details = sorted((paths.private / "certificates/cert-s/details").iterdir())
    assert len(private_details) == 10
    assert not (paths.data / "certificates/cert-s").exists()
    out = publish(paths)
    report = verify_site(out)
    assert report.ok, report.render()
    assert any("6 of 9 scored results passed, as the certificate states" in a for a in report.asserted)
    assert any("grader record is published once every item is revealed" in a for a in report.asserted)
    site = b"".join(v for v in tree(out).values() if v is not None)
    for f in private_details:
        doc = loads_strict(f.read_bytes())
        assert doc["salt"].encode() not in site
    assert b"Mostly right" not in site

    # Retire two items: their details are published; the grader record still waits.
    retire_items(paths, ["b-0001", "b-0004"], "Retired after use.", "2026-03-10T00:00:00Z")
    assert sorted(p.name for p in (paths.data / "certificates/cert-s/details").iterdir()) == [
        "b-0001.json",
        "b-0004.json",
    ]
    out = publish(paths)
    report = verify_site(out)
    assert report.ok, report.render()
    manifest = json.loads((out / "transparency.json").read_bytes())
    assert manifest["certificates"][0]["details"] == [
        "certificates/cert-s/details/b-0001.json",
        "certificates/cert-s/details/b-0004.json",
    ]
    assert manifest["certificates"][0]["grader_record"] is None
    assert any("6 of 9" in a for a in report.asserted)

    # Retire the rest: everything is published and rechecked; nothing is asserted any more.
    retire_items(
        paths, [i for i in SECRET10 if i not in ("b-0001", "b-0004")], "Retired after use.", "2026-03-11T00:00:00Z"
    )
    out = publish(paths)
    report = verify_site(out)
    assert report.ok, report.render()
    assert not report.asserted, report.asserted
    manifest = json.loads((out / "transparency.json").read_bytes())
    assert len(manifest["certificates"][0]["details"]) == 10
    assert manifest["certificates"][0]["grader_record"] == "certificates/cert-s/grader-record.json"


def test_a_details_document_published_early_is_refused(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    certify(paths, results("run-s", [scored(i) for i in SECRET10]))
    early = paths.data / "certificates/run-s/details/b-0002.json"
    early.parent.mkdir(parents=True)
    early.write_bytes((paths.private / "certificates/run-s/details/b-0002.json").read_bytes())
    with pytest.raises(InputError, match="no certificate in the ledger makes this file due"):
        publish(paths)


def test_retire_refuses_when_a_due_details_document_is_missing(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    certify(paths, results("run-s", [scored(i) for i in SECRET10]))
    (paths.private / "certificates/run-s/details/b-0003.json").unlink()
    before = paths.ledger_file.read_bytes()
    with pytest.raises(InputError, match="details of b-0003 is missing"):
        retire_item(paths, "b-0003", "Retired.", "2026-03-10T00:00:00Z")
    assert paths.ledger_file.read_bytes() == before and not paths.reveal_file("b-0003").exists()


@pytest.mark.parametrize(
    ("rows", "verdict"),
    [
        ([scored(f"a-{i:03d}") for i in range(1, 11)], "certified"),
        ([scored(f"a-{i:03d}", passing=i > 5) for i in range(1, 11)], "not-certified"),
        (
            [scored("a-001"), *({"item": f"a-{i:03d}", "status": "not_run", "note": "Skipped."} for i in range(2, 11))],
            "incomplete",
        ),
    ],
)
def test_every_verdict(make_program: Callable[..., Paths], rows: list[dict[str, Any]], verdict: str) -> None:
    paths = make_program(public_items=10, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", [f"a-{i:03d}" for i in range(1, 11)]))
    assert certify(paths, results("run-001", rows)).verdict == verdict
    assert verify_site(publish(paths)).ok


def test_an_open_run_is_shown_as_open_and_blocks_retiring_its_items(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=12, retired=0)
    register(paths, run_spec(paths, "run-002", "b", SECRET10))
    out = publish(paths)
    report = verify_site(out)
    assert report.ok, report.render()
    assert any("still open" in n and "run-002" in n for n in report.notes)
    assert json.loads((out / "transparency.json").read_bytes())["runs"][0]["status"] == "open"
    assert "open: not yet decided" in (out / "runs/index.html").read_text()
    with pytest.raises(InputError, match="used by run run-002, which is still open"):
        retire_item(paths, "b-0003", "Would contaminate the run.", "2026-03-05T00:00:00Z")
    retire_item(paths, "b-0011", "Not in the run.", "2026-03-05T00:00:00Z")


def test_records_named_index_do_not_collide_with_list_pages(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    """A methodology version or a serial may be called 'index'; its page must not replace the list."""
    from generator.commands.methodology import publish as publish_methodology

    paths = make_program(public_items=2, secret_items=0, retired=0)
    params = json.loads((paths.methodology_dir / "2026.1.json").read_text())
    params["version"] = "index"
    (tmp_path / "p.json").write_text(json.dumps(params))
    publish_methodology(paths, tmp_path / "p.json", paths.methodology_dir / "2026.1.md", "2026-02-01T00:00:00Z")
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    certify(paths, results("run-001", [scored("a-001"), scored("a-002")]), serial="index")
    out = publish(paths)
    assert verify_site(out).ok
    for listing, record in (
        ("methodology/index.html", "methodology/index/index.html"),
        ("certificates/index.html", "certificates/index/index.html"),
    ):
        assert BeautifulSoup((out / listing).read_text(), "html.parser").h1.get_text() in (
            "Methodology",
            "Certificates",
        )
        assert (out / record).is_file()
    assert layout.certificate_page("index") == "certificates/index/index.html"


def test_expiry_is_a_state_not_a_failure(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    certify(paths, results("run-001", [scored("a-001"), scored("a-002")]), expires_at="2026-04-01T00:00:00Z")
    report = verify_site(publish(paths))
    assert report.ok and any("expired at 2026-04-01T00:00:00Z" in n for n in report.notes)


def test_issued_at_is_the_leaf_time(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    certify(paths, results("run-001", [scored("a-001"), scored("a-002")]))
    cert = loads_strict((paths.data / "certificates/run-001.json").read_bytes())
    leaf = loads_strict(paths.ledger_file.read_bytes().splitlines()[-1])
    assert cert["issued_at"] == leaf["at"] == CERT_AT and leaf["sha256"] == sha256_hex(
        (paths.data / "certificates/run-001.json").read_bytes()
    )
