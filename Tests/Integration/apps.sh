#!/usr/bin/env bash
# weave-healthd aggregating applications, against real processes: three instances of the example
# service (Examples/Orders) discovered in a directory, a real systemd-journald, promtool, the Python
# client's parsers, a real Prometheus server, weave-health, and sockets that hang or talk nonsense.
# Usage: Tests/Integration/apps.sh PATH-TO-weave-healthd PATH-TO-Orders PATH-TO-weave-health
set -uo pipefail

source "$(dirname "$0")/lib.sh"
ORDERS=$(realpath "$2")
PROBE=$(realpath "$3")
ROOT=$(cd "$HERE/../.." && pwd)
APPS="$WORK/apps"
mkdir -p "$APPS"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
id_of() { grep -rh "static let $1 = WeaveEvent(" "$ROOT/Sources" | grep -o '[0-9a-f]\{32\}'; }
metrics() { curl -s --max-time 10 "$URL/metrics"; }
# Whether /metrics has a line matching PATTERN.
metrics_has() { metrics | holds -- "$1"; }
wait_ready() { # PID LOG: a helper started in the background (stopped at exit); waits for its "ready"
    PIDS+=("$1")
    for _ in $(seq 50); do grep -q ready "$2" && break; sleep 0.1; done
}
wait_metrics() { # PATTERN, seconds: until /metrics has a line matching PATTERN
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do metrics_has "$1" && return 0; sleep 0.2; done
    return 1
}
start_journald
# Entries of this run only: a journald that runs already keeps earlier runs' (and other programs').
SINCE="@$(date +%s)"

cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
  - unix: $WORK/weave-healthd.sock
details: always
apps:
  directory: $APPS
  timeout: 1s
  budget: 2s
  health_interval: 1s
checks:
  - name: disk-root
    type: disk
    path: /
    warn_free_percent: 1
    fail_free_percent: 0
YAML
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"

declare -A APP_PID APP_PORT
for app in orders billing shipping; do
    APP_PORT[$app]=$(free_port)
    "$ORDERS" --name "$app" --port "${APP_PORT[$app]}" --apps-dir "$APPS" --slow-factory-ms 50 > "$WORK/$app.log" 2>&1 &
    APP_PID[$app]=$!
    PIDS+=("$!")
done
for app in orders billing shipping; do wait_for "http://127.0.0.1:${APP_PORT[$app]}/livez" 60 || not_ok "$app starts" "$(tail -5 "$WORK/$app.log")"; done

# --- discovery: no configuration change, no reload ------------------------------------------------
if wait_metrics 'weave_app_up{app="orders"} 1' 10 && wait_metrics 'weave_app_up{app="billing"} 1' 5 && wait_metrics 'weave_app_up{app="shipping"} 1' 5; then
    ok "three applications discovered in the directory: weave_app_up 1 each"
else not_ok "three applications discovered" "$(metrics | grep weave_app)"; fi
metrics > "$WORK/metrics.txt"
expect "the applications' registrations are labelled with app" grep -q '^weave_registrations{app="orders",scope="singleton"} 2$' "$WORK/metrics.txt"
expect "the daemon's own families stay unlabelled" grep -q '^weave_health_status{check="disk-root",state="healthy"} 1$' "$WORK/metrics.txt"
expect "weave_app_scrape_duration_seconds per app" grep -q '^weave_app_scrape_duration_seconds{app="shipping"} ' "$WORK/metrics.txt"
types=$(grep -c '^# TYPE weave_registrations ' "$WORK/metrics.txt")
if [ "$types" -eq 1 ]; then ok "one TYPE line per family across the daemon and three apps"; else not_ok "one TYPE line per family" "$types"; fi

# --- the daemon's own socket, linked into the directory, is not an application -----------------------
ln -s "$WORK/weave-healthd.sock" "$APPS/self.sock"
sleep 1.5
if ! metrics_has 'app="self"' && ! curl -s "$URL/health" | grep '"self' > /dev/null; then
    ok "a link to the daemon's own socket in the directory is skipped (no app=\"self\", no self/… components)"
else not_ok "the daemon's own socket is skipped" "$(metrics | grep 'app="self"' | head -3)"; fi
expect "the daemon says it skipped it" grep -q "self.sock is weave-healthd's own socket" "$WORK/daemon.log"
rm -f "$APPS/self.sock"

# --- health rounds are not resolves ------------------------------------------------------------------
# No traffic: the apps run their checks (every 10 s) and the daemon reads them (every 1 s), and no
# resolve count moves, the apps' or the daemon's.
metrics | grep '^weave_resolutions_total' | sort > "$WORK/resolves-before.txt"
sleep 15
metrics | grep '^weave_resolutions_total' | sort > "$WORK/resolves-after.txt"
if [ -s "$WORK/resolves-before.txt" ] && cmp -s "$WORK/resolves-before.txt" "$WORK/resolves-after.txt"; then
    ok "15 s without traffic leave every resolve count where it was ($(wc -l < "$WORK/resolves-after.txt") series)"
