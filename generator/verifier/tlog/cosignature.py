"""Witness cosignatures (c2sp.org/tlog-cosignature): cosigner keys and their vkeys, the signed
messages of both types, the signature line, and checking a checkpoint's cosignatures and a log's
own signature lines of either type.

A cosignature is a signed-note signature line on a checkpoint,

    — <cosigner name> base64(key ID ‖ u64 big-endian timestamp ‖ signature)

of one of two types, told apart by the byte in the key ID and the vkey:

- Ed25519 (0x04): key ID = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ 32-byte key)[:4], a 64-byte signature
  over `cosignature/v1\\ntime <timestamp>\\n` followed by the whole note text (extension lines
  included). The message does not hold the cosigner's name, so one key must serve one cosigner.
- ML-DSA-44 (0x06, FIPS 204): key ID = SHA-256(name ‖ 0x0A ‖ 0x06 ‖ 1312-byte key)[:4], a
  2420-byte signature (pure ML-DSA, empty context) over the `subtree/v1` message: the label
  `subtree/v1\\n\\0`, the cosigner's name, the timestamp, the log's origin, the subtree's start
  and end and its root hash. A checkpoint is the subtree [0, size). Extension lines are not
  signed. A timestamp of 0 makes no claim that the tree is the largest the cosigner has seen,
  which is how a log signs its own checkpoint in this format (it has no clock to claim).

A vkey of type 0x01 is a note key, as a log signs with; a witness's signatures do not match it.
"""

import base64
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError, NoteError
from generator.verifier.core.formats import is_valid_key_name
from generator.verifier.core.note import note_signature_line, parse_checkpoint, split_note
from generator.verifier.core.public_keys import VerifierKey, ed25519_verify, parse_verifier_key
from generator.verifier.crypto.mldsa import ML_DSA_44_PUBLIC_KEY_SIZE, ML_DSA_44_SIGNATURE_SIZE, ml_dsa_44_verify

ED25519 = "ed25519"
ML_DSA_44 = "ml-dsa-44"
COSIGNATURE_KINDS = (ED25519, ML_DSA_44)
# c2sp.org/signed-note signature types.
_TYPE_BYTE = {ED25519: 0x04, ML_DSA_44: 0x06}
_KIND_OF_TYPE = {t: k for k, t in _TYPE_BYTE.items()}
_KEY_SIZE = {ED25519: 32, ML_DSA_44: ML_DSA_44_PUBLIC_KEY_SIZE}
_SIGNATURE_SIZE = {ED25519: 64, ML_DSA_44: ML_DSA_44_SIGNATURE_SIZE}
KIND_LABEL = {ED25519: "Ed25519", ML_DSA_44: "ML-DSA-44"}
_COSIG_TYPE_NOTE_ED25519 = 0x01
_COSIG_HEADER = b"cosignature/v1\n"
_SUBTREE_LABEL = b"subtree/v1\n\x00"
MAX_COSIGNATURE_TIMESTAMP = 2**63 - 1
_MAX_U64 = 2**64 - 1


def cosignature_key_id(name: str, public_key: bytes, kind: str = ED25519) -> bytes:
    """A cosigner's key ID: SHA-256(name ‖ 0x0A ‖ type byte ‖ public key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([_TYPE_BYTE[kind]]) + public_key).digest()[:4]


@dataclass(frozen=True)
class CosignerKey:
    """A cosigner's public key as a verifier knows it: the name on its signature lines, the key
    (32 bytes for Ed25519, 1312 for ML-DSA-44) and its type."""

    name: str
    public_key: bytes
    kind: str = ED25519

    def __post_init__(self) -> None:
        if not is_valid_key_name(self.name):
            raise FormatError(f"{self.name!r} is not a valid key name")
        if self.kind not in _TYPE_BYTE:
            raise FormatError(f"unknown cosignature type {self.kind!r}; expected one of {', '.join(_TYPE_BYTE)}")
        if not isinstance(self.public_key, bytes) or len(self.public_key) != _KEY_SIZE[self.kind]:
            raise FormatError(f"an {KIND_LABEL[self.kind]} cosigner key is {_KEY_SIZE[self.kind]} bytes")

    @property
    def key_id(self) -> bytes:
        return cosignature_key_id(self.name, self.public_key, self.kind)

    @property
    def vkey(self) -> str:
        return make_cosigner_vkey(self.name, self.public_key, self.kind)

    @property
    def fingerprint(self) -> str:
        """`SHA256:` and the hex SHA-256 of the raw public key, as for the log's keys."""
        return "SHA256:" + hashlib.sha256(self.public_key).hexdigest()

    @property
    def label(self) -> str:
        return KIND_LABEL[self.kind]


