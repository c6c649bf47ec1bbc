"""Hostile peers and sick dependencies for Tests/Integration/faults.sh, one subcommand each.
Every loop is bounded in count and time, and every address is loopback."""
import json
import os
import socket
import sys
import threading
import time
import urllib.request


def connect(port):
    return socket.create_connection(("127.0.0.1", int(port)), timeout=5)


def closed_within(sock, seconds):
    """Seconds until the peer closed the connection (reading and discarding), or None."""
    start = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - start < seconds:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - start
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - start
    return None


def pipeline(port, count, hold):
    """Sends COUNT pipelined GET /metrics and reads none of the answers for HOLD seconds."""
    sock = connect(port)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    sock.setblocking(False)
    sent, deadline = 0, time.monotonic() + float(hold)
    data = request * int(count)
    while time.monotonic() < deadline:
        if sent < len(data):
            try:
                sent += sock.send(data[sent:sent + 65536])
            except BlockingIOError:
                pass
        time.sleep(0.01)
    print(sent // len(request))
    sock.close()


def slowloris(port, limit):
    """Sends a request one byte a second; prints after how many seconds the server closed it."""
    sock = connect(port)
    request = b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 100
    start = time.monotonic()
    for byte in request:
        if time.monotonic() - start > float(limit):
            break
        try:
            sock.send(bytes([byte]))
        except OSError:
            break
        if closed_within(sock, 1.0) is not None:
            break
    print(round(time.monotonic() - start, 1))


def idle(port, count, hold):
    """Opens COUNT connections that send nothing, and keeps them for HOLD seconds."""
    held = []
    for _ in range(int(count)):
        try:
            held.append(connect(port))
        except OSError:
            pass
    print(len(held), flush=True)
    time.sleep(float(hold))
    for sock in held:
        sock.close()


def raw(port, text, wait="3"):
    """Sends TEXT (with \\r\\n escapes) and prints the answer's status line, and 'closed after X s'
    or 'open' depending on whether the server then closed the connection within WAIT seconds."""
    sock = connect(port)
    sock.sendall(text.encode().decode("unicode_escape").encode("latin-1"))
    sock.settimeout(3)
    answer = b""
    try:
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    except socket.timeout:
        pass
    status = answer.split(b"\r\n", 1)[0].decode("latin-1")
    after = closed_within(sock, float(wait))
    print(status, "| closed" if after is not None else "| open")


def head_length(port):
    """HEAD /metrics with Accept-Encoding: gzip; prints whether Content-Length equals the length of
    the body a GET with the same headers returns, and the Content-Encoding of each."""
    def fetch(method):
        sock = connect(port)
        sock.sendall(f"{method} /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        return headers, body
    head_headers, _ = fetch("HEAD")
    get_headers, get_body = fetch("GET")
    same_encoding = head_headers.get("content-encoding") == get_headers.get("content-encoding")
    matches = (head_headers.get("content-encoding") is None and int(head_headers.get("content-length", -1)) > 0) \
        or (same_encoding and head_headers.get("content-length") == str(len(get_body)))
    print("consistent" if matches else f"inconsistent: HEAD {head_headers} GET {get_headers} body {len(get_body)}")


def serve_bad(port, mode, count):
    """Answers COUNT connections with a broken HTTP response of kind MODE."""
    bodies = {
        "negative-length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}",
        "negative-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
        "huge-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nhello\r\n0\r\n\r\n",
        "huge-length": b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}",
        "ansi": b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/health+json\r\nConnection: close\r\n\r\n"
                b'{"status":"fail","checks":{"db:status":[{"status":"fail","output":"\\u001b[2J\\u001b[31mpwned\\nOK - injected | x=1"}]}}',
    }
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(port)))
    server.listen(8)
    server.settimeout(30)
    for _ in range(int(count)):
        try:
            conn, _ = server.accept()
        except socket.timeout:
            break
        conn.settimeout(2)
        try:
            conn.recv(4096)
            conn.sendall(bodies[mode])
        except OSError:
            pass
        conn.close()


def flood_journal(path="/run/systemd/journal/socket"):
    """Fills journald's socket queue (journald must be stopped); prints how many datagrams fit."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setblocking(False)
    count = 0
    while count < 100_000:
        try:
            sock.sendto(b"MESSAGE=weave-it flood\nSYSLOG_IDENTIFIER=weave-it-flood\n", path)
            count += 1
        except BlockingIOError:
            break
    print(count)


def sample_health(url, seconds):
    """Reads /health for SECONDS; prints 'N samples, M empty passes' (a pass with no checks is a lie)."""
    samples = lies = 0
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                document = json.load(response)
        except urllib.error.HTTPError as error:
            document = json.load(error)
        except OSError:
            continue
        samples += 1
        if document.get("status") == "pass" and not document.get("checks"):
            lies += 1
    print(samples, lies)


if __name__ == "__main__":
    commands = {"pipeline": pipeline, "slowloris": slowloris, "idle": idle, "raw": raw, "head-length": head_length,
                "serve-bad": serve_bad, "flood-journal": flood_journal, "sample-health": sample_health}
    commands[sys.argv[1]](*sys.argv[2:])
