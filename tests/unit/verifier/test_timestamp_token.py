"""The verifier's RFC 3161 timestamp tokens, against real tokens of OpenSSL's timestamp authority
(tests/support/timestamp_authority.py) signed with RSA-2048, ECDSA P-256 and ECDSA P-384, each
checked also by `openssl ts -verify`: both accept the genuine tokens and refuse every altered one
(another's data, another authority, a flipped signature byte, a changed signed attribute or
TSTInfo). Where they differ it is by design, and tested as such: OpenSSL reads BER, so it accepts a
token re-encoded with a non-minimal or indefinite length, or followed by stray bytes, which the
verifier's DER reader refuses. Then the pinned certificate's key usages; signatures OpenSSL makes
under every algorithm a token may name (RSASSA-PSS included, which its authority does not use),
verified through their AlgorithmIdentifier; and the DER reader's refusals one by one.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.der import (
    der_bit_string,
    der_boolean,
    der_children,
    der_generalized_time,
    der_integer,
    der_oid,
    der_read,
    der_set_of,
    der_utc_time,
)
from generator.verifier.crypto.ecdsa import EC_P256, EC_P384, EcPublicKey, ec_public_key
from generator.verifier.crypto.rsa import RsaPublicKey, rsa_public_key
from generator.verifier.crypto.signatures import (
    SignatureAlgorithm,
    pkix_signature_algorithm,
    read_subject_public_key_info,
)
from generator.verifier.crypto.timestamp_token import read_timestamp_token, verify_timestamp_token
from generator.verifier.crypto.x509 import read_x509_certificate, x509_timestamping_problem
from tests.support.timestamp_authority import KINDS, TSA_EXTENSIONS, TimestampAuthority, openssl, timestamp_authority

DATA = b"transparency.example/log\n42\nq6vH0pAnZ8Mhr0x2T8b5dR3lKq2W9ZpWm2cA0Xl7f2E=\n"


@pytest.fixture(scope="module")
def authorities() -> Iterator[dict[str, TimestampAuthority]]:
    with (
        timestamp_authority("rsa-2048") as rsa,
        timestamp_authority("ecdsa-p256") as p256,
        timestamp_authority("ecdsa-p384") as p384,
    ):
        yield {"rsa-2048": rsa, "ecdsa-p256": p256, "ecdsa-p384": p384}


@pytest.fixture(scope="module")
def tokens(authorities: dict[str, TimestampAuthority]) -> dict[str, bytes]:
    return {kind: tsa.token(DATA) for kind, tsa in authorities.items()}


# A small DER tree, independent of the verifier's reader, to alter a token and encode it again.
@dataclasses.dataclass
class Node:
    tag: int
    value: bytes | list[Node]
    length_form: str = "minimal"  # or "long": one more length byte than needed (BER, not DER)

    def encode(self) -> bytes:
        content = b"".join(c.encode() for c in self.value) if isinstance(self.value, list) else self.value
        n = len(content)
        size = (n.bit_length() + 7) // 8
        if self.length_form == "long":
            head = bytes([0x81 + size]) + n.to_bytes(size + 1, "big")
        else:
            head = bytes([n]) if n < 0x80 else bytes([0x80 + size]) + n.to_bytes(size, "big")
        return bytes([self.tag]) + head + content

    @property
    def children(self) -> list[Node]:
        assert isinstance(self.value, list)
        return self.value

    @property
    def octets(self) -> bytes:
        assert isinstance(self.value, bytes)
        return self.value

    def __getitem__(self, i: int) -> Node:
        return self.children[i]


def parse(data: bytes) -> Node:
    node, end = _parse_at(data, 0)
    assert end == len(data)
    return node


def _parse_at(data: bytes, at: int) -> tuple[Node, int]:
    tag, first = data[at], data[at + 1]
    start = at + 2
    n = first
    if first & 0x80:
        start += first & 0x7F
        n = int.from_bytes(data[at + 2 : start], "big")
    content = data[start : start + n]
    if not tag & 0x20:
        return Node(tag, content), start + n
    children, i = [], 0
    while i < n:
        child, i = _parse_at(content, i)
        children.append(child)
    return Node(tag, children), start + n


def _signer(token: Node) -> Node:
    return token[1][0][-1][0]  # ContentInfo, [0], SignedData's SignerInfos, the one SignerInfo


def _attribute(token: Node, oid_der: str) -> Node:
    """The value of the signed attribute whose OID's DER is `oid_der` (hex)."""
    (found,) = [a for a in _signer(token)[3].children if a[0].encode().hex() == oid_der]
    return found[1][0]


