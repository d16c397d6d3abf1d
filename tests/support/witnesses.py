"""Witnesses made through the real commands (`transparency witness key`, `witness cosign`), each with its key,
state and list of logs in a folder, and trust-policy files naming them; and, for the witness's own tests, a log
(its key, its leaves, a fork of them) whose checkpoints and add-checkpoint requests are made with real signatures,
a clock to inject, and a witness served over HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import Message
from pathlib import Path

import pytest
from click.testing import CliRunner
from nacl.signing import SigningKey

from generator.cli import main
from generator.core.cosigning_keys import Cosigner
from generator.core.proofs import consistency_proof
from generator.program.datadir import Paths
from generator.verifier import VerifierKey, checkpoint_text, key_id, leaf_hash, merkle_root, note_signature_line
from generator.witness.server import Witness


def cli(*argv: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in argv], prog_name="transparency")
    return result.exit_code, result.output


class WitnessFiles:
    def __init__(self, root: Path, name: str, log_vkey: str, kind: str = "ml-dsa-44") -> None:
        self.name = name
        self.key = root / f"{name}.key"
        self.state = root / f"{name}-state"
        self.logs = root / f"{name}-logs.txt"
        self.logs.write_text(f"# the program's log\n{log_vkey}\n")
        code, out = cli("witness", "key", name, "--key", self.key, "--type", kind)
        assert code == 0, out
        self.vkey = out.strip()

    def args(self) -> list[str | Path]:
        return ["--key", self.key, "--name", self.name, "--state", self.state, "--logs", self.logs]

    def cosign(self, site: Path, *extra: str | Path) -> tuple[int, str]:
        return cli("witness", "cosign", site, *self.args(), *extra)


def write_policy(
    paths: Paths, log_vkey: str, witnesses: list[tuple[str, str, str | None]], quorum: str, name: str = "policy.txt"
) -> Path:
    """A policy file: the program's own (data/policy.txt) by default, or one beside it."""
    lines = [f"log {log_vkey}"]
    lines += [f"witness {name} {vkey}" + (f" {url}" if url else "") for name, vkey, url in witnesses]
    if quorum.startswith("group"):
        lines.append(quorum)
        quorum = quorum.split()[1]
    lines.append(f"quorum {quorum}")
    path = paths.data / name
    path.write_text("\n".join(lines) + "\n")
    return path


def started_witness(argv: list[str | Path], key_lines: int = 0) -> tuple[subprocess.Popen[str], str, list[str]]:
    """`transparency witness serve ARGV` as a separate process on a port the system picks (port 0, so that no two
    tests, nor two workers of a parallel run, can want the same one): the process, the URL its first line gives, and
    the `key_lines` lines that follow it (the witness's vkeys)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "witness", "serve", *map(str, argv), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    box: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        box.extend(proc.stdout.readline() for _ in range(1 + key_lines))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", box[0]) if len(box) == 1 + key_lines else None
    if not found:
        proc.kill()
        pytest.fail(f"the witness did not start: {box}")
    return proc, f"http://127.0.0.1:{found.group(1)}", [line.strip() for line in box[1:]]


@contextmanager
def witness_process(argv: list[str | Path], key_lines: int = 0) -> Iterator[tuple[str, list[str]]]:
    """started_witness() for the length of a `with`: the URL and the vkeys it printed."""
    proc, url, keys = started_witness(argv, key_lines)
    try:
        yield url, keys
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ---------------------------------------------------------------- a log and its requests, for the witness's tests

ORIGIN = "example.com/test-log"
LOG_SK = SigningKey(hashlib.sha256(b"test log").digest())
LOG_PK = bytes(LOG_SK.verify_key)
LOG_KEY = VerifierKey(ORIGIN, key_id(ORIGIN, LOG_PK), LOG_PK)
WITNESS_NAME = "witness.example/w1"
WITNESS_SEED = hashlib.sha256(b"test witness").digest()
LEAVES = [leaf_hash(b"entry %d" % i) for i in range(40)]
FORK = [*LEAVES[:3], leaf_hash(b"rewritten"), *LEAVES[4:]]  # the same log, with entry 3 changed
START = 1_700_000_000


def ml_dsa_cosigner(name: str, label: str) -> Cosigner:
    """An ML-DSA-44 cosigner whose seed is derived from `label`: the same key in every run."""
    return Cosigner(name, "ml-dsa-44", hashlib.sha256(label.encode()).digest())


def note(
    size: int, leaves: list[bytes] = LEAVES, sk: SigningKey = LOG_SK, origin: str = ORIGIN, root: bytes | None = None
) -> bytes:
    """The log's checkpoint of its first `size` leaves, signed by `sk` as a note key of `origin`."""
    text = checkpoint_text(origin, size, merkle_root(leaves[:size]) if root is None else root)
    pk = bytes(sk.verify_key)
    return (text + "\n" + note_signature_line(origin, key_id(origin, pk), sk.sign(text.encode()).signature)).encode()


def request(old: int, proof: list[bytes], checkpoint: bytes) -> bytes:
    """An add-checkpoint body."""
    return f"old {old}\n".encode() + b"".join(base64.b64encode(h) + b"\n" for h in proof) + b"\n" + checkpoint


def grow_request(old: int, new: int, leaves: list[bytes] = LEAVES) -> bytes:
    """An add-checkpoint body from size `old` to the checkpoint of size `new`, with its proof."""
    return request(old, consistency_proof(leaves[:new], old), note(new, leaves))


class Clock:
    """A clock that ticks one second each time it is read, from START."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> int:
        self.now += 1
        return self.now


@contextmanager
def serving(witness: Witness) -> Iterator[str]:
    """The witness's HTTP server on a free loopback port, in a thread: its URL."""
    srv = witness.make_server("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


def http_request(url: str, body: bytes | None = None, method: str = "POST") -> tuple[int, Message, bytes]:
    """(status, headers, body) of one request, whatever its status."""
    req = urllib.request.Request(url, data=body if method == "POST" else None, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers, e.read()
