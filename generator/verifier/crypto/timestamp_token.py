"""RFC 3161 timestamp tokens, read and verified against a pinned authority certificate: the
proof, signed by a timestamp authority, that a hash existed at a time.

A token is a CMS SignedData (RFC 5652) whose content is a TSTInfo: the hash timestamped (the
message imprint), the time, a serial number and the authority's policy. The authority signs the
DER of its signed attributes, which bind the TSTInfo (messageDigest) and the authority's
certificate (ESSCertID, RFC 2634, or ESSCertIDv2, RFC 5816). Verification trusts only the
certificate its caller pins: a certificate the token carries is compared with it, never used.
The certificate's own validity dates are returned, not judged: the caller knows when it trusted it.

The token is read as DER, strictly, but for one thing: the certificates it carries may come in any
order. DER would sort them, yet CMS asks DER of the signed attributes only, and OpenSSL's authority
lists its chain leaf first; they are compared, never used, so their order decides nothing.
"""

import dataclasses
import hashlib
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.der import (
    DER_BOOLEAN,
    DER_INTEGER,
    DER_OCTET_STRING,
    DER_SEQUENCE,
    DerElement,
    der_bit_string,
    der_boolean,
    der_children,
    der_context,
    der_expect,
    der_explicit,
    der_generalized_time,
    der_integer,
    der_octet_string,
    der_oid,
    der_positive_integer,
    der_read,
    der_sequence,
    der_set_of,
    der_text,
)
from generator.verifier.crypto.signatures import pkix_hash_algorithm, pkix_signature_algorithm
from generator.verifier.crypto.x509 import (
    X509Certificate,
    read_x509_certificate,
    x509_name_text,
    x509_timestamping_problem,
)

TST_INFO_OID = "1.2.840.113549.1.9.16.1.4"  # id-ct-TSTInfo
_TST_SIGNED_DATA = "1.2.840.113549.1.7.2"
_TST_CONTENT_TYPE = "1.2.840.113549.1.9.3"
_TST_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
_TST_SIGNING_CERTIFICATE = "1.2.840.113549.1.9.16.2.12"
_TST_SIGNING_CERTIFICATE_V2 = "1.2.840.113549.1.9.16.2.47"
_TST_STATUS = ("granted", "grantedWithMods", "rejection", "waiting", "revocationWarning", "revocationNotification")
# PKIFailureInfo (RFC 3161 section 2.4.2), by the number of its bit.
_TST_FAILURES = {
    0: "badAlg",
    2: "badRequest",
    5: "badDataFormat",
    14: "timeNotAvailable",
    15: "unacceptedPolicy",
    16: "unacceptedExtension",
    17: "addInfoNotAvailable",
    25: "systemFailure",
}
# RFC 3161 section 2.4.2's order of TSTInfo's optional fields, after genTime.
_TST_OPTIONAL_ORDER = (DER_SEQUENCE, DER_BOOLEAN, DER_INTEGER, der_context(0), der_context(1))


@dataclass(frozen=True)
class TimestampToken:
    """What a timestamp token states. gen_time is ISO 8601 truncated to the second;
    gen_time_exact is the GeneralizedTime as the token has it ("20260102030405.25Z")."""

    gen_time: str
    gen_time_exact: str
    hash_algorithm: str  # of the message imprint: "sha256", "sha384" or "sha512"
    hashed_message: bytes
    serial: int
    policy: str
    nonce: int | None
    tsa_name: str | None
    accuracy_micros: int | None  # the accuracy given, in microseconds; None: not given
    ordering: bool
    token: bytes  # the TimeStampToken's DER, taken out of a TimeStampResp when it came in one
    certificates: tuple[bytes, ...]  # the certificates the token carries (never trusted)
    authority: X509Certificate | None = None  # the pinned certificate it verified against


