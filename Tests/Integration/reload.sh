#!/usr/bin/env bash
# A reload per top-level key of the configuration: SIGHUP with that one key changed is either
# applied (seen in /metrics, /health or the log) or refused with the key's name, the running
# configuration kept. The keys are the daemon's own (its "allowed:" list for an unknown key), so a
# key added without a test here fails this script.
# Usage: Tests/Integration/reload.sh PATH-TO-weave-healthd
set -uo pipefail

source "$(dirname "$0")/lib.sh"
PORT=$(free_port)
OTHER=$(free_port)
CLOSED=$(free_port)
URL="http://127.0.0.1:$PORT"
mkdir -p "$WORK/apps" "$WORK/textfile"
printf 'one\n' > "$WORK/token-one"
printf 'two\n' > "$WORK/token-two"
printf '# HELP site_backup_ok Whether the last backup ran.\n# TYPE site_backup_ok gauge\nsite_backup_ok 1\n' \
    > "$WORK/textfile/backup.prom"

# Every top-level key, as the daemon lists them.
printf 'no_such_key: 1\n' > "$WORK/unknown.yaml"
keys=$("$BIN" --check-config "$WORK/unknown.yaml" 2>&1 | sed -n 's/.*allowed: //p' | tr -d ',')
[ -n "$keys" ] || { echo "the daemon did not list its top-level keys"; exit 1; }

# The running file: one line (a flow mapping or list) per key, changed one at a time.
declare -A YAML=(
    [listen]="listen: [{address: 127.0.0.1:$PORT}]"
    [details]="details: when-authorized"
    [bearer_token_file]="bearer_token_file: $WORK/token-one"
    [slow_resolution_threshold]="slow_resolution_threshold: 1h"
    [memory_pressure]="memory_pressure: {trigger: some 150000 1000000}"
    [status_codes]="status_codes: {fail: 503}"
    [log_rate_limit]="log_rate_limit: {burst: 5, interval: 1h}"
    [checks]="checks: [{name: refused, type: tcp, host: 127.0.0.1, port: $CLOSED, interval: 200ms}]"
    [apps]="apps: {directory: $WORK/apps, health_interval: 200ms}"
    [metrics]="metrics: {resolve_buckets: all}"
    [textfile]="# textfile: none at first"
)
write_config() { local key; for key in "${!YAML[@]}"; do printf '%s\n' "${YAML[$key]}"; done > "$WORK/config.yaml"; }
outcomes() { grep -c "Configuration reloaded\|Configuration rejected" "$WORK/daemon.log"; }
# Reloads as the units' ExecReload= does (--reload $MAINPID: SIGHUP, then the daemon's own verdict,
# its exit status in VERDICT and its words in verdict.out); then the effect has 1 s to show.
reload() {
    local before; before=$(outcomes)
    RUNTIME_DIRECTORY="$WORK/run" "$BIN" --reload "$DAEMON" > "$WORK/verdict.out" 2>&1
    VERDICT=$?
    for _ in $(seq 100); do [ "$(outcomes)" -gt "$before" ] && break; sleep 0.1; done
    sleep 1
}
change() { YAML[$1]=$2; write_config; reload; } # KEY YAML: the running file with KEY's line replaced, reloaded
metrics() { curl -s --max-time 5 "$URL/metrics" > "$WORK/metrics.txt"; cat "$WORK/metrics.txt"; }
# Whether the scrape has a line matching PATTERN (not `metrics | grep -q`: with pipefail, grep's early
# exit fails the pipe).
scraped() { metrics > /dev/null; grep -q "$1" "$WORK/metrics.txt"; }
health() { curl -s --max-time 5 "$@" "$URL/health"; }
applied() { [ "$VERDICT" = 0 ] && grep -q ": reloaded, " "$WORK/verdict.out" && scraped '^weave_config_last_reload_successful 1$'; }
refused() { # KEY: the last outcome is a refusal naming KEY (in the log and --reload's exit 1), the previous configuration still serving
    grep "Configuration reloaded\|Configuration rejected" "$WORK/daemon.log" | tail -1 | grep -q "Configuration rejected.*$1:" &&
        [ "$VERDICT" = 1 ] && grep -q "$1:" "$WORK/verdict.out" &&
        scraped '^weave_config_last_reload_successful 0$' && curl -sf -o /dev/null "$URL/livez"
}
# The app's events of one window of the log: memory_pressure events, 256 at each read.
pressure_entries() { grep -c "Application flood dropped its cached instances under memory pressure" "$WORK/daemon.log"; }

