"""One record of a harness's output read as a scored result: every field of the item's answer from the
source the mapping names (by default a member of the model's answer read as one JSON object), each
non-critical text field's reported similarity, and the judge's integer labels, every problem
recorded rather than raised."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generator.core.generator_errors import problem
from generator.importers.common.field_values import MISSING, parse_json_object, similarity_text, value_kind
from generator.importers.common.mapping_rules import Exclusion, Mapping, Source
from generator.verifier import (
    MAX_SAFE_INTEGER,
    SCORED,
    FormatError,
    Problem,
    check_no_surrogates,
    is_int,
    is_reported_field,
    number_rule_problems,
    show,
)

# A source's value in one record: the answer object (or None) is passed for the answer root.
Lookup = Callable[[Source, "dict[str, Any] | None"], Any]


@dataclass
class AnswerReader:
    """Reads records into scored results, recording every problem."""

    file: str  # the output, as shown
    map_file: str
    mapping: Mapping
    problems: list[Problem]
    answer_name: str  # the model's answer, for messages: "the completion"
    answer_where: str  # where it is in a record: "output.completion"

    def add(self, message: str, where: str = "", expected: object = None, found: object = None) -> None:
        self.problems.append(problem(self.file, message, where, expected, found))

    def reads_answer(self, answer: dict[str, Any]) -> bool:
        """Whether any field of `answer` is read from the model's answer."""
        return any(self.mapping.source_of(n).root == self.mapping.answer_root for n in answer)

    def scored(
        self, item: str, label: str, answer: dict[str, Any], answer_text: str | None, get: Lookup
    ) -> dict[str, Any]:
        """The scored result of `item` (its record shown as `label`): the fields of `answer`, in
        name order, and the judge's labels if the mapping reads any. `answer_text` is the model's
        answer, parsed as one JSON object when a field or label reads a member of it."""
        root = self.mapping.answer_root
        sources = {name: self.mapping.source_of(name) for name in answer}
        from_answer = [s for s in (*sources.values(), *self.mapping.judge_labels.values()) if s.root == root]
        parsed: dict[str, Any] | None = None
        if any(s.path for s in from_answer):
            parsed, why = parse_json_object(answer_text or "")
            if parsed is None:
                self.add(
                    f"{label}: {self.answer_name} should be a JSON object of the item's fields, and is {why}",
                    self.answer_where,
                    found=show(answer_text),
                )
                return {"item": item, "status": SCORED, "fields": []}
            read = {s.path[0] for s in from_answer if s.path}
            extra = sorted(set(parsed) - read)
            if extra:
                self.add(
                    f"{label}: {self.answer_name} gives {', '.join(extra)}, which item {item}'s answer does not have",
                    self.answer_where,
                    expected=", ".join(sorted(read)),
                )
        fields = [self.field(label, answer, name, sources[name], parsed, get) for name in sorted(answer)]
        r: dict[str, Any] = {"item": item, "status": SCORED, "fields": fields}
        if self.mapping.judge_labels:
            r["judge_labels"] = {
                dim: self.judge_label(label, dim, source, parsed, get)
                for dim, source in sorted(self.mapping.judge_labels.items())
            }
        return r

    def judge_label(
        self, label: str, dim: str, source: Source, parsed: dict[str, Any] | None, get: Lookup
    ) -> int | None:
        """The judge's label on rubric dimension `dim`: an integer, never a boolean (Python's
        True is 1) nor a float that happens to be whole (3.0 is a judge's mean or a cast, not a
        point of an ordinal scale)."""
        where = f"{label}, judge label {dim}"
        value = get(source, parsed)
        if value is MISSING:
            self.add(f"{where}: no value at {source.text}", expected=f"the judge's integer label at {source.text}")
            return None
        if not (is_int(value) and abs(value) <= MAX_SAFE_INTEGER):
            self.add(
                f"{where}: a judge label is an integer on the rubric's scale, and this is {value_kind(value)}",
                source.text,
                expected="an integer such as 3",
                found=show(value),
            )
            return None
        return int(value)

    def field(
        self,
        label: str,
        answer: dict[str, Any],
        name: str,
        source: Source,
        parsed: dict[str, Any] | None,
        get: Lookup,
    ) -> dict[str, Any]:
        where = f"{label}, field {name}"
        out = get(source, parsed)
        f: dict[str, Any] = {"name": name, "output": None if out is MISSING else out}
        if out is MISSING:
            self.add(f"{where}: no value at {source.text}", expected=f"the field's output at {source.text}")
        else:
            self.problems += [p.at(self.file) for p in number_rule_problems(out, where)]
            try:
                check_no_surrogates(out)
            except FormatError as e:
                self.add(f"{where}: {e}")
        a = answer[name]
        if not is_reported_field(a["kind"], a["tier"]):
            return f
        sim_source = self.mapping.similarity.get(name)
        if sim_source is None:
            self.problems.append(
                problem(
                    self.map_file,
                    f"{where}: a {a['tier']} text field needs its reported similarity, and the mapping does not say "
                    "where it is",
                    "similarity",
                    expected=f"similarity: {{{name}: <source>}}",
                )
            )
            return f
        value = get(sim_source, parsed)
        text = None if value is MISSING else similarity_text(value)
        if value is MISSING:
            self.add(f"{where}: no similarity at {sim_source.text}", expected='a decimal string such as "0.93"')
        elif text is None:
            self.add(f"{where}: a similarity is a decimal string or a number", sim_source.text, found=show(value))
        else:
            f["similarity"] = text
        return f


def excluded_result(item: str, exclusion: Exclusion, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """An item the operator set aside (FORMAT.md, "Attempts and lineage"): the exclusion's rule,
    note and time, and every attempt, the last the one it sets aside."""
    return {
        "item": item,
        "status": "excluded",
        "rule": exclusion.rule,
        "note": exclusion.note,
        "attempts": attempts,
        "excludes": len(attempts),
        "at": exclusion.at,
    }
