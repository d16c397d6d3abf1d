"""The mapping file of `results from-inspect`: the common keys (generator/importers/common/mapping_rules.py)
in Inspect's grammar of sources (completion, completion.<key>, metadata.<key>, store.<key> or a
scorer's value, answer or metadata; see inspect_log's docstring), and Inspect's own key,
`accept_score_edits`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.core.generator_errors import problem
from generator.importers.common.mapping_rules import Grammar, Mapping, Source
from generator.importers.common.mapping_rules import load_mapping as load_common_mapping
from generator.importers.common.mapping_rules import parse_mapping as parse_common_mapping
from generator.verifier import (
    Problem,
    show,
)

SOURCE_FORMS = (
    "completion, completion.<key>, metadata.<key>, store.<key>, score.<scorer>.value, score.<scorer>.answer or "
    "score.<scorer>.metadata.<key>"
)
ITEM_FORMS = "id, or metadata.<key>"


def parse_source(text: Any, for_item: bool = False) -> Source | None:
    """The source a mapping names, or None if `text` is not one of the forms."""
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    if not all(parts):
        return None
    head, rest = parts[0], tuple(parts[1:])
    if for_item:
        if text == "id":
            return Source(text, "id")
        return Source(text, "metadata", rest) if head == "metadata" and rest else None
    if head == "completion":
        return Source(text, "completion", rest)
    if head in ("metadata", "store") and rest:
        return Source(text, head, rest)
    if head == "score" and len(rest) >= 2:
        scorer, part, path = rest[0], rest[1], rest[2:]
        if part == "value" or (part == "answer" and not path) or (part == "metadata" and path):
            return Source(text, "score", path, scorer, part)
    return None


GRAMMAR = Grammar(
    output="an Inspect log",
    record="sample",
    parse=parse_source,
    forms=SOURCE_FORMS,
    item_forms=ITEM_FORMS,
    default_item="id",
    answer_root="completion",
    extra_keys=("accept_score_edits",),
)


def _own_keys(value: dict[Any, Any], file: str, problems: list[Problem]) -> dict[str, Any]:
    """Inspect's own key: whether scores edited by hand after the evaluation are carried in."""
    accept_edits = value.get("accept_score_edits", False)
    if not isinstance(accept_edits, bool):
        problems.append(
            problem(
                file,
                "accept_score_edits says whether scores edited by hand after the evaluation are carried into the "
                "results (true) or refused (false, the default)",
                "accept_score_edits",
                expected="true or false",
                found=show(accept_edits),
            )
        )
    return {"accept_score_edits": accept_edits is True}


def accepts_score_edits(mapping: Mapping) -> bool:
    return bool(mapping.extra.get("accept_score_edits", False))


def parse_mapping(value: Any, file: str) -> Mapping:
    """The mapping in `value` (a parsed YAML or JSON file), or InputError with every problem."""
    return parse_common_mapping(value, file, GRAMMAR, _own_keys)


def load_mapping(path: Path, file: str | None = None) -> Mapping:
    """A mapping file, YAML (.yaml, .yml) or JSON."""
    shown = file or str(path)
    return load_common_mapping(path, shown, GRAMMAR, _own_keys)
