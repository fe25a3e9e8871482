#!/usr/bin/env python3
"""`make soak`: the mixed load at a steady rate, sampled every minute, and its verdict.

  soak.py run URL KEYS ADDRESSES SECRET PID DATABASE_URL MINUTES RATE CSV
      Sends RATE requests a second for MINUTES minutes (standard library only) over keep-alive
      connections: of every 21 requests, the 20 of scripts/bench-mixed.lua (8 /v1/agents/me,
      4 the spend policy, 3 intents pages, 3 inbox pages, 2 sends) and one inbound mail through
      the signed webhook (SECRET), to the inboxes of ADDRESSES. Each agent key of KEYS in turn.
      Every minute, one CSV row: the server's RSS and open file descriptors (process PID), the
      database's connections (pg_stat_activity), the requests answered, errors (neither 2xx nor
      429), 429s, p50 and p99. Latency counts from when a request was due, not from when it left,
      so a stalled server shows in p99 (no coordinated omission).
  soak.py report CSV PNG
      Draws the four series (needs matplotlib), prints the first and last minutes and the
      verdict; exits 1 if any series trends upward (see `rises`).
"""
import asyncio
import csv
import importlib.util
import itertools
import os
import sys
import time
import urllib.parse
from pathlib import Path

# The first minutes fill caches, the pool and the allocator's arenas: not judged.
WARMUP_MINUTES = 1
# Each judged series: (CSV column, label, relative tolerance, absolute tolerance). It trends upward
# when its rise over the judged minutes exceeds both tolerances (relative to its starting level).
SERIES = [
    ("rss_mib", "server RSS (MiB)", 0.10, 8.0),
    ("open_fds", "open file descriptors", 0.0, 5.0),
    ("db_connections", "database connections", 0.0, 2.0),
    ("p99_ms", "p99 latency (ms)", 0.50, 5.0),
]
COLUMNS = ["minute", "rss_mib", "open_fds", "db_connections", "requests", "errors", "rejected_429",
           "p50_ms", "p99_ms"]

MIX = [
    "/v1/agents/me", "/v1/wallet/policy", "/v1/agents/me", "/v1/wallet/intents?limit=20",
    "/v1/email/inbox?limit=20", "/v1/agents/me", "send", "/v1/wallet/policy", "/v1/agents/me",
    "/v1/wallet/intents?limit=20", "/v1/email/inbox?limit=20", "/v1/agents/me",
    "/v1/wallet/policy", "/v1/agents/me", "send", "/v1/wallet/intents?limit=20",
    "/v1/email/inbox?limit=20", "/v1/agents/me", "/v1/wallet/policy", "/v1/agents/me", "mail",
]
SEND_BODY = b'{"to": "0x000000000000000000000000000000000000dEaD", "amount_atomic": "1"}'


# --- The verdict (pure) ---------------------------------------------------------------------------
def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def rise(values):
    """The rise of a series over its span: its Theil-Sen slope (the median of the slopes between
    every pair of points, which one outlying minute cannot swing) times the span in minutes."""
    slopes = [(values[j] - values[i]) / (j - i)
              for i, j in itertools.combinations(range(len(values)), 2)]
    return median(slopes) * (len(values) - 1) if slopes else 0.0


def rises(values, relative, absolute, warmup=WARMUP_MINUTES):
    """Whether a per-minute series trends upward: after the warm-up minutes, its rise exceeds
    `absolute` and `relative` times its starting level (the median of its first three judged
    minutes). Fewer than three judged minutes judge nothing."""
    judged = values[warmup:]
    if len(judged) < 3:
        return False
    grown = rise(judged)
    return grown > absolute and grown > relative * median(judged[:3])


def verdicts(rows, warmup=WARMUP_MINUTES):
    """(label, first, last, rise, upward) for each judged series of the CSV rows."""
    out = []
    for column, label, relative, absolute in SERIES:
        values = [float(row[column]) for row in rows]
        judged = values[warmup:]
        out.append((label, values[0], values[-1], rise(judged) if len(judged) > 1 else 0.0,
                    rises(values, relative, absolute, warmup)))
    return out


