"""An Inspect evaluation log turned into a run-results file (format v1 §6): `transparency results from-inspect`.

Inspect (the `inspect_ai` package) is optional. It is imported when a log is read and at no
other time, so every other command works without it. The log is read through `inspect_ai.log`'s
public API only, and read once: the bytes that are hashed for the results' `source` member are
the bytes that are parsed (`read_eval_log` over them), so the file on record is the file read.

The mapping file says what the log must be and where the outputs are (FORMAT.md, "Importing an
Inspect log"):

    task: extract_fields          # required: the log's eval.task, exactly
    model: openai/gpt-4o          # required: the log's eval.model, exactly
    item: metadata.item_id        # default "id": the sample id is the item id
    fields:                       # default for every field: completion.<field>
      tags: store.tags
    similarity:                   # needed for every non-critical text field
      requested_action: score.similarity.metadata.requested_action
    judge_labels:                 # the judge's ordinal label of each scored result, by dimension
      correctness: score.judge.metadata.correctness
    exclude:                      # items the operator sets aside under a rule of the run spec
      a-006: {rule: 0, note: "pasted HTML, stripped by the input filter", at: "2026-11-28T12:00:00Z"}
    accept_score_edits: false     # default: a score edited by hand after the evaluation is refused

A source is `completion` (the final completion's text), `completion.<key>…` (a member of the
completion parsed as a JSON object), `metadata.<key>…`, `store.<key>…`, or a scorer's
`score.<scorer>.value[.<key>…]`, `score.<scorer>.answer`, `score.<scorer>.metadata.<key>…`; each
`.<key>` goes one object member deeper. Every key of the mapping is checked, an unknown one is an
error, and a field or similarity that no item of the run has is an error too (a typo), as is an
exclusion of an item the run does not have or under a rule it does not have.

What each sample becomes, the sample's final attempt deciding:
- an error (`sample.error`): `infra_error`, the error message as the note; a cancellation that
  Inspect recorded as an error (`CancelledError(…)`, `Cancelled()`): `not_run`;
- a limit (`sample.limit`: messages, tokens, time, …): `not_run`, never a failure;
- no model output where the outputs are read from the completion: `not_run`;
- otherwise `scored`, with every field of the item's answer and nothing else.
Errors that Inspect retried (`retry_on_error`: `sample.error_retries`, oldest first) become the
result's earlier attempts (FORMAT.md, "Attempts and lineage"). In a log that was cancelled or
stopped by an error, an item whose sample never ran is `not_run`; in a log that succeeded it is
refused as missing. An item the mapping excludes is `excluded`: what its sample came to is the
last of its attempts, the one the exclusion sets aside.

A score edited after the evaluation (Inspect's `edit_score`, kept in the score's `history` with
who, when and why) is refused, naming the sample, the scorer and the edit, unless the mapping sets
`accept_score_edits: true`; then every edit goes into the result as its `score_edits` (FORMAT.md,
"Score edits"), and the certificate carries them.

The results list the log itself as an evidence file (FORMAT.md, "Evidence files"), so that the
certificate binds the bytes Inspect wrote, not only the results read from them.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import importlib
import io
import json
import os
import re
import sys
import tempfile
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from generator import __version__
from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.core.strict_input import load_data_file
from generator.program.datadir import Paths
from generator.program.documents import load_spec, methodology
from generator.program.evidence_files import read_evidence
from generator.program.journal import fsync_dir
from generator.program.ledgerfile import reading, replay_from
from generator.program.results_file import check_results_shape, read_results
from generator.program.sealed import locate_sealed, run_answers
from generator.verifier import (
    ID_RE,
    MAX_SAFE_INTEGER,
    SCORED,
    FormatError,
    Problem,
    check_no_surrogates,
    is_evidence_name,
    is_id,
    is_int,
    is_reported_field,
    is_time,
    number_rule_problems,
    show,
)

if TYPE_CHECKING:  # inspect_ai ships its types (py.typed); at run time it is imported only to read a log
    from inspect_ai.log import EvalLog, EvalRetryError, EvalSample

# The routes that exist: the package is not on PyPI, so it is installed from a checkout or from a wheel built from
# one, each with the `inspect` extra; or inspect_ai alone is added to the environment that runs this code.
INSTALL_HINT = (
    f"{sys.executable} -m pip install 'inspect-ai>=0.3.200' (the environment running transparency); or, in a "
    "checkout of transparency, pip install -e '.[inspect]'; or from a wheel built there with "
    "'python3 -m pip wheel . --no-deps -w dist', "
    f"pip install 'dist/transparency_site-{__version__}-py3-none-any.whl[inspect]' (README, \"Install\")"
)
MAPPING_KEYS = ("task", "model", "item", "fields", "similarity", "judge_labels", "exclude", "accept_score_edits")
EXCLUSION_KEYS = ("rule", "note", "at")
SOURCE_FORMS = (
    "completion, completion.<key>, metadata.<key>, store.<key>, score.<scorer>.value, score.<scorer>.answer or "
    "score.<scorer>.metadata.<key>"
)
ITEM_FORMS = "id, or metadata.<key>"
# A note is the operator's (here the harness's) words, shown on pages: one line, not a traceback.
NOTE_LIMIT = 500
# How Inspect records a sample cancelled under it as an error (inspect_ai._util.error, not public).
_CANCELLED_PREFIXES = ("CancelledError(", "Cancelled(")
_UNFINISHED = ("cancelled", "error")  # statuses of a finished log that may leave samples unrun


class InspectNotInstalled(TransparencyError):
    """Reading an Inspect log needs the optional inspect_ai package."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"reading an Inspect log needs the inspect_ai package, which cannot be imported ({why}); "
            f"install it with: {INSTALL_HINT}"
        )


