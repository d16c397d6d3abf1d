"""`transparency results from-lm-eval`: lm-evaluation-harness's results and logged samples turned into a
run's results file. The committed demo output was written by lm-eval itself, and one test runs lm-eval
again (tools/make_lm_eval_fixture.py, in lm-eval's own environment) and certifies what it wrote; the
refusals are made by changing one member of a copy of the real output.
"""

from __future__ import annotations

import datetime as dt
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
from generator.importers.lm_eval.lm_eval_output import import_lm_eval_output
from generator.program.datadir import Paths
from generator.verifier import verify_site
from tests.support.demo import REPO, demo_before
from tests.support.harnesses import harness_python, run_tool
from tests.support.runs import named

DEMO = REPO / "data" / "demo" / "lm-eval"
RUN = "orca-a-1"
REGISTERED = "2026-12-05T12:00:00Z"
ITEMS = [f"a-00{i}" for i in range(1, 9)]


@pytest.fixture
def program(tmp_path: Path) -> Paths:
    """The demo program as it was before run orca-a-1, which is then registered as the demo
    registers it (data/make-demo-harnesses.sh)."""
    paths = demo_before(tmp_path / "data", b'"id":"orca-a-1"')
    register_runs(paths, [REPO / "data" / "demo" / "run-specs" / f"{RUN}.json"], REGISTERED)
    return paths


@pytest.fixture
def output(tmp_path: Path) -> Path:
    """A copy of the committed lm-eval output (its model folder)."""
    [folder] = [p for p in DEMO.iterdir() if p.is_dir()]
    return Path(shutil.copytree(folder, tmp_path / "out" / folder.name))


def mapping_file(where: Path, **over: Any) -> Path:
    m = yaml.safe_load((DEMO / f"{RUN}.map.yaml").read_text(encoding="utf-8"))
    m.update(over)
    path = where / "map.yaml"
    path.write_text(yaml.safe_dump(m, sort_keys=False), encoding="utf-8")
    return path


def results_path(output: Path) -> Path:
    [p] = output.glob("results_*.json")
    return p


def samples_path(output: Path) -> Path:
    [p] = output.glob("samples_*.jsonl")
    return p


