"""Helpers the process benchmarks share: a free loopback port, waiting for a listener, RSS, stopping,
starting the benchmark applications."""
import os
import socket
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, deadline):
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.05):
                return True
        except OSError:
            time.sleep(0.0005)
    return False


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def time_to_listen_ms(command, port):
    """Milliseconds from starting `command` to its listener on `port` accepting a connection."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ok = wait_listening(port, start + 5)
        return (time.monotonic() - start) * 1000 if ok else float("inf")
    finally:
        stop(process)


def idle_rss(command, port, path="/metrics"):
    """VmRSS in KiB of `command` after one request to `path` and 5 idle seconds."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, time.monotonic() + 10)
        urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5).read()
        time.sleep(5)
        return rss_kib(process.pid)
    finally:
        stop(process)


def node_exporter_comparison(weave_rss, what):
    """A Markdown line: `weave_rss` (KiB) beside prometheus-node-exporter's idle RSS, measured the same way."""
    import shutil
    node_exporter = shutil.which("prometheus-node-exporter")
    if not node_exporter:
        return f"- idle RSS after one scrape and 5 s{what}: weave-healthd {weave_rss / 1024:.1f} MiB (prometheus-node-exporter not installed)"
    node_port = free_port()
    node_rss = idle_rss([node_exporter, f"--web.listen-address=127.0.0.1:{node_port}"], node_port)
    return (f"- idle RSS after one scrape and 5 s{what}: weave-healthd {weave_rss / 1024:.1f} MiB, "
            f"prometheus-node-exporter {node_rss / 1024:.1f} MiB (ratio {weave_rss / node_rss:.2f})")


def start_apps(bench, directory, count, services):
    """Starts `count` benchmark applications (`WeaveBenchmarks app`, `services` services and checks
    each) with their sockets in `directory`; returns their processes once every socket is there
    (or 60 s have passed)."""
    apps = [subprocess.Popen([bench, "app", f"app-{index:02d}", directory, str(services)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for index in range(count)]
    deadline = time.monotonic() + 60
    while len([name for name in os.listdir(directory) if name.endswith(".sock")]) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return apps


def scratch_apps_directory(prefix):
    """A scratch folder and, in it, the `apps` folder the applications' sockets go to."""
    work = tempfile.mkdtemp(prefix=prefix)
    directory = os.path.join(work, "apps")
    os.mkdir(directory)
    return work, directory


def aggregation_config(work, port, directory, settings):
    """Writes weave-healthd's configuration in `work`: listening on 127.0.0.1:`port`, discovering the
    applications in `directory`, with `settings` (`timeout`, `budget`, ...) for them; returns its path."""
    path = os.path.join(work, "config.yaml")
    with open(path, "w") as handle:
        handle.write(f"listen:\n  - address: 127.0.0.1:{port}\napps:\n  directory: {directory}\n"
                     + "".join(f"  {key}: {value}\n" for key, value in settings.items()))
    return path
