"""Witnesses as `transparency monitor --witnesses` reads them: a test-only HTTP server on the loopback
that serves fixed checkpoint notes at the monitoring path of c2sp.org/tlog-witness
(`/<hex SHA-256 of the origin>/checkpoint`, 404 for anything else), cosigners made from fixed seeds,
checkpoints the log signs (two inconsistent ones included: a real witness never cosigns a fork, so
the test makes the log sign both and cosigns them itself), policy files naming them, and the monitor
run through its real command; and the real witness, `transparency witness serve`, as a process of its own."""

from __future__ import annotations

import hashlib
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner, Result

from generator.cli import main
from generator.core.cosigning_keys import Cosigner
from generator.core.signing_key import Signer, load_key
from generator.verifier import ED25519, checkpoint_text


def cosigner(name: str, kind: str = ED25519) -> Cosigner:
    """A witness's key, the same on every run: its seed is the hash of its name."""
    return Cosigner(name, kind, hashlib.sha256(f"test witness {name} {kind}".encode()).digest())


def log_signer(origin: str) -> Signer:
    """A log's key, the same on every run."""
    return Signer(origin, hashlib.sha256(f"test log {origin}".encode()).digest())


def signed_checkpoint(key: Path | Signer, origin: str, size: int, root: bytes) -> bytes:
    """A checkpoint of any tree, signed with the log's own key (a key file, or a Signer): how a log
    forks."""
    signer = key if isinstance(key, Signer) else load_key(key)
    return signer.sign_note(checkpoint_text(origin, size, root))


def cosigned(note: bytes, witness: Cosigner, timestamp: int) -> bytes:
    """`note` with `witness`'s cosignature made at `timestamp`, as the witness would serve it."""
    text = note.decode("utf-8").split("\n\n", 1)[0] + "\n"
    return note + witness.cosign(text, timestamp).encode("utf-8")


def origin_path(origin: str) -> str:
    return hashlib.sha256(origin.encode("utf-8")).hexdigest() + "/checkpoint"


@dataclass
class ViewServer:
    url: str
    requests: list[str] = field(default_factory=list)  # the paths asked for, in order


@contextmanager
def serve_views(notes: dict[str, bytes]) -> Iterator[ViewServer]:
    """Serve each origin's note at `/<hex SHA-256 of the origin>/checkpoint` on
    http://127.0.0.1:PORT until the block ends; any other path is 404."""
    by_path = {"/" + origin_path(origin): note for origin, note in notes.items()}
    served = ViewServer("")
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with lock:
                served.requests.append(self.path)
            body = by_path.get(self.path)
            try:
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client that gave up on a large answer, as the monitor does

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def write_policy(path: Path, log_vkey: str, witnesses: list[tuple[str, Cosigner, str | None]]) -> Path:
    """A policy naming the log and each (policy name, key, URL or None); its quorum is none, since
    the monitor reads the witnesses' own checkpoints, not the site's cosignatures."""
    lines = [f"log {log_vkey}"]
    lines += [f"witness {name} {w.key.vkey}" + (f" {url}" if url else "") for name, w, url in witnesses]
    path.write_text("\n".join([*lines, "quorum none"]) + "\n")
    return path


def run_monitor(*args: str | Path, code: int = 0) -> Result:
    """`transparency monitor ARGS` through the real command, which must exit with `code`."""
    argv = ["monitor", *map(str, args)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code == code, (
        f"transparency {' '.join(argv)}: exit {result.exit_code}, wanted {code}\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}\nexception: {result.exception!r}"
    )
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result


@contextmanager
def witness_process(args: list[str | Path]) -> Iterator[str]:
    """`transparency witness serve ARGS` as a separate process on a port the system picks: the URL
    its first line gives, until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "witness", "serve", *map(str, args), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(30)
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", first[0]) if first else None
        assert found, f"the witness did not start: {first}"
        yield f"http://127.0.0.1:{found.group(1)}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
