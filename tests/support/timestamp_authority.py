"""A real RFC 3161 timestamp authority for the tests: OpenSSL's `openssl ts -reply` behind an HTTP
server on the loopback, with its own CA and an RSA-2048, ECDSA P-256 or ECDSA P-384 certificate
(extendedKeyUsage critical, timeStamping), made in a temporary folder.

    with timestamp_authority("ecdsa-p256") as tsa:
        tsa.url, tsa.certificate_pem, tsa.ca_pem   # POST a TimeStampReq to tsa.url
        tsa.stamp(b"data")                          # a TimeStampResp, without HTTP
        tsa.misbehave("error-500")                  # or "garbage", "hang", "html", "reject", "replay"

OpenSSL stamps the machine's clock, so a test compares a token's time with the one it reads back,
never with a fixed one. A misbehaving authority stays bounded: "hang" waits at most `hang_seconds`
(or until the server closes), and the server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import http.server
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("rsa-2048", "ecdsa-p256", "ecdsa-p384")
BEHAVIOURS = ("normal", "error-500", "garbage", "hang", "html", "reject", "replay")
# What each kind's authority uses: its key, the hash it signs with, the ESSCertID it binds its
# certificate with (sha1: signingCertificate; another: signingCertificateV2), and its certificate's serial.
_PROFILES = {
    "rsa-2048": (["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], "sha256", "sha1", 0x1001),
    "ecdsa-p256": (["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], "sha256", "sha256", 0x1002),
    "ecdsa-p384": (["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"], "sha384", "sha384", 0x1003),
}
TSA_EXTENSIONS = (
    "basicConstraints=critical,CA:FALSE\n"
    "keyUsage=critical,digitalSignature\n"
    "extendedKeyUsage=critical,timeStamping\n"
    "subjectKeyIdentifier=hash\n"
    "authorityKeyIdentifier=keyid\n"
)
_MAX_QUERY = 64 * 1024


def openssl(*args: str | Path, input: bytes | None = None, cwd: Path | None = None) -> bytes:
    """Run `openssl` with `args`; its output, or an AssertionError with its diagnostics."""
    r = subprocess.run(["openssl", *map(str, args)], input=input, capture_output=True, timeout=60, cwd=cwd)
    assert r.returncode == 0, f"openssl {' '.join(map(str, args))} failed: {r.stderr.decode(errors='replace')}"
    return r.stdout


def openssl_ok(*args: str | Path) -> tuple[bool, str]:
    """Whether `openssl` with `args` succeeds, and what it printed (for a test's failure message)."""
    r = subprocess.run(["openssl", *map(str, args)], capture_output=True, timeout=60)
    return r.returncode == 0, (r.stdout + r.stderr).decode(errors="replace")


def _tsa_config(folder: Path, signer_digest: str, ess_alg: str, digests: str) -> str:
    return f"""
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {folder}
serial = $dir/tsaserial
crypto_device = builtin
signer_cert = $dir/tsa.pem
signer_key = $dir/tsa.key
certs = $dir/ca.pem
signer_digest = {signer_digest}
default_policy = 1.3.6.1.4.1.55555.1.1
other_policies = 1.3.6.1.4.1.55555.1.2
digests = {digests}
accuracy = secs:1, millisecs:500, microsecs:100
clock_precision_digits = 3
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = {ess_alg}
"""


@dataclass
class TimestampAuthority:
    """A running authority: its URL, its certificate and its CA's (PEM), and its files in `folder`
    (ca.pem, ca.key, tsa.pem, tsa.key, tsa.cnf)."""

    kind: str
    folder: Path
    url: str = ""
    certificate_pem: bytes = b""
    ca_pem: bytes = b""
    behaviour: str = "normal"
    hang_seconds: float = 5.0
    replay_reply: bytes = b""
    days: int = 2  # how long its certificates are valid (the demo's authority: years)
    queries: list[bytes] = field(default_factory=list)  # every TimeStampReq received over HTTP
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closing: threading.Event = field(default_factory=threading.Event)
    _serial: int = 0

    @property
    def certificate_der(self) -> bytes:
        return openssl("x509", "-in", self.folder / "tsa.pem", "-outform", "DER")

    def misbehave(self, behaviour: str, reply: bytes = b"") -> None:
        """Answer the next requests as `behaviour` says ("normal" to stop); "replay" sends `reply`."""
        assert behaviour in BEHAVIOURS, behaviour
        self.behaviour = behaviour
        self.replay_reply = reply

    def reply(self, query: bytes, config: str = "tsa.cnf") -> bytes:
        """OpenSSL's TimeStampResp to a TimeStampReq (DER)."""
        with self._lock:  # `openssl ts -reply` reads and rewrites the serial file
            self._serial += 1
            name = f"q{self._serial}"
            (self.folder / f"{name}.tsq").write_bytes(query)
            openssl(
                "ts", "-reply", "-config", config, "-queryfile", f"{name}.tsq", "-signer", "tsa.pem",
                "-inkey", "tsa.key", "-chain", "ca.pem", "-out", f"{name}.tsr", cwd=self.folder,
            )  # fmt: skip
            return (self.folder / f"{name}.tsr").read_bytes()

    def query(self, data: bytes, hash_name: str = "sha256", nonce: bool = True, cert: bool = True) -> bytes:
        """OpenSSL's TimeStampReq for `data`, asking for the certificates (with `cert`) or not."""
        with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".dat") as f:
            f.write(data)
            f.flush()
            args = ["ts", "-query", "-data", f.name, f"-{hash_name}", *(["-cert"] if cert else [])]
            return openssl(*args, *([] if nonce else ["-no_nonce"]))

    def stamp(self, data: bytes, hash_name: str = "sha256", cert: bool = True) -> bytes:
        """A TimeStampResp (DER) for `data`, made without HTTP."""
        return self.reply(self.query(data, hash_name, cert=cert))

    def token(self, data: bytes, hash_name: str = "sha256", cert: bool = True) -> bytes:
        """The TimeStampToken alone (a CMS ContentInfo, DER) for `data`, as `openssl ts -token_out`
        gives it; with the authority's certificate and its CA's, or (without `cert`) none."""
        with self._lock:
            self._serial += 1
            path = self.folder / f"r{self._serial}.tsr"
        path.write_bytes(self.stamp(data, hash_name, cert))
        return openssl("ts", "-reply", "-in", path, "-token_out")

    def certificate_with(self, extensions: str, serial: int | None = None, key: str = "tsa.key") -> bytes:
        """Another certificate (PEM) from the same CA for the key file `key`, with `extensions`
        (openssl x509v3 lines) and `serial` (the authority's own by default)."""
        with self._lock:
            self._serial += 1
            name = f"c{self._serial}"
        (self.folder / f"{name}.ext").write_text(extensions)
        openssl("req", "-new", "-key", key, "-subj", _subject(self.kind), "-out", f"{name}.csr", cwd=self.folder)
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-days", str(self.days),
            "-set_serial", str(serial if serial is not None else _PROFILES[self.kind][3]),
            "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=self.folder,
        )  # fmt: skip
        return (self.folder / f"{name}.pem").read_bytes()

    def verify_with_openssl(self, data: bytes, token: bytes) -> tuple[bool, str]:
        """What `openssl ts -verify` says of a TimeStampToken (not a reply) for `data`, trusting the
        authority's CA and given its certificate."""
        with self._lock:
            self._serial += 1
            name = f"v{self._serial}"
        (self.folder / f"{name}.dat").write_bytes(data)
        (self.folder / f"{name}.tst").write_bytes(token)
        return openssl_ok(
            "ts", "-verify", "-data", self.folder / f"{name}.dat", "-in", self.folder / f"{name}.tst", "-token_in",
            "-CAfile", self.folder / "ca.pem", "-untrusted", self.folder / "tsa.pem",
        )  # fmt: skip


