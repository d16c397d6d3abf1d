#!/bin/sh
# The demo's runs from the other harnesses (make-demo.sh runs this last): Orca Parser measured with
# lm-evaluation-harness and Heron Agent with Harbor, both on public Gate A, each imported from what
# the harness itself wrote and certified with those files bound by hash.
#
# data/demo/lm-eval/orca-parser-3.1 was written by lm-eval 0.4.13 (python tools/make_lm_eval_fixture.py
# orca-a-1 data/demo/lm-eval, in lm-eval's own environment: make harnesses); its mapping reads each
# text field's similarity and the judge's labels from the task's metrics. data/demo/harbor/heron-a-1
# was written by Harbor 0.25.0 (python tools/make_harbor_fixture.py data/demo/harbor, Python 3.12):
# a-004's environment failed (infra_error), and the job was interrupted before a-006 (not_run).
# heron-a-1's certificate is revoked last.
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
S=data/demo/run-specs
R=data/private/results

$T register $S/orca-a-1.json --at 2026-12-05T12:00:00Z
$T register $S/heron-a-1.json --at 2026-12-05T12:30:00Z
$T results from-lm-eval data/demo/lm-eval/orca-parser-3.1 --run orca-a-1 \
  --map data/demo/lm-eval/orca-a-1.map.yaml --out $R/orca-a-1.json
$T results from-harbor data/demo/harbor/heron-a-1 --run heron-a-1 \
  --map data/demo/harbor/heron-a-1.map.yaml --out $R/heron-a-1.json
$T certify $R/orca-a-1.json --at 2026-12-05T14:00:00Z
$T certify $R/heron-a-1.json --at 2026-12-05T14:10:00Z

# A certificate revoked after its exports were published: its verifiable credential's bit is set in
# the status list, and a wallet reports it revoked (the demo's first revoked certificate was signed by
# a key revoked since, whose credentials no wallet accepts at all).
$T revoke heron-a-1 \
  --reason "Demo: the agent's sandbox image was found to hold the tasks' expected answers; the certificate is withdrawn." \
  --at 2026-12-05T15:00:00Z

# The build's own demo witness cosigns the grown log's checkpoint (the demo only: its witness key is
# in the repository), as every build of the demo does.
$T build --offline
