#!/usr/bin/env python3
"""An npm registry on 127.0.0.1 that never finishes a download: every GET answers 200 with a large Content-Length,
sends the first 64 KiB of it and then nothing more. A `data fetch` against it stays in its "downloading" stage
(its staging folder holding a partial package.tgz) until it is interrupted, which is what tests/cli_checks.sh's
data_fetch_interrupt check needs. Writes the port it listens on to PORT_FILE once it listens; runs until killed.

    python3 stalling_registry.py PORT_FILE"""
import http.server
import os
import sys
import time

STALL_SECONDS = 600  # longer than any check runs; the check kills this server


class Stalling(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(64 << 20))
        self.end_headers()
        self.wfile.write(b"\0" * (64 << 10))
        self.wfile.flush()
        time.sleep(STALL_SECONDS)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
server.daemon_threads = True
port_file = sys.argv[1]
with open(port_file + ".new", "w") as out:
    out.write(str(server.server_address[1]))
os.rename(port_file + ".new", port_file)  # the whole number or none
server.serve_forever()
