"""The evaluator's run-results file (format v1 §6), read strictly and checked against the run spec.

The grader's proposal is kept as the JSON text it was written in, so that `90.0` can never
become `90`; a number format v1 §1 does not allow is kept as its text, so that the error can quote it.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import read_text
from generator.verifier import (
    JUDGE_LABELS,
    MAX_SAFE_INTEGER,
    SCORE_EDITS,
    SCORED,
    STATUSES,
    FormatError,
    Problem,
    check_keys,
    check_no_surrogates,
    is_reported_field,
    is_time,
    judge_labels_problems,
    lineage_keys,
    lineage_problems,
    non_scored_problems,
    number_rule_problems,
    score_edits_problems,
    show,
    similarity_form_problem,
    strict_decoder,
    value_kind_problem,
)

RESULTS_KEYS = ("type", "v", "run", "finished_at", "results")


class JsonNumber:
    """A number of the results file that format v1 §1 does not allow in a document (a fraction, an
    exponent, an integer beyond ±(2^53−1)). Kept as its text so the error can quote it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _int_or_number(text: str) -> Any:
    if len(text.lstrip("-")) > 16 or abs(int(text)) > MAX_SAFE_INTEGER:
        return JsonNumber(text)
    return int(text)


_RESULTS_DECODER = strict_decoder(parse_float=JsonNumber, parse_int=_int_or_number)


_SKIPPER = json.JSONDecoder(parse_float=str, parse_int=str, parse_constant=str)


_WS = " \t\n\r"


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def raw_member_text(text: str, path: tuple[str, ...]) -> str | None:
    """The JSON text of the member at `path` (object keys from the top), exactly as written,
    or None if absent. `text` must already have parsed as strict JSON (no duplicate keys)."""
    i = _skip_ws(text, 0)
    for key in path:
        if text[i] != "{":
            return None
        i = _skip_ws(text, i + 1)
        while text[i] != "}":
            name, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
            if name == key:
                break
            _, i = _SKIPPER.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i] == ",":
                i = _skip_ws(text, i + 1)
        else:
            return None
    _, end = _SKIPPER.raw_decode(text, i)
    return text[i:end]


def _numbers(value: Any, where: str) -> list[tuple[str, str]]:
    """Where a value holds numbers format v1 §1 does not allow, as (path, text)."""
    out: list[tuple[str, str]] = []
    stack = [(where, value)]
    while stack:
        w, v = stack.pop()
        if isinstance(v, JsonNumber):
            out.append((w, v.text))
        elif isinstance(v, list):
            stack.extend((f"{w}[{i}]", x) for i, x in enumerate(v))
        elif isinstance(v, dict):
            stack.extend((f"{w}.{k}", x) for k, x in v.items())
    return sorted(out)


@dataclass(frozen=True)
class RunResults:
    doc: dict[str, Any]
    proposed_json: str | None
    rationale: Any  # as received; [] when missing


def read_results(path: Path, file: str) -> RunResults:
    """Parse a results file strictly, keeping the grader's proposal as written."""
    text = read_text(path, file)
    try:
        doc = _RESULTS_DECODER.decode(text)
        check_no_surrogates(doc)
    except json.JSONDecodeError as e:
        raise InputError([problem(file, f"malformed JSON: {e.msg}", f"line {e.lineno} column {e.colno}")]) from None
    except (FormatError, RecursionError, ValueError) as e:
        raise InputError([problem(file, f"malformed JSON: {str(e)[:200]}")]) from None
    if not isinstance(doc, dict):
        raise InputError(
            [problem(file, "must be a run-results object (format v1 §6, docs/formats/v1.md)", found=type(doc).__name__)]
        )
    grader = doc.get("grader")
    proposed = raw_member_text(text, ("grader", "proposed_score")) if isinstance(grader, dict) else None
    # A missing rationale counts as no elements (format v1 §5) and is recorded as []; anything
    # received, null included, is recorded as it came and judged by keep_bullets.
    rationale = grader.get("rationale", []) if isinstance(grader, dict) else []
    return RunResults(doc, proposed, rationale)


