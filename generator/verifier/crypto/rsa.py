"""RSA signature verification (RFC 8017): RSASSA-PKCS1-v1_5 and RSASSA-PSS with MGF1, over
SHA-256, SHA-384 or SHA-512, for a public key given as its modulus and exponent.

Verification only, on public values: no constant-time care is needed. PKCS #1 v1.5 is checked
by encoding the expected block and comparing (section 8.2.2, the DigestInfo with its NULL
parameters, the one encoding section 9.2 gives), never by parsing the block a signer chose.
"""

import hashlib
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError

# RFC 8017 section 9.2, note 1: the DER of DigestInfo up to the digest itself.
_RSA_DIGEST_INFO_PREFIX = {
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}
RSA_HASHES = tuple(_RSA_DIGEST_INFO_PREFIX)
# A key below 2048 bits is within reach of a well-funded factoring effort (NIST SP 800-131A).
RSA_MIN_BITS = 2048
# Above 16384 bits the modular exponentiation is slow enough to be a way to stall the verifier.
RSA_MAX_BITS = 16384
# A larger exponent is legal but unused; the exponent of a key the site supplies bounds the work of
# each verification (BoringSSL draws the same line at 33 bits).
RSA_MAX_EXPONENT = (1 << 32) + 1


@dataclass(frozen=True)
class RsaPublicKey:
    """An RSA public key: its modulus n and public exponent e."""

    n: int
    e: int

    @property
    def size(self) -> int:
        """k of RFC 8017: the modulus's length in bytes."""
        return (self.n.bit_length() + 7) // 8


def rsa_public_key(n: int, e: int) -> RsaPublicKey:
    """The key (n, e), refused unless it is one an RSA key pair can have at a size used today."""
    if not RSA_MIN_BITS <= n.bit_length() <= RSA_MAX_BITS:
        raise FormatError(f"an RSA modulus of {n.bit_length()} bits (from {RSA_MIN_BITS} to {RSA_MAX_BITS} are read)")
    if n % 2 == 0:
        raise FormatError("an RSA modulus that is even")
    if e < 3 or e % 2 == 0 or e > RSA_MAX_EXPONENT:
        shown = str(e) if e.bit_length() <= 128 else f"{e.bit_length()} bits"
        raise FormatError(f"an RSA public exponent of {shown} (an odd number from 3 to 2^32 + 1 is read)")
    return RsaPublicKey(n, e)


def _rsa_hash(name: str, data: bytes) -> bytes:
    if name not in _RSA_DIGEST_INFO_PREFIX:
        raise FormatError(f"RSA with the hash {name!r} is not supported (SHA-256, SHA-384, SHA-512 are)")
    return hashlib.new(name, data).digest()


def _rsa_open(key: RsaPublicKey, signature: bytes, length: int) -> bytes | None:
    """RSAVP1 of RFC 8017 section 5.2.2 on a signature of k bytes, as `length` bytes, or None when
    the signature is out of range or the result does not fit."""
    if len(signature) != key.size:
        return None
    s = int.from_bytes(signature, "big")
    if s >= key.n:
        return None
    m = pow(s, key.e, key.n)
    if m >= 1 << (8 * length):
        return None
    return m.to_bytes(length, "big")


def rsa_verify_pkcs1v15(key: RsaPublicKey, hash_name: str, message: bytes, signature: bytes) -> bool:
    """RSASSA-PKCS1-V1_5-VERIFY (RFC 8017 section 8.2.2) of `signature` on `message`."""
    digest_info = _RSA_DIGEST_INFO_PREFIX.get(hash_name, b"") + _rsa_hash(hash_name, message)
    if key.size < len(digest_info) + 11:
        return False
    expected = b"\x00\x01" + b"\xff" * (key.size - len(digest_info) - 3) + b"\x00" + digest_info
    return _rsa_open(key, signature, key.size) == expected


def _rsa_mgf1(hash_name: str, seed: bytes, length: int) -> bytes:
    """MGF1 (RFC 8017 appendix B.2.1) with the hash `hash_name`."""
    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.new(hash_name, seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return out[:length]


def rsa_verify_pss(key: RsaPublicKey, hash_name: str, salt_length: int, message: bytes, signature: bytes) -> bool:
    """RSASSA-PSS-VERIFY (RFC 8017 section 8.1.2) of `signature` on `message`, with MGF1 over the
    same hash and the salt length the algorithm's parameters name."""
    m_hash = _rsa_hash(hash_name, message)
    h_len = len(m_hash)
    em_bits = key.n.bit_length() - 1
    em_len = (em_bits + 7) // 8
    if salt_length < 0 or em_len < h_len + salt_length + 2:
        return False
    em = _rsa_open(key, signature, em_len)
    if em is None or em[-1] != 0xBC:
        return False
    masked_db, h = em[: em_len - h_len - 1], em[em_len - h_len - 1 : -1]
    top_bits = 8 * em_len - em_bits  # the leftmost bits of EM that the modulus leaves zero
    if masked_db[0] >> (8 - top_bits):
        return False
    db = bytearray(a ^ b for a, b in zip(masked_db, _rsa_mgf1(hash_name, h, len(masked_db)), strict=True))
    db[0] &= 0xFF >> top_bits
    padding = em_len - h_len - salt_length - 2
    if any(db[:padding]) or db[padding] != 0x01:
        return False
    salt = bytes(db[len(db) - salt_length :]) if salt_length else b""
    return hashlib.new(hash_name, bytes(8) + m_hash + salt).digest() == h
