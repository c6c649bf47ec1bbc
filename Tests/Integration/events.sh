#!/usr/bin/env bash
# The applications' events in the daemon's journal: the example service (Examples/Orders) causes
# each kind (slow resolutions, failed factory runs, a memory-pressure eviction, a health
# transition) a known number of times; a real systemd-journald, read back with journalctl -o json,
# holds each under SYSLOG_IDENTIFIER=weave-healthd with its MESSAGE_ID and WEAVE_* fields, exactly
# as many as were caused, or a summary entry that says how many were suppressed. Then the
# application restarts: its new log is read from its start, and nothing is written twice.
# Usage: Tests/Integration/events.sh PATH-TO-weave-healthd PATH-TO-Orders
set -uo pipefail

source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
ORDERS=$(realpath "$2")
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
APPS="$WORK/apps"
mkdir -p "$APPS"
id_of() { grep -rh "static let $1 = WeaveEvent(" "$ROOT/Sources" | grep -o '[0-9a-f]\{32\}'; }
SLOW=$(id_of slowResolution); ERROR=$(id_of resolutionError); PRESSURE=$(id_of memoryPressure); TRANSITION=$(id_of healthTransition)
SUPPRESSED=$(id_of recordsSuppressed)
start_journald

cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
details: always
log_rate_limit: {burst: 5, interval: 10s}
apps:
  directory: $APPS
  health_interval: 1s
checks: []
YAML
WEAVE_LOG_TARGET=journal "$BIN" --config "$WORK/config.yaml" 2> "$WORK/daemon.err" &
PIDS+=("$!")
wait_for "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.err")"

APP=shop-$RANDOM
APP_PORT=$(free_port)
start_app() {
    "$ORDERS" --name "$APP" --port "$APP_PORT" --apps-dir "$APPS" --slow-factory-ms 50 > "$WORK/app.log" 2>&1 &
    APP_PID=$!
    PIDS+=("$APP_PID")
    wait_for "http://127.0.0.1:$APP_PORT/livez" 60 || not_ok "the application starts" "$(tail -5 "$WORK/app.log")"
    for _ in $(seq 100); do curl -s "$URL/health" | grep -q "\"$APP:status\".*\"pass\"" && return; sleep 0.1; done
}
start_app
APP_URL="http://127.0.0.1:$APP_PORT"

# Counts the daemon's entries about the application: MESSAGE_ID, then key=value filters on the entry's fields;
# "-" as a value: the field is absent.
count() {
    journalctl -o json SYSLOG_IDENTIFIER=weave-healthd "WEAVE_APP=$APP" "MESSAGE_ID=$1" 2>/dev/null \
        | "$PY" -c '
import json, sys
want = [a.split("=", 1) for a in sys.argv[1:]]
n = 0
for line in sys.stdin:
    entry = json.loads(line)
    if all((entry.get("WEAVE_" + k.upper()) is None) if v == "-" else entry.get("WEAVE_" + k.upper()) == v for k, v in want):
        n += 1
print(n)' "${@:2}"
}
wait_count() { # EXPECTED, then count's arguments: up to 30 s
    for _ in $(seq 300); do [ "$(count "${@:2}")" = "$1" ] && return 0; sleep 0.1; done
    return 1
}

# --- what the application causes -------------------------------------------------------------------------------
for _ in 1 2 3; do curl -s -o /dev/null "$APP_URL/report"; done
for _ in $(seq 8); do curl -s -o /dev/null "$APP_URL/refunds/gateway"; done
curl -s -o /dev/null -X POST "$APP_URL/demo/memory-pressure"
curl -s -o /dev/null -X POST "$APP_URL/demo/payments/degrade"

