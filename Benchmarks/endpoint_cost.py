#!/usr/bin/env python3
"""What an application's metrics endpoint costs the application: the example service's own request
latency (`GET /orders`, wrk with 2 connections, 10 s) alone, and while 6 clients ask its /metrics in a
loop on its Unix socket, each asking again as soon as it has an answer. Prints Markdown.

Usage: endpoint_cost.py PATH-TO-Orders (a release build of Examples/Orders)
Every process it starts listens on 127.0.0.1 or in a scratch directory, and is stopped by the script.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from process_tools import free_port, stop, wait_listening

ORDERS = sys.argv[1]
HAMMERS = 6
WORK = tempfile.mkdtemp(prefix="weave-endpoint-cost.")


def latency(port):
    """p50 and p99 of GET /orders, in ms, from wrk's --latency report."""
    output = subprocess.run(["wrk", "-t", "1", "-c", "2", "-d", "10s", "--latency", f"http://127.0.0.1:{port}/orders"],
                            capture_output=True, text=True, check=True).stdout

    def percentile(name):
        value, unit = re.search(rf"^\s+{name}\s+([\d.]+)(us|ms|s)\s*$", output, re.M).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    return percentile("50%"), percentile("99%")


def hammer(path, stopping, counts, index):
    """Asks /metrics on the Unix socket at `path` again and again, on one kept connection."""
    request = b"GET /metrics HTTP/1.1\r\nHost: app\r\n\r\n"
    while not stopping.is_set():
        try:
            with socket.socket(socket.AF_UNIX) as connection:
                connection.connect(path)
                while not stopping.is_set():
                    connection.sendall(request)
                    head = b""
                    while b"\r\n\r\n" not in head:
                        data = connection.recv(65536)
                        if not data:
                            raise ConnectionError
                        head += data
                    header, _, body = head.partition(b"\r\n\r\n")
                    length = int(re.search(rb"content-length: (\d+)", header, re.I).group(1))
                    while len(body) < length:
                        data = connection.recv(1 << 20)
                        if not data:
                            raise ConnectionError
                        body += data
                    counts[index] += 1
        except (OSError, ConnectionError):
            time.sleep(0.01)


app = None
try:
    port = free_port()
    apps = os.path.join(WORK, "apps")
    app = subprocess.Popen([ORDERS, "--name", "orders", "--port", str(port), "--apps-dir", apps, "--slow-factory-ms", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, time.monotonic() + 60)
    time.sleep(1)
    alone = latency(port)
    stopping = threading.Event()
    counts = [0] * HAMMERS
    threads = [threading.Thread(target=hammer, args=(os.path.join(apps, "orders.sock"), stopping, counts, index), daemon=True)
               for index in range(HAMMERS)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    before = sum(counts)
    hammered = latency(port)
    answered = sum(counts) - before
    stopping.set()
    print(f"### The example service's GET /orders, alone and with {HAMMERS} clients asking its /metrics in a loop\n")
    print("| | p50 | p99 |\n|---|---:|---:|")
    print(f"| alone | {alone[0]:.3f} ms | {alone[1]:.3f} ms |")
    print(f"| {HAMMERS} clients on /metrics ({answered / 10:.0f} answers/s) | {hammered[0]:.3f} ms | {hammered[1]:.3f} ms |")
    print(f"| ratio | {hammered[0] / alone[0]:.2f} | {hammered[1] / alone[1]:.2f} |")
finally:
    if app:
        stop(app)
    shutil.rmtree(WORK, ignore_errors=True)
