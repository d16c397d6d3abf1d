"""RFC 8785 (JCS) vectors (tests/vectors/rfc8785_jcs.json).

Every case is checked against the rfc8785 package; cases that fit the
project's number rules (integers within +/-(2^53-1), no fractions or
exponents, object keys in the BMP) are also checked against
generator.verify.canonical_bytes. generator.verify.loads_strict must reject
every malformed input with FormatError.
"""

import json
import math
import pathlib
import struct

import pytest
import rfc8785

ROOT = pathlib.Path(__file__).resolve().parents[2]

VECTORS = json.loads((ROOT / "tests" / "vectors" / "rfc8785_jcs.json").read_text(encoding="utf-8"))
CASES = VECTORS["cases"]
NUMBERS = VECTORS["numbers"]
NON_CANONICAL = VECTORS["non_canonical"]
MALFORMED = VECTORS["malformed"]
MAX_SAFE = 2**53 - 1


def _ids(cases):
    return [c["description"] for c in cases]


def _eligible(value):
    """The project's number rules (see module docstring)."""
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return -MAX_SAFE <= value <= MAX_SAFE
    if isinstance(value, float):
        return False
    if isinstance(value, list):
        return all(_eligible(x) for x in value)
    if isinstance(value, dict):
        return all(all(ord(c) <= 0xFFFF for c in k) and _eligible(x) for k, x in value.items())
    raise TypeError(type(value))


def _data(case):
    return bytes.fromhex(case["input_hex"]) if "input_hex" in case else case["input"].encode("utf-8")


@pytest.fixture
def verify(verifier):
    return verifier


# ---------------------------------------------------------------- reference implementation (rfc8785 package)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_rfc8785_package(case):
    obj = json.loads(case["input"])
    assert rfc8785.dumps(obj) == case["canonical"].encode("utf-8")
    if "canonical_hex" in case:
        assert bytes.fromhex(case["canonical_hex"]) == case["canonical"].encode("utf-8")
    assert _eligible(obj) == case["project_eligible"]


@pytest.mark.parametrize("case", NUMBERS, ids=_ids(NUMBERS))
def test_rfc8785_numbers(case):
    value = struct.unpack(">d", bytes.fromhex(case["ieee754_hex"]))[0]
    if case["canonical"] is None:
        assert math.isnan(value) or math.isinf(value)
        with pytest.raises(rfc8785.CanonicalizationError):
            rfc8785.dumps(value)
    else:
        assert rfc8785.dumps(value) == case["canonical"].encode("ascii")


@pytest.mark.parametrize("case", NON_CANONICAL, ids=_ids(NON_CANONICAL))
def test_rfc8785_non_canonical(case):
    out = rfc8785.dumps(json.loads(case["input"]))
    assert out != case["input"].encode("utf-8")
    assert out == case["canonical"].encode("utf-8")


# ---------------------------------------------------------------- project implementation

ELIGIBLE = [c for c in CASES if c["project_eligible"]]


@pytest.mark.parametrize("case", ELIGIBLE, ids=_ids(ELIGIBLE))
def test_project_canonical_bytes(verify, case):
    want = case["canonical"].encode("utf-8")
    assert verify.canonical_bytes(json.loads(case["input"])) == want
    assert verify.canonical_bytes(verify.loads_strict(case["input"].encode("utf-8"))) == want
    # canonical output is a fixed point
    assert verify.canonical_bytes(verify.loads_strict(want)) == want


@pytest.mark.parametrize("case", MALFORMED, ids=_ids(MALFORMED))
def test_project_loads_strict_rejects(verify, case):
    with pytest.raises(verify.FormatError) as e:
        verify.loads_strict(_data(case))
    assert f"{type(e.value).__name__}: {e.value}" == case["error"]


@pytest.mark.parametrize("case", NON_CANONICAL, ids=_ids(NON_CANONICAL))
def test_project_refuses_non_canonical_bytes(verify, case):
    """What a verifier does with published bytes: refuse them, saying why."""
    with pytest.raises(verify.FormatError) as e:
        verify.parse_canonical(case["input"].encode("utf-8"))
    assert f"{type(e.value).__name__}: {e.value}" == case["error"]


@pytest.mark.parametrize("case", NON_CANONICAL, ids=_ids(NON_CANONICAL))
def test_project_detects_non_canonical(verify, case):
    data = case["input"].encode("utf-8")
    if case["number_rules_violation"]:
        # Fractions/exponents: the project's number rules may refuse these with
        # FormatError (when parsing or serializing); otherwise they must not
        # come back unchanged.
        try:
            out = verify.canonical_bytes(verify.loads_strict(data))
        except verify.FormatError:
            return
        assert out != data
        return
    parsed = verify.loads_strict(data)
    out = verify.canonical_bytes(parsed)
    assert out != data
    assert out == case["canonical"].encode("utf-8")
