"""Keys and signatures (format v1 §2): Ed25519 verification, key IDs, verifier keys, fingerprints,
PEM files, and pinning a key from the command line."""

import base64
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.errors import FormatError, Problem, VerifyError
from generator.verifier.core.formats import HEX64_RE, check_keys, is_safe_path, is_time, is_valid_key_name, sha256_hex
from generator.verifier.core.sodium import NACL, verify_detached
from generator.verifier.core.text import show, type_name

KEY_STATUSES = ("active", "retired", "revoked")
# C2SP signed-note: the signature type byte of an Ed25519 key.
_ALG_ED25519 = b"\x01"
# DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 key bytes follow.
_SPKI_ED25519_PREFIX = bytes.fromhex("302a300506032b6570032100")
# Keys whose private half is published (the demo program's, in the project's repository):
# anyone can sign with them, so a site they sign proves nothing, however well it verifies.
PUBLISHED_PRIVATE_KEYS = frozenset(
    {
        "SHA256:1f4dd2f8d7bced8f341897bd961d73084b9ae5ec03a172e574d197012b534c13",  # the first, rotated out
        "SHA256:13fa4089af669bb603a137d0ff19e2ff39fa83fc2fd6947f0454bd6b240a7183",
    }
)
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


def parse_verifier_key(
    vkey: str, typed_key: Callable[[bytes], bytes], key_id_of: Callable[[str, bytes], bytes]
) -> tuple[str, bytes, bytes]:
    """The name, key ID and public key of a C2SP signed-note verifier key,
    `<name>+<8 hex key ID>+<base64(type ‖ key)>` (the base64 part may hold '+'): the one reading
    of the grammar, for a log's note keys and a witness's cosigner keys alike. What differs by
    kind of key is given: `typed_key` takes the decoded type-and-key bytes and returns the key
    or raises FormatError if the type or length is not its kind's; `key_id_of` gives the key ID
    the name and key must have."""
    parts = vkey.split("+", 2)
    if len(parts) != 3:
        raise FormatError("a verifier key has the form <name>+<key ID>+<base64 key>")
    name, hexid, b64 = parts
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    if not re.fullmatch(r"[0-9a-f]{8}", hexid):
        raise FormatError(f"key ID {hexid!r} is not 8 lowercase hex digits")
    public_key = typed_key(b64decode_strict(b64))
    kid = key_id_of(name, public_key)
    if kid.hex() != hexid:
        raise FormatError(f"key ID {hexid} does not match the name and key (they give {kid.hex()})")
    return name, kid, public_key


def _note_key(raw: bytes) -> bytes:
    if len(raw) != 33 or raw[:1] != _ALG_ED25519:
        raise FormatError("the key is not an Ed25519 key (0x01 followed by 32 bytes)")
    return raw[1:]


def parse_vkey(vkey: str) -> VerifierKey:
    """Parse a note (log) key, `<name>+<8 hex key ID>+<base64(0x01 ‖ 32-byte key)>`."""
    if not isinstance(vkey, str):
        raise FormatError(f"a verifier key is a string, not {type_name(vkey)}")
    return VerifierKey(*parse_verifier_key(vkey, _note_key, key_id))


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
    return der[len(_SPKI_ED25519_PREFIX) :]


def check_key_pin(pin: str) -> None:
    """Raise FormatError unless `pin` is a verifier key or a `SHA256:<64 hex>` fingerprint."""
    pin = pin.strip()
    if pin.startswith("SHA256:"):
        if not HEX64_RE.fullmatch(pin[7:]):
            raise FormatError("a fingerprint is SHA256: followed by 64 lowercase hex digits")
    else:
        parse_vkey(pin)


# ---------------------------------------------------------------------------------------------
# keys.json (format v1 §2): one rule set, for the published document and the program's own copy


PUBLISHED_KEY_MEMBERS = ("vkey", "public_key", "fingerprint", "pem", "valid_from", "valid_until", "status")
DATA_KEY_MEMBERS = ("vkey", "valid_from", "valid_until", "status")


@dataclass(frozen=True)
class KeyRow:
    """One key as keys.json lists it, its rules already checked."""

    key: VerifierKey
    valid_from: str
    valid_until: str | None
    status: str
    reason: str | None
    pem: str | None  # the PEM file's site path (published keys only)


