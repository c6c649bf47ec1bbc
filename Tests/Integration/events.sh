#!/usr/bin/env bash
# The applications' events in the daemon's journal: the example service (Examples/Orders) causes
# each kind (slow resolutions, failed factory runs, a memory-pressure eviction, a health
# transition) a known number of times; a real systemd-journald, read back with journalctl -o json,
# holds each under SYSLOG_IDENTIFIER=weave-healthd with its MESSAGE_ID and WEAVE_* fields, exactly
# as many as were caused, or a summary entry that says how many were suppressed. A second one
# starts with a nest of factories of known times: its startup and slow chains arrive true in the
# journal, /dependencies, the status page and weave-health why. Then the application restarts: its
# new log is read from its start, and nothing is written twice.
# Usage: Tests/Integration/events.sh PATH-TO-weave-healthd PATH-TO-Orders PATH-TO-weave-health
set -uo pipefail

source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
ORDERS=$(realpath "$2")
PROBE=$(realpath "$3")
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
APPS="$WORK/apps"
mkdir -p "$APPS"
id_of() { grep -rh "static let $1 = WeaveEvent(" "$ROOT/Sources" | grep -o '[0-9a-f]\{32\}'; }
SLOW=$(id_of slowResolution); ERROR=$(id_of resolutionError); PRESSURE=$(id_of memoryPressure); TRANSITION=$(id_of healthTransition)
SUPPRESSED=$(id_of recordsSuppressed); STARTUP=$(id_of startupResolutions)
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
start_daemon "$WORK/config.yaml" "$WORK/daemon.err" "$URL/livez" 20 WEAVE_LOG_TARGET=journal \
    || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.err")"

