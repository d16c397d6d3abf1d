#!/bin/sh
# The demo's format-v2 history, after make-demo.sh: a revoked certificate, a key rotation with
# its hand-over checkpoint, the old key's revocation, and a witness cosignature under the
# program's trust policy. The demo witness's key is published here like the demo signing key:
# its cosignature, like every demo signature, proves nothing.
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
PY="${PYTHON:-.venv/bin/python}"

$T revoke ledgerlens-a-1 --at 2026-11-29T09:00:00Z \
  --reason "Demo: the subject's vendor reported that the evaluated build shipped with a debugging flag that changed its output format; the certificate is withdrawn."

OLD=$($PY -c 'import json; print([k["vkey"] for k in json.load(open("data/keys.json"))["keys"] if k["status"] == "active"][0])')
$T key rotate --at 2026-11-30T09:00:00Z
$T build --offline   # signs the hand-over checkpoint with both keys, archived for good
$T key revoke "$OLD" --at 2026-11-30T10:00:00Z --compromised-at 2026-11-30T09:30:00Z \
  --reason "Demo: this key's private half is published in the repository, as every demo key is."

# The witness: its own key and state, apart from the program (here, for the demo, beside it).
W=data/private/demo-witness
if [ ! -f "$W/witness.key" ]; then
  mkdir -p "$W"
  $T witness key witness.demo.example.org --key "$W/witness.key" --type ed25519 > "$W/witness.vkey"
fi
NEW=$($PY -c 'import json; print([k["vkey"] for k in json.load(open("data/keys.json"))["keys"] if k["status"] == "active"][0])')
printf '%s\n' "$NEW" > "$W/logs.txt"
{
  echo "# The program's trust policy (C2SP tlog-policy): verify.py --policy ledger/policy.txt"
  echo "log $NEW"
  echo "witness demo-witness $(cat "$W/witness.vkey")"
  echo "quorum demo-witness"
} > data/policy.txt
$T build --offline
SIZE=$(sed -n 2p public/ledger/checkpoint)
rm -f "data/cosignatures/$SIZE.txt"
$T witness cosign public --key "$W/witness.key" --name witness.demo.example.org --state "$W/state" \
  --logs "$W/logs.txt" --rules --out "data/cosignatures/$SIZE.txt"
$T build --offline
