"""Score edits (FORMAT.md, "Score edits"): a results file's `score_edits`, as certify checks and
binds it, a secret gate keeps it sealed, the verifier and the build check it in a certificate,
and the certificate page shows it. The Inspect importer's side is in
tests/integration/importers/test_inspect_import.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import loads_strict, verify_site
from tests.support.files import refused
from tests.support.forgery import certify_by_hand, register_by_hand
from tests.support.runs import certify as certify_doc
from tests.support.runs import named, register, results, run_spec, scored

EDIT = {
    "scorer": "judge",
    "from": 2,
    "to": 3,
    "by": "reviewer@example.org",
    "at": "2026-03-01T12:00:00Z",
    "reason": "The paraphrase is one the rubric accepts.",
}
SECRET = [f"b-{i:04d}" for i in range(1, 11)]  # a secret gate's least


def test_a_secret_gate_seals_the_edits_in_the_details_and_shows_them_once_revealed(
    make_program: Callable[..., Paths],
) -> None:
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET))
    rows = [scored(i) for i in SECRET]
    rows[1]["score_edits"] = [EDIT]
    c = certify_doc(paths, results("run-s", rows))
    cert = loads_strict(paths.certificate_file(c.serial).read_bytes())
    # The sealed result shows no edit: its values and reason may speak of the item.
    assert [sorted(r) for r in cert["results"]] == [["details", "item", "status"]] * 10
    details = loads_strict(paths.details_file(c.serial, "b-0002", private=True).read_bytes())
    assert details["result"]["score_edits"] == [EDIT]
    out = paths.data.parent / "public"
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    page = (out / "certificates" / c.serial / "index.html").read_text(encoding="utf-8")
    assert "Scores edited by hand" not in page  # sealed until its item is revealed
    retire_item(paths, "b-0002", "Retired to show its result.", "2026-03-05T00:00:00Z")
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    page = (out / "certificates" / c.serial / "index.html").read_text(encoding="utf-8")
    assert (
        'Item <a href="#result-b-0002">b-0002</a>: Score <code>judge</code> edited by <bdi>reviewer@example.org</bdi>'
        in page
    )
    assert '<time datetime="2026-03-01T12:00:00Z">2026-03-01T12:00:00Z</time>: <bdi>The paraphrase' in page
    assert "published with its details document" in page


@pytest.mark.parametrize(
    ("edits", "where", "message"),
    [
        ([], "results[0] (a-001).score_edits", "score edits are a non-empty list"),
        ([{**EDIT, "reason": "  "}], "results[0] (a-001).score_edits[0].reason", "reason is why the score was edited"),
        ([{k: v for k, v in EDIT.items() if k != "by"}], "results[0] (a-001).score_edits[0]", "missing 'by'"),
        ([{**EDIT, "at": "yesterday"}], "results[0] (a-001).score_edits[0].at", "malformed time"),
        ([{**EDIT, "to": None}], "results[0] (a-001).score_edits[0].to", "an edit gives the score a value"),
        ([{**EDIT, "from": 0.5}], "results[0] (a-001).score_edits[0].from", "not an integer within"),
        ([{**EDIT, "scorer": "sim"}, EDIT], "results[0] (a-001).score_edits", "score edits are sorted by scorer"),
        ([{**EDIT, "extra": 1}], "results[0] (a-001).score_edits[0]", "unknown member 'extra'"),
    ],
)
def test_certify_refuses_malformed_score_edits_naming_where(
    make_program: Callable[..., Paths], edits: list[dict[str, Any]], where: str, message: str
) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-1", "a", ["a-001", "a-002"]))
    row = {**scored("a-001"), "score_edits": edits}
    err = refused(lambda: certify_doc(paths, results("run-1", [row, scored("a-002")])), paths.data, paths.private)
    named(err, message, where)


def test_an_excluded_or_not_run_result_may_carry_edits(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=2, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-1", "a", ["a-001", "a-002"]))
    row = {"item": "a-002", "status": "not_run", "note": "Stopped.", "score_edits": [EDIT]}
    c = certify_doc(paths, results("run-1", [scored("a-001"), row]))
    cert = json.loads(paths.certificate_file(c.serial).read_text(encoding="utf-8"))
    assert cert["results"][1]["score_edits"] == [EDIT]


@pytest.mark.parametrize(
    ("edits", "where", "message"),
    [
        ([{**EDIT, "by": ""}], "results[0].score_edits[0].by", "by is who edited the score"),
        ({"scorer": "judge"}, "results[0].score_edits", "score edits are a non-empty list"),
        ([EDIT] * 101, "results[0].score_edits", "too many score edits"),
    ],
)
def test_the_build_refuses_a_certificate_with_malformed_score_edits(
    make_program: Callable[..., Paths], edits: Any, where: str, message: str
) -> None:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"])
    register_by_hand(paths, spec)
    rows = [{"item": i, "status": "not_run", "note": "Not attempted."} for i in spec["items"]]
    rows[0]["score_edits"] = edits
    certify_by_hand(paths, spec, "cert-001", results=rows)
    with pytest.raises(InputError) as e:
        build(paths, paths.data.parent / "public")
    assert any(
        message in p.message and p.where == where and p.file.endswith("cert-001.json") for p in e.value.problems
    ), e.value.describe()
