"""Fake applications: Unix sockets in the daemon's discovery directory that answer /metrics, /health
and /events (HTTP/1.1, kept connections) as a WeaveDI application does, or in ways one must not, or
never; one asyncio process serves any number of them. Nothing but Unix sockets. Each subcommand is a
test's: `serve` and `hang` attacks.sh's (`serve` reload.sh's and nspawn.sh's too, `stale` nspawn.sh's), `numbered` and
`unaccepted` faults.sh's, `expositions` apps.sh's; hostile_app.py answers with `answerer`, the
request loop of them all.

    serve [--as=UID:GID] DIR SPEC...
                        each SPEC is NAME:METRICS:HEALTH[:EVENTS], or NAME*COUNT:… for COUNT
                        applications NAME-00 … (one process, one thread, asyncio). With --as, run
                        by root: once every socket listens, they are given to UID:GID and the
                        process drops to that user (group GID only), as another user's process in
                        the group; it removes its sockets through the directory opened before, so
                        DIR may be a path only root can walk (/proc/PID/root/…).
                        METRICS: orders   a valid OpenMetrics exposition (orders_total{…})
                                 forged   a valid exposition of forged series (forged_total 1)
                                 liar     orders', and weave_health_status saying check db is
                                          unhealthy, which its /health (pass) never says
                                 invalid  no '# EOF' and a garbage line
                                 labels   one series with 100,000 labels (1.2 MB)
                                 native   protobuf: one native histogram of 4,000,000 one-byte
                                          deltas (4 MB)
                                 hang     never answered (the connection is held)
                        EVENTS:  none     404 (the default)
                                 run      a page of its run (begun when the process started),
                                          without events
                                 restarting  a page of a new run at every read (begun then)
                                 hang     never answered
                                 flood    256 new memory_pressure events at every request
                                 trigger=PATH  one resolution_error of dependency Trigger once
                                          PATH exists, at its modification time
                                 poison=PATH   none until PATH exists; then a page of a run
                                          that started at 1e300, with an event at 1e300
                        HEALTH:  pass     {"status":"pass"} with one passing component
                                 fail,N,BYTES  N failing components whose outputs are reasons of
                                          BYTES bytes each (HTTP 503)
                                 flap     pass and a body that is not JSON, in turn at each read
                        Prints 'serving N' once every socket listens, then the size of each
                        distinct /health document ('health NAME BYTES').
                        On SIGTERM it stops as a real application does: it removes its sockets,
                        stops listening, closes its connections, prints how often each application
                        was asked each path ('asked NAME PATH N'), and exits 0.8 s later.
    stale DIR COUNT UID:GID
                        COUNT sockets DIR/stale-NNNN.sock bound and closed at once (nobody listens:
                        a connection is refused), given to UID:GID; prints 'stale N' and ends.
    hang DIR COUNT      COUNT sockets DIR/hung-NN.sock that accept connections, read what comes and
                        never answer; prints 'hanging' once all listen.
    numbered DIR COUNT [SERIES [COMPONENTS OUTPUT]]
                        COUNT applications DIR/app-NNNN.sock. A request for /health* gets
                        {"status":"pass"}, or with COMPONENTS that many failing components whose
                        outputs are OUTPUT bytes (HTTP 200 all the same); any other (/events too)
                        an OpenMetrics exposition of SERIES series (1 by default). Prints
                        'serving N' once all listen.
    unaccepted DIR COUNT
                        COUNT sockets DIR/a-hanging-NNN.sock whose connections are never accepted
                        (they wait in the backlog); prints 'hanging' once all listen, and holds them
                        for an hour at most.
    expositions DIR     one application DIR/MODE.sock per exposition that must not reach the daemon's
                        /metrics as it is (the modes in `expositions`): a request for /health* gets a
                        pass without components, any other the mode's text exposition, or a protobuf
                        one (the pb-* modes) when /metrics* is asked for protobuf. Prints 'ready'
                        once all listen; on SIGTERM it ends at once, its sockets left in place.
"""
import asyncio
import json
import os
import signal
import socket
import struct
import sys
import time


def metrics_document(kind, name):
    if kind == "orders":
        return (f"# TYPE orders counter\n# HELP orders Orders taken.\n"
                f'orders_total{{shop="{name}",result="ok"}} 42\norders_total{{shop="{name}",result="failed"}} 1\n'
                f"# EOF\n").encode()
    if kind == "liar":
        states = "".join(f'weave_health_status{{check="db",state="{state}"}} {int(state == "unhealthy")}\n'
                         for state in ("healthy", "degraded", "unhealthy"))
        return metrics_document("orders", name)[:-len(b"# EOF\n")] + (
            "# TYPE weave_health_status gauge\n# HELP weave_health_status Health of each check.\n" + states + "# EOF\n").encode()
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


