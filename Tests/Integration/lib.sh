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

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_for() { # URL, seconds
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do
        curl -sf -o /dev/null --max-time 1 "$1" && return 0
        sleep 0.1
    done
    return 1
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

finish() { # the summary line; the exit status says whether everything passed
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