# ---------------------------------------------------------------------------------------------
# The mapping


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


# ---------------------------------------------------------------------------------------------
# Reading a sample


_MISSING = object()


def _time(value: str | _dt.datetime | None) -> str | None:
    """A time of the log in the project's form (format v1 §1): UTC, whole seconds (rounded down, so
    never later than the time Inspect recorded), or None when there is none."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = _dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    if value.tzinfo is None:  # Inspect writes UTC; a time without a zone is read as UTC
        value = value.replace(tzinfo=_dt.UTC)
    return value.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def note_text(message: str | None) -> str:
    """An error message as a note: one line of printable text, at most NOTE_LIMIT characters."""
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in message or "")
    text = re.sub(r"\s+", " ", text).strip() or "no message"
    return text if len(text) <= NOTE_LIMIT else text[: NOTE_LIMIT - 1] + "…"


def is_cancellation(message: str | None) -> bool:
    return message is not None and message.startswith(_CANCELLED_PREFIXES)


def sample_label(sample: EvalSample) -> str:
    return f"sample {sample.id}" + (f" (epoch {sample.epoch})" if sample.epoch != 1 else "")


def _labels(samples: list[EvalSample]) -> list[str]:
    return [sample_label(s) for s in sorted(samples, key=lambda s: (str(s.id), s.epoch))]


def _descend(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _lookup(source: Source, sample: EvalSample, completion: dict[str, Any] | None) -> Any:
    """The value at `source` in the sample, or _MISSING."""
    if source.root == "id":
        return str(sample.id)
    if source.root == "completion":
        return sample.output.completion if not source.path else _descend(completion, source.path)
    if source.root == "metadata":
        return _descend(sample.metadata, source.path)
    if source.root == "store":
        return _descend(sample.store, source.path)
    score = (sample.scores or {}).get(source.scorer or "")
    if score is None:
        return _MISSING
    if source.part == "answer":
        return _MISSING if score.answer is None else score.answer
    return _descend(score.metadata if source.part == "metadata" else score.value, source.path)


def parse_completion(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A completion read as a JSON object (no duplicate key, no NaN), or why it is not one."""

    def pairs(kv: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in kv:
            if k in out:
                raise ValueError(f"key {k!r} is given twice")
            out[k] = v
        return out

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except (ValueError, RecursionError) as e:
        return None, f"not JSON ({str(e)[:120]})"
    if not isinstance(value, dict):
        return None, f"JSON, but a {type(value).__name__} rather than an object"
    return value, None


def _kind(value: Any) -> str:
    """What a JSON value is, for a message (bool before int: Python's True is an int)."""
    for t, name in ((bool, "a boolean"), (int, "an integer out of range"), (float, "a float"), (str, "a string")):
        if isinstance(value, t):
            return name
    if value is None:
        return "null"
    return "a list" if isinstance(value, list) else "an object"


def native_value(value: Any) -> Any:
    """A score value of Inspect's as the results file holds it: a float (and an integer past
    ±(2^53−1)) as its Python text, the text Inspect wrote in its log; the rest as it is."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) <= MAX_SAFE_INTEGER else str(value)
    if isinstance(value, list | tuple):
        return [native_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): native_value(v) for k, v in value.items()}
    return value


def similarity_text(value: Any) -> str | None:
    """A reported similarity as the results file holds it: a string as it is (its form is
    checked with the results), a number as the shortest decimal text that reads back as it
    (Python's repr, which is the text Inspect wrote into its log). None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return None


@dataclass
class _Reader:
    """Reads the samples of one log into results, recording every problem."""

    file: str  # the log, as shown
    map_file: str
    mapping: Mapping
    answers: dict[str, dict[str, Any]]
    finished: str
    problems: list[Problem]

    def add(self, message: str, where: str = "", expected: object = None, found: object = None) -> None:
        self.problems.append(problem(self.file, message, where, expected, found))

    def result(self, item: str, sample: EvalSample) -> dict[str, Any] | None:
        before = len(self.problems)
        r = self.final(item, sample)
        exclusion = self.mapping.exclude.get(item)
        if exclusion is not None:
            r = self.excluded(r, sample, exclusion)
        elif sample.error_retries:
            earlier, at = self.lineage(sample, sample.error_retries)
            n = len(earlier)
            r.update({"attempt": n + 1, "retry_of": n, "at": at, "attempts": earlier})
        edits = self.score_edits(sample)
        if edits:
            r["score_edits"] = edits
        return r if len(self.problems) == before else None

    def score_edits(self, sample: EvalSample) -> list[dict[str, Any]]:
        """Every hand edit of the sample's scores, by scorer and in the order made, as the
        results carry them; each one a problem unless the mapping accepts edits. A score's
        `history` starts with the score as its scorer gave it (no provenance) and then lists
        each edit; a score an edit made starts with that edit."""
        label = sample_label(sample)
        out: list[dict[str, Any]] = []
        for name, score in sorted((sample.scores or {}).items()):
            history = list(score.history or [])
            # The events keep each edit too: a log whose history was emptied still shows them.
            recorded = sum(
                1 for e in sample.events or [] if e.event == "score_edit" and getattr(e, "score_name", None) == name
            )
            original = len(history) > 1 and history[0].provenance is None
            edits = history[1:] if original else history
            if len(edits) != recorded and (recorded or edits):
                self.add(
                    f"{label}: score {name}: the log's events record {recorded} edit(s) of it and its history "
                    f"{len(edits)}: the log was changed other than through Inspect's edit_score",
                    f"scores.{name}.history",
                )
                continue
            value: Any = history[0].value if original else None
            for k, edit in enumerate(edits):
                new = value if edit.value == "UNCHANGED" else edit.value
                p = edit.provenance
                by = p.author if p is not None else None
                at = _time(p.timestamp) if p is not None else None
                reason = p.reason if p is not None else None
                e = {
                    "scorer": name,
                    "from": None if value is None else native_value(value),
                    "to": native_value(new),
                    "by": by,
                    "at": at,
                    "reason": reason,
                }
                value = new
                told = f"score {name} was edited by {show(by)} at {at or '?'} ({show(reason)}), from {show(e['from'])} "
                where = f"scores.{name}.history[{k + (1 if original else 0)}]"
                if not self.mapping.accept_score_edits:
                    self.add(
                        f"{label}: {told}to {show(e['to'])}: a certificate would rest on a score changed by hand "
                        "after the evaluation; import the log as its scorers left it, or set accept_score_edits: true "
                        "in the mapping to carry every edit (who, when, why) into the results and the certificate",
                        where,
                    )
                elif not (isinstance(by, str) and by.strip() and at and isinstance(reason, str) and reason.strip()):
                    self.add(
                        f"{label}: {told}to {show(e['to'])}: an accepted edit states who made it, when and why "
                        "(Inspect's ProvenanceData author, timestamp and reason), and this one does not",
                        f"{where}.provenance",
                    )
                else:
                    try:
                        check_no_surrogates(e)
                    except FormatError as err:
                        self.add(f"{label}: score {name}'s edit: {err}", where)
                        continue
                    out.append(e)
            if edits and native_value(value) != native_value(score.value):
                self.add(
                    f"{label}: score {name}'s history ends at {show(native_value(value))}, and its value is "
                    f"{show(native_value(score.value))}: the log was changed other than through Inspect's edit_score",
                    f"scores.{name}.value",
                )
        return out  # by scorer (the loop's order), each scorer's in the order made

    def excluded(self, final: dict[str, Any], sample: EvalSample, exclusion: Exclusion) -> dict[str, Any]:
        """The excluded result of an item whose sample came to `final`: that outcome is the last
        attempt of the chain, the one the exclusion sets aside (FORMAT.md, "Attempts and
        lineage"), kept with the scores Inspect gave it, since an exclusion that hid what it
        excluded could drop a failure unseen."""
        earlier, at = self.lineage(sample, sample.error_retries or [])
        n = len(earlier)
        last: dict[str, Any] = {"attempt": n + 1, "retry_of": n or None, "status": final["status"]}
        if "note" in final:
            last["note"] = final["note"]
        last["at"] = at
        native = self.native(sample)
        if native:
            last["native"] = native
        w = f"exclude.{final['item']}.at"
        if exclusion.at < at:
            self.problems.append(
                problem(
                    self.map_file,
                    f"the exclusion of item {final['item']} is dated before the attempt it sets aside "
                    f"({sample_label(sample)}, {last['status']} at {at})",
                    w,
                    expected=f"{at} or later",
                    found=exclusion.at,
                )
            )
        elif self.finished and exclusion.at > self.finished:
            # The chain rules bound every time of a result by the results' finished_at.
            self.problems.append(
                problem(
                    self.map_file,
                    "the exclusion is dated after the evaluation finished (the log's stats.completed_at, the "
                    "results' finished_at), and no time of a result may be later",
                    w,
                    expected=f"{at} to {self.finished}",
                    found=exclusion.at,
                )
            )
        return {
            "item": final["item"],
            "status": "excluded",
            "rule": exclusion.rule,
            "note": exclusion.note,
            "attempts": [*earlier, last],
            "excludes": n + 1,
            "at": exclusion.at,
        }

    def native(self, sample: EvalSample) -> dict[str, Any]:
        """What Inspect itself made of the sample: its score values by scorer (a float as its
        Python text, as format v1 §1 numbers require), or nothing when no scorer ran."""
        if not sample.scores:
            return {}
        out = {"scores": {name: native_value(score.value) for name, score in sorted(sample.scores.items())}}
        try:
            check_no_surrogates(out)
        except FormatError as e:
            self.add(f"{sample_label(sample)}: its scores: {e}")
        return out

    def final(self, item: str, sample: EvalSample) -> dict[str, Any]:
        label = sample_label(sample)
        if sample.invalidation is not None and item not in self.mapping.exclude:
            self.add(
                f"{label} is marked invalid in the log: give its item a status by hand (exclude it in the mapping), "
                "or clear the mark"
            )
        if sample.error is not None:
            if is_cancellation(sample.error.message):
                return {"item": item, "status": "not_run", "note": note_text(f"cancelled: {sample.error.message}")}
            return {"item": item, "status": "infra_error", "note": note_text(sample.error.message)}
        if sample.limit is not None:
            lim = sample.limit
            reason = f": {lim.reason}" if lim.reason else ""
            return {
                "item": item,
                "status": "not_run",
                "note": note_text(f"stopped by its {lim.type} limit ({lim.limit:g}){reason}"),
            }
        answer = self.answers.get(item)
        if answer is None:  # its answer could not be read, which is reported already
            return {"item": item, "status": SCORED, "fields": []}
        sources = {name: self.mapping.source_of(name) for name in answer}
        from_completion = [s for s in sources.values() if s.root == "completion"]
        if from_completion and not sample.output.completion.strip():
            error = f": {sample.output.error}" if sample.output.error else ""
            return {"item": item, "status": "not_run", "note": note_text(f"the model gave no output{error}")}
        from_completion += [s for s in self.mapping.judge_labels.values() if s.root == "completion"]
        completion: dict[str, Any] | None = None
        if any(s.path for s in from_completion):
            completion, why = parse_completion(sample.output.completion)
            if completion is None:
                self.add(
                    f"{label}: the completion should be a JSON object of the item's fields, and is {why}",
                    "output.completion",
                    found=show(sample.output.completion),
                )
                return {"item": item, "status": SCORED, "fields": []}
            read = {s.path[0] for s in from_completion if s.path}
            extra = sorted(set(completion) - read)
            if extra:
                self.add(
                    f"{label}: the completion gives {', '.join(extra)}, which item {item}'s answer does not have",
                    "output.completion",
                    expected=", ".join(sorted(read)),
                )
        fields = [self.field(label, sample, answer, name, sources[name], completion) for name in sorted(answer)]
        r: dict[str, Any] = {"item": item, "status": SCORED, "fields": fields}
        if self.mapping.judge_labels:
            r["judge_labels"] = {
                dim: self.judge_label(label, sample, dim, source, completion)
                for dim, source in sorted(self.mapping.judge_labels.items())
            }
        return r

    def judge_label(
        self, label: str, sample: EvalSample, dim: str, source: Source, completion: dict[str, Any] | None
    ) -> int | None:
        """The judge's label of the sample on rubric dimension `dim`: an integer, never a
        boolean (Python's True is 1) nor a float that happens to be whole (3.0 is a judge's
        mean or a cast, not a point of an ordinal scale)."""
        where = f"{label}, judge label {dim}"
        value = _lookup(source, sample, completion)
        if value is _MISSING:
            self.add(f"{where}: no value at {source.text}", expected=f"the judge's integer label at {source.text}")
            return None
        if not (is_int(value) and abs(value) <= MAX_SAFE_INTEGER):
            self.add(
                f"{where}: a judge label is an integer on the rubric's scale, and this is {_kind(value)}",
                source.text,
                expected="an integer such as 3",
                found=show(value),
            )
            return None
        return value

    def field(
        self,
        label: str,
        sample: EvalSample,
        answer: dict[str, Any],
        name: str,
        source: Source,
        completion: dict[str, Any] | None,
    ) -> dict[str, Any]:
        where = f"{label}, field {name}"
        out = _lookup(source, sample, completion)
        f: dict[str, Any] = {"name": name, "output": None if out is _MISSING else out}
        if out is _MISSING:
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
                    expected=f"similarity: {{{name}: <source>}}, such as score.<scorer>.metadata.{name}",
                )
            )
            return f
        value = _lookup(sim_source, sample, completion)
        text = None if value is _MISSING else similarity_text(value)
        if value is _MISSING:
            self.add(f"{where}: no similarity at {sim_source.text}", expected='a decimal string such as "0.93"')
        elif text is None:
            self.add(f"{where}: a similarity is a decimal string or a number", sim_source.text, found=show(value))
        else:
            f["similarity"] = text
        return f

    def lineage(self, sample: EvalSample, retries: Iterable[EvalRetryError]) -> tuple[list[dict[str, Any]], str]:
        """Every error Inspect retried, oldest first, as an earlier attempt, and the time of the
        final attempt. An attempt's time is that of the last event Inspect kept with its
        error; when it kept none, the time of the attempt after it (the start of the final
        attempt, for the last), the latest the failed attempt can have ended."""
        retries = list(retries)
        final_at = _time(sample.completed_at) or self.finished
        bound = _time(sample.started_at) or final_at
        times: list[str] = []
        for r in reversed(retries):
            stamps = [t for t in (_time(e.timestamp) for e in r.events or []) if t is not None]
            bound = max(stamps) if stamps else bound
            times.append(bound)
        times.reverse()
        attempts = [
            {
                "attempt": i + 1,
                "retry_of": i if i else None,
                "status": "not_run" if is_cancellation(r.message) else "infra_error",
                "note": note_text(r.message),
                "at": at,
            }
            for i, (r, at) in enumerate(zip(retries, times, strict=True))
        ]
        return attempts, final_at


