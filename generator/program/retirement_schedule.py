"""The next scheduled retirement (FORMAT.md, "Draws and timestamps"): the round that draws it and
when it is due, from the methodology in force, so that no command records a later event first.

A scheduled retirement must be the first leaf dated at or after its round: an event recorded past
it leaves the ledger failing verification for good. So every command that appends asks here first,
and is refused, with the two commands that record the retirement, once one is due.
"""

from __future__ import annotations

from typing import Any

from generator.core.generator_errors import problem
from generator.program.datadir import Paths
from generator.program.documents import methodology
from generator.verifier import Beacon, Ledger, Methodology, Problem, time_text, unix_time


def methodology_in_force(paths: Paths, ledger: Ledger, problems: list[Problem]) -> tuple[Any, Methodology | None]:
    """The last methodology the ledger published (its leaf, and its parameters parsed)."""
    event = max(ledger.methodologies.values(), key=lambda e: e.index, default=None)
    if event is None:
        return None, None
    return event, methodology(paths, ledger, event.version, problems)


def next_due_round(paths: Paths, ledger: Ledger, problems: list[Problem]) -> tuple[int, str] | None:
    """The round of the next scheduled retirement and the version whose schedule names it; None,
    with a problem, when no schedule is in force or it has ended."""
    due = _next_due(paths, ledger, problems)
    return None if due is None else (due[0], due[1])


def _next_due(paths: Paths, ledger: Ledger, problems: list[Problem]) -> tuple[int, str, Beacon] | None:
    """next_due_round, with the beacon that publishes the round (the methodology read once)."""
    event, m = methodology_in_force(paths, ledger, problems)
    if m is None or m.retirement_schedule is None or m.beacon is None:
        version = event.version if event is not None else "none"
        problems.append(problem("methodology", f"the methodology in force ({version}) schedules no drawn retirements"))
        return None
    done = sum(1 for d in ledger.retirement_draws if d.index > event.index)
    schedule = m.retirement_schedule
    due = unix_time(event.at) + (done + 1) * schedule.every_seconds
    if schedule.until is not None and due > unix_time(schedule.until):
        problems.append(problem("methodology", f"the schedule of methodology {event.version} ended {schedule.until}"))
        return None
    return m.beacon.first_round_at(due), event.version, m.beacon


def overdue_problem(paths: Paths, ledger: Ledger, at: str) -> Problem | None:
    """Why an event dated `at` cannot be recorded now: a scheduled retirement is due before it."""
    # Asked before an append (once per time, methodology and draw count: LedgerAppender); the
    # methodology in force is read once per ask.
    due = _next_due(paths, ledger, [])
    if due is None:
        return None
    beacon = due[2]
    published = beacon.round_time(due[0])
    if unix_time(at) < published:
        return None
    return problem(
        "the ledger",
        f"the retirement that methodology {due[1]} schedules is due: round {due[0]} of {beacon.name} was "
        f"published {time_text(published)}, and it must be recorded before any event dated after it. Record it "
        f"first: transparency beacon fetch {due[0]}, then transparency retire --draw DATA/beacon/{due[0]}.json",
        expected=f"an event dated before {time_text(published)}, or the retirement first",
        found=at,
    )
