"""Values read out of a harness's output, whatever the harness: times in the project's form, a
harness's message as a note, a member found by its path, a model's answer parsed as one JSON object,
and a harness's numbers as the results file holds them."""

from __future__ import annotations

import datetime as _dt
import json
import re
import unicodedata
from typing import Any

from generator.verifier import (
    MAX_SAFE_INTEGER,
)

# A note is the operator's (here the harness's) words, shown on pages: one line, not a traceback.
NOTE_LIMIT = 500

MISSING = object()


def time_text(value: Any) -> str | None:
    """A time of a harness in the project's form (format v1 §1): UTC, whole seconds (rounded down,
    so never later than the time the harness recorded), or None when there is none or it is not a
    time. A number is seconds since the epoch; a time without a zone is read as UTC."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            value = _dt.datetime.fromtimestamp(value, _dt.UTC)
        elif isinstance(value, str):
            value = _dt.datetime.fromisoformat(value)
        if not isinstance(value, _dt.datetime):
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        text: str = value.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return text
    except (OverflowError, OSError, ValueError):
        return None


def note_text(message: str | None) -> str:
    """A harness's message as a note: one line of printable text, at most NOTE_LIMIT characters."""
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in message or "")
    text = re.sub(r"\s+", " ", text).strip() or "no message"
    return text if len(text) <= NOTE_LIMIT else text[: NOTE_LIMIT - 1] + "…"


def descend(value: Any, path: tuple[str, ...]) -> Any:
    """The member at `path` below `value`, or MISSING."""
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def unique_pairs(kv: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook that refuses a key given twice, which would let two readers of one
    file see two documents."""
    out: dict[str, Any] = {}
    for k, v in kv:
        if k in out:
            raise ValueError(f"key {k!r} is given twice")
        out[k] = v
    return out


def loads_unique(text: str) -> Any:
    """A harness's JSON as it wrote it (its floats and NaN too), a key given twice refused."""
    return json.loads(text, object_pairs_hook=unique_pairs)


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A model's answer read as a JSON object (no duplicate key, no NaN), or why it is not one."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        value = json.loads(text, object_pairs_hook=unique_pairs, parse_constant=constant)
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
    """A harness's score value as the results file holds it: a float (and an integer past
    ±(2^53−1)) as its Python text, the text the harness wrote; the rest as it is."""
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
    (Python's repr, the text a harness writing JSON wrote). None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return None