# ---------------------------------------------------------------------------------------------
# From a log to a results document


def source_member(log: EvalLog, data: bytes) -> dict[str, Any]:
    """Where the results came from: the log's task, model and scorers, and its file's hash and size."""
    ev = log.eval
    return {
        "kind": "inspect",
        "task": ev.task,
        "model": ev.model,
        "scorers": [s.name for s in ev.scorers or []],
        "log_sha256": hashlib.sha256(data).hexdigest(),
        "log_size": len(data),
        "eval_id": ev.eval_id,
        "inspect_version": ev.packages.get("inspect_ai"),
    }


def results_from_log(
    log: EvalLog,
    data: bytes,
    run_id: str,
    run_at: str,
    items: list[str],
    answers: dict[str, dict[str, Any]],
    mapping: Mapping,
    file: str,
    map_file: str,
    evidence: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[Problem]]:
    """The run-results document of `log` (whose file's bytes are `data`) for the run `run_id`
    registered at `run_at` with `items`, listing `evidence` (the log's entry) if given, and
    every problem found."""
    problems: list[Problem] = []
    ev = log.eval
    for key, want, found in (("task", mapping.task, ev.task), ("model", mapping.model, ev.model)):
        if found != want:
            problems.append(
                problem(
                    file,
                    f"the log is of another {key} than the mapping states",
                    f"eval.{key}",
                    expected=want,
                    found=found,
                )
            )
    finished = _time(log.stats.completed_at)
    if log.status == "started" or finished is None:
        problems.append(
            problem(
                file,
                "the evaluation did not finish: the log has no completion time (an interrupted run, or one still "
                "going); import the log of a finished evaluation",
                "stats.completed_at",
                found=f"status {log.status}, completed_at {show(log.stats.completed_at)}",
            )
        )
    started = _time(log.stats.started_at)
    if started is not None and started < run_at:
        problems.append(
            problem(
                file,
                f"the evaluation started before run {run_id} was registered: a run is registered before it happens",
                "stats.started_at",
                expected=f"{run_at} or later",
                found=started,
            )
        )
    by_item: dict[str, list[EvalSample]] = defaultdict(list)
    known = set(items)
    for sample in log.samples or []:
        label = sample_label(sample)
        item = _lookup(mapping.item, sample, None)
        if not isinstance(item, str):
            problems.append(
                problem(
                    file,
                    f"{label}: no item id at {mapping.item.text}",
                    expected="an item id",
                    found=None if item is _MISSING else show(item),
                )
            )
        elif item not in known:
            problems.append(
                problem(file, f"{label} is of item {item}, which run {run_id} does not have", expected=show(items, 120))
            )
        else:
            by_item[item].append(sample)
    for item, samples in by_item.items():
        if len(samples) > 1:
            problems.append(
                problem(
                    file,
                    f"item {item} has {len(samples)} samples ({'; '.join(_labels(samples))}): one sample "
                    "an item, since a run spec has repetitions 1 (run the task with epochs=1)",
                )
            )
    planned = {str(i) for i in ev.dataset.sample_ids} if ev.dataset.sample_ids is not None else None
    missing = [i for i in items if i not in by_item]
    unrun = {
        i
        for i in missing
        if log.status in _UNFINISHED and (mapping.item.root != "id" or planned is None or i in planned)
    }
    if len(unrun) < len(missing):
        absent = [i for i in missing if i not in unrun]
        problems.append(
            problem(
                file,
                f"no sample of item(s) {', '.join(absent[:20])}{' …' if len(absent) > 20 else ''} of run {run_id}",
                "samples",
                expected="one sample for every item of the run spec",
                found=f"{len(log.samples or [])} samples, status {log.status}"
                + (" (a log written with log_samples=False keeps none)" if log.samples is None else ""),
            )
        )
    reader = _Reader(file, map_file, mapping, answers, finished or "", problems)
    results: list[dict[str, Any]] = []
    why = (
        "cancelled" if log.status == "cancelled" else f"stopped by an error: {(log.error and log.error.message) or '?'}"
    )
    for item in items:
        exclusion = mapping.exclude.get(item)
        if item in unrun and exclusion is not None:
            # Never tried, so no attempt to set aside: the exclusion as v1 has it.
            results.append({"item": item, "status": "excluded", "rule": exclusion.rule, "note": exclusion.note})
        elif item in unrun:
            results.append({"item": item, "status": "not_run", "note": note_text(f"the evaluation was {why}")})
        elif len(by_item.get(item, [])) == 1:
            r = reader.result(item, by_item[item][0])
            if r is not None:
                results.append(r)
    doc: dict[str, Any] = {"type": "run-results", "v": 1, "run": run_id, "finished_at": finished, "results": results}
    if evidence is not None:
        doc["evidence"] = [evidence]
        # Every earlier attempt is in the log too (Inspect keeps a retried error with its
        # sample): a reader of the chain is told which bytes hold each attempt.
        for r in results:
            for a in r.get("attempts", []):
                a["evidence"] = [evidence["name"]]
    doc["source"] = source_member(log, data)
    return doc, problems


