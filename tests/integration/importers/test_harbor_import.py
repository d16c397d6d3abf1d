"""`transparency results from-harbor`: a Harbor job's folder turned into a run's results file. The
committed demo job was written by Harbor itself, and one test runs Harbor again
(tools/make_harbor_fixture.py, in Harbor's own Python 3.12 environment) and certifies what it wrote;
the refusals are made by changing one member of a copy of the real job.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.certify import certify_run
from generator.commands.register import register_runs
from generator.core.generator_errors import InputError
from generator.importers.harbor.harbor_output import import_harbor_job
from generator.program.datadir import Paths
from generator.verifier import verify_site
from tests.support.demo import REPO, demo_before
from tests.support.harnesses import harness_python, run_tool
from tests.support.runs import named

DEMO = REPO / "data" / "demo" / "harbor"
RUN = "heron-a-1"
REGISTERED = "2026-12-05T12:30:00Z"
ITEMS = [f"a-00{i}" for i in range(1, 9)]


@pytest.fixture
def program(tmp_path: Path) -> Paths:
    """The demo program as it was before run heron-a-1, which is then registered as the demo
    registers it (data/make-demo-harnesses.sh)."""
    paths = demo_before(tmp_path / "data", f'"id":"{RUN}"'.encode())
    register_runs(paths, [REPO / "data" / "demo" / "run-specs" / f"{RUN}.json"], REGISTERED)
    return paths


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A copy of the committed Harbor job."""
    return Path(shutil.copytree(DEMO / RUN, tmp_path / "jobs" / RUN))


def mapping_file(where: Path, **over: Any) -> Path:
    m = yaml.safe_load((DEMO / f"{RUN}.map.yaml").read_text(encoding="utf-8"))
    m.update(over)
    path = where / "map.yaml"
    path.write_text(yaml.safe_dump(m, sort_keys=False), encoding="utf-8")
    return path


def trial_of(job: Path, item: str) -> Path:
    [folder] = job.glob(f"{item}__*")
    return folder


