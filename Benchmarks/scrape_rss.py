#!/usr/bin/env python3
"""weave-healthd's resident memory around bursts of scrapes: 20 applications x 100 services, scraped
ten times by two clients at once (an HA pair of Prometheus servers), the peak VmRSS, then VmRSS
after 3 s of quiet (when HeapTrimmer has given the heap back). Prints Markdown.

Usage: scrape_rss.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks (release builds)
Every process it starts is stopped by the script; sockets live in a scratch directory.
"""
import subprocess
import sys
import threading
import time
import urllib.request

from process_tools import aggregation_config, free_port, scratch_apps_directory, start_apps, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
WORK, DIRECTORY = scratch_apps_directory("weave-scrape-rss.")
processes = []


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


try:
    apps = start_apps(BENCH, DIRECTORY, 20, 100)
    processes += apps
    port = free_port()
    # Health rounds every hour: only scrapes allocate.
    config = aggregation_config(WORK, port, DIRECTORY, {"timeout": "10s", "budget": "20s", "health_interval": "1h"})
    daemon = subprocess.Popen([DAEMON, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(daemon)
    wait_listening(port, time.monotonic() + 30)
    url = f"http://127.0.0.1:{port}/metrics"
    peak = 0.0
    for _ in range(10):
        clients = [threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=30).read()) for _ in range(2)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        peak = max(peak, rss_mib(daemon.pid))
    time.sleep(3)
    print("### weave-healthd's RSS around scrapes of 20 applications x 100 services (two clients at once, 10 rounds)\n")
    print(f"- peak {peak:.1f} MiB; after 3 s of quiet {rss_mib(daemon.pid):.1f} MiB")
finally:
    for process in processes:
        stop(process)
