"""Cosigner keys, private halves: a witness's, a mirror's, and the log's own ML-DSA-44 key, each
of either cosignature type (c2sp.org/tlog-cosignature), generated, stored, loaded and used.

A key file holds one line in the signed-note private key form,
`PRIVATE+KEY+<name>+<key ID>+<base64(type ‖ 32-byte seed)>`, with the cosignature type byte:
0x04 for Ed25519, 0x06 for ML-DSA-44 (whose seed is FIPS 204's ξ, from which the key pair is
derived). A file of a bare 32-byte seed, as earlier witnesses wrote, is read as an Ed25519 key.

ML-DSA-44 signatures are made with `cryptography`, which signs in FIPS 204's hedged mode: two
signatures of one message differ. What is signed once is therefore kept and reused (the build
keeps a checkpoint's lines; a witness records before it signs), never re-made to compare.
"""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import nacl.signing
from cryptography.hazmat.primitives.asymmetric import mldsa

from generator.core.generator_errors import KeyFileError
from generator.core.signing_key import write_new_private_file
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    CosignerKey,
    FormatError,
    b64decode_strict,
    cosignature_line,
    cosignature_message,
    is_valid_key_name,
    parse_checkpoint,
    subtree_message,
)

_PREFIX = "PRIVATE+KEY+"
_TYPE_BYTE = {ED25519: 0x04, ML_DSA_44: 0x06}
_KIND_OF_TYPE = {t: k for k, t in _TYPE_BYTE.items()}


@dataclass(frozen=True)
class Cosigner:
    """A cosigner's private key bound to its name and type."""

    name: str
    kind: str
    seed: bytes = field(repr=False)  # never in a traceback or a log

    def __post_init__(self) -> None:
        if not is_valid_key_name(self.name):
            raise KeyFileError(f"{self.name!r} cannot name a cosigner: no spaces or '+' allowed")
        if self.kind not in _TYPE_BYTE or len(self.seed) != 32:
            raise KeyFileError("a cosigner key is an Ed25519 or ML-DSA-44 key made from a 32-byte seed")

    @property
    def public_key(self) -> bytes:
        if self.kind == ED25519:
            return bytes(nacl.signing.SigningKey(self.seed).verify_key)
        return self._ml_dsa().public_key().public_bytes_raw()

    @property
    def key(self) -> CosignerKey:
        """The public half, as a verifier knows it (its vkey, key ID and fingerprint)."""
        return CosignerKey(self.name, self.public_key, self.kind)

    @property
    def private_text(self) -> str:
        b64 = base64.b64encode(bytes([_TYPE_BYTE[self.kind]]) + self.seed).decode()
        return f"{_PREFIX}{self.name}+{self.key.key_id.hex()}+{b64}"

    def _ml_dsa(self) -> mldsa.MLDSA44PrivateKey:
        return mldsa.MLDSA44PrivateKey.from_seed_bytes(self.seed)

    def _sign(self, message: bytes) -> bytes:
        if self.kind == ED25519:
            return nacl.signing.SigningKey(self.seed).sign(message).signature
        return self._ml_dsa().sign(message)

    def cosign(self, checkpoint_text: str, timestamp: int) -> str:
        """The signature line cosigning the checkpoint whose note text is `checkpoint_text`, made
        at `timestamp` (POSIX seconds; 0 for an ML-DSA-44 signature that claims no time)."""
        if self.kind == ED25519:
            message = cosignature_message(checkpoint_text, timestamp)
        else:
            origin, size, root = parse_checkpoint(checkpoint_text)
            message = subtree_message(self.name, timestamp, origin, 0, size, root)
        return cosignature_line(self.name, self.key.key_id, timestamp, self._sign(message))

    def sign_subtree(self, origin: str, start: int, end: int, root: bytes) -> str:
        """The signature line on the subtree [start, end) of `origin`'s log (ML-DSA-44 only, with
        timestamp 0, as c2sp.org/tlog-witness's sign-subtree answers)."""
        if self.kind != ML_DSA_44:
            raise KeyFileError("only an ML-DSA-44 cosigner can sign a subtree; this key is Ed25519")
        message = subtree_message(self.name, 0, origin, start, end, root)
        return cosignature_line(self.name, self.key.key_id, 0, self._sign(message))


def generate_cosigner(name: str, kind: str) -> Cosigner:
    if kind not in _TYPE_BYTE:
        raise KeyFileError(f"unknown key type {kind!r}; expected {' or '.join(_TYPE_BYTE)}")
    return Cosigner(name, kind, os.urandom(32))


def parse_cosigner(text: str) -> Cosigner:
    """A cosigner private key line; FormatError naming what is wrong."""
    if not text.startswith(_PREFIX):
        raise FormatError("a cosigner key starts with 'PRIVATE+KEY+'")
    parts = text[len(_PREFIX) :].split("+", 2)
    if len(parts) != 3:
        raise FormatError("a cosigner key has the form PRIVATE+KEY+<name>+<key ID>+<base64 key>")
    name, hexid, b64 = parts
    raw = b64decode_strict(b64)
    kind = _KIND_OF_TYPE.get(raw[0]) if raw else None
    if kind is None or len(raw) != 33:
        raise FormatError("not a cosigner key (0x04 for Ed25519 or 0x06 for ML-DSA-44, followed by a 32-byte seed)")
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    cosigner = Cosigner(name, kind, raw[1:])
    if cosigner.key.key_id.hex() != hexid:
        raise FormatError(f"key ID {hexid} does not match the key (it gives {cosigner.key.key_id.hex()})")
    return cosigner


def load_cosigner(path: Path, name: str | None = None) -> Cosigner:
    """The cosigner key in `path`, refusing one that others can read. A bare 32-byte seed (an
    Ed25519 witness key of earlier releases) needs `name`; a key line must carry `name` if given."""
    path = Path(path)
    try:
        st = path.stat()
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyFileError(f"{path}: the key is readable by others; run: chmod 600 {path}")
        data = path.read_bytes()
    except OSError as e:
        raise KeyFileError(f"{path}: cannot read the key: {e}") from None
    if len(data) == 32 and not data.startswith(_PREFIX.encode()):
        if name is None:
            raise KeyFileError(f"{path}: a bare Ed25519 seed; give the cosigner's name")
        return Cosigner(name, ED25519, data)
    try:
        cosigner = parse_cosigner(data.decode("utf-8").strip())
    except (UnicodeDecodeError, FormatError) as e:
        raise KeyFileError(f"{path}: not a cosigner key: {e}") from None
    if name is not None and cosigner.name != name:
        raise KeyFileError(f"{path}: the key is named {cosigner.name!r}, not {name!r}")
    return cosigner


def write_cosigner(path: Path, cosigner: Cosigner) -> None:
    """Write the key with mode 0600, never over an existing file (written whole, fsynced, then
    linked into place: a kill never leaves half a key where the key should be)."""
    write_new_private_file(path, cosigner.private_text.encode() + b"\n", "a file")
