"""From lm-eval's results and logged samples to the run-results document (format v1 §6): the checks of
the evaluation (its task, model, end and start, one response a document), each item's record found
by the mapping's item source, each record read into a result, and the `source` member."""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from typing import Any

from generator.core.generator_errors import problem
from generator.importers.common.answer_fields import AnswerReader, excluded_result
from generator.importers.common.field_values import MISSING, descend, native_value, time_text
from generator.importers.common.mapping_rules import Mapping, Source
from generator.importers.common.run_context import RunContext
from generator.importers.lm_eval.lm_eval_files import LmEvalFiles
from generator.verifier import (
    Problem,
    show,
)

Record = tuple[int, dict[str, Any]]


def lookup(source: Source, record: dict[str, Any], parsed: dict[str, Any] | None) -> Any:
    """The value at `source` in a logged sample, or MISSING."""
    if source.root == "doc_id":
        d = record.get("doc_id")
        return str(d) if isinstance(d, int) and not isinstance(d, bool) else MISSING
    if source.root == "doc":
        return descend(record.get("doc"), source.path)
    if source.root == "target":
        return record.get("target", MISSING)
    if source.root == "response":
        text = response_text(record)
        return (MISSING if text is None else text) if not source.path else descend(parsed, source.path)
    name, rest = source.path[0], source.path[1:]
    metrics = record.get("metrics")
    if not (isinstance(metrics, list) and name in metrics and name in record):
        return MISSING
    return descend(record[name], rest)


def response_text(record: dict[str, Any]) -> str | None:
    """The model's response after the task's filter: the one entry of `filtered_resps`."""
    f = record.get("filtered_resps")
    return f[0] if isinstance(f, list) and len(f) == 1 and isinstance(f[0], str) else None


def times(results: dict[str, Any]) -> tuple[str | None, str | None]:
    """When the evaluation started (`date`, seconds since the epoch) and ended (that plus
    `total_evaluation_time_seconds`, which lm-eval writes as a string), in the project's form."""
    date = results.get("date")
    if not isinstance(date, int | float) or isinstance(date, bool) or not math.isfinite(date):
        return None, None
    total = results.get("total_evaluation_time_seconds")
    try:
        seconds = float(total) if isinstance(total, str | int | float) and not isinstance(total, bool) else math.nan
    except ValueError:
        seconds = math.nan
    end = time_text(date + seconds) if math.isfinite(seconds) and seconds >= 0 else None
    return time_text(date), end


def source_member(files: LmEvalFiles, mapping: Mapping, chosen: str | None) -> dict[str, Any]:
    """Where the results came from: lm-eval's task, model and filter, and both files' hashes and sizes."""
    r = files.results
    config: dict[str, Any] = r["config"] if isinstance(r.get("config"), dict) else {}
    hashes: dict[str, Any] = r["task_hashes"] if isinstance(r.get("task_hashes"), dict) else {}
    return {
        "kind": "lm-eval",
        "task": mapping.task,
        "model": r.get("model_name"),
        "model_backend": config.get("model"),
        "filter": chosen,
        "results_sha256": hashlib.sha256(files.results_data).hexdigest(),
        "results_size": len(files.results_data),
        "samples_sha256": hashlib.sha256(files.samples_data).hexdigest(),
        "samples_size": len(files.samples_data),
        "task_hash": hashes.get(mapping.task),
        "lm_eval_version": r.get("lm_eval_version"),
    }


