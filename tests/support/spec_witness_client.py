"""A C2SP tlog-witness client written from the specifications alone, never from the project's code:
request bodies, answers, signed notes, both cosignature types, RFC 6962 Merkle trees and proofs, and
the subtrees of draft-ietf-plants-merkle-tree-certs.

Its sources, and nothing else: C2SP's tlog-witness.md, tlog-cosignature.md, signed-note.md and
tlog-checkpoint.md (C2SP/C2SP at 5ba5ee830903e91240fc6f9f3a7a9293d49e69c9); RFC 6962 section 2.1
(the Merkle Tree Hash, 2.1.2's consistency proofs); draft-ietf-plants-merkle-tree-certs-03 section 4
(the version tlog-witness cites: 4.1 subtrees, 4.4 subtree consistency proofs, generated and verified
as written there). It imports nothing of `generator`, on purpose: it is a second reading the project's
witness is held to, so a misreading shared by the witness and this client would have to be made twice.
Ed25519 is PyNaCl's and ML-DSA-44 is `cryptography`'s (FIPS 204 pure ML-DSA, empty context).

Where a specification says what a client MUST check, a failure raises SpecViolation saying which rule.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import http.client
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PublicKey
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

# signed-note "Signature types".
NOTE_ED25519 = 0x01
COSIGNATURE_ED25519 = 0x04
COSIGNATURE_ML_DSA_44 = 0x06
_KEY_SIZE = {NOTE_ED25519: 32, COSIGNATURE_ED25519: 32, COSIGNATURE_ML_DSA_44: 1312}
# tlog-cosignature's timestamped_signature: u64 timestamp, then the signature.
_SIGNATURE_SIZE = {COSIGNATURE_ED25519: 64, COSIGNATURE_ML_DSA_44: 2420}
MAX_TIMESTAMP = 2**63 - 1
SIZE_CONTENT_TYPE = "text/x.tlog.size"
MAX_PROOF_LINES = 63
SIGNATURE_PREFIX = "\u2014 "
_SUBTREE_LABEL = b"subtree/v1\n\x00"
EMPTY_HASH = hashlib.sha256(b"").digest()


class SpecViolation(Exception):
    """Something a specification forbids, seen in a witness's answer or a note: the message names the rule."""


# ---------------------------------------------------------------- RFC 6962 2.1 and the draft's subtrees


def leaf_hash(entry: bytes) -> bytes:
    """MTH({d}) = SHA-256(0x00 || d)."""
    return hashlib.sha256(b"\x00" + entry).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _largest_power_of_two_below(n: int) -> int:
    """RFC 6962's k: the largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _bit_ceil(n: int) -> int:
    """The draft's BIT_CEIL: the smallest power of two at least n."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def is_valid_subtree(start: int, end: int) -> bool:
    """draft-03 4.1: 0 <= start < end, and start a multiple of BIT_CEIL(end - start). (The draft's
    later versions also allow the empty [x, x); -03, which tlog-witness cites, does not.)"""
    return 0 <= start < end and start % _bit_ceil(end - start) == 0


