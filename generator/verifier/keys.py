"""Keys and signatures (SPEC §2): Ed25519 verification, key IDs, verifier keys, fingerprints,
PEM files, and pinning a key from the command line."""

import base64
import hashlib
import re
from dataclasses import dataclass

from generator.verifier.errors import FormatError, VerifyError
from generator.verifier.formats import HEX64_RE, is_valid_key_name, sha256_hex
from generator.verifier.sodium import NACL, verify_detached
from generator.verifier.text import type_name

KEY_STATUSES = ("active", "retired", "revoked")
# C2SP signed-note: the signature type byte of an Ed25519 key.
_ALG_ED25519 = b"\x01"
# DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 key bytes follow.
_SPKI_ED25519_PREFIX = bytes.fromhex("302a300506032b6570032100")
# Keys whose private half is published (the demo program's, in the project's repository):
# anyone can sign with them, so a site they sign proves nothing, however well it verifies.
PUBLISHED_PRIVATE_KEYS = frozenset({
    "SHA256:1f4dd2f8d7bced8f341897bd961d73084b9ae5ec03a172e574d197012b534c13",
})
DEMO_KEY_WARNING = (
    "this site is signed with the project's published DEMO key, whose private half anyone can "
    "download: its signatures prove nothing, and its systems, organizations and results are invented"
)


def ed25519_verify(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """True iff `signature` is a valid RFC 8032 Ed25519 signature of `message`."""
    if not NACL:
        raise VerifyError("PyNaCl is not installed: python3 -m pip install pynacl (or apt install python3-nacl)")
    if len(public_key) != 32 or len(signature) != 64:
        return False
    return verify_detached(public_key, signature, message)


def key_id(name: str, public_key: bytes) -> bytes:
    """C2SP signed-note key ID: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + _ALG_ED25519 + public_key).digest()[:4]


def make_vkey(name: str, public_key: bytes) -> str:
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    b64 = base64.b64encode(_ALG_ED25519 + public_key).decode()
    return f"{name}+{key_id(name, public_key).hex()}+{b64}"


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: bytes
    public_key: bytes

    @property
    def vkey(self) -> str:
        return make_vkey(self.name, self.public_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)


def b64decode_strict(text: str) -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise FormatError(f"{text[:40]!r} is not standard padded base64") from None
    if base64.b64encode(raw).decode() != text:
        raise FormatError(f"{text[:40]!r} is not in canonical base64 form")
    return raw


def parse_vkey(vkey: str) -> VerifierKey:
    """Parse `<name>+<8 hex key ID>+<base64(0x01 ‖ key)>`; the base64 part may hold '+'."""
    if not isinstance(vkey, str):
        raise FormatError(f"a verifier key is a string, not {type_name(vkey)}")
    parts = vkey.split("+", 2)
    if len(parts) != 3:
        raise FormatError("a verifier key has the form <name>+<key ID>+<base64 key>")
    name, hexid, b64 = parts
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    if not re.fullmatch(r"[0-9a-f]{8}", hexid):
        raise FormatError(f"key ID {hexid!r} is not 8 lowercase hex digits")
    raw = b64decode_strict(b64)
    if len(raw) != 33 or raw[:1] != _ALG_ED25519:
        raise FormatError("the key is not an Ed25519 key (0x01 followed by 32 bytes)")
    kid = key_id(name, raw[1:])
    if kid.hex() != hexid:
        raise FormatError(f"key ID {hexid} does not match the name and key (they give {kid.hex()})")
    return VerifierKey(name, kid, raw[1:])


def fingerprint(public_key: bytes) -> str:
    return "SHA256:" + sha256_hex(public_key)


def public_key_pem(public_key: bytes) -> bytes:
    """A PEM SubjectPublicKeyInfo file of an Ed25519 key, as `openssl` reads it."""
    b64 = base64.b64encode(_SPKI_ED25519_PREFIX + public_key).decode()
    return f"-----BEGIN PUBLIC KEY-----\n{b64}\n-----END PUBLIC KEY-----\n".encode()


def public_key_from_pem(pem: bytes) -> bytes:
    lines = pem.decode("ascii", "replace").strip().splitlines()
    if len(lines) < 3 or lines[0] != "-----BEGIN PUBLIC KEY-----" or lines[-1] != "-----END PUBLIC KEY-----":
        raise FormatError("not a PEM public key")
    der = b64decode_strict("".join(lines[1:-1]))
    if len(der) != 44 or not der.startswith(_SPKI_ED25519_PREFIX):
        raise FormatError("not an Ed25519 SubjectPublicKeyInfo")
    return der[len(_SPKI_ED25519_PREFIX):]


def check_key_pin(pin: str) -> None:
    """Raise FormatError unless `pin` is a verifier key or a `SHA256:<64 hex>` fingerprint."""
    pin = pin.strip()
    if pin.startswith("SHA256:"):
        if not HEX64_RE.fullmatch(pin[7:]):
            raise FormatError("a fingerprint is SHA256: followed by 64 lowercase hex digits")
    else:
        parse_vkey(pin)
