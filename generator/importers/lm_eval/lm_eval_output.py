"""An lm-evaluation-harness output turned into a run-results file (format v1 §6): `transparency results
from-lm-eval`.

lm-eval, run with `--output_path OUT --log_samples`, writes `OUT/<model>/results_<time>.json` and,
beside it, `samples_<task>_<time>.jsonl`. Both are read here as JSON (lm-eval need not be installed)
and both are listed as the results' evidence, so that the certificate binds the bytes lm-eval wrote.
The mapping file says what the output must be of and where the outputs are (docs/formats/lm-eval-mapping.md):

    task: quill_extract           # required: a task of the results, whose samples are read
    model: orca-parser-3.1        # required: the results' model_name, exactly
    item: doc.id                  # default: the item id is the document's `id`
    fields:                       # default for every field: response.<field>
      tags: doc.tags
    similarity:                   # needed for every non-critical text field
      requested_action: metric.similarity.requested_action
    judge_labels:                 # the judge's ordinal label of each scored result, by dimension
      correctness: metric.judge.correctness
    exclude:                      # items set aside under a rule of the run spec
      a-006: {rule: 0, note: "pasted HTML", at: "2026-12-05T12:22:20Z"}
    filter: none                  # the task's filter whose responses are read (default: the only one)

Every logged record of the filter is one item's result: `scored` (every field of the item's answer,
read from the response parsed as one JSON object unless the mapping says otherwise), or `not_run`
when the model gave an empty response. lm-eval has no per-record error or limit: an evaluation that
failed wrote no results. Refused, writing nothing: another task or model, an evaluation without an
end, one that started before the run was registered, repeats other than 1, a samples file whose
records the results do not count, a record of no item of the run, two records of one item, an item
with no record, a missing or extra field.
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
from generator.importers.common.run_context import load_run
from generator.importers.lm_eval.lm_eval_files import read_lm_eval_files
from generator.importers.lm_eval.lm_eval_mapping import load_mapping
from generator.importers.lm_eval.lm_eval_results import results_from_output
from generator.program.datadir import Paths
from generator.verifier import (
    Problem,
)


def import_lm_eval_output(
    paths: Paths,
    output: Path,
    run_id: str,
    mapping_path: Path,
    out: Path | None = None,
    force: bool = False,
    evidence: bool = True,
) -> Imported:
    """Write the run-results file of registered run `run_id` from lm-eval's output at `output`
    (its folder or its results file), as `mapping_path` says, listing the results and samples
    files as evidence unless `evidence` is false; refuse (writing nothing) with every problem."""
    target, shown_out = results_target(paths, run_id, out, force)
    map_file = paths.show(mapping_path)
    mapping = load_mapping(mapping_path, map_file)
    files = read_lm_eval_files(output, mapping.task, paths.show)
    shown = (paths.show(files.results_path), paths.show(files.samples_path), map_file)
    problems: list[Problem] = []
    listed: list[tuple[dict[str, Any], bytes]] = []
    if evidence:
        for path, data, file in (
            (files.results_path, files.results_data, shown[0]),
            (files.samples_path, files.samples_data, shown[1]),
        ):
            entry = evidence_entry(path, target, None, file, problems, "lm-eval's output")
            if entry is not None:
                listed.append((entry, data))
    run = load_run(paths, run_id, problems)
    for entry, data in listed:
        # Both files concern every item: on a secret gate they are published once all are revealed.
        entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data), items=list(run.items))
    entries = [entry for entry, _ in listed]
    problems += mapping_problems(mapping, run_id, run.items, run.answers, map_file)
    problems += exclusion_problems(mapping, run_id, run.items, run.rules, map_file)
    doc, found = results_from_output(files, run, mapping, shown, entries)
    problems += found
    if problems:
        raise InputError(problems, f"cannot import {shown[0]} as the results of run {run_id}; nothing was written")
    write_results(doc, target, force, results_check(run, target, shown_out), "lm-eval's output")
    sha = {shown[0]: doc["source"]["results_sha256"], shown[1]: doc["source"]["samples_sha256"]}
    return imported(target, doc, sha, entries)
