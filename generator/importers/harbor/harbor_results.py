"""From a read Harbor job to the run-results document (format v1 §6): the checks of the job (its start,
its end or the operator's word that it was interrupted, every trial's agent and model), each item's
trials found by the mapping's item source, what each trial came to (an exception, a time limit, no
answer, or scored from the agent's answer and the verifier's rewards), a task's earlier failed
trials as its earlier attempts, and the `source` member."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from generator.core.generator_errors import problem
from generator.importers.common.answer_fields import AnswerReader, excluded_result
from generator.importers.common.field_values import MISSING, descend, native_value, note_text, time_text
from generator.importers.common.mapping_rules import Exclusion, Mapping, Source
from generator.importers.common.run_context import RunContext
from generator.importers.harbor.harbor_job import HarborJob, Trial
from generator.verifier import (
    SCORED,
    Problem,
    show,
)

# Harbor's exceptions that stop a trial by a limit or a cancellation, not by a failure of the
# infrastructure: the item was not run, which is never a failure of the subject.
LIMITS = ("AgentTimeoutError",)
CANCELLATIONS = ("CancelledError", "KeyboardInterrupt")


def lookup(source: Source, trial: Trial, parsed: dict[str, Any] | None) -> Any:
    """The value at `source` in a trial, or MISSING."""
    if source.root == "task_name":
        name = trial.result.get("task_name")
        return name if isinstance(name, str) else MISSING
    if source.root == "answer":
        if trial.answer_data is None:
            return MISSING
        if source.path:
            return descend(parsed, source.path)
        try:
            return trial.answer_data.decode("utf-8")
        except UnicodeDecodeError:
            return MISSING
    if source.root == "reward":
        verifier = trial.result.get("verifier_result")
        return descend(verifier.get("rewards") if isinstance(verifier, dict) else None, source.path)
    return descend(trial.result, source.path)


def trial_label(trial: Trial) -> str:
    return f"trial {trial.name}"


def source_member(job: HarborJob, mapping: Mapping) -> dict[str, Any]:
    """Where the results came from: the job, its agent and model, Harbor's version, the job
    result's hash and size."""
    harbor = job.lock.get("harbor") if job.lock is not None else None
    return {
        "kind": "harbor",
        "job_id": job.result.get("id"),
        "job_name": job.config.get("job_name"),
        "agent": mapping.identity["agent"],
        "model": mapping.identity["model"],
        "trials": len(job.trials),
        "job_result_sha256": hashlib.sha256(job.result_data).hexdigest(),
        "job_result_size": len(job.result_data),
        "harbor_version": harbor.get("version") if isinstance(harbor, dict) else None,
    }


