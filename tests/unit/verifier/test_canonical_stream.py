"""Canonical JSON in the verifier (format v1 §1): strict parsing, the number rules, and the
streaming reader of large documents (`iter_canonical_array`), checked against `rfc8785`."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.verifier import (
    MAX_SAFE_INTEGER,
    FormatError,
    canonical_bytes,
    iter_canonical_array,
    loads_strict,
    number_rule_problems,
    parse_canonical,
)

WINDOWS = [1, 7, 64, None]  # None: the default window
WINDOW_IDS = ["window-1", "window-7", "window-64", "window-default"]


def stream(data: bytes, key: str, window: int | None) -> tuple[list[tuple[Any, bytes]], dict[str, Any]]:
    """Run the iterator to its end; return (elements, rest)."""
    elements, rest = (
        iter_canonical_array(data, key) if window is None else iter_canonical_array(data, key, window=window)
    )
    got = list(elements)
    return got, rest


def expected_stream(data: bytes, key: str) -> tuple[list[tuple[Any, bytes]], dict[str, Any]]:
    doc = json.loads(data)
    return [(e, rfc8785.dumps(e)) for e in doc[key]], {k: val for k, val in doc.items() if k != key}


def same(a: Any, b: Any) -> bool:
    """Equality that tells 1 from true and 1 from 1.0 (format v1 §1 equality)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


# ---------------------------------------------------------------------------------------------
# Documents the streaming reader must read exactly as json.loads does


KOREAN = "계좌번호는 110-482-339201입니다. 환불 요청 건 확인 부탁드립니다."
EMOJI = "👍🏽 배송 완료 🎉📦 — ok"
CONTROLS = 'tab\there\nnew line "quoted" back\\slash \u0000\u0001\u001f\u007f \u2028\u2029 \b\f\r'


def leaf(i: int, note: str) -> dict[str, Any]:
    return {
        "type": "reveal",
        "v": 1,
        "id": f"b-{i:04d}",
        "reason": "retired",
        "note": note,
        "at": "2026-02-01T00:00:00Z",
    }


BIG = leaf(99, (KOREAN + EMOJI + CONTROLS) * 40)  # several kilobytes: larger than every small window

DOCS = {
    "ledger-korean-emoji-controls": {
        "type": "ledger-entries",
        "v": 1,
        "origin": "transparency.example.org/시험",
        "tree_size": 5,
        "entries": [leaf(1, KOREAN), leaf(2, EMOJI), leaf(3, CONTROLS), BIG, leaf(4, "")],
    },
    "only-the-list": {"entries": [leaf(1, "a"), leaf(2, "b")]},
    "empty-list": {"entries": [], "origin": "x", "tree_size": 0},
    "empty-list-alone": {"entries": []},
    "one-big-element": {"entries": [BIG], "z": {"nested": [KOREAN, {"k": EMOJI}]}},
    "mixed-non-number-elements": {
        "entries": [
            "문자열",
            EMOJI,
            True,
            False,
            None,
            [],
            {},
            [1, [2, "三"], {"a": None}],
            {"k": -5},
            "\u0000",
            "",
            [-(2**53 - 1), 2**53 - 1],
        ],
        "tail": "끝",
    },
    "commitment-list": {
        "type": "commitment-list",
        "v": 1,
        "origin": "o",
        "tree_size": 3,
        "commitments": [
            {
                "id": f"b-{i:04d}",
                "gate": "b",
                "commitment": f"{i:064x}",
                "index": i,
                "at": "2026-01-12T10:00:00Z",
                "status": "sealed",
            }
            for i in range(3)
        ],
    },
}


def _key_of(name: str) -> str:
    return "commitments" if name == "commitment-list" else "entries"


@pytest.mark.parametrize("window", WINDOWS, ids=WINDOW_IDS)
@pytest.mark.parametrize("name", list(DOCS))
def test_stream_matches_json_loads(name: str, window: int | None) -> None:
    data = rfc8785.dumps(DOCS[name])
    key = _key_of(name)
    got, rest = stream(data, key, window)
    want, want_rest = expected_stream(data, key)
    assert [g[1] for g in got] == [w[1] for w in want], "each element's canonical bytes"
    assert all(same(g[0], w[0]) for g, w in zip(got, want, strict=True)), "each element's value"
    assert same(rest, want_rest), f"rest: {rest!r} != {want_rest!r}"


