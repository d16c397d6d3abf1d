"""`transparency results from-…`: the importers (generator/importers/) as commands: a harness's output
turned into the results file of a registered run, and the lines that report it."""

from __future__ import annotations

from pathlib import Path

from generator.importers.common.results_output import Imported
from generator.importers.harbor.harbor_output import import_harbor_job
from generator.importers.inspect.inspect_log import import_inspect_log
from generator.importers.lm_eval.lm_eval_output import import_lm_eval_output
from generator.program.datadir import Paths


def results_from_inspect(
    paths: Paths,
    log: Path,
    run_id: str,
    mapping: Path,
    out: Path | None,
    force: bool,
    evidence_name: str | None,
    evidence: bool,
) -> Imported:
    """Import the Inspect log `log` of run `run_id` under the mapping file `mapping` (see
    import_inspect_log); what was written."""
    return import_inspect_log(paths, log, run_id, mapping, out, force, evidence_name, evidence)


def results_from_lm_eval(
    paths: Paths, output: Path, run_id: str, mapping: Path, out: Path | None, force: bool, evidence: bool
) -> Imported:
    """Import lm-eval's output `output` of run `run_id` under the mapping file `mapping` (see
    import_lm_eval_output); what was written."""
    return import_lm_eval_output(paths, output, run_id, mapping, out, force, evidence)


def results_from_harbor(
    paths: Paths, folder: Path, run_id: str, mapping: Path, out: Path | None, force: bool, evidence: bool
) -> Imported:
    """Import the Harbor job in `folder` as run `run_id` under the mapping file `mapping` (see
    import_harbor_job); what was written."""
    return import_harbor_job(paths, folder, run_id, mapping, out, force, evidence)


def imported_lines(paths: Paths, done: Imported) -> list[str]:
    """What the command prints of an import: the file written and its counts, the log's hash,
    where the log is listed as evidence, and the next command."""
    counts = ", ".join(f"{n} {status}" for status, n in sorted(done.counts.items()))
    retried = f"; {done.retried} retried (kept as earlier attempts)" if done.retried else ""
    lines = [
        f"Wrote {paths.show(done.out)}: {sum(done.counts.values())} results ({counts}){retried}.",
        f"  run {done.run}, finished at {done.finished_at}",
    ]
    lines += [f"  {file}: sha256 {sha}" for file, sha in done.sha256.items()]
    if len(done.evidence) <= 3:
        lines += [f"  evidence {e['name']} (at {e['path']} from the results)" for e in done.evidence]
    else:  # a Harbor job lists several files a trial: the first and the last say where they are
        first, last = done.evidence[0], done.evidence[-1]
        lines.append(
            f"  {len(done.evidence)} evidence files, from {first['name']} (at {first['path']}) "
            f"to {last['name']} (at {last['path']}), paths from the results"
        )
    lines.append(f"Next: transparency certify {paths.show(done.out)}")
    return lines
