"""The evidence files a results file lists (FORMAT.md, "Evidence files"): read once by `certify`,
checked against the SHA-256 and size the evaluator gave, and kept where the rule of details
documents says: in the data directory at once on a public gate, in the private directory on a
secret gate until every item a file concerns is revealed."""

from __future__ import annotations

import os
import stat
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import layout
from generator.core.generator_errors import problem
from generator.program.datadir import Paths
from generator.verifier import (
    EVIDENCE_KEYS,
    Problem,
    check_keys,
    evidence_due,
    evidence_entry_problems,
    is_evidence_name,
    sha256_hex,
    show,
)

RESULTS_EVIDENCE_KEYS = (*EVIDENCE_KEYS, "path")


@dataclass(frozen=True)
class EvidenceFile:
    entry: dict[str, Any]  # as the certificate lists it: name, sha256, size, items
    data: bytes


def read_evidence(
    doc: dict[str, Any], source: Path, file: str, items: list[str]
) -> tuple[list[EvidenceFile], list[Problem]]:
    """The files the results' `evidence` member lists, in name order; every problem, each
    naming the entry and, for a file that differs, the file. A `path` is relative to the folder
    of the results file."""
    listed = doc.get("evidence")
    if "evidence" not in doc:
        return [], []
    if not isinstance(listed, list) or not listed:
        return [], [problem(file, "evidence is a non-empty list of files", "evidence", found=show(listed, 80))]
    problems: list[Problem] = []
    out: list[EvidenceFile] = []
    spec_items = set(items)
    seen: set[str] = set()
    for i, e in enumerate(listed):
        w = f"evidence[{i}]"
        found = check_keys(e, RESULTS_EVIDENCE_KEYS, where=w)
        if isinstance(e, dict):
            found += evidence_entry_problems(e, w, spec_items)
            if not (isinstance(e.get("path"), str) and e["path"]):
                found.append(Problem("the path of the file, from the results file's folder", where=f"{w}.path"))
            if e.get("name") in seen:
                found.append(Problem(f"evidence name {show(e.get('name'))} is given twice", where=f"{w}.name"))
        problems += [p.at(file) for p in found]
        if found or not isinstance(e, dict):
            continue
        seen.add(e["name"])
        path = source.parent / e["path"]
        data = _read_regular(path)
        if data is None:
            problems.append(problem(str(path), "evidence file cannot be read", f"{w}.path", expected="a regular file"))
            continue
        if len(data) != e["size"] or sha256_hex(data) != e["sha256"]:
            problems.append(
                problem(
                    str(path),
                    "evidence file differs from what the results file lists: it is not the file the evaluator produced",
                    f"{w}",
                    expected=f"{e['size']} bytes, SHA-256 {e['sha256']}",
                    found=f"{len(data)} bytes, SHA-256 {sha256_hex(data)}",
                )
            )
            continue
        entry = {"name": e["name"], "sha256": e["sha256"], "size": e["size"], "items": list(e["items"])}
        out.append(EvidenceFile(entry, data))
    return sorted(out, key=lambda f: f.entry["name"]), problems


def _read_regular(path: Path) -> bytes | None:
    """The file's bytes if it is a regular file (a link's target is not the evaluator's file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read()


def published_evidence(
    paths: Paths,
    doc: dict[str, Any],
    public: bool,
    revealed: Container[str],
    problems: list[Problem],
    names: Container[str] | None = None,
) -> list[tuple[str, bytes]]:
    """The certificate's evidence files that are due (or, with `names`, those named), read from
    the data directory (where `certify` and `retire` put them) and checked against the
    certificate: (site path, bytes)."""
    serial, listed = doc["serial"], doc.get("evidence")
    out = []
    for e in listed if isinstance(listed, list) else []:
        if not (isinstance(e, dict) and is_evidence_name(e.get("name")) and isinstance(e.get("items"), list)):
            continue  # the certificate's own check names it
        if not (e["name"] in names if names is not None else evidence_due(e, public, revealed)):
            continue
        file = paths.evidence_file(serial, e["name"])
        data = _read_regular(file)
        if data is None:
            problems.append(
                problem(
                    paths.show(file),
                    f"evidence file {e['name']} of certificate {serial} is due but missing from the data directory",
                    expected=f"a copy of {paths.show(paths.evidence_file(serial, e['name'], private=True))}",
                    found="nothing",
                )
            )
            continue
        if sha256_hex(data) != e.get("sha256") or len(data) != e.get("size"):
            problems.append(
                problem(
                    paths.show(file),
                    f"evidence file {e['name']} differs from what certificate {serial} lists",
                    expected=f"{e.get('size')} bytes, SHA-256 {e.get('sha256')}",
                    found=f"{len(data)} bytes, SHA-256 {sha256_hex(data)}",
                )
            )
            continue
        out.append((layout.evidence(serial, e["name"]), data))
    return out
