#!/usr/bin/env bash
# The fault suite: each numbered finding of the adversarial review ("A health daemon must not die,
# freeze, leak or lie"), reproduced against the real daemon and probe. Every test here failed before
# its fix. Hostile peers come from faults.py, applications from fake_apps.py; everything runs on
# loopback and stops by PID.
# Usage: Tests/Integration/faults.sh PATH-TO-weave-healthd PATH-TO-weave-health
set -uo pipefail

source "$(dirname "$0")/lib.sh"
PROBE=$(realpath "$2")
FAULTS="$PY $HERE/faults.py"
FAKE_APPS="$PY $HERE/fake_apps.py"
ROOT=$(cd "$HERE/../.." && pwd)

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo "(gone)"; }
is_number() { [[ "$1" =~ ^[0-9]+$ ]]; }
start_helper() { # OUT WORD ARGS…: fake_apps.py ARGS… in the background (up to 8,192 descriptors; output
    # in OUT), its PID added to $HELPERS, until it prints WORD (30 s at most)
    local out=$1 word=$2; shift 2
    (ulimit -n 8192; exec $FAKE_APPS "$@" > "$out") &
    HELPERS+=("$!")
    PIDS+=("$!")
    for _ in $(seq 300); do grep -q "$word" "$out" && break; sleep 0.1; done
}
stop_helpers() { kill -TERM "${HELPERS[@]}" 2>/dev/null; wait "${HELPERS[@]}" 2>/dev/null; HELPERS=(); }
HELPERS=()
check_config() { # DESCRIPTION EXPECTED-EXIT YAML: --check-config must exit so, with file:line:column for 78
    local description=$1 expected=$2
    printf '%s\n' "$3" > "$WORK/check.yaml"
    local output; output=$("$BIN" --check-config "$WORK/check.yaml" 2>&1); local rc=$?
    if [ "$rc" -eq "$expected" ] && { [ "$expected" -ne 78 ] || grep -q "^$WORK/check.yaml:[0-9]*:[0-9]*: " <<<"$output"; }; then
        ok "$description: exit $rc"
    else
        not_ok "$description: exit $rc, expected $expected" "$output"
    fi
}

# --- 1, 13, 14: configuration values ---------------------------------------------------------------
for value in "interval: 1e10s" "interval: 9999999999h" "interval: 99999999999999999999" "timeout: 1e300s" "max_age: 1e10s"; do
    check_config "1. a huge duration ($value) is a positioned error, not a crash" 78 \
        "checks: [{name: f, type: file, path: /etc/hostname, ${value}}]"
done
check_config "1. a huge slow_resolution_threshold" 78 "slow_resolution_threshold: 1e10s"
check_config "1. a huge log_rate_limit interval" 78 "log_rate_limit: {interval: 9999999999h}"
check_config "1. a huge log_rate_limit burst" 78 "log_rate_limit: {burst: 99999999999999999999}"
check_config "1. a PSI trigger beyond the kernel's window" 78 "memory_pressure: {trigger: some 150000 99999999999999}"
check_config "14. status_codes without a body (101)" 78 "status_codes: {fail: 101}"
check_config "14. status_codes without a body (304)" 78 "status_codes: {warn: 304}"
check_config "14. an unresolvable listen host" 78 $'listen:\n  - address: no-such-host.invalid:9096'
check_config "14. a NUL byte in a path" 78 $'details: when-authorized\nbearer_token_file: "/etc/passwd\\0x"'
check_config "12. a missing token file is an error at its key" 78 $'details: when-authorized\nbearer_token_file: /nonexistent/token'
"$PY" -c "print('checks:\n  - {name: c, type: file, path: /etc/hostname, groups: [' + ','.join('g%d' % i for i in range(300000)) + ']}')" \
    > "$WORK/long.yaml"
start=$SECONDS
if timeout 20 "$BIN" --check-config "$WORK/long.yaml" >/dev/null 2>&1; then
    ok "13. a $(($(stat -c %s "$WORK/long.yaml") / 1024)) KiB one-line list loads in $((SECONDS - start)) s"
