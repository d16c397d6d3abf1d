"""Public keys and signature algorithms as X.509 and CMS name them: a SubjectPublicKeyInfo read
into a key that verifies, an AlgorithmIdentifier into the scheme and hash it stands for.

The keys are RSA, and ECDSA on P-256 or P-384; the identifiers those of RFC 3279, RFC 4055,
RFC 5754, RFC 5758 and RFC 8017 appendix A. An algorithm outside those is refused by name,
never guessed at: SHA-1 included, except where a format fixes it (an ESSCertID's hash of a
certificate, RFC 2634).
"""

from dataclasses import dataclass

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.der import (
    DER_NULL,
    DER_OID,
    DerElement,
    der_bit_string,
    der_context,
    der_expect,
    der_explicit,
    der_integer,
    der_null,
    der_oid,
    der_positive_integer,
    der_read,
    der_sequence,
)
from generator.verifier.crypto.ecdsa import EC_CURVES, EcPublicKey, ec_public_key, ecdsa_verify
from generator.verifier.crypto.rsa import RsaPublicKey, rsa_public_key, rsa_verify_pkcs1v15, rsa_verify_pss

PKIX_HASH_OIDS = {
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
}
_SIG_SHA1_OID = "1.3.14.3.2.26"
_SIG_RSA_ENCRYPTION = "1.2.840.113549.1.1.1"
_SIG_RSA_PSS = "1.2.840.113549.1.1.10"
_SIG_MGF1 = "1.2.840.113549.1.1.8"
_SIG_EC_PUBLIC_KEY = "1.2.840.10045.2.1"
_SIG_RSA_PKCS1 = {
    "1.2.840.113549.1.1.11": "sha256",  # sha256WithRSAEncryption
    "1.2.840.113549.1.1.12": "sha384",
    "1.2.840.113549.1.1.13": "sha512",
}
_SIG_ECDSA = {
    "1.2.840.10045.4.3.2": "sha256",  # ecdsa-with-SHA256
    "1.2.840.10045.4.3.3": "sha384",
    "1.2.840.10045.4.3.4": "sha512",
}
_SIG_NAMES = {
    _SIG_SHA1_OID: "SHA-1",
    "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
    "1.2.840.10045.4.1": "ecdsa-with-SHA1",
    "1.2.840.10040.4.3": "dsa-with-sha1",
    "1.3.101.112": "Ed25519",
    "2.16.840.1.101.3.4.2.4": "SHA-224",
}


def _sig_named(oid: str) -> str:
    return f"{_SIG_NAMES[oid]} ({oid})" if oid in _SIG_NAMES else oid


def _sig_parameters_absent_or_null(rest: list[DerElement], what: str) -> None:
    """RFC 4055 section 2.1 and RFC 5754 section 2: a SHA-2 algorithm's parameters are absent or
    NULL, and both must be accepted."""
    if rest:
        der_null(rest[0], f"{what}'s parameters")


def pkix_hash_algorithm(element: DerElement, what: str) -> str:
    """The hash ("sha256", "sha384" or "sha512") an AlgorithmIdentifier names."""
    fields = der_sequence(element, what, 1, 2)
    oid = der_oid(fields[0], what)
    if oid not in PKIX_HASH_OIDS:
        raise FormatError(f"{what}: the hash algorithm {_sig_named(oid)} is not supported (SHA-256, -384, -512 are)")
    _sig_parameters_absent_or_null(fields[1:], what)
    return PKIX_HASH_OIDS[oid]


@dataclass(frozen=True)
class SignatureAlgorithm:
    """What an AlgorithmIdentifier of a signature names: its scheme ("rsa-pkcs1v15", "rsa-pss" or
    "ecdsa"), its hash (None for rsaEncryption, whose hash CMS gives as the digest algorithm), and
    for RSASSA-PSS the salt length."""

    scheme: str
    hash_name: str | None
    salt_length: int = 0


def _sig_pss_parameters(element: DerElement, what: str) -> SignatureAlgorithm:
    """RSASSA-PSS-params (RFC 8017 appendix A.2.3): a SHA-2 hash, MGF1 over that same hash, a salt
    length, and the trailer field 1; the defaults (SHA-1, a salt of 20) leave SHA-1 in, so refused."""
    elements = der_sequence(element, f"{what}'s RSASSA-PSS parameters", 0, 4)
    tags = [f.tag for f in elements]
    if tags != sorted(set(tags)) or not set(tags) <= {der_context(i) for i in range(4)}:
        raise FormatError(f"{what}: RSASSA-PSS parameters other than [0] to [3], each once and in order")
    fields = {f.tag: f for f in elements}
    if der_context(0) not in fields:
        raise FormatError(f"{what}: RSASSA-PSS with the default hash, SHA-1, which is not supported")
    hash_name = pkix_hash_algorithm(der_explicit(fields[der_context(0)], 0, what), f"{what}'s PSS hash")
    if der_context(1) not in fields:
        raise FormatError(f"{what}: RSASSA-PSS with the default mask generation, MGF1 over SHA-1, not supported")
    mgf = der_sequence(der_explicit(fields[der_context(1)], 1, what), f"{what}'s mask generation", 2, 2)
    if der_oid(mgf[0], f"{what}'s mask generation") != _SIG_MGF1:
        raise FormatError(f"{what}: RSASSA-PSS with a mask generation function other than MGF1")
    if pkix_hash_algorithm(mgf[1], f"{what}'s MGF1 hash") != hash_name:
        raise FormatError(f"{what}: RSASSA-PSS with MGF1 over a hash other than the signature's")
    salt = 20
    if der_context(2) in fields:
        salt = der_integer(der_explicit(fields[der_context(2)], 2, what), f"{what}'s salt length")
    if der_context(3) in fields and der_integer(der_explicit(fields[der_context(3)], 3, what), what) != 1:
        raise FormatError(f"{what}: RSASSA-PSS with a trailer field other than 1 (0xBC)")
    if salt < 0:
        raise FormatError(f"{what}: RSASSA-PSS with a negative salt length")
    return SignatureAlgorithm("rsa-pss", hash_name, salt)