APP=shop-$RANDOM
APP_PORT=$(free_port)
start_app() {
    "$ORDERS" --name "$APP" --port "$APP_PORT" --apps-dir "$APPS" --slow-factory-ms 50 > "$WORK/app.log" 2>&1 &
    APP_PID=$!
    PIDS+=("$APP_PID")
    wait_for "http://127.0.0.1:$APP_PORT/livez" 60 || not_ok "the application starts" "$(tail -5 "$WORK/app.log")"
    for _ in $(seq 100); do curl -s "$URL/health" | holds "\"$APP:status\".*\"pass\"" && return; sleep 0.1; done
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
if wait_count 1 "$STARTUP"; then ok "its startup, ended when it was first ready: 1 entry in the daemon's journal"
else not_ok "the startup entry" "$(count "$STARTUP") found"; fi
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

# --- why it was slow: a nest of 5, 10 and 20 ms, true in the journal, /dependencies, /why and the page --------------
# Catalog's factory sleeps 5 ms and makes Pricing (10 ms), which makes Inventory (20 ms), at startup:
# every total and self time within 1 ms + 5 % of what each factory measured itself (its nest.log line).
NEST=nest-$RANDOM
NEST_PORT=$(free_port)
"$ORDERS" --name "$NEST" --port "$NEST_PORT" --apps-dir "$APPS" --startup-nest-ms 5,10,20 > "$WORK/nest.log" 2>&1 &
PIDS+=("$!")
wait_for "http://127.0.0.1:$NEST_PORT/livez" 60 || not_ok "the nest application starts" "$(tail -5 "$WORK/nest.log")"
# true_times NAME:TOTAL_MS:SELF_MS …: each within 1 ms + 5 % of what its factory measured, all three there.
true_times() {
    "$PY" -c '
import re, sys
truth = {m[1]: (float(m[2]), float(m[3])) for m in re.finditer(r"^nest (\w+) total_ms=([\d.]+) self_ms=([\d.]+)$", open(sys.argv[1]).read(), re.M)}
assert sorted(truth) == ["Catalog", "Inventory", "Pricing"], truth
seen, wrong = set(), []
for item in sys.argv[2:]:
    name, total, own = item.rsplit(":", 2)
    if name not in truth: continue
    seen.add(name)
    for what, got, want in (("total", float(total), truth[name][0]), ("self", float(own), truth[name][1])):
        if abs(got - want) > 1 + 0.05 * want: wrong.append(f"{name} {what} {got} ms, not {want}")
missing = set(truth) - seen
print("; ".join(wrong + [f"{name} missing" for name in sorted(missing)]))' "$WORK/nest.log" "$@"
}
nest_entry() { # MESSAGE_ID [FIELD=VALUE]: the last such entry about the nest, as JSON
    for _ in $(seq 200); do
        journalctl -o json SYSLOG_IDENTIFIER=weave-healthd "WEAVE_APP=$NEST" "MESSAGE_ID=$1" "${@:2}" 2>/dev/null | tail -1 > "$WORK/entry.json"
        [ -s "$WORK/entry.json" ] && return 0
        sleep 0.1
    done
    return 1
}
# NAME:TOTAL:SELF per run of an entry's WEAVE_CHAIN with its WEAVE_CHAIN_USEC (in ms).
entry_runs() { "$PY" -c '
import json, sys
e = json.load(open(sys.argv[1]))
names, times = e["WEAVE_CHAIN"].split(" → "), [t.split("/") for t in e["WEAVE_CHAIN_USEC"].split()]
print(" ".join(f"{n}:{int(t[0]) / 1000}:{int(t[1]) / 1000}" for n, t in zip(names, times)))' "$WORK/entry.json"; }
field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$WORK/entry.json" "$1"; }

if nest_entry "$STARTUP"; then
    runs=$(entry_runs); wrong=$(true_times $runs)
    if [ "$(field WEAVE_CHAIN)" = "Catalog → Pricing → Inventory" ] && [ "$(field WEAVE_SLOWEST)" = Inventory ] && [ -z "$wrong" ]; then
        ok "its startup in the journal: WEAVE_CHAIN Catalog → Pricing → Inventory, slowest Inventory, each run's total and self time true ($runs)"
    else not_ok "the startup entry's chain" "$(field WEAVE_CHAIN) / $(field WEAVE_SLOWEST) / $runs: $wrong"; fi
else not_ok "the nest's startup entry" "none; $(tail -3 "$WORK/nest.log")"; fi
if nest_entry "$SLOW" WEAVE_DEPENDENCY=Catalog; then
    runs=$(entry_runs); wrong=$(true_times $runs)
    if [ "$(field WEAVE_CHAIN)" = "Catalog → Pricing → Inventory" ] && [ -z "$wrong" ]; then
        ok "Catalog's slow resolution in the journal: the same chain, each run's times true"
    else not_ok "the slow resolution's chain" "$(field WEAVE_CHAIN) / $runs: $wrong"; fi
else not_ok "Catalog's slow resolution in the journal" "none"; fi

curl -s --max-time 5 --unix-socket "$APPS/$NEST.sock" "http://localhost/dependencies" > "$WORK/dependencies.json"
runs=$("$PY" -c '
import json, sys
runs = json.load(open(sys.argv[1]))["startup"]["runs"]
parents = {r["name"]: r["parent"] for r in runs}
assert parents.get("Catalog", 0) is None and parents.get("Pricing") == "Catalog" and parents.get("Inventory") == "Pricing", parents
print(" ".join(":".join((r["name"], str(r["total"] * 1000), str(r["self"] * 1000))) for r in runs if r["name"] in parents and " " not in r["name"]))' "$WORK/dependencies.json" 2>&1)
wrong=$(true_times $runs 2>&1)
if [ -n "$runs" ] && [[ "$runs" != *Error* ]] && [ -z "$wrong" ]; then
    ok "its /dependencies: the startup tree with parents Catalog ← Pricing ← Inventory, each run's times true"
else not_ok "/dependencies' startup tree" "$runs: $wrong"; fi

# weave-health why: the daemon's trees (it read /dependencies at its health round).
for _ in $(seq 50); do "$PROBE" why "$NEST/Pricing" --url "$URL" > "$WORK/why.txt" 2> "$WORK/why.err" && grep -q "^Startup" "$WORK/why.txt" && break; sleep 0.2; done
why=$("$PY" -c '
import re, sys
text = open(sys.argv[1]).read()
scale = {"ns": 1e-6, "µs": 1e-3, "ms": 1, "s": 1e3}
slow, _, startup = text.partition("Startup, first resolutions:")
def runs(part):
    return [(m[1], float(m[2]) * scale[m[3]], float(m[4]) * scale[m[5]])
            for m in re.finditer(r"^ +(?:└─ )?(\S+)  ([\d.]+) (ns|µs|ms|s), self ([\d.]+) (ns|µs|ms|s)", part, re.M)]
a, b = runs(slow), runs(startup)
assert [n for n, _, _ in a] == ["Catalog", "Pricing", "Inventory"], a
# The startup tree goes on below the dependency asked about; one mark, on the most self time, in both.
assert [n for n, _, _ in b] == ["Catalog", "Pricing", "Inventory"], b
for part in (slow, startup):
    assert part.rstrip().endswith("← slowest") and part.count("← slowest") == 1, part
# The times add up: each run is its self time and the lines one level under it (its runs shown and
# "other nested resolves"), within the rounding of three digits.
def adds_up(part):
    rows = []
    for line in part.splitlines():
        m = re.match(r"^( +)(└─ )?(.+?)  ([\d.]+) (ns|µs|ms|s)(?:, self ([\d.]+) (ns|µs|ms|s))?", line)
        if m: rows.append((len(m[1]) + len(m[2] or ""), float(m[4]) * scale[m[5]], float(m[6]) * scale[m[7]] if m[6] else None))
    for i, (column, total, own) in enumerate(rows):
        if own is None: continue
        under = 0.0
        for deeper, t, _ in rows[i + 1:]:
            if deeper <= column: break
            if deeper == column + 3: under += t
        assert abs(own + under - total) <= 0.01 * total + 0.02, (part, total, own, under)
adds_up(slow); adds_up(startup)
print(" ".join(f"{n}:{t}:{s}" for n, t, s in a + b))' "$WORK/why.txt" 2>&1)
wrong=$(true_times $why 2>&1)
if [[ "$why" != *Error* ]] && [ -z "$wrong" ]; then
    ok "weave-health why $NEST/Pricing: the slow chain and the startup chain as trees, each run's times true"
else not_ok "weave-health why" "$(cat "$WORK/why.txt" "$WORK/why.err"): $why $wrong"; fi
"$PROBE" why "$NEST/Nothing" --url "$URL" > /dev/null 2> "$WORK/why.err"; unknown=$?
"$PROBE" why "nobody-$RANDOM/Catalog" --url "$URL" > /dev/null 2>&1; nobody=$?
if [ "$unknown" = 1 ] && grep -q "no slow resolution and no startup run" "$WORK/why.err" && [ "$nobody" = 1 ]; then
    ok "weave-health why of a dependency or an application the daemon does not know: exit 1, saying so"
else not_ok "weave-health why of unknowns" "exit $unknown and $nobody: $(cat "$WORK/why.err")"; fi
page=$(curl -s "$URL/?app=$NEST")
if [[ "$page" == *"<caption>Startup: resolving took "* ]] && [[ "$page" == *'<td style="padding-left:2.8em">Inventory</td>'* ]]; then
    ok "the status page draws its startup as a waterfall, Inventory two levels under Catalog"
else not_ok "the startup waterfall" "$(grep -o '<table class="startup">.*' <<< "$page" | head -5)"; fi

# --- a restart: the new log is read from its start, the old one never again ---------------------------------------
kill -TERM "$APP_PID"; wait "$APP_PID" 2>/dev/null
for _ in $(seq 100); do [ -e "$APPS/$APP.sock" ] || break; sleep 0.1; done
start_app
curl -s -o /dev/null "$APP_URL/report"
if wait_count 4 "$SLOW" dependency=ReportBuilder suppressed=- && wait_count 2 "$STARTUP" && sleep 3 \
    && [ "$(count "$SLOW" suppressed=-)" = 4 ] && [ "$(count "$PRESSURE")" = 1 ] && [ "$(count "$STARTUP")" = 2 ]; then
    ok "after a restart, its new startup and one new slow resolution are written, nothing of its earlier run again"
else not_ok "events across a restart" "slow: $(count "$SLOW" suppressed=-), pressure: $(count "$PRESSURE"), startups: $(count "$STARTUP")"; fi

expect "nothing logged to stderr: every entry went to the journal" test ! -s "$WORK/daemon.err"
finish
