"""`transparency results from-inspect`: an Inspect log, made here with Inspect's mock model (no
network), turned into the results file of a registered run, and every way it must be refused.

Each test runs a small task in its own folder. The mock model answers each sample from what
its input says (the item id), so that the order Inspect runs samples in changes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.certify import certify_run
from generator.core.generator_errors import InputError
from generator.importers.common.field_values import note_text
from generator.importers.inspect.inspect_log import INSTALL_HINT, InspectNotInstalled, import_inspect_log
from generator.program.datadir import Paths
from generator.program.results_file import check_results_shape, read_results
from generator.verifier import loads_strict, verify_site
from tests.support.demo import REPO, demo_before
from tests.support.files import refused
from tests.support.programs import item
from tests.support.runs import named, register, run_spec

pytest.importorskip("inspect_ai")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalError, ProvenanceData, edit_score, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, ScoreEdit, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.util import store, token_limit

# Inspect's own retry helper warns about a tenacity parameter on every model call.
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

ITEMS = ["a-001", "a-002", "a-003"]
TASK = "extract"
MODEL = "mockllm/model"
MAPPING = {"task": TASK, "model": MODEL, "similarity": {"summary": "score.similarity.metadata.summary"}}


# ---------------------------------------------------------------------------------------------
# Helpers


def good(item_id: str) -> dict[str, Any]:
    """The right outputs for conftest.item(): account_number, summary, tags."""
    return {"account_number": "110-482-339201", "summary": f"Summary of {item_id}", "tags": ["transfer"]}


@scorer(metrics=[mean()])
def similarity() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=0.95, metadata={"summary": "0.95"})

    return score


def make_log(
    where: Path,
    ids: list[str] = ITEMS,
    replies: dict[str, str] | None = None,
    solver: Solver | None = None,
    name: str = TASK,
    metadata: Callable[[str], dict[str, Any]] | None = None,
    scorers: list[Scorer] | None = None,
    **options: Any,
) -> Path:
    """Run a task of one sample per id (its input the id) with the mock model; the log's path.
    The model answers good(id) as JSON, or replies[id]; the scorers are similarity() and `scorers`."""

    def respond(messages: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        text = messages[-1].text
        out = ModelOutput.from_content(MODEL, (replies or {}).get(text, json.dumps(good(text))))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm counts with tiktoken
        return out

    task = Task(
        dataset=[Sample(id=i, input=i, metadata=metadata(i) if metadata else {}) for i in ids],
        solver=solver or generate(),
        scorer=[similarity(), *(scorers or [])],
        name=name,
    )
    where.mkdir(parents=True, exist_ok=True)
    [log] = inspect_eval(
        task, model=get_model(MODEL, custom_outputs=respond), log_dir=str(where), display="none", **options
    )
    return Path(log.location)


def rewrite(log_path: Path, out: Path, **changes: Any) -> Path:
    """The log written again (through Inspect's own writer) with some members changed."""
    log = read_eval_log(str(log_path))
    for key, value in changes.items():
        target: Any = log
        *parents, last = key.split("__")
        for p in parents:
            target = getattr(target, p)
        setattr(target, last, value)
    write_eval_log(log, str(out))
    return out


def write_mapping(where: Path, mapping: dict[str, Any] | None = None, **over: Any) -> Path:
    m = dict(mapping or MAPPING)
    m.update(over)
    path = where / "map.yaml"
    path.write_text(yaml.safe_dump(m, sort_keys=False), encoding="utf-8")
    return path


def time_of(value: Any) -> str:
    """A time of the log in the project's form, computed here without the module's help."""
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return value.astimezone(dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def scored(item_id: str, **fields: Any) -> dict[str, Any]:
    out = {**good(item_id), **fields}
    return {
        "item": item_id,
        "status": "scored",
        "fields": [
            {"name": "account_number", "output": out["account_number"]},
            {"name": "summary", "output": out["summary"], "similarity": "0.95"},
            {"name": "tags", "output": out["tags"]},
        ],
    }


def answers() -> dict[str, dict[str, Any]]:
    return {i: item(i, "a")["answer"] for i in ITEMS}


def spec_of(paths: Paths, run_id: str = "run-1") -> dict[str, Any]:
    return json.loads(paths.run_spec_file(run_id).read_text(encoding="utf-8"))


@pytest.fixture(scope="module", autouse=True)
def _inspect_keeps_its_files_here(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Inspect writes traces and sample buffers under the user's data folder: this module's own."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("inspect-data")))
        yield


@pytest.fixture
def program(make_program: Callable[..., Paths]) -> Paths:
    """gates a (public) and b (secret); run-1 registered on gate a with a-001, a-002, a-003."""
    paths = make_program(public_items=3)
    register(paths, run_spec(paths, "run-1", "a", ITEMS))
    return paths


def importing(paths: Paths, log: Path, mapping: Path, **kw: Any) -> Callable[[], Any]:
    return lambda: import_inspect_log(paths, log, kw.pop("run", "run-1"), mapping, **kw)


def results_of(paths: Paths, run_id: str = "run-1") -> dict[str, Any]:
    return json.loads((paths.private / "results" / f"{run_id}.json").read_text(encoding="utf-8"))


def by_item(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["item"]: r for r in doc["results"]}


# ---------------------------------------------------------------------------------------------
# A log that converts


def test_a_log_converts_to_the_expected_results(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    data = log_path.read_bytes()
    log = read_eval_log(str(log_path))
    done = import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path))
    out = program.private / "results" / "run-1.json"
    assert done.out == out and done.counts == {"scored": 3} and done.retried == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc == {
        "type": "run-results",
        "v": 1,
        "run": "run-1",
        "finished_at": time_of(log.stats.completed_at),
        "results": [scored(i) for i in ITEMS],
        # The log itself, by its path from the results file's folder, as evidence of every item.
        "evidence": [
            {
                "name": log_path.name,
                "path": os.path.relpath(log_path, out.parent),
                "sha256": hashlib.sha256(data).hexdigest(),
                "size": len(data),
                "items": ITEMS,
            }
        ],
        "source": {
            "kind": "inspect",
            "task": TASK,
            "model": MODEL,
            "scorers": ["similarity"],
            "log_sha256": hashlib.sha256(data).hexdigest(),
            "log_size": len(data),
            "eval_id": log.eval.eval_id,
            "inspect_version": importlib.metadata.version("inspect_ai"),
        },
    }
    # Written as the project's results files are, private, and read and checked as certify does.
    assert out.read_text(encoding="utf-8") == json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert check_results_shape(read_results(out, str(out)).doc, spec_of(program), answers()) == []
    cert = certify_run(program, out)
    assert cert.summary["scored"] == 3 and cert.summary["passed"] == 3
    assert program.evidence_file(cert.serial, log_path.name).read_bytes() == data


def test_fields_from_metadata_store_and_scores_and_items_from_metadata(program: Paths, tmp_path: Path) -> None:
    @solver
    def keep_tags() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            store().set("tags", ["transfer"])
            state = await generate(state)
            return state

        return solve

    ids = {"s1": "a-001", "s2": "a-002", "s3": "a-003"}
    log_path = make_log(
        tmp_path / "logs",
        ids=list(ids),
        replies={s: f"Summary of {i}" for s, i in ids.items()},  # plain text, not JSON
        solver=keep_tags(),
        metadata=lambda s: {"case": {"item": ids[s]}, "account": "110-482-339201"},
    )
    mapping = write_mapping(
        tmp_path,
        item="metadata.case.item",
        fields={"account_number": "metadata.account", "summary": "completion", "tags": "store.tags"},
        similarity={"summary": "score.similarity.value"},  # a number in the log: its shortest decimal text
    )
    import_inspect_log(program, log_path, "run-1", mapping)
    assert results_of(program)["results"] == [scored(i) for i in ITEMS]


# ---------------------------------------------------------------------------------------------
# Samples that do not match the run's items


@pytest.mark.parametrize(
    ("ids", "options", "message"),
    [
        ([*ITEMS, "a-009"], {}, "sample a-009 is of item a-009, which run run-1 does not have"),
        (ITEMS[:2], {}, "no sample of item(s) a-003 of run run-1"),
        (ITEMS, {"epochs": 2}, "item a-001 has 2 samples (sample a-001; sample a-001 (epoch 2))"),
    ],
    ids=["extra", "missing", "duplicated"],
)
def test_samples_that_do_not_match_the_items_are_refused(
    program: Paths, tmp_path: Path, ids: list[str], options: dict[str, Any], message: str
) -> None:
    log_path = make_log(tmp_path / "logs", ids=ids, **options)
    err = refused(importing(program, log_path, write_mapping(tmp_path)), program.data, program.private)
    named(err, message)
    assert "nothing was written" in err.summary


def test_two_samples_naming_one_item_by_metadata_are_refused(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", ids=["x", "y", "z"], metadata=lambda s: {"item": "a-001"})
    err = refused(
        importing(program, log_path, write_mapping(tmp_path, item="metadata.item")), program.data, program.private
    )
    named(err, "item a-001 has 3 samples (sample x; sample y; sample z)")
    named(err, "no sample of item(s) a-002, a-003")


def test_every_problem_is_reported_at_once(program: Paths, tmp_path: Path) -> None:
    replies = {"a-002": json.dumps({**good("a-002"), "colour": "red"}), "a-003": "I cannot help with that."}
    log_path = make_log(tmp_path / "logs", ids=["a-001", "a-002", "a-003", "a-010"], replies=replies)
    mapping = write_mapping(tmp_path, similarity={})
    err = refused(importing(program, log_path, mapping), program.data, program.private)
    named(err, "sample a-010 is of item a-010")
    named(err, "sample a-002: the completion gives colour, which item a-002's answer does not have")
    named(err, "sample a-003: the completion should be a JSON object of the item's fields, and is not JSON")
    named(err, "sample a-001, field summary: a high text field needs its reported similarity")
    assert {p.file for p in err.problems} == {str(log_path), str(mapping)}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"account_number": "110-482-339201", "tags": ["transfer"]}, "sample a-001, field summary: no value at"),
        ({**good("a-001"), "account_number": 1.5}, "a non-integer number"),
        ({**good("a-001"), "tags": "transfer"}, "wrong type of output for an array field"),
    ],
    ids=["missing-field", "float", "wrong-kind"],
)
def test_outputs_that_break_the_results_rules_are_refused(
    program: Paths, tmp_path: Path, reply: dict[str, Any], message: str
) -> None:
    log_path = make_log(tmp_path / "logs", replies={"a-001": json.dumps(reply)})
    err = refused(importing(program, log_path, write_mapping(tmp_path)), program.data, program.private)
    named(err, message)


