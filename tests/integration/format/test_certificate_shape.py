"""Certificates written by hand (not by `certify`): the build refuses every malformed one.

`certify` cannot produce these; the tests write the run spec, the certificate and their
ledger leaves directly, as a buggy or dishonest operator could.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from generator.commands.build import build
from generator.core import canonical_json
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import parse_methodology, sha256_hex
from tests.support.forgery import certify_by_hand, register_by_hand
from tests.support.runs import run_spec


@pytest.mark.parametrize(
    ("over", "where", "message"),
    [
        ({"verdict": "whatever"}, "verdict", "unknown verdict"),
        ({"grade": "Z"}, "grade", "not a grade of the pinned methodology"),
        ({"band": [0, 1]}, "band", "band is not the grade's band"),
        ({"score": -5}, "score", "score lies outside the grade's band"),
        ({"score": 30}, "score", "a midpoint fallback scores the band's midpoint"),
        ({"score_rule": "whatever"}, "score_rule", "unknown score rule"),
        (
            {"run_spec": {"path": "../../etc/passwd", "sha256": "00" * 32}},
            "run_spec",
            "run_spec must name the published run spec",
        ),
        ({"expires_at": 12345}, "expires_at", "must be a time or null"),
        (
            {
                "results": [
                    {"item": "a-001", "status": "bogus", "note": "x"},
                    {"item": "a-002", "status": "not_run", "note": "x"},
                    {"item": "a-003", "status": "not_run", "note": "x"},
                ]
            },
            "results[0].status",
            "unknown status",
        ),
        (
            {
                "results": [
                    {"item": "a-001", "status": "not_run", "details": "ab" * 32},
                    {"item": "a-002", "status": "not_run", "note": "x"},
                    {"item": "a-003", "status": "not_run", "note": "x"},
                ]
            },
            "results[0]",
            "unknown member",
        ),
        ({"grader": {"record": "x", "kept": -1, "dropped": 0}}, "grader.record", "the grader record is a SHA-256"),
        ({"extra": 1}, "", "unknown member"),
    ],
)
def test_the_build_refuses_a_malformed_certificate(
    make_program: Callable[..., Paths], over: dict[str, Any], where: str, message: str
) -> None:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"])
    register_by_hand(paths, spec)
    certify_by_hand(paths, spec, "cert-001", **over)
    with pytest.raises(InputError) as e:
        build(paths, paths.data.parent / "public")
    assert any(
        message in p.message and p.where.startswith(where) and p.file.endswith("cert-001.json")
        for p in e.value.problems
    ), e.value.describe()


def test_summary_counts_must_add_up(make_program: Callable[..., Paths]) -> None:
    from generator.verifier import check_certificate

    paths = make_program(public_items=3, secret_items=0, retired=0)
    spec = run_spec(paths, "run-001", "a", ["a-001", "a-002", "a-003"])
    register_by_hand(paths, spec)
    cert = certify_by_hand(paths, spec, "cert-001")
    params = parse_methodology(json.loads((paths.methodology_dir / "2026.1.json").read_text()))
    good = check_certificate(cert, spec, params, True, "runs/run-001.json", sha256_hex(canonical_json.dumps(spec)))
    assert good == []
    cert["summary"] = {**cert["summary"], "total": "lots", "not_run": 2}
    found = check_certificate(cert, spec, params, True, "runs/run-001.json", sha256_hex(canonical_json.dumps(spec)))
    assert {p.where for p in found} == {"summary.total", "summary.not_run"}
