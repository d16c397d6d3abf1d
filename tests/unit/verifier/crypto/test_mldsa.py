"""ML-DSA-44 verification in the verifier (generator/verifier/crypto/mldsa.py), checked against two
independent implementations: `cryptography` (OpenSSL's ML-DSA) and dilithium-py (pure Python).

Signatures both make are accepted, and each one altered by a bit of its signature, message, key or
context is refused by ours and by the one that made it. The rest are the edges of FIPS 204 that a
signer never reaches: hint encodings Algorithm 21 refuses although a lenient reader would find the
same hints in them, a response z on either side of the bound gamma1 - beta (made by
tests/support/mldsa.py), and the lengths, contexts and argument types the module answers without
arithmetic. Everything random comes from fixed seeds; cryptography's signing is hedged (it draws
fresh randomness), which changes the signature, never whether it verifies.
"""

from __future__ import annotations

import hashlib
import random

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey, MLDSA44PublicKey
from dilithium_py.ml_dsa import ML_DSA_44

from generator.verifier.crypto import mldsa
from generator.verifier.crypto.mldsa import (
    ML_DSA_44_PUBLIC_KEY_SIZE,
    ML_DSA_44_SIGNATURE_SIZE,
    ml_dsa_44_verify,
    ml_dsa_44_verify_internal,
    ml_dsa_44_verify_mu,
)
from tests.support.mldsa import MLDSA44_Z_BOUND, sign_with_first_z

SEEDS = [hashlib.sha256(b"ml-dsa-44 test key %d" % i).digest() for i in range(3)]
SEED_IDS = [f"key{i}" for i in range(len(SEEDS))]
_RANDOM = random.Random(204)
CASES = [  # (message, context)
    (b"", b""),
    (b"abc", b""),
    (_RANDOM.randbytes(1000), b"transparency"),
    (_RANDOM.randbytes(77), _RANDOM.randbytes(255)),
]
OMEGA, K = 80, 4  # the hint section: omega position bytes, then k running counts


