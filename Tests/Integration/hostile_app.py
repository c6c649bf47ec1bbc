"""Hostile applications and a hit recorder for Tests/Integration/status_hostile.sh, one subcommand each.
Every address is loopback; the applications listen on Unix sockets in the daemon's apps directory.

    record PORTFILE LOG          a loopback HTTP server on a free port (written to PORTFILE) that
                                 appends every request it gets to LOG: an injected element that runs
                                 or loads anything asks it
    serve DIR PORT FLIPFILE      two applications: DIR/hostile.sock (up; every string it sends is a
                                 payload, its checks pass until FLIPFILE exists, then fail and warn
                                 with hostile reasons) and DIR/hostile-down.sock (its /health names
                                 a component without a status: down, with the hostile name in its
                                 reason; its /dependencies has hostile dependency and startup run
                                 names); prints 'serving' once both listen
    inspect DOMFILE PORT [KIND]  reads a DOM Chromium dumped; prints one line per finding,
                                 'PASS<TAB>what' or 'FAIL<TAB>what<TAB>detail'. KIND 'page' (the
                                 default) also checks that the hostile text is shown as text;
                                 'reflected' only checks that nothing was injected
    reflected PORT               the payload for /?app= (percent-encoded)

The payloads get past an escaper that works on grapheme clusters (Swift `Character`s): a prepended
concatenation mark (U+0600, U+06DD, U+110BD, U+0D4E) before `<` or `>` makes one cluster that is not
"<" or ">", so the bracket is written as it is; a combining mark after a quote does the same for the
quote. A U+0600 that ends up inside the injected JavaScript sits in a `//` comment, one inside a
tag name or end tag in an attribute of its own (`</td x\u0600>`); each payload closes what it opens
(an unclosed <iframe> or </td would swallow the rest of the page as text, and hide the payloads after it). Every payload
asks the recorder (http://127.0.0.1:PORT/hit/<which>) when it runs or loads, and says "onerror" or
"onload", so the same string, escaped, is visible text.
"""
import asyncio
import html5lib
import http.server
import json
import os
import sys
import unicodedata
import urllib.parse

import fake_apps

PREPEND = ["\u0600", "\u06dd", "\U000110bd", "\u0d4e"]
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def payloads(port):
    """The hostile strings, by where they go, for the recorder at 127.0.0.1:PORT."""
    hit = f"http://127.0.0.1:{port}/hit"
    p0, p1, p2, p3 = PREPEND
    return {
        # Component names: printable (the daemon refuses a name with control characters), at most 256 bytes.
        "names": [
            f"{p0}<img src=x onerror=fetch(`{hit}/name-img`)//{p0}>",
            f"{p1}<svg onload=fetch(`{hit}/name-svg`)//{p1}>{p1}</svg x{p1}>",
            f"\"\u0301 onmouseover=fetch(`{hit}/name-quote`) x=\"\u0301",
            f"\u202e<svg onload=fetch(`{hit}/name-bidi`)>",
            f"{p0}</td x{p0}>{p0}<script x=y{p0}>fetch(`{hit}/name-script`)//{p0}</script x{p0}>",
        ],
        # Reasons (`output`), one a component; the last carries control characters.
        "reasons": [
            f"{p0}<img src={hit}/reason-img-src onerror=fetch(`{hit}/reason-img-onerror`)//{p0}>",
            f"{p2}<svg onload=fetch(`{hit}/reason-svg`)//{p2}>{p2}</svg x{p2}>",
            f"{p0}</td x{p0}>{p0}<script x=y{p0}>fetch(`{hit}/reason-script`)//{p0}</script x{p0}>",
            f"{p3}<iframe src={hit}/reason-iframe{p3}>{p3}</iframe x{p3}>",
            f"'\u0301 onfocus=fetch(`{hit}/reason-quote`) autofocus x='\u0301 \u202e<img src=x onerror=fetch(`{hit}/reason-bidi`)>",
            f"{p0}<link rel=stylesheet href={hit}/reason-link{p0}>",
        ],
        "control": f"controls{p0}<img src=x onerror=fetch(`{hit}/reason-control`)//{p0}>\u0000\u0007\u0008\u001b[2J\u001b[31m\r\u0085\u2028\u2029\u202e end",
        "aggregate": f"{p0}<img src=x onerror=fetch(`{hit}/aggregate`)//{p0}>",
        "version": f"1.0{p0}<img src=x onerror=fetch(`{hit}/version`)//{p0}>",
        "dependencies": [
            f"{p1}<svg onload=fetch(`{hit}/dependency-svg`)//{p1}>{p1}</svg x{p1}>",
            f"{p2}<img src={hit}/dependency-img-src{p2}> (Repository)",
        ],
        # Its startup tree's runs (the status page's waterfall), the second nested in the first.
        "startup": [
            f"{p3}<iframe src={hit}/startup-iframe{p3}>{p3}</iframe x{p3}>",
            f"\u202e{p0}<img src=x onerror=fetch(`{hit}/startup-img`)//{p0}>\u001b[2J (Loader)",
        ],
        # A component of hostile-down without a status: its name comes back in the reason it is down.
        "down": f"{p0}<img src=x onerror=fetch(`{hit}/down-reason`)//{p0}>",
        # /?app= is echoed on the page ("No application named …").
        "reflected": f"{p0}<img src=x onerror=fetch(`{hit}/reflected`)//{p0}>",
    }