@dataclass(frozen=True)
class _TstSigner:
    """The SignerInfo's parts (RFC 5652 section 5.3) a verification needs."""

    sid_issuer: bytes | None  # DER of the issuer Name, for an IssuerAndSerialNumber
    sid_serial: int | None
    sid_key_identifier: bytes | None  # for a subjectKeyIdentifier
    digest_algorithm: str
    signed_attributes: DerElement
    signature_algorithm: DerElement
    signature: bytes


@dataclass(frozen=True)
class _TstParsed:
    token: TimestampToken
    tst_info: bytes
    signer: _TstSigner
    tsa_directory_name: bytes | None


def _tst_refusal_detail(rest: list[DerElement]) -> str:
    """The statusString and failInfo of a PKIStatusInfo, for a person."""
    words = []
    for element in rest:
        if element.tag == DER_SEQUENCE:
            words += [der_text(t, "the status text") for t in der_children(element)]
        else:
            bits, _ = der_bit_string(element, "the failure information", whole_bytes=False)
            if len(bits) > 4:  # RFC 3161 names 26 bits: a longer string is read no further
                words.append(f"failure information of {len(bits)} bytes")
                continue
            number, width = int.from_bytes(bits, "big"), 8 * len(bits)
            set_bits = [i for i in range(width) if number >> (width - 1 - i) & 1]
            words += [_TST_FAILURES.get(i, f"failure bit {i}") for i in set_bits]
    return f": {'; '.join(words)}" if words else ""


def _tst_unwrap(element: DerElement) -> DerElement:
    """The ContentInfo, given one or a TimeStampResp (RFC 3161 section 2.4.2) that holds one."""
    first = der_children(der_expect(element, DER_SEQUENCE, "the token"))
    if first and first[0].tag != DER_SEQUENCE:
        return element
    fields = der_sequence(element, "the TimeStampResp", 1, 2)
    info = der_sequence(fields[0], "the PKIStatusInfo", 1, 3)
    status = der_integer(info[0], "the PKIStatus")
    if status not in (0, 1):
        name = _TST_STATUS[status] if 0 <= status < len(_TST_STATUS) else f"unknown, {status.bit_length()} bits"
        raise FormatError(f"the authority refused the request (status {name}){_tst_refusal_detail(info[1:])}")
    if len(fields) != 2:
        raise FormatError("the authority's reply grants the request but holds no token")
    return fields[1]


def _tst_general_name(element: DerElement) -> tuple[str, bytes | None]:
    """A GeneralName (RFC 5280 4.2.1.6) as text, and the DER of the Name for a directoryName."""
    if element.tag == der_context(4):
        name = der_explicit(element, 4, "the TSA name")
        return x509_name_text(name), name.encoded
    if element.tag in (0x81, 0x82, 0x86):  # rfc822Name, dNSName, uniformResourceIdentifier
        return element.content.decode("ascii", "replace"), None
    return f"[{element.tag & 0x1F}] {element.content.hex()}", None


def _tst_accuracy(element: DerElement) -> int:
    """An Accuracy (RFC 3161 2.4.2): seconds, [0] millis and [1] micros, each optional."""
    scales = {DER_INTEGER: 1_000_000, 0x80: 1000, 0x81: 1}
    fields = der_children(der_expect(element, DER_SEQUENCE, "the accuracy"))
    tags = [f.tag for f in fields]
    if [t for t in scales if t in tags] != tags:
        raise FormatError("the accuracy holds other than seconds, [0] millis and [1] micros, each once, in order")
    micros = 0
    for part in fields:
        value = der_integer(part, "the accuracy", part.tag)
        if value < 0 or (part.tag != DER_INTEGER and not 1 <= value <= 999):
            raise FormatError(f"the accuracy holds {value} where {'0 or more' if part.tag == DER_INTEGER else '1-999'}")
        micros += value * scales[part.tag]
    return micros


