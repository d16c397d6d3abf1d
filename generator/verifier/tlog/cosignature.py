"""Witness cosignatures (c2sp.org/tlog-cosignature, Ed25519 `cosignature/v1`): cosigner keys and
their vkeys, the signed message, the signature line, and checking a checkpoint's cosignatures.

A cosignature is a signed-note signature line on a checkpoint,

    — <cosigner name> base64(key ID ‖ u64 big-endian timestamp ‖ 64-byte Ed25519 signature)

with key ID = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4], over the message
`cosignature/v1\\ntime <timestamp>\\n` followed by the whole note text (extension lines
included). The message does not hold the cosigner's name, so one key must serve one cosigner.

Only the Ed25519 type (0x04) is supported: ML-DSA-44 cosignatures (0x06) need a library the
verifier does not use. A witness key is a vkey of type 0x04 only: the spec lets an Ed25519
cosigner key be written as a vkey "with signature type 0x04", and a type-0x01 vkey is a note
(log) key, which the witness's signatures do not match.
"""

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError, NoteError
from generator.verifier.core.formats import is_valid_key_name
from generator.verifier.core.note import note_signature_line, parse_checkpoint, split_note
from generator.verifier.core.public_keys import ed25519_verify, parse_verifier_key

# c2sp.org/signed-note signature types.
_COSIG_TYPE_ED25519 = 0x04
_COSIG_TYPE_ML_DSA_44 = 0x06
_COSIG_TYPE_NOTE_ED25519 = 0x01
_COSIG_HEADER = b"cosignature/v1\n"
# key ID (4) ‖ timestamp (8) ‖ Ed25519 signature (64)
_COSIG_RAW_LENGTH = 76
MAX_COSIGNATURE_TIMESTAMP = 2**63 - 1


