"""Withdrawn runs (format v2, FORMAT.md "Events v2 adds: run withdrawal"): a registered run that will never be run.

A run is registered before it happens, and every registered run owes a certificate. When a run
will never happen (the subject was pulled, the budget cut), the operator says so in the ledger
instead of leaving it open for ever: `{"type":"run-withdrawn","v":2,"run":RUN,"reason":TEXT,"at":T}`.
A withdrawal decides the run as a certificate does (the subject's next run may follow it), and
no certificate may follow it; the run's items stay counted as seen by its subject, since nothing
proves the run did not start.
"""

from dataclasses import dataclass
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.rules.subjects import prose_problems

RUN_WITHDRAWN = "run-withdrawn"


@dataclass(frozen=True)
class Revocation:
    serial: str
    reason: str
    index: int
    at: str


@dataclass(frozen=True)
class Withdrawal:
    run: str
    reason: str
    index: int
    at: str


def withdrawal_problems(
    leaf: dict[str, Any], registered: bool, certificate: str | None, earlier: Withdrawal | None
) -> list[Problem]:
    """The rules of a run-withdrawn leaf, given what the ledger says of its run so far."""
    run = leaf["run"]
    problems = prose_problems(leaf["reason"], "reason")
    if not registered:
        problems.append(Problem("withdrawal of a run that was not registered before", where="run", found=run))
    elif certificate is not None:
        problems.append(Problem(f"run {run} already has a certificate ({certificate}): revoke it instead", where="run"))
    elif earlier is not None:
        problems.append(Problem(f"run {run} is withdrawn twice (first at entries[{earlier.index}])", where="run"))
    return problems