# A fake application whose /events gives 256 new memory_pressure events at every read.
(exec "$PY" "$HERE/fake_apps.py" serve "$WORK/apps" "flood:orders:pass:flood" > "$WORK/apps.out") &
PIDS+=("$!")
for _ in $(seq 100); do grep -q serving "$WORK/apps.out" && break; sleep 0.1; done

write_config
mkdir -p "$WORK/run"
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 30 WEAVE_LOG_TARGET=stderr RUNTIME_DIRECTORY="$WORK/run" \
    || { echo "the daemon did not start: $(tail -3 "$WORK/daemon.log")"; exit 1; }
sleep 2

tested=()
test_listen() {
    change listen "listen: [{address: 127.0.0.1:$OTHER}]"
    if refused listen && ! curl -s -o /dev/null "http://127.0.0.1:$OTHER/livez"; then ok "listen: a change is refused, naming it; the old port serves"
    else not_ok "listen: on reload" "$(tail -2 "$WORK/daemon.log")"; fi
    YAML[listen]="listen: [{address: 127.0.0.1:$PORT}]"
}
test_memory_pressure() {
    change memory_pressure "memory_pressure: {trigger: some 100000 2000000}"
    if refused memory_pressure; then ok "memory_pressure: a changed trigger is refused, naming it"
    else not_ok "memory_pressure: on reload" "$(tail -2 "$WORK/daemon.log")"; fi
    YAML[memory_pressure]="memory_pressure: {trigger: some 150000 1000000}"
}
test_bearer_token_file() {
    local before; before=$(health -H "Authorization: Bearer one")
    change bearer_token_file "bearer_token_file: $WORK/token-two"
    if [[ "$before" == *'"output"'* ]] && applied && [[ "$(health -H "Authorization: Bearer two")" == *'"output"'* ]] &&
        [[ "$(health -H "Authorization: Bearer one")" != *'"output"'* ]]; then
        ok "bearer_token_file: another file applies: its token shows the details, the old one no longer"
    else not_ok "bearer_token_file: on reload" "$(tail -2 "$WORK/daemon.log")"; fi
}
test_details() {
    change details "details: never"
    if applied && [[ "$(health -H "Authorization: Bearer two")" != *'"output"'* ]]; then ok "details: never applies: no output, even with the token"
    else not_ok "details: on reload" "$(health -H "Authorization: Bearer two" | head -c 300)"; fi
    YAML[details]="details: when-authorized"
}
test_status_codes() {
    local before after
    before=$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")
    change status_codes "status_codes: {fail: 500}"
    after=$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")
    if [ "$before" = 503 ] && [ "$after" = 500 ] && applied; then ok "status_codes: {fail: 500} applies: /health answers 500, not 503"
    else not_ok "status_codes: on reload" "HTTP $before, then $after"; fi
}
test_checks() {
    change checks "checks: [{name: refused, type: tcp, host: 127.0.0.1, port: $CLOSED, interval: 200ms}, {name: added, type: file, path: $WORK/config.yaml, interval: 200ms}]"
    if applied && scraped '^weave_check_last_run_timestamp_seconds{check="added"}'; then ok "checks: an added check runs, and /metrics shows it"
    else not_ok "checks: on reload" "$(metrics | grep '^weave_check_last_run' | head -5)"; fi
}
test_slow_resolution_threshold() {
    # The daemon's own container is made anew by each reload: its checks' first resolutions are slow
    # under a threshold of 1 µs (at least one of the two), never under one of 1 h.
    local slow='^weave_slow_resolutions_total{dependency="[a-z]* (HealthCheckable)"} [1-9]'
    local before; before=$(metrics | grep -c "$slow")
    change slow_resolution_threshold "slow_resolution_threshold: 1us"
    if [ "$before" = 0 ] && applied && scraped "$slow"; then ok "slow_resolution_threshold: 1us applies: the checks' resolutions count as slow"
    else not_ok "slow_resolution_threshold: on reload" "before: $before; $(metrics | grep '^weave_slow_resolutions_total' | head -3)"; fi
}
test_log_rate_limit() {
    # 5 of the application's memory_pressure events in 1 h, then every one of them (256 a read).
    local first second
    first=$(pressure_entries)
    change log_rate_limit "log_rate_limit: {burst: 100000, interval: 1s}"
    sleep 1
    second=$(pressure_entries)
    if [ "$first" -le 5 ] && [ $((second - first)) -ge 256 ] && applied; then
        ok "log_rate_limit: a higher burst applies: $first entries of the application's events before, $((second - first)) more after"
    else not_ok "log_rate_limit: on reload" "$first entries before, $second after"; fi
}
test_apps() {
    change apps "apps: {directory: $WORK/apps, health_interval: 200ms, targets: [{name: named, socket: $WORK/named.sock}]}"
    if applied && scraped '^weave_app_up{app="named"} 0'; then ok "apps: a named target added applies: weave_app_up{app=\"named\"} 0"
    else not_ok "apps: on reload" "$(metrics | grep '^weave_app_up')"; fi
}
test_metrics() {
    # Without its buckets a dependency's histogram keeps the +Inf one (its count).
    local bucket='^weave_resolve_duration_seconds_bucket{dependency="refused (HealthCheckable)",path="factory",le="[0-9]'
    local before; before=$(metrics | grep -c "$bucket")
    change metrics "metrics: {resolve_buckets: none}"
    if [ "$before" -gt 0 ] && applied && [ "$(metrics | grep -c "$bucket")" = 0 ]; then
        ok "metrics: resolve_buckets: none applies: the daemon's dependencies lose their buckets ($before before)"
    else not_ok "metrics: on reload" "$before buckets before, $(metrics | grep -c "$bucket") after"; fi
}
test_textfile() {
    change textfile "textfile: {directory: $WORK/textfile}"
    if applied && scraped '^site_backup_ok 1$'; then ok "textfile: a directory applies: its files' families join /metrics"
    else not_ok "textfile: on reload" "$(metrics | grep -i textfile | head -3)"; fi
}

