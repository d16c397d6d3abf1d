"""Helpers to register and certify runs in tests through the real commands' functions, and the evidence files a
results file lists."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from generator.commands.certify import Certified, certify_run
from generator.commands.register import Registered, register_run
from generator.program.datadir import Paths
from generator.verifier import sha256_hex

RUN_AT = "2026-03-01T00:00:00Z"
FINISHED_AT = "2026-03-01T12:00:00Z"
CERT_AT = "2026-03-02T00:00:00Z"


def methodology_pin(paths: Paths, version: str = "2026.1") -> dict[str, str]:
    data = (paths.methodology_dir / f"{version}.json").read_bytes()
    return {"version": version, "sha256": sha256_hex(data)}


def run_spec(paths: Paths, run_id: str, gate: str, items: list[str], **over: Any) -> dict[str, Any]:
    spec = {
        "type": "run-spec",
        "v": 1,
        "id": run_id,
        "previous_run": None,
        "subject": {"id": "extractor", "name": "Extractor", "version": "1.0", "organization": "Acme AI"},
        "gate": gate,
        "question": "Does Extractor 1.0 extract customer-message fields reliably?",
        "items": items,
        "budget": {"max_tokens_per_item": 4096},
        "repetitions": 1,
        "metrics": ["pass_rate"],
        "exclusion_rules": ["The item's message is not in a supported language."],
        "methodology": methodology_pin(paths),
        "judge": {
            "provider": "Independent Grading Co",
            "model": "grader-large",
            "version": "3",
            "rubric_sha256": "ab" * 32,
            "seed": 7,
        },
    }
    spec.update(over)
    return spec


def named(err: Any, text: str, where: str | None = None) -> None:
    """Some problem of the InputError `err` says `text` (and sits at `where`, when given)."""
    hits = [p for p in err.problems if text in p.message]
    assert hits, err.describe()
    if where is not None:
        assert any(p.where == where for p in hits), err.describe()


def write_json(path: Path, value: Any, raw: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw if raw is not None else json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def register(paths: Paths, spec: dict[str, Any], at: str = RUN_AT) -> Registered:
    return register_run(paths, write_json(paths.data.parent / "in" / f"spec-{spec['id']}.json", spec), at)


# Outputs for the items of tests.support.programs.item(): account_number (critical scalar), summary (high
# text, reported similarity), tags (low array).
def scored(item_id: str, passing: bool = True, similarity: str = "0.95", **fields: Any) -> dict[str, Any]:
    out = {
        "account_number": {"name": "account_number", "output": "110-482-339201" if passing else "110-482-339202"},
        "summary": {"name": "summary", "output": f"Summary of {item_id}", "similarity": similarity},
        "tags": {"name": "tags", "output": ["transfer"]},
    }
    for k, v in fields.items():
        if v is None:
            out.pop(k)
        else:
            out[k] = v
    return {"item": item_id, "status": "scored", "fields": list(out.values())}


def results(
    run_id: str, rows: list[dict[str, Any]], proposed: Any = 90, rationale: Any = None, finished_at: str = FINISHED_AT
) -> dict[str, Any]:
    grader: dict[str, Any] = {"proposed_score": proposed}
    if rationale is not None:
        grader["rationale"] = rationale
    return {"type": "run-results", "v": 1, "run": run_id, "finished_at": finished_at, "results": rows, "grader": grader}


def certify(
    paths: Paths, doc: dict[str, Any] | None = None, raw: str | None = None, at: str = CERT_AT, **kw: Any
) -> Certified:
    name = (doc or {}).get("run", "raw")
    f = write_json(paths.data.parent / "in" / f"results-{name}.json", doc, raw)
    return certify_run(paths, f, at, **kw)


# What an Inspect log of a secret gate holds: the subject's outputs, so, beside the scores, the answers.
LOG = b"PK\x03\x04 an Inspect log: sample b-0001 answered 110-482-339201 (the secret answer)\n"


def listed(tmp: Path, name: str, data: bytes, items: list[str]) -> dict[str, Any]:
    """Write an evidence file beside the results and return its entry, as an evaluator gives it."""
    path = tmp / "in" / "evidence" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {
        "name": name,
        "path": f"evidence/{name}",
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "items": items,
    }
