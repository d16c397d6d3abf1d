"""Certificates as a buggy or dishonest operator could make them: written by hand, not by `certify`, with their
ledger leaves; edited after `certify` with the ledger leaf pointed at the new bytes; and built with a fork of
the generator whose own certificate checks are switched off, so that every hash, signature and checkpoint is
valid and only the verifier's recomputation can catch what was changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import generator.build.gather
import generator.verifier
from generator.build.writer import SiteWriter
from generator.commands.build import write_site
from generator.core import canonical_json
from generator.program.datadir import Paths
from generator.program.ledgerfile import appending
from generator.verifier import Report, loads_strict, sha256_hex, verify_site
from generator.verifier.rules.recheck import Recheck
from tests.support.runs import CERT_AT, RUN_AT

Mutate = Callable[[dict[str, Any]], None]


def register_by_hand(paths: Paths, spec: dict[str, Any], at: str = RUN_AT) -> None:
    data = canonical_json.dumps(spec)
    paths.runs_dir.mkdir(parents=True, exist_ok=True)
    (paths.runs_dir / f"{spec['id']}.json").write_bytes(data)
    with appending(paths, "test") as app:
        app.append(
            [
                {
                    "type": "run",
                    "v": 1,
                    "id": spec["id"],
                    "sha256": sha256_hex(data),
                    "subject": spec["subject"],
                    "gate": spec["gate"],
                    "at": at,
                }
            ]
        )


def certify_by_hand(paths: Paths, spec: dict[str, Any], serial: str, at: str = CERT_AT, **over: Any) -> dict[str, Any]:
    n = len(spec["items"])
    cert = {
        "type": "certificate",
        "v": 1,
        "serial": serial,
        "run": spec["id"],
        "issued_at": at,
        "expires_at": None,
        "subject": spec["subject"],
        "gate": spec["gate"],
        "methodology": spec["methodology"],
        "run_spec": {"path": f"runs/{spec['id']}.json", "sha256": sha256_hex(canonical_json.dumps(spec))},
        "finished_at": at,
        "results": [{"item": i, "status": "not_run", "note": "Not attempted."} for i in spec["items"]],
        "summary": {
            "total": n,
            "scored": 0,
            "passed": 0,
            "infra_error": 0,
            "not_run": n,
            "missing_label": 0,
            "excluded": 0,
            "pass_rate": "0.0000",
            "pass_rate_ci95": ["0.0000", "100.0000"],
            "worst_case_pass_rate": "0.0000",
            "best_case_pass_rate": "100.0000",
        },
        "grade": "D",
        "band": [0, 54],
        "worst_case_grade": "D",
        "best_case_grade": "S",
        "grader": {"record": "cd" * 32, "kept": 0, "dropped": 0},
        "score": 27,
        "score_rule": "midpoint-fallback",
        "verdict": "incomplete",
    }
    cert.update(over)
    data = canonical_json.dumps(cert)
    paths.certificates_dir.mkdir(parents=True, exist_ok=True)
    (paths.certificates_dir / f"{serial}.json").write_bytes(data)
    with appending(paths, "test") as app:
        app.append(
            [{"type": "certificate", "v": 1, "serial": serial, "run": spec["id"], "sha256": sha256_hex(data), "at": at}]
        )
    return cert


def forge(paths: Paths, serial: str, mutate: Mutate) -> None:
    """Edit a certificate in the data directory and point its ledger leaf at the new bytes."""
    path = paths.certificates_dir / f"{serial}.json"
    cert = loads_strict(path.read_bytes())
    mutate(cert)
    data = canonical_json.dumps(cert)
    path.write_bytes(data)
    lines = paths.ledger_file.read_bytes().splitlines()
    for n, line in enumerate(lines):
        leaf = loads_strict(line)
        if leaf["type"] == "certificate" and leaf["serial"] == serial:
            leaf["sha256"] = generator.verifier.sha256_hex(data)
            lines[n] = canonical_json.dumps(leaf)
    paths.ledger_file.write_bytes(b"".join(line + b"\n" for line in lines))


def forked_build(paths: Paths, out: Path, monkeypatch: pytest.MonkeyPatch) -> Report:
    """Build with the generator's certificate checks switched off, then verify the result."""
    with monkeypatch.context() as m:
        m.setattr(generator.build.gather, "examine_certificate", lambda *a, **k: Recheck())
        ctx = generator.build.gather.gather(paths)
        write_site(ctx, SiteWriter(out))
    return verify_site(out)


def setter(path: str, value: Any) -> Mutate:
    """A mutation that sets a dotted path (list indices as integers) to `value`."""

    def mutate(cert: dict[str, Any]) -> None:
        keys: list[Any] = [int(k) if k.isdigit() else k for k in path.split(".")]
        target: Any = cert
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value

    return mutate