class Tree:
    """The Merkle tree over a list of leaf hashes (RFC 6962 2.1), with MTH(D[lo:hi]) of any range kept
    once computed: the proofs of a tree of a hundred leaves are then cheap to make by the thousand."""

    def __init__(self, leaf_hashes: Sequence[bytes]) -> None:
        if any(len(h) != 32 for h in leaf_hashes):
            raise ValueError("a leaf hash is 32 bytes")
        self.leaves = tuple(leaf_hashes)
        self._memo: dict[tuple[int, int], bytes] = {}

    def __len__(self) -> int:
        return len(self.leaves)

    def hash(self, lo: int = 0, hi: int | None = None) -> bytes:
        """MTH(D[lo:hi]): SHA-256() when empty, the leaf hash for one leaf, else the node of the first
        k leaves (k the largest power of two below the count) and the rest."""
        hi = len(self.leaves) if hi is None else hi
        if not 0 <= lo <= hi <= len(self.leaves):
            raise ValueError(f"[{lo}, {hi}) is not a range of a tree of {len(self.leaves)} leaves")
        if hi - lo <= 1:
            return EMPTY_HASH if hi == lo else self.leaves[lo]
        if (lo, hi) not in self._memo:
            k = _largest_power_of_two_below(hi - lo)
            self._memo[(lo, hi)] = _node(self.hash(lo, lo + k), self.hash(lo + k, hi))
        return self._memo[(lo, hi)]

    def consistency_proof(self, m: int, n: int | None = None) -> list[bytes]:
        """PROOF(m, D[n]) of RFC 6962 2.1.2, from the tree of m leaves to the tree of n (all of them by
        default); tlog-witness asks for none from the empty tree."""
        n = len(self.leaves) if n is None else n
        if not 0 <= m <= n <= len(self.leaves):
            raise ValueError(f"no consistency proof from {m} to {n} in a tree of {len(self.leaves)} leaves")
        return [] if m == 0 else self._subproof(m, 0, n, True)

    def _subproof(self, m: int, lo: int, hi: int, b: bool) -> list[bytes]:
        """SUBPROOF(m, D[lo:hi], b)."""
        if m == hi - lo:
            return [] if b else [self.hash(lo, hi)]
        k = _largest_power_of_two_below(hi - lo)
        if m <= k:
            return [*self._subproof(m, lo, lo + k, b), self.hash(lo + k, hi)]
        return [*self._subproof(m - k, lo + k, hi, False), self.hash(lo, lo + k)]

    def subtree_consistency_proof(self, start: int, end: int, n: int | None = None) -> list[bytes]:
        """SUBTREE_PROOF(start, end, D_n) of draft-03 4.4.1: from the subtree [start, end) to the tree
        of n leaves (all of them by default)."""
        n = len(self.leaves) if n is None else n
        if not is_valid_subtree(start, end) or not end <= n <= len(self.leaves):
            raise ValueError(f"[{start}, {end}) is not a subtree of a tree of {n} leaves")
        return self._subtree_subproof(start, end, 0, n, True)

    def _subtree_subproof(self, start: int, end: int, lo: int, hi: int, b: bool) -> list[bytes]:
        """SUBTREE_SUBPROOF(start, end, D[lo:hi], b), start and end counted from lo."""
        if start == 0 and end == hi - lo:
            return [] if b else [self.hash(lo, hi)]
        k = _largest_power_of_two_below(hi - lo)
        if end <= k:
            return [*self._subtree_subproof(start, end, lo, lo + k, b), self.hash(lo + k, hi)]
        if k <= start:
            return [*self._subtree_subproof(start - k, end - k, lo + k, hi, b), self.hash(lo, lo + k)]
        if start != 0:  # start < k < end implies start = 0 for a valid subtree
            raise ValueError(f"[{start}, {end}) straddles {k} without starting at 0: not a subtree")
        return [*self._subtree_subproof(0, end - k, lo + k, hi, False), self.hash(lo, lo + k)]


def verify_subtree_consistency(
    start: int, end: int, n: int, proof: Sequence[bytes], node_hash: bytes, root_hash: bytes
) -> bool:
    """draft-03 4.4.3, step by step: whether `proof` shows the subtree [start, end) with hash
    `node_hash` consistent with the tree of n leaves with root `root_hash`. With start 0 it checks an
    RFC 6962 consistency proof from the tree of `end` leaves (SUBTREE_PROOF(0, end, D_n) = PROOF(end, D_n))."""
    if not is_valid_subtree(start, end) or end > n:
        return False
    fn, sn, tn = start, end - 1, n - 1
    if sn == tn:
        while fn != sn:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    else:
        while fn != sn and sn & 1:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    rest = list(proof)
    if fn == sn:
        fr = sr = node_hash
    else:
        if not rest:
            return False
        fr = sr = rest.pop(0)
    for c in rest:
        if tn == 0:
            return False
        if sn & 1 or sn == tn:
            if fn < sn:
                fr = _node(c, fr)
            sr = _node(c, sr)
            while not sn & 1:
                fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
        else:
            sr = _node(sr, c)
        fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    return tn == 0 and fr == node_hash and sr == root_hash


# ---------------------------------------------------------------- keys, signed notes, checkpoints


