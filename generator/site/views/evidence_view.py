"""What a certificate page shows of its evidence files: each by name, size and SHA-256, linked
once published, with the items whose reveal it waits for until then."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from generator.core import layout
from generator.site.views import readable_view


@dataclass(frozen=True)
class EvidenceRow:
    name: str
    size: int
    size_text: str
    sha256: str
    items: tuple[str, ...]
    path: str | None  # the site path once published
    waiting_for: tuple[str, ...]  # the items still sealed that it concerns


def evidence_rows(doc: dict[str, Any], published: Container[str], revealed: Container[str]) -> tuple[EvidenceRow, ...]:
    rows = []
    for e in doc.get("evidence", []):
        rel = layout.evidence(doc["serial"], e["name"])
        rows.append(
            EvidenceRow(
                e["name"],
                e["size"],
                readable_view.size(e["size"]),
                e["sha256"],
                tuple(e["items"]),
                rel if rel in published else None,
                tuple(i for i in e["items"] if i not in revealed),
            )
        )
    return tuple(rows)
