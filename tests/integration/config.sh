#!/bin/sh
# The config file: read at start, re-read on SIGHUP; a bad file keeps the old configuration; a
# missing one is no error with --config=-FILE (as the unit passes it); errors are logged at
# priority err (journald reads the "<3>" prefix).
# Usage: config.sh TIMERD EXAMPLE_CONFIG
set -eu
timerd=$1
example=$2
dir=$(mktemp -d /tmp/timerd-config-test.XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs the Python code on stdin with a connection to the service and exchange(message) -> reply.
with_service() {
        python3 -c "import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect('$dir/io.timerd')
def exchange(message):
    s.sendall(message.encode() + b'\\0')
    reply = b''
    while not reply.endswith(b'\\0'):
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    return json.loads(reply[:-1])
$(cat)" "$@"
}

# Sends one call padded to SIZE bytes; prints the error name or "ok".
call_of_size() {
        with_service "$1" <<'PY'
size = int(sys.argv[1])
msg = json.dumps({"method": "io.timerd.Service.Status", "parameters": {}})
print(exchange(msg[:-1] + " " * (size - len(msg)) + "}").get("error", "ok"))
PY
}

# Registers three timers and lists them on one connection; prints how many the first page holds.
first_page_size() {
        with_service <<'PY'
def call(method, parameters):
    return exchange(json.dumps({"method": method, "parameters": parameters}))
for name in "abc":
    call("io.timerd.Timer.Register", {"name": name, "declaration": {"policy": "once"}})
print(len(call("io.timerd.Timer.List", {})["parameters"]["timers"]))
PY
}

printf '# test\nmax-message = 300\nlog-level = warning\nlist-page = 1\n' >"$dir/timerd.conf"
"$timerd" --config "$dir/timerd.conf" --socket "$dir/io.timerd" --state-dir "$dir/state" \
        2>"$dir/log" &
pid=$!
for _ in $(seq 500); do [ -S "$dir/io.timerd" ] && break; sleep 0.01; done

[ "$(call_of_size 200)" = ok ] || fail "a small call"
[ "$(call_of_size 500)" = io.timerd.Timer.RequestTooLarge ] || fail "max-message from the file"
[ "$(first_page_size)" = 1 ] || fail "list-page from the file"

# SIGHUP takes the new values.
printf 'max-message = 4096\nlist-page = 2\n' >"$dir/timerd.conf"
kill -HUP $pid
for _ in $(seq 100); do [ "$(call_of_size 500)" = ok ] && break; sleep 0.05; done
[ "$(call_of_size 500)" = ok ] || fail "max-message after SIGHUP"
[ "$(first_page_size)" = 2 ] || fail "list-page after SIGHUP"

# A bad file changes nothing, and the service goes on.
printf 'max-message = lots\n' >"$dir/timerd.conf"
kill -HUP $pid
sleep 0.3
kill -0 $pid || fail "the service died on a bad file"
[ "$(call_of_size 500)" = ok ] || fail "kept max-message 4096"
[ "$(call_of_size 5000)" = io.timerd.Timer.RequestTooLarge ] || fail "kept max-message 4096"
grep -q '^<3>.*max-message: not a valid value: "lots"' "$dir/log" ||
        fail "the bad value is not logged as an error: $(cat "$dir/log")"
grep -q '^<4>Keeping the current configuration' "$dir/log" ||
        fail "keeping the configuration is not logged as a warning: $(cat "$dir/log")"

kill -TERM $pid
wait $pid || fail "exit status after SIGTERM"

# A bad file at start, or an unknown setting, is a usage error.
set +e
"$timerd" --config "$dir/timerd.conf" --socket "$dir/x" --state-dir "$dir/state" 2>"$dir/err"
[ $? -eq 2 ] || fail "a bad file at start exits 2"
grep -q "^<3>.*max-message" "$dir/err" || fail "an error naming the setting: $(cat "$dir/err")"
printf 'colour = blue\n' >"$dir/timerd.conf"
"$timerd" --config "$dir/timerd.conf" --socket "$dir/x" --state-dir "$dir/state" 2>"$dir/err"
[ $? -eq 2 ] || fail "an unknown setting exits 2"
grep -q "^<3>.*unknown setting" "$dir/err" || fail "unknown setting message: $(cat "$dir/err")"
"$timerd" --config "$dir/missing.conf" 2>"$dir/err"
[ $? -eq 2 ] || fail "a missing file exits 2"
grep -q "^<3>Cannot read the configuration file $dir/missing.conf" "$dir/err" ||
        fail "a missing file's message: $(cat "$dir/err")"
# With a leading '-' only a missing file is forgiven: a directory is still an error.
"$timerd" --config=-"$dir" --socket "$dir/x" --state-dir "$dir/state" 2>"$dir/err"
[ $? -eq 2 ] || fail "--config=-DIRECTORY exits 2"
grep -q "^<3>Cannot read the configuration file $dir" "$dir/err" ||
        fail "an unreadable file's message: $(cat "$dir/err")"
"$timerd" --bogus 2>"$dir/err"
[ $? -eq 2 ] || fail "an unknown option exits 2"
grep -q "^<3>Unknown option --bogus" "$dir/err" || fail "unknown option message: $(cat "$dir/err")"
"$timerd" --socket 2>"$dir/err"
[ $? -eq 2 ] || fail "an option without its value exits 2"
grep -q "^<3>--socket needs a value" "$dir/err" || fail "missing value message: $(cat "$dir/err")"
for page in 0 1048577 -1; do
        "$timerd" --list-page=$page --socket "$dir/x" --state-dir "$dir/state" 2>"$dir/err"
        [ $? -eq 2 ] || fail "--list-page $page exits 2"
        grep -q "list-page" "$dir/err" || fail "the message names list-page: $(cat "$dir/err")"
done
set -e

# --config=-FILE, as the unit passes it: no file is the defaults; once the administrator writes
# one, a reload takes it.
rm -f "$dir/timerd.conf"
"$timerd" --config=-"$dir/timerd.conf" --socket "$dir/io.timerd" --state-dir "$dir/state" \
        2>"$dir/log" &
pid=$!
for _ in $(seq 500); do [ -S "$dir/io.timerd" ] && break; sleep 0.01; done
[ "$(call_of_size 500)" = ok ] || fail "no service without the optional file: $(cat "$dir/log")"
grep -q "^<6>No configuration file $dir/timerd.conf" "$dir/log" ||
        fail "the missing optional file is not logged: $(cat "$dir/log")"
printf 'max-message = 300\n' >"$dir/timerd.conf"
kill -HUP $pid
for _ in $(seq 100); do [ "$(call_of_size 500)" != ok ] && break; sleep 0.05; done
[ "$(call_of_size 500)" = io.timerd.Timer.RequestTooLarge ] || fail "the file made later, reloaded"
kill -TERM $pid
wait $pid || fail "exit status after SIGTERM"

# The shipped example: every setting it names is one, at a value timerd takes.
sed -n 's/^#\([a-z-]* = .*\)/\1/p' "$example" >"$dir/example.conf"
[ "$(wc -l <"$dir/example.conf")" -ge 10 ] || fail "the example names few settings"
"$timerd" --config "$dir/example.conf" --version >/dev/null 2>"$dir/err" ||
        fail "the shipped example is not valid: $(cat "$dir/err")"
echo "config: all checks passed"
