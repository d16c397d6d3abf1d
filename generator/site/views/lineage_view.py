"""What a certificate page shows of its results' attempts (FORMAT.md, "Attempts and lineage"):
one row per attempt, oldest first, then the final result or the exclusion that ended the chain.
A sealed result's attempts show their numbers, statuses and times; notes and native results
appear once its details document is published."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AttemptRow:
    label: str  # "attempt 2", or "exclusion"
    relation: str  # what it repeats or sets aside, in words
    status: str
    status_text: str
    at: str
    note: str | None
    native_json: str | None
    final: bool


@dataclass(frozen=True)
class Lineage:
    item: str
    anchor: str  # the result's own row on the page
    shown: bool  # notes and native results are public
    rows: tuple[AttemptRow, ...]


def _relation(retry_of: Any) -> str:
    return f"retry of attempt {retry_of}" if isinstance(retry_of, int) else "first attempt"


def lineage_of(
    item: str, result: dict[str, Any], shown: bool, rules: list[str], words: Mapping[str, str]
) -> Lineage | None:
    """The rows of one result with earlier attempts (`result` the open result when `shown`, else
    the sealed one); None for a result tried once."""
    earlier = result.get("attempts")
    if not isinstance(earlier, list):
        return None
    rows = [
        AttemptRow(
            f"attempt {a['attempt']}",
            _relation(a.get("retry_of")),
            a["status"],
            words.get(a["status"], a["status"]),
            a["at"],
            a.get("note") if shown else None,
            json.dumps(a["native"], ensure_ascii=False, sort_keys=True) if shown and "native" in a else None,
            False,
        )
        for a in earlier
    ]
    status = result["status"]
    if status == "excluded":
        rule = result.get("rule")
        under = f" under rule {rule}: {rules[rule]}" if isinstance(rule, int) and 0 <= rule < len(rules) else ""
        label, relation = "exclusion", f"sets attempt {result['excludes']} aside{under}"
    else:
        label, relation = f"attempt {result['attempt']}", _relation(result.get("retry_of"))
    rows.append(
        AttemptRow(
            label,
            relation,
            status,
            words.get(status, status),
            result["at"],
            result.get("note") if shown else None,
            None,
            True,
        )
    )
    return Lineage(item, f"result-{item}", shown, tuple(rows))
