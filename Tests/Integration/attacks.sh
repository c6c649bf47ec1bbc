#!/usr/bin/env bash
# Attacks on the applications' side of weave-healthd (see /work/shared/ATTACKS.md): identity (another
# user imitating or removing an application's socket), a socket removed while its process runs, an
# application half broken (no flapping), /livez and memory under 40 applications with enormous /health,
# SIGTERM with 150 requests in flight on hung applications, and round 4's (#53): a series of 100,000
# labels, 4 MB native histograms, 60 sockets hanging /metrics or /events, 150 sockets flooding events, and
# round 5's (#64): an /events page of a run that started at 1e300, and a restart after it; round 6's (#66):
# a restart by hand, 200 flapping sockets of one user, one liar among 40. The fake applications are
# fake_apps.py on Unix sockets; the daemon listens on loopback. Every process is stopped by its PID,
# every wait is bounded. Needs root (it runs applications as root and as nobody, with setpriv).
# Usage: Tests/Integration/attacks.sh PATH-TO-weave-healthd
set -uo pipefail

source "$(dirname "$0")/lib.sh"
FAKE="$HERE/fake_apps.py"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
# nobody's applications bind sockets in directories under $WORK (mktemp makes it 0700).
chmod 0711 "$WORK"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
is_number() { [[ "$1" =~ ^[0-9]+$ ]]; }

# Stops PID with SIGTERM and waits for it, 10 s at most (then SIGKILL); sets STOP_MS and STOP_RC.
stop_pid() {
    local pid=$1 start sleeper which
    start=$(date +%s%N)
    kill -TERM "$pid" 2>/dev/null
    sleep 10 & sleeper=$!
    wait -n -p which "$pid" "$sleeper"; STOP_RC=$?
    STOP_MS=$((($(date +%s%N) - start) / 1000000))
    if [ "${which:-}" = "$sleeper" ]; then
        kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; STOP_RC=timeout
    else
        kill "$sleeper" 2>/dev/null; wait "$sleeper" 2>/dev/null
    fi
}

# Starts a daemon watching DIR with EXTRA apps: settings; sets DAEMON and LOG ($WORK/NAME.log).
start_watcher() { # NAME DIR [EXTRA-APPS-YAML]
    LOG="$WORK/$1.log"
    printf 'listen:\n  - address: 127.0.0.1:%s\ndetails: always\napps:\n  directory: %s\n  health_interval: 1s\n%s' \
        "$PORT" "$2" "${3:-}" > "$WORK/$1.yaml"
    start_daemon "$WORK/$1.yaml" "$LOG" "$URL/livez" 30 || echo "the daemon did not start: $(tail -3 "$LOG")" >&2
}

# Runs fake_apps.py ARGS… in the background (as nobody when the first word is "nobody"), output in
# OUT; sets APP to its PID and waits (10 s at most) until it says WORD.
start_app() { # OUT WORD [nobody] ARGS…
    local out=$1 word=$2; shift 2
    : > "$out"
    # setpriv execs Python: $! is the application's PID (the one SO_PEERCRED gives the daemon).
    if [ "$1" = nobody ]; then shift; setpriv --reuid=nobody --regid=nogroup --clear-groups "$PY" "$FAKE" "$@" > "$out" 2>&1 &
    else "$PY" "$FAKE" "$@" > "$out" 2>&1 & fi
    APP=$!
    PIDS+=("$APP")
    for _ in $(seq 100); do grep -q "^$word" "$out" && return 0; sleep 0.1; done
    echo "fake_apps.py $* did not start: $(tail -3 "$out")" >&2
}

metrics() { curl -s --max-time 10 -o "$WORK/metrics-now.txt" "$URL/metrics"; }
metrics_has() { metrics; grep -q -- "$1" "$WORK/metrics-now.txt"; }
until_true() { # SECONDS COMMAND…: runs COMMAND every 0.2 s until it succeeds
    local deadline=$((SECONDS + $1)); shift
    while [ $SECONDS -lt "$deadline" ]; do "$@" && return 0; sleep 0.2; done
    return 1
}
log_count() { grep -cF -- "$1" "$LOG"; } # LOG lines containing the fixed string
log_has() { grep -qF -- "$1" "$LOG"; }