def _strict_b64(text: str, what: str) -> bytes:
    """RFC 4648 section 4 base64, padded, and in its one canonical form."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SpecViolation(f"{what} is not base64: {text[:80]!r}") from None
    if base64.b64encode(raw).decode() != text:
        raise SpecViolation(f"{what} is not in canonical base64: {text[:80]!r}")
    return raw


def _check_key_name(name: str) -> None:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise SpecViolation(f"key name {name!r}: signed-note's names are non-empty, without spaces or '+'")


@dataclass(frozen=True)
class PublicKey:
    """A key the client trusts (signed-note, tlog-cosignature): a name, a signature type (0x01 a log's
    Ed25519 note key, 0x04 an Ed25519 cosigner, 0x06 an ML-DSA-44 cosigner) and the key's bytes."""

    name: str
    type: int
    key: bytes

    def __post_init__(self) -> None:
        _check_key_name(self.name)
        if self.type not in _KEY_SIZE or len(self.key) != _KEY_SIZE[self.type]:
            raise SpecViolation(f"a key of type {self.type:#04x} is not {len(self.key)} bytes, or no type known here")

    @property
    def key_id(self) -> bytes:
        """SHA-256(name || 0x0A || type || key)[:4], for the three types alike."""
        return hashlib.sha256(self.name.encode() + b"\n" + bytes([self.type]) + self.key).digest()[:4]

    @property
    def vkey(self) -> str:
        return f"{self.name}+{self.key_id.hex()}+{base64.b64encode(bytes([self.type]) + self.key).decode()}"


def parse_vkey(vkey: str) -> PublicKey:
    """`<name>+<hex key ID>+<base64(type || key)>`, its key ID checked against the name, type and key."""
    parts = vkey.split("+", 2)  # the name holds no "+"; base64 may
    if len(parts) != 3 or len(parts[1]) != 8 or parts[1] != parts[1].lower():
        raise SpecViolation(f"{vkey[:80]!r} is not name+<8 lowercase hex>+<base64>")
    raw = _strict_b64(parts[2], "the vkey's key")
    if not raw:
        raise SpecViolation("the vkey holds no key")
    key = PublicKey(parts[0], raw[0], raw[1:])
    if key.key_id.hex() != parts[1]:
        raise SpecViolation(f"vkey key ID {parts[1]} is not the key's, {key.key_id.hex()}")
    return key


@dataclass(frozen=True)
class Signature:
    """One signature line: `— <name> base64(key ID || signature)`, as sent (newline included)."""

    name: str
    key_id: bytes
    blob: bytes  # what follows the key ID
    line: str


@dataclass(frozen=True)
class Checkpoint:
    """tlog-checkpoint's note text: origin, tree size, root hash, extension lines."""

    text: str
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = field(default=())


def _decimal(text: str, what: str) -> int:
    """An ASCII decimal with no leading zeroes (`0` for zero)."""
    if not text.isascii() or not text.isdigit() or (len(text) > 1 and text[0] == "0"):
        raise SpecViolation(f"{what} {text[:40]!r} is not a decimal without leading zeroes")
    return int(text)


def parse_signature_lines(block: str) -> list[Signature]:
    """Signature lines, each `— name base64` ending in a newline; one at least."""
    if not block or not block.endswith("\n"):
        raise SpecViolation("signature lines end with a newline; there must be one line at least")
    out = []
    for line in block[:-1].split("\n"):
        if not line.startswith(SIGNATURE_PREFIX) or line.count(" ") != 2:
            raise SpecViolation(f"{line[:80]!r} is not a signature line (U+2014, space, name, space, base64)")
        name, b64 = line[len(SIGNATURE_PREFIX) :].split(" ")
        _check_key_name(name)
        raw = _strict_b64(b64, f"the signature of {name}")
        if len(raw) < 5:
            raise SpecViolation(f"the signature of {name} holds {len(raw)} bytes: a key ID and a signature")
        out.append(Signature(name, raw[:4], raw[4:], line + "\n"))
    return out


def split_note(note: bytes) -> tuple[str, list[Signature]]:
    """A signed note's text (its final newline included) and its signature lines: UTF-8 with no
    control character but the newline, the text separated from the signatures by the last empty line."""
    try:
        data = note.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecViolation("a signed note is UTF-8") from None
    if any(ord(c) < 0x20 and c != "\n" for c in data):
        raise SpecViolation("a signed note holds no control character but the newline")
    cut = data.rfind("\n\n")
    if cut < 0:
        raise SpecViolation("a signed note has an empty line between its text and its signatures")
    return data[: cut + 1], parse_signature_lines(data[cut + 2 :])


