"""`transparency gate add`: a gate declared in the ledger, public or secret for good."""

from __future__ import annotations

from dataclasses import dataclass

from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.program.ledgerfile import appending, event_time
from generator.verifier import Problem, show


@dataclass(frozen=True)
class GateSpec:
    id: str
    name: str
    public: bool


def gate_leaf(gate: GateSpec, at: str) -> dict[str, object]:
    return {"type": "gate", "v": 1, "id": gate.id, "name": gate.name, "public": gate.public, "at": at}


def add_gate(paths: Paths, gate: GateSpec, at: str | None = None) -> dict[str, object]:
    with appending(paths, "gate add") as app:
        problems: list[Problem] = []
        leaf = gate_leaf(gate, event_time(at, app.ledger, problems))
        lines: list[bytes] = []
        try:
            lines = app.prepare([leaf])
        except InputError as e:
            problems += e.problems
        if problems:
            raise InputError(problems, f"cannot add gate {show(gate.id)}; nothing was written")
        app.tx.add_lines(lines)
    return leaf
