#!/usr/bin/env bash
# Integration tests of weave-healthd against real components: curl, promtool, the Python
# prometheus_client parser, a real Prometheus server, Debian's monitoring-plugins, signals.
# Usage: Tests/Integration/daemon.sh PATH-TO-weave-healthd
# Prints "ok - …"/"not ok - …" per test and ends with "N passed, M failed"; exits 1 on any failure.
set -uo pipefail

source "$(dirname "$0")/lib.sh"

PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
PLUGINS=/usr/lib/nagios/plugins
touch "$WORK/heartbeat"

write_config() { # extra checks appended from stdin
    cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
  - unix: $WORK/health.sock
    mode: "0600"
details: always
slow_resolution_threshold: 10ms
checks:
  - name: disk-root
    type: disk
    path: /
    warn_free_percent: 1
    fail_free_percent: 0
    interval: 1s
    groups: [ready]
  - name: heartbeat
    type: file
    path: $WORK/heartbeat
    max_age: 1h
    interval: 1s
    groups: [ready]
  - name: plugin-disk
    type: exec
    command: [$PLUGINS/check_disk, -w, "1%", -c, "0%", -p, /]
    interval: 1s
  - name: plugin-tcp
    type: exec
    command: [$PLUGINS/check_tcp, -H, 127.0.0.1, -p, "$PORT"]
    interval: 1s
  - name: plugin-procs
    type: exec
    command: [$PLUGINS/check_procs, -w, "100000", -c, "200000"]
    interval: 1s
  - name: plugin-http
    type: exec
    command: [$PLUGINS/check_http, -H, 127.0.0.1, -p, "$PORT", -u, /livez, -s, ok]
    interval: 1s
  - name: self-http
    type: http
    url: http://127.0.0.1:$PORT/livez
    body_contains: ok
    interval: 1s
  - name: container
    type: container
    groups: [live]
YAML
    cat >> "$WORK/config.yaml"
}

# --- what the binary loads ----------------------------------------------------------------
# Foundation alone added about 10 MiB to the idle RSS; the daemon must not link it.
libraries=$(ldd "$BIN")
if ! grep -q Foundation <<<"$libraries"; then ok "the daemon links no Foundation"; else not_ok "the daemon links no Foundation" "$(grep Foundation <<<"$libraries")"; fi

# --- configuration errors ------------------------------------------------------------------
write_config < /dev/null
expect "--check-config accepts a good file" "$BIN" --check-config "$WORK/config.yaml"

printf 'listen:\n  - address: 127.0.0.1:%s\nchecks:\n  - name: x\n    type: disk\n    colour: red\n' "$PORT" > "$WORK/unknown-key.yaml"
out=$("$BIN" --check-config "$WORK/unknown-key.yaml" 2>&1); rc=$?
if [ $rc -eq 78 ] && [[ "$out" == "$WORK/unknown-key.yaml:6:5: unknown key 'colour'"* ]]; then ok "unknown key: exit 78 with file:line:column"; else not_ok "unknown key: exit 78 with file:line:column" "rc=$rc $out"; fi

printf 'listen: [\n  - oops: : :\n' > "$WORK/broken.yaml"
out=$("$BIN" --config "$WORK/broken.yaml" 2>&1); rc=$?
if [ $rc -eq 78 ] && [[ "$out" =~ ^$WORK/broken.yaml:[0-9]+:[0-9]+:\ YAML ]]; then ok "broken YAML at startup: exit 78 with file:line:column"; else not_ok "broken YAML at startup: exit 78 with file:line:column" "rc=$rc $out"; fi

out=$("$BIN" --config "$WORK/missing.yaml" 2>&1); rc=$?
if [ $rc -eq 78 ] && [[ "$out" == "$WORK/missing.yaml:1:1: cannot read the file"* ]]; then ok "missing file: exit 78"; else not_ok "missing file: exit 78" "rc=$rc $out"; fi

out=$("$BIN" --bogus 2>&1); rc=$?
if [ $rc -eq 64 ]; then ok "unknown argument: exit 64"; else not_ok "unknown argument: exit 64" "rc=$rc $out"; fi

# --- the first round runs once the listeners are bound ------------------------------------
# A check of the daemon's own port (the embedded configuration has one) must not race the bind:
# with an interval of an hour, a lost race would hold readiness down for an hour.
SELF_PORT=$(free_port)
printf 'listen:\n  - address: 127.0.0.1:%s\nchecks:\n  - name: self-port\n    type: tcp\n    host: 127.0.0.1\n    port: %s\n    interval: 1h\n    groups: [ready]\n' \
    "$SELF_PORT" "$SELF_PORT" > "$WORK/self-port.yaml"
