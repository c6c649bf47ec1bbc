"""Writes the multi-host test's Prometheus, rules and Alertmanager files from the shipped examples in
monitoring/, changing only what a test on one machine must: addresses, ports, intervals, and the
`for` of the alerts the test makes fire (everything else stays as shipped).
Usage: fleet_configs.py MONITORING-DIR WORK ALERTMANAGER-ADDRESS RECEIVER-URL FOR"""
import os
import sys

import yaml

monitoring, work, alertmanager, receiver, hold = sys.argv[1:6]
exercised = {"WeaveCheckFailing", "WeaveConfigReloadFailed", "WeaveHealthdDown", "WeaveAppDown"}


def load(path):
    with open(os.path.join(monitoring, path)) as f:
        return yaml.safe_load(f)


def dump(document, path):
    with open(os.path.join(work, path), "w") as f:
        yaml.safe_dump(document, f, sort_keys=False)


os.makedirs(os.path.join(work, "rules"), exist_ok=True)
dump(load("rules/weave-recording.yml"), "rules/weave-recording.yml")
alerts = load("rules/weave-alerts.yml")
for group in alerts["groups"]:
    for rule in group["rules"]:
        if rule.get("alert") in exercised:
            rule["for"] = hold
dump(alerts, "rules/weave-alerts.yml")

prometheus = load("discovery/prometheus.yml")
prometheus["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"}
prometheus["rule_files"] = [os.path.join(work, "rules/weave-recording.yml"), os.path.join(work, "rules/weave-alerts.yml")]
prometheus["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] = [alertmanager]
job = prometheus["scrape_configs"][0]
job["scrape_timeout"] = "1s"
job["file_sd_configs"][0]["files"] = [os.path.join(work, "file_sd/*.yml")]
job["file_sd_configs"][0]["refresh_interval"] = "1s"
dump(prometheus, "prometheus.yml")

routing = load("alertmanager/alertmanager.yml")
routing["route"].update({"group_wait": "1s", "group_interval": "2s", "repeat_interval": "1h"})
for route in routing["route"].get("routes", []):
    route.pop("repeat_interval", None)
for entry in routing["receivers"]:
    for hook in entry.get("webhook_configs", []):
        hook["url"] = hook["url"].replace("http://127.0.0.1:5001", receiver)
dump(routing, "alertmanager.yml")
