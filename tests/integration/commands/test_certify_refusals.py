"""`certify` refuses results that break format v1 §1/§6, naming item and field, and writes nothing.

A certificate is computed from the results; any result it cannot score exactly as format v1 §5
says must stop it before a leaf, a certificate, a details document or a grader record exists.
The positive cases pin the proposal rules of §5: only a plain integer's JSON text counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from generator.commands.build import build
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import loads_strict, verify_site
from tests.support.files import refused
from tests.support.programs import item
from tests.support.runs import CERT_AT, RUN_AT, certify, named, register, results, run_spec, scored

ITEMS = ["a-001", "a-002"]
CRITICAL_TEXT = item("a-crit", "a", name={"kind": "text", "tier": "critical", "value": "Ada Lovelace"})


def certify_refused(paths: Paths, doc: dict[str, Any] | None = None, raw: str | None = None, **kw: Any) -> InputError:
    """Certify, require an InputError and unchanged data and private trees."""
    return refused(lambda: certify(paths, doc, raw=raw, **kw), paths.data, paths.private)


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    """Gate a with three revealed items and one critical text item; run-001 registered on two."""
    paths = make_program(public_items=3, secret_items=0, retired=0, extra_items=[CRITICAL_TEXT])
    register(paths, run_spec(paths, "run-001", "a", ITEMS))
    return paths


def ok_rows() -> list[dict[str, Any]]:
    return [scored("a-001"), scored("a-002")]


# ---------------------------------------------------------------------------------------------
# The run


def test_unregistered_run(prog: Paths) -> None:
    err = certify_refused(prog, results("run-zzz", ok_rows()))
    named(err, 'run "run-zzz" is not registered', "run")
    assert err.summary.startswith("cannot certify the run of ") and "these 1 runs" not in err.summary


def test_already_certified_run(prog: Paths) -> None:
    certify(prog, results("run-001", ok_rows()))
    err = certify_refused(prog, results("run-001", ok_rows()), at="2026-03-03T00:00:00Z", serial="second")
    named(err, "run run-001 is already certified (certificate run-001", "run")


@pytest.mark.parametrize(
    ("finished_at", "at"),
    [
        ("2026-02-28T23:59:59Z", CERT_AT),  # before the run was registered
        ("2026-03-02T00:00:01Z", CERT_AT),  # after the certificate's issue time
    ],
)
def test_finished_at_outside_the_run(prog: Paths, finished_at: str, at: str) -> None:
    err = certify_refused(prog, results("run-001", ok_rows(), finished_at=finished_at), at=at)
    named(err, "finished_at must lie between the run's registration and the certificate's issue time", "finished_at")
    p = next(p for p in err.problems if p.where == "finished_at")
    assert (p.expected, p.found) == (f"{RUN_AT} ≤ finished_at ≤ {at}", finished_at)


# ---------------------------------------------------------------------------------------------
# Which items


def test_missing_item(prog: Paths) -> None:
    named(
        certify_refused(prog, results("run-001", [scored("a-001")])),
        "no result for item(s) of the run spec: a-002",
        "results",
    )


def test_extra_item(prog: Paths) -> None:
    err = certify_refused(prog, results("run-001", [*ok_rows(), scored("a-003")]))
    named(err, 'results for item(s) not in the run spec: "a-003"', "results")


def test_item_twice(prog: Paths) -> None:
    err = certify_refused(prog, results("run-001", [scored("a-001"), scored("a-001"), scored("a-002")]))
    named(err, "results name item(s) more than once: a-001", "results")


# ---------------------------------------------------------------------------------------------
# Fields of a scored result

W0 = "results[0] (a-001)"


@pytest.mark.parametrize(
    ("fields", "message", "where"),
    [
        ({"tags": None}, "missing field(s) of the item's answer: tags", f"{W0}.fields"),
        (
            {"extra": {"name": "extra", "output": "x"}},
            'names a field the item\'s answer lacks: "extra"',
            f"{W0}.fields[3] (extra).name",
        ),
        ({"tags": {"name": "tags"}}, "missing 'output'", f"{W0}.fields[2] (tags)"),
        (
            {"summary": {"name": "summary", "output": "Summary of a-001"}},
            "a high text field needs the reported similarity",
            f"{W0}.fields[1] (summary).similarity",
        ),
        (
            {"account_number": {"name": "account_number", "output": "110-482-339201", "similarity": "0.93"}},
            "similarity is computed from its output",
            f"{W0}.fields[0] (account_number).similarity",
        ),
        (
            {"tags": {"name": "tags", "output": ["transfer"], "similarity": "1"}},
            "similarity is computed from its output",
            f"{W0}.fields[2] (tags).similarity",
        ),
        (
            {"summary": {"name": "summary", "output": 5, "similarity": "0.9"}},
            "wrong type of output for a text field",
            f"{W0}.fields[1] (summary).output",
        ),
        (
            {"tags": {"name": "tags", "output": "transfer"}},
            "wrong type of output for an array field",
            f"{W0}.fields[2] (tags).output",
        ),
        (
            {"account_number": {"name": "account_number", "output": {"a": 1}}},
            "wrong type of output for a scalar field",
            f"{W0}.fields[0] (account_number).output",
        ),
    ],
    ids=[
        "missing-field",
        "unknown-field",
        "no-output",
        "no-similarity",
        "similarity-on-exact",
        "similarity-on-array",
        "text-given-int",
        "array-given-string",
        "scalar-given-object",
    ],
)
def test_field_problem(prog: Paths, fields: dict[str, Any], message: str, where: str) -> None:
    named(certify_refused(prog, results("run-001", [scored("a-001", **fields), scored("a-002")])), message, where)


@pytest.mark.parametrize("sim", ["1.2", "-0.1", "0.93", "1.", ".5", "0,9"])
def test_malformed_similarity(prog: Paths, sim: str) -> None:
    """`sim` is the JSON text written: a number (0.93) is refused as well as a bad string."""
    raw = json.dumps(results("run-001", [scored("a-001", similarity="__SIM__"), scored("a-002")]))
    raw = raw.replace('"__SIM__"', sim if sim == "0.93" else json.dumps(sim))
    err = certify_refused(prog, raw=raw)
    named(err, "a similarity is a decimal string in [0, 1]", f"{W0}.fields[1] (summary).similarity")
    assert next(p for p in err.problems if "similarity" in p.message).found == json.dumps(sim)


def test_similarity_on_a_critical_text_field(prog: Paths) -> None:
    """Only non-critical text fields take a reported similarity; a critical one is exact."""
    register(
        prog,
        run_spec(
            prog,
            "run-c",
            "a",
            ["a-crit"],
            subject={"id": "other", "name": "Other", "version": "1", "organization": "B"},
        ),
        "2026-03-01T01:00:00Z",
    )
    rows = [
        {
            "item": "a-crit",
            "status": "scored",
            "fields": [{"name": "name", "output": "Ada Lovelace", "similarity": "1"}],
        }
    ]
    err = certify_refused(prog, results("run-c", rows))
    named(
        err,
        "a critical text field's similarity is computed from its output",
        "results[0] (a-crit).fields[0] (name).similarity",
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("1.5", "fields[0] (account_number).output"),
        ("1e3", "fields[0] (account_number).output"),
        (str(2**60), "fields[0] (account_number).output"),
        ('["transfer", 1.5]', "fields[2] (tags).output[1]"),
    ],
    ids=["fraction", "exponent", "huge", "inside-array"],
)
def test_output_with_a_number_spec_1_forbids(prog: Paths, text: str, where: str) -> None:
    field = "tags" if text.startswith("[") else "account_number"
    raw = json.dumps(
        results("run-001", [scored("a-001", **{field: {"name": field, "output": "__OUT__"}}), scored("a-002")])
    )
    err = certify_refused(prog, raw=raw.replace('"__OUT__"', text))
    named(err, "an output holds a number that is not an integer within ±(2^53−1)", f"{W0}.{where}")


# ---------------------------------------------------------------------------------------------
# Non-scored results, status, rationale


@pytest.mark.parametrize("rule", [1, -1, True, "0", None])
def test_excluded_rule_out_of_range(prog: Paths, rule: Any) -> None:
    row = {"item": "a-002", "status": "excluded", "rule": rule, "note": "Not supported."}
    err = certify_refused(prog, results("run-001", [scored("a-001"), row]))
    named(err, "an excluded result names the index of one of the run spec's exclusion rules", "results[1] (a-002).rule")


def test_non_scored_result_without_note(prog: Paths) -> None:
    err = certify_refused(prog, results("run-001", [scored("a-001"), {"item": "a-002", "status": "infra_error"}]))
    named(err, "missing 'note'", "results[1] (a-002)")


def test_unknown_status(prog: Paths) -> None:
    err = certify_refused(
        prog, results("run-001", [scored("a-001"), {"item": "a-002", "status": "skipped", "note": "x"}])
    )
    named(err, "unknown status", "results[1] (a-002).status")


def test_rationale_holding_a_float(prog: Paths) -> None:
    raw = json.dumps(
        results("run-001", ok_rows(), rationale=[{"text": "Fine.", "evidence_refs": ["a-001"], "confidence": "__F__"}])
    )
    err = certify_refused(prog, raw=raw.replace('"__F__"', "0.9"))
    named(err, "the rationale holds a number format v1 §1 does not allow", "grader.rationale[0].confidence")


def test_every_problem_is_reported_at_once(prog: Paths) -> None:
    """One refusal lists the problems of both results, so the evaluator fixes them in one pass."""
    err = certify_refused(
        prog, results("run-001", [scored("a-001", tags=None), {"item": "a-002", "status": "skipped", "note": "x"}])
    )
    assert {p.where for p in err.problems} >= {f"{W0}.fields", "results[1] (a-002).status"}, err.describe()


# ---------------------------------------------------------------------------------------------
# What is accepted


def test_results_in_another_order_give_the_spec_order(prog: Paths) -> None:
    certify(prog, results("run-001", [scored("a-002"), scored("a-001", passing=False)]))
    cert = loads_strict((prog.certificates_dir / "run-001.json").read_bytes())
    assert [(r["item"], r["passed"]) for r in cert["results"]] == [("a-001", False), ("a-002", True)]


ABSENT = object()


@pytest.mark.parametrize(
    ("text", "score", "rule"),
    [
        ("98", 98, "as-proposed"),
        ("96", 96, "as-proposed"),
        ("90", 96, "clamped"),
        ("1000", 100, "clamped"),
        ("-5", 96, "clamped"),
        ("-0", 96, "clamped"),
        ("90.0", 98, "midpoint-fallback"),
        ("9e1", 98, "midpoint-fallback"),
        ("true", 98, "midpoint-fallback"),
        ('"90"', 98, "midpoint-fallback"),
        ("null", 98, "midpoint-fallback"),
        ("1E2", 98, "midpoint-fallback"),
        (str(2**60), 98, "midpoint-fallback"),
        ("[97]", 98, "midpoint-fallback"),
        (ABSENT, 98, "midpoint-fallback"),
    ],
)
def test_proposal_inside_band_s(prog: Paths, text: Any, score: int, rule: str) -> None:
    """Both items pass: grade S, band [96, 100], midpoint 98."""
    doc = results("run-001", ok_rows(), proposed="__P__")
    if text is ABSENT:
        del doc["grader"]["proposed_score"]
        raw = json.dumps(doc)
    else:
        raw = json.dumps(doc).replace('"__P__"', text)
    c = certify(prog, raw=raw)
    assert (c.grade, c.score, c.score_rule) == ("S", score, rule)
    cert = loads_strict((prog.certificates_dir / "run-001.json").read_bytes())
    assert (cert["band"], cert["score"], cert["score_rule"]) == ([96, 100], score, rule)
    record = loads_strict((prog.data / "certificates/run-001/grader-record.json").read_bytes())
    assert record["proposed_json"] == (None if text is ABSENT else text)
    out = prog.data.parent / "public"
    build(prog, out)
    report = verify_site(out)
    assert report.ok and not report.asserted, report.render()


def test_finished_at_may_equal_both_ends(prog: Paths) -> None:
    """The bounds are inclusive: registration = finished_at = issue time is accepted."""
    certify(prog, results("run-001", ok_rows(), finished_at=RUN_AT), at=RUN_AT)
    assert loads_strict((prog.certificates_dir / "run-001.json").read_bytes())["finished_at"] == RUN_AT


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["results"][0].update(item=["a-001"]), "results for item(s) not in the run spec"),
        (
            lambda d: d["results"][0]["fields"][0].update(name=["account_number"]),
            "names a field the item's answer lacks",
        ),
        (
            lambda d: d["grader"].update(rationale=[{"\U0001f600": 1}]),
            "object key outside the Basic Multilingual Plane",
        ),
    ],
    ids=["item-is-a-list", "field-name-is-a-list", "rationale-key-beyond-the-bmp"],
)
def test_hostile_shapes_are_refused_not_crashed_on(
    prog: Paths, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    """Values of a type nobody expects get a clear refusal, never a traceback."""
    doc = results("run-001", [scored("a-001"), scored("a-002")])
    change(doc)
    named(certify_refused(prog, doc), message)


def test_a_lone_surrogate_is_refused(prog: Paths) -> None:
    """No UTF-8 document can hold "\\ud800": the results file is refused, not half-read."""
    raw = json.dumps(results("run-001", [scored("a-001"), {"item": "a-002", "status": "not_run", "note": "__NOTE__"}]))
    err = certify_refused(prog, raw=raw.replace("__NOTE__", "\\ud800"))
    named(err, "lone surrogate")
