"""Following things across the site: a ledger entry to its row, a committed item (sealed or
not) to its commitment row, a revealed item to the runs and certificates that used it.

Each is worked out once per build and answered in O(1): pages link thousands of them.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from generator.build.gather import RunInfo
from generator.core import layout
from generator.site.views.systems_view import SystemRun
from generator.verifier import Ledger


def ledger_entry_link(index: int) -> str:
    """Ledger entry `index`: its row on the ledger pages (path and fragment)."""
    return layout.ledger_entry(index)


def commitment_link(ledger: Ledger, item_id: str) -> str | None:
    """A committed item's row on the commitment (pool) pages, sealed or revealed; None for an
    id the ledger never committed."""
    position = ledger.commit_position(item_id)
    return None if position is None else layout.commitment_row(position, item_id)


def runs_by_item(
    runs: Iterable[RunInfo], rows: Iterable[SystemRun], revealed: Container[str]
) -> dict[str, list[SystemRun]]:
    """The runs whose run spec lists each revealed item, in ledger order: one look at each item
    of each run spec. Sealed items are left out (their pages do not exist, and a million of them
    would not fit)."""
    by_id = {r.run.id: r for r in rows}
    used: dict[str, list[SystemRun]] = {}
    for run in runs:
        row = by_id.get(run.id)
        if row is None:
            continue
        for item_id in run.spec.get("items", []):
            if item_id in revealed:
                used.setdefault(item_id, []).append(row)
    return used
