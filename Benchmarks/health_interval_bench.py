#!/usr/bin/env python3
"""What reading the applications every health round costs: the daemon's and the applications' CPU
while nothing scrapes, with `apps: health_interval` 1 s (the default) and 5 s, in alternating
rounds, for 20 applications of 100 services and 100 checks each. Prints Markdown.

Usage: health_interval_bench.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks (release builds)
Every process it starts is stopped by the script; sockets live in a scratch directory.
"""
import os
import shutil
import subprocess
import sys
import time

from process_tools import aggregation_config, free_port, scratch_apps_directory, start_apps, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
APPS, SERVICES, SECONDS, ROUNDS = 20, 100, 20, 2
TICKS = os.sysconf("SC_CLK_TCK")
WORK, DIRECTORY = scratch_apps_directory("weave-interval-bench.")


def cpu_seconds(pid):
    """User and system CPU time of `pid` so far."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


apps = start_apps(BENCH, DIRECTORY, APPS, SERVICES)
results = {"1s": [], "5s": []}
try:
    for _ in range(ROUNDS):
        for interval in results:
            port = free_port()
            config = aggregation_config(WORK, port, DIRECTORY, {"health_interval": interval})
            daemon = subprocess.Popen([DAEMON, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_listening(port, time.monotonic() + 10)
                time.sleep(3)  # the first rounds, and the applications' first answers
                before = (cpu_seconds(daemon.pid), sum(cpu_seconds(app.pid) for app in apps))
                time.sleep(SECONDS)
                after = (cpu_seconds(daemon.pid), sum(cpu_seconds(app.pid) for app in apps))
                results[interval].append(((after[0] - before[0]) / SECONDS * 100, (after[1] - before[1]) / SECONDS * 100))
            finally:
                stop(daemon)
finally:
    for app in apps:
        stop(app)
    shutil.rmtree(WORK, ignore_errors=True)

print(f"### Health rounds of {APPS} applications x {SERVICES} services and checks, nothing scraping ({SECONDS} s, {ROUNDS} rounds each)\n")
print("| health_interval | daemon CPU, % of a core | the applications' CPU, % of a core (all 20) |")
print("|---|---:|---:|")
for interval, runs in results.items():
    daemon = "–".join(f"{run[0]:.2f}" for run in sorted(runs))
    apps_cpu = "–".join(f"{run[1]:.2f}" for run in sorted(runs, key=lambda run: run[1]))
    print(f"| {interval} | {daemon} | {apps_cpu} |")
