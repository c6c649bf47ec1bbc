#!/usr/bin/env bash
# Integration tests of weave-health against a real weave-healthd and against broken listeners:
# the exit-code matrix, timeouts against a black hole, garbage, a Unix socket, Nagios and JSON.
# Usage: Tests/Integration/probe.sh PATH-TO-weave-healthd PATH-TO-weave-health
set -uo pipefail

source "$(dirname "$0")/lib.sh"
PROBE=$(realpath "$2")
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"

cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
  - unix: $WORK/health.sock
    mode: "0600"
details: always
checks:
  - {name: good, type: exec, command: ["/bin/true"], interval: 1s}
  - name: meh
    type: exec
    command: ["/bin/sh", "-c", "echo 'WARNING - 3% free | free=3%;10;5;0;100'; exit 1"]
    interval: 1s
  - {name: broken, type: exec, command: ["/bin/sh", "-c", "echo 'CRITICAL - refused'; exit 2"], interval: 1s}
  - {name: disk-root, type: disk, path: /, warn_free_percent: 1, fail_free_percent: 0, interval: 1s}
YAML
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 10 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"
sleep 0.5

probe() { # expected-exit description args…
    local expected=$1 description=$2; shift 2
    local output; output=$("$PROBE" "$@" 2>&1); local rc=$?
    if [ "$rc" -eq "$expected" ]; then ok "$description: exit $rc"; else not_ok "$description: exit $rc, expected $expected" "$output"; fi
}

probe 0 "healthy check" --url "$URL" --check good
probe 0 "degraded check" --url "$URL" --check meh
probe 1 "degraded check with --strict" --url "$URL" --check meh --strict
probe 1 "unhealthy check" --url "$URL" --check broken
probe 1 "several checks in one run, one unhealthy" --url "$URL" --check good --check broken
probe 64 "an unknown check is a usage error, not an outage" --url "$URL" --check nope
probe 64 "one unknown among known checks" --url "$URL" --check good --check nope
probe 3 "an unknown check with --nagios is UNKNOWN" --url "$URL" --nagios --check nope
expect "an unknown check is named, with the known ones, on standard error" \
    bash -c "'$PROBE' --url '$URL' --check nope 2>&1 >/dev/null | grep -q 'no check named nope (known: .*good'"
probe 1 "overall (one check unhealthy)" --url "$URL"
probe 0 "liveness ignores downstream checks" --url "$URL" --live
probe 0 "over the Unix socket" --unix "$WORK/health.sock" --check good
probe 0 "target from the daemon's --config" --config "$WORK/config.yaml" --check good
WEAVE_HEALTH_URL="$URL" probe 0 "target from WEAVE_HEALTH_URL" --check good
probe 0 "--connect-only" --url "$URL" --connect-only
probe 64 "usage error" --live --ready
probe 64 "a bad --url" --url ftp://x
expect "a usage error is one line with a hint" test "$("$PROBE" --bogus 2>&1 | wc -l)" -eq 1

# Nagios and JSON against the real daemon.
"$PROBE" --url "$URL" --nagios > "$WORK/nagios.txt"; rc=$?
if [ $rc -eq 2 ] && "$PY" - "$WORK/nagios.txt" <<'PYTHON'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
status, _, perfdata = lines[0].partition(" | ")
assert re.fullmatch(r"WEAVE HEALTH (OK|WARNING|CRITICAL|UNKNOWN) - .+", status), status
assert "1 of 4 unhealthy: broken (CRITICAL - refused)" in status, status
item = re.compile(r"'(?:[^']|'')+'=-?[0-9.]+(?:%|s|ms|us|B|KB|MB|TB|c)?(?:;-?[0-9.]*){0,4}")
for part in perfdata.split(" "):
    assert item.fullmatch(part), part
assert any(p.startswith("'disk-root'=") and "%;" in p for p in perfdata.split(" ")), perfdata
assert lines[1:] == sorted(lines[1:], key=lambda l: l.split("] ")[1]) and len(lines) == 5, lines
PYTHON
then ok "--nagios: CRITICAL, exit 2, a valid status line with perfdata, long output per check"
else not_ok "--nagios output" "rc=$rc $(cat "$WORK/nagios.txt")"; fi
probe 1 "--nagios WARNING is 1" --url "$URL" --nagios --check meh
"$PROBE" --url "$URL" --json > "$WORK/health.json"
expect "--json is valid JSON with the probe's timing" "$PY" -c '
import json, sys; d = json.load(open(sys.argv[1])); assert d["status"] == "fail" and d["probe"]["exitCode"] == 1
assert "broken:status" in d["checks"] and d["probe"]["durationSeconds"] > 0' "$WORK/health.json"
expect "--quiet prints nothing" test -z "$("$PROBE" --url "$URL" --quiet)"
# On a terminal (script(1) gives it one) the states are coloured, unless NO_COLOR is set.
expect "colour on a terminal" bash -c "script -qec \"'$PROBE' --url '$URL'\" /dev/null | grep -q $'\e\\[3'"
expect "no colour with NO_COLOR" bash -c "! NO_COLOR=1 script -qec \"'$PROBE' --url '$URL'\" /dev/null | grep -q $'\e\\['"
expect "top lists the daemon's services" bash -c "'$PROBE' top --url '$URL' | grep -q 'broken (HealthCheckable)'"

# Broken peers: a black hole (accepts, never answers), a garbage speaker, a 503 whose body says
# pass, a body with two status keys, 3 MB of /health in chunks of 30 bytes sent a few at a time, and nobody.
"$PY" - "$WORK/peers.ports" <<'PYTHON' &
import json, socket, sys, threading, time
def http(status, body):
    return b"HTTP/1.1 %d X\r\nContent-Type: application/health+json\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body)
