"""The project's witness, a real `transparency witness serve` process on 127.0.0.1, driven over HTTP by a
client written from the C2SP specifications alone (tests/support/spec_witness_client.py), which makes its
own proofs and checks every answer itself: add-checkpoint from the empty tree and from an older size, a
stale old size followed through its 409, each refusal with the status tlog-witness gives it, the read
API's cosigned checkpoint (the log's signatures and the witness's), and sign-subtree's cosignatures and
refusals; for an Ed25519 witness, an ML-DSA-44 witness and a witness holding one key of each type.

The log is a test log made here (generator's keys in the test, never in the client): it signs its
checkpoints as the program does once it has an ML-DSA-44 key, with an Ed25519 note signature and an
ML-DSA-44 cosignature under its origin at timestamp 0.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from generator.core.cosigning_keys import Cosigner, write_cosigner
from generator.verifier import key_id, make_vkey, note_signature_line
from tests.support import spec_witness_client as c

WITNESS = "witness.example/w1"
KINDS = {"ed25519": ("ed25519",), "ml-dsa-44": ("ml-dsa-44",), "both": ("ml-dsa-44", "ed25519")}
LEAVES = [c.leaf_hash(b"entry %d" % i) for i in range(40)]
FORK = [*LEAVES[:3], c.leaf_hash(b"rewritten"), *LEAVES[4:]]  # the same log with entry 3 changed


def _seed(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


@dataclass
class Log:
    """A test log: its origin, its Ed25519 note key, its ML-DSA-44 key (or none) and its leaves."""

    origin: str
    ml_dsa: bool = True
    leaves: list[bytes] = field(default_factory=lambda: list(LEAVES))

    def __post_init__(self) -> None:
        self.ed = SigningKey(_seed("log ed25519 " + self.origin))
        self.ml = Cosigner(self.origin, "ml-dsa-44", _seed("log ml-dsa-44 " + self.origin)) if self.ml_dsa else None

    @property
    def vkeys(self) -> list[str]:
        """As the project writes them: what the witness's logs file lists."""
        return [make_vkey(self.origin, bytes(self.ed.verify_key)), *([self.ml.key.vkey] if self.ml else [])]

    @property
    def keys(self) -> list[c.PublicKey]:
        """As the client reads them."""
        return [c.parse_vkey(v) for v in self.vkeys]

    def tree(self, leaves: list[bytes] | None = None) -> c.Tree:
        return c.Tree(self.leaves if leaves is None else leaves)

    def note(
        self, size: int, leaves: list[bytes] | None = None, ed: SigningKey | None = None, extension: str = ""
    ) -> bytes:
        """The checkpoint of the first `size` leaves (and an extension line if given), signed as the
        program signs (Ed25519, then ML-DSA-44 at timestamp 0)."""
        root = self.tree(leaves).hash(0, size)
        text = f"{self.origin}\n{size}\n{base64.b64encode(root).decode()}\n" + (extension and extension + "\n")
        signer = ed or self.ed
        pk = bytes(signer.verify_key)
        lines = note_signature_line(self.origin, key_id(self.origin, pk), signer.sign(text.encode()).signature)
        if self.ml is not None:
            lines += self.ml.cosign(text, 0)
        return (text + "\n" + lines).encode()

    def prove(self, new: int) -> Callable[[int], list[bytes]]:
        return lambda old: self.tree().consistency_proof(old, new)


@dataclass
class Served:
    """A running witness: its URL, its keys as its startup lines print them, and the client's view of them."""

    url: str
    vkeys: list[str]
    proc: subprocess.Popen[str]

    @property
    def keys(self) -> list[c.PublicKey]:
        return [c.parse_vkey(v) for v in self.vkeys]

    @property
    def subtree_keys(self) -> list[c.PublicKey]:
        return [k for k in self.keys if k.type == c.COSIGNATURE_ML_DSA_44]


