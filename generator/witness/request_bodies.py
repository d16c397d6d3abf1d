"""The request bodies of the witness's endpoints (c2sp.org/tlog-witness add-checkpoint and
sign-subtree, and add-checkpoint-with-files), read strictly, each malformed one refused with
the status code the spec gives it (400), and the with-files body written for a client.

add-checkpoint: `old <size>`, up to 63 base64 consistency proof hashes, an empty line, the
checkpoint. sign-subtree: `subtree <start> <end>`, the subtree's base64 hash, up to 63 proof
hashes, an empty line, the reference checkpoint. add-checkpoint-with-files:
`<length>\\n<add-checkpoint body>` then, per file, `<path> <length>\\n<bytes>`. Every line ends
with a newline; numbers are decimal without leading zeros, at most 2^64 - 1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from generator.verifier import FormatError, NoteError, b64decode_strict, parse_checkpoint, verify_cosignatures

MAX_PROOF_LINES = 63
MAX_REQUEST_BYTES = 256 * 1024  # 63 proof lines are 3 KB; the rest is a checkpoint and its signatures
SIZE_CONTENT_TYPE = "text/x.tlog.size"
TEXT = "text/plain; charset=utf-8"
_U64 = r"(0|[1-9][0-9]{0,19})"
_OLD_RE = re.compile(rf"old {_U64}".encode())
_SUBTREE_RE = re.compile(rf"subtree {_U64} {_U64}".encode())
_LENGTH_RE = re.compile(rb"0|[1-9][0-9]{0,9}")
_MAX_U64 = 2**64 - 1
# The files a rules replay reads: tiles under the log prefix, and reveal documents.
_FILE_PATH_RE = re.compile(
    r"ledger/tile/(entries|[0-9]{1,2})(/x[0-9]{3})*/[0-9]{3}(\.p/[0-9]{1,3})?|reveals/[a-z0-9_-]{1,64}\.json"
)


class Refusal(Exception):
    """A request the witness refuses: the HTTP status, the body (a line of text, or the
    recorded size of a 409) and its content type, and any other header (a 429's Retry-After)."""

    def __init__(self, status: int, message: str, content_type: str = TEXT, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.body = message if message.endswith("\n") else message + "\n"
        self.headers = {"Content-Type": content_type, **(headers or {})}


def _hash_line(line: bytes, what: str) -> bytes:
    try:
        h = b64decode_strict(line.decode("ascii"))
    except (UnicodeDecodeError, FormatError):
        h = b""
    if len(h) != 32:
        raise Refusal(400, f"{what} is not a base64 32-byte hash")
    return h


def _proof_and_note(rest: bytes) -> tuple[list[bytes], bytes]:
    """The proof lines up to the empty line, and the note after it."""
    proof: list[bytes] = []
    while True:
        line, sep, rest = rest.partition(b"\n")
        if not sep:
            raise Refusal(400, "no empty line between the consistency proof and the checkpoint")
        if not line:
            return proof, rest
        if len(proof) == MAX_PROOF_LINES:
            raise Refusal(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
        proof.append(_hash_line(line, f"consistency proof line {len(proof) + 1}"))


def parse_add_checkpoint(body: bytes) -> tuple[int, list[bytes], bytes]:
    """The old size, the consistency proof and the checkpoint note of an add-checkpoint body."""
    first, sep, rest = body.partition(b"\n")
    m = _OLD_RE.fullmatch(first)
    if not sep or m is None or int(m.group(1)) > _MAX_U64:
        raise Refusal(400, "the body must start with an `old <size>` line (decimal, no leading zeros)")
    proof, note = _proof_and_note(rest)
    return int(m.group(1)), proof, note


def parse_sign_subtree(body: bytes) -> tuple[int, int, bytes, list[bytes], bytes]:
    """The subtree's start, end and hash, the subtree consistency proof and the reference
    checkpoint note of a sign-subtree body."""
    first, sep, rest = body.partition(b"\n")
    m = _SUBTREE_RE.fullmatch(first)
    if not sep or m is None or max(int(m.group(1)), int(m.group(2))) > _MAX_U64:
        raise Refusal(400, "the body must start with a `subtree <start> <end>` line (decimal, no leading zeros)")
    line, sep, rest = rest.partition(b"\n")
    if not sep:
        raise Refusal(400, "the subtree line must be followed by the subtree's hash line")
    subtree_hash = _hash_line(line, "the subtree hash line")
    proof, note = _proof_and_note(rest)
    return int(m.group(1)), int(m.group(2)), subtree_hash, proof, note


def checkpoint_of(note: bytes) -> tuple[str, str, int, bytes]:
    """The note text (extension lines included), origin, size and root of a checkpoint note; 400
    if it is no signed note of a checkpoint."""
    try:
        verify_cosignatures(note, [])  # the note's and the checkpoint's shape, nothing signed yet
    except NoteError as e:
        raise Refusal(400, f"malformed checkpoint: {e}") from None
    msg = note.decode("utf-8")
    text = msg[: msg.rfind("\n\n") + 1]
    origin, size, root = parse_checkpoint(text)
    return text, origin, size, root


def parse_with_files(body: bytes) -> tuple[bytes, dict[str, bytes]]:
    """The add-checkpoint body and the files of an add-checkpoint-with-files body."""
    head, sep, rest = body.partition(b"\n")
    if not sep or not _LENGTH_RE.fullmatch(head) or int(head) > min(len(rest), MAX_REQUEST_BYTES):
        raise Refusal(400, "the body must start with the add-checkpoint body's length, then that body")
    inner, rest = rest[: int(head)], rest[int(head) :]
    files: dict[str, bytes] = {}
    while rest:
        line, sep, rest = rest.partition(b"\n")
        path_bytes, _, length = line.partition(b" ")
        path = path_bytes.decode("ascii", "replace")
        if not sep or not _LENGTH_RE.fullmatch(length) or int(length) > len(rest):
            raise Refusal(400, f"file {len(files) + 1}: not `<path> <length>` then that many bytes")
        if not _FILE_PATH_RE.fullmatch(path):
            raise Refusal(400, f"file {len(files) + 1}: {path!r} is neither a tile of the log nor a reveal")
        if path in files:
            raise Refusal(400, f"file {len(files) + 1}: {path} is sent twice")
        files[path], rest = rest[: int(length)], rest[int(length) :]
    return inner, files


def files_request(body: bytes, files: Sequence[tuple[str, bytes]]) -> bytes:
    """An add-checkpoint-with-files body: the add-checkpoint `body`, then each (site path, bytes)."""
    parts = [f"{len(body)}\n".encode(), body]
    for path, data in files:
        parts += [f"{path} {len(data)}\n".encode(), data]
    return b"".join(parts)