if wait_count 3 "$SLOW" dependency=ReportBuilder suppressed=-; then
    fields=$(journalctl -o json SYSLOG_IDENTIFIER=weave-healthd "WEAVE_APP=$APP" "MESSAGE_ID=$SLOW" | tail -1 \
        | "$PY" -c 'import json,sys; e=json.loads(sys.stdin.read()); print(int(e["WEAVE_DURATION_USEC"]) >= 50000, e["WEAVE_THRESHOLD_USEC"], e["PRIORITY"])')
    if [ "$fields" = "True 10000 4" ]; then ok "3 slow resolutions caused, 3 in the daemon's journal (MESSAGE_ID, WEAVE_APP, WEAVE_DEPENDENCY, duration ≥ 50 ms, threshold 10 ms, warning)"
    else not_ok "the slow resolutions' fields" "$fields"; fi
else not_ok "3 slow resolutions in the daemon's journal" "$(count "$SLOW") found; $(tail -3 "$WORK/daemon.err")"; fi

# 8 failed factory runs, 5 a window: 5 written, then one summary of the other 3 when the window ends.
if wait_count 5 "$ERROR" dependency=RefundGateway error_kind=factory_failed suppressed=- \
    && wait_count 1 "$SUPPRESSED" suppressed=3 suppressed_event="resolution error" suppressed_message_id="$ERROR"; then
    ok "8 failed factory runs caused: 5 in the daemon's journal with WEAVE_ERROR_KIND=factory_failed, and a summary of the 3 suppressed under its own MESSAGE_ID"
else not_ok "the resolution errors, rate-limited" "$(count "$ERROR" suppressed=-) written, summaries: $(count "$SUPPRESSED" suppressed=3)"; fi
# One copy of each event: while the daemon reads its socket, the application does not log them itself.
own=$(journalctl -o json SYSLOG_IDENTIFIER="$APP" "MESSAGE_ID=$ERROR" 2>/dev/null | wc -l)
if [ "$own" = 0 ] && [ "$(count "$ERROR" dependency=RefundGateway suppressed=-)" = 5 ]; then
    ok "one copy of each event in the journal: the daemon's, none from the application itself"
else not_ok "events written once" "$own from the application; $(journalctl -o json SYSLOG_IDENTIFIER="$APP" | tail -2)"; fi

if wait_count 1 "$PRESSURE"; then ok "a memory-pressure eviction caused, 1 in the daemon's journal"
else not_ok "the memory-pressure event" "$(count "$PRESSURE") found"; fi

if wait_count 1 "$TRANSITION" check=payments state_from=healthy state_to=degraded; then
    ok "a health transition caused, 1 in the daemon's journal (WEAVE_CHECK, WEAVE_STATE_FROM, WEAVE_STATE_TO)"
