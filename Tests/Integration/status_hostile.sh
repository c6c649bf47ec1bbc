#!/usr/bin/env bash
# The status page at /, attacked by its applications: an application whose check names, reasons,
# version and dependency names are markup (each made to slip past an escaper that works on grapheme
# clusters, with bidi and control characters too), and one that is down with such a name in its
# reason; and /?app= with a payload. Read by Debian's Chromium (headless) with time for handlers to
# run, and by html5lib: nothing injected exists or runs (a loopback recorder that every payload asks
# gets no request), the hostile text is shown as text, and / carries a Content-Security-Policy that
# forbids script and X-Content-Type-Options: nosniff.
# Usage: Tests/Integration/status_hostile.sh PATH-TO-weave-healthd
set -uo pipefail

source "$(dirname "$0")/lib.sh"
APPS="$WORK/apps"
mkdir -p "$APPS"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"

# --- the recorder every payload asks, and the hostile applications -----------------------------------
"$PY" "$HERE/hostile_app.py" record "$WORK/recorder.port" "$WORK/hits.log" > "$WORK/recorder.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 50); do [ -s "$WORK/recorder.port" ] && break; sleep 0.1; done
HIT_PORT=$(cat "$WORK/recorder.port" 2>/dev/null)
if [ -n "$HIT_PORT" ] && curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$HIT_PORT/probe"; then
    ok "the recorder listens on 127.0.0.1:$HIT_PORT and records a request"
else not_ok "the recorder starts" "$(cat "$WORK/recorder.log")"; finish; exit; fi
hits() { grep -v '^GET /probe$' "$WORK/hits.log"; }

"$PY" "$HERE/hostile_app.py" serve "$APPS" "$HIT_PORT" "$WORK/flip" > "$WORK/apps.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 50); do grep -q serving "$WORK/apps.log" && break; sleep 0.1; done

cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
details: always
bearer_token_file: $WORK/token
apps:
  directory: $APPS
  health_interval: 1s
checks:
  - {name: container, type: container}
YAML
echo "s3cret-token" > "$WORK/token"
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"

wait_health() { # PATTERN, seconds
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do curl -s "$URL/health" | holds -- "$1" && return 0; sleep 0.2; done
    return 1
}
# Healthy first, recorded by the history (every 5 s), then failing with the hostile reasons: the
# transitions table shows them too.
if wait_health '"componentId":"hostile","status":"pass"' 20; then ok "the hostile application is read, passing"
else not_ok "the hostile application is read" "$(curl -s "$URL/health" | head -c 600)"; fi
sleep 5.5
touch "$WORK/flip"
if wait_health '"componentId":"hostile","status":"fail"' 10; then ok "…then failing, with hostile reasons"
else not_ok "the hostile application fails" "$(curl -s "$URL/health" | head -c 600)"; fi
if curl -s "$URL/health" | holds '"componentId":"hostile-down","status":"fail"'; then ok "hostile-down is down"
else not_ok "hostile-down is down" "$(curl -s "$URL/health" | head -c 600)"; fi
sleep 5.5

# --- the headers of / ---------------------------------------------------------------------------------
curl -s -D "$WORK/headers.txt" -o "$WORK/page.html" "$URL/"
csp=$(grep -i '^content-security-policy:' "$WORK/headers.txt" | cut -d: -f2- | tr -d '\r' | sed 's/^ *//')
# The policy scripts fall under (script-src-elem and script-src-attr, else script-src, else
# default-src) must allow no inline script, no eval and nothing from elsewhere: 'none' or 'self' only.
verdict=$("$PY" - "$csp" <<'PY'
import sys
policy = {}
for directive in sys.argv[1].split(";"):
    words = directive.split()
    if words and words[0].lower() not in policy:
        policy[words[0].lower()] = [word.lower() for word in words[1:]]
base = policy.get("script-src", policy.get("default-src"))
problems = []
for name in ("script-src-elem", "script-src-attr"):
    sources = policy.get(name, base)
    if sources is None:
        problems.append(f"no {name}, script-src or default-src")
    elif any(source not in ("'none'", "'self'") for source in sources):
        problems.append(f"{name} falls under {' '.join(sources)}")
print("; ".join(problems) or "forbids")
PY
)
if [ -n "$csp" ] && [ "$verdict" = "forbids" ]; then ok "/ has a Content-Security-Policy that forbids inline script ($csp)"
else not_ok "/ has a Content-Security-Policy that forbids inline script" "${csp:-no Content-Security-Policy header}${csp:+: $verdict}"; fi
if grep -qiE '^x-content-type-options: *nosniff\s*$' "$WORK/headers.txt"; then ok "/ has X-Content-Type-Options: nosniff"
else not_ok "/ has X-Content-Type-Options: nosniff" "$(tr -d '\r' < "$WORK/headers.txt")"; fi

# --- what Chromium makes of the page ------------------------------------------------------------------
inspect() { # DOMFILE, KIND, WHAT: one ok/not_ok per finding
    local status what detail
    while IFS=$'\t' read -r status what detail; do
        if [ "$status" = PASS ]; then ok "$3: $what"; else not_ok "$3: $what" "$detail"; fi
    done < <("$PY" "$HERE/hostile_app.py" inspect "$1" "$HIT_PORT" "$2" 2>&1)
}
# Virtual time lets timers, loads and their handlers run before the DOM is dumped.
browser --virtual-time-budget=3000 --dump-dom "$URL/" > "$WORK/dom.html"
if grep -q 'id="app-hostile"' "$WORK/dom.html" && grep -q 'id="app-hostile-down"' "$WORK/dom.html"; then
    ok "Chromium shows both hostile applications"
else not_ok "Chromium shows both hostile applications" "$(head -c 400 "$WORK/dom.html")"; fi
inspect "$WORK/dom.html" page "/"
browser --virtual-time-budget=3000 --window-size=1000,3000 --screenshot="$WORK/page.png" "$URL/" > /dev/null
if [ -s "$WORK/page.png" ]; then ok "Chromium renders a screenshot of / (handlers had their time)"
else not_ok "Chromium renders a screenshot of /"; fi
# What the page echoes: /?app= with a payload.
browser --virtual-time-budget=3000 --dump-dom "$URL/?app=$("$PY" "$HERE/hostile_app.py" reflected "$HIT_PORT")" > "$WORK/reflected.html"
if grep -q 'No application named' "$WORK/reflected.html"; then ok "/?app=<payload> says no application has that name"
else not_ok "/?app=<payload> says no application has that name" "$(head -c 400 "$WORK/reflected.html")"; fi
inspect "$WORK/reflected.html" reflected "/?app=<payload>"

sleep 1 # a request a handler started on its way
if [ -z "$(hits)" ]; then ok "the recorder got no request from the page: nothing injected ran or loaded"
else not_ok "the recorder got no request from the page: $(hits | wc -l) did ($(hits | sed 's|.*/hit/||; s|[?%`].*||' | sort -u | tr '\n' ' '))" "$(hits | sort -u)"; fi

# --- the page stays well-formed -----------------------------------------------------------------------
out=$("$PY" - "$WORK/page.html" 2>&1 <<'PY'
import sys, html5lib
parser = html5lib.HTMLParser(strict=True)
try:
    parser.parse(open(sys.argv[1], "rb").read())
except html5lib.html5parser.ParseError as error:
    print("ParseError:", error)
print(parser.errors[:3] if parser.errors else "[]")
PY
)
if [ "$out" = "[]" ]; then ok "html5lib's strict parser accepts the page with the hostile strings"; else not_ok "html5lib's strict parser accepts the page with the hostile strings" "$out"; fi
finish
