"""check.js on format v2 results (FORMAT.md, "In-browser verification"): attempts and lineage,
the certificate's evidence list and the judge's labels, ported from generator/verifier/rules/lineage.py,
evidence.py and labelsets.py. On the demo's quill-a-3 (a retried attempt that names the run's
Inspect log, an exclusion after a scored attempt, judge labels on every scored result) the page
check passes; on copies forged and re-signed with the demo keys, check.js fails the verdict with
the problems verify.py reports, word for word.

Node or Chromium missing skips these tests, saying why; with CI set they fail instead.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.core import layout
from generator.verifier import parse_methodology, verify_site
from generator.verifier.rules.certificates import check_certificate
from tests.support.browser import browsing
from tests.support.check_js import failed_step, forged_demo, harness_page, js, press_verify, steps_of
from tests.support.demo import BuiltSite
from tests.support.forgery import setter

SERIAL = "quill-a-3"
REL = layout.certificate(SERIAL)
RETRIED = 3  # results[3], a-004: an infrastructure error, then scored
EXCLUDED = 5  # results[5], a-006: scored, then excluded under rule 0
FINISHED = "2026-11-28T10:09:00Z"


def js_words(p: Any) -> str:
    """A Python Problem in the words check.js gives a problem in (describeProblems)."""
    text = f"{p.where}: {p.message}" if p.where else p.message
    if p.expected is not None:
        return text + f" (expected {p.expected}" + (f", found {p.found})" if p.found is not None else ")")
    return text + (f" (found {p.found})" if p.found is not None else "")


def python_and_js(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, value: Any) -> tuple[list[Any], str]:
    """quill-a-3 with `where` set to `value`, re-signed: verify.py's problems of the certificate
    file, and the detail of the step at which check.js fails it."""
    out = forged_demo(tmp_path, SERIAL, where, value, monkeypatch)
    python = [f for f in verify_site(out).failures if f.file == REL]
    assert python, f"verify.py passes {where} = {value!r}"
    outcome = js("page", site=str(out), kind="certificate", path=REL)
    # authentic: hash to witnesses
    assert len(outcome["steps"]) >= 7 and {s["status"] for s in outcome["steps"][:-1]} == {"passed"}, outcome
    step = failed_step(outcome)
    assert step["name"] == "Recomputing the verdict"
    return python, step["detail"]


def same_words(python: list[Any], detail: str) -> None:
    more = f"; and {len(python) - 3} more" if len(python) > 3 else ""
    assert detail == "; ".join(js_words(p) for p in python[:3]) + more


@pytest.mark.parametrize(
    ("where", "value", "first"),
    [
        pytest.param(
            f"results.{RETRIED}.attempts.0.attempt",
            2,
            f"results[{RETRIED}].attempts[0].attempt: attempts are numbered 1, 2, … in order, with no gap "
            "(expected 1, found 2)",
            id="gap-in-attempt-numbers",
        ),
        pytest.param(
            f"results.{RETRIED}.attempts.0.status",
            "scored",
            f"results[{RETRIED}].attempts[0].status: an attempt that came to scored was tried again: only an "
            "infrastructure error or an item that did not run may be retried (expected infra_error | not_run, "
            'found "scored")',
            id="retry-of-a-scored-attempt",
        ),
        pytest.param(
            f"results.{RETRIED}.attempts.0.at",
            "2026-11-28T10:10:00Z",
            f"results[{RETRIED}].attempts[0].at: an attempt after the run finished (expected ≤ {FINISHED}, "
            "found 2026-11-28T10:10:00Z)",
            id="attempt-after-finished-at",
        ),
        pytest.param(
            f"results.{EXCLUDED}.attempts.0.evidence",
            ["other.eval"],
            f"results[{EXCLUDED}].attempts[0].evidence: names an evidence file the certificate does not list "
            '(expected names of the evidence list, found ["other.eval"])',
            id="unknown-evidence-name",
        ),
        pytest.param(
            "results.0.judge_labels",
            {},
            "results[0].judge_labels: the judge's labels are an object of rubric dimension -> integer label (found {})",
            id="judge-labels-empty",
        ),
        pytest.param(
            "results.0.judge_labels",
            {"Correctness": 4, "completeness": 4, "correctness": 4},
            "results[0].judge_labels: a rubric dimension is an id "
            '(expected ^[a-z0-9][a-z0-9_-]{0,63}$, found "Correctness")',
            id="judge-label-dimension-not-an-id",
        ),
        pytest.param(
            "evidence.0.items",
            ["a-001", "a-001", "a-002"],
            "evidence[0].items: an evidence file names the run's items it concerns, each once (expected a non-empty "
            'list of the run spec\'s item ids, found ["a-001", "a-001", "a-002"])',
            id="malformed-evidence-entry",
        ),
    ],
)
def test_a_forged_v2_result_fails_as_python_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, value: Any, first: str
) -> None:
    python, detail = python_and_js(tmp_path, monkeypatch, where, value)
    assert js_words(python[0]) == first
    same_words(python, detail)


def test_an_attempt_after_finished_at_is_also_out_of_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moved after the run finished, the earlier attempt also follows the final one: both problems,
    in verify.py's order."""
    python, detail = python_and_js(tmp_path, monkeypatch, f"results.{RETRIED}.attempts.0.at", "2026-11-28T10:10:00Z")
    assert [p.message for p in python] == [
        "an attempt after the run finished",
        f"an attempt made before the one it follows (results[{RETRIED}].attempts[0].at)",
    ]
    same_words(python, detail)


