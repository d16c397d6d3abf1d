"""The repository's demo: where it lies, a private copy of its data, a built site, and the bundled verify.py
imported as a module of its own."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from generator.program.datadir import Paths

REPO = Path(__file__).resolve().parents[2]
DEMO_DATA = REPO / "data"
BUNDLE = REPO / "generator" / "verify.py"


def load_bundle() -> ModuleType:
    """generator/verify.py, the one file every site ships, imported as a module of its own."""
    spec = importlib.util.spec_from_file_location("verify_bundle", BUNDLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_bundle"] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


def copy_demo_data(target: Path) -> Paths:
    shutil.copytree(DEMO_DATA, target, ignore=shutil.ignore_patterns(".lock", ".pending"))
    for key in [target / "private" / "signing.key", *(target / "private").glob("**/*.key")]:
        os.chmod(key, 0o600)  # git keeps no file modes: a clone's keys are world-readable
    return Paths(target, target / "private")


def demo_before(target: Path, first: bytes) -> Paths:
    """A copy of the demo program as it was before the first ledger line holding `first`: the
    ledger cut there, and none of the files the events after it wrote (the specs, certificates,
    results and private details of the runs they name; their label sets; the checkpoints archived
    past the cut and their cosignatures; the caches)."""
    paths = copy_demo_data(target)
    lines = paths.ledger_file.read_bytes().splitlines(keepends=True)
    cut = next(i for i, raw in enumerate(lines) if first in raw)
    paths.ledger_file.write_bytes(b"".join(lines[:cut]))
    cut_events = [json.loads(raw) for raw in lines[cut:]]
    registered = {str(e["id"]) for e in cut_events if e.get("type") == "run"}
    decided = registered | {str(e["run"]) for e in cut_events if e.get("type") in ("certificate", "label-set")}
    stale = [paths.private / "cache"]
    # The checkpoints the program archived, and their cosignatures, of sizes past the cut.
    stale += [p for p in (paths.data / "checkpoints").glob("*") if p.name.isdigit() and int(p.name) > cut]
    stale += [p for p in (paths.data / "cosignatures").glob("*.txt") if p.stem.isdigit() and int(p.stem) > cut]
    if any(e.get("type") == "label-set" for e in cut_events):
        stale.append(paths.private / "agreement")
    stale += [p for p in (paths.data / "timestamps").glob("*") if p.name.isdigit() and int(p.name) > cut]
    # What the reveals and methodologies past the cut published: the items' documents, the details
    # documents they made due, the parameters and prose.
    for e in cut_events:
        if e.get("type") == "reveal":
            stale.append(paths.reveal_file(str(e["id"])))
            stale += list(paths.certificates_dir.glob(f"*/details/{e['id']}.json"))
        if e.get("type") == "methodology":
            stale += list((paths.data / "methodology").glob(f"{e['version']}.*"))
    stale += [paths.runs_dir / f"{run}.json" for run in sorted(registered)]
    for run in sorted(decided):
        stale += [paths.certificates_dir / run, paths.private / "certificates" / run]
        stale += [paths.certificate_file(run), paths.private / "results" / f"{run}.json"]
    for p in stale:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
    return paths


@dataclass
class BuiltSite:
    paths: Paths
    out: Path

    def files(self) -> dict[str, bytes]:
        return {p.relative_to(self.out).as_posix(): p.read_bytes() for p in sorted(self.out.rglob("*")) if p.is_file()}
