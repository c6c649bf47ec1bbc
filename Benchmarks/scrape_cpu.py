#!/usr/bin/env python3
"""Where a scrape of 20 applications x 100 services through weave-healthd spends its CPU and its
memory: the applications', the daemon's and the client's user + system time per scrape (from
/proc), beside the wall time of the same 20 applications read directly by the client, all at once,
without the daemon; then the daemon's peak VmRSS over ten rounds of two clients at once (an HA pair
of Prometheus servers), and its VmRSS after 3 s of quiet, when the heap has been given back.
Prints Markdown. The VM's speed moves the milliseconds; the split between the processes moves much
less.

Usage: scrape_cpu.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks [SCRAPES] (release builds)
Every process it starts is stopped by the script; sockets live in a scratch directory.
"""
import asyncio
import glob
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

from process_tools import aggregation_config, free_port, rss_kib, scratch_apps_directory, start_apps, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
SCRAPES = int(sys.argv[3]) if len(sys.argv) > 3 else 100
APPS, SERVICES = 20, 100
WORK, DIRECTORY = scratch_apps_directory("weave-scrape-cpu.")
TICKS = os.sysconf("SC_CLK_TCK")
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n"
processes = []


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def read_directly(rounds):
    """Median wall time to read every application's /metrics at once, on connections kept open."""
    connections = [await asyncio.open_unix_connection(path) for path in sorted(glob.glob(DIRECTORY + "/*.sock"))]

    async def one(reader, writer):
        writer.write(REQUEST)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        await reader.readexactly(length)

    times = []
    for _ in range(rounds + 1):
        start = time.monotonic()
        await asyncio.gather(*(one(reader, writer) for reader, writer in connections))
        times.append((time.monotonic() - start) * 1000)
    for _, writer in connections:
        writer.close()
    return statistics.median(times[1:])


try:
    apps = start_apps(BENCH, DIRECTORY, APPS, SERVICES)
    processes += apps
    port = free_port()
    # Health rounds every hour: only scrapes are counted.
    config = aggregation_config(WORK, port, DIRECTORY, {"timeout": "10s", "budget": "20s", "health_interval": "1h"})
    daemon = subprocess.Popen([DAEMON, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(daemon)
    wait_listening(port, time.monotonic() + 30)
    url = f"http://127.0.0.1:{port}/metrics"
    for _ in range(3):
        urllib.request.urlopen(url, timeout=30).read()
    apps_before, daemon_before, client_before = sum(cpu_seconds(app.pid) for app in apps), cpu_seconds(daemon.pid), os.times()
    start = time.monotonic()
    for _ in range(SCRAPES):
        urllib.request.urlopen(url, timeout=30).read()
    wall = (time.monotonic() - start) * 1000 / SCRAPES
    client_after = os.times()
    apps_ms = (sum(cpu_seconds(app.pid) for app in apps) - apps_before) * 1000 / SCRAPES
    daemon_ms = (cpu_seconds(daemon.pid) - daemon_before) * 1000 / SCRAPES
    client_ms = (client_after.user + client_after.system - client_before.user - client_before.system) * 1000 / SCRAPES
    direct = asyncio.run(read_directly(SCRAPES // 2))
    peak = 0
    for _ in range(10):
        clients = [threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=30).read()) for _ in range(2)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        peak = max(peak, rss_kib(daemon.pid))
    time.sleep(3)
    quiet = rss_kib(daemon.pid)
    render = subprocess.run([BENCH, "render-apps", str(APPS * SERVICES)], capture_output=True, text=True).stdout.split()
    print(f"### CPU per scrape of {APPS} applications x {SERVICES} services through weave-healthd ({SCRAPES} scrapes)\n")
    print(f"- wall {wall:.1f} ms; CPU: the applications {apps_ms:.1f} ms, the daemon {daemon_ms:.1f} ms, the client {client_ms:.1f} ms")
    print(f"- the same applications read directly by the client, all at once, no daemon: {direct:.1f} ms")
    print(f"- one in-process collect and render of the same series (the reference of the 2x target): "
          f"{int(render[1].split('=')[1]) / 1000:.1f} ms")
    print(f"- the daemon's RSS over 10 rounds of two clients at once: peak {peak / 1024:.1f} MiB; "
          f"after 3 s of quiet {quiet / 1024:.1f} MiB")
finally:
    for process in processes:
        stop(process)
    shutil.rmtree(WORK, ignore_errors=True)