# The order matters only where a test needs the state another leaves (the token before details).
for key in listen memory_pressure bearer_token_file details status_codes checks slow_resolution_threshold log_rate_limit \
    apps metrics textfile; do
    "test_$key"
    tested+=("$key")
done
# A broken file: --reload exits 1 with file:line:column, the metric the shipped alert reads is 0
# (#65: a refusal before any SIGHUP left it at 1), and a good file again brings it back to 1.
write_config
printf 'checks: [\n' >> "$WORK/config.yaml"
reload
if [ "$VERDICT" = 1 ] && grep -q "$WORK/config.yaml:[0-9]*:[0-9]*: " "$WORK/verdict.out" && scraped '^weave_config_last_reload_successful 0$'; then
    ok "a broken file: --reload exits 1 with file:line:column, weave_config_last_reload_successful 0"
else not_ok "a broken file on --reload" "exit $VERDICT; $(cat "$WORK/verdict.out")"; fi
write_config
reload
if applied; then ok "the file fixed: --reload exits 0, weave_config_last_reload_successful 1"
else not_ok "a fixed file on --reload" "exit $VERDICT; $(cat "$WORK/verdict.out")"; fi
# --reload's own input: a process id, and the daemon's runtime directory.
gone=$(sh -c 'echo $$')
for case in "abc:64" "0:64" "1:64" "-5:64" "99999999999:64" "$gone:1"; do
    RUNTIME_DIRECTORY="$WORK/run" timeout 10 "$BIN" --reload "${case%:*}" > "$WORK/bad.out" 2>&1; rc=$?
    if [ "$rc" = "${case##*:}" ] && [ -s "$WORK/bad.out" ]; then ok "--reload ${case%:*}: exit $rc, $(head -c 90 "$WORK/bad.out")"
    else not_ok "--reload ${case%:*}" "exit $rc: $(cat "$WORK/bad.out")"; fi
done
env -u RUNTIME_DIRECTORY "$BIN" --reload "$DAEMON" > "$WORK/bad.out" 2>&1; rc=$?
if [ "$rc" = 64 ] && grep -q RUNTIME_DIRECTORY "$WORK/bad.out"; then ok "--reload without \$RUNTIME_DIRECTORY: exit 64, says why, sends nothing"
else not_ok "--reload without a runtime directory" "exit $rc: $(cat "$WORK/bad.out")"; fi
printf '%s 999999999999999999999 ok\nforged\n' "$DAEMON" > "$WORK/run/reload-verdict"
reload
if applied && ! grep -q forged "$WORK/verdict.out"; then ok "a verdict file it cannot read (a count out of range) is no verdict: --reload waits for the daemon's"
else not_ok "a hostile verdict file" "exit $VERDICT: $(cat "$WORK/verdict.out")"; fi

for key in $keys; do
    if [[ " ${tested[*]} " != *" $key "* ]]; then not_ok "$key: the daemon reads this top-level key, and no reload test here changes it"; fi
done
if [ "$(echo $keys | wc -w)" = "${#tested[@]}" ]; then ok "every top-level key the daemon reads ($(echo $keys | wc -w)) has its reload test"
else not_ok "the keys tested (${tested[*]}) are not the daemon's ($keys)"; fi
finish
