#!/bin/sh
# The demo's draws and timestamps (make-demo.sh runs this after make-demo-harnesses.sh).
#
# Methodology 2026.2 pins a randomness beacon: every run on the secret gate must draw its items,
# and two sealed items are retired by draw four minutes after its publication. Kestrel Extract's
# run names a round after its registration; once the round is out its ten items are drawn from the
# sealed items of Gate B, certified, and then the scheduled retirement draws two sealed items.
# Each release is timestamped by the demo's timestamp authority.
#
# The beacon is the demo's own stand-in for drand quicknet (tools/make_demo_beacon.py says why),
# and so is the authority (tools/demo_timestamp_authority.py): both keys are in the repository, so
# neither proves anything; a real program pins quicknet and lists authorities it does not control.
# Every event is dated when the script records it, and the script waits for each round: a token's
# time is the authority's clock, no event a stamped checkpoint holds may be dated after it, and what
# a draw rests on must be logged before its round (so the script takes about five minutes).
set -eu
cd "$(dirname "$0")/.."
T="${TRANSPARENCY:-.venv/bin/transparency}"
PY="${PYTHON:-.venv/bin/python}"
PORT=48318
export PYTHONPATH=.
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
later() { date -u -d "@$(( $(date -u -d "$1" +%s) + $2 ))" +%Y-%m-%dT%H:%M:%SZ; }
wait_until() {
  target=$(date -u -d "$1" +%s)
  while [ "$(date -u +%s)" -lt "$target" ]; do sleep 1; done
}
START=$(now)

# The methodology 2026.2: 2026.1's scoring, with the beacon and the draws.
$PY - "$(later "$START" 240)" <<'PY'
import json, subprocess, sys
params = json.load(open("data/methodology/2026.1.json"))
beacon = json.loads(subprocess.check_output([sys.executable, "tools/make_demo_beacon.py", "pin"]))
params |= {"version": "2026.2", "v": 2, "beacon": beacon}
params["draws"] = {
    "secret_gate_runs": "required",
    "retirements": {"items": 2, "every_seconds": 240, "until": sys.argv[1]},
}
json.dump(params, open("data/demo/methodology-2026.2.json", "w"), indent=1, ensure_ascii=False)
PY
$T methodology publish data/demo/methodology-2026.2.json --prose data/methodology/2026.1.md --at "$START"

# The timestamp authority, listed and running while the demo's releases are built.
$PY tools/demo_timestamp_authority.py list $PORT > data/timestamp-authorities.json
$PY tools/demo_timestamp_authority.py serve $PORT &
TSA=$!
trap 'kill $TSA' EXIT
sleep 1

# Kestrel Extract's run names the first round thirty seconds after its registration.
REGISTERED=$(now)
ROUND=$($PY tools/make_demo_beacon.py at "$(later "$REGISTERED" 30)")
$PY - "$ROUND" <<'PY'
import hashlib, json, sys
params = open("data/methodology/2026.2.json", "rb").read()
spec = {
    "type": "run-spec",
    "v": 2,
    "id": "kestrel-b-1",
    "previous_run": None,
    "subject": {"id": "kestrel-extract", "name": "Kestrel Extract", "version": "2.0", "organization": "Kestrel Labs"},
    "gate": "b",
    "question": "Does Kestrel Extract 2.0 extract customer-message fields reliably on sealed items drawn by the beacon?",
    "draw": {"beacon": json.loads(params)["beacon"]["chain_hash"], "round": int(sys.argv[1]), "count": 10},
    "budget": {"max_output_tokens_per_item": 2048, "max_wall_clock_seconds": 3600},
    "repetitions": 1,
    "metrics": ["pass_rate", "item_score"],
    "exclusion_rules": ["Items whose answer key is under review by the program at run time."],
    "methodology": {"version": "2026.2", "sha256": hashlib.sha256(params).hexdigest()},
    "judge": {
        "provider": "Meridian Evaluation Services",
        "model": "meridian-judge",
        "version": "2026-10",
        "rubric_sha256": "9937fb6301e31c594b438321ed0f6ba551ae94b5ad31bcfba2bfb74f0d5e6b46",
        "seed": 20261205,
    },
}
json.dump(spec, open("data/demo/run-specs/kestrel-b-1.json", "w"), indent=1, ensure_ascii=False)
PY
$T register data/demo/run-specs/kestrel-b-1.json --at "$REGISTERED"
wait_until "$(later "$REGISTERED" 32)"
$PY tools/make_demo_beacon.py round "$ROUND"
$T draw kestrel-b-1 "data/beacon/$ROUND.json" --at "$(now)"
$T build

# Its results: the outputs the answer keys give, but for one critical field missed.
$PY - "$(now)" <<'PY'
import json, sys, yaml
drawn = next(json.loads(l) for l in open("data/ledger.jsonl") if '"type":"draw"' in l)
keys = {i["id"]: i["answer"] for i in yaml.safe_load(open("data/private/items/gate-b.yaml"))["items"]}
rows = []
for n, item in enumerate(drawn["items"]):
    fields = []
    for name, a in keys[item].items():
        out = a["value"]
        if n == 3 and a["tier"] == "critical" and not any(f.get("missed") for f in fields):
            out, missed = ("000-000-000000" if isinstance(out, str) else 0), True
            fields.append({"name": name, "output": out, "missed": True})
            continue
        f = {"name": name, "output": out}
        if a["kind"] == "text":
            f["similarity"] = "0.93"
        fields.append(f)
    for f in fields:
        f.pop("missed", None)
    rows.append({"item": item, "status": "scored", "fields": fields})
doc = {"type": "run-results", "v": 1, "run": "kestrel-b-1", "finished_at": sys.argv[1],
       "results": rows, "grader": {"proposed_score": 84, "rationale": "Nine of ten items passed; one account number was missed."}}
json.dump(doc, open("data/private/results/kestrel-b-1.json", "w"), indent=1, ensure_ascii=False)
PY
sleep 1
$T certify data/private/results/kestrel-b-1.json --at "$(now)"

# The retirement the schedule makes due four minutes after 2026.2's publication, drawn by the
# first round at or after that time, recorded once the round is out and before anything else.
DUE=$($PY tools/make_demo_beacon.py at "$(later "$START" 240)")
wait_until "$(later "$START" 242)"
$PY tools/make_demo_beacon.py round "$DUE"
$T retire --draw "data/beacon/$DUE.json" --at "$(now)"
$T build