# ---------------------------------------------------------------------------------------------
# The command


@dataclass(frozen=True)
class Imported:
    out: Path
    run: str
    finished_at: str
    counts: dict[str, int]  # results by status
    retried: int  # results with an attempt Inspect retried
    log_sha256: str
    evidence: dict[str, Any] | None  # the log's entry in the results' evidence list


def inspect_log_module() -> ModuleType:
    """`inspect_ai.log`, imported now; InspectNotInstalled if it cannot be."""
    try:
        return importlib.import_module("inspect_ai.log")
    except ImportError as e:
        raise InspectNotInstalled(str(e)) from None


def read_log(path: Path, file: str) -> tuple[EvalLog, bytes]:
    """The log at `path`, parsed by Inspect from the bytes returned with it."""
    module = inspect_log_module()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError([problem(file, "file is missing")]) from None
    except OSError as e:
        raise InputError([problem(file, f"cannot read: {e.strerror}")]) from None
    try:
        log: EvalLog = module.read_eval_log(io.BytesIO(data), format="json" if path.suffix == ".json" else "eval")
    except Exception as e:  # whatever Inspect raises for a file it cannot read
        raise InputError(
            [problem(file, f"not an Inspect log that inspect_ai can read: {type(e).__name__}: {str(e)[:300]}")],
            "cannot read the Inspect log",
        ) from None
    return log, data


