"""The mapping file of `results from-harbor`: the common keys (generator/importers/common/mapping_rules.py)
with Harbor's identity (the `agent` and `model` every trial must be of) and grammar of sources (the
agent's answer file, the verifier's rewards, any member of a trial's result), and Harbor's own keys:
`answer_file`, where in a trial's folder the agent's answer is, and `interrupted`, the operator's
word that a job without an end was stopped for good."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from generator.core.generator_errors import problem
from generator.importers.common.mapping_rules import Grammar, Mapping, Source
from generator.importers.common.mapping_rules import load_mapping as load_common_mapping
from generator.verifier import (
    Problem,
    show,
)

SOURCE_FORMS = "answer, answer.<key>, reward.<key> or result.<key>"
ITEM_FORMS = "task_name"
DEFAULT_ANSWER_FILE = "artifacts/answer.json"


def parse_source(text: Any, for_item: bool = False) -> Source | None:
    """The source a mapping names, or None if `text` is not one of the forms."""
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    if not all(parts):
        return None
    head, rest = parts[0], tuple(parts[1:])
    if for_item:
        return Source(text, "task_name") if text == "task_name" else None
    if head == "answer":
        return Source(text, head, rest)
    if head in ("reward", "result") and rest:
        return Source(text, head, rest)
    return None


GRAMMAR = Grammar(
    output="a Harbor job",
    record="trial",
    parse=parse_source,
    forms=SOURCE_FORMS,
    item_forms=ITEM_FORMS,
    default_item="task_name",
    answer_root="answer",
    extra_keys=("answer_file", "interrupted"),
    identity=("agent", "model"),
)


def _own_keys(value: dict[Any, Any], file: str, problems: list[Problem]) -> dict[str, Any]:
    answer_file = value.get("answer_file", DEFAULT_ANSWER_FILE)
    parts = PurePosixPath(answer_file).parts if isinstance(answer_file, str) else ()
    if not (parts and all(p not in ("", ".", "..") for p in parts) and not answer_file.startswith("/")):
        problems.append(
            problem(
                file,
                "answer_file is where in a trial's folder the agent's answer is (a file the task declares as an "
                "artifact is copied to artifacts/<its destination>)",
                "answer_file",
                expected="a relative path inside the trial's folder, such as artifacts/answer.json",
                found=show(answer_file),
            )
        )
    interrupted = value.get("interrupted", False)
    if not isinstance(interrupted, bool):
        problems.append(
            problem(
                file,
                "interrupted says that a job with no end (no finished_at) was stopped for good, its tasks never "
                "started not_run (true), or that it is refused as unfinished (false, the default)",
                "interrupted",
                expected="true or false",
                found=show(interrupted),
            )
        )
    return {"answer_file": answer_file, "interrupted": interrupted is True}


def load_mapping(path: Path, file: str) -> Mapping:
    """A mapping file, YAML (.yaml, .yml) or JSON."""
    return load_common_mapping(path, file, GRAMMAR, _own_keys)
