#!/usr/bin/env bash
# Beyond one host, with real processes on this machine: 10 hosts as network namespaces joined by a
# bridge, each running weave-healthd with its own configuration (three also run the example service),
# and a monitoring namespace with one real Prometheus (file_sd, the shipped rules), one real
# Alertmanager (the shipped routing) and a webhook receiver. The shipped files in monitoring/ are
# used as they are but for addresses, intervals, and the `for` of the four alerts the test fires.
# Everything is stopped by PID and by namespace name at exit, whether the test passed or not.
# Without `ip netns` (no root, no kernel support) the hosts are loopback addresses 127.0.0.x instead.
# Usage: Tests/Integration/fleet.sh PATH-TO-weave-healthd PATH-TO-Orders
set -uo pipefail

source "$(dirname "$0")/lib.sh"
ORDERS=$(realpath "$2")
ROOT=$(cd "$HERE/../.." && pwd)
HOSTS=10
APP_HOSTS=3           # h1..h3 run the example service
SCRAPE=1 EVALUATION=1 CHECK_INTERVAL=1 GROUP_WAIT=1 HOLD=5   # seconds; HOLD is the exercised alerts' `for`
NS="wvf$$"            # this run's namespaces: $NS-mon, $NS-h1 … $NS-h10
NAMESPACES=()

fleet_cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    # Whatever still runs inside a namespace of this run was started by it (a curl, a plugin).
    for ns in "${NAMESPACES[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    PIDS=()
    NAMESPACES=()
}
trap 'fleet_cleanup; rm -rf "$WORK"' EXIT

# --- the hosts -------------------------------------------------------------------------------------
if [ -z "${WEAVE_FLEET_LOOPBACK:-}" ] && ip netns add "$NS-mon" 2>/dev/null; then
    MODE=netns
    NAMESPACES+=("$NS-mon")
    ip -n "$NS-mon" link set lo up
    ip -n "$NS-mon" link add br0 type bridge
    ip -n "$NS-mon" addr add 10.231.0.1/24 dev br0
    ip -n "$NS-mon" link set br0 up
    for i in $(seq $HOSTS); do
        ip netns add "$NS-h$i" && NAMESPACES+=("$NS-h$i")
        ip -n "$NS-h$i" link set lo up
        ip -n "$NS-mon" link add "h$i" type veth peer name eth0 netns "$NS-h$i"
        ip -n "$NS-mon" link set "h$i" master br0 up
        ip -n "$NS-h$i" addr add "10.231.0.$((10 + i))/24" dev eth0
        ip -n "$NS-h$i" link set eth0 up
    done
    echo "# $HOSTS hosts as network namespaces $NS-h1..$NS-h$HOSTS (10.231.0.11-$((10 + HOSTS))), monitoring in $NS-mon"
else
    MODE=loopback
    echo "# ip netns is not available here: the $HOSTS hosts are loopback addresses 127.0.0.11-$((10 + HOSTS)) instead"
fi
in_host() { local host=$1; shift; if [ $MODE = netns ]; then ip netns exec "$NS-$host" "$@"; else "$@"; fi; }
# For `spawn HOST COMMAND… &`: the background subshell becomes the command (ip netns exec execs it
# too), so $! is the command's own PID, the one to signal and to stop.
spawn() { local host=$1; shift; if [ $MODE = netns ]; then exec ip netns exec "$NS-$host" "$@"; else exec "$@"; fi; }
address() { if [ $MODE = netns ]; then echo "10.231.0.$((10 + $1))"; else echo "127.0.0.$((10 + $1))"; fi; }
target() { echo "$(address "$1"):9096"; }

