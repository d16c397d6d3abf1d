"""Project Wycheproof's vectors for the verifier's RSA and ECDSA (tests/vectors/wycheproof/*.json),
every vector of each file checked against its expected result.

The files are copies, byte for byte, of testvectors_v1/<name> in the GitHub repository
C2SP/wycheproof at commit dac1dd4729fd1f8dd9e1e9f3dce51d783da6c166 ("Copyright 2016-2026 The
Wycheproof Authors, offered under the Apache License 2.0", its README says). BLOB_IDS holds each
file's git blob id there, which the first test recomputes. Each group's key is read from its DER SubjectPublicKeyInfo
("publicKeyDer") by the verifier's own reader, so the reader is tested too.

"acceptable" results: the only ones in these files are RSASSA-PKCS1-v1_5 signatures whose
DigestInfo leaves out the NULL parameters of the hash ("MissingNull"). The verifier refuses them:
it compares the decrypted block with the one encoding RFC 8017 section 9.2 gives, NULL included,
so that one signature has one accepted form. Every ECDSA signature in a BER rather than DER form
("BerEncodedSignature") is refused by the DER reader itself, before any arithmetic.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any

import pytest

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.ecdsa import ec_signature_values
from generator.verifier.crypto.signatures import SignatureAlgorithm, read_subject_public_key_info

FOLDER = pathlib.Path(__file__).resolve().parent / "wycheproof"
COMMIT = "dac1dd4729fd1f8dd9e1e9f3dce51d783da6c166"
BLOB_IDS = {
    "ecdsa_secp256r1_sha256_test.json": "19c951dbd3b6e33ed5e28d9bbbeea30e5f0350d3",
    "ecdsa_secp256r1_sha512_test.json": "816a843aa0f401650c6dbe237202658ed0992e55",
    "ecdsa_secp384r1_sha256_test.json": "32891e5ffb7342fd6183c7c68cff2aac753f4ae2",
    "ecdsa_secp384r1_sha384_test.json": "19df1b5614d68af884d9d197b0d123cc5d22807d",
    "rsa_signature_2048_sha256_test.json": "26f8d2c5b5c50bcba47653ee54d7b81e97f2ea0a",
    "rsa_signature_2048_sha512_test.json": "83f0083b48ad67a5faee5e2d68ac534496a2210f",
    "rsa_signature_3072_sha384_test.json": "78fc1d1dbea93d36e1c98bfae728795a1a9eaa9c",
    "rsa_pss_2048_sha256_mgf1_0_test.json": "d8623ae4a6949505643ae35fd8a9c9db396a253d",
    "rsa_pss_2048_sha256_mgf1_32_test.json": "bdb7694c4b44e8f0a3569bc2a9c56c33e9d24cec",
    "rsa_pss_2048_sha384_mgf1_48_test.json": "2626470be2712e92e001fa3cf21695e48b1ca78e",
    "rsa_pss_4096_sha512_mgf1_64_test.json": "7c6b44626473f71f6ac94694a9edc3d253976b93",
}
HASHES = {"SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}
# The "acceptable" flags these files hold, and what the verifier answers for each (see above).
ACCEPTABLE = {"MissingNull": False}


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FOLDER / name).read_text(encoding="utf-8"))
    return data


def _algorithm(group: dict[str, Any]) -> SignatureAlgorithm:
    if group["type"] == "EcdsaVerify":
        return SignatureAlgorithm("ecdsa", HASHES[group["sha"]])
    if group["type"] == "RsassaPkcs1Verify":
        return SignatureAlgorithm("rsa-pkcs1v15", HASHES[group["sha"]])
    assert group["type"] == "RsassaPssVerify" and group["mgf"] == "MGF1" and group["mgfSha"] == group["sha"]
    return SignatureAlgorithm("rsa-pss", HASHES[group["sha"]], group["sLen"])


def _expected(test: dict[str, Any]) -> bool:
    if test["result"] == "acceptable":
        (flag,) = (f for f in test["flags"] if f in ACCEPTABLE)
        return ACCEPTABLE[flag]
    return bool(test["result"] == "valid")


def test_the_files_are_the_published_ones() -> None:
    """Each file hashes to its git blob id at the commit named above: a copy, not an edit."""
    assert sorted(p.name for p in FOLDER.glob("*.json")) == sorted(BLOB_IDS)
    for name, blob in BLOB_IDS.items():
        data = (FOLDER / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name


@pytest.mark.parametrize("name", sorted(BLOB_IDS))
def test_every_vector_gets_its_expected_result(name: str) -> None:
    vectors = _load(name)
    wrong = []
    count = 0
    for group in vectors["testGroups"]:
        key = read_subject_public_key_info(bytes.fromhex(group["publicKeyDer"]))
        algorithm = _algorithm(group)
        for test in group["tests"]:
            count += 1
            got = key.verify(algorithm, bytes.fromhex(test["msg"]), bytes.fromhex(test["sig"]))
            if got != _expected(test):
                wrong.append(f"tcId {test['tcId']} ({test['result']}, {test['comment']}): verifier says {got}")
    assert count == vectors["numberOfTests"]
    assert not wrong, "\n".join(wrong)


def test_the_acceptable_cases_are_the_ones_decided_above() -> None:
    """A new kind of "acceptable" vector needs a decision written down, not a silent default."""
    flags = {
        flag
        for name in BLOB_IDS
        for group in _load(name)["testGroups"]
        for test in group["tests"]
        if test["result"] == "acceptable"
        for flag in test["flags"]
    }
    assert flags == set(ACCEPTABLE)


@pytest.mark.parametrize("name", sorted(n for n in BLOB_IDS if n.startswith("ecdsa")))
def test_the_der_reader_refuses_every_ber_encoded_ecdsa_signature(name: str) -> None:
    cases = [
        test for group in _load(name)["testGroups"] for test in group["tests"] if "BerEncodedSignature" in test["flags"]
    ]
    assert cases
    for test in cases:
        with pytest.raises(FormatError, match="malformed DER"):
            ec_signature_values(bytes.fromhex(test["sig"]))


@pytest.mark.parametrize("name", sorted(BLOB_IDS))
def test_each_file_has_valid_and_invalid_vectors(name: str) -> None:
    """A file whose vectors all pass or all fail would test little: both kinds are present."""
    results = {test["result"] for group in _load(name)["testGroups"] for test in group["tests"]}
    assert {"valid", "invalid"} <= results