def _subject(kind: str) -> str:
    return f"/C=XX/O=Transparency Site Tests/CN=Test Timestamp Authority {kind}"


def _make_authority(folder: Path, kind: str, days: int = 2) -> TimestampAuthority:
    """The CA and the authority's key, certificate and configuration in `folder`."""
    key_args, signer_digest, ess_alg, _ = _PROFILES[kind]
    openssl(
        "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "ca.key", "-out", "ca.pem", "-days", str(days),
        "-subj", f"/C=XX/O=Transparency Site Tests/CN=Test CA {kind}",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=folder,
    )  # fmt: skip
    openssl("genpkey", *key_args, "-out", "tsa.key", cwd=folder)
    (folder / "tsaserial").write_text("01\n")
    (folder / "tsa.cnf").write_text(_tsa_config(folder, signer_digest, ess_alg, "sha256, sha384, sha512"))
    # An authority that accepts no hash our client sends: OpenSSL's own rejection (badAlg).
    (folder / "reject.cnf").write_text(_tsa_config(folder, signer_digest, ess_alg, "sha1"))
    tsa = TimestampAuthority(kind, folder, days=days)
    (folder / "tsa.pem").write_bytes(tsa.certificate_with(TSA_EXTENSIONS))
    tsa.certificate_pem = (folder / "tsa.pem").read_bytes()
    tsa.ca_pem = (folder / "ca.pem").read_bytes()
    return tsa