def make_cosigner_vkey(name: str, public_key: bytes, kind: str = ED25519) -> str:
    """`<name>+<hex key ID>+<base64(type byte ‖ key)>`."""
    key = CosignerKey(name, public_key, kind)  # checks the name and the key's length
    b64 = base64.b64encode(bytes([_TYPE_BYTE[kind]]) + key.public_key).decode()
    return f"{name}+{key.key_id.hex()}+{b64}"


def _cosigner_kind(raw: bytes) -> str:
    kind = _KIND_OF_TYPE.get(raw[0]) if raw else None
    if raw and raw[0] == _COSIG_TYPE_NOTE_ED25519:
        raise FormatError(
            "this is an Ed25519 note key (type 0x01), as a log signs with; a cosigner's key is of type 0x04 "
            "(Ed25519) or 0x06 (ML-DSA-44)"
        )
    if kind is None or len(raw) != 1 + _KEY_SIZE[kind]:
        raise FormatError(
            "the key is not a cosigner key (0x04 followed by a 32-byte Ed25519 key, or 0x06 followed by a "
            "1312-byte ML-DSA-44 key)"
        )
    return kind


def parse_cosigner_vkey(vkey: str) -> CosignerKey:
    """Parse a cosigner vkey, `<name>+<8 hex key ID>+<base64(type ‖ key)>` of type 0x04 or 0x06,
    and check that the key ID is the one the name, type and key give."""
    if not isinstance(vkey, str):
        raise FormatError("a verifier key is a string")
    kinds: list[str] = []

    def key_of(raw: bytes) -> bytes:
        kinds.append(_cosigner_kind(raw))
        return raw[1:]

    def key_id_of(name: str, public_key: bytes) -> bytes:
        return cosignature_key_id(name, public_key, kinds[-1])

    name, _, public_key = parse_verifier_key(vkey, key_of, key_id_of)
    return CosignerKey(name, public_key, kinds[-1])


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


def _short_bytes(value: str, what: str) -> bytes:
    raw = value.encode("utf-8")
    if not 1 <= len(raw) <= 255:
        raise FormatError(f"the {what} is {len(raw)} bytes; the subtree/v1 message holds 1 to 255")
    return bytes([len(raw)]) + raw


def subtree_message(cosigner: str, timestamp: int, origin: str, start: int, end: int, root: bytes) -> bytes:
    """The bytes an ML-DSA-44 cosigner signs (the `cosigned_message` structure): a signature on
    the subtree [start, end) of `origin`'s log with root hash `root`. A checkpoint is the subtree
    [0, size); a subtree that starts elsewhere carries no timestamp."""
    _check_timestamp(timestamp)
    for value in (start, end):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_U64:
            raise FormatError(f"a subtree bound is an unsigned 64-bit integer, not {value!r}")
    if start > end:
        raise FormatError(f"a subtree [{start}, {end}) ends before it starts")
    if start != 0 and timestamp != 0:
        raise FormatError("a subtree that does not start at 0 is signed with timestamp 0")
    if len(root) != 32:
        raise FormatError("a subtree's root hash is 32 bytes")
    return (
        _SUBTREE_LABEL
        + _short_bytes(cosigner, "cosigner name")
        + struct.pack(">Q", timestamp)
        + _short_bytes(origin, "log origin")
        + struct.pack(">QQ", start, end)
        + root
    )


def cosignature_line(name: str, key_id: bytes, timestamp: int, signature: bytes) -> str:
    """The note signature line of a cosignature of either type, newline included."""
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    if len(key_id) != 4 or len(signature) not in _SIGNATURE_SIZE.values():
        raise FormatError("a cosignature has a 4-byte key ID and a 64-byte Ed25519 or 2420-byte ML-DSA-44 signature")
    _check_timestamp(timestamp)
    return note_signature_line(name, key_id, timestamp.to_bytes(8, "big") + signature)


def cosignature_verifies(key: CosignerKey, text: str, timestamp: int, signature: bytes) -> bool:
    """Whether `signature` is `key`'s cosignature, made at `timestamp`, of the checkpoint whose
    note text is `text` (origin, size and root read from it: FormatError if it is no checkpoint)."""
    if len(signature) != _SIGNATURE_SIZE[key.kind]:
        return False
    if key.kind == ED25519:
        return ed25519_verify(key.public_key, signature, cosignature_message(text, timestamp))
    origin, size, root = parse_checkpoint(text)
    try:
        message = subtree_message(key.name, timestamp, origin, 0, size, root)
    except FormatError:
        return False  # an origin of more than 255 bytes: no ML-DSA-44 signature can cover it
    return ml_dsa_44_verify(key.public_key, message, signature)


