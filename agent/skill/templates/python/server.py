"""Serve a skill's handler: GET /health, POST /execute.

handler.py defines handle(input) taking the decoded JSON input and
returning anything json.dumps accepts. An exception is a 500 whose body
is the traceback, which create_skill's caller sees as the tool error.
"""
import json
import os
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import handler  # the skill's code, beside this file

MAX_INPUT = 8 << 20


class Skill(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/health":
            return self.reply(404, "not found\n", "text/plain")
        self.reply(200, "ok\n", "text/plain")

    def do_POST(self):
        if self.path != "/execute":
            return self.reply(404, "not found\n", "text/plain")
        size = int(self.headers.get("Content-Length") or 0)
        if size > MAX_INPUT:
            return self.reply(413, "input too large\n", "text/plain")
        try:
            raw = self.rfile.read(size)
            out = handler.handle(json.loads(raw or b"null"))
            self.reply(200, json.dumps(out), "application/json")
        except Exception:
            self.reply(500, "handler failed:\n" + traceback.format_exc(), "text/plain")

    def reply(self, code, body, ctype):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    ThreadingHTTPServer(("", int(os.environ.get("PORT", "8080"))), Skill).serve_forever()