else not_ok "13. a long one-line list loads" "took $((SECONDS - start)) s"; fi
head -c 5000000 /dev/zero | tr '\0' '#' > "$WORK/huge.yaml"
output=$("$BIN" --check-config "$WORK/huge.yaml" 2>&1)
if [ $? -eq 78 ] && grep -q "larger than 4 MiB" <<<"$output"; then ok "13. a 5 MB file: 'larger than 4 MiB'"
else not_ok "13. a 5 MB file" "$output"; fi

# --- the main daemon: exec plugins, tokens, reloads, leaks ----------------------------------------
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
CLOSED=$(free_port)
printf 'secret\n' > "$WORK/token" # as `echo secret > token` writes it
write_main() { # extra top-level YAML
    cat > "$WORK/main.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
details: when-authorized
bearer_token_file: $WORK/token
$1
checks:
  - name: sigmask
    type: exec
    command: ["/bin/sh", "-c", "echo blocked=\$(awk '/^SigBlk/ {print \$2}' /proc/self/status) ignored=\$(awk '/^SigIgn/ {print \$2}' /proc/self/status); exit 1"]
    interval: 1s
  - name: orphans
    type: exec
    command: ["/bin/sh", "-c", "/bin/sleep 3001 & /bin/sleep 3001"]
    timeout: 300ms
    interval: 1s
  - name: perfdata
    type: exec
    command: ["/bin/sh", "-c", "echo 'OK - fine | a=1s a=2s b=3B'"]
    interval: 1s
  - name: refused
    type: tcp
    host: 127.0.0.1
    port: $CLOSED
    interval: 1s
  - name: slow-round
    type: exec
    command: ["/bin/sleep", "0.3"]
    interval: 1s
YAML
}
write_main ""
start_daemon "$WORK/main.yaml" "$WORK/main.log" "$URL/livez" 30 || echo "the daemon did not start: $(tail -3 "$WORK/main.log")" >&2
sleep 2.5
health() { curl -s --max-time 5 "$@" "$URL/health"; }
body=$(health -H "Authorization: bearer secret")
# Signals 32 and 33 are glibc's own (thread cancellation, setxid); every standard signal must be
# neither blocked nor ignored.
if grep -q '"output":"blocked=0000000000000000 ignored=0000000[01]80000000"' <<<"$body"; then
    ok "7. exec plugins start with no blocked and no ignored signals"
else not_ok "7. exec plugins' signal mask" "$(grep -o '"sigmask[^]]*' <<<"$body")"; fi
sleep 2
leaked=$(pgrep -f "sleep 3001" | wc -l)
if [ "$leaked" -le 4 ]; then ok "8. a timed-out plugin's whole process group is killed ($leaked running now, of the current round)"
else not_ok "8. plugin process groups" "$leaked 'sleep 3001' processes after 4 rounds"; fi
if grep -q '"output":"connection refused (127.0.0.1:'"$CLOSED"')"' <<<"$body"; then ok "15. a refused connection reads 'connection refused (127.0.0.1:$CLOSED)'"
else not_ok "15. the tcp failure reason" "$(grep -o '"refused[^]]*' <<<"$body")"; fi
curl -s "$URL/metrics" > "$WORK/metrics.txt"
if [ "$(grep -c '^weave_check_perfdata_seconds{check="perfdata",label="a"}' "$WORK/metrics.txt")" -eq 1 ] && promtool check metrics < "$WORK/metrics.txt" >/dev/null 2>&1
then ok "14. a repeated perfdata label makes one series, and promtool accepts the output"
else not_ok "14. repeated perfdata labels" "$(grep perfdata "$WORK/metrics.txt" | head -5)"; fi
if grep -q '"output"' <<<"$body" && grep -q '"output"' <<<"$(health -H "Authorization: Bearer    secret")" && ! grep -q '"output"' <<<"$(health)" \
    && ! grep -q '"output"' <<<"$(health -H "Authorization: Bearer secre")"; then
    ok "12. a token file ending in a newline matches; the scheme is case-insensitive; a wrong token does not"
else not_ok "12. bearer token matching"; fi

reload() { kill -HUP "$DAEMON"; sleep "${1:-1.5}"; }
printf 'rotated\n' > "$WORK/token"; reload
if grep -q '"output"' <<<"$(health -H "Authorization: Bearer rotated")" && ! grep -q '"output"' <<<"$(health -H "Authorization: Bearer secret")"; then
    ok "9. a rotated token applies on reload, and the old one stops working"
