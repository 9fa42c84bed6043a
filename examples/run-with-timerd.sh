#!/bin/sh
# Run an example against a timerd of its own, on a temporary socket; exit as the example does.
# Usage: run-with-timerd.sh TIMERD EXAMPLE [ARGUMENTS...]
set -eu
timerd=$1
shift

dir=$(mktemp -d /tmp/timerd-example.XXXXXX)
"$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --log-level warning &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
# Until it accepts: the socket file exists a moment before it listens.
for _ in $(seq 1000); do
        python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' \
                "$dir/io.timerd" 2>/dev/null && break
        sleep 0.01
done

# An example that starts a timerd of its own (timerd_test_start()) starts this one.
TIMERD_SOCKET="$dir/io.timerd" TIMERD_BINARY="$timerd" "$@"
