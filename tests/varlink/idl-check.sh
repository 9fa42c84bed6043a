#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Parses varlink interface files with a real varlink parser (varlink/go, Debian's
# golang-github-varlink-go-dev), built offline. Exit 77 (skip) only when go is not installed.
# Usage: idl-check.sh IDLCHECK_DIR FILE.varlink...
set -eu

if ! command -v go >/dev/null 2>&1; then
        echo "go is not installed: skipping"
        exit 77
fi

src_dir=$1
shift

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS='' GOTOOLCHAIN=local GOCACHE="$work/cache" GOTMPDIR="$work" \
        GOPROXY=off go build -o "$work/idlcheck" "$src_dir/main.go"
"$work/idlcheck" "$@"