# --- record ---------------------------------------------------------------------------------------

def record(portfile, log):
    class Recorder(http.server.BaseHTTPRequestHandler):
        def answer(self):
            with open(log, "a") as out:
                out.write(f"{self.command} {self.path}\n")
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()

        do_GET = do_POST = do_HEAD = do_OPTIONS = answer

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    open(log, "a").close()
    with open(portfile + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    server.serve_forever()


# --- serve ----------------------------------------------------------------------------------------

def serve(directory, port, flipfile):
    strings = payloads(port)
    metrics = b"# TYPE hostile_up gauge\n# HELP hostile_up Whether it is up.\nhostile_up 1\n# EOF\n"

    def health_hostile():
        failing = os.path.exists(flipfile)
        checks = {}
        for index, name in enumerate(strings["names"]):
            entry = {"status": "pass", "componentType": "component"}
            if failing:
                entry = {"status": "fail" if index % 2 == 0 else "warn", "output": strings["reasons"][index % len(strings["reasons"])]}
            checks[f"{name}:status"] = [entry]
        for index, reason in enumerate(strings["reasons"] + [strings["control"]]):
            checks[f"reason-{index}:status"] = [{"status": "fail" if failing else "pass"} | ({"output": reason} if failing else {})]
        document = {"status": "fail" if failing else "pass", "checks": checks}
        if failing:
            document["output"] = strings["aggregate"]
        return 503 if failing else 200, json.dumps(document, ensure_ascii=False).encode()

    def health_down():
        return 503, json.dumps({"status": "fail", "checks": {
            "database:status": [{"status": "fail", "output": "x"}],
            f"{strings['down']}:status": [{"output": "no status"}],
        }}, ensure_ascii=False).encode()

    def dependencies():
        return 200, json.dumps({"version": strings["version"], "startedAt": 1795669741.64, "dependencies": [
            {"name": name, "resolutions": 12 + index, "slow": 1, "errors": 0, "p50": 0.0251, "p99": 0.0262}
            for index, name in enumerate(strings["dependencies"])],
            "startup": {"endedAt": 1795669742.1, "omitted": 0, "runs": [
                {"name": strings["startup"][0], "parent": None, "start": 0, "total": 0.035, "self": 0.005},
                {"name": strings["startup"][1], "parent": strings["startup"][0], "start": 0.005, "total": 0.03, "self": 0.03}]},
        }, ensure_ascii=False).encode()

    def handler(health):
        def route(head):
            target = head.split(b"\r\n")[0].split(b" ")[1].decode("latin-1")
            path = target.split("?")[0]
            if path == "/health":
                code, body = health()
                return code, b"application/health+json", body
            if path == "/dependencies":
                code, body = dependencies()
                return code, b"application/json", body
            if path == "/metrics":
                return 200, fake_apps.OPENMETRICS, metrics
            return 404, b"text/plain", b"not found\n"
        return fake_apps.answerer(route)

    async def main():
        servers = [await asyncio.start_unix_server(handler(health_hostile), path=f"{directory}/hostile.sock"),
                   await asyncio.start_unix_server(handler(health_down), path=f"{directory}/hostile-down.sock")]
        print(f"serving {len(servers)}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# --- inspect --------------------------------------------------------------------------------------

# Elements that load, run or restyle something, or that the page has a known number of.
FORBIDDEN = {"img", "svg", "math", "script", "iframe", "frame", "frameset", "object", "embed", "link", "base",
             "video", "audio", "source", "picture", "input", "textarea", "template", "noscript", "applet", "portal"}
EXPECTED_COUNT = {"meta": 2, "style": 1, "form": 1, "title": 1}


def special(c):
    """A control, invisible formatting or line-separator character."""
    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")


def inspect(domfile, port, kind="page"):
    strings = payloads(port)
    tree = html5lib.parse(open(domfile, "rb").read(), namespaceHTMLElements=False)
    elements = list(tree.iter())

    def report(passed, what, detail=""):
        print("PASS\t" + what if passed else f"FAIL\t{what}\t{detail}")

    found = sorted({element.tag.split("}")[-1] for element in elements if isinstance(element.tag, str)} & FORBIDDEN)
    report(not found, "no injected <img>, <svg>, <script>, <iframe>, <link> or other loading element in the DOM",
           "found: " + " ".join(f"<{tag}>" for tag in found))
    counts = {tag: sum(1 for element in elements if element.tag == tag) for tag in EXPECTED_COUNT}
    extra = {tag: count for tag, count in counts.items() if count > EXPECTED_COUNT[tag]}
    report(not extra, "no extra <meta>, <style>, <form> or <title>", f"counts: {extra}")
    handlers = [f"<{element.tag} {name}={value!r}>"[:160] for element in elements if isinstance(element.tag, str)
                for name, value in element.attrib.items() if name.lower().startswith("on")]
    report(not handlers, "no element has an on* attribute", "; ".join(handlers[:5]))
    body = tree.find("body")
    text = "".join(body.itertext()) if body is not None else ""
    if kind != "page":
        return
    report("onerror" in text and "onload" in text, "the hostile text is visible as text (\"onerror\", \"onload\")",
           f"onerror: {'onerror' in text}, onload: {'onload' in text}")
    expected = (strings["names"] + strings["reasons"] + strings["dependencies"] + strings["startup"]
                + [strings["aggregate"], strings["version"], strings["down"]])
    # Control and invisible formatting characters may be shown in a visible form instead: each run between them is compared.
    def runs(value):
        return [run for run in "".join("\0" if special(c) else c for c in value).split("\0") if run]
    missing = [value for value in expected if not all(run in text for run in runs(value))]
    report(not missing, f"every hostile name and reason is shown as text, verbatim ({len(expected)} strings)",
           "missing: " + " | ".join(ascii(value)[:100] for value in missing[:4]))
    # A reference such as &#x202E; is the same character to the browser as the literal one: it still
    # reverses what follows it. Inert means not in the text at all (shown as a visible escape).
    bidi = sorted({f"U+{ord(c):04X}" for c in text if c in BIDI})
    report(not bidi, "no bidirectional control character reaches the DOM text (inert, not reordering what a person reads)",
           "found: " + " ".join(bidi))
    controls = sorted({f"U+{ord(c):04X}" for c in text if c not in "\t\n" and unicodedata.category(c) in ("Cc", "Zl", "Zp")})
    report(not controls, "no control character reaches the DOM text", "found: " + " ".join(controls))


def reflected(port):
    print(urllib.parse.quote(payloads(port)["reflected"], safe=""))


if __name__ == "__main__":
    commands = {"record": record, "serve": serve, "inspect": inspect, "reflected": reflected}
    commands[sys.argv[1]](*sys.argv[2:])
