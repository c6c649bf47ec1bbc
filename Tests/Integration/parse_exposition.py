#!/usr/bin/env python3
"""Parses an exposition with the official Python client as a second opinion.

Usage: parse_exposition.py text|openmetrics FILE; prints the number of families, fails on errors.
"""
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

kind, path = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as handle:
    text = handle.read()
parse = parse_text if kind == "text" else parse_openmetrics
families = list(parse(text))
names = {family.name for family in families}
for required in ("weave_resolutions", "weave_health_status", "weave_resolve_duration_seconds", "process_cpu_seconds"):
    if required not in names:
        sys.exit(f"missing family {required}; have {sorted(names)}")
print(len(families))
