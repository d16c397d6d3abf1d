#!/bin/sh
# Run the independent readings of SPEC.md (../shared/conformance) against the built site.
# Go's reference packages need: apt-get install -y golang-go golang-golang-x-mod-dev
set -eu
cd "$(dirname "$0")/.."
SHARED="${SHARED:-../shared}"
SITE="${1:-public}"
PY=.venv/bin/python
echo "== check_site.py (cryptography + rfc8785, independent of this project)"
$PY "$SHARED/conformance/check_site.py" "$SITE" --certificates
if command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/golang.org/x/mod ]; then
  echo "== Go: golang.org/x/mod/sumdb/note and sumdb/tlog"
  tmp=$(mktemp -d)
  GO111MODULE=off GOPATH="$(cd "$SHARED/conformance/go" && pwd):/usr/share/gocode" GOCACHE="$tmp/cache" \
    go build -o "$tmp/interop" interop
  set -- $($PY "$SHARED/conformance/ledger_leaves.py" "$SITE" "$tmp/leaves")
  "$tmp/interop" "$1" "$2" "$tmp/leaves" $(find "$SITE" -name "*.tlog-proof" | LC_ALL=C sort)
  rm -rf "$tmp"
else
  echo "== Go check skipped: install golang-go and golang-golang-x-mod-dev to run it"
fi
