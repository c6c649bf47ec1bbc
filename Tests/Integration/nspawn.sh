#!/usr/bin/env bash
# The shipped unit under a real systemd: Debian 12 booted with systemd 252 as PID 1 in
# systemd-nspawn (a `debootstrap --variant=minbase` tree made once and kept, booted with
# --volatile=overlay so every boot starts clean, its own network), weave-healthd installed with
# Scripts/install and started with `systemctl enable --now`. The Swift runtime of the debug build is
# bind-mounted read-only from /opt/swift. Driven with nsenter into the container's PID 1; requests go
# over the container's loopback (nsenter -n) and its Unix socket (through /proc/PID/root).
# Needs root. WEAVE_NSPAWN_TREE names the tree (default /var/lib/weave-nspawn/bookworm); it has
# libnss-systemd, as a standard Debian 12 has, so dynamic users have names.
# Usage: Tests/Integration/nspawn.sh PATH-TO-weave-healthd PATH-TO-weave-health
set -uo pipefail

source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
TREE=${WEAVE_NSPAWN_TREE:-/var/lib/weave-nspawn/bookworm}
PROBE=$(realpath "$2")

if [ ! -e "$TREE/lib/x86_64-linux-gnu/libnss_systemd.so.2" ]; then
    echo "# making $TREE with debootstrap (once; about a minute)"
    rm -rf "$TREE.tmp" && mkdir -p "$(dirname "$TREE")"
    if debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,libnss-systemd bookworm "$TREE.tmp" \
        http://deb.debian.org/debian > "$WORK/debootstrap.log" 2>&1; then
        rm -rf "$TREE"
        mv "$TREE.tmp" "$TREE"
    else
        not_ok "debootstrap a Debian 12 tree" "$(tail -5 "$WORK/debootstrap.log")"
        finish; exit
    fi
fi

systemd-nspawn -D "$TREE" --volatile=overlay --register=no --keep-unit --console=pipe --private-network \
    --bind-ro=/opt/swift --bind-ro="$ROOT":/mnt/repo --bind-ro="$BIN":/mnt/weave-healthd --bind-ro="$PROBE":/mnt/weave-health \
    --boot > "$WORK/nspawn.log" 2>&1 &
NSPAWN=$!
PIDS+=("$NSPAWN")
INIT=""
for _ in $(seq 300); do
    INIT=$(pgrep -P "$NSPAWN" | head -1)
    [ -n "$INIT" ] && [ -S "/proc/$INIT/root/run/systemd/private" ] && break
    sleep 0.1