declare -A DAEMON_PID
start_host_daemon() { # host number
    spawn "h$1" "$BIN" --config "$WORK/h$1/config.yaml" >> "$WORK/h$1/daemon.log" 2>&1 &
    DAEMON_PID[$1]=$!
    PIDS+=("$!")
}
for i in $(seq $HOSTS); do
    mkdir -p "$WORK/h$i/apps"
    touch "$WORK/h$i/db.ok"
    # Each host its own configuration: the db heartbeat everywhere; a plugin with perfdata on even hosts.
    {
        echo "listen:"
        echo "  - address: $(target "$i")"
        echo "apps:"
        echo "  directory: $WORK/h$i/apps"
        echo "  timeout: 1s"
        echo "  budget: 2s"
        echo "  health_interval: 1s"
        echo "checks:"
        echo "  - {name: db, type: file, path: $WORK/h$i/db.ok, interval: ${CHECK_INTERVAL}s}"
        echo "  - {name: disk-root, type: disk, path: /, warn_free_percent: 1, fail_free_percent: 0, interval: 5s}"
        [ $((i % 2)) -eq 0 ] && echo "  - {name: queue, type: exec, command: [/bin/echo, 'OK - 3 queued | depth=3 age=120ms size=2KB full=30% served=12c'], interval: 5s}"
        # A textfile directory on even hosts, with a backup job's file.
        if [ $((i % 2)) -eq 0 ]; then
            mkdir -p "$WORK/h$i/textfile"
            printf '# TYPE backup_last_success_timestamp_seconds gauge\nbackup_last_success_timestamp_seconds 1.8e9\n' > "$WORK/h$i/textfile/backup.prom"
            echo "textfile: {directory: $WORK/h$i/textfile}"
        fi
    } > "$WORK/h$i/config.yaml"
    start_host_daemon "$i"
done
for i in $(seq $APP_HOSTS); do
    app_port=$((18080 + i))
    spawn "h$i" "$ORDERS" --name orders --port $app_port --apps-dir "$WORK/h$i/apps" > "$WORK/h$i/orders.log" 2>&1 &
    PIDS+=("$!")
done

# --- monitoring: Prometheus, Alertmanager, the receiver --------------------------------------------
PROM="127.0.0.1:$(free_port)"
AM="127.0.0.1:$(free_port)"
RECEIVER="127.0.0.1:$(free_port)"
NOTIFICATIONS="$WORK/notifications.jsonl"
touch "$NOTIFICATIONS"
mkdir -p "$WORK/file_sd"
{
    echo "- targets:"
    for i in $(seq $HOSTS); do echo "    - $(target "$i")"; done
    echo "  labels:"
    echo "    environment: test"
} > "$WORK/file_sd/fleet.yml"
if "$PY" "$HERE/fleet_configs.py" "$ROOT/monitoring" "$WORK" "$AM" "http://$RECEIVER" "${HOLD}s"; then
    ok "the shipped Prometheus, rules and Alertmanager files load and adapt to the test"
else not_ok "the shipped monitoring files"; fi
expect "promtool check config accepts the test's Prometheus configuration (shipped rules)" promtool check config "$WORK/prometheus.yml"
expect "amtool check-config accepts the test's Alertmanager configuration (shipped routing)" amtool check-config "$WORK/alertmanager.yml"
spawn mon "$PY" "$HERE/alert_receiver.py" 127.0.0.1 "${RECEIVER##*:}" "$NOTIFICATIONS" > "$WORK/receiver.log" 2>&1 &
PIDS+=("$!")
spawn mon prometheus-alertmanager --config.file="$WORK/alertmanager.yml" --storage.path="$WORK/alertmanager" \
    --web.listen-address="$AM" --cluster.listen-address= > "$WORK/alertmanager.log" 2>&1 &
PIDS+=("$!")
spawn mon prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="$PROM" > "$WORK/prometheus.log" 2>&1 &
PIDS+=("$!")

query() { # PROMQL: the API's JSON answer
    in_host mon curl -s --max-time 5 --data-urlencode "query=$1" "http://$PROM/api/v1/query"
}
results() { # PROMQL: how many series the query returns ("error" when it fails)
    query "$1" | "$PY" -c 'import json,sys
d = json.load(sys.stdin)
print(len(d["data"]["result"]) if d.get("status") == "success" else "error: " + d.get("error", "?"))' 2>/dev/null || echo error
}
value() { # PROMQL: the first result's value
    query "$1" | "$PY" -c 'import json,sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")' 2>/dev/null
}

