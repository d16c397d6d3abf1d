"""From a read Inspect log to the run-results document (format v1 §6): its source member (the log's
task, model, scorers, hash and size), every item's result, and the checks the document must pass."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from generator.core.generator_errors import problem
from generator.importers.common.field_values import MISSING, note_text, time_text
from generator.importers.common.mapping_rules import Mapping
from generator.importers.inspect.sample_reader import UNFINISHED, SampleReader
from generator.importers.inspect.sample_values import lookup, sample_label, sample_labels
from generator.verifier import (
    Problem,
    show,
)

if TYPE_CHECKING:  # inspect_ai ships its types (py.typed); at run time it is imported only to read a log
    from inspect_ai.log import EvalLog, EvalSample


def source_member(log: EvalLog, data: bytes) -> dict[str, Any]:
    """Where the results came from: the log's task, model and scorers, and its file's hash and size."""
    ev = log.eval
    return {
        "kind": "inspect",
        "task": ev.task,
        "model": ev.model,
        "scorers": [s.name for s in ev.scorers or []],
        "log_sha256": hashlib.sha256(data).hexdigest(),
        "log_size": len(data),
        "eval_id": ev.eval_id,
        "inspect_version": ev.packages.get("inspect_ai"),
    }


def results_from_log(
    log: EvalLog,
    data: bytes,
    run_id: str,
    run_at: str,
    items: list[str],
    answers: dict[str, dict[str, Any]],
    mapping: Mapping,
    file: str,
    map_file: str,
    evidence: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[Problem]]:
    """The run-results document of `log` (whose file's bytes are `data`) for the run `run_id`
    registered at `run_at` with `items`, listing `evidence` (the log's entry) if given, and
    every problem found."""
    problems: list[Problem] = []
    _check_log(log, mapping, run_id, run_at, file, problems)
    finished = time_text(log.stats.completed_at)
    by_item = _samples_by_item(log, mapping, run_id, items, file, problems)
    unrun = _unrun_items(log, mapping, run_id, items, by_item, file, problems)
    reader = SampleReader(file, map_file, mapping, answers, finished or "", problems)
    results: list[dict[str, Any]] = []
    why = (
        "cancelled" if log.status == "cancelled" else f"stopped by an error: {(log.error and log.error.message) or '?'}"
    )
    for item in items:
        exclusion = mapping.exclude.get(item)
        if item in unrun and exclusion is not None:
            # Never tried, so no attempt to set aside: the exclusion as v1 has it.
            results.append({"item": item, "status": "excluded", "rule": exclusion.rule, "note": exclusion.note})
        elif item in unrun:
            results.append({"item": item, "status": "not_run", "note": note_text(f"the evaluation was {why}")})
        elif len(by_item.get(item, [])) == 1:
            r = reader.result(item, by_item[item][0])
            if r is not None:
                results.append(r)
    doc: dict[str, Any] = {"type": "run-results", "v": 1, "run": run_id, "finished_at": finished, "results": results}
    if evidence is not None:
        doc["evidence"] = [evidence]
        # Every earlier attempt is in the log too (Inspect keeps a retried error with its
        # sample): a reader of the chain is told which bytes hold each attempt.
        for r in results:
            for a in r.get("attempts", []):
                a["evidence"] = [evidence["name"]]
    doc["source"] = source_member(log, data)
    return doc, problems


def _check_log(log: EvalLog, mapping: Mapping, run_id: str, run_at: str, file: str, problems: list[Problem]) -> None:
    """Record whether the log is of the task and model the mapping states, of a finished
    evaluation, and of one that started once run `run_id` was registered (at `run_at`)."""
    ev = log.eval
    for key, want, found in (("task", mapping.task, ev.task), ("model", mapping.model, ev.model)):
        if found != want:
            problems.append(
                problem(
                    file,
                    f"the log is of another {key} than the mapping states",
                    f"eval.{key}",
                    expected=want,
                    found=found,
                )
            )
    if log.status == "started" or time_text(log.stats.completed_at) is None:
        problems.append(
            problem(
                file,
                "the evaluation did not finish: the log has no completion time (an interrupted run, or one still "
                "going); import the log of a finished evaluation",
                "stats.completed_at",
                found=f"status {log.status}, completed_at {show(log.stats.completed_at)}",
            )
        )
    started = time_text(log.stats.started_at)
    if started is not None and started < run_at:
        problems.append(
            problem(
                file,
                f"the evaluation started before run {run_id} was registered: a run is registered before it happens",
                "stats.started_at",
                expected=f"{run_at} or later",
                found=started,
            )
        )


def _samples_by_item(
    log: EvalLog, mapping: Mapping, run_id: str, items: list[str], file: str, problems: list[Problem]
) -> dict[str, list[EvalSample]]:
    """The log's samples by the item of the run each is of, with a problem for a sample of no
    item or of one the run does not have, and for an item of more than one sample."""
    by_item: dict[str, list[EvalSample]] = defaultdict(list)
    known = set(items)
    for sample in log.samples or []:
        label = sample_label(sample)
        item = lookup(mapping.item, sample, None)
        if not isinstance(item, str):
            problems.append(
                problem(
                    file,
                    f"{label}: no item id at {mapping.item.text}",
                    expected="an item id",
                    found=None if item is MISSING else show(item),
                )
            )
        elif item not in known:
            problems.append(
                problem(file, f"{label} is of item {item}, which run {run_id} does not have", expected=show(items, 120))
            )
        else:
            by_item[item].append(sample)
    for item, samples in by_item.items():
        if len(samples) > 1:
            problems.append(
                problem(
                    file,
                    f"item {item} has {len(samples)} samples ({'; '.join(sample_labels(samples))}): one sample "
                    "an item, since a run spec has repetitions 1 (run the task with epochs=1)",
                )
            )
    return by_item


def _unrun_items(
    log: EvalLog,
    mapping: Mapping,
    run_id: str,
    items: list[str],
    by_item: dict[str, list[EvalSample]],
    file: str,
    problems: list[Problem],
) -> set[str]:
    """The run's items without a sample because the evaluation stopped before them: it was
    cancelled or stopped by an error and, when the items are the samples' ids and the log says
    which samples it planned, they were planned. Any other item without a sample is a problem."""
    ev = log.eval
    planned = {str(i) for i in ev.dataset.sample_ids} if ev.dataset.sample_ids is not None else None
    missing = [i for i in items if i not in by_item]
    unrun = {
        i
        for i in missing
        if log.status in UNFINISHED and (mapping.item.root != "id" or planned is None or i in planned)
    }
    if len(unrun) < len(missing):
        absent = [i for i in missing if i not in unrun]
        problems.append(
            problem(
                file,
                f"no sample of item(s) {', '.join(absent[:20])}{' …' if len(absent) > 20 else ''} of run {run_id}",
                "samples",
                expected="one sample for every item of the run spec",
                found=f"{len(log.samples or [])} samples, status {log.status}"
                + (" (a log written with log_samples=False keeps none)" if log.samples is None else ""),
            )
        )
    return unrun
