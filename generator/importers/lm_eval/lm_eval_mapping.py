"""The mapping file of `results from-lm-eval`: the common keys (generator/importers/common/mapping_rules.py)
in lm-eval's grammar of sources (a logged sample's response, document, target and metrics), and
lm-eval's own key, `filter`: which of the task's filters the records are read from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.core.generator_errors import problem
from generator.importers.common.mapping_rules import Grammar, Mapping, Source
from generator.importers.common.mapping_rules import load_mapping as load_common_mapping
from generator.verifier import (
    Problem,
    show,
)

SOURCE_FORMS = "response, response.<key>, doc.<key>, target or metric.<name>[.<key>]"
ITEM_FORMS = "doc.<key>, or doc_id"


def parse_source(text: Any, for_item: bool = False) -> Source | None:
    """The source a mapping names, or None if `text` is not one of the forms."""
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    if not all(parts):
        return None
    head, rest = parts[0], tuple(parts[1:])
    if for_item:
        if text == "doc_id":
            return Source(text, "doc_id")
        return Source(text, "doc", rest) if head == "doc" and rest else None
    if head == "response" or (head == "target" and not rest):
        return Source(text, head, rest)
    if head in ("doc", "metric") and rest:
        return Source(text, head, rest)
    return None


GRAMMAR = Grammar(
    output="an lm-eval output",
    record="sample",
    parse=parse_source,
    forms=SOURCE_FORMS,
    item_forms=ITEM_FORMS,
    default_item="doc.id",
    answer_root="response",
    extra_keys=("filter",),
)


def _own_keys(value: dict[Any, Any], file: str, problems: list[Problem]) -> dict[str, Any]:
    """lm-eval's own key: the filter whose records are read (a task logs one record per
    document and filter); by default the only one the samples have."""
    if "filter" not in value:
        return {"filter": None}
    f = value["filter"]
    if not (isinstance(f, str) and f.strip()):
        problems.append(
            problem(
                file,
                "filter names the task's filter whose responses are read (the samples' 'filter', such as none)",
                "filter",
                expected="a non-empty string",
                found=show(f),
            )
        )
        return {"filter": None}
    return {"filter": f}


def load_mapping(path: Path, file: str) -> Mapping:
    """A mapping file, YAML (.yaml, .yml) or JSON."""
    return load_common_mapping(path, file, GRAMMAR, _own_keys)
