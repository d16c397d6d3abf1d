"""The two files lm-eval writes for an evaluation run with `--output_path OUT --log_samples`:
`OUT/<model>/results_<time>.json` (the aggregated results, the run's configuration and times) and,
beside it, `samples_<task>_<time>.jsonl` (one logged record per document and filter). Found from
either the folder or the results file, each read once, so that the bytes hashed are the bytes
parsed, and parsed strictly (a key given twice is refused)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.importers.common.field_values import loads_unique
from generator.verifier import (
    Problem,
    show,
)

RESULTS_PREFIX = "results_"


@dataclass(frozen=True)
class LmEvalFiles:
    results_path: Path
    results_data: bytes
    results: dict[str, Any]
    samples_path: Path
    samples_data: bytes
    records: list[tuple[int, dict[str, Any]]]  # (line number, record), in the file's order


def results_file_of(output: Path, shown: str) -> Path:
    """The results file `output` names: itself, or the one results_<time>.json of the folder."""
    if output.is_dir():
        found = sorted(p.name for p in output.iterdir() if p.name.startswith(RESULTS_PREFIX) and p.suffix == ".json")
        if len(found) != 1:
            raise InputError(
                [
                    problem(
                        shown,
                        "lm-eval writes one results_<time>.json per evaluation into its output folder; "
                        + ("this folder has none" if not found else "this folder has several: give the file itself"),
                        expected="a folder with one results_<time>.json, or that file",
                        found=show(found, 300) if found else None,
                    )
                ]
            )
        return output / found[0]
    if not output.name.startswith(RESULTS_PREFIX) or output.suffix != ".json":
        raise InputError(
            [problem(shown, "not an lm-eval results file", expected="results_<time>.json, or the folder holding it")]
        )
    return output


def _read(path: Path, shown: str, why_missing: str = "file is missing") -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError([problem(shown, why_missing)]) from None
    except OSError as e:
        raise InputError([problem(shown, f"cannot read: {e.strerror}")]) from None


def read_lm_eval_files(output: Path, task: str, show_path: Any) -> LmEvalFiles:
    """The results file `output` names and the samples of `task` beside it; `show_path` shows a
    path in messages. InputError when either cannot be read as lm-eval writes them."""
    results_path = results_file_of(output, show_path(output))
    shown = show_path(results_path)
    data = _read(results_path, shown)
    try:
        results = loads_unique(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise InputError([problem(shown, f"not JSON: {str(e)[:200]}")], "cannot read the lm-eval results") from None
    if not isinstance(results, dict):
        raise InputError([problem(shown, "an lm-eval results file is a JSON object", found=show(results, 80))])
    stamp = results_path.name[len(RESULTS_PREFIX) : -len(".json")]
    samples_path = results_path.parent / f"samples_{task}_{stamp}.jsonl"
    samples_shown = show_path(samples_path)
    samples_data = _read(
        samples_path,
        samples_shown,
        f"file is missing: lm-eval writes the samples of task {task} beside its results only when run with "
        "--log_samples, and the results hold no per-item outcome",
    )
    records, problems = _records(samples_data, samples_shown)
    if problems:
        raise InputError(problems, "cannot read the lm-eval samples")
    return LmEvalFiles(results_path, data, results, samples_path, samples_data, records)


def _records(data: bytes, shown: str) -> tuple[list[tuple[int, dict[str, Any]]], list[Problem]]:
    records: list[tuple[int, dict[str, Any]]] = []
    problems: list[Problem] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [], [problem(shown, f"not UTF-8 text: {e}")]
    # Lines end at "\n" only: lm-eval writes its JSON with ensure_ascii=False, so a U+2028 or U+0085
    # inside a string is a character of the line, not its end (str.splitlines would cut there).
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = loads_unique(line)
        except (ValueError, RecursionError) as e:
            problems.append(problem(shown, f"line {n}: not JSON: {str(e)[:200]}"))
            continue
        if not isinstance(record, dict):
            problems.append(problem(shown, f"line {n}: a logged sample is a JSON object", found=show(record, 80)))
            continue
        records.append((n, record))
    return records, problems
