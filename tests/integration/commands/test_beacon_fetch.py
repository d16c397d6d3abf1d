"""`transparency beacon fetch` against relays on loopback: the first relay that serves the round
signed by the pinned key is used, each failing or lying relay is named, and a round is stored whole
or not at all; `beacon round` and `beacon due` name the rounds an operator needs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.commands.beacon_rounds import due, fetch, round_at
from generator.commands.methodology import publish
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import unix_time
from tests.support.beacon import OwnBeacon, Relays
from tests.support.programs import METHODOLOGY, new_program
from tests.support.runs import write_json

BEACON = OwnBeacon()
PUBLISHED = "2026-02-10T00:00:00Z"


@pytest.fixture
def program(tmp_path: Path) -> Paths:
    paths = new_program(tmp_path / "data", secret_items=5, retired=0)
    params = json.loads(METHODOLOGY[0].read_text())
    params |= {"version": "2026.2", "v": 2, "beacon": BEACON.pin()}
    params["draws"] = {"secret_gate_runs": "allowed", "retirements": {"items": 1, "every_seconds": 3600}}
    publish(paths, write_json(tmp_path / "m.json", params), METHODOLOGY[1], PUBLISHED)
    return paths


@pytest.fixture
def relays() -> Iterator[Relays]:
    r = Relays(BEACON, ["500", "forged", "other-round", "ok"])
    yield r
    r.close()


def test_fetch_takes_the_first_relay_that_serves_the_signed_round(program: Paths, relays: Relays) -> None:
    target = fetch(program, 1234, tuple(relays.urls), 5.0, None)
    assert target == program.data / "beacon" / "1234.json"
    assert json.loads(target.read_text()) == BEACON.round(1234)
    assert len(relays.requests) == 4 and all(r == f"/{BEACON.chain_hash}/public/1234" for r in relays.requests)


def test_fetch_names_every_relay_that_failed(program: Paths, relays: Relays, tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        fetch(program, 1234, tuple(relays.urls[:3]), 5.0, tmp_path / "r.json")
    text = e.value.describe()
    assert "HTTP 500" in text and "does not verify against the pinned key" in text and "served round 1235" in text
    assert not (tmp_path / "r.json").exists()


def test_fetch_gives_up_on_a_relay_in_bounded_time(program: Paths) -> None:
    slow = Relays(BEACON, ["hang", "ok"])
    try:
        target = fetch(program, 77, tuple(slow.urls), 0.5, None)
    finally:
        slow.close()
    assert json.loads(target.read_text())["round"] == 77


def test_round_at_and_due(program: Paths) -> None:
    r = round_at(program, "2026-02-10T00:00:10Z")
    assert BEACON.genesis_time + (r.round - 1) * BEACON.period >= unix_time("2026-02-10T00:00:10Z")
    assert r.published == "2026-02-10T00:00:12Z"
    nxt = due(program)
    assert nxt.round == BEACON.round_at(unix_time(PUBLISHED) + 3600) and nxt.published == "2026-02-10T01:00:00Z"