# --- (a) identity: a name stays bound to the user who first served it -------------------------------
DIR="$WORK/identity"
mkdir "$DIR" && chmod 3777 "$DIR"   # the shared directory of group weave: writable by all, sticky, setgid
start_watcher identity "$DIR"
start_app "$WORK/payments-root.out" serving serve "$DIR" payments:orders:pass
ROOT_APP=$APP
if until_true 10 metrics_has '^weave_app_up{app="payments"} 1$' && grep -q '^orders_total{app="payments",' "$WORK/metrics-now.txt"; then
    ok "(a) root's payments.sock is served: weave_app_up{app=\"payments\"} 1, orders_total{app=\"payments\",…}"
else not_ok "(a) root's payments is served" "$(grep 'app="payments"' "$WORK/metrics-now.txt")"; fi

as_nobody rm "$DIR/payments.sock" 2> "$WORK/rm.err"; rc=$?
if [ $rc -ne 0 ] && [ -S "$DIR/payments.sock" ]; then
    ok "(a) nobody cannot remove root's socket (sticky bit): rm exits $rc, $(cut -c1-80 "$WORK/rm.err")"
else not_ok "(a) nobody cannot remove root's socket" "rm exited $rc; socket there: $([ -S "$DIR/payments.sock" ] && echo yes || echo no)"; fi

stop_pid "$ROOT_APP"
# A leave outside systemd is told once the grace for a restart (10 s) has passed.
if [ "$STOP_RC" = 0 ] && [ ! -e "$DIR/payments.sock" ] && until_true 15 log_has "Application payments left"; then
    ok "(a) root's payments stops gracefully (socket removed, exit $STOP_RC after $STOP_MS ms): the daemon logs that payments left"
else not_ok "(a) payments left" "exit $STOP_RC; $(ls "$DIR"); $(grep payments "$LOG" | tail -3)"; fi

start_app "$WORK/payments-nobody.out" serving nobody serve "$DIR" payments:forged:pass nobodys:orders:pass
NOBODY_APP=$APP
# The new name nobodys is served; by then the daemon has listed the forged payments.sock beside it.
if until_true 10 metrics_has '^weave_app_up{app="nobodys"} 1$'; then
    ok "(a) a new name (nobodys.sock) served by nobody is accepted: weave_app_up{app=\"nobodys\"} 1"
else not_ok "(a) nobody's new name is accepted" "$(grep weave_app_up "$WORK/metrics-now.txt")"; fi
: > "$WORK/forged-scrapes.txt"
for _ in 1 2 3 4 5; do
    metrics; cat "$WORK/metrics-now.txt" >> "$WORK/forged-scrapes.txt"
    curl -s --max-time 10 "$URL/health" >> "$WORK/forged-health.txt"; echo >> "$WORK/forged-health.txt"
    sleep 0.5
done
owner=$(stat -c %u "$DIR/payments.sock")
if [ "$owner" = 65534 ] && ! grep -q 'forged' "$WORK/forged-scrapes.txt" && ! grep -q '^weave_app_up{app="payments"} 1$' "$WORK/forged-scrapes.txt"; then
    ok "(a) nobody's payments.sock (uid $owner) is not served: no forged_total, no weave_app_up{app=\"payments\"} 1 in 5 scrapes"
else not_ok "(a) nobody's forged payments.sock is not served" "socket uid $owner; $(grep -E 'forged|app="payments"' "$WORK/forged-scrapes.txt" | sort -u | head -5)"; fi
if ! grep -q '"payments:status":\[{[^]]*"status":"pass"' "$WORK/forged-health.txt"; then
    ok "(a) /health never shows the forged payments as passing"
else not_ok "(a) /health shows the forged payments" "$(grep -o '"payments:status":[^]]*' "$WORK/forged-health.txt" | head -2)"; fi
refused=$(awk '/^weave_app_sockets_refused_total\{reason="owner"\} / { print $2 }' "$WORK/metrics-now.txt")
if awk -v r="${refused:-0}" 'BEGIN { exit !(r >= 1) }'; then ok "(a) weave_app_sockets_refused_total $refused"
else not_ok "(a) weave_app_sockets_refused_total ≥ 1" "${refused:-absent}"; fi
refusal="Refused $DIR/payments.sock: the application name payments belongs to uid 0, and this socket is owned by uid 65534"
lines=$(log_count "$refusal")
if [ "$lines" -eq 1 ]; then ok "(a) the refusal is logged exactly once after 5 scrapes and ~6 health rounds: \"$refusal\""
else not_ok "(a) the refusal is logged exactly once" "$lines lines; $(grep -i refused "$LOG" | head -3)"; fi
# A link by nobody to a socket nobody cannot reach: the daemon would lend it its own access.
mkdir -m 0700 "$WORK/private"
start_app "$WORK/secret.out" serving serve "$WORK/private" secret:orders:pass
SECRET=$APP
as_nobody ln -s "$WORK/private/secret.sock" "$DIR/peek.sock"
link_refusal="Refused $DIR/peek.sock: a link made by uid 65534 to a socket of another user"
if until_true 10 log_has "$link_refusal" && metrics && ! grep -q 'app="peek"' "$WORK/metrics-now.txt"; then
    ok "(a) nobody's link to root's private socket is refused, not served: \"$link_refusal\""