def change_results(output: Path, change: Callable[[dict[str, Any]], None]) -> None:
    p = results_path(output)
    doc = json.loads(p.read_text(encoding="utf-8"))
    change(doc)
    p.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def change_samples(output: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    p = samples_path(output)
    records = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
    p.write_text("".join(json.dumps(r) + "\n" for r in change(records)), encoding="utf-8")


def refused_import(program: Paths, output: Path, tmp_path: Path, **over: Any) -> InputError:
    out = tmp_path / "results.json"
    with pytest.raises(InputError) as e:
        import_lm_eval_output(program, output, RUN, mapping_file(tmp_path, **over), out=out)
    assert not out.exists()
    return e.value


def by_item(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["item"]: r for r in doc["results"]}


# ---------------------------------------------------------------------------------------------
# The real output certifies


def test_the_committed_output_imports_certifies_and_verifies(program: Paths, output: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = import_lm_eval_output(program, output, RUN, mapping_file(tmp_path), out=out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert done.counts == {"scored": 8} and done.retried == 0
    # The end is lm-eval's start plus its duration, rounded down to the second.
    results = json.loads(results_path(output).read_text(encoding="utf-8"))
    end = dt.datetime.fromtimestamp(results["date"] + float(results["total_evaluation_time_seconds"]), dt.UTC)
    assert doc["finished_at"] == end.strftime("%Y-%m-%dT%H:%M:%SZ")
    # Both files are evidence of every item, by hash and by their path from the results file.
    assert [(e["name"], e["sha256"], e["items"]) for e in doc["evidence"]] == [
        (p.name, hashlib.sha256(p.read_bytes()).hexdigest(), ITEMS)
        for p in (results_path(output), samples_path(output))
    ]
    assert doc["source"]["kind"] == "lm-eval" and doc["source"]["model"] == "orca-parser-3.1"
    assert doc["source"]["filter"] == "none" and doc["source"]["lm_eval_version"] == "0.4.13"
    # What the fixture's model got wrong is what the results say it answered.
    a002 = {f["name"]: f for f in by_item(doc)["a-002"]["fields"]}
    assert a002["refund_amount_krw"]["output"] == 98000
    a005 = {f["name"]: f for f in by_item(doc)["a-005"]["fields"]}
    assert a005["requested_action"] == {"name": "requested_action", "output": "Refund the charge", "similarity": "0.82"}
    assert by_item(doc)["a-005"]["judge_labels"] == {"completeness": 3, "correctness": 2}
    cert = certify_run(program, out, at="2026-12-05T13:00:00Z")
    assert cert.summary["scored"] == 8
    build(program, tmp_path / "public")
    report = verify_site(tmp_path / "public")
    assert report.ok, report.render()[-3000:]
    published = tmp_path / "public" / "certificates" / RUN / "evidence" / samples_path(output).name
    assert published.read_bytes() == samples_path(output).read_bytes()


def test_the_demo_s_results_are_what_the_importer_makes_of_its_committed_output(program: Paths) -> None:
    """The demo is reproducible from its inputs: the committed output and mapping import to the
    committed results file, byte for byte."""
    out = program.private / "results" / f"{RUN}.json"
    [folder] = [p for p in (program.data / "demo" / "lm-eval").iterdir() if p.is_dir()]
    import_lm_eval_output(program, folder, RUN, program.data / "demo" / "lm-eval" / f"{RUN}.map.yaml", out=out)
    assert out.read_bytes() == (REPO / "data" / "private" / "results" / f"{RUN}.json").read_bytes()


def test_lm_eval_itself_makes_an_output_that_imports_and_certifies(program: Paths, tmp_path: Path) -> None:
    """The fixture script, run now by lm-eval in its own environment, offline."""
    python = harness_python("lm-eval")
    ran = run_tool(python, REPO / "tools" / "make_lm_eval_fixture.py", RUN, str(tmp_path / "fresh"))
    mapping = yaml.safe_load(ran.stdout.split("(YAML):", 1)[1])
    (tmp_path / "map.json").write_text(json.dumps(mapping), encoding="utf-8")
    out = tmp_path / "results.json"
    done = import_lm_eval_output(program, tmp_path / "fresh" / "orca-parser-3.1", RUN, tmp_path / "map.json", out=out)
    assert done.counts == {"scored": 8}
    assert certify_run(program, out, at="2099-01-01T00:00:00Z").summary["scored"] == 8


def test_the_command_line_reports_what_it_wrote(program: Paths, output: Path, tmp_path: Path) -> None:
    args = ["--data", str(program.data), "--private", str(program.private), "results", "from-lm-eval", str(output)]
    args += ["--run", RUN, "--map", str(mapping_file(tmp_path)), "--out", str(tmp_path / "r.json")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "8 results (8 scored)" in result.output and f"evidence {samples_path(output).name} (at" in result.output
    again = CliRunner().invoke(main, args)
    assert again.exit_code != 0 and "already exists" in again.output


# ---------------------------------------------------------------------------------------------
# What it makes of each record


def test_an_empty_response_is_not_run_and_an_exclusion_keeps_what_it_sets_aside(
    program: Paths, output: Path, tmp_path: Path
) -> None:
    def empty_a003(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            if r["doc"]["id"] == "a-003":
                r["filtered_resps"], r["resps"] = [""], [[""]]
        return records

    change_samples(output, empty_a003)
    results = json.loads(results_path(output).read_text(encoding="utf-8"))
    end = dt.datetime.fromtimestamp(results["date"] + float(results["total_evaluation_time_seconds"]), dt.UTC)
    at = end.strftime("%Y-%m-%dT%H:%M:%SZ")
    exclude = {"a-006": {"rule": 0, "note": "Pasted HTML, which the input filter strips.", "at": at}}
    out = tmp_path / "results.json"
    done = import_lm_eval_output(program, output, RUN, mapping_file(tmp_path, exclude=exclude), out=out)
    assert done.counts == {"scored": 6, "not_run": 1, "excluded": 1}
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert by_item(doc)["a-003"] == {"item": "a-003", "status": "not_run", "note": "the model gave no output"}
    a006 = by_item(doc)["a-006"]
    assert a006["status"] == "excluded" and a006["excludes"] == 1 and a006["at"] == at
    [attempt] = a006["attempts"]
    assert attempt["status"] == "scored" and attempt["at"] == at
    assert attempt["native"]["scores"]["judge"] == {"completeness": 4, "correctness": 4}
    assert certify_run(program, out, at="2026-12-05T13:00:00Z").summary["excluded"] == 1


def test_an_exclusion_dated_other_than_the_evaluation_s_end_is_refused(
    program: Paths, output: Path, tmp_path: Path
) -> None:
    exclude = {"a-006": {"rule": 0, "note": "Pasted HTML.", "at": "2026-12-05T12:00:01Z"}}
    err = refused_import(program, output, tmp_path, exclude=exclude)
    named(err, "lm-eval dates only by the evaluation's end", "exclude.a-006.at")


# ---------------------------------------------------------------------------------------------
# Refusals, each naming the file and the member


def test_another_task_or_model_is_refused(program: Paths, output: Path, tmp_path: Path) -> None:
    err = refused_import(program, output, tmp_path, model="orca-parser-3.2")
    named(err, "the output is of another model than the mapping states", "model_name")

    def rename(doc: dict[str, Any]) -> None:
        doc["results"] = {"other_task": doc["results"]["quill_extract"]}

    change_results(output, rename)
    err = refused_import(program, output, tmp_path)
    named(err, "the results hold no task quill_extract", "results")


def test_an_evaluation_without_an_end_or_before_the_registration_is_refused(
    program: Paths, output: Path, tmp_path: Path
) -> None:
    change_results(output, lambda d: d.pop("total_evaluation_time_seconds"))
    named(refused_import(program, output, tmp_path), "the evaluation did not finish", "date")
    change_results(output, lambda d: d.update(date=1796471999.0, total_evaluation_time_seconds="10"))  # 11:59:59
    named(
        refused_import(program, output, tmp_path), "the evaluation started before run orca-a-1 was registered", "date"
    )


def test_repeats_and_a_samples_file_the_results_do_not_count_are_refused(
    program: Paths, output: Path, tmp_path: Path
) -> None:
    change_results(output, lambda d: d["configs"]["quill_extract"].update(repeats=2))
    named(refused_import(program, output, tmp_path), "repeats > 1", "configs.quill_extract.repeats")
    change_results(output, lambda d: d["configs"]["quill_extract"].update(repeats=1))
    change_samples(output, lambda rs: rs[:-1])
    err = refused_import(program, output, tmp_path)
    named(err, "7 record(s) of filter none, and the results count 8 documents")
    named(err, "no record of item(s) a-008 of run orca-a-1")


def test_records_of_no_item_of_two_for_one_item_and_extra_or_missing_fields_are_refused(
    program: Paths, output: Path, tmp_path: Path
) -> None:
    def damage(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        records[0]["doc"]["id"] = "a-099"
        records[1]["doc"]["id"] = "a-003"
        answer = json.loads(records[3]["filtered_resps"][0])
        answer["colour"] = "blue"
        del answer["customer_id"]
        records[3]["filtered_resps"] = [json.dumps(answer)]
        records[4]["filtered_resps"] = ["I think the account number is 110"]
        records[5]["judge"]["correctness"] = 3.0
        return records

    change_samples(output, damage)
    err = refused_import(program, output, tmp_path)
    named(err, "line 1 (sample 0) is of item a-099, which run orca-a-1 does not have")
    named(err, "item a-003 has 2 records (lines 2, 3): one record an item")
    named(err, "no record of item(s) a-001, a-002 of run orca-a-1")
    named(err, "line 4 (sample 3): the response gives colour, which item a-004's answer does not have")
    named(err, "line 4 (sample 3), field customer_id: no value at response.customer_id")
    named(err, "line 5 (sample 4): the response should be a JSON object of the item's fields, and is not JSON")
    named(err, "line 6 (sample 5), judge label correctness: a judge label is an integer", "metric.judge.correctness")


def test_a_missing_samples_file_and_a_mapping_with_a_typo_are_refused(
    program: Paths, output: Path, tmp_path: Path
) -> None:
    err = refused_import(program, output, tmp_path, fields={"sumary": "doc.prompt"}, filter="strict-match")
    named(err, "no item of run orca-a-1 has a field sumary", "fields.sumary")
    named(err, "no record of filter strict-match", "filter")
    err = refused_import(program, output, tmp_path, similarity={"tags": "metrics.similarity.tags"})
    named(err, "not a source", "similarity.tags")
    samples_path(output).unlink()
    named(
        refused_import(program, output, tmp_path),
        "lm-eval writes the samples of task quill_extract beside its results only when run with --log_samples",
    )


def test_two_filters_need_the_mapping_to_name_one(program: Paths, output: Path, tmp_path: Path) -> None:
    def second_filter(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return records + [{**r, "filter": "strict"} for r in records]

    change_samples(output, second_filter)
    named(refused_import(program, output, tmp_path), "say in the mapping which filter's responses are read", "filter")
    out = tmp_path / "results.json"
    done = import_lm_eval_output(program, output, RUN, mapping_file(tmp_path, filter="strict"), out=out)
    assert done.counts == {"scored": 8}


def test_a_line_separator_inside_a_string_is_part_of_its_line(program: Paths, output: Path, tmp_path: Path) -> None:
    """lm-eval writes its samples with ensure_ascii=False: U+2028 or U+0085 in a prompt stays a
    character of the line."""

    def separators(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            r["doc"]["prompt"] += "\u2028\u0085"
        return records

    p = samples_path(output)
    records = [json.loads(line) for line in p.read_text(encoding="utf-8").split("\n") if line]
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in separators(records)), encoding="utf-8")
    done = import_lm_eval_output(program, output, RUN, mapping_file(tmp_path), out=tmp_path / "r.json")
    assert done.counts == {"scored": 8}