if start_daemon "$WORK/self-port.yaml" "$WORK/self-port.log" "http://127.0.0.1:$SELF_PORT/readyz" 10; then ok "a check of the daemon's own port passes its first round"
else not_ok "a check of the daemon's own port passes its first round" "$(curl -s "http://127.0.0.1:$SELF_PORT/readyz?verbose"; grep self-port "$WORK/self-port.log" | head -3)"; fi
stop_daemon

# --- a running daemon ----------------------------------------------------------------------
if start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/readyz" 15; then ok "daemon becomes ready"; else not_ok "daemon becomes ready" "$(tail -5 "$WORK/daemon.log")"; fi
sleep 2.5 # a few rounds of every check

curl -s -D "$WORK/metrics.head" "$URL/metrics" -o "$WORK/metrics.txt"
expect "/metrics is text 0.0.4" grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$WORK/metrics.head"
expect_promtool_clean "$WORK/metrics.txt" "promtool check metrics: text format clean"
curl -s -H 'Accept: application/openmetrics-text; version=1.0.0' -D "$WORK/om.head" "$URL/metrics" -o "$WORK/metrics.om"
expect "/metrics negotiates OpenMetrics" grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$WORK/om.head"
expect "OpenMetrics ends with # EOF" bash -c "tail -1 '$WORK/metrics.om' | grep -qx '# EOF'"
unexpected=$(openmetrics_findings "$WORK/metrics.om")
if [ -z "$unexpected" ]; then ok "promtool check metrics: OpenMetrics clean (but for counter HELP naming)"; else not_ok "promtool check metrics: OpenMetrics clean" "$unexpected"; fi
expect "prometheus_client parses the text format" "$PY" "$HERE/parse_exposition.py" text "$WORK/metrics.txt"
expect "prometheus_client parses OpenMetrics" "$PY" "$HERE/parse_exposition.py" openmetrics "$WORK/metrics.om"
expect "health state set is exported" grep -q '^weave_health_status{check="heartbeat",state="healthy"} 1$' "$WORK/metrics.txt"
expect "the daemon's own resolves are exported" grep -q '^weave_resolutions_total{dependency="heartbeat (HealthCheckable)"}' "$WORK/metrics.txt"
expect "plugin perfdata becomes gauges in base units, named by unit" grep -qE '^weave_check_perfdata_bytes\{check="plugin-disk",label="/"\} [0-9]' "$WORK/metrics.txt"
expect "process metrics are exported" grep -q '^process_resident_memory_bytes ' "$WORK/metrics.txt"
curl -s "$URL/metrics" -o "$WORK/metrics2.txt"
expect "output is sorted and stable between scrapes" bash -c "diff <(grep -o '^[a-z_]*' '$WORK/metrics.txt' | uniq) <(grep -o '^[a-z_]*' '$WORK/metrics2.txt' | uniq)"
curl -s -H 'Accept-Encoding: gzip' -D "$WORK/gz.head" "$URL/metrics" -o "$WORK/metrics.gz"
expect "gzip when Accept-Encoding allows it" bash -c "grep -qi '^content-encoding: gzip' '$WORK/gz.head' && gunzip -c '$WORK/metrics.gz' | grep -q '^weave_build_info'"