def _read_lines(proc: subprocess.Popen[str], count: int) -> list[str]:
    """The first `count` lines the process prints, waiting at most 30 s in all."""
    box: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for _ in range(count):
            box.append(proc.stdout.readline())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    return box


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[str, list[Log]], Served]]:
    """Start `transparency witness serve` on a port the system picks, with keys of the given kinds made
    from fixed seeds, for the given logs; every process started is stopped after the test."""
    started: list[subprocess.Popen[str]] = []

    def start(kinds: str, logs: list[Log]) -> Served:
        folder = tmp_path / f"witness-{len(started)}"
        args: list[str] = []
        for kind in KINDS[kinds]:
            key = folder / f"{kind}.key"
            write_cosigner(key, Cosigner(WITNESS, kind, _seed(f"witness {kind}")))
            args += ["--key", str(key)]
        logs_file = folder / "logs.txt"
        logs_file.write_text("".join(v + "\n" for log in logs for v in log.vkeys))
        args += ["--state", str(folder / "state"), "--logs", str(logs_file), "--listen", "127.0.0.1:0"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "generator", "witness", "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        started.append(proc)
        lines = _read_lines(proc, 1 + len(KINDS[kinds]))
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", lines[0]) if lines else None
        assert found and len(lines) == 1 + len(KINDS[kinds]), f"the witness did not start: {lines}"
        return Served(f"http://127.0.0.1:{found.group(1)}", [line.strip() for line in lines[1:]], proc)

    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=10)


def _cosigned(w: Served, log: Log, note: bytes, answer: c.Answer) -> dict[c.PublicKey, int | None]:
    """The witness's answer checked as the spec says a client checks it: one line a witness key, each a
    cosignature of the whole tree with a timestamp that is not 0; what opening the cosigned note verified."""
    lines = answer.lines()
    assert sorted((s.name, s.key_id) for s in lines) == sorted((k.name, k.key_id) for k in w.keys), lines
    cp, verified = c.open_checkpoint(c.cosigned_note(note, answer), [*log.keys, *w.keys])
    for key in w.keys:
        timestamp = verified[key]
        assert timestamp is not None and 0 < timestamp <= c.MAX_TIMESTAMP, "tlog-witness: the timestamp MUST NOT be 0"
    assert cp.text == c.split_note(note)[0]
    return verified


def _served(w: Served, client: c.WitnessClient, log: Log, size: int, returned: c.Answer) -> None:
    """The read API serves the checkpoint of `size` with the log's signatures the witness verified and
    the witness's lines as add-checkpoint returned them, all of which the client verifies."""
    answer = client.read_checkpoint(log.origin)
    assert answer.status == 200, answer
    cp, verified = c.open_checkpoint(answer.body, [*log.keys, *w.keys])
    assert cp.size == size and cp.root == log.tree().hash(0, size)
    assert set(verified) == {*log.keys, *w.keys}, "the log's signatures and the witness's cosignatures"
    served_lines = {s.line for s in c.split_note(answer.body)[1]}
    assert {s.line for s in returned.lines()} <= served_lines, "the lines add-checkpoint returned, as returned"


# ---------------------------------------------------------------- add-checkpoint and the read API


@pytest.mark.parametrize("kinds", list(KINDS))
def test_add_checkpoint_from_empty_then_from_an_older_size_then_past_a_stale_one(
    serve: Callable[[str, list[Log]], Served], kinds: str
) -> None:
    log = Log("example.com/interop-log")
    w = serve(kinds, [log])
    client = c.WitnessClient(w.url)
    assert client.read_checkpoint(log.origin).status == 404, "never cosigned: 404"

    first = client.add_checkpoint(0, [], log.note(5))
    _cosigned(w, log, log.note(5), first)
    _served(w, client, log, 5, first)

    second = client.add_checkpoint(5, log.tree().consistency_proof(5, 14), log.note(14))
    _cosigned(w, log, log.note(14), second)
    _served(w, client, log, 14, second)

    stale = client.add_checkpoint(5, log.tree().consistency_proof(5, 20), log.note(20))
    assert stale.tree_size() == 14, "409, text/x.tlog.size, the size the witness holds"
    answer, old = client.submit(log.note(20), log.prove(20), old_size=5)
    assert old == 14
    _cosigned(w, log, log.note(20), answer)
    _served(w, client, log, 20, answer)

    # A client that knows nothing asks from 0, learns 20 from the 409, and has the same tree cosigned again.
    fresh = c.WitnessClient(w.url)
    again, old = fresh.submit(log.note(20), log.prove(20))
    assert old == 20
    _cosigned(w, log, log.note(20), again)
    assert client.connections == 1 and fresh.connections == 1, "the connection is kept alive"
    client.close()
    fresh.close()


