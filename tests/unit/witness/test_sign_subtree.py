"""The witness's sign-subtree (c2sp.org/tlog-witness): a subtree of a checkpoint the witness
cosigned, proven by a subtree consistency proof (draft-ietf-plants-merkle-tree-certs), signed by
its ML-DSA-44 keys with timestamp 0 (checked against the spec's bytes, independently of the
module); each refusal with the spec's code, and no such path on a witness without an ML-DSA-44 key."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import mldsa

from generator.core.cosigning_keys import Cosigner
from generator.core.proofs import MerkleTree, subtree_consistency_proof
from generator.verifier import ED25519, is_valid_subtree, subtree_cosignature_verifies
from generator.witness.server import Witness
from tests.support.witnesses import (
    LEAVES,
    LOG_KEY,
    ORIGIN,
    WITNESS_NAME,
    WITNESS_SEED,
    Clock,
    grow_request,
    http_request,
    ml_dsa_cosigner,
    note,
    serving,
)

ED = Cosigner(WITNESS_NAME, ED25519, WITNESS_SEED)
ML_DSA = ml_dsa_cosigner(WITNESS_NAME, "test witness ml-dsa")
ML_DSA_2 = ml_dsa_cosigner(WITNESS_NAME, "test witness ml-dsa, second key")
TREE = MerkleTree(LEAVES)
SIZE = 14


def b64(h: bytes) -> bytes:
    return base64.b64encode(h) + b"\n"


def subtree_request(start: int, end: int, reference: bytes, subtree_hash: bytes | None = None, proof=None) -> bytes:
    h = TREE.subtree_root(start, end) if subtree_hash is None else subtree_hash
    p = subtree_consistency_proof(TREE, start, end, SIZE) if proof is None else proof
    return f"subtree {start} {end}\n".encode() + b64(h) + b"".join(b64(x) for x in p) + b"\n" + reference


def cosigned(w: Witness, size: int = SIZE) -> bytes:
    """The log's checkpoint of `size` with the witness's cosignature lines: a reference checkpoint."""
    status, _, lines = w.add_checkpoint(grow_request(0, size))
    assert status == 200, lines
    return note(size) + lines


def raw_of(line: bytes) -> bytes:
    return base64.b64decode(line.rstrip(b"\n").rsplit(b" ", 1)[1], validate=True)


@pytest.fixture
def w(tmp_path: Path) -> Witness:
    return Witness(WITNESS_NAME, [ED, ML_DSA, ML_DSA_2], tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=Clock())


def test_a_subtree_is_signed_by_each_ml_dsa_44_key_with_timestamp_0(w):
    status, headers, body = w.sign_subtree(subtree_request(8, 13, cosigned(w)))
    assert (status, headers["Content-Type"]) == (200, "text/plain; charset=utf-8"), body
    lines = body.splitlines(keepends=True)
    assert len(lines) == 2  # the two ML-DSA-44 keys; Ed25519 cannot sign a subtree
    root = TREE.subtree_root(8, 13)
    for line, key in zip(lines, [ML_DSA, ML_DSA_2], strict=True):
        assert line.startswith(f"\u2014 {WITNESS_NAME} ".encode())
        raw = raw_of(line)
        assert raw[:4] == key.key.key_id and raw[4:12] == bytes(8)  # timestamp 0
        message = (
            b"subtree/v1\n\x00"
            + bytes([len(WITNESS_NAME)])
            + WITNESS_NAME.encode()
            + bytes(8)
            + bytes([len(ORIGIN)])
            + ORIGIN.encode()
            + struct.pack(">QQ", 8, 13)
            + root
        )
        mldsa.MLDSA44PublicKey.from_public_bytes(key.key.public_key).verify(raw[12:], message)
        assert subtree_cosignature_verifies(key.key, ORIGIN, 8, 13, root, raw)


def test_every_subtree_of_the_checkpoint_is_signed(tmp_path):
    w = Witness(WITNESS_NAME, ML_DSA, tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=Clock())
    reference = cosigned(w)
    subtrees = [(s, e) for e in range(1, SIZE + 1) for s in range(e) if is_valid_subtree(s, e)]
    for start, end in subtrees:
        status, _, body = w.sign_subtree(subtree_request(start, end, reference))
        assert status == 200, (start, end, body)
        assert subtree_cosignature_verifies(ML_DSA.key, ORIGIN, start, end, TREE.subtree_root(start, end), raw_of(body))


def test_a_checkpoint_cosigned_by_the_witness_s_ed25519_key_alone_is_enough(w):
    reference = cosigned(w)
    ed_only = b"".join(line for line in reference.splitlines(keepends=True) if not line.startswith("\u2014 ".encode()))
    ed_only += reference.splitlines(keepends=True)[-3]  # the witness's Ed25519 line alone: no log signature needed
    assert w.sign_subtree(subtree_request(4, 8, ed_only))[0] == 200


@pytest.mark.parametrize(
    ("head", "fragment"),
    [
        (b"subtree 8 13", None),  # well formed: the control case
        (b"subtree 08 13", "`subtree <start> <end>`"),
        (b"subtree 8", "`subtree <start> <end>`"),
        (b"subtree  8 13", "`subtree <start> <end>`"),
        (b"subtree 8 13 ", "`subtree <start> <end>`"),
        (b"Subtree 8 13", "`subtree <start> <end>`"),
        (b"subtree -8 13", "`subtree <start> <end>`"),
        (b"subtree 8 99999999999999999999", "`subtree <start> <end>`"),
    ],
)
def test_a_malformed_subtree_line_is_400(w, head, fragment):
    body = subtree_request(8, 13, cosigned(w)).split(b"\n", 1)[1]
    status, _, answer = w.sign_subtree(head + b"\n" + body)
    assert (status, fragment is None or fragment in answer.decode()) == ((200 if fragment is None else 400), True)


def test_malformed_bodies_and_invalid_subtrees_are_400(w):
    reference = cosigned(w)
    good = subtree_request(8, 13, reference)
    cases = {
        b"subtree 8 13\n": "followed by the subtree's hash line",
        b"subtree 8 13\nAAAA\n\n" + reference: "the subtree hash line is not a base64 32-byte hash",
        good.replace(b"\n\n", b"\n", 1): "consistency proof line",
        b"subtree 8 13\n" + b64(bytes(32)) + b64(bytes(32)) * 64 + b"\n" + reference: "more than 63",
        b"subtree 8 13\n" + b64(bytes(32)) + b64(bytes(32)): "no empty line",
        good[: good.index(b"\n\n") + 2] + b"garbage\n": "malformed checkpoint",
        subtree_request(8, 8, reference, bytes(32), []): "[8, 8) is not a subtree",
        subtree_request(4, 9, reference, bytes(32), []): "[4, 9) is not a subtree",
        subtree_request(3, 2, reference, bytes(32), []): "[3, 2) is not a subtree",
        subtree_request(8, 16, reference, bytes(32), []): "ends beyond the checkpoint's size 14",
    }
    for body, fragment in cases.items():
        status, _, answer = w.sign_subtree(body)
        assert (status, fragment in answer.decode()) == (400, True), (body[:40], answer)
        assert "\u2014" not in answer.decode()


def test_an_unknown_origin_is_404(w, tmp_path):
    stranger = Witness(WITNESS_NAME, [ML_DSA], tmp_path / "other", {"example.com/unknown": [LOG_KEY]}, clock=Clock())
    reference = note(SIZE, origin="example.com/unknown")
    status, _, answer = w.sign_subtree(subtree_request(8, 13, reference))
    assert (status, answer) == (404, b"unknown log\n")
    # The same body to a witness that knows that origin gets past the 404, to the next check.
    assert stranger.sign_subtree(subtree_request(8, 13, reference))[0] == 403


def test_a_checkpoint_the_witness_did_not_cosign_is_403(w, tmp_path):
    reference = cosigned(w)
    log_only = note(SIZE)
    status, _, answer = w.sign_subtree(subtree_request(8, 13, log_only))
    assert status == 403 and f"no cosignature by {WITNESS_NAME}" in answer.decode()
    # The same name with another key: not this witness.
    impostor = Witness(WITNESS_NAME, ml_dsa_cosigner(WITNESS_NAME, "impostor"), tmp_path / "i", {ORIGIN: [LOG_KEY]})
    assert w.sign_subtree(subtree_request(8, 13, cosigned(impostor)))[0] == 403
    # Its own line, tampered with: a note with a failing line by a known key.
    lines = reference.splitlines(keepends=True)
    raw = bytearray(raw_of(lines[-1]))
    raw[-1] ^= 1
    tampered = b"".join(lines[:-1]) + lines[-1].rsplit(b" ", 1)[0] + b" " + base64.b64encode(bytes(raw)) + b"\n"
    status, _, answer = w.sign_subtree(subtree_request(8, 13, tampered))
    assert status == 403 and "does not verify" in answer.decode()
    # A cosignature of another checkpoint (size 13) on this one's text does not count either.
    other = cosigned(Witness(WITNESS_NAME, [ED, ML_DSA], tmp_path / "o", {ORIGIN: [LOG_KEY]}, clock=Clock()), 13)
    moved = note(SIZE) + b"".join(line for line in other.splitlines(keepends=True)[-2:])
    assert w.sign_subtree(subtree_request(8, 13, moved))[0] == 403


def test_a_proof_that_does_not_verify_is_422(w):
    reference = cosigned(w)
    proof = subtree_consistency_proof(TREE, 8, 13, SIZE)
    bad = [*proof[:1], bytes(32), *proof[2:]]
    cases = [
        subtree_request(8, 13, reference, proof=bad),
        subtree_request(8, 13, reference, subtree_hash=TREE.subtree_root(8, 12)),
        subtree_request(8, 13, reference, proof=subtree_consistency_proof(TREE, 8, 12, SIZE)),
        subtree_request(8, 13, reference, proof=proof[:-1]),
        subtree_request(8, 13, reference, proof=[*proof, bytes(32)]),
    ]
    for body in cases:
        status, _, answer = w.sign_subtree(body)
        assert status == 422 and "subtree consistency proof of [8, 13) in 14 does not verify" in answer.decode()


def test_a_witness_without_an_ml_dsa_44_key_has_no_sign_subtree(tmp_path):
    w = Witness(WITNESS_NAME, ED, tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=Clock())
    reference = cosigned(w)
    status, _, answer = w.sign_subtree(subtree_request(8, 13, reference))
    assert (status, answer) == (404, b"this witness has no ML-DSA-44 key: it signs no subtree\n")
    with serving(w) as url:
        assert http_request(url + "/sign-subtree", subtree_request(8, 13, reference))[0] == 404
        assert http_request(url + "/sign-subtree", method="GET")[0] == 404


def test_sign_subtree_over_http(w):
    with serving(w) as url:
        _, _, lines = http_request(url + "/add-checkpoint", grow_request(0, SIZE))
        status, headers, body = http_request(url + "/sign-subtree", subtree_request(4, 8, note(SIZE) + lines))
        assert (status, headers["Content-Type"]) == (200, "text/plain; charset=utf-8")
        root = TREE.subtree_root(4, 8)
        assert [
            subtree_cosignature_verifies(k.key, ORIGIN, 4, 8, root, raw_of(line))
            for k, line in zip([ML_DSA, ML_DSA_2], body.splitlines(), strict=True)
        ] == [True, True]
        status, headers, _ = http_request(url + "/sign-subtree", method="GET")
        assert (status, headers["Allow"]) == (405, "POST")
        assert http_request(url + "/sign-subtree", subtree_request(4, 9, note(SIZE) + lines, bytes(32), []))[0] == 400
        assert http_request(url + "/sign-subtree", b"x" * (256 * 1024 + 1))[0] == 413