def _with_tst_info(token: Node, change: Callable[[Node], None]) -> None:
    octets = token[1][0][2][1][0]
    tst_info = parse(octets.octets)
    change(tst_info)
    octets.value = tst_info.encode()


def _flip_last(node: Node) -> None:
    assert isinstance(node.value, bytes)
    node.value = node.value[:-1] + bytes([node.value[-1] ^ 0x01])


def _bump(node: Node) -> None:
    """An INTEGER one more, in its minimal encoding still."""
    value = int.from_bytes(node.octets, "big", signed=True) + 1
    node.value = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)


def _set_digit(node: Node) -> None:
    """One second later or earlier: the units of the seconds (0-1, 2-3 … 8-9), whatever follows."""
    at = 13 if node.tag == 0x18 else 11  # YYYYMMDDHHMMSS of a GeneralizedTime, YYMMDDHHMMSS of a UTCTime
    node.value = node.octets[:at] + bytes([node.octets[at] ^ 0x01]) + node.octets[at + 1 :]


CONTENT_TYPE = "06092a864886f70d010903"
MESSAGE_DIGEST = "06092a864886f70d010904"
SIGNING_TIME = "06092a864886f70d010905"
SIGNING_CERTIFICATE = {
    "rsa-2048": "060b2a864886f70d010910020c",
    "ecdsa-p256": "060b2a864886f70d010910022f",
    "ecdsa-p384": "060b2a864886f70d010910022f",
}


def _ess_hash(kind: str) -> Callable[[Node], None]:
    def change(token: Node) -> None:
        cert_id = _attribute(token, SIGNING_CERTIFICATE[kind])[0][0]
        _flip_last(cert_id[1] if cert_id[0].tag == 0x30 else cert_id[0])

    return change


def _content_type(token: Node) -> None:
    _flip_last(_attribute(token, CONTENT_TYPE))  # id-ct-TSTInfo (…1.4) becomes …1.5


def _long_length_in_tst_info(token: Node) -> None:
    def change(tst_info: Node) -> None:
        tst_info[2].length_form = "long"  # the message imprint

    _with_tst_info(token, change)


# name, alteration of the token, what the verifier says (a regex); OpenSSL refuses each.
ALTERATIONS: list[tuple[str, Callable[[Node], None] | None, str]] = [
    ("signature-byte", lambda t: _flip_last(_signer(t)[5]), "signature does not verify against the pinned"),
    ("signing-time", lambda t: _set_digit(_attribute(t, SIGNING_TIME)), "signature does not verify against the"),
    ("message-digest", lambda t: _flip_last(_attribute(t, MESSAGE_DIGEST)), "signed attribute messageDigest is not"),
    ("content-type", _content_type, r"signed attribute contentType is 1\.2\.840\.113549\.1\.9\.16\.1\.5"),
    ("tst-gen-time", lambda t: _with_tst_info(t, lambda i: _set_digit(i[4])), "messageDigest is not the sha"),
    ("tst-serial", lambda t: _with_tst_info(t, lambda i: _bump(i[3])), "messageDigest is not the sha"),
    ("tst-non-der-length", _long_length_in_tst_info, "malformed DER at offset .*not minimal"),
]


def _altered(token: bytes, change: Callable[[Node], None]) -> bytes:
    tree = parse(token)
    change(tree)
    out = tree.encode()
    assert out != token
    return out


def _openssl_gen_time(tsa: TimestampAuthority, token: bytes) -> datetime.datetime:
    """The token's time as OpenSSL prints it ("Time stamp: Dec  5 15:08:54.605 2026 GMT")."""
    path = tsa.folder / "printed.tst"
    path.write_bytes(token)
    text = openssl("ts", "-reply", "-in", path, "-token_in", "-text").decode()
    (line,) = re.findall(r"^Time stamp: (.*) GMT$", text, re.M)
    shape = "%b %d %H:%M:%S.%f %Y" if "." in line else "%b %d %H:%M:%S %Y"  # a fraction of 0 is left out
    return datetime.datetime.strptime(re.sub(r" +", " ", line), shape).replace(tzinfo=datetime.UTC)


