"""PyNaCl, and libsodium's detached Ed25519 functions reached through ctypes.

Why the detour: PyNaCl's `verify` and `sign` copy the message two or three times (signature +
message, an output buffer, the returned bytes): three copies of a 160 MB ledger. libsodium's
detached functions take a pointer to the caller's bytes. `crypto_sign_open`, which PyNaCl
calls, is itself built on `crypto_sign_verify_detached`, so both accept exactly the same
signatures; the tests check both paths on the RFC 8032 vectors. Where the library cannot be
reached this way, PyNaCl's own API is used.
"""

import ctypes
from typing import Any

try:
    import nacl.exceptions
    import nacl.signing

    NACL = True
except ImportError:  # pragma: no cover - exercised by hand on machines without PyNaCl
    NACL = False


def sodium_function(name: str, argtypes: list[Any]) -> Any:
    """A libsodium function from PyNaCl's own library, through ctypes, or None."""
    if not NACL:
        return None
    try:
        from nacl import _sodium

        f = getattr(ctypes.CDLL(_sodium.__file__), name)
    except (ImportError, OSError, AttributeError):
        return None
    f.argtypes = argtypes
    f.restype = ctypes.c_int
    return f


_VERIFY_DETACHED = sodium_function(
    "crypto_sign_verify_detached", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p]
)


def verify_detached(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """libsodium's verdict on a 64-byte signature by a 32-byte key (PyNaCl must be there)."""
    if _VERIFY_DETACHED is not None:
        return bool(_VERIFY_DETACHED(bytes(signature), bytes(message), len(message), bytes(public_key)) == 0)
    try:
        nacl.signing.VerifyKey(public_key).verify(message, signature)
        return True
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.ValueError, nacl.exceptions.TypeError):
        return False