def change(path: Path, how: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    how(doc)
    path.write_text(json.dumps(doc, indent=4), encoding="utf-8")


def refused_import(program: Paths, job: Path, tmp_path: Path, **over: Any) -> InputError:
    out = tmp_path / "results.json"
    with pytest.raises(InputError) as e:
        import_harbor_job(program, job, RUN, mapping_file(tmp_path, **over), out=out)
    assert not out.exists()
    return e.value


def by_item(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["item"]: r for r in doc["results"]}


# ---------------------------------------------------------------------------------------------
# The real job certifies


def test_the_committed_job_imports_certifies_and_verifies(program: Paths, job: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = import_harbor_job(program, job, RUN, mapping_file(tmp_path), out=out)
    assert done.counts == {"scored": 6, "infra_error": 1, "not_run": 1}
    doc = json.loads(out.read_text(encoding="utf-8"))
    # The job was interrupted: its end is its last update.
    assert doc["finished_at"] == "2026-12-05T13:06:30Z"
    results = by_item(doc)
    assert results["a-004"] == {
        "item": "a-004",
        "status": "infra_error",
        "note": "RuntimeError: the sandbox exited with code 137 before it was ready (out of memory)",
    }
    assert results["a-006"] == {
        "item": "a-006",
        "status": "not_run",
        "note": "the job was interrupted before its task started",
    }
    a003 = {f["name"]: f for f in results["a-003"]["fields"]}
    assert a003["postal_code"]["output"] == "03952"
    assert results["a-003"]["judge_labels"] == {"completeness": 3, "correctness": 2}
    # The job's result concerns every item; a trial's files its own item only.
    entries = {e["name"]: e for e in doc["evidence"]}
    assert entries["job-result.json"]["items"] == ITEMS
    trial = trial_of(job, "a-003")
    answer = entries[f"{trial.name}.answer.answer.json"]
    assert answer["items"] == ["a-003"]
    assert answer["sha256"] == hashlib.sha256((trial / "artifacts" / "answer.json").read_bytes()).hexdigest()
    assert f"{trial.name}.answer.answer.json" in entries
    assert f"{trial.name}.trajectory.json" in entries and f"{trial_of(job, 'a-004').name}.result.json" in entries
    assert doc["source"]["kind"] == "harbor" and doc["source"]["harbor_version"] == "0.25.0"
    cert = certify_run(program, out, at="2026-12-05T14:10:00Z")
    assert cert.summary["scored"] == 6
    build(program, tmp_path / "public")
    report = verify_site(tmp_path / "public")
    assert report.ok, report.render()[-3000:]
    published = tmp_path / "public" / "certificates" / RUN / "evidence" / f"{trial.name}.trajectory.json"
    assert published.read_bytes() == (trial / "agent" / "trajectory.json").read_bytes()


def test_the_demo_s_results_are_what_the_importer_makes_of_its_committed_job(program: Paths) -> None:
    """The demo is reproducible from its inputs: the committed job and mapping import to the
    committed results file, byte for byte."""
    out = program.private / "results" / f"{RUN}.json"
    import_harbor_job(program, program.data / "demo" / "harbor" / RUN, RUN, DEMO / f"{RUN}.map.yaml", out=out)
    assert out.read_bytes() == (REPO / "data" / "private" / "results" / f"{RUN}.json").read_bytes()


def test_harbor_itself_makes_a_job_that_imports_and_certifies(program: Paths, tmp_path: Path) -> None:
    """The fixture script, run now by Harbor in its own environment: byte for byte the committed
    job but for the paths Harbor records of where it ran."""
    python = harness_python("harbor")
    run_tool(python, REPO / "tools" / "make_harbor_fixture.py", str(tmp_path / "jobs"))
    fresh = tmp_path / "jobs" / RUN
    out = tmp_path / "results.json"
    done = import_harbor_job(program, fresh, RUN, DEMO / f"{RUN}.map.yaml", out=out)
    assert done.counts == {"scored": 6, "infra_error": 1, "not_run": 1}
    committed = {p.relative_to(DEMO / RUN): p.read_bytes() for p in (DEMO / RUN).rglob("answer.json")}
    assert committed == {p.relative_to(fresh): p.read_bytes() for p in fresh.rglob("answer.json")}
    assert certify_run(program, out, at="2026-12-05T14:10:00Z").summary["scored"] == 6


def test_the_command_line_reports_what_it_wrote(program: Paths, job: Path, tmp_path: Path) -> None:
    args = ["--data", str(program.data), "--private", str(program.private), "results", "from-harbor", str(job)]
    args += ["--run", RUN, "--map", str(mapping_file(tmp_path)), "--out", str(tmp_path / "r.json")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "8 results (1 infra_error, 1 not_run, 6 scored)" in result.output
    assert "20 evidence files, from job-result.json" in result.output


# ---------------------------------------------------------------------------------------------
# Retries and exclusions


def test_a_failed_trial_tried_again_is_the_result_s_earlier_attempt(program: Paths, job: Path, tmp_path: Path) -> None:
    """Harbor retried a-001 after an exception: the failed trial's folder stays beside the new one."""
    failed = Path(shutil.copytree(trial_of(job, "a-004"), job / "a-001__retried"))

    def earlier(doc: dict[str, Any]) -> None:
        doc.update(task_name="a-001", trial_name="a-001__retried", started_at="2026-12-05T12:59:00Z")
        doc["finished_at"] = "2026-12-05T12:59:20Z"

    change(failed / "result.json", earlier)
    change(job / "result.json", lambda d: d["stats"].update(n_completed_trials=8))  # Harbor counts the retried trial
    out = tmp_path / "results.json"
    done = import_harbor_job(program, job, RUN, mapping_file(tmp_path), out=out)
    assert done.retried == 1
    a001 = by_item(json.loads(out.read_text(encoding="utf-8")))["a-001"]
    assert (a001["attempt"], a001["retry_of"], a001["status"]) == (2, 1, "scored")
    assert a001["attempts"] == [
        {
            "attempt": 1,
            "retry_of": None,
            "status": "infra_error",
            "note": "RuntimeError: the sandbox exited with code 137 before it was ready (out of memory)",
            "at": "2026-12-05T12:59:20Z",
            "evidence": ["a-001__retried.result.json"],
        }
    ]
    assert certify_run(program, out, at="2026-12-05T14:10:00Z").summary["scored"] == 6


def test_an_excluded_item_keeps_the_trial_it_sets_aside(program: Paths, job: Path, tmp_path: Path) -> None:
    exclude = {"a-002": {"rule": 0, "note": "Answer key under review.", "at": "2026-12-05T13:06:30Z"}}
    out = tmp_path / "excluded.json"
    done = import_harbor_job(program, job, RUN, mapping_file(tmp_path, exclude=exclude), out=out)
    assert done.counts == {"scored": 5, "infra_error": 1, "not_run": 1, "excluded": 1}
    a002 = by_item(json.loads(out.read_text(encoding="utf-8")))["a-002"]
    [attempt] = a002["attempts"]
    assert attempt["status"] == "scored" and attempt["at"] == "2026-12-05T13:01:30Z"
    assert attempt["native"]["rewards"]["correctness"] == 4
    early = {"a-002": {**exclude["a-002"], "at": "2026-12-05T13:00:00Z"}}
    named(refused_import(program, job, tmp_path, exclude=early), "is dated outside", "exclude.a-002.at")


# ---------------------------------------------------------------------------------------------
# Refusals, each naming the file and the member


def test_an_unfinished_job_is_refused_unless_the_mapping_says_it_was_interrupted(
    program: Paths, job: Path, tmp_path: Path
) -> None:
    err = refused_import(program, job, tmp_path, interrupted=False)
    named(err, "the job did not finish", "result.json: finished_at")
    named(err, "no trial of item(s) a-006 of run heron-a-1")


def test_another_agent_or_model_and_a_start_before_the_registration_are_refused(
    program: Paths, job: Path, tmp_path: Path
) -> None:
    err = refused_import(program, job, tmp_path, model="heron/heron-agent-1.0")
    where = f"{trial_of(job, 'a-001').name}/result.json: agent_info.model_info.name"
    named(err, "is of another model than the mapping states", where)
    change(trial_of(job, "a-001") / "result.json", lambda d: d.update(started_at="2026-12-05T12:00:00Z"))
    named(refused_import(program, job, tmp_path), "the job started before run heron-a-1 was registered")


def test_trials_of_no_item_two_finished_trials_of_one_and_bad_answers_are_refused(
    program: Paths, job: Path, tmp_path: Path
) -> None:
    change(trial_of(job, "a-001") / "result.json", lambda d: d.update(task_name="a-099"))
    shutil.copytree(trial_of(job, "a-002"), job / "a-002__again")
    answer = trial_of(job, "a-003") / "artifacts" / "answer.json"
    value = json.loads(answer.read_text(encoding="utf-8"))
    value["colour"] = "blue"
    del value["postal_code"]
    answer.write_text(json.dumps(value), encoding="utf-8")
    (trial_of(job, "a-005") / "artifacts" / "answer.json").write_text("not json", encoding="utf-8")
    change(trial_of(job, "a-007") / "result.json", lambda d: d["verifier_result"]["rewards"].update(correctness=3.0))
    err = refused_import(program, job, tmp_path)
    named(err, f"trial {trial_of(job, 'a-001').name} is of task a-099, which is no item of run heron-a-1")
    named(err, "item a-002 has 2 trials, 2 of them finished")
    named(err, "the answer file gives colour, which item a-003's answer does not have")
    named(err, "field postal_code: no value at answer.postal_code")
    named(err, "the answer file should be a JSON object of the item's fields, and is not JSON")
    named(err, "judge label correctness: a judge label is an integer", "reward.correctness")


def test_a_mapping_with_unknown_keys_or_bad_sources_is_refused(program: Paths, job: Path, tmp_path: Path) -> None:
    err = refused_import(
        program, job, tmp_path, task="x", answer_file="../answer.json", similarity={"summary": "rewards.x"}
    )
    named(err, "unknown key 'task'")
    named(err, "answer_file is where in a trial's folder the agent's answer is", "answer_file")
    named(err, "not a source", "similarity.summary")


def test_a_trial_taken_away_or_brought_from_another_job_is_refused(program: Paths, job: Path, tmp_path: Path) -> None:
    """A failure made to look never run, by deleting its trial's folder from an interrupted job, or a
    better trial copied in from another job: the job's own result and the trials' job id disagree."""
    shutil.rmtree(trial_of(job, "a-004"))
    named(refused_import(program, job, tmp_path), "counts 7 completed trial(s), and the folder holds 6")
    change(trial_of(job, "a-003") / "result.json", lambda d: d["config"].update(job_id="another-job"))
    where = f"{trial_of(job, 'a-003').name}/result.json: config.job_id"
    named(refused_import(program, job, tmp_path), "is of another job than this folder's", where)


def test_links_inside_a_trial_s_folder_are_refused(program: Paths, job: Path, tmp_path: Path) -> None:
    trial = trial_of(job, "a-001")
    shutil.rmtree(trial / "artifacts")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "answer.json").write_text("{}", encoding="utf-8")
    (trial / "artifacts").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError) as e:
        import_harbor_job(program, job, RUN, mapping_file(tmp_path), out=tmp_path / "r.json")
    named(e.value, "a symbolic link inside the trial's folder")