@dataclass
class JobReader:
    job: HarborJob
    run: RunContext
    mapping: Mapping
    file: str  # the job's folder, as shown
    map_file: str
    finished: str
    evidence_of: dict[str, list[str]]  # trial name -> its evidence names
    problems: list[Problem]

    def add(self, message: str, where: str = "", expected: object = None, found: object = None) -> None:
        self.problems.append(problem(self.file, message, where, expected, found))

    def outcome(self, item: str, trial: Trial) -> dict[str, Any]:
        """What one trial came to, as a result of `item`."""
        label = trial_label(trial)
        e = trial.result.get("exception_info")
        if isinstance(e, dict):
            kind, message = str(e.get("exception_type") or "Exception"), str(e.get("exception_message") or "")
            if kind in CANCELLATIONS:
                return {"item": item, "status": "not_run", "note": note_text(f"cancelled: {kind}: {message}")}
            if kind in LIMITS:
                return {"item": item, "status": "not_run", "note": note_text(f"stopped by its time limit: {message}")}
            return {"item": item, "status": "infra_error", "note": note_text(f"{kind}: {message}")}
        answer = self.run.answers.get(item)
        if answer is None:  # its answer could not be read, which is reported already
            return {"item": item, "status": SCORED, "fields": []}
        reader = AnswerReader(self.file, self.map_file, self.mapping, self.problems, "the answer file", label)
        if reader.reads_answer(answer) and trial.answer_data is None:
            where = self.mapping.extra["answer_file"]
            return {"item": item, "status": "not_run", "note": f"the agent left no answer ({where})"}
        try:
            text = trial.answer_data.decode("utf-8") if trial.answer_data is not None else None
        except UnicodeDecodeError:
            self.add(f"{label}: the answer file is not UTF-8 text", self.mapping.extra["answer_file"])
            return {"item": item, "status": SCORED, "fields": []}
        return reader.scored(item, label, answer, text, lambda source, parsed: lookup(source, trial, parsed))

    def result(self, item: str, trials: list[Trial]) -> dict[str, Any]:
        """The result of `item` from its trials, the last deciding; the earlier ones, each of
        which must have failed (Harbor retried them), are its earlier attempts."""
        *earlier, last = trials
        finished = [t for t in earlier if not isinstance(t.result.get("exception_info"), dict)]
        if finished:
            self.add(
                f"item {item} has {len(trials)} trials, {len(finished) + 1} of them finished "
                f"({', '.join(t.name for t in [*finished, last])}): one trial a task (n_attempts 1); only a "
                "trial that failed may be tried again",
            )
        attempts = []
        for i, t in enumerate(earlier, start=1):
            o = self.outcome(item, t)
            attempts.append(
                {"attempt": i, "retry_of": i - 1 or None, "status": o["status"], "note": o.get("note", "")}
                | {"at": self.time_of(t), "evidence": self.evidence_of.get(t.name, [])}
            )
        for a in attempts:
            if not a["evidence"]:
                del a["evidence"]
        r = self.outcome(item, last)
        exclusion = self.mapping.exclude.get(item)
        if exclusion is not None:
            return self.excluded(r, last, attempts, exclusion)
        if attempts:
            n = len(attempts)
            r.update({"attempt": n + 1, "retry_of": n, "at": self.time_of(last), "attempts": attempts})
        return r

    def excluded(
        self, final: dict[str, Any], trial: Trial, earlier: list[dict[str, Any]], exclusion: Exclusion
    ) -> dict[str, Any]:
        """The item set aside: what its last trial came to is the last attempt, the one the
        exclusion sets aside, kept with the verifier's rewards."""
        n = len(earlier)
        last: dict[str, Any] = {"attempt": n + 1, "retry_of": n or None, "status": final["status"]}
        if "note" in final:
            last["note"] = final["note"]
        at = last["at"] = self.time_of(trial)
        verifier = trial.result.get("verifier_result")
        rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
        if isinstance(rewards, dict) and rewards:
            last["native"] = {"rewards": native_value(dict(sorted(rewards.items())))}
        w = f"exclude.{final['item']}.at"
        if exclusion.at < at or exclusion.at > self.finished:
            self.problems.append(
                problem(
                    self.map_file,
                    f"the exclusion of item {final['item']} is dated outside the time from the trial it sets aside "
                    f"({trial.name}, {last['status']} at {at}) to the job's end",
                    w,
                    expected=f"{at} to {self.finished}",
                    found=exclusion.at,
                )
            )
        return excluded_result(final["item"], exclusion, [*earlier, last])

    def time_of(self, trial: Trial) -> str:
        return time_text(trial.result.get("finished_at")) or self.finished


def results_from_job(
    job: HarborJob,
    run: RunContext,
    mapping: Mapping,
    shown: tuple[str, str],
    evidence: list[dict[str, Any]],
    evidence_of: dict[str, list[str]],
) -> tuple[dict[str, Any], list[Problem]]:
    """The run-results document of Harbor's job for `run`, listing `evidence` (`evidence_of`:
    the names of each trial's files), and every problem found. `shown` is how the job's folder
    and the mapping are shown."""
    file, map_file = shown
    problems: list[Problem] = []
    finished, interrupted = _check_job(job, mapping, run, file, problems)
    by_item = _trials_by_item(job, mapping, run, file, problems)
    unrun = _unrun_items(job, run, by_item, interrupted, file, problems)
    reader = JobReader(job, run, mapping, file, map_file, finished or "", evidence_of, problems)
    results: list[dict[str, Any]] = []
    for item in run.items:
        exclusion = mapping.exclude.get(item)
        if item in unrun and exclusion is not None:
            results.append({"item": item, "status": "excluded", "rule": exclusion.rule, "note": exclusion.note})
        elif item in unrun:
            results.append(
                {"item": item, "status": "not_run", "note": "the job was interrupted before its task started"}
            )
        elif item in by_item:
            results.append(reader.result(item, by_item[item]))
    doc: dict[str, Any] = {
        "type": "run-results",
        "v": 1,
        "run": run.run_id,
        "finished_at": finished,
        "results": results,
    }
    if evidence:
        doc["evidence"] = evidence
    doc["source"] = source_member(job, mapping)
    return doc, problems


