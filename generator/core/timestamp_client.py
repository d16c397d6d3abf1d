"""A client of RFC 3161 timestamp authorities: asks one for a token over some data and returns
it once the reply is checked to be a granted token over that data, for that request.

The request (a TimeStampReq over the data's SHA-256, with a random nonce, asking for the
authority's certificate) is built by rfc3161-client and POSTed over HTTP(S) (RFC 3161 section
3.4). The reply is read by the verifier's own reader, so that a token this returns is one the
verifier reads: rfc3161-client 1.0.9 refuses, as not DER, a reply whose certificates are not in DER
order, which OpenSSL's authority sends when it adds its chain (CMS asks DER of the signed
attributes only). What is checked here is that the reply answers this request: its status, its
message imprint and its nonce. Whether the token is signed by the authority is the verifier's
question (verify_timestamp_token, against the pinned certificate), asked of the token this returns.

Time is bounded: the caller waits at most `timeout` seconds. An authority that is slower, or that
drips its reply, is abandoned (the exchange runs in a daemon thread whose reads also time out).
"""

from __future__ import annotations

import hashlib
import http.client
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from rfc3161_client import HashAlgorithm, TimestampRequestBuilder
from rfc3161_client.tsp import TimeStampRequest

from generator.verifier import FormatError, read_timestamp_token

MAX_REPLY_BYTES = 1 << 20  # a reply is a few kilobytes; more is not one
_REPLY_TYPES = ("application/timestamp-reply", "application/timestamp-response")
_CHUNK = 64 * 1024


class TimestampClientError(Exception):
    """An authority gave no token for the data: `url` is the authority, `reason` says why."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirected POST would be replayed as a GET without its body: an authority answers itself."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _read_reply(url: str, query: bytes, deadline: float) -> bytes:
    """The body of the authority's 200 answer to `query`, read before `deadline`."""
    request = urllib.request.Request(
        url,
        data=query,
        method="POST",
        headers={"Content-Type": "application/timestamp-query", "Accept": "application/timestamp-reply"},
    )
    opener = urllib.request.build_opener(_NoRedirect)
    with opener.open(request, timeout=max(0.001, deadline - time.monotonic())) as response:
        kind = response.headers.get_content_type()
        if kind not in _REPLY_TYPES:
            raise TimestampClientError(url, f"answered {kind}, not application/timestamp-reply")
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read1(_CHUNK):  # one read of the socket each: the deadline is checked between
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise TimestampClientError(url, f"answered more than {MAX_REPLY_BYTES} bytes")
            if time.monotonic() > deadline:
                raise TimeoutError
            chunks.append(chunk)
        return b"".join(chunks)


def _exchange(url: str, query: bytes, timeout: float) -> bytes:
    """`_read_reply` in a daemon thread, waited for `timeout` seconds at most; every failure as a
    TimestampClientError."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["reply"] = _read_reply(url, query, time.monotonic() + timeout)
        except BaseException as error:  # handed to the caller's thread, which decides
            outcome["error"] = error

    worker = threading.Thread(target=run, name="timestamp request", daemon=True)
    worker.start()
    worker.join(timeout)
    error = outcome.get("error")
    if isinstance(error, urllib.error.URLError) and isinstance(error.reason, TimeoutError):
        error = error.reason  # urllib wraps a connect's timeout
    if worker.is_alive() or isinstance(error, TimeoutError):
        raise TimestampClientError(url, f"did not answer within {timeout:g} s")
    if isinstance(error, TimestampClientError):
        raise error
    if isinstance(error, urllib.error.HTTPError):
        raise TimestampClientError(url, f"answered HTTP {error.code} {error.reason}")
    if isinstance(error, urllib.error.URLError):
        raise TimestampClientError(url, f"could not be reached: {error.reason}")
    if isinstance(error, OSError | http.client.HTTPException):
        raise TimestampClientError(url, f"the exchange failed: {error!r}")
    if error is not None:
        raise error
    reply: bytes = outcome["reply"]
    return reply


def _checked_token(url: str, query: TimeStampRequest, reply: bytes, data: bytes) -> bytes:
    """The TimeStampToken of a TimeStampResp that grants `query`, over `data`."""
    try:
        stamped = read_timestamp_token(reply)
    except (FormatError, ValueError, OverflowError) as error:  # a number too long to print, say
        raise TimestampClientError(url, f"gave no token: {error}") from None
    if stamped.token == reply:
        raise TimestampClientError(url, "answered a bare token, not a TimeStampResp (RFC 3161 section 2.4.2)")
    digest = hashlib.sha256(data).digest()
    if stamped.hash_algorithm != "sha256" or stamped.hashed_message != digest:
        raise TimestampClientError(
            url,
            f"the token's message imprint ({stamped.hash_algorithm} {stamped.hashed_message.hex()}) is not the "
            f"SHA-256 of the data sent ({digest.hex()})",
        )
    if stamped.nonce != query.nonce:
        shown = stamped.nonce if stamped.nonce is None or stamped.nonce.bit_length() <= 128 else "a larger number"
        raise TimestampClientError(url, f"the token's nonce {shown} is not the request's, {query.nonce}")
    return stamped.token


def request_token(url: str, data: bytes, timeout: float) -> bytes:
    """A TimeStampToken (the DER of its CMS ContentInfo) from the authority at `url` over
    SHA-256(`data`), within `timeout` seconds; TimestampClientError when there is none."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise TimestampClientError(url, "not an http(s) URL")
    if not data:
        raise TimestampClientError(url, "nothing to timestamp: the data is empty")
    builder = TimestampRequestBuilder().data(data).hash_algorithm(HashAlgorithm.SHA256)
    query = builder.nonce(nonce=True).cert_request(cert_request=True).build()
    return _checked_token(url, query, _exchange(url, query.as_bytes(), timeout), data)
