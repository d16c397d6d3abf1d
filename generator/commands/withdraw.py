"""`transparency withdraw`: a registered run that will never be run, decided in the ledger (format v2).

Every registered run owes a certificate; a run that will never happen would otherwise stay open
for good, and with it its subject's chain of attempts and its items (an item of an open run
cannot be retired). A withdrawal is one more leaf: it decides the run, no certificate may follow
it, and its items stay counted as seen by its subject (generator/verifier/rules/withdrawals.py).
"""

from __future__ import annotations

from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.program.ledgerfile import appending, event_time, reason_problems
from generator.verifier import ID_RE, RUN_WITHDRAWN, Problem, is_id, show


def withdrawal_leaf(run_id: str, reason: str, at: str) -> dict[str, Any]:
    return {"type": RUN_WITHDRAWN, "v": 2, "run": run_id, "reason": reason, "at": at}


def withdraw_run(paths: Paths, run_id: str, reason: str, at: str | None = None) -> dict[str, Any]:
    """Append the withdrawal of registered run `run_id`; refuse (writing nothing) a run that is not
    registered, one already certified or withdrawn, and a reason that could mislead a reader."""
    with appending(paths, "withdraw") as app:
        ledger = app.ledger
        ledger_file = paths.show(paths.ledger_file)
        problems: list[Problem] = []
        when = event_time(at, ledger, problems)
        if not is_id(run_id):
            problems.append(problem("RUN", "malformed run id", expected=ID_RE.pattern, found=show(run_id)))
        elif run_id not in ledger.runs:
            problems.append(
                problem(
                    ledger_file,
                    f"no run {run_id} is registered: only a registered run can be withdrawn",
                    "run",
                    expected="the id of a run registered in the ledger",
                    found=run_id,
                )
            )
        elif run_id in ledger.certificate_of_run:
            serial = ledger.certificate_of_run[run_id]
            problems.append(
                problem(
                    ledger_file,
                    f"run {run_id} already has certificate {serial}: a decided run is not withdrawn (revoke the "
                    "certificate with 'transparency revoke' instead)",
                    "run",
                    expected="a registered run with no certificate",
                    found=f"certificate {serial} at entries[{ledger.certificates[serial].index}]",
                )
            )
        elif run_id in ledger.withdrawals:
            w = ledger.withdrawals[run_id]
            problems.append(
                problem(
                    ledger_file,
                    f"run {run_id} is already withdrawn (on {w.at}: {w.reason}); a run is withdrawn once",
                    "run",
                    expected="a run not yet withdrawn",
                    found=f"withdrawn at entries[{w.index}]",
                )
            )
        leaf = withdrawal_leaf(run_id, reason, when)
        problems += reason_problems(reason, leaf)
        if problems:
            what = f"run {run_id}" if is_id(run_id) else "the run"
            raise InputError(problems, f"cannot withdraw {what}; nothing was written")
        app.append([leaf])
    return leaf