def zigzag(value):
    return (value << 1) ^ (value >> 63)


def histogram_family(schema=3, spans=((0, 1),), deltas=(1,), extra=b""):
    """One delimited MetricFamily: histogram h_seconds (HELP h) whose native histogram has count 10,
    sum 0, SCHEMA, zero threshold 2^-20, SPANS of (offset, length), the bucket DELTAS, then EXTRA."""
    h = field(1, 0, 10) + b"\x11" + bytes(8)  # sample_count 10, sample_sum 0
    h += field(5, 0, zigzag(schema)) + b"\x31" + bytes.fromhex("000000000000b03e")  # schema, zero_threshold 2^-20
    for offset, length in spans:
        h += field(12, 2, field(1, 0, zigzag(offset)) + field(2, 0, length))
    h += field(13, 2, b"".join(varint(zigzag(d)) for d in deltas)) + extra
    family = field(1, 2, b"h_seconds") + field(2, 2, b"h") + field(3, 0, 4) + field(4, 2, field(7, 2, h))
    return varint(len(family)) + family


PROTOBUF = b"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
OPENMETRICS = b"application/openmetrics-text; version=1.0.0; charset=utf-8"


def events_page(kind, state, after):
    """(HTTP status, body) of /events?after=AFTER; None when it is never answered."""
    if kind == "none":
        return 404, b"not found\n"
    if kind == "hang":
        return None
    if kind in ("run", "restarting"):
        if kind == "restarting":
            state["started"] = time.time()
        page = {"started": state["started"], "first": 1, "next": 1, "events": []}
        return 200, json.dumps(page).encode()
    if kind == "flood":
        first = state["next"]
        state["next"] += 256
        events = [{"seq": seq, "time": state["started"], "kind": "memory_pressure", "fields": {}} for seq in range(first, first + 256)]
        page = {"started": state["started"], "first": first, "next": state["next"], "events": events}
        return 200, json.dumps(page).encode()
    word, path = kind.split("=", 1)
    assert word in ("trigger", "poison"), kind
    if word == "poison" and os.path.exists(path):
        # A new run that began at 1e300, and an event then: finite, valid JSON, and no date.
        events = [{"seq": 1, "time": 1e300, "kind": "resolution_error",
                   "fields": {"dependency": "Poison", "error_kind": "factory_failed", "error": "1e300"}}]
        page = {"started": 1e300, "first": 1, "next": 2, "events": [e for e in events if e["seq"] > after]}
        return 200, json.dumps(page).encode()
    events = []
    if word == "trigger" and os.path.exists(path):
        events = [{"seq": 1, "time": os.stat(path).st_mtime, "kind": "resolution_error",
                   "fields": {"dependency": "Trigger", "error_kind": "factory_failed", "error": "triggered"}}]
    page = {"started": state["started"], "first": 1, "next": 1 + len(events), "events": [e for e in events if e["seq"] > after]}
    return 200, json.dumps(page).encode()


def health_documents(kind):
    """The (HTTP status, body) pairs of a /health, answered in turn (one but for flap)."""
    if kind == "pass":
        return [(200, json.dumps({"status": "pass", "checks": {"db:status": [{"status": "pass"}]}}).encode())]
    if kind == "flap":
        return health_documents("pass") + [(200, b"{not json")]
    word, count, size = kind.split(",")
    assert word == "fail", kind
    checks = {}
    for index in range(int(count)):
        reason = (f"replica db-{index:04d}.internal:5432 refused the connection after 3 attempts in 2.5 s; "
                  f"the pool has 0 of 16 connections and 412 requests queued; last error: ")
        reason = (reason + "ECONNREFUSED " * 40)[:int(size)]
        checks[f"replica-{index:04d}:status"] = [{"status": "fail", "output": reason}]
    return [(503, json.dumps({"status": "fail", "output": f"{count} replicas are down", "checks": checks}, separators=(",", ":")).encode())]


