"""`transparency methodology publish`: a methodology version, its files and its ledger leaf."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import read_text
from generator.program.datadir import Paths
from generator.program.ledgerfile import LedgerAppender, appending, event_time
from generator.program.methodology_files import load_params, params_file, prose_file, render_prose
from generator.verifier import Problem, sha256_hex


@dataclass(frozen=True)
class Published:
    version: str
    sha256: str
    at: str


def publish(paths: Paths, params_path: Path, prose_path: Path, at: str | None = None) -> Published:
    """Validate and publish a methodology version: its files in data/, its leaf in the ledger."""
    with appending(paths, "methodology publish") as app:
        return stage_methodology(app, params_path, prose_path, at)


def stage_methodology(app: LedgerAppender, params_path: Path, prose_path: Path, at: str | None = None) -> Published:
    """Validate a methodology version and stage its files and leaf in `app`'s transaction."""
    problems: list[Problem] = []
    when = event_time(at, app.ledger, problems)  # reported with the files' problems, not alone
    params: dict[str, Any] | None = None
    prose: str | None = None
    try:
        params = load_params(params_path)
    except InputError as e:
        problems += e.problems
    try:
        prose = read_text(prose_path)
    except InputError as e:
        problems += e.problems
    if params is not None and prose is not None:
        try:
            render_prose(prose, params, str(prose_path))  # refuse a prose whose placeholders do not resolve
        except InputError as e:
            problems += e.problems
    if params is not None and params["version"] in app.ledger.methodologies:
        problems.append(
            problem(
                str(params_path),
                f"methodology {params['version']} is already published; a published version never changes, publish "
                "a new version",
                "version",
            )
        )
    if problems or params is None or prose is None:
        raise InputError(problems)
    data = canonical_json.dumps(params)
    version = params["version"]
    leaf = {
        "type": "methodology",
        "v": 1,
        "version": version,
        "sha256": sha256_hex(data),
        "at": when,
    }
    app.append([leaf])
    app.stage(params_file(app.paths, version), data)
    app.stage(prose_file(app.paths, version), prose.encode("utf-8"))
    return Published(version, leaf["sha256"], leaf["at"])
