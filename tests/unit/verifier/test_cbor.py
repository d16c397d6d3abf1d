"""The verifier's CBOR against the examples of RFC 8949, Appendix A (those of the types it holds), against
an independent implementation (cbor2) on values drawn by Hypothesis, and its refusals: every input that
is not the one deterministic encoding of what it holds."""

from __future__ import annotations

from typing import Any

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.verifier.core.errors import FormatError
from generator.verifier.exports.cbor import Tag, dumps, loads

# RFC 8949, Appendix A: (value, hex of its encoding).
APPENDIX_A: list[tuple[Any, str]] = [
    (0, "00"),
    (1, "01"),
    (10, "0a"),
    (23, "17"),
    (24, "1818"),
    (25, "1819"),
    (100, "1864"),
    (1000, "1903e8"),
    (1000000, "1a000f4240"),
    (1000000000000, "1b000000e8d4a51000"),
    (18446744073709551615, "1bffffffffffffffff"),
    (-1, "20"),
    (-10, "29"),
    (-100, "3863"),
    (-1000, "3903e7"),
    (False, "f4"),
    (True, "f5"),
    (None, "f6"),
    (b"", "40"),
    (bytes.fromhex("01020304"), "4401020304"),
    ("", "60"),
    ("a", "6161"),
    ("IETF", "6449455446"),
    ('"\\', "62225c"),
    ("\u00fc", "62c3bc"),
    ("\u6c34", "63e6b0b4"),
    ("\U00010151", "64f0908591"),
    ([], "80"),
    ([1, 2, 3], "83010203"),
    ([1, [2, 3], [4, 5]], "8301820203820405"),
    (list(range(1, 26)), "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
    ({}, "a0"),
    ({1: 2, 3: 4}, "a201020304"),
    ({"a": 1, "b": [2, 3]}, "a26161016162820203"),
    (["a", {"b": "c"}], "826161a161626163"),
    ({"a": "A", "b": "B", "c": "C", "d": "D", "e": "E"}, "a56161614161626142616361436164614461656145"),
    (Tag(1, 1363896240), "c11a514b67b0"),
    (Tag(23, bytes.fromhex("01020304")), "d74401020304"),
]


@pytest.mark.parametrize(("value", "hexed"), APPENDIX_A)
def test_appendix_a(value: Any, hexed: str) -> None:
    assert dumps(value).hex() == hexed
    assert loads(bytes.fromhex(hexed)) == value


values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64 - 1) | st.binary(max_size=40) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.integers(-1000, 1000) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)


@given(values)
def test_the_same_bytes_as_cbor2_s_deterministic_encoding(value: Any) -> None:
    """cbor2 sorts map keys by length first (RFC 7049's canonical order) where RFC 8949 sorts them
    bytewise; the two agree on every key set of one encoded length, which is why keys here are
    compared after both decoders read the bytes back."""
    ours = dumps(value)
    assert cbor2.loads(ours) == value
    assert loads(ours) == value
    assert len(cbor2.dumps(value, canonical=True)) == len(ours)


@pytest.mark.parametrize(
    ("hexed", "why"),
    [
        ("1800", "longer than its value needs"),  # 0 in two bytes
        ("190017", "longer than its value needs"),
        ("5f4101ff", "indefinite length"),
        ("a20102", "ends inside an item"),
        ("a201020103", "given twice"),
        ("a203040102", "deterministic encoding"),  # keys out of order
        ("0000", "bytes after"),
        ("f93c00", "float"),
        ("62ff00", "not UTF-8"),
        ("a1f600", "not an integer or a text string"),
    ],
)
def test_refusals(hexed: str, why: str) -> None:
    with pytest.raises(FormatError, match=why):
        loads(bytes.fromhex(hexed))


def test_nesting_is_bounded() -> None:
    with pytest.raises(FormatError, match="nested too deeply"):
        loads(bytes.fromhex("81" * 40 + "00"))
