"""BLS12-381 in the verifier (generator/verifier/crypto/bls12_381.py and hash_to_g1.py), checked
against py_ecc, an independent implementation: hashing to G1, point decoding and its refusals, the
field tower's fast paths against plain arithmetic, the pairing, and signatures made with py_ecc
(key on G2, signature on G1, as drand's quicknet has them) verified by ours.

Everything random here comes from fixed seeds. Pure-Python pairings are slow, so py_ecc's own
pairing runs once.
"""

import hashlib
import random

import pytest
from py_ecc.bls.point_compression import compress_G1, compress_G2, decompress_G1, decompress_G2
from py_ecc.bls.typing import G2Compressed
from py_ecc.fields import optimized_bls12_381_FQ12 as FQ12
from py_ecc.optimized_bls12_381.optimized_curve import G1, G2, curve_order, field_modulus, multiply, neg
from py_ecc.optimized_bls12_381.optimized_pairing import pairing

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto import bls12_381 as bls
from generator.verifier.crypto.hash_to_g1 import (
    BLS12_381_P,
    expand_message_xmd,
    g1_add,
    g1_mul,
    g1_neg,
    g1_on_curve,
    hash_to_g1,
)
from tests.support.bls import (
    encode_g1,
    encode_g2,
    fp12_pow,
    from_py_g1,
    from_py_g2,
    g1_outside_subgroup,
    g1_x_off_curve,
    g2_outside_subgroup,
    g2_x_off_curve,
    py_expand_message_xmd,
    py_hash_to_g1,
    py_hash_to_g1_projective,
    to_py_fp12,
)

P = BLS12_381_P
R = bls.BLS12_381_R
DST = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"


def random_fp12(rng: random.Random) -> bls.Fp12:
    def fp2() -> bls.Fp2:
        return rng.randrange(P), rng.randrange(P)

    return (fp2(), fp2(), fp2()), (fp2(), fp2(), fp2())


def cyclotomic(f: bls.Fp12) -> bls.Fp12:
    """f^((p^6 - 1)(p^2 + 1)): an element of the cyclotomic subgroup."""
    g = bls._bls_fp12_mul(bls._bls_fp12_conj(f), bls._bls_fp12_inv(f))
    return bls._bls_fp12_mul(bls._bls_fp12_frobenius(g, 2), g)


def py_sign(secret: int, message: bytes, dst: bytes = DST) -> tuple[bytes, bytes]:
    """A key and a signature made with py_ecc alone: pk = sk g2, signature = sk H(message)."""
    key = compress_G2(multiply(G2, secret))
    signature = compress_G1(multiply(py_hash_to_g1_projective(message, dst), secret))
    return key[0].to_bytes(48, "big") + key[1].to_bytes(48, "big"), signature.to_bytes(48, "big")


# Constants and the field tower ------------------------------------------------------------------


def test_constants_are_py_eccs() -> None:
    assert field_modulus == P
    assert curve_order == R == bls._BLS_X_ABS**4 - bls._BLS_X_ABS**2 + 1
    assert from_py_g2(G2) == bls.BLS12_381_G2
    assert bls.decode_g2(encode_g2(bls.BLS12_381_G2)) == bls.BLS12_381_G2


def test_fp12_arithmetic_agrees_with_py_ecc() -> None:
    rng = random.Random(12)
    for _ in range(3):
        a, b = random_fp12(rng), random_fp12(rng)
        product = bls._bls_fp12_mul(a, b)
        assert to_py_fp12(product) == to_py_fp12(a) * to_py_fp12(b)
        assert bls._bls_fp12_sqr(a) == bls._bls_fp12_mul(a, a)
        assert bls._bls_fp12_mul(a, bls._bls_fp12_inv(a)) == bls.BLS12_381_FP12_ONE


