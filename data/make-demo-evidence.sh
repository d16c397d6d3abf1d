#!/bin/sh
# The demo's evidence (format v2, make-demo.sh runs this last): Quill Extract's third run on Gate A,
# imported from a real Inspect log, certified with the log bound by hash, and its judge measured
# against blind human labels.
#
# data/demo/inspect/quill-a-3.eval was made by Inspect itself, with its offline mock model
# (python tools/make_inspect_fixture.py data/demo/inspect/quill-a-3.eval): a-004's first attempt
# failed on a dropped connection and Inspect retried it; a-006 is set aside under the run spec's
# exclusion rule by the mapping (data/demo/inspect/quill-a-3.map.yaml); a judge scorer gives each
# item an ordinal label on two rubric dimensions. Two labellers labelled the outputs with the same
# rubric without seeing those labels (data/demo/agreement/quill-a-3-panel.json); their label set is
# committed before the certificate discloses the judge's.
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
W=data/private/demo-witness

$T results from-inspect data/demo/inspect/quill-a-3.eval --run quill-a-3 \
  --map data/demo/inspect/quill-a-3.map.yaml --out data/private/results/quill-a-3.json
$T agreement register data/demo/agreement/quill-a-3-panel.json --run quill-a-3 --id quill-a-3-panel \
  --at 2026-11-30T12:00:00Z
$T certify data/private/results/quill-a-3.json --at 2026-12-01T09:00:00Z
$T agreement report quill-a-3-panel

# The witness cosigns the grown log, as it did the last one (make-demo-history.sh).
$T build --offline
SIZE=$(sed -n 2p public/ledger/checkpoint)
rm -f "data/cosignatures/$SIZE.txt"
$T witness cosign public --key "$W/witness.key" --name witness.demo.example.org --state "$W/state" \
  --logs "$W/logs.txt" --rules --out "data/cosignatures/$SIZE.txt"
$T build --offline
