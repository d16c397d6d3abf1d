"""Judge pinning: a run spec may fix, before the run, the rubric's own text (bound by the hash it
already carried), the score direction, the route to the judge and what of the transcript it
reads. All four or none; the rubric must hash to `rubric_sha256`; the independence rule stays.
The certificate page shows the rubric as text, never as markup."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from generator.commands.build import build
from generator.program.datadir import Paths
from generator.verifier import check_run_spec, verify_site
from tests.support.files import refused
from tests.support.runs import certify, named, register, results, run_spec, scored
from tests.support.schemas import validator

ITEMS = ["a-001", "a-002"]
RUBRIC = (
    "Score 1 to 5 how faithfully the summary states the customer's complaint.\n"
    "5: every fact, nothing added. 1: the complaint is lost. <b>Never</b> reward length.\n"
)


def pinned_judge(**over: Any) -> dict[str, Any]:
    judge = {
        "provider": "Independent Grading Co",
        "model": "grader-large",
        "version": "3",
        "rubric_sha256": hashlib.sha256(RUBRIC.encode()).hexdigest(),
        "seed": 7,
        "rubric": RUBRIC,
        "score_direction": "higher_is_better",
        "route": "Independent Grading Co API, eu-west-1, POST /v2/grade",
        "transcript_scope": "the final answer only, without the subject's reasoning",
    }
    judge.update(over)
    return {k: v for k, v in judge.items() if v is not None}


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    return make_program(public_items=3, secret_items=0, retired=0)


def test_a_pinned_judge_is_registered_shown_and_verified(prog: Paths, tmp_path: Path) -> None:
    spec = run_spec(prog, "run-001", "a", ITEMS, judge=pinned_judge())
    assert not [e.message for e in validator("run-spec").iter_errors(spec)]
    register(prog, spec)
    certify(prog, results("run-001", [scored("a-001"), scored("a-002")]))
    out = tmp_path / "site"
    build(prog, out)
    report = verify_site(out)
    assert report.ok, report.render()
    page = BeautifulSoup((out / "certificates" / "run-001" / "index.html").read_bytes(), "html.parser")
    (pre,) = page.select("#grader pre.rubric")
    assert pre.get_text() == RUBRIC
    assert not pre.find("b"), "the rubric is text, not markup"
    assert page.select_one(".judge-route").get_text() == pinned_judge()["route"]


@pytest.mark.parametrize(
    ("judge", "message", "where"),
    [
        (pinned_judge(route=None), "a pinned judge gives rubric, score_direction, route, transcript_scope", "judge"),
        (
            pinned_judge(rubric=RUBRIC + " "),
            "rubric_sha256 is not the SHA-256 of the rubric's text (UTF-8)",
            "judge.rubric_sha256",
        ),
        (pinned_judge(score_direction="up"), "unknown score direction", "judge.score_direction"),
        (pinned_judge(transcript_scope=" "), "must be a non-empty string", "judge.transcript_scope"),
        (pinned_judge(rubric=""), "the rubric's own text, non-empty", "judge.rubric"),
        (
            pinned_judge(provider="ACME AI"),
            "the judge must be independent of the subject's organization",
            "judge.provider",
        ),
    ],
)
def test_register_refuses_a_judge_pinned_badly(prog: Paths, judge: dict[str, Any], message: str, where: str) -> None:
    spec = run_spec(prog, "run-001", "a", ITEMS, judge=judge)
    err = refused(lambda: register(prog, spec), prog.data, prog.private)
    named(err, message, where)


def test_the_verifier_applies_the_same_rules() -> None:
    """check_run_spec is the verifier's: a site whose run spec was re-signed with a rubric that
    does not hash to its pin fails there, as register refuses it."""
    spec = {
        "type": "run-spec",
        "v": 1,
        "id": "run-001",
        "previous_run": None,
        "subject": {"id": "x", "name": "X", "version": "1", "organization": "Acme AI"},
        "gate": "a",
        "question": "Q?",
        "items": ITEMS,
        "budget": {},
        "repetitions": 1,
        "metrics": [],
        "exclusion_rules": [],
        "methodology": {"version": "2026.1", "sha256": "ab" * 32},
        "judge": pinned_judge(rubric="Score 1 to 5."),
    }
    assert [p.where for p in check_run_spec(spec)] == ["judge.rubric_sha256"]
    spec["judge"] = pinned_judge()
    assert check_run_spec(spec) == []
