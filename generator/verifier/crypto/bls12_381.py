"""BLS signature verification on the pairing-friendly curve BLS12-381, for signatures on G1 under
keys on G2 (the "minimal-signature-size" variant of draft-irtf-cfrg-bls-signature, drand's quicknet).

What is here, each from its specification: the field tower Fp2 = Fp[u]/(u^2 + 1),
Fp6 = Fp2[v]/(v^3 - (1 + u)), Fp12 = Fp6[w]/(w^2 - v); the twist E2: y^2 = x^3 + 4(1 + u) over Fp2
that carries G2; compressed points as Zcash serializes them (draft-irtf-cfrg-pairing-friendly-curves
Appendix C); and the optimal ate pairing, its Miller loop run over the BLS parameter
x = -0xd201000000010000 and its final exponentiation split into the easy part and a hard part
computed with exponentiations by x (Hayashida, Hayasaka and Teruya, eprint 2020/875).

Verification only, on public values: nothing is constant-time. Elements are plain tuples of ints
(an Fp2 element (c0, c1) is c0 + c1 u), reduced modulo p once per output coefficient rather than
after every product, which is where the time of a pure-Python pairing goes.

Errors: an encoding that is not a valid point of the right group (wrong length or flags, a
non-canonical infinity, a coordinate of p or more, a point off the curve or outside the prime-order
subgroup) raises FormatError, and so does the point at infinity, which is no valid key or
signature. verify_g1_signature returns False only for well-formed inputs that do not verify.
"""

import functools

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.hash_to_g1 import BLS12_381_P, G1Point, g1_mul, hash_to_g1

# The order of G1, G2 and GT (draft-irtf-cfrg-pairing-friendly-curves section 4.2.1).
BLS12_381_R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
# |x| for the BLS parameter x = -0xd201000000010000; x is negative, which the code below accounts for.
_BLS_X_ABS = 0xD201000000010000
_BLS_X_BITS = bin(_BLS_X_ABS)[3:]  # the bits after the leading one, most significant first

Fp2 = tuple[int, int]
Fp6 = tuple[Fp2, Fp2, Fp2]
Fp12 = tuple[Fp6, Fp6]
G2Point = tuple[Fp2, Fp2] | None

# The generator of G2 (draft-irtf-cfrg-pairing-friendly-curves section 4.2.1).
BLS12_381_G2: tuple[Fp2, Fp2] = (
    (
        0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
        0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
    ),
    (
        0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
        0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
    ),
)
_BLS_B2: Fp2 = (4, 4)  # the twist's constant term 4(1 + u)
_BLS_FP2_ZERO: Fp2 = (0, 0)
_BLS_FP2_ONE: Fp2 = (1, 0)
_BLS_FP6_ZERO: Fp6 = (_BLS_FP2_ZERO, _BLS_FP2_ZERO, _BLS_FP2_ZERO)
_BLS_FP6_ONE: Fp6 = (_BLS_FP2_ONE, _BLS_FP2_ZERO, _BLS_FP2_ZERO)
BLS12_381_FP12_ONE: Fp12 = (_BLS_FP6_ONE, _BLS_FP6_ZERO)


# Fp2 -------------------------------------------------------------------------------------------


def _bls_fp2_add(a: Fp2, b: Fp2) -> Fp2:
    return (a[0] + b[0]) % BLS12_381_P, (a[1] + b[1]) % BLS12_381_P


def _bls_fp2_sub(a: Fp2, b: Fp2) -> Fp2:
    return (a[0] - b[0]) % BLS12_381_P, (a[1] - b[1]) % BLS12_381_P


def _bls_fp2_neg(a: Fp2) -> Fp2:
    return -a[0] % BLS12_381_P, -a[1] % BLS12_381_P


def _bls_fp2_mul(a: Fp2, b: Fp2) -> Fp2:
    a0, a1 = a
    b0, b1 = b
    return (a0 * b0 - a1 * b1) % BLS12_381_P, (a0 * b1 + a1 * b0) % BLS12_381_P


def _bls_fp2_sqr(a: Fp2) -> Fp2:
    a0, a1 = a
    return (a0 + a1) * (a0 - a1) % BLS12_381_P, 2 * a0 * a1 % BLS12_381_P


