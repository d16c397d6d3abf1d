"""A transparency-log witness (c2sp.org/tlog-witness `add-checkpoint`), cosigning with an
Ed25519 `cosignature/v1` key (c2sp.org/tlog-cosignature).

For each log it knows (origin -> the log's vkeys), the witness keeps the latest checkpoint it
cosigned, as (size, root hash), in a state folder (generator.state.witness_state: one file a
log, replaced atomically, so a kill leaves the old record or the new one). A new checkpoint is
cosigned only if its log signed it and it is consistent with that record, and the record is
updated before the cosignature is made or returned: a witness killed in between has moved on
without having signed anything, and the client, told the new size (409), asks again from there.

Status codes, as the spec gives them: 200 cosignature lines; 400 malformed request, or an old
size above the checkpoint's; 403 no valid signature by a known key of the log, or a known key's
signature fails; 404 unknown origin (and any other path); 405 add-checkpoint with another
method than POST; 409 the old size is not the recorded one (body: the recorded size, type
text/x.tlog.size); 411/413 no length or too long a body (HTTP's own codes: the spec sets none);
422 a size-0 checkpoint without the empty root, a proof from size 0, a proof that does not
verify, a different root at the recorded size, or a refusal by the `rules` hook: the spec
allows a witness to refuse a validly signed checkpoint with the consistency failures' code, and
a rule the log broke is one more reason the checkpoint cannot be cosigned; 500 the witness's own
failure (its state unreadable, its clock or its rules broken), nothing cosigned.

A witness that replays the program's rules needs the new entries, which no copy of the site
holds before the build that adds them is published. So it also serves POST
/add-checkpoint-with-files: the add-checkpoint body, then the log's files the rules read (the new
tiles, the new reveals' documents), each checked like any other copy of the site (every tile
against the signed checkpoint's root, every reveal against its commitment) and overlaid on the
witness's mirror for that one request. The answers are add-checkpoint's.

Roots in messages are base64, as in a checkpoint, the verifier's report and the monitor.

One process serves a state folder: the lock that makes check-and-record atomic is in memory.
"""

from __future__ import annotations

import base64
import http.server
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

import nacl.signing

from generator.core.generator_errors import KeyFileError
from generator.state.witness_state import read_latest, record_latest
from generator.verifier import (
    EMPTY_ROOT,
    MAX_COSIGNATURE_TIMESTAMP,
    CosignerKey,
    FormatError,
    NoteError,
    ProofError,
    RootMismatchError,
    VerifierKey,
    b64decode_strict,
    cosignature_line,
    cosignature_message,
    is_valid_key_name,
    make_cosigner_vkey,
    open_note,
    parse_checkpoint,
    parse_vkey,
    verify_consistency,
    verify_cosignatures,
)

Rules = Callable[[str, int, int, bytes, bytes, Mapping[str, bytes]], list[str]]
Response = tuple[int, dict[str, str], bytes]

ADD_CHECKPOINT_PATH = "/add-checkpoint"
ADD_WITH_FILES_PATH = "/add-checkpoint-with-files"
MAX_REQUEST_BYTES = 256 * 1024  # 63 proof lines are 3 KB; the rest is a checkpoint and its signatures
# The new tiles and reveals of one release: a 20,000-item commit is about 6 MiB of entries.
MAX_FILES_REQUEST_BYTES = 1 << 26
MAX_PROOF_LINES = 63
SIZE_CONTENT_TYPE = "text/x.tlog.size"
_TEXT = "text/plain; charset=utf-8"
_OLD_RE = re.compile(rb"old (0|[1-9][0-9]{0,19})")
_LENGTH_RE = re.compile(rb"0|[1-9][0-9]{0,9}")
# The files a rules replay reads: tiles under the log prefix, and reveal documents.
_FILE_PATH_RE = re.compile(
    r"ledger/tile/(entries|[0-9]{1,2})(/x[0-9]{3})*/[0-9]{3}(\.p/[0-9]{1,3})?|reveals/[a-z0-9_-]{1,64}\.json"
)

logger = logging.getLogger(__name__)


class _Refusal(Exception):
    def __init__(self, status: int, message: str, content_type: str = _TEXT) -> None:
        super().__init__(message)
        self.status = status
        self.body = message if message.endswith("\n") else message + "\n"
        self.content_type = content_type