else not_ok "9. token rotation on reload"; fi
: > "$WORK/token"; reload
if grep -q '"output"' <<<"$(health -H "Authorization: Bearer rotated")" && grep -q "Configuration rejected.*bearer_token_file.*is empty" "$WORK/main.log"; then
    ok "9. an emptied token file is rejected on reload, as at startup; the old token stays"
else not_ok "9. an emptied token file on reload" "$(tail -2 "$WORK/main.log")"; fi
printf 'rotated\n' > "$WORK/token"
write_main $'details: never\nstatus_codes: {fail: 500}'
sed -i '/^details: when-authorized$/d' "$WORK/main.yaml"; reload
code=$(curl -s -o "$WORK/body" -w '%{http_code}' -H "Authorization: Bearer rotated" "$URL/health")
if [ "$code" = 500 ] && ! grep -q '"output"' "$WORK/body"; then ok "9. details: never and status_codes apply on reload (HTTP $code, no output)"
else not_ok "9. details and status_codes on reload" "HTTP $code $(head -c 200 "$WORK/body")"; fi
sed -i "s/127.0.0.1:$PORT/127.0.0.1:$CLOSED/" "$WORK/main.yaml"; reload
if curl -sf -o /dev/null "$URL/livez" && grep -q "Configuration rejected.*listen: changed.*restart weave-healthd" "$WORK/main.log"; then
    ok "9. a changed listen: is rejected with a clear log, not silently ignored"
else not_ok "9. a changed listen: on reload" "$(tail -2 "$WORK/main.log")"; fi
write_main $'memory_pressure:\n  trigger: some 100000 2000000'; reload
if curl -sf -o /dev/null "$URL/livez" && grep -q "Configuration rejected.*memory_pressure: trigger changed.*restart weave-healthd" "$WORK/main.log"; then
    ok "9. a changed memory_pressure: trigger is rejected with a clear log, not silently ignored"
else not_ok "9. a changed memory_pressure: on reload" "$(tail -2 "$WORK/main.log")"; fi
write_main ""
sed -i 's/^    interval: 1s$/    interval: 1e10s/' "$WORK/main.yaml"; reload
if kill -0 "$DAEMON" 2>/dev/null && curl -sf -o /dev/null "$URL/livez" && grep -q "Configuration rejected.*too long" "$WORK/main.log"; then
    ok "1. a reload with a huge duration is rejected; the daemon keeps running"
else not_ok "1. a huge duration on reload" "$(tail -2 "$WORK/main.log")"; fi
write_main ""; reload

$FAULTS sample-health "$URL/health" 12 > "$WORK/samples" &
SAMPLER=$!
for _ in $(seq 15); do reload 0.6; done
wait "$SAMPLER"
read -r samples lies < "$WORK/samples"
if [ "${samples:-0}" -gt 20 ] && [ "${lies:-1}" -eq 0 ]; then ok "10. /health never passes with no checks during 15 reloads ($samples samples)"
else not_ok "10. /health during reloads" "$samples samples, $lies passes with no checks"; fi

before=$(rss_kib "$DAEMON")
for _ in $(seq 300); do kill -HUP "$DAEMON"; sleep 0.03; done
sleep 4
after=$(rss_kib "$DAEMON")
if is_number "$before" && is_number "$after" && [ $((after - before)) -lt 4096 ]; then ok "11. 300 reloads: RSS $before → $after KiB"
else not_ok "11. reload leak" "RSS $before → $after KiB after 300 reloads"; fi
stop_daemon
sleep 0.5
if [ "$(pgrep -f 'sleep 3001' | wc -l)" -eq 0 ]; then ok "8. no plugin process outlives the daemon"
else not_ok "8. plugins outlive the daemon" "$(pgrep -af 'sleep 3001')"; fi

# --- 4, 5, 14: HTTP ----------------------------------------------------------------------------------
cat > "$WORK/http.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
details: always
checks:
  - {name: plugin, type: exec, command: ["/bin/true"], interval: 1s}
YAML
start_daemon "$WORK/http.yaml" "$WORK/http.log" "$URL/livez" 10 prlimit --nofile=1024
before=$(rss_kib "$DAEMON")
$FAULTS pipeline "$PORT" 20000 6 > /dev/null
peak=$(rss_kib "$DAEMON")
if is_number "$before" && is_number "$peak" && [ $((peak - before)) -lt 12288 ]; then ok "4. 20,000 pipelined GET /metrics never read: RSS $before → $peak KiB"
else not_ok "4. pipelining without reading" "RSS $before → $peak KiB"; fi

