"""A drand-style beacon of the tests' own (scheme bls-unchained-g1-rfc9380), signed with PyPI
`py_ecc`: rounds the tests can make for any time, signed by a key only they hold, so that a
draw's rules are tested without the network and with signatures made by another implementation
than the verifier's."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from py_ecc.bls.hash_to_curve import hash_to_G1
from py_ecc.bls.point_compression import compress_G1, compress_G2
from py_ecc.optimized_bls12_381 import G2, multiply

DST = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"
GENESIS = 1767225600  # 2026-01-01T00:00:00Z
PERIOD = 3


@dataclass(frozen=True)
class OwnBeacon:
    """A beacon whose secret scalar is derived from `seed`."""

    seed: bytes = b"tests beacon"
    name: str = "Tests beacon"
    genesis_time: int = GENESIS
    period: int = PERIOD

    @cached_property
    def secret(self) -> int:
        return int.from_bytes(hashlib.sha256(self.seed).digest(), "big") % (2**255 - 19) + 1

    @cached_property
    def public_key(self) -> bytes:
        z1, z2 = compress_G2(multiply(G2, self.secret))
        return z1.to_bytes(48, "big") + z2.to_bytes(48, "big")

    @property
    def chain_hash(self) -> str:
        return hashlib.sha256(b"tests chain " + self.public_key).hexdigest()

    def pin(self) -> dict[str, Any]:
        """The methodology's `beacon` member for this beacon."""
        return {
            "name": self.name,
            "scheme": "bls-unchained-g1-rfc9380",
            "chain_hash": self.chain_hash,
            "public_key": self.public_key.hex(),
            "genesis_time": self.genesis_time,
            "period": self.period,
        }

    def signature(self, round_number: int) -> str:
        message = hashlib.sha256(round_number.to_bytes(8, "big")).digest()
        point = multiply(hash_to_G1(message, DST, hashlib.sha256), self.secret)
        return compress_G1(point).to_bytes(48, "big").hex()

    def round(self, round_number: int) -> dict[str, Any]:
        """The round as drand's HTTP API serves it."""
        sig = self.signature(round_number)
        randomness = hashlib.sha256(bytes.fromhex(sig)).hexdigest()
        return {"round": round_number, "randomness": randomness, "signature": sig}

    def round_at(self, unix_time: int) -> int:
        """The first round published at or after `unix_time`."""
        return 1 + max(0, -(-(unix_time - self.genesis_time) // self.period))

    def write_round(self, folder: Path, round_number: int) -> Path:
        path = folder / f"{round_number}.json"
        path.write_text(json.dumps(self.round(round_number)) + "\n")
        return path


class Relays:
    """Relays of a beacon's HTTP API on loopback, each answering as it is told: "ok" (the round,
    signed), "500", "forged" (a round signed by another key), "hang" (bounded), "other-round"."""

    def __init__(self, beacon: OwnBeacon, behaviours: list[str]) -> None:
        import http.server
        import threading

        self.requests: list[str] = []
        self._servers = []
        self.urls = []
        for behaviour in behaviours:
            handler = self._handler(beacon, behaviour)
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self._servers.append(server)
            self.urls.append(f"http://127.0.0.1:{server.server_address[1]}")

    def _handler(self, beacon: OwnBeacon, behaviour: str) -> Any:
        import http.server
        import time

        relays = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                relays.requests.append(self.path)
                parts = self.path.strip("/").split("/")
                if behaviour == "500" or len(parts) != 3 or parts[1] != "public":
                    self.send_response(500)
                    self.end_headers()
                    return
                if behaviour == "hang":
                    time.sleep(2)  # the client has given up and closed by then: what follows may meet a closed socket
                number = int(parts[2]) + (1 if behaviour == "other-round" else 0)
                signer = OwnBeacon(seed=b"a liar") if behaviour == "forged" else beacon
                body = json.dumps(signer.round(number)).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()


def drawn_methodology_file(
    folder: Path, beacon: OwnBeacon, schedule: dict[str, Any] | None = None, required: bool = True
) -> Path:
    """Methodology 2026.2: the tests' 2026.1 with `beacon` pinned and draws asked for, as a file."""
    from tests.support.programs import METHODOLOGY

    params = json.loads(METHODOLOGY[0].read_text())
    params |= {"version": "2026.2", "v": 2, "beacon": beacon.pin()}
    params["draws"] = {"secret_gate_runs": "required" if required else "allowed"}
    if schedule is not None:
        params["draws"]["retirements"] = schedule
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2026.2.json"
    path.write_text(json.dumps(params))
    return path


def drawn_spec(
    paths: Any, beacon: OwnBeacon, round_number: int, count: int = 10, run_id: str = "run-1"
) -> dict[str, Any]:
    """A v2 run spec on gate b that draws `count` items with `round_number`, pinning 2026.2."""
    from tests.support.runs import methodology_pin, run_spec

    spec = run_spec(paths, run_id, "b", [], methodology=methodology_pin(paths, "2026.2"))
    del spec["items"]
    return spec | {"v": 2, "draw": {"beacon": beacon.chain_hash, "round": round_number, "count": count}}