else not_ok "the health transition" "$(count "$TRANSITION") found; $(journalctl -o json SYSLOG_IDENTIFIER=weave-healthd "WEAVE_APP=$APP" | tail -2)"; fi
# journalctl -x fills a catalog text's @FIELD@s from the entry: every entry about the application has
# every field its MESSAGE_ID's text names (a summary, with its own MESSAGE_ID, too), so none shows unfilled.
unfilled=$(journalctl -o json SYSLOG_IDENTIFIER=weave-healthd "WEAVE_APP=$APP" 2>/dev/null | "$PY" -c '
import json, re, sys
texts, current = {}, None
for line in open(sys.argv[1]):
    if line.startswith("-- "):
        current = line[3:].strip()
        texts[current] = set()
    elif current:
        texts[current] |= set(re.findall(r"@([A-Z0-9_]+)@", line))
checked, unfilled = 0, set()
for line in sys.stdin:
    entry = json.loads(line)
    fields = texts.get(entry.get("MESSAGE_ID"))
    if fields is None:
        continue
    checked += 1
    unfilled |= {entry["MESSAGE_ID"] + " " + field for field in fields if field not in entry}
print(" ".join(sorted(unfilled)) if unfilled else f"none of {checked}")' "$ROOT/systemd/weave-healthd.catalog")
if [[ "$unfilled" == "none of "* ]] && [ "${unfilled#none of }" -ge 11 ]; then
    ok "the catalog's texts find every field they name in the application's entries ($unfilled unfilled)"
else not_ok "catalog fields in the entries" "unfilled: $unfilled"; fi

# --- one transition, one time: the application's, in /metrics, /health, the status page and the journal ----------
curl -s -o /dev/null -X POST "$APP_URL/demo/payments/recover"
seen_metrics=""; seen_health=""; seen_page=""
# Each is timed when its answer arrived: the application shares one /metrics render a second, so
# a scrape may wait up to a second for its answer.
for _ in $(seq 200); do
    # (Read whole: under pipefail, grep -q ending early would fail curl's side of a pipe.)
    if [ -z "$seen_metrics" ] && [[ "$(curl -s "$URL/metrics")" == *"weave_health_status{app=\"$APP\",check=\"payments\",state=\"healthy\"} 1"* ]]; then
        seen_metrics=$(date +%s.%N)
    fi
    if [ -z "$seen_health" ] && curl -s "$URL/health" > "$WORK/health.json" \
        && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["checks"][sys.argv[2]+"/payments:status"][0]["status"]!="pass")' "$WORK/health.json" "$APP"; then
        seen_health=$(date +%s.%N)
        changed=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["checks"][sys.argv[2]+"/payments:status"][0]["changedAt"])' "$WORK/health.json" "$APP")
    fi
    [ -z "$seen_page" ] && [[ "$(curl -s "$URL/?app=$APP")" == *'<tr><td>payments</td><td class="state healthy">healthy</td>'* ]] && seen_page=$(date +%s.%N)
    [ -n "$seen_metrics" ] && [ -n "$seen_health" ] && [ -n "$seen_page" ] && break
    sleep 0.05
done
wait_count 1 "$TRANSITION" check=payments state_to=healthy
event_time=$(journalctl -o json SYSLOG_IDENTIFIER=weave-healthd "WEAVE_APP=$APP" "MESSAGE_ID=$TRANSITION" WEAVE_STATE_TO=healthy | tail -1 \
    | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read())["WEAVE_EVENT_TIME"])')
verdict=$("$PY" -c '
import sys
from datetime import datetime, timezone
metrics, health, page, changed, event = sys.argv[1:6]
changed = datetime.strptime(changed, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
lag, page_lag, apart = float(health) - float(metrics), float(page) - float(metrics), abs(changed - float(event))
print(("ok " if lag <= 1.0 and page_lag <= 1.0 and apart <= 1.0 else "")
      + f"/health {lag:+.2f} s and the status page {page_lag:+.2f} s after /metrics; /health changedAt and the journal entry {apart:.3f} s apart")' \
    "${seen_metrics:-0}" "${seen_health:-99999999999}" "${seen_page:-99999999999}" "${changed:-1970-01-01T00:00:00.000Z}" "${event_time:-0}")
if [[ "$verdict" == "ok "* ]]; then ok "one transition, one time: ${verdict#ok }"
else not_ok "one time per transition" "$verdict"; fi

# --- a restart: the new log is read from its start, the old one never again ---------------------------------------
kill -TERM "$APP_PID"; wait "$APP_PID" 2>/dev/null
for _ in $(seq 100); do [ -e "$APPS/$APP.sock" ] || break; sleep 0.1; done
start_app
curl -s -o /dev/null "$APP_URL/report"
if wait_count 4 "$SLOW" dependency=ReportBuilder suppressed=- && sleep 3 && [ "$(count "$SLOW" suppressed=-)" = 4 ] \
    && [ "$(count "$PRESSURE")" = 1 ]; then
    ok "after a restart, its one new slow resolution is written, nothing of its earlier run again"
else not_ok "events across a restart" "slow: $(count "$SLOW" suppressed=-), pressure: $(count "$PRESSURE")"; fi

expect "nothing logged to stderr: every entry went to the journal" test ! -s "$WORK/daemon.err"
finish