curl -s -D "$WORK/health.head" "$URL/health" -o "$WORK/health.json"
expect "/health is 200 health+json, no-store" bash -c "grep -q '^HTTP/1.1 200' '$WORK/health.head' && grep -qi '^content-type: application/health+json' '$WORK/health.head' && grep -qi '^cache-control: no-store' '$WORK/health.head'"
expect "/health body is IETF-shaped JSON" "$PY" -c "
import json, sys
doc = json.load(open('$WORK/health.json'))
assert doc['status'] == 'pass', doc
entry = doc['checks']['disk-root:status'][0]
assert entry['status'] == 'pass' and 'time' in entry and entry['observedUnit'] == '%', entry
"
expect "/livez answers ok" bash -c "[ \"\$(curl -s '$URL/livez')\" = ok ]"
expect "/readyz?verbose lists the ready checks" bash -c "curl -s '$URL/readyz?verbose' | grep -qx '\[+\]heartbeat ok'"
expect "/readyz/<name> reads one check" bash -c "[ \"\$(curl -s '$URL/readyz/disk-root')\" = ok ]"
expect "/readyz/<unknown> is 404" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$URL/readyz/nope')\" = 404 ]"
expect "unknown path is 404" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$URL/nope')\" = 404 ]"
expect "POST is 405 with Allow" bash -c "curl -s -X POST -D - -o /dev/null '$URL/health' | grep -q '^HTTP/1.1 405' && curl -s -X POST -D - -o /dev/null '$URL/health' | grep -qi '^allow: GET, HEAD'"
expect "HEAD has no body" bash -c "[ \"\$(curl -s -I '$URL/livez' | grep -ci '^content-length: 3')\" = 1 ]"
expect "landing page lists the endpoints" bash -c "curl -s '$URL/' | grep -q 'href=\"/metrics\"'"
expect "the Unix socket serves too" bash -c "[ \"\$(curl -s --unix-socket '$WORK/health.sock' http://x/livez)\" = ok ]"
# A second daemon on the same socket (its own port) must not take it over.
sed -e "s/127.0.0.1:$PORT/127.0.0.1:$(free_port)/" "$WORK/config.yaml" > "$WORK/second.yaml"
second=$(timeout 10 "$BIN" --config "$WORK/second.yaml" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "another process listens on $WORK/health.sock" <<<"$second" \
    && [ "$(curl -s --unix-socket "$WORK/health.sock" http://x/livez)" = ok ]; then
    ok "a second daemon on the same Unix socket exits 1 ('another process listens on …'); the first keeps serving it"
else not_ok "a second daemon on the same Unix socket" "exit $rc: $(grep -i 'socket\|stopped' <<<"$second" | tail -3)"; fi

# --- malformed HTTP --------------------------------------------------------------------------
sent=$("$PY" "$HERE/malformed_http.py" 127.0.0.1 "$PORT" 1000 42)
if [ "$sent" = 1000 ] && [ "$(curl -s --max-time 2 "$URL/livez")" = ok ]; then ok "1,000 malformed requests, then /livez still ok"; else not_ok "1,000 malformed requests, then /livez still ok" "sent=$sent"; fi

# --- failing checks and reloads ----------------------------------------------------------------
write_config <<YAML
  - name: missing-file
    type: file
    path: $WORK/does-not-exist
    interval: 1s
YAML
kill -HUP "$DAEMON"
for _ in $(seq 50); do curl -s "$URL/metrics" | grep 'check="missing-file",state="unhealthy"} 1' >/dev/null && break; sleep 0.1; done
expect "SIGHUP loads a new check" bash -c "curl -s '$URL/metrics' | grep -q 'check=\"missing-file\",state=\"unhealthy\"} 1'"
curl -s "$URL/metrics" > "$WORK/reloaded.txt"
reloaded_at=$(grep '^weave_config_last_reload_success_timestamp_seconds ' "$WORK/reloaded.txt" | cut -d' ' -f2)
expect "a good reload: weave_config_last_reload_successful 1" grep -qx 'weave_config_last_reload_successful 1' "$WORK/reloaded.txt"
expect "a failing check makes /health 503 with fail" bash -c "[ \"\$(curl -s -o '$WORK/h.json' -w '%{http_code}' '$URL/health')\" = 503 ] && grep -q '\"status\":\"fail\"' '$WORK/h.json'"
expect "readiness ignores checks outside its group" bash -c "[ \"\$(curl -s '$URL/readyz')\" = ok ]"
printf 'checks: [\n' > "$WORK/config.yaml"
kill -HUP "$DAEMON"
sleep 1
expect "SIGHUP with a broken file is logged and rejected" grep -q "Configuration rejected" "$WORK/daemon.log"
expect "after a rejected reload the old configuration still serves" bash -c "curl -s '$URL/metrics' | grep -q 'check=\"missing-file\"'"
curl -s "$URL/metrics" > "$WORK/rejected.txt"
if grep -qx 'weave_config_last_reload_successful 0' "$WORK/rejected.txt" &&
   grep -qx "weave_config_last_reload_success_timestamp_seconds $reloaded_at" "$WORK/rejected.txt"; then
    ok "a rejected reload: weave_config_last_reload_successful 0, the last success's time unchanged"
else not_ok "the reload metrics after a rejected reload" "$(grep weave_config "$WORK/rejected.txt")"; fi
rm -f "$WORK/config.yaml"; write_config < /dev/null

# --- a real Prometheus scrapes it ----------------------------------------------------------------
start_prometheus "$PORT"
scraped=no
for _ in $(seq 150); do
    if curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query?query=up%7Bjob%3D%22weave%22%7D%3D%3D1" | grep '"value"' >/dev/null &&
       curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query?query=weave_health_status" | grep '"check":"disk-root"' >/dev/null; then
        scraped=yes; break
    fi
    sleep 0.2
done
if [ $scraped = yes ]; then ok "Prometheus scrapes it: up == 1 and weave_health_status"; else not_ok "Prometheus scrapes it: up == 1 and weave_health_status" "$(tail -3 "$WORK/prometheus.log")"; fi

# --- graceful shutdown -----------------------------------------------------------------------
start=$(date +%s%N)
kill -TERM "$DAEMON"
wait "$DAEMON"; rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 0 ] && [ $elapsed -lt 2000 ]; then ok "SIGTERM: exit 0 in ${elapsed} ms"; else not_ok "SIGTERM: exit 0 within 2 s" "rc=$rc elapsed=${elapsed}ms"; grep -v '^$' "$WORK/daemon.log" | grep -v 'weave.health:' | tail -60; fi
expect "its Unix socket is removed" test ! -e "$WORK/health.sock"

finish
