"""`transparency draw`: a drawn run's items fixed by the beacon round its spec named, and recorded in
the ledger (FORMAT.md, "Draws and timestamps")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.program.documents import load_spec, methodology
from generator.program.ledgerfile import appending, event_time
from generator.verifier import (
    DRAW,
    Beacon,
    Ledger,
    Problem,
    draw_items,
    loads_strict,
    round_document_problems,
    round_randomness,
    round_signature_problems,
    run_pool,
    time_text,
    unix_time,
)


@dataclass(frozen=True)
class Drawn:
    run: str
    round: int
    pool: int
    items: list[str]
    at: str


def read_round(path: Path, beacon: Beacon | None, problems: list[Problem]) -> dict[str, Any] | None:
    """A round file (as the beacon's HTTP API serves it), its shape and signature checked against
    `beacon`; None, with the problems recorded, if it is not one."""
    file = str(path)
    try:
        doc = loads_strict(path.read_bytes())
    except OSError as e:
        problems.append(problem(file, f"cannot read the round file: {e.strerror or e}"))
        return None
    except ValueError as e:
        problems.append(problem(file, f"not a JSON round: {e}"))
        return None
    found = round_document_problems(doc)
    if not found and beacon is not None:
        found = round_signature_problems(beacon, doc["round"], doc["signature"], "signature")
    problems += [p.at(file) for p in found]
    return None if found else doc


def draw_run(paths: Paths, run_id: str, round_file: Path, at: str | None = None) -> Drawn:
    """Append the `draw` leaf of run `run_id`: the round its spec named, checked, and the items it
    draws from the pool the run's registration fixed. Refuses, writing nothing, a run that is
    not registered, not drawn, already drawn or decided, a round other than the spec's or not
    signed by the pinned beacon, and a time before the round was published."""
    with appending(paths, "draw") as app:
        ledger = app.ledger
        problems: list[Problem] = []
        run = ledger.runs.get(run_id)
        if run is None:
            raise InputError([problem("RUN", f"run {run_id!r} is not registered")])
        spec = load_spec(paths, ledger, run_id, problems)
        if spec is not None and "draw" not in spec:
            problems.append(problem(paths.show(paths.run_spec_file(run_id)), "the run names its items; it has no draw"))
        if problems or spec is None:
            raise InputError(problems, f"cannot draw run {run_id}; nothing was written")
        m = methodology(paths, ledger, spec["methodology"]["version"], problems)
        beacon = m.beacon if m is not None else None
        if beacon is None:
            problems.append(problem("methodology", f"methodology {spec['methodology']['version']} pins no beacon"))
        doc = read_round(round_file, beacon, problems)
        when = event_time(at, ledger, problems)
        if doc is not None and beacon is not None:
            problems += _round_problems(ledger, run_id, spec, doc, beacon, when)
        if problems or doc is None:
            raise InputError(problems, f"cannot draw run {run_id}; nothing was written")
        seen = _seen_items(paths, ledger, run_id, problems)
        pool = run_pool(ledger, run, seen)
        items = draw_items(pool, round_randomness(doc["signature"]), f"run:{run_id}", spec["draw"]["count"])
        if len(pool) < spec["draw"]["count"]:
            problems.append(
                problem(
                    "draw",
                    f"the pool of run {run_id} holds {len(pool)} eligible item(s) on gate {run.gate}, fewer than the "
                    f"{spec['draw']['count']} it draws",
                )
            )
        if problems:
            raise InputError(problems, f"cannot draw run {run_id}; nothing was written")
        leaf = {
            "type": DRAW,
            "v": 2,
            "run": run_id,
            "round": doc["round"],
            "signature": doc["signature"],
            "items": items,
            "at": when,
        }
        app.append([leaf])
        return Drawn(run_id, doc["round"], len(pool), items, when)


def _round_problems(
    ledger: Ledger, run_id: str, spec: dict[str, Any], doc: dict[str, Any], beacon: Beacon, when: str
) -> list[Problem]:
    problems = []
    want = spec["draw"]["round"]
    if doc["round"] != want:
        problems.append(
            problem("ROUND-FILE", "not the round the run's spec named", expected=str(want), found=str(doc["round"]))
        )
    published = beacon.round_time(doc["round"])
    if unix_time(when) < published:
        problems.append(
            problem(
                "--at",
                "the draw cannot be dated before its round was published",
                expected=f"{time_text(published)} or later",
                found=when,
            )
        )
    if run_id in ledger.draws:
        problems.append(problem("RUN", f"run {run_id} was already drawn (entries[{ledger.draws[run_id].index}])"))
    elif ledger.decided_at(run_id) is not None:
        problems.append(problem("RUN", f"run {run_id} is already decided"))
    run = ledger.runs[run_id]
    for item_id, r in ledger.reveals.items():
        c = ledger.commit(item_id)
        if r.index > run.index and c is not None and c.gate == run.gate:
            problems.append(
                problem(
                    "RUN",
                    f"item {item_id} of gate {run.gate} was revealed after the run was registered: "
                    "the pool its registration fixed is gone; withdraw the run and register a new one",
                )
            )
            break
    return problems


def _seen_items(paths: Paths, ledger: Ledger, run_id: str, problems: list[Problem]) -> set[str]:
    """The items the run's subject already ran on its gate."""
    seen: set[str] = set()
    for earlier in ledger.runs_before(ledger.runs[run_id]):
        spec = load_spec(paths, ledger, earlier.id, problems)
        if spec is not None:
            seen.update(spec.get("items", []))
    return seen