else not_ok "(a) a link to another user's socket" "$(grep 'app="peek"' "$WORK/metrics-now.txt" | head -2); $(grep -i refused "$LOG" | tail -2)"; fi
stop_pid "$SECRET"
stop_pid "$DAEMON"
stop_pid "$NOBODY_APP"

# --- (b) a socket removed while its process runs ---------------------------------------------------------
DIR="$WORK/vanish"
mkdir "$DIR"
start_watcher vanish "$DIR"
start_app "$WORK/vanish.out" serving serve "$DIR" vanish:orders:pass
VANISH=$APP
# Three applications that stop as real ones do on SIGTERM: socket removed, then exit 0.8 s later.
start_app "$WORK/graceful.out" serving serve "$DIR" 'graceful*3:orders:pass'
GRACEFUL=$APP
health_of() { # NAME: "status | output" of the component NAME in a /health read now
    curl -s --max-time 10 -o "$WORK/health-now.json" "$URL/health" && component "$WORK/health-now.json" "$1"
}
vanish_passes() { [[ "$(health_of vanish)" == "pass |"* ]]; }
until_true 10 metrics_has '^weave_app_up{app="graceful-02"} 1$'
if until_true 10 vanish_passes; then ok "(b) vanish is up and passing"; else not_ok "(b) vanish is up" "$(health_of vanish)"; fi

rm "$DIR/vanish.sock"
removed=$(now_ms)
# Meanwhile, the graceful applications stop under a scrape every 0.1 s.
( for _ in $(seq 40); do curl -s --max-time 5 -o /dev/null "$URL/metrics"; sleep 0.1; done ) &
SCRAPER=$!
PIDS+=("$SCRAPER")
( sleep 1; kill -TERM "$GRACEFUL" ) &
early="" turned="" expected="was removed, but the process that served it (pid $VANISH) still runs"
while [ $(($(now_ms) - removed)) -lt 16000 ]; do
    state=$(health_of vanish); at=$(($(now_ms) - removed))
    if [ $at -lt 9500 ]; then
        [[ "$state" == "pass |"* ]] || early+="${at} ms: $state; "
    elif [[ "$state" == "fail |"*"$expected"* ]]; then
        turned=$at; break
    fi
    sleep 0.5
done
if [ -z "$early" ]; then ok "(b) for 9.5 s after its socket was removed, vanish keeps its last state (pass)"
else not_ok "(b) vanish keeps its last state within the grace" "$early"; fi
if [ -n "$turned" ]; then ok "(b) $turned ms after the removal, vanish fails: \"$(health_of vanish | cut -d'|' -f2- | cut -c2-200)\""
else not_ok "(b) vanish fails with 'was removed, but … (pid $VANISH) still runs' within 16 s" "$(health_of vanish)"; fi
if until_true 3 log_has "Application vanish is down" && ! log_has "vanish left"; then
    ok "(b) the log says \"Application vanish is down\" and not that it left: $(grep -o 'Application vanish is down[^=]*' "$LOG" | head -1 | cut -c1-160)"
else not_ok "(b) vanish down, not left, in the log" "$(grep vanish "$LOG" | cut -c1-200)"; fi
kill -KILL "$VANISH"; wait "$VANISH" 2>/dev/null
killed=$(now_ms)
if until_true 5 log_has "Application vanish left"; then ok "(b) once its process is killed, the daemon logs \"Application vanish left\" after $(($(now_ms) - killed)) ms"
else not_ok "(b) vanish left after its process ended" "$(grep vanish "$LOG" | tail -2 | cut -c1-200)"; fi
wait "$SCRAPER"
stop_pid "$GRACEFUL"
graceful_left() { [ "$(grep -c "Application graceful-0. left" "$LOG")" -ge 3 ]; }
until_true 15 graceful_left
down=$(grep -c "Application graceful-0. is down" "$LOG")
left=$(grep -c "Application graceful-0. left" "$LOG")
if [ "$left" -eq 3 ] && [ "$down" -eq 0 ]; then
    ok "(b) 3 applications that stop gracefully under a scrape every 0.1 s: 3 'left' lines, no 'is down' line"