def _exact_time(exact: str) -> datetime.datetime:
    whole, _, fraction = exact[:-1].partition(".")
    moment = datetime.datetime.strptime(whole, "%Y%m%d%H%M%S").replace(tzinfo=datetime.UTC)
    return moment + datetime.timedelta(microseconds=int((fraction or "0").ljust(6, "0")))


@pytest.mark.parametrize("kind", KINDS)
def test_a_genuine_token_verifies_and_states_what_openssl_reads(
    kind: str, authorities: dict[str, TimestampAuthority], tokens: dict[str, bytes]
) -> None:
    tsa, token = authorities[kind], tokens[kind]
    stamped = verify_timestamp_token(token, tsa.certificate_pem, DATA, "the checkpoint")
    assert stamped.hash_algorithm == "sha256" and stamped.hashed_message == hashlib.sha256(DATA).digest()
    assert stamped.policy == "1.3.6.1.4.1.55555.1.1"
    assert stamped.ordering and stamped.accuracy_micros == 1_500_100 and stamped.nonce is not None
    assert stamped.tsa_name == f"C=XX, O=Transparency Site Tests, CN=Test Timestamp Authority {kind}"
    assert stamped.token == token and len(stamped.certificates) == 2  # the authority's and its CA's
    moment = _exact_time(stamped.gen_time_exact)
    assert moment == _openssl_gen_time(tsa, token)
    assert stamped.gen_time == moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert stamped.authority is not None and stamped.authority.der == tsa.certificate_der
    assert stamped.authority.not_before <= stamped.gen_time <= stamped.authority.not_after
    assert tsa.verify_with_openssl(DATA, token)[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_reads_and_verifies_as_the_token_it_holds(
    kind: str, authorities: dict[str, TimestampAuthority]
) -> None:
    tsa = authorities[kind]
    reply = tsa.stamp(DATA)
    token = openssl("ts", "-reply", "-in", _written(tsa, "reply.tsr", reply), "-token_out")
    assert read_timestamp_token(reply).token == token
    assert verify_timestamp_token(reply, tsa.certificate_der, DATA) == verify_timestamp_token(
        token, tsa.certificate_pem, DATA
    )


def _written(tsa: TimestampAuthority, name: str, data: bytes) -> str:
    (tsa.folder / name).write_bytes(data)
    return str(tsa.folder / name)


def test_a_refusal_is_reported_with_its_status(authorities: dict[str, TimestampAuthority]) -> None:
    tsa = authorities["ecdsa-p256"]
    refusal = tsa.reply(tsa.query(DATA), "reject.cnf")
    with pytest.raises(FormatError, match=r"refused the request \(status rejection\): Message digest .*; badAlg$"):
        read_timestamp_token(refusal)


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_over_other_data_is_refused_for_its_imprint(
    kind: str, authorities: dict[str, TimestampAuthority], tokens: dict[str, bytes]
) -> None:
    other = DATA.replace(b"42", b"43")
    with pytest.raises(FormatError, match="message imprint is not the hash of the checkpoint"):
        verify_timestamp_token(tokens[kind], authorities[kind].certificate_pem, other, "the checkpoint")
    assert not authorities[kind].verify_with_openssl(other, tokens[kind])[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_is_refused_against_another_authority(
    kind: str, authorities: dict[str, TimestampAuthority], tokens: dict[str, bytes]
) -> None:
    other = authorities[KINDS[(KINDS.index(kind) + 1) % len(KINDS)]]
    with pytest.raises(FormatError, match=r"token's signer .* is not the pinned authority certificate"):
        verify_timestamp_token(tokens[kind], other.certificate_pem, DATA)
    assert not other.verify_with_openssl(DATA, tokens[kind])[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_certificate_with_the_authority_s_issuer_and_serial_but_another_key_is_refused(
    kind: str, authorities: dict[str, TimestampAuthority], tokens: dict[str, bytes]
) -> None:
    tsa = authorities[kind]
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", tsa.folder / "other.key")
    impostor = tsa.certificate_with(TSA_EXTENSIONS, key="other.key")
    with pytest.raises(FormatError, match=r"carries a certificate with the issuer and serial of the pinned"):
        verify_timestamp_token(tokens[kind], impostor, DATA)
    bare = tsa.token(DATA, cert=False)  # no certificate to compare: the signed attributes name the genuine one
    assert read_timestamp_token(bare).certificates == ()
    with pytest.raises(FormatError, match=r"signed attribute signingCertificate(V2)? names another certificate"):
        verify_timestamp_token(bare, impostor, DATA)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "change", "reason"), ALTERATIONS, ids=[a[0] for a in ALTERATIONS])
def test_an_altered_token_is_refused_by_both(
    kind: str,
    name: str,
    change: Callable[[Node], None],
    reason: str,
    authorities: dict[str, TimestampAuthority],
    tokens: dict[str, bytes],
) -> None:
    tsa = authorities[kind]
    altered = _altered(tokens[kind], change)
    with pytest.raises(FormatError, match=reason):
        verify_timestamp_token(altered, tsa.certificate_pem, DATA)
    accepted, said = tsa.verify_with_openssl(DATA, altered)
    assert not accepted, said


@pytest.mark.parametrize("kind", KINDS)
def test_an_altered_signing_certificate_attribute_is_refused_by_both(
    kind: str, authorities: dict[str, TimestampAuthority], tokens: dict[str, bytes]
) -> None:
    tsa = authorities[kind]
    altered = _altered(tokens[kind], _ess_hash(kind))
    with pytest.raises(FormatError, match="names another certificate"):
        verify_timestamp_token(altered, tsa.certificate_pem, DATA)
    assert not tsa.verify_with_openssl(DATA, altered)[0]


def _long_outer(token: Node) -> None:
    token.length_form = "long"


BER_ONLY: list[tuple[str, Callable[[bytes], bytes], str]] = [
    ("non-minimal length", lambda t: _altered(t, _long_outer), r"offset 1: a length with a leading zero byte"),
    ("indefinite length", lambda t: b"\x30\x80" + t[4:] + b"\x00\x00", r"offset 1: an indefinite length \(BER"),
    ("stray bytes after", lambda t: t + b"\x00", r"1 bytes after the token"),
]


@pytest.mark.parametrize(("name", "change", "reason"), BER_ONLY, ids=[b[0] for b in BER_ONLY])
def test_a_token_only_a_ber_reader_accepts_is_refused_by_the_verifier(
    name: str,
    change: Callable[[bytes], bytes],
    reason: str,
    authorities: dict[str, TimestampAuthority],
    tokens: dict[str, bytes],
) -> None:
    tsa, token = authorities["ecdsa-p256"], tokens["ecdsa-p256"]
    assert token[:2] == b"\x30\x82"  # a long-form length of two bytes, as the alterations expect
    altered = change(token)
    with pytest.raises(FormatError, match=f"malformed DER at {reason}|{reason}"):
        verify_timestamp_token(altered, tsa.certificate_pem, DATA)
    assert tsa.verify_with_openssl(DATA, altered)[0]  # OpenSSL's reader is BER's: the difference is by design


def test_the_pinned_certificate_must_be_one_that_may_stamp(authorities: dict[str, TimestampAuthority]) -> None:
    tsa = authorities["ecdsa-p256"]
    cases = {
        "basicConstraints=CA:FALSE\n": None,  # no extendedKeyUsage at all: nothing to contradict
        "extendedKeyUsage=timeStamping\n": "is not marked critical",
        "extendedKeyUsage=critical,serverAuth\n": "lacks id-kp-timeStamping",
        "extendedKeyUsage=critical,timeStamping,codeSigning\n": "names other purposes",
        "keyUsage=critical,keyEncipherment\nextendedKeyUsage=critical,timeStamping\n": "allows no signature",
        TSA_EXTENSIONS: None,
    }
    for extensions, problem in cases.items():
        certificate = read_x509_certificate(tsa.certificate_with(extensions))
        found = x509_timestamping_problem(certificate)
        assert (found is None) if problem is None else (found is not None and problem in found), (extensions, found)
    with pytest.raises(
        FormatError, match=r"may not sign timestamp tokens: its extendedKeyUsage .* not marked critical"
    ):
        verify_timestamp_token(tsa.token(DATA), tsa.certificate_with("extendedKeyUsage=timeStamping\n"), DATA)


def test_the_certificate_reads_as_openssl_prints_it(authorities: dict[str, TimestampAuthority]) -> None:
    tsa = authorities["rsa-2048"]
    certificate = read_x509_certificate(tsa.certificate_pem)
    assert certificate == read_x509_certificate(tsa.certificate_der)
    assert certificate.serial == 0x1001 and certificate.public_key.describe() == "RSA 2048"
    assert certificate.subject_text == "C=XX, O=Transparency Site Tests, CN=Test Timestamp Authority rsa-2048"
    assert certificate.issuer_text == "C=XX, O=Transparency Site Tests, CN=Test CA rsa-2048"
    printed = openssl("x509", "-in", tsa.folder / "tsa.pem", "-noout", "-dates", "-fingerprint", "-sha256").decode()
    fingerprint = re.search(r"Fingerprint=([0-9A-F:]+)", printed)
    assert fingerprint and fingerprint.group(1).replace(":", "").lower() == certificate.digest("sha256").hex()
    for field, value in (("notBefore", certificate.not_before), ("notAfter", certificate.not_after)):
        (line,) = re.findall(rf"^{field}=(.*) GMT$", printed, re.M)
        moment = datetime.datetime.strptime(re.sub(r" +", " ", line), "%b %d %H:%M:%S %Y")
        assert moment.strftime("%Y-%m-%dT%H:%M:%SZ") == value


def test_a_pem_file_reads_with_text_before_its_block_but_not_with_two(
    authorities: dict[str, TimestampAuthority],
) -> None:
    tsa = authorities["ecdsa-p256"]
    explained = openssl("x509", "-in", tsa.folder / "tsa.pem", "-text")
    assert not explained.startswith(b"-----") and read_x509_certificate(explained).der == tsa.certificate_der
    with pytest.raises(FormatError, match="a PEM file of other than one certificate"):
        read_x509_certificate(tsa.certificate_pem + tsa.ca_pem)
    with pytest.raises(FormatError, match="cannot be read: a PEM block whose body is not base64"):
        verify_timestamp_token(tsa.token(DATA), tsa.certificate_pem.replace(b"M", b"*", 1), DATA)


def _accuracy(fields: list[Node]) -> Callable[[Node], None]:
    def change(token: Node) -> None:
        def within(tst_info: Node) -> None:
            tst_info[5].value = fields

        _with_tst_info(token, change=within)

    return change


def test_the_accuracy_reads_with_any_of_its_fields(tokens: dict[str, bytes]) -> None:
    """Each field of Accuracy is optional (RFC 3161 2.4.2); millis and micros lie in 1-999."""
    seconds, millis, micros = Node(0x02, b"\x02"), Node(0x80, b"\x07"), Node(0x81, b"\x03\xe7")
    token = tokens["ecdsa-p256"]
    for fields, expected in (([millis], 7000), ([seconds, micros], 2_000_999), ([], 0)):
        assert read_timestamp_token(_altered(token, _accuracy(fields))).accuracy_micros == expected
    for fields, reason in (
        ([micros, millis], "each once, in order"),
        ([Node(0x80, b"\x00")], "holds 0 where 1-999"),
        ([Node(0x81, b"\x03\xe8")], "holds 1000 where 1-999"),
    ):
        with pytest.raises(FormatError, match=reason):
            read_timestamp_token(_altered(token, _accuracy(fields)))


# Key, then `openssl req -x509` options: the signature algorithms a certificate or a token may name.
SIGNED_BY_OPENSSL: list[tuple[str, list[str], str, str, int]] = [
    ("rsa", ["-sha256"], "rsa-pkcs1v15", "sha256", 0),
    ("rsa", ["-sha384"], "rsa-pkcs1v15", "sha384", 0),
    ("rsa", ["-sha512"], "rsa-pkcs1v15", "sha512", 0),
    ("rsa", ["-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"], "rsa-pss", "sha256", 32),
    ("rsa", ["-sha384", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:48"], "rsa-pss", "sha384", 48),
    ("rsa", ["-sha512", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:0"], "rsa-pss", "sha512", 0),
    ("rsa", ["-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:max"], "rsa-pss", "sha256", 222),
    ("p256", ["-sha256"], "ecdsa", "sha256", 0),
    ("p256", ["-sha512"], "ecdsa", "sha512", 0),
    ("p384", ["-sha384"], "ecdsa", "sha384", 0),
    ("p384", ["-sha256"], "ecdsa", "sha256", 0),
]


@pytest.fixture(scope="module")
def signing_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    options = {
        "rsa": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        "p256": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        "p384": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
    }
    for name, args in options.items():
        openssl("genpkey", *args, "-out", folder / f"{name}.key")
    return {name: folder / f"{name}.key" for name in options}


@pytest.mark.parametrize(
    ("key", "options", "scheme", "hash_name", "salt"),
    SIGNED_BY_OPENSSL,
    ids=[f"{c[0]} {c[2]} {c[3]} salt {c[4]}" for c in SIGNED_BY_OPENSSL],
)
def test_a_signature_openssl_makes_verifies_under_the_algorithm_it_names(
    key: str, options: list[str], scheme: str, hash_name: str, salt: int, signing_keys: dict[str, Path]
) -> None:
    """A self-signed certificate: its AlgorithmIdentifier read, its TBSCertificate's signature checked
    with the key it holds (an independent signer for every algorithm a token's SignerInfo may name,
    RSASSA-PSS included, which OpenSSL's authority does not sign with)."""
    der = openssl("req", "-x509", "-new", "-key", signing_keys[key], "-subj", "/CN=signer", "-days", "1", *options,
                  "-outform", "DER")  # fmt: skip
    tbs, algorithm, signature = der_children(der_read(der))
    named = pkix_signature_algorithm(algorithm, "the certificate's algorithm")
    assert named == SignatureAlgorithm(scheme, hash_name, salt)
    public_key = read_x509_certificate(der).public_key
    signed = der_bit_string(signature, "the signature")[0]
    assert public_key.verify(named, tbs.encoded, signed)
    assert not public_key.verify(named, tbs.encoded[:-1] + bytes([tbs.encoded[-1] ^ 1]), signed)
    other = "sha384" if hash_name != "sha384" else "sha256"
    assert not public_key.verify(dataclasses.replace(named, hash_name=other), tbs.encoded, signed)


def test_keys_outside_what_is_read_are_refused(signing_keys: dict[str, Path]) -> None:
    rsa = read_subject_public_key_info(openssl("pkey", "-in", signing_keys["rsa"], "-pubout", "-outform", "DER"))
    assert isinstance(rsa.key, RsaPublicKey)
    n = rsa.key.n
    for modulus, exponent, reason in (
        (n >> 1025, 65537, "an RSA modulus of 1023 bits"),
        (n + 1, 65537, "modulus that is even"),
        (n, 65538, "exponent of 65538"),
        (n, 1, "exponent of 1 "),
        (n, (1 << 64) + 1, "exponent of 18446744073709551617"),
    ):
        with pytest.raises(FormatError, match=reason):
            rsa_public_key(modulus, exponent)
    p256 = read_subject_public_key_info(openssl("pkey", "-in", signing_keys["p256"], "-pubout", "-outform", "DER"))
    assert isinstance(p256.key, EcPublicKey)
    x, y = p256.key.x.to_bytes(32, "big"), p256.key.y.to_bytes(32, "big")
    assert ec_public_key(EC_P256, b"\x04" + x + y) == p256.key
    for point, reason in (
        (b"\x02" + x, "a compressed P-256 point"),
        (b"\x04" + x + y[:-1] + bytes([y[-1] ^ 1]), "not a point of the curve"),
        (b"\x04" + EC_P256.p.to_bytes(32, "big") + y, "coordinate outside the field"),
        (b"\x04" + x + y + b"\x00", "not an uncompressed point of 65 bytes"),
        (b"\x04" + x + y, "not an uncompressed point of 97 bytes"),
    ):
        with pytest.raises(FormatError, match=reason):
            ec_public_key(EC_P384 if "97" in reason else EC_P256, point)


# The DER reader, one refusal at a time: (hex of the input, what is refused).
NOT_DER = [
    ("30800201000000", "an indefinite length"),
    ("30810100", "in the long form"),
    ("3082000100", "a leading zero byte"),
    ("30", "ends before the length"),
    ("30020201", "runs past the end of its container"),
    ("3003020100ff", "1 bytes after"),
    ("1f0100", "a high tag number"),
]


@pytest.mark.parametrize(("data", "reason"), NOT_DER, ids=[r for _, r in NOT_DER])
def test_the_der_reader_refuses_what_is_not_der(data: str, reason: str) -> None:
    with pytest.raises(FormatError, match=f"malformed DER at offset [0-9]+: .*{reason}"):
        der_children(der_read(bytes.fromhex(data)))


def _time(tag: int, text: str) -> bytes:
    return bytes([tag, len(text)]) + text.encode()


@pytest.mark.parametrize(
    ("data", "read", "reason"),
    [
        (bytes.fromhex("02020001"), der_integer, "redundant leading byte"),
        (bytes.fromhex("0202ff80"), der_integer, "redundant leading byte"),
        (bytes.fromhex("0200"), der_integer, "of no bytes"),
        (bytes.fromhex("010101"), der_boolean, "other than 00 or FF"),
        (bytes.fromhex("0603800101"), der_oid, "redundant leading byte"),
        (bytes.fromhex("060181"), der_oid, "ends inside an arc"),
        (bytes.fromhex("03020101"), der_bit_string, "not whole bytes"),
        (_time(0x18, "202612051508Z"), der_generalized_time, "other than YYYYMMDDHHMMSS"),
        (_time(0x18, "20261205150854"), der_generalized_time, "other than YYYYMMDDHHMMSS"),
        (_time(0x18, "20261205150854+0100"), der_generalized_time, "other than YYYYMMDDHHMMSS"),
        (_time(0x18, "20261205150854.50Z"), der_generalized_time, "not in its DER form"),
        (_time(0x18, "20261205150854.Z"), der_generalized_time, "not in its DER form"),
        (_time(0x18, "20261205150854,5Z"), der_generalized_time, "not in its DER form"),
        (_time(0x18, "20261305150854Z"), der_generalized_time, "not a date and time"),
        (_time(0x18, "20270229000000Z"), der_generalized_time, "not a date and time"),
        (_time(0x17, "2612051508+0100"), der_utc_time, "other than YYMMDDHHMMSSZ"),
    ],
)
def test_the_der_reader_refuses_values_not_in_their_der_form(
    data: bytes, read: Callable[..., object], reason: str
) -> None:
    with pytest.raises(FormatError, match=reason):
        read(der_read(data), "a value")


def test_the_der_reader_reads_values_in_their_der_form() -> None:
    assert der_integer(der_read(bytes.fromhex("020200ff")), "x") == 255
    assert der_integer(der_read(bytes.fromhex("0201ff")), "x") == -1
    assert der_oid(der_read(bytes.fromhex("06092a864886f70d010702")), "x") == "1.2.840.113549.1.7.2"
    assert der_oid(der_read(bytes.fromhex("0603883703")), "x") == "2.999.3"
    assert der_generalized_time(der_read(_time(0x18, "20261205150854.605Z")), "x") == (
        "2026-12-05T15:08:54Z",
        "20261205150854.605Z",
    )
    assert der_utc_time(der_read(_time(0x17, "491231235959Z")), "x") == "2049-12-31T23:59:59Z"
    assert der_utc_time(der_read(_time(0x17, "500101000000Z")), "x") == "1950-01-01T00:00:00Z"
    assert der_generalized_time(der_read(_time(0x18, "20280229000000Z")), "x")[0] == "2028-02-29T00:00:00Z"
    assert der_bit_string(der_read(bytes.fromhex("03020780")), "x", whole_bytes=False) == (b"\x80", 7)
    long_content = bytes(200)
    assert der_read(b"\x04\x81\xc8" + long_content).content == long_content


def test_a_set_of_out_of_der_order_is_refused() -> None:
    assert len(der_set_of(der_read(bytes.fromhex("3106020101020102")), "x")) == 2
    with pytest.raises(FormatError, match="not in DER order"):
        der_set_of(der_read(bytes.fromhex("3106020102020101")), "x")


def test_nesting_deeper_than_the_bound_is_refused() -> None:
    data = b"\x00\x00"
    for _ in range(40):
        data = b"\x30" + bytes([len(data)]) + data if len(data) < 128 else b"\x30\x81" + bytes([len(data)]) + data
    element = der_read(data)
    with pytest.raises(FormatError, match="nested more than"):
        while True:
            (element,) = der_children(element)
