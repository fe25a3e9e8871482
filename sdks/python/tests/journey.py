"""The README walkthrough's journey through the SDK, against a real server (tests/it/sdks.rs runs
it from the installed wheel): mail, a code wait, a transfer to execution, the event stream across
a forced disconnect, a 429 retried under the same idempotency key, a verified webhook and an x402
payment to the official x402 resource server. The operator's steps run `agentctl` ($AGENTCTL), as
the walkthrough does. Prints one JSON line of what it saw; any failed check raises."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from agent_runtime import AgentRuntime, PolicyError, X402Client, api, models, verify_webhook

RECIPIENT = os.environ["RECIPIENT"]
PAID_URL = os.environ["PAID_URL"]


def agentctl(*args: str) -> dict:
    done = subprocess.run([os.environ["AGENTCTL"], *args], capture_output=True, text=True)
    assert done.returncode == 0, f"agentctl {args}: {done.stderr}"
    return json.loads(done.stdout) if done.stdout.strip() else {}


def eventually(what: str, found, deadline: float = 30.0):
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} never came")


class CuttingProxy:
    """A TCP proxy in front of the server whose `cut` breaks every open connection, as a network
    would; it keeps the first bytes of each connection (the request head) to look at."""

    def __init__(self, target: str):
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.open: list[socket.socket] = []
        self.heads: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            client, _ = self.listener.accept()
            upstream = socket.create_connection(self.target)
            self.open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, request: bool) -> None:
        first = True
        try:
            while chunk := source.recv(65536):
                if request and first:
                    self.heads.append(chunk)
                    first = False
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        for connection in self.open:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.open = []


class Recording(httpx.HTTPTransport):
    """The transport under the client's retries: it sees every attempt."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts: list[tuple[str, int, str | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        key = request.headers.get("idempotency-key")
        self.attempts.append((request.url.path, response.status_code, key))
        return response


