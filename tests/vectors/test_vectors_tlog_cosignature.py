"""C2SP tlog-cosignature vectors published by other implementations (tests/vectors/tlog_cosignature.json:
leviathan-crypto's and azul's), against the project's cosignature code (generator/verifier/tlog/cosignature.py,
generator/core/cosigning_keys.py) and the spec-only client (tests/support/spec_witness_client.py): both
signed messages byte for byte, the key from its seed, the key ID of both types, Ed25519 cosignatures and
their notes byte for byte, and ML-DSA-44 cosignatures whose only difference from C2SP's is the context
they were signed in, which the project must therefore refuse."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from generator.core.cosigning_keys import Cosigner
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    CosignerKey,
    FormatError,
    NoteError,
    cosignature_message,
    leaf_hash,
    merkle_root,
    parse_cosigner_vkey,
    subtree_message,
    verify_cosignatures,
)
from generator.verifier.crypto.mldsa import ml_dsa_44_verify
from tests.support import spec_witness_client as c
from tests.support.demo import REPO

VECTORS = json.loads((REPO / "tests" / "vectors" / "tlog_cosignature.json").read_text(encoding="utf-8"))
B = bytes.fromhex


@pytest.mark.parametrize("row", VECTORS["ed25519_messages"], ids=lambda r: r["description"][:40])
def test_the_ed25519_signed_message(row: dict[str, Any]) -> None:
    assert cosignature_message(row["text"], row["timestamp"]) == row["message"].encode()
    assert c.cosignature_v1_message(row["text"], row["timestamp"]) == row["message"].encode()


@pytest.mark.parametrize("row", VECTORS["subtree_v1_messages"], ids=lambda r: r["description"][:40])
def test_the_subtree_v1_message(row: dict[str, Any]) -> None:
    args = (row["cosigner"], row["timestamp"], row["origin"], row["start"], row["end"], B(row["hash"]))
    assert c.cosigned_message(*args) == B(row["message"]), "the struct's layout"
    if row["valid_inputs"]:
        assert subtree_message(*args) == B(row["message"])
        return
    # azul's layout check signs nothing: its start is not 0 and its timestamp is, which a signer may not do.
    with pytest.raises(FormatError, match="signed with timestamp 0"):
        subtree_message(*args)
    name_len = 1 + len(row["cosigner"].encode())
    zeroed = bytearray(B(row["message"]))
    zeroed[12 + name_len : 12 + name_len + 8] = bytes(8)
    assert subtree_message(row["cosigner"], 0, *args[2:]) == bytes(zeroed), "every other field where azul puts it"


def _root(row: dict[str, Any]) -> bytes:
    """The root of the row's leaves (RFC 6962 leaf hashes of their UTF-8), which its checkpoint text holds."""
    root = merkle_root([leaf_hash(leaf.encode()) for leaf in row["leaves"]])
    assert root == B(row["root"])
    assert row["text"] == f"{row['origin']}\n{row['tree_size']}\n{base64.b64encode(root).decode()}\n"
    return root


@pytest.mark.parametrize("row", VECTORS["ed25519_cosignatures"], ids=lambda r: r["id"])
def test_ed25519_cosignatures_byte_for_byte(row: dict[str, Any]) -> None:
    _root(row)
    cosigner = Cosigner(row["origin"], ED25519, B(row["seed"]))
    key = cosigner.key
    assert key.public_key == B(row["public_key"]) and key.key_id.hex() == row["key_id"]
    assert parse_cosigner_vkey(key.vkey) == key
    assert cosignature_message(row["text"], row["timestamp"]) == B(row["message"])
    line = cosigner.cosign(row["text"], row["timestamp"])  # Ed25519 is deterministic: the very bytes
    assert row["text"] + "\n" + line == row["note"]
    assert verify_cosignatures(row["note"].encode(), [key]) == {row["origin"]: row["timestamp"]}
    spec_key = c.PublicKey(row["origin"], c.COSIGNATURE_ED25519, B(row["public_key"]))
    assert spec_key.key_id.hex() == row["key_id"]
    assert c.open_checkpoint(row["note"].encode(), [spec_key])[1] == {spec_key: row["timestamp"]}


@pytest.mark.parametrize("row", VECTORS["ml_dsa_44_cosignatures"], ids=lambda r: r["id"])
def test_ml_dsa_44_keys_key_ids_and_messages_and_a_foreign_context_refused(row: dict[str, Any]) -> None:
    root = _root(row)
    cosigner = Cosigner(row["origin"], ML_DSA_44, B(row["seed"]))
    key = cosigner.key
    assert key.public_key == B(row["public_key"]), "FIPS 204 key generation from the seed xi"
    assert key.key_id.hex() == row["key_id"] == CosignerKey(row["origin"], B(row["public_key"]), ML_DSA_44).key_id.hex()
    assert parse_cosigner_vkey(key.vkey) == key
    message = subtree_message(row["origin"], row["timestamp"], row["origin"], 0, row["tree_size"], root)
    assert message == B(row["message"])
    signature, context = B(row["signature"]), B(row["signature_context"])
    assert ml_dsa_44_verify(key.public_key, message, signature, context), "a valid ML-DSA-44 signature in its context"
    assert not ml_dsa_44_verify(key.public_key, message, signature), "C2SP signs in the empty context"
    with pytest.raises(NoteError, match="does not verify"):
        verify_cosignatures(row["note"].encode(), [key])
    spec_key = c.PublicKey(row["origin"], c.COSIGNATURE_ML_DSA_44, B(row["public_key"]))
    assert spec_key.key_id.hex() == row["key_id"]
    with pytest.raises(c.SpecViolation, match="does not verify"):
        c.open_checkpoint(row["note"].encode(), [spec_key])
    # The same key signing as C2SP says (hedged, so checked by verifying): accepted by both readings.
    ours = (row["text"] + "\n" + cosigner.cosign(row["text"], row["timestamp"])).encode()
    assert verify_cosignatures(ours, [key]) == {row["origin"]: row["timestamp"]}
    assert c.open_checkpoint(ours, [spec_key])[1] == {spec_key: row["timestamp"]}