else not_ok "(b) a graceful stop is a leave, not a failure" "$left left, $down down: $(grep graceful "$LOG" | cut -c1-200 | head -6)"; fi
stop_pid "$DAEMON"

# --- (c) no flapping: /health valid, /metrics invalid ----------------------------------------------------
DIR="$WORK/flap"
mkdir "$DIR"
start_watcher flap "$DIR"
start_app "$WORK/halfbroken.out" serving serve "$DIR" halfbroken:invalid:pass
# Prometheus scrapes far less often than health rounds run: a health round sees it first.
sleep 1.5
ups=""
for _ in $(seq 20); do
    metrics; ups+="$(awk '/^weave_app_up\{app="halfbroken"\}/ { print $2 }' "$WORK/metrics-now.txt")"
    sleep 0.5
done
# Its first /health may say it is up before its /metrics was ever read; from the first scrape on it
# is down, once, and stays so.
down=$(log_count "Application halfbroken is down"); up=$(log_count "Application halfbroken is up")
last=$(grep -E "Application halfbroken is (up|down)" "$LOG" | tail -1)
if [ "$down" -eq 1 ] && [ "$up" -le 1 ] && [[ "$last" == *"is down"* ]]; then
    ok "(c) halfbroken over 11.5 s (20 scrapes, ~11 health rounds): one 'is down' line, the last, and at most the first /health's 'is up'"
else not_ok "(c) halfbroken does not flap in the log" "$down 'is down', $up 'is up': $(grep halfbroken "$LOG" | cut -c1-170 | head -4)"; fi
if [ "$ups" = "$(printf '0%.0s' $(seq 20))" ]; then ok "(c) weave_app_up{app=\"halfbroken\"} is 0 in all 20 scrapes"
else not_ok "(c) weave_app_up{app=\"halfbroken\"} 0 in every scrape" "per scrape: $ups"; fi
stop_pid "$DAEMON"
stop_pid "$APP"

# --- (d) /livez and memory under 40 applications with 1,000 failing components each --------------------
DIR="$WORK/load"
mkdir "$DIR"
start_app "$WORK/load.out" serving serve "$DIR" 'load*40:orders:fail,1000,200'
LOAD=$APP
size=$(awk '/^health / { print $3 }' "$WORK/load.out")
start_watcher load "$DIR" $'  timeout: 10s\n  budget: 20s\n'
loaded() { curl -s --max-time 20 -o "$WORK/health-load.json" "$URL/health" && grep -q '"load-39/replica-0999:status"' "$WORK/health-load.json"; }
until_true 30 loaded
one=$(curl -s --max-time 20 -o "$WORK/health-load.json" -w '%{time_total} %{size_download} %{http_code}' "$URL/health")
components=$(grep -o '"load-[0-9]*/replica-[0-9]*:status"' "$WORK/health-load.json" | wc -l)
deadline=$((SECONDS + 30))
readers=()
for reader in 1 2 3 4 5; do
    ( while [ $SECONDS -lt $deadline ]; do curl -s --max-time 20 -o /dev/null -w '%{http_code}\n' "$URL/health"; done > "$WORK/reader-$reader.codes" ) &
    readers+=("$!"); PIDS+=("$!")
done
: > "$WORK/livez.times"; : > "$WORK/rss.samples"
while [ $SECONDS -lt $deadline ]; do
    curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}\n' "$URL/livez" >> "$WORK/livez.times"
    awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON/status" >> "$WORK/rss.samples"
    sleep 0.25
