"""The zero-copy libsodium calls (ctypes) and PyNaCl's public API accept and produce the same
signatures: the fast path is an optimisation, never a second set of rules."""

from __future__ import annotations

import json

import nacl.signing
import pytest

from generator import verify
from generator.core import signing_key
from tests.support.demo import REPO

VECTORS = json.loads((REPO / "tests" / "vectors" / "ed25519_rfc8032.json").read_text())


def test_the_fast_paths_are_in_use() -> None:
    # PyNaCl bundles libsodium with these symbols exported; if a build ever stops doing so the
    # code falls back to PyNaCl's API, and this test says so instead of hiding it.
    assert verify._VERIFY_DETACHED is not None
    assert signing_key._SIGN_DETACHED is not None


@pytest.mark.parametrize("case", VECTORS["vectors"] + VECTORS["negative"], ids=lambda c: c["description"][:60])
def test_both_verify_paths_agree(case: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    args = (bytes.fromhex(case["public_key"]), bytes.fromhex(case["signature"]), bytes.fromhex(case["message"]))
    fast = verify.ed25519_verify(*args)
    monkeypatch.setattr(verify, "_VERIFY_DETACHED", None)
    assert verify.ed25519_verify(*args) == fast
    assert fast == (case in VECTORS["vectors"])


@pytest.mark.parametrize("case", VECTORS["vectors"], ids=lambda c: c["description"][:60])
def test_both_sign_paths_agree(case: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    signer = signing_key.Signer("vectors.example/x", bytes.fromhex(case["secret_key"]))
    message = bytes.fromhex(case["message"])
    assert signer.sign(message).hex() == case["signature"]
    monkeypatch.setattr(signing_key, "_SIGN_DETACHED", None)
    assert signer.sign(message).hex() == case["signature"]
    assert nacl.signing.SigningKey(signer.seed).sign(message).signature.hex() == case["signature"]