def _bls_fp2_mul_xi(a: Fp2) -> Fp2:
    """a(1 + u): the non-residue the tower is built on."""
    return (a[0] - a[1]) % BLS12_381_P, (a[0] + a[1]) % BLS12_381_P


def _bls_fp2_inv(a: Fp2) -> Fp2:
    a0, a1 = a
    norm_inv = pow(a0 * a0 + a1 * a1, -1, BLS12_381_P)
    return a0 * norm_inv % BLS12_381_P, -a1 * norm_inv % BLS12_381_P


def _bls_fp2_pow(a: Fp2, exponent: int) -> Fp2:
    result = _BLS_FP2_ONE
    for bit in bin(exponent)[2:]:
        result = _bls_fp2_sqr(result)
        if bit == "1":
            result = _bls_fp2_mul(result, a)
    return result


def _bls_fp_sqrt(a: int) -> int | None:
    root = pow(a, (BLS12_381_P + 1) // 4, BLS12_381_P)
    return root if root * root % BLS12_381_P == a % BLS12_381_P else None


def _bls_fp2_sqrt(a: Fp2) -> Fp2 | None:
    """A square root of a in Fp2, or None. With u^2 = -1, (x0 + x1 u)^2 = a gives x0^2 - x1^2 = a0
    and 2 x0 x1 = a1, so x0^2 = (a0 + n)/2 for a root n of the norm a0^2 + a1^2; the candidate is
    checked by squaring it, so a wrong guess can only give None, never a wrong root."""
    p = BLS12_381_P
    a0, a1 = a
    if a1 == 0:
        root = _bls_fp_sqrt(a0)
        if root is not None:
            return root, 0
        root = _bls_fp_sqrt(-a0 % p)  # -1 is not a square mod p, so -a0 is
        return None if root is None else (0, root)
    norm_root = _bls_fp_sqrt((a0 * a0 + a1 * a1) % p)
    if norm_root is None:
        return None
    half = pow(2, -1, p)
    x0 = _bls_fp_sqrt((a0 + norm_root) * half % p)
    if x0 is None:
        x0 = _bls_fp_sqrt((a0 - norm_root) * half % p)
    if x0 is None or x0 == 0:
        return None
    candidate = (x0, a1 * pow(2 * x0, -1, p) % p)
    return candidate if _bls_fp2_sqr(candidate) == (a0 % p, a1 % p) else None


# Fp6 and Fp12 ----------------------------------------------------------------------------------


def _bls_fp6_add(a: Fp6, b: Fp6) -> Fp6:
    return _bls_fp2_add(a[0], b[0]), _bls_fp2_add(a[1], b[1]), _bls_fp2_add(a[2], b[2])


def _bls_fp6_sub(a: Fp6, b: Fp6) -> Fp6:
    return _bls_fp2_sub(a[0], b[0]), _bls_fp2_sub(a[1], b[1]), _bls_fp2_sub(a[2], b[2])


def _bls_fp6_neg(a: Fp6) -> Fp6:
    return _bls_fp2_neg(a[0]), _bls_fp2_neg(a[1]), _bls_fp2_neg(a[2])


def _bls_fp6_mul_v(a: Fp6) -> Fp6:
    """a v, as v^3 = 1 + u."""
    return _bls_fp2_mul_xi(a[2]), a[0], a[1]


def _bls_fp6_mul(a: Fp6, b: Fp6) -> Fp6:
    """Schoolbook on the 36 integer products, each output coefficient reduced once."""
    (a00, a01), (a10, a11), (a20, a21) = a
    (b00, b01), (b10, b11), (b20, b21) = b
    # (r_ij, i_ij): the real and u parts of a_i b_j (+ a_j b_i), not yet reduced.
    r00, i00 = a00 * b00 - a01 * b01, a00 * b01 + a01 * b00
    r11, i11 = a10 * b10 - a11 * b11, a10 * b11 + a11 * b10
    r22, i22 = a20 * b20 - a21 * b21, a20 * b21 + a21 * b20
    r01 = a00 * b10 - a01 * b11 + a10 * b00 - a11 * b01
    i01 = a00 * b11 + a01 * b10 + a10 * b01 + a11 * b00
    r02 = a00 * b20 - a01 * b21 + a20 * b00 - a21 * b01
    i02 = a00 * b21 + a01 * b20 + a20 * b01 + a21 * b00
    r12 = a10 * b20 - a11 * b21 + a20 * b10 - a21 * b11
    i12 = a10 * b21 + a11 * b20 + a20 * b11 + a21 * b10
    p = BLS12_381_P
    # c0 = a0b0 + (1+u)(a1b2 + a2b1), c1 = a0b1 + a1b0 + (1+u)a2b2, c2 = a0b2 + a1b1 + a2b0
    return (
        ((r00 + r12 - i12) % p, (i00 + r12 + i12) % p),
        ((r01 + r22 - i22) % p, (i01 + r22 + i22) % p),
        ((r02 + r11) % p, (i02 + i11) % p),
    )


def _bls_fp6_inv(a: Fp6) -> Fp6:
    a0, a1, a2 = a
    c0 = _bls_fp2_sub(_bls_fp2_sqr(a0), _bls_fp2_mul_xi(_bls_fp2_mul(a1, a2)))
    c1 = _bls_fp2_sub(_bls_fp2_mul_xi(_bls_fp2_sqr(a2)), _bls_fp2_mul(a0, a1))
    c2 = _bls_fp2_sub(_bls_fp2_sqr(a1), _bls_fp2_mul(a0, a2))
    norm = _bls_fp2_add(_bls_fp2_mul(a0, c0), _bls_fp2_mul_xi(_bls_fp2_add(_bls_fp2_mul(a2, c1), _bls_fp2_mul(a1, c2))))
    norm_inv = _bls_fp2_inv(norm)
    return _bls_fp2_mul(c0, norm_inv), _bls_fp2_mul(c1, norm_inv), _bls_fp2_mul(c2, norm_inv)


def _bls_fp12_mul(a: Fp12, b: Fp12) -> Fp12:
    """Karatsuba over Fp6: three Fp6 products instead of four."""
    a0, a1 = a
    b0, b1 = b
    t0 = _bls_fp6_mul(a0, b0)
    t1 = _bls_fp6_mul(a1, b1)
    t2 = _bls_fp6_mul(_bls_fp6_add(a0, a1), _bls_fp6_add(b0, b1))
    return _bls_fp6_add(t0, _bls_fp6_mul_v(t1)), _bls_fp6_sub(_bls_fp6_sub(t2, t0), t1)


def _bls_fp12_sqr(a: Fp12) -> Fp12:
    """(a0 + a1 w)^2 with two Fp6 products: (a0 + a1)(a0 + v a1) - (1 + v) a0 a1, and 2 a0 a1."""
    a0, a1 = a
    t = _bls_fp6_mul(a0, a1)
    s = _bls_fp6_mul(_bls_fp6_add(a0, a1), _bls_fp6_add(a0, _bls_fp6_mul_v(a1)))
    return _bls_fp6_sub(_bls_fp6_sub(s, t), _bls_fp6_mul_v(t)), _bls_fp6_add(t, t)


def _bls_fp12_conj(a: Fp12) -> Fp12:
    """a^(p^6): the inverse of an element of norm 1, so of every element after the easy part."""
    return a[0], _bls_fp6_neg(a[1])


def _bls_fp12_inv(a: Fp12) -> Fp12:
    a0, a1 = a
    norm_inv = _bls_fp6_inv(_bls_fp6_sub(_bls_fp6_mul(a0, a0), _bls_fp6_mul_v(_bls_fp6_mul(a1, a1))))
    return _bls_fp6_mul(a0, norm_inv), _bls_fp6_neg(_bls_fp6_mul(a1, norm_inv))


def _bls_fp6_mul_by_01(x: Fp6, a: Fp2, b: Fp2) -> tuple[int, int, int, int, int, int]:
    """x (a + b v), its six integers not yet reduced: x0 a + (1+u) x2 b, x0 b + x1 a, x1 b + x2 a."""
    (x00, x01), (x10, x11), (x20, x21) = x
    a0, a1 = a
    b0, b1 = b
    r2b, i2b = x20 * b0 - x21 * b1, x20 * b1 + x21 * b0
    return (
        x00 * a0 - x01 * a1 + r2b - i2b,
        x00 * a1 + x01 * a0 + r2b + i2b,
        x00 * b0 - x01 * b1 + x10 * a0 - x11 * a1,
        x00 * b1 + x01 * b0 + x10 * a1 + x11 * a0,
        x10 * b0 - x11 * b1 + x20 * a0 - x21 * a1,
        x10 * b1 + x11 * b0 + x20 * a1 + x21 * a0,
    )


def _bls_fp12_mul_line(f: Fp12, a: Fp2, b: Fp2, c: int) -> Fp12:
    """f (a + b v + c v w) for c in Fp, the sparse shape of a Miller loop's line values: about
    half the work of a full product. With l0 = a + b v and l1 = c v, the product is
    (f0 l0 + v f1 l1) + (f0 l1 + f1 l0) w, and multiplying by c v or c v^2 only shifts."""
    p = BLS12_381_P
    f0, f1 = f
    (f00, f01, f02), (f10, f11, f12) = f
    u0, u1, u2, u3, u4, u5 = _bls_fp6_mul_by_01(f0, a, b)
    w0, w1, w2, w3, w4, w5 = _bls_fp6_mul_by_01(f1, a, b)
    # v f1 l1 = c v^2 f1 = c ((1+u) f11, (1+u) f12, f10)
    c0 = (
        ((u0 + c * (f11[0] - f11[1])) % p, (u1 + c * (f11[0] + f11[1])) % p),
        ((u2 + c * (f12[0] - f12[1])) % p, (u3 + c * (f12[0] + f12[1])) % p),
        ((u4 + c * f10[0]) % p, (u5 + c * f10[1]) % p),
    )
    # f0 l1 = c v f0 = c ((1+u) f02, f00, f01)
    c1 = (
        ((w0 + c * (f02[0] - f02[1])) % p, (w1 + c * (f02[0] + f02[1])) % p),
        ((w2 + c * f00[0]) % p, (w3 + c * f00[1]) % p),
        ((w4 + c * f01[0]) % p, (w5 + c * f01[1]) % p),
    )
    return c0, c1


def _bls_fp12_cyclotomic_sqr(a: Fp12) -> Fp12:
    """The square of an element of the cyclotomic subgroup (Granger and Scott, eprint 2009/565),
    seeing Fp12 as Fp4[w]/(w^3 - s) with Fp4 = Fp2[s]/(s^2 - (1 + u)), s = w^3:
    (A + B w + C w^2)^2 = (3A^2 - 2 conj(A)) + (3 s C^2 + 2 conj(B)) w + (3 B^2 - 2 conj(C)) w^2."""
    p = BLS12_381_P
    (a0, a1, a2), (b0, b1, b2) = a

    def fp4_sqr(x: Fp2, y: Fp2) -> tuple[Fp2, Fp2]:
        # (x + y s)^2 = (x^2 + (1+u) y^2) + 2xy s
        x2 = _bls_fp2_sqr(x)
        y2 = _bls_fp2_sqr(y)
        return _bls_fp2_add(x2, _bls_fp2_mul_xi(y2)), _bls_fp2_mul((2 * x[0], 2 * x[1]), y)

    # A = a0 + b1 s, B = b0 + a2 s, C = a1 + b2 s (the coefficients of w^0..w^5 regrouped)
    ta0, ta1 = fp4_sqr(a0, b1)
    tb0, tb1 = fp4_sqr(b0, a2)
    tc0, tc1 = fp4_sqr(a1, b2)
    stc0 = _bls_fp2_mul_xi(tc1)  # s C^2 = (1+u) tc1 + tc0 s
    return (
        (
            ((3 * ta0[0] - 2 * a0[0]) % p, (3 * ta0[1] - 2 * a0[1]) % p),
            ((3 * tb0[0] - 2 * a1[0]) % p, (3 * tb0[1] - 2 * a1[1]) % p),
            ((3 * tc0[0] - 2 * a2[0]) % p, (3 * tc0[1] - 2 * a2[1]) % p),
        ),
        (
            ((3 * stc0[0] + 2 * b0[0]) % p, (3 * stc0[1] + 2 * b0[1]) % p),
            ((3 * ta1[0] + 2 * b1[0]) % p, (3 * ta1[1] + 2 * b1[1]) % p),
            ((3 * tb1[0] + 2 * b2[0]) % p, (3 * tb1[1] + 2 * b2[1]) % p),
        ),
    )


# (1 + u)^(k (p - 1) / 6) and (1 + u)^(k (p^2 - 1) / 6) for k = 0..5: w^k raised to p (or p^2) is
# w^k times the k-th. As z^p = conj(z) in Fp2, the second are the norms of the first.
_BLS_FROBENIUS_1 = tuple(_bls_fp2_pow((1, 1), k * (BLS12_381_P - 1) // 6) for k in range(6))
_BLS_FROBENIUS_2 = tuple(_bls_fp2_mul(g, (g[0], -g[1] % BLS12_381_P)) for g in _BLS_FROBENIUS_1)


def _bls_fp12_frobenius(a: Fp12, power: int) -> Fp12:
    """a^(p^power) for power 1 or 2. a[0] holds the coefficients of w^0, w^2, w^4 and a[1] those of
    w^1, w^3, w^5; raising to p also conjugates each coefficient (u^p = -u)."""
    table = _BLS_FROBENIUS_1 if power == 1 else _BLS_FROBENIUS_2

    def term(c: Fp2, k: int) -> Fp2:
        return _bls_fp2_mul((c[0], -c[1] % BLS12_381_P) if power == 1 else c, table[k])

    (a0, a1, a2), (b0, b1, b2) = a
    return (term(a0, 0), term(a1, 2), term(a2, 4)), (term(b0, 1), term(b1, 3), term(b2, 5))


def _bls_cyclotomic_exp_x(a: Fp12) -> Fp12:
    """a^x for a in the cyclotomic subgroup, where the inverse is the conjugate (x < 0)."""
    result = a
    for bit in _BLS_X_BITS:
        result = _bls_fp12_cyclotomic_sqr(result)
        if bit == "1":
            result = _bls_fp12_mul(result, a)
    return _bls_fp12_conj(result)


def _bls_final_exponentiation(f: Fp12) -> Fp12:
    """f^(3 (p^12 - 1) / r). The easy part (p^6 - 1)(p^2 + 1) lands in the cyclotomic subgroup;
    the hard part uses 3 (p^4 - p^2 + 1)/r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3, true of every
    BLS12 curve (eprint 2020/875), at five exponentiations by x. The factor 3 is prime
    to r, so the result is 1 exactly when the plain final exponentiation is: a pairing check is
    unaffected, and pairing() is the optimal ate pairing cubed."""
    f = _bls_fp12_mul(_bls_fp12_conj(f), _bls_fp12_inv(f))
    f = _bls_fp12_mul(_bls_fp12_frobenius(f, 2), f)
    a = _bls_fp12_mul(_bls_cyclotomic_exp_x(f), _bls_fp12_conj(f))  # f^(x-1)
    b = _bls_fp12_mul(_bls_cyclotomic_exp_x(a), _bls_fp12_conj(a))  # f^((x-1)^2)
    c = _bls_fp12_mul(_bls_cyclotomic_exp_x(b), _bls_fp12_frobenius(b, 1))  # b^(x+p)
    d = _bls_fp12_mul(_bls_cyclotomic_exp_x(_bls_cyclotomic_exp_x(c)), _bls_fp12_frobenius(c, 2))
    d = _bls_fp12_mul(d, _bls_fp12_conj(c))  # c^(x^2+p^2-1)
    return _bls_fp12_mul(d, _bls_fp12_mul(_bls_fp12_cyclotomic_sqr(f), f))


# G2: points of the twist y^2 = x^3 + 4(1 + u) over Fp2, affine, None for infinity ---------------


def _bls_g2_chord(one: tuple[Fp2, Fp2], two: tuple[Fp2, Fp2]) -> tuple[Fp2, G2Point]:
    """The slope of the line through P and Q (the tangent if P = Q) and P + Q, for points that
    are not infinity; a vertical line gives slope 0 and infinity."""
    x1, y1 = one
    x2, y2 = two
    if x1 == x2:
        if _bls_fp2_add(y1, y2) == _BLS_FP2_ZERO:
            return _BLS_FP2_ZERO, None
        x1_sq = _bls_fp2_sqr(x1)
        slope = _bls_fp2_mul((3 * x1_sq[0], 3 * x1_sq[1]), _bls_fp2_inv((2 * y1[0], 2 * y1[1])))
    else:
        slope = _bls_fp2_mul(_bls_fp2_sub(y2, y1), _bls_fp2_inv(_bls_fp2_sub(x2, x1)))
    x3 = _bls_fp2_sub(_bls_fp2_sub(_bls_fp2_sqr(slope), x1), x2)
    return slope, (x3, _bls_fp2_sub(_bls_fp2_mul(slope, _bls_fp2_sub(x1, x3)), y1))


def _bls_g2_mul(point: G2Point, scalar: int) -> G2Point:
    """[k]P on the twist, for any point of it and k >= 0."""
    result: G2Point = None
    for bit in bin(scalar)[2:]:
        if result is not None:
            result = _bls_g2_chord(result, result)[1]
        if bit == "1" and point is not None:
            result = point if result is None else _bls_g2_chord(result, point)[1]
    return result


def _bls_g2_lines(q: tuple[Fp2, Fp2]) -> tuple[tuple[Fp2, Fp2], ...]:
    """The Miller loop's lines for Q in G2 (not infinity), as (-slope, slope x_T - y_T) for each
    step in order: they depend on Q alone, so a key's are computed once.

    Mapped into E(Fp12) by (x, y) -> (x / w^2, y / w^3), the line through T with twist slope s has
    the value y_P - s x_P / w + (s x_T - y_T) / w^3 at P. Times w^3, it is
    (s x_T - y_T) - s x_P v + y_P v w; w^3 lies in the subfield Fp4 (its square is 1 + u), which
    the final exponentiation sends to 1. The loop starts at Q and never meets a vertical line:
    T = [k]Q with 1 < k < |x| < r - 1."""
    t = q
    lines: list[tuple[Fp2, Fp2]] = []
    for bit in _BLS_X_BITS:
        for other in (t, q) if bit == "1" else (t,):
            slope, after = _bls_g2_chord(t, other)
            lines.append((_bls_fp2_neg(slope), _bls_fp2_sub(_bls_fp2_mul(slope, t[0]), t[1])))
            if after is None:  # pragma: no cover - excluded above for Q in G2
                raise ArithmeticError("a Miller loop step reached infinity")
            t = after
    return tuple(lines)


def _bls_miller_loop(pairs: list[tuple[tuple[int, int], tuple[tuple[Fp2, Fp2], ...]]]) -> Fp12:
    """The product of f_{x,Q}(P) over the (P, lines of Q) pairs, sharing the squarings."""
    p = BLS12_381_P
    f = BLS12_381_FP12_ONE
    step = 0
    for bit in _BLS_X_BITS:
        f = _bls_fp12_sqr(f)
        for _ in range(2 if bit == "1" else 1):
            for (xp, yp), lines in pairs:
                neg_slope, constant = lines[step]
                f = _bls_fp12_mul_line(f, constant, (neg_slope[0] * xp % p, neg_slope[1] * xp % p), yp)
            step += 1
    # x < 0: f_{x,Q} is 1 / f_{|x|,Q} up to a vertical line the final exponentiation removes, and
    # after it 1/f and the conjugate agree.
    return _bls_fp12_conj(f)


def pairing(p: G1Point, q: G2Point) -> Fp12:
    """The optimal ate pairing e(P, Q) cubed (see _bls_final_exponentiation): non-degenerate and
    bilinear all the same, 1 when P or Q is infinity. For tests; verification uses products."""
    if p is None or q is None:
        return BLS12_381_FP12_ONE
    return _bls_final_exponentiation(_bls_miller_loop([(p, _bls_g2_lines(q))]))


# Compressed points (draft-irtf-cfrg-pairing-friendly-curves Appendix C, Zcash's format) --------


def _bls_compressed_body(data: bytes, length: int, what: str) -> tuple[bool, bytes]:
    """The sign flag and the bytes with the three flag bits cleared, of a compressed point that is
    not infinity; anything else raises FormatError."""
    if not isinstance(data, bytes | bytearray) or len(data) != length:
        found = len(data) if isinstance(data, bytes | bytearray) else type(data).__name__
        raise FormatError(f"{what} must be {length} bytes, a compressed point; found {found}")
    compressed, infinity, sign = data[0] & 0x80, data[0] & 0x40, data[0] & 0x20
    body = bytes([data[0] & 0x1F]) + bytes(data[1:])
    if not compressed:
        raise FormatError(f"{what} is not a compressed point: its compression flag (the first bit) is 0")
    if infinity:
        if sign or any(body):
            raise FormatError(f"{what} has the infinity flag but is not the canonical encoding of infinity")
        raise FormatError(f"{what} is the point at infinity, which is never a valid key or signature")
    return bool(sign), body


def _bls_fp_is_larger(y: int) -> bool:
    """Whether y is the larger of y and -y, the half the sign flag names."""
    return y > (BLS12_381_P - 1) // 2


def decode_g1(data: bytes, what: str = "G1 point") -> tuple[int, int]:
    """A 48-byte compressed point of G1, checked to be canonical, on the curve, in the subgroup of
    order r, and not infinity; FormatError otherwise (`what` names it in the message)."""
    sign, body = _bls_compressed_body(data, 48, what)
    x = int.from_bytes(body, "big")
    if x >= BLS12_381_P:
        raise FormatError(f"{what}: x is not below the field prime")
    y = _bls_fp_sqrt((x * x * x + 4) % BLS12_381_P)
    if y is None:
        raise FormatError(f"{what}: no point of the curve has this x")
    if _bls_fp_is_larger(y) != sign:
        y = -y % BLS12_381_P
    point = (x, y)
    if g1_mul(point, BLS12_381_R) is not None:
        raise FormatError(f"{what}: the point is not in the subgroup of order r")
    return point


def decode_g2(data: bytes, what: str = "G2 point") -> tuple[Fp2, Fp2]:
    """A 96-byte compressed point of G2 (x as c1 then c0, each 48 bytes big-endian), checked as
    decode_g1 checks; the sign flag names the larger y by its u part, or its real part if that is 0."""
    sign, body = _bls_compressed_body(data, 96, what)
    x1, x0 = int.from_bytes(body[:48], "big"), int.from_bytes(body[48:], "big")
    if x0 >= BLS12_381_P or x1 >= BLS12_381_P:
        raise FormatError(f"{what}: a coordinate of x is not below the field prime")
    x = (x0, x1)
    y = _bls_fp2_sqrt(_bls_fp2_add(_bls_fp2_mul(_bls_fp2_sqr(x), x), _BLS_B2))
    if y is None:
        raise FormatError(f"{what}: no point of the curve has this x")
    larger = _bls_fp_is_larger(y[1]) if y[1] else _bls_fp_is_larger(y[0])
    if larger != sign:
        y = _bls_fp2_neg(y)
    point = (x, y)
    if _bls_g2_mul(point, BLS12_381_R) is not None:
        raise FormatError(f"{what}: the point is not in the subgroup of order r")
    return point


# Verification ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _bls_negated_generator_lines() -> tuple[tuple[Fp2, Fp2], ...]:
    x, y = BLS12_381_G2
    return _bls_g2_lines((x, _bls_fp2_neg(y)))


@functools.lru_cache(maxsize=16)
def _bls_public_key_lines(public_key_g2: bytes) -> tuple[tuple[Fp2, Fp2], ...]:
    return _bls_g2_lines(decode_g2(public_key_g2, "BLS public key"))


def verify_g1_signature(public_key_g2: bytes, message: bytes, signature_g1: bytes, dst: bytes) -> bool:
    """Whether `signature_g1` (48 bytes) is a BLS signature of `message` under `public_key_g2`
    (96 bytes), with the message hashed to G1 by RFC 9380's BLS12381G1_XMD:SHA-256_SSWU_RO_ under
    `dst`: e(signature, g2) = e(H(message), key), checked as the product
    e(signature, -g2) e(H(message), key) = 1 with one final exponentiation.

    Raises FormatError when the key or the signature is not a valid compressed point of its group
    (infinity included); returns False only for valid points that do not verify."""
    key_lines = _bls_public_key_lines(bytes(public_key_g2))
    signature = decode_g1(signature_g1, "BLS signature")
    hashed = hash_to_g1(message, dst)
    pairs = [(signature, _bls_negated_generator_lines())]
    if hashed is not None:  # e(infinity, key) = 1: the check is then e(signature, -g2) = 1
        pairs.append((hashed, key_lines))
    return _bls_final_exponentiation(_bls_miller_loop(pairs)) == BLS12_381_FP12_ONE
