"""The strict JSON reader's shortcuts decide as the slow walks do.

`loads_strict` walks every string for a lone surrogate only when the text holds an escape that
could make one, and `_depth` measures nesting on the text's brackets: both must refuse and
accept exactly what the walk over every parsed value would.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from generator.core.strict_input import MAX_DEPTH, _depth
from generator.verifier.core.canonical import FormatError, check_no_surrogates, loads_strict

# Strings made of the characters and escapes that matter: surrogate escapes of both cases, paired
# and lone, an escaped backslash before "ud800", and ordinary text.
PIECES = ["a", "é", "\\ud800", "\\uDFFF", "\\ud83d\\ude00", "\\\\ud800", "\\u00e9", "\\n", "{", "]"]
json_strings = st.lists(st.sampled_from(PIECES), max_size=6).map(lambda parts: '"' + "".join(parts) + '"')
documents = st.recursive(
    json_strings | st.integers(-5, 5).map(str),
    lambda inner: (
        st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
        | st.lists(st.tuples(json_strings, inner), max_size=3).map(
            lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in dict(kv).items()) + "}"
        )
    ),
    max_leaves=12,
)


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Keys are compared once unescaped, as the reader does: json.loads alone keeps the last of two
    # equal keys, and an oracle that accepts what the reader rightly refuses fails by chance.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise FormatError(f"duplicate key {key!r}")
        out[key] = value
    return out


def walked(text: str) -> Any:
    """The reading without the shortcut: parse (refusing duplicate keys), then walk every string."""
    value = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    check_no_surrogates(value)
    return value


@settings(max_examples=400, deadline=None)
@given(documents)
# Two keys that differ as text but are equal once unescaped: found by chance once, kept for good.
@example('{"éaé":"","éa\\u00e9":""}')
def test_the_surrogate_shortcut_decides_as_the_walk(text: str) -> None:
    try:
        expected: Any = walked(text)
    except FormatError:
        expected = FormatError
    try:
        got: Any = loads_strict(text.encode("utf-8"))
    except FormatError:
        got = FormatError
    assert got == expected


def _depth_walk(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth_walk(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth_walk(v) for v in value), default=0)
    return 0


nested = st.recursive(
    st.integers() | st.text(alphabet='ab"\\[]{}é\n', max_size=4) | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(nested, st.booleans())
def test_depth_on_the_text_is_the_depth_of_the_value(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert _depth(text) == min(_depth_walk(value), MAX_DEPTH + 1)


def test_depth_on_the_text_sees_through_strings_and_escapes() -> None:
    deep: Any = 0
    for _ in range(MAX_DEPTH + 50):
        deep = [deep]
    assert _depth(json.dumps(deep).encode()) == MAX_DEPTH + 1
    assert _depth(b"[[],[]]") == 2 and _depth(b"{}") == 1 and _depth(b"7") == 0
    text = rb'["[[[", {"k\\": ["\"]]"]}]'
    assert json.loads(text) == ["[[[", {"k\\": ['"]]']}]
    assert _depth(text) == 3
    assert _depth(rb'"\\"') == 0