def results_from_output(
    files: LmEvalFiles,
    run: RunContext,
    mapping: Mapping,
    shown: tuple[str, str, str],
    evidence: list[dict[str, Any]],
) -> tuple[dict[str, Any], list[Problem]]:
    """The run-results document of lm-eval's output for `run`, listing `evidence`, and every
    problem found. `shown` is how the results file, the samples file and the mapping are shown."""
    results_file, samples_file, map_file = shown
    problems: list[Problem] = []
    finished = _check_results(files.results, mapping, run, results_file, problems)
    records, chosen = _records_of_filter(files.records, mapping, samples_file, problems)
    _check_counts(files.results, mapping.task, records, chosen, samples_file, problems)
    by_item = _records_by_item(records, mapping, run, samples_file, problems)
    reader = AnswerReader(samples_file, map_file, mapping, problems, "the response", "filtered_resps")
    out: list[dict[str, Any]] = []
    for item in run.items:
        if len(by_item.get(item, [])) != 1:
            continue
        n, record = by_item[item][0]
        label = f"line {n} (sample {record.get('doc_id')})"
        r = _result(reader, item, label, record, run.answers.get(item), finished or "")
        exclusion = mapping.exclude.get(item)
        if exclusion is not None:
            r = _excluded(r, record, exclusion, finished or "", map_file, problems)
        out.append(r)
    doc: dict[str, Any] = {"type": "run-results", "v": 1, "run": run.run_id, "finished_at": finished, "results": out}
    if evidence:
        doc["evidence"] = evidence
    doc["source"] = source_member(files, mapping, chosen)
    return doc, problems


def _result(
    reader: AnswerReader, item: str, label: str, record: dict[str, Any], answer: dict[str, Any] | None, at: str
) -> dict[str, Any]:
    if answer is None:  # its answer could not be read, which is reported already
        return {"item": item, "status": "scored", "fields": []}
    text = response_text(record)
    if text is None:
        reader.add(
            f"{label}: filtered_resps is one response, a string",
            "filtered_resps",
            found=show(record.get("filtered_resps"), 120),
        )
        return {"item": item, "status": "scored", "fields": []}
    if reader.reads_answer(answer) and not text.strip():
        return {"item": item, "status": "not_run", "note": "the model gave no output"}
    return reader.scored(item, label, answer, text, lambda source, parsed: lookup(source, record, parsed))


def _excluded(
    final: dict[str, Any], record: dict[str, Any], exclusion: Any, finished: str, map_file: str, problems: list[Problem]
) -> dict[str, Any]:
    """An item set aside: what its record came to is the one attempt the exclusion sets aside,
    kept with lm-eval's metrics of it. lm-eval keeps no time per record, so the attempt is dated
    the evaluation's end, and the exclusion cannot be earlier (nor, by the chain rules, later)."""
    last: dict[str, Any] = {"attempt": 1, "retry_of": None, "status": final["status"]}
    if "note" in final:
        last["note"] = final["note"]
    last["at"] = finished
    metrics = record.get("metrics")
    names = sorted({m for m in metrics if isinstance(m, str)}) if isinstance(metrics, list) else []
    scores = {m: native_value(record[m]) for m in names if m in record}
    if scores:
        last["native"] = {"scores": scores}
    if exclusion.at != finished:
        problems.append(
            problem(
                map_file,
                f"the exclusion of item {final['item']} sets aside a record lm-eval dates only by the evaluation's end "
                "(it keeps no time per record), and no time of a result may be later than that end: the exclusion "
                "is dated at it",
                f"exclude.{final['item']}.at",
                expected=finished,
                found=exclusion.at,
            )
        )
    return excluded_result(final["item"], exclusion, [last])


def _check_results(
    results: dict[str, Any], mapping: Mapping, run: RunContext, file: str, problems: list[Problem]
) -> str | None:
    """Record whether the results are of the mapping's task and model, of a finished evaluation,
    and of one that started once the run was registered; its end."""
    tasks = results.get("results")
    if not (isinstance(tasks, dict) and mapping.task in tasks):
        problems.append(
            problem(
                file,
                f"the results hold no task {mapping.task}: the output is of another task than the mapping states",
                "results",
                expected=mapping.task,
                found=show(sorted(tasks) if isinstance(tasks, dict) else tasks, 200),
            )
        )
    if results.get("model_name") != mapping.model:
        problems.append(
            problem(
                file,
                "the output is of another model than the mapping states (lm-eval's model_name: the model's name "
                "from --model_args pretrained=, model=, path= or engine=)",
                "model_name",
                expected=mapping.model,
                found=show(results.get("model_name")),
            )
        )
    started, finished = times(results)
    if finished is None:
        problems.append(
            problem(
                file,
                "the evaluation did not finish: the results have no start (date) and duration "
                "(total_evaluation_time_seconds); import the output of a finished evaluation",
                "date",
                found=f"date {show(results.get('date'))}, total {show(results.get('total_evaluation_time_seconds'))}",
            )
        )
    if started is not None and started < run.registered_at:
        problems.append(
            problem(
                file,
                f"the evaluation started before run {run.run_id} was registered: a run is registered before it happens",
                "date",
                expected=f"{run.registered_at} or later",
                found=started,
            )
        )
    configs = results.get("configs")
    config = configs.get(mapping.task) if isinstance(configs, dict) else None
    repeats = config.get("repeats", 1) if isinstance(config, dict) else 1
    if repeats != 1:
        problems.append(
            problem(
                file,
                "the task was run with repeats > 1: one response an item, since a run spec has repetitions 1",
                f"configs.{mapping.task}.repeats",
                expected="1",
                found=show(repeats),
            )
        )
    return finished


