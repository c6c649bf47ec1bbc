#!/usr/bin/env bash
# weave-health's figures: binary size, start time (`--help`, no request), peak RSS of one probe, and
# the wall time of one probe of /health against a local weave-healthd beside curl's (hyperfine, no
# shell, warmed up). Prints Markdown rows and the ratio (target ≤ 1.5×).
# Usage: Benchmarks/probe_bench.sh PATH-TO-weave-healthd PATH-TO-weave-health
set -euo pipefail
daemon=$1 probe=$2
work=$(mktemp -d /tmp/weave-probe-bench.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$port
details: always
checks:
  - {name: disk-root, type: disk, path: /, warn_free_percent: 1, fail_free_percent: 0}
  - {name: container, type: container}
YAML
"$daemon" --config "$work/config.yaml" 2>/dev/null &
pid=$!
trap 'kill -TERM $pid; wait $pid; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/livez" && break; sleep 0.05; done
url="http://127.0.0.1:$port/health"
hyperfine -N --warmup 30 --runs 500 --export-json "$work/start.json" "$probe --help" >&2
hyperfine -N --warmup 30 --runs 500 --export-json "$work/result.json" \
    "curl -sf -o /dev/null $url" "$probe --url http://127.0.0.1:$port --quiet" >&2
rss=$(for _ in 1 2 3 4 5; do /usr/bin/time -f %M "$probe" --url "http://127.0.0.1:$port" --quiet 2>&1 >/dev/null; done | sort -n | tail -1)
/usr/bin/python3 - "$work" "$(stat -c %s "$probe")" "$rss" <<'PYTHON'
import json, sys
work, size, rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
start, = json.load(open(work + "/start.json"))["results"]
curl, probe = json.load(open(work + "/result.json"))["results"]
ms = lambda r: "%.2f ± %.2f ms" % (r["mean"] * 1e3, r["stddev"] * 1e3)
print("| binary size | %.1f MB |" % (size / 1e6))
print("| start (`--help`) | %s |" % ms(start))
print("| peak RSS of one probe | %.1f MiB |" % (rss / 1024))
print("| `curl -sf` /health | %s |" % ms(curl))
print("| `weave-health --quiet` | %s |" % ms(probe))
print("| ratio weave-health / curl (target ≤ 1.5×) | %.2f× |" % (probe["mean"] / curl["mean"]))
PYTHON
