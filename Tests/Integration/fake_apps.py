"""Fake applications for Tests/Integration/attacks.sh and scrape_attacks.sh: Unix sockets in the
daemon's discovery directory that answer /metrics, /health and /events (HTTP/1.1, kept
connections), one asyncio process serving any number of them. Nothing but Unix sockets.

    serve DIR SPEC...   each SPEC is NAME:METRICS:HEALTH[:EVENTS], or NAME*COUNT:… for COUNT
                        applications NAME-00 … (one process, one thread, asyncio).
                        METRICS: orders   a valid OpenMetrics exposition (orders_total{…})
                                 forged   a valid exposition of forged series (forged_total 1)
                                 invalid  no '# EOF' and a garbage line
                                 labels   one series with 100,000 labels (1.2 MB)
                                 native   protobuf: one native histogram of 4,000,000 one-byte
                                          deltas (4 MB)
                                 hang     never answered (the connection is held)
                        EVENTS:  none     404 (the default)
                                 hang     never answered
                                 flood    256 new memory_pressure events at every request
                                 trigger=PATH  one resolution_error of dependency Trigger once
                                          PATH exists, at its modification time
                        HEALTH:  pass     {"status":"pass"} with one passing component
                                 fail,N,BYTES  N failing components whose outputs are reasons of
                                          BYTES bytes each (HTTP 503)
                        Prints 'serving N' once every socket listens, then the size of each
                        distinct /health document ('health NAME BYTES').
                        On SIGTERM it stops as a real application does: it removes its sockets,
                        stops listening, closes its connections, and exits 0.8 s later.
    hang DIR COUNT      COUNT sockets DIR/hung-NN.sock that accept connections, read what comes and
                        never answer; prints 'hanging' once all listen.
"""
import asyncio
import json
import os
import signal
import struct
import sys


def metrics_document(kind, name):
    if kind == "orders":
        return (f"# TYPE orders counter\n# HELP orders Orders taken.\n"
                f'orders_total{{shop="{name}",result="ok"}} 42\norders_total{{shop="{name}",result="failed"}} 1\n'
                f"# EOF\n").encode()
    if kind == "forged":
        return b"# TYPE forged counter\n# HELP forged Forged by another user.\nforged_total 1\n# EOF\n"
    if kind == "invalid":
        return b"# TYPE half gauge\nhalf 1\nthis is {not an exposition\n"
    if kind == "labels":
        labels = ",".join(f'l{index}=""' for index in range(100_000))
        return f"# TYPE wide gauge\nwide{{{labels}}} 1\n# EOF\n".encode()
    if kind == "native":
        return native_histogram(4_000_000)
    if kind == "hang":
        return None
    raise SystemExit(f"unknown metrics kind {kind}")


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, wire, payload):
    """A protobuf field: varint payloads as ints, length-delimited ones as bytes."""
    tag = varint(number << 3 | wire)
    return tag + (varint(payload) if wire == 0 else varint(len(payload)) + payload)


def native_histogram(deltas):
    """One delimited io.prometheus.client.MetricFamily: histogram big_seconds whose native
    histogram has one span of `deltas` buckets, each delta 0 (one byte), count 0."""
    span = field(1, 0, 0) + field(2, 0, deltas)
    # count 0, schema 3 (zigzag 6), zero threshold 2^-20 (field 6, fixed64), the span and its deltas.
    histogram = (field(1, 0, 0) + field(5, 0, 6) + b"\x31" + struct.pack("<d", 2.0 ** -20)
                 + field(12, 2, span) + field(13, 2, b"\x00" * deltas))
    family = field(1, 2, b"big_seconds") + field(3, 0, 4) + field(4, 2, field(7, 2, histogram))
    return varint(len(family)) + family


PROTOBUF = b"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"


def events_page(kind, state, after):
    """(HTTP status, body) of /events?after=AFTER; None when it is never answered."""
    if kind == "none":
        return 404, b"not found\n"
    if kind == "hang":
        return None
    if kind == "flood":
        first = state["next"]
        state["next"] += 256
        events = [{"seq": seq, "time": state["started"], "kind": "memory_pressure", "fields": {}} for seq in range(first, first + 256)]
        page = {"started": state["started"], "first": first, "next": state["next"], "events": events}
        return 200, json.dumps(page).encode()
    word, path = kind.split("=", 1)
    assert word == "trigger", kind
    events = []
    if os.path.exists(path):
        events = [{"seq": 1, "time": os.stat(path).st_mtime, "kind": "resolution_error",
                   "fields": {"dependency": "Trigger", "error_kind": "factory_failed", "error": "triggered"}}]
    page = {"started": state["started"], "first": 1, "next": 1 + len(events), "events": [e for e in events if e["seq"] > after]}
    return 200, json.dumps(page).encode()


