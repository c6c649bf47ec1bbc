#!/usr/bin/env python3
"""weave-healthd as a process: startup time, idle RSS beside prometheus-node-exporter, and /metrics
scrape time with 1,000 configured checks. Prints Markdown.

Usage: daemon_bench.py PATH-TO-weave-healthd (release build)
Every process it starts listens on 127.0.0.1 and is stopped by the script.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from process_tools import free_port, idle_rss, node_exporter_comparison, stop, time_to_listen_ms, wait_listening

BIN = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="weave-bench.")


def write_config(port, checks):
    path = os.path.join(WORK, f"config-{port}.yaml")
    heartbeat = os.path.join(WORK, "heartbeat")
    open(heartbeat, "w").close()
    lines = ["listen:", f"  - address: 127.0.0.1:{port}", "checks:"]
    for index in range(checks):
        lines += [f"  - name: file-{index}", "    type: file", f"    path: {heartbeat}", "    interval: 1h"]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n" if checks else "\n".join(lines[:2]) + "\n")
    return path


def startup_ms(runs=15):
    samples = []
    for _ in range(runs):
        port = free_port()
        samples.append(time_to_listen_ms([BIN, "--config", write_config(port, 0)], port))
    return statistics.median(samples)


def scrape(port, runs=50):
    times = []
    size = 0
    for _ in range(runs):
        start = time.monotonic()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        times.append((time.monotonic() - start) * 1000)
        size = len(body)
    return statistics.median(times), size


try:
    print("### weave-healthd as a process\n")
    print(f"- startup, exec to the listener accepting connections: median {startup_ms():.1f} ms (15 runs)")
    port = free_port()
    weave_rss = idle_rss([BIN, "--config", write_config(port, 4)], port)
    print(node_exporter_comparison(weave_rss, ""))
    port = free_port()
    process = subprocess.Popen([BIN, "--config", write_config(port, 1000)], stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, time.monotonic() + 30)
        time.sleep(2)
        millis, size = scrape(port)
        print(f"- GET /metrics with 1,000 checks registered in the daemon's container: median {millis:.2f} ms over loopback, {size} bytes")
    finally:
        stop(process)
finally:
    shutil.rmtree(WORK, ignore_errors=True)
