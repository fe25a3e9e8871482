#!/usr/bin/env python3
"""Helpers of `make bench` for email (standard library only).

  bench-email.py webhooks ADDRESS SECRET COUNT FILE
      COUNT distinct inbound mails to ADDRESS, signed per Standard Webhooks with SECRET, one
      request a line for scripts/bench-webhook.lua: id, timestamp, signature, body (CRLF as \\r\\n).
  bench-email.py walk BASE_URL KEY PATH PAGES LIMIT
      Follows next_cursor of the listing at PATH (the inbox, or the wallet's intents) through
      PAGES pages of LIMIT items and prints the last page's cursor.
"""
import base64
import hashlib
import hmac
import http.client
import json
import sys
import time
import urllib.parse


def signed_mail(address, secret, tag, now):
    """One inbound mail to ADDRESS, tagged TAG (unique per mail), signed per Standard Webhooks
    with SECRET at NOW: (webhook id, timestamp, signature header, body)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    n = sum(tag.encode())
    body = (
        f"From: Sender <sender@bench.example>\r\nTo: {address}\r\n"
        f"Subject: Your code {tag}\r\nMessage-ID: <{tag}@bench.example>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        f"Your verification code is {100000 + n % 900000}.\r\n"
    )
    webhook_id = f"msg_{tag}"
    signed = f"{webhook_id}.{now}.{body}".encode()
    signature = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return webhook_id, now, f"v1,{signature}", body


def webhooks(address, secret, count, path):
    now = int(time.time())
    with open(path, "w") as out:
        for n in range(count):
            webhook_id, _, signature, body = signed_mail(address, secret, f"bench-{now}-{n}", now)
            escaped = body.replace("\r\n", "\\r\\n")
            out.write(f"{webhook_id}\t{now}\t{signature}\t{escaped}\n")


def walk(base_url, key, listing, pages, limit):
    url = urllib.parse.urlparse(base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port)
    cursor = None
    for _ in range(pages - 1):
        path = f"{listing}?limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        connection.request("GET", path, headers={"Authorization": f"Bearer {key}"})
        page = json.loads(connection.getresponse().read())
        cursor = page["next_cursor"]
        if cursor is None:
            sys.exit(f"bench-email: {listing} ended before page {pages}")
    print(cursor)


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "webhooks":
        webhooks(args[0], args[1], int(args[2]), args[3])
    elif command == "walk":
        walk(args[0], args[1], args[2], int(args[3]), int(args[4]))
    else:
        sys.exit(__doc__)
