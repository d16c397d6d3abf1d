"""The demo's randomness beacon: a drand-style chain (scheme bls-unchained-g1-rfc9380, a round every
3 s from 2026-01-01T00:00:00Z) whose key is in the repository, PRIVATE/demo-beacon/beacon.key.

A real program pins drand's quicknet chain and fetches its rounds ('transparency beacon fetch').
The demo cannot: its events are dated in a year whose rounds no machine here can fetch, and a
round must come after the registration it follows. So the demo pins this stand-in, which signs
exactly as quicknet does (RFC 9380 hash to G1, BLS12-381, signatures on G1), with py_ecc; the
verifier checks its rounds with the same code as quicknet's. Like every key of the demo, its key
is published, so its rounds prove nothing.

    PYTHONPATH=. .venv/bin/python tools/make_demo_beacon.py pin            # the methodology's "beacon"
    PYTHONPATH=. .venv/bin/python tools/make_demo_beacon.py at TIME        # the first round at or after TIME
    PYTHONPATH=. .venv/bin/python tools/make_demo_beacon.py round N [DIR]  # writes DIR/N.json (default data/beacon)
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sys
from pathlib import Path

from generator.verifier import unix_time
from generator.verifier.crypto.drand import drand_chain_hash
from tests.support.beacon import OwnBeacon

REPO = Path(__file__).resolve().parent.parent
KEY = REPO / "data" / "private" / "demo-beacon" / "beacon.key"
GENESIS = 1767225600  # 2026-01-01T00:00:00Z
PERIOD = 3
BEACON_ID = "demo"


def demo_beacon() -> OwnBeacon:
    if not KEY.exists():
        KEY.parent.mkdir(parents=True, exist_ok=True)
        KEY.write_text(secrets.token_hex(32) + "\n")
    seed = bytes.fromhex(KEY.read_text().strip())
    return OwnBeacon(seed=seed, name="Demo beacon (a stand-in for drand quicknet)", genesis_time=GENESIS, period=PERIOD)


def pin(beacon: OwnBeacon) -> dict[str, object]:
    # The chain hash as drand computes one, over the demo chain's own information.
    group = hashlib.sha256(b"demo beacon group " + beacon.public_key).digest()
    chain = drand_chain_hash(beacon.public_key, PERIOD, GENESIS, group, BEACON_ID).hex()
    return beacon.pin() | {"chain_hash": chain}


def main(argv: list[str]) -> int:
    beacon = demo_beacon()
    if argv[:1] == ["pin"]:
        print(json.dumps(pin(beacon), indent=1))
    elif argv[:1] == ["at"] and len(argv) == 2:
        print(beacon.round_at(unix_time(argv[1])))
    elif argv[:1] == ["round"] and len(argv) in (2, 3):
        folder = Path(argv[2]) if len(argv) == 3 else REPO / "data" / "beacon"
        folder.mkdir(parents=True, exist_ok=True)
        print(beacon.write_round(folder, int(argv[1])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
