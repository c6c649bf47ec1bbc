#!/usr/bin/env bash
# weave-health vs curl: wall time of one probe of /health against a local weave-healthd, side by
# side with hyperfine (no shell, warmed up). Prints a Markdown row and the ratio (target ≤ 1.5×).
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
hyperfine -N --warmup 30 --runs 500 --export-json "$work/result.json" \
    "curl -sf -o /dev/null $url" "$probe --url http://127.0.0.1:$port --quiet" >&2
/usr/bin/python3 - "$work/result.json" <<'PYTHON'
import json, sys
curl, probe = json.load(open(sys.argv[1]))["results"]
ms = lambda r: "%.2f ± %.2f ms" % (r["mean"] * 1e3, r["stddev"] * 1e3)
print("| `curl -sf` /health | %s |" % ms(curl))
print("| `weave-health --quiet` | %s |" % ms(probe))
print("| ratio weave-health / curl (target ≤ 1.5×) | %.2f× |" % (probe["mean"] / curl["mean"]))
PYTHON
