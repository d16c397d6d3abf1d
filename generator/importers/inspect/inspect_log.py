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

import contextlib
import hashlib
import importlib
import io
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from generator import __version__
from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.importers.inspect.inspect_mapping import exclusion_problems, load_mapping, mapping_problems
from generator.importers.inspect.inspect_results import results_from_log
from generator.program.datadir import Paths
from generator.program.documents import load_spec, methodology
from generator.program.evidence_files import read_evidence
from generator.program.journal import fsync_dir
from generator.program.ledgerfile import reading, replay_from
from generator.program.results_file import check_results_shape, read_results
from generator.program.sealed import locate_sealed, run_answers
from generator.verifier import (
    Problem,
    is_evidence_name,
    is_id,
    show,
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


@dataclass(frozen=True)
class Imported:
    out: Path
    run: str
    finished_at: str
    counts: dict[str, int]  # results by status
    retried: int  # results with an attempt Inspect retried
    log_sha256: str
    evidence: dict[str, Any] | None  # the log's entry in the results' evidence list


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


def default_results_file(paths: Paths, run_id: str) -> Path:
    return paths.private / "results" / f"{run_id}.json"


def evidence_entry(
    log_path: Path, target: Path, name: str | None, file: str, problems: list[Problem]
) -> dict[str, Any] | None:
    """The log's evidence entry, without its hash, size and items (known once it is read):
    its name and its path from the folder of the results file `target`. None, with the
    problem recorded, when it cannot be one."""
    given = name is not None
    name = name if given else log_path.name
    if not is_evidence_name(name):
        if given:
            problems.append(
                problem(
                    "--evidence-name",
                    "not a name an evidence file can have: it is one path segment the certificate's folder joins",
                    expected="letters, digits, '_', '-' and inner dots, at most 128 characters, not ending in .sig, "
                    ".tlog-proof or a Python suffix",
                    found=show(name),
                )
            )
        else:
            problems.append(
                problem(
                    file,
                    f"the log's file name {show(name)} cannot be the name of an evidence file: pass "
                    "--evidence-name NAME, such as --evidence-name run.eval, or --no-evidence to leave the log out "
                    "of the results",
                    expected="letters, digits, '_', '-' and inner dots, at most 128 characters",
                )
            )
        return None
    if log_path.is_symlink():
        problems.append(
            problem(
                file,
                "is a symbolic link, and certify reads an evidence file only as a regular file (a link's target "
                "may change): give the log's own path, or --no-evidence",
            )
        )
        return None
    # Real folders on both sides: the kernel resolves a '..' after a linked folder from the
    # link's target, so a path computed from the names as given could miss the log.
    log_real = Path(os.path.realpath(log_path.parent)) / log_path.name
    try:
        rel = os.path.relpath(log_real, os.path.realpath(target.parent))
    except ValueError:  # another drive, on Windows: no relative path reaches it
        problems.append(
            problem(file, "has no path from the folder of the results file, which lists it: put them on one drive")
        )
        return None
    return {"name": name, "path": Path(rel).as_posix()}


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
    if not is_id(run_id):
        raise InputError([problem("--run", "malformed run id", expected="^[a-z0-9][a-z0-9_-]{0,63}$", found=run_id)])
    target = out or default_results_file(paths, run_id)
    shown_out, file, map_file = paths.show(target), paths.show(log_path), paths.show(mapping_path)
    if not force and (target.exists() or target.is_symlink()):
        raise InputError([problem(shown_out, "already exists; refusing to overwrite it (--force replaces it)")])
    if evidence_name is not None and not evidence:
        raise InputError(
            [problem("--evidence-name", "names the log's evidence file, which --no-evidence leaves out: give one")]
        )
    mapping = load_mapping(mapping_path, map_file)
    log, data = read_log(log_path, file)
    problems: list[Problem] = []
    entry = evidence_entry(log_path, target, evidence_name, file, problems) if evidence else None
    with reading(paths):
        ledger, found, _ = replay_from(paths, save=False)
        if found:
            raise InputError(found, "cannot read the program's ledger; nothing was written")
        run = ledger.runs.get(run_id)
        if run is None:
            raise InputError(
                [
                    problem(
                        "--run", f"run {run_id} is not registered; register its spec first with 'transparency register'"
                    )
                ]
            )
        if run.id in ledger.certificate_of_run:
            problems.append(
                problem(
                    "--run",
                    f"run {run_id} is already certified ({ledger.certificate_of_run[run.id]}); "
                    "its results cannot change",
                )
            )
        spec = load_spec(paths, ledger, run.id, problems)
        if spec is None:
            raise InputError(problems, f"cannot read the spec of run {run_id}; nothing was written")
        items: list[str] = spec["items"]
        m = methodology(paths, ledger, spec["methodology"]["version"], problems)
        public = ledger.gates[run.gate].public
        wanted = {} if public else {i: c.commitment for i in items if (c := ledger.commit(i)) is not None}
        answers = run_answers(paths, ledger, items, public, locate_sealed(paths, wanted) if wanted else {}, problems)
    problems += mapping_problems(mapping, run_id, items, answers, map_file)
    problems += exclusion_problems(mapping, run_id, items, len(spec["exclusion_rules"]), map_file)
    if entry is not None:
        # The whole log concerns every item: on a secret gate it is published once all are revealed.
        entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data), items=list(items))
    doc, found = results_from_log(log, data, run_id, run.at, items, answers, mapping, file, map_file, entry)
    problems += found
    if problems:
        raise InputError(problems, f"cannot import {file} as the results of run {run_id}; nothing was written")
    max_attempts = m.max_attempts if m is not None else None

    def check(d: dict[str, Any]) -> list[Problem]:
        # The log read again through the path written, as certify will read it: a path that
        # misses, or a log changed since it was read, is found now rather than at certify.
        shape = check_results_shape(d, spec, answers, max_attempts=max_attempts, not_before=run.at)
        unread: list[Problem] = read_evidence(d, target, shown_out, items)[1]
        return shape + unread

    write_results(doc, target, force, check)
    counts = Counter(r["status"] for r in doc["results"])
    # An exclusion's last attempt is the sample's final one, not a retry.
    retried = sum(1 for r in doc["results"] if len(r.get("attempts", [])) > (1 if r["status"] == "excluded" else 0))
    return Imported(
        target,
        run_id,
        doc["finished_at"],
        dict(counts),
        retried,
        doc["source"]["log_sha256"],
        entry,
    )


def results_text(doc: dict[str, Any]) -> str:
    """A results file as the project writes them (data/private/results): one space of indent."""
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def write_results(
    doc: dict[str, Any], target: Path, force: bool, check: Callable[[dict[str, Any]], list[Problem]]
) -> None:
    """Write `doc` to `target` whole or not at all (mode 0600: a results file holds a secret
    gate's outputs), after reading the written bytes back with the results reader certify uses
    and checking them with `check`. Without `force`, never over an existing file."""
    shown = str(target)
    parent = target.parent
    made = not parent.exists()
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(results_text(doc))
            f.flush()
            os.fsync(f.fileno())
        problems = [p.at(shown) for p in check(read_results(tmp, shown).doc)]
        if problems:
            raise InputError(
                problems, "the results made from the log break the rules of a results file; nothing was written"
            )
        if force:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # fails, like O_EXCL, if a file appeared meanwhile
            except FileExistsError:
                raise InputError(
                    [problem(shown, "already exists; refusing to overwrite it (--force replaces it)")]
                ) from None
        fsync_dir(parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):
                parent.rmdir()  # only if this call made it and it is still empty
        raise
    tmp.unlink(missing_ok=True)