done
wait "${readers[@]}"
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$DAEMON/status")
stop_pid "$DAEMON"
stop_pid "$LOAD"
samples=$(wc -l < "$WORK/livez.times")
bad=$(awk '$1 != 200' "$WORK/livez.times" | wc -l)
max=$(awk '{ print $2 }' "$WORK/livez.times" | sort -g | tail -1)
p50=$(awk '{ print $2 }' "$WORK/livez.times" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
peak=$(sort -n "$WORK/rss.samples" | tail -1)
answered=$(cat "$WORK"/reader-*.codes | sort | uniq -c | awk '{ printf "%s×%s ", $1, $2 }')
read -r one_time one_size one_code <<<"$one"
echo "# (d) each application's /health: $size bytes; one daemon /health before the load: HTTP $one_code, $one_size bytes, $components components, ${one_time} s; the 5 readers got: $answered"
if [ "$samples" -ge 60 ] && [ "$bad" -eq 0 ] && awk -v m="$max" 'BEGIN { exit !(m < 0.1) }'; then
    ok "(d) /livez during 30 s of 5 concurrent /health on 40 × 1,000 failing components: $samples samples, max ${max} s, p50 ${p50} s"
else not_ok "(d) /livez under 0.1 s under load" "$samples samples, $bad not 200, max ${max} s, p50 ${p50} s; slowest: $(sort -k2 -g "$WORK/livez.times" | tail -3 | tr '\n' ' ')"; fi
if is_number "${peak:-}" && [ "$peak" -lt $((256 * 1024)) ]; then ok "(d) VmRSS stays under 256 MiB: peak sampled $((peak / 1024)) MiB"
else not_ok "(d) VmRSS under 256 MiB" "peak sampled ${peak:-none} KiB"; fi
if is_number "${hwm:-}" && [ "$hwm" -lt $((256 * 1024)) ]; then ok "(d) VmHWM (the true peak) under 256 MiB: $((hwm / 1024)) MiB"
else not_ok "(d) VmHWM under 256 MiB" "${hwm:-none} KiB"; fi

# --- (e) SIGTERM with 150 requests in flight on hung applications ----------------------------------------
DIR="$WORK/hung"
mkdir "$DIR"
start_app "$WORK/hung.out" hanging hang "$DIR" 20
HUNG=$APP
start_watcher hung "$DIR" $'  timeout: 5s\n  budget: 10s\n'
args=()
for i in $(seq 150); do args+=(-o /dev/null "$URL/metrics?$i"); done
curl -s --parallel --parallel-immediate --parallel-max 150 --max-time 20 -w '%{http_code}\n' "${args[@]}" > "$WORK/inflight.codes" 2>/dev/null &
CURLS=$!
PIDS+=("$CURLS")
sleep 1
inflight=$(ss -Htn state established "( sport = :$PORT )" | wc -l)
before=$(wc -l < "$LOG")
stop_pid "$DAEMON"
wait "$CURLS"
during=$(tail -n +$((before + 1)) "$LOG" | grep -E '^[0-9T:+-]+ (warning|error|critical) ')
answers=$(sort "$WORK/inflight.codes" | uniq -c | awk '{ printf "%s×%s ", $1, $2 }')
echo "# (e) $inflight connections established at SIGTERM; the 150 requests got: $answers"
if [ "$STOP_RC" != timeout ] && [ "$STOP_MS" -le 2000 ]; then ok "(e) SIGTERM with $inflight /metrics in flight on 20 hung applications: the daemon exits in $STOP_MS ms"
else not_ok "(e) the daemon exits within 2.0 s of SIGTERM" "$STOP_MS ms ($STOP_RC)"; fi
if [ "$STOP_RC" = 0 ]; then ok "(e) its exit status is 0"; else not_ok "(e) exit status 0" "$STOP_RC"; fi
if [ -z "$during" ]; then ok "(e) no line at warning or above during the stop ($(($(wc -l < "$LOG") - before)) lines logged)"
else not_ok "(e) no warning, error or critical line during the stop" "$(cut -c1-200 <<<"$during" | head -5)"; fi
stop_pid "$HUNG"

# --- (f) round 4: one series of 100,000 labels beside a real application ---------------------------------
DIR="$WORK/wide"
mkdir "$DIR"
start_app "$WORK/wide.out" serving serve "$DIR" 'a-wide:labels:pass' 'orders:orders:pass'
WIDE=$APP
start_watcher wide "$DIR"
: > "$WORK/wide.scrapes"; : > "$WORK/wide.livez"
for _ in 1 2 3 4 5; do
    curl -s --max-time 10 -o "$WORK/wide-metrics.txt" -w '%{time_total}\n' "$URL/metrics" >> "$WORK/wide.scrapes" &
    scrape=$!
    while kill -0 "$scrape" 2>/dev/null; do
        curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}\n' "$URL/livez" >> "$WORK/wide.livez"; sleep 0.05
    done
    wait "$scrape"
    grep -q '^orders_total{app="orders"' "$WORK/wide-metrics.txt" && echo present >> "$WORK/wide.orders"
done
slowest=$(sort -g "$WORK/wide.scrapes" | tail -1)
livez=$(awk '{ print $2 }' "$WORK/wide.livez" | sort -g | tail -1)
if awk -v s="$slowest" 'BEGIN { exit !(s < 2) }' && [ "$(wc -l < "$WORK/wide.orders")" -eq 5 ]; then
    ok "(f) 100,000 labels: 5 scrapes of the daemon, the slowest ${slowest} s, orders' series in every one"