done
IN() { nsenter -t "$INIT" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
NET() { nsenter -t "$INIT" -n "$@"; } # a host program on the container's network
for _ in $(seq 100); do
    state=$(IN systemctl is-system-running 2>/dev/null)
    [ "$state" = running ] || [ "$state" = degraded ] && break
    sleep 0.1
done
if [ -n "$INIT" ] && [[ "$state" = running || "$state" = degraded ]]; then ok "Debian 12 booted, systemd as PID 1 ($(IN systemctl --version | head -1))"
else not_ok "systemd boots in systemd-nspawn" "state '${state:-}'; $(tail -5 "$WORK/nspawn.log")"; finish; exit; fi

IN bash -c 'cd /mnt/repo && Scripts/install /mnt/weave-healthd' > "$WORK/install.log" 2>&1
IN systemctl enable --now weave-healthd.service > "$WORK/enable.log" 2>&1
active=$(IN systemctl is-active weave-healthd.service)
status=$(IN systemctl show -P StatusText weave-healthd.service)
if [ "$active" = active ] && [[ "$status" == *checks* ]]; then ok "systemctl enable --now: active, READY=1 and its status: \"$status\""
else not_ok "the unit starts" "$active; $(IN journalctl -u weave-healthd --no-pager | tail -5)"; fi
pid=$(IN systemctl show -P MainPID weave-healthd.service)

# --- it answers, over TCP and the Unix listener ----------------------------------------------------------
for _ in $(seq 50); do NET curl -s -o /dev/null -m 1 http://127.0.0.1:9096/livez && break; sleep 0.1; done
tcp_livez=$(NET curl -s -m 5 http://127.0.0.1:9096/livez)
tcp_health=$(NET curl -s -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:9096/health)
NET curl -s -m 5 http://127.0.0.1:9096/metrics > "$WORK/metrics.txt"
unix_livez=$(curl -s -m 5 --unix-socket "/proc/$INIT/root/run/weave-healthd/health.sock" http://localhost/livez)
if [ "$tcp_livez" = ok ] && [ "$tcp_health" = 200 ] && grep -q '^weave_build_info' "$WORK/metrics.txt" && [ "$unix_livez" = ok ]; then
    ok "/livez, /health and /metrics answer over TCP, /livez over the Unix listener"
else not_ok "the unit answers" "tcp livez '$tcp_livez', health $tcp_health, unix livez '$unix_livez'"; fi
expect_promtool_clean "$WORK/metrics.txt" "promtool check metrics: clean"

# --- the journal: nothing at warning or above at start, its unit and MESSAGE_IDs, the catalog ---------------
warnings=$(IN journalctl -u weave-healthd.service -p warning --no-pager -q)
if [ -z "$warnings" ]; then ok "nothing at warning or above at start"; else not_ok "a quiet start" "$warnings"; fi
started=$(grep -o '3bbd3ed272c649f0bf8073cef7bd24fb' <(IN journalctl -u weave-healthd.service -o json --no-pager MESSAGE_ID=3bbd3ed272c649f0bf8073cef7bd24fb) | head -1)
unit=$(IN journalctl -o json --no-pager MESSAGE_ID=3bbd3ed272c649f0bf8073cef7bd24fb | grep -o '"_SYSTEMD_UNIT":"[^"]*"' | head -1)
if [ -n "$started" ] && [ "$unit" = '"_SYSTEMD_UNIT":"weave-healthd.service"' ]; then
    ok "journald: the start entry has its MESSAGE_ID and $unit"
else not_ok "journald fields" "message id '$started', $unit"; fi
if IN journalctl -x -u weave-healthd.service --no-pager | grep -q "^░░ Subject: weave-healthd started"; then
    ok "journalctl -x shows the catalog's text"
else not_ok "journalctl -x" "$(IN journalctl -x -u weave-healthd.service --no-pager | tail -4)"; fi

# --- a systemd_unit check of real units, over the real bus, from inside the hardened unit ------------------
# As a fixed user: Debian's dbus-daemon drops the connections of a DynamicUser= service here ("Transport
# endpoint is not connected"; busctl in `systemd-run -p DynamicUser=yes` fails the same way, as
# User=nobody does not), so the shipped unit's systemd_unit checks need this drop-in for now.
IN mkdir -p /etc/systemd/system/weave-healthd.service.d
IN sh -c 'printf "[Service]\nDynamicUser=no\nUser=nobody\nGroup=nogroup\n" > /etc/systemd/system/weave-healthd.service.d/user.conf'
IN systemctl daemon-reload
IN systemctl restart weave-healthd.service
pid=$(IN systemctl show -P MainPID weave-healthd.service)
IN sh -c 'cat >> /etc/weave-healthd/config.yaml <<YAML
  - {name: journald, type: systemd_unit, unit: systemd-journald.service, interval: 1s}
  - {name: ghost, type: systemd_unit, unit: ghost.service, interval: 1s}
YAML'
IN systemctl reload weave-healthd.service
for _ in $(seq 50); do NET curl -s -m 2 http://127.0.0.1:9096/health | grep -q '"ghost:status"' && break; sleep 0.1; done
NET curl -s -m 5 http://127.0.0.1:9096/health > "$WORK/health.json"
journald=$(component "$WORK/health.json" journald); ghost=$(component "$WORK/health.json" ghost)
if [[ "$journald" == "pass |"* ]] && [[ "$ghost" == "fail | ghost.service does not exist"* ]]; then
    ok "systemd_unit over the real bus, from the hardened unit (as nobody): systemd-journald.service passes, ghost.service fails"
else not_ok "systemd_unit against systemd" "journald: $journald; ghost: $ghost"; fi
if [ "$(IN systemctl show -P MainPID weave-healthd.service)" = "$pid" ] && IN journalctl -u weave-healthd --no-pager | grep -q "Configuration reloaded"; then
    ok "systemctl reload applies a changed file and keeps the PID ($pid)"
else not_ok "systemctl reload" "$(IN journalctl -u weave-healthd --no-pager | tail -3)"; fi
IN sh -c 'echo "checks: [" >> /etc/weave-healthd/config.yaml'
IN systemctl reload weave-healthd.service
for _ in $(seq 30); do IN journalctl -u weave-healthd --no-pager | grep -q "Configuration rejected" && break; sleep 0.1; done
if IN journalctl -u weave-healthd --no-pager | grep -q "Configuration rejected" && [ "$(IN systemctl is-active weave-healthd)" = active ] \
    && [ "$(NET curl -s -m 5 http://127.0.0.1:9096/livez)" = ok ]; then
    ok "a broken file on reload: rejected, the old configuration runs on, the service active"
else not_ok "a broken reload" "$(IN journalctl -u weave-healthd --no-pager | tail -3)"; fi

# --- the watchdog restarts a frozen daemon ------------------------------------------------------------------
IN cp /mnt/repo/systemd/config.yaml /etc/weave-healthd/config.yaml
IN rm /etc/systemd/system/weave-healthd.service.d/user.conf
IN sh -c 'printf "[Service]\nWatchdogSec=3s\n" > /etc/systemd/system/weave-healthd.service.d/watchdog.conf'
IN systemctl daemon-reload
IN systemctl restart weave-healthd.service
frozen=$(IN systemctl show -P MainPID weave-healthd.service)
IN kill -STOP "$frozen"
# SIGABRT waits for the stopped process; TimeoutAbortSec (5 s) later SIGKILL, then RestartSec (2 s).
for _ in $(seq 200); do
    now=$(IN systemctl show -P MainPID weave-healthd.service)
    [ -n "$now" ] && [ "$now" != 0 ] && [ "$now" != "$frozen" ] && [ "$(IN systemctl is-active weave-healthd)" = active ] && break
    sleep 0.1
done
# (NRestarts, not the journal's "Watchdog timeout" line, which PID 1's journal stream sometimes delivers late.)
restarts=$(IN systemctl show -P NRestarts weave-healthd.service)
if [ "$now" != "$frozen" ] && [ "${restarts:-0}" -ge 1 ]; then
    ok "SIGSTOP: the watchdog (WatchdogSec=3s) kills and restarts it (PID $frozen → $now, NRestarts $restarts)"
else not_ok "the watchdog restarts a frozen daemon" "PID $frozen → $now, NRestarts $restarts; $(IN journalctl -u weave-healthd --no-pager | grep -i watchdog | tail -3)"; fi
IN rm /etc/systemd/system/weave-healthd.service.d/watchdog.conf
IN systemctl daemon-reload

# --- the probe as units run it: ExecStartPost= (start fails unless ready), ExecCondition= ----------------------
IN sh -c 'printf "[Service]\nExecStartPost=/mnt/weave-health --unix /run/weave-healthd/health.sock --ready --quiet\n" \
    > /etc/systemd/system/weave-healthd.service.d/probe.conf'
IN systemctl daemon-reload
IN systemctl restart weave-healthd.service
post=$(IN systemctl show -P ExecStartPost weave-healthd.service | grep -o 'status=[0-9]*' | head -1)
if [ "$(IN systemctl is-active weave-healthd.service)" = active ] && [ "$post" = status=0 ]; then
    ok "ExecStartPost=weave-health --ready, in the hardened unit over its Unix socket: exit 0, the unit active"
else not_ok "weave-health as ExecStartPost=" "post $post; $(IN journalctl -u weave-healthd --no-pager | tail -3)"; fi
IN systemd-run --wait -q -p "ExecCondition=/mnt/weave-health --url http://127.0.0.1:9096 --live --quiet" /bin/touch /run/ran; ran=$?
IN systemd-run --wait -q -p "ExecCondition=/mnt/weave-health --url http://127.0.0.1:1 --live --quiet" /bin/touch /run/skipped; skipped=$?
if [ $ran -eq 0 ] && IN test -e /run/ran && ! IN test -e /run/skipped; then
    ok "ExecCondition=weave-health --live: a unit runs while the daemon lives, and its ExecStart is skipped when it does not answer"
else not_ok "weave-health as ExecCondition=" "live: $ran, unreachable: $skipped"; fi
IN rm /etc/systemd/system/weave-healthd.service.d/probe.conf
IN systemctl daemon-reload

# --- stop -----------------------------------------------------------------------------------------------------
IN systemctl restart weave-healthd.service
since=$(IN date '+%Y-%m-%d %H:%M:%S')
start_ms=$(date +%s%3N)
IN systemctl stop weave-healthd.service
took=$(( $(date +%s%3N) - start_ms ))
result=$(IN systemctl show -P Result weave-healthd.service)
late=$(IN journalctl -u weave-healthd.service -p warning --since "$since" --no-pager -q)
if [ "$result" = success ] && [ "$took" -lt 5000 ] && [ -z "$late" ]; then
    ok "systemctl stop: result success in $took ms (TimeoutStopSec=5s), nothing at warning or above"
else not_ok "systemctl stop" "result $result after $took ms; $late"; fi

# --- socket activation by systemd itself ------------------------------------------------------------------------
IN systemctl start weave-healthd.socket
for _ in $(seq 30); do [ "$(IN systemctl is-active weave-healthd.socket)" = active ] && break; sleep 0.1; done
port=$(IN systemctl show -P Listen weave-healthd.socket | grep -o '[0-9]*' | tail -1)
first=$(NET curl -s -m 10 "http://127.0.0.1:$port/metrics" | grep -c '^weave_build_info')
if [ "$first" -ge 1 ] && [ "$(IN systemctl is-active weave-healthd-isolated.service)" = active ]; then
    ok "socket activation: the first connection to weave-healthd.socket starts the isolated unit, which answers"
else not_ok "socket activation" "port '$port', $first build_info lines; $(IN journalctl -u weave-healthd-isolated --no-pager | tail -3)"; fi
warnings=$(IN journalctl -u weave-healthd-isolated.service -p warning --no-pager -q)
if [ -z "$warnings" ]; then ok "…with nothing at warning or above (it reads the applications' directory too)"
else not_ok "a quiet start of the isolated unit" "$warnings"; fi
finish
