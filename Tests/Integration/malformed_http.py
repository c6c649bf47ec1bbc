#!/usr/bin/env python3
"""Sends random, truncated and oversized HTTP requests to a server; prints how many it sent.

Usage: malformed_http.py HOST PORT COUNT SEED
Every connection is closed by us after at most 0.2 s; the script never waits longer.
"""
import random
import socket
import sys

host, port, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
valid = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n"
makers = [
    lambda: bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 512))),
    lambda: valid[: rng.randint(1, len(valid) - 1)],
    lambda: b"GET /" + b"a" * rng.randint(1000, 20000) + b" HTTP/1.1\r\n\r\n",
    lambda: b"GET / HTTP/1.1\r\n" + b"X-Big: " + b"b" * rng.randint(9000, 30000) + b"\r\n\r\n",
    lambda: b"POST /health HTTP/1.1\r\nContent-Length: 99999\r\n\r\n" + b"z" * rng.randint(0, 8000),
    lambda: b"GET / HTTP/9.9\r\n\r\n",
    lambda: b"\r\n\r\n\r\n",
    lambda: b"GET /livez HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    lambda: valid.replace(b"\r\n", b"\n"),
    lambda: b"GET /%ff%00%zz?verbose&exclude=%%% HTTP/1.1\r\nHost: x\r\n\r\n",
]
sent = 0
for _ in range(count):
    payload = rng.choice(makers)()
    try:
        with socket.create_connection((host, port), timeout=0.2) as connection:
            connection.sendall(payload)
            try:
                connection.recv(4096)
            except OSError:
                pass
    except OSError:
        pass
    sent += 1
print(sent)
