"""Withdrawing a registered run that will never be run (format v2's run-withdrawn event):
`transparency withdraw`, the rules the ledger replay enforces, the runs page, and a forged
ledger that breaks the rules failing verification."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

import generator.verifier as v
from generator.cli import main
from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.commands.withdraw import withdraw_run
from generator.core import layout
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from tests.support.demo import BuiltSite
from tests.support.files import refused
from tests.support.runs import certify, register, results, run_spec, scored
from tests.support.tamper import ENTRIES, entries_doc, rewrite_ledger

REASON = "The subject was pulled from evaluation before the run began."
AT = "2026-03-10T00:00:00Z"


@pytest.fixture
def program(make_program: Callable[..., Paths]) -> Paths:
    """run-001 certified on the public gate; run-002 (another subject) registered on the secret gate."""
    paths = make_program(secret_items=12, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    certify(paths, results("run-001", [scored("a-001"), scored("a-002")]))
    other = {"id": "other", "name": "Other Reader", "version": "2", "organization": "Other Org"}
    secret = [f"b-{i:04d}" for i in range(1, 11)]
    register(paths, run_spec(paths, "run-002", "b", secret, subject=other), at="2026-03-03T00:00:00Z")
    return paths


def _cli(paths: Paths, *args: str) -> Any:
    return CliRunner().invoke(main, ["--data", str(paths.data), "--private", str(paths.private), *args])


def test_withdraw_then_certify_is_refused(program: Paths) -> None:
    r = _cli(program, "withdraw", "run-002", "--reason", REASON, "--at", AT)
    assert r.exit_code == 0, r.output
    assert "Withdrew run run-002" in r.output
    e = refused(
        lambda: certify(program, results("run-002", [scored(f"b-{i:04d}") for i in range(1, 11)]), at=AT),
        program.data,
        program.private,
    )
    assert any("withdrawn" in p.message and "never gets a certificate" in p.message for p in e.problems)


def test_withdraw_twice_or_a_certified_or_unknown_run_is_refused(program: Paths) -> None:
    withdraw_run(program, "run-002", REASON, AT)
    twice = refused(lambda: withdraw_run(program, "run-002", "Again.", AT), program.data, program.private)
    assert any("already withdrawn" in p.message for p in twice.problems)
    certified = refused(lambda: withdraw_run(program, "run-001", REASON, AT), program.data, program.private)
    assert any("already has certificate run-001" in p.message for p in certified.problems)
    unknown = refused(lambda: withdraw_run(program, "run-999", REASON, AT), program.data, program.private)
    assert any("no run run-999 is registered" in p.message for p in unknown.problems)
    bad = refused(lambda: withdraw_run(program, "run-002", "two\nlines", AT), program.data, program.private)
    assert any(p.file == "--reason" for p in bad.problems)
    # Each refusal says what was expected and what was found, as revoke's do.
    for err in (twice, certified, unknown):
        assert all(p.expected and p.found for p in err.problems if p.where == "run"), err.describe()
    r = _cli(program, "withdraw", "run-001", "--reason", REASON, "--at", AT)
    assert r.exit_code == 2
    assert "expected: a registered run with no certificate" in r.output and "found:    certificate run-001" in r.output


def test_a_withdrawn_run_is_decided_its_items_retire_and_stay_seen(program: Paths) -> None:
    withdraw_run(program, "run-002", REASON, AT)
    retire_item(program, "b-0001", "Retired after the run was withdrawn.", "2026-03-11T00:00:00Z")
    other = {"id": "other", "name": "Other Reader", "version": "3", "organization": "Other Org"}
    reuse = run_spec(program, "run-003", "b", [f"b-{i:04d}" for i in range(2, 12)], subject=other)
    reuse["previous_run"] = "run-002"
    e = refused(lambda: register(program, reuse, at="2026-03-12T00:00:00Z"), program.data, program.private)
    assert any("reuses sealed items already run by this subject" in p.message for p in e.problems)
    assert not any("still open" in p.message for p in e.problems)


@pytest.fixture
def withdrawn_site(program: Paths) -> BuiltSite:
    withdraw_run(program, "run-002", REASON, AT)
    out = program.data.parent / "public"
    build(program, out)
    return BuiltSite(program, out)


def test_a_site_with_a_withdrawal_verifies_and_shows_it(withdrawn_site: BuiltSite) -> None:
    site = withdrawn_site.out
    leaves = entries_doc(site)["entries"]
    assert leaves[-1] == {"type": "run-withdrawn", "v": 2, "run": "run-002", "reason": REASON, "at": AT}
    report = v.verify_site(site)
    assert report.ok, report.render()
    assert not any("still open" in n for n in report.notes)
    # Named with its reason, as a revocation is: in a note and in --json's "withdrawn".
    assert f"run run-002 WITHDRAWN at {AT}: {REASON} (it will never be run nor certified)" in report.notes
    assert report.to_json()["withdrawn"] == [{"run": "run-002", "at": AT, "reason": REASON, "index": len(leaves) - 1}]
    page = BeautifulSoup((site / layout.runs_page()).read_text(encoding="utf-8"), "html.parser")
    row = page.select_one("tr.status-withdrawn")
    assert row is not None and "withdrawn on 2026-03-10T00:00:00Z" in row.get_text() and REASON in row.get_text()


def _forge(site: Path, *leaves: dict[str, Any]) -> list[v.Problem]:
    signer = load_key(site.parent / "data" / "private" / "signing.key")
    rewrite_ledger(site, signer, [*entries_doc(site)["entries"], *leaves])
    report = v.verify_site(site)
    assert not report.ok
    return report.failures


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("run-001", "already has a certificate"),
        ("run-002", "withdrawn twice"),
        ("run-999", "not registered before"),
    ],
)
def test_a_forged_withdrawal_fails_verification(withdrawn_site: BuiltSite, run: str, message: str) -> None:
    leaf = {"type": "run-withdrawn", "v": 2, "run": run, "reason": "Forged.", "at": "2026-04-01T00:00:00Z"}
    failures = _forge(withdrawn_site.out, leaf)
    assert any(p.file == ENTRIES and message in p.message for p in failures), [p.describe() for p in failures]


def test_the_replay_refuses_a_certificate_after_a_withdrawal(verifier: Any) -> None:
    """The rule itself, in the ledger replay."""
    ledger = verifier.Ledger()
    subject = {"id": "s", "name": "S", "version": "1", "organization": "O"}
    leaves = [
        {"type": "gate", "v": 1, "id": "a", "name": "A", "public": True, "at": AT},
        {"type": "run", "v": 1, "id": "r", "sha256": "ab" * 32, "subject": subject, "gate": "a", "at": AT},
        {"type": "run-withdrawn", "v": 2, "run": "r", "reason": "Never run.", "at": AT},
        {"type": "certificate", "v": 1, "serial": "r", "run": "r", "sha256": "cd" * 32, "at": AT},
        {"type": "run-withdrawn", "v": 1, "run": "r", "reason": "Never run.", "at": AT},
    ]
    found = [ledger.apply(leaf) for leaf in leaves]
    assert found[:3] == [[], [], []]
    assert any("was withdrawn" in p.message for p in found[3])
    assert any(p.where.endswith("v") for p in found[4])


def test_the_monitor_prints_a_withdrawal_by_its_run_to_whoever_follows_runs(
    withdrawn_site: BuiltSite, tmp_path: Path
) -> None:
    argv = ["monitor", str(withdrawn_site.out), "--state", str(tmp_path / "state"), "--type", "run"]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    withdrawn = [line for line in lines if " run-withdrawn " in line]
    assert len(withdrawn) == 1, lines
    assert ' run-withdrawn run-002 gate=b subject="Other Reader" (other) reason="The subject was pulled' in withdrawn[0]
    assert [line.split()[3] for line in lines if line.split()[2] == "run"] == ["run-001", "run-002"]
