"""`transparency monitor SITE`: the monitor program (generator/monitor/) as a command: the event
types it can filter on, and one run over a site, returning its exit status."""

from __future__ import annotations

from pathlib import Path

from generator.monitor.event_lines import EVENT_TYPES
from generator.monitor.follow import run_monitor

__all__ = ["EVENT_TYPES", "follow_site"]


def follow_site(
    site: str,
    key: str | None,
    state_dir: Path | None,
    types: tuple[str, ...],
    gates: tuple[str, ...],
    subjects: tuple[str, ...],
    as_json: bool,
    witnesses: Path | None = None,
    max_age: str | None = None,
) -> int:
    """One run of the monitor over `site` (a folder or an https:// URL), with the views of the
    witnesses of the policy file `witnesses` compared (cosigned at most `max_age` ago, e.g. `36h`);
    its exit status (0 consistent, 1 an inconsistency, 2 unreadable or a bad argument)."""
    return run_monitor(
        site,
        key=key,
        state_dir=state_dir,
        types=types,
        gates=gates,
        subjects=subjects,
        as_json=as_json,
        witnesses=witnesses,
        max_age=max_age,
    )
