"""A webhook receiver that checks every request with PyPI's standardwebhooks, the reference
implementation of Standard Webhooks, which shares no code with the server.

Listens on 127.0.0.1 (a free port unless --port) and prints one JSON line per thing, flushed:
  {"kind": "listening", "port": 54321}
  {"kind": "request", "n": 1, "webhook_id": "evt_...", "webhook_timestamp": "...",
   "verified": true, "error": null, "status": 500, "received_at": 1764093600.123, "body": {...}}
Request n (from 1) is answered with the n-th status of --answers, 200 beyond them.

The secret is --secret, or else the first line of standard input: a test starts the receiver,
learns its port, creates the endpoint and then hands it the secret the server showed. Requests
that come before it wait for it.

Usage: python webhook_receiver.py [--port 0] [--secret whsec_...] [--answers 500,200]
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook

secret_known = threading.Event()
webhook = None
answers = []
counting = threading.Lock()
requests_seen = 0


def say(**fields):
    print(json.dumps(fields), flush=True)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the name http.server calls)
        global requests_seen
        received_at = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        secret_known.wait()
        try:
            webhook.verify(body, headers)
            verified, error = True, None
        except Exception as failure:  # noqa: BLE001 (any refusal is reported as such)
            verified, error = False, repr(failure)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        with counting:
            requests_seen += 1
            n = requests_seen
            status = answers[n - 1] if n <= len(answers) else 200
            say(kind="request", n=n, method=self.command, path=self.path,
                webhook_id=headers.get("webhook-id"),
                webhook_timestamp=headers.get("webhook-timestamp"),
                content_type=headers.get("content-type"), verified=verified, error=error,
                status=status, received_at=received_at, body=parsed)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        pass


def main():
    global webhook, answers
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--secret", help="whsec_...; read from the first line of stdin if absent")
    parser.add_argument("--answers", default="", help="statuses of requests 1, 2, ...: 500,200")
    arguments = parser.parse_args()
    answers = [int(status) for status in arguments.answers.split(",") if status]

    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Receiver)
    server.daemon_threads = True
    say(kind="listening", port=server.server_address[1])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = arguments.secret or sys.stdin.readline().strip()
    if not secret:
        sys.exit("no secret: pass --secret or write it as the first line of stdin")
    webhook = Webhook(secret)
    secret_known.set()
    if arguments.secret:
        threading.Event().wait()
    else:
        # Ends when the test closes standard input (or exits).
        sys.stdin.read()


if __name__ == "__main__":
    main()
