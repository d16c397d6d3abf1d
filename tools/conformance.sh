#!/bin/sh
# Run independent readings of format v1 (docs/formats/v1.md), kept in the folder CONFORMANCE, against
# the built site.
# Go's reference packages need: apt-get install -y golang-go golang-golang-x-mod-dev
set -eu
cd "$(dirname "$0")/.."
CONFORMANCE="${CONFORMANCE:?set CONFORMANCE to the folder of the independent readings (check_site.py, ledger_leaves.py, go/)}"
SITE="${1:-public}"
PY=.venv/bin/python
echo "== check_site.py (cryptography + rfc8785, independent of this project)"
# A v1 reading: on a site whose ledger holds format-v2 events (a revocation, a key rotation) it
# fails those events and the certificates signed by the retired key, as format v1 §4 says a v1
# verifier must. Its result is reported; the Go checks run either way.
status=0
$PY "$CONFORMANCE/check_site.py" "$SITE" --certificates || status=$?
if command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/golang.org/x/mod ]; then
  echo "== Go: golang.org/x/mod/sumdb/note and sumdb/tlog"
  tmp=$(mktemp -d)
  GO111MODULE=off GOPATH="$(cd "$CONFORMANCE/go" && pwd):/usr/share/gocode" GOCACHE="$tmp/cache" \
    go build -o "$tmp/interop" interop
  set -- $($PY "$CONFORMANCE/ledger_leaves.py" "$SITE" "$tmp/leaves")
  "$tmp/interop" "$1" "$2" "$tmp/leaves" $(find "$SITE" -name "*.tlog-proof" | LC_ALL=C sort)
  echo "== Go: the tiles, archived checkpoints and consistency proofs (tests/interop/go/src/historycheck)"
  GO111MODULE=off GOPATH="$PWD/tests/interop/go:/usr/share/gocode" GOCACHE="$tmp/cache" go build -o "$tmp/historycheck" historycheck
  "$tmp/historycheck" "$SITE" $($PY -c 'import json, sys; print(" ".join(k["vkey"] for k in json.load(open(sys.argv[1]))["keys"]))' "$SITE/keys.json")
  rm -rf "$tmp"
else
  echo "== Go check skipped: install golang-go and golang-golang-x-mod-dev to run it"
fi
exit $status
