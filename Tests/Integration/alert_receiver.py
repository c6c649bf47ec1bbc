"""A webhook receiver for Alertmanager: appends one JSON line per alert of each notification to
OUT, with the time it arrived, the URL path (which receiver of the routing sent it), the alert's
status (firing or resolved) and its labels.
Usage: alert_receiver.py HOST PORT OUT"""
import http.server
import json
import sys
import time

host, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        arrived = time.time()
        notification = json.loads(body)
        with open(out, "a") as lines:
            for alert in notification["alerts"]:
                lines.write(json.dumps({"received": arrived, "path": self.path, "status": alert["status"],
                                        "labels": alert["labels"]}) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer((host, port), Receiver).serve_forever()