def _flip(data: bytes, rng: random.Random) -> bytes:
    """`data` with one bit flipped, or one byte added if it is empty."""
    if not data:
        return b"\x01"
    position = rng.randrange(len(data) * 8)
    out = bytearray(data)
    out[position // 8] ^= 1 << (position % 8)
    return bytes(out)


def _cryptography_accepts(pk: bytes, message: bytes, signature: bytes, context: bytes) -> bool:
    try:
        MLDSA44PublicKey.from_public_bytes(pk).verify(signature, message, context or None)
    except InvalidSignature:
        return False
    return True


def _mu(pk: bytes, message: bytes, context: bytes) -> bytes:
    tr = hashlib.shake_256(pk).digest(64)
    return hashlib.shake_256(tr + bytes((0, len(context))) + context + message).digest(64)


def _dilithium_signature(seed: bytes, message: bytes, context: bytes = b"") -> tuple[bytes, bytes]:
    pk, sk = ML_DSA_44.key_derive(seed)
    return pk, ML_DSA_44.sign(sk, message, ctx=context, deterministic=True)


def test_the_sizes_are_fips_204_s() -> None:
    key = MLDSA44PrivateKey.from_seed_bytes(SEEDS[0])
    assert len(key.public_key().public_bytes_raw()) == ML_DSA_44_PUBLIC_KEY_SIZE == 1312
    assert len(key.sign(b"")) == ML_DSA_44_SIGNATURE_SIZE == 2420


@pytest.mark.parametrize("seed", SEEDS, ids=SEED_IDS)
def test_both_implementations_derive_the_same_key_from_a_seed(seed: bytes) -> None:
    """FIPS 204's ML-DSA.KeyGen_internal from xi: the keys the two signers below use are one key."""
    pk, _ = ML_DSA_44.key_derive(seed)
    assert MLDSA44PrivateKey.from_seed_bytes(seed).public_key().public_bytes_raw() == pk


@pytest.mark.parametrize("seed", SEEDS, ids=SEED_IDS)
@pytest.mark.parametrize(("message", "context"), CASES, ids=["empty", "short", "long", "context-255"])
def test_cryptography_s_signatures_verify_and_any_flipped_bit_is_refused(
    seed: bytes, message: bytes, context: bytes
) -> None:
    key = MLDSA44PrivateKey.from_seed_bytes(seed)
    pk = key.public_key().public_bytes_raw()
    signature = key.sign(message, context or None)
    assert ml_dsa_44_verify(pk, message, signature, context)
    assert ml_dsa_44_verify_internal(pk, bytes((0, len(context))) + context + message, signature)
    rng = random.Random(seed + message[:8])
    altered = [
        (_flip(pk, rng), message, signature, context),
        (pk, _flip(message, rng), signature, context),
        (pk, message, _flip(signature, rng), context),
        (pk, message, signature, _flip(context, rng)[:255]),
    ]
    for args in altered:
        assert not ml_dsa_44_verify(*args)
        assert not _cryptography_accepts(*args)


@pytest.mark.parametrize("seed", SEEDS, ids=SEED_IDS)
@pytest.mark.parametrize(("message", "context"), CASES, ids=["empty", "short", "long", "context-255"])
def test_dilithium_py_s_signatures_verify_and_any_flipped_bit_is_refused(
    seed: bytes, message: bytes, context: bytes
) -> None:
    pk, signature = _dilithium_signature(seed, message, context)
    assert ml_dsa_44_verify(pk, message, signature, context)
    assert _cryptography_accepts(pk, message, signature, context)
    rng = random.Random(seed + context[:8])
    altered = [
        (_flip(pk, rng), message, signature, context),
        (pk, _flip(message, rng), signature, context),
        (pk, message, _flip(signature, rng), context),
        (pk, message, signature, _flip(context, rng)[:255]),
    ]
    for pk_, message_, signature_, context_ in altered:
        assert not ml_dsa_44_verify(pk_, message_, signature_, context_)
        assert not ML_DSA_44.verify(pk_, message_, signature_, ctx=context_)


@pytest.mark.parametrize("seed", SEEDS, ids=SEED_IDS)
def test_a_signature_on_an_external_mu_verifies_as_the_message_it_stands_for(seed: bytes) -> None:
    """cryptography's sign_mu signs mu = H(H(pk) || M') computed outside: the same check as the message."""
    key = MLDSA44PrivateKey.from_seed_bytes(seed)
    pk = key.public_key().public_bytes_raw()
    message, context = b"checkpoint", b"ctx"
    signature = key.sign_mu(_mu(pk, message, context))
    assert ml_dsa_44_verify(pk, message, signature, context)
    assert ml_dsa_44_verify_mu(pk, _mu(pk, message, context), signature)
    assert not ml_dsa_44_verify_mu(pk, _mu(pk, message, b""), signature)
    assert not ml_dsa_44_verify_mu(pk, _mu(pk, message, context)[:63], signature)
    assert not ml_dsa_44_verify_mu(pk, _mu(pk, message, context) + b"\x00", signature)


def _hint_section(signature: bytes) -> tuple[bytearray, list[int]]:
    """The signature's last omega + k bytes, and the k running counts that end them."""
    section = bytearray(signature[-(OMEGA + K) :])
    return section, list(section[OMEGA:])


def _with_hints(signature: bytes, section: bytearray) -> bytes:
    return signature[: -(OMEGA + K)] + bytes(section)


def _swap_two_positions(section: bytearray, counts: list[int]) -> None:
    """Two hint positions of one polynomial in decreasing order: the same set of hints."""
    start = 0
    for end in counts:
        if end - start >= 2:
            section[start], section[start + 1] = section[start + 1], section[start]
            return
        start = end
    raise AssertionError("no polynomial with two hints")


def _pad_with_non_zero(section: bytearray, counts: list[int]) -> None:
    """A non-zero byte after the last position, in the padding no count covers: the same hints."""
    assert counts[-1] < OMEGA
    section[OMEGA - 1] = 1


def _count_beyond_omega(section: bytearray, counts: list[int]) -> None:
    section[OMEGA + K - 1] = OMEGA + 1


def _counts_decreasing(section: bytearray, counts: list[int]) -> None:
    assert counts[1] < OMEGA
    section[OMEGA] = counts[1] + 1


@pytest.mark.parametrize(
    "alter",
    [_swap_two_positions, _pad_with_non_zero, _count_beyond_omega, _counts_decreasing],
    ids=["positions-out-of-order", "non-zero-padding", "count-beyond-omega", "counts-decreasing"],
)
def test_a_hint_encoding_algorithm_21_refuses_is_refused(alter: object) -> None:
    """HintBitUnpack refuses these, so a signature carrying one is no signature, by us and both
    others, even where reading the hints leniently would find those of the valid signature."""
    message = b"hints"
    pk, signature = _dilithium_signature(SEEDS[0], message)
    section, counts = _hint_section(signature)
    assert ml_dsa_44_verify(pk, message, signature)
    assert callable(alter)
    alter(section, counts)
    forged = _with_hints(signature, section)
    assert forged != signature
    assert not ml_dsa_44_verify(pk, message, forged)
    assert not _cryptography_accepts(pk, message, forged, b"")
    assert not ML_DSA_44.verify(pk, message, forged)


@pytest.mark.parametrize(
    ("z_first", "accepted"),
    [(MLDSA44_Z_BOUND - 1, True), (MLDSA44_Z_BOUND, False), (-(MLDSA44_Z_BOUND - 1), True), (-MLDSA44_Z_BOUND, False)],
    ids=["just-under", "at-the-bound", "just-under-negative", "at-the-bound-negative"],
)
def test_z_must_stay_strictly_below_gamma1_minus_beta(
    z_first: int, accepted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signature whose z has gamma1 - beta - 1 in magnitude verifies; one with gamma1 - beta does not,
    and that only for the bound: with beta one smaller, it would."""
    message = b"the bound on z"
    pk, sk = ML_DSA_44.key_derive(SEEDS[1])
    signature = sign_with_first_z(sk, b"\x00\x00" + message, z_first)
    assert ml_dsa_44_verify(pk, message, signature) is accepted
    assert _cryptography_accepts(pk, message, signature, b"") is accepted
    assert ML_DSA_44.verify(pk, message, signature) is accepted
    monkeypatch.setattr(mldsa, "_MLDSA_BETA", 77)
    assert ml_dsa_44_verify(pk, message, signature)


def test_wrong_lengths_and_a_long_context_are_refused_without_raising() -> None:
    message = b"lengths"
    pk, signature = _dilithium_signature(SEEDS[2], message)
    assert ml_dsa_44_verify(pk, message, signature)
    for bad_pk in (b"", pk[:-1], pk + b"\x00"):
        assert not ml_dsa_44_verify(bad_pk, message, signature)
        assert not ml_dsa_44_verify_internal(bad_pk, b"\x00\x00" + message, signature)
        assert not ml_dsa_44_verify_mu(bad_pk, bytes(64), signature)
    for bad_signature in (b"", signature[:-1], signature + b"\x00"):
        assert not ml_dsa_44_verify(pk, message, bad_signature)
        assert not ml_dsa_44_verify_internal(pk, b"\x00\x00" + message, bad_signature)
        assert not ml_dsa_44_verify_mu(pk, bytes(64), bad_signature)
    assert not ml_dsa_44_verify(pk, message, signature, bytes(256))
    assert not ml_dsa_44_verify(pk, message, bytes(ML_DSA_44_SIGNATURE_SIZE))
    assert not ml_dsa_44_verify(pk, message, b"\xff" * ML_DSA_44_SIGNATURE_SIZE)


def test_bytearrays_are_bytes_and_anything_else_is_a_type_error() -> None:
    message = b"types"
    pk, signature = _dilithium_signature(SEEDS[2], message)
    assert ml_dsa_44_verify(bytearray(pk), bytearray(message), bytearray(signature), bytearray())
    for args in [(pk.hex(), message, signature), (pk, "types", signature), (pk, message, None)]:
        with pytest.raises(TypeError):
            ml_dsa_44_verify(*args)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ml_dsa_44_verify(pk, message, signature, "ctx")  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # the types first, before the context's length
        ml_dsa_44_verify(None, message, signature, bytes(256))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ml_dsa_44_verify_internal(pk, [0, 0], signature)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ml_dsa_44_verify_mu(pk, 0, signature)  # type: ignore[arg-type]