def parse_checkpoint(text: str) -> Checkpoint:
    """tlog-checkpoint's note text: three non-empty lines at least, then extension lines, all non-empty."""
    if not text.endswith("\n"):
        raise SpecViolation("a checkpoint's text ends with a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3 or any(not line for line in lines):
        raise SpecViolation("a checkpoint is three non-empty lines or more (origin, size, root, extensions)")
    root = _strict_b64(lines[2], "the checkpoint's root hash")
    if len(root) != 32:
        raise SpecViolation(f"the checkpoint's root hash is {len(root)} bytes, not 32")
    return Checkpoint(text, lines[0], _decimal(lines[1], "the tree size"), root, tuple(lines[3:]))


# ---------------------------------------------------------------- the signed messages, and checking them


def cosignature_v1_message(checkpoint_text: str, timestamp: int) -> bytes:
    """Ed25519's signed message: `cosignature/v1`, `time <timestamp>`, then the whole note body."""
    return b"cosignature/v1\ntime " + str(timestamp).encode() + b"\n" + checkpoint_text.encode()


def _opaque8(value: bytes, what: str) -> bytes:
    if not 1 <= len(value) <= 255:
        raise SpecViolation(f"{what} is {len(value)} bytes; opaque<1..2^8-1> holds 1 to 255")
    return bytes([len(value)]) + value


def cosigned_message(cosigner: str, timestamp: int, origin: str, start: int, end: int, hash32: bytes) -> bytes:
    """ML-DSA-44's `cosigned_message`, laid out as RFC 8446 section 3 presents the struct: the label,
    the cosigner's name and the origin with a one-byte length, integers as big-endian u64."""
    if len(hash32) != 32:
        raise SpecViolation("a subtree hash is 32 bytes")
    return (
        _SUBTREE_LABEL
        + _opaque8(cosigner.encode(), "cosigner_name")
        + struct.pack(">Q", timestamp)
        + _opaque8(origin.encode(), "log_origin")
        + struct.pack(">QQ", start, end)
        + hash32
    )


def _timestamped(key: PublicKey, sig: Signature) -> tuple[int, bytes]:
    """A cosignature's timestamped_signature: the timestamp (at most 2^63 - 1) and the signature."""
    want = 8 + _SIGNATURE_SIZE[key.type]
    if len(sig.blob) != want:
        raise SpecViolation(f"a cosignature by {key.name} of type {key.type:#04x} is {want} bytes, not {len(sig.blob)}")
    timestamp = int.from_bytes(sig.blob[:8], "big")
    if timestamp > MAX_TIMESTAMP:
        raise SpecViolation(f"cosignature timestamp {timestamp} by {key.name} exceeds 2^63 - 1")
    return timestamp, sig.blob[8:]


def _signature_holds(key: PublicKey, message: bytes, signature: bytes) -> bool:
    try:
        if key.type == COSIGNATURE_ML_DSA_44:
            MLDSA44PublicKey.from_public_bytes(key.key).verify(signature, message)
        else:
            VerifyKey(key.key).verify(message, signature)
    except (InvalidSignature, BadSignatureError, ValueError):
        return False
    return True


def verify_line(key: PublicKey, text: str, sig: Signature) -> int | None:
    """Check one line of `key` on the note text `text` (a checkpoint's, for a cosignature); its
    timestamp (None for a note signature, which has none). SpecViolation if it does not verify."""
    if (sig.name, sig.key_id) != (key.name, key.key_id):
        raise SpecViolation(f"the line of {sig.name} (key ID {sig.key_id.hex()}) is not by {key.vkey[:60]}")
    if key.type == NOTE_ED25519:
        if len(sig.blob) != 64 or not _signature_holds(key, text.encode(), sig.blob):
            raise SpecViolation(f"the Ed25519 note signature by {key.name} does not verify")
        return None
    timestamp, signature = _timestamped(key, sig)
    if key.type == COSIGNATURE_ED25519:
        message = cosignature_v1_message(text, timestamp)
    else:
        cp = parse_checkpoint(text)
        message = cosigned_message(key.name, timestamp, cp.origin, 0, cp.size, cp.root)
    if not _signature_holds(key, message, signature):
        raise SpecViolation(f"the cosignature of type {key.type:#04x} by {key.name} does not verify")
    return timestamp


def open_note(note: bytes, keys: Sequence[PublicKey]) -> tuple[str, dict[PublicKey, int | None]]:
    """Open a signed note as signed-note says: lines whose name and key ID are not both a given key's
    are ignored; a given key's line must verify; one given key at least must have signed. The text,
    and each key that signed with its timestamp (None for a note signature)."""
    text, lines = split_note(note)
    known = {(k.name, k.key_id): k for k in keys}
    verified: dict[PublicKey, int | None] = {}
    for sig in lines:
        key = known.get((sig.name, sig.key_id))
        if key is not None:
            verified[key] = verify_line(key, text, sig)
    if not verified:
        raise SpecViolation("no line of the note is by a key the client trusts")
    return text, verified


def open_checkpoint(note: bytes, keys: Sequence[PublicKey]) -> tuple[Checkpoint, dict[PublicKey, int | None]]:
    """open_note for a note whose text must be a checkpoint."""
    text, verified = open_note(note, keys)
    return parse_checkpoint(text), verified


def verify_subtree_line(key: PublicKey, origin: str, start: int, end: int, hash32: bytes, sig: Signature) -> None:
    """Check a sign-subtree answer's line: an ML-DSA-44 cosignature of [start, end) with timestamp 0
    (tlog-witness: "the timestamp MUST be zero")."""
    if key.type != COSIGNATURE_ML_DSA_44:
        raise SpecViolation(f"{key.name}'s key of type {key.type:#04x} cannot sign a subtree")
    if (sig.name, sig.key_id) != (key.name, key.key_id):
        raise SpecViolation(f"the line of {sig.name} (key ID {sig.key_id.hex()}) is not by {key.vkey[:60]}")
    timestamp, signature = _timestamped(key, sig)
    if timestamp != 0:
        raise SpecViolation(f"a subtree cosignature by {key.name} has timestamp {timestamp}, not 0")
    if not _signature_holds(key, cosigned_message(key.name, 0, origin, start, end, hash32), signature):
        raise SpecViolation(f"the subtree cosignature of [{start}, {end}) by {key.name} does not verify")


# ---------------------------------------------------------------- requests and answers over HTTP


def add_checkpoint_body(old_size: int, proof: Sequence[bytes], checkpoint: bytes) -> bytes:
    """`old <size>`, a consistency proof line a hash, an empty line, the checkpoint."""
    if len(proof) > MAX_PROOF_LINES:
        raise ValueError(f"a client sends at most {MAX_PROOF_LINES} proof lines, not {len(proof)}")
    lines = [f"old {old_size}", *(base64.b64encode(h).decode() for h in proof), ""]
    return "".join(line + "\n" for line in lines).encode() + checkpoint


def sign_subtree_body(start: int, end: int, hash32: bytes, proof: Sequence[bytes], checkpoint: bytes) -> bytes:
    """`subtree <start> <end>`, the subtree's hash, a proof line a hash, an empty line, the checkpoint."""
    if len(proof) > MAX_PROOF_LINES:
        raise ValueError(f"a client sends at most {MAX_PROOF_LINES} proof lines, not {len(proof)}")
    lines = [f"subtree {start} {end}", base64.b64encode(hash32).decode()]
    lines += [*(base64.b64encode(h).decode() for h in proof), ""]
    return "".join(line + "\n" for line in lines).encode() + checkpoint


@dataclass(frozen=True)
class Answer:
    """A witness's HTTP answer."""

    status: int
    content_type: str
    body: bytes

    def lines(self) -> list[Signature]:
        """A 200's body: one or more note signature lines (each `—` ... newline)."""
        if self.status != 200:
            raise SpecViolation(f"status {self.status}, not 200: {self.body[:200]!r}")
        try:
            return parse_signature_lines(self.body.decode("utf-8"))
        except UnicodeDecodeError:
            raise SpecViolation("the signature lines are not UTF-8") from None

    def tree_size(self) -> int:
        """A 409's body: the latest cosigned size in decimal and a newline, typed text/x.tlog.size."""
        if self.status != 409:
            raise SpecViolation(f"status {self.status}, not 409")
        if self.content_type.split(";")[0].strip() != SIZE_CONTENT_TYPE:
            raise SpecViolation(f"a 409's Content-Type is {SIZE_CONTENT_TYPE}, not {self.content_type!r}")
        text = self.body.decode("ascii", "replace")
        if not text.endswith("\n"):
            raise SpecViolation(f"a 409's body ends with a newline: {text!r}")
        return _decimal(text[:-1], "the 409's tree size")


class WitnessClient:
    """A client of one witness: its submission prefix and monitoring prefix (the same by default), over
    one kept-alive HTTP connection, as the spec recommends."""

    def __init__(self, submission_prefix: str, monitoring_prefix: str | None = None) -> None:
        self.submission = submission_prefix.rstrip("/")
        self.monitoring = (monitoring_prefix or submission_prefix).rstrip("/")
        url = urlsplit(self.submission)
        if url.scheme != "http" or url.hostname is None:
            raise ValueError(f"{submission_prefix}: this client speaks plain HTTP to a test witness")
        self._host, self._port = url.hostname, url.port or 80
        self._conn: http.client.HTTPConnection | None = None
        self.connections = 0  # how many connections it has opened: keep-alive keeps it at one

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _send(self, method: str, url: str, body: bytes | None) -> Answer:
        path = urlsplit(url).path
        for attempt in (1, 2):  # a kept-alive connection the server closed is opened again, once
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=60)
                self.connections += 1
            try:
                self._conn.request(method, path, body=body)
                r = self._conn.getresponse()
                answer = Answer(r.status, r.getheader("Content-Type", ""), r.read())
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2:
                    raise
                continue
            if r.will_close:
                self.close()
            return answer
        raise AssertionError("unreachable")

    def post(self, path: str, body: bytes) -> Answer:
        """POST any body to <submission prefix><path>: for requests a well-behaved client would not make."""
        return self._send("POST", self.submission + path, body)

    def add_checkpoint(self, old_size: int, proof: Sequence[bytes], checkpoint: bytes) -> Answer:
        """POST <submission prefix>/add-checkpoint."""
        return self._send("POST", self.submission + "/add-checkpoint", add_checkpoint_body(old_size, proof, checkpoint))

    def submit(self, checkpoint: bytes, prove: Callable[[int], list[bytes]], old_size: int = 0) -> tuple[Answer, int]:
        """add-checkpoint from `old_size` (0 when the client knows nothing); a 409 tells the size the
        witness holds, and the request is made again once from there with `prove(size)`'s proof. The
        last answer and the old size it was given."""
        answer = self.add_checkpoint(old_size, prove(old_size), checkpoint)
        if answer.status == 409:
            old_size = answer.tree_size()
            answer = self.add_checkpoint(old_size, prove(old_size), checkpoint)
        return answer, old_size

    def sign_subtree(self, start: int, end: int, hash32: bytes, proof: Sequence[bytes], checkpoint: bytes) -> Answer:
        """POST <submission prefix>/sign-subtree."""
        body = sign_subtree_body(start, end, hash32, proof, checkpoint)
        return self._send("POST", self.submission + "/sign-subtree", body)

    def read_checkpoint(self, origin: str) -> Answer:
        """GET <monitoring prefix>/<lowercase hex SHA-256 of the origin>/checkpoint."""
        return self._send("GET", f"{self.monitoring}/{hashlib.sha256(origin.encode()).hexdigest()}/checkpoint", None)


def cosigned_note(checkpoint: bytes, answer: Answer) -> bytes:
    """The checkpoint with the witness's lines after its own, as tlog-witness lets a client parse them."""
    answer.lines()  # only a 200 of well-formed lines is joined
    return checkpoint + answer.body


def only_lines_of(note: bytes, keys: Sequence[PublicKey]) -> bytes:
    """The note with only the lines by `keys` kept: the reference checkpoint a sign-subtree request
    SHOULD carry holds the witness's lines alone."""
    text, lines = split_note(note)
    mine = {(k.name, k.key_id) for k in keys}
    kept = [s.line for s in lines if (s.name, s.key_id) in mine]
    return (text + "\n" + "".join(kept)).encode()
