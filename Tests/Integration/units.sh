#!/usr/bin/env bash
# The systemd_unit check through sd-bus. No systemd runs as PID 1 on these machines, so it talks to
# a private dbus-daemon on which a stand-in (fake_systemd.py) owns org.freedesktop.systemd1 and
# answers LoadUnit and the units' properties as systemd does; the daemon reaches it through
# $DBUS_SYSTEM_BUS_ADDRESS, which sd-bus honours. Then the bus is killed mid-run, and replaced by
# one that accepts connections and never answers.
# Usage: Tests/Integration/units.sh PATH-TO-weave-healthd
set -uo pipefail

source "$(dirname "$0")/lib.sh"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
cat > "$WORK/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>custom</type>
  <listen>unix:path=$WORK/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
</busconfig>
XML
dbus-daemon --config-file="$WORK/bus.conf" --nofork > "$WORK/bus.log" 2>&1 &
BUS=$!
PIDS+=("$BUS")
for _ in $(seq 50); do [ -S "$WORK/bus.sock" ] && break; sleep 0.1; done
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$WORK/bus.sock"
units() { # JSON of the units the stand-in reports
    printf '%s\n' "$1" > "$WORK/units.json.tmp" && mv "$WORK/units.json.tmp" "$WORK/units.json"
}
units '{"postgresql.service": {"LoadState": "loaded", "ActiveState": "active", "SubState": "running", "Result": "success",
                               "NRestarts": 0, "StateChangeTimestamp": 1795600000000000},
        "worker.service": {"LoadState": "loaded", "ActiveState": "activating", "SubState": "auto-restart", "Result": "exit-code",
                           "NRestarts": 3, "StateChangeTimestamp": 1795600100000000},
        "backup.timer": {"LoadState": "loaded", "ActiveState": "active", "SubState": "waiting", "StateChangeTimestamp": 1795600200000000}}'
"$PY" "$HERE/fake_systemd.py" "$DBUS_SYSTEM_BUS_ADDRESS" "$WORK/units.json" > "$WORK/fake.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 50); do grep -q ready "$WORK/fake.log" && break; sleep 0.1; done

cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
details: always
apps:
  discover: false
  health_interval: 1s
  targets: [{name: billing, socket: $WORK/billing.sock, unit: worker.service}]
checks:
  - {name: db, type: systemd_unit, unit: postgresql.service, interval: 1s}
  - {name: worker, type: systemd_unit, unit: worker.service, interval: 1s}
  - {name: backup, type: systemd_unit, unit: backup.timer, interval: 1s}
  - {name: ghost, type: systemd_unit, unit: ghost.service, interval: 1s}
YAML
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"
status() { # CHECK: "status | output" from /health now
    curl -s "$URL/health" > "$WORK/health.json"
    component "$WORK/health.json" "$1"
}
expect_status() { # CHECK, PATTERN, description
    local got
    for _ in $(seq 40); do got=$(status "$1"); grep -qE -- "$2" <<<"$got" && break; sleep 0.1; done
    if grep -qE -- "$2" <<<"$got"; then ok "$3"; else not_ok "$3" "$got"; fi
}
expect_status db '^pass \| $' "postgresql.service active (running): healthy"
expect_status worker '^fail \| worker.service is activating \(auto-restart\), last result exit-code, restarted 3 times$' \
    "worker.service in auto-restart: unhealthy, with its state, result and restarts"
expect_status backup '^pass' "a timer that is active (waiting): healthy"
expect_status ghost '^fail \| ghost.service does not exist' "a unit systemd does not know: unhealthy, said so"

expect_status billing '^fail \| billing is down: .*; worker.service is activating \(auto-restart\), last result exit-code, restarted 3 times$' \
    "an application that names its unit: down, and its unit's state in the same reason"
