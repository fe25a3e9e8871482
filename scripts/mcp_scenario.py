"""Drives the server's MCP endpoint with PyPI's mcp (the official MCP Python SDK), a client that
does not share the server's code, the way an agent would: over Streamable HTTP with its agent key.

Prints one JSON line per step, flushed, for the black-box tests to read:
  {"step": "connect", "ok": true, "protocol_version": "2026-07-28", ...}
  {"step": "list_tools" | "get_me" | "send_email" | "denied_transfer" | "missing_idempotency_key"
           | "created_transfer" | "replayed_transfer" | "wait_for_code", "ok": true, ...}
  {"step": "done", "ok": true}
A failed expectation, or an error of the SDK, prints its step with "ok": false and a "reason" (and
"http_error", the last HTTP error answer, when there was one), and exits 1.

The expectations are those of the test's agent: an inbox, a phone number and a wallet, under a
spend policy of at most 25000000 per transfer and 50000000 a day, and no transfer before this run.

Usage: python mcp_scenario.py URL KEY --mode legacy|auto --expect-version VERSION --code CODE
           --deliver-after SECONDS [--trace] -- DELIVER_COMMAND...
DELIVER_COMMAND is run once, DELIVER_AFTER seconds into the wait_for_code call, to send CODE.
--trace writes the HTTP traffic to stderr.
"""

import argparse
import asyncio
import json
import sys
import time
import uuid

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
# An httpx2 client (mcp 2.x speaks HTTP through httpx2, not httpx) with the SDK's own timeouts:
# 30 s to connect and send, 300 s between bytes read. mcp exports it only from this module.
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import TextContent

TOOLS = {
    "get_me", "list_inbox", "get_message", "list_threads", "get_thread", "search_messages",
    "get_attachment", "send_email", "reply_email", "forward_email", "list_sms", "wait_for_code", "get_wallet",
    "create_transfer_intent", "get_transfer_intent", "list_transfer_intents",
    "wait_for_transfer_decision", "list_events", "authorize_x402_payment", "pay_x402_resource",
}
READ_ONLY_TOOLS = TOOLS - {
    "send_email", "reply_email", "forward_email", "create_transfer_intent", "authorize_x402_payment",
    "pay_x402_resource",
}
# Deciding on a transfer is the owner's, in the console: no tool may offer it to the agent.
FORBIDDEN_WORDS = ("confirm", "reject", "approve", "decide", "execute")

RECIPIENT = "0x000000000000000000000000000000000000dEaD"
OVER_PER_TX_CAP = "30000000"
ALLOWED_AMOUNT = "10000000"
DAILY_CAP = 50_000_000

# Per JSON-RPC answer; wait_for_code's 30 s wait must fit in it.
READ_TIMEOUT_SECONDS = 60


class Failed(Exception):
    """An expectation failed; its JSON line is already printed."""


# The step under way, which every line names, and the last HTTP error answer: the SDK reports a
# 401 only as an MCPError "Server returned an error response".
current_step = "connect"
last_http_error = {}


def say(ok=True, **details):
    print(json.dumps({"step": current_step, "ok": ok, **details}), flush=True)


def check(condition, reason, **details):
    if not condition:
        say(False, reason=reason, **details)
        raise Failed(reason)


def text_of(result):
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def outcome(result):
    """What a tool call answered, for the line of a failed expectation."""
    return {
        "is_error": result.is_error,
        "structured": result.structured_content,
        "text": text_of(result),
    }


def dig(value, *path):
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def unique_key():
    return f"mcp-scenario-{uuid.uuid4()}"


def wire_hooks(trace):
    """httpx2 hooks keeping the last HTTP error answer, and with `trace` showing the traffic on
    stderr (stdout is the tests')."""

    def show(line):
        if trace:
            print(f"[wire {time.monotonic():.3f}] {line}", file=sys.stderr, flush=True)

    async def on_request(request):
        headers = {k: v for k, v in request.headers.items() if k.lower().startswith("mcp-")}
        body = request.content.decode(errors="replace")
        show(f"--> {request.method} {request.url} {headers} {body}")

    async def on_response(response):
        kind = response.headers.get("content-type", "")
        # An event stream is left to the SDK: reading it here would hold back the progress.
        if "event-stream" in kind:
            show(f"<-- {response.status_code} {kind} (stream)")
            return
        body = (await response.aread()).decode(errors="replace")
        show(f"<-- {response.status_code} {kind} {body}")
        if response.status_code >= 400:
            last_http_error.update(status=response.status_code, body=body[:2000])

    return {"request": [on_request], "response": [on_response]}


