#!/bin/sh
# How the demo program in data/ was made, command by command.
#
# Running it again makes a *new* program: a new key and new salts, so every commitment and
# signature changes. It refuses to run over an existing program; to start over, remove
# data/program.yaml, data/keys.json, data/ledger.jsonl, data/methodology, data/reveals,
# data/runs, data/certificates, data/policy.txt, data/cosignatures, data/private/signing.key,
# data/private/retired-keys, data/private/demo-witness, data/private/sealed,
# data/private/certificates, data/private/agreement and data/private/results/quill-a-3.json,
# orca-a-1.json, heron-a-1.json and kestrel-b-1.json, data/beacon, data/timestamps,
# data/timestamp-authorities.json, data/private/demo-beacon, data/private/demo-tsa and
# data/private/ml-dsa-44.key first.
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
PY="${PYTHON:-.venv/bin/python}"

# The demo's own methodology (2026.1, for its customer-message extraction task), given to init:
# without --methodology init publishes none.
$T init \
  --name "Customer Message Extraction Certification (demo)" \
  --origin "transparency.example.org/extraction" \
  --gate "a:Gate A:public" --gate "b:Gate B:secret" \
  --methodology generator/defaults/methodology.json --prose generator/defaults/methodology.md \
  --description "This program certifies AI systems that turn customer messages for a bank and an online shop into structured records: account numbers, transfer amounts, product defects, delivery addresses, summaries and tags. Systems are tested against a pool of secret items; the public Gate A shows what the items look like. *This is demonstration data: the program, its items and its key are invented.*" \
  --at 2026-01-05T09:00:00Z

# Item sources live in data/private/items (kept in the repository for the demo only).
$T commit --at 2026-01-12T10:00:00Z

# Retire Gate B items in order, with the dates and reasons of data/private/retirements.yaml.
$PY -c '
import sys, yaml
for r in yaml.safe_load(open("data/private/retirements.yaml"))["retire"]:
    sys.stdout.write("\t".join((r["id"], r["at"], r["note"])) + "\n")
' | while IFS="$(printf '\t')" read -r id at note; do
  $T retire "$id" --note "$note" --at "$at"
done

# Runs and certificates: register, certify, and retire items after the runs that used them.
sh data/make-demo-runs.sh

$T build --offline

# Format v2: a revoked certificate, a key rotation and revocation, a witness cosignature.
sh data/make-demo-history.sh

# Format v2: a run imported from an Inspect log, its evidence, a retry, an exclusion, and the
# judge measured against blind human labels.
sh data/make-demo-evidence.sh

# Format v2: runs imported from lm-evaluation-harness and from Harbor.
sh data/make-demo-harnesses.sh

# Format v2: a run whose items a beacon drew, a retirement drawn on schedule, timestamped releases.
sh data/make-demo-draws.sh

# Format v2: the log's ML-DSA-44 key beside its Ed25519 key, and a witness cosigning with both.
sh data/make-demo-pq.sh
