#!/usr/bin/env bash
# The http check over https, against certificates made here with openssl and served by
# `openssl s_server`: a valid chain, one expiring in 10 days, an expired one, the wrong hostname, a
# self-signed one. Debian's prometheus-blackbox-exporter probes the same endpoints: the expiry
# timestamps must be the same, and where the verdicts differ the test says why. Then hostile peers
# and files: a certificate that expired before 1970, a server that closes without close_notify, a
# peer that stalls the handshake beside a 1 s check, and CA files that are huge, a FIFO, a
# directory or garbage.
# Usage: Tests/Integration/tls.sh PATH-TO-weave-healthd
set -uo pipefail

source "$(dirname "$0")/lib.sh"
PKI="$WORK/pki"
mkdir -p "$PKI"
cd "$PKI" || exit 1
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj "/CN=weave test CA" 2>/dev/null
cat > ca.cnf <<CNF
[ca]
default_ca = test
[test]
dir = $PKI
database = $PKI/index.txt
new_certs_dir = $PKI
serial = $PKI/serial
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
CNF
: > index.txt
echo 1000 > serial
leaf() { # NAME, SAN, then openssl ca's date options
    local name=$1 san=$2
    shift 2
    openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "/CN=$name" -addext "subjectAltName=$san" 2>/dev/null
    openssl ca -config ca.cnf -batch -notext -cert ca.pem -keyfile ca.key -in "$name.csr" -out "$name.pem" "$@" 2>/dev/null
}
now=$(date -u +%s)
stamp() { date -u -d "@$1" +%Y%m%d%H%M%SZ; }
leaf valid "IP:127.0.0.1,DNS:localhost" -days 365
leaf soon "IP:127.0.0.1" -startdate "$(stamp $((now - 86400)))" -enddate "$(stamp $((now + 10 * 86400)))"
leaf expired "IP:127.0.0.1" -startdate "$(stamp $((now - 40 * 86400)))" -enddate "$(stamp $((now - 5 * 86400)))"
leaf wronghost "DNS:wrong.example" -days 365
leaf ancient "IP:127.0.0.1" -startdate 19600101000000Z -enddate 19650101000000Z
openssl req -x509 -newkey rsa:2048 -nodes -keyout selfsigned.key -out selfsigned.pem -days 365 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
cd - > /dev/null || exit 1
expect "openssl made the six certificates" test -s "$PKI/valid.pem" -a -s "$PKI/soon.pem" -a -s "$PKI/expired.pem" -a -s "$PKI/wronghost.pem" -a -s "$PKI/selfsigned.pem" -a -s "$PKI/ancient.pem"

declare -A PORT_OF
for name in valid soon expired wronghost selfsigned ancient; do
    PORT_OF[$name]=$(free_port)
    chain=()
    [ "$name" != selfsigned ] && chain=(-cert_chain "$PKI/ca.pem")
    openssl s_server -quiet -www -accept "127.0.0.1:${PORT_OF[$name]}" -cert "$PKI/$name.pem" -key "$PKI/$name.key" "${chain[@]}" \
        > "$WORK/server-$name.log" 2>&1 < /dev/null &
    PIDS+=("$!")
done
for name in valid soon expired wronghost selfsigned ancient; do
    for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/${PORT_OF[$name]}") 2>/dev/null && break; sleep 0.1; done
done

PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
{
    echo "listen:"
    echo "  - address: 127.0.0.1:$PORT"
    echo "details: always"
    echo "apps: {discover: false}"
    echo "checks:"
    for name in valid soon expired wronghost selfsigned ancient; do
        echo "  - {name: $name, type: http, url: \"https://127.0.0.1:${PORT_OF[$name]}/\", ca_file: $PKI/ca.pem, interval: 2s}"
    done
    echo "  - {name: selfsigned-insecure, type: http, url: \"https://127.0.0.1:${PORT_OF[selfsigned]}/\", insecure_skip_verify: true, interval: 2s}"
    echo "  - {name: expired-insecure, type: http, url: \"https://127.0.0.1:${PORT_OF[expired]}/\", insecure_skip_verify: true, interval: 2s}"
    echo "  - {name: valid-by-name, type: http, url: \"https://127.0.0.1:${PORT_OF[valid]}/\", server_name: localhost, ca_file: $PKI/ca.pem, interval: 2s}"
    echo "  - {name: wronghost-by-name, type: http, url: \"https://127.0.0.1:${PORT_OF[wronghost]}/\", server_name: localhost, ca_file: $PKI/ca.pem, interval: 2s}"
} > "$WORK/config.yaml"
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"
sleep 1
curl -s "$URL/health" > "$WORK/health.json"
status() { component "$WORK/health.json" "$1"; }
expect_status() { # CHECK, PATTERN, description
    local got
    got=$(status "$1")
    if grep -qE -- "$2" <<<"$got"; then ok "$3"; else not_ok "$3" "$got"; fi
}
soon_date=$(date -u -d "@$((now + 10 * 86400))" +%Y-%m-%d)
expired_date=$(date -u -d "@$((now - 5 * 86400))" +%Y-%m-%d)
expect_status valid '^pass \| $' "a valid chain: healthy"
expect_status valid-by-name '^pass' "the same by its DNS name (server_name: localhost)"
expect_status soon "^warn \\| https://127.0.0.1:[0-9]+/: a certificate expires $soon_date \\(in 9 days\\), within warn_days \\(14 days\\)$" \
    "expiring in 10 days: degraded, with the date"
expect_status expired "^fail \\| .*does not verify: certificate has expired \\(the earliest in the chain expired $expired_date \\(5 days ago\\)\\)$" \
    "expired: unhealthy, with the date"
expect_status wronghost '^fail \| .*does not verify: IP address mismatch' "the wrong hostname (an IP address here): unhealthy"
expect_status wronghost-by-name '^fail \| .*does not verify: hostname mismatch' "…and by name (server_name: localhost against wrong.example): unhealthy"
expect_status selfsigned '^fail \| .*does not verify: self-signed certificate' "self-signed: unhealthy"
expect_status selfsigned-insecure '^pass' "self-signed with insecure_skip_verify: healthy"
expect_status expired-insecure "^fail \\| https://127.0.0.1:[0-9]+/: a certificate expired $expired_date \\(5 days ago\\), within fail_days" \
    "expired with insecure_skip_verify: still unhealthy, on its date"
expect_status ancient '^fail \| .*expired 1965-01-01 \(' "a certificate that expired before 1970 has its date, and fails"

curl -s "$URL/metrics" > "$WORK/metrics.txt"
expect_promtool_clean "$WORK/metrics.txt" "promtool check metrics: clean"
expect "weave_check_tls_verified: 1 for the valid chain" grep -q '^weave_check_tls_verified{check="valid"} 1$' "$WORK/metrics.txt"
expect "…0 for the self-signed one" grep -q '^weave_check_tls_verified{check="selfsigned"} 0$' "$WORK/metrics.txt"
expect "weave_check_tls_version_info: TLSv1.3" grep -q '^weave_check_tls_version_info{check="valid",version="TLSv1.3"} 1$' "$WORK/metrics.txt"
ours() { awk -v c="$1" -F'[ ]' '$1 == "weave_check_tls_cert_expiry_timestamp_seconds{check=\"" c "\"}" { printf "%d", $2 }' "$WORK/metrics.txt"; }
notafter() { date -u -d "$(openssl x509 -in "$PKI/$1.pem" -noout -enddate | cut -d= -f2)" +%s; }
if [ "$(ours soon)" = "$(notafter soon)" ] && [ "$(ours expired)" = "$(notafter expired)" ] && [ "$(ours ancient)" = "$(notafter ancient)" ]; then
    ok "the expiry timestamps are the leaves' notAfter (openssl x509 -enddate), 1965's negative"
else not_ok "expiry timestamps" "soon $(ours soon) vs $(notafter soon); expired $(ours expired) vs $(notafter expired); ancient $(ours ancient) vs $(notafter ancient)"; fi

# --- blackbox_exporter on the same endpoints -------------------------------------------------------
BB_PORT=$(free_port)
cat > "$WORK/blackbox.yml" <<YAML
modules:
  verify:   {prober: http, timeout: 5s, http: {tls_config: {ca_file: $PKI/ca.pem}}}
  insecure: {prober: http, timeout: 5s, http: {tls_config: {insecure_skip_verify: true}}}