def test_a_missing_similarity_names_the_sample_and_field(program: Paths, tmp_path: Path) -> None:
    mapping = write_mapping(tmp_path, similarity={"summary": "score.similarity.metadata.nothing"})
    err = refused(importing(program, make_log(tmp_path / "logs"), mapping), program.data, program.private)
    for i in ITEMS:
        named(err, f"sample {i}, field summary: no similarity at score.similarity.metadata.nothing")


# ---------------------------------------------------------------------------------------------
# Errors, limits, cancellation: never a failure


@solver
def failing(item_id: str, times: int | None = None, after_model: bool = False) -> Solver:
    """Raises for `item_id` on its first `times` calls (on every call when None), before the
    model call or after it."""
    calls = 0

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        nonlocal calls
        if state.sample_id != item_id:
            return await generate(state)
        calls += 1
        if after_model:
            state = await generate(state)
        if times is None or calls <= times:
            raise ConnectionResetError(f"the endpoint reset the connection (call {calls})")
        return state if after_model else await generate(state)

    return solve


@pytest.mark.parametrize("fail_on_error", [False, True], ids=["log-success", "log-error"])
def test_an_errored_sample_is_an_infra_error(program: Paths, tmp_path: Path, fail_on_error: bool) -> None:
    log_path = make_log(tmp_path / "logs", solver=failing("a-002"), fail_on_error=fail_on_error)
    assert read_eval_log(str(log_path)).status == ("error" if fail_on_error else "success")
    import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path))
    doc = results_of(program)
    assert by_item(doc)["a-002"] == {
        "item": "a-002",
        "status": "infra_error",
        "note": "ConnectionResetError('the endpoint reset the connection (call 1)')",
    }
    assert by_item(doc)["a-001"] == scored("a-001")
    cert = certify_run(program, program.private / "results" / "run-1.json")
    assert cert.summary["infra_error"] == 1 and cert.summary["scored"] == 2


def test_a_sample_stopped_by_a_limit_is_not_run(program: Paths, tmp_path: Path) -> None:
    @solver
    def tight() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if state.sample_id == "a-003":
                with token_limit(1):
                    return await generate(state)
            return await generate(state)

        return solve

    import_inspect_log(program, make_log(tmp_path / "logs", solver=tight()), "run-1", write_mapping(tmp_path))
    assert by_item(results_of(program))["a-003"] == {
        "item": "a-003",
        "status": "not_run",
        "note": "stopped by its token limit (1): Token limit exceeded. value: 2; limit: 1",
    }


def test_a_log_s_message_limit_leaves_every_sample_not_run(program: Paths, tmp_path: Path) -> None:
    import_inspect_log(program, make_log(tmp_path / "logs", message_limit=1), "run-1", write_mapping(tmp_path))
    assert {r["status"] for r in results_of(program)["results"]} == {"not_run"}


def test_a_sample_without_output_is_not_run(program: Paths, tmp_path: Path) -> None:
    import_inspect_log(program, make_log(tmp_path / "logs", replies={"a-002": ""}), "run-1", write_mapping(tmp_path))
    assert by_item(results_of(program))["a-002"] == {
        "item": "a-002",
        "status": "not_run",
        "note": "the model gave no output",
    }