seconds=$($FAULTS slowloris "$PORT" 20)
if awk -v s="$seconds" 'BEGIN { exit !(s < 13) }'; then ok "5. a request trickling in a byte a second is cut off after $seconds s"
else not_ok "5. slowloris" "still open after $seconds s"; fi

$FAULTS idle "$PORT" 700 8 > "$WORK/idle" &
IDLE=$!
sleep 3.5
livez=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$URL/livez")
metrics=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$URL/metrics")
readyz=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$URL/readyz/plugin")
wait "$IDLE"
# The idle connections fill the server; a newcomer closes the longest idle of them (idle over 0.5 s)
# and is served in full, where before it got the probes' reserve and /metrics answered 503.
if [ "$livez" = 200 ] && [ "$readyz" = 200 ] && [ "$metrics" = 200 ] && ! grep -q "Too many open files" "$WORK/http.log"; then
    ok "5. 700 idle connections under a 1,024-descriptor limit: /livez $livez, /readyz/plugin $readyz, /metrics $metrics (idle ones closed to make room), checks still run"
else not_ok "5. connection exhaustion" "/livez $livez /readyz $readyz /metrics $metrics $(grep -m1 'Too many' "$WORK/http.log")"; fi
sleep 1
if curl -sf -o /dev/null "$URL/metrics"; then ok "5. once the connections are gone, /metrics is served again"; else not_ok "5. recovery after exhaustion"; fi

raw() { $FAULTS raw "$PORT" "$@"; }
answer=$(raw 'BLAH\r\n\r\n')
if [[ "$answer" == "HTTP/1.1 400 Bad Request | closed" ]]; then ok "5. a malformed request gets 400 and the connection closes"
else not_ok "5. close after 400" "$answer"; fi
answer=$(raw 'GET /livez HTTP/1.1\r\n\r\n')
if [[ "$answer" == "HTTP/1.1 400 Bad Request | closed" ]]; then ok "14. HTTP/1.1 without Host is 400"; else not_ok "14. no Host" "$answer"; fi
answer=$(raw 'GET /livez HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n')
if [[ "$answer" == "HTTP/1.1 200 OK | closed" ]]; then ok "14. Expect: 100-continue is answered at once"; else not_ok "14. Expect: 100-continue" "$answer"; fi
answer=$($FAULTS head-length "$PORT")
if [ "$answer" = consistent ]; then ok "14. HEAD /metrics with gzip: Content-Length matches what it describes"; else not_ok "14. HEAD with gzip" "$answer"; fi
stop_daemon

# --- 2, 14: the probe against broken daemons ----------------------------------------------------------
BAD=$(free_port)
for mode in negative-length negative-chunk huge-chunk huge-length; do
    $FAULTS serve-bad "$BAD" "$mode" 2 &
    SERVER=$!
    sleep 0.3
    "$PROBE" --url "http://127.0.0.1:$BAD" >/dev/null 2>&1; plain=$?
    "$PROBE" --url "http://127.0.0.1:$BAD" --nagios >/dev/null 2>&1; nagios=$?
    wait "$SERVER"
    if [ $plain -eq 1 ] && [ $nagios -eq 3 ]; then ok "2. the probe on a $mode response: a protocol error (exit 1, 3 with --nagios)"
    else not_ok "2. the probe on a $mode response" "exit $plain, --nagios $nagios"; fi
done
$FAULTS serve-bad "$BAD" ansi 2 &
SERVER=$!
sleep 0.3
"$PROBE" --url "http://127.0.0.1:$BAD" --check db > "$WORK/probe.out" 2>&1
"$PROBE" --url "http://127.0.0.1:$BAD" --nagios > "$WORK/nagios.out" 2>&1
wait "$SERVER"
# Nagios output: the status line, then one line per check that is not healthy.
if ! grep -q $'\e' "$WORK/probe.out" "$WORK/nagios.out" && [ "$(grep -c . "$WORK/nagios.out")" -eq 2 ] && ! grep -q "| x=1" "$WORK/nagios.out"; then
    ok "14. escape sequences, line breaks and '|' in check output reach neither the terminal nor Nagios"
