"""`transparency retire --draw`: the scheduled retirement a beacon round draws, recorded as a
`retirement-draw` leaf followed by the reveal of each item it drew (FORMAT.md, "Draws and
timestamps")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.commands.draw import read_round
from generator.commands.retire import retire_within
from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.program.documents import load_spec
from generator.program.ledgerfile import appending, event_time
from generator.program.retirement_schedule import methodology_in_force, next_due_round
from generator.verifier import (
    RETIREMENT_DRAW,
    Ledger,
    Problem,
    retirement_draw,
    time_text,
    unix_time,
)


@dataclass(frozen=True)
class DrawnRetirement:
    round: int
    pool: int
    items: list[str]
    at: str


def retire_drawn(paths: Paths, round_file: Path, note: str | None = None, at: str | None = None) -> DrawnRetirement:
    """Retire the items the next scheduled round draws among the sealed items no open run holds.
    Refuses, writing nothing, a round that is not the schedule's next or not signed by the pinned
    beacon, a retirement recorded after another leaf dated past the round (it was due before
    it), and a time before the round."""
    with appending(paths, "retire") as app:
        ledger = app.ledger
        problems: list[Problem] = []
        _, m = methodology_in_force(paths, ledger, problems)
        due = next_due_round(paths, ledger, problems)
        beacon = m.beacon if m is not None else None
        doc = read_round(round_file, beacon, problems)
        when = event_time(at, ledger, problems)
        if problems or due is None or doc is None or m is None or beacon is None or m.retirement_schedule is None:
            raise InputError(problems, "cannot draw the scheduled retirement; nothing was written")
        published = beacon.round_time(due[0])
        if doc["round"] != due[0]:
            problems.append(
                problem(
                    "ROUND-FILE",
                    f"not the round the schedule of methodology {due[1]} names next",
                    expected=f"round {due[0]} (published {time_text(published)})",
                    found=f"round {doc['round']}",
                )
            )
        if unix_time(ledger.last_at) >= published:
            problems.append(
                problem(
                    "ledger",
                    f"the retirement due at round {due[0]} is late: a leaf dated {ledger.last_at} was recorded after "
                    "the round; a scheduled retirement is the first leaf dated at or after its round",
                )
            )
        if unix_time(when) < published:
            problems.append(
                problem("--at", "dated before the round", expected=f"{time_text(published)} or later", found=when)
            )
        if problems:
            raise InputError(problems, "cannot draw the scheduled retirement; nothing was written")
        specs = _effective_specs(paths, ledger, problems)
        pool_size, items = retirement_draw(
            ledger, ledger.size, specs, doc["round"], doc["signature"], m.retirement_schedule.items
        )
        leaf = {
            "type": RETIREMENT_DRAW,
            "v": 2,
            "round": doc["round"],
            "signature": doc["signature"],
            "items": items,
            "at": when,
        }
        text = (
            note
            if note is not None
            else f"Drawn by beacon round {doc['round']} ({m.beacon.name if m.beacon else ''}), as scheduled."
        )
        retire_within(paths, app, items, text, when, problems, first=[leaf])
        return DrawnRetirement(doc["round"], pool_size, items, when)


def _effective_specs(paths: Paths, ledger: Ledger, problems: list[Problem]) -> dict[str, dict[str, Any]]:
    """The specs of the runs still open (the only ones a pool looks at), as the verifier reads them."""
    specs: dict[str, dict[str, Any]] = {}
    for run in ledger.runs.values():
        if ledger.decided_at(run.id) is None and (spec := load_spec(paths, ledger, run.id, problems)) is not None:
            specs[run.id] = spec
    return specs