YAML
prometheus-blackbox-exporter --config.file="$WORK/blackbox.yml" --web.listen-address="127.0.0.1:$BB_PORT" > "$WORK/blackbox.log" 2>&1 &
PIDS+=("$!")
wait_for "http://127.0.0.1:$BB_PORT/metrics" 20 || not_ok "blackbox_exporter starts" "$(tail -3 "$WORK/blackbox.log")"
probe() { # MODULE, NAME, METRIC
    curl -s "http://127.0.0.1:$BB_PORT/probe?module=$1&target=https://127.0.0.1:${PORT_OF[$2]}/" | awk -v m="$3" '$1 == m { printf "%d", $2 }'
}
same=0
table="| endpoint | weave-healthd | blackbox_exporter (verify) | expiry, ours | expiry, blackbox (insecure_skip_verify) |"
for name in valid soon expired wronghost selfsigned; do
    verdict=$(status "$name" | cut -d' ' -f1)
    success=$(probe verify "$name" probe_success)
    theirs=$(probe insecure "$name" probe_ssl_earliest_cert_expiry)
    [ -n "$theirs" ] && [ "$theirs" = "$(ours "$name")" ] && same=$((same + 1))
    table+=$'\n'"| $name | $verdict | probe_success $success | $(ours "$name") | $theirs |"
done
echo "$table"
if [ "$same" -eq 5 ]; then ok "the earliest expiry of all five chains is blackbox_exporter's probe_ssl_earliest_cert_expiry, to the second"
else not_ok "the same expiry timestamps as blackbox_exporter" "$table"; fi
# Verdicts: the same, but for the chain expiring in 10 days, which blackbox_exporter passes (it has
# no expiry threshold: its users alert on probe_ssl_earliest_cert_expiry) and we call degraded.
if [ "$(probe verify valid probe_success)" = 1 ] && [ "$(probe verify soon probe_success)" = 1 ] \
    && [ "$(probe verify expired probe_success)" = 0 ] && [ "$(probe verify wronghost probe_success)" = 0 ] \
    && [ "$(probe verify selfsigned probe_success)" = 0 ]; then
    ok "the verdicts agree, but for the chain expiring in 10 days: blackbox_exporter passes it, we warn"
else not_ok "verdicts" "$table"; fi

# --- hostile peers and files ---------------------------------------------------------------------
"$PY" "$HERE/tls_peers.py" no-close-notify "$PKI/valid.pem" "$PKI/valid.key" > "$WORK/eof.port" 2>"$WORK/eof.log" &
PIDS+=("$!")
"$PY" "$HERE/tls_peers.py" stall > "$WORK/stall.port" 2>"$WORK/stall.log" &
PIDS+=("$!")
for _ in $(seq 50); do [ -s "$WORK/eof.port" ] && [ -s "$WORK/stall.port" ] && break; sleep 0.1; done
EOF_PORT=$(head -1 "$WORK/eof.port")
STALL_PORT=$(head -1 "$WORK/stall.port")
# The CA bundle with the test CA last, behind Debian's whole bundle: read once per configuration.
cat /etc/ssl/certs/ca-certificates.crt "$PKI/ca.pem" > "$WORK/bundle.pem" 2>/dev/null || cp "$PKI/ca.pem" "$WORK/bundle.pem"
touch "$WORK/flag"
PORT2=$(free_port)
write_hostile() { # CA_FILE
    cat > "$WORK/hostile.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT2
details: always
apps: {discover: false}
checks:
  - {name: no-close-notify, type: http, url: "https://127.0.0.1:$EOF_PORT/", ca_file: $1, server_name: localhost, interval: 1s}
  - {name: stalled, type: http, url: "https://127.0.0.1:$STALL_PORT/", ca_file: $1, interval: 1s, timeout: 30s}
  - {name: flag, type: file, path: $WORK/flag, interval: 1s}
YAML
}
write_hostile "$WORK/bundle.pem"
start_daemon "$WORK/hostile.yaml" "$WORK/hostile.log" "http://127.0.0.1:$PORT2/livez" 20 \
    || not_ok "the daemon starts with hostile peers" "$(tail -5 "$WORK/hostile.log")"
for _ in $(seq 100); do
    curl -s "http://127.0.0.1:$PORT2/health" > "$WORK/hostile.json"
    got=$(component "$WORK/hostile.json" no-close-notify)
    [[ "$got" != "None |"* ]] && break
    sleep 0.1