def webhook_receiver() -> tuple[str, list[tuple[bytes, dict]]]:
    received: list[tuple[bytes, dict]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((body, dict(self.headers.items())))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/hook", received


def main() -> None:
    recording = Recording()
    client = AgentRuntime(transport=recording)  # AGENT_RUNTIME_KEY and AGENT_RUNTIME_URL
    me = client.call(api.agents.get_agent_me)
    address, number = me.email_inbox.address, me.phone_number.number
    summary: dict = {"agent": str(me.id)}

    # The event stream, through a proxy that will cut it.
    proxy = CuttingProxy(client.base_url)
    streamed: list = []
    types = ["sms.received", "transfer_intent.created", "transfer_intent.executed"]

    def follow() -> None:
        reader = AgentRuntime(base_url=proxy.url)
        for event in reader.events(types=types, reconnect_delay=0.5):
            streamed.append(event)

    threading.Thread(target=follow, daemon=True).start()

    # A webhook endpoint of the agent's, for executed transfers.
    hook_url, deliveries = webhook_receiver()
    webhook = client.call(
        api.webhooks.create_webhook,
        body=models.WebhookCreateRequest(url=hook_url, types=["transfer_intent.executed"]),
    )

    # Mail: the first send passes; the second is over the agent's burst of one, 429 with
    # Retry-After, and the client's retry sends it again under the same Idempotency-Key.
    mail = models.EmailSendRequest(to=["bob@example.org"], subject="Hello", body_text="Hi Bob")
    sent = client.call(api.email.send_email, body=mail)
    assert str(sent.data.status) == "queued", sent
    again = client.call(api.email.send_email, body=mail)
    sends = [attempt for attempt in recording.attempts if attempt[0] == "/v1/email/send"]
    assert [status for _, status, _ in sends] == [200, 429, 200], sends
    assert sends[1][2] == sends[2][2] and sends[1][2] != sends[0][2], sends
    replayed = client.call(api.email.send_email, body=mail, idempotency_key=sends[2][2])
    assert replayed.data.id == again.data.id, "the same key answers the same message"
    summary["retried_429_with_key"] = sends[2][2]

    # Inbound mail with a code, read page by page, and the code wait.
    agentctl("sandbox", "email", "--to", address, "--from", "alice@example.org",
             "--subject", "Your code", "--text", "Your verification code is 385920")  # fmt: skip
    inbound = [
        message
        for message in client.paginate(api.email.list_email_inbox, limit=1)
        if str(message.direction) == "inbound"
    ]
    assert [message.subject for message in inbound] == ["Your code"], inbound
    code = client.wait_for_code(channels=["email"], timeout=30)
    assert code.code == "385920", code

    # An SMS that arrives while the wait is under way.
    sms = ("sandbox", "sms", "--to", number, "--from", "+15550001111", "--body", "code 482913")
    later = threading.Timer(1.5, agentctl, sms)
    later.start()
    code = client.wait_for_code(channels=["sms"], timeout=30)
    assert code.code == "482913", code
    eventually("the SMS on the stream", lambda: streamed)

    # The network cuts the stream; an SMS arrives meanwhile, and the stream resumes.
    connections = len(proxy.heads)
    proxy.cut()
    agentctl("sandbox", "sms", "--to", number, "--from", "+15550001111", "--body", "code 111111")
    eventually("a reconnection", lambda: len(proxy.heads) > connections)
    assert b"last-event-id:" in proxy.heads[-1].lower(), proxy.heads[-1]

    # A transfer inside the policy, and two outside it.
    send = models.WalletSendRequest(to=RECIPIENT, amount_atomic="10000000")
    intent = client.call(api.wallet.create_wallet_send, body=send)
    assert str(intent.status) == "pending_confirmation", intent
    refusals = {}
    for amount in ("46000000", "45000000"):
        try:
            client.call(
                api.wallet.create_wallet_send,
                body=models.WalletSendRequest(to=RECIPIENT, amount_atomic=amount),
            )
            raise AssertionError(f"a send of {amount} passed the policy")
        except PolicyError as refused:
            refusals[refused.rule] = (refused.limit, refused.remaining)
    assert refusals == {"max_per_tx": (45000000, None), "max_daily": (50000000, 40000000)}, refusals
    summary["refusals"] = refusals

    # The operator confirms; the transfer executes on the chain.
    agentctl("intents", "confirm", str(intent.id))
    executed = client.wait_for_transfer_decision(str(intent.id), timeout=60, until=["executed"])
    assert str(executed.status) == "executed" and executed.tx_hash, executed
    listed = [str(item.id) for item in client.paginate(api.wallet.list_wallet_intents, limit=2)]
    assert str(intent.id) in listed, listed

    # The webhook of the execution, verified with the endpoint's secret.
    body, headers = eventually("the webhook delivery", lambda: deliveries and deliveries[0])
    event = verify_webhook(body, headers, [webhook.secret])
    assert str(event.type_) == "transfer_intent.executed" and str(event.data.id) == str(intent.id)
    try:
        verify_webhook(body.replace(b"executed", b"rejected"), headers, [webhook.secret])
        raise AssertionError("a changed body verified")
    except Exception as refused:  # noqa: BLE001 (the SDK's WebhookVerificationError)
        assert type(refused).__name__ == "WebhookVerificationError", refused

    # An x402 payment to the official resource server: above the auto-confirm tier (none is set)
    # it waits for the operator, whom on_pending tells.
    pending = []

    def approve(waiting) -> None:
        pending.append(waiting.approval_url)
        agentctl("intents", "confirm", str(waiting.intent.id))

    buyer = X402Client(client, max_amount_atomic=2000, on_pending=approve)
    paid = buyer.get(PAID_URL)
    assert paid.response.status_code == 200 and paid.response.json() == {"paid": True}, paid
    assert paid.settlement and paid.settlement["success"] is True, paid.settlement
    assert len(pending) == 1 and paid.authorization.header == "PAYMENT-SIGNATURE"
    payment = client.wait_for_transfer_decision(
        str(paid.authorization.intent.id), timeout=60, until=["executed"]
    )
    assert str(payment.status) == "executed", payment
    summary["x402_intent"] = str(payment.id)

    # Every event of those types the feed holds came on the stream, once, in order.
    feed = [event.seq for event in client.paginate(api.events.list_events, types=",".join(types))]
    eventually("the stream's events", lambda: [e.seq for e in streamed][: len(feed)] == feed)
    seqs = [event.seq for event in streamed]
    assert seqs == sorted(set(seqs)), seqs
    summary["streamed"] = len(seqs)
    summary["stream_connections"] = len(proxy.heads)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
