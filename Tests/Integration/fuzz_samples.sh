#!/usr/bin/env bash
# The exposition fuzz campaign's merged renderings (ExpositionParserFuzzTests, with
# WEAVE_FUZZ_SAMPLES=DIR): whatever the parser accepted from a damaged application, merged with
# another application's families, must be read by promtool (lint findings aside) and by the Python
# client's text and OpenMetrics parsers, as a Prometheus server would read the daemon's scrape.
# Usage: Tests/Integration/fuzz_samples.sh DIR
set -uo pipefail
source "$(dirname "$0")/lib.sh"
DIR=$1
count=$(find "$DIR" -name 'sample-*' | wc -l)
errors=""
for file in "$DIR"/sample-*; do
    # promtool prints "error while linting: …" when it cannot parse; other lines are lint findings.
    out=$(promtool check metrics < "$file" 2>&1)
    grep -q "^error" <<<"$out" && errors+="$(basename "$file"): $(head -1 <<<"$out")"$'\n'
done
if [ "$count" -gt 100 ] && [ -z "$errors" ]; then ok "promtool reads all $count merged renderings of the fuzz campaign"
else not_ok "promtool reads the fuzz campaign's renderings ($count)" "$(head -5 <<<"$errors")"; fi
if "$PY" - "$DIR" <<'PYTHON'
import glob, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
from prometheus_client.parser import text_string_to_metric_families as text
failures = []
for path in sorted(glob.glob(sys.argv[1] + "/sample-*")):
    parse = openmetrics if path.endswith(".om") else text
    try:
        list(parse(open(path, encoding="utf-8").read()))
    except Exception as error:
        failures.append(f"{path}: {error!r}"[:300])
print("\n".join(failures[:5]))
sys.exit(1 if failures else 0)
PYTHON
then ok "the Python client's text and OpenMetrics parsers read them all"
else not_ok "the Python parsers read the fuzz campaign's renderings"; fi
finish