else not_ok "(f) every scrape under 2 s with orders present" "scrapes $(tr '\n' ' ' < "$WORK/wide.scrapes"), orders in $(wc -l < "$WORK/wide.orders") of 5"; fi
if awk -v l="${livez:-9}" 'BEGIN { exit !(l < 1) }' && ! awk '$1 != 200' "$WORK/wide.livez" | grep -q .; then
    ok "(f) /livez meanwhile: $(wc -l < "$WORK/wide.livez") answers, the slowest ${livez} s"
else not_ok "(f) /livez under 1 s" "slowest ${livez:-none}"; fi
if log_has "Application a-wide is down: /metrics is not a valid exposition: line 2: a series has more than 128 labels (label_limit)"; then
    ok "(f) the wide application is down with the limit's name"
else not_ok "(f) the reason names label_limit" "$(grep -F a-wide "$LOG" | head -3)"; fi
stop_pid "$DAEMON"; stop_pid "$WIDE"

# --- (g) round 4: two native histograms of 4,000,000 deltas (4 MB answers) ---------------------------------
DIR="$WORK/native"
mkdir "$DIR"
start_app "$WORK/native.out" serving serve "$DIR" 'big*2:native:pass' 'orders:orders:pass'
NATIVE=$APP
start_watcher native "$DIR"
protobuf='Accept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited'
for _ in 1 2 3 4 5; do
    curl -s --max-time 10 -o /dev/null -H "$protobuf" "$URL/metrics"
    curl -s --max-time 10 -o "$WORK/native-metrics.txt" "$URL/metrics"
done
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$DAEMON/status")
if is_number "${hwm:-}" && [ "$hwm" -lt $((256 * 1024)) ]; then ok "(g) two 4 MB native histograms, 10 scrapes: VmHWM $((hwm / 1024)) MiB"
else not_ok "(g) VmHWM under 256 MiB" "${hwm:-none} KiB"; fi
if log_has "Application big-00 is down: its answer (more than the" && grep -q '^orders_total{app="orders"' "$WORK/native-metrics.txt"; then
    ok "(g) refused for max_scrape_bytes, orders served: $(grep -F 'big-00 is down' "$LOG" | head -1 | grep -o 'its answer.*' | cut -c1-120)"
else not_ok "(g) big-00 down for the scrape's room, orders served" "$(grep -F big-0 "$LOG" | head -3)"; fi
stop_pid "$DAEMON"; stop_pid "$NATIVE"

# --- (h) round 4: 60 sockets that answer /health and hang /metrics, named to be asked first ---------------
DIR="$WORK/hangmetrics"
mkdir "$DIR"
start_app "$WORK/hangmetrics.out" serving serve "$DIR" 'a-hang*60:hang:pass' 'z-real:orders:pass'
HANGING=$APP
start_watcher hangmetrics "$DIR"
sleep 3 # health rounds first: every one answers /health
: > "$WORK/hangmetrics.up"
for _ in 1 2 3 4 5; do
    curl -s --max-time 15 -o "$WORK/hang-metrics.txt" -w '%{time_total} ' "$URL/metrics" >> "$WORK/hangmetrics.times"
    grep -c '^weave_app_up{app="z-real"} 1' "$WORK/hang-metrics.txt" >> "$WORK/hangmetrics.up"
done
if [ "$(grep -c '^1$' "$WORK/hangmetrics.up")" -eq 5 ]; then ok "(h) z-real up in 5 of 5 scrapes beside 60 hanging /metrics (scrapes: $(cat "$WORK/hangmetrics.times")s)"
else not_ok "(h) z-real up in every scrape" "up: $(tr '\n' ' ' < "$WORK/hangmetrics.up"); $(grep -F 'z-real' "$LOG" | tail -2)"; fi
stop_pid "$DAEMON"; stop_pid "$HANGING"

