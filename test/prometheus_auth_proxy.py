#!/usr/bin/env python3
"""A bearer-token proxy in front of Prometheus for the credential tests, on loopback.

Real clusters check Prometheus's bearer tokens in a proxy (kube-rbac-proxy,
OpenShift's oauth-proxy in front of Thanos querier); Prometheus itself checks
only basic auth. This one serves HTTPS on 127.0.0.1 (a free port, written to
--port-file once it listens) with --cert and --key. A request without
"Authorization: Bearer <the token in --token-file>" is answered 401 with the
Prometheus API's JSON error, before anything else is looked at. With the token,
GET and POST /api/v1/query go to --upstream (verified with --upstream-ca) and
its answer comes back as it is; any other path is 404. Each request appends one
line to --record: the status it answered and the path without the query string
(never the token).
"""
import argparse
import hmac
import http.server
import json
import os
import ssl
import urllib.error
import urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--upstream-ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    with open(args.token_file) as f:
        expected = ("Bearer " + f.read().strip()).encode()
    upstream_tls = ssl.create_default_context(cafile=args.upstream_ca)

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, status, content_type, body):
            path = self.path.split("?", 1)[0]
            with open(args.record, "a") as f:
                f.write(f"{status} {self.command} {path}\n")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if status == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            self.end_headers()
            self.wfile.write(body)

        def error(self, status, kind, message):
            body = json.dumps({"status": "error", "errorType": kind, "error": message}).encode()
            self.answer(status, "application/json", body)

        def forward(self):
            body = None
            if self.command == "POST":
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            given = self.headers.get("Authorization")
            if given is None or not given.startswith("Bearer "):
                self.error(401, "unauthorized", "no bearer token (Authorization: Bearer)")
                return
            if not hmac.compare_digest(given.encode(), expected):
                self.error(401, "unauthorized", "the bearer token is not the one this proxy accepts")
                return
            if self.path.split("?", 1)[0] != "/api/v1/query":
                self.error(404, "not_found", "this proxy forwards only /api/v1/query")
                return
            req = urllib.request.Request(args.upstream + self.path, data=body, method=self.command)
            if body is not None:
                req.add_header("Content-Type", self.headers.get("Content-Type", "application/x-www-form-urlencoded"))
            try:
                with urllib.request.urlopen(req, context=upstream_tls, timeout=10) as resp:
                    self.answer(resp.status, resp.headers.get("Content-Type", ""), resp.read())
            except urllib.error.HTTPError as e:
                self.answer(e.code, e.headers.get("Content-Type", ""), e.read())
            except OSError as e:
                self.error(502, "unavailable", f"Prometheus did not answer: {e}")

        do_GET = forward
        do_POST = forward

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
