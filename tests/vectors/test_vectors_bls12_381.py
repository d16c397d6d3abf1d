"""Published vectors for BLS12-381 hashing and drand's quicknet beacon, run through the verifier's
generator/verifier/crypto modules.

tests/vectors/bls12_381_rfc9380.json holds RFC 9380's expand_message_xmd(SHA-256) vectors
(Appendix K.1 and K.2) and its BLS12381G1_XMD:SHA-256_SSWU_RO_ vectors (Appendix J.9.1), every
intermediate value included. tests/vectors/drand_quicknet.json holds real quicknet rounds and the
chain infos of quicknet and three other drand chains, each with the repository it was copied from:
the rounds must verify, and a changed round, a changed signature, another round's signature or
another chain's key must not.
"""

import hashlib
import json
import pathlib
from typing import Any

import pytest

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.bls12_381 import BLS12_381_R
from generator.verifier.crypto.drand import (
    DRAND_DST_G1,
    DRAND_QUICKNET_CHAIN_HASH,
    DRAND_QUICKNET_GENESIS_TIME,
    DRAND_QUICKNET_GROUP_HASH,
    DRAND_QUICKNET_PERIOD,
    DRAND_QUICKNET_PUBLIC_KEY,
    drand_chain_hash,
    drand_randomness,
    drand_round_message,
    drand_round_time,
    verify_drand_round,
)
from generator.verifier.crypto.hash_to_g1 import (
    expand_message_xmd,
    g1_mul,
    g1_on_curve,
    hash_to_field_fp,
    hash_to_g1,
    map_to_curve_g1,
)
from tests.support.bls import py_hash_to_g1

HERE = pathlib.Path(__file__).resolve().parent
RFC = json.loads((HERE / "bls12_381_rfc9380.json").read_text(encoding="utf-8"))
DRAND = json.loads((HERE / "drand_quicknet.json").read_text(encoding="utf-8"))
XMD: list[dict[str, Any]] = RFC["expand_message_xmd_sha256"]
H2C: dict[str, Any] = RFC["hash_to_g1"]
CHAINS: list[dict[str, Any]] = DRAND["chains"]
ROUNDS: list[dict[str, Any]] = DRAND["quicknet_rounds"]
OTHER_ROUNDS: list[dict[str, Any]] = DRAND["other_chain_rounds"]


def point(value: dict[str, str]) -> tuple[int, int]:
    return int(value["x"], 16), int(value["y"], 16)


def verifies(key: bytes, round_number: int, signature: bytes) -> bool:
    """A verdict, with an encoding the decoder refuses counted as not verifying."""
    try:
        return verify_drand_round(key, round_number, signature)
    except FormatError:
        return False


# RFC 9380 ---------------------------------------------------------------------------------------


def test_vector_file_has_the_rfc_tests() -> None:
    assert [v["section"] for v in XMD] == ["K.1"] * 10 + ["K.2"] * 10
    assert {v["len_in_bytes"] for v in XMD} == {0x20, 0x80}
    assert H2C["suite"] == "BLS12381G1_XMD:SHA-256_SSWU_RO_"
    assert H2C["dst"] == "QUUX-V01-CS02-with-BLS12381G1_XMD:SHA-256_SSWU_RO_"
    assert [v["msg"][:4] for v in H2C["vectors"]] == ["", "abc", "abcd", "q128", "a512"]


@pytest.mark.parametrize("v", XMD, ids=[f"{v['section']}-{v['len_in_bytes']}-{v['msg'][:8]}" for v in XMD])
def test_expand_message_xmd(v: dict[str, Any]) -> None:
    uniform = expand_message_xmd(v["msg"].encode(), v["dst"].encode(), v["len_in_bytes"])
    assert uniform.hex() == v["uniform_bytes"]


def test_long_dst_is_hashed_as_the_rfc_says() -> None:
    """K.2's DST is over 255 bytes: DST' is SHA-256("H2C-OVERSIZE-DST-" || DST) and its length."""
    long = [v for v in XMD if v["section"] == "K.2"]
    dst = long[0]["dst"].encode()
    assert len(dst) > 255
    reduced = hashlib.sha256(b"H2C-OVERSIZE-DST-" + dst).digest()
    assert {v["dst_prime"] for v in long} == {(reduced + bytes([len(reduced)])).hex()}


@pytest.mark.parametrize("v", H2C["vectors"], ids=[v["msg"][:8] or "empty" for v in H2C["vectors"]])
def test_hash_to_g1(v: dict[str, Any]) -> None:
    msg, dst = v["msg"].encode(), H2C["dst"].encode()
    u = hash_to_field_fp(msg, dst, 2)
    assert u == [int(x, 16) for x in v["u"]]
    assert map_to_curve_g1(u[0]) == point(v["Q0"])
    assert map_to_curve_g1(u[1]) == point(v["Q1"])
    p = hash_to_g1(msg, dst)
    assert p == point(v["P"])
    assert g1_on_curve(p) and g1_mul(p, BLS12_381_R) is None