def test_big_element_is_larger_than_the_windows() -> None:
    assert len(rfc8785.dumps(BIG)) > 64 * 16, "the big element must outgrow several window enlargements"
    assert rfc8785.dumps(BIG).count(b"\\u0000") > 0, "and hold escaped control characters"


def test_rest_is_filled_only_when_exhausted() -> None:
    data = rfc8785.dumps(DOCS["ledger-korean-emoji-controls"])
    elements, rest = iter_canonical_array(data, "entries", window=7)
    next(elements)
    assert rest == {}
    list(elements)
    assert rest == {"origin": "transparency.example.org/시험", "tree_size": 5, "type": "ledger-entries", "v": 1}


@pytest.mark.parametrize("window", WINDOWS, ids=WINDOW_IDS)
def test_bare_integer_elements(window: int | None) -> None:
    """A canonical list of bare numbers is a canonical document like any other: a window that
    cuts a number must not decode its prefix as a whole element."""
    doc = {"entries": [123, 4567, -89, 0, 2**53 - 1, "x", 10], "v": 1}
    data = rfc8785.dumps(doc)
    got, rest = stream(data, "entries", window)
    assert [g[0] for g in got] == doc["entries"]
    assert rest == {"v": 1}


# ---------------------------------------------------------------------------------------------
# What the streaming reader must refuse


GOOD = rfc8785.dumps({"entries": [leaf(1, KOREAN), leaf(2, EMOJI)], "origin": "o", "tree_size": 2})
E1 = rfc8785.dumps(leaf(1, KOREAN))
E2 = rfc8785.dumps(leaf(2, EMOJI))

