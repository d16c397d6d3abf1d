"""A transparency-log witness speaking c2sp.org/tlog-witness (add-checkpoint, sign-subtree, the
read API) over HTTP, cosigning with one or more keys of c2sp.org/tlog-cosignature (Ed25519
`cosignature/v1`, ML-DSA-44 `subtree/v1`).

For each log it knows (origin -> the log's keys, generator/witness/known_logs.py), the witness
keeps the latest checkpoint it cosigned, as (size, root hash), and the cosigned note of it, in a
state folder (generator.state.witness_state: one file a log, replaced atomically, so a kill
leaves the old record or the new one). A new checkpoint is cosigned only if its log signed it
and it is consistent with that record; the record is updated before the cosignatures are made,
and the note (the checkpoint, the log's signatures the witness verified, the witness's lines)
only after: a witness killed in between has moved on without having returned anything, serves
no note until its next cosignature, and the client, told the new size (409), asks again from
there.

Endpoints (one prefix for submission and monitoring: the server's root):

- POST /add-checkpoint: one cosignature line a key, each with the current time (never 0).
  200; 400 malformed request, or an old size above the checkpoint's; 403 no valid signature by a
  known key of the log, or a known key's signature fails; 404 unknown origin; 409 the old size
  is not the recorded one (body: the recorded size, type text/x.tlog.size); 422 a size-0
  checkpoint without the empty root, a proof from size 0, a proof that does not verify, a
  different root at the recorded size, or a refusal by the `rules` hook (the spec allows a
  witness to refuse a validly signed checkpoint with the consistency failures' code, and a rule
  the log broke is one more reason it cannot be cosigned); 429 the log is over its daily quota
  (a log list's `qpd`; HTTP's code and a Retry-After header: the spec sets none).
- POST /add-checkpoint-with-files: a witness replaying the program's rules needs the new entries,
  which no copy of the site holds before the build that adds them is published: the
  add-checkpoint body, then the log's files the rules read (the new tiles, the new reveals'
  documents), each checked like any other copy of the site and overlaid on the witness's mirror
  for that one request. The answers are add-checkpoint's.
- POST /sign-subtree: the witness's ML-DSA-44 keys sign the subtree [start, end) (timestamp 0)
  of a checkpoint the witness cosigned. 200; 400 malformed, an empty or unaligned subtree
  (draft-ietf-plants-merkle-tree-certs-03 4.1, which the spec cites, has no empty subtree) or
  one ending beyond the checkpoint; 404 unknown origin; 403 no valid cosignature by one of the
  witness's keys on the checkpoint; 422 the subtree consistency proof does not verify. A witness
  with no ML-DSA-44 key cannot sign a subtree: for it the path does not exist (404, as for a
  witness without this optional API).
- GET (or HEAD) /<lowercase hex SHA-256 of the origin>/checkpoint: the note kept with the record
  (text/plain; charset=utf-8); 404 for an origin the witness does not know or never cosigned,
  and for a record kept without its note (an earlier release's, or a kill between recording and
  signing) until the next cosignature.

Everywhere: 404 any other path; 405 another method (with Allow); 411/413 no length or too long a
body (HTTP's own codes: the spec sets none); 500 the witness's own failure (its state
unreadable, its clock or its rules broken), nothing cosigned. Roots in messages are base64, as
in a checkpoint, the verifier's report and the monitor.

One process serves a state folder: the lock that makes check-and-record atomic is in memory.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

from generator.core.cosigning_keys import Cosigner, load_cosigner
from generator.core.generator_errors import KeyFileError
from generator.state.witness_state import WitnessRecord, read_latest, read_record, record_latest
from generator.verifier import (
    ED25519,
    EMPTY_ROOT,
    MAX_COSIGNATURE_TIMESTAMP,
    ML_DSA_44,
    CosignerKey,
    LogKey,
    NoteError,
    ProofError,
    RootMismatchError,
    cosigned_by,
    is_valid_key_name,
    is_valid_subtree,
    log_signature_lines,
    verify_consistency,
    verify_subtree_consistency,
)
from generator.witness.known_logs import KnownLogs, known_logs
from generator.witness.quota import DailyQuota
from generator.witness.request_bodies import (
    MAX_REQUEST_BYTES,
    SIZE_CONTENT_TYPE,
    TEXT,
    Refusal,
    checkpoint_of,
    parse_add_checkpoint,
    parse_sign_subtree,
    parse_with_files,
)
from generator.witness.request_bodies import files_request as files_request  # the build's client

Rules = Callable[[str, int, int, bytes, bytes, Mapping[str, bytes]], list[str]]
Response = tuple[int, dict[str, str], bytes]

ADD_CHECKPOINT_PATH = "/add-checkpoint"
ADD_WITH_FILES_PATH = "/add-checkpoint-with-files"
SIGN_SUBTREE_PATH = "/sign-subtree"
READ_PATH_RE = re.compile(r"/([0-9a-f]{64})/checkpoint")
# The new tiles and reveals of one release: a 20,000-item commit is about 6 MiB of entries.
MAX_FILES_REQUEST_BYTES = 1 << 26

logger = logging.getLogger(__name__)


def _unix_now() -> int:
    return int(time.time())


def load_keys(paths: Sequence[Path], name: str | None) -> tuple[Cosigner, ...]:
    """The witness's keys from their files (either type; a bare Ed25519 seed takes `name`), all
    of one name, none twice. KeyFileError naming the file otherwise."""
    if not paths:
        raise KeyFileError("a witness needs at least one key (--key)")
    keys: list[Cosigner] = []
    for path in paths:
        key = load_cosigner(path, name)
        if keys and key.name != keys[0].name:
            raise KeyFileError(f"{path}: the key is named {key.name!r}, not {keys[0].name!r} as {paths[0]}")
        if any(k.key == key.key for k in keys):
            raise KeyFileError(f"{path}: the same key is given twice")
        keys.append(key)
    return tuple(keys)


def _cosigners(name: str, key: bytes | Cosigner | Sequence[Cosigner]) -> tuple[Cosigner, ...]:
    if isinstance(key, bytes):
        if len(key) != 32:
            raise ValueError("a witness key is a 32-byte Ed25519 seed")
        return (Cosigner(name, ED25519, key),)
    keys = (key,) if isinstance(key, Cosigner) else tuple(key)
    if not keys:
        raise ValueError("a witness needs at least one key")
    for k in keys:
        if k.name != name:
            raise ValueError(f"the key {k.key.vkey} is named {k.name!r}, not {name!r}")
    return keys


def _b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def _proof_failure(e: ProofError) -> str:
    """A proof failure with its roots in base64, as a checkpoint writes them."""
    if isinstance(e, RootMismatchError):
        return f"it leads to root {_b64(e.computed)}, not {_b64(e.expected)}"
    return str(e)


def _answer(r: Refusal) -> Response:
    return r.status, r.headers, r.body.encode("utf-8")


class Witness:
    """A witness: its name and keys, its state folder and the logs it knows.

    `key` is a 32-byte Ed25519 seed or the witness's Cosigner(s), all named `name`. `clock`
    gives the cosignatures' POSIX timestamps (injected for tests). `rules`, if given, is called as
    rules(origin, old_size, new_size, new_root, note, files) once the checkpoint is validly signed
    and proven consistent, before anything is recorded or signed; a non-empty list of problems
    refuses the checkpoint (422, the problems in the body). `quotas` (origin -> requests a day)
    limits add-checkpoint requests per log over a rolling day measured by `day_clock`."""

    def __init__(
        self,
        name: str,
        key: bytes | Cosigner | Sequence[Cosigner],
        state_dir: Path,
        logs: Mapping[str, Sequence[LogKey]],
        *,
        clock: Callable[[], int] | None = None,
        rules: Rules | None = None,
        quotas: Mapping[str, int] | None = None,
        day_clock: Callable[[], float] | None = None,
    ) -> None:
        if not is_valid_key_name(name):
            raise ValueError(f"{name!r} cannot name a witness: no spaces or '+' allowed")
        self.name = name
        self.keys = _cosigners(name, key)
        self.cosigner: CosignerKey = self.keys[0].key  # the first key, as a verifier knows it
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.logs = {origin: tuple(keys) for origin, keys in logs.items()}
        if any(k.kind == ML_DSA_44 for k in self.keys):
            for origin in self.logs:
                if not 1 <= len(origin.encode("utf-8")) <= 255:
                    raise ValueError(f"origin {origin!r}: an ML-DSA-44 cosignature holds an origin of 1 to 255 bytes")
        self._origins = {hashlib.sha256(o.encode("utf-8")).hexdigest(): o for o in self.logs}
        self._clock = clock or _unix_now
        self._rules = rules
        self._quota = DailyQuota(quotas or {}, day_clock or time.monotonic)
        self._lock = threading.Lock()

    @classmethod
    def from_files(
        cls,
        key_paths: Sequence[Path],
        name: str | None,
        state_dir: Path,
        logs_path: Path | None,
        log_list_path: Path | None = None,
        *,
        clock: Callable[[], int] | None = None,
        rules: Rules | None = None,
    ) -> Witness:
        """The witness of its key files, its state folder and its logs file and/or log list."""
        keys = load_keys(key_paths, name)
        known: KnownLogs = known_logs(logs_path, log_list_path)
        return cls(keys[0].name, keys, state_dir, known.keys, clock=clock, rules=rules, quotas=known.quotas)

    @property
    def vkey(self) -> str:
        """The first key's vkey."""
        return self.cosigner.vkey

    @property
    def vkeys(self) -> list[str]:
        return [k.key.vkey for k in self.keys]

    @property
    def subtree_keys(self) -> tuple[Cosigner, ...]:
        """The keys that can sign a subtree (ML-DSA-44): none, and sign-subtree does not exist."""
        return tuple(k for k in self.keys if k.kind == ML_DSA_44)

    def latest(self, origin: str) -> tuple[int, bytes] | None:
        """The (size, root hash) last cosigned for the log, or None if none ever was
        (generator.state.witness_state)."""
        return read_latest(self.state_dir, origin)

    # --------------------------------------------------------------------------- add-checkpoint

    def add_checkpoint(self, body: bytes, files: Mapping[str, bytes] | None = None) -> Response:
        """Answer an add-checkpoint request body: (HTTP status, headers, response body). `files`
        (site path -> bytes) are read by the rules before the witness's own copy of the site."""
        with self._lock:
            try:
                return self._add_checkpoint(body, files or {})
            except Refusal as r:
                return _answer(r)
            except Exception:  # the witness's own failure: refuse, and return no cosignature
                logger.exception("add-checkpoint failed")
                return 500, {"Content-Type": TEXT}, b"internal error: nothing was cosigned\n"

    def add_checkpoint_with_files(self, body: bytes) -> Response:
        """Answer an add-checkpoint-with-files request body, as add_checkpoint() would."""
        if len(body) > MAX_FILES_REQUEST_BYTES:
            return _answer(Refusal(413, f"the request body is larger than {MAX_FILES_REQUEST_BYTES} bytes"))
        try:
            inner, files = parse_with_files(body)
        except Refusal as r:
            return _answer(r)
        return self.add_checkpoint(inner, files)

    def _signed_by_log(self, note: bytes, origin: str) -> list[str]:
        """The log's signature lines the witness verified (404 unknown log, 403 none or a bad one),
        and 429 when the log is over its quota (which only a request that moves the record spends)."""
        keys = self.logs.get(origin)
        if not keys:
            raise Refusal(404, "unknown log")
        try:
            lines = list(log_signature_lines(note, keys).values())
        except NoteError as e:
            raise Refusal(403, f"invalid signature: {e}") from None
        # Checked here, spent only when the record moves (_add_checkpoint): a replay of the log's
        # public checkpoints, by anyone, cannot spend its quota.
        wait = self._quota.wait(origin)
        if wait is not None:
            raise Refusal(
                429, f"the log is over its quota of requests a day; retry in {wait} s", TEXT, {"Retry-After": str(wait)}
            )
        return lines

    def _check_consistency(
        self, origin: str, old: int, proof: list[bytes], size: int, root: bytes
    ) -> WitnessRecord | None:
        """The log's record, once the checkpoint is proven consistent with it (409 or 422 if not)."""
        record = read_record(self.state_dir, origin)
        known_size, known_root = (record.size, record.root) if record is not None else (0, EMPTY_ROOT)
        if old != known_size:
            raise Refusal(409, f"{known_size}\n", SIZE_CONTENT_TYPE)
        if size == 0 and root != EMPTY_ROOT:
            raise Refusal(422, "a checkpoint of size 0 must have the empty tree's root hash")
        if old == 0 and proof:
            raise Refusal(422, "the consistency proof from size 0 must be empty")
        try:
            verify_consistency(old, size, proof, known_root, root)
        except ProofError as e:
            why = _proof_failure(e)
            logger.warning(
                "refused a checkpoint of %r signed by the log, size %d, root %s: %s", origin, size, _b64(root), why
            )
            raise Refusal(422, f"consistency proof from {old} to {size} does not verify: {why}") from None
        return record

    def _timestamp(self) -> int:
        timestamp = self._clock()
        if isinstance(timestamp, bool) or not isinstance(timestamp, int):
            raise TypeError(f"the clock gave {timestamp!r}, not an integer")
        if not 1 <= timestamp <= MAX_COSIGNATURE_TIMESTAMP:
            raise ValueError(f"the clock gave {timestamp}: a cosignature's timestamp is 1..2^63-1")
        return timestamp

    def _add_checkpoint(self, body: bytes, files: Mapping[str, bytes]) -> Response:
        if len(body) > MAX_REQUEST_BYTES:
            raise Refusal(413, f"the request body is larger than {MAX_REQUEST_BYTES} bytes")
        old, proof, note = parse_add_checkpoint(body)
        text, origin, size, root = checkpoint_of(note)
        log_lines = self._signed_by_log(note, origin)
        if old > size:
            raise Refusal(400, f"old size {old} is larger than the checkpoint's size {size}")
        record = self._check_consistency(origin, old, proof, size, root)
        if self._rules is not None:
            problems = self._rules(origin, old, size, root, note, files)
            if problems:
                logger.warning(
                    "the rules refused a checkpoint of %r, size %d, root %s: %s", origin, size, _b64(root), problems
                )
                raise Refusal(422, "refused by the witness's rules:\n" + "".join(f"- {p}\n" for p in problems))
        moved = record is None or (record.size, record.root) != (size, root)
        if moved:
            record_latest(self.state_dir, origin, size, root)  # before anything is signed, let alone returned
            self._quota.spend(origin)
        timestamp = self._timestamp()
        lines = [key.cosign(text, timestamp) for key in self.keys]
        # What the read API serves: the newest cosignatures, also when a log asks again for the
        # tree it had (a fresh timestamp is why it asks; tlog-witness wants no more than an hour's delay).
        served = (text + "\n" + "".join(log_lines) + "".join(lines)).encode("utf-8")
        record_latest(self.state_dir, origin, size, root, served)
        return 200, {"Content-Type": TEXT}, "".join(lines).encode("utf-8")

    # --------------------------------------------------------------------------- sign-subtree

    def sign_subtree(self, body: bytes) -> Response:
        """Answer a sign-subtree request body: (HTTP status, headers, response body)."""
        if not self.subtree_keys:
            return _answer(Refusal(404, "this witness has no ML-DSA-44 key: it signs no subtree"))
        try:
            return self._sign_subtree(body)
        except Refusal as r:
            return _answer(r)
        except Exception:
            logger.exception("sign-subtree failed")
            return 500, {"Content-Type": TEXT}, b"internal error: nothing was signed\n"

    def _check_own_cosignature(self, note: bytes) -> None:
        """403 unless one of the witness's own keys validly cosigned the checkpoint note and none
        of its keys' lines fails (a note with a failing line by a known key is malformed)."""
        try:
            signed = cosigned_by(note, [key.key for key in self.keys])
        except NoteError as e:
            raise Refusal(403, f"the checkpoint is not one this witness cosigned: {e}") from None
        if not signed:
            raise Refusal(403, f"the checkpoint carries no cosignature by {self.name} with one of its keys")

    def _sign_subtree(self, body: bytes) -> Response:
        if len(body) > MAX_REQUEST_BYTES:
            raise Refusal(413, f"the request body is larger than {MAX_REQUEST_BYTES} bytes")
        start, end, subtree_hash, proof, note = parse_sign_subtree(body)
        _, origin, size, root = checkpoint_of(note)
        if start == end or not is_valid_subtree(start, end):
            raise Refusal(
                400, f"[{start}, {end}) is not a subtree: non-empty, its start a multiple of its size's power of two"
            )
        if end > size:
            raise Refusal(400, f"the subtree [{start}, {end}) ends beyond the checkpoint's size {size}")
        if origin not in self.logs:
            raise Refusal(404, "unknown log")
        self._check_own_cosignature(note)
        try:
            verify_subtree_consistency(start, end, subtree_hash, size, root, proof)
        except ProofError as e:
            raise Refusal(
                422, f"subtree consistency proof of [{start}, {end}) in {size} does not verify: {_proof_failure(e)}"
            ) from None
        lines = [key.sign_subtree(origin, start, end, subtree_hash) for key in self.subtree_keys]
        return 200, {"Content-Type": TEXT}, "".join(lines).encode("utf-8")

    # --------------------------------------------------------------------------- read API

    def served_checkpoint(self, origin_hash: str) -> Response:
        """Answer GET /<origin hash>/checkpoint: the note kept with the latest record, or 404."""
        origin = self._origins.get(origin_hash)
        try:
            record = read_record(self.state_dir, origin) if origin is not None else None
        except Exception:
            logger.exception("reading the state of %r failed", origin)
            return 500, {"Content-Type": TEXT}, b"internal error\n"
        if record is None or record.note is None:
            return _answer(Refusal(404, "this witness serves no cosigned checkpoint of that log"))
        return 200, {"Content-Type": TEXT}, record.note

    # --------------------------------------------------------------------------- HTTP

    def post_paths(self) -> tuple[str, ...]:
        """The paths that take POST: sign-subtree only with a key that can sign a subtree."""
        paths = (ADD_CHECKPOINT_PATH, ADD_WITH_FILES_PATH)
        return (*paths, SIGN_SUBTREE_PATH) if self.subtree_keys else paths

    def make_server(self, host: str, port: int) -> WitnessServer:
        """An HTTP server for the witness, bound but not yet serving (port 0: any free port)."""
        return WitnessServer((host, port), self)

    def serve(self, host: str, port: int) -> None:
        """Serve the witness's endpoints until interrupted."""
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

    @property
    def witness(self) -> Witness:
        return cast(WitnessServer, self.server).witness

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None, close: bool = False) -> None:
        self.send_response(status)
        for name, value in (headers or {"Content-Type": TEXT}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self, limit: int) -> bytes | None:
        """The request body, or None once a refusal (or nothing, for a client gone) is sent."""
        if self.headers.get("Transfer-Encoding") is not None or self.headers.get("Content-Length") is None:
            self._send(411, b"send the body with a Content-Length\n", close=True)
            return None
        length_text = self.headers["Content-Length"]
        if not length_text.isdigit() or not length_text.isascii():
            self._send(400, b"malformed Content-Length\n", close=True)
            return None
        if len(length_text) > len(str(limit)):  # no int() of a thousand digits
            self._send(413, b"the request body is too long\n", close=True)
            return None
        length = int(length_text)
        if length > limit:
            self._send(413, f"the request body is larger than {limit} bytes\n".encode(), close=True)
            return None
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True  # the client went away mid-body
            return None
        return body

    def _wrong_method(self, path: str) -> bool:
        """Send 405 (or 404 for a path that does not exist) if `path` does not take this method."""
        takes_post = path in self.witness.post_paths()
        is_read = READ_PATH_RE.fullmatch(path) is not None
        if (self.command == "POST" and takes_post) or (self.command in ("GET", "HEAD") and is_read):
            return False
        if takes_post:
            self._send(405, b"this path takes POST\n", {"Content-Type": TEXT, "Allow": "POST"}, close=True)
        elif is_read:
            self._send(405, b"this path takes GET\n", {"Content-Type": TEXT, "Allow": "GET, HEAD"}, close=True)
        else:
            self._send(404, b"not found\n", close=True)
        return True

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if self._wrong_method(path):
            return
        body = self._body(MAX_FILES_REQUEST_BYTES if path == ADD_WITH_FILES_PATH else MAX_REQUEST_BYTES)
        if body is None:
            return
        if path == ADD_CHECKPOINT_PATH:
            status, headers, payload = self.witness.add_checkpoint(body)
        elif path == ADD_WITH_FILES_PATH:
            status, headers, payload = self.witness.add_checkpoint_with_files(body)
        else:
            status, headers, payload = self.witness.sign_subtree(body)
        self._send(status, payload, headers)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if self._wrong_method(path):
            return
        found = READ_PATH_RE.fullmatch(path)
        assert found is not None  # _wrong_method let only the read path through
        status, headers, payload = self.witness.served_checkpoint(found.group(1))
        self._send(status, payload, headers)

    def _other_method(self) -> None:
        self._wrong_method(urlsplit(self.path).path)

    do_HEAD = do_GET
    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other_method

    def log_message(self, format: str, *args: object) -> None:
        logger.info("%s %s", self.address_string(), format % args)
