"""The mapping file every importer reads: what the harness's output must be of (`task`, `model`), where
an item's id, fields, similarities and judge labels are (`item`, `fields`, `similarity`,
`judge_labels`, each a source in the harness's own grammar) and which items the operator sets aside
(`exclude`). Parsed strictly, every problem at once, and checked against the run it maps an output
to (its items, fields and exclusion rules)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import load_data_file
from generator.verifier import (
    ID_RE,
    FormatError,
    Problem,
    check_no_surrogates,
    is_id,
    is_int,
    is_reported_field,
    is_time,
    show,
)

SOURCE_KEYS = ("item", "fields", "similarity", "judge_labels", "exclude")
EXCLUSION_KEYS = ("rule", "note", "at")


@dataclass(frozen=True)
class Source:
    """Where a value is in one record of a harness's output: `root` names the part of the record
    (the harness's grammar says which roots there are), `path` the object members below it."""

    text: str  # as the mapping wrote it
    root: str
    path: tuple[str, ...] = ()
    scorer: str | None = None  # of an Inspect score
    part: str | None = None  # of an Inspect score: value, answer or metadata


@dataclass(frozen=True)
class Grammar:
    """One harness's sources: how a source's text is parsed, what the forms are (for messages),
    where an item id is by default, and the root whose `.<field>` is a field's default source."""

    output: str  # what is mapped, for messages: "an Inspect log"
    record: str  # one record of it, for messages: "sample"
    parse: Callable[[Any, bool], Source | None]  # (text, for_item) -> the source, or None
    forms: str
    item_forms: str
    default_item: str
    answer_root: str
    extra_keys: tuple[str, ...] = ()  # the harness's own keys, parsed by its module
    identity: tuple[str, ...] = ("task", "model")  # what the output must be of, each a string it holds


@dataclass(frozen=True)
class Exclusion:
    """The operator's decision to set an item aside: the index of the run spec's exclusion rule,
    their words, and when they decided."""

    rule: int
    note: str
    at: str


@dataclass(frozen=True)
class Mapping:
    identity: dict[str, str]  # by key of the grammar's identity: what the output must be of
    item: Source
    fields: dict[str, Source]
    similarity: dict[str, Source]
    judge_labels: dict[str, Source]  # by rubric dimension
    exclude: dict[str, Exclusion]  # by item id
    answer_root: str
    extra: dict[str, Any]  # the harness's own keys, as its module parsed them

    @property
    def task(self) -> str:
        return self.identity.get("task", "")

    @property
    def model(self) -> str:
        return self.identity.get("model", "")

    def source_of(self, field: str) -> Source:
        return self.fields.get(field) or Source(f"{self.answer_root}.{field}", self.answer_root, (field,))


def parse_mapping(
    value: Any, file: str, grammar: Grammar, extra: Callable[[dict[Any, Any], str, list[Problem]], dict[str, Any]]
) -> Mapping:
    """The mapping in `value` (a parsed YAML or JSON file), or InputError with every problem;
    `extra` parses the harness's own keys, recording its problems."""
    if not isinstance(value, dict):
        raise InputError(
            [
                problem(
                    file, f"a mapping is an object of {', '.join(grammar.identity)}, item, fields, …", found=show(value)
                )
            ],
            f"not a mapping of {grammar.output}",
        )
    problems: list[Problem] = []
    known = grammar.identity + SOURCE_KEYS + grammar.extra_keys
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        problems.append(
            problem(
                file,
                f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}",
                expected=", ".join(known),
            )
        )
    for key in grammar.identity:
        if not (isinstance(value.get(key), str) and value[key].strip()):
            problems.append(
                problem(
                    file,
                    f"the mapping states the {key} the output must be of; an output of another {key} is refused",
                    key,
                    expected="a non-empty string",
                    found=show(value[key]) if key in value else None,
                )
            )
    item = grammar.parse(value.get("item", grammar.default_item), True)
    if item is None:
        problems.append(
            problem(
                file,
                f"where a {grammar.record}'s item id is",
                "item",
                expected=grammar.item_forms,
                found=show(value["item"]),
            )
        )
    tables = {
        key: _source_table(value, key, file, grammar, problems) for key in ("fields", "similarity", "judge_labels")
    }
    exclude = _exclusions(value, file, problems)
    own = extra(value, file, problems)
    if problems:
        raise InputError(problems, f"not a valid mapping of {grammar.output}; nothing was written")
    return Mapping(
        {key: value[key] for key in grammar.identity},
        item or grammar.parse(grammar.default_item, True) or Source(grammar.default_item, "id"),
        tables["fields"],
        tables["similarity"],
        tables["judge_labels"],
        exclude,
        grammar.answer_root,
        own,
    )


def load_mapping(
    path: Path, file: str, grammar: Grammar, extra: Callable[[dict[Any, Any], str, list[Problem]], dict[str, Any]]
) -> Mapping:
    """A mapping file, YAML (.yaml, .yml) or JSON."""
    return parse_mapping(load_data_file(path, file), file, grammar, extra)


def no_extra(value: dict[Any, Any], file: str, problems: list[Problem]) -> dict[str, Any]:
    return {}


