"""Helpers for the ML-DSA-44 tests: signatures at the edge of FIPS 204's bound on z, which a correct
signer never makes, made with dilithium-py's parts (an implementation independent of the verifier's).

ML-DSA.Sign_internal (FIPS 204 Algorithm 7) rejects every candidate whose response z has a coefficient
of magnitude gamma1 - beta or more, so no signer's output tests where verification draws that line.
`sign_with_first_z` runs the same loop with the mask y's first coefficient set by hand and that one
coefficient exempt from the bound, until c*s1 adds nothing to it: z's first coefficient is then the
value asked for, and every other check of signing holds, so that only the bound can refuse it.
"""

from __future__ import annotations

import itertools

from dilithium_py.ml_dsa import ML_DSA_44
from dilithium_py.utilities.utils import check_norm_bound

MLDSA44_Q = 8380417
# gamma1 - beta for ML-DSA-44: z must stay strictly below it in magnitude (FIPS 204 Algorithm 8, step 13).
MLDSA44_Z_BOUND = (1 << 17) - 78


def _centered(x: int) -> int:
    x %= MLDSA44_Q
    return x - MLDSA44_Q if x > MLDSA44_Q // 2 else x


def sign_with_first_z(sk: bytes, message_prime: bytes, z_first: int, rnd: bytes = bytes(32)) -> bytes:
    """A signature of the formatted message M' under the signing key `sk` whose response z has
    `z_first` (in [-gamma1 + 1, gamma1]) as its first coefficient, every other coefficient within
    the bound, and every other condition of FIPS 204's signing met. Deterministic for a given
    `rnd`; about one candidate in a hundred qualifies."""
    ml = ML_DSA_44
    rho, key, tr, s1, s2, t0 = ml._unpack_sk(sk)
    s1_hat, s2_hat, t0_hat = s1.to_ntt(), s2.to_ntt(), t0.to_ntt()
    a_hat = ml._expand_matrix_from_seed(rho)
    mu = ml._h(tr + message_prime, 64)
    rho_prime = ml._h(key + rnd + mu, 64)
    alpha = 2 * ml.gamma_2
    for kappa in itertools.count(0, ml.l):
        y = ml._expand_mask_vector(rho_prime, kappa)
        y[0, 0].coeffs[0] = z_first
        w = (a_hat @ y.to_ntt()).from_ntt()
        c_tilde = ml._h(mu + w.high_bits(alpha).bit_pack_w(ml.gamma_2), ml.c_tilde_bytes)
        c_hat = ml.R.sample_in_ball(c_tilde, ml.tau).to_ntt()
        c_s1 = s1_hat.scale(c_hat).from_ntt()
        if _centered(c_s1[0, 0].coeffs[0]) != 0:
            continue
        z = y + c_s1
        others = [x for i in range(ml.l) for x in z[i, 0].coeffs][1:]
        if any(check_norm_bound(x, MLDSA44_Z_BOUND, MLDSA44_Q) for x in others):
            continue
        c_s2 = s2_hat.scale(c_hat).from_ntt()
        if (w - c_s2).low_bits(alpha).check_norm_bound(ml.gamma_2 - ml.beta):
            continue
        c_t0 = t0_hat.scale(c_hat).from_ntt()
        if c_t0.check_norm_bound(ml.gamma_2):
            continue
        h = (-c_t0).make_hint(w - c_s2 + c_t0, alpha)
        if h.sum_hint() > ml.omega:
            continue
        signature: bytes = ml._pack_sig(c_tilde, z, h)
        return signature
    raise AssertionError("unreachable: itertools.count never ends")