def _check_job(
    job: HarborJob, mapping: Mapping, run: RunContext, file: str, problems: list[Problem]
) -> tuple[str | None, bool]:
    """The job's end (or, for a job the operator says was interrupted, its last update), and
    whether it was interrupted; every trial of the mapping's agent and model and of this job, as
    many as the job's result counts, and the job started once the run was registered."""
    # Harbor writes the job's own start in local time without a zone, and each trial's with one:
    # the earliest trial's start is when the job began, on any host.
    starts = [t for t in (time_text(trial.result.get("started_at")) for trial in job.trials) if t is not None]
    started, where = (min(starts), "the earliest trial's started_at") if starts else (None, "result.json: started_at")
    if started is None:
        started = time_text(job.result.get("started_at"))
    if started is None:
        problems.append(problem(file, "the job has no start time", where))
    elif started < run.registered_at:
        problems.append(
            problem(
                file,
                f"the job started before run {run.run_id} was registered: a run is registered before it happens",
                where,
                expected=f"{run.registered_at} or later",
                found=started,
            )
        )
    _check_trials_are_the_job_s(job, file, problems)
    finished = time_text(job.result.get("finished_at"))
    interrupted = finished is None and bool(mapping.extra["interrupted"])
    if finished is None and not interrupted:
        problems.append(
            problem(
                file,
                "the job did not finish: its result has no finished_at (a job still running, or one interrupted); "
                "resume it with Harbor, or, if it was stopped for good, say so with interrupted: true in the "
                "mapping, its tasks never started then not_run",
                "result.json: finished_at",
            )
        )
    if interrupted:
        times = [time_text(job.result.get("updated_at"))] + [time_text(t.result.get("finished_at")) for t in job.trials]
        finished = max((t for t in times if t is not None), default=started)
    for trial in job.trials:
        got = trial.result.get("agent_info")
        info: dict[str, Any] = got if isinstance(got, dict) else {}
        model: dict[str, Any] = info["model_info"] if isinstance(info.get("model_info"), dict) else {}
        for key, want, found in (
            ("agent", mapping.identity["agent"], info.get("name")),
            ("model", mapping.identity["model"], model.get("name")),
        ):
            if found != want:
                problems.append(
                    problem(
                        file,
                        f"{trial_label(trial)} is of another {key} than the mapping states",
                        f"{trial.name}/result.json: agent_info.{'name' if key == 'agent' else 'model_info.name'}",
                        expected=want,
                        found=show(found),
                    )
                )
    return finished, interrupted


def _check_trials_are_the_job_s(job: HarborJob, file: str, problems: list[Problem]) -> None:
    """Every trial's folder of this job (its config's job_id), and as many as the job's result
    counts completed: a trial's folder taken away (a failure made to look not run) or brought from
    another job is refused."""
    job_id = job.result.get("id")
    for trial in job.trials:
        config = trial.result.get("config")
        found = config.get("job_id") if isinstance(config, dict) else None
        if found != job_id:
            problems.append(
                problem(
                    file,
                    f"{trial_label(trial)} is of another job than this folder's",
                    f"{trial.name}/result.json: config.job_id",
                    expected=show(job_id),
                    found=show(found),
                )
            )
    stats = job.result.get("stats")
    completed = stats.get("n_completed_trials") if isinstance(stats, dict) else None
    if type(completed) is int and completed != len(job.trials):
        problems.append(
            problem(
                file,
                f"the job's result counts {completed} completed trial(s), and the folder holds {len(job.trials)}: a "
                "trial's folder is missing, or one was added",
                "result.json: stats.n_completed_trials",
                expected=str(completed),
                found=str(len(job.trials)),
            )
        )


def _trials_by_item(
    job: HarborJob, mapping: Mapping, run: RunContext, file: str, problems: list[Problem]
) -> dict[str, list[Trial]]:
    """The trials by the item of the run each is of, oldest first."""
    by_item: dict[str, list[Trial]] = defaultdict(list)
    known = set(run.items)
    for trial in job.trials:
        item = lookup(mapping.item, trial, None)
        if not isinstance(item, str):
            problems.append(
                problem(file, f"{trial_label(trial)}: no item id at {mapping.item.text}", expected="an item id")
            )
        elif item not in known:
            problems.append(
                problem(
                    file,
                    f"{trial_label(trial)} is of task {item}, which is no item of run {run.run_id}",
                    expected=show(run.items, 120),
                )
            )
        else:
            by_item[item].append(trial)
    for trials in by_item.values():
        trials.sort(key=lambda t: (str(t.result.get("started_at") or ""), t.name))
    return by_item


def _unrun_items(
    job: HarborJob,
    run: RunContext,
    by_item: dict[str, list[Trial]],
    interrupted: bool,
    file: str,
    problems: list[Problem],
) -> set[str]:
    """The run's items without a trial because the job was interrupted before their task started
    (each planned, when the job says which tasks it planned). Any other is a problem."""
    planned = job.planned()
    missing = [i for i in run.items if i not in by_item]
    unrun = {i for i in missing if interrupted and (planned is None or i in planned)}
    absent = [i for i in missing if i not in unrun]
    if absent:
        problems.append(
            problem(
                file,
                f"no trial of item(s) {', '.join(absent[:20])}{' …' if len(absent) > 20 else ''} of run {run.run_id}",
                expected="one trial for every item of the run spec (a task named by the item's id)",
                found=f"{len(job.trials)} trials"
                + ("" if not interrupted else "; the job's tasks: " + show(planned, 200)),
            )
        )
    return unrun