else not_ok "no traffic, no resolves" "$(diff "$WORK/resolves-before.txt" "$WORK/resolves-after.txt" | head)"; fi

# --- a slow resolution in one app: /metrics, and the daemon's journal entry under its name ----------
# (An application whose socket the daemon reads leaves its events to the daemon, which writes each
# once with WEAVE_APP: the application's own log has none of them.)
curl -s "http://127.0.0.1:${APP_PORT[orders]}/report" > /dev/null
if wait_metrics '^weave_slow_resolutions_total{app="orders",dependency="ReportBuilder"} 1$' 5; then
    ok "a slow resolution in orders is on the daemon's /metrics under app=\"orders\" at the next scrape"
else not_ok "slow resolution on /metrics" "$(metrics | grep 'weave_slow_resolutions_total' | head)"; fi
expect "the other apps' series are unaffected" bash -c "curl -s '$URL/metrics' | grep -q '^weave_slow_resolutions_total{app=\"billing\",dependency=\"ReportBuilder\"} 0$'"
slow_id=$(id_of slowResolution)
# The daemon's entry of it (on its standard error here: one line, its fields as FIELD=value).
found=no
for _ in $(seq 50); do
    grep -F "MESSAGE_ID=$slow_id" "$WORK/daemon.log" | grep -F "WEAVE_APP=orders" | grep -F "WEAVE_DEPENDENCY=ReportBuilder" > "$WORK/slow.lines" && { found=yes; break; }
    sleep 0.1
done
own=$(journalctl -o json --since "$SINCE" SYSLOG_IDENTIFIER=orders "MESSAGE_ID=$slow_id" 2>/dev/null | wc -l)
if [ $found = yes ] && [ "$own" = 0 ]; then
    ok "the slow resolution is written once, by the daemon with WEAVE_APP=orders and its MESSAGE_ID; none by orders itself in journald"
else not_ok "the slow resolution of orders, once" "found $found, $own from orders itself; $(grep -F ReportBuilder "$WORK/daemon.log" | tail -2)"; fi
# The catalog's explanation of that event names only fields the entry has, and the metric label it points to exists.
placeholders=$(awk -v id="-- $slow_id" '$0 == id { inside = 1; next } /^-- / { inside = 0 } inside' "$ROOT/systemd/weave-healthd.catalog" \
    | grep -o '@[A-Z0-9_]*@' | tr -d @ | sort -u)
absent=$(for field in $placeholders; do grep -q " $field=" "$WORK/slow.lines" || echo "$field"; done)
label=$(grep -o 'weave_resolve_duration_seconds{[a-z_]*=' "$ROOT/systemd/weave-healthd.catalog" | head -1 | sed 's/.*{//; s/=$//')
if [ -n "$placeholders" ] && [ -z "$absent" ] && [ $found = yes ] && metrics_has "^weave_resolve_duration_seconds_count{app=\"orders\",$label=\"ReportBuilder\""; then
    ok "the catalog's slow-resolution text uses the entry's fields ($(echo $placeholders)) and the label $label"
else not_ok "the catalog's slow-resolution text matches the entry" "placeholders: $(echo $placeholders); absent: $(echo $absent); label: $label"; fi

# --- formats: promtool, the Python client, a real Prometheus ----------------------------------------
expect_promtool_clean "$WORK/metrics.txt" "promtool check metrics: the aggregate, text format, clean"
curl -s -H 'Accept: application/openmetrics-text; version=1.0.0' "$URL/metrics" -o "$WORK/metrics.om"
unexpected=$(openmetrics_findings "$WORK/metrics.om")
if [ -z "$unexpected" ]; then ok "promtool check metrics: the aggregate, OpenMetrics (but for counter HELP naming)"; else not_ok "promtool check metrics (OpenMetrics)" "$unexpected"; fi
expect "prometheus_client parses the aggregate (text)" "$PY" "$HERE/parse_exposition.py" text "$WORK/metrics.txt"
expect "prometheus_client parses the aggregate (OpenMetrics)" "$PY" "$HERE/parse_exposition.py" openmetrics "$WORK/metrics.om"
curl -s "http://127.0.0.1:${APP_PORT[orders]}/orders" > /dev/null
curl -s "http://127.0.0.1:${APP_PORT[orders]}/metrics" > "$WORK/app-metrics.txt"
expect_promtool_clean "$WORK/app-metrics.txt" \
    "promtool check metrics: the app's own /metrics (Hummingbird route; swift-prometheus registry with MetricsBridge beside the container)"