def key_rows(rows: Any, origin: str | None, published: bool) -> tuple[list[KeyRow], list[Problem]]:
    """The keys of a keys.json `keys` list (every one with a valid shape and verifier key, even
    if it breaks another rule), and every rule they break (format v1 §2): well-formed
    verifier keys named by the origin, the published public key and fingerprint agreeing with
    them, known statuses, a reason for a revoked key, times in order, no key twice, and exactly
    one active key in v1. `published` is the site's document (with public_key, fingerprint and
    pem); otherwise the program's own data/keys.json."""
    if not isinstance(rows, list) or not rows:
        return [], [Problem("must be a non-empty list of keys", where="keys", found=show(rows))]
    members = PUBLISHED_KEY_MEMBERS if published else DATA_KEY_MEMBERS
    out: list[KeyRow] = []
    problems: list[Problem] = []
    previous_from = ""
    seen: set[str] = set()
    for i, k in enumerate(rows):
        w = f"keys[{i}]"
        shape = check_keys(k, members, ("reason",), where=w)
        if shape:
            problems += shape
            continue
        try:
            vk = parse_vkey(k["vkey"])
        except FormatError as e:
            problems.append(Problem(f"vkey: {e}", where=f"{w}.vkey", found=show(k["vkey"])))
            continue
        if origin is not None and vk.name != origin:
            problems.append(Problem("key name must be the origin", where=f"{w}.vkey", expected=origin, found=vk.name))
        if vk.vkey in seen:
            problems.append(Problem("the same key is listed twice", where=f"{w}.vkey", found=vk.vkey))
        seen.add(vk.vkey)
        if published:
            problems += _published_key_problems(k, vk, w)
        problems += _key_status_problems(k, w)
        if not (is_time(k["valid_from"]) and k["valid_from"] >= previous_from):
            problems.append(
                Problem(
                    "valid_from malformed or out of order",
                    where=f"{w}.valid_from",
                    expected=f"YYYY-MM-DDTHH:MM:SSZ, {previous_from or 'the first'} or later",
                    found=show(k["valid_from"]),
                )
            )
        else:
            previous_from = k["valid_from"]
        if not (k["valid_until"] is None or is_time(k["valid_until"])):
            problems.append(
                Problem("valid_until must be a time or null", where=f"{w}.valid_until", found=show(k["valid_until"]))
            )
        if published and not is_safe_path(k["pem"]):
            problems.append(Problem("unsafe or malformed path", where=f"{w}.pem", found=show(k["pem"])))
        # Kept with its problems: a reader still learns which key the site claims, and what
        # else it publishes is checked against that key.
        out.append(
            KeyRow(
                vk,
                str(k["valid_from"]),
                k["valid_until"] if is_time(k["valid_until"]) else None,
                str(k["status"]),
                k["reason"] if isinstance(k.get("reason"), str) else None,
                k["pem"] if published and is_safe_path(k["pem"]) else None,
            )
        )
    active = sum(1 for k in rows if isinstance(k, dict) and k.get("status") == "active")
    if active != 1:
        problems.append(Problem("v1 has exactly one active key", where="keys", expected="1", found=str(active)))
    return out, problems


def _published_key_problems(k: dict[str, Any], vk: VerifierKey, w: str) -> list[Problem]:
    """The published document's public key and fingerprint, which must be the vkey's."""
    problems = []
    b64 = base64.b64encode(vk.public_key).decode()
    if k["public_key"] != b64:
        problems.append(
            Problem(
                "public_key differs from the vkey's key",
                where=f"{w}.public_key",
                expected=b64,
                found=show(k["public_key"]),
            )
        )
    if k["fingerprint"] != vk.fingerprint:
        problems.append(
            Problem(
                "fingerprint differs from the key",
                where=f"{w}.fingerprint",
                expected=vk.fingerprint,
                found=show(k["fingerprint"]),
            )
        )
    return problems


def _key_status_problems(k: dict[str, Any], w: str) -> list[Problem]:
    """A known status, and a reason for a revoked key."""
    problems = []
    status = k["status"]
    if status not in KEY_STATUSES:
        problems.append(
            Problem("unknown key status", where=f"{w}.status", expected=" | ".join(KEY_STATUSES), found=show(status))
        )
    reason = k.get("reason")
    if status == "revoked" and not isinstance(reason, str):
        problems.append(
            Problem(
                "a revoked key needs a reason",
                where=f"{w}.reason",
                expected="a string 'reason'",
                found=show(reason),
            )
        )
    return problems
