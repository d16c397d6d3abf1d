"""An Inspect evaluation log turned into a run-results file (format v1 §6): `transparency results from-inspect`.

Inspect (the `inspect_ai` package) is optional. It is imported when a log is read and at no
other time, so every other command works without it. The log is read through `inspect_ai.log`'s
public API only, and read once: the bytes that are hashed for the results' `source` member are
the bytes that are parsed (`read_eval_log` over them), so the file on record is the file read.

The mapping file says what the log must be and where the outputs are (FORMAT.md, "Importing an
Inspect log"):

    task: extract_fields          # required: the log's eval.task, exactly
    model: openai/gpt-4o          # required: the log's eval.model, exactly
    item: metadata.item_id        # default "id": the sample id is the item id
    fields:                       # default for every field: completion.<field>
      tags: store.tags
    similarity:                   # needed for every non-critical text field
      requested_action: score.similarity.metadata.requested_action
    judge_labels:                 # the judge's ordinal label of each scored result, by dimension
      correctness: score.judge.metadata.correctness
    exclude:                      # items the operator sets aside under a rule of the run spec
      a-006: {rule: 0, note: "pasted HTML, stripped by the input filter", at: "2026-11-28T12:00:00Z"}
    accept_score_edits: false     # default: a score edited by hand after the evaluation is refused

A source is `completion` (the final completion's text), `completion.<key>…` (a member of the
completion parsed as a JSON object), `metadata.<key>…`, `store.<key>…`, or a scorer's
`score.<scorer>.value[.<key>…]`, `score.<scorer>.answer`, `score.<scorer>.metadata.<key>…`; each
`.<key>` goes one object member deeper. Every key of the mapping is checked, an unknown one is an
error, and a field or similarity that no item of the run has is an error too (a typo), as is an
exclusion of an item the run does not have or under a rule it does not have.

What each sample becomes, the sample's final attempt deciding:
- an error (`sample.error`): `infra_error`, the error message as the note; a cancellation that
  Inspect recorded as an error (`CancelledError(…)`, `Cancelled()`): `not_run`;
- a limit (`sample.limit`: messages, tokens, time, …): `not_run`, never a failure;
- no model output where the outputs are read from the completion: `not_run`;
- otherwise `scored`, with every field of the item's answer and nothing else.
Errors that Inspect retried (`retry_on_error`: `sample.error_retries`, oldest first) become the
result's earlier attempts (FORMAT.md, "Attempts and lineage"). In a log that was cancelled or
stopped by an error, an item whose sample never ran is `not_run`; in a log that succeeded it is
refused as missing. An item the mapping excludes is `excluded`: what its sample came to is the
last of its attempts, the one the exclusion sets aside.

A score edited after the evaluation (Inspect's `edit_score`, kept in the score's `history` with
who, when and why) is refused, naming the sample, the scorer and the edit, unless the mapping sets
`accept_score_edits: true`; then every edit goes into the result as its `score_edits` (FORMAT.md,
"Score edits"), and the certificate carries them.

The results list the log itself as an evidence file (FORMAT.md, "Evidence files"), so that the
certificate binds the bytes Inspect wrote, not only the results read from them.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from generator import __version__
from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.importers.common.mapping_rules import exclusion_problems, mapping_problems
from generator.importers.common.results_output import (
    Imported,
    evidence_entry,
    imported,
    results_check,
    results_target,
    write_results,
)
from generator.importers.common.run_context import load_run
from generator.importers.inspect.inspect_mapping import load_mapping
from generator.importers.inspect.inspect_results import results_from_log
from generator.program.datadir import Paths
from generator.verifier import (
    Problem,
)

if TYPE_CHECKING:  # inspect_ai ships its types (py.typed); at run time it is imported only to read a log
    from inspect_ai.log import EvalLog

# The routes that exist: the package is not on PyPI, so it is installed from a checkout or from a wheel built from
# one, each with the `inspect` extra; or inspect_ai alone is added to the environment that runs this code.
INSTALL_HINT = (
    f"{sys.executable} -m pip install 'inspect-ai>=0.3.200' (the environment running transparency); or, in a "
    "checkout of transparency, pip install -e '.[inspect]'; or from a wheel built there with "
    "'python3 -m pip wheel . --no-deps -w dist', "
    f"pip install 'dist/transparency_site-{__version__}-py3-none-any.whl[inspect]' (README, \"Install\")"
)


class InspectNotInstalled(TransparencyError):
    """Reading an Inspect log needs the optional inspect_ai package."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"reading an Inspect log needs the inspect_ai package, which cannot be imported ({why}); "
            f"install it with: {INSTALL_HINT}"
        )


# ---------------------------------------------------------------------------------------------
# The command


def inspect_log_module() -> ModuleType:
    """`inspect_ai.log`, imported now; InspectNotInstalled if it cannot be."""
    try:
        return importlib.import_module("inspect_ai.log")
    except ImportError as e:
        raise InspectNotInstalled(str(e)) from None


def read_log(path: Path, file: str) -> tuple[EvalLog, bytes]:
    """The log at `path`, parsed by Inspect from the bytes returned with it."""
    module = inspect_log_module()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError([problem(file, "file is missing")]) from None
    except OSError as e:
        raise InputError([problem(file, f"cannot read: {e.strerror}")]) from None
    try:
        log: EvalLog = module.read_eval_log(io.BytesIO(data), format="json" if path.suffix == ".json" else "eval")
    except Exception as e:  # whatever Inspect raises for a file it cannot read
        raise InputError(
            [problem(file, f"not an Inspect log that inspect_ai can read: {type(e).__name__}: {str(e)[:300]}")],
            "cannot read the Inspect log",
        ) from None
    return log, data


def import_inspect_log(
    paths: Paths,
    log_path: Path,
    run_id: str,
    mapping_path: Path,
    out: Path | None = None,
    force: bool = False,
    evidence_name: str | None = None,
    evidence: bool = True,
) -> Imported:
    """Write the run-results file of registered run `run_id` from the Inspect log at `log_path`,
    as `mapping_path` says, listing the log as an evidence file named `evidence_name` (default:
    its file name) unless `evidence` is false; refuse (writing nothing) with every problem found."""
    inspect_log_module()  # before anything else: without Inspect nothing below can be done
    target, shown_out = results_target(paths, run_id, out, force)
    file, map_file = paths.show(log_path), paths.show(mapping_path)
    if evidence_name is not None and not evidence:
        raise InputError(
            [problem("--evidence-name", "names the log's evidence file, which --no-evidence leaves out: give one")]
        )
    mapping = load_mapping(mapping_path, map_file)
    log, data = read_log(log_path, file)
    problems: list[Problem] = []
    entry = evidence_entry(log_path, target, evidence_name, file, problems) if evidence else None
    run = load_run(paths, run_id, problems)
    problems += mapping_problems(mapping, run_id, run.items, run.answers, map_file)
    problems += exclusion_problems(mapping, run_id, run.items, run.rules, map_file)
    if entry is not None:
        # The whole log concerns every item: on a secret gate it is published once all are revealed.
        entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data), items=list(run.items))
    doc, found = results_from_log(
        log, data, run_id, run.registered_at, run.items, run.answers, mapping, file, map_file, entry
    )
    problems += found
    if problems:
        raise InputError(problems, f"cannot import {file} as the results of run {run_id}; nothing was written")
    write_results(doc, target, force, results_check(run, target, shown_out))
    return imported(target, doc, {file: doc["source"]["log_sha256"]}, [entry] if entry is not None else [])