types=$(grep -c '^# TYPE weave_resolve_duration_seconds ' "$WORK/app-metrics.txt")
if [ "$types" -eq 1 ] && grep -q '^orders_requests_total 1$' "$WORK/app-metrics.txt"; then ok "the registry's own families are served, the bridge's copies of the container's are not"
else not_ok "registry families without the bridge's copies" "types=$types $(grep orders_requests "$WORK/app-metrics.txt")"; fi
if wait_metrics '^orders_requests_total{app="orders"} 1$' 5; then ok "the app's swift-prometheus counter on the daemon's /metrics with app=\"orders\""
else not_ok "the app's own counter through the daemon" "$(metrics | grep orders_requests)"; fi

start_prometheus "$PORT"
stored=""
for _ in $(seq 150); do
    stored=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query?query=count%20by%20(app)%20(weave_resolutions_total)" | grep -o '"app":"[a-z]*"' | sort | tr '\n' ' ')
    [ "$stored" = '"app":"billing" "app":"orders" "app":"shipping" ' ] && break
    sleep 0.2
done
if [ "$stored" = '"app":"billing" "app":"orders" "app":"shipping" ' ]; then ok "a real Prometheus stores series of all three apps"
else not_ok "Prometheus stores series of all three apps" "$stored $(tail -3 "$WORK/prometheus.log")"; fi
# Without native histograms Prometheus asks for OpenMetrics: the factory's latency is a classic histogram.
classic=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode \
    'query=weave_resolve_duration_seconds_count{app="orders",dependency="ReportBuilder",path="factory"}')
if grep -q '"value":\[' <<<"$classic" && ! grep -q '"histogram"' <<<"$classic"; then ok "without the feature flag, Prometheus 2.42 stores classic histogram series (_count a float sample)"
else not_ok "classic histograms without the feature flag" "$classic"; fi
kill -TERM "$PROMETHEUS"; wait "$PROMETHEUS" 2>/dev/null

# --- native histograms: the protobuf exposition, end to end -------------------------------------------
PROTOBUF='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited'
type=$(curl -s -o "$WORK/metrics.pb" -w '%{content_type}' -H "Accept: $PROTOBUF" "$URL/metrics")
if [[ "$type" == application/vnd.google.protobuf* ]] && [ -s "$WORK/metrics.pb" ]; then ok "the daemon answers an Accept of protobuf with it ($(wc -c < "$WORK/metrics.pb") bytes)"
else not_ok "the daemon's protobuf answer" "$type"; fi
type=$(curl -s -o /dev/null -w '%{content_type}' -H "Accept: $PROTOBUF" "http://127.0.0.1:${APP_PORT[orders]}/metrics")
if [[ "$type" == application/vnd.google.protobuf* ]]; then ok "so does the application's own /metrics (Hummingbird route)"; else not_ok "the app's protobuf answer" "$type"; fi
PROM_RULES="$ROOT/monitoring/rules/weave-recording.yml" start_prometheus "$PORT" --enable-feature=native-histograms
# Factory runs of 50 ms in billing while Prometheus scrapes, so that the rate over a minute has them.
series='weave_resolve_duration_seconds{app="billing",dependency="ReportBuilder",path="factory"}'
native="" p50="" answer=""
for _ in $(seq 60); do
    curl -s "http://127.0.0.1:${APP_PORT[billing]}/report" > /dev/null
    native=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$series")
    answer=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=histogram_quantile(0.5, rate($series[1m]))")
    p50=$(grep -o '"value":\[[^]]*\]' <<<"$answer" | grep -o '"[0-9.e+-]*"\]' | tr -d '"]')
    [ -n "$p50" ] && break
    sleep 0.5
done
if grep -q '"histogram":\[' <<<"$native" && ! grep -q '"value":\[' <<<"$native"; then
    ok "with --enable-feature=native-histograms the factory's latency is one native histogram series (the query API returns histogram)"
else not_ok "a native histogram in Prometheus" "$native $(tail -3 "$WORK/prometheus.log")"; fi
if awk -v v="$p50" 'BEGIN { exit !(v != "" && v > 0.0475 && v < 0.0525) }'; then
    ok "histogram_quantile(0.5, rate(…[1m])) over the native series is within 5 % of the 50 ms factory ($p50 s)"
else not_ok "the native p50 of a 50 ms factory" "p50=$p50 $answer"; fi
# The recording rule reads the native histogram: its p99 is in the bucket of 50 ms, (48.2 ms, 52.6 ms].
p99=""
for _ in $(seq 20); do
    curl -s "http://127.0.0.1:${APP_PORT[billing]}/report" > /dev/null
    answer=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode \
        'query=dependency:weave_resolve_duration_seconds:p99_rate5m{app="billing",dependency="ReportBuilder",path="factory"}')
    p99=$(grep -o '"value":\[[^]]*\]' <<<"$answer" | grep -o '"[0-9.e+-]*"\]' | tr -d '"]')
    [ -n "$p99" ] && break
    sleep 0.5
