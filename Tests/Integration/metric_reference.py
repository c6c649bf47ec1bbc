"""Checks a real exposition against the metric reference table of monitoring/README.md: the same
families, and for each the same type, help text and labels. The table lists the daemon's own labels;
`app` may appear on any family (an aggregated application's series) and `le` on histograms.
Prints each difference; exits 1 when there is one.
Usage: metric_reference.py README EXPOSITION (Prometheus text format)"""
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

readme, exposition = sys.argv[1], sys.argv[2]

table = {}
inside = False
for line in open(readme):
    if line.startswith("## "):
        inside = line.strip() == "## Metric reference"
        continue
    if not inside or not line.startswith("| `"):
        continue
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    name, kind, labels, meaning = cells[0].strip("`"), cells[1], set(re.findall(r"`([a-z_]+)`", cells[2])), cells[3]
    table[name] = (kind, labels, meaning)

seen = {}
for family in text_string_to_metric_families(open(exposition).read()):
    if not family.name.startswith(("weave_", "process_")):
        continue  # an application's own families pass through
    name = family.name + "_total" if family.type == "counter" else family.name
    labels = set()
    for sample in family.samples:
        labels |= set(sample.labels)
    # A family without series (no https or systemd_unit check on this host) shows no labels to compare.
    seen[name] = (family.type, labels - {"le"} if family.samples else None, family.documentation)

problems = []
for name in sorted(set(table) | set(seen)):
    if name not in seen:
        problems.append(f"{name}: in the table, not served")
        continue
    if name not in table:
        problems.append(f"{name}: served, not in the table")
        continue
    (kind, labels, meaning), (real_kind, real_labels, help_text) = table[name], seen[name]
    if kind != real_kind:
        problems.append(f"{name}: type {real_kind}, the table says {kind}")
    if real_labels is not None and (real_labels - {"app"} != labels - {"app"} or ("app" in labels and "app" not in real_labels)):
        problems.append(f"{name}: labels {sorted(real_labels)}, the table says {sorted(labels)}")
    if meaning != help_text:
        problems.append(f"{name}: help '{help_text}', the table says '{meaning}'")
print("\n".join(problems))
sys.exit(1 if problems else 0)
