"""Drawn runs and scheduled retirements through the real commands (`transparency draw`, `retire
--draw`), built and verified; and what a dishonest operator could record instead, each refused by
the commands and, when forced into the ledger, failed by the verifier with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import generator.build.gather
from generator.commands.commit import commit_new_items
from generator.commands.draw import draw_run
from generator.commands.methodology import publish
from generator.commands.retire_drawn import retire_drawn
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.program.ledgerfile import appending
from generator.verifier import draw_items, round_randomness, run_pool, unix_time, verify_site
from tests.support.beacon import OwnBeacon, drawn_methodology_file
from tests.support.beacon import drawn_spec as beacon_spec
from tests.support.forgery import forked_build
from tests.support.programs import METHODOLOGY, item, new_program, write_items
from tests.support.runs import certify, methodology_pin, register, results, run_spec, scored, write_json

BEACON = OwnBeacon()
PUBLISHED = "2026-02-10T00:00:00Z"
REGISTERED = "2026-02-10T01:00:00Z"
EVERY = 86400


@pytest.fixture
def program(tmp_path: Path) -> Paths:
    paths = new_program(tmp_path / "data", secret_items=40, retired=1)
    schedule = {"items": 2, "every_seconds": EVERY, "until": "2026-02-12T00:00:00Z"}
    publish(paths, drawn_methodology_file(tmp_path / "m", BEACON, schedule), METHODOLOGY[1], PUBLISHED)
    return paths


def drawn_spec(paths: Paths, round_number: int, count: int = 10, run_id: str = "run-1") -> dict[str, Any]:
    return beacon_spec(paths, BEACON, round_number, count, run_id)


def round_after(at: str, seconds: int = 60) -> int:
    return BEACON.round_at(unix_time(at) + seconds)


def test_drawn_run_and_drawn_retirement_certify_build_and_verify(program: Paths, tmp_path: Path) -> None:
    r = round_after(REGISTERED)
    register(program, drawn_spec(program, r), REGISTERED)
    drawn = draw_run(program, "run-1", BEACON.write_round(tmp_path, r), "2026-02-10T01:05:00Z")
    ledger_items = drawn.items
    assert len(ledger_items) == 10 and "b-0001" not in ledger_items  # b-0001 was retired before the run
    assert drawn.pool == 39
    certify(
        program,
        results("run-1", [scored(i) for i in ledger_items], finished_at="2026-02-10T01:30:00Z"),
        at="2026-02-10T02:00:00Z",
    )
    due = BEACON.round_at(unix_time(PUBLISHED) + EVERY)
    retired = retire_drawn(program, BEACON.write_round(tmp_path, due), at=_time(BEACON.genesis_time, due))
    assert len(retired.items) == 2 and retired.pool == 39 - 0  # the run is decided: its items are eligible again
    site = tmp_path / "site"
    from generator.commands.build import build

    build(program, site)
    report = verify_site(site)
    assert report.ok, [p.describe() for p in report.failures]


def _time(genesis: int, round_number: int) -> str:
    from generator.verifier import time_text

    return time_text(genesis + (round_number - 1) * BEACON.period)


def test_draw_refuses_another_round_a_forged_round_and_an_early_time(program: Paths, tmp_path: Path) -> None:
    r = round_after(REGISTERED)
    register(program, drawn_spec(program, r), REGISTERED)
    with pytest.raises(InputError, match="not the round the run's spec named"):
        draw_run(program, "run-1", BEACON.write_round(tmp_path, r + 1), "2026-02-10T01:05:00Z")
    forged = OwnBeacon(seed=b"someone else").round(r)
    with pytest.raises(InputError, match="does not verify against the pinned key"):
        draw_run(program, "run-1", write_json(tmp_path / "forged.json", forged), "2026-02-10T01:05:00Z")
    with pytest.raises(InputError, match="before its round was published"):
        draw_run(program, "run-1", BEACON.write_round(tmp_path, r), "2026-02-10T01:00:30Z")


def test_register_refuses_a_round_already_published(program: Paths) -> None:
    early = BEACON.round_at(unix_time(REGISTERED) - 30)
    with pytest.raises(InputError, match="published before the run was registered"):
        register(program, drawn_spec(program, early), REGISTERED)


def test_the_methodology_requires_a_draw_on_secret_gates(program: Paths) -> None:
    spec = run_spec(program, "run-1", "b", [f"b-{i:04d}" for i in range(2, 12)])
    spec["methodology"] = methodology_pin(program, "2026.2")
    with pytest.raises(InputError, match="requires a secret-gate run to draw its items"):
        register(program, spec, REGISTERED)


def test_retire_draw_refuses_a_round_other_than_the_one_due(program: Paths, tmp_path: Path) -> None:
    due = BEACON.round_at(unix_time(PUBLISHED) + EVERY)
    with pytest.raises(InputError, match="names next"):
        retire_drawn(program, BEACON.write_round(tmp_path, due + 1), at=_time(BEACON.genesis_time, due + 1))


def _force(paths: Paths, leaves: list[dict[str, Any]]) -> None:
    """Leaves appended as a hostile operator would: no command's checks."""
    with appending(paths, "test") as app:
        app.append(leaves)


