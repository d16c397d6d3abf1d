"""A Harbor job turned into a run-results file (format v1 §6): `transparency results from-harbor`.

`harbor run` writes a job's folder, `jobs_dir/<job_name>/`: the job's config.json, lock.json and
result.json, and a folder per trial with its result.json (the task's name, the agent and model, the
verifier's rewards, an exception if the trial failed), the agent's trajectory and the artifacts
copied out of the environment. It is read here as JSON (Harbor need not be installed). The mapping
file says what the job must be of and where the outputs are (docs/formats/harbor-mapping.md):

    agent: heron-agent            # required: every trial's agent_info.name
    model: heron/heron-agent-0.9  # required: every trial's agent_info.model_info.name
    answer_file: artifacts/answer.json  # default: where in a trial's folder the agent's answer is
    fields:                       # default for every field: answer.<field>
      tags: result.agent_result.metadata.tags
    similarity:                   # needed for every non-critical text field
      requested_action: reward.similarity_requested_action
    judge_labels:                 # the judge's ordinal label of each scored result, by dimension
      correctness: reward.correctness
    exclude:                      # items set aside under a rule of the run spec
      a-006: {rule: 0, note: "pasted HTML", at: "2026-12-05T13:06:30Z"}
    interrupted: false            # true: a job with no end was stopped for good

Each item of the run is a task of the job named by its id, and its trial decides its result: an
exception is `infra_error` (a time limit or a cancellation `not_run`); no answer file is `not_run`;
otherwise `scored`, from the agent's answer and the verifier's rewards. Earlier trials of a task that
failed (Harbor retried them) are the result's earlier attempts. A task the job never started is
`not_run` when the mapping says the job was interrupted, refused otherwise. The job's result, and
each trial's result, answer and trajectory, are listed as evidence (a trial's files of its item
only), so that the certificate binds the bytes Harbor wrote.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError
from generator.importers.common.mapping_rules import exclusion_problems, mapping_problems
from generator.importers.common.results_output import (
    Imported,
    evidence_entry,
    imported,
    results_check,
    results_target,
    write_results,
)
from generator.importers.common.run_context import RunContext, load_run
from generator.importers.harbor.harbor_job import TRAJECTORY, HarborJob, read_job
from generator.importers.harbor.harbor_mapping import load_mapping
from generator.importers.harbor.harbor_results import lookup, results_from_job
from generator.program.datadir import Paths
from generator.verifier import (
    Problem,
)

JOB_RESULT_NAME = "job-result.json"


def import_harbor_job(
    paths: Paths,
    folder: Path,
    run_id: str,
    mapping_path: Path,
    out: Path | None = None,
    force: bool = False,
    evidence: bool = True,
) -> Imported:
    """Write the run-results file of registered run `run_id` from the Harbor job in `folder`, as
    `mapping_path` says, listing the job's files as evidence unless `evidence` is false; refuse
    (writing nothing) with every problem found."""
    target, shown_out = results_target(paths, run_id, out, force)
    file, map_file = paths.show(folder), paths.show(mapping_path)
    mapping = load_mapping(mapping_path, map_file)
    job = read_job(folder, mapping.extra["answer_file"], paths.show)
    problems: list[Problem] = []
    run = load_run(paths, run_id, problems)
    problems += mapping_problems(mapping, run_id, run.items, run.answers, map_file)
    problems += exclusion_problems(mapping, run_id, run.items, run.rules, map_file)
    entries, evidence_of = _evidence(job, run, target, paths, problems, mapping) if evidence else ([], {})
    doc, found = results_from_job(job, run, mapping, (file, map_file), entries, evidence_of)
    problems += found
    if problems:
        raise InputError(problems, f"cannot import {file} as the results of run {run_id}; nothing was written")
    write_results(doc, target, force, results_check(run, target, shown_out), "the Harbor job")
    sha = {paths.show(folder / "result.json"): doc["source"]["job_result_sha256"]}
    return imported(target, doc, sha, entries)


def _evidence(
    job: HarborJob, run: RunContext, target: Path, paths: Paths, problems: list[Problem], mapping: Any
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The evidence entries of the job's files: its result (every item), and each trial's result,
    answer and trajectory (its item's only, so that on a secret gate each is published when its
    item is revealed); and the names of each trial's entries."""
    known = set(run.items)
    files: list[tuple[Path, str, bytes, list[str]]] = [
        (job.folder / "result.json", JOB_RESULT_NAME, job.result_data, list(run.items))
    ]
    of: dict[str, list[str]] = {}
    for trial in job.trials:
        item = lookup(mapping.item, trial, None)
        if item not in known:
            continue  # a trial of no item of the run is refused
        own = [(trial.folder / "result.json", f"{trial.name}.result.json", trial.result_data)]
        if trial.answer_data is not None:
            own.append((trial.answer_path, f"{trial.name}.answer.{trial.answer_path.name}", trial.answer_data))
        if trial.trajectory_data is not None:
            own.append((trial.folder / TRAJECTORY, f"{trial.name}.trajectory.json", trial.trajectory_data))
        files += [(p, name, data, [item]) for p, name, data in own]
        of[trial.name] = [name for _, name, _ in own]
    entries = []
    for path, name, data, items in files:
        entry = evidence_entry(path, target, name, paths.show(path), problems, "Harbor's file")
        if entry is not None:
            entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data), items=items)
            entries.append(entry)
    return entries, of
