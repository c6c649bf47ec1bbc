"""Checks the journald entries of one weave-healthd run: reads `journalctl -o json` lines on stdin
and the expected MESSAGE_IDs (argv[1:]); prints one problem per line and exits 1 if any."""
import json
import re
import sys

entries = [json.loads(line) for line in sys.stdin if line.strip()]
problems = []
valid = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
for entry in entries:
    for name in entry:
        if not name.startswith("_") and not valid.match(name):
            problems.append("invalid field name %r in %r" % (name, entry.get("MESSAGE")))
    for required in ("MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"):
        if required not in entry:
            problems.append("%s missing in %r" % (required, entry.get("MESSAGE")))
    if "UNIT" in entry or "USER_UNIT" in entry:
        problems.append("UNIT set by the client in %r" % entry.get("MESSAGE"))

def find(predicate, what):
    found = [e for e in entries if predicate(e)]
    if not found:
        problems.append("no entry: " + what)
    return found

transitions = find(lambda e: "WEAVE_CHECK" in e and "WEAVE_STATE_TO" in e, "a health transition with WEAVE_CHECK and WEAVE_STATE_TO")
for e in transitions:
    if e.get("MESSAGE_ID") != "d47c2ece5e194c99bc8756c4e375df39":
        problems.append("transition without its MESSAGE_ID: %r" % e.get("MESSAGE"))
    expected = {"healthy": "6", "degraded": "4", "unhealthy": "3"}[e["WEAVE_STATE_TO"]]
    if e.get("WEAVE_STATE_FROM") != "unknown" and e["PRIORITY"] != expected:
        problems.append("priority %s for a transition to %s" % (e["PRIORITY"], e["WEAVE_STATE_TO"]))
    if "WEAVE_REASON" not in e or "WEAVE_STATE_FROM" not in e:
        problems.append("transition without WEAVE_STATE_FROM/WEAVE_REASON: %r" % e.get("MESSAGE"))
find(lambda e: e.get("WEAVE_CHECK") == "slow" and e.get("WEAVE_STATE_TO") == "unhealthy", "the slow check timing out")
find(lambda e: e.get("WEAVE_CHECK") == "failing" and e.get("WEAVE_STATE_TO") == "unhealthy" and e.get("PRIORITY") == "3",
     "the failing check at priority err")
# metadata keys such as state_from and check are not journald names until sanitised
find(lambda e: "WEAVE_STATE_FROM" in e, "state_from sanitised to WEAVE_STATE_FROM")
# Resolution errors (00f18f66…), and the rate limit's summaries of them, under a MESSAGE_ID of their
# own (9e29899a…, records suppressed) that names the one they stand for.
single = [e for e in entries if e.get("MESSAGE_ID") == "00f18f663af544d787af7808aa6dc0b3"]
summaries = [e for e in entries if e.get("MESSAGE_ID") == "9e29899a6f2c4d94ab6b1a43c075903d"
             and e.get("WEAVE_SUPPRESSED_MESSAGE_ID") == "00f18f663af544d787af7808aa6dc0b3"]
if any("WEAVE_SUPPRESSED" in e for e in single):
    problems.append("a summary under the resolution error's MESSAGE_ID, whose catalog text names fields it lacks")
if len(single) > 5:
    problems.append("the flood was not rate-limited: %d resolution-error entries" % len(single))
if not summaries or sum(int(e["WEAVE_SUPPRESSED"]) for e in summaries) + len(single) != 1000:
    problems.append("no summary accounting for 1,000 errors: %d logged, summaries %r"
                    % (len(single), [e.get("WEAVE_SUPPRESSED") for e in summaries]))
for event in sys.argv[1:]:
    find(lambda e, event=event: e.get("MESSAGE_ID") == event, "MESSAGE_ID " + event)
print("\n".join(problems))
sys.exit(1 if problems else 0)
