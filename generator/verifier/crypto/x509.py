"""The parts of an X.509 certificate (RFC 5280) a timestamp token is checked against: its public
key, its hashes, its issuer and serial number, its subject key identifier, its validity dates and
its key usages.

The certificate is one its reader chose to trust (pinned), so its own signature and its chain are
not checked here; it is read strictly all the same, as the DER it must be, because the bytes read
are the bytes whose hash the token names.
"""

import base64
import binascii
import hashlib
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.der import (
    DER_BOOLEAN,
    DerElement,
    der_bit_string,
    der_boolean,
    der_context,
    der_expect,
    der_explicit,
    der_integer,
    der_octet_string,
    der_oid,
    der_read,
    der_sequence,
    der_set_of,
    der_text,
    der_time,
)
from generator.verifier.crypto.signatures import SignatureKey, read_subject_public_key_info

X509_EKU_TIME_STAMPING = "1.3.6.1.5.5.7.3.8"
_X509_EXT_KEY_USAGE = "2.5.29.15"
_X509_EXT_EXTENDED_KEY_USAGE = "2.5.29.37"
_X509_EXT_SUBJECT_KEY_IDENTIFIER = "2.5.29.14"
_X509_ATTRIBUTE_NAMES = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.5": "serialNumber",
    "1.2.840.113549.1.9.1": "emailAddress",
}
_X509_PEM_BEGIN = b"-----BEGIN CERTIFICATE-----"
_X509_PEM_END = b"-----END CERTIFICATE-----"


@dataclass(frozen=True)
class X509Certificate:
    """What a certificate says that a timestamp token is checked against. Names are kept as their
    DER (compared byte for byte, which DER makes exact) and as text for a person."""

    der: bytes
    serial: int
    issuer: bytes
    subject: bytes
    issuer_text: str
    subject_text: str
    not_before: str  # ISO 8601, "2026-01-02T03:04:05Z"
    not_after: str
    public_key: SignatureKey
    subject_key_identifier: bytes | None
    key_usage: frozenset[str] | None  # None: the certificate has no keyUsage extension
    extended_key_usage: tuple[str, ...] | None  # OIDs; None: no extendedKeyUsage extension
    extended_key_usage_critical: bool

    def digest(self, hash_name: str) -> bytes:
        """The hash of the certificate's DER ("sha1" for an ESSCertID, "sha256" for most v2 ones)."""
        return hashlib.new(hash_name, self.der).digest()


def _x509_der_of(data: bytes) -> bytes:
    """The DER of one certificate given as DER or as one PEM block (RFC 7468: text may come before
    the block, as `openssl x509 -text` writes it, and blank space after)."""
    begin = data.find(_X509_PEM_BEGIN)
    if begin < 0:
        return data
    end = data.find(_X509_PEM_END, begin)
    if data.count(_X509_PEM_BEGIN) != 1 or end < 0 or data[end + len(_X509_PEM_END) :].strip():
        raise FormatError("a PEM file of other than one certificate")
    body = data[begin + len(_X509_PEM_BEGIN) : end]
    try:
        return base64.b64decode(b"".join(body.split()), validate=True)
    except (binascii.Error, ValueError):
        raise FormatError("a PEM block whose body is not base64") from None


def x509_name_text(name: DerElement) -> str:
    """A Name (RFC 5280 4.1.2.4) for a person: "C=DE, O=Example, CN=Example TSA", in its order."""
    parts = []
    for rdn in der_sequence(name, "a name"):
        for attribute in der_set_of(rdn, "a relative distinguished name"):
            kind, value = der_sequence(attribute, "a name's attribute", 2, 2)
            oid = der_oid(kind, "a name's attribute type")
            try:
                text = der_text(value, "a name's attribute value")
            except FormatError:
                text = "#" + value.encoded.hex()
            parts.append(f"{_X509_ATTRIBUTE_NAMES.get(oid, oid)}={text}")
    return ", ".join(parts)


@dataclass
class _X509Extensions:
    subject_key_identifier: bytes | None = None
    key_usage: frozenset[str] | None = None
    extended_key_usage: tuple[str, ...] | None = None
    extended_key_usage_critical: bool = False


# RFC 5280 4.2.1.3, in the order of their bits.
_X509_KEY_USAGE_BITS = (
    *("digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment"),
    *("keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"),
)


def _x509_key_usage(value: bytes) -> frozenset[str]:
    bits, _ = der_bit_string(der_read(value, "the key usage"), "the key usage", whole_bytes=False)
    number = int.from_bytes(bits, "big")
    width = 8 * len(bits)
    return frozenset(name for i, name in enumerate(_X509_KEY_USAGE_BITS) if i < width and number >> (width - 1 - i) & 1)


