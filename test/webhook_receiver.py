#!/usr/bin/env python3
"""A webhook receiver for the notification tests, on loopback.

Listens on 127.0.0.1 (a free port, written to --port-file once it listens),
answers each POST and appends one line to --record: the status it answered,
the request's Content-Type and the body it received (a JSON object on one
line), separated by spaces. With
--fail-first N it answers the first N requests 500 (a receiver that is down
for a moment), then 200.
"""
import argparse
import http.server
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--fail-first", type=int, default=0)
    args = ap.parse_args()
    seen = {"n": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen["n"] += 1
            status = 500 if seen["n"] <= args.fail_first else 200
            try:
                line = json.dumps(json.loads(body), separators=(",", ":"))
            except ValueError:
                line = json.dumps({"unreadable": body.decode("utf-8", "replace")})
            with open(args.record, "a") as f:
                f.write(f"{status} {self.headers.get('Content-Type', '')} {line}\n")
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok\n" if status == 200 else b"down for a moment\n")

        def log_message(self, *a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
