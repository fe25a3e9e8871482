"""Follows an agent's event stream with PyPI's httpx-sse, a client that does not share the
server's code, the way an agent would: it reconnects by itself after the `retry:` delay the server
last sent, with `Last-Event-ID` of the last event it got, until it has seen COUNT events or the
deadline passes.

Prints one JSON line per thing that happens, flushed, for the black-box tests to read (each
with "at", the unix time it happened):
  {"kind": "connected", "attempt": n, "last_event_id": "20" | null, "status": 200}
  {"kind": "connect_failed", "attempt": n, "error": "..."}
  {"kind": "first", "attempt": n, "retry": 3000, "id": "", "event": "...", "data": ""}
      (the first message the server sent on that connection)
  {"kind": "event", "attempt": n, "id": "21", "event": "sms.received", "data": {...}}
  {"kind": "disconnected", "attempt": n, "reason": "..."}
  {"kind": "done", "seen": COUNT} or {"kind": "deadline", "seen": n}

Usage: python event_follower.py --url http://127.0.0.1:8080 --key KEY --count 60 --deadline 120
"""

import argparse
import json
import sys
import time

import httpx
from httpx_sse import SSEError, connect_sse

# What an SSE client waits before reconnecting until the server says otherwise.
DEFAULT_RETRY_MS = 3000


def say(**fields):
    print(json.dumps({**fields, "at": time.time()}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the server's base URL")
    parser.add_argument("--key", required=True, help="the agent key")
    parser.add_argument("--count", type=int, required=True, help="stop after this many events")
    parser.add_argument("--deadline", type=float, default=120.0, help="give up after (seconds)")
    arguments = parser.parse_args()

    deadline = time.monotonic() + arguments.deadline
    retry_ms = DEFAULT_RETRY_MS
    last_event_id = None
    seen = 0
    attempt = 0
    # Longer than the server's keep-alive comments, so a silent connection is a dead one.
    timeout = httpx.Timeout(5.0, read=30.0)
    with httpx.Client(timeout=timeout) as client:
        while seen < arguments.count and time.monotonic() < deadline:
            attempt += 1
            headers = {"Authorization": f"Bearer {arguments.key}"}
            if last_event_id is not None:
                headers["Last-Event-ID"] = last_event_id
            try:
                with connect_sse(
                    client, "GET", f"{arguments.url}/v1/events/stream", headers=headers
                ) as source:
                    status = source.response.status_code
                    say(kind="connected", attempt=attempt, last_event_id=last_event_id,
                        status=status)
                    if status == 401:
                        sys.exit("the agent key was refused")
                    if status != 200:
                        source.response.read()
                        raise SSEError(f"status {status}: {source.response.text}")
                    first = True
                    for message in source.iter_sse():
                        if message.retry is not None:
                            retry_ms = message.retry
                        if first:
                            say(kind="first", attempt=attempt, retry=message.retry,
                                id=message.id, event=message.event, data=message.data)
                            first = False
                        if not message.data:
                            continue
                        last_event_id = message.id
                        say(kind="event", attempt=attempt, id=message.id, event=message.event,
                            data=json.loads(message.data))
                        if message.event != "reset":
                            seen += 1
                        if seen >= arguments.count:
                            break
                    else:
                        say(kind="disconnected", attempt=attempt, reason="the stream ended")
            except (httpx.HTTPError, SSEError, OSError) as error:
                if attempt_connected(error):
                    say(kind="disconnected", attempt=attempt, reason=repr(error))
                else:
                    say(kind="connect_failed", attempt=attempt, error=repr(error))
            if seen < arguments.count:
                time.sleep(min(retry_ms / 1000, max(0.0, deadline - time.monotonic())))
    if seen >= arguments.count:
        say(kind="done", seen=seen)
    else:
        say(kind="deadline", seen=seen)
        sys.exit(1)


def attempt_connected(error):
    """Whether the error cut a stream that had started, rather than preventing one."""
    return not isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, SSEError))


if __name__ == "__main__":
    main()
