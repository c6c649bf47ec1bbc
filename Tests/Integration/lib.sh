# Shared by the integration scripts: the binary under test ($1), a scratch folder, the processes
# they start (stopped by PID at exit), and TAP-like "ok"/"not ok" reporting.
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3   # Debian's, with python3-prometheus-client
WORK=$(mktemp -d /tmp/weave-it.XXXXXX)
PIDS=()
passed=0
failed=0

cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; [ $# -gt 1 ] && printf '    %s\n' "$2" | head -20; }
expect() { local description=$1; shift; if "$@" >/dev/null 2>&1; then ok "$description"; else not_ok "$description"; fi; }
# holds GREP-ARGUMENT…: whether standard input has a line grep matches. It reads all of it first: under
# pipefail, `curl … | grep -q` fails when grep stops before curl has written the rest (SIGPIPE), and
# its negation then passes for nothing.
holds() { local text; text=$(cat); grep -q "$@" <<<"$text"; }

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_for() { # URL, seconds
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do
        curl -sf -o /dev/null --max-time 1 "$1" && return 0
        sleep 0.1
    done
    return 1
}

# start_daemon CONFIG LOG URL SECONDS [NAME=VALUE…] [COMMAND ARG…]: "$BIN" --config CONFIG in the
# background with the environment assignments, run by COMMAND if one is given (prlimit, setpriv,
# systemd-socket-activate: a command that execs the one after its arguments); its standard output
# and error go to LOG. Sets DAEMON to its PID (stopped at exit with the rest), then waits for URL as
# wait_for does: fails when it does not answer within SECONDS.
start_daemon() {
    local config=$1 log=$2 url=$3 seconds=$4
    shift 4
    env "$@" "$BIN" --config "$config" > "$log" 2>&1 &
    DAEMON=$!
    PIDS+=("$DAEMON")
    wait_for "$url" "$seconds"
}

# stop_daemon: SIGTERM to $DAEMON, and waits for it to end; returns its exit status.
stop_daemon() { kill -TERM "$DAEMON" 2>/dev/null; wait "$DAEMON" 2>/dev/null; }

# browser ARGUMENT…: headless Chromium with its own profile in $WORK, its messages discarded
# (`--dump-dom URL` prints the DOM, `--screenshot=FILE URL` draws the page).
browser() {
    chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chromium" "$@" 2>/dev/null
}

# Starts a systemd-journald when none is reachable, and sets JOURNALD to its PID (stopped at exit
# with the rest); JOURNALD stays empty when one already runs: a journald a test did not start is
# never stopped, killed or paused.
start_journald() {
    JOURNALD=""
    echo probe | systemd-cat -t weave-it-probe 2>/dev/null && return
    mkdir -p /run/systemd/journal
    /lib/systemd/systemd-journald >"$WORK/journald.log" 2>&1 &
    JOURNALD=$!
    PIDS+=("$JOURNALD")
    for _ in $(seq 50); do echo probe | systemd-cat -t weave-it-probe 2>/dev/null && break; sleep 0.1; done
}

# Starts a real Prometheus scraping 127.0.0.1:$1 every second; sets PROM_PORT and PROMETHEUS (its PID,
# stopped at exit with the rest).
# start_prometheus PORT [FLAG…]: a Prometheus scraping 127.0.0.1:PORT every second, with its own
# storage in $WORK, evaluating the rule files PROM_RULES names (if any) every second; the FLAGs
# (`--enable-feature=native-histograms`) go to it.
start_prometheus() {
    PROM_PORT=$(free_port)
    rm -rf "$WORK/tsdb"
    cat > "$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [${PROM_RULES:-}]
scrape_configs:
  - job_name: weave
    static_configs:
      - targets: ["127.0.0.1:$1"]
YAML
    prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
        --web.listen-address="127.0.0.1:$PROM_PORT" "${@:2}" > "$WORK/prometheus.log" 2>&1 &
    PROMETHEUS=$!
    PIDS+=("$PROMETHEUS")
}

# promtool's findings on an OpenMetrics file, but for the expected ones: promtool 2.42 (Debian 12)
# lints with the text-format parser, which reads an OpenMetrics counter's `<name>_total` samples as a
# family without HELP (OpenMetrics puts HELP on `<name>`). Prints what remains (nothing when clean),
# and "error" lines when it cannot parse the file.
openmetrics_findings() {
    local out
    out=$(promtool check metrics < "$1" 2>&1)
    printf '%s\n' "$out" | while read -r name rest; do
        [ -z "$name" ] && continue
        if [ "$rest" = "no help text" ] && [[ "$name" == *_total ]] && grep -q "^# TYPE ${name%_total} counter$" "$1"; then continue; fi
        echo "$name $rest"
    done
}

# promtool check metrics on FILE: ok when it exits 0 and says nothing, else not_ok with what it said.
expect_promtool_clean() { # FILE, DESCRIPTION
    local out rc
    out=$(promtool check metrics < "$1" 2>&1); rc=$?
    if [ $rc -eq 0 ] && [ -z "$out" ]; then ok "$2"; else not_ok "$2" "$out"; fi
}

# One component of a saved application/health+json document, as "status | output".
component() { # FILE, NAME
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["checks"].get(sys.argv[2]+":status",[{}])[0]; print(c.get("status"), "|", c.get("output",""))' "$1" "$2"
}

finish() { # the summary line; the exit status says whether everything passed
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