# --- The load -------------------------------------------------------------------------------------
def load_bench_email():
    spec = importlib.util.spec_from_file_location(
        "bench_email", Path(__file__).with_name("bench-email.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Minute:
    def __init__(self):
        self.latencies, self.errors, self.rejected = [], 0, 0


def percentile(ordered, fraction):
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                return status
    await reader.readexactly(int(headers.get("content-length", "0")))
    return status


async def run(url, keys, addresses, secret, pid, database_url, minutes, rate, csv_path):
    target = urllib.parse.urlparse(url)
    signed = load_bench_email().signed_mail
    host = f"{target.hostname}:{target.port}"
    start = time.monotonic() + 1
    end = start + minutes * 60
    counter = itertools.count()
    buckets = [Minute() for _ in range(minutes)]
    stamp = int(time.time())

    def request(n):
        kind = MIX[n % len(MIX)]
        key = keys[n % len(keys)]
        if kind == "mail":
            webhook_id, timestamp, signature, body = signed(
                addresses[n % len(addresses)], secret, f"soak-{stamp}-{n}", int(time.time()))
            headers = (f"webhook-id: {webhook_id}\r\nwebhook-timestamp: {timestamp}\r\n"
                       f"webhook-signature: {signature}\r\nContent-Type: message/rfc822\r\n")
            return f"POST /webhooks/email/inbound HTTP/1.1\r\nHost: {host}\r\n{headers}" \
                   f"Content-Length: {len(body.encode())}\r\n\r\n".encode() + body.encode()
        auth = f"Authorization: Bearer {key}\r\n"
        if kind == "send":
            return (f"POST /v1/wallet/send HTTP/1.1\r\nHost: {host}\r\n{auth}"
                    f"Content-Type: application/json\r\nContent-Length: {len(SEND_BODY)}\r\n\r\n"
                    ).encode() + SEND_BODY
        return f"GET {kind} HTTP/1.1\r\nHost: {host}\r\n{auth}\r\n".encode()

    async def connection():
        reader = writer = None
        while True:
            n = next(counter)
            due = start + n / rate
            if due >= end:
                break
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(target.hostname, target.port)
                writer.write(request(n))
                status = await read_response(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                status = 0
                writer = None
            done = time.monotonic()
            bucket = buckets[min(minutes - 1, int((done - start) // 60))]
            bucket.latencies.append((done - due) * 1000)
            if status == 429:
                bucket.rejected += 1
            elif not 200 <= status < 300:
                bucket.errors += 1
        # Left open until the last sample: closing them first would show in its descriptors.
        return writer

    async def database_connections():
        database = urllib.parse.urlparse(database_url).path.lstrip("/")
        psql = await asyncio.create_subprocess_exec(
            "psql", "-qtA", database_url, "-c",
            f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{database}'",
            stdout=asyncio.subprocess.PIPE)
        out, _ = await psql.communicate()
        # Less psql's own connection.
        return int(out) - 1

    async def sampler(out):
        writer = csv.DictWriter(out, COLUMNS)
        writer.writeheader()
        for minute in range(minutes):
            await asyncio.sleep(max(0.0, start + (minute + 1) * 60 - time.monotonic()))
            rss = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status")
                       if line.startswith("VmRSS")) / 1024
            bucket = buckets[minute]
            ordered = sorted(bucket.latencies)
            row = {"minute": minute + 1, "rss_mib": f"{rss:.1f}",
                   "open_fds": len(os.listdir(f"/proc/{pid}/fd")),
                   "db_connections": await database_connections(),
                   "requests": len(ordered), "errors": bucket.errors,
                   "rejected_429": bucket.rejected,
                   "p50_ms": f"{percentile(ordered, 0.50):.2f}",
                   "p99_ms": f"{percentile(ordered, 0.99):.2f}"}
            writer.writerow(row)
            out.flush()
            print("soak: " + "  ".join(f"{k} {v}" for k, v in row.items()), file=sys.stderr)

    with open(csv_path, "w", newline="") as out:
        workers = [connection() for _ in range(int(os.environ.get("SOAK_CONNECTIONS", "16")))]
        _, *writers = await asyncio.gather(sampler(out), *workers)
        for writer in writers:
            if writer is not None:
                writer.close()


# --- The report -----------------------------------------------------------------------------------
def report(csv_path, png_path):
    with open(csv_path) as source:
        rows = list(csv.DictReader(source))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [int(row["minute"]) for row in rows]
    figure, axes = plt.subplots(len(SERIES), 1, figsize=(8, 9), sharex=True)
    judged = verdicts(rows)
    for axis, (column, label, _, _), (_, first, last, grown, up) in zip(axes, SERIES, judged):
        axis.plot(minutes, [float(row[column]) for row in rows], marker="o",
                  color="tab:red" if up else "tab:blue")
        axis.set_title(f"{label}: {first:g} -> {last:g}, rise {grown:+.2f} after the warm-up, "
                       f"{'UPWARD' if up else 'flat'}", fontsize=9)
        axis.set_ylabel(label.split(" (")[0], fontsize=8)
        axis.set_ylim(bottom=0)
        axis.axvspan(0.5, WARMUP_MINUTES + 0.5, color="0.9")
        axis.grid(True, alpha=0.3)
    axes[-1].set_xlabel("minute (grey: warm-up, not judged)")
    total = sum(int(row["requests"]) for row in rows)
    errors = sum(int(row["errors"]) for row in rows)
    figure.suptitle(f"agent-runtime soak: {len(rows)} min, {total} requests, {errors} errors")
    figure.tight_layout()
    figure.savefig(png_path, dpi=100)

    print(f"{'series':<24}{'minute 1':>12}{'minute ' + str(len(rows)):>12}{'rise':>10}  trend")
    upward = False
    for label, first, last, grown, up in judged:
        upward |= up
        print(f"{label:<24}{first:>12.2f}{last:>12.2f}{grown:>+10.2f}  {'UPWARD' if up else 'flat'}")
    print(f"requests {total}, errors {errors}, 429s {sum(int(row['rejected_429']) for row in rows)}")
    failed = upward or errors > 0
    print(f"soak: {'FAILED' if failed else 'passed'}" + (
        " (a series trends upward)" if upward else "") + (f" ({errors} errors)" if errors else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    command, *args = sys.argv[1:] or [""]
    if command == "run":
        url, keys, addresses, secret, pid, database_url, minutes, rate, csv_path = args
        asyncio.run(run(url, Path(keys).read_text().split(), Path(addresses).read_text().split(),
                        secret, int(pid), database_url, int(minutes), float(rate), csv_path))
    elif command == "report":
        sys.exit(report(*args))
    else:
        sys.exit(__doc__)
