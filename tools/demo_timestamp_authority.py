"""The demo's timestamp authority: OpenSSL's RFC 3161 server (`openssl ts -reply`), with its CA and
key in the repository (PRIVATE/demo-tsa/), serving on 127.0.0.1:PORT while the demo is made.

A real program lists authorities it does not control. The demo's is run by the demo's own
script, so its tokens prove nothing: they show what a timestamped release looks like, and they
are real tokens, which `openssl ts -verify` and the verifier check.

    PYTHONPATH=. .venv/bin/python tools/demo_timestamp_authority.py list PORT    # the authority list
    PYTHONPATH=. .venv/bin/python tools/demo_timestamp_authority.py serve PORT   # until killed
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.support.timestamp_authority import kept_authority, serving

FOLDER = Path(__file__).resolve().parent.parent / "data" / "private" / "demo-tsa"
NAME = "demo-tsa"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("list", "serve"):
        print(__doc__, file=sys.stderr)
        return 2
    port = int(argv[1])
    tsa = kept_authority(FOLDER)
    if argv[0] == "list":
        url = f"http://127.0.0.1:{port}/tsa"
        doc = {
            "type": "timestamp-authorities",
            "v": 1,
            "authorities": [{"name": NAME, "url": url, "certificate": tsa.certificate_pem.decode()}],
        }
        print(json.dumps(doc, indent=1))
        return 0
    with serving(tsa, port):
        print(f"demo timestamp authority on 127.0.0.1:{port}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
