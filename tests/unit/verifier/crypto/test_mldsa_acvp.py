"""NIST's ACVP vectors for ML-DSA-44 signature verification (FIPS 204), every vector of every ML-DSA-44
group of the sigVer set checked against its expected result (tests/vectors/mldsa44_acvp_sigver.json; its
"source" names the ACVP-Server commit and file they come from, and what was pruned).

Each group is run through the interface ACVP names for it:

- external, pure: ml_dsa_44_verify(pk, message, signature, context), which forms M' = 0 || |ctx| || ctx || M;
- internal: ml_dsa_44_verify_internal(pk, M', signature), the vector's message being M' already;
- internal with externalMu: ml_dsa_44_verify_mu(pk, mu, signature);
- external, preHash: HashML-DSA (FIPS 204 Algorithm 5) is out of the verifier's scope, which has no
  use for it. Its verification is Verify_internal on M' = 1 || |ctx| || ctx || OID(PH) || PH(M), so
  this module forms that M' itself, from hashlib and the OIDs of FIPS 204 section 5.4.1, and hands it
  to ml_dsa_44_verify_internal: the group tests the verifier's core on fifteen more signatures.

The "reason" of a vector (a modified message, commitment, z or hint, or a valid signature) is in the
assertion's message. None of the vectors' modified z leaves the bound gamma1 - beta (each is refused by
the commitment check), so the bound itself is tested in test_mldsa.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.verifier.crypto.mldsa import ml_dsa_44_verify, ml_dsa_44_verify_internal, ml_dsa_44_verify_mu

VECTORS = Path(__file__).resolve().parents[3] / "vectors" / "mldsa44_acvp_sigver.json"
DATA: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))

# FIPS 204 section 5.4.1: the hash functions HashML-DSA may use, each with the last arc of its OID
# 2.16.840.1.101.3.4.2.n (DER below) and the digest it signs.
_OID_PREFIX = bytes.fromhex("06096086480165030402")
PREHASHES: dict[str, tuple[int, Callable[[bytes], bytes]]] = {
    "SHA2-256": (1, lambda m: hashlib.sha256(m).digest()),
    "SHA2-384": (2, lambda m: hashlib.sha384(m).digest()),
    "SHA2-512": (3, lambda m: hashlib.sha512(m).digest()),
    "SHA2-224": (4, lambda m: hashlib.sha224(m).digest()),
    "SHA2-512/224": (5, lambda m: hashlib.new("sha512_224", m).digest()),
    "SHA2-512/256": (6, lambda m: hashlib.new("sha512_256", m).digest()),
    "SHA3-224": (7, lambda m: hashlib.sha3_224(m).digest()),
    "SHA3-256": (8, lambda m: hashlib.sha3_256(m).digest()),
    "SHA3-384": (9, lambda m: hashlib.sha3_384(m).digest()),
    "SHA3-512": (10, lambda m: hashlib.sha3_512(m).digest()),
    "SHAKE-128": (11, lambda m: hashlib.shake_128(m).digest(32)),
    "SHAKE-256": (12, lambda m: hashlib.shake_256(m).digest(64)),
}


def _cases() -> list[Any]:
    return [
        pytest.param(group, test, id=f"tg{group['tgId']}-tc{test['tcId']}")
        for group in DATA["testGroups"]
        for test in group["tests"]
    ]


def _bytes(test: dict[str, Any], name: str) -> bytes:
    return base64.b64decode(test[name], validate=True)


def _hash_ml_dsa_message(test: dict[str, Any]) -> bytes:
    """M' of HashML-DSA.Verify (FIPS 204 Algorithm 5): 1 || |ctx| || ctx || OID || PH(M)."""
    arc, digest = PREHASHES[test["hashAlg"]]
    context = _bytes(test, "context")
    return bytes((1, len(context))) + context + _OID_PREFIX + bytes((arc,)) + digest(_bytes(test, "message"))


def _verify(group: dict[str, Any], test: dict[str, Any]) -> bool:
    pk, signature = _bytes(test, "pk"), _bytes(test, "signature")
    if group["signatureInterface"] == "internal":
        if group["externalMu"]:
            return ml_dsa_44_verify_mu(pk, _bytes(test, "mu"), signature)
        return ml_dsa_44_verify_internal(pk, _bytes(test, "message"), signature)
    assert group["signatureInterface"] == "external" and not group["externalMu"]
    if group["preHash"] == "preHash":
        return ml_dsa_44_verify_internal(pk, _hash_ml_dsa_message(test), signature)
    assert group["preHash"] == "pure"
    return ml_dsa_44_verify(pk, _bytes(test, "message"), signature, _bytes(test, "context"))


def test_the_file_holds_every_ml_dsa_44_group_whole() -> None:
    """Four groups of fifteen, as ACVP-Server's file has them for ML-DSA-44: nothing sampled away."""
    groups = {
        g["tgId"]: (g["signatureInterface"], g["preHash"], g["externalMu"], len(g["tests"])) for g in DATA["testGroups"]
    }
    assert groups == {
        1: ("external", "pure", False, 15),
        2: ("external", "preHash", False, 15),
        7: ("internal", "none", True, 15),
        8: ("internal", "none", False, 15),
    }
    outcomes = Counter(t["testPassed"] for g in DATA["testGroups"] for t in g["tests"])
    assert outcomes == {True: 12, False: 48}
    assert {t["hashAlg"] for t in DATA["testGroups"][1]["tests"]} <= set(PREHASHES)


@pytest.mark.parametrize(("group", "test"), _cases())
def test_every_acvp_vector_gets_its_expected_answer(group: dict[str, Any], test: dict[str, Any]) -> None:
    expected = test["testPassed"]
    assert _verify(group, test) is expected, f"tcId {test['tcId']} ({test['reason']}): expected {expected}"