def test_sparse_line_product_is_the_full_product() -> None:
    rng = random.Random(13)
    f = random_fp12(rng)
    a, b, c = (rng.randrange(P), rng.randrange(P)), (rng.randrange(P), rng.randrange(P)), rng.randrange(P)
    line = ((a, b, (0, 0)), ((0, 0), (c, 0), (0, 0)))
    assert bls._bls_fp12_mul_line(f, a, b, c) == bls._bls_fp12_mul(f, line)


def test_frobenius_is_raising_to_p() -> None:
    f = random_fp12(random.Random(14))
    once = bls._bls_fp12_frobenius(f, 1)
    assert once == fp12_pow(f, P)
    assert bls._bls_fp12_frobenius(f, 2) == bls._bls_fp12_frobenius(once, 1)


def test_cyclotomic_square_is_the_square_there() -> None:
    g = cyclotomic(random_fp12(random.Random(15)))
    assert bls._bls_fp12_cyclotomic_sqr(g) == bls._bls_fp12_sqr(g)
    assert bls._bls_fp12_mul(g, bls._bls_fp12_conj(g)) == bls.BLS12_381_FP12_ONE


def test_final_exponentiation_is_the_plain_power_cubed() -> None:
    f = random_fp12(random.Random(16))
    assert bls._bls_final_exponentiation(f) == fp12_pow(f, 3 * (P**12 - 1) // R)


def test_fp2_square_roots() -> None:
    rng = random.Random(17)
    for a in [(rng.randrange(P), rng.randrange(P)) for _ in range(8)] + [(5, 0), (P - 5, 0), (0, 3)]:
        square = bls._bls_fp2_sqr(a)
        root = bls._bls_fp2_sqrt(square)
        assert root is not None and bls._bls_fp2_sqr(root) == square
    non_square = (1, 1)  # 1 + u, the tower's non-residue
    assert bls._bls_fp2_sqrt(non_square) is None
    assert bls._bls_fp2_sqrt(bls._bls_fp2_mul(non_square, (4, 0))) is None


# Hashing to G1 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "dst"),
    [
        (b"", DST),
        (b"abc", DST),
        (hashlib.sha256((123).to_bytes(8, "big")).digest(), DST),
        (b"q" * 300, b"another tag"),
        (bytes(range(256)), b"QUUX-V01-CS02-with-BLS12381G1_XMD:SHA-256_SSWU_RO_"),
    ],
)
def test_hash_to_g1_is_py_eccs(message: bytes, dst: bytes) -> None:
    point = hash_to_g1(message, dst)
    assert point == py_hash_to_g1(message, dst)
    assert g1_on_curve(point) and g1_mul(point, R) is None


def test_expand_message_xmd_is_py_eccs() -> None:
    rng = random.Random(18)
    for length in (1, 31, 32, 33, 64, 128, 255 * 32):
        message = rng.randbytes(rng.randrange(100))
        assert expand_message_xmd(message, b"tag", length) == py_expand_message_xmd(message, b"tag", length)
    with pytest.raises(ValueError):
        expand_message_xmd(b"", b"tag", 255 * 32 + 1)


def test_g1_arithmetic_is_py_eccs() -> None:
    rng = random.Random(19)
    generator = from_py_g1(G1)
    for k in [0, 1, 2, 3, R - 1, R, R + 1] + [rng.randrange(1 << 300) for _ in range(3)]:
        assert g1_mul(generator, k) == from_py_g1(multiply(G1, k))
    two = from_py_g1(multiply(G1, 2))
    assert g1_add(generator, generator) == two
    assert g1_add(two, g1_neg(generator)) == generator
    assert g1_add(generator, g1_neg(generator)) is None


# Decoding ---------------------------------------------------------------------------------------