async def scenario(arguments):
    global current_step
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {arguments.key}"})
    http.event_hooks = wire_hooks(arguments.trace)
    # We pass the HTTP client, so we close it; cache=None so every listing reaches the server.
    async with http, Client(
        streamable_http_client(arguments.url, http_client=http),
        mode=arguments.mode,
        read_timeout_seconds=READ_TIMEOUT_SECONDS,
        cache=None,
    ) as client:
        for step in STEPS:
            current_step = step.__name__
            await step(client, arguments)
    current_step = "done"
    say()


async def connect(client, arguments):
    # auto mode falls back to initialize by itself: the version shows which era really answered.
    version = client.protocol_version
    check(version == arguments.expect_version,
          f"negotiated {version}, expected {arguments.expect_version}", protocol_version=version)
    server = client.server_info.model_dump(exclude_none=True) if client.server_info else None
    say(protocol_version=version, server_info=server)


async def list_tools(client, arguments):
    tools = {}
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.update({tool.name: tool for tool in page.tools})
        cursor = page.next_cursor
        if cursor is None:
            break
    names = sorted(tools)
    check(set(names) == TOOLS, "not the expected tools", tools=names,
          missing=sorted(TOOLS - set(names)), unexpected=sorted(set(names) - TOOLS))
    forbidden = [name for name in names if any(word in name for word in FORBIDDEN_WORDS)]
    check(not forbidden, "a tool decides on transfers", forbidden=forbidden)

    def hints(name):
        annotations = tools[name].annotations
        return annotations.model_dump(by_alias=True, exclude_none=True) if annotations else {}

    for name in sorted(READ_ONLY_TOOLS):
        check(hints(name).get("readOnlyHint") is True, f"{name} is not marked read-only",
              annotations=hints(name))
    for name in ("send_email", "reply_email"):
        found = hints(name)
        check(found.get("readOnlyHint") is not True
              and found.get("destructiveHint") is True and found.get("openWorldHint") is True,
              f"{name} is not marked destructive and open-world", annotations=found)
    # An intent only waits for the owner's decision, and its key makes a retry harmless.
    found = hints("create_transfer_intent")
    check(found.get("readOnlyHint") is not True
          and found.get("destructiveHint") is False and found.get("idempotentHint") is True,
          "create_transfer_intent is not marked non-destructive and idempotent", annotations=found)
    say(tools=names, annotations={name: hints(name) for name in names})


async def get_me(client, arguments):
    result = await client.call_tool("get_me", {})
    me = result.structured_content or {}
    check(not result.is_error, "get_me failed", **outcome(result))
    check(bool(me.get("id")), "no id", **outcome(result))
    for part in ("email_inbox", "phone_number", "wallet"):
        check(isinstance(me.get(part), dict), f"no {part} object", **outcome(result))
    say(id=me["id"], email=me["email_inbox"].get("address"),
        phone_number=me["phone_number"].get("number"), wallet=me["wallet"].get("address"))


async def send_email(client, arguments):
    result = await client.call_tool("send_email", {
        "to": ["bob@example.org"], "subject": "Hello", "body_text": "Hi",
        "idempotency_key": unique_key(),
    })
    sent = result.structured_content or {}
    check(not result.is_error, "send_email failed", **outcome(result))
    check(sent.get("status") == "sent" and dig(sent, "data", "status") == "queued",
          "not sent and queued", **outcome(result))
    say(status=sent["status"], message_status=sent["data"]["status"],
        message_id=dig(sent, "data", "id"))


async def denied_transfer(client, arguments):
    result = await client.call_tool("create_transfer_intent", {
        "to": RECIPIENT, "amount_atomic": OVER_PER_TX_CAP, "idempotency_key": unique_key(),
    })
    denied = result.structured_content or {}
    check(result.is_error, "a transfer over the cap was not an error", **outcome(result))
    check("Spend policy violation" in text_of(result),
          "the text does not say Spend policy violation", **outcome(result))
    check(denied.get("status") == 403, "status is not 403", **outcome(result))
    check(dig(denied, "verdict", "allowed") is False
          and dig(denied, "verdict", "rule") == "max_per_tx",
          "the verdict is not a max_per_tx denial", **outcome(result))
    say(text=text_of(result), status=denied["status"], verdict=denied["verdict"])


async def missing_idempotency_key(client, arguments):
    # A missing argument must come back as a tool result the model can read, not a protocol error.
    result = await client.call_tool("create_transfer_intent", {
        "to": RECIPIENT, "amount_atomic": ALLOWED_AMOUNT,
    })
    detail = dig(result.structured_content, "detail")
    named = "idempotency_key" in (detail if isinstance(detail, str) else json.dumps(detail))
    check(result.is_error, "accepted without an idempotency key", **outcome(result))
    check(named, "the detail does not name idempotency_key", **outcome(result))
    say(text=text_of(result), detail=detail)


