#!/usr/bin/env python3
"""Plain SwiftNIO (WeaveHealthServer, what weave-healthd uses) against Hummingbird 2, serving the
same /metrics of 1,000 services (Sources/MetricsFixture) and a /livez, both release builds linked
the same way. Per server: startup to a listening socket, idle RSS after one scrape and 5 s, and
`wrk -t 2 -c 4 -d 10s` on /livez and on /metrics. Prints Markdown.

Usage: http_stack_bench.py PATH-TO-NIOMetricsServer PATH-TO-HummingbirdMetricsServer
Every process it starts listens on 127.0.0.1 and is stopped by the script.
"""
import re
import statistics
import subprocess
import sys
import time

from process_tools import free_port, idle_rss, stop, time_to_listen_ms, wait_listening


def wrk(port, path):
    """Requests per second and mean latency of `wrk -t 2 -c 4 -d 10s`."""
    output = subprocess.run(["wrk", "-t", "2", "-c", "4", "-d", "10s", f"http://127.0.0.1:{port}{path}"],
                            capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    latency = re.search(r"Latency\s+(\S+)", output).group(1)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise SystemExit(f"{path}: {errors.group(1)} failed responses")
    return rate, latency


def measure(binary):
    startup = statistics.median(time_to_listen_ms([binary, str(port)], port) for port in [free_port() for _ in range(9)])
    port = free_port()
    rss = idle_rss([binary, str(port)], port)
    port = free_port()
    process = subprocess.Popen([binary, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, time.monotonic() + 10)
        return startup, rss, wrk(port, "/livez"), wrk(port, "/metrics")
    finally:
        stop(process)


print("| HTTP stack | startup ms (median of 9) | idle RSS MiB | /livez req/s (mean latency) | /metrics req/s (mean latency) |")
print("|---|---:|---:|---:|---:|")
results = {}
for name, binary in [("plain SwiftNIO (WeaveHealthServer)", sys.argv[1]), ("Hummingbird 2.28.1", sys.argv[2])]:
    startup, rss, livez, metrics = results[name] = measure(binary)
    print(f"| {name} | {startup:.1f} | {rss / 1024:.1f} | {livez[0]:,.0f} ({livez[1]}) | {metrics[0]:,.0f} ({metrics[1]}) |", flush=True)
(_, nio_rss, nio_livez, nio_metrics), (_, hb_rss, hb_livez, hb_metrics) = results.values()
print(f"\nHummingbird ÷ SwiftNIO: idle RSS {hb_rss / nio_rss:.2f}×, /livez throughput {hb_livez[0] / nio_livez[0]:.2f}×, "
      f"/metrics throughput {hb_metrics[0] / nio_metrics[0]:.2f}×")