def cosignature_key_id(name: str, public_key: bytes) -> bytes:
    """The key ID of an Ed25519 cosigner: SHA-256(name ‖ 0x0A ‖ 0x04 ‖ 32-byte key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([_COSIG_TYPE_ED25519]) + public_key).digest()[:4]


@dataclass(frozen=True)
class CosignerKey:
    """A witness's public key as a verifier knows it: the name on its signature lines and the
    32-byte Ed25519 key."""

    name: str
    public_key: bytes

    def __post_init__(self) -> None:
        if not is_valid_key_name(self.name):
            raise FormatError(f"{self.name!r} is not a valid key name")
        if not isinstance(self.public_key, bytes) or len(self.public_key) != 32:
            raise FormatError("an Ed25519 cosigner key is 32 bytes")

    @property
    def key_id(self) -> bytes:
        return cosignature_key_id(self.name, self.public_key)

    @property
    def vkey(self) -> str:
        return make_cosigner_vkey(self.name, self.public_key)


def make_cosigner_vkey(name: str, public_key: bytes) -> str:
    """`<name>+<hex key ID>+<base64(0x04 ‖ key)>`."""
    key = CosignerKey(name, public_key)  # checks the name and the key's length
    b64 = base64.b64encode(bytes([_COSIG_TYPE_ED25519]) + key.public_key).decode()
    return f"{name}+{key.key_id.hex()}+{b64}"


def _cosigner_key(raw: bytes) -> bytes:
    kind = raw[0] if raw else None
    if kind == _COSIG_TYPE_NOTE_ED25519:
        raise FormatError(
            "this is an Ed25519 note key (type 0x01), as a log signs with; a witness's key is a "
            "cosignature/v1 key (type 0x04)"
        )
    if kind == _COSIG_TYPE_ML_DSA_44:
        raise FormatError("ML-DSA-44 cosigner keys (type 0x06) are not supported; only Ed25519 (type 0x04)")
    if kind != _COSIG_TYPE_ED25519 or len(raw) != 33:
        raise FormatError("the key is not an Ed25519 cosigner key (0x04 followed by 32 bytes)")
    return raw[1:]


def parse_cosigner_vkey(vkey: str) -> CosignerKey:
    """Parse a witness vkey, `<name>+<8 hex key ID>+<base64(0x04 ‖ 32-byte key)>`, and check
    that the key ID is the one the name and key give."""
    if not isinstance(vkey, str):
        raise FormatError("a verifier key is a string")
    name, _, public_key = parse_verifier_key(vkey, _cosigner_key, cosignature_key_id)
    return CosignerKey(name, public_key)


def _check_timestamp(timestamp: int) -> None:
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise FormatError("a cosignature timestamp is an integer")
    if not 0 <= timestamp <= MAX_COSIGNATURE_TIMESTAMP:
        raise FormatError(f"cosignature timestamp {timestamp} is outside 0..2^63-1")


def cosignature_message(checkpoint_text: str, timestamp: int) -> bytes:
    """The bytes an Ed25519 cosigner signs: `cosignature/v1`, `time <decimal timestamp>`, then
    the whole note text (every line of the checkpoint, its final newline included)."""
    _check_timestamp(timestamp)
    if not checkpoint_text.endswith("\n"):
        raise FormatError("a note text ends with a newline")
    return _COSIG_HEADER + f"time {timestamp}\n".encode("ascii") + checkpoint_text.encode("utf-8")


def cosignature_line(name: str, key_id: bytes, timestamp: int, signature: bytes) -> str:
    """The note signature line of a cosignature, newline included."""
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    if len(key_id) != 4 or len(signature) != 64:
        raise FormatError("a cosignature has a 4-byte key ID and a 64-byte Ed25519 signature")
    _check_timestamp(timestamp)
    return note_signature_line(name, key_id, timestamp.to_bytes(8, "big") + signature)


def verify_cosignatures(note_bytes: bytes, witnesses: Sequence[CosignerKey]) -> dict[str, int]:
    """The witnesses that validly cosigned the checkpoint note, by name, with the timestamp of
    each one's cosignature.

    As signed-note asks: a line whose name and key ID are not both a given witness's is ignored
    (the log's own signature among them: checking it is open_note's work); a line that is a
    given witness's must verify, or the note is rejected (NoteError), as it is if it is
    malformed or its text is not a checkpoint. As Go's note.Open, only the first line of each
    witness counts; later ones are dropped unchecked. Timestamps are returned, not judged: a
    caller that rejects cosignatures from the future (the spec allows it) compares them with
    its clock. The names must be distinct (ValueError otherwise): they key the result.
    """
    known: dict[tuple[str, bytes], CosignerKey] = {}
    for w in witnesses:
        if any(name == w.name for name, _ in known):
            raise ValueError(f"witness name {w.name!r} is given twice; verify them one at a time")
        known[(w.name, w.key_id)] = w
    text, lines = split_note(note_bytes)
    if any(not line for line in text[:-1].split("\n")):
        raise NoteError("the cosigned note is not a checkpoint: its text holds an empty line")
    try:
        parse_checkpoint(text)
    except FormatError as e:
        raise NoteError(f"the cosigned note is not a checkpoint: {e}") from None
    out: dict[str, int] = {}
    for name, raw in lines:
        key = known.get((name, raw[:4]))
        if key is None or name in out:
            continue
        where = f"cosignature by {name} (key ID {raw[:4].hex()})"
        if len(raw) != _COSIG_RAW_LENGTH:
            raise NoteError(f"{where} is {len(raw)} bytes, not 4 + 8 + 64")
        timestamp = int.from_bytes(raw[4:12], "big")
        if timestamp > MAX_COSIGNATURE_TIMESTAMP:
            raise NoteError(f"{where} has timestamp {timestamp}, beyond 2^63-1")
        if not ed25519_verify(key.public_key, raw[12:], cosignature_message(text, timestamp)):
            raise NoteError(f"{where} does not verify")
        out[name] = timestamp
    return out
