"""The libyaml-backed YAML loader reads and refuses exactly as the pure-Python one.

Only scanning and parsing are libyaml's; composing (its limits), resolving and constructing
are the same code. A corpus of tricky inputs gives both the same values, or both a refusal:
the same message and place for every rule of strictness, a line for every syntax error.
"""

from __future__ import annotations

import pytest

from generator.core.generator_errors import InputError
from generator.core.strict_input import LOADERS, MAX_DEPTH, parse_yaml

CORPUS = [
    "items: []\n",
    "a: yes\nb: no\nc: on\nd: off\ne: y\n",  # YAML 1.1 booleans stay strings
    "t: 12:30\nd: 2026-03-04\ns: 2026-03-04T10:00:00Z\n",  # sexagesimals and dates stay strings
    "a: true\nb: False\nc: null\nd: ~\ne:\nf: 0\ng: -7\nh: +3\n",
    "a: 0x1F\nb: 0o17\nc: 1_000\nd: .5\ne: 1e3\nf: .inf\ng: .nan\n",
    "a: 012\n",  # leading zero: refused
    "a: 1\na: 2\n",  # repeated key
    "a: 1\nb:\n  c: 1\n  c: 2\n",
    "? [1, 2]\n: x\n",  # a key that is not a string
    "1: x\n",
    "a: &x 1\nb: *x\n",  # alias
    "base: &b {x: 1}\nc:\n  <<: *b\n",  # merge
    "a: !!binary aGk=\n",
    "a: !!set {x}\n",
    "a: !!omap [{x: 1}]\n",
    "a: !!timestamp 2026-03-04\n",
    "a: !!python/object:os.system ls\n",
    "a: 12345678901234567890\n",  # beyond 2^63
    "a: 9007199254740991\n",
    "a: 'it''s'\nb: \"\\u00e9\\t\"\nc: |\n  two\n  lines\nd: >-\n  folded\n  text\n",
    "a: [1, 2\n",  # syntax errors
    "a: {b: 1\n",
    "a: b: c\n",
    "- a\nb: 1\n",
    "a:\n  - x\n - y\n",
    "\t- a\n",
    "a: 'unterminated\n",
    "a: \x07\n",  # a control character
    "a: b\n---\nc: d\n",  # two documents
    "",
    "# only a comment\n",
    "a: café ☕ 한국어\n",
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",  # too deep
    "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n",
    "items:\n" + "".join(f"  - id: i-{n}\n    gate: b\n" for n in range(50)),
]


def outcome(text: str, loader: type) -> tuple[str, object]:
    try:
        return "value", parse_yaml(text, "f.yaml", loader)
    except InputError as e:
        return "refused", [(p.file, p.message, p.where) for p in e.problems]


@pytest.mark.skipif(len(LOADERS) < 2, reason="PyYAML without libyaml: only the Python loader")
@pytest.mark.parametrize("text", CORPUS, ids=[repr(t[:24]) for t in CORPUS])
def test_both_loaders_give_the_same_value_or_refuse_alike(text: str) -> None:
    fast, slow = (outcome(text, loader) for loader in LOADERS)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "value":
        assert fast == slow
        return
    [(_, c_message, c_where)], [(_, py_message, py_where)] = fast[1], slow[1]  # type: ignore[misc]
    syntax = c_message != py_message and c_message.startswith("malformed YAML")
    if not syntax:
        assert (c_message, c_where) == (py_message, py_where)
    else:  # libyaml words its syntax errors its own way; both place them
        assert c_where.startswith("line ") or "position" in c_message, fast


def test_the_fast_loader_is_the_default_when_libyaml_is_there() -> None:
    import yaml

    assert LOADERS[0].__name__ == ("_CStrictLoader" if yaml.__with_libyaml__ else "_StrictLoader")
    assert parse_yaml("a: yes\n", "f.yaml") == {"a": "yes"}


@pytest.mark.parametrize("loader", LOADERS, ids=lambda loader: loader.__name__)
def test_a_syntax_error_keeps_what_was_open_and_where_it_began(loader: type) -> None:
    """A quote never closed is found at the end of the file: the message also says where it opened."""
    text = 'items:\n- id: a-001\n  gate: a\n  prompt: "Extract the account\n  answer: {}\n'
    with pytest.raises(InputError) as e:
        parse_yaml(text, "syntax.yaml", loader)
    [p] = e.value.problems
    assert p.where == "line 6, column 1"
    assert p.message == (
        "malformed YAML: found unexpected end of stream, while scanning a quoted scalar begun at line 4, column 11"
    )
