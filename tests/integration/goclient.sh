#!/bin/sh
# Build the varlink/go client offline from Debian's packaged sources and run it against timerd.
# Usage: goclient.sh TIMERD SOURCE_DIR
set -eu
timerd=$1
src=$2
if ! command -v go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/github.com/varlink/go ]; then
        echo "SKIP: needs golang-go and golang-github-varlink-go-dev (tools/deps installs them)"
        exit 77
fi
dir=$(mktemp -d /tmp/goclient-test.XXXXXX)
"$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --log-level warning &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT

cp "$src/goclient/main.go" "$dir/main.go"
(cd "$dir" && GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$dir/cache" \
        go build -o "$dir/client" main.go)
for _ in $(seq 500); do [ -S "$dir/io.timerd" ] && break; sleep 0.01; done
"$dir/client" "$dir/io.timerd"