done
if [[ "$got" == "pass |"* ]]; then ok "a complete answer closed without close_notify is received, as curl does"; else not_ok "no close_notify" "$got"; fi
expect "…and its certificate's expiry is exported" grep -q '^weave_check_tls_cert_expiry_timestamp_seconds{check="no-close-notify"}' \
    <(curl -s "http://127.0.0.1:$PORT2/metrics")
# The stalled handshake takes its 30 s timeout; the file check beside it goes on every second.
rm "$WORK/flag"
flag_failed=""
for _ in $(seq 60); do
    curl -s "http://127.0.0.1:$PORT2/health" > "$WORK/hostile.json"
    if [[ "$(component "$WORK/hostile.json" flag)" == "fail |"* ]]; then
        flag_failed=yes; break
    fi
    sleep 0.1
done
if [ -n "$flag_failed" ]; then ok "beside a handshake stalled for 30 s, a 1 s file check fails within 6 s of its file going"
else not_ok "the file check on its own clock" "$(curl -s "http://127.0.0.1:$PORT2/health")"; fi
slowest=0
for _ in $(seq 20); do
    t=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$PORT2/livez")
    slowest=$("$PY" -c "print(max($slowest, $t))")
    sleep 0.25
done
threads_before=$(ls "/proc/$DAEMON/task" | wc -l)
sleep 12 # twelve more rounds of the stalled check
threads_after=$(ls "/proc/$DAEMON/task" | wc -l)
if "$PY" -c "import sys; sys.exit(0 if $slowest < 0.1 else 1)"; then ok "/livez meanwhile: at most ${slowest} s"; else not_ok "/livez under 100 ms" "$slowest s"; fi
if [ "$threads_after" -le "$((threads_before + 1))" ]; then ok "the stalled peer costs no thread per round ($threads_before → $threads_after threads in 12 s)"
else not_ok "threads stay bounded" "$threads_before → $threads_after"; fi

# CA files that are not a bundle: each a positioned configuration error at once, never a blocked open().
truncate -s 100M "$WORK/huge.pem"
mkfifo "$WORK/fifo.pem"
printf 'garbage\n' > "$WORK/garbage.pem"
for bad in huge fifo garbage dir; do
    file="$WORK/$bad.pem"
    [ "$bad" = dir ] && file="$WORK"
    write_hostile "$file"
    out=$(timeout 10 "$BIN" --check-config "$WORK/hostile.yaml" 2>&1); rc=$?
    case $bad in
        huge) want="is 104857600 bytes, more than the 4194304 allowed" ;;
        fifo) want="is a FIFO, not a regular file" ;;
        garbage) want="holds no PEM certificate" ;;
        dir) want="is a directory, not a regular file" ;;
    esac
    if [ $rc -eq 78 ] && grep -qE "hostile.yaml:[0-9]+:[0-9]+: ca_file .*$want" <<<"$out"; then ok "a ca_file that $want: exit 78, positioned"
    else not_ok "ca_file $bad" "rc $rc: $out"; fi
done
# The same by reload: refused, the old configuration keeps running.
write_hostile "$WORK/fifo.pem"
kill -HUP "$DAEMON"
for _ in $(seq 50); do grep -q "Configuration rejected" "$WORK/hostile.log" && break; sleep 0.1; done
if grep -q "Configuration rejected.*is a FIFO" "$WORK/hostile.log" && curl -sf -o /dev/null "http://127.0.0.1:$PORT2/livez"; then
    ok "a reload onto a FIFO ca_file is rejected at once; the daemon goes on"
else not_ok "reload with a FIFO ca_file" "$(tail -3 "$WORK/hostile.log")"; fi
# SIGTERM while a handshake waits inside OpenSSL on another thread: exit's handlers once tore
# OpenSSL down under it (a segmentation fault).
start_ms=$(date +%s%3N)
kill -TERM "$DAEMON"; wait "$DAEMON"; rc=$?
took=$(( $(date +%s%3N) - start_ms ))
if [ $rc -eq 0 ] && [ $took -le 2000 ]; then ok "SIGTERM with a handshake stalled inside OpenSSL: exit 0 in $took ms"
else not_ok "SIGTERM during a stalled handshake" "exit $rc after $took ms"; fi
finish
