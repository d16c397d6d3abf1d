"""Helpers for the BLS12-381 tests: encoding points the way Zcash compresses them, converting to and
from py_ecc's representations, points on the curves but outside the prime-order subgroups, and
plain exponentiation in Fp12 to check the fast paths against.

Encoding lives here, not in the verifier, because the verifier only ever decodes.
"""

from __future__ import annotations

import hashlib
from typing import Any

from py_ecc.bls.hash import expand_message_xmd
from py_ecc.bls.hash_to_curve import hash_to_G1
from py_ecc.fields import optimized_bls12_381_FQ as FQ
from py_ecc.fields import optimized_bls12_381_FQ2 as FQ2
from py_ecc.fields import optimized_bls12_381_FQ12 as FQ12
from py_ecc.optimized_bls12_381.optimized_curve import normalize
from py_ecc.typing import Optimized_Point3D

from generator.verifier.crypto import bls12_381 as bls
from generator.verifier.crypto.hash_to_g1 import BLS12_381_P, g1_mul

P = BLS12_381_P
G1Affine = tuple[int, int]
G2Affine = tuple[tuple[int, int], tuple[int, int]]
# py_ecc annotates its hash argument as a hash object but calls it: it wants the constructor.
_PY_SHA256: Any = hashlib.sha256


def py_hash_to_g1(message: bytes, dst: bytes) -> G1Affine | None:
    """py_ecc's hash to G1 (BLS12381G1_XMD:SHA-256_SSWU_RO_), as an affine point."""
    return from_py_g1(hash_to_G1(message, dst, _PY_SHA256))


def py_hash_to_g1_projective(message: bytes, dst: bytes) -> Optimized_Point3D[FQ]:
    return hash_to_G1(message, dst, _PY_SHA256)


def py_expand_message_xmd(message: bytes, dst: bytes, length: int) -> bytes:
    return expand_message_xmd(message, dst, length, _PY_SHA256)


def _larger(y: int) -> bool:
    return y > (P - 1) // 2


def encode_g1(point: G1Affine | None) -> bytes:
    """The 48-byte compressed encoding of an affine point of E1 (or of infinity)."""
    if point is None:
        return bytes([0xC0]) + bytes(47)
    x, y = point
    return (x | (1 << 383) | (int(_larger(y)) << 381)).to_bytes(48, "big")


def encode_g2(point: G2Affine | None) -> bytes:
    """The 96-byte compressed encoding of an affine point of the twist: x.c1, then x.c0."""
    if point is None:
        return bytes([0xC0]) + bytes(95)
    (x0, x1), (y0, y1) = point
    sign = _larger(y1) if y1 else _larger(y0)
    return (x1 | (1 << 383) | (int(sign) << 381)).to_bytes(48, "big") + x0.to_bytes(48, "big")


def from_py_g1(point: Optimized_Point3D[FQ]) -> G1Affine | None:
    if point[2] == FQ.zero():
        return None
    x, y = normalize(point)
    return int(x), int(y)


def from_py_g2(point: Optimized_Point3D[FQ2]) -> G2Affine | None:
    if point[2] == FQ2.zero():
        return None
    x, y = normalize(point)
    return (int(x.coeffs[0]), int(x.coeffs[1])), (int(y.coeffs[0]), int(y.coeffs[1]))


def to_py_fp12(value: bls.Fp12) -> FQ12:
    """Our Fp12 element in py_ecc's Fp[W]/(W^12 - 2W^6 + 2). There W^6 = 1 + u as our w^6 is, so
    w maps to W and u to W^6 - 1: the coefficient c0 + c1 u of w^k adds c0 - c1 to W^k and c1 to
    W^(k+6). Our value[0] holds w^0, w^2, w^4 and value[1] holds w^1, w^3, w^5."""
    coefficients = [0] * 12
    for half in (0, 1):
        for i in range(3):
            c0, c1 = value[half][i]
            k = 2 * i + half
            coefficients[k] = (coefficients[k] + c0 - c1) % P
            coefficients[k + 6] = (coefficients[k + 6] + c1) % P
    return FQ12(coefficients)


def fp12_pow(value: bls.Fp12, exponent: int) -> bls.Fp12:
    """value^exponent by plain square-and-multiply, with the general (not cyclotomic) squaring."""
    result = bls.BLS12_381_FP12_ONE
    for bit in bin(exponent)[2:]:
        result = bls._bls_fp12_sqr(result)
        if bit == "1":
            result = bls._bls_fp12_mul(result, value)
    return result


def g1_outside_subgroup(start: int = 1) -> G1Affine:
    """The point of E1 with the smallest x >= start that is not in G1 (E1 has cofactor
    0x396c8c005555e1568c00aaab0000aaab, so nearly every point qualifies)."""
    x = start
    while True:
        rhs = (x**3 + 4) % P
        y = pow(rhs, (P + 1) // 4, P)
        if y * y % P == rhs and g1_mul((x, y), bls.BLS12_381_R) is not None:
            return x, y
        x += 1


def g1_x_off_curve(start: int = 1) -> int:
    """The smallest x >= start for which x^3 + 4 has no square root: no point of E1 has it."""
    x = start
    while bls._bls_fp_sqrt((x**3 + 4) % P) is not None:
        x += 1
    return x


def g2_outside_subgroup(start: int = 1) -> G2Affine:
    """A point of the twist, x = (start + k, 1) for the smallest k >= 0 that gives one, not in G2."""
    k = start
    while True:
        x = (k, 1)
        y = bls._bls_fp2_sqrt(bls._bls_fp2_add(bls._bls_fp2_mul(bls._bls_fp2_sqr(x), x), (4, 4)))
        if y is not None and bls._bls_g2_mul((x, y), bls.BLS12_381_R) is not None:
            return x, y
        k += 1


def g2_x_off_curve(start: int = 1) -> tuple[int, int]:
    """An x = (start + k, 1) for which no point of the twist exists."""
    k = start
    while True:
        x = (k, 1)
        if bls._bls_fp2_sqrt(bls._bls_fp2_add(bls._bls_fp2_mul(bls._bls_fp2_sqr(x), x), (4, 4))) is None:
            return x
        k += 1
