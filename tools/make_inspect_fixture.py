"""Make an Inspect log of the demo's open run quill-a-3, for `transparency results from-inspect`.

    python tools/make_inspect_fixture.py OUT.eval
    python tools/make_inspect_fixture.py --edited OUT.eval

Runs a small Inspect task over the run's eight Gate A items with Inspect's mock model (no
network): the "model" answers each item with its answer's values, a few of them wrong, a
scorer named `similarity` reports each text field's similarity in its metadata, and a scorer
named `judge` gives two ordinal labels (1 to 4) in its metadata, `correctness` and
`completeness`, made from the fields the model got wrong and those it left empty. The first
attempt of a-004 fails before it reaches the model and Inspect retries it (`retry_on_error=1`),
so the import has an earlier attempt to record. Prints the mapping that imports the log:

    transparency results from-inspect OUT.eval --run quill-a-3 --map MAPPING --out RESULTS.json

With --edited, the log then has one score changed by hand through Inspect's own edit API
(`inspect_ai.log.edit_score`, with a `ProvenanceData` saying who, when and why): the judge's
correctness of a-005 raised from 2 to 3 by a reviewer, as the importer must refuse unless the
mapping accepts score edits (the mapping printed does: `accept_score_edits: true`). The committed
tests/integration/importers/fixtures/quill-a-3-edited.eval was made so.

As deterministic as Inspect allows: the samples run one at a time, and the log's ids, times
(from 2026-11-28T10:00:00Z, after the run's registration), sample uuids, event and model-call
times and tracebacks are set to fixed values before it is written. What stays random is
Inspect's own: the ids of events, spans and messages, and the times of the zip members (an .eval
file is a zip whose members are compressed with zstd, which Python's zipfile cannot read).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
ITEMS = REPO / "data" / "private" / "items" / "gate-a.yaml"
RUN_SPEC = REPO / "data" / "runs" / "quill-a-3.json"
TASK = "quill_extract"
MODEL = "mockllm/quill-extract-1.1"
RETRIED = "a-004"
START = dt.datetime(2026, 11, 28, 10, 0, 0, tzinfo=dt.UTC)
# The hand edit of --edited: who, when (after the log finished, before the demo certifies), why.
EDITED_ITEM = "a-005"
EDITOR = "reviewer@quill.example"
EDITED_AT = dt.datetime(2026, 11, 29, 8, 15, 0, tzinfo=dt.UTC)
EDIT_REASON = "The requested action is a paraphrase the rubric accepts; correctness raised on review."

# What the subject gets wrong, by item and field (the rest of its outputs are the answers).
WRONG: dict[str, dict[str, Any]] = {
    "a-003": {"postal_code": "03952"},
    "a-005": {"requested_action": "Refund the charge"},
    "a-006": {"suspicious_snippets": []},
    "a-008": {"transfer_day_of_month": 15},
}


# The judge's rubric dimensions, each labelled 1 (worst) to 4 (best).
DIMENSIONS = ("completeness", "correctness")


def judge_labels(given: dict[str, Any], want: dict[str, Any]) -> dict[str, int]:
    """The judge's labels of one answer: correctness falls by 2 for each wrong field, completeness
    by 1 for each wrong field and 1 more for each one left empty that should not be, neither
    below 1."""
    wrong = sum(given.get(n) != v for n, v in want.items())
    empty = sum(given.get(n) in ("", [], None) and v not in ("", [], None) for n, v in want.items())
    return {"correctness": max(1, 4 - 2 * wrong), "completeness": max(1, 4 - wrong - empty)}


def mapping(answers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The mapping that imports the log: every non-critical text field's similarity from the
    `similarity` scorer, and the `judge` scorer's labels."""
    texts = sorted(
        {n for a in answers.values() for n, f in a.items() if f["kind"] == "text" and f["tier"] != "critical"}
    )
    return {
        "task": TASK,
        "model": MODEL,
        "similarity": {n: f"score.similarity.metadata.{n}" for n in texts},
        "judge_labels": {d: f"score.judge.metadata.{d}" for d in DIMENSIONS},
    }


def demo_items() -> tuple[list[str], dict[str, str], dict[str, dict[str, Any]]]:
    """The run's item ids, their prompts and their answers, from the demo's item sources."""
    run_items = json.loads(RUN_SPEC.read_text(encoding="utf-8"))["items"]
    sources = {it["id"]: it for it in yaml.safe_load(ITEMS.read_text(encoding="utf-8"))["items"]}
    return run_items, {i: sources[i]["prompt"] for i in run_items}, {i: sources[i]["answer"] for i in run_items}