done
if awk -v v="$p99" 'BEGIN { exit !(v != "" && v > 0.0482 && v <= 0.0526) }'; then
    ok "the p99 recording rule reads the native series: $p99 s, in the 50 ms factory's bucket"
else not_ok "the p99 recording rule over native series" "p99=$p99 $answer"; fi
kill -TERM "$PROMETHEUS"; wait "$PROMETHEUS" 2>/dev/null

# --- health across apps -------------------------------------------------------------------------
health=$(curl -s "$URL/health")
if grep -q '"orders/Database:status":\[{[^]]*"status":"pass"' <<<"$health" && grep -q '"shipping/payments:status"' <<<"$health"; then
    ok "/health lists each app's components as <app>/<check>"
else not_ok "/health lists <app>/<check>" "$health"; fi
curl -s -X POST "http://127.0.0.1:${APP_PORT[billing]}/demo/payments/degrade" > /dev/null
warned=no
# The app runs its checks every 10 s (HealthCheckSettings' default) and the daemon reads it every 1 s.
for _ in $(seq 75); do
    curl -s "$URL/health" > "$WORK/health.json"
    if grep -q '^{"status":"warn"' "$WORK/health.json" && grep -q '"billing/payments:status":\[{[^]]*"status":"warn"' "$WORK/health.json"; then warned=yes; break; fi
    sleep 0.2
done
if [ $warned = yes ]; then ok "an app's degraded check makes /health warn (billing/payments)"; else not_ok "degraded app → warn" "$(cat "$WORK/health.json")"; fi
"$PROBE" --url "$URL" --check billing/payments --strict > "$WORK/probe.out" 2>&1; rc=$?
if [ $rc -eq 1 ] && grep -q "billing/payments" "$WORK/probe.out"; then ok "weave-health --check billing/payments --strict: exit 1 (degraded)"; else not_ok "weave-health --check billing/payments" "rc=$rc $(cat "$WORK/probe.out")"; fi
"$PROBE" --url "$URL" --check orders/Database > "$WORK/probe.out" 2>&1; rc=$?
if [ $rc -eq 0 ]; then ok "weave-health --check orders/Database: exit 0"; else not_ok "weave-health --check orders/Database" "rc=$rc $(cat "$WORK/probe.out")"; fi
for _ in 1 2 3 4 5; do curl -s "http://127.0.0.1:${APP_PORT[shipping]}/report" > /dev/null; done
sleep 1.5 # the daemon's next scrape of the applications
top=$("$PROBE" top --url "$URL" 2>&1)
if grep -q 'orders/ReportBuilder' <<<"$top" && ! grep -q 'disk-root' <<<"$top"; then ok "weave-health top shows the apps' services, not the daemon's own check objects"
else not_ok "weave-health top shows the apps' services" "$top"; fi
# The example's ReportBuilder factory sleeps 50 ms: top's p50 and p99 are within 10 % of it.
if awk '$1 == "shipping/ReportBuilder" {
        for (i = 3; i <= 4; i++) { v = $i; if (v !~ /ms$/) exit 1; sub(/ms$/, "", v); if (v < 45 || v > 55) exit 1 }
        found = 1 } END { exit !found }' <<<"$top"; then
    ok "weave-health top: a 50 ms factory's p50 and p99 within 10 % ($(awk '$1 == "shipping/ReportBuilder" { print $3, $4 }' <<<"$top"))"
else not_ok "top's p50 and p99 of a 50 ms factory" "$top"; fi
top=$("$PROBE" top --url "$URL" --own 2>&1)
if grep -q 'disk-root' <<<"$top"; then ok "weave-health top --own adds the daemon's own"; else not_ok "weave-health top --own" "$top"; fi
curl -s -X POST "http://127.0.0.1:${APP_PORT[billing]}/demo/payments/recover" > /dev/null

# --- kill an app ------------------------------------------------------------------------------------
kill -KILL "${APP_PID[shipping]}"
{ wait "${APP_PID[shipping]}"; } 2>/dev/null
metrics > "$WORK/after-kill.txt"
if grep -q '^weave_app_up{app="shipping"} 0$' "$WORK/after-kill.txt" && ! grep -v '^weave_app_' "$WORK/after-kill.txt" | grep -q 'app="shipping",' &&
   grep -q '^weave_resolutions_total{app="orders",dependency="ReportBuilder"} 1$' "$WORK/after-kill.txt"; then
    ok "kill -9 shipping: weave_app_up 0 at the next scrape, its series gone, the others' unaffected"
else not_ok "kill -9 shipping" "$(grep 'shipping\|weave_app_up' "$WORK/after-kill.txt" | head)"; fi
code=$(curl -s -o "$WORK/health.json" -w '%{http_code}' "$URL/health")
if [ "$code" = 503 ] && grep -q '"shipping/Database:status":\[{[^]]*"status":"fail"' "$WORK/health.json"; then
    ok "its components fail in /health (503)"