def _source_table(
    value: dict[Any, Any], key: str, file: str, grammar: Grammar, problems: list[Problem]
) -> dict[str, Source]:
    table = value.get(key, {})
    if not isinstance(table, dict):
        names = "rubric dimensions" if key == "judge_labels" else "field names"
        problems.append(problem(file, f"{key} maps {names} to sources", key, found=show(table)))
        return {}
    out: dict[str, Source] = {}
    for name, text in table.items():
        source = grammar.parse(text, False)
        if key == "judge_labels" and not is_id(name):
            # The name is the certificate's key of the label, and what label sets measure it by.
            problems.append(
                problem(
                    file, "a judge label's name is its rubric dimension", key, expected=ID_RE.pattern, found=show(name)
                )
            )
        elif not isinstance(name, str) or not name:
            problems.append(problem(file, "a field name is a non-empty string", key, found=show(name)))
        elif source is None:
            problems.append(problem(file, "not a source", f"{key}.{name}", expected=grammar.forms, found=show(text)))
        else:
            out[name] = source
    return out


def _exclusions(value: dict[Any, Any], file: str, problems: list[Problem]) -> dict[str, Exclusion]:
    """The mapping's `exclude`, checked for its form; its items and rules are checked against
    the run spec by exclusion_problems, once the spec is read."""
    table = value.get("exclude", {})
    if not isinstance(table, dict):
        problems.append(
            problem(
                file,
                "exclude maps item ids to the operator's exclusions",
                "exclude",
                expected="{ITEM: {rule: <index>, note: <text>, at: <time>}, …}",
                found=show(table),
            )
        )
        return {}
    out: dict[str, Exclusion] = {}
    for item, e in table.items():
        w = f"exclude.{item}"
        if not isinstance(item, str):
            problems.append(problem(file, "an item id is a string", w, found=show(item)))
            continue
        if not isinstance(e, dict):
            problems.append(
                problem(
                    file,
                    "an exclusion is an object of rule, note and at",
                    w,
                    expected="{rule, note, at}",
                    found=show(e),
                )
            )
            continue
        before = len(problems)
        _exclusion_problems(e, file, w, problems)
        if len(problems) == before:
            out[item] = Exclusion(e["rule"], e["note"], e["at"])
    return out


def _exclusion_problems(e: dict[Any, Any], file: str, w: str, problems: list[Problem]) -> None:
    unknown = sorted(str(k) for k in e if k not in EXCLUSION_KEYS)
    if unknown:
        problems.append(
            problem(
                file,
                f"unknown member{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}",
                w,
                expected=", ".join(EXCLUSION_KEYS),
            )
        )
    missing = [k for k in EXCLUSION_KEYS if k not in e]
    if missing:
        problems.append(
            problem(
                file,
                f"an exclusion states its rule, note and time; missing {', '.join(map(repr, missing))}",
                w,
                expected=", ".join(EXCLUSION_KEYS),
            )
        )
    rule, note, at = e.get("rule"), e.get("note"), e.get("at")
    if "rule" in e and not (is_int(rule) and rule >= 0):
        problems.append(
            problem(
                file,
                "an exclusion names the index of one of the run spec's exclusion_rules",
                f"{w}.rule",
                expected="an integer from 0",
                found=show(rule),
            )
        )
    if "note" in e and not (isinstance(note, str) and note.strip()):
        problems.append(
            problem(
                file,
                "an exclusion's note says why, in the operator's words; it is published with the result",
                f"{w}.note",
                expected="text other than white space",
                found=show(note),
            )
        )
    elif isinstance(note, str):
        try:
            check_no_surrogates(note)
        except FormatError as err:
            problems.append(problem(file, str(err), f"{w}.note"))
    if "at" in e and not is_time(at):
        problems.append(
            problem(
                file,
                "malformed time: when the operator decided the exclusion, in UTC",
                f"{w}.at",
                expected="YYYY-MM-DDTHH:MM:SSZ",
                found=show(at),
            )
        )


def exclusion_problems(mapping: Mapping, run_id: str, items: list[str], rules: int, file: str) -> list[Problem]:
    """An exclusion of an item the run does not have, or under a rule its spec does not have."""
    problems: list[Problem] = []
    known = set(items)
    for item, e in mapping.exclude.items():
        if item not in known:
            problems.append(
                problem(
                    file,
                    f"run {run_id} has no item {item} to exclude",
                    f"exclude.{item}",
                    expected=show(items, 120),
                )
            )
        if e.rule >= rules:
            problems.append(
                problem(
                    file,
                    f"run {run_id}'s spec has {rules} exclusion rule{'' if rules == 1 else 's'}, and no rule {e.rule}",
                    f"exclude.{item}.rule",
                    expected=f"an integer from 0 to {rules - 1}"
                    if rules
                    else "nothing: the run spec has no exclusion rule",
                    found=str(e.rule),
                )
            )
    return problems


def mapping_problems(
    mapping: Mapping, run_id: str, items: list[str], answers: dict[str, dict[str, Any]], file: str
) -> list[Problem]:
    """A field or similarity the mapping names that no item of the run has: a typo, reported."""
    answered = [answers[i] for i in items if i in answers]
    if len(answered) < len(items):
        return []  # an answer that cannot be read is reported already; what the run has is unknown
    names = {n for a in answered for n in a}
    reported = {n for a in answered for n, f in a.items() if is_reported_field(f["kind"], f["tier"])}
    problems = [
        problem(
            file, f"no item of run {run_id} has a field {name}", f"fields.{name}", expected=show(sorted(names), 200)
        )
        for name in mapping.fields
        if name not in names
    ]
    problems += [
        problem(
            file,
            f"no item of run {run_id} has a non-critical text field {name}: only those take a reported similarity",
            f"similarity.{name}",
            expected=show(sorted(reported), 200),
        )
        for name in mapping.similarity
        if name not in reported
    ]
    return problems
