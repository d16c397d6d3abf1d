"""Raw evidence bound by hash: the files an evaluation produced, listed by the results file,
bound by the certificate, kept privately and published by the rule of details documents.

`certify` refuses a file that is not the one listed; a public gate publishes it at once; a secret
gate keeps it out of the site until every item it concerns is revealed, and then publishes it;
an evidence file changed on the site, with SHA256SUMS re-signed by the program's own key, fails
verification naming the file; a due file left out fails too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from generator.verifier import loads_strict, verify_site
from tests.support.files import refused
from tests.support.runs import LOG, certify, listed, named, register, results, run_spec, scored
from tests.support.schemas import validator
from tests.support.tamper import resign_sums

ITEMS = ["a-001", "a-002"]
SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]
TRAJECTORY = b'{"sample":"a-001","steps":["read","extract","answer"]}\n'


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ITEMS))
    return paths


def with_evidence(run: str, rows: list[dict[str, Any]], *entries: dict[str, Any]) -> dict[str, Any]:
    return {**results(run, rows), "evidence": list(entries)}


def test_a_public_gate_publishes_its_evidence_at_once(prog: Paths, tmp_path: Path) -> None:
    base = prog.data.parent
    doc = with_evidence(
        "run-001",
        [scored("a-001"), scored("a-002")],
        listed(base, "trajectory-a-001.jsonl", TRAJECTORY, ["a-001"]),
        listed(base, "run.eval", LOG, ITEMS),
    )
    certify(prog, doc)
    cert = loads_strict((prog.certificates_dir / "run-001.json").read_bytes())
    # In name order, without the evaluator's path: the site's path is fixed by the name.
    assert [e["name"] for e in cert["evidence"]] == ["run.eval", "trajectory-a-001.jsonl"]
    assert cert["evidence"][0] == {
        "name": "run.eval",
        "sha256": hashlib.sha256(LOG).hexdigest(),
        "size": len(LOG),
        "items": ITEMS,
    }
    assert not [e.message for e in validator("certificate").iter_errors(cert)]
    out = tmp_path / "site"
    build(prog, out)
    assert (out / "certificates" / "run-001" / "evidence" / "run.eval").read_bytes() == LOG
    report = verify_site(out)
    assert report.ok, report.render()
    page = BeautifulSoup((out / "certificates" / "run-001" / "index.html").read_bytes(), "html.parser")
    links = [a["href"] for a in page.select("#evidence table.evidence a")]
    assert links == [f"../../certificates/run-001/evidence/{n}" for n in ("run.eval", "trajectory-a-001.jsonl")]


@pytest.mark.parametrize(
    ("over", "message", "where"),
    [
        ({"sha256": "0" * 64}, "evidence file differs from what the results file lists", "evidence[0]"),
        ({"size": 3}, "evidence file differs from what the results file lists", "evidence[0]"),
        ({"name": "../run.eval"}, "an evidence file's name is one safe path segment", "evidence[0].name"),
        ({"name": "run.py"}, "an evidence file's name is one safe path segment", "evidence[0].name"),
        ({"name": ".hidden"}, "an evidence file's name is one safe path segment", "evidence[0].name"),
        ({"items": ["a-003"]}, "an evidence file names the run's items it concerns", "evidence[0].items"),
        ({"items": []}, "an evidence file names the run's items it concerns", "evidence[0].items"),
        ({"path": "evidence/none.eval"}, "evidence file cannot be read", "evidence[0].path"),
    ],
)
def test_certify_refuses_evidence_that_is_not_what_it_says(
    prog: Paths, over: dict[str, Any], message: str, where: str
) -> None:
    entry = {**listed(prog.data.parent, "run.eval", LOG, ITEMS), **over}
    doc = with_evidence("run-001", [scored("a-001"), scored("a-002")], entry)
    err = refused(lambda: certify(prog, doc), prog.data, prog.private)
    named(err, message, where)


def test_a_link_is_not_the_evaluator_s_file(prog: Paths, tmp_path: Path) -> None:
    entry = listed(prog.data.parent, "real.eval", LOG, ITEMS)
    (prog.data.parent / "in" / "evidence" / "run.eval").symlink_to("real.eval")
    entry.update(name="run.eval", path="evidence/run.eval")
    doc = with_evidence("run-001", [scored("a-001"), scored("a-002")], entry)
    named(refused(lambda: certify(prog, doc), prog.data, prog.private), "evidence file cannot be read")


def test_a_changed_evidence_file_fails_verification_naming_it(prog: Paths, tmp_path: Path) -> None:
    doc = with_evidence("run-001", [scored("a-001"), scored("a-002")], listed(prog.data.parent, "run.eval", LOG, ITEMS))
    certify(prog, doc)
    out = tmp_path / "site"
    build(prog, out)
    rel = "certificates/run-001/evidence/run.eval"
    (out / rel).write_bytes(LOG.replace(b"answered", b"refused "))
    resign_sums(out, load_key(prog.key_file))  # the operator holds the key
    report = verify_site(out)
    hits = [f for f in report.failures if f.file == rel]
    assert [f.message for f in hits] == ["evidence file does not hash to the SHA-256 the certificate lists"], (
        report.render()
    )
    assert hits[0].expected == hashlib.sha256(LOG).hexdigest()
    # Removed instead, it is due and missing.
    (out / rel).unlink()
    resign_sums(out, load_key(prog.key_file))
    report = verify_site(out)
    assert [f.message for f in report.failures if f.file == rel] == [
        "evidence of certificate run-001: the file is missing"
    ], report.render()


def test_a_secret_gate_keeps_its_evidence_private_until_every_item_is_revealed(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    base = paths.data.parent
    doc = with_evidence(
        "run-s",
        [scored(i) for i in SECRET10],
        listed(base, "run.eval", LOG, SECRET10),
        listed(base, "b-0001.jsonl", TRAJECTORY, ["b-0001"]),
    )
    certify(paths, doc)
    assert (paths.private / "certificates" / "run-s" / "evidence" / "run.eval").read_bytes() == LOG
    assert not (paths.data / "certificates" / "run-s" / "evidence").exists()
    out = tmp_path / "site"
    build(paths, out)
    assert verify_site(out).ok
    leaked = [p for p in out.rglob("*") if p.is_file() and b"the secret answer" in p.read_bytes()]
    assert not leaked, leaked
    page = BeautifulSoup((out / "certificates" / "run-s" / "index.html").read_bytes(), "html.parser")
    assert not page.select("#evidence a")
    # One item revealed: its own trajectory falls due, the whole log does not.
    retire_items(paths, ["b-0001"], "Retired after use.", "2026-03-10T00:00:00Z")
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    assert (out / "certificates" / "run-s" / "evidence" / "b-0001.jsonl").read_bytes() == TRAJECTORY
    assert not (out / "certificates" / "run-s" / "evidence" / "run.eval").exists()
    # A hostile operator publishing the log early fails verification.
    early = out / "certificates" / "run-s" / "evidence" / "run.eval"
    early.write_bytes(LOG)
    resign_sums(out, load_key(paths.key_file))
    report = verify_site(out)
    assert [f.message for f in report.failures if f.file == "certificates/run-s/evidence/run.eval"] == [
        "certificate run-s: evidence file published before every item it concerns is revealed"
    ], report.render()
    # And the build refuses to publish a copy put in the data directory early.
    data_copy = paths.data / "certificates" / "run-s" / "evidence" / "run.eval"
    data_copy.write_bytes(LOG)
    with pytest.raises(Exception, match="not published"):
        build(paths, tmp_path / "other")
    data_copy.unlink()
    # Every item revealed: the log is published and verifies.
    retire_items(paths, SECRET10[1:], "Retired after use.", "2026-03-11T00:00:00Z")
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    assert (out / "certificates" / "run-s" / "evidence" / "run.eval").read_bytes() == LOG