else not_ok "14. control characters in check output" "$(cat -v "$WORK/probe.out" "$WORK/nagios.out" | head -5)"; fi

# --- 3: a stalled journald --------------------------------------------------------------------------
start_journald
if [ -n "$JOURNALD" ]; then
    "$PY" "$HERE/notify_socket.py" "$WORK/notify.sock" "$WORK/notify.log" &
    PIDS+=("$!")
    sleep 0.3
    start_daemon "$WORK/http.yaml" "$WORK/stall.err" "$URL/livez" 30 WEAVE_LOG_TARGET=journal WEAVE_HEALTHD_TEST_HOOKS=1 \
        NOTIFY_SOCKET="$WORK/notify.sock" WATCHDOG_USEC=1000000 \
        || echo "the daemon did not start: $(tail -3 "$WORK/stall.err")" >&2
    sleep 1
    kill -STOP "$JOURNALD"
    stalled_at=$("$PY" -c 'import time; print(int(time.monotonic() * 1000))')
    queued=$($FAULTS flood-journal)
    kill -USR2 "$DAEMON"; kill -HUP "$DAEMON"; sleep 0.5; kill -HUP "$DAEMON"; sleep 1
    livez=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$URL/livez")
    redirected=$(curl -s --max-time 2 "$URL/metrics" | awk '/^weave_log_entries_redirected_total/ { print $2 }')
    if [ "$livez" = 200 ] && [ "${redirected:-0}" != 0 ] && grep -q "Configuration reloaded" "$WORK/stall.err"; then
        ok "3. journald stopped (its queue full of $queued entries): /livez and /metrics answer, $redirected entries went to stderr"
    else not_ok "3. a stalled journald" "/livez $livez, redirected ${redirected:-none}, $(tail -2 "$WORK/stall.err")"; fi
    sleep 1
    pings=$(awk -v t="$stalled_at" '$2 == "WATCHDOG=1" && $1 > t + 500' "$WORK/notify.log" | wc -l)
    if [ "$pings" -ge 3 ]; then ok "3. WATCHDOG=1 keeps coming while journald is stopped ($pings pings)"
    else not_ok "3. watchdog pings during a journald stall" "$pings pings after the stall began"; fi
    kill -CONT "$JOURNALD"
    summary=""
    for _ in $(seq 50); do
        summary=$(journalctl -o json "_PID=$DAEMON" MESSAGE_ID=646c4076a6fc4b3aa2a7771041bcbac6 2>/dev/null | head -1)
        [ -n "$summary" ] && break
        sleep 0.2
    done
    if [ -n "$summary" ]; then ok "3. once journald reads again, a summary says what was redirected or dropped"
    else not_ok "3. the summary after a stall"; fi
    kill -STOP "$JOURNALD"
    $FAULTS flood-journal > /dev/null
    kill -HUP "$DAEMON"; sleep 0.5
    start=$(date +%s%N)
    kill -TERM "$DAEMON"
    for _ in $(seq 100); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
    elapsed=$((($(date +%s%N) - start) / 1000000))
    if ! kill -0 "$DAEMON" 2>/dev/null; then ok "3. SIGTERM with journald stopped: the daemon exits in $elapsed ms"
    else not_ok "3. SIGTERM with journald stopped" "still running after $elapsed ms"; fi
    kill -CONT "$JOURNALD"
    wait "$DAEMON" 2>/dev/null
else
    ok "3. a stalled journald # SKIP a journald this test did not start is never stopped"
fi

# --- 6: 10,000 checks ----------------------------------------------------------------------------------
{
    echo "listen:"; echo "  - address: 127.0.0.1:$PORT"
    echo "checks:"
    for i in $(seq 10000); do echo "  - {name: t$i, type: tcp, host: 127.0.0.1, port: $CLOSED, timeout: 1s, interval: 5s}"; done
} > "$WORK/many.yaml"
start=$(date +%s%N)
start_daemon "$WORK/many.yaml" "$WORK/many.log" "$URL/livez" 30 prlimit --nofile=1024
# The checks fail (nothing listens on their port): started means the first round is done.
for _ in $(seq 300); do [[ "$(curl -s --max-time 5 "$URL/readyz?verbose")" == *"[+]startup ok"* ]] && break; sleep 0.1; done
ready=$((($(date +%s%N) - start) / 1000000))
slow=0
for _ in $(seq 20); do
    curl -sf -o /dev/null --max-time 1 "$URL/livez" || slow=$((slow + 1))
    sleep 0.25
