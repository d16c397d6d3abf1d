"""The mapping file of `results from-inspect`: its grammar (a source is completion, completion.<key>,
metadata.<key>, store.<key> or a scorer's value, answer or metadata; see inspect_log's docstring),
parsed strictly, and checked against the run it maps a log to (its items, fields and exclusion
rules)."""

from __future__ import annotations

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

MAPPING_KEYS = ("task", "model", "item", "fields", "similarity", "judge_labels", "exclude", "accept_score_edits")
EXCLUSION_KEYS = ("rule", "note", "at")
SOURCE_FORMS = (
    "completion, completion.<key>, metadata.<key>, store.<key>, score.<scorer>.value, score.<scorer>.answer or "
    "score.<scorer>.metadata.<key>"
)
ITEM_FORMS = "id, or metadata.<key>"


@dataclass(frozen=True)
class Source:
    """Where a value is in a sample: `root` is completion, metadata, store, score or id."""

    text: str  # as the mapping wrote it
    root: str
    path: tuple[str, ...] = ()
    scorer: str | None = None
    part: str | None = None  # of a score: value, answer or metadata


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


@dataclass(frozen=True)
class Exclusion:
    """The operator's decision to set an item aside: the index of the run spec's exclusion rule,
    their words, and when they decided."""

    rule: int
    note: str
    at: str


@dataclass(frozen=True)
class Mapping:
    task: str
    model: str
    item: Source
    fields: dict[str, Source]
    similarity: dict[str, Source]
    judge_labels: dict[str, Source]  # by rubric dimension
    exclude: dict[str, Exclusion]  # by item id
    accept_score_edits: bool = False  # carry hand edits of scores into the results, instead of refusing them

    def source_of(self, field: str) -> Source:
        return self.fields.get(field) or Source(f"completion.{field}", "completion", (field,))


DEFAULT_ITEM = Source("id", "id")


def parse_mapping(value: Any, file: str) -> Mapping:
    """The mapping in `value` (a parsed YAML or JSON file), or InputError with every problem."""
    if not isinstance(value, dict):
        raise InputError(
            [problem(file, "a mapping is an object of task, model, item, fields, similarity", found=show(value))],
            "not a mapping of an Inspect log",
        )
    problems: list[Problem] = []
    unknown = sorted(str(k) for k in value if k not in MAPPING_KEYS)
    if unknown:
        problems.append(
            problem(
                file,
                f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}",
                expected=", ".join(MAPPING_KEYS),
            )
        )
    for key in ("task", "model"):
        if not (isinstance(value.get(key), str) and value[key].strip()):
            problems.append(
                problem(
                    file,
                    f"the mapping states the {key} the log must be of; a log whose eval.{key} differs is refused",
                    key,
                    expected="a non-empty string",
                    found=show(value[key]) if key in value else None,
                )
            )
    item = parse_source(value.get("item", "id"), for_item=True)
    if item is None:
        problems.append(
            problem(file, "where a sample's item id is", "item", expected=ITEM_FORMS, found=show(value["item"]))
        )
    tables = {key: _source_table(value, key, file, problems) for key in ("fields", "similarity", "judge_labels")}
    exclude = _exclusions(value, file, problems)
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
    if problems:
        raise InputError(problems, "not a valid mapping of an Inspect log; nothing was written")
    return Mapping(
        value["task"],
        value["model"],
        item or DEFAULT_ITEM,
        tables["fields"],
        tables["similarity"],
        tables["judge_labels"],
        exclude,
        accept_edits is True,
    )


def _source_table(value: dict[Any, Any], key: str, file: str, problems: list[Problem]) -> dict[str, Source]:
    table = value.get(key, {})
    if not isinstance(table, dict):
        names = "rubric dimensions" if key == "judge_labels" else "field names"
        problems.append(problem(file, f"{key} maps {names} to sources", key, found=show(table)))
        return {}
    out: dict[str, Source] = {}
    for name, text in table.items():
        source = parse_source(text)
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
            problems.append(problem(file, "not a source", f"{key}.{name}", expected=SOURCE_FORMS, found=show(text)))
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
        if len(problems) == before:
            out[item] = Exclusion(e["rule"], e["note"], e["at"])
    return out


def load_mapping(path: Path, file: str | None = None) -> Mapping:
    """A mapping file, YAML (.yaml, .yml) or JSON."""
    shown = file or str(path)
    return parse_mapping(load_data_file(path, shown), shown)


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
