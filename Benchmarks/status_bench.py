#!/usr/bin/env python3
"""The status page's cost (issue #35): `/` of weave-healthd aggregating 20 applications of 100
services and 100 checks each, against `/health` of the same daemon, in alternating rounds. Prints
Markdown: the page's size, and each endpoint's time per request (median of the rounds' medians).

Usage: status_bench.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks (release builds)
Every process it starts is stopped by the script; sockets live in a scratch directory.
"""
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

from process_tools import aggregation_config, free_port, scratch_apps_directory, start_apps, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
APPS, SERVICES = 20, 100
ROUNDS, REQUESTS = 10, 20
WORK, DIRECTORY = scratch_apps_directory("weave-status-bench.")
processes = []


def get(port, path):
    start = time.monotonic()
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).read()
    return (time.monotonic() - start) * 1000, body


try:
    processes += start_apps(BENCH, DIRECTORY, APPS, SERVICES)
    port = free_port()
    config = aggregation_config(WORK, port, DIRECTORY, {"timeout": "10s", "budget": "20s", "health_interval": "5s"})
    with open(config, "a") as handle:
        handle.write("details: always\n")
    daemon = subprocess.Popen([DAEMON, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(daemon)
    wait_listening(port, time.monotonic() + 30)
    time.sleep(12)  # two health rounds: every application's checks and dependencies are in
    _, page = get(port, "/")
    _, health = get(port, "/health")
    page_ms, health_ms = [], []
    for _ in range(ROUNDS):
        page_ms.append(statistics.median(get(port, "/")[0] for _ in range(REQUESTS)))
        health_ms.append(statistics.median(get(port, "/health")[0] for _ in range(REQUESTS)))
    page_median, health_median = statistics.median(page_ms), statistics.median(health_ms)
    print(f"### The status page, {APPS} applications of {SERVICES} services and {SERVICES} checks each\n")
    print("| endpoint | bytes | ms per request (median of 10 rounds of 20) |")
    print("|---|---:|---:|")
    print(f"| `GET /` (the status page) | {len(page):,} | {page_median:.2f} ({min(page_ms):.2f}–{max(page_ms):.2f}) |")
    print(f"| `GET /health` | {len(health):,} | {health_median:.2f} ({min(health_ms):.2f}–{max(health_ms):.2f}) |")
    print(f"\n`/` ÷ `/health`: {page_median / health_median:.2f}× the time (target at most 1), "
          f"{len(page) / len(health):.2f}× the bytes")
finally:
    for process in processes:
        stop(process)
    shutil.rmtree(WORK, ignore_errors=True)