def _unix_now() -> int:
    return int(time.time())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_key(path: Path, name: str) -> str:
    """Create a witness key: a file of the raw 32-byte Ed25519 seed, mode 0600, never over an
    existing file (written whole, fsynced, then linked into place). Returns the public vkey."""
    if not is_valid_key_name(name):
        raise KeyFileError(f"{name!r} cannot name a witness: no spaces or '+' allowed")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise KeyFileError(f"{path}: a file is already there; refusing to overwrite it")
    key = nacl.signing.SigningKey.generate()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover of a killed run; a link there is removed, never followed
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask filters O_CREAT's mode
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(key))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails, as O_EXCL would, if a file appeared meanwhile
        except FileExistsError:
            raise KeyFileError(f"{path}: a file is already there; refusing to overwrite it") from None
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)
    return make_cosigner_vkey(name, bytes(key.verify_key))


def load_seed(path: Path) -> bytes:
    """The 32-byte seed of a witness key file, refusing one that others can read."""
    path = Path(path)
    try:
        st = path.stat()
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyFileError(f"{path}: the witness key is readable by others; run: chmod 600 {path}")
        seed = path.read_bytes()
    except OSError as e:
        raise KeyFileError(f"{path}: cannot read the witness key: {e}") from None
    if len(seed) != 32:
        raise KeyFileError(f"{path}: a witness key file holds a raw 32-byte seed, not {len(seed)} bytes")
    return seed


def load_logs(path: Path) -> dict[str, tuple[VerifierKey, ...]]:
    """The known logs of a config file: one log vkey a line (blank lines and `#` comments
    ignored); a key's name is its log's origin, and a log may have several keys."""
    logs: dict[str, list[VerifierKey]] = {}
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            key = parse_vkey(line)
        except FormatError as e:
            raise FormatError(f"{path}:{lineno}: {e}") from None
        if key in logs.get(key.name, []):
            raise FormatError(f"{path}:{lineno}: the key is listed twice")
        logs.setdefault(key.name, []).append(key)
    return {origin: tuple(keys) for origin, keys in logs.items()}