deadline=$((SECONDS + 90))
while [ $SECONDS -lt $deadline ] && [ "$(value "sum(up{job=\"weave-healthd\"})")" != "$HOSTS" ]; do sleep 1; done
if [ "$(value "sum(up{job=\"weave-healthd\"})")" = "$HOSTS" ]; then ok "Prometheus finds and scrapes all $HOSTS daemons through file_sd"
else not_ok "Prometheus scrapes all $HOSTS daemons" "$(query 'up')"; fi
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ] && [ "$(value 'sum(weave_app_up{job="weave-healthd"})')" != "$APP_HOSTS" ]; do sleep 1; done
if [ "$(value 'sum(weave_app_up{job="weave-healthd"})')" = "$APP_HOSTS" ]; then ok "the example service is up on $APP_HOSTS hosts, through their daemons"
else not_ok "the example service is up on $APP_HOSTS hosts" "$(query 'weave_app_up'; tail -3 "$WORK/h1/orders.log")"; fi

# A little traffic, two rounds a few scrapes apart so rates have an increase to see: slow factory
# runs and resolution errors, below every dependency alert's threshold.
for round in 1 2; do
    for i in $(seq $APP_HOSTS); do
        for path in report orders refunds; do in_host "h$i" curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$((18080 + i))/$path"; done
    done
    sleep 3
done

# --- the dashboard: every panel's expression returns data from this Prometheus -------------------
panels=0
empty=()
while IFS= read -r expression; do
    panels=$((panels + 1))
    concrete=$(sed -e 's/\$instance/.*/g' -e 's/\$app/.*/g' -e 's/\$__rate_interval/1m/g' -e 's/\$__range/5m/g' <<<"$expression")
    count=$(results "$concrete")
    [ "$count" = 0 ] || [[ "$count" == error* ]] && empty+=("$count: $expression")
done < <("$PY" -c 'import json,sys
for panel in json.load(open(sys.argv[1]))["panels"]:
    for target in panel.get("targets", []): print(target["expr"])' "$ROOT/monitoring/dashboards/weave-fleet.json")
if [ "$panels" -gt 15 ] && [ ${#empty[@]} -eq 0 ]; then ok "all $panels expressions of the dashboard's panels return data"
else not_ok "the dashboard's $panels expressions return data" "$(printf '%s\n' "${empty[@]}")"; fi
if [ "$(results 'dependency:weave_resolve_duration_seconds:p99_rate5m{app="orders",dependency="ReportBuilder",path="factory"} > 0')" = "$APP_HOSTS" ]; then
    ok "the p99 recording rule has a value for the example's slow factory on each app host"
else not_ok "the p99 recording rule" "$(query 'dependency:weave_resolve_duration_seconds:p99_rate5m{app="orders"}')"; fi

# --- the metric reference: a host with the example service, a plugin with every perfdata unit and a textfile ---
in_host h2 curl -s --max-time 5 "http://$(target 2)/metrics" > "$WORK/h2/metrics.txt"
if mismatches=$("$PY" "$HERE/metric_reference.py" "$ROOT/monitoring/README.md" "$WORK/h2/metrics.txt"); then
    ok "every family served matches the metric reference table (name, type, labels, help)"
else not_ok "the metric reference table matches what is served" "$mismatches"; fi
expect "promtool check metrics accepts that scrape" bash -c "promtool check metrics < '$WORK/h2/metrics.txt'"

# --- the fleet's cost to Prometheus ------------------------------------------------------------------
samples=$(value 'sum(scrape_samples_scraped{job="weave-healthd"})')
app_samples=$(value "max(scrape_samples_scraped{job=\"weave-healthd\",instance=\"$(target 1)\"})")
plain_samples=$(value "max(scrape_samples_scraped{job=\"weave-healthd\",instance=\"$(target $HOSTS)\"})")
duration_max=$(value 'max(max_over_time(scrape_duration_seconds{job="weave-healthd"}[1m]))')
duration_avg=$(value 'avg(avg_over_time(scrape_duration_seconds{job="weave-healthd"}[1m]))')
echo "# figures: fleet of $HOSTS: $samples samples per scrape round (a host with the example app: $app_samples, without: $plain_samples); scrape duration avg ${duration_avg}s, max ${duration_max}s over 1m"

alerts() { # PYTHON-CONDITION on `a` (one received alert): matching lines of the receiver's log
    "$PY" -c 'import json,sys
for line in open(sys.argv[1]):
    a = json.loads(line); l = a["labels"]
    if eval(sys.argv[2]): print(line.strip())' "$NOTIFICATIONS" "$1"
}
wait_alert() { # PYTHON-CONDITION, seconds: until the receiver has such an alert; prints when it came
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do
        local first
        first=$(alerts "$1" | head -1)
        [ -n "$first" ] && { "$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["received"])' "$first"; return 0; }
        sleep 0.2
    done
    return 1
}
elapsed() { "$PY" -c "print(f'{$2 - $1:.1f}')"; }
budget=$((HOLD + 2 * SCRAPE + 2 * EVALUATION + CHECK_INTERVAL + GROUP_WAIT + 1))

# --- a check fails on one host -------------------------------------------------------------------
expect "nothing was notified while every host was healthy" test ! -s "$NOTIFICATIONS"
failed_at=$(date +%s.%N)
rm "$WORK/h3/db.ok"
if arrived=$(wait_alert "l['alertname'] == 'WeaveCheckFailing' and a['status'] == 'firing'" 60); then
    took=$(elapsed "$failed_at" "$arrived")
    echo "# figures: check failure to firing notification: ${took}s (for ${HOLD}s, scrape and evaluation ${SCRAPE}s, check interval ${CHECK_INTERVAL}s, group_wait ${GROUP_WAIT}s)"
    if "$PY" -c "import sys; sys.exit(0 if $took <= $budget else 1)"; then
        ok "the failing check's alert reaches the receiver in ${took}s (within for + 2 scrapes + 2 evaluations + check interval + group_wait: ${budget}s)"
    else not_ok "the alert arrives within ${budget}s" "it took ${took}s"; fi
else not_ok "the failing check's alert reaches the receiver" "$(cat "$NOTIFICATIONS"; tail -5 "$WORK/alertmanager.log")"; fi
right=$(alerts "l['alertname'] == 'WeaveCheckFailing' and l['instance'] == '$(target 3)' and l['check'] == 'db' and l.get('app', '') == '' and l['severity'] == 'critical' and l['environment'] == 'test' and a['path'] == '/oncall'" | wc -l)
if [ "$right" -ge 1 ]; then ok "it names the host ($(target 3)) and the check (db), and is routed to the on-call receiver"
else not_ok "the alert's labels and route" "$(cat "$NOTIFICATIONS")"; fi
others=$(alerts "l.get('instance') != '$(target 3)'")
if [ -z "$others" ]; then ok "no alert from the other $((HOSTS - 1)) hosts"; else not_ok "no alert from the other hosts" "$others"; fi

restored_at=$(date +%s.%N)
touch "$WORK/h3/db.ok"
if arrived=$(wait_alert "l['alertname'] == 'WeaveCheckFailing' and a['status'] == 'resolved' and l['instance'] == '$(target 3)'" 60); then
    took=$(elapsed "$restored_at" "$arrived")
    echo "# figures: check restored to resolved notification: ${took}s"
    ok "restored, the resolved notification arrives (${took}s)"
else not_ok "the resolved notification" "$(cat "$NOTIFICATIONS")"; fi

# --- a broken configuration reloaded on one host -------------------------------------------------
cp "$WORK/h5/config.yaml" "$WORK/h5/config.good"
printf 'checks:\n  - name: db\n    type: no-such-type\n' > "$WORK/h5/config.yaml"
kill -HUP "${DAEMON_PID[5]}"
if wait_alert "l['alertname'] == 'WeaveConfigReloadFailed' and a['status'] == 'firing'" 60 >/dev/null &&
   [ -n "$(alerts "l['alertname'] == 'WeaveConfigReloadFailed' and l['instance'] == '$(target 5)' and a['path'] == '/platform'")" ] &&
   [ -z "$(alerts "l['alertname'] == 'WeaveConfigReloadFailed' and l['instance'] != '$(target 5)'")" ]; then
    ok "a rejected reload on $(target 5) fires WeaveConfigReloadFailed for that host, to the platform receiver"
else not_ok "the reload-failed alert" "$(cat "$NOTIFICATIONS")"; fi
if [ "$(value "weave_config_last_reload_successful{instance=\"$(target 5)\"}")" = 0 ] &&
   [ "$(value "weave_health_status{instance=\"$(target 5)\",check=\"db\",state=\"healthy\"}")" = 1 ] &&
   [ "$(value "up{instance=\"$(target 5)\"}")" = 1 ]; then
    ok "the host keeps running its old configuration, and says so (weave_config_last_reload_successful 0)"
else not_ok "the old configuration keeps running" "$(query "{instance=\"$(target 5)\",__name__=~\"up|weave_health_status\"}")"; fi

# --- an application that fails at startup --------------------------------------------------------
# A second instance of the example on h2, on the port its first instance holds: its server cannot
# bind and the process ends, leaving its socket. It is down, not gone, so WeaveAppDown fires.
failed_at=$(date +%s.%N)
( spawn h2 "$ORDERS" --name orders-second --port 18082 --apps-dir "$WORK/h2/apps" > "$WORK/h2/orders-second.log" 2>&1 )
if arrived=$(wait_alert "l['alertname'] == 'WeaveAppDown' and a['status'] == 'firing'" 60); then
    took=$(elapsed "$failed_at" "$arrived")
    echo "# figures: application failed at startup to WeaveAppDown notification: ${took}s"
    if [ -n "$(alerts "l['alertname'] == 'WeaveAppDown' and l['instance'] == '$(target 2)' and l['app'] == 'orders-second'")" ] &&
       [ -z "$(alerts "l['alertname'] == 'WeaveAppDown' and l.get('app') != 'orders-second'")" ]; then
        ok "an application that fails at startup on $(target 2) fires WeaveAppDown for it alone (${took}s)"
    else not_ok "the app-down alert's labels" "$(alerts "l['alertname'] == 'WeaveAppDown'")"; fi
else not_ok "WeaveAppDown for an application that fails at startup" "$(cat "$NOTIFICATIONS"; ls "$WORK/h2/apps"; tail -3 "$WORK/h2/orders-second.log")"; fi

# --- a daemon killed ------------------------------------------------------------------------------
killed_at=$(date +%s.%N)
kill -KILL "${DAEMON_PID[7]}"
wait "${DAEMON_PID[7]}" 2>/dev/null
if arrived=$(wait_alert "l['alertname'] == 'WeaveHealthdDown' and a['status'] == 'firing'" 60); then
    took=$(elapsed "$killed_at" "$arrived")
    echo "# figures: daemon killed to target-down notification: ${took}s"
    if [ -n "$(alerts "l['alertname'] == 'WeaveHealthdDown' and l['instance'] == '$(target 7)' and a['path'] == '/oncall'")" ] &&
       [ -z "$(alerts "l['alertname'] == 'WeaveHealthdDown' and l['instance'] != '$(target 7)'")" ]; then
        ok "killing the daemon on $(target 7) fires WeaveHealthdDown for that host only (${took}s)"
    else not_ok "the target-down alert's host" "$(alerts "l['alertname'] == 'WeaveHealthdDown'")"; fi
else not_ok "the target-down alert" "$(cat "$NOTIFICATIONS")"; fi

# --- nothing left behind --------------------------------------------------------------------------
ran=("${NAMESPACES[@]}")
started=("${PIDS[@]}")
fleet_cleanup
left=""
for ns in "${ran[@]}"; do ip netns list 2>/dev/null | grep -qw "$ns" && left+=" namespace $ns"; done
for pid in "${started[@]}"; do kill -0 "$pid" 2>/dev/null && left+=" pid $pid"; done
if [ -z "$left" ]; then ok "every process and namespace of the test is gone"; else not_ok "nothing left behind" "$left"; fi
finish