async def created_transfer(client, arguments):
    global current_step
    transfer = {"to": RECIPIENT, "amount_atomic": ALLOWED_AMOUNT, "idempotency_key": unique_key()}
    result = await client.call_tool("create_transfer_intent", transfer)
    created = result.structured_content or {}
    intent_id = dig(created, "intent", "id")
    check(not result.is_error, "create_transfer_intent failed", **outcome(result))
    check(bool(intent_id) and dig(created, "intent", "status") == "pending_confirmation",
          "the intent is not pending_confirmation", **outcome(result))
    check(str(created.get("approval_url")).endswith(f"/console/intents/{intent_id}"),
          "the approval_url is not the intent's console page", **outcome(result))
    check(created.get("replayed") is False, "a new key was taken for a replay", **outcome(result))
    check(dig(created, "verdict", "allowed") is True, "the verdict is not allowed",
          **outcome(result))
    daily = dig(created, "verdict", "usage", "daily") or {}
    check(daily.get("spent_atomic") == ALLOWED_AMOUNT
          and daily.get("remaining_atomic") == str(DAILY_CAP - int(ALLOWED_AMOUNT)),
          "the verdict's daily usage is not the policy's", **outcome(result))
    say(intent_id=intent_id, approval_url=created["approval_url"], verdict=created["verdict"])

    current_step = "replayed_transfer"
    result = await client.call_tool("create_transfer_intent", transfer)
    again = result.structured_content or {}
    check(not result.is_error, "the replay failed", **outcome(result))
    check(dig(again, "intent", "id") == intent_id and again.get("replayed") is True,
          "the same key did not replay the same intent", **outcome(result))
    say(intent_id=intent_id, replayed=True)


async def wait_for_code(client, arguments):
    progress = []
    started = time.monotonic()

    async def on_progress(value, total, message):
        progress.append({"at": round(time.monotonic() - started, 2), "progress": value,
                         "total": total, "message": message})

    async def deliver():
        await asyncio.sleep(arguments.deliver_after)
        # Its output is kept off stdout, which is the JSON lines'.
        process = await asyncio.create_subprocess_exec(
            *arguments.deliver_command,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await process.communicate()
        return {"exit": process.returncode, "at": round(time.monotonic() - started, 2),
                "stderr": err.decode(errors="replace")[-2000:]}

    delivery = asyncio.create_task(deliver())
    try:
        result = await client.call_tool(
            "wait_for_code", {"timeout": 30}, progress_callback=on_progress)
    except BaseException:
        delivery.cancel()
        raise
    elapsed = round(time.monotonic() - started, 2)
    # What arrived by the time the call returned: the progress before the result.
    before_result = list(progress)
    # The code (and with it the answer) may arrive before the command that sent it has exited.
    try:
        delivered = await asyncio.wait_for(delivery, timeout=READ_TIMEOUT_SECONDS)
    except asyncio.TimeoutError:
        delivered = None
    found = result.structured_content or {}
    details = {"elapsed": elapsed, "progress": before_result, "delivery": delivered,
               **outcome(result)}
    check(delivered is not None and delivered["exit"] == 0,
          "the deliver command did not run, or failed", **details)
    check(not result.is_error, "wait_for_code failed", **details)
    check(found.get("found") is True and dig(found, "code", "code") == arguments.code,
          f"the code {arguments.code} was not found", **details)
    check(len(before_result) >= 1, "no progress notification before the result", **details)
    check(elapsed >= arguments.deliver_after,
          "the result came before the code was delivered", **details)
    say(code=found["code"]["code"], elapsed=elapsed, delivered_at=delivered["at"],
        progress=[entry["progress"] for entry in before_result], progress_details=before_result)


STEPS = (connect, list_tools, get_me, send_email, denied_transfer, missing_idempotency_key,
         created_transfer, wait_for_code)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url", help="the MCP endpoint, e.g. http://127.0.0.1:8080/mcp")
    parser.add_argument("key", help="the agent key")
    parser.add_argument("--mode", choices=("legacy", "auto"), required=True,
                        help="legacy: initialize at 2025-11-25; auto: server/discover first")
    parser.add_argument("--expect-version", required=True,
                        help="the protocol version the connection must end up with")
    parser.add_argument("--code", required=True, help="the code DELIVER_COMMAND sends")
    parser.add_argument("--deliver-after", type=float, required=True,
                        help="seconds into the wait_for_code call")
    parser.add_argument("--trace", action="store_true", help="show the HTTP traffic on stderr")
    parser.add_argument("deliver_command", nargs="+", help="after --: the command sending the code")
    arguments = parser.parse_args()

    try:
        asyncio.run(scenario(arguments))
    except Exception as error:
        # The SDK's task groups wrap what went wrong in exception groups.
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        if not isinstance(error, Failed):
            details = {"http_error": last_http_error} if last_http_error else {}
            say(False, reason=f"{type(error).__name__}: {error}", **details)
        sys.exit(1)


if __name__ == "__main__":
    main()
