#!/usr/bin/env python3
"""The instructions weave-healthd runs per /metrics of 20 applications x 100 services, counted by
valgrind's callgrind: a figure that does not move with the VM's speed, for comparing two builds of
the daemon where the wall-clock figures of apps_bench.py are within the noise. Prints Markdown.

Usage: scrape_instructions.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks [SCRAPES]
(release builds; the applications run natively, the daemon under callgrind). Counts user-space
instructions only: the kernel's share of reading sockets and writing the answer is not in them.
Every process it starts is stopped by the script; sockets live in a scratch directory.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

from process_tools import aggregation_config, free_port, scratch_apps_directory, start_apps, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
SCRAPES = int(sys.argv[3]) if len(sys.argv) > 3 else 5
APPS, SERVICES = 20, 100
WORK, DIRECTORY = scratch_apps_directory("weave-scrape-instructions.")
processes = []


def self_costs(path):
    """Instructions per function, each function's own (calls excluded), from a callgrind file."""
    names, costs, function, after_call = {}, collections.Counter(), None, False
    with open(path, errors="replace") as handle:
        for line in handle:
            named = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if named:
                if named.group(3):
                    names[named.group(2)] = named.group(3)
                if named.group(1) == "fn":
                    function = names.get(named.group(2), named.group(2))
                continue
            if line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
                continue
            fields = line.split()
            if len(fields) >= 2 and function and (line[0].isdigit() or line[0] in "+-*"):
                if not after_call:
                    costs[function] += int(fields[1])
                after_call = False
    return costs


def scrape(port):
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=120).read()


try:
    processes += start_apps(BENCH, DIRECTORY, APPS, SERVICES)
    port = free_port()
    # Health rounds every hour: only scrapes are counted. 20 applications of 100 services with every
    # latency bucket answer 23.4 MB together, relabelled, above the default max_scrape_bytes (16 MiB): the
    # limit is raised so that all of them are read, as the figures before that layout were.
    config = aggregation_config(WORK, port, DIRECTORY, {"timeout": "60s", "budget": "100s", "health_interval": "1h",
                                                        "max_scrape_bytes": 64 << 20})
    # Valgrind 3.19 cannot read the DWARF 5 the toolchain writes; it needs only the symbol table.
    daemon = os.path.join(WORK, "weave-healthd")
    subprocess.run(["objcopy", "--strip-debug", DAEMON, daemon], check=True)
    output = os.path.join(WORK, "callgrind.out")
    valgrind = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={output}", daemon, "--config", config],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(valgrind)
    wait_listening(port, time.monotonic() + 120)
    body = scrape(port)  # the first scrape connects to every application; it is not counted
    subprocess.run(["callgrind_control", "--zero", str(valgrind.pid)], check=True, capture_output=True)
    for _ in range(SCRAPES):
        body = scrape(port)
    subprocess.run(["callgrind_control", "--dump", str(valgrind.pid)], check=True, capture_output=True)
    costs = self_costs(output + ".1")
    total = sum(costs.values())
    print(f"### weave-healthd's instructions per /metrics of {APPS} applications x {SERVICES} services (callgrind)\n")
    print(f"- {total / SCRAPES / 1e6:.1f} M instructions per scrape ({SCRAPES} scrapes after a first, {len(body)} bytes each)")
    print("- the functions that ran the most of them, their own instructions:\n")
    print("| function | share |\n|---|---:|")
    top = costs.most_common(12)
    try:  # readable names where the toolchain is on PATH
        names = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(name for name, _ in top),
                               capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        names = [name for name, _ in top]
    for name, (_, cost) in zip(names, top):
        print(f"| `{name[:110]}` | {100 * cost / total:.1f} % |")
finally:
    for process in processes:
        stop(process)
    shutil.rmtree(WORK, ignore_errors=True)