def test_a_cancelled_log_leaves_its_unrun_samples_not_run(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    log = read_eval_log(str(log_path))
    samples = [s for s in log.samples or [] if s.id != "a-003"]
    samples[1].error = EvalError(
        message="CancelledError('Cancelled via cancel scope')", traceback="", traceback_ansi=""
    )
    cancelled = rewrite(log_path, tmp_path / "cancelled.eval", status="cancelled", samples=samples)
    import_inspect_log(program, cancelled, "run-1", write_mapping(tmp_path))
    results = by_item(results_of(program))
    assert results["a-001"] == scored("a-001")
    assert results["a-002"] == {
        "item": "a-002",
        "status": "not_run",
        "note": "cancelled: CancelledError('Cancelled via cancel scope')",
    }
    assert results["a-003"] == {"item": "a-003", "status": "not_run", "note": "the evaluation was cancelled"}


def test_an_unfinished_log_is_refused(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    started = rewrite(log_path, tmp_path / "started.eval", status="started", stats__completed_at="")
    err = refused(importing(program, started, write_mapping(tmp_path)), program.data, program.private)
    named(err, "the evaluation did not finish", "stats.completed_at")


def test_a_log_of_an_evaluation_started_before_the_run_was_registered_is_refused(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    log_path = make_log(tmp_path / "logs")
    paths = make_program(public_items=3)
    register(paths, run_spec(paths, "run-1", "a", ITEMS), at="2099-01-01T00:00:00Z")
    err = refused(importing(paths, log_path, write_mapping(tmp_path)), paths.data, paths.private)
    named(err, "the evaluation started before run run-1 was registered", "stats.started_at")


# ---------------------------------------------------------------------------------------------
# Retries become attempts


def test_a_retried_sample_gives_its_attempts(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", solver=failing("a-002", times=2), retry_on_error=2)
    log = read_eval_log(str(log_path))
    [sample] = [s for s in log.samples or [] if s.id == "a-002"]
    assert len(sample.error_retries or []) == 2
    done = import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path))
    assert done.retried == 1
    results = by_item(results_of(program))
    # The error was raised before the model was called, so Inspect kept no event with it: the
    # attempt's time is the start of the final attempt, the latest it can have ended.
    before = time_of(sample.started_at)
    assert results["a-002"] == {
        **scored("a-002"),
        "attempt": 3,
        "retry_of": 2,
        "at": time_of(sample.completed_at),
        "attempts": [
            {
                "attempt": 1,
                "retry_of": None,
                "status": "infra_error",
                "note": "ConnectionResetError('the endpoint reset the connection (call 1)')",
                "at": before,
                "evidence": [log_path.name],
            },
            {
                "attempt": 2,
                "retry_of": 1,
                "status": "infra_error",
                "note": "ConnectionResetError('the endpoint reset the connection (call 2)')",
                "at": before,
                "evidence": [log_path.name],
            },
        ],
    }
    # A sample tried once carries none of the attempt members.
    assert results["a-001"] == scored("a-001")
    cert = certify_run(program, program.private / "results" / "run-1.json")
    assert cert.summary["scored"] == 3 and cert.summary["infra_error"] == 0


def test_an_attempt_that_reached_the_model_is_dated_by_its_last_event(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", solver=failing("a-001", times=1, after_model=True), retry_on_error=1)
    [sample] = [s for s in read_eval_log(str(log_path)).samples or [] if s.id == "a-001"]
    [retry] = sample.error_retries or []
    assert retry.events, "Inspect keeps the events since the last model call with a retried error"
    [attempt] = by_item(_imported(program, log_path, tmp_path))["a-001"]["attempts"]
    assert attempt["at"] == time_of(max(e.timestamp for e in retry.events))
    assert attempt["at"] <= time_of(sample.started_at)


def test_a_sample_that_failed_after_its_retries_is_an_infra_error_with_its_attempts(
    program: Paths, tmp_path: Path
) -> None:
    log_path = make_log(tmp_path / "logs", solver=failing("a-003"), retry_on_error=1)
    r = by_item(_imported(program, log_path, tmp_path))["a-003"]
    assert (r["status"], r["attempt"], r["retry_of"], [a["status"] for a in r["attempts"]]) == (
        "infra_error",
        2,
        1,
        ["infra_error"],
    )


def _imported(paths: Paths, log_path: Path, tmp_path: Path) -> dict[str, Any]:
    import_inspect_log(paths, log_path, "run-1", write_mapping(tmp_path))
    return results_of(paths)


# ---------------------------------------------------------------------------------------------
# Judge labels

LABELS = {
    "a-001": {"correctness": 4, "completeness": 3},
    "a-002": {"correctness": 2, "completeness": 2},
    "a-003": {"correctness": 1, "completeness": 4},
}
JUDGED = {
    **MAPPING,
    "judge_labels": {
        "correctness": "score.judge.metadata.correctness",
        "completeness": "score.judge.metadata.completeness",
    },
}


@scorer(metrics=[mean()])
def judge(labels: dict[str, dict[str, Any]]) -> Scorer:
    """A judge whose labels of each item are in its score's metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1, metadata=labels.get(str(state.sample_id), {}))

    return score


def test_judge_labels_are_imported_for_every_scored_result(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", solver=failing("a-002"), scorers=[judge(LABELS)], fail_on_error=False)
    done = import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path, JUDGED))
    assert done.counts == {"scored": 2, "infra_error": 1}
    results = by_item(results_of(program))
    # Sorted by dimension; an errored sample, which no judge read, has none.
    assert results["a-001"] == {**scored("a-001"), "judge_labels": {"completeness": 3, "correctness": 4}}
    assert list(results["a-001"]["judge_labels"]) == ["completeness", "correctness"]
    assert results["a-003"] == {**scored("a-003"), "judge_labels": {"completeness": 4, "correctness": 1}}
    assert "judge_labels" not in results["a-002"] and results["a-002"]["status"] == "infra_error"
    cert = certify_run(program, program.private / "results" / "run-1.json")
    assert cert.summary["scored"] == 2


def test_judge_labels_that_are_not_integers_are_refused_naming_sample_and_dimension(
    program: Paths, tmp_path: Path
) -> None:
    labels = {
        "a-001": {"correctness": 4},  # no completeness
        "a-002": {"correctness": 3.0, "completeness": 2},  # a whole float is not a point of the scale
        "a-003": {"correctness": True, "completeness": "4"},  # Python's True is 1
    }
    log_path = make_log(tmp_path / "logs", scorers=[judge(labels)])
    [a002] = [s for s in read_eval_log(str(log_path)).samples or [] if s.id == "a-002"]
    assert isinstance((a002.scores or {})["judge"].metadata["correctness"], float)  # Inspect keeps it a float
    err = refused(importing(program, log_path, write_mapping(tmp_path, JUDGED)), program.data, program.private)
    named(err, "sample a-001, judge label completeness: no value at score.judge.metadata.completeness")
    named(
        err,
        "sample a-002, judge label correctness: a judge label is an integer on the rubric's scale, and this is a float",
    )
    named(
        err,
        "sample a-003, judge label correctness: a judge label is an integer on the rubric's scale, and this is a bool",
    )
    named(
        err, "sample a-003, judge label completeness: a judge label is an integer", "score.judge.metadata.completeness"
    )
    assert len(err.problems) == 4, err.describe()
    assert "nothing was written" in err.summary


def test_a_judge_labels_mapping_is_validated(program: Paths, tmp_path: Path) -> None:
    mapping = write_mapping(tmp_path, judge_labels={"Correctness": "score.judge.metadata.c", "ok": "judge.ok"})
    err = refused(importing(program, make_log(tmp_path / "logs"), mapping), program.data, program.private)
    named(err, "a judge label's name is its rubric dimension", "judge_labels")
    named(err, "not a source", "judge_labels.ok")
    mapping = write_mapping(tmp_path, judge_labels=["correctness"])
    err = refused(importing(program, make_log(tmp_path / "logs2"), mapping), program.data, program.private)
    named(err, "judge_labels maps rubric dimensions to sources", "judge_labels")


# ---------------------------------------------------------------------------------------------
# Exclusions decided by the operator


EXCLUSION_NOTE = "The message is in Latin, which the subject does not support."


@solver
def one_error_and_one_retry() -> Solver:
    """a-001 fails on every call; a-002 fails on its first and is retried."""
    calls: dict[str, int] = {}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        n = calls[str(state.sample_id)] = calls.get(str(state.sample_id), 0) + 1
        if state.sample_id == "a-001" or (state.sample_id == "a-002" and n == 1):
            raise ConnectionResetError(f"the endpoint reset the connection (call {n})")
        return await generate(state)

    return solve


def test_an_exclusion_sets_aside_the_sample_s_final_attempt_and_certifies(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", solver=one_error_and_one_retry(), retry_on_error=1, fail_on_error=False)
    log = read_eval_log(str(log_path))
    samples = {str(s.id): s for s in log.samples or []}
    decided = time_of(log.stats.completed_at)  # no time of a result is after the results' finished_at
    exclude = {i: {"rule": 0, "note": EXCLUSION_NOTE, "at": decided} for i in ITEMS}
    done = import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path, exclude=exclude))
    assert done.counts == {"excluded": 3} and done.retried == 2
    results = by_item(results_of(program))

    def excluded(item_id: str, *attempts: dict[str, Any]) -> dict[str, Any]:
        return {
            "item": item_id,
            "status": "excluded",
            "rule": 0,
            "note": EXCLUSION_NOTE,
            "attempts": [{**a, "evidence": [log_path.name]} for a in attempts],
            "excludes": len(attempts),
            "at": decided,
        }

    def error(n: int) -> str:
        return f"ConnectionResetError('the endpoint reset the connection (call {n})')"

    # a-001 errored after its retry: its final attempt, an infra_error with its note, is set aside.
    a1 = samples["a-001"]
    assert results["a-001"] == excluded(
        "a-001",
        {"attempt": 1, "retry_of": None, "status": "infra_error", "note": error(1), "at": time_of(a1.started_at)},
        {"attempt": 2, "retry_of": 1, "status": "infra_error", "note": error(2), "at": time_of(a1.completed_at)},
    )
    # a-002 scored on its retry: the scored attempt is set aside, with what the scorer made of it.
    a2 = samples["a-002"]
    assert results["a-002"] == excluded(
        "a-002",
        {"attempt": 1, "retry_of": None, "status": "infra_error", "note": error(1), "at": time_of(a2.started_at)},
        {
            "attempt": 2,
            "retry_of": 1,
            "status": "scored",
            "at": time_of(a2.completed_at),
            "native": {"scores": {"similarity": "0.95"}},
        },
    )
    # a-003 was tried once: a chain of one.
    assert results["a-003"] == excluded(
        "a-003",
        {
            "attempt": 1,
            "retry_of": None,
            "status": "scored",
            "at": time_of(samples["a-003"].completed_at),
            "native": {"scores": {"similarity": "0.95"}},
        },
    )
    cert = certify_run(program, program.private / "results" / "run-1.json")
    assert cert.summary["excluded"] == 3


def test_an_excluded_item_keeps_the_judge_labels_out_of_its_result(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", scorers=[judge(LABELS)])
    decided = time_of(read_eval_log(str(log_path)).stats.completed_at)
    exclude = {"a-002": {"rule": 0, "note": EXCLUSION_NOTE, "at": decided}}
    import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path, JUDGED, exclude=exclude))
    results = by_item(results_of(program))
    assert results["a-001"]["judge_labels"] == {"completeness": 3, "correctness": 4}
    [last] = results["a-002"]["attempts"]
    assert "judge_labels" not in results["a-002"]
    assert last["native"] == {"scores": {"judge": 1, "similarity": "0.95"}}
    cert = certify_run(program, program.private / "results" / "run-1.json")
    assert cert.summary["excluded"] == 1 and cert.summary["scored"] == 2


def test_an_excluded_item_that_never_ran_is_an_exclusion_without_attempts(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    log = read_eval_log(str(log_path))
    cancelled = rewrite(
        log_path,
        tmp_path / "cancelled.eval",
        status="cancelled",
        samples=[s for s in log.samples or [] if s.id != "a-003"],
    )
    exclude = {"a-003": {"rule": 0, "note": EXCLUSION_NOTE, "at": time_of(log.stats.completed_at)}}
    import_inspect_log(program, cancelled, "run-1", write_mapping(tmp_path, exclude=exclude))
    assert by_item(results_of(program))["a-003"] == {
        "item": "a-003",
        "status": "excluded",
        "rule": 0,
        "note": EXCLUSION_NOTE,
    }


LOG_END = "<the log's end>"  # a time only known once the log is made: its stats.completed_at
GOOD_EXCLUSION = {"rule": 0, "note": EXCLUSION_NOTE, "at": LOG_END}


def test_a_sample_marked_invalid_is_imported_once_its_item_is_excluded(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    log = read_eval_log(str(log_path))
    samples = log.samples or []
    samples[0].invalidation = ProvenanceData(author="operator", reason="the message is in Latin")
    marked = rewrite(log_path, tmp_path / "marked.eval", samples=samples)
    err = refused(importing(program, marked, write_mapping(tmp_path)), program.data, program.private)
    named(err, f"sample {samples[0].id} is marked invalid in the log: give its item a status by hand")
    exclude = {str(samples[0].id): {**GOOD_EXCLUSION, "at": time_of(log.stats.completed_at)}}
    import_inspect_log(program, marked, "run-1", write_mapping(tmp_path, exclude=exclude))
    assert by_item(results_of(program))[str(samples[0].id)]["status"] == "excluded"


@pytest.mark.parametrize(
    ("exclude", "message", "where"),
    [
        ({"a-009": GOOD_EXCLUSION}, "run run-1 has no item a-009 to exclude", "exclude.a-009"),
        (
            {"a-001": {**GOOD_EXCLUSION, "rule": 1}},
            "run run-1's spec has 1 exclusion rule, and no rule 1",
            "exclude.a-001.rule",
        ),
        (
            {"a-001": {**GOOD_EXCLUSION, "rule": -1}},
            "names the index of one of the run spec's exclusion_rules",
            "exclude.a-001.rule",
        ),
        (
            {"a-001": {**GOOD_EXCLUSION, "rule": True}},
            "names the index of one of the run spec's exclusion_rules",
            "exclude.a-001.rule",
        ),
        (
            {"a-001": {**GOOD_EXCLUSION, "rule": "0"}},
            "names the index of one of the run spec's exclusion_rules",
            "exclude.a-001.rule",
        ),
        ({"a-001": {**GOOD_EXCLUSION, "at": "2026-11-28 10:00:00"}}, "malformed time", "exclude.a-001.at"),
        ({"a-001": {**GOOD_EXCLUSION, "at": "2026-11-28T10:00:00.5Z"}}, "malformed time", "exclude.a-001.at"),
        ({"a-001": {"rule": 0, "at": GOOD_EXCLUSION["at"]}}, "missing 'note'", "exclude.a-001"),
        ({"a-001": {**GOOD_EXCLUSION, "note": 7}}, "an exclusion's note says why", "exclude.a-001.note"),
        ({"a-001": {**GOOD_EXCLUSION, "note": " \t "}}, "an exclusion's note says why", "exclude.a-001.note"),
        ({"a-001": {**GOOD_EXCLUSION, "reason": "x"}}, "unknown member 'reason'", "exclude.a-001"),
        ({"a-001": 0}, "an exclusion is an object of rule, note and at", "exclude.a-001"),
        (["a-001"], "exclude maps item ids to the operator's exclusions", "exclude"),
    ],
    ids=[
        "unknown-item",
        "rule-out-of-range",
        "rule-negative",
        "rule-bool",
        "rule-text",
        "time-form",
        "time-fraction",
        "no-note",
        "note-not-text",
        "note-blank",
        "unknown-member",
        "not-an-object",
        "not-a-table",
    ],
)
def test_a_bad_exclusion_is_refused_naming_its_key(
    program: Paths, tmp_path: Path, exclude: Any, message: str, where: str
) -> None:
    log_path = make_log(tmp_path / "logs")
    end = time_of(read_eval_log(str(log_path)).stats.completed_at)
    if isinstance(exclude, dict):
        exclude = {
            i: {**e, "at": end} if isinstance(e, dict) and e.get("at") == LOG_END else e for i, e in exclude.items()
        }
    mapping = write_mapping(tmp_path, exclude=exclude)
    err = refused(importing(program, log_path, mapping), program.data, program.private)
    named(err, message, where)
    assert len(err.problems) == 1 and err.problems[0].file == str(mapping), err.describe()


@pytest.mark.parametrize(
    ("at", "message"),
    [
        ("2000-01-01T00:00:00Z", "the exclusion of item a-001 is dated before the attempt it sets aside"),
        ("2999-01-01T00:00:00Z", "the exclusion is dated after the evaluation finished"),
    ],
    ids=["before-the-attempt", "after-the-run"],
)
def test_an_exclusion_out_of_the_chain_s_time_order_is_refused(
    program: Paths, tmp_path: Path, at: str, message: str
) -> None:
    mapping = write_mapping(tmp_path, exclude={"a-001": {**GOOD_EXCLUSION, "at": at}})
    err = refused(importing(program, make_log(tmp_path / "logs"), mapping), program.data, program.private)
    named(err, message, "exclude.a-001.at")
    assert len(err.problems) == 1, err.describe()


# ---------------------------------------------------------------------------------------------
# Scores edited by hand after the evaluation

EDITED_AT = dt.datetime(2026, 3, 2, 9, 30, 15, 700000, tzinfo=dt.UTC)  # after the log, before certify


def edited(log_path: Path, out: Path, *edits: tuple[str, str, ScoreEdit]) -> Path:
    """The log with scores edited through Inspect's own API (edit_score), written again by Inspect."""
    log = read_eval_log(str(log_path))
    for sample_id, name, edit in edits:
        edit_score(log, sample_id, name, edit)
    write_eval_log(log, str(out))
    return out


def by_reviewer(reason: str | None = "the reference answer was wrong", at: dt.datetime = EDITED_AT) -> ProvenanceData:
    return ProvenanceData(author="reviewer@example.org", timestamp=at, reason=reason)


def test_an_edited_score_is_refused_naming_sample_scorer_editor_time_and_reason(program: Paths, tmp_path: Path) -> None:
    log_path = edited(
        make_log(tmp_path / "logs"),
        tmp_path / "edited.eval",
        ("a-002", "similarity", ScoreEdit(value=1.0, provenance=by_reviewer())),
    )
    err = refused(importing(program, log_path, write_mapping(tmp_path)), program.data, program.private)
    [p] = err.problems
    assert p.file.endswith("edited.eval") and p.where == "scores.similarity.history[1]", err.describe()
    assert p.message.startswith(
        'sample a-002: score similarity was edited by "reviewer@example.org" at 2026-03-02T09:30:15Z '
        '("the reference answer was wrong"), from "0.95" to "1.0": a certificate would rest on a score changed by hand'
    ), p.message
    assert "accept_score_edits: true" in p.message
    # A mapping that says false is the default, said aloud.
    refused(importing(program, log_path, write_mapping(tmp_path, accept_score_edits=False)), program.data)


def test_accepted_score_edits_are_carried_into_the_results_the_certificate_and_its_page(
    program: Paths, tmp_path: Path
) -> None:
    later = EDITED_AT.replace(hour=11)
    log_path = edited(
        make_log(tmp_path / "logs"),
        tmp_path / "edited.eval",
        ("a-002", "similarity", ScoreEdit(value=1.0, provenance=by_reviewer())),
        ("a-002", "similarity", ScoreEdit(value="C", provenance=by_reviewer("second thoughts", later))),
        # An edit of the metadata the mapping reads: the value stays, the similarity changes.
        ("a-003", "similarity", ScoreEdit(metadata={"summary": "0.99"}, provenance=by_reviewer("rescored"))),
    )
    import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path, accept_score_edits=True))
    doc = results_of(program)
    edit = {"scorer": "similarity", "by": "reviewer@example.org", "reason": "the reference answer was wrong"}
    assert by_item(doc)["a-002"]["score_edits"] == [
        {**edit, "from": "0.95", "to": "1.0", "at": "2026-03-02T09:30:15Z"},
        {**edit, "from": "1.0", "to": "C", "at": "2026-03-02T11:30:15Z", "reason": "second thoughts"},
    ]
    a003 = by_item(doc)["a-003"]
    assert a003["score_edits"] == [
        {**edit, "from": "0.95", "to": "0.95", "at": "2026-03-02T09:30:15Z", "reason": "rescored"}
    ]
    assert a003["fields"][1] == {"name": "summary", "output": "Summary of a-003", "similarity": "0.99"}
    assert "score_edits" not in by_item(doc)["a-001"]
    cert = certify_run(program, program.private / "results" / "run-1.json")
    doc_cert = json.loads(program.certificate_file(cert.serial).read_text(encoding="utf-8"))
    results = {r["item"]: r for r in doc_cert["results"]}
    assert results["a-002"]["score_edits"] == by_item(doc)["a-002"]["score_edits"]
    assert results["a-003"]["score_edits"] == a003["score_edits"] and "score_edits" not in results["a-001"]
    site = tmp_path / "public"
    build(program, site)
    report = verify_site(site)
    assert report.ok, report.render()
    page = (site / "certificates" / cert.serial / "index.html").read_text(encoding="utf-8")
    assert "Score <code>similarity</code> edited by <bdi>reviewer@example.org</bdi> at" in page
    assert '<time datetime="2026-03-02T11:30:15Z">2026-03-02T11:30:15Z</time>: <bdi>second thoughts</bdi>' in page
    assert "<bdi>the reference answer was wrong</bdi>" in page and "<bdi>rescored</bdi>" in page


def test_an_accepted_edit_must_say_who_when_and_why(program: Paths, tmp_path: Path) -> None:
    log_path = edited(
        make_log(tmp_path / "logs"),
        tmp_path / "edited.eval",
        ("a-001", "similarity", ScoreEdit(value=0.5)),  # no provenance at all
        ("a-003", "similarity", ScoreEdit(value=0.5, provenance=by_reviewer(None))),  # no reason
    )
    err = refused(
        importing(program, log_path, write_mapping(tmp_path, accept_score_edits=True)), program.data, program.private
    )
    assert [(p.message.split(":")[0], p.where) for p in err.problems] == [
        ("sample a-001", "scores.similarity.history[1].provenance"),
        ("sample a-003", "scores.similarity.history[1].provenance"),
    ], err.describe()
    assert all("an accepted edit states who made it, when and why" in p.message for p in err.problems)


def test_an_edit_hidden_from_the_score_s_history_is_refused(program: Paths, tmp_path: Path) -> None:
    """The events keep each edit too: a history emptied by hand does not hide one."""
    log_path = edited(
        make_log(tmp_path / "logs"),
        tmp_path / "edited.eval",
        ("a-002", "similarity", ScoreEdit(value=1.0, provenance=by_reviewer())),
    )
    log = read_eval_log(str(log_path))
    assert log.samples is not None
    [sample] = [s for s in log.samples if s.id == "a-002"]
    assert sample.scores is not None
    sample.scores["similarity"].history = []
    write_eval_log(log, str(tmp_path / "hidden.eval"))
    err = refused(
        importing(program, tmp_path / "hidden.eval", write_mapping(tmp_path, accept_score_edits=True)), program.data
    )
    assert [p.where for p in err.problems] == ["scores.similarity.history"], err.describe()
    assert "the log's events record 1 edit(s) of it and its history 0" in err.problems[0].message


def test_accept_score_edits_is_a_boolean(program: Paths, tmp_path: Path) -> None:
    err = refused(
        importing(program, make_log(tmp_path / "logs"), write_mapping(tmp_path, accept_score_edits="yes")), program.data
    )
    assert [(p.where, p.expected) for p in err.problems] == [("accept_score_edits", "true or false")]


def test_certify_refuses_a_score_edit_dated_after_the_certificate(program: Paths, tmp_path: Path) -> None:
    log_path = edited(
        make_log(tmp_path / "logs"),
        tmp_path / "edited.eval",
        ("a-002", "similarity", ScoreEdit(value=1.0, provenance=by_reviewer(at=EDITED_AT.replace(year=2100)))),
    )
    import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path, accept_score_edits=True))
    err = refused(
        lambda: certify_run(program, program.private / "results" / "run-1.json"),  # now, before the edit
        program.data,
    )
    assert [p.where for p in err.problems] == ["results[1].score_edits[0].at"], err.describe()