def default_results_file(paths: Paths, run_id: str) -> Path:
    return paths.private / "results" / f"{run_id}.json"


def evidence_entry(
    log_path: Path, target: Path, name: str | None, file: str, problems: list[Problem]
) -> dict[str, Any] | None:
    """The log's evidence entry, without its hash, size and items (known once it is read):
    its name and its path from the folder of the results file `target`. None, with the
    problem recorded, when it cannot be one."""
    given = name is not None
    name = name if given else log_path.name
    if not is_evidence_name(name):
        if given:
            problems.append(
                problem(
                    "--evidence-name",
                    "not a name an evidence file can have: it is one path segment the certificate's folder joins",
                    expected="letters, digits, '_', '-' and inner dots, at most 128 characters, not ending in .sig, "
                    ".tlog-proof or a Python suffix",
                    found=show(name),
                )
            )
        else:
            problems.append(
                problem(
                    file,
                    f"the log's file name {show(name)} cannot be the name of an evidence file: pass "
                    "--evidence-name NAME, such as --evidence-name run.eval, or --no-evidence to leave the log out "
                    "of the results",
                    expected="letters, digits, '_', '-' and inner dots, at most 128 characters",
                )
            )
        return None
    if log_path.is_symlink():
        problems.append(
            problem(
                file,
                "is a symbolic link, and certify reads an evidence file only as a regular file (a link's target "
                "may change): give the log's own path, or --no-evidence",
            )
        )
        return None
    # Real folders on both sides: the kernel resolves a '..' after a linked folder from the
    # link's target, so a path computed from the names as given could miss the log.
    log_real = Path(os.path.realpath(log_path.parent)) / log_path.name
    try:
        rel = os.path.relpath(log_real, os.path.realpath(target.parent))
    except ValueError:  # another drive, on Windows: no relative path reaches it
        problems.append(
            problem(file, "has no path from the folder of the results file, which lists it: put them on one drive")
        )
        return None
    return {"name": name, "path": Path(rel).as_posix()}