def _forked_failures(paths: Paths, out: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(generator.build.gather, "retirement_problems", lambda *a: [])
    monkeypatch.setattr(generator.build.gather, "check_run_rules", lambda *a: [])
    report = forked_build(paths, out, monkeypatch)
    assert not report.ok
    return "\n".join(p.describe() for p in report.failures)


@pytest.mark.parametrize("forgery", ["forged-round", "not-the-draw", "round-before-registration"])
def test_verifier_fails_a_forced_draw(
    program: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forgery: str
) -> None:
    r = round_after(REGISTERED, -30 if forgery == "round-before-registration" else 60)
    spec = drawn_spec(program, r)
    from tests.support.forgery import register_by_hand

    register_by_hand(program, spec, REGISTERED)
    from generator.program.ledgerfile import replay_ledger

    ledger, _ = replay_ledger(program)
    randomness_round = BEACON.round(r)
    items = draw_items(
        run_pool(ledger, ledger.runs["run-1"], set()), round_randomness(randomness_round["signature"]), "run:run-1", 10
    )
    signature = randomness_round["signature"]
    if forgery == "forged-round":
        signature = OwnBeacon(seed=b"someone else").signature(r)
    if forgery == "not-the-draw":
        items = sorted(f"b-{i:04d}" for i in range(2, 12))
    _force(
        program,
        [
            {
                "type": "draw",
                "v": 2,
                "run": "run-1",
                "round": r,
                "signature": signature,
                "items": items,
                "at": "2026-02-10T01:05:00Z",
            }
        ],
    )
    failures = _forked_failures(program, tmp_path / "site", monkeypatch)
    expected = {
        "forged-round": "does not verify against the pinned key",
        "not-the-draw": "the items are not the round's draw",
        "round-before-registration": "published before the run was registered",
    }[forgery]
    assert expected in failures, failures


def test_register_refuses_a_draw_larger_than_its_pool_and_a_far_round(program: Paths) -> None:
    r = round_after(REGISTERED)
    with pytest.raises(InputError, match="fewer than the 40 it draws"):
        register(program, drawn_spec(program, r, count=40), REGISTERED)
    far = round_after(REGISTERED, 2 * 86400)
    with pytest.raises(InputError, match="more than a day after the registration"):
        register(program, drawn_spec(program, far), REGISTERED)


def test_an_older_methodology_does_not_step_back_from_required_draws(program: Paths) -> None:
    spec = run_spec(program, "run-1", "b", [f"b-{i:04d}" for i in range(2, 12)])  # pins 2026.1
    with pytest.raises(InputError, match=r"methodology 2026\.2 .* requires a secret-gate run to draw its items"):
        register(program, spec, REGISTERED)


def test_no_event_is_recorded_past_a_due_retirement(program: Paths, tmp_path: Path) -> None:
    due = BEACON.round_at(unix_time(PUBLISHED) + EVERY)
    late = _time(BEACON.genesis_time, due + 10)
    with pytest.raises(InputError, match=f"transparency retire --draw DATA/beacon/{due}.json"):
        register(program, drawn_spec(program, round_after(late)), late)
    retire_drawn(program, BEACON.write_round(tmp_path, due), at=late)  # recorded, the next event may follow
    register(program, drawn_spec(program, round_after(late)), late)


def test_a_commit_asks_once_whether_a_retirement_is_due(program: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every item of a commit is dated alike: the schedule is read once, not once an item (at a
    million items that read was most of the commit), and a commit past a due round is refused."""
    import generator.program.ledgerfile as ledgerfile

    asked: list[str] = []
    real = ledgerfile.overdue_problem

    def counted(paths: Paths, ledger: Any, at: str) -> Any:
        asked.append(at)
        return real(paths, ledger, at)

    monkeypatch.setattr(ledgerfile, "overdue_problem", counted)
    write_items(program, [item(f"b-{i:04d}", "b") for i in range(100, 130)], "more.yaml")
    due = BEACON.round_at(unix_time(PUBLISHED) + EVERY)
    with pytest.raises(InputError, match=f"transparency retire --draw DATA/beacon/{due}.json"):
        commit_new_items(program, _time(BEACON.genesis_time, due + 10))
    assert len(asked) == 1
    asked.clear()
    assert commit_new_items(program, "2026-02-10T00:30:00Z").committed == 30
    assert asked == ["2026-02-10T00:30:00Z"]


@pytest.mark.parametrize("forgery", ["withdrawn-after-round", "draw-for-listed-items"])
def test_verifier_fails_a_forced_withdrawal_or_draw(
    program: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forgery: str
) -> None:
    from tests.support.forgery import register_by_hand

    r = round_after(REGISTERED)
    if forgery == "withdrawn-after-round":
        register_by_hand(program, drawn_spec(program, r), REGISTERED)
        leaf = {"type": "run-withdrawn", "v": 2, "run": "run-1", "reason": "Re-rolled.", "at": "2026-02-10T01:05:00Z"}
        expected = "once its round was published, without its draw"
    else:
        listed = run_spec(program, "run-1", "b", [f"b-{i:04d}" for i in range(2, 12)])
        register_by_hand(program, listed | {"methodology": methodology_pin(program, "2026.2")}, REGISTERED)
        leaf = {"type": "draw", "v": 2, "run": "run-1", "round": r, "signature": BEACON.signature(r)}
        leaf |= {"items": sorted(f"b-{i:04d}" for i in range(2, 12)), "at": "2026-02-10T01:05:00Z"}
        expected = "whose spec lists its items"
    _force(program, [leaf])
    monkeypatch.setattr(generator.build.gather, "required_draw_problems", lambda *a: [])
    failures = _forked_failures(program, tmp_path / "site", monkeypatch)
    assert expected in failures, failures
