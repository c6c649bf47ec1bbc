#!/usr/bin/env bash
# The http check over https, against certificates made here with openssl and served by
# `openssl s_server`: a valid chain, one expiring in 10 days, an expired one, the wrong hostname, a
# self-signed one. Debian's prometheus-blackbox-exporter probes the same endpoints: the expiry
# timestamps must be the same, and where the verdicts differ the test says why.
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
openssl req -x509 -newkey rsa:2048 -nodes -keyout selfsigned.key -out selfsigned.pem -days 365 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
cd - > /dev/null || exit 1
expect "openssl made the five certificates" test -s "$PKI/valid.pem" -a -s "$PKI/soon.pem" -a -s "$PKI/expired.pem" -a -s "$PKI/wronghost.pem" -a -s "$PKI/selfsigned.pem"

declare -A PORT_OF
for name in valid soon expired wronghost selfsigned; do
    PORT_OF[$name]=$(free_port)
    chain=()
    [ "$name" != selfsigned ] && chain=(-cert_chain "$PKI/ca.pem")
    openssl s_server -quiet -www -accept "127.0.0.1:${PORT_OF[$name]}" -cert "$PKI/$name.pem" -key "$PKI/$name.key" "${chain[@]}" \
        > "$WORK/server-$name.log" 2>&1 < /dev/null &
    PIDS+=("$!")
done
for name in valid soon expired wronghost selfsigned; do
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
    for name in valid soon expired wronghost selfsigned; do
        echo "  - {name: $name, type: http, url: \"https://127.0.0.1:${PORT_OF[$name]}/\", ca_file: $PKI/ca.pem, interval: 2s}"
    done
    echo "  - {name: selfsigned-insecure, type: http, url: \"https://127.0.0.1:${PORT_OF[selfsigned]}/\", insecure_skip_verify: true, interval: 2s}"
    echo "  - {name: valid-by-name, type: http, url: \"https://127.0.0.1:${PORT_OF[valid]}/\", server_name: localhost, ca_file: $PKI/ca.pem, interval: 2s}"
    echo "  - {name: wronghost-by-name, type: http, url: \"https://127.0.0.1:${PORT_OF[wronghost]}/\", server_name: localhost, ca_file: $PKI/ca.pem, interval: 2s}"
} > "$WORK/config.yaml"
"$BIN" --config "$WORK/config.yaml" > "$WORK/daemon.log" 2>&1 &
PIDS+=("$!")
wait_for "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"
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

curl -s "$URL/metrics" > "$WORK/metrics.txt"
expect_promtool_clean "$WORK/metrics.txt" "promtool check metrics: clean"
expect "weave_check_tls_verified: 1 for the valid chain" grep -q '^weave_check_tls_verified{check="valid"} 1$' "$WORK/metrics.txt"
expect "…0 for the self-signed one" grep -q '^weave_check_tls_verified{check="selfsigned"} 0$' "$WORK/metrics.txt"
expect "weave_check_tls_version_info: TLSv1.3" grep -q '^weave_check_tls_version_info{check="valid",version="TLSv1.3"} 1$' "$WORK/metrics.txt"
ours() { awk -v c="$1" -F'[ ]' '$1 == "weave_check_tls_cert_expiry_timestamp_seconds{check=\"" c "\"}" { printf "%d", $2 }' "$WORK/metrics.txt"; }
notafter() { date -u -d "$(openssl x509 -in "$PKI/$1.pem" -noout -enddate | cut -d= -f2)" +%s; }
if [ "$(ours soon)" = "$(notafter soon)" ] && [ "$(ours expired)" = "$(notafter expired)" ]; then
    ok "the expiry timestamps are the leaves' notAfter (openssl x509 -enddate)"
else not_ok "expiry timestamps" "soon $(ours soon) vs $(notafter soon); expired $(ours expired) vs $(notafter expired)"; fi

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
finish