def import_inspect_log(
    paths: Paths,
    log_path: Path,
    run_id: str,
    mapping_path: Path,
    out: Path | None = None,
    force: bool = False,
    evidence_name: str | None = None,
    evidence: bool = True,
) -> Imported:
    """Write the run-results file of registered run `run_id` from the Inspect log at `log_path`,
    as `mapping_path` says, listing the log as an evidence file named `evidence_name` (default:
    its file name) unless `evidence` is false; refuse (writing nothing) with every problem found."""
    inspect_log_module()  # before anything else: without Inspect nothing below can be done
    if not is_id(run_id):
        raise InputError([problem("--run", "malformed run id", expected="^[a-z0-9][a-z0-9_-]{0,63}$", found=run_id)])
    target = out or default_results_file(paths, run_id)
    shown_out, file, map_file = paths.show(target), paths.show(log_path), paths.show(mapping_path)
    if not force and (target.exists() or target.is_symlink()):
        raise InputError([problem(shown_out, "already exists; refusing to overwrite it (--force replaces it)")])
    if evidence_name is not None and not evidence:
        raise InputError(
            [problem("--evidence-name", "names the log's evidence file, which --no-evidence leaves out: give one")]
        )
    mapping = load_mapping(mapping_path, map_file)
    log, data = read_log(log_path, file)
    problems: list[Problem] = []
    entry = evidence_entry(log_path, target, evidence_name, file, problems) if evidence else None
    with reading(paths):
        ledger, found, _ = replay_from(paths, save=False)
        if found:
            raise InputError(found, "cannot read the program's ledger; nothing was written")
        run = ledger.runs.get(run_id)
        if run is None:
            raise InputError(
                [
                    problem(
                        "--run", f"run {run_id} is not registered; register its spec first with 'transparency register'"
                    )
                ]
            )
        if run.id in ledger.certificate_of_run:
            problems.append(
                problem(
                    "--run",
                    f"run {run_id} is already certified ({ledger.certificate_of_run[run.id]}); "
                    "its results cannot change",
                )
            )
        spec = load_spec(paths, ledger, run.id, problems)
        if spec is None:
            raise InputError(problems, f"cannot read the spec of run {run_id}; nothing was written")
        items: list[str] = spec["items"]
        m = methodology(paths, ledger, spec["methodology"]["version"], problems)
        public = ledger.gates[run.gate].public
        wanted = {} if public else {i: c.commitment for i in items if (c := ledger.commit(i)) is not None}
        answers = run_answers(paths, ledger, items, public, locate_sealed(paths, wanted) if wanted else {}, problems)
    problems += mapping_problems(mapping, run_id, items, answers, map_file)
    problems += exclusion_problems(mapping, run_id, items, len(spec["exclusion_rules"]), map_file)
    if entry is not None:
        # The whole log concerns every item: on a secret gate it is published once all are revealed.
        entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data), items=list(items))
    doc, found = results_from_log(log, data, run_id, run.at, items, answers, mapping, file, map_file, entry)
    problems += found
    if problems:
        raise InputError(problems, f"cannot import {file} as the results of run {run_id}; nothing was written")
    max_attempts = m.max_attempts if m is not None else None

    def check(d: dict[str, Any]) -> list[Problem]:
        # The log read again through the path written, as certify will read it: a path that
        # misses, or a log changed since it was read, is found now rather than at certify.
        shape = check_results_shape(d, spec, answers, max_attempts=max_attempts, not_before=run.at)
        unread: list[Problem] = read_evidence(d, target, shown_out, items)[1]
        return shape + unread

    write_results(doc, target, force, check)
    counts = Counter(r["status"] for r in doc["results"])
    # An exclusion's last attempt is the sample's final one, not a retry.
    retried = sum(1 for r in doc["results"] if len(r.get("attempts", [])) > (1 if r["status"] == "excluded" else 0))
    return Imported(
        target,
        run_id,
        doc["finished_at"],
        dict(counts),
        retried,
        doc["source"]["log_sha256"],
        entry,
    )


def results_text(doc: dict[str, Any]) -> str:
    """A results file as the project writes them (data/private/results): one space of indent."""
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def write_results(
    doc: dict[str, Any], target: Path, force: bool, check: Callable[[dict[str, Any]], list[Problem]]
) -> None:
    """Write `doc` to `target` whole or not at all (mode 0600: a results file holds a secret
    gate's outputs), after reading the written bytes back with the results reader certify uses
    and checking them with `check`. Without `force`, never over an existing file."""
    shown = str(target)
    parent = target.parent
    made = not parent.exists()
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(results_text(doc))
            f.flush()
            os.fsync(f.fileno())
        problems = [p.at(shown) for p in check(read_results(tmp, shown).doc)]
        if problems:
            raise InputError(
                problems, "the results made from the log break the rules of a results file; nothing was written"
            )
        if force:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # fails, like O_EXCL, if a file appeared meanwhile
            except FileExistsError:
                raise InputError(
                    [problem(shown, "already exists; refusing to overwrite it (--force replaces it)")]
                ) from None
        fsync_dir(parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):
                parent.rmdir()  # only if this call made it and it is still empty
        raise
    tmp.unlink(missing_ok=True)
