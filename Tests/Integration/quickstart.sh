#!/usr/bin/env bash
# The README's quick start as a new user runs it: the program Scripts/check-snippets built from the
# README's Package.swift and main.swift, started beside the daemon with no configuration of its
# own, must show at the daemon's first scrape what the README says it shows.
# Usage: Tests/Integration/quickstart.sh PATH-TO-weave-healthd PATH-TO-Hello PATH-TO-weave-health
set -uo pipefail

source "$(dirname "$0")/lib.sh"
HELLO=$(realpath "$2")
PROBE=$(realpath "$3")
SOCKET=/run/weave/apps/hello.sock # the quick start's: the default directory, the service ID

if [ -S "$SOCKET" ] || curl -s -o /dev/null --max-time 1 127.0.0.1:8080; then
    # Another hello, or something on the quick start's port: not ours to stop.
    echo "ok - # SKIP the quick start's socket or port 8080 is in use"
    finish
    exit $?
fi

PORT=$(free_port)
"$BIN" --print-default-config | sed "s|127.0.0.1:9096|127.0.0.1:$PORT|; s|port: 9096|port: $PORT|" > "$WORK/config.yaml"
"$HELLO" > "$WORK/hello.log" 2>&1 &
HELLO_PID=$!
PIDS+=("$HELLO_PID")
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "http://127.0.0.1:$PORT/livez" 10 || not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
wait_for "http://127.0.0.1:8080/livez" 20 || not_ok "the quick start starts" "$(cat "$WORK/hello.log")"

answer=$(curl -s 127.0.0.1:8080/hello/Ada)
if [ "$answer" = "Hello, Ada!" ]; then ok "curl 127.0.0.1:8080/hello/Ada answers Hello, Ada!"; else not_ok "the quick start's route" "$answer"; fi
if [ -S "$SOCKET" ] && [ "$(stat -c %a "$SOCKET")" = 660 ]; then ok "$SOCKET, mode 0660"; else not_ok "the socket" "$(ls -l "$SOCKET" 2>&1)"; fi

metrics=$(curl -s "127.0.0.1:$PORT/metrics")
for line in 'weave_app_up{app="hello"} 1' 'weave_resolutions_total{app="hello",dependency="Greeter"} 1' \
    'weave_health_status{app="hello",check="Database",state="degraded"} 1' 'weave_build_info{app="hello",version="1.0.0",'; do
    if grep -qF -- "$line" <<<"$metrics"; then ok "the first scrape has $line"; else not_ok "the first scrape has $line" "$(grep 'app="hello"' <<<"$metrics" | head -5)"; fi
done
if promtool check metrics <<<"$metrics" >/dev/null 2>&1; then ok "promtool check metrics"; else not_ok "promtool check metrics" "$(promtool check metrics <<<"$metrics" 2>&1)"; fi

# The daemon reads the applications' health every health_interval (1 s by default).
for _ in $(seq 100); do
    health=$(curl -s "127.0.0.1:$PORT/health")
    grep -q '"hello/Database:status"' <<<"$health" && break
    sleep 0.1
done
if "$PY" -c 'import json,sys; d=json.load(sys.stdin); c=d["checks"]["hello/Database:status"][0]; sys.exit(not (d["status"]=="warn" and c["status"]=="warn" and c["output"]=="replica 2 s behind"))' <<<"$health"; then
    ok "/health: warn, hello/Database says replica 2 s behind"
else not_ok "/health" "$health"; fi
top=$("$PROBE" top --url "http://127.0.0.1:$PORT")
if grep -q '^hello/Greeter  *1 ' <<<"$top" && grep -q '^hello/Database  *0  *-  *- .*degraded' <<<"$top"; then ok "weave-health top lists hello/Greeter, and hello/Database, never resolved, without latency"
else not_ok "weave-health top" "$top"; fi
# The failing factory: an error, not a resolve, on /metrics.
pay=$(curl -s 127.0.0.1:8080/pay)
for _ in $(seq 50); do curl -s "127.0.0.1:$PORT/metrics" | holds -F 'weave_resolution_errors_total{app="hello",dependency="Payments",kind="factory_failed"} 1' && break; sleep 0.1; done
metrics=$(curl -s "127.0.0.1:$PORT/metrics")
if [[ "$pay" == "cannot pay: "* ]] && grep -qF 'weave_resolution_errors_total{app="hello",dependency="Payments",kind="factory_failed"} 1' <<<"$metrics" \
    && grep -qF 'weave_resolutions_total{app="hello",dependency="Payments"} 0' <<<"$metrics"; then
    ok "/pay: the throwing factory is one resolution error (factory_failed) and no resolve"
else not_ok "the failing factory" "$pay; $(grep 'Payments' <<<"$metrics")"; fi
if grep -q 'Application hello is up at unix:/run/weave/apps/hello.sock' "$WORK/daemon.log"; then ok "the daemon logs: Application hello is up"
else not_ok "the daemon's log" "$(cat "$WORK/daemon.log")"; fi

kill -TERM "$HELLO_PID"; wait "$HELLO_PID" 2>/dev/null
if [ ! -e "$SOCKET" ] && ! curl -s "127.0.0.1:$PORT/metrics" | holds 'app="hello"'; then ok "SIGTERM: the socket and the series leave"
else not_ok "SIGTERM: the socket and the series leave" "$(ls -l "$SOCKET" 2>&1)"; fi
finish