def test_the_demo_v2_certificate_passes_as_an_incomplete_run(demo_site: BuiltSite) -> None:
    cert = json.loads((demo_site.out / REL).read_bytes())
    # What this certificate exercises: attempts (one naming the evidence file), an exclusion, judge labels.
    assert cert["verdict"] == "incomplete" and [e["name"] for e in cert["evidence"]] == ["quill-a-3.eval"]
    assert cert["results"][RETRIED]["attempts"][0]["evidence"] == ["quill-a-3.eval"]
    assert cert["results"][EXCLUDED]["status"] == "excluded" and "judge_labels" in cert["results"][0]
    assert not [f for f in verify_site(demo_site.out).failures if f.file == REL]
    for outcome in (
        js("page", site=str(demo_site.out), kind="certificate", path=REL),
        js("file", site=str(demo_site.out), file=str(demo_site.out / REL)),
    ):
        assert outcome["status"] == "not-certified", outcome
        assert outcome["text"].startswith(
            f"Authentic: this result was not decided (incomplete): result {SERIAL} is entry "
        ), outcome["text"]
        assert steps_of(outcome)["Recomputing the verdict"]["status"] == "passed"
        assert {s["status"] for s in outcome["steps"]} <= {"passed", "skipped"}


@pytest.fixture(scope="module")
def served(demo_site: BuiltSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    folder = tmp_path_factory.mktemp("browser-v2") / "site"
    shutil.copytree(demo_site.out, folder)  # harness_page may add a page: never to the shared demo
    page = harness_page(folder, "certificate", REL)
    with browsing(folder) as b:
        yield b, page


def test_verify_in_this_browser_on_the_demo_v2_certificate(served: tuple[Any, str]) -> None:
    b, page = served
    text, steps = press_verify(b, page)
    assert text.startswith(f"Authentic: this result was not decided (incomplete): result {SERIAL} is entry "), text
    assert {s["status"] for s in steps} <= {"passed", "skipped"}, steps


def _mutated(cert: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(cert)
    setter(where, value)(out)
    return out


def test_check_certificate_agrees_with_python_on_v2_members(demo_site: BuiltSite) -> None:
    """Rules a build would refuse to forge, and the methodology's retry limit, compared on
    check_certificate itself (the run's registration is unknown to both here: run_at None)."""
    out = demo_site.out
    cert = json.loads((out / REL).read_bytes())
    spec_path = cert["run_spec"]["path"]
    spec = json.loads((out / spec_path).read_bytes())
    doc = json.loads((out / f"methodology/{cert['methodology']['version']}.json").read_bytes())
    limited = {**doc, "certify": {**doc["certify"], "max_attempts": 1}}
    a = f"results.{RETRIED}"
    cases: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
        (cert, doc, True),
        (cert, limited, True),  # a-004 was tried twice
        (_mutated(cert, "results.0.judge_labels.correctness", True), doc, True),  # is_int excludes booleans
        (_mutated(cert, "results.0.at", FINISHED), doc, True),  # lineage members without attempts
        (_mutated(cert, f"{a}.attempts.0.retry_of", 0), doc, True),
        (_mutated(cert, f"{a}.attempts.0.status", "excluded"), doc, True),
        (_mutated(cert, f"{a}.attempts.0.evidence", ["z.eval", "quill-a-3.eval"]), doc, True),
        (_mutated(cert, f"{a}.attempts", []), doc, True),
        (_mutated(cert, f"{a}.retry_of", True), doc, True),
        (_mutated(cert, f"results.{EXCLUDED}.excludes", 2), doc, True),
        (_mutated(cert, "evidence.0.name", "log.py"), doc, True),
        (_mutated(cert, "evidence", []), doc, True),
        (_mutated(cert, "results.0.judge_labels", {f"d{n:03d}": 1 for n in range(65)}), doc, True),
        (cert, doc, False),  # as if sealed: the attempts' notes and native results are not a sealed result's
    ]
    for c, methodology, public in cases:
        python = check_certificate(c, spec, parse_methodology(methodology), public, spec_path, c["run_spec"]["sha256"])
        got = js(
            "check_certificate",
            cert=c,
            spec=spec,
            methodology=methodology,
            public=public,
            spec_path=spec_path,
            spec_sha256=c["run_spec"]["sha256"],
        )
        want = [{"message": p.message, "where": p.where, "expected": p.expected, "found": p.found} for p in python]
        assert [{k: v for k, v in p.items() if v is not None} for p in want] == got
        # The genuine certificate passes; every other case breaks a rule.
        assert bool(python) == (c is not cert or methodology is not doc or not public), python
