"""The log's ML-DSA-44 keys in the replay (key-addition, rotation and revocation on a second line of
keys), the ML-DSA-44 cosignature type (c2sp.org/tlog-cosignature, 0x06) checked against messages and
key IDs written here from the spec and signed by `cryptography` and dilithium-py, and a policy whose
quorum needs an ML-DSA-44 witness."""

from __future__ import annotations

import base64
import hashlib
import struct

import pytest
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey
from dilithium_py.ml_dsa import ML_DSA_44 as DILITHIUM_ML_DSA_44
from nacl.signing import SigningKey

from generator.core.cosigning_keys import Cosigner
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    CosignerKey,
    FormatError,
    Ledger,
    NoteError,
    checkpoint_text,
    evaluate,
    make_cosigner_vkey,
    make_vkey,
    parse_cosigner_vkey,
    parse_policy,
    parse_vkey,
    signer_problems,
    subtree_message,
    verify_cosignatures,
    witnessed_by,
)
from generator.verifier.memory.ledger_snapshot import load_snapshot, snapshot_bytes

ORIGIN = "log.example/one"
ROOT = hashlib.sha256(b"root").digest()
TEXT = checkpoint_text(ORIGIN, 7, ROOT)


def ml_key(label: str) -> MLDSA44PrivateKey:
    return MLDSA44PrivateKey.from_seed_bytes(hashlib.sha256(label.encode()).digest())


def raw_public(key: MLDSA44PrivateKey) -> bytes:
    return key.public_key().public_bytes_raw()


def spec_key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + b"\x06" + public_key).digest()[:4]


def spec_message(name: str, timestamp: int, origin: str, start: int, end: int, root: bytes) -> bytes:
    """`cosigned_message` from the struct in tlog-cosignature, one field at a time."""
    out = b"subtree/v1\n\x00"
    out += bytes([len(name.encode())]) + name.encode()
    out += struct.pack(">Q", timestamp)
    out += bytes([len(origin.encode())]) + origin.encode()
    out += struct.pack(">Q", start) + struct.pack(">Q", end) + root
    return out


def spec_line(name: str, public_key: bytes, timestamp: int, signature: bytes) -> str:
    raw = spec_key_id(name, public_key) + struct.pack(">Q", timestamp) + signature
    return f"\u2014 {name} {base64.b64encode(raw).decode()}\n"


def note_with(*lines: str) -> bytes:
    return (TEXT + "\n" + "".join(lines)).encode()


# ------------------------------------------------------------------ the cosignature type