# ---------------------------------------------------------------------------------------------
# The log as evidence


def test_the_log_is_evidence_that_certify_keeps_and_the_site_publishes(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    data = log_path.read_bytes()
    out = tmp_path / "results" / "run-1" / "results.json"
    done = import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path), out=out, evidence_name="run.eval")
    entry = {
        "name": "run.eval",
        "path": f"../../logs/{log_path.name}",
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "items": ITEMS,
    }
    assert done.evidence == [entry]
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["evidence"] == [entry] and list(doc) == [
        "type",
        "v",
        "run",
        "finished_at",
        "results",
        "evidence",
        "source",
    ]
    cert = certify_run(program, out)
    signed = loads_strict(program.certificate_file(cert.serial).read_bytes())
    assert signed["evidence"] == [{k: v for k, v in entry.items() if k != "path"}]
    # A public gate: the log is in the data directory at once, and on the built site.
    assert program.evidence_file(cert.serial, "run.eval").read_bytes() == data
    site = tmp_path / "site"
    build(program, site)
    assert (site / "certificates" / cert.serial / "evidence" / "run.eval").read_bytes() == data
    report = verify_site(site)
    assert report.ok, report.render()


def test_without_evidence_the_results_list_none(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs")
    done = import_inspect_log(program, log_path, "run-1", write_mapping(tmp_path), evidence=False)
    assert done.evidence == [] and "evidence" not in results_of(program)
    cert = certify_run(program, program.private / "results" / "run-1.json")
    assert "evidence" not in loads_strict(program.certificate_file(cert.serial).read_bytes())


@pytest.mark.parametrize("name", ["../run.eval", "run.py", ".hidden", "run.eval.sig", "a b.eval", "x" * 129])
def test_a_bad_evidence_name_is_refused(program: Paths, tmp_path: Path, name: str) -> None:
    log_path = make_log(tmp_path / "logs")
    err = refused(
        importing(program, log_path, write_mapping(tmp_path), evidence_name=name), program.data, program.private
    )
    named(err, "not a name an evidence file can have")
    assert [p.file for p in err.problems] == ["--evidence-name"]


def test_a_log_whose_file_name_cannot_be_an_evidence_name_needs_one(program: Paths, tmp_path: Path) -> None:
    renamed = tmp_path / "my log (final).eval"
    shutil.copyfile(make_log(tmp_path / "logs"), renamed)
    mapping = write_mapping(tmp_path)
    err = refused(importing(program, renamed, mapping), program.data, program.private)
    named(err, "cannot be the name of an evidence file: pass --evidence-name NAME")
    import_inspect_log(program, renamed, "run-1", mapping, evidence_name="final.eval")
    assert results_of(program)["evidence"][0]["path"] == os.path.relpath(renamed, program.private / "results")
    certify_run(program, program.private / "results" / "run-1.json")


def test_a_linked_log_is_not_evidence(program: Paths, tmp_path: Path) -> None:
    link = tmp_path / "run.eval"
    link.symlink_to(make_log(tmp_path / "logs"))
    mapping = write_mapping(tmp_path)
    err = refused(importing(program, link, mapping), program.data, program.private)
    named(err, "is a symbolic link, and certify reads an evidence file only as a regular file")
    import_inspect_log(program, link, "run-1", mapping, evidence=False)


def test_an_evidence_name_with_no_evidence_is_refused(program: Paths, tmp_path: Path) -> None:
    err = refused(
        importing(
            program, make_log(tmp_path / "logs"), write_mapping(tmp_path), evidence_name="run.eval", evidence=False
        ),
        program.data,
        program.private,
    )
    named(err, "which --no-evidence leaves out")


# ---------------------------------------------------------------------------------------------
# The log must be the one the mapping states; the mapping must be valid


@pytest.mark.parametrize(
    ("over", "where", "expected"),
    [({"task": "summarise"}, "eval.task", "summarise"), ({"model": "openai/gpt-4o"}, "eval.model", "openai/gpt-4o")],
    ids=["task", "model"],
)
def test_a_log_of_another_task_or_model_is_refused(
    program: Paths, tmp_path: Path, over: dict[str, str], where: str, expected: str
) -> None:
    err = refused(
        importing(program, make_log(tmp_path / "logs"), write_mapping(tmp_path, **over)), program.data, program.private
    )
    named(err, "the log is of another", where)
    [p] = [p for p in err.problems if p.where == where]
    assert (p.expected, p.found) == (expected, TASK if where == "eval.task" else MODEL)


def test_a_mapping_is_validated_strictly(program: Paths, tmp_path: Path) -> None:
    mapping = write_mapping(
        tmp_path,
        {
            "model": "",
            "itme": "id",
            "item": "sample.id",
            "fields": {"summary": "output.text", "tags": "score.similarity"},
            "similarity": {"summary": "score.similarity.metadata"},
        },
    )
    err = refused(importing(program, make_log(tmp_path / "logs"), mapping), program.data, program.private)
    named(err, "unknown key 'itme'")
    named(err, "the mapping states the task", "task")
    named(err, "the mapping states the model", "model")
    named(err, "where a sample's item id is", "item")
    named(err, "not a source", "fields.summary")
    named(err, "not a source", "fields.tags")
    named(err, "not a source", "similarity.summary")


def test_a_mapping_naming_fields_no_item_has_is_refused(program: Paths, tmp_path: Path) -> None:
    mapping = write_mapping(
        tmp_path,
        fields={"sumary": "completion"},
        similarity={"summary": "score.similarity.metadata.summary", "tags": "score.similarity.metadata.tags"},
    )
    err = refused(importing(program, make_log(tmp_path / "logs"), mapping), program.data, program.private)
    named(err, "no item of run run-1 has a field sumary", "fields.sumary")
    named(err, "no item of run run-1 has a non-critical text field tags", "similarity.tags")


# ---------------------------------------------------------------------------------------------
# Writing


def test_an_existing_results_file_is_kept_unless_forced(program: Paths, tmp_path: Path) -> None:
    log_path, mapping = make_log(tmp_path / "logs"), write_mapping(tmp_path)
    out = tmp_path / "out" / "results.json"
    out.parent.mkdir()
    out.write_text("mine\n", encoding="utf-8")
    err = refused(importing(program, log_path, mapping, out=out), program.data, program.private, out.parent)
    named(err, "already exists; refusing to overwrite it")
    import_inspect_log(program, log_path, "run-1", mapping, out=out, force=True)
    assert json.loads(out.read_text(encoding="utf-8"))["run"] == "run-1"
    assert [p.name for p in out.parent.iterdir()] == ["results.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("run_id", "message"),
    [("run-9", "run run-9 is not registered"), ("../run-1", "malformed run id")],
)
def test_an_unknown_or_malformed_run_is_refused(program: Paths, tmp_path: Path, run_id: str, message: str) -> None:
    err = refused(
        importing(program, make_log(tmp_path / "logs"), write_mapping(tmp_path), run=run_id),
        program.data,
        program.private,
    )
    named(err, message)


def test_a_file_that_is_not_an_inspect_log_is_refused(program: Paths, tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"not a zip")
    err = refused(importing(program, bad, write_mapping(tmp_path)), program.data, program.private)
    named(err, "not an Inspect log that inspect_ai can read")


def test_notes_are_one_line_of_bounded_length() -> None:
    assert note_text("Traceback:\n  line 1\x1b[31m\u202e  end  ") == "Traceback: line 1 [31m end"
    assert len(note_text("x" * 10_000)) == 500 and note_text("x" * 10_000).endswith("…")
    assert note_text("") == "no message"


# ---------------------------------------------------------------------------------------------
# Without Inspect


def test_without_inspect_the_error_says_how_to_install_it(
    program: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mapping = write_mapping(tmp_path)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(InspectNotInstalled) as info:
        import_inspect_log(program, tmp_path / "log.eval", "run-1", mapping)
    assert INSTALL_HINT in str(info.value) and "pip install -e '.[inspect]'" in INSTALL_HINT
    assert not isinstance(info.value, InputError) and info.value.exit_code == 2
    argv = ["--data", str(program.data), "--private", str(program.private), "results", "from-inspect"]
    result = CliRunner().invoke(main, [*argv, str(tmp_path / "log.eval"), "--run", "run-1", "--map", str(mapping)])
    assert result.exit_code == 2 and "pip install -e '.[inspect]'" in result.stderr


# ---------------------------------------------------------------------------------------------
# The command line


def test_the_command_line(program: Paths, tmp_path: Path) -> None:
    log_path = make_log(tmp_path / "logs", solver=failing("a-002", times=1), retry_on_error=1)
    argv = ["--data", str(program.data), "--private", str(program.private), "results", "from-inspect"]
    argv += [str(log_path), "--run", "run-1", "--map", str(write_mapping(tmp_path))]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0, result.output
    assert "3 results (3 scored); 1 retried" in result.stdout
    assert f"evidence {log_path.name} (at" in result.stdout
    assert "Next: transparency certify" in result.stdout
    again = CliRunner().invoke(main, argv)
    assert again.exit_code == 2 and "already exists" in again.stderr
    named_log = CliRunner().invoke(main, [*argv, "--force", "--evidence-name", "run.eval"])
    assert named_log.exit_code == 0, named_log.output
    assert [e["name"] for e in results_of(program)["evidence"]] == ["run.eval"]
    left_out = CliRunner().invoke(main, [*argv, "--force", "--no-evidence"])
    assert left_out.exit_code == 0 and "evidence" not in left_out.stdout, left_out.output
    assert "evidence" not in results_of(program)
    bad = CliRunner().invoke(main, [*argv, "--force", "--evidence-name", "run.py"])
    assert bad.exit_code == 2 and "--evidence-name" in bad.stderr, bad.output


def test_the_help_teaches_the_mapping() -> None:
    out = CliRunner().invoke(main, ["results", "from-inspect", "--help"]).stdout
    for text in (
        "task:",
        "model:",
        "item:",
        "fields:",
        "similarity:",
        "judge_labels:",
        "exclude:",
        "accept_score_edits:",
        "rule:",
        "note:",
        "at:",
        "score.<scorer>.metadata.<key>",
        "--evidence-name",
        "--no-evidence",
        "Example:",
    ):
        assert text in out, text
    assert "from-inspect" in CliRunner().invoke(main, ["results", "--help"]).stdout


# ---------------------------------------------------------------------------------------------
# The demo's fixture


def demo_before_quill_a_3(target: Path) -> Paths:
    """A copy of the demo program as it was before its run quill-a-3 was decided: the ledger up
    to that run's first event after its registration (data/make-demo-evidence.sh), and none of
    the files those events and the later ones wrote."""
    return demo_before(target, b'"type":"label-set"')


def test_the_demo_s_results_are_what_the_importer_makes_of_its_committed_log(tmp_path: Path) -> None:
    """The demo is reproducible from its inputs: the committed Inspect log and mapping import to
    the committed results file, byte for byte."""
    paths = demo_before_quill_a_3(tmp_path / "data")
    inputs = REPO / "data" / "demo" / "inspect"
    # The results file sits where the demo keeps it, so that its evidence path is the same.
    (paths.data / "demo" / "inspect").mkdir(parents=True, exist_ok=True)
    shutil.copy(inputs / "quill-a-3.eval", paths.data / "demo" / "inspect" / "quill-a-3.eval")
    out = paths.private / "results" / "quill-a-3.json"
    import_inspect_log(
        paths, paths.data / "demo" / "inspect" / "quill-a-3.eval", "quill-a-3", inputs / "quill-a-3.map.yaml", out=out
    )
    assert out.read_bytes() == (REPO / "data" / "private" / "results" / "quill-a-3.json").read_bytes()


def test_the_fixture_script_makes_a_log_of_the_demo_run_that_imports_and_certifies(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_inspect_fixture", REPO / "tools" / "make_inspect_fixture.py")
    assert spec is not None and spec.loader is not None
    fixture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixture)
    out = tmp_path / "quill-a-3.eval"
    mapping = fixture.make_log(out)
    paths = demo_before_quill_a_3(tmp_path / "data")
    (tmp_path / "map.json").write_text(json.dumps(mapping), encoding="utf-8")
    results = tmp_path / "results.json"
    done = import_inspect_log(paths, out, "quill-a-3", tmp_path / "map.json", out=results)
    assert (done.counts, done.retried, done.finished_at) == ({"scored": 8}, 1, "2026-11-28T10:09:00Z")
    doc = json.loads(results.read_text(encoding="utf-8"))
    assert doc["source"]["scorers"] == ["similarity", "judge"]
    assert doc["evidence"] == [
        {
            "name": "quill-a-3.eval",
            "path": "quill-a-3.eval",
            "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
            "size": out.stat().st_size,
            "items": [f"a-00{i}" for i in range(1, 9)],
        }
    ]
    # The judge's labels: 4 and 4 for an answer without a wrong field, less for one with.
    labels = {r["item"]: r["judge_labels"] for r in doc["results"]}
    assert labels == {
        **{i: {"completeness": 4, "correctness": 4} for i in ("a-001", "a-002", "a-004", "a-007")},
        "a-003": {"completeness": 3, "correctness": 2},
        "a-005": {"completeness": 3, "correctness": 2},
        "a-006": {"completeness": 2, "correctness": 2},  # the snippets left empty
        "a-008": {"completeness": 3, "correctness": 2},
    }
    assert mapping["judge_labels"] == {
        "completeness": "score.judge.metadata.completeness",
        "correctness": "score.judge.metadata.correctness",
    }
    a004 = by_item(doc)["a-004"]
    assert a004["attempts"] == [
        {
            "attempt": 1,
            "retry_of": None,
            "status": "infra_error",
            "note": "ConnectionResetError('simulated: the model endpoint reset the connection')",
            "at": "2026-11-28T10:04:00Z",
            "evidence": ["quill-a-3.eval"],
        }
    ]
    assert (a004["attempt"], a004["retry_of"], a004["at"]) == (2, 1, "2026-11-28T10:04:30Z")
    cert = certify_run(paths, results, at="2026-12-01T09:00:00Z")
    assert cert.summary["scored"] == 8
    assert not [r for r in doc["results"] if "score_edits" in r]  # no score edited, none to accept


def test_the_fixture_script_edits_a_score_with_inspect_s_own_api(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_inspect_fixture", REPO / "tools" / "make_inspect_fixture.py")
    assert spec is not None and spec.loader is not None
    fixture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixture)
    out = tmp_path / "quill-a-3-edited.eval"
    mapping = fixture.make_log(out, edited=True)
    assert mapping["accept_score_edits"] is True
    log = read_eval_log(str(out))
    assert log.samples is not None
    [sample] = [s for s in log.samples if s.id == "a-005"]
    assert sample.scores is not None
    history = sample.scores["judge"].history
    assert [h.value for h in history] == [2, 3] and history[0].provenance is None
    assert history[1].provenance is not None and history[1].provenance.author == "reviewer@quill.example"
    assert [e.score_name for e in sample.events if e.event == "score_edit"] == ["judge"]
    paths = demo_before_quill_a_3(tmp_path / "data")
    (tmp_path / "map.json").write_text(json.dumps(mapping), encoding="utf-8")
    results = tmp_path / "results.json"
    import_inspect_log(paths, out, "quill-a-3", tmp_path / "map.json", out=results)
    assert by_item(json.loads(results.read_text(encoding="utf-8")))["a-005"]["score_edits"] == [DEMO_EDIT]


FIXTURES = REPO / "tests" / "integration" / "importers" / "fixtures"
EDITED_FIXTURE = FIXTURES / "quill-a-3-edited.eval"
DEMO_EDIT = {
    "scorer": "judge",
    "from": 2,
    "to": 3,
    "by": "reviewer@quill.example",
    "at": "2026-11-29T08:15:00Z",
    "reason": "The requested action is a paraphrase the rubric accepts; correctness raised on review.",
}


def test_the_committed_edited_fixture_is_refused_without_the_key_and_certified_with_it(tmp_path: Path) -> None:
    """tests/integration/importers/fixtures/quill-a-3-edited.eval, made with Inspect's own edit API: the demo
    run's log with one judge score raised by a reviewer."""
    paths = demo_before_quill_a_3(tmp_path / "data")
    mapping = yaml.safe_load((FIXTURES / "quill-a-3-edited.map.yaml").read_text(encoding="utf-8"))
    assert mapping["accept_score_edits"] is True
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({k: v for k, v in mapping.items() if k != "accept_score_edits"}), encoding="utf-8")
    out = tmp_path / "results.json"
    err = refused(lambda: import_inspect_log(paths, EDITED_FIXTURE, "quill-a-3", strict, out=out), paths.data, tmp_path)
    assert [p.message.split(":")[0] for p in err.problems] == ["sample a-005"], err.describe()
    assert 'score judge was edited by "reviewer@quill.example" at 2026-11-29T08:15:00Z' in err.problems[0].message
    import_inspect_log(paths, EDITED_FIXTURE, "quill-a-3", FIXTURES / "quill-a-3-edited.map.yaml", out=out)
    a005 = by_item(json.loads(out.read_text(encoding="utf-8")))["a-005"]
    assert a005["score_edits"] == [DEMO_EDIT]
    assert a005["judge_labels"] == {"completeness": 3, "correctness": 3}  # the edited metadata, as the mapping reads it
    cert = certify_run(paths, out, at="2026-12-01T09:00:00Z")
    doc = loads_strict(paths.certificate_file(cert.serial).read_bytes())
    assert [r["item"] for r in doc["results"] if "score_edits" in r] == ["a-005"]
    assert by_item(doc)["a-005"]["score_edits"] == [DEMO_EDIT]
