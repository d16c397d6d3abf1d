"""ECDSA signature verification (FIPS 186-5 section 6.4.2, SEC 1 section 4.1.4) on the NIST
curves P-256 and P-384, with SHA-256, SHA-384 or SHA-512, for a signature in its DER form.

Verification only, on public values: no constant-time care is needed. The public key is an
uncompressed SEC 1 point checked to lie on the curve (both curves have cofactor 1, so a point on
the curve other than infinity is in the group G generates); r and s must lie in [1, n-1]; the
signature must be the DER SEQUENCE of the two INTEGERs and nothing else.
"""

import hashlib
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.der import der_integer, der_read, der_sequence


@dataclass(frozen=True)
class EcCurve:
    """A short Weierstrass curve y^2 = x^3 - 3x + b over the prime field of p, with a generator
    (gx, gy) of prime order n (the parameters of SEC 2 section 2.4.2 and 2.5.1, FIPS 186-5)."""

    name: str
    oid: str
    p: int
    b: int
    gx: int
    gy: int
    n: int

    @property
    def field_bytes(self) -> int:
        return (self.p.bit_length() + 7) // 8


EC_P256 = EcCurve(
    name="P-256",
    oid="1.2.840.10045.3.1.7",  # prime256v1 / secp256r1
    p=0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF,
    b=0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
    gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
    n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
)
EC_P384 = EcCurve(
    name="P-384",
    oid="1.3.132.0.34",  # secp384r1
    p=int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFF", 16),
    b=int("B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF", 16),
    gx=int("AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7", 16),
    gy=int("3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F", 16),
    n=int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973", 16),
)
EC_CURVES = {curve.oid: curve for curve in (EC_P256, EC_P384)}
EC_HASHES = ("sha256", "sha384", "sha512")

# A point in Jacobian coordinates (X, Y, Z) stands for (X/Z^2, Y/Z^3); Z = 0 is the point at infinity.
_EcJacobian = tuple[int, int, int]
_EC_INFINITY: _EcJacobian = (1, 1, 0)


@dataclass(frozen=True)
class EcPublicKey:
    """A public key: a point (x, y) of the curve other than infinity."""

    curve: EcCurve
    x: int
    y: int


def ec_public_key(curve: EcCurve, point: bytes) -> EcPublicKey:
    """The key an uncompressed SEC 1 point (04 || X || Y) encodes, refused unless the point lies
    on the curve (SEC 1 section 3.2.2.1: with cofactor 1 that is all a full check needs)."""
    size = curve.field_bytes
    if point[:1] in (b"\x02", b"\x03"):
        raise FormatError(f"a compressed {curve.name} point (only the uncompressed form 04 || X || Y is read)")
    if len(point) != 1 + 2 * size or point[0] != 0x04:
        raise FormatError(f"a {curve.name} public key that is not an uncompressed point of {1 + 2 * size} bytes")
    x = int.from_bytes(point[1 : 1 + size], "big")
    y = int.from_bytes(point[1 + size :], "big")
    if x >= curve.p or y >= curve.p:
        raise FormatError(f"a {curve.name} public key with a coordinate outside the field")
    if (y * y - (x * x * x - 3 * x + curve.b)) % curve.p:
        raise FormatError(f"a {curve.name} public key that is not a point of the curve")
    return EcPublicKey(curve, x, y)


def _ec_double(point: _EcJacobian, p: int) -> _EcJacobian:
    # "dbl-2001-b" of the Explicit-Formulas Database, for a = -3.
    x1, y1, z1 = point
    if z1 == 0 or y1 == 0:
        return _EC_INFINITY
    delta = z1 * z1 % p
    gamma = y1 * y1 % p
    beta = x1 * gamma % p
    alpha = 3 * (x1 - delta) * (x1 + delta) % p
    x3 = (alpha * alpha - 8 * beta) % p
    z3 = ((y1 + z1) * (y1 + z1) - gamma - delta) % p
    y3 = (alpha * (4 * beta - x3) - 8 * gamma * gamma) % p
    return x3, y3, z3


def _ec_add(one: _EcJacobian, two: _EcJacobian, p: int) -> _EcJacobian:
    """The sum of two points, either of which may be infinity or equal to the other or to its
    negation (the cases an adversarial signature aims at)."""
    x1, y1, z1 = one
    x2, y2, z2 = two
    if z1 == 0:
        return two
    if z2 == 0:
        return one
    z1z1, z2z2 = z1 * z1 % p, z2 * z2 % p
    u1, u2 = x1 * z2z2 % p, x2 * z1z1 % p
    s1, s2 = y1 * z2 * z2z2 % p, y2 * z1 * z1z1 % p
    if u1 == u2:
        return _ec_double(one, p) if s1 == s2 else _EC_INFINITY
    h = (u2 - u1) % p
    r = (s2 - s1) % p
    hh = h * h % p
    hhh = h * hh % p
    v = u1 * hh % p
    x3 = (r * r - hhh - 2 * v) % p
    y3 = (r * (v - x3) - s1 * hhh) % p
    z3 = h * z1 * z2 % p
    return x3, y3, z3


def _ec_combination(curve: EcCurve, u1: int, u2: int, key: EcPublicKey) -> _EcJacobian:
    """u1*G + u2*Q, by one pass of doublings over the bits of both scalars (Shamir's trick)."""
    p = curve.p
    g: _EcJacobian = (curve.gx, curve.gy, 1)
    q: _EcJacobian = (key.x, key.y, 1)
    table = (_EC_INFINITY, g, q, _ec_add(g, q, p))
    acc = _EC_INFINITY
    for i in range(max(u1.bit_length(), u2.bit_length()) - 1, -1, -1):
        acc = _ec_double(acc, p)
        index = (u1 >> i & 1) | (u2 >> i & 1) << 1
        if index:
            acc = _ec_add(acc, table[index], p)
    return acc


def ec_signature_values(signature: bytes) -> tuple[int, int]:
    """(r, s) of an ECDSA signature in its DER form: SEQUENCE { INTEGER r, INTEGER s }."""
    r_element, s_element = der_sequence(der_read(signature, "the ECDSA signature"), "the ECDSA signature", 2, 2)
    return der_integer(r_element, "the ECDSA signature's r"), der_integer(s_element, "the ECDSA signature's s")


def ecdsa_verify(key: EcPublicKey, hash_name: str, message: bytes, signature: bytes) -> bool:
    """Whether `signature` (DER) is a valid ECDSA signature by `key` on `message`, hashed with
    `hash_name`; False also for a signature that is not in its DER form."""
    if hash_name not in EC_HASHES:
        raise FormatError(f"ECDSA with the hash {hash_name!r} is not supported (SHA-256, SHA-384, SHA-512 are)")
    curve = key.curve
    try:
        r, s = ec_signature_values(signature)
    except FormatError:
        return False
    if not (1 <= r < curve.n and 1 <= s < curve.n):
        return False
    digest = hashlib.new(hash_name, message).digest()
    # FIPS 186-5 6.4.2 step 4: the leftmost bits of the hash, as many as n has.
    e = int.from_bytes(digest, "big") >> max(0, 8 * len(digest) - curve.n.bit_length())
    w = pow(s, -1, curve.n)
    x, _, z = _ec_combination(curve, e * w % curve.n, r * w % curve.n, key)
    if z == 0:
        return False
    affine_x = x * pow(z * z, -1, curve.p) % curve.p
    return affine_x % curve.n == r
