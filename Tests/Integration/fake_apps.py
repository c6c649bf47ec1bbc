"""Fake applications for Tests/Integration/attacks.sh: Unix sockets in the daemon's discovery
directory that answer /metrics and /health (HTTP/1.1, kept connections), one asyncio process
serving any number of them. Nothing but Unix sockets.

    serve DIR SPEC...   each SPEC is NAME:METRICS:HEALTH, or NAME*COUNT:METRICS:HEALTH for COUNT
                        applications NAME-00 … (one process, one thread, asyncio).
                        METRICS: orders   a valid OpenMetrics exposition (orders_total{…})
                                 forged   a valid exposition of forged series (forged_total 1)
                                 invalid  no '# EOF' and a garbage line
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
    raise SystemExit(f"unknown metrics kind {kind}")


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
        name, metrics_kind, health_kind = spec.split(":")
        health = health_document(health_kind)
        sizes[health_kind] = len(health[1])
        if "*" in name:
            base, count = name.split("*")
            names = [f"{base}-{index:02d}" for index in range(int(count))]
        else:
            names = [name]
        apps += [(each, metrics_document(metrics_kind, each), health) for each in names]

    connections = set()

    def handler(metrics, health):
        async def answer(reader, writer):
            connections.add(writer)
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    target = head.split(b"\r\n")[0].split(b" ")[1].split(b"?")[0]
                    if target == b"/metrics":
                        code, body, kind = 200, metrics, b"application/openmetrics-text; version=1.0.0; charset=utf-8"
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
        for name, metrics, health in apps:
            path = f"{directory}/{name}.sock"
            servers.append(await asyncio.start_unix_server(handler(metrics, health), path=path))
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