def _records_of_filter(
    records: list[Record], mapping: Mapping, file: str, problems: list[Problem]
) -> tuple[list[Record], str | None]:
    """The records of the mapping's filter (by default the only one logged)."""
    filters = sorted({str(r.get("filter")) for _, r in records})
    wanted = mapping.extra.get("filter")
    if wanted is None and len(filters) > 1:
        problems.append(
            problem(
                file,
                "the task logs a record per document for each of its filters: say in the mapping which filter's "
                "responses are read",
                "filter",
                expected="filter: <one of " + ", ".join(filters) + ">",
            )
        )
        return [], None
    chosen = wanted if wanted is not None else (filters[0] if filters else None)
    if wanted is not None and wanted not in filters:
        problems.append(
            problem(file, f"no record of filter {wanted}", "filter", expected=show(filters, 200), found=wanted)
        )
    return [(n, r) for n, r in records if str(r.get("filter")) == chosen], chosen


def _check_counts(
    results: dict[str, Any], task: str, records: list[Record], chosen: str | None, file: str, problems: list[Problem]
) -> None:
    """A record for every document the results count, one response each: fewer records is a
    samples file cut short (or of another evaluation), more is one of repeats."""
    counted = results.get("n-samples")
    of_task = counted.get(task) if isinstance(counted, dict) else None
    effective = of_task.get("effective") if isinstance(of_task, dict) else None
    if isinstance(effective, int) and len(records) != effective:
        problems.append(
            problem(
                file,
                f"{len(records)} record(s) of filter {chosen}, and the results count {effective} documents of task "
                f"{task}: the samples are not those of these results, or were cut short",
                expected=f"{effective} records",
            )
        )
    for n, r in records:
        resps = r.get("resps")
        if not (isinstance(resps, list) and len(resps) == 1):
            problems.append(
                problem(
                    file,
                    f"line {n}: one response a document (repeats 1)",
                    "resps",
                    found=f"{len(resps)} responses" if isinstance(resps, list) else show(resps, 80),
                )
            )


def _records_by_item(
    records: list[Record], mapping: Mapping, run: RunContext, file: str, problems: list[Problem]
) -> dict[str, list[Record]]:
    """The records by the item of the run each is of, with a problem for a record of no item or
    of one the run does not have, for an item of more than one record and for one of none."""
    by_item: dict[str, list[Record]] = defaultdict(list)
    known = set(run.items)
    for n, record in records:
        item = lookup(mapping.item, record, None)
        label = f"line {n} (sample {record.get('doc_id')})"
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
                problem(
                    file,
                    f"{label} is of item {item}, which run {run.run_id} does not have",
                    expected=show(run.items, 120),
                )
            )
        else:
            by_item[item].append((n, record))
    for item, found in by_item.items():
        if len(found) > 1:
            lines = ", ".join(str(n) for n, _ in found)
            problems.append(problem(file, f"item {item} has {len(found)} records (lines {lines}): one record an item"))
    missing = [i for i in run.items if i not in by_item]
    if missing:
        problems.append(
            problem(
                file,
                f"no record of item(s) {', '.join(missing[:20])}{' …' if len(missing) > 20 else ''} "
                f"of run {run.run_id}",
                expected="one record for every item of the run spec",
                found=f"{len(records)} records",
            )
        )
    return by_item