def test_decoding_agrees_with_py_ecc() -> None:
    rng = random.Random(20)
    for _ in range(4):
        k = rng.randrange(1, R)
        for point in (multiply(G1, k), neg(multiply(G1, k))):
            data = compress_G1(point).to_bytes(48, "big")
            assert bls.decode_g1(data) == from_py_g1(decompress_G1(compress_G1(point))) == from_py_g1(point)
            assert encode_g1(bls.decode_g1(data)) == data
    for _ in range(2):
        k = rng.randrange(1, R)
        for point2 in (multiply(G2, k), neg(multiply(G2, k))):
            z1, z2 = compress_G2(point2)
            data = z1.to_bytes(48, "big") + z2.to_bytes(48, "big")
            assert bls.decode_g2(data) == from_py_g2(decompress_G2(G2Compressed((z1, z2)))) == from_py_g2(point2)
            assert encode_g2(bls.decode_g2(data)) == data


LENGTH, FLAG, INFINITY = "bytes, a compressed point", "compression flag", "the point at infinity"
NON_CANONICAL, TOO_BIG = "not the canonical encoding of infinity", "not below the field prime"
OFF_CURVE, OUTSIDE = "no point of the curve has this x", "not in the subgroup of order r"


def _g1_refusals() -> list[tuple[str, bytes, str]]:
    good = encode_g1(from_py_g1(multiply(G1, 5)))
    outside = g1_outside_subgroup()
    return [
        ("short", good[:47], LENGTH),
        ("long", good + b"\x00", LENGTH),
        ("uncompressed flag", bytes([good[0] & 0x7F]) + good[1:], FLAG),
        ("infinity", bytes([0xC0]) + bytes(47), INFINITY),
        ("infinity with the sign flag", bytes([0xE0]) + bytes(47), NON_CANONICAL),
        ("infinity flag on a point", bytes([good[0] | 0x40]) + good[1:], NON_CANONICAL),
        ("x = p", (P | 1 << 383).to_bytes(48, "big"), TOO_BIG),
        ("x = 2^381 - 1", ((1 << 381) - 1 | 1 << 383).to_bytes(48, "big"), TOO_BIG),
        ("x off the curve", (g1_x_off_curve() | 1 << 383).to_bytes(48, "big"), OFF_CURVE),
        ("outside the subgroup", encode_g1(outside), OUTSIDE),
        ("outside the subgroup, other sign", encode_g1(g1_neg(outside)), OUTSIDE),
    ]


def _g2_refusals() -> list[tuple[str, bytes, str]]:
    good = encode_g2(from_py_g2(multiply(G2, 5)))
    x0, x1 = g2_x_off_curve()
    outside = g2_outside_subgroup()
    (ox, (oy0, oy1)) = outside
    return [
        ("short", good[:95], LENGTH),
        ("a G1 length", good[:48], LENGTH),
        ("uncompressed flag", bytes([good[0] & 0x7F]) + good[1:], FLAG),
        ("infinity", bytes([0xC0]) + bytes(95), INFINITY),
        ("infinity with the sign flag", bytes([0xE0]) + bytes(95), NON_CANONICAL),
        ("infinity with x.c0 set", bytes([0xC0]) + bytes(94) + b"\x01", NON_CANONICAL),
        ("x.c1 = p", (P | 1 << 383).to_bytes(48, "big") + good[48:], TOO_BIG),
        ("x.c0 = p", good[:48] + P.to_bytes(48, "big"), TOO_BIG),
        ("flags on x.c0", good[:48] + bytes([good[48] | 0x80]) + good[49:], TOO_BIG),
        ("x off the curve", (x1 | 1 << 383).to_bytes(48, "big") + x0.to_bytes(48, "big"), OFF_CURVE),
        ("outside the subgroup", encode_g2(outside), OUTSIDE),
        ("outside the subgroup, other sign", encode_g2((ox, (-oy0 % P, -oy1 % P))), OUTSIDE),
    ]


G1_REFUSALS = _g1_refusals()
G2_REFUSALS = _g2_refusals()


@pytest.mark.parametrize(("name", "data", "reason"), G1_REFUSALS, ids=[c[0] for c in G1_REFUSALS])
def test_g1_decoding_refuses(name: str, data: bytes, reason: str) -> None:
    with pytest.raises(FormatError, match=reason):
        bls.decode_g1(data, "signature")