@pytest.mark.parametrize("kinds", ["ed25519", "ml-dsa-44"])
def test_add_checkpoint_refuses_with_the_status_tlog_witness_gives(
    serve: Callable[[str, list[Log]], Served], kinds: str
) -> None:
    log, other = Log("example.com/interop-log"), Log("example.com/second-log", ml_dsa=False)
    w = serve(kinds, [log, other])
    client = c.WitnessClient(w.url)
    accepted = client.add_checkpoint(0, [], log.note(8))
    _cosigned(w, log, log.note(8), accepted)
    tree, proof = log.tree(), log.tree().consistency_proof(8, 12)

    stranger = Log("example.com/unknown-log")
    assert client.add_checkpoint(0, [], stranger.note(3)).status == 404, "unknown origin"
    impostor = SigningKey(_seed("not the log's key"))
    unsigned = Log(log.origin, ml_dsa=False).note(12, ed=impostor)
    assert client.add_checkpoint(8, proof, unsigned).status == 403, "no signature by a trusted key"
    for line in (0, 1):  # the log's Ed25519 line, then its ML-DSA-44 line: a known key's failing signature
        assert client.add_checkpoint(8, proof, _tampered(log.note(12), line)).status == 403, line
    assert client.add_checkpoint(13, [], log.note(12)).status == 400, "old size above the checkpoint's"
    assert client.add_checkpoint(10, tree.consistency_proof(10, 12), log.note(12)).tree_size() == 8, "409: not 10"
    malformed = c.add_checkpoint_body(8, proof, log.note(12)).replace(b"old 8", b"old 08", 1)
    assert client.post("/add-checkpoint", malformed).status == 400, "a leading zero"
    bad = [*proof[:-1], bytes(32)]
    assert client.add_checkpoint(8, bad, log.note(12)).status == 422, "a proof that does not verify"
    assert client.add_checkpoint(8, proof, log.note(12, FORK)).status == 422, "a fork of the log"
    assert client.add_checkpoint(8, [], log.note(8, FORK)).status == 422, "the same size, another root"
    _served(w, client, log, 8, accepted)  # nothing refused moved the witness

    grown = client.add_checkpoint(8, proof, log.note(12))
    _cosigned(w, log, log.note(12), grown)
    assert tree.hash(0, 12) == c.parse_checkpoint(c.split_note(log.note(12))[0]).root

    # A log the witness has never cosigned: from size 0 the proof is empty, and a tree of 0 leaves has
    # the empty tree's root, which it cosigns (an ML-DSA-44 cosignature of [0, 0)).
    assert client.add_checkpoint(0, [tree.hash(0, 1)], other.note(3)).status == 422, "a proof from 0"
    assert client.add_checkpoint(0, [], _empty_with_root(other)).status == 422, "size 0, not the empty root"
    assert client.read_checkpoint(other.origin).status == 404
    assert client.add_checkpoint(2, tree.consistency_proof(2, 3), other.note(3)).tree_size() == 0, "409: never cosigned"
    empty = client.add_checkpoint(0, [], other.note(0))
    _cosigned(w, other, other.note(0), empty)
    client.close()


def _tampered(note: bytes, index: int) -> bytes:
    """The note with one byte of its index-th signature changed, its name and key ID kept."""
    text, lines = c.split_note(note)
    sig = lines[index]
    blob = bytearray(sig.blob)
    blob[-1] ^= 1
    lines[index] = c.parse_signature_lines(
        f"\u2014 {sig.name} {base64.b64encode(sig.key_id + bytes(blob)).decode()}\n"
    )[0]
    return (text + "\n" + "".join(s.line for s in lines)).encode()


def _empty_with_root(log: Log) -> bytes:
    """A checkpoint of size 0 whose root is not the empty tree's, validly signed by the log."""
    text = f"{log.origin}\n0\n{base64.b64encode(LEAVES[0]).decode()}\n"
    pk = bytes(log.ed.verify_key)
    line = note_signature_line(log.origin, key_id(log.origin, pk), log.ed.sign(text.encode()).signature)
    return (text + "\n" + line).encode()


