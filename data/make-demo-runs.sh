#!/bin/sh
# The demo's runs and certificates, command by command (make-demo.sh runs this last).
#
# Run specs are public inputs (data/demo/run-specs); the evaluator's results hold the outputs
# for sealed items and stay private (data/private/results, kept in the repository for the demo
# only). Together they cover every verdict, score rule and non-scored status, a subject with
# several attempts, open and sealed results, and items retired after the runs that used them.
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
S=data/demo/run-specs
R=data/private/results

# Gate A (public): results are open, grader records are published with the certificates.
$T register $S/ledgerlens-a-1.json --at 2026-11-16T09:00:00Z
$T register $S/quill-a-1.json --at 2026-11-16T10:00:00Z
$T certify $R/ledgerlens-a-1.json --at 2026-11-17T09:00:00Z --expires-at 2027-11-17T09:00:00Z
$T certify $R/quill-a-1.json --at 2026-11-17T10:00:00Z

# Gate B (secret): results are sealed until their items are retired.
$T register $S/ledgerlens-b-1.json --at 2026-11-18T09:00:00Z
$T register $S/orca-b-1.json --at 2026-11-18T11:00:00Z
$T certify $R/ledgerlens-b-1.json --at 2026-11-20T09:00:00Z --expires-at 2027-11-20T09:00:00Z
$T certify $R/orca-b-1.json --at 2026-11-20T11:00:00Z

# Quill Extract's second attempt on Gate A, chained to its first.
$T register $S/quill-a-2.json --at 2026-11-23T09:00:00Z
$T certify $R/quill-a-2.json --at 2026-11-24T09:00:00Z

# Retiring items publishes the details of the certificates that used them; once all ten items
# of LedgerLens's Gate B run are revealed, its grader record is published too.
$T retire b-0002 b-0004 b-0005 b-0006 b-0008 b-0009 b-0010 b-0012 b-0014 b-0015 \
  --note "Scheduled rotation after the November 2026 cycle: every item of the first secret-gate run is retired so that its certificate can be rechecked in full." \
  --at 2026-11-26T09:00:00Z
$T retire b-0021 \
  --note "Suspected contamination: a freezer-temperature complaint with the same model number and readings was posted on a public support forum." \
  --at 2026-11-27T14:00:00Z

# Quill Extract's third attempt: registered here, decided from its Inspect log by
# make-demo-evidence.sh.
$T register $S/quill-a-3.json --at 2026-11-28T09:00:00Z