@pytest.mark.parametrize(("name", "data", "reason"), G2_REFUSALS, ids=[c[0] for c in G2_REFUSALS])
def test_g2_decoding_refuses(name: str, data: bytes, reason: str) -> None:
    with pytest.raises(FormatError, match=reason):
        bls.decode_g2(data, "public key")


def test_refused_points_are_really_on_the_curve() -> None:
    """The subgroup refusals above are about the subgroup, not the curve equation."""
    assert g1_on_curve(g1_outside_subgroup())
    assert bls._bls_g2_chord(g2_outside_subgroup(), g2_outside_subgroup())[1] is not None


# The pairing ------------------------------------------------------------------------------------


def test_pairing_is_py_eccs_inverse_cubed() -> None:
    """py_ecc runs its Miller loop over |x| and leaves the sign of x out; ours keeps it (and cubes,
    see _bls_final_exponentiation), so ours is py_ecc's to the power -3."""
    p1, q1 = multiply(G1, 5), multiply(G2, 7)
    ours = to_py_fp12(bls.pairing(from_py_g1(p1), from_py_g2(q1)))
    assert ours * pairing(q1, p1) ** 3 == FQ12.one()


def test_pairing_is_bilinear_and_non_degenerate() -> None:
    rng = random.Random(21)
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    g1, g2 = from_py_g1(G1), bls.BLS12_381_G2
    base = bls.pairing(g1, g2)
    assert base != bls.BLS12_381_FP12_ONE
    assert fp12_pow(base, R) == bls.BLS12_381_FP12_ONE
    both = bls.pairing(g1_mul(g1, a), bls._bls_g2_mul(g2, b))
    assert both == bls.pairing(g1_mul(g1, a * b % R), g2) == fp12_pow(base, a * b % R)
    assert bls.pairing(None, g2) == bls.pairing(g1, None) == bls.BLS12_381_FP12_ONE


# Signatures made by py_ecc ----------------------------------------------------------------------


def test_py_ecc_signatures_verify_and_tampered_ones_do_not() -> None:
    rng = random.Random(22)
    secret, other_secret = rng.randrange(1, R), rng.randrange(1, R)
    message = b"round 42"
    key, signature = py_sign(secret, message)
    other_key, other_signature = py_sign(other_secret, message)
    assert bls.verify_g1_signature(key, message, signature, DST) is True
    assert bls.verify_g1_signature(other_key, message, other_signature, DST) is True
    assert bls.verify_g1_signature(key, b"round 43", signature, DST) is False
    assert bls.verify_g1_signature(key, message, signature, DST + b"X") is False
    assert bls.verify_g1_signature(key, message, other_signature, DST) is False
    assert bls.verify_g1_signature(other_key, message, signature, DST) is False
    negated = bytes([signature[0] ^ 0x20]) + signature[1:]  # -signature: a valid point, wrong
    assert bls.verify_g1_signature(key, message, negated, DST) is False


def test_malformed_keys_and_signatures_raise() -> None:
    key, signature = py_sign(random.Random(23).randrange(1, R), b"m")
    with pytest.raises(FormatError, match="BLS signature"):
        bls.verify_g1_signature(key, b"m", bytes([0xC0]) + bytes(47), DST)
    with pytest.raises(FormatError, match="BLS signature"):
        bls.verify_g1_signature(key, b"m", signature[:47], DST)
    with pytest.raises(FormatError, match="BLS public key"):
        bls.verify_g1_signature(bytes([0xC0]) + bytes(95), b"m", signature, DST)
    with pytest.raises(FormatError, match="BLS public key"):
        bls.verify_g1_signature(encode_g2(g2_outside_subgroup()), b"m", signature, DST)
    with pytest.raises(FormatError):
        bls.verify_g1_signature(key, b"m", encode_g1(g1_outside_subgroup()), DST)