def _parse_request(body: bytes) -> tuple[int, list[bytes], bytes]:
    """The old size, the consistency proof and the checkpoint note of an add-checkpoint body."""
    first, sep, rest = body.partition(b"\n")
    m = _OLD_RE.fullmatch(first)
    if not sep or m is None:
        raise _Refusal(400, "the body must start with an `old <size>` line (decimal, no leading zeros)")
    proof: list[bytes] = []
    while True:
        line, sep, rest = rest.partition(b"\n")
        if not sep:
            raise _Refusal(400, "no empty line between the consistency proof and the checkpoint")
        if not line:
            break
        if len(proof) == MAX_PROOF_LINES:
            raise _Refusal(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
        try:
            h = b64decode_strict(line.decode("ascii"))
        except (UnicodeDecodeError, FormatError):
            h = b""
        if len(h) != 32:
            raise _Refusal(400, f"consistency proof line {len(proof) + 1} is not a base64 32-byte hash")
        proof.append(h)
    return int(m.group(1)), proof, rest


def _parse_with_files(body: bytes) -> tuple[bytes, dict[str, bytes]]:
    """The add-checkpoint body and the files of an add-checkpoint-with-files body:
    `<length>\\n<add-checkpoint body>` then, per file, `<path> <length>\\n<bytes>`."""
    head, sep, rest = body.partition(b"\n")
    if not sep or not _LENGTH_RE.fullmatch(head) or int(head) > min(len(rest), MAX_REQUEST_BYTES):
        raise _Refusal(400, "the body must start with the add-checkpoint body's length, then that body")
    inner, rest = rest[: int(head)], rest[int(head) :]
    files: dict[str, bytes] = {}
    while rest:
        line, sep, rest = rest.partition(b"\n")
        path_bytes, _, length = line.partition(b" ")
        path = path_bytes.decode("ascii", "replace")
        if not sep or not _LENGTH_RE.fullmatch(length) or int(length) > len(rest):
            raise _Refusal(400, f"file {len(files) + 1}: not `<path> <length>` then that many bytes")
        if not _FILE_PATH_RE.fullmatch(path):
            raise _Refusal(400, f"file {len(files) + 1}: {path!r} is neither a tile of the log nor a reveal")
        if path in files:
            raise _Refusal(400, f"file {len(files) + 1}: {path} is sent twice")
        files[path], rest = rest[: int(length)], rest[int(length) :]
    return inner, files


def files_request(body: bytes, files: Sequence[tuple[str, bytes]]) -> bytes:
    """An add-checkpoint-with-files body: the add-checkpoint `body`, then each (site path, bytes)."""
    parts = [f"{len(body)}\n".encode(), body]
    for path, data in files:
        parts += [f"{path} {len(data)}\n".encode(), data]
    return b"".join(parts)


def _b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def _proof_failure(e: ProofError) -> str:
    """A consistency failure with its roots in base64, as a checkpoint writes them."""
    if isinstance(e, RootMismatchError):
        return f"it leads to root {_b64(e.computed)}, not {_b64(e.expected)}"
    return str(e)


class Witness:
    """A witness: its name and Ed25519 key, its state folder and the logs it knows.

    `clock` gives the cosignatures' POSIX timestamps (injected for tests). `rules`, if given,
    is called as rules(origin, old_size, new_size, new_root, note) once the checkpoint is validly signed and
    proven consistent, before anything is recorded or signed; a non-empty list of problems
    refuses the checkpoint (422, the problems in the body)."""

    def __init__(
        self,
        name: str,
        seed: bytes,
        state_dir: Path,
        logs: Mapping[str, Sequence[VerifierKey]],
        *,
        clock: Callable[[], int] | None = None,
        rules: Rules | None = None,
    ) -> None:
        if not is_valid_key_name(name):
            raise ValueError(f"{name!r} cannot name a witness: no spaces or '+' allowed")
        if len(seed) != 32:
            raise ValueError("a witness key is a 32-byte Ed25519 seed")
        self.name = name
        self._key = nacl.signing.SigningKey(bytes(seed))
        self.cosigner = CosignerKey(name, bytes(self._key.verify_key))
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.logs = {origin: tuple(keys) for origin, keys in logs.items()}
        self._clock = clock or _unix_now
        self._rules = rules
        self._lock = threading.Lock()

    @classmethod
    def from_files(
        cls,
        key_path: Path,
        name: str,
        state_dir: Path,
        logs_path: Path,
        *,
        clock: Callable[[], int] | None = None,
        rules: Rules | None = None,
    ) -> Witness:
        return cls(name, load_seed(key_path), state_dir, load_logs(logs_path), clock=clock, rules=rules)

    @property
    def vkey(self) -> str:
        return self.cosigner.vkey

    # --------------------------------------------------------------------------- state

    def latest(self, origin: str) -> tuple[int, bytes] | None:
        """The (size, root hash) last cosigned for the log, or None if none ever was
        (generator.state.witness_state)."""
        return read_latest(self.state_dir, origin)

    # --------------------------------------------------------------------------- protocol

    def add_checkpoint(self, body: bytes, files: Mapping[str, bytes] | None = None) -> Response:
        """Answer an add-checkpoint request body: (HTTP status, headers, response body). `files`
        (site path -> bytes) are read by the rules before the witness's own copy of the site."""
        with self._lock:
            try:
                return self._add_checkpoint(body, files or {})
            except _Refusal as r:
                return r.status, {"Content-Type": r.content_type}, r.body.encode("utf-8")
            except Exception:  # the witness's own failure: refuse, and cosign nothing
                logger.exception("add-checkpoint failed")
                return 500, {"Content-Type": _TEXT}, b"internal error: nothing was cosigned\n"

    def add_checkpoint_with_files(self, body: bytes) -> Response:
        """Answer an add-checkpoint-with-files request body, as add_checkpoint() would."""
        if len(body) > MAX_FILES_REQUEST_BYTES:
            return (
                413,
                {"Content-Type": _TEXT},
                f"the request body is larger than {MAX_FILES_REQUEST_BYTES} bytes\n".encode(),
            )
        try:
            inner, files = _parse_with_files(body)
        except _Refusal as r:
            return r.status, {"Content-Type": r.content_type}, r.body.encode("utf-8")
        return self.add_checkpoint(inner, files)

    def _add_checkpoint(self, body: bytes, files: Mapping[str, bytes]) -> Response:
        if len(body) > MAX_REQUEST_BYTES:
            raise _Refusal(413, f"the request body is larger than {MAX_REQUEST_BYTES} bytes")
        old, proof, note = _parse_request(body)
        try:
            verify_cosignatures(note, [])  # the note's and the checkpoint's shape, nothing signed yet
        except NoteError as e:
            raise _Refusal(400, f"malformed checkpoint: {e}") from None
        msg = note.decode("utf-8")
        text = msg[: msg.rfind("\n\n") + 1]
        origin, size, root = parse_checkpoint(text)
        keys = self.logs.get(origin)
        if not keys:
            raise _Refusal(404, "unknown log")
        try:
            open_note(note, keys)
        except NoteError as e:
            raise _Refusal(403, f"invalid signature: {e}") from None
        if old > size:
            raise _Refusal(400, f"old size {old} is larger than the checkpoint's size {size}")
        state = self.latest(origin)
        known_size, known_root = state if state is not None else (0, EMPTY_ROOT)
        if old != known_size:
            raise _Refusal(409, f"{known_size}\n", SIZE_CONTENT_TYPE)
        if size == 0 and root != EMPTY_ROOT:
            raise _Refusal(422, "a checkpoint of size 0 must have the empty tree's root hash")
        if old == 0 and proof:
            raise _Refusal(422, "the consistency proof from size 0 must be empty")
        try:
            verify_consistency(old, size, proof, known_root, root)
        except ProofError as e:
            why = _proof_failure(e)
            logger.warning(
                "refused a checkpoint of %r signed by the log, size %d, root %s: %s", origin, size, _b64(root), why
            )
            raise _Refusal(422, f"consistency proof from {old} to {size} does not verify: {why}") from None
        if self._rules is not None:
            problems = self._rules(origin, old, size, root, note, files)
            if problems:
                logger.warning(
                    "the rules refused a checkpoint of %r, size %d, root %s: %s", origin, size, _b64(root), problems
                )
                raise _Refusal(422, "refused by the witness's rules:\n" + "".join(f"- {p}\n" for p in problems))
        if state != (size, root):
            record_latest(self.state_dir, origin, size, root)  # before anything is signed, let alone returned
        timestamp = self._clock()
        if isinstance(timestamp, bool) or not isinstance(timestamp, int):
            raise TypeError(f"the clock gave {timestamp!r}, not an integer")
        if not 1 <= timestamp <= MAX_COSIGNATURE_TIMESTAMP:
            raise ValueError(f"the clock gave {timestamp}: a cosignature's timestamp is 1..2^63-1")
        signature = self._key.sign(cosignature_message(text, timestamp)).signature
        line = cosignature_line(self.name, self.cosigner.key_id, timestamp, bytes(signature))
        return 200, {"Content-Type": _TEXT}, line.encode("utf-8")

    # --------------------------------------------------------------------------- HTTP

    def make_server(self, host: str, port: int) -> WitnessServer:
        """An HTTP server for the witness, bound but not yet serving (port 0: any free port)."""
        return WitnessServer((host, port), self)

    def serve(self, host: str, port: int) -> None:
        """Serve POST /add-checkpoint until interrupted."""
        server = self.make_server(host, port)
        logger.info("witness %s serving on %s:%d", self.name, *server.server_address[:2])
        try:
            server.serve_forever()
        finally:
            server.server_close()


class WitnessServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], witness: Witness) -> None:
        self.witness = witness
        super().__init__(address, _WitnessHandler)


