#!/usr/bin/env python3
"""Polling against watching (`apps: watch: false` / `true`, `health_interval` 1 s both), side by side
in alternating rounds, for 20 applications of 100 services and 101 checks each, nothing scraping:
- idle CPU of the daemon and of the 20 applications together;
- requests each application answers per second (its `write`/`writev` calls on sockets, one per
  answer, counted by strace in a phase of their own, so tracing does not touch the CPU figures);
- transition lag: one application's `flip` check is turned degraded and back (a file it reads at the
  default interval, 10 s); from the `changedAt` the application gives it to the moment the daemon's
  `/health` shows it;
- event lag: that transition's entry in the journal (`__REALTIME_TIMESTAMP`, when journald received
  it) after the application's event time (`WEAVE_EVENT_TIME`).
Prints Markdown.

Usage: watch_bench.py PATH-TO-weave-healthd PATH-TO-WeaveBenchmarks (release builds)
Every process it starts is stopped by the script (journald too, if it started one); sockets live in
a scratch directory.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone

from process_tools import aggregation_config, free_port, scratch_apps_directory, start_apps, stop, wait_listening

DAEMON, BENCH = sys.argv[1], sys.argv[2]
APPS, SERVICES, SECONDS, ROUNDS, FLIPS, TRACE_SECONDS = 20, 100, 60, 2, 10, 10
TICKS = os.sysconf("SC_CLK_TCK")
WORK, DIRECTORY = scratch_apps_directory("weave-watch-bench.")
FLIPPED = "app-00"


def cpu_seconds(pid):
    """User and system CPU time of `pid` so far (all its threads). The kernel here counts it in clock
    ticks (10 ms): over SECONDS, each process's figure is within 10 ms, so the 20 applications' sum is
    within ±0.33 % of a core over 60 s (±1 % over 20 s)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_journald():
    """A journald to write to; returns the process when this script started it."""
    if subprocess.run(["systemd-cat", "-t", "weave-bench-probe", "true"], capture_output=True).returncode == 0:
        return None
    os.makedirs("/run/systemd/journal", exist_ok=True)
    journald = subprocess.Popen(["/lib/systemd/systemd-journald"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(50):
        if subprocess.run(["systemd-cat", "-t", "weave-bench-probe", "true"], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    return journald


def flip_component(port):
    """The flipped check as the daemon's /health shows it: (status, changedAt in seconds)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
        document = json.load(response)
    entry = document["checks"][f"{FLIPPED}/flip:status"][0]
    changed = datetime.strptime(entry["changedAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    return entry["status"], changed


def transition_lags(port):
    """Flips the check FLIPS times; each flip's lag from the application's changedAt to the daemon's /health."""
    flag = os.path.join(DIRECTORY, f"{FLIPPED}.degraded")
    lags = []
    for index in range(FLIPS):
        want = "warn" if index % 2 == 0 else "pass"
        if want == "warn":
            open(flag, "w").close()
        else:
            os.unlink(flag)
        deadline = time.monotonic() + 15  # the check's next run (10 s and up to 10 %), and a margin
        while time.monotonic() < deadline:
            status, changed = flip_component(port)
            if status == want:
                lags.append(time.time() - changed)
                break
            time.sleep(0.002)
        time.sleep(0.7)
    return lags


def event_lags(since):
    """Each journal entry of the flipped check's transitions since `since`: received − event time."""
    out = subprocess.run(["journalctl", "-o", "json", "--since", f"@{since}", "SYSLOG_IDENTIFIER=weave-healthd",
                          f"WEAVE_APP={FLIPPED}", "WEAVE_CHECK=flip"], capture_output=True, text=True).stdout
    lags = []
    for line in out.splitlines():
        entry = json.loads(line)
        if "WEAVE_EVENT_TIME" in entry and "WEAVE_STATE_TO" in entry:
            lags.append(int(entry["__REALTIME_TIMESTAMP"]) / 1e6 - float(entry["WEAVE_EVENT_TIME"]))
    return lags


def answers_per_second(pid):
    """The answers `pid` writes per second over TRACE_SECONDS: its write and writev calls on sockets
    (strace -y names each descriptor; an event loop's wake-ups go to an eventfd, not counted)."""
    log = os.path.join(WORK, "strace.log")
    trace = subprocess.Popen(["strace", "-f", "-y", "-e", "trace=write,writev", "-o", log, "-p", str(pid)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(TRACE_SECONDS)
    trace.send_signal(2)
    trace.wait(timeout=10)
    with open(log) as handle:
        calls = sum(1 for line in handle if "socket:[" in line)
    return calls / TRACE_SECONDS


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))] if ordered else float("nan")


journald = start_journald()
apps = start_apps(BENCH, DIRECTORY, APPS, SERVICES)
modes = {"polling (watch: false)": "false", "watching (watch: true)": "true"}
results = {mode: {"cpu": [], "rps": [], "lag": [], "event": []} for mode in modes}
try:
    for _ in range(ROUNDS):
        for mode, watch in modes.items():
            port = free_port()
            config = aggregation_config(WORK, port, DIRECTORY, {"health_interval": "1s", "watch": watch})
            with open(config, "a") as handle:  # every flip's entry, none suppressed
                handle.write("log_rate_limit: {burst: 100, interval: 10s}\n")
            environment = dict(os.environ, WEAVE_LOG_TARGET="journal")
            daemon = subprocess.Popen([DAEMON, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
            try:
                wait_listening(port, time.monotonic() + 10)
                time.sleep(4)  # the first rounds, the first watch answers
                before = (cpu_seconds(daemon.pid), sum(cpu_seconds(app.pid) for app in apps))
                time.sleep(SECONDS)
                after = (cpu_seconds(daemon.pid), sum(cpu_seconds(app.pid) for app in apps))
                results[mode]["cpu"].append(((after[0] - before[0]) / SECONDS * 100, (after[1] - before[1]) / SECONDS * 100))
                results[mode]["rps"].append(answers_per_second(apps[1].pid))
                since = time.time()
                results[mode]["lag"] += transition_lags(port)
                time.sleep(1)
                results[mode]["event"] += event_lags(since)
            finally:
                stop(daemon)
                if os.path.exists(os.path.join(DIRECTORY, f"{FLIPPED}.degraded")):
                    os.unlink(os.path.join(DIRECTORY, f"{FLIPPED}.degraded"))
finally:
    for app in apps:
        stop(app)
    if journald:
        stop(journald)
    shutil.rmtree(WORK, ignore_errors=True)

print(f"### Polling against watching: {APPS} applications x {SERVICES} services and {SERVICES + 1} checks, nothing scraping "
      f"({ROUNDS} alternating rounds; CPU over {SECONDS} s, answers over {TRACE_SECONDS} s, {FLIPS} flips a round)\n")
print("| mode | daemon CPU, % of a core | the 20 applications' CPU, % of a core | answers/s of one application "
      "| transition lag p50 / p99 (ms) | event → journal p50 / p99 (ms) |")
print("|---|---:|---:|---:|---:|---:|")
for mode, figures in results.items():
    daemon = "–".join(f"{run[0]:.2f}" for run in sorted(figures["cpu"]))
    apps_cpu = "–".join(f"{run[1]:.2f}" for run in sorted(figures["cpu"], key=lambda run: run[1]))
    rps = "–".join(f"{value:.2f}" for value in sorted(figures["rps"]))
    lag = f"{percentile(figures['lag'], 0.5) * 1000:.0f} / {percentile(figures['lag'], 0.99) * 1000:.0f} (n={len(figures['lag'])})"
    event = f"{percentile(figures['event'], 0.5) * 1000:.0f} / {percentile(figures['event'], 0.99) * 1000:.0f} (n={len(figures['event'])})"
    print(f"| {mode} | {daemon} | {apps_cpu} | {rps} | {lag} | {event} |")
