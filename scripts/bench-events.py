#!/usr/bin/env python3
"""`make bench`: the events' figures on one server instance (standard library only).

  bench-events.py webhooks BASE_URL DATABASE_URL KEY AGENT_ID IDLE_EVENTS BURST_EVENTS
  bench-events.py streams BASE_URL DATABASE_URL KEY AGENT_ID SERVER_PID STREAMS

`webhooks`: a local receiver answers 204 to every delivery. First IDLE_EVENTS SMS, one at a
time, each once the last was delivered: the latency from the event's commit (its `timestamp`) to
its arrival. Then BURST_EVENTS SMS committed at once: deliveries per second from the first
arrival to the last, and how many arrived twice.
`streams`: STREAMS event streams of one agent open at once; the server's RSS; then one event,
and the latency from its commit to its arrival on each stream.
"""
import asyncio
import datetime
import json
import selectors
import socket
import subprocess
import sys
import time
import urllib.request


def psql(database_url, sql):
    return subprocess.run(["psql", "-qtA", database_url, "-v", "ON_ERROR_STOP=1"],
                          input=sql, capture_output=True, text=True, check=True).stdout


def sms_sql(agent_id, count, tag):
    """COUNT inbound SMS of the agent's number, committed together."""
    return f"""
        INSERT INTO sms_messages (id, agent_id, phone_number_id, direction, provider,
            provider_message_id, source, from_number, to_number, body)
        SELECT gen_random_uuid(), number.agent_id, number.id, 'inbound', 'sandbox',
            'SMbench-{tag}-' || n, 'webhook', '+15550001111', number.number, 'code 123456'
        FROM generate_series(1, {count}) AS n, phone_numbers AS number
        WHERE number.agent_id = '{agent_id}';"""


def committed_at(event):
    return datetime.datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


class Receiver:
    """A minimal HTTP/1.1 server: reads each request whole, answers 204, closes."""

    def __init__(self):
        self.arrivals = {}
        self.repeats = 0
        self.arrived = asyncio.Event()

    async def handle(self, reader, writer):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length)
            now = time.time()
            event = json.loads(body)
            if event["id"] in self.arrivals:
                self.repeats += 1
            else:
                self.arrivals[event["id"]] = (now, event)
            self.arrived.set()
            writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def post_json(url, key, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {key}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)


async def webhooks(base_url, database_url, key, agent_id, idle_events, burst_events):
    receiver = Receiver()
    server = await asyncio.start_server(receiver.handle, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    post_json(f"{base_url}/v1/webhooks", key, {"url": f"http://127.0.0.1:{port}/hook"})
    latencies = []
    for n in range(idle_events):
        receiver.arrived.clear()
        before = len(receiver.arrivals)
        await asyncio.to_thread(psql, database_url, sms_sql(agent_id, 1, f"idle{n}"))
        while len(receiver.arrivals) == before:
            await asyncio.wait_for(receiver.arrived.wait(), 30)
            receiver.arrived.clear()
        arrival, event = max(receiver.arrivals.values(), key=lambda pair: pair[0])
        latencies.append((arrival - committed_at(event)) * 1000)
    print(f"commit to webhook delivery, idle, {idle_events} events: "
          f"p50 {percentile(latencies, 0.5):.1f} ms p99 {percentile(latencies, 0.99):.1f} ms",
          flush=True)
    expected = len(receiver.arrivals) + burst_events
    await asyncio.to_thread(psql, database_url, sms_sql(agent_id, burst_events, "burst"))
    deadline = time.time() + 600
    while len(receiver.arrivals) < expected and time.time() < deadline:
        receiver.arrived.clear()
        try:
            await asyncio.wait_for(receiver.arrived.wait(), 30)
        except asyncio.TimeoutError:
            break
    burst = sorted(arrival for arrival, event in receiver.arrivals.values()
                   if event["seq"] > idle_events)
    rate = (len(burst) - 1) / (burst[-1] - burst[0]) if len(burst) > 1 else 0.0
    print(f"burst of {burst_events} deliveries: {len(burst)} arrived, deliveries/s {rate:.0f}, "
          f"delivered twice {receiver.repeats}", flush=True)
    server.close()


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1


def streams(base_url, database_url, key, agent_id, server_pid, count):
    """Plain sockets on one epoll loop: the client costs as little as it can beside the server
    on the same cores, so the latency is the server's."""
    host, port = base_url.removeprefix("http://").split(":")
    # Every stream starts at the log's head: what they receive is the one event sent below.
    head = int(psql(database_url, "SELECT coalesce(max(seq), 0) FROM events "
                                  f"WHERE agent_id = '{agent_id}'").strip())
    request = (f"GET /v1/events/stream?after={head} HTTP/1.1\r\nHost: {host}\r\n"
               f"Authorization: Bearer {key}\r\n\r\n").encode()
    poller = selectors.DefaultSelector()
    received = {}
    for _ in range(count):
        connection = socket.create_connection((host, int(port)))
        connection.sendall(request)
        connection.setblocking(False)
        poller.register(connection, selectors.EVENT_READ)
        received[connection] = b""

    def read_until(marker, deadline):
        """Reads every stream until each holds `marker`; the time each first held it."""
        at = {}
        while len(at) < len(received) and time.time() < deadline:
            for ready, _ in poller.select(timeout=1):
                connection = ready.fileobj
                try:
                    chunk = connection.recv(65536)
                except BlockingIOError:
                    continue
                now = time.time()
                received[connection] += chunk
                if connection not in at and marker in received[connection]:
                    at[connection] = now
        return at

    opened = read_until(b"retry: 3000", time.time() + 120)
    time.sleep(2)
    print(f"{len(opened)} streams open: server RSS {rss_mib(server_pid)} MiB", flush=True)
    psql(database_url, sms_sql(agent_id, 1, "fanout"))
    arrived = read_until(b"\ndata: {", time.time() + 60)
    latencies = []
    for connection, at in arrived.items():
        text = received[connection]
        start = text.index(b"\ndata: {") + 7
        event = json.loads(text[start:text.index(b"\n", start)])
        latencies.append((at - committed_at(event)) * 1000)
    print(f"one event to {len(opened)} streams: {len(arrived)} received it, "
          f"p50 {percentile(latencies, 0.5):.0f} ms p99 {percentile(latencies, 0.99):.0f} ms",
          flush=True)
    for connection in received:
        connection.close()


def main():
    mode, base_url, database_url, key, agent_id = sys.argv[1:6]
    if mode == "webhooks":
        asyncio.run(webhooks(base_url, database_url, key, agent_id,
                             int(sys.argv[6]), int(sys.argv[7])))
    else:
        streams(base_url, database_url, key, agent_id, int(sys.argv[6]), int(sys.argv[7]))


if __name__ == "__main__":
    main()
