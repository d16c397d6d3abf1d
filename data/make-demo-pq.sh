#!/bin/sh
# Format v2: signatures for the next decade. The log gets an ML-DSA-44 key beside its Ed25519 key
# (every later checkpoint carries both signatures), the demo witness an ML-DSA-44 key beside its
# Ed25519 one, and the program's trust policy needs both witness keys. Like every demo key, the
# private halves are published here: the signatures prove nothing.
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
PY="${PYTHON:-.venv/bin/python}"
export PYTHONPATH=.
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# The log's ML-DSA-44 key: a key-addition event, PRIVATE/ml-dsa-44.key, and a second log line in
# data/policy.txt, in one transaction.
$T key add-ml-dsa --at "$(now)"

# The demo witness's second key, of the type C2SP's witness protocol recommends.
W=data/private/demo-witness
if [ ! -f "$W/witness-ml-dsa.key" ]; then
  $T witness key witness.demo.example.org --key "$W/witness-ml-dsa.key" --type ml-dsa-44 > "$W/witness-ml-dsa.vkey"
fi

# The policy needs both of the witness's keys: its Ed25519 and its ML-DSA-44 cosignature.
$PY - "$W/witness-ml-dsa.vkey" <<'PY'
import sys
vkey = open(sys.argv[1]).read().strip()
lines = open("data/policy.txt").read().splitlines()
out = []
for line in lines:
    if line == "quorum demo-witness":
        out += [
            f"witness demo-witness-ml-dsa {vkey}",
            "group demo-witnesses all demo-witness demo-witness-ml-dsa",
            "quorum demo-witnesses",
        ]
    else:
        out.append(line)
open("data/policy.txt", "w").write("\n".join(out) + "\n")
PY

# The build cosigns as the demo witness, with both keys, and says so; the demo's timestamp
# authority (data/make-demo-draws.sh) stamps the release.
PORT=48318
$PY tools/demo_timestamp_authority.py serve $PORT &
TSA=$!
trap 'kill $TSA' EXIT
sleep 1
$T build