BAD_STREAMS = {
    "space-after-comma": b'{"entries":[' + E1 + b", " + E2 + b"]}",
    "space-before-comma": b'{"entries":[' + E1 + b" ," + E2 + b"]}",
    "newline-between-elements": b'{"entries":[' + E1 + b",\n" + E2 + b"]}",
    "space-after-bracket": b'{"entries":[ ' + E1 + b"]}",
    "space-before-close": b'{"entries":[' + E1 + b" ]}",
    "space-inside-element": b'{"entries":[{"a": 1}]}',
    "unsorted-keys-in-element": b'{"entries":[' + E1 + b',{"v":1,"type":"gate"}]}',
    "float-in-element": b'{"entries":[{"a":1.5}]}',
    "float-zero-fraction-in-element": b'{"entries":[{"a":1.0}]}',
    "exponent-in-element": b'{"entries":[{"a":1e3}]}',
    "huge-integer-in-element": b'{"entries":[{"a":9007199254740992}]}',
    "negative-zero-in-element": b'{"entries":[{"a":-0}]}',
    "duplicate-key-in-element": b'{"entries":[{"a":1,"a":1}]}',
    "lone-surrogate-in-element": b'{"entries":["\\ud800"]}',
    "invalid-utf8-in-element": b'{"entries":["\xff"]}',
    "stray-continuation-bytes": b'{"entries":["\x80\x80\x80\x80\x80\x80\x80\x80\x80"]}',
    "non-bmp-key-in-element": '{"entries":[{"😀":1}]}'.encode(),
    "nan-element": b'{"entries":[NaN]}',
    "wrong-prefix-key": GOOD.replace(b'{"entries"', b'{"entrees"', 1),
    "wrong-prefix-space": b" " + GOOD,
    "wrong-prefix-other-member-first": b'{"a":1,"entries":[]}',
    "wrong-prefix-not-a-list": b'{"entries":{}}',
    "truncated-mid-element": GOOD[: len(b'{"entries":[') + len(E1) // 2],
    "truncated-after-element": GOOD[: len(b'{"entries":[') + len(E1)],
    "truncated-after-list": GOOD[: GOOD.index(b"],") + 1],
    "truncated-last-byte": GOOD[:-1],
    "trailing-garbage": GOOD + b"x",
    "trailing-newline": GOOD + b"\n",
    "trailing-second-object": GOOD + b"{}",
    "garbage-after-list": GOOD.replace(b'],"origin"', b'];"origin"'),
    "member-after-list-sorts-before": b'{"entries":[' + E1 + b'],"a":1}',
    "member-after-list-same-key": b'{"entries":[],"entries":[]}',
    "members-after-list-unsorted": b'{"entries":[],"z":1,"y":2}',
    "member-after-list-not-canonical": b'{"entries":[],"z": 1}',
}


@pytest.mark.parametrize("window", WINDOWS, ids=WINDOW_IDS)
@pytest.mark.parametrize("name", list(BAD_STREAMS))
def test_stream_refuses(name: str, window: int | None) -> None:
    data = BAD_STREAMS[name]
    with pytest.raises(FormatError):
        stream(data, "entries", window)


def test_good_stream_is_accepted() -> None:
    """The refusals above are of their mutation, not of the document they start from."""
    got, rest = stream(GOOD, "entries", 7)
    assert len(got) == 2 and rest == {"origin": "o", "tree_size": 2}


def test_wrong_prefix_raises_at_once() -> None:
    with pytest.raises(FormatError, match="does not start with"):
        iter_canonical_array(GOOD, "commitments")


def test_member_order_message() -> None:
    with pytest.raises(FormatError, match="canonical order"):
        stream(BAD_STREAMS["member-after-list-sorts-before"], "entries", None)


# ---------------------------------------------------------------------------------------------
# parse_canonical, loads_strict, number_rule_problems


@pytest.mark.parametrize(
    "data",
    [
        b'"\\ud800"',
        b'"\\udfff"',
        b'"a\\ud83d"',
        b'"\\ude00\\ud83d"',
        b'{"\\udc00":1}',
        b'[["\\ud800x"]]',
    ],
    ids=["high-alone", "low-alone", "high-at-end", "reversed-pair", "in-key", "nested"],
)
def test_lone_surrogate_escapes_rejected(data: bytes) -> None:
    with pytest.raises(FormatError, match="surrogate"):
        loads_strict(data)
    with pytest.raises(FormatError, match="surrogate"):
        parse_canonical(data)


def test_surrogate_pair_escape_is_a_character_but_not_canonical() -> None:
    assert loads_strict(b'"\\ud83d\\ude00"') == "😀"
    with pytest.raises(FormatError, match="canonical"):
        parse_canonical(b'"\\ud83d\\ude00"')
    assert parse_canonical('"😀"'.encode()) == "😀"


@pytest.mark.parametrize(
    "data",
    [b'"\xff"', b'"\xc0\xaf"', b'"\xed\xa0\x80"', b'"\xe2\x82"', b'"\x80"', b'{"a":"\xf5\x80\x80\x80"}'],
    ids=["ff", "overlong", "encoded-surrogate", "truncated-sequence", "lone-continuation", "beyond-u10ffff"],
)
def test_invalid_utf8_rejected(data: bytes) -> None:
    with pytest.raises(FormatError, match="UTF-8"):
        loads_strict(data)
    with pytest.raises(FormatError, match="UTF-8"):
        parse_canonical(data)


@pytest.mark.parametrize("n", [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0, 1, -1])
def test_safe_integers_accepted(n: int) -> None:
    assert MAX_SAFE_INTEGER == 2**53 - 1
    assert number_rule_problems(n) == []
    assert number_rule_problems({"a": [n]}) == []
    assert parse_canonical(str(n).encode()) == n
    assert parse_canonical(b'{"a":[' + str(n).encode() + b"]}") == {"a": [n]}


@pytest.mark.parametrize("n", [2**53, -(2**53), 2**64, -(2**63)])
def test_unsafe_integers_rejected(n: int) -> None:
    [p] = number_rule_problems({"a": [0, n]})
    assert "2^53" in p.message and p.where == "a[1]" and p.found == str(n)
    with pytest.raises(FormatError, match="2\\^53"):
        parse_canonical(str(n).encode())


def test_booleans_are_not_numbers() -> None:
    assert number_rule_problems([True, False, None, "1.5"]) == []


@pytest.mark.parametrize(
    "data", [b"1.5", b"1.0", b"1e3", b"1E3", b"-0.0", b'{"a":0.1}', b"NaN", b"Infinity", b"-Infinity"]
)
def test_fractions_and_constants_rejected(data: bytes) -> None:
    with pytest.raises(FormatError):
        loads_strict(data)


def test_float_value_is_a_number_rule_problem() -> None:
    [p] = number_rule_problems({"x": {"y": 0.5}})
    assert "non-integer" in p.message and p.where == "x.y"


def test_keys_outside_bmp() -> None:
    [p] = number_rule_problems({"ok": {"😀": 1}})
    assert "Basic Multilingual Plane" in p.message and p.where == "ok"
    assert number_rule_problems({"a": "😀", "계좌": ["😀"], "\uffff": 1}) == [], "non-BMP values and BMP keys are fine"
    with pytest.raises(FormatError, match="Basic Multilingual Plane"):
        parse_canonical('{"😀":1}'.encode())


def test_non_bmp_key_is_where_jcs_and_python_disagree() -> None:
    """JCS sorts keys by UTF-16 code units, Python by code points: they differ only for keys
    beyond the BMP, which is why format v1 §1 forbids them."""
    value = {"\ue000": 1, "😀": 2}
    assert rfc8785.dumps(value) != canonical_bytes(value)
    with pytest.raises(FormatError):
        parse_canonical(rfc8785.dumps(value))


@pytest.mark.parametrize(
    "data",
    [b'{"a":1,"a":2}', b'{"a":{"b":1,"b":1}}', b'[{"x":1,"x":1}]'],
    ids=["top", "nested", "in-list"],
)
def test_duplicate_keys_rejected(data: bytes) -> None:
    with pytest.raises(FormatError, match="duplicate key"):
        loads_strict(data)
    with pytest.raises(FormatError, match="duplicate key"):
        parse_canonical(data)


def test_duplicate_key_in_stream_element_is_named() -> None:
    with pytest.raises(FormatError, match="duplicate key"):
        stream(b'{"entries":[{"a":1},{"b":1,"b":1}]}', "entries", 7)


@pytest.mark.parametrize(
    "data",
    [b'{"b":1,"a":2}', b'{"a": 1}', b'{"a":1}\n', b' {"a":1}', b"-0", b'"\\u00e9"', b'"\\/"', b'"\\u001F"', b"[1,2 ]"],
    ids=[
        "unsorted",
        "space",
        "trailing-newline",
        "leading-space",
        "negative-zero",
        "escaped-non-ascii",
        "escaped-slash",
        "uppercase-hex-escape",
        "space-in-list",
    ],
)
def test_non_canonical_rejected(data: bytes) -> None:
    loads_strict(data)  # valid JSON ...
    with pytest.raises(FormatError, match="canonical"):
        parse_canonical(data)  # ... but not in canonical form


def test_canonical_accepted() -> None:
    data = '{"a":"é\\u001f\\n","b":[true,false,null,-1],"한":"😀"}'.encode()
    assert parse_canonical(data) == {"a": "é\u001f\n", "b": [True, False, None, -1], "한": "😀"}


# ---------------------------------------------------------------------------------------------
# Properties


SAFE_INT = st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)
BMP_KEY = st.text(alphabet=st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=8)
SCALAR = st.none() | st.booleans() | SAFE_INT | TEXT
JSON_VALUE = st.recursive(
    SCALAR,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(BMP_KEY, children, max_size=5),
    max_leaves=25,
)
PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@PROPERTY_SETTINGS
@given(JSON_VALUE)
def test_canonical_round_trip(value: Any) -> None:
    data = canonical_bytes(value)
    assert data == rfc8785.dumps(value), "the stdlib serialisation must equal RFC 8785 under format v1 §1's rules"
    assert same(parse_canonical(data), value)
    assert number_rule_problems(value) == []


# Top-level elements that are not bare numbers (those are covered by test_bare_integer_elements).
ELEMENT = JSON_VALUE.filter(lambda x: isinstance(x, (dict, list, str, bool)) or x is None)


@PROPERTY_SETTINGS
@given(
    elements=st.lists(ELEMENT, max_size=8),
    others=st.dictionaries(st.sampled_from(["origin", "tree_size", "type", "v", "zz"]), JSON_VALUE, max_size=4),
    window=st.sampled_from([1, 2, 7, 64, 1 << 20]),
)
def test_stream_round_trip(elements: list[Any], others: dict[str, Any], window: int) -> None:
    doc = {"entries": elements, **others}
    data = rfc8785.dumps(doc)
    got, rest = stream(data, "entries", window)
    assert [raw for _, raw in got] == [rfc8785.dumps(e) for e in elements]
    assert all(same(v, e) for (v, _), e in zip(got, elements, strict=True))
    assert same(rest, dict(sorted(others.items())))