def test_extension_lines_unknown_signatures_and_one_trusted_signature(
    serve: Callable[[str, list[Log]], Served],
) -> None:
    """An extension line is signed by an Ed25519 cosignature and not by an ML-DSA-44 one, which the client
    checks each on its own message; lines by keys the witness does not know are ignored (MUST), even one
    with the log's name and another key ID, in a note of 16 signatures (which signed-note says a verifier
    MUST accept, ML-DSA-44 lines of 3 kB included); one valid signature by a trusted key is enough."""
    log = Log("example.com/interop-log")
    w = serve("both", [log])
    client = c.WitnessClient(w.url)
    note = log.note(6, extension="example.com/extension line")
    text = c.split_note(note)[0]
    impostor = SigningKey(_seed("not the log's key"))
    pk = bytes(impostor.verify_key)
    odd = note_signature_line(log.origin, key_id(log.origin, pk), impostor.sign(b"anything").signature)
    others = [Cosigner(f"witness.example/other{i}", "ml-dsa-44", _seed(f"unknown witness {i}")) for i in range(13)]
    note += (odd + "".join(o.cosign(text, 1) for o in others)).encode()  # 16 lines: signed-note's MUST accept
    assert len(c.split_note(note)[1]) == 16
    answer = client.add_checkpoint(0, [], note)
    verified = _cosigned(w, log, note, answer)
    assert set(verified) == {*log.keys, *w.keys}
    served = client.read_checkpoint(log.origin)
    assert c.split_note(served.body)[0] == text
    assert set(c.open_checkpoint(served.body, [*log.keys, *w.keys])[1]) == {*log.keys, *w.keys}
    # "no signature from a trusted key" is what refuses: the log's ML-DSA-44 signature alone is one.
    text9, lines9 = c.split_note(log.note(9))
    ml_only = (text9 + "\n" + lines9[1].line).encode()
    assert lines9[1].key_id == log.keys[1].key_id
    answer = client.add_checkpoint(6, log.tree().consistency_proof(6, 9), ml_only)
    _cosigned(w, log, ml_only, answer)
    served = client.read_checkpoint(log.origin)
    assert set(c.open_checkpoint(served.body, [*log.keys, *w.keys])[1]) == {log.keys[1], *w.keys}
    client.close()


# ---------------------------------------------------------------- sign-subtree

SUBTREES = [(0, 20), (0, 16), (16, 20), (8, 16), (8, 12), (4, 8), (12, 13), (16, 18), (19, 20), (0, 1)]


@pytest.mark.parametrize("kinds", ["ml-dsa-44", "both"])
def test_sign_subtree_cosigns_subtrees_of_a_checkpoint_it_cosigned(
    serve: Callable[[str, list[Log]], Served], kinds: str
) -> None:
    log = Log("example.com/interop-log")
    w = serve(kinds, [log])
    client = c.WitnessClient(w.url)
    tree = log.tree()
    at14 = c.cosigned_note(log.note(14), client.add_checkpoint(0, [], log.note(14)))
    at20 = c.cosigned_note(log.note(20), client.add_checkpoint(14, tree.consistency_proof(14, 20), log.note(20)))
    reference = c.only_lines_of(at20, w.keys)  # "SHOULD only include signatures from the witness's key(s)"
    for start, end in SUBTREES:
        _subtree_signed(w, client, log, start, end, 20, reference)
    _subtree_signed(w, client, log, 8, 12, 20, at20)  # the log's lines may be there too
    _subtree_signed(w, client, log, 8, 12, 14, c.only_lines_of(at14, w.keys))  # an older cosigned checkpoint
    if kinds == "both":  # cosigned by the witness's Ed25519 key alone: still its own cosignature
        ed_only = c.only_lines_of(at20, [k for k in w.keys if k.type == c.COSIGNATURE_ED25519])
        _subtree_signed(w, client, log, 4, 8, 20, ed_only)
        proof = tree.subtree_consistency_proof(4, 8, 20)
        for line in (0, 1):  # one of its keys' lines fails: the note is malformed, whatever the other line
            answer = client.sign_subtree(4, 8, tree.hash(4, 8), proof, _tampered(reference, line))
            assert answer.status == 403, (line, answer)
    client.close()