def _plain(v: Any) -> Any:
    if isinstance(v, JsonNumber):
        return v.text
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def check_results_shape(
    doc: dict[str, Any],
    spec: dict[str, Any],
    answers: dict[str, dict[str, Any]],
    *,
    max_attempts: int | None = None,
    not_before: str | None = None,
) -> list[Problem]:
    """Every way the results break format v1 §6's input rules and the attempt chain rules
    (lineage.py: none before `not_before`, the run's registration, none after `finished_at`, at
    most `max_attempts`), naming item and field."""
    problems = _document_problems(doc)
    results = doc.get("results")
    if not isinstance(results, list):
        return [*problems, Problem("must be a list of results", where="results", found=_shown(results))]
    problems += _coverage_problems(results, spec["items"])
    rule_count = len(spec["exclusion_rules"])
    lineage = functools.partial(
        lineage_problems,
        sealed=False,
        max_attempts=max_attempts,
        not_before=not_before,
        not_after=finished if is_time(finished := doc.get("finished_at")) else None,
        render=_shown,
        evidence_names={
            e["name"]
            for e in (doc["evidence"] if isinstance(doc.get("evidence"), list) else [])
            if isinstance(e, dict) and isinstance(e.get("name"), str)
        },
    )
    for i, r in enumerate(results):
        problems += _result_problems(i, r, answers, rule_count, lineage)
    return problems


def _shown(v: Any) -> str:
    return show(_plain(v))


def _document_problems(doc: dict[str, Any]) -> list[Problem]:
    """The document's own members: its keys, type and version, source and grader."""
    # `evidence` is read and checked by evidence_files.read_evidence, which needs the file system.
    problems = check_keys(doc, RESULTS_KEYS, optional=("grader", "evidence", "source"))
    if "source" in doc and not isinstance(doc["source"], dict):
        problems.append(
            Problem(
                "source records where the results came from, as an object",
                where="source",
                found=show(doc["source"], 80),
            )
        )
    if doc.get("type") != "run-results" or doc.get("v") != 1 or isinstance(doc.get("v"), bool):
        problems.append(
            Problem(
                "wrong type or version",
                expected='"run-results", v 1',
                found=f"{show(doc.get('type'))}, v {_shown(doc.get('v'))}",
            )
        )
    if "grader" in doc:
        problems += check_keys(doc["grader"], (), optional=("proposed_score", "rationale"), where="grader")
    return problems


def _coverage_problems(results: list[Any], items: list[str]) -> list[Problem]:
    """One result for every item of the run spec, and none for another."""
    problems: list[Problem] = []
    named = [r.get("item") if isinstance(r, dict) else None for r in results]
    twice = sorted(i for i, n in Counter(x for x in named if isinstance(x, str)).items() if n > 1)
    if twice:
        problems.append(Problem(f"results name item(s) more than once: {', '.join(twice)}", where="results"))
    named_ids = {x for x in named if isinstance(x, str)}
    missing = [i for i in items if i not in named_ids]
    if missing:
        problems.append(
            Problem(
                f"no result for item(s) of the run spec: {', '.join(missing[:20])}{' …' if len(missing) > 20 else ''}",
                where="results",
                expected="exactly one result per run-spec item",
            )
        )
    spec_items = set(items)
    extra = [_shown(x) for x in named if not isinstance(x, str) or x not in spec_items]
    if extra:
        problems.append(Problem(f"results for item(s) not in the run spec: {', '.join(extra[:20])}", where="results"))
    return problems


def _result_problems(
    i: int,
    r: Any,
    answers: dict[str, dict[str, Any]],
    rule_count: int,
    lineage: Callable[[dict[str, Any], str], list[Problem]],
) -> list[Problem]:
    """Result `i`'s: its status, its attempt chain (`lineage`), the numbers of its attempts and
    score edits, and, when scored, its members and its fields against the item's answer."""
    w = f"results[{i}]"
    if not isinstance(r, dict):
        return [Problem("a result must be an object", where=w, found=_shown(r))]
    item = r.get("item")
    if isinstance(item, str):
        w = f"results[{i}] ({item})"
    status = r.get("status")
    if status not in STATUSES:
        return [Problem("unknown status", where=f"{w}.status", expected=" | ".join(STATUSES), found=_shown(status))]
    problems = lineage(r, w)
    earlier = r.get("attempts")
    for j, a in enumerate(earlier if isinstance(earlier, list) else []):
        if isinstance(a, dict) and "native" in a:
            problems += _number_problems("a native result", a["native"], f"{w}.attempts[{j}].native")
    problems += _number_problems("a score edit", r.get(SCORE_EDITS), f"{w}.{SCORE_EDITS}")
    if status != SCORED:
        return problems + non_scored_problems(r, w, rule_count, _shown)
    problems += check_keys(
        r, ("item", "status", "fields"), optional=(*lineage_keys(r), JUDGE_LABELS, SCORE_EDITS), where=w
    )
    if JUDGE_LABELS in r:
        problems += judge_labels_problems(_plain(r[JUDGE_LABELS]), w, _shown)
    if SCORE_EDITS in r:
        problems += score_edits_problems(r[SCORE_EDITS], w, _shown)
    answer = answers.get(item) if isinstance(item, str) else None
    fields = r.get("fields")
    if not isinstance(fields, list):
        return [*problems, Problem("a scored result lists its fields", where=f"{w}.fields", found=_shown(fields))]
    if answer is not None:
        problems += _fields_problems(fields, answer, w)
    return problems


