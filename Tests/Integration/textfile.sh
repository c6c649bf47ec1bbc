#!/usr/bin/env bash
# The textfile directory against a real daemon: a good file, one being written (not yet renamed), a
# broken one, a 100 MB one, files created and removed while /metrics is scraped, and a reload that
# turns the directory off; every scrape checked by promtool.
# Usage: Tests/Integration/textfile.sh PATH-TO-weave-healthd
set -uo pipefail

source "$(dirname "$0")/lib.sh"
DIR="$WORK/textfile"
mkdir -p "$DIR"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
write_config() { # extra top-level YAML
    cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
apps: {discover: false}
checks:
  - {name: container, type: container}
$1
YAML
}
write_config "textfile: {directory: $DIR}"
cat > "$DIR/backup.prom" <<'PROM'
# HELP backup_last_success_timestamp_seconds When the last backup succeeded.
# TYPE backup_last_success_timestamp_seconds gauge
backup_last_success_timestamp_seconds{host="db1"} 1.8e+09
PROM
printf '# TYPE deploys counter\ndeploys_total{env="prod" 3\n' > "$DIR/broken.prom"
printf '# TYPE deploy_version gauge\ndeploy_version{version="4.2"} 1\n' > "$DIR/.deploy.prom.tmp"
printf '# TYPE weave_app_up gauge\nweave_app_up{app="billing"} 1\n' > "$DIR/forged.prom"
truncate -s 100M "$DIR/huge.prom"
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"

curl -s "$URL/metrics" > "$WORK/m1.txt"
curl -s "$URL/metrics" > "$WORK/m2.txt"
expect_promtool_clean "$WORK/m1.txt" "promtool check metrics: clean, with a broken, a huge and a forged file in the directory"
expect "the good file's series are on /metrics as written" grep -q '^backup_last_success_timestamp_seconds{host="db1"} 1.8e+09$' "$WORK/m1.txt"
expect "its modification time is a metric" grep -q '^weave_textfile_mtime_seconds{file="backup.prom"} 1[0-9.e+]*$' "$WORK/m1.txt"
expect "the broken file is an error for it" grep -q '^weave_textfile_scrape_error{file="broken.prom"} 1$' "$WORK/m1.txt"
expect "the 100 MB file is an error for it" grep -q '^weave_textfile_scrape_error{file="huge.prom"} 1$' "$WORK/m1.txt"
expect "the good one is not" grep -q '^weave_textfile_scrape_error{file="backup.prom"} 0$' "$WORK/m1.txt"
if ! grep -q 'deploy_version' "$WORK/m1.txt"; then ok "a file being written (a dotfile, not yet renamed) is not read"; else not_ok "the file being written is read"; fi
if ! grep -q '^weave_app_up{app="billing"}' "$WORK/m1.txt" && grep -q '^weave_textfile_dropped_families{file="forged.prom"} 1$' "$WORK/m1.txt"; then
    ok "a file cannot forge the daemon's weave_app_up: dropped and counted"
else not_ok "a forged weave_app_up" "$(grep -E 'billing|forged' "$WORK/m1.txt")"; fi
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON/status")
if [ "$rss" -lt 65536 ]; then ok "the 100 MB file is not read: the daemon's RSS is $((rss / 1024)) MiB"; else not_ok "RSS after the huge file" "$rss KiB"; fi
warnings=$(grep -c 'broken.prom is left out of /metrics: not a valid exposition' "$WORK/daemon.log")
if [ "$warnings" -eq 1 ]; then ok "one warning for the broken file over two scrapes, with the reason"; else not_ok "warnings for the broken file" "$warnings"; fi

mv "$DIR/.deploy.prom.tmp" "$DIR/deploy.prom"
expect "renamed into place, it is read at the next scrape" bash -c "curl -s '$URL/metrics' | grep -q '^deploy_version{version=\"4.2\"} 1$'"

# Files appear and vanish while /metrics is scraped: every scrape stays valid.
( for i in $(seq 400); do
      printf '# TYPE churn_%s gauge\nchurn_%s 1\n' "$i" "$i" > "$DIR/.churn-$i.tmp" && mv "$DIR/.churn-$i.tmp" "$DIR/churn-$i.prom"
      rm -f "$DIR/churn-$((i - 1)).prom"
  done ) &
CHURN=$!
bad=0
scrapes=0
while kill -0 "$CHURN" 2>/dev/null; do
    curl -s "$URL/metrics" > "$WORK/churn.txt"
    scrapes=$((scrapes + 1))
    if [ -n "$(promtool check metrics < "$WORK/churn.txt" 2>&1)" ] || grep -q 'scrape_error{file="churn' <(grep ' 1$' "$WORK/churn.txt"); then bad=$((bad + 1)); fi
done
wait "$CHURN"
if [ "$bad" -eq 0 ] && [ "$scrapes" -gt 0 ]; then ok "$scrapes scrapes while 400 files came and went: all valid, none an error"
else not_ok "scrapes during churn" "$bad of $scrapes bad: $(promtool check metrics < "$WORK/churn.txt" 2>&1 | head -3)"; fi

write_config ""
kill -HUP "$DAEMON"
for _ in $(seq 50); do curl -s "$URL/metrics" | holds weave_textfile_ || break; sleep 0.1; done
if ! curl -s "$URL/metrics" | holds -E 'weave_textfile_|backup_last_success'; then ok "a reload without textfile: removes its families"
else not_ok "reload without textfile" "$(curl -s "$URL/metrics" | grep -E 'weave_textfile_|backup' | head -3)"; fi
finish
