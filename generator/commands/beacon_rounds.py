"""`transparency beacon`: the pinned beacon's rounds, fetched and stored for `draw` and
`retire --draw`, and which round a time or the next scheduled retirement falls on."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from generator.core.generator_errors import InputError, problem
from generator.program.beacon_fetch import DEFAULT_RELAYS, FetchFailed, fetch_round
from generator.program.datadir import Paths
from generator.program.ledgerfile import reading, replay_ledger
from generator.program.retirement_schedule import methodology_in_force, next_due_round
from generator.verifier import Beacon, Ledger, Problem, time_text, unix_time


def pinned_beacon(paths: Paths, ledger: Ledger) -> Beacon:
    """The beacon of the methodology in force; InputError when it pins none."""
    problems: list[Problem] = []
    event, m = methodology_in_force(paths, ledger, problems)
    if m is None or m.beacon is None:
        version = event.version if event is not None else "none"
        problems.append(problem("methodology", f"the methodology in force ({version}) pins no beacon"))
        raise InputError(problems)
    return m.beacon


def round_file(paths: Paths, round_number: int) -> Path:
    return paths.data / "beacon" / f"{round_number}.json"


def fetch(paths: Paths, round_number: int, relays: tuple[str, ...], timeout: float, out: Path | None) -> Path:
    """Fetch the round from the relays (drand's public ones when none is given), check it, store
    it (atomically) under DATA/beacon/. InputError naming each relay's failure."""
    ledger = _ledger(paths)
    beacon = pinned_beacon(paths, ledger)
    try:
        body = fetch_round(beacon, round_number, relays or DEFAULT_RELAYS, timeout)
    except FetchFailed as e:
        failures = [problem("--relay", f) for f in e.failures]
        raise InputError(
            failures, f"no relay served round {round_number} of {beacon.name}; nothing was stored"
        ) from None
    target = out if out is not None else round_file(paths, round_number)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Whole or not at all: a round file cut short by a kill would be refused by `draw` anyway,
    # but an operator should never find one.
    tmp = target.with_name(target.name + ".part")
    with tmp.open("wb") as f:
        f.write(body if body.endswith(b"\n") else body + b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
    return target


def _ledger(paths: Paths) -> Ledger:
    with reading(paths):
        ledger, problems = replay_ledger(paths)
    if problems:
        raise InputError(problems, "the ledger breaks the rules; fix it first")
    return ledger


@dataclass(frozen=True)
class RoundAt:
    beacon: str
    round: int
    published: str


def round_at(paths: Paths, when: str) -> RoundAt:
    """The first round of the pinned beacon published at or after `when`."""
    ledger = _ledger(paths)
    beacon = pinned_beacon(paths, ledger)
    r = beacon.first_round_at(unix_time(when))
    return RoundAt(beacon.name, r, time_text(beacon.round_time(r)))


def due(paths: Paths) -> RoundAt:
    """The round of the next scheduled retirement."""
    ledger = _ledger(paths)
    problems: list[Problem] = []
    found = next_due_round(paths, ledger, problems)
    if found is None:
        raise InputError(problems)
    beacon = pinned_beacon(paths, ledger)
    return RoundAt(beacon.name, found[0], time_text(beacon.round_time(found[0])))
