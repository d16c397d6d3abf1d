"""Reading the documents the ledger refers to: each one checked against the hash its leaf holds.

The commands and the build read run specs, methodology parameters and certificates here, so
that a document is never used unless it is byte for byte the one the ledger committed to.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from generator.core.generator_errors import problem
from generator.program.datadir import Paths
from generator.program.methodology_files import params_file
from generator.verifier import (
    FormatError,
    Ledger,
    Methodology,
    Problem,
    effective_spec,
    loads_strict,
    parse_canonical,
    parse_methodology,
    sha256_hex,
)


def read_document(
    paths: Paths, path: os.PathLike[str], want_sha: str, what: str, problems: list[Problem], again: bool = False
) -> tuple[bytes, Any] | None:
    """The document's bytes and parsed form if its bytes hash to `want_sha` and are canonical
    JSON; else None, with a problem added. `again`: bytes with this SHA-256 were already found
    canonical in this very run (the build reads each certificate twice), so they are parsed
    without serialising them once more to compare: the same bytes, the same answer."""
    file = paths.show(path)  # type: ignore[arg-type]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        problems.append(problem(file, f"{what} is missing; the ledger refers to it"))
        return None
    digest = sha256_hex(data)
    if digest != want_sha:
        problems.append(
            problem(
                file,
                f"{what} does not hash to the value in the ledger (a published document never changes)",
                expected=want_sha,
                found=digest,
            )
        )
        return None
    try:
        return data, loads_strict(data) if again else parse_canonical(data)
    except FormatError as e:
        problems.append(problem(file, f"{what}: {e}"))
        return None


def load_spec(paths: Paths, ledger: Ledger, run_id: str, problems: list[Problem]) -> dict[str, Any] | None:
    run = ledger.runs[run_id]
    """The run's spec, checked against its leaf, as the rules read it: a drawn run's with the
    items its draw recorded (verifier.effective_spec)."""
    loaded = read_document(paths, paths.run_spec_file(run_id), run.sha256, f"run spec {run_id}", problems)
    return effective_spec(loaded[1], ledger) if loaded and isinstance(loaded[1], dict) else None


def methodology(paths: Paths, ledger: Ledger, version: Any, problems: list[Problem]) -> Methodology | None:
    """The published methodology `version`, checked against the ledger's hash and parsed; None
    if it is unknown (or, with a problem recorded, unreadable)."""
    event = ledger.methodologies.get(version) if isinstance(version, str) else None
    if event is None:
        return None
    file = params_file(paths, event.version)
    loaded = read_document(paths, file, event.sha256, f"parameters of methodology {event.version}", problems)
    if loaded is None:
        return None
    try:
        return parse_methodology(loaded[1])
    except FormatError as e:
        problems.append(problem(paths.show(file), str(e)))
        return None


def read_or_none(path: Path) -> bytes | None:
    """A file's bytes, or None if it cannot be read: for a reader whose caller reports what is
    wrong with the file some other way (the answer loader, say)."""
    try:
        return path.read_bytes()
    except OSError:
        return None
