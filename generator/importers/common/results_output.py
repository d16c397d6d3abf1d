"""The results file an import writes (format v1 §6), whatever the harness: where it goes by default,
the evidence entry of each output file it lists (its name and its path from the results file's
folder), and the file written whole or not at all, after it is read back and checked as certify will
read it."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.importers.common.run_context import RunContext, check_run_id
from generator.program.datadir import Paths
from generator.program.evidence_files import read_evidence
from generator.program.journal import fsync_dir
from generator.program.results_file import check_results_shape, read_results
from generator.verifier import (
    Problem,
    is_evidence_name,
    show,
)

EVIDENCE_NAME_FORM = "letters, digits, '_', '-' and inner dots, at most 128 characters"


@dataclass(frozen=True)
class Imported:
    out: Path
    run: str
    finished_at: str
    counts: dict[str, int]  # results by status
    retried: int  # results with an attempt the harness retried
    sha256: dict[str, str]  # each output file read, as shown, to the SHA-256 of its bytes
    evidence: list[dict[str, Any]]  # the output files' entries in the results' evidence list


def imported(target: Path, doc: dict[str, Any], sha256: dict[str, str], evidence: list[dict[str, Any]]) -> Imported:
    counts = Counter(r["status"] for r in doc["results"])
    # An exclusion's last attempt is the record's final one, not a retry.
    retried = sum(1 for r in doc["results"] if len(r.get("attempts", [])) > (1 if r["status"] == "excluded" else 0))
    return Imported(target, doc["run"], doc["finished_at"], dict(counts), retried, sha256, evidence)


def default_results_file(paths: Paths, run_id: str) -> Path:
    return paths.private / "results" / f"{run_id}.json"


def results_target(paths: Paths, run_id: str, out: Path | None, force: bool) -> tuple[Path, str]:
    """Where an import of run `run_id` writes (`out`, else PRIVATE/results/<run>.json) and how it
    is shown, after the refusals every import makes first: a malformed run id, a file already
    there without `force`."""
    check_run_id(run_id)
    target = out or default_results_file(paths, run_id)
    shown = paths.show(target)
    refuse_existing(target, shown, force)
    return target, shown


def refuse_existing(target: Path, shown: str, force: bool) -> None:
    if not force and (target.exists() or target.is_symlink()):
        raise InputError([problem(shown, "already exists; refusing to overwrite it (--force replaces it)")])


def evidence_entry(
    path: Path, target: Path, name: str | None, file: str, problems: list[Problem], what: str = "the log"
) -> dict[str, Any] | None:
    """The evidence entry of the output file at `path`, without its hash, size and items (known
    once it is read): its name and its path from the folder of the results file `target`. None,
    with the problem recorded, when it cannot be one. `what` names the file in messages."""
    given = name is not None
    name = name if given else path.name
    if not is_evidence_name(name):
        if given:
            problems.append(
                problem(
                    "--evidence-name",
                    "not a name an evidence file can have: it is one path segment the certificate's folder joins",
                    expected=f"{EVIDENCE_NAME_FORM}, not ending in .sig, .tlog-proof or a Python suffix",
                    found=show(name),
                )
            )
        else:
            problems.append(
                problem(
                    file,
                    f"{what}'s file name {show(name)} cannot be the name of an evidence file: pass "
                    "--evidence-name NAME, such as --evidence-name run.eval, or --no-evidence to leave it out "
                    "of the results",
                    expected=EVIDENCE_NAME_FORM,
                )
            )
        return None
    if path.is_symlink():
        problems.append(
            problem(
                file,
                "is a symbolic link, and certify reads an evidence file only as a regular file (a link's target "
                "may change): give the file's own path, or --no-evidence",
            )
        )
        return None
    # Real folders on both sides: the kernel resolves a '..' after a linked folder from the
    # link's target, so a path computed from the names as given could miss the file.
    real = Path(os.path.realpath(path.parent)) / path.name
    try:
        rel = os.path.relpath(real, os.path.realpath(target.parent))
    except ValueError:  # another drive, on Windows: no relative path reaches it
        problems.append(
            problem(file, "has no path from the folder of the results file, which lists it: put them on one drive")
        )
        return None
    return {"name": name, "path": Path(rel).as_posix()}


def results_text(doc: dict[str, Any]) -> str:
    """A results file as the project writes them (data/private/results): one space of indent."""
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def results_check(run: RunContext, target: Path, shown: str) -> Callable[[dict[str, Any]], list[Problem]]:
    """The checks a written results file must pass: the rules of a results file for this run, and
    its evidence read again through the paths written, as certify will read them (a path that
    misses, or a file changed since it was read, is found now rather than at certify)."""

    def check(d: dict[str, Any]) -> list[Problem]:
        shape = check_results_shape(
            d, run.spec, run.answers, max_attempts=run.max_attempts, not_before=run.registered_at
        )
        unread: list[Problem] = read_evidence(d, target, shown, run.items)[1]
        return shape + unread

    return check


def write_results(
    doc: dict[str, Any],
    target: Path,
    force: bool,
    check: Callable[[dict[str, Any]], list[Problem]],
    made_from: str = "the log",
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
                problems, f"the results made from {made_from} break the rules of a results file; nothing was written"
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