def chunked(body, size):
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size]) for i in range(0, len(body), size))
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/health+json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
big = json.dumps({"status": "pass", "checks": {"c%d:status" % i: [{"status": "pass", "output": "x" * 200}]
                                               for i in range(12000)}}).encode()
answers = [None, b"SSH-2.0-OpenSSH_9.2\r\nProtocol mismatch.\r\n", http(503, b'{"status":"pass"}'),
           http(200, b'{"status":"fail","status":"pass"}'), chunked(big, 30)]
def serve(sock, answer, trickle):
    held = []
    while True:
        conn, _ = sock.accept()
        if answer is None:
            held.append(conn)
            continue
        conn.recv(4096)
        if trickle:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # 10,000 writes of about 10 chunks of 30 bytes, paced so that each is a read of its own: a
            # reader that decoded every chunk again at each read (as the probe did) decodes 500 million.
            step = len(answer) // 10000 + 1
            for i in range(0, len(answer), step):
                conn.sendall(answer[i:i + step])
                time.sleep(0.0002)
        else:
            conn.sendall(answer)
        conn.close()
ports = []
for index, answer in enumerate(answers):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16); ports.append(s.getsockname()[1])
    threading.Thread(target=serve, args=(s, answer, index == 4), daemon=True).start()
open(sys.argv[1], "w").write(" ".join(map(str, ports)) + "\n")
threading.Event().wait()
PYTHON
PIDS+=("$!")
for _ in $(seq 50); do [ -s "$WORK/peers.ports" ] && break; sleep 0.1; done
read -r HOLE GARBAGE LIAR TWICE BIG < "$WORK/peers.ports"
probe 1 "a 503 whose body says pass is not healthy" --url "http://127.0.0.1:$LIAR"
expect "the 503 is named" bash -c "'$PROBE' --url http://127.0.0.1:$LIAR | grep -q 'HTTP 503'"
probe 1 "two status keys are a bad answer, not the first of them" --url "http://127.0.0.1:$TWICE"
expect "two status keys: says so" bash -c "'$PROBE' --url http://127.0.0.1:$TWICE | grep -q 'gives a key twice'"
probe 0 "3 MB of /health in small pieces is read within --timeout 10s" --url "http://127.0.0.1:$BIG" --timeout 10s
start=$(date +%s%N)
"$PROBE" --url "http://127.0.0.1:$HOLE" --timeout 1s > "$WORK/hole.txt" 2>&1; rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 1 ] && [ $elapsed -le 1200 ]; then ok "black hole: exit 1 in $elapsed ms (--timeout 1s + 0.2 s)"
else not_ok "black hole: exit 1 within 1.2 s" "rc=$rc ${elapsed} ms $(cat "$WORK/hole.txt")"; fi
expect "black hole: says it timed out" grep -q "timed out" "$WORK/hole.txt"
probe 1 "a garbage-speaking listener" --url "http://127.0.0.1:$GARBAGE"
expect "garbage: says it is not HTTP" bash -c "'$PROBE' --url http://127.0.0.1:$GARBAGE | grep -q 'bad response: not HTTP'"
probe 3 "garbage under --nagios is UNKNOWN" --url "http://127.0.0.1:$GARBAGE" --nagios

# --- every command an alert's description names (in backticks) runs as written ----------------------------
# Template labels take values this daemon has; weave-health runs against it, weave-healthd checks the
# shipped configuration, journalctl reads the host's journal (it fails on an option it does not know).
"$PY" - "$HERE/../../monitoring/rules/weave-alerts.yml" > "$WORK/alert-commands.txt" <<'PY'
import re, sys, yaml
values = {"app": "", "check": "broken", "dependency": "Database"}
for group in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for rule in group["rules"]:
        for command in re.findall(r"`([^`]+)`", rule["annotations"]["description"]):
            command = re.sub(r"\{\{ if \$labels\.app \}\}.*?\{\{ end \}\}", "", command)
            command = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: values[m.group(1)] or "good", command)
            print(rule["alert"] + "\t" + command)
PY
ran=0; broken=""
while IFS=$'\t' read -r alert command; do
    read -r -a words <<< "$command"
    case "${words[0]}" in
        weave-health) "$PROBE" "${words[@]:1}" --url "$URL" > "$WORK/alert-command.out" 2>&1; rc=$?
                      [ $rc -eq 0 ] || [ $rc -eq 1 ] || broken+="$alert: $command (exit $rc); " ;;
        weave-healthd) arguments=("${words[@]:1}")
                       "$BIN" "${arguments[@]//\/etc\/weave-healthd\/config.yaml/$HERE/../../systemd/config.yaml}" > "$WORK/alert-command.out" 2>&1 \
                           || broken+="$alert: $command ($(head -1 "$WORK/alert-command.out")); " ;;
        journalctl) "${words[@]}" --no-pager -q > "$WORK/alert-command.out" 2>&1 || broken+="$alert: $command; "
                    ! grep -q "unrecognized\|invalid\|Failed to" "$WORK/alert-command.out" || broken+="$alert: $command ($(head -1 "$WORK/alert-command.out")); " ;;
        *) broken+="$alert: $command (no such command here); " ;;
    esac
    ran=$((ran + 1))
done < "$WORK/alert-commands.txt"
if [ $ran -ge 6 ] && [ -z "$broken" ]; then ok "the $ran commands the alerts' descriptions name run as written (no usage error)"
else not_ok "the commands alerts name" "$ran ran; $broken"; fi

kill -TERM "$DAEMON"; wait "$DAEMON"
probe 1 "a stopped daemon" --url "$URL"
probe 2 "a stopped daemon under --nagios is CRITICAL" --url "$URL" --nagios
probe 1 "a stopped daemon's Unix socket" --unix "$WORK/health.sock"

finish