def pkix_signature_algorithm(element: DerElement, what: str) -> SignatureAlgorithm:
    """The signature algorithm an AlgorithmIdentifier names."""
    fields = der_sequence(element, what, 1, 2)
    oid = der_oid(fields[0], what)
    if oid == _SIG_RSA_ENCRYPTION or oid in _SIG_RSA_PKCS1:
        _sig_parameters_absent_or_null(fields[1:], what)
        return SignatureAlgorithm("rsa-pkcs1v15", _SIG_RSA_PKCS1.get(oid))
    if oid == _SIG_RSA_PSS:
        if len(fields) != 2:
            raise FormatError(f"{what}: RSASSA-PSS without its parameters")
        return _sig_pss_parameters(fields[1], what)
    if oid in _SIG_ECDSA:
        if len(fields) != 1:  # RFC 5758 section 3.2: the parameters MUST be absent
            raise FormatError(f"{what}: ECDSA with parameters, which RFC 5758 leaves absent")
        return SignatureAlgorithm("ecdsa", _SIG_ECDSA[oid])
    raise FormatError(f"{what}: the signature algorithm {_sig_named(oid)} is not supported")


@dataclass(frozen=True)
class SignatureKey:
    """A public key read from a SubjectPublicKeyInfo, which verifies signatures."""

    key: RsaPublicKey | EcPublicKey

    def describe(self) -> str:
        if isinstance(self.key, RsaPublicKey):
            return f"RSA {self.key.n.bit_length()}"
        return f"ECDSA {self.key.curve.name}"

    def verify(self, algorithm: SignatureAlgorithm, message: bytes, signature: bytes) -> bool:
        """Whether `signature` is this key's signature on `message` under `algorithm`; raises
        FormatError when the algorithm is not one this key signs with."""
        if algorithm.hash_name is None:
            raise FormatError(f"{algorithm.scheme} without the hash it is used with")
        if isinstance(self.key, RsaPublicKey):
            if algorithm.scheme == "rsa-pkcs1v15":
                return rsa_verify_pkcs1v15(self.key, algorithm.hash_name, message, signature)
            if algorithm.scheme == "rsa-pss":
                return rsa_verify_pss(self.key, algorithm.hash_name, algorithm.salt_length, message, signature)
        elif algorithm.scheme == "ecdsa":
            return ecdsa_verify(self.key, algorithm.hash_name, message, signature)
        raise FormatError(f"a {algorithm.scheme} signature algorithm for an {self.describe()} key")


def _sig_rsa_key(key_bytes: bytes) -> RsaPublicKey:
    """RSAPublicKey (RFC 8017 appendix A.1.1): SEQUENCE { modulus, publicExponent }."""
    n_element, e_element = der_sequence(der_read(key_bytes, "the RSA public key"), "the RSA public key", 2, 2)
    return rsa_public_key(
        der_positive_integer(n_element, "the RSA modulus"), der_positive_integer(e_element, "the RSA exponent")
    )


def read_subject_public_key_info(data: bytes | DerElement) -> SignatureKey:
    """The key a SubjectPublicKeyInfo (RFC 5280 section 4.1.2.7) holds: rsaEncryption (RFC 3279
    2.3.1, NULL parameters) or id-ecPublicKey on a named curve, P-256 or P-384 (RFC 5480)."""
    element = der_read(data, "the SubjectPublicKeyInfo") if isinstance(data, bytes) else data
    algorithm, key_bits = der_sequence(element, "the SubjectPublicKeyInfo", 2, 2)
    fields = der_sequence(algorithm, "the public key's algorithm", 1, 2)
    oid = der_oid(fields[0], "the public key's algorithm")
    key_bytes = der_bit_string(key_bits, "the subject public key")[0]
    if oid == _SIG_RSA_ENCRYPTION:
        if len(fields) != 2 or fields[1].tag != DER_NULL:
            raise FormatError("an rsaEncryption public key whose parameters are not NULL (RFC 3279 2.3.1)")
        der_null(fields[1], "the rsaEncryption parameters")
        return SignatureKey(_sig_rsa_key(key_bytes))
    if oid == _SIG_EC_PUBLIC_KEY:
        if len(fields) != 2 or fields[1].tag != DER_OID:
            raise FormatError("an EC public key whose parameters are not a named curve (RFC 5480 2.1.1)")
        curve_oid = der_oid(der_expect(fields[1], DER_OID, "the named curve"), "the named curve")
        if curve_oid not in EC_CURVES:
            raise FormatError(f"an EC public key on the curve {curve_oid}, not P-256 or P-384")
        return SignatureKey(ec_public_key(EC_CURVES[curve_oid], key_bytes))
    raise FormatError(f"a public key of the algorithm {_sig_named(oid)}, not RSA or EC")