class _WitnessHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the spec recommends
    server_version = "transparency-witness"
    timeout = 30  # seconds a client may take to send its request

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None, close: bool = False) -> None:
        self.send_response(status)
        for name, value in (headers or {"Content-Type": _TEXT}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path not in (ADD_CHECKPOINT_PATH, ADD_WITH_FILES_PATH):
            self._send(404, b"not found\n", close=True)
            return
        limit = MAX_REQUEST_BYTES if path == ADD_CHECKPOINT_PATH else MAX_FILES_REQUEST_BYTES
        if self.headers.get("Transfer-Encoding") is not None:
            self._send(411, b"send the body with a Content-Length\n", close=True)
            return
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self._send(411, b"send the body with a Content-Length\n", close=True)
            return
        if not length_text.isdigit() or not length_text.isascii():
            self._send(400, b"malformed Content-Length\n", close=True)
            return
        if len(length_text) > len(str(limit)):  # no int() of a thousand digits
            self._send(413, b"the request body is too long\n", close=True)
            return
        length = int(length_text)
        if length > limit:
            self._send(413, f"the request body is larger than {limit} bytes\n".encode(), close=True)
            return
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True  # the client went away mid-body
            return
        witness = cast(WitnessServer, self.server).witness
        if path == ADD_CHECKPOINT_PATH:
            status, headers, payload = witness.add_checkpoint(body)
        else:
            status, headers, payload = witness.add_checkpoint_with_files(body)
        self._send(status, payload, headers)

    def _not_post(self) -> None:
        if urlsplit(self.path).path in (ADD_CHECKPOINT_PATH, ADD_WITH_FILES_PATH):
            self._send(405, b"add-checkpoint takes POST\n", {"Content-Type": _TEXT, "Allow": "POST"}, close=True)
        else:
            self._send(404, b"not found\n", close=True)

    do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_post

    def log_message(self, format: str, *args: object) -> None:
        logger.info("%s %s", self.address_string(), format % args)