def _x509_extensions(element: DerElement) -> _X509Extensions:
    out = _X509Extensions()
    seen: set[str] = set()
    for extension in der_sequence(der_explicit(element, 3, "the extensions"), "the extensions", 1):
        fields = der_sequence(extension, "an extension", 2, 3)
        oid = der_oid(fields[0], "an extension's identifier")
        if oid in seen:
            raise FormatError(f"the certificate has the extension {oid} twice (RFC 5280 4.2)")
        seen.add(oid)
        critical = False
        if len(fields) == 3:
            critical = der_boolean(der_expect(fields[1], DER_BOOLEAN, "critical"), "an extension's criticality")
            if not critical:  # X.690 11.5: a value equal to its DEFAULT is left out
                raise FormatError(f"the extension {oid} states critical FALSE, which DER leaves out")
        value = der_octet_string(fields[-1], "an extension's value")
        if oid == _X509_EXT_SUBJECT_KEY_IDENTIFIER:
            out.subject_key_identifier = der_octet_string(der_read(value, "the key identifier"), "the key identifier")
        elif oid == _X509_EXT_KEY_USAGE:
            out.key_usage = _x509_key_usage(value)
        elif oid == _X509_EXT_EXTENDED_KEY_USAGE:
            purposes = der_sequence(der_read(value, "the extended key usage"), "the extended key usage", 1)
            out.extended_key_usage = tuple(der_oid(p, "a key purpose") for p in purposes)
            out.extended_key_usage_critical = critical
    return out


def read_x509_certificate(data: bytes) -> X509Certificate:
    """The certificate `data` holds, as DER or PEM."""
    der = _x509_der_of(data)
    tbs_element, algorithm, signature = der_sequence(der_read(der, "the certificate"), "the certificate", 3, 3)
    der_sequence(algorithm, "the certificate's signature algorithm", 1, 2)
    der_bit_string(signature, "the certificate's signature")
    tbs = der_sequence(tbs_element, "the certificate's TBSCertificate", 6, 10)
    if tbs[0].tag == der_context(0):
        version = der_integer(der_explicit(tbs[0], 0, "the version"), "the version")
        if version not in (1, 2):  # v1 is the DEFAULT, which DER leaves out
            raise FormatError(f"a certificate of the version number {version} (v2 or v3, 1 or 2, expected)")
        tbs = tbs[1:]
    if len(tbs) < 6:
        raise FormatError("the certificate's TBSCertificate has too few fields")
    serial_element, inner_algorithm, issuer, validity, subject, key_info, *optional = tbs
    if inner_algorithm.encoded != algorithm.encoded:  # RFC 5280 4.1.1.2
        raise FormatError("the certificate names two signature algorithms, inside and outside its TBSCertificate")
    serial = der_integer(serial_element, "the serial number")
    not_before, not_after = der_sequence(validity, "the validity", 2, 2)
    extensions = _X509Extensions()
    tags = [e.tag for e in optional]
    if tags != sorted(set(tags)) or not set(tags) <= {0x81, 0x82, der_context(3)}:
        raise FormatError("the certificate's TBSCertificate ends in other than [1], [2], [3], each once, in order")
    if optional and optional[-1].tag == der_context(3):
        extensions = _x509_extensions(optional[-1])
    return X509Certificate(
        der=der,
        serial=serial,
        issuer=issuer.encoded,
        subject=subject.encoded,
        issuer_text=x509_name_text(issuer),
        subject_text=x509_name_text(subject),
        not_before=der_time(not_before, "notBefore"),
        not_after=der_time(not_after, "notAfter"),
        public_key=read_subject_public_key_info(key_info),
        subject_key_identifier=extensions.subject_key_identifier,
        key_usage=extensions.key_usage,
        extended_key_usage=extensions.extended_key_usage,
        extended_key_usage_critical=extensions.extended_key_usage_critical,
    )


def x509_timestamping_problem(certificate: X509Certificate) -> str | None:
    """Why the certificate may not sign timestamp tokens, or None. RFC 3161 section 2.3: an
    extendedKeyUsage, if there is one, must be critical and name id-kp-timeStamping only; a
    keyUsage, if there is one, must allow signatures (digitalSignature or nonRepudiation)."""
    eku = certificate.extended_key_usage
    if eku is not None:
        if X509_EKU_TIME_STAMPING not in eku:
            return f"its extendedKeyUsage ({', '.join(eku)}) lacks id-kp-timeStamping ({X509_EKU_TIME_STAMPING})"
        if len(eku) != 1:
            return f"its extendedKeyUsage names other purposes than id-kp-timeStamping ({', '.join(eku)})"
        if not certificate.extended_key_usage_critical:
            return "its extendedKeyUsage id-kp-timeStamping is not marked critical"
    usage = certificate.key_usage
    if usage is not None and not usage & {"digitalSignature", "nonRepudiation"}:
        return f"its keyUsage ({', '.join(sorted(usage)) or 'none'}) allows no signature"
    return None
