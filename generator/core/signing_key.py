"""The signing key: generated, stored, loaded and used to sign files and notes.

The key file uses the C2SP signed-note private key format that golang.org/x/mod/sumdb/note
reads (`PRIVATE+KEY+<name>+<key ID>+<base64(0x01 ‖ seed)>`), so the key carries its name (the
program's origin) and other tools can use it as is.
"""

from __future__ import annotations

import base64
import ctypes
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import nacl.signing

from generator.core.generator_errors import KeyFileError
from generator.verifier import (
    FormatError,
    VerifierKey,
    b64decode_strict,
    is_valid_key_name,
    key_id,
    note_signature_line,
    public_key_pem,
    sodium_function,
)

_SKEY_PREFIX = "PRIVATE+KEY+"
# Signs a large document in place instead of through PyNaCl's copies (see verify.sodium_function).
_SIGN_DETACHED = sodium_function(
    "crypto_sign_detached",
    [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p],
)


@dataclass(frozen=True)
class Signer:
    """An Ed25519 signing key bound to its name (the origin)."""

    name: str
    seed: bytes = field(repr=False)  # never in a traceback or a log

    @property
    def _key(self) -> nacl.signing.SigningKey:
        return nacl.signing.SigningKey(self.seed)

    @property
    def public_key(self) -> bytes:
        return bytes(self._key.verify_key)

    @property
    def key_id(self) -> bytes:
        return key_id(self.name, self.public_key)

    @property
    def verifier(self) -> VerifierKey:
        """The public half, as the verifier knows it: one place for the vkey and fingerprint."""
        return VerifierKey(self.name, self.key_id, self.public_key)

    @property
    def vkey(self) -> str:
        return self.verifier.vkey

    @property
    def fingerprint(self) -> str:
        return self.verifier.fingerprint

    @property
    def pem(self) -> bytes:
        return public_key_pem(self.public_key)

    @property
    def skey(self) -> str:
        b64 = base64.b64encode(b"\x01" + self.seed).decode()
        return f"{_SKEY_PREFIX}{self.name}+{self.key_id.hex()}+{b64}"

    def sign(self, message: bytes) -> bytes:
        """A raw 64-byte Ed25519 signature (a detached `.sig` file's contents)."""
        if _SIGN_DETACHED is not None:
            sig = ctypes.create_string_buffer(64)
            secret = self.seed + self.public_key  # libsodium's 64-byte secret key
            if _SIGN_DETACHED(sig, None, message, len(message), secret) == 0:
                return sig.raw
        return self._key.sign(message).signature

    def sign_note(self, text: str) -> bytes:
        """A C2SP signed note: the text, an empty line, one signature line."""
        if not text.endswith("\n"):
            raise ValueError("a note's text must end with a newline")
        sig = self.sign(text.encode("utf-8"))
        return (text + "\n" + note_signature_line(self.name, self.key_id, sig)).encode("utf-8")


def generate_signer(name: str) -> Signer:
    if not is_valid_key_name(name):
        raise KeyFileError(f"{name!r} cannot name a key: no spaces or '+' allowed")
    return Signer(name, bytes(nacl.signing.SigningKey.generate()))


def parse_signer_key(skey: str) -> Signer:
    """Parse a signed-note private key; raise FormatError naming what is wrong."""
    if not skey.startswith(_SKEY_PREFIX):
        raise FormatError("a signing key starts with 'PRIVATE+KEY+'")
    parts = skey[len(_SKEY_PREFIX) :].split("+", 2)
    if len(parts) != 3:
        raise FormatError("a signing key has the form PRIVATE+KEY+<name>+<key ID>+<base64 key>")
    name, hexid, b64 = parts
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    raw = b64decode_strict(b64)
    if len(raw) != 33 or raw[0] != 1:
        raise FormatError("not an Ed25519 key (0x01 followed by a 32-byte seed)")
    signer = Signer(name, raw[1:])
    if signer.key_id.hex() != hexid:
        raise FormatError(f"key ID {hexid} does not match the key (it gives {signer.key_id.hex()})")
    return signer


def write_key(path: Path, signer: Signer) -> None:
    """Write the key with mode 0600; refuse to overwrite any existing file."""
    write_new_private_file(path, signer.skey.encode() + b"\n", "a key file")


def write_new_private_file(path: Path, data: bytes, what: str = "a file") -> None:
    """Write `data` to a new file at `path`, mode 0600, never over an existing file: written whole
    to a temporary file first, fsynced and linked into place (the folder fsynced too), so that a
    kill never leaves half a key where the key should be."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise KeyFileError(f"{path}: {what} is already there; refusing to overwrite it")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover of a killed run; a link there is removed, never followed
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # O_CREAT's mode is filtered by the umask; 0600 is what we promise
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails, like O_EXCL, if a file appeared meanwhile
        except FileExistsError:
            raise KeyFileError(f"{path}: {what} is already there; refusing to overwrite it") from None
    finally:
        tmp.unlink(missing_ok=True)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# A rotated-out signing key, kept only until the build that signs the hand-over checkpoint.
RETIRED_KEYS = "retired-keys"


def retired_key_file(private: Path, key_id_hex: str) -> Path:
    return private / RETIRED_KEYS / f"{key_id_hex}.key"


def load_key(path: Path, program_has_keys: bool = False) -> Signer:
    """Load the signing key, refusing a missing, malformed or group/world-readable one.

    `program_has_keys`: the program already published a key (keys.json), so a missing key file
    means the wrong private directory (a new shell without TRANSPARENCY_PRIVATE), never a reason
    to make a new key."""
    try:
        st = path.stat()
    except FileNotFoundError:
        what = "no signing key there" if path.parent.is_dir() else f"no private directory at {path.parent}"
        if program_has_keys:
            advice = (
                "this program already has its key (keys.json): point --private (or TRANSPARENCY_PRIVATE) at the "
                "program's private directory, the one that holds its signing.key"
            )
        else:
            advice = (
                "create one with 'transparency keygen' or point --private (or TRANSPARENCY_PRIVATE) at the "
                "directory that holds signing.key"
            )
        raise KeyFileError(f"{path}: {what}; {advice}") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"{path}: the signing key is readable by others (mode {stat.S_IMODE(st.st_mode):04o}); "
            f"run: chmod 600 {path}"
        )
    try:
        text = path.read_text(encoding="utf-8").strip()
        return parse_signer_key(text)
    except (OSError, UnicodeDecodeError) as e:
        raise KeyFileError(f"{path}: cannot read the signing key: {e}") from None
    except FormatError as e:
        raise KeyFileError(f"{path}: not a signing key: {e}") from None
