#!/usr/bin/env python3
"""Series per host with 100 services, with and without the resolve-latency buckets (issue #15's
cardinality control): one weave-healthd aggregating one application whose container has 100
registered and resolved services and 100 health checks, served with each `resolve_buckets` setting.
Counts the samples of one scrape of the daemon. Prints Markdown.

Usage: cardinality_bench.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks (release builds)
Every process it starts is stopped by the script; sockets live in a scratch directory.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from process_tools import free_port, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
SERVICES = 100
WORK = tempfile.mkdtemp(prefix="weave-cardinality-bench.")
processes = []


def series(setting):
    directory = os.path.join(WORK, setting)
    os.mkdir(directory)
    app = subprocess.Popen([BENCH, "app", "--resolve-buckets", setting, "bench", directory, str(SERVICES)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(app)
    port = free_port()
    config = os.path.join(directory, "config.yaml")
    with open(config, "w") as handle:
        handle.write(f"listen:\n  - address: 127.0.0.1:{port}\napps:\n  directory: {directory}\n")
    daemon = subprocess.Popen([DAEMON, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(daemon)
    wait_listening(port, time.monotonic() + 30)
    deadline = time.monotonic() + 30
    while True:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
        if 'weave_app_up{app="bench"} 1' in body or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    samples = [line for line in body.splitlines() if line and not line.startswith("#")]
    app_samples = [line for line in samples if 'app="bench"' in line]
    stop(daemon)
    stop(app)
    return len(samples), len(app_samples)


try:
    print(f"### Series per host: one daemon aggregating one application of {SERVICES} services and {SERVICES} checks\n")
    print("| resolve_buckets (the application's) | series per host | of which the application's | per service |")
    print("|---|---:|---:|---:|")
    for setting in ["all", "10", "none"]:
        total, app = series(setting)
        label = {"10": "10 (default)"}.get(setting, setting)
        print(f"| {label} | {total:,} | {app:,} | {app / SERVICES:.1f} |")
finally:
    for process in processes:
        stop(process)
    shutil.rmtree(WORK, ignore_errors=True)
