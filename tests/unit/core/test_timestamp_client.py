"""The timestamp client (generator.core.timestamp_client) against OpenSSL's timestamp authority on the
loopback (tests/support/timestamp_authority.py): a token it returns verifies, by the verifier and by
`openssl ts -verify`, and every way an authority can fail is named with its URL: an HTTP error, a reply
that is not a TimeStampResp or not of its media type, too large a reply, a refusal, silence past the
timeout, no server at all, and a granted reply that answers another request (a token over other
data, or over the same data for another nonce, replayed).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import pytest
from rfc3161_client import _rust as rfc3161_rust
from rfc3161_client import decode_timestamp_response

from generator.core.timestamp_client import MAX_REPLY_BYTES, TimestampClientError, request_token
from generator.verifier.crypto.timestamp_token import read_timestamp_token, verify_timestamp_token
from tests.support.http_site import closed_port
from tests.support.timestamp_authority import TimestampAuthority, timestamp_authority

DATA = b"transparency.example/log\n7\nbW9ja2VkIHJvb3QgaGFzaCBmb3IgdGhlIGNsaWVudCB0ZXN0cw==\n"
TIMEOUT = 5.0


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib sends through a proxy the environment names, even to the loopback."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.fixture(scope="module")
def authority() -> Iterator[TimestampAuthority]:
    with timestamp_authority("ecdsa-p256") as tsa:
        yield tsa


@pytest.fixture
def tsa(authority: TimestampAuthority) -> Iterator[TimestampAuthority]:
    authority.misbehave("normal")
    authority.hang_seconds = 3.0
    yield authority
    authority.misbehave("normal")


@pytest.mark.parametrize("kind", ["rsa-2048", "ecdsa-p384"])
def test_a_token_of_each_kind_of_authority_verifies(kind: str) -> None:
    with timestamp_authority(kind) as other:
        token = request_token(other.url, DATA, TIMEOUT)
        assert (
            verify_timestamp_token(token, other.certificate_pem, DATA).hashed_message == hashlib.sha256(DATA).digest()
        )
        assert other.verify_with_openssl(DATA, token)[0]


def test_the_token_answers_the_request_the_client_sent(tsa: TimestampAuthority) -> None:
    token = request_token(tsa.url, DATA, TIMEOUT)
    query = rfc3161_rust.parse_timestamp_request(tsa.queries[-1])
    assert query.cert_req and query.nonce is not None
    assert query.message_imprint.hash_algorithm.dotted_string == "2.16.840.1.101.3.4.2.1"
    assert query.message_imprint.message == hashlib.sha256(DATA).digest()
    stamped = verify_timestamp_token(token, tsa.certificate_pem, DATA, "the checkpoint")
    assert stamped.nonce == query.nonce and stamped.token == token  # the token, not the whole reply
    assert len(stamped.certificates) == 2  # certReq: the authority's certificate and its chain
    accepted, said = tsa.verify_with_openssl(DATA, token)
    assert accepted, said


def test_two_requests_carry_two_nonces(tsa: TimestampAuthority) -> None:
    first, second = (read_timestamp_token(request_token(tsa.url, DATA, TIMEOUT)) for _ in range(2))
    assert first.nonce != second.nonce and first.serial != second.serial


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("error-500", r"answered HTTP 500"),
        ("garbage", r"gave no token: malformed DER at offset [0-9]+"),
        ("html", r"answered text/html, not application/timestamp-reply"),
        ("reject", r"gave no token: the authority refused the request \(status rejection\)"),
    ],
)
def test_an_authority_that_gives_no_token_is_named_with_the_reason(
    tsa: TimestampAuthority, behaviour: str, reason: str
) -> None:
    tsa.misbehave(behaviour)
    with pytest.raises(TimestampClientError, match=reason) as caught:
        request_token(tsa.url, DATA, TIMEOUT)
    assert caught.value.url == tsa.url and str(caught.value).startswith(tsa.url)


def test_a_silent_authority_is_abandoned_at_the_timeout(tsa: TimestampAuthority) -> None:
    tsa.misbehave("hang")
    start = time.monotonic()
    with pytest.raises(TimestampClientError, match=r"did not answer within 0\.5 s"):
        request_token(tsa.url, DATA, 0.5)
    assert time.monotonic() - start < 2.0


def test_no_server_at_all_is_named(tsa: TimestampAuthority) -> None:
    url = f"http://127.0.0.1:{closed_port()}/tsa"
    with pytest.raises(TimestampClientError, match="could not be reached") as caught:
        request_token(url, DATA, TIMEOUT)
    assert caught.value.url == url


def test_a_reply_over_the_bound_is_refused(tsa: TimestampAuthority) -> None:
    tsa.misbehave("replay", b"\x30" * (MAX_REPLY_BYTES + 1))
    with pytest.raises(TimestampClientError, match=f"answered more than {MAX_REPLY_BYTES} bytes"):
        request_token(tsa.url, DATA, TIMEOUT)


def test_a_token_over_other_data_is_refused_for_its_imprint(tsa: TimestampAuthority) -> None:
    tsa.misbehave("replay", tsa.stamp(b"other data"))
    with pytest.raises(TimestampClientError, match=r"message imprint .* is not the SHA-256 of the data sent"):
        request_token(tsa.url, DATA, TIMEOUT)


def test_a_token_over_the_same_data_for_another_request_is_refused_for_its_nonce(tsa: TimestampAuthority) -> None:
    replayed = tsa.stamp(DATA)  # the same imprint, the nonce of another request
    tsa.misbehave("replay", replayed)
    with pytest.raises(TimestampClientError, match=r"the token's nonce [0-9]+ is not the request's, [0-9]+"):
        request_token(tsa.url, DATA, TIMEOUT)
    assert verify_timestamp_token(replayed, tsa.certificate_pem, DATA)  # a genuine token all the same


@pytest.mark.parametrize(
    ("url", "data", "reason"),
    [
        ("file:///etc/passwd", DATA, "not an http"),
        ("ftp://127.0.0.1/tsa", DATA, "not an http"),
        ("http://127.0.0.1:9/tsa", b"", "nothing to timestamp"),
    ],
)
def test_what_cannot_be_asked_is_refused_before_asking(url: str, data: bytes, reason: str) -> None:
    with pytest.raises(TimestampClientError, match=reason):
        request_token(url, data, TIMEOUT)


def test_a_bare_token_where_a_reply_belongs_is_refused(tsa: TimestampAuthority) -> None:
    tsa.misbehave("replay", tsa.token(DATA))
    with pytest.raises(TimestampClientError, match=r"answered a bare token, not a TimeStampResp"):
        request_token(tsa.url, DATA, TIMEOUT)


def test_rfc3161_client_cannot_read_what_openssl_s_authority_replies(tsa: TimestampAuthority) -> None:
    """Why the client reads replies with the verifier's reader: rfc3161-client wants the token's
    certificates in DER order, and OpenSSL lists its chain in chain order. Should a release of
    rfc3161-client read them, this fails, and the choice can be looked at again."""
    with pytest.raises(ValueError, match="InvalidSetOrdering"):
        decode_timestamp_response(tsa.stamp(DATA))
    assert read_timestamp_token(tsa.stamp(DATA)).certificates
    assert decode_timestamp_response(tsa.stamp(DATA, cert=False)).status == 0  # no certificates, no order