def answerer(route, connections=None, reason=b"X"):
    """A client handler for asyncio.start_unix_server that answers each request of a kept connection
    until the peer closes it: route(HEAD) gives (status, content type, body) for a request's head (up
    to its blank line), or None for one never answered (the connection is then held). REASON is the
    status line's reason phrase; CONNECTIONS, a set, holds the writers of the open connections."""
    async def answer(reader, writer):
        if connections is not None:
            connections.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                reply = route(head)
                if reply is None:
                    await asyncio.Event().wait()
                code, kind, body = reply
                writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (code, reason, kind, len(body)) + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, IndexError):
            pass
        finally:
            if connections is not None:
                connections.discard(writer)
            writer.close()
    return answer


def application(metrics, health, events, asked):
    """The route of one application of `serve`: its /metrics, /health and /events (see answerer).
    ASKED, a dictionary, counts the requests of each path."""
    # Its run began now: a start in the future (beyond a minute) is refused by the daemon (#66).
    state = {"started": time.time(), "next": 1}

    def route(head):
        path = head.split(b"\r\n")[0].split(b" ")[1]
        target = path.split(b"?")[0]
        asked[target.decode()] = asked.get(target.decode(), 0) + 1
        if target == b"/metrics":
            if metrics is None:
                return None
            return 200, PROTOBUF if metrics[:1] != b"#" else OPENMETRICS, metrics
        if target == b"/events":
            query = dict(part.split(b"=", 1) for part in path.split(b"?", 1)[1].split(b"&")) if b"?" in path else {}
            page = events_page(events, state, int(query.get(b"after", b"0")))
            return None if page is None else (page[0], b"application/json", page[1])
        if target == b"/health":
            code, body = health[(asked["/health"] - 1) % len(health)]
            return code, b"application/health+json", body
        return 404, b"text/plain", b"not found\n"
    return route


def serve(*arguments):
    owner = None
    if arguments[0].startswith("--as="):
        owner = tuple(int(part) for part in arguments[0][len("--as="):].split(":"))
        arguments = arguments[1:]
    directory, *specs = arguments
    apps = []  # (name, metrics body, (code, health body), events kind)
    sizes = {}
    for spec in specs:
        name, metrics_kind, health_kind, *rest = spec.split(":", 3)
        events_kind = rest[0] if rest else "none"
        health = health_documents(health_kind)
        sizes[health_kind] = len(health[0][1])
        if "*" in name:
            base, count = name.split("*")
            names = [f"{base}-{index:02d}" for index in range(int(count))]
        else:
            names = [name]
        apps += [(each, metrics_document(metrics_kind, each), health, events_kind) for each in names]

    connections = set()
    asked = {}  # name: {path: requests}

    async def main():
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        servers = []
        paths = []
        for name, metrics, health, events in apps:
            path = f"{directory}/{name}.sock"
            asked[name] = {}
            servers.append(await asyncio.start_unix_server(answerer(application(metrics, health, events, asked[name]), connections),
                                                           path=path, limit=1 << 20))
            paths.append(path)
        directory_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        if owner:
            for path in paths:
                os.chown(path, *owner)
            os.setgroups([owner[1]])
            os.setgid(owner[1])
            os.setuid(owner[0])

        def graceful():
            # As a real application on SIGTERM: the socket goes first, then the listener and the
            # connections; the process ends a moment later (its drain).
            for path in paths:
                try:
                    os.unlink(os.path.basename(path), dir_fd=directory_fd)
                except FileNotFoundError:
                    pass
            for server in servers:
                server.close()
            for writer in list(connections):
                writer.close()
            for name, requests in asked.items():
                for path, count in sorted(requests.items()):
                    print(f"asked {name} {path} {count}", flush=True)
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