curl -s "$URL/metrics" > "$WORK/metrics.txt"
expect "weave_systemd_unit_state: postgresql.service active" grep -q '^weave_systemd_unit_state{check="db",unit="postgresql.service",state="active"} 1$' "$WORK/metrics.txt"
expect "…and activating for worker.service" grep -q '^weave_systemd_unit_state{check="worker",unit="worker.service",state="activating"} 1$' "$WORK/metrics.txt"
expect "weave_systemd_unit_restarts_total: NRestarts" grep -q '^weave_systemd_unit_restarts_total{check="worker",unit="worker.service"} 3$' "$WORK/metrics.txt"
expect "weave_systemd_unit_state_change_timestamp_seconds: when it entered its state" \
    grep -q '^weave_systemd_unit_state_change_timestamp_seconds{check="db",unit="postgresql.service"} 1795600000$' "$WORK/metrics.txt"
if ! grep -q 'unit="ghost.service"' "$WORK/metrics.txt"; then ok "a unit that does not exist has no series"; else not_ok "ghost series"; fi
expect_promtool_clean "$WORK/metrics.txt" "promtool check metrics: clean"

units '{"postgresql.service": {"LoadState": "loaded", "ActiveState": "failed", "SubState": "failed", "Result": "exit-code",
                               "NRestarts": 0, "StateChangeTimestamp": 1795600300000000}}'
expect_status db '^fail \| postgresql.service is failed \(failed\), last result exit-code$' "postgresql.service fails: unhealthy at the next round"
expect "the transition is logged with its reason" grep -q 'Health of db: healthy → unhealthy' "$WORK/daemon.log"

kill "$BUS"; wait "$BUS" 2>/dev/null
expect_status db '^fail \| postgresql.service: cannot connect to the system bus' "the bus gone: unhealthy, the reason says so"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/livez")
if [ "$code" = 200 ] && ! curl -s "$URL/metrics" | holds '^weave_systemd_unit_state{'; then
    ok "the daemon lives on without the bus, and shows no stale unit series"
else not_ok "without the bus" "livez $code"; fi

# A bus that accepts and never answers: each check's call waits for its timeout on one thread of
# its own, and is not started again while one runs, so threads and descriptors stay where they are.
"$PY" -c '
import socket, sys
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1]); server.listen(64)
print("ready", flush=True)
held = []
while True: held.append(server.accept()[0])
' "$WORK/bus.sock" > "$WORK/hung.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 50); do grep -q ready "$WORK/hung.log" && break; sleep 0.1; done
sleep 3
threads_before=$(ls "/proc/$DAEMON/task" | wc -l); fds_before=$(ls "/proc/$DAEMON/fd" | wc -l)
slowest=0
for _ in $(seq 50); do # 25 s of rounds at 1 s
    t=$(curl -s -o /dev/null -w '%{time_total}' "$URL/livez")
    slowest=$("$PY" -c "print(max($slowest, $t))")
    sleep 0.5
done
threads_after=$(ls "/proc/$DAEMON/task" | wc -l); fds_after=$(ls "/proc/$DAEMON/fd" | wc -l)
metrics_time=$(curl -s -o /dev/null -w '%{time_total}' "$URL/metrics")
# (At most the 8 threads of blocking calls, one per stuck check; it grew by one thread a round before.)
if [ "$threads_after" -le "$((threads_before + 8))" ] && [ "$fds_after" -le "$((fds_before + 8))" ]; then
    ok "a bus that never answers: threads $threads_before → $threads_after, descriptors $fds_before → $fds_after in 25 s"
else not_ok "threads and descriptors bounded with a hung bus" "threads $threads_before → $threads_after, descriptors $fds_before → $fds_after"; fi
if "$PY" -c "import sys; sys.exit(0 if $slowest < 0.1 and $metrics_time < 1 else 1)"; then
    ok "…/livez at most ${slowest} s meanwhile, /metrics ${metrics_time} s"
else not_ok "/livez and /metrics with a hung bus" "livez $slowest s, metrics $metrics_time s"; fi
expect_status db '^fail \| postgresql.service: (systemd was not asked|.*(timed out|Connection timed out))' "…and the check fails with why"
finish