@pytest.mark.parametrize("v", H2C["vectors"][:2], ids=["empty", "abc"])
def test_py_ecc_reproduces_the_rfc(v: dict[str, Any]) -> None:
    """py_ecc, the oracle of the unit tests, agrees with the RFC too."""
    assert py_hash_to_g1(v["msg"].encode(), H2C["dst"].encode()) == point(v["P"])


# drand ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chain", CHAINS, ids=[c["name"] for c in CHAINS])
def test_chain_hash(chain: dict[str, Any]) -> None:
    found = drand_chain_hash(
        bytes.fromhex(chain["public_key"]),
        chain["period"],
        chain["genesis_time"],
        bytes.fromhex(chain["group_hash"]),
        chain["beacon_id"],
    )
    assert found.hex() == chain["chain_hash"]


def test_the_scheme_id_is_not_in_the_chain_hash() -> None:
    """Hashing the scheme ID after the group hash (as one might expect) does not give quicknet's."""
    quicknet = CHAINS[0]
    data = (
        (3).to_bytes(4, "big")
        + quicknet["genesis_time"].to_bytes(8, "big")
        + bytes.fromhex(quicknet["public_key"])
        + bytes.fromhex(quicknet["group_hash"])
    )
    with_scheme = hashlib.sha256(data + b"bls-unchained-g1-rfc9380" + b"quicknet").hexdigest()
    assert with_scheme != quicknet["chain_hash"]
    assert hashlib.sha256(data + b"quicknet").hexdigest() == quicknet["chain_hash"]


def test_quicknet_constants_are_its_chain_info() -> None:
    quicknet = CHAINS[0]
    assert quicknet["name"] == "quicknet" and quicknet["scheme_id"] == "bls-unchained-g1-rfc9380"
    assert DRAND_QUICKNET_PUBLIC_KEY.hex() == quicknet["public_key"]
    assert DRAND_QUICKNET_CHAIN_HASH.hex() == quicknet["chain_hash"]
    assert DRAND_QUICKNET_GROUP_HASH.hex() == quicknet["group_hash"]
    assert quicknet["period"] == DRAND_QUICKNET_PERIOD
    assert quicknet["genesis_time"] == DRAND_QUICKNET_GENESIS_TIME
    assert DRAND_DST_G1 == b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"


def test_round_message_and_time() -> None:
    assert drand_round_message(1) == hashlib.sha256(bytes(7) + b"\x01").digest()
    assert drand_round_time(DRAND_QUICKNET_GENESIS_TIME, 3, 1) == DRAND_QUICKNET_GENESIS_TIME
    assert drand_round_time(DRAND_QUICKNET_GENESIS_TIME, 3, 123) == DRAND_QUICKNET_GENESIS_TIME + 366
    for bad in (0, -1, 1 << 64, True):
        with pytest.raises(FormatError):
            drand_round_message(bad)


@pytest.mark.parametrize("r", ROUNDS, ids=[str(r["round"]) for r in ROUNDS])
def test_quicknet_round_verifies(r: dict[str, Any]) -> None:
    signature = bytes.fromhex(r["signature"])
    assert verify_drand_round(DRAND_QUICKNET_PUBLIC_KEY, r["round"], signature) is True
    if r["randomness"] is not None:
        assert drand_randomness(signature).hex() == r["randomness"]
    assert verifies(DRAND_QUICKNET_PUBLIC_KEY, r["round"] + 1, signature) is False


@pytest.mark.parametrize("byte", [0, 20, 47])
def test_a_changed_signature_byte_fails(byte: int) -> None:
    r = ROUNDS[3]
    signature = bytearray.fromhex(r["signature"])
    signature[byte] ^= 0x01
    assert verifies(DRAND_QUICKNET_PUBLIC_KEY, r["round"], bytes(signature)) is False


def test_another_rounds_signature_fails() -> None:
    for this, other in zip(ROUNDS, ROUNDS[1:] + ROUNDS[:1], strict=True):
        assert verifies(DRAND_QUICKNET_PUBLIC_KEY, this["round"], bytes.fromhex(other["signature"])) is False


@pytest.mark.parametrize("other", OTHER_ROUNDS, ids=[f"{o['chain']} {o['round']}" for o in OTHER_ROUNDS])
def test_another_chains_key_fails(other: dict[str, Any]) -> None:
    """Another chain's round verifies under its own key, and not under quicknet's; quicknet's
    rounds do not verify under the other key."""
    key, signature = bytes.fromhex(other["public_key"]), bytes.fromhex(other["signature"])
    assert verify_drand_round(key, other["round"], signature) is True
    if other["randomness"] is not None:
        assert drand_randomness(signature).hex() == other["randomness"]
    assert verify_drand_round(DRAND_QUICKNET_PUBLIC_KEY, other["round"], signature) is False
    for r in ROUNDS[:3]:
        assert verify_drand_round(key, r["round"], bytes.fromhex(r["signature"])) is False


def test_testnet_quicknet_key_fails() -> None:
    testnet = bytes.fromhex(CHAINS[1]["public_key"])
    for r in ROUNDS[:2]:
        assert verify_drand_round(testnet, r["round"], bytes.fromhex(r["signature"])) is False