# --- (i) round 4: 60 sockets that hang /events; another application's event arrives within 5 s -----------
DIR="$WORK/hangevents"
mkdir "$DIR"
start_app "$WORK/hangevents.out" serving serve "$DIR" 'a-hang*60:orders:pass:hang' "z-real:orders:pass:trigger=$WORK/trigger"
HANGING=$APP
start_watcher hangevents "$DIR"
sleep 8 # the first rounds wait for every one (none failed yet)
touch "$WORK/trigger"
start=$(now_ms)
until_true 20 log_has "Application z-real: resolving Trigger failed"
took=$(($(now_ms) - start))
if log_has "Application z-real: resolving Trigger failed" && [ "$took" -lt 5000 ]; then ok "(i) z-real's event in the journal ${took} ms after it happened, beside 60 hanging /events"
else not_ok "(i) z-real's event within 5 s" "${took} ms"; fi
stop_pid "$DAEMON"; stop_pid "$HANGING"

# --- (j) round 4: 150 sockets of one user flooding /events for 30 s ------------------------------------------
DIR="$WORK/flood"
mkdir "$DIR"
start_app "$WORK/flood.out" serving serve "$DIR" 'flood*150:orders:pass:flood'
FLOOD=$APP
start_watcher flood "$DIR"
sleep 30
entries=$(grep -cE 'dropped its cached instances|Suppressed [0-9]+ more' "$LOG")
stop_pid "$DAEMON"; stop_pid "$FLOOD"
if [ "$entries" -le 500 ]; then ok "(j) 150 flooding sockets for 30 s: $entries entries of their events (at most 1,000 a minute)"
else not_ok "(j) at most 500 entries in 30 s" "$entries"; fi

# --- (k) round 5: after normal pages, an /events page of a run that "started": 1e300 ---------------------
# It took the daemon down (a trap converting the time), and the saved position again at every start.
DIR="$WORK/poison"
mkdir "$DIR" "$WORK/poison-state"
start_app "$WORK/poison.out" serving serve "$DIR" "poison:orders:pass:poison=$WORK/poison-now" 'orders:orders:pass'
POISON=$APP
STATE_DIRECTORY="$WORK/poison-state" start_watcher poison "$DIR"
sleep 3 # a few rounds of normal pages: its place is kept, and saved
touch "$WORK/poison-now"
refusal="Application poison's /events is not an event log's page"
if until_true 10 log_has "$refusal" && kill -0 "$DAEMON" 2>/dev/null && [ "$(curl -s --max-time 2 "$URL/livez")" = ok ] \
    && until_true 5 metrics_has '^weave_app_up{app="orders"} 1$'; then
    ok "(k) \"started\": 1e300 after normal pages: refused (\"$refusal\"), the daemon up, orders served"
else not_ok "(k) a page of a run that started at 1e300 is refused" "alive: $(kill -0 "$DAEMON" 2>/dev/null && echo yes || echo no); $(tail -3 "$LOG" | cut -c1-200)"; fi
stop_pid "$DAEMON"
STATE_DIRECTORY="$WORK/poison-state" start_watcher poison-again "$DIR"
sleep 3
if kill -0 "$DAEMON" 2>/dev/null && [ "$(curl -s --max-time 2 "$URL/livez")" = ok ] && [ -s "$WORK/poison-state/event-positions.json" ] \
    && ! grep -q "1e+300\|1e300" "$WORK/poison-state/event-positions.json"; then
    ok "(k) started again on the same state directory: up 3 s later, no 1e300 in the saved positions"
else not_ok "(k) a restart on the saved positions" "alive: $(kill -0 "$DAEMON" 2>/dev/null && echo yes || echo no); $(cat "$WORK/poison-state/event-positions.json" 2>&1 | cut -c1-200)"; fi
stop_pid "$DAEMON"; stop_pid "$POISON"

# --- (l) round 6 (#66): an application restarted by hand, outside systemd ----------------------------------
# SIGTERM (its socket removed, its process ended), started again at once: same name, same owner, a new run.
DIR="$WORK/byhand"
mkdir "$DIR"
start_watcher byhand "$DIR"
start_app "$WORK/byhand-1.out" serving serve "$DIR" 'byhand:orders:pass:run'
FIRST=$APP
until_true 10 log_has "Application byhand is up"
sleep 2.5 # two rounds: its first run's /events read (a run the daemon never read cannot be told from the next)
stop_pid "$FIRST"
start_app "$WORK/byhand-2.out" serving serve "$DIR" 'byhand:orders:pass:run'
SECOND=$APP
until_true 10 log_has "Application byhand restarted"
sleep 12 # past the grace a leave would be told after
entries=$(grep -oE "Application byhand (is up|is down|left|restarted)" "$LOG" | sort | uniq -c | tr -s ' ' | paste -sd, -)
if [ "$(log_count "Application byhand restarted")" = 1 ] && [ "$(log_count "Application byhand is up")" = 1 ] \
    && ! log_has "Application byhand left" && ! log_has "Application byhand is down"; then
    ok "(l) restarted by hand (SIGTERM, started again at once): one 'restarted', no 'left', no second 'is up' ($entries)"
