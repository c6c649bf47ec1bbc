#!/usr/bin/env bash
# The status page at /, as a person sees it: two instances of the example service beside the
# daemon, one with a degraded check and one killed, read by Debian's Chromium (headless) from the
# rendered DOM and from screenshots, parsed by html5lib's strict parser, and read without and with
# the token when details are when-authorized.
# Usage: Tests/Integration/status.sh PATH-TO-weave-healthd PATH-TO-Orders
set -uo pipefail

source "$(dirname "$0")/lib.sh"
ORDERS=$(realpath "$2")
APPS="$WORK/apps"
mkdir -p "$APPS"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"

write_config() { # DETAILS
    cat > "$WORK/config.yaml" <<YAML
listen:
  - address: 127.0.0.1:$PORT
details: $1
bearer_token_file: $WORK/token
apps:
  directory: $APPS
  health_interval: 1s
checks:
  - {name: container, type: container}
YAML
}
echo "s3cret-token" > "$WORK/token"
write_config always
start_daemon "$WORK/config.yaml" "$WORK/daemon.log" "$URL/livez" 20 || not_ok "the daemon starts" "$(tail -5 "$WORK/daemon.log")"

declare -A APP_PID APP_PORT
for app in orders billing; do
    APP_PORT[$app]=$(free_port)
    "$ORDERS" --name "$app" --port "${APP_PORT[$app]}" --apps-dir "$APPS" > "$WORK/$app.log" 2>&1 &
    APP_PID[$app]=$!
    PIDS+=("$!")
done
for app in orders billing; do wait_for "http://127.0.0.1:${APP_PORT[$app]}/livez" 60 || not_ok "$app starts" "$(tail -5 "$WORK/$app.log")"; done
for _ in 1 2 3; do curl -s "http://127.0.0.1:${APP_PORT[orders]}/orders" > /dev/null; done
curl -s -X POST "http://127.0.0.1:${APP_PORT[billing]}/demo/payments/degrade" > /dev/null
# The example checks every 10 s and the daemon reads it every second.
wait_health() { # PATTERN, seconds
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do curl -s "$URL/health" | holds -- "$1" && return 0; sleep 0.2; done
    return 1
}
wait_health '"componentId":"billing/payments","status":"warn"' 25 || not_ok "billing's payments check degrades" "$(curl -s "$URL/health")"
sleep 2 # a second health round: the dependencies' rates
kill -9 "${APP_PID[orders]}"; wait "${APP_PID[orders]}" 2>/dev/null
wait_health '"componentId":"orders","status":"fail"' 10 || not_ok "orders is down after kill -9" "$(curl -s "$URL/health")"
sleep 5.5 # the history records every 5 s: then the strips and the transitions have the change

# --- the DOM Chromium renders ---------------------------------------------------------------------
browser --dump-dom "$URL/" > "$WORK/dom.html"
"$PY" - "$WORK/dom.html" > "$WORK/dom.txt" 2>&1 <<'PY'
import sys, html5lib
tree = html5lib.parse(open(sys.argv[1], "rb").read(), namespaceHTMLElements=False)
def text(node): return " ".join("".join(node.itertext()).split())
for article in tree.iter("article"):
    name = article.get("id")
    print(name, "heading:", text(article.find("h3")))
    for row in article.iter("tr"):
        cells = [text(cell) for cell in row if cell.tag == "td"]
        if cells: print(name, "row:", " | ".join(cells))
    for paragraph in article.iter("p"):
        print(name, paragraph.get("class"), text(paragraph))
for section in tree.iter("section"):
    print("section", section.get("id"), text(section.find("h2")), len(list(section.iter("tr"))))
PY
dom=$(cat "$WORK/dom.txt")
expect_dom() { # DESCRIPTION, PATTERN
    if grep -qE -- "$2" <<<"$dom"; then ok "$1"; else not_ok "$1" "$dom"; fi
}
expect_dom "the browser shows both applications" '^app-orders heading' && expect_dom "…billing too" '^app-billing heading'
expect_dom "billing is up, degraded" '^app-billing heading: billing up, degraded'
expect_dom "billing's degraded check, with its reason" '^app-billing row: payments \| degraded \| payment provider answers in 2.4 s \|'
expect_dom "billing's version and uptime" '^app-billing meta version 1\.4\.0 · up [0-9]+ (s|min)'
expect_dom "billing's slowest dependencies, with p50, p99 and resolves per second" '^app-billing row: [A-Za-z() ]+ \| [0-9.]+ [nµm]?s \| [0-9.]+ [nµm]?s \| [0-9.–]+ \| [0-9]+ \| [0-9]+$'
expect_dom "the killed application is down" '^app-orders heading: orders down'
expect_dom "with the reason it is down" '^app-orders reason .*(refused|reset|No such file|not found)'
expect_dom "its checks fail with it" '^app-orders row: Database \| unhealthy \| orders is down'
expect_dom "the daemon's own checks in their own section" '^section own The daemon.s own checks 2$'
expect_dom "the transitions list orders going down" '^section transitions Recent transitions [0-9]+$'
if grep -q 'healthy → unhealthy' <<<"$(browser --dump-dom "$URL/" | "$PY" -c 'import sys,html5lib; t=html5lib.parse(sys.stdin.read(), namespaceHTMLElements=False); print(" ".join("".join(t.find(".//section[@id=\"transitions\"]").itertext()).split()))')"; then
    ok "a transition of orders: healthy → unhealthy"
