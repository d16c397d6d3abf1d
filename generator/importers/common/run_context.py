"""The registered run an import is for, read from the program: its spec and items, each item's answer
(a sealed one unsealed for the import), the methodology's attempt limit, and the refusals that hold
whatever the harness (a malformed run id, a run not registered, a run already certified)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.program.documents import load_spec, methodology
from generator.program.ledgerfile import reading, replay_from
from generator.program.sealed import locate_sealed, run_answers
from generator.verifier import (
    Problem,
    is_id,
)


@dataclass(frozen=True)
class RunContext:
    run_id: str
    registered_at: str  # when the run was registered: nothing of the evaluation may be earlier
    spec: dict[str, Any]
    items: list[str]
    answers: dict[str, dict[str, Any]]  # by item: the answer's fields
    max_attempts: int | None  # the methodology's, when it could be read
    rules: int  # how many exclusion rules the spec has


def check_run_id(run_id: str) -> None:
    if not is_id(run_id):
        raise InputError([problem("--run", "malformed run id", expected="^[a-z0-9][a-z0-9_-]{0,63}$", found=run_id)])


def load_run(paths: Paths, run_id: str, problems: list[Problem]) -> RunContext:
    """Run `run_id` as the program has it; a run already certified is a problem recorded, one
    that is not registered or whose spec cannot be read is an InputError."""
    with reading(paths):
        ledger, found, _ = replay_from(paths, save=False)
        if found:
            raise InputError(found, "cannot read the program's ledger; nothing was written")
        run = ledger.runs.get(run_id)
        if run is None:
            raise InputError(
                [
                    problem(
                        "--run", f"run {run_id} is not registered; register its spec first with 'transparency register'"
                    )
                ]
            )
        if run.id in ledger.certificate_of_run:
            problems.append(
                problem(
                    "--run",
                    f"run {run_id} is already certified ({ledger.certificate_of_run[run.id]}); "
                    "its results cannot change",
                )
            )
        spec = load_spec(paths, ledger, run.id, problems)
        if spec is None:
            raise InputError(problems, f"cannot read the spec of run {run_id}; nothing was written")
        items: list[str] = spec["items"]
        m = methodology(paths, ledger, spec["methodology"]["version"], problems)
        public = ledger.gates[run.gate].public
        wanted = {} if public else {i: c.commitment for i in items if (c := ledger.commit(i)) is not None}
        answers = run_answers(paths, ledger, items, public, locate_sealed(paths, wanted) if wanted else {}, problems)
    return RunContext(
        run_id,
        run.at,
        spec,
        items,
        answers,
        m.max_attempts if m is not None else None,
        len(spec["exclusion_rules"]),
    )
