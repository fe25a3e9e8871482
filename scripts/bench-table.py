#!/usr/bin/env python3
"""Helpers of `make bench` (standard library only).

  bench-table.py ms        a wrk latency on stdin (840.00us, 3.24ms, 1.02s) in milliseconds
  bench-table.py growth    RSS samples in KiB on stdin, one every 10 s: the mean of the first
                           and of the last minute in MiB, and their ratio
  bench-table.py table     the rows of the run on stdin, tab-separated (scenario, project,
                           reference, goal kind, goal, peak RSS MiB): one table with the ratio
                           and whether each goal is met
  bench-table.py latency URL KEY COUNT
                           COUNT sends of 1 atomic unit, one at a time on one connection: the
                           median latency in milliseconds
"""
import http.client
import json
import statistics
import sys
import time
import urllib.parse

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def milliseconds(text):
    text = text.strip()
    for unit in ("us", "ms", "s"):
        if text.endswith(unit):
            return f"{float(text[: -len(unit)]) * UNITS[unit]:.2f}"
    return ""


def growth(samples):
    per_minute = 6
    if len(samples) < 3 * per_minute:
        return f"{samples[0] / 1024:.0f} {samples[-1] / 1024:.0f} {samples[-1] / samples[0]:.3f}"
    # The first minute is warm-up: caches and pools fill. The second is the baseline.
    first = statistics.mean(samples[per_minute: 2 * per_minute]) / 1024
    last = statistics.mean(samples[-per_minute:]) / 1024
    return f"{first:.0f} {last:.0f} {last / first:.3f}"


def met(kind, ratio, project, goal):
    if kind == "none" or goal == "":
        return "-", "printed"
    goal = float(goal)
    if kind == "min":
        return f">= {goal:g}x", "met" if ratio is not None and ratio >= goal else "NOT MET"
    if kind == "max":
        return f"<= {goal:g}x", "met" if ratio is not None and ratio <= goal else "NOT MET"
    if kind == "at_least":
        return f">= {goal:g}", "met" if project is not None and project >= goal else "NOT MET"
    return f"<= {goal:g}", "met" if project is not None and project <= goal else "NOT MET"


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def table(lines):
    header = ("scenario", "project", "reference", "ratio", "goal", "met", "peak RSS MiB")
    rows = []
    for line in lines:
        scenario, project, reference, kind, goal, peak = line.rstrip("\n").split("\t")
        p, r = number(project), number(reference)
        ratio = p / r if p is not None and r else None
        goal_text, verdict = met(kind, ratio, p, goal)
        rows.append((scenario, project or "-", reference or "-",
                     f"{ratio:.2f}" if ratio is not None else "-", goal_text, verdict, peak))
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("| " + " | ".join(str(cell).ljust(w) for cell, w in zip(row, widths)) + " |")


def latency(base_url, key, count):
    url = urllib.parse.urlparse(base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port)
    body = json.dumps({"to": "0x000000000000000000000000000000000000dEaD", "amount_atomic": "1"})
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    took = []
    for _ in range(count):
        started = time.perf_counter()
        connection.request("POST", "/v1/wallet/send", body, headers)
        response = connection.getresponse()
        response.read()
        took.append((time.perf_counter() - started) * 1000)
        if response.status != 200:
            sys.exit(f"bench-table: a send was answered {response.status}")
    print(f"{statistics.median(took):.2f}")


if __name__ == "__main__":
    command, *args = sys.argv[1:] or [""]
    if command == "ms":
        print(milliseconds(sys.stdin.read()))
    elif command == "growth":
        print(growth([int(line) for line in sys.stdin if line.strip()]))
    elif command == "table":
        table(sys.stdin)
    elif command == "latency":
        latency(args[0], args[1], int(args[2]))
    else:
        sys.exit(__doc__)