else not_ok "a transition of orders" "$(curl -s "$URL/" | grep -A3 transitions)"; fi

# --- what a person sees: screenshots of one application each ----------------------------------------
# The unhealthy strip's red (#d22) is on the killed application's view and nowhere on billing's;
# billing's degraded strip (#e90) is on its view and not on orders'.
browser --window-size=1000,1200 --screenshot="$WORK/orders.png" "$URL/?app=orders" > /dev/null
browser --window-size=1000,1200 --screenshot="$WORK/billing.png" "$URL/?app=billing" > /dev/null
read -r _ orders_red _ orders_amber < <("$PY" "$HERE/png_colors.py" "$WORK/orders.png" dd2222 ee9900 | tr '\n' ' ')
read -r _ billing_red _ billing_amber < <("$PY" "$HERE/png_colors.py" "$WORK/billing.png" dd2222 ee9900 | tr '\n' ' ')
if [ "${orders_red:-0}" -gt 20 ] && [ "${orders_amber:-1}" -eq 0 ] && [ "${billing_red:-1}" -eq 0 ] && [ "${billing_amber:-0}" -gt 20 ]; then
    ok "screenshots: orders' view has the down red ($orders_red px) and no amber; billing's the degraded amber ($billing_amber px) and no red"
else not_ok "screenshots" "orders red $orders_red amber $orders_amber; billing red $billing_red amber $billing_amber"; fi

# --- valid HTML, no external asset, no script ----------------------------------------------------------
curl -s "$URL/" -o "$WORK/page.html"
out=$("$PY" -c 'import sys, html5lib; p = html5lib.HTMLParser(strict=True); p.parse(open(sys.argv[1], "rb").read()); print(p.errors)' "$WORK/page.html" 2>&1)
if [ "$out" = "[]" ]; then ok "html5lib's strict parser accepts the page ($(wc -c < "$WORK/page.html") bytes)"; else not_ok "html5lib strict" "$out"; fi
if ! grep -qiE '<script|<link|src=|@import|url\(' "$WORK/page.html"; then ok "no script and no external asset"; else not_ok "inline only" "$(grep -oiE '<script|<link|src=|@import|url\(' "$WORK/page.html" | head -3)"; fi
filtered=$(curl -s "$URL/?app=billing")
if grep -q 'id="app-billing"' <<<"$filtered" && ! grep -q 'id="app-orders"' <<<"$filtered" && grep -q 'id="own"' <<<"$filtered"; then
    ok "?app=billing shows billing and the daemon's own checks, not orders"
else not_ok "the filter" "$(grep -o 'id="[a-z-]*"' <<<"$filtered" | tr '\n' ' ')"; fi

# --- details: when-authorized, as /health ----------------------------------------------------------
write_config when-authorized
kill -HUP "$DAEMON"
for _ in $(seq 50); do grep -q "Reasons are not shown" <(curl -s "$URL/") && break; sleep 0.1; done
anonymous=$(curl -s "$URL/")
authorized=$(curl -s -H "Authorization: Bearer s3cret-token" "$URL/")
if ! grep -qE 'payment provider answers|orders is down|refused' <<<"$anonymous" && grep -q 'Reasons are not shown' <<<"$anonymous"; then
    ok "details: when-authorized: no reasons without the token"
else not_ok "no reasons without the token" "$(grep -oE 'payment provider answers|orders is down|refused' <<<"$anonymous" | head -3)"; fi
if grep -q 'payment provider answers in 2.4 s' <<<"$authorized" && grep -q 'orders is down' <<<"$authorized"; then
    ok "with the token, the reasons"
else not_ok "reasons with the token" "$(head -c 600 <<<"$authorized")"; fi
finish