def make_log(out: Path, edited: bool = False) -> dict[str, Any]:
    """Run the task, write its normalized log to `out`, and return the mapping; with `edited`, one
    score edited by hand (Inspect's edit_score) and a mapping that accepts it."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, ScoreEdit, Target, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import ToolChoice, ToolInfo

    items, prompts, answers = demo_items()
    outputs = {prompts[i]: {n: WRONG.get(i, {}).get(n, f["value"]) for n, f in answers[i].items()} for i in items}

    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        reply = ModelOutput.from_content(MODEL, json.dumps(outputs[messages[-1].text], ensure_ascii=False))
        reply.usage = ModelUsage(input_tokens=100, output_tokens=40, total_tokens=140)  # else mockllm runs tiktoken
        return reply

    calls: dict[str, int] = {}

    @solver
    def flaky_generate() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            n = calls[str(state.sample_id)] = calls.get(str(state.sample_id), 0) + 1
            if state.sample_id == RETRIED and n == 1:
                raise ConnectionResetError("simulated: the model endpoint reset the connection")
            return await generate(state)

        return solve

    @scorer(metrics=[mean()])
    def similarity() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            given, want = json.loads(state.output.completion), json.loads(target.text)
            sims = {n: "1.0" if given.get(n) == want[n] else "0.82" for n in want if isinstance(want[n], str)}
            exact = sum(given.get(n) == v for n, v in want.items()) / len(want)
            return Score(value=exact, metadata=sims)

        return score

    @scorer(metrics=[mean()])
    def judge() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            labels = judge_labels(json.loads(state.output.completion), json.loads(target.text))
            return Score(value=labels["correctness"], metadata=labels)

        return score

    task = Task(
        dataset=[
            Sample(id=i, input=prompts[i], target=json.dumps({n: f["value"] for n, f in answers[i].items()}))
            for i in items
        ],
        solver=flaky_generate(),
        scorer=[similarity(), judge()],
        name=TASK,
    )
    log_dir = out.parent / f".{out.name}.logs"
    [log] = inspect_eval(
        task,
        model=get_model(MODEL, custom_outputs=respond),
        log_dir=str(log_dir),
        display="none",
        retry_on_error=1,
        max_samples=1,
    )
    log = read_eval_log(log.location)
    Path(log.location).unlink()
    log_dir.rmdir()
    _normalize(log)
    if not edited:
        write_eval_log(log, str(out))
        return mapping(answers)
    [sample] = [s for s in log.samples if s.id == EDITED_ITEM]
    labels = dict(sample.scores["judge"].metadata, correctness=3)
    edit_score(
        log,
        EDITED_ITEM,
        "judge",
        ScoreEdit(
            value=3,
            metadata=labels,  # replaces the scorer's metadata, where the mapping reads the labels
            provenance=ProvenanceData(author=EDITOR, timestamp=EDITED_AT, reason=EDIT_REASON),
        ),
    )
    for event in sample.events:  # the edit's event, stamped now by Inspect: at the edit's own time
        if getattr(event, "event", None) == "score_edit":
            event.timestamp, event.working_start = EDITED_AT, 0.0
    write_eval_log(log, str(out))
    return {**mapping(answers), "accept_score_edits": True}


def _normalize(log: Any) -> None:
    """Fixed ids, times and tracebacks, so that two runs of this script differ as little as Inspect allows."""

    def at(seconds: float) -> str:
        return (START + dt.timedelta(seconds=seconds)).isoformat()

    log.eval.eval_id = log.eval.run_id = log.eval.task_id = "quill-a-3-fixture"
    log.eval.created = at(0)
    log.eval.revision = None
    log.stats.started_at = at(0)
    for n, sample in enumerate(log.samples, start=1):
        begin = 60.0 * n
        sample.uuid = f"quill-a-3-fixture-{sample.id}"
        sample.started_at, sample.completed_at = at(begin), at(begin + 30)
        sample.total_time = sample.working_time = 30.0
        if sample.output.time is not None:
            sample.output.time = 1.0
        for k, event in enumerate(sample.events):
            event.timestamp, event.working_start = START + dt.timedelta(seconds=begin + k / 10), k / 10
            if getattr(event, "completed", None) is not None:  # a model event: when its call returned
                event.completed, event.working_time = event.timestamp, 0.0
            if getattr(getattr(event, "output", None), "time", None) is not None:
                event.output.time = 1.0
        for r in sample.error_retries or []:
            r.traceback = r.traceback_ansi = r.message
            for k, event in enumerate(r.events or []):
                event.timestamp, event.working_start = START + dt.timedelta(seconds=begin - 20 + k / 10), k / 10
    log.stats.completed_at = at(60.0 * (len(log.samples) + 1))


def main(argv: list[str]) -> int:
    edited = argv[:1] == ["--edited"]
    argv = argv[1:] if edited else argv
    if len(argv) != 1 or not argv[0].endswith(".eval"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    found = make_log(out, edited)
    print(f"Wrote {out}. Import it with this mapping (YAML):\n")
    print(yaml.safe_dump(found, sort_keys=False).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