def _tst_info(content: bytes, token: bytes, certificates: tuple[bytes, ...]) -> tuple[TimestampToken, bytes | None]:
    """What a TSTInfo (RFC 3161 section 2.4.2) states, and the DER of the TSA's Name if given."""
    fields = der_sequence(der_read(content, "the TSTInfo"), "the TSTInfo", 5, 10)
    if der_integer(fields[0], "the TSTInfo version") != 1:
        raise FormatError("a TSTInfo of a version other than 1")
    imprint_algorithm, hashed = der_sequence(fields[2], "the message imprint", 2, 2)
    imprint_hash = pkix_hash_algorithm(imprint_algorithm, "the message imprint's hash algorithm")
    hashed_message = der_octet_string(hashed, "the hashed message")
    if len(hashed_message) != hashlib.new(imprint_hash).digest_size:
        raise FormatError(f"the message imprint holds {len(hashed_message)} bytes, not a {imprint_hash} hash")
    gen_time, exact = der_generalized_time(fields[4], "genTime")
    tags = [f.tag for f in fields[5:]]
    if [t for t in _TST_OPTIONAL_ORDER if t in tags] != tags:
        raise FormatError("the TSTInfo's optional fields are not accuracy, ordering, nonce, tsa, extensions in order")
    optional = {f.tag: f for f in fields[5:]}
    if DER_BOOLEAN in optional and not der_boolean(optional[DER_BOOLEAN], "ordering"):
        raise FormatError("the TSTInfo states ordering FALSE, which DER leaves out")
    tsa_name = directory_name = None
    if der_context(0) in optional:
        tsa_name, directory_name = _tst_general_name(der_explicit(optional[der_context(0)], 0, "the TSA"))
    stated = TimestampToken(
        gen_time=gen_time,
        gen_time_exact=exact,
        hash_algorithm=imprint_hash,
        hashed_message=hashed_message,
        serial=der_positive_integer(fields[3], "the serial number"),
        policy=der_oid(fields[1], "the policy"),
        nonce=der_integer(optional[DER_INTEGER], "the nonce") if DER_INTEGER in optional else None,
        tsa_name=tsa_name,
        accuracy_micros=_tst_accuracy(optional[DER_SEQUENCE]) if DER_SEQUENCE in optional else None,
        ordering=DER_BOOLEAN in optional,
        token=token,
        certificates=certificates,
    )
    return stated, directory_name


def _tst_signer(element: DerElement) -> _TstSigner:
    """The one SignerInfo (RFC 5652 section 5.3) of a token."""
    fields = der_sequence(element, "the SignerInfo", 6, 7)
    version = der_integer(fields[0], "the SignerInfo version")
    issuer = serial = key_id = None
    if fields[1].tag == DER_SEQUENCE and version == 1:
        issuer_element, serial_element = der_sequence(fields[1], "the signer's IssuerAndSerialNumber", 2, 2)
        der_sequence(issuer_element, "the signer's issuer")
        issuer, serial = issuer_element.encoded, der_integer(serial_element, "the signer's serial number")
    elif fields[1].tag == 0x80 and version == 3:
        key_id = der_octet_string(fields[1], "the signer's key identifier", 0x80)
    else:
        raise FormatError(f"a SignerInfo of version {version} with a signer identifier of tag 0x{fields[1].tag:02x}")
    if fields[3].tag != der_context(0):
        raise FormatError("the SignerInfo has no signed attributes (a timestamp token needs them)")
    if len(fields) == 7 and fields[6].tag != der_context(1):
        raise FormatError("the SignerInfo ends in other than its unsigned attributes")
    return _TstSigner(
        sid_issuer=issuer,
        sid_serial=serial,
        sid_key_identifier=key_id,
        digest_algorithm=pkix_hash_algorithm(fields[2], "the SignerInfo's digest algorithm"),
        signed_attributes=fields[3],
        signature_algorithm=fields[4],
        signature=der_octet_string(fields[5], "the signature"),
    )


