"""`transparency status`: the program's state at a glance, from the replay cache."""

from __future__ import annotations

import json
from collections.abc import Callable

from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.status import program_status
from generator.commands.withdraw import withdraw_run
from generator.program.datadir import Paths
from tests.support.runs import certify, register, results, run_spec, scored


def _cli(paths: Paths, *args: str) -> str:
    r = CliRunner().invoke(main, ["--data", str(paths.data), "--private", str(paths.private), *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_status_counts_gates_runs_certificates_and_what_is_not_built(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=2, secret_items=12, retired=1)  # b-0001 retired
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    certify(paths, results("run-001", [scored("a-001"), scored("a-002")]))
    other = {"id": "other", "name": "Other Reader", "version": "2", "organization": "Other Org"}
    register(
        paths,
        run_spec(paths, "run-002", "b", [f"b-{i:04d}" for i in range(2, 12)], subject=other),
        "2026-03-05T00:00:00Z",
    )
    third = {"id": "third", "name": "Third Reader", "version": "1", "organization": "Third Org"}
    register(
        paths,
        run_spec(paths, "run-003", "b", [f"b-{i:04d}" for i in range(2, 12)], subject=third),
        "2026-03-06T00:00:00Z",
    )
    withdraw_run(paths, "run-003", "Never to be run.", "2026-03-09T00:00:00Z")

    state = program_status(paths)
    assert [(g["id"], g["committed"], g["sealed"], g["revealed"]) for g in state["gates"]] == [
        ("a", 2, 0, 2),
        ("b", 12, 11, 1),
    ]
    assert [r["id"] for r in state["runs"]["open"]] == ["run-002"]
    assert [w["id"] for w in state["runs"]["withdrawn"]] == ["run-003"]
    assert state["runs"]["registered"] == 3 and state["certificates"] == {"issued": 1, "revoked": 0}
    assert state["build"] == {"published_size": None, "not_built": None}

    build(paths, paths.data.parent / "public")
    built = program_status(paths)
    assert built["build"] == {"published_size": built["ledger"]["size"], "not_built": 0}
    assert built["ledger"]["replayed"] == 0  # from the saved replay, not the ledger's first line
    withdraw_run(paths, "run-002", "Also cancelled.", "2026-03-10T00:00:00Z")
    later = json.loads(_cli(paths, "status", "--json"))
    assert later["build"]["not_built"] == 1 and later["runs"]["open"] == []
    text = _cli(paths, "status")
    assert "b (secret, Gate B): 12 committed, 11 sealed, 1 revealed" in text
    assert "1 not built yet" in text and "2 withdrawn" in text