else not_ok "its components fail in /health" "$code $(cat "$WORK/health.json")"; fi
code_shipping=$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz/shipping")
code_orders=$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz/orders/Database")
code_livez=$(curl -s -o /dev/null -w '%{http_code}' "$URL/livez")
if [ "$code_shipping" = 503 ] && [ "$code_orders" = 200 ] && [ "$code_livez" = 200 ]; then
    ok "/readyz/shipping 503, /readyz/orders/Database 200, /livez 200 (liveness never depends on apps)"
else not_ok "/readyz per app" "shipping=$code_shipping orders/Database=$code_orders livez=$code_livez"; fi
expect "the daemon logs that the app is down" grep -q "Application shipping is down" "$WORK/daemon.log"

# --- hostile sockets ----------------------------------------------------------------------------------
"$PY" - "$APPS" > "$WORK/impostors.log" 2>&1 <<'PYTHON' &
import os, socket, sys, threading, time
directory = sys.argv[1]
def serve(name, behaviour):
    server = socket.socket(socket.AF_UNIX)
    server.bind(os.path.join(directory, name + ".sock"))
    server.listen(16)
    def loop():
        while True:
            client, _ = server.accept()
            threading.Thread(target=behaviour, args=(client,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
def hang(client):
    time.sleep(3600)
def garbage(client):
    client.sendall(b"\x00\xff garbage that is not HTTP\r\n\r\n")
    client.close()
def truncated(client):
    client.recv(4096)
    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n# TYPE x gauge\nx 1\n")
    client.close()
def enormous(client):
    client.recv(4096)
    client.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
    chunk = b"# " + b"x" * 65534
    try:
        while True: client.sendall(chunk)
    except OSError:
        pass
for name, behaviour in [("hung", hang), ("garbage", garbage), ("truncated", truncated), ("enormous", enormous)]:
    serve(name, behaviour)
print("ready", flush=True)
time.sleep(3600)
PYTHON
IMPOSTORS=$!
wait_ready "$IMPOSTORS" "$WORK/impostors.log"
start=$(date +%s%N)
metrics > "$WORK/hostile.txt"
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$elapsed" -lt 2500 ] && grep -q '^weave_app_up{app="hung"} 0$' "$WORK/hostile.txt" && grep -q '^weave_app_up{app="orders"} 1$' "$WORK/hostile.txt"; then
    ok "an app that hangs its socket: the scrape returns in ${elapsed} ms (budget 2 s), orders still up"
else not_ok "hung app within the budget" "elapsed=${elapsed}ms $(grep weave_app_up "$WORK/hostile.txt")"; fi
if grep -q '^weave_app_up{app="garbage"} 0$' "$WORK/hostile.txt" && grep -q '^weave_app_up{app="truncated"} 0$' "$WORK/hostile.txt" &&
   grep -q '^weave_app_up{app="enormous"} 0$' "$WORK/hostile.txt"; then
    ok "garbage, a truncated and an enormous response: each app down on its own"
else not_ok "garbage apps are down" "$(grep weave_app_up "$WORK/hostile.txt")"; fi
sleep 2
curl -s "$URL/health" > "$WORK/health.json"
for pair in "garbage:not an HTTP response" "truncated:closed before a complete response" "enormous:larger than" "hung:no complete response"; do
    app=${pair%%:*}; words=${pair#*:}
    if grep -q "\"$app:status\":\[{[^]]*\"status\":\"fail\"[^]]*$words" "$WORK/health.json"; then ok "$app: a clear per-app reason ($words)"
    else not_ok "$app: a clear per-app reason ($words)" "$(grep -o "\"$app:status\":[^]]*" "$WORK/health.json")"; fi
done
if kill -0 "$DAEMON" 2>/dev/null && wait_for "$URL/livez" 2; then ok "the daemon is alive and answering after the hostile apps"; else not_ok "the daemon survives hostile apps" "$(tail -5 "$WORK/daemon.log")"; fi

# --- hostile expositions: the merged /metrics stays valid whatever an application sends -------------------
# One fake application per mode, beside the real ones: each line a real Prometheus would reject the whole
# daemon's scrape for makes that application down, with the rule; a family only the daemon may say, or
# one that clashes with another application's, is dropped and counted; the rest is kept, made valid.
# The hostile sockets go first: one that hangs holds every /metrics for its timeout (1 s), which is
# Prometheus's scrape timeout here.
kill -TERM "$IMPOSTORS"; wait "$IMPOSTORS" 2>/dev/null
for impostor in hung garbage truncated enormous; do rm -f "$APPS/$impostor.sock"; done
"$PY" "$HERE/fake_apps.py" expositions "$APPS" > "$WORK/hostile-apps.log" 2>&1 &
HOSTILE=$!
wait_ready "$HOSTILE" "$WORK/hostile-apps.log"
sleep 1
metrics > "$WORK/merged.txt"
curl -s -H 'Accept: application/openmetrics-text; version=1.0.0' "$URL/metrics" -o "$WORK/merged.om"
for pair in "bad-utf8:not valid UTF-8" "label-twice:label a appears twice" "reserved-label:label name __name__ is reserved" \
            "unit:unit 'bytes' is not a suffix of x_seconds" "huge-value:'1e400' is not a sample value" "long-integer:is not a sample value" \
            "bad-le:le=\"abc\" is not a number" "no-inf:without its +Inf bucket" "buckets-down:below the one before it" \
            "bad-quantile:is not a number from 0 to 1" "series-twice:a series appears twice"; do
    app=${pair%%:*}; words=${pair#*:}
    if grep -q "^weave_app_up{app=\"$app\"} 0$" "$WORK/merged.txt" &&
       grep -qF "Application $app is down: /metrics is not a valid exposition: line" "$WORK/daemon.log" &&
       grep "Application $app is down" "$WORK/daemon.log" | grep -qF "$words"; then ok "$app: down, with the rule and the line ($words)"
    else not_ok "$app: down with the rule" "$(grep "app=\"$app\"" "$WORK/merged.txt" | head -2) $(grep "Application $app is down" "$WORK/daemon.log" | head -1)"; fi
done
# A protobuf scrape asks them for protobuf: a native histogram Prometheus would refuse makes its application down, with the reason.
curl -s -H "Accept: $PROTOBUF" "$URL/metrics" -o "$WORK/merged.pb"
for pair in "pb-negative:negative native bucket count" "pb-overlap:native spans that overlap" "pb-schema:schema 9 is not one of -4…8" \
            "pb-float:counts in floats" "pb-cut:runs past its message"; do
    app=${pair%%:*}; words=${pair#*:}
    if grep -F "Application $app is down: /metrics is not a valid protobuf exposition: protobuf message 1" "$WORK/daemon.log" | grep -qF "$words"; then
        ok "$app: down in a protobuf scrape, with the reason ($words)"
    else not_ok "$app: down with the reason" "$(grep "Application $app is down" "$WORK/daemon.log" | head -1)"; fi
done
if grep -qa 'pb-valid' "$WORK/merged.pb" && ! grep -q "Application pb-valid is down" "$WORK/daemon.log" && grep -q '^hostile_proto{app="pb-valid"} 1$' "$WORK/merged.txt"; then
    ok "a valid native histogram is kept in the protobuf answer; the same application answers text to a text scrape"
else not_ok "a valid protobuf application is up" "$(grep "pb-valid" "$WORK/daemon.log" | head -2)"; fi
if grep -q '^hostile_x{app="app-twice",exported_exported_app="in",exported_app="e"} 1$' "$WORK/merged.txt"; then
    ok "app and exported_app together: the line's app becomes exported_exported_app, nothing lost"
else not_ok "exported_ repeated until unique" "$(grep hostile_x "$WORK/merged.txt")"; fi
if grep -q '^hostile_c_total{app="bare-counter"} 5$' "$WORK/merged.txt" && grep -q '^hostile_c_total{app="bare-counter"} 5$' "$WORK/merged.om"; then
    ok "a counter sample without _total is given it, in both formats"
else not_ok "counter without _total" "$(grep hostile_c "$WORK/merged.txt" "$WORK/merged.om")"; fi
if grep -q '^weave_app_up{app="forge"} 1$' "$WORK/merged.txt" && ! grep -qE '^weave_config_[a-z_]*\{app="forge"' "$WORK/merged.txt" &&
   grep -q '^weave_app_dropped_families_total{app="forge",reason="reserved"} [1-9]' "$WORK/merged.txt" &&
   grep -q '^hostile_ok{app="forge"} 1$' "$WORK/merged.txt"; then
    ok "an application cannot speak for the daemon: its weave_config_*/weave_app_* dropped and counted, the rest kept"
else not_ok "reserved families dropped and counted" "$(grep 'forge' "$WORK/merged.txt")"; fi
if grep -q '^hostile_queue_depth{app="clash-a"} 3$' "$WORK/merged.txt" && ! grep -q 'app="clash-b",\|{app="clash-b"}' <(grep hostile_queue "$WORK/merged.txt") &&
   grep -q '^weave_app_dropped_families_total{app="clash-b",reason="conflict"} [1-9]' "$WORK/merged.txt" &&
   grep -qF "Application clash-b's family hostile_queue_depth is left out of /metrics" "$WORK/daemon.log"; then
    ok "a family two applications type differently: the later one dropped, counted and logged"
else not_ok "type clash between applications" "$(grep 'hostile_queue\|clash' "$WORK/merged.txt")"; fi
if grep -q '^weave_app_up{app="orders"} 1$' "$WORK/merged.txt"; then ok "the healthy application is up beside them"; else not_ok "orders up beside the hostile ones" "$(grep weave_app_up "$WORK/merged.txt")"; fi
expect_promtool_clean "$WORK/merged.txt" "promtool check metrics: the merged text, clean"
unexpected=$(openmetrics_findings "$WORK/merged.om")
if [ -z "$unexpected" ]; then ok "promtool check metrics: the merged OpenMetrics, clean"; else not_ok "promtool on the merged OpenMetrics" "$unexpected"; fi
expect "prometheus_client parses the merged text" "$PY" "$HERE/parse_exposition.py" text "$WORK/merged.txt"
expect "prometheus_client parses the merged OpenMetrics" "$PY" "$HERE/parse_exposition.py" openmetrics "$WORK/merged.om"
start_prometheus "$PORT"
target=""
for _ in $(seq 150); do
    target=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets")
    grep -q '"health":"up"' <<<"$target" && break
    sleep 0.2
done
stored=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query?query=hostile_c_total" | grep -o '"app":"bare-counter"')
if grep -q '"health":"up"' <<<"$target" && grep -q '"lastError":""' <<<"$target" && [ -n "$stored" ]; then
    ok "a real Prometheus scrapes the daemon with the hostile applications: up, no error, their valid series stored"
else not_ok "Prometheus scrapes the merged document" "$(head -c 600 <<<"$target") $(tail -3 "$WORK/prometheus.log")"; fi
kill -TERM "$PROMETHEUS"; wait "$PROMETHEUS" 2>/dev/null
kill -TERM "$HOSTILE"; wait "$HOSTILE" 2>/dev/null
for mode in bad-utf8 label-twice reserved-label unit huge-value long-integer bad-le no-inf buckets-down bad-quantile series-twice \
            app-twice bare-counter forge clash-a clash-b; do rm -f "$APPS/$mode.sock"; done

# --- an app that leaves cleanly leaves no trace -------------------------------------------------------
kill -TERM "${APP_PID[billing]}"
wait "${APP_PID[billing]}" 2>/dev/null
if [ ! -e "$APPS/billing.sock" ] && ! metrics_has 'app="billing"'; then ok "SIGTERM billing: its socket is removed and it leaves /metrics"
else not_ok "billing leaves cleanly" "$(ls "$APPS")"; fi

# --- an app that fails at startup is down, not gone -----------------------------------------------------
# A second instance under another name on a port already taken: its server cannot bind, the process
# ends with the error, and its socket stays: the daemon reads it as down, with the reason.
timeout 60 "$ORDERS" --name orders-second --port "${APP_PORT[orders]}" --apps-dir "$APPS" > "$WORK/orders-second.log" 2>&1
rc=$?
sleep 1.5 # one scrape interval of the apps (health_interval: 1s)
metrics > "$WORK/after-failure.txt"
code=$(curl -s -o "$WORK/readyz-second.txt" -w '%{http_code}' "$URL/readyz/orders-second")
if [ $rc -ne 0 ] && [ -S "$APPS/orders-second.sock" ] && grep -q '^weave_app_up{app="orders-second"} 0$' "$WORK/after-failure.txt" &&
   [ "$code" = 503 ]; then
    ok "an app whose server cannot bind (exit $rc) is down at the next scrape, /readyz/orders-second 503"
else not_ok "an app that fails at startup is down" "rc=$rc code=$code $(grep orders-second "$WORK/after-failure.txt") $(ls "$APPS") $(tail -3 "$WORK/orders-second.log")"; fi
expect "the daemon logs why it is down" grep -q "Application orders-second is down: .*refused" "$WORK/daemon.log"
expect "orders, whose port it was, is still up" grep -q '^weave_app_up{app="orders"} 1$' "$WORK/after-failure.txt"

# --- peers that crowd an application's socket cannot hide it -------------------------------------------
# 300 connections that send nothing and 300 that trickle a request, reconnecting whenever closed, on
# orders' socket (its endpoint keeps 64 connections at most): before, a daemon started then found
# every slot taken and read orders as down. A crowded endpoint now closes the longest idle connection
# for a newcomer, so a freshly started daemon reads orders as up at its first scrape.
"$PY" - "$APPS/orders.sock" > "$WORK/crowd.log" 2>&1 <<'PYTHON' &
import asyncio, sys
path = sys.argv[1]
async def idle():
    while True:
        try:
            reader, writer = await asyncio.open_unix_connection(path)
            await reader.read()
            writer.close()
        except OSError:
            pass
        await asyncio.sleep(0.05)
async def slowloris():
    while True:
        try:
            reader, writer = await asyncio.open_unix_connection(path)
            writer.write(b"GET /metrics HTTP/1.1\r\n")
            while True:
                await asyncio.sleep(1)
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
        except OSError:
            pass
        await asyncio.sleep(0.05)
async def main():
    tasks = [asyncio.create_task(idle()) for _ in range(300)] + [asyncio.create_task(slowloris()) for _ in range(300)]
    await asyncio.sleep(3)
    print("ready", flush=True)
    await asyncio.sleep(300)
asyncio.run(main())
PYTHON
CROWD=$!
wait_ready "$CROWD" "$WORK/crowd.log"
SECOND_PORT=$(free_port)
printf 'listen:\n  - address: 127.0.0.1:%s\napps:\n  directory: %s\n  timeout: 1s\n  budget: 2s\n' "$SECOND_PORT" "$APPS" > "$WORK/second.yaml"
MAIN=$DAEMON
start_daemon "$WORK/second.yaml" "$WORK/second.log" "http://127.0.0.1:$SECOND_PORT/livez" 20 \
    || not_ok "a second daemon starts" "$(tail -3 "$WORK/second.log")"
SECOND=$DAEMON DAEMON=$MAIN # DAEMON is the first daemon again
first=$(curl -s --max-time 10 "http://127.0.0.1:$SECOND_PORT/metrics" | grep '^weave_app_up{app="orders"}')
if [ "$first" = 'weave_app_up{app="orders"} 1' ]; then
    ok "600 idle and slowloris peers on orders' socket: a daemon started meanwhile reads it as up at its first scrape"
else not_ok "crowded peers hide an application" "first scrape: '$first'; $(grep -c orders "$WORK/second.log") lines on orders: $(grep orders "$WORK/second.log" | tail -2)"; fi
kill -TERM "$SECOND" "$CROWD"; wait "$SECOND" "$CROWD" 2>/dev/null

# --- busy peers of another user cannot starve the daemon's requests ------------------------------------
# 8 processes of user nobody x 8 keep-alive connections, each asking orders' /metrics back to back: 64
# busy connections, all orders' endpoint keeps (busy ones cannot be closed to make room). The daemon's
# first connection (another user's) is served in full even in the reserve, so orders stays up.
chmod 0711 "$WORK" "$APPS"
BUSY=()
for _ in $(seq 8); do
    setpriv --reuid=nobody --regid=nogroup --groups="$(stat -c %g "$APPS/orders.sock")" "$PY" - "$APPS/orders.sock" \
        >> "$WORK/busy.log" 2>&1 <<'PYTHON' &
import asyncio, sys, time
path = sys.argv[1]
async def ask_back_to_back():
    while True:
        try:
            reader, writer = await asyncio.open_unix_connection(path)
            while True:
                writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
                await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, StopIteration, ValueError):
            await asyncio.sleep(0.01)
async def main():
    tasks = [asyncio.create_task(ask_back_to_back()) for _ in range(8)]
    await asyncio.sleep(2)
    print("ready", flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
PYTHON
    BUSY+=("$!")
    PIDS+=("$!")
done
for _ in $(seq 50); do [ "$(grep -c ready "$WORK/busy.log" 2>/dev/null)" -ge 8 ] && break; sleep 0.1; done
downs=0; scrapes=0
for _ in $(seq 20); do
    scrapes=$((scrapes + 1))
    metrics_has '^weave_app_up{app="orders"} 1$' || downs=$((downs + 1))
    sleep 0.5
done
health=$(curl -s "$URL/health" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["checks"]["orders:status"][0]["status"])')
if [ "$downs" -eq 0 ] && [ "$health" = pass ]; then
    ok "64 busy keep-alive connections of another user on orders' socket: orders up in all $scrapes scrapes, /health pass"
else not_ok "busy peers starve the daemon" "$downs of $scrapes scrapes down; /health: $health; $(grep 'orders is down' "$WORK/daemon.log" | tail -1)"; fi
kill -TERM "${BUSY[@]}"; wait "${BUSY[@]}" 2>/dev/null

# --- a reload applies apps: -----------------------------------------------------------------------
sed -i "s|^  directory: .*|  discover: false\n  targets:\n    - {name: only-orders, socket: $APPS/orders.sock}|" "$WORK/config.yaml"
kill -HUP "$DAEMON"
if wait_metrics '^weave_app_up{app="only-orders"} 1$' 10 && ! metrics_has 'app="garbage"'; then
    ok "SIGHUP applies apps: discovery off, one named socket"
else not_ok "a reload applies apps:" "$(metrics | grep weave_app_up) $(tail -3 "$WORK/daemon.log")"; fi

kill -TERM "$DAEMON"; wait "$DAEMON"; rc=$?
if [ $rc -eq 0 ]; then ok "the daemon exits 0 on SIGTERM"; else not_ok "the daemon exits 0" "rc=$rc"; fi
finish