def numbered(directory, count, series="1", components="0", output="0"):
    body = ("# TYPE probe_value gauge\n" + "".join(f'probe_value{{i="{index}"}} 1\n' for index in range(int(series)))
            + "# EOF\n").encode()
    health = b'{"status":"pass"}' if int(components) == 0 else json.dumps({"status": "fail", "checks": {
        f"check-{index}:status": [{"status": "fail", "output": "x" * int(output)}] for index in range(int(components))}}).encode()

    def route(head):
        if b" /health" in head.split(b"\r\n")[0]:
            return 200, b"application/health+json", health
        return 200, OPENMETRICS, body

    async def main():
        # Kept in this list, so they serve until the process is stopped.
        servers = [await asyncio.start_unix_server(answerer(route, reason=b"OK"), path=f"{directory}/app-{index:04d}.sock")
                   for index in range(int(count))]
        print(f"serving {len(servers)}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def unaccepted(directory, count):
    sockets = []
    for index in range(int(count)):
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(f"{directory}/a-hanging-{index:03d}.sock")
        listener.listen(64)
        sockets.append(listener)
    print("hanging", flush=True)
    time.sleep(3600)


def expositions(directory):
    health = b'{"status":"pass","checks":{}}'
    modes = {
        # down, with the rule
        "bad-utf8": b'# HELP x x\n# TYPE x gauge\nx{a="\xff"} 1\n',
        "label-twice": b'# HELP x x\n# TYPE x gauge\nx{a="1",a="2"} 1\n',
        "reserved-label": b'# HELP x x\n# TYPE x gauge\nx{__name__="y"} 1\n',
        "unit": b'# HELP x_seconds x\n# TYPE x_seconds gauge\n# UNIT x_seconds bytes\nx_seconds 1\n',
        "huge-value": b'# HELP x x\n# TYPE x gauge\nx 1e400\n',
        "long-integer": b'# HELP x x\n# TYPE x gauge\nx ' + b"9" * 5000 + b'\n',
        "bad-le": b'# HELP h h\n# TYPE h histogram\nh_bucket{le="abc"} 1\n',
        "no-inf": b'# HELP h h\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
        "buckets-down": b'# HELP h h\n# TYPE h histogram\nh_bucket{le="1"} 5\nh_bucket{le="+Inf"} 3\n',
        "bad-quantile": b'# HELP s s\n# TYPE s summary\ns{quantile="x"} 1\n',
        "series-twice": b'# HELP x x\n# TYPE x gauge\nx{a="1"} 1\nx{a="1"} 2\n',
        # kept, made valid
        "app-twice": b'# HELP hostile_x x\n# TYPE hostile_x gauge\nhostile_x{app="in",exported_app="e"} 1\n',
        "bare-counter": b'# HELP hostile_c c\n# TYPE hostile_c counter\nhostile_c 5\n',
        # dropped and counted
        "forge": b'# TYPE weave_config_last_reload_successful gauge\nweave_config_last_reload_successful 0\n'
                 b'# TYPE weave_app_up gauge\nweave_app_up 0\n# HELP hostile_ok ok\n# TYPE hostile_ok gauge\nhostile_ok 1\n',
        "clash-a": b'# HELP hostile_queue_depth q\n# TYPE hostile_queue_depth gauge\nhostile_queue_depth 3\n',
        "clash-b": b'# HELP hostile_queue_depth q\n# TYPE hostile_queue_depth counter\nhostile_queue_depth_total 7\n',
    }
    # Protobuf answers to a protobuf scrape (valid text otherwise).
    protobuf_modes = {
        "pb-negative": histogram_family(spans=((0, 2),), deltas=(3, -4)),
        "pb-overlap": histogram_family(spans=((0, 2), (-3, 1)), deltas=(1, 0, 0)),
        "pb-schema": histogram_family(schema=9),
        "pb-float": histogram_family(extra=b"\x21" + bytes(8)),  # sample_count_float
        "pb-cut": histogram_family()[:-3],
        "pb-valid": histogram_family(spans=((-34, 1),), deltas=(10,)),
    }
    for name in protobuf_modes:
        modes[name] = b'# HELP hostile_proto x\n# TYPE hostile_proto gauge\nhostile_proto 1\n'

    def route_of(name, body):
        def route(head):
            path = head.split(b" ")[1]
            if path.startswith(b"/health"):
                return 200, b"application/health+json", health
            if path.startswith(b"/metrics") and b"vnd.google.protobuf" in head and name in protobuf_modes:
                return 200, PROTOBUF, protobuf_modes[name]
            return 200, b"text/plain; version=0.0.4", body
        return route

    async def main():
        # Kept in this list, so they serve until the process is stopped.
        servers = [await asyncio.start_unix_server(answerer(route_of(name, body), reason=b"OK"), path=f"{directory}/{name}.sock")
                   for name, body in modes.items()]
        print("ready", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())


def stale(directory, count, owner):
    uid, gid = (int(part) for part in owner.split(":"))
    for index in range(int(count)):
        path = f"{directory}/stale-{index:04d}.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.close()
        os.chown(path, uid, gid)
    print(f"stale {count}", flush=True)


if __name__ == "__main__":
    commands = {"serve": serve, "stale": stale, "hang": hang, "numbered": numbered, "unaccepted": unaccepted,
                "expositions": expositions}
    commands[sys.argv[1]](*sys.argv[2:])
