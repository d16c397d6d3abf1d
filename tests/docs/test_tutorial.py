"""docs/tutorial.md, run: every ```sh block of the page, in order, in one shell in an empty folder, with this
checkout's .venv first on PATH and the page's own fixed --at times (no clock). A block the page marks
`<!-- not run by the test: REASON -->` (installing, serving) is skipped, and only those. The example files of
examples/ are each used by the page, and the Inspect mapping imports a real Inspect log of the example run into
the results the page certifies."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.demo import REPO

TUTORIAL = REPO / "docs" / "tutorial.md"
EXAMPLES = REPO / "examples"
BLOCK = re.compile(r"(?:<!-- not run by the test: ([^>]*?) -->\n)?```sh\n(.*?)```", re.S)


def blocks() -> list[tuple[str | None, str]]:
    """Each ```sh block of the page: (why it is not run, or None; its text)."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(TUTORIAL.read_text(encoding="utf-8"))]


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRANSPARENCY_", "SOURCE_DATE_EPOCH"))}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        CHECKOUT=str(REPO),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        LC_ALL="C.UTF-8",
    )
    return env


def run_page(tmp_path: Path, until: str | None = None) -> subprocess.CompletedProcess[str]:
    """The page's runnable blocks as one `sh -eu` script (a failing command stops it), up to and including the
    first block that contains `until`."""
    chosen: list[str] = []
    for reason, text in blocks():
        if reason is None:
            chosen.append(text)
            if until is not None and until in text:
                break
    script = tmp_path / "tutorial.sh"
    script.write_text("set -eu\n" + "\n".join(chosen), encoding="utf-8")
    return subprocess.run(
        ["sh", "-x", str(script)], cwd=tmp_path, env=environment(tmp_path), capture_output=True, text=True, timeout=600
    )


def test_the_page_marks_only_installing_and_serving_as_not_run() -> None:
    found = blocks()
    skipped = [(reason, text) for reason, text in found if reason is not None]
    assert len(found) >= 10
    assert [t.split()[0] for _, t in skipped] == ["git", "transparency"], skipped
    assert "pip install -e '.[inspect]'" in skipped[0][1] and "transparency serve" in skipped[1][1]
    assert all(reason.strip() for reason, _ in skipped)


def test_every_example_file_is_used_by_the_page() -> None:
    page = TUTORIAL.read_text(encoding="utf-8")
    examples = sorted(p.name for p in EXAMPLES.iterdir() if p.name != "README.md")
    assert examples == [
        "harbor",
        "harbor-map.yaml",
        "inspect-map.yaml",
        "items.yaml",
        "labels.json",
        "lm-eval",
        "lm-eval-map.yaml",
        "methodology.json",
        "methodology.md",
        "results.json",
        "run-spec-harbor.json",
        "run-spec-lm-eval.json",
        "run-spec.json",
    ]
    runnable = "\n".join(text for reason, text in blocks() if reason is None)
    for name in examples:
        assert f"examples/{name}" in page, f"docs/tutorial.md does not document examples/{name}"
        if name != "inspect-map.yaml":  # imported below, from a log the test makes
            assert f"$CHECKOUT/examples/{name}" in runnable, f"no command of the page uses examples/{name}"


@pytest.mark.slow
def test_the_tutorial_makes_a_program_and_a_site_that_verifies(tmp_path: Path) -> None:
    done = run_page(tmp_path)
    assert done.returncode == 0, f"a command of docs/tutorial.md failed:\n{done.stderr[-4000:]}"
    ran = done.stderr  # sh -x traces each command it runs
    for command in (
        "transparency init",
        "methodology publish",
        "transparency commit",
        "transparency register",
        "agreement register",
        "transparency certify",
        "transparency retire",
        "results from-lm-eval",
        "results from-harbor",
        "transparency build",
        "verify.py public --key labels.example.org/parcel+",
    ):
        assert command in ran, f"the page no longer runs {command}"
    assert "Certificate labelsight-a-1 for run labelsight-a-1: CERTIFIED." in done.stdout
    assert "grade A, score 92 (as-proposed); 3 of 3 scored items passed" in done.stdout
    assert "Wrote " in done.stdout and "4 results (4 scored)" in done.stdout  # lm-eval's output imported
    assert "Certificate parcelread-a-1 for run parcelread-a-1:" in done.stdout
    assert "Certificate dockhand-a-1 for run dockhand-a-1:" in done.stdout  # Harbor's job imported
    program, private = tmp_path / "parcel", tmp_path / "parcel-private"
    # The private folder is a sibling of the data folder, never inside it, and nothing private was published.
    assert (private / "signing.key").is_file() and not (program / "data" / "private").exists()
    assert not any("signing.key" in p.name for p in (program / "public").rglob("*"))
    # The outsider's verifier was kept outside the site, and passes it from nothing, as the page's last step did.
    verifier = tmp_path / "verify.py"
    assert verifier.read_bytes() == (REPO / "generator" / "verify.py").read_bytes()
    again = subprocess.run(
        [sys.executable, "-P", str(verifier), str(program / "public"), "--no-state"],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=600,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    site = json.loads((program / "public" / "transparency.json").read_text(encoding="utf-8"))
    assert [m["version"] for m in site["methodology"]][-1] == "2026.12-example"
    assert {r["id"] for r in site["reveals"]} == {"a-001", "a-002", "a-003", "a-004", "b-q9x41"}


def test_the_example_run_spec_pins_the_example_methodology_as_published() -> None:
    """The hash a run spec pins is of the canonical parameter file `methodology publish` writes."""
    from generator.program.methodology_files import load_params
    from generator.verifier import canonical_bytes

    spec = json.loads((EXAMPLES / "run-spec.json").read_text(encoding="utf-8"))
    params = load_params(EXAMPLES / "methodology.json")
    assert spec["methodology"] == {
        "version": params["version"],
        "sha256": hashlib.sha256(canonical_bytes(params)).hexdigest(),
    }
    assert spec["judge"]["rubric_sha256"] == hashlib.sha256(spec["judge"]["rubric"].encode()).hexdigest()


# Inspect's own retry helper warns about a tenacity parameter on every model call.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")
def test_the_example_mapping_imports_an_inspect_log_of_the_example_run(tmp_path: Path) -> None:
    """An Inspect log of run labelsight-a-1 made with Inspect's mock model (the system answering what
    examples/results.json says it answered), imported with examples/inspect-map.yaml, gives those results."""
    pytest.importorskip("inspect_ai")
    done = run_page(tmp_path, until="transparency register")
    assert done.returncode == 0, done.stderr[-4000:]
    expected = json.loads((EXAMPLES / "results.json").read_text(encoding="utf-8"))
    log = make_example_log(tmp_path / "logs", expected)
    out = tmp_path / "imported.json"
    env = environment(tmp_path)
    imported = subprocess.run(
        [
            "transparency",
            "results",
            "from-inspect",
            str(log),
            "--run",
            "labelsight-a-1",
            "--map",
            str(EXAMPLES / "inspect-map.yaml"),
            "--out",
            str(out),
            "--no-evidence",
        ],
        cwd=tmp_path / "parcel",
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert imported.returncode == 0, imported.stdout + imported.stderr
    got = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["item"], r["status"]) for r in got["results"]] == [(r["item"], r["status"]) for r in expected["results"]]
    for want, have in zip(expected["results"], got["results"], strict=True):
        if want["status"] == "scored":
            assert sorted(have["fields"], key=lambda f: f["name"]) == sorted(want["fields"], key=lambda f: f["name"])
            assert have["judge_labels"] == want["judge_labels"]


def make_example_log(where: Path, results: dict[str, Any]) -> Path:
    """Run task parcel_labels over the run's items with Inspect's mock model labelsight-2.1, which answers each
    item with the outputs the results file gives (a-004 fails, as it did), with a `similarity` and a `judge`
    scorer reporting what the results file reports; its times are set after the run's registration."""
    import datetime as dt

    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    model = "mockllm/labelsight-2.1"
    by_item = {r["item"]: r for r in results["results"]}

    def respond(messages: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        fields = by_item[messages[-1].text]["fields"]
        reply = ModelOutput.from_content(model, json.dumps({f["name"]: f["output"] for f in fields}))
        reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm counts with tiktoken
        return reply

    @solver
    def read_label() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if by_item[str(state.sample_id)]["status"] == "infra_error":
                raise TimeoutError("the scanner service timed out")
            return await generate(state)

        return solve

    @scorer(metrics=[mean()])
    def similarity() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            fields = by_item[str(state.sample_id)]["fields"]
            return Score(value=1, metadata={f["name"]: f["similarity"] for f in fields if "similarity" in f})

        return score

    @scorer(metrics=[mean()])
    def judge() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            labels = by_item[str(state.sample_id)]["judge_labels"]
            return Score(value=labels["correctness"], metadata=labels)

        return score

    task = Task(
        dataset=[Sample(id=i, input=i) for i in by_item],
        solver=read_label(),
        scorer=[similarity(), judge()],
        name="parcel_labels",
    )
    [log] = inspect_eval(
        task,
        model=get_model(model, custom_outputs=respond),
        log_dir=str(where),
        display="none",
        fail_on_error=False,
        max_samples=1,
    )
    log = read_eval_log(log.location)
    # The run was registered at 2026-12-02T09:00:00Z; the evaluation ran the next day, whatever the clock says.
    start = dt.datetime(2026, 12, 3, 10, 0, 0, tzinfo=dt.UTC)
    log.eval.created = log.stats.started_at = start.isoformat()
    for n, sample in enumerate(log.samples or [], start=1):
        sample.started_at = (start + dt.timedelta(minutes=n)).isoformat()
        sample.completed_at = (start + dt.timedelta(minutes=n, seconds=30)).isoformat()
    log.stats.completed_at = (start + dt.timedelta(hours=1)).isoformat()
    path = where / "labelsight-a-1.eval"
    write_eval_log(log, str(path))
    return path
