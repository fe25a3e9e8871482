#!/usr/bin/env python3
"""`make bench`: thousands of idle half-open connections (standard library only).

  bench-half-open.py BASE_URL SERVER_PID CONNECTIONS

Opens CONNECTIONS connections to the server, each sending one byte that could begin a request
(`P`) and nothing more, as a slow or hostile client does. Prints one line: how many the server
closed and how long after they opened the slowest was closed (its request-head deadline is 5 s),
the server's CPU while they were open, how long a health check took meanwhile, and the server's
CPU once they were gone.
"""
import asyncio
import os
import sys
import time
import urllib.parse

# A connection the server has not closed this long after it opened counts as left open.
LEFT_OPEN_AFTER = 30.0


def cpu_seconds(pid):
    """User and system CPU seconds of the process so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def held(host, port):
    """Opens a connection, sends one byte, and waits for the server to close it: (opened, closed)."""
    reader, writer = await asyncio.open_connection(host, port)
    opened = time.monotonic()
    writer.write(b"P")
    await writer.drain()
    try:
        await asyncio.wait_for(reader.read(), LEFT_OPEN_AFTER)
        closed = time.monotonic()
    except asyncio.TimeoutError:
        closed = None
    except (ConnectionError, OSError):
        closed = time.monotonic()
    writer.close()
    return opened, closed


async def health_check_ms(host, port):
    started = time.monotonic()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:80]
    return (time.monotonic() - started) * 1000


async def main(base_url, pid, count):
    url = urllib.parse.urlparse(base_url)
    host, port = url.hostname, url.port
    cpu_before, started = cpu_seconds(pid), time.monotonic()
    tasks = []
    for _ in range(count):
        tasks.append(asyncio.create_task(held(host, port)))
        # Let each connect before the next, as clients arriving one after another do.
        await asyncio.sleep(0)
    await asyncio.sleep(1)
    health_ms = await health_check_ms(host, port)
    results = await asyncio.gather(*tasks)
    cpu_open, all_closed = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(3)
    cpu_after = cpu_seconds(pid)
    closed = [closed - opened for opened, closed in results if closed is not None]
    open_share = 100 * (cpu_open - cpu_before) / (all_closed - started)
    after_share = 100 * (cpu_after - cpu_open) / 3
    print(f"half-open: {count} connections, closed by the server {len(closed)}, "
          f"slowest closed after {max(closed, default=0):.1f} s, "
          f"server CPU while open {open_share:.1f} %, health check meanwhile {health_ms:.1f} ms, "
          f"server CPU after {after_share:.1f} %")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
