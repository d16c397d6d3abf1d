"""`transparency register`: a run's spec fixed in the ledger before the run happens (format v1 §4, §6).

A run spec names the subject, the gate, the items and the methodology it will be judged by.
Registering it first is what makes a certificate worth reading: the operator cannot pick the
items after seeing the outputs, run a subject ten times and publish the best attempt (every
attempt is a ledger leaf, chained by `previous_run`), or let a subject see a sealed item twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import load_json
from generator.program.datadir import Paths
from generator.program.documents import load_spec, methodology
from generator.program.ledgerfile import appending, event_time
from generator.verifier import (
    MAX_LEAF_BYTES,
    Ledger,
    Problem,
    RunEvent,
    check_run_rules,
    check_run_spec,
    draw_required_problem,
    effective_spec,
    sha256_hex,
)


@dataclass(frozen=True)
class Registered:
    id: str
    sha256: str
    at: str
    items: int
    previous_run: str | None
    round: int | None = None  # the beacon round a drawn run's items wait for


def earlier_specs(
    paths: Paths, ledger: Ledger, subject_name: Any, gate: Any, problems: list[Problem]
) -> dict[str, dict[str, Any]]:
    """The specs of the runs already registered for this subject name on this gate."""
    out: dict[str, dict[str, Any]] = {}
    for run in ledger.runs_by_subject.get((str(subject_name), str(gate)), []):
        spec = load_spec(paths, ledger, run.id, problems)
        if isinstance(spec, dict):
            out[run.id] = spec
    return out


def register_run(paths: Paths, source: Path, at: str | None = None) -> Registered:
    """Validate the run spec in `source` against the ledger and register it; refuse (writing
    nothing) with every problem found."""
    return register_runs(paths, [source], at)[0]


def register_runs(paths: Paths, sources: list[Path], at: str | None = None) -> list[Registered]:
    """Register several run specs in order under one lock and one ledger replay, all or
    nothing. A spec may name an earlier spec of the same batch as its previous_run only once
    that run is decided, so a batch holds at most one run per subject and gate."""
    # Each spec with its canonical bytes, or None when its shape is wrong: the ledger's rules are
    # still checked on it when the members they read are sound, so that one run reports both.
    loaded: list[tuple[str, dict[str, Any], bytes | None]] = []
    problems: list[Problem] = []
    for source in sources:
        file = str(source)
        try:
            spec = load_json(source, file, problems)  # its non-integers are reported with its other problems
        except InputError as e:
            problems += e.problems
            continue
        shape = check_run_spec(spec)
        data = None
        if not shape:
            try:
                data = canonical_json.dumps(spec)
            except canonical_json.NotCanonicalizable as e:
                shape += e.problems
        problems += [p.at(file) for p in shape]
        if isinstance(spec, dict) and not any(_blocks_rules(p) for p in shape):
            loaded.append((file, spec, data))
    with appending(paths, "register") as app:
        ledger = app.ledger
        when = event_time(at, ledger, problems)
        if problems and not loaded:
            raise InputError(
                problems, "not a valid run spec (format v1 §6, docs/formats/v1.md); nothing was registered"
            )
        registered: list[Registered] = []
        lines: list[bytes] = []
        for file, spec, data in loaded:
            leaf = _check_new_run(paths, ledger, file, spec, data or b"", when, problems)
            if leaf is None or data is None:
                continue
            try:
                lines += app.prepare([leaf])  # later specs of the batch see this run in the replayed state
            except InputError as e:
                problems += e.problems
                continue
            count = spec["draw"]["count"] if "draw" in spec else len(spec["items"])
            drawn = spec["draw"]["round"] if "draw" in spec else None
            registered.append(Registered(spec["id"], leaf["sha256"], when, count, spec["previous_run"], drawn))
        if problems:
            what = f"run {loaded[0][1]['id']}" if len(loaded) == 1 else f"these {len(loaded)} runs"
            raise InputError(problems, f"cannot register {what}; nothing was written")
        app.tx.add_lines(lines)
        for _, spec, data in loaded:
            assert data is not None  # a spec without its bytes was refused above
            app.stage(paths.run_spec_file(spec["id"]), data)
    return registered


# The members the ledger's rules read (the rest, such as the budget, the question or the
# metrics, are checked by shape alone).
_RULE_MEMBERS = ("id", "previous_run", "subject", "gate", "items", "draw", "methodology")


def _blocks_rules(p: Problem) -> bool:
    """Whether a shape problem leaves the ledger's rules nothing sound to check."""
    root = re.split(r"[.\[]", p.where, maxsplit=1)[0]
    if root:
        return root in _RULE_MEMBERS
    return p.message.startswith("missing") and any(repr(k) in p.message for k in _RULE_MEMBERS)


def _check_new_run(
    paths: Paths, ledger: Ledger, file: str, spec: dict[str, Any], data: bytes, when: str, problems: list[Problem]
) -> dict[str, Any] | None:
    """The run leaf of a valid new spec, or None with its problems recorded."""
    before = len(problems)
    run_id = spec["id"]
    if run_id in ledger.runs:
        prior = ledger.runs[run_id]
        problems.append(
            problem(
                file,
                f"run {run_id} is already registered (ledger entry {prior.index}, {prior.at}); a run id is used once",
                "id",
            )
        )
        return None
    digest = sha256_hex(data)
    leaf = {
        "type": "run",
        "v": 1,
        "id": run_id,
        "sha256": digest,
        "subject": spec["subject"],
        "gate": spec["gate"],
        "at": when,
    }
    if spec["gate"] not in ledger.gates:
        problems.append(
            problem(
                file, f"unknown gate {spec['gate']!r}", "gate", expected=", ".join(ledger.gates) or "a declared gate"
            )
        )
    # Look-alike names and a subject id under another name: the ledger's own rule, reported
    # against the spec rather than the ledger line it would have become.
    problems += [p.at(file) for p in ledger.subject_problems(spec["subject"])]
    params = methodology(paths, ledger, spec["methodology"]["version"], problems)
    if spec["gate"] not in ledger.gates:
        return None  # every item would also be "not of the run's gate": the gate is the one problem
    earlier = earlier_specs(paths, ledger, spec["subject"]["name"], spec["gate"], problems)
    run = RunEvent(run_id, digest, spec["subject"], spec["gate"], ledger.size, when)
    rules = check_run_rules(ledger, run, effective_spec(spec, ledger), params, earlier)
    published = {v: m for v in ledger.methodologies if (m := methodology(paths, ledger, v, problems)) is not None}
    required = draw_required_problem(ledger, run, spec, published)
    rules += [required] if required is not None else []
    if not ledger.methodologies:
        # A new program publishes no methodology until it gives its own (init --methodology, or
        # later): say how, rather than only that the pinned version is unknown.
        problems.append(
            problem(
                file,
                "the program has published no methodology yet, so no run can pin one: publish the program's own "
                "first with 'transparency methodology publish PARAMS.json --prose PROSE.md', then pin its version "
                "and SHA-256 in the run spec",
                "methodology.version",
                found=spec["methodology"]["version"],
            )
        )
        rules = [p for p in rules if p.where != "methodology.version"]
    problems += [p.at(file) for p in rules]
    size = len(canonical_json.dumps(leaf))
    if size > MAX_LEAF_BYTES:
        problems.append(
            problem(
                file,
                "the run's ledger leaf would be too large (its subject is too long)",
                "subject",
                expected=f"at most {MAX_LEAF_BYTES} bytes",
                found=f"{size} bytes",
            )
        )
    return leaf if len(problems) == before else None
