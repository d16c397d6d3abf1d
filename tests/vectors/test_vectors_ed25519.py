"""RFC 8032 section 7.1 Ed25519 test vectors (tests/vectors/ed25519_rfc8032.json).

Checked twice: against PyNaCl directly (so a broken vector file is caught even
before the project code exists) and against generator.verify.ed25519_verify.
"""

import json
import pathlib

import pytest
from nacl.exceptions import CryptoError
from nacl.signing import SigningKey, VerifyKey

ROOT = pathlib.Path(__file__).resolve().parents[2]

VECTORS = json.loads((ROOT / "tests" / "vectors" / "ed25519_rfc8032.json").read_text(encoding="utf-8"))
POSITIVE = VECTORS["vectors"]
NEGATIVE = VECTORS["negative"]


def _ids(cases):
    return [c["description"] for c in cases]


@pytest.fixture
def verify(verifier):
    return verifier


def test_vector_file_has_the_rfc_tests():
    names = {v["description"].split(" (")[0] for v in POSITIVE}
    for want in ("TEST 1", "TEST 2", "TEST 3", "TEST 1024", "TEST SHA(abc)"):
        assert f"RFC 8032 7.1 {want}" in names
    assert all(n["description"].startswith("derived") for n in NEGATIVE)


@pytest.mark.parametrize("v", POSITIVE, ids=_ids(POSITIVE))
def test_pynacl_reproduces_public_key_and_signature(v):
    sk = SigningKey(bytes.fromhex(v["secret_key"]))
    assert sk.verify_key.encode().hex() == v["public_key"]
    assert sk.sign(bytes.fromhex(v["message"])).signature.hex() == v["signature"]
    VerifyKey(bytes.fromhex(v["public_key"])).verify(bytes.fromhex(v["message"]), bytes.fromhex(v["signature"]))


@pytest.mark.parametrize("n", NEGATIVE, ids=_ids(NEGATIVE))
def test_pynacl_rejects_negative(n):
    vk = VerifyKey(bytes.fromhex(n["public_key"]))
    with pytest.raises((CryptoError, ValueError)):
        vk.verify(bytes.fromhex(n["message"]), bytes.fromhex(n["signature"]))


@pytest.mark.parametrize("v", POSITIVE, ids=_ids(POSITIVE))
def test_project_accepts_vector(verify, v):
    ok = verify.ed25519_verify(
        bytes.fromhex(v["public_key"]), bytes.fromhex(v["signature"]), bytes.fromhex(v["message"])
    )
    assert ok is True


@pytest.mark.parametrize("n", NEGATIVE, ids=_ids(NEGATIVE))
def test_project_rejects_negative(verify, n):
    ok = verify.ed25519_verify(
        bytes.fromhex(n["public_key"]), bytes.fromhex(n["signature"]), bytes.fromhex(n["message"])
    )
    assert ok is False