def health_document(kind):
    """(HTTP status, body) of a /health."""
    if kind == "pass":
        return 200, json.dumps({"status": "pass", "checks": {"db:status": [{"status": "pass"}]}}).encode()
    word, count, size = kind.split(",")
    assert word == "fail", kind
    checks = {}
    for index in range(int(count)):
        reason = (f"replica db-{index:04d}.internal:5432 refused the connection after 3 attempts in 2.5 s; "
                  f"the pool has 0 of 16 connections and 412 requests queued; last error: ")
        reason = (reason + "ECONNREFUSED " * 40)[:int(size)]
        checks[f"replica-{index:04d}:status"] = [{"status": "fail", "output": reason}]
    return 503, json.dumps({"status": "fail", "output": f"{count} replicas are down", "checks": checks}, separators=(",", ":")).encode()


def serve(directory, *specs):
    apps = []  # (name, metrics body, (code, health body))
    sizes = {}
    for spec in specs:
        name, metrics_kind, health_kind, *rest = spec.split(":", 3)
        events_kind = rest[0] if rest else "none"
        health = health_document(health_kind)
        sizes[health_kind] = len(health[1])
        if "*" in name:
            base, count = name.split("*")
            names = [f"{base}-{index:02d}" for index in range(int(count))]
        else:
            names = [name]
        apps += [(each, metrics_document(metrics_kind, each), health, events_kind) for each in names]

    connections = set()

    def handler(metrics, health, events):
        state = {"started": 1_800_000_000.0 + os.getpid(), "next": 1}

        async def answer(reader, writer):
            connections.add(writer)
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    path = head.split(b"\r\n")[0].split(b" ")[1]
                    target = path.split(b"?")[0]
                    if target == b"/metrics" and metrics is None:
                        await asyncio.Event().wait()
                    if target == b"/metrics":
                        protobuf = metrics[:1] != b"#"
                        code, body = 200, metrics
                        kind = PROTOBUF if protobuf else b"application/openmetrics-text; version=1.0.0; charset=utf-8"
                    elif target == b"/events":
                        query = dict(part.split(b"=", 1) for part in path.split(b"?", 1)[1].split(b"&")) if b"?" in path else {}
                        answer_ = events_page(events, state, int(query.get(b"after", b"0")))
                        if answer_ is None:
                            await asyncio.Event().wait()
                        code, body, kind = answer_[0], answer_[1], b"application/json"
                    elif target == b"/health":
                        code, body, kind = health[0], health[1], b"application/health+json"
                    else:
                        code, body, kind = 404, b"not found\n", b"text/plain"
                    writer.write(b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (code, kind, len(body)) + body)
                    await writer.drain()
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, IndexError):
                pass
            finally:
                connections.discard(writer)
                writer.close()
        return answer

    async def main():
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        servers = []
        paths = []
        for name, metrics, health, events in apps:
            path = f"{directory}/{name}.sock"
            servers.append(await asyncio.start_unix_server(handler(metrics, health, events), path=path, limit=1 << 20))
            paths.append(path)

        def graceful():
            # As a real application on SIGTERM: the socket goes first, then the listener and the
            # connections; the process ends a moment later (its drain).
            for path in paths:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
            for server in servers:
                server.close()
            for writer in list(connections):
                writer.close()
            loop.call_later(0.8, done.set)

        loop.add_signal_handler(signal.SIGTERM, graceful)
        print(f"serving {len(servers)}", flush=True)
        for kind, size in sizes.items():
            print(f"health {kind} {size}", flush=True)
        await done.wait()

    asyncio.run(main())


def hang(directory, count):
    async def answer(reader, writer):
        try:
            while await reader.read(65536):
                pass
        except ConnectionError:
            pass
        writer.close()

    async def main():
        servers = [await asyncio.start_unix_server(answer, path=f"{directory}/hung-{index:02d}.sock") for index in range(int(count))]
        print(f"hanging {len(servers)}", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())


if __name__ == "__main__":
    {"serve": serve, "hang": hang}[sys.argv[1]](*sys.argv[2:])