def test_message_key_id_and_vkey_are_the_spec_s() -> None:
    pk = raw_public(ml_key("w"))
    assert subtree_message("w.example", 1700000000, ORIGIN, 0, 7, ROOT) == spec_message(
        "w.example", 1700000000, ORIGIN, 0, 7, ROOT
    )
    key = CosignerKey("w.example", pk, ML_DSA_44)
    assert key.key_id == spec_key_id("w.example", pk)
    typed = base64.b64encode(bytes([6]) + pk).decode()
    vkey = f"w.example+{spec_key_id('w.example', pk).hex()}+{typed}"
    assert key.vkey == vkey and parse_cosigner_vkey(vkey) == key


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("w", 5, ORIGIN, 1, 7, ROOT), "timestamp 0"),
        (("w", 0, ORIGIN, 8, 7, ROOT), "ends before it starts"),
        (("w", 0, ORIGIN, 0, 2**64, ROOT), "64-bit"),
        (("", 0, ORIGIN, 0, 7, ROOT), "1 to 255"),
        (("w", 0, "o" * 256, 0, 7, ROOT), "1 to 255"),
        (("w", 0, ORIGIN, 0, 7, ROOT[:31]), "32 bytes"),
        (("w", 2**63, ORIGIN, 0, 7, ROOT), "2\\^63"),
    ],
)
def test_subtree_messages_refuse_what_the_struct_cannot_hold(args: tuple, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        subtree_message(*args)


def test_cryptography_signed_cosignatures_verify_and_tampering_fails() -> None:
    key = ml_key("w")
    pk = raw_public(key)
    sig = key.sign(spec_message("w.example", 1700000000, ORIGIN, 0, 7, ROOT))
    good = spec_line("w.example", pk, 1700000000, sig)
    witness = CosignerKey("w.example", pk, ML_DSA_44)
    assert verify_cosignatures(note_with(good), [witness]) == {"w.example": 1700000000}
    # Another timestamp than the one signed, a flipped bit, a short signature: each refused.
    for bad in (
        spec_line("w.example", pk, 1700000001, sig),
        spec_line("w.example", pk, 1700000000, bytes([sig[0] ^ 1]) + sig[1:]),
        spec_line("w.example", pk, 1700000000, sig[:-1]),
    ):
        with pytest.raises(NoteError):
            verify_cosignatures(note_with(bad), [witness])
    # An ML-DSA-44 cosignature does not sign extension lines: a note with one still verifies.
    extended = (TEXT + "extension\n\n" + good).encode()
    assert verify_cosignatures(extended, [witness]) == {"w.example": 1700000000}


def test_dilithium_py_signed_cosignatures_verify() -> None:
    pk, sk = DILITHIUM_ML_DSA_44.keygen()
    msg = spec_message("w.example", 0, ORIGIN, 0, 7, ROOT)
    sig = DILITHIUM_ML_DSA_44.sign(sk, msg)
    witness = CosignerKey("w.example", pk, ML_DSA_44)
    assert verify_cosignatures(note_with(spec_line("w.example", pk, 0, sig)), [witness]) == {"w.example": 0}
    # And dilithium-py accepts what our signer (cryptography) makes.
    ours = Cosigner("w.example", ML_DSA_44, bytes(32))
    line = ours.cosign(TEXT, 1700000000)
    raw = base64.b64decode(line.split(" ")[2])
    assert DILITHIUM_ML_DSA_44.verify(
        ours.key.public_key, spec_message("w.example", 1700000000, ORIGIN, 0, 7, ROOT), raw[12:]
    )


def test_an_ed25519_cosigner_cannot_sign_a_subtree_and_its_key_id_differs() -> None:
    ed = Cosigner("w.example", ED25519, bytes(32))
    ml = Cosigner("w.example", ML_DSA_44, bytes(32))
    assert ed.key.key_id != ml.key.key_id
    with pytest.raises(Exception, match="only an ML-DSA-44 cosigner"):
        ed.sign_subtree(ORIGIN, 8, 12, ROOT)


def test_a_policy_whose_quorum_needs_an_ml_dsa_witness() -> None:
    log = SigningKey(hashlib.sha256(b"log").digest())
    log_vkey = make_vkey(ORIGIN, bytes(log.verify_key))
    ed = Cosigner("ed.example", ED25519, hashlib.sha256(b"ed").digest())
    ml = Cosigner("ml.example", ML_DSA_44, hashlib.sha256(b"ml").digest())
    policy = parse_policy(
        f"log {log_vkey}\nwitness E {ed.key.vkey}\nwitness M {ml.key.vkey}\ngroup both all E M\nquorum M\n"
    )
    with_ml = note_with(ed.cosign(TEXT, 1700000000), ml.cosign(TEXT, 1700000000))
    without_ml = note_with(ed.cosign(TEXT, 1700000000))
    assert evaluate(policy, witnessed_by(policy, with_ml)) == (True, [])
    assert evaluate(policy, witnessed_by(policy, without_ml)) == (False, ["M"])


# ------------------------------------------------------------------ the log's second line of keys


def _ledger() -> tuple[Ledger, str]:
    ledger = Ledger()
    ed = make_vkey(ORIGIN, bytes(SigningKey(bytes(32)).verify_key))
    ledger.keys.start(parse_vkey(ed))
    assert (
        ledger.apply({"type": "gate", "v": 1, "id": "a", "name": "A", "public": True, "at": "2026-01-01T00:00:00Z"})
        == []
    )
    return ledger, ed


def ml_vkey(label: str, name: str = ORIGIN) -> str:
    return make_cosigner_vkey(name, raw_public(ml_key(label)), ML_DSA_44)


def problems_of(ledger: Ledger, leaf: dict) -> list[str]:
    return [p.message for p in ledger.apply(leaf)]


def test_a_key_addition_starts_the_second_line_of_keys_once() -> None:
    ledger, ed = _ledger()
    at = "2026-01-02T00:00:00Z"
    assert problems_of(ledger, {"type": "key-addition", "v": 2, "vkey": ml_vkey("k1"), "at": at}) == []
    span = ledger.keys.ml_dsa[0]
    assert (span.first_size, span.valid_from, span.status) == (2, at, "active")
    assert "already" in problems_of(ledger, {"type": "key-addition", "v": 2, "vkey": ml_vkey("k2"), "at": at})[0]
    other = Ledger()
    other.keys.start(parse_vkey(ed))
    assert (
        "log's name"
        in problems_of(other, {"type": "key-addition", "v": 2, "vkey": ml_vkey("k", "x.example"), "at": at})[0]
    )
    assert "ML-DSA-44" in problems_of(other, {"type": "key-addition", "v": 2, "vkey": ed, "at": at})[0]
    assert "v" in problems_of(other, {"type": "key-addition", "v": 1, "vkey": ml_vkey("k"), "at": at})[0]


def test_ml_dsa_rotation_and_revocation_follow_the_ed25519_rules() -> None:
    ledger, ed = _ledger()
    k1, k2 = ml_vkey("k1"), ml_vkey("k2")
    assert problems_of(ledger, {"type": "key-addition", "v": 2, "vkey": k1, "at": "2026-01-02T00:00:00Z"}) == []
    mixed = {"type": "key-rotation", "v": 2, "vkey": k2, "replaces": ed, "at": "2026-01-03T00:00:00Z"}
    assert "ML-DSA-44 key as the new one is" in problems_of(ledger, mixed)[0]
    revoke_active = {
        "type": "key-revocation",
        "v": 2,
        "vkey": k1,
        "reason": "lost",
        "compromised_at": "2026-01-02T00:00:00Z",
        "at": "2026-01-03T00:00:00Z",
    }
    assert "active key cannot be revoked" in problems_of(ledger, revoke_active)[0]
    rotate = {"type": "key-rotation", "v": 2, "vkey": k2, "replaces": k1, "at": "2026-01-04T00:00:00Z"}
    assert problems_of(ledger, rotate) == []
    assert [s.status for s in ledger.keys.ml_dsa] == ["retired", "active"]
    assert ledger.keys.active is not None and ledger.keys.active.key.vkey == ed, "the Ed25519 line is untouched"
    revoke_active["at"] = "2026-01-05T00:00:00Z"
    assert problems_of(ledger, revoke_active) == []
    assert [s.status for s in ledger.keys.ml_dsa] == ["revoked", "active"]
    size = ledger.size
    ring = ledger.keys
    assert ring.newest_ml_dsa_at(size).vkey == k2
    problems = signer_problems(ring, size, [ring.spans[0].key])
    assert problems == [
        f"not signed by {ring.ml_dsa[1].key.fingerprint}, the ML-DSA-44 key valid for a tree of {size} entries"
    ]
    assert signer_problems(ring, size, [ring.spans[0].key, ring.ml_dsa[1].key]) == []
    assert (
        "revoked (lost)" in signer_problems(ring, size, [ring.spans[0].key, ring.ml_dsa[1].key, ring.ml_dsa[0].key])[0]
    )
    # The replayed ledger saved and loaded keeps both lines of keys.
    loaded, _ = load_snapshot(snapshot_bytes(ledger, {}))
    assert [(s.key, s.first_size, s.last_size, s.reason) for s in loaded.keys.ml_dsa] == [
        (s.key, s.first_size, s.last_size, s.reason) for s in ring.ml_dsa
    ]


def test_what_no_ml_dsa_line_can_cover_is_a_failed_line_not_a_crash() -> None:
    """An origin of more than 255 bytes cannot be in the subtree/v1 message: a line by a known
    ML-DSA-44 key on such a checkpoint does not verify (NoteError, as any failed line), and a size
    beyond 64 bits is no checkpoint at all."""
    w = Cosigner("w.example", ML_DSA_44, bytes(32))
    text = checkpoint_text("o" * 300, 5, ROOT)
    raw = w.key.key_id + bytes(8) + bytes(2420)
    line = f"\u2014 w.example {base64.b64encode(raw).decode()}\n"
    with pytest.raises(NoteError, match="does not verify"):
        verify_cosignatures((text + "\n" + line).encode(), [w.key])
    with pytest.raises(NoteError, match="64-bit"):
        verify_cosignatures((checkpoint_text(ORIGIN, 2**64, ROOT) + "\n" + line).encode(), [w.key])


def test_a_key_added_under_another_name_never_signs_for_the_log() -> None:
    """A replay that has not learnt the log's name yet (no rotation, keys.json not read) accepts
    the addition, but a line by that key never counts as the log's: every later checkpoint lacks
    the ML-DSA-44 signature it needs."""
    from generator.verifier import checkpoint_signers

    ledger = Ledger()
    other = Cosigner("someone-else.example/log", ML_DSA_44, bytes(32))
    leaf = {"type": "key-addition", "v": 2, "vkey": other.key.vkey, "at": "2026-01-02T00:00:00Z"}
    assert problems_of(ledger, leaf) == []
    log = SigningKey(bytes(32))
    ledger.keys.start(parse_vkey(make_vkey(ORIGIN, bytes(log.verify_key))))
    text = checkpoint_text(ORIGIN, 1, ROOT)
    from generator.verifier import key_id, note_signature_line

    ed_line = note_signature_line(ORIGIN, key_id(ORIGIN, bytes(log.verify_key)), log.sign(text.encode()).signature)
    note = (text + "\n" + ed_line + other.cosign(text, 0).replace("someone-else.example/log", ORIGIN)).encode()
    _, signers = checkpoint_signers(note, ledger.keys)
    assert other.key not in signers
    assert any("ML-DSA-44 key valid" in p for p in signer_problems(ledger.keys, 1, signers))
