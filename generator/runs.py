"""Registering a run (SPEC §4, §6): its spec is fixed in the ledger before the run happens.

A run spec names the subject, the gate, the items and the methodology it will be judged by.
Registering it first is what makes a certificate worth reading: the operator cannot pick the
items after seeing the outputs, run a subject ten times and publish the best attempt (every
attempt is a ledger leaf, chained by `previous_run`), or let a subject see a sealed item twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import canonical
from generator.datadir import Paths
from generator.errors import InputError, problem
from generator.ledgerfile import appending, event_time, write_new_file
from generator.methodology import params_file
from generator.site import read_document
from generator.sources import load_json
from generator.verify import MAX_LEAF_BYTES, Ledger, Problem, RunEvent, check_run_rules, check_run_spec, sha256_hex


@dataclass(frozen=True)
class Registered:
    id: str
    sha256: str
    at: str
    items: int
    previous_run: str | None


def spec_file(paths: Paths, run_id: str) -> Path:
    return paths.runs_dir / f"{run_id}.json"


def methodology_params(paths: Paths, ledger: Ledger, version: Any, problems: list[Problem]) -> dict[str, Any] | None:
    """The published parameters of `version`, checked against the ledger's hash; None if unknown."""
    event = ledger.methodologies.get(version) if isinstance(version, str) else None
    if event is None:
        return None
    loaded = read_document(paths, params_file(paths, event.version), event.sha256, f"parameters of methodology {event.version}", problems)
    return loaded[1] if loaded else None


def earlier_specs(paths: Paths, ledger: Ledger, subject_name: Any, gate: Any, problems: list[Problem]) -> dict[str, dict[str, Any]]:
    """The specs of the runs already registered for this subject name on this gate."""
    out: dict[str, dict[str, Any]] = {}
    for run in ledger.runs.values():
        if run.gate == gate and run.subject.get("name") == subject_name:
            loaded = read_document(paths, spec_file(paths, run.id), run.sha256, f"run spec {run.id}", problems)
            if loaded is not None and isinstance(loaded[1], dict):
                out[run.id] = loaded[1]
    return out


def register_run(paths: Paths, source: Path, at: str | None = None) -> Registered:
    """Validate the run spec in `source` against the ledger and register it; refuse (writing
    nothing) with every problem found."""
    file = str(source)
    spec = load_json(source, file)
    problems = [p.at(file) for p in check_run_spec(spec)]
    data = b""
    if not problems:
        try:
            data = canonical.dumps(spec)
        except canonical.NotCanonicalizable as e:
            problems += [p.at(file) for p in e.problems]
    if problems:
        raise InputError(problems, f"{file}: not a valid run spec (SPEC §6); nothing was registered")
    with appending(paths) as app:
        ledger = app.ledger
        when = event_time(at, ledger)
        run_id = spec["id"]
        if run_id in ledger.runs:
            prior = ledger.runs[run_id]
            raise InputError([problem(file, f"run {run_id} is already registered (ledger entry {prior.index}, {prior.at}); a run id is used once", "id")])
        digest = sha256_hex(data)
        leaf = {"type": "run", "v": 1, "id": run_id, "sha256": digest, "subject": spec["subject"], "gate": spec["gate"], "at": when}
        if spec["gate"] not in ledger.gates:
            problems.append(problem(file, f"unknown gate {spec['gate']!r}", "gate", expected=", ".join(ledger.gates) or "a declared gate"))
        else:
            params = methodology_params(paths, ledger, spec["methodology"]["version"], problems)
            earlier = earlier_specs(paths, ledger, spec["subject"]["name"], spec["gate"], problems)
            run = RunEvent(run_id, digest, spec["subject"], spec["gate"], ledger.size, when)
            problems += [p.at(file) for p in check_run_rules(ledger, run, spec, params, earlier)]
        size = len(canonical.dumps(leaf))
        if size > MAX_LEAF_BYTES:
            problems.append(problem(file, "the run's ledger leaf would be too large (its subject is too long)", "subject", expected=f"at most {MAX_LEAF_BYTES} bytes", found=f"{size} bytes"))
        if problems:
            raise InputError(problems, f"cannot register run {run_id}; nothing was written")
        lines = app.prepare([leaf])
        target = spec_file(paths, run_id)
        # A file no ledger leaf refers to was never published (an interrupted register): replace it.
        write_new_file(target, data)
        app.write(lines)
    return Registered(run_id, digest, when, len(spec["items"]), spec["previous_run"])


def load_spec(paths: Paths, ledger: Ledger, run_id: str, problems: list[Problem]) -> dict[str, Any] | None:
    run = ledger.runs[run_id]
    loaded = read_document(paths, spec_file(paths, run_id), run.sha256, f"run spec {run_id}", problems)
    return loaded[1] if loaded else None