def _subtree_signed(
    w: Served, client: c.WitnessClient, log: Log, start: int, end: int, size: int, reference: bytes
) -> None:
    tree = log.tree()
    h = tree.hash(start, end)
    answer = client.sign_subtree(start, end, h, tree.subtree_consistency_proof(start, end, size), reference)
    lines = answer.lines()
    assert len(lines) == len(w.subtree_keys), (start, end, lines)
    keys = {(k.name, k.key_id): k for k in w.subtree_keys}
    for sig in lines:
        c.verify_subtree_line(keys[(sig.name, sig.key_id)], log.origin, start, end, h, sig)


def test_sign_subtree_refuses_with_the_status_tlog_witness_gives(serve: Callable[[str, list[Log]], Served]) -> None:
    log, other = Log("example.com/interop-log"), Log("example.com/second-log", ml_dsa=False)
    w = serve("ml-dsa-44", [log, other])
    client = c.WitnessClient(w.url)
    tree = log.tree()
    reference = c.only_lines_of(c.cosigned_note(log.note(20), client.add_checkpoint(0, [], log.note(20))), w.keys)

    def status(start: int, end: int, proof: list[bytes], note: bytes = reference, h: bytes | None = None) -> int:
        return client.sign_subtree(start, end, tree.hash(start, end) if h is None else h, proof, note).status

    good = tree.subtree_consistency_proof(8, 12, 20)
    assert status(8, 12, good) == 200
    assert status(3, 5, []) == 400, "not a subtree: 3 is not a multiple of 2"
    assert status(4, 4, [], h=c.EMPTY_HASH) == 400, "draft-03: a subtree is not empty"
    assert status(16, 24, tree.subtree_consistency_proof(16, 24, 24)) == 400, "ends beyond the checkpoint"
    malformed = c.sign_subtree_body(8, 12, tree.hash(8, 12), good, reference).replace(b"subtree 8", b"subtree 08", 1)
    assert client.post("/sign-subtree", malformed).status == 400, "a leading zero"
    assert status(8, 12, [*good[:-1], bytes(32)]) == 422, "a proof that does not verify"
    assert status(8, 12, good, h=tree.hash(8, 13)) == 422, "another subtree's hash"
    assert status(8, 12, tree.subtree_consistency_proof(8, 12, 14)) == 422, "a proof to another size"
    assert status(8, 12, good, note=c.only_lines_of(log.note(20), log.keys)) == 403, "not cosigned by the witness"
    assert status(8, 12, good, note=_tampered(reference, 0)) == 403, "a cosignature that does not verify"
    foreign = Cosigner(WITNESS, "ml-dsa-44", _seed("another witness"))
    text = c.split_note(reference)[0]
    assert status(8, 12, good, note=(text + "\n" + foreign.cosign(text, 7)).encode()) == 403, "another key's"
    forked_text = c.split_note(log.note(20, FORK))[0]
    mine = c.split_note(reference)[1]
    copied = (forked_text + "\n" + "".join(s.line for s in mine)).encode()
    assert status(8, 12, good, note=copied) == 403, "the witness's line moved onto another tree"
    stranger = Log("example.com/unknown-log")
    assert status(8, 12, good, note=stranger.note(20)) == 404, "unknown origin"
    client.close()


def test_an_ed25519_witness_offers_no_sign_subtree(serve: Callable[[str, list[Log]], Served]) -> None:
    """sign-subtree is OPTIONAL, and an Ed25519 cosignature cannot sign a subtree: the path is not there."""
    log = Log("example.com/interop-log")
    w = serve("ed25519", [log])
    client = c.WitnessClient(w.url)
    reference = c.cosigned_note(log.note(20), client.add_checkpoint(0, [], log.note(20)))
    tree = log.tree()
    answer = client.sign_subtree(8, 12, tree.hash(8, 12), tree.subtree_consistency_proof(8, 12, 20), reference)
    assert answer.status == 404
    client.close()