def _tst_signed_data(content_info: DerElement) -> tuple[bytes, tuple[bytes, ...], _TstSigner]:
    """The eContent (a TSTInfo's DER), the certificates and the signer of a ContentInfo that holds
    a SignedData (RFC 5652 sections 3 and 5)."""
    kind, wrapped = der_sequence(content_info, "the ContentInfo", 2, 2)
    if der_oid(kind, "the content type") != _TST_SIGNED_DATA:
        raise FormatError(f"a ContentInfo of the type {der_oid(kind, 'the content type')}, not signedData")
    fields = der_sequence(der_explicit(wrapped, 0, "the content"), "the SignedData", 4, 6)
    if der_integer(fields[0], "the SignedData version") != 3:  # RFC 5652 5.1: eContentType other than id-data
        raise FormatError("a SignedData of a version other than 3")
    for algorithm in der_set_of(fields[1], "the digest algorithms"):
        der_sequence(algorithm, "a digest algorithm", 1, 2)
    e_type, e_content = der_sequence(fields[2], "the EncapsulatedContentInfo", 2, 2)
    if der_oid(e_type, "the eContentType") != TST_INFO_OID:
        raise FormatError(f"the token's content is {der_oid(e_type, 'the eContentType')}, not id-ct-TSTInfo")
    tst_info = der_octet_string(der_explicit(e_content, 0, "the eContent"), "the eContent", DER_OCTET_STRING)
    rest = fields[3:-1]
    tags = [f.tag for f in rest]
    if tags not in ([], [der_context(0)], [der_context(1)], [der_context(0), der_context(1)]):
        raise FormatError("the SignedData holds other than certificates [0] and CRLs [1] before its signers")
    certificates = tuple(c.encoded for c in der_children(rest[0])) if der_context(0) in tags else ()
    signers = der_set_of(fields[-1], "the SignerInfos")
    if len(signers) != 1:
        raise FormatError(f"a timestamp token with {len(signers)} signers (RFC 3161 2.4.2: one, the authority)")
    return tst_info, certificates, _tst_signer(signers[0])


def _tst_parse(token_der: bytes) -> _TstParsed:
    content_info = _tst_unwrap(der_read(token_der, "the token"))
    tst_info, certificates, signer = _tst_signed_data(content_info)
    token, directory_name = _tst_info(tst_info, content_info.encoded, certificates)
    return _TstParsed(token, tst_info, signer, directory_name)


def read_timestamp_token(token_der: bytes) -> TimestampToken:
    """What a timestamp token (or a TimeStampResp holding one) states, read but not verified."""
    return _tst_parse(token_der).token


def _tst_attributes(element: DerElement) -> dict[str, list[DerElement]]:
    """The signed attributes (RFC 5652 5.3), by type, each given once, each with its values."""
    out: dict[str, list[DerElement]] = {}
    for attribute in der_set_of(element, "the signed attributes", der_context(0)):
        kind, values = der_sequence(attribute, "a signed attribute", 2, 2)
        oid = der_oid(kind, "a signed attribute's type")
        if oid in out:
            raise FormatError(f"the signed attribute {oid} is given twice")
        out[oid] = der_set_of(values, f"the values of the signed attribute {oid}")
    return out


def _tst_single(attributes: dict[str, list[DerElement]], oid: str, name: str) -> DerElement | None:
    values = attributes.get(oid)
    if values is None:
        return None
    if len(values) != 1:
        raise FormatError(f"the signed attribute {name} has {len(values)} values, not one")
    return values[0]


def _tst_issuer_serial_problem(element: DerElement, certificate: X509Certificate, name: str) -> str | None:
    """Why an IssuerSerial (RFC 2634 5.4.1) does not name the certificate, or None."""
    names, serial = der_sequence(element, f"{name}'s issuerSerial", 2, 2)
    if der_integer(serial, f"{name}'s serial number") != certificate.serial:
        return f"the signed attribute {name} names the serial number {der_integer(serial, name)}"
    issuers = [g for g in der_sequence(names, f"{name}'s issuer", 1) if g.tag == der_context(4)]
    if not any(der_explicit(g, 4, f"{name}'s issuer").encoded == certificate.issuer for g in issuers):
        return f"the signed attribute {name} names an issuer other than the certificate's"
    return None