else not_ok "(l) a restart outside systemd is one entry" "$entries"; fi
stop_pid "$SECOND"
if until_true 15 log_has "Application byhand left"; then ok "(l) stopped for good: 'left', within the grace"
else not_ok "(l) a leave after the grace" "$(grep byhand "$LOG" | tail -2 | cut -c1-200)"; fi
stop_pid "$DAEMON"

# --- (m) round 6 (#66): 200 sockets of one user flapping for 30 s -------------------------------------------
# Each one's /health alternates valid and invalid (up, down) and its /events is a new run at every read
# (restarted): the lifecycle entries of the owner's applications stay within 60 per window of 10 s.
DIR="$WORK/flapping"
mkdir "$DIR" && chmod 3777 "$DIR"
start_app "$WORK/flapping.out" serving nobody serve "$DIR" 'flutter*200:orders:flap:restarting'
FLAPPING=$APP
start_watcher flapping "$DIR"
sleep 30
stop_pid "$DAEMON"; stop_pid "$FLAPPING"
# The owner's summary ends each window: the entries (and per-application summaries) between two are one window's.
windows=$(grep -E "Application flutter-[0-9]+ (is up|is down|left|restarted)|records of application flutter-|lifecycle entries of uid 65534" "$LOG" \
    | awk '/lifecycle entries of uid 65534/ { print n; n = 0; next } { n++ } END { print n }' | paste -sd' ' -)
summaries=$(grep -c "lifecycle entries of uid 65534" "$LOG")
largest=$(tr ' ' '\n' <<<"$windows" | sort -n | tail -1)
if [ "$summaries" -ge 2 ] && [ "${largest:-999}" -le 60 ] && [ "$(tr ' ' '\n' <<<"$windows" | awk '{ s += $1 } END { print s }')" -gt 0 ]; then
    ok "(m) 200 flapping sockets of uid 65534 for 30 s: entries per window $windows (at most 60), $summaries summaries of the owner's bound"
else not_ok "(m) lifecycle entries within the owner's bound" "per window: $windows; $summaries summaries"; fi

# --- (n) round 6 (#66): one liar among 40 applications costs the others nothing ---------------------------
# A liar's /metrics says check db is unhealthy, its /health that it passes: every scrape disagrees. It
# brings its own health round forward (once per health_interval), never the others'.
health_reads() { # NAME SPEC…: sets READS to the honest applications' /health reads per application and second, and the liar's, under 4 scrapers for 20 s
    local name=$1 scrapers=() began ended scraping
    shift
    DIR="$WORK/$name"
    mkdir "$DIR"
    start_app "$WORK/$name.out" serving serve "$DIR" "$@"
    local apps=$APP
    began=$(now_ms) # the daemon's life: from its start to its end
    start_watcher "$name" "$DIR"
    scraping=$(now_ms)
    for _ in 1 2 3 4; do
        ( while [ $(($(now_ms) - scraping)) -lt 20000 ]; do curl -s --max-time 5 -o /dev/null "$URL/metrics"; sleep 0.1; done ) &
        scrapers+=($!)
    done
    wait "${scrapers[@]}"
    stop_pid "$DAEMON"
    ended=$(now_ms)
    stop_pid "$apps"
    READS=$(awk -v s="$(((ended - began) / 1000)).$(((ended - began) % 1000 / 100))" '$1 == "asked" && $2 ~ /^honest-/ && $3 == "/health" { n++; t += $4 }
        $1 == "asked" && $2 == "liar" && $3 == "/health" { liar = $4 }
        END { printf "%.2f %.2f", t / n / s, liar / s }' "$WORK/$name.out")
}
health_reads honest 'honest*40:orders:pass'
read -r alone _ <<<"$READS"
health_reads lied 'honest*39:orders:pass' 'liar:liar:pass'
read -r beside liar <<<"$READS"
if awk -v a="$alone" -v b="$beside" -v l="$liar" 'BEGIN { exit !(a > 0 && b <= a * 1.1 && b >= a * 0.9 && l <= 2.2) }'; then
    ok "(n) a liar among 40: each honest application's /health read $beside/s (alone: $alone/s); the liar's $liar/s"
else not_ok "(n) the honest applications' reads within 10 % of the rate without the liar" "alone $alone/s, beside the liar $beside/s, the liar $liar/s"; fi

finish
