"""Attempts and lineage: every retry and exclusion of an item is on record with its result.

`certify` refuses a chain that breaks the rules (a gap, an attempt after the final one, a retry
of an attempt that was scored, an exclusion with no rule), naming the result; a certificate
forged to carry such a chain, re-signed with the program's key, fails verification at the same
place; a secret gate's certificate shows each attempt's number, status and time, never its note.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import lineage_problems, loads_strict, verify_site
from generator.verifier.rules.certificate_documents import check_details_document
from tests.support.files import refused
from tests.support.forgery import forge, forked_build
from tests.support.runs import certify, named, register, results, run_spec, scored
from tests.support.schemas import validator

ITEMS = ["a-001", "a-002"]
SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]
T1, T2, T3 = "2026-03-01T01:00:00Z", "2026-03-01T02:00:00Z", "2026-03-01T03:00:00Z"
RULE = "The item's message is not in a supported language."
ERROR_NOTE = "worker 7 lost its connection to the subject's endpoint"


def retried(row: dict[str, Any], *earlier: dict[str, Any], at: str = T3) -> dict[str, Any]:
    """`row` as the attempt after `earlier`, each a retry of the one before."""
    n = len(earlier)
    out = {**row, "attempts": list(earlier), "at": at}
    if row["status"] == "excluded":
        out["excludes"] = n
    else:
        out.update(attempt=n + 1, retry_of=n)
    return out


def attempt(n: int, status: str = "infra_error", at: str = T1, **more: Any) -> dict[str, Any]:
    return {"attempt": n, "retry_of": None if n == 1 else n - 1, "status": status, "at": at, **more}


def chain() -> dict[str, Any]:
    """a-001 failed twice on the infrastructure, then was scored on its third attempt."""
    return retried(
        scored("a-001"),
        attempt(1, note=ERROR_NOTE, native={"error": "ConnectionResetError"}),
        attempt(2, at=T2, note="timed out after 600 s"),
    )


def excluded_after_scoring() -> dict[str, Any]:
    row = {"item": "a-002", "status": "excluded", "rule": 0, "note": "pasted web content found after the run"}
    return retried(row, attempt(1, "scored", native={"score": "0.40"}), at=T2)


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ITEMS))
    return paths


def certificate(paths: Paths, serial: str = "run-001") -> dict[str, Any]:
    doc: dict[str, Any] = loads_strict((paths.certificates_dir / f"{serial}.json").read_bytes())
    return doc


def test_a_retried_and_an_excluded_item_are_on_record_and_verify(prog: Paths, tmp_path: Path) -> None:
    certify(prog, results("run-001", [chain(), excluded_after_scoring()]))
    cert = certificate(prog)
    first, second = cert["results"]
    assert first["attempts"] == chain()["attempts"]
    assert (first["attempt"], first["retry_of"], first["at"], first["status"]) == (3, 2, T3, "scored")
    assert second["attempts"] == excluded_after_scoring()["attempts"]
    assert (second["excludes"], second["rule"], second["at"]) == (1, 0, T2)
    # An exclusion is not a failure and a retried error is not counted: one scored, one excluded.
    assert (cert["summary"]["scored"], cert["summary"]["excluded"], cert["summary"]["infra_error"]) == (1, 1, 0)
    assert not [e.message for e in validator("certificate").iter_errors(cert)]
    build(prog, tmp_path / "site")
    report = verify_site(tmp_path / "site")
    assert report.ok, report.render()
    page = BeautifulSoup((tmp_path / "site" / "certificates" / "run-001" / "index.html").read_bytes(), "html.parser")
    tables = page.select("#attempts table.attempts")
    rows = [[td.get_text(" ", strip=True) for td in tr.find_all(["th", "td"])] for tr in tables[0].select("tbody tr")]
    assert [r[:3] for r in rows] == [
        ["attempt 1", "first attempt", "infrastructure error ( infra_error )"],
        ["attempt 2", "retry of attempt 1", "infrastructure error ( infra_error )"],
        ["attempt 3 (final)", "retry of attempt 2", "scored ( scored )"],
    ]
    assert (rows[0][4], rows[0][5]) == (ERROR_NOTE, '{"error": "ConnectionResetError"}')
    excluded = [
        [td.get_text(" ", strip=True) for td in tr.find_all(["th", "td"])] for tr in tables[1].select("tbody tr")
    ]
    assert excluded[-1][:2] == ["exclusion (final)", "sets attempt 1 aside under rule 0: " + RULE]


def _with(row: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    row = copy.deepcopy(row)
    edit(row)
    return row


def _gap(r: dict[str, Any]) -> None:
    r["attempts"][1]["attempt"] = 3


def _branch(r: dict[str, Any]) -> None:
    r["attempts"][1]["retry_of"] = None


def _after_final(r: dict[str, Any]) -> None:
    r["attempts"][1]["at"] = "2026-03-01T04:00:00Z"


def _final_after_finish(r: dict[str, Any]) -> None:
    r["at"] = "2026-03-01T12:00:01Z"


def _before_run(r: dict[str, Any]) -> None:
    r["attempts"][0]["at"] = "2026-02-28T23:59:59Z"


def _retry_of_scored(r: dict[str, Any]) -> None:
    r["attempts"][0]["status"] = "scored"


def _final_number(r: dict[str, Any]) -> None:
    r["attempt"] = 4


def _stray(r: dict[str, Any]) -> None:
    del r["attempts"]


CHAIN_BREAKS = [
    (_gap, "attempts are numbered 1, 2, … in order, with no gap", "attempts[1].attempt"),
    (_branch, "every later one repeats the attempt just before it", "attempts[1].retry_of"),
    (_after_final, "an attempt made before the one it follows", "at"),
    (_final_after_finish, "an attempt after the run finished", "at"),
    (_before_run, "an attempt before the run was registered", "attempts[0].at"),
    (_retry_of_scored, "an attempt that came to scored was tried again", "attempts[0].status"),
    (_final_number, "the final result is the attempt after the last earlier one", "attempt"),
    (_stray, "belong(s) to a result with earlier attempts", ""),
]


@pytest.mark.parametrize(("edit", "message", "where"), CHAIN_BREAKS, ids=lambda v: getattr(v, "__name__", None))
def test_certify_refuses_a_broken_chain(prog: Paths, edit: Any, message: str, where: str) -> None:
    rows = [_with(chain(), edit), scored("a-002")]
    err = refused(lambda: certify(prog, results("run-001", rows)), prog.data, prog.private)
    named(err, message, f"results[0] (a-001).{where}" if where else "results[0] (a-001)")


def test_certify_refuses_an_exclusion_naming_no_rule(prog: Paths) -> None:
    row = _with(excluded_after_scoring(), lambda r: r.pop("rule"))
    err = refused(lambda: certify(prog, results("run-001", [scored("a-001"), row])), prog.data, prog.private)
    named(err, "an excluded result names the index of one of the run spec's exclusion rules", "results[1] (a-002).rule")


def test_certify_refuses_an_exclusion_of_another_attempt(prog: Paths) -> None:
    row = _with(excluded_after_scoring(), lambda r: r.update(excludes=2))
    err = refused(lambda: certify(prog, results("run-001", [scored("a-001"), row])), prog.data, prog.private)
    named(err, "an exclusion after attempts excludes the last of them", "results[1] (a-002).excludes")


def test_certify_refuses_a_native_result_with_a_float(prog: Paths) -> None:
    row = _with(chain(), lambda r: r["attempts"][0].update(native={"score": 0.5}))
    with pytest.raises(InputError) as info:
        certify(prog, results("run-001", [row, scored("a-002")]))
    named(info.value, "a native result holds a number", "results[0] (a-001).attempts[0].native.score")


def test_the_retry_limit_counts_every_attempt() -> None:
    row = chain()
    assert not lineage_problems(row, "r", sealed=False, max_attempts=3)
    (p,) = lineage_problems(row, "r", sealed=False, max_attempts=2)
    assert (p.message, p.expected, p.found) == (
        "3 attempts, more than the methodology's retry limit allows",
        "at most 2 attempts",
        "3",
    )
    # An exclusion is not an attempt: one scored attempt set aside is one attempt.
    assert not lineage_problems(excluded_after_scoring(), "r", sealed=False, max_attempts=1)


def test_a_sealed_result_keeps_notes_out_of_its_lineage() -> None:
    row = chain()
    problems = lineage_problems(row, "r", sealed=True)
    assert [(p.message, p.where) for p in problems] == [
        ("unknown members 'native', 'note'", "r.attempts[0]"),
        ("unknown member 'note'", "r.attempts[1]"),
    ]


@pytest.mark.parametrize(("edit", "message", "where"), CHAIN_BREAKS[:-1], ids=lambda v: getattr(v, "__name__", None))
def test_a_forged_chain_fails_verification(
    prog: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Any, message: str, where: str
) -> None:
    """The operator re-signs a certificate whose chain it edited: the verifier recomputes the rules."""
    certify(prog, results("run-001", [chain(), scored("a-002")]))
    forge(prog, "run-001", lambda c: edit(c["results"][0]))
    report = forked_build(prog, tmp_path / "site", monkeypatch)
    hits = [f for f in report.failures if message in f.message]
    assert hits, report.render()
    assert hits[0].where == f"results[0].{where}"


def test_a_secret_gate_shows_the_chain_and_seals_the_notes(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    first = retried(scored("b-0001"), attempt(1, note=ERROR_NOTE))
    certify(paths, results("run-s", [first, *(scored(i) for i in SECRET10[1:])]))
    sealed = certificate(paths, "run-s")["results"][0]
    assert sealed["attempts"] == [{"attempt": 1, "retry_of": None, "status": "infra_error", "at": T1}]
    assert (sealed["attempt"], sealed["retry_of"], sealed["at"]) == (2, 1, T3)
    out = tmp_path / "site"
    build(paths, out)
    assert verify_site(out).ok
    leaked = [p for p in out.rglob("*") if p.is_file() and ERROR_NOTE.encode() in p.read_bytes()]
    assert not leaked, leaked
    # Once the item is retired its details document is published, and the note with it.
    retire_items(paths, SECRET10, "Retired after use.", "2026-03-10T00:00:00Z")
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    details = loads_strict((out / "certificates" / "run-s" / "details" / "b-0001.json").read_bytes())
    assert details["result"]["attempts"][0]["note"] == ERROR_NOTE
    assert not [e.message for e in validator("certificate").iter_errors(certificate(paths, "run-s"))]
    assert not [e.message for e in validator("result-details").iter_errors(details)]
    # The opened result must tell the chain the sealed one shows.
    details["result"]["attempts"][0]["status"] = "not_run"
    (p,) = check_details_document(details, "run-s", sealed)
    assert p.message == "the attempts differ from the sealed result's"


def test_an_attempt_names_the_evidence_files_it_produced(
    prog: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An attempt may name the evidence files that hold it; a name the evidence list lacks is
    refused by certify and, forged into a re-signed certificate, failed by the verifier. A sealed
    result keeps the names: the certificate lists every evidence file in any case."""
    from tests.support.runs import LOG, listed

    entry = listed(prog.data.parent, "run.eval", LOG, ITEMS)
    row = retried(scored("a-001"), attempt(1, evidence=["run.eval"]))
    bad = retried(scored("a-001"), attempt(1, evidence=["other.eval"]))
    err = refused(lambda: certify(prog, {**results("run-001", [bad, scored("a-002")]), "evidence": [entry]}), prog.data)
    named(err, "names an evidence file the certificate does not list", "results[0] (a-001).attempts[0].evidence")
    for wrong in ([], "run.eval", ["run.eval", "run.eval"]):
        row_w = retried(scored("a-001"), attempt(1, evidence=wrong))
        err = refused(
            lambda r=row_w: certify(prog, {**results("run-001", [r, scored("a-002")]), "evidence": [entry]}), prog.data
        )
        assert any(p.where == "results[0] (a-001).attempts[0].evidence" for p in err.problems), err.describe()
    certify(prog, {**results("run-001", [row, scored("a-002")]), "evidence": [entry]})
    assert certificate(prog)["results"][0]["attempts"][0]["evidence"] == ["run.eval"]
    assert lineage_problems(row, "r", sealed=True, evidence_names={"run.eval"}) == []
    forge(prog, "run-001", lambda c: c["results"][0]["attempts"][0].update(evidence=["forged.eval"]))
    report = forked_build(prog, tmp_path / "site", monkeypatch)
    hits = [f for f in report.failures if "does not list" in f.message]
    assert [h.where for h in hits] == ["results[0].attempts[0].evidence"], report.render()


def test_a_revealed_attempt_naming_its_evidence_verifies(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    """On a secret gate the sealed attempt keeps its evidence names, and so does the details
    document published on retirement, which the verifier checks against the certificate's list."""
    from tests.support.runs import LOG, listed

    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    entry = listed(paths.data.parent, "run.eval", LOG, SECRET10)
    first = retried(scored("b-0001"), attempt(1, note=ERROR_NOTE, evidence=["run.eval"]))
    certify(paths, {**results("run-s", [first, *(scored(i) for i in SECRET10[1:])]), "evidence": [entry]})
    sealed = certificate(paths, "run-s")["results"][0]
    assert sealed["attempts"][0]["evidence"] == ["run.eval"] and "note" not in sealed["attempts"][0]
    retire_items(paths, SECRET10, "Retired after use.", "2026-03-10T00:00:00Z")
    out = tmp_path / "site"
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    details = loads_strict((out / "certificates" / "run-s" / "details" / "b-0001.json").read_bytes())
    assert details["result"]["attempts"][0]["evidence"] == ["run.eval"]