def _tst_cert_id_problem(attributes: dict[str, list[DerElement]], certificate: X509Certificate) -> str | None:
    """Why the signingCertificate (ESSCertID, RFC 2634 5.4) and signingCertificateV2 (ESSCertIDv2,
    RFC 5035 section 3) attributes do not name the certificate, or None; at least one must be
    there, and the first certificate either names is the signer's."""
    found = False
    for oid, name in (
        (_TST_SIGNING_CERTIFICATE, "signingCertificate"),
        (_TST_SIGNING_CERTIFICATE_V2, "signingCertificateV2"),
    ):
        value = _tst_single(attributes, oid, name)
        if value is None:
            continue
        found = True
        certs = der_sequence(der_sequence(value, name, 1, 2)[0], f"{name}'s certificates", 1)
        fields = der_sequence(certs[0], f"{name}'s first certificate", 1, 3)
        hash_name = "sha1"
        if oid == _TST_SIGNING_CERTIFICATE_V2:
            hash_name = "sha256"
            if fields[0].tag == DER_SEQUENCE:
                hash_name = pkix_hash_algorithm(fields[0], f"{name}'s hash algorithm")
                fields = fields[1:]
        if not fields or len(fields) > 2:
            raise FormatError(f"the signed attribute {name} names its first certificate in other than its fields")
        if der_octet_string(fields[0], f"{name}'s certificate hash") != certificate.digest(hash_name):
            return f"the signed attribute {name} names another certificate (its {hash_name} hash differs)"
        if len(fields) == 2 and (problem := _tst_issuer_serial_problem(fields[1], certificate, name)):
            return problem
    return None if found else "neither signingCertificate nor signingCertificateV2 is among the signed attributes"


def _tst_check_signed_attributes(parsed: _TstParsed, certificate: X509Certificate) -> None:
    attributes = _tst_attributes(parsed.signer.signed_attributes)
    content_type = _tst_single(attributes, _TST_CONTENT_TYPE, "contentType")
    if content_type is None:
        raise FormatError("the signed attribute contentType is missing")
    if (kind := der_oid(content_type, "contentType")) != TST_INFO_OID:
        raise FormatError(f"the signed attribute contentType is {kind}, not id-ct-TSTInfo ({TST_INFO_OID})")
    digest = _tst_single(attributes, _TST_MESSAGE_DIGEST, "messageDigest")
    if digest is None:
        raise FormatError("the signed attribute messageDigest is missing")
    algorithm = parsed.signer.digest_algorithm
    if der_octet_string(digest, "messageDigest") != hashlib.new(algorithm, parsed.tst_info).digest():
        raise FormatError(f"the signed attribute messageDigest is not the {algorithm} of the token's TSTInfo")
    if problem := _tst_cert_id_problem(attributes, certificate):
        raise FormatError(f"the token's signer is not the pinned authority certificate: {problem}")


def _tst_issuer_and_serial(der: bytes) -> tuple[bytes, int] | None:
    """The issuer (DER) and serial number of a certificate the token carries, or None when it is
    not a certificate read here (it is compared, never used, so it need not be readable)."""
    try:
        tbs = der_children(der_sequence(der_read(der, "a certificate"), "a certificate", 3, 3)[0])
        tbs = tbs[1:] if tbs and tbs[0].tag == der_context(0) else tbs
        return tbs[2].encoded, der_integer(tbs[0], "a serial number")
    except (FormatError, IndexError):
        return None


