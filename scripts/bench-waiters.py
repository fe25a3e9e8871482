#!/usr/bin/env python3
"""`make bench`: thousands of waits for a code on one server instance (standard library only).

  METRICS_TOKEN=... bench-waiters.py BASE_URL DATABASE_URL SERVER_PID TWILIO_TOKEN PUBLIC_BASE_URL WAITERS AGENTS

Seeds AGENTS agents with numbers straight into the database, opens WAITERS waits
(`POST /v1/sms/wait-for-code`, each on its own connection), and once all of them wait prints the
server's RSS and the database connections in use; then delivers one SMS per wait through the
signed Twilio webhook and prints the wake latency, from the webhook's answer to the wait's.
"""
import asyncio
import base64
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.parse

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def agent_key():
    return "ark_" + "".join(secrets.choice(ALPHABET) for _ in range(43))


def psql(database_url, sql):
    return subprocess.run(
        ["psql", "-qtA", database_url, "-v", "ON_ERROR_STOP=1"],
        input=sql, capture_output=True, text=True, check=True,
    ).stdout


def seed(database_url, agents):
    """AGENTS agents with numbers, one SQL statement; returns [(key, number)]."""
    rows = []
    base = 15559000000 + secrets.randbelow(900) * 1000
    for n in range(agents):
        key = agent_key()
        rows.append((key, f"+{base + n}", hashlib.sha256(key.encode()).hexdigest()))
    values = ",".join(f"('{digest}', '{number}')" for _, number, digest in rows)
    psql(database_url, f"""
        INSERT INTO sponsors (id, name) VALUES (gen_random_uuid(), 'bench-waiters')
            ON CONFLICT (name) DO NOTHING;
        WITH seeded (digest, number) AS (VALUES {values}),
        made AS (
            INSERT INTO agents (id, sponsor_id, label, key_hash)
            SELECT gen_random_uuid(), (SELECT id FROM sponsors WHERE name = 'bench-waiters'),
                   'bench-waiter', decode(digest, 'hex')
            FROM seeded RETURNING id, key_hash)
        INSERT INTO phone_numbers (id, agent_id, number, country_iso2, provider)
        SELECT gen_random_uuid(), made.id, seeded.number, 'US', 'twilio'
        FROM made JOIN seeded ON made.key_hash = decode(seeded.digest, 'hex');
    """)
    return [(key, number) for key, number, _ in rows]


async def request(host, port, method, path, headers, body=b""):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head += f"Content-Length: {len(body)}\r\n\r\n"
        writer.write(head.encode() + body)
        await writer.drain()
        response = await reader.read()
    finally:
        writer.close()
    status = int(response.split(b" ", 2)[1])
    return status, response.split(b"\r\n\r\n", 1)[1]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def main(base_url, database_url, server_pid, token, public_base, waiters, agents):
    url = urllib.parse.urlparse(base_url)
    host, port = url.hostname, url.port
    print(f"bench: seeding {agents} agents with numbers", file=sys.stderr)
    seeded = seed(database_url, agents)
    woken_at = {}

    async def wait(key, n):
        body = json.dumps({"timeout": 300, "request_id": f"bench-{n}"}).encode()
        status, answer = await request(host, port, "POST", "/v1/sms/wait-for-code", {
            "Authorization": f"Bearer {key}", "Content-Type": "application/json"}, body)
        if status == 200:
            woken_at[json.loads(answer)["code"]] = time.monotonic()
        return status

    # The server has a real provider's settings, so /metrics wants the token it was given.
    metrics_auth = {"Authorization": f"Bearer {os.environ['METRICS_TOKEN']}"}
    print(f"bench: opening {waiters} waits", file=sys.stderr)
    tasks = [asyncio.create_task(wait(seeded[n % agents][0], n)) for n in range(waiters)]
    line = f'http_requests_in_flight{{route="/v1/sms/wait-for-code"}} {waiters}'
    deadline = time.monotonic() + 120
    while True:
        _, metrics = await request(host, port, "GET", "/metrics", metrics_auth)
        if line in metrics.decode():
            break
        if time.monotonic() > deadline:
            sys.exit("bench-waiters: the waits never all arrived")
        await asyncio.sleep(0.2)
    # Every wait is in; wait until their first looks are done too and they only wait.
    while True:
        _, metrics = await request(host, port, "GET", "/metrics", metrics_auth)
        in_use = next((l.split()[-1] for l in metrics.decode().splitlines()
                       if l.startswith('db_pool_connections{state="in_use"}')), "?")
        if in_use == "0" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    with open(f"/proc/{server_pid}/status") as status:
        rss_kib = next(int(l.split()[1]) for l in status if l.startswith("VmRSS"))
    busy = psql(database_url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND state <> 'idle' AND pid <> pg_backend_pid()").strip()
    print(f"{waiters} waits on one instance: server RSS {rss_kib // 1024} MiB, pool connections in use "
          f"{in_use}, database connections not idle {busy} (the LISTEN connection idles)")

    delivered_at = {}
    webhook = f"{public_base}/webhooks/sms/twilio"

    async def deliver(n):
        number = seeded[n % agents][1]
        code = str(10_000_000 + n)
        params = [("MessageSid", f"SM{n:016x}{secrets.token_hex(8)}"), ("From", "+15550000001"),
                  ("To", number), ("Body", f"Your verification code is {code}")]
        signed = webhook + "".join(name + value for name, value in sorted(params))
        signature = base64.b64encode(hmac.new(token.encode(), signed.encode(), hashlib.sha1).digest())
        status, _ = await request(host, port, "POST", "/webhooks/sms/twilio", {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Twilio-Signature": signature.decode()}, urllib.parse.urlencode(params).encode())
        delivered_at[code] = time.monotonic()
        return status

    print(f"bench: delivering {waiters} SMS through the webhook", file=sys.stderr)
    # A few deliveries at a time: the figure is how fast a wait wakes, not how fast the webhook
    # drains a backlog.
    window = asyncio.Semaphore(4)

    async def paced(n):
        async with window:
            return await deliver(n)

    statuses = await asyncio.gather(*(paced(n) for n in range(waiters)))
    results = await asyncio.gather(*tasks)
    latencies = [(woken_at[code] - delivered_at[code]) * 1000 for code in woken_at if code in delivered_at]
    print(f"webhooks answered 200: {statuses.count(200)} of {waiters}; waits answered 200: "
          f"{results.count(200)} of {waiters}")
    if latencies:
        print(f"wake latency, webhook answer to wait answer: p50 {percentile(latencies, 0.5):.1f} ms, "
              f"p99 {percentile(latencies, 0.99):.1f} ms")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if len(arguments) != 7:
        sys.exit(__doc__)
    asyncio.run(main(arguments[0], arguments[1], int(arguments[2]), arguments[3], arguments[4],
                     int(arguments[5]), int(arguments[6])))