def _handler(tsa: TimestampAuthority) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if self.headers.get("Content-Type") != "application/timestamp-query" or not 0 < length <= _MAX_QUERY:
                self._send(415, "text/plain", b"a TimeStampReq, as application/timestamp-query, is expected\n")
                return
            query = self.rfile.read(length)
            tsa.queries.append(query)
            how = tsa.behaviour
            if how == "hang":
                tsa._closing.wait(tsa.hang_seconds)
                return
            if how == "error-500":
                self._send(500, "text/plain", b"internal error\n")
            elif how == "garbage":
                self._send(200, "application/timestamp-reply", b"\x30\x03not a timestamp reply")
            elif how == "html":
                self._send(200, "text/html", b"<html>a captive portal</html>")
            elif how == "replay":
                self._send(200, "application/timestamp-reply", tsa.replay_reply)
            else:
                config = "reject.cnf" if how == "reject" else "tsa.cnf"
                self._send(200, "application/timestamp-reply", tsa.reply(query, config))

    return Handler


@contextmanager
def timestamp_authority(kind: str = "ecdsa-p256") -> Iterator[TimestampAuthority]:
    """A new authority of `kind` (one of KINDS), serving at `.url` until the block ends."""
    assert kind in KINDS, kind
    with tempfile.TemporaryDirectory(prefix="tsa-") as tmp, serving(_make_authority(Path(tmp), kind)) as tsa:
        yield tsa


def kept_authority(folder: Path, kind: str = "ecdsa-p256", days: int = 3650) -> TimestampAuthority:
    """The authority whose files are in `folder`, made there the first time (the demo keeps its
    own, so that its certificate stays the one the demo lists)."""
    if not (folder / "tsa.pem").exists():
        folder.mkdir(parents=True, exist_ok=True)
        return _make_authority(folder, kind, days)
    # The configuration names the folder, wherever the checkout is: written anew, not kept.
    _, signer_digest, ess_alg, _ = _PROFILES[kind]
    (folder / "tsa.cnf").write_text(_tsa_config(folder, signer_digest, ess_alg, "sha256, sha384, sha512"))
    tsa = TimestampAuthority(kind, folder, days=days)
    tsa.certificate_pem, tsa.ca_pem = (folder / "tsa.pem").read_bytes(), (folder / "ca.pem").read_bytes()
    return tsa


@contextmanager
def serving(tsa: TimestampAuthority, port: int = 0) -> Iterator[TimestampAuthority]:
    """`tsa` answering on 127.0.0.1:`port` (any free port by default) until the block ends."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(tsa))
    server.daemon_threads = True
    tsa.url = f"http://127.0.0.1:{server.server_address[1]}/tsa"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield tsa
    finally:
        tsa._closing.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
