"""A judge-agreement panel of the tests: three public items, two human labellers on two dimensions (one of them
disagreeing with the judge once), the judge's labels, and the results a judged run reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.runs import scored, write_json

ITEMS = ["a-001", "a-002", "a-003"]
SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]
SCALE = [1, 2, 3, 4]
LABEL_AT = "2026-03-01T13:00:00Z"


# Two labellers on two dimensions; h2 disagrees with the judge on a-002 correctness.
HUMAN = [
    ("h1", "a-001", "correctness", 4),
    ("h2", "a-001", "correctness", 4),
    ("h1", "a-002", "correctness", 2),
    ("h2", "a-002", "correctness", 3),
    ("h1", "a-003", "correctness", 1),
    ("h1", "a-001", "completeness", 3),
    ("h1", "a-002", "completeness", 3),
]


JUDGE = {
    "a-001": {"correctness": 4, "completeness": 4},
    "a-002": {"correctness": 2, "completeness": 3},
    "a-003": {"correctness": 1, "completeness": 2},
}


def labels_file(tmp: Path, rows: list[tuple[str, str, str, Any]] = HUMAN, scale: Any = SCALE) -> Path:
    return write_json(
        tmp / "in" / "labels.json",
        {"scale": scale, "labels": [{"labeller": a, "item": i, "dimension": d, "label": v} for a, i, d, v in rows]},
    )


def judged(item: str) -> dict[str, Any]:
    return {**scored(item), "judge_labels": JUDGE[item]}