def subtree_cosignature_verifies(key: CosignerKey, origin: str, start: int, end: int, root: bytes, raw: bytes) -> bool:
    """Whether `raw` (a signature line's bytes: key ID, timestamp, signature) is `key`'s ML-DSA-44
    cosignature of the subtree [start, end) with root `root`; a subtree not at 0 must carry
    timestamp 0. Ed25519 cosignatures cannot sign a subtree."""
    if key.kind != ML_DSA_44 or len(raw) != 12 + ML_DSA_44_SIGNATURE_SIZE or raw[:4] != key.key_id:
        return False
    timestamp = int.from_bytes(raw[4:12], "big")
    try:
        message = subtree_message(key.name, timestamp, origin, start, end, root)
    except FormatError:
        return False
    return ml_dsa_44_verify(key.public_key, message, raw[12:])


def verify_cosignatures(note_bytes: bytes, witnesses: Sequence[CosignerKey]) -> dict[str, int]:
    """The witnesses that validly cosigned the checkpoint note, by name, with the timestamp of
    each one's cosignature.

    As signed-note asks: a line whose name and key ID are not both a given witness's is ignored
    (the log's own signature among them: checking it is open_note's work); a line that is a
    given witness's must verify, or the note is rejected (NoteError), as it is if it is
    malformed or its text is not a checkpoint. As Go's note.Open, only the first line of each
    witness counts; later ones are dropped unchecked. Timestamps are returned, not judged: a
    caller that rejects cosignatures from the future (the spec allows it) compares them with
    its clock. The names must be distinct (ValueError otherwise): they key the result. A
    cosigner may hold one key of each type under one name; give them one call each.
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
        where = f"{key.label} cosignature by {name} (key ID {raw[:4].hex()})"
        if len(raw) != 12 + _SIGNATURE_SIZE[key.kind]:
            raise NoteError(f"{where} is {len(raw)} bytes, not 4 + 8 + {_SIGNATURE_SIZE[key.kind]}")
        timestamp = int.from_bytes(raw[4:12], "big")
        if timestamp > MAX_COSIGNATURE_TIMESTAMP:
            raise NoteError(f"{where} has timestamp {timestamp}, beyond 2^63-1")
        if not cosignature_verifies(key, text, timestamp, raw[12:]):
            raise NoteError(f"{where} does not verify")
        out[name] = timestamp
    return out


def cosigned_by(note_bytes: bytes, keys: Sequence[CosignerKey]) -> dict[CosignerKey, int]:
    """Which of `keys` validly cosigned the checkpoint note, each with its cosignature's timestamp:
    verify_cosignatures for each key on its own, since two keys may share a name (a cosigner's
    Ed25519 and ML-DSA-44 keys, two witnesses of a policy). NoteError as verify_cosignatures."""
    out: dict[CosignerKey, int] = {}
    for key in keys:
        found = verify_cosignatures(note_bytes, [key])
        if key.name in found:
            out[key] = found[key.name]
    return out


def log_signature_lines(note: bytes, keys: Sequence[VerifierKey | CosignerKey]) -> dict[VerifierKey | CosignerKey, str]:
    """The signature lines of `note` by a log's `keys` (Ed25519 note keys, ML-DSA-44 keys) that
    verify, by key, in the note's order (the first of each key: a repeated line is dropped
    unchecked, as Go's note.Open does). NoteError if a line by one of the keys fails, or if none of
    them signed."""
    text, lines = split_note(note)
    known = {(key.name, key.key_id): key for key in keys}
    verified: dict[VerifierKey | CosignerKey, str] = {}
    seen: set[tuple[str, bytes]] = set()
    for name, raw in lines:
        key = known.get((name, raw[:4]))
        if key is None or (name, raw[:4]) in seen:
            continue
        seen.add((name, raw[:4]))
        label = "ML-DSA-44 " if isinstance(key, CosignerKey) else ""
        if not _log_line_verifies(key, text, raw):
            raise NoteError(f"{label}signature by {name} (key ID {raw[:4].hex()}) does not verify")
        verified[key] = note_signature_line(name, raw[:4], raw[4:])
    if not verified:
        raise NoteError("no signature by a known key of the log")
    return verified


def _log_line_verifies(key: VerifierKey | CosignerKey, text: str, raw: bytes) -> bool:
    if isinstance(key, VerifierKey):
        return ed25519_verify(key.public_key, raw[4:], text.encode("utf-8"))
    if len(raw) < 12:
        return False
    try:
        return cosignature_verifies(key, text, int.from_bytes(raw[4:12], "big"), raw[12:])
    except FormatError:  # a timestamp beyond 2^63-1, or a text that is no checkpoint
        return False