def _tst_check_signer(parsed: _TstParsed, certificate: X509Certificate) -> None:
    """The SignerInfo's identifier, a signer certificate the token carries, and the TSA name the
    TSTInfo gives, if any, must each designate the pinned certificate."""
    signer = parsed.signer
    pinned = (
        f"the pinned authority certificate ({certificate.subject_text}, serial {certificate.serial} of "
        f"{certificate.issuer_text})"
    )
    if signer.sid_key_identifier is not None:
        if signer.sid_key_identifier != certificate.subject_key_identifier:
            raise FormatError(f"the token's signer (key identifier {signer.sid_key_identifier.hex()}) is not {pinned}")
    elif (signer.sid_issuer, signer.sid_serial) != (certificate.issuer, certificate.serial):
        issuer = x509_name_text(der_read(signer.sid_issuer or b"", "the signer's issuer"))
        raise FormatError(f"the token's signer (serial {signer.sid_serial} of {issuer}) is not {pinned}")
    for carried in parsed.token.certificates:
        if _tst_issuer_and_serial(carried) == (certificate.issuer, certificate.serial) and carried != certificate.der:
            raise FormatError(f"the token carries a certificate with the issuer and serial of {pinned}, not it")
    if parsed.tsa_directory_name is not None and parsed.tsa_directory_name != certificate.subject:
        raise FormatError(f"the token names the authority {parsed.token.tsa_name}, not the subject of {pinned}")


def _tst_check_signature(parsed: _TstParsed, certificate: X509Certificate) -> None:
    signer = parsed.signer
    algorithm = pkix_signature_algorithm(signer.signature_algorithm, "the SignerInfo's signature algorithm")
    if algorithm.hash_name is None:  # rsaEncryption: CMS hashes with the digest algorithm (RFC 3370 3.2)
        algorithm = dataclasses.replace(algorithm, hash_name=signer.digest_algorithm)
    elif algorithm.hash_name != signer.digest_algorithm:
        raise FormatError(
            f"the signature algorithm hashes with {algorithm.hash_name}, the SignerInfo's digest algorithm is "
            f"{signer.digest_algorithm}"
        )
    # RFC 5652 5.4: the signature covers the DER of the attributes as a SET OF, not as their [0] tag.
    signed = b"\x31" + signer.signed_attributes.encoded[1:]
    if not certificate.public_key.verify(algorithm, signed, signer.signature):
        raise FormatError(
            f"the signature does not verify against the pinned authority certificate ({certificate.subject_text}, "
            f"{certificate.public_key.describe()}, {algorithm.scheme} with {algorithm.hash_name})"
        )


def verify_timestamp_token(
    token_der: bytes, authority_certificate: bytes, data: bytes, data_name: str = "the data"
) -> TimestampToken:
    """What a timestamp token (or a TimeStampResp holding one) states, once verified: signed by the
    key of `authority_certificate` (PEM or DER), which must be allowed to sign timestamps, and
    timestamping `data` (`data_name` says what it is in errors: "the checkpoint"). Raises
    FormatError naming the first check that fails."""
    parsed = _tst_parse(token_der)
    try:
        certificate = read_x509_certificate(authority_certificate)
    except FormatError as error:
        raise FormatError(f"the pinned authority certificate cannot be read: {error}") from None
    if problem := x509_timestamping_problem(certificate):
        raise FormatError(f"the pinned authority certificate may not sign timestamp tokens: {problem}")
    _tst_check_signer(parsed, certificate)
    _tst_check_signed_attributes(parsed, certificate)
    _tst_check_signature(parsed, certificate)
    token = parsed.token
    expected = hashlib.new(token.hash_algorithm, data).digest()
    if expected != token.hashed_message:
        raise FormatError(
            f"the message imprint is not the hash of {data_name}: the token's {token.hash_algorithm} is "
            f"{token.hashed_message.hex()}, {data_name} hashes to {expected.hex()}"
        )
    return dataclasses.replace(token, authority=certificate)
