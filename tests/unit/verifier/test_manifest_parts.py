"""The manifest's lists cut into parts and read back (docs/formats/v4.md) on lists long enough to
need several parts: the cut and the reading are each other's inverse, a row changed in one part
leaves every other part's bytes as they were, and a reading of parts that do not add up fails
naming the file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import rfc8785

from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.report import Report
from generator.verifier.site.manifest_parts import (
    MANIFEST_PART_ROWS,
    cut_manifest,
    manifest_part_path,
    read_manifest_parts,
)

ORIGIN = "parts.example.org/log"


def manifest(runs: int) -> dict[str, Any]:
    return {
        "type": "transparency-manifest",
        "v": 3,
        "origin": ORIGIN,
        "reveals": [{"id": f"a-{i:03d}", "path": f"reveals/a-{i:03d}.json"} for i in range(3)],
        "runs": [{"id": f"run-{i:05d}", "spec": f"runs/run-{i:05d}.json", "status": "certified"} for i in range(runs)],
        "certificates": [],
    }


def write(root: Path, m: dict[str, Any]) -> dict[str, Any]:
    index, parts = cut_manifest(m)
    for rel, data in parts:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / MANIFEST_PATH).write_bytes(rfc8785.dumps(index))
    return index


def read(root: Path) -> tuple[dict[str, Any] | None, Report]:
    report = Report(str(root))
    index = json.loads((root / MANIFEST_PATH).read_bytes())
    return read_manifest_parts(Site(root, report), index), report


def test_a_long_list_is_cut_into_full_parts_and_read_back_whole(tmp_path: Path) -> None:
    m = manifest(2 * MANIFEST_PART_ROWS + 5)
    index = write(tmp_path, m)
    assert index["v"] == 4 and index["runs"]["count"] == len(m["runs"])
    assert [p["count"] for p in index["runs"]["parts"]] == [MANIFEST_PART_ROWS, MANIFEST_PART_ROWS, 5]
    assert index["certificates"] == {"count": 0, "parts": []}
    whole, report = read(tmp_path)
    assert not report.failures, report.failures
    assert whole is not None and {k: whole[k] for k in ("reveals", "runs", "certificates")} == {
        k: m[k] for k in ("reveals", "runs", "certificates")
    }


def test_a_row_changed_rewrites_its_part_alone(tmp_path: Path) -> None:
    m = manifest(3 * MANIFEST_PART_ROWS)
    before = dict(cut_manifest(m)[1])
    m["runs"][MANIFEST_PART_ROWS + 7]["status"] = "withdrawn"
    m["runs"].append({"id": "run-new", "spec": "runs/run-new.json", "status": "open"})
    after = dict(cut_manifest(m)[1])
    changed = sorted(rel for rel, data in after.items() if before.get(rel) != data)
    assert changed == [manifest_part_path("runs", 1), manifest_part_path("runs", 3)]


def test_parts_that_do_not_add_up_fail_naming_the_file(tmp_path: Path) -> None:
    write(tmp_path, manifest(MANIFEST_PART_ROWS + 1))
    # The second part's one row dropped, its SHA-256 in the index made to agree: the count is
    # then wrong, and the part is named.
    rel = manifest_part_path("runs", 1)
    doc = json.loads((tmp_path / rel).read_bytes())
    doc["rows"] = []
    data = rfc8785.dumps(doc)
    (tmp_path / rel).write_bytes(data)
    index = json.loads((tmp_path / MANIFEST_PATH).read_bytes())
    index["runs"]["parts"][1]["sha256"] = hashlib.sha256(data).hexdigest()
    (tmp_path / MANIFEST_PATH).write_bytes(rfc8785.dumps(index))
    whole, report = read(tmp_path)
    assert whole is None
    assert [(p.file, p.where) for p in report.failures] == [(rel, "rows")]


def test_an_index_whose_parts_are_too_few_for_its_count_fails(tmp_path: Path) -> None:
    write(tmp_path, manifest(MANIFEST_PART_ROWS + 1))
    index = json.loads((tmp_path / MANIFEST_PATH).read_bytes())
    index["runs"]["count"] = 3 * MANIFEST_PART_ROWS
    (tmp_path / MANIFEST_PATH).write_bytes(rfc8785.dumps(index))
    whole, report = read(tmp_path)
    assert whole is None
    assert [(p.file, p.where) for p in report.failures] == [(MANIFEST_PATH, "runs.parts")]
