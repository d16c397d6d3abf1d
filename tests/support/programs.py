"""Small programs made through the real commands: item sources, and a program with a public and a secret gate,
items committed and some retired."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.commands.retire import retire_item
from generator.program.datadir import Paths
from tests.support.demo import REPO

AT0 = "2026-01-05T09:00:00Z"
# The demo's methodology (2026.1), which init publishes only when given: the test programs pin it.
METHODOLOGY = (REPO / "generator" / "defaults" / "methodology.json", REPO / "generator" / "defaults" / "methodology.md")


def item(item_id: str, gate: str, prompt: str = "Extract the account number.", **fields: Any) -> dict[str, Any]:
    """An item source; every kind and tier unless fields are given."""
    answer = fields or {
        "account_number": {"kind": "scalar", "tier": "critical", "value": "110-482-339201"},
        "summary": {"kind": "text", "tier": "high", "value": f"Summary of {item_id}"},
        "tags": {"kind": "array", "tier": "low", "value": ["transfer"]},
    }
    return {"id": item_id, "gate": gate, "prompt": prompt, "answer": answer}


def write_items(paths: Paths, items: list[dict[str, Any]], name: str = "items.yaml") -> Path:
    paths.items_dir.mkdir(parents=True, exist_ok=True)
    f = paths.items_dir / name
    f.write_text(yaml.safe_dump({"items": items}, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return f


def new_program(
    data: Path,
    private: Path | None = None,
    public_items: int = 2,
    secret_items: int = 3,
    retired: int | list[str] = 1,
    extra_items: list[dict[str, Any]] | None = None,
) -> Paths:
    """A small program: gates a (public) and b (secret); items a-001.. and b-0001.. committed;
    `retired` secret items retired (the first N, or the ids given), one a day from 2026-02-01."""
    paths = Paths(data, private or data / "private")
    gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
    init_program(
        paths, "Test program", "test.example.org/prog", gates, "A *test* program.", AT0, methodology=METHODOLOGY
    )
    items = [item(f"a-{i:03d}", "a") for i in range(1, public_items + 1)]
    items += [item(f"b-{i:04d}", "b") for i in range(1, secret_items + 1)]
    items += extra_items or []
    write_items(paths, items)
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    ids = [f"b-{i:04d}" for i in range(1, retired + 1)] if isinstance(retired, int) else retired
    for n, item_id in enumerate(ids, 1):
        retire_item(paths, item_id, f"Retired for test reason {n}.", f"2026-02-{n:02d}T00:00:00Z")
    return paths
