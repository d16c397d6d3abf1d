"""Values read out of one Inspect sample: times, notes and cancellations, a source looked up in the
sample (its completion parsed as a JSON object, its metadata, store or scores), and Inspect's
values turned into plain JSON ones."""

from __future__ import annotations

import datetime as _dt
import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from generator.importers.inspect.inspect_mapping import Source
from generator.verifier import (
    MAX_SAFE_INTEGER,
)

if TYPE_CHECKING:  # inspect_ai ships its types (py.typed); at run time it is imported only to read a log
    from inspect_ai.log import EvalSample


# A note is the operator's (here the harness's) words, shown on pages: one line, not a traceback.
NOTE_LIMIT = 500
# How Inspect records a sample cancelled under it as an error (inspect_ai._util.error, not public).
_CANCELLED_PREFIXES = ("CancelledError(", "Cancelled(")


MISSING = object()


def time_text(value: str | _dt.datetime | None) -> str | None:
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


def sample_labels(samples: list[EvalSample]) -> list[str]:
    return [sample_label(s) for s in sorted(samples, key=lambda s: (str(s.id), s.epoch))]


def _descend(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def lookup(source: Source, sample: EvalSample, completion: dict[str, Any] | None) -> Any:
    """The value at `source` in the sample, or MISSING."""
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
        return MISSING
    if source.part == "answer":
        return MISSING if score.answer is None else score.answer
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


def value_kind(value: Any) -> str:
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
