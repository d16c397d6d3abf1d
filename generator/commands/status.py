"""`transparency status`: where the program stands, read from the ledger (and its replay cache).

What an operator asks before a command: which items are committed, sealed and revealed on each
gate, which runs are still open (registered, neither certified nor withdrawn), how many
certificates were issued and revoked, and whether the site is behind the ledger (the events the
last build did not publish). The ledger is replayed from the saved state when it still describes
the ledger's bytes, so a million-event program answers in a moment; nothing is written but that
cache.
"""

from __future__ import annotations

import json
from typing import Any

from generator.core.generator_errors import InputError
from generator.program.datadir import Paths, load_program
from generator.program.ledgerfile import reading, replay_from
from generator.state.build_cache import record_path


def program_status(paths: Paths) -> dict[str, Any]:
    """The program's state as JSON-ready values (the `--json` output)."""
    program, _ = load_program(paths)
    with reading(paths):
        ledger, problems, start = replay_from(paths)
    if problems:
        raise InputError(problems, "the ledger does not replay; nothing was read further")
    counts = ledger.gate_counts()
    gates = []
    for gate in ledger.gates.values():
        committed, revealed = counts.get(gate.id, (0, 0))
        gates.append(
            {
                "id": gate.id,
                "name": gate.name,
                "public": gate.public,
                "committed": committed,
                "sealed": committed - revealed,
                "revealed": revealed,
            }
        )
    open_runs = [
        {"id": r.id, "subject": r.subject.get("name"), "gate": r.gate, "registered_at": r.at}
        for r in ledger.runs.values()
        if ledger.decided_at(r.id) is None
    ]
    withdrawn = [{"id": w.run, "at": w.at, "reason": w.reason} for w in ledger.withdrawals.values()]
    published = _published_size(paths)
    return {
        "program": {"name": program.name, "origin": program.origin},
        "ledger": {"size": ledger.size, "last_at": ledger.last_at or None, "replayed": ledger.size - start.loaded},
        "gates": gates,
        "runs": {
            "registered": len(ledger.runs),
            "open": open_runs,
            "certified": len(ledger.certificates),
            "withdrawn": withdrawn,
        },
        "certificates": {"issued": len(ledger.certificates), "revoked": len(ledger.revocations)},
        "build": {
            "published_size": published,
            "not_built": None if published is None else max(ledger.size - published, 0),
        },
    }


def _published_size(paths: Paths) -> int | None:
    """The ledger size the last build published, from its record (a cache: None when absent)."""
    try:
        record = json.loads(record_path(paths).read_bytes())
        size = record["published"]["tree_size"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def status_text(status: dict[str, Any], paths: Paths | None = None) -> str:
    """The status in lines for people; `paths` names the private directory the build record is
    read from."""
    p, led, runs, certs, build = (
        status["program"],
        status["ledger"],
        status["runs"],
        status["certificates"],
        status["build"],
    )
    lines = [f"{p['name']} ({p['origin']})", f"Ledger: {led['size']} events, the last at {led['last_at'] or '-'}"]
    lines.append("Gates:")
    for g in status["gates"]:
        kind = "public" if g["public"] else "secret"
        lines.append(
            f"  {g['id']} ({kind}, {g['name']}): {g['committed']} committed, {g['sealed']} sealed, "
            f"{g['revealed']} revealed"
        )
    lines.append(
        f"Runs: {runs['registered']} registered, {len(runs['open'])} open, {runs['certified']} certified, "
        f"{len(runs['withdrawn'])} withdrawn"
    )
    lines += [
        f"  open: {r['id']} ({r['subject']}, gate {r['gate']}, registered {r['registered_at']})" for r in runs["open"]
    ]
    lines.append(f"Certificates: {certs['issued']} issued, {certs['revoked']} revoked")
    if build["published_size"] is None:
        # The record is private: a build made with another private directory is not seen here.
        private = paths.show(paths.private) if paths else "this private directory"
        if paths and not paths.private.is_dir():
            lines.append(
                f"Site: no private directory at {private}, so no build record to read; pass --private (or set "
                "TRANSPARENCY_PRIVATE) to the program's private directory"
            )
        else:
            lines.append(
                f"Site: no build recorded in {private}; run 'transparency build' (or pass the --private the builds "
                "used)"
            )
    elif build["not_built"]:
        lines.append(
            f"Site: the last build published {build['published_size']} events; {build['not_built']} not built yet "
            "(run 'transparency build')"
        )
    else:
        lines.append(f"Site: up to date with the ledger ({build['published_size']} events published)")
    return "\n".join(lines) + "\n"