def _number_problems(what: str, value: Any, where: str) -> list[Problem]:
    """The numbers in `value` (`what`, at `where`) format v1 §1 does not allow."""
    return [
        Problem(
            f"{what} holds a number that is not an integer within ±(2^53−1)",
            where=nw,
            expected="an integer, or the value as a string",
            found=ntext,
        )
        for nw, ntext in _numbers(value, where)
    ]


def _fields_problems(fields: list[Any], answer: dict[str, Any], w: str) -> list[Problem]:
    """A scored result's fields (of result `w`): each a field of the item's answer, once, and
    every field of the answer given."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for j, f in enumerate(fields):
        fw = f"{w}.fields[{j}]"
        if not isinstance(f, dict):
            problems.append(Problem("a field must be an object with name and output", where=fw, found=_shown(f)))
            continue
        name = f.get("name")
        if isinstance(name, str):
            fw = f"{w}.fields[{j}] ({name})"
        if not isinstance(name, str) or name not in answer:
            problems.append(
                Problem(
                    f"names a field the item's answer lacks: {_shown(name)}",
                    where=f"{fw}.name",
                    expected=", ".join(sorted(answer)),
                )
            )
            continue
        if name in seen:
            problems.append(Problem(f"field {name} is given twice", where=fw))
        seen.add(name)
        problems += _field_problems(f, answer[name], fw)
    absent = sorted(set(answer) - seen)
    if absent:
        problems.append(
            Problem(
                f"missing field(s) of the item's answer: {', '.join(absent)}",
                where=f"{w}.fields",
                expected="every field of the answer, once",
            )
        )
    return problems


def _field_problems(f: dict[str, Any], a: dict[str, Any], fw: str) -> list[Problem]:
    """Field `fw` against its answer `a`: its members, its output's type and numbers, and a
    similarity exactly where a reported one is due (a non-critical text field)."""
    problems: list[Problem] = []
    reported = is_reported_field(a["kind"], a["tier"])
    if "similarity" in f and not reported:
        problems.append(
            Problem(
                f"a {a['tier']} {a['kind']} field's similarity is computed from its output; only "
                "non-critical text fields "
                "take a reported similarity",
                where=f"{fw}.similarity",
                expected="no similarity member",
                found=_shown(f["similarity"]),
            )
        )
    problems += check_keys(
        {k: v for k, v in f.items() if reported or k != "similarity"},
        ("name", "output"),
        optional=("similarity",) if reported else (),
        where=fw,
    )
    if "output" in f:
        bad_numbers = _number_problems("an output", f["output"], f"{fw}.output")
        problems += bad_numbers
        if not bad_numbers:
            want = value_kind_problem(a["kind"], f["output"])
            if want:
                article = "an" if a["kind"] == "array" else "a"
                problems.append(
                    Problem(
                        f"wrong type of output for {article} {a['kind']} field",
                        where=f"{fw}.output",
                        expected=want,
                        found=show(f["output"]),
                    )
                )
            problems += number_rule_problems(f["output"], f"{fw}.output")
    if reported:
        sim = f.get("similarity")
        if "similarity" not in f:
            problems.append(
                Problem(
                    f"a {a['tier']} text field needs the reported similarity",
                    where=f"{fw}.similarity",
                    expected='a decimal string in [0, 1], such as "0.93"',
                )
            )
        elif similarity_form_problem(a["kind"], a["tier"], sim):
            problems.append(
                Problem(
                    "a similarity is a decimal string in [0, 1]",
                    where=f"{fw}.similarity",
                    expected='a string such as "0.93"',
                    found=_shown(sim),
                )
            )
    return problems