done
begin=$(date +%s%N)
stop_daemon
elapsed=$((($(date +%s%N) - begin) / 1000000))
if [ "$slow" -eq 0 ] && [ "$elapsed" -lt 3000 ] && ! grep -q "Too many open files" "$WORK/many.log"; then
    ok "6. 10,000 tcp checks under a 1,024-descriptor limit: /livez answered 20 of 20 within 1 s (first round done after $ready ms), SIGTERM took $elapsed ms"
else not_ok "6. 10,000 checks" "$slow of 20 /livez over 1 s; first round after $ready ms; SIGTERM took $elapsed ms; $(grep -c 'Too many open files' "$WORK/many.log") 'Too many open files'"; fi

# --- 16: more applications than descriptors ----------------------------------------------------------
# Before: the daemon kept a connection to every application, 1,023 descriptors of 1,024; the next
# listing of the directory failed (EMFILE), was taken for an empty directory, and every second
# scrape reported no application at all.
mkdir "$WORK/apps"
start_helper "$WORK/apps.out" serving numbered "$WORK/apps" 1100
printf 'listen:\n  - address: 127.0.0.1:%s\napps:\n  directory: %s\n  budget: 20s\n' "$PORT" "$WORK/apps" > "$WORK/apps.yaml"
start_daemon "$WORK/apps.yaml" "$WORK/apps.log" "$URL/livez" 30 prlimit --nofile=1024
ups=""
most=0
for _ in 1 2 3 4; do
    ups+="$(curl -s --max-time 30 "$URL/metrics" | grep -c '^weave_app_up{.*} 1$') "
    descriptors=$(ls "/proc/$DAEMON/fd" | wc -l)
    [ "$descriptors" -gt "$most" ] && most=$descriptors
done
livez=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$URL/livez")
stop_daemon
stop_helpers
if [ "$ups" = "1100 1100 1100 1100 " ] && [ "$most" -le $((1024 - 256)) ] && [ "$livez" = 200 ] \
    && ! grep -qi "too many open files" "$WORK/apps.log"; then
    ok "16. 1,100 applications under a 1,024-descriptor limit: all up in each of 4 scrapes, at most $most descriptors open, /livez $livez"
else not_ok "16. more applications than descriptors" "up per scrape: $ups; at most $most descriptors; /livez $livez; $(grep -ci 'too many open files' "$WORK/apps.log") 'too many open files'"; fi

# --- 17: applications that hang ------------------------------------------------------------------------
# Before: asked in name order, 60 sockets that never answer held the 16 request slots for their whole
# timeout (2 s) until the budget (5 s) was spent, and three healthy applications were down at every scrape.
rm -rf "$WORK/apps" && mkdir "$WORK/apps"
start_helper "$WORK/hanging.out" hanging unaccepted "$WORK/apps" 60
start_helper "$WORK/apps.out" serving numbered "$WORK/apps" 3
printf 'listen:\n  - address: 127.0.0.1:%s\napps:\n  directory: %s\n' "$PORT" "$WORK/apps" > "$WORK/hanging.yaml"
start_daemon "$WORK/hanging.yaml" "$WORK/hanging.log" "$URL/livez" 30 || echo "the daemon did not start: $(tail -3 "$WORK/hanging.log")" >&2
ups=""
for _ in 1 2 3; do ups+="$(curl -s --max-time 30 "$URL/metrics" | grep -c '^weave_app_up{app="app-.*} 1$') "; done
stop_daemon
stop_helpers
if [[ "$ups" == *" 3 3 " ]]; then ok "17. 60 applications that never answer: the 3 healthy ones are up from the second scrape on (up per scrape: $ups)"
else not_ok "17. applications that hang starve the others" "healthy applications up per scrape: $ups"; fi

