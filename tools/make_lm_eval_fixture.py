"""Make an lm-evaluation-harness output of a demo run, for `transparency results from-lm-eval`.

    python tools/make_lm_eval_fixture.py RUN OUT_DIR [--spec RUN_SPEC.json] [--items ITEMS.yaml] [--model NAME]

Run with a Python that has lm-eval installed (PyPI `lm-eval`, with its CPU `torch`); nothing is
downloaded. It writes a small lm-eval task (`quill_extract`: a YAML config, a JSON-lines dataset
of the run's Gate A items and a `utils.py` of metrics) to a temporary folder and runs lm-eval's
own command line on it (`lm-eval run --include_path … --log_samples --output_path OUT_DIR`), in
this process, so that the model below is registered with lm-eval first. What lm-eval writes is
kept as it wrote it: `OUT_DIR/orca-parser-3.1/results_<time>.json` and
`OUT_DIR/orca-parser-3.1/samples_quill_extract_<time>.jsonl`.

The model (`demo-extractor`, an `lm_eval.api.model.LM`, named `orca-parser-3.1` by its
`--model_args pretrained=`, which lm-eval records as the results' `model_name`) needs no weights: it answers each item's
prompt with the item's answer as one JSON object, a few fields wrong (WRONG below). The task's
metrics are computed by lm-eval from the response: `exact_fields` (the share of fields equal to
the answer), `similarity` (each text field's similarity, 1.0 when equal, 0.82 when not: an object
by field, aggregated by lm-eval with the task's own function) and `judge` (two ordinal labels, 1
to 4, made from the wrong and empty fields as the Inspect fixture's judge makes them). Prints the
mapping that imports the output:

    transparency results from-lm-eval OUT_DIR/orca-parser-3.1 --run RUN --map MAPPING

lm-eval stamps its output with the time it ran (`date`, the file names), so the run must be
registered before this script runs. The committed data/demo/lm-eval/orca-parser-3.1 was made so
(`python tools/make_lm_eval_fixture.py orca-a-1 data/demo/lm-eval`), on 2026-12-05 with lm-eval
0.4.13; the demo registers run orca-a-1 at 2026-12-05T12:00:00Z. By default the run spec is the
demo's (data/demo/run-specs/RUN.json), its items the demo's Gate A and the model orca-parser-3.1;
--spec, --items and --model name others: the tutorial's examples/lm-eval/parcelread-0.4 was made with
`--spec examples/run-spec-lm-eval.json --items examples/items.yaml --model parcelread-0.4`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
ITEMS = REPO / "data" / "private" / "items" / "gate-a.yaml"
SPECS = REPO / "data" / "demo" / "run-specs"
TASK = "quill_extract"
BACKEND = "demo-extractor"  # the model class registered with lm-eval (its --model)
MODEL = "orca-parser-3.1"  # the model's name, given as --model_args pretrained=…: lm-eval's model_name

# What the subject gets wrong, by item and field (the rest of its outputs are the answers).
WRONG: dict[str, dict[str, Any]] = {
    "a-002": {"refund_amount_krw": 98000},
    "a-005": {"requested_action": "Refund the charge"},
    "a-007": {"tags": ["delivery"]},
}

TASK_YAML = f"""\
task: {TASK}
dataset_path: json
dataset_kwargs:
  data_files:
    test: DATASET
test_split: test
output_type: generate_until
doc_to_text: prompt
doc_to_target: target
generation_kwargs:
  until: []
  max_gen_toks: 2048
  do_sample: false
repeats: 1
process_results: !function utils.process_results
metric_list:
  - metric: exact_fields
    aggregation: mean
    higher_is_better: true
  - metric: similarity
    aggregation: !function utils.mean_similarity
    higher_is_better: true
  - metric: judge
    aggregation: !function utils.mean_correctness
    higher_is_better: true
metadata:
  version: 1.0