# --- 18: applications that answer a lot ------------------------------------------------------------------
# Before: nothing bounded what one scrape kept of all the applications' answers together. 40 of
# 3.7 MB each took the (release) daemon to 639 MB resident (the answers, then the merged 284 MB), which the
# unit's MemoryMax=256M answers with the OOM killer; three scrapes at once each held as much.
rm -rf "$WORK/apps" && mkdir "$WORK/apps"
start_helper "$WORK/apps.out" serving numbered "$WORK/apps" 40 150000
printf 'listen:\n  - address: 127.0.0.1:%s\napps:\n  directory: %s\n  timeout: 20s\n  budget: 30s\n' "$PORT" "$WORK/apps" > "$WORK/large.yaml"
start_daemon "$WORK/large.yaml" "$WORK/large.log" "$URL/livez" 30 || echo "the daemon did not start: $(tail -3 "$WORK/large.log")" >&2
# Three Prometheus servers at once: they share one reading of the applications.
scrapers=()
for scraper in 1 2 3; do
    curl -s --max-time 60 -o "$WORK/large-$scraper.txt" -w '%{http_code}\n' "$URL/metrics" > "$WORK/large-$scraper.code" &
    scrapers+=("$!")
done
wait "${scrapers[@]}"
code=$(cat "$WORK"/large-*.code | sort -u | tr '\n' ' ')
up=$(grep -c '^weave_app_up{.*} 1$' "$WORK/large-1.txt")
over=$(grep -c '^weave_app_up{.*} 0$' "$WORK/large-1.txt")
peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$DAEMON/status")
stop_daemon
stop_helpers
if [ "$code" = "200 " ] && [ "$up" -ge 1 ] && [ $((up + over)) -eq 40 ] && is_number "$peak" && [ "$peak" -lt $((256 * 1024)) ] \
    && grep -q "max_scrape_bytes" "$WORK/large.log"; then
    ok "18. 40 applications answering 150,000 series (3.9 MB) each, scraped by 3 at once: $up kept, $over down for max_scrape_bytes, peak RSS $((peak / 1024)) MiB"
else not_ok "18. applications that answer a lot" "HTTP $code; $up up, $over down; peak RSS ${peak} KiB"; fi

# --- 19: applications whose /health is enormous ------------------------------------------------------------
# Before: 40 applications each answering /health with 1,000 failing components of 4 KB took the daemon to
# 437 MB with no client asking, and to 1.6-1.8 GB with details: always and a few /health at once; /livez
# went past 2 s. Now an answer over 256 KiB is not read past it, a reason is kept up to 1 KiB, and a round
# keeps 16 MiB of all the applications' components at most.
rm -rf "$WORK/apps" && mkdir "$WORK/apps"
start_helper "$WORK/apps.out" serving numbered "$WORK/apps" 40 1 1000 4000
printf 'listen:\n  - address: 127.0.0.1:%s\ndetails: always\napps:\n  directory: %s\n  health_interval: 1s\n  timeout: 10s\n  budget: 20s\n' \
    "$PORT" "$WORK/apps" > "$WORK/health.yaml"
start_daemon "$WORK/health.yaml" "$WORK/health.log" "$URL/livez" 30 || echo "the daemon did not start: $(tail -3 "$WORK/health.log")" >&2
slowest=0
deadline=$((SECONDS + 8))
readers=()
for reader in 1 2 3 4 5; do
    ( while [ $SECONDS -lt $deadline ]; do curl -s --max-time 10 -o /dev/null "$URL/health"; done ) &
    readers+=("$!")
done
while [ $SECONDS -lt $deadline ]; do
    took=$(curl -s -o /dev/null --max-time 5 -w '%{time_total}' "$URL/livez")
    ms=$(awk -v t="$took" 'BEGIN { printf "%d", t * 1000 }')
    [ "$ms" -gt "$slowest" ] && slowest=$ms
    sleep 0.1
done
wait "${readers[@]}"
curl -s "$URL/health" > "$WORK/health-big.json"
peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$DAEMON/status")
stop_daemon
stop_helpers
if is_number "$peak" && [ "$peak" -lt $((256 * 1024)) ] && [ "$slowest" -lt 100 ] \
    && grep -q '"app-0000:status":\[{[^]]*"status":"fail"[^]]*larger than 262144' "$WORK/health-big.json"; then
    ok "19. 40 applications with 1,000 failing components of 4 KB each, details: always, 5 /health at once: each reported as too large, peak RSS $((peak / 1024)) MiB, /livez at most $slowest ms"
else not_ok "19. applications whose /health is enormous" "peak RSS ${peak} KiB; /livez at most ${slowest} ms; $(head -c 300 "$WORK/health-big.json")"; fi

finish