"""

UTILS = '''\
"""Metrics of the demo's extraction task, computed from the model's JSON response."""
import json


def _labels(given, want):
    wrong = sum(given.get(n) != v for n, v in want.items())
    empty = sum(given.get(n) in ("", [], None) and v not in ("", [], None) for n, v in want.items())
    return {"correctness": max(1, 4 - 2 * wrong), "completeness": max(1, 4 - wrong - empty)}


def process_results(doc, results):
    given, want = json.loads(results[0]), json.loads(doc["target"])
    sims = {n: "1.0" if given.get(n) == v else "0.82" for n, v in want.items() if n in doc["text_fields"]}
    exact = sum(given.get(n) == v for n, v in want.items()) / len(want)
    return {"exact_fields": exact, "similarity": sims, "judge": _labels(given, want)}


def mean_similarity(values):
    sims = [float(s) for v in values for s in v.values()]
    return sum(sims) / len(sims) if sims else 1.0


def mean_correctness(values):
    return sum(v["correctness"] for v in values) / len(values)
'''


def demo_items(
    run: str, spec: Path | None = None, items: Path = ITEMS
) -> tuple[list[str], dict[str, str], dict[str, dict[str, Any]]]:
    """The run's item ids, their prompts and their answers, from the item sources."""
    run_items = json.loads((spec or SPECS / f"{run}.json").read_text(encoding="utf-8"))["items"]
    sources = {it["id"]: it for it in yaml.safe_load(items.read_text(encoding="utf-8"))["items"]}
    return run_items, {i: sources[i]["prompt"] for i in run_items}, {i: sources[i]["answer"] for i in run_items}


def mapping(answers: dict[str, dict[str, Any]], model: str = MODEL) -> dict[str, Any]:
    """The mapping that imports the output: the item id from the dataset's `id`, every
    non-critical text field's similarity and the judge's labels from the task's metrics."""
    texts = sorted(
        {n for a in answers.values() for n, f in a.items() if f["kind"] == "text" and f["tier"] != "critical"}
    )
    return {
        "task": TASK,
        "model": model,
        "item": "doc.id",
        "similarity": {n: f"metric.similarity.{n}" for n in texts},
        "judge_labels": {d: f"metric.judge.{d}" for d in ("completeness", "correctness")},
    }


def register_model(outputs: dict[str, dict[str, Any]]) -> None:
    """Register `demo-extractor` with lm-eval: a model that answers each item from `outputs`."""
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model as register

    @register(BACKEND)
    class DemoExtractor(LM):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__()

        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            return [json.dumps(outputs[r.doc["id"]], ensure_ascii=False) for r in requests]

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            raise NotImplementedError("the demo task only generates")

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
            raise NotImplementedError("the demo task only generates")


def make_output(
    run: str, out: Path, spec: Path | None = None, items_file: Path = ITEMS, model: str = MODEL
) -> dict[str, Any]:
    """Run lm-eval on the run's items; its output goes under `out`. The mapping that imports it."""
    from lm_eval.__main__ import cli_evaluate

    items, prompts, answers = demo_items(run, spec, items_file)
    outputs = {i: {n: WRONG.get(i, {}).get(n, f["value"]) for n, f in answers[i].items()} for i in items}
    register_model(outputs)
    with tempfile.TemporaryDirectory() as tmp:
        task_dir = Path(tmp)
        rows = [
            {
                "id": i,
                "prompt": prompts[i],
                "target": json.dumps({n: f["value"] for n, f in answers[i].items()}, ensure_ascii=False),
                "text_fields": sorted(n for n, f in answers[i].items() if f["kind"] == "text"),
            }
            for i in items
        ]
        dataset = task_dir / "items.jsonl"
        dataset.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        (task_dir / f"{TASK}.yaml").write_text(TASK_YAML.replace("DATASET", str(dataset)), encoding="utf-8")
        (task_dir / "utils.py").write_text(UTILS, encoding="utf-8")
        argv = ["lm-eval", "run", "--model", BACKEND, "--model_args", f"pretrained={model}"]
        argv += ["--tasks", TASK, "--include_path", str(task_dir)]
        argv += ["--output_path", str(out), "--log_samples"]
        saved, sys.argv = sys.argv, argv
        try:
            cli_evaluate()
        finally:
            sys.argv = saved
    return mapping(answers, model)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[2].strip())
    parser.add_argument("run")
    parser.add_argument("out", type=Path)
    parser.add_argument("--spec", type=Path)
    parser.add_argument("--items", type=Path, default=ITEMS)
    parser.add_argument("--model", default=MODEL)
    args = parser.parse_args(argv)
    found = make_output(args.run, args.out, args.spec, args.items, args.model)
    print(f"Wrote {args.out}. Import it with this mapping (YAML):\n")
    print(yaml.safe_dump(found, sort_keys=False).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
